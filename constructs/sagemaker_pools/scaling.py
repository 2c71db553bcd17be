"""Application Auto Scaling for SageMaker: scalable targets, target tracking and step policies.

Two layers:

* :class:`ScalableCapacity` is generic: one ``AWS::ApplicationAutoScaling::ScalableTarget`` for a
  SageMaker resource and dimension (a variant's ``DesiredInstanceCount``, an inference component's
  ``DesiredCopyCount``), with target-tracking (:meth:`~ScalableCapacity.scale_to_track_metric`,
  :meth:`~ScalableCapacity.scale_to_track_predefined`) and step policies
  (:meth:`~ScalableCapacity.scale_on_step`). Any CloudWatch ``Metric`` or ``MathExpression`` can
  drive target tracking: it is rendered as ``CustomizedMetricSpecification.Metrics`` on the L1
  ``CfnScalingPolicy`` (the L2 refuses math expressions, aws/aws-cdk#20659) and checked against
  CloudWatch's alarm rules at construction.
* :class:`VariantScaling` (from :meth:`PooledEndpoint.auto_scale`) adds the policies of a pooled
  variant: weighted utilization, invocations per instance and concurrency.

Scalable targets carry no ``RoleARN``: Application Auto Scaling then uses its SageMaker
service-linked role (``AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint``), created on
first use, so no IAM role is made per endpoint.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jsii
from aws_cdk import CfnResource, Duration
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from ._l1 import l1_properties
from ._tokens import is_unresolved
from ._tree import path_of, remember_stack, unique_id
from ._validate import check_int_range, check_min_max, seconds_in_range
from .errors import PoolConfigError
from .metrics import DEFAULT_UTILIZATION_STRATEGY, MetricSource, UtilizationStrategy, sagemaker_stat, weighted_utilization_query
from .queries import Math, Query, Stat, flatten, from_cloudwatch, l1_dimensions, unit_name
from .sources import ScalableVariant

__all__ = [
    "SERVICE_NAMESPACE",
    "VARIANT_INSTANCE_COUNT",
    "DEFAULT_COLD_START",
    "DEFAULT_WAKE_UP_COOLDOWN",
    "INFERENCE_COMPONENT_COPY_COUNT",
    "variant_resource_id",
    "inference_component_resource_id",
    "metric_data_queries",
    "ScalableCapacity",
    "StepScaling",
    "TrackedSignal",
    "VariantScaling",
]

SERVICE_NAMESPACE = "sagemaker"
#: Scalable dimension of an endpoint variant's instance count.
VARIANT_INSTANCE_COUNT = "sagemaker:variant:DesiredInstanceCount"
#: Scalable dimension of an inference component's copy count.
INFERENCE_COMPONENT_COPY_COUNT = "sagemaker:inference-component:DesiredCopyCount"

#: CloudWatch alarm rules that a target-tracking metric must obey (PutMetricAlarm).
MAX_METRICS = 10
MAX_EXPRESSIONS = 10
MAX_EXPRESSION_LENGTH = 2048
#: Cooldowns: whole seconds; Application Auto Scaling states no maximum, one day is plenty.
MAX_COOLDOWN_SECONDS = 86400
#: How long a new unit takes to serve once its pool has capacity, by default: a GPU LLM's instance
#: acquisition, multi-GB model download and load take 10-20 minutes. Inference components' target
#: tracking uses it as scale-out cooldown (docs/scaling.md, "Cooldowns and start-up").
DEFAULT_COLD_START = Duration.minutes(20)
#: The wake-up from zero's cooldown by default: Application Auto Scaling's own default for a
#: SageMaker step policy. The wake-up sets an exact capacity of one, so the cooldown does not
#: decide how many units a cold start asks for; a long one could only delay a second wake-up
#: (docs/scaling.md, "Waking from zero").
DEFAULT_WAKE_UP_COOLDOWN = Duration.seconds(300)

_SEARCH = re.compile(r"\bSEARCH\s*\(", re.IGNORECASE)
#: A variant's predefined metric types and the SageMaker metric each tracks.
_VARIANT_PREDEFINED = {
    "SageMakerVariantInvocationsPerInstance": "InvocationsPerInstance",
    "SageMakerVariantConcurrentRequestsPerModelHighResolution": "ConcurrentRequestsPerModel",
}


def variant_resource_id(endpoint_name: str, variant_name: str) -> str:
    """``endpoint/<endpoint>/variant/<variant>``: the resource id of a variant (names may be tokens)."""
    return f"endpoint/{endpoint_name}/variant/{variant_name}"


def inference_component_resource_id(inference_component_name: str) -> str:
    """``inference-component/<name>``: the resource id of an inference component."""
    return f"inference-component/{inference_component_name}"


def metric_data_queries(metric: cloudwatch.IMetric | Query, field: str = "metric") -> list[dict[str, Any]]:
    """``metric`` as the ``CustomizedMetricSpecification.Metrics`` of a target-tracking policy.

    ``metric`` is a CloudWatch ``Metric``/``MathExpression`` or a plain query
    (:mod:`sagemaker_pools.queries`), which is what the library's own policies pass.

    A single metric becomes one query; a (nested) ``MathExpression`` becomes its metrics and
    expressions with ``ReturnData: false`` and the top expression, id ``result``, with
    ``ReturnData: true``: exactly one, as Application Auto Scaling requires.

    Each query is a ``TargetTrackingMetricDataQuery`` as a plain dict, keyed as CloudFormation's
    property type names its fields in camelCase (``returnData``, ``metricStat`` ...).

    Raises:
        PoolConfigError: what CloudWatch would refuse for an alarm: more than 10 metrics or
            expressions, ``SEARCH``, an expression over 2,048 characters, invalid or conflicting
            ids, a cross-account or cross-region metric.
    """
    policy = appscaling.CfnScalingPolicy
    query = policy.TargetTrackingMetricDataQueryProperty
    flat = flatten(metric if isinstance(metric, (Stat, Math)) else from_cloudwatch(metric, field), field)
    if flat.metric_count > MAX_METRICS:
        raise PoolConfigError(
            f"{field}.metrics",
            f"{flat.metric_count} metrics",
            f"at most {MAX_METRICS} metrics: target tracking runs on CloudWatch alarms, which read at most 10",
        )
    expressions = dict(flat.expressions)
    top_id = "result"
    while top_id in expressions or top_id in flat.stats:
        top_id += "_"
    if flat.expression is not None:
        expressions[top_id] = flat.expression
    if len(expressions) > MAX_EXPRESSIONS:
        raise PoolConfigError(f"{field}.expressions", f"{len(expressions)} expressions", f"at most {MAX_EXPRESSIONS} math expressions in one alarm")
    for ident, text in expressions.items():
        if _SEARCH.search(text):
            raise PoolConfigError(f"{field}.expression", text, "an expression without SEARCH: alarms and scaling policies cannot use it")
        if len(text) > MAX_EXPRESSION_LENGTH:
            raise PoolConfigError(f"{field}.expression", f"{len(text)} characters", f"at most {MAX_EXPRESSION_LENGTH} characters")

    queries: list[dict[str, Any]] = []
    single = flat.expression is None
    for ident, stat in flat.stats.items():
        if stat.account is not None or stat.region is not None:
            raise PoolConfigError(f"{field}.{ident}", f"account={stat.account}, region={stat.region}", "a metric of the policy's own account and region")
        queries.append(
            l1_properties(
                query,
                id=ident,
                label=flat.labels.get(ident),
                return_data=single,
                metric_stat=l1_properties(
                    policy.TargetTrackingMetricStatProperty,
                    stat=stat.statistic,
                    unit=unit_name(stat.unit) if stat.unit is not None else None,
                    metric=l1_properties(
                        policy.TargetTrackingMetricProperty,
                        namespace=stat.namespace,
                        metric_name=stat.metric_name,
                        dimensions=l1_dimensions(policy.TargetTrackingMetricDimensionProperty, stat),
                    ),
                ),
            )
        )
    for ident, text in expressions.items():
        queries.append(l1_properties(query, id=ident, expression=text, label=flat.labels.get(ident), return_data=ident == top_id))
    if not single:
        queries[-1] = l1_properties(query, id=top_id, expression=flat.expression, label=flat.label, return_data=True)
    return queries


def _cooldown(value: Duration | None, field: str) -> int | None:
    return seconds_in_range(value, field, 0, MAX_COOLDOWN_SECONDS)


def _check_target(value: float, field: str, upper: float | None = None) -> None:
    if is_unresolved(value):
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and value > 0
    if ok and upper is not None:
        ok = value <= upper
    if not ok:
        allowed = f"a number in (0, {upper:g}]" if upper is not None else "a number > 0"
        raise PoolConfigError(field, value, allowed)


@jsii.implements(cloudwatch.IAlarmAction)
class _PolicyAction:
    """An alarm action that triggers a step-scaling policy."""

    def __init__(self, policy_arn: str) -> None:
        self._arn = policy_arn

    def bind(self, _scope: Construct, _alarm: cloudwatch.IAlarm) -> cloudwatch.AlarmActionConfig:
        return cloudwatch.AlarmActionConfig(alarm_action_arn=self._arn)


@dataclass(frozen=True)
class TrackedSignal:
    """What one target-tracking policy holds: its signal (plain query data) and its target.

    ``PoolAlarms`` reads these to tell a fleet that is at its maximum *and* above its target
    (more instances are wanted and none may be added) from one that only reads high.

    Attributes:
        policy_id: the policy's construct id.
        query: the signal, as the policy reads it (:mod:`sagemaker_pools.queries`).
        target: the target value (may be a token).
    """

    policy_id: str
    query: Query
    target: float


@dataclass(frozen=True)
class StepScaling:
    """A step-scaling policy and the alarm that triggers it."""

    policy: appscaling.CfnScalingPolicy
    alarm: cloudwatch.Alarm


class ScalableCapacity(Construct):
    """One scalable SageMaker capacity (an ``AWS::ApplicationAutoScaling::ScalableTarget``) and its policies.

    Generic over the resource: :class:`VariantScaling` uses it for a variant's instance count;
    inference components use it with ``inference_component_resource_id(name)`` and
    ``INFERENCE_COMPONENT_COPY_COUNT``.

    Args:
        scope: parent construct; key the id per variant / component.
        id: construct id.
        resource_id: ``endpoint/NAME/variant/VARIANT`` or ``inference-component/NAME`` (see the helpers).
        scalable_dimension: ``VARIANT_INSTANCE_COUNT`` or ``INFERENCE_COMPONENT_COPY_COUNT``.
        min_capacity: 0 or more (0 only where SageMaker can scale to zero).
        max_capacity: at least ``min_capacity`` and at least 1.
        depends_on: resources that must exist first (the endpoint, the inference component).
            Default: none (a name given as a token already implies the dependency).
        field: the name errors report. Default: ``"ScalableCapacity"``.

    Attributes:
        target: the ``CfnScalableTarget`` (also the default child, id ``"Resource"``).
        tracked_signals: every target-tracking policy's signal and target, in creation order
            (a predefined metric this library cannot express as a query is left out).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        resource_id: str,
        scalable_dimension: str,
        min_capacity: int,
        max_capacity: int,
        depends_on: Sequence[CfnResource] = (),
        field: str = "ScalableCapacity",
    ) -> None:
        check_int_range(min_capacity, f"{field}.min_capacity", 0, None, "instances or copies")
        check_int_range(max_capacity, f"{field}.max_capacity", 1, None, "instances or copies")
        check_min_max(min_capacity, max_capacity, field, "min_capacity", "max_capacity")
        if scalable_dimension not in (VARIANT_INSTANCE_COUNT, INFERENCE_COMPONENT_COPY_COUNT):
            raise PoolConfigError(
                f"{field}.scalable_dimension", scalable_dimension, f"{VARIANT_INSTANCE_COUNT} or {INFERENCE_COMPONENT_COPY_COUNT}"
            )
        super().__init__(scope, id)
        remember_stack(self, scope, id)
        self._field = field
        self.resource_id = resource_id
        self.scalable_dimension = scalable_dimension
        self.min_capacity = min_capacity
        self.max_capacity = max_capacity
        self.tracked_signals: list[TrackedSignal] = []
        # No role_arn: Application Auto Scaling uses (and creates) its SageMaker service-linked role.
        self.target = appscaling.CfnScalableTarget(
            self,
            "Resource",
            service_namespace=SERVICE_NAMESPACE,
            resource_id=resource_id,
            scalable_dimension=scalable_dimension,
            min_capacity=min_capacity,
            max_capacity=max_capacity,
        )
        for resource in depends_on:
            self.target.add_resource_dependency(resource)

    def _policy(self, id: str, policy_type: str, **config: object) -> appscaling.CfnScalingPolicy:
        policy = appscaling.CfnScalingPolicy(
            self,
            id,
            # Unique per scalable target and stable: Names.unique_id of the policy, from its construct path.
            policy_name=unique_id([*path_of(self).split("/"), id]),
            policy_type=policy_type,
            service_namespace=SERVICE_NAMESPACE,
            resource_id=self.resource_id,
            scalable_dimension=self.scalable_dimension,
            **config,  # type: ignore[arg-type]
        )
        policy.add_resource_dependency(self.target)
        return policy

    def _target_tracking(
        self,
        id: str,
        target_value: float,
        behaviour: tuple[Duration | None, Duration | None, bool],
        **metric: object,
    ) -> appscaling.CfnScalingPolicy:
        """A target-tracking policy on ``metric`` (a customized or a predefined metric specification)."""
        field = f"{self._field}.{id}"
        scale_in_cooldown, scale_out_cooldown, disable_scale_in = behaviour
        return self._policy(
            id,
            "TargetTrackingScaling",
            target_tracking_scaling_policy_configuration=appscaling.CfnScalingPolicy.TargetTrackingScalingPolicyConfigurationProperty(
                target_value=target_value,
                scale_in_cooldown=_cooldown(scale_in_cooldown, f"{field}.scale_in_cooldown"),
                scale_out_cooldown=_cooldown(scale_out_cooldown, f"{field}.scale_out_cooldown"),
                disable_scale_in=disable_scale_in or None,
                **metric,  # type: ignore[arg-type]
            ),
        )

    def _track_utilization(
        self,
        utilization: Callable[[], Query],
        target: float,
        behaviour: tuple[Duration | None, Duration | None, bool],
    ) -> appscaling.CfnScalingPolicy:
        """Target tracking (id ``WeightedUtilization``) on a 0.0-1.0 utilization, at ``target`` in (0, 1].

        ``utilization`` is built after the target is checked, so that a bad target is reported
        as such rather than hidden behind a pool without ``max_concurrency``.
        """
        _check_target(target, f"{self._field}.scale_on_weighted_utilization.target", 1.0)
        scale_in_cooldown, scale_out_cooldown, disable_scale_in = behaviour
        return self.scale_to_track_metric(
            "WeightedUtilization",
            target_value=target,
            metric=utilization(),
            scale_in_cooldown=scale_in_cooldown,
            scale_out_cooldown=scale_out_cooldown,
            disable_scale_in=disable_scale_in,
        )

    def scale_to_track_metric(
        self,
        id: str,
        *,
        target_value: float,
        metric: cloudwatch.IMetric | Query,
        scale_in_cooldown: Duration | None = None,
        scale_out_cooldown: Duration | None = None,
        disable_scale_in: bool = False,
    ) -> appscaling.CfnScalingPolicy:
        """Target tracking on any metric or metric-math expression (see :func:`metric_data_queries`).

        Args:
            id: construct id of the policy.
            target_value: the value to hold the metric at.
            metric: a CloudWatch ``Metric`` or ``MathExpression`` (at most 10 metrics, no SEARCH).
            scale_in_cooldown: wait after a scale-in. Default: Application Auto Scaling's (300 s for variants).
            scale_out_cooldown: wait after a scale-out. Default: Application Auto Scaling's (300 s for
                variants); 20 minutes for inference components (see ``ComponentScaling``).
            disable_scale_in: only ever scale out (another policy or a person scales in). Default: ``False``.
        """
        field = f"{self._field}.{id}"
        _check_target(target_value, f"{field}.target_value")
        if not isinstance(metric, (Stat, Math)) and not hasattr(type(metric), "to_metric_config"):
            raise PoolConfigError(f"{field}.metric", metric, "an aws_cloudwatch Metric or MathExpression (or a sagemaker_pools query)")
        query = metric if isinstance(metric, (Stat, Math)) else from_cloudwatch(metric, f"{field}.metric")
        queries = metric_data_queries(query, f"{field}.metric")
        policy = self._target_tracking(
            id,
            target_value,
            (scale_in_cooldown, scale_out_cooldown, disable_scale_in),
            customized_metric_specification=appscaling.CfnScalingPolicy.CustomizedMetricSpecificationProperty(metrics=queries),
        )
        self.tracked_signals.append(TrackedSignal(id, query, target_value))
        return policy

    def scale_to_track_predefined(
        self,
        id: str,
        *,
        target_value: float,
        predefined_metric_type: str,
        scale_in_cooldown: Duration | None = None,
        scale_out_cooldown: Duration | None = None,
        disable_scale_in: bool = False,
    ) -> appscaling.CfnScalingPolicy:
        """Target tracking on one of Application Auto Scaling's predefined SageMaker metrics.

        Args:
            predefined_metric_type: e.g. ``"SageMakerVariantInvocationsPerInstance"``,
                ``"SageMakerVariantConcurrentRequestsPerModelHighResolution"``,
                ``"SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"``.
            others: as :meth:`scale_to_track_metric`.
        """
        field = f"{self._field}.{id}"
        _check_target(target_value, f"{field}.target_value")
        if not predefined_metric_type.startswith("SageMaker"):
            raise PoolConfigError(f"{field}.predefined_metric_type", predefined_metric_type, "a SageMaker predefined metric type (SageMaker...)")
        policy = self._target_tracking(
            id,
            target_value,
            (scale_in_cooldown, scale_out_cooldown, disable_scale_in),
            predefined_metric_specification=appscaling.CfnScalingPolicy.PredefinedMetricSpecificationProperty(
                predefined_metric_type=predefined_metric_type
            ),
        )
        query = self._predefined_query(predefined_metric_type)
        if query is not None:
            self.tracked_signals.append(TrackedSignal(id, query, target_value))
        return policy

    def _predefined_query(self, predefined_metric_type: str) -> Query | None:
        """The metric a predefined metric type stands for, where this capacity knows it (see :class:`VariantScaling`)."""
        return None

    def scale_on_step(
        self,
        id: str,
        *,
        metric: cloudwatch.IMetric,
        threshold: float,
        adjustment: int,
        comparison_operator: cloudwatch.ComparisonOperator = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        adjustment_type: str = "ChangeInCapacity",
        metric_aggregation_type: str = "Maximum",
        evaluation_periods: int = 1,
        datapoints_to_alarm: int | None = None,
        cooldown: Duration | None = None,
        treat_missing_data: cloudwatch.TreatMissingData = cloudwatch.TreatMissingData.MISSING,
        alarm_description: str | None = None,
    ) -> StepScaling:
        """One step: when ``metric`` crosses ``threshold``, change the capacity by ``adjustment``.

        For leaving zero: e.g. ``HasBacklogWithoutCapacity >= 1 -> +1`` (async) or
        ``NoCapacityInvocationFailures >= 1 -> +1`` (inference components).

        Args:
            metric: what the alarm watches (a Metric or MathExpression).
            threshold: the alarm threshold.
            adjustment: capacity change (``ChangeInCapacity``), new capacity (``ExactCapacity``) or
                percent (``PercentChangeInCapacity``).
            comparison_operator: Default: ``>=``; with ``<`` / ``<=`` the step lies below the threshold.
            adjustment_type: Default: ``"ChangeInCapacity"``.
            metric_aggregation_type: how the step aggregates the alarm's data points: ``"Average"``,
                ``"Minimum"`` or ``"Maximum"``. Default: ``"Maximum"`` (as AWS's scale-from-zero recipe).
            evaluation_periods: Default: 1.
            datapoints_to_alarm: Default: ``evaluation_periods``.
            cooldown: Default: Application Auto Scaling's.
            treat_missing_data: Default: missing.
            alarm_description: Default: none.
        """
        field = f"{self._field}.{id}"
        if adjustment_type not in ("ChangeInCapacity", "ExactCapacity", "PercentChangeInCapacity"):
            raise PoolConfigError(f"{field}.adjustment_type", adjustment_type, "ChangeInCapacity, ExactCapacity or PercentChangeInCapacity")
        if not is_unresolved(adjustment) and (not isinstance(adjustment, int) or isinstance(adjustment, bool) or (adjustment == 0 and adjustment_type != "ExactCapacity")):
            raise PoolConfigError(f"{field}.adjustment", adjustment, "a non-zero integer (ExactCapacity: 0 or more)")
        if metric_aggregation_type not in ("Average", "Minimum", "Maximum"):
            raise PoolConfigError(f"{field}.metric_aggregation_type", metric_aggregation_type, "Average, Minimum or Maximum")
        check_int_range(evaluation_periods, f"{field}.evaluation_periods", 1, None)
        metric_data_queries(metric, f"{field}.metric")  # the same alarm rules apply
        below = comparison_operator in (
            cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
        )
        step = appscaling.CfnScalingPolicy.StepAdjustmentProperty(
            scaling_adjustment=adjustment,
            metric_interval_upper_bound=0 if below else None,
            metric_interval_lower_bound=None if below else 0,
        )
        policy = self._policy(
            id,
            "StepScaling",
            step_scaling_policy_configuration=appscaling.CfnScalingPolicy.StepScalingPolicyConfigurationProperty(
                adjustment_type=adjustment_type,
                cooldown=_cooldown(cooldown, f"{field}.cooldown"),
                metric_aggregation_type=metric_aggregation_type,
                step_adjustments=[step],
            ),
        )
        alarm = cloudwatch.Alarm(
            self,
            f"{id}Alarm",
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison_operator,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=datapoints_to_alarm,
            treat_missing_data=treat_missing_data,
            alarm_description=alarm_description,
        )
        alarm.add_alarm_action(_PolicyAction(policy.attr_arn))
        return StepScaling(policy, alarm)

    def wake_from_zero(
        self,
        id: str,
        *,
        metric: cloudwatch.IMetric,
        evaluation_periods: int,
        alarm_description: str,
        cooldown: Duration | None = None,
    ) -> StepScaling:
        """Set the capacity to exactly one unit while ``metric`` (>= 1 only while nothing serves) alarms.

        CloudWatch invokes an Auto Scaling action once a minute for as long as the alarm stays in
        ALARM, and requests keep failing (the backlog keeps waiting) until the first unit serves.
        The step is ``ExactCapacity`` 1: however often it is invoked through a cold start, and
        whether or not SageMaker accepts a capacity change while the endpoint is updating, it asks
        for one unit. ``ExactCapacity`` would also *lower* a larger capacity, so ``metric`` must
        read >= 1 only while no unit serves and no other policy can add capacity: the callers
        guard it (the inference component's alarm ignores minutes in which a copy reports
        requests; the async endpoint's target tracking reads nothing while the backlog has no
        instance). See docs/scaling.md, "Waking from zero".

        Args:
            id: construct id of the policy (the alarm is ``<id>Alarm``).
            metric: the no-capacity signal (``NoCapacityInvocationFailures``, ``HasBacklogWithoutCapacity``).
            evaluation_periods: one-minute periods at >= 1 before the alarm fires (all must breach).
            alarm_description: the alarm's description.
            cooldown: the step policy's cooldown, 60 s to one day. Default: 300 s
                (``DEFAULT_WAKE_UP_COOLDOWN``, Application Auto Scaling's own).
        """
        seconds_in_range(cooldown, f"{self._field}.{id}.cooldown", 60, MAX_COOLDOWN_SECONDS)
        return self.scale_on_step(
            id,
            metric=metric,
            threshold=1,
            adjustment=1,
            adjustment_type="ExactCapacity",
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=evaluation_periods,
            cooldown=cooldown if cooldown is not None else DEFAULT_WAKE_UP_COOLDOWN,
            alarm_description=alarm_description,
        )


class VariantScaling(ScalableCapacity):
    """Autoscaling of a pooled variant's instance count. Made by :meth:`PooledEndpoint.auto_scale`.

    Attributes:
        endpoint: the scaled endpoint.
        utilization_target: the target of :meth:`scale_on_weighted_utilization`, once called
            (dashboards draw it).
        utilization_strategy: its strategy, once called.
    """

    def __init__(self, scope: Construct, id: str, *, endpoint: ScalableVariant, min_capacity: int, max_capacity: int) -> None:
        field = "PooledEndpoint.auto_scale"
        check_int_range(min_capacity, f"{field}.min_capacity", 1, None, "instances (a variant without inference components cannot scale to zero)")
        check_int_range(max_capacity, f"{field}.max_capacity", 1, None, "instances")
        check_min_max(min_capacity, max_capacity, field, "min_capacity", "max_capacity")
        initial = endpoint._initial_instance_count  # as given; when derived, it follows min_capacity
        if initial is not None and not is_unresolved(initial):
            if not is_unresolved(min_capacity) and min_capacity > initial:
                raise PoolConfigError(f"{field}.min_capacity", min_capacity, f"at most initial_instance_count ({initial})")
            if not is_unresolved(max_capacity) and isinstance(max_capacity, int) and max_capacity < initial:
                raise PoolConfigError(f"{field}.max_capacity", max_capacity, f"at least initial_instance_count ({initial})")
        super().__init__(
            scope,
            id,
            resource_id=variant_resource_id(endpoint.endpoint_name, endpoint.variant_name),
            scalable_dimension=VARIANT_INSTANCE_COUNT,
            min_capacity=min_capacity,
            max_capacity=max_capacity,
            depends_on=endpoint._name_dependencies(),
            field=field,
        )
        self.endpoint = endpoint
        self.utilization_target: float | None = None
        self.utilization_strategy: UtilizationStrategy | None = None

    def _predefined_query(self, predefined_metric_type: str) -> Query | None:
        # Application Auto Scaling's PredefinedMetricSpecification: SageMakerVariantInvocationsPerInstance
        # is "the average number of times per minute that each instance for a variant is invoked";
        # the concurrency type reads ConcurrentRequestsPerModel (high resolution), whose
        # documented statistics are Minimum and Maximum.
        metric = _VARIANT_PREDEFINED.get(predefined_metric_type)
        if metric is None:
            return None
        source = MetricSource.variant(self.endpoint.endpoint_name, self.endpoint.variant_name)
        return sagemaker_stat(metric, source)

    def scale_on_weighted_utilization(
        self,
        *,
        target: float = 0.7,
        strategy: UtilizationStrategy = DEFAULT_UTILIZATION_STRATEGY,
        statistic: str = "Maximum",
        scale_in_cooldown: Duration | None = None,
        scale_out_cooldown: Duration | None = None,
        disable_scale_in: bool = False,
    ) -> appscaling.CfnScalingPolicy:
        """Hold the weighted utilization of the fleet at ``target`` (construct id ``WeightedUtilization``).

        Every pool needs ``max_concurrency``. See :func:`~sagemaker_pools.metrics.weighted_utilization`
        and ``docs/scaling.md``.

        Args:
            target: in (0, 1]. Default: 0.7 (scale out above 70 % of the busiest type's capacity).
            strategy: Default: ``UtilizationStrategy.MAX_OVER_TYPES``.
            statistic: of ``ConcurrentRequestsPerModel``. Default: ``"Maximum"``.
            scale_in_cooldown, scale_out_cooldown: Default: Application Auto Scaling's (300 s).
            disable_scale_in: Default: ``False``.
        """
        policy = self._track_utilization(
            lambda: weighted_utilization_query(
                MetricSource.variant(self.endpoint.endpoint_name, self.endpoint.variant_name),
                self.endpoint.pools or (),
                strategy=strategy,
                statistic=statistic,
                field="PooledEndpoint",
            ),
            target,
            (scale_in_cooldown, scale_out_cooldown, disable_scale_in),
        )
        self.utilization_target = target
        self.utilization_strategy = strategy
        return policy

    def scale_on_invocations_per_instance(
        self,
        *,
        target: float,
        scale_in_cooldown: Duration | None = None,
        scale_out_cooldown: Duration | None = None,
        disable_scale_in: bool = False,
    ) -> appscaling.CfnScalingPolicy:
        """Hold invocations per instance per minute at ``target`` (``SageMakerVariantInvocationsPerInstance``).

        The simple policy AWS recommends when every pool has similar capacity: it averages over
        all instance types. Construct id ``InvocationsPerInstance``.
        """
        return self.scale_to_track_predefined(
            "InvocationsPerInstance",
            target_value=target,
            predefined_metric_type="SageMakerVariantInvocationsPerInstance",
            scale_in_cooldown=scale_in_cooldown,
            scale_out_cooldown=scale_out_cooldown,
            disable_scale_in=disable_scale_in,
        )

    def scale_on_concurrency(
        self,
        *,
        target: float,
        scale_in_cooldown: Duration | None = None,
        scale_out_cooldown: Duration | None = None,
        disable_scale_in: bool = False,
    ) -> appscaling.CfnScalingPolicy:
        """Hold concurrent requests per model at ``target`` (``SageMakerVariantConcurrentRequestsPerModelHighResolution``).

        High resolution (10 s), so it scales out faster than invocation counts; like them it
        ignores the instance type. Construct id ``ConcurrentRequests``.
        """
        return self.scale_to_track_predefined(
            "ConcurrentRequests",
            target_value=target,
            predefined_metric_type="SageMakerVariantConcurrentRequestsPerModelHighResolution",
            scale_in_cooldown=scale_in_cooldown,
            scale_out_cooldown=scale_out_cooldown,
            disable_scale_in=disable_scale_in,
        )
