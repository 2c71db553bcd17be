"""Plan the move of a live endpoint to instance pools (the launch post's migration path).

Create a new endpoint config that is the live one field for field, except that the migrated
variant lists ``InstancePools`` (its current type at priority 1, then the fallbacks) instead
of one ``InstanceType``; then ``UpdateEndpoint`` to it. :func:`build_plan` is pure: it takes
the Describe* outputs and returns the two requests, or refuses with the reason.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..errors import PoolConfigError
from ..instance_types import check_instance_type, has_instance_storage
from ..pools import MAX_POOLS, MAX_PRIORITY, InstancePool, resolve_pools
from .errors import EXIT_USAGE, OpsError
from .stack_owner import StackOwnership

__all__ = [
    "MigrateOptions",
    "MigrationPlan",
    "NamedModel",
    "build_plan",
    "default_config_name",
    "DEFAULT_PROVISION_TIMEOUT_S",
]

#: The launch post's starting value for large GPU types (PooledEndpoint's default too).
DEFAULT_PROVISION_TIMEOUT_S = 1200
# DescribeEndpointConfig output members that describe the config rather than configure it.
_METADATA = frozenset({"EndpointConfigName", "EndpointConfigArn", "CreationTime", "ResponseMetadata"})
_MODEL_NAME = re.compile(r"^[a-zA-Z0-9]([\-a-zA-Z0-9]*[a-zA-Z0-9])?$")


@dataclasses.dataclass(frozen=True)
class NamedModel:
    """An existing SageMaker model, by name (satisfies :class:`sagemaker_pools.IModel`)."""

    model_name: str


@dataclasses.dataclass(frozen=True)
class MigrateOptions:
    """What the user asked for.

    Attributes:
        fallbacks: instance types to add after the current ones, in priority order.
        model_overrides: ``{instance type: model name}`` for pools that run their own model.
        provision_timeout_s: ``VariantInstanceProvisionTimeoutInSeconds`` (300-3600).
            Default: the variant's current value, else 1200.
        variant: the variant to migrate. Default: the only production variant.
        config_name: the new config's name. Default: ``<old name>-pools-<UTC timestamp>``.
        retain_instance_count: keep the live instance count and weight through the update
            (``RetainAllVariantProperties``) instead of resetting them to the config's initial values.
    """

    fallbacks: tuple[str, ...]
    model_overrides: Mapping[str, str] = dataclasses.field(default_factory=dict)
    provision_timeout_s: int | None = None
    variant: str | None = None
    config_name: str | None = None
    retain_instance_count: bool = True


@dataclasses.dataclass(frozen=True)
class MigrationPlan:
    """The result: two requests and what the user should know about them.

    Attributes:
        endpoint_name, endpoint_status: the endpoint as described.
        old_config_name, new_config_name: the live config and the one to create.
        variant_name: the migrated variant.
        default_model: the variant's model.
        pools: the variant's pools after migration, highest priority first.
        current_types: the instance types the variant used before (kept at the top).
        create_request: the CreateEndpointConfig parameters.
        update_request: the UpdateEndpoint parameters.
        config: the live config (DescribeEndpointConfig output) the plan was built from.
        user_tags: the config's tags that are copied (``aws:`` tags cannot be set by users).
        cloudformation: which CloudFormation stack, if any, owns the endpoint (``--apply`` refuses
            unless none does).
        deployment_config: the endpoint's last deployment config, if any.
        notes: remarks for the user.
    """

    endpoint_name: str
    endpoint_status: str
    old_config_name: str
    new_config_name: str
    variant_name: str
    default_model: str
    pools: tuple[InstancePool, ...]
    current_types: tuple[str, ...]
    create_request: dict[str, Any]
    update_request: dict[str, Any]
    config: Mapping[str, Any]
    user_tags: Mapping[str, str]
    cloudformation: StackOwnership
    deployment_config: Mapping[str, Any] | None
    notes: tuple[str, ...]

    @property
    def variant(self) -> Mapping[str, Any]:
        """The migrated variant as it will be created."""
        variants: list[Mapping[str, Any]] = self.create_request["ProductionVariants"]
        return next(v for v in variants if v["VariantName"] == self.variant_name)


def default_config_name(old_name: str, now: dt.datetime) -> str:
    """``<old name, cut to 42 characters>-pools-<YYYYmmddHHMMSS>`` (at most 63 characters)."""
    return f"{old_name[:42]}-pools-{now.astimezone(dt.timezone.utc):%Y%m%d%H%M%S}"


def build_plan(
    endpoint: Mapping[str, Any],
    config: Mapping[str, Any],
    tags: Sequence[Mapping[str, str]],
    options: MigrateOptions,
    *,
    create_members: Collection[str],
    cloudformation: StackOwnership,
    now: dt.datetime,
) -> MigrationPlan:
    """Plan the migration, or raise :class:`OpsError` with the reason it cannot be done.

    Args:
        endpoint: DescribeEndpoint output.
        config: DescribeEndpointConfig output of the endpoint's current config.
        tags: the config's tags (ListTags).
        options: the user's choices.
        create_members: the members of CreateEndpointConfig's input (from the service model):
            any other field of the live config cannot be reproduced and makes the plan fail.
        cloudformation: what CloudFormation says about the endpoint (:func:`.stack_owner.stack_ownership`).
        now: the current time (for the default config name).
    """
    variant = _pick_variant(config, options.variant)
    name = variant["VariantName"]
    if variant.get("ServerlessConfig"):
        raise OpsError(
            f"variant {name} is serverless (ServerlessConfig): instance pools need provisioned instances, "
            "so a serverless variant cannot be migrated"
        )
    if not variant.get("ModelName"):
        raise OpsError(
            f"variant {name} hosts inference components (it has no ModelName): pools on such an endpoint also need "
            "one Specifications entry per instance type in every inference component (UpdateInferenceComponent), "
            "which migrate does not do"
        )
    _check_reproducible(config, create_members)
    existing = _existing_pools(variant)
    pools = _with_fallbacks(existing, options.fallbacks, variant["ModelName"], options.model_overrides)
    timeout = _provision_timeout(options.provision_timeout_s, variant)
    _check_storage(config, variant, pools, {p.instance_type for p in existing})

    new_name = options.config_name or default_config_name(config["EndpointConfigName"], now)
    new_variant = {k: copy.deepcopy(v) for k, v in variant.items() if k != "InstanceType"}
    new_variant["InstancePools"] = [_pool_entry(p) for p in pools]
    new_variant["VariantInstanceProvisionTimeoutInSeconds"] = timeout
    request: dict[str, Any] = {"EndpointConfigName": new_name}
    for key, value in config.items():
        if key not in _METADATA:
            request[key] = copy.deepcopy(value)
    request["ProductionVariants"] = [new_variant if v["VariantName"] == name else copy.deepcopy(v) for v in config["ProductionVariants"]]
    user_tags = {t["Key"]: t["Value"] for t in tags if not t["Key"].startswith("aws:")}
    if user_tags:
        request["Tags"] = [{"Key": k, "Value": v} for k, v in user_tags.items()]

    update: dict[str, Any] = {"EndpointName": endpoint["EndpointName"], "EndpointConfigName": new_name}
    if options.retain_instance_count:
        update["RetainAllVariantProperties"] = True
    if endpoint.get("LastDeploymentConfig"):
        update["RetainDeploymentConfig"] = True

    notes = _notes(variant, tags, options.retain_instance_count)
    return MigrationPlan(
        endpoint_name=endpoint["EndpointName"],
        endpoint_status=endpoint["EndpointStatus"],
        old_config_name=config["EndpointConfigName"],
        new_config_name=new_name,
        variant_name=name,
        default_model=variant["ModelName"],
        pools=pools,
        current_types=tuple(p.instance_type for p in existing),
        create_request=request,
        update_request=update,
        config=config,
        user_tags=user_tags,
        cloudformation=cloudformation,
        deployment_config=endpoint.get("LastDeploymentConfig"),
        notes=notes,
    )


def _pick_variant(config: Mapping[str, Any], wanted: str | None) -> Mapping[str, Any]:
    variants: list[Mapping[str, Any]] = list(config.get("ProductionVariants", []))
    names = [v["VariantName"] for v in variants]
    if wanted is not None:
        for variant in variants:
            if variant["VariantName"] == wanted:
                return variant
        raise OpsError(f"--variant {wanted}: config {config['EndpointConfigName']} has variants {', '.join(names)}", EXIT_USAGE)
    if len(variants) != 1:
        raise OpsError(
            f"config {config['EndpointConfigName']} has {len(variants)} production variants ({', '.join(names)}): "
            "choose one with --variant",
            EXIT_USAGE,
        )
    return variants[0]


def _check_reproducible(config: Mapping[str, Any], create_members: Collection[str]) -> None:
    extra = sorted(k for k in config if k not in _METADATA and k not in create_members)
    if extra:
        raise OpsError(
            f"cannot reproduce endpoint config {config['EndpointConfigName']} faithfully: DescribeEndpointConfig "
            f"returned {', '.join(extra)}, which CreateEndpointConfig does not accept (upgrade boto3, or migrate by hand)"
        )


def _existing_pools(variant: Mapping[str, Any]) -> tuple[InstancePool, ...]:
    # Types the live config already uses were accepted by SageMaker: no check against our list.
    if variant.get("InstancePools"):
        return tuple(
            InstancePool(
                instance_type=p["InstanceType"],
                priority=p["Priority"],
                model=NamedModel(p["ModelNameOverride"]) if p.get("ModelNameOverride") else None,
                allow_unknown_instance_type=True,
            )
            for p in sorted(variant["InstancePools"], key=lambda p: int(p["Priority"]))
        )
    if not variant.get("InstanceType"):
        raise OpsError(f"variant {variant['VariantName']} has neither InstanceType nor InstancePools: nothing to migrate")
    return (InstancePool(instance_type=variant["InstanceType"], priority=1, allow_unknown_instance_type=True),)


def _with_fallbacks(
    existing: tuple[InstancePool, ...], fallbacks: Sequence[str], default_model: str, overrides: Mapping[str, str]
) -> tuple[InstancePool, ...]:
    if not fallbacks:
        raise OpsError("give at least one --fallback TYPE", EXIT_USAGE)
    present = [p.instance_type for p in existing]
    for index, instance_type in enumerate(fallbacks):
        try:
            check_instance_type(instance_type, f"--fallback {instance_type}")
        except PoolConfigError as exc:
            raise OpsError(f"unknown instance type: {exc}", EXIT_USAGE) from None
        if instance_type in present or instance_type in fallbacks[:index]:
            raise OpsError(f"--fallback {instance_type}: the variant already has a pool of that type", EXIT_USAGE)
    total = len(existing) + len(fallbacks)
    if total > MAX_POOLS:
        raise OpsError(
            f"too many pools: the variant would have {total} ({', '.join(present + list(fallbacks))}); "
            f"SageMaker allows at most {MAX_POOLS} instance pools per variant"
        )
    top = max(int(p.priority or 0) for p in existing)
    if top + len(fallbacks) > MAX_PRIORITY:
        raise OpsError(
            f"no priority left for {len(fallbacks)} fallback(s): the existing pools use priorities up to {top} "
            f"and priorities stop at {MAX_PRIORITY}"
        )
    pools = list(existing) + [
        InstancePool(instance_type=t, priority=top + i + 1) for i, t in enumerate(fallbacks)
    ]
    types = [p.instance_type for p in pools]
    for instance_type, model in overrides.items():
        if instance_type not in types:
            raise OpsError(f"--model {instance_type}={model}: {instance_type} is not one of the pools ({', '.join(types)})", EXIT_USAGE)
        if not (len(model) <= 63 and _MODEL_NAME.match(model)):
            raise OpsError(f"--model {instance_type}={model}: not a valid SageMaker model name", EXIT_USAGE)
    pools = [
        dataclasses.replace(p, model=None if overrides[p.instance_type] == default_model else NamedModel(overrides[p.instance_type]))
        if p.instance_type in overrides
        else p
        for p in pools
    ]
    try:
        return resolve_pools(pools, "pools")
    except PoolConfigError as exc:
        raise OpsError(f"invalid pools: {exc}") from None


def _provision_timeout(given: int | None, variant: Mapping[str, Any]) -> int:
    timeout = given if given is not None else variant.get("VariantInstanceProvisionTimeoutInSeconds", DEFAULT_PROVISION_TIMEOUT_S)
    if not 300 <= int(timeout) <= 3600:
        raise OpsError(f"--provision-timeout {timeout}: must be 300 to 3600 seconds", EXIT_USAGE)
    return int(timeout)


def _check_storage(
    config: Mapping[str, Any], variant: Mapping[str, Any], pools: Sequence[InstancePool], existing: Collection[str]
) -> None:
    """KmsKeyId / VolumeSizeInGB are rejected for types with NVMe instance storage (no EBS volume)."""
    fields = [f for f, present in (("KmsKeyId", config.get("KmsKeyId")), ("VolumeSizeInGB", variant.get("VolumeSizeInGB"))) if present]
    for field in fields:
        for pool in pools:
            if pool.instance_type not in existing and has_instance_storage(pool.instance_type):
                raise OpsError(
                    f"cannot reproduce {field} with fallback {pool.instance_type}: the config sets {field} for an "
                    f"EBS ML storage volume, but {pool.instance_type} has NVMe instance storage and CreateEndpointConfig "
                    f"rejects {field} for it; choose EBS-only fallback types"
                )


def _pool_entry(pool: InstancePool) -> dict[str, Any]:
    entry: dict[str, Any] = {"InstanceType": pool.instance_type, "Priority": pool.priority}
    if pool.model is not None:
        entry["ModelNameOverride"] = pool.model.model_name
    return entry


def _notes(
    variant: Mapping[str, Any],
    tags: Sequence[Mapping[str, str]],
    retain: bool,
) -> tuple[str, ...]:
    notes = []
    system = sorted(t["Key"] for t in tags if t["Key"].startswith("aws:"))
    if system:
        notes.append(f"not copied: tags reserved for AWS ({', '.join(system)})")
    routing = (variant.get("RoutingConfig") or {}).get("RoutingStrategy")
    if routing != "LEAST_OUTSTANDING_REQUESTS":
        notes.append(
            f"routing is {routing or 'the default (RANDOM)'}: on a mixed fleet the launch post recommends "
            "LEAST_OUTSTANDING_REQUESTS, so that slower fallback instances get fewer requests"
        )
    if not retain:
        notes.append("the update resets the instance count to InitialInstanceCount (--reset-instance-count)")
    return tuple(notes)
