"""``sagemaker-pools bench`` against the local SageMaker-runtime-compatible server (real boto3 client).

Timing assertions: at concurrency 1 the client adds at most 3 ms to what the server itself
took. The machine running the suite may be busy, and a busy machine delays the server's timers
as much as the client (the server's own figures are then above the injected latency), so each
bound is measured from the server's own figure of the same run (self-calibrating), and each check
takes the best of up to eight short runs: one run that meets the bound shows the method adds no
more than that. A run that a stalled machine cut too short to judge counts as a failed attempt,
not as a failed test. A busy scheduler can only make a run slower, never faster than the truth
(also asserted: the client never measures less than the server held a request, and the server
never answers before the injected latency).
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sagemaker_pools.ops.aws import AwsOptions, Clients
from sagemaker_pools import CapacityMeasurement
from sagemaker_pools.ops.bench.localserver import Behaviour, LocalRuntimeServer
from sagemaker_pools.ops.cli import main
from sagemaker_pools.ops.context import Context


def body(**server: Any) -> str:
    """A JSON request body that tells the local server how to answer it."""
    return json.dumps({"inputs": "Explain instance pools.", "_server": server})


def bench(server: LocalRuntimeServer, *args: str, interactive: bool = False) -> tuple[int, dict[str, Any] | None, str, str]:
    """Run ``sagemaker-pools bench`` against ``server``: (exit code, JSON report or None, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    clients = Clients(AwsOptions(region="us-east-1", endpoint_url=server.url))
    ctx = Context(clients=clients, out=out, err=err, interactive=interactive)
    code = main(["bench", *args], context=ctx)
    text = out.getvalue()
    report = json.loads(text) if "--json" in args and text.startswith("{") else None
    return code, report, text, err.getvalue()


def arrivals_before(end: float, *, rate: float, seed: int, workers: int, arrival: str = "poisson", burstiness: float = 1.0) -> int:
    """Arrivals the open loop's seeded schedule puts before ``end`` (all workers together)."""
    from bench_units import schedule_times

    return sum(1 for t in schedule_times(end, rate=rate, seed=seed, workers=workers, arrival=arrival, burstiness=burstiness))


def best_of(attempts: int, run: Callable[[], float], bound: float) -> float:
    """The smallest error of up to ``attempts`` runs, stopping at the first within ``bound``."""
    best = float("inf")
    for _ in range(attempts):
        best = min(best, run())
        if best <= bound:
            break
    return best


@pytest.fixture
def server(runtime_server: LocalRuntimeServer) -> LocalRuntimeServer:
    runtime_server.reset_stats()
    return runtime_server


def test_p50_at_concurrency_1_is_within_3_ms_of_the_servers(server: LocalRuntimeServer) -> None:
    injected = 20.0

    def error_ms() -> float:
        server.reset_stats()
        code, report, _, err = bench(
            server, "llm", "--body", body(latency_ms=injected), "--concurrency", "1", "--warmup", "0.2", "--duration", "0.8", "--json"
        )
        assert code == 0, err
        assert report is not None and report["requests"]["failed"] == 0
        if report["requests"]["ok"] < 15:  # a stalled machine: too few requests to judge
            return math.inf
        truth = server.stats()["p50_ms"]  # warm-up included: same latency, same distribution
        p50 = report["latency_ms"]["p50"]
        assert truth >= injected  # the server never answers early
        assert p50 >= injected  # never faster than the server
        return float(p50 - truth)

    assert best_of(8, error_ms, 3.0) <= 3.0


def test_ttft_and_mean_itl_are_within_3_ms(server: LocalRuntimeServer) -> None:
    ttft, itl, tokens = 30.0, 8.0, 6

    def error_ms() -> float:
        server.reset_stats()
        code, report, _, err = bench(
            server,
            "llm",
            "--stream",
            "--body",
            body(ttft_ms=ttft, itl_ms=itl, tokens=tokens),
            "--concurrency",
            "1",
            "--warmup",
            "0.2",
            "--duration",
            "0.8",
            "--json",
        )
        assert code == 0, err
        assert report is not None
        assert report["run"]["operation"] == "InvokeEndpointWithResponseStream"
        if report["requests"]["ok"] < 8:  # a stalled machine: too few requests to judge
            return math.inf
        assert report["ttft_ms"]["count"] == report["requests"]["ok"]
        assert report["itl_ms"]["count"] == (tokens - 1) * report["requests"]["ok"]
        assert report["output"]["unit"] == "tokens"
        assert report["output"]["tokens_total"] == tokens * report["requests"]["ok"]
        assert report["ttft_ms"]["p50"] >= ttft
        # how late the server's own timers ran this time (its whole streams against the injected)
        late = max(0.0, server.stats()["p50_ms"] - (ttft + itl * (tokens - 1)))
        return float(max(report["ttft_ms"]["p50"] - ttft - late, abs(report["itl_ms"]["mean"] - itl)))

    assert best_of(8, error_ms, 3.0) <= 3.0


def test_errors_are_counted_exactly_and_never_stop_the_run(server: LocalRuntimeServer, tmp_path: Path) -> None:
    lines = [
        body(latency_ms=2),
        body(latency_ms=2, error="ModelError"),
        body(latency_ms=2, error="ThrottlingException"),
        body(latency_ms=2),
        body(latency_ms=2, error="ModelError"),
        body(latency_ms=2, error="ModelNotReadyException"),
    ]
    path = tmp_path / "bodies.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, report, _, err = bench(
        server, "llm", "--input", str(path), "--requests", "24", "--concurrency", "3", "--processes", "1", "--warmup", "0", "--json"
    )
    # the report is printed whole, then the run fails: 2/3 failed, above the default --max-error-rate of 1 %
    assert code == 1
    assert err == (
        "sagemaker-pools: error: 66.67 % of requests failed (ModelError 8, ModelNotReadyException 4, ThrottlingException 4), "
        "above --max-error-rate 1 %: the endpoint did not serve this load\n"
    )
    assert report is not None
    assert report["requests"] == {
        "total": 24,
        "ok": 8,
        "failed": 16,
        "success_rate": 8 / 24,
        "error_rate": 16 / 24,
        "errors": {"ModelError": 8, "ModelNotReadyException": 4, "ThrottlingException": 4},
    }
    assert server.stats()["by_kind"] == {"ok": 8, "ModelError": 8, "ThrottlingException": 4, "ModelNotReadyException": 4}


def test_error_counts_match_the_server_across_processes(server: LocalRuntimeServer, tmp_path: Path) -> None:
    path = tmp_path / "bodies.jsonl"
    path.write_text("\n".join([body(latency_ms=3), body(latency_ms=3, error="InternalFailure"), body(latency_ms=3, error="ServiceUnavailable")]))
    code, report, _, err = bench(
        server, "llm", "--input", str(path), "--sample", "--requests", "60", "--concurrency", "4", "--processes", "2", "--warmup", "0", "--json",
        "--max-error-rate", "100%",
    )
    assert code == 0, err
    assert report is not None and report["run"]["processes"] == 2
    served = server.stats()["by_kind"]
    assert report["requests"]["total"] == 60 == sum(served.values())
    assert report["requests"]["ok"] == served.get("ok", 0)
    assert report["requests"]["errors"] == {k: v for k, v in served.items() if k != "ok"}


def test_timeouts_and_stream_errors_are_counted_exactly(server: LocalRuntimeServer, tmp_path: Path) -> None:
    path = tmp_path / "bodies.jsonl"
    path.write_text(
        "\n".join(
            [
                body(ttft_ms=5, itl_ms=2, tokens=3),
                body(ttft_ms=5, itl_ms=2, tokens=5, stall_ms=1500),  # a stream that stalls after its first token
                body(ttft_ms=5, itl_ms=2, tokens=5, stream_error_after=2),
                body(ttft_ms=1500, tokens=2),  # no first token in time
            ]
        )
    )
    code, report, _, err = bench(
        server,
        "llm",
        "--stream",
        "--input",
        str(path),
        "--requests",
        "8",
        "--concurrency",
        "4",
        "--processes",
        "1",
        "--timeout",
        "0.4",
        "--warmup",
        "0",
        "--json",
        "--max-error-rate",
        "0.8",
    )
    assert code == 0, err
    assert report is not None
    assert report["requests"]["errors"] == {"timeout": 4, "ModelStreamError": 2}
    assert report["requests"]["ok"] == 2
    assert report["ttft_ms"]["count"] == 2 and report["itl_ms"]["count"] == 4


def test_open_loop_keeps_the_rate(server: LocalRuntimeServer) -> None:
    code, report, _, err = bench(
        server, "llm", "--rate", "40", "--duration", "1", "--warmup", "0.2", "--concurrency", "4", "--body", body(latency_ms=5), "--json",
        interactive=True,
    )  # fmt: skip
    assert code == 0, err
    # the live progress line, rewritten in place on a terminal
    assert "\r\x1b[2K[" in err and err.endswith("\n")
    # percent done, ETA, live rate and running p99
    assert re.search(r"\r\x1b\[2K\[ +[0-9.]+ s\] +[0-9]+ %, ETA [0-9]+ s: [0-9,]+ done, 0 failed, [0-9.]+/s, p99 [0-9.]+ ms", err), err
    assert report is not None and report["run"]["mode"] == "open"
    assert 39 <= report["requests"]["total"] <= 41  # 40 slots in the measured second
    assert report["dispatch_lag_ms"]["count"] == report["requests"]["total"]
    assert report["dispatch_lag_ms"]["p50"] < 5

    code, report, _, err = bench(
        server, "llm", "--rate", "40", "--arrival", "poisson", "--seed", "7", "--duration", "0.6", "--warmup", "0", "--concurrency", "4",
        "--body", body(latency_ms=5), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert report is not None and report["run"]["arrival"] == "poisson" and report["run"]["seed"] == 7
    # seeded: exactly the arrivals the generator draws for seed 7 (its rate is tested in test_ops_bench_units)
    assert report["requests"]["total"] == arrivals_before(0.6, rate=40, seed=7, workers=report["run"]["processes"])


def test_a_rich_progress_bar_on_a_terminal(server: LocalRuntimeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ("llm", "--duration", "1.2", "--warmup", "0.2", "--concurrency", "2", "--body", body(latency_ms=5), "--json", "--progress", "rich")
    code, report, _, err = bench(server, *args, interactive=True)
    assert code == 0, err
    assert report is not None and report["requests"]["ok"] > 0
    # a bar, then the plain line's figures: percent done, ETA, live rate, running p99
    assert "━" in err
    assert re.search(r"[0-9]+ %, ETA [0-9]+ s: [0-9,]+ done, 0 failed, [0-9.,]+/s, p99 [0-9.]+ ms", err), err
    monkeypatch.setitem(sys.modules, "rich.progress", None)  # as if the extra were not installed
    code, _, _, err = bench(server, *args, interactive=True)
    assert code == 2
    assert err == "sagemaker-pools: error: --progress rich needs the rich package: pip install 'cdk-sagemaker-pools[bench-progress]'\n"


def test_text_report_input_lengths_cost_saved_requests_and_compare(server: LocalRuntimeServer, tmp_path: Path) -> None:
    path = tmp_path / "prompts.jsonl"
    prompts = ["a" * 10, "b" * 20, "c" * 30, "d" * 40]
    path.write_text("".join(json.dumps({"inputs": p, "_server": {"latency_ms": 2, "tokens": 10}}) + "\n" for p in prompts))
    saved = tmp_path / "requests.jsonl"
    args = ["llm", "--input", str(path), "--requests", "8", "--concurrency", "2", "--processes", "1", "--warmup", "0"]
    code, old, _, err = bench(server, *args, "--price-per-hour", "7.2", "--json", "--save-requests", str(saved))
    assert code == 0, err
    assert old is not None
    assert old["input"]["prompt_chars"] == {"count": 8, "mean": 25.0, "min": 10.0, "p50": 20.0, "p90": 40.0, "p95": 40.0, "p99": 40.0, "max": 40.0}
    assert old["output"]["tokens_total"] == 80
    cost = old["cost"]
    assert cost["per_1m_output_tokens"] == pytest.approx(7.2 / (old["output"]["tokens_per_s"] * 3600) * 1e6)
    assert cost["per_1k_requests"] == pytest.approx(7.2 / (old["requests_per_s"] * 3600) * 1e3)
    records = [json.loads(line) for line in saved.read_text().splitlines()]
    assert len(records) == 8 and all(r["ok"] and r["tokens"] == 10 and r["latency"] > 0.002 for r in records)
    baseline = tmp_path / "old.json"
    baseline.write_text(json.dumps(old))

    code, _, text, err = bench(server, *args, "--price-per-hour", "7.2", "--compare", str(baseline))
    assert code == 0, err
    assert "Endpoint llm: InvokeEndpoint, closed loop, concurrency 2, 1 worker process(es)" in text
    assert "requests: 8 = 8 ok + 0 failed (100.00 % success)" in text
    assert "input: 4 bodies cycled; bytes p50 78, p90 98, max 98; prompt characters p50 20, p90 40, max 40" in text
    assert "cost at $7.2/hour: $" in text and "per 1M output tokens" in text
    assert f"Compared with {baseline}" in text
    rows = {line.split()[0] for line in text.split("Compared with", 1)[1].splitlines()[2:]}
    assert {"requests/s", "output", "latency", "$"} <= rows
    assert "percentiles: nearest-rank over every measured successful request" in text


def test_responses_without_token_counts_are_measured_in_chunks_and_bytes(server: LocalRuntimeServer) -> None:
    code, report, _, err = bench(
        server, "llm", "--body", body(latency_ms=2, report_tokens=False), "--requests", "4", "--concurrency", "1", "--warmup", "0", "--json"
    )
    assert code == 0, err
    assert report is not None and report["output"]["unit"] == "bytes (no token count in the responses)"
    assert report["output"]["tokens_per_s"] is None and report["output"]["bytes_total"] > 0
    code, report, _, err = bench(
        server, "llm", "--stream", "--body", body(ttft_ms=2, itl_ms=1, tokens=4, report_tokens=False), "--requests", "4",
        "--concurrency", "1", "--warmup", "0", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert report is not None and report["output"]["unit"] == "chunks and bytes (no token count in the responses)"
    assert report["output"]["chunks_total"] == 16


def test_an_endpoint_that_does_not_exist(server: LocalRuntimeServer) -> None:
    code, _, text, err = bench(server, "missing-llm", "--requests", "3", "--concurrency", "1", "--warmup", "0")
    assert code == 1
    assert "requests: 3 = 0 ok + 3 failed (0.00 % success)" in text and "errors: ValidationError 3" in text
    assert err == (
        "sagemaker-pools: error: no request succeeded (ValidationError 3); check the endpoint name, region and credentials\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--concurrency", "2", "--processes", "3"], "--processes must be 1 to --concurrency (2)"),
        (["--rate", "0"], "--rate must be > 0"),
        (["--input", "/nonexistent/bodies.jsonl"], "cannot read --input /nonexistent/bodies.jsonl: No such file or directory"),
        (["--input", "BAD"], "--input BAD line 2 is not JSON"),
        (["--compare", "BAD"], "--compare BAD is not JSON"),
        (["--input", "BAD", "--body", "{}"], "give one of --input, --body, --input-tokens/--output-tokens/--shape and --replay"),
    ],
)
def test_invalid_arguments(server: LocalRuntimeServer, tmp_path: Path, args: list[str], message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"inputs": "ok"}\nnot json\n')
    args = [str(bad) if a == "BAD" else a for a in args]
    message = message.replace("BAD", str(bad))
    code, _, _, err = bench(server, "llm", *args)
    assert code == 2
    assert err.startswith(f"sagemaker-pools: error: {message}"), err
    assert err.count("\n") == 1


def test_version_and_an_unknown_flag_after_the_subcommand(server: LocalRuntimeServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("sagemaker-pools 0.")
    code, _, _, err = bench(server, "llm", "--concurency", "4")
    assert code == 2
    assert err == "sagemaker-pools: error: unrecognized arguments: --concurency 4 (see: sagemaker-pools bench --help)\n"


def test_an_unwritable_save_requests_path_fails_before_the_run(server: LocalRuntimeServer, tmp_path: Path) -> None:
    code, _, text, err = bench(server, "llm", "--requests", "3", "--warmup", "0", "--save-requests", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert code == 2 and text == ""
    assert err.startswith("sagemaker-pools: error: cannot write --save-requests ") and "No such file or directory" in err
    assert server.stats()["requests"] == 0  # nothing was sent


def test_the_seed_is_random_unless_given_and_printed(server: LocalRuntimeServer) -> None:
    args = ["llm", "--body", body(latency_ms=1), "--requests", "2", "--concurrency", "1", "--warmup", "0"]
    seeds = set()
    for _ in range(2):
        code, _, text, err = bench(server, *args)
        assert code == 0, err
        seeds.add(text.split("seed ", 1)[1].split()[0])
    assert len(seeds) == 2
    code, report, _, _ = bench(server, *args, "--seed", "42", "--json")
    assert report is not None and report["run"]["seed"] == 42


def test_gamma_arrivals_end_to_end(server: LocalRuntimeServer) -> None:
    code, report, _, err = bench(
        server, "llm", "--rate", "50", "--burstiness", "0.5", "--seed", "3", "--duration", "0.5", "--warmup", "0", "--concurrency", "8",
        "--processes", "2", "--body", body(latency_ms=2), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert report is not None and report["run"]["arrival"] == "gamma" and report["run"]["burstiness"] == 0.5
    assert report["requests"]["total"] == arrivals_before(0.5, rate=50, seed=3, workers=2, arrival="gamma", burstiness=0.5)
    code, _, _, err = bench(server, "llm", "--burstiness", "0.5")
    assert code == 2 and "--arrival and --burstiness need --rate" in err


def test_compare_says_within_noise_and_warns_on_a_different_load(server: LocalRuntimeServer, tmp_path: Path) -> None:
    import copy

    from sagemaker_pools.ops.bench.report import render_comparison

    code, report, _, err = bench(server, "llm", "--body", body(latency_ms=5), "--duration", "1", "--warmup", "0.2", "--concurrency", "2", "--json")
    assert code == 0, err
    assert report is not None
    spread = report["spread"]["figures"]["requests/s"]
    noise = (spread[1] - spread[0]) / 2
    assert noise > 0
    small, large = copy.deepcopy(report), copy.deepcopy(report)
    small["requests_per_s"] += noise * 0.9
    large["requests_per_s"] += noise * 1.1 + 1
    rows = {line.split("  ")[1].strip(): line for line in render_comparison(report, small, "old.json").splitlines() if line.startswith("  requests/s")}
    assert "within noise" in rows["requests/s"]
    text = render_comparison(report, large, "old.json")
    assert [line for line in text.splitlines() if line.startswith("  requests/s")][0].rstrip().endswith("better")
    assert "warning" not in text
    large["run"]["concurrency"] = 4
    assert "  warning: the runs used different concurrency (2 before, 4 now): the change mixes the load with the endpoint" in render_comparison(
        report, large, "old.json"
    )


def test_a_short_concurrency_is_reported() -> None:
    from sagemaker_pools.ops.bench.report import concurrency_warning

    report = {"run": {"mode": "closed", "concurrency": 100000, "concurrency_achieved": {"mean": 87.2, "max": 91}}, "requests": {"total": 500}}
    warning = concurrency_warning(report)
    assert warning is not None and warning.startswith("only 87.2 requests were in flight on average (peak 91), not the 100,000 asked")
    report["run"]["concurrency_achieved"] = {"mean": 95000.0, "max": 100000}
    assert concurrency_warning(report) is None


def test_achieved_concurrency_in_a_real_run(server: LocalRuntimeServer) -> None:
    code, report, _, err = bench(server, "llm", "--body", body(latency_ms=40), "--duration", "1", "--warmup", "0.3", "--concurrency", "4", "--json")
    assert code == 0, err
    assert report is not None
    achieved = report["run"]["concurrency_achieved"]
    assert achieved["max"] == 4 and 2.5 <= achieved["mean"] <= 4.0  # between requests a thread is briefly not in flight


def test_sweep_finds_max_concurrency_and_writes_the_capacity_file(tmp_path: Path) -> None:
    from sagemaker_pools import PoolCapacity

    # a model server that works on 2 requests at a time: beyond 2 in flight, requests queue
    with LocalRuntimeServer(Behaviour(latency_ms=40), slots=2) as limited:
        capacity = tmp_path / "capacity.json"
        PoolCapacity(instance_types={}).with_measurement("ml.g6.48xlarge", CapacityMeasurement(max_concurrency=3)).write(capacity)
        plot = tmp_path / "sweep.png"
        code, document, _, err = bench(
            limited, "llm", "--sweep", "1,2,8", "--slo", "p50=100ms", "--duration", "0.8", "--warmup", "0.2",
            "--instance-type", "ml.g6e.48xlarge", "--capacity-file", str(capacity), "--plot", str(plot), "--json",
        )  # fmt: skip
        assert code == 0, err
    assert document is not None
    assert document["schema"] == "sagemaker-pools-bench-sweep/1" and document["max_concurrency"] == 2
    assert [level["concurrency"] for level in document["levels"]] == [1, 2, 8]
    assert [level["holds"] for level in document["levels"]] == [True, True, False]
    queued = document["levels"][2]["report"]
    assert queued["latency_ms"]["p50"] >= 120  # 8 in flight on 2 slots of 40 ms: about 160 ms each
    # goodput counts requests within the bound one by one: with the p50 above the bound, fewer
    # than half can be; with it at or below, at least half are
    assert queued["goodput"]["share_of_ok"] < 0.5
    assert queued["goodput"]["requests_per_s"] == pytest.approx(queued["goodput"]["requests"] / queued["run"]["elapsed_s"])
    assert all(level["report"]["goodput"]["share_of_ok"] >= 0.5 for level in document["levels"][:2])
    assert "concurrency 8: " in err and "SLOs missed" in err
    read = PoolCapacity.from_file(capacity)  # merged: the earlier type is kept
    assert read.max_concurrency("ml.g6e.48xlarge") == 2 and read.max_concurrency("ml.g6.48xlarge") == 3
    assert read.instance_types["ml.g6e.48xlarge"].slos[0]["name"] == "p50"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_text_table(server: LocalRuntimeServer) -> None:
    code, _, text, err = bench(server, "llm", "--sweep", "1,2", "--slo", "p99=2s", "--body", body(latency_ms=5), "--duration", "0.4", "--warmup", "0")
    assert code == 0, err
    lines = text.splitlines()
    assert lines[0].startswith("Sweep of llm: closed loop, 0.4 s per level after 0.0 s warm-up, seed ")
    assert lines[1].split() == ["concurrency", "in", "flight", "requests/s", "goodput/s", "p50", "ms", "p90", "ms", "p99", "ms", "errors", "%", "SLOs", "hold"]
    assert [line.split()[0] for line in lines[2:4]] == ["1", "2"]
    assert "  max_concurrency: 2" in lines


def _with_stubbed_control_plane(sm: Any, url: str) -> Context:
    class Runtime(Clients):
        """Runtime calls to the local server; DescribeEndpoint/Config to the Stubber-wrapped client."""

        def sagemaker(self) -> Any:
            return sm

    return Context(clients=Runtime(AwsOptions(region="us-east-1", endpoint_url=url)), out=io.StringIO(), err=io.StringIO())


def test_sweep_takes_the_instance_type_from_describe_endpoint(sm: Any, stub: Any, tmp_path: Path) -> None:
    from ops_samples import ONE_POOL_CONFIG, ONE_POOL_ENDPOINT, THREE_POOLS_CONFIG, THREE_POOLS_ENDPOINT

    from sagemaker_pools import PoolCapacity

    capacity = tmp_path / "capacity.json"
    args = ["bench", "llm-prod", "--sweep", "1", "--slo", "p99=1s", "--duration", "0.3", "--warmup", "0", "--capacity-file", str(capacity)]
    with LocalRuntimeServer(Behaviour(latency_ms=2)) as local:
        stub.add_response("describe_endpoint", ONE_POOL_ENDPOINT, {"EndpointName": "llm-prod"})
        stub.add_response("describe_endpoint_config", ONE_POOL_CONFIG, {"EndpointConfigName": "llm-prod-config-1"})
        ctx = _with_stubbed_control_plane(sm, local.url)
        assert main(args, context=ctx) == 0, ctx.err.getvalue()
        assert PoolCapacity.from_file(capacity).max_concurrency("ml.g6e.48xlarge") == 1

        # three types in use: the command cannot tell which one was measured, and says so before the run
        stub.add_response("describe_endpoint", THREE_POOLS_ENDPOINT, {"EndpointName": "llm-prod"})
        stub.add_response("describe_endpoint_config", THREE_POOLS_CONFIG, {"EndpointConfigName": "llm-prod-config-2"})
        local.reset_stats()
        ctx = _with_stubbed_control_plane(sm, local.url)
        assert main(args, context=ctx) == 2
        assert ctx.err.getvalue() == (
            "sagemaker-pools: error: endpoint llm-prod runs 3 instance types (ml.g6.48xlarge, ml.g6e.48xlarge, ml.p4d.24xlarge): "
            "pass --instance-type for the capacity file\n"
        )
        assert local.stats()["requests"] == 0


def test_merge_is_the_report_of_every_request(server: LocalRuntimeServer, tmp_path: Path) -> None:
    from sagemaker_pools.ops.bench.report import load_report

    paths = []
    for latency, count in ((5, 12), (15, 8)):
        code, report, text, err = bench(
            server, "llm", "--stream", "--body", body(ttft_ms=latency, itl_ms=1, tokens=3), "--requests", str(count), "--concurrency", "2",
            "--warmup", "0", "--json",
        )  # fmt: skip
        assert code == 0, err
        path = tmp_path / f"client{latency}.json"
        path.write_text(text)
        paths.append(str(path))
    code, merged, _, err = bench(server, "--merge", *paths, "--json")
    assert code == 0, err
    assert merged is not None and merged["requests"]["total"] == 20 and merged["latency_ms"]["count"] == 20
    assert merged["itl_ms"]["count"] == 40 and merged["run"]["clients"] == 2
    a, b = (load_report(p) for p in paths)
    assert merged["requests_per_s"] == pytest.approx(a["requests_per_s"] + b["requests_per_s"])
    assert merged["latency_ms"]["max"] == pytest.approx(max(a["latency_ms"]["max"], b["latency_ms"]["max"]), rel=1e-3)
    assert merged["latency_ms"]["min"] == pytest.approx(min(a["latency_ms"]["min"], b["latency_ms"]["min"]), rel=1e-3)
    code, _, text, err = bench(server, "--merge", *paths)
    assert code == 0 and "merged from 2 client reports" in text and "HdrHistogram (3 significant digits) merged from 2 reports" in text
    code, _, _, err = bench(server, "llm", "--merge", *paths)
    assert code == 2 and "give no ENDPOINT" in err


def test_synthetic_bodies_and_tokenizer_end_to_end(server: LocalRuntimeServer, tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers

    tokenizer = tokenizers.Tokenizer(models.WordLevel(vocab={"[UNK]": 0, "tok": 1}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    server.behaviour = Behaviour(latency_ms=2, ttft_ms=2, itl_ms=1, tokens=5, report_tokens=False)
    try:
        code, report, _, err = bench(
            server, "llm", "--stream", "--input-tokens", "32", "--output-tokens", "8", "--tokenizer", str(path), "--requests", "6",
            "--concurrency", "2", "--warmup", "0", "--json",
        )  # fmt: skip
    finally:
        server.behaviour = Behaviour()
    assert code == 0, err
    assert report is not None
    assert report["output"]["tokens_total"] == 30 and report["output"]["tokens_counted_by_tokenizer"] == 6
    assert report["output"]["unit"] == "tokens (6 of 6 counted with --tokenizer)"
    assert report["tpot_ms"]["count"] == 6
    assert report["input"]["bodies"] == 100
    code, _, _, err = bench(server, "llm", "--tokenizer", str(tmp_path / "none.json"))
    assert code == 2 and "not a readable tokenizer.json" in err
