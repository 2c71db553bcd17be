"""A capacity sweep: one closed loop per concurrency level (or one open loop per rate), and the
highest level whose SLOs hold.

``max_concurrency`` is the highest level at which every ``--slo`` percentile is within its
bound and the error rate within ``--max-error-rate``. It feeds
:class:`sagemaker_pools.capacity.PoolCapacity` through a capacity file. A rate sweep
(``--sweep-rate``) reports ``max_rate_per_s`` the same way: the highest offered rate the
endpoint served within the SLOs (not a capacity-file figure: pools are sized by concurrency).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..plotting import pyplot, save_figure
from ..table import fmt_number, render_table
from .slo import Slo, evaluate

if TYPE_CHECKING:
    from ...capacity import CapacityMeasurement

__all__ = ["Sweep", "SWEEP_SCHEMA", "AXES", "sweep_json", "render_sweep", "plot_sweep", "require_plot", "capacity_measurement"]

SWEEP_SCHEMA = "sagemaker-pools-bench-sweep/1"

#: What a sweep varies -> the key of each level's value (``--sweep``: concurrency; ``--sweep-rate``: rate_per_s).
AXES = {"concurrency": "concurrency", "rate": "rate_per_s"}


@dataclasses.dataclass
class Sweep:
    """The levels run so far, each with its report and whether its SLOs held."""

    slos: tuple[Slo, ...]
    max_error_rate: float
    levels: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    axis: str = "concurrency"

    def add(self, value: float, report: Mapping[str, Any]) -> dict[str, Any]:
        """Record one level's report; returns ``{AXIS, "holds", "checks", "report"}`` (AXIS: :data:`AXES`)."""
        verdict = evaluate(report, self.slos, self.max_error_rate)
        level = {AXES[self.axis]: value, **verdict, "report": dict(report)}
        self.levels.append(level)
        return level

    def _best(self) -> Any:
        if not self.slos:
            return None
        held = [level[AXES[self.axis]] for level in self.levels if level["holds"]]
        return max(held) if held else None

    @property
    def max_concurrency(self) -> int | None:
        """The highest concurrency level whose SLOs all held (None when none did, no SLO was given, or a rate sweep)."""
        return self._best() if self.axis == "concurrency" else None

    @property
    def max_rate(self) -> float | None:
        """A rate sweep: the highest rate whose SLOs all held (None otherwise)."""
        return self._best() if self.axis == "rate" else None


def sweep_json(sweep: Sweep, *, endpoint: str, instance_type: str | None, interrupted: bool) -> dict[str, Any]:
    """The sweep as one JSON document (``max_concurrency`` at the top level)."""
    return {
        "schema": SWEEP_SCHEMA,
        "endpoint": endpoint,
        "instance_type": instance_type,
        "axis": sweep.axis,
        "max_concurrency": sweep.max_concurrency,
        "max_rate_per_s": sweep.max_rate,
        "slos": [s.to_json() for s in sweep.slos],
        "max_error_rate": sweep.max_error_rate,
        "interrupted": interrupted,
        "levels": sweep.levels,
    }


def _axis(document: Mapping[str, Any]) -> str:
    return str(document.get("axis", "concurrency"))  # sweeps written before rate sweeps have no axis


def _row(level: Mapping[str, Any], slos: Sequence[Mapping[str, Any]], axis: str) -> list[Any]:
    report = level["report"]
    latency = report["latency_ms"]
    goodput = (report.get("goodput") or {}).get("requests_per_s")
    row: list[Any] = [
        fmt_number(level[AXES[axis]], 1) if axis == "rate" else level[AXES[axis]],
        fmt_number(report["run"]["concurrency_achieved"]["mean"], 1),
        fmt_number(report["requests_per_s"], 1),
        fmt_number(goodput, 1) if slos else "-",
        *(fmt_number(latency[s]) for s in ("p50", "p90", "p99")),
    ]
    if report.get("ttft_ms"):
        row.append(fmt_number(report["ttft_ms"]["p99"]))
    if report.get("tpot_ms"):
        row.append(fmt_number(report["tpot_ms"]["p99"]))
    rate = report["requests"]["error_rate"]
    row += [f"{rate * 100:.2f}" if rate is not None else "-", ("yes" if level["holds"] else "no") if slos else "-"]
    return row


def render_sweep(document: Mapping[str, Any]) -> str:
    """One row per level: rate, goodput, percentiles, error rate, whether the SLOs held."""
    levels = document["levels"]
    slos = document["slos"]
    axis = _axis(document)
    first = levels[0]["report"] if levels else {}
    header = ["concurrency" if axis == "concurrency" else "rate/s", "in flight", "requests/s", "goodput/s", "p50 ms", "p90 ms", "p99 ms"]
    if first.get("ttft_ms"):
        header.append("TTFT p99 ms")
    if first.get("tpot_ms"):
        header.append("TPOT p99 ms")
    header += ["errors %", "SLOs hold"]
    run = first.get("run", {})
    lines = [
        f"Sweep of {document['endpoint']}" + (f" ({document['instance_type']})" if document["instance_type"] else "")
        + f": {'closed loop' if axis == 'concurrency' else 'open loop, at most ' + str(run.get('concurrency')) + ' in flight'}, {run.get('duration_s')} s per level after {run.get('warmup_s')} s warm-up, seed {run.get('seed')}"
        + (" (interrupted)" if document["interrupted"] else ""),
        render_table(header, [_row(level, slos, axis) for level in levels], indent="  "),
    ]
    name = "max_concurrency" if axis == "concurrency" else "max_rate_per_s"
    if slos:
        bounds = ", ".join(f"{s['name']} <= {fmt_number(s['bound_ms'])} ms" for s in slos)
        lines.append(f"  SLOs: {bounds}, errors <= {document['max_error_rate'] * 100:g} %")
        best = document.get(name)
        lines.append(f"  {name}: {best:g}" if best is not None else f"  {name}: none (no level met every SLO)")
    else:
        lines.append(f"  no --slo given: no {name}")
    return "\n".join(lines)


def require_plot() -> None:
    """Fail now (exit 2) when matplotlib, needed by ``--plot``, is not installed."""
    pyplot("bench-plot")


def plot_sweep(document: Mapping[str, Any], path: str) -> None:
    """Latency percentiles and throughput (and goodput) against concurrency, as a PNG."""
    plt = pyplot("bench-plot")

    levels = document["levels"]
    axis = _axis(document)
    label = "concurrency" if axis == "concurrency" else "offered rate (requests/s)"
    xs = [level[AXES[axis]] for level in levels]
    figure, (latency_axes, rate_axes) = plt.subplots(1, 2, figsize=(11, 4.2))
    for stat in ("p50", "p90", "p99"):
        latency_axes.plot(xs, [level["report"]["latency_ms"][stat] for level in levels], marker="o", label=f"latency {stat}")
    if levels and levels[0]["report"].get("ttft_ms"):
        latency_axes.plot(xs, [level["report"]["ttft_ms"]["p99"] for level in levels], marker="s", label="TTFT p99")
    for slo in document["slos"]:
        if slo["metric"] == "latency":
            latency_axes.axhline(slo["bound_ms"], linestyle="--", color="grey", label=f"SLO {slo['name']}")
    latency_axes.set(xlabel=label, ylabel="ms", title="latency", xscale="log")
    latency_axes.set_ylim(bottom=0)
    latency_axes.legend()
    rate_axes.plot(xs, [level["report"]["requests_per_s"] for level in levels], marker="o", label="requests/s")
    if document["slos"]:
        rate_axes.plot(xs, [(level["report"].get("goodput") or {}).get("requests_per_s") for level in levels], marker="o", label="goodput/s")
    name = "max_concurrency" if axis == "concurrency" else "max_rate_per_s"
    best = document.get(name)
    if best is not None:
        rate_axes.axvline(best, linestyle="--", color="grey", label=f"{name} {best:g}")
    rate_axes.set(xlabel=label, ylabel="requests/s", title="throughput", xscale="log")
    rate_axes.legend()
    for axes in (latency_axes, rate_axes):
        axes.minorticks_off()
        axes.set_xticks(xs, [f"{x:g}" for x in xs])
        axes.grid(True, alpha=0.3)
    figure.suptitle(f"{document['endpoint']}" + (f" ({document['instance_type']})" if document["instance_type"] else ""))
    figure.tight_layout()
    save_figure(plt, figure, path, dpi=110)


def capacity_measurement(document: Mapping[str, Any], *, measured_at: str) -> CapacityMeasurement | None:
    """The capacity-file entry of a sweep (None when no level held)."""
    from ...capacity import CapacityMeasurement

    best = document["max_concurrency"]
    if best is None:
        return None
    return CapacityMeasurement(max_concurrency=int(best), slos=tuple(document["slos"]), measured_at=measured_at, endpoint=document["endpoint"])
