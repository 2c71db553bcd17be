"""The ``PooledEndpoint(...)`` code equivalent to a migration plan's endpoint config.

:func:`code_gaps` lists what in the live config ``PooledEndpoint`` cannot express; when that
list is empty, :func:`pooled_endpoint_code` writes a runnable CDK app whose synthesized
``AWS::SageMaker::EndpointConfig`` matches the CreateEndpointConfig request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .codegen import app_main, camel_case, literal, snake_case, type_suffix
from .migrate import MigrationPlan

__all__ = ["code_gaps", "pooled_endpoint_code"]

# Config members PooledEndpoint expresses (ProductionVariants: one variant, see below).
_CONFIG_SUPPORTED = frozenset({"EndpointConfigName", "EndpointConfigArn", "CreationTime", "ResponseMetadata", "ProductionVariants", "KmsKeyId", "Tags"})
# Variant members PooledEndpoint expresses. InitialVariantWeight: with one variant every weight
# sends it all traffic, so any value is equivalent to the default.
_VARIANT_SUPPORTED = frozenset(
    {
        "VariantName",
        "ModelName",
        "InitialInstanceCount",
        "InitialVariantWeight",
        "InstanceType",
        "InstancePools",
        "VariantInstanceProvisionTimeoutInSeconds",
        "RoutingConfig",
        "VolumeSizeInGB",
        "ModelDataDownloadTimeoutInSeconds",
        "ContainerStartupHealthCheckTimeoutInSeconds",
    }
)


def code_gaps(plan: MigrationPlan) -> list[str]:
    """The live config's fields that ``PooledEndpoint`` cannot reproduce (empty: code can be emitted)."""
    config = plan.create_request
    gaps = [key for key, value in config.items() if key not in _CONFIG_SUPPORTED and value not in (None, [], {})]
    variants = config["ProductionVariants"]
    if len(variants) > 1:
        gaps.append(f"ProductionVariants ({len(variants)} variants; PooledEndpoint has one)")
    variant = plan.variant
    gaps += [
        f"ProductionVariants[{variant['VariantName']}].{key}" for key in variant if key not in _VARIANT_SUPPORTED and variant[key] not in (None, [], {})
    ]
    routing = variant.get("RoutingConfig") or {}
    strategy = routing.get("RoutingStrategy")
    if strategy == "KV_AWARE":
        gaps.append("RoutingConfig.RoutingStrategy KV_AWARE (not in CloudFormation's schema)")
    if strategy == "PREFIX_AWARE" and not {"PrefixLength", "ConcurrencyThreshold"} <= set(routing.get("PrefixAwareRoutingConfig") or {}):
        gaps.append("RoutingConfig PREFIX_AWARE without PrefixLength and ConcurrencyThreshold")
    kms_key = config.get("KmsKeyId")
    if kms_key and not str(kms_key).startswith("arn:"):
        gaps.append(f"KmsKeyId {kms_key} (a key id or alias; the code needs the key ARN)")
    return gaps


def pooled_endpoint_code(plan: MigrationPlan) -> str:
    """A runnable CDK app (``python file.py`` synthesizes it) with the equivalent ``PooledEndpoint``.

    Call only when :func:`code_gaps` is empty.
    """
    variant = plan.variant
    stack_class = camel_case(plan.endpoint_name, default="Endpoint") + "Stack"
    imports = ["App", "Duration", "Stack"]
    body: list[str] = [f'model = PoolModel.from_model_name(self, "Model", {literal(plan.default_model)})']
    model_vars = {plan.default_model: "model"}
    for pool in plan.pools:
        name = pool.model.model_name if pool.model is not None else None
        if name and name not in model_vars:
            var = "model_" + snake_case(pool.instance_type.removeprefix("ml."))
            model_vars[name] = var
            body.append(f'{var} = PoolModel.from_model_name(self, "Model{type_suffix(pool.instance_type)}", {literal(name)})')
    pool_lines = []
    for position, pool in enumerate(plan.pools, start=1):
        args = [f"instance_type={literal(pool.instance_type)}"]
        if pool.model is not None:
            args.append(f"model={model_vars[pool.model.model_name]}")
        if pool.priority != position:
            args.append(f"priority={pool.priority}")
        role = "current type" if pool.instance_type in plan.current_types else "fallback"
        pool_lines.append(f"InstancePool({', '.join(args)}),  # priority {pool.priority}: {role}")

    kwargs = [
        "model=model",
        "pools=[\n" + "".join(f"                {line}\n" for line in pool_lines) + "            ]",
        f"initial_instance_count={variant.get('InitialInstanceCount', 1)}",
        f"variant_name={literal(variant['VariantName'])}",
        f"provision_timeout=Duration.seconds({variant['VariantInstanceProvisionTimeoutInSeconds']})",
        f"routing={_routing(variant.get('RoutingConfig'))}",
    ]
    if not (variant.get("RoutingConfig") or {}).get("RoutingStrategy"):
        kwargs.insert(-1, "# the live config sets no RoutingConfig: SageMaker's default, RANDOM")
    if variant.get("VolumeSizeInGB") is not None:
        kwargs.append(f"volume_size_in_gb={variant['VolumeSizeInGB']}")
    for key, arg in (
        ("ModelDataDownloadTimeoutInSeconds", "model_data_download_timeout"),
        ("ContainerStartupHealthCheckTimeoutInSeconds", "container_startup_health_check_timeout"),
    ):
        if variant.get(key) is not None:
            kwargs.append(f"{arg}=Duration.seconds({variant[key]})")
    extra_imports = []
    if plan.create_request.get("KmsKeyId"):
        extra_imports.append("from aws_cdk import aws_kms as kms")
        kwargs.append(f'kms_key=kms.Key.from_key_arn(self, "Key", {literal(plan.create_request["KmsKeyId"])})')
    if plan.user_tags:
        kwargs.append(f"tags={literal(dict(plan.user_tags), 12)}")

    lines = [
        f'"""PooledEndpoint equivalent of endpoint {plan.endpoint_name} (config {plan.new_config_name}).',
        "",
        "Generated by `sagemaker-pools migrate`. Deploy it as a new endpoint, or bring the live one under",
        "CloudFormation with `cdk import`; the endpoint name is not fixed here, so that deploying this stack",
        "cannot collide with the live endpoint.",
        '"""',
        "",
        f"from aws_cdk import {', '.join(imports)}",
        *extra_imports,
        "from constructs import Construct",
        "",
        "from sagemaker_pools import InstancePool, PoolModel, PooledEndpoint, Routing",
        "",
        "",
        f"class {stack_class}(Stack):",
        "    def __init__(self, scope: Construct, construct_id: str) -> None:",
        "        super().__init__(scope, construct_id)",
        *[f"        {line}" for line in body],
    ]
    if plan.deployment_config:
        lines.append(
            "        # The live endpoint also has a DeploymentConfig (blue/green or rolling): express it with"
        )
        lines.append("        # deployment=DeploymentPolicy.<all_at_once|canary|linear|rolling>(...); see sagemaker_pools.deployment.")
    lines.append("        self.endpoint = PooledEndpoint(")
    lines.append("            self,")
    lines.append('            "Endpoint",')
    lines.extend(f"            {kw}" if kw.startswith("#") else f"            {kw}," for kw in kwargs)
    lines.append("        )")
    lines += app_main(stack_class)
    return "\n".join(lines)


def _routing(config: Mapping[str, Any] | None) -> str:
    strategy = (config or {}).get("RoutingStrategy")
    if strategy == "LEAST_OUTSTANDING_REQUESTS":
        return "Routing.least_outstanding_requests()"
    if strategy == "PREFIX_AWARE":
        prefix = (config or {}).get("PrefixAwareRoutingConfig") or {}
        return f"Routing.prefix_aware(prefix_length={prefix['PrefixLength']}, concurrency_threshold={prefix['ConcurrencyThreshold']})"
    return "Routing.random()"
