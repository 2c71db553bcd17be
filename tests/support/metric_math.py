"""A small evaluator of the CloudWatch metric-math subset this library emits, at one timestamp.

It reads the *synthesized* query list (``CustomizedMetricSpecification.Metrics`` of a scaling
policy, ``Metrics`` of an alarm) and evaluates the query with ``ReturnData: true``, so tests check
the value CloudWatch would compute, not the Python objects that produced the template.

Semantics follow the CloudWatch user guide ("Using metric math"), for one timestamp:

* a time series (TS) value is a float or ``None`` (no data point); a scalar (S) is a float;
* TS op TS: a missing point is treated as 0, unless both are missing (then no point);
  TS op S: a missing point stays missing; a division by zero drops the point;
* comparisons give 1 or 0 (same missing rules); ``AND``/``&&``, ``OR``/``||``;
* ``FILL(ts, s)`` fills a missing point with ``s``;
* ``IF(cond, a, b)``: cond missing -> missing; true -> ``a`` (a missing TS point reads 0);
  false -> ``b`` (a missing TS point, or no ``b``, drops the point);
* ``MAX``/``MIN``/``SUM``/``AVG`` of an array ``[...]``: per timestamp, missing values as 0
  (no point when every element is missing); of a single TS: its value;
* ``^`` (power), unary minus, parentheses.

Anything else (SEARCH, METRICS(), other functions) raises :class:`MetricMathError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MetricMathError", "evaluate", "check_queries", "Series", "Scalar"]

ID = re.compile(r"^[a-z][A-Za-z0-9_]*$")


class MetricMathError(ValueError):
    """An expression or query list outside the supported subset, or invalid for CloudWatch."""


@dataclass(frozen=True)
class Series:
    """One time series at the evaluated timestamp: a value or ``None`` (no data point)."""

    value: float | None


@dataclass(frozen=True)
class Scalar:
    """A scalar number."""

    value: float


Value = Series | Scalar


@dataclass(frozen=True)
class _Array:
    items: tuple[Value, ...]


_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[-+*/^(),\[\]<>]))"
)


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise MetricMathError(f"cannot read {text[pos:]!r} in {text!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


class _Parser:
    """Recursive descent over the token list; evaluates as it parses."""

    def __init__(self, text: str, lookup: Callable[[str], Value]) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0
        self.lookup = lookup

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise MetricMathError(f"unexpected end of {self.text!r}")
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise MetricMathError(f"expected {expected!r}, got {token[1]!r} in {self.text!r}")
        self.pos += 1
        return token

    def parse(self) -> Value | _Array:
        value = self.logical_or()
        if self.pos != len(self.tokens):
            raise MetricMathError(f"unexpected {self.peek()!r} in {self.text!r}")
        return value

    # precedence: OR < AND < comparison < additive < multiplicative < unary < power < primary
    def logical_or(self) -> Any:
        left = self.logical_and()
        while self.peek() in ("OR", "||"):
            self.take()
            left = _binary(left, self.logical_and(), lambda a, b: float(bool(a) or bool(b)))
        return left

    def logical_and(self) -> Any:
        left = self.comparison()
        while self.peek() in ("AND", "&&"):
            self.take()
            left = _binary(left, self.comparison(), lambda a, b: float(bool(a) and bool(b)))
        return left

    _COMPARE: Mapping[str, Callable[[float, float], bool]] = {
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
        "<=": lambda a, b: a <= b,
        ">=": lambda a, b: a >= b,
        "<": lambda a, b: a < b,
        ">": lambda a, b: a > b,
    }

    def comparison(self) -> Any:
        left = self.additive()
        while self.peek() in self._COMPARE:
            compare = self._COMPARE[self.take()[1]]
            left = _binary(left, self.additive(), lambda a, b, c=compare: float(c(a, b)))  # type: ignore[misc]
        return left

    def additive(self) -> Any:
        left = self.multiplicative()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            left = _binary(left, self.multiplicative(), (lambda a, b: a + b) if op == "+" else (lambda a, b: a - b))
        return left

    def multiplicative(self) -> Any:
        left = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()[1]
            left = _binary(left, self.unary(), (lambda a, b: a * b) if op == "*" else _divide)
        return left

    def unary(self) -> Any:
        if self.peek() == "-":
            self.take()
            return _binary(Scalar(-1.0), self.unary(), lambda a, b: a * b)
        return self.power()

    def power(self) -> Any:
        base = self.primary()
        if self.peek() == "^":
            self.take()
            return _binary(base, self.unary(), lambda a, b: a**b)
        return base

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "num":
            return Scalar(float(text))
        if text == "(":
            value = self.logical_or()
            self.take(")")
            return value
        if text == "[":
            items = [self.logical_or()]
            while self.peek() == ",":
                self.take()
                items.append(self.logical_or())
            self.take("]")
            return _Array(tuple(items))
        if kind == "name" and self.peek() == "(":
            return self.call(text)
        if kind == "name" and ID.match(text):
            return self.lookup(text)
        raise MetricMathError(f"unexpected {text!r} in {self.text!r}")

    def call(self, function: str) -> Any:
        self.take("(")
        args = [self.logical_or()]
        while self.peek() == ",":
            self.take()
            args.append(self.logical_or())
        self.take(")")
        if function == "FILL" and len(args) == 2 and isinstance(args[1], Scalar):
            (series, fill) = args
            if isinstance(series, Scalar):
                return series
            return Series(fill.value if series.value is None else series.value)
        if function == "IF" and len(args) in (2, 3):
            return _if(*args)
        if function in ("MAX", "MIN", "SUM", "AVG") and len(args) == 1:
            return _aggregate(function, args[0])
        raise MetricMathError(f"unsupported call {function}({len(args)} arguments) in {self.text!r}")


def _divide(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


def _binary(left: Any, right: Any, op: Callable[[float, float], float | None]) -> Value:
    if isinstance(left, _Array) or isinstance(right, _Array):
        raise MetricMathError("arithmetic on arrays is outside the supported subset")
    if isinstance(left, Scalar) and isinstance(right, Scalar):
        result = op(left.value, right.value)
        if result is None:
            raise MetricMathError("division of a scalar by zero")
        return Scalar(result)
    if isinstance(left, Series) and isinstance(right, Series):
        if left.value is None and right.value is None:
            return Series(None)
        return Series(op(left.value or 0.0, right.value or 0.0))
    series, _ = (left, right) if isinstance(left, Series) else (right, left)
    if series.value is None:
        return Series(None)
    a = left.value if isinstance(left, Scalar) else left.value
    b = right.value if isinstance(right, Scalar) else right.value
    return Series(op(a, b))  # type: ignore[arg-type]


def _if(condition: Value, when_true: Value, when_false: Value | None = None) -> Value:
    if condition.value is None:
        return Series(None)
    if condition.value != 0:
        if isinstance(when_true, Series) and when_true.value is None:
            return Series(0.0)
        return Series(when_true.value)
    if when_false is None:
        return Series(None)
    return Series(when_false.value)


def _aggregate(function: str, arg: Any) -> Value:
    if isinstance(arg, (Series, Scalar)):
        return arg  # MAX(ts) is a scalar over time; at one timestamp it is the value itself
    values = [item.value for item in arg.items]
    if all(v is None for v in values):
        return Series(None)
    filled = [v or 0.0 for v in values]
    if function == "MAX":
        return Series(max(filled))
    if function == "MIN":
        return Series(min(filled))
    if function == "SUM":
        return Series(sum(filled))
    return Series(sum(filled) / len(filled))


def check_queries(queries: Sequence[Mapping[str, Any]]) -> None:
    """Raise :class:`MetricMathError` unless ``queries`` obey CloudWatch's alarm rules.

    Unique valid ids; each query exactly one of Expression / MetricStat; exactly one
    ``ReturnData: true``; at most 10 metrics and 10 expressions; no SEARCH.
    """
    ids = [q.get("Id") for q in queries]
    if len(set(ids)) != len(ids):
        raise MetricMathError(f"duplicate ids: {ids}")
    for q in queries:
        if not isinstance(q.get("Id"), str) or not ID.match(q["Id"]):
            raise MetricMathError(f"invalid id {q.get('Id')!r}")
        if ("Expression" in q) == ("MetricStat" in q):
            raise MetricMathError(f"{q['Id']}: exactly one of Expression and MetricStat")
        if "SEARCH" in q.get("Expression", "").upper():
            raise MetricMathError(f"{q['Id']}: SEARCH is not allowed in alarms and scaling policies")
    returned = [q["Id"] for q in queries if q.get("ReturnData", True) in (True, "true")]
    if len(returned) != 1:
        raise MetricMathError(f"exactly one query must return data, got {returned}")
    stats = sum(1 for q in queries if "MetricStat" in q)
    expressions = sum(1 for q in queries if "Expression" in q)
    if stats > 10 or expressions > 10:
        raise MetricMathError(f"{stats} metrics and {expressions} expressions: at most 10 of each")


def evaluate(
    queries: Sequence[Mapping[str, Any]], data: Callable[[Mapping[str, Any]], float | None]
) -> float | None:
    """The value of the query with ``ReturnData: true`` at one timestamp (``None``: no data point).

    Args:
        queries: the synthesized query list (after :func:`check_queries` passes).
        data: the value of one ``MetricStat`` (as in the template) at that timestamp, or ``None``.
    """
    check_queries(queries)
    by_id = {q["Id"]: q for q in queries}
    cache: dict[str, Value] = {}
    active: set[str] = set()

    def lookup(ident: str) -> Value:
        if ident in cache:
            return cache[ident]
        if ident not in by_id:
            raise MetricMathError(f"unknown id {ident!r}")
        if ident in active:
            raise MetricMathError(f"{ident!r} refers to itself")
        active.add(ident)
        query = by_id[ident]
        if "MetricStat" in query:
            value: Any = Series(data(query["MetricStat"]))
        else:
            value = _Parser(query["Expression"], lookup).parse()
            if isinstance(value, _Array):
                raise MetricMathError(f"{ident}: an array of time series is not a single time series")
        active.discard(ident)
        cache[ident] = value
        return value  # type: ignore[no-any-return]

    (top,) = [q["Id"] for q in queries if q.get("ReturnData", True) in (True, "true")]
    result = lookup(top)
    return result.value
