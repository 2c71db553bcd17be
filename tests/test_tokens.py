"""The token corpus: every public scalar prop given as a deploy-time parameter (a ``CfnParameter``).

Beside the bad-input corpus (``test_bad_input.py``). For each prop one case:

* **accepted** (:data:`ACCEPTS`): the prop is given as a Number parameter (numbers, and durations
  as ``Duration.seconds(number)``) or a String parameter, the case is built in a stack of its
  own and synthesized, and the test asserts what reaches the template: the parameter's ``Ref``
  at the exact property path (or inside the ``Fn::Join`` of an ARN, a description, a dashboard
  body), what the library derives from it (an alarm threshold without lost arithmetic, a
  scalable target's bounds ...) or that a derivation is skipped knowingly. Every accepted case
  also checks that the parameter is referenced (not dropped), that no number token leaked as
  its placeholder value (``-1.888e+289``), and that no construct id holds a token;
* **refused** (:data:`REFUSES`): the prop cannot take a token (it becomes an alarm threshold in
  microseconds, a whole number of evaluation periods ...): ``PoolConfigError`` naming the field
  and asking for a concrete value, not a CDK error.

:func:`test_every_scalar_prop_has_a_case` enumerates the public scalar props of the public API
with ``inspect.signature``: a new prop fails it until it has its case (or a reason in :data:`EXCLUDED`).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_iam as iam
from constructs import Construct

from sagemaker_pools import (
    AsyncInference,
    BenchmarkRole,
    BenchmarkWorkload,
    CapacitySize,
    ComponentBatchSize,
    ComponentDeploymentPolicy,
    ComponentSpec,
    ContainerImage,
    DataCapture,
    DeploymentPolicy,
    InferenceComponent,
    InstancePool,
    InstanceScaling,
    ModelData,
    PoolAlarms,
    PoolCapacity,
    PoolConfigError,
    PoolDashboard,
    PooledEndpoint,
    PoolModel,
    Routing,
    ShadowVariant,
    VariantScaling,
    check_gates,
)
from support.frozen import frozen
from support.synth import new_app, read_assembly

G6E, G6 = "ml.g6e.48xlarge", "ml.g6.48xlarge"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1"
#: The parameter of every case (each case has a stack of its own).
PARAMETER = "Token"
REF = {"Ref": PARAMETER}

CONFIG, ENDPOINT, COMPONENT = "AWS::SageMaker::EndpointConfig", "AWS::SageMaker::Endpoint", "AWS::SageMaker::InferenceComponent"
TARGET, POLICY, ALARM = "AWS::ApplicationAutoScaling::ScalableTarget", "AWS::ApplicationAutoScaling::ScalingPolicy", "AWS::CloudWatch::Alarm"
DASHBOARD = "AWS::CloudWatch::Dashboard"
WORKLOAD = "AWS::SageMaker::AIWorkloadConfig"

# -- builders ---------------------------------------------------------------------------------


def _pools(*types: Any, concurrency: tuple[Any, ...] = (8, 4)) -> list[InstancePool]:
    return [InstancePool(instance_type=t, max_concurrency=c) for t, c in zip(types, concurrency)]


def _endpoint(scope: Construct, **props: Any) -> PooledEndpoint:
    """A single-model endpoint on G6E then G6, both with ``max_concurrency`` (weighted scaling works)."""
    props.setdefault("model", PoolModel.from_model_name(scope, "Base", "base-model"))
    props.setdefault("pools", _pools(G6E, G6))
    return PooledEndpoint(scope, "Endpoint", **props)


def _async(scope: Construct, **props: Any) -> PooledEndpoint:
    props.setdefault("async_inference", AsyncInference())
    return _endpoint(scope, **props)


def _host(scope: Construct, **props: Any) -> PooledEndpoint:
    """An endpoint without a model that hosts inference components."""
    props.setdefault("instance_scaling", InstanceScaling(max_instance_count=4))
    return PooledEndpoint(scope, "Host", pools=_pools(G6E, G6), **props)


def _spec(scope: Construct, name: str, **props: Any) -> ComponentSpec:
    props.setdefault("min_memory_in_mb", 1024)
    return ComponentSpec(model=PoolModel.from_model_name(scope, f"Model-{name}", name), **props)


def _component(scope: Construct, **props: Any) -> InferenceComponent:
    """A component on :func:`_host`, by default with one specification per pool (G6E, G6)."""
    specs = props.pop("specifications", None) or [_spec(scope, "big", instance_type=G6E), _spec(scope, "small", instance_type=G6)]
    return _host(scope).add_inference_component("Component", specifications=specs, **props)


def _observed(scope: Construct, endpoint: PooledEndpoint, **alarms: Any) -> PooledEndpoint:
    """``endpoint`` with alarms (at-max included) and a dashboard: everything that reads its props."""
    PoolAlarms(scope, "Alarms", endpoint=endpoint, **alarms)
    PoolDashboard(scope, "Dashboard", endpoints=[endpoint])
    return endpoint


def _deployed(policy: Callable[..., DeploymentPolicy], key: str, props: dict[str, Any]) -> Callable[[Construct, Any], object]:
    """An endpoint of 4 instances deployed by ``policy(**props)`` with ``key`` as a duration parameter."""
    return lambda s, v: _endpoint(s, initial_instance_count=4, deployment=policy(**props, **{key: Duration.seconds(v)}))


def _scaled(s: Construct, **props: Any) -> VariantScaling:
    return _endpoint(s).auto_scale(max_capacity=4, **props)


def _policy(s: Construct, method: str, target: Any) -> PooledEndpoint:
    """An endpoint scaled by ``method(target=target)``."""
    scaling = _scaled(s)
    getattr(scaling, method)(target=target)
    return scaling.endpoint  # type: ignore[return-value]


def _weighted_observed(s: Construct, target: Any) -> None:
    _observed(s, _policy(s, "scale_on_weighted_utilization", target))


def _canary_instances(s: Construct, count: Any) -> PooledEndpoint:
    canary = DeploymentPolicy.canary(canary_size=CapacitySize.instances(count), wait_interval=Duration.minutes(5))
    return _endpoint(s, initial_instance_count=4, deployment=canary)


def _named(s: Construct, name: Any) -> None:
    """An endpoint named by ``name`` that rolls back on alarms built on that name; its own alarms are fit to as well."""
    rollback = PoolAlarms(s, "Alarms", endpoint=PooledEndpoint.from_endpoint_name(s, "Named", name), pools=_pools(G6E, G6)).rollback_alarms
    endpoint = _endpoint(s, endpoint_name=name, deployment=DeploymentPolicy.all_at_once(rollback_alarms=rollback))
    endpoint.auto_scale(max_capacity=4)
    # A name from a parameter is fixed, not generated: no cycle, so this does not raise.
    PoolAlarms(s, "Own", endpoint=endpoint).rollback_alarms


def _imported(s: Construct, name: Any, variant: Any) -> None:
    """Alarms on, and an invoke grant for, an endpoint imported by name."""
    endpoint = PooledEndpoint.from_endpoint_name(s, "Imported", name, variant_name=variant)
    PoolAlarms(s, "Alarms", endpoint=endpoint, pools=_pools(G6E, G6))
    endpoint.grant_invoke(iam.Role(s, "Caller", assumed_by=iam.AccountRootPrincipal()))


def _workload(s: Construct, **props: Any) -> BenchmarkWorkload:
    """A closed-loop workload of 100 requests (each prop may replace those)."""
    return BenchmarkWorkload(s, "Workload", **{"concurrency": 8, "request_count": 100, **props})


def _benchmark_role(s: Construct, output_prefix: Any) -> None:
    """A benchmark role writing under ``output_prefix`` of a KMS-encrypted bucket, its output location an output."""
    bucket = s3.Bucket(s, "Results", encryption=s3.BucketEncryption.KMS, enforce_ssl=True)
    role = BenchmarkRole(s, "Bench", endpoint=_endpoint(s), output_bucket=bucket, output_prefix=output_prefix)
    cdk.CfnOutput(s, "Output", value=role.output_location)


def _invoke_resource(b: Built) -> Any:
    (statement,) = b.one("AWS::IAM::Policy")["PolicyDocument"]["Statement"]
    return statement["Resource"]


def _logical_id(b: Built, type_name: str) -> str:
    (found,) = [k for k, v in b.template["Resources"].items() if v["Type"] == type_name]
    return found


RECOMMENDATION = {
    "model_package_arn": "arn:aws:sagemaker:us-east-1:123456789012:model-package/llm/3",
    "inference_specification_name": "g6",
}


def _weighted_component(s: Construct) -> InferenceComponent:
    return _component(s, specifications=[_spec(s, "big", instance_type=G6E, max_concurrency=8), _spec(s, "small", instance_type=G6, max_concurrency=4)])


def _model_data_url(b: Built) -> Any:
    container = b.one("AWS::SageMaker::Model")["PrimaryContainer"]
    return container.get("ModelDataUrl") or container["ModelDataSource"]["S3DataSource"]["S3Uri"]


def _granted(b: Built, action: str) -> list[Any]:
    """Every resource of a policy statement that allows ``action``."""
    return [
        r
        for p in b.all("AWS::IAM::Policy")
        for st in p["PolicyDocument"]["Statement"]
        if action in _list(st["Action"])
        for r in _list(st["Resource"])
    ]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def assert_in(part: Any, whole: Any) -> None:
    assert part in whole, f"{part!r} not in {whole!r}"


# -- looking into a template -----------------------------------------------------------------------


@dataclass(frozen=True)
class Built:
    """A case's synthesized template."""

    template: dict[str, Any]

    def all(self, type_name: str, id_prefix: str = "") -> list[dict[str, Any]]:
        """The properties of every resource of ``type_name`` whose logical id starts with ``id_prefix``, by logical id."""
        found = sorted((k, v) for k, v in self.template["Resources"].items() if v["Type"] == type_name and k.startswith(id_prefix))
        return [v.get("Properties", {}) for _, v in found]

    def one(self, type_name: str, id_prefix: str = "") -> dict[str, Any]:
        """The properties of the single resource of ``type_name`` (whose logical id starts with ``id_prefix``)."""
        found = self.all(type_name, id_prefix)
        assert len(found) == 1, f"expected one {type_name} {id_prefix!r}, found {len(found)}"
        return found[0]

    def resource(self, type_name: str, id_prefix: str = "") -> dict[str, Any]:
        """The whole single resource (DependsOn included)."""
        found = [v for k, v in self.template["Resources"].items() if v["Type"] == type_name and k.startswith(id_prefix)]
        assert len(found) == 1
        return found[0]  # type: ignore[no-any-return]


def at(value: Any, path: str) -> Any:
    """``value`` followed along a dotted path of keys and list indexes."""
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def eq(actual: Any, expected: Any) -> None:
    assert actual == expected, f"{actual!r} != {expected!r}"


def joined(value: Any, *parts: str) -> None:
    """``value`` is an ``Fn::Join`` that holds the parameter's ``Ref`` (and ``parts``, literally)."""
    assert isinstance(value, dict) and set(value) == {"Fn::Join"}, value
    pieces = value["Fn::Join"][1]
    assert REF in pieces, value
    text = "".join(p for p in pieces if isinstance(p, str))
    for part in parts:
        assert part in text, (part, text)


def ref_text(value: Any) -> str:
    """``value`` (an ``Fn::Join``) as text, with ``{REF}`` where the parameter goes."""
    assert isinstance(value, dict) and "Fn::Join" in value, value
    return "".join(p if isinstance(p, str) else "{REF}" if p == REF else "{other}" for p in value["Fn::Join"][1])


def dimension(props: dict[str, Any], name: str, metric_id: str | None = None) -> Any:
    """The value of dimension ``name`` of an alarm's metric (its first metric, or the one with id ``metric_id``)."""
    if "Dimensions" in props:
        dimensions = props["Dimensions"]
    else:
        stats = [m for m in props["Metrics"] if "MetricStat" in m and metric_id in (None, m["Id"])]
        dimensions = stats[0]["MetricStat"]["Metric"]["Dimensions"]
    return {d["Name"]: d["Value"] for d in dimensions}[name]


def policy_queries(props: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A target-tracking policy's customized metric queries by id."""
    queries = props["TargetTrackingScalingPolicyConfiguration"]["CustomizedMetricSpecification"]["Metrics"]
    return {q["Id"]: q for q in queries}


def query_dimension(query: dict[str, Any], name: str) -> Any:
    return {d["Name"]: d["Value"] for d in query["MetricStat"]["Metric"]["Dimensions"]}[name]


def tracking(props: dict[str, Any], key: str) -> Any:
    return props["TargetTrackingScalingPolicyConfiguration"][key]


# -- the accepted props ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Accepts:
    """A prop that takes a parameter: ``build(scope, token)`` and what reaches the template (``check``)."""

    prop: str
    kind: str  # "Number", "String" or "Duration" (a Number parameter in Duration.seconds)
    default: float | str  # the parameter's default, valid for the prop (CDK validates the template with it)
    build: Callable[[Construct, Any], object]
    check: Callable[[Built], object]
    case: str = ""  # a second case of the same prop

    @property
    def id(self) -> str:
        return f"{self.prop} ({self.case})" if self.case else self.prop


def _cooldown_cases(method: str, build: Callable[[Construct, dict[str, Any]], object], policy_id: str) -> list[Accepts]:
    return [
        Accepts(
            f"{method}.{key}", "Duration", 300, lambda s, v, key=key: build(s, {key: Duration.seconds(v)}),
            lambda b, cfn=cfn: eq(tracking(b.one(POLICY, f"EndpointScalingAllTraffic{policy_id}"), cfn), REF),
        )
        for key, cfn in (("scale_in_cooldown", "ScaleInCooldown"), ("scale_out_cooldown", "ScaleOutCooldown"))
    ]


def _at_max(b: Built) -> None:
    """The at-max count alarm compares the rounded count with the parameter itself: no arithmetic on it."""
    count = b.one(ALARM, "AlarmsAtMaxCount")
    eq(count["Threshold"], REF)
    eq(count["ComparisonOperator"], "GreaterThanOrEqualToThreshold")
    eq(next(m["Expression"] for m in count["Metrics"] if m.get("ReturnData")), "FLOOR(n + 0.5)")
    assert "{REF}" in ref_text(count["AlarmDescription"])


def _saturated(b: Built, policy_id: str) -> None:
    """The at-max alarm's signal half holds the policy's own (parameter) target."""
    eq(b.one(ALARM, f"AlarmsSaturated{policy_id}")["Threshold"], REF)


def _deployment(path: str) -> Callable[[Built], None]:
    return lambda b: eq(at(b.one(ENDPOINT)["DeploymentConfig"], path), REF)


BLUE_GREEN = "BlueGreenUpdatePolicy"
ROUTING = f"{BLUE_GREEN}.TrafficRoutingConfiguration"

ACCEPTS: list[Accepts] = [
    # -- InstancePool ----------------------------------------------------------------------------
    Accepts(
        "InstancePool.instance_type", "String", G6,
        lambda s, v: _observed(s, _endpoint(s, pools=_pools(G6E, v)), max_capacity=4).auto_scale(max_capacity=4).scale_on_weighted_utilization(),
        lambda b: (
            eq(at(b.one(CONFIG), "ProductionVariants.0.InstancePools.1.InstanceType"), REF),
            # Construct ids are literal: the second pool's alarm is named by its position.
            eq(dimension(b.one(ALARM, "AlarmsLatencypool2"), "InstanceType"), REF),
            eq(dimension(b.one(ALARM, "AlarmsLatencymlg6e48xlarge"), "InstanceType"), G6E),
            eq(query_dimension(policy_queries(b.one(POLICY))["c2"], "InstanceType"), REF),
            eq(query_dimension(policy_queries(b.one(POLICY))["c1"], "InstanceType"), G6E),
            # The fallback alarm counts the parameter's type; the dashboard graphs it.
            eq(query_dimension(next(m for m in b.one(ALARM, "AlarmsFallbackInUse")["Metrics"] if m["Id"] == "s2"), "InstanceType"), REF),
            assert_in("`{REF}`", ref_text(b.one(DASHBOARD)["DashboardBody"])),
        ),
    ),
    Accepts(
        "InstancePool.max_concurrency", "Number", 8,
        lambda s, v: _observed(s, _endpoint(s, pools=_pools(G6E, G6, concurrency=(v, 4))), max_capacity=4),
        lambda b: (
            # The weighted utilization divides by the parameter in the expression text.
            eq(ref_text(next(m["Expression"] for m in b.one(ALARM, "AlarmsSaturated")["Metrics"] if m["Id"] == "u1")), "c1 / {REF}"),
            eq(next(m["Expression"] for m in b.one(ALARM, "AlarmsSaturated")["Metrics"] if m["Id"] == "u2"), "c2 / 4"),
            assert_in("(max {REF} concurrent)", ref_text(b.one(DASHBOARD)["DashboardBody"])),
            assert_in('"expression":"c1 / {REF}"', ref_text(b.one(DASHBOARD)["DashboardBody"])),
        ),
    ),
    Accepts(
        "InstancePool.priority", "Number", 1,
        lambda s, v: _endpoint(s, pools=[InstancePool(instance_type=G6, priority=2), InstancePool(instance_type=G6E, priority=v)]),
        lambda b: (
            # A parameter priority cannot be ordered at synth time: the list order stands.
            eq(at(b.one(CONFIG), "ProductionVariants.0.InstancePools.1.Priority"), REF),
            eq(at(b.one(CONFIG), "ProductionVariants.0.InstancePools.1.InstanceType"), G6E),
            eq(at(b.one(CONFIG), "ProductionVariants.0.InstancePools.0.Priority"), 2),
        ),
    ),
    # -- PooledEndpoint --------------------------------------------------------------------------
    Accepts(
        "PooledEndpoint.initial_instance_count", "Number", 2,
        lambda s, v: _endpoint(s, initial_instance_count=v).auto_scale(max_capacity=4),
        lambda b: (
            eq(at(b.one(CONFIG), "ProductionVariants.0.InitialInstanceCount"), REF),
            # The autoscaling minimum follows the initial count when not given.
            eq(b.one(TARGET)["MinCapacity"], REF),
            eq(b.one(TARGET)["MaxCapacity"], 4),
        ),
    ),
    Accepts(
        "PooledEndpoint.variant_name", "String", "AllTraffic",
        lambda s, v: _observed(s, _endpoint(s, variant_name=v), max_capacity=4).auto_scale(max_capacity=4).scale_on_weighted_utilization(),
        lambda b: (
            eq(at(b.one(CONFIG), "ProductionVariants.0.VariantName"), REF),
            # The scalable target's id cannot carry the token: "Scaling", not "Scaling<variant>".
            eq(ref_text(b.one(TARGET, "EndpointScaling")["ResourceId"]), "endpoint/{other}/variant/{REF}"),
            eq(dimension(b.one(ALARM, "AlarmsLatencymlg6e"), "VariantName"), REF),
            eq(query_dimension(policy_queries(b.one(POLICY))["c1"], "VariantName"), REF),
            assert_in("VariantName\\\",\\\"{REF}", json.dumps(ref_text(b.one(DASHBOARD)["DashboardBody"]))),
        ),
    ),
    Accepts(
        "PooledEndpoint.provision_timeout", "Duration", 600,
        lambda s, v: _endpoint(s, provision_timeout=Duration.seconds(v), deployment=DeploymentPolicy.all_at_once(max_execution_timeout=Duration.hours(2))),
        lambda b: eq(at(b.one(CONFIG), "ProductionVariants.0.VariantInstanceProvisionTimeoutInSeconds"), REF),
    ),
    Accepts(
        "PooledEndpoint.provision_timeout", "Duration", 600,
        lambda s, v: _async(s, provision_timeout=Duration.seconds(v)).auto_scale_on_backlog(max_capacity=2),
        # A parameter timeout still reaches the config; the wake-up's cooldown does not depend on it.
        lambda b: (
            eq(at(b.one(CONFIG), "ProductionVariants.0.VariantInstanceProvisionTimeoutInSeconds"), REF),
            eq(b.one(POLICY, "EndpointScalingAllTrafficScaleFromZero")["StepScalingPolicyConfiguration"]["Cooldown"], 300),
        ),
        case="beside the wake-up",
    ),
    Accepts(
        "PooledEndpoint.volume_size_in_gb", "Number", 100,
        lambda s, v: _endpoint(s, pools=[InstancePool(instance_type="ml.inf2.48xlarge")], volume_size_in_gb=v),
        lambda b: eq(at(b.one(CONFIG), "ProductionVariants.0.VolumeSizeInGB"), REF),
    ),
    Accepts(
        "PooledEndpoint.model_data_download_timeout", "Duration", 600,
        lambda s, v: _endpoint(s, model_data_download_timeout=Duration.seconds(v)),
        lambda b: eq(at(b.one(CONFIG), "ProductionVariants.0.ModelDataDownloadTimeoutInSeconds"), REF),
    ),
    Accepts(
        "PooledEndpoint.container_startup_health_check_timeout", "Duration", 600,
        lambda s, v: _endpoint(s, container_startup_health_check_timeout=Duration.seconds(v)),
        lambda b: eq(at(b.one(CONFIG), "ProductionVariants.0.ContainerStartupHealthCheckTimeoutInSeconds"), REF),
    ),
    Accepts(
        "PooledEndpoint.endpoint_name", "String", "llm",
        _named,
        lambda b: (
            eq(b.one(ENDPOINT)["EndpointName"], REF),
            # A parameter name orders nothing: the alarms may roll the endpoint back (no cycle).
            eq(len(at(b.one(ENDPOINT), "DeploymentConfig.AutoRollbackConfiguration.Alarms")), 3),
            eq(dimension(b.one(ALARM, "AlarmsErrorRate5xx"), "EndpointName", "errors"), REF),
            eq(ref_text(b.one(TARGET)["ResourceId"]), "endpoint/{REF}/variant/AllTraffic"),
            # ... so the scalable target waits for the endpoint explicitly.
            assert_in("EndpointEEF1FD8F", b.resource(TARGET).get("DependsOn", [])),
        ),
    ),
    # -- PooledEndpoint.auto_scale ---------------------------------------------------------------
    Accepts(
        "PooledEndpoint.auto_scale.max_capacity", "Number", 4,
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_endpoint(s).auto_scale(max_capacity=v).endpoint),
        lambda b: (eq(b.one(TARGET)["MaxCapacity"], REF), _at_max(b)),
    ),
    Accepts(
        "PooledEndpoint.auto_scale.min_capacity", "Number", 1,
        lambda s, v: _scaled(s, min_capacity=v),
        lambda b: (
            eq(b.one(TARGET)["MinCapacity"], REF),
            # The initial count follows the minimum when not given.
            eq(at(b.one(CONFIG), "ProductionVariants.0.InitialInstanceCount"), REF),
        ),
    ),
    # -- PooledEndpoint.auto_scale_on_backlog ----------------------------------------------------
    Accepts(
        "PooledEndpoint.auto_scale_on_backlog.max_capacity", "Number", 4,
        lambda s, v: _async(s).auto_scale_on_backlog(max_capacity=v),
        lambda b: (eq(b.one(TARGET)["MaxCapacity"], REF), eq(b.one(TARGET)["MinCapacity"], 0)),
    ),
    Accepts(
        "PooledEndpoint.auto_scale_on_backlog.min_capacity", "Number", 1,
        lambda s, v: _async(s).auto_scale_on_backlog(max_capacity=4, min_capacity=v),
        lambda b: (
            eq(b.one(TARGET)["MinCapacity"], REF),
            # Whether the minimum is 0 is known only at deploy time: no wake-up from zero is made
            # (see docs/aws-readings.md), and the endpoint starts with one instance.
            eq(b.all(POLICY, "EndpointScalingAllTrafficScaleFromZero"), []),
            eq(at(b.one(CONFIG), "ProductionVariants.0.InitialInstanceCount"), 1),
        ),
    ),
    Accepts(
        "PooledEndpoint.auto_scale_on_backlog.target_backlog_per_instance", "Number", 5,
        lambda s, v: _async(s).auto_scale_on_backlog(max_capacity=4, target_backlog_per_instance=v),
        lambda b: eq(tracking(b.one(POLICY, "EndpointScalingAllTrafficBacklogPerInstance"), "TargetValue"), REF),
    ),
    *[
        Accepts(
            f"PooledEndpoint.auto_scale_on_backlog.{key}", "Duration", 300,
            lambda s, v, key=key: _async(s).auto_scale_on_backlog(max_capacity=4, **{key: Duration.seconds(v)}),
            lambda b, cfn=cfn: eq(tracking(b.one(POLICY, "EndpointScalingAllTrafficBacklogPerInstance"), cfn), REF),
        )
        for key, cfn in (("scale_in_cooldown", "ScaleInCooldown"), ("scale_out_cooldown", "ScaleOutCooldown"))
    ],
    Accepts(
        "PooledEndpoint.auto_scale_on_backlog.wake_up_cooldown", "Duration", 1800,
        lambda s, v: _async(s).auto_scale_on_backlog(max_capacity=4, wake_up_cooldown=Duration.seconds(v)),
        lambda b: eq(b.one(POLICY, "EndpointScalingAllTrafficScaleFromZero")["StepScalingPolicyConfiguration"]["Cooldown"], REF),
    ),
    # -- VariantScaling --------------------------------------------------------------------------
    Accepts(
        "VariantScaling.scale_on_weighted_utilization.target", "Number", 0.7,
        _weighted_observed,
        lambda b: (
            eq(tracking(b.one(POLICY), "TargetValue"), REF),
            _saturated(b, "WeightedUtilization"),
            # The dashboard draws the policy's target: its value and its label.
            assert_in('"annotations":{"horizontal":[{"value":{REF},"label":"scaling target {REF}"', ref_text(b.one(DASHBOARD)["DashboardBody"])),
        ),
    ),
    *_cooldown_cases("VariantScaling.scale_on_weighted_utilization", lambda s, kw: _scaled(s).scale_on_weighted_utilization(**kw), "WeightedUtilization"),
    Accepts(
        "VariantScaling.scale_on_invocations_per_instance.target", "Number", 100,
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_policy(s, "scale_on_invocations_per_instance", v)),
        lambda b: (eq(tracking(b.one(POLICY), "TargetValue"), REF), _saturated(b, "InvocationsPerInstance")),
    ),
    *_cooldown_cases("VariantScaling.scale_on_invocations_per_instance", lambda s, kw: _scaled(s).scale_on_invocations_per_instance(target=100, **kw), "InvocationsPerInstance"),
    Accepts(
        "VariantScaling.scale_on_concurrency.target", "Number", 4,
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_policy(s, "scale_on_concurrency", v)),
        lambda b: (eq(tracking(b.one(POLICY), "TargetValue"), REF), _saturated(b, "ConcurrentRequests")),
    ),
    *_cooldown_cases("VariantScaling.scale_on_concurrency", lambda s, kw: _scaled(s).scale_on_concurrency(target=4, **kw), "ConcurrentRequests"),
    # -- PoolAlarms ------------------------------------------------------------------------------
    Accepts(
        "PoolAlarms.error_rate_percent", "Number", 1,
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_endpoint(s), error_rate_percent=v),
        lambda b: (
            eq(b.one(ALARM, "AlarmsErrorRate5xx")["Threshold"], REF),
            eq(b.one(ALARM, "AlarmsErrorRate5xx")["ComparisonOperator"], "GreaterThanThreshold"),
            assert_in("5XX errors above {REF} % of invocations", ref_text(b.one(ALARM, "AlarmsErrorRate5xx")["AlarmDescription"])),
        ),
    ),
    Accepts(
        "PoolAlarms.max_capacity", "Number", 4,
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_endpoint(s), max_capacity=v),
        _at_max,
    ),
    Accepts(
        "PoolAlarms.saturation_threshold", "Number", 0.8,
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_endpoint(s), max_capacity=4, saturation_threshold=v),
        lambda b: (
            _saturated(b, "WeightedUtilization"),
            eq(b.one(ALARM, "AlarmsSaturated")["ComparisonOperator"], "GreaterThanThreshold"),
            assert_in("was above {REF} in", ref_text(b.one(ALARM, "AlarmsSaturated")["AlarmDescription"])),
        ),
    ),
    # -- PoolDashboard ---------------------------------------------------------------------------
    Accepts(
        "PoolDashboard.dashboard_name", "String", "llm",
        lambda s, v: PoolDashboard(s, "Dashboard", endpoints=[_endpoint(s)], dashboard_name=v),
        lambda b: eq(b.one(DASHBOARD)["DashboardName"], REF),
    ),
    Accepts(
        "PoolDashboard.utilization_target", "Number", 0.7,
        lambda s, v: PoolDashboard(s, "Dashboard", endpoints=[_endpoint(s)], utilization_target=v),
        lambda b: assert_in('{"value":{REF},"label":"scaling target {REF}"', ref_text(b.one(DASHBOARD)["DashboardBody"])),
    ),
    Accepts(
        "PoolDashboard.period", "Duration", 60,
        lambda s, v: PoolDashboard(s, "Dashboard", endpoints=[_endpoint(s)], period=Duration.seconds(v)),
        # Every graph and every line reads the parameter (21 lines in 7 graphs here), none a placeholder number.
        lambda b: (
            eq(ref_text(b.one(DASHBOARD)["DashboardBody"]).count('"period":{REF}'), 28),
            eq(ref_text(b.one(DASHBOARD)["DashboardBody"]).count('"period":'), 28),
        ),
    ),
    # -- DeploymentPolicy (timeouts and waits; the fleet checks are left to deploy time) -----------
    *[
        Accepts(
            f"DeploymentPolicy.{kind}.{key}", "Duration", default,
            _deployed(factory, key, {k: v for k, v in extra.items() if k != key}),
            _deployment(path),
        )
        for kind, factory, extra in (
            ("all_at_once", DeploymentPolicy.all_at_once, {}),
            ("canary", DeploymentPolicy.canary, {"canary_size": CapacitySize.percent(10), "wait_interval": Duration.minutes(5)}),
            ("linear", DeploymentPolicy.linear, {"step_size": CapacitySize.percent(20), "wait_interval": Duration.minutes(5)}),
        )
        for key, path, default in (
            ("wait_interval", f"{ROUTING}.WaitIntervalInSeconds", 300),
            ("termination_wait", f"{BLUE_GREEN}.TerminationWaitInSeconds", 300),
            ("max_execution_timeout", f"{BLUE_GREEN}.MaximumExecutionTimeoutInSeconds", 7200),
        )
    ],
    Accepts(
        "DeploymentPolicy.rolling.bake_time", "Duration", 300,
        _deployed(DeploymentPolicy.rolling, "bake_time", {"batch_size": CapacitySize.percent(25)}),
        _deployment("RollingUpdatePolicy.WaitIntervalInSeconds"),
    ),
    Accepts(
        "DeploymentPolicy.rolling.max_execution_timeout", "Duration", 14400,
        _deployed(DeploymentPolicy.rolling, "max_execution_timeout", {"batch_size": CapacitySize.percent(25), "bake_time": Duration.minutes(5)}),
        _deployment("RollingUpdatePolicy.MaximumExecutionTimeoutInSeconds"),
    ),
    Accepts(
        "CapacitySize.percent.percent", "Number", 25,
        lambda s, v: _endpoint(s, initial_instance_count=4, deployment=DeploymentPolicy.rolling(batch_size=CapacitySize.percent(v), bake_time=Duration.minutes(5))),
        lambda b: eq(at(b.one(ENDPOINT), "DeploymentConfig.RollingUpdatePolicy.MaximumBatchSize"), {"Type": "CAPACITY_PERCENT", "Value": REF}),
    ),
    Accepts(
        "CapacitySize.instances.count", "Number", 1,
        _canary_instances,
        lambda b: eq(at(b.one(ENDPOINT), f"DeploymentConfig.{ROUTING}.CanarySize"), {"Type": "INSTANCE_COUNT", "Value": REF}),
    ),
    # -- inference components --------------------------------------------------------------------
    Accepts(
        "InstanceScaling.max_instance_count", "Number", 4,
        lambda s, v: _host(s, instance_scaling=InstanceScaling(max_instance_count=v)),
        lambda b: eq(at(b.one(CONFIG), "ProductionVariants.0.ManagedInstanceScaling"), {"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": REF}),
    ),
    Accepts(
        "InstanceScaling.min_instance_count", "Number", 1,
        lambda s, v: _host(s, instance_scaling=InstanceScaling(min_instance_count=v, max_instance_count=4)),
        lambda b: (
            eq(at(b.one(CONFIG), "ProductionVariants.0.ManagedInstanceScaling.MinInstanceCount"), REF),
            # A minimum of 0 would be no valid initial count: the endpoint starts with one instance.
            eq(at(b.one(CONFIG), "ProductionVariants.0.InitialInstanceCount"), 1),
        ),
    ),
    *[
        Accepts(
            f"ComponentSpec.{key}", "Number", default,
            lambda s, v, key=key: _component(s, specifications=[_spec(s, "big", instance_type=G6E, **{key: v}), _spec(s, "small", instance_type=G6)]),
            lambda b, path=path: eq(at(b.one(COMPONENT), f"Specifications.0.{path}"), REF),
        )
        for key, path, default in (
            ("min_memory_in_mb", "ComputeResourceRequirements.MinMemoryRequiredInMb", 1024),
            ("max_memory_in_mb", "ComputeResourceRequirements.MaxMemoryRequiredInMb", 4096),
            ("accelerator_count", "ComputeResourceRequirements.NumberOfAcceleratorDevicesRequired", 1),
            ("cpu_cores", "ComputeResourceRequirements.NumberOfCpuCoresRequired", 2),
        )
    ],
    *[
        Accepts(
            f"ComponentSpec.{key}", "Duration", 600,
            lambda s, v, key=key: _component(s, specifications=[_spec(s, "big", instance_type=G6E, **{key: Duration.seconds(v)}), _spec(s, "small", instance_type=G6)]),
            lambda b, path=path: eq(at(b.one(COMPONENT), f"Specifications.0.StartupParameters.{path}"), REF),
        )
        for key, path in (
            ("model_data_download_timeout", "ModelDataDownloadTimeoutInSeconds"),
            ("container_startup_health_check_timeout", "ContainerStartupHealthCheckTimeoutInSeconds"),
        )
    ],
    Accepts(
        "ComponentSpec.instance_type", "String", G6,
        lambda s, v: _component(s, specifications=[_spec(s, "big", instance_type=G6E), _spec(s, "small", instance_type=v)]),
        lambda b: eq(at(b.one(COMPONENT), "Specifications.1.InstanceType"), REF),
    ),
    Accepts(
        "ComponentSpec.max_concurrency", "Number", 4,
        lambda s, v: _component(
            s, specifications=[_spec(s, "big", instance_type=G6E, max_concurrency=8), _spec(s, "small", instance_type=G6, max_concurrency=v)]
        ).auto_scale(max_copies=4).scale_on_weighted_utilization(),
        lambda b: eq(ref_text(policy_queries(b.one(POLICY, "HostComponentCopyScalingWeighted"))["u2"]["Expression"]), "c2 / {REF}"),
    ),
    Accepts(
        "PooledEndpoint.add_inference_component.copy_count", "Number", 2,
        lambda s, v: _component(s, copy_count=v).auto_scale(max_copies=4, min_copies=1),
        lambda b: eq(at(b.one(COMPONENT), "RuntimeConfig.CopyCount"), REF),
    ),
    Accepts(
        "PooledEndpoint.add_inference_component.inference_component_name", "String", "llm-component",
        lambda s, v: _component(s, inference_component_name=v).auto_scale(max_copies=4),
        lambda b: (
            eq(b.one(COMPONENT)["InferenceComponentName"], REF),
            eq(ref_text(b.one(TARGET)["ResourceId"]), "inference-component/{REF}"),
            eq(dimension(b.one(ALARM), "InferenceComponentName"), REF),
        ),
    ),
    Accepts(
        "InferenceComponent.auto_scale.max_copies", "Number", 4,
        lambda s, v: _component(s).auto_scale(max_copies=v),
        lambda b: (eq(b.one(TARGET)["MaxCapacity"], REF), eq(len(b.all(POLICY, "HostComponentCopyScalingScaleFromZero")), 1)),
    ),
    Accepts(
        "InferenceComponent.auto_scale.min_copies", "Number", 1,
        lambda s, v: _component(s).auto_scale(max_copies=4, min_copies=v),
        lambda b: (
            eq(b.one(TARGET)["MinCapacity"], REF),
            # Whether the minimum is 0 is known only at deploy time: no scale-from-zero policy.
            eq(b.all(POLICY), []),
        ),
    ),
    Accepts(
        "ComponentDeploymentPolicy.rolling.bake_time", "Duration", 300,
        lambda s, v: _component(s, deployment=ComponentDeploymentPolicy.rolling(batch_size=ComponentBatchSize.copies(1), bake_time=Duration.seconds(v))),
        lambda b: eq(at(b.one(COMPONENT), "DeploymentConfig.RollingUpdatePolicy.WaitIntervalInSeconds"), REF),
    ),
    Accepts(
        "ComponentDeploymentPolicy.rolling.max_execution_timeout", "Duration", 3600,
        lambda s, v: _component(
            s, deployment=ComponentDeploymentPolicy.rolling(batch_size=ComponentBatchSize.copies(1), bake_time=Duration.minutes(5), max_execution_timeout=Duration.seconds(v))
        ),
        lambda b: eq(at(b.one(COMPONENT), "DeploymentConfig.RollingUpdatePolicy.MaximumExecutionTimeoutInSeconds"), REF),
    ),
    *[
        Accepts(
            f"ComponentBatchSize.{method}.{arg}", "Number", default,
            lambda s, v, method=method: _component(s, deployment=ComponentDeploymentPolicy.rolling(batch_size=getattr(ComponentBatchSize, method)(v), bake_time=Duration.minutes(5))),
            lambda b, kind=kind: eq(at(b.one(COMPONENT), "DeploymentConfig.RollingUpdatePolicy.MaximumBatchSize"), {"Type": kind, "Value": REF}),
        )
        for method, arg, kind, default in (("copies", "count", "COPY_COUNT", 1), ("percent", "percent", "CAPACITY_PERCENT", 20))
    ],
    *[
        case
        for method, policy_id, extra in (
            ("scale_on_concurrency", "ConcurrentRequestsPerCopy", {"target": 4}),
            ("scale_on_invocations_per_copy", "InvocationsPerCopy", {"target": 100}),
            ("scale_on_weighted_utilization", "WeightedUtilization", {}),
        )
        for case in (
            Accepts(
                f"ComponentScaling.{method}.target", "Number", 0.7 if not extra else extra["target"],
                lambda s, v, method=method: getattr(_component(s).auto_scale(max_copies=4, min_copies=1), method)(target=v),
                lambda b: eq(tracking(b.one(POLICY), "TargetValue"), REF),
            ),
            *[
                Accepts(
                    f"ComponentScaling.{method}.{key}", "Duration", 600,
                    lambda s, v, method=method, key=key, extra=extra: getattr(_component(s).auto_scale(max_copies=4, min_copies=1), method)(**extra, **{key: Duration.seconds(v)}),
                    lambda b, cfn=cfn: eq(tracking(b.one(POLICY), cfn), REF),
                )
                for key, cfn in (("scale_in_cooldown", "ScaleInCooldown"), ("scale_out_cooldown", "ScaleOutCooldown"))
            ],
        )
    ],
    Accepts(
        "ComponentScaling.scale_from_zero.cooldown", "Duration", 1800,
        lambda s, v: _component(s).auto_scale(max_copies=4, scale_from_zero=False).scale_from_zero(cooldown=Duration.seconds(v)),
        lambda b: eq(b.one(POLICY)["StepScalingPolicyConfiguration"]["Cooldown"], REF),
    ),
    Accepts(
        "EndpointBase.metric_weighted_utilization.label", "String", "fleet",
        lambda s, v: cloudwatch.Alarm(s, "Busy", metric=_endpoint(s).metric_weighted_utilization(label=v), threshold=0.9, evaluation_periods=1),
        lambda b: eq(next(m["Label"] for m in b.one(ALARM)["Metrics"] if m.get("ReturnData", True)), REF),
    ),
    Accepts(
        "InferenceComponent.metric_weighted_utilization.label", "String", "copies",
        lambda s, v: cloudwatch.Alarm(s, "Busy", metric=_weighted_component(s).metric_weighted_utilization(label=v), threshold=0.9, evaluation_periods=1),
        lambda b: eq(next(m["Label"] for m in b.one(ALARM)["Metrics"] if m.get("ReturnData", True)), REF),
    ),
    # -- async -----------------------------------------------------------------------------------
    *[
        Accepts(
            f"AsyncInference.{key}", "String", f"async/{key}/",
            lambda s, v, key=key: _async(s, model=PoolModel(s, "Model", image=ContainerImage.from_image_uri(IMAGE)), async_inference=AsyncInference(**{key: v})),
            lambda b, path=path, action=action: (
                eq(ref_text(at(b.one(CONFIG), f"AsyncInferenceConfig.OutputConfig.{path}")), "s3://{other}/{REF}") if path else None,
                # The model's role reads inputs and writes responses and failures under the parameter's prefix.
                assert_in("/{REF}*", " ".join(ref_text(r) for r in _granted(b, action) if isinstance(r, dict) and "Fn::Join" in r)),
            ),
        )
        for key, path, action in (
            ("input_prefix", None, "s3:GetObject"),
            ("output_prefix", "S3OutputPath", "s3:PutObject"),
            ("failure_prefix", "S3FailurePath", "s3:PutObject"),
        )
    ],
    Accepts(
        "AsyncInference.max_concurrent_invocations_per_instance", "Number", 4,
        lambda s, v: _async(s, async_inference=AsyncInference(max_concurrent_invocations_per_instance=v)),
        lambda b: eq(at(b.one(CONFIG), "AsyncInferenceConfig.ClientConfig.MaxConcurrentInvocationsPerInstance"), REF),
    ),
    # -- models, routing, imports ----------------------------------------------------------------
    Accepts(
        "PoolModel.model_name", "String", "llm-model",
        lambda s, v: _endpoint(s, model=PoolModel(s, "Model", image=ContainerImage.from_image_uri(IMAGE), model_name=v)),
        lambda b: (
            eq(b.one("AWS::SageMaker::Model")["ModelName"], REF),
            # The config reads the model's attribute (which orders it after the model), not the parameter.
            eq(at(b.one(CONFIG), "ProductionVariants.0.ModelName"), {"Fn::GetAtt": [_logical_id(b, "AWS::SageMaker::Model"), "ModelName"]}),
        ),
    ),
    Accepts(
        "PoolModel.from_model_name.model_name", "String", "llm-model",
        lambda s, v: _endpoint(s, model=PoolModel.from_model_name(s, "Named", v)),
        lambda b: eq(at(b.one(CONFIG), "ProductionVariants.0.ModelName"), REF),
    ),
    *[
        Accepts(
            f"PoolModel.from_recommendation.{key}", "String", default,
            lambda s, v, key=key: _endpoint(s, model=PoolModel.from_recommendation(s, "Recommended", **{**RECOMMENDATION, key: v})),
            lambda b, path=path: eq(at(b.one("AWS::SageMaker::Model"), path), REF),
        )
        for key, path, default in (
            ("model_package_arn", "PrimaryContainer.ModelPackageName", RECOMMENDATION["model_package_arn"]),
            ("inference_specification_name", "PrimaryContainer.InferenceSpecificationName", "g6"),
            ("model_name", "ModelName", "llm-model"),
        )
    ],
    Accepts(
        "ContainerImage.from_ecr_repository.tag", "String", "v1",
        lambda s, v: _endpoint(s, model=PoolModel(s, "Model", image=ContainerImage.from_ecr_repository(ecr.Repository(s, "Repo"), tag=v))),
        lambda b: assert_in(":{REF}", ref_text(at(b.one("AWS::SageMaker::Model"), "PrimaryContainer.Image"))),
    ),
    *[
        Accepts(
            f"ModelData.{method}.{key}", "String", default,
            lambda s, v, method=method, key=key, args=args: _endpoint(
                s, model=PoolModel(s, "Model", image=ContainerImage.from_image_uri(IMAGE), model_data=getattr(ModelData, method)(**{**args, key: v}))
            ),
            lambda b: (
                assert_in("{REF}", ref_text(_model_data_url(b))),
                # The model's role may read the object(s): the grant names the parameter too.
                assert_in("{REF}", json.dumps([ref_text(r) for r in _granted(b, "s3:GetObject")])),
            ),
        )
        for method, key, args, default in (
            ("from_s3_object", "bucket", {"key": "llm/model.tar.gz"}, "my-llm-artifacts"),
            ("from_s3_object", "key", {"bucket": "my-llm-artifacts"}, "llm/model.tar.gz"),
            ("from_s3_prefix", "bucket", {"prefix": "llm/"}, "my-llm-artifacts"),
            ("from_s3_prefix", "prefix", {"bucket": "my-llm-artifacts"}, "llm/"),
        )
    ],
    Accepts(
        "Routing.prefix_aware.prefix_length", "Number", 2048,
        lambda s, v: _endpoint(s, routing=Routing.prefix_aware(prefix_length=v, concurrency_threshold=8)),
        lambda b: eq(at(b.one(CONFIG), "ProductionVariants.0.RoutingConfig.PrefixAwareRoutingConfig.PrefixLength"), REF),
    ),
    Accepts(
        "Routing.prefix_aware.concurrency_threshold", "Number", 8,
        lambda s, v: _endpoint(s, routing=Routing.prefix_aware(prefix_length=2048, concurrency_threshold=v)),
        lambda b: eq(at(b.one(CONFIG), "ProductionVariants.0.RoutingConfig.PrefixAwareRoutingConfig.ConcurrencyThreshold"), REF),
    ),
    Accepts(
        "PooledEndpoint.from_endpoint_name.endpoint_name", "String", "llm",
        lambda s, v: _imported(s, v, "AllTraffic"),
        lambda b: (
            # The ARN keeps the parameter as given (SageMaker's lower case is the user's business).
            assert_in(":endpoint/{REF}", ref_text(_invoke_resource(b))),
            eq(dimension(b.one(ALARM, "AlarmsErrorRate5xx"), "EndpointName", "errors"), REF),
        ),
    ),
    Accepts(
        "PooledEndpoint.from_endpoint_name.variant_name", "String", "AllTraffic",
        lambda s, v: _imported(s, "llm", v),
        lambda b: eq(dimension(b.one(ALARM, "AlarmsErrorRate5xx"), "VariantName", "errors"), REF),
    ),
    # -- benchmarks ------------------------------------------------------------------------------
    Accepts(
        "BenchmarkWorkload.workload_name", "String", "chat-load",
        lambda s, v: _workload(s, workload_name=v),
        lambda b: (
            eq(b.one(WORKLOAD)["AIWorkloadConfigName"], REF),
            # The spec stays a literal JSON document.
            eq(json.loads(at(b.one(WORKLOAD), "AIWorkloadConfigs.WorkloadSpec.Inline"))["parameters"]["concurrency"], 8),
        ),
    ),
    Accepts(
        "BenchmarkRole.output_prefix", "String", "benchmarks/",
        _benchmark_role,
        lambda b: (
            # The role writes under the parameter's prefix only, and the output location names it.
            eq([ref_text(r) for r in _granted(b, "s3:PutObject")], ["{other}/{REF}*"]),
            eq(_granted(b, "s3:AbortMultipartUpload"), _granted(b, "s3:PutObject")),
            eq(ref_text(b.template["Outputs"]["Output"]["Value"]), "s3://{other}/{REF}"),
            # The bucket key's actions are not scoped by the prefix: present all the same.
            assert_in("kms:GenerateDataKey", json.dumps(b.all("AWS::IAM::Policy"))),
        ),
    ),
]


# -- the refused props ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refuses:
    """A prop that needs a concrete value: ``build(scope, token)`` raises PoolConfigError naming ``field``."""

    prop: str
    kind: str
    build: Callable[[Construct, Any], object]
    field: str


REFUSES: list[Refuses] = [
    Refuses(
        "PoolAlarms.p99_latency", "Duration",
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_endpoint(s), p99_latency=Duration.seconds(v)), "PoolAlarms.p99_latency",
    ),
    Refuses(
        "PoolAlarms.p99_latency_by_type", "Duration",
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_endpoint(s), p99_latency_by_type={G6: Duration.seconds(v)}),
        "PoolAlarms.p99_latency_by_type['ml.g6.48xlarge']",
    ),
    Refuses(
        "PoolAlarms.fallback_for", "Duration",
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_endpoint(s), fallback_for=Duration.seconds(v)), "PoolAlarms.fallback_for",
    ),
    Refuses(
        "PoolAlarms.at_max_capacity_for", "Duration",
        lambda s, v: PoolAlarms(s, "Alarms", endpoint=_endpoint(s), max_capacity=4, at_max_capacity_for=Duration.seconds(v)),
        "PoolAlarms.at_max_capacity_for",
    ),
]

REFUSES += [
    Refuses(
        "ContainerImage.from_image_uri.image_uri", "String",
        # The execution role is scoped to the repository the URI names.
        lambda s, v: ContainerImage.from_image_uri(v), "ContainerImage.image_uri",
    ),
    # CDK checks a metric's period (1, 5, 10, 30 or a multiple of 60 s) when it builds the metric.
    Refuses(
        "EndpointBase.metric_weighted_utilization.period", "Duration",
        lambda s, v: _endpoint(s).metric_weighted_utilization(period=Duration.seconds(v)), "metric_weighted_utilization.period",
    ),
    Refuses(
        "EndpointBase.metric.period", "Duration",
        lambda s, v: _endpoint(s).metric_model_latency(period=Duration.seconds(v)), "metric.period",
    ),
    Refuses(
        "InferenceComponent.metric_weighted_utilization.period", "Duration",
        lambda s, v: _weighted_component(s).metric_weighted_utilization(period=Duration.seconds(v)),
        "InferenceComponent.metric_weighted_utilization.period",
    ),
]

# The workload's spec is one JSON document hashed into its name, and every property is create-only:
# a value that changes at deploy time would replace the workload under the same name.
REFUSES += [
    *[
        Refuses(f"BenchmarkWorkload.{key}", "Number", lambda s, v, key=key, base=base: _workload(s, **base, **{key: v}), f"BenchmarkWorkload.{key}")
        for key, base in (
            ("input_tokens_mean", {}),
            ("input_tokens_stddev", {}),
            ("output_tokens_mean", {}),
            ("output_tokens_stddev", {}),
            ("concurrency", {}),
            ("request_rate", {}),
            ("arrival_smoothness", {"request_rate": 2.0, "arrival": "gamma"}),
            ("request_count", {}),
            ("seed", {}),
            ("prefix_pool_size", {"prefix_length": 512}),
            ("prefix_length", {"prefix_pool_size": 4}),
            ("turns_mean", {}),
            ("turns_stddev", {"turns_mean": 3}),
        )
    ],
    Refuses(
        "BenchmarkWorkload.arrival", "String", lambda s, v: _workload(s, request_rate=2.0, arrival=v), "BenchmarkWorkload.arrival",
    ),
    Refuses(
        "BenchmarkWorkload.sequence_distribution", "String",
        lambda s, v: _workload(s, sequence_distribution=v), "BenchmarkWorkload.sequence_distribution",
    ),
    *[
        Refuses(f"BenchmarkWorkload.{key}", "Duration", lambda s, v, key=key, base=base: _workload(s, **base, **{key: Duration.seconds(v)}), f"BenchmarkWorkload.{key}")
        for key, base in (("duration", {"request_count": None}), ("warmup", {}), ("request_timeout", {}))
    ],
    # The key decides the read grant (an object, or a prefix) and is part of the name's hash.
    Refuses(
        "BenchmarkWorkload.dataset_key", "String",
        lambda s, v: _workload(s, dataset_bucket=s3.Bucket.from_bucket_name(s, "Data", "traffic"), dataset_key=v), "BenchmarkWorkload.dataset_key",
    ),
    # The check runs at synth time.
    Refuses(
        "check_gates.on_ungated", "String",
        lambda s, v: check_gates(s, capacity=PoolCapacity(instance_types={}), pools=_pools(G6E, G6), on_ungated=v), "check_gates.on_ungated",
    ),
]

def _captured(scope: Construct, capture: Any = None, shadow: Any = None) -> PooledEndpoint:
    """A real-time endpoint with data capture into a given bucket and/or a shadow variant."""
    data_capture = DataCapture(bucket=s3.Bucket.from_bucket_name(scope, "Given", "my-capture-bucket"), **capture) if capture is not None else None
    shadow_variant = ShadowVariant(model=PoolModel.from_model_name(scope, "Int4", "llm-int4"), **{"instance_type": G6, **shadow}) if shadow is not None else None
    return PooledEndpoint(scope, "Endpoint", model=PoolModel.from_model_name(scope, "Base", "base-model"),
                          pools=[InstancePool(instance_type=G6E)], data_capture=data_capture, shadow=shadow_variant)


ACCEPTS += [
    Accepts(
        "DataCapture.prefix", "String", "capture/", lambda s, v: _captured(s, capture={"prefix": v}),
        lambda b: eq(ref_text(at(b.one(CONFIG), "DataCaptureConfig.DestinationS3Uri")), "s3://my-capture-bucket/{REF}"),
    ),
    Accepts(
        "DataCapture.sampling_percentage", "Number", 5, lambda s, v: _captured(s, capture={"sampling_percentage": v}),
        lambda b: eq(at(b.one(CONFIG), "DataCaptureConfig.InitialSamplingPercentage"), REF),
    ),
    Accepts(
        "ShadowVariant.instance_type", "String", G6, lambda s, v: _captured(s, shadow={"instance_type": v}),
        lambda b: eq(at(b.one(CONFIG), "ShadowProductionVariants.0.InstanceType"), REF),
    ),
    Accepts(
        "ShadowVariant.initial_instance_count", "Number", 1, lambda s, v: _captured(s, shadow={"initial_instance_count": v}),
        lambda b: eq(at(b.one(CONFIG), "ShadowProductionVariants.0.InitialInstanceCount"), REF),
    ),
    Accepts(
        "ShadowVariant.variant_name", "String", "shadow-g6", lambda s, v: _captured(s, shadow={"variant_name": v}),
        lambda b: eq(at(b.one(CONFIG), "ShadowProductionVariants.0.VariantName"), REF),
    ),
    Accepts(
        # The shadow's weight beside production's 100: the share of requests copied to it.
        "ShadowVariant.sampling_percentage", "Number", 10, lambda s, v: _captured(s, shadow={"sampling_percentage": v}),
        lambda b: eq(at(b.one(CONFIG), "ShadowProductionVariants.0.InitialVariantWeight"), REF),
    ),
]

#: Public scalar props left out of the corpus, each with the reason.
_STATISTIC = (
    "sorted by name into an alarm's Statistic or ExtendedStatistic (percentiles) and left out of a dashboard "
    "line when it is CloudWatch's default (Average): a name known only at deploy time cannot be sorted"
)
EXCLUDED = {
    "VariantScaling.scale_on_weighted_utilization.statistic": _STATISTIC,
    "ComponentScaling.scale_on_weighted_utilization.statistic": _STATISTIC,
    "EndpointBase.metric_weighted_utilization.statistic": _STATISTIC,
    "InferenceComponent.metric_weighted_utilization.statistic": _STATISTIC,
}


# -- running the corpus ----------------------------------------------------------------------------------


def _parameter(stack: cdk.Stack, kind: str, default: float | str) -> Any:
    if kind == "String":
        return cdk.CfnParameter(stack, PARAMETER, type="String", default=default).value_as_string
    return cdk.CfnParameter(stack, PARAMETER, type="Number", default=default).value_as_number


def _stack_name(index: int) -> str:
    return f"Token{index}"


def _synthesized(app: cdk.App) -> dict[str, Any]:
    app.synth()
    return read_assembly(Path(app.outdir))


@pytest.fixture(scope="module")
def corpus() -> Any:
    """Every accepted case built in a stack of its own, all in one app, synthesized once.

    ``templates``: ``{stack name: template}``; ``failures``: ``{case id: the error}`` for a case
    that failed to build or to synthesize (reported by its own test); ``token_ids``: the construct
    paths of each case whose id holds a token.
    """
    app = new_app()
    failures: dict[str, str] = {}
    token_ids: dict[str, list[str]] = {}
    for index, case in enumerate(ACCEPTS):
        stack = cdk.Stack(app, _stack_name(index))
        try:
            case.build(stack, _parameter(stack, case.kind, case.default))
        except Exception as error:
            failures[case.id] = f"{type(error).__name__}: {error}"
            app.node.try_remove_child(stack.node.id)  # so that the others still synthesize
            continue
        token_ids[case.id] = [c.node.path for c in stack.node.find_all() if cdk.Token.is_unresolved(c.node.id)]
    try:
        templates = _synthesized(app)
    except Exception:
        # A case broke the shared synthesis: synthesize each one alone, so that only its own test fails.
        templates = {}
        for index, case in enumerate(ACCEPTS):
            if case.id in failures:
                continue
            stack = cdk.Stack(new_app(), _stack_name(index))
            try:
                case.build(stack, _parameter(stack, case.kind, case.default))
                templates.update(_synthesized(stack.node.root))  # type: ignore[arg-type]
            except Exception as error:
                failures[case.id] = f"{type(error).__name__}: {error}"
    return frozen({"templates": templates, "failures": failures, "token_ids": token_ids})


# A number token's placeholder (-1.888e+289) written out as a number or as digits: a token that was
# formatted (":g", int()) instead of passed on, which CloudFormation would receive literally.
LEAKED_NUMBER = re.compile(r"e\+28\d|\d{40,}")


@pytest.mark.parametrize("case", ACCEPTS, ids=[c.id for c in ACCEPTS])
def test_a_parameter_reaches_the_template(case: Accepts, corpus: Any) -> None:
    assert case.id not in corpus["failures"], corpus["failures"].get(case.id)
    template = corpus["templates"][_stack_name(ACCEPTS.index(case))]
    assert corpus["token_ids"][case.id] == [], "construct ids must not hold tokens"
    resources = json.dumps(template["Resources"])
    assert json.dumps(REF) in resources, "the parameter was dropped"
    leaked = LEAKED_NUMBER.search(resources)
    assert leaked is None, f"a number token leaked: ...{resources[max(0, leaked.start() - 200):leaked.end()]}"
    assert "${Token[" not in resources
    case.check(Built(template))


@pytest.mark.parametrize("case", REFUSES, ids=[c.prop for c in REFUSES])
def test_a_parameter_is_refused_where_a_concrete_value_is_needed(case: Refuses) -> None:
    stack = cdk.Stack(cdk.App(), "Refused")
    with pytest.raises(PoolConfigError) as err:
        case.build(stack, _parameter(stack, case.kind, "x" if case.kind == "String" else 60))
    assert err.value.field == case.field
    assert re.search(r"\ba (concrete|literal)\b", err.value.allowed), err.value.allowed
    assert "Resolution error" not in str(err.value)


# -- coverage --------------------------------------------------------------------------------------------

#: The public callables whose scalar props the corpus covers: "Owner.method" (or "Class") -> callable.
def _public_callables() -> dict[str, Callable[..., Any]]:
    from sagemaker_pools import ComponentScaling as CS
    from sagemaker_pools import EndpointBase
    from sagemaker_pools.inference_component import InferenceComponent as IC
    from sagemaker_pools.scaling import VariantScaling as VS

    return {
        "InstancePool": InstancePool.__init__,
        "PooledEndpoint": PooledEndpoint.__init__,
        "PooledEndpoint.auto_scale": PooledEndpoint.auto_scale,
        "PooledEndpoint.auto_scale_on_backlog": PooledEndpoint.auto_scale_on_backlog,
        "PooledEndpoint.from_endpoint_name": PooledEndpoint.from_endpoint_name,
        "PooledEndpoint.add_inference_component": PooledEndpoint.add_inference_component,
        "VariantScaling.scale_on_weighted_utilization": VS.scale_on_weighted_utilization,
        "VariantScaling.scale_on_invocations_per_instance": VS.scale_on_invocations_per_instance,
        "VariantScaling.scale_on_concurrency": VS.scale_on_concurrency,
        "InferenceComponent.auto_scale": IC.auto_scale,
        "PoolAlarms": PoolAlarms.__init__,
        "PoolDashboard": PoolDashboard.__init__,
        "DeploymentPolicy.all_at_once": DeploymentPolicy.all_at_once,
        "DeploymentPolicy.canary": DeploymentPolicy.canary,
        "DeploymentPolicy.linear": DeploymentPolicy.linear,
        "DeploymentPolicy.rolling": DeploymentPolicy.rolling,
        "CapacitySize.percent": CapacitySize.percent,
        "CapacitySize.instances": CapacitySize.instances,
        "InstanceScaling": InstanceScaling.__init__,
        "ComponentSpec": ComponentSpec.__init__,
        "AsyncInference": AsyncInference.__init__,
        "PoolModel": PoolModel.__init__,
        "Routing.prefix_aware": Routing.prefix_aware,
        "ComponentDeploymentPolicy.rolling": ComponentDeploymentPolicy.rolling,
        "ComponentBatchSize.copies": ComponentBatchSize.copies,
        "ComponentBatchSize.percent": ComponentBatchSize.percent,
        "ComponentScaling.scale_on_concurrency": CS.scale_on_concurrency,
        "ComponentScaling.scale_on_invocations_per_copy": CS.scale_on_invocations_per_copy,
        "ComponentScaling.scale_on_weighted_utilization": CS.scale_on_weighted_utilization,
        "ComponentScaling.scale_from_zero": CS.scale_from_zero,
        "EndpointBase.metric_weighted_utilization": EndpointBase.metric_weighted_utilization,
        "InferenceComponent.metric_weighted_utilization": IC.metric_weighted_utilization,
        "PoolModel.from_model_name": PoolModel.from_model_name,
        "PoolModel.from_recommendation": PoolModel.from_recommendation,
        "ContainerImage.from_image_uri": ContainerImage.from_image_uri,
        "ContainerImage.from_ecr_repository": ContainerImage.from_ecr_repository,
        "ModelData.from_s3_object": ModelData.from_s3_object,
        "ModelData.from_s3_prefix": ModelData.from_s3_prefix,
        "BenchmarkWorkload": BenchmarkWorkload.__init__,
        "BenchmarkRole": BenchmarkRole.__init__,
        "check_gates": check_gates,
        "DataCapture": DataCapture.__init__,
        "ShadowVariant": ShadowVariant.__init__,
    }


SCALARS = {"int", "float", "str", "Duration"}


def scalar_props() -> set[str]:
    """``Owner.prop`` of every parameter annotated with int, float, str or Duration (optional or not)."""
    props = set()
    for owner, function in _public_callables().items():
        for name, parameter in inspect.signature(function).parameters.items():
            if name in ("self", "scope", "id"):
                continue
            kinds = {part.strip() for part in str(parameter.annotation).strip("'\"").split("|")}
            if kinds & SCALARS:
                props.add(f"{owner}.{name}")
    return props


def test_every_scalar_prop_has_a_case() -> None:
    """A new public scalar prop fails here until it has an accepting or a refusing case (or a reason in EXCLUDED)."""
    cased = {c.prop for c in ACCEPTS} | {c.prop for c in REFUSES} | set(EXCLUDED)
    assert scalar_props() - cased == set()


def test_the_corpus_names_only_real_props() -> None:
    """Every case and exclusion names a prop the enumeration finds (a renamed prop must not leave a stale case),
    but for two refusals beyond the scalar props: a per-type latency (a mapping's value) and a metric
    helper's ``period`` option (keyword options, not in the signature)."""
    props = scalar_props()
    assert {c.prop for c in ACCEPTS} - props == set()
    assert set(EXCLUDED) - props == set()
    assert {c.prop for c in REFUSES} - props == {"PoolAlarms.p99_latency_by_type", "EndpointBase.metric.period"}
    assert not {c.prop for c in ACCEPTS} & {c.prop for c in REFUSES}
