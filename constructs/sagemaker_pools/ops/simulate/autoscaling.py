"""Application Auto Scaling as the simulation replays it: one scalable target, its target-tracking and step policies.

Target tracking (the alarms Application Auto Scaling creates for it): the metric above the
target for 3 one-minute datapoints scales out to ``ceil(current x metric / target)``; below 90 %
of the target for 15 datapoints scales in (to the same formula); no scale-in while the metric
has no data. Several target-tracking policies: scale out if any says so, scale in only if all
(with scale-in enabled) do; the largest capacity wins. Step policies act when their alarm is in
ALARM (CloudWatch re-invokes the action every minute) with their adjustment type, steps,
``MinAdjustmentMagnitude`` and cooldown. Cooldowns start when the change has completed (the
endpoint back in service); during a scale-out cooldown the capacity added by the initiating
scale-out counts as part of the capacity, so only a larger scale-out goes through; scale-in waits
for its cooldown; a scale-out ends a scale-in cooldown. No change while the endpoint is updating
(it refuses one). A failed change (rolled back) starts no cooldown. From zero, target tracking
scales out as if from one unit. Capacity stays within min / max. Readings that replace some of
these rules: :mod:`.readings`. Sources: ``docs/simulate.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from collections.abc import Iterator

from .cloudwatch import ALARM, Alarm, MetricStore
from .readings import COOLDOWN_FROM_REQUEST, UPDATES_OVERLAP
from .template import ScalingSpec, StepPolicySpec, TargetTrackingSpec

__all__ = ["Autoscaler", "Activity", "HIGH_DATAPOINTS", "LOW_DATAPOINTS", "SCALE_IN_FRACTION", "ROLLBACK"]

#: Target tracking's scale-out alarm: this many one-minute datapoints above the target.
HIGH_DATAPOINTS = 3
#: Target tracking's scale-in alarm: this many one-minute datapoints below SCALE_IN_FRACTION x target.
LOW_DATAPOINTS = 15
SCALE_IN_FRACTION = 0.9
#: The ``policy`` of an :class:`Activity` that a failed operation's rollback made.
ROLLBACK = "(rollback)"


@dataclass
class Activity:
    """One change of the desired capacity."""

    minute: int
    policy: str
    before: int
    after: int


@dataclass
class _Cooldowns:
    out_until: int = -1
    out_base: int = 0
    in_until: int = -1


@dataclass
class _Tracking:
    spec: TargetTrackingSpec
    high: Alarm
    low: Alarm
    cooldown: _Cooldowns = field(default_factory=_Cooldowns)


class Autoscaler:
    """The scalable target's desired capacity, minute by minute.

    Args:
        spec: the scalable target and its policies.
        alarms: every simulated alarm by logical id (step policies act through them).
        action_alarms: ``{alarm logical id: logical ids of the policies it invokes}``.
        store: the metric data.
        initial: the desired capacity at minute 0.
        readings: the named readings in force (:mod:`.readings`).
    """

    def __init__(
        self,
        spec: ScalingSpec,
        alarms: Mapping[str, Alarm],
        action_alarms: Mapping[str, tuple[str, ...]],
        store: MetricStore,
        initial: int,
        readings: frozenset[str] = frozenset(),
    ) -> None:
        self.spec = spec
        self.desired = initial
        self.activities: list[Activity] = []
        self._refuse_while_updating = UPDATES_OVERLAP not in readings
        self._cooldown_from_request = COOLDOWN_FROM_REQUEST in readings
        # A change whose cooldown waits for its completion: (policy, scale-out?, capacity before).
        self._pending: tuple[str, bool, int] | None = None
        self._tracking: list[_Tracking] = []
        for policy in spec.target_tracking:
            common = {"queries": policy.queries, "period_minutes": 1, "treat_missing_data": "missing", "store": store}
            high = Alarm(
                name=f"{policy.logical_id} (high)", evaluation_periods=HIGH_DATAPOINTS, datapoints_to_alarm=HIGH_DATAPOINTS,
                threshold=policy.target, comparison="GreaterThanThreshold", **common,  # type: ignore[arg-type]
            )
            low = Alarm(
                name=f"{policy.logical_id} (low)", evaluation_periods=LOW_DATAPOINTS, datapoints_to_alarm=LOW_DATAPOINTS,
                threshold=SCALE_IN_FRACTION * policy.target, comparison="LessThanThreshold", **common,  # type: ignore[arg-type]
            )
            self._tracking.append(_Tracking(policy, high, low))
        self._steps: list[tuple[StepPolicySpec, list[Alarm], _Cooldowns]] = []
        for step in spec.steps:
            triggers = [alarms[a] for a, actions in action_alarms.items() if step.logical_id in actions and a in alarms]
            self._steps.append((step, triggers, _Cooldowns()))

    @property
    def signal_target(self) -> float | None:
        """The target of the first target-tracking policy (the timeline's signal)."""
        return self.spec.target_tracking[0].target if self.spec.target_tracking else None

    def signal(self, minute: int) -> float | None:
        """The first target-tracking policy's metric at ``minute``."""
        if not self._tracking:
            return None
        return self._tracking[0].high.datapoint(minute)

    def _clamp(self, value: int) -> int:
        return max(self.spec.min_capacity, min(self.spec.max_capacity, value))

    def step(self, minute: int, *, updating: bool = False) -> None:
        """Evaluate every policy at the end of ``minute`` and set the new desired capacity.

        ``updating``: the endpoint has a capacity change in progress this minute; it refuses
        another, and the change's cooldown starts only when it has completed.
        """
        if self._pending is not None and not updating:
            self._begin_cooldowns(minute, *self._pending)
            self._pending = None
        current = self.desired
        outs: list[tuple[int, str]] = []
        ins: list[tuple[int, str]] = []
        tracking_in: list[tuple[int, str]] = []
        all_tracking_in = True
        for tracking in self._tracking:
            policy, cool = tracking.spec, tracking.cooldown
            high = tracking.high.evaluate(minute)
            low = tracking.low.evaluate(minute)
            value = tracking.high.datapoint(minute)
            if high == ALARM and value is not None:
                base = cool.out_base if minute < cool.out_until else current
                # From zero, as if from one unit: "your endpoint only initiates scaling up from
                # zero after the number of backlog requests exceeds the target tracking value".
                wanted = self._clamp(math.ceil(max(base, 1) * value / policy.target - 1e-9))
                if wanted > current:
                    outs.append((wanted, policy.logical_id))
            if policy.disable_scale_in:
                continue
            if low == ALARM and value is not None and minute >= cool.in_until:
                wanted = self._clamp(math.ceil(current * value / policy.target - 1e-9))
                if wanted < current:
                    tracking_in.append((wanted, policy.logical_id))
                    continue
            all_tracking_in = False
        if all_tracking_in and tracking_in:
            ins.append(max(tracking_in))
        for step, triggers, cool in self._steps:
            for alarm in triggers:
                if alarm.evaluate(minute) != ALARM:
                    continue
                wanted_step = self._step_capacity(step, alarm, minute, cool, current)
                if wanted_step is None:
                    continue
                if wanted_step > current:
                    outs.append((wanted_step, step.logical_id))
                elif wanted_step < current and minute >= cool.in_until:
                    ins.append((wanted_step, step.logical_id))
        if updating and self._refuse_while_updating:
            return  # "ValidationException: Cannot update in-progress endpoint": the activity fails
        if outs:
            new, who = max(outs)
            self._apply(minute, new, who, scale_out=True)
        elif ins:
            new, who = max(ins)
            self._apply(minute, new, who, scale_out=False)

    def roll_back(self, minute: int, capacity: int) -> None:
        """The change in progress failed and the endpoint rolled back to ``capacity``: no cooldown starts."""
        if capacity != self.desired:
            self.activities.append(Activity(minute, ROLLBACK, self.desired, capacity))
            self.desired = capacity
        self._pending = None

    def _apply(self, minute: int, new: int, who: str, *, scale_out: bool) -> None:
        new = self._clamp(new)
        if new == self.desired:
            return
        self.activities.append(Activity(minute, who, self.desired, new))
        before, self.desired = self.desired, new
        if scale_out:
            for _, _, _, cool in self._cooldowns():
                cool.in_until = -1  # "the scale-in cooldown period stops and doesn't complete"
        if self._cooldown_from_request:
            self._begin_cooldowns(minute, who, scale_out, before)
        else:
            self._pending = (who, scale_out, before)

    def _cooldowns(self) -> Iterator[tuple[str, int, int, _Cooldowns]]:
        """Every policy: logical id, scale-out and scale-in cooldown in seconds, its cooldown state."""
        for tracking in self._tracking:
            spec = tracking.spec
            yield spec.logical_id, spec.scale_out_cooldown_s, spec.scale_in_cooldown_s, tracking.cooldown
        for step, _, cool in self._steps:
            yield step.logical_id, step.cooldown_s, step.cooldown_s, cool

    def _begin_cooldowns(self, minute: int, who: str, scale_out: bool, before: int) -> None:
        """Start ``who``'s cooldown at ``minute``; a scale-out's counts from ``before``, its capacity before the first."""
        for policy, out_s, in_s, cool in self._cooldowns():
            if policy != who:
                continue
            if not scale_out:
                cool.in_until = minute + math.ceil(in_s / 60)
                continue
            if minute >= cool.out_until:
                cool.out_base = before
            cool.out_until = minute + math.ceil(out_s / 60)

    def _step_capacity(self, step: StepPolicySpec, alarm: Alarm, minute: int, cool: _Cooldowns, current: int) -> int | None:
        values = alarm.recent(minute)
        if not values:
            return None
        if step.aggregation == "Maximum":
            value = max(values)
        elif step.aggregation == "Minimum":
            value = min(values)
        else:
            value = sum(values) / len(values)
        difference = value - alarm.threshold
        above = difference >= 0
        adjustment = None
        for lower, upper, change in step.steps:
            low_ok = lower is None or (difference >= lower if above else difference > lower)
            high_ok = upper is None or (difference < upper if above else difference <= upper)
            if low_ok and high_ok:
                adjustment = change
                break
        if adjustment is None:
            return None
        in_cooldown = minute < cool.out_until
        base = cool.out_base if in_cooldown and adjustment > 0 else current
        if step.adjustment_type == "ExactCapacity":
            return self._clamp(adjustment)
        if step.adjustment_type == "PercentChangeInCapacity":
            delta = _percent_change(base, adjustment)
            if step.min_adjustment_magnitude and abs(delta) < step.min_adjustment_magnitude:
                delta = int(math.copysign(step.min_adjustment_magnitude, adjustment))
            return self._clamp(base + delta)
        return self._clamp(base + adjustment)


def _percent_change(capacity: int, percent: int) -> int:
    """Application Auto Scaling's rounding of a percent change: >1 down, (0,1) to 1, (-1,0) to -1, <-1 up."""
    raw = capacity * percent / 100.0
    if raw > 1:
        return math.floor(raw)
    if 0 < raw <= 1:
        return 1
    if -1 <= raw < 0:
        return -1
    if raw < -1:
        return math.ceil(raw)
    return 0

