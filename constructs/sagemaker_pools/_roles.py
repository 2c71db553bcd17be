"""The SageMaker execution role every created model and model-less endpoint starts from."""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, ArnFormat, Stack, Validations
from aws_cdk import aws_iam as iam
from constructs import Construct

__all__ = ["new_execution_role", "acknowledge_wildcard", "LOG_GROUP_PREFIXES"]

#: The log groups SageMaker writes a container's stdout/stderr to: an endpoint's model containers
#: log to ``/aws/sagemaker/Endpoints/<endpoint name>`` (SageMaker Developer Guide, "Log groups and
#: streams that Amazon SageMaker AI sends to Amazon CloudWatch Logs"); an inference component's
#: containers log to ``/aws/sagemaker/InferenceComponents/<inference component name>``.
LOG_GROUP_PREFIXES = ("/aws/sagemaker/Endpoints/", "/aws/sagemaker/InferenceComponents/")


def new_execution_role(scope: Construct, *, wildcard_reason: str, id: str = "ExecutionRole") -> iam.Role:
    """A role SageMaker assumes that may write its endpoint's logs and metrics, and nothing else yet.

    ``wildcard_reason`` says why every ``"*"`` resource the caller adds (or this function's
    ``cloudwatch:PutMetricData``) is one AWS requires; it becomes the cdk-nag acknowledgment, so
    cdk-nag users need not repeat it.
    """
    role = iam.Role(scope, id, assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    stack = Stack.of(scope)
    # Log groups are named after endpoints and inference components, which may be generated:
    # scope to SageMaker's two prefixes.
    log_groups = [
        stack.format_arn(
            service="logs",
            resource="log-group",
            resource_name=f"{prefix}*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        for prefix in LOG_GROUP_PREFIXES
    ]
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
            resources=log_groups,
        )
    )
    # PutMetricData has no resource-level permissions: AWS requires "*"; narrowed by namespace.
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["cloudwatch:PutMetricData"],
            resources=["*"],
            conditions={"StringLike": {"cloudwatch:namespace": ["/aws/sagemaker/*", "AWS/SageMaker*"]}},
        )
    )
    # One acknowledge call for all three (each call is a round trip to Node).
    Validations.of(role).acknowledge(
        Acknowledgment(id="AwsSolutions::AwsSolutions-IAM5[Resource::*]", reason=wildcard_reason),
        *(
            # The evidence is derived from the resolved ARN: with an explicit stack environment the
            # region and account are literals, not pseudo parameters.
            _wildcard_acknowledgment(
                stack,
                arn,
                f"SageMaker names these log groups {prefix}<name> after the endpoint or inference component, a name "
                "that is generated or not known to this role: scoped to SageMaker's log-group prefix.",
            )
            for prefix, arn in zip(LOG_GROUP_PREFIXES, log_groups)
        ),
    )
    return role


def acknowledge_wildcard(grantee: object, resource_arn: str, reason: str) -> None:
    """Acknowledge cdk-nag's AwsSolutions-IAM5 finding for one wildcard resource this library grants.

    Only where the library knows why the wildcard is right (an object prefix whose keys are made
    at run time, ...). The finding id quotes the resource as cdk-nag prints it, so it is derived
    from the resolved ARN. Grantees that are not constructs (an imported principal) are skipped.
    """
    if not isinstance(grantee, Construct):
        return
    Validations.of(grantee).acknowledge(_wildcard_acknowledgment(Stack.of(grantee), resource_arn, reason))


def _wildcard_acknowledgment(stack: Stack, resource_arn: str, reason: str) -> Acknowledgment:
    """cdk-nag's AwsSolutions-IAM5 finding id for ``resource_arn``, quoted as cdk-nag prints it."""
    evidence = _nag_evidence(stack.resolve(resource_arn))
    return Acknowledgment(id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{evidence}]", reason=reason)


def _nag_evidence(value: Any) -> str:
    """A resolved CloudFormation value written the way cdk-nag prints it in a finding id."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Ref" in value:
        return f"<{value['Ref']}>"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return "<{}.{}>".format(*value["Fn::GetAtt"])
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(_nag_evidence(p) for p in parts)
    return str(value)
