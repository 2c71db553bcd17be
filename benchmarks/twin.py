"""Compare two CloudFormation templates up to logical ids and generated names.

The library and its hand-written L1 twin (``l1_app.py``) build their resources from different
construct trees, so the same resource gets a different logical id (``LlmEndpointConfigC7E13985``
against ``LlmEndpointConfig``), and names that CDK derives from a logical id differ with it (an
``AWS::IAM::Policy``'s ``PolicyName``). Everything else must be identical.

:func:`normalize` renames every logical id to a canonical one computed from the resource's
content alone (iterated colour refinement: a resource's label is a hash of its type and
properties with every reference replaced by the label of its target, repeated until the
partition is stable), rewrites ``Ref``, ``Fn::GetAtt``, ``DependsOn``, ``Fn::Sub`` and strings
equal to a logical id accordingly, and drops what the CLI adds per construct path (the
``aws:cdk:path`` metadata, the ``CDKMetadata`` resource and its condition). Two templates are equal
up to logical ids and names exactly when their normalized forms are equal (``==``).

Pure Python and JSON: importing this module does not start jsii.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import Any

__all__ = ["normalize", "differences", "CLI_ONLY_METADATA"]

#: Resource metadata keys that depend on the construct path or the asset staging, not on the resource.
CLI_ONLY_METADATA = ("aws:cdk:path", "aws:asset:path", "aws:asset:property", "aws:asset:is-bundled")

_SUB_VAR = re.compile(r"\$\{([A-Za-z0-9]+)(\.[A-Za-z0-9.]+)?\}")


def _strip_cli_additions(template: dict[str, Any]) -> dict[str, Any]:
    t = copy.deepcopy(template)
    resources = t.get("Resources", {})
    resources.pop("CDKMetadata", None)
    conditions = t.get("Conditions", {})
    conditions.pop("CDKMetadataAvailable", None)
    if not conditions:
        t.pop("Conditions", None)
    for resource in resources.values():
        meta = resource.get("Metadata")
        if isinstance(meta, dict):
            for key in CLI_ONLY_METADATA:
                meta.pop(key, None)
            if not meta:
                resource.pop("Metadata")
    return t


#: Names that CDK generates from the construct path (not from the logical id): {type: [property]}.
GENERATED_NAMES = {"AWS::ApplicationAutoScaling::ScalingPolicy": ["PolicyName"]}


def _blank_generated_names(resources: dict[str, Any]) -> None:
    for resource in resources.values():
        for prop in GENERATED_NAMES.get(resource.get("Type", ""), []):
            if prop in resource.get("Properties", {}):
                resource["Properties"][prop] = "<generated name>"


def _rewrite(value: Any, ids: dict[str, str]) -> Any:
    """``value`` with every reference to a logical id in ``ids`` replaced by ``ids[id]``."""
    if isinstance(value, dict):
        if len(value) == 1:
            (key, arg), = value.items()
            if key == "Ref" and isinstance(arg, str):
                return {"Ref": ids.get(arg, arg)}
            if key == "Fn::GetAtt":
                if isinstance(arg, str):
                    target, _, attribute = arg.partition(".")
                    return {"Fn::GetAtt": [ids.get(target, target), attribute]}
                if isinstance(arg, list) and arg and isinstance(arg[0], str):
                    return {"Fn::GetAtt": [ids.get(arg[0], arg[0]), *[_rewrite(a, ids) for a in arg[1:]]]}
            if key == "Fn::Sub":
                def sub(text: str) -> str:
                    return _SUB_VAR.sub(lambda m: "${" + ids.get(m[1], m[1]) + (m[2] or "") + "}", text)

                if isinstance(arg, str):
                    return {"Fn::Sub": sub(arg)}
                if isinstance(arg, list) and arg and isinstance(arg[0], str):
                    return {"Fn::Sub": [sub(arg[0]), *[_rewrite(a, ids) for a in arg[1:]]]}
        return {k: _rewrite(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, ids) for v in value]
    if isinstance(value, str) and value in ids:
        # A name that CDK derived from the logical id (an IAM policy's PolicyName, for example).
        return "<name:" + ids[value] + ">"
    return value


def _depends_on(resource: dict[str, Any]) -> list[str]:
    deps = resource.get("DependsOn", [])
    return [deps] if isinstance(deps, str) else list(deps)


def _canonical_ids(resources: dict[str, Any]) -> dict[str, str]:
    """``{logical id: canonical id}``; the canonical id depends only on content and graph shape."""
    blank = {logical_id: "?" for logical_id in resources}
    labels: dict[str, str] = {}
    for logical_id, resource in resources.items():
        body = {k: v for k, v in resource.items() if k != "DependsOn"}
        payload = json.dumps([_rewrite(body, blank), len(_depends_on(resource))], sort_keys=True)
        labels[logical_id] = hashlib.sha256(payload.encode()).hexdigest()
    # Who references whom: a resource is told apart by what it references and by what references
    # it (three identical execution roles differ only in which model uses each).
    incoming: dict[str, list[str]] = {logical_id: [] for logical_id in resources}
    for logical_id, resource in resources.items():
        marked = json.dumps(_rewrite(resource, {i: f"\u0000{i}\u0000" for i in resources}))
        for target in set(re.findall(r"\\u0000([A-Za-z0-9]+)\\u0000", marked)) | set(_depends_on(resource)):
            if target in incoming and target != logical_id:
                incoming[target].append(logical_id)
    distinct = len(set(labels.values()))
    for _ in range(len(resources) + 1):
        refined: dict[str, str] = {}
        for logical_id, resource in resources.items():
            body = {k: v for k, v in resource.items() if k != "DependsOn"}
            deps = sorted(labels.get(d, d) for d in _depends_on(resource))
            users = sorted(labels[u] for u in incoming[logical_id])
            payload = json.dumps([labels[logical_id], _rewrite(body, labels), deps, users], sort_keys=True)
            refined[logical_id] = hashlib.sha256(payload.encode()).hexdigest()
        labels = refined
        now = len(set(labels.values()))
        if now == distinct:
            break
        distinct = now
    # Readable canonical ids: the type's last part and a short hash; ties (resources that are
    # indistinguishable, hence interchangeable) get an index by original id order.
    seen: dict[str, int] = {}
    out: dict[str, str] = {}
    for logical_id in sorted(resources, key=lambda i: (labels[i], i)):
        kind = resources[logical_id].get("Type", "Custom").split("::")[-1]
        base = f"{kind}_{labels[logical_id][:12]}"
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[logical_id] = base if n == 0 else f"{base}_{n}"
    return out


def normalize(template: dict[str, Any]) -> dict[str, Any]:
    """``template`` with content-derived logical ids and without per-construct-path CLI metadata."""
    t = _strip_cli_additions(template)
    resources = t.get("Resources", {})
    _blank_generated_names(resources)
    ids = _canonical_ids(resources)
    renamed: dict[str, Any] = {}
    for logical_id, resource in resources.items():
        body = _rewrite({k: v for k, v in resource.items() if k != "DependsOn"}, ids)
        deps = sorted(ids.get(d, d) for d in _depends_on(resource))
        if deps:
            body["DependsOn"] = deps
        renamed[ids[logical_id]] = body
    t["Resources"] = dict(sorted(renamed.items()))
    for section in ("Outputs", "Conditions"):
        if section in t:
            t[section] = _rewrite(t[section], ids)
    return t


def differences(a: dict[str, Any], b: dict[str, Any], *, limit: int = 20) -> list[str]:
    """Human-readable differences between two templates after :func:`normalize` ([] when equal)."""
    na, nb = normalize(a), normalize(b)
    out: list[str] = []

    if na != nb:
        # Resource ids are content hashes: a resource that differs shows up as one id only in
        # each template. Pair them by type, closest first, and report their property differences.
        ra, rb = na.get("Resources", {}), nb.get("Resources", {})
        only_a = sorted(set(ra) - set(rb))
        only_b = sorted(set(rb) - set(ra))
        shared = set(ra) & set(rb)

        def neutral(resource: dict[str, Any]) -> Any:
            return _neutral(resource, shared)

        for i in only_a:
            candidates = [j for j in only_b if rb[j]["Type"] == ra[i]["Type"]]
            if not candidates:
                out.append(f"resource only in the first: {i} ({ra[i]['Type']})")
                continue

            def distance(j: str) -> int:
                found: list[str] = []
                _walk(neutral(ra[i]), neutral(rb[j]), "", found, 1000)
                return len(found)

            j = min(candidates, key=distance)
            only_b.remove(j)
            before = len(out)
            _walk(neutral(ra[i]), neutral(rb[j]), ra[i]["Type"], out, limit)
            if len(out) == before:
                out.append(f"{ra[i]['Type']} {i} != {j}: they reference different, equally shaped resources")
        out += [f"resource only in the second: {j} ({rb[j]['Type']})" for j in only_b]
        for section in sorted((set(na) | set(nb)) - {"Resources"}):
            _walk(na.get(section), nb.get(section), section, out, limit)
        if not out:
            out.append("the normalized templates differ")
    return out[:limit] if na != nb else []


def _walk(x: Any, y: Any, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit:
        return
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y), key=str):
            if k not in x:
                out.append(f"{path}/{k}: only in the second: {json.dumps(y[k])[:300]}")
            elif k not in y:
                out.append(f"{path}/{k}: only in the first: {json.dumps(x[k])[:300]}")
            else:
                _walk(x[k], y[k], f"{path}/{k}", out, limit)
    elif isinstance(x, list) and isinstance(y, list):
        for i, (u, v) in enumerate(zip(x, y)):
            _walk(u, v, f"{path}[{i}]", out, limit)
        for i in range(min(len(x), len(y)), max(len(x), len(y))):
            side, value = ("first", x[i]) if len(x) > len(y) else ("second", y[i])
            out.append(f"{path}[{i}]: only in the {side}: {json.dumps(value)[:300]}")
    elif x != y:
        out.append(f"{path}: {json.dumps(x)[:300]} != {json.dumps(y)[:300]}")


def _neutral(resource: dict[str, Any], shared: set[str]) -> Any:
    """A resource with the canonical ids of resources that differ blanked (for a readable property diff)."""
    text = json.dumps(resource)

    def blank(m: re.Match[str]) -> str:
        return m[0] if m[0].strip('"') in shared else f'"{m[1]}_*"'

    return json.loads(re.sub(r'"([A-Za-z]+)_[0-9a-f]{12}(?:_\d+)?"', blank, text))
