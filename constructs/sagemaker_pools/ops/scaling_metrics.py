"""The CloudWatch metrics a target-tracking policy reads, as metric-math queries.

One reading for ``simulate`` (which replays them) and ``status --check-metrics`` (which asks
whether they exist). A policy names its metric in one of three ways
(``TargetTrackingScalingPolicyConfiguration``): a ``CustomizedMetricSpecification`` with one
metric (``Namespace``, ``MetricName``, ``Dimensions``, ``Statistic``), one with a ``Metrics`` list
(metric math: ``{Id, MetricStat | Expression, ReturnData}``), or a ``PredefinedMetricSpecification``
whose type stands for a metric of the scalable resource.

The SageMaker predefined types and the metric each stands for (SageMaker Developer Guide, "Define
a scaling policy": "Specify a predefined metric (CloudWatch metric: InvocationsPerInstance)" for
``SageMakerVariantInvocationsPerInstance``; "Specify a high-resolution predefined metric
(CloudWatch metrics: ConcurrentRequestsPerModel and ConcurrentRequestsPerCopy)" for the two
``...HighResolution`` types; the inference-component scale-to-zero example's
``SageMakerInferenceComponentInvocationsPerCopy`` policy for ``InvocationsPerCopy``). Variant
metrics carry ``EndpointName`` and ``VariantName``, inference-component metrics
``InferenceComponentName`` (SageMaker Developer Guide, "Monitor Amazon SageMaker AI with Amazon
CloudWatch"). ``SageMakerVariantProvisionedConcurrencyUtilization`` is left out: it scales a
serverless variant's provisioned concurrency, a scalable dimension instance pools do not have.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["PredefinedMetric", "PREDEFINED", "predefined_queries", "customized_queries"]


@dataclasses.dataclass(frozen=True)
class PredefinedMetric:
    """The metric a predefined target-tracking type stands for.

    Attributes:
        namespace, metric_name: the CloudWatch metric.
        statistic: the statistic Application Auto Scaling applies.
        scope: ``variant`` (dimensions EndpointName, VariantName) or ``component`` (InferenceComponentName).
    """

    namespace: str
    metric_name: str
    statistic: str
    scope: Literal["variant", "component"]


#: Predefined SageMaker metric types of target tracking, as the metric each one reads.
PREDEFINED: Mapping[str, PredefinedMetric] = {
    "SageMakerVariantInvocationsPerInstance": PredefinedMetric("AWS/SageMaker", "InvocationsPerInstance", "Sum", "variant"),
    "SageMakerVariantConcurrentRequestsPerModelHighResolution": PredefinedMetric(
        "AWS/SageMaker", "ConcurrentRequestsPerModel", "Maximum", "variant"
    ),
    "SageMakerInferenceComponentInvocationsPerCopy": PredefinedMetric("AWS/SageMaker", "InvocationsPerCopy", "Sum", "component"),
    "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution": PredefinedMetric(
        "AWS/SageMaker", "ConcurrentRequestsPerCopy", "Maximum", "component"
    ),
}


def predefined_queries(kind: str, resource_id: str) -> list[dict[str, Any]] | None:
    """The one query a predefined type reads for scalable resource ``resource_id``
    (``endpoint/NAME/variant/VARIANT`` or ``inference-component/NAME``).

    Returns None when ``kind`` is not a known SageMaker type or does not fit the resource (a
    variant type on an inference component, say): the caller says what that means for it.
    """
    known = PREDEFINED.get(kind)
    if known is None:
        return None
    parts = resource_id.split("/")
    if known.scope == "variant" and len(parts) == 4 and parts[0] == "endpoint":
        dimensions = [{"Name": "EndpointName", "Value": parts[1]}, {"Name": "VariantName", "Value": parts[3]}]
    elif known.scope == "component" and len(parts) == 2 and parts[0] == "inference-component":
        dimensions = [{"Name": "InferenceComponentName", "Value": parts[1]}]
    else:
        return None
    metric = {"Namespace": known.namespace, "MetricName": known.metric_name, "Dimensions": dimensions}
    return [{"Id": "m1", "ReturnData": True, "MetricStat": {"Metric": metric, "Stat": known.statistic}}]


def customized_queries(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A ``CustomizedMetricSpecification`` as metric-math queries: its ``Metrics`` list, or its one metric as one query."""
    if "Metrics" in spec:
        return list(spec["Metrics"])
    metric = {"Namespace": spec.get("Namespace", ""), "MetricName": spec.get("MetricName", ""), "Dimensions": spec.get("Dimensions", [])}
    return [{"Id": "m1", "ReturnData": True, "MetricStat": {"Metric": metric, "Stat": spec.get("Statistic", "Average")}}]
