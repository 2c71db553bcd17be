"""``sagemaker-pools recommend`` against Stubber-checked DescribeAIRecommendationJob responses."""

from __future__ import annotations

import json
from typing import Any

import ops_samples as s
import pytest
from botocore.stub import Stubber

from sagemaker_pools.ops.recommend import Metric


def _job(stub: Stubber, job: dict[str, Any]) -> None:
    stub.add_response("describe_ai_recommendation_job", job, {"AIRecommendationJobName": "llama-70b-recs"})


def test_table_order_and_code(stub: Stubber, run_cli: Any) -> None:
    _job(stub, s.recommendation_job(recommendations=s.RECOMMENDATIONS))
    result = run_cli("recommend", "llama-70b-recs")
    assert result.code == 0, result.err
    out = result.out
    table = out.split("\n\n", 1)[0].splitlines()
    assert table[0] == "AI recommendation job llama-70b-recs: 4 recommendations"
    assert table[2].split() == ["1", "ml.g6e.48xlarge", "1", "2", "4.10", "USD/1M", "tokens", "5200", "tokens/s", "180", "ms", "-"]
    assert table[3].split()[-1] == "SpeculativeDecoding"
    assert "     inference spec    g6-48xlarge-spec" in out
    assert "     environment       OPTION_TENSOR_PARALLEL_DEGREE=4, OPTION_MAX_ROLLING_BATCH_SIZE=64" in out
    assert "     image             763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128" in out
    assert "Proposed pools by cost: ml.g6.48xlarge > ml.g6e.48xlarge > ml.p4d.24xlarge" in out
    assert "left out: recommendation 4 (ml.g6.48xlarge): a better-ranked recommendation has the same instance type" in out
    code = out[out.index('"""Instance pools from AI recommendation job'):]
    compile(code, "pools.py", "exec")
    assert code.count("PoolModel.from_recommendation(") == 3 and code.count("InstancePool(") == 3
    assert (
        '        model_g6_48xlarge = PoolModel.from_recommendation(\n'
        "            self,\n"
        '            "ModelG648xlarge",\n'
        '            model_package_arn="arn:aws:sagemaker:us-east-1:123456789012:model-package/llama-70b-recs/1",\n'
        '            inference_specification_name="g6-48xlarge-spec",\n'
        "            environment={\n"
        '                "OPTION_TENSOR_PARALLEL_DEGREE": "4",\n'
    ) in code
    pools = code.split("pools = [\n", 1)[1].split("]", 1)[0].split("\n")
    assert [p.strip() for p in pools if p.strip()] == [
        'InstancePool(instance_type="ml.g6.48xlarge", model=model_g6_48xlarge),',
        'InstancePool(instance_type="ml.g6e.48xlarge", model=model_g6e_48xlarge),',
        'InstancePool(instance_type="ml.p4d.24xlarge", model=model_p4d_24xlarge),',
    ]


@pytest.mark.parametrize(
    ("order_by", "expected"),
    [
        ("cost", ["ml.g6.48xlarge", "ml.g6e.48xlarge", "ml.p4d.24xlarge"]),
        ("throughput", ["ml.p4d.24xlarge", "ml.g6e.48xlarge", "ml.g6.48xlarge"]),
        ("ttft", ["ml.p4d.24xlarge", "ml.g6e.48xlarge", "ml.g6.48xlarge"]),
    ],
)
def test_order_by_json(stub: Stubber, run_cli: Any, order_by: str, expected: list[str]) -> None:
    _job(stub, s.recommendation_job(recommendations=s.RECOMMENDATIONS))
    result = run_cli("recommend", "llama-70b-recs", "--order-by", order_by, "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert [p["instance_type"] for p in data["pools"]] == expected
    assert data["order_by"] == order_by
    rec = data["recommendations"][1]
    assert rec["model_package_arn"] == "arn:aws:sagemaker:us-east-1:123456789012:model-package/llama-70b-recs/1"
    assert rec["inference_specification_name"] == "g6-48xlarge-spec"
    assert rec["copies_per_instance"] == 2 and rec["optimizations"] == ["SpeculativeDecoding"]
    assert {"name": "ttft-ms", "stat": "p50", "value": "260", "unit": "ms"} in rec["expected_performance"]
    compile(data["code"], "pools.py", "exec")


def test_the_median_ttft_is_preferred_over_other_statistics() -> None:
    from sagemaker_pools.ops.recommend import parse_job

    rec = parse_job(s.recommendation_job(recommendations=s.RECOMMENDATIONS[:1]))[0]
    metric = rec.metric("ttft")
    assert metric is not None and (metric.stat, metric.number) == ("p50", 180.0)
    assert Metric("Time To First Token", None, "1,200", "ms").kind == "ttft"
    assert Metric("OutputTokensPerSecond", "avg", "n/a", None).number is None
    assert Metric("OutputTokensPerSecond", "avg", "12", None).kind == "throughput"
    assert Metric("CostPerMillionTokens", None, "2", "USD").kind == "cost"


def test_missing_metrics_rank_last_and_undeployable_ones_are_left_out(stub: Stubber, run_cli: Any) -> None:
    no_metrics = s.recommendation("ml.g5.48xlarge", "g5-48xlarge", "1", "1", "1")
    no_metrics.pop("ExpectedPerformance")
    broken = {"RecommendationDescription": "no model details"}
    _job(stub, s.recommendation_job(recommendations=[no_metrics, broken, *s.RECOMMENDATIONS[:2]]))
    data = json.loads(run_cli("recommend", "llama-70b-recs", "--json").out)
    assert [p["instance_type"] for p in data["pools"]] == ["ml.g6.48xlarge", "ml.g6e.48xlarge", "ml.g5.48xlarge"]
    assert data["notes"] == ["recommendation 1 (ml.g5.48xlarge) reports no numeric cost metric: ranked after those that do"]
    assert data["left_out"] == ["recommendation 2 (no instance type): no model package ARN, inference specification or instance type"]


def test_at_most_five_pools(stub: Stubber, run_cli: Any) -> None:
    types = ["ml.g5.48xlarge", "ml.g6.48xlarge", "ml.g6e.48xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g6e.24xlarge"]
    recs = [s.recommendation(t, f"spec-{i}", str(i + 1), "100", "100") for i, t in enumerate(types)]
    _job(stub, s.recommendation_job(recommendations=recs))
    data = json.loads(run_cli("recommend", "llama-70b-recs", "--json").out)
    assert [p["instance_type"] for p in data["pools"]] == types[:5]
    assert data["left_out"] == ["recommendation 6 (ml.g6e.24xlarge): a variant holds at most 5 pools"]


@pytest.mark.parametrize(
    ("status", "extra", "message"),
    [
        ("InProgress", {}, "recommendation job llama-70b-recs is InProgress; recommendations exist only once it is Completed"),
        (
            "Failed",
            {"FailureReason": "Benchmark on ml.p4d.24xlarge failed: insufficient capacity"},
            "recommendation job llama-70b-recs is Failed: Benchmark on ml.p4d.24xlarge failed: insufficient capacity; "
            "recommendations exist only once it is Completed",
        ),
        ("Completed", {}, "recommendation job llama-70b-recs is Completed but returned no recommendations"),
    ],
)
def test_a_job_without_results_fails(stub: Stubber, run_cli: Any, status: str, extra: dict[str, Any], message: str) -> None:
    _job(stub, s.recommendation_job(status=status, **extra))
    result = run_cli("recommend", "llama-70b-recs")
    assert (result.code, result.out, result.err) == (1, "", f"sagemaker-pools: error: {message}\n")


def test_no_deployable_recommendation_fails_after_the_table(stub: Stubber, run_cli: Any) -> None:
    _job(stub, s.recommendation_job(recommendations=[{"RecommendationDescription": "nothing"}]))
    result = run_cli("recommend", "llama-70b-recs")
    assert result.code == 1
    assert "AI recommendation job llama-70b-recs: 1 recommendations" in result.out
    assert result.err.startswith("sagemaker-pools: error: none of the 1 recommendations names an instance type")


def test_not_found(stub: Stubber, run_cli: Any) -> None:
    stub.add_client_error(
        "describe_ai_recommendation_job", service_error_code="ResourceNotFound", service_message="Job llama-70b-recs not found", http_status_code=400
    )
    result = run_cli("recommend", "llama-70b-recs")
    assert (result.code, result.err) == (1, "sagemaker-pools: error: AI recommendation job not found: Job llama-70b-recs not found\n")
