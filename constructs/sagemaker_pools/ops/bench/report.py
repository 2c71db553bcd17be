"""The benchmark report: figures from the records, as a table, as JSON, and against an earlier run.

Latency, TTFT and ITL percentiles are over successful requests only (a failure's duration
says nothing about the model); failures are counted by kind. ITL is pooled over every gap of
every stream. Throughput divides by the time from the start of the measured phase to the last
completion.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import EXIT_USAGE, OpsError
from ..table import fmt_number, render_table
from .bodies import prompt_chars
from .options import BenchOptions
from .runner import RunResult
from .stats import summarize

__all__ = ["SCHEMA", "build_report", "render_report", "load_report", "render_comparison"]

SCHEMA = "sagemaker-pools-bench/1"
_ROWS = (("latency_ms", "latency"), ("ttft_ms", "TTFT"), ("itl_ms", "ITL"), ("dispatch_lag_ms", "dispatch lag"))
_STATS = ("p50", "p90", "p95", "p99", "max", "mean")


def build_report(
    options: BenchOptions, result: RunResult, *, price_per_hour: float | None = None, started_at: dt.datetime | None = None
) -> dict[str, Any]:
    """Every figure of the run as JSON-ready data."""
    records = result.records
    ok = [r for r in records if r.ok]
    errors: dict[str, int] = {}
    for r in records:
        if not r.ok:
            errors[r.error or "unknown"] = errors.get(r.error or "unknown", 0) + 1
    elapsed = result.elapsed_s
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "endpoint": options.endpoint,
        "started_at": (started_at or dt.datetime.now(dt.timezone.utc)).isoformat(timespec="seconds"),
        "run": {
            "mode": "open" if options.rate is not None else "closed",
            "operation": "InvokeEndpointWithResponseStream" if options.stream else "InvokeEndpoint",
            "concurrency": options.concurrency,
            "rate_per_s": options.rate,
            "arrival": options.arrival if options.rate is not None else None,
            "duration_s": options.duration_s,
            "warmup_s": options.warmup_s,
            "requests_limit": options.requests,
            "processes": options.processes,
            "timeout_s": options.timeout_s,
            "interrupted": result.interrupted,
            "elapsed_s": elapsed,
        },
        "requests": {
            "total": len(records),
            "ok": len(ok),
            "failed": len(records) - len(ok),
            "success_rate": len(ok) / len(records) if records else None,
            "errors": dict(sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))),
        },
        "requests_per_s": len(ok) / elapsed,
        "latency_ms": summarize([r.latency for r in ok], 1000),
        "ttft_ms": summarize([r.ttft for r in ok if r.ttft is not None], 1000) if options.stream else None,
        "itl_ms": summarize([g for r in ok for g in (r.gaps or [])], 1000) if options.stream else None,
        "dispatch_lag_ms": summarize([r.lag for r in records if r.lag is not None], 1000) if options.rate is not None else None,
        "output": _output(options, ok, elapsed),
        "input": _input(options, records),
        "percentile_method": "nearest-rank over every measured successful request",
    }
    report["cost"] = _cost(price_per_hour, report) if price_per_hour is not None else None
    return report


def _output(options: BenchOptions, ok: Sequence[Any], elapsed: float) -> dict[str, Any]:
    counted = [r.tokens for r in ok if r.tokens is not None]
    total_bytes = sum(r.out_bytes for r in ok)
    output: dict[str, Any] = {
        "bytes_total": total_bytes,
        "bytes_per_s": total_bytes / elapsed,
        "tokens_reported_by": len(counted),
        "tokens_total": sum(counted) if counted else None,
        "tokens_per_s": sum(counted) / elapsed if counted else None,
        "tokens_per_request": summarize(counted) if counted else None,
    }
    if options.stream:
        chunks = sum(r.chunks for r in ok)
        output.update({"chunks_total": chunks, "chunks_per_s": chunks / elapsed})
    if counted and len(counted) == len(ok):
        output["unit"] = "tokens"
    elif counted:
        output["unit"] = f"tokens (reported by {len(counted)} of {len(ok)} responses)"
    else:
        output["unit"] = "chunks and bytes (no token count in the responses)" if options.stream else "bytes (no token count in the responses)"
    return output


def _input(options: BenchOptions, records: Sequence[Any]) -> dict[str, Any]:
    sizes = [len(b) for b in options.bodies]
    chars = [prompt_chars(b) for b in options.bodies]
    sent = [r.body for r in records]
    prompt = [chars[i] for i in sent if chars[i] is not None]
    return {
        "bodies": len(options.bodies),
        "selection": "sampled" if options.sample else "cycled",
        "bytes": summarize([sizes[i] for i in sent]),
        "prompt_chars": summarize([float(c) for c in prompt]) if prompt else None,
    }


def _cost(price_per_hour: float, report: Mapping[str, Any]) -> dict[str, Any]:
    tokens_per_s = report["output"]["tokens_per_s"]
    requests_per_s = report["requests_per_s"]
    return {
        "price_per_hour": price_per_hour,
        "per_1m_output_tokens": price_per_hour / (tokens_per_s * 3600) * 1e6 if tokens_per_s else None,
        "per_1k_requests": price_per_hour / (requests_per_s * 3600) * 1e3 if requests_per_s else None,
    }


def render_report(report: Mapping[str, Any]) -> str:
    """The report as a readable table."""
    run, req, out = report["run"], report["requests"], report["output"]
    mode = f"open loop at {run['rate_per_s']:g}/s ({run['arrival']}), at most {run['concurrency']} in flight" if run["mode"] == "open" else f"closed loop, concurrency {run['concurrency']}"
    lines = [
        f"Endpoint {report['endpoint']}: {run['operation']}, {mode}, {run['processes']} worker process(es)",
        f"  measured {run['elapsed_s']:.1f} s after {run['warmup_s']:g} s warm-up" + (" (interrupted)" if run["interrupted"] else ""),
        f"  requests: {req['total']:,} = {req['ok']:,} ok + {req['failed']:,} failed"
        + (f" ({req['success_rate'] * 100:.2f} % success)" if req["success_rate"] is not None else ""),
    ]
    if req["errors"]:
        lines.append("  errors: " + ", ".join(f"{kind} {count:,}" for kind, count in req["errors"].items()))
    throughput = f"  throughput: {report['requests_per_s']:,.1f} requests/s"
    if out["tokens_per_s"] is not None:
        throughput += f", {out['tokens_per_s']:,.1f} output tokens/s"
    if "chunks_per_s" in out:
        throughput += f", {out['chunks_per_s']:,.1f} chunks/s"
    throughput += f", {out['bytes_per_s'] / 1024:,.1f} KiB/s"
    lines += [throughput, f"  output measured in {out['unit']}", ""]
    rows = [[label] + [fmt_number(report[key][s]) for s in _STATS] + [report[key]["count"]] for key, label in _ROWS if report.get(key)]
    lines.append(render_table(["(ms)", *_STATS, "count"], rows, indent="  "))
    inp = report["input"]
    size = inp["bytes"]
    bodies = f"{inp['bodies']} body" if inp["bodies"] == 1 else f"{inp['bodies']} bodies"
    text = f"  input: {bodies} {inp['selection']}; bytes p50 {fmt_number(size['p50'], 0)}, p90 {fmt_number(size['p90'], 0)}, max {fmt_number(size['max'], 0)}"
    if inp["prompt_chars"]:
        chars = inp["prompt_chars"]
        text += f"; prompt characters p50 {fmt_number(chars['p50'], 0)}, p90 {fmt_number(chars['p90'], 0)}, max {fmt_number(chars['max'], 0)}"
    lines += ["", text]
    cost = report.get("cost")
    if cost:
        per_tokens = f"${cost['per_1m_output_tokens']:,.4f} per 1M output tokens" if cost["per_1m_output_tokens"] else "no token count: no cost per token"
        per_requests = f"${cost['per_1k_requests']:,.4f} per 1,000 requests" if cost["per_1k_requests"] else "no successful request"
        lines.append(f"  cost at ${cost['price_per_hour']:g}/hour: {per_tokens}, {per_requests}")
    lag = report.get("dispatch_lag_ms")
    if lag and lag["p99"] is not None and lag["p99"] > 5:
        lines.append(
            f"  warning: requests left up to {lag['max']:.0f} ms late (p99 {lag['p99']:.1f} ms): the client could not keep "
            "the schedule, so latency under this rate is understated; raise --concurrency"
        )
    lines.append(f"  percentiles: {report['percentile_method']}")
    return "\n".join(lines)


def load_report(path: str) -> dict[str, Any]:
    """An earlier ``--json`` report, for ``--compare``."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise OpsError(f"cannot read --compare {path}: {exc.strerror or exc}", EXIT_USAGE) from None
    except ValueError as exc:
        raise OpsError(f"--compare {path} is not JSON: {exc}", EXIT_USAGE) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise OpsError(f"--compare {path} is not a sagemaker-pools bench report (schema {SCHEMA})", EXIT_USAGE)
    return data


def _figures(report: Mapping[str, Any]) -> dict[str, tuple[float | None, bool]]:
    """``{label: (value, higher is better)}`` for comparison."""
    out = report["output"]
    cost = report.get("cost") or {}
    figures: dict[str, tuple[float | None, bool]] = {
        "requests/s": (report["requests_per_s"], True),
        "output tokens/s": (out.get("tokens_per_s"), True),
        "success rate %": (None if report["requests"]["success_rate"] is None else report["requests"]["success_rate"] * 100, True),
    }
    for key, label in _ROWS[:3]:
        for stat in ("p50", "p90", "p95", "p99", "max"):
            figures[f"{label} {stat} ms"] = ((report.get(key) or {}).get(stat), False)
    figures["$ per 1M output tokens"] = (cost.get("per_1m_output_tokens"), False)
    figures["$ per 1,000 requests"] = (cost.get("per_1k_requests"), False)
    return figures


def render_comparison(old: Mapping[str, Any], new: Mapping[str, Any], old_label: str) -> str:
    """Each figure of ``new`` against ``old``: both values, the change and whether it is better."""
    rows = []
    before, after = _figures(old), _figures(new)
    for label, (value, higher_better) in after.items():
        previous = before.get(label, (None, higher_better))[0]
        if value is None and previous is None:
            continue
        change, verdict = "-", ""
        digits = 4 if label.startswith("$") else 2
        if value is not None and previous is not None:
            delta = value - previous
            change = f"{delta:+,.{digits}f}" + (f" ({delta / previous * 100:+.1f} %)" if previous else "")
            if abs(delta) > 1e-12:
                verdict = "better" if (delta > 0) == higher_better else "worse"
        rows.append([label, fmt_number(previous, digits), fmt_number(value, digits), change, verdict])
    header = f"Compared with {old_label} ({old.get('started_at', '?')}, {old['run']['mode']} loop, concurrency {old['run']['concurrency']}):"
    return header + "\n" + render_table(["figure", "before", "now", "change", ""], rows, indent="  ")
