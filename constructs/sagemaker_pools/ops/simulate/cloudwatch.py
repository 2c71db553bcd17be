"""CloudWatch as the simulation needs it: a store of per-minute metric data, and alarms.

Metrics are kept per minute as (sample count, sum, minimum, maximum) per metric identity
(namespace, name, dimensions); a statistic over a period combines the minutes of that period.
Alarms evaluate their queries with the one metric-math evaluator
(:mod:`sagemaker_pools.metric_math`) on period-aligned datapoints, with evaluation periods,
datapoints to alarm and missing-data treatment. Sources of each rule: ``docs/simulate.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections import deque
import operator
from operator import attrgetter
from typing import Any, NamedTuple

from ...metric_math import compile_queries, query_signature

__all__ = ["Stats", "Channel", "MetricStore", "Alarm", "Datapoints", "shared_datapoints", "metric_key", "OK", "ALARM", "INSUFFICIENT_DATA"]

#: Datapoints retrieved beyond the evaluation periods (the evaluation range).
EXTRA_DATAPOINTS = 2

OK = "OK"
ALARM = "ALARM"
INSUFFICIENT_DATA = "INSUFFICIENT_DATA"

MetricKey = tuple[str, str, frozenset[tuple[str, str]]]


class Stats(NamedTuple):
    """Samples of one metric in one minute."""

    samples: float
    total: float
    minimum: float
    maximum: float

    @staticmethod
    def of(value: float, count: float = 1.0) -> "Stats":
        """``count`` samples that all read ``value``."""
        return _new_stats(Stats, (count, value * count, value, value))

    def merge(self, other: "Stats") -> "Stats":
        """Both sets of samples."""
        return _new_stats(
            Stats, (self.samples + other.samples, self.total + other.total, min(self.minimum, other.minimum), max(self.maximum, other.maximum))
        )

    def statistic(self, stat: str) -> float | None:
        """``Average``, ``Sum``, ``Minimum``, ``Maximum``, ``SampleCount``, or a percentile ``pNN`` (see :meth:`getter`)."""
        return Stats.getter(stat)(self)

    @staticmethod
    def getter(stat: str) -> Callable[["Stats"], float | None]:
        """The function that reads ``stat`` from a :class:`Stats` (chosen once per query, not per datapoint).

        ``Average``, ``Sum``, ``Minimum``, ``Maximum``, ``SampleCount``, or a percentile ``pNN``:
        a percentile reads as the maximum for p50 and above and the minimum below (the
        simulation's samples within one instance type are equal). Anything else reads as no data.
        """
        if stat in _FIELDS:
            return _FIELDS[stat]
        if stat == "Average":
            return _average
        if stat.startswith(("p", "tm", "wm", "tc", "ts")):
            try:
                level = float(stat.lstrip("ptmwcs").split(":")[0])
            except ValueError:
                return _FIELDS["Maximum"]
            return _FIELDS["Maximum"] if level >= 50 else _FIELDS["Minimum"]
        return _nothing


#: ``tuple.__new__``: builds a :class:`Stats` from a tuple in C (the NamedTuple constructor is a
#: Python function, and a Stats is built for every published sample).
_new_stats = tuple.__new__

#: Publishes ``count`` samples of ``value`` at a minute into one metric's series (:meth:`MetricStore.channel`).
Channel = Callable[[int, float, float], None]

_FIELDS: Mapping[str, Callable[[Stats], float | None]] = {
    "Sum": attrgetter("total"),
    "SampleCount": attrgetter("samples"),
    "Maximum": attrgetter("maximum"),
    "Minimum": attrgetter("minimum"),
}


def _average(stats: Stats) -> float | None:
    return stats.total / stats.samples if stats.samples else None


def _nothing(_stats: Stats) -> float | None:
    return None


def metric_key(metric: Mapping[str, Any]) -> MetricKey:
    """The identity of a metric as CloudWatch matches it: namespace, name and the exact dimension set."""
    dims = frozenset((str(d["Name"]), str(d["Value"])) for d in metric.get("Dimensions", []) or [])
    return (str(metric.get("Namespace", "")), str(metric.get("MetricName", "")), dims)


class MetricStore:
    """Per-minute samples of every published metric.

    Args:
        read: ``(namespace, metric name)`` of every metric some query reads; others are not kept.
            Default: keep everything.
    """

    def __init__(self, read: frozenset[tuple[str, str]] | None = None) -> None:
        self._data: dict[MetricKey, dict[int, Stats]] = {}
        self._read = read
        #: ``(namespace, metric name)`` of every metric that received a sample.
        self.published: set[tuple[str, str]] = set()
        #: The datapoints of every computation some alarm reads, by (query signature, period) (:func:`shared_datapoints`).
        self.shared: dict[tuple[str, int], Datapoints] = {}

    def reads(self, namespace: str, name: str) -> bool:
        """True when some query reads this metric (so it is worth publishing)."""
        return self._read is None or (namespace, name) in self._read

    def publish(self, minute: int, namespace: str, name: str, dimensions: Mapping[str, str], stats: Stats) -> None:
        """Add ``stats`` to one metric at ``minute``."""
        if not self.reads(namespace, name):
            return
        series = self._series(namespace, name, dimensions)
        if not series:  # its first sample (a reader may have made the series already)
            self.published.add((namespace, name))
        previous = series.get(minute)
        series[minute] = stats if previous is None else previous.merge(stats)

    def channel(self, namespace: str, name: str, dimensions: Mapping[str, str]) -> Channel | None:
        """A function publishing into one metric, bound to its series once; None when no query reads it.

        For a publisher that sends the same metrics every minute: no key is built and no read
        check is made per sample. Same effect as :meth:`publish` with ``Stats.of(value, count)``.
        """
        if not self.reads(namespace, name):
            return None
        series = self._series(namespace, name, dimensions)
        published, metric = self.published, (namespace, name)

        def send(minute: int, value: float, count: float) -> None:
            # publish()'s steps, inlined: this runs for every sample the fleet publishes.
            stats = _new_stats(Stats, (count, value * count, value, value))
            if not series:
                published.add(metric)
            previous = series.get(minute)
            series[minute] = stats if previous is None else previous.merge(stats)

        return send

    def _series(self, namespace: str, name: str, dimensions: Mapping[str, str]) -> dict[int, Stats]:
        """The per-minute samples of one metric (shared with its readers, made on first use)."""
        return self._data.setdefault((namespace, name, frozenset(dimensions.items())), {})

    def reader(self, key: MetricKey, stat: str, minutes: int) -> Callable[[int], float | None]:
        """A function of ``last``: ``stat`` over the ``minutes`` minutes ending at ``last`` (from minute 0 on).

        Made once per query: the series and the statistic are looked up here, not per datapoint.
        """
        # The series dict is shared with publish(), so that a reader made before the first sample sees it.
        series = self._data.setdefault(key, {})
        pick = Stats.getter(stat)
        if minutes == 1:

            def one(last: int) -> float | None:
                stats = series.get(last)
                return None if stats is None else pick(stats)

            return one

        def combined(last: int) -> float | None:
            # Stats.merge's arithmetic, minute after minute in the same order, on local fields:
            # one Stats at the end instead of one per minute.
            first: Stats | None = None
            samples = total = low = high = 0.0
            for minute in range(max(0, last - minutes + 1), last + 1):
                stats = series.get(minute)
                if stats is None:
                    continue
                if first is None:
                    first = stats
                    samples, total, low, high = stats
                else:
                    samples, total = samples + stats.samples, total + stats.total
                    low, high = min(low, stats.minimum), max(high, stats.maximum)
            if first is None:
                return None
            return pick(_new_stats(Stats, (samples, total, low, high)))

        return combined


#: The comparison operators as C functions (``operator.gt(v, t)`` is ``v > t``): one call per datapoint.
_COMPARE: Mapping[str, Callable[[float, float], bool]] = {
    "GreaterThanThreshold": operator.gt,
    "GreaterThanOrEqualToThreshold": operator.ge,
    "LessThanThreshold": operator.lt,
    "LessThanOrEqualToThreshold": operator.le,
}


class Datapoints:
    """The values of one query list per period, each computed once, for every alarm that reads them.

    Args:
        run: the compiled queries, called with the last minute of a period.
        period: the period in minutes.
    """

    def __init__(self, run: Callable[[int], float | None], period: int) -> None:
        self._run = run
        self.period = period
        self._values: dict[int, float | None] = {}

    def get(self, index: int) -> float | None:
        """The value of period ``index`` (minutes ``index*period .. (index+1)*period - 1``)."""
        values = self._values
        if index in values:
            return values[index]
        value = values[index] = self._run((index + 1) * self.period - 1)
        return value


def _reader_key(metric_stat: Mapping[str, Any], period: int) -> tuple[MetricKey, str, int]:
    """What :meth:`MetricStore.reader` reads for ``metric_stat`` in an alarm of ``period`` minutes.

    The metric, its statistic and its period in minutes (the alarm's unless it names one).
    """
    minutes = max(1, int(metric_stat.get("Period", period * 60)) // 60)
    return metric_key(metric_stat["Metric"]), str(metric_stat.get("Stat", "Average")), minutes


def _leaf_signature(period: int) -> Callable[[Mapping[str, Any]], str]:
    """A ``MetricStat``'s part of a query signature: exactly what its reader reads, dimensions in order."""

    def leaf(metric_stat: Mapping[str, Any]) -> str:
        (namespace, name, dims), stat, minutes = _reader_key(metric_stat, period)
        return repr((namespace, name, sorted(dims), stat, minutes))

    return leaf


def shared_datapoints(store: MetricStore, queries: Sequence[Mapping[str, Any]], period: int) -> Datapoints:
    """The :class:`Datapoints` of ``queries`` at ``period`` minutes, one per store for equal computations.

    Alarms whose queries compute the same value by the same operations (:func:`query_signature`:
    ids and labels aside, each metric read with the same statistic over the same minutes) at the
    same period share one: a target-tracking policy's high and low alarms, and a template alarm on
    the policy's own metric, compute each datapoint once between them.
    """
    key = (query_signature(queries, _leaf_signature(period)), period)
    found = store.shared.get(key)
    if found is None:

        def bind(metric_stat: Mapping[str, Any]) -> Callable[[int], float | None]:
            return store.reader(*_reader_key(metric_stat, period))

        # Each MetricStat is bound to its series and statistic once: a datapoint is the compiled
        # queries called with the period's last minute.
        found = store.shared[key] = Datapoints(compile_queries(queries, bind=bind), period)
    return found


class Alarm:
    """One metric alarm, evaluated every minute on period-aligned datapoints.

    Args:
        name: shown in the timeline.
        queries: metric-math queries (a single metric is one ``MetricStat`` query).
        period_minutes: the alarm's period.
        evaluation_periods, datapoints_to_alarm: "M out of N".
        threshold, comparison: ``GreaterThanThreshold`` and the three others.
        treat_missing_data: ``missing`` (default), ``notBreaching``, ``breaching`` or ``ignore``.
        store: where the metric data comes from; alarms on the same computation at the same
            period share its datapoints (:func:`shared_datapoints`).
    """

    def __init__(
        self,
        *,
        name: str,
        queries: Sequence[Mapping[str, Any]],
        period_minutes: int,
        evaluation_periods: int,
        datapoints_to_alarm: int,
        threshold: float,
        comparison: str,
        treat_missing_data: str,
        store: MetricStore,
    ) -> None:
        self.name = name
        self.period = max(1, period_minutes)
        self.evaluation_periods = evaluation_periods
        self.datapoints_to_alarm = datapoints_to_alarm
        self.threshold = threshold
        self.compare = _COMPARE.get(comparison, _COMPARE["GreaterThanThreshold"])
        self.treat_missing_data = treat_missing_data
        self.state = INSUFFICIENT_DATA
        self._datapoints = shared_datapoints(store, queries, self.period)
        # The evaluation range: more datapoints than the evaluation periods (the user guide's
        # example retrieves 5 for 3 evaluation periods).
        self._range = evaluation_periods + EXTRA_DATAPOINTS
        self._window: deque[float | None] = deque([None] * self._range, maxlen=self._range)
        # Whether each datapoint of the window breaches, and, over its last evaluation_periods
        # datapoints, how many are missing and how many breach: kept as the window slides, so that
        # the common case (no missing datapoint among them) decides without scanning the window.
        self._breaches: deque[bool] = deque([False] * self._range, maxlen=self._range)
        self._counted = evaluation_periods >= 1
        self._oldest_counted = self._range - evaluation_periods  # the window index leaving the count on a push
        self._missing_recent = max(0, evaluation_periods)
        self._breaching_recent = 0
        self._present = 0  # present datapoints in the whole window
        self._newest = -1
        self.last_value: float | None = None

    def datapoint(self, index: int) -> float | None:
        """The value of period ``index`` (minutes ``index*period .. (index+1)*period - 1``)."""
        return self._datapoints.get(index)

    def evaluate(self, minute: int) -> str:
        """The state after the datapoints complete by the end of ``minute`` (changes only when a period completes).

        CloudWatch's rules ("How alarm state is evaluated when data is missing"): with at least
        ``evaluation_periods`` datapoints present in the evaluation range, the most recent of them
        decide and the missing-data setting is not used; with none, ``missing`` gives
        INSUFFICIENT_DATA, ``ignore`` keeps the state, ``breaching`` / ``notBreaching`` fill them
        in; with some, ``breaching`` / ``notBreaching`` fill in the rest, while ``missing`` and
        ``ignore`` go to OK when a present datapoint does not breach and fewer than
        ``datapoints_to_alarm`` do, and otherwise (only breaching datapoints, too few) go to ALARM
        if the oldest datapoint of the range is present (``missing``), else to INSUFFICIENT_DATA
        (``missing``) or keep the state (``ignore``).
        """
        newest = (minute + 1) // self.period - 1
        if newest == self._newest:
            return self.state
        datapoints = self._datapoints
        if newest == self._newest + 1 and newest >= 0:  # the common case: one more period complete
            value = datapoints.get(newest)
            if value is not None or self._present:  # else all missing before and after: nothing moves
                self._push(value)
        else:
            for index in range(max(self._newest + 1, newest - self._range + 1), newest + 1):
                self._push(datapoints.get(index) if index >= 0 else None)
        self._newest = newest
        self.last_value = self._window[-1]
        if self._counted and not self._missing_recent:
            # The last evaluation_periods datapoints are all present: they are the most recent
            # present ones, and they alone decide (the first rule above).
            self.state = ALARM if self._breaching_recent >= self.datapoints_to_alarm else OK
        elif self._counted and not self._present:
            self.state = self._without_data()  # e.g. a metric the fleet never publishes
        else:
            self.state = self._decide()
        return self.state

    def _push(self, value: float | None) -> None:
        """Slide the window by one datapoint, keeping the counts over its last evaluation_periods datapoints."""
        breaches = value is not None and self.compare(value, self.threshold)
        if self._counted:
            leaving = self._oldest_counted
            if self._window[leaving] is None:
                self._missing_recent -= 1
            self._breaching_recent -= self._breaches[leaving]
            if value is None:
                self._missing_recent += 1
            self._breaching_recent += breaches
        if self._window[0] is not None:  # the oldest leaves the window
            self._present -= 1
        if value is not None:
            self._present += 1
        self._window.append(value)
        self._breaches.append(breaches)

    def _decide(self) -> str:
        """The state by the rules of :meth:`evaluate`, scanning the window (any datapoints missing)."""
        compare, threshold, needed = self.compare, self.threshold, self.datapoints_to_alarm
        present = [v for v in self._window if v is not None]
        n = self.evaluation_periods
        if len(present) >= n:
            breaching = sum(1 for v in present[-n:] if compare(v, threshold))
            return ALARM if breaching >= needed else OK
        if not present:
            return self._without_data()
        treat = self.treat_missing_data
        breaching = sum(1 for v in present if compare(v, threshold))
        if treat in ("breaching", "notBreaching"):
            if treat == "breaching":
                breaching += n - len(present)
            return ALARM if breaching >= needed else OK
        if breaching >= needed:
            return ALARM
        if breaching < len(present):  # a present datapoint does not breach
            return OK
        if treat == "ignore":
            return self.state
        return ALARM if self._window[0] is not None else INSUFFICIENT_DATA

    def _without_data(self) -> str:
        """The state by the rules of :meth:`evaluate` when no datapoint of the window is present (fewer than evaluation_periods)."""
        treat = self.treat_missing_data
        if treat == "breaching":  # all filled in as breaching
            return ALARM if self.evaluation_periods >= self.datapoints_to_alarm else OK
        if treat == "notBreaching":
            return ALARM if 0 >= self.datapoints_to_alarm else OK
        return INSUFFICIENT_DATA if treat == "missing" else self.state

    def recent(self, minute: int) -> list[float]:
        """The present datapoints of the evaluation range ending at ``minute`` (oldest first)."""
        self.evaluate(minute)
        present = [v for v in self._window if v is not None]
        return present[-self.evaluation_periods :]
