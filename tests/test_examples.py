"""Every example stack: snapshot, cfn-lint, the botocore API contract and cdk-nag.

The example app is synthesized once per run (``example_templates`` in conftest.py) with cdk-nag
attached, so adding a stack to app.py puts it under every check here.
"""

from __future__ import annotations

import json
from typing import Any

import cfnlint.api
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from support.contract import template_problems


def test_every_example_stack_matches_its_snapshot(
    example_templates: dict[str, dict[str, Any]], snapshot: SnapshotAssertion
) -> None:
    assert example_templates, "app.py synthesized no stack"
    for name, template in sorted(example_templates.items()):
        assert template == snapshot(name=name, extension_class=JSONSnapshotExtension)


def _lint(template: dict[str, Any]) -> list[Any]:
    """cfn-lint's default rule set as its command line runs it (errors and warnings, us-east-1)."""
    return [m for m in cfnlint.api.lint(json.dumps(template), regions=["us-east-1"]) if m.rule.id[0] in "EW"]


def test_cfn_lint_reports_nothing(example_templates: dict[str, dict[str, Any]]) -> None:
    findings = {
        name: [f"{m.rule.id} {m.message} ({'/'.join(map(str, m.path))})" for m in _lint(t)]
        for name, t in example_templates.items()
    }
    assert findings == {name: [] for name in example_templates}


def test_cfn_lint_would_catch_a_bad_pool() -> None:
    """The check above can fail: the same linter flags a priority of 7."""
    template = {
        "Resources": {
            "Config": {
                "Type": "AWS::SageMaker::EndpointConfig",
                "Properties": {
                    "ProductionVariants": [
                        {
                            "VariantName": "AllTraffic",
                            "ModelName": "m",
                            "InitialInstanceCount": 1,
                            "InstancePools": [{"InstanceType": "ml.g6e.48xlarge", "Priority": 7}],
                        }
                    ]
                },
            }
        }
    }
    assert any(m.rule.id == "E3034" for m in _lint(template))


def test_every_resource_satisfies_the_api_contract(example_templates: dict[str, dict[str, Any]]) -> None:
    checked = 0
    for name, template in example_templates.items():
        problems = template_problems(template)
        checked += len(problems)
        assert {k: v for k, v in problems.items() if v} == {}, name
    assert checked > 0


def test_cdk_nag_has_no_unacknowledged_finding(nag_report: dict[str, Any]) -> None:
    (report,) = [r for r in nag_report["pluginReports"] if r["pluginName"] == "AwsSolutions"]
    assert report["conclusion"] == "success"
    assert report["violations"] == []
    for suppressed in report.get("suppressedViolations", []):
        assert len(suppressed.get("reason", "")) > 20, suppressed["ruleName"]


#: Example models that run without network isolation: (stack, model construct id) -> why.
#: Each is explained in docs/network-isolation.md and next to the model in its stack.
NOT_ISOLATED = {
    ("InferenceComponentPools", model): (
        "an inference component's model: on such an endpoint AWS documents isolation as the endpoint "
        "config's EnableNetworkIsolation, which PooledEndpoint does not render, and not whether the "
        "model's own flag is honoured or must match it"
    )
    for model in ("P5Fp8", "G6Awq")
}


def test_every_example_model_runs_network_isolated_unless_listed_with_a_reason(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """checkov's CKV_AWS_370 (and AWS Config's sagemaker-model-isolation-enabled): every model has
    EnableNetworkIsolation true; the exceptions are exactly the listed ones (none stale)."""
    isolated, open_ = set(), set()
    for stack, template in example_templates.items():
        for logical_id, resource in template["Resources"].items():
            if resource["Type"] == "AWS::SageMaker::Model":
                model = (stack, logical_id[:-8])  # a top-level construct id and its 8-character hash
                (isolated if resource["Properties"].get("EnableNetworkIsolation") is True else open_).add(model)
    assert len(isolated) >= 4, isolated  # the realtime stack's three builds and the async model
    assert open_ == set(NOT_ISOLATED)
    assert all(len(reason) > 40 for reason in NOT_ISOLATED.values())
