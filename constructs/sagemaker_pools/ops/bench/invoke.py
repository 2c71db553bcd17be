"""One timed call to the endpoint, and the boto3 client it runs on.

Two ways to send InvokeEndpoint (``BenchOptions.http``):

* ``lean`` (the default): the request is built and signed by botocore ahead of time and sent
  as bytes on a keep-alive connection (:mod:`.wire`); the clock starts just before the
  connection is taken (opened if needed) and the bytes are sent.
* ``boto3``: a full ``invoke_endpoint`` call each time; the clock starts at botocore's
  ``before-send`` event: the request is serialized and signed, and the next thing that happens
  is the HTTP send. Client-side preparation (about 1 ms of Python per call) is therefore not
  counted as endpoint latency, but it is CPU the benchmark takes from the requests in flight.

InvokeEndpointWithResponseStream always takes the boto3 path. Either way the clock stops when
the whole response has been read (for streams: the last event), and a retried call is timed
from its last attempt's send. Time to first token is the first non-empty ``PayloadPart``;
inter-token latencies are the gaps between consecutive parts.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    ResponseStreamingError,
)

from .options import BenchOptions, Connection
from .tokens import count_stream_tokens, count_tokens, load_tokenizer, response_text, stream_text
from .wire import Retries, SignedRequests, WireClient, uses_proxy

__all__ = ["Record", "Invoker", "make_client", "error_kind"]


@dataclasses.dataclass(slots=True)
class Record:
    """One measured request (times are ``time.perf_counter()`` seconds).

    Attributes:
        sent: when the request went out.
        latency: from ``sent`` to the last byte of the response (or the failure).
        ok: True when the whole response arrived.
        error: the kind of failure (an AWS error code, ``timeout``, ``connection``, ...).
        body: index of the request body.
        ttft: streaming: time to the first token (first non-empty part).
        gaps: streaming: the gaps between consecutive parts.
        out_bytes: response bytes (streaming: payload bytes).
        chunks: streaming: non-empty parts received.
        tokens: the output token count the response reported, if any (or, with a tokenizer,
            the count of the response's text).
        tokens_counted: True when ``tokens`` was counted with the tokenizer, not reported.
        lag: open loop: how late the request left compared with its schedule.
        response: the whole response body (streaming: the payload parts joined), kept only by
            an :class:`Invoker` made with ``keep_responses=True`` (``gate`` compares them) or
            for the next turn of a conversation (``--turns``; dropped once read).
        turn: ``--turns``: the request's turn in its conversation (1 = the first), else None.
        in_bytes: the size of the body sent when it was built for this request (a turn that
            carries a history), else None (the body is ``body`` of the run's bodies).
    """

    sent: float
    latency: float
    ok: bool
    error: str | None
    body: int
    ttft: float | None = None
    gaps: list[float] | None = None
    out_bytes: int = 0
    chunks: int = 0
    tokens: int | None = None
    tokens_counted: bool = False
    lag: float | None = None
    response: bytes | None = None
    turn: int | None = None
    in_bytes: int | None = None


def make_client(connection: Connection, options: BenchOptions, pool_size: int) -> Any:
    """A sagemaker-runtime client whose connection pool holds ``pool_size`` connections.

    A pool smaller than the threads sharing it makes callers open and discard extra
    connections (or wait), and that cost lands in the measured latency.
    """
    session = boto3.session.Session(
        aws_access_key_id=connection.access_key,
        aws_secret_access_key=connection.secret_key,
        aws_session_token=connection.token,
        region_name=connection.region,
    )
    config = Config(
        retries={"mode": "standard", "total_max_attempts": 1 + options.retries},
        max_pool_connections=max(1, pool_size),
        read_timeout=options.timeout_s,
        connect_timeout=min(options.timeout_s, 10.0),
        tcp_keepalive=True,
        parameter_validation=False,  # validated once up front; saves work on every call
        user_agent_extra="sagemaker-pools-bench",
    )
    return session.client("sagemaker-runtime", config=config, endpoint_url=connection.endpoint_url)


def error_kind(exc: BaseException) -> str:
    """A short name for a failure: the AWS error code, or ``timeout`` / ``connection``."""
    if isinstance(exc, ClientError):  # includes EventStreamError (ModelStreamError, ...)
        return str(exc.response.get("Error", {}).get("Code") or "ClientError")
    if isinstance(exc, ConnectTimeoutError):
        return "connect-timeout"
    if isinstance(exc, (ReadTimeoutError, socket.timeout, TimeoutError)) or "Timeout" in type(exc).__name__:
        return "timeout"
    if isinstance(exc, (EndpointConnectionError, ConnectionClosedError, ResponseStreamingError, ConnectionError)):
        return "connection"
    if "Protocol" in type(exc).__name__ or "Connection" in type(exc).__name__:
        return "connection"
    return type(exc).__name__


class Invoker:
    """Calls the endpoint from any number of threads and times each call.

    ``keep_responses``: keep each response body in its :class:`Record` (a benchmark does not:
    it would hold every response in memory).
    """

    def __init__(self, client: Any, options: BenchOptions, *, keep_responses: bool = False) -> None:
        self.client = client
        self.options = options
        self.keep_responses = keep_responses
        self._local = threading.local()
        client.meta.events.register("before-send.sagemaker-runtime", self._mark_sent)
        params: dict[str, Any] = {"EndpointName": options.endpoint, "ContentType": options.content_type}
        for key, value in (
            ("Accept", options.accept),
            ("InferenceComponentName", options.inference_component),
            ("TargetVariant", options.target_variant),
            ("CustomAttributes", options.custom_attributes),
        ):
            if value is not None:
                params[key] = value
        self._params = params
        self._tokenizer = load_tokenizer(options.tokenizer) if options.tokenizer else None
        self._signed: SignedRequests | None = None
        self.http = "boto3"
        if options.http == "lean" and not options.stream and not uses_proxy(client.meta.endpoint_url):
            self._signed = SignedRequests(client, params)
            self._signed.sign(options.bodies[0])  # fails now (credentials, endpoint) rather than on every call
            assert self._signed.url is not None
            self._wire = WireClient(self._signed.url, timeout_s=options.timeout_s, connect_timeout_s=min(options.timeout_s, 10.0))
            self._retries = Retries(client, 1 + options.retries)
            self.http = "lean"

    def _mark_sent(self, **_: Any) -> None:
        self._local.sent = time.perf_counter()

    def call(self, body_index: int, built: bytes | None = None) -> Record:
        """Send body ``body_index`` once (or ``built``, a body made for this request from it: a
        conversation's turn); never raises for a failed request (it is recorded)."""
        self._local.sent = None
        called = time.perf_counter()
        body = self.options.bodies[body_index] if built is None else built
        record = Record(sent=called, latency=0.0, ok=False, error=None, body=body_index, in_bytes=None if built is None else len(built))
        parts: list[bytes] = []
        try:
            if self._signed is not None:
                parts.append(self._lean(body_index, body, once=built is not None))
            elif self.options.stream:
                self._stream(body, record, parts)
            else:
                response = self.client.invoke_endpoint(Body=body, **self._params)
                parts.append(response["Body"].read())
            record.ok = True
        except Exception as exc:  # every failure is a result, counted by kind
            record.error = error_kind(exc)
        done = time.perf_counter()
        record.sent = self._local.sent or called
        record.latency = done - record.sent
        if record.ttft is not None:
            record.ttft -= record.sent
        # after the clock stopped: counting tokens is the client's work, not the endpoint's
        if record.ok:
            record.out_bytes = sum(len(p) for p in parts)
            if self.keep_responses or self.options.turns > 1:
                record.response = b"".join(parts)
            record.tokens = count_stream_tokens(parts) if self.options.stream else count_tokens(parts[0])
            if record.tokens is None and self._tokenizer is not None:
                text = stream_text(parts) if self.options.stream else response_text(parts[0])
                record.tokens = len(self._tokenizer.encode(text, add_special_tokens=False).ids)
                record.tokens_counted = True
        return record

    def _lean(self, body_index: int, body: bytes, *, once: bool = False) -> bytes:
        """InvokeEndpoint on the lean path: the response body (raises what botocore would).

        ``once``: a body sent only this time (a conversation's turn) is signed for this call, not
        cached. Either way it is signed before the clock starts.
        """
        assert self._signed is not None
        signed = self._signed
        request = signed.sign(body) if once else signed.get(body_index, body)
        request_context: dict[str, Any] = {}
        attempt = 1
        while True:
            response = None
            self._local.sent = time.perf_counter()
            try:
                response = self._wire.exchange(request)
                if 200 <= response.status < 300:
                    self._retries.succeeded(request_context)
                    return response.body
                raise self._retries.error(self._wire.url, response)
            except (ClientError, ConnectionClosedError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError) as exc:
                if not self._retries.again(attempt, self._wire.url, response, exc, request_context):
                    raise
            attempt += 1
            request = signed.sign(body) if once else signed.get(body_index, body)

    def _stream(self, body: bytes, record: Record, parts: list[bytes]) -> None:
        response = self.client.invoke_endpoint_with_response_stream(Body=body, **self._params)
        gaps: list[float] = []
        previous = None
        record.gaps = gaps
        for event in response["Body"]:
            part = event.get("PayloadPart")
            data = part.get("Bytes", b"") if part else b""
            if not data:
                continue
            now = time.perf_counter()
            if previous is None:
                record.ttft = now  # made relative to `sent` by the caller
            else:
                gaps.append(now - previous)
            previous = now
            parts.append(data)
        record.chunks = len(parts)
