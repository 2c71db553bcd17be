"""Waking from zero adds one unit per cold start, however often the alarm re-invokes the policy.

The wake-up alarms (``NoCapacityInvocationFailures`` for inference components,
``HasBacklogWithoutCapacity`` for async endpoints) stay in ALARM until the first unit serves, and
CloudWatch "continues to invoke the action once per minute that the alarm remains in the new
state" (CloudWatch User Guide, "Using Amazon CloudWatch alarms"). :func:`replay` applies
Application Auto Scaling's documented step-scaling rules (User Guide, "Step scaling policies":
adjustment types and cooldown) to the synthesized policy, one invocation a minute.
"""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import Duration

from sagemaker_pools import AsyncInference, InstancePool, PoolConfigError, PooledEndpoint
from sagemaker_pools.scaling import DEFAULT_COLD_START
from support.synth import imported_model, new_stack, resources, template_of

WAKE_METRICS = ("NoCapacityInvocationFailures", "HasBacklogWithoutCapacity")


def wake_up_policies(template: dict[str, Any]) -> list[tuple[dict[str, Any], int]]:
    """``(StepScalingPolicyConfiguration, MaxCapacity)`` of every policy a wake-up alarm triggers."""
    found = []
    policies = resources(template, "AWS::ApplicationAutoScaling::ScalingPolicy")
    targets = resources(template, "AWS::ApplicationAutoScaling::ScalableTarget")
    for alarm in resources(template, "AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        if props.get("MetricName") not in WAKE_METRICS:
            continue
        (action,) = props["AlarmActions"]
        policy = policies[action["Fn::GetAtt"][0]]  # the policy's Arn
        (target,) = [targets[d] for d in policy.get("DependsOn", []) if d in targets]
        found.append((policy["Properties"]["StepScalingPolicyConfiguration"], target["Properties"]["MaxCapacity"]))
    return found


def replay(config: dict[str, Any], max_capacity: int, minutes: int) -> int:
    """Capacity after the alarm invoked the step policy once a minute for ``minutes`` minutes, from 0.

    "ChangeInCapacity - Increase or decrease the current capacity ... by the specified value";
    "ExactCapacity - Change the current capacity ... to the specified value"; and, for the
    cooldown: "The scaling policy won't increase the desired capacity again unless either a
    larger scale out is triggered or the cooldown period ends" (one step here: no larger one).
    """
    (step,) = config["StepAdjustments"]
    adjustment, kind = step["ScalingAdjustment"], config["AdjustmentType"]
    cooldown = config.get("Cooldown", 300)  # SageMaker's default cooldown
    capacity, last_scale_out = 0, None
    for minute in range(minutes):
        now = minute * 60
        if kind == "ExactCapacity":
            capacity = min(adjustment, max_capacity)
        elif kind == "ChangeInCapacity":
            if last_scale_out is None or now - last_scale_out >= cooldown:
                new = min(capacity + adjustment, max_capacity)
                if new > capacity:
                    capacity, last_scale_out = new, now
        else:
            raise AssertionError(f"unexpected adjustment type {kind}")
    return capacity


def test_the_replay_shows_the_old_policy_would_wake_to_the_maximum() -> None:
    """AWS's recipe as written (cooldown 60 s) adds a copy a minute through a 20-minute cold start."""
    assert replay({"AdjustmentType": "ChangeInCapacity", "Cooldown": 60, "StepAdjustments": [{"ScalingAdjustment": 1}]}, 8, 20) == 8
    assert replay({"AdjustmentType": "ExactCapacity", "StepAdjustments": [{"ScalingAdjustment": 1}]}, 8, 20) == 1


def test_every_example_wake_up_adds_one_unit_per_cold_start(example_templates: dict[str, dict[str, Any]]) -> None:
    policies = [p for t in example_templates.values() for p in wake_up_policies(t)]
    assert len(policies) == 2  # the inference component's and the async endpoint's
    # Both examples keep the default provisioning timeout (20 minutes): a wake-up that falls back
    # waits it out before the cold start begins (test_simulate.py simulates that path).
    cold_start_minutes = 20 + int(DEFAULT_COLD_START.to_minutes())
    for config, max_capacity in policies:
        assert max_capacity >= 4
        # Never a scale-in: target tracking may add capacity while the alarm is still in ALARM.
        assert config["AdjustmentType"] == "ChangeInCapacity" and config["StepAdjustments"][0]["ScalingAdjustment"] == 1
        assert config["Cooldown"] == 20 * 60 + DEFAULT_COLD_START.to_seconds() == 2400
        # Invoked every minute through a whole cold start: one unit.
        assert replay(config, max_capacity, cold_start_minutes) == 1
        # Requests still failing after three cold starts (something is wrong): one unit per cold start.
        assert replay(config, max_capacity, 3 * cold_start_minutes) == 3


def _async(stack: Any, **scaling: Any) -> Any:
    endpoint = PooledEndpoint(
        stack, "E", model=imported_model(stack), pools=[InstancePool(instance_type="ml.g6e.2xlarge")], async_inference=AsyncInference()
    )
    return endpoint.auto_scale_on_backlog(max_capacity=4, **scaling)


@pytest.mark.parametrize("timeout_minutes", [5, 60])
def test_the_default_cold_start_adds_the_provisioning_timeout(timeout_minutes: int) -> None:
    """The default covers a wake-up whose first pool has no capacity: the timeout, then a cold start."""
    stack = new_stack()
    endpoint = PooledEndpoint(
        stack,
        "E",
        model=imported_model(stack),
        pools=[InstancePool(instance_type="ml.g6e.2xlarge"), InstancePool(instance_type="ml.g6.2xlarge")],
        async_inference=AsyncInference(),
        provision_timeout=Duration.minutes(timeout_minutes),
    )
    endpoint.auto_scale_on_backlog(max_capacity=4)
    ((config, _),) = wake_up_policies(template_of(stack))
    assert config["Cooldown"] == timeout_minutes * 60 + DEFAULT_COLD_START.to_seconds()


def test_cold_start_sets_the_wake_up_cooldown() -> None:
    stack = new_stack()
    _async(stack, cold_start=Duration.minutes(45))
    ((config, _),) = wake_up_policies(template_of(stack))
    assert config["Cooldown"] == 2700
    assert replay(config, 4, 45) == 1


@pytest.mark.parametrize("cold_start", [Duration.seconds(30), Duration.days(2)])
def test_cold_start_out_of_range_is_refused(cold_start: Duration) -> None:
    with pytest.raises(PoolConfigError) as error:
        _async(new_stack(), cold_start=cold_start)
    assert error.value.field == "PooledEndpoint.auto_scale_on_backlog.cold_start"
    assert "from 60 to 86400" in str(error.value)
