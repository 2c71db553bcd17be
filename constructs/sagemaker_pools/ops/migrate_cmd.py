"""``sagemaker-pools migrate ENDPOINT --fallback TYPE ...``: move a live endpoint to instance pools."""

from __future__ import annotations

import argparse
import json
from typing import Any

from botocore.exceptions import ParamValidationError
from botocore.validate import validate_parameters

from .apply import apply_plan
from .context import Context
from .names import sagemaker_name
from .errors import EXIT_USAGE, OpsError, explain
from .fleet import fetch_endpoint_state
from .migrate import MigrateOptions, MigrationPlan, build_plan
from .migrate_code import code_gaps, pooled_endpoint_code
from .stack_owner import stack_ownership
from .status import render_text, state_to_json
from .table import render_table

__all__ = ["add_parser", "run", "list_tags", "render_plan"]


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register the ``migrate`` subcommand."""
    p = subparsers.add_parser(
        "migrate",
        parents=parents,
        help="print (and optionally apply) the config that moves an endpoint to instance pools",
        description="Read the live endpoint config and print (a) the CreateEndpointConfig request that replaces "
        "InstanceType with InstancePools, the current type at priority 1, and (b) the equivalent PooledEndpoint "
        "code. --apply creates the config and updates the endpoint.",
    )
    p.add_argument("endpoint", metavar="ENDPOINT", type=sagemaker_name, help="endpoint name")
    p.add_argument(
        "--fallback", action="append", required=True, metavar="TYPE", help="a fallback instance type, in priority order (repeat)"
    )
    p.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="TYPE=MODEL",
        help="run model MODEL on pool TYPE (ModelNameOverride); repeat per type",
    )
    p.add_argument(
        "--provision-timeout",
        type=int,
        metavar="SECONDS",
        help="VariantInstanceProvisionTimeoutInSeconds, 300-3600 (default: the current value, else 1200)",
    )
    p.add_argument("--variant", metavar="NAME", type=sagemaker_name, help="the variant to migrate (default: the only one)")
    p.add_argument("--config-name", metavar="NAME", type=sagemaker_name, help="name of the new config (default: <old>-pools-<timestamp>)")
    p.add_argument(
        "--reset-instance-count",
        action="store_true",
        help="let the update reset the instance count to InitialInstanceCount (default: keep the live count)",
    )
    p.add_argument("--json", action="store_true", help="print the plan, both requests and the code as JSON")
    p.add_argument("--apply", action="store_true", help="create the config, update the endpoint and wait")
    p.add_argument("--no-wait", action="store_true", help="with --apply: do not wait for the update to finish")
    p.add_argument("--poll-interval", type=float, default=30.0, metavar="SECONDS", help="seconds between polls (default: 30)")
    p.add_argument(
        "--wait-timeout", type=float, default=7200.0, metavar="SECONDS", help="give up waiting after this long (default: 7200)"
    )
    p.set_defaults(handler=run)


def _overrides(values: list[str]) -> dict[str, str]:
    result: dict[str, str] = {}
    for value in values:
        instance_type, sep, model = value.partition("=")
        if not sep or not instance_type or not model:
            raise OpsError(f"--model {value}: expected TYPE=MODEL, e.g. ml.g6.48xlarge=my-llm-int4", EXIT_USAGE)
        result[instance_type.strip()] = model.strip()
    return result


def list_tags(sm: Any, arn: str) -> list[dict[str, str]]:
    """Every tag of ``arn`` (ListTags, all pages)."""
    tags: list[dict[str, str]] = []
    kwargs: dict[str, Any] = {"ResourceArn": arn}
    while True:
        page = sm.list_tags(**kwargs)
        tags.extend(page.get("Tags", []))
        if not page.get("NextToken"):
            return tags
        kwargs["NextToken"] = page["NextToken"]


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Plan the migration, print it, and with ``--apply`` carry it out."""
    options = MigrateOptions(
        fallbacks=tuple(args.fallback),
        model_overrides=_overrides(args.model),
        provision_timeout_s=args.provision_timeout,
        variant=args.variant,
        config_name=args.config_name,
        retain_instance_count=not args.reset_instance_count,
    )
    sm = ctx.clients.sagemaker()
    endpoint = sm.describe_endpoint(EndpointName=args.endpoint)
    config = sm.describe_endpoint_config(EndpointConfigName=endpoint["EndpointConfigName"])
    tags = list_tags(sm, config["EndpointConfigArn"])
    model = sm.meta.service_model
    plan = build_plan(
        endpoint,
        config,
        tags,
        options,
        create_members=set(model.operation_model("CreateEndpointConfig").input_shape.members),
        cloudformation=stack_ownership(ctx.clients.cloudformation(), endpoint["EndpointArn"]),
        now=ctx.now(),
    )
    for operation, request in (("CreateEndpointConfig", plan.create_request), ("UpdateEndpoint", plan.update_request)):
        try:
            validate_parameters(request, model.operation_model(operation).input_shape)
        except ParamValidationError as exc:
            raise OpsError(f"cannot build a valid {operation} request from the live config: {exc}") from None
    gaps = code_gaps(plan)
    code = pooled_endpoint_code(plan) if not gaps else None
    if gaps:
        ctx.err.write(f"warning: no PooledEndpoint code: it cannot express {', '.join(gaps)}\n")
    if args.json:
        document = plan_to_json(plan, code, gaps)
        if args.apply:
            return _apply_json(sm, plan, ctx, args, document)
        ctx.print(json.dumps(document, indent=2, default=str))
        return 0
    ctx.print(render_plan(plan, code, gaps))
    if not args.apply:
        return 0
    if apply_plan(sm, plan, ctx, wait=not args.no_wait, poll_interval=args.poll_interval, timeout=args.wait_timeout):
        ctx.print("")
        ctx.print(render_text(fetch_endpoint_state(sm, plan.endpoint_name)))
    return 0


def _apply_json(sm: Any, plan: MigrationPlan, ctx: Context, args: argparse.Namespace, document: dict[str, Any]) -> int:
    """``--json --apply``: one JSON document on stdout, printed once the apply has ended however it
    ended: the plan, then ``applied`` (the endpoint's state once InService on the new config;
    ``null`` with ``--no-wait``) or ``error`` (the message, as on stderr), and
    ``restore_autoscaling`` when autoscaling could not be registered again."""
    restore: list[dict[str, Any]] = []
    try:
        done = apply_plan(
            sm, plan, ctx, wait=not args.no_wait, poll_interval=args.poll_interval, timeout=args.wait_timeout, restore_out=restore
        )
        document["applied"] = state_to_json(fetch_endpoint_state(sm, plan.endpoint_name)) if done else None
    except Exception as exc:
        # What the command prints on stderr for it (botocore's errors are explained there too).
        document["error"] = explain(exc, max_attempts=ctx.clients.options.max_attempts).message
        raise
    finally:
        if restore:
            document["restore_autoscaling"] = restore
        ctx.print(json.dumps(document, indent=2, default=str))
    return 0


def plan_to_json(plan: MigrationPlan, code: str | None, gaps: list[str]) -> dict[str, Any]:
    """The plan for tooling: both requests, the pools, the code (or why there is none), who owns the
    endpoint in CloudFormation, and the notes."""
    return {
        "endpoint": plan.endpoint_name,
        "variant": plan.variant_name,
        "old_config": plan.old_config_name,
        "new_config": plan.new_config_name,
        "pools": [
            {"instance_type": p.instance_type, "priority": p.priority, "model": p.model.model_name if p.model else plan.default_model}
            for p in plan.pools
        ],
        "create_endpoint_config": plan.create_request,
        "update_endpoint": plan.update_request,
        "pooled_endpoint_code": code,
        "code_gaps": gaps,
        "cloudformation": plan.cloudformation.to_json(),
        "notes": list(plan.notes),
    }


def render_plan(plan: MigrationPlan, code: str | None, gaps: list[str]) -> str:
    """The human-readable plan: the pools, (a) the two requests as JSON, (b) the code."""
    rows = []
    for pool in plan.pools:
        model = plan.default_model if pool.model is None else f"{pool.model.model_name} (override)"
        role = "current" if pool.instance_type in plan.current_types else "fallback (new)"
        rows.append([pool.priority, pool.instance_type, model, role])
    variant = plan.variant
    lines = [
        f"Migrate endpoint {plan.endpoint_name}, variant {plan.variant_name}: config {plan.old_config_name} -> {plan.new_config_name}",
        render_table(["PRIORITY", "INSTANCE TYPE", "MODEL", "POOL"], rows, indent="  "),
        f"  provision timeout {variant['VariantInstanceProvisionTimeoutInSeconds']} s; "
        + ("live instance count kept (RetainAllVariantProperties)" if plan.update_request.get("RetainAllVariantProperties") else "instance count reset to InitialInstanceCount"),
    ]
    lines.append(f"  {plan.cloudformation.summary()}")
    lines += [f"  note: {note}" for note in plan.notes]
    lines += [
        "",
        "# (a) the CreateEndpointConfig request (boto3: sm.create_endpoint_config(**request); "
        "AWS CLI: aws sagemaker create-endpoint-config --cli-input-json file://request.json)",
        json.dumps(plan.create_request, indent=2, default=str),
        "# then UpdateEndpoint (sm.update_endpoint(**request))",
        json.dumps(plan.update_request, indent=2),
        "",
    ]
    if code is not None:
        lines += ["# (b) the equivalent PooledEndpoint (aws-cdk, sagemaker_pools)", code]
    else:
        lines += ["# (b) no PooledEndpoint code: PooledEndpoint cannot express " + "; ".join(gaps)]
    return "\n".join(lines)
