"""Deploy order: what names a resource of the stack by a literal depends on it (support/deploy_order.py).

Run over every example stack as app.py builds it, and over a fixed-name variant of each: every
example stack takes ``endpoint_name=`` (public API), and the variant gives every endpoint one.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import aws_cdk as cdk
import pytest

import sagemaker_pools_examples
from support.deploy_order import deploy_order_problems, name_references
from support.synth import new_app, resources, template_of

EXAMPLE_STACKS = [getattr(sagemaker_pools_examples, name) for name in sagemaker_pools_examples.__all__]


def test_every_example_stack_is_in_deploy_order(example_templates: dict[str, dict[str, Any]]) -> None:
    assert {name: deploy_order_problems(t) for name, t in example_templates.items()} == {n: [] for n in example_templates}
    # The check has something to check: the fixed-name realtime endpoint, the named component.
    kinds = {ref.kind for t in example_templates.values() for ref in name_references(t)}
    assert {"endpoint", "inference-component", "scalable-target"} <= kinds


@pytest.mark.parametrize("stack_class", EXAMPLE_STACKS, ids=[c.__name__ for c in EXAMPLE_STACKS])
def test_fixed_name_variant_of_every_example_stack_is_in_deploy_order(stack_class: type[cdk.Stack]) -> None:
    assert "endpoint_name" in inspect.signature(stack_class.__init__).parameters, f"{stack_class.__name__} takes no endpoint_name"
    app = new_app()
    name = f"fixed-{stack_class.__name__.lower()}"
    stack = stack_class(app, "Fixed", endpoint_name=name)  # type: ignore[call-arg]
    template = template_of(stack)
    endpoints = resources(template, "AWS::SageMaker::Endpoint")
    assert endpoints and all(e["Properties"].get("EndpointName") == name for e in endpoints.values())
    assert deploy_order_problems(template) == []
    assert any(ref.kind == "endpoint" and ref.name == name for ref in name_references(template))


# -- the check itself can fail ----------------------------------------------------------------


def _template() -> dict[str, Any]:
    """An endpoint with a fixed name, a component and its scalable target and policy, all in order."""
    return {
        "Resources": {
            "Config": {"Type": "AWS::SageMaker::EndpointConfig", "Properties": {"ProductionVariants": [{"VariantName": "AllTraffic"}]}},
            "Endpoint": {
                "Type": "AWS::SageMaker::Endpoint",
                "Properties": {"EndpointName": "llm", "EndpointConfigName": {"Fn::GetAtt": ["Config", "EndpointConfigName"]}},
            },
            "Component": {
                "Type": "AWS::SageMaker::InferenceComponent",
                "Properties": {"EndpointName": "llm", "VariantName": "AllTraffic", "InferenceComponentName": "llm-ic"},
                "DependsOn": ["Endpoint"],
            },
            "Target": {
                "Type": "AWS::ApplicationAutoScaling::ScalableTarget",
                "Properties": {
                    "ResourceId": "inference-component/llm-ic",
                    "ScalableDimension": "sagemaker:inference-component:DesiredCopyCount",
                    "ServiceNamespace": "sagemaker",
                },
                "DependsOn": ["Component"],
            },
            "Policy": {
                "Type": "AWS::ApplicationAutoScaling::ScalingPolicy",
                "Properties": {
                    "ResourceId": "inference-component/llm-ic",
                    "ScalableDimension": "sagemaker:inference-component:DesiredCopyCount",
                    "ServiceNamespace": "sagemaker",
                },
                "DependsOn": ["Target"],
            },
            "Alarm": {
                "Type": "AWS::CloudWatch::Alarm",
                "Properties": {"Dimensions": [{"Name": "EndpointName", "Value": "llm"}]},
            },
        }
    }


def test_a_template_in_order_passes_and_is_checked() -> None:
    template = _template()
    assert deploy_order_problems(template) == []
    assert {(r.referrer, r.kind) for r in name_references(template)} == {
        ("Component", "endpoint"),
        ("Target", "inference-component"),
        ("Policy", "scalable-target"),
    }


def test_a_component_that_names_its_endpoint_without_depending_on_it_fails() -> None:
    template = copy.deepcopy(_template())
    del template["Resources"]["Component"]["DependsOn"]
    (problem,) = deploy_order_problems(template)
    assert problem.startswith("Component.EndpointName names endpoint 'llm' (Endpoint)")


def test_a_scalable_target_on_a_literal_variant_without_dependency_fails() -> None:
    template = copy.deepcopy(_template())
    template["Resources"]["VariantTarget"] = {
        "Type": "AWS::ApplicationAutoScaling::ScalableTarget",
        "Properties": {"ResourceId": "endpoint/LLM/variant/AllTraffic", "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"},
    }
    (problem,) = deploy_order_problems(template)
    assert problem.startswith("VariantTarget.ResourceId names endpoint 'LLM' (Endpoint)")
    # A literal assembled with Fn::Join is still a literal.
    template["Resources"]["VariantTarget"]["Properties"]["ResourceId"] = {"Fn::Join": ["", ["endpoint/", "llm", "/variant/AllTraffic"]]}
    assert len(deploy_order_problems(template)) == 1


def test_a_path_through_other_resources_counts_and_getatt_counts() -> None:
    template = copy.deepcopy(_template())
    # Policy -> Target -> Component -> Endpoint: transitive DependsOn.
    template["Resources"]["Policy"]["DependsOn"] = ["Target"]
    template["Resources"]["Component"]["DependsOn"] = "Endpoint"
    assert deploy_order_problems(template) == []
    # A GetAtt orders it just as well.
    del template["Resources"]["Component"]["DependsOn"]
    template["Resources"]["Component"]["Properties"]["Tags"] = [{"Key": "e", "Value": {"Fn::GetAtt": ["Endpoint", "EndpointArn"]}}]
    assert deploy_order_problems(template) == []


def test_a_policy_before_its_target_fails_and_a_name_nobody_owns_is_skipped() -> None:
    template = copy.deepcopy(_template())
    del template["Resources"]["Policy"]["DependsOn"]
    (problem,) = deploy_order_problems(template)
    assert problem.startswith("Policy.ResourceId names scalable-target")
    template["Resources"]["Policy"]["DependsOn"] = ["Target"]
    template["Resources"]["Component"]["Properties"]["EndpointName"] = "imported-elsewhere"
    del template["Resources"]["Component"]["DependsOn"]
    assert deploy_order_problems(template) == []
