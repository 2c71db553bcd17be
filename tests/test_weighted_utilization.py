"""Weighted utilization: the *value* each strategy reads, evaluated from the synthesized policies.

Each strategy's scaling policy is synthesized once; sagemaker_pools/metric_math.py evaluates its
``CustomizedMetricSpecification.Metrics`` on fleet scenarios and compares with an independent
reference computation of the strategy's definition (docs/scaling.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_pools import InstancePool, PoolConfigError, PooledEndpoint, UtilizationStrategy
from sagemaker_pools.metric_math import MetricMathError, check_queries, evaluate
from sagemaker_pools.metrics import MetricSource, weighted_utilization, weighted_utilization_query
from sagemaker_pools.queries import Math, Stat, flatten, from_cloudwatch
from support.frozen import frozen
from support.synth import imported_model, new_stack, resources, template_of

ROOT = Path(__file__).resolve().parents[1]

#: The example stack's pools: g6e first, g6, p4d last, with what one instance of each sustains.
EXAMPLE = (("ml.g6e.48xlarge", 32.0), ("ml.g6.48xlarge", 16.0), ("ml.p4d.24xlarge", 24.0))
FIVE = EXAMPLE + (("ml.p5.48xlarge", 64.0), ("ml.g5.48xlarge", 8.0))
STRATEGIES = list(UtilizationStrategy)

#: fleet: {instance type: (instances, requests in flight per instance)}
Fleet = Mapping[str, tuple[int, float]]
G6E, G6, P4D = (t for t, _ in EXAMPLE)
SCENARIOS: dict[str, Fleet] = {
    "all idle (2 g6e, no requests)": {G6E: (2, 0)},
    "only priority 1, at 25 %": {G6E: (2, 8)},
    "only priority 1, at 50 %": {G6E: (2, 16)},
    "only priority 1, at 100 %": {G6E: (2, 32)},
    "only the fallback g6, at 100 %": {G6: (3, 16)},
    "mixed, equal in-flight (LOR): 2 g6e + 1 g6 at 12 each": {G6E: (2, 12), G6: (1, 12)},
    "mixed, unequal: 1 g6e at 24, 2 g6 at 4, 1 p4d at 12": {G6E: (1, 24), G6: (2, 4), P4D: (1, 12)},
    "a type with instances but no traffic: 2 g6e at 16, 1 g6 idle": {G6E: (2, 16), G6: (1, 0)},
    "all types present at 50 %": {G6E: (1, 16), G6: (1, 8), P4D: (1, 12)},
    "all types present at 100 %": {G6E: (2, 32), G6: (1, 16), P4D: (1, 24)},
}


def _pools(spec: tuple[tuple[str, float], ...]) -> list[InstancePool]:
    return [InstancePool(instance_type=t, max_concurrency=c) for t, c in spec]


def _queries(template: dict[str, Any], endpoint_id: str) -> list[dict[str, Any]]:
    (policy,) = [
        r for k, r in resources(template, "AWS::ApplicationAutoScaling::ScalingPolicy").items() if k.startswith(endpoint_id)
    ]
    spec = policy["Properties"]["TargetTrackingScalingPolicyConfiguration"]["CustomizedMetricSpecification"]
    return spec["Metrics"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def policies() -> dict[tuple[str, str], list[dict[str, Any]]]:
    """``{(pool set, strategy name): synthesized query list}``, all from one stack."""
    return frozen(build_policies())  # type: ignore[no-any-return]


def build_policies() -> dict[tuple[str, str], list[dict[str, Any]]]:
    """One stack with an endpoint per (pool set, strategy), each with its weighted policy."""
    stack = new_stack("Weighted")
    model = imported_model(stack)
    built: dict[tuple[str, str], str] = {}
    for label, spec in (("example", EXAMPLE), ("five", FIVE), ("one", EXAMPLE[:1])):
        for strategy in STRATEGIES:
            endpoint_id = f"{label}{strategy.name.replace('_', '')}"
            endpoint = PooledEndpoint(stack, endpoint_id, model=model, pools=_pools(spec))
            endpoint.auto_scale(max_capacity=4).scale_on_weighted_utilization(strategy=strategy)
            built[(label, strategy.name)] = endpoint_id
    template = template_of(stack)
    return {key: _queries(template, endpoint_id) for key, endpoint_id in built.items()}


def fleet_data(fleet: Fleet, count_factor: int = 1) -> Callable[[Mapping[str, Any]], float | None]:
    """What CloudWatch holds for ``fleet`` at one timestamp: nothing for a type without instances."""

    def data(stat: Mapping[str, Any]) -> float | None:
        metric = stat["Metric"]
        dims = {d["Name"]: d["Value"] for d in metric["Dimensions"]}
        assert dims["VariantName"] == "AllTraffic" and "EndpointName" in dims
        instances, in_flight = fleet.get(dims["InstanceType"], (0, 0.0))
        if instances == 0:
            return None
        if metric["MetricName"] == "ConcurrentRequestsPerModel":
            assert stat["Stat"] == "Maximum"
            return in_flight
        # The default count source: a documented metric's sample count, one per instance a minute.
        assert (metric["Namespace"], metric["MetricName"], stat["Stat"]) == ("/aws/sagemaker/Endpoints", "CPUUtilization", "SampleCount")
        return float(instances * count_factor)

    return data


def reference(strategy: UtilizationStrategy, spec: tuple[tuple[str, float], ...], fleet: Fleet) -> float:
    """The strategy's definition (docs/scaling.md), computed directly."""
    u = {t: (fleet[t][1] / cap if fleet.get(t, (0, 0))[0] else 0.0) for t, cap in spec}
    n = {t: fleet.get(t, (0, 0))[0] for t, _ in spec}
    if strategy is UtilizationStrategy.AVERAGE_OVER_TYPES:
        return sum(u.values()) / len(spec)
    if strategy is UtilizationStrategy.MAX_OVER_TYPES or sum(n.values()) == 0:
        return max(u.values())
    return sum(u[t] * n[t] for t in u) / sum(n.values())


def read(policies: dict[tuple[str, str], list[dict[str, Any]]], pools: str, strategy: UtilizationStrategy, fleet: Fleet, k: int = 1) -> float | None:
    return evaluate(policies[(pools, strategy.name)], fleet_data(fleet, k))


# -- every strategy on every scenario ----------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_strategy_reads_its_definition(policies: Any, strategy: UtilizationStrategy, scenario: str) -> None:
    fleet = SCENARIOS[scenario]
    assert read(policies, "example", strategy, fleet) == pytest.approx(reference(strategy, EXAMPLE, fleet))


def test_the_default_is_not_diluted_by_empty_fallback_pools(policies: Any) -> None:
    only_first_at_max = SCENARIOS["only priority 1, at 100 %"]
    default = UtilizationStrategy.MAX_OVER_TYPES
    from sagemaker_pools.metrics import DEFAULT_UTILIZATION_STRATEGY

    assert DEFAULT_UTILIZATION_STRATEGY is default
    assert read(policies, "example", default, only_first_at_max) >= 0.95  # type: ignore[operator]
    assert read(policies, "example", UtilizationStrategy.INSTANCE_WEIGHTED, only_first_at_max) >= 0.95  # type: ignore[operator]
    # ... while the launch post's average reads a third and never reaches a 0.7 target.
    assert read(policies, "example", UtilizationStrategy.AVERAGE_OVER_TYPES, only_first_at_max) == pytest.approx(1 / 3)


@pytest.mark.parametrize("strategy", [UtilizationStrategy.MAX_OVER_TYPES, UtilizationStrategy.INSTANCE_WEIGHTED], ids=lambda s: s.name)
def test_adding_empty_pools_changes_nothing(policies: Any, strategy: UtilizationStrategy) -> None:
    for in_flight in (0, 5, 16, 32):
        fleet = {G6E: (3, float(in_flight))}
        one = read(policies, "one", strategy, fleet)
        assert read(policies, "example", strategy, fleet) == pytest.approx(one)
        assert read(policies, "five", strategy, fleet) == pytest.approx(one)
        assert one == pytest.approx(in_flight / 32)


def test_instance_weighting_ignores_a_doubled_count(policies: Any) -> None:
    """Old and new fleets both counted during a blue/green deployment: only the ratio between types matters."""
    for scenario, fleet in SCENARIOS.items():
        once = read(policies, "example", UtilizationStrategy.INSTANCE_WEIGHTED, fleet, k=1)
        doubled = read(policies, "example", UtilizationStrategy.INSTANCE_WEIGHTED, fleet, k=2)
        assert doubled == pytest.approx(once), scenario


def test_instance_weighting_falls_back_to_the_maximum_without_a_count_signal(policies: Any) -> None:
    fleet = SCENARIOS["mixed, unequal: 1 g6e at 24, 2 g6 at 4, 1 p4d at 12"]
    data = fleet_data(fleet)

    def no_counts(stat: Mapping[str, Any]) -> float | None:
        return None if stat["Metric"]["MetricName"] == "CPUUtilization" else data(stat)

    weighted = evaluate(policies[("example", "INSTANCE_WEIGHTED")], no_counts)
    assert weighted == pytest.approx(reference(UtilizationStrategy.MAX_OVER_TYPES, EXAMPLE, fleet))


def test_no_data_at_all_is_no_data_point(policies: Any) -> None:
    """An endpoint with no instance publishes nothing: the policy's alarm sees missing data, not 0."""
    for strategy in STRATEGIES:
        assert read(policies, "example", strategy, {}) is None


_fleets = st.dictionaries(
    st.sampled_from([t for t, _ in FIVE]),
    st.tuples(st.integers(min_value=0, max_value=20), st.integers(min_value=0, max_value=80).map(float)),
    max_size=5,
)


@settings(max_examples=60, deadline=None)
@given(fleet=_fleets)
def test_random_fleets_read_their_definition(policies: Any, fleet: Fleet) -> None:
    values = {}
    for strategy in STRATEGIES:
        expected = reference(strategy, FIVE, fleet)
        got = read(policies, "five", strategy, fleet)
        if all(n == 0 for n, _ in fleet.values()):
            assert got is None
            continue
        assert got == pytest.approx(expected)
        values[strategy] = got
    if values:
        # Neither the average nor the instance-weighted mean exceeds the busiest type; the weighted
        # mean lies between the present types' extremes.
        busiest = values[UtilizationStrategy.MAX_OVER_TYPES]
        assert values[UtilizationStrategy.AVERAGE_OVER_TYPES] <= busiest + 1e-9
        assert values[UtilizationStrategy.INSTANCE_WEIGHTED] <= busiest + 1e-9
        present = [in_flight / dict(FIVE)[t] for t, (n, in_flight) in fleet.items() if n]
        assert values[UtilizationStrategy.INSTANCE_WEIGHTED] >= min(present) - 1e-9


# -- CloudWatch's rules ---------------------------------------------------------------------------


def test_every_policy_fits_an_alarm(policies: Any) -> None:
    for (pools, strategy), queries in policies.items():
        check_queries(queries)
        stats = [q for q in queries if "MetricStat" in q]
        assert len(stats) <= 10, (pools, strategy)
    five_weighted = policies[("five", "INSTANCE_WEIGHTED")]
    assert sum(1 for q in five_weighted if "MetricStat" in q) == 10  # 5 pools x 2: exactly the limit


def test_single_pool_is_the_plain_ratio(policies: Any) -> None:
    for strategy in STRATEGIES:
        queries = policies[("one", strategy.name)]
        (top,) = [q for q in queries if q.get("ReturnData")]
        assert top["Expression"] == "c1 / 32"


def test_the_same_expression_drives_an_alarm() -> None:
    """metric_weighted_utilization() also works as an alarm metric and reads the same."""
    stack = new_stack("WeightedAlarm")
    endpoint = PooledEndpoint(stack, "Ep", model=imported_model(stack), pools=_pools(EXAMPLE))
    cloudwatch.Alarm(stack, "Hot", metric=endpoint.metric_weighted_utilization(), threshold=0.9, evaluation_periods=3)
    template = template_of(stack)
    (alarm,) = resources(template, "AWS::CloudWatch::Alarm").values()
    queries = alarm["Properties"]["Metrics"]
    for scenario, fleet in SCENARIOS.items():
        assert evaluate(queries, fleet_data(fleet)) == pytest.approx(
            reference(UtilizationStrategy.MAX_OVER_TYPES, EXAMPLE, fleet)
        ), scenario


# -- the query itself: ids, inputs, expressions, labels ----------------------------------------------

VARIANT = MetricSource.variant("llm", "AllTraffic")


def _concurrency(instance_type: str, statistic: str = "Maximum", period: int = 60) -> Stat:
    dims = (("EndpointName", "llm"), ("VariantName", "AllTraffic"), ("InstanceType", instance_type))
    return Stat("AWS/SageMaker", "ConcurrentRequestsPerModel", dims, statistic, period)


def _utilization(i: int, instance_type: str, capacity: str, statistic: str = "Maximum", period: int = 60) -> tuple[str, Math]:
    return f"u{i}", Math(f"c{i} / {capacity}", ((f"c{i}", _concurrency(instance_type, statistic, period)),), period, f"{instance_type} utilization")


def test_max_and_average_over_types_read_each_types_concurrency_over_its_capacity() -> None:
    u = (_utilization(1, G6E, "32"), _utilization(2, G6, "16"), _utilization(3, P4D, "24"))
    pools = _pools(EXAMPLE)
    assert weighted_utilization_query(VARIANT, pools) == Math("MAX([u1, u2, u3])", u, 60, "Weighted utilization (max-over-types)")
    assert weighted_utilization_query(VARIANT, pools, strategy=UtilizationStrategy.AVERAGE_OVER_TYPES) == Math(
        "(u1 + u2 + u3) / 3", u, 60, "Weighted utilization (average-over-types)"
    )


def test_instance_weighting_weighs_by_each_types_instance_count_and_falls_back_to_the_maximum() -> None:
    period = 300
    u = tuple(_utilization(i, t, c, "Average", period) for i, (t, c) in enumerate(((G6E, "32"), (G6, "16")), start=1))
    s = tuple(
        (f"s{i}", Stat("/aws/sagemaker/Endpoints", "CPUUtilization", (("EndpointName", "llm"), ("VariantName", "AllTraffic"), ("InstanceType", t)), "SampleCount", period, cloudwatch.Unit.PERCENT, f"instances {t}"))
        for i, t in enumerate((G6E, G6), start=1)
    )
    n = Math("s1 + s2", s, period, "instances")
    assert weighted_utilization_query(
        VARIANT, _pools(EXAMPLE[:2]), strategy=UtilizationStrategy.INSTANCE_WEIGHTED, statistic="Average", period=period, label="fleet"
    ) == Math("IF(FILL(n, 0) > 0, (u1 * s1 + u2 * s2) / n, MAX([u1, u2]))", (*u, *s, ("n", n)), period, "fleet")


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
def test_one_pool_is_its_concurrency_over_its_capacity_whatever_the_strategy(strategy: UtilizationStrategy) -> None:
    assert weighted_utilization_query(VARIANT, _pools(EXAMPLE[:1]), strategy=strategy, period=120) == Math(
        "c1 / 32", (("c1", _concurrency(G6E, period=120)),), 120, f"Weighted utilization ({strategy.value})"
    )


def test_a_component_reads_its_copies() -> None:
    component = MetricSource.inference_component("llm-ic")
    query = weighted_utilization_query(component, _pools(EXAMPLE[:2]), strategy=UtilizationStrategy.INSTANCE_WEIGHTED)
    flat = flatten(query)
    copies = [("InferenceComponentName", "llm-ic"), ("InstanceType", G6)]
    assert flat.stats["c2"] == Stat("AWS/SageMaker", "ConcurrentRequestsPerCopy", tuple(copies), "Maximum", 60)
    assert flat.stats["s2"] == Stat(
        "/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized", tuple(copies), "SampleCount", 60, cloudwatch.Unit.PERCENT, f"instances {G6}"
    )


@pytest.mark.parametrize("capacity, written", [(12.0, "12"), (2.5, "2.5"), (0.0000001, "0.0000001"), (1e20, "100000000000000000000"), (12.0000000001, "12"), (1 / 3, None)])
def test_a_capacity_is_written_as_a_plain_decimal(capacity: float, written: str | None) -> None:
    query = weighted_utilization_query(VARIANT, [InstancePool(instance_type=G6E, max_concurrency=capacity)])
    if written is not None:  # (nine decimals at most, and no trailing point)
        assert query.expression == f"c1 / {written}"
    # ... which CloudWatch (here the policies' evaluator) reads as the same number.
    queries = [{"Id": "c1", "MetricStat": {}, "ReturnData": False}, {"Id": "e", "Expression": query.expression, "ReturnData": True}]
    assert evaluate(queries, lambda stat: 1.0) == pytest.approx(1 / capacity, rel=1e-8)


def test_weighted_utilization_is_the_query_as_a_math_expression() -> None:
    pools = _pools(EXAMPLE)
    default = weighted_utilization(VARIANT, pools)
    assert (default.expression, default.label, default.period.to_seconds()) == ("MAX([u1, u2, u3])", "Weighted utilization (max-over-types)", 60)
    assert from_cloudwatch(default) == weighted_utilization_query(VARIANT, pools)
    for strategy in STRATEGIES:
        given = weighted_utilization(VARIANT, pools, strategy=strategy, statistic="Average", period=Duration.minutes(5), label="fleet")
        assert from_cloudwatch(given) == weighted_utilization_query(VARIANT, pools, strategy=strategy, statistic="Average", period=300, label="fleet")


def test_bad_pools_and_strategies_name_the_field() -> None:
    without = [InstancePool(instance_type=G6E, max_concurrency=32), InstancePool(instance_type=G6)]
    for build, field in ((weighted_utilization_query, "weighted_utilization"), (weighted_utilization, "weighted_utilization")):
        with pytest.raises(PoolConfigError) as error:
            build(VARIANT, without)  # type: ignore[operator]
        assert (error.value.field, error.value.value) == (f"{field}.pools[1].max_concurrency", None)
        assert error.value.allowed == (
            f"a number > 0 for every pool ({G6} has none): weighted utilization divides each type's concurrent requests by it"
        )
        with pytest.raises(PoolConfigError) as error:
            build(VARIANT, _pools(EXAMPLE), strategy="max")  # type: ignore[operator]
        assert (error.value.field, error.value.value) == (f"{field}.strategy", "max")
        assert error.value.allowed == "a UtilizationStrategy (AVERAGE_OVER_TYPES, MAX_OVER_TYPES, INSTANCE_WEIGHTED)"
        with pytest.raises(PoolConfigError) as error:
            build(VARIANT, [])  # type: ignore[operator]
        assert error.value.field == f"{field}.pools"
    with pytest.raises(PoolConfigError) as error:
        weighted_utilization(VARIANT, without, field="Dashboard")
    assert error.value.field == "Dashboard.pools[1].max_concurrency"
    with pytest.raises(PoolConfigError) as error:
        weighted_utilization_query(VARIANT, [], field="Dashboard")
    assert error.value.field == "Dashboard.pools"


# -- bad input --------------------------------------------------------------------------------------


def test_a_pool_without_max_concurrency_fails_only_when_weighted_scaling_is_asked() -> None:
    stack = new_stack()
    pools = [InstancePool(instance_type=G6E, max_concurrency=32), InstancePool(instance_type=G6)]
    endpoint = PooledEndpoint(stack, "Ep", model=imported_model(stack), pools=pools)
    scaling = endpoint.auto_scale(max_capacity=4)  # fine so far
    with pytest.raises(PoolConfigError) as error:
        scaling.scale_on_weighted_utilization()
    assert error.value.field == "PooledEndpoint.pools[1].max_concurrency"
    assert G6 in str(error.value)
    with pytest.raises(PoolConfigError) as error:
        endpoint.metric_weighted_utilization()
    assert error.value.field == "PooledEndpoint.pools[1].max_concurrency"


def test_bad_strategy_and_imported_endpoint_without_pools() -> None:
    stack = new_stack()
    endpoint = PooledEndpoint(stack, "Ep", model=imported_model(stack), pools=_pools(EXAMPLE))
    with pytest.raises(PoolConfigError) as error:
        endpoint.metric_weighted_utilization(strategy="max")  # type: ignore[arg-type]
    assert error.value.field == "PooledEndpoint.strategy"
    imported = PooledEndpoint.from_endpoint_name(stack, "Imported", "other")
    with pytest.raises(PoolConfigError) as error:
        imported.metric_weighted_utilization()
    assert error.value.field == "metric_weighted_utilization.pools"
    expression = imported.metric_weighted_utilization(pools=_pools(EXAMPLE))
    assert "MAX([u1, u2, u3])" == expression.expression


# -- the evaluator itself, on the CloudWatch user guide's own examples -----------------------------


def _series_eval(expression: str, columns: Mapping[str, list[float | None]]) -> list[float | None]:
    out = []
    for i in range(len(next(iter(columns.values())))):
        queries = [{"Id": k, "MetricStat": {"k": k}, "ReturnData": False} for k in columns]
        queries.append({"Id": "e", "Expression": expression, "ReturnData": True})
        out.append(evaluate(queries, lambda stat, i=i: columns[stat["k"]][i]))  # type: ignore[misc]
    return out


def test_evaluator_on_the_user_guides_if_table() -> None:
    columns = {"metric1": [1, 1, 0, 0, None], "metric2": [30, None, 0, 0, 30], "metric3": [0, 0, 20, None, 20]}
    assert _series_eval("IF(metric1, metric2, metric3)", columns) == [30, 0, 20, None, None]  # type: ignore[arg-type]
    assert _series_eval("IF(metric1, 5, metric3)", columns) == [5, 5, 20, None, None]  # type: ignore[arg-type]


def test_evaluator_on_the_user_guides_comparison_table() -> None:
    columns = {"metric1": [30, 20, 0, 0], "metric2": [20, None, 20, None]}
    assert _series_eval("(metric1 < metric2)", columns) == [0, 0, 1, 0]  # type: ignore[arg-type]
    assert _series_eval("(metric1 >= 30)", columns) == [1, 0, 0, 0]  # type: ignore[arg-type]
    assert _series_eval("(metric1 > 15 AND metric2 > 15)", columns) == [1, 0, 0, 0]  # type: ignore[arg-type]


def test_evaluator_arithmetic_fill_and_arrays() -> None:
    columns = {"a": [4, None, None, 2], "b": [None, 3, None, 0]}
    assert _series_eval("a + b", columns) == [4, 3, None, 2]  # type: ignore[arg-type]
    assert _series_eval("a / 2", columns) == [2, None, None, 1]  # type: ignore[arg-type]
    assert _series_eval("a / b", columns) == [None, 0, None, None]  # type: ignore[arg-type]
    assert _series_eval("FILL(a, 7) - -1 * 2 ^ 2", columns) == [8, 11, 11, 6]  # type: ignore[arg-type]
    assert _series_eval("MAX([a, b])", columns) == [4, 3, None, 2]  # type: ignore[arg-type]
    assert _series_eval("MIN([a, b])", columns) == [0, 0, None, 0]  # type: ignore[arg-type]
    assert _series_eval("SUM([a, b])", columns) == [4, 3, None, 2]  # type: ignore[arg-type]
    assert _series_eval("AVG([a, b])", columns) == [2, 1.5, None, 1]  # type: ignore[arg-type]


def test_evaluator_rejects_what_cloudwatch_rejects() -> None:
    stat = {"Id": "m1", "MetricStat": {}, "ReturnData": False}
    with pytest.raises(MetricMathError):
        check_queries([stat, {"Id": "e", "Expression": "SEARCH('x', 'Average', 60)", "ReturnData": True}])
    with pytest.raises(MetricMathError):
        check_queries([stat, {"Id": "e", "Expression": "m1", "ReturnData": True}, {"Id": "f", "Expression": "m1"}])
    with pytest.raises(MetricMathError):
        check_queries([{"Id": f"m{i}", "MetricStat": {}, "ReturnData": False} for i in range(11)] + [{"Id": "e", "Expression": "m1"}])
    with pytest.raises(MetricMathError):
        check_queries([{"Id": "Bad", "Expression": "1", "ReturnData": True}])
    with pytest.raises(MetricMathError):
        _series_eval("METRICS()", {"a": [1]})


# -- the table in docs/scaling.md is this evaluator's output ----------------------------------------


def scenario_table(policies: Any) -> str:
    """The strategy x scenario table, as written in docs/scaling.md."""
    header = "| scenario | " + " | ".join(f"`{s.name}`" for s in STRATEGIES) + " |"
    lines = [header, "|---|" + "---:|" * len(STRATEGIES)]
    for scenario, fleet in SCENARIOS.items():
        values = [read(policies, "example", s, fleet) for s in STRATEGIES]
        lines.append(f"| {scenario} | " + " | ".join("no data" if v is None else f"{v:.3f}" for v in values) + " |")
    return "\n".join(lines)


def test_the_documented_table_is_what_the_policies_read(policies: Any) -> None:
    text = (ROOT / "docs" / "scaling.md").read_text()
    match = re.search(r"<!-- scenario-table:start -->\n(.*?)\n<!-- scenario-table:end -->", text, re.S)
    assert match, "docs/scaling.md lost its scenario table markers"
    assert match.group(1).strip() == scenario_table(policies), "regenerate: cd tests && python -c 'import test_weighted_utilization as t; print(t.scenario_table(t.build_policies()))'"
