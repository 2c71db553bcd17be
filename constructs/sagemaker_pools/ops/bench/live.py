"""The live progress of a run: one line rewritten in place, or a ``rich`` progress bar.

Both show the same figures (:func:`progress_text`): percent done, ETA, requests done and
failed, the live rate over the last interval and the running p99. ``--progress rich`` needs the
optional ``bench-progress`` extra (``pip install 'cdk-sagemaker-pools[bench-progress]'``); it is
imported only then.
"""

from __future__ import annotations

from typing import Any, TextIO

from ..errors import EXIT_USAGE, OpsError
from .runner import Progress

__all__ = ["progress_text", "require_rich", "RichProgress", "STYLES"]

#: The ways to show progress (``--progress``).
STYLES = ("plain", "rich")


def progress_text(p: Progress) -> str:
    """The figures of one snapshot, as the plain progress line shows them."""
    if p.stopping:
        return "stopping: waiting for the requests in flight (again to quit now)"
    if p.warming_up:
        return f"[{p.elapsed_s:6.1f} s] warming up"
    eta = f", ETA {p.eta_s:,.0f} s" if p.eta_s is not None else ""
    rate = f", {p.rate_per_s:,.1f}/s" if p.rate_per_s is not None else ""
    p99 = f", p99 {p.p99_s * 1000:,.1f} ms" if p.p99_s is not None else ""
    return f"[{p.elapsed_s:6.1f} s] {p.fraction * 100:3.0f} %{eta}: {p.done:,} done, {p.errors:,} failed{rate}{p99}"


def require_rich() -> None:
    """Fail now (exit 2) when ``rich``, needed by ``--progress rich``, is not installed."""
    try:
        import rich.progress  # noqa: F401
    except ImportError:
        raise OpsError("--progress rich needs the rich package: pip install 'cdk-sagemaker-pools[bench-progress]'", EXIT_USAGE) from None


class RichProgress:
    """A ``rich`` progress bar on ``stream`` (a terminal), fed with :class:`Progress` snapshots."""

    def __init__(self, stream: TextIO, prefix: str = "") -> None:
        from rich.console import Console
        from rich.progress import BarColumn
        from rich.progress import Progress as Bar
        from rich.progress import TextColumn

        self._bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[figures]}"),
            console=Console(file=stream, force_terminal=True),
            auto_refresh=False,
        )
        self._prefix = prefix
        self._task: Any = None

    def __call__(self, p: Progress) -> None:
        """Show snapshot ``p``."""
        if self._task is None:
            self._bar.start()
            self._task = self._bar.add_task(self._prefix.rstrip(": ") or "bench", total=100, figures="")
        self._bar.update(self._task, completed=p.fraction * 100, figures=progress_text(p))
        self._bar.refresh()

    def close(self) -> None:
        """Leave the last bar on screen and end the line."""
        if self._task is not None:
            self._bar.stop()
