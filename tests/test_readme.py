"""The README's Python examples run as written and do what they say.

Each block runs (``exec``) and then its stack's template is checked against what the block and
the text around it promise (``CHECKS``, keyed by the stack the block builds). A block that
asserts on its own result (a printed ``# comment``, ``assertions.Template``) says so in
``SELF_CHECKED``; a new block must join one of the two. Every stack a block makes also passes
cdk-nag's AwsSolutionsChecks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def _stack_name(code: str) -> str:
    """The id of the (first) stack a block builds."""
    match = re.search(r"(?:Stack|Stack\w*)\((?:app|App\(\)), \"(\w+)\"", code)
    assert match, f"no stack in the README block:\n{code}"
    return match[1]


def _block_keys() -> list[str]:
    """One key per block: its stack's id, with ``#2``, ``#3`` ... for a later block that reuses an id."""
    keys: list[str] = []
    for code in BLOCKS:
        name = _stack_name(code)
        seen = sum(k.split("#")[0] == name for k in keys)
        keys.append(f"{name}#{seen + 1}" if seen else name)
    return keys


def _template(namespace: dict[str, Any]) -> dict[str, Any]:
    from aws_cdk import assertions

    return assertions.Template.from_stack(namespace["stack"]).to_json()  # type: ignore[no-any-return]


def _of_type(template: dict[str, Any], type_name: str) -> dict[str, dict[str, Any]]:
    return {k: v.get("Properties", {}) for k, v in template["Resources"].items() if v["Type"] == type_name}


def _variant(template: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    (config,) = [v for k, v in _of_type(template, "AWS::SageMaker::EndpointConfig").items() if k.startswith(prefix)]
    (variant,) = config["ProductionVariants"]
    return variant  # type: ignore[no-any-return]


def _check_quick_start(namespace: dict[str, Any]) -> None:
    # three pools in order; the default model on g6e, each fallback pool its own build; 2 instances; 20 min
    variant = _variant(_template(namespace))
    pools = [(p["InstanceType"], p["Priority"], p.get("ModelNameOverride", {"Fn::GetAtt": ["-"]})["Fn::GetAtt"][0][:4]) for p in variant["InstancePools"]]
    assert pools == [("ml.g6e.48xlarge", 1, "-"), ("ml.g6.48xlarge", 2, "Spec"), ("ml.p4d.24xlarge", 3, "Int4")]
    assert variant["ModelName"]["Fn::GetAtt"][0].startswith("Tp8")
    assert (variant["InitialInstanceCount"], variant["VariantInstanceProvisionTimeoutInSeconds"]) == (2, 1200)


def _check_models(namespace: dict[str, Any]) -> None:
    # four ways to a model: three resources (the existing one is only referenced by name)
    models = _of_type(_template(namespace), "AWS::SageMaker::Model")
    containers = {k[:3]: v["PrimaryContainer"] for k, v in models.items()}
    assert sorted(containers) == ["Lmi", "Tun", "Vll"]
    assert containers["Vll"]["ModelDataUrl"] == "s3://my-model-artifacts/llm/model.tar.gz"
    assert containers["Vll"]["Environment"] == {"TENSOR_PARALLEL_SIZE": "8"}
    source = containers["Lmi"]["ModelDataSource"]["S3DataSource"]
    assert (source["S3DataType"], source["CompressionType"], source["S3Uri"]) == ("S3Prefix", "None", "s3://my-model-artifacts/llm/awq-int4/")
    assert containers["Tun"] == {
        "ModelPackageName": "arn:aws:sagemaker:us-east-1:123456789012:model-package/llama-70b/3",
        "InferenceSpecificationName": "g6-48xlarge-int4",
    }
    assert namespace["legacy"].model_name == "llama-70b-2026-10"


def _check_deployments(namespace: dict[str, Any]) -> None:
    template = _template(namespace)
    endpoints = {k: v["DeploymentConfig"] for k, v in _of_type(template, "AWS::SageMaker::Endpoint").items()}
    config = {name: next(v for k, v in endpoints.items() if k.startswith(name)) for name in ("AllAtOnce", "Canary", "Linear", "Rolling")}
    rollback = {"Alarms": [{"AlarmName": "llm-5xx"}]}
    assert config["AllAtOnce"] == {
        "AutoRollbackConfiguration": rollback,
        "BlueGreenUpdatePolicy": {"TrafficRoutingConfiguration": {"Type": "ALL_AT_ONCE", "WaitIntervalInSeconds": 300}},
    }
    assert config["Canary"] == {
        "AutoRollbackConfiguration": rollback,
        "BlueGreenUpdatePolicy": {
            "TrafficRoutingConfiguration": {"Type": "CANARY", "CanarySize": {"Type": "CAPACITY_PERCENT", "Value": 25}, "WaitIntervalInSeconds": 600}
        },
    }
    assert config["Linear"] == {
        "BlueGreenUpdatePolicy": {
            "TrafficRoutingConfiguration": {"Type": "LINEAR", "LinearStepSize": {"Type": "CAPACITY_PERCENT", "Value": 20}, "WaitIntervalInSeconds": 300}
        }
    }
    assert config["Rolling"] == {
        "AutoRollbackConfiguration": rollback,
        "RollingUpdatePolicy": {
            "MaximumBatchSize": {"Type": "CAPACITY_PERCENT", "Value": 25},
            "RollbackMaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1},
            "WaitIntervalInSeconds": 600,
        },
    }
    for name in config:
        assert _variant(template, name)["RoutingConfig"] == {
            "RoutingStrategy": "PREFIX_AWARE",
            "PrefixAwareRoutingConfig": {"PrefixLength": 2048, "ConcurrencyThreshold": 16},
        }


def _check_callers(namespace: dict[str, Any]) -> None:
    # InvokeEndpoint + InvokeEndpointWithResponseStream on that endpoint only
    (policy,) = _of_type(_template(namespace), "AWS::IAM::Policy").values()
    (statement,) = policy["PolicyDocument"]["Statement"]
    assert statement["Action"] == ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"]
    assert statement["Resource"]["Fn::Join"][1][-1] == ":endpoint/llm-pooled"


def _check_scaled(namespace: dict[str, Any]) -> None:
    template = _template(namespace)
    (target,) = _of_type(template, "AWS::ApplicationAutoScaling::ScalableTarget").values()
    assert (target["MinCapacity"], target["MaxCapacity"]) == (2, 8)
    (policy,) = _of_type(template, "AWS::ApplicationAutoScaling::ScalingPolicy").values()
    tracking = policy["TargetTrackingScalingPolicyConfiguration"]
    assert (tracking["TargetValue"], tracking["ScaleInCooldown"]) == (0.7, 600)
    assert len(_of_type(template, "AWS::CloudWatch::Dashboard")) == 1
    topic = [{"Ref": next(iter(_of_type(template, "AWS::SNS::Topic")))}]
    alarms = _of_type(template, "AWS::CloudWatch::Alarm")
    # Every alarm notifies but the at-max composite's two halves, which notify through it.
    halves = {k for k in alarms if k.startswith(("AlarmsAtMaxCount", "AlarmsSaturated"))}
    assert len(halves) == 2 and all(alarms[k]["AlarmActions"] == topic for k in set(alarms) - halves)
    (composite,) = _of_type(template, "AWS::CloudWatch::CompositeAlarm").values()
    assert composite["AlarmActions"] == topic


def _check_components(namespace: dict[str, Any]) -> None:
    # no model on the endpoint; 4 copies, one specification per pool; min 0: the scale-from-zero step policy too
    template = _template(namespace)
    variant = _variant(template)
    assert "ModelName" not in variant and variant["ManagedInstanceScaling"] == {"MinInstanceCount": 0, "MaxInstanceCount": 4, "Status": "ENABLED"}
    (component,) = _of_type(template, "AWS::SageMaker::InferenceComponent").values()
    assert component["RuntimeConfig"] == {"CopyCount": 4}
    assert [(s["InstanceType"], s["ModelName"]) for s in component["Specifications"]] == [
        ("ml.p5.48xlarge", "llm-p5-fp8"),
        ("ml.g6.48xlarge", "llm-g6-awq"),
    ]
    (target,) = _of_type(template, "AWS::ApplicationAutoScaling::ScalableTarget").values()
    assert (target["MinCapacity"], target["MaxCapacity"]) == (0, 8)
    kinds = sorted(p["PolicyType"] for p in _of_type(template, "AWS::ApplicationAutoScaling::ScalingPolicy").values())
    assert kinds == ["StepScaling", "TargetTrackingScaling"]


def _check_component_rollout(namespace: dict[str, Any]) -> None:
    # 25 % of the copies a step, baked 10 minutes, rolled back 4 copies at a time, 2 hours at most, on the alarm
    (component,) = _of_type(_template(namespace), "AWS::SageMaker::InferenceComponent").values()
    assert component["RuntimeConfig"] == {"CopyCount": 8}
    assert component["DeploymentConfig"] == {
        "RollingUpdatePolicy": {
            "MaximumBatchSize": {"Type": "CAPACITY_PERCENT", "Value": 25},
            "WaitIntervalInSeconds": 600,
            "RollbackMaximumBatchSize": {"Type": "COPY_COUNT", "Value": 4},
            "MaximumExecutionTimeoutInSeconds": 7200,
        },
        "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": "llm-ic-model-errors"}]},
    }


def _check_async(namespace: dict[str, Any]) -> None:
    # creates the bucket; backlog tracking from 0 to 4 instances at 5 per instance
    template = _template(namespace)
    (config,) = _of_type(template, "AWS::SageMaker::EndpointConfig").values()
    assert config["AsyncInferenceConfig"]["ClientConfig"] == {"MaxConcurrentInvocationsPerInstance": 4}
    buckets = [k for k in _of_type(template, "AWS::S3::Bucket") if k.startswith("BatchAsyncOutput")]
    assert len(buckets) == 1 and {"Ref": buckets[0]} in config["AsyncInferenceConfig"]["OutputConfig"]["S3OutputPath"]["Fn::Join"][1]
    (target,) = _of_type(template, "AWS::ApplicationAutoScaling::ScalableTarget").values()
    assert (target["MinCapacity"], target["MaxCapacity"]) == (0, 4)
    tracking = [p for p in _of_type(template, "AWS::ApplicationAutoScaling::ScalingPolicy").values() if p["PolicyType"] == "TargetTrackingScaling"]
    (policy,) = tracking
    config_ = policy["TargetTrackingScalingPolicyConfiguration"]
    assert config_["TargetValue"] == 5
    read = {q["MetricStat"]["Metric"]["MetricName"] for q in config_["CustomizedMetricSpecification"]["Metrics"] if "MetricStat" in q}
    # The backlog per instance, silenced while the backlog has no instance (the wake-up's job).
    assert read == {"ApproximateBacklogSizePerInstance", "HasBacklogWithoutCapacity"}
    (step,) = [p for p in _of_type(template, "AWS::ApplicationAutoScaling::ScalingPolicy").values() if p["PolicyType"] == "StepScaling"]
    assert step["StepScalingPolicyConfiguration"]["AdjustmentType"] == "ExactCapacity"


def _check_kms_buckets(namespace: dict[str, Any]) -> None:
    # imported SSE-KMS buckets: the model may decrypt its weights; responses are encrypted with the key
    key_arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    template = _template(namespace)
    (config,) = _of_type(template, "AWS::SageMaker::EndpointConfig").values()
    assert config["AsyncInferenceConfig"]["OutputConfig"]["KmsKeyId"] == key_arn
    policies = _of_type(template, "AWS::IAM::Policy")
    model_policy = next(v for k, v in policies.items() if k.startswith("LlmExecutionRole"))
    decrypt = [s for s in model_policy["PolicyDocument"]["Statement"] if "kms:Decrypt" in json.dumps(s["Action"])]
    assert decrypt and all(s["Resource"] == key_arn for s in decrypt)


def _check_example_stack(namespace: dict[str, Any]) -> None:
    # the packaged example synthesizes with its own pools
    template = namespace["app"].synth().get_stack_by_name("LlmProd").template
    (config,) = _of_type(template, "AWS::SageMaker::EndpointConfig").values()
    assert len(config["ProductionVariants"][0]["InstancePools"]) >= 2


#: stack id of a block -> what its result must be
def _check_benchmarked(namespace: dict[str, Any]) -> None:
    # the workload is AIPerf's spec of the props; the role invokes this endpoint and writes one prefix
    template = _template(namespace)
    (workload,) = _of_type(template, "AWS::SageMaker::AIWorkloadConfig").values()
    spec = json.loads(workload["AIWorkloadConfigs"]["WorkloadSpec"]["Inline"])
    assert spec["benchmark"] == {"type": "aiperf"}
    assert spec["parameters"]["concurrency"] == 16 and spec["parameters"]["benchmark_duration"] == 600
    assert workload["AIWorkloadConfigName"] == namespace["chat"].workload_name
    (policy,) = [p for p in _of_type(template, "AWS::IAM::Policy").values() if "BenchmarkRole" in p["PolicyName"]]
    actions = sorted(a for s in policy["PolicyDocument"]["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]))
    assert actions == ["s3:AbortMultipartUpload", "s3:PutObject", "sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"]


CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "Llm": _check_quick_start,
    "Models": _check_models,
    "KmsBuckets": _check_kms_buckets,
    "Deployments": _check_deployments,
    "Callers": _check_callers,
    "Scaled": _check_scaled,
    "Components": _check_components,
    "Rollout": _check_component_rollout,
    "Async": _check_async,
    "Benchmarked": _check_benchmarked,
    "LlmProd": _check_example_stack,
}
#: blocks whose own code checks their result (a printed "# comment", assertions.Template)
SELF_CHECKED = {"Demo", "Gated", "Llm#2", "Measured", "Mine", "RollsBack", "Shadowed"}


def test_every_block_checks_its_result() -> None:
    assert sorted(_block_keys()) == sorted([*CHECKS, *SELF_CHECKED])


def _run_with_nag(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], dict[str, Any]]:
    """Run a README block with cdk-nag's AwsSolutionsChecks on every App it makes; return those apps, synthesized, and the block's names."""
    import aws_cdk as cdk
    from cdk_nag import AwsSolutionsChecks

    monkeypatch.chdir(tmp_path)  # an App() synthesizes into a temporary folder, never the checkout
    real_app = cdk.App
    apps: list[Any] = []

    def nagged_app(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("outdir", str(tmp_path / f"assembly{len(apps)}"))
        app = real_app(*args, **kwargs)
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
        apps.append(app)
        return app

    monkeypatch.setattr(cdk, "App", nagged_app)
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(code, str(README), "exec"), namespace)
    for app in apps:
        app.synth()  # the block may have synthesized already: then this returns that assembly
    return apps, namespace


def _nag_violations(app: Any) -> list[str]:
    """AwsSolutions findings without an acknowledgment (cdk-nag writes no plugin report when it has nothing to say)."""
    report = json.loads((Path(app.outdir) / "validation-report.json").read_text())
    nag = [r for r in report["pluginReports"] if r["pluginName"] == "AwsSolutions"]
    assert len(nag) <= 1
    for suppressed in (s for r in nag for s in r.get("suppressedViolations", [])):
        assert len(suppressed.get("reason", "")) > 20, suppressed["ruleName"]
    return [
        f"{v['ruleName']}: {[c['constructPath'] for c in v.get('violatingConstructs', [])]}" for r in nag for v in r["violations"]
    ]


def test_the_nag_run_catches_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a bucket without access logs or TLS is two findings."""
    code = "from aws_cdk import App, Stack\nfrom aws_cdk import aws_s3 as s3\ns3.Bucket(Stack(App(), 'Bare'), 'B')\n"
    with pytest.raises(Exception, match="AwsSolutions-S1"):
        _run_with_nag(code, tmp_path, monkeypatch)


@pytest.mark.parametrize(("key", "code"), zip(_block_keys(), BLOCKS), ids=_block_keys())
def test_readme_example_runs(key: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Each block runs as written, prints what it says, builds what it shows, and its stacks pass cdk-nag's AwsSolutionsChecks."""
    apps, namespace = _run_with_nag(code, tmp_path, monkeypatch)
    printed = capsys.readouterr().out
    # A printed comment in a block states what it prints: check it.
    expected = re.findall(r"print\(.*?\)\s*#\s*(.+)", code)
    for line in expected:
        assert line.strip() in printed
    assert apps, "the block makes no App"
    for app in apps:
        assert _nag_violations(app) == []
    if key in CHECKS:
        CHECKS[key](namespace)
    else:
        assert key in SELF_CHECKED and (expected or "assertions.Template" in code), key


def _command_lines() -> list[str]:
    """The ``sagemaker-pools ...`` commands of the README's bash blocks (continuations joined, comments cut)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S):
        for command in block.replace("\\\n", " ").splitlines():
            command = command.split("#", 1)[0].split(">", 1)[0].strip()
            if command.startswith("sagemaker-pools "):
                commands.append(command)
    return commands


def test_readme_commands_parse() -> None:
    import shlex

    from sagemaker_pools.ops.cli import build_parser

    commands = _command_lines()
    assert len(commands) >= 5
    for command in commands:
        argv = [a for a in shlex.split(command)[1:] if a != "..."]
        build_parser().parse_args(argv)  # exits (SystemExit) on an unknown flag
