"""``PoolAlarms``: the alarms that make a mixed fleet operable.

* p99 ``ModelLatency`` per instance type (a fallback type may be slower: thresholds per type);
* 5XX error rate of the variant, in percent of invocations;
* fallback in use: instances of a pool with priority > 1 present for longer than a set time
  (the preferred hardware has had no capacity that long);
* fleet at max capacity: a composite alarm, the variant's instance count at its autoscaling
  maximum **and** the autoscaler's own signal above its target, both for a set time: more
  capacity is wanted and none may be added.

Every alarm reads metrics the AWS reference documents (``docs/aws-readings.md``): the per-type
presence of instances is the ``SampleCount`` of ``CPUUtilization`` with ``InstanceType`` (the
developer guide lists that metric with that dimension for instance pools), and the variant's
instance count is ``Invocations / InvocationsPerInstance`` (the reference defines the second as
the first normalized by the instance count). ``InstanceCount``, which only the launch post
names, is read only when asked for (``count_source=InstanceCountSource.INSTANCE_COUNT_METRIC``).

Why the at-max alarm is a composite: during a deployment the old and the new fleet both run
(blue/green: the whole fleet twice during the bakes; rolling: N + one batch for the whole
rollout; a rollback without ``RollbackMaximumBatchSize`` brings the whole old fleet back at once),
so any instance count reads at or above the maximum for up to hours without the fleet being
short of capacity. The extra instances do not raise the load on the ones that serve, so the
autoscaler's signal stays at or under its target; both together mean a fleet that needs more
than it may have, under every deployment type, without stretching the window over the longest
deployment (``docs/scaling.md``, "The at-max-capacity alarm").

The latency and error-rate alarms can roll a deployment back (:attr:`PoolAlarms.rollback_alarms`).
A rollback alarm must watch the endpoint *by a fixed name*: the endpoint's ``DeploymentConfig``
names the alarm, so an alarm whose metric used the endpoint's generated name would need the
endpoint first and the endpoint the alarm first (a CloudFormation dependency cycle). Give the
endpoint ``endpoint_name=`` (a literal or a ``CfnParameter``) and build the alarms before it on
``PooledEndpoint.from_endpoint_name(scope, id, name)`` (see ``docs/scaling.md``).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import jsii
from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sns as sns
from aws_cdk.interfaces import ResourceEnvironment
from aws_cdk.interfaces.aws_cloudwatch import AlarmReference
from constructs import Construct, IMixin, Node

from ._tree import stack_of
from ._tokens import is_unresolved, number_text
from ._validate import check_int_range, concrete_seconds, duration_facts, seconds_in_range
from .errors import PoolConfigError
from .metrics import (
    DEFAULT_INSTANCE_COUNT_SOURCE,
    DEFAULT_UTILIZATION_STRATEGY,
    InstanceCountSource,
    MetricSource,
    check_count_source,
    instance_count_stat,
    sagemaker_stat,
    variant_instances_query,
    weighted_utilization_query,
)
from .queries import Math, Query, alarm_properties, from_cloudwatch
from .pools import InstancePool

if TYPE_CHECKING:
    from .endpoint import EndpointBase

__all__ = ["PoolAlarms", "L1Alarm", "DEFAULT_SATURATION_THRESHOLD"]

#: Period of the instance-count alarms, in seconds.
_PRESENCE_SECONDS = 300
#: Period of the saturation alarms (the autoscaler's signal is a 1-minute metric).
_SIGNAL_SECONDS = 60
#: The at-max-capacity window by default.
DEFAULT_AT_MAX_CAPACITY_FOR = Duration.minutes(15)
#: The weighted-utilization threshold of the saturation alarm when no scaling policy gives a
#: target: the library's default target (``scale_on_weighted_utilization(target=0.7)``).
DEFAULT_SATURATION_THRESHOLD = 0.7
#: CloudWatch: for periods under an hour, periods x evaluation periods <= one day.
MAX_EVALUATION_SECONDS = 86400


class PoolAlarms(Construct):
    """CloudWatch alarms for one pooled endpoint variant.

    Args:
        scope: parent construct.
        id: construct id.
        endpoint: the endpoint (a ``PooledEndpoint``, or ``PooledEndpoint.from_endpoint_name(...)``
            for rollback alarms, see the module docs).
        pools: the endpoint's pools. Default: ``endpoint.pools`` (required for an imported endpoint).
        p99_latency: alarm when the p99 ``ModelLatency`` of an instance type exceeds this, in 3 of
            5 minutes. Default: 30 seconds.
        p99_latency_by_type: per-type thresholds (keys: the pools' instance types) overriding
            ``p99_latency``, e.g. for a slower fallback. Default: none.
        error_rate_percent: alarm when 5XX errors exceed this percentage of invocations in 3 of
            5 minutes (0-100, exclusive of 0). Default: 1.
        fallback_for: alarm when instances of any pool with priority > 1 have been present this
            long: a multiple of 5 minutes up to one day, or ``None`` for no such alarm. Not made
            for a single pool. Default: 1 hour.
        max_capacity: the variant's autoscaling maximum: the at-max-capacity alarm fires when
            the variant has run this many instances while the autoscaler's signal stayed above
            its target, for ``at_max_capacity_for``. Default: the maximum of
            ``endpoint.auto_scale`` if already called, else no such alarm.
        at_max_capacity_for: a multiple of 5 minutes up to one day. Default: 15 minutes.
        saturation_metric: the signal that reads above ``saturation_threshold`` while the fleet
            needs more capacity. Default: each target-tracking policy of ``endpoint.auto_scale``
            with its own target (any of them above its target counts); without one, the weighted
            utilization of ``pools`` (each with ``max_concurrency``).
        saturation_threshold: with ``saturation_metric``, or for the weighted utilization when no
            policy gives a target. Default: 0.7 (:data:`DEFAULT_SATURATION_THRESHOLD`).
        count_source: where the fallback alarm reads each type's instances, see
            :class:`~sagemaker_pools.metrics.InstanceCountSource`. Default: ``CPU_SAMPLES``, a
            documented metric; ``INSTANCE_COUNT_METRIC`` reads ``InstanceCount``, which only the
            launch post names (then the at-max count sums it per type too).
        topic: notify this SNS topic on ALARM and OK. Default: no notification.

    Attributes:
        latency_alarms: ``{instance type: alarm}``, in priority order.
        error_rate_alarm: the 5XX rate alarm.
        fallback_alarm: the fallback-in-use alarm, or ``None``.
        at_max_capacity_alarm: the at-max-capacity composite alarm, or ``None``.
        at_max_count_alarm: its instance-count half (no actions), or ``None``.
        saturation_alarms: its signal halves, one per tracked signal (no actions).

        Each is an :class:`L1Alarm`: an ``IAlarm`` over its ``CfnAlarm`` or ``CfnCompositeAlarm``
        (``alarm.resource``).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        endpoint: EndpointBase,
        pools: Sequence[InstancePool] | None = None,
        p99_latency: Duration = Duration.seconds(30),
        p99_latency_by_type: Mapping[str, Duration] | None = None,
        error_rate_percent: float = 1.0,
        fallback_for: Duration | None = Duration.hours(1),
        max_capacity: int | None = None,
        at_max_capacity_for: Duration | None = None,
        saturation_metric: cloudwatch.IMetric | None = None,
        saturation_threshold: float | None = None,
        count_source: InstanceCountSource = DEFAULT_INSTANCE_COUNT_SOURCE,
        topic: sns.ITopic | None = None,
    ) -> None:
        field = "PoolAlarms"
        resolved = endpoint.pools_or(pools, field)
        types = [p.instance_type for p in resolved]
        thresholds = {t: _latency_us(p99_latency, f"{field}.p99_latency") for t in types}
        for key, value in (p99_latency_by_type or {}).items():
            if key not in thresholds:
                raise PoolConfigError(f"{field}.p99_latency_by_type", key, f"one of the pools' instance types: {', '.join(types)}")
            thresholds[key] = _latency_us(value, f"{field}.p99_latency_by_type[{key!r}]")
        if not is_unresolved(error_rate_percent) and (
            isinstance(error_rate_percent, bool) or not isinstance(error_rate_percent, numbers.Real) or not 0 < error_rate_percent <= 100
        ):
            raise PoolConfigError(f"{field}.error_rate_percent", error_rate_percent, "a percentage in (0, 100]")
        check_count_source(count_source, f"{field}.count_source")
        fallback_periods = _periods(fallback_for, f"{field}.fallback_for") if fallback_for is not None else None
        scaling = endpoint.auto_scaling
        if max_capacity is None and scaling is not None:
            max_capacity = scaling.max_capacity
        check_int_range(max_capacity, f"{field}.max_capacity", 1, None, "instances")
        at_max_periods = _periods(at_max_capacity_for or DEFAULT_AT_MAX_CAPACITY_FOR, f"{field}.at_max_capacity_for")
        source = MetricSource.variant(endpoint.endpoint_name, endpoint.variant_name)
        signals = (
            _saturation_signals(source, resolved, scaling, saturation_metric, saturation_threshold, f"{field}.saturation_metric")
            if max_capacity is not None
            else []
        )

        super().__init__(scope, id)
        self.endpoint = endpoint
        name = endpoint.endpoint_name
        self._actions = [topic.topic_arn] if topic is not None else None
        self._alarms: list[L1Alarm] = []

        self.latency_alarms: dict[str, L1Alarm] = {}
        for index, (instance_type, threshold) in enumerate(thresholds.items()):
            self.latency_alarms[instance_type] = self._alarm(
                # Construct ids must be literal: a type from a CfnParameter is named by its position.
                f"Latency-pool{index + 1}" if is_unresolved(instance_type) else f"Latency-{instance_type}",
                query=sagemaker_stat("ModelLatency", source, instance_type=instance_type, statistic="p99"),
                threshold=threshold,
                evaluation_periods=5,
                datapoints_to_alarm=3,
                description=f"p99 ModelLatency of {instance_type} on {name} above {threshold / 1e6:g} s in 3 of 5 minutes",
            )

        requests = (
            ("errors", sagemaker_stat("Invocation5XXErrors", source)),
            ("invocations", sagemaker_stat("Invocations", source)),
        )
        self.error_rate_alarm = self._alarm(
            "ErrorRate5xx",
            # Division by zero (no invocations) drops the data point: missing, not breaching.
            query=Math("100 * errors / invocations", requests, 60, "5XX error rate (%)"),
            threshold=error_rate_percent,
            evaluation_periods=5,
            datapoints_to_alarm=3,
            description=f"5XX errors above {number_text(error_rate_percent)} % of invocations on {name} in 3 of 5 minutes",
        )

        def counts(pools: Sequence[InstancePool], first: int, statistic: str) -> tuple[tuple[str, Query], ...]:
            return tuple(
                (
                    f"s{i}",
                    instance_count_stat(
                        source, instance_type=p.instance_type, statistic=statistic, period=_PRESENCE_SECONDS, count_source=count_source
                    ),
                )
                for i, p in enumerate(pools, start=first)
            )

        self.fallback_alarm: L1Alarm | None = None
        fallbacks = resolved[1:]
        if fallback_periods is not None and fallbacks:
            # Any data point of a fallback type in the period: an instance of it ran. With
            # CPU_SAMPLES this is presence (a sample count above 0), which holds under every
            # reading of how SageMaker publishes per-instance metrics.
            present = counts(fallbacks, 2, "Maximum")
            self.fallback_alarm = self._alarm(
                "FallbackInUse",
                query=Math(" + ".join(i for i, _ in present), present, _PRESENCE_SECONDS, "fallback instances"),
                threshold=0,
                evaluation_periods=fallback_periods,
                datapoints_to_alarm=fallback_periods,
                description=(
                    f"{name} has run fallback instances ({', '.join(p.instance_type for p in fallbacks)}) for "
                    f"{fallback_periods * 5} minutes: {resolved[0].instance_type} has no capacity"
                ),
            )

        self.at_max_capacity_alarm: L1Alarm | None = None
        self.at_max_count_alarm: L1Alarm | None = None
        self.saturation_alarms: list[L1Alarm] = []
        if max_capacity is not None:
            window = at_max_periods * _PRESENCE_SECONDS
            if count_source is InstanceCountSource.INSTANCE_COUNT_METRIC:
                held = counts(resolved, 1, "Minimum")
                instances: Query = Math(" + ".join(i for i, _ in held), held, _PRESENCE_SECONDS, "instances")
            else:
                instances = variant_instances_query(source, period=_PRESENCE_SECONDS)
            # Rounded to whole instances, so that a threshold from a CfnParameter needs no arithmetic
            # (a mean over a period of requests can read 7.98 for 8 instances).
            self.at_max_count_alarm = self._alarm(
                "AtMaxCount",
                query=Math("FLOOR(n + 0.5)", (("n", instances),), _PRESENCE_SECONDS, "instances (rounded)"),
                threshold=max_capacity,
                comparison="GreaterThanOrEqualToThreshold",
                evaluation_periods=at_max_periods,
                datapoints_to_alarm=at_max_periods,
                description=f"{name} has run its maximum of {number_text(max_capacity)} instances for {window // 60} minutes",
                notify=False,
            )
            minutes = window // _SIGNAL_SECONDS
            # Most minutes, not all: a signal that dips under its target for a minute or two
            # while the fleet stays short must not reset the window.
            above = max(1, -(-minutes * 4 // 5))
            for signal_id, query, threshold in signals:
                self.saturation_alarms.append(
                    self._alarm(
                        f"Saturated{signal_id}",
                        query=query,
                        threshold=threshold,
                        evaluation_periods=minutes,
                        datapoints_to_alarm=above,
                        description=(
                            f"The scaling signal {signal_id} of {name} was above {number_text(threshold)} in {above} of {minutes} minutes"
                        ),
                        notify=False,
                    )
                )
            rule = " OR ".join(a.render_alarm_rule() for a in self.saturation_alarms)
            self.at_max_capacity_alarm = L1Alarm(
                self,
                "AtMaxCapacity",
                resource_class=cloudwatch.CfnCompositeAlarm,
                alarm_rule=f"{self.at_max_count_alarm.render_alarm_rule()} AND ({rule})",
                alarm_description=(
                    f"{name} has run at its maximum of {number_text(max_capacity)} instances for {window // 60} minutes "
                    "while its scaling signal stayed above target: it needs capacity it may not add"
                ),
                alarm_actions=self._actions,
                ok_actions=self._actions,
            )
            self._alarms.append(self.at_max_capacity_alarm)

    def _alarm(
        self,
        id: str,
        *,
        query: Query,
        threshold: float,
        evaluation_periods: int,
        datapoints_to_alarm: int,
        description: str,
        comparison: str = "GreaterThanThreshold",
        notify: bool = True,
    ) -> L1Alarm:
        actions = self._actions if notify else None
        alarm = L1Alarm(
            self,
            id,
            comparison_operator=comparison,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=datapoints_to_alarm,
            # No data = no traffic, no instance of that type, no fallback: not a problem.
            treat_missing_data="notBreaching",
            alarm_description=description,
            alarm_actions=actions,
            ok_actions=actions,
            **alarm_properties(query, f"PoolAlarms.{id}"),
        )
        self._alarms.append(alarm)
        return alarm

    @property
    def alarms(self) -> list[L1Alarm]:
        """Every alarm made, in creation order."""
        return list(self._alarms)

    @property
    def rollback_alarms(self) -> list[cloudwatch.IAlarm]:
        """The alarms fit to roll a deployment back: the 5XX rate and each type's p99 latency.

        Raises:
            PoolConfigError: the endpoint's name is generated by CloudFormation (see the module
                docs: a cycle). A name from a ``CfnParameter`` is fine.
        """
        if self.endpoint.has_generated_name:
            raise PoolConfigError(
                "PoolAlarms.rollback_alarms",
                "alarms on an endpoint whose name CloudFormation generates",
                "alarms on a fixed endpoint name (a literal or a CfnParameter): give the endpoint endpoint_name=... and "
                "build these alarms before it on PooledEndpoint.from_endpoint_name(...) "
                "(otherwise Endpoint -> Alarm -> Endpoint is a cycle)",
            )
        return [self.error_rate_alarm, *self.latency_alarms.values()]


@jsii.implements(cloudwatch.IAlarm)
class L1Alarm:
    """A CloudWatch alarm written as its L1, usable wherever an ``IAlarm`` is: rollback alarms,
    composite-alarm rules, alarm actions, alarm-status widgets.

    The ``AWS::CloudWatch::Alarm`` sits where CDK's ``Alarm`` puts it (``<id>/Resource`` under a
    construct at ``<id>``), so it has the same logical id and generated name. The ``IAlarm`` is
    this plain Python object over those two, not a construct of its own: a Python subclass of a
    jsii class (CDK's ``AlarmBase``) costs a round trip to Node to make and a registration of its
    overrides, per alarm, and the library itself only reads an alarm's name (a rollback
    configuration) in Python. Passed to CDK, it becomes an interface proxy in Node on first use.

    Args:
        scope: parent construct.
        id: construct id.
        resource_class: ``cloudwatch.CfnAlarm`` or ``cloudwatch.CfnCompositeAlarm`` (CDK's
            ``CompositeAlarm`` sits at the same paths). Default: ``CfnAlarm``.
        props: its properties (for a metric alarm see ``queries.alarm_properties``).

    Attributes:
        construct: the construct at ``<id>``, the alarm's ``node`` (its default child is the alarm).
        resource: the ``CfnAlarm`` (or ``CfnCompositeAlarm``).
    """

    def __init__(self, scope: Construct, id: str, *, resource_class: Any = cloudwatch.CfnAlarm, **props: Any) -> None:
        self.construct = Construct(scope, id)
        self.resource = resource_class(self.construct, "Resource", **props)
        self._name: str | None = None
        self._arn: str | None = None
        self._actions: dict[str, list[str]] = {}

    @property
    def node(self) -> Node:
        """The construct node at ``<id>``."""
        return self.construct.node

    @property
    def stack(self) -> Stack:
        """The alarm's stack."""
        return stack_of(self.construct)

    @property
    def env(self) -> ResourceEnvironment:
        """The stack's account and region (an alarm lives where its stack does)."""
        stack = self.stack
        return ResourceEnvironment(account=stack.account, region=stack.region)

    @property
    def alarm_name(self) -> str:
        """The alarm's name (a ``Ref``)."""
        if self._name is None:
            self._name = self.resource.ref
        return self._name

    @property
    def alarm_arn(self) -> str:
        """The alarm's ARN (``Fn::GetAtt Arn``)."""
        if self._arn is None:
            self._arn = self.resource.attr_arn
        return self._arn

    @property
    def alarm_ref(self) -> AlarmReference:
        """The alarm's name and ARN, as CDK's ``AlarmBase.alarm_ref``."""
        return AlarmReference(alarm_name=self.alarm_name, alarm_arn=self.alarm_arn)

    def render_alarm_rule(self) -> str:
        """``ALARM("<arn>")``: this alarm as a composite-alarm rule, as CDK's ``AlarmBase`` renders it."""
        return f'ALARM("{self.alarm_arn}")'

    def apply_removal_policy(self, policy: RemovalPolicy) -> None:
        """Apply ``policy`` to the ``AWS::CloudWatch::Alarm``."""
        self.resource.apply_removal_policy(policy)

    def with_(self, *mixins: IMixin) -> L1Alarm:
        """Apply ``mixins`` to the construct at ``<id>`` and so to the alarm below it; return this alarm."""
        self.construct.with_(*mixins)
        return self

    def add_alarm_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Run ``actions`` when the alarm goes to ALARM."""
        self._add("alarm_actions", actions)

    def add_ok_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Run ``actions`` when the alarm goes to OK."""
        self._add("ok_actions", actions)

    def add_insufficient_data_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Run ``actions`` when the alarm goes to INSUFFICIENT_DATA."""
        self._add("insufficient_data_actions", actions)

    def _add(self, kind: str, actions: Sequence[cloudwatch.IAlarmAction]) -> None:
        arns = self._actions.setdefault(kind, list(getattr(self.resource, kind) or []))
        arns.extend(action.bind(self.construct, self).alarm_action_arn for action in actions)
        setattr(self.resource, kind, list(arns))


def _saturation_signals(
    source: MetricSource,
    pools: Sequence[InstancePool],
    scaling: Any,
    metric: cloudwatch.IMetric | None,
    threshold: float | None,
    field: str,
) -> list[tuple[str, Query, float]]:
    """``(id, query, threshold)`` of each signal whose reading above its threshold means the fleet wants more."""
    if metric is not None:
        return [("", from_cloudwatch(metric, field), DEFAULT_SATURATION_THRESHOLD if threshold is None else threshold)]
    tracked = list(scaling.tracked_signals) if scaling is not None else []
    if tracked and threshold is None:
        return [(t.policy_id, t.query, t.target) for t in tracked]
    if all(p.max_concurrency is not None for p in pools):
        strategy = (scaling.utilization_strategy if scaling is not None else None) or DEFAULT_UTILIZATION_STRATEGY
        utilization = weighted_utilization_query(source, pools, strategy=strategy, field=field)
        return [("WeightedUtilization", utilization, DEFAULT_SATURATION_THRESHOLD if threshold is None else threshold)]
    raise PoolConfigError(
        field,
        None,
        "a signal that reads above its threshold while the fleet needs more capacity: call endpoint.auto_scale(...) with a "
        "target-tracking policy first, give every pool max_concurrency (weighted utilization), or pass saturation_metric= "
        "(the at-max-capacity alarm needs one: during a deployment the instance count alone reads at its maximum)",
    )


def _latency_us(value: Duration, field: str) -> float:
    if not isinstance(value, Duration):
        raise PoolConfigError(field, value, "an aws_cdk.Duration (e.g. Duration.seconds(30))")
    seconds = duration_facts(value)[1]
    concrete_seconds(value, field, "it becomes the alarm threshold in microseconds")
    if not 0 < seconds <= 3600:
        raise PoolConfigError(field, f"{seconds} seconds", "more than 0 and at most 3600 seconds")
    return float(seconds * 1_000_000)


def _periods(value: Duration, field: str) -> int:
    """``value`` in 5-minute periods (1 to 288: CloudWatch evaluates at most one day)."""
    if isinstance(value, Duration):
        concrete_seconds(value, field, "it becomes the alarm's number of 5-minute evaluation periods")
    seconds = seconds_in_range(value, field, _PRESENCE_SECONDS, MAX_EVALUATION_SECONDS)
    if seconds is None or seconds % _PRESENCE_SECONDS:
        raise PoolConfigError(field, f"{seconds} seconds", "a multiple of 5 minutes, from 5 minutes to 1 day")
    return seconds // _PRESENCE_SECONDS
