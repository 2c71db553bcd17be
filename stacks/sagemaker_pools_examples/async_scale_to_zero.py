"""``AsyncScaleToZeroStack``: an asynchronous pooled endpoint that scales to zero instances.

Batch-style LLM requests go through S3: callers upload a request, call InvokeEndpointAsync and
are told by SNS when the response is in S3. The endpoint runs on ml.g6e.2xlarge, falls back to
ml.g6.2xlarge and then ml.g5.2xlarge, and has no instance at all while the queue is empty.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from constructs import Construct

from sagemaker_pools import AsyncInference, ContainerImage, InstancePool, ModelData, PooledEndpoint, PoolModel

from ._shared import ARTIFACTS_BUCKET, LMI_IMAGE, access_log_bucket

__all__ = ["AsyncScaleToZeroStack"]

MODEL_PREFIX = "llm/8b-awq/"


class AsyncScaleToZeroStack(Stack):
    """A pooled async endpoint, its bucket and notification topics, and a client role.

    Attributes:
        endpoint: the :class:`~sagemaker_pools.PooledEndpoint` (``async_bucket`` holds the requests and responses).
        key: the KMS key of the responses and the topics.
        success_topic, error_topic: SNS notifications of finished requests.
        scaling: the backlog scaling of the variant (target tracking and scale from zero).
        client: a role that may submit requests and read their responses (``grant_invoke_async``).

    Args:
        endpoint_name: a fixed endpoint name. Default: generated.
        kwargs: as ``aws_cdk.Stack``.
    """

    def __init__(self, scope: Construct, id: str, *, endpoint_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)

        access_logs = access_log_bucket(self, "AsyncAccessLogs")
        # One customer-managed key for the responses and the topics: SageMaker, acting as the
        # model's execution role, encrypts both with it.
        self.key = kms.Key(self, "AsyncKey", enable_key_rotation=True, removal_policy=RemovalPolicy.RETAIN)
        self.success_topic = sns.Topic(self, "Succeeded", master_key=self.key, enforce_ssl=True)
        self.error_topic = sns.Topic(self, "Failed", master_key=self.key, enforce_ssl=True)

        artifacts = s3.Bucket.from_bucket_name(self, "Artifacts", ARTIFACTS_BUCKET)
        # Network isolation: SageMaker, not the container, copies the weights from S3 and moves
        # each request and response between S3 and the container, so the container needs no
        # network at all (docs/network-isolation.md).
        model = PoolModel(
            self,
            "Llm8bAwq",
            image=ContainerImage.from_image_uri(LMI_IMAGE),
            model_data=ModelData.from_s3_prefix(artifacts, MODEL_PREFIX),
            environment={"OPTION_QUANTIZE": "awq", "OPTION_MAX_ROLLING_BATCH_SIZE": "16"},
            network_isolation=True,
        )

        self.endpoint = PooledEndpoint(
            self,
            "BatchEndpoint",
            endpoint_name=endpoint_name,
            model=model,
            pools=[
                InstancePool(instance_type="ml.g6e.2xlarge"),
                InstancePool(instance_type="ml.g6.2xlarge"),
                InstancePool(instance_type="ml.g5.2xlarge"),
            ],
            async_inference=AsyncInference(
                kms_key=self.key,
                success_topic=self.success_topic,
                error_topic=self.error_topic,
                max_concurrent_invocations_per_instance=4,
                access_logs_bucket=access_logs,
            ),
        )

        # Zero instances while the queue is empty; one per 5 queued requests up to 4 otherwise.
        # HasBacklogWithoutCapacity wakes the endpoint from zero.
        self.scaling = self.endpoint.auto_scale_on_backlog(
            min_capacity=0, max_capacity=4, target_backlog_per_instance=5, scale_in_cooldown=Duration.minutes(10)
        )

        # Whoever submits work: the account's principals that assume this role.
        self.client = iam.Role(self, "AsyncClient", assumed_by=iam.AccountRootPrincipal())
        self.endpoint.grant_invoke_async(self.client)
