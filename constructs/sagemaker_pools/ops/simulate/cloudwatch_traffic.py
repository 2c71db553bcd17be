"""A live endpoint's traffic from CloudWatch, as a trace for ``simulate --traffic-from``.

Fleet-wide concurrency comes from Little's law on ``ModelLatency`` (``AWS/SageMaker``): the
``Sum`` statistic over a period is the model time of every request in it, in microseconds, so
``Sum / (period x 10^6)`` is the mean number of requests in the model containers during that
period, which is ``Invocations / period x mean ModelLatency``. Why this metric and not
``ConcurrentRequestsPerModel``, with the AWS definitions: ``docs/simulate.md`` ("Replaying an
endpoint's traffic").

Which series: ``ListMetrics`` lists the endpoint's ``ModelLatency`` series; per variant, the
per-instance-type series (dimensions ``EndpointName, VariantName, InstanceType``, published on
endpoints with instance pools) are summed, and only a variant without them is read at the
variant level (``EndpointName, VariantName``): a pooled variant publishes both, and the variant
series is the sum of the others, so adding it too would count the traffic twice. Variants add up
(the simulated template's one variant takes the endpoint's whole traffic).

The period follows CloudWatch's retention (GetMetricData API reference): 60 s while the start is
at most 15 days ago, 300 s up to 63 days, 3600 s up to 455 days; older starts are refused.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..aws import pages
from ..durations import parse_duration
from ..errors import EXIT_USAGE, OpsError
from .inputs import Traffic

__all__ = ["Window", "Series", "Recorded", "parse_time", "window_of", "list_series", "read_traffic_from", "describe"]

NAMESPACE = "AWS/SageMaker"
METRIC = "ModelLatency"
#: ModelLatency's unit is microseconds.
MICROSECONDS = 1_000_000
#: GetMetricData: "A single GetMetricData call can include as many as 500 MetricDataQuery structures."
MAX_QUERIES_PER_CALL = 500
#: (how far back the start may be, the period that keeps data that old), from the GetMetricData
#: API reference: one-minute data points are kept 15 days, five-minute 63 days, one-hour 455 days.
RETENTION = (
    (dt.timedelta(days=15), 60),
    (dt.timedelta(days=63), 300),
    (dt.timedelta(days=455), 3600),
)
_VARIANT = frozenset({"EndpointName", "VariantName"})
_PER_TYPE = frozenset({"EndpointName", "VariantName", "InstanceType"})


@dataclass(frozen=True)
class Window:
    """The time read: ``[start, end)``, both aligned to ``period_s``."""

    start: dt.datetime
    end: dt.datetime
    period_s: int

    @property
    def minutes(self) -> int:
        """Minutes from the start to the end."""
        return int((self.end - self.start).total_seconds()) // 60


@dataclass(frozen=True)
class Series:
    """One ``ModelLatency`` series of the endpoint: its variant and, on a pooled variant, its instance type."""

    variant: str
    instance_type: str | None
    dimensions: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Recorded:
    """What was read: the trace (concurrency per period), its window and the series summed into it."""

    traffic: Traffic
    window: Window
    series: tuple[Series, ...]
    model_seconds: Mapping[Series, float]


def parse_time(text: str, field: str, now: dt.datetime) -> dt.datetime:
    """``text`` as a UTC time: ``now``, a duration ago (``24h``, ``90m``, ``2d``), or ISO 8601.

    ISO 8601 without a UTC offset reads as UTC. Raises :class:`OpsError` (exit 2) naming
    ``field`` and the value otherwise.
    """
    value = text.strip()
    if value.lower() == "now":
        return now
    if value[:1].isdigit() and value[-1:].lower() in ("s", "m", "h", "d"):
        return now - dt.timedelta(seconds=parse_duration(value, field))
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise OpsError(
            f"{field}: {text!r} is not a time: use ISO 8601 (2026-11-28T00:00Z, UTC unless an offset is given), "
            "now, or a duration ago (24h, 90m, 2d)",
            EXIT_USAGE,
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed.astimezone(dt.timezone.utc)


def _floor(moment: dt.datetime, seconds: int) -> dt.datetime:
    epoch = int(moment.timestamp())
    return dt.datetime.fromtimestamp(epoch - epoch % seconds, dt.timezone.utc)


def window_of(start: dt.datetime, end: dt.datetime, now: dt.datetime) -> Window:
    """The window ``[start, end)`` at the finest period CloudWatch still keeps for ``start``.

    Both ends are rounded down to the period (CloudWatch rounds the start the same way; a
    partial last period would read low). Raises :class:`OpsError` (exit 2) for an end in the
    future, a start not before the end, a start older than 455 days, or a window shorter than
    one period.
    """
    if end > now:
        raise OpsError(f"--end {end.isoformat()} is in the future (now: {now.isoformat(timespec='seconds')})", EXIT_USAGE)
    if start >= end:
        raise OpsError(f"--start {start.isoformat()} is not before --end {end.isoformat()}", EXIT_USAGE)
    age = now - start
    period = next((p for limit, p in RETENTION if age <= limit), None)
    if period is None:
        raise OpsError(
            f"--start {start.isoformat()} is {age.days} days ago: CloudWatch keeps endpoint metrics for 455 days "
            "(at one-hour periods after 63 days)",
            EXIT_USAGE,
        )
    window = Window(_floor(start, period), _floor(end, period), period)
    if window.end <= window.start:
        raise OpsError(
            f"--start {start.isoformat()} to --end {end.isoformat()}: less than one {period} s period "
            f"(the period CloudWatch keeps for data {age.days} days old)",
            EXIT_USAGE,
        )
    return window


def list_series(cloudwatch: Any, endpoint: str) -> tuple[Series, ...]:
    """The endpoint's ``ModelLatency`` series to sum (``ListMetrics``, every page): per type where published."""
    found: dict[str, list[Series]] = {}
    listed = pages(
        cloudwatch.list_metrics, "Metrics", Namespace=NAMESPACE, MetricName=METRIC, Dimensions=[{"Name": "EndpointName", "Value": endpoint}]
    )
    for metric in listed:
        dims = {str(d["Name"]): str(d["Value"]) for d in metric.get("Dimensions", [])}
        if frozenset(dims) not in (_VARIANT, _PER_TYPE) or dims["EndpointName"] != endpoint:
            continue  # other shapes (inference components, containers) are not the variant's traffic
        found.setdefault(dims["VariantName"], []).append(Series(dims["VariantName"], dims.get("InstanceType"), tuple(sorted(dims.items()))))
    chosen: list[Series] = []
    for variant in sorted(found):
        per_type = sorted((s for s in found[variant] if s.instance_type is not None), key=lambda s: str(s.instance_type))
        chosen.extend(per_type or [s for s in found[variant] if s.instance_type is None][:1])
    return tuple(chosen)


def _chunks(items: Sequence[Series], size: int) -> Iterator[tuple[int, Sequence[Series]]]:
    for first in range(0, len(items), size):
        yield first, items[first : first + size]


def _fetch(cloudwatch: Any, series: Sequence[Series], window: Window) -> dict[int, dict[dt.datetime, float]]:
    """Per series (by index), ``{timestamp: ModelLatency Sum}``: GetMetricData, 500 queries a call, every page."""
    data: dict[int, dict[dt.datetime, float]] = {i: {} for i in range(len(series))}
    for first, chunk in _chunks(series, MAX_QUERIES_PER_CALL):
        queries = [
            {
                "Id": f"m{first + i}",
                "MetricStat": {
                    "Metric": {"Namespace": NAMESPACE, "MetricName": METRIC, "Dimensions": [{"Name": k, "Value": v} for k, v in s.dimensions]},
                    "Period": window.period_s,
                    "Stat": "Sum",
                },
                "ReturnData": True,
            }
            for i, s in enumerate(chunk)
        ]
        results = pages(
            cloudwatch.get_metric_data, "MetricDataResults",
            MetricDataQueries=queries, StartTime=window.start, EndTime=window.end, ScanBy="TimestampAscending",
        )
        for result in results:  # a series may come back over several pages: its points are joined
            if result.get("StatusCode") in ("InternalError", "Forbidden"):
                messages = "; ".join(str(m.get("Value", "")) for m in result.get("Messages", [])) or "no message"
                raise OpsError(f"GetMetricData could not read {METRIC} ({result.get('Label', result['Id'])}): {result['StatusCode']}: {messages}")
            points = data[int(str(result["Id"])[1:])]
            for stamp, value in zip(result.get("Timestamps", []), result.get("Values", [])):
                points[stamp.astimezone(dt.timezone.utc)] = float(value)
    return data


def read_traffic_from(cloudwatch: Any, endpoint: str, window: Window) -> Recorded:
    """The endpoint's fleet-wide concurrency in ``window``, one row per period (a period without data: 0).

    Raises :class:`OpsError` (exit 1) when CloudWatch lists no ``ModelLatency`` for the endpoint
    or has no data point of it in the window.
    """
    series = list_series(cloudwatch, endpoint)
    span = f"{window.start.isoformat(timespec='minutes')} to {window.end.isoformat(timespec='minutes')}"
    if not series:
        raise OpsError(
            f"--traffic-from {endpoint}: CloudWatch lists no {METRIC} for this endpoint in {NAMESPACE} (it lists metrics "
            "with data in the last two weeks): check the name and the region, and that it served requests"
        )
    data = _fetch(cloudwatch, series, window)
    if not any(data.values()):
        raise OpsError(f"--traffic-from {endpoint}: no {METRIC} data from {span} (the endpoint served no request then)")
    periods = int((window.end - window.start).total_seconds()) // window.period_s
    minutes, values = [], []
    for k in range(periods):
        stamp = window.start + dt.timedelta(seconds=k * window.period_s)
        total_us = math.fsum(points.get(stamp, 0.0) for points in data.values())
        minutes.append(k * window.period_s // 60)
        values.append(total_us / (window.period_s * MICROSECONDS))
    model_seconds = {s: math.fsum(data[i].values()) / MICROSECONDS for i, s in enumerate(series)}
    return Recorded(Traffic("concurrency", tuple(minutes), tuple(values)), window, series, model_seconds)


def describe(recorded: Recorded, endpoint: str) -> str:
    """One line for stderr: what was read, where the model time went, and the trace's peak and mean."""
    window = recorded.window
    total = math.fsum(recorded.model_seconds.values())
    shares = ", ".join(
        f"{s.variant}{'/' + s.instance_type if s.instance_type else ''} {100 * seconds / total if total else 0:.0f} %"
        for s, seconds in recorded.model_seconds.items()
    )
    values = recorded.traffic.values
    coarse = (
        f"; {window.period_s // 60}-minute data (CloudWatch keeps one-minute data for 15 days): each value holds "
        f"{window.period_s // 60} minutes"
        if window.period_s > 60
        else ""
    )
    return (
        f"--traffic-from {endpoint}: {METRIC} from {window.start.isoformat(timespec='minutes')} to "
        f"{window.end.isoformat(timespec='minutes')} ({window.minutes} minutes{coarse}); model time by series: {shares}; "
        f"concurrency peak {max(values):.1f}, mean {math.fsum(values) / len(values):.1f}"
    )
