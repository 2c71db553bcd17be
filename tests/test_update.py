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


# -- an autoscaled variant ----------------------------------------------------------------------
#
# SageMaker, "Update endpoints that use auto scaling": "If the update would change the instance
# type for any model that is a target for auto scaling, the update fails." CloudFormation cannot
# deregister a target around an update (it has no such resource or hook), so what it would do is
# the question these tests answer from the resource schemas; what SageMaker then does with a pool
# change is not documented (README, "Changing the pools of an autoscaled endpoint").

SCALABLE_TARGET = "AWS::ApplicationAutoScaling::ScalableTarget"
SCALING_POLICY = "AWS::ApplicationAutoScaling::ScalingPolicy"


def _autoscaled(*, pools: tuple[str, ...], scaled: bool) -> dict[str, Any]:
    stack = new_stack("Llm")
    endpoint = PooledEndpoint(
        stack,
        "Endpoint",
        model=PoolModel.from_model_name(stack, "Model", "llm"),
        pools=[InstancePool(instance_type=t, max_concurrency=16) for t in pools],
        endpoint_name="llm",
        initial_instance_count=2,
    )
    if scaled:
        endpoint.auto_scale(min_capacity=2, max_capacity=8).scale_on_weighted_utilization(target=0.7)
    return template_of(stack)


OLD_POOLS = ("ml.g6e.48xlarge", "ml.p4d.24xlarge")
NEW_POOLS = ("ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge")


def _types(template: dict[str, Any], actions: dict[str, str]) -> dict[str, str]:
    """``{resource type: action}`` (every changed resource of a type gets the same action here)."""
    found: dict[str, str] = {}
    for logical_id, action in actions.items():
        resource_type = template["Resources"][logical_id]["Type"]
        assert found.setdefault(resource_type, action) == action, (resource_type, actions)
    return found


def test_changing_the_pools_of_an_autoscaled_endpoint_leaves_its_target_registered() -> None:
    v1 = _autoscaled(pools=OLD_POOLS, scaled=True)
    v2 = _autoscaled(pools=NEW_POOLS, scaled=True)
    by_type = _types(v2, plan(v1, v2))
    # The config is replaced and the endpoint updated in place (UpdateEndpoint), while the
    # scalable target does not change: it stays registered during the update. The policy's
    # metric math names each pool's type, so it is updated in place.
    assert by_type == {
        "AWS::SageMaker::EndpointConfig": "replace",
        "AWS::SageMaker::Endpoint": "update",
        SCALING_POLICY: "update",
    }
    assert SCALABLE_TARGET not in by_type


def test_the_two_deploys_that_deregister_the_target_around_a_pool_change() -> None:
    scaled_old = _autoscaled(pools=OLD_POOLS, scaled=True)
    unscaled_old = _autoscaled(pools=OLD_POOLS, scaled=False)
    scaled_new = _autoscaled(pools=NEW_POOLS, scaled=True)
    # Deploy 1, auto_scale() taken out: the target and its policy are removed (DeregisterScalableTarget)
    # and no SageMaker resource changes.
    assert _types(scaled_old, plan(scaled_old, unscaled_old)) == {SCALABLE_TARGET: "remove", SCALING_POLICY: "remove"}
    # Deploy 2, the new pools and auto_scale() back: the endpoint is updated with no target
    # registered, then the target and the policy are created.
    actions = plan(unscaled_old, scaled_new)
    assert _types(scaled_new, actions) == {
        "AWS::SageMaker::EndpointConfig": "replace",
        "AWS::SageMaker::Endpoint": "update",
        SCALABLE_TARGET: "add",
        SCALING_POLICY: "add",
    }
    # ... in that order: the new target waits for the endpoint (its ResourceId names it by a literal).
    resources = scaled_new["Resources"]
    endpoint_id = next(k for k, v in resources.items() if v["Type"] == "AWS::SageMaker::Endpoint")
    target_id, target = next((k, v) for k, v in resources.items() if v["Type"] == SCALABLE_TARGET)
    assert target["Properties"]["ResourceId"] == "endpoint/llm/variant/AllTraffic"
    assert endpoint_id in target.get("DependsOn", [])
    policy = next(v for v in resources.values() if v["Type"] == SCALING_POLICY)
    assert target_id in policy.get("DependsOn", [])


# -- data capture and a shadow variant ------------------------------------------------------------
#
# Both live on the EndpointConfig, whose every property is create-only: any change makes a new
# config that the endpoint takes in place (UpdateEndpoint). What then decides whether SageMaker
# applies a capture change is RetainAllVariantProperties, which retains DataCaptureConfig too
# (UpdateEndpoint's VariantPropertyType): the library excludes it from retention whenever
# capture is configured.

CAPTURE_EXCLUDED = [{"VariantPropertyType": "DataCaptureConfig"}]


def _captured(*, capture: dict[str, Any] | None = None, shadow: bool = False) -> dict[str, Any]:
    from sagemaker_pools import DataCapture, ShadowVariant

    stack = new_stack("Llm")
    int4 = PoolModel.from_model_name(stack, "Int4", "llm-int4")
    PooledEndpoint(
        stack,
        "Endpoint",
        model=PoolModel.from_model_name(stack, "Model", "llm"),
        pools=[InstancePool(instance_type="ml.g6e.48xlarge"), InstancePool(instance_type="ml.g6.48xlarge", model=int4)],
        endpoint_name="llm",
        data_capture=DataCapture(bucket=s3.Bucket.from_bucket_name(stack, "Capture", "my-capture"), **capture) if capture is not None else None,
        shadow=ShadowVariant(model=int4, instance_type="ml.g6.48xlarge") if shadow else None,
    )
    return template_of(stack)


def _endpoint_props(template: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Endpoint")["Properties"]  # type: ignore[no-any-return]


def _config_props(template: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::EndpointConfig")["Properties"]  # type: ignore[no-any-return]


def test_capture_on_replaces_the_config_and_updates_the_endpoint_with_capture_excluded_from_retention() -> None:
    v1, v2 = _captured(), _captured(capture={})
    assert _types(v2, plan(v1, v2)) == {"AWS::SageMaker::EndpointConfig": "replace", "AWS::SageMaker::Endpoint": "update"}
    assert "ExcludeRetainedVariantProperties" not in _endpoint_props(v1)
    assert _endpoint_props(v2)["ExcludeRetainedVariantProperties"] == CAPTURE_EXCLUDED
    assert _config_props(v2)["DataCaptureConfig"]["EnableCapture"] is True


def test_capture_off_keeps_the_exclusion_so_the_update_applies_it() -> None:
    """enable_capture=False, not removing data_capture=: the endpoint still excludes the capture
    config from retention, so UpdateEndpoint applies EnableCapture false."""
    v1, v2 = _captured(capture={}), _captured(capture={"enable_capture": False})
    assert _types(v2, plan(v1, v2)) == {"AWS::SageMaker::EndpointConfig": "replace", "AWS::SageMaker::Endpoint": "update"}
    assert _endpoint_props(v2)["ExcludeRetainedVariantProperties"] == CAPTURE_EXCLUDED
    assert _config_props(v2)["DataCaptureConfig"]["EnableCapture"] is False


def test_removing_data_capture_drops_the_exclusion() -> None:
    """What docs/ops.md warns about: with the exclusion gone, whether the endpoint keeps capturing
    rests on RetainAllVariantProperties, which retains DataCaptureConfig."""
    v1, v2 = _captured(capture={}), _captured()
    assert _types(v2, plan(v1, v2)) == {"AWS::SageMaker::EndpointConfig": "replace", "AWS::SageMaker::Endpoint": "update"}
    assert "ExcludeRetainedVariantProperties" not in _endpoint_props(v2)
    assert _endpoint_props(v2)["RetainAllVariantProperties"] is True


def test_a_sampling_change_replaces_the_config_and_is_applied() -> None:
    v1, v2 = _captured(capture={"sampling_percentage": 100}), _captured(capture={"sampling_percentage": 5})
    actions = plan(v1, v2)
    assert _types(v2, actions) == {"AWS::SageMaker::EndpointConfig": "replace", "AWS::SageMaker::Endpoint": "update"}
    # The endpoint's properties read the same (the exclusion was there before and stays): it is
    # updated because its EndpointConfigName points at a replaced config.
    (endpoint_id,) = [k for k, a in actions.items() if v2["Resources"][k]["Type"] == "AWS::SageMaker::Endpoint"]
    assert v1["Resources"][endpoint_id]["Properties"] == v2["Resources"][endpoint_id]["Properties"]
    assert _endpoint_props(v2)["ExcludeRetainedVariantProperties"] == CAPTURE_EXCLUDED
    assert _config_props(v2)["DataCaptureConfig"]["InitialSamplingPercentage"] == 5


def test_adding_and_removing_a_shadow_replace_the_config_and_update_the_endpoint_in_place() -> None:
    without, with_shadow = _captured(capture={}), _captured(capture={}, shadow=True)
    for v1, v2 in ((without, with_shadow), (with_shadow, without)):
        actions = plan(v1, v2)
        assert _types(v2, actions) == {"AWS::SageMaker::EndpointConfig": "replace", "AWS::SageMaker::Endpoint": "update"}
        # The endpoint keeps its name (create-only): never replaced, so production keeps serving.
        assert _endpoint_props(v2)["EndpointName"] == "llm"
    assert [v["VariantName"] for v in _config_props(with_shadow)["ShadowProductionVariants"]] == ["Shadow"]
    assert "ShadowProductionVariants" not in _config_props(without)
    # Production's weight appears beside the shadow only (the shadow's share is its weight over it).
    assert _config_props(with_shadow)["ProductionVariants"][0]["InitialVariantWeight"] == 100
    assert "InitialVariantWeight" not in _config_props(without)["ProductionVariants"][0]
