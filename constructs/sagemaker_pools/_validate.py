"""Small shared checks for construct props (CDK-aware: durations and tokens)."""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping

from aws_cdk import Duration

from ._tokens import is_unresolved
from .errors import PoolConfigError

__all__ = [
    "check_name",
    "check_int_range",
    "check_min_max",
    "check_tags",
    "check_environment",
    "check_s3_prefix",
    "seconds_in_range",
    "seconds_of",
    "concrete_seconds",
    "duration_facts",
    "NAME_PATTERN",
]

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
    unresolved, seconds = duration_facts(value)
    # int() of the number token would make it a plain (huge, negative) number: CloudFormation would
    # receive that instead of the parameter.
    return seconds if unresolved else int(seconds)  # type: ignore[return-value]


def concrete_seconds(value: Duration, field: str, why: str) -> int:
    """``value`` in whole seconds where the library computes with it: a token duration is refused.

    ``why`` says what the duration becomes (a threshold in microseconds, a number of evaluation
    periods ...): something a ``CfnParameter`` cannot be turned into at synth time.
    """
    unresolved, seconds = duration_facts(value)
    if unresolved:
        raise PoolConfigError(
            field, "a duration from a deploy-time parameter (a CDK token)", f"a concrete duration, e.g. Duration.minutes(5): {why}"
        )
    return int(seconds)


def seconds_in_range(value: Duration | None, field: str, low: int, high: int) -> int | None:
    """``value`` in whole seconds, checked against ``[low, high]`` seconds; None stays None."""
    if value is None:
        return None
    if not isinstance(value, Duration):
        raise PoolConfigError(field, value, f"an aws_cdk.Duration from {low} to {high} seconds")
    unresolved, seconds = duration_facts(value)
    if unresolved:
        # The number token as CDK encodes it: int() would make it a plain (huge, negative)
        # number that is_unresolved no longer recognizes, and that later checks compare.
        return seconds  # type: ignore[return-value]
    if seconds != int(seconds) or not low <= seconds <= high:
        raise PoolConfigError(field, f"{seconds} seconds", f"a whole number of seconds from {low} to {high}")
    return int(seconds)


def check_min_max(low: object, high: object, field: str, low_name: str, high_name: str) -> None:
    """Raise when the lower bound ``low`` is above the upper bound ``high`` (tokens pass), naming both."""
    if any(v is None or is_unresolved(v) for v in (low, high)):
        return
    if isinstance(low, (int, float)) and isinstance(high, (int, float)) and low > high:
        raise PoolConfigError(f"{field}.{low_name}", low, f"at most {high_name} ({high}): the minimum cannot exceed the maximum")


#: Tag rules (SageMaker ``Tag``: key 1-128 characters, value 0-256; the ``aws:`` prefix is AWS's own).
MAX_TAG_KEY_LENGTH = 128
MAX_TAG_VALUE_LENGTH = 256


def check_tags(tags: object, field: str) -> None:
    """Raise unless ``tags`` is None or a mapping of user tags: keys 1-128 characters not starting with ``aws:``."""
    if tags is None or is_unresolved(tags):
        return
    if not isinstance(tags, Mapping):
        raise PoolConfigError(field, tags, "a mapping of tag keys to values")
    for key, value in tags.items():
        if is_unresolved(key):
            continue
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_TAG_KEY_LENGTH:
            raise PoolConfigError(f"{field}[{key!r}]", key, f"a tag key of 1 to {MAX_TAG_KEY_LENGTH} characters")
        if key.lower().startswith("aws:"):
            raise PoolConfigError(f"{field}[{key!r}]", key, "a tag key that does not start with 'aws:' (reserved for AWS's own tags)")
        if not is_unresolved(value) and (not isinstance(value, str) or len(value) > MAX_TAG_VALUE_LENGTH):
            raise PoolConfigError(f"{field}[{key!r}]", value, f"a string of at most {MAX_TAG_VALUE_LENGTH} characters")


#: Container environment rules (CreateModel ``ContainerDefinition.Environment``, botocore ``EnvironmentMap``).
ENVIRONMENT_KEY = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
MAX_ENVIRONMENT_ENTRIES = 100
MAX_ENVIRONMENT_KEY_LENGTH = 1024
MAX_ENVIRONMENT_VALUE_LENGTH = 1024


def check_environment(environment: object, field: str) -> None:
    """Raise unless ``environment`` is None or what SageMaker accepts as a container environment.

    At most 100 entries; keys match ``[a-zA-Z_][a-zA-Z0-9_]*`` and have at most 1,024
    characters; values are strings of at most 1,024 characters (tokens pass).
    """
    if environment is None or is_unresolved(environment):
        return
    if not isinstance(environment, Mapping):
        raise PoolConfigError(field, environment, "a mapping of environment variable names to string values")
    if len(environment) > MAX_ENVIRONMENT_ENTRIES:
        raise PoolConfigError(field, environment, f"at most {MAX_ENVIRONMENT_ENTRIES} variables (got {len(environment)})")
    for key, value in environment.items():
        if not is_unresolved(key):
            if not isinstance(key, str) or not ENVIRONMENT_KEY.match(key):
                raise PoolConfigError(f"{field}[{key!r}]", key, "a name matching [a-zA-Z_][a-zA-Z0-9_]* (letters, digits, underscores; not starting with a digit)")
            if len(key) > MAX_ENVIRONMENT_KEY_LENGTH:
                raise PoolConfigError(f"{field}[{key[:20]!r}...]", key, f"a name of at most {MAX_ENVIRONMENT_KEY_LENGTH} characters")
        if not is_unresolved(value) and (not isinstance(value, str) or len(value) > MAX_ENVIRONMENT_VALUE_LENGTH):
            raise PoolConfigError(f"{field}[{key!r}]", value, f"a string of at most {MAX_ENVIRONMENT_VALUE_LENGTH} characters")


def check_s3_prefix(prefix: object, field: str, max_length: int, example: str) -> None:
    """Raise unless ``prefix`` is an S3 key prefix a grant can end in ``*`` (tokens pass).

    It ends in ``/``, does not start with ``/``, has no ``//``, ``*`` or ``?`` (a wildcard inside
    would widen the grant) and has at most ``max_length`` characters (what is left of an S3 URI
    field once ``s3://<bucket>/`` is counted).
    """
    if is_unresolved(prefix):
        return
    if (
        not isinstance(prefix, str)
        or not prefix.endswith("/")
        or prefix.startswith("/")
        or "//" in prefix
        or len(prefix) > max_length
        or any(c in prefix for c in "*?")
    ):
        raise PoolConfigError(
            field,
            prefix,
            f"an S3 key prefix ending in '/', not starting with '/', without '//', '*' or '?', "
            f"at most {max_length} characters (e.g. {example!r})",
        )
