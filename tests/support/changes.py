"""What CloudFormation would do going from one template to the next.

Uses the resource provider schemas shipped with cfn-lint (the same ones CloudFormation
publishes): a change to a ``createOnlyProperties`` path replaces the resource, any other change
updates it in place. (Coarse on purpose: a change anywhere under a create-only top-level
property counts as a change of that property, which is how the EndpointConfig schema is written.)
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import cfnlint

_SCHEMAS = Path(cfnlint.__file__).parent / "data" / "schemas"


@lru_cache(maxsize=None)
def create_only_properties(resource_type: str) -> frozenset[str]:
    """Top-level create-only properties of ``resource_type`` (us-east-1 provider schema)."""
    providers = json.loads((_SCHEMAS / "providers" / "us-east-1.json").read_text())
    schema = json.loads((_SCHEMAS / "resources" / f"{providers[resource_type]}.json").read_text())
    return frozenset(p.split("/")[2] for p in schema.get("createOnlyProperties", []))


def _references(value: Any) -> set[str]:
    """Logical ids that ``value`` points at through Ref or Fn::GetAtt."""
    if isinstance(value, dict):
        if set(value) == {"Ref"}:
            return {value["Ref"]}
        if set(value) == {"Fn::GetAtt"}:
            target = value["Fn::GetAtt"]
            return {target[0] if isinstance(target, list) else target.split(".")[0]}
        return set().union(*(_references(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_references(v) for v in value)) if value else set()
    return set()


def plan(before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """``{logical id: "add" | "remove" | "replace" | "update"}`` for every resource that changes.

    A replaced resource gets a new physical id, so every property that references it changes
    too (and may in turn replace its owner): followed until nothing more changes.
    """
    old, new = before.get("Resources", {}), after.get("Resources", {})
    actions: dict[str, str] = {}
    for logical_id in old.keys() - new.keys():
        actions[logical_id] = "remove"
    for logical_id in new.keys() - old.keys():
        actions[logical_id] = "add"
    changed: dict[str, set[str]] = {}
    for logical_id in old.keys() & new.keys():
        pa, pb = old[logical_id].get("Properties", {}), new[logical_id].get("Properties", {})
        changed[logical_id] = {k for k in pa.keys() | pb.keys() if pa.get(k) != pb.get(k)}
    while True:
        replaced = {k for k, a in actions.items() if a in ("replace", "add")}
        progress = False
        for logical_id, props in changed.items():
            if old[logical_id]["Type"] != new[logical_id]["Type"]:
                action = "replace"
            else:
                moved = {k for k, v in new[logical_id].get("Properties", {}).items() if _references(v) & replaced}
                props |= moved
                if props & create_only_properties(new[logical_id]["Type"]):
                    action = "replace"
                else:
                    action = "update" if props else ""
            if action and actions.get(logical_id) != action:
                actions[logical_id] = action
                progress = True
        if not progress:
            return actions
