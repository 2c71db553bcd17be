"""The Python that ``migrate`` and ``recommend`` print really synthesizes to the equivalent template.

The generated apps are synthesized in the test process (the command itself never imports aws_cdk); the test
compares their ``AWS::SageMaker::EndpointConfig`` / ``Model`` resources with the
CreateEndpointConfig request and the recommendations they came from.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import ops_samples as s
from ops_support import NOW

from sagemaker_pools.ops.migrate import MigrateOptions, MigrationPlan, build_plan
from sagemaker_pools.ops.migrate_code import code_gaps, pooled_endpoint_code
from sagemaker_pools.ops.recommend import parse_job, propose_pools
from sagemaker_pools.ops.recommend_code import recommendation_code
from sagemaker_pools.ops.stack_owner import StackOwnership

ROOT = Path(__file__).resolve().parents[2]
CREATE_MEMBERS = {
    "EndpointConfigName", "ProductionVariants", "DataCaptureConfig", "Tags", "KmsKeyId", "AsyncInferenceConfig",
    "ExplainerConfig", "ShadowProductionVariants", "ExecutionRoleArn", "VpcConfig", "EnableNetworkIsolation",
    "MetricsConfig", "CrossRegionTrafficConfig",
}  # fmt: skip

def _synthesize(tmp_path: Path, files: list[Path]) -> dict[str, dict[str, Any]]:
    """Load each generated module (its ``__main__`` block does not run), add its stack to one app, synth.

    In this process: jsii is already running for the rest of the suite (a subprocess would pay
    for a second Node start). The command itself never imports aws_cdk (see test_ops_errors).
    """
    from aws_cdk import App

    app = App(outdir=str(tmp_path / "cdk.out"))
    names = []
    for path in files:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cls = next(v for k, v in vars(module).items() if k.endswith("Stack") and k != "Stack")
        names.append(cls(app, cls.__name__).stack_name)
    assembly = app.synth()
    return {name: assembly.get_stack_by_name(name).template for name in names}


def _plan(cfg: dict[str, Any], tags: list[dict[str, str]], endpoint_name: str = "my-endpoint", **options: Any) -> MigrationPlan:
    endpoint = s.endpoint(endpoint_name, cfg["EndpointConfigName"], [])
    return build_plan(endpoint, cfg, tags, MigrateOptions(**options), create_members=CREATE_MEMBERS,
                      cloudformation=StackOwnership(endpoint["EndpointArn"], "not_managed"), now=NOW)


def _resources(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r["Properties"] for r in template["Resources"].values() if r["Type"] == kind]


def test_generated_apps_synthesize_to_the_planned_configs(tmp_path: Path) -> None:
    gpu = _plan(
        s.SINGLE_CONFIG,
        s.SINGLE_TAGS["Tags"],
        fallbacks=("ml.g6.48xlarge", "ml.p4d.24xlarge"),
        model_overrides={"ml.p4d.24xlarge": "my-llm-int4"},
    )
    cpu_config = s.config(
        "cpu-config",
        [{"VariantName": "AllTraffic", "ModelName": "xgb", "InitialInstanceCount": 3, "InstanceType": "ml.c5.2xlarge", "VolumeSizeInGB": 40}],
        KmsKeyId="arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    )
    cpu = _plan(cpu_config, [], "cpu-endpoint", fallbacks=("ml.c6i.2xlarge", "ml.m5.2xlarge"), provision_timeout_s=600)
    assert code_gaps(gpu) == [] and code_gaps(cpu) == []
    job = s.recommendation_job(recommendations=s.RECOMMENDATIONS)
    proposal = propose_pools(parse_job(job), "cost")

    files: list[Path] = []
    for name, code in (("migrated_gpu", pooled_endpoint_code(gpu)), ("migrated_cpu", pooled_endpoint_code(cpu)), ("recommended", recommendation_code("llama-70b-recs", proposal))):
        path = tmp_path / f"{name}.py"
        path.write_text(code)
        files.append(path)
    templates = _synthesize(tmp_path, files)

    for plan, stack in ((gpu, "MyEndpointStack"), (cpu, "CpuEndpointStack")):
        (config,) = _resources(templates[stack], "AWS::SageMaker::EndpointConfig")
        (synthesized,) = config["ProductionVariants"]
        requested = plan.create_request["ProductionVariants"][0]
        for key, value in requested.items():
            if key == "InitialVariantWeight":
                continue  # one variant: every weight sends it all traffic
            assert synthesized[key] == value, key
        if "RoutingConfig" not in requested:
            assert synthesized["RoutingConfig"] == {"RoutingStrategy": "RANDOM"}  # SageMaker's default, made explicit
        assert config.get("KmsKeyId") == plan.create_request.get("KmsKeyId")
        tags = {t["Key"]: t["Value"] for t in config.get("Tags", [])}
        assert tags == dict(plan.user_tags)

    recommended = templates["Llama70bRecsPoolsStack"]
    models = {m["PrimaryContainer"]["InferenceSpecificationName"]: m["PrimaryContainer"] for m in _resources(recommended, "AWS::SageMaker::Model")}
    assert set(models) == {"g6-48xlarge-spec", "g6e-48xlarge-tp8", "p4d-24xlarge-int4"}
    assert models["p4d-24xlarge-int4"]["ModelPackageName"] == "arn:aws:sagemaker:us-east-1:123456789012:model-package/llama-70b-recs/2"
    assert models["g6e-48xlarge-tp8"]["Environment"] == {"OPTION_TENSOR_PARALLEL_DEGREE": "4", "OPTION_MAX_ROLLING_BATCH_SIZE": "64"}
    (config,) = _resources(recommended, "AWS::SageMaker::EndpointConfig")
    pools = config["ProductionVariants"][0]["InstancePools"]
    assert [(p["InstanceType"], p["Priority"]) for p in pools] == [("ml.g6.48xlarge", 1), ("ml.g6e.48xlarge", 2), ("ml.p4d.24xlarge", 3)]
    assert all("ModelNameOverride" in p for p in pools)
