"""``PoolModel``: a SageMaker model meant for one hardware target of a pooled endpoint.

The point of instance pools is that each instance type can run a build of the model made for
it: tensor parallelism across the 8 GPUs of the primary type, speculative decoding on the
mid-tier fallback, INT4 quantization on the smallest. Each build is one ``PoolModel``; an
``InstancePool(model=...)`` renders it as the pool's ``ModelNameOverride``.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from aws_cdk import Aws
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, IConstruct

from ._l1 import l1_properties
from ._roles import ExecutionRole, StatementJson, acknowledge_wildcard, add_statements, as_role, new_execution_role, statement, wait_for
from ._tree import remember_stack, stack_of, stack_partition
from ._tokens import is_unresolved
from ._validate import check_environment, check_name
from .errors import PoolConfigError

if TYPE_CHECKING:
    # aws_ec2 is the largest aws_cdk module (about 0.17 s to import): loaded only for a model in a VPC.
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_kms as kms

__all__ = ["ContainerImage", "ModelData", "PoolModel"]


# <account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repository>[:tag|@digest]
_ECR_URI = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?:\.cn)?/"
    r"(?P<repository>[a-z0-9._/-]+?)(?::[\w.-]+|@sha256:[0-9a-f]{64})?$"
)


def partition_of_region(region: str) -> str:
    """The AWS partition of ``region`` (``aws``, ``aws-cn``, ``aws-us-gov``, ``aws-iso``, ...).

    Read from botocore's partition table (each partition's region list and region pattern), the
    one SDKs resolve endpoints with. An unresolved token, or a region no partition claims, gives
    the deploying stack's partition (``AWS::Partition``): an image SageMaker can pull is in it.
    """
    if not is_unresolved(region):
        for partition in _partitions():
            if region in partition["regions"] or re.match(partition["regionRegex"], region):
                return str(partition["id"])
    return Aws.PARTITION


@lru_cache(maxsize=1)
def _partitions() -> tuple[dict[str, Any], ...]:
    """botocore's partition table (``botocore/data/partitions.json``).

    Read as a file: importing ``botocore.loaders`` to load it costs about 150 ms, most of a small
    app's Python time, for one JSON document. botocore may ship it gzipped; its own loader is
    the fallback for any other layout.
    """
    import gzip
    import importlib.util
    import json
    from pathlib import Path

    spec = importlib.util.find_spec("botocore")
    data = Path(spec.origin).parent / "data" if spec is not None and spec.origin else None
    if data is not None and (data / "partitions.json").is_file():
        document = json.loads((data / "partitions.json").read_text(encoding="utf-8"))
    elif data is not None and (data / "partitions.json.gz").is_file():
        document = json.loads(gzip.decompress((data / "partitions.json.gz").read_bytes()))
    else:  # pragma: no cover - botocore laid out otherwise
        from botocore.loaders import create_loader

        document = create_loader().load_data("partitions")
    return tuple(document["partitions"])


@dataclass(frozen=True)
class ContainerImage:
    """The inference container image, always in Amazon ECR (what SageMaker pulls from).

    Build one with :meth:`from_ecr_repository` or :meth:`from_image_uri`.
    """

    image_uri: str
    repository_arn: str

    @staticmethod
    def from_ecr_repository(repository: ecr.IRepository, tag: str = "latest") -> "ContainerImage":
        """An image in a repository of yours, by tag (default ``latest``)."""
        return ContainerImage(repository.repository_uri_for_tag(tag), repository.repository_arn)

    @staticmethod
    def from_image_uri(image_uri: str) -> "ContainerImage":
        """An ECR image by URI, e.g. a SageMaker Deep Learning Container.

        The URI must name the registry literally (``<account>.dkr.ecr.<region>.amazonaws.com/<repo>[:tag]``)
        so that the execution role can be scoped to that one repository.
        """
        match = _ECR_URI.match(image_uri) if isinstance(image_uri, str) and not is_unresolved(image_uri) else None
        if match is None:
            raise PoolConfigError(
                "ContainerImage.image_uri",
                image_uri,
                "a literal ECR image URI '<account>.dkr.ecr.<region>.amazonaws.com/<repository>[:tag|@digest]' "
                "(for a repository defined in CDK use ContainerImage.from_ecr_repository)",
            )
        arn = f"arn:{partition_of_region(match['region'])}:ecr:{match['region']}:{match['account']}:repository/{match['repository']}"
        return ContainerImage(image_uri, arn)


@dataclass(frozen=True)
class ModelData:
    """Where the model artifacts are in S3.

    :meth:`from_s3_object` for a ``model.tar.gz`` (SageMaker downloads and extracts it),
    :meth:`from_s3_prefix` for uncompressed artifacts under a prefix (``ModelDataSource``;
    faster for large LLM weights: no extraction step).

    ``bucket`` is an ``s3.IBucket`` or the name of an existing bucket. A name renders the same
    template as ``s3.Bucket.from_bucket_name(scope, id, name)`` and costs no import construct (nor
    loading aws-s3 in Node: about 0.1 s of a synth).

    The execution role gets ``kms:Decrypt`` on the bucket's ``encryption_key``. A bucket named, or
    imported, knows its key only if you give it: ``s3.Bucket.from_bucket_attributes(scope, id,
    bucket_name=..., encryption_key=kms.Key.from_key_arn(...))`` (a name or ``from_bucket_name``
    has none).
    """

    bucket: s3.IBucket | str
    key: str
    is_prefix: bool

    @staticmethod
    def from_s3_object(bucket: s3.IBucket | str, key: str) -> "ModelData":
        """A compressed ``.tar.gz`` archive (rendered as ``ModelDataUrl``) in ``bucket`` (an ``IBucket`` or a name)."""
        _check_bucket(bucket)
        if not is_unresolved(key) and (not isinstance(key, str) or not key.endswith(".tar.gz")):
            raise PoolConfigError("ModelData.key", key, "an S3 key ending in .tar.gz (for uncompressed files use from_s3_prefix)")
        return ModelData(bucket, key, is_prefix=False)

    @staticmethod
    def from_s3_prefix(bucket: s3.IBucket | str, prefix: str) -> "ModelData":
        """Uncompressed artifacts under ``prefix`` (rendered as ``ModelDataSource``, ``S3Prefix``) in
        ``bucket`` (an ``IBucket`` or a name)."""
        _check_bucket(bucket)
        if not is_unresolved(prefix) and (not isinstance(prefix, str) or not prefix.endswith("/")):
            raise PoolConfigError("ModelData.prefix", prefix, "an S3 key prefix ending in '/' (e.g. 'llama-70b/int4/')")
        return ModelData(bucket, prefix, is_prefix=True)

    @property
    def s3_uri(self) -> str:
        """``s3://bucket/key``."""
        name = self.bucket if isinstance(self.bucket, str) else _bucket_facts(self.bucket, None).name
        return f"s3://{name}/{self.key}"

    def grant_read(self, grantee: iam.IGrantable) -> None:
        """Read exactly this object, or the objects under this prefix, and nothing else."""
        grants, wildcards = self._read_access(grantee)
        for grant in grants:
            iam.Grant.add_to_principal(grantee=grantee, **grant)
        for resource, reason in wildcards:
            acknowledge_wildcard(grantee, resource, reason)
        key = _bucket_facts(self.bucket, grantee).encryption_key
        if key is not None:
            key.grant_decrypt(grantee)

    def _read_access(self, scope: object) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
        """What :meth:`grant_read` grants (``Grant.add_to_principal`` keyword arguments, in order) and
        the wildcard resources it acknowledges (``(ARN, reason)``), without the KMS key."""
        bucket = _bucket_facts(self.bucket, scope)
        resource = bucket.arn_for_objects(self.key + ("*" if self.is_prefix else ""))
        grants: list[dict[str, Any]] = [{"actions": ["s3:GetObject"], "resource_arns": [resource]}]
        wildcards: list[tuple[str, str]] = []
        if self.is_prefix:
            wildcards.append(
                (resource, "Reads the objects under this model build's own prefix (ModelDataSource S3Prefix), nothing else.")
            )
            grants.append(
                {
                    "actions": ["s3:ListBucket"],
                    "resource_arns": [bucket.arn],
                    "conditions": {"StringLike": {"s3:prefix": [self.key + "*"]}},
                }
            )
        return grants, wildcards

    def _container_fields(self) -> dict[str, object]:
        if not self.is_prefix:
            return {"model_data_url": self.s3_uri}
        return {
            "model_data_source": l1_properties(
                sagemaker.CfnModel.ModelDataSourceProperty,
                s3_data_source=l1_properties(
                    sagemaker.CfnModel.S3DataSourceProperty, s3_uri=self.s3_uri, s3_data_type="S3Prefix", compression_type="None"
                ),
            )
        }


class _ImportedModel(Construct):
    """A model made outside this app (``PoolModel.from_model_name``)."""

    def __init__(self, scope: Construct, id: str, model_name: str) -> None:
        super().__init__(scope, id)
        self._model_name = model_name

    @property
    def model_name(self) -> str:
        """The SageMaker model name."""
        return self._model_name


class PoolModel(Construct):
    """A SageMaker model (``AWS::SageMaker::Model``) with a least-privilege execution role.

    Args:
        scope: parent construct.
        id: construct id (the model's logical id derives from it: keep it stable).
        image: the inference container, see :class:`ContainerImage`.
        model_data: the artifacts, see :class:`ModelData`. Default: none (the image carries
            the model, or downloads it itself).
        environment: container environment variables. Default: none.
        role: an execution role to use as is. Default: a new role that can read only
            ``model_data``, pull only ``image``'s repository and write its own logs and metrics.
        vpc: run the model containers in this VPC. Default: no VPC.
        vpc_subnets: the subnets within ``vpc``. Default: the VPC's private subnets.
        security_groups: security groups for the containers. Default: one new group with
            outbound access only (only with ``vpc``).
        network_isolation: block all outbound network calls from the container. Default: ``False``.
        model_name: a fixed model name. Default: generated by CloudFormation (recommended:
            a fixed name prevents replacing the model on change).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        image: ContainerImage,
        model_data: ModelData | None = None,
        environment: Mapping[str, str] | None = None,
        role: iam.IRole | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        network_isolation: bool = False,
        model_name: str | None = None,
    ) -> None:
        super().__init__(scope, id)
        remember_stack(self, scope, id)
        if not isinstance(image, ContainerImage):
            raise PoolConfigError("PoolModel.image", image, "a ContainerImage (from_ecr_repository or from_image_uri)")
        container: dict[str, object] = {"image": image.image_uri}
        if model_data is not None:
            container.update(model_data._container_fields())
        grants = _image_pull_grants(image.repository_arn)
        wildcards: list[tuple[str, str]] = []
        if role is None and model_data is not None:
            read_grants, wildcards = model_data._read_access(self)
            grants += read_grants
        self._init(
            container=container,
            environment=environment,
            role=role,
            vpc=vpc,
            vpc_subnets=vpc_subnets,
            security_groups=security_groups,
            network_isolation=network_isolation,
            model_name=model_name,
            grants=grants,
            wildcards=wildcards,
        )
        key = _bucket_facts(model_data.bucket, self).encryption_key if self._created_role is not None and model_data is not None else None
        if key is not None and self._created_role is not None:
            key.grant_decrypt(as_role(self._created_role))
        self._after_grants()

    @classmethod
    def from_recommendation(
        cls,
        scope: Construct,
        id: str,
        *,
        model_package_arn: str,
        inference_specification_name: str,
        artifacts_bucket: s3.IBucket | None = None,
        image_repository: ecr.IRepository | None = None,
        environment: Mapping[str, str] | None = None,
        role: iam.IRole | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        network_isolation: bool = False,
        model_name: str | None = None,
    ) -> "PoolModel":
        """A model from one result of an inference-recommendation job.

        Each result carries a ``ModelPackageArn`` and an ``InferenceSpecificationName`` (the
        configuration tuned for that instance type); they become the container's
        ``ModelPackageName`` and ``InferenceSpecificationName`` (see ``sagemaker-pools recommend``).

        The package's artifacts and image are only known at deploy time, so the created role
        reads ``artifacts_bucket`` (objects only) and pulls from ``image_repository`` when given;
        SageMaker-owned images need no grant. Other args as in the constructor.
        """
        if not is_unresolved(model_package_arn) and (
            not isinstance(model_package_arn, str)
            or not re.match(r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]*:\d{12}:model-package/[a-zA-Z0-9][a-zA-Z0-9-]{0,62}(/\d{1,9})?$", model_package_arn)
        ):
            raise PoolConfigError(
                "PoolModel.from_recommendation.model_package_arn",
                model_package_arn,
                "a model package ARN 'arn:aws:sagemaker:<region>:<account>:model-package/<name>[/<version>]'",
            )
        check_name(inference_specification_name, "PoolModel.from_recommendation.inference_specification_name")
        model = cls.__new__(cls)
        Construct.__init__(model, scope, id)
        remember_stack(model, scope, id)
        grants: list[dict[str, Any]] = []
        wildcards: list[tuple[str, str]] = []
        if role is None and artifacts_bucket is not None:
            grants, wildcards = _package_artifact_grants(artifacts_bucket, model)
        artifacts_key = _bucket_facts(artifacts_bucket, model).encryption_key if role is None and artifacts_bucket is not None else None
        image_grants = _image_pull_grants(image_repository.repository_arn) if role is None and image_repository else []
        if artifacts_key is None:
            grants, image_grants = grants + image_grants, []
        model._init(
            container={
                "model_package_name": model_package_arn,
                "inference_specification_name": inference_specification_name,
            },
            environment=environment,
            role=role,
            vpc=vpc,
            vpc_subnets=vpc_subnets,
            security_groups=security_groups,
            network_isolation=network_isolation,
            model_name=model_name,
            grants=grants,
            wildcards=wildcards,
        )
        if model._created_role is not None and artifacts_key is not None:
            # The KMS statement comes before the image-pull ones, as the grants were written.
            artifacts_key.grant_decrypt(as_role(model._created_role))
            add_statements(model._created_role, [statement(g["actions"], g["resource_arns"]) for g in image_grants])
        model._after_grants()
        return model

    @staticmethod
    def from_model_name(scope: Construct, id: str, model_name: str) -> "_ImportedModel":
        """Reference a model that exists already (made by another stack or by hand)."""
        check_name(model_name, "PoolModel.from_model_name.model_name")
        return _ImportedModel(scope, id, model_name)

    # -- internals -------------------------------------------------------------------------

    def _init(
        self,
        *,
        container: dict[str, object],
        environment: Mapping[str, str] | None,
        role: iam.IRole | None,
        vpc: ec2.IVpc | None,
        vpc_subnets: ec2.SubnetSelection | None,
        security_groups: Sequence[ec2.ISecurityGroup] | None,
        network_isolation: bool,
        model_name: str | None,
        grants: list[dict[str, Any]],
        wildcards: list[tuple[str, str]],
    ) -> None:
        """``grants`` (``Grant.add_to_principal`` keyword arguments) and ``wildcards`` (``(ARN, reason)``
        to acknowledge) go to a created role, after its VPC statement."""
        check_name(model_name, "PoolModel.model_name")
        check_environment(environment, "PoolModel.environment")
        if environment is not None:
            container["environment"] = dict(environment)
        if vpc is None and (vpc_subnets is not None or security_groups is not None):
            raise PoolConfigError("PoolModel.vpc", None, "a VPC whenever vpc_subnets or security_groups is given")

        self._created_role: ExecutionRole | iam.Role | None = None
        self._default_policy: IConstruct | None = None
        if role is None:
            statements: list[StatementJson] = []
            if vpc is not None:
                # The ENI actions do not support resource-level permissions: AWS requires "*".
                statements.append(statement(_VPC_ACTIONS, ["*"]))
            # The statements Grant.add_to_principal would make, added to the role in one batch.
            statements += [statement(g["actions"], g["resource_arns"], g.get("conditions")) for g in grants]
            self._created_role, self._default_policy = new_execution_role(
                self,
                wildcard_reason="ecr:GetAuthorizationToken, cloudwatch:PutMetricData (narrowed by namespace) and the "
                "VPC network-interface actions have no resource-level permissions: AWS requires '*'.",
                statements=statements,
                wildcards=wildcards,
            )
        self._role = role

        vpc_config = None
        if vpc is not None:
            from aws_cdk import aws_ec2 as ec2  # noqa: PLC0415 (see the TYPE_CHECKING import)

            groups = list(security_groups or [])
            if not groups:
                groups = [ec2.SecurityGroup(self, "SecurityGroup", vpc=vpc, description="SageMaker model containers")]
            self.connections = ec2.Connections(security_groups=groups)
            subnets = vpc.select_subnets(**self._subnet_kwargs(vpc_subnets))
            vpc_config = sagemaker.CfnModel.VpcConfigProperty(
                security_group_ids=[g.security_group_id for g in groups], subnets=subnets.subnet_ids
            )

        self._model_name_token: str | None = None
        self._resource = sagemaker.CfnModel(
            self,
            "Resource",
            execution_role_arn=(role or self._created_role).role_arn,  # type: ignore[union-attr]
            primary_container=l1_properties(sagemaker.CfnModel.ContainerDefinitionProperty, **container),
            enable_network_isolation=network_isolation or None,
            vpc_config=vpc_config,
            model_name=model_name,
        )

    @property
    def role(self) -> iam.IRole:
        """The model's execution role: the ``role`` given, or the one created for it (an ``IRole``
        whose grants and ``add_to_principal_policy`` land in its default policy)."""
        if self._role is not None:
            return self._role
        assert self._created_role is not None
        return as_role(self._created_role)

    def _after_grants(self) -> None:
        if self._created_role is None:
            return
        # CreateModel checks that the role can reach the image and the data: create the model
        # only once the role's policy exists (the role itself is already a GetAtt dependency).
        if self._default_policy is not None:
            wait_for(self._resource, self._default_policy)

    @staticmethod
    def _subnet_kwargs(selection: ec2.SubnetSelection | None) -> dict[str, Any]:
        if selection is None:
            from aws_cdk import aws_ec2 as ec2  # noqa: PLC0415 (see the TYPE_CHECKING import)

            return {"subnet_type": ec2.SubnetType.PRIVATE_WITH_EGRESS}
        # jsii exposes select_subnets() with keyword arguments only; a SubnetSelection keeps them in _values.
        return dict(selection._values)

    @property
    def model_name(self) -> str:
        """The SageMaker model name (a token resolved at deploy time)."""
        # Read once: each attribute read is a round trip to Node, and every pool reads it.
        if self._model_name_token is None:
            self._model_name_token = str(self._resource.attr_model_name)
        return self._model_name_token

    @property
    def model_arn(self) -> str:
        """The model's ARN."""
        return str(self._resource.attr_model_arn)



#: The network-interface actions a model in a VPC needs (they have no resource-level permissions).
_VPC_ACTIONS = (
    "ec2:CreateNetworkInterface",
    "ec2:CreateNetworkInterfacePermission",
    "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeVpcs",
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
)


def _image_pull_grants(repository_arn: str) -> list[dict[str, Any]]:
    """Pull images from one ECR repository (``Grant.add_to_principal`` keyword arguments)."""
    return [
        {
            "actions": ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
            "resource_arns": [repository_arn],
        },
        # GetAuthorizationToken is account-wide: it has no resource-level permissions, AWS requires "*".
        {"actions": ["ecr:GetAuthorizationToken"], "resource_arns": ["*"]},
    ]


def _package_artifact_grants(bucket: s3.IBucket, scope: Construct) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Read the objects of a model package's artifacts bucket (their keys are unknown until deploy)."""
    facts = _bucket_facts(bucket, scope)
    objects = facts.arn_for_objects("*")
    grants: list[dict[str, Any]] = [
        {"actions": ["s3:GetObject"], "resource_arns": [objects]},
        {"actions": ["s3:ListBucket"], "resource_arns": [facts.arn]},
    ]
    reason = (
        "A model package names its artifacts only at deploy time: the role reads objects of the given "
        "artifacts bucket (GetObject, ListBucket) and nothing else."
    )
    return grants, [(objects, reason)]


@dataclass(frozen=True)
class _BucketFacts:
    """What a model reads of its artifacts bucket: each read of a bucket attribute is a round trip
    to Node, and every build of a fleet reads the same bucket (see :func:`_bucket_facts`)."""

    name: str
    arn: str
    encryption_key: kms.IKey | None

    def arn_for_objects(self, key_pattern: str) -> str:
        """``IBucket.arn_for_objects``, which aws-cdk-lib writes as ``f"{bucket_arn}/{key_pattern}"``."""
        return f"{self.arn}/{key_pattern}"


_BUCKET_FACTS: "weakref.WeakKeyDictionary[s3.IBucket, _BucketFacts]" = weakref.WeakKeyDictionary()


def _bucket_facts(bucket: s3.IBucket | str, scope: object) -> _BucketFacts:
    """``bucket``'s name, ARN and key, read from Node once per bucket (they never change).

    A bucket name gets the ARN ``Bucket.from_bucket_name`` gives it in ``scope``'s stack
    (``Stack.format_arn`` with no region or account: the stack's partition, a literal where its
    region is known) and no key. Outside any construct, the partition is ``AWS::Partition``.
    """
    if isinstance(bucket, str):
        partition = stack_partition(stack_of(scope)) if isinstance(scope, Construct) else _aws_partition()
        return _BucketFacts(bucket, f"arn:{partition}:s3:::{bucket}", None)
    facts = _BUCKET_FACTS.get(bucket)
    if facts is None:
        facts = _BUCKET_FACTS[bucket] = _BucketFacts(bucket.bucket_name, bucket.bucket_arn, bucket.encryption_key)
    return facts


@lru_cache(maxsize=1)
def _aws_partition() -> str:
    """``Aws.PARTITION`` (a token string, the same for every stack), asked of Node once."""
    return Aws.PARTITION


#: An S3 bucket name (general purpose buckets: 3-63 lowercase letters, digits, dots and hyphens,
#: beginning and ending with a letter or digit).
_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def _check_bucket(bucket: object) -> None:
    if isinstance(bucket, str):
        if not is_unresolved(bucket) and not _BUCKET_NAME.match(bucket):
            raise PoolConfigError("ModelData.bucket", bucket, "an S3 bucket name (3-63 lowercase letters, digits, '.' and '-') or an aws_s3.IBucket")
    elif not hasattr(bucket, "bucket_name"):
        raise PoolConfigError("ModelData.bucket", bucket, "an aws_s3.IBucket or an S3 bucket name")
