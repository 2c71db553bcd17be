"""The one factory for SageMaker endpoint metrics, and the weighted utilization of a mixed fleet.

Every CloudWatch metric this library reads is made by :func:`sagemaker_metric`: it knows each
metric's namespace (``AWS/SageMaker`` for invocation metrics, ``/aws/sagemaker/Endpoints`` and
``/aws/sagemaker/InferenceComponents`` for utilization), its default statistic and unit, and the
dimensions it is published with. On a pooled endpoint SageMaker also publishes every metric with an
``InstanceType`` dimension (docs: "Monitor instance pools"): ``instance_type=`` *adds* it to
``EndpointName``/``VariantName`` (or ``InferenceComponentName``), it never replaces them, and
``dimensions_map`` merges the same way.

:func:`weighted_utilization` turns per-type concurrency into one 0.0-1.0 signal for target
tracking (see ``docs/scaling.md`` for the strategies, their formulas and the values they read).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack

from aws_cdk import Duration, Token
from aws_cdk import aws_cloudwatch as cloudwatch

from ._tokens import is_unresolved
from ._validate import concrete_seconds
from .errors import PoolConfigError
from .pools import InstancePool, resolve_pools
from .queries import Math, Query, Stat, to_cloudwatch

__all__ = [
    "MetricOptions",
    "MetricSpec",
    "MetricSource",
    "SAGEMAKER_METRICS",
    "UtilizationStrategy",
    "DEFAULT_UTILIZATION_STRATEGY",
    "InstanceCountSource",
    "DEFAULT_INSTANCE_COUNT_SOURCE",
    "variant_instances_query",
    "check_count_source",
    "sagemaker_metric",
    "sagemaker_stat",
    "instance_count_metric",
    "instance_count_stat",
    "instance_samples_metric",
    "weighted_utilization",
    "weighted_utilization_query",
    "INVOCATION_NAMESPACE",
    "ENDPOINT_NAMESPACE",
    "INFERENCE_COMPONENT_NAMESPACE",
]

#: Invocation metrics (requests, latency, errors, concurrency, async backlog).
INVOCATION_NAMESPACE = "AWS/SageMaker"
#: Instance utilization metrics of endpoint variants (CPU, GPU, memory, disk).
ENDPOINT_NAMESPACE = "/aws/sagemaker/Endpoints"
#: Utilization metrics of inference-component copies (normalized to the copy's reservation).
INFERENCE_COMPONENT_NAMESPACE = "/aws/sagemaker/InferenceComponents"


class MetricOptions(TypedDict, total=False):
    """The options every metric helper takes (each optional; defaults come from :class:`MetricSpec`).

    Keys: ``statistic`` (e.g. ``"Average"``, ``"p99"``), ``period`` (default 1 minute), ``label``,
    ``color``, ``unit`` (a unit *filter*), ``dimensions_map`` (merged over the defaults),
    ``account`` and ``region`` (cross-account/region graphs).
    """

    statistic: str
    period: Duration
    label: str
    color: str
    unit: cloudwatch.Unit
    dimensions_map: Mapping[str, str]
    account: str
    region: str


@dataclass(frozen=True)
class MetricSpec:
    """What SageMaker documents for one metric.

    Attributes:
        namespace: where it is published.
        statistic: the statistic that makes sense by default.
        unit: the published unit, applied as the metric's unit filter; ``None`` where SageMaker
            publishes counts without a unit (documented as "Units: None").
        dimension_keys: which of the source's dimensions it is published with; ``None`` = all
            (async backlog metrics carry ``EndpointName`` only).
        description: one line for documentation and dashboards.
    """

    namespace: str
    statistic: str
    unit: cloudwatch.Unit | None = None
    dimension_keys: tuple[str, ...] | None = None
    description: str = ""


_US = cloudwatch.Unit.MICROSECONDS
_PCT = cloudwatch.Unit.PERCENT
_ENDPOINT_ONLY = ("EndpointName",)
#: The default period, built once (each Duration.minutes() is a round trip to Node).
_ONE_MINUTE = Duration.minutes(1)
#: Why a metric's period cannot be a deploy-time parameter (see ``concrete_seconds``).
PERIOD_IS_CHECKED = (
    "CloudWatch takes a metric's period as 1, 5, 10, 30 or a multiple of 60 seconds, which CDK checks when it builds the metric"
)

#: The SageMaker metrics this library knows (SageMaker developer guide, "Amazon SageMaker AI
#: metrics in Amazon CloudWatch"). Others can still be made by passing ``namespace=``.
SAGEMAKER_METRICS: Mapping[str, MetricSpec] = {
    "Invocations": MetricSpec(INVOCATION_NAMESPACE, "Sum", description="InvokeEndpoint requests"),
    "InvocationsPerInstance": MetricSpec(
        INVOCATION_NAMESPACE, "Sum", description="requests normalized by the variant's instance count"
    ),
    "InvocationsPerCopy": MetricSpec(INVOCATION_NAMESPACE, "Sum", description="requests per inference-component copy"),
    "Invocation4XXErrors": MetricSpec(INVOCATION_NAMESPACE, "Sum", description="requests answered 4xx"),
    "Invocation5XXErrors": MetricSpec(INVOCATION_NAMESPACE, "Sum", description="requests answered 5xx"),
    "InvocationModelErrors": MetricSpec(INVOCATION_NAMESPACE, "Sum", description="requests the model failed"),
    "ModelLatency": MetricSpec(INVOCATION_NAMESPACE, "Average", _US, description="time in the model container"),
    "OverheadLatency": MetricSpec(INVOCATION_NAMESPACE, "Average", _US, description="time SageMaker adds"),
    # Documented valid statistics: Min and Max.
    "ConcurrentRequestsPerModel": MetricSpec(
        INVOCATION_NAMESPACE, "Maximum", description="requests in flight on one model container (10 s resolution)"
    ),
    "ConcurrentRequestsPerCopy": MetricSpec(
        INVOCATION_NAMESPACE, "Maximum", description="requests in flight on one inference-component copy"
    ),
    "NoCapacityInvocationFailures": MetricSpec(
        INVOCATION_NAMESPACE, "Sum", description="requests that failed for lack of capacity"
    ),
    "ApproximateBacklogSize": MetricSpec(
        INVOCATION_NAMESPACE, "Average", dimension_keys=_ENDPOINT_ONLY, description="queued async requests"
    ),
    "ApproximateBacklogSizePerInstance": MetricSpec(
        INVOCATION_NAMESPACE, "Average", dimension_keys=_ENDPOINT_ONLY, description="queued async requests per instance"
    ),
    # Named by the instance-pool launch post among the metrics that carry InstanceType; the
    # SageMaker metrics reference does not list it (docs/scaling.md, "The per-type count signal").
    "InstanceCount": MetricSpec(INVOCATION_NAMESPACE, "Average", description="instances of the variant (of one type with InstanceType)"),
    "HasBacklogWithoutCapacity": MetricSpec(
        INVOCATION_NAMESPACE, "Average", dimension_keys=_ENDPOINT_ONLY, description="1 while requests wait and no instance runs"
    ),
    "CPUUtilization": MetricSpec(ENDPOINT_NAMESPACE, "Average", _PCT, description="CPU, 0-100 x vCPUs, per instance"),
    "MemoryUtilization": MetricSpec(ENDPOINT_NAMESPACE, "Average", _PCT, description="memory, 0-100, per instance"),
    "GPUUtilization": MetricSpec(ENDPOINT_NAMESPACE, "Average", _PCT, description="GPU, 0-100 x GPUs, per instance"),
    "GPUMemoryUtilization": MetricSpec(
        ENDPOINT_NAMESPACE, "Average", _PCT, description="GPU memory, 0-100 x GPUs, per instance"
    ),
    "DiskUtilization": MetricSpec(ENDPOINT_NAMESPACE, "Average", _PCT, description="disk, 0-100, per instance"),
    "CPUUtilizationNormalized": MetricSpec(
        INFERENCE_COMPONENT_NAMESPACE, "Average", _PCT, description="CPU of one copy, of its reservation"
    ),
    "MemoryUtilizationNormalized": MetricSpec(
        INFERENCE_COMPONENT_NAMESPACE, "Average", _PCT, description="memory of one copy, of its reservation"
    ),
    "GPUUtilizationNormalized": MetricSpec(
        INFERENCE_COMPONENT_NAMESPACE, "Average", _PCT, description="GPU of one copy, of its reservation"
    ),
    "GPUMemoryUtilizationNormalized": MetricSpec(
        INFERENCE_COMPONENT_NAMESPACE, "Average", _PCT, description="GPU memory of one copy, of its reservation"
    ),
}


@dataclass(frozen=True)
class MetricSource:
    """What a metric is about: an endpoint variant, a whole endpoint or an inference component.

    Build one with :meth:`variant`, :meth:`endpoint` or :meth:`inference_component`; names may be
    tokens.
    """

    dimensions: tuple[tuple[str, str], ...]
    #: ``"variant"``, ``"endpoint"`` or ``"inference-component"``.
    kind: str

    @staticmethod
    def variant(endpoint_name: str, variant_name: str) -> "MetricSource":
        """A production variant: dimensions ``EndpointName`` and ``VariantName``."""
        return MetricSource((("EndpointName", endpoint_name), ("VariantName", variant_name)), "variant")

    @staticmethod
    def endpoint(endpoint_name: str) -> "MetricSource":
        """A whole endpoint: dimension ``EndpointName`` (async backlog metrics)."""
        return MetricSource((("EndpointName", endpoint_name),), "endpoint")

    @staticmethod
    def inference_component(inference_component_name: str) -> "MetricSource":
        """An inference component: dimension ``InferenceComponentName``."""
        return MetricSource((("InferenceComponentName", inference_component_name),), "inference-component")

    @property
    def concurrency_metric(self) -> str:
        """The per-container concurrency metric of this kind of source."""
        return "ConcurrentRequestsPerCopy" if self.kind == "inference-component" else "ConcurrentRequestsPerModel"

    @property
    def presence_metric(self) -> str:
        """The per-instance (per-copy) utilization metric whose SampleCount counts instances (copies)."""
        return "CPUUtilizationNormalized" if self.kind == "inference-component" else "CPUUtilization"


def sagemaker_stat(
    metric_name: str,
    source: MetricSource,
    *,
    instance_type: str | None = None,
    namespace: str | None = None,
    statistic: str | None = None,
    period: int = 60,
    label: str | None = None,
    unit: cloudwatch.Unit | None = None,
    dimensions_map: Mapping[str, str] | None = None,
    account: str | None = None,
    region: str | None = None,
    field: str = "metric",
) -> Stat:
    """One SageMaker metric of ``source`` as plain query data (see :func:`sagemaker_metric`).

    ``period`` is in seconds; ``statistic`` and ``unit`` default to the documented ones.

    Raises:
        PoolConfigError: an unknown metric without a ``namespace`` (or with an empty one), or a bad dimension.
    """
    spec = SAGEMAKER_METRICS.get(metric_name)
    if spec is None and not namespace:
        raise PoolConfigError(
            f"{field}.metric_name",
            metric_name,
            f"a SageMaker metric ({', '.join(sorted(SAGEMAKER_METRICS))}) or any metric with namespace=...",
        )
    dimensions = {k: v for k, v in source.dimensions if spec is None or spec.dimension_keys is None or k in spec.dimension_keys}
    if instance_type is not None:
        if not is_unresolved(instance_type) and (not isinstance(instance_type, str) or not instance_type.startswith("ml.")):
            raise PoolConfigError(f"{field}.instance_type", instance_type, "an ml.* instance type such as 'ml.g6e.48xlarge'")
        dimensions["InstanceType"] = instance_type
    for key, value in (dimensions_map or {}).items():
        if key in dimensions and dimensions[key] != value:
            raise PoolConfigError(
                f"{field}.dimensions_map[{key!r}]", value, f"the source's own value {dimensions[key]!r} (dimensions are merged, not replaced)"
            )
        dimensions[key] = value
    return Stat(
        namespace=namespace or (spec.namespace if spec else ""),
        metric_name=metric_name,
        dimensions=tuple(dimensions.items()),
        statistic=statistic or (spec.statistic if spec else "Average"),
        period=period,
        unit=unit if unit is not None else (spec.unit if spec else None),
        label=label,
        account=account,
        region=region,
    )


def sagemaker_metric(
    metric_name: str,
    source: MetricSource,
    *,
    instance_type: str | None = None,
    namespace: str | None = None,
    **options: Unpack[MetricOptions],
) -> cloudwatch.Metric:
    """One SageMaker metric of ``source``, for the whole source or for one instance type.

    Args:
        metric_name: a SageMaker metric name, e.g. ``"ModelLatency"`` (see :data:`SAGEMAKER_METRICS`).
        source: what the metric is about (:class:`MetricSource`).
        instance_type: add the ``InstanceType`` dimension (``"ml.g6e.48xlarge"``). Default: the
            whole variant (all instance types).
        namespace: required for a metric this library does not know; for a known one it
            overrides the documented namespace. Default: the documented namespace.
        options: :class:`MetricOptions`. Default: the documented statistic and unit, 1-minute period.

    Raises:
        PoolConfigError: an unknown metric without a ``namespace`` (or with an empty one), or a bad dimension.
    """
    period = options.get("period") or _ONE_MINUTE
    stat = sagemaker_stat(
        metric_name,
        source,
        instance_type=instance_type,
        namespace=namespace,
        statistic=options.get("statistic"),
        period=concrete_seconds(period, "metric.period", PERIOD_IS_CHECKED),
        label=options.get("label"),
        unit=options.get("unit"),
        dimensions_map=options.get("dimensions_map"),
        account=options.get("account"),
        region=options.get("region"),
    )
    return to_cloudwatch(stat, period=period, color=options.get("color"))  # type: ignore[return-value]


class InstanceCountSource(enum.Enum):
    """Where a per-instance-type count of a variant's instances comes from.

    No AWS reference documents a CloudWatch metric that counts a pool's instances: the developer
    guide ("Monitor instance pools") lists ``Invocations``, ``ModelLatency``, ``CPUUtilization`` ...
    with the ``InstanceType`` dimension and says "To see the current instance count for each pool,
    call the DescribeEndpoint API". The readings, and what each source gives under them, are in
    ``docs/aws-readings.md``.
    """

    #: ``SampleCount`` of ``CPUUtilization`` (``/aws/sagemaker/Endpoints``) with ``InstanceType``
    #: (for an inference component: of ``CPUUtilizationNormalized``). The metric and the
    #: dimension are documented; that the count per minute *equals* the instances (one data
    #: point per instance per publish interval) is a reading. That it is above zero while an
    #: instance of the type reports holds under every reading: what the fallback alarm needs.
    #: The default.
    CPU_SAMPLES = "cpu-samples"
    #: ``InstanceCount`` (``AWS/SageMaker``) with ``InstanceType``, statistic Average: named only
    #: by the instance-pool launch post, with no namespace, statistic or unit; no AWS reference
    #: documents it. An explicit choice; where it is not published, whatever reads it reads
    #: nothing (``sagemaker-pools status --check-metrics`` tells).
    INSTANCE_COUNT_METRIC = "instance-count-metric"


#: The count source used when none is given: a documented metric.
DEFAULT_INSTANCE_COUNT_SOURCE = InstanceCountSource.CPU_SAMPLES


def check_count_source(count_source: object, field: str = "count_source") -> None:
    """Refuse anything but an :class:`InstanceCountSource`, naming ``field`` and the allowed ones."""
    if not isinstance(count_source, InstanceCountSource):
        raise PoolConfigError(field, count_source, f"an InstanceCountSource ({', '.join(s.name for s in InstanceCountSource)})")


def instance_count_stat(
    source: MetricSource,
    *,
    instance_type: str | None = None,
    statistic: str | None = None,
    period: int = 60,
    count_source: InstanceCountSource = DEFAULT_INSTANCE_COUNT_SOURCE,
) -> Stat:
    """The instances of a variant (for an inference component: its copies), per type or in all.

    With :attr:`InstanceCountSource.CPU_SAMPLES` (the default, and always for an inference
    component) it is the ``SampleCount`` of the per-instance utilization metric (see
    :func:`instance_samples_metric`): at a 60-second period and SageMaker's default 60-second
    publishing, one sample per instance (``statistic`` is ignored). With
    :attr:`InstanceCountSource.INSTANCE_COUNT_METRIC` it is ``InstanceCount`` (``AWS/SageMaker``,
    statistic ``statistic`` or Average), which no AWS reference documents. See
    ``docs/aws-readings.md``.
    """
    label = f"instances {instance_type or ''}".strip()
    check_count_source(count_source)
    if source.kind == "inference-component" or count_source is InstanceCountSource.CPU_SAMPLES:
        return sagemaker_stat(source.presence_metric, source, instance_type=instance_type, statistic="SampleCount", period=period, label=label)
    return sagemaker_stat("InstanceCount", source, instance_type=instance_type, statistic=statistic, period=period, label=label)


def variant_instances_query(source: MetricSource, *, period: int = 60, label: str = "instances") -> Math:
    """The variant's instance count from two documented invocation metrics: ``Invocations`` / ``InvocationsPerInstance``.

    The SageMaker metrics reference defines ``InvocationsPerInstance`` as "the number of
    invocations sent to a model, normalized by InstanceCount in each ProductionVariant.
    1/numberOfInstances is sent as the value on each request", so the ratio of the two sums over
    a period is the number of active instances (a mean over the period's requests). It needs
    traffic: a period without invocations has no value (missing data, not zero).
    """
    using = (("inv", sagemaker_stat("Invocations", source, period=period)), ("ipi", sagemaker_stat("InvocationsPerInstance", source, period=period)))
    return Math("inv / ipi", using, period, label)


def instance_count_metric(
    source: MetricSource,
    *,
    instance_type: str | None = None,
    count_source: InstanceCountSource = DEFAULT_INSTANCE_COUNT_SOURCE,
    **options: Unpack[MetricOptions],
) -> cloudwatch.Metric:
    """:func:`instance_count_stat` as a CloudWatch metric (default: :func:`instance_samples_metric`;
    ``InstanceCount`` only with ``count_source=InstanceCountSource.INSTANCE_COUNT_METRIC``)."""
    check_count_source(count_source)
    if source.kind == "inference-component" or count_source is InstanceCountSource.CPU_SAMPLES:
        return instance_samples_metric(source, instance_type=instance_type, **options)
    merged: MetricOptions = {"label": f"instances {instance_type or ''}".strip()}
    merged.update(options)
    return sagemaker_metric("InstanceCount", source, instance_type=instance_type, **merged)


def instance_samples_metric(
    source: MetricSource, *, instance_type: str | None = None, **options: Unpack[MetricOptions]
) -> cloudwatch.Metric:
    """Instances (for an inference component: copies) that report, derived from a per-instance metric.

    The ``SampleCount`` of the per-instance utilization metric (``CPUUtilization``; for inference
    components ``CPUUtilizationNormalized``): every instance publishes one data point per publish
    interval, so the count per period is *instances x (period / publish interval)*. With the
    default 60-second publishing and a 1-minute period it is the instance count; with
    ``MetricsConfig.MetricPublishFrequencyInSeconds`` = f, pass ``period=Duration.seconds(f)``.
    The alternative to ``InstanceCount`` where that metric is not published (see ``docs/scaling.md``).
    """
    merged: MetricOptions = {"statistic": "SampleCount", "label": f"instances {instance_type or ''}".strip()}
    merged.update(options)
    return sagemaker_metric(source.presence_metric, source, instance_type=instance_type, **merged)


class UtilizationStrategy(enum.Enum):
    """How per-type utilization (concurrency / ``max_concurrency``) becomes one fleet signal.

    ``u_i`` is type i's concurrency divided by its pool's ``max_concurrency``; a type without
    data reads 0 (CloudWatch metric math treats missing values as 0).
    """

    #: ``(u_1 + ... + u_N) / N``: the launch post's average over every configured type. Its flaw:
    #: empty fallback pools count as 0, so with 3 pools and only the first running at 100 % it
    #: reads 0.33 and never reaches a 0.7 target. For reference only.
    AVERAGE_OVER_TYPES = "average-over-types"
    #: ``MAX([u_1, ..., u_N])``: the busiest type. Under least-outstanding-requests routing every
    #: instance holds about the same number of requests, so the type with the smallest
    #: ``max_concurrency`` saturates first: tracking the maximum keeps it at the target. Empty
    #: pools read 0 and cannot dilute it. The default.
    MAX_OVER_TYPES = "max-over-types"
    #: ``sum(u_i * n_i) / sum(n_i)`` with ``n_i`` the instances of type i (the ``SampleCount`` of
    #: ``CPUUtilization`` per type by default, see :class:`InstanceCountSource`; copies for an
    #: inference component): the average utilization per instance, over the types that have
    #: instances. Falls back to the maximum while no instance count reports (``n`` = 0 or
    #: missing), so a missing count signal can never hold the fleet down.
    INSTANCE_WEIGHTED = "instance-weighted"


#: The strategy used when none is given.
DEFAULT_UTILIZATION_STRATEGY = UtilizationStrategy.MAX_OVER_TYPES


def _number(value: float) -> str:
    """A constant as metric-math text (no exponent notation, at most nine decimals); tokens render as tokens."""
    if is_unresolved(value):
        return Token.as_string(value)
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.9f}".rstrip("0").rstrip(".")


def weighted_utilization_query(
    source: MetricSource,
    pools: Sequence[InstancePool],
    *,
    strategy: UtilizationStrategy = DEFAULT_UTILIZATION_STRATEGY,
    statistic: str = "Maximum",
    period: int = 60,
    label: str | None = None,
    field: str = "weighted_utilization",
    count_source: InstanceCountSource = DEFAULT_INSTANCE_COUNT_SOURCE,
    zero_when_idle: bool = False,
) -> Math:
    """:func:`weighted_utilization` as plain query data (``period`` in seconds), built once and
    rendered into scaling policies, alarms and dashboards.

    ``zero_when_idle``: the signal exists only while some unit reports its presence (``n``, the
    count samples, > 0), and then a missing concurrency reads 0:
    ``IF(FILL(n, 0) > 0, FILL(<strategy's expression>, 0))``. For an inference component's
    target tracking: whether an idle copy publishes ``ConcurrentRequestsPerCopy`` zeros is
    undocumented, and a policy whose metric has no data never scales in; with no copy serving
    (at zero, or during a wake-up's cold start) it still reads nothing (docs/scaling.md).

    Raises:
        PoolConfigError: a pool without ``max_concurrency``, or an invalid pool list.
    """
    resolved = resolve_pools(pools, f"{field}.pools")
    check_count_source(count_source, f"{field}.count_source")
    if not isinstance(strategy, UtilizationStrategy):
        raise PoolConfigError(f"{field}.strategy", strategy, f"a UtilizationStrategy ({', '.join(s.name for s in UtilizationStrategy)})")
    for index, pool in enumerate(resolved):
        if pool.max_concurrency is None:
            raise PoolConfigError(
                f"{field}.pools[{index}].max_concurrency",
                None,
                f"a number > 0 for every pool ({pool.instance_type} has none): weighted utilization "
                "divides each type's concurrent requests by it",
            )

    def expression(text: str, using: Mapping[str, Query], text_label: str | None = None) -> Math:
        return Math(text, tuple(using.items()), period, text_label)

    concurrency = {
        f"c{i}": sagemaker_stat(source.concurrency_metric, source, instance_type=p.instance_type, statistic=statistic, period=period)
        for i, p in enumerate(resolved, start=1)
    }
    utilization = {
        f"u{i}": expression(f"c{i} / {_number(p.max_concurrency)}", {f"c{i}": concurrency[f"c{i}"]}, f"{p.instance_type} utilization")  # type: ignore[arg-type]
        for i, p in enumerate(resolved, start=1)
    }
    label = label or f"Weighted utilization ({strategy.value})"
    ids = list(utilization)
    maximum = f"MAX([{', '.join(ids)}])"
    # The instance (copy) counts: the weights of INSTANCE_WEIGHTED, the presence of zero_when_idle.
    counted = zero_when_idle or (strategy is UtilizationStrategy.INSTANCE_WEIGHTED and len(resolved) > 1)
    samples = {
        f"s{i}": instance_count_stat(source, instance_type=p.instance_type, period=period, count_source=count_source)
        for i, p in enumerate(resolved, start=1)
    } if counted else {}
    counts: dict[str, Query] = {**samples, "n": expression(" + ".join(samples), samples, "instances")} if counted else {}
    using: Mapping[str, Query] = utilization
    if len(resolved) == 1:
        text, using = f"c1 / {_number(resolved[0].max_concurrency)}", concurrency  # type: ignore[arg-type]
    elif strategy is UtilizationStrategy.AVERAGE_OVER_TYPES:
        text = f"({' + '.join(ids)}) / {len(ids)}"
    elif strategy is UtilizationStrategy.MAX_OVER_TYPES:
        text = maximum
    else:
        weighted = "(" + " + ".join(f"u{i} * s{i}" for i in range(1, len(resolved) + 1)) + ") / n"
        # FILL: without any count data the condition must still exist, so that the maximum takes over
        # (with zero_when_idle the outer condition below already says there are counts).
        text = weighted if zero_when_idle else f"IF(FILL(n, 0) > 0, {weighted}, {maximum})"
    if zero_when_idle:
        text = f"IF(FILL(n, 0) > 0, FILL({text}, 0))"
    return expression(text, {**using, **counts}, label)


def weighted_utilization(
    source: MetricSource,
    pools: Sequence[InstancePool],
    *,
    strategy: UtilizationStrategy = DEFAULT_UTILIZATION_STRATEGY,
    statistic: str = "Maximum",
    period: Duration = _ONE_MINUTE,
    label: str | None = None,
    field: str = "weighted_utilization",
    count_source: InstanceCountSource = DEFAULT_INSTANCE_COUNT_SOURCE,
) -> cloudwatch.MathExpression:
    """The fleet's utilization in 0.0-1.0 from each pool's concurrency and ``max_concurrency``.

    A metric-math expression within CloudWatch's alarm rules (so usable for target tracking and
    alarms): at most 10 metrics (5 pools x concurrency and instance count), no ``SEARCH``, ids
    ``c1..c5`` (concurrency of the pool of priority order 1..5), ``s1..s5`` (instances per
    type, :func:`instance_count_stat`), ``u1..u5`` (per-type utilization) and ``n`` (all instances).

    Args:
        source: the variant (or inference component) whose metrics are read.
        pools: the pools, each with ``max_concurrency`` (per copy for an inference component).
        strategy: see :class:`UtilizationStrategy`. Default: ``MAX_OVER_TYPES``.
        statistic: of the concurrency metric. Default: ``"Maximum"`` (its documented statistics
            are Minimum and Maximum).
        period: for graphs and alarms (target tracking ignores it). Default: 1 minute.
        label: Default: ``"Weighted utilization (<strategy>)"``.
        field: the name errors report.
        count_source: where ``INSTANCE_WEIGHTED`` reads each type's instances (see
            :class:`InstanceCountSource`). Default: ``CPU_SAMPLES``, a documented metric.

    Raises:
        PoolConfigError: a pool without ``max_concurrency``, or an invalid pool list.
    """
    query = weighted_utilization_query(
        source, pools, strategy=strategy, statistic=statistic, period=concrete_seconds(period, f"{field}.period", PERIOD_IS_CHECKED),
        label=label, field=field,
        count_source=count_source,
    )
    return to_cloudwatch(query, period=period)  # type: ignore[return-value]
