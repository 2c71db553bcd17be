"""PoolAlarms: what each alarm watches, the values its math reads, the API contract, bad input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from aws_cdk import Duration
from aws_cdk import aws_sns as sns

from sagemaker_pools import CapacitySize, DeploymentPolicy, InstancePool, PoolAlarms, PoolConfigError, PooledEndpoint
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
    deployment = DeploymentPolicy.canary(
        canary_size=CapacitySize.percent(25), wait_interval=Duration.minutes(10), termination_wait=Duration.minutes(5)
    )
    alarms = PoolAlarms(
        stack,
        "Alarms",
        endpoint=PooledEndpoint.from_endpoint_name(stack, "ByName", "llm"),
        pools=POOLS,
        p99_latency=Duration.seconds(20),
        p99_latency_by_type={P4D: Duration.seconds(30)},
        fallback_for=Duration.hours(2),
        max_capacity=8,
        deployment=deployment,
        topic=topic,
    )
    PooledEndpoint(
        stack,
        "Ep",
        model=imported_model(stack),
        pools=POOLS,
        endpoint_name="llm",
        deployment=deployment.with_rollback_alarms(alarms.rollback_alarms),
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
    assert {(s["Metric"]["Namespace"], s["Metric"]["MetricName"], s["Stat"], s["Period"]) for s in stats} == {
        ("AWS/SageMaker", "InstanceCount", "Maximum", 300)
    }

    def fleet(instances: Mapping[str, int]) -> Any:
        return lambda stat: float(instances[_dims(stat)["InstanceType"]]) if _dims(stat)["InstanceType"] in instances else None

    assert evaluate(alarm["Metrics"], fleet({G6E: 4})) is None  # no fallback instance: no data, not breaching
    assert evaluate(alarm["Metrics"], fleet({G6E: 2, P4D: 1})) > 0  # type: ignore[operator]


# -- at max capacity, and blue/green deployments ------------------------------------------------

#: A fleet over time: one ``{instance type: instances}`` reading a minute.
Timeline = list[dict[str, int]]


def _period_value(alarm: Mapping[str, Any], minutes: Timeline, statistic: str | None) -> float | None:
    """The alarm's math over one 5-minute period; each MetricStat reduced with its own statistic
    (or ``statistic``, to model a worst case)."""

    def data(stat: Mapping[str, Any]) -> float | None:
        t = _dims(stat)["InstanceType"]
        values = [float(m[t]) for m in minutes if m.get(t)]
        if not values:
            return None
        reduce = {"Minimum": min, "Maximum": max, "Average": lambda v: sum(v) / len(v)}[statistic or stat["Stat"]]
        return reduce(values)  # type: ignore[no-any-return, operator]

    return evaluate(alarm["Metrics"], data)


def _fires(alarm: Mapping[str, Any], timeline: Timeline, statistic: str | None = None) -> bool:
    """CloudWatch's M-of-N rule over 5-minute periods: ALARM once ``DatapointsToAlarm`` of the last
    ``EvaluationPeriods`` breach (missing data not breaching)."""
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold" and alarm["TreatMissingData"] == "notBreaching"
    breaching = []
    for start in range(0, len(timeline) - 4, 5):
        value = _period_value(alarm, timeline[start : start + 5], statistic)
        breaching.append(value is not None and value > alarm["Threshold"])
    n, m = alarm["EvaluationPeriods"], alarm["DatapointsToAlarm"]
    return any(sum(breaching[i : i + n]) >= m for i in range(max(1, len(breaching) - n + 1)))


def _blue_green(fleet: dict[str, int], green: dict[str, int], *, before: int, overlap: int, after: int) -> Timeline:
    """``fleet`` for ``before`` minutes, old and new fleets together for ``overlap``, then the new one."""
    both = {t: fleet.get(t, 0) + green.get(t, 0) for t in {*fleet, *green}}
    return [dict(fleet)] * before + [both] * overlap + [dict(green)] * after


def test_at_max_capacity(template: dict[str, Any]) -> None:
    alarm = _alarm(template, "AlarmsAtMaxCapacity")
    # The canary overlaps old and new fleets 2 x 10 + 5 = 25 minutes: 7 periods, not 3.
    assert (alarm["EvaluationPeriods"], alarm["DatapointsToAlarm"], alarm["Threshold"]) == (7, 7, 7.5)
    stats = [q["MetricStat"] for q in alarm["Metrics"] if "MetricStat" in q]
    assert {_dims(s)["InstanceType"] for s in stats} == {G6E, G6, P4D}
    assert {(s["Metric"]["Namespace"], s["Metric"]["MetricName"], s["Stat"], s["Period"]) for s in stats} == {
        ("AWS/SageMaker", "InstanceCount", "Minimum", 300)
    }
    for instances in (7, 8):
        value = evaluate(alarm["Metrics"], lambda s, n=instances: float(n) if _dims(s)["InstanceType"] == G6E else None)  # type: ignore[misc]
        assert value == pytest.approx(instances)
    # Mixed types add up.
    assert evaluate(alarm["Metrics"], lambda s: {G6E: 5.0, G6: 2.0, P4D: 1.0}[_dims(s)["InstanceType"]]) > alarm["Threshold"]  # type: ignore[operator]


@pytest.mark.parametrize("offset", range(5))
@pytest.mark.parametrize("worst_case", [None, "Maximum"])
def test_at_max_capacity_stays_quiet_through_a_blue_green_deployment(template: dict[str, Any], offset: int, worst_case: str | None) -> None:
    """Half the maximum, doubled for the canary's 25 minutes (at any alignment to the periods, and
    even if CloudWatch kept the highest reading of a period): no alarm."""
    alarm = _alarm(template, "AlarmsAtMaxCapacity")
    timeline = _blue_green({G6E: 4}, {G6E: 3, G6: 1}, before=20 + offset, overlap=25, after=30)
    assert not _fires(alarm, timeline, worst_case)
    # The 15-minute window it replaces would have fired on the same deployment.
    assert _fires({**alarm, "EvaluationPeriods": 3, "DatapointsToAlarm": 3}, timeline, worst_case)


def test_at_max_capacity_fires_at_max(template: dict[str, Any]) -> None:
    alarm = _alarm(template, "AlarmsAtMaxCapacity")
    assert _fires(alarm, [{G6E: 6, G6: 2}] * 40)  # genuinely at max for 40 minutes
    assert not _fires(alarm, [{G6E: 6, G6: 2}] * 30)  # not yet for 35
    assert not _fires(alarm, [{G6E: 7}] * 60)  # one below
    # At max when a deployment starts: the doubled reading is still "at max".
    assert _fires(alarm, _blue_green({G6E: 8}, {G6E: 8}, before=15, overlap=25, after=10))


def test_at_max_capacity_window_follows_the_deployment() -> None:
    def periods(deployment: DeploymentPolicy | None, **kwargs: Any) -> int:
        stack = new_stack()
        alarms = PoolAlarms(
            stack, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(stack, "E", "llm"), pools=POOLS,
            max_capacity=8, deployment=deployment, **kwargs,
        )
        assert alarms.at_max_capacity_alarm is not None
        return int(_alarm(template_of(stack), "AlarmsAtMaxCapacity")["EvaluationPeriods"])

    assert periods(None) == 3  # no overlap known: 15 minutes
    assert periods(DeploymentPolicy.all_at_once()) == 3  # 0 s overlap
    assert periods(DeploymentPolicy.all_at_once(wait_interval=Duration.minutes(10), termination_wait=Duration.minutes(10))) == 6
    # linear 25 %: 4 bakes of 5 minutes; rolling 2 instances of 8: 4 batches of 10 minutes
    assert periods(DeploymentPolicy.linear(step_size=CapacitySize.percent(25), wait_interval=Duration.minutes(5))) == 6
    assert periods(DeploymentPolicy.rolling(batch_size=CapacitySize.instances(2), bake_time=Duration.minutes(10))) == 10
    assert periods(None, at_max_capacity_for=Duration.hours(1)) == 12
    # A PooledEndpoint's own policy is used.
    stack = new_stack()
    endpoint = PooledEndpoint(
        stack, "Ep", model=imported_model(stack), pools=POOLS,
        deployment=DeploymentPolicy.canary(canary_size=CapacitySize.percent(25), wait_interval=Duration.minutes(10)),
    )
    endpoint.auto_scale(max_capacity=8)
    PoolAlarms(stack, "Alarms", endpoint=endpoint)
    assert _alarm(template_of(stack), "AlarmsAtMaxCapacity")["EvaluationPeriods"] == 6  # 20 minutes: 4 + 2
    with pytest.raises(PoolConfigError) as error:
        periods(DeploymentPolicy.all_at_once(wait_interval=Duration.minutes(30)), at_max_capacity_for=Duration.minutes(30))
    assert error.value.field == "PoolAlarms.at_max_capacity_for" and "40 minutes" in str(error.value)


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
    assert _alarm(template, "AlarmsAtMaxCapacity")["EvaluationPeriods"] == 3
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
        ({"deployment": "canary"}, "PoolAlarms.deployment"),
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
