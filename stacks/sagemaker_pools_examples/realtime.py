"""``RealtimePooledLlmStack``: the launch post's three-pool LLM endpoint.

ml.g6e.48xlarge first, ml.g6.48xlarge when it has no capacity, ml.p4d.24xlarge last, each
running a build of the model made for it; blue/green canary deployments that roll back on the
5XX-rate and per-type p99-latency alarms; autoscaling on the weighted utilization of the mixed
fleet (target 0.7); a per-instance-type dashboard; alarms for fallback in use and a fleet at its
maximum, sent to an encrypted SNS topic; model artifacts encrypted with a customer-managed KMS key.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from constructs import Construct

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

from ._shared import LMI_IMAGE, access_log_bucket

__all__ = ["RealtimePooledLlmStack"]

#: A fixed endpoint name: the rollback alarms watch it (a generated name would be a dependency cycle).
ENDPOINT_NAME = "llm-pooled"
#: Autoscaling bounds of the variant (instances of any type).
MIN_INSTANCES = 2
MAX_INSTANCES = 8
#: The weighted utilization the fleet is held at (scaling) and above which, at its maximum, it is short (alarms).
SCALING_TARGET = 0.7


class RealtimePooledLlmStack(Stack):
    """A pooled real-time LLM endpoint with one model build per hardware target.

    Attributes:
        endpoint: the :class:`~sagemaker_pools.PooledEndpoint`.
        artifacts: the bucket that holds the three model builds (KMS-encrypted).
        rollback_alarm: the 5XX-rate alarm (one of ``alarms.rollback_alarms``).
        alarms: the :class:`~sagemaker_pools.PoolAlarms` (latency per type, 5XX rate, fallback, at max).
        scaling: the variant's :class:`~sagemaker_pools.VariantScaling` (weighted utilization, 0.7).
        dashboard: the :class:`~sagemaker_pools.PoolDashboard`.
        alerts: the SNS topic the alarms notify (KMS-encrypted, TLS only).

    Args:
        endpoint_name: the endpoint's fixed name (the rollback alarms watch it). Default: ``"llm-pooled"``.
        kwargs: as ``aws_cdk.Stack``.
    """

    def __init__(self, scope: Construct, id: str, *, endpoint_name: str = ENDPOINT_NAME, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)

        # S3 server access logs of the artifacts bucket (a log bucket cannot log to itself).
        access_logs = access_log_bucket(self, "ArtifactsAccessLogs")
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

        # Network isolation: the container makes no outbound call (and gets no AWS credentials);
        # SageMaker itself still copies the weights from S3 to /opt/ml/model with the execution
        # role. Each build under its prefix is complete (config, tokenizer, draft model), so the
        # container needs nothing from the network (docs/network-isolation.md).
        def build(name: str, prefix: str, env: dict[str, str]) -> PoolModel:
            model = PoolModel(
                self,
                name,
                image=image,
                model_data=ModelData.from_s3_prefix(self.artifacts, prefix),
                environment=env,
                network_isolation=True,
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

        # What one instance of each type sustains at the latency we accept (concurrent requests,
        # from a load test of each build on its hardware; see docs/scaling.md): the weighted
        # utilization divides each type's ConcurrentRequestsPerModel by it.
        pools = [
            InstancePool(instance_type="ml.g6e.48xlarge", max_concurrency=32),
            InstancePool(instance_type="ml.g6.48xlarge", model=speculative, max_concurrency=16),
            InstancePool(instance_type="ml.p4d.24xlarge", model=int4, max_concurrency=24),
        ]

        # Alarm notifications: an SNS topic encrypted with a key that CloudWatch may use.
        alerts_key = kms.Key(self, "AlertsKey", enable_key_rotation=True, removal_policy=RemovalPolicy.RETAIN)
        alerts_key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        self.alerts = sns.Topic(self, "Alerts", master_key=alerts_key, enforce_ssl=True)

        # Canary deploys: 25 % of the new fleet first, baked 10 minutes, then the rest (baked
        # again), the old fleet kept 5 minutes more. Rolled back on the alarms below.
        deployment = DeploymentPolicy.canary(
            canary_size=CapacitySize.percent(25),
            wait_interval=Duration.minutes(10),
            termination_wait=Duration.minutes(5),
            max_execution_timeout=Duration.hours(2),
        )

        # The alarms watch the endpoint by its fixed name, so they exist before the endpoint and
        # its DeploymentConfig can name the rollback ones. The at-max-capacity alarm fires when the
        # fleet sits at its maximum while the weighted utilization stays above the scaling target
        # below (a deployment's extra instances raise the count, not the load on each instance).
        self.alarms = PoolAlarms(
            self,
            "Alarms",
            endpoint=PooledEndpoint.from_endpoint_name(self, "LlmEndpointByName", endpoint_name),
            pools=pools,
            p99_latency=Duration.seconds(20),
            # The INT4 build on the oldest hardware is allowed to be slower.
            p99_latency_by_type={"ml.p4d.24xlarge": Duration.seconds(30)},
            error_rate_percent=1,
            fallback_for=Duration.hours(2),
            max_capacity=MAX_INSTANCES,
            saturation_threshold=SCALING_TARGET,
            topic=self.alerts,
        )
        self.rollback_alarm = self.alarms.error_rate_alarm

        self.endpoint = PooledEndpoint(
            self,
            "LlmEndpoint",
            endpoint_name=endpoint_name,
            model=tp8,
            pools=pools,
            initial_instance_count=MIN_INSTANCES,
            provision_timeout=Duration.minutes(20),
            container_startup_health_check_timeout=Duration.minutes(20),
            model_data_download_timeout=Duration.minutes(30),
            deployment=deployment.with_rollback_alarms(self.alarms.rollback_alarms),
            tags={"workload": "llm"},
        )

        # Scale the fleet on its weighted utilization: the busiest instance type's concurrency over
        # what that type sustains, held at 70 %. A new GPU instance serves about 10 minutes after
        # the scale-out, and the policy's alarm needs 3 more one-minute datapoints to see it: the
        # scale-out cooldown covers both, so one step of traffic gets one scale-out (a larger
        # step still gets a larger one at once). Scale-in is slow to avoid flapping.
        self.scaling = self.endpoint.auto_scale(min_capacity=MIN_INSTANCES, max_capacity=MAX_INSTANCES)
        self.scaling.scale_on_weighted_utilization(
            target=SCALING_TARGET,
            scale_out_cooldown=Duration.minutes(15),
            scale_in_cooldown=Duration.minutes(20),
        )

        self.dashboard = PoolDashboard(self, "Dashboard", endpoints=[self.endpoint])
