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
    for value in ("ml.g6e.48xlarge", "${not a token}", 3, 2.5, -1e30, True, None, float("nan"), float("-inf")):
        assert is_unresolved(value) is False
    # Containers: decided in Python, the same way CDK decides.
    for value in ({"A": "b"}, {"A": text}, ["a", "b"], [text], [], [listed[0]]):
        assert is_unresolved(value) == cdk.Token.is_unresolved(value), value


G6E, G6 = "ml.g6e.48xlarge", "ml.g6.48xlarge"
FIVE = ("ml.g6e.48xlarge", "ml.g6.48xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.48xlarge")


def test_five_pools_are_the_maximum() -> None:
    # SageMaker's limit (ProductionVariant.InstancePools: 1-5 items): five resolve, six do not.
    pools = resolve_pools([InstancePool(instance_type=t) for t in FIVE])
    assert [(p.instance_type, p.priority) for p in pools] == list(zip(FIVE, [1, 2, 3, 4, 5]))
    with pytest.raises(PoolConfigError) as err:
        resolve_pools([InstancePool(instance_type=t) for t in (*FIVE, "ml.g6.12xlarge")])
    assert (err.value.field, err.value.value) == ("pools", "6 pools")


@pytest.mark.parametrize(
    ("pools", "message"),
    [
        ([], "pools: got '0 pools'; allowed: 1 to 5 instance pools (a SageMaker limit)"),
        (G6E, "pools: got 'ml.g6e.48xlarge'; allowed: a list of 1 to 5 InstancePool objects"),
        ([{"instance_type": G6E}], "pools[0]: got {'instance_type': 'ml.g6e.48xlarge'}; allowed: an InstancePool"),
        (
            [InstancePool(instance_type=G6E, priority=2), InstancePool(instance_type=G6)],
            "pools[*].priority: got 2; allowed: unique priorities (each 1-5); 2 appears more than once",
        ),
        (
            [InstancePool(instance_type=G6E), InstancePool(instance_type=G6E)],
            "pools[*].instance_type: got 'ml.g6e.48xlarge'; allowed: each instance type once; "
            "'ml.g6e.48xlarge' appears more than once",
        ),
    ],
)
def test_list_rules_name_the_field_the_value_and_what_is_allowed(pools: object, message: str) -> None:
    with pytest.raises(PoolConfigError) as err:
        resolve_pools(pools)  # type: ignore[arg-type]
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        (
            InstancePool(instance_type=G6E, priority=7),
            "InstancePool.priority: got 7; allowed: an integer from 1 to 5 (1 = highest priority)",
        ),
        (
            InstancePool(instance_type=G6E, priority=True),
            "InstancePool.priority: got True; allowed: an integer from 1 to 5 (1 = highest priority)",
        ),
        (
            InstancePool(instance_type=G6E, max_concurrency=0),
            "InstancePool.max_concurrency: got 0; allowed: a number > 0 (concurrent requests one instance sustains)",
        ),
        (
            InstancePool(instance_type=G6E, max_concurrency=True),
            "InstancePool.max_concurrency: got True; allowed: a number > 0 (concurrent requests one instance sustains)",
        ),
        (
            InstancePool(instance_type=G6E, max_concurrency=float("nan")),
            "InstancePool.max_concurrency: got nan; allowed: a number > 0 (concurrent requests one instance sustains)",
        ),
        (
            InstancePool(instance_type=G6E, model="my-model"),  # type: ignore[arg-type]
            "InstancePool.model: got 'my-model'; allowed: a PoolModel (or PoolModel.from_model_name(...))",
        ),
    ],
)
def test_pool_rules_name_the_field_the_value_and_what_is_allowed(pool: InstancePool, message: str) -> None:
    with pytest.raises(PoolConfigError) as err:
        pool.validate()
    assert str(err.value) == message


def test_tokens_are_neither_compared_nor_reordered() -> None:
    import aws_cdk as cdk

    stack = cdk.Stack(cdk.App(), "Tokens")
    first, second = (cdk.CfnParameter(stack, n, type="Number").value_as_number for n in ("First", "Second"))
    # The list order stands whatever the tokens' placeholder numbers are: one of the two orders
    # differs from a numeric sort of the placeholders.
    for a, b in ((first, second), (second, first)):
        pools = resolve_pools([InstancePool(instance_type=G6E, priority=a), InstancePool(instance_type=G6, priority=b)])
        assert [p.priority for p in pools] == [a, b]
    # A token is not a duplicate of anything (CloudFormation resolves it); literals still are,
    # before and after it.
    same = resolve_pools([InstancePool(instance_type=G6E, priority=first), InstancePool(instance_type=G6, priority=first)])
    assert [p.priority for p in same] == [first, first]
    with pytest.raises(PoolConfigError) as err:
        resolve_pools(
            [
                InstancePool(instance_type=G6E, priority=first),
                InstancePool(instance_type=G6, priority=2),
                InstancePool(instance_type="ml.p4d.24xlarge", priority=2),
            ]
        )
    assert err.value.field == "pools[*].priority"
    InstancePool(instance_type=G6E, max_concurrency=1).validate()  # one request at a time: the least there is


def test_did_you_mean_reads_the_closest_known_types() -> None:
    from sagemaker_pools.instance_types import known_instance_types

    # case, spaces and a missing "ml." do not matter; a full "ml." name is not prefixed twice
    assert closest_instance_types(" P5.48XL ") == ["ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p5.4xlarge"]
    assert closest_instance_types("ml.g5.2xl") == ["ml.g5.2xlarge", "ml.g5.24xlarge", "ml.g5.12xlarge"]
    assert closest_instance_types("g6e.48xlarge", n=1) == ["ml.g6e.48xlarge"]
    assert closest_instance_types("g5") == []
    with pytest.raises(PoolConfigError) as err:
        check_instance_type("ml.zz9.huge", "f")
    assert str(err.value) == (
        f"f: got 'ml.zz9.huge'; allowed: one of the {len(known_instance_types())} ml.* types in the SageMaker API model; "
        "for a type newer than this list pass allow_unknown_instance_type=True"
    )
    with pytest.raises(PoolConfigError) as err:
        check_instance_type(48, "f")
    assert str(err.value) == "f: got 48; allowed: an ml.* instance type name such as 'ml.g6e.48xlarge'"


def test_instance_storage_needs_a_three_part_name() -> None:
    assert has_instance_storage("ml.g5") is None
    assert has_instance_storage("ml.g5.48xlarge.x") is None
    assert has_instance_storage("ml.c5.xlarge") is False
