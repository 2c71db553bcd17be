"""``sagemaker-pools bench ENDPOINT``: measure an endpoint (closed or open loop, or a capacity sweep)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import signal
from pathlib import Path
from collections.abc import Callable
from typing import Any, TextIO

from .bench_aiperf import add_arguments as add_aiperf_arguments
from .bench_aiperf import run_aiperf_mode
from .bench.bodies import DEFAULT_BODY, Shape, load_bodies, parse_shape, synthetic_bodies
from .bench.conversation import check_conversable
from .bench.replay import Replay, load_replay
from .bench.live import STYLES, RichProgress, progress_text, require_rich
from .bench.options import HTTP_CLIENTS, BenchOptions, Connection, default_processes
from .bench.report import build_report, load_report, merge_reports, render_comparison, render_report
from .bench.runner import Progress, RunResult, run_bench
from .bench.runs import confidence_rows, csv_row, render_confidence, render_slices, repeat_document, slice_rows, slices, write_csv
from .bench.slo import Slo, parse_slo
from .bench.sweep import AXES, Sweep, capacity_measurement, plot_sweep, render_sweep, require_plot, sweep_json
from .bench.tokens import load_tokenizer
from .capacity_file import instance_type_in_use, update_capacity_file
from .context import Context
from .durations import parse_duration
from .errors import EXIT_FAILURE, EXIT_USAGE, OpsError
from .names import sagemaker_name

__all__ = [
    "add_parser",
    "run",
    "DEFAULT_MAX_ERROR_RATE",
    "parse_error_rate",
    "parse_levels",
    "print_report",
    "report_level",
    "end_sweep",
    "check_errors",
    "write_capacity",
    "measured_instance_type",
]

#: ``--max-error-rate`` when not given: a run with more than 1 % failed requests fails (exit 1).
DEFAULT_MAX_ERROR_RATE = 0.01


def parse_error_rate(text: str) -> float:
    """``1%`` or ``0.01`` -> 0.01 (a share from 0 to 1)."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share (0.01) or a percentage (1%)") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is outside 0-100 %")
    return value


def parse_levels(text: str) -> tuple[int, ...]:
    """``1,2,4,8`` -> (1, 2, 4, 8): distinct concurrency levels >= 1, ascending."""
    try:
        levels = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers, e.g. 1,2,4,8") from None
    if not levels or levels[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give concurrency levels >= 1, e.g. 1,2,4,8")
    return tuple(levels)


def parse_rates(text: str) -> tuple[float, ...]:
    """``10,20,40`` -> (10.0, 20.0, 40.0): distinct rates > 0 (requests per second), ascending."""
    try:
        rates = sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of rates, e.g. 10,20,40") from None
    if not rates or not rates[0] > 0 or not all(math.isfinite(r) for r in rates):
        raise argparse.ArgumentTypeError(f"{text!r}: give rates > 0 (requests per second), e.g. 10,20,40")
    return tuple(rates)


def _slice_seconds(text: str) -> float:
    try:
        seconds = parse_duration(text, "--slice")
    except OpsError as exc:
        raise argparse.ArgumentTypeError(exc.message.removeprefix("--slice: ")) from None
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a slice length > 0, e.g. 30s")
    return seconds


def _slo(text: str) -> Slo:
    try:
        return parse_slo(text)
    except OpsError as exc:
        raise argparse.ArgumentTypeError(exc.message.removeprefix(f"--slo {text!r}: ")) from None


def _shape(text: str) -> Shape:
    try:
        return parse_shape(text)
    except OpsError as exc:
        raise argparse.ArgumentTypeError(exc.message.removeprefix(f"--shape {text!r}: ")) from None


#: The options that spread a mean over a normal distribution: (flag, what they spread, AIPerf's option).
_SPREADS = (
    ("--input-tokens-stddev", "prompt lengths (tokens)", "--isl-stddev"),
    ("--output-tokens-stddev", "output lengths (tokens)", "--osl-stddev"),
    ("--turns-stddev", "turns per conversation", "--conversation-turn-stddev"),
)


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register the ``bench`` subcommand."""
    p = subparsers.add_parser(
        "bench",
        parents=parents,
        help="benchmark an endpoint: latency, TTFT, ITL, throughput, errors, cost; --sweep finds max_concurrency",
        description="Closed loop (--concurrency N) or open loop (--rate R) calls to InvokeEndpoint, or with --stream "
        "InvokeEndpointWithResponseStream, after a warm-up, for a fixed duration or number of requests. "
        "--sweep runs one closed loop per concurrency level and reports the highest level whose --slo all hold. "
        "--merge combines the --json reports of several clients into one.",
    )
    p.add_argument("endpoint", metavar="ENDPOINT", nargs="?", type=sagemaker_name, help="endpoint name (not with --merge)")
    load = p.add_argument_group("load")
    load.add_argument("--concurrency", type=int, default=8, metavar="N", help="requests in flight (open loop: the most in flight); default 8")
    load.add_argument("--rate", type=float, metavar="R", help="open loop: start R requests per second")
    load.add_argument("--arrival", choices=["uniform", "poisson", "gamma"], default=None, help="open loop arrivals (default: uniform; gamma with --burstiness)")
    load.add_argument(
        "--burstiness", type=float, metavar="B", help="open loop: gamma inter-arrival times of shape B (1 = Poisson, < 1 burstier, > 1 more even)"
    )
    load.add_argument("--duration", type=float, metavar="SECONDS", help="measured phase (default: 30, or unbounded with --requests)")
    load.add_argument("--warmup", type=float, default=5.0, metavar="SECONDS", help="unmeasured warm-up first (default: 5)")
    load.add_argument("--requests", type=int, metavar="N", help="stop after N measured requests")
    load.add_argument("--processes", type=int, metavar="N", help="worker processes (default: one per 8 in flight, at most 2 per CPU)")
    req = p.add_argument_group("requests")
    req.add_argument("--input", metavar="FILE.jsonl", help="request bodies, one per line (default: one small JSON prompt)")
    req.add_argument("--body", metavar="TEXT", help="a single request body instead of --input")
    req.add_argument("--input-tokens", type=int, metavar="N", help="synthetic bodies: prompts of N tokens (mean)")
    req.add_argument("--output-tokens", type=int, metavar="N", help="synthetic bodies: ask for N new tokens (mean; parameters.max_new_tokens)")
    req.add_argument(
        "--token-range-ratio", type=float, default=0.0, metavar="R", help="synthetic bodies: lengths uniform in N*(1-R)..N*(1+R) (default: 0, fixed)"
    )
    for flag, what, theirs in _SPREADS[:2]:
        req.add_argument(flag, type=float, default=0.0, metavar="SD", help=f"synthetic bodies: {what} normal around the mean with this standard deviation (as AIPerf's {theirs})")
    req.add_argument(
        "--shape", type=_shape, action="append", default=[], metavar="IN:OUT[@WEIGHT]",
        help="synthetic bodies: a mix of (input, output) token lengths, e.g. --shape 550:150@0.7 --shape 2000:300@0.3 (repeatable)",
    )  # fmt: skip
    req.add_argument("--prefix-tokens", type=int, default=0, metavar="N", help="synthetic bodies: each prompt starts with a shared prefix of N tokens")
    req.add_argument("--prefix-count", type=int, default=0, metavar="K", help="synthetic bodies: K distinct prefixes (with --prefix-tokens)")
    req.add_argument(
        "--turns", type=int, default=1, metavar="MEAN",
        help="multi-turn conversations of MEAN turns (closed loop): each turn re-sends the history (earlier prompts and answers)",
    )  # fmt: skip
    flag, what, theirs = _SPREADS[2]
    req.add_argument(flag, type=float, default=0.0, metavar="SD", help=f"{what} normal around --turns with this standard deviation (as AIPerf's {theirs})")
    req.add_argument(
        "--replay", metavar="PATH|s3://BUCKET/PREFIX",
        help="send the requests a SageMaker data capture recorded (JSONL: a file, a folder or an S3 prefix) at their recorded pace",
    )  # fmt: skip
    req.add_argument("--sample", action="store_true", help="pick bodies at random instead of in turn")
    req.add_argument("--seed", type=int, help="random seed for --sample, random arrivals and synthetic bodies (default: random, printed)")
    req.add_argument("--stream", action="store_true", help="InvokeEndpointWithResponseStream: also TTFT, ITL and TPOT")
    req.add_argument(
        "--tokenizer", metavar="tokenizer.json", help="count tokens with this local Hugging Face tokenizer when the response reports none (extra: bench-tokenizer)"
    )
    req.add_argument("--content-type", help="request Content-Type (default: application/json; with --replay the captured one)")
    req.add_argument("--accept", help="response type to ask for (Accept)")
    req.add_argument("--inference-component", metavar="NAME", help="target inference component")
    req.add_argument("--target-variant", metavar="NAME", help="target production variant")
    req.add_argument("--custom-attributes", metavar="TEXT", help="X-Amzn-SageMaker-Custom-Attributes")
    req.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per-request read timeout (default: 60)")
    req.add_argument("--retries", type=int, default=0, metavar="N", help="retries per request (default: 0, every failure counts)")
    req.add_argument(
        "--http",
        choices=HTTP_CLIENTS,
        default="lean",
        help="InvokeEndpoint: lean = requests signed ahead of time, sent on keep-alive connections (default); "
        "boto3 = a whole boto3 call each time (streaming always uses boto3)",
    )
    sweep = p.add_argument_group("capacity sweep")
    sweep.add_argument("--sweep", type=parse_levels, metavar="N,N,...", help="one closed loop per concurrency level, e.g. 1,2,4,8,16,32")
    sweep.add_argument(
        "--sweep-rate", type=parse_rates, metavar="R,R,...",
        help="one open loop per rate (requests/s), e.g. 10,20,40, at most --concurrency in flight; reports max_rate_per_s",
    )  # fmt: skip
    sweep.add_argument(
        "--slo", type=_slo, action="append", default=[], metavar="[ttft_|itl_|tpot_]pNN=VALUE",
        help="an objective, e.g. p99=2s, ttft_p99=500ms, itl_p99=50ms (repeatable); also defines goodput",
    )  # fmt: skip
    sweep.add_argument("--capacity-file", metavar="FILE.json", help="write (or merge into) this capacity file: instance type -> max_concurrency")
    sweep.add_argument("--instance-type", metavar="TYPE", help="the instance type measured (default: the endpoint's, from DescribeEndpoint)")
    sweep.add_argument("--plot", metavar="FILE.png", help="draw latency percentiles and throughput against concurrency (extra: bench-plot)")
    rep = p.add_argument_group("report")
    rep.add_argument("--price-per-hour", type=float, metavar="USD", help="endpoint price per hour: adds cost per 1M output tokens and per 1,000 requests")
    rep.add_argument(
        "--max-error-rate", type=parse_error_rate, default=DEFAULT_MAX_ERROR_RATE, metavar="SHARE",
        help="fail (exit 1) when more requests failed than this, e.g. 1%% or 0.01 (default: 1%%); also an SLO of --sweep",
    )  # fmt: skip
    rep.add_argument("--json", action="store_true", help="print the report as JSON")
    rep.add_argument("--compare", metavar="OLD.json", help="show the change against an earlier --json report")
    rep.add_argument("--merge", nargs="+", metavar="REPORT.json", help="combine --json reports of clients that ran together into one report")
    rep.add_argument(
        "--repeat", type=int, default=1, metavar="N",
        help="run N times: each figure's mean and 95%% confidence interval across the runs (Student's t)",
    )  # fmt: skip
    rep.add_argument(
        "--slice", type=_slice_seconds, metavar="DURATION",
        help="also report the measured phase in time slices of DURATION, e.g. 30s or 1m (a request counts in the slice it was sent in)",
    )  # fmt: skip
    rep.add_argument("--csv", metavar="FILE.csv", help="also write the figures as CSV: one row a run, level, repeat or slice")
    rep.add_argument("--save-requests", metavar="FILE.jsonl", help="write every measured request (one JSON object a line; times in seconds)")
    rep.add_argument("--no-progress", action="store_true", help="no live progress line on a terminal")
    rep.add_argument(
        "--progress",
        choices=STYLES,
        default="plain",
        help="live progress on a terminal: plain (one line) or rich (a progress bar; extra: bench-progress)",
    )
    add_aiperf_arguments(p)
    p.set_defaults(handler=run)


def options_from_args(args: argparse.Namespace, *, s3: Callable[[], Any] | None = None) -> BenchOptions:
    """The run's options from the command line (bodies loaded, defaults resolved, the seed chosen).

    ``s3`` makes the S3 client that reads an ``s3://`` ``--replay`` source.
    """
    if args.endpoint is None:
        raise OpsError("give ENDPOINT (or --merge REPORT.json ...)", EXIT_USAGE)
    _check_synthetic_args(args)
    synthetic = args.input_tokens is not None or args.output_tokens is not None or bool(args.shape)
    if sum(bool(x) for x in (args.input, args.body is not None, synthetic, args.replay)) > 1:
        raise OpsError("give one of --input, --body, --input-tokens/--output-tokens/--shape and --replay", EXIT_USAGE)
    replay = _replay(args, s3) if args.replay else None
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    if args.burstiness is not None and args.arrival not in (None, "gamma"):
        raise OpsError(f"--burstiness shapes gamma arrivals: drop --arrival {args.arrival}", EXIT_USAGE)
    if (args.burstiness is not None or args.arrival is not None) and args.rate is None:
        raise OpsError("--arrival and --burstiness need --rate (an open loop)", EXIT_USAGE)
    arrival = "gamma" if args.burstiness is not None else (args.arrival or "uniform")
    content_type = args.content_type or (replay.content_type if replay and replay.content_type else "application/json")
    require_json = "json" in content_type
    if replay is not None:
        bodies = replay.bodies
    elif args.input:
        bodies = load_bodies(args.input, require_json=require_json)
    elif args.body is not None:
        bodies = (args.body.encode(),)
    elif synthetic:
        bodies = synthetic_bodies(
            input_tokens=args.input_tokens or 128,
            output_tokens=args.output_tokens or 128,
            range_ratio=args.token_range_ratio,
            seed=seed,
            tokenizer=args.tokenizer,
            input_stddev=args.input_tokens_stddev,
            output_stddev=args.output_tokens_stddev,
            shapes=args.shape,
            prefix_tokens=args.prefix_tokens,
            prefix_count=args.prefix_count,
        )
    else:
        bodies = (DEFAULT_BODY,)
    duration = args.duration if args.duration is not None else (None if args.requests or replay else 30.0)
    concurrency = args.concurrency
    options = BenchOptions(
        endpoint=args.endpoint,
        bodies=bodies,
        concurrency=concurrency,
        rate=args.rate,
        arrival=arrival,
        burstiness=args.burstiness if args.burstiness is not None else 1.0,
        duration_s=duration,
        warmup_s=args.warmup,
        requests=args.requests,
        stream=args.stream,
        sample=args.sample,
        seed=seed,
        content_type=content_type,
        accept=args.accept,
        inference_component=args.inference_component,
        target_variant=args.target_variant,
        custom_attributes=args.custom_attributes,
        timeout_s=args.timeout,
        retries=args.retries,
        processes=args.processes if args.processes is not None else default_processes(max(concurrency, 1)),
        tokenizer=args.tokenizer,
        http=args.http,
        turns=args.turns,
        turns_stddev=args.turns_stddev,
        replay_offsets=replay.offsets if replay else None,
        replay_source=args.replay,
        replay_skipped=replay.skipped if replay else 0,
    )
    options.validate()
    if options.turns > 1 or options.turns_stddev:
        check_conversable(options.bodies)
    return options


def _replay(args: argparse.Namespace, s3: Callable[[], Any] | None) -> Replay:
    """The ``--replay`` capture, after refusing what cannot go with it."""
    clashing = [
        flag
        for flag, on in (
            ("--rate", args.rate is not None), ("--sweep-rate", args.sweep_rate is not None), ("--sample", args.sample),
            ("--turns", args.turns != 1 or args.turns_stddev),
        )
        if on
    ]  # fmt: skip
    if clashing:
        raise OpsError(f"--replay sends the captured requests in their order at their pace: drop {', '.join(clashing)}", EXIT_USAGE)
    if s3 is None and args.replay.startswith("s3://"):
        raise OpsError("--replay from S3 needs an S3 client here", EXIT_USAGE)
    return load_replay(args.replay, s3=s3 or (lambda: None))


#: Options that shape synthetic bodies only: each needs --input-tokens, --output-tokens or --shape.
_SYNTHETIC_ONLY = (
    ("token_range_ratio", "--token-range-ratio"),
    ("input_tokens_stddev", "--input-tokens-stddev"),
    ("output_tokens_stddev", "--output-tokens-stddev"),
    ("prefix_tokens", "--prefix-tokens"),
    ("prefix_count", "--prefix-count"),
)


def _check_synthetic_args(args: argparse.Namespace) -> None:
    """Refuse the synthetic-body options where no synthetic body is made, and --shape with fixed lengths."""
    if args.shape and (args.input_tokens is not None or args.output_tokens is not None):
        raise OpsError("--shape gives the token lengths: drop --input-tokens/--output-tokens", EXIT_USAGE)
    if args.input_tokens is None and args.output_tokens is None and not args.shape:
        given = [flag for dest, flag in _SYNTHETIC_ONLY if getattr(args, dest)]
        if given:
            raise OpsError(f"{', '.join(given)} shape synthetic bodies: give --input-tokens/--output-tokens or --shape too", EXIT_USAGE)


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Run the benchmark (or the sweep, or the merge) and print the report."""
    code = run_aiperf_mode(args, ctx)
    if code is not None:
        return code
    if args.merge:
        return _merge(args, ctx)
    _check_sweep_args(args)
    options = options_from_args(args, s3=ctx.clients.s3)
    if args.tokenizer:
        load_tokenizer(args.tokenizer)  # fail now, not in every worker
    if args.plot:
        require_plot()
    if args.progress == "rich" and ctx.interactive and not args.no_progress:
        require_rich()
    old = load_report(args.compare) if args.compare else None
    instance_type = measured_instance_type(args, ctx) if args.capacity_file else None
    saved = _open_for_writing(args.save_requests, "--save-requests") if args.save_requests else None
    try:
        connection = runtime_connection(ctx)
        if args.sweep or args.sweep_rate:
            return _sweep(args, ctx, options, connection, instance_type, saved)
        if args.repeat > 1:
            return _repeat(args, ctx, options, connection, saved)
        return _single(args, ctx, options, connection, old, saved)
    finally:
        if saved is not None:
            saved.close()


def _check_sweep_args(args: argparse.Namespace) -> None:
    if args.repeat < 1:
        raise OpsError(f"--repeat {args.repeat}: give a number of runs >= 1", EXIT_USAGE)
    if args.repeat > 1:
        for flag, value in (("--sweep", args.sweep), ("--sweep-rate", args.sweep_rate), ("--compare", args.compare)):
            if value:
                raise OpsError(f"--repeat repeats a single run: drop {flag}", EXIT_USAGE)
    if args.sweep_rate is not None:
        if args.sweep is not None or args.rate is not None:
            raise OpsError("--sweep-rate gives the rates: drop --sweep and --rate", EXIT_USAGE)
        if args.compare:
            raise OpsError("--compare compares single runs: drop --sweep-rate or --compare", EXIT_USAGE)
        for flag, value in (("--capacity-file", args.capacity_file), ("--instance-type", args.instance_type)):
            if value:
                raise OpsError(f"{flag} takes max_concurrency from --sweep: a rate sweep finds max_rate_per_s", EXIT_USAGE)
        return
    if args.sweep is None:
        for flag, value in (("--capacity-file", args.capacity_file), ("--plot", args.plot), ("--instance-type", args.instance_type)):
            if value:
                raise OpsError(f"{flag} needs --sweep", EXIT_USAGE)
        return
    if args.rate is not None:
        raise OpsError("--sweep runs closed loops: drop --rate", EXIT_USAGE)
    if args.compare:
        raise OpsError("--compare compares single runs: drop --sweep or --compare", EXIT_USAGE)
    if args.capacity_file and not args.slo:
        raise OpsError("--capacity-file needs at least one --slo: max_concurrency is the highest level that meets them", EXIT_USAGE)


def runtime_connection(ctx: Context) -> Connection:
    """Where and as whom to call the SageMaker runtime: the command's region, ``--endpoint-url`` and credentials."""
    credentials = ctx.clients.frozen_credentials()
    return Connection(
        region=ctx.clients.region(),
        endpoint_url=ctx.clients.options.endpoint_url,
        access_key=str(credentials.access_key),
        secret_key=str(credentials.secret_key),
        token=credentials.token,
    )


def _progress_printer(ctx: Context, show: bool, prefix: str = "", style: str = "plain") -> Any:
    if not show:
        return None
    if style == "rich":
        return RichProgress(ctx.err, prefix)

    def progress(p: Progress) -> None:
        ctx.progress(prefix + progress_text(p))

    return progress


def _end_progress(ctx: Context, printer: Any) -> None:
    if isinstance(printer, RichProgress):
        printer.close()
    elif printer is not None:
        ctx.end_progress()


def _single(
    args: argparse.Namespace, ctx: Context, options: BenchOptions, connection: Connection, old: dict[str, Any] | None, saved: TextIO | None
) -> int:
    result, report = _measure(args, ctx, options, connection, ctx.interactive and not args.no_progress)
    print_report(args, ctx, report, old)
    if args.csv:
        write_csv(args.csv, [csv_row("run", "all", report), *slice_rows(_windows(report))])
    if saved is not None:
        _save_requests(saved, args.save_requests, result)
    if result.interrupted:
        return _interrupted(ctx, result)
    check_errors(report, args.max_error_rate)
    return 0


def _measure(
    args: argparse.Namespace, ctx: Context, options: BenchOptions, connection: Connection, show: bool, name: str = ""
) -> tuple[RunResult, dict[str, Any]]:
    """One run and its report (a sweep level or a repeat is ``name``d: its progress line starts ``NAME: ``)."""
    started_at = ctx.now()
    printer = _progress_printer(ctx, show, f"{name}: " if name else "", args.progress)
    try:
        result = run_bench(options, connection, on_progress=printer)
    finally:
        _end_progress(ctx, printer)
    return result, _report(args, options, result, started_at)


def _report(args: argparse.Namespace, options: BenchOptions, result: RunResult, started_at: Any) -> dict[str, Any]:
    """A run's report, with its time slices under ``--slice``."""
    report = build_report(options, result, price_per_hour=args.price_per_hour, started_at=started_at, slos=args.slo)
    if args.slice:
        report["slices"] = {"seconds": args.slice, "assigned_by": "sent", "windows": slices(options, result, args.slice, slos=args.slo)}
    return report


def _windows(report: dict[str, Any]) -> list[dict[str, Any]]:
    return list((report.get("slices") or {}).get("windows", []))


def _repeat(args: argparse.Namespace, ctx: Context, options: BenchOptions, connection: Connection, saved: TextIO | None) -> int:
    """The same run ``--repeat`` times; the confidence intervals of its figures across the runs."""
    show = ctx.interactive and not args.no_progress
    reports: list[dict[str, Any]] = []
    interrupted: RunResult | None = None
    for index in range(1, args.repeat + 1):
        result, report = _measure(args, ctx, options, connection, show, f"run {index}/{args.repeat}")
        reports.append(report)
        if saved is not None:
            _save_requests(saved, args.save_requests, result, level=index, key="repeat")
        _summary_line(ctx, f"run {index}/{args.repeat}", report)
        if result.interrupted:
            interrupted = result
            break
    document = repeat_document(reports, endpoint=options.endpoint, interrupted=interrupted is not None)
    ctx.print(json.dumps(document, indent=2) if args.json else render_confidence(document))
    if args.csv:
        rows = [row for i, r in enumerate(reports, 1) for row in (csv_row("repeat", str(i), r), *slice_rows(_windows(r), f"run {i} "))]
        write_csv(args.csv, [*rows, *confidence_rows(document["figures"])])
    if interrupted is not None:
        return _interrupted(ctx, interrupted)
    for report in reports:
        check_errors(report, args.max_error_rate)
    return 0


def print_report(args: argparse.Namespace, ctx: Context, report: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Print one run's report (a table, or with ``--json`` the document), compared with ``old`` under ``--compare``."""
    if args.json:
        if old is not None:
            report["compared_with"] = {"file": args.compare, "text": render_comparison(old, report, args.compare)}
        ctx.print(json.dumps(report, indent=2))
    else:
        ctx.print(render_report(report))
        if report.get("slices"):
            ctx.print(render_slices(report["slices"]["windows"]))
        if old is not None:
            ctx.print("")
            ctx.print(render_comparison(old, report, args.compare))


def _interrupted(ctx: Context, result: RunResult) -> int:
    signum = result.signal or signal.SIGINT
    ctx.err.write(f"sagemaker-pools: interrupted by {signal.Signals(signum).name}: the report covers what was measured until then\n")
    ctx.err.flush()
    return 128 + int(signum)


def check_errors(report: dict[str, Any], max_error_rate: float) -> None:
    """Raise :class:`OpsError` (exit 1) when no request succeeded or more failed than ``max_error_rate``."""
    requests = report["requests"]
    if requests["total"] and not requests["ok"]:
        errors = ", ".join(f"{k} {v}" for k, v in requests["errors"].items())
        raise OpsError(f"no request succeeded ({errors}); check the endpoint name, region and credentials")
    if requests["error_rate"] is not None and requests["error_rate"] > max_error_rate:
        errors = ", ".join(f"{k} {v}" for k, v in requests["errors"].items())
        raise OpsError(
            f"{requests['error_rate'] * 100:.2f} % of requests failed ({errors}), above --max-error-rate "
            f"{max_error_rate * 100:g} %: the endpoint did not serve this load"
        )


def _sweep(
    args: argparse.Namespace, ctx: Context, base: BenchOptions, connection: Connection, instance_type: str | None, saved: TextIO | None
) -> int:
    show = ctx.interactive and not args.no_progress
    by_rate = args.sweep_rate is not None
    sweep = Sweep(slos=tuple(args.slo), max_error_rate=args.max_error_rate, axis="rate" if by_rate else "concurrency")
    interrupted: RunResult | None = None
    for level in args.sweep_rate if by_rate else args.sweep:
        if by_rate:
            options = dataclasses.replace(base, rate=level)
        else:
            processes = min(args.processes, level) if args.processes is not None else default_processes(level)
            options = dataclasses.replace(base, concurrency=level, processes=processes)
        result, report = _measure(args, ctx, options, connection, show, _level_name(by_rate, level))
        level_result = sweep.add(level, report)
        if saved is not None:
            _save_requests(saved, args.save_requests, result, level=level, key="rate_per_s" if by_rate else "concurrency")
        report_level(args, ctx, level, report, level_result, by_rate=by_rate)
        if result.interrupted:
            interrupted = result
            break
    document = end_sweep(args, ctx, sweep, endpoint=base.endpoint, instance_type=instance_type, interrupted=interrupted is not None)
    if args.csv:
        key = AXES[sweep.axis]
        write_csv(
            args.csv,
            [row for level in sweep.levels for row in (csv_row("level", f"{level[key]:g}", level["report"]), *slice_rows(_windows(level["report"]), f"{level[key]:g} "))],
        )
    if interrupted is not None:
        return _interrupted(ctx, interrupted)
    if args.capacity_file:
        write_capacity(args, ctx, document, instance_type)
    return 0


def _level_name(by_rate: bool, level: float) -> str:
    return f"rate {level:g}/s" if by_rate else f"concurrency {level:g}"


def report_level(
    args: argparse.Namespace, ctx: Context, level: float, report: dict[str, Any], level_result: dict[str, Any], *, by_rate: bool = False
) -> None:
    """One line on stderr for a sweep level that ended."""
    holds = "" if not args.slo else (" SLOs hold" if level_result["holds"] else " SLOs missed")
    _summary_line(ctx, _level_name(by_rate, level), report, f";{holds}")


def _summary_line(ctx: Context, name: str, report: dict[str, Any], tail: str = "") -> None:
    """``NAME: R requests/s, p99 L ms, F failed`` on stderr (a sweep level or a repeat that ended)."""
    ctx.err.write(
        f"{name}: {report['requests_per_s']:,.1f} requests/s, p99 {(report['latency_ms']['p99'] or 0):,.1f} ms, "
        f"{report['requests']['failed']:,} failed{tail}\n"
    )
    ctx.err.flush()


def end_sweep(
    args: argparse.Namespace, ctx: Context, sweep: Sweep, *, endpoint: str, instance_type: str | None, interrupted: bool
) -> dict[str, Any]:
    """Print the sweep (and draw ``--plot``); return its document."""
    document = sweep_json(sweep, endpoint=endpoint, instance_type=instance_type, interrupted=interrupted)
    if args.json:
        ctx.print(json.dumps(document, indent=2))
    else:
        ctx.print(render_sweep(document))
    if args.plot:
        plot_sweep(document, args.plot)
    return document


def write_capacity(args: argparse.Namespace, ctx: Context, document: dict[str, Any], instance_type: str | None) -> None:
    """Merge the sweep's ``max_concurrency`` for ``instance_type`` into ``--capacity-file``; exit 1 when no level held."""
    assert instance_type is not None
    measurement = capacity_measurement(document, measured_at=ctx.now().isoformat(timespec="seconds"))
    if measurement is None:
        raise OpsError(f"no level met every SLO: {args.capacity_file} not written (lower the first --sweep level, or relax --slo)", EXIT_FAILURE)
    path = update_capacity_file(args.capacity_file, lambda current: current.with_measurement(instance_type, measurement))
    ctx.err.write(f"{path}: {instance_type} max_concurrency {measurement.max_concurrency}\n")


def measured_instance_type(args: argparse.Namespace, ctx: Context) -> str:
    """The instance type a capacity file entry is for: --instance-type, or the endpoint's only type."""
    return instance_type_in_use(ctx, args.endpoint, variant=args.target_variant, given=args.instance_type)


def _merge(args: argparse.Namespace, ctx: Context) -> int:
    if args.endpoint is not None or args.sweep or args.sweep_rate or args.compare or args.repeat > 1 or args.slice:
        raise OpsError("--merge combines reports: give no ENDPOINT, --sweep, --sweep-rate, --compare, --repeat or --slice with it", EXIT_USAGE)
    reports = [load_report(path, flag="--merge") for path in args.merge]
    merged = merge_reports(reports, args.merge)
    ctx.print(json.dumps(merged, indent=2) if args.json else render_report(merged))
    if args.csv:
        write_csv(args.csv, [csv_row("run", "merged", merged)])
    check_errors(merged, args.max_error_rate)
    return 0


def _open_for_writing(path: str, flag: str) -> TextIO:
    """Open ``path`` now, before the run: an unwritable path fails before anything is measured."""
    try:
        return Path(path).open("w")
    except OSError as exc:
        raise OpsError(f"cannot write {flag} {path}: {exc.strerror or exc}", EXIT_USAGE) from None


def _save_requests(handle: TextIO, path: str, result: RunResult, level: float | None = None, key: str = "concurrency") -> None:
    try:
        for record in result.records:
            data = dataclasses.asdict(record)
            data["sent"] = record.sent - result.start  # seconds since the measured start
            if level is not None:
                data[key] = level
            handle.write(json.dumps(data) + "\n")
        handle.flush()
    except OSError as exc:
        raise OpsError(f"cannot write --save-requests {path}: {exc.strerror or exc} (the report above is complete)") from None
