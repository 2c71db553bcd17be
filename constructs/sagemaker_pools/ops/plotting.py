"""matplotlib for the subcommands that draw (``bench --plot``, ``simulate --plot``), from an optional extra.

matplotlib is not a dependency of the package: each drawing subcommand names the extra that
brings it. Without it, ``--plot`` fails with one line that says what to install (exit 2).
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import EXIT_USAGE, OpsError

__all__ = ["pyplot", "save_figure"]


def pyplot(extra: str) -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or :class:`OpsError` naming ``extra``.

    Args:
        extra: the optional extra that installs matplotlib for the caller (``"sim"``, ``"bench-plot"``).
    """
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise OpsError(f'--plot needs matplotlib, which is not installed: pip install "cdk-sagemaker-pools[{extra}]"', EXIT_USAGE) from None
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


def save_figure(plt: Any, figure: Any, path: str, *, dpi: int) -> None:
    """Write ``figure`` to ``path`` and close it; an unwritable path is one :class:`OpsError` line.

    Args:
        plt: the ``matplotlib.pyplot`` module :func:`pyplot` returned.
        figure: the figure to write (closed afterwards, written or not).
        path: the ``--plot`` file.
        dpi: the resolution.
    """
    try:
        figure.savefig(path, dpi=dpi)
    except OSError as exc:
        raise OpsError(f"cannot write --plot {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(figure)
