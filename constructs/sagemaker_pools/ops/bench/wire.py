"""InvokeEndpoint without boto3 on the hot path: pre-signed requests over keep-alive sockets.

A boto3 ``invoke_endpoint`` call costs about a millisecond of Python (serialize, SigV4-sign,
urllib3, parse). With a few hundred calls a second on a small machine that work competes with
the requests themselves for the CPU, and the benchmark measures itself. Here:

* :class:`SignedRequests` has botocore build and sign each request body's InvokeEndpoint
  request exactly as the boto3 path does (the client's own serializer, endpoint resolution,
  signer, headers), caught at ``before-send`` so that nothing is sent, and keeps the request's
  bytes. It signs a body again once its signature is :data:`RESIGN_AFTER_S` old: AWS accepts a
  signed request "within five minutes of the time stamp in the request" (IAM User Guide,
  "Signing AWS API requests"), and signing again also picks up refreshed credentials.
* :class:`WireClient` sends those bytes over a persistent HTTP/1.1 connection per thread
  (plain socket or TLS), reads the status line, the headers and the body (Content-Length or
  chunked), and turns a non-2xx answer into botocore's ``ClientError`` with botocore's own
  response parser; socket failures become the botocore exceptions urllib3's would have
  become. So error kinds and the retry decision (botocore's standard retry conditions,
  backoff and retry quota) are the boto3 path's.

Only InvokeEndpoint takes this path; InvokeEndpointWithResponseStream stays on boto3.
"""

from __future__ import annotations

import io
import os
import random
import select
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any, cast

from botocore.awsrequest import AWSResponse, HeadersDict
from botocore.compat import HTTPHeaders
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.httpsession import get_cert_path
from botocore.parsers import create_parser
from botocore.retries import quota, standard

__all__ = ["RESIGN_AFTER_S", "SignedRequests", "WireClient", "Response", "uses_proxy", "host_header"]

#: A signed request is signed again once it is this old (AWS accepts it for five minutes).
RESIGN_AFTER_S = 60.0

_OPERATION = "InvokeEndpoint"
_EVENT = f"before-send.sagemaker-runtime.{_OPERATION}"
_MAX_HEAD = 65536


def host_header(url: str) -> str:
    """The ``Host`` value SigV4 signed for ``url``: lower case, without a default port (as botocore)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None and parts.port != {"http": 80, "https": 443}.get(parts.scheme):
        host = f"{host}:{parts.port}"
    return host


def uses_proxy(url: str) -> bool:
    """True when the environment sends requests to ``url`` through a proxy (the lean path has none)."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(parts.hostname or "")


def _wire_bytes(request: Any) -> bytes:
    """The HTTP/1.1 request botocore would send for a prepared request."""
    parts = urllib.parse.urlsplit(request.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [f"{request.method} {target} HTTP/1.1", f"Host: {host_header(request.url)}"]
    names = set()
    for name, value in request.headers.items():
        if name.lower() in ("host", "expect"):
            continue
        names.add(name.lower())
        lines.append(f"{name}: {value.decode('latin-1') if isinstance(value, bytes) else value}")
    body = request.body or b""
    if isinstance(body, str):
        body = body.encode()
    if "content-length" not in names:
        lines.append(f"Content-Length: {len(body)}")
    if "accept-encoding" not in names:
        lines.append("Accept-Encoding: identity")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + bytes(body)


def _http_headers(headers: dict[str, str]) -> HTTPHeaders:
    """Headers as botocore's responses carry them (case-insensitive ``get``)."""
    message = HTTPHeaders()
    for name, value in headers.items():
        message[name] = value
    return message


class _Nothing(io.BytesIO):
    """An empty raw body for the response that stands in for the request caught at ``before-send``."""

    def stream(self, *_: Any, **__: Any) -> Iterator[bytes]:
        yield b""


class SignedRequests:
    """Each request body's signed InvokeEndpoint request, as bytes, signed again when it ages.

    ``client`` is the sagemaker-runtime client of the boto3 path; ``params`` its
    ``invoke_endpoint`` arguments but ``Body``.
    """

    def __init__(
        self, client: Any, params: dict[str, Any], *, resign_after_s: float = RESIGN_AFTER_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._client = client
        self._params = params
        self._resign_after_s = resign_after_s
        self._clock = clock
        self._cache: dict[int, tuple[float, bytes]] = {}
        self._local = threading.local()
        self.url: str | None = None
        client.meta.events.register(_EVENT, self._catch)

    def _catch(self, request: Any, **_: Any) -> AWSResponse:
        self._local.request = request
        return AWSResponse(request.url, 200, _http_headers({"content-length": "0"}), _Nothing())

    def sign(self, body: bytes) -> bytes:
        """``body``'s request, signed now."""
        self._local.request = None
        self._client.invoke_endpoint(Body=body, **self._params)
        request = self._local.request
        if request is None:  # another handler answered before ours
            raise RuntimeError("botocore sent InvokeEndpoint without a before-send event")
        self.url = request.url
        return _wire_bytes(request)

    def get(self, index: int, body: bytes) -> bytes:
        """Body ``index``'s signed request (signed on first use and again after ``resign_after_s``)."""
        now = self._clock()
        entry = self._cache.get(index)
        if entry is None or now - entry[0] >= self._resign_after_s:
            entry = (now, self.sign(body))
            self._cache[index] = entry
        return entry[1]


class Response:
    """A complete HTTP response: status, headers (lower-case names), body."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class _Connection:
    """One keep-alive connection (used by one thread at a time)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def dropped(self) -> bool:
        """True when the server closed the idle connection (or sent something unasked)."""
        readable, _, _ = select.select([self.sock], [], [], 0)
        if not readable:
            return False
        timeout = self.sock.gettimeout()
        self.sock.setblocking(False)
        try:
            if isinstance(self.sock, ssl.SSLSocket):
                self.sock.recv(1)  # TLS records (a session ticket) are not data
            else:
                self.sock.recv(1, socket.MSG_PEEK)
            return True
        except (ssl.SSLWantReadError, BlockingIOError):
            return False
        except OSError:
            return True
        finally:
            self.sock.settimeout(timeout)

    def _fill(self) -> None:
        data = self.sock.recv(262144)
        if not data:
            raise EOFError
        self.buffer += data

    def _take(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self._fill()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _line(self) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if len(self.buffer) > _MAX_HEAD:
                raise EOFError
            self._fill()
        line, self.buffer = self.buffer[:end], self.buffer[end + 2 :]
        return line

    def read_response(self) -> tuple[Response, bool]:
        """The next response, and whether the connection can carry another request."""
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            if len(self.buffer) > _MAX_HEAD:
                raise EOFError
            self._fill()
        head, self.buffer = self.buffer[:end].decode("latin-1"), self.buffer[end + 4 :]
        status_line, *lines = head.split("\r\n")
        version, status, *_ = status_line.split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        keep_alive = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks = []
            while size := int(self._line().split(b";", 1)[0], 16):
                chunks.append(self._take(size))
                self._take(2)
            while self._line():  # trailers, up to the empty line
                pass
            body = b"".join(chunks)
        elif "content-length" in headers:
            body = self._take(int(headers["content-length"]))
        else:  # the body ends with the connection
            while True:
                try:
                    self._fill()
                except EOFError:
                    break
            body, self.buffer, keep_alive = self.buffer, b"", False
        return Response(int(status), headers, body), keep_alive

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class WireClient:
    """Sends pre-signed requests on one keep-alive connection per thread."""

    def __init__(self, url: str, *, timeout_s: float, connect_timeout_s: float, ssl_context: ssl.SSLContext | None = None) -> None:
        parts = urllib.parse.urlsplit(url)
        self.url = url
        self._host = parts.hostname or ""
        self._tls = parts.scheme == "https"
        self._port = parts.port or (443 if self._tls else 80)
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._ssl_context = ssl_context
        self._local = threading.local()

    def _context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context(cafile=os.environ.get("AWS_CA_BUNDLE") or get_cert_path(True))
        return self._ssl_context

    def _connect(self) -> _Connection:
        try:
            sock = socket.create_connection((self._host, self._port), timeout=self._connect_timeout_s)
        except TimeoutError as exc:
            raise ConnectTimeoutError(endpoint_url=self.url, error=exc) from exc
        except OSError as exc:
            raise EndpointConnectionError(endpoint_url=self.url, error=exc) from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            if self._tls:
                sock = self._context().wrap_socket(sock, server_hostname=self._host)
        except TimeoutError as exc:
            sock.close()
            raise ConnectTimeoutError(endpoint_url=self.url, error=exc) from exc
        except OSError as exc:
            sock.close()
            raise EndpointConnectionError(endpoint_url=self.url, error=exc) from exc
        sock.settimeout(self._timeout_s)
        return _Connection(sock)

    def close(self) -> None:
        """Close this thread's connection."""
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    def exchange(self, request: bytes) -> Response:
        """Send ``request``, return the whole response; raises botocore's exceptions for failures."""
        connection: _Connection | None = getattr(self._local, "connection", None)
        if connection is not None and connection.dropped():
            self.close()
            connection = None
        if connection is None:
            connection = self._connect()
            self._local.connection = connection
        try:
            connection.sock.sendall(request)
            response, keep_alive = connection.read_response()
        except TimeoutError as exc:
            self.close()
            raise ReadTimeoutError(endpoint_url=self.url, error=exc) from exc
        except (EOFError, OSError, ValueError) as exc:  # closed, reset, or not HTTP
            self.close()
            raise ConnectionClosedError(endpoint_url=self.url, error=exc) from exc
        if not keep_alive:
            self.close()
        return response


class Retries:
    """botocore's standard retry mode, as the boto3 path's client runs it (conditions, backoff, quota)."""

    def __init__(self, client: Any, max_attempts: int, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self._operation = client.meta.service_model.operation_model(_OPERATION)
        self._parser = create_parser(client.meta.service_model.protocol)
        self._conditions = standard.StandardRetryConditions(max_attempts=max_attempts)
        detector = standard.ThrottlingErrorDetector(standard.RetryEventAdapter())
        self._backoff = standard.ExponentialBackoff(max_backoff=20, random=random.random, throttling_detector=detector)
        self._quota = standard.RetryQuotaChecker(quota.RetryQuota(), detector)
        self._lock = threading.Lock()
        self._sleep = sleep

    def error(self, url: str, response: Response) -> ClientError:
        """A non-2xx response as botocore raises it (``ClientError`` with the parsed error code)."""
        headers = HeadersDict(response.headers)
        parsed = self._parser.parse({"status_code": response.status, "headers": headers, "body": response.body}, self._operation.output_shape)
        return ClientError(parsed, _OPERATION)

    def again(self, attempt: int, url: str, response: Response | None, exc: Exception | None, request_context: dict[str, Any]) -> bool:
        """After attempt ``attempt`` (1-based) failed: wait and return True to try again.

        ``request_context`` is one call's retry state (shared by its attempts).
        """
        parsed = None
        http = None
        if response is not None:
            http = AWSResponse(url, response.status, _http_headers(response.headers), None)
            if isinstance(exc, ClientError):
                parsed = exc.response
        context = standard.RetryContext(
            attempt_number=attempt,
            operation_model=self._operation,
            parsed_response=parsed,
            http_response=http,
            caught_exception=None if response is not None else exc,
            request_context=request_context,
        )
        if not self._conditions.is_retryable(context):
            return False
        with self._lock:
            if not self._quota.acquire_retry_quota(context):
                return False
        self._sleep(self._backoff.delay_amount(context))
        return True

    def succeeded(self, request_context: dict[str, Any]) -> None:
        """A call succeeded: give retry quota back (as botocore does after a 2xx response)."""
        with self._lock:
            # botocore hands this method the call's context dict (its stubs say RetryContext)
            self._quota.release_retry_quota(cast(Any, request_context), cast(Any, _OK))


class _Status:
    status_code = 200


_OK = _Status()
