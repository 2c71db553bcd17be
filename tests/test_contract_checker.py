"""The API contract checker itself must be able to fail."""

from __future__ import annotations

from support.contract import check_request, template_problems


def _config(**variant_overrides: object) -> dict[str, object]:
    variant = {
        "VariantName": "AllTraffic",
        "ModelName": {"Fn::GetAtt": ["Model", "ModelName"]},
        "InitialInstanceCount": 1,
        "InstancePools": [{"InstanceType": "ml.g6e.48xlarge", "Priority": 1}],
    }
    variant.update(variant_overrides)
    return {"Resources": {"Config": {"Type": "AWS::SageMaker::EndpointConfig", "Properties": {"ProductionVariants": [variant]}}}}


def test_valid_config_passes() -> None:
    assert template_problems(_config()) == {"Config": []}


def test_priority_above_five_fails() -> None:
    (problem,) = template_problems(_config(InstancePools=[{"InstanceType": "ml.g6e.48xlarge", "Priority": 7}]))["Config"]
    assert "Priority" in problem and "max 5" in problem


def test_unknown_instance_type_and_member_fail() -> None:
    problems = template_problems(_config(InstancePools=[{"InstanceType": "ml.g9.huge", "Priority": 1, "Weight": 2}]))["Config"]
    assert any("Unknown parameter" in p for p in problems)
    assert any("not in enum" in p for p in problems)


def test_pattern_and_missing_required_fail() -> None:
    problems = check_request("sagemaker", "CreateEndpoint", {"EndpointName": "bad_name"})
    assert any("EndpointConfigName" in p for p in problems)
    assert any("does not match" in p for p in problems)
