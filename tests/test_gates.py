"""check_gates: a stack refuses, or warns about, a fallback pool whose build has no passing gate."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import assertions

from sagemaker_pools import GateResult, InstancePool, PoolCapacity, PoolConfigError, check_gates
from sagemaker_pools.gates import UNGATED_WARNING_ID

CHECKS = ({"name": "agreement", "bound": 0.95, "measured": 0.97, "met": True},)
PASSED = GateResult(passed=True, baseline="llm/primary", candidate="llm-g6", checks=CHECKS, build="int4-v3")
FAILED = GateResult(passed=False, baseline="llm/primary", candidate="llm-p4d", checks=({**CHECKS[0], "measured": 0.5, "met": False},))
CAPACITY = PoolCapacity(instance_types={}, gates={"ml.g6.48xlarge": PASSED, "ml.p4d.24xlarge": FAILED})
# the primary (priority 1) listed last: it is the gate's reference and is never checked
POOLS = [InstancePool(instance_type="ml.g6.48xlarge", priority=2), InstancePool(instance_type="ml.p4d.24xlarge", priority=3),
         InstancePool(instance_type="ml.g6e.48xlarge", priority=1)]  # fmt: skip


def test_every_fallback_pool_gated_passes_and_the_primary_needs_no_gate() -> None:
    stack = cdk.Stack(cdk.App(), "Gated")
    assert check_gates(stack, capacity=CAPACITY, pools=POOLS[:1] + POOLS[2:], builds={"ml.g6.48xlarge": "int4-v3"}) == {}
    assert assertions.Annotations.from_stack(stack).find_warning("*", assertions.Match.any_value()) == []


def test_an_ungated_fallback_pool_is_refused_by_default() -> None:
    stack = cdk.Stack(cdk.App(), "Refused")
    with pytest.raises(PoolConfigError) as error:
        check_gates(stack, capacity=CAPACITY, pools=POOLS)
    assert error.value.field == "check_gates.pools"
    assert error.value.value == ["ml.p4d.24xlarge"]
    assert "ml.p4d.24xlarge's last gate (llm-p4d against llm/primary, undated) failed: agreement missed" in error.value.allowed
    with pytest.raises(PoolConfigError, match="tested build 'int4-v3', not 'int4-v4'"):
        check_gates(stack, capacity=CAPACITY, pools=POOLS[:1] + POOLS[2:], builds={"ml.g6.48xlarge": "int4-v4"})


def test_on_ungated_warning_adds_a_cdk_warning_per_pool() -> None:
    stack = cdk.Stack(cdk.App(), "Warned")
    problems = check_gates(stack, capacity=PoolCapacity(instance_types={}), pools=POOLS, on_ungated="warning")
    assert sorted(problems) == ["ml.g6.48xlarge", "ml.p4d.24xlarge"]
    warnings = [w.entry.data for w in assertions.Annotations.from_stack(stack).find_warning("*", assertions.Match.any_value())]
    assert len(warnings) == 2
    assert all(UNGATED_WARNING_ID in w and "fallback pool without a passing gate" in w for w in warnings)
    assert any("ml.p4d.24xlarge was never gated" in w for w in warnings)


def test_a_bad_on_ungated_names_the_choices() -> None:
    with pytest.raises(PoolConfigError, match=r"check_gates.on_ungated: got 'ignore'; allowed: 'error' or 'warning'"):
        check_gates(cdk.Stack(cdk.App(), "Bad"), capacity=CAPACITY, pools=POOLS, on_ungated="ignore")
