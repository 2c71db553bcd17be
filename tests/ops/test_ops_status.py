"""``sagemaker-pools status`` against Stubber-checked DescribeEndpoint / DescribeEndpointConfig responses."""

from __future__ import annotations

import json
from typing import Any

import ops_samples as s
import pytest
from botocore.stub import Stubber


def _describe(stub: Stubber, endpoint: dict[str, Any], *configs: dict[str, Any]) -> None:
    stub.add_response("describe_endpoint", endpoint, {"EndpointName": endpoint["EndpointName"]})
    for cfg in configs:
        stub.add_response("describe_endpoint_config", cfg, {"EndpointConfigName": cfg["EndpointConfigName"]})


def test_one_pool(stub: Stubber, run_cli: Any) -> None:
    _describe(stub, s.ONE_POOL_ENDPOINT, s.ONE_POOL_CONFIG)
    result = run_cli("status", "llm-prod")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "Endpoint llm-prod: InService"
    assert "Variant AllTraffic: 2 instances, weight 1, routing LEAST_OUTSTANDING_REQUESTS, provision timeout 1200 s" in result.out
    row = next(line for line in lines if "ml.g6e.48xlarge" in line).split()
    assert row == ["1", "ml.g6e.48xlarge", "llm-70b", "2", "preferred"]
    assert "no fallback pool in use" in result.out


def test_three_pools_in_priority_order_with_fallbacks_in_use(stub: Stubber, run_cli: Any) -> None:
    _describe(stub, s.THREE_POOLS_ENDPOINT, s.THREE_POOLS_CONFIG)
    result = run_cli("status", "llm-prod")
    assert result.code == 0, result.err
    rows = [line.split() for line in result.out.splitlines() if line.strip().startswith(("1 ", "2 ", "3 "))]
    assert rows == [
        ["1", "ml.g6e.48xlarge", "llm-70b", "1", "preferred"],
        ["2", "ml.g6.48xlarge", "llm-70b-g6", "(override)", "2", "fallback", "in", "use"],
        ["3", "ml.p4d.24xlarge", "llm-70b-int4", "(override)", "1", "fallback", "in", "use"],
    ]
    assert (
        "fallback pools in use: ml.g6.48xlarge (2), ml.p4d.24xlarge (1): 3 of 4 instances are not on the "
        "preferred type ml.g6e.48xlarge" in result.out
    )


def test_three_pools_json(stub: Stubber, run_cli: Any) -> None:
    _describe(stub, s.THREE_POOLS_ENDPOINT, s.THREE_POOLS_CONFIG)
    result = run_cli("status", "llm-prod", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    variant = data["variants"][0]
    assert variant["fallbacks_in_use"] == ["ml.g6.48xlarge", "ml.p4d.24xlarge"]
    assert [(p["priority"], p["instance_type"], p["model_name"], p["instances"]) for p in variant["pools"]] == [
        (1, "ml.g6e.48xlarge", "llm-70b", 1),
        (2, "ml.g6.48xlarge", "llm-70b-g6", 2),
        (3, "ml.p4d.24xlarge", "llm-70b-int4", 1),
    ]
    assert data["last_modified"] == "2026-11-29T10:00:00+00:00"
    assert data["pending"] is None and data["components"] == []


def test_pending_deployment(stub: Stubber, run_cli: Any) -> None:
    _describe(stub, s.PENDING_ENDPOINT, s.ONE_POOL_CONFIG, s.THREE_POOLS_CONFIG)
    result = run_cli("status", "llm-prod")
    assert result.code == 0, result.err
    out = result.out
    assert "Endpoint llm-prod: Updating" in out
    assert "Pending deployment to config llm-prod-config-2 (started 2026-11-29 10:00:00 UTC)" in out
    pending = out.split("Pending deployment", 1)[1]
    assert "Variant AllTraffic: 1 instance (desired 4)" in pending
    assert "stage Creating: Launching instances (since 2026-11-29 10:00:00 UTC)" in pending
    rows = [line.split()[:4] for line in pending.splitlines() if "ml." in line and "fallback pools" not in line]
    assert rows == [["1", "ml.g6e.48xlarge", "llm-70b", "1"], ["2", "ml.g6.48xlarge", "llm-70b-g6", "(override)"], ["3", "ml.p4d.24xlarge", "llm-70b-int4", "(override)"]]

    _describe(stub, s.PENDING_ENDPOINT, s.ONE_POOL_CONFIG, s.THREE_POOLS_CONFIG)
    data = json.loads(run_cli("status", "llm-prod", "--json").out)
    assert data["pending"]["config_name"] == "llm-prod-config-2"
    assert [p["instances"] for p in data["pending"]["variants"][0]["pools"]] == [1, 0, 0]
    assert data["pending"]["variants"][0]["stages"][0]["status"] == "Creating"


def test_inference_component_endpoint_shows_copies_per_type(stub: Stubber, run_cli: Any) -> None:
    _describe(stub, s.IC_ENDPOINT, s.IC_CONFIG)
    stub.add_response("list_inference_components", s.IC_LIST, {"EndpointNameEquals": "my-heterogeneous-endpoint"})
    stub.add_response("describe_inference_component", s.IC_DESCRIBED, {"InferenceComponentName": "my-ic"})
    result = run_cli("status", "my-heterogeneous-endpoint")
    assert result.code == 0, result.err
    section = result.out.split("Inference components (copies per instance type):", 1)[1].splitlines()
    assert section[2].split() == ["my-ic", "InService", "primary", "4/4", "ml.p5.48xlarge", "my-model-p5-optimized", "3"]
    assert section[3].split() == ["ml.g6.48xlarge", "my-model-g6-optimized", "1"]
    # the variant has no model of its own: pools show no model
    rows = [line.split() for line in result.out.split("Inference components")[0].splitlines() if line.startswith("  ") and line.split()[0] in "12"]
    assert rows == [["1", "ml.p5.48xlarge", "-", "1", "preferred"], ["2", "ml.g6.48xlarge", "-", "1", "fallback", "in", "use"]]


def test_single_type_and_serverless_variants(stub: Stubber, run_cli: Any) -> None:
    cfg = s.config(
        "two-variants",
        [
            {"VariantName": "gpu", "ModelName": "m", "InitialInstanceCount": 1, "InstanceType": "ml.g5.2xlarge"},
            {"VariantName": "cheap", "ModelName": "m", "ServerlessConfig": {"MemorySizeInMB": 4096, "MaxConcurrency": 5}},
        ],
    )
    live = [
        {"VariantName": "gpu", "CurrentWeight": 1.0, "CurrentInstanceCount": 1, "DesiredInstanceCount": 1},
        {"VariantName": "cheap", "CurrentWeight": 1.0, "CurrentServerlessConfig": {"MemorySizeInMB": 4096, "MaxConcurrency": 5}},
    ]
    _describe(stub, s.endpoint("mixed", "two-variants", live), cfg)
    result = run_cli("status", "mixed")
    assert result.code == 0, result.err
    assert "Variant gpu: 1 instance, weight 1, routing default (RANDOM), single instance type, no fallback pools" in result.out
    assert "Variant cheap: serverless (MemorySizeInMB 4096, MaxConcurrency 5)" in result.out


def test_watch_refreshes_until_ctrl_c(stub: Stubber, sm: Any) -> None:
    import io

    from ops_support import NOW, StubClients
    from sagemaker_pools.ops.cli import main
    from sagemaker_pools.ops.context import Context

    for _ in range(2):
        _describe(stub, s.ONE_POOL_ENDPOINT, s.ONE_POOL_CONFIG)
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:
            raise KeyboardInterrupt

    out = io.StringIO()
    ctx = Context(clients=StubClients(sm), out=out, err=io.StringIO(), sleep=sleep, now=lambda: NOW)
    assert main(["status", "llm-prod", "--watch", "--interval", "3"], context=ctx) == 0
    assert sleeps == [3.0, 3.0]
    assert out.getvalue().count("Endpoint llm-prod: InService") == 2
    assert "(refreshed 2026-11-29 10:15:00 UTC; every 3 s; Ctrl-C to stop)" in out.getvalue()


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (
            "ValidationException",
            'Could not find endpoint "arn:aws:sagemaker:us-east-1:123456789012:endpoint/nope".',
            'sagemaker-pools: error: endpoint not found: Could not find endpoint "arn:aws:sagemaker:us-east-1:123456789012:endpoint/nope".',
        ),
        (
            "ThrottlingException",
            "Rate exceeded",
            "sagemaker-pools: error: throttled: AWS kept refusing DescribeEndpoint with ThrottlingException (Rate exceeded) "
            "for all 3 attempts (botocore standard retry mode); wait a minute and retry, or raise --max-attempts",
        ),
        (
            "AccessDeniedException",
            "User: arn:aws:iam::123456789012:user/dev is not authorized to perform: sagemaker:DescribeEndpoint",
            "sagemaker-pools: error: access denied: DescribeEndpoint: User: arn:aws:iam::123456789012:user/dev is not "
            "authorized to perform: sagemaker:DescribeEndpoint (the caller needs sagemaker:DescribeEndpoint)",
        ),
    ],
)
def test_failures_are_one_line(stub: Stubber, run_cli: Any, code: str, message: str, expected: str) -> None:
    stub.add_client_error("describe_endpoint", service_error_code=code, service_message=message, http_status_code=400)
    result = run_cli("status", "nope")
    assert result.code == 1
    assert result.out == ""
    assert result.err == expected + "\n"


def test_failure_of_the_second_call_is_one_line_too(stub: Stubber, run_cli: Any) -> None:
    stub.add_response("describe_endpoint", s.ONE_POOL_ENDPOINT, {"EndpointName": "llm-prod"})
    stub.add_client_error("describe_endpoint_config", service_error_code="AccessDeniedException", service_message="denied")
    result = run_cli("status", "llm-prod")
    assert (result.code, result.err) == (
        1,
        "sagemaker-pools: error: access denied: DescribeEndpointConfig: denied (the caller needs sagemaker:DescribeEndpointConfig)\n",
    )


def test_deleted_config_is_a_note_not_a_failure(stub: Stubber, run_cli: Any) -> None:
    stub.add_response("describe_endpoint", s.ONE_POOL_ENDPOINT, {"EndpointName": "llm-prod"})
    stub.add_client_error(
        "describe_endpoint_config",
        service_error_code="ValidationException",
        service_message='Could not find endpoint configuration "llm-prod-config-1".',
    )
    result = run_cli("status", "llm-prod")
    assert result.code == 0, result.err
    assert "note: endpoint configuration llm-prod-config-1 no longer exists" in result.out
    row = next(line for line in result.out.splitlines() if "ml.g6e.48xlarge" in line)
    assert row.split() == ["?", "ml.g6e.48xlarge", "-", "2", "not", "in", "config"]
    assert "single instance type" not in result.out
