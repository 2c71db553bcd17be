"""``sagemaker-pools simulate``: one rule at a time, each against the AWS text it rests on.

``docs/simulate.md`` quotes every source. Each test here fails when its rule is planted wrong
(the mutation audit's survivors among them).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

from sagemaker_pools.ops.simulate import Scenario, read_fleet, simulate, summarize
from sagemaker_pools.ops.simulate.report import render_text
from sagemaker_pools.ops.simulate.autoscaling import ROLLBACK
from sagemaker_pools.ops.simulate.readings import IDLE_COPIES_MISSING, IDLE_RELEASE_AFTER_COOLDOWN, LAUNCH_POST

ROOT = Path(__file__).resolve().parents[1]
G6E, G6, P4D = "ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge"


def _without_cooldowns(template: dict[str, Any]) -> dict[str, Any]:
    """``template`` with every scaling policy's cooldowns left to Application Auto Scaling's defaults."""
    changed = copy.deepcopy(template)
    for resource in changed["Resources"].values():
        props = resource.get("Properties", {})
        for key in ("TargetTrackingScalingPolicyConfiguration", "StepScalingPolicyConfiguration"):
            for field in ("ScaleOutCooldown", "ScaleInCooldown", "Cooldown"):
                props.get(key, {}).pop(field, None)
    return changed


@pytest.mark.parametrize("stack", ["RealtimePooledLlm", "InferenceComponentPools", "AsyncScaleToZero"])
def test_cooldowns_default_to_300_seconds_for_variants_and_inference_components(example_templates: dict[str, Any], stack: str) -> None:
    """User guide, "Define cooldown periods": 300 for SageMaker AI endpoint variants and inference components."""
    scaling = read_fleet(_without_cooldowns(example_templates[stack])).scaling
    assert scaling.target_tracking or scaling.steps
    assert {(p.scale_out_cooldown_s, p.scale_in_cooldown_s) for p in scaling.target_tracking} <= {(300, 300)}
    assert {p.cooldown_s for p in scaling.steps} <= {300}


# --- Application Auto Scaling, on hand-made metrics ----------------------------------------------


def _metric_store(series: dict[str, list[float]]) -> tuple[Any, dict[str, list[dict[str, Any]]]]:
    """A metric store with one metric per name (a value a minute), and each metric's query."""
    from sagemaker_pools.ops.simulate.cloudwatch import MetricStore, Stats

    store = MetricStore()
    queries = {}
    for name, values in series.items():
        for minute, value in enumerate(values):
            store.publish(minute, "NS", name, {"D": "x"}, Stats.of(value))
        metric = {"Namespace": "NS", "MetricName": name, "Dimensions": [{"Name": "D", "Value": "x"}]}
        queries[name] = [{"Id": "m1", "ReturnData": True, "MetricStat": {"Metric": metric, "Stat": "Maximum"}}]
    return store, queries


def _tracking(name: str, queries: list[dict[str, Any]], *, target: float = 1.0, out_s: int = 600, in_s: int = 0, disable_in: bool = False) -> Any:
    from sagemaker_pools.ops.simulate.template import TargetTrackingSpec

    return TargetTrackingSpec(name, target, tuple(queries), in_s, out_s, disable_in)


def _scaler(policies: list[Any], store: Any, initial: int) -> Any:
    from sagemaker_pools.ops.simulate.autoscaling import Autoscaler
    from sagemaker_pools.ops.simulate.template import ScalingSpec

    spec = ScalingSpec("Target", "sagemaker:variant:DesiredInstanceCount", 1, 1000, tuple(policies), ())
    return Autoscaler(spec, {}, {}, store, initial)


def _desired(scaler: Any, minutes: int) -> list[int]:
    out = []
    for minute in range(minutes):
        scaler.step(minute)
        out.append(scaler.desired)
    return out


def test_a_larger_scale_out_in_cooldown_counts_from_the_capacity_before_the_first() -> None:
    """"While the scale-out cooldown period is in effect, the capacity added by the initiating scale-out
    activity is calculated as part of the desired capacity for the next scale-out activity": the base
    stays the capacity before the initiating scale-out (6), however often the policy scales out again."""
    store, queries = _metric_store({"M": [1.5] * 3 + [3.0] * 9})
    scaler = _scaler([_tracking("TT", queries["M"], out_s=600, disable_in=True)], store, initial=6)
    # 3 datapoints above 1.0: 6 x 1.5 = 9; the metric doubles within the cooldown: 6 x 3.0 = 18, and no further.
    # Re-taking the base at the second scale-out would run away: 9 x 3 = 27, 18 x 3 = 54, ...
    assert _desired(scaler, 12) == [6, 6, 9] + [18] * 9


def test_target_tracking_scales_in_only_when_every_policy_wants_to() -> None:
    """"... will scale in only if all of the target tracking policies (with the scale-in portion enabled) are ready to scale in.\""""
    store, queries = _metric_store({"Idle": [0.1] * 30, "Busy": [1.0] * 30, "AlsoIdle": [0.2] * 30})
    idle = _tracking("Idle", queries["Idle"], in_s=3600)
    # At its target: neither above it (no scale-out) nor 10 % below (no scale-in).
    busy = _tracking("Busy", queries["Busy"], in_s=3600)
    assert _desired(_scaler([idle, busy], store, initial=10), 30) == [10] * 30
    # The same idle policy with another that agrees: scale in after 15 datapoints to the
    # larger of ceil(10 x 0.1) and ceil(10 x 0.2) (the largest capacity wins), then the cooldown holds it.
    also_idle = _tracking("AlsoIdle", queries["AlsoIdle"], in_s=3600)
    assert _desired(_scaler([idle, also_idle], store, initial=10), 30) == [10] * 14 + [2] * 16


# --- inputs --------------------------------------------------------------------------------------


def test_max_concurrency_given_by_the_user_wins_over_the_template(example_templates: dict[str, Any]) -> None:
    spec = read_fleet(example_templates["RealtimePooledLlm"])
    assert spec.max_concurrency[G6E] == 32  # what the weighted policy divides g6e's concurrency by
    assert spec.initial_instance_count == 2
    load = [40.0] * 3
    # Two g6e instances at 32 each serve 40; at 16 each (--max-concurrency) they serve 32 and 8 queue.
    assert [r.queued for r in simulate(spec, Scenario(load=load)).rows] == [0.0] * 3
    assert [r.queued for r in simulate(spec, Scenario(load=load, max_concurrency={G6E: 16})).rows] == [8.0] * 3


# --- instance pools: the provisioning timeout, and what happens when it passes -------------------


@pytest.mark.parametrize(("reading", "fails_after"), [("reference", 20), (LAUNCH_POST, 60)])
def test_an_operation_that_runs_out_of_provisioning_time_rolls_back(example_templates: dict[str, Any], reading: str, fails_after: int) -> None:
    """Developer guide: the timeout is "the total time SageMaker AI spends attempting to provision
    instances across all pools before the operation fails" (20 minutes in the example); the launch
    post spends it on each pool in turn (3 pools: 60). DescribeEndpoint: "RollingBack: Endpoint fails
    to scale up or down ... and is in the process of rolling back to its previous configuration."
    Then no pool is tried again (no wrap-around): g6e has capacity again from minute 70, unused."""
    spec = read_fleet(example_templates["RealtimePooledLlm"])
    assert spec.provision_timeout_s == 20 * 60 and len(spec.pools) == 3
    load = [20.0] * 30 + [90.0] * 150
    outages = {G6E: [(25, 70)], G6: [(25, 180)], P4D: [(25, 180)]}
    result = simulate(spec, Scenario(load=load, outages=outages, readings=frozenset({reading} - {"reference"})))
    first = result.activities[0]
    assert (first.before, first.after) == (2, 5)  # ceil(2 x 90 / 2 / 32 / 0.7)
    failed_at = first.minute + 1 + fails_after  # the request goes out the minute after the decision
    rolled_back = [r.minute for r in result.rows if r.status == "RollingBack"]
    assert rolled_back[0] == failed_at
    assert {r.status for r in result.rows[first.minute + 1 : failed_at]} == {"Updating"}
    assert [(a.minute, a.policy, a.before, a.after) for a in result.activities[1:3]] == [
        (failed_at, ROLLBACK, 5, 2),
        (failed_at + 1, first.policy, 2, 5),  # the policy's alarm is still in ALARM: it asks again
    ]
    # Nothing launched while no pool had capacity; the rollback leaves nothing pending.
    assert all(sum(r.instances.values()) == 2 for r in result.rows[: failed_at + 1])
    assert sum(result.rows[failed_at].pending.values()) == 0
    assert summarize(result)["rollbacks"] == len(rolled_back)


@pytest.mark.parametrize("reading", ["reference", LAUNCH_POST])
def test_every_pool_out_for_three_hours_adds_no_unit_and_rolls_back_each_timeout(example_templates: dict[str, Any], reading: str) -> None:
    spec = read_fleet(example_templates["RealtimePooledLlm"])
    load = [20.0] * 30 + [90.0] * 230
    outages = {t: [(20, 200)] for t in spec.types}
    readings = frozenset({reading} - {"reference"})
    rows = simulate(spec, Scenario(load=load, outages=outages, readings=readings)).rows
    assert all(sum(r.instances.values()) == 2 for r in rows[:200])
    per_operation = spec.provision_timeout_s // 60 * (len(spec.pools) if readings else 1)
    rollbacks = [r.minute for r in rows[:200] if r.status == "RollingBack"]
    # Each operation fails after its timeout; the next starts two minutes later (rolled back, then asked again).
    assert rollbacks and all(b - a == per_operation + 2 for a, b in zip(rollbacks, rollbacks[1:]))
    assert sum(rows[-1].instances.values()) > 2  # and the fleet grows once capacity returns


# --- asynchronous endpoints: scale-out from zero by target tracking -------------------------------


def _only_target_tracking(template: dict[str, Any]) -> dict[str, Any]:
    """The async example as ``auto_scale_on_backlog(scale_from_zero=False)`` renders it: no wake-up
    step, and target tracking on the plain backlog per instance (with the step, it reads nothing
    while the backlog has no instance)."""
    changed = copy.deepcopy(template)
    changed["Resources"] = {
        k: v
        for k, v in changed["Resources"].items()
        if not (v["Type"] == "AWS::ApplicationAutoScaling::ScalingPolicy" and v["Properties"].get("PolicyType") == "StepScaling")
    }
    for resource in changed["Resources"].values():
        tracking = resource["Properties"].get("TargetTrackingScalingPolicyConfiguration")
        if tracking:
            (backlog,) = [q for q in tracking["CustomizedMetricSpecification"]["Metrics"] if q["Id"] == "backlog"]
            tracking["CustomizedMetricSpecification"]["Metrics"] = [{**backlog, "ReturnData": True}]
    return changed


@pytest.mark.parametrize(("backlog", "scale_out"), [(4.0, None), (5.0, None), (6.0, 2), (12.0, 3)])
def test_async_target_tracking_leaves_zero_once_the_backlog_exceeds_its_target(
    example_templates: dict[str, Any], backlog: float, scale_out: int | None
) -> None:
    """Developer guide, "Autoscale an asynchronous endpoint": without the optional scale-from-zero
    policy, "your endpoint only initiates scaling up from zero after the number of backlog requests
    exceeds the target tracking value" (5 here): the backlog per instance reads the whole backlog at
    zero instances, and target tracking scales out as from one instance, ceil(backlog / 5)."""
    spec = read_fleet(_only_target_tracking(example_templates["AsyncScaleToZero"]))
    assert not spec.scaling.steps and spec.scaling.target_tracking[0].target == 5
    result = simulate(spec, Scenario(load=[0.0] * 60 + [backlog] * 60))
    assert result.rows[59].desired_capacity == 0  # went to zero on real zeros
    outs = [(a.before, a.after) for a in result.activities if a.after > a.before]
    assert outs == ([] if scale_out is None else [(0, scale_out)])


# --- inference components: idle copies, managed instance scale-in ----------------------------------


def _copy_policy_without_presence(template: dict[str, Any]) -> dict[str, Any]:
    """The weighted copy policy as it was: ``MAX([u1, u2])``, with no copy-presence condition."""
    changed = copy.deepcopy(template)
    for resource in changed["Resources"].values():
        tracking = resource["Properties"].get("TargetTrackingScalingPolicyConfiguration")
        if tracking:
            queries = tracking["CustomizedMetricSpecification"]["Metrics"]
            kept = [q for q in queries if q["Id"][0] in "cu"]
            tracking["CustomizedMetricSpecification"]["Metrics"] = [*kept, {"Expression": "MAX([u1, u2])", "Id": "result", "ReturnData": True}]
    return changed


def test_the_weighted_copy_policy_scales_an_idle_component_to_zero_whether_or_not_idle_copies_publish_zeros(
    example_templates: dict[str, Any],
) -> None:
    """Undocumented either way, so a reading. With zeros, 15 datapoints below 90 % of the target scale
    the copies in to the minimum (0: ceil(4 x 0 / 0.7)). With no datapoint, a policy on the plain
    concurrency has INSUFFICIENT_DATA and "A target tracking scaling policy does not scale in" then:
    four copies (and four p5 instances) for ever. The library's signal reads 0 while copies report
    their presence (CPUUtilizationNormalized samples), so it scales in under both readings."""
    template = example_templates["InferenceComponentPools"]
    load = [85.0] * 30 + [0.0] * 90
    for readings in (frozenset(), frozenset({IDLE_COPIES_MISSING})):
        result = simulate(read_fleet(template), Scenario(load=load, readings=readings))
        assert [(a.minute, a.before, a.after) for a in result.activities] == [(30 + 14, 4, 0)], readings
    # The same policy without the presence condition: the reading decides.
    plain = read_fleet(_copy_policy_without_presence(template))
    assert [(a.before, a.after) for a in simulate(plain, Scenario(load=load)).activities] == [(4, 0)]
    missing = simulate(plain, Scenario(load=load, readings=frozenset({IDLE_COPIES_MISSING})))
    assert missing.activities == [] and missing.rows[-1].signal is None
    assert sum(missing.rows[-1].copies.values()) == 4


def _with_scale_in_policy(template: dict[str, Any], policy: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(template)
    for resource in changed["Resources"].values():
        if resource["Type"] == "AWS::SageMaker::EndpointConfig":
            resource["Properties"]["ProductionVariants"][0]["ManagedInstanceScaling"]["ScaleInPolicy"] = policy
    return changed


@pytest.mark.parametrize(
    ("policy", "readings", "instance_counts"),
    [
        # No ScaleInPolicy, or IDLE_RELEASE: "Releases instances that have no hosted inference
        # component copies", at once (the cooldown is documented for consolidation only).
        (None, frozenset(), [(0, 4), (45, 0)]),
        ({"Strategy": "IDLE_RELEASE"}, frozenset(), [(0, 4), (45, 0)]),
        # The reading that IDLE_RELEASE waits CooldownInMinutes (20) after the last endpoint operation (45).
        (None, frozenset({IDLE_RELEASE_AFTER_COOLDOWN}), [(0, 4), (65, 0)]),
        # CONSOLIDATION: after the cooldown, MaximumStepSize (1) instance at a time, each release an
        # endpoint operation that restarts the cooldown.
        ({"Strategy": "CONSOLIDATION"}, frozenset(), [(0, 4), (65, 3), (85, 2), (105, 1), (125, 0)]),
        ({"Strategy": "CONSOLIDATION", "CooldownInMinutes": 5, "MaximumStepSize": 2}, frozenset(), [(0, 4), (50, 2), (55, 0)]),
    ],
)
def test_managed_instance_scaling_releases_instances_as_its_scale_in_policy_says(
    example_templates: dict[str, Any], policy: dict[str, Any] | None, readings: frozenset[str], instance_counts: list[tuple[int, int]]
) -> None:
    template = example_templates["InferenceComponentPools"]
    spec = read_fleet(template if policy is None else _with_scale_in_policy(template, policy))
    # One copy per p5 instance (8 accelerators each); the copies scale in 4 -> 0 at minute 44.
    result = simulate(spec, Scenario(load=[85.0] * 30 + [0.0] * 110, readings=readings))
    counts = [sum(r.instances.values()) for r in result.rows]
    assert [(m, n) for m, n in enumerate(counts) if m == 0 or n != counts[m - 1]] == instance_counts


@pytest.mark.parametrize(("step_size", "counts"), [(1, [3] * 5 + [2] * 7), (2, [3] * 5 + [2] * 7)])
def test_consolidation_packs_copies_onto_fewer_instances(step_size: int, counts: list[int]) -> None:
    from sagemaker_pools.ops.simulate.cloudwatch import MetricStore
    from sagemaker_pools.ops.simulate.fleet import Fleet, Unit
    from sagemaker_pools.ops.simulate.template import ComponentSpec, ManagedScaleIn, Pool, ScalingSpec
    from sagemaker_pools.ops.simulate.template import FleetSpec

    spec = FleetSpec(
        endpoint_id="E", endpoint_name="e", variant_name="v", pools=(Pool(G6E, 1),), initial_instance_count=0,
        provision_timeout_s=1200, managed_scaling=(0, 4), async_max_concurrent=None,
        component=ComponentSpec("C", "c", {G6E: 2}, 0),
        scaling=ScalingSpec("T", "sagemaker:inference-component:DesiredCopyCount", 0, 8, (), ()), alarms=(),
        managed_scale_in=ManagedScaleIn("CONSOLIDATION", 5, step_size),
    )
    fleet = Fleet(spec, start_up={G6E: 10}, copy_start_up=5, max_concurrency={}, outages={}, latency_s={})
    # Three instances with room for two copies each, one copy on each: two of them can go.
    fleet.instances = [Unit(G6E, 1, 0, n) for n in (1, 2, 3)]
    fleet.copies = [Unit(G6E, 1, 0, 10 + i, host) for i, host in enumerate(fleet.instances)]
    store = MetricStore()
    assert [len(fleet.step(m, 3, 0.0, store).in_service and fleet.instances) for m in range(12)] == counts
    # After the 5-minute cooldown, the lowest-priority (last) instance's copy moves to the first with
    # room; then no instance's copies fit elsewhere (2 slots each, 3 copies): two instances stay,
    # whatever MaximumStepSize allows, and every copy is on one of them.
    assert len(fleet.copies) == 3 and all(c.host in fleet.instances for c in fleet.copies)
    assert sorted(len(v) for v in fleet._hosted().values()) == [1, 2]


# --- the scenario matrix -------------------------------------------------------------------------


def test_the_scenario_matrix_runs_every_stack_under_every_reading(example_outdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``tools/simulate_readings.py``: the figures docs/simulate.md quotes, and two properties of the default reading."""
    sys.path.insert(0, str(ROOT / "tools"))
    from simulate_readings import main

    from sagemaker_pools.ops.simulate.readings import READINGS

    assert main([str(example_outdir)]) == 0
    header, _, *lines = capsys.readouterr().out.splitlines()
    columns = [c.strip() for c in header.strip("|").split("|")]
    rows = [dict(zip(columns, (c.strip() for c in line.strip("|").split("|")))) for line in lines]
    assert {r["stack"] for r in rows} == {"RealtimePooledLlm", "InferenceComponentPools", "AsyncScaleToZero"}
    assert {r["reading"] for r in rows} == {"default", *READINGS, "cooldown-from-request + updates-overlap"}
    default = [r for r in rows if r["reading"] == "default"]
    # No capacity change while updating; no unit into service while every pool is out.
    assert {r["changes while updating"] for r in default} == {"0"}
    assert {r["added while all out"] for r in rows if r["scenario"] == "all pools out 3 h"} == {"0"}
    # One unit per cold start under every reading (the wake-ups set an exact capacity), and a second
    # burst 20 minutes after zero wakes like the first, as fast.
    wakes = [r for r in rows if r["scenario"] in ("wake-up", "second burst +20 min") and r["asked per cold start"] != "-"]
    woke = {(r["stack"], r["reading"]) for r in wakes}
    every_reading = {"default", *READINGS, "cooldown-from-request + updates-overlap"}
    # Both go to zero and wake under every reading (idle copies that publish nothing included).
    assert woke == {(stack, reading) for stack in ("AsyncScaleToZero", "InferenceComponentPools") for reading in every_reading}
    assert {r["asked per cold start"] for r in wakes} == {"1"}
    for r in wakes:
        if r["scenario"] == "second burst +20 min":
            first, second = r["first unit after (min)"].split(",")
            assert first == second, r


def test_bad_readings_and_scale_in_strategies_are_refused_by_name(example_templates: dict[str, Any]) -> None:
    from sagemaker_pools.ops.errors import OpsError

    spec = read_fleet(example_templates["InferenceComponentPools"])
    with pytest.raises(OpsError) as error:
        simulate(spec, Scenario(load=[1.0], readings=frozenset({"optimistic"})))
    assert "optimistic" in str(error.value) and LAUNCH_POST in str(error.value)
    with pytest.raises(OpsError) as error:
        read_fleet(_with_scale_in_policy(example_templates["InferenceComponentPools"], {"Strategy": "EAGER"}))
    assert "ScaleInPolicy.Strategy 'EAGER'" in str(error.value) and "IDLE_RELEASE, CONSOLIDATION" in str(error.value)


# --- only documented metrics are published ---------------------------------------------------------


def test_the_launch_posts_instance_count_is_published_only_under_its_reading(example_templates: dict[str, Any]) -> None:
    """A template that reads InstanceCount watches nothing under the AWS reference, and the report says so."""
    template = copy.deepcopy(example_templates["RealtimePooledLlm"])
    fallback = next(k for k in template["Resources"] if k.startswith("AlarmsFallbackInUse"))
    for query in template["Resources"][fallback]["Properties"]["Metrics"]:
        stat = query.get("MetricStat")
        if stat:
            stat["Metric"].update(Namespace="AWS/SageMaker", MetricName="InstanceCount")
            stat["Stat"] = "Maximum"
            stat.pop("Unit", None)
    fleet = read_fleet(template)
    load = [40.0] * 240
    outage = {"ml.g6e.48xlarge": [(0, 240)]}
    default = simulate(fleet, Scenario(load=load, outages=outage))
    assert default.unpublished[fallback] == ["AWS/SageMaker InstanceCount"]
    assert all(fallback not in r.alarms for r in default.rows)  # fallback instances ran, and it never knew
    assert "read nothing: AWS/SageMaker InstanceCount" in render_text(default)
    launch_post = simulate(fleet, Scenario(load=load, outages=outage, readings=frozenset({"instance-count-metric"})))
    assert fallback not in launch_post.unpublished
    assert any(fallback in r.alarms for r in launch_post.rows)
    # The library's own alarm reads a documented metric: it fires by default.
    assert any(fallback in r.alarms for r in simulate(read_fleet(example_templates["RealtimePooledLlm"]), Scenario(load=load, outages=outage)).rows)
