#!/usr/bin/env python3
"""How long ``sagemaker-pools simulate`` takes for 30 days of traffic through a five-pool fleet.

The fleet: a pooled endpoint on five instance types with weighted-utilization target tracking
(``INSTANCE_WEIGHTED``: the heaviest signal, ten metrics a minute) and the library's alarms
(p99 latency per type, 5XX rate, fallback in use, at max capacity), synthesized once with the
library. The scenario: ``--days`` (default 30: 43,200 minutes) at one-minute resolution, a
diurnal trace (lighter at weekends, a burst every afternoon) with outages of the first pools.
Timed: reading the template and simulating (what the command does after parsing its
arguments), in this process, ``--runs`` times after a one-day warm-up; reported: median, min and
max of wall and CPU time, per simulated day too, and the machine's load average (a shared
machine inflates wall time).

``--against COMMIT`` times this checkout against an earlier commit in one run: the commit is
checked out in a temporary git worktree, the template is synthesized once (by this checkout),
and rounds of two fresh processes (now, then; the order alternates) each read the template and
simulate once with their own package. Reported: both sides' medians, the per-round ratio
then / now (median [min, max]) and whether both produced the same timeline.

Usage: ``python benchmarks/simulate_bench.py [--days 30] [--runs 5] [--against COMMIT]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TYPES = ["ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.48xlarge"]
MAX_CONCURRENCY = [32, 16, 24, 48, 12]
DAY = 1440


def five_pool_template() -> dict[str, Any]:
    """The five-pool endpoint, its scaling and its alarms, synthesized with the library."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from aws_cdk import App, Duration, Stack, assertions

    from sagemaker_pools import InstancePool, PoolAlarms, PooledEndpoint, PoolModel, UtilizationStrategy

    stack = Stack(App(), "FivePools")
    pools = [InstancePool(instance_type=t, max_concurrency=c) for t, c in zip(TYPES, MAX_CONCURRENCY)]
    endpoint = PooledEndpoint(
        stack, "Endpoint", endpoint_name="five-pools", model=PoolModel.from_model_name(stack, "Model", "llm"),
        pools=pools, initial_instance_count=2, provision_timeout=Duration.minutes(20),
    )
    endpoint.auto_scale(min_capacity=2, max_capacity=20).scale_on_weighted_utilization(
        target=0.7, strategy=UtilizationStrategy.INSTANCE_WEIGHTED, scale_out_cooldown=Duration.minutes(10)
    )
    PoolAlarms(stack, "Alarms", endpoint=endpoint, p99_latency=Duration.seconds(20), max_capacity=20)
    return assertions.Template.from_stack(stack).to_json()  # type: ignore[no-any-return]


def traffic(days: int) -> list[float]:
    """Concurrency per minute: a night trough of 30, a day peak of 400 (0.6 of it at weekends), a 30-minute burst at 14:00."""
    load: list[float] = []
    for day in range(days):
        scale = 0.6 if day % 7 in (5, 6) else 1.0
        profile = [30 + scale * 370 * max(0.0, math.sin(math.pi * (m - 360) / 960)) ** 2 for m in range(DAY)]
        for m in range(840, 870):
            profile[m] *= 1.5
        load.extend(profile)
    return load


def outages(days: int) -> dict[str, list[tuple[int, int]]]:
    """The first day's two outages, then every week a 6-hour outage of priority 1, and on day 12 three hours without pools 1-3."""
    found: dict[str, list[tuple[int, int]]] = {TYPES[0]: [(480, 780)], TYPES[1]: [(600, 700)]}
    for day in range(7, days, 7):
        found[TYPES[0]].append((day * DAY + 540, day * DAY + 900))
    if days > 12:
        for t in TYPES[:3]:
            found.setdefault(t, []).append((12 * DAY + 600, 12 * DAY + 780))
    return {t: sorted(w) for t, w in found.items()}


def time_once(template: dict[str, Any], load: list[float], cuts: dict[str, list[tuple[int, int]]]) -> dict[str, Any]:
    """Read the template and simulate once, with whichever ``sagemaker_pools`` is imported: times and a digest of the result."""
    from sagemaker_pools.ops.simulate import Scenario, read_fleet, simulate, summarize

    start, cpu = time.perf_counter(), time.process_time()
    result = simulate(read_fleet(template), Scenario(load=load, outages=cuts))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = [
        (r.minute, r.desired_capacity, sorted(r.instances.items()), sorted(r.pending.items()), r.signal, r.alarms, r.queued)
        for r in result.rows
    ]
    activities = [(a.minute, a.before, a.after) for a in result.activities]
    digest = hashlib.sha256(json.dumps([rows, activities], default=repr).encode()).hexdigest()[:16]
    return {"wall_s": wall, "cpu_s": cpu, "digest": digest, "summary": summarize(result)}


def spread(values: list[float], scale: float = 1.0, unit: str = "s") -> str:
    """``median [min, max]`` of ``values`` times ``scale``."""
    return f"median {statistics.median(values) * scale:.2f} {unit} [min {min(values) * scale:.2f}, max {max(values) * scale:.2f}]"


def in_process(days: int, runs: int) -> None:
    """Warm up on one day, then time ``runs`` runs of ``days`` days in this process."""
    template = five_pool_template()
    load, cuts = traffic(days), outages(days)
    time_once(template, traffic(1), outages(1))  # warm-up: imports and first-use caches
    results = [time_once(template, load, cuts) for _ in range(runs)]
    from sagemaker_pools.ops.simulate import read_fleet

    spec = read_fleet(template)
    summary = results[-1]["summary"]
    walls, cpus = [r["wall_s"] for r in results], [r["cpu_s"] for r in results]
    print(f"five-pool fleet: {len(spec.pools)} pools, {len(spec.alarms)} alarms, "
          f"{len(spec.scaling.target_tracking)} target-tracking policy of "
          f"{sum(1 for q in spec.scaling.target_tracking[0].queries if 'MetricStat' in q)} metrics")
    print(f"scenario: {days} days = {summary['minutes']:,} minutes, {summary['scaling_activities']} scaling activities, "
          f"peak desired {summary['peak_desired_capacity']}, {summary['minutes_on_fallback']:,} minutes on fallback pools")
    print(f"simulate (read template + {days * DAY:,} minutes), {runs} runs after a one-day warm-up (Python {sys.version.split()[0]}):")
    print(f"  wall: {spread(walls)}; per simulated day {spread(walls, 1000 / days, 'ms')}")
    print(f"  CPU:  {spread(cpus)}; per simulated day {spread(cpus, 1000 / days, 'ms')}")
    print(f"  same timeline every run: {len({r['digest'] for r in results}) == 1} (digest {results[0]['digest']})")
    print(f"  load average when it ended: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")


def _side(root: Path, input_path: Path) -> None:
    """One timed run in a fresh process, with ``root``'s package; prints the result as JSON."""
    sys.path.insert(0, str(root / "constructs"))
    import sagemaker_pools

    if not Path(sagemaker_pools.__file__).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"imported {sagemaker_pools.__file__}, not {root}'s package")
    data = json.loads(input_path.read_text())
    cuts = {t: [tuple(w) for w in ws] for t, ws in data["outages"].items()}
    result = time_once(data["template"], data["load"], cuts)  # type: ignore[arg-type]
    print(json.dumps({k: result[k] for k in ("wall_s", "cpu_s", "digest")}))


def against(commit: str, days: int, runs: int) -> None:
    """Rounds of (now, then) in fresh processes; the order alternates so that neither side always runs first."""
    resolved = subprocess.run(["git", "rev-parse", "--short", commit], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    scratch = Path(tempfile.mkdtemp(prefix="simulate-bench-"))
    worktree = scratch / resolved
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(worktree), resolved], cwd=ROOT, check=True)
    try:
        input_path = scratch / "input.json"
        input_path.write_text(json.dumps({"template": five_pool_template(), "load": traffic(days), "outages": outages(days)}))
        roots = {"now": ROOT, "then": worktree}
        measured: dict[str, list[dict[str, Any]]] = {"now": [], "then": []}
        for i in range(runs):
            order = ("now", "then") if i % 2 == 0 else ("then", "now")
            for side in order:
                out = subprocess.run(
                    [sys.executable, __file__, "--side", str(roots[side]), "--input", str(input_path)],
                    check=True, capture_output=True, text=True,
                ).stdout
                measured[side].append(json.loads(out.strip().splitlines()[-1]))
            print(f"round {i + 1}/{runs}: " + ", ".join(f"{s} {measured[s][-1]['wall_s']:.2f} s" for s in ("now", "then")), file=sys.stderr, flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{days} days ({days * DAY:,} minutes), five pools; {runs} rounds of fresh processes; now = {head} (working tree), then = {resolved}")
    for side in ("now", "then"):
        walls, cpus = [r["wall_s"] for r in measured[side]], [r["cpu_s"] for r in measured[side]]
        print(f"  {side:4s} wall {spread(walls)}; CPU {spread(cpus)}")
    for metric in ("wall_s", "cpu_s"):
        ratios = [t[metric] / n[metric] for n, t in zip(measured["now"], measured["then"])]
        print(f"  then / now ({metric[:-2]}): {statistics.median(ratios):.2f} [min {min(ratios):.2f}, max {max(ratios):.2f}]")
    digests = {r["digest"] for side in measured.values() for r in side}
    print(f"  same timeline on both sides and every run: {len(digests) == 1} ({', '.join(sorted(digests))})")
    print(f"  load average when it ended: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", metavar="COMMIT", help="also time this commit's package, interleaved, in fresh processes")
    parser.add_argument("--side", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side is not None:
        _side(args.side, args.input)
    elif args.against:
        against(args.against, args.days, args.runs)
    else:
        in_process(args.days, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
