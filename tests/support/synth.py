"""Synthesis helpers shared by the tests (one jsii process per pytest run)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import assertions

from sagemaker_pools import PoolModel


def new_app() -> cdk.App:
    """A fresh app writing to a temporary folder, with cdk.json's context (the feature flags) as app.py uses it."""
    from app import apply_context  # the repository root is on sys.path (conftest.py)

    return apply_context(cdk.App(outdir=tempfile.mkdtemp(prefix="cdk-test-")))


def new_stack(name: str = "Test") -> cdk.Stack:
    """A fresh app (:func:`new_app`) and stack."""
    return cdk.Stack(new_app(), name)


def template_of(stack: cdk.Stack) -> dict[str, Any]:
    """The synthesized template of ``stack`` as a dict."""
    return assertions.Template.from_stack(stack).to_json()  # type: ignore[no-any-return]


def synth(build: Callable[[cdk.Stack], object], name: str = "Test") -> dict[str, Any]:
    """Build something into a fresh stack with ``build(stack)`` and return the template."""
    stack = new_stack(name)
    build(stack)
    return template_of(stack)


def resource_types(stack: cdk.Stack) -> list[str]:
    """The CloudFormation types of every L1 resource in ``stack``'s construct tree, without synthesizing.

    For "nothing half-written" checks: a stack a refused construct left empty cannot be synthesized
    (aws-cdk-lib's built-in validation, on under ``@aws-cdk/core:validateAgainstDefaultRules``,
    rejects a template without resources).
    """
    return [c.cfn_resource_type for c in stack.node.find_all() if isinstance(c, cdk.CfnResource)]


def imported_model(stack: cdk.Stack, name: str = "base-model", id: str | None = None) -> Any:
    """A model referenced by name (no resources of its own)."""
    return PoolModel.from_model_name(stack, id or f"Imported-{name}", name)


def resources(template: dict[str, Any], type_name: str) -> dict[str, dict[str, Any]]:
    """``{logical id: resource}`` of one type."""
    return {k: v for k, v in template.get("Resources", {}).items() if v["Type"] == type_name}


def only(template: dict[str, Any], type_name: str) -> dict[str, Any]:
    """The properties of the single resource of ``type_name`` (fails if not exactly one)."""
    found = resources(template, type_name)
    assert len(found) == 1, f"expected one {type_name}, found {sorted(found)}"
    return next(iter(found.values())).get("Properties", {})  # type: ignore[no-any-return]


def read_assembly(outdir: Path) -> dict[str, dict[str, Any]]:
    """``{stack name: template}`` of a synthesized cloud assembly."""
    manifest = json.loads((outdir / "manifest.json").read_text())
    templates = {}
    for name, artifact in manifest["artifacts"].items():
        if artifact.get("type") == "aws:cloudformation:stack":
            templates[name] = json.loads((outdir / artifact["properties"]["templateFile"]).read_text())
    return templates


def nag_report(build: Callable[[cdk.Stack], object]) -> dict[str, Any]:
    """cdk-nag's AwsSolutions report for one stack built by ``build`` (synthesis fails on a finding)."""
    from cdk_nag import AwsSolutionsChecks

    app = cdk.App(outdir=tempfile.mkdtemp(prefix="cdk-nag-"))
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    build(cdk.Stack(app, "Nag"))
    app.synth()
    report = json.loads((Path(app.outdir) / "validation-report.json").read_text())
    nag = [r for r in report["pluginReports"] if r["pluginName"] == "AwsSolutions"]
    # cdk-nag writes no report when it found nothing, acknowledged or not
    return nag[0] if nag else {"violations": [], "suppressedViolations": []}  # type: ignore[no-any-return]
