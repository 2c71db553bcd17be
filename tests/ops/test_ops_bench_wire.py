"""The lean InvokeEndpoint path of ``sagemaker-pools bench`` (pre-signed requests on keep-alive sockets).

Each behaviour is checked on both paths (``--http lean`` and ``--http boto3``) against the local
server, and the lean path's HTTP details against a raw socket server that records what it gets.
"""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.auth import _host_from_url
from botocore.exceptions import ClientError

from sagemaker_pools.ops.bench.invoke import error_kind, make_client
from sagemaker_pools.ops.bench.localserver import LocalRuntimeServer
from sagemaker_pools.ops.bench.options import BenchOptions, Connection
from sagemaker_pools.ops.bench.wire import RESIGN_AFTER_S, Retries, SignedRequests, WireClient, host_header

from test_ops_bench import bench, body

PARAMS = {"EndpointName": "llm", "ContentType": "application/json"}


@pytest.fixture
def server(runtime_server: LocalRuntimeServer) -> LocalRuntimeServer:
    runtime_server.reset_stats()
    return runtime_server


class RawServer:
    """A socket server on 127.0.0.1 that records each request's bytes and answers with canned bytes.

    ``answers`` is a list of (response bytes, close the connection afterwards) served in turn.
    """

    def __init__(self, answers: list[tuple[bytes, bool]], tls: ssl.SSLContext | None = None) -> None:
        self.answers = list(answers)
        self._tls = tls
        self.requests: list[bytes] = []
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while self.answers:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            if self._tls is not None:
                try:
                    conn = self._tls.wrap_socket(conn, server_side=True)
                except (ssl.SSLError, OSError):  # a client that refused the certificate
                    conn.close()
                    continue
            with conn:
                while self.answers:
                    request = self._read(conn)
                    if request is None:
                        break
                    self.requests.append(request)
                    answer, close = self.answers.pop(0)
                    conn.sendall(answer)
                    if close:
                        break

    @staticmethod
    def _read(conn: socket.socket) -> bytes | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
        while len(rest) < length:
            rest += conn.recv(65536)
        return head + b"\r\n\r\n" + rest

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def raw() -> Iterator[Callable[..., RawServer]]:
    servers: list[RawServer] = []

    def make(answers: list[tuple[bytes, bool]], tls: ssl.SSLContext | None = None) -> RawServer:
        servers.append(RawServer(answers, tls))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def ok_response(payload: bytes = b'{"generated_text": "hi"}', extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n" % (len(payload), extra) + payload


def client_for(url: str) -> Any:
    options = BenchOptions(endpoint="llm", bodies=(b"{}",))
    return make_client(Connection(region="us-east-1", endpoint_url=url, access_key="AKIDTESTTESTTESTTEST", secret_key="s", token=None), options, 1)


def split(request: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, payload = request.partition(b"\r\n\r\n")
    line, *lines = head.decode("latin-1").split("\r\n")
    return line, {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}, payload


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080", "https://runtime.sagemaker.us-east-1.amazonaws.com", "https://Example.com:443", "http://h:80", "http://[::1]:9000"]
)
def test_the_host_header_is_the_one_sigv4_signs(url: str) -> None:
    assert host_header(url) == _host_from_url(url)


def test_the_lean_request_is_what_boto3_sends(raw: Callable[..., RawServer]) -> None:
    server = raw([(ok_response(), False), (ok_response(), False)])
    payload = b'{"inputs": "same"}'
    client_for(server.url).invoke_endpoint(Body=payload, **PARAMS)["Body"].read()  # boto3 over urllib3
    signed = SignedRequests(client_for(server.url), dict(PARAMS))
    WireClient(server.url, timeout_s=5, connect_timeout_s=5).exchange(signed.sign(payload))
    (boto_line, boto_headers, boto_body), (lean_line, lean_headers, lean_body) = (split(r) for r in server.requests)
    assert lean_line == boto_line == "POST /endpoints/llm/invocations HTTP/1.1"
    assert lean_body == boto_body == payload
    volatile = {"x-amz-date", "authorization", "amz-sdk-invocation-id"}  # time, and a fresh id per call
    assert {k: v for k, v in lean_headers.items() if k not in volatile} == {k: v for k, v in boto_headers.items() if k not in volatile}
    assert lean_headers["host"] == server.url.removeprefix("http://")
    assert "SignedHeaders=content-type;host;x-amz-date" in lean_headers["authorization"]


def test_a_body_is_signed_once_and_again_when_its_signature_ages() -> None:
    now = [0.0]
    signed = SignedRequests(client_for("http://127.0.0.1:9"), dict(PARAMS), clock=lambda: now[0])  # nothing is sent
    first = signed.get(0, b'{"a": 1}')
    now[0] = RESIGN_AFTER_S - 0.1
    assert signed.get(0, b'{"a": 1}') is first
    other = signed.get(1, b'{"b": 2}')
    assert other != first and other.endswith(b'{"b": 2}')
    now[0] = RESIGN_AFTER_S
    again = signed.get(0, b'{"a": 1}')
    assert again != first  # a new signing: botocore gives every call its own invocation id
    assert split(again)[1]["amz-sdk-invocation-id"] != split(first)[1]["amz-sdk-invocation-id"]
    assert RESIGN_AFTER_S < 300  # AWS refuses a request more than five minutes after its time stamp


def test_a_connection_the_server_closed_is_opened_again(raw: Callable[..., RawServer]) -> None:
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    server = raw([(ok_response(b"one"), True), (chunked, False), (ok_response(b"three", b"Connection: close\r\n"), False), (ok_response(b"four"), False)])
    wire = WireClient(server.url, timeout_s=5, connect_timeout_s=5)
    request = b"POST /endpoints/llm/invocations HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
    bodies = []
    for _ in range(4):
        bodies.append(wire.exchange(request).body)
        time.sleep(0.05)  # idle: the server's close reaches the client before its next request
    assert bodies == [b"one", b"hello world", b"three", b"four"]
    # the first and third answers ended their connections (closed after / Connection: close)
    assert server.connections == 3


def test_failures_are_botocores_exceptions_and_error_kinds(raw: Callable[..., RawServer]) -> None:
    error = json.dumps({"ErrorCode": "ModelError", "Message": "boom"}).encode()
    server = raw([(b"HTTP/1.1 424 Failed Dependency\r\nx-amzn-ErrorType: ModelError\r\nContent-Length: %d\r\n\r\n" % len(error) + error, False), (b"HTTP/1.1 200 OK\r\nContent-Le", True)])
    wire = WireClient(server.url, timeout_s=5, connect_timeout_s=5)
    client = client_for(server.url)
    retries = Retries(client, 1)
    response = wire.exchange(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert response.status == 424
    exc = retries.error(server.url, response)
    assert isinstance(exc, ClientError) and error_kind(exc) == "ModelError"
    with pytest.raises(Exception) as closed:
        wire.exchange(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # the server hangs up mid-headers
    assert error_kind(closed.value) == "connection"
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    with pytest.raises(Exception) as refused:
        WireClient(f"http://127.0.0.1:{port}", timeout_s=5, connect_timeout_s=5).exchange(b"GET / HTTP/1.1\r\n\r\n")
    assert error_kind(refused.value) == "connection"


@pytest.mark.parametrize("http", ["lean", "boto3"])
def test_both_paths_count_errors_and_retries_as_the_server_saw_them(server: LocalRuntimeServer, tmp_path: Path, http: str) -> None:
    path = tmp_path / "bodies.jsonl"
    # in turn: ServiceUnavailable (503) is transient, retried; ModelError (424) is not; then a success
    path.write_text("\n".join([body(latency_ms=2, error="ServiceUnavailable"), body(latency_ms=2, error="ModelError"), body(latency_ms=2)]))
    code, report, _, err = bench(
        server, "llm", "--input", str(path), "--requests", "6", "--concurrency", "1", "--processes", "1", "--warmup", "0",
        "--retries", "2", "--max-error-rate", "100%", "--http", http, "--json",
    )  # fmt: skip
    assert code == 0, err
    assert report is not None and report["run"]["http"] == http
    assert report["requests"]["errors"] == {"ModelError": 2, "ServiceUnavailable": 2} and report["requests"]["ok"] == 2
    # botocore's standard mode: 3 attempts for each 503, one for the others
    assert server.stats()["by_kind"] == {"ServiceUnavailable": 6, "ModelError": 2, "ok": 2}


@pytest.mark.parametrize("http", ["lean", "boto3"])
def test_both_paths_time_out_alike(server: LocalRuntimeServer, tmp_path: Path, http: str) -> None:
    path = tmp_path / "bodies.jsonl"
    path.write_text("\n".join([body(latency_ms=1500), body(latency_ms=2)]))
    code, report, _, err = bench(
        server, "llm", "--input", str(path), "--requests", "4", "--concurrency", "1", "--processes", "1", "--warmup", "0",
        "--timeout", "0.3", "--max-error-rate", "100%", "--http", http, "--json",
    )  # fmt: skip
    assert code == 0, err
    assert report is not None and report["run"]["http"] == http
    assert report["requests"]["errors"] == {"timeout": 2} and report["requests"]["ok"] == 2
    # the connection a timed-out request leaves behind is not reused for the next one
    assert report["latency_ms"]["max"] < 300


def test_streaming_stays_on_boto3_and_lean_is_the_default(server: LocalRuntimeServer) -> None:
    args = ("llm", "--body", body(latency_ms=2, ttft_ms=2, itl_ms=1, tokens=2), "--requests", "4", "--concurrency", "2", "--processes", "1", "--warmup", "0", "--json")
    _, plain, _, err = bench(server, *args)
    assert plain is not None, err
    _, streamed, _, err = bench(server, *args, "--stream")
    assert streamed is not None, err
    assert (plain["run"]["http"], streamed["run"]["http"]) == ("lean", "boto3")
    assert plain["output"]["tokens_total"] == 4 * 2  # the lean path's body is the response, read whole


@pytest.mark.skipif(shutil.which("openssl") is None, reason="makes its certificate with the openssl command")
def test_https_gets_tls_with_the_certificate_checked(raw: Callable[..., RawServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    server = raw([(ok_response(b"one"), False), (ok_response(b"two"), False)], tls)
    url = server.url.replace("http://127.0.0.1", "https://localhost")
    request = b"POST /endpoints/llm/invocations HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}"
    monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)
    with pytest.raises(Exception) as untrusted:  # a certificate no bundle vouches for
        WireClient(url, timeout_s=5, connect_timeout_s=5).exchange(request)
    assert error_kind(untrusted.value) == "connection"
    monkeypatch.setenv("AWS_CA_BUNDLE", str(cert))
    wire = WireClient(url, timeout_s=5, connect_timeout_s=5)
    first = wire.exchange(request).body
    time.sleep(0.05)  # idle: the kept-alive TLS connection is checked, found open and reused
    assert [first, wire.exchange(request).body] == [b"one", b"two"]
    assert server.connections == 2  # the refused client's, then one kept alive for both requests
