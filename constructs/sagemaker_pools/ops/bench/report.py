"""The benchmark report: figures from the records, as a table, as JSON, and against an earlier run.

Latency, TTFT and ITL percentiles are over successful requests only (a failure's duration
says nothing about the model); failures are counted by kind. ITL is pooled over every gap of
every stream. Throughput divides by the time from the start of the measured phase to the last
completion.

Beside the exact figures a report carries: the concurrency the run achieved (time-weighted
mean and peak of requests in flight, from the records), the spread of each figure over five
equal windows of the measured phase (what ``--compare`` calls noise), goodput under ``--slo``,
and HdrHistograms of every latency series (``--merge``).
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
from .histogram import encode_all
from .options import BenchOptions
from .runner import RunResult
from .slo import Slo, request_meets, tpot_of
from .stats import summarize

__all__ = [
    "SCHEMA",
    "build_report",
    "render_report",
    "load_report",
    "render_comparison",
    "achieved_concurrency",
    "SPREAD_WINDOWS",
    "SHORT_CONCURRENCY",
    "concurrency_warning",
    "comparison_warnings",
]

SCHEMA = "sagemaker-pools-bench/1"
_ROWS = (("latency_ms", "latency"), ("ttft_ms", "TTFT"), ("itl_ms", "ITL"), ("tpot_ms", "TPOT"), ("dispatch_lag_ms", "dispatch lag"))
_STATS = ("p50", "p90", "p95", "p99", "max", "mean")
#: The measured phase is cut into this many equal windows; a figure's spread is its range over them.
SPREAD_WINDOWS = 5
#: A closed loop that kept fewer than this share of --concurrency in flight (on average) is reported short.
SHORT_CONCURRENCY = 0.8


def achieved_concurrency(records: Sequence[Any], start: float, end: float) -> dict[str, float | int]:
    """Requests in flight during ``[start, end]``: the time-weighted mean and the peak.

    The mean is the summed time each request spent in flight within the window divided by the
    window (Little's law); the peak is the most that overlapped at one instant.
    """
    span = max(end - start, 1e-9)
    busy = 0.0
    events: list[tuple[float, int]] = []
    for r in records:
        sent, done = r.sent, r.sent + r.latency
        busy += max(0.0, min(done, end) - max(sent, start))
        events += [(sent, 1), (done, -1)]
    events.sort(key=lambda e: (e[0], e[1]))  # a completion before a send at the same instant
    peak = level = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return {"mean": busy / span, "max": peak}


def _spread(records: Sequence[Any], start: float, end: float) -> dict[str, list[float]]:
    """``{figure label: [min, max]}`` over :data:`SPREAD_WINDOWS` equal windows (by completion time)."""
    width = max(end - start, 1e-9) / SPREAD_WINDOWS
    windows: list[list[Any]] = [[] for _ in range(SPREAD_WINDOWS)]
    for r in records:
        if r.ok:
            index = min(SPREAD_WINDOWS - 1, max(0, int((r.sent + r.latency - start) / width)))
            windows[index].append(r)
    values: dict[str, list[float]] = {"requests/s": [len(w) / width for w in windows]}
    series = (("latency", lambda r: r.latency), ("TTFT", lambda r: r.ttft), ("TPOT", tpot_of))
    for label, get in series:
        for window in windows:
            summary = summarize([v for v in (get(r) for r in window) if v is not None], 1000)
            for stat in ("p50", "p90", "p95", "p99"):
                if summary[stat] is not None:
                    values.setdefault(f"{label} {stat} ms", []).append(float(summary[stat] or 0.0))
    return {label: [min(v), max(v)] for label, v in values.items() if len(v) == SPREAD_WINDOWS}


def build_report(
    options: BenchOptions,
    result: RunResult,
    *,
    price_per_hour: float | None = None,
    started_at: dt.datetime | None = None,
    slos: Sequence[Slo] = (),
) -> dict[str, Any]:
    """Every figure of the run as JSON-ready data."""
    records = result.records
    ok = [r for r in records if r.ok]
    errors: dict[str, int] = {}
    for r in records:
        if not r.ok:
            errors[r.error or "unknown"] = errors.get(r.error or "unknown", 0) + 1
    elapsed = result.elapsed_s
    tpots = [t for t in (tpot_of(r) for r in ok) if t is not None]
    achieved = achieved_concurrency(records, result.start, result.start + elapsed)
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "endpoint": options.endpoint,
        "started_at": (started_at or dt.datetime.now(dt.timezone.utc)).isoformat(timespec="seconds"),
        "run": {
            "mode": "replay" if options.replay_offsets is not None else ("open" if options.rate is not None else "closed"),
            "operation": "InvokeEndpointWithResponseStream" if options.stream else "InvokeEndpoint",
            "http": result.http,
            "concurrency": options.concurrency,
            "concurrency_achieved": achieved,
            "rate_per_s": options.rate,
            "arrival": options.arrival if options.rate is not None else None,
            "burstiness": options.burstiness if options.rate is not None and options.arrival == "gamma" else None,
            "seed": options.seed,
            "duration_s": options.duration_s,
            "warmup_s": options.warmup_s,
            "requests_limit": options.requests,
            "processes": options.processes,
            "timeout_s": options.timeout_s,
            "interrupted": result.interrupted,
            "signal": result.signal,
            "elapsed_s": elapsed,
        },
        "requests": {
            "total": len(records),
            "ok": len(ok),
            "failed": len(records) - len(ok),
            "success_rate": len(ok) / len(records) if records else None,
            "error_rate": (len(records) - len(ok)) / len(records) if records else None,
            "errors": dict(sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))),
        },
        "requests_per_s": len(ok) / elapsed,
        "latency_ms": summarize([r.latency for r in ok], 1000),
        "ttft_ms": summarize([r.ttft for r in ok if r.ttft is not None], 1000) if options.stream else None,
        "itl_ms": summarize([g for r in ok for g in (r.gaps or [])], 1000) if options.stream else None,
        "tpot_ms": summarize(tpots, 1000) if options.stream else None,
        "dispatch_lag_ms": summarize([r.lag for r in records if r.lag is not None], 1000) if options.open_loop else None,
        "output": _output(options, ok, elapsed),
        "input": _input(options, records),
        "goodput": _goodput(ok, slos, elapsed) if slos else None,
        "spread": {"windows": SPREAD_WINDOWS, "figures": _spread(records, result.start, result.start + elapsed)},
        "percentile_method": "nearest-rank over every measured successful request",
        "histograms": {
            "unit": "us",
            **encode_all(
                {
                    "latency": [r.latency for r in ok],
                    **(
                        {"ttft": [r.ttft for r in ok if r.ttft is not None], "itl": [g for r in ok for g in (r.gaps or [])], "tpot": tpots}
                        if options.stream
                        else {}
                    ),
                }
            ),
        },
    }
    report["cost"] = _cost(price_per_hour, report) if price_per_hour is not None else None
    if options.replay_offsets is not None:
        offsets = options.replay_offsets
        report["run"]["replay"] = {
            "source": options.replay_source,
            "captured_requests": len(offsets),
            "skipped_records": options.replay_skipped,
            "span_s": offsets[-1] if offsets else 0.0,
        }
    return report


def _goodput(ok: Sequence[Any], slos: Sequence[Slo], elapsed: float) -> dict[str, Any]:
    good = sum(1 for r in ok if request_meets(r, slos))
    return {
        "slos": [s.to_json() for s in slos],
        "requests": good,
        "requests_per_s": good / elapsed,
        "share_of_ok": good / len(ok) if ok else None,
    }


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
    by_tokenizer = sum(1 for r in ok if r.tokens_counted)
    output["tokens_counted_by_tokenizer"] = by_tokenizer
    if counted and len(counted) == len(ok) and by_tokenizer:
        output["unit"] = f"tokens ({by_tokenizer} of {len(ok)} counted with --tokenizer)"
    elif counted and len(counted) == len(ok):
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
    summary: dict[str, Any] = {
        "bodies": len(options.bodies),
        "selection": "sampled" if options.sample else "cycled",
        # a conversation's later turns carry their history: their size is what was sent
        "bytes": summarize([r.in_bytes if r.in_bytes is not None else sizes[r.body] for r in records]),
        "prompt_chars": summarize([float(c) for c in prompt]) if prompt else None,
    }
    if options.turns > 1 or options.turns_stddev:
        by_turn: dict[int, int] = {}
        for r in records:
            by_turn[r.turn or 1] = by_turn.get(r.turn or 1, 0) + 1
        summary["turns"] = {"mean": options.turns, "stddev": options.turns_stddev, "requests_by_turn": dict(sorted(by_turn.items()))}
    return summary


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
    arrival = run["arrival"] if run.get("burstiness") is None else f"gamma, burstiness {run['burstiness']:g}"
    if run["mode"] == "open":
        mode = f"open loop at {run['rate_per_s']:g}/s ({arrival}), at most {run['concurrency']} in flight"
    elif run["mode"] == "replay":
        replay = run["replay"]
        mode = f"replay of {replay['captured_requests']:,} captured requests over {replay['span_s']:,.1f} s ({replay['source']}), at most {run['concurrency']} in flight"
    else:
        mode = f"closed loop, concurrency {run['concurrency']}"
    achieved = run["concurrency_achieved"]
    lines = [
        f"Endpoint {report['endpoint']}: {run['operation']}, {mode}, {run['processes']} worker process(es), seed {_seed(run['seed'])}"
        + (f", {run['http']} HTTP client" if run.get("http") else ""),
        f"  measured {run['elapsed_s']:.1f} s after {run['warmup_s']:g} s warm-up" + (" (interrupted)" if run["interrupted"] else ""),
        f"  in flight: mean {achieved['mean']:,.1f}, peak {achieved['max']:,} (asked: {run['concurrency']:,})",
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
    lines += [throughput, f"  output measured in {out['unit']}"]
    goodput = report.get("goodput")
    if goodput:
        slos = ", ".join(f"{s['name']} <= {fmt_number(s['bound_ms'])} ms" for s in goodput["slos"])
        lines.append(f"  goodput: {goodput['requests_per_s']:,.1f} requests/s met every SLO per request ({slos})")
    lines.append("")
    rows = [[label] + [fmt_number(report[key][s]) for s in _STATS] + [report[key]["count"]] for key, label in _ROWS if report.get(key)]
    lines.append(render_table(["(ms)", *_STATS, "count"], rows, indent="  "))
    inp = report["input"]
    if inp is None:
        inp = {"bodies": 0, "selection": "", "bytes": None, "prompt_chars": None}
    size = inp["bytes"]
    bodies = f"{inp['bodies']} body" if inp["bodies"] == 1 else f"{inp['bodies']} bodies"
    if size is not None:
        text = f"  input: {bodies} {inp['selection']}; bytes p50 {fmt_number(size['p50'], 0)}, p90 {fmt_number(size['p90'], 0)}, max {fmt_number(size['max'], 0)}"
        if inp["prompt_chars"]:
            chars = inp["prompt_chars"]
            text += f"; prompt characters p50 {fmt_number(chars['p50'], 0)}, p90 {fmt_number(chars['p90'], 0)}, max {fmt_number(chars['max'], 0)}"
        lines += ["", text]
    elif inp.get("prompt_tokens"):
        tokens = inp["prompt_tokens"]
        lines += ["", f"  input: {bodies} from AIPerf; prompt tokens p50 {fmt_number(tokens['p50'], 0)}, p90 {fmt_number(tokens['p90'], 0)}, max {fmt_number(tokens['max'], 0)}"]
    else:
        lines += ["", f"  merged from {len(report.get('merged_from', []))} client reports: {', '.join(report.get('merged_from', []))}"]
    source = report.get("source")
    if source:
        where = f"job {source['job']}" if source.get("job") else ", ".join(source.get("files") or [])
        version = f" {source['aiperf_version']}" if source.get("aiperf_version") else ""
        lines.append(f"  measured by AIPerf{version} ({where}); figures from its per-request export")
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
    warning = concurrency_warning(report)
    if warning:
        lines.append(f"  warning: {warning}")
    lines.append(f"  percentiles: {report['percentile_method']}")
    return "\n".join(lines)


def _seed(seed: Any) -> str:
    return ", ".join(str(s) for s in seed) if isinstance(seed, list) else str(seed)


def concurrency_warning(report: Mapping[str, Any]) -> str | None:
    """A closed loop that kept fewer requests in flight than asked: what to say, else None."""
    run = report["run"]
    achieved = run["concurrency_achieved"]
    if run["mode"] != "closed" or not report["requests"]["total"] or achieved["mean"] >= SHORT_CONCURRENCY * run["concurrency"]:
        return None
    return (
        f"only {achieved['mean']:,.1f} requests were in flight on average (peak {achieved['max']:,}), not the "
        f"{run['concurrency']:,} asked: the client could not keep up; the figures are those of the lower concurrency "
        "(raise --processes, or run several clients and --merge their reports)"
    )


def load_report(path: str, *, flag: str = "--compare") -> dict[str, Any]:
    """An earlier ``--json`` report (for ``--compare`` or ``--merge``)."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise OpsError(f"cannot read {flag} {path}: {exc.strerror or exc}", EXIT_USAGE) from None
    except ValueError as exc:
        raise OpsError(f"{flag} {path} is not JSON: {exc}", EXIT_USAGE) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise OpsError(f"{flag} {path} is not a sagemaker-pools bench report (schema {SCHEMA})", EXIT_USAGE)
    return data


def merge_reports(reports: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> dict[str, Any]:
    """One report of runs that several clients made together against one endpoint.

    Counts, errors, bytes and tokens add up exactly; rates add up (the clients ran at the same
    time: start them together with the same ``--duration``); percentiles come from the sum of
    the reports' HdrHistograms (within 0.1 % of the exact value: the precision every report
    records at), so the result is the report one client seeing every request would have made.
    The merged report carries the merged histograms, so merges compose.
    """
    from .histogram import encode, merged, summary_of

    first = reports[0]
    for label, one in zip(labels, reports):
        if "histograms" not in one:
            raise OpsError(f"--merge {label} has no histograms (written by an older version): it cannot be merged", EXIT_USAGE)
        for key in ("mode", "operation"):
            if one["run"][key] != first["run"][key]:
                raise OpsError(f"--merge {label}: {key} {one['run'][key]!r} differs from {labels[0]}'s {first['run'][key]!r}", EXIT_USAGE)
        if one["endpoint"] != first["endpoint"]:
            raise OpsError(f"--merge {label}: endpoint {one['endpoint']} differs from {labels[0]}'s {first['endpoint']}", EXIT_USAGE)

    def total(get: Any) -> Any:
        values = [get(r) for r in reports]
        return None if any(v is None for v in values) else sum(values)

    histograms: dict[str, Any] = {"unit": "us"}
    summaries: dict[str, Any] = {}
    for name in ("latency", "ttft", "itl", "tpot"):
        if all(name in r["histograms"] for r in reports):
            histogram = merged(r["histograms"][name] for r in reports)
            histograms[name] = encode(histogram)
            summaries[f"{name}_ms"] = summary_of(histogram)
    errors: dict[str, int] = {}
    for one in reports:
        for kind, count in one["requests"]["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    requests_total = sum(r["requests"]["total"] for r in reports)
    ok = sum(r["requests"]["ok"] for r in reports)
    runs = [r["run"] for r in reports]
    outputs = [r["output"] for r in reports]
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "endpoint": first["endpoint"],
        "started_at": min(r["started_at"] for r in reports),
        "merged_from": list(labels),
        "run": {
            **{key: first["run"].get(key) for key in ("mode", "operation", "arrival", "burstiness", "duration_s", "warmup_s", "timeout_s")},
            "concurrency": sum(r["concurrency"] for r in runs),
            "concurrency_achieved": {
                "mean": sum(r["concurrency_achieved"]["mean"] for r in runs),
                "max": sum(r["concurrency_achieved"]["max"] for r in runs),
            },
            "rate_per_s": total(lambda r: r["run"]["rate_per_s"]),
            "seed": [r["seed"] for r in runs],
            "requests_limit": total(lambda r: r["run"]["requests_limit"]),
            "processes": sum(r["processes"] for r in runs),
            "interrupted": any(r["interrupted"] for r in runs),
            "signal": None,
            "elapsed_s": max(r["elapsed_s"] for r in runs),
            "clients": len(reports),
        },
        "requests": {
            "total": requests_total,
            "ok": ok,
            "failed": requests_total - ok,
            "success_rate": ok / requests_total if requests_total else None,
            "error_rate": (requests_total - ok) / requests_total if requests_total else None,
            "errors": dict(sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))),
        },
        "requests_per_s": sum(r["requests_per_s"] for r in reports),
        "latency_ms": summaries["latency_ms"],
        "ttft_ms": summaries.get("ttft_ms"),
        "itl_ms": summaries.get("itl_ms"),
        "tpot_ms": summaries.get("tpot_ms"),
        "dispatch_lag_ms": None,
        "output": {
            "bytes_total": sum(o["bytes_total"] for o in outputs),
            "bytes_per_s": sum(o["bytes_per_s"] for o in outputs),
            "tokens_reported_by": sum(o["tokens_reported_by"] for o in outputs),
            "tokens_total": total(lambda r: r["output"]["tokens_total"]),
            "tokens_per_s": total(lambda r: r["output"]["tokens_per_s"]),
            "tokens_per_request": None,
            "unit": outputs[0]["unit"] if len({o["unit"] for o in outputs}) == 1 else "mixed: " + "; ".join(sorted({o["unit"] for o in outputs})),
            **({"chunks_total": sum(o["chunks_total"] for o in outputs), "chunks_per_s": sum(o["chunks_per_s"] for o in outputs)} if all("chunks_total" in o for o in outputs) else {}),
        },
        "input": None,
        "goodput": None,
        "spread": None,
        "percentile_method": f"HdrHistogram (3 significant digits) merged from {len(reports)} reports",
        "histograms": histograms,
    }
    price = first["cost"]["price_per_hour"] if first.get("cost") else None
    report["cost"] = _cost(price, report) if price is not None else None
    return report


def _figures(report: Mapping[str, Any]) -> dict[str, tuple[float | None, bool]]:
    """``{label: (value, higher is better)}`` for comparison."""
    out = report["output"]
    cost = report.get("cost") or {}
    figures: dict[str, tuple[float | None, bool]] = {
        "requests/s": (report["requests_per_s"], True),
        "output tokens/s": (out.get("tokens_per_s"), True),
        "success rate %": (None if report["requests"]["success_rate"] is None else report["requests"]["success_rate"] * 100, True),
    }
    for key, label in _ROWS[:4]:
        for stat in ("p50", "p90", "p95", "p99", "max"):
            figures[f"{label} {stat} ms"] = ((report.get(key) or {}).get(stat), False)
    figures["$ per 1M output tokens"] = (cost.get("per_1m_output_tokens"), False)
    figures["$ per 1,000 requests"] = (cost.get("per_1k_requests"), False)
    return figures


def _noise(report: Mapping[str, Any], label: str) -> float | None:
    """Half the range of a figure over the run's windows (None when the report has no spread for it)."""
    spread = ((report.get("spread") or {}).get("figures") or {}).get(label)
    return (spread[1] - spread[0]) / 2 if spread else None


def comparison_warnings(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What makes two runs not comparable figure for figure."""
    warnings = []
    a, b = old["run"], new["run"]
    if a["mode"] != b["mode"]:
        warnings.append(f"the runs used different loops ({a['mode']} before, {b['mode']} now)")
    if a["concurrency"] != b["concurrency"]:
        warnings.append(f"the runs used different concurrency ({a['concurrency']} before, {b['concurrency']} now)")
    if a.get("rate_per_s") != b.get("rate_per_s"):
        warnings.append(f"the runs used different rates ({a.get('rate_per_s')} before, {b.get('rate_per_s')} now)")
    return warnings


def render_comparison(old: Mapping[str, Any], new: Mapping[str, Any], old_label: str) -> str:
    """Each figure of ``new`` against ``old``: both values, the change and whether it is better.

    A change no larger than the runs' own noise (half the range the figure spread over the
    windows of either run, the larger) is called "within noise", not better or worse.
    """
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
            noises = [n for n in (_noise(old, label), _noise(new, label)) if n is not None]
            if noises and abs(delta) <= max(noises):
                verdict = f"within noise (±{max(noises):,.{digits}f})"
            elif abs(delta) > 1e-12:
                verdict = "better" if (delta > 0) == higher_better else "worse"
        rows.append([label, fmt_number(previous, digits), fmt_number(value, digits), change, verdict])
    header = f"Compared with {old_label} ({old.get('started_at', '?')}, {old['run']['mode']} loop, concurrency {old['run']['concurrency']}):"
    lines = [header, render_table(["figure", "before", "now", "change", ""], rows, indent="  ")]
    lines += [f"  warning: {w}: the change mixes the load with the endpoint" for w in comparison_warnings(old, new)]
    return "\n".join(lines)
