"""The private bucket a feature of the endpoint owns when the user gives none (async I/O, data capture).

Encrypted (SSE-S3, or SSE-KMS with the feature's key and an S3 Bucket Key), SSL enforced, public
access blocked, versioned, with the feature's removal policy (its objects are user data). Without
an access-log bucket, cdk-nag's AwsSolutions-S1 is acknowledged with the way to turn logging on.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, RemovalPolicy, Validations
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from .errors import PoolConfigError

__all__ = ["check_bucket_props", "owned_bucket"]


def check_bucket_props(name: str, *, bucket: object, kms_key: object, access_logs_bucket: object, removal_policy: object) -> None:
    """The rules of a feature's ``bucket`` / ``kms_key`` / ``access_logs_bucket`` / ``removal_policy`` props (``name``: the feature)."""
    if kms_key is not None and not hasattr(kms_key, "key_arn"):
        raise PoolConfigError(f"{name}.kms_key", kms_key, "an aws_kms.IKey")
    if bucket is not None and not hasattr(bucket, "bucket_name"):
        raise PoolConfigError(f"{name}.bucket", bucket, "an aws_s3.IBucket")
    if bucket is not None and access_logs_bucket is not None:
        raise PoolConfigError(f"{name}.access_logs_bucket", access_logs_bucket, "only without bucket (it configures a created bucket)")
    if access_logs_bucket is not None and not hasattr(access_logs_bucket, "bucket_name"):
        raise PoolConfigError(f"{name}.access_logs_bucket", access_logs_bucket, "an aws_s3.IBucket")
    if not isinstance(removal_policy, RemovalPolicy):
        raise PoolConfigError(f"{name}.removal_policy", removal_policy, "an aws_cdk.RemovalPolicy")


def owned_bucket(
    scope: Construct,
    id: str,
    *,
    given: s3.IBucket | None,
    kms_key: kms.IKey | None,
    access_logs_bucket: s3.IBucket | None,
    access_logs_prefix: str,
    removal_policy: RemovalPolicy,
    no_logs_reason: str,
) -> s3.IBucket:
    """``given``, or a new private bucket under ``scope`` (see the module docs); ``no_logs_reason``
    says how to log when no log bucket is given."""
    if given is not None:
        return given
    bucket = s3.Bucket(
        scope,
        id,
        encryption=s3.BucketEncryption.KMS if kms_key else s3.BucketEncryption.S3_MANAGED,
        encryption_key=kms_key,
        bucket_key_enabled=True if kms_key else None,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        enforce_ssl=True,
        versioned=True,
        server_access_logs_bucket=access_logs_bucket,
        server_access_logs_prefix=access_logs_prefix if access_logs_bucket else None,
        removal_policy=removal_policy,
    )
    if access_logs_bucket is None:
        Validations.of(bucket).acknowledge(Acknowledgment(id="AwsSolutions::AwsSolutions-S1", reason=no_logs_reason))
    return bucket
