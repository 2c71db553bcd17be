"""The bench's pieces without a server: percentiles, arrival processes, SLOs, histograms, concurrency.

Statistical checks use a seeded generator (so a run is reproducible) and a bound derived from
the distribution, stated with its false-failure probability for an arbitrary seed: they pass
for the seeds below and would fail for a generator with the wrong rate or shape.
"""

from __future__ import annotations

import math
import random
import statistics
import types

import pytest
from bench_units import schedule_times
from hypothesis import example, given
from hypothesis import strategies as st

from sagemaker_pools.ops.bench.histogram import decode, encode, histogram_of, merged, summary_of
from sagemaker_pools.ops.bench.invoke import Record
from sagemaker_pools.ops.bench.report import achieved_concurrency
from sagemaker_pools.ops.bench.slo import Slo, evaluate, parse_slo, request_meets, tpot_of
from sagemaker_pools.ops.bench.stats import PROGRESS_BUCKETS, bucket_percentile, percentile, progress_bucket, summarize
from sagemaker_pools.ops.bench.tokens import count_stream_tokens, stream_events, stream_text
from sagemaker_pools.ops.errors import OpsError


def test_summarize_names_each_percentile_by_its_own_rank() -> None:
    values = list(range(1, 101))  # nearest rank: the p-th percentile of 1..100 is p
    random.Random(3).shuffle(values)
    summary = summarize(values, scale=2.0)
    assert summary == {"count": 100, "mean": 101.0, "min": 2.0, "p50": 100.0, "p90": 180.0, "p95": 190.0, "p99": 198.0, "max": 200.0}
    # a slow tail: p95 and p99 fall on different values, so a p95 reported as p99 shows
    tail = [10.0] * 95 + [20.0] * 4 + [30.0]
    summary = summarize(tail)
    assert (summary["p95"], summary["p99"], summary["max"]) == (10.0, 20.0, 30.0)


def test_percentile_is_nearest_rank() -> None:
    ordered = [float(v) for v in range(1, 161)]
    assert percentile(ordered, 99) == 159.0  # ceil(0.99 * 160) = 159th smallest
    with pytest.raises(ValueError):
        percentile([], 50)


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_poisson_arrivals_keep_the_asked_rate(seed: int, workers: int) -> None:
    # N arrivals in T seconds at rate r: Poisson with mean and variance rT = 10,000 (sd 100).
    # |N - rT| <= 5 sd fails for a correct generator with probability 5.7e-7; half the rate
    # (5,000) or double (20,000) is 50 sd away.
    rate, end = 1000.0, 10.0
    count = len(schedule_times(end, rate=rate, seed=seed, workers=workers))
    expected = rate * end
    assert abs(count - expected) <= 5 * math.sqrt(expected), count


@pytest.mark.parametrize("burstiness", [0.25, 1.0, 4.0])
def test_gamma_arrivals_keep_the_rate_and_take_the_burstiness_as_shape(burstiness: float) -> None:
    # Gamma inter-arrival times with shape k and mean 1/r: the squared coefficient of variation
    # is 1/k. A renewal count has variance rT/k; bound the count at 5 sd (false failure 5.7e-7).
    # The sample CV^2 of n = 10,000 gaps has sd sqrt((kurtosis - 1) / n) relative: at most
    # 0.051 (k = 0.25, kurtosis 27); a 30 % window is 5.8 sd, and a Poisson generator
    # (CV^2 = 1) misses 1/k = 4 or 0.25 by far.
    rate, end = 1000.0, 10.0
    times = schedule_times(end, rate=rate, seed=11, workers=1, arrival="gamma", burstiness=burstiness)
    expected = rate * end
    assert abs(len(times) - expected) <= 5 * math.sqrt(expected / burstiness)
    gaps = [b - a for a, b in zip(times, times[1:])]
    cv2 = statistics.pvariance(gaps) / statistics.fmean(gaps) ** 2
    assert cv2 == pytest.approx(1 / burstiness, rel=0.3)


def test_uniform_arrivals_are_evenly_spaced_across_workers() -> None:
    times = schedule_times(1.0, rate=40, seed=0, workers=3, arrival="uniform")
    assert times == pytest.approx([k / 40 for k in range(40)])


def record(sent: float, latency: float, *, ok: bool = True, ttft: float | None = None, tokens: int | None = None) -> Record:
    return Record(sent=sent, latency=latency, ok=ok, error=None if ok else "ModelError", body=0, ttft=ttft, tokens=tokens)


def test_achieved_concurrency_is_little_law_and_the_peak() -> None:
    # two requests always in flight over [0, 1), a third one for its second half
    records = [record(0.0, 1.0), record(0.0, 1.0), record(0.5, 0.5)]
    assert achieved_concurrency(records, 0.0, 1.0) == {"mean": 2.5, "max": 3}
    # back to back on one thread: one ends as the next starts, never two at once
    chain = [record(k * 0.1, 0.1) for k in range(10)]
    assert achieved_concurrency(chain, 0.0, 1.0) == {"mean": pytest.approx(1.0), "max": 1}


def test_slo_parsing() -> None:
    assert parse_slo("p99=2s") == Slo(metric="latency", p=99, bound_ms=2000.0)
    assert parse_slo("ttft_p95=500ms") == Slo(metric="ttft", p=95, bound_ms=500.0)
    assert parse_slo("itl_p99=0.05s").bound_ms == pytest.approx(50.0)
    for bad in ("p98=1s", "p99=2", "latency_p99=1s", "p99=0ms", "ttft=1s"):
        with pytest.raises(OpsError, match="expected"):
            parse_slo(bad)


def test_goodput_counts_requests_within_every_bound() -> None:
    slos = [parse_slo("p99=100ms"), parse_slo("ttft_p99=20ms"), parse_slo("tpot_p99=10ms")]
    good = record(0, 0.080, ttft=0.010, tokens=8)  # TPOT (80 - 10) / 7 = 10 ms: at the bound
    slow_first_token = record(0, 0.080, ttft=0.030, tokens=8)
    slow_tokens = record(0, 0.095, ttft=0.010, tokens=8)  # TPOT 12.1 ms
    failed = record(0, 0.010, ok=False)
    assert tpot_of(good) == pytest.approx(0.010)
    assert [request_meets(r, slos) for r in (good, slow_first_token, slow_tokens, failed)] == [True, False, False, False]


def test_a_run_holds_when_each_percentile_and_the_error_rate_are_within_bounds() -> None:
    report = {"latency_ms": {"p99": 150.0, "p50": 90.0}, "ttft_ms": None, "requests": {"error_rate": 0.005}}
    assert evaluate(report, [parse_slo("p99=200ms")], 0.01)["holds"]
    assert not evaluate(report, [parse_slo("p99=100ms")], 0.01)["holds"]
    assert evaluate(report, [parse_slo("p50=100ms")], 0.01)["holds"]
    assert not evaluate(report, [parse_slo("p50=100ms")], 0.001)["holds"]  # errors above the bound
    assert not evaluate(report, [parse_slo("ttft_p99=1s")], 0.01)["holds"]  # no TTFT measured: not met


@pytest.mark.parametrize("written", ["p99=2007ms", "p99=2.007s"])
def test_a_percentile_exactly_at_its_bound_holds(written: str) -> None:
    # every request takes 2.007 s: the report's p99 is 2.007 * 1000 = 2007.0000000000002 ms, the
    # bound 2007 ms (or 2.007 s * 1000): at the bound in either unit, so the SLO holds
    latencies = [record(0, 2.007) for _ in range(100)]
    report = {"latency_ms": summarize([r.latency for r in latencies], 1000), "requests": {"error_rate": 0.0}}
    verdict = evaluate(report, [parse_slo(written)], 0.0)
    assert verdict["holds"], verdict
    assert all(request_meets(r, [parse_slo(written)]) for r in latencies)  # goodput agrees with the verdict
    # a hair above the bound (1 µs) does not hold
    slower = {"latency_ms": summarize([2.007001] * 100, 1000), "requests": {"error_rate": 0.0}}
    assert not evaluate(slower, [parse_slo(written)], 0.0)["holds"]
    assert not request_meets(record(0, 2.007001), [parse_slo(written)])


def test_merged_histograms_equal_the_histogram_of_all_values() -> None:
    rng = random.Random(5)
    a = [rng.lognormvariate(math.log(0.05), 0.4) for _ in range(3000)]
    b = [rng.lognormvariate(math.log(0.08), 0.6) for _ in range(1000)]
    together = summary_of(merged([encode(histogram_of(a)), encode(histogram_of(b))]))
    assert together == summary_of(histogram_of(a + b))
    assert together["count"] == 4000
    exact = summarize(a + b, 1000)
    for stat in ("p50", "p90", "p99", "max"):  # 3 significant digits: within 0.1 %
        assert together[stat] == pytest.approx(exact[stat], rel=1e-3)
    assert summary_of(decode(encode(histogram_of([]))))["p99"] is None


def test_progress_buckets_are_at_most_5_percent_high() -> None:
    values = [0.001 * k for k in range(1, 1001)]
    counts = [0] * 400
    for v in values:
        counts[progress_bucket(v)] += 1
    p99 = bucket_percentile(counts, 99)
    assert p99 is not None and 0.990 <= p99 <= 0.990 * 1.05
    assert bucket_percentile([0] * 400, 99) is None


# The progress buckets as documented: bucket i holds [0.1 ms * 1.05**i, 0.1 ms * 1.05**(i+1)).
_FLOOR_S = 1e-4  # the first bucket's lower edge: 0.1 ms
_GROWTH = 1.05  # each edge 5 % above the one before
_TOP_S = _FLOOR_S * _GROWTH**PROGRESS_BUCKETS  # the last bucket's upper edge (about 8.3 hours)


def _edge(i: int) -> float:
    """The lower edge of bucket ``i`` (the upper edge of bucket ``i - 1``)."""
    return _FLOOR_S * _GROWTH**i


def test_progress_buckets_are_5_percent_steps_from_0_1_ms() -> None:
    for i in range(PROGRESS_BUCKETS):
        # just inside either edge (a relative 1e-9 is far inside a 5 % wide bucket)
        assert progress_bucket(_edge(i) * (1 + 1e-9)) == i
        assert progress_bucket(_edge(i + 1) * (1 - 1e-9)) == i
        alone = [0] * PROGRESS_BUCKETS
        alone[i] = 3
        for p in (5e-324, 1, 50, 100):  # every percentile of one bucket is its upper edge
            assert bucket_percentile(alone, p) == pytest.approx(_edge(i + 1), rel=1e-12)


def test_latencies_outside_the_buckets_count_in_the_first_or_the_last() -> None:
    # a bucket is an index into each worker's slice of one shared array: one past the last
    # would count in the next worker's first bucket
    for below in (0.0, 1e-9, _FLOOR_S / 2, _FLOOR_S):
        assert progress_bucket(below) == 0
    for above in (_TOP_S * (1 + 1e-9), 86_400.0, 1e9):
        assert progress_bucket(above) == PROGRESS_BUCKETS - 1


def test_the_bucketed_percentile_is_the_upper_edge_of_the_exact_ones_bucket() -> None:
    # one latency in the middle of each of the first 200 buckets: every rank in its own bucket
    latencies = [_FLOOR_S * _GROWTH ** (i + 0.5) for i in range(200)]
    counts = [0] * PROGRESS_BUCKETS
    for latency in latencies:
        counts[progress_bucket(latency)] += 1
    for p in [*range(1, 101), 0.1, 33.3, 99.9]:
        exact = percentile(latencies, p)  # nearest rank: the ceil(p/100 * 200)-th smallest
        assert bucket_percentile(counts, p) == pytest.approx(exact * _GROWTH**0.5, rel=1e-12), p


@given(
    st.lists(st.floats(min_value=_FLOOR_S, max_value=_TOP_S, exclude_max=True), min_size=1, max_size=300),
    st.floats(min_value=0, max_value=100, exclude_min=True),
)
@example([1.0], 5e-324)  # p/100 * n is 0: the nearest rank is still the first
@example([2.0, 1.0], 5e-324)
def test_bucketed_percentile_is_at_most_5_percent_above_the_exact_one(latencies: list[float], p: float) -> None:
    counts = [0] * PROGRESS_BUCKETS
    for latency in latencies:
        counts[progress_bucket(latency)] += 1
    exact = percentile(sorted(latencies), p)
    bucketed = bucket_percentile(counts, p)
    # the upper edge of the exact value's bucket: never below it, at most one 5 % step above
    # (1e-12: an edge computed as a power and a bucket found by a logarithm may differ in the last bits)
    assert bucketed is not None
    assert exact <= bucketed * (1 + 1e-12)
    assert bucketed <= exact * _GROWTH * (1 + 1e-12)


def test_tokenizer_counts_and_synthetic_bodies(tmp_path: types.SimpleNamespace) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers

    from sagemaker_pools.ops.bench.bodies import synthetic_bodies
    from sagemaker_pools.ops.bench.tokens import load_tokenizer, response_text, stream_text

    words = "the model serves requests on instance pools across several accelerator types while endpoint scales out when traffic grows and falls back to another type capacity is short tok".split()
    vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(dict.fromkeys(words))}}
    tokenizer = tokenizers.Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"  # type: ignore[operator]
    tokenizer.save(str(path))

    loaded = load_tokenizer(str(path))
    assert len(loaded.encode(response_text(b'{"generated_text": " tok tok tok"}')).ids) == 3
    assert stream_text([b'{"token": {"text": " tok"}}', b'{"token": {"text": " tok"}, "generated_text": "x x"}']) == " tok tok"
    assert stream_text([b'data: {"choices": [{"delta": {"content": "a b"}}]}\n\n']) == "a b"
    bodies = synthetic_bodies(input_tokens=40, output_tokens=16, range_ratio=0.5, seed=9, tokenizer=str(path))
    lengths = [len(loaded.encode(__import__("json").loads(b)["inputs"]).ids) for b in bodies]
    assert min(lengths) >= 20 and max(lengths) <= 60 and len(set(lengths)) > 5
    assert bodies == synthetic_bodies(input_tokens=40, output_tokens=16, range_ratio=0.5, seed=9, tokenizer=str(path))  # seeded
    with pytest.raises(OpsError, match="not a readable tokenizer.json"):
        load_tokenizer(str(tmp_path / "missing.json"))  # type: ignore[operator]


SSE = [
    b'data: {"token": {"text": " hel',  # one event split across two PayloadParts ...
    b'lo"}}\n\ndata: {"token": {"text": " wor"}}\n\ndata: {"token": {"text": "ld"}, "details": {"generated_to',
    b'kens": 3}}\n\n',  # ... and the last one split inside the word the count is found by
]


@pytest.mark.parametrize("cut", [None, 1, 7, 30])
def test_an_event_split_across_parts_is_read_once(cut: int | None) -> None:
    parts = SSE if cut is None else [b"".join(SSE)[:cut], b"".join(SSE)[cut:]]
    assert len(list(stream_events(parts))) == 3
    assert count_stream_tokens(parts) == 3
    assert stream_text(parts) == " hello world"


def test_one_json_document_a_part_is_one_event_each() -> None:
    # TGI over SageMaker: no newline between events; each part holds one whole document
    parts = [b'{"token": {"text": "a"}}', b'{"token": {"text": "b"}, "details": {"generated_tokens": 2}}']
    assert list(stream_events(parts)) == parts
    assert count_stream_tokens(parts) == 2
    assert stream_text(parts) == "ab"
