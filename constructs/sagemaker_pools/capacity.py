"""Measured capacities: the ``max_concurrency`` of each instance type, from a benchmark sweep.

``sagemaker-pools bench ENDPOINT --sweep 1,2,4,8,16,32 --slo p99=2s --capacity-file capacity.json``
finds the highest concurrency at which one instance of the endpoint's type still meets every
SLO, and writes (or merges into) a capacity file: instance type -> ``max_concurrency``, with the
SLOs, the endpoint and the date of the measurement. :class:`PoolCapacity` reads that file and
feeds :class:`~sagemaker_pools.InstancePool`, so that the capacities weighted scaling divides by
come from a measurement, never from a guess::

    capacity = PoolCapacity.from_file("capacity.json")
    pools = [capacity.pool("ml.g6e.48xlarge"), capacity.pool("ml.g6.48xlarge")]
    # same as InstancePool(instance_type="ml.g6e.48xlarge", max_concurrency=capacity.max_concurrency("ml.g6e.48xlarge"))

The file (``schema`` ``sagemaker-pools-capacity/1``)::

    {"schema": "sagemaker-pools-capacity/1",
     "instance_types": {"ml.g6e.48xlarge": {"max_concurrency": 32, "slos": [{"name": "p99", ...}],
                                            "measured_at": "2026-12-01T06:00:00+00:00", "endpoint": "llm"}}}

Pure Python: no aws_cdk import (the ops command writes these files).
"""

from __future__ import annotations

import dataclasses
import json
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .errors import PoolConfigError
from .instance_types import check_instance_type
from .pools import IModel, InstancePool

__all__ = ["PoolCapacity", "CapacityMeasurement", "CAPACITY_SCHEMA"]

#: The ``schema`` value of a capacity file.
CAPACITY_SCHEMA = "sagemaker-pools-capacity/1"


@dataclasses.dataclass(frozen=True, kw_only=True)
class CapacityMeasurement:
    """The measured capacity of one instance type.

    Args:
        max_concurrency: the highest concurrency (requests in flight on one instance) at which
            every SLO held; an integer >= 1.
        slos: the SLOs it was measured against, as ``bench`` writes them
            (``{"name": "p99", "metric": "latency", "percentile": 99, "bound_ms": 2000.0}``).
            Default: none recorded.
        measured_at: when (ISO 8601). Default: unknown.
        endpoint: the endpoint measured. Default: unknown.
    """

    max_concurrency: int
    slos: tuple[Mapping[str, Any], ...] = ()
    measured_at: str | None = None
    endpoint: str | None = None

    def to_json(self) -> dict[str, Any]:
        """As stored in a capacity file."""
        return {
            "max_concurrency": self.max_concurrency,
            "slos": [dict(s) for s in self.slos],
            "measured_at": self.measured_at,
            "endpoint": self.endpoint,
        }


@dataclasses.dataclass(frozen=True, kw_only=True)
class PoolCapacity:
    """Measured ``max_concurrency`` per instance type (a capacity file), validated on construction.

    Args:
        instance_types: instance type -> :class:`CapacityMeasurement`.
        source: where it was read from, for messages. Default: ``"PoolCapacity"``.

    Raises:
        PoolConfigError: an unknown instance type, or a ``max_concurrency`` that is not an
            integer >= 1.
    """

    instance_types: Mapping[str, CapacityMeasurement]
    source: str = "PoolCapacity"

    def __post_init__(self) -> None:
        if not isinstance(self.instance_types, Mapping):
            raise PoolConfigError(f"{self.source}.instance_types", self.instance_types, "a mapping of instance type to measurement")
        for instance_type, measurement in self.instance_types.items():
            field = f"{self.source}.instance_types[{instance_type!r}]"
            check_instance_type(instance_type, field)
            if not isinstance(measurement, CapacityMeasurement):
                raise PoolConfigError(field, measurement, "a CapacityMeasurement")
            mc = measurement.max_concurrency
            if isinstance(mc, bool) or not isinstance(mc, numbers.Integral) or mc < 1:
                raise PoolConfigError(f"{field}.max_concurrency", mc, "an integer >= 1 (the highest concurrency whose SLOs held)")
        object.__setattr__(self, "instance_types", MappingProxyType(dict(sorted(self.instance_types.items()))))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "PoolCapacity") -> PoolCapacity:
        """From the parsed JSON of a capacity file."""
        if not isinstance(data, dict) or data.get("schema") != CAPACITY_SCHEMA:
            raise PoolConfigError(f"{source}.schema", data.get("schema") if isinstance(data, dict) else data, f"{CAPACITY_SCHEMA!r}")
        types = data.get("instance_types")
        if not isinstance(types, dict):
            raise PoolConfigError(f"{source}.instance_types", types, "an object: instance type -> {max_concurrency, ...}")
        measurements = {}
        for instance_type, entry in types.items():
            field = f"{source}.instance_types[{instance_type!r}]"
            if not isinstance(entry, dict) or "max_concurrency" not in entry:
                raise PoolConfigError(field, entry, "an object with max_concurrency")
            slos = entry.get("slos") or []
            if not isinstance(slos, list) or not all(isinstance(s, dict) for s in slos):
                raise PoolConfigError(f"{field}.slos", slos, "a list of SLO objects")
            measurements[instance_type] = CapacityMeasurement(
                max_concurrency=entry["max_concurrency"],
                slos=tuple(slos),
                measured_at=entry.get("measured_at"),
                endpoint=entry.get("endpoint"),
            )
        return cls(instance_types=measurements, source=source)

    @classmethod
    def from_file(cls, path: str | Path) -> PoolCapacity:
        """Read a capacity file (as ``sagemaker-pools bench --sweep ... --capacity-file`` writes it)."""
        try:
            data = json.loads(Path(path).read_text())
        except OSError as exc:
            raise PoolConfigError("PoolCapacity.from_file(path)", str(path), f"a readable capacity file ({exc.strerror or exc})") from None
        except ValueError as exc:
            raise PoolConfigError("PoolCapacity.from_file(path)", str(path), f"a JSON capacity file ({exc})") from None
        return cls.from_dict(data, source=f"PoolCapacity({str(path)!r})")

    def max_concurrency(self, instance_type: str) -> int:
        """The measured ``max_concurrency`` of ``instance_type``; :class:`PoolConfigError` when it was not measured."""
        measurement = self.instance_types.get(instance_type)
        if measurement is None:
            measured = ", ".join(self.instance_types) or "none"
            raise PoolConfigError(f"{self.source}.max_concurrency(instance_type)", instance_type, f"a measured instance type: {measured}")
        return measurement.max_concurrency

    def pool(self, instance_type: str, *, model: IModel | None = None, priority: int | None = None) -> InstancePool:
        """An :class:`InstancePool` of ``instance_type`` with its measured ``max_concurrency``."""
        return InstancePool(instance_type=instance_type, model=model, priority=priority, max_concurrency=self.max_concurrency(instance_type))

    def pools(self, instance_types: Sequence[str]) -> list[InstancePool]:
        """One :meth:`pool` per type, in the given (priority) order."""
        return [self.pool(t) for t in instance_types]

    def with_measurement(self, instance_type: str, measurement: CapacityMeasurement) -> PoolCapacity:
        """A copy in which ``instance_type`` has ``measurement`` (added, or replacing the old one)."""
        return PoolCapacity(instance_types={**self.instance_types, instance_type: measurement}, source=self.source)

    def to_json(self) -> dict[str, Any]:
        """As stored in a capacity file."""
        return {"schema": CAPACITY_SCHEMA, "instance_types": {t: m.to_json() for t, m in self.instance_types.items()}}

    def write(self, path: str | Path) -> None:
        """Write the capacity file (atomically: a reader never sees half of it)."""
        target = Path(path)
        temporary = target.with_name(target.name + ".tmp")
        temporary.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        temporary.replace(target)
