"""The SageMaker execution role every created model and model-less endpoint starts from."""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import Acknowledgment, Stack, Validations
from aws_cdk import aws_iam as iam
from constructs import Construct

__all__ = [
    "new_execution_role",
    "add_statements",
    "statement",
    "acknowledge_wildcard",
    "stack_of",
    "stack_partition",
    "remember_stack",
    "LOG_GROUP_PREFIXES",
]

#: The log groups SageMaker writes a container's stdout/stderr to: an endpoint's model containers
#: log to ``/aws/sagemaker/Endpoints/<endpoint name>`` (SageMaker Developer Guide, "Log groups and
#: streams that Amazon SageMaker AI sends to Amazon CloudWatch Logs"); an inference component's
#: containers log to ``/aws/sagemaker/InferenceComponents/<inference component name>``.
LOG_GROUP_PREFIXES = ("/aws/sagemaker/Endpoints/", "/aws/sagemaker/InferenceComponents/")


def new_execution_role(
    scope: Construct,
    *,
    wildcard_reason: str,
    id: str = "ExecutionRole",
    statements: Sequence[iam.PolicyStatement] = (),
    wildcards: Sequence[tuple[str, str]] = (),
) -> tuple[iam.Role, iam.Policy | None]:
    """A role SageMaker assumes that may write its endpoint's logs and metrics, plus ``statements``.

    ``wildcard_reason`` says why every ``"*"`` resource the caller adds (or this function's
    ``cloudwatch:PutMetricData``) is one AWS requires; it becomes the cdk-nag acknowledgment, so
    cdk-nag users need not repeat it. ``wildcards`` are further ``(resource ARN, reason)`` pairs
    acknowledged as :func:`acknowledge_wildcard` does. Returns the role and its default policy
    (``None`` only where CDK's role customization replaces the role).

    The statements go to the role's default policy in the order given (after the logs and metrics
    statements), as ``add_to_policy`` one by one would add them, in a few round trips to Node.
    """
    stack = stack_of(scope)
    base = _stack_basics(stack)
    role = iam.Role(scope, id, assumed_by=base.principal)
    _STACKS[role] = stack
    policy = add_statements(role, [*base.statements, *statements])
    # One acknowledge call for all (each call is a round trip to Node).
    Validations.of(role).acknowledge(
        Acknowledgment(id="AwsSolutions::AwsSolutions-IAM5[Resource::*]", reason=wildcard_reason),
        *base.log_acknowledgments,
        *_wildcard_acknowledgments(stack, wildcards),
    )
    return role, policy


def add_statements(role: iam.Role, statements: Sequence[iam.PolicyStatement]) -> iam.Policy | None:
    """Add ``statements`` to ``role``'s default policy, in order; return that policy.

    The same as ``role.add_to_principal_policy`` for each, but the second and later statements go
    to the policy in one call (``Role.add_to_principal_policy`` creates the default policy and
    appends to its document, which is all ``Policy.add_statements`` does).
    """
    if not statements:
        return None
    role.add_to_principal_policy(statements[0])
    policy = role.node.try_find_child("DefaultPolicy")
    if not isinstance(policy, iam.Policy):
        # Role customization (``@aws-cdk/iam:customizeRoles``) keeps statements elsewhere.
        for statement in statements[1:]:
            role.add_to_principal_policy(statement)
        return None
    if len(statements) > 1:
        policy.add_statements(*statements[1:])
    return policy


def stack_of(construct: Construct) -> Stack:
    """``Stack.of(construct)``, asked of Node once per construct (a construct never changes stacks)."""
    if isinstance(construct, Stack):
        return construct
    stack = _STACKS.get(construct)
    if stack is None:
        stack = _STACKS[construct] = Stack.of(construct)
    return stack


def stack_partition(stack: Stack) -> str:
    """``stack.partition`` (a literal where the stack's region is known), asked of Node once per stack."""
    partition = _PARTITIONS.get(stack)
    if partition is None:
        partition = _PARTITIONS[stack] = stack.partition
    return partition


_PARTITIONS: "weakref.WeakKeyDictionary[Stack, str]" = weakref.WeakKeyDictionary()


def remember_stack(construct: Construct, scope: Construct) -> None:
    """Record that ``construct`` (just made under ``scope``) is in ``scope``'s stack."""
    _STACKS[construct] = stack_of(scope)


_STACKS: "weakref.WeakKeyDictionary[Construct, Stack]" = weakref.WeakKeyDictionary()


class _StackBasics:
    """What every execution role of one stack shares: SageMaker's principal, the logs and metrics statements, the
    log-group acknowledgments."""

    def __init__(self, stack: Stack) -> None:
        partition, region, account = stack_partition(stack), stack.region, stack.account
        # Log groups are named after endpoints and inference components, which may be generated:
        # scope to SageMaker's two prefixes. Written as Stack.format_arn writes it
        # (ArnFormat.COLON_RESOURCE_NAME), without a round trip an ARN.
        self.log_groups = [
            f"arn:{partition}:logs:{region}:{account}:log-group:{prefix}*" for prefix in LOG_GROUP_PREFIXES
        ]
        self.log_acknowledgments = _wildcard_acknowledgments(
            stack,
            [
                (
                    arn,
                    f"SageMaker names these log groups {prefix}<name> after the endpoint or inference component, a "
                    "name that is generated or not known to this role: scoped to SageMaker's log-group prefix.",
                )
                for prefix, arn in zip(LOG_GROUP_PREFIXES, self.log_groups)
            ],
        )
        self.statements = (
            statement(
                stack,
                ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                self.log_groups,
            ),
            # PutMetricData has no resource-level permissions: AWS requires "*"; narrowed by namespace.
            statement(
                stack,
                ["cloudwatch:PutMetricData"],
                ["*"],
                {"StringLike": {"cloudwatch:namespace": ["/aws/sagemaker/*", "AWS/SageMaker*"]}},
            ),
        )
        self.principal = iam.ServicePrincipal("sagemaker.amazonaws.com")



_BASICS: "weakref.WeakKeyDictionary[Stack, _StackBasics]" = weakref.WeakKeyDictionary()


def statement(
    stack: Stack, actions: Sequence[str], resources: Sequence[str], conditions: Mapping[str, Any] | None = None
) -> iam.PolicyStatement:
    """An Allow statement of ``actions`` on ``resources``, made once per stack and value.

    Every role of a stack that needs the same statement (the logs and metrics statements, pulling
    the same image, ``ecr:GetAuthorizationToken``) shares one object: a statement is one round trip
    to Node to make, and nothing changes a statement once it is in a policy document (CDK freezes
    it there; merging and minimizing make new statements).
    """
    cache = _STATEMENTS.get(stack)
    if cache is None:
        cache = _STATEMENTS[stack] = {}
    key = json.dumps([list(actions), list(resources), conditions], sort_keys=True)
    made = cache.get(key)
    if made is None:
        made = cache[key] = iam.PolicyStatement(
            actions=list(actions), resources=list(resources), conditions=dict(conditions) if conditions else None
        )
    return made


_STATEMENTS: "weakref.WeakKeyDictionary[Stack, dict[str, iam.PolicyStatement]]" = weakref.WeakKeyDictionary()


def _stack_basics(stack: Stack) -> _StackBasics:
    basics = _BASICS.get(stack)
    if basics is None:
        basics = _BASICS[stack] = _StackBasics(stack)
    return basics


def acknowledge_wildcard(grantee: object, resource_arn: str, reason: str) -> None:
    """Acknowledge cdk-nag's AwsSolutions-IAM5 finding for one wildcard resource this library grants.

    Only where the library knows why the wildcard is right (an object prefix whose keys are made
    at run time, ...). The finding id quotes the resource as cdk-nag prints it, so it is derived
    from the resolved ARN. Grantees that are not constructs (an imported principal) are skipped.
    """
    if not isinstance(grantee, Construct):
        return
    Validations.of(grantee).acknowledge(*_wildcard_acknowledgments(stack_of(grantee), [(resource_arn, reason)]))


def _wildcard_acknowledgments(stack: Stack, wildcards: Sequence[tuple[str, str]]) -> list[Acknowledgment]:
    """cdk-nag's AwsSolutions-IAM5 finding ids for ``(resource ARN, reason)`` pairs, as cdk-nag prints them."""
    if not wildcards:
        return []
    # The evidence is derived from the resolved ARN: with an explicit stack environment the region
    # and account are literals, not pseudo parameters. Only an ARN's token part is resolved (a
    # bucket's ARN, say, once per stack for every prefix under it): the literal tail after its
    # last token reads the same resolved or not.
    splits = [_split_after_last_token(arn) for arn, _ in wildcards]
    resolved = _RESOLVED_EVIDENCE.get(stack)
    if resolved is None:
        resolved = _RESOLVED_EVIDENCE[stack] = {"": ""}
    missing = list(dict.fromkeys(head for head, _ in splits if head not in resolved))
    if missing:
        # One round trip for all.
        for head, value in zip(missing, stack.resolve(missing)):
            resolved[head] = _nag_evidence(value)
    return [
        Acknowledgment(id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{resolved[head]}{tail}]", reason=reason)
        for (head, tail), (_, reason) in zip(splits, wildcards)
    ]


#: A token encoded in a string, as ``Token.as_string`` writes it: ``${Token[NAME.123]}``.
_STRING_TOKEN = re.compile(r"\$\{Token\[[^\]]*\]\}")

#: Per stack: cdk-nag's evidence for each token-bearing ARN head resolved so far.
_RESOLVED_EVIDENCE: "weakref.WeakKeyDictionary[Stack, dict[str, str]]" = weakref.WeakKeyDictionary()


def _split_after_last_token(value: str) -> tuple[str, str]:
    """``value`` split after its last string-encoded token: (up to and with it, the literal rest)."""
    end = 0
    for match in _STRING_TOKEN.finditer(value):
        end = match.end()
    return value[:end], value[end:]


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
