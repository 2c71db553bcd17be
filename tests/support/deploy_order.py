"""Deploy order: whatever names another resource of the stack by a literal must come after it.

CloudFormation orders resources only by ``Ref``, ``Fn::GetAtt``, ``Fn::Sub`` references and
``DependsOn``. A resource that names another one by a literal string (a fixed endpoint name, a
component name, a scalable target's ``ResourceId``) carries no such reference, so CloudFormation
may create it first, in parallel, and the API call fails (CreateInferenceComponent on an endpoint
that is not InService, RegisterScalableTarget on a variant that does not exist yet).

:func:`deploy_order_problems` finds, in a synthesized template, every *name reference* whose API
call needs the named resource to exist:

* ``AWS::SageMaker::InferenceComponent``: ``EndpointName`` -> the endpoint; every ``ModelName``
  of ``Specification`` / ``Specifications`` -> the model; its rollback ``AlarmName`` s -> the alarms;
* ``AWS::SageMaker::EndpointConfig``: each variant's ``ModelName`` and pool ``ModelNameOverride`` -> the model;
* ``AWS::SageMaker::Endpoint``: ``EndpointConfigName`` -> the config; rollback ``AlarmName`` s -> the alarms;
* ``AWS::ApplicationAutoScaling::ScalableTarget``: ``ResourceId`` ``endpoint/<name>/variant/<variant>``
  -> the endpoint, ``inference-component/<name>`` -> the component;
* ``AWS::ApplicationAutoScaling::ScalingPolicy``: ``ResourceId`` + ``ScalableDimension`` -> the
  scalable target registered for them (and through it the endpoint or component);

and asserts a path of ``Ref`` / ``Fn::GetAtt`` / ``Fn::Sub`` / ``DependsOn`` edges (transitively)
from the referrer to the resource that owns the name. A name no resource of the template owns
(an imported model or endpoint) is not checked: it exists before the stack.

Deliberately not checked: CloudWatch alarms and dashboards that name an endpoint in a metric
dimension. PutMetricAlarm and PutDashboard accept metrics that have no data yet, and an
endpoint's own rollback alarms must exist *before* it (the endpoint's ``DeploymentConfig``
refers to them), so such an edge would be a cycle.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["NameReference", "name_references", "deploy_order_problems"]

_RESOURCE_ID = re.compile(r"^(?:endpoint/(?P<endpoint>[^/]+)/variant/[^/]+|inference-component/(?P<component>[^/]+))$")


@dataclass(frozen=True)
class NameReference:
    """``referrer`` names a resource of ``kind`` by the literal ``name`` at ``path``."""

    referrer: str
    kind: str
    name: str
    path: str


def _literal(value: Any) -> str | None:
    """The string ``value`` stands for, if it is a literal (a plain string, or an ``Fn::Join`` of literals)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and set(value) == {"Fn::Join"}:
        separator, parts = value["Fn::Join"]
        texts = [_literal(p) for p in parts]
        if all(t is not None for t in texts):
            return str(separator).join(t for t in texts if t is not None)
    return None


def _alarm_names(config: Any) -> Iterator[tuple[str, Any]]:
    alarms = ((config or {}).get("AutoRollbackConfiguration") or {}).get("Alarms") or []
    for index, alarm in enumerate(alarms):
        yield f"DeploymentConfig.AutoRollbackConfiguration.Alarms[{index}].AlarmName", alarm.get("AlarmName")


def _named(logical_id: str, resource: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """``(kind, path, value)`` of every property of ``resource`` that names another resource."""
    kind = resource.get("Type")
    props = resource.get("Properties") or {}
    if kind == "AWS::SageMaker::InferenceComponent":
        yield "endpoint", "EndpointName", props.get("EndpointName")
        specs = props.get("Specifications") or ([props["Specification"]] if "Specification" in props else [])
        for index, spec in enumerate(specs):
            yield "model", f"Specifications[{index}].ModelName", spec.get("ModelName")
        for path, value in _alarm_names(props.get("DeploymentConfig")):
            yield "alarm", path, value
    elif kind == "AWS::SageMaker::EndpointConfig":
        for index, variant in enumerate(props.get("ProductionVariants") or []):
            yield "model", f"ProductionVariants[{index}].ModelName", variant.get("ModelName")
            for p, pool in enumerate(variant.get("InstancePools") or []):
                yield "model", f"ProductionVariants[{index}].InstancePools[{p}].ModelNameOverride", pool.get("ModelNameOverride")
    elif kind == "AWS::SageMaker::Endpoint":
        yield "endpoint-config", "EndpointConfigName", props.get("EndpointConfigName")
        for path, value in _alarm_names(props.get("DeploymentConfig")):
            yield "alarm", path, value
    elif kind == "AWS::ApplicationAutoScaling::ScalableTarget":
        resource_id = _literal(props.get("ResourceId"))
        match = _RESOURCE_ID.match(resource_id or "")
        if match and match["endpoint"]:
            yield "endpoint", "ResourceId", match["endpoint"]
        elif match and match["component"]:
            yield "inference-component", "ResourceId", match["component"]
    elif kind == "AWS::ApplicationAutoScaling::ScalingPolicy" and "ScalingTargetId" not in props:
        resource_id, dimension = _literal(props.get("ResourceId")), _literal(props.get("ScalableDimension"))
        if resource_id is not None and dimension is not None:
            yield "scalable-target", "ResourceId", f"{resource_id}|{dimension}"


def _owners(template: dict[str, Any]) -> dict[tuple[str, str], str]:
    """``{(kind, literal name): logical id}`` of every resource whose name is a literal."""
    name_property = {
        "AWS::SageMaker::Endpoint": ("endpoint", "EndpointName"),
        "AWS::SageMaker::InferenceComponent": ("inference-component", "InferenceComponentName"),
        "AWS::SageMaker::Model": ("model", "ModelName"),
        "AWS::SageMaker::EndpointConfig": ("endpoint-config", "EndpointConfigName"),
        "AWS::CloudWatch::Alarm": ("alarm", "AlarmName"),
    }
    owners: dict[tuple[str, str], str] = {}
    for logical_id, resource in template.get("Resources", {}).items():
        props = resource.get("Properties") or {}
        if resource.get("Type") in name_property:
            kind, prop = name_property[resource["Type"]]
            name = _literal(props.get(prop))
            if name is not None:
                # SageMaker names are case-insensitive.
                owners[(kind, name.lower() if kind != "alarm" else name)] = logical_id
        elif resource.get("Type") == "AWS::ApplicationAutoScaling::ScalableTarget":
            resource_id, dimension = _literal(props.get("ResourceId")), _literal(props.get("ScalableDimension"))
            if resource_id is not None and dimension is not None:
                owners[("scalable-target", f"{resource_id}|{dimension}")] = logical_id
    return owners


def name_references(template: dict[str, Any]) -> list[NameReference]:
    """Every literal name reference in ``template`` to a resource the template itself owns."""
    owners = _owners(template)
    found = []
    for logical_id, resource in template.get("Resources", {}).items():
        for kind, path, value in _named(logical_id, resource):
            name = _literal(value)
            if name is None:
                continue  # a Ref / GetAtt: CloudFormation orders it already
            key = (kind, name if kind in ("alarm", "scalable-target") else name.lower())
            if key in owners and owners[key] != logical_id:
                found.append(NameReference(logical_id, kind, name, path))
    return found


def _edges(node: Any) -> Iterator[str]:
    """Logical ids that ``node`` refers to through Ref, Fn::GetAtt or Fn::Sub."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                yield value
            elif key == "Fn::GetAtt":
                target = value[0] if isinstance(value, list) else str(value).split(".", 1)[0]
                yield target
            elif key == "Fn::Sub":
                text = value[0] if isinstance(value, list) else value
                for name in re.findall(r"\$\{([^}!][^}]*)\}", str(text)):
                    yield name.split(".", 1)[0]
                if isinstance(value, list):
                    yield from _edges(value[1:])
            else:
                yield from _edges(value)
    elif isinstance(node, list):
        for item in node:
            yield from _edges(item)


def _graph(template: dict[str, Any]) -> dict[str, set[str]]:
    resources = template.get("Resources", {})
    graph: dict[str, set[str]] = {}
    for logical_id, resource in resources.items():
        depends = resource.get("DependsOn") or []
        targets = set(_edges({k: v for k, v in resource.items() if k != "DependsOn"}))
        targets.update([depends] if isinstance(depends, str) else depends)
        graph[logical_id] = {t for t in targets if t in resources}
    return graph


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = {start}, [start]
    while stack:
        for nxt in graph.get(stack.pop(), ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def deploy_order_problems(template: dict[str, Any]) -> list[str]:
    """One line per name reference without a Ref / GetAtt / DependsOn path to the owner (empty: fine)."""
    owners = _owners(template)
    graph = _graph(template)
    problems = []
    for ref in name_references(template):
        key = (ref.kind, ref.name if ref.kind in ("alarm", "scalable-target") else ref.name.lower())
        owner = owners[key]
        if not _reaches(graph, ref.referrer, owner):
            problems.append(
                f"{ref.referrer}.{ref.path} names {ref.kind} {ref.name!r} ({owner}) by a literal, "
                f"with no Ref/GetAtt/DependsOn path to {owner}: CloudFormation may create it first"
            )
    return problems
