"""PoolCapacity: a capacity file (as ``sagemaker-pools bench --sweep`` writes it) feeds InstancePool."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sagemaker_pools import CapacityMeasurement, GateResult, InstancePool, PoolCapacity, PoolConfigError
from sagemaker_pools.capacity import CAPACITY_SCHEMA

SLO = {"name": "p99", "metric": "latency", "percentile": 99, "bound_ms": 2000.0}


def capacity_file(tmp_path: Path, types: dict[str, object]) -> Path:
    path = tmp_path / "capacity.json"
    path.write_text(json.dumps({"schema": CAPACITY_SCHEMA, "instance_types": types}))
    return path


def test_from_file_feeds_instance_pools(tmp_path: Path) -> None:
    path = capacity_file(
        tmp_path,
        {
            "ml.g6e.48xlarge": {"max_concurrency": 32, "slos": [SLO], "measured_at": "2026-12-01T06:00:00+00:00", "endpoint": "llm"},
            "ml.g6.48xlarge": {"max_concurrency": 16},
        },
    )
    capacity = PoolCapacity.from_file(path)
    assert capacity.max_concurrency("ml.g6e.48xlarge") == 32
    assert capacity.pool("ml.g6.48xlarge", priority=2) == InstancePool(instance_type="ml.g6.48xlarge", max_concurrency=16, priority=2)
    assert [p.max_concurrency for p in capacity.pools(["ml.g6e.48xlarge", "ml.g6.48xlarge"])] == [32, 16]
    assert capacity.instance_types["ml.g6e.48xlarge"].slos == (SLO,)


def test_with_measurement_merges_and_write_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "capacity.json"
    first = PoolCapacity(instance_types={}).with_measurement("ml.g6.48xlarge", CapacityMeasurement(max_concurrency=8))
    first.write(path)
    second = PoolCapacity.from_file(path).with_measurement("ml.g6e.48xlarge", CapacityMeasurement(max_concurrency=24, slos=(SLO,)))
    second = second.with_measurement("ml.g6.48xlarge", CapacityMeasurement(max_concurrency=12))  # a re-measurement replaces
    second.write(path)
    again = PoolCapacity.from_file(path)
    assert {t: m.max_concurrency for t, m in again.instance_types.items()} == {"ml.g6.48xlarge": 12, "ml.g6e.48xlarge": 24}
    assert json.loads(path.read_text())["schema"] == CAPACITY_SCHEMA


@pytest.mark.parametrize(
    ("types", "field", "allowed"),
    [
        ({"ml.g6e.48xlarge": {"max_concurrency": 0}}, "instance_types['ml.g6e.48xlarge'].max_concurrency", "an integer >= 1"),
        ({"ml.g6e.48xlarge": {"max_concurrency": 2.5}}, "instance_types['ml.g6e.48xlarge'].max_concurrency", "an integer >= 1"),
        ({"ml.g6e.48xlarge": {"max_concurrency": True}}, "instance_types['ml.g6e.48xlarge'].max_concurrency", "an integer >= 1"),
        ({"ml.nope.xlarge": {"max_concurrency": 4}}, "instance_types['ml.nope.xlarge']", ""),
        ({"ml.g6e.48xlarge": {"slos": []}}, "instance_types['ml.g6e.48xlarge']", "an object with max_concurrency"),
        ({"ml.g6e.48xlarge": {"max_concurrency": 4, "slos": "p99"}}, "instance_types['ml.g6e.48xlarge'].slos", "a list of SLO objects"),
    ],
)
def test_bad_files_fail_naming_the_field(tmp_path: Path, types: dict[str, object], field: str, allowed: str) -> None:
    path = capacity_file(tmp_path, types)
    with pytest.raises(PoolConfigError) as error:
        PoolCapacity.from_file(path)
    assert error.value.field == f"PoolCapacity({str(path)!r}).{field}"
    assert allowed in error.value.allowed


def test_missing_type_unreadable_file_and_wrong_schema(tmp_path: Path) -> None:
    capacity = PoolCapacity(instance_types={"ml.g6.48xlarge": CapacityMeasurement(max_concurrency=8)})
    with pytest.raises(PoolConfigError, match=r"max_concurrency\(instance_type\): got 'ml.g6e.48xlarge'; allowed: a measured instance type: ml.g6.48xlarge"):
        capacity.max_concurrency("ml.g6e.48xlarge")
    with pytest.raises(PoolConfigError, match="a readable capacity file"):
        PoolCapacity.from_file(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(PoolConfigError, match="a JSON capacity file"):
        PoolCapacity.from_file(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"schema": "something-else"}))
    with pytest.raises(PoolConfigError, match="schema: got 'something-else'"):
        PoolCapacity.from_file(tmp_path / "other.json")


def test_capacity_imports_no_cdk() -> None:
    code = "import sys, sagemaker_pools.capacity; print('aws_cdk' in sys.modules, 'jsii' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# -- gate results ----------------------------------------------------------------------------

CHECKS = ({"name": "compared", "bound": 1, "measured": 200, "met": True}, {"name": "agreement", "bound": 0.95, "measured": 0.97, "met": True})
FAILED_CHECKS = ({"name": "compared", "bound": 1, "measured": 200, "met": True}, {"name": "agreement", "bound": 0.95, "measured": 0.81, "met": False})


def passed(build: str | None = "int4-v3") -> GateResult:
    return GateResult(passed=True, baseline="llm/primary", candidate="llm-g6", checks=CHECKS, pairs=200, build=build, checked_at="2026-12-02T10:00:00+00:00")


def test_gate_results_sit_beside_measurements_and_each_writer_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "capacity.json"
    PoolCapacity(instance_types={}).with_measurement("ml.g6.48xlarge", CapacityMeasurement(max_concurrency=16)).write(path)
    PoolCapacity.from_file(path).with_gate("ml.g6.48xlarge", passed()).with_gate("ml.p4d.24xlarge", passed(None)).write(path)
    # bench re-measures g6 after the gate: the gate stays
    PoolCapacity.from_file(path).with_measurement("ml.g6.48xlarge", CapacityMeasurement(max_concurrency=20)).write(path)
    data = json.loads(path.read_text())
    assert data["instance_types"]["ml.g6.48xlarge"]["max_concurrency"] == 20
    assert data["instance_types"]["ml.g6.48xlarge"]["gate"]["build"] == "int4-v3"
    assert data["instance_types"]["ml.p4d.24xlarge"] == {"gate": passed(None).to_json()}  # a gate-only entry
    read = PoolCapacity.from_file(path)
    assert read.gate("ml.g6.48xlarge") == passed()
    assert read.gate("ml.g6e.48xlarge") is None
    assert set(read.instance_types) == {"ml.g6.48xlarge"}  # p4d was gated, never measured
    with pytest.raises(PoolConfigError, match="a measured instance type: ml.g6.48xlarge"):
        read.max_concurrency("ml.p4d.24xlarge")


def test_require_gate_and_ungated_say_why() -> None:
    failed = GateResult(passed=False, baseline="llm/primary", candidate="llm-p4d", checks=FAILED_CHECKS, checked_at="2026-12-02T11:00:00+00:00")
    capacity = PoolCapacity(instance_types={}, gates={"ml.g6.48xlarge": passed(), "ml.p4d.24xlarge": failed})
    assert capacity.require_gate("ml.g6.48xlarge") == passed()
    assert capacity.require_gate("ml.g6.48xlarge", build="int4-v3") == passed()
    assert capacity.ungated(["ml.g6.48xlarge"]) == {}
    assert capacity.ungated(["ml.g6.48xlarge", "ml.p4d.24xlarge", "ml.g5.48xlarge"], builds={"ml.g6.48xlarge": "int4-v4"}) == {
        "ml.g6.48xlarge": "ml.g6.48xlarge's passing gate tested build 'int4-v3', not 'int4-v4': gate this build",
        "ml.p4d.24xlarge": "ml.p4d.24xlarge's last gate (llm-p4d against llm/primary, 2026-12-02T11:00:00+00:00) failed: agreement missed",
        "ml.g5.48xlarge": "ml.g5.48xlarge was never gated (gated types: ml.g6.48xlarge, ml.p4d.24xlarge); run sagemaker-pools gate ... --capacity-file",
    }
    with pytest.raises(PoolConfigError) as error:
        capacity.require_gate("ml.p4d.24xlarge")
    assert error.value.field == "PoolCapacity.require_gate(instance_type)"
    assert error.value.value == "ml.p4d.24xlarge"
    assert "failed: agreement missed" in error.value.allowed


@pytest.mark.parametrize(
    ("gate", "field", "allowed"),
    [
        ("yes", "gate", "an object {passed, baseline, candidate, ...}"),
        ({"passed": "yes", "baseline": "a", "candidate": "b"}, "gate.passed", "true or false"),
        ({"passed": True, "candidate": "b"}, "gate.baseline", "a string"),
        ({"passed": True, "baseline": "a", "candidate": "b", "checks": "all"}, "gate.checks", "a list of check objects"),
        ({"passed": True, "baseline": "a", "candidate": "b", "pairs": -1}, "gate.pairs", "an integer >= 0"),
    ],
)
def test_bad_gate_entries_fail_naming_the_field(tmp_path: Path, gate: object, field: str, allowed: str) -> None:
    path = capacity_file(tmp_path, {"ml.g6.48xlarge": {"max_concurrency": 4, "gate": gate}})
    with pytest.raises(PoolConfigError) as error:
        PoolCapacity.from_file(path)
    assert error.value.field == f"PoolCapacity({str(path)!r}).instance_types['ml.g6.48xlarge'].{field}"
    assert error.value.allowed == allowed


def test_gates_must_be_gate_results_of_known_types() -> None:
    with pytest.raises(PoolConfigError, match=r"PoolCapacity.gates\['ml.g6.48xlarge'\]: got 'passed'; allowed: a GateResult"):
        PoolCapacity(instance_types={}, gates={"ml.g6.48xlarge": "passed"})  # type: ignore[dict-item]
    with pytest.raises(PoolConfigError, match=r"gates\['ml.nope.xlarge'\]"):
        PoolCapacity(instance_types={}, gates={"ml.nope.xlarge": passed()})
