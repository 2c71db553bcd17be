"""Plain-text tables and number formatting for terminal output."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["render_table", "fmt_number", "fmt_ms"]


def render_table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, indent: str = "") -> str:
    """``rows`` under ``headers``, columns padded to their widest cell; numbers right-aligned.

    ``None`` renders as ``-``. Returns the lines joined with newlines, without a final newline.
    """
    cells = [[_cell(value) for value in row] for row in rows]
    numeric = [
        all(isinstance(row[i], (int, float)) and not isinstance(row[i], bool) for row in rows if row[i] is not None)
        and any(row[i] is not None for row in rows)
        for i in range(len(headers))
    ]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i]) for i, v in enumerate(values)]
        return (indent + "  ".join(parts)).rstrip()

    return "\n".join([line(list(headers))] + [line(row) for row in cells])


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return fmt_number(value)
    return str(value)


def fmt_number(value: float | None, digits: int = 1) -> str:
    """A float with ``digits`` decimals (thousands separated); ``-`` for None or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def fmt_ms(seconds: float | None) -> str:
    """Seconds as milliseconds with one decimal; ``-`` for None."""
    return "-" if seconds is None else f"{seconds * 1000:.1f}"
