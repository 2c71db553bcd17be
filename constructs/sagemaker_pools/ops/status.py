"""``sagemaker-pools status ENDPOINT``: the hardware an endpoint landed on, pool by pool.

With ``--check-metrics`` it also asks whether every metric the endpoint's alarms, scaling policies
(and ``--dashboard`` dashboards) read exists (:mod:`.metric_check`), and exits 1 when one does not.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

from .context import Context
from .errors import EXIT_USAGE, OpsError
from .metric_check import check_metrics, check_to_json, render_check
from .metric_reads import read_metrics
from .names import sagemaker_name
from .fleet import ComponentState, EndpointState, PendingState, PoolState, VariantState, fetch_endpoint_state
from .table import render_table

__all__ = ["add_parser", "run", "render_text", "state_to_json", "fmt_time"]


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register the ``status`` subcommand."""
    p = subparsers.add_parser(
        "status",
        parents=parents,
        help="show an endpoint's pools, models and instance counts",
        description="For each variant: every pool in priority order with its instance type, model and current "
        "instance count; the fallback pools in use; a pending deployment; inference-component copies per type.",
    )
    p.add_argument("endpoint", metavar="ENDPOINT", type=sagemaker_name, help="endpoint name")
    p.add_argument("--json", action="store_true", help="print JSON (one document per refresh with --watch)")
    p.add_argument("--watch", action="store_true", help="refresh until Ctrl-C")
    p.add_argument(
        "--interval", type=float, default=10.0, metavar="SECONDS", help="seconds between refreshes (default: 10)"
    )
    p.add_argument(
        "--check-metrics",
        action="store_true",
        help="check that every metric the endpoint's alarms and scaling policies read exists (ListMetrics); exit 1 if not",
    )
    p.add_argument(
        "--dashboard",
        action="append",
        default=[],
        metavar="NAME",
        help="with --check-metrics: also check the metrics of this CloudWatch dashboard (repeat)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Print the status once, or refresh it every ``--interval`` seconds with ``--watch``."""
    sm = ctx.clients.sagemaker()
    if args.dashboard and not args.check_metrics:
        raise OpsError("--dashboard needs --check-metrics", EXIT_USAGE)
    if args.check_metrics:
        if args.watch:
            raise OpsError("--check-metrics runs once: it cannot be combined with --watch", EXIT_USAGE)
        return _show_with_metric_check(args, ctx, fetch_endpoint_state(sm, args.endpoint))

    def show() -> None:
        state = fetch_endpoint_state(sm, args.endpoint)
        if args.json:
            ctx.print(json.dumps(state_to_json(state), separators=(",", ":") if args.watch else None, indent=None if args.watch else 2))
            return
        text = render_text(state)
        if args.watch and ctx.interactive:
            ctx.out.write("\x1b[H\x1b[2J")  # clear the screen, cursor home
        if args.watch:
            text += f"\n\n(refreshed {fmt_time(ctx.now())}; every {args.interval:g} s; Ctrl-C to stop)"
        ctx.print(text)
        if args.watch and not ctx.interactive:
            ctx.print()

    if not args.watch:
        show()
        return 0
    return watch(show, interval=args.interval, sleep=ctx.sleep)


def _show_with_metric_check(args: argparse.Namespace, ctx: Context, state: EndpointState) -> int:
    """The status and the metric check (text, or one JSON document with ``metric_check``); exit 1 on a missing metric."""
    cw = ctx.clients.cloudwatch()
    reads = read_metrics(cw, ctx.clients.autoscaling(), state, dashboards=args.dashboard, region=ctx.clients.region())
    check = check_metrics(cw, reads, state)
    if args.json:
        ctx.print(json.dumps({**state_to_json(state), "metric_check": check_to_json(check)}, indent=2))
    else:
        ctx.print(render_text(state) + "\n\n" + render_check(check, state.name))
    error = check.error()
    if error is not None:
        raise error
    return 0


def watch(show: Callable[[], None], *, interval: float, sleep: Callable[[float], None]) -> int:
    """Call ``show`` every ``interval`` seconds until Ctrl-C (exit 0)."""
    try:
        while True:
            show()
            sleep(interval)
    except KeyboardInterrupt:
        return 0


# -- text ------------------------------------------------------------------------------------


def fmt_time(value: dt.datetime | None) -> str:
    """``2026-11-29 10:00:00 UTC`` (or ``-``)."""
    if value is None:
        return "-"
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc)
    return value.strftime("%Y-%m-%d %H:%M:%S UTC")


def render_text(state: EndpointState) -> str:
    """The human-readable status report."""
    lines = [f"Endpoint {state.name}: {state.status}"]
    lines.append(f"  config {state.config_name or '-'}, last modified {fmt_time(state.last_modified)}")
    if state.failure_reason:
        lines.append(f"  failure reason: {state.failure_reason}")
    for variant in state.variants:
        lines.append("")
        lines.extend(_variant_lines(variant))
    if state.pending is not None:
        lines.append("")
        lines.extend(_pending_lines(state.pending))
    if state.components:
        lines.append("")
        lines.extend(_component_lines(state.components))
    for note in state.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _variant_lines(variant: VariantState, indent: str = "") -> list[str]:
    kind = "Shadow variant" if variant.shadow else "Variant"
    head = f"{indent}{kind} {variant.name}"
    if variant.serverless:
        settings = ", ".join(f"{k} {v}" for k, v in variant.serverless.items())
        return [f"{head}: serverless ({settings})"] + _stage_lines(variant, indent + "  ")
    n = variant.current_instances
    counts = f"{_count(n)} instance{'' if n == 1 else 's'}"
    if variant.desired_instances is not None and variant.desired_instances != variant.current_instances:
        counts += f" (desired {variant.desired_instances})"
    details = [counts]
    if variant.current_weight is not None:
        details.append(f"weight {variant.current_weight:g}")
    details.append(f"routing {variant.routing or 'default (RANDOM)'}")
    if variant.provision_timeout_s:
        details.append(f"provision timeout {variant.provision_timeout_s} s")
    if variant.config_known and not variant.uses_pools and variant.pools:
        details.append("single instance type, no fallback pools")
    lines = [f"{head}: " + ", ".join(details)]
    lines.extend(_stage_lines(variant, indent + "  "))
    if variant.pools:
        lines.append(render_table(["PRIORITY", "INSTANCE TYPE", "MODEL", "INSTANCES", "STATE"], [_pool_row(p) for p in variant.pools], indent=indent + "  "))
    in_use = variant.fallbacks_in_use
    if in_use:
        total = sum(p.instances or 0 for p in variant.pools)
        moved = sum(p.instances or 0 for p in in_use)
        preferred = variant.pools[0].instance_type
        listed = ", ".join(f"{p.instance_type} ({p.instances})" for p in in_use)
        lines.append(
            f"{indent}  fallback pools in use: {listed}: {moved} of {total} instances are not on the preferred type {preferred}"
        )
    elif variant.uses_pools:
        lines.append(f"{indent}  no fallback pool in use")
    return lines


def _pool_row(pool: PoolState) -> list[object]:
    model = pool.model_name or "-"
    if pool.model_override:
        model += " (override)"
    if pool.priority is None:
        state = "not in config"
    elif pool.preferred:
        state = "preferred"
    elif pool.fallback_in_use:
        state = "fallback in use"
    else:
        state = "fallback"
    return [pool.priority if pool.priority is not None else "?", pool.instance_type, model, pool.instances, state]


def _stage_lines(variant: VariantState, indent: str) -> list[str]:
    return [
        f"{indent}stage {s.status}" + (f": {s.message}" if s.message else "") + (f" (since {fmt_time(s.start_time)})" if s.start_time else "")
        for s in variant.stages
    ]


def _pending_lines(pending: PendingState) -> list[str]:
    lines = [f"Pending deployment to config {pending.config_name} (started {fmt_time(pending.start_time)})"]
    for variant in pending.variants:
        lines.extend(_variant_lines(variant, indent="  "))
    return lines


def _component_lines(components: tuple[ComponentState, ...]) -> list[str]:
    rows: list[list[object]] = []
    for c in components:
        copies = f"{_count(c.current_copies)}/{_count(c.desired_copies)}"
        head: list[object] = [c.name, c.status or "-", c.variant_name or "-", copies]
        if not c.placements:
            rows.append(head + ["-", "-", None])
        for i, p in enumerate(c.placements):
            rows.append((head if i == 0 else ["", "", "", ""]) + [p.instance_type, p.model_name or "-", p.copies])
    lines = ["Inference components (copies per instance type):"]
    lines.append(
        render_table(["COMPONENT", "STATUS", "VARIANT", "COPIES", "INSTANCE TYPE", "MODEL", "COPIES ON TYPE"], rows, indent="  ")
    )
    lines.extend(f"  {c.name} failed: {c.failure_reason}" for c in components if c.failure_reason)
    return lines


def _count(value: int | None) -> str:
    return "?" if value is None else str(value)


# -- JSON ------------------------------------------------------------------------------------


def state_to_json(state: EndpointState) -> dict[str, Any]:
    """The status as JSON-ready data (times in ISO 8601; each variant lists ``fallbacks_in_use``)."""
    data: dict[str, Any] = _plain(dataclasses.asdict(state))
    for variant_data, variant in zip(data["variants"], state.variants):
        variant_data["fallbacks_in_use"] = [p.instance_type for p in variant.fallbacks_in_use]
    if state.pending is not None:
        for variant_data, variant in zip(data["pending"]["variants"], state.pending.variants):
            variant_data["fallbacks_in_use"] = [p.instance_type for p in variant.fallbacks_in_use]
    return data


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value
