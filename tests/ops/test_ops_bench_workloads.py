"""``bench``'s realistic workloads against the local server: token-length spreads, mixes of shapes,
shared prefixes (checked on the server's side), and their AIPerf spec."""

from __future__ import annotations

import io
import json
import random
import statistics
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sagemaker_pools.ops.aws import AwsOptions, Clients
from sagemaker_pools.ops.bench.bodies import Shape, normal_tokens, parse_shape, synthetic_bodies
from sagemaker_pools.ops.bench.localserver import Behaviour, LocalRuntimeServer
from sagemaker_pools.ops.cli import main
from sagemaker_pools.ops.context import Context
from sagemaker_pools.ops.errors import OpsError


@pytest.fixture(scope="module")
def keeping_server() -> Iterator[LocalRuntimeServer]:
    """A fast local server that keeps every request body (what the client sent, seen by the server)."""
    with LocalRuntimeServer(Behaviour(latency_ms=1), keep_bodies=True) as server:
        yield server


@pytest.fixture
def server(keeping_server: LocalRuntimeServer) -> LocalRuntimeServer:
    keeping_server.reset_stats()
    return keeping_server


def bench(server: LocalRuntimeServer | None, *args: str) -> tuple[int, dict[str, Any] | None, str]:
    """Run ``sagemaker-pools bench``: (exit code, the --json report or None, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    clients = Clients(AwsOptions(region="us-east-1", endpoint_url=server.url if server else "http://127.0.0.1:9"))
    code = main(["bench", *args], context=Context(clients=clients, out=out, err=err, interactive=False))
    text = out.getvalue()
    return code, json.loads(text) if text.startswith("{") else None, err.getvalue()


def received(server: LocalRuntimeServer) -> list[dict[str, Any]]:
    """The JSON bodies the server received."""
    return [json.loads(b) for b in server.bodies()]


QUICK = ("--warmup", "0", "--concurrency", "2", "--processes", "1", "--json", "--seed", "7")


# -- token-length distributions ------------------------------------------------------------


def test_normal_lengths_follow_aiperf_truncated_rounded_up_at_least_one() -> None:
    rng = random.Random(1)
    draws = [normal_tokens(rng, 100, 20) for _ in range(4000)]
    assert abs(statistics.mean(draws) - 100.5) < 1.5  # rounded up: the mean moves up by half a token
    assert abs(statistics.stdev(draws) - 20) < 1.5
    assert all(isinstance(n, int) for n in draws)
    small = [normal_tokens(rng, 1, 5) for _ in range(2000)]
    assert min(small) == 1 and all(n >= 1 for n in small)  # truncated at 0, then at least 1
    assert normal_tokens(rng, 7.4, 0) == 7 and normal_tokens(rng, 0.2, 0) == 1  # no spread: the mean, rounded


def test_stddevs_spread_the_lengths_the_server_receives(server: LocalRuntimeServer) -> None:
    code, report, err = bench(
        server, "llm", "--input-tokens", "60", "--input-tokens-stddev", "15", "--output-tokens", "40", "--output-tokens-stddev", "10",
        "--requests", "100", *QUICK,
    )  # fmt: skip
    assert code == 0, err
    bodies = received(server)
    assert len(bodies) == 100
    words = [len(b["inputs"].split()) for b in bodies]
    outputs = [b["parameters"]["max_new_tokens"] for b in bodies]
    assert 50 <= statistics.mean(words) <= 70 and 9 <= statistics.stdev(words) <= 21
    assert 33 <= statistics.mean(outputs) <= 47 and 6 <= statistics.stdev(outputs) <= 14
    assert report is not None and report["input"]["bodies"] == 100


def test_without_a_stddev_the_lengths_are_fixed(server: LocalRuntimeServer) -> None:
    code, _, err = bench(server, "llm", "--input-tokens", "20", "--output-tokens", "5", "--requests", "20", *QUICK)
    assert code == 0, err
    assert {len(b["inputs"].split()) for b in received(server)} == {20}
    assert {b["parameters"]["max_new_tokens"] for b in received(server)} == {5}


def test_a_mix_of_shapes_in_its_proportions(server: LocalRuntimeServer) -> None:
    code, _, err = bench(server, "llm", "--shape", "50:10@0.7", "--shape", "200:30@0.3", "--requests", "100", *QUICK)
    assert code == 0, err
    shapes = Counter((len(b["inputs"].split()), b["parameters"]["max_new_tokens"]) for b in received(server))
    assert set(shapes) == {(50, 10), (200, 30)}
    assert 55 <= shapes[(50, 10)] <= 85  # 70 of 100 expected
    bodies = synthetic_bodies(input_tokens=1, output_tokens=1, seed=3, count=5000, shapes=(Shape(5, 1, 3.0), Shape(9, 2, 1.0)))
    share = sum(1 for b in bodies if json.loads(b)["parameters"]["max_new_tokens"] == 1) / len(bodies)
    assert abs(share - 0.75) < 0.03  # weights need not add up to 1


def test_shapes_take_the_stddevs_too() -> None:
    bodies = synthetic_bodies(input_tokens=1, output_tokens=1, seed=3, shapes=(Shape(50, 20),), input_stddev=8, output_stddev=4)
    assert len({len(json.loads(b)["inputs"].split()) for b in bodies}) > 5
    assert len({json.loads(b)["parameters"]["max_new_tokens"] for b in bodies}) > 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [("550:150@0.7", Shape(550, 150, 0.7)), ("2000:300", Shape(2000, 300, 1.0)), ("8:4@.5", Shape(8, 4, 0.5))],
)
def test_parse_shape(text: str, expected: Shape) -> None:
    assert parse_shape(text) == expected


@pytest.mark.parametrize("text", ["550", "550:150@", "0:10", "10:0", "10:10@0", "a:b", "10:10@-1"])
def test_parse_shape_refuses(text: str) -> None:
    with pytest.raises(OpsError, match="--shape"):
        parse_shape(text)


# -- shared prefixes -------------------------------------------------------------------------


def test_prefixes_are_shared_on_the_servers_side(server: LocalRuntimeServer) -> None:
    code, _, err = bench(server, "llm", "--prefix-tokens", "16", "--prefix-count", "3", "--input-tokens", "10", "--requests", "60", *QUICK)
    assert code == 0, err
    prompts = [b["inputs"].split() for b in received(server)]
    assert len(prompts) == 60 and {len(p) for p in prompts} == {26}
    prefixes = Counter(" ".join(p[:16]) for p in prompts)
    assert len(prefixes) == 3 and set(prefixes.values()) == {20}  # K prefixes, each shared by a third of the requests
    for prefix in prefixes:  # what follows a prefix differs from request to request
        tails = {" ".join(p[16:]) for p in prompts if " ".join(p[:16]) == prefix}
        assert len(tails) > 1
    assert len({" ".join(p[:17]) for p in prompts}) > 3  # the prefixes are exactly 16 words long: the 17th varies


def test_without_prefixes_no_prompt_opening_is_shared_by_a_third(server: LocalRuntimeServer) -> None:
    code, _, err = bench(server, "llm", "--input-tokens", "26", "--requests", "60", *QUICK)
    assert code == 0, err
    openings = Counter(" ".join(b["inputs"].split()[:16]) for b in received(server))
    assert max(openings.values()) < 20


def test_more_prefixes_than_bodies_makes_more_bodies() -> None:
    bodies = synthetic_bodies(input_tokens=4, output_tokens=2, seed=1, prefix_tokens=6, prefix_count=150)
    assert len(bodies) == 150
    assert len({" ".join(json.loads(b)["inputs"].split()[:6]) for b in bodies}) == 150


# -- what is refused ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input-tokens-stddev", "5"], "--input-tokens-stddev shape synthetic bodies"),
        (["--prefix-tokens", "5", "--prefix-count", "2"], "--prefix-tokens, --prefix-count shape synthetic bodies"),
        (["--input-tokens", "5", "--prefix-tokens", "5"], "--prefix-tokens 5 / --prefix-count 0: give both"),
        (["--shape", "5:5", "--input-tokens", "5"], "--shape gives the token lengths"),
        (["--input-tokens", "5", "--token-range-ratio", "0.2", "--input-tokens-stddev", "2"], "not both"),
        (["--input-tokens", "5", "--output-tokens-stddev", "-1"], "--output-tokens-stddev -1: each must be >= 0"),
        (["--shape", "5"], "give INPUT:OUTPUT tokens"),
        (["--shape", "5:5", "--body", "{}"], "give one of --input, --body"),
        (["--sweep-rate", "10", "--rate", "5"], "drop --sweep and --rate"),
        (["--sweep-rate", "10", "--sweep", "1,2"], "drop --sweep and --rate"),
        (["--sweep-rate", "10", "--capacity-file", "c.json"], "a rate sweep finds max_rate_per_s"),
        (["--sweep-rate", "0,10"], "give rates > 0"),
        (["--sweep-rate", "ten"], "not a comma-separated list of rates"),
        (["--repeat", "0"], "give a number of runs >= 1"),
        (["--repeat", "2", "--sweep", "1,2"], "--repeat repeats a single run: drop --sweep"),
        (["--repeat", "2", "--sweep-rate", "1,2"], "drop --sweep-rate"),
        (["--slice", "0s"], "give a slice length > 0"),
        (["--slice", "soon"], "is not a duration"),
    ],
)
def test_invalid_options(args: list[str], message: str) -> None:
    code, _, err = bench(None, "llm", *args)
    assert code == 2 and message in err, err


# -- the AIPerf spec -------------------------------------------------------------------------


def test_stddevs_and_prefixes_go_into_the_aiperf_spec(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    code, _, err = bench(
        None, "--aiperf-spec", str(path), "--input-tokens", "550", "--input-tokens-stddev", "150", "--output-tokens", "150",
        "--output-tokens-stddev", "50", "--prefix-tokens", "1000", "--prefix-count", "4",
    )  # fmt: skip
    assert code == 0, err
    parameters = json.loads(path.read_text())["parameters"]
    assert parameters["prompt_input_tokens_mean"] == 550 and parameters["prompt_input_tokens_stddev"] == 150
    assert parameters["output_tokens_mean"] == 150 and parameters["output_tokens_stddev"] == 50
    assert (parameters["prompt_prefix_pool_size"], parameters["prompt_prefix_length"]) == (4, 1000)


def test_shapes_become_aiperfs_sequence_distribution(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    code, _, err = bench(None, "--aiperf-spec", str(path), "--shape", "550:150@0.7", "--shape", "2000:300@0.3", "--input-tokens-stddev", "20")
    assert code == 0, err
    parameters = json.loads(path.read_text())["parameters"]
    assert parameters["sequence_distribution"] == "550|20,150:70;2000|20,300:30"
    assert not {"prompt_input_tokens_mean", "prompt_input_tokens_stddev", "output_tokens_mean"} & set(parameters)


def test_a_managed_or_aiperf_run_refuses_the_workload_options() -> None:
    for args in (["--shape", "5:5"], ["--input-tokens-stddev", "3"], ["--prefix-tokens", "4", "--prefix-count", "2"]):
        code, _, err = bench(None, "--from-aiperf", "somewhere", *args)
        assert code == 2 and "defines the load" in err and args[0] in err


def test_the_spec_is_the_one_a_benchmark_workload_writes_for_the_same_load(tmp_path: Path) -> None:
    from sagemaker_pools import WorkloadSpec

    path = tmp_path / "spec.json"
    code, _, err = bench(
        None, "--aiperf-spec", str(path), "--shape", "100:20@3", "--shape", "400:50", "--prefix-tokens", "64", "--prefix-count", "2",
        "--requests", "50", "--seed", "1",
    )  # fmt: skip
    assert code == 0, err
    expected = WorkloadSpec(
        sequence_distribution="100,20:75;400,50:25", prefix_pool_size=2, prefix_length=64, concurrency=8, request_count=50,
        warmup_s=5.0, streaming=False, seed=1, timeout_s=60.0,
    )  # fmt: skip
    assert json.loads(path.read_text()) == expected.document()


# -- rate sweep ------------------------------------------------------------------------------


def test_a_rate_sweep_runs_one_open_loop_a_rate_and_finds_the_highest_that_holds(tmp_path: Path) -> None:
    # A server that serves 2 requests at a time, 50 ms each: 40 requests/s at most. 20/s holds;
    # at 80/s the queue grows for the whole level and p99 goes far above 300 ms.
    saved = tmp_path / "requests.jsonl"
    with LocalRuntimeServer(Behaviour(latency_ms=50), slots=2) as server:
        code, document, err = bench(
            server, "llm", "--sweep-rate", "80,20", "--duration", "2", "--warmup", "0", "--concurrency", "64", "--processes", "1",
            "--slo", "p99=300ms", "--json", "--seed", "1", "--save-requests", str(saved),
        )  # fmt: skip
    assert code == 0, err
    assert document is not None and document["axis"] == "rate"
    assert [level["rate_per_s"] for level in document["levels"]] == [20.0, 80.0]
    assert [level["report"]["run"]["mode"] for level in document["levels"]] == ["open", "open"]
    assert [level["report"]["run"]["rate_per_s"] for level in document["levels"]] == [20.0, 80.0]
    assert [level["holds"] for level in document["levels"]] == [True, False]
    assert document["max_rate_per_s"] == 20.0 and document["max_concurrency"] is None
    assert "rate 20/s:" in err and "rate 80/s:" in err
    assert {json.loads(line)["rate_per_s"] for line in saved.read_text().splitlines()} == {20.0, 80.0}


def test_a_rate_sweep_table() -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=1)) as server:
        out, err = io.StringIO(), io.StringIO()
        clients = Clients(AwsOptions(region="us-east-1", endpoint_url=server.url))
        code = main(
            ["bench", "llm", "--sweep-rate", "5,10", "--requests", "5", "--warmup", "0", "--slo", "p99=1s", "--concurrency", "2"],
            context=Context(clients=clients, out=out, err=err, interactive=False),
        )
    assert code == 0, err.getvalue()
    text = out.getvalue()
    assert "open loop, at most 2 in flight" in text and "rate/s" in text and "max_rate_per_s: 10" in text


def test_a_rate_sweep_is_not_a_spec_nor_a_managed_load(tmp_path: Path) -> None:
    code, _, err = bench(None, "--aiperf-spec", str(tmp_path / "s.json"), "--sweep-rate", "1,2")
    assert code == 2 and "--sweep-rate (a spec is one load" in err
    code, _, err = bench(None, "--from-aiperf", "somewhere", "--sweep-rate", "1,2")
    assert code == 2 and "--sweep-rate" in err


# -- repeats, slices, CSV ---------------------------------------------------------------------


def test_t_quantiles_and_a_confidence_interval() -> None:
    from sagemaker_pools.ops.bench.runs import confidence, t_quantile

    assert (t_quantile(1), t_quantile(2), t_quantile(30), t_quantile(31)) == (12.706, 4.303, 2.042, 1.96)
    reports = [{"requests_per_s": v, "output": {"tokens_per_s": None}, "requests": {"error_rate": 0.0}, "latency_ms": {"p50": 1, "p90": 1, "p99": 1},
                "ttft_ms": None, "itl_ms": None, "tpot_ms": None, "goodput": None} for v in (10.0, 12.0, 14.0)]  # fmt: skip
    figures = confidence(reports)
    rate = figures["requests_per_s"]
    assert rate["mean"] == 12.0 and rate["stddev"] == 2.0
    assert rate["ci95_half_width"] == pytest.approx(4.303 * 2 / 3**0.5)
    assert rate["ci95_low"] == pytest.approx(12 - 4.303 * 2 / 3**0.5)
    assert "output_tokens_per_s" not in figures and "ttft_p99_ms" not in figures  # figures a run does not have are left out


def test_repeat_runs_n_times_and_gives_confidence_intervals(server: LocalRuntimeServer, tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    code, document, err = bench(server, "llm", "--input-tokens", "8", "--requests", "20", "--repeat", "3", "--csv", str(path), *QUICK)
    assert code == 0, err
    assert document is not None and document["schema"] == "sagemaker-pools-bench-repeat/1" and document["repeats"] == 3
    assert [r["requests"]["total"] for r in document["runs"]] == [20, 20, 20]
    assert len(server.bodies()) == 60  # the server saw three runs
    rate = document["figures"]["requests_per_s"]
    assert rate["values"] == [r["requests_per_s"] for r in document["runs"]]
    assert rate["ci95_low"] <= rate["mean"] <= rate["ci95_high"]
    assert err.count("run ") >= 3 and "run 3/3:" in err
    import csv

    rows = list(csv.DictReader(path.open()))
    assert [(r["kind"], r["label"]) for r in rows] == [("repeat", "1"), ("repeat", "2"), ("repeat", "3"), ("mean", "repeats"), ("ci95_low", "repeats"), ("ci95_high", "repeats")]
    assert [int(r["requests"]) for r in rows[:3]] == [20, 20, 20]
    assert float(rows[3]["requests_per_s"]) == pytest.approx(rate["mean"])


def test_repeat_text_table(server: LocalRuntimeServer) -> None:
    out, err = io.StringIO(), io.StringIO()
    clients = Clients(AwsOptions(region="us-east-1", endpoint_url=server.url))
    code = main(["bench", "llm", "--requests", "5", "--repeat", "2", "--warmup", "0", "--concurrency", "1"], context=Context(clients=clients, out=out, err=err))
    assert code == 0, err.getvalue()
    assert "2 runs; mean and 95 % confidence interval" in out.getvalue() and "requests_per_s" in out.getvalue()


def test_slices_cut_the_measured_phase_by_send_time(tmp_path: Path) -> None:
    # An open loop at 40/s for 1.5 s in 0.5 s slices: three slices of about 20 requests each, every request in one of them.
    path = tmp_path / "slices.csv"
    with LocalRuntimeServer(Behaviour(latency_ms=1)) as server:
        code, report, err = bench(
            server, "llm", "--rate", "40", "--duration", "1.5", "--slice", "0.5s", "--warmup", "0", "--concurrency", "4", "--processes", "1",
            "--json", "--csv", str(path),
        )  # fmt: skip
    assert code == 0, err
    assert report is not None
    windows = report["slices"]["windows"]
    assert report["slices"]["seconds"] == 0.5 and report["slices"]["assigned_by"] == "sent"
    assert [w["start_s"] for w in windows][:3] == [0.0, 0.5, 1.0]
    assert sum(w["requests"]["total"] for w in windows) == report["requests"]["total"]
    assert all(17 <= w["requests"]["total"] <= 23 for w in windows[:3])
    assert all(w["latency_ms"]["p50"] is not None for w in windows[:3])
    import csv

    rows = list(csv.DictReader(path.open()))
    assert rows[0]["kind"] == "run" and [r["kind"] for r in rows[1:]] == ["slice"] * len(windows)
    assert rows[1]["label"] == "0-0.5s"


def test_a_sweep_writes_a_csv_row_a_level(server: LocalRuntimeServer, tmp_path: Path) -> None:
    path = tmp_path / "sweep.csv"
    code, _, err = bench(server, "llm", "--sweep", "1,2", "--requests", "6", "--warmup", "0", "--json", "--csv", str(path))
    assert code == 0, err
    import csv

    rows = list(csv.DictReader(path.open()))
    assert [(r["kind"], r["label"], r["requests"]) for r in rows] == [("level", "1", "6"), ("level", "2", "6")]


def test_report_options_of_local_runs_are_refused_by_the_aiperf_modes(tmp_path: Path) -> None:
    code, _, err = bench(None, "--aiperf-spec", str(tmp_path / "s.json"), "--repeat", "3", "--csv", "x.csv")
    assert code == 2 and "--repeat (a spec is one run" in err and "--csv (no local run is made)" in err
    code, _, err = bench(None, "--from-aiperf", "somewhere", "--slice", "30s")
    assert code == 2 and "--slice report local runs only" in err


# -- multi-turn conversations -------------------------------------------------------------------

ANSWER = " tok" * 16  # what the local server generates by default


def test_each_turn_carries_the_history_on_the_servers_side(server: LocalRuntimeServer) -> None:
    code, report, err = bench(server, "llm", "--input-tokens", "6", "--output-tokens", "4", "--turns", "3", "--requests", "30", *QUICK)
    assert code == 0, err
    prompts = [b["inputs"] for b in received(server)]
    assert len(prompts) == 30
    by_answers = Counter(p.count(ANSWER) for p in prompts)
    assert set(by_answers) == {0, 1, 2}  # turn 1 has no history, turn 3 carries two answers
    assert by_answers[0] >= by_answers[1] >= by_answers[2] >= 8
    seen = set()
    for prompt in prompts:  # a later turn is an earlier turn's prompt, its answer, then a new prompt
        if ANSWER in prompt:
            history, _, new = prompt.rpartition("\n\n")
            assert history.endswith(ANSWER) and history.removesuffix(ANSWER) in seen and ANSWER not in new
        seen.add(prompt)
    assert report is not None
    turns = report["input"]["turns"]
    assert turns["mean"] == 3 and sum(turns["requests_by_turn"].values()) == 30
    assert report["input"]["bytes"]["max"] > report["input"]["bytes"]["min"] + 2 * len(ANSWER)  # the size sent, history included


def test_chat_bodies_carry_the_history_as_messages_also_when_streamed(server: LocalRuntimeServer) -> None:
    chat = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8})
    for stream in ([], ["--stream"]):
        server.reset_stats()
        code, _, err = bench(server, "llm", "--body", chat, "--turns", "2", "--requests", "4", *stream, *QUICK)
        assert code == 0, err
        messages = [b["messages"] for b in received(server)]
        assert [m for m in messages if len(m) > 1][0] == [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": ANSWER}, {"role": "user", "content": "hi"},
        ]  # fmt: skip
        assert {len(m) for m in messages} == {1, 3}


def test_turns_drawn_around_the_mean() -> None:
    rng = random.Random(4)
    draws = [normal_tokens(rng, 4, 1) for _ in range(2000)]
    assert abs(statistics.mean(draws) - 4.4) < 0.2 and min(draws) >= 1 and len(set(draws)) > 3


def test_follow_up_refuses_bodies_without_a_place_for_history() -> None:
    from sagemaker_pools.ops.bench.conversation import check_conversable, follow_up

    with pytest.raises(OpsError, match="body 2 is not a JSON object with messages"):
        check_conversable((b'{"inputs": "a"}', b'{"x": 1}'))
    with pytest.raises(OpsError, match="all hold messages"):
        follow_up(b'{"inputs": "a"}', "b", b'{"messages": []}')
    assert json.loads(follow_up(b'{"prompt": "a", "n": 1}', " b", b'{"prompt": "c", "n": 2}')) == {"prompt": "a b\n\nc", "n": 2}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--turns", "2", "--rate", "5"], "closed loop"),
        (["--turns", "0"], "--turns 0 / --turns-stddev 0: turns must be at least 1"),
        (["--turns", "2", "--body", "plain text", "--content-type", "text/plain"], "history cannot be carried"),
    ],
)
def test_invalid_turns(args: list[str], message: str) -> None:
    code, _, err = bench(None, "llm", *args)
    assert code == 2 and message in err, err


def test_turns_go_into_the_aiperf_spec(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    code, _, err = bench(None, "--aiperf-spec", str(path), "--input-tokens", "100", "--turns", "4", "--turns-stddev", "1")
    assert code == 0, err
    parameters = json.loads(path.read_text())["parameters"]
    assert (parameters["conversation_turn_mean"], parameters["conversation_turn_stddev"]) == (4, 1)
    code, _, err = bench(None, "--aiperf-spec", str(path), "--input-tokens", "100")
    assert code == 0 and "conversation_turn_mean" not in json.loads(path.read_text())["parameters"]


# -- replay of captured traffic ----------------------------------------------------------------

REPLAYED_AT = (0.0, 0.1, 0.25, 0.6, 1.0, 1.2)


def capture_line(index: int, time: str, *, with_input: bool = True, content_type: str = "application/json") -> str:
    """One SageMaker data capture record (as endpoints write them with DataCaptureConfig)."""
    data: dict[str, Any] = {"endpointOutput": {"observedContentType": "application/json", "mode": "OUTPUT", "data": "eyJvayI6IDF9", "encoding": "BASE64"}}
    if with_input:
        data["endpointInput"] = {"observedContentType": content_type, "mode": "INPUT", "data": json.dumps({"inputs": f"request {index}"}), "encoding": "JSON"}
    return json.dumps({"captureData": data, "eventMetadata": {"eventId": f"e{index}", "inferenceTime": time}, "eventVersion": "0"})


def capture_files(folder: Path) -> Path:
    """Six captured requests at REPLAYED_AT (millisecond times), over two hourly files, and one output-only record."""
    times = [f"2026-12-02T10:59:59.{round(t * 1000):03d}Z" if t < 1 else f"2026-12-02T11:00:00.{round((t - 1) * 1000):03d}Z" for t in REPLAYED_AT]
    first, second = folder / "llm" / "AllTraffic" / "2026" / "12" / "02" / "10", folder / "llm" / "AllTraffic" / "2026" / "12" / "02" / "11"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    (first / "capture-a.jsonl").write_text("\n".join(capture_line(i, times[i]) for i in range(4)) + "\n" + capture_line(9, times[0], with_input=False) + "\n")
    (second / "capture-b.jsonl").write_text("\n".join(capture_line(i, times[i]) for i in range(4, 6)) + "\n")
    return folder


def test_a_replay_sends_the_captured_requests_at_their_recorded_pace(server: LocalRuntimeServer, tmp_path: Path) -> None:
    folder = capture_files(tmp_path / "capture")
    saved = tmp_path / "requests.jsonl"
    code, report, err = bench(server, "llm", "--replay", str(folder), "--warmup", "0", "--concurrency", "4", "--processes", "1", "--json", "--save-requests", str(saved))
    assert code == 0, err
    assert [b["inputs"] for b in received(server)] == [f"request {i}" for i in range(6)]  # every captured input, in order
    sent = sorted(json.loads(line)["sent"] for line in saved.read_text().splitlines())
    for measured, recorded in zip(sent, REPLAYED_AT, strict=True):
        # Never early; late only by what a busy machine delays (a replay at half the pace would be
        # 1.2 s late by its last request).
        assert recorded - 0.005 <= measured <= recorded + 1.0
    assert report is not None and report["run"]["mode"] == "replay"
    assert report["run"]["replay"] == {"source": str(folder), "captured_requests": 6, "skipped_records": 1, "span_s": pytest.approx(1.2)}
    assert report["requests"]["total"] == 6 and report["dispatch_lag_ms"]["count"] == 6


def test_a_replay_from_s3(server: LocalRuntimeServer, tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from s3_standin import S3StandIn

    lines = "\n".join(capture_line(i, f"2026-12-02T10:00:0{i}Z") for i in range(3)).encode()
    with S3StandIn({"capture": {"data/llm/AllTraffic/2026/12/02/10/a.jsonl": lines, "data/other.txt": b"x"}}) as s3:

        class WithS3(Clients):
            def s3(self) -> Any:
                return s3.client()

        out, err = io.StringIO(), io.StringIO()
        clients = WithS3(AwsOptions(region="us-east-1", endpoint_url=server.url))
        code = main(["bench", "llm", "--replay", "s3://capture/data/", "--warmup", "0", "--json"], context=Context(clients=clients, out=out, err=err))
    assert code == 0, err.getvalue()
    assert json.loads(out.getvalue())["requests"]["total"] == 3
    assert [b["inputs"] for b in received(server)] == ["request 0", "request 1", "request 2"]


def test_whole_second_times_are_spread_over_their_second(tmp_path: Path) -> None:
    from sagemaker_pools.ops.bench.replay import load_replay

    times = ["2026-12-02T10:00:00Z"] * 3 + ["2026-12-02T10:00:01Z"] + ["2026-12-02T10:00:03Z"] * 2
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(capture_line(i, t) for i, t in enumerate(times)))
    replay = load_replay(str(path), s3=lambda: None)
    assert replay.offsets == pytest.approx((0, 1 / 3, 2 / 3, 1, 3, 3.5))
    assert [json.loads(b)["inputs"] for b in replay.bodies] == [f"request {i}" for i in range(6)]
    assert replay.content_type == "application/json" and replay.skipped == 0


def test_replay_refusals(tmp_path: Path) -> None:
    path = capture_files(tmp_path / "capture")
    for args, message in (
        (["--replay", str(path), "--rate", "5"], "drop --rate"),
        (["--replay", str(path), "--turns", "2"], "drop --turns"),
        (["--replay", str(path), "--sweep-rate", "1,2"], "drop --sweep-rate"),
        (["--replay", str(path), "--body", "{}"], "give one of --input, --body"),
        (["--replay", str(tmp_path / "nothing")], "--replay: no folder or file"),
    ):
        code, _, err = bench(None, "llm", *args)
        assert code == 2 and message in err, err
    only_outputs = tmp_path / "outputs.jsonl"
    only_outputs.write_text(capture_line(1, "2026-12-02T10:00:00Z", with_input=False))
    code, _, err = bench(None, "llm", "--replay", str(only_outputs))
    assert code == 2 and "no captured request with an input and an inferenceTime (1 records read)" in err
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(capture_line(1, "2026-12-02T10:00:00Z") + "\n" + capture_line(2, "2026-12-02T10:00:01Z", content_type="text/csv"))
    code, _, err = bench(None, "llm", "--replay", str(mixed))
    assert code == 2 and "several content types (application/json, text/csv)" in err
    code, _, err = bench(None, "--aiperf-spec", str(tmp_path / "s.json"), "--replay", str(path))
    assert code == 2 and "--replay (the spec has no SageMaker data capture input" in err


def test_a_merged_report_is_one_csv_row(server: LocalRuntimeServer, tmp_path: Path) -> None:
    paths = []
    for name in ("a", "b"):
        code, report, err = bench(server, "llm", "--requests", "4", "--warmup", "0", "--concurrency", "1", "--json")
        assert code == 0, err
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(report))
    table = tmp_path / "merged.csv"
    code, _, err = bench(None, "--merge", *map(str, paths), "--csv", str(table))
    assert code == 0, err
    import csv

    assert [(r["kind"], r["label"], r["requests"]) for r in csv.DictReader(table.open())] == [("run", "merged", "8")]
    code, _, err = bench(None, "--merge", *map(str, paths), "--slice", "1s")
    assert code == 2 and "--slice" in err
