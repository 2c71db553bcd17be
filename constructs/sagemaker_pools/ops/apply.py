"""``migrate --apply``: create the new config, update the endpoint, wait for the outcome.

The wait polls DescribeEndpoint and shows one progress line per poll (rewritten in place on a
terminal). It ends when the endpoint is InService on the new config (success), InService on
the old one (the deployment rolled back), Failed / UpdateRollbackFailed / OutOfService, or when
the wait times out; every ending but success is an :class:`OpsError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .context import Context
from .errors import OpsError
from .migrate import MigrationPlan

__all__ = ["apply_plan", "wait_for_update", "progress_line"]

_FAILED = frozenset({"Failed", "UpdateRollbackFailed", "OutOfService"})


def apply_plan(sm: Any, plan: MigrationPlan, ctx: Context, *, wait: bool, poll_interval: float, timeout: float) -> bool:
    """Create the config and update the endpoint; with ``wait``, block until the update ends.

    Returns True when the endpoint is InService on the new config, False when not waiting.
    Raises :class:`OpsError` when the endpoint cannot be updated or the update fails.
    """
    if plan.cloudformation_stack:
        raise OpsError(
            f"refusing to --apply: CloudFormation stack {plan.cloudformation_stack} manages endpoint "
            f"{plan.endpoint_name}; deploy the PooledEndpoint change through the stack instead"
        )
    if plan.endpoint_status != "InService":
        raise OpsError(
            f"endpoint {plan.endpoint_name} is {plan.endpoint_status}: UpdateEndpoint needs it InService; "
            f"wait (sagemaker-pools status {plan.endpoint_name} --watch) and retry"
        )
    sm.create_endpoint_config(**plan.create_request)
    ctx.err.write(f"created endpoint config {plan.new_config_name}\n")
    sm.update_endpoint(**plan.update_request)
    retained = " (instance count retained)" if plan.update_request.get("RetainAllVariantProperties") else ""
    ctx.err.write(f"updating endpoint {plan.endpoint_name} to {plan.new_config_name}{retained}\n")
    ctx.err.flush()
    if not wait:
        return False
    wait_for_update(sm, plan.endpoint_name, plan.new_config_name, ctx, poll_interval=poll_interval, timeout=timeout)
    return True


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
                raise OpsError(
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
