"""``RealtimePooledLlmStack``: the launch post's three-pool LLM endpoint.

ml.g6e.48xlarge first, ml.g6.48xlarge when it has no capacity, ml.p4d.24xlarge last, each
running a build of the model made for it; blue/green canary deployments that roll back on a
5XX alarm; model artifacts encrypted with a customer-managed KMS key.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from sagemaker_pools import (
    CapacitySize,
    ContainerImage,
    DeploymentPolicy,
    InstancePool,
    ModelData,
    PooledEndpoint,
    PoolModel,
)

__all__ = ["RealtimePooledLlmStack"]

#: A SageMaker Large Model Inference (LMI) container in us-east-1 (replace for your region).
LMI_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


class RealtimePooledLlmStack(Stack):
    """A pooled real-time LLM endpoint with one model build per hardware target.

    Attributes:
        endpoint: the :class:`~sagemaker_pools.PooledEndpoint`.
        artifacts: the bucket that holds the three model builds (KMS-encrypted).
        rollback_alarm: the 5XX alarm that rolls a deployment back.
    """

    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)

        # S3 server access logs of the artifacts bucket (a log bucket cannot log to itself).
        access_logs = s3.Bucket(
            self,
            "ArtifactsAccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            removal_policy=RemovalPolicy.RETAIN,
        )
        Validations.of(access_logs).acknowledge(
            Acknowledgment(id="AwsSolutions::AwsSolutions-S1", reason="This is the access-log bucket itself.")
        )
        # Model weights are the crown jewels: a customer-managed key, rotated, for the bucket.
        # (The instances' own storage needs no key: these three types have NVMe instance storage,
        # which their hardware encrypts; SageMaker rejects a KmsKeyId for them.)
        key = kms.Key(self, "ArtifactsKey", enable_key_rotation=True, removal_policy=RemovalPolicy.RETAIN)
        self.artifacts = s3.Bucket(
            self,
            "Artifacts",
            encryption=s3.BucketEncryption.KMS,
            encryption_key=key,
            bucket_key_enabled=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            versioned=True,
            server_access_logs_bucket=access_logs,
            server_access_logs_prefix="artifacts/",
            removal_policy=RemovalPolicy.RETAIN,
        )
        image = ContainerImage.from_image_uri(LMI_IMAGE)

        bucket_logical_id = self.resolve(self.get_logical_id(self.artifacts.node.default_child))  # type: ignore[arg-type]

        def build(name: str, prefix: str, env: dict[str, str]) -> PoolModel:
            model = PoolModel(
                self, name, image=image, model_data=ModelData.from_s3_prefix(self.artifacts, prefix), environment=env
            )
            # cdk-nag names each object wildcard separately; this one is the build's own prefix.
            Validations.of(model).acknowledge(
                Acknowledgment(
                    id=f"AwsSolutions::AwsSolutions-IAM5[Resource::<{bucket_logical_id}.Arn>/{prefix}*]",
                    reason="The execution role reads the objects under its own model build's prefix, nothing else.",
                )
            )
            return model

        # One build per hardware target (see README, "One model per instance type").
        tp8 = build("TensorParallel8", "llm/fp16-tp8/", {"OPTION_TENSOR_PARALLEL_DEGREE": "8"})
        speculative = build(
            "SpeculativeDecoding",
            "llm/fp16-spec/",
            {"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_SPECULATIVE_DRAFT_MODEL": "/opt/ml/model/draft"},
        )
        int4 = build("Int4", "llm/awq-int4/", {"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_QUANTIZE": "awq"})

        # The rollback alarm watches the endpoint's server errors; it is named so that the
        # endpoint's DeploymentConfig can reference it before the endpoint exists.
        self.rollback_alarm = cloudwatch.Alarm(
            self,
            "Deployment5xx",
            metric=cloudwatch.Metric(
                namespace="AWS/SageMaker",
                metric_name="Invocation5XXErrors",
                dimensions_map={"EndpointName": "llm-pooled", "VariantName": "AllTraffic"},
                statistic="Sum",
                period=Duration.minutes(1),
            ),
            threshold=5,
            evaluation_periods=2,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description="5XX errors on llm-pooled: rolls back a deployment in progress",
        )

        self.endpoint = PooledEndpoint(
            self,
            "LlmEndpoint",
            endpoint_name="llm-pooled",
            model=tp8,
            pools=[
                InstancePool(instance_type="ml.g6e.48xlarge", max_concurrency=32),
                InstancePool(instance_type="ml.g6.48xlarge", model=speculative, max_concurrency=16),
                InstancePool(instance_type="ml.p4d.24xlarge", model=int4, max_concurrency=24),
            ],
            initial_instance_count=2,
            provision_timeout=Duration.minutes(20),
            container_startup_health_check_timeout=Duration.minutes(20),
            model_data_download_timeout=Duration.minutes(30),
            deployment=DeploymentPolicy.canary(
                canary_size=CapacitySize.percent(25),
                wait_interval=Duration.minutes(10),
                termination_wait=Duration.minutes(5),
                max_execution_timeout=Duration.hours(2),
                rollback_alarms=[self.rollback_alarm],
            ),
            tags={"workload": "llm"},
        )
