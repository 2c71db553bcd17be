"""``PoolAlarms``: the alarms that make a mixed fleet operable.

* p99 ``ModelLatency`` per instance type (a fallback type may be slower: thresholds per type);
* 5XX error rate of the variant, in percent of invocations;
* fallback in use: instances of a pool with priority > 1 present for longer than a set time
  (the preferred hardware has had no capacity that long);
* fleet at max capacity: the variant has run at its autoscaling maximum for a set time, a time
  that outlasts a deployment's fleet overlap (during a blue/green deployment the old and the new
  fleet both run, and the variant reads up to twice its size).

The latency and error-rate alarms can roll a deployment back (:attr:`PoolAlarms.rollback_alarms`).
A rollback alarm must watch the endpoint *by a fixed name*: the endpoint's ``DeploymentConfig``
names the alarm, so an alarm whose metric used the endpoint's generated name would need the
endpoint first and the endpoint the alarm first (a CloudFormation dependency cycle). Give the
endpoint ``endpoint_name=`` and build the alarms before it on
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
from ._tokens import is_unresolved
from ._validate import check_int_range, duration_facts, seconds_in_range
from .errors import PoolConfigError
from .deployment import DeploymentPolicy
from .metrics import MetricSource, instance_count_stat, sagemaker_stat
from .queries import Math, Query, alarm_properties
from .pools import InstancePool

if TYPE_CHECKING:
    from .endpoint import EndpointBase

__all__ = ["PoolAlarms", "L1Alarm"]

#: Period of the instance-count alarms, in seconds.
_PRESENCE_SECONDS = 300
#: The at-max-capacity window when no deployment overlap asks for more: 3 periods.
DEFAULT_AT_MAX_PERIODS = 3
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
        max_capacity: alarm when the variant has run this many instances (its autoscaling
            maximum, summed ``InstanceCount`` of its types, Minimum per 5 minutes) for
            ``at_max_capacity_for``. Default: the maximum of ``endpoint.auto_scale`` if already
            called, else no such alarm.
        deployment: the endpoint's deployment policy, whose fleet overlap
            (:meth:`DeploymentPolicy.fleet_overlap_seconds`) the at-max-capacity window must
            outlast. Default: the endpoint's own policy (none for an imported endpoint).
        at_max_capacity_for: a multiple of 5 minutes up to one day, longer than the deployment's
            fleet overlap rounded up to 5 minutes, plus 10 minutes (a run of doubled counts touches one
            period more than it fills). Default: 15 minutes, or that minimum when it is longer.
        topic: notify this SNS topic on ALARM and OK. Default: no notification.

    Attributes:
        latency_alarms: ``{instance type: alarm}``, in priority order.
        error_rate_alarm: the 5XX rate alarm.
        fallback_alarm: the fallback-in-use alarm, or ``None``.
        at_max_capacity_alarm: the at-max-capacity alarm, or ``None``.

        Each is an :class:`L1Alarm`: an ``IAlarm`` over its ``CfnAlarm`` (``alarm.resource``).
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
        deployment: DeploymentPolicy | None = None,
        at_max_capacity_for: Duration | None = None,
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
        fallback_periods = _presence_periods(fallback_for, f"{field}.fallback_for") if fallback_for is not None else None
        scaling = endpoint.auto_scaling
        if max_capacity is None and scaling is not None:
            max_capacity = scaling.max_capacity
        check_int_range(max_capacity, f"{field}.max_capacity", 1, None, "instances")
        if deployment is not None and not isinstance(deployment, DeploymentPolicy):
            raise PoolConfigError(f"{field}.deployment", deployment, "a DeploymentPolicy (all_at_once, canary, linear, rolling)")
        deployment = deployment or endpoint.deployment
        at_max_periods = _at_max_periods(at_max_capacity_for, deployment, max_capacity, f"{field}.at_max_capacity_for")

        super().__init__(scope, id)
        self.endpoint = endpoint
        source = MetricSource.variant(endpoint.endpoint_name, endpoint.variant_name)
        name = endpoint.endpoint_name
        self._actions = [topic.topic_arn] if topic is not None else None
        self._alarms: list[L1Alarm] = []

        self.latency_alarms: dict[str, L1Alarm] = {}
        for instance_type, threshold in thresholds.items():
            self.latency_alarms[instance_type] = self._alarm(
                f"Latency-{instance_type}",
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
            description=f"5XX errors above {error_rate_percent:g} % of invocations on {name} in 3 of 5 minutes",
        )

        def counts(pools: Sequence[InstancePool], first: int, statistic: str) -> tuple[tuple[str, Query], ...]:
            return tuple(
                (f"s{i}", instance_count_stat(source, instance_type=p.instance_type, statistic=statistic, period=_PRESENCE_SECONDS))
                for i, p in enumerate(pools, start=first)
            )

        self.fallback_alarm: L1Alarm | None = None
        fallbacks = resolved[1:]
        if fallback_periods is not None and fallbacks:
            # Maximum: any fallback instance during the period.
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
        if max_capacity is not None:
            # Minimum: held throughout the period. Every type is summed (the documented dimension
            # set is per InstanceType); a deployment that doubles the count lasts fewer periods
            # than the alarm evaluates (see _at_max_periods).
            held = counts(resolved, 1, "Minimum")
            self.at_max_capacity_alarm = self._alarm(
                "AtMaxCapacity",
                query=Math(" + ".join(i for i, _ in held), held, _PRESENCE_SECONDS, "instances"),
                # ">= max_capacity" for integer counts.
                threshold=max_capacity - 0.5,
                evaluation_periods=at_max_periods,
                datapoints_to_alarm=at_max_periods,
                description=f"{name} has run at its maximum of {max_capacity} instances for {at_max_periods * 5} minutes",
            )

    def _alarm(
        self,
        id: str,
        *,
        query: Query,
        threshold: float,
        evaluation_periods: int,
        datapoints_to_alarm: int,
        description: str,
    ) -> L1Alarm:
        alarm = L1Alarm(
            self,
            id,
            comparison_operator="GreaterThanThreshold",
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=datapoints_to_alarm,
            # No data = no traffic, no instance of that type, no fallback: not a problem.
            treat_missing_data="notBreaching",
            alarm_description=description,
            alarm_actions=self._actions,
            ok_actions=self._actions,
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
            PoolConfigError: the endpoint's name is generated (see the module docs: a cycle).
        """
        if is_unresolved(self.endpoint.endpoint_name):
            raise PoolConfigError(
                "PoolAlarms.rollback_alarms",
                "alarms on an endpoint with a generated name",
                "alarms on a fixed endpoint name: give the endpoint endpoint_name=... and build these alarms before it "
                "on PooledEndpoint.from_endpoint_name(...) (otherwise Endpoint -> Alarm -> Endpoint is a cycle)",
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
        props: ``cloudwatch.CfnAlarm`` properties (see ``queries.alarm_properties``).

    Attributes:
        construct: the construct at ``<id>``, the alarm's ``node`` (its default child is the alarm).
        resource: the ``CfnAlarm``.
    """

    def __init__(self, scope: Construct, id: str, **props: Any) -> None:
        self.construct = Construct(scope, id)
        self.resource = cloudwatch.CfnAlarm(self.construct, "Resource", **props)
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


def _latency_us(value: Duration, field: str) -> float:
    if not isinstance(value, Duration):
        raise PoolConfigError(field, value, "an aws_cdk.Duration (e.g. Duration.seconds(30))")
    unresolved, seconds = duration_facts(value)
    if unresolved:
        raise PoolConfigError(field, value, "a concrete duration (it becomes the alarm threshold in microseconds)")
    if not 0 < seconds <= 3600:
        raise PoolConfigError(field, f"{seconds} seconds", "more than 0 and at most 3600 seconds")
    return float(seconds * 1_000_000)


def _presence_periods(value: Duration, field: str) -> int:
    """``value`` in 5-minute periods (1 to 288: CloudWatch evaluates at most one day)."""
    seconds = seconds_in_range(value, field, _PRESENCE_SECONDS, MAX_EVALUATION_SECONDS)
    if seconds is None or is_unresolved(seconds) or seconds % _PRESENCE_SECONDS:
        raise PoolConfigError(field, f"{seconds} seconds", "a multiple of 5 minutes, from 5 minutes to 1 day")
    return seconds // _PRESENCE_SECONDS


def _at_max_periods(value: Duration | None, deployment: DeploymentPolicy | None, max_capacity: int | None, field: str) -> int:
    """5-minute periods of the at-max-capacity alarm: more than a deployment's doubled count can breach.

    While old and new instances both run, the variant's count reads up to twice its size. A run
    of ``overlap`` seconds touches at most ``ceil(overlap / 300) + 1`` periods, so an alarm that
    needs one more consecutive breaching period than that cannot fire on the overlap alone.
    """
    overlap = deployment.fleet_overlap_seconds(max_capacity or 1) if deployment is not None and max_capacity else None
    needed = -(-overlap // _PRESENCE_SECONDS) + 2 if overlap is not None else 1
    if value is None:
        periods = max(DEFAULT_AT_MAX_PERIODS, needed)
        if periods * _PRESENCE_SECONDS > MAX_EVALUATION_SECONDS:
            raise PoolConfigError(
                field, f"a deployment overlap of {overlap} seconds", "an overlap under 1 day: CloudWatch evaluates at most one day"
            )
        return periods
    periods = _presence_periods(value, field)
    if periods < needed:
        raise PoolConfigError(
            field,
            f"{periods * 5} minutes",
            f"at least {needed * 5} minutes: the deployment runs old and new instances together for {overlap} seconds "
            "(the variant reads up to twice its size), so a shorter window fires on every deployment",
        )
    return periods
