"""What scaling and inference components need from an endpoint, as protocols.

``scaling.py`` and ``inference_component.py`` sit below ``endpoint.py`` (the endpoint builds its
scaling and its components): they depend on these protocols, never on the endpoint module, so
the imports run one way. :class:`~sagemaker_pools.PooledEndpoint` satisfies all of them.
"""

from __future__ import annotations

from typing import Protocol

from aws_cdk import CfnResource
from constructs import Node

from .pools import InstancePool

__all__ = ["PooledVariant", "ScalableVariant", "ComponentHost"]


class PooledVariant(Protocol):
    """A production variant on instance pools that publishes SageMaker metrics."""

    @property
    def endpoint_name(self) -> str:
        """The endpoint's name (a token for a generated name)."""

    @property
    def variant_name(self) -> str:
        """The production variant."""

    @property
    def pools(self) -> tuple[InstancePool, ...] | None:
        """The pools in priority order; ``None`` when not known (an imported endpoint)."""

    @property
    def node(self) -> Node:
        """The construct node (its default child is the ``CfnEndpoint``)."""

    def _name_dependencies(self) -> list[CfnResource]:
        """What a resource that names the endpoint must depend on (the endpoint, when its name is fixed)."""


class ScalableVariant(PooledVariant, Protocol):
    """A variant whose instance count Application Auto Scaling can own."""

    @property
    def _initial_instance_count(self) -> int | None:
        """``initial_instance_count`` as given; ``None`` when derived from the scaling minimum."""


class ComponentHost(PooledVariant, Protocol):
    """An endpoint that can host inference components (its variant has no model of its own)."""

    @property
    def pools(self) -> tuple[InstancePool, ...]:
        """The pools in priority order."""

    @property
    def hosts_inference_components(self) -> bool:
        """True when the variant was made without a model, with managed instance scaling."""

