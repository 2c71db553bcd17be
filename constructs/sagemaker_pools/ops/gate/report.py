"""The gate report: JSON (``--json``, schema ``sagemaker-pools-gate/1``) and a readable text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..table import fmt_number, render_table
from .thresholds import LATENCY_NAMES

__all__ = ["SCHEMA", "build_report", "render_report", "missed"]

SCHEMA = "sagemaker-pools-gate/1"


def build_report(
    *,
    figures: Mapping[str, Any],
    checks: Sequence[Mapping[str, Any]],
    source: str,
    baseline: str,
    candidate: str,
    started_at: str,
    decoding: Mapping[str, Any] | None = None,
    capture: Mapping[str, Any] | None = None,
    build: str | None = None,
    instance_type: str | None = None,
) -> dict[str, Any]:
    """The whole report (docs/ops.md, "gate --json schema")."""
    return {
        "schema": SCHEMA,
        "started_at": started_at,
        "source": source,
        "baseline": baseline,
        "candidate": candidate,
        "instance_type": instance_type,
        "build": build,
        "decoding": dict(decoding) if decoding is not None else None,
        "capture": dict(capture) if capture is not None else None,
        **figures,
        "checks": [dict(c) for c in checks],
        "passed": all(c["met"] for c in checks),
    }


def missed(report: Mapping[str, Any]) -> list[str]:
    """One phrase per missed check, e.g. ``agreement 0.750 (needs >= 0.95)``."""
    return [f"{check['name']} {_measured(check)} (needs {_bound(check)})" for check in report["checks"] if not check["met"]]


def _measured(check: Mapping[str, Any]) -> str:
    value = check["measured"]
    if value is None:
        return "not measured"
    if check["name"] in LATENCY_NAMES:
        return f"{fmt_number(value)} ms"
    if check["name"] == "compared":
        return f"{value:,} pairs"
    return fmt_number(value, 3)


def _bound(check: Mapping[str, Any]) -> str:
    bound = check["bound"]
    name = check["name"]
    if isinstance(bound, list):
        return f"{bound[0]:g}..{bound[1]:g}"
    if name in ("exact_match", "agreement"):
        return f">= {bound:g}"
    if name == "errors":
        return f"<= {bound * 100:g} %"
    if name == "compared":
        return f">= {bound:,}"
    return f"<= {bound:g} ms"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f} %"


def render_report(report: Mapping[str, Any]) -> str:
    """The report as text."""
    pairs = report["pairs"]
    lines = [f"Gate: {report['candidate']} against {report['baseline']} ({'data capture' if report['source'] == 'capture' else 'requests sent to both'})"]
    decoding = report.get("decoding")
    if decoding is not None:
        styles = ", ".join(f"{n} {style}" for style, n in decoding["bodies"].items())
        changes = ", ".join(decoding["set"]) if decoding["set"] else "nothing (no known format)"
        lines.append(f"  deterministic decoding ({styles} bodies): set {changes}")
    elif report["source"] == "live":
        lines.append("  bodies sent as is (--as-is)")
    capture = report.get("capture")
    if capture is not None:
        by = capture["paired_by"]
        lines.append(
            f"  captured: {capture['baseline_records']:,} baseline and {capture['candidate_records']:,} candidate records; "
            f"paired by inferenceId {by['inferenceId']:,}, by eventId {by['eventId']:,}; unpaired {capture['unpaired']['baseline']:,} + "
            f"{capture['unpaired']['candidate']:,}; input mismatches {capture['input_mismatches']:,}"
        )
    lines.append(
        f"  requests: {pairs['total']:,}; compared {pairs['compared']:,}; failed: baseline {pairs['baseline_failed']:,}, candidate {pairs['candidate_failed']:,}"
    )
    for side in ("baseline", "candidate"):
        if report["errors"][side]:
            lines.append(f"  {side} errors: " + ", ".join(f"{kind} {count:,}" for kind, count in report["errors"][side].items()))
    tokens = report["tokens"]
    ratio = "n/a" if report["length_ratio"] is None else f"{report['length_ratio']:.3f}"
    lines += [
        f"  exact match {_percent(report['exact_match'])}, token agreement {_percent(report['agreement'])}, length ratio {ratio}",
        f"  tokens: {tokens['unit']}; baseline {tokens['baseline']:,}, candidate {tokens['candidate']:,}",
    ]
    latency = report.get("latency_ms")
    if latency is not None:
        rows = [[side] + [latency[side][s] for s in ("p50", "p90", "p99", "max")] + [latency[side]["count"]] for side in ("baseline", "candidate")]
        lines += ["", render_table(["latency (ms)", "p50", "p90", "p99", "max", "count"], rows, indent="  ")]
    for example in report["examples"]:
        lines += ["", f"  differs at {example['key']} (agreement {_percent(example['agreement'])}):",
                  f"    baseline:  {example['baseline']!r}", f"    candidate: {example['candidate']!r}"]  # fmt: skip
    lines.append("")
    for check in report["checks"]:
        lines.append(f"  {'met   ' if check['met'] else 'MISSED'} {check['name']}: {_measured(check)} (needs {_bound(check)})")
    lines.append(f"  {'PASSED' if report['passed'] else 'FAILED'}")
    return "\n".join(lines)
