"""Fixtures for the ``sagemaker-pools`` command tests: Stubber-wrapped clients, a CLI runner, a local server.

No test calls AWS: control-plane calls go to botocore's ``Stubber`` (which checks every
request and every canned response against the SageMaker service model), runtime calls go to a
SageMaker-runtime-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

sys.path.insert(0, str(Path(__file__).parent))  # ops_samples, ops_support

from ops_support import NOW, Result, StubClients  # noqa: E402

from sagemaker_pools.ops.bench.localserver import Behaviour, LocalRuntimeServer  # noqa: E402
from sagemaker_pools.ops.cli import main  # noqa: E402
from sagemaker_pools.ops.context import Context  # noqa: E402


@pytest.fixture(autouse=True)
def isolated_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Dummy credentials, a fixed region, no config files, no instance metadata service."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SAGEMAKER", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTESTTESTTESTTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))


def _stubbed(client: Any) -> Iterator[Stubber]:
    """botocore's Stubber on ``client``, active while the test runs; every queued response must be used."""
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def sm() -> Any:
    """A real SageMaker client (never reaches AWS: wrapped in the ``stub`` fixture's Stubber)."""
    return boto3.client("sagemaker", region_name="us-east-1")


@pytest.fixture
def stub(sm: Any) -> Iterator[Stubber]:
    """botocore's Stubber on ``sm``; every queued response must be used by the test."""
    yield from _stubbed(sm)


@pytest.fixture
def aas() -> Any:
    """A real Application Auto Scaling client (wrapped in ``aas_stub``)."""
    return boto3.client("application-autoscaling", region_name="us-east-1")


@pytest.fixture
def aas_stub(aas: Any) -> Iterator[Stubber]:
    """botocore's Stubber on ``aas``; every queued response must be used by the test."""
    yield from _stubbed(aas)


@pytest.fixture
def cw() -> Any:
    """A real CloudWatch client (wrapped in ``cw_stub``)."""
    return boto3.client("cloudwatch", region_name="us-east-1")


@pytest.fixture
def cw_stub(cw: Any) -> Iterator[Stubber]:
    """botocore's Stubber on ``cw``; every queued response must be used by the test."""
    yield from _stubbed(cw)


@pytest.fixture
def cfn() -> Any:
    """A real CloudFormation client (wrapped in ``cfn_stub``)."""
    return boto3.client("cloudformation", region_name="us-east-1")


@pytest.fixture
def cfn_stub(cfn: Any) -> Iterator[Stubber]:
    """botocore's Stubber on ``cfn``; every queued response must be used by the test."""
    yield from _stubbed(cfn)


@pytest.fixture
def calls(sm: Any, aas: Any, cw: Any, cfn: Any) -> list[str]:
    """Every API call the four clients make, in order, as ``service:Operation``."""
    made: list[str] = []
    for client in (sm, aas, cw, cfn):
        client.meta.events.register(
            "before-parameter-build.*.*", lambda model, **_: made.append(f"{model.service_model.service_name}:{model.name}")
        )
    return made


@pytest.fixture
def run_cli(sm: Any, aas_stub: Stubber, aas: Any, cw_stub: Stubber, cw: Any, cfn_stub: Stubber, cfn: Any) -> Callable[..., Result]:
    """Run ``sagemaker-pools ARGS`` against the stubbed client; sleeping is instant and recorded."""

    def run(*argv: str, monotonic: Callable[[], float] | None = None) -> Result:
        out, err = io.StringIO(), io.StringIO()
        sleeps: list[float] = []
        ctx = Context(clients=StubClients(sm, aas, cw, cfn), out=out, err=err, sleep=sleeps.append, now=lambda: NOW)
        if monotonic is not None:
            ctx.monotonic = monotonic
        code = main(list(argv), context=ctx)
        return Result(code, out.getvalue(), err.getvalue(), sleeps)

    return run


@pytest.fixture(scope="session")
def runtime_server() -> Iterator[LocalRuntimeServer]:
    """A SageMaker-runtime-compatible server on 127.0.0.1 for the whole session."""
    with LocalRuntimeServer(Behaviour()) as server:
        yield server
