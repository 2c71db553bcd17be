"""``sagemaker-pools gate``: does the candidate (a fallback build) answer like the baseline (the primary)?

Live: the same requests to both, deterministic decoding where the payload format is known.
``--from-capture``: the production and shadow responses an endpoint's data capture recorded.
Either way: exact match, token agreement, length ratio, latency, errors; exit 1 when the
candidate misses a ``--threshold``; ``--capacity-file`` records the result for the candidate's
instance type, where ``PoolCapacity.require_gate`` and ``check_gates`` read it.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from .bench.bodies import load_bodies
from .bench.options import HTTP_CLIENTS, BenchOptions
from .bench.tokens import load_tokenizer
from .bench_cmd import runtime_connection
from .capacity_file import instance_type_in_use, update_capacity_file
from .context import Context
from .errors import EXIT_FAILURE, EXIT_USAGE, OpsError
from .gate.capture import pair_captures, read_capture
from .gate.compare import Pair, Tokens, compare
from .gate.decoding import deterministic, summarize_decoding
from .gate.live import Target, send_pairs
from .gate.report import build_report, missed, render_report
from .gate.thresholds import LATENCY_NAMES, evaluate, parse_threshold, with_default_errors
from .names import NAME_PATTERN

__all__ = ["add_parser", "run", "parse_target"]


def parse_target(text: str) -> Target:
    """``ENDPOINT`` or ``ENDPOINT/VARIANT`` (an argparse ``type``)."""
    endpoint, _, variant = text.partition("/")
    for part, what in ((endpoint, "endpoint"), (variant or None, "variant")):
        if part is not None and not NAME_PATTERN.match(part):
            raise argparse.ArgumentTypeError(
                f"{text!r}: {what} {part!r} is not a SageMaker name (1-63 letters, digits and hyphens); expected ENDPOINT or ENDPOINT/VARIANT"
            )
    return Target(endpoint=endpoint, variant=variant or None)


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register the ``gate`` subcommand."""
    p = subparsers.add_parser(
        "gate",
        parents=parents,
        help="does a fallback build answer like the primary: exact match, token agreement, length, latency, errors",
        description="Send the same requests to --baseline and --candidate (or, with --from-capture, read what data capture "
        "recorded for a production and a shadow variant) and compare the answers. Exit 1 when the candidate misses a "
        "--threshold. --capacity-file records the result for the candidate's instance type.",
    )
    p.add_argument("--baseline", required=True, type=parse_target, metavar="ENDPOINT[/VARIANT]", help="the reference (the primary build)")
    p.add_argument("--candidate", required=True, type=parse_target, metavar="ENDPOINT[/VARIANT]", help="the build under test (a fallback pool's)")
    src = p.add_argument_group("what is compared")
    src.add_argument("--input", metavar="FILE.jsonl", help="request bodies, one per line, sent to both sides")
    src.add_argument("--from-capture", metavar="s3://BUCKET/PREFIX|FOLDER", help="compare captured responses instead (the DataCaptureConfig destination)")
    src.add_argument("--as-is", action="store_true", help="send the bodies unchanged (default: ask for deterministic decoding where the format is known)")
    src.add_argument("--seed", type=int, default=0, help="the seed set in OpenAI-compatible bodies (default: 0)")
    src.add_argument("--tokenizer", metavar="tokenizer.json", help="compare tokens of this Hugging Face tokenizer (extra: bench-tokenizer); default: words")
    req = p.add_argument_group("requests (live)")
    req.add_argument("--content-type", default="application/json", help="request Content-Type (default: application/json)")
    req.add_argument("--accept", help="response type to ask for (Accept)")
    req.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per-request read timeout (default: 60)")
    req.add_argument("--retries", type=int, default=0, metavar="N", help="retries per request (default: 0)")
    req.add_argument("--http", choices=HTTP_CLIENTS, default="lean", help="how InvokeEndpoint is sent, as bench --http (default: lean)")
    for side in ("baseline", "candidate"):
        req.add_argument(f"--{side}-endpoint-url", metavar="URL", help=f"the runtime URL of the {side} (default: --endpoint-url, else the region's)")
    res = p.add_argument_group("result")
    res.add_argument(
        "--threshold", type=parse_threshold, action="append", default=[], metavar="NAME=VALUE",
        help="what the candidate must meet (repeatable): exact_match=0.9, agreement=95%%, length_ratio=0.9..1.1, "
        "p50|p90|p95|p99=2s, errors=1%% (default errors=1%%)",
    )  # fmt: skip
    res.add_argument("--json", action="store_true", help="print the report as JSON")
    res.add_argument("--capacity-file", metavar="FILE.json", help="record the result for the candidate's instance type in this capacity file")
    res.add_argument("--instance-type", metavar="TYPE", help="the candidate's instance type (default: from DescribeEndpoint)")
    res.add_argument("--build", metavar="TEXT", help="what was tested (an image tag, a model data URI), recorded with the result")
    p.set_defaults(handler=run)


def _check_args(args: argparse.Namespace) -> None:
    if (args.input is None) == (args.from_capture is None):
        raise OpsError("give --input FILE.jsonl (send requests) or --from-capture SOURCE (compare captured responses)", EXIT_USAGE)
    if args.from_capture is not None:
        for side in ("baseline", "candidate"):
            if getattr(args, side).variant is None:
                raise OpsError(f"--from-capture reads each variant's capture folder: give --{side} ENDPOINT/VARIANT", EXIT_USAGE)
        latency = [t.name for t in args.threshold if t.name in LATENCY_NAMES]
        if latency:
            raise OpsError(f"--threshold {latency[0]}: captured records carry no latency; latency thresholds need --input", EXIT_USAGE)
        given = [flag for flag, value in (("--as-is", args.as_is), ("--baseline-endpoint-url", args.baseline_endpoint_url),
                                          ("--candidate-endpoint-url", args.candidate_endpoint_url)) if value]  # fmt: skip
        if given:
            raise OpsError(f"{given[0]} is for requests sent to both sides: drop it or --from-capture", EXIT_USAGE)
    if (args.instance_type or args.build) and not args.capacity_file:
        raise OpsError(f"{'--instance-type' if args.instance_type else '--build'} is recorded in the capacity file: give --capacity-file", EXIT_USAGE)
    if args.capacity_file and not args.threshold:
        raise OpsError("--capacity-file needs at least one --threshold: a gate passes by meeting them", EXIT_USAGE)


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Compare, print the report, record it, exit 1 when the candidate missed a threshold."""
    _check_args(args)
    tokens = Tokens(load_tokenizer(args.tokenizer), args.tokenizer) if args.tokenizer else Tokens()
    instance_type = None
    if args.capacity_file:  # before anything is sent: a wrong endpoint fails first
        instance_type = instance_type_in_use(ctx, args.candidate.endpoint, variant=args.candidate.variant, given=args.instance_type)
    started_at = ctx.now().isoformat(timespec="seconds")
    baseline, candidate = (Target(endpoint=t.endpoint, variant=t.variant) for t in (args.baseline, args.candidate))
    decoding = capture = None
    if args.from_capture is not None:
        pairs, capture = pair_captures(
            read_capture(args.from_capture, baseline.endpoint, baseline.variant or "", s3=ctx.clients.s3),
            read_capture(args.from_capture, candidate.endpoint, candidate.variant or "", s3=ctx.clients.s3),
        )
    else:
        pairs, decoding = _send(args, ctx)
    figures = compare(pairs, tokens)
    checks = evaluate(with_default_errors(args.threshold), figures)
    report = build_report(
        figures=figures, checks=checks, source="capture" if capture is not None else "live", baseline=baseline.label,
        candidate=candidate.label, started_at=started_at, decoding=decoding, capture=capture, build=args.build, instance_type=instance_type,
    )  # fmt: skip
    if args.json:
        import json

        ctx.print(json.dumps(report, indent=2))
    else:
        ctx.print(render_report(report))
    if args.capacity_file:
        assert instance_type is not None
        _record(args.capacity_file, ctx, report, instance_type)
    if not report["passed"]:
        ctx.err.write(f"sagemaker-pools: gate failed: {candidate.label} missed {'; '.join(missed(report))}\n")
        ctx.err.flush()
        return EXIT_FAILURE
    return 0


def _send(args: argparse.Namespace, ctx: Context) -> tuple[list[Pair], dict[str, Any] | None]:
    bodies = load_bodies(args.input, require_json="json" in args.content_type)
    decoding = None
    if not args.as_is:
        decoded = [deterministic(b, seed=args.seed) for b in bodies]
        bodies = tuple(d.body for d in decoded)
        decoding = summarize_decoding(decoded)
    options = BenchOptions(
        endpoint=args.baseline.endpoint, bodies=bodies, content_type=args.content_type, accept=args.accept,
        timeout_s=args.timeout, retries=args.retries, http=args.http, seed=args.seed,
    )  # fmt: skip
    baseline = dataclasses.replace(args.baseline, endpoint_url=args.baseline_endpoint_url)
    candidate = dataclasses.replace(args.candidate, endpoint_url=args.candidate_endpoint_url)

    def progress(done: int, total: int) -> None:
        ctx.progress(f"gate: {done:,} of {total:,} requests sent to both")

    show = ctx.interactive
    try:
        pairs = send_pairs(bodies, baseline=baseline, candidate=candidate, connection=runtime_connection(ctx), options=options,
                           on_progress=progress if show else None)  # fmt: skip
    finally:
        if show:
            ctx.end_progress()
    return pairs, decoding


def _record(path_text: str, ctx: Context, report: dict[str, Any], instance_type: str) -> None:
    """Merge the result into the capacity file: this type's gate is replaced, everything else kept."""
    from ..capacity import GateResult

    result = GateResult(
        passed=report["passed"], baseline=report["baseline"], candidate=report["candidate"], checks=tuple(report["checks"]),
        pairs=report["pairs"]["compared"], source=report["source"], build=report["build"], checked_at=report["started_at"],
    )  # fmt: skip
    path = update_capacity_file(path_text, lambda current: current.with_gate(instance_type, result))
    ctx.err.write(f"{path}: {instance_type} gate {'passed' if result.passed else 'failed'}\n")
    ctx.err.flush()
