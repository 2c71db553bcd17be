"""The capacity file on the command line: which instance type an entry is for, and the merged write.

``bench --sweep --capacity-file`` writes a type's ``max_concurrency``, ``gate --capacity-file``
its gate result; each reads the file, replaces its own part of one type's entry and writes the
whole file back atomically (:meth:`~sagemaker_pools.PoolCapacity.write`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..capacity import PoolCapacity
from .context import Context
from .errors import EXIT_FAILURE, EXIT_USAGE, OpsError

__all__ = ["instance_type_in_use", "update_capacity_file"]


def update_capacity_file(path_text: str, change: Callable[[PoolCapacity], PoolCapacity]) -> Path:
    """Read the capacity file at ``path_text`` (none yet: empty), apply ``change``, write it back; the path.

    Raises:
        OpsError: (exit 1) the file is not a capacity file, or cannot be written.
    """
    path = Path(path_text)
    try:
        current = PoolCapacity.from_file(path) if path.exists() else PoolCapacity(instance_types={})
        change(current).write(path)
    except ValueError as exc:  # PoolConfigError
        raise OpsError(f"--capacity-file {path}: {exc}", EXIT_FAILURE) from None
    except OSError as exc:
        raise OpsError(f"cannot write --capacity-file {path}: {exc.strerror or exc}", EXIT_FAILURE) from None
    return path


def instance_type_in_use(ctx: Context, endpoint: str, *, variant: str | None, given: str | None) -> str:
    """``given`` (``--instance-type``, checked), else the one instance type ``endpoint`` runs.

    ``variant``: only that variant (shadow or not); None: every production variant. Pools with
    instances count; when none has any, every configured pool does. More than one type: exit 2,
    asking for ``--instance-type``.
    """
    from ..instance_types import check_instance_type

    if given:
        try:
            check_instance_type(given, "--instance-type")
        except ValueError as exc:
            raise OpsError(str(exc), EXIT_USAGE) from None
        return given
    from .fleet import fetch_endpoint_state

    state = fetch_endpoint_state(ctx.clients.sagemaker(), endpoint)
    variants = [v for v in state.variants if (v.name == variant if variant is not None else not v.shadow)]
    running = {p.instance_type for v in variants for p in v.pools if p.instances}
    types = running or {p.instance_type for v in variants for p in v.pools}
    if len(types) != 1:
        found = ", ".join(sorted(types)) or "none"
        raise OpsError(f"endpoint {endpoint} runs {len(types)} instance types ({found}): pass --instance-type for the capacity file", EXIT_USAGE)
    return types.pop()
