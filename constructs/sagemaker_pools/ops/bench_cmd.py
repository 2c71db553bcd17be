"""``sagemaker-pools bench ENDPOINT``: measure an endpoint (closed or open loop)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from .bench.bodies import DEFAULT_BODY, load_bodies
from .bench.options import BenchOptions, Connection, default_processes
from .bench.report import build_report, load_report, render_comparison, render_report
from .bench.runner import Progress, run_bench
from .context import Context
from .names import sagemaker_name
from .errors import EXIT_USAGE, OpsError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register the ``bench`` subcommand."""
    p = subparsers.add_parser(
        "bench",
        parents=parents,
        help="benchmark an endpoint: latency, TTFT, ITL, throughput, errors, cost",
        description="Closed loop (--concurrency N) or open loop (--rate R) calls to InvokeEndpoint, or with --stream "
        "InvokeEndpointWithResponseStream, after a warm-up, for a fixed duration or number of requests.",
    )
    p.add_argument("endpoint", metavar="ENDPOINT", type=sagemaker_name, help="endpoint name")
    load = p.add_argument_group("load")
    load.add_argument("--concurrency", type=int, default=8, metavar="N", help="requests in flight (open loop: the most in flight); default 8")
    load.add_argument("--rate", type=float, metavar="R", help="open loop: start R requests per second")
    load.add_argument("--arrival", choices=["uniform", "poisson"], default="uniform", help="open loop arrivals (default: uniform)")
    load.add_argument("--duration", type=float, metavar="SECONDS", help="measured phase (default: 30, or unbounded with --requests)")
    load.add_argument("--warmup", type=float, default=5.0, metavar="SECONDS", help="unmeasured warm-up first (default: 5)")
    load.add_argument("--requests", type=int, metavar="N", help="stop after N measured requests")
    load.add_argument("--processes", type=int, metavar="N", help="worker processes (default: one per 8 in flight, at most 2 per CPU)")
    req = p.add_argument_group("requests")
    req.add_argument("--input", metavar="FILE.jsonl", help="request bodies, one per line (default: one small JSON prompt)")
    req.add_argument("--body", metavar="TEXT", help="a single request body instead of --input")
    req.add_argument("--sample", action="store_true", help="pick bodies at random instead of in turn")
    req.add_argument("--seed", type=int, default=0, help="random seed for --sample and Poisson arrivals")
    req.add_argument("--stream", action="store_true", help="InvokeEndpointWithResponseStream: also TTFT and ITL")
    req.add_argument("--content-type", default="application/json", help="request Content-Type (default: application/json)")
    req.add_argument("--accept", help="response type to ask for (Accept)")
    req.add_argument("--inference-component", metavar="NAME", help="target inference component")
    req.add_argument("--target-variant", metavar="NAME", help="target production variant")
    req.add_argument("--custom-attributes", metavar="TEXT", help="X-Amzn-SageMaker-Custom-Attributes")
    req.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per-request read timeout (default: 60)")
    req.add_argument("--retries", type=int, default=0, metavar="N", help="retries per request (default: 0, every failure counts)")
    rep = p.add_argument_group("report")
    rep.add_argument("--price-per-hour", type=float, metavar="USD", help="endpoint price per hour: adds cost per 1M output tokens and per 1,000 requests")
    rep.add_argument("--json", action="store_true", help="print the report as JSON")
    rep.add_argument("--compare", metavar="OLD.json", help="show the change against an earlier --json report")
    rep.add_argument("--save-requests", metavar="FILE.jsonl", help="write every measured request (one JSON object a line)")
    rep.add_argument("--no-progress", action="store_true", help="no live progress line on a terminal")
    p.set_defaults(handler=run)


def options_from_args(args: argparse.Namespace) -> BenchOptions:
    """The run's options from the command line (bodies loaded, defaults resolved)."""
    if args.input and args.body:
        raise OpsError("give --input or --body, not both", EXIT_USAGE)
    require_json = "json" in args.content_type
    if args.input:
        bodies = load_bodies(args.input, require_json=require_json)
    elif args.body is not None:
        bodies = (args.body.encode(),)
    else:
        bodies = (DEFAULT_BODY,)
    duration = args.duration if args.duration is not None else (None if args.requests else 30.0)
    concurrency = args.concurrency
    options = BenchOptions(
        endpoint=args.endpoint,
        bodies=bodies,
        concurrency=concurrency,
        rate=args.rate,
        arrival=args.arrival,
        duration_s=duration,
        warmup_s=args.warmup,
        requests=args.requests,
        stream=args.stream,
        sample=args.sample,
        seed=args.seed,
        content_type=args.content_type,
        accept=args.accept,
        inference_component=args.inference_component,
        target_variant=args.target_variant,
        custom_attributes=args.custom_attributes,
        timeout_s=args.timeout,
        retries=args.retries,
        processes=args.processes if args.processes is not None else default_processes(max(concurrency, 1)),
    )
    options.validate()
    return options


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Run the benchmark and print the report (and the comparison)."""
    options = options_from_args(args)
    old = load_report(args.compare) if args.compare else None
    credentials = ctx.clients.frozen_credentials()
    connection = Connection(
        region=ctx.clients.region(),
        endpoint_url=ctx.clients.options.endpoint_url,
        access_key=str(credentials.access_key),
        secret_key=str(credentials.secret_key),
        token=credentials.token,
    )
    started_at = ctx.now()
    show = ctx.interactive and not args.no_progress

    def progress(p: Progress) -> None:
        phase = "warming up" if p.warming_up else "measuring"
        mean = f", mean {p.mean_latency_s * 1000:.1f} ms" if p.mean_latency_s is not None else ""
        ctx.progress(f"[{p.elapsed_s:6.1f} s] {phase}: {p.done:,} done, {p.errors:,} failed{mean}")

    try:
        result = run_bench(options, connection, on_progress=progress if show else None)
    finally:
        if show:
            ctx.end_progress()
    report = build_report(options, result, price_per_hour=args.price_per_hour, started_at=started_at)
    if args.save_requests:
        _save_requests(args.save_requests, result.records, result.start)
    if args.json:
        if old is not None:
            report["compared_with"] = {"file": args.compare, "text": render_comparison(old, report, args.compare)}
        ctx.print(json.dumps(report, indent=2))
    else:
        ctx.print(render_report(report))
        if old is not None:
            ctx.print("")
            ctx.print(render_comparison(old, report, args.compare))
    if report["requests"]["total"] and not report["requests"]["ok"]:
        errors = ", ".join(f"{k} {v}" for k, v in report["requests"]["errors"].items())
        raise OpsError(f"no request succeeded ({errors}); check the endpoint name, region and credentials")
    return 0


def _save_requests(path: str, records: list[Any], start: float) -> None:
    try:
        with Path(path).open("w") as handle:
            for record in records:
                data = dataclasses.asdict(record)
                data["sent"] = record.sent - start  # seconds since the measured start
                handle.write(json.dumps(data) + "\n")
    except OSError as exc:
        raise OpsError(f"cannot write --save-requests {path}: {exc.strerror or exc}") from None
