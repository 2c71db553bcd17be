"""``PoolDashboard``: a CloudWatch dashboard with one row of graphs per instance type of each endpoint.

For every endpoint: a header naming its pools in priority order, then graphs with one line per
instance type (``InstanceType`` dimension) of model latency (p50 and p99), concurrent requests,
GPU utilization, instances, invocations per instance and 4XX/5XX errors, and the weighted
utilization with its scaling target drawn as a horizontal line.

CloudWatch refuses a dashboard with more than 500 widgets, a graph with more than 500 metrics or a
dashboard with more than 2,500 metrics (metrics used only inside math expressions count). CDK
checks none of these; ``PoolDashboard`` counts as it adds and fails at synth time with
:class:`PoolConfigError` instead of at deploy time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from .errors import PoolConfigError
from .metrics import DEFAULT_UTILIZATION_STRATEGY, UtilizationStrategy, flatten_metric
from .pools import InstancePool, resolve_pools

if TYPE_CHECKING:
    from .endpoint import EndpointBase

__all__ = ["PoolDashboard", "MAX_WIDGETS", "MAX_METRICS_PER_GRAPH", "MAX_METRICS_PER_DASHBOARD"]

#: CloudWatch dashboard limits (CloudWatch quotas).
MAX_WIDGETS = 500
MAX_METRICS_PER_GRAPH = 500
MAX_METRICS_PER_DASHBOARD = 2500

_GRAPH_WIDTH = 8
_GRAPH_HEIGHT = 6


class PoolDashboard(Construct):
    """A CloudWatch dashboard for one or more pooled endpoints.

    Args:
        scope: parent construct.
        id: construct id.
        endpoints: endpoints to show (``PooledEndpoint``; an imported endpoint through
            :meth:`add_endpoint` with ``pools=``). Default: none.
        dashboard_name: Default: generated.
        utilization_target: the target line of the weighted-utilization graph for endpoints
            without weighted scaling. Default: 0.7 (endpoints scaled by
            ``scale_on_weighted_utilization`` show their own target and strategy).
        period: of every graph. Default: 1 minute.

    Attributes:
        dashboard: the ``cloudwatch.Dashboard``.
        widget_count: widgets so far.
        metric_count: metrics and expressions so far (CloudWatch's dashboard count).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        endpoints: Sequence[EndpointBase] = (),
        dashboard_name: str | None = None,
        utilization_target: float = 0.7,
        period: Duration = Duration.minutes(1),
    ) -> None:
        super().__init__(scope, id)
        self.dashboard = cloudwatch.Dashboard(self, "Resource", dashboard_name=dashboard_name)
        self.utilization_target = utilization_target
        self.period = period
        self.widget_count = 0
        self.metric_count = 0
        for endpoint in endpoints:
            self.add_endpoint(endpoint)

    def add_endpoint(self, endpoint: EndpointBase, *, pools: Sequence[InstancePool] | None = None) -> None:
        """Add the header and graphs of ``endpoint`` (``pools`` required for an imported endpoint).

        Raises:
            PoolConfigError: no pools, or CloudWatch's widget or metric limits would be exceeded.
        """
        field = "PoolDashboard.endpoints"
        pools = pools if pools is not None else getattr(endpoint, "pools", None)
        if pools is None:
            raise PoolConfigError(f"{field}.pools", None, "the endpoint's InstancePool list (required for an imported endpoint)")
        resolved = resolve_pools(pools, f"{field}.pools")
        types = [p.instance_type for p in resolved]
        period = self.period

        def per_type(make: Callable[[str], list[cloudwatch.IMetric]]) -> list[cloudwatch.IMetric]:
            return [m for t in types for m in make(t)]

        scaling = getattr(endpoint, "auto_scaling", None)
        target = getattr(scaling, "utilization_target", None) or self.utilization_target
        strategy: UtilizationStrategy = getattr(scaling, "utilization_strategy", None) or DEFAULT_UTILIZATION_STRATEGY
        e = endpoint
        graphs: list[tuple[str, list[cloudwatch.IMetric]]] = [
            (
                "Model latency p50 / p99 (µs)",
                per_type(
                    lambda t: [
                        e.metric_model_latency(instance_type=t, statistic="p50", label=f"{t} p50", period=period),
                        e.metric_model_latency(instance_type=t, statistic="p99", label=f"{t} p99", period=period),
                    ]
                ),
            ),
            (
                "Concurrent requests per model (max)",
                per_type(lambda t: [e.metric_concurrent_requests_per_model(instance_type=t, label=t, period=period)]),
            ),
            ("GPU utilization (% x GPUs)", per_type(lambda t: [e.metric_gpu_utilization(instance_type=t, label=t, period=period)])),
            ("Instances", per_type(lambda t: [e.metric_instance_count(instance_type=t, label=t, period=period)])),
            (
                "Invocations per instance",
                per_type(lambda t: [e.metric_invocations_per_instance(instance_type=t, label=t, period=period)]),
            ),
            (
                "Errors (4XX / 5XX)",
                per_type(
                    lambda t: [
                        e.metric_invocation_4xx_errors(instance_type=t, label=f"{t} 4XX", period=period),
                        e.metric_invocation_5xx_errors(instance_type=t, label=f"{t} 5XX", period=period),
                    ]
                ),
            ),
        ]
        weighted = all(p.max_concurrency is not None for p in resolved)
        if weighted:
            utilization = e.metric_weighted_utilization(strategy=strategy, pools=resolved, period=period)
            graphs.append((f"Weighted utilization ({strategy.value})", [utilization]))

        counts = [sum(_count(m) for m in metrics) for _, metrics in graphs]
        for (title, _), count in zip(graphs, counts):
            if count > MAX_METRICS_PER_GRAPH:
                raise PoolConfigError(
                    f"{field}.graph", f"{count} metrics in {title!r}", f"at most {MAX_METRICS_PER_GRAPH} metrics a graph (a CloudWatch limit)"
                )
        widgets = 1 + len(graphs)
        if self.widget_count + widgets > MAX_WIDGETS:
            raise PoolConfigError(
                field,
                f"{self.widget_count + widgets} widgets",
                f"at most {MAX_WIDGETS} widgets a dashboard (a CloudWatch limit): split the endpoints over dashboards",
            )
        if self.metric_count + sum(counts) > MAX_METRICS_PER_DASHBOARD:
            raise PoolConfigError(
                field,
                f"{self.metric_count + sum(counts)} metrics",
                f"at most {MAX_METRICS_PER_DASHBOARD} metrics a dashboard (a CloudWatch limit, math inputs included): "
                "split the endpoints over dashboards",
            )
        self.widget_count += widgets
        self.metric_count += sum(counts)

        order = " → ".join(
            f"{p.priority}. `{p.instance_type}`" + (f" (max {p.max_concurrency:g} concurrent)" if p.max_concurrency else "")
            for p in resolved
        )
        self.dashboard.add_widgets(
            cloudwatch.TextWidget(
                markdown=f"## {endpoint.endpoint_name} / {endpoint.variant_name}\nPools in priority order: {order}",
                width=24,
                height=2,
            )
        )
        rendered: list[cloudwatch.IWidget] = []
        for title, metrics in graphs:
            utilization_graph = weighted and metrics is graphs[-1][1]
            rendered.append(
                cloudwatch.GraphWidget(
                    title=title,
                    left=metrics,
                    width=_GRAPH_WIDTH,
                    height=_GRAPH_HEIGHT,
                    period=period,
                    left_annotations=[cloudwatch.HorizontalAnnotation(value=target, label=f"scaling target {target:g}")]
                    if utilization_graph
                    else None,
                    left_y_axis=cloudwatch.YAxisProps(min=0, show_units=False) if utilization_graph else None,
                )
            )
        for row in range(0, len(rendered), 3):
            self.dashboard.add_widgets(*rendered[row : row + 3])


def _count(metric: cloudwatch.IMetric) -> int:
    """Metrics and expressions ``metric`` renders as (a plain metric without a jsii round trip)."""
    if isinstance(metric, cloudwatch.Metric):
        return 1
    flat = flatten_metric(metric, "PoolDashboard.metric")
    return len(flat.stats) + len(flat.expressions) + (1 if flat.expression is not None else 0)
