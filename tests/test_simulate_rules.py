"""``sagemaker-pools simulate``: one rule at a time, each against the AWS text it rests on.

``docs/simulate.md`` quotes every source. Each test here fails when its rule is planted wrong
(the mutation audit's survivors among them).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sagemaker_pools.ops.simulate import Scenario, read_fleet, simulate

G6E = "ml.g6e.48xlarge"


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
