"""Refuse, or warn about, a fallback pool whose build never passed ``sagemaker-pools gate``.

A pool's first real request is a production request during an outage of the primary type. So
a stack can ask, at synth time, that every fallback pool's build has a passing gate in the
capacity file (:meth:`~sagemaker_pools.PoolCapacity.require_gate` for one type)::

    capacity = PoolCapacity.from_file("capacity.json")
    pools = capacity.pools(["ml.g6e.48xlarge", "ml.g6.48xlarge"])
    check_gates(stack, capacity=capacity, pools=pools)                         # PoolConfigError when ungated
    check_gates(endpoint, capacity=capacity, pools=pools, on_ungated="warning")  # a CDK warning instead

The pool with the highest priority is the primary: the reference the gate compares with, so it
needs no gate of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Annotations
from constructs import IConstruct

from ._tokens import is_unresolved
from .capacity import PoolCapacity
from .errors import PoolConfigError
from .pools import InstancePool, resolve_pools

__all__ = ["check_gates", "ON_UNGATED", "UNGATED_WARNING_ID"]

#: What :func:`check_gates` does about an ungated pool.
ON_UNGATED = ("error", "warning")
#: The id of the CDK warning (acknowledge it with ``Annotations.of(scope).acknowledge_warning``).
UNGATED_WARNING_ID = "sagemaker-pools:ungated-fallback-pool"


def check_gates(
    scope: IConstruct,
    *,
    capacity: PoolCapacity,
    pools: Sequence[InstancePool],
    builds: Mapping[str, str] | None = None,
    on_ungated: str = "error",
) -> dict[str, str]:
    """Check that every fallback pool's build has a passing gate in ``capacity``.

    Args:
        scope: where a warning is attached (the endpoint, or the stack).
        capacity: the capacity file the gate wrote into.
        pools: the variant's pools; the highest-priority one (the primary) is not checked.
        builds: instance type -> the build this stack deploys there (as given to
            ``gate --build``); a gate of another build does not count. Default: any build.
        on_ungated: ``"error"`` raises :class:`PoolConfigError` naming every ungated pool;
            ``"warning"`` adds a CDK warning (:data:`UNGATED_WARNING_ID`) for each. Default: ``"error"``.

    Returns:
        instance type -> why it is ungated (empty when every fallback pool passed).
    """
    if on_ungated not in ON_UNGATED:
        raise PoolConfigError(
            "check_gates.on_ungated",
            on_ungated,
            " or ".join(repr(v) for v in ON_UNGATED) + ", a literal: the check runs at synth time, so a deploy-time parameter cannot choose",
        )
    ordered = resolve_pools(pools, "check_gates.pools")
    fallbacks = [p.instance_type for p in ordered[1:] if not is_unresolved(p.instance_type)]
    problems = capacity.ungated(fallbacks, builds=builds)
    if problems and on_ungated == "error":
        raise PoolConfigError("check_gates.pools", sorted(problems), "fallback pools whose build passed its gate: " + "; ".join(problems.values()))
    for problem in problems.values():
        Annotations.of(scope).add_warning_v2(UNGATED_WARNING_ID, f"fallback pool without a passing gate: {problem}")
    return problems
