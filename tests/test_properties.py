"""Property-based: any valid pool list synthesizes, passes the API contract check, and renders
each pool's own (instance type, priority, model) in priority order."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sagemaker_pools import InstancePool, PooledEndpoint, PoolModel, known_instance_types
from support.contract import template_problems
from support.synth import new_stack, template_of


@st.composite
def pool_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(min_value=1, max_value=5))
    types = draw(st.lists(st.sampled_from(known_instance_types()), min_size=count, max_size=count, unique=True))
    explicit = draw(st.booleans())
    # A permutation's prefix: explicit priorities are out of list order (and may skip numbers)
    # in all but 1/count! of the explicit draws.
    priorities = draw(st.permutations([1, 2, 3, 4, 5]))[:count] if explicit else [None] * count
    return [
        {
            "instance_type": t,
            "priority": p,
            "own_model": draw(st.booleans()),
            "max_concurrency": draw(st.one_of(st.none(), st.integers(min_value=1, max_value=512))),
        }
        for t, p in zip(types, priorities)
    ]


# 25 examples (each one synthesizes a stack: about 0.3 s). A draw has explicit priorities out of
# list order with probability 1/2 (explicit) x 4/5 (two pools or more) x about 0.82 (not already
# sorted) = 0.33, so 25 random draws all miss that case with probability 0.67**25 < 1e-4; the
# @example below pins it anyway (types swapped against priorities, each pool with its own model
# or not), so every run checks it whatever hypothesis draws.
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool_lists())
@example(
    [
        {"instance_type": "ml.g5.48xlarge", "priority": 5, "own_model": True, "max_concurrency": 8},
        {"instance_type": "ml.g6e.48xlarge", "priority": 2, "own_model": False, "max_concurrency": None},
        {"instance_type": "ml.p4d.24xlarge", "priority": 3, "own_model": True, "max_concurrency": 16},
    ]
)
def test_any_valid_pool_list_synthesizes_within_the_contract(spec: list[dict[str, Any]]) -> None:
    stack = new_stack()
    base = PoolModel.from_model_name(stack, "Base", "base-model")
    pools = [
        InstancePool(
            instance_type=s["instance_type"],
            priority=s["priority"],
            max_concurrency=s["max_concurrency"],
            model=PoolModel.from_model_name(stack, f"M{i}", f"model-{i}") if s["own_model"] else None,
        )
        for i, s in enumerate(spec)
    ]
    PooledEndpoint(stack, "Endpoint", model=base, pools=pools)
    template = template_of(stack)
    assert all(not p for p in template_problems(template).values()), template_problems(template)
    config = next(r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::EndpointConfig")
    rendered = config["Properties"]["ProductionVariants"][0]["InstancePools"]
    # Each pool keeps its own type, priority (explicit, or its list position) and model, highest
    # priority first.
    expected = sorted(
        (
            (s["instance_type"], s["priority"] or i + 1, f"model-{i}" if s["own_model"] else None)
            for i, s in enumerate(spec)
        ),
        key=lambda triple: triple[1],
    )
    assert [(p["InstanceType"], p["Priority"], p.get("ModelNameOverride")) for p in rendered] == expected
