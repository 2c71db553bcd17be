"""``migrate --apply``: create the new config, update the endpoint, wait for the outcome.

The wait polls DescribeEndpoint and shows one progress line per poll (rewritten in place on a
terminal). It ends when the endpoint is InService on the new config (success), InService on
the old one (the deployment rolled back), Failed / UpdateRollbackFailed / OutOfService, or when
the wait times out; every ending but success is an :class:`OpsError`.

A variant registered with Application Auto Scaling is deregistered around the update and
registered again afterwards, also when the update fails or rolls back (:mod:`.autoscaling`).
When the wait gives up (or is interrupted) the update goes on, so nothing is registered yet: the
requests that do it are printed as JSON instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .autoscaling import ScalingRecord, deregister, record_scaling, restore, restore_requests
from .context import Context
from .errors import EXIT_USAGE, OpsError, explain
from .migrate import MigrationPlan

__all__ = ["apply_plan", "wait_for_update", "progress_line", "WaitTimeout"]

_FAILED = frozenset({"Failed", "UpdateRollbackFailed", "OutOfService"})


class WaitTimeout(OpsError):
    """The wait ended before the update did (the update goes on)."""


def apply_plan(
    sm: Any,
    plan: MigrationPlan,
    ctx: Context,
    *,
    wait: bool,
    poll_interval: float,
    timeout: float,
    restore_out: list[dict[str, Any]] | None = None,
) -> bool:
    """Create the config and update the endpoint; with ``wait``, block until the update ends.

    When the migrated variant is registered with Application Auto Scaling, its target, policies
    and scheduled actions are recorded, the target is deregistered before UpdateEndpoint (an
    update that changes the instance type of a scalable target fails) and registered again once
    the update has ended, whether it succeeded, failed or rolled back (:mod:`.autoscaling`).

    Where autoscaling cannot be registered again (a failed restore, a wait that ends before the
    update, an interrupt), the requests that restore it are printed as JSON on stdout, or, with
    ``restore_out``, appended to it (``{"operation", "request"}`` each) for the caller to print.

    Refuses (before any change) when a CloudFormation stack manages the endpoint, or when
    CloudFormation could not be asked (``plan.cloudformation``).

    Returns True when the endpoint is InService on the new config, False when not waiting.
    Raises :class:`OpsError` when the endpoint cannot be updated or the update fails.
    """
    owner = plan.cloudformation
    if owner.state == "managed":
        logical = f" (logical id {owner.logical_id})" if owner.logical_id else ""
        raise OpsError(
            f"refusing to --apply: CloudFormation stack {owner.stack_name} manages endpoint {plan.endpoint_name}{logical}; "
            "deploy the PooledEndpoint change through the stack instead"
        )
    if owner.state == "unknown":
        # Fail closed: an update behind a stack's back is drift, and the permission is read-only and cheap to grant.
        raise OpsError(
            f"refusing to --apply: cannot tell whether a CloudFormation stack manages endpoint {plan.endpoint_name}: "
            f"{owner.reason}; grant it (read-only) and retry"
        )
    if plan.endpoint_status != "InService":
        raise OpsError(
            f"endpoint {plan.endpoint_name} is {plan.endpoint_status}: UpdateEndpoint needs it InService; "
            f"wait (sagemaker-pools status {plan.endpoint_name} --watch) and retry"
        )
    aas = ctx.clients.autoscaling()
    record = record_scaling(aas, ctx.clients.cloudwatch, plan.endpoint_name, plan.variant_name)
    if record is not None and not wait:
        raise OpsError(
            f"--no-wait: variant {plan.variant_name} is registered with Application Auto Scaling ({record.resource_id}); "
            "--apply deregisters it for the update and must wait to register it again: drop --no-wait",
            EXIT_USAGE,
        )
    sm.create_endpoint_config(**plan.create_request)
    ctx.err.write(f"created endpoint config {plan.new_config_name}\n")
    if record is not None:
        deregister(aas, record)
        ctx.err.write(
            f"deregistered scalable target {record.resource_id} ({record.summary()}): "
            "SageMaker refuses to change the instance type of a registered variant; it is registered again after the update\n"
        )
    try:
        sm.update_endpoint(**plan.update_request)
        retained = " (instance count retained)" if plan.update_request.get("RetainAllVariantProperties") else ""
        ctx.err.write(f"updating endpoint {plan.endpoint_name} to {plan.new_config_name}{retained}\n")
        ctx.err.flush()
        if not wait:
            return False
        wait_for_update(sm, plan.endpoint_name, plan.new_config_name, ctx, poll_interval=poll_interval, timeout=timeout)
    except WaitTimeout as exc:
        if record is None:
            raise
        _print_restore_requests(ctx, aas, record, restore_out)
        raise OpsError(
            f"{exc.message}; the scalable target stays deregistered until then: the requests that restore it are {_where(restore_out)}"
        ) from None
    except KeyboardInterrupt:
        if record is not None:  # the update goes on: restoring now could be refused
            _print_restore_requests(ctx, aas, record, restore_out)
        raise
    except Exception as exc:
        if record is None:
            raise
        failure = explain(exc, max_attempts=ctx.clients.options.max_attempts)
        _restore_or_print(ctx, aas, record, failure=failure, restore_out=restore_out)
        raise OpsError(f"{failure.message}; autoscaling restored on {record.resource_id}", failure.exit_code) from None
    if record is not None:
        _restore_or_print(ctx, aas, record, failure=None, restore_out=restore_out)
    return True


def _restore_or_print(
    ctx: Context, aas: Any, record: ScalingRecord, *, failure: OpsError | None, restore_out: list[dict[str, Any]] | None
) -> None:
    """Register the recorded autoscaling again; if that fails, print (or keep) the requests and raise."""
    try:
        for line in restore(aas, ctx.clients.cloudwatch, record):
            ctx.err.write(f"{line}\n")
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line
        _print_restore_requests(ctx, aas, record, restore_out)
        problem = explain(exc, max_attempts=ctx.clients.options.max_attempts).message
        before = f"{failure.message}; " if failure is not None else ""
        raise OpsError(
            f"{before}restoring autoscaling on {record.resource_id} failed: {problem}; the requests that restore it are {_where(restore_out)}"
        ) from None


def _print_restore_requests(ctx: Context, aas: Any, record: ScalingRecord, restore_out: list[dict[str, Any]] | None) -> None:
    """The requests that register the recorded autoscaling again (for the user to send): as JSON on
    stdout, or into ``restore_out``."""
    requests = [{"operation": op, "request": request} for op, request in restore_requests(aas, record)]
    if restore_out is not None:
        restore_out.extend(requests)
    else:
        ctx.print(json.dumps({"restore_autoscaling": requests}, indent=2, default=str))


def _where(restore_out: list[dict[str, Any]] | None) -> str:
    return "printed above" if restore_out is None else "in the JSON output's restore_autoscaling"


def wait_for_update(
    sm: Any, endpoint_name: str, config_name: str, ctx: Context, *, poll_interval: float, timeout: float
) -> Mapping[str, Any]:
    """Poll DescribeEndpoint until the endpoint is InService on ``config_name``; return that description."""
    start = ctx.monotonic()
    last = ""
    try:
        while True:
            endpoint = sm.describe_endpoint(EndpointName=endpoint_name)
            elapsed = ctx.monotonic() - start
            line = progress_line(endpoint, elapsed)
            if ctx.interactive or line.split("] ", 1)[-1] != last.split("] ", 1)[-1]:
                ctx.progress(line)
            last = line
            status = endpoint["EndpointStatus"]
            reason = endpoint.get("FailureReason")
            if status == "InService" and not endpoint.get("PendingDeploymentSummary"):
                if endpoint.get("EndpointConfigName") == config_name:
                    return endpoint  # type: ignore[no-any-return]
                raise OpsError(
                    f"the update rolled back: endpoint {endpoint_name} is InService on config "
                    f"{endpoint.get('EndpointConfigName')}, not {config_name}" + (f"; reason: {reason}" if reason else "")
                )
            if status in _FAILED:
                raise OpsError(f"the update failed: endpoint {endpoint_name} is {status}" + (f": {reason}" if reason else ""))
            if elapsed >= timeout:
                raise WaitTimeout(
                    f"gave up waiting after {elapsed:.0f} s: endpoint {endpoint_name} is still {status}; the update "
                    f"goes on (watch it with: sagemaker-pools status {endpoint_name} --watch)"
                )
            ctx.sleep(poll_interval)
    finally:
        ctx.end_progress()


def progress_line(endpoint: Mapping[str, Any], elapsed: float) -> str:
    """``[mm:ss] Updating | AllTraffic: Creating (Launching instances) | ml.g6e.48xlarge 1, ml.g6.48xlarge 0``."""
    minutes, seconds = divmod(int(elapsed), 60)
    parts = [f"[{minutes:02d}:{seconds:02d}] {endpoint['EndpointStatus']}"]
    pending = endpoint.get("PendingDeploymentSummary") or {}
    for variant in pending.get("ProductionVariants", []):
        stages = "; ".join(
            s["Status"] + (f" ({s['StatusMessage']})" if s.get("StatusMessage") else "") for s in variant.get("VariantStatus", [])
        )
        text = f"{variant['VariantName']}: {stages or 'pending'}"
        pools = variant.get("InstancePools") or []
        if pools:
            text += " | " + ", ".join(f"{p['InstanceType']} {p.get('CurrentInstanceCount', 0)}" for p in pools)
        elif variant.get("CurrentInstanceCount") is not None:
            text += f" | {variant['CurrentInstanceCount']} instances"
        parts.append(text)
    return " | ".join(parts)
