"""``sagemaker-pools simulate TEMPLATE``: replay a traffic trace and outages through a template's own scaling."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from ..context import Context
from ..durations import parse_duration
from ..errors import EXIT_USAGE, OpsError
from ..names import sagemaker_name
from .cloudwatch_traffic import describe, parse_time, read_traffic_from, window_of
from .engine import Scenario, simulate
from .inputs import (
    Traffic,
    default_start_up_minutes,
    parse_assignments,
    parse_outage,
    positive_number,
    read_latency,
    read_traffic,
    write_traffic,
)
from .readings import LAUNCH_POST, READINGS
from .report import render_text, to_json
from .template import load_template, read_fleet

__all__ = ["add_parser", "run"]

#: Minutes an inference-component copy takes to load on a serving instance, unless --copy-start-up says.
DEFAULT_COPY_START_UP = "5m"
#: The former ``--fallback`` values as readings (the developer guide's ``immediate`` is the default now).
_FALLBACK_READINGS: dict[str, tuple[str, ...]] = {"after-timeout": (LAUNCH_POST,), "immediate": ()}


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register the ``simulate`` subcommand (only ``--traffic-from`` calls AWS, with the common AWS options)."""
    p = subparsers.add_parser(
        "simulate",
        parents=parents,
        help="replay traffic (a file, or an endpoint's from CloudWatch) and capacity outages through a synthesized template's scaling policies",
        description="Simulate, minute by minute, what a pooled endpoint defined in a CloudFormation template does under a "
        "traffic trace and capacity outages: pools with fallback, start-up, load, CloudWatch alarms and Application Auto "
        "Scaling, as synthesized. No AWS access, except --traffic-from, which reads a live endpoint's traffic from "
        "CloudWatch; see docs/simulate.md.",
    )
    p.add_argument("template", metavar="TEMPLATE", help="a synthesized template (.json), or a cdk.out folder with --stack")
    p.add_argument("--stack", help="the stack in a cdk.out folder")
    p.add_argument("--endpoint", metavar="LOGICAL_ID", help="the AWS::SageMaker::Endpoint to simulate (when the template has several)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--traffic", metavar="FILE.csv", help="header minute,concurrency or minute,requests_per_second; values hold until the next row")
    source.add_argument(
        "--traffic-from",
        type=sagemaker_name,
        metavar="ENDPOINT",
        help="replay a live endpoint's traffic from CloudWatch (ModelLatency, Little's law) between --start and --end "
        "(needs cloudwatch:ListMetrics and cloudwatch:GetMetricData)",
    )
    p.add_argument("--start", metavar="TIME", help="with --traffic-from: ISO 8601 (UTC unless an offset is given), or a duration ago (24h, 2d)")
    p.add_argument("--end", metavar="TIME", help="with --traffic-from: as --start, or now (default: now)")
    p.add_argument("--traffic-out", metavar="FILE.csv", help="with --traffic-from: also write what was read as a --traffic file, to replay offline")
    p.add_argument("--outage", action="append", default=[], metavar="TYPE@START-END", help="no capacity of TYPE in that window, e.g. ml.g6e.48xlarge@0m-240m (repeatable)")
    p.add_argument("--start-up", action="append", default=[], metavar="TYPE=DURATION", help="launch to serving (default: 10m with accelerators, else 5m)")
    p.add_argument(
        "--reading",
        action="append",
        default=[],
        choices=list(READINGS),
        metavar="NAME",
        help="replace one default rule by another source's reading (repeatable): "
        + "; ".join(f"{name}: {rule}" for name, rule in READINGS.items()),
    )
    # Before --reading: after-timeout is the launch-post reading; immediate is today's default.
    p.add_argument("--fallback", choices=list(_FALLBACK_READINGS), help=argparse.SUPPRESS)
    p.add_argument("--copy-start-up", default=DEFAULT_COPY_START_UP, metavar="DURATION", help=f"inference components: a copy's load time (default {DEFAULT_COPY_START_UP})")
    p.add_argument("--price", action="append", default=[], metavar="TYPE=USD_PER_HOUR", help="adds cost by type to the summary")
    p.add_argument("--latency", action="append", default=[], metavar="TYPE=SECONDS|BENCH.json", help="seconds per request (or a bench --json report): needed with requests_per_second")
    p.add_argument("--max-concurrency", action="append", default=[], metavar="TYPE=N", help="concurrent requests one instance (copy) serves (default: what the policies divide by)")
    p.add_argument("--duration", metavar="D", help="simulated time, e.g. 24h (default: to the last row of the trace + 1 minute)")
    p.add_argument("--every", type=int, default=0, metavar="N", help="text output: also print every N-th minute (default: only minutes where something changed)")
    p.add_argument("--json", action="store_true", help="print the timeline and summary as JSON (schema in docs/simulate.md)")
    p.add_argument("--plot", metavar="FILE.png", help="draw instances by type, the signal and the traffic (needs the [sim] extra)")
    p.set_defaults(handler=run)


def _traffic(args: argparse.Namespace, ctx: Context) -> tuple[Traffic, int]:
    """The trace and the minutes it covers: from ``--traffic``, or read from CloudWatch with ``--traffic-from``."""
    if args.traffic_from is None:
        for flag, value in (("--start", args.start), ("--end", args.end), ("--traffic-out", args.traffic_out)):
            if value is not None:
                raise OpsError(f"{flag} goes with --traffic-from ENDPOINT (--traffic reads a file)", EXIT_USAGE)
        traffic = read_traffic(args.traffic)
        return traffic, traffic.last_minute + 1
    if args.start is None:
        raise OpsError("--traffic-from needs --start: ISO 8601 (2026-11-28T00:00Z) or a duration ago (24h)", EXIT_USAGE)
    now = ctx.now()
    window = window_of(parse_time(args.start, "--start", now), parse_time(args.end or "now", "--end", now), now)
    recorded = read_traffic_from(ctx.clients.cloudwatch(), args.traffic_from, window)
    ctx.err.write(describe(recorded, args.traffic_from) + "\n")
    if args.traffic_out:
        write_traffic(args.traffic_out, recorded.traffic)
    return recorded.traffic, window.minutes


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Read the inputs, simulate, print (and draw)."""
    if args.plot:
        from .plot import require_matplotlib

        require_matplotlib()  # fail before the work, with the install hint
    template = load_template(args.template, args.stack)
    spec = read_fleet(template, args.endpoint)
    types = spec.types
    traffic, traffic_minutes = _traffic(args, ctx)
    outages: dict[str, list[tuple[int, int]]] = {}
    for text in args.outage:
        outage = parse_outage(text, types)
        outages.setdefault(outage.instance_type, []).append((outage.start, outage.end))
    start_up = {t: default_start_up_minutes(t) for t in types}
    for t, value in parse_assignments(args.start_up, "--start-up", types).items():
        start_up[t] = math.ceil(parse_duration(value, f"--start-up {t}") / 60)
    copy_start_up = math.ceil(parse_duration(args.copy_start_up, "--copy-start-up") / 60)
    prices = {t: positive_number(v, f"--price {t}") for t, v in parse_assignments(args.price, "--price", types).items()}
    latency = {t: read_latency(v, f"--latency {t}") for t, v in parse_assignments(args.latency, "--latency", types).items()}
    concurrency = {t: positive_number(v, f"--max-concurrency {t}") for t, v in parse_assignments(args.max_concurrency, "--max-concurrency", types).items()}
    if traffic.column == "requests_per_second":
        missing = [t for t in types if t not in latency]
        if missing:
            raise OpsError(f"a requests_per_second trace needs --latency for every pool: missing {', '.join(missing)}", EXIT_USAGE)
    if args.duration is not None:
        duration = math.ceil(parse_duration(args.duration, "--duration") / 60)
        if duration < 1:
            raise OpsError("--duration must be at least 1m", EXIT_USAGE)
    else:
        duration = traffic_minutes
    if args.every < 0:
        raise OpsError("--every must be 0 or more", EXIT_USAGE)
    scenario = Scenario(
        load=traffic.expand(duration),
        column=traffic.column,
        outages=outages,
        start_up=start_up,
        copy_start_up=copy_start_up,
        max_concurrency=concurrency,
        latency_s=latency,
        readings=frozenset(args.reading).union(_FALLBACK_READINGS.get(args.fallback or "", ())),
    )
    result = simulate(spec, scenario)
    if args.json:
        ctx.print(json.dumps(to_json(result, prices), indent=1))
    else:
        ctx.print(render_text(result, prices, every=args.every or 10**9))
    if args.plot:
        from .plot import plot

        plot(result, args.plot)
        if not args.json:
            ctx.print(f"\nplot: {args.plot}")
    return 0
