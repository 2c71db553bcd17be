"""``sagemaker-pools migrate``: the CreateEndpointConfig request, the PooledEndpoint code, refusals, --apply."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import ops_samples as s
import pytest
from botocore.stub import ANY, Stubber
from botocore.validate import validate_parameters
from ops_support import NOW, not_managed
from support.contract import check_request  # type: ignore[import-not-found]

from sagemaker_pools.ops.errors import OpsError
from sagemaker_pools.ops.migrate import MigrateOptions, build_plan
from sagemaker_pools.ops.stack_owner import StackOwnership

NEW = "my-config-pools-20261129101500"
FALLBACKS = ("--fallback", "ml.g6.48xlarge", "--fallback", "ml.p4d.24xlarge")


def _live(
    stub: Stubber, cfn_stub: Stubber, cfg: dict[str, Any], endpoint: dict[str, Any] | None = None, tags: dict[str, Any] | None = None
) -> None:
    """The live endpoint, its config and tags, and CloudFormation's answer that no stack owns the endpoint."""
    endpoint = endpoint or s.endpoint("my-endpoint", cfg["EndpointConfigName"], [s.live_variant({"ml.g6e.48xlarge": 3}, name="primary")])
    stub.add_response("describe_endpoint", endpoint, {"EndpointName": endpoint["EndpointName"]})
    stub.add_response("describe_endpoint_config", cfg, {"EndpointConfigName": cfg["EndpointConfigName"]})
    stub.add_response("list_tags", tags if tags is not None else s.SINGLE_TAGS, {"ResourceArn": cfg["EndpointConfigArn"]})
    not_managed(cfn_stub, endpoint["EndpointArn"])


def _json(run_cli: Any, *args: str) -> dict[str, Any]:
    result = run_cli("migrate", "my-endpoint", *args, "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)  # type: ignore[no-any-return]


EXPECTED_REQUEST = {
    "EndpointConfigName": NEW,
    "ProductionVariants": [
        {
            "VariantName": "primary",
            "ModelName": "my-llm",
            "InitialInstanceCount": 2,
            "InitialVariantWeight": 1.0,
            "ModelDataDownloadTimeoutInSeconds": 1800,
            "ContainerStartupHealthCheckTimeoutInSeconds": 900,
            "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
            "InstancePools": [
                {"InstanceType": "ml.g6e.48xlarge", "Priority": 1},
                {"InstanceType": "ml.g6.48xlarge", "Priority": 2},
                {"InstanceType": "ml.p4d.24xlarge", "Priority": 3},
            ],
            "VariantInstanceProvisionTimeoutInSeconds": 1200,
        }
    ],
    "Tags": [{"Key": "team", "Value": "ml-platform"}, {"Key": "cost-center", "Value": "4711"}],
}


def test_request_replaces_instance_type_with_pools(stub: Stubber, cfn_stub: Stubber, run_cli: Any, sm: Any) -> None:
    _live(stub, cfn_stub, s.SINGLE_CONFIG)
    data = _json(run_cli, *FALLBACKS)
    request = data["create_endpoint_config"]
    assert request == EXPECTED_REQUEST
    assert data["update_endpoint"] == {"EndpointName": "my-endpoint", "EndpointConfigName": NEW, "RetainAllVariantProperties": True}
    # the real API contract: botocore's validator and the stricter checks (enums, maxima, patterns)
    model = sm.meta.service_model
    validate_parameters(request, model.operation_model("CreateEndpointConfig").input_shape)
    validate_parameters(data["update_endpoint"], model.operation_model("UpdateEndpoint").input_shape)
    assert check_request("sagemaker", "CreateEndpointConfig", request) == []
    assert check_request("sagemaker", "UpdateEndpoint", data["update_endpoint"]) == []
    assert data["pools"] == [
        {"instance_type": "ml.g6e.48xlarge", "priority": 1, "model": "my-llm"},
        {"instance_type": "ml.g6.48xlarge", "priority": 2, "model": "my-llm"},
        {"instance_type": "ml.p4d.24xlarge", "priority": 3, "model": "my-llm"},
    ]
    assert data["code_gaps"] == []
    compile(data["pooled_endpoint_code"], "generated.py", "exec")


def test_text_output_has_the_request_and_the_code(stub: Stubber, cfn_stub: Stubber, run_cli: Any) -> None:
    _live(stub, cfn_stub, s.SINGLE_CONFIG)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--model", "ml.p4d.24xlarge=my-llm-int4", "--provision-timeout", "900")
    assert result.code == 0, result.err
    out = result.out
    assert out.startswith(f"Migrate endpoint my-endpoint, variant primary: config my-config -> {NEW}\n")
    assert "provision timeout 900 s; live instance count kept (RetainAllVariantProperties)" in out
    request_text = out.split("# (a)", 1)[1].split("\n", 1)[1].split("\n# then UpdateEndpoint")[0]
    request = json.loads(request_text)
    assert request["ProductionVariants"][0]["InstancePools"][2] == {
        "InstanceType": "ml.p4d.24xlarge",
        "Priority": 3,
        "ModelNameOverride": "my-llm-int4",
    }
    assert request["ProductionVariants"][0]["VariantInstanceProvisionTimeoutInSeconds"] == 900
    code = out.split("# (b) the equivalent PooledEndpoint (aws-cdk, sagemaker_pools)\n", 1)[1]
    compile(code, "generated.py", "exec")
    assert 'model_p4d_24xlarge = PoolModel.from_model_name(self, "ModelP4d24xlarge", "my-llm-int4")' in code
    assert 'InstancePool(instance_type="ml.p4d.24xlarge", model=model_p4d_24xlarge),  # priority 3: fallback' in code
    assert "provision_timeout=Duration.seconds(900)," in code
    assert result.err == ""


def test_existing_pools_keep_their_priorities_and_overrides(stub: Stubber, cfn_stub: Stubber, run_cli: Any) -> None:
    cfg = copy.deepcopy(s.THREE_POOLS_CONFIG)
    cfg["ProductionVariants"][0]["InstancePools"] = [
        {"InstanceType": "ml.g6.48xlarge", "Priority": 3, "ModelNameOverride": "llm-70b-g6"},
        {"InstanceType": "ml.g6e.48xlarge", "Priority": 1},
    ]
    endpoint = s.endpoint("my-endpoint", cfg["EndpointConfigName"], [s.live_variant({"ml.g6e.48xlarge": 2})])
    _live(stub, cfn_stub, cfg, endpoint, {"Tags": []})
    data = _json(run_cli, "--fallback", "ml.p4d.24xlarge")
    assert data["create_endpoint_config"]["ProductionVariants"][0]["InstancePools"] == [
        {"InstanceType": "ml.g6e.48xlarge", "Priority": 1},
        {"InstanceType": "ml.g6.48xlarge", "Priority": 3, "ModelNameOverride": "llm-70b-g6"},
        {"InstanceType": "ml.p4d.24xlarge", "Priority": 4},
    ]
    assert "Tags" not in data["create_endpoint_config"]
    assert "InstancePool(instance_type=\"ml.g6.48xlarge\", model=model_g6_48xlarge, priority=3)" in data["pooled_endpoint_code"]


def test_every_config_field_is_copied_and_code_gaps_are_named(stub: Stubber, cfn_stub: Stubber, run_cli: Any, sm: Any) -> None:
    cfg = s.config(
        "cpu-config",
        [
            {
                "VariantName": "AllTraffic",
                "ModelName": "xgb",
                "InitialInstanceCount": 2,
                "InstanceType": "ml.c5.2xlarge",
                "VolumeSizeInGB": 30,
                "EnableSSMAccess": True,
            }
        ],
        KmsKeyId="arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        DataCaptureConfig=s.DATA_CAPTURE,
        MetricsConfig={"EnableEnhancedMetrics": True, "MetricPublishFrequencyInSeconds": 60},
        EnableNetworkIsolation=True,
    )
    tags = {"Tags": [{"Key": "aws:cloudformation:stack-name", "Value": "legacy"}, {"Key": "team", "Value": "fraud"}]}
    _live(stub, cfn_stub, cfg, s.endpoint("my-endpoint", "cpu-config", [s.live_variant({"ml.c5.2xlarge": 2})]), tags)
    result = run_cli("migrate", "my-endpoint", "--fallback", "ml.c6i.2xlarge", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    request = data["create_endpoint_config"]
    for key in ("KmsKeyId", "DataCaptureConfig", "MetricsConfig", "EnableNetworkIsolation"):
        assert request[key] == cfg[key]
    assert request["Tags"] == [{"Key": "team", "Value": "fraud"}]  # aws: tags cannot be set by users
    assert request["ProductionVariants"][0]["VolumeSizeInGB"] == 30
    assert check_request("sagemaker", "CreateEndpointConfig", request) == []
    assert data["pooled_endpoint_code"] is None
    assert data["code_gaps"] == [
        "DataCaptureConfig",
        "MetricsConfig",
        "EnableNetworkIsolation",
        "ProductionVariants[AllTraffic].EnableSSMAccess",
    ]
    assert result.err == (
        "warning: no PooledEndpoint code: it cannot express DataCaptureConfig, MetricsConfig, EnableNetworkIsolation, "
        "ProductionVariants[AllTraffic].EnableSSMAccess\n"
    )
    assert any("not copied: tags reserved for AWS (aws:cloudformation:stack-name)" in n for n in data["notes"])
    # the tag is not the guard: CloudFormation answered that no stack owns the endpoint
    assert data["cloudformation"]["state"] == "not_managed"


REFUSALS = [
    (
        s.with_variant(s.SINGLE_CONFIG, InstanceType=None, InitialInstanceCount=None, ServerlessConfig={"MemorySizeInMB": 2048, "MaxConcurrency": 5}),
        FALLBACKS,
        1,
        "variant primary is serverless (ServerlessConfig): instance pools need provisioned instances",
    ),
    (
        s.with_variant(s.SINGLE_CONFIG, ModelName=None),
        FALLBACKS,
        1,
        "variant primary hosts inference components (it has no ModelName)",
    ),
    (s.SINGLE_CONFIG, ("--fallback", "ml.g6.48xlarg"), 2, "unknown instance type: --fallback ml.g6.48xlarg: got 'ml.g6.48xlarg'; allowed: did you mean ml.g6.48xlarge"),
    (s.SINGLE_CONFIG, ("--fallback", "ml.g6e.48xlarge"), 2, "--fallback ml.g6e.48xlarge: the variant already has a pool of that type"),
    (
        s.SINGLE_CONFIG,
        ("--fallback", "ml.g6.48xlarge", "--fallback", "ml.p4d.24xlarge", "--fallback", "ml.p5.48xlarge", "--fallback", "ml.g5.48xlarge", "--fallback", "ml.g6e.24xlarge"),
        1,
        "too many pools: the variant would have 6 (ml.g6e.48xlarge, ml.g6.48xlarge, ml.p4d.24xlarge, ml.p5.48xlarge, ml.g5.48xlarge, ml.g6e.24xlarge); SageMaker allows at most 5",
    ),
    (s.SINGLE_CONFIG, (*FALLBACKS, "--model", "ml.p5.48xlarge=x"), 2, "--model ml.p5.48xlarge=x: ml.p5.48xlarge is not one of the pools"),
    (s.SINGLE_CONFIG, (*FALLBACKS, "--provision-timeout", "100"), 2, "--provision-timeout 100: must be 300 to 3600 seconds"),
    (s.SINGLE_CONFIG, (*FALLBACKS, "--variant", "canary"), 2, "--variant canary: config my-config has variants primary"),
    (
        s.config(
            "cpu-config",
            [{"VariantName": "AllTraffic", "ModelName": "xgb", "InitialInstanceCount": 1, "InstanceType": "ml.c5.2xlarge"}],
            KmsKeyId="arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        ),
        ("--fallback", "ml.c5d.2xlarge"),
        1,
        "cannot reproduce KmsKeyId with fallback ml.c5d.2xlarge: the config sets KmsKeyId for an EBS ML storage volume, "
        "but ml.c5d.2xlarge has NVMe instance storage",
    ),
]


@pytest.mark.parametrize(("cfg", "args", "code", "message"), REFUSALS, ids=[r[3][:40] for r in REFUSALS])
def test_refusals_name_the_reason(stub: Stubber, cfn_stub: Stubber, run_cli: Any, cfg: dict[str, Any], args: tuple[str, ...], code: int, message: str) -> None:
    _live(stub, cfn_stub, cfg)
    result = run_cli("migrate", "my-endpoint", *args)
    assert result.code == code
    assert result.out == ""
    assert result.err.startswith("sagemaker-pools: error: " + message), result.err
    assert result.err.count("\n") == 1


def test_bad_model_override_is_refused_before_any_call(run_cli: Any) -> None:
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--model", "ml.g6.48xlarge")
    assert (result.code, result.err) == (
        2,
        "sagemaker-pools: error: --model ml.g6.48xlarge: expected TYPE=MODEL, e.g. ml.g6.48xlarge=my-llm-int4\n",
    )


def test_two_variants_need_a_choice(stub: Stubber, cfn_stub: Stubber, run_cli: Any) -> None:
    cfg = copy.deepcopy(s.SINGLE_CONFIG)
    canary = dict(cfg["ProductionVariants"][0], VariantName="canary", InitialVariantWeight=0.1)
    cfg["ProductionVariants"].append(canary)
    _live(stub, cfn_stub, cfg)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS)
    assert (result.code, result.err) == (
        2,
        "sagemaker-pools: error: config my-config has 2 production variants (primary, canary): choose one with --variant\n",
    )
    _live(stub, cfn_stub, cfg)
    data = _json(run_cli, *FALLBACKS, "--variant", "canary")
    primary, migrated = data["create_endpoint_config"]["ProductionVariants"]
    assert primary == s.SINGLE_CONFIG["ProductionVariants"][0]  # untouched
    assert migrated["VariantName"] == "canary" and "InstanceType" not in migrated and len(migrated["InstancePools"]) == 3
    assert data["code_gaps"] == ["ProductionVariants (2 variants; PooledEndpoint has one)"]


def test_a_field_create_does_not_accept_is_refused() -> None:
    live = dict(s.SINGLE_CONFIG, FutureFeature={"Enabled": True})
    members = {"EndpointConfigName", "ProductionVariants", "Tags"}
    with pytest.raises(OpsError) as caught:
        build_plan(s.SINGLE_ENDPOINT, live, [], MigrateOptions(fallbacks=("ml.g6.48xlarge",)), create_members=members,
                   cloudformation=StackOwnership(s.SINGLE_ENDPOINT["EndpointArn"], "not_managed"), now=NOW)
    assert caught.value.message == (
        "cannot reproduce endpoint config my-config faithfully: DescribeEndpointConfig returned FutureFeature, which "
        "CreateEndpointConfig does not accept (upgrade boto3, or migrate by hand)"
    )


# -- --apply ------------------------------------------------------------------------------------


def _updating(pools: dict[str, int], stage: str = "Creating") -> dict[str, Any]:
    return s.endpoint(
        "my-endpoint",
        "my-config",
        [s.live_variant({"ml.g6e.48xlarge": 3}, name="primary")],
        status="Updating",
        PendingDeploymentSummary={
            "EndpointConfigName": NEW,
            "StartTime": s.T1,
            "ProductionVariants": [
                {
                    "VariantName": "primary",
                    "InstancePools": [{"InstanceType": t, "CurrentInstanceCount": n} for t, n in pools.items()],
                    "VariantStatus": [{"Status": stage, "StatusMessage": "Launching instances"}],
                }
            ],
        },
    )


DONE = s.endpoint("my-endpoint", NEW, [s.live_variant({"ml.g6e.48xlarge": 2, "ml.g6.48xlarge": 1, "ml.p4d.24xlarge": 0}, name="primary")])


RESOURCE_ID = "endpoint/my-endpoint/variant/primary"
WHERE = {"ServiceNamespace": "sagemaker", "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"}


def _no_scaling(aas_stub: Stubber) -> None:
    aas_stub.add_response("describe_scalable_targets", {"ScalableTargets": []}, {"ResourceIds": [RESOURCE_ID], **WHERE})


@pytest.fixture
def applied(stub: Stubber, cfn_stub: Stubber, aas_stub: Stubber) -> Iterator[Stubber]:
    """The live endpoint, then the CreateEndpointConfig and UpdateEndpoint calls --apply must make."""
    _live(stub, cfn_stub, s.SINGLE_CONFIG)
    _no_scaling(aas_stub)
    stub.add_response("create_endpoint_config", {"EndpointConfigArn": s.arn("endpoint-config", NEW)}, EXPECTED_REQUEST)
    stub.add_response(
        "update_endpoint",
        {"EndpointArn": s.arn("endpoint", "my-endpoint")},
        {"EndpointName": "my-endpoint", "EndpointConfigName": NEW, "RetainAllVariantProperties": True},
    )
    yield stub


def test_apply_creates_updates_waits_and_shows_the_pools(applied: Stubber, run_cli: Any) -> None:
    applied.add_response("describe_endpoint", _updating({"ml.g6e.48xlarge": 0}), {"EndpointName": "my-endpoint"})
    applied.add_response("describe_endpoint", _updating({"ml.g6e.48xlarge": 2, "ml.g6.48xlarge": 1}, "Baking"), {"EndpointName": "my-endpoint"})
    applied.add_response("describe_endpoint", DONE, {"EndpointName": "my-endpoint"})
    new_config = s.config(NEW, EXPECTED_REQUEST["ProductionVariants"])  # type: ignore[arg-type]
    applied.add_response("describe_endpoint", DONE, {"EndpointName": "my-endpoint"})
    applied.add_response("describe_endpoint_config", new_config, {"EndpointConfigName": NEW})
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--poll-interval", "0.01")
    assert result.code == 0, result.err
    assert result.sleeps == [0.01, 0.01]
    progress = result.err.splitlines()
    assert progress[:2] == [f"created endpoint config {NEW}", f"updating endpoint my-endpoint to {NEW} (instance count retained)"]
    assert progress[2].endswith("] Updating | primary: Creating (Launching instances) | ml.g6e.48xlarge 0")
    assert progress[3].endswith("] Updating | primary: Baking (Launching instances) | ml.g6e.48xlarge 2, ml.g6.48xlarge 1")
    assert progress[4].endswith("] InService")
    final = result.out.split("Endpoint my-endpoint: InService", 1)[1]
    assert "fallback pools in use: ml.g6.48xlarge (1): 1 of 3 instances are not on the preferred type ml.g6e.48xlarge" in final


def test_apply_reports_a_rollback(applied: Stubber, run_cli: Any) -> None:
    rolled_back = s.endpoint(
        "my-endpoint", "my-config", [s.live_variant({"ml.g6e.48xlarge": 3}, name="primary")], FailureReason="Insufficient capacity for ml.p4d.24xlarge"
    )
    applied.add_response("describe_endpoint", _updating({"ml.g6e.48xlarge": 0}), {"EndpointName": "my-endpoint"})
    applied.add_response("describe_endpoint", rolled_back, {"EndpointName": "my-endpoint"})
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        f"sagemaker-pools: error: the update rolled back: endpoint my-endpoint is InService on config my-config, not {NEW}; "
        "reason: Insufficient capacity for ml.p4d.24xlarge"
    )
    assert result.sleeps == [30.0]


def test_apply_reports_a_failure(applied: Stubber, run_cli: Any) -> None:
    failed = s.endpoint("my-endpoint", "my-config", [], status="Failed", FailureReason="Model container failed the ping health check")
    failed.pop("ProductionVariants")
    applied.add_response("describe_endpoint", failed, {"EndpointName": "my-endpoint"})
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        "sagemaker-pools: error: the update failed: endpoint my-endpoint is Failed: Model container failed the ping health check"
    )


def test_apply_gives_up_after_the_wait_timeout(applied: Stubber, run_cli: Any) -> None:
    for _ in range(3):
        applied.add_response("describe_endpoint", _updating({"ml.g6e.48xlarge": 0}), {"EndpointName": "my-endpoint"})
    clock = iter([0.0, 0.0, 50.0, 100.0])
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--wait-timeout", "90", monotonic=lambda: next(clock))
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        "sagemaker-pools: error: gave up waiting after 100 s: endpoint my-endpoint is still Updating; the update goes on "
        "(watch it with: sagemaker-pools status my-endpoint --watch)"
    )


def test_apply_without_waiting(applied: Stubber, run_cli: Any) -> None:
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--no-wait")
    assert result.code == 0, result.err
    assert result.sleeps == []


def test_json_apply_prints_one_document_with_the_plan_and_the_endpoint_after(applied: Stubber, run_cli: Any) -> None:
    applied.add_response("describe_endpoint", DONE, {"EndpointName": "my-endpoint"})
    new_config = s.config(NEW, EXPECTED_REQUEST["ProductionVariants"])  # type: ignore[arg-type]
    applied.add_response("describe_endpoint", DONE, {"EndpointName": "my-endpoint"})
    applied.add_response("describe_endpoint_config", new_config, {"EndpointConfigName": NEW})
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--json")
    assert result.code == 0, result.err
    document = json.loads(result.out)  # one document: anything after it would fail to parse
    assert document["create_endpoint_config"] == EXPECTED_REQUEST
    assert document["applied"]["config_name"] == NEW and document["applied"]["status"] == "InService"
    assert document["applied"]["variants"][0]["fallbacks_in_use"] == ["ml.g6.48xlarge"]
    assert "error" not in document and "restore_autoscaling" not in document
    assert result.err.splitlines()[0] == f"created endpoint config {NEW}"  # progress stays on stderr


def test_json_apply_without_waiting_has_no_endpoint_state(applied: Stubber, run_cli: Any) -> None:
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--json", "--no-wait")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["applied"] is None and document["endpoint"] == "my-endpoint"


def test_json_apply_that_fails_prints_the_plan_and_the_error(applied: Stubber, run_cli: Any) -> None:
    failed = s.endpoint("my-endpoint", "my-config", [], status="Failed", FailureReason="Model container failed the ping health check")
    failed.pop("ProductionVariants")
    applied.add_response("describe_endpoint", failed, {"EndpointName": "my-endpoint"})
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--json")
    assert result.code == 1
    document = json.loads(result.out)
    message = "the update failed: endpoint my-endpoint is Failed: Model container failed the ping health check"
    assert document["error"] == message and "applied" not in document
    assert document["create_endpoint_config"] == EXPECTED_REQUEST
    assert result.err.splitlines()[-1] == f"sagemaker-pools: error: {message}"


def test_json_apply_whose_call_is_refused_says_so_in_the_document(stub: Stubber, cfn_stub: Stubber, aas_stub: Stubber, run_cli: Any) -> None:
    _live(stub, cfn_stub, s.SINGLE_CONFIG)
    _no_scaling(aas_stub)
    stub.add_client_error("create_endpoint_config", service_error_code="ResourceLimitExceeded", service_message="too many configs")
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--json")
    assert result.code == 1
    document = json.loads(result.out)
    assert "ResourceLimitExceeded" in document["error"] and "applied" not in document
    assert result.err.splitlines()[-1] == f"sagemaker-pools: error: {document['error']}"


def test_apply_refuses_an_endpoint_that_is_not_in_service(stub: Stubber, cfn_stub: Stubber, run_cli: Any) -> None:
    _live(stub, cfn_stub, s.SINGLE_CONFIG, s.endpoint("my-endpoint", "my-config", [s.live_variant({"ml.g6e.48xlarge": 3}, name="primary")], status="Updating"))
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 1
    assert "error: endpoint my-endpoint is Updating: UpdateEndpoint needs it InService" in result.err


def test_apply_keeps_the_deployment_config_and_can_reset_the_count(stub: Stubber, cfn_stub: Stubber, aas_stub: Stubber, run_cli: Any) -> None:
    endpoint = dict(
        s.SINGLE_ENDPOINT,
        LastDeploymentConfig={
            "RollingUpdatePolicy": {
                "MaximumBatchSize": {"Type": "CAPACITY_PERCENT", "Value": 50},
                "WaitIntervalInSeconds": 600,
            }
        },
    )
    _live(stub, cfn_stub, s.SINGLE_CONFIG, endpoint)
    _no_scaling(aas_stub)
    stub.add_response(
        "create_endpoint_config",
        {"EndpointConfigArn": s.arn("endpoint-config", NEW)},
        {"EndpointConfigName": NEW, "ProductionVariants": ANY, "Tags": ANY},
    )
    stub.add_response(
        "update_endpoint",
        {"EndpointArn": s.arn("endpoint", "my-endpoint")},
        {"EndpointName": "my-endpoint", "EndpointConfigName": NEW, "RetainDeploymentConfig": True},
    )
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--no-wait", "--reset-instance-count")
    assert result.code == 0, result.err
    assert "instance count reset to InitialInstanceCount" in result.out
    assert "deployment=DeploymentPolicy" in result.out  # the code says what it does not reproduce
