"""Autoscaling: scalable targets, target-tracking and step policies, and their API contract."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from aws_cdk import CfnResource, Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from sagemaker_pools import InstancePool, PoolConfigError, PooledEndpoint, ScalableCapacity, UtilizationStrategy
from sagemaker_pools.scaling import (
    INFERENCE_COMPONENT_COPY_COUNT,
    VARIANT_INSTANCE_COUNT,
    inference_component_resource_id,
    metric_data_queries,
)
from support.frozen import frozen
from support.contract import template_problems
from sagemaker_pools.metric_math import check_queries
from support.synth import imported_model, new_stack, resources, template_of

POOLS = [
    InstancePool(instance_type="ml.g6e.48xlarge", max_concurrency=32),
    InstancePool(instance_type="ml.g6.48xlarge", max_concurrency=16),
    InstancePool(instance_type="ml.p4d.24xlarge", max_concurrency=24),
]


def _endpoint(stack: Any, id: str = "Ep", **kwargs: Any) -> PooledEndpoint:
    kwargs.setdefault("pools", POOLS)
    return PooledEndpoint(stack, id, model=imported_model(stack, id=f"Model{id}"), **kwargs)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    """Two endpoints in one stack: a generated name with every policy kind, a fixed name and variant."""
    stack = new_stack("Scaling")
    first = _endpoint(stack, "First", initial_instance_count=2)
    scaling = first.auto_scale(max_capacity=8)
    scaling.scale_on_weighted_utilization(
        target=0.7,
        strategy=UtilizationStrategy.INSTANCE_WEIGHTED,
        scale_in_cooldown=Duration.minutes(20),
        scale_out_cooldown=Duration.minutes(10),
        disable_scale_in=True,
    )
    scaling.scale_on_invocations_per_instance(target=120)
    scaling.scale_on_concurrency(target=12)
    scaling.scale_on_step("Surge", metric=first.metric_invocation_5xx_errors(), threshold=10, adjustment=2)
    second = _endpoint(stack, "Second", endpoint_name="fixed-name", variant_name="Blue")
    second.auto_scale(min_capacity=1, max_capacity=3).scale_on_weighted_utilization()
    return frozen(template_of(stack))  # type: ignore[no-any-return]


def _by_prefix(template: dict[str, Any], type_name: str, prefix: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in resources(template, type_name).items() if k.startswith(prefix)}


def test_scalable_targets_use_the_service_linked_role_and_depend_on_the_endpoint(template: dict[str, Any]) -> None:
    targets = resources(template, "AWS::ApplicationAutoScaling::ScalableTarget")
    assert len(targets) == 2
    endpoints = resources(template, "AWS::SageMaker::Endpoint")
    for logical_id, target in targets.items():
        props = target["Properties"]
        assert "RoleARN" not in props
        assert props["ServiceNamespace"] == "sagemaker"
        assert props["ScalableDimension"] == VARIANT_INSTANCE_COUNT
        (endpoint_id,) = [e for e in endpoints if logical_id.startswith(e[:5])]
        # Either through the GetAtt of a generated name, or (a fixed name is a literal) through
        # DependsOn: exactly one of them (both would be redundant: cfn-lint W3005).
        resource_id = props["ResourceId"]
        if isinstance(resource_id, dict):
            assert {"Fn::GetAtt": [endpoint_id, "EndpointName"]} in resource_id["Fn::Join"][1]
            assert "DependsOn" not in target
        else:
            assert resource_id.startswith("endpoint/") and target["DependsOn"] == [endpoint_id]
    # No IAM role per endpoint (the alpha L2 makes one per endpoint and collides on the second).
    assert resources(template, "AWS::IAM::Role") == {}


def test_targets_are_keyed_per_variant(template: dict[str, Any]) -> None:
    (first,) = _by_prefix(template, "AWS::ApplicationAutoScaling::ScalableTarget", "FirstScalingAllTraffic").values()
    assert (first["Properties"]["MinCapacity"], first["Properties"]["MaxCapacity"]) == (2, 8)  # min defaults to initial
    resource_id = first["Properties"]["ResourceId"]
    assert (resource_id if isinstance(resource_id, str) else resource_id["Fn::Join"][1][0]).startswith("endpoint/")
    (second,) = _by_prefix(template, "AWS::ApplicationAutoScaling::ScalableTarget", "SecondScalingBlue").values()
    resource_id = second["Properties"]["ResourceId"]
    assert (resource_id if isinstance(resource_id, str) else resource_id["Fn::Join"][1][-1]).endswith("/variant/Blue")


def test_weighted_policy(template: dict[str, Any]) -> None:
    (policy,) = _by_prefix(template, "AWS::ApplicationAutoScaling::ScalingPolicy", "FirstScalingAllTrafficWeighted").values()
    props = policy["Properties"]
    config = props["TargetTrackingScalingPolicyConfiguration"]
    assert props["PolicyType"] == "TargetTrackingScaling"
    assert config["TargetValue"] == 0.7
    assert (config["ScaleInCooldown"], config["ScaleOutCooldown"], config["DisableScaleIn"]) == (1200, 600, True)
    queries = config["CustomizedMetricSpecification"]["Metrics"]
    check_queries(queries)
    assert [q["Id"] for q in queries if q["ReturnData"]] == ["result"]
    assert all("Period" not in q and "AccountId" not in q for q in queries)  # not in the AAS shape
    assert len(policy["DependsOn"]) == 1 and policy["DependsOn"][0].startswith("FirstScalingAllTraffic")


def test_simple_alternatives_use_predefined_metrics(template: dict[str, Any]) -> None:
    policies = _by_prefix(template, "AWS::ApplicationAutoScaling::ScalingPolicy", "FirstScalingAllTraffic")
    predefined = {
        p["Properties"]["TargetTrackingScalingPolicyConfiguration"]["PredefinedMetricSpecification"]["PredefinedMetricType"]: p[
            "Properties"
        ]["TargetTrackingScalingPolicyConfiguration"]["TargetValue"]
        for p in policies.values()
        if "PredefinedMetricSpecification" in p["Properties"].get("TargetTrackingScalingPolicyConfiguration", {})
    }
    assert predefined == {
        "SageMakerVariantInvocationsPerInstance": 120,
        "SageMakerVariantConcurrentRequestsPerModelHighResolution": 12,
    }


def test_step_policy_is_triggered_by_its_alarm(template: dict[str, Any]) -> None:
    (policy_id,) = _by_prefix(template, "AWS::ApplicationAutoScaling::ScalingPolicy", "FirstScalingAllTrafficSurge")
    step = template["Resources"][policy_id]["Properties"]["StepScalingPolicyConfiguration"]
    assert step["StepAdjustments"] == [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 2}]
    (alarm,) = _by_prefix(template, "AWS::CloudWatch::Alarm", "FirstScalingAllTrafficSurgeAlarm").values()
    assert alarm["Properties"]["AlarmActions"] == [{"Fn::GetAtt": [policy_id, "Arn"]}]
    assert alarm["Properties"]["Threshold"] == 10


def test_every_scaling_resource_satisfies_the_api_contract(template: dict[str, Any]) -> None:
    problems = template_problems(template)
    checked = [k for k, v in template["Resources"].items() if v["Type"].startswith(("AWS::ApplicationAutoScaling", "AWS::CloudWatch"))]
    assert len(checked) == 8  # 2 targets, 5 policies, 1 step alarm
    assert {k: problems[k] for k in checked if problems[k]} == {}


def test_the_contract_check_can_fail(template: dict[str, Any]) -> None:
    broken = copy.deepcopy({"Resources": {k: v for k, v in template["Resources"].items() if k.startswith("FirstScalingAllTrafficWeighted")}})
    (policy,) = broken["Resources"].values()
    config = policy["Properties"]["TargetTrackingScalingPolicyConfiguration"]
    config["CustomizedMetricSpecification"]["Metrics"][0]["MetricStat"]["Stat"] = "Maximum\x00"
    config["ScaleInCooldown"] = "soon"
    assert len(next(iter(template_problems(broken).values()))) == 2


# -- the generic layer, reused by inference components ------------------------------------------


def test_inference_component_capacity_can_start_at_zero() -> None:
    stack = new_stack()
    component = CfnResource(stack, "Component", type="AWS::SNS::Topic")  # stands in for the component
    capacity = ScalableCapacity(
        stack,
        "Copies",
        resource_id=inference_component_resource_id("my-ic"),
        scalable_dimension=INFERENCE_COMPONENT_COPY_COUNT,
        min_capacity=0,
        max_capacity=4,
        depends_on=[component],
    )
    capacity.scale_to_track_predefined(
        "PerCopy", target_value=4, predefined_metric_type="SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"
    )
    template = template_of(stack)
    (target,) = resources(template, "AWS::ApplicationAutoScaling::ScalableTarget").values()
    assert target["Properties"]["ResourceId"] == "inference-component/my-ic"
    assert target["DependsOn"] == ["Component"]  # a literal name implies no dependency: it is explicit
    assert {k: v for k, v in template_problems(template).items() if v} == {}


def test_metric_data_queries_enforce_cloudwatch_alarm_rules() -> None:
    stack = new_stack()
    endpoint = _endpoint(stack)
    many = {f"m{i}": endpoint.metric_invocations(dimensions_map={"Shard": str(i)}) for i in range(11)}
    with pytest.raises(PoolConfigError) as error:
        metric_data_queries(cloudwatch.MathExpression(expression=" + ".join(many), using_metrics=many), "policy")
    assert error.value.field == "policy.metrics"
    with pytest.raises(PoolConfigError) as error:
        metric_data_queries(cloudwatch.MathExpression(expression="SEARCH('{AWS/SageMaker} x', 'Sum', 60)"), "policy")
    assert error.value.field == "policy.expression"
    long = {"a": endpoint.metric_invocations()}
    with pytest.raises(PoolConfigError) as error:
        metric_data_queries(cloudwatch.MathExpression(expression="a" + " + a" * 700, using_metrics=long), "policy")
    assert error.value.field == "policy.expression"
    cross = endpoint.metric_invocations(account="111111111111")
    with pytest.raises(PoolConfigError) as error:
        metric_data_queries(cross, "policy")
    assert error.value.field == "policy.m1"
    single = metric_data_queries(endpoint.metric_invocations_per_instance(), "policy")
    assert len(single) == 1 and single[0].return_data is True and single[0].id == "m1"


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"min_capacity": 3, "max_capacity": 8}, "PooledEndpoint.auto_scale.min_capacity"),  # above initial (2)
        ({"min_capacity": 1, "max_capacity": 1}, "PooledEndpoint.auto_scale.max_capacity"),  # below initial
        ({"min_capacity": 0, "max_capacity": 8}, "PooledEndpoint.auto_scale.min_capacity"),  # no IC: no zero
        ({"max_capacity": 0}, "PooledEndpoint.auto_scale.max_capacity"),
        ({"max_capacity": 2.5}, "PooledEndpoint.auto_scale.max_capacity"),
    ],
)
def test_bad_bounds(kwargs: dict[str, Any], field: str) -> None:
    stack = new_stack()
    with pytest.raises(PoolConfigError) as error:
        _endpoint(stack, initial_instance_count=2).auto_scale(**kwargs)
    assert error.value.field == field


def test_one_scaling_per_variant() -> None:
    stack = new_stack()
    endpoint = _endpoint(stack)
    endpoint.auto_scale(max_capacity=2)
    with pytest.raises(PoolConfigError) as error:
        endpoint.auto_scale(max_capacity=3)
    assert error.value.field == "PooledEndpoint.auto_scale"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.scale_on_weighted_utilization(target=0), "PooledEndpoint.auto_scale.scale_on_weighted_utilization.target"),
        (lambda s: s.scale_on_weighted_utilization(target=1.5), "PooledEndpoint.auto_scale.scale_on_weighted_utilization.target"),
        (lambda s: s.scale_on_weighted_utilization(target=True), "PooledEndpoint.auto_scale.scale_on_weighted_utilization.target"),
        (
            lambda s: s.scale_on_weighted_utilization(scale_in_cooldown=Duration.millis(1500)),
            "PooledEndpoint.auto_scale.WeightedUtilization.scale_in_cooldown",
        ),
        (
            lambda s: s.scale_on_weighted_utilization(scale_out_cooldown=Duration.days(2)),
            "PooledEndpoint.auto_scale.WeightedUtilization.scale_out_cooldown",
        ),
        (lambda s: s.scale_on_invocations_per_instance(target=-1), "PooledEndpoint.auto_scale.InvocationsPerInstance.target_value"),
        (lambda s: s.scale_on_concurrency(target=0), "PooledEndpoint.auto_scale.ConcurrentRequests.target_value"),
        (
            lambda s: s.scale_to_track_predefined("X", target_value=1, predefined_metric_type="ECSServiceAverageCPUUtilization"),
            "PooledEndpoint.auto_scale.X.predefined_metric_type",
        ),
        (
            lambda s: s.scale_on_step("S", metric=s.endpoint.metric_invocations(), threshold=1, adjustment=1, adjustment_type="Double"),
            "PooledEndpoint.auto_scale.S.adjustment_type",
        ),
        (
            lambda s: s.scale_on_step("S", metric=s.endpoint.metric_invocations(), threshold=1, adjustment=0),
            "PooledEndpoint.auto_scale.S.adjustment",
        ),
        (
            lambda s: s.scale_on_step("S", metric=s.endpoint.metric_invocations(), threshold=1, adjustment=1, metric_aggregation_type="Sum"),
            "PooledEndpoint.auto_scale.S.metric_aggregation_type",
        ),
        (
            lambda s: s.scale_on_step("S", metric=s.endpoint.metric_invocations(), threshold=1, adjustment=1, evaluation_periods=0),
            "PooledEndpoint.auto_scale.S.evaluation_periods",
        ),
    ],
)
def test_bad_policies(call: Any, field: str) -> None:
    stack = new_stack()
    scaling = _endpoint(stack).auto_scale(max_capacity=4)
    with pytest.raises(PoolConfigError) as error:
        call(scaling)
    assert error.value.field == field


def test_bad_generic_capacity() -> None:
    stack = new_stack()
    with pytest.raises(PoolConfigError) as error:
        ScalableCapacity(stack, "X", resource_id="r", scalable_dimension="ecs:service:DesiredCount", min_capacity=0, max_capacity=1)
    assert error.value.field == "ScalableCapacity.scalable_dimension"
    with pytest.raises(PoolConfigError) as error:
        ScalableCapacity(stack, "Y", resource_id="r", scalable_dimension=VARIANT_INSTANCE_COUNT, min_capacity=3, max_capacity=2)
    assert error.value.field == "ScalableCapacity.min_capacity"
    assert "at most max_capacity (2)" in str(error.value)


def test_a_step_below_the_threshold_scales_in() -> None:
    stack = new_stack()
    scaling = _endpoint(stack).auto_scale(max_capacity=4)
    step = scaling.scale_on_step(
        "Quiet",
        metric=scaling.endpoint.metric_invocations(),
        threshold=5,
        adjustment=-1,
        comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluation_periods=15,
        cooldown=Duration.minutes(10),
    )
    template = template_of(stack)
    policy = template["Resources"][stack.get_logical_id(step.policy)]["Properties"]["StepScalingPolicyConfiguration"]
    assert policy["StepAdjustments"] == [{"MetricIntervalUpperBound": 0, "ScalingAdjustment": -1}]
    assert policy["Cooldown"] == 600
    assert {k: v for k, v in template_problems(template).items() if v} == {}


@pytest.mark.parametrize(
    ("unit", "name"),
    [
        (cloudwatch.Unit.MICROSECONDS, "Microseconds"),
        (cloudwatch.Unit.PERCENT, "Percent"),
        (cloudwatch.Unit.COUNT_PER_SECOND, "Count/Second"),
        (cloudwatch.Unit.NONE, "None"),
    ],
)
def test_units_are_spelled_as_cloudwatch_does(unit: cloudwatch.Unit, name: str) -> None:
    from sagemaker_pools.queries import unit_name as _unit_name

    assert _unit_name(unit) == name


def test_initial_instance_count_follows_the_autoscaling_minimum() -> None:
    """auto_scale(min_capacity=2) needs no initial_instance_count=2: the endpoint starts at its minimum."""

    def initial_count(stack: Any) -> Any:
        (config,) = resources(template_of(stack), "AWS::SageMaker::EndpointConfig").values()
        return config["Properties"]["ProductionVariants"][0]["InitialInstanceCount"]

    stack = new_stack()
    endpoint = _endpoint(stack)
    endpoint.auto_scale(min_capacity=2, max_capacity=8)
    assert endpoint.initial_instance_count == 2
    assert initial_count(stack) == 2
    # Without autoscaling: 1, as before.
    stack = new_stack()
    _endpoint(stack)
    assert initial_count(stack) == 1
    # Given explicitly, it still has to lie within the bounds.
    with pytest.raises(PoolConfigError) as error:
        _endpoint(new_stack(), initial_instance_count=1).auto_scale(min_capacity=2, max_capacity=8)
    assert error.value.field == "PooledEndpoint.auto_scale.min_capacity" and "initial_instance_count (1)" in str(error.value)
