#!/usr/bin/env python3
"""The library's example app written by hand with aws-cdk-lib's L1 ``Cfn*`` classes only.

This is the floor the library is measured against (``benchmarks/run.py``): the same resources,
the same properties, nothing but ``Cfn*`` constructs, tokens and plain dicts, written the way a
careful engineer would write them without the library. ``tests/test_benchmark_twin.py`` checks
that every stack here synthesizes to the library's template up to logical ids and names.

Usage (what ``cdk synth`` would run; the CLI passes the output folder in ``CDK_OUTDIR``)::

    python benchmarks/l1_app.py                 # the example app's stacks (app.py's twin)
    python benchmarks/l1_app.py --fleet 10      # 10 pooled endpoints (lib_app.py --fleet 10's twin)

The building blocks mirror the library's constructs one to one (``pool_model`` is ``PoolModel``,
``pooled_endpoint`` is ``PooledEndpoint`` ...), so that a new library feature gets its twin in
one place and the fleet (``fleet_stacks``) and the example stacks reuse it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aws_cdk import App, Aws, CfnDeletionPolicy, CfnResource, Stack
import json

from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_sns as sns
from constructs import Construct

from app_context import apply_context

LMI_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
LMI_REPOSITORY_ARN = "arn:aws:ecr:us-east-1:763104351884:repository/djl-inference"
ARTIFACTS_BUCKET = "my-llm-artifacts"
SAGEMAKER = "sagemaker.amazonaws.com"
VERSION = "2012-10-17"


# -- plain building blocks ---------------------------------------------------------------


def statement(actions: str | Sequence[str], resources: Any, *, condition: Mapping[str, Any] | None = None,
              effect: str = "Allow", principal: Any = None, sid: str | None = None) -> dict[str, Any]:
    """One IAM statement in CloudFormation's JSON shape (a single action or resource is not a list)."""
    out: dict[str, Any] = {"Action": actions if isinstance(actions, str) or len(actions) > 1 else actions[0]}
    if condition:
        out["Condition"] = dict(condition)
    out["Effect"] = effect
    if principal is not None:
        out["Principal"] = principal
    out["Resource"] = resources if not isinstance(resources, list) or len(resources) > 1 else resources[0]
    if sid:
        out["Sid"] = sid
    return out


def document(*statements: dict[str, Any]) -> iam.PolicyDocument:
    """A policy document of ``statements``, merged and sorted as aws-cdk-lib does under the
    ``@aws-cdk/aws-iam:minimizePolicies`` feature flag (cdk.json): fewer, shorter statements."""
    return iam.PolicyDocument.from_json({"Statement": list(statements), "Version": VERSION})


def log_groups_arns() -> list[str]:
    """Model containers log to /aws/sagemaker/Endpoints/<endpoint>, inference components' to /aws/sagemaker/InferenceComponents/<name>."""
    return [
        f"arn:{Aws.PARTITION}:logs:{Aws.REGION}:{Aws.ACCOUNT_ID}:log-group:/aws/sagemaker/{kind}/*"
        for kind in ("Endpoints", "InferenceComponents")
    ]


def logs_and_metrics() -> list[dict[str, Any]]:
    """What every SageMaker execution role needs: its endpoint logs and metrics."""
    return [
        statement(
            ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
            log_groups_arns(),
        ),
        statement(
            "cloudwatch:PutMetricData",
            "*",
            condition={"StringLike": {"cloudwatch:namespace": ["/aws/sagemaker/*", "AWS/SageMaker*"]}},
        ),
    ]


def role_with_policy(scope: Construct, id: str, statements: Sequence[dict[str, Any]],
                     principal: Mapping[str, Any] | None = None) -> tuple[iam.CfnRole, iam.CfnPolicy]:
    """A role (SageMaker's by default) and its inline-as-resource policy, named after its logical id."""
    role = iam.CfnRole(
        scope,
        id,
        assume_role_policy_document=document(
            {"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": dict(principal or {"Service": SAGEMAKER})}
        ),
    )
    policy_id = f"{id}Policy"
    policy = iam.CfnPolicy(
        scope, policy_id, policy_document=document(*statements), policy_name=policy_id, roles=[role.ref]
    )
    return role, policy


def ssl_only_bucket_policy(scope: Construct, id: str, bucket: s3.CfnBucket,
                           extra: Sequence[dict[str, Any]] = ()) -> s3.CfnBucketPolicy:
    arn = bucket.attr_arn
    deny = statement(
        "s3:*", [arn, f"{arn}/*"], condition={"Bool": {"aws:SecureTransport": "false"}}, effect="Deny",
        principal={"AWS": "*"},
    )
    return s3.CfnBucketPolicy(scope, id, bucket=bucket.ref, policy_document=document(deny, *extra))


def public_access_block() -> s3.CfnBucket.PublicAccessBlockConfigurationProperty:
    return s3.CfnBucket.PublicAccessBlockConfigurationProperty(
        block_public_acls=True, block_public_policy=True, ignore_public_acls=True, restrict_public_buckets=True
    )


def access_log_bucket(scope: Construct, id: str) -> s3.CfnBucket:
    bucket = s3.CfnBucket(
        scope,
        id,
        bucket_encryption=s3.CfnBucket.BucketEncryptionProperty(
            server_side_encryption_configuration=[
                s3.CfnBucket.ServerSideEncryptionRuleProperty(
                    server_side_encryption_by_default=s3.CfnBucket.ServerSideEncryptionByDefaultProperty(
                        sse_algorithm="AES256"
                    )
                )
            ]
        ),
        public_access_block_configuration=public_access_block(),
    )
    _retain(bucket)
    return bucket


def kms_bucket(scope: Construct, id: str, key: kms.CfnKey, logs: s3.CfnBucket, log_prefix: str) -> s3.CfnBucket:
    bucket = s3.CfnBucket(
        scope,
        id,
        bucket_encryption=s3.CfnBucket.BucketEncryptionProperty(
            server_side_encryption_configuration=[
                s3.CfnBucket.ServerSideEncryptionRuleProperty(
                    bucket_key_enabled=True,
                    server_side_encryption_by_default=s3.CfnBucket.ServerSideEncryptionByDefaultProperty(
                        sse_algorithm="aws:kms", kms_master_key_id=key.attr_arn
                    ),
                )
            ]
        ),
        logging_configuration=s3.CfnBucket.LoggingConfigurationProperty(
            destination_bucket_name=logs.ref, log_file_prefix=log_prefix
        ),
        public_access_block_configuration=public_access_block(),
        versioning_configuration=s3.CfnBucket.VersioningConfigurationProperty(status="Enabled"),
    )
    _retain(bucket)
    return bucket


def log_delivery(logs: s3.CfnBucket, source: s3.CfnBucket, prefix: str) -> dict[str, Any]:
    """The access-log bucket's grant to S3 log delivery for ``source``'s logs under ``prefix``."""
    return statement(
        "s3:PutObject",
        f"{logs.attr_arn}/{prefix}*",
        condition={"ArnLike": {"aws:SourceArn": source.attr_arn}, "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
        principal={"Service": "logging.s3.amazonaws.com"},
    )


def account_root() -> str:
    return f"arn:{Aws.PARTITION}:iam::{Aws.ACCOUNT_ID}:root"


def rotated_key(scope: Construct, id: str) -> kms.CfnKey:
    key = kms.CfnKey(
        scope,
        id,
        enable_key_rotation=True,
        key_policy=document(statement("kms:*", "*", principal={"AWS": account_root()})),
    )
    _retain(key)
    return key


def _retain(resource: CfnResource) -> None:
    resource.cfn_options.deletion_policy = CfnDeletionPolicy.RETAIN
    resource.cfn_options.update_replace_policy = CfnDeletionPolicy.RETAIN


def ssl_only_topic(scope: Construct, id: str, key: kms.CfnKey) -> sns.CfnTopic:
    topic = sns.CfnTopic(scope, id, kms_master_key_id=key.attr_arn)
    sns.CfnTopicPolicy(
        scope,
        f"{id}Policy",
        policy_document=document(
            statement(
                "sns:Publish", topic.ref, condition={"Bool": {"aws:SecureTransport": "false"}}, effect="Deny",
                principal="*", sid="AllowPublishThroughSSLOnly",
            )
        ),
        topics=[topic.ref],
    )
    return topic


def sum_alarm(scope: Construct, id: str, *, metric_name: str, dimensions: Mapping[str, str], description: str,
              threshold: float = 5, evaluation_periods: int = 2) -> cloudwatch.CfnAlarm:
    return cloudwatch.CfnAlarm(
        scope,
        id,
        alarm_description=description,
        comparison_operator="GreaterThanOrEqualToThreshold",
        dimensions=[cloudwatch.CfnAlarm.DimensionProperty(name=k, value=v) for k, v in dimensions.items()],
        evaluation_periods=evaluation_periods,
        metric_name=metric_name,
        namespace="AWS/SageMaker",
        period=60,
        statistic="Sum",
        threshold=threshold,
        treat_missing_data="notBreaching",
    )


# -- the library's constructs, by hand ---------------------------------------------------


@dataclass
class S3Source:
    """Where a model build is: a bucket (an L1 bucket, or a name) and a prefix; its key if any."""

    prefix: str
    bucket: s3.CfnBucket | None = None
    bucket_name: str = ARTIFACTS_BUCKET
    key: kms.CfnKey | None = None

    @property
    def name(self) -> str:
        return self.bucket.ref if self.bucket is not None else self.bucket_name

    @property
    def arn(self) -> str:
        return self.bucket.attr_arn if self.bucket is not None else f"arn:{Aws.PARTITION}:s3:::{self.bucket_name}"


def pool_model(scope: Construct, id: str, *, source: S3Source, environment: Mapping[str, str],
               extra_statements: Sequence[dict[str, Any]] = (), network_isolation: bool = False) -> sagemaker.CfnModel:
    """``PoolModel``: an execution role that reads only its build's prefix and pulls only its image."""
    statements = [
        *logs_and_metrics(),
        statement(
            ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"], LMI_REPOSITORY_ARN
        ),
        statement("ecr:GetAuthorizationToken", "*"),
        statement("s3:GetObject", f"{source.arn}/{source.prefix}*"),
        statement("s3:ListBucket", source.arn, condition={"StringLike": {"s3:prefix": [f"{source.prefix}*"]}}),
    ]
    if source.key is not None:
        statements.append(statement("kms:Decrypt", source.key.attr_arn))
    statements += extra_statements
    role, policy = role_with_policy(scope, f"{id}Role", statements)
    model = sagemaker.CfnModel(
        scope,
        id,
        execution_role_arn=role.attr_arn,
        primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
            environment=dict(environment),
            image=LMI_IMAGE,
            model_data_source=sagemaker.CfnModel.ModelDataSourceProperty(
                s3_data_source=sagemaker.CfnModel.S3DataSourceProperty(
                    compression_type="None", s3_data_type="S3Prefix", s3_uri=f"s3://{source.name}/{source.prefix}"
                )
            ),
        ),
        enable_network_isolation=network_isolation or None,
    )
    model.add_resource_dependency(policy)
    return model


@dataclass
class Pool:
    instance_type: str
    model: sagemaker.CfnModel | None = None


@dataclass
class Endpoint:
    config: sagemaker.CfnEndpointConfig
    endpoint: sagemaker.CfnEndpoint
    variant_name: str = "AllTraffic"


def pooled_endpoint(
    scope: Construct,
    id: str,
    *,
    pools: Sequence[Pool],
    model: sagemaker.CfnModel | None,
    initial_instance_count: int = 1,
    provision_timeout_s: int = 1200,
    download_timeout_s: int | None = None,
    startup_timeout_s: int | None = None,
    managed_scaling: tuple[int, int] | None = None,
    execution_role_arn: str | None = None,
    async_config: sagemaker.CfnEndpointConfig.AsyncInferenceConfigProperty | None = None,
    deployment: sagemaker.CfnEndpoint.DeploymentConfigProperty | None = None,
    endpoint_name: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> Endpoint:
    """``PooledEndpoint``: an EndpointConfig with one pooled variant and the Endpoint on it."""
    cfg = sagemaker.CfnEndpointConfig
    tag_list = [{"key": k, "value": v} for k, v in (tags or {}).items()] or None
    variant = cfg.ProductionVariantProperty(
        variant_name="AllTraffic",
        model_name=model.attr_model_name if model is not None else None,
        initial_instance_count=initial_instance_count,
        instance_pools=[
            cfg.InstancePoolProperty(
                instance_type=p.instance_type,
                priority=i,
                model_name_override=p.model.attr_model_name if p.model is not None else None,
            )
            for i, p in enumerate(pools, start=1)
        ],
        variant_instance_provision_timeout_in_seconds=provision_timeout_s,
        routing_config=cfg.RoutingConfigProperty(routing_strategy="LEAST_OUTSTANDING_REQUESTS"),
        model_data_download_timeout_in_seconds=download_timeout_s,
        container_startup_health_check_timeout_in_seconds=startup_timeout_s,
        managed_instance_scaling=cfg.ManagedInstanceScalingProperty(
            min_instance_count=managed_scaling[0], max_instance_count=managed_scaling[1], status="ENABLED"
        )
        if managed_scaling
        else None,
    )
    config = cfg(
        scope,
        f"{id}Config",
        production_variants=[variant],
        execution_role_arn=execution_role_arn,
        async_inference_config=async_config,
        tags=tag_list,  # type: ignore[arg-type]
    )
    endpoint = sagemaker.CfnEndpoint(
        scope,
        id,
        endpoint_config_name=config.attr_endpoint_config_name,
        endpoint_name=endpoint_name,
        deployment_config=deployment,
        retain_all_variant_properties=True,
        tags=tag_list,  # type: ignore[arg-type]
    )
    return Endpoint(config, endpoint)


# -- scaling, alarms and dashboards, by hand -----------------------------------------------------

SAGEMAKER_NS = "AWS/SageMaker"
#: A GPU unit's cold start once its pool has capacity. Component copies wait it out before
#: target tracking adds more (Application Auto Scaling's default there is no cooldown at all).
COLD_START_SECONDS = 1200
#: A wake-up step sets exactly one unit, so re-invoked every minute until the unit serves it still
#: asks for one: its cooldown is Application Auto Scaling's default.
WAKE_UP_COOLDOWN_SECONDS = 300
ENDPOINTS_NS = "/aws/sagemaker/Endpoints"


def dims(**values: str) -> list[dict[str, str]]:
    return [{"Name": k, "Value": v} for k, v in values.items()]


def metric_stat(namespace: str, name: str, dimensions: list[dict[str, str]], stat: str, *,
                period: int | None = None, unit: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"Metric": {"Dimensions": dimensions, "MetricName": name, "Namespace": namespace}}
    if period is not None:
        out["Period"] = period
    out["Stat"] = stat
    if unit is not None:
        out["Unit"] = unit
    return out


def query(id: str, *, stat: dict[str, Any] | None = None, expression: str | None = None, label: str | None = None,
          return_data: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if expression is not None:
        out["Expression"] = expression
    out["Id"] = id
    if label is not None:
        out["Label"] = label
    if stat is not None:
        out["MetricStat"] = stat
    out["ReturnData"] = return_data
    return out


def scalable_target(scope: Construct, id: str, *, resource_id: str, dimension: str, min_capacity: int,
                    max_capacity: int, depends_on: CfnResource | None = None,
                    tags: Mapping[str, str] | None = None) -> appscaling.CfnScalableTarget:
    target = appscaling.CfnScalableTarget(
        scope,
        id,
        max_capacity=max_capacity,
        min_capacity=min_capacity,
        resource_id=resource_id,
        scalable_dimension=dimension,
        service_namespace="sagemaker",
    )
    if tags:
        target.add_property_override("Tags", [{"Key": k, "Value": v} for k, v in tags.items()])
    if depends_on is not None:
        target.add_resource_dependency(depends_on)
    return target


def target_tracking(scope: Construct, id: str, target: appscaling.CfnScalableTarget, *, name: str,
                    metrics: list[dict[str, Any]], target_value: float, scale_in_cooldown: int | None = None,
                    scale_out_cooldown: int | None = None) -> appscaling.CfnScalingPolicy:
    config: dict[str, Any] = {"CustomizedMetricSpecification": {"Metrics": metrics}}
    if scale_in_cooldown is not None:
        config["ScaleInCooldown"] = scale_in_cooldown
    if scale_out_cooldown is not None:
        config["ScaleOutCooldown"] = scale_out_cooldown
    config["TargetValue"] = target_value
    policy = appscaling.CfnScalingPolicy(
        scope,
        id,
        policy_name=name,
        policy_type="TargetTrackingScaling",
        resource_id=target.resource_id,
        scalable_dimension=target.scalable_dimension,
        service_namespace="sagemaker",
    )
    policy.add_property_override("TargetTrackingScalingPolicyConfiguration", config)
    policy.add_resource_dependency(target)
    return policy


def scale_from_zero(scope: Construct, id: str, target: appscaling.CfnScalableTarget, *, name: str, cooldown: int,
                    datapoints: int, description: str, metric_name: str | None = None,
                    dimensions: list[dict[str, str]] | None = None, statistic: str | None = None,
                    metrics: list[dict[str, Any]] | None = None) -> appscaling.CfnScalingPolicy:
    """A step policy that sets exactly one unit while its alarm (one metric, or ``metrics``) reads >= 1, and the alarm."""
    policy = appscaling.CfnScalingPolicy(
        scope,
        id,
        policy_name=name,
        policy_type="StepScaling",
        resource_id=target.resource_id,
        scalable_dimension=target.scalable_dimension,
        service_namespace="sagemaker",
        step_scaling_policy_configuration=appscaling.CfnScalingPolicy.StepScalingPolicyConfigurationProperty(
            adjustment_type="ExactCapacity",
            cooldown=cooldown,
            metric_aggregation_type="Maximum",
            step_adjustments=[
                appscaling.CfnScalingPolicy.StepAdjustmentProperty(metric_interval_lower_bound=0, scaling_adjustment=1)
            ],
        ),
    )
    policy.add_resource_dependency(target)
    alarm = cloudwatch.CfnAlarm(
        scope,
        f"{id}Alarm",
        alarm_actions=[policy.attr_arn],
        alarm_description=description,
        comparison_operator="GreaterThanOrEqualToThreshold",
        datapoints_to_alarm=datapoints,
        evaluation_periods=datapoints,
        threshold=1,
        treat_missing_data="missing",
    )
    if metrics is not None:
        alarm.add_property_override("Metrics", metrics)
    else:
        alarm.dimensions = [cloudwatch.CfnAlarm.DimensionProperty(name=d["Name"], value=d["Value"]) for d in dimensions or []]
        alarm.metric_name, alarm.namespace, alarm.period, alarm.statistic = metric_name, SAGEMAKER_NS, 60, statistic
    return policy


def weighted_utilization_queries(dimensions: Callable[[str], list[dict[str, str]]], metric_name: str,
                                 pools: Sequence[tuple[str, int]], *,
                                 presence: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """The library's max-over-types weighted utilization: each type's concurrency over its maximum.

    ``presence`` (namespace, metric): the signal exists only while some unit publishes that metric
    (its SampleCount per type), and then a missing concurrency reads 0.
    """
    out = [
        query(f"c{i}", stat=metric_stat(SAGEMAKER_NS, metric_name, dimensions(t), "Maximum"))
        for i, (t, _) in enumerate(pools, start=1)
    ]
    if presence is not None:
        out += [
            query(f"s{i}", stat=metric_stat(presence[0], presence[1], dimensions(t), "SampleCount", unit="Percent"), label=f"instances {t}")
            for i, (t, _) in enumerate(pools, start=1)
        ]
    out += [
        query(f"u{i}", expression=f"c{i} / {m}", label=f"{t} utilization") for i, (t, m) in enumerate(pools, start=1)
    ]
    ids = ", ".join(f"u{i}" for i in range(1, len(pools) + 1))
    top = f"MAX([{ids}])"
    if presence is not None:
        out.append(query("n", expression=" + ".join(f"s{i}" for i in range(1, len(pools) + 1)), label="instances"))
        top = f"IF(FILL(n, 0) > 0, FILL({top}, 0))"
    out.append(query("result", expression=top, label="Weighted utilization (max-over-types)", return_data=True))
    return out


def math_alarm(scope: Construct, id: str, *, description: str, metrics: list[dict[str, Any]], threshold: float,
               evaluation_periods: int, datapoints: int, topic: str | None,
               comparison: str = "GreaterThanThreshold") -> cloudwatch.CfnAlarm:
    alarm = cloudwatch.CfnAlarm(
        scope,
        id,
        alarm_actions=[topic] if topic else None,
        ok_actions=[topic] if topic else None,
        alarm_description=description,
        comparison_operator=comparison,
        datapoints_to_alarm=datapoints,
        evaluation_periods=evaluation_periods,
        threshold=threshold,
        treat_missing_data="notBreaching",
    )
    alarm.add_property_override("Metrics", metrics)
    return alarm


@dataclass
class PoolSpec:
    instance_type: str
    max_concurrency: int
    p99_latency_s: int = 20


def pool_alarms(scope: Construct, id: str, *, endpoint_name: str, pools: Sequence[PoolSpec], topic: str,
                error_rate_percent: float = 1, fallback_periods: int = 24, max_capacity: int = 8,
                at_max_periods: int = 3, target: float = 0.7) -> list[cloudwatch.CfnAlarm]:
    """``PoolAlarms``: p99 latency per type, 5XX rate, fallback in use, at max capacity. Returns the rollback ones.

    At max capacity is a composite: the instance count (Invocations / InvocationsPerInstance,
    rounded) at the maximum for ``at_max_periods`` 5-minute periods, and the weighted utilization
    above ``target`` in 4 of 5 of those minutes; only the composite notifies.
    """
    variant = dims(EndpointName=endpoint_name, VariantName="AllTraffic")

    def per_type(t: str) -> list[dict[str, str]]:
        return dims(EndpointName=endpoint_name, InstanceType=t, VariantName="AllTraffic")

    latency = []
    for p in pools:
        alarm = cloudwatch.CfnAlarm(
            scope,
            f"{id}Latency{p.instance_type.replace('.', '')}",
            alarm_actions=[topic],
            ok_actions=[topic],
            alarm_description=f"p99 ModelLatency of {p.instance_type} on {endpoint_name} above {p.p99_latency_s} s in 3 of 5 minutes",
            comparison_operator="GreaterThanThreshold",
            datapoints_to_alarm=3,
            dimensions=[cloudwatch.CfnAlarm.DimensionProperty(name=d["Name"], value=d["Value"]) for d in per_type(p.instance_type)],
            evaluation_periods=5,
            extended_statistic="p99",
            metric_name="ModelLatency",
            namespace=SAGEMAKER_NS,
            period=60,
            threshold=p.p99_latency_s * 1_000_000,
            treat_missing_data="notBreaching",
            unit="Microseconds",
        )
        latency.append(alarm)
    error_rate = math_alarm(
        scope,
        f"{id}ErrorRate5xx",
        description=f"5XX errors above {error_rate_percent:g} % of invocations on {endpoint_name} in 3 of 5 minutes",
        metrics=[
            query("expr_1", expression="100 * errors / invocations", label="5XX error rate (%)", return_data=True),
            query("errors", stat=metric_stat(SAGEMAKER_NS, "Invocation5XXErrors", variant, "Sum", period=60)),
            query("invocations", stat=metric_stat(SAGEMAKER_NS, "Invocations", variant, "Sum", period=60)),
        ],
        threshold=error_rate_percent,
        evaluation_periods=5,
        datapoints=3,
        topic=topic,
    )
    def counts(indexed: Sequence[tuple[int, PoolSpec]], statistic: str) -> list[dict[str, Any]]:
        return [
            query(f"s{i}", label=f"instances {p.instance_type}",
                  stat=metric_stat(ENDPOINTS_NS, "CPUUtilization", per_type(p.instance_type), statistic, period=300, unit="Percent"))
            for i, p in indexed
        ]

    fallbacks = list(enumerate(pools, start=1))[1:]
    math_alarm(
        scope,
        f"{id}FallbackInUse",
        description=f"{endpoint_name} has run fallback instances ({', '.join(p.instance_type for _, p in fallbacks)}) for "
        f"{fallback_periods * 5} minutes: {pools[0].instance_type} has no capacity",
        metrics=[
            query("expr_1", expression=" + ".join(f"s{i}" for i, _ in fallbacks), label="fallback instances", return_data=True),
            *counts(fallbacks, "SampleCount"),
        ],
        threshold=0,
        evaluation_periods=fallback_periods,
        datapoints=fallback_periods,
        topic=topic,
    )
    count = math_alarm(
        scope,
        f"{id}AtMaxCount",
        description=f"{endpoint_name} has run its maximum of {max_capacity} instances for {at_max_periods * 5} minutes",
        metrics=[
            query("expr_1", expression="FLOOR(n + 0.5)", label="instances (rounded)", return_data=True),
            query("n", expression="inv / ipi", label="instances"),
            query("inv", stat=metric_stat(SAGEMAKER_NS, "Invocations", variant, "Sum", period=300)),
            query("ipi", stat=metric_stat(SAGEMAKER_NS, "InvocationsPerInstance", variant, "Sum", period=300)),
        ],
        threshold=max_capacity,
        comparison="GreaterThanOrEqualToThreshold",
        evaluation_periods=at_max_periods,
        datapoints=at_max_periods,
        topic=None,
    )
    minutes = at_max_periods * 5
    above = -(-minutes * 4 // 5)
    ids = ", ".join(f"u{i}" for i in range(1, len(pools) + 1))
    saturated = math_alarm(
        scope,
        f"{id}SaturatedWeightedUtilization",
        description=f"The scaling signal WeightedUtilization of {endpoint_name} was above {target:g} in {above} of {minutes} minutes",
        metrics=[
            query("expr_1", expression=f"MAX([{ids}])", label="Weighted utilization (max-over-types)", return_data=True),
            *(query(f"u{i}", expression=f"c{i} / {p.max_concurrency}", label=f"{p.instance_type} utilization")
              for i, p in enumerate(pools, start=1)),
            *(query(f"c{i}", stat=metric_stat(SAGEMAKER_NS, "ConcurrentRequestsPerModel", per_type(p.instance_type), "Maximum", period=60))
              for i, p in enumerate(pools, start=1)),
        ],
        threshold=target,
        evaluation_periods=minutes,
        datapoints=above,
        topic=None,
    )
    cloudwatch.CfnCompositeAlarm(
        scope,
        f"{id}AtMaxCapacity",
        alarm_rule=f'ALARM("{count.attr_arn}") AND (ALARM("{saturated.attr_arn}"))',
        alarm_description=f"{endpoint_name} has run at its maximum of {max_capacity} instances for {minutes} minutes "
        "while its scaling signal stayed above target: it needs capacity it may not add",
        alarm_actions=[topic],
        ok_actions=[topic],
    )
    return [error_rate, *latency]


def dashboard_widgets(endpoint_name: str, pools: Sequence[PoolSpec], *, y: int, target: float = 0.7) -> list[dict[str, Any]]:
    """``PoolDashboard.add_endpoint``'s widgets: a header and seven graphs, three a row, from row ``y``."""
    types = [p.instance_type for p in pools]
    region = Aws.REGION

    def m(namespace: str, name: str, t: str, **options: Any) -> list[Any]:
        return [namespace, name, "EndpointName", endpoint_name, "InstanceType", t, "VariantName", "AllTraffic", options]

    def graph(title: str, metrics: list[Any], x: int, row: int, *, extra: Mapping[str, Any] | None = None,
              y_axis: Mapping[str, Any] | None = None) -> dict[str, Any]:
        props: dict[str, Any] = {"view": "timeSeries", "title": title, "region": region, "metrics": metrics}
        props.update(extra or {})
        props["yAxis"] = dict(y_axis or {})
        props["period"] = 60
        return {"type": "metric", "width": 8, "height": 6, "x": x, "y": row, "properties": props}

    order = " → ".join(f"{i}. `{p.instance_type}` (max {p.max_concurrency:g} concurrent)" for i, p in enumerate(pools, start=1))
    util: list[Any] = [[{"label": "Weighted utilization (max-over-types)",
                         "expression": "MAX([" + ", ".join(f"u{i}" for i in range(1, len(pools) + 1)) + "])", "period": 60}]]
    for i, p in enumerate(pools, start=1):
        util.append([{"label": f"{p.instance_type} utilization", "expression": f"c{i} / {p.max_concurrency}", "period": 60,
                      "visible": False, "id": f"u{i}"}])
    for i, p in enumerate(pools, start=1):
        util.append(m(SAGEMAKER_NS, "ConcurrentRequestsPerModel", p.instance_type, id=f"c{i}", visible=False, period=60, stat="Maximum"))
    graphs = [
        ("Model latency p50 / p99 (µs)",
         [m(SAGEMAKER_NS, "ModelLatency", t, label=f"{t} {s}", period=60, stat=s) for t in types for s in ("p50", "p99")], {}, {}),
        ("Concurrent requests per model (max)",
         [m(SAGEMAKER_NS, "ConcurrentRequestsPerModel", t, label=t, period=60, stat="Maximum") for t in types], {}, {}),
        ("GPU utilization (% x GPUs)", [m(ENDPOINTS_NS, "GPUUtilization", t, label=t, period=60) for t in types], {}, {}),
        ("Instances (CPUUtilization samples)", [m(ENDPOINTS_NS, "CPUUtilization", t, label=t, period=60, stat="SampleCount") for t in types], {}, {}),
        ("Invocations per instance",
         [m(SAGEMAKER_NS, "InvocationsPerInstance", t, label=t, period=60, stat="Sum") for t in types], {}, {}),
        ("Errors (4XX / 5XX)",
         [m(SAGEMAKER_NS, f"Invocation{c}Errors", t, label=f"{t} {c}", period=60, stat="Sum") for t in types for c in ("4XX", "5XX")],
         {}, {}),
        ("Weighted utilization (max-over-types)", util,
         {"annotations": {"horizontal": [{"value": target, "label": f"scaling target {target:g}", "yAxis": "left"}]}},
         {"left": {"min": 0, "showUnits": False}}),
    ]
    widgets: list[dict[str, Any]] = [{
        "type": "text", "width": 24, "height": 2, "x": 0, "y": y,
        "properties": {"markdown": f"## {endpoint_name} / AllTraffic\nPools in priority order: {order}"},
    }]
    for k, (title, metrics, extra, y_axis) in enumerate(graphs):
        widgets.append(graph(title, metrics, 8 * (k % 3), y + 2 + 6 * (k // 3), extra=extra, y_axis=y_axis))
    return widgets


#: Height of one endpoint's rows on the dashboard (a 2-high header and three 6-high rows).
DASHBOARD_ROWS = 20


def dashboard(scope: Construct, id: str, widgets: list[dict[str, Any]]) -> cloudwatch.CfnDashboard:
    return cloudwatch.CfnDashboard(
        scope, id, dashboard_body=json.dumps({"widgets": widgets}, ensure_ascii=False, separators=(",", ":"))
    )


def alerts_topic(scope: Construct) -> sns.CfnTopic:
    """An SNS topic for alarms, encrypted with a key that CloudWatch may use."""
    key = kms.CfnKey(
        scope,
        "AlertsKey",
        enable_key_rotation=True,
        key_policy=document(
            statement("kms:*", "*", principal={"AWS": account_root()}),
            statement(["kms:Decrypt", "kms:GenerateDataKey*"], "*", principal={"Service": "cloudwatch.amazonaws.com"}),
        ),
    )
    _retain(key)
    return ssl_only_topic(scope, "Alerts", key)


# -- the example stacks --------------------------------------------------------------------


#: The real-time example's pools: type, concurrency one instance sustains, p99 latency alarm (s).
REALTIME_POOLS = [PoolSpec("ml.g6e.48xlarge", 32), PoolSpec("ml.g6.48xlarge", 16), PoolSpec("ml.p4d.24xlarge", 24, 30)]


def realtime_endpoint(scope: Construct, id: str, *, endpoint_name: str, models: Sequence[sagemaker.CfnModel],
                      topic: str, min_instances: int = 2, max_instances: int = 8) -> Endpoint:
    """The real-time example's endpoint: one model per pool, canary deploys rolled back by its alarms,
    weighted-utilization scaling. ``models``: the variant's model, then each fallback pool's."""
    rollback = pool_alarms(scope, f"{id}Alarms", endpoint_name=endpoint_name, pools=REALTIME_POOLS, topic=topic,
                           max_capacity=max_instances)
    ep = sagemaker.CfnEndpoint
    tags = {"workload": "llm"}
    endpoint = pooled_endpoint(
        scope,
        id,
        pools=[Pool(REALTIME_POOLS[0].instance_type), *(Pool(p.instance_type, m) for p, m in zip(REALTIME_POOLS[1:], models[1:]))],
        model=models[0],
        initial_instance_count=min_instances,
        download_timeout_s=1800,
        startup_timeout_s=1200,
        deployment=ep.DeploymentConfigProperty(
            auto_rollback_configuration=ep.AutoRollbackConfigProperty(
                alarms=[ep.AlarmProperty(alarm_name=a.ref) for a in rollback]
            ),
            blue_green_update_policy=ep.BlueGreenUpdatePolicyProperty(
                maximum_execution_timeout_in_seconds=7200,
                termination_wait_in_seconds=300,
                traffic_routing_configuration=ep.TrafficRoutingConfigProperty(
                    type="CANARY",
                    canary_size=ep.CapacitySizeProperty(type="CAPACITY_PERCENT", value=25),
                    wait_interval_in_seconds=600,
                ),
            ),
        ),
        endpoint_name=endpoint_name,
        tags=tags,
    )
    # A fixed name: written literally (no GetAtt), so the target needs an explicit DependsOn.
    name = endpoint_name
    target = scalable_target(
        scope,
        f"{id}Scaling",
        resource_id=f"endpoint/{name}/variant/AllTraffic",
        dimension="sagemaker:variant:DesiredInstanceCount",
        min_capacity=min_instances,
        max_capacity=max_instances,
        depends_on=endpoint.endpoint,
        tags=tags,
    )
    target_tracking(
        scope,
        f"{id}WeightedUtilization",
        target,
        name=f"{id}-weighted-utilization",
        metrics=weighted_utilization_queries(
            lambda t: dims(EndpointName=name, InstanceType=t, VariantName="AllTraffic"),
            "ConcurrentRequestsPerModel",
            [(p.instance_type, p.max_concurrency) for p in REALTIME_POOLS],
        ),
        target_value=0.7,
        scale_in_cooldown=1200,
        scale_out_cooldown=900,
    )
    return endpoint


def realtime_pooled_llm(app: App, name: str = "RealtimePooledLlm") -> Stack:
    """``RealtimePooledLlmStack``'s twin."""
    stack = Stack(app, name)
    logs = access_log_bucket(stack, "ArtifactsAccessLogs")
    key = rotated_key(stack, "ArtifactsKey")
    artifacts = kms_bucket(stack, "Artifacts", key, logs, "artifacts/")
    ssl_only_bucket_policy(stack, "ArtifactsAccessLogsPolicy", logs, [log_delivery(logs, artifacts, "artifacts/")])
    ssl_only_bucket_policy(stack, "ArtifactsPolicy", artifacts)

    def build(id: str, prefix: str, env: Mapping[str, str]) -> sagemaker.CfnModel:
        return pool_model(
            stack, id, source=S3Source(prefix, bucket=artifacts, key=key), environment=env, network_isolation=True
        )

    tp8 = build("TensorParallel8", "llm/fp16-tp8/", {"OPTION_TENSOR_PARALLEL_DEGREE": "8"})
    spec = build(
        "SpeculativeDecoding",
        "llm/fp16-spec/",
        {"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_SPECULATIVE_DRAFT_MODEL": "/opt/ml/model/draft"},
    )
    int4 = build("Int4", "llm/awq-int4/", {"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_QUANTIZE": "awq"})
    topic = alerts_topic(stack)
    realtime_endpoint(stack, "LlmEndpoint", endpoint_name="llm-pooled", models=[tp8, spec, int4], topic=topic.ref)
    dashboard(stack, "Dashboard", dashboard_widgets("llm-pooled", REALTIME_POOLS, y=0))
    return stack


def inference_component_pools(app: App, name: str = "InferenceComponentPools") -> Stack:
    """``InferenceComponentPoolsStack``'s twin."""
    stack = Stack(app, name)
    p5, g6 = "ml.p5.48xlarge", "ml.g6.48xlarge"
    p5_build = pool_model(
        stack, "P5Fp8", source=S3Source("llm/p5-fp8-tp8/"),
        environment={"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_QUANTIZE": "fp8"},
    )
    g6_build = pool_model(
        stack, "G6Awq", source=S3Source("llm/g6-awq-tp8/"),
        environment={"OPTION_TENSOR_PARALLEL_DEGREE": "8", "OPTION_QUANTIZE": "awq"},
    )
    role, policy = role_with_policy(stack, "LlmEndpointExecutionRole", logs_and_metrics())
    endpoint = pooled_endpoint(
        stack,
        "LlmEndpoint",
        pools=[Pool(p5), Pool(g6)],
        model=None,
        managed_scaling=(0, 8),
        execution_role_arn=role.attr_arn,
    )
    endpoint.config.add_resource_dependency(policy)
    rollback = sum_alarm(
        stack,
        "ComponentModelErrors",
        metric_name="InvocationModelErrors",
        dimensions={"InferenceComponentName": "llm-pooled-ic"},
        description="Model errors on llm-pooled-ic: rolls back a component deployment in progress",
    )
    ic = sagemaker.CfnInferenceComponent
    component = ic(
        stack,
        "LlmComponent",
        deployment_config=ic.InferenceComponentDeploymentConfigProperty(
            auto_rollback_configuration=ic.AutoRollbackConfigurationProperty(
                alarms=[ic.AlarmProperty(alarm_name=rollback.ref)]
            ),
            rolling_update_policy=ic.InferenceComponentRollingUpdatePolicyProperty(
                maximum_batch_size=ic.InferenceComponentCapacitySizeProperty(type="COPY_COUNT", value=1),
                maximum_execution_timeout_in_seconds=10800,
                wait_interval_in_seconds=600,
            ),
        ),
        endpoint_name=endpoint.endpoint.attr_endpoint_name,
        inference_component_name="llm-pooled-ic",
        runtime_config=ic.InferenceComponentRuntimeConfigProperty(copy_count=4),
        specifications=[  # type: ignore[call-arg]
            {
                "computeResourceRequirements": {"minMemoryRequiredInMb": mem, "numberOfAcceleratorDevicesRequired": 8},
                "instanceType": itype,
                "modelName": model.attr_model_name,
            }
            for itype, model, mem in ((p5, p5_build, 65536), (g6, g6_build, 32768))
        ],
        variant_name="AllTraffic",
    )
    target = scalable_target(
        stack,
        "LlmComponentScaling",
        resource_id="inference-component/llm-pooled-ic",
        dimension="sagemaker:inference-component:DesiredCopyCount",
        min_capacity=0,
        max_capacity=8,
        depends_on=component,
    )
    scale_from_zero(
        stack,
        "LlmComponentScaleFromZero",
        target,
        name="llm-component-scale-from-zero",
        cooldown=WAKE_UP_COOLDOWN_SECONDS,
        # No breach while any copy reports requests: ExactCapacity must not cut serving copies down.
        metrics=[
            query("expr_1", expression="IF(FILL(busy, 0) > 0, 0, failures)", label="Requests that found no copy (none while a copy serves)",
                  return_data=True),
            query("failures", stat=metric_stat(SAGEMAKER_NS, "NoCapacityInvocationFailures", dims(InferenceComponentName="llm-pooled-ic"), "Sum",
                                               period=60)),
            query("busy", stat=metric_stat(SAGEMAKER_NS, "ConcurrentRequestsPerCopy", dims(InferenceComponentName="llm-pooled-ic"), "Maximum",
                                           period=60)),
        ],
        datapoints=1,
        description="A request found no copy of inference component llm-pooled-ic: set one.",
    )
    target_tracking(
        stack,
        "LlmComponentWeightedUtilization",
        target,
        name="llm-component-weighted-utilization",
        metrics=weighted_utilization_queries(
            lambda t: dims(InferenceComponentName="llm-pooled-ic", InstanceType=t),
            "ConcurrentRequestsPerCopy",
            [(p5, 32), (g6, 12)],
            # Idle copies may publish no concurrency: read 0 while copies report their presence.
            presence=("/aws/sagemaker/InferenceComponents", "CPUUtilizationNormalized"),
        ),
        target_value=0.7,
        scale_in_cooldown=900,
        scale_out_cooldown=COLD_START_SECONDS,
    )
    return stack


def async_scale_to_zero(app: App, name: str = "AsyncScaleToZero") -> Stack:
    """``AsyncScaleToZeroStack``'s twin."""
    stack = Stack(app, name)
    logs = access_log_bucket(stack, "AsyncAccessLogs")
    key = rotated_key(stack, "AsyncKey")
    succeeded = ssl_only_topic(stack, "Succeeded", key)
    failed = ssl_only_topic(stack, "Failed", key)
    output = kms_bucket(stack, "AsyncOutput", key, logs, "async-inference/")
    ssl_only_bucket_policy(stack, "AsyncAccessLogsPolicy", logs, [log_delivery(logs, output, "async-inference/")])
    ssl_only_bucket_policy(stack, "AsyncOutputPolicy", output)
    out_arn = output.attr_arn
    kms_use = ["kms:Decrypt", "kms:GenerateDataKey"]
    model = pool_model(
        stack,
        "Llm8bAwq",
        source=S3Source("llm/8b-awq/"),
        environment={"OPTION_QUANTIZE": "awq", "OPTION_MAX_ROLLING_BATCH_SIZE": "16"},
        network_isolation=True,
        extra_statements=[
            statement("s3:GetObject", f"{out_arn}/async-inference/input/*"),
            statement("s3:PutObject", [f"{out_arn}/async-inference/output/*", f"{out_arn}/async-inference/failure/*"]),
            statement("sns:Publish", [succeeded.ref, failed.ref]),
            statement(kms_use, key.attr_arn),
        ],
    )
    cfg = sagemaker.CfnEndpointConfig
    endpoint = pooled_endpoint(
        stack,
        "BatchEndpoint",
        pools=[Pool("ml.g6e.2xlarge"), Pool("ml.g6.2xlarge"), Pool("ml.g5.2xlarge")],
        model=model,
        async_config=cfg.AsyncInferenceConfigProperty(
            client_config=cfg.AsyncInferenceClientConfigProperty(max_concurrent_invocations_per_instance=4),
            output_config=cfg.AsyncInferenceOutputConfigProperty(
                kms_key_id=key.attr_arn,
                notification_config=cfg.AsyncInferenceNotificationConfigProperty(
                    error_topic=failed.ref, success_topic=succeeded.ref
                ),
                s3_failure_path=f"s3://{output.ref}/async-inference/failure/",
                s3_output_path=f"s3://{output.ref}/async-inference/output/",
            ),
        ),
    )
    role_with_policy(
        stack,
        "AsyncClient",
        [
            statement("sagemaker:InvokeEndpointAsync", endpoint.endpoint.attr_endpoint_arn),
            statement("s3:PutObject", f"{out_arn}/async-inference/input/*"),
            statement("s3:GetObject", [f"{out_arn}/async-inference/output/*", f"{out_arn}/async-inference/failure/*"]),
            statement(kms_use, key.attr_arn),
        ],
        principal={"AWS": account_root()},
    )
    name = endpoint.endpoint.attr_endpoint_name
    target = scalable_target(
        stack,
        "BatchEndpointScaling",
        resource_id=f"endpoint/{name}/variant/AllTraffic",
        dimension="sagemaker:variant:DesiredInstanceCount",
        min_capacity=0,
        max_capacity=4,
    )
    target_tracking(
        stack,
        "BatchEndpointBacklogPerInstance",
        target,
        name="batch-endpoint-backlog-per-instance",
        # Nothing to track while requests wait without an instance: the wake-up step owns that.
        metrics=[query("waiting", stat=metric_stat(SAGEMAKER_NS, "HasBacklogWithoutCapacity", dims(EndpointName=name), "Average")),
                 query("backlog", stat=metric_stat(SAGEMAKER_NS, "ApproximateBacklogSizePerInstance", dims(EndpointName=name), "Average")),
                 query("result", expression="IF(FILL(waiting, 0) < 1, backlog)", label="Backlog per instance (none while no instance serves)",
                       return_data=True)],
        target_value=5,
        scale_in_cooldown=600,
    )
    scale_from_zero(
        stack,
        "BatchEndpointScaleFromZero",
        target,
        name="batch-endpoint-scale-from-zero",
        cooldown=WAKE_UP_COOLDOWN_SECONDS,
        metric_name="HasBacklogWithoutCapacity",
        dimensions=dims(EndpointName=name),
        statistic="Average",
        datapoints=2,
        description="Async requests wait and the endpoint has no instance: set one.",
    )
    return stack


#: The example app's stacks, in app.py's order: {stack name: builder}.
EXAMPLE_STACKS = {
    "RealtimePooledLlm": realtime_pooled_llm,
    "InferenceComponentPools": inference_component_pools,
    "AsyncScaleToZero": async_scale_to_zero,
}


#: cdk.json's context (the recommended feature flags): the example app synthesizes with it, so does the twin.
def build_app(app: App | None = None, *, fleet: int | None = None) -> App:
    """The example app's twin, or (``fleet=N``) the N-endpoint fleet's twin, with cdk.json's context."""
    app = apply_context(app or App(outdir=None if "CDK_OUTDIR" in os.environ else "cdk.out"))
    if fleet is None:
        for name, build in EXAMPLE_STACKS.items():
            build(app, name)
    else:
        from fleet import l1_fleet  # noqa: PLC0415 (benchmarks/ is on sys.path when run as a script)

        l1_fleet(app, fleet)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleet", type=int, default=None, help="N pooled endpoints instead of the example app")
    args = parser.parse_args()
    build_app(fleet=args.fleet).synth()


if __name__ == "__main__":
    main()
