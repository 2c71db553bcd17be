"""Durations on the command line: ``90s``, ``20m``, ``4h``, ``1d`` (or a bare number of seconds)."""

from __future__ import annotations

import re

from .errors import EXIT_USAGE, OpsError

__all__ = ["parse_duration", "format_minutes"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str, field: str = "duration") -> float:
    """``text`` in seconds: a number followed by ``s``, ``m``, ``h`` or ``d`` (none: seconds).

    Raises:
        OpsError: (exit 2) anything else, naming ``field`` and the value.
    """
    match = _DURATION.match(text)
    if match is None:
        raise OpsError(f"{field}: {text!r} is not a duration (use e.g. 90s, 20m, 4h)", EXIT_USAGE)
    return float(match.group(1)) * _SECONDS[match.group(2) or "s"]


def format_minutes(minutes: float) -> str:
    """``90`` -> ``1h30m``, ``20`` -> ``20m``."""
    whole = int(round(minutes))
    hours, rest = divmod(whole, 60)
    if hours and rest:
        return f"{hours}h{rest:02d}m"
    return f"{hours}h" if hours else f"{rest}m"
