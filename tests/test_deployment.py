"""Deployment policies as value objects: the bounds of each size and time, and what they render."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from sagemaker_pools import CapacitySize, DeploymentPolicy, InstancePool, PoolConfigError, PooledEndpoint, PoolModel
from support.synth import new_stack, only, template_of

MINUTE = Duration.minutes(1)


@pytest.mark.parametrize(
    ("make", "low", "high", "field"),
    [
        (lambda p: DeploymentPolicy.canary(canary_size=p, wait_interval=MINUTE), 1, 50, "DeploymentPolicy.canary.canary_size"),
        (lambda p: DeploymentPolicy.linear(step_size=p, wait_interval=MINUTE), 10, 50, "DeploymentPolicy.linear.step_size"),
        (lambda p: DeploymentPolicy.rolling(batch_size=p, bake_time=MINUTE), 5, 50, "DeploymentPolicy.rolling.batch_size"),
        (
            lambda p: DeploymentPolicy.rolling(batch_size=CapacitySize.percent(10), bake_time=MINUTE, rollback_batch_size=p),
            1,
            100,
            "DeploymentPolicy.rolling.rollback_batch_size",
        ),
    ],
)
def test_percent_sizes_accept_both_bounds_and_nothing_beyond(make: Any, low: int, high: int, field: str) -> None:
    make(CapacitySize.percent(low))
    make(CapacitySize.percent(high))
    for outside in (low - 1, high + 1):
        if not 1 <= outside <= 100:
            continue  # CapacitySize.percent itself refuses it
        with pytest.raises(PoolConfigError) as err:
            make(CapacitySize.percent(outside))
        assert (err.value.field, err.value.value) == (field, f"{outside}%")
    make(CapacitySize.instances(1000))  # an instance count is checked by SageMaker against the fleet


def test_waits_and_the_timeout_that_covers_them() -> None:
    # termination wait: 0 to 3600 s
    DeploymentPolicy.all_at_once(termination_wait=Duration.seconds(0))
    DeploymentPolicy.all_at_once(termination_wait=Duration.seconds(3600))
    with pytest.raises(PoolConfigError) as err:
        DeploymentPolicy.all_at_once(termination_wait=Duration.seconds(3601))
    assert err.value.field == "DeploymentPolicy.all_at_once.termination_wait"
    # the timeout must exceed every wait it covers, each wait counted only when given
    DeploymentPolicy.all_at_once(termination_wait=Duration.seconds(3600), max_execution_timeout=Duration.seconds(3601))
    # a canary bakes twice (the canary, then the rest)
    DeploymentPolicy.canary(
        canary_size=CapacitySize.percent(10), wait_interval=Duration.seconds(1800), max_execution_timeout=Duration.seconds(3601)
    )
    with pytest.raises(PoolConfigError) as err:
        DeploymentPolicy.canary(
            canary_size=CapacitySize.percent(10),
            wait_interval=Duration.seconds(1800),
            termination_wait=Duration.seconds(1800),
            max_execution_timeout=Duration.seconds(3600),
        )
    assert str(err.value) == (
        "DeploymentPolicy.canary.max_execution_timeout: got '3600 seconds'; allowed: more than the waits it must cover "
        "(5400 seconds over every step)"
    )
    # linear: one wait per step: 10 % steps of 30 minutes wait five hours, not one
    with pytest.raises(PoolConfigError) as err:
        DeploymentPolicy.linear(step_size=CapacitySize.percent(10), wait_interval=Duration.minutes(30), max_execution_timeout=Duration.hours(1))
    assert "18000 seconds" in str(err.value)
    DeploymentPolicy.linear(step_size=CapacitySize.percent(50), wait_interval=Duration.minutes(30), max_execution_timeout=Duration.seconds(3601))
    # rolling: counted for the fewest batches here (one); against the fleet by the endpoint
    DeploymentPolicy.rolling(batch_size=CapacitySize.percent(50), bake_time=Duration.seconds(3600), max_execution_timeout=Duration.seconds(3601))
    with pytest.raises(PoolConfigError) as err:
        DeploymentPolicy.rolling(batch_size=CapacitySize.percent(50), bake_time=Duration.seconds(3600), max_execution_timeout=Duration.seconds(3600))
    assert err.value.field == "DeploymentPolicy.rolling.max_execution_timeout"


def test_rollback_alarms_ten_at_most_each_an_alarm() -> None:
    stack = new_stack()
    ten = [cloudwatch.Alarm.from_alarm_name(stack, f"A{i}", f"alarm-{i}") for i in range(10)]
    assert len(DeploymentPolicy.all_at_once(rollback_alarms=ten).rollback_alarms) == 10
    half = SimpleNamespace(alarm_name="only-a-name")  # no alarm_arn: not an IAlarm
    with pytest.raises(PoolConfigError) as err:
        DeploymentPolicy.all_at_once(rollback_alarms=[half])  # type: ignore[list-item]
    assert err.value.field == "DeploymentPolicy.rollback_alarms" and err.value.value is half
    # Either member missing is enough (the check reads them on the class).
    for members in ({"alarm_name": "a"}, {"alarm_arn": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:a"}):
        partial = type("Partial", (), members)()
        with pytest.raises(PoolConfigError) as err:
            DeploymentPolicy.all_at_once(rollback_alarms=[partial])
        assert err.value.value is partial


def test_timeouts_and_sizes_render() -> None:
    stack = new_stack()
    model = PoolModel.from_model_name(stack, "M", "llm")
    pools = [InstancePool(instance_type="ml.g6e.12xlarge")]
    PooledEndpoint(
        stack,
        "Blue",
        model=model,
        pools=pools,
        deployment=DeploymentPolicy.linear(
            step_size=CapacitySize.instances(2),
            wait_interval=Duration.minutes(2),
            termination_wait=Duration.minutes(3),
            max_execution_timeout=Duration.hours(1),
        ),
    )
    config = only(template_of(stack), "AWS::SageMaker::Endpoint")["DeploymentConfig"]
    assert config == {
        "BlueGreenUpdatePolicy": {
            "TrafficRoutingConfiguration": {"Type": "LINEAR", "LinearStepSize": {"Type": "INSTANCE_COUNT", "Value": 2}, "WaitIntervalInSeconds": 120},
            "TerminationWaitInSeconds": 180,
            "MaximumExecutionTimeoutInSeconds": 3600,
        }
    }
    stack = new_stack()
    PooledEndpoint(
        stack,
        "Rolling",
        model=PoolModel.from_model_name(stack, "M", "llm"),
        pools=pools,
        deployment=DeploymentPolicy.rolling(batch_size=CapacitySize.percent(20), bake_time=Duration.minutes(5), max_execution_timeout=Duration.hours(2)),
    )
    config = only(template_of(stack), "AWS::SageMaker::Endpoint")["DeploymentConfig"]
    assert config == {
        "RollingUpdatePolicy": {
            "MaximumBatchSize": {"Type": "CAPACITY_PERCENT", "Value": 20},
            "WaitIntervalInSeconds": 300,
            "MaximumExecutionTimeoutInSeconds": 7200,
        }
    }


def test_rolling_rollback_size_and_timeout_bounds() -> None:
    ten = CapacitySize.percent(10)
    with pytest.raises(PoolConfigError) as err:
        DeploymentPolicy.rolling(batch_size=ten, bake_time=MINUTE, rollback_batch_size=1)  # type: ignore[arg-type]
    assert err.value.field == "DeploymentPolicy.rolling.rollback_batch_size"
    for seconds in (600, 28800):
        DeploymentPolicy.rolling(batch_size=ten, bake_time=Duration.seconds(30), max_execution_timeout=Duration.seconds(seconds))
    for seconds in (599, 28801):
        with pytest.raises(PoolConfigError) as err:
            DeploymentPolicy.rolling(batch_size=ten, bake_time=Duration.seconds(30), max_execution_timeout=Duration.seconds(seconds))
        assert err.value.field == "DeploymentPolicy.rolling.max_execution_timeout"


def test_waits_count_one_bake_per_traffic_step_then_the_termination_wait() -> None:
    wait, term = Duration.seconds(60), Duration.seconds(120)
    # All at once: one shift, baked once; then the old fleet waits out termination_wait.
    assert DeploymentPolicy.all_at_once(wait_interval=wait, termination_wait=term).waits_seconds(4) == 60 + 120
    assert DeploymentPolicy.all_at_once(wait_interval=wait).waits_seconds(4) == 60  # no termination wait: 0
    assert DeploymentPolicy.all_at_once().waits_seconds(4) == 0
    # Canary: the canary step and the final step, whatever the canary's size.
    for size in (CapacitySize.percent(10), CapacitySize.instances(3)):
        assert DeploymentPolicy.canary(canary_size=size, wait_interval=wait, termination_wait=term).waits_seconds(8) == 2 * 60 + 120
    # Linear in percent: traffic moves in steps of the size, rounded up (30 %: 4 steps), whatever the fleet.
    for fleet in (1, 50):
        assert DeploymentPolicy.linear(step_size=CapacitySize.percent(30), wait_interval=wait).waits_seconds(fleet) == 4 * 60
    assert DeploymentPolicy.linear(step_size=CapacitySize.percent(50), wait_interval=wait, termination_wait=term).waits_seconds(3) == 2 * 60 + 120
    # In instances: the fleet in steps of the size, rounded up; a step larger than the fleet is one step.
    assert DeploymentPolicy.linear(step_size=CapacitySize.instances(2), wait_interval=wait).waits_seconds(5) == 3 * 60
    assert DeploymentPolicy.linear(step_size=CapacitySize.instances(2), wait_interval=wait).waits_seconds(4) == 2 * 60
    assert DeploymentPolicy.linear(step_size=CapacitySize.instances(8), wait_interval=wait).waits_seconds(5) == 60
    # Rolling: one bake per batch of whole instances (20 % of 7: batches of 2, 4 of them), no termination wait.
    assert DeploymentPolicy.rolling(batch_size=CapacitySize.percent(20), bake_time=Duration.seconds(300)).waits_seconds(7) == 4 * 300
    assert DeploymentPolicy.rolling(batch_size=CapacitySize.percent(20), bake_time=Duration.seconds(300)).waits_seconds(10) == 5 * 300
    assert DeploymentPolicy.rolling(batch_size=CapacitySize.instances(3), bake_time=Duration.seconds(300)).waits_seconds(7) == 3 * 300


def test_the_whole_deployment_adds_provisioning_once_per_new_fleet_or_batch() -> None:
    bake = Duration.minutes(10)
    # Blue/green provisions the green fleet once; rolling provisions every batch.
    assert DeploymentPolicy.canary(canary_size=CapacitySize.percent(25), wait_interval=bake).duration_seconds(8, 1200) == 2 * 600 + 1200
    assert DeploymentPolicy.rolling(batch_size=CapacitySize.percent(25), bake_time=bake).duration_seconds(8, 1200) == 4 * (600 + 1200)
    assert DeploymentPolicy().duration_seconds(8, 1200) is None


def test_waits_are_unknown_for_tokens_and_without_a_policy() -> None:
    stack = cdk.Stack(cdk.App(), "Tokens")
    number = cdk.CfnParameter(stack, "N", type="Number").value_as_number
    assert DeploymentPolicy.canary(canary_size=CapacitySize(type="CAPACITY_PERCENT", value=number), wait_interval=MINUTE).waits_seconds(4) is None
    assert DeploymentPolicy.linear(step_size=CapacitySize.percent(10), wait_interval=MINUTE).waits_seconds(number) is None  # type: ignore[arg-type]
    assert DeploymentPolicy().waits_seconds(4) is None  # no traffic policy: SageMaker's default
    seconds = Duration.seconds(number)
    assert DeploymentPolicy.all_at_once(wait_interval=seconds).waits_seconds(4) is None
    assert DeploymentPolicy.all_at_once(termination_wait=seconds).waits_seconds(4) is None
    assert DeploymentPolicy.rolling(batch_size=CapacitySize.percent(10), bake_time=seconds).waits_seconds(4) is None
    assert DeploymentPolicy.rolling(batch_size=CapacitySize.percent(10), bake_time=MINUTE).duration_seconds(4, number) is None  # type: ignore[arg-type]


def test_a_token_timeout_or_wait_is_left_to_deploy_time() -> None:
    stack = new_stack()
    seconds = Duration.seconds(cdk.CfnParameter(stack, "Seconds", type="Number").value_as_number)
    hour = Duration.hours(1)
    # Neither side of "the timeout exceeds the waits" is known: nothing to compare.
    policies = [
        DeploymentPolicy.all_at_once(max_execution_timeout=seconds),
        DeploymentPolicy.all_at_once(wait_interval=seconds, termination_wait=hour, max_execution_timeout=Duration.seconds(600)),
        DeploymentPolicy.rolling(batch_size=CapacitySize.percent(10), bake_time=hour, max_execution_timeout=seconds),
        DeploymentPolicy.rolling(batch_size=CapacitySize.percent(10), bake_time=seconds, max_execution_timeout=Duration.seconds(600)),
    ]
    model = PoolModel.from_model_name(stack, "M", "llm")
    for i, policy in enumerate(policies):
        PooledEndpoint(stack, f"E{i}", model=model, pools=[InstancePool(instance_type="ml.g6e.12xlarge")], deployment=policy)
    configs = [e["Properties"]["DeploymentConfig"] for e in template_of(stack)["Resources"].values() if e["Type"] == "AWS::SageMaker::Endpoint"]
    ref = {"Ref": "Seconds"}
    assert [c["BlueGreenUpdatePolicy"].get("MaximumExecutionTimeoutInSeconds") for c in configs[:2]] == [ref, 600]
    assert configs[1]["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]["WaitIntervalInSeconds"] == ref
    assert [c["RollingUpdatePolicy"]["MaximumExecutionTimeoutInSeconds"] for c in configs[2:]] == [ref, 600]
    assert configs[3]["RollingUpdatePolicy"]["WaitIntervalInSeconds"] == ref


def test_with_rollback_alarms_replaces_the_alarms_and_keeps_the_rest() -> None:
    stack = new_stack()
    first = [cloudwatch.Alarm.from_alarm_name(stack, "First", "first")]
    second = [cloudwatch.Alarm.from_alarm_name(stack, f"A{i}", f"alarm-{i}") for i in range(10)]
    policy = DeploymentPolicy.canary(canary_size=CapacitySize.percent(10), wait_interval=MINUTE, rollback_alarms=first)
    changed = policy.with_rollback_alarms(second)
    assert changed.rollback_alarms == tuple(second) and policy.rollback_alarms == tuple(first)
    assert changed._blue_green is policy._blue_green and changed.waits_seconds(4) == policy.waits_seconds(4) == 120
    assert policy.with_rollback_alarms([]).rollback_alarms == ()
    with pytest.raises(PoolConfigError) as err:
        policy.with_rollback_alarms([*second, *first])
    assert str(err.value) == "DeploymentPolicy.rollback_alarms: got '11 alarms'; allowed: at most 10 CloudWatch alarms"


# -- the policy against the fleet it deploys ------------------------------------------------------


def _deploy(deployment: DeploymentPolicy, *, initial: int | None = None, scale: tuple[int, int] | None = None,
            provision: Duration = Duration.minutes(20), pools: tuple[str, ...] = ("ml.g6e.12xlarge",)) -> None:
    stack = new_stack()
    endpoint = PooledEndpoint(
        stack, "E", model=PoolModel.from_model_name(stack, "M", "llm"), pools=[InstancePool(instance_type=t) for t in pools],
        initial_instance_count=initial, provision_timeout=provision, deployment=deployment,
    )
    if scale is not None:
        endpoint.auto_scale(min_capacity=scale[0], max_capacity=scale[1])


def _refused(field: str, build: Any) -> str:
    with pytest.raises(PoolConfigError) as err:
        build()
    assert err.value.field == field
    return str(err.value)


def test_a_step_in_instances_is_checked_against_every_fleet_size() -> None:
    wait = Duration.minutes(5)
    canary = DeploymentPolicy.canary(canary_size=CapacitySize.instances(2), wait_interval=wait)
    _deploy(canary, initial=4)  # exactly half
    _refused("PooledEndpoint.deployment.canary_size", lambda: _deploy(canary, initial=3))
    # the smallest fleet autoscaling may give it counts: 2 of a fleet of 3 is over half
    _refused("PooledEndpoint.deployment.canary_size", lambda: _deploy(canary, initial=4, scale=(3, 8)))
    linear = DeploymentPolicy.linear(step_size=CapacitySize.instances(2), wait_interval=wait)
    _deploy(linear, initial=4, scale=(4, 20))  # 10 % of 20, 50 % of 4
    _refused("PooledEndpoint.deployment.step_size", lambda: _deploy(linear, initial=4, scale=(4, 21)))
    rolling = DeploymentPolicy.rolling(batch_size=CapacitySize.instances(1), bake_time=wait)
    _deploy(rolling, initial=2, scale=(2, 20))  # 5 % of 20
    message = _refused("PooledEndpoint.deployment.batch_size", lambda: _deploy(rolling, initial=2, scale=(2, 21)))
    assert "(2-21 instances)" in message
    # percentages are SageMaker's to apply; tokens are left to deploy time
    _deploy(DeploymentPolicy.canary(canary_size=CapacitySize.percent(50), wait_interval=wait), initial=1)
    stack = new_stack()
    count = cdk.CfnParameter(stack, "Count", type="Number").value_as_number
    PooledEndpoint(stack, "E", model=PoolModel.from_model_name(stack, "M", "llm"), pools=[InstancePool(instance_type="ml.g6e.12xlarge")],
                   initial_instance_count=count, deployment=canary)


def test_the_timeout_covers_every_wait_and_the_provisioning() -> None:
    def rolling(timeout_s: int) -> DeploymentPolicy:
        return DeploymentPolicy.rolling(batch_size=CapacitySize.percent(25), bake_time=Duration.minutes(10), max_execution_timeout=Duration.seconds(timeout_s))

    # 8 instances in batches of 2: 4 x (10 min bake + 20 min provisioning) = 7200 s
    _deploy(rolling(7201), initial=8)
    message = _refused("PooledEndpoint.deployment.max_execution_timeout", lambda: _deploy(rolling(7200), initial=8))
    assert "7200 seconds" in message and "for each batch" in message
    # the largest fleet counts: batches of 2 instances, 4 of them for 8, 6 for 12
    by_two = DeploymentPolicy.rolling(batch_size=CapacitySize.instances(2), bake_time=Duration.minutes(10), max_execution_timeout=Duration.seconds(7201))
    _deploy(by_two, initial=8)
    _refused("PooledEndpoint.deployment.max_execution_timeout", lambda: _deploy(by_two, initial=8, scale=(8, 12)))
    # blue/green provisions once: canary 2 x 10 min + 20 min = 2400 s
    canary = DeploymentPolicy.canary(canary_size=CapacitySize.percent(25), wait_interval=Duration.minutes(10), max_execution_timeout=Duration.seconds(2400))
    assert "for the new fleet" in _refused("PooledEndpoint.deployment.max_execution_timeout", lambda: _deploy(canary, initial=8))
    _deploy(canary, initial=8, provision=Duration.minutes(19))


def test_an_inf1_pool_takes_no_deployment_policy() -> None:
    policy = DeploymentPolicy.all_at_once(wait_interval=Duration.minutes(5))
    message = _refused("PooledEndpoint.pools[1].instance_type", lambda: _deploy(policy, pools=("ml.inf2.xlarge", "ml.inf1.xlarge")))
    assert "guardrails" in message
    stack = new_stack()
    PooledEndpoint(stack, "E", model=PoolModel.from_model_name(stack, "M", "llm"), pools=[InstancePool(instance_type="ml.inf1.xlarge")])


def test_the_fleet_checks_at_their_bounds_and_with_tokens() -> None:
    wait = Duration.minutes(5)
    # A linear step over half the fleet, by one instance.
    linear = DeploymentPolicy.linear(step_size=CapacitySize.instances(51), wait_interval=wait)
    _refused("PooledEndpoint.deployment.step_size", lambda: _deploy(linear, initial=100))
    _deploy(DeploymentPolicy.linear(step_size=CapacitySize.instances(50), wait_interval=wait), initial=100)
    # A rolling batch just under 5 % of the largest fleet: 20 of 401 is 4.99 %.
    rolling = DeploymentPolicy.rolling(batch_size=CapacitySize.instances(20), bake_time=wait)
    _refused("PooledEndpoint.deployment.batch_size", lambda: _deploy(rolling, initial=40, scale=(40, 401)))
    _deploy(rolling, initial=40, scale=(40, 400))
    # Tokens are left to deploy time: a step, a timeout.
    stack = new_stack()
    number = cdk.CfnParameter(stack, "N", type="Number").value_as_number
    model = PoolModel.from_model_name(stack, "M", "llm")
    pools = [InstancePool(instance_type="ml.g6e.12xlarge")]
    PooledEndpoint(stack, "A", model=model, pools=pools, initial_instance_count=4,
                   deployment=DeploymentPolicy.rolling(batch_size=CapacitySize(type="INSTANCE_COUNT", value=number), bake_time=wait))
    PooledEndpoint(stack, "B", model=model, pools=pools, initial_instance_count=4,
                   deployment=DeploymentPolicy.rolling(batch_size=CapacitySize.percent(25), bake_time=wait,
                                                       max_execution_timeout=Duration.seconds(number)))
    assert DeploymentPolicy.rolling(batch_size=CapacitySize.percent(25), bake_time=Duration.seconds(number)).duration_seconds(4, 1200) is None


def test_rolling_batches_in_percent_are_whole_instances_rounded_up() -> None:
    five = DeploymentPolicy.rolling(batch_size=CapacitySize.percent(5), bake_time=Duration.seconds(60))
    # 5 % of 101 is 5.05: batches of 6, 17 of them
    assert five.waits_seconds(101) == 17 * 60
    assert five.waits_seconds(100) == 20 * 60


def test_the_messages_name_the_default_policy_and_the_provisioning() -> None:
    message = _refused("PooledEndpoint.pools[0].instance_type", lambda: _deploy(DeploymentPolicy(), pools=("ml.inf1.xlarge",)))
    assert "with deployment=SageMaker's default" in message
    canary = DeploymentPolicy.canary(canary_size=CapacitySize.percent(25), wait_interval=Duration.minutes(10), max_execution_timeout=Duration.seconds(2400))
    message = _refused("PooledEndpoint.deployment.max_execution_timeout", lambda: _deploy(canary, initial=8))
    assert message.endswith("plus the provisioning timeout of 1200 s for the new fleet); or no timeout")


def test_a_rollback_batch_above_the_whole_fleet_is_refused() -> None:
    with pytest.raises(PoolConfigError) as err:
        DeploymentPolicy.rolling(batch_size=CapacitySize.percent(10), bake_time=MINUTE,
                                 rollback_batch_size=CapacitySize(type="CAPACITY_PERCENT", value=101))
    assert err.value.field == "DeploymentPolicy.rolling.rollback_batch_size"
