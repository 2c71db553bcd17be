"""Service-level objectives (``--slo p99=2s``), whether a run meets them, and its goodput.

An SLO names a figure, a percentile and a bound: ``p99=2s`` (whole-request latency),
``ttft_p99=500ms`` (time to first token), ``itl_p99=50ms`` and ``tpot_p99=50ms`` (time per output
token). A run **holds** its SLOs when every named percentile is at or below its bound and its
error rate is at or below ``--max-error-rate``.

**Goodput** is as vLLM (``--goodput``) and genai-perf define it: the successful requests per second
that met *every* SLO's bound on their own (the percentile only decides whether the run holds).
Per request: its latency for ``pNN``, its TTFT for ``ttft_pNN``, and its time per output token
(TPOT: the time after the first token divided by the tokens after the first) for both
``itl_pNN`` and ``tpot_pNN``, as genai-perf's ``inter_token_latency`` constraint does per
request.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import EXIT_USAGE, OpsError

__all__ = ["Slo", "parse_slo", "request_meets", "tpot_of", "evaluate", "within"]

_SLO = re.compile(r"^(?:(?P<metric>ttft|itl|tpot)_)?p(?P<p>50|90|95|99)=(?P<value>[0-9]*\.?[0-9]+)(?P<unit>ms|s)$")
#: report key of each metric
REPORT_KEYS = {"latency": "latency_ms", "ttft": "ttft_ms", "itl": "itl_ms", "tpot": "tpot_ms"}


@dataclasses.dataclass(frozen=True)
class Slo:
    """One objective: ``metric``'s ``p``-th percentile at most ``bound_ms``."""

    metric: str
    p: int
    bound_ms: float

    @property
    def name(self) -> str:
        """As written on the command line, e.g. ``ttft_p99``."""
        return f"p{self.p}" if self.metric == "latency" else f"{self.metric}_p{self.p}"

    def to_json(self) -> dict[str, Any]:
        """``{"name", "metric", "percentile", "bound_ms"}``."""
        return {"name": self.name, "metric": self.metric, "percentile": self.p, "bound_ms": self.bound_ms}


def parse_slo(text: str) -> Slo:
    """``p99=2s``, ``ttft_p99=500ms``, ``itl_p95=40ms``, ``tpot_p99=50ms`` -> :class:`Slo`."""
    match = _SLO.match(text.strip().replace(" ", ""))
    if not match or not float(match["value"]) > 0:
        raise OpsError(
            f"--slo {text!r}: expected [ttft_|itl_|tpot_]pNN=VALUE(ms|s) with NN one of 50, 90, 95, 99 and VALUE > 0, "
            "e.g. p99=2s or ttft_p99=500ms",
            EXIT_USAGE,
        )
    value = float(match["value"]) * (1000.0 if match["unit"] == "s" else 1.0)
    return Slo(metric=match["metric"] or "latency", p=int(match["p"]), bound_ms=value)


def within(value: float, bound: float) -> bool:
    """``value <= bound``, where a value equal to the bound up to float rounding counts as at the bound.

    Measured seconds become milliseconds by a multiplication (2.007 s -> 2007.0000000000002 ms)
    and ``--slo p99=2.007s`` becomes 2007.0000000000002 ms, so an exact comparison would let the
    unit an SLO is written in decide whether a percentile at its bound holds. A relative slack of
    1e-9 (far below any clock's resolution) removes that.
    """
    return value <= bound or math.isclose(value, bound, rel_tol=1e-9)


def tpot_of(record: Any) -> float | None:
    """Time per output token of one streamed request (seconds), None when it cannot be known.

    ``(latency - TTFT) / (tokens - 1)``, as vLLM; the chunk count stands in when no token count
    is known.
    """
    if not record.ok or record.ttft is None:
        return None
    tokens = record.tokens if record.tokens is not None else record.chunks
    if tokens is None or tokens < 2:
        return None
    return float((record.latency - record.ttft) / (tokens - 1))


def request_meets(record: Any, slos: Sequence[Slo]) -> bool:
    """True when one successful request is within every SLO's bound."""
    if not record.ok:
        return False
    for slo in slos:
        bound = slo.bound_ms / 1000
        if slo.metric == "latency":
            value = record.latency
        elif slo.metric == "ttft":
            value = record.ttft
        else:
            value = tpot_of(record)
        if value is None or not within(value, bound):
            return False
    return True


def evaluate(report: Mapping[str, Any], slos: Sequence[Slo], max_error_rate: float) -> dict[str, Any]:
    """Whether ``report`` holds its SLOs: ``{"holds", "checks": [...]}``, each check with its measured value."""
    checks = []
    for slo in slos:
        summary = report.get(REPORT_KEYS[slo.metric]) or {}
        measured = summary.get(f"p{slo.p}")
        checks.append({**slo.to_json(), "measured_ms": measured, "met": measured is not None and within(measured, slo.bound_ms)})
    error_rate = report["requests"]["error_rate"]
    errors_ok = error_rate is not None and error_rate <= max_error_rate
    checks.append({"name": "error_rate", "bound": max_error_rate, "measured": error_rate, "met": errors_ok})
    return {"holds": all(c["met"] for c in checks), "checks": checks}
