"""A local SageMaker-runtime-compatible HTTP server, for trying ``bench`` and for tests.

It answers ``POST /endpoints/{name}/invocations`` (InvokeEndpoint) and
``POST /endpoints/{name}/invocations-response-stream`` (InvokeEndpointWithResponseStream, with
the real event-stream framing over chunked transfer encoding), so the real boto3 client works
against it with ``endpoint_url=http://127.0.0.1:PORT`` and dummy credentials.

Behaviour comes from :class:`Behaviour` (server-wide defaults) and, per request, from a
``"_server"`` object in a JSON request body with the same field names, e.g.
``{"inputs": "hi", "_server": {"latency_ms": 200, "error": "ModelError"}}``. Endpoint names
starting with ``missing`` answer like a missing endpoint (``ValidationError``).

Each response (each streamed event) goes out in one write on a socket with ``TCP_NODELAY``: a server that
writes headers and body separately without it adds ~40 ms to keep-alive responses (Nagle's
algorithm holds the second write until the client's delayed ACK).

``GET /_stats`` returns the server-side duration percentiles of the requests so far (the
"truth" a client measurement can be checked against), the requests in flight and the
``TargetVariant`` each invocation named; ``POST /_reset`` clears them. A server made with
``keep_bodies=True`` also keeps every invocation's request body, in arrival order
(:meth:`LocalRuntimeServer.bodies`), so a test can check what the client sent: the prefixes
prompts share, the history a conversation's turns carry.

Run it: ``python -m sagemaker_pools.ops.bench.localserver --port 8080 --latency-ms 50``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import functools
import json
import math
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
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
    """What the server served; read from other threads (``stats()``), so guarded by a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.durations: list[float] = []
        self.by_kind: dict[str, int] = {}
        self.target_variants: dict[str, int] = {}
        self.in_flight = 0
        self.bodies: list[bytes] | None = None  # kept only when the server was asked to

    def add(self, kind: str, duration: float) -> None:
        with self.lock:
            self.durations.append(duration)
            self.by_kind[kind] = self.by_kind.get(kind, 0) + 1

    def invoked(self, target_variant: str | None, body: bytes) -> None:
        """An invocation arrived, naming ``target_variant`` (the ``TargetVariant`` header) or none."""
        with self.lock:
            key = target_variant or "(none)"
            self.target_variants[key] = self.target_variants.get(key, 0) + 1
            if self.bodies is not None:
                self.bodies.append(body)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            ordered = sorted(self.durations)
            kinds = dict(self.by_kind)
            variants = dict(self.target_variants)
        result: dict[str, Any] = {"requests": len(ordered), "by_kind": kinds, "in_flight": self.in_flight, "target_variants": variants}
        for p in (50, 90, 95, 99, 100):
            result[f"p{p}_ms"] = ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] * 1000 if ordered else None
        return result

    def reset(self) -> None:
        with self.lock:
            self.durations.clear()
            self.by_kind.clear()
            self.target_variants.clear()
            if self.bodies is not None:
                self.bodies.clear()


class _State:
    """What every connection of one server shares (touched only on the event loop's thread)."""

    def __init__(self, behaviour: Behaviour, slots: int | None) -> None:
        self.behaviour = behaviour
        self.stats = _Stats()
        self.slots = slots
        self.busy = 0
        self.waiting: collections.deque[Callable[[], None]] = collections.deque()
        self.transports: set[asyncio.Transport] = set()


class _Connection(asyncio.Protocol):
    """One keep-alive connection: reads requests one at a time and answers each in order."""

    def __init__(self, state: _State) -> None:
        self._state = state
        self._buffer = b""
        self._busy = False  # a request is being answered: later (pipelined) requests wait
        self._closed = False
        self._transport: asyncio.Transport | None = None
        self._loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._state.transports.add(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True  # timers still run (they keep the in-flight count), but write nothing
        if self._transport is not None:
            self._state.transports.discard(self._transport)

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if not self._busy:
            self._next_request()

    def _send(self, data: bytes) -> bool:
        """Write ``data`` in one piece; False when the client has gone."""
        if self._closed or self._transport is None or self._transport.is_closing():
            return False
        self._transport.write(data)
        return True

    def _next_request(self) -> None:
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > _MAX_HEAD and self._transport is not None:
                self._transport.close()
            return
        lines = self._buffer[:end].decode("latin-1").split("\r\n")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        total = end + 4 + length
        if len(self._buffer) < total:
            return
        body = self._buffer[end + 4 : total]
        self._buffer = self._buffer[total:]
        received = time.perf_counter()
        method, path, _ = lines[0].split(" ", 2)
        self._busy = True
        self._keep_alive = headers.get("connection", "").lower() != "close"
        state = self._state
        if method == "GET" and path == "/_stats":
            self._send(_response(200, json.dumps(state.stats.snapshot()).encode(), "application/json"))
            self._done()
        elif method == "POST" and path == "/_reset":
            state.stats.reset()
            self._send(_response(200, b"{}", "application/json"))
            self._done()
        elif method == "POST" and path.startswith("/endpoints/"):
            state.stats.in_flight += 1
            state.stats.invoked(headers.get("x-amzn-sagemaker-target-variant"), body)
            self._invoke(path, body, received)
        else:
            self._send(_response(404, b'{"message": "not found"}', "application/json"))
            self._done()

    def _done(self) -> None:
        """The current response is complete: close, or go on with the next request."""
        self._busy = False
        if not self._keep_alive:
            if self._transport is not None:
                self._transport.close()
            return
        if self._buffer and not self._closed:
            self._next_request()

    def _answered(self, kind: str, received: float, data: bytes) -> None:
        """The last bytes of an invocation: send them, count the request (if the client is still there)."""
        stats = self._state.stats
        if self._send(data):
            stats.add(kind, time.perf_counter() - received)
        stats.in_flight -= 1
        self._done()

    def _later(self, deadline: float, callback: Callable[[], None]) -> None:
        self._loop.call_later(max(0.0, deadline - time.perf_counter()), callback)

    def _invoke(self, path: str, body: bytes, received: float) -> None:
        parts = path.split("/")
        endpoint, operation = parts[2], parts[3] if len(parts) > 3 else ""
        state = self._state
        behaviour = state.behaviour
        if body[:1] == b"{" and b'"_server"' in body:
            try:
                document = json.loads(body)
            except ValueError:
                document = None
            if isinstance(document, dict) and isinstance(document.get("_server"), dict):
                behaviour = behaviour.merged(document["_server"])
        if endpoint.startswith("missing"):
            error: str | None = "ValidationError"
            message = f"Endpoint {endpoint} of account 123456789012 not found."
        else:
            error, message = behaviour.error, f"injected {behaviour.error}"
        if error is None and operation == "invocations-response-stream":
            self._stream(behaviour, received)
            return
        answer = _error_response(error, message) if error is not None else _response(200, _completion(behaviour), "application/json")
        kind = error or "ok"
        delay = behaviour.latency_ms / 1000
        if state.slots is None:
            self._later(received + delay, lambda: self._answered(kind, received, answer))
            return

        # a model server that works on so many requests at a time; the others queue
        def release() -> None:
            state.busy -= 1
            self._answered(kind, received, answer)
            if state.waiting:
                state.waiting.popleft()()

        def begin() -> None:
            state.busy += 1
            self._later(time.perf_counter() + delay, release)

        if state.busy < state.slots:
            begin()
        else:
            state.waiting.append(begin)

    def _stream(self, behaviour: Behaviour, received: float) -> None:
        head = _STREAM_HEAD
        stats = self._state.stats

        def gone() -> None:
            stats.in_flight -= 1
            self._done()

        def send(index: int, deadline: float) -> None:
            nonlocal head
            if self._closed:
                gone()
                return
            if behaviour.stream_error_after is not None and index == behaviour.stream_error_after:
                event = exception_event("ModelStreamError", "injected stream error", "ModelStreamError")
                self._answered("ModelStreamError", received, head + _chunk(event) + b"0\r\n\r\n")
                return
            last = index == behaviour.tokens - 1
            payload: dict[str, Any] = {"token": {"text": " tok"}}
            if last and behaviour.report_tokens:
                payload["details"] = {"generated_tokens": behaviour.tokens}
            data = head + _chunk(payload_part(b"data: " + json.dumps(payload).encode() + b"\n\n"))
            head = b""
            if last:
                self._answered("ok", received, data + b"0\r\n\r\n")
                return
            self._send(data)
            deadline += behaviour.itl_ms / 1000 + (behaviour.stall_ms / 1000 if index == 0 else 0)
            self._later(deadline, lambda: send(index + 1, deadline))

        first = received + behaviour.ttft_ms / 1000
        if behaviour.tokens == 0:
            self._later(first, lambda: self._answered("ok", received, head + b"0\r\n\r\n"))
        else:
            self._later(first, lambda: send(0, first))


_MAX_HEAD = 65536

_STREAM_HEAD = (
    "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.amazon.eventstream\r\n"
    "X-Amzn-SageMaker-Content-Type: text/event-stream\r\n"
    "x-Amzn-Invoked-Production-Variant: AllTraffic\r\nTransfer-Encoding: chunked\r\n\r\n"
).encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


@functools.lru_cache(maxsize=64)
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


class LocalRuntimeServer:
    """The server on ``127.0.0.1``, served from a background thread (``with`` starts and stops it).

    One asyncio event loop serves every connection; delays are timers (``call_later``), not
    sleeping threads, so the server's own work per request stays far below a millisecond and
    its figures do not drift with the number of requests in flight.
    """

    def __init__(
        self, behaviour: Behaviour | None = None, port: int = 0, host: str = "127.0.0.1", *, slots: int | None = None, keep_bodies: bool = False
    ) -> None:
        """``slots``: InvokeEndpoint requests served at a time (others wait for a slot; default: no limit).
        ``keep_bodies``: keep every invocation's request body (:meth:`bodies`)."""
        self._socket = socket.create_server((host, port), backlog=512, reuse_port=False)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._state = _State(behaviour or Behaviour(), slots)
        if keep_bodies:
            self._state.stats.bodies = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._socket.getsockname()[:2]
        return f"http://{host!s}:{port}"

    @property
    def behaviour(self) -> Behaviour:
        """The server-wide behaviour."""
        return self._state.behaviour

    @behaviour.setter
    def behaviour(self, value: Behaviour) -> None:
        self._state.behaviour = value

    def stats(self) -> dict[str, Any]:
        """Requests served so far, by kind, and server-side duration percentiles."""
        return self._state.stats.snapshot()

    def bodies(self) -> list[bytes]:
        """The request bodies of the invocations so far, in arrival order (a server made with ``keep_bodies=True``)."""
        with self._state.stats.lock:
            if self._state.stats.bodies is None:
                raise RuntimeError("this server keeps no request bodies: make it with keep_bodies=True")
            return list(self._state.stats.bodies)

    def reset_stats(self) -> None:
        """Forget the requests served so far."""
        self._state.stats.reset()

    def start(self) -> LocalRuntimeServer:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="local-runtime-server", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until :meth:`stop`."""
        loop = asyncio.new_event_loop()
        state = self._state
        server = loop.run_until_complete(loop.create_server(lambda: _Connection(state), sock=self._socket))
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            for transport in list(state.transports):
                transport.abort()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if loop is None:  # never served (a served socket is closed with the loop's server)
            self._socket.close()

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
