"""Helpers for the bench tests (importable by name: conftest modules are not)."""

from __future__ import annotations

import types

from sagemaker_pools.ops.bench.options import BenchOptions, Connection
from sagemaker_pools.ops.bench.worker import Schedule, WorkerPlan


def schedule_times(end: float, *, rate: float, seed: int, workers: int, arrival: str = "poisson", burstiness: float = 1.0) -> list[float]:
    """Every start time the open loop's workers schedule in ``[0, end)``, sorted."""
    options = BenchOptions(endpoint="llm", bodies=(b"{}",), concurrency=workers, rate=rate, arrival=arrival, burstiness=burstiness, seed=seed, processes=workers)
    connection = Connection(region="us-east-1", endpoint_url=None, access_key="x", secret_key="x", token=None)
    times: list[float] = []
    for index in range(workers):
        shared = types.SimpleNamespace(times=[0.0, 0.0, end], tickets=None)
        schedule = Schedule(WorkerPlan(index=index, workers=workers, options=options, connection=connection), shared)  # type: ignore[arg-type]
        while (slot := schedule.next_slot()) < end:
            times.append(slot)
    return sorted(times)
