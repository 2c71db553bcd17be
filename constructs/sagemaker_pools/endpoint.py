"""``PooledEndpoint``: a SageMaker endpoint whose variant falls back across instance pools.

Renders an ``AWS::SageMaker::EndpointConfig`` (never a fixed name: every property but Tags is
create-only, so a change must produce a new config) whose single production variant lists
``InstancePools`` instead of an ``InstanceType``, and an ``AWS::SageMaker::Endpoint`` (the
construct's default child) that takes each new config in place through UpdateEndpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import ArnFormat, Duration, Resource, Stack, Tags
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from ._tokens import is_unresolved
from ._validate import check_int_range, check_name, seconds_in_range
from .deployment import DeploymentPolicy
from .errors import PoolConfigError
from .instance_types import has_instance_storage
from .pools import IModel, InstancePool, resolve_pools
from .routing import Routing

__all__ = ["EndpointBase", "PooledEndpoint"]

#: SageMaker's default variant name (what the console and the SDKs use).
DEFAULT_VARIANT_NAME = "AllTraffic"


class EndpointBase(Resource):
    """What every pooled endpoint offers, created here or imported: its name, ARN and grants."""

    def __init__(self, scope: Construct, id: str, *, variant_name: str) -> None:
        super().__init__(scope, id)
        self.variant_name = variant_name

    @property
    def endpoint_name(self) -> str:
        """The endpoint's name (a token for a generated name)."""
        raise NotImplementedError

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
        model: the variant's model, used by every pool without its own ``model``.
        initial_instance_count: instances at creation. Default: 1.
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
            changed without replacing the endpoint.
        retain_scaled_capacity: keep the live instance count (and weight) when a deploy moves
            the endpoint to a new config, instead of resetting it to ``initial_instance_count``
            (``RetainAllVariantProperties``). Default: ``True``.
        tags: tags for the endpoint and its configs. Default: none.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        pools: Sequence[InstancePool],
        model: IModel | None = None,
        initial_instance_count: int = 1,
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
        tags: Mapping[str, str] | None = None,
    ) -> None:
        # Validate everything before creating any construct: a bad prop leaves nothing behind.
        resolved = resolve_pools(pools, "PooledEndpoint.pools")
        if model is None or not isinstance(model, IModel):
            raise PoolConfigError("PooledEndpoint.model", model, "a PoolModel (or PoolModel.from_model_name(...))")
        check_int_range(initial_instance_count, "PooledEndpoint.initial_instance_count", 1, None, "instances")
        check_name(variant_name, "PooledEndpoint.variant_name")
        check_name(endpoint_name, "PooledEndpoint.endpoint_name")
        timeout_s = seconds_in_range(provision_timeout, "PooledEndpoint.provision_timeout", 300, 3600)
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
            _check_ebs_only(resolved, "kms_key" if kms_key is not None else "volume_size_in_gb")

        super().__init__(scope, id, variant_name=variant_name)
        self.pools: tuple[InstancePool, ...] = resolved
        self.model = model
        self.initial_instance_count = initial_instance_count

        variant = sagemaker.CfnEndpointConfig.ProductionVariantProperty(
            variant_name=variant_name,
            model_name=model.model_name,
            initial_instance_count=initial_instance_count,
            instance_pools=[
                sagemaker.CfnEndpointConfig.InstancePoolProperty(
                    instance_type=p.instance_type,
                    priority=p.priority,  # type: ignore[arg-type]  # set by resolve_pools
                    model_name_override=p.model.model_name if p.model is not None else None,
                )
                for p in resolved
            ],
            variant_instance_provision_timeout_in_seconds=timeout_s,
            routing_config=routing._render(),
            volume_size_in_gb=volume_size_in_gb,
            model_data_download_timeout_in_seconds=download_s,
            container_startup_health_check_timeout_in_seconds=startup_s,
        )
        # No endpoint_config_name, ever: a fixed name would make every later change fail
        # ("CloudFormation cannot update a stack when a custom-named resource requires replacing").
        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self, "Config", production_variants=[variant], kms_key_id=kms_key.key_arn if kms_key else None
        )
        self._resource = sagemaker.CfnEndpoint(
            self,
            "Resource",
            endpoint_config_name=self.endpoint_config.attr_endpoint_config_name,
            endpoint_name=endpoint_name,
            deployment_config=deployment._render() if deployment else None,
            # Write-only and update-only: CreateEndpoint has no such member, so CloudFormation
            # uses it only on UpdateEndpoint (see README, "Safe updates").
            retain_all_variant_properties=True if retain_scaled_capacity else None,
        )
        for key, value in (tags or {}).items():
            Tags.of(self).add(key, value)

    @property
    def endpoint_name(self) -> str:
        """The endpoint's name."""
        return str(self._resource.attr_endpoint_name)

    @property
    def endpoint_arn(self) -> str:
        """The endpoint's ARN."""
        return str(self._resource.attr_endpoint_arn)

    @property
    def endpoint_config_name(self) -> str:
        """The name of the current (generated) endpoint configuration."""
        return str(self.endpoint_config.attr_endpoint_config_name)

    @staticmethod
    def from_endpoint_name(
        scope: Construct, id: str, endpoint_name: str, *, variant_name: str = DEFAULT_VARIANT_NAME
    ) -> EndpointBase:
        """Reference an endpoint made elsewhere, for grants and metrics."""
        check_name(endpoint_name, "PooledEndpoint.from_endpoint_name.endpoint_name")
        check_name(variant_name, "PooledEndpoint.from_endpoint_name.variant_name")
        return _ImportedEndpoint(scope, id, endpoint_name, variant_name)


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
