"""The timeline of fixed ``simulate`` scenarios, held in a snapshot: a change that is meant to be
only faster (metric evaluation, series storage, trace handling) must leave it as it is.

A change of the modelled rules or of the library's defaults changes it on purpose: review the
activities and summary in the diff, then update with ``--snapshot-update`` and say so in the
commit. The snapshot holds every scaling activity, the summary and a digest of every minute of
the timeline (instances, pending, copies, desired capacity, signal, served, queued, backlog,
alarms), so that a change anywhere in a row shows.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from sagemaker_pools.ops.simulate import Scenario, read_fleet, simulate, summarize
from sagemaker_pools.ops.simulate.inputs import read_traffic

ROOT = Path(__file__).resolve().parents[1]
QUIET_THEN_BUSY = [0.0] * 120 + [10.0] * 120 + [0.0] * 30 + [25.0] * 90 + [0.0] * 60


def _scenario(stack: str, spec: Any) -> Scenario:
    first = spec.pools[0].instance_type
    if stack == "RealtimePooledLlm":  # the README picture: launch day with a g6e outage from 1h30 to 8h
        trace = read_traffic(str(ROOT / "docs" / "simulate" / "launch-day.csv"))
        return Scenario(load=trace.expand(720), outages={first: [(90, 480)]})
    # wake-ups from zero, the second during an outage of priority 1
    return Scenario(load=QUIET_THEN_BUSY, outages={first: [(260, 420)]})


def _digest(result: Any) -> str:
    rows = [
        [r.minute, r.concurrency, r.served, r.queued, sorted(r.instances.items()), sorted(r.pending.items()),
         sorted(r.copies.items()), r.desired_capacity, r.signal, r.alarms, r.backlog]
        for r in result.rows
    ]
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


@pytest.mark.parametrize("stack", ["RealtimePooledLlm", "InferenceComponentPools", "AsyncScaleToZero"])
def test_the_timeline_of_a_fixed_scenario_is_unchanged(
    example_templates: dict[str, Any], stack: str, snapshot: SnapshotAssertion
) -> None:
    spec = read_fleet(example_templates[stack])
    result = simulate(spec, _scenario(stack, spec))
    observed = {
        "activities": [[a.minute, a.policy, a.before, a.after] for a in result.activities],
        "summary": summarize(result),
        "timeline_sha256": _digest(result),
    }
    assert observed == snapshot
