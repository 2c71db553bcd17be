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
* ``FLOOR(x)``, ``CEIL(x)``: rounded value by value (a missing point stays missing);
* ``IF(cond, a, b)``: cond missing -> missing; true -> ``a`` (a missing TS point reads 0);
  false -> ``b`` (a missing TS point, or no ``b``, drops the point);
* ``MAX``/``MIN``/``SUM``/``AVG`` of an array ``[...]``: per timestamp, missing values as 0
  (no point when every element is missing); of a single TS: its value;
* ``^`` (power), unary minus, parentheses.

Anything else (SEARCH, METRICS(), other functions) raises :class:`MetricMathError`.

Whether a sub-expression is a scalar, a time series or an array is known when it is parsed, so
:func:`compile_queries` turns the queries into closures specialized for those kinds once (a
scalar sub-expression is folded to a constant); evaluating them then costs a few function calls
per operator.
"""

from __future__ import annotations

import math

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["MetricMathError", "evaluate", "compile_queries", "check_queries", "query_signature", "DataSource"]

ID = re.compile(r"^[a-z][A-Za-z0-9_]*$")


class MetricMathError(ValueError):
    """An expression or query list outside the supported subset, or invalid for CloudWatch."""


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
_SeriesFn = Callable[[DataSource], "float | None"]

SCALAR, SERIES, ARRAY = "scalar", "series", "array"


@dataclass(frozen=True)
class _Node:
    """A compiled sub-expression: a constant scalar, a time series, or an array of them."""

    kind: str
    constant: float = 0.0
    series: _SeriesFn | None = None
    items: tuple["_Node", ...] = ()
    #: For a sum of time series ``a + b + ...`` (left to right): the terms, so that one more ``+``
    #: extends the sum instead of wrapping it in another closure.
    terms: tuple[_SeriesFn, ...] = ()

    def as_series(self) -> _SeriesFn:
        """A function giving this node's value as a time-series point."""
        if self.kind == SERIES:
            assert self.series is not None
            return self.series
        if self.kind == SCALAR:
            value = self.constant
            return lambda _d: value
        raise MetricMathError("an array where a single value is expected")


def _scalar(value: float) -> _Node:
    return _Node(SCALAR, constant=value)


def _series(fn: _SeriesFn) -> _Node:
    return _Node(SERIES, series=fn)


class _Parser:
    """Recursive descent over the token list; compiles as it parses."""

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
            left = _binary(left, self.logical_and(), lambda a, b: float(bool(a) or bool(b)))
        return left

    def logical_and(self) -> _Node:
        left = self.comparison()
        while self.peek() in ("AND", "&&"):
            self.take()
            left = _binary(left, self.comparison(), lambda a, b: float(bool(a) and bool(b)))
        return left

    _COMPARE: Mapping[str, Callable[[float, float], float | None]] = {
        "==": lambda a, b: float(a == b),
        "!=": lambda a, b: float(a != b),
        "<=": lambda a, b: float(a <= b),
        ">=": lambda a, b: float(a >= b),
        "<": lambda a, b: float(a < b),
        ">": lambda a, b: float(a > b),
    }

    def comparison(self) -> _Node:
        left = self.additive()
        while self.peek() in self._COMPARE:
            compare = self._COMPARE[self.take()[1]]
            left = _binary(left, self.additive(), compare)
        return left

    def additive(self) -> _Node:
        left = self.multiplicative()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            left = _binary(left, self.multiplicative(), _add if op == "+" else _subtract)
        return left

    def multiplicative(self) -> _Node:
        left = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()[1]
            left = _binary(left, self.unary(), _multiply if op == "*" else _divide)
        return left

    def unary(self) -> _Node:
        if self.peek() == "-":
            self.take()
            return _binary(_scalar(-1.0), self.unary(), _multiply)
        return self.power()

    def power(self) -> _Node:
        base = self.primary()
        if self.peek() == "^":
            self.take()
            return _binary(base, self.unary(), lambda a, b: float(a**b))
        return base

    def primary(self) -> _Node:
        kind, text = self.take()
        if kind == "num":
            return _scalar(float(text))
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
            if any(item.kind == ARRAY for item in items):
                raise MetricMathError(f"nested arrays in {self.text!r}")
            return _Node(ARRAY, items=tuple(items))
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
        if function == "FILL" and len(args) == 2 and args[1].kind == SCALAR and args[0].kind != ARRAY:
            return _fill(args[0], args[1].constant)
        if function == "IF" and len(args) in (2, 3) and all(a.kind != ARRAY for a in args):
            return _if(*args)
        if function in ("MAX", "MIN", "SUM", "AVG") and len(args) == 1:
            return _aggregate(function, args[0])
        if function in _ROUNDING and len(args) == 1 and args[0].kind != ARRAY:
            return _elementwise(args[0], _ROUNDING[function])
        raise MetricMathError(f"unsupported call {function}({len(args)} arguments) in {self.text!r}")


def _add(a: float, b: float) -> float | None:
    return a + b


def _subtract(a: float, b: float) -> float | None:
    return a - b


def _multiply(a: float, b: float) -> float | None:
    return a * b


def _divide(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


def _binary(left: _Node, right: _Node, op: Callable[[float, float], float | None]) -> _Node:
    if left.kind == ARRAY or right.kind == ARRAY:
        raise MetricMathError("arithmetic on arrays is outside the supported subset")
    if left.kind == SCALAR and right.kind == SCALAR:
        result = op(left.constant, right.constant)
        if result is None:
            raise MetricMathError("division of a scalar by zero")
        return _scalar(result)
    if left.kind == SERIES and right.kind == SERIES:
        lf, rf = left.as_series(), right.as_series()
        if op is _add:
            terms = (*(left.terms or (lf,)), rf)
            return _Node(SERIES, series=_sum_of(terms), terms=terms)
        if op is _multiply:
            return _series(_product(lf, rf))

        def both(d: DataSource) -> float | None:
            a, b = lf(d), rf(d)
            if a is None:
                return None if b is None else op(0.0, b)
            return op(a, 0.0 if b is None else b)

        return _series(both)
    if left.kind == SERIES:
        lf, constant = left.as_series(), right.constant
        if op is _divide and constant != 0:

            def divided(d: DataSource) -> float | None:  # the weighted signal's c_i / max_i
                a = lf(d)
                return None if a is None else a / constant

            return _series(divided)

        def series_scalar(d: DataSource) -> float | None:
            a = lf(d)
            return None if a is None else op(a, constant)

        return _series(series_scalar)
    rf, constant = right.as_series(), left.constant

    def scalar_series(d: DataSource) -> float | None:
        b = rf(d)
        return None if b is None else op(constant, b)

    return _series(scalar_series)


#: CloudWatch's element-wise rounding functions ("FLOOR", "CEIL"), value by value.
_ROUNDING: dict[str, Callable[[float], float]] = {"FLOOR": lambda v: float(math.floor(v)), "CEIL": lambda v: float(math.ceil(v))}


def _elementwise(node: _Node, fn: Callable[[float], float]) -> _Node:
    if node.kind == SCALAR:
        return _scalar(fn(node.constant))
    series = node.as_series()

    def apply(d: DataSource) -> float | None:
        value = series(d)
        return None if value is None else fn(value)

    return _series(apply)


def _sum_of(terms: tuple[_SeriesFn, ...]) -> _SeriesFn:
    """TS + TS + ... left to right in one closure (the hot path of weighted signals).

    The same operations as nesting ``both`` with ``_add``: the running total and each term, a
    missing one as 0, no point while both are missing.
    """
    first, rest = terms[0], terms[1:]

    def added(d: DataSource) -> float | None:
        total = first(d)
        for term in rest:
            b = term(d)
            if total is None:
                total = None if b is None else 0.0 + b
            else:
                total = total + (0.0 if b is None else b)
        return total

    return added


def _product(lf: _SeriesFn, rf: _SeriesFn) -> _SeriesFn:
    """TS * TS with the operator inlined: as ``both`` with ``_multiply``."""

    def multiplied(d: DataSource) -> float | None:
        a, b = lf(d), rf(d)
        if a is None:
            return None if b is None else 0.0 * b
        return a * (0.0 if b is None else b)

    return multiplied


def _fill(node: _Node, fill: float) -> _Node:
    if node.kind == SCALAR:
        return node
    fn = node.as_series()

    def filled(d: DataSource) -> float | None:
        value = fn(d)
        return fill if value is None else value

    return _series(filled)


def _if(condition: _Node, when_true: _Node, when_false: _Node | None = None) -> _Node:
    cf, tf = condition.as_series(), when_true.as_series()
    ff = when_false.as_series() if when_false is not None else None

    def choose(d: DataSource) -> float | None:
        c = cf(d)
        if c is None:
            return None
        if c != 0:
            value = tf(d)
            return 0.0 if value is None else value
        return None if ff is None else ff(d)

    return _series(choose)


_AGGREGATES: Mapping[str, Callable[[list[float]], float]] = {
    "MAX": max,
    "MIN": min,
    "SUM": sum,
    "AVG": lambda values: sum(values) / len(values),
}


def _aggregate(function: str, node: _Node) -> _Node:
    if node.kind != ARRAY:
        return node  # MAX(ts) is a scalar over time; at one timestamp it is the value itself
    fns = [item.as_series() for item in node.items]
    reduce = _AGGREGATES[function]

    def aggregate(d: DataSource) -> float | None:
        values = [fn(d) for fn in fns]
        present = [v for v in values if v is not None]
        if not present:
            return None
        if len(present) < len(values):
            values = [0.0 if v is None else v for v in values]
        return reduce(values)  # type: ignore[arg-type]

    return _series(aggregate)


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


_T = TypeVar("_T")


def _resolver(by_id: Mapping[str, Mapping[str, Any]], define: Callable[[str], _T]) -> Callable[[str], _T]:
    """``resolve(id)``: ``define(id)`` once per id, depth first (``define`` resolves the ids its query reads).

    Raises:
        MetricMathError: an id no query has, or a query that reads itself (directly or not).
    """
    done: dict[str, _T] = {}
    active: set[str] = set()

    def resolve(ident: str) -> _T:
        if ident in done:
            return done[ident]
        if ident not in by_id:
            raise MetricMathError(f"unknown id {ident!r}")
        if ident in active:
            raise MetricMathError(f"{ident!r} refers to itself")
        active.add(ident)
        value = define(ident)
        active.discard(ident)
        done[ident] = value
        return value

    return resolve


def query_signature(queries: Sequence[Mapping[str, Any]], leaf: Callable[[Mapping[str, Any]], str]) -> str:
    """A text equal for two query lists when they compute the same value by the same operations.

    The query with ``ReturnData: true``, each id in it replaced by its own query's signature and
    each ``MetricStat`` by ``leaf(metric_stat)`` (the caller says which of its fields matter):
    ids, labels and queries the result does not read do not count, so that two alarms that name
    their queries differently can share one computation. Braces, which the expression grammar
    does not use, wrap each replacement, so that different structures never give the same text.
    Equal texts mean equal token sequences over equal inputs, hence bit-identical values; different
    texts may still compute the same value (e.g. ``1`` and ``1.0``): they are simply not shared.

    Raises:
        MetricMathError: as :func:`check_queries`, or an unknown id or a cycle.
    """
    check_queries(queries)
    by_id = {q["Id"]: q for q in queries}

    def signature_of(ident: str) -> str:
        query = by_id[ident]
        if "MetricStat" in query:
            return "{metric " + leaf(query["MetricStat"]) + "}"
        parts = [resolve(t) if kind == "name" and t in by_id else t for kind, t in _tokenize(query["Expression"])]
        return "{expression " + " ".join(parts) + "}"

    resolve = _resolver(by_id, signature_of)
    (top,) = [q["Id"] for q in queries if q.get("ReturnData", True) in (True, "true")]
    return resolve(top)


def compile_queries(
    queries: Sequence[Mapping[str, Any]], bind: Callable[[Mapping[str, Any]], Callable[[Any], float | None]] | None = None
) -> Callable[[Any], float | None]:
    """Parse ``queries`` once; the result evaluates them at one timestamp for a given data source.

    The returned function gives the value of the query with ``ReturnData: true`` (``None``: no
    data point); each query is evaluated at most once per call. It takes a :data:`DataSource`;
    with ``bind``, which makes once per ``MetricStat`` the function that reads it, it takes
    whatever those functions take (``simulate`` passes the minute), and no lookup by
    ``MetricStat`` happens per evaluation.

    Raises:
        MetricMathError: the queries break CloudWatch's alarm rules (:func:`check_queries`) or use
            something outside the supported subset (reported here, not at evaluation).
    """
    check_queries(queries)
    by_id = {q["Id"]: q for q in queries}
    # The ids whose value is remembered within one evaluation.
    remembering: list[str] = []
    # One evaluation's values by id; reset at each call (an id read twice is computed once).
    memo: dict[str, float | None] = {}
    # How many times the other queries read each id: only an id read twice needs the memo (a
    # lookup per read costs more than the rest of a small expression).
    reads = Counter(
        text for q in queries if "Expression" in q for kind, text in _tokenize(q["Expression"]) if kind == "name" and text in by_id
    )

    def compile_id(ident: str) -> _Node:
        query = by_id[ident]
        if "MetricStat" in query and bind is not None:
            inner = _series(bind(query["MetricStat"]))
        elif "MetricStat" in query:
            stat = query["MetricStat"]

            def raw(data: DataSource) -> float | None:
                return data(stat)

            inner = _series(raw)
        else:
            inner = _Parser(query["Expression"], resolve).parse()
            if inner.kind == ARRAY:
                raise MetricMathError(f"{ident}: an array of time series is not a single time series")
        if inner.kind == SCALAR or reads[ident] < 2:
            return inner
        fn = inner.as_series()
        remembering.append(ident)

        def remembered(data: DataSource) -> float | None:
            if ident in memo:
                return memo[ident]
            value = memo[ident] = fn(data)
            return value

        return _series(remembered)

    resolve = _resolver(by_id, compile_id)
    (top,) = [q["Id"] for q in queries if q.get("ReturnData", True) in (True, "true")]
    root = resolve(top)
    if root.kind == SCALAR:
        constant = root.constant
        return lambda _data: constant
    root_fn = root.as_series()
    if not remembering:
        return root_fn  # nothing is remembered: no memo to clear

    def run(data: Any) -> float | None:
        memo.clear()
        return root_fn(data)

    return run


def evaluate(queries: Sequence[Mapping[str, Any]], data: DataSource) -> float | None:
    """The value of the query with ``ReturnData: true`` at one timestamp (``None``: no data point).

    Args:
        queries: the synthesized query list (see :func:`check_queries`).
        data: the value of one ``MetricStat`` (as in the template) at that timestamp, or ``None``.
    """
    return compile_queries(queries)(data)
