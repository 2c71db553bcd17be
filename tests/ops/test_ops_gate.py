"""``sagemaker-pools gate`` against two local servers on 127.0.0.1 (and data capture files).

The baseline and the candidate are two :class:`LocalRuntimeServer` instances: alike (the
same behaviour) or answering differently (fewer tokens, slower, failing). Data capture is read
from a local folder and from S3 behind botocore's Stubber. Nothing reaches AWS.
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber
from ops_samples import config, endpoint, live_variant
from ops_support import NOW, StubClients

from sagemaker_pools import CapacityMeasurement, PoolCapacity
from sagemaker_pools.ops.aws import AwsOptions, Clients
from sagemaker_pools.ops.bench.localserver import Behaviour, LocalRuntimeServer
from sagemaker_pools.ops.cli import main
from sagemaker_pools.ops.context import Context
from sagemaker_pools.ops.gate.decoding import deterministic
from sagemaker_pools.ops.gate.report import SCHEMA

PROMPTS = 6
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def baseline() -> Iterator[LocalRuntimeServer]:
    """The primary build: 16 tokens an answer."""
    with LocalRuntimeServer(Behaviour(latency_ms=2, tokens=16)) as server:
        yield server


@pytest.fixture
def prompts(tmp_path: Path) -> Path:
    """Six TGI-style prompts that ask for sampling (the gate turns it off)."""
    path = tmp_path / "prompts.jsonl"
    lines = [json.dumps({"inputs": f"question {i}", "parameters": {"max_new_tokens": 16, "temperature": 0.7, "top_p": 0.9}}) for i in range(PROMPTS)]
    path.write_text("\n".join(lines) + "\n")
    return path


def gate(*args: str, clients: Clients | None = None) -> tuple[int, str, str]:
    """Run ``sagemaker-pools gate ARGS``: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    ctx = Context(clients=clients or Clients(AwsOptions(region="us-east-1")), out=out, err=err, now=lambda: NOW)
    code = main(["gate", *args], context=ctx)
    return code, out.getvalue(), err.getvalue()


def live(baseline: LocalRuntimeServer, candidate: LocalRuntimeServer, prompts: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """A live gate between two local servers, with --json: (exit code, report, stderr)."""
    code, out, err = gate(
        "--baseline", "llm/primary", "--candidate", "llm-g6/fallback", "--input", str(prompts),
        "--baseline-endpoint-url", baseline.url, "--candidate-endpoint-url", candidate.url, "--json", *args,
    )  # fmt: skip
    assert out.startswith("{"), err
    return code, json.loads(out), err


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["name"] == name)


def test_a_candidate_that_answers_alike_passes(baseline: LocalRuntimeServer, prompts: Path) -> None:
    baseline.reset_stats()
    with LocalRuntimeServer(Behaviour(latency_ms=2, tokens=16)) as candidate:
        code, report, err = live(baseline, candidate, prompts, "--threshold", "exact_match=1", "--threshold", "agreement=0.95", "--threshold", "p99=2s")
        served = candidate.stats()
    assert code == 0, err
    assert report["passed"] is True
    assert (report["exact_match"], report["agreement"], report["length_ratio"]) == (1.0, 1.0, 1.0)
    assert report["pairs"] == {"total": PROMPTS, "compared": PROMPTS, "baseline_failed": 0, "candidate_failed": 0}
    assert report["tokens"]["baseline"] == report["tokens"]["candidate"] == PROMPTS * 16
    # every prompt reached both sides once, plus one warm-up each, each with its TargetVariant
    assert served["target_variants"] == {"fallback": PROMPTS + 1}
    assert baseline.stats()["target_variants"] == {"primary": PROMPTS + 1}
    assert report["latency_ms"]["candidate"]["count"] == PROMPTS
    assert [c["name"] for c in report["checks"]] == ["compared", "exact_match", "agreement", "p99", "errors"]


def test_a_candidate_that_answers_differently_is_caught(baseline: LocalRuntimeServer, prompts: Path) -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=2, tokens=12)) as candidate:
        code, report, err = live(baseline, candidate, prompts, "--threshold", "agreement=0.95")
    assert code == 1
    assert report["passed"] is False
    assert report["exact_match"] == 0.0
    assert report["agreement"] == pytest.approx(12 / 16)  # 12 equal words, 16 in the longer answer
    assert report["length_ratio"] == pytest.approx(12 / 16)
    assert check(report, "agreement") == {"name": "agreement", "bound": 0.95, "measured": pytest.approx(0.75), "met": False}
    assert err == "sagemaker-pools: gate failed: llm-g6/fallback missed agreement 0.750 (needs >= 0.95)\n"
    assert len(report["examples"]) == 3 and report["examples"][0]["key"] == "request 1"


@pytest.mark.parametrize(
    ("threshold", "passes"),
    [
        ("agreement=0.7", True),
        ("agreement=80%", False),
        ("exact_match=0", True),
        ("exact_match=0.01", False),
        ("length_ratio=0.7..0.8", True),
        ("length_ratio=0.9..1.1", False),
    ],
)
def test_each_threshold_decides_the_exit_code(baseline: LocalRuntimeServer, prompts: Path, threshold: str, passes: bool) -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=2, tokens=12)) as candidate:
        code, report, _ = live(baseline, candidate, prompts, "--threshold", threshold)
    name = threshold.partition("=")[0]
    assert check(report, name)["met"] is passes
    assert code == (0 if passes else 1)


def test_a_slow_candidate_misses_a_latency_threshold(baseline: LocalRuntimeServer, prompts: Path) -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=150, tokens=16)) as candidate:
        code, report, err = live(baseline, candidate, prompts, "--threshold", "p99=100ms", "--threshold", "p50=10s")
    assert code == 1
    p99 = check(report, "p99")
    assert (p99["bound"], p99["met"]) == (100.0, False)
    assert p99["measured"] == report["latency_ms"]["candidate"]["p99"] >= 150.0  # the candidate's latency is judged
    assert check(report, "p50")["met"] is True
    assert report["latency_ms"]["baseline"]["count"] == PROMPTS
    assert "missed p99 " in err and "ms (needs <= 100 ms)" in err


def test_errors_on_the_candidate(baseline: LocalRuntimeServer, prompts: Path) -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=2, error="ModelError")) as candidate:
        code, report, err = live(baseline, candidate, prompts, "--threshold", "agreement=0.9")
    assert code == 1
    assert report["pairs"] == {"total": PROMPTS, "compared": 0, "baseline_failed": 0, "candidate_failed": PROMPTS}
    assert report["errors"] == {"baseline": {}, "candidate": {"ModelError": PROMPTS}}
    assert report["error_rate"]["candidate"] == 1.0
    assert report["agreement"] is None and check(report, "agreement")["met"] is False
    assert check(report, "compared") == {"name": "compared", "bound": 1, "measured": 0, "met": False}
    assert "missed compared 0 pairs (needs >= 1); agreement not measured (needs >= 0.9); errors 1.000 (needs <= 1 %)" in err


def test_errors_on_the_baseline_are_not_the_candidates(prompts: Path) -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=2, error="InternalFailure")) as failing, LocalRuntimeServer(Behaviour(latency_ms=2)) as candidate:
        code, report, err = live(failing, candidate, prompts, "--threshold", "errors=0")
    assert report["errors"] == {"baseline": {"InternalFailure": PROMPTS}, "candidate": {}}
    assert report["error_rate"] == {"baseline": 1.0, "candidate": 0.0}
    assert check(report, "errors")["met"] is True  # the candidate answered every request
    # but nothing could be compared, so the gate proves nothing and fails
    assert check(report, "compared")["met"] is False
    assert code == 1 and "missed compared 0 pairs (needs >= 1)\n" in err


def test_the_default_error_threshold_is_one_percent(baseline: LocalRuntimeServer, prompts: Path) -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=2)) as candidate:
        code, report, _ = live(baseline, candidate, prompts)
        assert check(report, "errors") == {"name": "errors", "bound": 0.01, "measured": 0.0, "met": True}
        assert code == 0
        code, report, _ = live(baseline, candidate, prompts, "--threshold", "errors=5%")
        assert [c["bound"] for c in report["checks"] if c["name"] == "errors"] == [0.05]


def test_decoding_is_made_deterministic_and_said_so(baseline: LocalRuntimeServer, prompts: Path) -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=2)) as candidate:
        _, report, _ = live(baseline, candidate, prompts)
        assert report["decoding"] == {
            "deterministic": True,
            "bodies": {"tgi": PROMPTS},
            "set": ["parameters.do_sample=false", "removed parameters.temperature", "removed parameters.top_p"],
        }
        _, report, _ = live(baseline, candidate, prompts, "--as-is")
        assert report["decoding"] is None


def test_the_bodies_sent_are_the_deterministic_ones(baseline: LocalRuntimeServer, prompts: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemaker_pools.ops import gate_cmd

    sent: list[tuple[bytes, ...]] = []
    real = gate_cmd.send_pairs

    def recording(bodies: Any, **kwargs: Any) -> Any:
        sent.append(tuple(bodies))
        return real(bodies, **kwargs)

    monkeypatch.setattr(gate_cmd, "send_pairs", recording)
    with LocalRuntimeServer(Behaviour(latency_ms=2)) as candidate:
        live(baseline, candidate, prompts)
        live(baseline, candidate, prompts, "--as-is")
    decoded, as_is = sent
    assert [json.loads(b)["parameters"] for b in decoded] == [{"max_new_tokens": 16, "do_sample": False}] * PROMPTS
    assert [json.loads(b) for b in as_is] == [json.loads(line) for line in prompts.read_text().splitlines()]


def test_deterministic_bodies_per_format() -> None:
    tgi = deterministic(b'{"inputs": "hi", "parameters": {"temperature": 0.8, "top_k": 50, "max_new_tokens": 9}}', seed=7)
    assert tgi.style == "tgi"
    assert json.loads(tgi.body) == {"inputs": "hi", "parameters": {"max_new_tokens": 9, "do_sample": False}}
    assert tgi.changes == ("parameters.do_sample=false", "removed parameters.temperature", "removed parameters.top_k")
    chat = deterministic(b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 1}', seed=7)
    assert chat.style == "openai"
    assert json.loads(chat.body)["temperature"] == 0 and json.loads(chat.body)["seed"] == 7
    completion = deterministic(b'{"prompt": "hi"}', seed=0)
    assert completion.style == "openai" and completion.changes == ("temperature=0", "seed=0")
    for body in (b"a,b,c", b"[1, 2]", b'{"instances": [1]}', b'{"inputs": "x", "parameters": "fast"}'):
        unknown = deterministic(body, seed=0)
        assert (unknown.style, unknown.body, unknown.changes) == ("unknown", body, ())


def test_text_report(baseline: LocalRuntimeServer, prompts: Path) -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=2, tokens=12)) as candidate:
        code, out, _ = gate(
            "--baseline", "llm", "--candidate", "llm-g6", "--input", str(prompts), "--baseline-endpoint-url", baseline.url,
            "--candidate-endpoint-url", candidate.url, "--threshold", "agreement=0.7",
        )  # fmt: skip
    assert code == 0
    assert out.startswith("Gate: llm-g6 against llm (requests sent to both)\n")
    assert "exact match 0.0 %, token agreement 75.0 %, length ratio 0.750" in out
    assert "  met    agreement: 0.750 (needs >= 0.7)" in out
    assert out.rstrip().endswith("PASSED")


def test_tokenizer_compares_token_ids(baseline: LocalRuntimeServer, prompts: Path, tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    model = tokenizers.models.WordLevel({"[UNK]": 0, "tok": 1}, unk_token="[UNK]")
    tokenizer = tokenizers.Tokenizer(model)
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    with LocalRuntimeServer(Behaviour(latency_ms=2, tokens=12)) as candidate:
        _, report, _ = live(baseline, candidate, prompts, "--tokenizer", str(path))
    assert report["tokens"] == {"unit": f"tokens of {path}", "baseline": PROMPTS * 16, "candidate": PROMPTS * 12}
    assert report["agreement"] == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--threshold", "agree=0.9"], "expected NAME=VALUE with NAME one of exact_match, agreement, length_ratio, p50, p90, p95, p99, errors"),
        (["--threshold", "agreement=high"], "agreement is a share from 0 to 1 or a percentage"),
        (["--threshold", "length_ratio=1.1..0.9"], "length_ratio is a range LOW..HIGH with 0 <= LOW <= HIGH"),
        (["--threshold", "p99=fast"], "a latency bound is a duration > 0 in ms or s, e.g. p99=2s"),
        (["--baseline", "llm/bad_variant"], "variant 'bad_variant' is not a SageMaker name"),
        (["--from-capture", "/tmp/nowhere"], "give --input FILE.jsonl (send requests) or --from-capture SOURCE"),
        (["--capacity-file", "c.json"], "--capacity-file needs at least one --threshold"),
        (["--build", "v1"], "--build is recorded in the capacity file: give --capacity-file"),
    ],
)
def test_invalid_arguments_exit_2_naming_the_problem(prompts: Path, args: list[str], message: str) -> None:
    code, out, err = gate("--baseline", "llm", "--candidate", "llm-g6", "--input", str(prompts), *args)
    assert code == 2
    assert message in err and out == ""


# -- data capture ----------------------------------------------------------------------------


def record(*, inference_id: str | None = None, event_id: str, prompt: str, answer: str | None, base64_output: bool = False) -> dict[str, Any]:
    """One data capture record, as an endpoint with DataCaptureConfig writes it."""
    output: dict[str, Any] | None = None
    if answer is not None:
        data = json.dumps({"generated_text": answer})
        output = {"observedContentType": "application/json", "mode": "OUTPUT", "encoding": "JSON", "data": data}
        if base64_output:
            output = {**output, "encoding": "BASE64", "data": base64.b64encode(data.encode()).decode()}
    metadata: dict[str, Any] = {"eventId": event_id, "inferenceTime": "2026-12-02T10:00:00Z"}
    if inference_id is not None:
        metadata["inferenceId"] = inference_id
    capture: dict[str, Any] = {"endpointInput": {"observedContentType": "application/json", "mode": "INPUT", "encoding": "JSON", "data": json.dumps({"inputs": prompt})}}
    if output is not None:
        capture["endpointOutput"] = output
    return {"captureData": capture, "eventMetadata": metadata, "eventVersion": "0"}


PRODUCTION = [
    record(inference_id="a", event_id="e1", prompt="p1", answer="one two three four"),
    record(inference_id="b", event_id="e2", prompt="p2", answer="five six"),
    record(event_id="e3", prompt="p3", answer="seven eight"),
    record(event_id="e4", prompt="p4", answer="not copied to the shadow"),
    record(inference_id="m", event_id="e5", prompt="p5", answer="x"),
]
SHADOW = [
    record(inference_id="a", event_id="s1", prompt="p1", answer="one two three four", base64_output=True),
    record(inference_id="b", event_id="s2", prompt="p2", answer="five seven"),
    record(event_id="e3", prompt="p3", answer="seven eight"),
    record(inference_id="m", event_id="s5", prompt="something else", answer="x"),
    record(inference_id="z", event_id="s9", prompt="p9", answer="only in the shadow"),
]


def write_capture(root: Path, endpoint_name: str, variant: str, records: list[dict[str, Any]]) -> None:
    folder = root / endpoint_name / variant / "2026" / "12" / "02" / "10"
    folder.mkdir(parents=True)
    half = len(records) // 2  # two files an hour, as SageMaker rolls them
    (folder / "10-00-000-aaaa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[:half]))
    (folder / "10-05-000-bbbb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[half:]))


def expect_capture_figures(report: dict[str, Any]) -> None:
    assert report["source"] == "capture" and report["latency_ms"] is None and report["decoding"] is None
    assert report["capture"] == {
        "baseline_records": 5,
        "candidate_records": 5,
        "paired_by": {"inferenceId": 2, "eventId": 1},
        "input_mismatches": 1,
        "unpaired": {"baseline": 1, "candidate": 1},
    }
    assert report["pairs"]["compared"] == 3
    assert report["exact_match"] == pytest.approx(2 / 3)
    assert report["agreement"] == pytest.approx((4 + 1 + 2) / (4 + 2 + 2))  # "five seven" shares its first word
    assert report["length_ratio"] == 1.0


def test_from_capture_in_a_local_folder(tmp_path: Path) -> None:
    write_capture(tmp_path, "llm-prod", "AllTraffic", PRODUCTION)
    write_capture(tmp_path, "llm-prod", "shadow-g6", SHADOW)
    code, out, err = gate(
        "--baseline", "llm-prod/AllTraffic", "--candidate", "llm-prod/shadow-g6", "--from-capture", str(tmp_path),
        "--threshold", "agreement=0.8", "--json",
    )  # fmt: skip
    report = json.loads(out)
    expect_capture_figures(report)
    assert code == 0, err
    assert report["examples"][0]["key"] == "inferenceId b"


def s3_object(records: list[dict[str, Any]]) -> dict[str, Any]:
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    return {"Body": StreamingBody(io.BytesIO(data), len(data)), "ContentLength": len(data)}


def test_from_capture_in_s3(sm: Any) -> None:
    s3 = boto3.client("s3", region_name="us-east-1")

    class WithS3(StubClients):
        def s3(self) -> Any:
            return s3

    prefix = "capture/llm-prod"
    with Stubber(s3) as stub:
        for variant, records in (("AllTraffic", PRODUCTION), ("shadow-g6", SHADOW)):
            key = f"{prefix}/llm-prod/{variant}/2026/12/02/10/10-00-000-aaaa.jsonl"
            listing = {"Contents": [{"Key": key}, {"Key": f"{prefix}/llm-prod/{variant}/2026/12/02/10/notes.txt"}], "IsTruncated": False}
            stub.add_response("list_objects_v2", listing, {"Bucket": "capture-bucket", "Prefix": f"{prefix}/llm-prod/{variant}/"})
            stub.add_response("get_object", s3_object(records), {"Bucket": "capture-bucket", "Key": key})
        code, out, err = gate(
            "--baseline", "llm-prod/AllTraffic", "--candidate", "llm-prod/shadow-g6", "--from-capture", f"s3://capture-bucket/{prefix}/",
            "--threshold", "agreement=0.9", "--json", clients=WithS3(sm),
        )  # fmt: skip
        stub.assert_no_pending_responses()
    report = json.loads(out)
    expect_capture_figures(report)
    assert code == 1  # agreement 0.875 < 0.9
    assert "missed agreement 0.875 (needs >= 0.9)" in err


def test_from_capture_refusals(tmp_path: Path) -> None:
    args = ["--baseline", "llm-prod/AllTraffic", "--candidate", "llm-prod/shadow-g6", "--from-capture", str(tmp_path)]
    code, _, err = gate(*args, "--threshold", "p99=2s")
    assert (code, err) == (2, "sagemaker-pools: error: --threshold p99: captured records carry no latency; latency thresholds need --input\n")
    code, _, err = gate("--baseline", "llm-prod", "--candidate", "llm-prod/shadow-g6", "--from-capture", str(tmp_path))
    assert code == 2 and "give --baseline ENDPOINT/VARIANT" in err
    code, _, err = gate(*args, "--as-is")
    assert code == 2 and "--as-is is for requests sent to both sides" in err
    code, _, err = gate(*args)
    assert code == 2 and f"no folder {tmp_path}/llm-prod/AllTraffic/" in err
    write_capture(tmp_path, "llm-prod", "AllTraffic", PRODUCTION)
    (tmp_path / "llm-prod" / "shadow-g6").mkdir()
    (tmp_path / "llm-prod" / "shadow-g6" / "x.jsonl").write_text('{"not": "a capture"}\n')
    code, _, err = gate(*args)
    assert code == 1 and "x.jsonl line 1 has no captureData object: not a SageMaker data capture record" in err


# -- the capacity file -----------------------------------------------------------------------


def shadow_endpoint() -> tuple[dict[str, Any], dict[str, Any]]:
    """llm-prod: production on g6e, a shadow variant on one g6 (the fallback build)."""
    shadow = live_variant({"ml.g6.48xlarge": 1}, name="shadow-g6")
    described = endpoint("llm-prod", "llm-prod-config-3", [live_variant({"ml.g6e.48xlarge": 2})], ShadowProductionVariants=[shadow])
    configured = config(
        "llm-prod-config-3",
        [{"VariantName": "AllTraffic", "ModelName": "llm-70b", "InitialInstanceCount": 2, "InstancePools": [{"InstanceType": "ml.g6e.48xlarge", "Priority": 1}]}],
        ShadowProductionVariants=[{"VariantName": "shadow-g6", "ModelName": "llm-70b-g6", "InitialInstanceCount": 1, "InstanceType": "ml.g6.48xlarge"}],
    )
    return described, configured


def test_the_result_is_merged_into_the_capacity_file_per_instance_type(sm: Any, stub: Any, tmp_path: Path) -> None:
    capacity = tmp_path / "capacity.json"
    PoolCapacity(instance_types={"ml.g6.48xlarge": CapacityMeasurement(max_concurrency=16)}).write(capacity)
    write_capture(tmp_path / "cap", "llm-prod", "AllTraffic", PRODUCTION)
    write_capture(tmp_path / "cap", "llm-prod", "shadow-g6", SHADOW)
    described, configured = shadow_endpoint()
    stub.add_response("describe_endpoint", described, {"EndpointName": "llm-prod"})
    stub.add_response("describe_endpoint_config", configured, {"EndpointConfigName": "llm-prod-config-3"})
    args = ["--baseline", "llm-prod/AllTraffic", "--candidate", "llm-prod/shadow-g6", "--from-capture", str(tmp_path / "cap"), "--capacity-file", str(capacity)]
    code, _, err = gate(*args, "--threshold", "agreement=0.8", "--build", "llm-70b-int4-v3", clients=StubClients(sm))
    assert code == 0, err
    assert err == f"{capacity}: ml.g6.48xlarge gate passed\n"
    read = PoolCapacity.from_file(capacity)
    assert read.max_concurrency("ml.g6.48xlarge") == 16  # the bench measurement is kept
    gate_result = read.require_gate("ml.g6.48xlarge", build="llm-70b-int4-v3")
    assert (gate_result.baseline, gate_result.candidate, gate_result.source, gate_result.pairs) == ("llm-prod/AllTraffic", "llm-prod/shadow-g6", "capture", 3)
    assert gate_result.checked_at == NOW.isoformat(timespec="seconds")
    assert [c["name"] for c in gate_result.checks] == ["compared", "agreement", "errors"]

    # a later failing gate of the same type replaces the passing one: the build no longer qualifies
    code, _, err = gate(*args, "--threshold", "agreement=0.99", "--instance-type", "ml.g6.48xlarge")
    assert code == 1 and err.startswith(f"{capacity}: ml.g6.48xlarge gate failed\n")
    read = PoolCapacity.from_file(capacity)
    assert read.gate("ml.g6.48xlarge") is not None and read.gate("ml.g6.48xlarge").passed is False  # type: ignore[union-attr]
    assert "agreement missed" in (read.gate_problem("ml.g6.48xlarge") or "")
    assert read.max_concurrency("ml.g6.48xlarge") == 16


def test_an_unknown_instance_type_fails_before_anything_is_sent(baseline: LocalRuntimeServer, prompts: Path, tmp_path: Path) -> None:
    baseline.reset_stats()
    code, _, err = gate(
        "--baseline", "llm", "--candidate", "llm-g6", "--input", str(prompts), "--baseline-endpoint-url", baseline.url,
        "--candidate-endpoint-url", baseline.url, "--threshold", "agreement=0.9", "--capacity-file", str(tmp_path / "c.json"),
        "--instance-type", "ml.g9.huge",
    )  # fmt: skip
    assert code == 2 and "--instance-type" in err and "ml.g9.huge" in err
    assert baseline.stats()["requests"] == 0
    assert not (tmp_path / "c.json").exists()


def test_the_json_schema_is_documented(baseline: LocalRuntimeServer, prompts: Path) -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=2)) as candidate:
        _, report, _ = live(baseline, candidate, prompts, "--threshold", "agreement=0.9")
    assert report["schema"] == SCHEMA
    docs = (REPO / "docs" / "ops.md").read_text()
    section = docs[docs.index("### gate --json schema") :]
    section = section[: section.index("\n## ", 1) if "\n## " in section[1:] else len(section)]
    first_cells = re.findall(r"^\| ([^|]+) \|", section, flags=re.MULTILINE)  # each table row's key column
    documented = {key for cell in first_cells for key in re.findall(r"`([a-z_]+)`", cell)}
    assert set(report) <= documented, f"undocumented keys: {sorted(set(report) - documented)}"
    for key in ("pairs", "latency_ms", "capture", "decoding", "checks"):
        assert key in documented
