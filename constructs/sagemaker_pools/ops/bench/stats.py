"""Percentiles, by the nearest-rank method.

The p-th percentile of n values is the ceil(p/100 * n)-th smallest value: always a value that
was measured, and at least p % of the values are at or below it (p100 is the maximum). The
seed article's quick script takes ``sorted[round((n-1) * p)]`` instead, which agrees to within
one rank but can fall below: for 160 values its p99 is the 158th smallest (nearest rank: 159th).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["percentile", "summarize", "PERCENTILES", "PROGRESS_BUCKETS", "progress_bucket", "bucket_percentile"]

#: The percentiles every report shows (100 = max).
PERCENTILES = (50, 90, 95, 99, 100)


def percentile(ordered: Sequence[float], p: float) -> float:
    """Nearest-rank percentile ``p`` (0 < p <= 100) of the ascending ``ordered``."""
    if not ordered:
        raise ValueError("percentile of no values")
    if not 0 < p <= 100:
        raise ValueError(f"percentile {p} outside (0, 100]")
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summarize(values: Sequence[float], scale: float = 1.0) -> dict[str, float | int | None]:
    """``{count, mean, min, p50, p90, p95, p99, max}`` of ``values`` times ``scale`` (None when empty)."""
    ordered = sorted(values)
    result: dict[str, float | int | None] = {"count": len(ordered)}
    if not ordered:
        result.update({"mean": None, "min": None, **{_name(p): None for p in PERCENTILES}})
        return result
    result["mean"] = sum(ordered) / len(ordered) * scale
    result["min"] = ordered[0] * scale
    for p in PERCENTILES:
        result[_name(p)] = percentile(ordered, p) * scale
    return result


def _name(p: int) -> str:
    return "max" if p == 100 else f"p{p}"


#: Log-spaced latency buckets of the live progress line: bucket i holds latencies in
#: ``[_FLOOR_S * _GROWTH**i, _FLOOR_S * _GROWTH**(i+1))`` (5 % wide, 0.1 ms to ~8 hours).
PROGRESS_BUCKETS = 400
_FLOOR_S = 1e-4
_GROWTH = 1.05
_LOG_GROWTH = math.log(_GROWTH)


def progress_bucket(latency_s: float) -> int:
    """The progress bucket of one latency (seconds)."""
    if latency_s <= _FLOOR_S:
        return 0
    return min(PROGRESS_BUCKETS - 1, int(math.log(latency_s / _FLOOR_S) / _LOG_GROWTH))


def bucket_percentile(counts: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile ``p`` of bucketed counts: the upper edge of its bucket (seconds).

    At most 5 % above the exact value; for the live progress line only (the report is exact).
    """
    total = sum(counts)
    if total <= 0:
        return None
    rank = max(1, math.ceil(p / 100 * total))  # (a p so small that p/100 * total is 0 still means the smallest)
    seen = 0.0
    for index, count in enumerate(counts):
        seen += count
        if seen >= rank:
            return _FLOOR_S * _GROWTH ** (index + 1)
    return _FLOOR_S * _GROWTH**PROGRESS_BUCKETS
