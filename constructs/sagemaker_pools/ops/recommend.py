"""Read an AI recommendation job and propose a pool order (the launch post's second way).

Each recommendation of a completed ``DescribeAIRecommendationJob`` names an instance type and,
in ``ModelDetails``, the ``ModelPackageArn`` and ``InferenceSpecificationName`` of the model
tuned for it; ``ExpectedPerformance`` lists the metrics the job measured, as free-form
``{Metric, Stat, Value, Unit}`` strings. :func:`propose_pools` orders the recommendations by
one of those metrics and keeps one per instance type, at most five.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..pools import MAX_POOLS
from .errors import OpsError

__all__ = ["Metric", "Recommendation", "PoolProposal", "parse_job", "propose_pools", "ORDER_KEYS"]

#: ``--order-by`` values: (metric kind, True when a higher value is better).
ORDER_KEYS: Mapping[str, bool] = {"cost": False, "throughput": True, "ttft": False}
# Preferred statistic when a metric is reported with several (lower index = preferred).
_STAT_PREFERENCE = ("p50", "median", "avg", "average", "mean", "")


@dataclasses.dataclass(frozen=True)
class Metric:
    """One ``ExpectedPerformance`` entry, as reported."""

    name: str
    stat: str | None
    value: str
    unit: str | None

    @property
    def number(self) -> float | None:
        """The value as a number, if it is one."""
        try:
            number = float(self.value.replace(",", "").strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None

    @property
    def kind(self) -> str | None:
        """``"cost"``, ``"throughput"``, ``"ttft"`` or None, recognized from the metric's name."""
        key = re.sub(r"[^a-z0-9]", "", self.name.lower())
        if "cost" in key or "price" in key:
            return "cost"
        if "ttft" in key or "timetofirsttoken" in key:
            return "ttft"
        if "throughput" in key or key.endswith("persecond") or key in {"tps", "rps", "tokenspersec"}:
            return "throughput"
        return None

    def text(self) -> str:
        """``ttft-ms p50 180 ms``."""
        return " ".join(x for x in (self.name, self.stat, self.value, self.unit) if x)


@dataclasses.dataclass(frozen=True)
class Recommendation:
    """One recommendation of the job (position ``index``, from 1, in the job's order)."""

    index: int
    instance_type: str | None
    instance_count: int | None
    copies_per_instance: int | None
    model_package_arn: str | None
    inference_specification_name: str | None
    image_uri: str | None
    environment: Mapping[str, str]
    optimizations: tuple[str, ...]
    description: str | None
    expected_performance: tuple[Metric, ...]

    def metric(self, kind: str) -> Metric | None:
        """The numeric metric of ``kind``, preferring the median over other statistics."""
        candidates = [m for m in self.expected_performance if m.kind == kind and m.number is not None]
        if not candidates:
            return None
        return min(candidates, key=lambda m: _stat_rank(m.stat))

    @property
    def deployable(self) -> bool:
        """True when it names an instance type, a model package and an inference specification."""
        return bool(self.instance_type and self.model_package_arn and self.inference_specification_name)


def _stat_rank(stat: str | None) -> int:
    key = (stat or "").lower()
    return _STAT_PREFERENCE.index(key) if key in _STAT_PREFERENCE else len(_STAT_PREFERENCE)


@dataclasses.dataclass(frozen=True)
class PoolProposal:
    """The proposed pools (highest priority first), why other recommendations were left out, remarks."""

    order_by: str
    pools: tuple[Recommendation, ...]
    left_out: tuple[str, ...]
    notes: tuple[str, ...] = ()


def parse_job(job: Mapping[str, Any]) -> list[Recommendation]:
    """The recommendations of a DescribeAIRecommendationJob output; OpsError unless it is Completed."""
    name = job.get("AIRecommendationJobName", "?")
    status = job.get("AIRecommendationJobStatus")
    if status != "Completed":
        reason = job.get("FailureReason")
        raise OpsError(
            f"recommendation job {name} is {status}" + (f": {reason}" if reason else "") + "; recommendations exist only once it is Completed"
        )
    items = job.get("Recommendations") or []
    if not items:
        raise OpsError(f"recommendation job {name} is Completed but returned no recommendations")
    return [_recommendation(i, item) for i, item in enumerate(items, start=1)]


def _recommendation(index: int, item: Mapping[str, Any]) -> Recommendation:
    details = item.get("ModelDetails") or {}
    deployment = item.get("DeploymentConfiguration") or {}
    instance = (details.get("InstanceDetails") or [{}])[0]
    return Recommendation(
        index=index,
        instance_type=deployment.get("InstanceType") or instance.get("InstanceType"),
        instance_count=deployment.get("InstanceCount", instance.get("InstanceCount")),
        copies_per_instance=deployment.get("CopyCountPerInstance", instance.get("CopyCountPerInstance")),
        model_package_arn=details.get("ModelPackageArn"),
        inference_specification_name=details.get("InferenceSpecificationName") or None,
        image_uri=deployment.get("ImageUri"),
        environment=dict(deployment.get("EnvironmentVariables") or {}),
        optimizations=tuple(o["OptimizationType"] for o in item.get("OptimizationDetails") or []),
        description=item.get("RecommendationDescription"),
        expected_performance=tuple(
            Metric(m["Metric"], m.get("Stat"), str(m["Value"]), m.get("Unit")) for m in item.get("ExpectedPerformance") or []
        ),
    )


def propose_pools(recommendations: Sequence[Recommendation], order_by: str) -> PoolProposal:
    """Order by ``order_by`` (recommendations without that metric last, in job order), one per type, at most five."""
    higher_is_better = ORDER_KEYS[order_by]

    def key(rec: Recommendation) -> tuple[int, float, int]:
        metric = rec.metric(order_by)
        if metric is None or metric.number is None:
            return (1, 0.0, rec.index)
        return (0, -metric.number if higher_is_better else metric.number, rec.index)

    chosen: list[Recommendation] = []
    left_out: list[str] = []
    notes: list[str] = []
    for rec in sorted(recommendations, key=key):
        label = f"recommendation {rec.index} ({rec.instance_type or 'no instance type'})"
        if not rec.deployable:
            left_out.append(f"{label}: no model package ARN, inference specification or instance type")
        elif any(c.instance_type == rec.instance_type for c in chosen):
            left_out.append(f"{label}: a better-ranked recommendation has the same instance type")
        elif len(chosen) == MAX_POOLS:
            left_out.append(f"{label}: a variant holds at most {MAX_POOLS} pools")
        else:
            if rec.metric(order_by) is None:
                notes.append(f"{label} reports no numeric {order_by} metric: ranked after those that do")
            chosen.append(rec)
    return PoolProposal(order_by=order_by, pools=tuple(chosen), left_out=tuple(left_out), notes=tuple(notes))
