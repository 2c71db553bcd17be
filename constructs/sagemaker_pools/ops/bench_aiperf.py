"""``bench``'s AIPerf side: ``--aiperf-spec FILE``, ``--from-aiperf DIR`` and ``--managed``.

* ``--aiperf-spec FILE`` writes the inline AIPerf spec of the run's options (the document a
  ``BenchmarkWorkload`` writes for the same load) and refuses, by name, every option the spec
  cannot express.
* ``--from-aiperf DIR`` turns a local AIPerf run's exports into a ``bench`` report.
* ``--managed --workload NAME --role ARN --output s3://...`` runs SageMaker's AI benchmark job
  (AIPerf in AWS) and reports its exports the same way; with ``--sweep``, one job a level.

The load of a managed run is the workload configuration's: the options that shape a local
run's load are refused with ``--managed`` and ``--from-aiperf`` rather than silently ignored.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..aiperf import WorkloadSpec
from .bench.bodies import Shape
from ..errors import PoolConfigError
from .bench.aiperf_export import read_export_dir, report_from_exports
from .bench.managed import JobStopped, check_endpoint, fetch_exports, job_name, level_workload, parse_s3_uri, start_job, wait_for_job
from .context import Context
from .errors import EXIT_USAGE, OpsError

__all__ = ["add_arguments", "run_aiperf_mode", "spec_of", "sequence_distribution", "LOAD_OPTIONS"]

#: Options that shape a local run's load (dest -> flag). A spec expresses some; a managed run none.
LOAD_OPTIONS = {
    "concurrency": "--concurrency",
    "rate": "--rate",
    "arrival": "--arrival",
    "burstiness": "--burstiness",
    "duration": "--duration",
    "warmup": "--warmup",
    "requests": "--requests",
    "processes": "--processes",
    "input": "--input",
    "body": "--body",
    "input_tokens": "--input-tokens",
    "output_tokens": "--output-tokens",
    "token_range_ratio": "--token-range-ratio",
    "input_tokens_stddev": "--input-tokens-stddev",
    "output_tokens_stddev": "--output-tokens-stddev",
    "shape": "--shape",
    "prefix_tokens": "--prefix-tokens",
    "prefix_count": "--prefix-count",
    "turns": "--turns",
    "turns_stddev": "--turns-stddev",
    "replay": "--replay",
    "sample": "--sample",
    "seed": "--seed",
    "stream": "--stream",
    "tokenizer": "--tokenizer",
    "content_type": "--content-type",
    "accept": "--accept",
    "target_variant": "--target-variant",
    "custom_attributes": "--custom-attributes",
    "timeout": "--timeout",
    "retries": "--retries",
    "http": "--http",
    "save_requests": "--save-requests",
    "sweep_rate": "--sweep-rate",
}
#: Load options the inline spec cannot express, with why.
_NOT_IN_SPEC = {
    "input": "AIPerf synthesizes the prompts (give a dataset to the workload configuration instead)",
    "body": "AIPerf synthesizes the prompts",
    "token_range_ratio": "lengths are uniform; AIPerf's are normal (mean and standard deviation)",
    "sample": "AIPerf synthesizes the prompts",
    "tokenizer": "AIPerf counts tokens with its own tokenizer",
    "processes": "AIPerf sizes its own workers",
    "content_type": "the managed job speaks the OpenAI chat completions API",
    "accept": "the managed job speaks the OpenAI chat completions API",
    "target_variant": "the job targets the endpoint (or its inference components)",
    "custom_attributes": "the job sends no custom attributes",
    "retries": "AIPerf does not retry",
    "http": "AIPerf has its own HTTP client",
    "save_requests": "no local requests are made",
    "inference_component": "the job's target, not the workload: give it with --managed",
    "sweep": "a spec is one load; --managed --sweep makes one workload a level",
    "sweep_rate": "a spec is one load: write one spec a rate with --rate",
    "replay": "the spec has no SageMaker data capture input (AIPerf replays its own trace formats): give the workload a dataset instead",
    "repeat": "a spec is one run: start the job again for another",
    "slice": "a report option of local runs, not part of the load",
    "csv": "no local run is made",
}
#: Report options of local runs that a managed or AIPerf run does not produce (dest -> flag).
_LOCAL_REPORT_OPTIONS = {"repeat": "--repeat", "slice": "--slice", "csv": "--csv"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the AIPerf options to ``bench``'s parser (and remember the parser, for its defaults)."""
    group = parser.add_argument_group("AIPerf and SageMaker's managed AI benchmark job")
    group.add_argument("--aiperf-spec", metavar="FILE", help="write the inline AIPerf spec of this run's options (JSON) and exit")
    group.add_argument("--from-aiperf", metavar="DIR", help="report a local AIPerf run's exports (profile_export.jsonl, profile_export_aiperf.json)")
    group.add_argument("--managed", action="store_true", help="run SageMaker's AI benchmark job (AIPerf in AWS) instead of local load")
    group.add_argument("--workload", metavar="NAME", help="--managed: the AI workload configuration (e.g. a BenchmarkWorkload's workload_name)")
    group.add_argument("--role", metavar="ARN", help="--managed: the role the job runs as (e.g. a BenchmarkRole's role_arn)")
    group.add_argument("--output", metavar="s3://BUCKET/PREFIX", help="--managed: where the job writes AIPerf's exports")
    parser.set_defaults(bench_parser=parser)


def run_aiperf_mode(args: argparse.Namespace, ctx: Context) -> int | None:
    """Run ``--aiperf-spec``, ``--from-aiperf`` or ``--managed``; None when none is asked for."""
    modes = [flag for flag, on in (("--aiperf-spec", args.aiperf_spec), ("--from-aiperf", args.from_aiperf), ("--managed", args.managed)) if on]
    if not modes:
        for flag, value in (("--workload", args.workload), ("--role", args.role), ("--output", args.output)):
            if value:
                raise OpsError(f"{flag} needs --managed", EXIT_USAGE)
        return None
    if len(modes) > 1 or args.merge:
        raise OpsError(f"give one of --aiperf-spec, --from-aiperf, --managed and --merge (got {', '.join(modes)})", EXIT_USAGE)
    if args.aiperf_spec:
        return _write_spec(args, ctx)
    refused = [LOAD_OPTIONS[d] for d in _changed(args) if d in LOAD_OPTIONS]
    if refused:
        where = "the workload configuration" if args.managed else "the AIPerf run"
        raise OpsError(f"{modes[0]}: {where} defines the load: drop {', '.join(refused)}", EXIT_USAGE)
    local = [_LOCAL_REPORT_OPTIONS[d] for d in _changed(args) if d in _LOCAL_REPORT_OPTIONS]
    if local:
        raise OpsError(f"{modes[0]}: {', '.join(local)} report local runs only: drop them", EXIT_USAGE)
    if args.from_aiperf:
        return _from_aiperf(args, ctx)
    return _managed(args, ctx)


def _changed(args: argparse.Namespace) -> list[str]:
    """The dests of ``bench``'s options given a value other than their default."""
    parser: argparse.ArgumentParser = args.bench_parser
    return [a.dest for a in parser._actions if a.dest in vars(args) and getattr(args, a.dest) != a.default]


def spec_of(args: argparse.Namespace) -> WorkloadSpec:
    """The AIPerf spec of a local run's options; :class:`OpsError` (exit 2) naming what it cannot express."""
    changed = set(_changed(args))
    refused = [f"{LOAD_OPTIONS.get(d, '--' + d.replace('_', '-'))} ({why})" for d, why in _NOT_IN_SPEC.items() if d in changed]
    if refused:
        raise OpsError(f"--aiperf-spec cannot express: {'; '.join(refused)}", EXIT_USAGE)
    if args.duration is not None and args.requests is not None:
        raise OpsError("--aiperf-spec: give --duration or --requests, not both (the spec has one stop condition)", EXIT_USAGE)
    arrival = "gamma" if args.burstiness is not None else {"uniform": "constant", "poisson": "poisson", "gamma": "gamma", None: None}[args.arrival]
    if args.rate is not None and arrival is None:
        arrival = "constant"  # bench's default arrivals are evenly spaced; AIPerf's are Poisson
    shapes = args.shape
    try:
        return WorkloadSpec(
            owner="--aiperf-spec",
            input_tokens_mean=args.input_tokens,
            input_tokens_stddev=(args.input_tokens_stddev or None) if not shapes else None,
            output_tokens_mean=args.output_tokens,
            output_tokens_stddev=(args.output_tokens_stddev or None) if not shapes else None,
            sequence_distribution=sequence_distribution(shapes, args.input_tokens_stddev, args.output_tokens_stddev) if shapes else None,
            prefix_pool_size=args.prefix_count or None,
            prefix_length=args.prefix_tokens or None,
            turns_mean=args.turns if args.turns != 1 or args.turns_stddev else None,
            turns_stddev=args.turns_stddev or None,
            concurrency=args.concurrency,
            request_rate=args.rate,
            arrival=arrival,
            arrival_smoothness=args.burstiness,
            duration_s=args.duration if args.duration is not None or args.requests else 30.0,
            request_count=args.requests,
            warmup_s=args.warmup,
            streaming=bool(args.stream),
            seed=args.seed,
            timeout_s=args.timeout,
        )
    except PoolConfigError as exc:
        raise OpsError(str(exc), EXIT_USAGE) from None


def sequence_distribution(shapes: Sequence[Shape], input_stddev: float, output_stddev: float) -> str:
    """``--shape``s as AIPerf's ``--sequence-distribution`` (``ISL|SD,OSL|SD:PERCENT;...``; weights made percentages)."""
    total = sum(s.weight for s in shapes)

    def length(tokens: int, stddev: float) -> str:
        return f"{tokens}|{stddev:g}" if stddev else str(tokens)

    return ";".join(
        f"{length(s.input_tokens, input_stddev)},{length(s.output_tokens, output_stddev)}:{round(100 * s.weight / total, 4):g}" for s in shapes
    )


def _write_spec(args: argparse.Namespace, ctx: Context) -> int:
    spec = spec_of(args)
    try:
        Path(args.aiperf_spec).write_text(spec.inline() + "\n")
    except OSError as exc:
        raise OpsError(f"cannot write --aiperf-spec {args.aiperf_spec}: {exc.strerror or exc}", EXIT_USAGE) from None
    ctx.err.write(f"{args.aiperf_spec}: AIPerf spec with {', '.join(spec.parameters())}\n")
    return 0


def _from_aiperf(args: argparse.Namespace, ctx: Context) -> int:
    from .bench.report import load_report
    from .bench_cmd import check_errors, print_report

    if args.sweep:
        raise OpsError("--from-aiperf reads one run: drop --sweep", EXIT_USAGE)
    old = load_report(args.compare) if args.compare else None
    text, aggregates = read_export_dir(args.from_aiperf)
    endpoint = args.endpoint or Path(args.from_aiperf).resolve().name
    report = report_from_exports(
        text, aggregates, endpoint=endpoint, source={"files": [args.from_aiperf]}, price_per_hour=args.price_per_hour, slos=args.slo
    )
    print_report(args, ctx, report, old)
    check_errors(report, args.max_error_rate)
    return 0


def _managed(args: argparse.Namespace, ctx: Context) -> int:
    from .bench.report import load_report
    from .bench_cmd import measured_instance_type

    missing = [flag for flag, value in (("ENDPOINT", args.endpoint), ("--workload", args.workload), ("--role", args.role), ("--output", args.output)) if not value]
    if missing:
        raise OpsError(f"--managed needs {', '.join(missing)}", EXIT_USAGE)
    parse_s3_uri(args.output, "--output")
    if args.sweep and args.compare:
        raise OpsError("--compare compares single runs: drop --sweep or --compare", EXIT_USAGE)
    for flag, value in (("--capacity-file", args.capacity_file), ("--plot", args.plot), ("--instance-type", args.instance_type)):
        if value and not args.sweep:
            raise OpsError(f"{flag} needs --sweep", EXIT_USAGE)
    if args.capacity_file and not args.slo:
        raise OpsError("--capacity-file needs at least one --slo: max_concurrency is the highest level that meets them", EXIT_USAGE)
    if args.plot:
        from .bench.sweep import require_plot

        require_plot()  # now, not after the jobs ran
    old = load_report(args.compare) if args.compare else None
    sm = ctx.clients.sagemaker()
    check_endpoint(sm, args.endpoint)
    instance_type = measured_instance_type(args, ctx) if args.capacity_file else None
    if args.sweep:
        return _managed_sweep(args, ctx, sm, instance_type)
    from .bench_cmd import check_errors, print_report

    report = _one_job(args, ctx, sm, workload=args.workload, name=job_name(args.endpoint, ctx.now()))
    print_report(args, ctx, report, old)
    check_errors(report, args.max_error_rate)
    return 0


def _one_job(args: argparse.Namespace, ctx: Context, sm: Any, *, workload: str, name: str, prefix: str = "") -> dict[str, Any]:
    """Start one job, follow it to the end, and return its exports as a report."""
    components = (args.inference_component,) if args.inference_component else ()
    start_job(sm, name=name, endpoint=args.endpoint, workload=workload, role=args.role, output=args.output, inference_components=components)
    ctx.err.write(f"{prefix}started AI benchmark job {name} (workload {workload})\n")
    ctx.err.flush()
    job = wait_for_job(sm, name, ctx, prefix=prefix)
    text, aggregates, read = fetch_exports(ctx.clients.s3(), job["OutputConfig"]["S3OutputLocation"], name)
    return report_from_exports(
        text,
        aggregates,
        endpoint=args.endpoint,
        source={"job": name, "workload": workload, "files": read},
        price_per_hour=args.price_per_hour,
        slos=args.slo,
    )


def _managed_sweep(args: argparse.Namespace, ctx: Context, sm: Any, instance_type: str | None) -> int:
    """One job a level, each on a copy of the workload with that concurrency (deleted afterwards)."""
    from .bench.sweep import Sweep
    from .bench_cmd import end_sweep, report_level, write_capacity

    sweep = Sweep(slos=tuple(args.slo), max_error_rate=args.max_error_rate)
    stopped: JobStopped | None = None
    for level in args.sweep:
        workload = job_name(args.workload.lower(), ctx.now(), f"c{level}")
        level_workload(sm, args.workload, level, workload)
        try:
            report = _one_job(args, ctx, sm, workload=workload, name=job_name(args.endpoint, ctx.now(), f"c{level}"), prefix=f"concurrency {level}: ")
        except JobStopped as exc:
            stopped = exc
            break
        finally:
            _delete_workload(sm, workload, ctx)
        report_level(args, ctx, level, report, sweep.add(level, report))
    document = end_sweep(args, ctx, sweep, endpoint=args.endpoint, instance_type=instance_type, interrupted=stopped is not None)
    if stopped is not None:
        raise stopped
    if args.capacity_file:
        write_capacity(args, ctx, document, instance_type)
    return 0


def _delete_workload(sm: Any, name: str, ctx: Context) -> None:
    try:
        sm.delete_ai_workload_config(AIWorkloadConfigName=name)
    except Exception as exc:  # noqa: BLE001 - a leftover config costs nothing: say so and go on
        ctx.err.write(f"could not delete workload configuration {name}: {exc}\n")

