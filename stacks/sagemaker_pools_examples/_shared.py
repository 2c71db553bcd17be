"""What the example stacks share: the container image, the artifacts bucket name, an access-log bucket."""

from __future__ import annotations

from aws_cdk import Acknowledgment, RemovalPolicy, Validations
from aws_cdk import aws_s3 as s3
from constructs import Construct

__all__ = ["LMI_IMAGE", "ARTIFACTS_BUCKET", "access_log_bucket"]

#: A SageMaker Large Model Inference (LMI) container in us-east-1 (replace for your region).
LMI_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"

#: The bucket that holds the model builds, made outside these stacks (replace with yours).
ARTIFACTS_BUCKET = "my-llm-artifacts"


def access_log_bucket(scope: Construct, id: str) -> s3.Bucket:
    """A bucket for S3 server access logs: encrypted, TLS only, private, retained.

    It cannot log to itself, which is what its cdk-nag acknowledgment says.
    """
    bucket = s3.Bucket(
        scope,
        id,
        encryption=s3.BucketEncryption.S3_MANAGED,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        enforce_ssl=True,
        removal_policy=RemovalPolicy.RETAIN,
    )
    Validations.of(bucket).acknowledge(
        Acknowledgment(id="AwsSolutions::AwsSolutions-S1", reason="This is the access-log bucket itself.")
    )
    return bucket
