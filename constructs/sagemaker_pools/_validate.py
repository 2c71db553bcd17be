"""Small shared checks for construct props (CDK-aware: durations and tokens)."""

from __future__ import annotations

import re
import weakref

from aws_cdk import Duration

from ._tokens import is_unresolved
from .errors import PoolConfigError

__all__ = ["check_name", "check_int_range", "seconds_in_range", "seconds_of", "duration_facts", "NAME_PATTERN"]

#: SageMaker's name rule for endpoints, configs, variants, models and inference components:
#: 1-63 characters, alphanumeric at both ends, hyphens inside.
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")


def check_name(value: str | None, field: str) -> None:
    """Raise unless ``value`` is a valid SageMaker resource name (or None, or a token)."""
    if value is None or is_unresolved(value):
        return
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise PoolConfigError(
            field, value, "1-63 characters: letters, digits and hyphens, starting and ending with a letter or digit"
        )


def check_int_range(value: object, field: str, low: int, high: int | None, unit: str = "") -> None:
    """Raise unless ``value`` is an integer in ``[low, high]`` (None and tokens pass)."""
    if value is None or is_unresolved(value):
        return
    in_range = isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)
    if not in_range:
        upper = f" to {high}" if high is not None else " or more"
        raise PoolConfigError(field, value, f"an integer from {low}{upper}{(' ' + unit) if unit else ''}")


#: What a Duration is, asked of Node once per Duration object: (is a token, seconds).
_DURATIONS: weakref.WeakKeyDictionary[Duration, tuple[bool, float]] = weakref.WeakKeyDictionary()


def duration_facts(value: Duration) -> tuple[bool, float]:
    """``(is a token, seconds)`` of ``value``, asked of Node once per Duration object.

    One round trip: a token duration converts to its number token (a float near -1.9e289),
    which :func:`is_unresolved` recognizes in Python.
    """
    facts = _DURATIONS.get(value)
    if facts is None:
        seconds = value.to_seconds(integral=False)
        facts = (is_unresolved(seconds), seconds)
        _DURATIONS[value] = facts
    return facts


def seconds_of(value: Duration) -> int:
    """``value`` in whole seconds (a token duration as its number token), asking Node once per object."""
    return int(duration_facts(value)[1])


def seconds_in_range(value: Duration | None, field: str, low: int, high: int) -> int | None:
    """``value`` in whole seconds, checked against ``[low, high]`` seconds; None stays None."""
    if value is None:
        return None
    if not isinstance(value, Duration):
        raise PoolConfigError(field, value, f"an aws_cdk.Duration from {low} to {high} seconds")
    unresolved, seconds = duration_facts(value)
    if unresolved:
        return int(seconds)
    if seconds != int(seconds) or not low <= seconds <= high:
        raise PoolConfigError(field, f"{seconds} seconds", f"a whole number of seconds from {low} to {high}")
    return int(seconds)
