"""The SageMaker execution role every created model and model-less endpoint starts from."""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import jsii
from aws_cdk import Acknowledgment, CfnResource, RemovalPolicy, Resource, Stack, Validations
from aws_cdk import aws_iam as iam
from constructs import Construct, IConstruct

from ._tree import logical_id, path_of, remember_stack, stack_of, stack_partition, stack_path_of

__all__ = [
    "ExecutionRole",
    "as_role",
    "default_policy_of",
    "new_execution_role",
    "wait_for",
    "add_statements",
    "statement",
    "StatementJson",
    "acknowledge_wildcard",
    "LOG_GROUP_PREFIXES",
]

#: The log groups SageMaker writes a container's stdout/stderr to: an endpoint's model containers
#: log to ``/aws/sagemaker/Endpoints/<endpoint name>`` (SageMaker Developer Guide, "Log groups and
#: streams that Amazon SageMaker AI sends to Amazon CloudWatch Logs"); an inference component's
#: containers log to ``/aws/sagemaker/InferenceComponents/<inference component name>``.
LOG_GROUP_PREFIXES = ("/aws/sagemaker/Endpoints/", "/aws/sagemaker/InferenceComponents/")

#: An IAM policy statement as JSON, as ``iam.PolicyStatement.from_json`` reads it.
StatementJson = dict[str, Any]


def new_execution_role(
    scope: Construct,
    *,
    wildcard_reason: str,
    id: str = "ExecutionRole",
    statements: Sequence[StatementJson] = (),
    wildcards: Sequence[tuple[str, str]] = (),
) -> tuple["ExecutionRole | iam.Role", IConstruct | None]:
    """A role SageMaker assumes that may write its endpoint's logs and metrics, plus ``statements``.

    ``wildcard_reason`` says why every ``"*"`` resource the caller adds (or this function's
    ``cloudwatch:PutMetricData``) is one AWS requires; it becomes the cdk-nag acknowledgment, so
    cdk-nag users need not repeat it. ``wildcards`` are further ``(resource ARN, reason)`` pairs
    acknowledged as :func:`acknowledge_wildcard` does. Returns the role and its default policy
    (what to wait for, see :func:`wait_for`; ``None`` only where CDK's role customization
    replaces the role).

    The role is an :class:`ExecutionRole` (L1s; its ``IRole`` made on first use); where CDK's
    role customization applies (``@aws-cdk/iam:customizeRoles``, which only ``iam.Role``
    honours) or the stack allocates its own logical ids, an ``iam.Role``. Either way the
    statements go to the role's default policy in the order given (after the logs and metrics
    statements).
    """
    stack = stack_of(scope)
    base = _stack_basics(stack)
    all_statements = [*base.statements, *statements]
    role: ExecutionRole | iam.Role
    policy: IConstruct | None
    if base.l2_roles:
        role = iam.Role(scope, id, assumed_by=base.principal)
        policy = add_statements(role, all_statements)
        holder: Construct = role
    else:
        role = ExecutionRole(scope, id, statements=all_statements)
        policy, holder = role.policy, role.construct
    remember_stack(holder, scope)
    # One acknowledge call for all (each call is a round trip to Node).
    Validations.of(holder).acknowledge(
        Acknowledgment(id="AwsSolutions::AwsSolutions-IAM5[Resource::*]", reason=wildcard_reason),
        *base.log_acknowledgments,
        *_wildcard_acknowledgments(stack, wildcards),
    )
    return role, policy


def as_role(role: "ExecutionRole | iam.IRole") -> iam.IRole:
    """``role`` as an ``IRole`` (an :class:`ExecutionRole`'s, made on first use)."""
    return role.role if isinstance(role, ExecutionRole) else role


def default_policy_of(role: iam.IRole) -> IConstruct | None:
    """``role``'s default policy (what to wait for before SageMaker checks the role), or ``None``:
    an :class:`ExecutionRole`'s ``CfnPolicy``, or an ``iam.Role``'s ``DefaultPolicy`` construct."""
    if isinstance(role, _RoleView):
        return role.owner.policy
    return role.node.try_find_child("DefaultPolicy")


def wait_for(resource: CfnResource, policy: IConstruct) -> None:
    """Make ``resource`` wait for ``policy`` (``DependsOn``): an L1 policy directly, in one round
    trip to Node; a construct (an ``iam.Policy``) through the construct tree, as
    ``node.add_dependency`` does, in two. The template is the same either way."""
    if isinstance(policy, CfnResource):
        resource.add_resource_dependency(policy)
    else:
        resource.node.add_dependency(policy)


def add_statements(
    role: "ExecutionRole | iam.IRole", statements: Sequence[StatementJson | iam.PolicyStatement]
) -> Construct | None:
    """Add ``statements`` (JSON or ``PolicyStatement``) to ``role``'s default policy, in order; return that policy.

    For an :class:`ExecutionRole`, one call. For an ``iam.Role``, the same as
    ``role.add_to_principal_policy`` for each, but the second and later statements go to the
    policy in one call (``Role.add_to_principal_policy`` creates the default policy and appends to
    its document, which is all ``Policy.add_statements`` does).
    """
    if not statements:
        return None
    if isinstance(role, ExecutionRole):
        role.add_statements(statements)
        return role.policy
    statements = _policy_statements(statements)
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


def _policy_statements(statements: Sequence[StatementJson | iam.PolicyStatement]) -> list[iam.PolicyStatement]:
    return [s if isinstance(s, iam.PolicyStatement) else iam.PolicyStatement.from_json(s) for s in statements]


#: The trust policy of every execution role, as ``iam.Role(assumed_by=ServicePrincipal(...))`` renders it.
_SAGEMAKER_TRUST = {
    "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}}],
    "Version": "2012-10-17",
}


class ExecutionRole:
    """A SageMaker execution role written as L1s: what ``iam.Role(assumed_by=sagemaker)`` with a
    default policy synthesizes, at the same construct paths (``<id>/Resource``, the
    ``AWS::IAM::Role``; ``<id>/DefaultPolicy/Resource``, its ``AWS::IAM::Policy``), so the same
    logical ids and policy name.

    Why not ``iam.Role``: the L2 builds a ``Policy`` construct, records construct metadata and
    merges documents, per model; and why no ``IRole`` subclass up front: a Python subclass of a
    jsii class costs Node a registration of its overrides. A model only needs the role's ARN and
    its statements, so :attr:`role` (the ``IRole`` users and grants see) is made on first use.
    The first statements arrive as JSON and become the document in one round trip
    (``PolicyDocument.from_json``, not one ``PolicyStatement`` each); the document is still CDK's,
    so it renders (merges, minimizes) as an ``iam.Role``'s does.

    Args:
        scope: parent construct.
        id: construct id.
        statements: the default policy's first statements (JSON), in order.

    Attributes:
        construct: the construct at ``<id>`` (the L2's path), parent of both resources.
        resource: the ``CfnRole``.
        document: the default policy's ``PolicyDocument``.
        role_arn: the role's ARN (``Fn::GetAtt Arn``).
        role_name: the role's name (a ``Ref``).
        default_policy: the construct at ``<id>/DefaultPolicy`` (the L2's path), which holds the
            ``AWS::IAM::Policy``.
        policy: that ``CfnPolicy`` (what a resource waits for, to wait for the permissions).
    """

    def __init__(self, scope: Construct, id: str, *, statements: Sequence[StatementJson] = ()) -> None:
        self.construct = Construct(scope, id)
        self.resource = iam.CfnRole(self.construct, "Resource", assume_role_policy_document=_SAGEMAKER_TRUST)
        self.role_arn: str = self.resource.attr_arn
        self.role_name: str = self.resource.ref
        self.document = iam.PolicyDocument.from_json({"Statement": list(statements)})
        self.default_policy = Construct(self.construct, "DefaultPolicy")
        path = [*path_of(scope).split("/"), id, "DefaultPolicy", "Resource"]
        self.policy = iam.CfnPolicy(
            self.default_policy,
            "Resource",
            policy_document=self.document,
            roles=[self.role_name],
            # As iam.Policy names itself: the last 128 characters of its resource's logical id.
            policy_name=logical_id(stack_path_of(scope), path)[-128:],
        )
        self._role: _RoleView | None = None

    def add_statements(self, statements: Sequence[StatementJson | iam.PolicyStatement]) -> None:
        """Append ``statements`` (JSON or ``PolicyStatement``) to the default policy, in order."""
        self.document.add_statements(*_policy_statements(statements))

    @property
    def role(self) -> iam.IRole:
        """The role as an ``IRole`` (a construct at ``<id>/Role``, made on first use)."""
        if self._role is None:
            self._role = _RoleView(self)
        return self._role


@jsii.implements(iam.IRole)
class _RoleView(Resource):
    """An :class:`ExecutionRole` as an ``IRole``, like any other: grants
    (``bucket.grant_read(role)``, ``key.grant_decrypt(role)``) and ``add_to_principal_policy`` go
    to its default policy, ``attach_inline_policy`` and ``add_managed_policy`` to the role, and
    ``apply_removal_policy`` to the ``AWS::IAM::Role``. It adds nothing to the template.

    Attributes:
        owner: the :class:`ExecutionRole` it stands for.
    """

    def __init__(self, owner: ExecutionRole) -> None:
        super().__init__(owner.construct, "Role")
        self.owner = owner
        self._managed_policies: list[iam.IManagedPolicy] = []
        self._inline_policies: list[iam.Policy] = []

    @property
    def role_arn(self) -> str:
        """The role's ARN (``Fn::GetAtt Arn``)."""
        return self.owner.role_arn

    @property
    def role_name(self) -> str:
        """The role's name (a ``Ref``)."""
        return self.owner.role_name

    @property
    def role_ref(self) -> Any:
        """A reference to the role (its ``CfnRole``'s)."""
        return self.owner.resource.role_ref

    @property
    def assume_role_action(self) -> str:
        """``sts:AssumeRole``."""
        return "sts:AssumeRole"

    @property
    def grant_principal(self) -> iam.IPrincipal:
        """The role itself."""
        return self

    @property
    def principal_account(self) -> str | None:
        """The account of the role's stack."""
        return self.env.account

    @property
    def policy_fragment(self) -> iam.PrincipalPolicyFragment:
        """The role as a principal in a resource policy (``{"AWS": <role ARN>}``)."""
        return iam.ArnPrincipal(self.owner.role_arn).policy_fragment

    def add_to_principal_policy(self, statement: iam.PolicyStatement) -> iam.AddToPrincipalPolicyResult:
        """Add ``statement`` to the default policy."""
        self.owner.add_statements([statement])
        return iam.AddToPrincipalPolicyResult(statement_added=True, policy_dependable=self.owner.default_policy)

    def add_to_policy(self, statement: iam.PolicyStatement) -> bool:
        """Add ``statement`` to the default policy (as ``iam.Role.add_to_policy``)."""
        self.owner.add_statements([statement])
        return True

    def add_managed_policy(self, policy: iam.IManagedPolicy) -> None:
        """Attach a managed policy to the role (``ManagedPolicyArns``)."""
        if any(p is policy for p in self._managed_policies):
            return
        self._managed_policies.append(policy)
        self.owner.resource.managed_policy_arns = [p.managed_policy_arn for p in self._managed_policies]

    def attach_inline_policy(self, policy: iam.Policy) -> None:
        """Attach ``policy`` to the role (as ``iam.Role.attach_inline_policy``)."""
        if any(p is policy for p in self._inline_policies):
            return
        self._inline_policies.append(policy)
        policy.attach_to_role(self)

    def grant(self, grantee: iam.IPrincipal, *actions: str) -> iam.Grant:
        """Grant ``actions`` on this role to ``grantee``."""
        return iam.Grant.add_to_principal(grantee=grantee, actions=list(actions), resource_arns=[self.role_arn], scope=self)

    def grant_pass_role(self, grantee: iam.IPrincipal) -> iam.Grant:
        """Let ``grantee`` pass this role (``iam:PassRole``)."""
        return self.grant(grantee, "iam:PassRole")

    def grant_assume_role(self, identity: iam.IPrincipal) -> iam.Grant:
        """Let ``identity`` assume this role (``sts:AssumeRole``)."""
        return self.grant(identity, "sts:AssumeRole")

    def apply_removal_policy(self, policy: RemovalPolicy) -> None:
        """Apply ``policy`` to the ``AWS::IAM::Role``."""
        self.owner.resource.apply_removal_policy(policy)


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
                ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
                self.log_groups,
            ),
            # PutMetricData has no resource-level permissions: AWS requires "*"; narrowed by namespace.
            statement(
                ["cloudwatch:PutMetricData"],
                ["*"],
                {"StringLike": {"cloudwatch:namespace": ["/aws/sagemaker/*", "AWS/SageMaker*"]}},
            ),
        )
        self.principal = iam.ServicePrincipal("sagemaker.amazonaws.com")
        # CDK's role customization replaces what iam.Role synthesizes; only iam.Role honours it.
        # A stack that allocates its own logical ids names policies its own way: iam.Role follows it.
        self.l2_roles = (
            stack.node.try_get_context("@aws-cdk/iam:customizeRoles") is not None
            or type(stack)._allocate_logical_id is not Stack._allocate_logical_id
        )



_BASICS: "weakref.WeakKeyDictionary[Stack, _StackBasics]" = weakref.WeakKeyDictionary()


def statement(actions: Sequence[str], resources: Sequence[str], conditions: Mapping[str, Any] | None = None) -> StatementJson:
    """An Allow statement of ``actions`` on ``resources`` as JSON (for :class:`ExecutionRole`'s
    first statements: no round trip to Node until its document is made from them)."""
    made: StatementJson = {"Action": list(actions), "Effect": "Allow", "Resource": list(resources)}
    if conditions:
        made["Condition"] = dict(conditions)
    return made


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
    # An ExecutionRole's IRole sits beside its policy: acknowledge on the role's construct, above both.
    target = grantee.owner.construct if isinstance(grantee, _RoleView) else grantee
    Validations.of(target).acknowledge(*_wildcard_acknowledgments(stack_of(target), [(resource_arn, reason)]))


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
