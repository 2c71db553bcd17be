"""Mergeable latency histograms (HdrHistogram), so that reports from several clients combine.

Each ``--json`` report carries, beside its exact nearest-rank percentiles, an HdrHistogram of
every latency figure (``histograms``: values in integer microseconds, 1 µs to 1 hour, 3
significant digits, so any value is kept to within 0.1 %), in HdrHistogram's standard
compressed base64 encoding (readable by any HdrHistogram implementation). Adding histograms is
exact: the merged histogram is the one a single client that saw every request would have built.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from .stats import PERCENTILES

__all__ = ["LOWEST_US", "HIGHEST_US", "SIGNIFICANT_FIGURES", "new_histogram", "histogram_of", "encode", "decode", "summary_of"]

#: The range and precision of every histogram (microseconds).
LOWEST_US = 1
HIGHEST_US = 3_600_000_000
SIGNIFICANT_FIGURES = 3


def new_histogram() -> Any:
    """An empty histogram with the report's range and precision."""
    from hdrh.histogram import HdrHistogram

    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)


def histogram_of(values_s: Iterable[float]) -> Any:
    """A histogram of ``values_s`` (seconds), recorded in microseconds."""
    histogram = new_histogram()
    # Count equal values first: recording is pure Python, once per distinct value.
    counts = Counter(min(HIGHEST_US, max(LOWEST_US, round(value * 1e6))) for value in values_s)
    for value, count in counts.items():
        histogram.record_value(value, count)
    return histogram


def encode(histogram: Any) -> str:
    """HdrHistogram's compressed base64 encoding."""
    return str(histogram.encode().decode("ascii"))


def decode(text: str) -> Any:
    """The histogram of an :func:`encode`\\ d string."""
    from hdrh.histogram import HdrHistogram

    return HdrHistogram.decode(text.encode("ascii"))


def summary_of(histogram: Any) -> dict[str, float | int | None]:
    """``{count, mean, min, p50, p90, p95, p99, max}`` in milliseconds, as :func:`~.stats.summarize`."""
    count = int(histogram.get_total_count())
    result: dict[str, float | int | None] = {"count": count}
    names = ["mean", "min", *("max" if p == 100 else f"p{p}" for p in PERCENTILES)]
    if not count:
        result.update({name: None for name in names})
        return result
    result["mean"] = histogram.get_mean_value() / 1000
    result["min"] = histogram.get_min_value() / 1000
    for p in PERCENTILES:
        value = histogram.get_max_value() if p == 100 else histogram.get_value_at_percentile(p)
        result["max" if p == 100 else f"p{p}"] = value / 1000
    return result


def merged(encoded: Iterable[str]) -> Any:
    """The sum of encoded histograms."""
    total = new_histogram()
    for text in encoded:
        total.add(decode(text))
    return total


def encode_all(values: Mapping[str, Iterable[float]]) -> dict[str, str]:
    """``{name: encoded histogram}`` of each named series (seconds)."""
    return {name: encode(histogram_of(series)) for name, series in values.items()}
