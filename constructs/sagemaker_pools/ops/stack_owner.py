"""Which CloudFormation stack, if any, owns an endpoint: asked of CloudFormation, not read from tags.

The CloudFormation resource schemas of ``AWS::SageMaker::Endpoint`` and
``AWS::SageMaker::EndpointConfig`` declare ``"cloudFormationSystemTags": false``: CloudFormation does
not put its ``aws:cloudformation:stack-name`` tag on them, so a tag cannot tell that a stack made
the endpoint (this library's own endpoints carry none). ``DescribeStackResources`` with
``PhysicalResourceId`` can: it answers with the resources of the stack the resource belongs to,
or a ``ValidationError`` ("Stack for <id> does not exist") when no stack has it.

The physical id of an ``AWS::SageMaker::Endpoint`` is its ARN: the CloudFormation template
reference says ``Ref`` returns "the Amazon Resource Name (ARN) of the endpoint", and the
resource schema's ``primaryIdentifier`` is ``/properties/EndpointArn``. Both sources agree, so
only the ARN (DescribeEndpoint's ``EndpointArn``) is asked about.

Only the endpoint is asked about, not its config: ``migrate --apply`` creates a new config and
leaves the old one as it is, so a stack that owns only the old config is not changed behind its
back; a stack that owns the endpoint is (UpdateEndpoint is drift the next stack update undoes,
and re-registering autoscaling re-creates policies and alarms the stack owns).

No tag check is kept as a second guard: users cannot set ``aws:`` tags, CloudFormation does not set
them on these resources, and a stale one (an endpoint retained from a deleted stack) would refuse an
endpoint no stack owns. The tags still appear in the plan's "not copied: tags reserved for AWS" note.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from botocore.exceptions import ClientError

from .errors import DENIED_CODES, error_code

__all__ = ["StackOwnership", "stack_ownership", "PERMISSION"]

#: The IAM action the question needs.
PERMISSION = "cloudformation:DescribeStackResources"
# A resource whose stack let it go: retained when the stack was deleted, or deleted with the stack
# (an endpoint made again by hand under the same name has the same ARN; CloudFormation answers for
# deleted stacks for 90 days).
_RELEASED = frozenset({"DELETE_COMPLETE", "DELETE_SKIPPED"})

State = Literal["managed", "not_managed", "unknown"]


@dataclasses.dataclass(frozen=True)
class StackOwnership:
    """What CloudFormation says about one resource.

    Attributes:
        physical_id: the id asked about (the endpoint's ARN).
        state: ``managed`` (a stack owns it), ``not_managed``, or ``unknown`` (the question was refused).
        stack_name, stack_id: the owning stack (for ``not_managed``: the stack that let it go, if any).
        logical_id: the resource's logical id in that stack; None when DescribeStackResources did not
            list it (it returns the first 100 resources of a stack only).
        resource_type: e.g. ``AWS::SageMaker::Endpoint`` (a custom resource can own an endpoint too).
        resource_status: e.g. ``UPDATE_COMPLETE``, ``DELETE_SKIPPED``.
        reason: for ``unknown``, why CloudFormation could not be asked.
    """

    physical_id: str
    state: State
    stack_name: str | None = None
    stack_id: str | None = None
    logical_id: str | None = None
    resource_type: str | None = None
    resource_status: str | None = None
    reason: str | None = None

    def summary(self) -> str:
        """One sentence for the plan: who owns the endpoint and what that means for ``--apply``."""
        if self.state == "managed":
            where = f"logical id {self.logical_id}, {self.resource_type}" if self.logical_id else "logical id not listed"
            return (
                f"CloudFormation stack {self.stack_name} manages this endpoint ({where}): change it there (the PooledEndpoint "
                "code), because an update made outside the stack is drift that the next stack update undoes; --apply refuses"
            )
        if self.state == "unknown":
            return f"cannot tell whether a CloudFormation stack manages this endpoint: {self.reason}; --apply refuses"
        if self.stack_name:
            return f"no CloudFormation stack manages this endpoint (stack {self.stack_name} let it go: {self.resource_status})"
        return "no CloudFormation stack manages this endpoint"

    def to_json(self) -> dict[str, Any]:
        """The finding as JSON-ready data (every field, plus ``summary``)."""
        return {**dataclasses.asdict(self), "summary": self.summary()}


def stack_ownership(cfn: Any, physical_id: str) -> StackOwnership:
    """Ask CloudFormation (``DescribeStackResources(PhysicalResourceId=physical_id)``) which stack owns the resource.

    An access-denied answer is ``unknown`` (the caller decides: ``migrate`` shows it, ``--apply``
    refuses); any other error but "Stack for ... does not exist" is raised.
    """
    try:
        resources: list[Mapping[str, Any]] = cfn.describe_stack_resources(PhysicalResourceId=physical_id)["StackResources"]
    except ClientError as exc:
        code, message = error_code(exc)
        if code == "ValidationError" and "does not exist" in message:
            return StackOwnership(physical_id, "not_managed")
        if code in DENIED_CODES:
            return StackOwnership(physical_id, "unknown", reason=f"access denied ({code}): the caller needs {PERMISSION}")
        raise
    if not resources:
        return StackOwnership(physical_id, "not_managed")
    matching = [r for r in resources if r.get("PhysicalResourceId") == physical_id]
    held = [r for r in matching if r.get("ResourceStatus") not in _RELEASED]
    if matching and not held:
        return _finding(physical_id, "not_managed", matching[0])
    if held:
        return _finding(physical_id, "managed", held[0])
    # Listed under its stack but not among the first 100 resources: the stack is known, its logical id is not.
    first = resources[0]
    return StackOwnership(physical_id, "managed", stack_name=first["StackName"], stack_id=first.get("StackId"))


def _finding(physical_id: str, state: State, resource: Mapping[str, Any]) -> StackOwnership:
    return StackOwnership(
        physical_id,
        state,
        stack_name=resource.get("StackName"),
        stack_id=resource.get("StackId"),
        logical_id=resource.get("LogicalResourceId"),
        resource_type=resource.get("ResourceType"),
        resource_status=resource.get("ResourceStatus"),
    )
