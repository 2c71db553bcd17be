"""``migrate``: which CloudFormation stack owns the endpoint, asked of CloudFormation (DescribeStackResources).

CloudFormation puts no ``aws:cloudformation:*`` tags on SageMaker endpoints and configs
(``"cloudFormationSystemTags": false`` in both resource schemas), so the tags cannot be the guard:
``--apply`` refuses when DescribeStackResources(PhysicalResourceId=<endpoint ARN>) names a stack,
goes on when it answers "Stack for ... does not exist", and refuses (fails closed) when the caller
may not ask.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import ops_samples as s
import pytest
from botocore.stub import ANY, Stubber
from ops_support import not_managed

from sagemaker_pools.ops.aws import USER_AGENT, AwsOptions, Clients
from sagemaker_pools.ops.stack_owner import StackOwnership, stack_ownership

FALLBACKS = ("--fallback", "ml.g6.48xlarge")
NEW = "my-config-pools-20261129101500"
ARN = s.SINGLE_ENDPOINT["EndpointArn"]
STACK_ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/llm-stack/3f1c2a40-8d1e-11f0-9a3b-0a1b2c3d4e5f"
DENIED = (
    "User: arn:aws:sts::123456789012:assumed-role/ml-ops/dev is not authorized to perform: "
    "cloudformation:DescribeStackResources because no identity-based policy allows the cloudformation:DescribeStackResources action"
)


def _resource(logical_id: str, resource_type: str, physical_id: str, status: str = "UPDATE_COMPLETE") -> dict[str, Any]:
    """A StackResource of stack llm-stack."""
    return {
        "StackName": "llm-stack",
        "StackId": STACK_ID,
        "LogicalResourceId": logical_id,
        "PhysicalResourceId": physical_id,
        "ResourceType": resource_type,
        "Timestamp": s.T1,
        "ResourceStatus": status,
    }


#: What CloudFormation answers for an endpoint this library deployed: every resource of its stack.
MANAGED = {
    "StackResources": [
        _resource("LlmEndpointConfig6B1C2D3E", "AWS::SageMaker::EndpointConfig", s.arn("endpoint-config", "my-config")),
        _resource("LlmEndpoint5A0B1C2D", "AWS::SageMaker::Endpoint", ARN),
    ]
}


def _live(stub: Stubber, tags: list[dict[str, str]] | None = None) -> None:
    """The live endpoint (InService, one type) and its config; its tags (none, as on a CloudFormation-made config)."""
    stub.add_response("describe_endpoint", s.SINGLE_ENDPOINT, {"EndpointName": "my-endpoint"})
    stub.add_response("describe_endpoint_config", s.SINGLE_CONFIG, {"EndpointConfigName": "my-config"})
    stub.add_response("list_tags", {"Tags": tags or []}, {"ResourceArn": s.SINGLE_CONFIG["EndpointConfigArn"]})


def _answer(cfn_stub: Stubber, response: dict[str, Any]) -> None:
    cfn_stub.add_response("describe_stack_resources", response, {"PhysicalResourceId": ARN})


def _denied(cfn_stub: Stubber) -> None:
    cfn_stub.add_client_error(
        "describe_stack_resources",
        service_error_code="AccessDenied",
        service_message=DENIED,
        http_status_code=403,
        expected_params={"PhysicalResourceId": ARN},
    )


# -- managed: refused, named --------------------------------------------------------------------


def test_apply_refuses_an_endpoint_a_stack_manages_naming_the_stack_and_logical_id(
    stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    _live(stub)  # no aws:cloudformation:* tag: the tag check would have let this through
    _answer(cfn_stub, MANAGED)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        "sagemaker-pools: error: refusing to --apply: CloudFormation stack llm-stack manages endpoint my-endpoint "
        "(logical id LlmEndpoint5A0B1C2D); deploy the PooledEndpoint change through the stack instead"
    )
    # refused before anything changed, and before autoscaling was even looked at
    assert calls == [
        "sagemaker:DescribeEndpoint",
        "sagemaker:DescribeEndpointConfig",
        "sagemaker:ListTags",
        "cloudformation:DescribeStackResources",
    ]


def test_the_dry_run_shows_the_stack_in_text_and_json(stub: Stubber, cfn_stub: Stubber, run_cli: Any) -> None:
    _live(stub)
    _answer(cfn_stub, MANAGED)
    text = run_cli("migrate", "my-endpoint", *FALLBACKS)
    assert text.code == 0, text.err
    assert (
        "  CloudFormation stack llm-stack manages this endpoint (logical id LlmEndpoint5A0B1C2D, AWS::SageMaker::Endpoint): "
        "change it there (the PooledEndpoint code), because an update made outside the stack is drift that the next stack "
        "update undoes; --apply refuses\n"
    ) in text.out
    _live(stub)
    _answer(cfn_stub, MANAGED)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--json")
    assert result.code == 0, result.err
    finding = json.loads(result.out)["cloudformation"]
    assert {k: finding[k] for k in ("state", "stack_name", "stack_id", "logical_id", "resource_type", "physical_id")} == {
        "state": "managed",
        "stack_name": "llm-stack",
        "stack_id": STACK_ID,
        "logical_id": "LlmEndpoint5A0B1C2D",
        "resource_type": "AWS::SageMaker::Endpoint",
        "physical_id": ARN,
    }
    assert finding["summary"].startswith("CloudFormation stack llm-stack manages this endpoint")


def _ask(response: dict[str, Any] | None = None, *, error: tuple[str, str] | None = None) -> StackOwnership:
    """stack_ownership() against one Stubber-checked DescribeStackResources answer."""
    cfn = boto3.client("cloudformation", region_name="us-east-1")
    with Stubber(cfn) as stubber:
        if error is not None:
            stubber.add_client_error("describe_stack_resources", service_error_code=error[0], service_message=error[1],
                                     expected_params={"PhysicalResourceId": ARN})
        else:
            stubber.add_response("describe_stack_resources", response, {"PhysicalResourceId": ARN})
        return stack_ownership(cfn, ARN)


def test_each_answer_as_a_finding() -> None:
    assert _ask(MANAGED) == StackOwnership(
        ARN, "managed", stack_name="llm-stack", stack_id=STACK_ID, logical_id="LlmEndpoint5A0B1C2D",
        resource_type="AWS::SageMaker::Endpoint", resource_status="UPDATE_COMPLETE",
    )
    assert _ask(error=("ValidationError", f"Stack for {ARN} does not exist")) == StackOwnership(ARN, "not_managed")
    assert _ask({"StackResources": []}) == StackOwnership(ARN, "not_managed")
    assert _ask(error=("AccessDenied", DENIED)) == StackOwnership(
        ARN, "unknown", reason="access denied (AccessDenied): the caller needs cloudformation:DescribeStackResources"
    )
    retained = _ask({"StackResources": [_resource("LlmEndpoint5A0B1C2D", "AWS::SageMaker::Endpoint", ARN, "DELETE_SKIPPED")]})
    assert retained == StackOwnership(
        ARN, "not_managed", stack_name="llm-stack", stack_id=STACK_ID, logical_id="LlmEndpoint5A0B1C2D",
        resource_type="AWS::SageMaker::Endpoint", resource_status="DELETE_SKIPPED",
    )


def test_a_stack_too_large_to_list_the_endpoint_still_refuses() -> None:
    """DescribeStackResources returns a stack's first 100 resources: the stack is known, the logical id is not."""
    cfn = boto3.client("cloudformation", region_name="us-east-1")
    others = {"StackResources": [_resource(f"Queue{i}", "AWS::SQS::Queue", f"https://sqs/q{i}") for i in range(100)]}
    with Stubber(cfn) as stubber:
        stubber.add_response("describe_stack_resources", others, {"PhysicalResourceId": ARN})
        finding = stack_ownership(cfn, ARN)
    assert finding == StackOwnership(ARN, "managed", stack_name="llm-stack", stack_id=STACK_ID)
    assert finding.summary().startswith("CloudFormation stack llm-stack manages this endpoint (logical id not listed)")


# -- not managed: the apply goes on ------------------------------------------------------------


def test_apply_goes_on_when_no_stack_has_the_endpoint_whatever_its_tags_say(
    stub: Stubber, cfn_stub: Stubber, aas_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    # A stale tag (it cannot be set by users, and CloudFormation does not set it here) no longer refuses.
    _live(stub, tags=[{"Key": "aws:cloudformation:stack-name", "Value": "long-gone"}])
    not_managed(cfn_stub, ARN)
    aas_stub.add_response(
        "describe_scalable_targets",
        {"ScalableTargets": []},
        {"ResourceIds": ["endpoint/my-endpoint/variant/primary"], "ServiceNamespace": "sagemaker",
         "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"},
    )
    stub.add_response("create_endpoint_config", {"EndpointConfigArn": s.arn("endpoint-config", NEW)},
                      {"EndpointConfigName": NEW, "ProductionVariants": ANY})
    stub.add_response("update_endpoint", {"EndpointArn": ARN},
                      {"EndpointName": "my-endpoint", "EndpointConfigName": NEW, "RetainAllVariantProperties": True})
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply", "--no-wait")
    assert result.code == 0, result.err
    assert "  no CloudFormation stack manages this endpoint\n" in result.out
    assert calls.index("cloudformation:DescribeStackResources") < calls.index("sagemaker:CreateEndpointConfig")
    assert calls[-2:] == ["sagemaker:CreateEndpointConfig", "sagemaker:UpdateEndpoint"]


@pytest.mark.parametrize("status", ["DELETE_SKIPPED", "DELETE_COMPLETE"])
def test_an_endpoint_its_stack_let_go_is_not_managed(stub: Stubber, cfn_stub: Stubber, run_cli: Any, status: str) -> None:
    """Retained when its stack was deleted (or made again under the same name, so the same ARN): CloudFormation
    still answers for a deleted stack for 90 days, but that stack no longer manages the endpoint."""
    _live(stub)
    _answer(cfn_stub, {"StackResources": [_resource("LlmEndpoint5A0B1C2D", "AWS::SageMaker::Endpoint", ARN, status)]})
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--json")
    assert result.code == 0, result.err
    finding = json.loads(result.out)["cloudformation"]
    assert (finding["state"], finding["stack_name"], finding["resource_status"]) == ("not_managed", "llm-stack", status)
    assert finding["summary"] == f"no CloudFormation stack manages this endpoint (stack llm-stack let it go: {status})"


# -- the question refused: shown in the dry run, --apply fails closed ---------------------------


def test_access_denied_is_shown_by_the_dry_run(stub: Stubber, cfn_stub: Stubber, run_cli: Any) -> None:
    _live(stub)
    _denied(cfn_stub)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--json")
    assert result.code == 0, result.err  # planning needs no CloudFormation permission
    finding = json.loads(result.out)["cloudformation"]
    assert finding["state"] == "unknown"
    assert finding["reason"] == "access denied (AccessDenied): the caller needs cloudformation:DescribeStackResources"
    assert finding["summary"].endswith("; --apply refuses")


def test_access_denied_makes_apply_refuse_naming_the_permission(
    stub: Stubber, cfn_stub: Stubber, run_cli: Any, calls: list[str]
) -> None:
    _live(stub)
    _denied(cfn_stub)
    result = run_cli("migrate", "my-endpoint", *FALLBACKS, "--apply")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        "sagemaker-pools: error: refusing to --apply: cannot tell whether a CloudFormation stack manages endpoint my-endpoint: "
        "access denied (AccessDenied): the caller needs cloudformation:DescribeStackResources; grant it (read-only) and retry"
    )
    assert "sagemaker:CreateEndpointConfig" not in calls and not any(c.startswith("application-autoscaling") for c in calls)


def test_any_other_cloudformation_error_fails_the_command(stub: Stubber, cfn_stub: Stubber, run_cli: Any) -> None:
    """Only "Stack for ... does not exist" means no stack: another ValidationError is not read as one."""
    _live(stub)
    cfn_stub.add_client_error(
        "describe_stack_resources", service_error_code="ValidationError", service_message="Request rate too high for account"
    )
    result = run_cli("migrate", "my-endpoint", *FALLBACKS)
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        "sagemaker-pools: error: DescribeStackResources failed: ValidationError: Request rate too high for account\n"
    )


def test_the_cloudformation_client_is_made_like_the_others() -> None:
    """Region, endpoint URL, standard-mode retries and the user agent come from the command's AWS options."""
    clients = Clients(AwsOptions(region="eu-west-1", endpoint_url="http://127.0.0.1:9", max_attempts=5))
    cfn = clients.cloudformation()
    assert cfn.meta.service_model.service_name == "cloudformation"
    assert (cfn.meta.region_name, cfn.meta.endpoint_url) == ("eu-west-1", "http://127.0.0.1:9")
    assert cfn.meta.config.retries == clients.sagemaker().meta.config.retries == {"mode": "standard", "total_max_attempts": 5}
    assert USER_AGENT in cfn.meta.config.user_agent_extra
    assert clients.cloudformation() is cfn
