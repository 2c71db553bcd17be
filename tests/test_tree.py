"""The ids the library derives from construct paths in Python are the ones CDK derives in Node."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import jsii
import pytest
from aws_cdk import Names
from aws_cdk import aws_applicationautoscaling as appscaling
from constructs import Construct

from sagemaker_pools import InstancePool, PooledEndpoint, PoolModel, ContainerImage, ModelData
from sagemaker_pools._tree import (
    logical_id,
    path_of,
    remember_stack,
    root_of,
    stack_environment,
    stack_of,
    stack_partition,
    unique_id,
)
from support.synth import new_app, resources, template_of

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"

#: Paths below a stack: one component, Default (hidden), repeats (dropped from the readable part),
#: Resource (dropped from it too), non-alphanumerics, and readable parts past 240 characters.
PATHS = {
    "one": ["Endpoint"],
    "one, not alphanumeric": ["my-endpoint.v2"],
    "one, the longest kept": ["E" * 255],
    "one, too long to keep": ["E" * 256],
    "default hidden": ["Model", "Default", "Resource"],
    "repeats": ["Scaling", "Scaling", "ScalingPolicy", "Policy"],
    "resource": ["Llm", "ExecutionRole", "DefaultPolicy", "Resource"],
    "long": ["A" * 150, "B" * 150, "Resource"],
}


@pytest.mark.parametrize("below", list(PATHS.values()), ids=list(PATHS))
def test_unique_and_logical_ids_are_cdks(below: list[str]) -> None:
    app = new_app()
    stage = cdk.Stage(app, "Prod")
    stack = cdk.Stack(stage, "Fleet")
    scope: Construct = stack
    for component in below[:-1]:
        scope = Construct(scope, component)
    leaf = cdk.CfnResource(scope, below[-1], type="AWS::SNS::Topic")
    assert unique_id(path_of(leaf).split("/")) == Names.unique_id(leaf)
    assert logical_id(path_of(stack), path_of(leaf).split("/")) == stack.resolve(leaf.logical_id)


def test_a_unique_id_needs_a_component() -> None:
    with pytest.raises(ValueError, match="^a unique id of no components$"):
        unique_id(["Default"])


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call to Node from now on, by kind (the generated bindings call ``jsii.<kind>``)."""
    calls: list[str] = []
    for kind in ("create", "invoke", "get", "set", "sget", "sinvoke", "sset"):
        original = getattr(jsii, kind)

        def counted(*args: Any, _original: Any = original, _kind: str = kind, **kwargs: Any) -> Any:
            calls.append(_kind)
            return _original(*args, **kwargs)

        monkeypatch.setattr(jsii, kind, counted)
    return calls


def test_a_constructs_stack_path_and_partition_are_asked_once(round_trips: list[str]) -> None:
    stack = cdk.Stack(new_app(), "Fleet", env=cdk.Environment(region="cn-north-1"))
    leaf = Construct(Construct(stack, "Team"), "Service")
    round_trips.clear()
    assert stack_of(leaf) is stack and stack_of(leaf) is stack
    assert round_trips == ["sinvoke"]  # Stack.of, once
    round_trips.clear()
    assert path_of(leaf) == path_of(leaf) == "Fleet/Team/Service"
    assert round_trips == ["get", "get"]  # .node, .path: once
    round_trips.clear()
    assert stack_partition(stack) == stack_partition(stack) == "aws-cn"
    assert round_trips == ["get"]


def test_a_stacks_environment_and_app_are_asked_once(round_trips: list[str]) -> None:
    app = new_app()
    pinned = cdk.Stack(app, "Pinned", env=cdk.Environment(account="123456789012", region="eu-west-1"))
    agnostic = cdk.Stack(app, "Agnostic")
    round_trips.clear()
    assert stack_environment(pinned) == stack_environment(pinned) == "aws://123456789012/eu-west-1"
    assert round_trips == ["get"]
    assert stack_environment(agnostic) == "aws://unknown-account/unknown-region"
    round_trips.clear()
    assert root_of(pinned) is root_of(pinned) is app
    assert round_trips == ["get", "get"]  # .node, .root: once


def test_remember_stack_records_what_is_known_without_asking(round_trips: list[str]) -> None:
    stack = cdk.Stack(new_app(), "Fleet")
    child = Construct(stack, "Child")
    remember_stack(child, stack, "Child")  # a stack's own path: asked once, then the child's is known
    round_trips.clear()
    assert stack_of(child) is stack and path_of(child) == "Fleet/Child"
    assert round_trips == []
    grandchild = Construct(child, "Grandchild")
    remember_stack(grandchild, child, "Grandchild")
    unknown = Construct(Construct(stack, "Unrecorded"), "Leaf")
    scope = unknown.node.scope
    round_trips.clear()
    remember_stack(unknown, scope, "Leaf")  # type: ignore[arg-type]
    assert round_trips == ["sinvoke"]  # the scope's stack; its path is not asked for
    round_trips.clear()
    assert path_of(grandchild) == "Fleet/Child/Grandchild" and round_trips == []
    assert path_of(unknown) == "Fleet/Unrecorded/Leaf" and round_trips == ["get", "get"]


def test_a_scaling_policy_is_named_as_names_unique_id_names_it() -> None:
    """Under a stack (whose endpoint's path the library records) and deeper (where it asks Node)."""
    # In a stack; deeper; and under an id with a space that ends as the next one does (which
    # makeUniqueId's readable part drops): the path's components must be the construct ids.
    parents = (
        lambda stack: stack,
        lambda stack: Construct(Construct(stack, "Team"), "Service"),
        lambda stack: Construct(stack, "Team Endpoint"),
    )
    for parent_of in parents:
        stack = cdk.Stack(new_app(), "Fleet")
        parent = parent_of(stack)
        model = PoolModel(parent, "Model", image=ContainerImage.from_image_uri(IMAGE),
                          model_data=ModelData.from_s3_object("my-llm-artifacts", "llm/model.tar.gz"))
        endpoint = PooledEndpoint(
            parent, "Endpoint", model=model,
            pools=[InstancePool(instance_type="ml.g6e.48xlarge", max_concurrency=32), InstancePool(instance_type="ml.g6.48xlarge", max_concurrency=16)],
        )
        endpoint.auto_scale(min_capacity=1, max_capacity=4).scale_on_weighted_utilization(target=0.7)
        (policy,) = [c for c in endpoint.auto_scaling.node.children if isinstance(c, appscaling.CfnScalingPolicy)]  # type: ignore[union-attr]
        (rendered,) = resources(template_of(stack), "AWS::ApplicationAutoScaling::ScalingPolicy").values()
        assert rendered["Properties"]["PolicyName"] == Names.unique_id(policy)


def test_naming_a_scaling_policy_asks_node_nothing_of_a_recorded_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """An endpoint made in a stack records its path, and so does its scaling: the policy's name
    costs no round trip."""
    stack = cdk.Stack(new_app(), "Fleet")
    model = PoolModel(stack, "Model", image=ContainerImage.from_image_uri(IMAGE))
    endpoint = PooledEndpoint(stack, "Endpoint", model=model, pools=[InstancePool(instance_type="ml.g6e.48xlarge", max_concurrency=32)])
    asked: list[str] = []
    original = jsii.get
    monkeypatch.setattr(jsii, "get", lambda obj, name, *a: asked.append(name) or original(obj, name, *a))
    endpoint.auto_scale(min_capacity=1, max_capacity=4).scale_on_weighted_utilization(target=0.7)
    assert "path" not in asked
