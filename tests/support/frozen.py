"""Read-only views for the fixtures tests share (module or session scope).

A shared fixture is computed once and handed to many tests; a test that edits it in place makes
the tests after it see a different value, so their result depends on the order they run in.
:func:`frozen` turns nested dicts and lists into subclasses that refuse every in-place change
(equality, iteration, ``json.dumps`` and ``isinstance(x, dict)`` are unchanged), and
``copy.deepcopy`` of one is an ordinary, editable copy: the way to derive a variant.
tests/conftest.py fails any shared fixture whose dicts or lists are not frozen.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "frozen", "is_frozen"]


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"this {type(self).__name__} comes from a shared fixture and is read-only: edit a copy.deepcopy() of it")


class FrozenDict(dict):  # type: ignore[type-arg]
    """A dict that refuses in-place changes."""

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in self.items()}

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
    """A list that refuses in-place changes."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]

    def __copy__(self) -> list[Any]:
        return list(self)

    def __reduce__(self) -> Any:
        return (list, (list(self),))


def frozen(value: Any) -> Any:
    """``value`` with every dict and list in it (through tuples too) made read-only."""
    if isinstance(value, dict):
        return FrozenDict({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return FrozenList(frozen(v) for v in value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(frozen(v) for v in value)
    return value


def is_frozen(value: Any) -> bool:
    """True when no dict or list reachable from ``value`` (through dicts, lists and tuples) is editable."""
    if isinstance(value, dict):
        return isinstance(value, FrozenDict) and all(is_frozen(v) for v in value.values())
    if isinstance(value, list):
        return isinstance(value, FrozenList) and all(is_frozen(v) for v in value)
    if isinstance(value, tuple):
        return all(is_frozen(v) for v in value)
    return True
