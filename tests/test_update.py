"""Update safety: v1 -> v2 of a stack, and what CloudFormation would replace or update in place."""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_s3 as s3

from sagemaker_pools import ContainerImage, InstancePool, ModelData, PooledEndpoint, PoolModel
from support.changes import create_only_properties, plan
from support.synth import new_stack, template_of

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


def _version(*, extra_pool: bool, int4_prefix: str) -> dict[str, Any]:
    stack = new_stack("Llm")
    bucket = s3.Bucket.from_bucket_name(stack, "Artifacts", "my-artifacts")
    image = ContainerImage.from_image_uri(IMAGE)
    base = PoolModel(stack, "Base", image=image, model_data=ModelData.from_s3_prefix(bucket, "tp8/"))
    int4 = PoolModel(stack, "Int4", image=image, model_data=ModelData.from_s3_prefix(bucket, int4_prefix))
    pools = [InstancePool(instance_type="ml.g6e.48xlarge"), InstancePool(instance_type="ml.p4d.24xlarge", model=int4)]
    if extra_pool:
        pools.insert(1, InstancePool(instance_type="ml.g6.48xlarge"))
    PooledEndpoint(stack, "Endpoint", model=base, pools=pools, endpoint_name="llm")
    return template_of(stack)


def _by_type(template: dict[str, Any], actions: dict[str, str]) -> dict[str, str]:
    types = {k: v["Type"] for k, v in template["Resources"].items()}
    return {f"{types[k]}:{k[:8]}": a for k, a in actions.items() if k in types}


def test_schema_facts_this_relies_on() -> None:
    assert "ProductionVariants" in create_only_properties("AWS::SageMaker::EndpointConfig")
    assert create_only_properties("AWS::SageMaker::Endpoint") == {"EndpointName"}
    assert "PrimaryContainer" in create_only_properties("AWS::SageMaker::Model")


def test_adding_a_pool_replaces_only_the_config_and_updates_the_endpoint_in_place() -> None:
    v1 = _version(extra_pool=False, int4_prefix="int4/")
    v2 = _version(extra_pool=True, int4_prefix="int4/")
    actions = plan(v1, v2)
    types = {k: v2["Resources"][k]["Type"] for k in actions}
    assert sorted(types.values()) == ["AWS::SageMaker::Endpoint", "AWS::SageMaker::EndpointConfig"]
    for logical_id, resource_type in types.items():
        expected = "replace" if resource_type == "AWS::SageMaker::EndpointConfig" else "update"
        assert actions[logical_id] == expected, resource_type
    # The config can be replaced because it has no fixed name; the endpoint keeps its name and
    # takes the new config through UpdateEndpoint without resetting the autoscaled count.
    endpoint = next(r for r in v2["Resources"].values() if r["Type"] == "AWS::SageMaker::Endpoint")["Properties"]
    assert endpoint["RetainAllVariantProperties"] is True
    assert not any("EndpointConfigName" in r.get("Properties", {}) for r in v2["Resources"].values() if r["Type"] == "AWS::SageMaker::EndpointConfig")


def test_changing_a_model_replaces_that_model_and_the_config_not_the_endpoint() -> None:
    v1 = _version(extra_pool=False, int4_prefix="int4/")
    v2 = _version(extra_pool=False, int4_prefix="int4-v2/")
    actions = plan(v1, v2)
    by_type = {v2["Resources"][k]["Type"]: a for k, a in actions.items() if k in v2["Resources"]}
    assert by_type["AWS::SageMaker::Model"] == "replace"  # only Int4: its container changed
    assert [k for k, a in actions.items() if v2["Resources"].get(k, {}).get("Type") == "AWS::SageMaker::Model"] == [
        k for k in actions if k.startswith("Int4C")
    ]
    # Its role's policy now reads the new prefix: an in-place update.
    assert {k: a for k, a in actions.items() if k.startswith("Int4ExecutionRole")} == {
        next(k for k in actions if k.startswith("Int4ExecutionRoleDefaultPolicy")): "update"
    }
    assert by_type["AWS::SageMaker::EndpointConfig"] == "replace"  # new ModelNameOverride (GetAtt of a new model)
    assert by_type["AWS::SageMaker::Endpoint"] == "update"
    assert "remove" not in actions.values() and "add" not in actions.values()


def test_unchanged_app_plans_nothing() -> None:
    assert plan(_version(extra_pool=True, int4_prefix="a/"), _version(extra_pool=True, int4_prefix="a/")) == {}
