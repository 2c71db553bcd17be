"""Async pooled endpoints: AsyncInferenceConfig, the output bucket, the execution-role and caller
grants, backlog scaling with scale from zero, and every new rule."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Duration, RemovalPolicy, assertions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns

from sagemaker_pools import metric_math
from sagemaker_pools import (
    AsyncInference,
    ContainerImage,
    InstancePool,
    PoolConfigError,
    PooledEndpoint,
    PoolModel,
)
from support.contract import template_problems
from support.frozen import frozen
from support.rules import unreached_rules
from support.synth import imported_model, nag_report, new_stack, only, resource_types, resources, template_of

G6E, G6, G5 = "ml.g6e.2xlarge", "ml.g6.2xlarge", "ml.g5.2xlarge"
STACK = "AsyncScaleToZero"
IMAGE = ContainerImage.from_image_uri("763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128")
IN, OUT, FAIL = "async-inference/input/", "async-inference/output/", "async-inference/failure/"


def _objects(bucket_id: str, prefix: str) -> dict[str, Any]:
    return {"Fn::Join": ["", [{"Fn::GetAtt": [bucket_id, "Arn"]}, f"/{prefix}*"]]}


def _one(template: dict[str, Any], type_name: str, contains: str) -> str:
    (found,) = [k for k in resources(template, type_name) if contains in k]
    return found


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _grants(statements: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    """``{(effect, action, resource, condition)}``: what statements allow, however they are merged
    or ordered (``@aws-cdk/aws-iam:minimizePolicies`` in cdk.json merges and sorts them)."""
    return {
        (st["Effect"], a, json.dumps(r, sort_keys=True), json.dumps(st.get("Condition"), sort_keys=True))
        for st in statements
        for a in _list(st["Action"])
        for r in _list(st["Resource"])
    }


def _allow(actions: Any, resources_: Any) -> set[tuple[str, str, str, str]]:
    return _grants([{"Effect": "Allow", "Action": actions, "Resource": resources_}])


def _statements(template: dict[str, Any], role_id: str) -> list[dict[str, Any]]:
    return [
        s
        for p in resources(template, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"].get("Roles", [])
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


# -- the example stack -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example(example_templates: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return example_templates[STACK]


@pytest.fixture(scope="module")
def ids(example: dict[str, Any]) -> dict[str, str]:
    return frozen({
        "bucket": _one(example, "AWS::S3::Bucket", "AsyncOutput"),
        "logs": _one(example, "AWS::S3::Bucket", "AsyncAccessLogs"),
        "key": _one(example, "AWS::KMS::Key", "AsyncKey"),
        "ok": _one(example, "AWS::SNS::Topic", "Succeeded"),
        "failed": _one(example, "AWS::SNS::Topic", "Failed"),
        "model_role": _one(example, "AWS::IAM::Role", "Llm8bAwqExecutionRole"),
        "client": _one(example, "AWS::IAM::Role", "AsyncClient"),
        "endpoint": _one(example, "AWS::SageMaker::Endpoint", "BatchEndpoint"),
        "model": _one(example, "AWS::SageMaker::Model", "Llm8bAwq"),
    })  # type: ignore[no-any-return]


def test_endpoint_config_is_asynchronous(example: dict[str, Any], ids: dict[str, str]) -> None:
    config = only(example, "AWS::SageMaker::EndpointConfig")
    assert config["AsyncInferenceConfig"] == {
        "ClientConfig": {"MaxConcurrentInvocationsPerInstance": 4},
        "OutputConfig": {
            "S3OutputPath": {"Fn::Join": ["", ["s3://", {"Ref": ids["bucket"]}, f"/{OUT}"]]},
            "S3FailurePath": {"Fn::Join": ["", ["s3://", {"Ref": ids["bucket"]}, f"/{FAIL}"]]},
            "KmsKeyId": {"Fn::GetAtt": [ids["key"], "Arn"]},
            "NotificationConfig": {"SuccessTopic": {"Ref": ids["ok"]}, "ErrorTopic": {"Ref": ids["failed"]}},
        },
    }
    (variant,) = config["ProductionVariants"]
    assert variant["ModelName"] == {"Fn::GetAtt": [ids["model"], "ModelName"]}
    assert [p["InstanceType"] for p in variant["InstancePools"]] == [G6E, G6, G5]
    assert "ExecutionRoleArn" not in config and "ManagedInstanceScaling" not in variant


def test_created_bucket_is_encrypted_private_versioned_and_retained(example: dict[str, Any], ids: dict[str, str]) -> None:
    bucket = example["Resources"][ids["bucket"]]
    assert bucket["DeletionPolicy"] == "Retain" and bucket["UpdateReplacePolicy"] == "Retain"
    props = bucket["Properties"]
    assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"] == [
        {"BucketKeyEnabled": True, "ServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": {"Fn::GetAtt": [ids["key"], "Arn"]}}}
    ]
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert props["LoggingConfiguration"] == {"DestinationBucketName": {"Ref": ids["logs"]}, "LogFilePrefix": "async-inference/"}
    (policy,) = [p for p in resources(example, "AWS::S3::BucketPolicy").values() if p["Properties"]["Bucket"] == {"Ref": ids["bucket"]}]
    (deny,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_model_role_gets_exactly_what_async_serving_needs(example: dict[str, Any], ids: dict[str, str]) -> None:
    grants = _grants(_statements(example, ids["model_role"]))
    on_async_bucket = {g for g in grants if ids["bucket"] in g[2]}
    assert on_async_bucket == _allow("s3:GetObject", _objects(ids["bucket"], IN)) | _allow(
        "s3:PutObject", [_objects(ids["bucket"], OUT), _objects(ids["bucket"], FAIL)]
    )
    assert _allow("sns:Publish", [{"Ref": ids["ok"]}, {"Ref": ids["failed"]}]) <= grants
    assert {g for g in grants if g[1].startswith("kms:")} == _allow(["kms:Decrypt", "kms:GenerateDataKey"], {"Fn::GetAtt": [ids["key"], "Arn"]})


def test_grant_invoke_async_gives_exact_permissions(example: dict[str, Any], ids: dict[str, str]) -> None:
    assert _grants(_statements(example, ids["client"])) == (
        _allow("sagemaker:InvokeEndpointAsync", {"Fn::GetAtt": [ids["endpoint"], "EndpointArn"]})
        | _allow("s3:PutObject", _objects(ids["bucket"], IN))
        | _allow("s3:GetObject", [_objects(ids["bucket"], OUT), _objects(ids["bucket"], FAIL)])
        | _allow(["kms:Decrypt", "kms:GenerateDataKey"], {"Fn::GetAtt": [ids["key"], "Arn"]})
    )


def _endpoint_metric(ids: dict[str, str], name: str) -> dict[str, Any]:
    return {
        "Metric": {
            "Namespace": "AWS/SageMaker",
            "MetricName": name,
            # The anchor defect: Endpoint/Variant dimensions never get data.
            "Dimensions": [{"Name": "EndpointName", "Value": {"Fn::GetAtt": [ids["endpoint"], "EndpointName"]}}],
        },
        "Stat": "Average",
    }


def test_backlog_tracking_reads_the_endpoint_dimension_only(example: dict[str, Any], ids: dict[str, str]) -> None:
    target = only(example, "AWS::ApplicationAutoScaling::ScalableTarget")
    assert target["ResourceId"] == {
        "Fn::Join": ["", ["endpoint/", {"Fn::GetAtt": [ids["endpoint"], "EndpointName"]}, "/variant/AllTraffic"]]
    }
    assert (target["ScalableDimension"], target["MinCapacity"], target["MaxCapacity"]) == ("sagemaker:variant:DesiredInstanceCount", 0, 4)
    policies = [p["Properties"] for p in resources(example, "AWS::ApplicationAutoScaling::ScalingPolicy").values()]
    (tracking,) = [p["TargetTrackingScalingPolicyConfiguration"] for p in policies if p["PolicyType"] == "TargetTrackingScaling"]
    assert tracking["TargetValue"] == 5 and tracking["ScaleInCooldown"] == 600
    queries = {q["Id"]: q for q in tracking["CustomizedMetricSpecification"]["Metrics"]}
    assert queries["backlog"]["MetricStat"] == _endpoint_metric(ids, "ApproximateBacklogSizePerInstance")
    assert queries["waiting"]["MetricStat"] == _endpoint_metric(ids, "HasBacklogWithoutCapacity")
    assert [q["Id"] for q in queries.values() if q["ReturnData"]] == ["result"]


@pytest.mark.parametrize(
    ("waiting", "backlog", "tracked"),
    [
        (1.0, 12.0, None),  # requests wait without an instance: the wake-up's job, target tracking reads nothing
        (0.0, 12.0, 12.0),  # an instance serves: the backlog per instance
        (None, 12.0, 12.0),  # no HasBacklogWithoutCapacity point: still tracked
        (0.0, 0.0, 0.0),  # idle: real zeros, so target tracking can scale in to zero
    ],
)
def test_target_tracking_reads_nothing_while_the_backlog_has_no_instance(
    example: dict[str, Any], waiting: float | None, backlog: float, tracked: float | None
) -> None:
    """So the wake-up's ExactCapacity 1 never lowers capacity that target tracking added (docs/scaling.md)."""
    policies = [p["Properties"] for p in resources(example, "AWS::ApplicationAutoScaling::ScalingPolicy").values()]
    (tracking,) = [p["TargetTrackingScalingPolicyConfiguration"] for p in policies if p["PolicyType"] == "TargetTrackingScaling"]
    queries = tracking["CustomizedMetricSpecification"]["Metrics"]
    values = {"HasBacklogWithoutCapacity": waiting, "ApproximateBacklogSizePerInstance": backlog}
    assert metric_math.evaluate(queries, lambda stat: values[stat["Metric"]["MetricName"]]) == tracked


def test_without_the_wake_up_the_backlog_is_tracked_plainly() -> None:
    """Without the step, target tracking is what leaves zero (AWS: once the backlog exceeds the target)."""
    stack = new_stack()
    endpoint = PooledEndpoint(stack, "E", model=imported_model(stack), pools=[InstancePool(instance_type="ml.g6e.2xlarge")], async_inference=AsyncInference())
    endpoint.auto_scale_on_backlog(max_capacity=4, scale_from_zero=False)
    policies = [p["Properties"] for p in resources(template_of(stack), "AWS::ApplicationAutoScaling::ScalingPolicy").values()]
    (policy,) = policies
    (query,) = policy["TargetTrackingScalingPolicyConfiguration"]["CustomizedMetricSpecification"]["Metrics"]
    assert query["MetricStat"]["Metric"]["MetricName"] == "ApproximateBacklogSizePerInstance"


def test_has_backlog_without_capacity_wakes_the_endpoint(example: dict[str, Any], ids: dict[str, str]) -> None:
    policies = resources(example, "AWS::ApplicationAutoScaling::ScalingPolicy")
    (step_id,) = [k for k, v in policies.items() if v["Properties"]["PolicyType"] == "StepScaling"]
    assert policies[step_id]["Properties"]["StepScalingPolicyConfiguration"] == {
        "AdjustmentType": "ExactCapacity",  # one instance however often the alarm re-invokes it (test_wake_from_zero.py)
        "Cooldown": 300,  # Application Auto Scaling's default
        "MetricAggregationType": "Maximum",
        "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
    }
    alarm = only(example, "AWS::CloudWatch::Alarm")
    assert alarm["AlarmActions"] == [{"Fn::GetAtt": [step_id, "Arn"]}]
    assert {k: alarm[k] for k in ("MetricName", "Namespace", "Dimensions", "Statistic", "Period", "EvaluationPeriods", "DatapointsToAlarm", "Threshold", "ComparisonOperator", "TreatMissingData")} == {
        "MetricName": "HasBacklogWithoutCapacity",
        "Namespace": "AWS/SageMaker",
        "Dimensions": [{"Name": "EndpointName", "Value": {"Fn::GetAtt": [ids["endpoint"], "EndpointName"]}}],
        "Statistic": "Average",
        "Period": 60,
        "EvaluationPeriods": 2,
        "DatapointsToAlarm": 2,
        "Threshold": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "TreatMissingData": "missing",
    }


def test_example_satisfies_the_api_contract(example: dict[str, Any]) -> None:
    problems = template_problems(example)
    assert {k: v for k, v in problems.items() if v} == {}
    assert len(problems) >= 7  # model, config, endpoint, target, 2 policies, alarm


# -- other shapes ------------------------------------------------------------------------------------


def _model(stack: cdk.Stack, id: str = "Model") -> PoolModel:
    return PoolModel(stack, id, image=IMAGE)


@pytest.fixture(scope="module")
def defaults() -> dict[str, Any]:
    """All defaults: a created SSE-S3 bucket, no topics, no client config."""
    stack = new_stack()
    endpoint = PooledEndpoint(stack, "Endpoint", model=_model(stack), pools=[InstancePool(instance_type=G6E)], async_inference=AsyncInference())
    endpoint.auto_scale_on_backlog(max_capacity=2, min_capacity=1)
    return frozen(template_of(stack))  # type: ignore[no-any-return]


def test_defaults_create_an_sse_s3_bucket_and_no_wake_up(defaults: dict[str, Any]) -> None:
    bucket_id = _one(defaults, "AWS::S3::Bucket", "AsyncOutput")
    bucket = defaults["Resources"][bucket_id]
    assert bucket["DeletionPolicy"] == "Retain"
    assert bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"] == [
        {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
    ]
    assert "LoggingConfiguration" not in bucket["Properties"]
    output = only(defaults, "AWS::SageMaker::EndpointConfig")["AsyncInferenceConfig"]["OutputConfig"]
    assert set(output) == {"S3OutputPath", "S3FailurePath"}
    assert "ClientConfig" not in only(defaults, "AWS::SageMaker::EndpointConfig")["AsyncInferenceConfig"]
    # min_capacity=1: target tracking only, no step policy or alarm.
    assert [p["Properties"]["PolicyType"] for p in resources(defaults, "AWS::ApplicationAutoScaling::ScalingPolicy").values()] == ["TargetTrackingScaling"]
    assert resources(defaults, "AWS::CloudWatch::Alarm") == {}
    assert {k: v for k, v in template_problems(defaults).items() if v} == {}


def test_given_bucket_prefixes_topics_and_pool_models() -> None:
    stack = new_stack()
    bucket_key = kms.Key(stack, "BucketKey")
    bucket = s3.Bucket(stack, "Mine", encryption=s3.BucketEncryption.KMS, encryption_key=bucket_key)
    topic = sns.Topic(stack, "Done")
    base, fallback = _model(stack, "Base"), _model(stack, "Fallback")
    endpoint = PooledEndpoint(
        stack,
        "Endpoint",
        model=base,
        pools=[InstancePool(instance_type=G6E), InstancePool(instance_type=G6, model=fallback)],
        async_inference=AsyncInference(
            bucket=bucket,
            input_prefix="in/",
            output_prefix="out/",
            failure_prefix="err/",
            error_topic=topic,
            include_response_in_notifications=True,
            removal_policy=RemovalPolicy.DESTROY,
        ),
    )
    user = iam.User(stack, "Caller")
    grant = endpoint.grant_invoke_async(user)
    assert grant.success
    template = template_of(stack)
    assert list(resources(template, "AWS::S3::Bucket")) == [_one(template, "AWS::S3::Bucket", "Mine")]
    mine = _one(template, "AWS::S3::Bucket", "Mine")
    output = only(template, "AWS::SageMaker::EndpointConfig")["AsyncInferenceConfig"]["OutputConfig"]
    assert output["S3OutputPath"] == {"Fn::Join": ["", ["s3://", {"Ref": mine}, "/out/"]]}
    assert output["NotificationConfig"] == {"ErrorTopic": {"Ref": _one(template, "AWS::SNS::Topic", "Done")}, "IncludeInferenceResponseIn": ["ERROR_NOTIFICATION_TOPIC"]}
    assert "KmsKeyId" not in output
    key_arn = {"Fn::GetAtt": [_one(template, "AWS::KMS::Key", "BucketKey"), "Arn"]}
    # Both models that may serve (the variant's and the fallback pool's) can read inputs and write results.
    for name in ("Base", "Fallback"):
        grants = _grants(_statements(template, _one(template, "AWS::IAM::Role", f"{name}ExecutionRole")))
        assert _allow("s3:GetObject", _objects(mine, "in/")) <= grants
        assert _allow("s3:PutObject", [_objects(mine, "out/"), _objects(mine, "err/")]) <= grants
        assert _allow(["kms:Decrypt", "kms:GenerateDataKey"], key_arn) <= grants
    caller = [
        s
        for p in resources(template, "AWS::IAM::Policy").values()
        if {"Ref": _one(template, "AWS::IAM::User", "Caller")} in p["Properties"].get("Users", [])
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    assert {g[1] for g in _grants(caller)} == {"sagemaker:InvokeEndpointAsync", "s3:PutObject", "s3:GetObject", "kms:Decrypt", "kms:GenerateDataKey"}
    assert {k: v for k, v in template_problems(template).items() if v} == {}


def test_imported_model_gets_a_warning_instead_of_a_grant() -> None:
    stack = new_stack()
    PooledEndpoint(
        stack,
        "Endpoint",
        model=PoolModel.from_model_name(stack, "Imported", "made-elsewhere"),
        pools=[InstancePool(instance_type=G6E)],
        async_inference=AsyncInference(),
    )
    warnings = [w.entry.data for w in assertions.Annotations.from_stack(stack).find_warning("*", assertions.Match.any_value())]
    assert any("Model made-elsewhere was imported" in w for w in warnings)
    assert resources(template_of(stack), "AWS::IAM::Policy") == {}


def test_backlog_metrics_carry_the_endpoint_dimension_only() -> None:
    stack = new_stack()
    endpoint = PooledEndpoint(stack, "Endpoint", model=_model(stack), pools=[InstancePool(instance_type=G6E)], async_inference=AsyncInference())
    for metric in (
        endpoint.metric_approximate_backlog_size(),
        endpoint.metric_approximate_backlog_size_per_instance(),
        endpoint.metric_has_backlog_without_capacity(),
    ):
        assert list(metric.dimensions) == ["EndpointName"]
        assert metric.namespace == "AWS/SageMaker" and metric.statistic == "Average"


# -- bad input -------------------------------------------------------------------------------------


def _async_endpoint(**async_props: Any) -> Callable[[cdk.Stack], object]:
    def build(stack: cdk.Stack) -> object:
        props = {k: (v(stack) if callable(v) else v) for k, v in async_props.items()}
        return PooledEndpoint(
            stack, "Endpoint", model=_model(stack), pools=[InstancePool(instance_type=G6E)], async_inference=AsyncInference(**props)
        )

    return build


def _realtime(stack: cdk.Stack) -> PooledEndpoint:
    return PooledEndpoint(stack, "Endpoint", model=_model(stack), pools=[InstancePool(instance_type=G6E)])


def _backlog(**props: Any) -> Callable[[cdk.Stack], object]:
    def build(stack: cdk.Stack) -> object:
        endpoint = _async_endpoint()(stack)
        return endpoint.auto_scale_on_backlog(**props)  # type: ignore[attr-defined]

    return build


def _both_scalers(stack: cdk.Stack) -> object:
    endpoint = _async_endpoint()(stack)
    endpoint.auto_scale(max_capacity=2)  # type: ignore[attr-defined]
    return endpoint.auto_scale_on_backlog(max_capacity=2)  # type: ignore[attr-defined]


_BUCKET = lambda s: s3.Bucket.from_bucket_name(s, "Given", "given-bucket")  # noqa: E731

# (case id, builder, field named in the message, words of the "allowed" text, resource type that must not exist)
CASES: list[tuple[str, Callable[[cdk.Stack], object], str, str, str]] = [
    ("output prefix without slash", _async_endpoint(output_prefix="out"), "AsyncInference.output_prefix", "ending in '/'", "AWS::S3::Bucket"),
    ("input prefix with leading slash", _async_endpoint(input_prefix="/in/"), "AsyncInference.input_prefix", "not starting with '/'", "AWS::S3::Bucket"),
    ("failure prefix with wildcard", _async_endpoint(failure_prefix="err*/"), "AsyncInference.failure_prefix", "'*'", "AWS::S3::Bucket"),
    ("prefix with double slash", _async_endpoint(output_prefix="a//b/"), "AsyncInference.output_prefix", "'//'", "AWS::S3::Bucket"),
    ("prefix too long", _async_endpoint(output_prefix="a" * 450 + "/"), "AsyncInference.output_prefix", "at most 443 characters", "AWS::S3::Bucket"),
    ("output inside input", _async_endpoint(input_prefix="data/", output_prefix="data/out/"), "AsyncInference.output_prefix", "must not nest", "AWS::S3::Bucket"),
    ("same prefix twice", _async_endpoint(output_prefix="r/", failure_prefix="r/"), "AsyncInference.failure_prefix", "must not nest", "AWS::S3::Bucket"),
    ("topic not a topic", _async_endpoint(success_topic="arn:aws:sns:us-east-1:123456789012:t"), "AsyncInference.success_topic", "aws_sns.ITopic", "AWS::S3::Bucket"),
    ("response in notifications, no topic", _async_endpoint(include_response_in_notifications=True), "AsyncInference.include_response_in_notifications", "only with a success_topic or an error_topic", "AWS::S3::Bucket"),
    ("0 concurrent invocations", _async_endpoint(max_concurrent_invocations_per_instance=0), "AsyncInference.max_concurrent_invocations_per_instance", "1 to 1000", "AWS::S3::Bucket"),
    ("1001 concurrent invocations", _async_endpoint(max_concurrent_invocations_per_instance=1001), "AsyncInference.max_concurrent_invocations_per_instance", "1 to 1000", "AWS::S3::Bucket"),
    ("kms key not a key", _async_endpoint(kms_key="alias/mine"), "AsyncInference.kms_key", "aws_kms.IKey", "AWS::S3::Bucket"),
    ("bucket not a bucket", _async_endpoint(bucket="s3://mine"), "AsyncInference.bucket", "aws_s3.IBucket", "AWS::S3::Bucket"),
    ("access logs with given bucket", _async_endpoint(bucket=_BUCKET, access_logs_bucket=lambda s: s3.Bucket.from_bucket_name(s, "L", "logs")), "AsyncInference.access_logs_bucket", "only without bucket", "AWS::SageMaker::EndpointConfig"),
    ("access logs not a bucket", _async_endpoint(access_logs_bucket="logs"), "AsyncInference.access_logs_bucket", "aws_s3.IBucket", "AWS::S3::Bucket"),
    ("removal policy not a policy", _async_endpoint(removal_policy="retain"), "AsyncInference.removal_policy", "aws_cdk.RemovalPolicy", "AWS::S3::Bucket"),
    ("async option not AsyncInference", lambda s: PooledEndpoint(s, "Endpoint", model=_model(s), pools=[InstancePool(instance_type=G6E)], async_inference={"output_prefix": "o/"}), "PooledEndpoint.async_inference", "an AsyncInference", "AWS::SageMaker::EndpointConfig"),
    ("grant_invoke_async on real-time", lambda s: _realtime(s).grant_invoke_async(iam.User(s, "U")), "PooledEndpoint.grant_invoke_async", "async_inference=AsyncInference", "AWS::IAM::Policy|2"),  # the model's own policy only
    ("backlog scaling on real-time", lambda s: _realtime(s).auto_scale_on_backlog(max_capacity=2), "PooledEndpoint.auto_scale_on_backlog", "async_inference=AsyncInference", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("backlog max 0", _backlog(max_capacity=0), "PooledEndpoint.auto_scale_on_backlog.max_capacity", "1 or more", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("backlog min -1", _backlog(max_capacity=2, min_capacity=-1), "PooledEndpoint.auto_scale_on_backlog.min_capacity", "0 or more", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("backlog min above a given initial", lambda s: PooledEndpoint(s, "Endpoint", model=_model(s), pools=[InstancePool(instance_type=G6E)], async_inference=AsyncInference(), initial_instance_count=1).auto_scale_on_backlog(max_capacity=3, min_capacity=2), "PooledEndpoint.auto_scale_on_backlog.min_capacity", "at most initial_instance_count (1)", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("backlog target 0", _backlog(max_capacity=2, target_backlog_per_instance=0), "PooledEndpoint.auto_scale_on_backlog.target_backlog_per_instance", "a number > 0", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("backlog cooldown 2 days", _backlog(max_capacity=2, scale_in_cooldown=Duration.days(2)), "PooledEndpoint.auto_scale_on_backlog.scale_in_cooldown", "0 to 86400", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("backlog max below initial", lambda s: PooledEndpoint(s, "Endpoint", model=_model(s), pools=[InstancePool(instance_type=G6E)], initial_instance_count=3, async_inference=AsyncInference()).auto_scale_on_backlog(max_capacity=2), "PooledEndpoint.auto_scale_on_backlog.max_capacity", "at least initial_instance_count (3)", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("scale_from_zero not a bool", _backlog(max_capacity=2, scale_from_zero=1), "PooledEndpoint.auto_scale_on_backlog.scale_from_zero", "True or False", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("second scalable target", _both_scalers, "PooledEndpoint.auto_scale_on_backlog", "one call of auto_scale or auto_scale_on_backlog per variant", "AWS::ApplicationAutoScaling::ScalableTarget|2"),
]


@pytest.mark.parametrize(("build", "field", "allowed", "absent"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused(build: Callable[[cdk.Stack], object], field: str, allowed: str, absent: str) -> None:
    stack = new_stack()
    with pytest.raises(PoolConfigError) as err:
        build(stack)
    message = str(err.value)
    assert field in err.value.field, message
    assert allowed in message, message
    type_name, _, limit = absent.partition("|")
    left = [t for t in resource_types(stack) if t == type_name]
    assert len(left) < int(limit or 1), left


def test_corpus_reaches_every_rule() -> None:
    """Every ``raise PoolConfigError`` in async_inference.py is reached by a case above: a new rule needs its case."""
    assert unreached_rules([c[1] for c in CASES], ["async_inference.py"]) == set()


def test_the_doc_names_resources_that_exist(example_templates: dict[str, dict[str, Any]]) -> None:
    """docs/inference-components-and-async.md walks through these templates: every logical id it names is real."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "inference-components-and-async.md").read_text()
    named = set(re.findall(r"`([A-Z][A-Za-z0-9]*[0-9A-F]{8})`", text))
    existing = {k for name in (STACK, "InferenceComponentPools") for k in example_templates[name]["Resources"]}
    assert len(named) >= 20
    assert sorted(named - existing) == []


KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def _kms_actions(template: dict[str, Any], policy_prefix: str) -> set[str]:
    """The KMS actions one role's policy grants on ``KEY_ARN``."""
    (policy,) = [v for k, v in resources(template, "AWS::IAM::Policy").items() if k.startswith(policy_prefix)]
    return {
        action
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if statement["Resource"] == KEY_ARN
        for action in ([statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"])
    }


@pytest.mark.parametrize("with_key", [True, False], ids=["imported-with-key", "imported-by-name"])
def test_imported_sse_kms_buckets_get_their_key_only_when_imported_with_it(with_key: bool) -> None:
    from sagemaker_pools import ModelData

    stack = new_stack()
    key = kms.Key.from_key_arn(stack, "Key", KEY_ARN)

    def imported(id: str, name: str) -> s3.IBucket:
        if with_key:
            return s3.Bucket.from_bucket_attributes(stack, id, bucket_name=name, encryption_key=key)
        return s3.Bucket.from_bucket_name(stack, id, name)

    model = PoolModel(stack, "Llm", image=IMAGE, model_data=ModelData.from_s3_prefix(imported("Weights", "weights"), "llm/"))
    endpoint = PooledEndpoint(
        stack, "Batch", model=model, pools=[InstancePool(instance_type=G6E)],
        async_inference=AsyncInference(bucket=imported("Results", "results")),
    )
    endpoint.grant_invoke_async(iam.Role(stack, "Client", assumed_by=iam.AccountRootPrincipal()))
    template = template_of(stack)
    if with_key:
        # the weights (Decrypt) and the async objects (Decrypt, GenerateDataKey), for the model and the caller
        assert _kms_actions(template, "LlmExecutionRoleDefaultPolicy") == {"kms:Decrypt", "kms:GenerateDataKey"}
        assert _kms_actions(template, "ClientDefaultPolicy") == {"kms:Decrypt", "kms:GenerateDataKey"}
    else:  # what the README warns about: nothing to grant on
        assert _kms_actions(template, "LlmExecutionRoleDefaultPolicy") == set()


def _async_with_created_bucket(stack: cdk.Stack, **props: Any) -> None:
    PooledEndpoint(
        stack, "Endpoint", model=PoolModel.from_model_name(stack, "M", "llm"), pools=[InstancePool(instance_type=G6E)],
        async_inference=AsyncInference(**props),
    )


def test_created_bucket_without_access_logs_is_acknowledged_with_the_way_to_log() -> None:
    nag = nag_report(_async_with_created_bucket)
    assert nag["violations"] == []
    (s1,) = [v for v in nag["suppressedViolations"] if v["ruleName"] == "AwsSolutions-S1"]
    assert "AsyncInference(access_logs_bucket=...)" in s1["reason"]


def test_created_bucket_with_access_logs_logs_and_needs_no_acknowledgment() -> None:
    def build(stack: cdk.Stack) -> None:
        logs = s3.Bucket.from_bucket_name(stack, "Logs", "my-access-logs")
        _async_with_created_bucket(stack, access_logs_bucket=logs)
        bucket = next(c for c in stack.node.find_all() if isinstance(c, s3.CfnBucket))
        assert stack.resolve(bucket.logging_configuration) == {
            "destinationBucketName": "my-access-logs", "logFilePrefix": "async-inference/"
        }

    nag = nag_report(build)
    assert nag["violations"] == []
    assert not [v for v in nag.get("suppressedViolations", []) if v["ruleName"] == "AwsSolutions-S1"]
