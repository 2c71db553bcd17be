"""Which CloudWatch metrics an endpoint's alarms, scaling policies and dashboards read.

* Alarms: every metric alarm of the region (``DescribeAlarms``, all pages), kept when one of its
  metrics (the single metric, or ``Metrics[].MetricStat.Metric`` of a metric-math alarm) carries
  ``EndpointName=<endpoint>`` or ``InferenceComponentName=<one of its components>``, or when a
  step policy of the endpoint names it. A kept alarm counts with all its metrics: a missing input
  makes the whole expression wrong. Alarms that Application Auto Scaling made for a target-tracking
  policy are not listed twice: the policy stands for them.
* Scaling policies (``DescribeScalingPolicies``) of each variant (``endpoint/NAME/variant/VARIANT``,
  ``sagemaker:variant:DesiredInstanceCount``) and inference component (``inference-component/NAME``,
  ``sagemaker:inference-component:DesiredCopyCount``): a target-tracking policy's metrics
  (:mod:`.scaling_metrics`); step policies act through their alarms, above.
* Dashboards named by the user (``GetDashboard``): every metric line of every widget, whatever it
  names (the user chose the dashboard). Expression lines are not metrics; a ``SEARCH`` expression
  finds its metrics at run time, so it is skipped and said so. Lines for another region or account
  are skipped too: ListMetrics answers for this region and account.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from .aws import pages
from .fleet import EndpointState
from .scaling_metrics import customized_queries, predefined_queries

__all__ = ["MetricId", "Reader", "MetricReads", "read_metrics", "alarm_metrics", "dashboard_metrics"]

_VARIANT_DIMENSION = "sagemaker:variant:DesiredInstanceCount"
_COMPONENT_DIMENSION = "sagemaker:inference-component:DesiredCopyCount"


@dataclasses.dataclass(frozen=True, order=True)
class MetricId:
    """One CloudWatch metric: namespace, name and the exact set of dimensions (sorted by name)."""

    namespace: str
    metric_name: str
    dimensions: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, metric: Mapping[str, Any]) -> MetricId:
        """From CloudWatch's ``{Namespace, MetricName, Dimensions: [{Name, Value}]}``."""
        dimensions = tuple(sorted((d["Name"], d["Value"]) for d in metric.get("Dimensions", [])))
        return cls(metric["Namespace"], metric["MetricName"], dimensions)

    def dimension(self, name: str) -> str | None:
        """The value of dimension ``name``, or None."""
        return dict(self.dimensions).get(name)

    def dimensions_text(self) -> str:
        """``EndpointName=llm, InstanceType=ml.g6.48xlarge`` (``-`` for none)."""
        return ", ".join(f"{k}={v}" for k, v in self.dimensions) or "-"

    def __str__(self) -> str:
        return f"{self.namespace} {self.metric_name} {{{self.dimensions_text()}}}"


@dataclasses.dataclass(frozen=True, order=True)
class Reader:
    """Something that reads a metric: an alarm, a scaling policy or a dashboard, by name."""

    kind: Literal["alarm", "policy", "dashboard"]
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


@dataclasses.dataclass(frozen=True)
class MetricReads:
    """Every metric read, with who reads it, and what could not be checked (and why)."""

    readers: Mapping[MetricId, tuple[Reader, ...]]
    skipped: tuple[str, ...]


def read_metrics(cw: Any, aas: Any, state: EndpointState, *, dashboards: Sequence[str] = (), region: str) -> MetricReads:
    """The metrics ``state``'s endpoint is watched and scaled by (see the module docstring).

    ``region`` is the region the clients call: dashboard lines for another region are skipped.
    """
    found: dict[MetricId, set[Reader]] = {}
    skipped: list[str] = []

    def add(metrics: Iterable[MetricId], reader: Reader) -> None:
        for metric in metrics:
            found.setdefault(metric, set()).add(reader)

    step_alarms: set[str] = set()
    tracking_alarms: set[str] = set()
    components = frozenset(c.name for c in state.components)
    for resource_id, dimension in _scalable_resources(state):
        for policy in pages(
            aas.describe_scaling_policies, "ScalingPolicies", ServiceNamespace="sagemaker", ResourceId=resource_id, ScalableDimension=dimension
        ):
            alarm_names = {a["AlarmName"] for a in policy.get("Alarms", [])}
            if policy["PolicyType"] != "TargetTrackingScaling":
                step_alarms |= alarm_names
                continue
            tracking_alarms |= alarm_names
            queries = _tracking_queries(policy, resource_id, skipped)
            add(_stat_metrics(queries), Reader("policy", policy["PolicyName"]))
    for alarm in pages(cw.describe_alarms, "MetricAlarms", AlarmTypes=["MetricAlarm"]):
        name = alarm["AlarmName"]
        metrics = alarm_metrics(alarm)
        if name in tracking_alarms:
            continue
        if name in step_alarms or any(_names_endpoint(m, state.name, components) for m in metrics):
            add(metrics, Reader("alarm", name))
    for dashboard in dashboards:
        body = json.loads(cw.get_dashboard(DashboardName=dashboard)["DashboardBody"])
        metrics, notes = dashboard_metrics(body, region=region)
        add(metrics, Reader("dashboard", dashboard))
        skipped += [f"dashboard {dashboard}: {note}" for note in notes]
    return MetricReads(readers={m: tuple(sorted(r)) for m, r in sorted(found.items())}, skipped=tuple(skipped))


def _scalable_resources(state: EndpointState) -> list[tuple[str, str]]:
    variants = [(f"endpoint/{state.name}/variant/{v.name}", _VARIANT_DIMENSION) for v in state.variants]
    return variants + [(f"inference-component/{c.name}", _COMPONENT_DIMENSION) for c in state.components]


def _tracking_queries(policy: Mapping[str, Any], resource_id: str, skipped: list[str]) -> Sequence[Mapping[str, Any]]:
    # A target-tracking policy has one of the two specifications, and a predefined one its type (the service model).
    config = policy["TargetTrackingScalingPolicyConfiguration"]
    if "CustomizedMetricSpecification" in config:
        return customized_queries(config["CustomizedMetricSpecification"])
    kind = config["PredefinedMetricSpecification"]["PredefinedMetricType"]
    queries = predefined_queries(kind, resource_id)
    if queries is None:
        skipped.append(f"policy {policy['PolicyName']}: predefined metric {kind} on {resource_id} is not mapped to a metric here")
        return []
    return queries


def _stat_metrics(queries: Iterable[Mapping[str, Any]]) -> list[MetricId]:
    return [MetricId.of(q["MetricStat"]["Metric"]) for q in queries if q.get("MetricStat")]


def alarm_metrics(alarm: Mapping[str, Any]) -> list[MetricId]:
    """The metrics a CloudWatch metric alarm reads: its one metric, or its metric-math inputs."""
    if alarm.get("MetricName"):
        return [MetricId.of(alarm)]
    return _stat_metrics(alarm.get("Metrics", []))


def _names_endpoint(metric: MetricId, endpoint: str, components: frozenset[str]) -> bool:
    return metric.dimension("EndpointName") == endpoint or metric.dimension("InferenceComponentName") in components


def dashboard_metrics(body: Mapping[str, Any], *, region: str) -> tuple[list[MetricId], list[str]]:
    """The metrics a dashboard body's graphs read, and what was not checked (one note per skipped line).

    A metric line is ``[Namespace, MetricName, Dim1, Value1, ..., {options}]``; ``"."`` repeats the
    previous line's value at that place and a leading ``"..."`` the previous line's leading values
    (the console's abbreviations); ``[{"expression": ...}]`` is an expression line.
    """
    metrics: list[MetricId] = []
    notes: list[str] = []
    for widget in body.get("widgets", []):
        properties = widget.get("properties") or {}
        previous: list[str] = []
        for line in properties.get("metrics") or []:
            options = line[-1] if line and isinstance(line[-1], dict) else {}
            parts = [p for p in line if not isinstance(p, dict)]
            if not parts:  # an expression line
                expression = str(options.get("expression"))
                if "SEARCH(" in expression.upper():
                    notes.append(f"SEARCH expression (it finds its metrics when it runs): {expression}")
                continue
            parts = _expand(parts, previous)
            previous = parts
            where = options.get("region") or properties.get("region") or region
            account = options.get("accountId") or properties.get("accountId")
            if where != region or account:
                notes.append(f"{parts[0]} {parts[1]} is read from " + (f"account {account}" if account else f"region {where}"))
                continue
            if len(parts) < 2 or len(parts) % 2:
                notes.append(f"metric line {line} is not [Namespace, MetricName, Name, Value, ...]")
                continue
            dimensions = [{"Name": n, "Value": v} for n, v in zip(parts[2::2], parts[3::2])]
            metrics.append(MetricId.of({"Namespace": parts[0], "MetricName": parts[1], "Dimensions": dimensions}))
    return metrics, notes


def _expand(parts: list[Any], previous: list[str]) -> list[str]:
    if parts and parts[0] == "...":
        rest = parts[1:]
        parts = previous[: max(0, len(previous) - len(rest))] + rest
    return [previous[i] if p == "." and i < len(previous) else str(p) for i, p in enumerate(parts)]
