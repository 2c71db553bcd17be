"""bench and AIPerf: --aiperf-spec, --from-aiperf, and SageMaker's managed AI benchmark job (--managed).

SageMaker calls go to botocore's Stubber (conftest's ``sm`` and ``stub``) (requests and responses checked against the service
model); the job's exports are served by a local S3 stand-in on 127.0.0.1. The AIPerf exports
under fixtures/aiperf-chat follow AIPerf's documented format ("Working with Profile Export
Files") and are read-only.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from ops_support import NOW, Result, StubClients
from s3_standin import S3StandIn

from sagemaker_pools import WorkloadSpec
from sagemaker_pools.ops.bench.managed import POLL_INTERVAL_S
from sagemaker_pools.ops.cli import main
from sagemaker_pools.ops.context import Context

FIXTURE = Path(__file__).parent / "fixtures" / "aiperf-chat"
RECORDS = (FIXTURE / "profile_export.jsonl").read_bytes()
AGGREGATES = (FIXTURE / "profile_export_aiperf.json").read_bytes()
ENDPOINT = "llm-prod"
JOB = "llm-prod-20261129101500"
ROLE = "arn:aws:iam::123456789012:role/benchmark"
OUTPUT = "s3://results/benchmarks/"
WORKLOAD = "chat-c16"


def _fixture_records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDS.decode().splitlines()]


def _nearest_rank(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(p / 100 * len(ordered)) - 1]


# -- --from-aiperf -------------------------------------------------------------------------


def _run(*argv: str, clients: Any = None, sleep: Callable[[float], None] | None = None) -> Result:
    out, err = io.StringIO(), io.StringIO()
    sleeps: list[float] = []
    ctx = Context(
        clients=clients or StubClients(boto3.client("sagemaker", region_name="us-east-1")),
        out=out,
        err=err,
        sleep=sleep or sleeps.append,
        now=lambda: NOW,
    )
    code = main(list(argv), context=ctx)
    return Result(code, out.getvalue(), err.getvalue(), sleeps)


def test_a_local_aiperf_run_becomes_a_bench_report() -> None:
    result = _run("bench", "--from-aiperf", str(FIXTURE), "--json", "--max-error-rate", "20%", "--slo", "ttft_p99=300ms")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    records = _fixture_records()
    ok = [r for r in records if r["error"] is None]
    assert report["schema"] == "sagemaker-pools-bench/1"
    assert (report["requests"]["total"], report["requests"]["ok"]) == (20, 18)
    assert report["requests"]["errors"] == {"ServerError": 1, "TimeoutError": 1}
    assert report["run"]["mode"] == "closed" and report["run"]["concurrency"] == 4
    # every figure recomputed from the per-request export (nearest rank), not copied from AIPerf's aggregates
    latencies = [r["metrics"]["request_latency"]["value"] for r in ok]
    ttfts = [r["metrics"]["time_to_first_token"]["value"] for r in ok]
    assert report["latency_ms"]["p99"] == pytest.approx(_nearest_rank(latencies, 99))
    assert report["ttft_ms"]["p50"] == pytest.approx(_nearest_rank(ttfts, 50))
    assert report["itl_ms"]["count"] == sum(len(r["metrics"]["inter_chunk_latency"]["value"]) for r in ok)
    assert report["output"]["tokens_total"] == sum(r["metrics"]["output_token_count"]["value"] for r in ok)
    span = (max(r["metadata"]["request_end_ns"] for r in records) - min(r["metadata"]["request_start_ns"] for r in records)) / 1e9
    assert report["requests_per_s"] == pytest.approx(18 / span)
    assert report["goodput"]["requests"] == sum(1 for t in ttfts if t <= 300)
    assert report["source"]["aiperf_version"] == "0.13.0"
    assert report["source"]["aiperf"]["request_latency"]["unit"] == "ms"
    assert report["histograms"]["latency"] and report["histograms"]["ttft"]


def test_the_table_says_aiperf_measured_it() -> None:
    result = _run("bench", "--from-aiperf", str(FIXTURE), "--max-error-rate", "20%")
    assert result.code == 0, result.err
    assert "measured by AIPerf 0.13.0" in result.out
    assert "errors: ServerError 1, TimeoutError 1" in result.out
    assert "prompt tokens p50" in result.out


def test_an_aiperf_report_compares_and_merges_like_any_other(tmp_path: Path) -> None:
    first = _run("bench", "llm-prod", "--from-aiperf", str(FIXTURE), "--json", "--max-error-rate", "20%")
    saved = tmp_path / "a.json"
    saved.write_text(first.out)
    compared = _run("bench", "llm-prod", "--from-aiperf", str(FIXTURE), "--compare", str(saved), "--max-error-rate", "20%")
    assert compared.code == 0, compared.err
    assert "Compared with" in compared.out and "requests/s" in compared.out
    merged = _run("bench", "--merge", str(saved), str(saved), "--json", "--max-error-rate", "20%")
    assert merged.code == 0, merged.err
    assert json.loads(merged.out)["requests"]["total"] == 40


def test_too_many_failures_fail_the_run_as_locally() -> None:
    result = _run("bench", "--from-aiperf", str(FIXTURE))
    assert result.code == 1
    assert "10.00 % of requests failed" in result.err


def test_a_directory_without_the_export_is_refused(tmp_path: Path) -> None:
    (tmp_path / "inputs.json").write_text("{}")
    result = _run("bench", "--from-aiperf", str(tmp_path))
    assert result.code == 2
    assert "no profile_export.jsonl" in result.err and "inputs.json" in result.err


def test_from_aiperf_refuses_options_that_shape_a_local_load() -> None:
    result = _run("bench", "--from-aiperf", str(FIXTURE), "--concurrency", "32", "--stream")
    assert result.code == 2
    assert "--concurrency" in result.err and "--stream" in result.err


# -- --aiperf-spec -------------------------------------------------------------------------


def test_the_spec_of_a_run_is_the_workload_constructs_document(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    result = _run(
        "bench", "--aiperf-spec", str(path), "--input-tokens", "512", "--output-tokens", "128", "--rate", "20",
        "--arrival", "poisson", "--requests", "1000", "--stream", "--seed", "3", "--warmup", "0",
    )  # fmt: skip
    assert result.code == 0, result.err
    expected = WorkloadSpec(
        input_tokens_mean=512, output_tokens_mean=128, concurrency=8, request_rate=20.0, arrival="poisson",
        request_count=1000, streaming=True, seed=3, timeout_s=60.0, warmup_s=0.0,
    )  # fmt: skip
    assert json.loads(path.read_text()) == expected.document()
    assert "warmup_duration" not in expected.parameters()  # no warm-up: AIPerf refuses 0


def test_uniform_arrivals_become_constant_and_gamma_keeps_its_shape(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    assert _run("bench", "--aiperf-spec", str(path), "--rate", "5").code == 0
    assert json.loads(path.read_text())["parameters"]["arrival_pattern"] == "constant"
    assert _run("bench", "--aiperf-spec", str(path), "--rate", "5", "--burstiness", "0.5").code == 0
    parameters = json.loads(path.read_text())["parameters"]
    assert (parameters["arrival_pattern"], parameters["arrival_smoothness"]) == ("gamma", 0.5)


def test_what_the_spec_cannot_express_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    result = _run("bench", "--aiperf-spec", str(path), "--token-range-ratio", "0.2", "--http", "boto3", "--sweep", "1,2")
    assert result.code == 2
    for flag in ("--token-range-ratio", "--http", "--sweep"):
        assert flag in result.err
    assert not path.exists()


def test_one_stop_condition(tmp_path: Path) -> None:
    result = _run("bench", "--aiperf-spec", str(tmp_path / "s.json"), "--duration", "60", "--requests", "100")
    assert result.code == 2 and "not both" in result.err


# -- --managed -----------------------------------------------------------------------------


class _Clients(StubClients):
    def __init__(self, sagemaker: Any, s3: Any) -> None:
        super().__init__(sagemaker)
        self._s3 = s3

    def s3(self) -> Any:
        return self._s3


@pytest.fixture
def s3() -> Iterator[S3StandIn]:
    """The job's exports under the job's name, and an older job's beside them (not to be read)."""
    objects = {
        f"benchmarks/{JOB}/profile_export.jsonl": RECORDS,
        f"benchmarks/{JOB}/profile_export_aiperf.json": AGGREGATES,
        "benchmarks/llm-prod-20261128090000/profile_export.jsonl": b"not this one\n",
        f"benchmarks/{JOB}/inputs.json": b"{}",
    }
    with S3StandIn({"results": objects}) as server:
        yield server


def _job(name: str, status: str, workload: str = WORKLOAD, **extra: Any) -> dict[str, Any]:
    return {
        "AIBenchmarkJobName": name,
        "AIBenchmarkJobArn": f"arn:aws:sagemaker:us-east-1:123456789012:ai-benchmark-job/{name}",
        "AIBenchmarkJobStatus": status,
        "BenchmarkTarget": {"Endpoint": {"Identifier": ENDPOINT}},
        "OutputConfig": {"S3OutputLocation": OUTPUT},
        "AIWorkloadConfigIdentifier": workload,
        "RoleArn": ROLE,
        "CreationTime": dt.datetime(2026, 11, 29, 10, 15, tzinfo=dt.timezone.utc),
        **extra,
    }


def _expect_start(stub: Stubber, name: str = JOB, workload: str = WORKLOAD, describe_endpoint: bool = True) -> None:
    if describe_endpoint:
        stub.add_response(
            "describe_endpoint",
            {
                "EndpointName": ENDPOINT,
                "EndpointArn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{ENDPOINT}",
                "EndpointStatus": "InService",
                "CreationTime": NOW,
                "LastModifiedTime": NOW,
            },
            {"EndpointName": ENDPOINT},
        )
    stub.add_response(
        "create_ai_benchmark_job",
        {"AIBenchmarkJobArn": f"arn:aws:sagemaker:us-east-1:123456789012:ai-benchmark-job/{name}"},
        {
            "AIBenchmarkJobName": name,
            "BenchmarkTarget": {"Endpoint": {"Identifier": ENDPOINT}},
            "OutputConfig": {"S3OutputLocation": OUTPUT},
            "AIWorkloadConfigIdentifier": workload,
            "RoleArn": ROLE,
        },
    )


MANAGED = ("bench", ENDPOINT, "--managed", "--workload", WORKLOAD, "--role", ROLE, "--output", OUTPUT)


def test_a_managed_run_starts_the_job_follows_it_and_reports_its_exports(sm: Any, stub: Stubber, s3: S3StandIn) -> None:
    _expect_start(stub)
    stub.add_response("describe_ai_benchmark_job", _job(JOB, "InProgress"), {"AIBenchmarkJobName": JOB})
    stub.add_response("describe_ai_benchmark_job", _job(JOB, "Completed"), {"AIBenchmarkJobName": JOB})
    result = _run(*MANAGED, "--json", "--max-error-rate", "20%", clients=_Clients(sm, s3.client()))
    assert result.code == 0, result.err
    assert result.sleeps == [POLL_INTERVAL_S]
    assert f"started AI benchmark job {JOB}" in result.err and "InProgress" in result.err and "Completed" in result.err
    report = json.loads(result.out)
    assert report["endpoint"] == ENDPOINT and report["requests"]["ok"] == 18
    assert report["source"]["job"] == JOB and report["source"]["workload"] == WORKLOAD
    assert report["source"]["files"] == [f"s3://results/benchmarks/{JOB}/profile_export.jsonl", f"s3://results/benchmarks/{JOB}/profile_export_aiperf.json"]
    assert "GET /results/benchmarks/llm-prod-20261128090000/profile_export.jsonl" not in s3.requests


def test_a_failed_job_is_an_error_with_its_failure_reason(sm: Any, stub: Stubber, s3: S3StandIn) -> None:
    _expect_start(stub)
    reason = "The endpoint did not answer the chat completions API: 415 Unsupported Media Type"
    stub.add_response("describe_ai_benchmark_job", _job(JOB, "Failed", FailureReason=reason), {"AIBenchmarkJobName": JOB})
    result = _run(*MANAGED, clients=_Clients(sm, s3.client()))
    assert result.code == 1
    assert f"AI benchmark job {JOB} failed: {reason}" in result.err
    assert s3.requests == []  # nothing fetched


def test_ctrl_c_stops_the_job(sm: Any, stub: Stubber, s3: S3StandIn) -> None:
    _expect_start(stub)
    stub.add_response("describe_ai_benchmark_job", _job(JOB, "InProgress"), {"AIBenchmarkJobName": JOB})
    stub.add_response("stop_ai_benchmark_job", {"AIBenchmarkJobArn": f"arn:aws:sagemaker:us-east-1:123456789012:ai-benchmark-job/{JOB}"}, {"AIBenchmarkJobName": JOB})

    def interrupt(seconds: float) -> None:
        raise KeyboardInterrupt

    result = _run(*MANAGED, clients=_Clients(sm, s3.client()), sleep=interrupt)
    assert result.code == 130
    assert f"stopping AI benchmark job {JOB}" in result.err
    assert "stopped AI benchmark job" in result.err


def test_an_endpoint_that_is_not_in_service_is_refused_before_any_job(sm: Any, stub: Stubber) -> None:
    stub.add_response(
        "describe_endpoint",
        {"EndpointName": ENDPOINT, "EndpointArn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{ENDPOINT}", "EndpointStatus": "Updating", "CreationTime": NOW, "LastModifiedTime": NOW},
        {"EndpointName": ENDPOINT},
    )
    result = _run(*MANAGED, clients=StubClients(sm))
    assert result.code == 2 and "is Updating" in result.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("bench", ENDPOINT, "--managed", "--workload", WORKLOAD, "--output", OUTPUT), "--managed needs --role"),
        ((*MANAGED, "--concurrency", "64"), "the workload configuration defines the load: drop --concurrency"),
        (("bench", ENDPOINT, "--workload", WORKLOAD), "--workload needs --managed"),
        (("bench", ENDPOINT, "--managed", "--workload", WORKLOAD, "--role", ROLE, "--output", "results/benchmarks"), "not an s3://bucket/prefix URI"),
        ((*MANAGED, "--from-aiperf", str(FIXTURE)), "give one of"),
        ((*MANAGED, "--plot", "p.png"), "--plot needs --sweep"),
        ((*MANAGED, "--sweep", "1,2", "--capacity-file", "c.json"), "--capacity-file needs at least one --slo"),
    ],
    ids=["no role", "a local load option", "workload without managed", "output not s3", "two modes", "plot without sweep", "capacity without slo"],
)
def test_managed_refuses_what_cannot_work(argv: tuple[str, ...], message: str) -> None:
    result = _run(*argv)
    assert result.code == 2
    assert message in result.err


def test_a_managed_sweep_runs_one_job_a_level_and_writes_the_capacity_file(sm: Any, stub: Stubber, tmp_path: Path) -> None:
    base_spec = {"benchmark": {"type": "aiperf"}, "parameters": {"prompt_input_tokens_mean": 550, "concurrency": 16, "request_count": 20}}
    objects: dict[str, bytes] = {}
    stub.add_response(
        "describe_endpoint",
        {"EndpointName": ENDPOINT, "EndpointArn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{ENDPOINT}", "EndpointStatus": "InService", "CreationTime": NOW, "LastModifiedTime": NOW},
        {"EndpointName": ENDPOINT},
    )
    for level in (2, 4):
        workload, job = f"chat-c16-20261129101500-c{level}", f"{JOB}-c{level}"
        stub.add_response(
            "describe_ai_workload_config",
            {
                "AIWorkloadConfigName": WORKLOAD,
                "AIWorkloadConfigArn": f"arn:aws:sagemaker:us-east-1:123456789012:ai-workload-config/{WORKLOAD}",
                "AIWorkloadConfigs": {"WorkloadSpec": {"Inline": json.dumps(base_spec)}},
                "CreationTime": NOW,
            },
            {"AIWorkloadConfigName": WORKLOAD},
        )
        spec = {**base_spec, "parameters": {**base_spec["parameters"], "concurrency": level}}
        stub.add_response(
            "create_ai_workload_config",
            {"AIWorkloadConfigArn": f"arn:aws:sagemaker:us-east-1:123456789012:ai-workload-config/{workload}"},
            {"AIWorkloadConfigName": workload, "AIWorkloadConfigs": {"WorkloadSpec": {"Inline": json.dumps(spec, separators=(",", ":"))}}},
        )
        _expect_start(stub, name=job, workload=workload, describe_endpoint=False)
        stub.add_response("describe_ai_benchmark_job", _job(job, "Completed", workload), {"AIBenchmarkJobName": job})
        stub.add_response("delete_ai_workload_config", {}, {"AIWorkloadConfigName": workload})
        objects[f"benchmarks/{job}/profile_export.jsonl"] = RECORDS
    capacity = tmp_path / "capacity.json"
    with S3StandIn({"results": objects}) as s3:
        result = _run(
            *MANAGED, "--sweep", "2,4", "--slo", "ttft_p99=400ms", "--max-error-rate", "20%",
            "--capacity-file", str(capacity), "--instance-type", "ml.g6e.2xlarge", "--json",
            clients=_Clients(sm, s3.client()),
        )  # fmt: skip
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert [level["concurrency"] for level in document["levels"]] == [2, 4]
    assert document["max_concurrency"] == 4
    written = json.loads(capacity.read_text())
    assert written["instance_types"]["ml.g6e.2xlarge"]["max_concurrency"] == 4


def test_warm_up_records_are_left_out(tmp_path: Path) -> None:
    warmup = _fixture_records()[0]
    warmup["metadata"] = {**warmup["metadata"], "benchmark_phase": "warmup", "x_request_id": "warm-1"}
    (tmp_path / "profile_export.jsonl").write_text(json.dumps(warmup) + "\n" + RECORDS.decode())
    result = _run("bench", "--from-aiperf", str(tmp_path), "--json", "--max-error-rate", "20%")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["requests"]["total"] == 20
    assert report["source"]["aiperf"] is None  # no aggregates file: the per-request export is enough


def test_the_spec_refuses_an_inference_component(tmp_path: Path) -> None:
    result = _run("bench", "--aiperf-spec", str(tmp_path / "s.json"), "--inference-component", "chat")
    assert result.code == 2 and "--inference-component" in result.err and "give it with --managed" in result.err


def test_a_managed_sweep_refuses_an_open_loop_workload(sm: Any, stub: Stubber) -> None:
    stub.add_response(
        "describe_endpoint",
        {"EndpointName": ENDPOINT, "EndpointArn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{ENDPOINT}", "EndpointStatus": "InService", "CreationTime": NOW, "LastModifiedTime": NOW},
        {"EndpointName": ENDPOINT},
    )
    spec = {"benchmark": {"type": "aiperf"}, "parameters": {"request_rate": 5, "request_count": 100}}
    stub.add_response(
        "describe_ai_workload_config",
        {
            "AIWorkloadConfigName": WORKLOAD,
            "AIWorkloadConfigArn": f"arn:aws:sagemaker:us-east-1:123456789012:ai-workload-config/{WORKLOAD}",
            "AIWorkloadConfigs": {"WorkloadSpec": {"Inline": json.dumps(spec)}},
            "CreationTime": NOW,
        },
        {"AIWorkloadConfigName": WORKLOAD},
    )
    result = _run(*MANAGED, "--sweep", "2,4", clients=StubClients(sm))
    assert result.code == 2
    assert "--sweep runs closed loops" in result.err and "request_rate 5" in result.err
