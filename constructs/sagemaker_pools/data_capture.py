"""Data capture on a pooled endpoint (``DataCaptureConfig``): a sampled share of the requests and
responses, written to S3 as JSON Lines.

SageMaker writes each captured request under ``DESTINATION/ENDPOINT/VARIANT/yyyy/mm/dd/hh/`` (the
developer guide, "Capture data from real-time endpoint"); ``sagemaker-pools gate --from-capture``
reads that layout to compare a shadow variant's answers with production's (docs/ops.md, "gate").

Which endpoints: the developer guide documents data capture for real-time endpoints (and batch
transform); this library refuses it on an asynchronous endpoint and on one that hosts inference
components (docs/aws-readings.md, "Data capture", quotes the sources and the reading).

Who writes: SageMaker, as the serving model's execution role (the reading of docs/aws-readings.md):
each model that may serve, the shadow's included, may put objects under the capture prefix and use
the KMS keys involved. ``PooledEndpoint.grant_read_capture`` lets a reader (``gate --from-capture``)
list and get them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from ._buckets import check_bucket_props, owned_bucket
from ._l1 import l1_properties
from ._roles import acknowledge_wildcard
from ._tokens import is_unresolved
from ._validate import check_int_range, check_s3_prefix
from .async_inference import _KMS_ACTIONS
from .errors import PoolConfigError

__all__ = ["DataCapture"]

# s3://<bucket, at most 63>/<prefix>: DestinationS3Uri is at most 512 characters.
_MAX_PREFIX = 512 - len("s3://") - 63 - 1
#: ``CaptureContentTypeHeader`` entries (botocore ``JsonContentType`` / ``CsvContentType``).
_CONTENT_TYPE = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9])*/[a-zA-Z0-9](-*[a-zA-Z0-9.])*$")
_MAX_CONTENT_TYPES = 10
_MAX_CONTENT_TYPE_LENGTH = 256


@dataclass(frozen=True, kw_only=True)
class DataCapture:
    """The data capture option of a :class:`~sagemaker_pools.PooledEndpoint`.

    Args:
        bucket: where captured data goes. Default: a new bucket owned by the endpoint (construct
            id ``CaptureBucket``): encrypted (SSE-S3, or SSE-KMS with ``kms_key``), SSL enforced,
            public access blocked, versioned, retained when the stack is deleted. An existing
            bucket encrypted with SSE-KMS: import it with its key
            (``s3.Bucket.from_bucket_attributes(..., encryption_key=key)``) so that the model
            roles get ``kms:GenerateDataKey`` on it.
        prefix: the key prefix; SageMaker writes under ``PREFIX/ENDPOINT/VARIANT/``.
            Default: ``"data-capture/"``.
        sampling_percentage: the share of requests captured, 0-100 (``InitialSamplingPercentage``).
            Default: 100.
        capture_input: capture the request bodies. Default: ``True``.
        capture_output: capture the response bodies. Default: ``True``.
        json_content_types: content types captured as JSON text (``encoding: JSON``); at most 10.
            Default: ``["application/json"]``. Any other content type is captured base64-encoded.
        csv_content_types: content types captured as CSV text; at most 10. Default: none.
        kms_key: encrypts the captured objects (``KmsKeyId``) and a created bucket.
            Default: none (the bucket's own encryption).
        enable_capture: ``False`` keeps the configuration but captures nothing (``EnableCapture``):
            the way to stop capturing on a live endpoint (see ``docs/ops.md``, "Data capture and
            shadow variants"). Default: ``True``.
        access_logs_bucket: S3 server access logs for a created bucket (prefix ``data-capture/``).
            Default: none, and the created bucket carries a cdk-nag acknowledgment of
            AwsSolutions-S1 that says so.
        removal_policy: what happens to a created bucket when it leaves the stack.
            Default: ``RETAIN`` (captured requests are user data).
    """

    bucket: s3.IBucket | None = None
    prefix: str = "data-capture/"
    sampling_percentage: int = 100
    capture_input: bool = True
    capture_output: bool = True
    json_content_types: Sequence[str] | None = ("application/json",)
    csv_content_types: Sequence[str] | None = None
    kms_key: kms.IKey | None = None
    enable_capture: bool = True
    access_logs_bucket: s3.IBucket | None = None
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN

    def __post_init__(self) -> None:
        name = "DataCapture"
        check_s3_prefix(self.prefix, f"{name}.prefix", _MAX_PREFIX, "data-capture/")
        check_int_range(self.sampling_percentage, f"{name}.sampling_percentage", 0, 100, "percent")
        for key in ("capture_input", "capture_output", "enable_capture"):
            if not isinstance(getattr(self, key), bool):
                raise PoolConfigError(f"{name}.{key}", getattr(self, key), "True or False")
        if not self.capture_input and not self.capture_output:
            raise PoolConfigError(f"{name}.capture_output", False, "True when capture_input is False: capture the requests, the responses or both")
        seen: dict[str, str] = {}
        for key in ("json_content_types", "csv_content_types"):
            for content_type in _content_types(getattr(self, key), f"{name}.{key}"):
                if content_type in seen:
                    raise PoolConfigError(f"{name}.{key}", content_type, f"a content type not already in {seen[content_type]}: one encoding per type")
                seen[content_type] = key
        check_bucket_props(
            name, bucket=self.bucket, kms_key=self.kms_key, access_logs_bucket=self.access_logs_bucket, removal_policy=self.removal_policy
        )

    # -- used by PooledEndpoint ------------------------------------------------------------

    def _bucket(self, scope: Construct) -> s3.IBucket:
        """The given bucket, or a new one under ``scope`` (construct id ``CaptureBucket``)."""
        return owned_bucket(
            scope,
            "CaptureBucket",
            given=self.bucket,
            kms_key=self.kms_key,
            access_logs_bucket=self.access_logs_bucket,
            access_logs_prefix="data-capture/",
            removal_policy=self.removal_policy,
            no_logs_reason="No S3 server access logs because DataCapture(access_logs_bucket=...) was not given; "
            "pass a log bucket to record every read of the captured requests and responses.",
        )

    @staticmethod
    def destination(bucket: s3.IBucket, prefix: str) -> str:
        """``s3://<bucket>/<prefix without its final '/'>``: what ``gate --from-capture`` takes."""
        # A token prefix stays as given (its final '/' is harmless: SageMaker joins with '/').
        return f"s3://{bucket.bucket_name}/{prefix if is_unresolved(prefix) else prefix.rstrip('/')}"

    def _render(self, bucket: s3.IBucket) -> dict[str, object]:
        cfn = sagemaker.CfnEndpointConfig
        modes = [m for m, on in (("Input", self.capture_input), ("Output", self.capture_output)) if on]
        header = None
        if self.json_content_types or self.csv_content_types:
            header = l1_properties(
                cfn.CaptureContentTypeHeaderProperty,
                json_content_types=list(self.json_content_types) if self.json_content_types else None,
                csv_content_types=list(self.csv_content_types) if self.csv_content_types else None,
            )
        return l1_properties(
            cfn.DataCaptureConfigProperty,
            enable_capture=self.enable_capture,
            initial_sampling_percentage=self.sampling_percentage,
            destination_s3_uri=self.destination(bucket, self.prefix),
            kms_key_id=self.kms_key.key_arn if self.kms_key else None,
            capture_options=[l1_properties(cfn.CaptureOptionProperty, capture_mode=m) for m in modes],
            capture_content_type_header=header,
        )

    def _keys(self) -> list[kms.IKey]:
        """The KMS keys involved: the capture key and a given bucket's key."""
        keys: list[kms.IKey] = []
        for key in (self.kms_key, self.bucket.encryption_key if self.bucket is not None else None):
            if key is not None and not any(key is k for k in keys):
                keys.append(key)
        return keys

    def _grant_writer(self, role: iam.IRole, bucket: s3.IBucket) -> None:
        """What SageMaker needs, acting as a serving model's execution role, to write captured data."""
        objects = bucket.arn_for_objects(self.prefix + "*")
        iam.Grant.add_to_principal(grantee=role, actions=["s3:PutObject"], resource_arns=[objects])
        for key in self._keys():
            key.grant(role, *_KMS_ACTIONS)
        acknowledge_wildcard(
            role,
            objects,
            "SageMaker names each data capture file after the endpoint, variant and hour: the model's execution "
            "role writes only under the capture prefix.",
        )

    def _grant_reader(self, grantee: iam.IGrantable, bucket: s3.IBucket) -> iam.Grant:
        """List and read the captured files (``gate --from-capture``), and decrypt them."""
        objects = bucket.arn_for_objects(self.prefix + "*")
        grant = iam.Grant.add_to_principal(grantee=grantee, actions=["s3:GetObject"], resource_arns=[objects])
        grant = grant.combine(
            iam.Grant.add_to_principal(
                grantee=grantee,
                actions=["s3:ListBucket"],
                resource_arns=[bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [self.prefix + "*"]}},
            )
        )
        for key in self._keys():
            grant = grant.combine(key.grant_decrypt(grantee))
        acknowledge_wildcard(grantee, objects, "Data capture files are named by SageMaker: the reader gets only what lies under the capture prefix.")
        return grant


def _content_types(value: object, field: str) -> list[str]:
    """``value`` as a list of content types, checked against CaptureContentTypeHeader's rules (tokens pass)."""
    if value is None or is_unresolved(value):
        return []
    if isinstance(value, str) or not isinstance(value, Sequence) or not 1 <= len(value) <= _MAX_CONTENT_TYPES:
        raise PoolConfigError(field, value, f"a list of 1 to {_MAX_CONTENT_TYPES} content types such as 'application/json' (or None)")
    for content_type in value:
        if is_unresolved(content_type):
            continue
        if not isinstance(content_type, str) or len(content_type) > _MAX_CONTENT_TYPE_LENGTH or not _CONTENT_TYPE.match(content_type):
            raise PoolConfigError(
                field, content_type, f"a content type TYPE/SUBTYPE of letters, digits, '-' (and '.' in the subtype), at most {_MAX_CONTENT_TYPE_LENGTH} characters"
            )
    return [c for c in value if not is_unresolved(c)]
