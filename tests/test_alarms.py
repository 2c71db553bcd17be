"""PoolAlarms: what each alarm watches, the values its math reads, the API contract, bad input."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from aws_cdk import Duration
from aws_cdk import aws_sns as sns

from sagemaker_pools import (
    CapacitySize,
    DeploymentPolicy,
    InstanceCountSource,
    InstancePool,
    PoolAlarms,
    PoolConfigError,
    PooledEndpoint,
    UtilizationStrategy,
)
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
    # A documented metric with the documented dimension: presence, whatever its count means.
    assert {(s["Metric"]["Namespace"], s["Metric"]["MetricName"], s["Stat"], s["Period"]) for s in stats} == {
        ("/aws/sagemaker/Endpoints", "CPUUtilization", "SampleCount", 300)
    }

    def fleet(instances: Mapping[str, int]) -> Any:
        return lambda stat: float(instances[_dims(stat)["InstanceType"]]) if _dims(stat)["InstanceType"] in instances else None

    assert evaluate(alarm["Metrics"], fleet({G6E: 4})) is None  # no fallback instance: no data, not breaching
    assert evaluate(alarm["Metrics"], fleet({G6E: 2, P4D: 1})) > 0  # type: ignore[operator]


def test_the_launch_posts_instance_count_is_an_explicit_choice() -> None:
    stack = new_stack()
    PoolAlarms(
        stack, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(stack, "E", "llm"), pools=POOLS, max_capacity=8,
        count_source=InstanceCountSource.INSTANCE_COUNT_METRIC,
    )
    template = template_of(stack)
    for prefix, statistic in (("AlarmsFallbackInUse", "Maximum"), ("AlarmsAtMaxCount", "Minimum")):
        stats = [q["MetricStat"] for q in _alarm(template, prefix)["Metrics"] if "MetricStat" in q]
        assert {(s["Metric"]["Namespace"], s["Metric"]["MetricName"], s["Stat"]) for s in stats} == {("AWS/SageMaker", "InstanceCount", statistic)}


def test_no_alarm_reads_an_undocumented_metric_by_default(example_templates: dict[str, dict[str, Any]]) -> None:
    """InstanceCount is named only by the launch post: nothing the library makes reads it unless asked."""
    for name, template in example_templates.items():
        for logical_id, resource in template["Resources"].items():
            assert '"InstanceCount"' not in json.dumps(resource), (name, logical_id)


# -- at max capacity, under every deployment type --------------------------------------------------


@dataclass(frozen=True)
class Minute:
    """One minute of a fleet: the instances taking traffic and those that only run (the other fleet
    of a deployment), per type, and the utilization of each serving instance (concurrency over its
    pool's max_concurrency)."""

    serving: Mapping[str, int]
    idle: Mapping[str, int] = field(default_factory=dict)
    utilization: float = 0.5

    def present(self, instance_type: str) -> int:
        return self.serving.get(instance_type, 0) + self.idle.get(instance_type, 0)

    def data(self, stat: Mapping[str, Any]) -> float | None:
        """What CloudWatch would hold for ``stat`` this minute. InvocationsPerInstance is normalized
        by every instance present (the reading under which a deployment's count reads highest)."""
        name, dims = stat["Metric"]["MetricName"], _dims(stat)
        invocations = 100.0 * sum(self.serving.values())
        if name == "Invocations":
            return invocations or None
        if name == "InvocationsPerInstance":
            active = sum(self.present(t) for t in (G6E, G6, P4D))
            return invocations / active if invocations else None
        if name == "CPUUtilization":
            return float(self.present(dims["InstanceType"])) or None
        if name == "ConcurrentRequestsPerModel":
            t = dims["InstanceType"]
            return self.utilization * MAX_CONCURRENCY[t] if self.serving.get(t) else None
        raise AssertionError(f"the alarms read {name}")


Timeline = list[Minute]
MAX_CONCURRENCY = {p.instance_type: float(p.max_concurrency or 0) for p in POOLS}


def _reduce(statistic: str, values: list[float]) -> float:
    return {"Minimum": min, "Maximum": max, "Sum": sum, "SampleCount": sum, "Average": lambda v: sum(v) / len(v)}[statistic](values)  # type: ignore[no-any-return, operator]


def _breaches(alarm: Mapping[str, Any], minutes: Timeline) -> bool | None:
    """One period of ``alarm``: each MetricStat reduced over the period with its own statistic."""

    def data(stat: Mapping[str, Any]) -> float | None:
        values = [v for m in minutes if (v := m.data(stat)) is not None]
        return _reduce(stat["Stat"], values) if values else None

    value = evaluate(alarm["Metrics"], data)
    if value is None:
        return None  # notBreaching
    compare = {"GreaterThanThreshold": float.__gt__, "GreaterThanOrEqualToThreshold": float.__ge__}[alarm["ComparisonOperator"]]
    return bool(compare(float(value), float(alarm["Threshold"])))


def _in_alarm(alarm: Mapping[str, Any], timeline: Timeline, minute: int) -> bool:
    """CloudWatch's M-of-N rule over the periods that ended by ``minute`` (missing data not breaching)."""
    assert alarm["TreatMissingData"] == "notBreaching"
    step = next(int(q["MetricStat"]["Period"]) for q in alarm["Metrics"] if "MetricStat" in q) // 60
    ends = range(minute - minute % step, 0, -step)
    recent = [bool(_breaches(alarm, timeline[end - step : end])) for end in list(ends)[: alarm["EvaluationPeriods"]]]
    return sum(recent) >= alarm["DatapointsToAlarm"]


def _at_max_fires(template: Mapping[str, Any], timeline: Timeline) -> bool:
    """The composite: the count half and any saturation half in ALARM at the same minute."""
    (composite,) = resources(template, "AWS::CloudWatch::CompositeAlarm").values()
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    count = next(a["Properties"] for k, a in alarms.items() if k.startswith("AlarmsAtMaxCount"))
    saturated = [a["Properties"] for k, a in alarms.items() if k.startswith("AlarmsSaturated")]
    assert saturated and composite["Properties"]["AlarmRule"]
    return any(
        _in_alarm(count, timeline, t) and any(_in_alarm(s, timeline, t) for s in saturated) for t in range(5, len(timeline) + 1)
    )


def _steady(minutes: int, serving: Mapping[str, int], utilization: float, idle: Mapping[str, int] | None = None) -> Timeline:
    return [Minute(dict(serving), dict(idle or {}), utilization)] * minutes


AT_TARGET = 0.65  # the autoscaler holds the fleet about its 0.7 target
SHORT = 0.9  # at its maximum and above target: the fleet needs more than it may have


def test_at_max_capacity_is_a_composite_of_count_and_signal(template: dict[str, Any]) -> None:
    (composite,) = resources(template, "AWS::CloudWatch::CompositeAlarm").values()
    count = _alarm(template, "AlarmsAtMaxCount")
    saturated = _alarm(template, "AlarmsSaturated")
    # The count: Invocations / InvocationsPerInstance (both documented), rounded, >= the maximum.
    stats = {q["MetricStat"]["Metric"]["MetricName"]: q["MetricStat"] for q in count["Metrics"] if "MetricStat" in q}
    assert {(n, s["Stat"], s["Period"]) for n, s in stats.items()} == {("Invocations", "Sum", 300), ("InvocationsPerInstance", "Sum", 300)}
    assert (count["ComparisonOperator"], count["Threshold"], count["EvaluationPeriods"], count["DatapointsToAlarm"]) == (
        "GreaterThanOrEqualToThreshold", 8, 3, 3,
    )
    assert evaluate(count["Metrics"], lambda s: {"Invocations": 1000.0, "InvocationsPerInstance": 125.5}[s["Metric"]["MetricName"]]) == 8
    # The signal: the weighted utilization the example scales on, 12 of 15 minutes above 0.7.
    assert (saturated["Threshold"], saturated["EvaluationPeriods"], saturated["DatapointsToAlarm"]) == (0.7, 15, 12)
    assert {q["MetricStat"]["Metric"]["MetricName"] for q in saturated["Metrics"] if "MetricStat" in q} == {"ConcurrentRequestsPerModel"}
    # Only the composite notifies; its rule names both halves.
    rule = json.dumps(composite["Properties"]["AlarmRule"])
    assert rule.count("ALARM(") == 2 and " AND " in rule
    assert "AlarmActions" in composite["Properties"] and "AlarmActions" not in count and "AlarmActions" not in saturated


def test_at_max_capacity_fires_on_a_fleet_that_is_short(template: dict[str, Any]) -> None:
    fleet = {G6E: 6, G6: 2}
    assert _at_max_fires(template, _steady(20, fleet, SHORT))  # 8 of 8, above target for 15 minutes
    assert not _at_max_fires(template, _steady(10, fleet, SHORT))  # not yet
    assert not _at_max_fires(template, _steady(60, fleet, AT_TARGET))  # at max, and coping
    assert not _at_max_fires(template, _steady(60, {G6E: 7}, SHORT))  # short, but may still add one


def _deployment(kind: str, blue: Mapping[str, int], green: Mapping[str, int], utilization: float) -> Timeline:
    """A deployment minute by minute, from the green fleet's creation: provisioning (up to the
    provisioning timeout, 20 minutes here), the shifts and bakes, the termination wait."""
    n = sum(blue.values())
    provisioning = [Minute(blue, green, utilization)] * 20
    if kind == "all-at-once":
        steps = [Minute(green, blue, utilization)] * 25
    elif kind == "canary":
        half = {t: v // 4 for t, v in green.items()}
        steps = [Minute({**blue}, half, utilization)] * 10 + [Minute(green, blue, utilization)] * 15
    elif kind == "linear":  # blue shrinks as green grows: the same portion deactivated at each step
        def portion(fleet: Mapping[str, int], k: int) -> dict[str, int]:  # k quarters, rounded up
            return {t: -(-v * k // 4) for t, v in fleet.items()}

        steps = []
        for k in range(1, 5):
            serving_green, shed_blue = portion(green, k), portion(blue, k)
            serving_blue = {t: v - shed_blue[t] for t, v in blue.items()}
            steps += [Minute({t: serving_green.get(t, 0) + serving_blue.get(t, 0) for t in (G6E, G6, P4D)}, {}, utilization)] * 30
        # The next step's green instances are provisioned before blue sheds its portion.
        provisioning = [Minute(blue, portion(green, 1), utilization)] * 20
    elif kind == "rolling":  # N + one batch for the whole rollout, each batch provisioned and baked
        batch = -(-n // 4)  # 25 % batches, rounded up: 2 of 6
        steps = [Minute(blue, {G6E: batch}, utilization)] * (4 * 30)
        provisioning = []
    elif kind == "rollback":  # green failed its alarms: the whole blue fleet comes back at once
        steps = [Minute(green, {}, utilization)] * 10 + [Minute(blue, green, utilization)] * 30
    else:
        raise AssertionError(kind)
    return _steady(20, blue, utilization) + provisioning + steps + _steady(20, green, utilization)


DEPLOYMENTS = ["all-at-once", "canary", "linear", "rolling", "rollback"]


@pytest.mark.parametrize("kind", DEPLOYMENTS)
def test_at_max_capacity_stays_quiet_through_every_deployment_type(template: dict[str, Any], kind: str) -> None:
    """6 of 8 instances at the scaling target; the count reads 8 to 12 for up to two hours."""
    timeline = _deployment(kind, {G6E: 6}, {G6E: 4, G6: 2}, AT_TARGET)
    (count,) = [a["Properties"] for k, a in resources(template, "AWS::CloudWatch::Alarm").items() if k.startswith("AlarmsAtMaxCount")]
    assert any(_in_alarm(count, timeline, t) for t in range(5, len(timeline) + 1))  # the count alone would fire
    assert not _at_max_fires(template, timeline)


@pytest.mark.parametrize("kind", DEPLOYMENTS)
def test_at_max_capacity_fires_when_a_deployment_meets_a_short_fleet(template: dict[str, Any], kind: str) -> None:
    assert _at_max_fires(template, _deployment(kind, {G6E: 8}, {G6E: 8}, SHORT))


def test_at_max_capacity_window() -> None:
    def windows(**kwargs: Any) -> tuple[int, int, int]:
        stack = new_stack()
        PoolAlarms(stack, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(stack, "E", "llm"), pools=POOLS, max_capacity=8, **kwargs)
        template = template_of(stack)
        count, saturated = _alarm(template, "AlarmsAtMaxCount"), _alarm(template, "AlarmsSaturated")
        return count["EvaluationPeriods"], saturated["EvaluationPeriods"], saturated["DatapointsToAlarm"]

    assert windows() == (3, 15, 12)
    assert windows(at_max_capacity_for=Duration.hours(1)) == (12, 60, 48)
    assert windows(at_max_capacity_for=Duration.minutes(5)) == (1, 5, 4)


def test_the_saturation_signal_is_the_scaling_policys_own() -> None:
    stack = new_stack()
    endpoint = PooledEndpoint(stack, "Ep", model=imported_model(stack), pools=POOLS)
    scaling = endpoint.auto_scale(max_capacity=6)
    scaling.scale_on_weighted_utilization(target=0.6, strategy=UtilizationStrategy.INSTANCE_WEIGHTED)
    scaling.scale_on_invocations_per_instance(target=500)
    alarms = PoolAlarms(stack, "Alarms", endpoint=endpoint)
    template = template_of(stack)
    assert [a.node.id for a in alarms.saturation_alarms] == ["SaturatedWeightedUtilization", "SaturatedInvocationsPerInstance"]
    weighted = _alarm(template, "AlarmsSaturatedWeightedUtilization")
    (policy,) = [p["Properties"] for p in resources(template, "AWS::ApplicationAutoScaling::ScalingPolicy").values() if "WeightedUtilization" in p["Properties"]["PolicyName"]]
    metrics = policy["TargetTrackingScalingPolicyConfiguration"]["CustomizedMetricSpecification"]["Metrics"]
    assert weighted["Threshold"] == 0.6
    assert sorted(json.dumps(q.get("Expression") or q["MetricStat"]["Metric"], sort_keys=True) for q in weighted["Metrics"]) == sorted(
        json.dumps(q.get("Expression") or q["MetricStat"]["Metric"], sort_keys=True) for q in metrics
    )
    per_instance = _alarm(template, "AlarmsSaturatedInvocationsPerInstance")
    assert (per_instance["Threshold"], per_instance["MetricName"], per_instance["Statistic"]) == (500, "InvocationsPerInstance", "Sum")
    # Either signal above its target counts.
    (composite,) = resources(template, "AWS::CloudWatch::CompositeAlarm").values()
    assert " OR " in json.dumps(composite["Properties"]["AlarmRule"])


def test_an_explicit_saturation_metric() -> None:
    stack = new_stack()
    endpoint = PooledEndpoint.from_endpoint_name(stack, "E", "llm")
    PoolAlarms(
        stack, "Alarms", endpoint=endpoint, pools=[InstancePool(instance_type=G6E)], max_capacity=4,
        saturation_metric=endpoint.metric_gpu_utilization(statistic="Average"), saturation_threshold=80,
    )
    alarm = _alarm(template_of(stack), "AlarmsSaturated")
    assert (alarm["Threshold"], alarm["MetricName"], alarm["Namespace"]) == (80, "GPUUtilization", "/aws/sagemaker/Endpoints")


def test_at_max_capacity_without_a_saturation_signal_is_refused() -> None:
    stack = new_stack()
    with pytest.raises(PoolConfigError) as error:
        PoolAlarms(stack, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(stack, "E", "llm"), pools=[InstancePool(instance_type=G6E)], max_capacity=4)
    assert error.value.field == "PoolAlarms.saturation_metric" and "max_concurrency" in str(error.value)
    # No at-max alarm asked for: nothing to refuse.
    PoolAlarms(stack, "Quiet", endpoint=PooledEndpoint.from_endpoint_name(stack, "E2", "llm"), pools=[InstancePool(instance_type=G6E)])


def test_rollback_alarms_and_notifications(template: dict[str, Any]) -> None:
    (endpoint,) = resources(template, "AWS::SageMaker::Endpoint").values()
    rollback = endpoint["Properties"]["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"]
    names = sorted(a["AlarmName"]["Ref"] for a in rollback)
    assert len(names) == 4 and all(n.startswith(("AlarmsErrorRate5xx", "AlarmsLatency")) for n in names)
    topic = [{"Ref": next(iter(resources(template, "AWS::SNS::Topic")))}]
    for logical_id, alarm in resources(template, "AWS::CloudWatch::Alarm").items():
        props = alarm["Properties"]
        # The at-max halves notify only through their composite.
        halves = logical_id.startswith(("AlarmsAtMaxCount", "AlarmsSaturated"))
        assert props.get("AlarmActions") == props.get("OKActions") == (None if halves else topic)
        assert props["TreatMissingData"] == "notBreaching"
    assert len(resources(template, "AWS::CloudWatch::Alarm")) == 7
    (composite,) = resources(template, "AWS::CloudWatch::CompositeAlarm").values()
    assert composite["Properties"]["AlarmActions"] == composite["Properties"]["OKActions"] == topic


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
    assert _alarm(template, "AlarmsAtMaxCount")["Threshold"] == 5
    assert _alarm(template, "AlarmsAtMaxCount")["EvaluationPeriods"] == 3
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
        ({"count_source": "cpu-samples"}, "PoolAlarms.count_source"),
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
    assert len(alarms) == 7
    problems = template_problems(template)
    assert {k: problems[k] for k in alarms if problems[k]} == {}
    (endpoint,) = resources(template, "AWS::SageMaker::Endpoint").values()
    rollback = endpoint["Properties"]["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"]
    assert {a["AlarmName"]["Ref"] for a in rollback} <= set(alarms)
