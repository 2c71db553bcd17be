"""The one error type of this library.

Every rule that a configuration can break raises :class:`PoolConfigError` at construction
time, so a bad value fails where the user wrote it, not deep inside CDK's lazy rendering
("Resolution error: Resolution error: ...") or, worse, half-way through a CloudFormation
deployment.
"""

from __future__ import annotations

__all__ = ["PoolConfigError"]


class PoolConfigError(ValueError):
    """A configuration value that cannot work.

    The message always names the field, the value given and what is allowed, e.g.
    ``InstancePool.priority: got 7; allowed: an integer from 1 to 5 (1 = highest)``.

    Attributes:
        field: the property path, e.g. ``"PooledEndpoint.pools[2].instance_type"``.
        value: the offending value as given.
        allowed: a human-readable description of what would be accepted.
    """

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field}: got {_quote(value)}; allowed: {allowed}")


#: The most characters of a bad value a message quotes (a 101-entry environment is not echoed whole).
MAX_QUOTED_CHARACTERS = 200


def _quote(value: object) -> str:
    """``repr(value)``, cut to :data:`MAX_QUOTED_CHARACTERS` with an ellipsis and the count left out."""
    text = repr(value)
    if len(text) <= MAX_QUOTED_CHARACTERS:
        return text
    return f"{text[:MAX_QUOTED_CHARACTERS]}... ({len(text) - MAX_QUOTED_CHARACTERS} more characters)"
