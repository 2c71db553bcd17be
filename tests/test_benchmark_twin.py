"""The synth benchmark compares like with like: every library template equals its hand-written L1 twin.

``benchmarks/l1_app.py`` writes the example app (and the N-endpoint fleet of ``benchmarks/fleet.py``)
with aws-cdk-lib's ``Cfn*`` classes only; ``benchmarks/twin.py`` compares templates up to logical
ids and generated names. A library change that alters a template fails here until the twin
follows, so ``make bench`` never times two different things.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import fleet  # noqa: E402
import l1_app  # noqa: E402
import twin  # noqa: E402
from app import CONTEXT  # noqa: E402
from support.frozen import frozen  # noqa: E402


def _synth(build: Any) -> dict[str, dict[str, Any]]:
    app = cdk.App(context=CONTEXT)  # cdk.json's feature flags, as every synthesis of the examples
    build(app)
    assembly = app.synth()
    return {s.stack_name: s.template for s in assembly.stacks}


@pytest.fixture(scope="module")
def l1_example() -> dict[str, dict[str, Any]]:
    return frozen(_synth(l1_app.build_app))  # type: ignore[no-any-return]


def test_every_example_stack_has_an_equal_l1_twin(
    example_templates: dict[str, dict[str, Any]], l1_example: dict[str, dict[str, Any]]
) -> None:
    assert set(l1_example) == set(example_templates)
    problems = {name: twin.differences(t, l1_example[name]) for name, t in example_templates.items()}
    assert problems == {name: [] for name in example_templates}


def test_the_fleet_has_an_equal_l1_twin() -> None:
    """Two endpoints in one stack: shared topic and dashboard, per-endpoint ids and names."""
    lib = _synth(lambda app: fleet.lib_fleet(app, 2))
    l1 = _synth(lambda app: fleet.l1_fleet(app, 2))
    assert set(lib) == set(l1) == {"PooledFleet01"}
    assert twin.differences(lib["PooledFleet01"], l1["PooledFleet01"]) == []
    per_endpoint = len(lib["PooledFleet01"]["Resources"]) - len(_synth(lambda app: fleet.lib_fleet(app, 1))["PooledFleet01"]["Resources"])
    # Three models (role, policy, model each), config, endpoint, seven alarms and the at-max composite,
    # scalable target and one policy: no role per scalable target, no duplicate policy.
    assert per_endpoint == 21


def test_the_comparison_sees_a_one_character_difference(l1_example: dict[str, dict[str, Any]]) -> None:
    original = l1_example["RealtimePooledLlm"]
    changed = copy.deepcopy(original)
    config = next(r for r in changed["Resources"].values() if r["Type"] == "AWS::SageMaker::EndpointConfig")
    config["Properties"]["ProductionVariants"][0]["InstancePools"][2]["Priority"] = 4
    assert twin.differences(original, original) == []
    assert twin.differences(original, changed) != []


def test_the_comparison_sees_swapped_references(l1_example: dict[str, dict[str, Any]]) -> None:
    """Same resources, same property values, different wiring: two pools' models exchanged."""
    original = l1_example["RealtimePooledLlm"]
    changed = copy.deepcopy(original)
    config = next(r for r in changed["Resources"].values() if r["Type"] == "AWS::SageMaker::EndpointConfig")
    pools = config["Properties"]["ProductionVariants"][0]["InstancePools"]
    pools[1]["ModelNameOverride"], pools[2]["ModelNameOverride"] = pools[2]["ModelNameOverride"], pools[1]["ModelNameOverride"]
    assert twin.differences(original, changed) != []


def test_logical_ids_and_derived_names_do_not_matter(l1_example: dict[str, dict[str, Any]]) -> None:
    original = l1_example["InferenceComponentPools"]
    renamed = copy.deepcopy(original)
    mapping = {old: f"Renamed{i}" for i, old in enumerate(original["Resources"])}
    text = json.dumps(renamed)
    for old, new in mapping.items():
        text = text.replace(f'"{old}"', f'"{new}"')
    assert twin.differences(original, json.loads(text)) == []
