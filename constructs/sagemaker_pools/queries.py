"""CloudWatch queries as plain Python data: metric stats and metric-math expressions.

The library's metrics (weighted utilization, the alarms' inputs, the dashboard's lines) are built
once per endpoint as :class:`Stat` and :class:`Math` values and rendered straight into what
CloudFormation receives: a scaling policy's ``CustomizedMetricSpecification.Metrics``
(``scaling.py``), an ``AWS::CloudWatch::Alarm``'s ``Metrics`` or single-metric properties
(:func:`alarm_properties`) and a dashboard body (:func:`dashboard_lines`). Nothing here talks to
Node: a CDK ``Metric`` or ``MathExpression`` costs a round trip per object and per property read,
and on a fleet of endpoints those were most of the library's synth time (docs/performance.md).
CDK objects are made only at the public edges: :func:`to_cloudwatch` for a ``metric_*()`` method,
and :func:`from_cloudwatch` for a metric a user hands in.

Rendering follows what CDK's own ``Alarm``, ``Dashboard`` and ``MetricStatConfig`` produce
(dimensions sorted by name, the top expression of an alarm with id ``expr_1``), so a template is
the same whichever way a metric came in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from ._l1 import l1_properties
from .errors import PoolConfigError

__all__ = [
    "Stat",
    "Math",
    "Query",
    "FlatQuery",
    "METRIC_ID",
    "flatten",
    "to_cloudwatch",
    "from_cloudwatch",
    "alarm_properties",
    "l1_dimensions",
    "dashboard_lines",
    "unit_name",
    "dashboard_line",
]

#: A metric-math id: a lowercase letter, then letters, digits and underscores (CloudWatch's rule).
METRIC_ID = re.compile(r"^[a-z][A-Za-z0-9_]*$")
#: Percentile-style statistics go to an alarm's ``ExtendedStatistic`` (p99, tm90, ...).
_SIMPLE_STATISTICS = {"SampleCount", "Average", "Sum", "Minimum", "Maximum"}


def unit_name(unit: cloudwatch.Unit) -> str:
    """CloudWatch's spelling of a CDK unit: ``MICROSECONDS`` -> ``Microseconds``, ``BYTES_PER_SECOND`` -> ``Bytes/Second``."""
    before, _, after = unit.value.partition("_PER_")
    return "/".join(part.replace("_", " ").title().replace(" ", "") for part in (before, after) if part)


@dataclass(frozen=True)
class Stat:
    """One metric read with one statistic over ``period`` seconds.

    Attributes:
        namespace, metric_name: the metric.
        dimensions: ``(name, value)`` pairs (values may be tokens), kept sorted by name.
        statistic: ``"Average"``, ``"Maximum"``, ``"p99"`` ...
        period: seconds.
        unit: the unit filter, or ``None``.
        label: for graphs and query lists, or ``None``.
        account, region: of a cross-account / cross-region graph, or ``None``.
    """

    namespace: str
    metric_name: str
    dimensions: tuple[tuple[str, str], ...]
    statistic: str
    period: int = 60
    unit: cloudwatch.Unit | None = None
    label: str | None = None
    account: str | None = None
    region: str | None = None

    def __post_init__(self) -> None:
        # Kept sorted by name, as CloudWatch queries list them (and so equal however given).
        object.__setattr__(self, "dimensions", tuple(sorted(self.dimensions)))

    def rendered_dimensions(self) -> tuple[tuple[str, str], ...]:
        """The dimensions as CloudWatch queries list them: sorted by name."""
        return self.dimensions


@dataclass(frozen=True)
class Math:
    """A metric-math expression over named inputs (metric stats or other expressions).

    Attributes:
        expression: the math text, e.g. ``"MAX([u1, u2])"``.
        using: ``(id, input)`` pairs in order.
        period: seconds (graphs and alarms; target tracking ignores it).
        label: or ``None``.
    """

    expression: str
    using: tuple[tuple[str, "Query"], ...]
    period: int = 60
    label: str | None = None


Query = Union[Stat, Math]


@dataclass(frozen=True)
class FlatQuery:
    """A query flattened into CloudWatch's list form.

    Attributes:
        stats: ``{id: stat}`` of every metric read, in first-use order.
        expressions: ``{id: expression}`` of every nested expression (not the top one).
        expression: the top expression, or ``None`` when the query is a single metric stat
            (then ``stats`` is ``{"m1": stat}``).
        labels: ``{id: label}`` of the nested queries that have one.
        label: the top query's label, or ``None``.
    """

    stats: Mapping[str, Stat]
    expressions: Mapping[str, str]
    expression: str | None
    labels: Mapping[str, str]
    label: str | None

    @property
    def metric_count(self) -> int:
        """Metrics read (what CloudWatch's 10-metric alarm limit counts)."""
        return len(self.stats)


def flatten(query: Query, field: str = "metric") -> FlatQuery:
    """Flatten ``query`` into ids, metric stats and expressions (depth first, in ``using`` order).

    Raises:
        PoolConfigError: an invalid id, or one id naming two different inputs.
    """
    if isinstance(query, Stat):
        return FlatQuery({"m1": query}, {}, None, {"m1": query.label} if query.label else {}, query.label)
    stats: dict[str, Stat] = {}
    expressions: dict[str, str] = {}
    labels: dict[str, str] = {}
    seen: dict[str, Query] = {}

    def visit(ident: str, item: Query) -> None:
        if not METRIC_ID.match(ident):
            raise PoolConfigError(f"{field}.id", ident, "a lowercase letter, then letters, digits or underscores")
        if ident in seen:
            if seen[ident] != item:
                raise PoolConfigError(f"{field}.id", ident, "each metric-math id naming one metric or expression")
            return
        seen[ident] = item
        if item.label:
            labels[ident] = item.label
        if isinstance(item, Math):
            expressions[ident] = item.expression
            for child_id, child in item.using:
                visit(child_id, child)
        else:
            stats[ident] = item

    for child_id, child in query.using:
        visit(child_id, child)
    return FlatQuery(stats, expressions, query.expression, labels, query.label)


# -- CDK objects, at the public edges ----------------------------------------------------------


def to_cloudwatch(query: Query, *, period: Duration | None = None, color: str | None = None) -> cloudwatch.IMetric:
    """``query`` as a CDK ``Metric`` or ``MathExpression`` (for the public ``metric_*()`` methods).

    Args:
        period: the period as the caller gave it (spares a conversion). Default: ``query.period``.
        color: of a single metric. Default: none.
    """
    duration = period or Duration.seconds(query.period)
    if isinstance(query, Stat):
        return cloudwatch.Metric(
            namespace=query.namespace,
            metric_name=query.metric_name,
            dimensions_map=dict(query.dimensions),
            statistic=query.statistic,
            unit=query.unit,
            period=duration,
            label=query.label,
            color=color,
            account=query.account,
            region=query.region,
        )
    return cloudwatch.MathExpression(
        expression=query.expression,
        # CDK's MathExpression applies its own period to every input anyway.
        using_metrics={ident: to_cloudwatch(child, period=duration) for ident, child in query.using},
        period=duration,
        label=query.label,
    )


def from_cloudwatch(metric: cloudwatch.IMetric, field: str = "metric") -> Query:
    """A CDK ``Metric`` or (nested) ``MathExpression`` a user handed in, as a query.

    Raises:
        PoolConfigError: neither a metric nor a math expression.
    """
    config = metric.to_metric_config()
    label = getattr(metric, "label", None) or None
    if config.math_expression is not None:
        math = config.math_expression
        using = tuple((ident, from_cloudwatch(child, field)) for ident, child in (math.using_metrics or {}).items())
        return Math(math.expression, using, int(math.period) if math.period else 60, label)
    stat = config.metric_stat
    if stat is None:
        raise PoolConfigError(field, metric, "a CloudWatch Metric or MathExpression")
    return Stat(
        namespace=stat.namespace,
        metric_name=stat.metric_name,
        dimensions=tuple((d.name, str(d.value)) for d in stat.dimensions or []),
        statistic=stat.statistic,
        period=int(stat.period.to_seconds()),
        unit=stat.unit_filter,
        label=label,
        account=stat.account,
        region=stat.region,
    )


# -- renderers ----------------------------------------------------------------------------------


def _metric_stat_json(stat: Stat) -> dict[str, Any]:
    rendered: dict[str, Any] = {
        "Metric": {
            "Dimensions": [{"Name": name, "Value": value} for name, value in stat.rendered_dimensions()],
            "MetricName": stat.metric_name,
            "Namespace": stat.namespace,
        },
        "Period": stat.period,
        "Stat": stat.statistic,
    }
    if stat.unit is not None:
        rendered["Unit"] = unit_name(stat.unit)
    return rendered


def alarm_properties(query: Query, field: str = "metric") -> dict[str, Any]:
    """The metric part of ``AWS::CloudWatch::Alarm`` properties (``CfnAlarm`` keyword arguments).

    A single stat becomes ``namespace``/``metric_name``/``dimensions``/``statistic`` (or
    ``extended_statistic`` for percentiles)/``period``/``unit``; an expression becomes ``metrics``:
    the top expression (id ``expr_1``, ``ReturnData: true``) and then every input, as CDK's
    ``Alarm`` writes them. Nested property types are plain dicts (see ``_l1.l1_properties``).
    """
    alarm = cloudwatch.CfnAlarm
    if isinstance(query, Stat):
        simple = query.statistic in _SIMPLE_STATISTICS
        return {
            "namespace": query.namespace,
            "metric_name": query.metric_name,
            "dimensions": l1_dimensions(alarm.DimensionProperty, query),
            "statistic": query.statistic if simple else None,
            "extended_statistic": None if simple else query.statistic,
            "period": query.period,
            "unit": unit_name(query.unit) if query.unit is not None else None,
        }
    flat = flatten(query, field)
    data = alarm.MetricDataQueryProperty
    metrics = [l1_properties(data, id="expr_1", expression=flat.expression, label=flat.label, return_data=True)]
    metrics += [
        l1_properties(data, id=ident, expression=text, label=flat.labels.get(ident), return_data=False)
        for ident, text in flat.expressions.items()
    ]
    for ident, stat in flat.stats.items():
        metrics.append(
            l1_properties(
                data,
                id=ident,
                label=flat.labels.get(ident),
                return_data=False,
                metric_stat=l1_properties(
                    alarm.MetricStatProperty,
                    metric=l1_properties(
                        alarm.MetricProperty,
                        namespace=stat.namespace,
                        metric_name=stat.metric_name,
                        dimensions=l1_dimensions(alarm.DimensionProperty, stat),
                    ),
                    period=stat.period,
                    stat=stat.statistic,
                    unit=unit_name(stat.unit) if stat.unit is not None else None,
                ),
            )
        )
    return {"metrics": metrics}


def l1_dimensions(dimension_type: type, stat: Stat) -> list[dict[str, Any]]:
    """``stat``'s dimensions as an L1's dimension property type (``name``/``value``), sorted by name."""
    return [l1_properties(dimension_type, name=name, value=value) for name, value in stat.rendered_dimensions()]



def dashboard_line(stat: Stat, period: int, **options: Any) -> list[Any]:
    """One metric line of a dashboard graph, as CloudWatch's dashboard body spells it."""
    rendered = {**options, "period": period}
    if stat.statistic != "Average":  # CloudWatch's default statistic: CDK leaves it out too
        rendered["stat"] = stat.statistic
    return [stat.namespace, stat.metric_name, *(part for pair in stat.rendered_dimensions() for part in pair), rendered]


def dashboard_lines(query: Query, period: int) -> list[list[Any]]:
    """A metric-math expression as graph lines: the expression shown, its inputs hidden."""
    flat = flatten(query, "PoolDashboard.metric")
    if flat.expression is None:
        return [dashboard_line(flat.stats["m1"], period, **({"label": flat.label} if flat.label else {}))]
    lines: list[list[Any]] = [[{"label": flat.label or "", "expression": flat.expression, "period": period}]]
    for ident, text in flat.expressions.items():
        entry: dict[str, Any] = {"expression": text, "period": period, "visible": False, "id": ident}
        if ident in flat.labels:
            entry = {"label": flat.labels[ident], **entry}
        lines.append([entry])
    for ident, stat in flat.stats.items():
        lines.append(dashboard_line(stat, period, id=ident, visible=False))
    return lines


