"""Autoscaling: scalable targets, target-tracking and step policies, and their API contract."""

from __future__ import annotations

import copy
from typing import Any

import jsii
import pytest
from aws_cdk import CfnParameter, CfnResource, Duration
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
from sagemaker_pools.queries import Math, Stat
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
    # Scale-in stays on unless asked otherwise: nothing rendered for it.
    assert _config(template, "CopiesPerCopy") == {
        "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"},
        "TargetValue": 4,
    }
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
    assert len(single) == 1 and single[0]["returnData"] is True and single[0]["id"] == "m1"


# -- bad input -------------------------------------------------------------------------------------


def test_one_scaling_per_variant() -> None:
    stack = new_stack()
    endpoint = _endpoint(stack)
    endpoint.auto_scale(max_capacity=2)
    with pytest.raises(PoolConfigError) as error:
        endpoint.auto_scale(max_capacity=3)
    assert error.value.field == "PooledEndpoint.auto_scale"


S = "PooledEndpoint.auto_scale"
STEP = {"metric": cloudwatch.Metric(namespace="AWS/SageMaker", metric_name="Invocations"), "threshold": 1}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.scale_on_weighted_utilization(target=0), f"{S}.scale_on_weighted_utilization.target: got 0; allowed: a number in (0, 1]"),
        (lambda s: s.scale_on_weighted_utilization(target=1.5), f"{S}.scale_on_weighted_utilization.target: got 1.5; allowed: a number in (0, 1]"),
        (lambda s: s.scale_on_weighted_utilization(target=True), f"{S}.scale_on_weighted_utilization.target: got True; allowed: a number in (0, 1]"),
        (
            lambda s: s.scale_on_weighted_utilization(target=float("nan")),
            f"{S}.scale_on_weighted_utilization.target: got nan; allowed: a number in (0, 1]",
        ),
        (
            lambda s: s.scale_on_weighted_utilization(scale_in_cooldown=Duration.millis(1500)),
            f"{S}.WeightedUtilization.scale_in_cooldown: got '1.5 seconds'; allowed: a whole number of seconds from 0 to 86400",
        ),
        (
            lambda s: s.scale_on_weighted_utilization(scale_out_cooldown=Duration.seconds(86401)),
            f"{S}.WeightedUtilization.scale_out_cooldown: got '86401 seconds'; allowed: a whole number of seconds from 0 to 86400",
        ),
        (lambda s: s.scale_on_invocations_per_instance(target=-1), f"{S}.InvocationsPerInstance.target_value: got -1; allowed: a number > 0"),
        (lambda s: s.scale_on_concurrency(target=0), f"{S}.ConcurrentRequests.target_value: got 0; allowed: a number > 0"),
        (lambda s: s.scale_on_concurrency(target="12"), f"{S}.ConcurrentRequests.target_value: got '12'; allowed: a number > 0"),
        (
            lambda s: s.scale_to_track_metric("M", target_value=0, metric=s.endpoint.metric_invocations()),
            f"{S}.M.target_value: got 0; allowed: a number > 0",
        ),
        (
            lambda s: s.scale_to_track_metric("M", target_value=5, metric=cloudwatch.MathExpression(expression="SEARCH('x', 'Sum', 60)")),
            f"{S}.M.metric.expression: got \"SEARCH('x', 'Sum', 60)\"; allowed: an expression without SEARCH: alarms and scaling policies cannot use it",
        ),
        (
            lambda s: s.scale_to_track_predefined("X", target_value=1, predefined_metric_type="ECSServiceAverageCPUUtilization"),
            f"{S}.X.predefined_metric_type: got 'ECSServiceAverageCPUUtilization'; allowed: a SageMaker predefined metric type (SageMaker...)",
        ),
        (
            lambda s: s.scale_to_track_predefined("X", target_value=0, predefined_metric_type="SageMakerVariantInvocationsPerInstance"),
            f"{S}.X.target_value: got 0; allowed: a number > 0",
        ),
        (
            lambda s: s.scale_on_step("S", **STEP, adjustment=1, adjustment_type="Double"),
            f"{S}.S.adjustment_type: got 'Double'; allowed: ChangeInCapacity, ExactCapacity or PercentChangeInCapacity",
        ),
        (lambda s: s.scale_on_step("S", **STEP, adjustment=0), f"{S}.S.adjustment: got 0; allowed: a non-zero integer (ExactCapacity: 0 or more)"),
        (
            lambda s: s.scale_on_step("S", **STEP, adjustment=0, adjustment_type="PercentChangeInCapacity"),
            f"{S}.S.adjustment: got 0; allowed: a non-zero integer (ExactCapacity: 0 or more)",
        ),
        (lambda s: s.scale_on_step("S", **STEP, adjustment=1.5), f"{S}.S.adjustment: got 1.5; allowed: a non-zero integer (ExactCapacity: 0 or more)"),
        (lambda s: s.scale_on_step("S", **STEP, adjustment=True), f"{S}.S.adjustment: got True; allowed: a non-zero integer (ExactCapacity: 0 or more)"),
        (
            lambda s: s.scale_on_step("S", **STEP, adjustment=1, metric_aggregation_type="Sum"),
            f"{S}.S.metric_aggregation_type: got 'Sum'; allowed: Average, Minimum or Maximum",
        ),
        (
            lambda s: s.scale_on_step("S", **STEP, adjustment=1, evaluation_periods=0),
            f"{S}.S.evaluation_periods: got 0; allowed: an integer from 1 or more",
        ),
        (
            lambda s: s.scale_on_step("S", **STEP, adjustment=1, cooldown=Duration.days(2)),
            f"{S}.S.cooldown: got '172800 seconds'; allowed: a whole number of seconds from 0 to 86400",
        ),
        (
            lambda s: s.scale_on_step("S", metric=s.endpoint.metric_invocations(region="eu-west-1"), threshold=1, adjustment=1),
            f"{S}.S.metric.m1: got 'account=None, region=eu-west-1'; allowed: a metric of the policy's own account and region",
        ),
    ],
)
def test_bad_policies(call: Any, message: str) -> None:
    stack = new_stack()
    scaling = _endpoint(stack).auto_scale(max_capacity=4)
    with pytest.raises(PoolConfigError) as error:
        call(scaling)
    assert str(error.value) == message


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
    policy_id = stack.get_logical_id(step.policy)
    policy = template["Resources"][policy_id]["Properties"]["StepScalingPolicyConfiguration"]
    assert policy["StepAdjustments"] == [{"MetricIntervalUpperBound": 0, "ScalingAdjustment": -1}]
    assert policy["Cooldown"] == 600
    # The step's alarm is the one that triggers its policy.
    alarm = template["Resources"][stack.get_logical_id(step.alarm.node.default_child)]["Properties"]
    assert alarm["AlarmActions"] == [{"Fn::GetAtt": [policy_id, "Arn"]}] and alarm["EvaluationPeriods"] == 15
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


# -- what each policy renders, option by option -----------------------------------------------------


def _config(template: dict[str, Any], prefix: str, kind: str = "TargetTrackingScalingPolicyConfiguration") -> dict[str, Any]:
    (policy,) = _by_prefix(template, "AWS::ApplicationAutoScaling::ScalingPolicy", prefix).values()
    return policy["Properties"][kind]  # type: ignore[no-any-return]


def test_policies_render_only_the_options_given(template: dict[str, Any]) -> None:
    """Defaults leave cooldowns and scale-in to Application Auto Scaling: nothing rendered for them."""
    assert _config(template, "FirstScalingAllTrafficInvocationsPerInstance") == {
        "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"},
        "TargetValue": 120,
    }
    assert _config(template, "FirstScalingAllTrafficConcurrentRequests") == {
        "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantConcurrentRequestsPerModelHighResolution"},
        "TargetValue": 12,
    }
    default = _config(template, "SecondScalingBlueWeighted")
    assert default.keys() == {"CustomizedMetricSpecification", "TargetValue"} and default["TargetValue"] == 0.7
    # The default statistic of the concurrency the weighted utilization reads: the maximum.
    stats = {q["MetricStat"]["Metric"]["MetricName"]: q["MetricStat"]["Stat"] for q in default["CustomizedMetricSpecification"]["Metrics"] if "MetricStat" in q}
    assert stats["ConcurrentRequestsPerModel"] == "Maximum"
    # A step: +adjustment from the threshold up, the maximum of the data points, one period.
    assert _config(template, "FirstScalingAllTrafficSurge", "StepScalingPolicyConfiguration") == {
        "AdjustmentType": "ChangeInCapacity",
        "MetricAggregationType": "Maximum",
        "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 2}],
    }
    (alarm,) = _by_prefix(template, "AWS::CloudWatch::Alarm", "FirstScalingAllTrafficSurgeAlarm").values()
    props = alarm["Properties"]
    assert (props["ComparisonOperator"], props["EvaluationPeriods"], props["TreatMissingData"]) == ("GreaterThanOrEqualToThreshold", 1, "missing")
    assert "DatapointsToAlarm" not in props and "AlarmDescription" not in props


@pytest.fixture(scope="module")
def options() -> tuple[Any, dict[str, Any]]:
    """One variant's scaling with every option given, and a generic capacity's policies."""
    stack = new_stack("Options")
    endpoint = _endpoint(stack, "Ep", initial_instance_count=2)
    scaling = endpoint.auto_scale(min_capacity=2, max_capacity=2)  # both bounds at the initial count
    behaviour = {"scale_in_cooldown": Duration.seconds(0), "scale_out_cooldown": Duration.seconds(86400), "disable_scale_in": True}
    scaling.scale_on_invocations_per_instance(target=100, **behaviour)
    scaling.scale_on_concurrency(target=8, **behaviour)
    # The upper bound of the target is allowed.
    scaling.scale_on_weighted_utilization(target=1.0, strategy=UtilizationStrategy.INSTANCE_WEIGHTED, statistic="Average", **behaviour)
    capacity = ScalableCapacity(
        stack, "Copies", resource_id=inference_component_resource_id("ic"), scalable_dimension=INFERENCE_COMPONENT_COPY_COUNT, min_capacity=0, max_capacity=1
    )
    invocations = endpoint.metric_invocations()
    capacity.scale_on_step(
        "Exact",
        metric=invocations,
        threshold=3,
        adjustment=0,
        adjustment_type="ExactCapacity",
        comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
        metric_aggregation_type="Average",
        evaluation_periods=5,
        datapoints_to_alarm=4,
        cooldown=Duration.seconds(0),
        treat_missing_data=cloudwatch.TreatMissingData.BREACHING,
        alarm_description="quiet",
    )
    capacity.scale_on_step("Percent", metric=invocations, threshold=100, adjustment=50, adjustment_type="PercentChangeInCapacity", metric_aggregation_type="Minimum")
    capacity.wake_from_zero("Wake", metric=invocations, cooldown=Duration.seconds(60), evaluation_periods=3, alarm_description="wake up")
    capacity.wake_from_zero("LateWake", metric=invocations, cooldown=Duration.seconds(86400), evaluation_periods=1, alarm_description="late")
    capacity.wake_from_zero("DefaultWake", metric=invocations, evaluation_periods=2, alarm_description="default")
    capacity.scale_to_track_metric("Tracked", target_value=0.5, metric=invocations)
    return scaling, frozen(template_of(stack))


def test_cooldowns_and_scale_in_reach_every_target_tracking_policy(options: tuple[Any, dict[str, Any]]) -> None:
    _, template = options
    for prefix, target in (("EpScalingAllTrafficInvocationsPerInstance", 100), ("EpScalingAllTrafficConcurrentRequests", 8), ("EpScalingAllTrafficWeighted", 1.0)):
        config = _config(template, prefix)
        assert (config["TargetValue"], config["ScaleInCooldown"], config["ScaleOutCooldown"], config["DisableScaleIn"]) == (target, 0, 86400, True), prefix


def test_the_weighted_policy_reads_the_strategy_and_statistic_asked_for(options: tuple[Any, dict[str, Any]]) -> None:
    _, template = options
    queries = _config(template, "EpScalingAllTrafficWeighted")["CustomizedMetricSpecification"]["Metrics"]
    stats = {(q["MetricStat"]["Metric"]["MetricName"], q["MetricStat"]["Stat"]) for q in queries if "MetricStat" in q}
    # Instance weighting reads each pool's instance count besides its concurrency.
    assert stats == {("ConcurrentRequestsPerModel", "Average"), ("CPUUtilization", "SampleCount")}
    (top,) = [q for q in queries if q["ReturnData"]]
    assert top["Expression"].startswith("IF(FILL(n, 0) > 0, (u1 * s1 + u2 * s2 + u3 * s3) / n")


def test_the_scaling_remembers_its_utilization_target(options: tuple[Any, dict[str, Any]]) -> None:
    scaling, _ = options
    assert (scaling.utilization_target, scaling.utilization_strategy) == (1.0, UtilizationStrategy.INSTANCE_WEIGHTED)
    fresh = _endpoint(new_stack()).auto_scale(max_capacity=2)
    assert (fresh.utilization_target, fresh.utilization_strategy) == (None, None)


def test_every_step_option_is_rendered(options: tuple[Any, dict[str, Any]]) -> None:
    _, template = options
    # ExactCapacity may set 0; a step for "at or below" lies below the threshold.
    assert _config(template, "CopiesExact", "StepScalingPolicyConfiguration") == {
        "AdjustmentType": "ExactCapacity",
        "Cooldown": 0,
        "MetricAggregationType": "Average",
        "StepAdjustments": [{"MetricIntervalUpperBound": 0, "ScalingAdjustment": 0}],
    }
    (alarm,) = _by_prefix(template, "AWS::CloudWatch::Alarm", "CopiesExactAlarm").values()
    props = alarm["Properties"]
    assert (props["Threshold"], props["ComparisonOperator"], props["EvaluationPeriods"], props["DatapointsToAlarm"]) == (3, "LessThanOrEqualToThreshold", 5, 4)
    assert (props["TreatMissingData"], props["AlarmDescription"]) == ("breaching", "quiet")
    assert _config(template, "CopiesPercent", "StepScalingPolicyConfiguration") == {
        "AdjustmentType": "PercentChangeInCapacity",
        "MetricAggregationType": "Minimum",
        "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 50}],
    }


def test_a_wake_up_sets_exactly_one_unit_once_every_period_breached(options: tuple[Any, dict[str, Any]]) -> None:
    _, template = options
    wakes = (("CopiesWake", 60, 3, "wake up"), ("CopiesLateWake", 86400, 1, "late"), ("CopiesDefaultWake", 300, 2, "default"))
    for prefix, cooldown, periods, description in wakes:
        assert _config(template, prefix, "StepScalingPolicyConfiguration") == {
            "AdjustmentType": "ExactCapacity",
            "Cooldown": cooldown,
            "MetricAggregationType": "Maximum",
            "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}],
        }
        alarm = template["Resources"][next(iter(_by_prefix(template, "AWS::CloudWatch::Alarm", f"{prefix}Alarm")))]["Properties"]
        assert (alarm["Threshold"], alarm["ComparisonOperator"], alarm["EvaluationPeriods"], alarm["DatapointsToAlarm"]) == (
            1,
            "GreaterThanOrEqualToThreshold",
            periods,
            periods,
        )
        assert alarm["AlarmDescription"] == description


@pytest.mark.parametrize("seconds", [59, 86401])
def test_a_wake_up_cooldown_outside_a_minute_to_a_day_is_refused(seconds: int) -> None:
    capacity = ScalableCapacity(new_stack(), "C", resource_id="inference-component/ic", scalable_dimension=INFERENCE_COMPONENT_COPY_COUNT, min_capacity=0, max_capacity=1)
    with pytest.raises(PoolConfigError) as error:
        capacity.wake_from_zero("W", metric=cloudwatch.Metric(namespace="N", metric_name="M"), cooldown=Duration.seconds(seconds), evaluation_periods=1, alarm_description="d")
    assert str(error.value) == f"ScalableCapacity.W.cooldown: got '{seconds} seconds'; allowed: a whole number of seconds from 60 to 86400"


def test_policies_name_their_target_and_a_unique_stable_name(options: tuple[Any, dict[str, Any]]) -> None:
    _, template = options
    (target_id,) = _by_prefix(template, "AWS::ApplicationAutoScaling::ScalableTarget", "Copies")
    assert template["Resources"][target_id]["Properties"] == {
        "MaxCapacity": 1,
        "MinCapacity": 0,
        "ResourceId": "inference-component/ic",
        "ScalableDimension": INFERENCE_COMPONENT_COPY_COUNT,
        "ServiceNamespace": "sagemaker",
    }
    policies = _by_prefix(template, "AWS::ApplicationAutoScaling::ScalingPolicy", "Copies")
    assert len(policies) == 6
    for logical_id, policy in policies.items():
        props = policy["Properties"]
        assert (props["ServiceNamespace"], props["ResourceId"], props["ScalableDimension"]) == ("sagemaker", "inference-component/ic", INFERENCE_COMPONENT_COPY_COUNT)
        assert policy["DependsOn"] == [target_id]
        # The construct path's unique id: "Options/Copies/Tracked" -> "OptionsCopiesTracked" + hash.
        assert props["PolicyName"].startswith(f"Options{logical_id[:-8]}") and len(props["PolicyName"]) == len(logical_id) + len("Options")
    tracked = _config(template, "CopiesTracked")
    assert tracked["TargetValue"] == 0.5 and tracked.keys() == {"CustomizedMetricSpecification", "TargetValue"}
    assert {policy["Properties"]["PolicyType"] for policy in policies.values()} == {"StepScaling", "TargetTrackingScaling"}


# -- metric_data_queries: CloudWatch's alarm rules at their edges, and the query list -------------


def _stat(name: str = "Invocations", **kwargs: Any) -> Stat:
    return Stat(namespace="AWS/SageMaker", metric_name=name, dimensions=(("EndpointName", "e"),), statistic="Sum", **kwargs)


def _refusal(metric: Any) -> str:
    with pytest.raises(PoolConfigError) as error:
        metric_data_queries(metric, "policy")
    return str(error.value)


def test_ten_metrics_and_ten_expressions_are_the_limit() -> None:
    ten = tuple((f"m{i}", _stat(f"M{i}")) for i in range(10))
    assert len(metric_data_queries(Math(" + ".join(i for i, _ in ten), ten), "policy")) == 11
    eleven = (*ten, ("m10", _stat("M10")))
    assert _refusal(Math("m0", eleven)) == (
        "policy.metrics: got '11 metrics'; allowed: at most 10 metrics: target tracking runs on CloudWatch alarms, which read at most 10"
    )
    # Nine nested expressions and the top one: ten.
    nine = tuple((f"e{i}", Math(f"m{i} * 2", (ten[i],))) for i in range(9))
    assert len(metric_data_queries(Math("e0", nine), "policy")) == 9 + 9 + 1
    ten_nested = (*nine, ("e9", Math("m9 * 2", (ten[9],))))
    assert _refusal(Math("e0", ten_nested)) == "policy.expressions: got '11 expressions'; allowed: at most 10 math expressions in one alarm"


def test_an_expression_of_2048_characters_is_the_limit() -> None:
    using = (("a", _stat()),)
    longest = "a" + " + a" * 511 + "  "
    assert len(longest) == 2047 and len(metric_data_queries(Math(longest + " ", using), "policy")) == 2
    assert _refusal(Math(longest + "  ", using)) == "policy.expression: got '2049 characters'; allowed: at most 2048 characters"
    nested = Math("b", (("b", Math(longest + "  ", using)),))
    assert _refusal(nested) == "policy.expression: got '2049 characters'; allowed: at most 2048 characters"
    assert _refusal(Math("b", (("b", Math("search('x')", using)),))).startswith("policy.expression: got \"search('x')\"; allowed: an expression without SEARCH")


@pytest.mark.parametrize(("where", "value"), [({"account": "111111111111"}, "account=111111111111, region=None"), ({"region": "eu-west-1"}, "account=None, region=eu-west-1")])
def test_a_metric_of_another_account_or_region_is_refused(where: dict[str, str], value: str) -> None:
    message = f"policy.m1: got '{value}'; allowed: a metric of the policy's own account and region"
    assert _refusal(_stat(**where)) == message
    with pytest.raises(PoolConfigError) as error:
        metric_data_queries(_stat(**where))
    assert error.value.field == "metric.m1"  # the default field
    assert _refusal(Math("m1 + 1", (("m1", _stat(**where)),))) == message


def test_a_single_metric_is_the_one_query_that_returns_data() -> None:
    (query,) = metric_data_queries(_stat(unit=cloudwatch.Unit.COUNT, label="calls"), "policy")
    # A TargetTrackingMetricDataQuery as CloudFormation's property type names its fields; unset
    # fields (Expression here) are left out, not null.
    assert query == {
        "id": "m1",
        "label": "calls",
        "returnData": True,
        "metricStat": {
            "stat": "Sum",
            "unit": "Count",
            "metric": {"namespace": "AWS/SageMaker", "metricName": "Invocations", "dimensions": [{"name": "EndpointName", "value": "e"}]},
        },
    }
    (plain,) = metric_data_queries(_stat(), "policy")
    assert "label" not in plain and "unit" not in plain["metricStat"]


def test_only_the_top_expression_returns_data_under_a_free_id() -> None:
    def rows(queries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(q["id"], q.get("label"), q["returnData"], q.get("expression")) for q in queries]

    inner = Math("a * 2", (("a", _stat(label="calls")),), label="doubled")
    queries = metric_data_queries(Math("x + 1", (("x", inner),), label="top"), "policy")
    assert rows(queries) == [
        ("a", "calls", False, None),
        ("x", "doubled", False, "a * 2"),
        ("result", "top", True, "x + 1"),
    ]
    # "result" taken by a metric, then by an expression too: the top one moves aside.
    taken = metric_data_queries(Math("result * 2", (("result", _stat()),)), "policy")
    assert [(q["id"], q["returnData"]) for q in taken] == [("result", False), ("result_", True)]
    both = Math("result + result_", (("result", Math("m * 2", (("m", _stat()),))), ("result_", _stat("Other"))))
    assert [(q["id"], q["returnData"]) for q in metric_data_queries(both, "policy")] == [("m", False), ("result_", False), ("result", False), ("result__", True)]


# -- bounds: the messages name the field and what it allows ----------------------------------------


def _capacity(**kwargs: Any) -> ScalableCapacity:
    kwargs = {"resource_id": "inference-component/ic", "scalable_dimension": INFERENCE_COMPONENT_COPY_COUNT, "min_capacity": 0, "max_capacity": 1, **kwargs}
    return ScalableCapacity(new_stack(), "C", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_capacity": -1}, "ScalableCapacity.min_capacity: got -1; allowed: an integer from 0 or more instances or copies"),
        ({"max_capacity": 0}, "ScalableCapacity.max_capacity: got 0; allowed: an integer from 1 or more instances or copies"),
        ({"min_capacity": 2, "max_capacity": 1}, "ScalableCapacity.min_capacity: got 2; allowed: at most max_capacity (1): the minimum cannot exceed the maximum"),
        (
            {"scalable_dimension": "ecs:service:DesiredCount"},
            f"ScalableCapacity.scalable_dimension: got 'ecs:service:DesiredCount'; allowed: {VARIANT_INSTANCE_COUNT} or {INFERENCE_COMPONENT_COPY_COUNT}",
        ),
        ({"max_capacity": 0, "field": "Component.scaling"}, "Component.scaling.max_capacity: got 0; allowed: an integer from 1 or more instances or copies"),
    ],
)
def test_bad_capacity_bounds(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(PoolConfigError) as error:
        _capacity(**kwargs)
    assert str(error.value) == message


def test_a_capacity_keeps_what_it_was_given_and_waits_for_every_dependency() -> None:
    stack = new_stack()
    first, second = (CfnResource(stack, name, type="AWS::SNS::Topic") for name in ("First", "Second"))
    capacity = ScalableCapacity(
        stack, "C", resource_id="endpoint/e/variant/v", scalable_dimension=VARIANT_INSTANCE_COUNT, min_capacity=1, max_capacity=1, depends_on=[first, second]
    )
    assert (capacity.resource_id, capacity.scalable_dimension, capacity.min_capacity, capacity.max_capacity) == ("endpoint/e/variant/v", VARIANT_INSTANCE_COUNT, 1, 1)
    assert capacity.node.default_child is capacity.target  # (id "Resource": a short logical id, found by CDK)
    (target,) = resources(template_of(stack), "AWS::ApplicationAutoScaling::ScalableTarget").values()
    assert sorted(target["DependsOn"]) == ["First", "Second"]
    assert (target["Properties"]["MinCapacity"], target["Properties"]["MaxCapacity"]) == (1, 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_capacity": 3, "max_capacity": 8}, f"{S}.min_capacity: got 3; allowed: at most initial_instance_count (2)"),
        ({"min_capacity": 1, "max_capacity": 1}, f"{S}.max_capacity: got 1; allowed: at least initial_instance_count (2)"),
        (
            {"min_capacity": 0, "max_capacity": 8},
            f"{S}.min_capacity: got 0; allowed: an integer from 1 or more instances (a variant without inference components cannot scale to zero)",
        ),
        ({"max_capacity": 0}, f"{S}.max_capacity: got 0; allowed: an integer from 1 or more instances"),
        ({"max_capacity": 2.5}, f"{S}.max_capacity: got 2.5; allowed: an integer from 1 or more instances"),
        ({"min_capacity": 5, "max_capacity": 4}, f"{S}.min_capacity: got 5; allowed: at most max_capacity (4): the minimum cannot exceed the maximum"),
    ],
)
def test_bad_variant_bounds_messages(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(PoolConfigError) as error:
        _endpoint(new_stack(), initial_instance_count=2).auto_scale(**kwargs)
    assert str(error.value) == message


def test_token_bounds_beside_a_literal_initial_count_and_a_token_step_reach_the_template() -> None:
    """The comparisons with the initial count are left to deploy time (tests/test_tokens.py holds one
    case per prop; these are the combinations of a token with a literal it would be compared with)."""
    stack = new_stack()
    number = CfnParameter(stack, "N", type="Number", default=2).value_as_number
    _endpoint(stack, "Low", initial_instance_count=2).auto_scale(min_capacity=number, max_capacity=8)
    _endpoint(stack, "High", initial_instance_count=2).auto_scale(min_capacity=1, max_capacity=number)
    scaling = _endpoint(stack, "Count", initial_instance_count=number).auto_scale(min_capacity=3, max_capacity=3)
    scaling.scale_on_step("Step", metric=scaling.endpoint.metric_invocations(), threshold=1, adjustment=number)
    template = template_of(stack)
    ref = {"Ref": "N"}
    bounds = {k.split("Scaling")[0]: (v["Properties"]["MinCapacity"], v["Properties"]["MaxCapacity"]) for k, v in resources(template, "AWS::ApplicationAutoScaling::ScalableTarget").items()}
    assert bounds == {"Low": (ref, 8), "High": (1, ref), "Count": (3, 3)}
    (step,) = [p["Properties"] for p in resources(template, "AWS::ApplicationAutoScaling::ScalingPolicy").values()]
    assert step["StepScalingPolicyConfiguration"]["StepAdjustments"] == [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": ref}]


@jsii.implements(cloudwatch.IMetric)
class _NeitherMetricNorMath:
    """An IMetric whose configuration is neither a metric stat nor a math expression."""

    warnings = None
    warnings_v2 = None

    def to_metric_config(self) -> cloudwatch.MetricConfig:
        return cloudwatch.MetricConfig()


def test_what_is_not_a_query_names_the_field() -> None:
    with pytest.raises(PoolConfigError) as error:
        metric_data_queries(_NeitherMetricNorMath(), "policy")  # type: ignore[arg-type]
    assert (error.value.field, str(error.value).split("allowed: ")[1]) == ("policy", "a CloudWatch Metric or MathExpression")
    with pytest.raises(PoolConfigError) as error:
        metric_data_queries(Math("Bad", (("Bad", _stat()),)), "policy")
    assert (error.value.field, error.value.value) == ("policy.id", "Bad")


def test_a_pool_without_max_concurrency_is_named_by_the_endpoint() -> None:
    pools = [InstancePool(instance_type="ml.g6e.48xlarge", max_concurrency=32), InstancePool(instance_type="ml.g6.48xlarge")]
    scaling = _endpoint(new_stack(), pools=pools).auto_scale(max_capacity=4)
    with pytest.raises(PoolConfigError) as error:
        scaling.scale_on_weighted_utilization()
    assert error.value.field == "PooledEndpoint.pools[1].max_concurrency"


def test_each_target_tracking_policy_records_its_signal_and_target() -> None:
    """What PoolAlarms reads to tell a fleet short of capacity: every policy's own query and target."""
    stack = new_stack()
    endpoint = _endpoint(stack, endpoint_name="llm")
    scaling = endpoint.auto_scale(max_capacity=6)
    scaling.scale_on_weighted_utilization(target=0.6)
    scaling.scale_on_invocations_per_instance(target=500)
    scaling.scale_on_concurrency(target=12)
    scaling.scale_to_track_metric("Gpu", target_value=70, metric=endpoint.metric_gpu_utilization(statistic="Average"))
    scaling.scale_to_track_predefined("Other", target_value=1, predefined_metric_type="SageMakerVariantProvisionedConcurrencyUtilization")
    signals = {s.policy_id: s for s in scaling.tracked_signals}
    assert list(signals) == ["WeightedUtilization", "InvocationsPerInstance", "ConcurrentRequests", "Gpu"]  # an unknown predefined type: none
    assert [s.target for s in scaling.tracked_signals] == [0.6, 500, 12, 70]
    weighted = signals["WeightedUtilization"].query
    assert isinstance(weighted, Math) and weighted.expression == "MAX([u1, u2, u3])"
    dims = (("EndpointName", "llm"), ("VariantName", "AllTraffic"))
    assert signals["InvocationsPerInstance"].query == Stat("AWS/SageMaker", "InvocationsPerInstance", dims, "Sum", 60)
    assert signals["ConcurrentRequests"].query == Stat("AWS/SageMaker", "ConcurrentRequestsPerModel", dims, "Maximum", 60)
    gpu = signals["Gpu"].query
    assert isinstance(gpu, Stat) and (gpu.namespace, gpu.metric_name, gpu.statistic) == ("/aws/sagemaker/Endpoints", "GPUUtilization", "Average")
    # A metric that is not a CloudWatch metric names the policy's field.
    with pytest.raises(PoolConfigError) as error:
        scaling.scale_to_track_metric("Bad", target_value=1, metric="GPUUtilization")  # type: ignore[arg-type]
    assert (error.value.field, error.value.value) == ("PooledEndpoint.auto_scale.Bad.metric", "GPUUtilization")
    assert error.value.allowed == "an aws_cloudwatch Metric or MathExpression (or a sagemaker_pools query)"
    # A metric from another account is refused under the policy's own field.
    with pytest.raises(PoolConfigError) as error:
        scaling.scale_to_track_metric("Far", target_value=1, metric=endpoint.metric_gpu_utilization(account="210987654321"))
    assert error.value.field.startswith("PooledEndpoint.auto_scale.Far.metric")
    # A target from a parameter is left to deploy time, and recorded as given.
    target = CfnParameter(stack, "Target", type="Number", default=70).value_as_number
    scaling.scale_to_track_metric("Tokened", target_value=target, metric=endpoint.metric_gpu_utilization())
    assert scaling.tracked_signals[-1].target == target
    with pytest.raises(PoolConfigError) as error:
        scaling.scale_to_track_metric("Zero", target_value=0, metric=endpoint.metric_gpu_utilization())
    assert error.value.field == "PooledEndpoint.auto_scale.Zero.target_value"
