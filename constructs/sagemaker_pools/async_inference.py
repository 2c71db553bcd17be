"""Asynchronous inference on a pooled endpoint (``AsyncInferenceConfig``).

A caller uploads a request to S3 and calls ``InvokeEndpointAsync`` with its location; SageMaker
queues it, a model container processes it, and SageMaker writes the response (or the error) to
S3 and optionally notifies SNS topics. The queue is what lets an async endpoint scale to zero
instances: requests wait there while the endpoint is at zero (``HasBacklogWithoutCapacity``)
and an instance is provisioned from the highest-priority pool with capacity.

Everything lives in one bucket, under three prefixes: the callers' inputs, the responses and
the failures. SageMaker reads the inputs and writes the results with the variant's model
execution role ("Asynchronous Inference needs access to your Amazon S3 bucket URI ... and SNS
topics", https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-create-endpoint-prerequisites.html),
so each model role gets exactly: read under the input prefix, write under the output and failure
prefixes, publish to the given topics, and use of the KMS key.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_sns as sns
from constructs import Construct

from ._buckets import check_bucket_props, owned_bucket
from ._roles import acknowledge_wildcard
from ._tokens import is_unresolved
from ._validate import check_int_range, check_s3_prefix
from .errors import PoolConfigError

__all__ = ["AsyncInference"]

#: What S3 (SSE-KMS PutObject / GetObject) and SNS (publishing to an encrypted topic) need of a
#: KMS key (S3 User Guide, "Permissions for SSE-KMS"; SNS Developer Guide, "Key management").
_KMS_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")

# s3://<bucket, at most 63>/<prefix>: S3OutputPath / S3FailurePath are at most 512 characters.
_MAX_PREFIX = 512 - len("s3://") - 63 - 1


@dataclass(frozen=True, kw_only=True)
class AsyncInference:
    """The async option of a :class:`~sagemaker_pools.PooledEndpoint`.

    Args:
        bucket: the bucket for inputs, responses and failures. Default: a new bucket owned by
            the endpoint: encrypted (SSE-S3, or SSE-KMS with ``kms_key``), SSL enforced, public
            access blocked, versioned, retained when the stack is deleted. An existing bucket
            encrypted with SSE-KMS: import it with its key
            (``s3.Bucket.from_bucket_attributes(..., encryption_key=key)``) so that the model roles
            and callers get ``kms:Decrypt`` and ``kms:GenerateDataKey`` on it.
        input_prefix: where callers put requests (``grant_invoke_async`` lets them write here).
            Default: ``"async-inference/input/"``.
        output_prefix: where SageMaker writes responses (``S3OutputPath``).
            Default: ``"async-inference/output/"``.
        failure_prefix: where SageMaker writes failed responses (``S3FailurePath``).
            Default: ``"async-inference/failure/"``.
        success_topic: SNS topic notified when a request succeeds. Default: none.
        error_topic: SNS topic notified when a request fails. Default: none.
        include_response_in_notifications: put the response (if at most 128 KB) in the
            notifications of the given topics (``IncludeInferenceResponseIn``). Default: ``False``.
        max_concurrent_invocations_per_instance: requests SageMaker sends one instance's
            container at once, 1-1000. Default: SageMaker's.
        kms_key: encrypts the responses (``OutputConfig.KmsKeyId``) and a created bucket.
            Default: none (the bucket's own encryption).
        access_logs_bucket: S3 server access logs for a created bucket (prefix ``async-inference/``).
            Default: none, and the created bucket carries a cdk-nag acknowledgment of
            AwsSolutions-S1 that says so.
        removal_policy: what happens to a created bucket when it leaves the stack.
            Default: ``RETAIN`` (responses are user data).
    """

    bucket: s3.IBucket | None = None
    input_prefix: str = "async-inference/input/"
    output_prefix: str = "async-inference/output/"
    failure_prefix: str = "async-inference/failure/"
    success_topic: sns.ITopic | None = None
    error_topic: sns.ITopic | None = None
    include_response_in_notifications: bool = False
    max_concurrent_invocations_per_instance: int | None = None
    kms_key: kms.IKey | None = None
    access_logs_bucket: s3.IBucket | None = None
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN

    def __post_init__(self) -> None:
        name = "AsyncInference"
        prefixes = {"input_prefix": self.input_prefix, "output_prefix": self.output_prefix, "failure_prefix": self.failure_prefix}
        for key, prefix in prefixes.items():
            check_s3_prefix(prefix, f"{name}.{key}", _MAX_PREFIX, "async-inference/output/")
        resolved = [(k, p) for k, p in prefixes.items() if not is_unresolved(p)]
        for key, prefix in resolved:
            for other_key, other in resolved:
                # Disjoint prefixes keep the grants apart: a caller that may write inputs must
                # not be able to overwrite responses, and the model must not read its own output.
                if key != other_key and other.startswith(prefix):
                    raise PoolConfigError(
                        f"{name}.{other_key}", other, f"a prefix outside {key} ({prefix!r}): the three prefixes must not nest"
                    )
        for key, topic in (("success_topic", self.success_topic), ("error_topic", self.error_topic)):
            if topic is not None and not hasattr(topic, "topic_arn"):
                raise PoolConfigError(f"{name}.{key}", topic, "an aws_sns.ITopic (Topic, Topic.from_topic_arn ...)")
        if self.include_response_in_notifications and self.success_topic is None and self.error_topic is None:
            raise PoolConfigError(
                f"{name}.include_response_in_notifications", True, "only with a success_topic or an error_topic"
            )
        check_int_range(
            self.max_concurrent_invocations_per_instance,
            f"{name}.max_concurrent_invocations_per_instance",
            1,
            1000,
            "requests",
        )
        check_bucket_props(
            name, bucket=self.bucket, kms_key=self.kms_key, access_logs_bucket=self.access_logs_bucket, removal_policy=self.removal_policy
        )

    # -- used by PooledEndpoint ------------------------------------------------------------

    def _bucket(self, scope: Construct) -> s3.IBucket:
        """The given bucket, or a new one under ``scope`` (construct id ``AsyncOutput``)."""
        return owned_bucket(
            scope,
            "AsyncOutput",
            given=self.bucket,
            kms_key=self.kms_key,
            access_logs_bucket=self.access_logs_bucket,
            access_logs_prefix="async-inference/",
            removal_policy=self.removal_policy,
            no_logs_reason="No S3 server access logs because AsyncInference(access_logs_bucket=...) was not given; "
            "pass a log bucket to record every request to the async inputs and responses.",
        )

    def _render(self, bucket: s3.IBucket) -> sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty:
        cfn = sagemaker.CfnEndpointConfig
        notification = None
        if self.success_topic is not None or self.error_topic is not None:
            include = None
            if self.include_response_in_notifications:
                include = [
                    kind
                    for kind, topic in (
                        ("SUCCESS_NOTIFICATION_TOPIC", self.success_topic),
                        ("ERROR_NOTIFICATION_TOPIC", self.error_topic),
                    )
                    if topic is not None
                ]
            notification = cfn.AsyncInferenceNotificationConfigProperty(
                success_topic=self.success_topic.topic_arn if self.success_topic else None,
                error_topic=self.error_topic.topic_arn if self.error_topic else None,
                include_inference_response_in=include,
            )
        client = None
        if self.max_concurrent_invocations_per_instance is not None:
            client = cfn.AsyncInferenceClientConfigProperty(
                max_concurrent_invocations_per_instance=self.max_concurrent_invocations_per_instance
            )
        return cfn.AsyncInferenceConfigProperty(
            output_config=cfn.AsyncInferenceOutputConfigProperty(
                s3_output_path=self.s3_uri(bucket, self.output_prefix),
                s3_failure_path=self.s3_uri(bucket, self.failure_prefix),
                kms_key_id=self.kms_key.key_arn if self.kms_key else None,
                notification_config=notification,
            ),
            client_config=client,
        )

    @staticmethod
    def s3_uri(bucket: s3.IBucket, prefix: str) -> str:
        """``s3://<bucket>/<prefix>``."""
        return f"s3://{bucket.bucket_name}/{prefix}"

    def _keys(self, *, with_topic_keys: bool = False) -> list[kms.IKey]:
        """The KMS keys involved: the output key, a given bucket's key and (for SageMaker) the topics' keys."""
        candidates = [self.kms_key, self.bucket.encryption_key if self.bucket is not None else None]
        if with_topic_keys:
            candidates += [getattr(t, "master_key", None) for t in (self.success_topic, self.error_topic) if t is not None]
        keys: list[kms.IKey] = []
        for key in candidates:
            if key is not None and not any(key is k for k in keys):
                keys.append(key)
        return keys

    def _grant_execution_role(self, role: iam.IRole, bucket: s3.IBucket) -> None:
        """What SageMaker needs, acting as a model's execution role, to serve async requests."""
        iam.Grant.add_to_principal(
            grantee=role, actions=["s3:GetObject"], resource_arns=[bucket.arn_for_objects(self.input_prefix + "*")]
        )
        iam.Grant.add_to_principal(
            grantee=role,
            actions=["s3:PutObject"],
            resource_arns=[bucket.arn_for_objects(self.output_prefix + "*"), bucket.arn_for_objects(self.failure_prefix + "*")],
        )
        topics = [t for t in (self.success_topic, self.error_topic) if t is not None]
        if topics:
            iam.Grant.add_to_principal(grantee=role, actions=["sns:Publish"], resource_arns=[t.topic_arn for t in topics])
        for key in self._keys(with_topic_keys=True):
            # Write SSE-KMS objects and publish to KMS-encrypted topics; read SSE-KMS inputs.
            key.grant(role, *_KMS_ACTIONS)
        reason = (
            "SageMaker names each async response after a generated id: the model's execution role reads only "
            "under the input prefix and writes only under the output and failure prefixes of the async bucket."
        )
        for prefix in (self.input_prefix, self.output_prefix, self.failure_prefix):
            acknowledge_wildcard(role, bucket.arn_for_objects(prefix + "*"), reason)

    def _grant_caller(self, grantee: iam.IGrantable, bucket: s3.IBucket) -> iam.Grant:
        """What a caller of InvokeEndpointAsync needs in S3: write inputs, read responses and failures."""
        grant = iam.Grant.add_to_principal(
            grantee=grantee, actions=["s3:PutObject"], resource_arns=[bucket.arn_for_objects(self.input_prefix + "*")]
        )
        grant = grant.combine(
            iam.Grant.add_to_principal(
                grantee=grantee,
                actions=["s3:GetObject"],
                resource_arns=[
                    bucket.arn_for_objects(self.output_prefix + "*"),
                    bucket.arn_for_objects(self.failure_prefix + "*"),
                ],
            )
        )
        for key in self._keys():
            # PutObject with SSE-KMS needs GenerateDataKey; GetObject needs Decrypt.
            grant = grant.combine(key.grant(grantee, *_KMS_ACTIONS))
        reason = (
            "Callers name their request objects and SageMaker names responses after generated ids: the caller "
            "writes only under the input prefix and reads only under the output and failure prefixes."
        )
        for prefix in (self.input_prefix, self.output_prefix, self.failure_prefix):
            acknowledge_wildcard(grantee, bucket.arn_for_objects(prefix + "*"), reason)
        return grant

