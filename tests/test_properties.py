"""Property-based: any valid pool list synthesizes and passes the API contract check."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_pools import InstancePool, PooledEndpoint, PoolModel, known_instance_types
from support.contract import template_problems
from support.synth import new_stack, template_of


@st.composite
def pool_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(min_value=1, max_value=5))
    types = draw(st.lists(st.sampled_from(known_instance_types()), min_size=count, max_size=count, unique=True))
    explicit = draw(st.booleans())
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


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool_lists())
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
    assert sorted(p["InstanceType"] for p in rendered) == sorted(s["instance_type"] for s in spec)
    assert [p["Priority"] for p in rendered] == sorted(p["Priority"] for p in rendered)
    assert len({p["Priority"] for p in rendered}) == len(rendered)
    assert sum("ModelNameOverride" in p for p in rendered) == sum(s["own_model"] for s in spec)
