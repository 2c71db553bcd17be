#!/usr/bin/env python3
"""The example stacks under every reading of ``simulate``: the scenario matrix, as a Markdown table.

For each example template in ``cdk.out`` (run ``make synth`` first) and each reading (the default,
each named reading alone, and the old model: ``updates-overlap`` with ``cooldown-from-request``),
simulates five scenarios: steady load, a step of traffic during an outage of priority 1, every
pool out for three hours while traffic rises, a wake-up from zero, and a second burst 20 minutes
after the fleet went back to zero. Prints what each run did: scale-outs, the peak capacity, units
asked for before a cold start served, the wait for the first unit, rollbacks, minutes updating,
units that came into service while no pool had capacity, and capacity changes made while updating.

Usage: ``python tools/simulate_readings.py [cdk.out]``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sagemaker_pools.ops.simulate import FleetSpec, Scenario, read_fleet, simulate, summarize
from sagemaker_pools.ops.simulate.readings import COOLDOWN_FROM_REQUEST, READINGS, UPDATES_OVERLAP

#: Per stack: (steady concurrency, a step that needs a scale-out, a wake-up's concurrency).
LOADS = {"RealtimePooledLlm": (40.0, 90.0, 10.0), "InferenceComponentPools": (85.0, 150.0, 10.0), "AsyncScaleToZero": (4.0, 12.0, 10.0)}
QUIET, BUSY, AFTER = 120, 120, 60


def _scenarios(spec: FleetSpec, steady: float, step: float, wake: float) -> dict[str, tuple[list[float], dict[str, list[tuple[int, int]]]]]:
    first = spec.types[0]
    out: dict[str, tuple[list[float], dict[str, list[tuple[int, int]]]]] = {
        "steady": ([steady] * 180, {}),
        "priority-1 outage": ([steady] * 30 + [step] * 150, {first: [(10, 180)]}),
        "all pools out 3 h": ([steady] * 30 + [step] * 210, {t: [(20, 200)] for t in spec.types}),
    }
    if spec.scaling.min_capacity == 0:
        out["wake-up"] = ([0.0] * QUIET + [wake] * BUSY + [0.0] * AFTER, {})
    return out


def _second_burst(spec: FleetSpec, wake: float, readings: frozenset[str]) -> list[float] | None:
    """A burst, quiet until the fleet is back at zero, then a second burst 20 minutes later."""
    load = [0.0] * QUIET + [wake] * BUSY + [0.0] * 600
    rows = simulate(spec, Scenario(load=load, readings=readings)).rows
    zero = next((r.minute for r in rows[QUIET + BUSY :] if r.desired_capacity == 0 and not sum(r.instances.values())), None)
    if zero is None:
        return None
    return load[: zero + 20] + [wake] * BUSY + [0.0] * AFTER


def _figures(spec: FleetSpec, load: Sequence[float], outages: dict[str, list[tuple[int, int]]], readings: frozenset[str]) -> dict[str, Any]:
    result = simulate(spec, Scenario(load=load, outages=outages, readings=readings))
    summary = summarize(result)
    outage_end = max((end for windows in outages.values() for _, end in windows), default=0)
    all_out = len(outages) == len(spec.types) and outages
    grew = 0
    if all_out:
        start = min(s for windows in outages.values() for s, _ in windows)
        serving = [sum(r.instances.values()) for r in result.rows]
        grew = max(serving[start:outage_end]) - serving[start]
    updating = {r.minute for r in result.rows if r.status != "InService"}
    wakes = summary["wake_ups"]
    return {
        "scale-outs": sum(1 for a in result.activities if a.after > a.before and a.policy != "(rollback)"),
        "peak": summary["peak_desired_capacity"],
        "asked per cold start": max((w["units_requested"] for w in wakes), default="-"),
        "first unit after (min)": ",".join(str(w["first_serving_minute"] - w["start_minute"]) if w["first_serving_minute"] is not None else "never" for w in wakes) or "-",
        "rollbacks": summary["rollbacks"],
        "minutes updating": summary["minutes_updating"],
        "added while all out": grew if all_out else "-",
        "changes while updating": sum(1 for a in result.activities if a.minute in updating and a.policy != "(rollback)"),
        "minutes queued": summary["minutes_with_queue"],
    }


def main(argv: Sequence[str]) -> int:
    folder = Path(argv[0] if argv else "cdk.out")
    variants: list[frozenset[str]] = [frozenset(), *(frozenset({name}) for name in READINGS), frozenset({UPDATES_OVERLAP, COOLDOWN_FROM_REQUEST})]
    columns: list[str] = []
    lines: list[str] = []
    for stack, (steady, step, wake) in LOADS.items():
        spec = read_fleet(json.loads((folder / f"{stack}.template.json").read_text()))
        for readings in variants:
            scenarios = _scenarios(spec, steady, step, wake)
            if spec.scaling.min_capacity == 0:
                second = _second_burst(spec, wake, readings)
                if second is not None:
                    scenarios["second burst +20 min"] = (second, {})
            for name, (load, outages) in scenarios.items():
                figures = _figures(spec, load, outages, readings)
                columns = list(figures)
                label = " + ".join(sorted(readings)) or "default"
                lines.append(f"| {stack} | {label} | {name} | " + " | ".join(str(v) for v in figures.values()) + " |")
    print("| stack | reading | scenario | " + " | ".join(columns) + " |")
    print("|" + "---|" * (len(columns) + 3))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
