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

``sagemaker-pools gate --baseline PRIMARY --candidate FALLBACK ... --capacity-file capacity.json``
records, per instance type, whether that type's build answers like the primary's (a
:class:`GateResult`); :meth:`PoolCapacity.require_gate` and :meth:`PoolCapacity.ungated` read it
back, so that a stack can refuse (or, with :func:`sagemaker_pools.check_gates`, warn about) a
fallback pool whose build has no passing gate::

    capacity.require_gate("ml.g6.48xlarge", build="llm-int4-2026-12-01")  # PoolConfigError unless it passed

The file (``schema`` ``sagemaker-pools-capacity/1``); an entry holds ``max_concurrency``, ``gate``
or both (bench and gate each replace only their own key)::

    {"schema": "sagemaker-pools-capacity/1",
     "instance_types": {"ml.g6e.48xlarge": {"max_concurrency": 32, "slos": [{"name": "p99", ...}],
                                            "measured_at": "2026-12-01T06:00:00+00:00", "endpoint": "llm"},
                        "ml.g6.48xlarge": {"max_concurrency": 16, ...,
                                           "gate": {"passed": true, "baseline": "llm/primary", "candidate": "llm-g6",
                                                    "build": "llm-int4-2026-12-01", "checked_at": "...",
                                                    "source": "live", "pairs": 200, "checks": [...]}}}}

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

__all__ = ["PoolCapacity", "CapacityMeasurement", "GateResult", "CAPACITY_SCHEMA"]

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
class GateResult:
    """The latest ``sagemaker-pools gate`` result of one instance type's build.

    Args:
        passed: True when the candidate met every threshold.
        baseline: what it was compared with (``ENDPOINT`` or ``ENDPOINT/VARIANT``).
        candidate: the endpoint (``/VARIANT``) that runs this instance type's build.
        checks: each threshold as the gate's ``--json`` report writes it
            (``{"name": "agreement", "bound": 0.95, "measured": 0.97, "met": true}``). Default: none.
        pairs: responses compared. Default: 0.
        source: ``"live"`` (requests sent to both) or ``"capture"`` (data capture). Default: ``"live"``.
        build: what was tested (an image tag, a model data URI), as given to ``gate --build``.
            Default: not recorded.
        checked_at: when (ISO 8601). Default: unknown.
    """

    passed: bool
    baseline: str
    candidate: str
    checks: tuple[Mapping[str, Any], ...] = ()
    pairs: int = 0
    source: str = "live"
    build: str | None = None
    checked_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        """As stored in a capacity file (an entry's ``gate``)."""
        return {
            "passed": self.passed,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "build": self.build,
            "checked_at": self.checked_at,
            "source": self.source,
            "pairs": self.pairs,
            "checks": [dict(c) for c in self.checks],
        }

    @classmethod
    def from_json(cls, data: Any, *, field: str) -> GateResult:
        """From an entry's ``gate`` object; :class:`PoolConfigError` naming ``field`` when malformed."""
        if not isinstance(data, dict):
            raise PoolConfigError(field, data, "an object {passed, baseline, candidate, ...}")
        for key, kind, allowed in (("passed", bool, "true or false"), ("baseline", str, "a string"), ("candidate", str, "a string")):
            if not isinstance(data.get(key), kind):
                raise PoolConfigError(f"{field}.{key}", data.get(key), allowed)
        checks = data.get("checks") or []
        if not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks):
            raise PoolConfigError(f"{field}.checks", checks, "a list of check objects")
        pairs = data.get("pairs", 0)
        if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 0:
            raise PoolConfigError(f"{field}.pairs", pairs, "an integer >= 0")
        return cls(
            passed=data["passed"],
            baseline=data["baseline"],
            candidate=data["candidate"],
            checks=tuple(checks),
            pairs=pairs,
            source=str(data.get("source") or "live"),
            build=data.get("build"),
            checked_at=data.get("checked_at"),
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class PoolCapacity:
    """Measured ``max_concurrency`` per instance type (a capacity file), validated on construction.

    Args:
        instance_types: instance type -> :class:`CapacityMeasurement`.
        gates: instance type -> the latest :class:`GateResult` of its build. Default: none.
        source: where it was read from, for messages. Default: ``"PoolCapacity"``.

    Raises:
        PoolConfigError: an unknown instance type, a ``max_concurrency`` that is not an
            integer >= 1, or a gate that is not a :class:`GateResult`.
    """

    instance_types: Mapping[str, CapacityMeasurement]
    gates: Mapping[str, GateResult] = dataclasses.field(default_factory=dict)
    source: str = "PoolCapacity"

    def __post_init__(self) -> None:
        object.__setattr__(self, "instance_types", self._by_type("instance_types", self.instance_types, CapacityMeasurement))
        object.__setattr__(self, "gates", self._by_type("gates", self.gates, GateResult))
        for instance_type, measurement in self.instance_types.items():
            mc = measurement.max_concurrency
            if isinstance(mc, bool) or not isinstance(mc, numbers.Integral) or mc < 1:
                field = f"{self.source}.instance_types[{instance_type!r}].max_concurrency"
                raise PoolConfigError(field, mc, "an integer >= 1 (the highest concurrency whose SLOs held)")

    def _by_type(self, name: str, entries: Any, kind: type) -> MappingProxyType[str, Any]:
        """``entries`` checked (known instance types -> ``kind``), read-only and sorted by type."""
        if not isinstance(entries, Mapping):
            raise PoolConfigError(f"{self.source}.{name}", entries, f"a mapping of instance type to {kind.__name__}")
        for instance_type, entry in entries.items():
            field = f"{self.source}.{name}[{instance_type!r}]"
            check_instance_type(instance_type, field)
            if not isinstance(entry, kind):
                raise PoolConfigError(field, entry, f"a {kind.__name__}")
        return MappingProxyType(dict(sorted(entries.items())))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "PoolCapacity") -> PoolCapacity:
        """From the parsed JSON of a capacity file."""
        if not isinstance(data, dict) or data.get("schema") != CAPACITY_SCHEMA:
            raise PoolConfigError(f"{source}.schema", data.get("schema") if isinstance(data, dict) else data, f"{CAPACITY_SCHEMA!r}")
        types = data.get("instance_types")
        if not isinstance(types, dict):
            raise PoolConfigError(f"{source}.instance_types", types, "an object: instance type -> {max_concurrency, ...}")
        measurements = {}
        gates = {}
        for instance_type, entry in types.items():
            field = f"{source}.instance_types[{instance_type!r}]"
            if not isinstance(entry, dict) or not ("max_concurrency" in entry or "gate" in entry):
                raise PoolConfigError(field, entry, "an object with max_concurrency (bench --sweep), gate (gate), or both")
            if "gate" in entry:
                check_instance_type(instance_type, field)
                gates[instance_type] = GateResult.from_json(entry["gate"], field=f"{field}.gate")
            if "max_concurrency" not in entry:
                continue
            slos = entry.get("slos") or []
            if not isinstance(slos, list) or not all(isinstance(s, dict) for s in slos):
                raise PoolConfigError(f"{field}.slos", slos, "a list of SLO objects")
            measurements[instance_type] = CapacityMeasurement(
                max_concurrency=entry["max_concurrency"],
                slos=tuple(slos),
                measured_at=entry.get("measured_at"),
                endpoint=entry.get("endpoint"),
            )
        return cls(instance_types=measurements, gates=gates, source=source)

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
        """A copy in which ``instance_type`` has ``measurement`` (added, or replacing the old one; its gate is kept)."""
        return dataclasses.replace(self, instance_types={**self.instance_types, instance_type: measurement})

    def with_gate(self, instance_type: str, gate: GateResult) -> PoolCapacity:
        """A copy in which ``instance_type`` has ``gate`` (added, or replacing the old one; its measurement is kept)."""
        return dataclasses.replace(self, gates={**self.gates, instance_type: gate})

    def gate(self, instance_type: str) -> GateResult | None:
        """The latest gate result of ``instance_type``'s build, None when it was never gated."""
        return self.gates.get(instance_type)

    def gate_problem(self, instance_type: str, *, build: str | None = None) -> str | None:
        """Why ``instance_type`` has no passing gate (for ``build``, when given); None when it has one."""
        gate = self.gates.get(instance_type)
        if gate is None:
            gated = ", ".join(self.gates) or "none"
            return f"{instance_type} was never gated (gated types: {gated}); run sagemaker-pools gate ... --capacity-file"
        if not gate.passed:
            missed = ", ".join(str(c.get("name")) for c in gate.checks if not c.get("met")) or "a check"
            return f"{instance_type}'s last gate ({gate.candidate} against {gate.baseline}, {gate.checked_at or 'undated'}) failed: {missed} missed"
        if build is not None and gate.build != build:
            return f"{instance_type}'s passing gate tested build {gate.build!r}, not {build!r}: gate this build"
        return None

    def ungated(self, instance_types: Sequence[str], *, builds: Mapping[str, str] | None = None) -> dict[str, str]:
        """Each of ``instance_types`` without a passing gate -> why (see :meth:`gate_problem`).

        ``builds``: instance type -> the build the stack deploys on it; a gate of another build
        does not count. Default: any build.
        """
        builds = builds or {}
        problems = {t: self.gate_problem(t, build=builds.get(t)) for t in instance_types}
        return {t: p for t, p in problems.items() if p is not None}

    def require_gate(self, instance_type: str, *, build: str | None = None) -> GateResult:
        """The passing gate result of ``instance_type`` (of ``build``, when given).

        Raises:
            PoolConfigError: the type was never gated, its last gate failed, or it tested another build.
        """
        problem = self.gate_problem(instance_type, build=build)
        if problem is not None:
            raise PoolConfigError(f"{self.source}.require_gate(instance_type)", instance_type, f"an instance type whose build passed its gate ({problem})")
        return self.gates[instance_type]

    def to_json(self) -> dict[str, Any]:
        """As stored in a capacity file."""
        entries: dict[str, dict[str, Any]] = {t: m.to_json() for t, m in self.instance_types.items()}
        for instance_type, gate in self.gates.items():
            entries.setdefault(instance_type, {})["gate"] = gate.to_json()
        return {"schema": CAPACITY_SCHEMA, "instance_types": dict(sorted(entries.items()))}

    def write(self, path: str | Path) -> None:
        """Write the capacity file (atomically: a reader never sees half of it)."""
        target = Path(path)
        temporary = target.with_name(target.name + ".tmp")
        temporary.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        temporary.replace(target)
