"""An AIPerf run's exports as a ``bench`` report (``--from-aiperf DIR`` and ``--managed``).

AIPerf writes ``profile_export.jsonl`` (one record per request: ``metadata`` with
``request_start_ns`` / ``request_end_ns``, ``metrics`` as ``{name: {"value", "unit"}}``, and
``error``) and ``profile_export_aiperf.json`` (aggregates and the run's ``input_config``); see
AIPerf's "Working with Profile Export Files". The per-request records become :class:`Record`
objects and go through the same :func:`~.report.build_report` as a local run, so a managed or
local AIPerf run has the same schema, percentiles (nearest rank), goodput, spread and
histograms: ``--compare``, ``--merge``, ``--slo`` and ``--capacity-file`` work on it. AIPerf's
own aggregates are kept beside them under ``source.aiperf`` for cross-checking.

Mapping: latency = ``request_latency`` (else end - start); TTFT = ``time_to_first_token``; the
ITL gaps = ``inter_chunk_latency``; tokens = ``output_token_count`` (else
``output_sequence_length``); a record with an ``error`` or ``was_cancelled`` failed, its kind
being the error's ``type``. Records of another ``benchmark_phase`` than ``profiling`` (warm-up)
are left out. AIPerf records no response bytes: the report's byte figures are 0.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import EXIT_USAGE, OpsError
from .invoke import Record
from .options import BenchOptions
from .report import build_report
from .runner import RunResult
from .slo import Slo
from .stats import summarize

__all__ = ["RECORDS_FILE", "AGGREGATES_FILE", "report_from_exports", "read_export_dir"]

RECORDS_FILE = "profile_export.jsonl"
AGGREGATES_FILE = "profile_export_aiperf.json"
#: AIPerf's arrival patterns as ``bench`` names them.
_ARRIVALS = {"constant": "uniform", "poisson": "poisson", "gamma": "gamma"}
#: AIPerf aggregates copied into ``source.aiperf`` (when present).
_AGGREGATES = ("request_latency", "time_to_first_token", "inter_token_latency", "request_throughput", "output_token_throughput")


def read_export_dir(directory: str) -> tuple[str, dict[str, Any] | None]:
    """The records text and the aggregates (None when the file is missing) of a local AIPerf run."""
    root = Path(directory)
    records = root / RECORDS_FILE
    if not records.is_file():
        found = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
        raise OpsError(
            f"--from-aiperf {directory}: no {RECORDS_FILE} (AIPerf's per-request export) there"
            + (f"; found: {', '.join(found[:10])}" if found else ""),
            EXIT_USAGE,
        )
    aggregates_path = root / AGGREGATES_FILE
    aggregates = _json(aggregates_path.read_text(), str(aggregates_path)) if aggregates_path.is_file() else None
    return records.read_text(), aggregates


def report_from_exports(
    records_text: str,
    aggregates: Mapping[str, Any] | None,
    *,
    endpoint: str,
    source: Mapping[str, Any],
    price_per_hour: float | None = None,
    slos: Sequence[Slo] = (),
) -> dict[str, Any]:
    """A ``bench`` report (schema :data:`~.report.SCHEMA`) from AIPerf's exports.

    ``source`` says where they came from (``{"files": ..., "job": ...}``); it is stored in the
    report with AIPerf's version and aggregates added.
    """
    lines = [_json(line, f"{RECORDS_FILE} line {n}") for n, line in enumerate(records_text.splitlines(), 1) if line.strip()]
    measured = [r for r in lines if (r.get("metadata") or {}).get("benchmark_phase", "profiling") == "profiling"]
    if not measured:
        raise OpsError(f"{RECORDS_FILE} holds no measured request (benchmark_phase profiling)")
    try:
        t0 = min(int(r["metadata"]["request_start_ns"]) for r in measured)
        records = [_record(r, t0) for r in measured]
    except (KeyError, TypeError, ValueError) as exc:
        raise OpsError(f"{RECORDS_FILE} is not an AIPerf per-request export: {exc!r} missing or malformed") from None
    end = max(r.sent + r.latency for r in records)
    config = (aggregates or {}).get("input_config") or {}
    interrupted = bool((aggregates or {}).get("was_cancelled"))
    result = RunResult(records=records, start=0.0, end=end, interrupted=interrupted)
    options = _options(endpoint, config, records, measured)
    started_at = dt.datetime.fromtimestamp(t0 / 1e9, tz=dt.timezone.utc)
    report = build_report(options, result, price_per_hour=price_per_hour, started_at=started_at, slos=slos)
    report["input"] = {
        "bodies": len({(r.get("metadata") or {}).get("conversation_id") for r in measured}),
        "selection": "AIPerf",
        "bytes": None,
        "prompt_chars": None,
        "prompt_tokens": _summary(_metric(r, "input_sequence_length") or _metric(r, "error_isl") for r in measured),
    }
    report["source"] = {
        "tool": "aiperf",
        **source,
        "aiperf_version": (aggregates or {}).get("aiperf_version"),
        "aiperf": {name: aggregates[name] for name in _AGGREGATES if isinstance((aggregates or {}).get(name), dict)} if aggregates else None,
    }
    return report


def _record(raw: Mapping[str, Any], t0: int) -> Record:
    meta = raw["metadata"]
    start = int(meta["request_start_ns"])
    latency_ms = _metric(raw, "request_latency")
    end = meta.get("request_end_ns")
    latency = latency_ms / 1000 if latency_ms is not None else (int(end) - start) / 1e9 if end is not None else 0.0
    error = raw.get("error")
    ok = not error and not meta.get("was_cancelled")
    gaps = (raw.get("metrics") or {}).get("inter_chunk_latency", {}).get("value")
    tokens = _metric(raw, "output_token_count") or _metric(raw, "output_sequence_length")
    ttft = _metric(raw, "time_to_first_token")
    kind = None
    if not ok:
        kind = str((error or {}).get("type") or (error or {}).get("code") or "cancelled")
    return Record(
        sent=(start - t0) / 1e9,
        latency=latency,
        ok=ok,
        error=kind,
        body=0,
        ttft=ttft / 1000 if ttft is not None and ok else None,
        gaps=[g / 1000 for g in gaps] if isinstance(gaps, list) and ok else None,
        chunks=len(gaps) + 1 if isinstance(gaps, list) and ok else 0,
        tokens=int(tokens) if tokens is not None and ok else None,
    )


def _options(endpoint: str, config: Mapping[str, Any], records: Sequence[Record], raw: Sequence[Mapping[str, Any]]) -> BenchOptions:
    """What the run did, as :class:`BenchOptions` (only for the report's ``run`` section)."""
    loadgen = config.get("loadgen") or {}
    streaming = any(r.ttft is not None for r in records) or bool((config.get("endpoint") or {}).get("streaming"))
    rate = loadgen.get("request_rate")
    arrival = _ARRIVALS.get(str(loadgen.get("arrival_pattern") or loadgen.get("request_rate_mode") or "poisson"), "poisson")
    workers = {(r.get("metadata") or {}).get("worker_id") for r in raw} - {None}
    concurrency = loadgen.get("concurrency")
    return BenchOptions(
        endpoint=endpoint,
        bodies=(b"",),
        concurrency=int(concurrency) if concurrency else 1,
        rate=float(rate) if rate else None,
        arrival=arrival,
        burstiness=float(loadgen.get("arrival_smoothness") or 1.0),
        duration_s=loadgen.get("benchmark_duration"),
        warmup_s=float(loadgen.get("warmup_duration") or 0.0),
        requests=loadgen.get("request_count"),
        stream=streaming,
        seed=int((config.get("input") or {}).get("random_seed") or 0),
        timeout_s=float((config.get("endpoint") or {}).get("timeout_seconds") or 0.0),
        processes=max(1, len(workers)),
    )


def _metric(raw: Mapping[str, Any], name: str) -> float | None:
    value = ((raw.get("metrics") or {}).get(name) or {}).get("value")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _summary(values: Iterable[float | None]) -> dict[str, float | int | None] | None:
    present = [v for v in values if v is not None]
    return summarize(present) if present else None


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise OpsError(f"{where} is not JSON: {exc}") from None
