"""``status --check-metrics``: does every metric the endpoint's alarms, policies and dashboards read exist?

Some metrics may never be published (an ``InstanceCount`` with an ``InstanceType`` dimension is
named only by the launch post, not by AWS's reference), and an alarm that treats missing data as
not breaching is then silent for ever. For each distinct metric (:mod:`.metric_reads`) ListMetrics
is asked, with the namespace, name and dimensions as filters, whether it exists; a metric with
exactly those dimensions must come back (the filter also matches metrics with more dimensions).

ListMetrics only returns metrics that had data in the last two weeks, and a pool that never ran
an instance publishes nothing under its ``InstanceType``. So a missing metric whose
``InstanceType`` pool has no instances now (DescribeEndpoint's ``InstancePools[].CurrentInstanceCount``,
or, for an inference-component metric, no copies of the component on that type) is "no data yet
(pool empty)", not a failure; any other missing metric is a failure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Literal

from .aws import pages
from .errors import OpsError
from .fleet import EndpointState, PoolState, VariantState
from .metric_reads import MetricId, MetricReads, Reader
from .table import render_table

__all__ = ["MetricFinding", "MetricCheck", "check_metrics", "metric_exists", "render_check", "check_to_json"]

Result = Literal["exists", "missing", "pool_empty"]
_RESULT_TEXT = {"exists": "exists", "missing": "MISSING", "pool_empty": "no data yet (pool empty)"}


@dataclasses.dataclass(frozen=True)
class MetricFinding:
    """One metric, who reads it and whether it exists.

    Attributes:
        metric: the metric.
        readers: the alarms, policies and dashboards that read it.
        result: ``exists``; ``pool_empty`` (no data, but its instance type's pool is empty: not a
            failure); ``missing`` (a failure).
        detail: why a missing metric is or is not a failure.
    """

    metric: MetricId
    readers: tuple[Reader, ...]
    result: Result
    detail: str | None = None


@dataclasses.dataclass(frozen=True)
class MetricCheck:
    """The findings, in metric order, and what was not checked."""

    findings: tuple[MetricFinding, ...]
    skipped: tuple[str, ...]

    @property
    def failures(self) -> tuple[MetricFinding, ...]:
        """The missing metrics that are failures."""
        return tuple(f for f in self.findings if f.result == "missing")

    def error(self) -> OpsError | None:
        """The failure to report (exit 1) naming every missing metric, or None."""
        if not self.failures:
            return None
        named = "; ".join(f"{f.metric} (read by {', '.join(map(str, f.readers))})" for f in self.failures)
        return OpsError(f"{len(self.failures)} metric(s) read by the endpoint's alarms, policies or dashboards have no data in the last 2 weeks: {named}")


def check_metrics(cw: Any, reads: MetricReads, state: EndpointState) -> MetricCheck:
    """Ask ListMetrics about every metric in ``reads`` and classify the missing ones against ``state``."""
    findings = []
    for metric, readers in reads.readers.items():
        if metric_exists(cw, metric):
            findings.append(MetricFinding(metric, readers, "exists"))
        else:
            result, detail = _classify(metric, state)
            findings.append(MetricFinding(metric, readers, result, detail))
    return MetricCheck(findings=tuple(findings), skipped=reads.skipped)


def metric_exists(cw: Any, metric: MetricId) -> bool:
    """True when ListMetrics (all pages, stopping at the first match) has ``metric`` with exactly its dimensions."""
    request: dict[str, Any] = {"Namespace": metric.namespace, "MetricName": metric.metric_name}
    if metric.dimensions:
        request["Dimensions"] = [{"Name": n, "Value": v} for n, v in metric.dimensions]
    return any(MetricId.of(found) == metric for found in pages(cw.list_metrics, "Metrics", **request))


def _classify(metric: MetricId, state: EndpointState) -> tuple[Result, str]:
    instance_type = metric.dimension("InstanceType")
    if instance_type is None:
        return "missing", "no data in the last 2 weeks"
    endpoint = metric.dimension("EndpointName")
    component = next((c for c in state.components if c.name == metric.dimension("InferenceComponentName")), None)
    if component is None and endpoint != state.name:  # a dashboard's line for another endpoint: its pools are not known here
        return "missing", f"no data in the last 2 weeks (its pools are not known here: it is not a metric of endpoint {state.name})"
    # The variant the metric names; a component's metrics name none (the pools of every variant count then).
    variant_name = metric.dimension("VariantName")
    counts = [
        _instances(v, p) for v in state.variants if variant_name in (None, v.name) for p in v.pools if p.instance_type == instance_type
    ]
    if not counts:
        return "missing", f"no data in the last 2 weeks, and {instance_type} is not a pool of the endpoint"
    if None in counts:
        return "missing", f"no data in the last 2 weeks; the {instance_type} pool's instance count is not reported"
    instances = sum(c for c in counts if c is not None)
    if instances == 0:
        return "pool_empty", f"the {instance_type} pool has 0 instances: it publishes nothing until one runs"
    if component is not None and not any(p.instance_type == instance_type and p.copies for p in component.placements):
        return "pool_empty", f"{component.name} has 0 copies on {instance_type}: it publishes nothing until one runs there"
    return "missing", f"no data in the last 2 weeks, though the {instance_type} pool has {instances} instance(s)"


def _instances(variant: VariantState, pool: PoolState) -> int | None:
    """The pool's instances now; a pool DescribeEndpoint leaves out of ``InstancePools`` has none when
    the variant's other pools hold all its instances (else: unknown)."""
    if pool.instances is not None:
        return pool.instances
    reported = sum(p.instances for p in variant.pools if p.instances is not None)
    return 0 if reported == variant.current_instances else None


def render_check(check: MetricCheck, endpoint: str) -> str:
    """The check as text: one table row per metric, then the skipped lines."""
    if not check.findings and not check.skipped:
        return f"Metrics: no alarm, scaling policy or dashboard reads a metric of endpoint {endpoint}"
    rows: list[Sequence[object]] = [
        [f"{f.metric.namespace} {f.metric.metric_name}", f.metric.dimensions_text(), ", ".join(map(str, f.readers)), _RESULT_TEXT[f.result]]
        for f in check.findings
    ]
    lines = ["Metrics read by alarms, scaling policies and dashboards (ListMetrics: data in the last 2 weeks):"]
    if rows:
        lines.append(render_table(["METRIC", "DIMENSIONS", "READ BY", "RESULT"], rows, indent="  "))
    lines += [f"  {f.metric}: {f.detail}" for f in check.findings if f.result != "exists"]
    lines += [f"  not checked: {note}" for note in check.skipped]
    return "\n".join(lines)


def check_to_json(check: MetricCheck) -> dict[str, Any]:
    """The check as JSON-ready data (the schema is in docs/ops.md)."""
    return {
        "metrics": [
            {
                "namespace": f.metric.namespace,
                "metric_name": f.metric.metric_name,
                "dimensions": dict(f.metric.dimensions),
                "read_by": [{"kind": r.kind, "name": r.name} for r in f.readers],
                "result": f.result,
                "detail": f.detail,
            }
            for f in check.findings
        ],
        "skipped": list(check.skipped),
        "failures": len(check.failures),
    }
