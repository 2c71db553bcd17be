"""N pooled endpoints, with the library (:func:`lib_fleet`) and by hand with L1s (:func:`l1_fleet`).

Each endpoint is the real-time example's: three pools, one model build per pool (each with its
own least-privilege execution role), blue/green canary deploys rolled back by its alarms (p99
latency per type, 5XX rate), fallback-in-use and at-max-capacity alarms to an SNS topic,
weighted-utilization target tracking, and its rows on a dashboard. The artifacts bucket is made
elsewhere (named: ``ModelData`` takes a bucket name) so that every stack stands alone.

Endpoints go ``PER_STACK`` to a stack (``PooledFleet01``, ``PooledFleet02`` ...), each stack with
its own alerts key and topic and one dashboard: CloudFormation takes at most 500 resources a
stack (see ``docs/performance.md``, "Splitting an app over stacks").
"""

from __future__ import annotations

from aws_cdk import App, Stack

#: Endpoints a stack: ~19 resources each, well under CloudFormation's 500.
PER_STACK = 10
ARTIFACTS_BUCKET = "my-llm-artifacts"
BUILDS = (
    ("TensorParallel8", "fp16-tp8", {"OPTION_TENSOR_PARALLEL_DEGREE": "8"}),
    ("SpeculativeDecoding", "fp16-spec", {"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_SPECULATIVE_DRAFT_MODEL": "/opt/ml/model/draft"}),
    ("Int4", "awq-int4", {"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_QUANTIZE": "awq"}),
)


def stack_slices(n: int, per_stack: int = PER_STACK) -> list[range]:
    """Endpoint indexes (from 1) of each stack."""
    return [range(first, min(first + per_stack, n + 1)) for first in range(1, n + 1, per_stack)]


def endpoint_name(i: int) -> str:
    return f"llm-{i:03d}"


def lib_fleet(app: App, n: int, per_stack: int = PER_STACK) -> list[Stack]:
    """``n`` pooled endpoints built with the library."""
    from aws_cdk import Duration, RemovalPolicy
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_sns as sns

    from sagemaker_pools import (
        CapacitySize,
        ContainerImage,
        DeploymentPolicy,
        InstancePool,
        ModelData,
        PoolAlarms,
        PoolDashboard,
        PooledEndpoint,
        PoolModel,
    )

    image = ContainerImage.from_image_uri(
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
    )
    # What every endpoint shares is made once, as the L1 twin's constants are: the policies are
    # immutable values, and each Duration is a round trip to Node to make and one to read.
    deployment = DeploymentPolicy.canary(
        canary_size=CapacitySize.percent(25),
        wait_interval=Duration.minutes(10),
        termination_wait=Duration.minutes(5),
        max_execution_timeout=Duration.hours(2),
    )
    p99_latency, p99_latency_p4d, fallback_for = Duration.seconds(20), Duration.seconds(30), Duration.hours(2)
    provision_timeout = startup_timeout = Duration.minutes(20)
    download_timeout = Duration.minutes(30)
    scale_out_cooldown, scale_in_cooldown = Duration.minutes(15), Duration.minutes(20)
    stacks = []
    for s, indexes in enumerate(stack_slices(n, per_stack), start=1):
        stack = Stack(app, f"PooledFleet{s:02d}")
        alerts_key = kms.Key(stack, "AlertsKey", enable_key_rotation=True, removal_policy=RemovalPolicy.RETAIN)
        alerts_key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        alerts = sns.Topic(stack, "Alerts", master_key=alerts_key, enforce_ssl=True)
        endpoints = []
        for i in indexes:
            prefix = f"Llm{i:03d}"
            name = endpoint_name(i)
            models = [
                PoolModel(
                    stack,
                    f"{prefix}{build}",
                    image=image,
                    model_data=ModelData.from_s3_prefix(ARTIFACTS_BUCKET, f"llm/{name}/{folder}/"),
                    environment=env,
                )
                for build, folder, env in BUILDS
            ]
            pools = [
                InstancePool(instance_type="ml.g6e.48xlarge", max_concurrency=32),
                InstancePool(instance_type="ml.g6.48xlarge", model=models[1], max_concurrency=16),
                InstancePool(instance_type="ml.p4d.24xlarge", model=models[2], max_concurrency=24),
            ]
            alarms = PoolAlarms(
                stack,
                f"{prefix}EndpointAlarms",
                endpoint=PooledEndpoint.from_endpoint_name(stack, f"{prefix}ByName", name),
                pools=pools,
                p99_latency=p99_latency,
                p99_latency_by_type={"ml.p4d.24xlarge": p99_latency_p4d},
                error_rate_percent=1,
                fallback_for=fallback_for,
                max_capacity=8,
                saturation_threshold=0.7,
                topic=alerts,
            )
            endpoint = PooledEndpoint(
                stack,
                f"{prefix}Endpoint",
                endpoint_name=name,
                model=models[0],
                pools=pools,
                initial_instance_count=2,
                provision_timeout=provision_timeout,
                container_startup_health_check_timeout=startup_timeout,
                model_data_download_timeout=download_timeout,
                deployment=deployment.with_rollback_alarms(alarms.rollback_alarms),
                tags={"workload": "llm"},
            )
            endpoint.auto_scale(min_capacity=2, max_capacity=8).scale_on_weighted_utilization(
                target=0.7, scale_out_cooldown=scale_out_cooldown, scale_in_cooldown=scale_in_cooldown
            )
            endpoints.append(endpoint)
        PoolDashboard(stack, "Dashboard", endpoints=endpoints)
        stacks.append(stack)
    return stacks


def l1_fleet(app: App, n: int, per_stack: int = PER_STACK) -> list[Stack]:
    """``n`` pooled endpoints written with L1s only (the twin of :func:`lib_fleet`)."""
    from l1_app import DASHBOARD_ROWS, REALTIME_POOLS, S3Source, alerts_topic, dashboard, dashboard_widgets, pool_model, realtime_endpoint

    stacks = []
    for s, indexes in enumerate(stack_slices(n, per_stack), start=1):
        stack = Stack(app, f"PooledFleet{s:02d}")
        topic = alerts_topic(stack)
        widgets = []
        for row, i in enumerate(indexes):
            prefix = f"Llm{i:03d}"
            name = endpoint_name(i)
            models = [
                pool_model(stack, f"{prefix}{build}", source=S3Source(f"llm/{name}/{folder}/"), environment=env)
                for build, folder, env in BUILDS
            ]
            realtime_endpoint(stack, f"{prefix}Endpoint", endpoint_name=name, models=models, topic=topic.ref)
            widgets += dashboard_widgets(name, REALTIME_POOLS, y=row * DASHBOARD_ROWS)
        dashboard(stack, "Dashboard", widgets)
        stacks.append(stack)
    return stacks
