"""``--threshold NAME=VALUE``: what the candidate must meet, and whether it did.

| name | the candidate's ... | value | met when |
|---|---|---|---|
| ``exact_match`` | share of compared pairs with identical text | share: ``0.9`` or ``90%`` | measured >= value |
| ``agreement`` | token-level agreement | share | measured >= value |
| ``length_ratio`` | tokens / the baseline's tokens | ``LOW..HIGH``, e.g. ``0.9..1.1`` | LOW <= measured <= HIGH |
| ``p50`` ``p90`` ``p95`` ``p99`` | latency percentile (live runs only) | ``500ms`` or ``2s`` | measured <= value |
| ``errors`` | share of requests that failed | share | measured <= value |

``errors=1%`` applies unless another ``errors`` threshold is given. A figure that could not be
measured (no pair compared) misses its threshold, and a gate that compared no pair fails (the
``compared`` check, always there: at least one pair where both sides answered).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ..bench.slo import parse_slo
from ..bench_cmd import parse_error_rate
from ..errors import OpsError

__all__ = ["Threshold", "parse_threshold", "evaluate", "with_default_errors", "NAMES", "LATENCY_NAMES", "DEFAULT_ERRORS"]

#: Latency thresholds: the candidate's percentile, in milliseconds.
LATENCY_NAMES = ("p50", "p90", "p95", "p99")
#: Every threshold name.
NAMES = ("exact_match", "agreement", "length_ratio", *LATENCY_NAMES, "errors")
#: The error threshold that applies unless ``--threshold errors=...`` is given (as bench's --max-error-rate).
DEFAULT_ERRORS = 0.01


@dataclasses.dataclass(frozen=True)
class Threshold:
    """One threshold: ``name`` (one of :data:`NAMES`) and its bound (a share, ms, or a ``(low, high)`` ratio range)."""

    name: str
    bound: float | tuple[float, float]

    def to_json(self) -> Any:
        """The bound as the report writes it (a range as ``[low, high]``)."""
        return list(self.bound) if isinstance(self.bound, tuple) else self.bound


def parse_threshold(text: str) -> Threshold:
    """``agreement=0.95``, ``exact_match=90%``, ``length_ratio=0.9..1.1``, ``p99=2s``, ``errors=1%``.

    Raises:
        argparse.ArgumentTypeError: naming the bad part and what is allowed (argparse makes it exit 2).
    """
    name, sep, value = text.strip().partition("=")
    name, value = name.strip(), value.strip()
    if not sep or name not in NAMES:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE with NAME one of {', '.join(NAMES)}")
    if name in LATENCY_NAMES:
        try:
            return Threshold(name, parse_slo(f"{name}={value}").bound_ms)
        except OpsError:
            raise argparse.ArgumentTypeError(f"{text!r}: a latency bound is a duration > 0 in ms or s, e.g. {name}=2s") from None
    if name == "length_ratio":
        low, dots, high = value.partition("..")
        try:
            bounds = (float(low), float(high))
        except ValueError:
            bounds = (-1.0, -1.0)
        if not dots or not 0 <= bounds[0] <= bounds[1]:
            raise argparse.ArgumentTypeError(f"{text!r}: length_ratio is a range LOW..HIGH with 0 <= LOW <= HIGH, e.g. length_ratio=0.9..1.1")
        return Threshold(name, bounds)
    try:
        return Threshold(name, parse_error_rate(value))
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {name} is a share from 0 to 1 or a percentage ({exc})") from None


def with_default_errors(thresholds: Sequence[Threshold]) -> tuple[Threshold, ...]:
    """``thresholds``, with ``errors=1%`` added unless an errors threshold is there."""
    if any(t.name == "errors" for t in thresholds):
        return tuple(thresholds)
    return (*thresholds, Threshold("errors", DEFAULT_ERRORS))


def _measured(name: str, figures: Mapping[str, Any]) -> float | None:
    if name in LATENCY_NAMES:
        latency = figures.get("latency_ms")
        return None if latency is None else latency["candidate"][name]
    if name == "errors":
        value: float | None = figures["error_rate"]["candidate"]
        return value
    result: float | None = figures[name]
    return result


def evaluate(thresholds: Sequence[Threshold], figures: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One check per threshold, after the ``compared`` check: ``{"name", "bound", "measured", "met"}``."""
    compared = figures["pairs"]["compared"]
    checks: list[dict[str, Any]] = [{"name": "compared", "bound": 1, "measured": compared, "met": compared >= 1}]
    for threshold in thresholds:
        measured = _measured(threshold.name, figures)
        if measured is None:
            met = False
        elif isinstance(threshold.bound, tuple):
            met = threshold.bound[0] <= measured <= threshold.bound[1]
        elif threshold.name in ("exact_match", "agreement"):
            met = measured >= threshold.bound
        else:
            met = measured <= threshold.bound
        checks.append({"name": threshold.name, "bound": threshold.to_json(), "measured": measured, "met": met})
    return checks
