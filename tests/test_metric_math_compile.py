"""``metric_math.compile_queries``: the bound form ``simulate`` uses reads exactly what the data-source form reads.

The query list is the weighted-utilization shape (``INSTANCE_WEIGHTED`` over three pools, as
docs/scaling.md writes it), by hand, so that every operator the fast paths specialize (TS + TS,
TS * TS, TS / scalar, TS / TS) and the ones they do not (IF, FILL, MAX, comparison) are read
with every combination of missing values.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from sagemaker_pools.metric_math import compile_queries, evaluate


def _stat(name: str, instance_type: str) -> dict[str, Any]:
    return {
        "Metric": {"Namespace": "AWS/SageMaker", "MetricName": name, "Dimensions": [{"Name": "InstanceType", "Value": instance_type}]},
        "Stat": "Maximum",
    }


TYPES = ("g6e", "g6", "p4d")
QUERIES: list[dict[str, Any]] = [
    *({"Id": f"c{i}", "MetricStat": _stat("ConcurrentRequestsPerModel", t), "ReturnData": False} for i, t in enumerate(TYPES, 1)),
    *({"Id": f"s{i}", "MetricStat": _stat("InstanceCount", t), "ReturnData": False} for i, t in enumerate(TYPES, 1)),
    {"Id": "u1", "Expression": "c1 / 32", "ReturnData": False},
    {"Id": "u2", "Expression": "c2 / 16", "ReturnData": False},
    {"Id": "u3", "Expression": "c3 / 24", "ReturnData": False},
    {"Id": "n", "Expression": "s1 + s2 + s3", "ReturnData": False},
    {"Id": "w", "Expression": "IF(FILL(n, 0) > 0, (u1 * s1 + u2 * s2 + u3 * s3) / n, MAX([u1, u2, u3]))", "ReturnData": True},
]
STATS = [q["MetricStat"] for q in QUERIES if "MetricStat" in q]


def test_the_bound_form_reads_what_the_data_source_form_reads() -> None:
    rng = random.Random(7)
    choices: list[float | None] = [None, 0.0, 1.0, 3.0, 16.0, 40.5]
    bound = compile_queries(QUERIES, bind=lambda stat: lambda values: values[id(stat)])
    cases = 0
    for _ in range(3000):
        values: dict[int, float | None] = {id(s): rng.choice(choices) for s in STATS}
        by_stat = evaluate(QUERIES, lambda stat: values[id(stat)])
        assert bound(values) == by_stat, values
        cases += by_stat is not None
    assert cases > 1000  # most cases have a data point: the comparison is not between two Nones


def test_every_metric_is_read_once_per_evaluation_however_often_the_expressions_name_it() -> None:
    reads: Counter[int] = Counter()

    def data(stat: Mapping[str, Any]) -> float | None:
        reads[id(stat)] += 1
        return 2.0

    run = compile_queries(QUERIES)
    for evaluation in range(1, 4):
        # three types of 2 instances at 2 requests each: n = 6, and s1..s3 are read by n and by the weighting
        assert run(data) == (2.0 / 32 * 2.0 + 2.0 / 16 * 2.0 + 2.0 / 24 * 2.0) / 6.0
        assert set(reads.values()) == {evaluation} and len(reads) == len(STATS)


def test_missing_values_follow_the_documented_rules_in_the_specialized_operators() -> None:
    def only(**present: float) -> Any:
        return lambda stat: present.get(stat["Metric"]["MetricName"][:1].lower() + str(TYPES.index(stat["Metric"]["Dimensions"][0]["Value"]) + 1))

    def value(expression: str, **present: float) -> float | None:
        queries = [*QUERIES[:6], {"Id": "e", "Expression": expression, "ReturnData": True}]
        return evaluate(queries, only(**present))

    for a, b in itertools.product((None, 3.0), (None, 5.0)):
        present = {k: v for k, v in (("c1", a), ("c2", b)) if v is not None}
        # TS op TS: a missing point is 0 unless both are missing
        assert value("c1 + c2", **present) == (None if a is None and b is None else (a or 0.0) + (b or 0.0))
        assert value("c1 * c2", **present) == (None if a is None and b is None else (a or 0.0) * (b or 0.0))
    # TS / scalar: a missing point stays missing; TS / 0 drops the point
    assert value("c1 / 4") is None and value("c1 / 4", c1=3.0) == 0.75
    assert value("c1 / 0", c1=3.0) is None
