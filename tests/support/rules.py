"""Which of the library's rules (its ``raise PoolConfigError`` statements) a bad-input corpus reaches.

A corpus is a list of cases that each build something invalid. :func:`unreached_rules` runs every
case, notes the ``raise`` statement each error came from (the innermost frame in the library)
and returns the raise statements of the given modules that no case reached: a rule added to the
library without a case fails the corpus's test, and so does a case that stops reaching its rule.
"""

from __future__ import annotations

import ast
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path

import aws_cdk as cdk

import sagemaker_pools
from sagemaker_pools import PoolConfigError

__all__ = ["LIBRARY", "raise_sites", "reached_site", "unreached_rules", "refused_in_new_stack"]

LIBRARY = Path(sagemaker_pools.__file__).resolve().parent


def raise_sites(module: str) -> dict[int, str]:
    """``{line: "module:function: field expression"}`` of every ``raise PoolConfigError(...)`` in ``module``
    (a path relative to the package), by every line the statement spans."""
    source = (LIBRARY / module).read_text()
    sites: dict[int, str] = {}

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None
            inner = f"{function}.{name}" if name and function else (name or function)
            if (
                isinstance(child, ast.Raise)
                and isinstance(child.exc, ast.Call)
                and isinstance(child.exc.func, ast.Name)
                and child.exc.func.id == "PoolConfigError"
            ):
                label = f"{module}:{function}: {ast.unparse(child.exc.args[0]) if child.exc.args else '?'}"
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    sites[line] = label
            visit(child, inner)

    visit(ast.parse(source), "")
    return sites


def reached_site(error: PoolConfigError) -> tuple[str, int]:
    """``(module, line)`` of the library statement that raised ``error``."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = Path(frame.filename).resolve()
        if path.is_relative_to(LIBRARY):
            return str(path.relative_to(LIBRARY)), frame.lineno or 0
    raise AssertionError(f"{error!r} was not raised by the library")


def unreached_rules(builders: Iterable[Callable[[cdk.Stack], object]], modules: Iterable[str]) -> set[str]:
    """The raise statements of ``modules`` that none of ``builders`` reaches (each runs in a fresh stack)."""
    reached: set[str] = set()
    for build in builders:
        try:
            build(cdk.Stack(cdk.App(), "Rules"))
        except PoolConfigError as error:
            module, line = reached_site(error)
            reached.add(raise_sites(module).get(line, f"{module}:{line}"))
    return {site for module in modules for site in set(raise_sites(module).values())} - reached


def refused_in_new_stack(build: Callable[[cdk.Stack], object], field: str, allowed: str) -> cdk.Stack:
    """Run a corpus case in a new stack: it must raise ``PoolConfigError`` naming ``field`` (in the
    message and the error's field) and saying ``allowed``. Returns the stack, for checks of what was left."""
    from support.synth import new_stack

    stack = new_stack()
    try:
        build(stack)
    except PoolConfigError as error:
        message = str(error)
        assert field in message and field in error.field, message
        assert allowed in message and "allowed:" in message, message
        return stack
    raise AssertionError(f"no PoolConfigError for {field}")
