"""``InferenceComponentPoolsStack``: the launch post's inference component on two pools.

An endpoint without a variant model on ml.p5.48xlarge (first) and ml.g6.48xlarge (when p5 has
no capacity), with managed instance scaling down to zero instances. One inference component
runs a model build per instance type: on p5, 8 accelerators and at least 64 GiB of host memory
per copy; on g6, 8 accelerators and at least 32 GiB; four copies.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_s3 as s3
from constructs import Construct

from sagemaker_pools import (
    ComponentBatchSize,
    ComponentDeploymentPolicy,
    ComponentSpec,
    ContainerImage,
    InstancePool,
    InstanceScaling,
    ModelData,
    PooledEndpoint,
    PoolModel,
)

from ._shared import ARTIFACTS_BUCKET, LMI_IMAGE

__all__ = ["InferenceComponentPoolsStack"]


P5, G6 = "ml.p5.48xlarge", "ml.g6.48xlarge"


class InferenceComponentPoolsStack(Stack):
    """A pooled endpoint that hosts one inference component with a specification per pool.

    Attributes:
        endpoint: the :class:`~sagemaker_pools.PooledEndpoint` (no variant model).
        component: the :class:`~sagemaker_pools.InferenceComponent`.
        scaling: its copy autoscaling (weighted utilization per copy, scale from zero).
        rollback_alarm: the model-error alarm that rolls back a component deployment.

    Args:
        endpoint_name: a fixed endpoint name. Default: generated.
        kwargs: as ``aws_cdk.Stack``.
    """

    def __init__(self, scope: Construct, id: str, *, endpoint_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)

        artifacts = s3.Bucket.from_bucket_name(self, "Artifacts", ARTIFACTS_BUCKET)
        image = ContainerImage.from_image_uri(LMI_IMAGE)

        # No network_isolation here, unlike the other examples. On an endpoint that hosts
        # inference components AWS documents isolation as a setting of the endpoint config
        # (CreateEndpointConfig EnableNetworkIsolation: "whether all model containers deployed to
        # the endpoint are isolated"), which PooledEndpoint does not render yet; whether a
        # component honours its model's own EnableNetworkIsolation, or refuses one that differs
        # from the endpoint config's, no AWS page says. An example should deploy as written, so
        # these two models stay as they were (docs/network-isolation.md).
        def build(name: str, prefix: str, env: dict[str, str]) -> PoolModel:
            model = PoolModel(
                self, name, image=image, model_data=ModelData.from_s3_prefix(artifacts, prefix), environment=env
            )
            return model

        # One build per hardware target: FP8 across the 8 H100s of p5; AWQ INT4 across the 8 L4s
        # (24 GB each) of g6.
        p5_build = build("P5Fp8", "llm/p5-fp8-tp8/", {"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_QUANTIZE": "fp8"})
        g6_build = build("G6Awq", "llm/g6-awq-tp8/", {"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_QUANTIZE": "awq"})

        self.endpoint = PooledEndpoint(
            self,
            "LlmEndpoint",
            endpoint_name=endpoint_name,
            pools=[InstancePool(instance_type=P5), InstancePool(instance_type=G6)],
            # No model: the endpoint hosts inference components. One copy needs a whole
            # instance, so up to 8 instances hold up to 8 copies; none when idle.
            instance_scaling=InstanceScaling(min_instance_count=0, max_instance_count=8),
            provision_timeout=Duration.minutes(20),
        )

        self.rollback_alarm = cloudwatch.Alarm(
            self,
            "ComponentModelErrors",
            metric=cloudwatch.Metric(
                namespace="AWS/SageMaker",
                metric_name="InvocationModelErrors",
                dimensions_map={"InferenceComponentName": "llm-pooled-ic"},
                statistic="Sum",
                period=Duration.minutes(1),
            ),
            threshold=5,
            evaluation_periods=2,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description="Model errors on llm-pooled-ic: rolls back a component deployment in progress",
        )

        # The launch post's CreateInferenceComponent, as a construct.
        self.component = self.endpoint.add_inference_component(
            "Llm",
            inference_component_name="llm-pooled-ic",
            specifications=[
                # max_concurrency: requests one copy sustains on that type (from a benchmark).
                ComponentSpec(
                    instance_type=P5, model=p5_build, accelerator_count=8, min_memory_in_mb=65536, max_concurrency=32
                ),
                ComponentSpec(
                    instance_type=G6, model=g6_build, accelerator_count=8, min_memory_in_mb=32768, max_concurrency=12
                ),
            ],
            copy_count=4,
            deployment=ComponentDeploymentPolicy.rolling(
                batch_size=ComponentBatchSize.copies(1),
                bake_time=Duration.minutes(10),
                max_execution_timeout=Duration.hours(3),
                rollback_alarms=[self.rollback_alarm],
            ),
        )

        # Copies follow the load, weighted by instance type (a g6 copy saturates at 12 concurrent
        # requests, a p5 copy at 32), down to zero copies; managed instance scaling follows with
        # instances. A request that finds no copy wakes the component (NoCapacityInvocationFailures).
        self.scaling = self.component.auto_scale(min_copies=0, max_copies=8)
        self.scaling.scale_on_weighted_utilization(target=0.7, scale_in_cooldown=Duration.minutes(15))
