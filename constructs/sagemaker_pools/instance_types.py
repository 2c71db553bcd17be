"""The ``ml.*`` instance types that a SageMaker production variant accepts.

The list is ``ProductionVariantInstanceType`` from the SageMaker API model in botocore
(277 values as of botocore 1.44.8), shipped as package data ``data/sagemaker-instance-types.txt``.
SageMaker adds hardware faster than this library is released: a type newer than the list is
accepted per pool with ``InstancePool(..., allow_unknown_instance_type=True)``.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from importlib import resources

from ._tokens import is_unresolved
from .errors import PoolConfigError

__all__ = [
    "known_instance_types",
    "is_known_instance_type",
    "check_instance_type",
    "closest_instance_types",
    "has_instance_storage",
    "is_inf1",
]


@lru_cache(maxsize=1)
def known_instance_types() -> tuple[str, ...]:
    """Every known ``ml.*`` production-variant instance type, in the API model's order."""
    text = resources.files(__package__).joinpath("data/sagemaker-instance-types.txt").read_text()
    return tuple(line.strip() for line in text.splitlines() if line.strip())


@lru_cache(maxsize=1)
def _known_set() -> frozenset[str]:
    return frozenset(known_instance_types())


def is_known_instance_type(instance_type: str) -> bool:
    """True when ``instance_type`` is in the SageMaker API model's list."""
    return instance_type in _known_set()


def closest_instance_types(instance_type: str, n: int = 3) -> list[str]:
    """Up to ``n`` known types that look most like ``instance_type`` (for did-you-mean)."""
    candidate = instance_type.strip().lower()
    if candidate and not candidate.startswith("ml."):
        candidate = "ml." + candidate
    return difflib.get_close_matches(candidate, known_instance_types(), n=n, cutoff=0.6)


def check_instance_type(instance_type: object, field: str, *, allow_unknown: bool = False) -> None:
    """Raise :class:`PoolConfigError` unless ``instance_type`` is a known ``ml.*`` type.

    Unresolved tokens are accepted unchecked. With ``allow_unknown`` any string of the form
    ``ml.<family>.<size>`` passes (for hardware newer than this library's list).
    """
    if is_unresolved(instance_type):
        return
    if not isinstance(instance_type, str):
        raise PoolConfigError(field, instance_type, "an ml.* instance type name such as 'ml.g6e.48xlarge'")
    if is_known_instance_type(instance_type):
        return
    if allow_unknown and instance_type.startswith("ml.") and instance_type.count(".") == 2:
        return
    hints = closest_instance_types(instance_type)
    hint = f"did you mean {', '.join(hints)}? " if hints else ""
    raise PoolConfigError(
        field,
        instance_type,
        f"{hint}one of the {len(known_instance_types())} ml.* types in the SageMaker API model; "
        "for a type newer than this list pass allow_unknown_instance_type=True",
    )


# Families whose instances carry NVMe instance-store volumes (EC2 instance-type pages, "Instance
# storage"). SageMaker provisions no EBS ML storage volume on them and CreateEndpointConfig
# rejects KmsKeyId (API reference, CreateEndpointConfig.KmsKeyId) and VolumeSizeInGB for them:
# the local NVMe is encrypted by the instance's hardware module.
_INSTANCE_STORE_FAMILIES = frozenset(
    {
        "c5d", "c6gd", "m5d", "m6gd", "r5d", "r6gd", "r7gd", "dl1",
        "g4dn", "g5", "g6", "g6e", "g7e",
        "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200",
        "trn1", "trn1n", "trn2",
    }
)
# Families known to be EBS-only.
_EBS_ONLY_FAMILIES = frozenset(
    {
        "c4", "c5", "c6g", "c6gn", "c6i", "c6in", "c7g", "c7i", "c8g", "m4", "m5", "m6g", "m6i", "m7i", "m8g",
        "r5", "r6g", "r6i", "r7i", "r8g", "t2", "p2", "p3", "inf1", "inf2",
    }
)


def has_instance_storage(instance_type: str) -> bool | None:
    """True if the type has NVMe instance storage, False if EBS-only, None if not known here."""
    parts = instance_type.split(".")
    family = parts[1] if len(parts) == 3 else ""
    if family in _INSTANCE_STORE_FAMILIES:
        return True
    if family in _EBS_ONLY_FAMILIES:
        return False
    return None


def is_inf1(instance_type: str) -> bool:
    """True for an Inf1 (first-generation Inferentia) type, which SageMaker's deployment guardrails
    and shadow testing exclude; False for a token (known only at deploy time)."""
    return not is_unresolved(instance_type) and instance_type.startswith("ml.inf1.")
