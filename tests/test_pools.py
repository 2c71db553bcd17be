"""InstancePool and resolve_pools: pure value objects (no CDK needed)."""

from __future__ import annotations

import pytest

from sagemaker_pools import InstancePool, PoolConfigError
from sagemaker_pools.instance_types import check_instance_type, closest_instance_types, has_instance_storage
from sagemaker_pools.pools import resolve_pools


def test_priorities_default_to_list_order() -> None:
    pools = resolve_pools([InstancePool(instance_type=t) for t in ("ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge")])
    assert [(p.instance_type, p.priority) for p in pools] == [
        ("ml.g6e.48xlarge", 1),
        ("ml.g6.48xlarge", 2),
        ("ml.p4d.24xlarge", 3),
    ]


def test_explicit_priorities_are_sorted_highest_first() -> None:
    pools = resolve_pools(
        [InstancePool(instance_type="ml.g5.48xlarge", priority=5), InstancePool(instance_type="ml.g6e.48xlarge", priority=2)]
    )
    assert [p.instance_type for p in pools] == ["ml.g6e.48xlarge", "ml.g5.48xlarge"]
    assert [p.priority for p in pools] == [2, 5]


def test_unknown_type_suggests_the_closest_names() -> None:
    with pytest.raises(PoolConfigError) as err:
        check_instance_type("ml.g6e.48xlrage", "pools[0].instance_type")
    assert "did you mean ml.g6e.48xlarge" in str(err.value)
    assert closest_instance_types("g6e.48xlarge")[0] == "ml.g6e.48xlarge"


def test_newer_types_are_accepted_when_asked() -> None:
    pool = InstancePool(instance_type="ml.g9.96xlarge", allow_unknown_instance_type=True)
    assert resolve_pools([pool])[0].priority == 1
    with pytest.raises(PoolConfigError):
        resolve_pools([InstancePool(instance_type="g9.96xlarge", allow_unknown_instance_type=True)])


def test_instance_storage_table() -> None:
    assert has_instance_storage("ml.g6e.48xlarge") is True
    assert has_instance_storage("ml.p4d.24xlarge") is True
    assert has_instance_storage("ml.inf2.48xlarge") is False
    assert has_instance_storage("ml.g7.48xlarge") is None


def test_token_detection_fast_paths_agree_with_cdk() -> None:
    import aws_cdk as cdk

    from sagemaker_pools._tokens import is_unresolved

    stack = cdk.Stack(cdk.App(), "Tokens")
    number = cdk.CfnParameter(stack, "N", type="Number").value_as_number
    text = cdk.CfnParameter(stack, "S").value_as_string
    listed = cdk.CfnParameter(stack, "L", type="CommaDelimitedList").value_as_list
    for value in (number, text, f"prefix-{text}", listed, cdk.Aws.REGION, cdk.Duration.minutes(1)):
        assert is_unresolved(value) == cdk.Token.is_unresolved(value), value
        assert is_unresolved(value) is not isinstance(value, cdk.Duration)
    for value in ("ml.g6e.48xlarge", "${not a token}", 3, 2.5, -1e30, True, None):
        assert is_unresolved(value) is False
    # Containers: decided in Python, the same way CDK decides.
    for value in ({"A": "b"}, {"A": text}, ["a", "b"], [text], [], [listed[0]]):
        assert is_unresolved(value) == cdk.Token.is_unresolved(value), value
