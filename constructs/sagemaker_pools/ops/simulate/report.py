"""What a simulation run shows: the summary, the per-minute timeline as text, and the JSON document.

The JSON schema (``sagemaker-pools-simulate/1``) is documented in ``docs/simulate.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..durations import format_minutes
from ..table import fmt_number, render_table
from .engine import Result
from .fleet import ROLLING_BACK, UPDATING

__all__ = ["SCHEMA", "summarize", "to_json", "render_text"]

SCHEMA = "sagemaker-pools-simulate/1"


def _wake_ups(result: Result) -> list[dict[str, Any]]:
    """Every cold start: from the minute capacity leaves zero to the minute the first unit serves."""
    wakes: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    previous_desired = result.rows[0].desired_capacity if result.rows else 0
    serving_key = "copies" if result.unit == "copies" else "instances"
    for row in result.rows:
        serving = sum(getattr(row, serving_key).values())
        if current is None and serving == 0 and previous_desired == 0 and row.desired_capacity > 0:
            current = {"start_minute": row.minute, "first_serving_minute": None, "units_requested": row.desired_capacity}
        elif current is not None:
            if serving > 0:  # what is decided at the end of this minute is decided with a unit serving
                current["first_serving_minute"] = row.minute
                wakes.append(current)
                current = None
            else:
                current["units_requested"] = max(current["units_requested"], row.desired_capacity)
        previous_desired = row.desired_capacity
    if current is not None:
        wakes.append(current)
    for wake in wakes:
        wake["overshoot"] = wake["units_requested"] - 1
    return wakes


def summarize(result: Result, prices: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The run's figures: minutes above target and at max, on fallback, peak queue, instance-hours, cost, wake-ups."""
    spec = result.spec
    rows = result.rows
    primary = spec.types[0]
    target = result.target
    hours = {t: sum(r.instances[t] for r in rows) / 60.0 for t in spec.types}
    summary: dict[str, Any] = {
        "minutes": len(rows),
        "unit": result.unit,
        "target": target,
        "minutes_above_target": sum(1 for r in rows if target is not None and r.signal is not None and r.signal > target),
        "minutes_at_max": sum(1 for r in rows if r.desired_capacity >= spec.scaling.max_capacity),
        "minutes_on_fallback": sum(1 for r in rows if any(n for t, n in r.instances.items() if t != primary)),
        "minutes_with_queue": sum(1 for r in rows if r.queued > 1e-9),
        "peak_queued": max((r.queued for r in rows), default=0.0),
        "peak_desired_capacity": max((r.desired_capacity for r in rows), default=0),
        "scaling_activities": len(result.activities),
        "minutes_updating": sum(1 for r in rows if r.status == UPDATING),
        "rollbacks": sum(1 for r in rows if r.status == ROLLING_BACK),
        "instance_hours": {t: round(h, 3) for t, h in hours.items()},
        "cost_usd": None,
        "wake_ups": _wake_ups(result),
        # What reads metrics the simulated endpoint never published: it watched nothing in this run.
        "reads_unpublished": {k: list(v) for k, v in sorted(result.unpublished.items())},
    }
    summary["max_wake_up_overshoot"] = max((w["overshoot"] for w in summary["wake_ups"]), default=None)
    if prices:
        by_type = {t: round(hours[t] * prices[t], 2) for t in spec.types if t in prices}
        summary["cost_usd"] = {"by_type": by_type, "total": round(sum(by_type.values()), 2)}
    return summary


def to_json(result: Result, prices: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The whole run as JSON-ready data (schema ``sagemaker-pools-simulate/1``)."""
    spec = result.spec
    return {
        "schema": SCHEMA,
        "readings": sorted(result.scenario.readings),
        "endpoint": {
            "logical_id": spec.endpoint_id,
            "name": spec.endpoint_name,
            "pools": [{"instance_type": p.instance_type, "priority": p.priority} for p in spec.pools],
            "provision_timeout_s": spec.provision_timeout_s,
            "inference_component": spec.component.name if spec.component else None,
            "asynchronous": spec.async_max_concurrent is not None,
        },
        "scaling": {
            "scalable_target": spec.scaling.logical_id,
            "unit": result.unit,
            "min_capacity": spec.scaling.min_capacity,
            "max_capacity": spec.scaling.max_capacity,
            "target_tracking": [{"policy": p.logical_id, "target": p.target} for p in spec.scaling.target_tracking],
            "step": [p.logical_id for p in spec.scaling.steps],
        },
        "timeline": [
            {
                "minute": r.minute,
                "status": r.status,
                "instances": r.instances,
                "pending": r.pending,
                "copies": r.copies,
                "desired_capacity": r.desired_capacity,
                "signal": r.signal,
                "concurrency": r.concurrency,
                "served": r.served,
                "queued": r.queued,
                "backlog": r.backlog,
                "alarms": r.alarms,
            }
            for r in result.rows
        ],
        "activities": [{"minute": a.minute, "policy": a.policy, "from": a.before, "to": a.after} for a in result.activities],
        "summary": summarize(result, prices),
    }


def _short(instance_type: str) -> str:
    return instance_type.removeprefix("ml.")


def render_text(result: Result, prices: Mapping[str, float] | None = None, *, every: int = 1) -> str:
    """The timeline (minutes where something changed, or every ``every`` minutes) and the summary."""
    spec = result.spec
    headers = ["minute"]
    for t in spec.types:
        headers.append(f"{_short(t)} (+pending)")
    headers += ["status", "desired", "signal", "concurrency", "served", "queued", "alarms in ALARM"]
    rows = []
    previous: tuple[Any, ...] | None = None
    for r in result.rows:
        state = (tuple(r.instances.values()), tuple(r.pending.values()), r.status, r.desired_capacity, tuple(r.alarms))
        if state == previous and r.minute % every and r.minute != len(result.rows) - 1:
            continue
        previous = state
        cells: list[object] = [format_minutes(r.minute)]
        for t in spec.types:
            cells.append(f"{r.instances[t]}" + (f" (+{r.pending[t]})" if r.pending[t] else ""))
        cells += [r.status, r.desired_capacity, None if r.signal is None else round(r.signal, 3), round(r.concurrency, 1), round(r.served, 1), round(r.queued, 1), ", ".join(r.alarms) or "-"]
        rows.append(cells)
    readings = ", ".join(sorted(result.scenario.readings)) or "none (the AWS reference's)"
    lines = [f"{spec.endpoint_id} ({spec.endpoint_name}): {len(result.rows)} minutes, desired capacity in {result.unit}, readings: {readings}", ""]
    lines.append(render_table(headers, rows))
    s = summarize(result, prices)
    lines += ["", "summary"]
    target = f" (target {s['target']:g})" if s["target"] is not None else ""
    lines.append(f"  minutes above target{target}: {s['minutes_above_target']}")
    lines.append(f"  minutes at max capacity ({spec.scaling.max_capacity}): {s['minutes_at_max']}")
    lines.append(f"  minutes on fallback pools: {s['minutes_on_fallback']}")
    lines.append(f"  minutes updating: {s['minutes_updating']}; rollbacks (provisioning timeout passed): {s['rollbacks']}")
    lines.append(f"  peak queued requests: {fmt_number(s['peak_queued'])} ({s['minutes_with_queue']} minutes with a queue)")
    hours = ", ".join(f"{_short(t)} {h:.1f}" for t, h in s["instance_hours"].items())
    lines.append(f"  instance-hours: {hours}")
    if s["cost_usd"] is not None:
        cost = ", ".join(f"{_short(t)} ${c:,.2f}" for t, c in s["cost_usd"]["by_type"].items())
        lines.append(f"  cost: ${s['cost_usd']['total']:,.2f} ({cost})")
    for wake in s["wake_ups"]:
        served = wake["first_serving_minute"]
        lines.append(
            f"  wake-up at {format_minutes(wake['start_minute'])}: first {'copy' if result.unit == 'copies' else 'instance'} serving "
            f"{'at ' + format_minutes(served) if served is not None else 'never'}, {wake['units_requested']} {result.unit} requested "
            f"(overshoot {wake['overshoot']})"
        )
    for logical_id, metrics in s["reads_unpublished"].items():
        lines.append(f"  {logical_id} read nothing: {', '.join(metrics)} never published in this run")
    return "\n".join(lines)
