"""Benchmarks as code: an AIPerf workload beside the endpoint, and the role a benchmark job runs as.

:class:`BenchmarkWorkload` writes an ``AWS::SageMaker::AIWorkloadConfig`` (SageMaker's managed
AI benchmark and recommendation jobs run AIPerf with it); :class:`BenchmarkRole` is the role a
``CreateAIBenchmarkJob`` passes: SageMaker assumes it to send the benchmark's requests to one
endpoint, write the results under one S3 prefix and read the workloads' datasets. Start a job
with ``sagemaker-pools bench ENDPOINT --managed --workload NAME --role ARN --output s3://...``.

The developer guide ("Benchmark generative AI inference endpoints") asks for a role that
"grants SageMaker AI access to your endpoint and output bucket"; it names no other permission,
so that is all this role has (docs/aws-readings.md).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

from aws_cdk import CfnTag, Duration, Names, Resource
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from ._roles import acknowledge_wildcard
from ._tokens import is_unresolved
from ._validate import check_tags, concrete_seconds, duration_facts
from .aiperf import SPEC_AT_SYNTH, WorkloadSpec
from .endpoint import EndpointBase
from .errors import PoolConfigError

__all__ = ["BenchmarkWorkload", "BenchmarkRole"]

#: The channel a workload's dataset is given under (``DatasetConfig.InputDataConfig[0].ChannelName``).
DATASET_CHANNEL = "dataset"
#: ``AWS::SageMaker::AIWorkloadConfig.AIWorkloadConfigName``: the API allows capitals, CloudFormation does not.
WORKLOAD_NAME = re.compile(r"^[a-z0-9](-*[a-z0-9]){0,62}$")
#: Reads and writes of SSE-KMS objects.
_KMS_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")


class BenchmarkWorkload(Resource):
    """An ``AWS::SageMaker::AIWorkloadConfig``: the load an AI benchmark job sends, as typed props.

    Synthetic load (token means and spreads) or a dataset in S3; a closed loop (``concurrency``)
    or an open one (``request_rate``); a ``duration`` or a ``request_count``. The inline spec is
    the one ``sagemaker-pools bench --aiperf-spec`` writes for the same options.

    Every property of the resource is create-only, so a change replaces it: the default name
    ends in a hash of the spec, so a changed workload gets a new name and the replacement works.
    A fixed ``workload_name`` must change whenever the workload does (CloudFormation cannot
    replace a custom-named resource under the same name). For the same reason the spec's values
    and ``dataset_key`` must be concrete (a ``CfnParameter`` is refused: changed at deploy time, it
    would change the workload under an unchanged name); ``workload_name`` may be a parameter.

    Attributes:
        workload_name: the name ``--workload`` and ``CreateAIBenchmarkJob`` take.
        workload_config_arn: its ARN (a token).
        spec: the AIPerf spec written.
        dataset_bucket / dataset_key: the dataset, when one is given.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        workload_name: str | None = None,
        input_tokens_mean: int | None = None,
        input_tokens_stddev: float | None = None,
        output_tokens_mean: int | None = None,
        output_tokens_stddev: float | None = None,
        sequence_distribution: str | None = None,
        prefix_pool_size: int | None = None,
        prefix_length: int | None = None,
        turns_mean: int | None = None,
        turns_stddev: float | None = None,
        concurrency: int | None = None,
        request_rate: float | None = None,
        arrival: str | None = None,
        arrival_smoothness: float | None = None,
        duration: Duration | None = None,
        request_count: int | None = None,
        warmup: Duration | None = None,
        streaming: bool = True,
        seed: int | None = None,
        request_timeout: Duration | None = None,
        dataset_bucket: s3.IBucket | None = None,
        dataset_key: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        """
        Args:
            workload_name: 1-63 lowercase letters, digits and hyphens. Default: the construct's
                path and a hash of the spec.
            input_tokens_mean / input_tokens_stddev: synthetic prompts of this many tokens (normal
                distribution). Default: AIPerf's (550, 0). Not with a dataset.
            output_tokens_mean / output_tokens_stddev: tokens to generate. Default: the model decides.
            sequence_distribution: a mix of (input, output) lengths instead of the means, in
                AIPerf's ``ISL|SD,OSL|SD:PERCENT;...`` format (``bench --shape`` writes it).
            prefix_pool_size / prefix_length: that many distinct prefixes of that many tokens,
                one prepended to each prompt (``bench --prefix-count/--prefix-tokens``). Both or neither.
            turns_mean / turns_stddev: multi-turn conversations of about this many turns, each
                turn re-sending the history (``bench --turns/--turns-stddev``). Default: one turn.
            concurrency: requests in flight (closed loop; with ``request_rate``, a cap).
            request_rate: requests per second (open loop). One of the two is required.
            arrival: ``constant``, ``poisson`` or ``gamma`` arrivals for ``request_rate``. Default: AIPerf's (poisson).
            arrival_smoothness: gamma shape for ``arrival="gamma"`` (1 = Poisson, < 1 burstier).
            duration / request_count: when the run stops; exactly one.
            warmup: unmeasured warm-up first. Default: none.
            streaming: stream responses (needed for TTFT and ITL). Default: True.
            seed: AIPerf's random seed. Default: random.
            request_timeout: per-request timeout. Default: AIPerf's.
            dataset_bucket / dataset_key: requests from a dataset in S3 instead of synthetic
                prompts: an object key, or a prefix ending in ``/``. Both or neither.
            tags: tags on the workload configuration.
        """
        super().__init__(scope, id)
        field = "BenchmarkWorkload"
        # A name from a parameter is the user's, like a literal one: checked by CloudFormation at deploy time.
        if workload_name is not None and (not isinstance(workload_name, str) or not (is_unresolved(workload_name) or WORKLOAD_NAME.match(workload_name))):
            raise PoolConfigError(
                f"{field}.workload_name",
                workload_name,
                "1-63 lowercase letters, digits and hyphens, starting and ending with a letter or digit "
                "(CloudFormation's rule: DeleteAIWorkloadConfig lowercases the name it looks up)",
            )
        check_tags(tags, f"{field}.tags")
        if (dataset_bucket is None) != (dataset_key is None):
            raise PoolConfigError(f"{field}.dataset_key", dataset_key, "dataset_bucket and dataset_key together, or neither")
        if dataset_bucket is not None:
            if is_unresolved(dataset_key):
                raise PoolConfigError(
                    f"{field}.dataset_key",
                    "a deploy-time parameter (a CDK token)",
                    "a concrete key: it decides the read grant (an object, or a prefix ending in '/') and goes into the "
                    "generated name's hash; the dataset is create-only like the spec, so a key changed at deploy time "
                    "would replace the workload under the same name, which CloudFormation cannot do",
                )
            if not isinstance(dataset_key, str) or not dataset_key or dataset_key.startswith("/") or "*" in dataset_key:
                raise PoolConfigError(f"{field}.dataset_key", dataset_key, "an object key or a prefix ending in '/', not starting with '/', without '*'")
            if input_tokens_mean is not None or input_tokens_stddev is not None:
                raise PoolConfigError(
                    f"{field}.input_tokens_mean", input_tokens_mean, "None with a dataset: the prompts come from the dataset (AIPerf refuses both)"
                )
        self.spec = WorkloadSpec(
            owner=field,
            input_tokens_mean=input_tokens_mean,
            input_tokens_stddev=input_tokens_stddev,
            output_tokens_mean=output_tokens_mean,
            output_tokens_stddev=output_tokens_stddev,
            sequence_distribution=sequence_distribution,
            prefix_pool_size=prefix_pool_size,
            prefix_length=prefix_length,
            turns_mean=turns_mean,
            turns_stddev=turns_stddev,
            concurrency=concurrency,
            request_rate=request_rate,
            arrival=arrival,
            arrival_smoothness=arrival_smoothness,
            duration_s=_seconds(duration, f"{field}.duration"),
            request_count=request_count,
            warmup_s=_seconds(warmup, f"{field}.warmup"),
            streaming=streaming,
            seed=seed,
            timeout_s=_seconds(request_timeout, f"{field}.request_timeout"),
        )
        self.dataset_bucket = dataset_bucket
        self.dataset_key = dataset_key
        inline = self.spec.inline()
        dataset = None
        if dataset_bucket is not None and dataset_key is not None:
            s3_uri = dataset_bucket.s3_url_for_object(dataset_key)
            dataset = sagemaker.CfnAIWorkloadConfig.AIDatasetConfigProperty(
                input_data_config=[
                    sagemaker.CfnAIWorkloadConfig.AIWorkloadInputDataConfigProperty(
                        channel_name=DATASET_CHANNEL,
                        data_source=sagemaker.CfnAIWorkloadConfig.AIWorkloadDataSourceProperty(
                            s3_data_source=sagemaker.CfnAIWorkloadConfig.AIWorkloadS3DataSourceProperty(s3_uri=s3_uri)
                        ),
                    )
                ]
            )
        self.workload_name = workload_name or _generated_name(self, inline + (dataset_key or ""))
        self._resource = sagemaker.CfnAIWorkloadConfig(
            self,
            "Resource",
            ai_workload_config_name=self.workload_name,
            ai_workload_configs=sagemaker.CfnAIWorkloadConfig.AIWorkloadConfigsProperty(
                workload_spec=sagemaker.CfnAIWorkloadConfig.WorkloadSpecProperty(inline=inline)
            ),
            dataset_config=dataset,
            tags=[CfnTag(key=k, value=v) for k, v in (tags or {}).items()] or None,
        )

    @property
    def workload_config_arn(self) -> str:
        """The workload configuration's ARN."""
        return self._resource.attr_ai_workload_config_arn

    def grant_read_dataset(self, grantee: iam.IGrantable) -> iam.Grant | None:
        """Let ``grantee`` read the dataset (and decrypt it with the bucket's KMS key); None without a dataset.

        An object key: ``s3:GetObject`` on it. A prefix: ``s3:GetObject`` under it and
        ``s3:ListBucket`` limited to it.
        """
        bucket, key = self.dataset_bucket, self.dataset_key
        if bucket is None or key is None:
            return None
        if not key.endswith("/"):
            grant = iam.Grant.add_to_principal(grantee=grantee, actions=["s3:GetObject"], resource_arns=[bucket.arn_for_objects(key)])
        else:
            grant = iam.Grant.add_to_principal(grantee=grantee, actions=["s3:GetObject"], resource_arns=[bucket.arn_for_objects(key + "*")])
            grantee.grant_principal.add_to_principal_policy(
                iam.PolicyStatement(actions=["s3:ListBucket"], resources=[bucket.bucket_arn], conditions={"StringLike": {"s3:prefix": [key + "*"]}})
            )
            acknowledge_wildcard(
                grantee, bucket.arn_for_objects(key + "*"), "A dataset given as a prefix is every object under it: read only under that prefix."
            )
        if bucket.encryption_key is not None:
            grant = grant.combine(bucket.encryption_key.grant(grantee, "kms:Decrypt"))
        return grant


class BenchmarkRole(Construct):
    """The role an AI benchmark job runs as (``CreateAIBenchmarkJob.RoleArn``), with exactly what it needs.

    SageMaker (``sagemaker.amazonaws.com``) assumes it to: invoke ``endpoint`` (InvokeEndpoint
    and InvokeEndpointWithResponseStream, :meth:`EndpointBase.grant_benchmark`), write the
    results under ``output_prefix`` of ``output_bucket`` (``s3:PutObject``,
    ``s3:AbortMultipartUpload``; ``kms:GenerateDataKey`` and ``kms:Decrypt`` with the bucket's
    key), and read the datasets of ``workloads``. Whoever starts the job needs
    ``iam:PassRole`` on it: :meth:`grant_pass_role`.

    Attributes:
        role: the IAM role. role_arn: its ARN (``--role``).
        output_location: ``s3://bucket/prefix`` (``--output``).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        endpoint: EndpointBase,
        output_bucket: s3.IBucket,
        output_prefix: str = "benchmarks/",
        workloads: Sequence[BenchmarkWorkload] = (),
    ) -> None:
        """
        Args:
            endpoint: the endpoint the jobs benchmark.
            output_bucket: where the jobs write their results.
            output_prefix: the prefix they write under (ends in ``/``; a deploy-time parameter is
                taken as given). Default: ``benchmarks/``.
            workloads: workloads whose dataset the jobs read. Default: none.
        """
        super().__init__(scope, id)
        field = "BenchmarkRole"
        if not isinstance(endpoint, EndpointBase):
            raise PoolConfigError(f"{field}.endpoint", endpoint, "a PooledEndpoint (or PooledEndpoint.from_endpoint_name)")
        # A prefix from a parameter reaches the output location and the grant's ARN as the Ref; its shape is left to the user.
        if not isinstance(output_prefix, str) or (
            not is_unresolved(output_prefix) and (not output_prefix.endswith("/") or output_prefix.startswith("/") or "*" in output_prefix)
        ):
            raise PoolConfigError(f"{field}.output_prefix", output_prefix, "a prefix ending in '/', not starting with '/', without '*'")
        for index, workload in enumerate(workloads):
            if not isinstance(workload, BenchmarkWorkload):
                raise PoolConfigError(f"{field}.workloads[{index}]", workload, "a BenchmarkWorkload")
        self.role = iam.Role(
            self,
            "Resource",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description="Assumed by SageMaker AI benchmark jobs: invoke one endpoint, write results under one S3 prefix",
        )
        self.output_location = output_bucket.s3_url_for_object(output_prefix)
        endpoint.grant_benchmark(self.role)
        iam.Grant.add_to_principal(
            grantee=self.role,
            actions=["s3:PutObject", "s3:AbortMultipartUpload"],
            resource_arns=[output_bucket.arn_for_objects(output_prefix + "*")],
        )
        if output_bucket.encryption_key is not None:
            # PutObject with SSE-KMS needs GenerateDataKey; a multipart upload also Decrypt.
            output_bucket.encryption_key.grant(self.role, *_KMS_ACTIONS)
        acknowledge_wildcard(
            self.role,
            output_bucket.arn_for_objects(output_prefix + "*"),
            "A benchmark job names its result objects itself: the role writes only under the output prefix.",
        )
        for workload in workloads:
            workload.grant_read_dataset(self.role)

    @property
    def role_arn(self) -> str:
        """The role's ARN: ``--role`` of ``sagemaker-pools bench --managed``."""
        return self.role.role_arn

    def grant_pass_role(self, grantee: iam.IPrincipal) -> iam.Grant:
        """Let ``grantee`` pass this role to SageMaker (what starting a benchmark job with it needs)."""
        return self.role.grant_pass_role(grantee)


def _seconds(value: Duration | None, field: str) -> float | None:
    """``value`` in seconds (a fraction kept); a token is refused: the spec is one JSON string written at synth time."""
    if value is None:
        return None
    if not isinstance(value, Duration):
        raise PoolConfigError(field, value, "an aws_cdk.Duration")
    unresolved, seconds = duration_facts(value)
    if unresolved:
        concrete_seconds(value, field, SPEC_AT_SYNTH)  # raises: the one wording of a refused token duration
    return seconds


def _generated_name(construct: Construct, content: str) -> str:
    """A unique name from the construct's path, ending in a hash of ``content`` (at most 63 characters)."""
    digest = hashlib.sha256(content.encode()).hexdigest()[:8]
    prefix = Names.unique_resource_name(construct, max_length=54, separator="-").lower().strip("-")
    return f"{prefix}-{digest}"
