"""Percentiles, by the nearest-rank method.

The p-th percentile of n values is the ceil(p/100 * n)-th smallest value: always a value that
was measured, and at least p % of the values are at or below it (p100 is the maximum). The
seed article's quick script takes ``sorted[round((n-1) * p)]`` instead, which agrees to within
one rank but can fall below: for 160 values its p99 is the 158th smallest (nearest rank: 159th).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["percentile", "summarize", "PERCENTILES"]

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
