"""A local SageMaker-runtime-compatible HTTP server, for trying ``bench`` and for tests.

It answers ``POST /endpoints/{name}/invocations`` (InvokeEndpoint) and
``POST /endpoints/{name}/invocations-response-stream`` (InvokeEndpointWithResponseStream, with
the real event-stream framing over chunked transfer encoding), so the real boto3 client works
against it with ``endpoint_url=http://127.0.0.1:PORT`` and dummy credentials.

Behaviour comes from :class:`Behaviour` (server-wide defaults) and, per request, from a
``"_server"`` object in a JSON request body with the same field names, e.g.
``{"inputs": "hi", "_server": {"latency_ms": 200, "error": "ModelError"}}``. Endpoint names
starting with ``missing`` answer like a missing endpoint (``ValidationError``).

Each response goes out in one ``sendall`` on a socket with ``TCP_NODELAY``: a server that
writes headers and body separately without it adds ~40 ms to keep-alive responses (Nagle's
algorithm holds the second write until the client's delayed ACK).

``GET /_stats`` returns the server-side duration percentiles of the requests so far (the
"truth" a client measurement can be checked against) and the requests in flight; ``POST /_reset`` clears them.

Run it: ``python -m sagemaker_pools.ops.bench.localserver --port 8080 --latency-ms 50``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import signal
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from .eventstream import exception_event, payload_part

__all__ = ["Behaviour", "LocalRuntimeServer", "ERRORS", "main"]

#: Error name -> HTTP status, as SageMaker runtime answers them.
ERRORS: Mapping[str, int] = {
    "ModelError": 424,
    "ValidationError": 400,
    "ThrottlingException": 400,
    "ModelNotReadyException": 429,
    "InternalFailure": 500,
    "ServiceUnavailable": 503,
}


@dataclasses.dataclass(frozen=True)
class Behaviour:
    """How the server answers (per-request overrides come from the body's ``"_server"`` object).

    Attributes:
        latency_ms: InvokeEndpoint: delay before the response.
        ttft_ms: streaming: delay before the first token.
        itl_ms: streaming: delay between tokens.
        tokens: output tokens per response (one event-stream event each when streaming).
        report_tokens: include the token count in the response (``usage.completion_tokens``;
            streaming: ``details.generated_tokens`` in the last event).
        error: answer with this error (a key of :data:`ERRORS`) after ``latency_ms``.
        stream_error_after: streaming: send a ``ModelStreamError`` after this many tokens.
        stall_ms: streaming: an extra pause after the first token (a slow stream).
    """

    latency_ms: float = 50.0
    ttft_ms: float = 50.0
    itl_ms: float = 10.0
    tokens: int = 16
    report_tokens: bool = True
    error: str | None = None
    stream_error_after: int | None = None
    stall_ms: float = 0.0

    def merged(self, overrides: Mapping[str, Any]) -> Behaviour:
        """A copy with the known fields of ``overrides`` applied."""
        fields = {f.name for f in dataclasses.fields(self)}
        return dataclasses.replace(self, **{k: v for k, v in overrides.items() if k in fields})


class _Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.durations: list[float] = []
        self.by_kind: dict[str, int] = {}
        self.in_flight = 0

    def begin(self) -> None:
        with self.lock:
            self.in_flight += 1

    def end(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def add(self, kind: str, duration: float) -> None:
        with self.lock:
            self.durations.append(duration)
            self.by_kind[kind] = self.by_kind.get(kind, 0) + 1

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            ordered = sorted(self.durations)
            kinds = dict(self.by_kind)
        result: dict[str, Any] = {"requests": len(ordered), "by_kind": kinds, "in_flight": self.in_flight}
        for p in (50, 90, 95, 99, 100):
            result[f"p{p}_ms"] = ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] * 1000 if ordered else None
        return result

    def reset(self) -> None:
        with self.lock:
            self.durations.clear()
            self.by_kind.clear()


def _sleep_until(deadline: float) -> None:
    delay = deadline - time.perf_counter()
    if delay > 0:
        time.sleep(delay)


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = sock.makefile("rb")
        try:
            while self._one_request(sock, reader):
                pass
        except (ConnectionError, OSError):
            pass  # the client went away (e.g. after its read timeout)
        finally:
            reader.close()

    def _one_request(self, sock: socket.socket, reader: Any) -> bool:
        request_line = reader.readline(65537)
        if not request_line:
            return False
        method, path, _ = request_line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while True:
            line = reader.readline(65537)
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = reader.read(int(headers.get("content-length", "0") or 0))
        received = time.perf_counter()
        keep_alive = headers.get("connection", "").lower() != "close"
        if method == "GET" and path == "/_stats":
            sock.sendall(_response(200, json.dumps(self.server.stats.snapshot()).encode(), "application/json"))
        elif method == "POST" and path == "/_reset":
            self.server.stats.reset()
            sock.sendall(_response(200, b"{}", "application/json"))
        elif method == "POST" and path.startswith("/endpoints/"):
            self.server.stats.begin()
            try:
                self._invoke(sock, path, body, received)
            finally:
                self.server.stats.end()
        else:
            sock.sendall(_response(404, b'{"message": "not found"}', "application/json"))
        return keep_alive

    def _invoke(self, sock: socket.socket, path: str, body: bytes, received: float) -> None:
        parts = path.split("/")
        endpoint, operation = parts[2], parts[3] if len(parts) > 3 else ""
        behaviour = self.server.behaviour
        try:
            document = json.loads(body) if body[:1] in (b"{",) else None
        except ValueError:
            document = None
        if isinstance(document, dict) and isinstance(document.get("_server"), dict):
            behaviour = behaviour.merged(document["_server"])
        if endpoint.startswith("missing"):
            error: str | None = "ValidationError"
            message = f"Endpoint {endpoint} of account 123456789012 not found."
        else:
            error, message = behaviour.error, f"injected {behaviour.error}"
        if error is not None or operation != "invocations-response-stream":
            slots = self.server.slots
            if slots is not None:  # a model server that works on so many requests at a time; others queue
                with slots:
                    _sleep_until(time.perf_counter() + behaviour.latency_ms / 1000)
            else:
                _sleep_until(received + behaviour.latency_ms / 1000)
            if error is not None:
                sock.sendall(_error_response(error, message))
                self.server.stats.add(error, time.perf_counter() - received)
                return
            sock.sendall(_response(200, _completion(behaviour), "application/json"))
            self.server.stats.add("ok", time.perf_counter() - received)
            return
        self._stream(sock, behaviour, received)

    def _stream(self, sock: socket.socket, behaviour: Behaviour, received: float) -> None:
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.amazon.eventstream\r\n"
            "X-Amzn-SageMaker-Content-Type: text/event-stream\r\n"
            "x-Amzn-Invoked-Production-Variant: AllTraffic\r\nTransfer-Encoding: chunked\r\n\r\n"
        ).encode()
        deadline = received + behaviour.ttft_ms / 1000
        for index in range(behaviour.tokens):
            if behaviour.stream_error_after is not None and index == behaviour.stream_error_after:
                _sleep_until(deadline)
                event = exception_event("ModelStreamError", "injected stream error", "ModelStreamError")
                sock.sendall(head + _chunk(event) + b"0\r\n\r\n")
                self.server.stats.add("ModelStreamError", time.perf_counter() - received)
                return
            last = index == behaviour.tokens - 1
            payload: dict[str, Any] = {"token": {"text": " tok"}}
            if last and behaviour.report_tokens:
                payload["details"] = {"generated_tokens": behaviour.tokens}
            data = _chunk(payload_part(b"data: " + json.dumps(payload).encode() + b"\n\n"))
            _sleep_until(deadline)
            sock.sendall(head + data + (b"0\r\n\r\n" if last else b""))
            head = b""
            deadline += behaviour.itl_ms / 1000 + (behaviour.stall_ms / 1000 if index == 0 else 0)
        if behaviour.tokens == 0:
            _sleep_until(deadline)
            sock.sendall(head + b"0\r\n\r\n")
        self.server.stats.add("ok", time.perf_counter() - received)


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _completion(behaviour: Behaviour) -> bytes:
    document: dict[str, Any] = {"generated_text": " tok" * behaviour.tokens}
    if behaviour.report_tokens:
        document["usage"] = {"completion_tokens": behaviour.tokens}
    return json.dumps(document).encode()


def _response(status: int, body: bytes, content_type: str, extra: str = "") -> bytes:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 424: "Failed Dependency", 429: "Too Many Requests"}.get(
        status, "Error"
    )
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        f"x-Amzn-Invoked-Production-Variant: AllTraffic\r\n{extra}\r\n"
    )
    return head.encode() + body


def _error_response(code: str, message: str) -> bytes:
    body = json.dumps({"ErrorCode": code, "Message": message, "OriginalStatusCode": 500}).encode()
    return _response(ERRORS.get(code, 500), body, "application/json", f"x-amzn-ErrorType: {code}\r\n")


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512
    behaviour: Behaviour
    stats: _Stats
    slots: threading.BoundedSemaphore | None


class LocalRuntimeServer:
    """The server on ``127.0.0.1``, served from a background thread (``with`` starts and stops it)."""

    def __init__(self, behaviour: Behaviour | None = None, port: int = 0, host: str = "127.0.0.1", *, slots: int | None = None) -> None:
        """``slots``: InvokeEndpoint requests served at a time (others wait for a slot; default: no limit)."""
        self._server = _Server((host, port), _Handler)
        self._server.slots = threading.BoundedSemaphore(slots) if slots is not None else None
        self._server.behaviour = behaviour or Behaviour()
        self._server.stats = _Stats()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def behaviour(self) -> Behaviour:
        """The server-wide behaviour."""
        return self._server.behaviour

    @behaviour.setter
    def behaviour(self, value: Behaviour) -> None:
        self._server.behaviour = value

    def stats(self) -> dict[str, Any]:
        """Requests served so far, by kind, and server-side duration percentiles."""
        return self._server.stats.snapshot()

    def reset_stats(self) -> None:
        """Forget the requests served so far."""
        self._server.stats.reset()

    def start(self) -> LocalRuntimeServer:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until :meth:`stop`."""
        self._server.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LocalRuntimeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """Run the server in the foreground; prints ``listening on URL`` once ready."""
    parser = argparse.ArgumentParser(prog="python -m sagemaker_pools.ops.bench.localserver", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8080, help="TCP port on 127.0.0.1 (0: any free port)")
    for field in dataclasses.fields(Behaviour):
        if field.name in {"error", "stream_error_after"}:
            continue
        flag = "--" + field.name.replace("_", "-")
        if field.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=field.default)
        else:
            parser.add_argument(flag, type=float if "ms" in field.name else int, default=field.default)
    parser.add_argument("--slots", type=int, help="InvokeEndpoint requests served at a time; others queue (default: no limit)")
    args = parser.parse_args(argv)
    behaviour = Behaviour(**{f.name: getattr(args, f.name) for f in dataclasses.fields(Behaviour) if hasattr(args, f.name)})
    server = LocalRuntimeServer(behaviour, port=args.port, slots=args.slots)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.stop, daemon=True).start())
    print(f"listening on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
