"""One evaluator of the CloudWatch metric-math subset that alarms and scaling policies use, at one timestamp.

It reads a *synthesized* query list (``CustomizedMetricSpecification.Metrics`` of a scaling
policy, ``Metrics`` of an alarm) and evaluates the query with ``ReturnData: true``: the tests use
it to check the value CloudWatch would compute, not the Python objects that produced the
template, and ``sagemaker-pools simulate`` uses it to replay a template's own policies minute by
minute (:func:`compile_queries` parses once and evaluates many times). Pure Python: no aws_cdk.

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

__all__ = ["MetricMathError", "evaluate", "compile_queries", "check_queries", "Series", "Scalar", "DataSource"]

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


#: The value of one ``MetricStat`` (as written in the template) at the evaluated timestamp, or ``None``.
DataSource = Callable[[Mapping[str, Any]], "float | None"]
_Node = Callable[[DataSource], Any]


class _Parser:
    """Recursive descent over the token list; builds a tree of closures, evaluated later."""

    def __init__(self, text: str, lookup: Callable[[str], _Node]) -> None:
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

    def parse(self) -> _Node:
        node = self.logical_or()
        if self.pos != len(self.tokens):
            raise MetricMathError(f"unexpected {self.peek()!r} in {self.text!r}")
        return node

    # precedence: OR < AND < comparison < additive < multiplicative < unary < power < primary
    def logical_or(self) -> _Node:
        left = self.logical_and()
        while self.peek() in ("OR", "||"):
            self.take()
            left = _binary_node(left, self.logical_and(), lambda a, b: float(bool(a) or bool(b)))
        return left

    def logical_and(self) -> _Node:
        left = self.comparison()
        while self.peek() in ("AND", "&&"):
            self.take()
            left = _binary_node(left, self.comparison(), lambda a, b: float(bool(a) and bool(b)))
        return left

    _COMPARE: Mapping[str, Callable[[float, float], bool]] = {
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
        "<=": lambda a, b: a <= b,
        ">=": lambda a, b: a >= b,
        "<": lambda a, b: a < b,
        ">": lambda a, b: a > b,
    }

    def comparison(self) -> _Node:
        left = self.additive()
        while self.peek() in self._COMPARE:
            compare = self._COMPARE[self.take()[1]]
            left = _binary_node(left, self.additive(), lambda a, b, c=compare: float(c(a, b)))  # type: ignore[misc]
        return left

    def additive(self) -> _Node:
        left = self.multiplicative()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            left = _binary_node(left, self.multiplicative(), (lambda a, b: a + b) if op == "+" else (lambda a, b: a - b))
        return left

    def multiplicative(self) -> _Node:
        left = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()[1]
            left = _binary_node(left, self.unary(), (lambda a, b: a * b) if op == "*" else _divide)
        return left

    def unary(self) -> _Node:
        if self.peek() == "-":
            self.take()
            minus_one = Scalar(-1.0)
            return _binary_node(lambda _d: minus_one, self.unary(), lambda a, b: a * b)
        return self.power()

    def power(self) -> _Node:
        base = self.primary()
        if self.peek() == "^":
            self.take()
            return _binary_node(base, self.unary(), lambda a, b: a**b)
        return base

    def primary(self) -> _Node:
        kind, text = self.take()
        if kind == "num":
            constant = Scalar(float(text))
            return lambda _d: constant
        if text == "(":
            node = self.logical_or()
            self.take(")")
            return node
        if text == "[":
            items = [self.logical_or()]
            while self.peek() == ",":
                self.take()
                items.append(self.logical_or())
            self.take("]")
            return lambda d: _Array(tuple(item(d) for item in items))
        if kind == "name" and self.peek() == "(":
            return self.call(text)
        if kind == "name" and ID.match(text):
            return self.lookup(text)
        raise MetricMathError(f"unexpected {text!r} in {self.text!r}")

    def call(self, function: str) -> _Node:
        self.take("(")
        args = [self.logical_or()]
        while self.peek() == ",":
            self.take()
            args.append(self.logical_or())
        self.take(")")
        if function == "FILL" and len(args) == 2:
            return lambda d: _fill(args[0](d), args[1](d), self.text)
        if function == "IF" and len(args) in (2, 3):
            return lambda d: _if(*(arg(d) for arg in args))
        if function in ("MAX", "MIN", "SUM", "AVG") and len(args) == 1:
            return lambda d: _aggregate(function, args[0](d))
        raise MetricMathError(f"unsupported call {function}({len(args)} arguments) in {self.text!r}")


def _fill(series: Any, fill: Any, text: str) -> Value:
    if not isinstance(fill, Scalar):
        raise MetricMathError(f"FILL needs a number as its second argument in {text!r}")
    if isinstance(series, Scalar):
        return series
    return Series(fill.value if series.value is None else series.value)


def _binary_node(left: _Node, right: _Node, op: Callable[[float, float], float | None]) -> _Node:
    return lambda d: _binary(left(d), right(d), op)


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


def compile_queries(queries: Sequence[Mapping[str, Any]]) -> Callable[[DataSource], float | None]:
    """Parse ``queries`` once; the result evaluates them at one timestamp for a given data source.

    The returned function gives the value of the query with ``ReturnData: true`` (``None``: no
    data point); each query is evaluated at most once per call.

    Raises:
        MetricMathError: the queries break CloudWatch's alarm rules (:func:`check_queries`) or use
            something outside the supported subset (reported here, not at evaluation).
    """
    check_queries(queries)
    by_id = {q["Id"]: q for q in queries}
    compiled: dict[str, _Node] = {}
    active: set[str] = set()
    # One evaluation's values by id; reset at each call (an id read twice is computed once).
    memo: dict[str, Value] = {}

    def compile_id(ident: str) -> _Node:
        if ident in compiled:
            return compiled[ident]
        if ident not in by_id:
            raise MetricMathError(f"unknown id {ident!r}")
        if ident in active:
            raise MetricMathError(f"{ident!r} refers to itself")
        active.add(ident)
        query = by_id[ident]
        if "MetricStat" in query:
            stat = query["MetricStat"]

            def raw(data: DataSource) -> Value:
                return Series(data(stat))

            inner: _Node = raw
        else:
            inner = _Parser(query["Expression"], compile_id).parse()
        active.discard(ident)

        def node(data: DataSource) -> Any:
            if ident not in memo:
                value = inner(data)
                if isinstance(value, _Array):
                    raise MetricMathError(f"{ident}: an array of time series is not a single time series")
                memo[ident] = value
            return memo[ident]

        compiled[ident] = node
        return node

    (top,) = [q["Id"] for q in queries if q.get("ReturnData", True) in (True, "true")]
    root = compile_id(top)

    def run(data: DataSource) -> float | None:
        memo.clear()
        result: Value = root(data)
        return result.value

    return run


def evaluate(queries: Sequence[Mapping[str, Any]], data: DataSource) -> float | None:
    """The value of the query with ``ReturnData: true`` at one timestamp (``None``: no data point).

    Args:
        queries: the synthesized query list (see :func:`check_queries`).
        data: the value of one ``MetricStat`` (as in the template) at that timestamp, or ``None``.
    """
    return compile_queries(queries)(data)
