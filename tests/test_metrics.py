"""The metric factory and the typed helpers: namespaces, statistics, units, merged dimensions."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from sagemaker_pools import InstancePool, MetricSource, PoolConfigError, PooledEndpoint, sagemaker_metric
from sagemaker_pools.metrics import SAGEMAKER_METRICS
from sagemaker_pools.queries import flatten, from_cloudwatch
from support.synth import imported_model, new_stack

G6E, G6 = "ml.g6e.48xlarge", "ml.g6.48xlarge"


@pytest.fixture(scope="module")
def endpoint() -> PooledEndpoint:
    stack = new_stack("Metrics")
    return PooledEndpoint(
        stack,
        "Ep",
        model=imported_model(stack),
        endpoint_name="llm",
        pools=[InstancePool(instance_type=G6E, max_concurrency=32), InstancePool(instance_type=G6, max_concurrency=16)],
    )


def _rendered(metric: cloudwatch.IMetric) -> dict[str, Any]:
    """The metric as CloudWatch sees it: namespace, name, dimensions, statistic, unit, period."""
    stat = metric.to_metric_config().metric_stat
    assert stat is not None
    return {
        "namespace": stat.namespace,
        "name": stat.metric_name,
        "dimensions": {d.name: d.value for d in stat.dimensions or []},
        "statistic": stat.statistic,
        "unit": stat.unit_filter,
        "period": stat.period.to_seconds(),
    }


HELPERS = {
    "metric_model_latency": ("AWS/SageMaker", "ModelLatency", "Average", cloudwatch.Unit.MICROSECONDS),
    "metric_overhead_latency": ("AWS/SageMaker", "OverheadLatency", "Average", cloudwatch.Unit.MICROSECONDS),
    "metric_concurrent_requests_per_model": ("AWS/SageMaker", "ConcurrentRequestsPerModel", "Maximum", None),
    "metric_invocations": ("AWS/SageMaker", "Invocations", "Sum", None),
    "metric_invocations_per_instance": ("AWS/SageMaker", "InvocationsPerInstance", "Sum", None),
    "metric_invocation_4xx_errors": ("AWS/SageMaker", "Invocation4XXErrors", "Sum", None),
    "metric_invocation_5xx_errors": ("AWS/SageMaker", "Invocation5XXErrors", "Sum", None),
    "metric_invocation_model_errors": ("AWS/SageMaker", "InvocationModelErrors", "Sum", None),
    "metric_cpu_utilization": ("/aws/sagemaker/Endpoints", "CPUUtilization", "Average", cloudwatch.Unit.PERCENT),
    "metric_memory_utilization": ("/aws/sagemaker/Endpoints", "MemoryUtilization", "Average", cloudwatch.Unit.PERCENT),
    "metric_gpu_utilization": ("/aws/sagemaker/Endpoints", "GPUUtilization", "Average", cloudwatch.Unit.PERCENT),
    "metric_gpu_memory_utilization": ("/aws/sagemaker/Endpoints", "GPUMemoryUtilization", "Average", cloudwatch.Unit.PERCENT),
    "metric_instance_count": ("AWS/SageMaker", "InstanceCount", "Average", None),
}


@pytest.mark.parametrize("helper", list(HELPERS))
def test_typed_helpers(endpoint: PooledEndpoint, helper: str) -> None:
    namespace, name, statistic, unit = HELPERS[helper]
    whole = _rendered(getattr(endpoint, helper)())
    assert (whole["namespace"], whole["name"], whole["statistic"], whole["unit"], whole["period"]) == (
        namespace,
        name,
        statistic,
        unit,
        60,
    )
    assert whole["dimensions"] == {"EndpointName": endpoint.endpoint_name, "VariantName": "AllTraffic"}
    per_type = _rendered(getattr(endpoint, helper)(instance_type=G6))
    # InstanceType is added to EndpointName/VariantName, never replacing them.
    assert per_type["dimensions"] == {**whole["dimensions"], "InstanceType": G6}


def test_options_override_defaults_and_dimensions_merge(endpoint: PooledEndpoint) -> None:
    metric = endpoint.metric_model_latency(
        instance_type=G6E, statistic="p99", period=Duration.minutes(5), label="p99", dimensions_map={"Extra": "x"}
    )
    rendered = _rendered(metric)
    assert rendered["statistic"] == "p99" and rendered["period"] == 300 and metric.label == "p99"
    assert rendered["dimensions"] == {"EndpointName": endpoint.endpoint_name, "VariantName": "AllTraffic", "InstanceType": G6E, "Extra": "x"}
    # the same value again is a no-op merge
    assert _rendered(endpoint.metric_invocations(dimensions_map={"VariantName": "AllTraffic"}))["dimensions"]["VariantName"] == "AllTraffic"


def test_generic_metric_and_unknown_names(endpoint: PooledEndpoint) -> None:
    known = _rendered(endpoint.metric("DiskUtilization"))
    assert (known["namespace"], known["statistic"]) == ("/aws/sagemaker/Endpoints", "Average")
    custom = _rendered(endpoint.metric("TokensPerSecond", namespace="MyApp", statistic="Sum"))
    assert (custom["namespace"], custom["name"], custom["statistic"]) == ("MyApp", "TokensPerSecond", "Sum")
    with pytest.raises(PoolConfigError) as error:
        endpoint.metric("ModelLatencyy")
    assert error.value.field == "metric.metric_name" and "ModelLatency" in str(error.value)


def test_bad_dimensions(endpoint: PooledEndpoint) -> None:
    with pytest.raises(PoolConfigError) as error:
        endpoint.metric_invocations(instance_type="ml.p5.48xlarge")
    assert error.value.field == "metric.instance_type" and G6E in str(error.value)
    with pytest.raises(PoolConfigError) as error:
        endpoint.metric_invocations(dimensions_map={"VariantName": "Other"})
    assert error.value.field == "metric.dimensions_map['VariantName']"
    with pytest.raises(PoolConfigError) as error:
        sagemaker_metric("Invocations", MetricSource.variant("e", "v"), instance_type="g6.48xlarge")
    assert error.value.field == "metric.instance_type"


def test_imported_endpoint_metrics() -> None:
    stack = new_stack()
    imported = PooledEndpoint.from_endpoint_name(stack, "Imported", "other-endpoint", variant_name="Blue")
    rendered = _rendered(imported.metric_gpu_utilization(instance_type="ml.p4d.24xlarge"))
    assert rendered["dimensions"] == {"EndpointName": "other-endpoint", "VariantName": "Blue", "InstanceType": "ml.p4d.24xlarge"}


def test_inference_component_and_endpoint_sources() -> None:
    component = MetricSource.inference_component("my-ic")
    copies = _rendered(sagemaker_metric("ConcurrentRequestsPerCopy", component, instance_type=G6))
    assert copies["dimensions"] == {"InferenceComponentName": "my-ic", "InstanceType": G6}
    assert (copies["namespace"], copies["statistic"]) == ("AWS/SageMaker", "Maximum")
    cpu = _rendered(sagemaker_metric("CPUUtilizationNormalized", component))
    assert cpu["namespace"] == "/aws/sagemaker/InferenceComponents"
    # Async backlog metrics carry EndpointName only, even when asked for a variant.
    backlog = _rendered(sagemaker_metric("ApproximateBacklogSizePerInstance", MetricSource.variant("e", "v")))
    assert backlog["dimensions"] == {"EndpointName": "e"}
    assert MetricSource.endpoint("e").dimensions == (("EndpointName", "e"),)


def test_every_known_metric_has_a_documented_namespace() -> None:
    namespaces = {"AWS/SageMaker", "/aws/sagemaker/Endpoints", "/aws/sagemaker/InferenceComponents"}
    assert {spec.namespace for spec in SAGEMAKER_METRICS.values()} <= namespaces
    for name, spec in SAGEMAKER_METRICS.items():
        assert spec.statistic in ("Average", "Sum", "Maximum"), name
        if name.startswith("ConcurrentRequests"):
            assert spec.statistic == "Maximum"  # documented statistics: Min, Max


def test_flatten_counts_nested_math(endpoint: PooledEndpoint) -> None:
    flat = flatten(from_cloudwatch(endpoint.metric_weighted_utilization()))
    assert sorted(flat.stats) == ["c1", "c2"] and sorted(flat.expressions) == ["u1", "u2"]
    assert flat.expression == "MAX([u1, u2])"
    single = flatten(from_cloudwatch(endpoint.metric_invocations()))
    assert single.expression is None and list(single.stats) == ["m1"]
