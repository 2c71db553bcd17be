"""Read what a synthesized CloudFormation template says about one pooled endpoint and its scaling.

From the template alone (no AWS, no CDK): the endpoint's production variant (pools and their
priorities, initial instance count, provisioning timeout, managed instance scaling, async client
config), its inference component, the scalable target (min / max), every scaling policy attached
to it, and every CloudWatch alarm of the template with its real metric-math queries. Intrinsic
functions are resolved symbolically: a name given by ``Fn::GetAtt``/``Ref`` reads as the literal
name of that resource when the template sets one, else as ``<LogicalId>``, so that a scalable
target's ``ResourceId`` and an alarm's dimensions match the endpoint they mean.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...hardware import hardware_of
from ...metric_math import MetricMathError, check_queries
from ..errors import EXIT_USAGE, OpsError
from ..scaling_metrics import PREDEFINED, customized_queries, predefined_queries

__all__ = [
    "Pool",
    "AlarmSpec",
    "StepPolicySpec",
    "TargetTrackingSpec",
    "ScalingSpec",
    "ComponentSpec",
    "ManagedScaleIn",
    "FleetSpec",
    "load_template",
    "read_fleet",
    "SAGEMAKER_DEFAULT_COOLDOWN_S",
]

#: Application Auto Scaling's default cooldown for every SageMaker AI scalable target (user guide,
#: "Define cooldown periods": "a default value of 300 for ... SageMaker AI endpoint variants,
#: SageMaker AI inference components, SageMaker AI Serverless provisioned concurrency"), for
#: target-tracking and step policies alike.
SAGEMAKER_DEFAULT_COOLDOWN_S = 300

_ENDPOINT = "AWS::SageMaker::Endpoint"
_CONFIG = "AWS::SageMaker::EndpointConfig"
_COMPONENT = "AWS::SageMaker::InferenceComponent"
_TARGET = "AWS::ApplicationAutoScaling::ScalableTarget"
_POLICY = "AWS::ApplicationAutoScaling::ScalingPolicy"
_ALARM = "AWS::CloudWatch::Alarm"
_NAME_ATTRIBUTES = {_ENDPOINT: "EndpointName", _COMPONENT: "InferenceComponentName", _CONFIG: "EndpointConfigName"}
_RATIO = re.compile(r"^\s*([a-z][A-Za-z0-9_]*)\s*/\s*(\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class Pool:
    """One instance pool: its type and priority (1 = tried first)."""

    instance_type: str
    priority: int


@dataclass(frozen=True)
class AlarmSpec:
    """A CloudWatch alarm as the template defines it (single metric or metric math, as queries).

    ``actions`` are the logical ids of the scaling policies its ``AlarmActions`` invoke.
    """

    logical_id: str
    queries: tuple[Mapping[str, Any], ...]
    period_s: int
    evaluation_periods: int
    datapoints_to_alarm: int
    threshold: float
    comparison: str
    treat_missing_data: str
    actions: tuple[str, ...]


@dataclass(frozen=True)
class StepPolicySpec:
    """A step-scaling policy: steps are ``(lower, upper, adjustment)`` relative to the alarm threshold."""

    logical_id: str
    adjustment_type: str
    steps: tuple[tuple[float | None, float | None, int], ...]
    cooldown_s: int
    min_adjustment_magnitude: int | None
    aggregation: str


@dataclass(frozen=True)
class TargetTrackingSpec:
    """A target-tracking policy on a metric (customized queries, or a predefined metric turned into one)."""

    logical_id: str
    target: float
    queries: tuple[Mapping[str, Any], ...]
    scale_in_cooldown_s: int
    scale_out_cooldown_s: int
    disable_scale_in: bool


@dataclass(frozen=True)
class ScalingSpec:
    """The scalable target and the policies attached to it."""

    logical_id: str
    dimension: str
    min_capacity: int
    max_capacity: int
    target_tracking: tuple[TargetTrackingSpec, ...]
    steps: tuple[StepPolicySpec, ...]

    @property
    def unit(self) -> str:
        """``"copies"`` for an inference component, ``"instances"`` for a variant."""
        return "copies" if self.dimension.endswith("DesiredCopyCount") else "instances"


@dataclass(frozen=True)
class ComponentSpec:
    """An inference component: copies that fit on one instance of each type, and the initial copy count."""

    logical_id: str
    name: str
    copies_per_instance: Mapping[str, int]
    initial_copies: int


@dataclass(frozen=True)
class ManagedScaleIn:
    """Managed instance scaling's ``ScaleInPolicy`` (API reference defaults when the template leaves it out).

    Attributes:
        strategy: ``IDLE_RELEASE`` ("Releases instances that have no hosted inference component
            copies") or ``CONSOLIDATION`` ("Consolidates inference component copies onto fewer instances").
        cooldown_minutes: ``CooldownInMinutes``, "after the last endpoint operation before the
            endpoint evaluates consolidation scale-in opportunities" (default 20).
        maximum_step_size: ``MaximumStepSize``, instances terminated at a time by a consolidation (default 1).
    """

    strategy: str = "IDLE_RELEASE"
    cooldown_minutes: int = 20
    maximum_step_size: int = 1


#: ``ScaleInPolicy.Strategy`` values (API reference, ``ManagedInstanceScalingScaleInStrategy``).
SCALE_IN_STRATEGIES = ("IDLE_RELEASE", "CONSOLIDATION")


@dataclass(frozen=True)
class FleetSpec:
    """Everything the simulation needs about one endpoint."""

    endpoint_id: str
    endpoint_name: str
    variant_name: str
    pools: tuple[Pool, ...]
    initial_instance_count: int
    provision_timeout_s: int
    managed_scaling: tuple[int, int] | None
    async_max_concurrent: int | None
    component: ComponentSpec | None
    scaling: ScalingSpec
    alarms: tuple[AlarmSpec, ...]
    max_concurrency: Mapping[str, float] = field(default_factory=dict)
    managed_scale_in: ManagedScaleIn = field(default_factory=ManagedScaleIn)

    @property
    def types(self) -> tuple[str, ...]:
        """Instance types in priority order."""
        return tuple(p.instance_type for p in self.pools)


def load_template(path: str, stack: str | None = None) -> dict[str, Any]:
    """The template at ``path``: a JSON template file, or a cloud assembly folder (``cdk.out``) with ``stack``."""
    source = Path(path)
    if source.is_dir():
        manifest_path = source / "manifest.json"
        if not manifest_path.is_file():
            raise OpsError(f"{path} is a folder without manifest.json: give a template file or a cdk.out folder", EXIT_USAGE)
        manifest = _read_json(manifest_path, template=False)
        stacks = {
            name: artifact["properties"]["templateFile"]
            for name, artifact in manifest.get("artifacts", {}).items()
            if artifact.get("type") == "aws:cloudformation:stack"
        }
        if stack is None:
            if len(stacks) != 1:
                raise OpsError(f"{path} holds {len(stacks)} stacks: choose one with --stack ({', '.join(sorted(stacks)) or 'none'})", EXIT_USAGE)
            stack = next(iter(stacks))
        if stack not in stacks:
            raise OpsError(f"--stack {stack}: not in {path} (stacks: {', '.join(sorted(stacks)) or 'none'})", EXIT_USAGE)
        return _read_json(source / stacks[stack])
    if stack is not None:
        raise OpsError("--stack needs a cdk.out folder, not a template file", EXIT_USAGE)
    return _read_json(source)


def _read_json(path: Path, *, template: bool = True) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise OpsError(f"cannot read {path}: {exc.strerror or exc}", EXIT_USAGE) from None
    except json.JSONDecodeError as exc:
        raise OpsError(f"{path} is not JSON: {exc.msg} at line {exc.lineno} (YAML templates: convert with cfn-flip)", EXIT_USAGE) from None
    if not isinstance(data, dict) or (template and not isinstance(data.get("Resources"), dict)):
        raise OpsError(f"{path} is not a CloudFormation template (no Resources)", EXIT_USAGE)
    return data


class _Resolver:
    """Resolves intrinsic functions to strings that compare equal when they name the same thing."""

    def __init__(self, template: Mapping[str, Any]) -> None:
        self.resources: Mapping[str, Any] = template["Resources"]
        self.parameters: Mapping[str, Any] = template.get("Parameters", {})

    def name_of(self, logical_id: str) -> str:
        resource = self.resources.get(logical_id, {})
        attribute = _NAME_ATTRIBUTES.get(resource.get("Type", ""))
        literal = resource.get("Properties", {}).get(attribute) if attribute else None
        return literal if isinstance(literal, str) else f"<{logical_id}>"

    def value(self, node: Any) -> Any:
        if isinstance(node, dict) and len(node) == 1:
            (key, arg), = node.items()
            if key == "Ref":
                if arg in self.parameters:
                    return self.value(self.parameters[arg].get("Default", f"<{arg}>"))
                return self.name_of(arg) if arg in self.resources else f"<{arg}>"
            if key == "Fn::GetAtt":
                target, attribute = arg if isinstance(arg, list) else str(arg).split(".", 1)
                resource_type = self.resources.get(target, {}).get("Type", "")
                if attribute == _NAME_ATTRIBUTES.get(resource_type):
                    return self.name_of(target)
                return f"<{target}.{attribute}>"
            if key == "Fn::Join":
                separator, parts = arg
                return separator.join(str(self.value(p)) for p in parts)
            if key == "Fn::Sub":
                text, variables = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1])

                def sub(match: re.Match[str]) -> str:
                    name = match.group(1)
                    if name in variables:
                        return str(self.value(variables[name]))
                    if "." in name:
                        return str(self.value({"Fn::GetAtt": name.split(".", 1)}))
                    return str(self.value({"Ref": name}))

                return re.sub(r"\$\{([^}!]+)\}", sub, text)
        if isinstance(node, dict):
            return {k: self.value(v) for k, v in node.items()}
        if isinstance(node, list):
            return [self.value(v) for v in node]
        return node


def _of_type(template: Mapping[str, Any], type_name: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if isinstance(v, dict) and v.get("Type") == type_name}


def _int(value: Any, what: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise OpsError(f"{what}: {value!r} is not a number the simulation can use", EXIT_USAGE) from None


def read_fleet(template: Mapping[str, Any], endpoint: str | None = None) -> FleetSpec:
    """The :class:`FleetSpec` of one endpoint of ``template`` (``endpoint``: its logical id).

    Raises:
        OpsError: (exit 2) no endpoint, several without ``endpoint``, an unknown logical id, no
            instance pools or type, or no scaling policy attached to the endpoint.
    """
    resolve = _Resolver(template)
    endpoints = _of_type(template, _ENDPOINT)
    if not endpoints:
        raise OpsError("the template has no AWS::SageMaker::Endpoint to simulate", EXIT_USAGE)
    if endpoint is None:
        if len(endpoints) > 1:
            raise OpsError(f"the template has {len(endpoints)} endpoints: choose one with --endpoint ({', '.join(sorted(endpoints))})", EXIT_USAGE)
        endpoint = next(iter(endpoints))
    if endpoint not in endpoints:
        raise OpsError(f"--endpoint {endpoint}: no AWS::SageMaker::Endpoint with that logical id (endpoints: {', '.join(sorted(endpoints))})", EXIT_USAGE)
    props = endpoints[endpoint].get("Properties", {})
    config_ref = props.get("EndpointConfigName")
    config_id = _referenced_id(config_ref)
    configs = _of_type(template, _CONFIG)
    if config_id is None and isinstance(config_ref, str):  # a literal name
        config_id = next((k for k, v in configs.items() if v.get("Properties", {}).get("EndpointConfigName") == config_ref), None)
    if config_id not in configs:
        raise OpsError(f"endpoint {endpoint}: its EndpointConfigName does not refer to an AWS::SageMaker::EndpointConfig of this template", EXIT_USAGE)
    config = configs[config_id].get("Properties", {})
    variants = config.get("ProductionVariants") or []
    if not variants:
        raise OpsError(f"endpoint config {config_id} has no ProductionVariants", EXIT_USAGE)
    variant = variants[0]
    variant_name = str(resolve.value(variant.get("VariantName", "AllTraffic")))
    pools = _pools(variant, config_id)
    endpoint_name = resolve.name_of(endpoint)
    managed = variant.get("ManagedInstanceScaling")
    managed_scaling = None
    managed_scale_in = ManagedScaleIn()
    if isinstance(managed, dict) and managed.get("Status", "ENABLED") == "ENABLED":
        managed_scaling = (_int(managed.get("MinInstanceCount", 0), "MinInstanceCount"), _int(managed.get("MaxInstanceCount", 1), "MaxInstanceCount"))
        managed_scale_in = _managed_scale_in(managed.get("ScaleInPolicy"), config_id)
    async_config = config.get("AsyncInferenceConfig")
    async_max = None
    if isinstance(async_config, dict):
        async_max = _int((async_config.get("ClientConfig") or {}).get("MaxConcurrentInvocationsPerInstance", 4), "MaxConcurrentInvocationsPerInstance")
    component = _component(template, resolve, endpoint, endpoint_name, [p.instance_type for p in pools])

    if component is not None:
        resource_id = f"inference-component/{component.name}"
    else:
        resource_id = f"endpoint/{endpoint_name}/variant/{variant_name}"
    alarms = _alarms(template, resolve)
    scaling = _scaling(template, resolve, resource_id, alarms, endpoint)
    max_concurrency = _max_concurrency(scaling)
    return FleetSpec(
        endpoint_id=endpoint,
        endpoint_name=endpoint_name,
        variant_name=variant_name,
        pools=pools,
        initial_instance_count=_int(variant.get("InitialInstanceCount", 1 if managed_scaling is None else 0), "InitialInstanceCount"),
        provision_timeout_s=_int(variant.get("VariantInstanceProvisionTimeoutInSeconds", 3600), "VariantInstanceProvisionTimeoutInSeconds"),
        managed_scaling=managed_scaling,
        async_max_concurrent=async_max,
        component=component,
        scaling=scaling,
        alarms=tuple(alarms.values()),
        max_concurrency=max_concurrency,
        managed_scale_in=managed_scale_in,
    )


def _managed_scale_in(policy: Any, config_id: str) -> ManagedScaleIn:
    if not isinstance(policy, dict):
        return ManagedScaleIn()
    strategy = str(policy.get("Strategy", ""))
    if strategy not in SCALE_IN_STRATEGIES:
        raise OpsError(
            f"endpoint config {config_id}: ManagedInstanceScaling.ScaleInPolicy.Strategy {strategy!r} is not one of {', '.join(SCALE_IN_STRATEGIES)}",
            EXIT_USAGE,
        )
    return ManagedScaleIn(
        strategy=strategy,
        cooldown_minutes=_int(policy.get("CooldownInMinutes", 20), "ScaleInPolicy.CooldownInMinutes"),
        maximum_step_size=_int(policy.get("MaximumStepSize", 1), "ScaleInPolicy.MaximumStepSize"),
    )


def _referenced_id(node: Any) -> str | None:
    if isinstance(node, dict):
        if "Ref" in node:
            return str(node["Ref"])
        if "Fn::GetAtt" in node:
            arg = node["Fn::GetAtt"]
            return str(arg[0] if isinstance(arg, list) else str(arg).split(".", 1)[0])
    return None


def _pools(variant: Mapping[str, Any], config_id: str) -> tuple[Pool, ...]:
    raw = variant.get("InstancePools")
    if isinstance(raw, list) and raw:
        pools = [Pool(str(p["InstanceType"]), _int(p.get("Priority", i + 1), "Priority")) for i, p in enumerate(raw)]
        return tuple(sorted(pools, key=lambda p: p.priority))
    if isinstance(variant.get("InstanceType"), str):
        return (Pool(variant["InstanceType"], 1),)
    raise OpsError(f"endpoint config {config_id}: its variant has neither InstancePools nor InstanceType (serverless is not simulated)", EXIT_USAGE)


def _component(
    template: Mapping[str, Any], resolve: _Resolver, endpoint: str, endpoint_name: str, types: Sequence[str]
) -> ComponentSpec | None:
    for logical_id, resource in _of_type(template, _COMPONENT).items():
        props = resource.get("Properties", {})
        if resolve.value(props.get("EndpointName")) != endpoint_name:
            continue
        specs = props.get("Specifications") or ([props["Specification"]] if "Specification" in props else [])
        per_type: dict[str, Mapping[str, Any]] = {}
        for spec in specs:
            if "InstanceType" in spec:
                per_type[str(spec["InstanceType"])] = spec
        default = specs[0] if specs else {}
        copies = {t: _copies_per_instance(t, per_type.get(t, default)) for t in types}
        runtime = props.get("RuntimeConfig") or {}
        return ComponentSpec(
            logical_id=logical_id,
            name=resolve.name_of(logical_id),
            copies_per_instance=copies,
            initial_copies=_int(runtime.get("CopyCount", 1), "RuntimeConfig.CopyCount"),
        )
    return None


def _copies_per_instance(instance_type: str, spec: Mapping[str, Any]) -> int:
    """Copies of a component that fit on one instance (accelerators, memory, cores); 1 when unknown."""
    need = spec.get("ComputeResourceRequirements") or {}
    hardware = hardware_of(instance_type)
    if hardware is None or not need:
        return 1
    fits = []
    if need.get("NumberOfAcceleratorDevicesRequired"):
        fits.append(int(hardware.accelerators // float(need["NumberOfAcceleratorDevicesRequired"])))
    if need.get("MinMemoryRequiredInMb"):
        fits.append(int(hardware.memory_mib // float(need["MinMemoryRequiredInMb"])))
    if need.get("NumberOfCpuCoresRequired"):
        fits.append(int(hardware.vcpus // float(need["NumberOfCpuCoresRequired"])))
    return max(1, min(fits)) if fits else 1


def _alarms(template: Mapping[str, Any], resolve: _Resolver) -> dict[str, AlarmSpec]:
    policies = _of_type(template, _POLICY)
    names = {str(p.get("Properties", {}).get("PolicyName", "")): k for k, p in policies.items()}
    alarms: dict[str, AlarmSpec] = {}
    for logical_id, resource in _of_type(template, _ALARM).items():
        props = resource.get("Properties", {})
        if "Metrics" in props:
            queries = [resolve.value(q) for q in props["Metrics"]]
            periods = [int(q["MetricStat"].get("Period", 60)) for q in queries if "MetricStat" in q]
            period = max(periods) if periods else 60
        elif "MetricName" in props:
            period = int(props.get("Period", 60))
            queries = [
                {
                    "Id": "m1",
                    "ReturnData": True,
                    "MetricStat": {
                        "Metric": {
                            "Namespace": props.get("Namespace", ""),
                            "MetricName": props["MetricName"],
                            "Dimensions": resolve.value(props.get("Dimensions", [])),
                        },
                        "Period": period,
                        "Stat": props.get("Statistic") or props.get("ExtendedStatistic", "Average"),
                    },
                }
            ]
        else:
            continue  # anomaly-detection and composite alarms are not simulated
        try:
            check_queries(queries)
        except MetricMathError as exc:
            raise OpsError(f"alarm {logical_id}: {exc}", EXIT_USAGE) from None
        actions = []
        for action in props.get("AlarmActions", []):
            target = _referenced_id(action)
            if target in policies:
                actions.append(target)
            elif isinstance(action, str) and ":policyName/" in action:
                by_name = names.get(action.rsplit(":policyName/", 1)[1])
                if by_name:
                    actions.append(by_name)
        evaluation_periods = _int(props.get("EvaluationPeriods", 1), f"alarm {logical_id}.EvaluationPeriods")
        alarms[logical_id] = AlarmSpec(
            logical_id=logical_id,
            queries=tuple(queries),
            period_s=period,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=_int(props.get("DatapointsToAlarm", evaluation_periods), f"alarm {logical_id}.DatapointsToAlarm"),
            threshold=float(props.get("Threshold", 0)),
            comparison=str(props.get("ComparisonOperator", "GreaterThanThreshold")),
            treat_missing_data=str(props.get("TreatMissingData", "missing")),
            actions=tuple(actions),
        )
    return alarms


def _predefined_queries(kind: str, resource_id: str) -> list[dict[str, Any]]:
    if kind not in PREDEFINED:
        raise OpsError(f"predefined metric {kind} is not simulated (known: {', '.join(sorted(PREDEFINED))})", EXIT_USAGE)
    queries = predefined_queries(kind, resource_id)
    if queries is None:
        raise OpsError(f"predefined metric {kind} does not fit scalable target {resource_id}", EXIT_USAGE)
    return queries


def _scaling(
    template: Mapping[str, Any], resolve: _Resolver, resource_id: str, alarms: Mapping[str, AlarmSpec], endpoint: str
) -> ScalingSpec:
    targets = {
        k: v
        for k, v in _of_type(template, _TARGET).items()
        if resolve.value(v.get("Properties", {}).get("ResourceId")) == resource_id
    }
    if not targets:
        raise OpsError(
            f"endpoint {endpoint} has no scalable target ({resource_id}) and so no scaling policy to simulate", EXIT_USAGE
        )
    target_id, target = next(iter(targets.items()))
    props = target.get("Properties", {})
    dimension = str(props.get("ScalableDimension", ""))
    default_cooldown = SAGEMAKER_DEFAULT_COOLDOWN_S if dimension.startswith("sagemaker:") else 0
    tracking: list[TargetTrackingSpec] = []
    steps: list[StepPolicySpec] = []
    for logical_id, resource in _of_type(template, _POLICY).items():
        p = resource.get("Properties", {})
        attached = _referenced_id(p.get("ScalingTargetId")) == target_id or (
            resolve.value(p.get("ResourceId")) == resource_id and p.get("ScalableDimension") == dimension
        )
        if not attached:
            continue
        if p.get("PolicyType") == "TargetTrackingScaling":
            config = p.get("TargetTrackingScalingPolicyConfiguration", {})
            if "CustomizedMetricSpecification" in config:
                spec = config["CustomizedMetricSpecification"]
                queries = customized_queries(resolve.value(spec))
            else:
                kind = config.get("PredefinedMetricSpecification", {}).get("PredefinedMetricType", "")
                queries = _predefined_queries(kind, resource_id)
            try:
                check_queries(queries)
            except MetricMathError as exc:
                raise OpsError(f"scaling policy {logical_id}: {exc}", EXIT_USAGE) from None
            tracking.append(
                TargetTrackingSpec(
                    logical_id=logical_id,
                    target=float(config["TargetValue"]),
                    queries=tuple(queries),
                    scale_in_cooldown_s=_int(config.get("ScaleInCooldown", default_cooldown), "ScaleInCooldown"),
                    scale_out_cooldown_s=_int(config.get("ScaleOutCooldown", default_cooldown), "ScaleOutCooldown"),
                    disable_scale_in=config.get("DisableScaleIn", False) in (True, "true"),
                )
            )
        elif p.get("PolicyType") == "StepScaling":
            config = p.get("StepScalingPolicyConfiguration", {})
            steps.append(
                StepPolicySpec(
                    logical_id=logical_id,
                    adjustment_type=str(config.get("AdjustmentType", "ChangeInCapacity")),
                    steps=tuple(
                        (
                            _bound(s.get("MetricIntervalLowerBound")),
                            _bound(s.get("MetricIntervalUpperBound")),
                            _int(s["ScalingAdjustment"], "ScalingAdjustment"),
                        )
                        for s in config.get("StepAdjustments", [])
                    ),
                    cooldown_s=_int(config.get("Cooldown", default_cooldown), "Cooldown"),
                    min_adjustment_magnitude=_int(config["MinAdjustmentMagnitude"], "MinAdjustmentMagnitude") if "MinAdjustmentMagnitude" in config else None,
                    aggregation=str(config.get("MetricAggregationType", "Average")),
                )
            )
    unused = [s.logical_id for s in steps if not any(s.logical_id in a.actions for a in alarms.values())]
    if not tracking and len(unused) == len(steps):
        raise OpsError(f"endpoint {endpoint}: no scaling policy is attached to its scalable target {target_id} (nothing would ever scale)", EXIT_USAGE)
    return ScalingSpec(
        logical_id=target_id,
        dimension=dimension,
        min_capacity=_int(props.get("MinCapacity", 0), "MinCapacity"),
        max_capacity=_int(props.get("MaxCapacity", 1), "MaxCapacity"),
        target_tracking=tuple(tracking),
        steps=tuple(steps),
    )


def _bound(value: Any) -> float | None:
    return None if value is None else float(value)


def _max_concurrency(scaling: ScalingSpec) -> dict[str, float]:
    """``{type: K}`` from expressions ``c / K`` over a type's concurrency metric (the weighted-utilization form)."""
    found: dict[str, float] = {}
    for policy in scaling.target_tracking:
        stats = {q["Id"]: q["MetricStat"] for q in policy.queries if "MetricStat" in q}
        for query in policy.queries:
            match = _RATIO.match(str(query.get("Expression", "")))
            if not match or match.group(1) not in stats:
                continue
            metric = stats[match.group(1)]["Metric"]
            if metric.get("MetricName") not in ("ConcurrentRequestsPerModel", "ConcurrentRequestsPerCopy"):
                continue
            dims = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
            divisor = float(match.group(2))
            if "InstanceType" in dims and divisor > 0 and math.isfinite(divisor):
                found[str(dims["InstanceType"])] = divisor
    return found
