"""PoolAlarms: what each alarm watches, the values its math reads, the API contract, bad input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from aws_cdk import Duration
from aws_cdk import aws_sns as sns

from sagemaker_pools import InstancePool, PoolAlarms, PoolConfigError, PooledEndpoint
from support.frozen import frozen
from support.contract import template_problems
from sagemaker_pools.metric_math import evaluate
from support.synth import imported_model, new_stack, resources, template_of

G6E, G6, P4D = "ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge"
POOLS = [
    InstancePool(instance_type=G6E, max_concurrency=32),
    InstancePool(instance_type=G6, max_concurrency=16),
    InstancePool(instance_type=P4D, max_concurrency=24),
]


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    """The pattern of the example: alarms on the fixed name first, then the endpoint rolls back on them."""
    stack = new_stack("Alarms")
    topic = sns.Topic(stack, "Topic")
    alarms = PoolAlarms(
        stack,
        "Alarms",
        endpoint=PooledEndpoint.from_endpoint_name(stack, "ByName", "llm"),
        pools=POOLS,
        p99_latency=Duration.seconds(20),
        p99_latency_by_type={P4D: Duration.seconds(30)},
        fallback_for=Duration.hours(2),
        max_capacity=8,
        topic=topic,
    )
    from sagemaker_pools import DeploymentPolicy

    PooledEndpoint(
        stack,
        "Ep",
        model=imported_model(stack),
        pools=POOLS,
        endpoint_name="llm",
        deployment=DeploymentPolicy.all_at_once(rollback_alarms=alarms.rollback_alarms),
    )
    return frozen(template_of(stack))  # type: ignore[no-any-return]


def _alarm(template: dict[str, Any], prefix: str) -> dict[str, Any]:
    (alarm,) = [v["Properties"] for k, v in resources(template, "AWS::CloudWatch::Alarm").items() if k.startswith(prefix)]
    return alarm


def _dims(stat: Mapping[str, Any]) -> dict[str, Any]:
    return {d["Name"]: d["Value"] for d in stat["Metric"]["Dimensions"]}


def test_latency_per_instance_type(template: dict[str, Any]) -> None:
    thresholds = {}
    for instance_type in (G6E, G6, P4D):
        alarm = _alarm(template, "AlarmsLatency" + instance_type.replace(".", ""))
        assert (alarm["MetricName"], alarm["Namespace"], alarm["ExtendedStatistic"]) == ("ModelLatency", "AWS/SageMaker", "p99")
        assert {d["Name"]: d["Value"] for d in alarm["Dimensions"]} == {"EndpointName": "llm", "VariantName": "AllTraffic", "InstanceType": instance_type}
        assert (alarm["Unit"], alarm["EvaluationPeriods"], alarm["DatapointsToAlarm"]) == ("Microseconds", 5, 3)
        thresholds[instance_type] = alarm["Threshold"]
    assert thresholds == {G6E: 20e6, G6: 20e6, P4D: 30e6}


def test_error_rate_reads_percent_of_invocations(template: dict[str, Any]) -> None:
    alarm = _alarm(template, "AlarmsErrorRate5xx")
    assert alarm["Threshold"] == 1 and alarm["ComparisonOperator"] == "GreaterThanThreshold"

    def data(errors: float | None, invocations: float | None) -> Any:
        return lambda stat: errors if stat["Metric"]["MetricName"] == "Invocation5XXErrors" else invocations

    assert evaluate(alarm["Metrics"], data(3, 200)) == pytest.approx(1.5)
    assert evaluate(alarm["Metrics"], data(None, 200)) == 0
    assert evaluate(alarm["Metrics"], data(0, 0)) is None  # no traffic: no data point, not breaching
    assert alarm["TreatMissingData"] == "notBreaching"


def test_fallback_in_use(template: dict[str, Any]) -> None:
    alarm = _alarm(template, "AlarmsFallbackInUse")
    # 2 hours of 5-minute periods, every one with fallback instances
    assert (alarm["EvaluationPeriods"], alarm["DatapointsToAlarm"], alarm["Threshold"]) == (24, 24, 0)
    stats = [q["MetricStat"] for q in alarm["Metrics"] if "MetricStat" in q]
    assert {_dims(s)["InstanceType"] for s in stats} == {G6, P4D}  # priority > 1 only
    assert {(s["Metric"]["MetricName"], s["Stat"], s["Period"]) for s in stats} == {("CPUUtilization", "SampleCount", 300)}

    def fleet(instances: Mapping[str, int]) -> Any:
        return lambda stat: (instances.get(_dims(stat)["InstanceType"], 0) * 5) or None

    assert evaluate(alarm["Metrics"], fleet({G6E: 4})) is None  # no fallback instance: no data, not breaching
    assert evaluate(alarm["Metrics"], fleet({G6E: 2, P4D: 1})) > 0  # type: ignore[operator]


def test_at_max_capacity(template: dict[str, Any]) -> None:
    alarm = _alarm(template, "AlarmsAtMaxCapacity")
    assert (alarm["EvaluationPeriods"], alarm["Threshold"], alarm["ComparisonOperator"]) == (3, 7.5, "GreaterThanThreshold")
    (stat,) = [q["MetricStat"] for q in alarm["Metrics"] if "MetricStat" in q]
    assert "InstanceType" not in _dims(stat)
    # 60-second publishing: 5 samples per instance per 5-minute period
    for instances in (7, 8):
        value = evaluate(alarm["Metrics"], lambda s, n=instances: n * 5.0)  # type: ignore[misc]
        assert value == pytest.approx(instances)
    assert evaluate(alarm["Metrics"], lambda s: 8 * 5.0 - 1) > alarm["Threshold"]  # type: ignore[operator]  # one late sample


def test_rollback_alarms_and_notifications(template: dict[str, Any]) -> None:
    (endpoint,) = resources(template, "AWS::SageMaker::Endpoint").values()
    rollback = endpoint["Properties"]["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"]
    names = sorted(a["AlarmName"]["Ref"] for a in rollback)
    assert len(names) == 4 and all(n.startswith(("AlarmsErrorRate5xx", "AlarmsLatency")) for n in names)
    for alarm in resources(template, "AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        assert props["AlarmActions"] == props["OKActions"] == [{"Ref": next(iter(resources(template, "AWS::SNS::Topic")))}]
        assert props["TreatMissingData"] == "notBreaching"
    assert len(resources(template, "AWS::CloudWatch::Alarm")) == 6


def test_every_alarm_satisfies_put_metric_alarm(template: dict[str, Any]) -> None:
    problems = template_problems(template)
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    assert {k: problems[k] for k in alarms if problems[k]} == {}


def test_defaults_single_pool_and_max_from_auto_scale() -> None:
    stack = new_stack()
    endpoint = PooledEndpoint(stack, "Ep", model=imported_model(stack), pools=POOLS[:1])
    endpoint.auto_scale(max_capacity=5)
    alarms = PoolAlarms(stack, "Alarms", endpoint=endpoint)
    assert alarms.fallback_alarm is None  # nothing to fall back to
    assert alarms.at_max_capacity_alarm is not None
    template = template_of(stack)
    assert _alarm(template, "AlarmsAtMaxCapacity")["Threshold"] == 4.5
    assert _alarm(template, "AlarmsLatency")["Threshold"] == 30e6  # 30 s default
    with pytest.raises(PoolConfigError) as error:
        _ = alarms.rollback_alarms  # generated name: Endpoint -> Alarm -> Endpoint would be a cycle
    assert error.value.field == "PoolAlarms.rollback_alarms"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"p99_latency_by_type": {"ml.p5.48xlarge": Duration.seconds(1)}}, "PoolAlarms.p99_latency_by_type"),
        ({"p99_latency": Duration.seconds(0)}, "PoolAlarms.p99_latency"),
        ({"p99_latency": 20}, "PoolAlarms.p99_latency"),
        ({"error_rate_percent": 0}, "PoolAlarms.error_rate_percent"),
        ({"error_rate_percent": 150}, "PoolAlarms.error_rate_percent"),
        ({"fallback_for": Duration.minutes(7)}, "PoolAlarms.fallback_for"),
        ({"fallback_for": Duration.days(2)}, "PoolAlarms.fallback_for"),
        ({"at_max_capacity_for": Duration.minutes(1)}, "PoolAlarms.at_max_capacity_for"),
        ({"metric_publish_frequency": Duration.seconds(45)}, "PoolAlarms.metric_publish_frequency"),
        ({"max_capacity": 0}, "PoolAlarms.max_capacity"),
        ({"pools": []}, "PoolAlarms.pools"),
    ],
)
def test_bad_input(kwargs: dict[str, Any], field: str) -> None:
    stack = new_stack()
    kwargs.setdefault("pools", POOLS)
    with pytest.raises(PoolConfigError) as error:
        PoolAlarms(stack, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(stack, "E", "llm"), **kwargs)
    assert error.value.field == field


def test_imported_endpoint_needs_pools() -> None:
    stack = new_stack()
    with pytest.raises(PoolConfigError) as error:
        PoolAlarms(stack, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(stack, "E", "llm"))
    assert error.value.field == "PoolAlarms.pools"


def test_example_stack_alarms(example_templates: dict[str, dict[str, Any]]) -> None:
    """The example: rollback on its own alarms, all of them valid PutMetricAlarm requests."""
    template = example_templates["RealtimePooledLlm"]
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    assert len(alarms) == 6
    problems = template_problems(template)
    assert {k: problems[k] for k in alarms if problems[k]} == {}
    (endpoint,) = resources(template, "AWS::SageMaker::Endpoint").values()
    rollback = endpoint["Properties"]["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"]
    assert {a["AlarmName"]["Ref"] for a in rollback} <= set(alarms)
