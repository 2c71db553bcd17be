"""Data capture and shadow variants on a pooled endpoint: what reaches the template, the grants,
the retained-properties exclusion, the dashboard, the quality bars (cfn-lint, the API contract,
cdk-nag, deploy order), tokens, and every new rule."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import cfnlint.api
import pytest
from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3

from sagemaker_pools import (
    AsyncInference,
    CapacitySize,
    ContainerImage,
    DataCapture,
    DeploymentPolicy,
    InstancePool,
    InstanceScaling,
    ModelData,
    PoolAlarms,
    PoolDashboard,
    PooledEndpoint,
    PoolModel,
    ShadowVariant,
)
from sagemaker_pools.ops.gate.capture import capture_location
from support.contract import template_problems
from support.deploy_order import deploy_order_problems, name_references
from support.rules import refused_in_new_stack, unreached_rules
from support.synth import nag_report, new_stack, only, resource_types, resources, template_of

G6E, G6 = "ml.g6e.48xlarge", "ml.g6.48xlarge"
IMAGE = ContainerImage.from_image_uri("763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128")


def _llm(
    stack: cdk.Stack,
    *,
    data_capture: DataCapture | None = None,
    shadow: bool = False,
    endpoint_name: str | None = "llm",
    **props: Any,
) -> PooledEndpoint:
    """The primary build on g6e with an INT4 fallback build on g6, optionally shadowed by the INT4 build on one g6."""
    artifacts = s3.Bucket.from_bucket_name(stack, "Artifacts", "my-artifacts")
    base = PoolModel(stack, "Base", image=IMAGE, model_data=ModelData.from_s3_prefix(artifacts, "tp8/"))
    int4 = PoolModel(stack, "Int4", image=IMAGE, model_data=ModelData.from_s3_prefix(artifacts, "int4/"))
    return PooledEndpoint(
        stack,
        "Llm",
        model=base,
        pools=[InstancePool(instance_type=G6E, max_concurrency=16), InstancePool(instance_type=G6, model=int4, max_concurrency=8)],
        data_capture=data_capture,
        shadow=ShadowVariant(model=int4, instance_type=G6, variant_name="shadow-g6", sampling_percentage=50) if shadow else None,
        endpoint_name=endpoint_name,
        **props,
    )


def _config(template: dict[str, Any]) -> dict[str, Any]:
    return only(template, "AWS::SageMaker::EndpointConfig")


def _endpoint(template: dict[str, Any]) -> dict[str, Any]:
    return only(template, "AWS::SageMaker::Endpoint")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _policy_grants(template: dict[str, Any], policy_prefix: str) -> set[tuple[str, str]]:
    """``{(action, resource as JSON)}`` that the IAM policies whose logical id starts with ``policy_prefix`` allow."""
    return {
        (action, json.dumps(resource, sort_keys=True))
        for key, policy in resources(template, "AWS::IAM::Policy").items()
        if key.startswith(policy_prefix)
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        for action in _list(statement["Action"])
        for resource in _list(statement["Resource"])
    }


# -- data capture ------------------------------------------------------------------------------


def test_capture_with_a_created_bucket_renders_the_config_and_a_retained_private_bucket() -> None:
    stack = new_stack()
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    _llm(stack, data_capture=DataCapture(kms_key=key, sampling_percentage=20, capture_output=False, csv_content_types=["text/csv"]))
    template = template_of(stack)
    (bucket_id, bucket) = next(iter(resources(template, "AWS::S3::Bucket").items()))
    assert bucket_id.startswith("LlmCaptureBucket")
    assert bucket["DeletionPolicy"] == "Retain"
    encryption = bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert encryption["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    assert bucket["Properties"]["PublicAccessBlockConfiguration"]["BlockPublicPolicy"] is True
    assert _config(template)["DataCaptureConfig"] == {
        "EnableCapture": True,
        "InitialSamplingPercentage": 20,
        "DestinationS3Uri": {"Fn::Join": ["", ["s3://", {"Ref": bucket_id}, "/data-capture"]]},
        "KmsKeyId": {"Fn::GetAtt": ["Key961B73FD", "Arn"]},
        "CaptureOptions": [{"CaptureMode": "Input"}],
        "CaptureContentTypeHeader": {"JsonContentTypes": ["application/json"], "CsvContentTypes": ["text/csv"]},
    }


def test_capture_into_the_users_bucket_makes_no_bucket_and_points_gate_at_the_variant_folders() -> None:
    stack = new_stack()
    given = s3.Bucket.from_bucket_name(stack, "Given", "my-capture-bucket")
    endpoint = _llm(stack, data_capture=DataCapture(bucket=given, prefix="llm/capture/"), shadow=True)
    template = template_of(stack)
    assert "AWS::S3::Bucket" not in resource_types(stack)
    assert _config(template)["DataCaptureConfig"]["DestinationS3Uri"] == "s3://my-capture-bucket/llm/capture"
    assert endpoint.capture_destination == "s3://my-capture-bucket/llm/capture"
    # gate --from-capture reads SOURCE/ENDPOINT/VARIANT/: production's and the shadow's folders
    assert capture_location(endpoint.capture_destination, "llm", "AllTraffic") == "s3://my-capture-bucket/llm/capture/llm/AllTraffic/"
    assert capture_location(endpoint.capture_destination, "llm", "shadow-g6") == "s3://my-capture-bucket/llm/capture/llm/shadow-g6/"


def test_every_serving_model_may_write_captured_data_and_use_the_key() -> None:
    stack = new_stack()
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    _llm(stack, data_capture=DataCapture(kms_key=key), shadow=True)
    template = template_of(stack)
    (bucket_id,) = resources(template, "AWS::S3::Bucket")
    objects = json.dumps({"Fn::Join": ["", [{"Fn::GetAtt": [bucket_id, "Arn"]}, "/data-capture/*"]]}, sort_keys=True)
    key_arn = json.dumps({"Fn::GetAtt": ["Key961B73FD", "Arn"]}, sort_keys=True)
    for model in ("Base", "Int4"):  # the variant's model; the fallback pool's, which is also the shadow's
        grants = _policy_grants(template, f"{model}ExecutionRoleDefaultPolicy")
        assert ("s3:PutObject", objects) in grants, model
        assert {("kms:GenerateDataKey", key_arn), ("kms:Decrypt", key_arn)} <= grants, model
        assert not any(action.startswith("s3:") and action != "s3:PutObject" and resource == objects for action, resource in grants)


def test_an_imported_model_gets_a_warning_instead_of_a_grant() -> None:
    stack = new_stack()
    endpoint = PooledEndpoint(
        stack, "Llm", model=PoolModel.from_model_name(stack, "M", "llm"), pools=[InstancePool(instance_type=G6E)], data_capture=DataCapture()
    )
    warnings = [w.entry.data for w in cdk.assertions.Annotations.from_stack(stack).find_warning("*", cdk.assertions.Match.any_value())]
    assert any("llm was imported" in str(w) and "data-capture/" in str(w) for w in warnings)
    assert endpoint.capture_bucket is not None


def test_retained_variant_properties_exclude_the_capture_config() -> None:
    """RetainAllVariantProperties would keep the old DataCaptureConfig on update: it is excluded."""
    with_capture = template_of(_built(lambda s: _llm(s, data_capture=DataCapture())))
    assert _endpoint(with_capture)["RetainAllVariantProperties"] is True
    assert _endpoint(with_capture)["ExcludeRetainedVariantProperties"] == [{"VariantPropertyType": "DataCaptureConfig"}]
    # nothing to exclude without capture, and nothing retained without retain_scaled_capacity
    assert "ExcludeRetainedVariantProperties" not in _endpoint(template_of(_built(lambda s: _llm(s))))
    unretained = _endpoint(template_of(_built(lambda s: _llm(s, data_capture=DataCapture(), retain_scaled_capacity=False))))
    assert "RetainAllVariantProperties" not in unretained and "ExcludeRetainedVariantProperties" not in unretained


def test_enable_capture_false_keeps_the_config_and_captures_nothing() -> None:
    template = template_of(_built(lambda s: _llm(s, data_capture=DataCapture(enable_capture=False))))
    assert _config(template)["DataCaptureConfig"]["EnableCapture"] is False
    assert _endpoint(template)["ExcludeRetainedVariantProperties"] == [{"VariantPropertyType": "DataCaptureConfig"}]


def test_grant_read_capture_lists_the_prefix_and_reads_its_objects() -> None:
    stack = new_stack()
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    given = s3.Bucket.from_bucket_attributes(stack, "Given", bucket_name="my-capture-bucket", encryption_key=key)
    endpoint = _llm(stack, data_capture=DataCapture(bucket=given, prefix="llm/"))
    reader = iam.Role(stack, "Gate", assumed_by=iam.AccountRootPrincipal())
    endpoint.grant_read_capture(reader)
    template = template_of(stack)
    statements = [s for k, p in resources(template, "AWS::IAM::Policy").items() if k.startswith("GateDefaultPolicy") for s in p["Properties"]["PolicyDocument"]["Statement"]]
    by_action = {a: s for s in statements for a in _list(s["Action"])}
    assert by_action["s3:ListBucket"]["Condition"] == {"StringLike": {"s3:prefix": ["llm/*"]}}
    assert "llm/*" in json.dumps(by_action["s3:GetObject"]["Resource"])
    assert "kms:Decrypt" in by_action
    assert "s3:PutObject" not in by_action


# -- shadow variants ----------------------------------------------------------------------------


def test_shadow_variant_renders_one_instance_type_and_weights_for_its_share() -> None:
    template = template_of(_built(lambda s: _llm(s, shadow=True, model_data_download_timeout=Duration.minutes(20))))
    config = _config(template)
    (production,) = config["ProductionVariants"]
    (shadow,) = config["ShadowProductionVariants"]
    assert production["InitialVariantWeight"] == 100
    assert shadow == {
        "VariantName": "shadow-g6",
        "ModelName": {"Fn::GetAtt": [next(k for k in resources(template, "AWS::SageMaker::Model") if k.startswith("Int4")), "ModelName"]},
        "InstanceType": G6,
        "InitialInstanceCount": 1,
        "InitialVariantWeight": 50,  # 50 % of production's requests copied
        "ModelDataDownloadTimeoutInSeconds": 1200,
    }
    assert "InstancePools" not in shadow


def test_without_a_shadow_the_production_variant_keeps_its_default_weight() -> None:
    (production,) = _config(template_of(_built(lambda s: _llm(s))))["ProductionVariants"]
    assert "InitialVariantWeight" not in production


def test_autoscaling_and_alarms_stay_on_production() -> None:
    stack = new_stack()
    endpoint = _llm(stack, shadow=True)
    endpoint.auto_scale(max_capacity=4).scale_on_weighted_utilization(target=0.7)
    PoolAlarms(stack, "Alarms", endpoint=endpoint)
    template = template_of(stack)
    target = only(template, "AWS::ApplicationAutoScaling::ScalableTarget")
    assert target["ResourceId"] == "endpoint/llm/variant/AllTraffic"
    for alarm in resources(template, "AWS::CloudWatch::Alarm").values():
        assert "shadow-g6" not in json.dumps(alarm["Properties"])


def test_dashboard_shows_production_per_instance_type_beside_the_shadow() -> None:
    stack = new_stack()
    endpoint = _llm(stack, shadow=True)
    PoolDashboard(stack, "Dashboard", endpoints=[endpoint])
    body = json.loads(json.dumps(only(template_of(stack), "AWS::CloudWatch::Dashboard")["DashboardBody"]))
    text = body if isinstance(body, str) else "".join(p if isinstance(p, str) else "" for p in body["Fn::Join"][1])
    widgets = json.loads(text)["widgets"]
    graphs = {w["properties"]["title"]: w["properties"]["metrics"] for w in widgets if w["type"] == "metric"}
    latency = graphs["Production vs shadow: model latency p99 (µs)"]
    labels = [line[-1]["label"] for line in latency]
    assert labels == [f"{G6E} p99", f"{G6} p99", f"shadow shadow-g6 ({G6}) p99"]
    def dimensions(line: list[Any]) -> dict[str, str]:
        return dict(zip(line[2:-1:2], line[3:-1:2]))

    assert latency[-1][:2] == ["AWS/SageMaker", "ModelLatency"]
    assert dimensions(latency[-1]) == {"EndpointName": "llm", "VariantName": "shadow-g6"}
    assert dimensions(latency[0]) == {"EndpointName": "llm", "VariantName": "AllTraffic", "InstanceType": G6E}
    errors = [line[-1]["label"] for line in graphs["Production vs shadow: errors (5XX / model)"]]
    assert errors[-2:] == [f"shadow shadow-g6 ({G6}) 5XX", f"shadow shadow-g6 ({G6}) Model"]
    assert not any("shadow" in title.lower() for title in graphs if not title.startswith("Production vs shadow"))


def test_dashboard_of_an_endpoint_without_a_shadow_has_no_shadow_graph() -> None:
    stack = new_stack()
    PoolDashboard(stack, "Dashboard", endpoints=[_llm(stack)])
    assert "Production vs shadow" not in json.dumps(only(template_of(stack), "AWS::CloudWatch::Dashboard"))


def test_metric_shadow_names_the_shadow_variant() -> None:
    stack = new_stack()
    metric = _llm(stack, shadow=True).metric_shadow("ModelLatency", statistic="p99")
    assert metric.dimensions == {"EndpointName": "llm", "VariantName": "shadow-g6"}
    assert metric.statistic == "p99"


def test_a_blue_green_policy_is_kept_with_a_shadow() -> None:
    policy = DeploymentPolicy.canary(canary_size=CapacitySize.instances(1), wait_interval=Duration.minutes(5))
    template = template_of(_built(lambda s: _llm(s, shadow=True, deployment=policy, initial_instance_count=2)))
    assert "BlueGreenUpdatePolicy" in _endpoint(template)["DeploymentConfig"]


# -- the quality bars --------------------------------------------------------------------------


def _full(stack: cdk.Stack, endpoint_name: str | None = "llm") -> None:
    """Data capture with a KMS key, a shadow, autoscaling, alarms and a dashboard."""
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    logs = s3.Bucket.from_bucket_name(stack, "Logs", "my-access-logs")
    endpoint = _llm(stack, data_capture=DataCapture(kms_key=key, sampling_percentage=10, access_logs_bucket=logs), shadow=True, endpoint_name=endpoint_name)
    endpoint.auto_scale(max_capacity=4).scale_on_weighted_utilization(target=0.7)
    PoolAlarms(stack, "Alarms", endpoint=endpoint)
    PoolDashboard(stack, "Dashboard", endpoints=[endpoint])


def _built(build: Callable[[cdk.Stack], object], name: str = "Test") -> cdk.Stack:
    stack = new_stack(name)
    build(stack)
    return stack


@pytest.mark.parametrize("endpoint_name", ["llm", None], ids=["fixed name", "generated name"])
def test_templates_pass_cfn_lint_the_api_contract_and_the_deploy_order(endpoint_name: str | None) -> None:
    template = template_of(_built(lambda s: _full(s, endpoint_name)))
    findings = [f"{m.rule.id} {m.message}" for m in cfnlint.api.lint(json.dumps(template), regions=["us-east-1"]) if m.rule.id[0] in "EW"]
    assert findings == []
    problems = template_problems(template)
    assert any(k for k in problems if "Config" in k)  # the EndpointConfig was checked
    assert {k: v for k, v in problems.items() if v} == {}
    assert deploy_order_problems(template) == []
    if endpoint_name:
        assert any(ref.kind == "endpoint" and ref.name == endpoint_name for ref in name_references(template))


def test_the_contract_check_would_catch_a_bad_capture_or_shadow() -> None:
    """The check above can fail: a sampling percentage of 101 and a shadow without an instance type."""
    template = template_of(_built(lambda s: _full(s)))
    config_id = next(iter(resources(template, "AWS::SageMaker::EndpointConfig")))
    props = template["Resources"][config_id]["Properties"]
    props["DataCaptureConfig"]["InitialSamplingPercentage"] = 101
    props["ShadowProductionVariants"][0]["InstanceType"] = "ml.g6.huge"
    problems = template_problems(template)[config_id]
    assert any("InitialSamplingPercentage" in p for p in problems) and any("InstanceType" in p for p in problems)


def test_cdk_nag_has_no_unacknowledged_finding() -> None:
    report = nag_report(_full)
    assert report["violations"] == []
    for suppressed in report.get("suppressedViolations", []):
        assert len(suppressed.get("reason", "")) > 20, suppressed["ruleName"]


def test_created_bucket_without_access_logs_is_acknowledged_with_the_way_to_log() -> None:
    report = nag_report(lambda s: _llm(s, data_capture=DataCapture()))
    assert report["violations"] == []
    reasons = [v["reason"] for v in report["suppressedViolations"] if v["ruleName"] == "AwsSolutions-S1"]
    assert any("DataCapture(access_logs_bucket=...)" in r for r in reasons)


# -- bad input ------------------------------------------------------------------------------------


def _capture(**props: Any) -> Callable[[cdk.Stack], object]:
    return lambda s: DataCapture(**{k: (v(s) if callable(v) else v) for k, v in props.items()})


def _shadow(**props: Any) -> Callable[[cdk.Stack], object]:
    def build(stack: cdk.Stack) -> object:
        values = {"model": PoolModel.from_model_name(stack, "Int4", "llm-int4"), "instance_type": G6, **props}
        return ShadowVariant(**values)

    return build


def _with(**props: Any) -> Callable[[cdk.Stack], object]:
    """A real-time endpoint with ``props`` (callables get the stack)."""

    def build(stack: cdk.Stack) -> object:
        values = {k: (v(stack) if callable(v) else v) for k, v in props.items()}
        values.setdefault("model", PoolModel.from_model_name(stack, "Base", "llm"))
        values.setdefault("pools", [InstancePool(instance_type=G6E)])
        return PooledEndpoint(stack, "Llm", **values)

    return build


def _a_shadow(stack: cdk.Stack) -> ShadowVariant:
    return ShadowVariant(model=PoolModel.from_model_name(stack, "Int4", "llm-int4"), instance_type=G6)


def _hosting(**props: Any) -> Callable[[cdk.Stack], object]:
    return _with(model=None, instance_scaling=InstanceScaling(max_instance_count=2), **props)


_ROLLING = DeploymentPolicy.rolling(batch_size=CapacitySize.percent(25), bake_time=Duration.minutes(5))

# (case id, builder, field named in the message, words of the "allowed" text)
CASES: list[tuple[str, Callable[[cdk.Stack], object], str, str]] = [
    ("capture prefix without slash", _capture(prefix="capture"), "DataCapture.prefix", "ending in '/'"),
    ("capture sampling 101", _capture(sampling_percentage=101), "DataCapture.sampling_percentage", "0 to 100"),
    ("capture input not a bool", _capture(capture_input="yes"), "DataCapture.capture_input", "True or False"),
    ("capture nothing", _capture(capture_input=False, capture_output=False), "DataCapture.capture_output", "capture the requests, the responses or both"),
    ("content types a string", _capture(json_content_types="application/json"), "DataCapture.json_content_types", "a list of 1 to 10 content types"),
    ("eleven content types", _capture(csv_content_types=[f"text/csv{i}" for i in range(11)]), "DataCapture.csv_content_types", "a list of 1 to 10"),
    ("content type without subtype", _capture(json_content_types=["json"]), "DataCapture.json_content_types", "TYPE/SUBTYPE"),
    ("content type as JSON and CSV", _capture(csv_content_types=["application/json"]), "DataCapture.csv_content_types", "one encoding per type"),
    ("capture key not a key", _capture(kms_key="alias/mine"), "DataCapture.kms_key", "aws_kms.IKey"),
    ("capture bucket not a bucket", _capture(bucket="s3://mine"), "DataCapture.bucket", "aws_s3.IBucket"),
    ("capture access logs with given bucket", _capture(bucket=lambda s: s3.Bucket.from_bucket_name(s, "G", "given"), access_logs_bucket=lambda s: s3.Bucket.from_bucket_name(s, "L", "logs")), "DataCapture.access_logs_bucket", "only without bucket"),
    ("capture access logs not a bucket", _capture(access_logs_bucket="logs"), "DataCapture.access_logs_bucket", "aws_s3.IBucket"),
    ("capture removal policy not a policy", _capture(removal_policy="retain"), "DataCapture.removal_policy", "aws_cdk.RemovalPolicy"),
    ("capture option not DataCapture", _with(data_capture={"prefix": "c/"}), "PooledEndpoint.data_capture", "a DataCapture"),
    ("capture on async", _with(async_inference=AsyncInference(), data_capture=DataCapture()), "PooledEndpoint.data_capture", "not for asynchronous inference"),
    ("capture without a model", _hosting(data_capture=DataCapture()), "PooledEndpoint.data_capture", "documents no capture of inference components"),
    ("capture_destination without capture", lambda s: _with()(s).capture_destination, "PooledEndpoint.capture_destination", "data_capture=DataCapture"),  # type: ignore[attr-defined]
    ("grant_read_capture without capture", lambda s: _with()(s).grant_read_capture(iam.User(s, "U")), "PooledEndpoint.grant_read_capture", "data_capture=DataCapture"),  # type: ignore[attr-defined]
    ("shadow model not a model", _shadow(model="llm-int4"), "ShadowVariant.model", "a PoolModel"),
    ("shadow unknown type", _shadow(instance_type="ml.g6.huge"), "ShadowVariant.instance_type", "ml."),
    ("shadow on Inf1", _shadow(instance_type="ml.inf1.24xlarge"), "ShadowVariant.instance_type", "shadow testing excludes endpoints that use Inf1"),
    ("shadow count 0", _shadow(initial_instance_count=0), "ShadowVariant.initial_instance_count", "from 1"),
    ("shadow variant name with underscore", _shadow(variant_name="shadow_g6"), "ShadowVariant.variant_name", "letters, digits and hyphens"),
    ("shadow sampling 0", _shadow(sampling_percentage=0), "ShadowVariant.sampling_percentage", "1 to 100"),
    ("shadow option not ShadowVariant", _with(shadow={"instance_type": G6}), "PooledEndpoint.shadow", "a ShadowVariant"),
    ("shadow on async", _with(async_inference=AsyncInference(), shadow=_a_shadow), "PooledEndpoint.shadow", "shadow testing excludes asynchronous endpoints"),
    ("shadow without a model", _hosting(shadow=_a_shadow), "PooledEndpoint.shadow", "excludes multi-model endpoints"),
    ("shadow named as production", _with(shadow=lambda s: ShadowVariant(model=PoolModel.from_model_name(s, "Int4", "i"), instance_type=G6, variant_name="alltraffic")), "PooledEndpoint.shadow.variant_name", "other than the production variant's (AllTraffic)"),
    ("shadow with a rolling deployment", _with(shadow=_a_shadow, deployment=_ROLLING, initial_instance_count=4), "PooledEndpoint.deployment", "rolling deployments exclude multi-variant endpoints"),
    ("shadow with an Inf1 pool", _with(shadow=_a_shadow, pools=[InstancePool(instance_type="ml.inf1.24xlarge")]), "PooledEndpoint.pools[0].instance_type", "shadow testing excludes endpoints that use Inf1"),
    ("shadow on an NVMe type with a volume key", _with(pools=[InstancePool(instance_type="ml.inf2.48xlarge")], shadow=_a_shadow, kms_key=lambda s: kms.Key(s, "Key")), "PooledEndpoint.kms_key", "NVMe instance storage"),
    ("metric_shadow without a shadow", lambda s: _with()(s).metric_shadow("ModelLatency"), "PooledEndpoint.metric_shadow", "shadow=ShadowVariant"),  # type: ignore[attr-defined]
]


@pytest.mark.parametrize(("build", "field", "allowed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused(build: Callable[[cdk.Stack], object], field: str, allowed: str) -> None:
    stack = refused_in_new_stack(build, field, allowed)
    # (the methods called on a built endpoint leave that endpoint behind)
    if not field.startswith(("PooledEndpoint.capture_destination", "PooledEndpoint.grant_read", "PooledEndpoint.metric_shadow")):
        # a refused prop leaves no endpoint, config or capture bucket behind
        assert not [t for t in resource_types(stack) if t.startswith("AWS::SageMaker::Endpoint") or t == "AWS::S3::Bucket"]


def test_corpus_reaches_every_rule() -> None:
    """Every ``raise PoolConfigError`` in data_capture.py, shadow.py and _buckets.py is reached by a case above."""
    assert unreached_rules([c[1] for c in CASES], ["data_capture.py", "shadow.py", "_buckets.py"]) == set()


def test_a_capture_bucket_given_a_destroy_policy_keeps_it() -> None:
    template = template_of(_built(lambda s: _llm(s, data_capture=DataCapture(removal_policy=RemovalPolicy.DESTROY))))
    (bucket,) = resources(template, "AWS::S3::Bucket").values()
    assert bucket["DeletionPolicy"] == "Delete"


# -- simulate -------------------------------------------------------------------------------------


def test_simulate_reads_production_and_ignores_the_shadow(tmp_path: Any) -> None:
    """sagemaker-pools simulate on a template with a shadow: the same fleet, scaling and result as without it."""
    from sagemaker_pools.ops.context import Context
    from sagemaker_pools.ops.aws import AwsOptions, Clients
    from sagemaker_pools.ops.cli import main

    def simulated(with_shadow: bool) -> dict[str, Any]:
        stack = new_stack(f"Sim{with_shadow}")
        _llm(stack, shadow=with_shadow).auto_scale(max_capacity=4).scale_on_weighted_utilization(target=0.7)
        template = tmp_path / f"template-{with_shadow}.json"
        template.write_text(json.dumps(template_of(stack)))
        trace = tmp_path / "trace.csv"
        trace.write_text("minute,concurrency\n0,4\n20,40\n90,4\n")
        out, err = io.StringIO(), io.StringIO()
        code = main(["simulate", str(template), "--traffic", str(trace), "--duration", "3h", "--json"], context=Context(clients=Clients(AwsOptions()), out=out, err=err))
        assert (code, err.getvalue()) == (0, "")
        document: dict[str, Any] = json.loads(out.getvalue())
        document.pop("template", None)
        return document

    with_shadow, without = simulated(True), simulated(False)
    assert with_shadow == without
    assert with_shadow["summary"]["scaling_activities"] > 0  # the traffic step did scale production
    assert [p["instance_type"] for p in with_shadow["endpoint"]["pools"]] == [G6E, G6]
    assert "shadow-g6" not in json.dumps(with_shadow)
