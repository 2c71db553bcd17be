"""BenchmarkWorkload (an AIWorkloadConfig as typed props) and BenchmarkRole (what a benchmark job runs as)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import cfnlint.api
import pytest
from aws_cdk import Duration
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3

from sagemaker_pools import BenchmarkRole, BenchmarkWorkload, InstancePool, PooledEndpoint, PoolModel, WorkloadSpec
from support.contract import template_problems
from support.rules import refused_in_new_stack, unreached_rules
from support.synth import new_app, new_stack, resource_types, resources, template_of

G6E = "ml.g6e.48xlarge"


def _endpoint(stack: cdk.Stack) -> PooledEndpoint:
    return PooledEndpoint(stack, "Endpoint", model=PoolModel.from_model_name(stack, "Base", "base-model"), pools=[InstancePool(instance_type=G6E)])


def _spec_of(template: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    (config,) = [v for k, v in resources(template, "AWS::SageMaker::AIWorkloadConfig").items() if k.startswith(prefix)]
    return json.loads(config["Properties"]["AIWorkloadConfigs"]["WorkloadSpec"]["Inline"])  # type: ignore[no-any-return]


def test_props_become_the_inline_aiperf_spec_under_aiperfs_option_names() -> None:
    stack = new_stack()
    workload = BenchmarkWorkload(
        stack, "Chat",
        input_tokens_mean=550, input_tokens_stddev=150, output_tokens_mean=150, output_tokens_stddev=50,
        concurrency=16, duration=Duration.minutes(5), warmup=Duration.seconds(30), seed=7,
    )  # fmt: skip
    template = template_of(stack)
    assert _spec_of(template) == {
        "benchmark": {"type": "aiperf"},
        "parameters": {
            "prompt_input_tokens_mean": 550,
            "prompt_input_tokens_stddev": 150,
            "output_tokens_mean": 150,
            "output_tokens_stddev": 50,
            "concurrency": 16,
            "benchmark_duration": 300,
            "warmup_duration": 30,
            "streaming": True,
            "random_seed": 7,
        },
    }
    (config,) = resources(template, "AWS::SageMaker::AIWorkloadConfig").values()
    assert config["Properties"]["AIWorkloadConfigName"] == workload.workload_name
    assert "DatasetConfig" not in config["Properties"]


def test_an_open_loop_writes_rate_and_arrivals() -> None:
    stack = new_stack()
    BenchmarkWorkload(stack, "Bursty", request_rate=12.5, arrival="gamma", arrival_smoothness=0.5, request_count=2000, streaming=False)
    parameters = _spec_of(template_of(stack))["parameters"]
    assert parameters == {"request_rate": 12.5, "arrival_pattern": "gamma", "arrival_smoothness": 0.5, "request_count": 2000, "streaming": False}


def test_the_generated_name_is_lowercase_and_changes_with_the_workload() -> None:
    """Every property is create-only: a changed workload must get a new name for CloudFormation to replace it."""
    names = []
    for concurrency in (16, 16, 32):
        stack = new_stack()
        names.append(BenchmarkWorkload(stack, "Chat", concurrency=concurrency, request_count=100).workload_name)
    assert names[0] == names[1] != names[2]
    assert all(n == n.lower() and len(n) <= 63 for n in names)


def test_a_dataset_is_a_channel_of_the_bucket_and_replaces_synthetic_prompts() -> None:
    stack = new_stack()
    bucket = s3.Bucket.from_bucket_name(stack, "Data", "my-traffic")
    BenchmarkWorkload(stack, "Replay", dataset_bucket=bucket, dataset_key="captured/chat.jsonl", concurrency=8, duration=Duration.minutes(10))
    (config,) = resources(template_of(stack), "AWS::SageMaker::AIWorkloadConfig").values()
    assert config["Properties"]["DatasetConfig"] == {
        "InputDataConfig": [{"ChannelName": "dataset", "DataSource": {"S3DataSource": {"S3Uri": "s3://my-traffic/captured/chat.jsonl"}}}]
    }


def _benchmark_stack(*, encrypted: bool, prefix_dataset: bool, parameters: bool = False) -> cdk.Stack:
    """The workload, its role and a results bucket; with ``parameters``, the workload's name and the
    output prefix are ``CfnParameter``s (the two props that may be)."""
    stack = cdk.Stack(new_app(), "Bench")
    named: dict[str, Any] = {}
    if parameters:
        named["workload_name"] = cdk.CfnParameter(stack, "WorkloadName", default="chat-replay").value_as_string
        named["output_prefix"] = cdk.CfnParameter(stack, "OutputPrefix", default="benchmarks/").value_as_string
    endpoint = _endpoint(stack)
    key = kms.Key(stack, "Key", enable_key_rotation=True) if encrypted else None
    logs = s3.Bucket(stack, "Logs", enforce_ssl=True, encryption=s3.BucketEncryption.S3_MANAGED)
    bucket = s3.Bucket(
        stack, "Results", enforce_ssl=True, server_access_logs_bucket=logs,
        encryption_key=key, encryption=s3.BucketEncryption.KMS if key else s3.BucketEncryption.S3_MANAGED,
    )  # fmt: skip
    cdk.Validations.of(logs).acknowledge(cdk.Acknowledgment(id="AwsSolutions::AwsSolutions-S1", reason="the access-log bucket of the results bucket keeps no logs of its own"))
    workload = BenchmarkWorkload(
        stack, "Replay", dataset_bucket=bucket, dataset_key="datasets/" if prefix_dataset else "datasets/chat.jsonl", concurrency=8, request_count=500,
        **{k: v for k, v in named.items() if k == "workload_name"},
    )  # fmt: skip
    BenchmarkRole(stack, "BenchmarkRole", endpoint=endpoint, output_bucket=bucket, workloads=[workload], **{k: v for k, v in named.items() if k == "output_prefix"})
    return stack


def _policy_statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    (policy,) = [p for k, p in resources(template, "AWS::IAM::Policy").items() if k.startswith("BenchmarkRole")]
    return policy["Properties"]["PolicyDocument"]["Statement"]  # type: ignore[no-any-return]


def test_the_role_invokes_one_endpoint_writes_one_prefix_and_reads_the_dataset() -> None:
    template = template_of(_benchmark_stack(encrypted=False, prefix_dataset=False))
    (role,) = [r for k, r in resources(template, "AWS::IAM::Role").items() if k.startswith("BenchmarkRole")]
    assert role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "sagemaker.amazonaws.com"}
    assert "ManagedPolicyArns" not in role["Properties"]
    granted = {(tuple(sorted(s["Action"])) if isinstance(s["Action"], list) else (s["Action"],), json.dumps(s["Resource"])) for s in _policy_statements(template)}
    endpoint_id = next(iter(resources(template, "AWS::SageMaker::Endpoint")))
    bucket_arn = {"Fn::GetAtt": [next(k for k in resources(template, "AWS::S3::Bucket") if k.startswith("Results")), "Arn"]}
    assert granted == {
        (("sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"), json.dumps({"Fn::GetAtt": [endpoint_id, "EndpointArn"]})),
        (("s3:AbortMultipartUpload", "s3:PutObject"), json.dumps({"Fn::Join": ["", [bucket_arn, "/benchmarks/*"]]})),
        (("s3:GetObject",), json.dumps({"Fn::Join": ["", [bucket_arn, "/datasets/chat.jsonl"]]})),
    }


def test_with_a_kms_bucket_and_a_dataset_prefix_the_role_also_lists_that_prefix_and_uses_the_key() -> None:
    statements = _policy_statements(template_of(_benchmark_stack(encrypted=True, prefix_dataset=True)))
    actions = [s["Action"] for s in statements]
    (kms_statement,) = [s for s in statements if "kms:GenerateDataKey" in s["Action"]]
    assert sorted(kms_statement["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey"]  # write (and read back) SSE-KMS objects
    assert kms_statement["Resource"]["Fn::GetAtt"][0].startswith("Key")
    assert not any("s3:*" in a or "kms:*" in a for a in actions)
    (listing,) = [s for s in statements if s["Action"] == "s3:ListBucket"]
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["datasets/*"]}}


def _nag_findings(stack: cdk.Stack) -> tuple[list[str], list[str]]:
    """cdk-nag's AwsSolutions findings: (unacknowledged, acknowledged) rule names."""
    from cdk_nag import AwsSolutionsChecks

    app = stack.node.root
    assert isinstance(app, cdk.App)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    assembly = app.synth()
    path = Path(assembly.directory) / "validation-report.json"
    report = json.loads(path.read_text()) if path.exists() else {"pluginReports": []}
    nag = [r for r in report["pluginReports"] if r["pluginName"] == "AwsSolutions"]
    open_ = [v["ruleName"] for r in nag for v in r["violations"]]
    acknowledged = [v["ruleName"] for r in nag for v in r.get("suppressedViolations", []) if len(v.get("reason", "")) > 20]
    return open_, acknowledged


def test_cdk_nag_leaves_nothing_unacknowledged() -> None:
    open_, acknowledged = _nag_findings(_benchmark_stack(encrypted=True, prefix_dataset=True))
    assert open_ == []
    # the output and dataset prefixes, each acknowledged with its reason
    assert sorted(a.split("/")[-2] for a in acknowledged if a.startswith("AwsSolutions-IAM5")) == ["benchmarks", "datasets"]


def test_with_a_parameter_output_prefix_cdk_nag_still_finds_the_acknowledgment() -> None:
    """The wildcard under a prefix from a parameter is acknowledged too (the finding quotes the Ref)."""
    open_, acknowledged = _nag_findings(_benchmark_stack(encrypted=True, prefix_dataset=True, parameters=True))
    assert open_ == []
    assert sorted(a for a in acknowledged if a.startswith("AwsSolutions-IAM5")) == [
        "AwsSolutions-IAM5[Resource::<Results25575328.Arn>/<OutputPrefix>*]",
        "AwsSolutions-IAM5[Resource::<Results25575328.Arn>/datasets/*]",
    ]


@pytest.mark.parametrize("parameters", [False, True], ids=["literals", "parameter name and prefix"])
def test_template_passes_cfn_lint_and_the_api_contract(parameters: bool) -> None:
    template = template_of(_benchmark_stack(encrypted=True, prefix_dataset=True, parameters=parameters))
    findings = [f"{m.rule.id} {m.message}" for m in cfnlint.api.lint(json.dumps(template), regions=["us-east-1"]) if m.rule.id[0] in "EW"]
    assert findings == []
    problems = template_problems(template)
    (workload_id,) = resources(template, "AWS::SageMaker::AIWorkloadConfig")
    assert problems[workload_id] == []  # CreateAIWorkloadConfig's input shape


def test_the_contract_check_would_catch_a_bad_workload() -> None:
    bad = {"Resources": {"W": {"Type": "AWS::SageMaker::AIWorkloadConfig", "Properties": {"AIWorkloadConfigName": "-bad", "AIWorkloadConfigs": {}}}}}
    (problems,) = template_problems(bad).values()
    assert any("WorkloadSpec" in p for p in problems) and any("-bad" in p for p in problems)


def test_the_spec_is_the_workload_specs_document() -> None:
    """One renderer: the construct writes what WorkloadSpec (and so bench --aiperf-spec) writes."""
    stack = new_stack()
    BenchmarkWorkload(stack, "W", input_tokens_mean=128, output_tokens_mean=64, concurrency=4, duration=Duration.seconds(60))
    spec = WorkloadSpec(input_tokens_mean=128, output_tokens_mean=64, concurrency=4, duration_s=60.0)
    assert _spec_of(template_of(stack)) == spec.document()


def _workload(**props: Any) -> Callable[[cdk.Stack], object]:
    base: dict[str, Any] = {"concurrency": 8, "request_count": 100}
    base.update(props)
    return lambda stack: BenchmarkWorkload(stack, "W", **{k: (v(stack) if callable(v) else v) for k, v in base.items()})


def _role(**props: Any) -> Callable[[cdk.Stack], object]:
    def build(stack: cdk.Stack) -> object:
        values: dict[str, Any] = {"endpoint": _endpoint(stack), "output_bucket": s3.Bucket.from_bucket_name(stack, "Out", "results")}
        values.update(props)
        return BenchmarkRole(stack, "Role", **values)

    return build


def _bucket(stack: cdk.Stack) -> s3.IBucket:
    return s3.Bucket.from_bucket_name(stack, "Data", "traffic")


# (case id, builder, field named in the message, words of the "allowed" text)
CASES: list[tuple[str, Callable[[cdk.Stack], object], str, str]] = [
    ("capital in the name", _workload(workload_name="Chat-Load"), "BenchmarkWorkload.workload_name", "lowercase"),
    ("tag with aws: prefix", _workload(tags={"aws:x": "y"}), "BenchmarkWorkload.tags", "does not start with 'aws:'"),
    ("dataset key without bucket", _workload(dataset_key="a.jsonl"), "BenchmarkWorkload.dataset_key", "together, or neither"),
    ("dataset key with a star", _workload(dataset_bucket=_bucket, dataset_key="data/*.jsonl"), "BenchmarkWorkload.dataset_key", "without '*'"),
    ("dataset and input tokens", _workload(dataset_bucket=_bucket, dataset_key="a.jsonl", input_tokens_mean=100), "BenchmarkWorkload.input_tokens_mean", "None with a dataset"),
    ("zero concurrency", _workload(concurrency=0), "BenchmarkWorkload.concurrency", "integer >= 1"),
    ("negative stddev", _workload(input_tokens_stddev=-1.0), "BenchmarkWorkload.input_tokens_stddev", "a number >= 0"),
    ("prefix pool without length", _workload(prefix_pool_size=4), "BenchmarkWorkload.prefix_pool_size", "prefix_length together"),
    ("bad sequence distribution", _workload(sequence_distribution="550:150@0.7"), "BenchmarkWorkload.sequence_distribution", "ISL|SD,OSL|SD:PERCENT"),
    ("sequence distribution and means", _workload(sequence_distribution="550,150:100", input_tokens_mean=5), "BenchmarkWorkload.sequence_distribution", "not both"),
    ("rate 0", _workload(request_rate=0.0), "BenchmarkWorkload.request_rate", "a number > 0"),
    ("arrival without rate", _workload(arrival="poisson"), "BenchmarkWorkload.arrival", "with request_rate"),
    ("smoothness without gamma", _workload(request_rate=2.0, arrival="poisson", arrival_smoothness=0.5), "BenchmarkWorkload.arrival_smoothness", "arrival='gamma'"),
    ("neither concurrency nor rate", _workload(concurrency=None), "BenchmarkWorkload.concurrency", "or both"),
    ("duration and request count", _workload(duration=Duration.minutes(1)), "BenchmarkWorkload.duration", "exactly one of duration and request_count"),
    ("duration not a Duration", _workload(request_count=None, duration=60), "BenchmarkWorkload.duration", "aws_cdk.Duration"),
    ("token duration", _workload(request_count=None, duration=lambda s: Duration.seconds(cdk.CfnParameter(s, "D", type="Number").value_as_number)), "BenchmarkWorkload.duration", "a concrete duration"),
    ("token concurrency", _workload(concurrency=lambda s: cdk.CfnParameter(s, "C", type="Number").value_as_number), "BenchmarkWorkload.concurrency", "a concrete value"),
    ("token dataset key", _workload(dataset_bucket=_bucket, dataset_key=lambda s: cdk.CfnParameter(s, "K").value_as_string), "BenchmarkWorkload.dataset_key", "a concrete key"),
    ("role endpoint not an endpoint", _role(endpoint="my-endpoint"), "BenchmarkRole.endpoint", "a PooledEndpoint"),
    ("role prefix without slash", _role(output_prefix="results"), "BenchmarkRole.output_prefix", "ending in '/'"),
    ("role workload not a workload", _role(workloads=["w"]), "BenchmarkRole.workloads[0]", "a BenchmarkWorkload"),
]


@pytest.mark.parametrize(("build", "field", "allowed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused(build: Callable[[cdk.Stack], object], field: str, allowed: str) -> None:
    stack = refused_in_new_stack(build, field, allowed)
    assert "AWS::SageMaker::AIWorkloadConfig" not in resource_types(stack)
    assert "AWS::IAM::Role" not in resource_types(stack)


def test_the_corpus_reaches_every_rule() -> None:
    """Every ``raise PoolConfigError`` of the workload modules has a case above."""
    assert unreached_rules([c[1] for c in CASES], ["benchmark.py", "aiperf.py"]) == set()


def test_grant_benchmark_on_an_imported_endpoint_is_invoke_on_that_endpoint_only() -> None:
    from aws_cdk import aws_iam as iam

    stack = new_stack()
    endpoint = PooledEndpoint.from_endpoint_name(stack, "Existing", "llm-chat")
    role = iam.Role(stack, "Runner", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    endpoint.grant_benchmark(role)
    (policy,) = resources(template_of(stack), "AWS::IAM::Policy").values()
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Action"] == ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"]
    assert json.dumps(statement["Resource"]).endswith(':endpoint/llm-chat"]]}')
