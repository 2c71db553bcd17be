"""Waking from zero asks for one unit, however often the alarm re-invokes the policy.

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
from sagemaker_pools.scaling import DEFAULT_WAKE_UP_COOLDOWN
from support.synth import imported_model, new_stack, resources, template_of

WAKE_METRICS = ("NoCapacityInvocationFailures", "HasBacklogWithoutCapacity")


def wake_up_policies(template: dict[str, Any]) -> list[tuple[dict[str, Any], int]]:
    """``(StepScalingPolicyConfiguration, MaxCapacity)`` of every policy a wake-up alarm triggers."""
    found = []
    policies = resources(template, "AWS::ApplicationAutoScaling::ScalingPolicy")
    targets = resources(template, "AWS::ApplicationAutoScaling::ScalableTarget")
    for alarm in resources(template, "AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        names = {props.get("MetricName")} | {q["MetricStat"]["Metric"]["MetricName"] for q in props.get("Metrics", []) if "MetricStat" in q}
        if not names & set(WAKE_METRICS):
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


def test_every_example_wake_up_asks_for_one_unit_however_long_the_cold_start(example_templates: dict[str, dict[str, Any]]) -> None:
    policies = [p for t in example_templates.values() for p in wake_up_policies(t)]
    assert len(policies) == 2  # the inference component's and the async endpoint's
    for config, max_capacity in policies:
        assert max_capacity >= 4
        # An exact capacity: re-invoked every minute, it asks for the same one unit, whatever
        # SageMaker does with a change asked for while the endpoint is updating.
        assert config["AdjustmentType"] == "ExactCapacity" and config["StepAdjustments"][0]["ScalingAdjustment"] == 1
        assert config["Cooldown"] == DEFAULT_WAKE_UP_COOLDOWN.to_seconds() == 300
        # A 20-minute cold start, one behind a 20-minute provisioning timeout, three in a row.
        for minutes in (20, 40, 120):
            assert replay(config, max_capacity, minutes) == 1


def _async(stack: Any, **scaling: Any) -> Any:
    endpoint = PooledEndpoint(
        stack, "E", model=imported_model(stack), pools=[InstancePool(instance_type="ml.g6e.2xlarge")], async_inference=AsyncInference()
    )
    return endpoint.auto_scale_on_backlog(max_capacity=4, **scaling)


@pytest.mark.parametrize("timeout_minutes", [5, 60])
def test_the_default_cooldown_does_not_follow_the_provisioning_timeout(timeout_minutes: int) -> None:
    """The exact capacity, not the cooldown, holds a wake-up at one unit: no need to cover a fallback."""
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
    assert config["Cooldown"] == 300


def test_wake_up_cooldown_sets_the_step_cooldown() -> None:
    stack = new_stack()
    _async(stack, wake_up_cooldown=Duration.minutes(45))
    ((config, _),) = wake_up_policies(template_of(stack))
    assert config["Cooldown"] == 2700
    assert replay(config, 4, 45) == 1


@pytest.mark.parametrize("cooldown", [Duration.seconds(30), Duration.days(2)])
def test_a_wake_up_cooldown_out_of_range_is_refused(cooldown: Duration) -> None:
    with pytest.raises(PoolConfigError) as error:
        _async(new_stack(), wake_up_cooldown=cooldown)
    assert error.value.field == "PooledEndpoint.auto_scale_on_backlog.wake_up_cooldown"
    assert "from 60 to 86400" in str(error.value)
