"""Fixed names already taken in an app: a second endpoint (inference component) with the same name cannot deploy.

An endpoint's name is unique per account and region (``CreateEndpoint`` refuses a name in use),
and so is an inference component's (``CreateInferenceComponent``); CloudFormation finds out only
at deploy time: in one stack the whole deployment fails and
rolls back; across stacks the second stack's deployment does. Refusing it at construction
costs a dictionary lookup per named endpoint (and two questions to Node per stack, remembered).

Two stacks are compared when their environments are the same string: both concrete with the same
account and region, or both environment-agnostic (``aws://unknown-account/unknown-region``: the
CLI deploys both to the account and region of its credentials). A concrete stack and an
environment-agnostic one may or may not meet, so they are not compared. A name that is a token
(a ``CfnParameter``) is not known before deploy and is skipped.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from constructs import Construct, IConstruct

from ._tokens import is_unresolved
from ._tree import path_of, root_of, stack_environment, stack_of, stack_path_of
from .errors import PoolConfigError

__all__ = ["NameClaim", "check_name_is_free"]


@dataclass(frozen=True)
class NameClaim:
    """A fixed name of ``kind`` found free in ``environment`` of the app at ``root``; :meth:`take` records its owner."""

    root: IConstruct
    environment: str
    name: str
    kind: str = "endpoint"

    def take(self, owner: Construct) -> None:
        """Record ``owner`` (the construct just made) as the holder of the name."""
        _TAKEN.setdefault(self.root, {})[(self.kind, self.environment, self.name)] = owner


def check_name_is_free(scope: Construct, name: str | None, field: str, kind: str = "endpoint") -> NameClaim | None:
    """Raise :class:`PoolConfigError` if another resource of ``kind`` (``"endpoint"``,
    ``"inference component"``) of ``scope``'s app in the same environment has the fixed ``name``;
    else the claim to :meth:`~NameClaim.take` once the resource exists (None for a token name)."""
    if name is None or is_unresolved(name):
        return None
    stack = stack_of(scope)
    root = root_of(stack)
    environment = stack_environment(stack)
    holder = _TAKEN.get(root, {}).get((kind, environment, name))
    if holder is not None:
        holder_stack = stack_path_of(holder)
        where = "in this stack"
        if holder_stack != stack_path_of(scope):
            where = f"in {environment} (stack {holder_stack} deploys to the same account and region"
            # Environment-agnostic parts resolve at deploy time, to the CLI's account and region.
            where += "; what neither stack fixes comes from the same CLI credentials)" if "unknown-" in environment else ")"
        raise PoolConfigError(
            field,
            name,
            f"a name no other {kind} {where} has: {path_of(holder)} has it, and CloudFormation would fail "
            f"to create the second {kind} ({kind} names are unique per account and region)",
        )
    return NameClaim(root, environment, name, kind)


#: app (the construct tree's root) -> (kind, environment, fixed name) -> the construct that has it
_TAKEN: "weakref.WeakKeyDictionary[IConstruct, dict[tuple[str, str, str], Construct]]" = weakref.WeakKeyDictionary()
