"""Inference components on a pooled endpoint: one specification per instance type.

An endpoint without a variant model hosts *inference components* (``AWS::SageMaker::
InferenceComponent``): each names a model, the accelerators, CPU cores and memory one copy
needs, and how many copies to run. SageMaker places copies on the endpoint's instances and,
with managed instance scaling, adds or removes instances (down to zero) to fit them.

On a pooled endpoint the instances are of several types, so a component lists one
specification per instance type (``Specifications``): when SageMaker falls back to a
lower-priority pool, the copies landing there run the build of the model made for that
hardware, with the resources that fit it.

CloudFormation (cfn-lint 1.58 schema, see ``reference/api-cfn-cdk-field-map.md`` §2.4) differs
from the API here: ``Specifications`` needs at least two entries and each entry needs an
``InstanceType``; one specification must use the singular ``Specification``, which rejects
``InstanceType``. This module renders whichever form fits.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Unpack

from aws_cdk import Annotations, Duration, Names, Resource, Tags
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from ._tokens import is_unresolved
from ._tree import remember_stack
from ._unique_names import check_name_is_free
from ._validate import check_int_range, check_min_max, check_name, check_tags, concrete_seconds, seconds_in_range
from .errors import PoolConfigError
from .hardware import InstanceHardware, hardware_of
from .instance_types import check_instance_type
from .metrics import (
    DEFAULT_UTILIZATION_STRATEGY,
    PERIOD_IS_CHECKED,
    MetricOptions,
    MetricSource,
    UtilizationStrategy,
    sagemaker_metric,
    weighted_utilization_query,
)
from .pools import IModel, InstancePool
from .queries import Math, to_cloudwatch
from .scaling import DEFAULT_COLD_START, INFERENCE_COMPONENT_COPY_COUNT, ScalableCapacity, StepScaling, inference_component_resource_id
from .sources import ComponentHost

__all__ = [
    "InstanceScaling",
    "ComponentSpec",
    "ComponentBatchSize",
    "ComponentDeploymentPolicy",
    "InferenceComponent",
    "ComponentScaling",
]

#: API limit: ``Specifications`` holds 1-5 entries (one per instance type; a variant has at most 5 pools).
MAX_SPECIFICATIONS = 5
_MAX_ALARMS = 10


def _check_number(value: object, field: str, low: float, allowed: str) -> None:
    """Raise unless ``value`` is a real number >= ``low`` (None and tokens pass)."""
    if value is None or is_unresolved(value):
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != value or value < low:
        raise PoolConfigError(field, value, allowed)


@dataclass(frozen=True, kw_only=True)
class InstanceScaling:
    """Managed instance scaling of an endpoint that hosts inference components.

    SageMaker adds instances (from the highest-priority pool with capacity) when copies of a
    component do not fit, and releases instances that no longer host copies. With
    ``min_instance_count=0`` the endpoint can scale to zero instances once every component
    is at zero copies (``ProductionVariantManagedInstanceScaling``; "Scale an endpoint to
    zero instances", https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html).

    Args:
        max_instance_count: the most instances the endpoint may run (1 or more).
        min_instance_count: the fewest (0 or more). Default: 0 (scale to zero allowed).
    """

    max_instance_count: int
    min_instance_count: int = 0

    def __post_init__(self) -> None:
        check_int_range(self.min_instance_count, "InstanceScaling.min_instance_count", 0, None, "instances")
        check_int_range(self.max_instance_count, "InstanceScaling.max_instance_count", 1, None, "instances")
        low, high = self.min_instance_count, self.max_instance_count
        if not is_unresolved(low) and not is_unresolved(high) and low > high:
            raise PoolConfigError(
                "InstanceScaling.min_instance_count", low, f"at most max_instance_count ({high})"
            )

    def _render(self) -> sagemaker.CfnEndpointConfig.ManagedInstanceScalingProperty:
        return sagemaker.CfnEndpointConfig.ManagedInstanceScalingProperty(
            status="ENABLED", min_instance_count=self.min_instance_count, max_instance_count=self.max_instance_count
        )


@dataclass(frozen=True, kw_only=True)
class ComponentSpec:
    """What one copy of an inference component needs on one instance type.

    Args:
        model: the model build for this instance type (rendered as the specification's ``ModelName``).
        min_memory_in_mb: host memory reserved for one copy, in MB (128 or more). This is the
            instance's RAM, not accelerator memory (``MinMemoryRequiredInMb``).
        instance_type: the pool's instance type this specification is for. Required when a
            component has several specifications. Default: none, for a component with one
            specification that may land on any of the endpoint's pools.
        accelerator_count: GPUs or Neuron devices per copy (1 or more;
            ``NumberOfAcceleratorDevicesRequired``). Default: none reserved.
        cpu_cores: CPU cores per copy (0.25 or more; ``NumberOfCpuCoresRequired``). Default: none reserved.
        max_memory_in_mb: host memory cap per copy, in MB (at least ``min_memory_in_mb``).
            Default: none.
        model_data_download_timeout: 60-3600 s to download the model (``StartupParameters``).
            Default: SageMaker's.
        container_startup_health_check_timeout: 60-3600 s for the container to pass its
            health check. Default: SageMaker's.
        max_concurrency: concurrent requests one copy sustains on this type at the latency you
            accept (from a benchmark); weighted copy scaling divides the type's
            ``ConcurrentRequestsPerCopy`` by it. Default: the pool's ``max_concurrency``.
    """

    model: IModel
    min_memory_in_mb: int
    instance_type: str | None = None
    accelerator_count: float | None = None
    cpu_cores: float | None = None
    max_memory_in_mb: int | None = None
    model_data_download_timeout: Duration | None = None
    container_startup_health_check_timeout: Duration | None = None
    max_concurrency: float | None = None

    def __post_init__(self) -> None:
        name = "ComponentSpec"
        if not isinstance(self.model, IModel):
            raise PoolConfigError(f"{name}.model", self.model, "a PoolModel (or PoolModel.from_model_name(...))")
        if self.instance_type is not None:
            check_instance_type(self.instance_type, f"{name}.instance_type", allow_unknown=True)
        check_int_range(self.min_memory_in_mb, f"{name}.min_memory_in_mb", 128, None, "MB")
        check_int_range(self.max_memory_in_mb, f"{name}.max_memory_in_mb", 128, None, "MB")
        low, high = self.min_memory_in_mb, self.max_memory_in_mb
        if high is not None and not is_unresolved(low) and not is_unresolved(high) and high < low:
            raise PoolConfigError(f"{name}.max_memory_in_mb", high, f"at least min_memory_in_mb ({low} MB)")
        _check_number(self.accelerator_count, f"{name}.accelerator_count", 1, "a number of accelerators, 1 or more")
        _check_number(self.cpu_cores, f"{name}.cpu_cores", 0.25, "a number of CPU cores, 0.25 or more")
        if self.max_concurrency is not None and not is_unresolved(self.max_concurrency):
            mc = self.max_concurrency
            if isinstance(mc, bool) or not isinstance(mc, numbers.Real) or mc != mc or not mc > 0:
                raise PoolConfigError(f"{name}.max_concurrency", mc, "a number > 0 (concurrent requests one copy sustains)")
        # Checked here so that a bad value fails where it is written; rendered in _startup().
        seconds_in_range(self.model_data_download_timeout, f"{name}.model_data_download_timeout", 60, 3600)
        seconds_in_range(
            self.container_startup_health_check_timeout, f"{name}.container_startup_health_check_timeout", 60, 3600
        )

    def _requirements(self) -> sagemaker.CfnInferenceComponent.InferenceComponentComputeResourceRequirementsProperty:
        return sagemaker.CfnInferenceComponent.InferenceComponentComputeResourceRequirementsProperty(
            min_memory_required_in_mb=self.min_memory_in_mb,
            max_memory_required_in_mb=self.max_memory_in_mb,
            number_of_accelerator_devices_required=self.accelerator_count,
            number_of_cpu_cores_required=self.cpu_cores,
        )

    def _startup(self) -> sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty | None:
        download = seconds_in_range(self.model_data_download_timeout, "", 60, 3600)
        health = seconds_in_range(self.container_startup_health_check_timeout, "", 60, 3600)
        if download is None and health is None:
            return None
        return sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty(
            model_data_download_timeout_in_seconds=download,
            container_startup_health_check_timeout_in_seconds=health,
        )


@dataclass(frozen=True)
class ComponentBatchSize:
    """A step of a component's rolling deployment: a number of copies or a percentage of them."""

    type: str
    value: int

    @staticmethod
    def copies(count: int) -> "ComponentBatchSize":
        """``count`` copies (1 or more)."""
        check_int_range(count, "ComponentBatchSize.copies", 1, None, "copies")
        return ComponentBatchSize("COPY_COUNT", count)

    @staticmethod
    def percent(percent: int) -> "ComponentBatchSize":
        """``percent`` % of the component's copies (1-100)."""
        check_int_range(percent, "ComponentBatchSize.percent", 1, 100, "%")
        return ComponentBatchSize("CAPACITY_PERCENT", percent)

    def _check(self, field: str, low: int, high: int) -> None:
        if self.type == "CAPACITY_PERCENT" and not is_unresolved(self.value) and not low <= self.value <= high:
            raise PoolConfigError(field, f"{self.value}%", f"{low}% to {high}% of the component's copies")

    def _render(self) -> sagemaker.CfnInferenceComponent.InferenceComponentCapacitySizeProperty:
        return sagemaker.CfnInferenceComponent.InferenceComponentCapacitySizeProperty(type=self.type, value=self.value)


@dataclass(frozen=True)
class ComponentDeploymentPolicy:
    """How SageMaker rolls a changed component out (its ``DeploymentConfig``).

    A component has its own policy, apart from the endpoint's: changing a component's model
    or resources replaces its copies in batches, watching ``rollback_alarms``. Build one with
    :meth:`rolling`. Ranges: API reference, ``InferenceComponentRollingUpdatePolicy``.
    """

    _rolling: sagemaker.CfnInferenceComponent.InferenceComponentRollingUpdatePolicyProperty
    rollback_alarms: tuple[cloudwatch.IAlarm, ...] = field(default=())

    @staticmethod
    def rolling(
        *,
        batch_size: ComponentBatchSize,
        bake_time: Duration,
        rollback_batch_size: ComponentBatchSize | None = None,
        max_execution_timeout: Duration | None = None,
        rollback_alarms: Sequence[cloudwatch.IAlarm] = (),
    ) -> "ComponentDeploymentPolicy":
        """Replace ``batch_size`` copies at a time, watching the alarms for ``bake_time`` after each batch.

        Args:
            batch_size: ``ComponentBatchSize.copies(n)`` or ``.percent(5-50)``.
            bake_time: how long each batch is watched (0-3600 s).
            rollback_batch_size: batch size when rolling back. Default: all copies at once.
            max_execution_timeout: give up after (600-28800 s). Default: SageMaker's.
            rollback_alarms: 0-10 CloudWatch alarms that roll the deployment back. Default: none.
        """
        name = "ComponentDeploymentPolicy.rolling"
        if not isinstance(batch_size, ComponentBatchSize):
            raise PoolConfigError(f"{name}.batch_size", batch_size, "ComponentBatchSize.copies(...) or .percent(...)")
        batch_size._check(f"{name}.batch_size", 5, 50)
        if rollback_batch_size is not None:
            if not isinstance(rollback_batch_size, ComponentBatchSize):
                raise PoolConfigError(
                    f"{name}.rollback_batch_size", rollback_batch_size, "ComponentBatchSize.copies(...) or .percent(...)"
                )
            rollback_batch_size._check(f"{name}.rollback_batch_size", 1, 100)
        if not isinstance(bake_time, Duration):
            raise PoolConfigError(f"{name}.bake_time", bake_time, "an aws_cdk.Duration from 0 to 3600 seconds")
        bake = seconds_in_range(bake_time, f"{name}.bake_time", 0, 3600)
        timeout = seconds_in_range(max_execution_timeout, f"{name}.max_execution_timeout", 600, 28800)
        alarms = tuple(rollback_alarms)
        if len(alarms) > _MAX_ALARMS:
            raise PoolConfigError(f"{name}.rollback_alarms", f"{len(alarms)} alarms", "at most 10 CloudWatch alarms")
        for alarm in alarms:
            if not hasattr(alarm, "alarm_name") or not hasattr(alarm, "alarm_arn"):
                raise PoolConfigError(f"{name}.rollback_alarms", alarm, "aws_cloudwatch.IAlarm objects")
        return ComponentDeploymentPolicy(
            sagemaker.CfnInferenceComponent.InferenceComponentRollingUpdatePolicyProperty(
                maximum_batch_size=batch_size._render(),
                wait_interval_in_seconds=bake,
                maximum_execution_timeout_in_seconds=timeout,
                rollback_maximum_batch_size=rollback_batch_size._render() if rollback_batch_size else None,
            ),
            alarms,
        )

    def _render(self) -> sagemaker.CfnInferenceComponent.InferenceComponentDeploymentConfigProperty:
        rollback = None
        if self.rollback_alarms:
            rollback = sagemaker.CfnInferenceComponent.AutoRollbackConfigurationProperty(
                alarms=[sagemaker.CfnInferenceComponent.AlarmProperty(alarm_name=a.alarm_name) for a in self.rollback_alarms]
            )
        return sagemaker.CfnInferenceComponent.InferenceComponentDeploymentConfigProperty(
            rolling_update_policy=self._rolling, auto_rollback_configuration=rollback
        )


class InferenceComponent(Resource):
    """A model hosted on a pooled endpoint as an inference component (``AWS::SageMaker::InferenceComponent``).

    Usually made with :meth:`PooledEndpoint.add_inference_component`.

    Args:
        scope: parent construct.
        id: construct id (the logical id derives from it: keep it stable).
        endpoint: a :class:`~sagemaker_pools.PooledEndpoint` made without a variant model.
        specifications: 1-5 :class:`ComponentSpec`, one per instance type, each type one of
            the endpoint's pools. One specification without ``instance_type`` may land on any pool.
        copy_count: copies to run at creation (0 or more). Default: 1. Under copy autoscaling
            the live count moves; a deploy does not reset it (``CopyCount`` is write-only in
            CloudFormation and only sent when it changes in the template).
        deployment: how changes roll out, see :class:`ComponentDeploymentPolicy`. Default: SageMaker's.
        inference_component_name: a fixed name. Default: one derived from the construct path
            (a name is needed for the component's metrics and its scalable target).
        tags: tags for the component. Default: none.

    Every rule is checked before anything is created. A request that exceeds what one
    instance of the type has (see :mod:`sagemaker_pools.hardware`) is refused; a type missing
    from that table is not checked, with a warning.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        endpoint: ComponentHost,
        specifications: Sequence[ComponentSpec],
        copy_count: int = 1,
        deployment: ComponentDeploymentPolicy | None = None,
        inference_component_name: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        field_ = "InferenceComponent"
        if not endpoint.hosts_inference_components:
            raise PoolConfigError(
                f"{field_}.endpoint",
                endpoint,
                "a PooledEndpoint made without a model (and with instance_scaling): inference components "
                "run on endpoints whose variant has no model",
            )
        specs = _check_specifications(specifications, endpoint, f"{field_}.specifications")
        unchecked = _check_hardware(specs, endpoint, f"{field_}.specifications")
        check_int_range(copy_count, f"{field_}.copy_count", 0, None, "copies")
        if deployment is not None and not isinstance(deployment, ComponentDeploymentPolicy):
            raise PoolConfigError(f"{field_}.deployment", deployment, "a ComponentDeploymentPolicy (rolling)")
        check_name(inference_component_name, f"{field_}.inference_component_name")
        name_claim = check_name_is_free(scope, inference_component_name, f"{field_}.inference_component_name", "inference component")
        check_tags(tags, f"{field_}.tags")

        super().__init__(scope, id)
        remember_stack(self, scope, id)
        self.endpoint = endpoint
        self.specifications: tuple[ComponentSpec, ...] = specs
        self.copy_count = copy_count
        # The ARN is the primary identifier (Ref); CloudFormation returns no name attribute, so
        # the name is always set. Lower case: SageMaker ARNs carry names in lower case.
        self._name = inference_component_name or Names.unique_resource_name(self, max_length=63, separator="-").lower()

        self._resource = sagemaker.CfnInferenceComponent(
            self,
            "Resource",
            endpoint_name=endpoint.endpoint_name,
            variant_name=endpoint.variant_name,
            inference_component_name=self._name,
            runtime_config=sagemaker.CfnInferenceComponent.InferenceComponentRuntimeConfigProperty(copy_count=copy_count),
            deployment_config=deployment._render() if deployment else None,
            **_render_specifications(specs),  # type: ignore[arg-type]
        )
        # CreateInferenceComponent needs the endpoint InService: a fixed endpoint name orders nothing.
        for resource in endpoint._name_dependencies():
            self._resource.add_resource_dependency(resource)
        for key, value in (tags or {}).items():
            Tags.of(self).add(key, value)
        if name_claim is not None:
            name_claim.take(self)
        for index, instance_type in unchecked:
            Annotations.of(self).add_warning_v2(
                "sagemaker-pools:unknown-hardware",
                f"specifications[{index}]: {instance_type} is not in sagemaker_pools.hardware; the accelerators, "
                "CPU cores and memory it requests were not checked against one instance of that type.",
            )
        covered = {s.instance_type for s in specs}
        if None not in covered:
            for pool in endpoint.pools:
                if pool.instance_type not in covered and not is_unresolved(pool.instance_type):
                    Annotations.of(self).add_warning_v2(
                        "sagemaker-pools:pool-without-specification",
                        f"No specification for pool {pool.instance_type}: copies of this component cannot be "
                        "placed on instances of that type when SageMaker falls back to it.",
                    )

    @property
    def inference_component_name(self) -> str:
        """The component's name (the ``InferenceComponentName`` dimension of its metrics)."""
        return self._name

    @property
    def inference_component_arn(self) -> str:
        """The component's ARN."""
        return str(self._resource.attr_inference_component_arn)

    # -- metrics -------------------------------------------------------------------------------

    def metric(
        self, metric_name: str, *, instance_type: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Any SageMaker metric of this component (dimension ``InferenceComponentName``), for all types or one.

        Args:
            metric_name: e.g. ``"ConcurrentRequestsPerCopy"``, ``"GPUUtilizationNormalized"``.
            instance_type: adds the ``InstanceType`` dimension; one of the endpoint's pools.
                Default: all instance types.
            options: see :class:`~sagemaker_pools.metrics.MetricOptions` (dimensions are merged).
        """
        if instance_type is not None and not is_unresolved(instance_type):
            types = [p.instance_type for p in self.endpoint.pools]
            if instance_type not in types:
                raise PoolConfigError("InferenceComponent.metric.instance_type", instance_type, f"one of the endpoint's pools: {', '.join(types)}")
        return sagemaker_metric(metric_name, self._source, instance_type=instance_type, **options)

    def metric_concurrent_requests_per_copy(
        self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """``ConcurrentRequestsPerCopy`` (in flight per copy). Default: Maximum (documented: Min, Max)."""
        return self.metric("ConcurrentRequestsPerCopy", instance_type=instance_type, **options)

    def metric_invocations_per_copy(self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``InvocationsPerCopy`` (requests / copies). Default: Sum."""
        return self.metric("InvocationsPerCopy", instance_type=instance_type, **options)

    def metric_no_capacity_invocation_failures(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``NoCapacityInvocationFailures``: requests that found no copy (the component is at zero). Default: Sum."""
        return self.metric("NoCapacityInvocationFailures", **options)

    def metric_weighted_utilization(
        self,
        *,
        strategy: UtilizationStrategy = DEFAULT_UTILIZATION_STRATEGY,
        statistic: str = "Maximum",
        period: Duration = Duration.minutes(1),
        label: str | None = None,
    ) -> cloudwatch.MathExpression:
        """Utilization per copy in 0.0-1.0: each type's ``ConcurrentRequestsPerCopy`` / its ``max_concurrency``.

        Read per ``InstanceType`` (SageMaker publishes component metrics with ``InferenceComponentName``
        and ``InstanceType`` on a pooled endpoint), over the types this component has a
        specification for. ``max_concurrency`` comes from each :class:`ComponentSpec`, else from the pool.
        See :func:`~sagemaker_pools.metrics.weighted_utilization`.
        """
        return to_cloudwatch(  # type: ignore[return-value]
            self._weighted_utilization_query(
                strategy=strategy,
                statistic=statistic,
                period=concrete_seconds(period, "InferenceComponent.metric_weighted_utilization.period", PERIOD_IS_CHECKED),
                label=label,
            ),
            period=period,
        )

    def _weighted_utilization_query(
        self, *, strategy: UtilizationStrategy, statistic: str, period: int = 60, label: str | None = None, zero_when_idle: bool = False
    ) -> Math:
        return weighted_utilization_query(
            self._source,
            self._utilization_pools(),
            strategy=strategy,
            statistic=statistic,
            period=period,
            label=label,
            field="InferenceComponent",
            zero_when_idle=zero_when_idle,
        )

    @property
    def _source(self) -> MetricSource:
        return MetricSource.inference_component(self._name)

    def _utilization_pools(self) -> list[InstancePool]:
        by_type = {s.instance_type: s for s in self.specifications}
        pools = []
        for pool in self.endpoint.pools:
            spec = by_type.get(pool.instance_type) or by_type.get(None)
            if spec is None:
                continue  # no copies land there
            concurrency = spec.max_concurrency if spec.max_concurrency is not None else pool.max_concurrency
            pools.append(InstancePool(instance_type=pool.instance_type, priority=pool.priority, max_concurrency=concurrency, allow_unknown_instance_type=True))
        return pools

    # -- copy autoscaling ----------------------------------------------------------------------

    #: The :class:`ComponentScaling` made by :meth:`auto_scale`, once called.
    auto_scaling: "ComponentScaling | None" = None

    def auto_scale(
        self, *, max_copies: int, min_copies: int = 0, scale_from_zero: bool = True
    ) -> "ComponentScaling":
        """Let Application Auto Scaling change this component's copy count; add policies to the result.

        Makes an ``AWS::ApplicationAutoScaling::ScalableTarget`` on
        ``sagemaker:inference-component:DesiredCopyCount`` (construct id ``CopyScaling``). With
        ``min_copies=0`` a target-tracking policy can take the component to zero copies, and
        managed instance scaling then the endpoint to zero instances; target tracking cannot
        leave zero (there is no copy to measure), so unless ``scale_from_zero=False`` this also
        adds the step policy AWS prescribes for that (:meth:`ComponentScaling.scale_from_zero`).
        E.g.::

            component.auto_scale(max_copies=8).scale_on_concurrency(target=4)

        Args:
            max_copies: the most copies (1 or more).
            min_copies: the fewest copies. Default: 0 (scale to zero).
            scale_from_zero: with ``min_copies=0``, add the scale-from-zero step policy and its
                alarm. Default: ``True``.
        """
        field = "InferenceComponent.auto_scale"
        if self.node.try_find_child("CopyScaling") is not None:
            raise PoolConfigError(field, "a second call", "one call per component: add policies to the ComponentScaling it returned")
        if not isinstance(scale_from_zero, bool):
            raise PoolConfigError(f"{field}.scale_from_zero", scale_from_zero, "True or False")
        check_int_range(min_copies, f"{field}.min_copies", 0, None, "copies")
        check_int_range(max_copies, f"{field}.max_copies", 1, None, "copies")
        check_min_max(min_copies, max_copies, field, "min_copies", "max_copies")
        copies = self.copy_count
        if not is_unresolved(copies) and not is_unresolved(max_copies) and isinstance(max_copies, int) and max_copies < copies:
            raise PoolConfigError(f"{field}.max_copies", max_copies, f"at least copy_count ({copies})")
        if not is_unresolved(copies) and not is_unresolved(min_copies) and isinstance(min_copies, int) and min_copies > copies:
            raise PoolConfigError(f"{field}.min_copies", min_copies, f"at most copy_count ({copies})")
        scaling = ComponentScaling(self, "CopyScaling", component=self, min_copies=min_copies, max_copies=max_copies)
        if scale_from_zero and not is_unresolved(min_copies) and min_copies == 0:
            scaling.scale_from_zero()
        self.auto_scaling = scaling
        return scaling


def _check_specifications(
    specifications: Sequence[ComponentSpec], endpoint: ComponentHost, field: str
) -> tuple[ComponentSpec, ...]:
    if isinstance(specifications, (str, bytes)) or not isinstance(specifications, Sequence):
        raise PoolConfigError(field, specifications, "a list of 1 to 5 ComponentSpec objects")
    if not 1 <= len(specifications) <= MAX_SPECIFICATIONS:
        raise PoolConfigError(field, f"{len(specifications)} specifications", "1 to 5 (one per instance type)")
    pool_types = [p.instance_type for p in endpoint.pools]
    seen: set[str] = set()
    for index, spec in enumerate(specifications):
        item = f"{field}[{index}]"
        if not isinstance(spec, ComponentSpec):
            raise PoolConfigError(item, spec, "a ComponentSpec")
        itype = spec.instance_type
        if itype is None:
            if len(specifications) > 1:
                raise PoolConfigError(
                    f"{item}.instance_type",
                    None,
                    f"one of the endpoint's pools ({', '.join(pool_types)}): a component with several "
                    "specifications needs the instance type of each",
                )
            continue
        if is_unresolved(itype):
            continue
        if itype not in pool_types and not any(is_unresolved(t) for t in pool_types):
            raise PoolConfigError(f"{item}.instance_type", itype, f"one of the endpoint's pools: {', '.join(pool_types)}")
        if itype in seen:
            raise PoolConfigError(f"{item}.instance_type", itype, "each instance type once")
        seen.add(itype)
        if len(specifications) == 1 and len(pool_types) > 1:
            raise PoolConfigError(
                f"{item}.instance_type",
                itype,
                "None (the specification then applies on every pool), or one specification per pool type: "
                "CloudFormation's Specifications needs at least two entries and its singular Specification "
                "takes no InstanceType, so a single specification cannot be limited to one of several pools",
            )
    return tuple(specifications)


def _check_hardware(
    specs: tuple[ComponentSpec, ...], endpoint: ComponentHost, field: str
) -> list[tuple[int, str]]:
    """Refuse requests larger than one instance; return the (index, type) pairs not in the table."""
    unchecked: list[tuple[int, str]] = []
    for index, spec in enumerate(specs):
        # A specification without a type may land on every pool: it must fit each.
        targets = [spec.instance_type] if spec.instance_type is not None else [p.instance_type for p in endpoint.pools]
        for itype in targets:
            if is_unresolved(itype):
                continue
            hardware = hardware_of(itype)
            if hardware is None:
                unchecked.append((index, itype))
                continue
            _fits(spec, itype, hardware, f"{field}[{index}]")
    return unchecked


def _fits(spec: ComponentSpec, itype: str, hw: InstanceHardware, item: str) -> None:
    has = f"one instance of {itype} has {hw.accelerators} accelerators, {hw.vcpus} vCPUs and {hw.memory_mib} MB of host memory"
    checks: list[tuple[str, object, float, str]] = [
        ("accelerator_count", spec.accelerator_count, hw.accelerators, f"at most {hw.accelerators}"),
        ("cpu_cores", spec.cpu_cores, hw.vcpus, f"at most {hw.vcpus}"),
        ("min_memory_in_mb", spec.min_memory_in_mb, hw.memory_mib, f"at most {hw.memory_mib} MB"),
        ("max_memory_in_mb", spec.max_memory_in_mb, hw.memory_mib, f"at most {hw.memory_mib} MB"),
    ]
    for name, value, limit, allowed in checks:
        if value is None or is_unresolved(value):
            continue
        if value > limit:  # type: ignore[operator]
            raise PoolConfigError(f"{item}.{name}", value, f"{allowed}: {has} (sagemaker_pools.hardware)")


def _render_specifications(specs: tuple[ComponentSpec, ...]) -> dict[str, object]:
    cfn = sagemaker.CfnInferenceComponent
    if len(specs) == 1:
        spec = specs[0]
        return {
            "specification": cfn.InferenceComponentSpecificationProperty(
                model_name=spec.model.model_name,
                compute_resource_requirements=spec._requirements(),
                startup_parameters=spec._startup(),
            )
        }
    return {
        "specifications": [
            cfn.InferenceComponentSpecificationForInstanceTypeProperty(
                instance_type=spec.instance_type,  # type: ignore[arg-type]  # checked: set when several
                model_name=spec.model.model_name,
                compute_resource_requirements=spec._requirements(),
                startup_parameters=spec._startup(),
            )
            for spec in specs
        ]
    }


class ComponentScaling(ScalableCapacity):
    """Autoscaling of an inference component's copy count. Made by :meth:`InferenceComponent.auto_scale`.

    Target tracking (one or more of the ``scale_on_*`` methods) adds and removes copies;
    managed instance scaling adds and removes the instances that hold them, from the pools in
    priority order. :meth:`scale_from_zero` brings a component back from zero copies.
    Every target-tracking policy here (``scale_on_*``, ``scale_to_track_metric``,
    ``scale_to_track_predefined``) has a scale-out cooldown of 20 minutes (``DEFAULT_COLD_START``)
    unless given one: Application Auto Scaling's default for inference components is 0 in its API
    reference and 300 s in its user guide, and either scales out again while the copies just added
    are still starting where SageMaker takes a change during an update (docs/scaling.md,
    "Cooldowns and start-up").

    Attributes:
        component: the scaled component.
        scale_from_zero_step: the step policy and alarm of :meth:`scale_from_zero`, once added.
    """

    def __init__(self, scope: Construct, id: str, *, component: InferenceComponent, min_copies: int, max_copies: int) -> None:
        default_child = component.node.default_child
        super().__init__(
            scope,
            id,
            resource_id=inference_component_resource_id(component.inference_component_name),
            scalable_dimension=INFERENCE_COMPONENT_COPY_COUNT,
            min_capacity=min_copies,
            max_capacity=max_copies,
            # The component's name is a literal: without this the target could come first.
            depends_on=[default_child] if isinstance(default_child, sagemaker.CfnInferenceComponent) else [],
            field="InferenceComponent.auto_scale",
        )
        self.component = component
        self.scale_from_zero_step: StepScaling | None = None

    def scale_on_concurrency(
        self,
        *,
        target: float,
        scale_in_cooldown: Duration | None = None,
        scale_out_cooldown: Duration | None = None,
        disable_scale_in: bool = False,
    ) -> appscaling.CfnScalingPolicy:
        """Hold concurrent requests per copy at ``target`` (construct id ``ConcurrentRequestsPerCopy``).

        The predefined high-resolution metric ``SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution``
        (10-second data: scales out faster than invocation counts). It ignores the instance type.
        """
        return self.scale_to_track_predefined(
            "ConcurrentRequestsPerCopy",
            target_value=target,
            predefined_metric_type="SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
            scale_in_cooldown=scale_in_cooldown,
            scale_out_cooldown=scale_out_cooldown,
            disable_scale_in=disable_scale_in,
        )

    def scale_on_invocations_per_copy(
        self,
        *,
        target: float,
        scale_in_cooldown: Duration | None = None,
        scale_out_cooldown: Duration | None = None,
        disable_scale_in: bool = False,
    ) -> appscaling.CfnScalingPolicy:
        """Hold invocations per copy per minute at ``target`` (``SageMakerInferenceComponentInvocationsPerCopy``).

        The policy of AWS's scale-to-zero example. Construct id ``InvocationsPerCopy``.
        """
        return self.scale_to_track_predefined(
            "InvocationsPerCopy",
            target_value=target,
            predefined_metric_type="SageMakerInferenceComponentInvocationsPerCopy",
            scale_in_cooldown=scale_in_cooldown,
            scale_out_cooldown=scale_out_cooldown,
            disable_scale_in=disable_scale_in,
        )

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
        """Hold the utilization per copy, weighted by instance type, at ``target`` (construct id ``WeightedUtilization``).

        The metric is :meth:`InferenceComponent.metric_weighted_utilization`: per type,
        ``ConcurrentRequestsPerCopy`` with the ``InstanceType`` dimension divided by what one copy
        of that type sustains; every type this component lands on needs ``max_concurrency``.
        A type without copies reads 0 and cannot dilute the default ``MAX_OVER_TYPES``. The
        tracked signal exists only while some copy reports ``CPUUtilizationNormalized`` (one sample
        per copy a minute), and then a missing concurrency reads 0: whether an idle copy publishes
        ``ConcurrentRequestsPerCopy`` zeros is undocumented, and a policy whose metric has no data
        never scales in, so without it an idle component could keep its copies (and instances) for
        ever; with no copy serving (at zero, or while a wake-up's copy loads) it reads nothing.

        Args:
            target: in (0, 1]. Default: 0.7.
            strategy: Default: ``UtilizationStrategy.MAX_OVER_TYPES``.
            statistic: of ``ConcurrentRequestsPerCopy``. Default: ``"Maximum"``.
            others: as :meth:`~sagemaker_pools.scaling.ScalableCapacity.scale_to_track_metric`.
        """
        return self._track_utilization(
            lambda: self.component._weighted_utilization_query(strategy=strategy, statistic=statistic, zero_when_idle=True),
            target,
            (scale_in_cooldown, scale_out_cooldown, disable_scale_in),
        )

    def _target_tracking(
        self,
        id: str,
        target_value: float,
        behaviour: tuple[Duration | None, Duration | None, bool],
        **metric: object,
    ) -> appscaling.CfnScalingPolicy:
        """Every target-tracking policy of a component: a scale-out cooldown of ``DEFAULT_COLD_START`` unless given.

        Application Auto Scaling's own default for inference components is 0 (API reference,
        ``TargetTrackingScalingPolicyConfiguration``: 300 s only for the listed resource types,
        SageMaker endpoint variants among them, "For all other scalable targets, the default
        value is 0"), and a copy that needs a new instance serves only after the instance's
        start-up and its own load: with no cooldown the policy scales out again every time
        its alarm fires on a signal the new copies have not lowered yet. Within the cooldown
        the added copies count as done and a larger scale-out still goes through (docs/scaling.md).
        """
        scale_in_cooldown, scale_out_cooldown, disable_scale_in = behaviour
        if scale_out_cooldown is None:
            scale_out_cooldown = DEFAULT_COLD_START
        return super()._target_tracking(id, target_value, (scale_in_cooldown, scale_out_cooldown, disable_scale_in), **metric)

    def scale_from_zero(self, *, cooldown: Duration | None = None) -> StepScaling:
        """Set one copy when a request finds none (construct ids ``ScaleFromZero`` and ``ScaleFromZeroAlarm``).

        AWS's recipe ("Scale an endpoint to zero instances",
        https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html):
        a step policy (``MetricAggregationType`` Maximum) triggered by an alarm on
        ``NoCapacityInvocationFailures`` (dimension ``InferenceComponentName``, Sum over 60 s, 1 of
        1 periods). Three deliberate differences. The alarm fires at >= 1 failure, where the
        page's CLI example uses ``GreaterThanThreshold 1`` (two failures in a minute): with it, a
        single request that finds no capacity, and is not retried, never wakes the component. The
        step is ``ExactCapacity`` 1, not ``ChangeInCapacity`` +1: the alarm re-invokes the policy
        every minute until the first copy serves, and an exact capacity asks for one copy however
        often it is invoked, whatever SageMaker does with a change asked for while the component
        is updating. And since ``ExactCapacity`` would lower a larger copy count, the alarm reads
        ``IF(FILL(busy, 0) > 0, 0, failures)``: a minute in which any copy reports requests
        (``ConcurrentRequestsPerCopy`` Maximum, component-wide) never breaches (see
        :meth:`~sagemaker_pools.scaling.ScalableCapacity.wake_from_zero` and docs/scaling.md,
        "Waking from zero"). SageMaker provisions an instance from the highest-priority pool with
        capacity (managed instance scaling); requests fail until a copy is in service.

        Args:
            cooldown: the step policy's cooldown, 60 s to one day. Default: 300 s
                (``DEFAULT_WAKE_UP_COOLDOWN``, Application Auto Scaling's own).
        """
        if self.scale_from_zero_step is not None:
            raise PoolConfigError("InferenceComponent.auto_scale.scale_from_zero", "a second call", "one scale-from-zero policy per component")
        if not is_unresolved(self.min_capacity) and self.min_capacity != 0:
            raise PoolConfigError(
                "InferenceComponent.auto_scale.scale_from_zero", f"min_copies={self.min_capacity}", "min_copies=0: there is no zero to leave otherwise"
            )
        one_minute = Duration.minutes(1)
        step = self.wake_from_zero(
            "ScaleFromZero",
            metric=cloudwatch.MathExpression(
                expression="IF(FILL(busy, 0) > 0, 0, failures)",
                using_metrics={
                    "failures": self.component.metric_no_capacity_invocation_failures(statistic="Sum", period=one_minute),
                    "busy": self.component.metric_concurrent_requests_per_copy(statistic="Maximum", period=one_minute),
                },
                period=one_minute,
                label="Requests that found no copy (none while a copy serves)",
            ),
            cooldown=cooldown,
            evaluation_periods=1,
            alarm_description=f"A request found no copy of inference component {self.component.inference_component_name}: set one.",
        )
        self.scale_from_zero_step = step
        return step
