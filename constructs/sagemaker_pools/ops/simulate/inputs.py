"""The simulation's inputs from the command line: the traffic trace, outages, start-up times, prices, latencies.

Every bad input raises :class:`~sagemaker_pools.ops.errors.OpsError` with exit code 2 and one
line that names the input, the bad value and what is allowed.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...hardware import hardware_of
from ..durations import parse_duration
from ..errors import EXIT_USAGE, OpsError

__all__ = [
    "Traffic",
    "Outage",
    "read_traffic",
    "write_traffic",
    "parse_outage",
    "parse_assignments",
    "default_start_up_minutes",
    "read_latency",
]

#: Start-up of an instance until it serves, when ``--start-up`` does not say: 10 minutes for a type
#: with accelerators (GPU, Inferentia, Trainium: image pull, weight download and load of an LLM
#: take 10-20 minutes), 5 minutes for the others.
ACCELERATED_START_UP_MINUTES = 10
CPU_START_UP_MINUTES = 5


@dataclass(frozen=True)
class Traffic:
    """A trace: per minute, concurrent requests (or requests per second); values held between rows."""

    column: str
    minutes: tuple[int, ...]
    values: tuple[float, ...]

    @property
    def last_minute(self) -> int:
        """The minute of the last row."""
        return self.minutes[-1]

    def expand(self, duration_minutes: int) -> list[float]:
        """One value per minute ``0 .. duration_minutes - 1`` (before the first row: 0)."""
        out = [0.0] * duration_minutes
        rows = list(zip(self.minutes, self.values)) + [(duration_minutes, 0.0)]
        for (start, value), (end, _) in zip(rows, rows[1:]):
            for minute in range(max(start, 0), min(end, duration_minutes)):
                out[minute] = value
        return out


_COLUMNS = ("concurrency", "requests_per_second")


def read_traffic(path: str) -> Traffic:
    """The trace in the CSV at ``path``: header ``minute,concurrency`` or ``minute,requests_per_second``."""
    try:
        with Path(path).open(newline="") as handle:
            rows = list(csv.reader(handle))
    except OSError as exc:
        raise OpsError(f"--traffic {path}: {exc.strerror or exc}", EXIT_USAGE) from None
    rows = [r for r in rows if r and any(cell.strip() for cell in r)]
    if not rows:
        raise OpsError(f"--traffic {path}: empty file (expected a header minute,concurrency)", EXIT_USAGE)
    header = [cell.strip() for cell in rows[0]]
    if "minute" not in header or not any(c in header for c in _COLUMNS):
        raise OpsError(
            f"--traffic {path}: header {','.join(header)!r} lacks a column: expected minute,concurrency or minute,requests_per_second",
            EXIT_USAGE,
        )
    column = next(c for c in _COLUMNS if c in header)
    at_minute, at_value = header.index("minute"), header.index(column)
    minutes: list[int] = []
    values: list[float] = []
    for number, row in enumerate(rows[1:], start=2):
        try:
            minute_text, value_text = row[at_minute].strip(), row[at_value].strip()
        except IndexError:
            raise OpsError(f"--traffic {path} line {number}: missing a value for minute or {column}", EXIT_USAGE) from None
        try:
            minute = int(minute_text)
            value = float(value_text)
        except ValueError:
            raise OpsError(f"--traffic {path} line {number}: {minute_text!r}, {value_text!r} are not numbers", EXIT_USAGE) from None
        if minute < 0:
            raise OpsError(f"--traffic {path} line {number}: minute {minute} is negative (minutes count from 0)", EXIT_USAGE)
        if not value >= 0 or value == float("inf"):
            raise OpsError(f"--traffic {path} line {number}: {column} {value_text} must be a finite number >= 0", EXIT_USAGE)
        if minutes and minute <= minutes[-1]:
            raise OpsError(f"--traffic {path} line {number}: minute {minute} is not after minute {minutes[-1]} (rows in time order)", EXIT_USAGE)
        minutes.append(minute)
        values.append(value)
    if not minutes:
        raise OpsError(f"--traffic {path}: no rows after the header", EXIT_USAGE)
    return Traffic(column, tuple(minutes), tuple(values))


def write_traffic(path: str, traffic: Traffic) -> None:
    """Write ``traffic`` as :func:`read_traffic` reads it (values in ``repr``, so that they read back exactly)."""
    try:
        with Path(path).open("w", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(["minute", traffic.column])
            writer.writerows([minute, repr(value)] for minute, value in zip(traffic.minutes, traffic.values))
    except OSError as exc:
        raise OpsError(f"--traffic-out {path}: {exc.strerror or exc}", EXIT_USAGE) from None


@dataclass(frozen=True)
class Outage:
    """No capacity of ``instance_type`` from ``start`` (inclusive) to ``end`` (exclusive), in minutes."""

    instance_type: str
    start: int
    end: int


def parse_outage(text: str, types: Sequence[str]) -> Outage:
    """``ml.g6e.48xlarge@0m-240m`` as an :class:`Outage` of one of ``types``."""
    instance_type, at, window = text.partition("@")
    start_text, dash, end_text = window.partition("-")
    if not at or not dash:
        raise OpsError(f"--outage {text!r}: expected TYPE@START-END, e.g. ml.g6e.48xlarge@0m-240m", EXIT_USAGE)
    if instance_type not in types:
        raise OpsError(f"--outage {text!r}: {instance_type} is not a pool of this endpoint ({', '.join(types)})", EXIT_USAGE)
    start = int(parse_duration(start_text, f"--outage {text}") // 60)
    end = int(parse_duration(end_text, f"--outage {text}") // 60)
    if end <= start:
        raise OpsError(f"--outage {text!r}: the end must come after the start", EXIT_USAGE)
    return Outage(instance_type, start, end)


def parse_assignments(texts: Iterable[str], flag: str, types: Sequence[str]) -> dict[str, str]:
    """``TYPE=VALUE`` pairs of ``flag`` as ``{type: value}``; each type one of ``types``."""
    found: dict[str, str] = {}
    for text in texts:
        instance_type, eq, value = text.partition("=")
        if not eq or not value:
            raise OpsError(f"{flag} {text!r}: expected TYPE=VALUE", EXIT_USAGE)
        if instance_type not in types:
            raise OpsError(f"{flag} {text!r}: {instance_type} is not a pool of this endpoint ({', '.join(types)})", EXIT_USAGE)
        found[instance_type] = value
    return found


def positive_number(text: str, what: str) -> float:
    """``text`` as a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise OpsError(f"{what}: {text!r} is not a number", EXIT_USAGE) from None
    if not 0 < value < float("inf"):
        raise OpsError(f"{what}: {text} must be a number > 0", EXIT_USAGE)
    return value


def default_start_up_minutes(instance_type: str) -> int:
    """The documented default start-up of ``instance_type`` (see :data:`ACCELERATED_START_UP_MINUTES`)."""
    hardware = hardware_of(instance_type)
    family = instance_type.split(".")[1] if instance_type.count(".") >= 2 else ""
    accelerated = (hardware is not None and hardware.accelerators > 0) or family[:1] in ("g", "p") or family.startswith(("inf", "trn"))
    return ACCELERATED_START_UP_MINUTES if accelerated else CPU_START_UP_MINUTES


def read_latency(value: str, what: str) -> float:
    """Seconds per request: a number, or the mean latency of a ``sagemaker-pools bench --json`` report."""
    if not value.lower().endswith(".json"):
        return positive_number(value, what)
    try:
        report = json.loads(Path(value).read_text())
        mean_ms = float(report["latency_ms"]["mean"])
    except OSError as exc:
        raise OpsError(f"{what}: cannot read {value}: {exc.strerror or exc}", EXIT_USAGE) from None
    except (ValueError, KeyError, TypeError):
        raise OpsError(f"{what}: {value} is not a bench --json report with latency_ms.mean", EXIT_USAGE) from None
    if not mean_ms > 0:
        raise OpsError(f"{what}: {value} reports no successful request", EXIT_USAGE)
    return mean_ms / 1000.0
