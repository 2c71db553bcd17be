"""Inference-component endpoints: the component resource, the endpoint without a model, copy
scaling with scale from zero, the hardware table, and every new rule."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import cfnlint.api
import pytest
from aws_cdk import Duration, assertions
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam

from sagemaker_pools import (
    AsyncInference,
    ComponentBatchSize,
    ComponentDeploymentPolicy,
    ComponentSpec,
    InferenceComponent,
    InstancePool,
    InstanceScaling,
    PoolConfigError,
    PooledEndpoint,
    PoolModel,
    hardware_of,
    known_instance_types,
)
from sagemaker_pools import metric_math
from sagemaker_pools.hardware import known_hardware_types
from sagemaker_pools.scaling import DEFAULT_COLD_START
from support.contract import template_problems
from support.frozen import frozen
from support.rules import unreached_rules
from support.synth import new_stack, only, resource_types, resources, template_of

P5, G6, G6X, P4D = "ml.p5.48xlarge", "ml.g6.48xlarge", "ml.g6.xlarge", "ml.p4d.24xlarge"
STACK = "InferenceComponentPools"


def _model(stack: cdk.Stack, name: str) -> Any:
    """A model referenced by name (reused when asked twice in one stack)."""
    return stack.node.try_find_child(f"M-{name}") or PoolModel.from_model_name(stack, f"M-{name}", name)


def _ic_endpoint(stack: cdk.Stack, pools: tuple[str, ...] = (P5, G6), **props: Any) -> PooledEndpoint:
    props.setdefault("instance_scaling", InstanceScaling(max_instance_count=4))
    return PooledEndpoint(stack, "Endpoint", pools=[InstancePool(instance_type=t) for t in pools], **props)


def _spec(stack: cdk.Stack, instance_type: str | None, **props: Any) -> ComponentSpec:
    props.setdefault("min_memory_in_mb", 1024)
    return ComponentSpec(instance_type=instance_type, model=_model(stack, f"m-{instance_type or 'any'}".replace(".", "-")), **props)


# -- the example stack ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example(example_templates: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return example_templates[STACK]


def _logical_id(template: dict[str, Any], type_name: str, contains: str) -> str:
    (found,) = [k for k in resources(template, type_name) if contains in k]
    return found


def test_component_has_one_specification_per_pool(example: dict[str, Any]) -> None:
    ic = only(example, "AWS::SageMaker::InferenceComponent")
    p5_model = _logical_id(example, "AWS::SageMaker::Model", "P5Fp8")
    g6_model = _logical_id(example, "AWS::SageMaker::Model", "G6Awq")
    assert "Specification" not in ic
    assert ic["Specifications"] == [
        {
            "InstanceType": P5,
            "ModelName": {"Fn::GetAtt": [p5_model, "ModelName"]},
            "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 8, "MinMemoryRequiredInMb": 65536},
        },
        {
            "InstanceType": G6,
            "ModelName": {"Fn::GetAtt": [g6_model, "ModelName"]},
            "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 8, "MinMemoryRequiredInMb": 32768},
        },
    ]
    assert ic["RuntimeConfig"] == {"CopyCount": 4}
    endpoint = _logical_id(example, "AWS::SageMaker::Endpoint", "LlmEndpoint")
    assert ic["EndpointName"] == {"Fn::GetAtt": [endpoint, "EndpointName"]}
    assert ic["VariantName"] == "AllTraffic"
    assert ic["InferenceComponentName"] == "llm-pooled-ic"


def test_component_rolls_out_with_its_own_policy(example: dict[str, Any]) -> None:
    ic = only(example, "AWS::SageMaker::InferenceComponent")
    alarm = _logical_id(example, "AWS::CloudWatch::Alarm", "ComponentModelErrors")
    assert ic["DeploymentConfig"] == {
        "RollingUpdatePolicy": {
            "MaximumBatchSize": {"Type": "COPY_COUNT", "Value": 1},
            "WaitIntervalInSeconds": 600,
            "MaximumExecutionTimeoutInSeconds": 10800,
        },
        "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": {"Ref": alarm}}]},
    }
    # The endpoint itself keeps SageMaker's default deployment (no DeploymentConfig).
    assert "DeploymentConfig" not in only(example, "AWS::SageMaker::Endpoint")


def test_endpoint_without_model_scales_instances_to_zero(example: dict[str, Any]) -> None:
    config = only(example, "AWS::SageMaker::EndpointConfig")
    (variant,) = config["ProductionVariants"]
    assert "ModelName" not in variant and "InstanceType" not in variant
    assert variant["InstancePools"] == [{"InstanceType": P5, "Priority": 1}, {"InstanceType": G6, "Priority": 2}]
    assert variant["ManagedInstanceScaling"] == {"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": 8}
    role = _logical_id(example, "AWS::IAM::Role", "LlmEndpointExecutionRole")
    assert config["ExecutionRoleArn"] == {"Fn::GetAtt": [role, "Arn"]}


def test_endpoint_execution_role_writes_logs_and_metrics_only(example: dict[str, Any]) -> None:
    role = _logical_id(example, "AWS::IAM::Role", "LlmEndpointExecutionRole")
    policies = [p for p in resources(example, "AWS::IAM::Policy").values() if p["Properties"]["Roles"] == [{"Ref": role}]]
    (policy,) = policies
    actions = sorted(a for s in policy["Properties"]["PolicyDocument"]["Statement"] for a in _list(s["Action"]))
    assert actions == sorted(
        ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams", "cloudwatch:PutMetricData"]
    )
    trust = example["Resources"][role]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust == [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}}]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_copy_scaling_target_is_the_component(example: dict[str, Any]) -> None:
    (target_id,) = resources(example, "AWS::ApplicationAutoScaling::ScalableTarget")
    target = example["Resources"][target_id]
    assert target["Properties"] == {
        "ServiceNamespace": "sagemaker",
        "ResourceId": "inference-component/llm-pooled-ic",
        "ScalableDimension": "sagemaker:inference-component:DesiredCopyCount",
        "MinCapacity": 0,
        "MaxCapacity": 8,
    }
    # The component's name is a literal: the explicit dependency is what orders them.
    assert target["DependsOn"] == [next(iter(resources(example, "AWS::SageMaker::InferenceComponent")))]


def _wake_up_alarm(example: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    policies = resources(example, "AWS::ApplicationAutoScaling::ScalingPolicy")
    (step_id,) = [k for k, v in policies.items() if v["Properties"]["PolicyType"] == "StepScaling"]
    return step_id, example["Resources"][_logical_id(example, "AWS::CloudWatch::Alarm", "ScaleFromZeroAlarm")]["Properties"]


def test_scale_from_zero_follows_the_aws_recipe(example: dict[str, Any]) -> None:
    policies = resources(example, "AWS::ApplicationAutoScaling::ScalingPolicy")
    step_id, alarm = _wake_up_alarm(example)
    assert policies[step_id]["Properties"]["StepScalingPolicyConfiguration"] == {
        "AdjustmentType": "ExactCapacity",  # one copy however often the alarm re-invokes it (test_wake_from_zero.py)
        "MetricAggregationType": "Maximum",
        "Cooldown": 300,  # Application Auto Scaling's default
        "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
    }
    assert alarm["AlarmActions"] == [{"Fn::GetAtt": [step_id, "Arn"]}]
    assert {k: alarm[k] for k in ("Threshold", "ComparisonOperator", "EvaluationPeriods", "DatapointsToAlarm")} == {
        "Threshold": 1,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "EvaluationPeriods": 1,
        "DatapointsToAlarm": 1,
    }
    stats = {q["Id"]: q["MetricStat"] for q in alarm["Metrics"] if "MetricStat" in q}
    component = [{"Name": "InferenceComponentName", "Value": "llm-pooled-ic"}]
    assert stats == {
        "failures": {"Metric": {"Namespace": "AWS/SageMaker", "MetricName": "NoCapacityInvocationFailures", "Dimensions": component}, "Period": 60, "Stat": "Sum"},
        "busy": {"Metric": {"Namespace": "AWS/SageMaker", "MetricName": "ConcurrentRequestsPerCopy", "Dimensions": component}, "Period": 60, "Stat": "Maximum"},
    }


@pytest.mark.parametrize(
    ("failures", "busy", "breaches"),
    [
        (3.0, None, True),  # requests found no copy and no copy reports requests: wake up
        (1.0, 0.0, True),  # a copy reports zero requests (idle): the failures still count
        (3.0, 2.0, False),  # a copy serves: ExactCapacity 1 must not cut the copies down
        (None, None, False),  # nothing failed
    ],
)
def test_the_wake_up_alarm_never_breaches_while_a_copy_serves(example: dict[str, Any], failures: float | None, busy: float | None, breaches: bool) -> None:
    _, alarm = _wake_up_alarm(example)
    values = {"NoCapacityInvocationFailures": failures, "ConcurrentRequestsPerCopy": busy}
    value = metric_math.evaluate(alarm["Metrics"], lambda stat: values[stat["Metric"]["MetricName"]])
    assert (value is not None and value >= alarm["Threshold"]) is breaches


def test_copies_track_utilization_weighted_by_instance_type(example: dict[str, Any]) -> None:
    policies = resources(example, "AWS::ApplicationAutoScaling::ScalingPolicy")
    (tracking,) = [v["Properties"] for v in policies.values() if v["Properties"]["PolicyType"] == "TargetTrackingScaling"]
    config = tracking["TargetTrackingScalingPolicyConfiguration"]
    assert config["TargetValue"] == 0.7
    metrics = {m["Id"]: m for m in config["CustomizedMetricSpecification"]["Metrics"]}
    for ident, itype in (("c1", P5), ("c2", G6)):
        stat = metrics[ident]["MetricStat"]
        assert stat["Metric"]["MetricName"] == "ConcurrentRequestsPerCopy"
        assert stat["Metric"]["Dimensions"] == [
            {"Name": "InferenceComponentName", "Value": "llm-pooled-ic"},
            {"Name": "InstanceType", "Value": itype},
        ]
    # Per-copy capacity from each specification: 32 on p5, 12 on g6.
    assert metrics["u1"]["Expression"] == "c1 / 32" and metrics["u2"]["Expression"] == "c2 / 12"
    assert [m["Id"] for m in metrics.values() if m["ReturnData"]] == ["result"]
    for ident, itype in (("s1", P5), ("s2", G6)):
        stat = metrics[ident]["MetricStat"]
        assert (stat["Metric"]["Namespace"], stat["Metric"]["MetricName"], stat["Stat"]) == (
            "/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized", "SampleCount"
        )
        assert {"Name": "InstanceType", "Value": itype} in stat["Metric"]["Dimensions"]


@pytest.mark.parametrize(
    ("p5", "g6", "tracked"),
    [
        ((16.0, 2.0), (None, None), 0.5),  # busy p5 copies: 16 / 32
        ((None, 2.0), (6.0, 1.0), 0.5),  # only g6 reports concurrency: 6 / 12
        ((None, 2.0), (None, 1.0), 0.0),  # copies report their presence but no concurrency: idle, real 0
        ((None, None), (None, None), None),  # no copy serves (zero, or a wake-up's copy loading): nothing
        ((20.0, None), (None, None), None),  # concurrency without presence samples: not trusted
    ],
)
def test_the_copy_policy_reads_idle_copies_as_zero_and_nothing_without_copies(
    example: dict[str, Any], p5: tuple[float | None, float | None], g6: tuple[float | None, float | None], tracked: float | None
) -> None:
    """(concurrency, presence samples) per type -> the tracked value: a policy without data never
    scales in, whether or not idle copies publish zeros (undocumented); docs/scaling.md."""
    policies = resources(example, "AWS::ApplicationAutoScaling::ScalingPolicy")
    (tracking,) = [v["Properties"] for v in policies.values() if v["Properties"]["PolicyType"] == "TargetTrackingScaling"]
    queries = tracking["TargetTrackingScalingPolicyConfiguration"]["CustomizedMetricSpecification"]["Metrics"]
    by_type = {P5: p5, G6: g6}

    def value(stat: dict[str, Any]) -> float | None:
        itype = next(d["Value"] for d in stat["Metric"]["Dimensions"] if d["Name"] == "InstanceType")
        return by_type[itype][0 if stat["Metric"]["MetricName"] == "ConcurrentRequestsPerCopy" else 1]

    assert metric_math.evaluate(queries, value) == tracked


def test_example_satisfies_the_api_contract(example: dict[str, Any]) -> None:
    problems = template_problems(example)
    assert "AWS::SageMaker::InferenceComponent" in {r["Type"] for r in example["Resources"].values()}
    assert {k: v for k, v in problems.items() if v} == {}
    assert len(problems) >= 8  # model x2, config, endpoint, component, target, 2 policies, alarms


def test_contract_check_sees_the_component_update_request() -> None:
    """The check above can fail: a bad rolling batch type in the update-only DeploymentConfig is caught."""
    template = {
        "Resources": {
            "Ic": {
                "Type": "AWS::SageMaker::InferenceComponent",
                "Properties": {
                    "EndpointName": "ep",
                    "InferenceComponentName": "ic",
                    "Specification": {"ModelName": "m", "ComputeResourceRequirements": {"MinMemoryRequiredInMb": 1024}},
                    "RuntimeConfig": {"CopyCount": 1},
                    "DeploymentConfig": {
                        "RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1}, "WaitIntervalInSeconds": 0}
                    },
                },
            }
        }
    }
    (problems,) = template_problems(template).values()
    assert any("UpdateInferenceComponent" in p and "INSTANCE_COUNT" in p for p in problems)
    assert not any("CreateInferenceComponent" in p for p in problems)


# -- rendering variants ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def single_spec() -> tuple[dict[str, Any], dict[str, Any]]:
    """One pool with a typed spec, and two pools with one untyped spec (both: singular Specification)."""
    one = new_stack("One")
    endpoint = _ic_endpoint(one, pools=(G6,))
    endpoint.add_inference_component(
        "Ic",
        specifications=[
            _spec(
                one,
                G6,
                accelerator_count=4,
                cpu_cores=16,
                max_memory_in_mb=65536,
                model_data_download_timeout=Duration.minutes(10),
                container_startup_health_check_timeout=Duration.minutes(15),
            )
        ],
    )
    anywhere = new_stack("Anywhere")
    _ic_endpoint(anywhere, pools=(P5, G6)).add_inference_component("Ic", specifications=[_spec(anywhere, None, accelerator_count=8)])
    return frozen(template_of(one)), frozen(template_of(anywhere))


def test_one_specification_uses_the_singular_form(single_spec: tuple[dict[str, Any], dict[str, Any]]) -> None:
    for template in single_spec:
        ic = only(template, "AWS::SageMaker::InferenceComponent")
        assert "Specifications" not in ic
        assert "InstanceType" not in ic["Specification"]  # CloudFormation rejects it there
    ic = only(single_spec[0], "AWS::SageMaker::InferenceComponent")
    assert ic["Specification"] == {
        "ModelName": "m-ml-g6-48xlarge",
        "ComputeResourceRequirements": {
            "MinMemoryRequiredInMb": 1024,
            "MaxMemoryRequiredInMb": 65536,
            "NumberOfAcceleratorDevicesRequired": 4,
            "NumberOfCpuCoresRequired": 16,
        },
        "StartupParameters": {"ModelDataDownloadTimeoutInSeconds": 600, "ContainerStartupHealthCheckTimeoutInSeconds": 900},
    }
    assert ic["RuntimeConfig"] == {"CopyCount": 1}  # the default
    assert "DeploymentConfig" not in ic


def test_single_specification_templates_lint_and_validate(single_spec: tuple[dict[str, Any], dict[str, Any]]) -> None:
    for template in single_spec:
        lint = [f"{m.rule.id} {m.message}" for m in cfnlint.api.lint(json.dumps(template), regions=["us-east-1"]) if m.rule.id[0] in "EW"]
        assert lint == []
        assert {k: v for k, v in template_problems(template).items() if v} == {}


def test_generated_component_name_is_stable_and_valid(single_spec: tuple[dict[str, Any], dict[str, Any]]) -> None:
    name = only(single_spec[0], "AWS::SageMaker::InferenceComponent")["InferenceComponentName"]
    again = new_stack("One")
    _ic_endpoint(again, pools=(G6,)).add_inference_component("Ic", specifications=[_spec(again, G6)])
    assert only(template_of(again), "AWS::SageMaker::InferenceComponent")["InferenceComponentName"] == name
    assert name == name.lower() and len(name) <= 63 and name.startswith("one-endpoint-ic-")


def test_unknown_hardware_and_uncovered_pool_are_warned() -> None:
    stack = new_stack()
    endpoint = _ic_endpoint(stack, pools=("ml.p6-b200.48xlarge", P5, G6))
    endpoint.add_inference_component(
        "Ic",
        specifications=[_spec(stack, "ml.p6-b200.48xlarge", accelerator_count=99), _spec(stack, P5, accelerator_count=8)],
    )
    annotations = assertions.Annotations.from_stack(stack)
    warnings = [w.entry.data for w in annotations.find_warning("*", assertions.Match.any_value())]
    assert any("ml.p6-b200.48xlarge is not in sagemaker_pools.hardware" in w for w in warnings)
    assert any(f"No specification for pool {G6}" in w for w in warnings)
    assert not any(f"pool {P5}" in w for w in warnings)


def test_weighted_copy_scaling_falls_back_to_pool_concurrency() -> None:
    stack = new_stack()
    endpoint = PooledEndpoint(
        stack,
        "Endpoint",
        pools=[InstancePool(instance_type=P5, max_concurrency=40), InstancePool(instance_type=G6, max_concurrency=10)],
        instance_scaling=InstanceScaling(min_instance_count=1, max_instance_count=2),
    )
    ic = endpoint.add_inference_component(
        "Ic", specifications=[_spec(stack, P5, max_concurrency=20), _spec(stack, G6)], copy_count=2
    )
    scaling = ic.auto_scale(min_copies=1, max_copies=4)
    scaling.scale_on_weighted_utilization(target=0.5)
    scaling.scale_on_concurrency(target=4)
    scaling.scale_on_invocations_per_copy(target=100)
    template = template_of(stack)
    policies = [p["Properties"] for p in resources(template, "AWS::ApplicationAutoScaling::ScalingPolicy").values()]
    assert not any(p["PolicyType"] == "StepScaling" for p in policies)  # min 1: no zero to leave
    weighted = next(p for p in policies if "CustomizedMetricSpecification" in p["TargetTrackingScalingPolicyConfiguration"])
    expressions = {m["Id"]: m.get("Expression") for m in weighted["TargetTrackingScalingPolicyConfiguration"]["CustomizedMetricSpecification"]["Metrics"]}
    assert expressions["u1"] == "c1 / 20" and expressions["u2"] == "c2 / 10"
    predefined = sorted(
        p["TargetTrackingScalingPolicyConfiguration"]["PredefinedMetricSpecification"]["PredefinedMetricType"]
        for p in policies
        if "PredefinedMetricSpecification" in p["TargetTrackingScalingPolicyConfiguration"]
    )
    assert predefined == [
        "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
        "SageMakerInferenceComponentInvocationsPerCopy",
    ]
    assert {k: v for k, v in template_problems(template).items() if v} == {}


def test_component_metrics_merge_dimensions() -> None:
    stack = new_stack()
    ic = _ic_endpoint(stack).add_inference_component("Ic", inference_component_name="ic", specifications=[_spec(stack, P5), _spec(stack, G6)])
    metric = ic.metric_concurrent_requests_per_copy(instance_type=G6)
    assert metric.dimensions == {"InferenceComponentName": "ic", "InstanceType": G6}
    assert metric.statistic == "Maximum"
    assert ic.metric_no_capacity_invocation_failures().dimensions == {"InferenceComponentName": "ic"}
    assert ic.metric_invocations_per_copy().statistic == "Sum"


# -- the hardware table ----------------------------------------------------------------------------


def test_hardware_table_matches_its_sources() -> None:
    # AWS figures per instance (sources named in sagemaker_pools/hardware.py).
    expected = {
        P5: (8, 192, 2048),
        G6: (8, 192, 768),
        G6X: (1, 4, 16),
        "ml.g6e.48xlarge": (8, 192, 1536),
        "ml.g5.12xlarge": (4, 48, 192),
        P4D: (8, 96, 1152),
        "ml.inf2.48xlarge": (12, 192, 768),
        "ml.trn1.32xlarge": (16, 128, 512),
    }
    for itype, (accelerators, vcpus, gib) in expected.items():
        hw = hardware_of(itype)
        assert hw is not None, itype
        assert (hw.accelerators, hw.vcpus, hw.memory_gib, hw.memory_mib) == (accelerators, vcpus, gib, gib * 1024), itype
    assert hardware_of("ml.m5.large") is None


def test_every_table_entry_is_a_production_variant_type() -> None:
    known = set(known_instance_types())
    table = known_hardware_types()
    assert len(table) >= 40
    assert [t for t in table if t not in known] == []
    assert all(hardware_of(t).accelerators >= 1 and hardware_of(t).vcpus >= 4 for t in table)  # type: ignore[union-attr]


# -- bad input -------------------------------------------------------------------------------------


def _component(pools: tuple[str, ...] = (P5, G6), **overrides: Any) -> Callable[[cdk.Stack], object]:
    """Builds an IC endpoint, then a component with ``overrides`` (callables get the stack)."""

    def build(stack: cdk.Stack) -> object:
        endpoint = _ic_endpoint(stack, pools=pools)
        props = {k: (v(stack) if callable(v) else v) for k, v in overrides.items()}
        if "specifications" not in props:
            props["specifications"] = [_spec(stack, P5, accelerator_count=8), _spec(stack, G6, accelerator_count=8)]
        return endpoint.add_inference_component("Ic", **props)

    return build


def _specs(*specs: tuple[str | None, dict[str, Any]]) -> Callable[[cdk.Stack], list[ComponentSpec]]:
    return lambda stack: [_spec(stack, t, **kw) for t, kw in specs]


def _scaled(**auto_scale: Any) -> Callable[[cdk.Stack], object]:
    def build(stack: cdk.Stack) -> object:
        ic = _component(copy_count=2)(stack)
        return ic.auto_scale(**auto_scale)  # type: ignore[attr-defined]

    return build


def _twice(stack: cdk.Stack) -> object:
    ic = _component()(stack)
    ic.auto_scale(max_copies=2)  # type: ignore[attr-defined]
    return ic.auto_scale(max_copies=2)  # type: ignore[attr-defined]


def _ic_model_endpoint(**props: Any) -> Callable[[cdk.Stack], object]:
    def build(stack: cdk.Stack) -> object:
        return PooledEndpoint(stack, "Endpoint", pools=[InstancePool(instance_type=P5)], **{k: (v(stack) if callable(v) else v) for k, v in props.items()})

    return build


_M = lambda stack: _model(stack, "base")  # noqa: E731
_ALARMS = lambda n: (lambda stack: [cloudwatch.Alarm.from_alarm_name(stack, f"A{i}", f"a-{i}") for i in range(n)])  # noqa: E731

# (case id, builder, field named in the message, words of the "allowed" text, resource type that must not exist)
CASES: list[tuple[str, Callable[[cdk.Stack], object], str, str, str]] = [
    # InstanceScaling and the endpoint without a model
    ("scaling min > max", lambda s: InstanceScaling(min_instance_count=3, max_instance_count=2), "InstanceScaling.min_instance_count", "at most max_instance_count", "AWS::SageMaker::EndpointConfig"),
    ("scaling max 0", lambda s: InstanceScaling(max_instance_count=0), "InstanceScaling.max_instance_count", "1 or more", "AWS::SageMaker::EndpointConfig"),
    ("scaling min -1", lambda s: InstanceScaling(min_instance_count=-1, max_instance_count=2), "InstanceScaling.min_instance_count", "0 or more", "AWS::SageMaker::EndpointConfig"),
    ("scaling not InstanceScaling", _ic_model_endpoint(instance_scaling={"max_instance_count": 2}), "PooledEndpoint.instance_scaling", "an InstanceScaling", "AWS::SageMaker::EndpointConfig"),
    ("no model, no scaling", _ic_model_endpoint(), "PooledEndpoint.model", "instance_scaling=InstanceScaling", "AWS::SageMaker::EndpointConfig"),
    ("model with scale to zero", _ic_model_endpoint(model=_M, instance_scaling=InstanceScaling(max_instance_count=2)), "PooledEndpoint.instance_scaling", "only without a model", "AWS::SageMaker::EndpointConfig"),
    ("model with managed scaling", _ic_model_endpoint(model=_M, instance_scaling=InstanceScaling(min_instance_count=1, max_instance_count=2)), "PooledEndpoint.instance_scaling", "SageMaker refuses it on a single-model variant", "AWS::SageMaker::EndpointConfig"),
    ("model with execution role", _ic_model_endpoint(model=_M, execution_role=lambda s: iam.Role.from_role_name(s, "R", "r")), "PooledEndpoint.execution_role", "only without a model", "AWS::SageMaker::EndpointConfig"),
    ("pool model without variant model", lambda s: PooledEndpoint(s, "Endpoint", pools=[InstancePool(instance_type=P5, model=_model(s, "x"))], instance_scaling=InstanceScaling(max_instance_count=2)), "PooledEndpoint.pools[0].model", "ComponentSpec", "AWS::SageMaker::EndpointConfig"),
    ("async without model", _ic_model_endpoint(instance_scaling=InstanceScaling(max_instance_count=2), async_inference=AsyncInference()), "PooledEndpoint.async_inference", "InvokeEndpointAsync has no InferenceComponentName", "AWS::S3::Bucket"),
    ("initial count above max", _ic_model_endpoint(instance_scaling=InstanceScaling(max_instance_count=2), initial_instance_count=3), "PooledEndpoint.initial_instance_count", "within instance_scaling", "AWS::SageMaker::EndpointConfig"),
    ("initial count below min", _ic_model_endpoint(instance_scaling=InstanceScaling(min_instance_count=2, max_instance_count=3), initial_instance_count=1), "PooledEndpoint.initial_instance_count", "from 2 to 3", "AWS::SageMaker::EndpointConfig"),
    # ComponentSpec
    ("spec model not a model", lambda s: ComponentSpec(model="m", min_memory_in_mb=1024), "ComponentSpec.model", "PoolModel", "AWS::SageMaker::InferenceComponent"),  # type: ignore[arg-type]
    ("spec memory 64 MB", lambda s: _spec(s, P5, min_memory_in_mb=64), "ComponentSpec.min_memory_in_mb", "128 or more", "AWS::SageMaker::InferenceComponent"),
    ("spec max below min", lambda s: _spec(s, P5, min_memory_in_mb=4096, max_memory_in_mb=2048), "ComponentSpec.max_memory_in_mb", "at least min_memory_in_mb", "AWS::SageMaker::InferenceComponent"),
    ("spec 0 accelerators", lambda s: _spec(s, P5, accelerator_count=0), "ComponentSpec.accelerator_count", "1 or more", "AWS::SageMaker::InferenceComponent"),
    ("spec 0.1 CPU cores", lambda s: _spec(s, P5, cpu_cores=0.1), "ComponentSpec.cpu_cores", "0.25 or more", "AWS::SageMaker::InferenceComponent"),
    ("spec type without ml.", lambda s: _spec(s, "p5.48xlarge"), "ComponentSpec.instance_type", "ml.p5.48xlarge", "AWS::SageMaker::InferenceComponent"),
    ("spec download timeout 30 s", lambda s: _spec(s, P5, model_data_download_timeout=Duration.seconds(30)), "ComponentSpec.model_data_download_timeout", "60 to 3600", "AWS::SageMaker::InferenceComponent"),
    ("spec health timeout 2 h", lambda s: _spec(s, P5, container_startup_health_check_timeout=Duration.hours(2)), "ComponentSpec.container_startup_health_check_timeout", "60 to 3600", "AWS::SageMaker::InferenceComponent"),
    ("spec max concurrency 0", lambda s: _spec(s, P5, max_concurrency=0), "ComponentSpec.max_concurrency", "a number > 0", "AWS::SageMaker::InferenceComponent"),
    # InferenceComponent against its endpoint
    ("component on a model endpoint", lambda s: InferenceComponent(s, "Ic", endpoint=PooledEndpoint(s, "Endpoint", model=_model(s, "m"), pools=[InstancePool(instance_type=P5)]), specifications=[_spec(s, P5)]), "InferenceComponent.endpoint", "without a model", "AWS::SageMaker::InferenceComponent"),
    ("no specifications", _component(specifications=[]), "InferenceComponent.specifications", "1 to 5", "AWS::SageMaker::InferenceComponent"),
    ("specifications not a list", _component(specifications=lambda s: _spec(s, P5)), "InferenceComponent.specifications", "a list of 1 to 5", "AWS::SageMaker::InferenceComponent"),
    ("specification not a ComponentSpec", _component(specifications=[{"instance_type": P5}]), "InferenceComponent.specifications[0]", "a ComponentSpec", "AWS::SageMaker::InferenceComponent"),
    ("type not a pool", _component(specifications=_specs((P5, {}), (P4D, {}))), "InferenceComponent.specifications[1].instance_type", f"one of the endpoint's pools: {P5}, {G6}", "AWS::SageMaker::InferenceComponent"),
    ("type twice", _component(specifications=_specs((P5, {}), (P5, {}))), "InferenceComponent.specifications[1].instance_type", "each instance type once", "AWS::SageMaker::InferenceComponent"),
    ("untyped among several", _component(specifications=_specs((P5, {}), (None, {}))), "InferenceComponent.specifications[1].instance_type", "needs the instance type of each", "AWS::SageMaker::InferenceComponent"),
    ("one typed spec, two pools", _component(specifications=_specs((P5, {}))), "InferenceComponent.specifications[0].instance_type", "singular Specification", "AWS::SageMaker::InferenceComponent"),
    ("9 accelerators on p5", _component(specifications=_specs((P5, {"accelerator_count": 9}), (G6, {}))), "InferenceComponent.specifications[0].accelerator_count", "at most 8: one instance of ml.p5.48xlarge has 8 accelerators", "AWS::SageMaker::InferenceComponent"),
    ("3 TiB on p5", _component(specifications=_specs((P5, {"min_memory_in_mb": 3 * 1024 * 1024}), (G6, {}))), "InferenceComponent.specifications[0].min_memory_in_mb", "at most 2097152 MB", "AWS::SageMaker::InferenceComponent"),
    ("200 cores on g6", _component(specifications=_specs((P5, {}), (G6, {"cpu_cores": 200}))), "InferenceComponent.specifications[1].cpu_cores", "192 vCPUs", "AWS::SageMaker::InferenceComponent"),
    ("memory cap over g6", _component(specifications=_specs((P5, {}), (G6, {"max_memory_in_mb": 1024 * 1024}))), "InferenceComponent.specifications[1].max_memory_in_mb", "at most 786432 MB", "AWS::SageMaker::InferenceComponent"),
    ("untyped spec too big for one pool", _component(pools=(P5, G6X), specifications=_specs((None, {"accelerator_count": 8}))), "InferenceComponent.specifications[0].accelerator_count", "ml.g6.xlarge has 1 accelerators", "AWS::SageMaker::InferenceComponent"),
    ("copy count -1", _component(copy_count=-1), "InferenceComponent.copy_count", "0 or more", "AWS::SageMaker::InferenceComponent"),
    ("deployment not a policy", _component(deployment="rolling"), "InferenceComponent.deployment", "ComponentDeploymentPolicy", "AWS::SageMaker::InferenceComponent"),
    ("name with underscore", _component(inference_component_name="my_ic"), "InferenceComponent.inference_component_name", "letters, digits and hyphens", "AWS::SageMaker::InferenceComponent"),
    # ComponentDeploymentPolicy
    ("batch 0 copies", lambda s: ComponentBatchSize.copies(0), "ComponentBatchSize.copies", "1 or more", "AWS::SageMaker::InferenceComponent"),
    ("batch 101 %", lambda s: ComponentBatchSize.percent(101), "ComponentBatchSize.percent", "1 to 100", "AWS::SageMaker::InferenceComponent"),
    ("rolling batch 60 %", lambda s: ComponentDeploymentPolicy.rolling(batch_size=ComponentBatchSize.percent(60), bake_time=Duration.minutes(1)), "ComponentDeploymentPolicy.rolling.batch_size", "5% to 50%", "AWS::SageMaker::InferenceComponent"),
    ("rolling batch not a size", lambda s: ComponentDeploymentPolicy.rolling(batch_size=1, bake_time=Duration.minutes(1)), "ComponentDeploymentPolicy.rolling.batch_size", "ComponentBatchSize", "AWS::SageMaker::InferenceComponent"),  # type: ignore[arg-type]
    ("rollback batch not a size", lambda s: ComponentDeploymentPolicy.rolling(batch_size=ComponentBatchSize.copies(1), rollback_batch_size=50, bake_time=Duration.minutes(1)), "ComponentDeploymentPolicy.rolling.rollback_batch_size", "ComponentBatchSize", "AWS::SageMaker::InferenceComponent"),  # type: ignore[arg-type]
    ("bake time 2 h", lambda s: ComponentDeploymentPolicy.rolling(batch_size=ComponentBatchSize.copies(1), bake_time=Duration.hours(2)), "ComponentDeploymentPolicy.rolling.bake_time", "0 to 3600", "AWS::SageMaker::InferenceComponent"),
    ("bake time not a Duration", lambda s: ComponentDeploymentPolicy.rolling(batch_size=ComponentBatchSize.copies(1), bake_time=60), "ComponentDeploymentPolicy.rolling.bake_time", "aws_cdk.Duration", "AWS::SageMaker::InferenceComponent"),  # type: ignore[arg-type]
    ("timeout 5 min", lambda s: ComponentDeploymentPolicy.rolling(batch_size=ComponentBatchSize.copies(1), bake_time=Duration.minutes(1), max_execution_timeout=Duration.minutes(5)), "ComponentDeploymentPolicy.rolling.max_execution_timeout", "600 to 28800", "AWS::SageMaker::InferenceComponent"),
    ("11 rollback alarms", lambda s: ComponentDeploymentPolicy.rolling(batch_size=ComponentBatchSize.copies(1), bake_time=Duration.minutes(1), rollback_alarms=_ALARMS(11)(s)), "ComponentDeploymentPolicy.rolling.rollback_alarms", "at most 10", "AWS::SageMaker::InferenceComponent"),
    ("rollback alarm not an alarm", lambda s: ComponentDeploymentPolicy.rolling(batch_size=ComponentBatchSize.copies(1), bake_time=Duration.minutes(1), rollback_alarms=["alarm-1"]), "ComponentDeploymentPolicy.rolling.rollback_alarms", "IAlarm", "AWS::SageMaker::InferenceComponent"),  # type: ignore[list-item]
    # copy scaling
    ("max copies 0", _scaled(max_copies=0), "InferenceComponent.auto_scale.max_copies", "1 or more", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("max copies below copy count", _scaled(max_copies=1), "InferenceComponent.auto_scale.max_copies", "at least copy_count (2)", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("min copies above copy count", _scaled(min_copies=3, max_copies=4), "InferenceComponent.auto_scale.min_copies", "at most copy_count (2)", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("min copies -1", _scaled(min_copies=-1, max_copies=4), "InferenceComponent.auto_scale.min_copies", "0 or more", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("scale_from_zero not a bool", _scaled(max_copies=4, scale_from_zero="yes"), "InferenceComponent.auto_scale.scale_from_zero", "True or False", "AWS::ApplicationAutoScaling::ScalableTarget"),
    ("second auto_scale", _twice, "InferenceComponent.auto_scale", "one call per component", "AWS::CloudWatch::Alarm|2"),
    ("scale from zero with min 1", lambda s: _scaled(min_copies=1, max_copies=4)(s).scale_from_zero(), "InferenceComponent.auto_scale.scale_from_zero", "min_copies=0", "AWS::CloudWatch::Alarm"),  # type: ignore[attr-defined]
    ("second scale from zero", lambda s: _scaled(max_copies=4)(s).scale_from_zero(), "InferenceComponent.auto_scale.scale_from_zero", "one scale-from-zero policy", "AWS::CloudWatch::Alarm|2"),  # type: ignore[attr-defined]
    ("weighted target 1.5", lambda s: _scaled(max_copies=4)(s).scale_on_weighted_utilization(target=1.5), "scale_on_weighted_utilization.target", "(0, 1]", "AWS::ApplicationAutoScaling::ScalingPolicy|2"),  # type: ignore[attr-defined]
    ("weighted without max_concurrency", lambda s: _scaled(max_copies=4)(s).scale_on_weighted_utilization(), "InferenceComponent.pools[0].max_concurrency", "a number > 0 for every pool", "AWS::ApplicationAutoScaling::ScalingPolicy|2"),  # type: ignore[attr-defined]
    ("metric of another type", lambda s: _component()(s).metric("ConcurrentRequestsPerCopy", instance_type=P4D), "InferenceComponent.metric.instance_type", "one of the endpoint's pools", "AWS::CloudWatch::Alarm"),  # type: ignore[attr-defined]
]


@pytest.mark.parametrize(("build", "field", "allowed", "absent"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused(build: Callable[[cdk.Stack], object], field: str, allowed: str, absent: str) -> None:
    stack = new_stack()
    with pytest.raises(PoolConfigError) as err:
        build(stack)
    message = str(err.value)
    assert field in err.value.field, message
    assert allowed in message, message
    # Nothing half-written: the failing construct left no resource ("Type|n" = at most n-1 remain).
    type_name, _, limit = absent.partition("|")
    left = [t for t in resource_types(stack) if t == type_name]
    assert len(left) < int(limit or 1), left


def test_corpus_reaches_every_rule() -> None:
    """Every ``raise PoolConfigError`` in inference_component.py is reached by a case above: a new rule needs its case."""
    assert unreached_rules([c[1] for c in CASES], ["inference_component.py"]) == set()


@pytest.mark.parametrize(
    ("field", "at_limit"),
    [("accelerator_count", 8), ("cpu_cores", 192), ("min_memory_in_mb", 768 * 1024), ("max_memory_in_mb", 768 * 1024)],
)
def test_a_copy_may_take_a_whole_instance_but_no_more(field: str, at_limit: int) -> None:
    """The limit is one ml.g6.48xlarge: exactly its resources fit, one unit more does not."""
    for value, fits in ((at_limit, True), (at_limit + 1, False)):
        stack = new_stack()
        props: dict[str, Any] = {field: value}
        if field == "max_memory_in_mb":
            props["min_memory_in_mb"] = 1024
        build = lambda: _ic_endpoint(stack, pools=(G6,)).add_inference_component("Ic", specifications=[_spec(stack, G6, **props)])  # noqa: E731
        if fits:
            build()
        else:
            with pytest.raises(PoolConfigError, match=rf"specifications\[0\]\.{field}"):
                build()


def _log_group_resources(template: dict[str, Any], role: str) -> list[Any]:
    policies = [p for p in resources(template, "AWS::IAM::Policy").values() if p["Properties"]["Roles"] == [{"Ref": role}]]
    statements = [s for p in policies for s in p["Properties"]["PolicyDocument"]["Statement"]]
    (logs,) = [s for s in statements if "logs:PutLogEvents" in _list(s["Action"])]
    return _list(logs["Resource"])


def test_component_containers_may_write_their_own_log_groups(example: dict[str, Any]) -> None:
    # SageMaker writes an inference component's container output to
    # /aws/sagemaker/InferenceComponents/<component name>, an endpoint's to /aws/sagemaker/Endpoints/<name>:
    # the roles that run component containers (the endpoint's and each component model's) may write both.
    roles = [k for k in resources(example, "AWS::IAM::Role") if "ExecutionRole" in k]
    assert roles
    for role in roles:
        names = sorted(r["Fn::Join"][1][-1] for r in _log_group_resources(example, role))
        assert names == [":log-group:/aws/sagemaker/Endpoints/*", ":log-group:/aws/sagemaker/InferenceComponents/*"], role


def test_copy_target_tracking_waits_a_cold_start_before_scaling_out_again() -> None:
    """Application Auto Scaling's scale-out cooldown for inference components is 0: the library's is DEFAULT_COLD_START."""
    stack = new_stack()
    endpoint = PooledEndpoint(
        stack,
        "Endpoint",
        pools=[InstancePool(instance_type=P5, max_concurrency=40)],
        instance_scaling=InstanceScaling(min_instance_count=1, max_instance_count=2),
    )
    ic = endpoint.add_inference_component("Ic", specifications=[_spec(stack, P5)], copy_count=2)
    scaling = ic.auto_scale(min_copies=1, max_copies=4)
    scaling.scale_on_weighted_utilization(target=0.5)
    scaling.scale_on_concurrency(target=4)
    scaling.scale_on_invocations_per_copy(target=100, scale_out_cooldown=Duration.minutes(3))
    policies = [p["Properties"] for p in resources(template_of(stack), "AWS::ApplicationAutoScaling::ScalingPolicy").values()]
    cooldowns = sorted(p["TargetTrackingScalingPolicyConfiguration"].get("ScaleOutCooldown") for p in policies)
    assert cooldowns == [180, DEFAULT_COLD_START.to_seconds(), DEFAULT_COLD_START.to_seconds()]


def _rolling(**overrides: Any) -> Callable[[cdk.Stack], object]:
    def build(stack: cdk.Stack) -> object:
        props: dict[str, Any] = {"batch_size": ComponentBatchSize.copies(1), "bake_time": Duration.minutes(1)}
        props.update({k: (v(stack) if callable(v) else v) for k, v in overrides.items()})
        return ComponentDeploymentPolicy.rolling(**props)

    return build


@pytest.mark.parametrize(
    ("build", "accepted"),
    [
        (_rolling(batch_size=ComponentBatchSize.percent(5)), True),
        (_rolling(batch_size=ComponentBatchSize.percent(50)), True),
        (_rolling(batch_size=ComponentBatchSize.percent(4)), False),
        (_rolling(batch_size=ComponentBatchSize.percent(51)), False),
        (_rolling(batch_size=ComponentBatchSize.copies(1)), True),
        (lambda s: ComponentBatchSize.copies(0), False),
        (_rolling(bake_time=Duration.seconds(0)), True),
        (_rolling(bake_time=Duration.seconds(3600)), True),
        (_rolling(bake_time=Duration.seconds(3601)), False),
        (_rolling(rollback_batch_size=ComponentBatchSize.percent(1)), True),
        (_rolling(rollback_batch_size=ComponentBatchSize.percent(100)), True),
        (lambda s: ComponentBatchSize.percent(101), False),
        (_rolling(max_execution_timeout=Duration.seconds(600)), True),
        (_rolling(max_execution_timeout=Duration.seconds(28800)), True),
        (_rolling(max_execution_timeout=Duration.seconds(599)), False),
        (_rolling(max_execution_timeout=Duration.seconds(28801)), False),
        (_rolling(rollback_alarms=_ALARMS(10)), True),
        (_rolling(rollback_alarms=_ALARMS(11)), False),
    ],
    ids=[
        "batch 5 %", "batch 50 %", "batch 4 %", "batch 51 %", "batch 1 copy", "batch 0 copies",
        "bake 0 s", "bake 3600 s", "bake 3601 s", "rollback 1 %", "rollback 100 %", "rollback 101 %",
        "timeout 600 s", "timeout 28800 s", "timeout 599 s", "timeout 28801 s", "10 alarms", "11 alarms",
    ],
)
def test_rolling_accepts_exactly_the_ranges_the_readme_states(build: Callable[[cdk.Stack], object], accepted: bool) -> None:
    """The bounds of the README's ComponentDeploymentPolicy.rolling table, each side of each."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    table = readme[readme.index("| `batch_size` | `ComponentBatchSize.percent(p)`") :].split("\n\n")[0]
    for stated in ("`percent`: 5–50", "0–3600 s", "`percent`: 1–100", "600–28800 s", "0–10 alarms", "`copies`: 1 or more"):
        assert stated in table
    if accepted:
        assert isinstance(build(new_stack()), ComponentDeploymentPolicy)
    else:
        with pytest.raises(PoolConfigError):
            build(new_stack())


def test_a_fixed_component_name_taken_in_the_app_is_refused_and_nothing_is_added() -> None:
    """Inference component names are unique per account and region, as endpoint names are."""

    def _both(stack: cdk.Stack) -> list[ComponentSpec]:
        return [_spec(stack, P5, accelerator_count=8), _spec(stack, G6, accelerator_count=8)]

    app = cdk.App()
    first_stack = cdk.Stack(app, "First")
    _ic_endpoint(first_stack).add_inference_component("Ic", inference_component_name="llm-ic", specifications=_both(first_stack))
    second_stack = cdk.Stack(app, "Second")
    endpoint = _ic_endpoint(second_stack)
    # An endpoint may share the component's name: another kind of resource.
    assert endpoint.endpoint_name != "llm-ic"
    with pytest.raises(PoolConfigError) as err:
        endpoint.add_inference_component("Ic", inference_component_name="llm-ic", specifications=_both(second_stack))
    assert (err.value.field, err.value.value) == ("InferenceComponent.inference_component_name", "llm-ic")
    assert "no other inference component in" in err.value.allowed and "First/" in err.value.allowed
    assert "inference component names are unique per account and region" in err.value.allowed
    assert not endpoint.node.try_find_child("Ic")
    assert resources(template_of(second_stack), "AWS::SageMaker::InferenceComponent") == {}
    # Another name is accepted beside it.
    endpoint.add_inference_component("Other", inference_component_name="llm-ic-2", specifications=_both(second_stack))
