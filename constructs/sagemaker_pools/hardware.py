"""What one instance of an ``ml.*`` type has: accelerators, vCPUs and host memory.

An inference component asks SageMaker for accelerators, CPU cores and memory *per copy*;
SageMaker places a copy only on an instance that has them. A request larger than the whole
instance never places, and on a pooled endpoint it may only show up when SageMaker falls back
to that pool. This table lets :class:`~sagemaker_pools.InferenceComponent` refuse such a
request at synth time. Pure Python: no aws_cdk import.

Sources (figures per instance; the ``ml.*`` type has the hardware of the EC2 type of the
same name):

* AWS Batch User Guide, "Run GPU jobs", table of GPU instance types (GPUs, vCPUs, memory):
  https://docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html (g4dn, g5, g6).
* Amazon EC2 Instance Types, "Accelerated computing instance specifications":
  https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html (all families below).
* Cross-checked against meta-pytorch/torchx ``torchx/specs/named_resources_aws.py``
  (cpu, gpu, memory and Neuron device counts for g4dn, g5, g6e, p4d, p4de, p5, p5e, p5en,
  inf2, trn1).

Accelerators are GPUs, or Neuron devices (Inferentia2 / Trainium chips) for inf2 and trn1, which
is what ``NumberOfAcceleratorDevicesRequired`` counts ("Accelerators include GPUs and AWS
Inferentia", SageMaker API reference). Memory is host memory, the resource that
``MinMemoryRequiredInMb`` reserves, never accelerator memory.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["InstanceHardware", "hardware_of", "known_hardware_types"]


@dataclass(frozen=True)
class InstanceHardware:
    """The resources of one instance.

    Attributes:
        accelerators: GPUs or Neuron devices.
        vcpus: virtual CPUs.
        memory_gib: host memory in GiB.
    """

    accelerators: int
    vcpus: int
    memory_gib: int

    @property
    def memory_mib(self) -> int:
        """Host memory in MiB, the unit of ``MinMemoryRequiredInMb``."""
        return self.memory_gib * 1024


# (accelerators, vCPUs, memory GiB) by size, for families whose sizes share a layout.
_G_LAYOUT_16 = {  # g4dn, g5, g6: 16 GiB per 4 vCPUs
    "xlarge": (1, 4, 16),
    "2xlarge": (1, 8, 32),
    "4xlarge": (1, 16, 64),
    "8xlarge": (1, 32, 128),
    "12xlarge": (4, 48, 192),
    "16xlarge": (1, 64, 256),
    "24xlarge": (4, 96, 384),
    "48xlarge": (8, 192, 768),
}
_G6E_LAYOUT = {  # g6e: 32 GiB per 4 vCPUs
    "xlarge": (1, 4, 32),
    "2xlarge": (1, 8, 64),
    "4xlarge": (1, 16, 128),
    "8xlarge": (1, 32, 256),
    "12xlarge": (4, 48, 384),
    "16xlarge": (1, 64, 512),
    "24xlarge": (4, 96, 768),
    "48xlarge": (8, 192, 1536),
}


def _family(family: str, layout: dict[str, tuple[int, int, int]], sizes: tuple[str, ...]) -> dict[str, InstanceHardware]:
    return {f"ml.{family}.{size}": InstanceHardware(*layout[size]) for size in sizes}


_TABLE: dict[str, InstanceHardware] = {
    # g4dn has no 24xlarge or 48xlarge size.
    **_family("g4dn", _G_LAYOUT_16, ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")),
    **_family("g5", _G_LAYOUT_16, tuple(_G_LAYOUT_16)),
    **_family("g6", _G_LAYOUT_16, tuple(_G_LAYOUT_16)),
    **_family("g6e", _G6E_LAYOUT, tuple(_G6E_LAYOUT)),
    "ml.p4d.24xlarge": InstanceHardware(8, 96, 1152),
    "ml.p4de.24xlarge": InstanceHardware(8, 96, 1152),
    "ml.p5.48xlarge": InstanceHardware(8, 192, 2048),
    "ml.p5e.48xlarge": InstanceHardware(8, 192, 2048),
    "ml.p5en.48xlarge": InstanceHardware(8, 192, 2048),
    "ml.inf2.xlarge": InstanceHardware(1, 4, 16),
    "ml.inf2.8xlarge": InstanceHardware(1, 32, 128),
    "ml.inf2.24xlarge": InstanceHardware(6, 96, 384),
    "ml.inf2.48xlarge": InstanceHardware(12, 192, 768),
    "ml.trn1.2xlarge": InstanceHardware(1, 8, 32),
    "ml.trn1.32xlarge": InstanceHardware(16, 128, 512),
}


def hardware_of(instance_type: str) -> InstanceHardware | None:
    """The hardware of one ``instance_type``, or None when this table does not have it."""
    return _TABLE.get(instance_type)


def known_hardware_types() -> tuple[str, ...]:
    """Every instance type in the table."""
    return tuple(_TABLE)
