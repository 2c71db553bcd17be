"""Nearest-rank percentiles: the rank of every percentile, from values whose rank is their value."""

from __future__ import annotations

import math

import pytest

from sagemaker_pools.ops.bench.stats import percentile, summarize


@pytest.mark.parametrize("n", [1, 2, 7, 10, 160, 1000])
@pytest.mark.parametrize("p", [0.01, 1, 49.9, 50, 90, 95, 99, 99.9, 100])
def test_the_pth_percentile_is_the_ceil_p_n_th_smallest(n: int, p: float) -> None:
    ordered = [float(rank) for rank in range(1, n + 1)]  # the k-th smallest value is k
    assert percentile(ordered, p) == max(1, math.ceil(p / 100 * n))


def test_the_seed_articles_p99_of_160_values_is_one_rank_low() -> None:
    ordered = list(range(1, 161))
    assert percentile(ordered, 99) == 159  # round((n - 1) * 0.99) + 1 would be the 158th


@pytest.mark.parametrize("p", [0, -5, 100.5])
def test_outside_0_to_100_is_refused(p: float) -> None:
    with pytest.raises(ValueError, match=rf"^percentile {p} outside \(0, 100\]$"):
        percentile([1.0, 2.0], p)
    with pytest.raises(ValueError, match="^percentile of no values$"):
        percentile([], 50)


def test_summary_of_unsorted_values_scaled() -> None:
    values = [float(v) for v in range(100, 0, -1)]  # 100 .. 1, unsorted on purpose
    assert summarize(values, scale=1000.0) == {
        "count": 100,
        "mean": 50500.0,
        "min": 1000.0,
        "p50": 50000.0,
        "p90": 90000.0,
        "p95": 95000.0,
        "p99": 99000.0,
        "max": 100000.0,
    }
    assert summarize([]) == {"count": 0, "mean": None, "min": None, "p50": None, "p90": None, "p95": None, "p99": None, "max": None}
