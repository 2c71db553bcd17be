"""Failure modes with real clients (no Stubber): credentials, region, profile, retries, arguments.

Every one must end as one line on stderr with a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.retries.standard import ExponentialBackoff

from sagemaker_pools.ops.cli import main

ROOT = Path(__file__).resolve().parents[2]


class _Throttling(http.server.BaseHTTPRequestHandler):
    """A SageMaker control plane (JSON protocol) that answers every call with ThrottlingException."""

    calls: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).calls.append(self.headers.get("X-Amz-Target", ""))
        body = json.dumps({"__type": "ThrottlingException", "message": "Rate exceeded"}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def throttling_server() -> Iterator[str]:
    _Throttling.calls = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Throttling)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("attempts", [None, "2"])
def test_throttling_is_retried_in_standard_mode_then_reported(
    throttling_server: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], attempts: str | None
) -> None:
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0.0)  # no real waiting
    argv = ["status", "llm-prod", "--endpoint-url", throttling_server]
    if attempts:
        argv += ["--max-attempts", attempts]
    assert main(argv) == 1
    expected = int(attempts or 3)
    assert _Throttling.calls == ["SageMaker.DescribeEndpoint"] * expected
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"throttled: AWS kept refusing DescribeEndpoint with ThrottlingException (Rate exceeded) for all {expected} attempts" in err


def test_no_credentials(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    assert main(["status", "llm-prod", "--endpoint-url", "http://127.0.0.1:9"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sagemaker-pools: error: no AWS credentials found: set AWS_PROFILE") and err.count("\n") == 1


def test_no_credentials_for_bench(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    assert main(["bench", "llm-prod", "--endpoint-url", "http://127.0.0.1:9", "--requests", "1"]) == 1
    assert capsys.readouterr().err.startswith("sagemaker-pools: error: no AWS credentials found")


def test_no_region(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    assert main(["status", "llm-prod"]) == 2
    assert capsys.readouterr().err == (
        "sagemaker-pools: error: no AWS region: pass --region or set AWS_REGION (or a region in your profile)\n"
    )


def test_aws_region_is_honoured_like_aws_default_region(monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemaker_pools.ops.aws import AwsOptions, Clients

    monkeypatch.delenv("AWS_DEFAULT_REGION")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    assert Clients(AwsOptions()).region() == "eu-west-1"
    assert Clients(AwsOptions(region="ap-south-1")).region() == "ap-south-1"
    assert Clients(AwsOptions()).sagemaker().meta.region_name == "eu-west-1"


def test_unknown_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "llm-prod", "--profile", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sagemaker-pools: error: The config profile (nope) could not be found") and err.count("\n") == 1


def test_invalid_endpoint_name_is_caught_before_calling(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "x" * 70, "--endpoint-url", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sagemaker-pools: error: argument ENDPOINT: 'xxxx") and "is not a SageMaker name" in err
    assert err.count("\n") == 1
    assert main(["recommend", "bad_name"]) == 2
    assert "argument JOB: 'bad_name' is not a SageMaker name" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["migrate", "llm-prod"], "the following arguments are required: --fallback (see: sagemaker-pools migrate --help)"),
        (["status"], "the following arguments are required: ENDPOINT (see: sagemaker-pools status --help)"),
        (["frobnicate"], "argument COMMAND: invalid choice: 'frobnicate'"),
        (["bench", "llm", "--concurrency", "many"], "argument --concurrency: invalid int value: 'many'"),
        (["status", "llm", "--max-attempts", "0"], "argument --max-attempts: must be at least 1, got 0"),
        (["recommend", "job", "--order-by", "speed"], "argument --order-by: invalid choice: 'speed'"),
    ],
)
def test_argument_errors_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sagemaker-pools: error: {message}") and err.count("\n") == 1, err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--help"]) == 0
    assert "--price-per-hour USD" in capsys.readouterr().out


def test_module_entry_point_runs_without_cdk() -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['sagemaker-pools', '--help']\n"
        "try:\n"
        "    runpy.run_module('sagemaker_pools.ops', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "import sagemaker_pools.ops.bench_cmd, sagemaker_pools.ops.bench.worker, sagemaker_pools.ops.bench.localserver\n"
        "assert 'aws_cdk' not in sys.modules and 'jsii' not in sys.modules\n"
        "heavy = {'matplotlib', 'tokenizers', 'numpy'} & set(sys.modules)\n"  # optional extras: only when asked for
        "assert not heavy, heavy\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for command in ("status", "migrate", "recommend", "bench"):
        assert command in result.stdout


def test_console_script_is_declared() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["sagemaker-pools"] == "sagemaker_pools.ops.entry:main"
