"""The plain-Python query model: one rendering whether a metric came in as CDK objects or as data,
no CDK CloudWatch objects behind the library's own scaling, alarms and dashboards, and the
lightweight ``IAlarm`` the alarms are."""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any

import jsii
import pytest
from aws_cdk import Aws, Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_sns as sns

from sagemaker_pools import InstancePool, PoolAlarms, PoolConfigError, PoolDashboard, PooledEndpoint, UtilizationStrategy
from sagemaker_pools.metrics import MetricSource, weighted_utilization_query
from sagemaker_pools.queries import Math, Stat, flatten, from_cloudwatch, to_cloudwatch
from sagemaker_pools.scaling import metric_data_queries
from support.synth import imported_model, new_stack, resources, template_of

POOLS = [
    InstancePool(instance_type="ml.g6e.48xlarge", max_concurrency=32),
    InstancePool(instance_type="ml.g6.48xlarge", max_concurrency=16),
    InstancePool(instance_type="ml.p4d.24xlarge", max_concurrency=24),
]


@pytest.fixture()
def created() -> Iterator[collections.Counter[str]]:
    """Counts the jsii objects created (by class name) while the test runs."""
    counts: collections.Counter[str] = collections.Counter()
    original = jsii.create

    def counting(cls: Any, *args: Any, **kwargs: Any) -> Any:
        counts[getattr(cls, "__name__", type(cls).__name__)] += 1
        return original(cls, *args, **kwargs)

    jsii.create = counting
    try:
        yield counts
    finally:
        jsii.create = original


def _endpoint(stack: Stack) -> PooledEndpoint:
    return PooledEndpoint(stack, "Ep", model=imported_model(stack), pools=POOLS, endpoint_name="llm", initial_instance_count=2)


def test_scaling_alarms_and_dashboard_make_no_cloudwatch_objects(created: collections.Counter[str]) -> None:
    stack = new_stack()
    endpoint = _endpoint(stack)
    endpoint.auto_scale(min_capacity=2, max_capacity=8).scale_on_weighted_utilization(strategy=UtilizationStrategy.INSTANCE_WEIGHTED)
    PoolAlarms(stack, "Alarms", endpoint=endpoint, topic=sns.Topic(stack, "Topic"))
    PoolDashboard(stack, "Dashboard", endpoints=[endpoint])
    assert {k: created[k] for k in ("Metric", "MathExpression", "Alarm", "GraphWidget")} == dict.fromkeys(
        ("Metric", "MathExpression", "Alarm", "GraphWidget"), 0
    )
    # 3 latency, error rate, fallback, the at-max count and its saturation half; the composite.
    assert created["CfnAlarm"] == 7 and created["CfnCompositeAlarm"] == 1 and created["CfnScalingPolicy"] == 1
    # The public edge still hands out CDK objects.
    assert isinstance(endpoint.metric_weighted_utilization(), cloudwatch.MathExpression)
    assert created["MathExpression"] > 0


@pytest.mark.parametrize("strategy", list(UtilizationStrategy))
def test_the_public_metric_and_the_query_render_the_same_policy(strategy: UtilizationStrategy) -> None:
    stack = new_stack()
    endpoint = _endpoint(stack)
    source = MetricSource.variant(endpoint.endpoint_name, endpoint.variant_name)
    direct = metric_data_queries(weighted_utilization_query(source, POOLS, strategy=strategy))
    through_cdk = metric_data_queries(endpoint.metric_weighted_utilization(strategy=strategy))
    resolve = Stack.of(endpoint).resolve
    assert resolve(through_cdk) == resolve(direct)


def test_to_and_from_cloudwatch_round_trip() -> None:
    source = MetricSource.variant("llm", "AllTraffic")
    query = weighted_utilization_query(source, POOLS, strategy=UtilizationStrategy.INSTANCE_WEIGHTED, period=300)
    back = from_cloudwatch(to_cloudwatch(query))
    assert flatten(back) == flatten(query)
    stat = Stat("AWS/SageMaker", "ModelLatency", (("EndpointName", "llm"),), "p99", 60, cloudwatch.Unit.MICROSECONDS, "p99")
    assert from_cloudwatch(to_cloudwatch(stat)) == stat
    # CDK's MathExpression applies its own period to every input.
    slow = Stat("AWS/SageMaker", "InstanceCount", (("EndpointName", "llm"),), "Minimum", 300)
    mixed = from_cloudwatch(to_cloudwatch(Math("100 * s / n", (("s", stat), ("n", slow)), 60, "mixed")))
    assert {k: v.period for k, v in flatten(mixed).stats.items()} == {"s": 60, "n": 60}


def test_flatten_refuses_an_id_for_two_things() -> None:
    a = Stat("AWS/SageMaker", "Invocations", (), "Sum")
    b = Stat("AWS/SageMaker", "Invocation5XXErrors", (), "Sum")
    inner = Math("x", (("x", a),))
    with pytest.raises(PoolConfigError) as error:
        flatten(Math("x + y", (("y", inner), ("x", b))), "m")
    assert error.value.field == "m.id"
    with pytest.raises(PoolConfigError):
        flatten(Math("X", (("X", a),)), "m")  # ids start with a lowercase letter


def test_alarms_are_ialarms_over_their_cfn_alarm() -> None:
    stack = new_stack()
    alarms = PoolAlarms(stack, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(stack, "E", "llm"), pools=POOLS, max_capacity=8)
    topic = sns.Topic(stack, "Late")
    alarms.error_rate_alarm.add_alarm_action(cw_actions.SnsAction(topic))
    alarms.error_rate_alarm.add_ok_action(cw_actions.SnsAction(topic))
    cloudwatch.CompositeAlarm(
        stack,
        "Either",
        alarm_rule=cloudwatch.AlarmRule.any_of(
            *(cloudwatch.AlarmRule.from_alarm(a, cloudwatch.AlarmState.ALARM) for a in alarms.rollback_alarms)
        ),
    )
    template = template_of(stack)
    error_rate = next(v["Properties"] for k, v in resources(template, "AWS::CloudWatch::Alarm").items() if k.startswith("AlarmsErrorRate5xx"))
    topic_id = next(k for k in resources(template, "AWS::SNS::Topic") if k.startswith("Late"))
    assert error_rate["AlarmActions"] == error_rate["OKActions"] == [{"Ref": topic_id}]
    (composite,) = [c for k, c in resources(template, "AWS::CloudWatch::CompositeAlarm").items() if k.startswith("Either")]
    rule = str(composite["Properties"]["AlarmRule"])
    assert all(
        f"'{k}', 'Arn'" in rule
        for k in resources(template, "AWS::CloudWatch::Alarm")
        if not k.startswith(("AlarmsFallback", "AlarmsAtMax", "AlarmsSaturated"))
    )
    assert alarms.error_rate_alarm.node.default_child.node.path == alarms.error_rate_alarm.resource.node.path  # type: ignore[union-attr]


def test_an_alarm_is_an_ialarm_as_cdks_alarm_base_is() -> None:
    """Every member of ``IAlarm`` answers as CDK's own ``AlarmBase`` does, in Python and from Node."""
    stack = new_stack()
    alarms = PoolAlarms(stack, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(stack, "E", "llm"), pools=POOLS)
    alarm = alarms.error_rate_alarm
    resolved = stack.resolve
    assert alarm.node.path == f"{stack.node.path}/Alarms/ErrorRate5xx"
    assert alarm.node.default_child.node.path == f"{stack.node.path}/Alarms/ErrorRate5xx/Resource"  # type: ignore[union-attr]
    assert alarm.stack is stack
    assert (alarm.env.account, alarm.env.region) == (stack.account, stack.region)
    assert resolved(alarm.alarm_ref.alarm_name) == resolved(alarm.alarm_name) == {"Ref": resolved(alarm.resource.logical_id)}
    assert resolved(alarm.alarm_ref.alarm_arn) == resolved(alarm.alarm_arn) == {"Fn::GetAtt": [resolved(alarm.resource.logical_id), "Arn"]}
    alarm.apply_removal_policy(RemovalPolicy.RETAIN)
    # From Node: a rule of the alarm itself (render_alarm_rule), a widget, and the CfnAlarm's own import by name.
    cloudwatch.CompositeAlarm(stack, "Itself", alarm_rule=cloudwatch.AlarmRule.any_of(alarm, *alarms.latency_alarms.values()))
    cloudwatch.CfnDashboard(
        stack, "Board", dashboard_body=stack.to_json_string({"widgets": [cloudwatch.AlarmStatusWidget(alarms=alarms.alarms).to_json()]})
    )
    template = template_of(stack)
    logical_id = resolved(alarm.resource.logical_id)
    assert template["Resources"][logical_id]["DeletionPolicy"] == "Retain"
    (composite,) = resources(template, "AWS::CloudWatch::CompositeAlarm").values()
    rule = composite["Properties"]["AlarmRule"]["Fn::Join"][1]
    assert rule[:3] == ['(ALARM("', {"Fn::GetAtt": [logical_id, "Arn"]}, '") OR ALARM("']
    assert sum(1 for part in rule if isinstance(part, dict)) == 1 + len(alarms.latency_alarms)
    board = str(resources(template, "AWS::CloudWatch::Dashboard"))
    assert all(f"'{resolved(a.resource.logical_id)}', 'Arn'" in board for a in alarms.alarms)


def test_an_alarms_mixins_reach_its_cfn_alarm() -> None:
    import constructs

    @jsii.implements(constructs.IMixin)
    class Describe:
        def supports(self, construct: constructs.IConstruct) -> bool:
            return isinstance(construct, cloudwatch.CfnAlarm)

        def apply_to(self, construct: constructs.IConstruct) -> None:
            assert isinstance(construct, cloudwatch.CfnAlarm)
            construct.alarm_description = "described by a mixin"

    stack = new_stack()
    alarms = PoolAlarms(stack, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(stack, "E", "llm"), pools=POOLS)
    assert alarms.error_rate_alarm.with_(Describe()) is alarms.error_rate_alarm
    described = {k for k, v in resources(template_of(stack), "AWS::CloudWatch::Alarm").items() if v["Properties"]["AlarmDescription"] == "described by a mixin"}
    assert described == {stack.resolve(alarms.error_rate_alarm.resource.logical_id)}


def test_duration_helpers_hand_a_token_on() -> None:
    """A token duration in seconds is its number token (what CDK renders as the Ref), never int() of it."""
    from aws_cdk import Stack, Token

    from sagemaker_pools._validate import seconds_in_range, seconds_of

    stack = Stack()
    token = Duration.seconds(Token.as_number({"Ref": "Wait"}))
    assert stack.resolve(seconds_in_range(token, "x", 0, 10)) == {"Ref": "Wait"}  # not checked: known only at deploy time
    assert stack.resolve(seconds_of(token)) == {"Ref": "Wait"}
    assert (seconds_of(Duration.minutes(2)), seconds_in_range(Duration.minutes(2), "x", 0, 120)) == (120, 120)
    with pytest.raises(PoolConfigError):
        seconds_in_range(Duration.minutes(2), "x", 0, 60)


# -- L1 property types as plain dicts ---------------------------------------------------------------


def test_l1_properties_render_what_the_property_classes_render() -> None:
    """The dict jsii receives is the class's own rendering: same template values, nested and all."""
    from aws_cdk import aws_sagemaker as sagemaker

    from sagemaker_pools._l1 import l1_properties

    stack = new_stack()
    endpoint_config = sagemaker.CfnEndpointConfig
    pool = {"instance_type": "ml.g6.48xlarge", "priority": 2, "model_name_override": Aws.STACK_NAME}  # a token
    as_classes = endpoint_config.ProductionVariantProperty(
        variant_name="AllTraffic",
        initial_instance_count=2,
        instance_pools=[endpoint_config.InstancePoolProperty(**pool)],
        routing_config=endpoint_config.RoutingConfigProperty(routing_strategy="RANDOM"),
    )
    as_dicts = l1_properties(
        endpoint_config.ProductionVariantProperty,
        variant_name="AllTraffic",
        initial_instance_count=2,
        model_name=None,  # unset, as the class leaves it out
        instance_pools=[l1_properties(endpoint_config.InstancePoolProperty, **pool)],
        routing_config=l1_properties(endpoint_config.RoutingConfigProperty, routing_strategy="RANDOM"),
    )
    assert "modelName" not in as_dicts
    assert stack.resolve(as_dicts) == stack.resolve(as_classes)
    for index, config in enumerate((as_classes, as_dicts)):
        endpoint_config(stack, f"Config{index}", production_variants=[config])
    first, second = (r["Properties"] for r in resources(template_of(stack), "AWS::SageMaker::EndpointConfig").values())
    assert first == second and first["ProductionVariants"][0]["InstancePools"][0]["ModelNameOverride"] == {"Ref": "AWS::StackName"}


def test_l1_properties_refuse_a_field_the_type_does_not_have() -> None:
    from aws_cdk import aws_sagemaker as sagemaker

    from sagemaker_pools._l1 import l1_properties

    with pytest.raises(TypeError, match="InstancePoolProperty has no field 'instance_typ'"):
        l1_properties(sagemaker.CfnEndpointConfig.InstancePoolProperty, instance_typ="ml.g6.48xlarge", priority=1)
