"""Instance pools: the priority-ordered list of instance types of one production variant.

SageMaker provisions instances from the pool with the lowest priority number that has
capacity, at creation, at scale-out and on replacement, and scales in the highest number
first. Pure Python: no aws_cdk import (the ops command uses these objects too).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ._tokens import is_unresolved
from .errors import PoolConfigError
from .instance_types import check_instance_type

__all__ = ["InstancePool", "IModel", "resolve_pools", "MAX_POOLS", "MIN_PRIORITY", "MAX_PRIORITY"]

#: SageMaker's limits (ProductionVariant.InstancePools: 1-5 items; InstancePool.Priority: 1-5).
MAX_POOLS = 5
MIN_PRIORITY = 1
MAX_PRIORITY = 5


@runtime_checkable
class IModel(Protocol):
    """Anything that names a SageMaker model: :class:`~sagemaker_pools.PoolModel` and its imports."""

    @property
    def model_name(self) -> str:
        """The SageMaker model name (may be a CDK token)."""
        ...


@dataclasses.dataclass(frozen=True, kw_only=True)
class InstancePool:
    """One instance type of a pooled production variant.

    Args:
        instance_type: an ``ml.*`` instance type, e.g. ``"ml.g6e.48xlarge"``.
        model: the model this pool runs instead of the variant's default model (rendered as
            ``ModelNameOverride``), e.g. a build quantized for this hardware.
            Default: the variant's model.
        max_concurrency: concurrent requests one instance of this type sustains at the
            latency you accept (from a benchmark). Weighted autoscaling divides each type's
            ``ConcurrentRequestsPerModel`` by it. Default: unset; required only by weighted
            scaling.
        priority: 1 (tried first) to 5. Default: the pool's position in the list (first = 1).
        allow_unknown_instance_type: accept an ``ml.*`` type that is not (yet) in this
            library's list from the SageMaker API model. Default: ``False``.
    """

    instance_type: str
    model: IModel | None = None
    max_concurrency: float | None = None
    priority: int | None = None
    allow_unknown_instance_type: bool = False

    def validate(self, field: str = "InstancePool") -> None:
        """Check this pool alone; raises :class:`PoolConfigError`. List rules are in :func:`resolve_pools`."""
        check_instance_type(
            self.instance_type, f"{field}.instance_type", allow_unknown=self.allow_unknown_instance_type
        )
        if self.priority is not None and not is_unresolved(self.priority):
            if (
                isinstance(self.priority, bool)
                or not isinstance(self.priority, int)
                or not MIN_PRIORITY <= self.priority <= MAX_PRIORITY
            ):
                raise PoolConfigError(
                    f"{field}.priority", self.priority, "an integer from 1 to 5 (1 = highest priority)"
                )
        mc = self.max_concurrency
        if mc is not None and not is_unresolved(mc):
            if isinstance(mc, bool) or not isinstance(mc, numbers.Real) or not mc > 0 or mc != mc:
                raise PoolConfigError(
                    f"{field}.max_concurrency", mc, "a number > 0 (concurrent requests one instance sustains)"
                )
        if self.model is not None and not isinstance(self.model, IModel):
            raise PoolConfigError(f"{field}.model", self.model, "a PoolModel (or PoolModel.from_model_name(...))")


def resolve_pools(pools: Sequence[InstancePool], field: str = "pools") -> tuple[InstancePool, ...]:
    """Validate a pool list and return it with every priority set, highest priority first.

    Rules: 1-5 pools; each pool valid; priorities unique (default: list position, first = 1);
    instance types unique. SageMaker itself accepts duplicate priorities and types, but then
    the fallback order is undefined, so this library refuses them.
    """
    if isinstance(pools, (str, bytes)) or not isinstance(pools, Sequence):
        raise PoolConfigError(field, pools, "a list of 1 to 5 InstancePool objects")
    if not 1 <= len(pools) <= MAX_POOLS:
        raise PoolConfigError(field, f"{len(pools)} pools", "1 to 5 instance pools (a SageMaker limit)")
    resolved: list[InstancePool] = []
    for index, pool in enumerate(pools):
        item = f"{field}[{index}]"
        if not isinstance(pool, InstancePool):
            raise PoolConfigError(item, pool, "an InstancePool")
        pool.validate(item)
        resolved.append(pool if pool.priority is not None else dataclasses.replace(pool, priority=index + 1))

    _check_unique([p.priority for p in resolved], f"{field}[*].priority", "unique priorities (each 1-5)")
    _check_unique([p.instance_type for p in resolved], f"{field}[*].instance_type", "each instance type once")
    # Unresolved (token) priorities cannot be ordered statically: keep them in list order.
    if all(not is_unresolved(p.priority) for p in resolved):
        resolved.sort(key=lambda p: int(p.priority or 0))
    return tuple(resolved)


def _check_unique(values: Sequence[object], field: str, allowed: str) -> None:
    seen: set[object] = set()
    for value in values:
        if is_unresolved(value):
            continue
        if value in seen:
            raise PoolConfigError(field, value, f"{allowed}; {value!r} appears more than once")
        seen.add(value)
