"""``PoolDashboard``: a CloudWatch dashboard with one row of graphs per instance type of each endpoint.

For every endpoint: a header naming its pools in priority order, then graphs with one line per
instance type (``InstanceType`` dimension) of model latency (p50 and p99), concurrent requests,
GPU utilization, instances, invocations per instance and 4XX/5XX errors, and the weighted
utilization with its scaling target drawn as a horizontal line. An endpoint with a shadow variant
also gets production's latency and errors per instance type beside the shadow's.

CloudWatch refuses a dashboard with more than 500 widgets, a graph with more than 500 metrics or a
dashboard with more than 2,500 metrics (metrics used only inside math expressions count). CDK
checks none of these; ``PoolDashboard`` counts as it adds and fails at synth time with
:class:`PoolConfigError` instead of at deploy time.

The body is written as plain JSON (the layout CDK's ``Dashboard`` would render) rather than
through ``GraphWidget``/``Metric`` objects: each of those is a round trip to Node, and on a fleet
of pooled endpoints they were most of the library's synth overhead (docs/performance.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aws_cdk import Aws, Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from ._tokens import number_text
from .errors import PoolConfigError
from ._validate import seconds_of
from .metrics import DEFAULT_UTILIZATION_STRATEGY, MetricSource, sagemaker_stat, weighted_utilization_query
from .queries import dashboard_line, dashboard_lines
from .pools import InstancePool

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
        endpoints: one or more endpoints to show (``PooledEndpoint``, or an imported endpoint
            whose ``pools`` are known); add more, or an imported endpoint with ``pools=``,
            through :meth:`add_endpoint`.
        dashboard_name: Default: generated.
        utilization_target: the target line of the weighted-utilization graph for endpoints
            without weighted scaling. Default: 0.7 (endpoints scaled by
            ``scale_on_weighted_utilization`` show their own target and strategy).
        period: of every graph. Default: 1 minute.

    Attributes:
        dashboard: the ``cloudwatch.CfnDashboard`` (its body is plain JSON, see the module docs).
        widget_count: widgets so far.
        metric_count: metrics and expressions so far (CloudWatch's dashboard count).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        endpoints: Sequence[EndpointBase],
        dashboard_name: str | None = None,
        utilization_target: float = 0.7,
        period: Duration = Duration.minutes(1),
    ) -> None:
        if isinstance(endpoints, (str, bytes)) or not isinstance(endpoints, Sequence) or not endpoints:
            raise PoolConfigError("PoolDashboard.endpoints", endpoints, "one or more endpoints (add more with add_endpoint)")
        super().__init__(scope, id)
        self._widgets: list[dict[str, Any]] = []
        self._next_row = 0
        self.utilization_target = utilization_target
        self.period = period
        self._period_s = seconds_of(period)
        self.widget_count = 0
        self.metric_count = 0
        for endpoint in endpoints:
            self._add(endpoint, None)
        # The body goes to Node once, with every endpoint's widgets (add_endpoint sends it again).
        self.dashboard = cloudwatch.CfnDashboard(self, "Resource", dashboard_name=dashboard_name, dashboard_body=self._body())

    def add_endpoint(self, endpoint: EndpointBase, *, pools: Sequence[InstancePool] | None = None) -> None:
        """Add the header and graphs of ``endpoint`` (``pools`` required for an imported endpoint).

        Raises:
            PoolConfigError: no pools, or CloudWatch's widget or metric limits would be exceeded.
        """
        self._add(endpoint, pools)
        self.dashboard.dashboard_body = self._body()

    def _add(self, endpoint: EndpointBase, pools: Sequence[InstancePool] | None) -> None:
        field = "PoolDashboard.endpoints"
        resolved = endpoint.pools_or(pools, field)
        types = [p.instance_type for p in resolved]
        period = self._period_s
        source = MetricSource.variant(endpoint.endpoint_name, endpoint.variant_name)

        def line(metric_name: str, t: str, label: str, statistic: str | None = None) -> list[Any]:
            return dashboard_line(sagemaker_stat(metric_name, source, instance_type=t, statistic=statistic), period, label=label)

        scaling = endpoint.auto_scaling
        target = (scaling.utilization_target if scaling else None) or self.utilization_target
        strategy = (scaling.utilization_strategy if scaling else None) or DEFAULT_UTILIZATION_STRATEGY
        graphs: list[tuple[str, list[list[Any]]]] = [
            ("Model latency p50 / p99 (µs)", [line("ModelLatency", t, f"{t} {s}", s) for t in types for s in ("p50", "p99")]),
            ("Concurrent requests per model (max)", [line("ConcurrentRequestsPerModel", t, t) for t in types]),
            ("GPU utilization (% x GPUs)", [line("GPUUtilization", t, t) for t in types]),
            # A documented metric's sample count per type (docs/aws-readings.md): at the
            # default 1-minute period and publishing, one sample per instance.
            ("Instances (CPUUtilization samples)", [line("CPUUtilization", t, t, "SampleCount") for t in types]),
            ("Invocations per instance", [line("InvocationsPerInstance", t, t) for t in types]),
            (
                "Errors (4XX / 5XX)",
                [line(f"Invocation{c}Errors", t, f"{t} {c}") for t in types for c in ("4XX", "5XX")],
            ),
        ]
        shadow = endpoint.shadow
        if shadow is not None:
            # Production per instance type beside the shadow (one type, so no InstanceType
            # dimension): the fallback build under test against what serves today.
            shadow_source = MetricSource.variant(endpoint.endpoint_name, shadow.variant_name)
            shadow_label = f"shadow {shadow.variant_name} ({shadow.instance_type})"

            def shadow_line(metric_name: str, label: str, statistic: str | None = None) -> list[Any]:
                return dashboard_line(sagemaker_stat(metric_name, shadow_source, statistic=statistic), period, label=label)

            graphs.append(
                (
                    "Production vs shadow: model latency p99 (µs)",
                    [line("ModelLatency", t, f"{t} p99", "p99") for t in types] + [shadow_line("ModelLatency", f"{shadow_label} p99", "p99")],
                )
            )
            graphs.append(
                (
                    "Production vs shadow: errors (5XX / model)",
                    [line(f"Invocation{c}Errors", t, f"{t} {c}") for t in types for c in ("5XX", "Model")]
                    + [shadow_line(f"Invocation{c}Errors", f"{shadow_label} {c}") for c in ("5XX", "Model")],
                )
            )
        weighted = all(p.max_concurrency is not None for p in resolved)
        if weighted:
            utilization = weighted_utilization_query(source, resolved, strategy=strategy, period=period, field=field)
            graphs.append((f"Weighted utilization ({strategy.value})", dashboard_lines(utilization, period)))

        counts = [len(metrics) for _, metrics in graphs]
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
            f"{p.priority}. `{p.instance_type}`" + (f" (max {number_text(p.max_concurrency)} concurrent)" if p.max_concurrency else "")
            for p in resolved
        )
        top = self._next_row
        self._widgets.append(
            {
                "type": "text",
                "width": 24,
                "height": 2,
                "x": 0,
                "y": top,
                "properties": {"markdown": f"## {endpoint.endpoint_name} / {endpoint.variant_name}\nPools in priority order: {order}"},
            }
        )
        region = Aws.REGION
        for k, (title, metrics) in enumerate(graphs):
            properties: dict[str, Any] = {"view": "timeSeries", "title": title, "region": region, "metrics": metrics}
            y_axis: dict[str, Any] = {}
            if weighted and k == len(graphs) - 1:
                properties["annotations"] = {
                    "horizontal": [{"value": target, "label": f"scaling target {number_text(target)}", "yAxis": "left"}]
                }
                y_axis = {"left": {"min": 0, "showUnits": False}}
            properties["yAxis"] = y_axis
            properties["period"] = period
            self._widgets.append(
                {
                    "type": "metric",
                    "width": _GRAPH_WIDTH,
                    "height": _GRAPH_HEIGHT,
                    "x": _GRAPH_WIDTH * (k % 3),
                    "y": top + 2 + _GRAPH_HEIGHT * (k // 3),
                    "properties": properties,
                }
            )
        self._next_row = top + 2 + _GRAPH_HEIGHT * -(-len(graphs) // 3)

    def _body(self) -> str:
        # Tokens (endpoint names, the region) stay "${Token[...]}" inside the JSON text and
        # CloudFormation receives an Fn::Join, as CDK's own Dashboard renders it.
        return json.dumps({"widgets": self._widgets}, ensure_ascii=False, separators=(",", ":"))
