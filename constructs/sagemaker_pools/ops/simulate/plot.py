"""``--plot FILE.png``: instances stacked by type, the signal against its target, and the traffic.

matplotlib comes with the optional ``[sim]`` extra (``pip install "cdk-sagemaker-pools[sim]"``);
without it, ``--plot`` fails with one line that says so.
"""

from __future__ import annotations

from typing import Any

from ..plotting import pyplot, save_figure
from .engine import Result

__all__ = ["require_matplotlib", "plot"]

#: The optional extra that brings matplotlib for ``simulate --plot``.
EXTRA = "sim"


def require_matplotlib() -> Any:
    """``matplotlib.pyplot`` (Agg), or a one-line error naming the ``[sim]`` extra."""
    return pyplot(EXTRA)


def plot(result: Result, path: str, *, title: str | None = None) -> None:
    """Draw ``result`` into the PNG ``path``."""
    plt = require_matplotlib()
    spec = result.spec
    minutes = [r.minute for r in result.rows]
    hours = [m / 60 for m in minutes]
    figure, (fleet_ax, signal_ax, load_ax) = plt.subplots(3, 1, figsize=(10, 8), sharex=True, height_ratios=[3, 2, 2])
    stacks = [[r.instances[t] for r in result.rows] for t in spec.types]
    fleet_ax.stackplot(hours, stacks, labels=[f"{t} (priority {p.priority})" for t, p in zip(spec.types, spec.pools)], step="post", alpha=0.85)
    fleet_ax.step(hours, [r.desired_capacity for r in result.rows], where="post", color="black", linewidth=1.2, label=f"desired ({result.unit})")
    for outage_type, windows in result.scenario.outages.items():
        for start, end in windows:
            fleet_ax.axvspan(start / 60, end / 60, color="red", alpha=0.08)
            fleet_ax.text(start / 60, fleet_ax.get_ylim()[1] * 0.95 if fleet_ax.get_ylim()[1] else 1, f" {outage_type} outage", color="darkred", fontsize=8, va="top")
    fleet_ax.set_ylabel("instances in service")
    fleet_ax.legend(loc="upper right", fontsize=8)
    signal = [float("nan") if r.signal is None else r.signal for r in result.rows]
    signal_ax.plot(hours, signal, color="tab:purple", label="scaling signal")
    if result.target is not None:
        signal_ax.axhline(result.target, color="tab:purple", linestyle="--", linewidth=1, label=f"target {result.target:g}")
    signal_ax.set_ylabel("signal")
    signal_ax.legend(loc="upper right", fontsize=8)
    load_ax.plot(hours, [r.concurrency for r in result.rows], color="tab:blue", label="concurrency offered")
    load_ax.fill_between(hours, [r.queued for r in result.rows], step="post", color="tab:red", alpha=0.3, label="queued")
    load_ax.set_ylabel("requests")
    load_ax.set_xlabel("hours")
    load_ax.legend(loc="upper right", fontsize=8)
    figure.suptitle(title or f"{spec.endpoint_name} ({spec.endpoint_id}), simulated from its synthesized template")
    figure.tight_layout()
    save_figure(plt, figure, path, dpi=100)
