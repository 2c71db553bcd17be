"""What the library remembers of the construct tree, so that it asks Node once: each construct's
stack and path, each stack's partition, and the ids CDK derives from paths, computed in Python.

Every answer here is one that never changes once a construct is made (a construct never moves),
and every question to Node is a round trip that a fleet of endpoints would otherwise ask hundreds
of times.
"""

from __future__ import annotations

import hashlib
import re
import weakref
from collections.abc import Sequence

from aws_cdk import Stack
from constructs import Construct, IConstruct

__all__ = [
    "stack_of",
    "stack_partition",
    "stack_environment",
    "root_of",
    "remember_stack",
    "path_of",
    "stack_path_of",
    "unique_id",
    "logical_id",
]

#: ``makeUniqueId``'s limits: a top-level id kept as it is, and the human-readable part.
_MAX_ID_LEN = 255
_MAX_HUMAN_LEN = 240


def unique_id(components: Sequence[str]) -> str:
    """aws-cdk-lib's ``makeUniqueId`` of a construct path's ``components``: the human-readable ids
    (less ``Default``, repeats and ``Resource``) then an MD5 of the path (less ``Default``); a
    single component is kept as it is (alphanumerics only). ``Names.unique_id(c)`` is this over
    ``c``'s path, and a logical id this over the path below its stack (:func:`logical_id`)."""
    kept = [c for c in components if c != "Default"]
    if not kept:
        raise ValueError("a unique id of no components")
    if len(kept) == 1 and len(_alphanumeric(kept[0])) <= _MAX_ID_LEN:
        return _alphanumeric(kept[0])
    digest = hashlib.md5("/".join(kept).encode()).hexdigest()[:8].upper()  # noqa: S324 - an id, not security
    human: list[str] = []
    for component in kept:
        if not human or not human[-1].endswith(component):
            human.append(component)
    return "".join(_alphanumeric(c) for c in human if c != "Resource")[:_MAX_HUMAN_LEN] + digest


def logical_id(stack_path: str, path: Sequence[str]) -> str:
    """The logical id ``Stack.allocate_logical_id`` gives the element at ``path`` (its construct
    path's components) in the stack at ``stack_path``: :func:`unique_id` of the components below
    the stack. Here so that a policy is named without a round trip to resolve it."""
    return unique_id(path[len(stack_path.split("/")) :])


def _alphanumeric(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", value)


def stack_path_of(construct: Construct) -> str:
    """The construct path of ``construct``'s stack, asked of Node once per stack."""
    return path_of(stack_of(construct))


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


def stack_environment(stack: Stack) -> str:
    """``stack.environment`` (``aws://ACCOUNT/REGION``, ``unknown-account`` / ``unknown-region`` where
    a part is not a literal), asked of Node once per stack."""
    environment = _ENVIRONMENTS.get(stack)
    if environment is None:
        environment = _ENVIRONMENTS[stack] = stack.environment
    return environment


def root_of(stack: Stack) -> IConstruct:
    """``stack.node.root`` (the app), asked of Node once per stack."""
    root = _ROOTS.get(stack)
    if root is None:
        root = _ROOTS[stack] = stack.node.root
    return root


def remember_stack(construct: Construct, scope: Construct, id: str | None = None) -> None:
    """Record that ``construct`` (just made under ``scope``) is in ``scope``'s stack, and with
    ``id`` its construct path where ``scope``'s is known (a stack's, or one recorded so)."""
    _STACKS[construct] = stack_of(scope)
    if id is not None:
        scope_path = path_of(scope) if isinstance(scope, Stack) else _PATHS.get(scope)
        if scope_path is not None:
            _PATHS[construct] = f"{scope_path}/{id}"


def path_of(construct: Construct) -> str:
    """``construct.node.path``, asked of Node only where it was not recorded (see
    :func:`remember_stack`; a stack's is asked once)."""
    path = _PATHS.get(construct)
    if path is None:
        path = _PATHS[construct] = construct.node.path
    return path


_PARTITIONS: "weakref.WeakKeyDictionary[Stack, str]" = weakref.WeakKeyDictionary()
_ENVIRONMENTS: "weakref.WeakKeyDictionary[Stack, str]" = weakref.WeakKeyDictionary()
_ROOTS: "weakref.WeakKeyDictionary[Stack, IConstruct]" = weakref.WeakKeyDictionary()
_PATHS: "weakref.WeakKeyDictionary[Construct, str]" = weakref.WeakKeyDictionary()
_STACKS: "weakref.WeakKeyDictionary[Construct, Stack]" = weakref.WeakKeyDictionary()
