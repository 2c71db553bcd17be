"""cdk-sagemaker-pools: AWS CDK constructs for SageMaker AI endpoints on capacity-aware instance pools.

Import everything from here::

    from sagemaker_pools import InstancePool, PoolModel, PooledEndpoint

The construct classes are loaded on first use (PEP 562): importing ``aws_cdk`` starts a Node
process (~0.7 s, ~480 MB), and the ``sagemaker-pools`` ops command, which only needs the pure
value objects, must not pay for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .aiperf import WorkloadSpec
from .capacity import CapacityMeasurement, GateResult, PoolCapacity
from .errors import PoolConfigError
from .hardware import InstanceHardware, hardware_of
from .instance_types import known_instance_types
from .pools import IModel, InstancePool

if TYPE_CHECKING:
    from .async_inference import AsyncInference
    from .data_capture import DataCapture
    from .deployment import CapacitySize, DeploymentPolicy
    from .endpoint import EndpointBase, PooledEndpoint
    from .gates import check_gates
    from .inference_component import (
        ComponentBatchSize,
        ComponentDeploymentPolicy,
        ComponentScaling,
        ComponentSpec,
        InferenceComponent,
        InstanceScaling,
    )
    from .model import ContainerImage, ModelData, PoolModel
    from .routing import Routing
    from .alarms import PoolAlarms
    from .benchmark import BenchmarkRole, BenchmarkWorkload
    from .dashboard import PoolDashboard
    from .metrics import InstanceCountSource, MetricSource, UtilizationStrategy, sagemaker_metric, weighted_utilization
    from .scaling import ScalableCapacity, StepScaling, VariantScaling
    from .shadow import ShadowVariant

# public name -> module that defines it (imports aws_cdk)
_LAZY = {
    "AsyncInference": "async_inference",
    "BenchmarkRole": "benchmark",
    "BenchmarkWorkload": "benchmark",
    "ComponentBatchSize": "inference_component",
    "ComponentDeploymentPolicy": "inference_component",
    "ComponentScaling": "inference_component",
    "ComponentSpec": "inference_component",
    "InferenceComponent": "inference_component",
    "InstanceScaling": "inference_component",
    "CapacitySize": "deployment",
    "DataCapture": "data_capture",
    "ShadowVariant": "shadow",
    "DeploymentPolicy": "deployment",
    "EndpointBase": "endpoint",
    "PooledEndpoint": "endpoint",
    "check_gates": "gates",
    "ContainerImage": "model",
    "ModelData": "model",
    "PoolModel": "model",
    "Routing": "routing",
    "PoolAlarms": "alarms",
    "PoolDashboard": "dashboard",
    "InstanceCountSource": "metrics",
    "MetricSource": "metrics",
    "UtilizationStrategy": "metrics",
    "sagemaker_metric": "metrics",
    "weighted_utilization": "metrics",
    "ScalableCapacity": "scaling",
    "StepScaling": "scaling",
    "VariantScaling": "scaling",
}

__all__ = [
    "CapacityMeasurement",
    "GateResult",
    "IModel",
    "InstanceHardware",
    "InstancePool",
    "PoolCapacity",
    "PoolConfigError",
    "WorkloadSpec",
    "hardware_of",
    "known_instance_types",
    *sorted(_LAZY),
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
