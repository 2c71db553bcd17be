"""How a pooled endpoint spreads requests over its instances (``RoutingConfig``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import aws_sagemaker as sagemaker

from ._l1 import l1_properties
from ._validate import check_int_range
from .errors import PoolConfigError

__all__ = ["Routing"]


@dataclass(frozen=True)
class Routing:
    """A routing strategy. Build one with the static methods.

    On a mixed fleet least-outstanding-requests is the sensible default: a slower fallback
    type receives fewer requests instead of the same share as the fast primary type.
    """

    strategy: str
    prefix_length: int | None = None
    concurrency_threshold: int | None = None

    @staticmethod
    def least_outstanding_requests() -> "Routing":
        """Send each request to the instance with the fewest requests in flight (the default)."""
        return Routing("LEAST_OUTSTANDING_REQUESTS")

    @staticmethod
    def random() -> "Routing":
        """Send each request to a random instance."""
        return Routing("RANDOM")

    @staticmethod
    def prefix_aware(*, prefix_length: int, concurrency_threshold: int) -> "Routing":
        """Keep requests that share a prompt prefix on one instance (KV-cache reuse).

        Args:
            prefix_length: the prefix length used for routing decisions, 1024-65536.
            concurrency_threshold: in-flight requests on the chosen instance at which the
                request goes elsewhere instead, 1-1024.
        """
        check_int_range(prefix_length, "Routing.prefix_aware.prefix_length", 1024, 65536)
        check_int_range(concurrency_threshold, "Routing.prefix_aware.concurrency_threshold", 1, 1024)
        return Routing("PREFIX_AWARE", prefix_length, concurrency_threshold)

    @staticmethod
    def kv_aware() -> "Routing":
        """Not available: always raises :class:`PoolConfigError`.

        ``KV_AWARE`` exists in the SageMaker API but not in CloudFormation's
        ``AWS::SageMaker::EndpointConfig`` schema, so a template cannot carry it.
        """
        raise PoolConfigError(
            "Routing.strategy",
            "KV_AWARE",
            "LEAST_OUTSTANDING_REQUESTS, RANDOM or PREFIX_AWARE; KV_AWARE exists in the SageMaker API "
            "but not in CloudFormation's AWS::SageMaker::EndpointConfig schema, so CloudFormation rejects it",
        )

    def _render(self) -> dict[str, Any]:
        prefix = None
        if self.strategy == "PREFIX_AWARE":
            prefix = l1_properties(
                sagemaker.CfnEndpointConfig.PrefixAwareRoutingConfigProperty,
                prefix_length=self.prefix_length,
                concurrency_threshold=self.concurrency_threshold,
            )
        return l1_properties(
            sagemaker.CfnEndpointConfig.RoutingConfigProperty, routing_strategy=self.strategy, prefix_aware_routing_config=prefix
        )
