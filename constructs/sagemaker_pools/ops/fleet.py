"""What an endpoint runs on right now: its variants, their pools and instance counts.

``DescribeEndpoint`` reports each variant's instance count per instance type
(``ProductionVariants[].InstancePools[] = {InstanceType, CurrentInstanceCount}``) but not the
pools' priorities or models; ``DescribeEndpointConfig`` has those. :func:`fetch_endpoint_state`
joins the two (for the live config and, during a deployment, the pending one) and, for
endpoints that host inference components, adds each component's copies per instance type
(``DescribeInferenceComponent`` -> ``RuntimeConfig.PlacementStatus``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from botocore.exceptions import ClientError

from .errors import error_code

__all__ = [
    "PoolState",
    "StageState",
    "VariantState",
    "PendingState",
    "Placement",
    "ComponentState",
    "EndpointState",
    "fetch_endpoint_state",
    "build_endpoint_state",
]


@dataclasses.dataclass(frozen=True)
class PoolState:
    """One instance type of a variant.

    Attributes:
        instance_type: the ``ml.*`` type.
        priority: 1 (tried first) to 5, from the endpoint config; None when the config does
            not list this type (it then came from the live summary only).
        model_name: the model this pool runs (its ``ModelNameOverride`` or the variant's model).
        model_override: True when the pool has its own model (``ModelNameOverride``).
        instances: instances of this type now; None when SageMaker has not reported a count.
        preferred: True for the highest-priority pool of the variant.
    """

    instance_type: str
    priority: int | None
    model_name: str | None
    model_override: bool
    instances: int | None
    preferred: bool

    @property
    def fallback_in_use(self) -> bool:
        """A lower-priority pool that has instances: SageMaker fell back to it."""
        return not self.preferred and (self.instances or 0) > 0


@dataclasses.dataclass(frozen=True)
class StageState:
    """One entry of a variant's ``VariantStatus`` (a deployment stage)."""

    status: str
    message: str | None
    start_time: dt.datetime | None


@dataclasses.dataclass(frozen=True)
class VariantState:
    """A production (or shadow) variant, merged from the endpoint and its config.

    Attributes:
        name: the variant name.
        shadow: True for a shadow variant.
        model_name: the variant's default model; None for an inference-component variant.
        uses_pools: True when the config lists ``InstancePools`` (False: one ``InstanceType``).
        config_known: False when the endpoint config could not be described.
        pools: the pools in priority order (one entry for a single-type variant; none for a
            serverless variant).
        current_instances / desired_instances: the variant's instance counts.
        current_weight / desired_weight: the variant's traffic weights.
        serverless: the current serverless config, for a serverless variant.
        routing: the routing strategy, None when the config sets none (SageMaker's default).
        provision_timeout_s: ``VariantInstanceProvisionTimeoutInSeconds``.
        stages: ``VariantStatus`` entries (deployment stages in progress).
    """

    name: str
    shadow: bool
    model_name: str | None
    uses_pools: bool
    config_known: bool
    pools: tuple[PoolState, ...]
    current_instances: int | None
    desired_instances: int | None
    current_weight: float | None
    desired_weight: float | None
    serverless: Mapping[str, Any] | None
    routing: str | None
    provision_timeout_s: int | None
    stages: tuple[StageState, ...]

    @property
    def fallbacks_in_use(self) -> tuple[PoolState, ...]:
        """The lower-priority pools that currently have instances."""
        return tuple(p for p in self.pools if p.fallback_in_use)


@dataclasses.dataclass(frozen=True)
class PendingState:
    """A deployment in progress (``PendingDeploymentSummary``)."""

    config_name: str
    start_time: dt.datetime | None
    variants: tuple[VariantState, ...]


@dataclasses.dataclass(frozen=True)
class Placement:
    """Copies of an inference component on one instance type."""

    instance_type: str
    copies: int
    model_name: str | None


@dataclasses.dataclass(frozen=True)
class ComponentState:
    """An inference component and where its copies run."""

    name: str
    status: str | None
    variant_name: str | None
    desired_copies: int | None
    current_copies: int | None
    placements: tuple[Placement, ...]
    failure_reason: str | None


@dataclasses.dataclass(frozen=True)
class EndpointState:
    """Everything ``sagemaker-pools status`` shows about one endpoint."""

    name: str
    arn: str
    status: str
    failure_reason: str | None
    config_name: str | None
    last_modified: dt.datetime | None
    variants: tuple[VariantState, ...]
    pending: PendingState | None
    components: tuple[ComponentState, ...]
    notes: tuple[str, ...] = ()


def fetch_endpoint_state(sm: Any, endpoint_name: str) -> EndpointState:
    """Describe ``endpoint_name`` (and its configs and inference components) with client ``sm``."""
    endpoint = sm.describe_endpoint(EndpointName=endpoint_name)
    notes: list[str] = []
    configs: dict[str, Mapping[str, Any] | None] = {}
    names = [endpoint.get("EndpointConfigName"), (endpoint.get("PendingDeploymentSummary") or {}).get("EndpointConfigName")]
    for name in names:
        if name and name not in configs:
            configs[name] = _describe_config(sm, name, notes)
    components: list[Mapping[str, Any]] = []
    if any(_hosts_components(c) for c in configs.values() if c is not None):
        components = fetch_components(sm, endpoint["EndpointName"])
    return build_endpoint_state(endpoint, configs, components, notes)


def _describe_config(sm: Any, name: str, notes: list[str]) -> Mapping[str, Any] | None:
    try:
        return sm.describe_endpoint_config(EndpointConfigName=name)  # type: ignore[no-any-return]
    except ClientError as exc:
        code, message = error_code(exc)
        if code == "ValidationException" and message.startswith("Could not find"):
            notes.append(f"endpoint configuration {name} no longer exists: pool priorities and models are unknown")
            return None
        raise


def _hosts_components(config: Mapping[str, Any]) -> bool:
    """Inference-component endpoints have variants without a model (and not serverless)."""
    return any(not v.get("ModelName") and not v.get("ServerlessConfig") for v in config.get("ProductionVariants", []))


def fetch_components(sm: Any, endpoint_name: str) -> list[Mapping[str, Any]]:
    """``DescribeInferenceComponent`` of every inference component on the endpoint."""
    names: list[str] = []
    kwargs: dict[str, Any] = {"EndpointNameEquals": endpoint_name}
    while True:
        page = sm.list_inference_components(**kwargs)
        names.extend(c["InferenceComponentName"] for c in page.get("InferenceComponents", []))
        token = page.get("NextToken")
        if not token:
            break
        kwargs["NextToken"] = token
    return [sm.describe_inference_component(InferenceComponentName=n) for n in names]


def build_endpoint_state(
    endpoint: Mapping[str, Any],
    configs: Mapping[str, Mapping[str, Any] | None],
    components: Sequence[Mapping[str, Any]] = (),
    notes: Sequence[str] = (),
) -> EndpointState:
    """Merge DescribeEndpoint, DescribeEndpointConfig (by config name) and DescribeInferenceComponent outputs."""
    config = configs.get(endpoint.get("EndpointConfigName") or "")
    variants = _variants(endpoint.get("ProductionVariants", []), config, "ProductionVariants", shadow=False)
    variants += _variants(endpoint.get("ShadowProductionVariants", []), config, "ShadowProductionVariants", shadow=True)
    pending = None
    summary = endpoint.get("PendingDeploymentSummary")
    if summary:
        pending_config = configs.get(summary["EndpointConfigName"])
        pending = PendingState(
            config_name=summary["EndpointConfigName"],
            start_time=summary.get("StartTime"),
            variants=_variants(summary.get("ProductionVariants", []), pending_config, "ProductionVariants", shadow=False)
            + _variants(summary.get("ShadowProductionVariants", []), pending_config, "ShadowProductionVariants", shadow=True),
        )
    return EndpointState(
        name=endpoint["EndpointName"],
        arn=endpoint["EndpointArn"],
        status=endpoint["EndpointStatus"],
        failure_reason=endpoint.get("FailureReason"),
        config_name=endpoint.get("EndpointConfigName"),
        last_modified=endpoint.get("LastModifiedTime"),
        variants=variants,
        pending=pending,
        components=tuple(_component(c) for c in components),
        notes=tuple(notes),
    )


def _variants(
    summaries: Sequence[Mapping[str, Any]], config: Mapping[str, Any] | None, key: str, *, shadow: bool
) -> tuple[VariantState, ...]:
    configured = {v["VariantName"]: v for v in (config or {}).get(key, [])}
    names = [s["VariantName"] for s in summaries]
    if not summaries:  # endpoint still creating: show what the config asks for
        names = list(configured)
    by_name = {s["VariantName"]: s for s in summaries}
    return tuple(_variant(by_name.get(n, {"VariantName": n}), configured.get(n), shadow=shadow) for n in names)


def _variant(summary: Mapping[str, Any], config: Mapping[str, Any] | None, *, shadow: bool) -> VariantState:
    config_known = config is not None
    config = config or {}
    default_model = config.get("ModelName")
    live_counts = {p["InstanceType"]: p.get("CurrentInstanceCount") for p in summary.get("InstancePools", [])}
    configured_pools = sorted(config.get("InstancePools", []), key=lambda p: int(p.get("Priority", 99)))
    pools: list[PoolState] = []
    if configured_pools:
        for index, pool in enumerate(configured_pools):
            override = pool.get("ModelNameOverride")
            pools.append(
                PoolState(
                    instance_type=pool["InstanceType"],
                    priority=pool.get("Priority"),
                    model_name=override or default_model,
                    model_override=bool(override),
                    instances=live_counts.get(pool["InstanceType"]),
                    preferred=index == 0,
                )
            )
    else:
        single = config.get("InstanceType") or summary.get("InstanceType")
        if single:
            count = live_counts.get(single, summary.get("CurrentInstanceCount"))
            pools.append(PoolState(single, 1, default_model, False, count, True))
    known = {p.instance_type for p in pools}
    for instance_type, count in live_counts.items():  # reported live but not in the config
        if instance_type not in known:
            pools.append(PoolState(instance_type, None, None, False, count, not pools))
    routing = (config.get("RoutingConfig") or summary.get("RoutingConfig") or {}).get("RoutingStrategy")
    return VariantState(
        name=summary["VariantName"],
        shadow=shadow,
        model_name=default_model,
        uses_pools=bool(configured_pools),
        config_known=config_known,
        pools=tuple(pools),
        current_instances=summary.get("CurrentInstanceCount"),
        desired_instances=summary.get("DesiredInstanceCount"),
        current_weight=summary.get("CurrentWeight"),
        desired_weight=summary.get("DesiredWeight"),
        serverless=summary.get("CurrentServerlessConfig") or summary.get("DesiredServerlessConfig") or config.get("ServerlessConfig"),
        routing=routing,
        provision_timeout_s=config.get("VariantInstanceProvisionTimeoutInSeconds"),
        stages=tuple(
            StageState(s["Status"], s.get("StatusMessage"), s.get("StartTime")) for s in summary.get("VariantStatus", [])
        ),
    )


def _component(described: Mapping[str, Any]) -> ComponentState:
    specs = list(described.get("Specifications", []))
    if described.get("Specification"):
        specs.append(described["Specification"])
    model_by_type = {s.get("InstanceType"): s.get("ModelName") for s in specs}
    runtime = described.get("RuntimeConfig") or {}
    placements = tuple(
        Placement(p["InstanceType"], p["CurrentCopyCount"], model_by_type.get(p["InstanceType"], model_by_type.get(None)))
        for p in runtime.get("PlacementStatus", [])
    )
    return ComponentState(
        name=described["InferenceComponentName"],
        status=described.get("InferenceComponentStatus"),
        variant_name=described.get("VariantName"),
        desired_copies=runtime.get("DesiredCopyCount"),
        current_copies=runtime.get("CurrentCopyCount"),
        placements=placements,
        failure_reason=described.get("FailureReason"),
    )
