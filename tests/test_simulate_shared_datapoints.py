"""The simulation's shortcuts give what the plain computation gives.

* Alarms on the same computation at the same period share one :class:`Datapoints`
  (``shared_datapoints``): each case below would read a different value if the sharing key
  left out what differs (the period, the statistic, a metric's own period, the metric).
* An alarm decides from running counts when its recent datapoints are all present, and skips
  the window when none is: the same states as scanning the window every time.
* A sum of several time series, folded into one closure, follows the rule of nested ``+``.
* The minute loop pauses the cyclic garbage collector and gives it back as it found it.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from sagemaker_pools.metric_math import evaluate, query_signature
from sagemaker_pools.ops.simulate import Scenario, read_fleet, simulate
from sagemaker_pools.ops.simulate import cloudwatch
from sagemaker_pools.ops.simulate.cloudwatch import Alarm, MetricStore, Stats


def _metric(name: str = "M") -> dict[str, Any]:
    return {"Namespace": "NS", "MetricName": name, "Dimensions": [{"Name": "D", "Value": "x"}]}


def _single(stat: str = "Maximum", name: str = "M", ident: str = "m1", **extra: Any) -> list[dict[str, Any]]:
    return [{"Id": ident, "ReturnData": True, "MetricStat": {"Metric": _metric(name), "Stat": stat, **extra}}]


def _store() -> MetricStore:
    """Two samples a minute of M (the minute and 3) and one of N (10), for ten minutes."""
    store = MetricStore()
    for minute in range(10):
        store.publish(minute, "NS", "M", {"D": "x"}, Stats.of(float(minute)))
        store.publish(minute, "NS", "M", {"D": "x"}, Stats.of(3.0))
        store.publish(minute, "NS", "N", {"D": "x"}, Stats.of(10.0))
    return store


def _alarm(store: MetricStore, queries: list[dict[str, Any]], period: int = 1) -> Alarm:
    return Alarm(
        name="a", queries=queries, period_minutes=period, evaluation_periods=1, datapoints_to_alarm=1,
        threshold=0, comparison="GreaterThanThreshold", treat_missing_data="missing", store=store,
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # the same queries at another period: 2 samples a minute, 10 in five minutes
        ((_single("SampleCount"), 1), (_single("SampleCount"), 5)),
        # the same queries, metrics of a set period, at another alarm period (minute 1 against minute 9)
        ((_single("Maximum", Period=60), 1), (_single("Maximum", Period=60), 5)),
        # another statistic of the same metric
        ((_single("Maximum"), 1), (_single("Minimum"), 1)),
        # the metric's own period differs from the alarm's
        ((_single("SampleCount", Period=60), 1), (_single("SampleCount", Period=300), 1)),
        # another metric
        ((_single("Maximum", "M"), 1), (_single("Maximum", "N"), 1)),
    ],
)
def test_alarms_that_compute_different_values_do_not_share_datapoints(first: Any, second: Any) -> None:
    shared = _store()
    a, b = _alarm(shared, *first), _alarm(shared, *second)
    alone = _alarm(_store(), *second)  # its own store: nothing to share with
    index = 1
    assert b.datapoint(index) == alone.datapoint(index)
    assert a.datapoint(index) != b.datapoint(index)  # the case is one where sharing would show


def test_alarms_on_the_same_computation_share_whatever_their_ids_labels_and_implicit_period() -> None:
    store = _store()
    by_template = [
        {"Id": "expr_1", "Expression": "m * 2 + n", "Label": "twice", "ReturnData": True},
        {"Id": "m", "MetricStat": {"Metric": _metric("M"), "Stat": "Maximum", "Period": 60}, "ReturnData": False},
        {"Id": "n", "MetricStat": {"Metric": _metric("N"), "Stat": "Maximum", "Period": 60}, "ReturnData": False},
        {"Id": "unused", "Expression": "m", "ReturnData": False},
    ]
    by_policy = [
        {"Id": "c2", "MetricStat": {"Metric": {**_metric("N"), "Dimensions": [{"Value": "x", "Name": "D"}]}, "Stat": "Maximum"}, "ReturnData": False},
        {"Id": "c1", "MetricStat": {"Metric": _metric("M"), "Stat": "Maximum"}, "ReturnData": False},
        {"Id": "result", "Expression": "c1  *  2 + c2", "ReturnData": True},
    ]
    template_alarm, policy_alarm = _alarm(store, by_template), _alarm(store, by_policy)
    assert template_alarm._datapoints is policy_alarm._datapoints
    assert policy_alarm.datapoint(3) == _alarm(_store(), by_policy).datapoint(3) == 3.0 * 2 + 10.0


def test_a_signature_ignores_names_but_not_structure() -> None:
    leaf = repr

    def sig(expression: str) -> str:
        queries = [{"Id": i, "MetricStat": {"Metric": _metric(i)}, "ReturnData": False} for i in ("a", "b")]
        return query_signature([*queries, {"Id": "e", "Expression": expression, "ReturnData": True}], leaf)

    assert sig("a + b") == sig("a+b")
    assert sig("a + b") != sig("b + a")  # the same value, other operations: not shared
    assert sig("(a + b) * 2") != sig("a + b * 2")
    with pytest.raises(Exception, match="refers to itself"):
        query_signature([{"Id": "e", "Expression": "e + 1", "ReturnData": True}], leaf)


def test_a_simulation_gives_the_same_timeline_with_and_without_shared_datapoints(
    example_templates: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = read_fleet(example_templates["RealtimePooledLlm"])
    load = [20.0 + 180.0 * ((m // 90) % 2) for m in range(720)]
    scenario = Scenario(load=load, outages={spec.types[0]: [(100, 400)]})
    shared = simulate(spec, scenario)
    calls = itertools.count()
    # A signature that never repeats: every alarm computes its own datapoints.
    monkeypatch.setattr(cloudwatch, "query_signature", lambda queries, leaf: f"alone {next(calls)}")
    alone = simulate(spec, scenario)
    assert next(calls) > 0
    assert [(r.desired_capacity, r.signal, r.alarms, r.instances) for r in shared.rows] == [
        (r.desired_capacity, r.signal, r.alarms, r.instances) for r in alone.rows
    ]
    assert {a for r in shared.rows for a in r.alarms}, "no alarm fired: the comparison would prove little"


@pytest.mark.parametrize("treat", ["missing", "ignore", "breaching", "notBreaching"])
@pytest.mark.parametrize(("evaluation_periods", "datapoints_to_alarm"), [(1, 1), (3, 2), (5, 5), (15, 12)])
def test_the_running_counts_decide_as_a_scan_of_the_window(treat: str, evaluation_periods: int, datapoints_to_alarm: int) -> None:
    rng = random.Random(evaluation_periods * 31 + datapoints_to_alarm)
    # Runs of present, missing and mixed datapoints, so that each shortcut and the scan all apply.
    values: list[float | None] = []
    for _ in range(60):
        kind = rng.choice(["present", "missing", "mixed"])
        for _ in range(rng.randint(1, 2 * evaluation_periods + 3)):
            missing = kind == "missing" or (kind == "mixed" and rng.random() < 0.5)
            values.append(None if missing else rng.choice([0.0, 1.0, 5.0]))
    store = MetricStore()
    for minute, value in enumerate(values):
        if value is not None:
            store.publish(minute, "NS", "M", {"D": "x"}, Stats.of(value))
    alarms = [
        Alarm(
            name=name, queries=_single(), period_minutes=1, evaluation_periods=evaluation_periods,
            datapoints_to_alarm=datapoints_to_alarm, threshold=1.0, comparison="GreaterThanThreshold",
            treat_missing_data=treat, store=store,
        )
        for name in ("counted", "scanned")
    ]
    alarms[1]._counted = False  # always the scan
    fast_paths = 0
    for minute in range(len(values)):
        fast_paths += alarms[0]._counted and not alarms[0]._missing_recent
        assert alarms[0].evaluate(minute) == alarms[1].evaluate(minute), (minute, values[max(0, minute - 20) : minute + 1])
    assert fast_paths > 10


def test_a_sum_of_many_series_follows_the_rule_of_nested_sums() -> None:
    stats = [{"Metric": _metric(f"M{i}")} for i in range(4)]
    queries: list[dict[str, Any]] = [{"Id": f"m{i}", "MetricStat": s, "ReturnData": False} for i, s in enumerate(stats)]
    queries.append({"Id": "e", "Expression": "m0 + m1 + m2 + m3", "ReturnData": True})
    for values in itertools.product([None, -0.0, 0.5, 3.0], repeat=4):

        def added(a: float | None, b: float | None) -> float | None:  # TS + TS, as the module docstring says
            if a is None and b is None:
                return None
            return (0.0 if a is None else a) + (0.0 if b is None else b)

        expected = added(added(added(values[0], values[1]), values[2]), values[3])
        got = evaluate(queries, lambda stat: values[stats.index(stat)])  # type: ignore[arg-type]
        assert repr(got) == repr(expected), values  # repr: -0.0 and 0.0 differ


@pytest.mark.parametrize("enabled", [True, False])
def test_the_minute_loop_pauses_the_cyclic_collector_and_restores_it_even_on_error(enabled: bool) -> None:
    import gc

    from sagemaker_pools.ops.simulate.engine import _collector_paused

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with _collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), _collector_paused():
            raise RuntimeError("a failing minute")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
