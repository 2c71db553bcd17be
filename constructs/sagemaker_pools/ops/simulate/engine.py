"""The minute loop: SageMaker, CloudWatch and Application Auto Scaling, one minute at a time.

Each minute: the fleet provisions toward the desired capacity and serves the offered load,
publishing its metrics (or, when an operation ran out of provisioning time, rolls back); every
alarm of the template is evaluated; the scaling policies set the desired capacity that the fleet
works toward from the next minute on, unless the endpoint is updating.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from .autoscaling import Activity, Autoscaler
from .cloudwatch import ALARM, Alarm, MetricStore
from .fleet import IN_SERVICE, Fleet
from .readings import check_readings
from .template import FleetSpec

__all__ = ["Scenario", "Row", "Result", "simulate"]


@dataclass(frozen=True)
class Scenario:
    """What happens to the fleet.

    Attributes:
        load: per minute, concurrent requests (``column == "concurrency"``) or requests per second.
        column: ``"concurrency"`` or ``"requests_per_second"`` (then ``latency_s`` gives every type's latency).
        outages: ``{type: [(start, end), ...]}`` in minutes, end exclusive.
        start_up: minutes from launch to serving, per type.
        copy_start_up: minutes for an inference-component copy to load.
        max_concurrency: per type (merged over what the template's policies divide by).
        latency_s: seconds per request, per type.
        readings: named readings that replace a default rule (:data:`.readings.READINGS`; see
            ``docs/simulate.md``). Default: none, every rule as the AWS reference reads.
    """

    load: Sequence[float]
    column: str = "concurrency"
    outages: Mapping[str, Sequence[tuple[int, int]]] = field(default_factory=dict)
    start_up: Mapping[str, int] = field(default_factory=dict)
    copy_start_up: int = 5
    max_concurrency: Mapping[str, float] = field(default_factory=dict)
    latency_s: Mapping[str, float] = field(default_factory=dict)
    readings: frozenset[str] = frozenset()


@dataclass
class Row:
    """One minute of the timeline."""

    minute: int
    concurrency: float
    served: float
    queued: float
    instances: dict[str, int]
    pending: dict[str, int]
    copies: dict[str, int]
    desired_capacity: int
    signal: float | None
    alarms: list[str]
    backlog: float | None
    status: str = IN_SERVICE


@dataclass
class Result:
    """The timeline and the scaling activities of one run."""

    spec: FleetSpec
    scenario: Scenario
    rows: list[Row]
    activities: list[Activity]
    target: float | None
    #: ``{alarm or policy logical id: metrics it reads that the simulated endpoint never published}``
    #: (an undocumented metric, a wrong namespace, or one the simulation does not model).
    unpublished: dict[str, list[str]] = field(default_factory=dict)

    @property
    def unit(self) -> str:
        """What the desired capacity counts: ``instances`` or ``copies``."""
        return self.spec.scaling.unit


def simulate(spec: FleetSpec, scenario: Scenario) -> Result:
    """Run ``scenario`` through ``spec`` and return the timeline.

    Raises:
        OpsError: (exit 2) a reading that :data:`.readings.READINGS` does not name.
    """
    readings = check_readings(scenario.readings)
    queries = [q for a in spec.alarms for q in a.queries] + [q for p in spec.scaling.target_tracking for q in p.queries]
    read = frozenset(
        (str(q["MetricStat"]["Metric"].get("Namespace", "")), str(q["MetricStat"]["Metric"].get("MetricName", "")))
        for q in queries
        if "MetricStat" in q
    )
    store = MetricStore(read)
    alarms = {
        a.logical_id: Alarm(
            name=a.logical_id,
            queries=a.queries,
            period_minutes=max(1, a.period_s // 60),
            evaluation_periods=a.evaluation_periods,
            datapoints_to_alarm=a.datapoints_to_alarm,
            threshold=a.threshold,
            comparison=a.comparison,
            treat_missing_data=a.treat_missing_data,
            store=store,
        )
        for a in spec.alarms
    }
    actions = {a.logical_id: a.actions for a in spec.alarms}
    max_concurrency = {**spec.max_concurrency, **scenario.max_concurrency}
    fleet = Fleet(
        spec,
        start_up=scenario.start_up,
        copy_start_up=scenario.copy_start_up,
        max_concurrency=max_concurrency,
        outages=scenario.outages,
        latency_s=scenario.latency_s,
        readings=readings,
    )
    initial = spec.component.initial_copies if spec.component else spec.initial_instance_count
    initial = max(spec.scaling.min_capacity, min(spec.scaling.max_capacity, initial))
    fleet.start(initial)
    scaler = Autoscaler(spec.scaling, alarms, actions, store, initial, readings)
    with _collector_paused():
        rows = _run_minutes(scenario, fleet, alarms, scaler, store)
    readers = [(a.logical_id, a.queries) for a in spec.alarms] + [(p.logical_id, p.queries) for p in spec.scaling.target_tracking]
    unpublished = {}
    for logical_id, reader_queries in readers:
        missing = sorted(
            {
                f"{q['MetricStat']['Metric'].get('Namespace', '')} {q['MetricStat']['Metric'].get('MetricName', '')}"
                for q in reader_queries
                if "MetricStat" in q
                and (str(q["MetricStat"]["Metric"].get("Namespace", "")), str(q["MetricStat"]["Metric"].get("MetricName", "")))
                not in store.published
            }
        )
        if missing:
            unpublished[logical_id] = missing
    return Result(spec, scenario, rows, scaler.activities, scaler.signal_target, unpublished)


def _run_minutes(scenario: Scenario, fleet: Fleet, alarms: Mapping[str, Alarm], scaler: Autoscaler, store: MetricStore) -> list[Row]:
    """Each minute of ``scenario``: the fleet, then every alarm, then the scaling policies; one row a minute."""
    rows: list[Row] = []
    # The alarms by name, and the names of those in ALARM, recomputed only when a state changes
    # (rarely: the row would otherwise filter and sort every alarm every minute).
    by_name = sorted(alarms.items())
    states = [alarm.state for _, alarm in by_name]
    in_alarm = _in_alarm(by_name, states)
    evaluators = [alarm.evaluate for _, alarm in by_name]
    for minute, offered in enumerate(scenario.load):
        concurrency = offered if scenario.column == "concurrency" else _concurrency(fleet, minute, offered, scenario)
        snap = fleet.step(minute, scaler.desired, concurrency, store)
        changed = False
        for i, evaluate in enumerate(evaluators):
            state = evaluate(minute)
            if state != states[i]:
                states[i], changed = state, True
        if changed:
            in_alarm = _in_alarm(by_name, states)
        if snap.rolled_back_to is not None:
            scaler.roll_back(minute, snap.rolled_back_to)
        scaler.step(minute, updating=snap.status != IN_SERVICE)
        rows.append(
            Row(
                minute=minute,
                concurrency=concurrency,
                served=snap.served,
                queued=snap.queued,
                instances=snap.in_service,
                pending=snap.pending,
                copies=snap.copies_in_service,
                desired_capacity=scaler.desired,
                signal=scaler.signal(minute),
                alarms=list(in_alarm),  # the scaler evaluates alarms at this same minute only: no state changed since
                backlog=snap.backlog,
                status=snap.status,
            )
        )
    return rows


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the minute loop, and restore it after.

    The loop keeps every row and every published sample alive (nothing it makes is garbage
    until the run ends), so each full collection walks a heap that only grows, in vain: about a
    fifth of a 30-day run. Memory still goes back by reference counting as before; what the
    run leaves in cycles is collected once the collector runs again.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _in_alarm(by_name: Sequence[tuple[str, Alarm]], states: Sequence[str]) -> list[str]:
    """The names of the alarms whose state is ALARM, in name order."""
    return [name for (name, _), state in zip(by_name, states) if state == ALARM]


def _concurrency(fleet: Fleet, minute: int, rate: float, scenario: Scenario) -> float:
    """Little's law: requests per second x the latency of the types that serve them (by capacity share)."""
    units = fleet.serving_units(minute)
    weights = {t: n * fleet.max_concurrency.get(t, 1.0) for t, n in units.items() if n}
    total = sum(weights.values())
    if not total:
        return rate * scenario.latency_s[fleet.types[0]]
    return rate * sum(w * scenario.latency_s[t] for t, w in weights.items()) / total
