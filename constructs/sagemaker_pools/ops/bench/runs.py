"""Several views of the measured requests: time slices of one run, repeated runs with confidence
intervals, and all of it as CSV rows.

* **Slices** (``--slice 30s``): the measured phase cut into windows of that length; a request
  belongs to the window in which it was sent (AIPerf's time slicing assigns requests by their
  start too), so a slice's throughput is what the load of that window got. Each slice is
  reported with :func:`~.report.build_report` on its own records (one way to compute every
  figure), trimmed to the figures that change over time.
* **Repeats** (``--repeat N``): the same run N times; each figure's mean, sample standard
  deviation and a 95 % confidence interval of the mean, Student's t with N - 1 degrees of
  freedom (N is small: the normal quantile 1.96 would understate the interval; for N = 3 the
  factor is 4.30).
* **CSV** (``--csv FILE``): one row a run, sweep level, repeat or slice, with the columns of
  :data:`CSV_COLUMNS`; times in milliseconds, rates per second.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import EXIT_USAGE, OpsError
from ..table import fmt_number, render_table
from .options import BenchOptions
from .report import build_report
from .runner import RunResult
from .slo import Slo

__all__ = [
    "slices", "confidence", "render_confidence", "repeat_document", "write_csv", "csv_row", "confidence_rows", "slice_rows", "render_slices",
    "CSV_COLUMNS", "REPEAT_SCHEMA", "FIGURES", "t_quantile",
]  # fmt: skip

REPEAT_SCHEMA = "sagemaker-pools-bench-repeat/1"

#: figure name -> how to read it from a report (None when the run has no such figure).
FIGURES: Mapping[str, Callable[[Mapping[str, Any]], float | None]] = {
    "requests_per_s": lambda r: r["requests_per_s"],
    "output_tokens_per_s": lambda r: r["output"]["tokens_per_s"],
    "error_rate": lambda r: r["requests"]["error_rate"],
    "latency_p50_ms": lambda r: r["latency_ms"]["p50"],
    "latency_p90_ms": lambda r: r["latency_ms"]["p90"],
    "latency_p99_ms": lambda r: r["latency_ms"]["p99"],
    "ttft_p50_ms": lambda r: (r["ttft_ms"] or {}).get("p50"),
    "ttft_p99_ms": lambda r: (r["ttft_ms"] or {}).get("p99"),
    "itl_p50_ms": lambda r: (r["itl_ms"] or {}).get("p50"),
    "itl_p99_ms": lambda r: (r["itl_ms"] or {}).get("p99"),
    "tpot_p50_ms": lambda r: (r["tpot_ms"] or {}).get("p50"),
    "tpot_p99_ms": lambda r: (r["tpot_ms"] or {}).get("p99"),
    "goodput_per_s": lambda r: (r.get("goodput") or {}).get("requests_per_s"),
}

#: Two-sided 95 % quantiles of Student's t for 1-30 degrees of freedom (beyond: the normal's 1.96 is within 2 %).
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def t_quantile(degrees: int) -> float:
    """The two-sided 95 % quantile of Student's t with ``degrees`` degrees of freedom (>= 1)."""
    if degrees < 1:
        raise ValueError("a confidence interval needs at least 2 values")
    return _T95[degrees - 1] if degrees <= len(_T95) else 1.96


def slices(options: BenchOptions, result: RunResult, seconds: float, *, slos: Sequence[Slo] = ()) -> list[dict[str, Any]]:
    """The measured phase in windows of ``seconds`` (the last one shorter), each with its figures."""
    if not seconds > 0:
        raise OpsError(f"--slice {seconds:g}: give a length > 0", EXIT_USAGE)
    # The measured phase: --duration when the run lasted it (the last slice ends there, not at the
    # last completion, so its rate is per second of sending); else until the last completion.
    span = options.duration_s if options.duration_s is not None and not result.interrupted else result.end - result.start
    count = max(1, math.ceil(round(span / seconds, 9)))
    windows: list[list[Any]] = [[] for _ in range(count)]
    for record in result.records:
        windows[min(count - 1, max(0, int((record.sent - result.start) // seconds)))].append(record)
    out = []
    for index, records in enumerate(windows):
        start = result.start + index * seconds
        end = result.start + min((index + 1) * seconds, span) if index == count - 1 else start + seconds
        report = build_report(options, dataclasses.replace(result, records=records, start=start, end=end), slos=slos)
        out.append(
            {
                "start_s": index * seconds,
                "end_s": round(end - result.start, 6),
                "requests": report["requests"],
                "requests_per_s": report["requests_per_s"],
                **{key: report[key] for key in ("latency_ms", "ttft_ms", "itl_ms", "tpot_ms")},
                "output": {"tokens_per_s": report["output"]["tokens_per_s"]},
                "goodput": report["goodput"],
            }
        )
    return out


def confidence(reports: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per figure of :data:`FIGURES` that every run has: values, mean, stddev and the 95 % confidence interval of the mean."""
    figures: dict[str, dict[str, Any]] = {}
    for name, read in FIGURES.items():
        values = [read(r) for r in reports]
        if any(v is None for v in values) or not values:
            continue
        numbers = [float(v) for v in values if v is not None]
        mean = statistics.fmean(numbers)
        stddev = statistics.stdev(numbers) if len(numbers) > 1 else 0.0
        half = t_quantile(len(numbers) - 1) * stddev / math.sqrt(len(numbers)) if len(numbers) > 1 else None
        figures[name] = {
            "values": numbers,
            "mean": mean,
            "stddev": stddev,
            "ci95_low": mean - half if half is not None else None,
            "ci95_high": mean + half if half is not None else None,
            "ci95_half_width": half,
        }
    return figures


def repeat_document(reports: Sequence[Mapping[str, Any]], *, endpoint: str, interrupted: bool) -> dict[str, Any]:
    """The ``--repeat`` document: every run's report and the confidence intervals across them."""
    return {
        "schema": REPEAT_SCHEMA,
        "endpoint": endpoint,
        "repeats": len(reports),
        "interrupted": interrupted,
        "confidence_level": 0.95,
        "method": "mean of the runs' figures; 95 % interval of the mean with Student's t, n - 1 degrees of freedom",
        "figures": confidence(reports),
        "runs": list(reports),
    }


def render_confidence(document: Mapping[str, Any]) -> str:
    """The repeat document as a table: one row a figure, mean ± the 95 % half-width, and the runs' range."""
    rows = []
    for name, figure in document["figures"].items():
        digits = 4 if name == "error_rate" else 1
        half = figure["ci95_half_width"]
        rows.append(
            [name, fmt_number(figure["mean"], digits), "-" if half is None else "± " + fmt_number(half, digits),
             fmt_number(figure["stddev"], digits), fmt_number(min(figure["values"]), digits), fmt_number(max(figure["values"]), digits)]
        )  # fmt: skip
    head = f"{document['endpoint']}: {document['repeats']} runs" + (" (interrupted)" if document["interrupted"] else "")
    table = render_table(["figure", "mean", "95 % CI", "stddev", "min", "max"], rows, indent="  ")
    return f"{head}; mean and 95 % confidence interval of the mean (Student's t)\n{table}"


#: The CSV's columns: what a row is, which one, then every figure of :data:`FIGURES` and the request counts.
CSV_COLUMNS = ("kind", "label", "requests", "ok", "failed", *FIGURES)


def csv_row(kind: str, label: str, report: Mapping[str, Any]) -> dict[str, Any]:
    """One CSV row of a report (or a slice, which has the same keys for these figures)."""
    row: dict[str, Any] = {"kind": kind, "label": label}
    requests = report["requests"]
    row.update(requests=requests["total"], ok=requests["ok"], failed=requests["failed"])
    row.update({name: read(report) for name, read in FIGURES.items()})
    return row


def confidence_rows(figures: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """CSV rows ``mean``, ``ci95_low`` and ``ci95_high`` of the repeats' figures (no request counts)."""
    return [{"kind": kind, "label": "repeats", **{name: f[kind] for name, f in figures.items()}} for kind in ("mean", "ci95_low", "ci95_high")]


def slice_rows(windows: Sequence[Mapping[str, Any]], prefix: str = "") -> list[dict[str, Any]]:
    """CSV rows of :func:`slices`, labelled ``[PREFIX ]START-ENDs``."""
    return [csv_row("slice", f"{prefix}{w['start_s']:g}-{w['end_s']:g}s", w) for w in windows]


def render_slices(windows: Sequence[Mapping[str, Any]]) -> str:
    """The slices as a table: requests, rate, latency p50/p99 (and TTFT p99 when streamed), errors."""
    streamed = any(w["ttft_ms"] for w in windows)
    header = ["slice s", "requests", "requests/s", "p50 ms", "p99 ms", *(["TTFT p99 ms"] if streamed else []), "errors"]
    rows = [
        [f"{w['start_s']:g}-{w['end_s']:g}", w["requests"]["total"], fmt_number(w["requests_per_s"]), fmt_number(w["latency_ms"]["p50"]),
         fmt_number(w["latency_ms"]["p99"]), *([fmt_number((w["ttft_ms"] or {}).get("p99"))] if streamed else []), w["requests"]["failed"]]
        for w in windows
    ]  # fmt: skip
    return "  time slices (a request counts in the slice it was sent in):\n" + render_table(header, rows, indent="  ")


def write_csv(path: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Write ``rows`` (:func:`csv_row`) under :data:`CSV_COLUMNS`; empty cells for missing figures."""
    try:
        with Path(path).open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, extrasaction="ignore")
            writer.writeheader()
            for row in rows:
                writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    except OSError as exc:
        raise OpsError(f"cannot write --csv {path}: {exc.strerror or exc} (the report above is complete)") from None
