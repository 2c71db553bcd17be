"""``PooledEndpoint``: a SageMaker endpoint whose variant falls back across instance pools.

Renders an ``AWS::SageMaker::EndpointConfig`` (never a fixed name: every property but Tags is
create-only, so a change must produce a new config) whose single production variant lists
``InstancePools`` instead of an ``InstanceType``, and an ``AWS::SageMaker::Endpoint`` (the
construct's default child) that takes each new config in place through UpdateEndpoint.

Three kinds, as in the launch post: a single-model endpoint (``model=``), an endpoint that hosts
inference components (no model, ``instance_scaling=``, then :meth:`PooledEndpoint.add_inference_component`),
and an asynchronous endpoint (``model=`` and ``async_inference=``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Unpack

import jsii

from aws_cdk import Annotations, ArnFormat, CfnResource, Duration, IStableNumberProducer, Lazy, Resource, Stack, Tags
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, IConstruct

from ._l1 import l1_properties
from ._roles import as_role, default_policy_of, new_execution_role, wait_for
from ._tokens import is_unresolved
from ._tree import remember_stack
from ._unique_names import check_name_is_free
from ._validate import check_int_range, check_min_max, check_name, check_tags, concrete_seconds, seconds_in_range
from .async_inference import AsyncInference
from .data_capture import DataCapture
from .deployment import DeploymentPolicy
from .errors import PoolConfigError
from .inference_component import ComponentDeploymentPolicy, ComponentSpec, InferenceComponent, InstanceScaling
from .instance_types import has_instance_storage, is_inf1
from .metrics import (
    DEFAULT_INSTANCE_COUNT_SOURCE,
    DEFAULT_UTILIZATION_STRATEGY,
    PERIOD_IS_CHECKED,
    InstanceCountSource,
    MetricOptions,
    MetricSource,
    UtilizationStrategy,
    instance_count_metric,
    sagemaker_metric,
    sagemaker_stat,
    weighted_utilization,
)
from .pools import IModel, InstancePool, resolve_pools
from .queries import Math, Query
from .routing import Routing
from .shadow import PRODUCTION_WEIGHT, ShadowVariant
from .scaling import VARIANT_INSTANCE_COUNT, ScalableCapacity, VariantScaling, variant_resource_id

__all__ = ["EndpointBase", "PooledEndpoint"]

#: SageMaker's default variant name (what the console and the SDKs use).
DEFAULT_VARIANT_NAME = "AllTraffic"
#: The longest ``VariantInstanceProvisionTimeoutInSeconds`` SageMaker accepts.
MAX_PROVISION_TIMEOUT_S = 3600


class EndpointBase(Resource):
    """What every pooled endpoint offers, created here or imported: its name, ARN and grants.

    Attributes:
        variant_name: the production variant.
        pools: the pools in priority order; ``None`` for an imported endpoint (pass them where needed).
        auto_scaling: the variant's autoscaling once :meth:`PooledEndpoint.auto_scale` was called.
        deployment: the endpoint's deployment policy; ``None`` for SageMaker's default or an
            imported endpoint.
    """

    pools: tuple[InstancePool, ...] | None = None
    auto_scaling: VariantScaling | None = None
    deployment: DeploymentPolicy | None = None
    #: True for an endpoint made without a variant model (it hosts inference components).
    hosts_inference_components: bool = False
    #: The shadow variant beside production, if any (dashboards show it; alarms and scaling never do).
    shadow: ShadowVariant | None = None

    def __init__(self, scope: Construct, id: str, *, variant_name: str) -> None:
        super().__init__(scope, id)
        remember_stack(self, scope, id)
        self.variant_name = variant_name

    def pools_or(self, pools: Sequence[InstancePool] | None, field: str) -> tuple[InstancePool, ...]:
        """``pools`` validated, or this endpoint's own pools when ``pools`` is None.

        Raises:
            PoolConfigError: neither is there (an imported endpoint needs ``pools=``), or ``pools`` is invalid.
        """
        if pools is not None:
            return resolve_pools(pools, f"{field}.pools")
        if self.pools is None:
            raise PoolConfigError(f"{field}.pools", None, "the endpoint's InstancePool list (required for an imported endpoint)")
        return self.pools

    @property
    def endpoint_name(self) -> str:
        """The endpoint's name (a token for a generated name)."""
        raise NotImplementedError

    @property
    def has_generated_name(self) -> bool:
        """True when CloudFormation generates the endpoint's name, so that whatever reads it
        (``Fn::GetAtt``) must come after the endpoint. False for a fixed name (a literal or a
        ``CfnParameter``) and for an imported endpoint."""
        return False

    @property
    def endpoint_arn(self) -> str:
        """The endpoint's ARN."""
        raise NotImplementedError

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` call InvokeEndpoint and InvokeEndpointWithResponseStream on this endpoint only."""
        return iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"],
            resource_arns=[self.endpoint_arn],
        )

    def grant_benchmark(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee``, the role a SageMaker AI benchmark job runs as, send this endpoint the
        benchmark's requests: the invoke actions of :meth:`grant_invoke`, on this endpoint only.

        The job's other needs (its output prefix, a dataset) are :class:`~sagemaker_pools.BenchmarkRole`'s.
        """
        return self.grant_invoke(grantee)

    # -- metrics: thin wrappers over sagemaker_pools.metrics ------------------------

    def metric(
        self,
        metric_name: str,
        *,
        instance_type: str | None = None,
        namespace: str | None = None,
        **options: Unpack[MetricOptions],
    ) -> cloudwatch.Metric:
        """Any SageMaker metric of this variant, for all its instance types or one.

        Args:
            metric_name: e.g. ``"ModelLatency"`` (namespace, statistic and unit come from
                :data:`sagemaker_pools.metrics.SAGEMAKER_METRICS`).
            instance_type: adds the ``InstanceType`` dimension; on a ``PooledEndpoint`` it must be
                one of its pools. Default: all instance types.
            namespace: required only for a metric the library does not know. Default: documented.
            options: statistic, period (default 1 minute), label, color, unit, dimensions_map
                (merged with ``EndpointName``/``VariantName``, never replacing them), account, region.
        """
        self._check_metric_instance_type(instance_type)
        source = MetricSource.variant(self.endpoint_name, self.variant_name)
        return sagemaker_metric(metric_name, source, instance_type=instance_type, namespace=namespace, **options)

    def _check_metric_instance_type(self, instance_type: str | None) -> None:
        if instance_type is not None and self.pools and not is_unresolved(instance_type):
            types = [p.instance_type for p in self.pools]
            if instance_type not in types:
                raise PoolConfigError("metric.instance_type", instance_type, f"one of this endpoint's pools: {', '.join(types)}")

    def metric_model_latency(self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``ModelLatency`` (microseconds, time in the container). Default: Average; pass ``statistic="p99"``."""
        return self.metric("ModelLatency", instance_type=instance_type, **options)

    def metric_overhead_latency(self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``OverheadLatency`` (microseconds SageMaker adds). Default: Average."""
        return self.metric("OverheadLatency", instance_type=instance_type, **options)

    def metric_concurrent_requests_per_model(
        self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """``ConcurrentRequestsPerModel`` (in flight per container, 10 s resolution). Default: Maximum (documented: Min, Max)."""
        return self.metric("ConcurrentRequestsPerModel", instance_type=instance_type, **options)

    def metric_cpu_utilization(self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``CPUUtilization`` (percent x vCPUs). Default: Average."""
        return self.metric("CPUUtilization", instance_type=instance_type, **options)

    def metric_memory_utilization(self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``MemoryUtilization`` (percent). Default: Average."""
        return self.metric("MemoryUtilization", instance_type=instance_type, **options)

    def metric_gpu_utilization(self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``GPUUtilization`` (percent x GPUs). Default: Average."""
        return self.metric("GPUUtilization", instance_type=instance_type, **options)

    def metric_gpu_memory_utilization(
        self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """``GPUMemoryUtilization`` (percent x GPUs). Default: Average."""
        return self.metric("GPUMemoryUtilization", instance_type=instance_type, **options)

    def metric_instance_count(
        self,
        *,
        instance_type: str | None = None,
        count_source: InstanceCountSource = DEFAULT_INSTANCE_COUNT_SOURCE,
        **options: Unpack[MetricOptions],
    ) -> cloudwatch.Metric:
        """The instances of the variant or of one type (see :func:`~sagemaker_pools.metrics.instance_count_metric`).

        Default: the ``SampleCount`` of ``CPUUtilization``, a documented metric (one sample per
        instance a minute); ``count_source=InstanceCountSource.INSTANCE_COUNT_METRIC`` reads
        ``InstanceCount``, which only the launch post names (``docs/aws-readings.md``).
        """
        self._check_metric_instance_type(instance_type)
        source = MetricSource.variant(self.endpoint_name, self.variant_name)
        return instance_count_metric(source, instance_type=instance_type, count_source=count_source, **options)

    def metric_invocations(self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``Invocations`` (requests). Default: Sum."""
        return self.metric("Invocations", instance_type=instance_type, **options)

    def metric_invocations_per_instance(
        self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """``InvocationsPerInstance`` (requests / instances). Default: Sum."""
        return self.metric("InvocationsPerInstance", instance_type=instance_type, **options)

    def metric_invocation_4xx_errors(self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``Invocation4XXErrors``. Default: Sum."""
        return self.metric("Invocation4XXErrors", instance_type=instance_type, **options)

    def metric_invocation_5xx_errors(self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``Invocation5XXErrors``. Default: Sum."""
        return self.metric("Invocation5XXErrors", instance_type=instance_type, **options)

    def metric_invocation_model_errors(
        self, *, instance_type: str | None = None, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """``InvocationModelErrors``. Default: Sum."""
        return self.metric("InvocationModelErrors", instance_type=instance_type, **options)

    def metric_weighted_utilization(
        self,
        *,
        strategy: UtilizationStrategy = DEFAULT_UTILIZATION_STRATEGY,
        pools: Sequence[InstancePool] | None = None,
        statistic: str = "Maximum",
        period: Duration = Duration.minutes(1),
        label: str | None = None,
    ) -> cloudwatch.MathExpression:
        """The fleet's utilization in 0.0-1.0: each type's concurrency / its pool's ``max_concurrency``.

        See :class:`~sagemaker_pools.metrics.UtilizationStrategy` and ``docs/scaling.md``.

        Args:
            strategy: Default: ``MAX_OVER_TYPES`` (never diluted by empty fallback pools).
            pools: the pools with ``max_concurrency``. Default: this endpoint's pools (required
                for an imported endpoint).
            statistic: of ``ConcurrentRequestsPerModel``. Default: Maximum.
            period: Default: 1 minute.
            label: Default: names the strategy.
        """
        concrete_seconds(period, "metric_weighted_utilization.period", PERIOD_IS_CHECKED)
        field = "metric_weighted_utilization" if pools is not None else "PooledEndpoint"
        resolved = self.pools_or(pools, "metric_weighted_utilization")
        source = MetricSource.variant(self.endpoint_name, self.variant_name)
        return weighted_utilization(source, resolved, strategy=strategy, statistic=statistic, period=period, label=label, field=field)


class _ImportedEndpoint(EndpointBase):
    def __init__(self, scope: Construct, id: str, endpoint_name: str, variant_name: str) -> None:
        super().__init__(scope, id, variant_name=variant_name)
        self._name = endpoint_name

    @property
    def endpoint_name(self) -> str:
        return self._name

    @property
    def endpoint_arn(self) -> str:
        # SageMaker ARNs carry the endpoint name in lower case (names are case-insensitive).
        name = self._name if is_unresolved(self._name) else self._name.lower()
        return Stack.of(self).format_arn(
            service="sagemaker", resource="endpoint", resource_name=name, arn_format=ArnFormat.SLASH_RESOURCE_NAME
        )


class PooledEndpoint(EndpointBase):
    """A real-time SageMaker endpoint on up to five instance types in priority order.

    Args:
        scope: parent construct.
        id: construct id. Logical ids derive from it: changing it replaces the endpoint.
        pools: 1-5 :class:`InstancePool`, highest priority first (or with explicit priorities).
        model: the variant's model, used by every pool without its own ``model``. Default:
            none, for an endpoint that hosts inference components (then ``instance_scaling``
            is required and the models come with each component, see :meth:`add_inference_component`).
        initial_instance_count: instances at creation. Default: the autoscaling minimum once
            :meth:`auto_scale` or :meth:`auto_scale_on_backlog` is called (at least 1), else
            ``instance_scaling.min_instance_count`` (at least 1), else 1; 1 when that minimum is a
            deploy-time parameter that may be 0. Given explicitly, it must lie within the
            autoscaling bounds.
        variant_name: the production variant's name. Default: ``"AllTraffic"``.
        provision_timeout: how long SageMaker retries insufficient-capacity errors before it
            moves to the next pool (``VariantInstanceProvisionTimeoutInSeconds``, 300-3600 s;
            covers instance acquisition only). Default: 20 minutes.
        routing: see :class:`Routing`. Default: least outstanding requests.
        deployment: how updates roll out, see :class:`DeploymentPolicy`. Default: SageMaker's
            (blue/green, all at once, no rollback alarms).
        kms_key: encrypts the EBS ML storage volume. Only for EBS-only instance types: types
            with NVMe instance storage encrypt it in hardware and SageMaker rejects a key.
            Default: SageMaker's transient key.
        volume_size_in_gb: EBS ML storage volume size, 1-512 (EBS-only types). Default: SageMaker's.
        model_data_download_timeout: 60-3600 s. Default: SageMaker's.
        container_startup_health_check_timeout: 60-3600 s. Default: SageMaker's.
        endpoint_name: a fixed endpoint name. Default: generated. A fixed name cannot be
            changed without replacing the endpoint, and no other endpoint of the app in the
            same account and region may have it (refused at construction).
        retain_scaled_capacity: keep the live instance count (and weight) when a deploy moves
            the endpoint to a new config, instead of resetting it to ``initial_instance_count``
            (``RetainAllVariantProperties``). Default: ``True``.
        instance_scaling: managed instance scaling, only for an endpoint without a model:
            SageMaker adds and releases instances to fit the components' copies, down to
            ``min_instance_count`` (0 allows scale to zero). Required without a model.
        execution_role: the endpoint config's execution role, only for an endpoint without a
            model (SageMaker needs one when the variant names no model: aws/sagemaker-python-sdk,
            ``Session.endpoint_from_production_variants``). Each component's model still runs
            with its own model execution role. Default: a new role that may write the
            endpoint's logs and metrics only.
        async_inference: make the endpoint asynchronous (``InvokeEndpointAsync``), see
            :class:`AsyncInference`. Requires a model: InvokeEndpointAsync cannot address an
            inference component. Default: a real-time endpoint.
        data_capture: capture a sample of the requests and responses to S3, see
            :class:`DataCapture`. Only for a real-time endpoint with a model (refused with
            ``async_inference`` or without a model: docs/aws-readings.md, "Data capture").
            Default: none.
        shadow: a shadow variant that receives a copy of production's requests and answers
            nobody, see :class:`ShadowVariant`. Not with ``async_inference``, without a model,
            or with a rolling deployment policy (docs/aws-readings.md, "Shadow variants").
            Default: none.
        tags: tags for the endpoint and its configs. Default: none.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        pools: Sequence[InstancePool],
        model: IModel | None = None,
        initial_instance_count: int | None = None,
        variant_name: str = DEFAULT_VARIANT_NAME,
        provision_timeout: Duration = Duration.minutes(20),
        routing: Routing | None = None,
        deployment: DeploymentPolicy | None = None,
        kms_key: kms.IKey | None = None,
        volume_size_in_gb: int | None = None,
        model_data_download_timeout: Duration | None = None,
        container_startup_health_check_timeout: Duration | None = None,
        endpoint_name: str | None = None,
        retain_scaled_capacity: bool = True,
        instance_scaling: InstanceScaling | None = None,
        execution_role: iam.IRole | None = None,
        async_inference: AsyncInference | None = None,
        data_capture: DataCapture | None = None,
        shadow: ShadowVariant | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        # Validate everything before creating any construct: a bad prop leaves nothing behind.
        resolved = resolve_pools(pools, "PooledEndpoint.pools")
        if model is None and instance_scaling is None:
            raise PoolConfigError(
                "PooledEndpoint.model",
                model,
                "a PoolModel (or PoolModel.from_model_name(...)); or, for an endpoint that hosts inference "
                "components, no model together with instance_scaling=InstanceScaling(...)",
            )
        if model is not None and not isinstance(model, IModel):
            raise PoolConfigError("PooledEndpoint.model", model, "a PoolModel (or PoolModel.from_model_name(...))")
        _check_component_props(model, resolved, instance_scaling, execution_role, async_inference)
        _check_capture_and_shadow(model, resolved, variant_name, async_inference, deployment, data_capture, shadow)
        check_int_range(initial_instance_count, "PooledEndpoint.initial_instance_count", 1, None, "instances")
        if instance_scaling is not None and initial_instance_count is not None:
            _check_initial_count(initial_instance_count, instance_scaling)
        check_tags(tags, "PooledEndpoint.tags")
        check_name(variant_name, "PooledEndpoint.variant_name")
        check_name(endpoint_name, "PooledEndpoint.endpoint_name")
        name_claim = check_name_is_free(scope, endpoint_name, "PooledEndpoint.endpoint_name")
        timeout_s = seconds_in_range(provision_timeout, "PooledEndpoint.provision_timeout", 300, MAX_PROVISION_TIMEOUT_S)
        download_s = seconds_in_range(model_data_download_timeout, "PooledEndpoint.model_data_download_timeout", 60, 3600)
        startup_s = seconds_in_range(
            container_startup_health_check_timeout, "PooledEndpoint.container_startup_health_check_timeout", 60, 3600
        )
        check_int_range(volume_size_in_gb, "PooledEndpoint.volume_size_in_gb", 1, 512, "GB")
        routing = routing or Routing.least_outstanding_requests()
        if not isinstance(routing, Routing):
            raise PoolConfigError("PooledEndpoint.routing", routing, "a Routing (least_outstanding_requests, random, prefix_aware)")
        if deployment is not None and not isinstance(deployment, DeploymentPolicy):
            raise PoolConfigError("PooledEndpoint.deployment", deployment, "a DeploymentPolicy (all_at_once, canary, linear, rolling)")
        if kms_key is not None or volume_size_in_gb is not None:
            # The config's key and volume size apply to the shadow's instances too.
            every_type = [*resolved, *([InstancePool(instance_type=shadow.instance_type)] if shadow is not None else [])]
            _check_ebs_only(every_type, "kms_key" if kms_key is not None else "volume_size_in_gb")
        if deployment is not None:
            _check_guardrails(resolved, deployment)
            provision_s = MAX_PROVISION_TIMEOUT_S if timeout_s is None else timeout_s
            if initial_instance_count is not None:
                deployment.check_fleet(initial_instance_count, initial_instance_count, provision_s, "PooledEndpoint")
            elif instance_scaling is not None:
                low, high = instance_scaling.min_instance_count, instance_scaling.max_instance_count
                deployment.check_fleet(low if is_unresolved(low) else max(1, low), high, provision_s, "PooledEndpoint")

        super().__init__(scope, id, variant_name=variant_name)
        self.pools: tuple[InstancePool, ...] = resolved
        self._fixed_name = endpoint_name
        self.model = model
        #: ``initial_instance_count`` as given (None: derived, see :attr:`initial_instance_count`).
        self._initial_instance_count = initial_instance_count
        self._provision_timeout_s = timeout_s
        #: The autoscaling minimum, once auto_scale or auto_scale_on_backlog was called.
        self._scaling_min_capacity: int | None = None
        #: The construct id of the variant's scalable target once made (auto_scale or auto_scale_on_backlog).
        self._scaling_id: str | None = None
        self.deployment = deployment
        self.hosts_inference_components = model is None
        self.instance_scaling = instance_scaling
        self.async_inference = async_inference
        #: The async bucket (inputs, responses, failures), or None for a real-time endpoint.
        self.async_bucket: s3.IBucket | None = async_inference._bucket(self) if async_inference else None
        self.data_capture = data_capture
        #: The data capture bucket, or None without data capture.
        self.capture_bucket: s3.IBucket | None = data_capture._bucket(self) if data_capture else None
        self.shadow = shadow
        #: The endpoint config's execution role (endpoints without a model only).
        self.execution_role: iam.IRole | None = None
        # What the config waits for: the execution role's default policy.
        execution_policy: IConstruct | None = None
        if model is None and execution_role is not None:
            self.execution_role = execution_role
            execution_policy = default_policy_of(execution_role)
        elif model is None:
            created, execution_policy = new_execution_role(
                self,
                wildcard_reason="cloudwatch:PutMetricData has no resource-level permissions: AWS requires '*' (narrowed by namespace).",
            )
            self.execution_role = as_role(created)

        variant = l1_properties(
            sagemaker.CfnEndpointConfig.ProductionVariantProperty,
            variant_name=variant_name,
            model_name=model.model_name if model is not None else None,
            # Derived when not given: auto_scale may still set the minimum it follows from.
            initial_instance_count=initial_instance_count
            if initial_instance_count is not None
            else Lazy.number(_Produce(lambda: self.initial_instance_count)),
            instance_pools=[
                l1_properties(
                    sagemaker.CfnEndpointConfig.InstancePoolProperty,
                    instance_type=p.instance_type,
                    priority=p.priority,
                    model_name_override=p.model.model_name if p.model is not None else None,
                )
                for p in resolved
            ],
            variant_instance_provision_timeout_in_seconds=timeout_s,
            routing_config=routing._render(),
            volume_size_in_gb=volume_size_in_gb,
            model_data_download_timeout_in_seconds=download_s,
            container_startup_health_check_timeout_in_seconds=startup_s,
            managed_instance_scaling=instance_scaling._render() if instance_scaling else None,
            # Only beside a shadow, whose weight over this one is the share of requests it gets a copy of.
            initial_variant_weight=PRODUCTION_WEIGHT if shadow is not None else None,
        )
        # No endpoint_config_name, ever: a fixed name would make every later change fail
        # ("CloudFormation cannot update a stack when a custom-named resource requires replacing").
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "Config",
            production_variants=[variant],
            kms_key_id=kms_key.key_arn if kms_key else None,
            execution_role_arn=self.execution_role.role_arn if self.execution_role else None,
            async_inference_config=async_inference._render(self.async_bucket) if async_inference and self.async_bucket else None,
            data_capture_config=data_capture._render(self.capture_bucket) if data_capture and self.capture_bucket else None,
            shadow_production_variants=[
                shadow._render(download_s=download_s, startup_s=startup_s, volume_size_in_gb=volume_size_in_gb)
            ]
            if shadow is not None
            else None,
        )
        if execution_policy is not None:
            # CreateEndpointConfig checks that SageMaker can assume the role: create the config
            # once the role's policy exists too.
            wait_for(self.endpoint_config, execution_policy)
        if async_inference is not None and self.async_bucket is not None:
            self._grant_async_to_models(async_inference, self.async_bucket)
        if data_capture is not None and self.capture_bucket is not None:
            self._grant_capture_to_models(data_capture, self.capture_bucket)
        self._resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.endpoint_config.attr_endpoint_config_name,
            endpoint_name=endpoint_name,
            deployment_config=deployment._render() if deployment else None,
            # Write-only and update-only: CreateEndpoint has no such member, so CloudFormation
            # uses it only on UpdateEndpoint (see README, "Safe updates").
            retain_all_variant_properties=True if retain_scaled_capacity else None,
            # RetainAllVariantProperties also retains DataCaptureConfig: without this exclusion a
            # later capture change (off, sampling, destination) would be ignored on update.
            exclude_retained_variant_properties=[{"variantPropertyType": "DataCaptureConfig"}]
            if retain_scaled_capacity and data_capture is not None
            else None,
        )
        for key, value in (tags or {}).items():
            Tags.of(self).add(key, value)
        if name_claim is not None:
            name_claim.take(self)

    def _check_deployment_fleet(self, smallest: int, largest: int) -> None:
        """The deployment policy against the fleet autoscaling may give it (bounds already checked or tokens)."""
        if self.deployment is None or not all(isinstance(v, int) and not isinstance(v, bool) for v in (smallest, largest)):
            return
        if not is_unresolved(smallest) and not is_unresolved(largest) and not 1 <= smallest <= largest:
            return  # the scaling bounds' own checks report this
        timeout_s = self._provision_timeout_s
        self.deployment.check_fleet(smallest, largest, MAX_PROVISION_TIMEOUT_S if timeout_s is None else timeout_s, "PooledEndpoint")

    @property
    def initial_instance_count(self) -> int:
        """Instances at creation: as given, else the autoscaling minimum or the managed minimum (at least 1)."""
        if self._initial_instance_count is not None:
            return self._initial_instance_count
        floor = self._scaling_min_capacity
        if floor is None:
            floor = self.instance_scaling.min_instance_count if self.instance_scaling is not None else 1
        if is_unresolved(floor):
            # max(1, floor) cannot be taken of a deploy-time parameter. auto_scale's minimum is 1 or
            # more; the backlog's and managed instance scaling's may be 0, which CreateEndpointConfig
            # refuses (InitialInstanceCount >= 1): start with one instance, autoscaling moves on from there.
            return floor if self.auto_scaling is not None else 1
        return max(1, floor)

    @property
    def endpoint_name(self) -> str:
        """The endpoint's name: the literal ``endpoint_name`` when one was given, else a token.

        As CDK's L2s do with physical names: a literal lets alarms and dashboards name the
        endpoint without depending on it, which is what allows the endpoint's own rollback alarms.
        """
        return self._fixed_name if self._fixed_name is not None else str(self._resource.attr_endpoint_name)

    @property
    def has_generated_name(self) -> bool:
        """True when no ``endpoint_name`` was given (see :attr:`EndpointBase.has_generated_name`)."""
        return self._fixed_name is None

    @property
    def endpoint_arn(self) -> str:
        """The endpoint's ARN."""
        return str(self._resource.attr_endpoint_arn)

    def _name_dependencies(self) -> list[CfnResource]:
        """What a resource that names this endpoint must depend on: the endpoint, when its name is fixed.

        A generated name is read with ``Fn::GetAtt``, which orders the reader after the endpoint
        already (cfn-lint W3005 flags a redundant DependsOn); a fixed name is a literal (or a
        parameter), which orders nothing.
        """
        return [] if self._fixed_name is None else [self._resource]

    @property
    def endpoint_config_name(self) -> str:
        """The name of the current (generated) endpoint configuration."""
        return str(self.endpoint_config.attr_endpoint_config_name)

    # -- inference components and async ---------------------------------------------------

    def add_inference_component(
        self,
        id: str,
        *,
        specifications: Sequence[ComponentSpec],
        copy_count: int = 1,
        deployment: ComponentDeploymentPolicy | None = None,
        inference_component_name: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> InferenceComponent:
        """Host a model on this endpoint as an inference component, one specification per pool type.

        Only for an endpoint made without a model. See :class:`InferenceComponent` for the arguments.
        """
        return InferenceComponent(
            self,
            id,
            endpoint=self,
            specifications=specifications,
            copy_count=copy_count,
            deployment=deployment,
            inference_component_name=inference_component_name,
            tags=tags,
        )

    def grant_invoke_async(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` call InvokeEndpointAsync on this endpoint and use the async bucket.

        Exactly: ``sagemaker:InvokeEndpointAsync`` on this endpoint, ``s3:PutObject`` under the
        input prefix, ``s3:GetObject`` under the output and failure prefixes, and encrypt /
        decrypt with the KMS keys involved. Only for an endpoint with ``async_inference``.
        """
        if self.async_inference is None or self.async_bucket is None:
            raise PoolConfigError(
                "PooledEndpoint.grant_invoke_async", "a real-time endpoint", "an endpoint made with async_inference=AsyncInference(...)"
            )
        grant = iam.Grant.add_to_principal(
            grantee=grantee, actions=["sagemaker:InvokeEndpointAsync"], resource_arns=[self.endpoint_arn]
        )
        return grant.combine(self.async_inference._grant_caller(grantee, self.async_bucket))

    def metric_approximate_backlog_size_per_instance(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``ApproximateBacklogSizePerInstance`` (queued async requests / instances). Default: Average.

        Published with the ``EndpointName`` dimension only (no ``VariantName``, no ``InstanceType``).
        """
        return sagemaker_metric("ApproximateBacklogSizePerInstance", MetricSource.endpoint(self.endpoint_name), **options)

    def metric_approximate_backlog_size(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``ApproximateBacklogSize`` (queued async requests). Default: Average. Dimension ``EndpointName`` only."""
        return sagemaker_metric("ApproximateBacklogSize", MetricSource.endpoint(self.endpoint_name), **options)

    def metric_has_backlog_without_capacity(self, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """``HasBacklogWithoutCapacity``: 1 while async requests wait and no instance runs. Default: Average.

        Dimension ``EndpointName`` only.
        """
        return sagemaker_metric("HasBacklogWithoutCapacity", MetricSource.endpoint(self.endpoint_name), **options)

    def auto_scale_on_backlog(
        self,
        *,
        max_capacity: int,
        min_capacity: int = 0,
        target_backlog_per_instance: float = 5.0,
        scale_in_cooldown: Duration | None = None,
        scale_out_cooldown: Duration | None = None,
        scale_from_zero: bool = True,
        wake_up_cooldown: Duration | None = None,
    ) -> ScalableCapacity:
        """Scale an async endpoint's instances on its queue, down to zero (only with ``async_inference``).

        AWS's recipe ("Autoscale an asynchronous endpoint",
        https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html), on the
        variant's ``sagemaker:variant:DesiredInstanceCount`` (construct id ``Scaling<variant>``,
        the same as :meth:`auto_scale`: one scalable target per variant):

        * target tracking (id ``BacklogPerInstance``) on ``ApproximateBacklogSizePerInstance``,
          whose only dimension is ``EndpointName``, at ``target_backlog_per_instance``;
        * with ``min_capacity=0`` and ``scale_from_zero``: a step policy (id ``ScaleFromZero``,
          ``ExactCapacity`` 1, cooldown ``wake_up_cooldown``) and its alarm on
          ``HasBacklogWithoutCapacity`` (Average over 60 s, >= 1 in 2 of 2 periods, missing data
          missing). SageMaker provisions the instance from the highest-priority pool with
          capacity. The alarm re-invokes the policy every minute until the instance serves; an
          exact capacity of one makes that one instance, whatever SageMaker does with a change
          asked for while the endpoint is updating. So that the step never lowers capacity that
          target tracking added, the tracked metric reads nothing while the backlog has no
          instance: ``IF(FILL(waiting, 0) < 1, backlog)`` (``waiting`` is
          ``HasBacklogWithoutCapacity``); target tracking takes over once the instance serves.
          Without the step (``scale_from_zero=False``) the tracked metric is the plain backlog
          per instance and the endpoint leaves zero once the queue exceeds the tracking target.

        Args:
            max_capacity: the most instances, at least ``initial_instance_count``.
            min_capacity: the fewest, 0 to ``initial_instance_count``. Default: 0.
            target_backlog_per_instance: queued requests per instance to hold. Default: 5 (AWS's example).
            scale_in_cooldown, scale_out_cooldown: Default: Application Auto Scaling's (300 s).
            scale_from_zero: Default: ``True``.
            wake_up_cooldown: the wake-up step's cooldown, 60 s to one day. Default: 300 s
                (``DEFAULT_WAKE_UP_COOLDOWN``, Application Auto Scaling's own).
        """
        field = "PooledEndpoint.auto_scale_on_backlog"
        if self.async_inference is None:
            raise PoolConfigError(field, "a real-time endpoint", "an endpoint made with async_inference=AsyncInference(...) (see auto_scale)")
        if not isinstance(scale_from_zero, bool):
            raise PoolConfigError(f"{field}.scale_from_zero", scale_from_zero, "True or False")
        variant = self.variant_name
        id = "Scaling" if is_unresolved(variant) else f"Scaling{variant}"
        if self._scaling_id is not None:
            raise PoolConfigError(field, f"a second scalable target for variant {variant}", "one call of auto_scale or auto_scale_on_backlog per variant")
        initial = self._initial_instance_count
        check_int_range(min_capacity, f"{field}.min_capacity", 0, None, "instances")
        check_int_range(max_capacity, f"{field}.max_capacity", 1, None, "instances")
        check_min_max(min_capacity, max_capacity, field, "min_capacity", "max_capacity")
        target = target_backlog_per_instance
        if not is_unresolved(target) and (isinstance(target, bool) or not isinstance(target, (int, float)) or not target > 0):
            raise PoolConfigError(f"{field}.target_backlog_per_instance", target, "a number > 0 (queued requests per instance)")
        # Checked before anything is made (the policy checks them again when it renders them).
        seconds_in_range(scale_in_cooldown, f"{field}.scale_in_cooldown", 0, 86400)
        seconds_in_range(scale_out_cooldown, f"{field}.scale_out_cooldown", 0, 86400)
        seconds_in_range(wake_up_cooldown, f"{field}.wake_up_cooldown", 60, 86400)
        if initial is not None and not is_unresolved(initial):
            if not is_unresolved(min_capacity) and min_capacity > initial:
                raise PoolConfigError(f"{field}.min_capacity", min_capacity, f"at most initial_instance_count ({initial})")
            if not is_unresolved(max_capacity) and max_capacity < initial:
                raise PoolConfigError(f"{field}.max_capacity", max_capacity, f"at least initial_instance_count ({initial})")
        # A deployment meets at least one instance: SageMaker wakes the fleet first.
        self._check_deployment_fleet(min_capacity if is_unresolved(min_capacity) else max(1, min_capacity), max_capacity)
        scaling = ScalableCapacity(
            self,
            id,
            resource_id=variant_resource_id(self.endpoint_name, self.variant_name),
            scalable_dimension=VARIANT_INSTANCE_COUNT,
            min_capacity=min_capacity,
            max_capacity=max_capacity,
            depends_on=self._name_dependencies(),
            field=field,
        )
        wakes = bool(scale_from_zero) and not is_unresolved(min_capacity) and min_capacity == 0
        # Plain query data, not CDK metric objects: nothing here needs a round trip to Node.
        source = MetricSource.endpoint(self.endpoint_name)
        tracked: Query = sagemaker_stat("ApproximateBacklogSizePerInstance", source, statistic="Average")
        if wakes:
            # Nothing to track while requests wait without an instance: the wake-up owns that.
            waiting = sagemaker_stat("HasBacklogWithoutCapacity", source, statistic="Average")
            tracked = Math(
                "IF(FILL(waiting, 0) < 1, backlog)", (("waiting", waiting), ("backlog", tracked)), 60,
                "Backlog per instance (none while no instance serves)",
            )
        scaling.scale_to_track_metric(
            "BacklogPerInstance",
            target_value=target_backlog_per_instance,
            metric=tracked,
            scale_in_cooldown=scale_in_cooldown,
            scale_out_cooldown=scale_out_cooldown,
        )
        if wakes:
            scaling.wake_from_zero(
                "ScaleFromZero",
                metric=self.metric_has_backlog_without_capacity(statistic="Average", period=Duration.minutes(1)),
                cooldown=wake_up_cooldown,
                evaluation_periods=2,
                alarm_description="Async requests wait and the endpoint has no instance: set one.",
            )
        self._scaling_min_capacity = min_capacity
        self._scaling_id = id
        return scaling

    def _serving_models(self) -> list[IModel]:
        """Every model that may serve, once each: the variant's, each pool's and the shadow's."""
        models = [self.model, *(p.model for p in self.pools), self.shadow.model if self.shadow else None]
        unique: list[IModel] = []
        for model in models:
            if model is not None and not any(model is m for m in unique):
                unique.append(model)
        return unique

    def _grant_to_models(self, grant: Callable[[iam.IRole], None], warning_id: str, needs: str) -> None:
        """``grant`` to every serving model's execution role; a warning naming ``needs`` for an imported model."""
        for model in self._serving_models():
            role = getattr(model, "role", None)
            if role is None:
                Annotations.of(self).add_warning_v2(
                    warning_id, f"Model {model.model_name} was imported: grant its execution role {needs} yourself."
                )
                continue
            grant(role)

    def _grant_async_to_models(self, async_inference: AsyncInference, bucket: s3.IBucket) -> None:
        """Every model that may serve gets what async serving needs."""
        self._grant_to_models(
            lambda role: async_inference._grant_execution_role(role, bucket),
            "sagemaker-pools:async-imported-model",
            f"s3:GetObject under {async_inference.input_prefix}, s3:PutObject under {async_inference.output_prefix} and "
            f"{async_inference.failure_prefix}, and sns:Publish on the async topics",
        )

    def _grant_capture_to_models(self, data_capture: DataCapture, bucket: s3.IBucket) -> None:
        """Every model that may serve, the shadow's included, may write captured data (docs/aws-readings.md)."""
        self._grant_to_models(
            lambda role: data_capture._grant_writer(role, bucket),
            "sagemaker-pools:capture-imported-model",
            f"s3:PutObject under {data_capture.prefix} of the capture bucket (and the KMS keys' GenerateDataKey)",
        )

    @property
    def capture_destination(self) -> str:
        """``s3://BUCKET/PREFIX`` of the data capture: ``gate --from-capture`` reads it.

        Raises:
            PoolConfigError: the endpoint has no ``data_capture``.
        """
        if self.data_capture is None or self.capture_bucket is None:
            raise PoolConfigError("PooledEndpoint.capture_destination", "an endpoint without data capture", "an endpoint made with data_capture=DataCapture(...)")
        return DataCapture.destination(self.capture_bucket, self.data_capture.prefix)

    def grant_read_capture(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` list and read the captured data (``s3:ListBucket`` under the prefix,
        ``s3:GetObject``, ``kms:Decrypt``): what ``sagemaker-pools gate --from-capture`` needs.

        Raises:
            PoolConfigError: the endpoint has no ``data_capture``.
        """
        if self.data_capture is None or self.capture_bucket is None:
            raise PoolConfigError("PooledEndpoint.grant_read_capture", "an endpoint without data capture", "an endpoint made with data_capture=DataCapture(...)")
        return self.data_capture._grant_reader(grantee, self.capture_bucket)

    def metric_shadow(self, metric_name: str, **options: Unpack[MetricOptions]) -> cloudwatch.Metric:
        """A SageMaker metric of the shadow variant (dimensions ``EndpointName``, ``VariantName``).

        The shadow runs on one instance type, so its metrics carry no ``InstanceType`` dimension.

        Raises:
            PoolConfigError: the endpoint has no ``shadow``.
        """
        if self.shadow is None:
            raise PoolConfigError("PooledEndpoint.metric_shadow", "an endpoint without a shadow", "an endpoint made with shadow=ShadowVariant(...)")
        return sagemaker_metric(metric_name, MetricSource.variant(self.endpoint_name, self.shadow.variant_name), **options)

    @staticmethod
    def from_endpoint_name(
        scope: Construct, id: str, endpoint_name: str, *, variant_name: str = DEFAULT_VARIANT_NAME
    ) -> EndpointBase:
        """Reference an endpoint made elsewhere, for grants and metrics."""
        check_name(endpoint_name, "PooledEndpoint.from_endpoint_name.endpoint_name")
        check_name(variant_name, "PooledEndpoint.from_endpoint_name.variant_name")
        return _ImportedEndpoint(scope, id, endpoint_name, variant_name)

    # -- autoscaling ----------------------------------------------------------------------------

    def auto_scale(self, *, max_capacity: int, min_capacity: int | None = None) -> VariantScaling:
        """Let Application Auto Scaling change this variant's instance count; add policies to the result.

        Makes an ``AWS::ApplicationAutoScaling::ScalableTarget`` on ``sagemaker:variant:DesiredInstanceCount``
        (construct id ``Scaling<variant>``, so one per variant) that uses Application Auto Scaling's
        SageMaker service-linked role and depends on the endpoint. Then, e.g.::

            endpoint.auto_scale(max_capacity=8).scale_on_weighted_utilization(target=0.7)

        Only for an endpoint with a model: an endpoint that hosts inference components scales
        by copies (:meth:`InferenceComponent.auto_scale`) while managed instance scaling
        (``instance_scaling=``) owns its instance count.

        Args:
            max_capacity: the most instances (at least ``initial_instance_count`` when that is given).
            min_capacity: the fewest instances, 1 or more (at most ``initial_instance_count`` when
                that is given; else ``initial_instance_count`` follows it). Default:
                ``initial_instance_count`` when given, else 1.

        Raises:
            PoolConfigError: an endpoint without a model, bounds out of order, or a second call
                for the same variant.
        """
        if self.model is None:
            raise PoolConfigError(
                "PooledEndpoint.auto_scale",
                "an endpoint without a model",
                "an endpoint with a model: this one hosts inference components, whose copies scale with "
                "InferenceComponent.auto_scale(...) while managed instance scaling (instance_scaling=) owns its "
                "instance count; a second controller would fight it",
            )
        variant = self.variant_name
        id = "Scaling" if is_unresolved(variant) else f"Scaling{variant}"
        if self._scaling_id is not None:
            raise PoolConfigError("PooledEndpoint.auto_scale", f"a second call for variant {variant}", "one call per variant: add policies to the VariantScaling it returned")
        low = self.initial_instance_count if min_capacity is None else min_capacity
        self._check_deployment_fleet(low, max_capacity)
        scaling = VariantScaling(self, id, endpoint=self, min_capacity=low, max_capacity=max_capacity)
        self.auto_scaling = scaling
        self._scaling_min_capacity = scaling.min_capacity
        self._scaling_id = id
        return scaling


def _refuse_inf1_pools(pools: Sequence[InstancePool], given_with: str, allowed: str) -> None:
    """Refuse the first Inf1 pool: what SageMaker excludes for endpoints that use Inf1 (docs/aws-readings.md)."""
    for index, pool in enumerate(pools):
        if is_inf1(pool.instance_type):
            raise PoolConfigError(f"PooledEndpoint.pools[{index}].instance_type", f"{pool.instance_type} with {given_with}", allowed)


def _check_guardrails(pools: Sequence[InstancePool], deployment: DeploymentPolicy) -> None:
    """Deployment guardrails exclude Inf1: such an endpoint ignores the policy."""
    _refuse_inf1_pools(
        pools,
        f"deployment={deployment._kind()}",
        "no Inf1 type with a deployment policy: SageMaker's deployment guardrails exclude endpoints that use Inf1 "
        "instances (they deploy all at once, without baking or rollback alarms); drop the deployment policy or the Inf1 pool",
    )


def _check_component_props(
    model: IModel | None,
    pools: Sequence[InstancePool],
    instance_scaling: InstanceScaling | None,
    execution_role: iam.IRole | None,
    async_inference: AsyncInference | None,
) -> None:
    """The rules that tie the inference-component and async props to the presence of a model."""
    if instance_scaling is not None and not isinstance(instance_scaling, InstanceScaling):
        raise PoolConfigError("PooledEndpoint.instance_scaling", instance_scaling, "an InstanceScaling")
    if async_inference is not None and not isinstance(async_inference, AsyncInference):
        raise PoolConfigError("PooledEndpoint.async_inference", async_inference, "an AsyncInference")
    if model is not None:
        if instance_scaling is not None:
            # CreateEndpointConfig answers "ManagedInstanceScaling is only supported for inference
            # component endpoints" (docs/aws-readings.md, "Combinations SageMaker refuses").
            raise PoolConfigError(
                "PooledEndpoint.instance_scaling",
                "set, with a model",
                "only without a model: managed instance scaling is for endpoints that host inference components "
                "(SageMaker refuses it on a single-model variant); scale a model's instances with auto_scale(...) "
                "or, for an async endpoint, auto_scale_on_backlog(...)",
            )
        if execution_role is not None:
            raise PoolConfigError(
                "PooledEndpoint.execution_role",
                execution_role,
                "only without a model: a single-model endpoint runs with its model's execution role (PoolModel(role=...))",
            )
        return
    for index, pool in enumerate(pools):
        if pool.model is not None:
            raise PoolConfigError(
                f"PooledEndpoint.pools[{index}].model",
                pool.model,
                "None on an endpoint without a model: give each instance type's model in the inference "
                "component's ComponentSpec(instance_type=..., model=...) instead",
            )
    if async_inference is not None:
        raise PoolConfigError(
            "PooledEndpoint.async_inference",
            "set, without a model",
            "only with a model: InvokeEndpointAsync has no InferenceComponentName, so an async endpoint "
            "cannot host inference components",
        )
    if execution_role is not None and not hasattr(execution_role, "role_arn"):
        raise PoolConfigError("PooledEndpoint.execution_role", execution_role, "an aws_iam.IRole")


def _check_capture_and_shadow(
    model: IModel | None,
    pools: Sequence[InstancePool],
    variant_name: str,
    async_inference: AsyncInference | None,
    deployment: DeploymentPolicy | None,
    data_capture: DataCapture | None,
    shadow: ShadowVariant | None,
) -> None:
    """What data capture and a shadow variant need of the endpoint (docs/aws-readings.md quotes each source)."""
    if data_capture is not None and not isinstance(data_capture, DataCapture):
        raise PoolConfigError("PooledEndpoint.data_capture", data_capture, "a DataCapture")
    if shadow is not None and not isinstance(shadow, ShadowVariant):
        raise PoolConfigError("PooledEndpoint.shadow", shadow, "a ShadowVariant")
    if data_capture is not None and async_inference is not None:
        raise PoolConfigError(
            "PooledEndpoint.data_capture",
            "set, with async_inference",
            "only on a real-time endpoint: the developer guide documents data capture for real-time endpoints and batch "
            "transform (\"Capture data from real-time endpoint\"), not for asynchronous inference",
        )
    if data_capture is not None and model is None:
        raise PoolConfigError(
            "PooledEndpoint.data_capture",
            "set, without a model",
            "only with a model: the developer guide captures the model a real-time variant hosts "
            "(DESTINATION/ENDPOINT/VARIANT/...); it documents no capture of inference components",
        )
    if shadow is None:
        return
    if async_inference is not None:
        raise PoolConfigError(
            "PooledEndpoint.shadow", "set, with async_inference", "only on a real-time endpoint: SageMaker's shadow testing excludes asynchronous endpoints"
        )
    if model is None:
        raise PoolConfigError(
            "PooledEndpoint.shadow",
            "set, without a model",
            "only with a model: SageMaker's shadow testing excludes multi-model endpoints, and an endpoint that hosts "
            "inference components serves several models from one variant",
        )
    if not is_unresolved(shadow.variant_name) and not is_unresolved(variant_name) and shadow.variant_name.lower() == variant_name.lower():
        raise PoolConfigError("PooledEndpoint.shadow.variant_name", shadow.variant_name, f"a name other than the production variant's ({variant_name})")
    if deployment is not None and deployment._kind() == "rolling":
        raise PoolConfigError(
            "PooledEndpoint.deployment",
            "rolling, with a shadow",
            "a blue/green policy (all_at_once, canary, linear) or none: rolling deployments exclude multi-variant endpoints, "
            "and a shadow makes two variants",
        )
    _refuse_inf1_pools(pools, "a shadow", "a type other than Inf1: SageMaker's shadow testing excludes endpoints that use Inf1 instances")


@jsii.implements(IStableNumberProducer)
class _Produce:
    """A number CDK asks for only when it renders the template (``Lazy.number``)."""

    def __init__(self, produce: Callable[[], int]) -> None:
        self._produce = produce

    def produce(self) -> int:
        return self._produce()


def _check_initial_count(initial: int, scaling: InstanceScaling) -> None:
    low, high = scaling.min_instance_count, scaling.max_instance_count
    if any(is_unresolved(v) for v in (initial, low, high)):
        return
    if not max(low, 1) <= initial <= high:
        raise PoolConfigError(
            "PooledEndpoint.initial_instance_count",
            initial,
            f"from {max(low, 1)} to {high}: within instance_scaling (min_instance_count {low}, max_instance_count {high})",
        )


def _check_ebs_only(pools: Sequence[InstancePool], field: str) -> None:
    for pool in pools:
        if not is_unresolved(pool.instance_type) and has_instance_storage(pool.instance_type):
            raise PoolConfigError(
                f"PooledEndpoint.{field}",
                f"set, with pool {pool.instance_type}",
                f"only when every pool is an EBS-only type: {pool.instance_type} has NVMe instance storage, "
                "which its hardware encrypts and sizes, and CreateEndpointConfig rejects "
                "KmsKeyId / VolumeSizeInGB for it",
            )
