"""pytest hooks for ``make mutate``: a shared fixture's reach counts for every test that uses it.

mutmut runs, per mutant, only the tests that reached the mutated function in its stats run, and
it credits a function to the test during which it ran. A module- or session-scoped fixture is
built during the first test that asks for it, so the functions it calls were credited to that
test alone; the other tests reading the same fixture (a synthesized template, say) never ran
against those functions' mutants, and whatever only they check was not checked.
``tools/mutate.py`` puts this module into the staging copy's ``tests/support/`` and imports its
hooks in the staged ``tests/conftest.py``. During mutmut's stats run they record what each
shared fixture reached and credit it to every test that uses the fixture; otherwise they do
nothing. They read mutmut's ``state()._stats`` (the functions reached during the current test),
so they follow mutmut 3's internals.
"""

import os
from collections.abc import Generator
from typing import Any

import pytest

#: ``(fixture name, baseid) -> the functions its setup reached``.
_REACH: dict[tuple[str, str], set[str]] = {}


def _stats() -> Any:
    from mutmut.state import state

    return state()._stats


def _collecting() -> bool:
    return os.environ.get("MUTANT_UNDER_TEST") == "stats"


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Generator[None, Any, Any]:
    """Record the functions a shared fixture's setup reaches."""
    if not _collecting() or fixturedef.scope == "function":
        return (yield)
    stats = _stats()
    before = set(stats)
    stats.clear()
    try:
        return (yield)
    finally:
        _REACH.setdefault((fixturedef.argname, fixturedef.baseid), set()).update(stats)  # (every param's)
        stats.update(before)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: Any, nextitem: Any) -> None:
    """Credit the test with what the shared fixtures it uses reached (before mutmut reads it)."""
    if not _collecting():
        return
    closure = item._fixtureinfo.name2fixturedefs
    for name in item.fixturenames:
        for fixturedef in closure.get(name, ()):
            _stats().update(_REACH.get((name, fixturedef.baseid), ()))
