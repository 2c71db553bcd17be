"""The metric factory and the typed helpers: namespaces, statistics, units, merged dimensions."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import CfnParameter, Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from sagemaker_pools import InstancePool, MetricSource, PoolConfigError, PooledEndpoint, sagemaker_metric
from sagemaker_pools.metrics import (
    InstanceCountSource,
    UtilizationStrategy,
    weighted_utilization,
    weighted_utilization_query,
    variant_instances_query,
    SAGEMAKER_METRICS,
    instance_count_metric,
    instance_count_stat,
    instance_samples_metric,
    sagemaker_stat,
)
from sagemaker_pools.queries import Stat, flatten, from_cloudwatch
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
    "metric_instance_count": ("/aws/sagemaker/Endpoints", "CPUUtilization", "SampleCount", cloudwatch.Unit.PERCENT),
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


# -- the factory as plain data, and the L2 objects of the public functions -----------------------

VARIANT = MetricSource.variant("llm", "AllTraffic")
COMPONENT = MetricSource.inference_component("llm-ic")
VARIANT_DIMS = (("EndpointName", "llm"), ("VariantName", "AllTraffic"))


def test_each_source_kind_has_its_dimensions_and_its_per_container_metrics() -> None:
    # (source, dimensions, kind, concurrency metric, metric whose SampleCount counts instances or copies)
    # (Built here, not at import: mutmut measures what the test itself calls.)
    expected = [
        (MetricSource.variant("llm", "AllTraffic"), VARIANT_DIMS, "variant", "ConcurrentRequestsPerModel", "CPUUtilization"),
        (MetricSource.endpoint("llm"), (("EndpointName", "llm"),), "endpoint", "ConcurrentRequestsPerModel", "CPUUtilization"),
        (MetricSource.inference_component("llm-ic"), (("InferenceComponentName", "llm-ic"),), "inference-component", "ConcurrentRequestsPerCopy", "CPUUtilizationNormalized"),
    ]
    for source, dimensions, kind, concurrency, presence in expected:
        assert (source.dimensions, source.kind, source.concurrency_metric, source.presence_metric) == (dimensions, kind, concurrency, presence)


def test_a_stat_without_options_is_the_documented_metric_over_one_minute() -> None:
    assert sagemaker_stat("ModelLatency", VARIANT) == Stat(
        "AWS/SageMaker", "ModelLatency", VARIANT_DIMS, "Average", 60, cloudwatch.Unit.MICROSECONDS, None, None, None
    )
    # Counts are published without a unit: no unit filter.
    assert sagemaker_stat("Invocations", VARIANT) == Stat("AWS/SageMaker", "Invocations", VARIANT_DIMS, "Sum", 60, None)
    assert sagemaker_stat("GPUUtilizationNormalized", COMPONENT) == Stat(
        "/aws/sagemaker/InferenceComponents", "GPUUtilizationNormalized", (("InferenceComponentName", "llm-ic"),), "Average", 60, cloudwatch.Unit.PERCENT
    )


def test_every_option_of_a_stat_is_kept() -> None:
    stat = sagemaker_stat(
        "ModelLatency",
        VARIANT,
        instance_type=G6E,
        namespace="Mirror/SageMaker",
        statistic="p99",
        period=300,
        label="p99 latency",
        unit=cloudwatch.Unit.MILLISECONDS,
        dimensions_map={"Extra": "x", "EndpointName": "llm"},
        account="123456789012",
        region="eu-west-1",
    )
    assert stat == Stat(
        "Mirror/SageMaker",
        "ModelLatency",
        (*VARIANT_DIMS, ("Extra", "x"), ("InstanceType", G6E)),
        "p99",
        300,
        cloudwatch.Unit.MILLISECONDS,
        "p99 latency",
        "123456789012",
        "eu-west-1",
    )


def test_an_unknown_metric_with_a_namespace_reads_all_dimensions_as_an_average() -> None:
    assert sagemaker_stat("TokensPerSecond", VARIANT, namespace="MyApp") == Stat("MyApp", "TokensPerSecond", VARIANT_DIMS, "Average", 60, None)
    # A known endpoint-only metric drops VariantName, in its own namespace or another one.
    assert sagemaker_stat("ApproximateBacklogSize", VARIANT).dimensions == (("EndpointName", "llm"),)
    assert sagemaker_stat("ApproximateBacklogSize", VARIANT, namespace="Mine").dimensions == (("EndpointName", "llm"),)


def test_bad_metric_names_and_dimensions_name_the_field_and_what_is_allowed() -> None:
    with pytest.raises(PoolConfigError) as error:
        sagemaker_stat("ModelLatencyy", VARIANT, field="alarm")
    assert (error.value.field, error.value.value) == ("alarm.metric_name", "ModelLatencyy")
    assert error.value.allowed == f"a SageMaker metric ({', '.join(sorted(SAGEMAKER_METRICS))}) or any metric with namespace=..."
    with pytest.raises(PoolConfigError) as error:
        sagemaker_stat("TokensPerSecond", VARIANT, namespace="")  # CloudWatch namespaces have 1 to 255 characters
    assert error.value.field == "metric.metric_name"
    for bad in ("g6.48xlarge", "ML.g6.48xlarge", 48):
        with pytest.raises(PoolConfigError) as error:
            sagemaker_stat("Invocations", VARIANT, instance_type=bad, field="alarm")  # type: ignore[arg-type]
        assert (error.value.field, error.value.value) == ("alarm.instance_type", bad)
        assert error.value.allowed == "an ml.* instance type such as 'ml.g6e.48xlarge'"
    with pytest.raises(PoolConfigError) as error:
        sagemaker_stat("Invocations", VARIANT, dimensions_map={"VariantName": "Blue"}, field="alarm")
    assert (error.value.field, error.value.value) == ("alarm.dimensions_map['VariantName']", "Blue")
    assert error.value.allowed == "the source's own value 'AllTraffic' (dimensions are merged, not replaced)"
    # The defaults report as "metric".
    with pytest.raises(PoolConfigError) as error:
        sagemaker_stat("Invocations", VARIANT, instance_type="g6.48xlarge")
    assert error.value.field == "metric.instance_type"
    with pytest.raises(PoolConfigError) as error:
        sagemaker_stat("Invocations", VARIANT, dimensions_map={"EndpointName": "other"})
    assert error.value.field == "metric.dimensions_map['EndpointName']"


def test_sagemaker_metric_hands_every_option_to_the_cloudwatch_metric() -> None:
    metric = sagemaker_metric(
        "ModelLatency",
        VARIANT,
        instance_type=G6,
        statistic="p90",
        period=Duration.minutes(5),
        label="p90 g6",
        color="#ff0000",
        unit=cloudwatch.Unit.MILLISECONDS,
        dimensions_map={"Extra": "x"},
        account="123456789012",
        region="eu-west-1",
    )
    assert (metric.namespace, metric.metric_name, metric.dimensions) == (
        "AWS/SageMaker",
        "ModelLatency",
        {"EndpointName": "llm", "VariantName": "AllTraffic", "InstanceType": G6, "Extra": "x"},
    )
    assert (metric.statistic, metric.period.to_seconds(), metric.label, metric.color, metric.unit) == (
        "p90",
        300,
        "p90 g6",
        "#ff0000",
        cloudwatch.Unit.MILLISECONDS,
    )
    assert (metric.account, metric.region) == ("123456789012", "eu-west-1")
    plain = sagemaker_metric("TokensPerSecond", MetricSource.endpoint("llm"), namespace="MyApp")
    assert (plain.namespace, plain.dimensions, plain.statistic, plain.period.to_seconds()) == ("MyApp", {"EndpointName": "llm"}, "Average", 60)
    assert (plain.label, plain.color, plain.unit, plain.account, plain.region) == (None, None, None, None, None)


def test_instance_count_of_a_variant_is_a_documented_metrics_sample_count_by_default() -> None:
    cpu = ("/aws/sagemaker/Endpoints", "CPUUtilization")
    assert instance_count_stat(VARIANT, instance_type=G6) == Stat(*cpu, (*VARIANT_DIMS, ("InstanceType", G6)), "SampleCount", 60, cloudwatch.Unit.PERCENT, f"instances {G6}")
    per_type = instance_count_metric(VARIANT, instance_type=G6)
    assert (per_type.namespace, per_type.metric_name, per_type.statistic, per_type.label) == (*cpu, "SampleCount", f"instances {G6}")
    assert per_type.dimensions == {"EndpointName": "llm", "VariantName": "AllTraffic", "InstanceType": G6}


def test_the_launch_posts_instance_count_metric_is_an_explicit_choice() -> None:
    explicit = InstanceCountSource.INSTANCE_COUNT_METRIC
    assert instance_count_stat(VARIANT, instance_type=G6, count_source=explicit) == Stat(
        "AWS/SageMaker", "InstanceCount", (*VARIANT_DIMS, ("InstanceType", G6)), "Average", 60, None, f"instances {G6}"
    )
    assert instance_count_stat(VARIANT, statistic="Minimum", period=300, count_source=explicit) == Stat(
        "AWS/SageMaker", "InstanceCount", VARIANT_DIMS, "Minimum", 300, None, "instances"
    )
    whole = instance_count_metric(VARIANT, statistic="Maximum", period=Duration.minutes(5), count_source=explicit)
    assert (whole.metric_name, whole.dimensions, whole.statistic, whole.period.to_seconds(), whole.label) == ("InstanceCount", dict(VARIANT_DIMS), "Maximum", 300, "instances")
    assert instance_count_metric(VARIANT, label="running", count_source=explicit).label == "running"
    # An inference component's weight is its copies, whichever source is asked for.
    assert instance_count_stat(COMPONENT, count_source=explicit).metric_name == "CPUUtilizationNormalized"
    with pytest.raises(PoolConfigError) as error:
        instance_count_stat(VARIANT, count_source="InstanceCount")  # type: ignore[arg-type]
    assert error.value.field == "count_source"
    with pytest.raises(PoolConfigError):
        instance_count_metric(VARIANT, count_source="InstanceCount")  # type: ignore[arg-type]


def test_the_variants_instances_from_two_documented_invocation_metrics() -> None:
    query = variant_instances_query(VARIANT, period=300)
    assert query.expression == "inv / ipi"
    assert [(i, s.metric_name, s.statistic, s.period, s.dimensions) for i, s in query.using] == [  # type: ignore[union-attr]
        ("inv", "Invocations", "Sum", 300, VARIANT_DIMS),
        ("ipi", "InvocationsPerInstance", "Sum", 300, VARIANT_DIMS),
    ]


def test_instance_count_of_a_component_is_the_sample_count_of_its_copies() -> None:
    copies = (("InferenceComponentName", "llm-ic"), ("InstanceType", G6))
    expected = Stat("/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized", copies, "SampleCount", 120, cloudwatch.Unit.PERCENT, f"instances {G6}")
    # The count is a SampleCount whatever statistic is asked for the variant's InstanceCount.
    assert instance_count_stat(COMPONENT, instance_type=G6, statistic="Minimum", period=120) == expected
    assert instance_count_stat(COMPONENT).label == "instances"
    metric = instance_count_metric(COMPONENT, instance_type=G6, period=Duration.minutes(2))
    assert (metric.namespace, metric.metric_name, metric.dimensions) == ("/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized", dict(copies))
    assert (metric.statistic, metric.period.to_seconds(), metric.label) == ("SampleCount", 120, f"instances {G6}")


def test_instance_samples_count_the_instances_that_report_cpu() -> None:
    metric = instance_samples_metric(VARIANT, instance_type=G6E, period=Duration.seconds(10))
    assert (metric.namespace, metric.metric_name, metric.dimensions) == (
        "/aws/sagemaker/Endpoints",
        "CPUUtilization",
        {"EndpointName": "llm", "VariantName": "AllTraffic", "InstanceType": G6E},
    )
    assert (metric.statistic, metric.period.to_seconds(), metric.label, metric.unit) == ("SampleCount", 10, f"instances {G6E}", cloudwatch.Unit.PERCENT)
    whole = instance_samples_metric(VARIANT)
    assert (whole.statistic, whole.period.to_seconds(), whole.label) == ("SampleCount", 60, "instances")
    # The options win over the helper's own.
    assert instance_samples_metric(VARIANT, statistic="Sum", label="samples").statistic == "Sum"
    assert instance_samples_metric(VARIANT, label="samples").label == "samples"
    component = instance_samples_metric(COMPONENT)
    assert (component.namespace, component.metric_name, component.dimensions) == (
        "/aws/sagemaker/InferenceComponents",
        "CPUUtilizationNormalized",
        {"InferenceComponentName": "llm-ic"},
    )


def test_a_bad_count_source_is_named_with_the_allowed_ones() -> None:
    for call, field in (
        (lambda: instance_count_stat(VARIANT, count_source="samples"), "count_source"),  # type: ignore[arg-type]
        (lambda: weighted_utilization_query(VARIANT, [InstancePool(instance_type=G6, max_concurrency=4)], count_source="samples", field="F"), "F.count_source"),  # type: ignore[arg-type]
    ):
        with pytest.raises(PoolConfigError) as error:
            call()
        assert error.value.field == field and error.value.value == "samples"
        assert error.value.allowed == "an InstanceCountSource (CPU_SAMPLES, INSTANCE_COUNT_METRIC)"


def test_the_instance_count_metric_keeps_its_type_statistic_and_period() -> None:
    explicit = InstanceCountSource.INSTANCE_COUNT_METRIC
    per_type = instance_count_metric(VARIANT, instance_type=G6, count_source=explicit, period=Duration.minutes(5))
    assert (per_type.metric_name, per_type.dimensions, per_type.statistic, per_type.period.to_seconds()) == (
        "InstanceCount", {"EndpointName": "llm", "VariantName": "AllTraffic", "InstanceType": G6}, "Average", 300
    )
    samples = instance_count_metric(VARIANT, instance_type=G6)
    assert (samples.statistic, samples.period.to_seconds()) == ("SampleCount", 60)
    # An inference component counts copies whichever source is asked for.
    copies = instance_count_metric(COMPONENT, instance_type=G6, count_source=explicit)
    assert (copies.metric_name, copies.statistic) == ("CPUUtilizationNormalized", "SampleCount")


def test_the_variants_instances_keep_their_period_and_label() -> None:
    query = variant_instances_query(VARIANT, period=300, label="fleet")
    assert (query.period, query.label) == (300, "fleet")
    assert variant_instances_query(VARIANT).label == "instances" and variant_instances_query(VARIANT).period == 60


def test_weighted_utilization_passes_the_count_source_period_and_field_on() -> None:
    pools = [InstancePool(instance_type=G6E, max_concurrency=32), InstancePool(instance_type=G6, max_concurrency=16)]
    weighted = weighted_utilization(VARIANT, pools, strategy=UtilizationStrategy.INSTANCE_WEIGHTED,
                                    count_source=InstanceCountSource.INSTANCE_COUNT_METRIC, period=Duration.minutes(2))
    assert weighted.period.to_seconds() == 120
    stats = flatten(from_cloudwatch(weighted)).stats.values()
    assert {(s.metric_name, s.statistic, s.period) for s in stats} == {("ConcurrentRequestsPerModel", "Maximum", 120), ("InstanceCount", "Average", 120)}
    with pytest.raises(PoolConfigError) as error:
        weighted_utilization(VARIANT, [InstancePool(instance_type=G6)], field="Mine")
    assert error.value.field == "Mine.pools[0].max_concurrency"


def test_a_constant_in_metric_math_text() -> None:
    from sagemaker_pools.metrics import _number

    assert (_number(32), _number(2.5), _number(0.125), _number(1 / 3)) == ("32", "2.5", "0.125", "0.333333333")
    stack = new_stack()
    token = CfnParameter(stack, "Max", type="Number").value_as_number
    assert _number(token).startswith("${Token[")


def test_a_metric_period_must_be_concrete_and_is_kept() -> None:
    metric = sagemaker_metric("ModelLatency", VARIANT, period=Duration.minutes(5))
    assert metric.period.to_seconds() == 300
    stack = new_stack()
    seconds = CfnParameter(stack, "Seconds", type="Number").value_as_number
    with pytest.raises(PoolConfigError) as error:
        sagemaker_metric("ModelLatency", VARIANT, period=Duration.seconds(seconds))
    assert error.value.field == "metric.period" and "CloudWatch takes a metric's period" in error.value.allowed


def test_a_parameter_instance_type_is_added_unchecked_and_a_literal_is_checked() -> None:
    stack = new_stack()
    instance_type = CfnParameter(stack, "Type").value_as_string
    assert dict(sagemaker_stat("ModelLatency", VARIANT, instance_type=instance_type).dimensions)["InstanceType"] == instance_type
    with pytest.raises(PoolConfigError) as error:
        sagemaker_stat("ModelLatency", VARIANT, instance_type="g6.48xlarge")
    assert error.value.field == "metric.instance_type"
    metric = sagemaker_metric("ModelLatency", VARIANT, period=Duration.minutes(2))
    assert (metric.period.to_seconds(), metric.namespace) == (120, "AWS/SageMaker")


def _evaluate(query: Any, values: dict[str, float | None]) -> float | None:
    """``query`` at one timestamp, each metric read by its id from ``values``."""
    from sagemaker_pools import metric_math

    flat = flatten(query)
    queries: list[dict[str, Any]] = [{"Id": i, "MetricStat": {"Id": i}, "ReturnData": False} for i in flat.stats]
    queries += [{"Id": i, "Expression": e, "ReturnData": False} for i, e in flat.expressions.items()]
    queries.append({"Id": "top", "Expression": flat.expression, "ReturnData": True})
    return metric_math.evaluate(queries, lambda stat: values[stat["Id"]])


@pytest.mark.parametrize(
    ("strategy", "pools", "expected_top"),
    [
        (UtilizationStrategy.MAX_OVER_TYPES, 2, "IF(FILL(n, 0) > 0, FILL(MAX([u1, u2]), 0))"),
        (UtilizationStrategy.AVERAGE_OVER_TYPES, 2, "IF(FILL(n, 0) > 0, FILL((u1 + u2) / 2, 0))"),
        (UtilizationStrategy.INSTANCE_WEIGHTED, 2, "IF(FILL(n, 0) > 0, FILL((u1 * s1 + u2 * s2) / n, 0))"),
        (UtilizationStrategy.MAX_OVER_TYPES, 1, "IF(FILL(n, 0) > 0, FILL(c1 / 10, 0))"),
    ],
)
def test_zero_when_idle_reads_missing_concurrency_as_zero_only_while_units_report(
    strategy: UtilizationStrategy, pools: int, expected_top: str
) -> None:
    types = [InstancePool(instance_type="ml.g6e.2xlarge", max_concurrency=10), InstancePool(instance_type="ml.g6.2xlarge", max_concurrency=20)][:pools]
    query = weighted_utilization_query(MetricSource.inference_component("ic"), types, strategy=strategy, zero_when_idle=True)
    flat = flatten(query)
    assert flat.expression == expected_top
    assert len(flat.stats) == 2 * pools  # concurrency and presence per type: within the 10-metric rule at five
    present = {f"s{i}": 1.0 for i in range(1, pools + 1)}
    # Units report, no concurrency: idle, a real zero (target tracking can scale in).
    assert _evaluate(query, {**{f"c{i}": None for i in range(1, pools + 1)}, **present}) == 0.0
    # No unit reports: nothing, whatever the concurrency reads.
    assert _evaluate(query, {**{f"c{i}": 5.0 for i in range(1, pools + 1)}, **{k: None for k in present}}) is None
    # Busy: the strategy's own value (5 / 10 on the first type).
    busy = _evaluate(query, {"c1": 5.0, **{f"c{i}": None for i in range(2, pools + 1)}, **present})
    assert busy == pytest.approx({UtilizationStrategy.AVERAGE_OVER_TYPES: 0.25, UtilizationStrategy.INSTANCE_WEIGHTED: 0.25}.get(strategy, 0.5) if pools > 1 else 0.5)
    # Without the option, the same query has no presence condition.
    assert ", 0))" not in (flatten(weighted_utilization_query(MetricSource.inference_component("ic"), types, strategy=strategy)).expression or "")


@pytest.mark.parametrize(
    ("source", "count_source", "presence"),
    [
        (MetricSource.inference_component("ic"), InstanceCountSource.CPU_SAMPLES, ("CPUUtilizationNormalized", "SampleCount")),
        (MetricSource.variant("ep", "AllTraffic"), InstanceCountSource.CPU_SAMPLES, ("CPUUtilization", "SampleCount")),
        (MetricSource.variant("ep", "AllTraffic"), InstanceCountSource.INSTANCE_COUNT_METRIC, ("InstanceCount", "Average")),
    ],
)
def test_zero_when_idle_reads_each_types_presence_at_the_query_period(source: MetricSource, count_source: InstanceCountSource, presence: tuple[str, str]) -> None:
    """The presence samples are per type (an all-types count would let one type's copies vouch for another's silence),
    at the query's period, from the count source asked for; the labels are the strategy's and "instances"."""
    types = [InstancePool(instance_type="ml.g6e.2xlarge", max_concurrency=10), InstancePool(instance_type="ml.g6.2xlarge", max_concurrency=20)]
    query = weighted_utilization_query(source, types, period=300, zero_when_idle=True, count_source=count_source, label="busy")
    assert (query.period, query.label) == (300, "busy")
    flat = flatten(query)
    for ident, pool in (("s1", types[0]), ("s2", types[1])):
        stat = flat.stats[ident]
        assert (stat.metric_name, stat.statistic, stat.period) == (*presence, 300)
        assert ("InstanceType", pool.instance_type) in stat.dimensions
    assert flat.labels["n"] == "instances"
    (total,) = [child for ident, child in query.using if ident == "n"]
    assert total.period == 300
    default_label = weighted_utilization_query(source, types, zero_when_idle=True, count_source=count_source).label
    assert default_label == "Weighted utilization (max-over-types)"
