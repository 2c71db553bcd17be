#!/usr/bin/env python3
"""How long ``sagemaker-pools simulate`` takes for a day of traffic through a five-pool fleet.

The fleet: a pooled endpoint on five instance types with weighted-utilization target tracking
(``INSTANCE_WEIGHTED``: the heaviest signal, ten metrics a minute) and the library's alarms
(p99 latency per type, 5XX rate, fallback in use, at max capacity), synthesized once with the
library. The scenario: 24 hours at one-minute resolution (1,440 minutes), a diurnal trace with
two outages. Timed: reading the template and simulating (what the command does after parsing
its arguments), in this process, ``--runs`` times after one warm-up run; reported: median, min
and max of wall and CPU time, and the machine's load average (a shared machine inflates wall time).

Usage: ``python benchmarks/simulate_bench.py [--runs 9]``
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from typing import Any

TYPES = ["ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.48xlarge"]
MAX_CONCURRENCY = [32, 16, 24, 48, 12]


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


def diurnal_day() -> list[float]:
    """1,440 minutes of concurrency: a night trough of 30, a day peak of 400, a short burst."""
    load = [30 + 370 * max(0.0, math.sin(math.pi * (m - 360) / 960)) ** 2 for m in range(1440)]
    for m in range(840, 870):
        load[m] *= 1.5
    return load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    from sagemaker_pools.ops.simulate import Scenario, read_fleet, simulate, summarize

    template = five_pool_template()
    scenario = Scenario(load=diurnal_day(), outages={TYPES[0]: [(480, 780)], TYPES[1]: [(600, 700)]})

    def once() -> tuple[float, float, dict[str, Any]]:
        start, cpu = time.perf_counter(), time.process_time()
        result = simulate(read_fleet(template), scenario)
        return time.perf_counter() - start, time.process_time() - cpu, summarize(result)

    once()  # warm-up
    times, cpus, summary = [], [], {}
    for _ in range(args.runs):
        elapsed, cpu, summary = once()
        times.append(elapsed)
        cpus.append(cpu)
    spec = read_fleet(template)
    print(f"five-pool fleet: {len(spec.pools)} pools, {len(spec.alarms)} alarms, "
          f"{len(spec.scaling.target_tracking)} target-tracking policy of "
          f"{sum(1 for q in spec.scaling.target_tracking[0].queries if 'MetricStat' in q)} metrics")
    print(f"scenario: {summary['minutes']} minutes, {summary['scaling_activities']} scaling activities, "
          f"peak desired {summary['peak_desired_capacity']}, {summary['minutes_on_fallback']} minutes on fallback pools")
    print(f"simulate (read template + 1,440 minutes), {args.runs} runs after a warm-up: "
          f"median {statistics.median(times) * 1000:.0f} ms [min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}] "
          f"(Python {sys.version.split()[0]})")
    print(f"  CPU time: median {statistics.median(cpus) * 1000:.0f} ms [min {min(cpus) * 1000:.0f}, max {max(cpus) * 1000:.0f}]; "
          f"load average when it ended: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
