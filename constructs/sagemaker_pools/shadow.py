"""A shadow variant (``ShadowProductionVariants``): a candidate build beside production that gets
a copy of production's requests and answers nobody.

The use here: prove a fallback pool's build before its first real request, e.g. the INT4 build on
one ``ml.g6.48xlarge`` while production serves from ``ml.g6e.48xlarge``; with data capture on,
``sagemaker-pools gate --from-capture`` compares the two variants' answers.

What the documents say, and what this library makes of it (docs/aws-readings.md, "Shadow
variants", quotes each source):

* One shadow variant, and then one production variant ("If you use this field, you can only
  specify one variant for ProductionVariants and one variant for ShadowProductionVariants").
* Shadow testing excludes serverless, asynchronous, Marketplace, multi-container, multi-model and
  Inf1 endpoints: refused here for async endpoints, endpoints that host inference components
  (several models behind one variant) and any Inf1 type.
* Rolling deployments exclude multi-variant endpoints, and a shadow makes two variants: a rolling
  policy is refused; blue/green policies stay.
* Autoscaling is per variant (``endpoint/NAME/variant/VARIANT``): ``auto_scale`` scales production
  only; the shadow keeps ``initial_instance_count``.
* The shadow runs on one instance type (``InstanceType``), not on pools: the guides show shadow
  variants with an ``InstanceType`` only, and a shadow that fell back to another type would
  measure another build than the one under test.
* The share of requests copied: the shadow's ``InitialVariantWeight`` over production's (the
  API reference's rule for variant weights; the guides do not spell out the shadow's case), so
  production weighs :data:`PRODUCTION_WEIGHT` (100) and the shadow its percentage.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import aws_sagemaker as sagemaker

from ._l1 import l1_properties
from ._validate import check_int_range, check_name
from .errors import PoolConfigError
from .instance_types import check_instance_type, is_inf1
from .pools import IModel

__all__ = ["ShadowVariant", "DEFAULT_SHADOW_VARIANT_NAME", "PRODUCTION_WEIGHT"]

#: The shadow variant's default name (``gate --candidate ENDPOINT/Shadow``).
DEFAULT_SHADOW_VARIANT_NAME = "Shadow"
#: Production's ``InitialVariantWeight`` beside a shadow: the shadow's weight is its percentage.
PRODUCTION_WEIGHT = 100


@dataclass(frozen=True, kw_only=True)
class ShadowVariant:
    """The shadow option of a :class:`~sagemaker_pools.PooledEndpoint`.

    Args:
        model: the candidate build (a ``PoolModel`` or ``PoolModel.from_model_name(...)``).
        instance_type: the one ``ml.*`` type it runs on, typically a fallback pool's type.
        initial_instance_count: its instances; autoscaling never changes them. Default: 1.
        variant_name: Default: ``"Shadow"``; it must differ from the production variant's name.
        sampling_percentage: the share of production's requests copied to the shadow, 1-100
            (the shadow's ``InitialVariantWeight``, production's being 100). Default: 100.
    """

    model: IModel
    instance_type: str
    initial_instance_count: int = 1
    variant_name: str = DEFAULT_SHADOW_VARIANT_NAME
    sampling_percentage: int = 100

    def __post_init__(self) -> None:
        name = "ShadowVariant"
        if not isinstance(self.model, IModel):
            raise PoolConfigError(f"{name}.model", self.model, "a PoolModel (or PoolModel.from_model_name(...))")
        check_instance_type(self.instance_type, f"{name}.instance_type")
        if is_inf1(self.instance_type):
            raise PoolConfigError(
                f"{name}.instance_type",
                self.instance_type,
                "a type other than Inf1: SageMaker's shadow testing excludes endpoints that use Inf1 instances",
            )
        check_int_range(self.initial_instance_count, f"{name}.initial_instance_count", 1, None, "instances")
        check_name(self.variant_name, f"{name}.variant_name")
        check_int_range(self.sampling_percentage, f"{name}.sampling_percentage", 1, 100, "percent")

    def _render(self, *, download_s: int | None, startup_s: int | None, volume_size_in_gb: int | None) -> dict[str, object]:
        """The shadow's ``ProductionVariant``; the endpoint's timeouts and volume size apply to it too."""
        return l1_properties(
            sagemaker.CfnEndpointConfig.ProductionVariantProperty,
            variant_name=self.variant_name,
            model_name=self.model.model_name,
            instance_type=self.instance_type,
            initial_instance_count=self.initial_instance_count,
            # Over production's PRODUCTION_WEIGHT: the percentage itself (a token too, no arithmetic needed).
            initial_variant_weight=self.sampling_percentage,
            volume_size_in_gb=volume_size_in_gb,
            model_data_download_timeout_in_seconds=download_s,
            container_startup_health_check_timeout_in_seconds=startup_s,
        )
