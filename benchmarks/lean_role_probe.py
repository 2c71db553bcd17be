#!/usr/bin/env python3
"""How far the library's execution role is from bare L1s: the library fleet with each model's
``ExecutionRole`` swapped for a ``CfnRole`` + ``CfnPolicy`` and nothing else, timed beside the
library and the L1 twin.

    python benchmarks/lean_role_probe.py --fleet 50 --pairs 5     # lib, lean, l1 interleaved
    LEAN_PROBE_ACKNOWLEDGE=1 python benchmarks/lean_role_probe.py  # the lean side keeps the cdk-nag acknowledgments
    python benchmarks/lean_role_probe.py --app --fleet 50          # the lean side alone (an app)

A probe, not a design: the swap keeps what the fleet's models need (the role's ARN, its policy
document with the same statements, the model waiting for the policy) and drops what the library
must still do (the acknowledgments unless asked, the policy's name, the path bookkeeping). So
its figure is a floor for any execution role at all. Per-triple ratios side ÷ L1 twin, median
[min, max], in fresh processes with the CDK CLI's environment, as ``run.py`` measures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def lean_roles() -> None:
    """Make ``PoolModel`` build its execution role from L1s (see the module docs)."""
    import os

    from aws_cdk import Acknowledgment, Validations
    from aws_cdk import aws_iam as iam
    from constructs import Construct

    import sagemaker_pools.model as model_module
    from sagemaker_pools import _roles, _tree

    def new_execution_role(scope: Construct, *, wildcard_reason: str, id: str = "ExecutionRole", statements=(), wildcards=()):  # type: ignore[no-untyped-def]
        del wildcard_reason
        stack = _tree.stack_of(scope)
        base = _roles._stack_basics(stack)
        holder = Construct(scope, id)
        role = iam.CfnRole(holder, "Resource", assume_role_policy_document=_ASSUME)
        document = iam.PolicyDocument.from_json({"Statement": [*base.statements, *statements]})
        policy_holder = Construct(holder, "DefaultPolicy")
        iam.CfnPolicy(policy_holder, "Resource", policy_document=document, policy_name="ExecutionRoleDefaultPolicy", roles=[role.ref])
        lean = _LeanRole(role.attr_arn, document)
        if os.environ.get("LEAN_PROBE_ACKNOWLEDGE"):
            Validations.of(holder).acknowledge(
                Acknowledgment(id="AwsSolutions::AwsSolutions-IAM5[Resource::*]", reason="probe"),
                *base.log_acknowledgments,
                *_roles._wildcard_acknowledgments(stack, wildcards),
            )
        return lean, policy_holder

    model_module.new_execution_role = new_execution_role  # type: ignore[assignment]
    model_module.add_statements = lambda role, statements: role.document.add_statements(  # type: ignore[assignment]
        *(s if isinstance(s, iam.PolicyStatement) else iam.PolicyStatement.from_json(s) for s in statements)
    )


_ASSUME = {
    "Version": "2012-10-17",
    "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}}],
}


class _LeanRole:
    """What the fleet's models read of their role."""

    def __init__(self, role_arn: str, document: Any) -> None:
        self.role_arn = role_arn
        self.document = document


def app(fleet: int) -> None:
    """The lean side as an app (``CDK_OUTDIR`` from the CLI's environment)."""
    import os

    from aws_cdk import App

    from app_context import apply_context
    from fleet import lib_fleet

    lean_roles()
    the_app = apply_context(App(outdir=None if "CDK_OUTDIR" in os.environ else "cdk.out"))
    lib_fleet(the_app, fleet)
    the_app.synth()


def compare(fleet: int, pairs: int) -> None:
    """Warm-up, then ``pairs`` interleaved triples lib, lean, l1; print the ratios to the twin."""
    import run

    apps = {
        "lib": run.command("lib", fleet),
        "lean": [str(Path(__file__).resolve()), "--app", "--fleet", str(fleet)],
        "l1": run.command("l1", fleet),
    }
    runs = run.interleaved(apps, pairs, f"fleet of {fleet}")
    print(f"fleet of {fleet}, {pairs} triples; wall ratio to the L1 twin, median [min, max]")
    for side in ("lib", "lean"):
        print(f"  {side:5s} {statistics.median(r['wall_s'] for r in runs[side]):6.2f} s  {run.fmt_ratio(run.ratio_of(runs, side, 'l1', 'wall_s'))}")
    print(f"  l1    {statistics.median(r['wall_s'] for r in runs['l1']):6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleet", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--app", action="store_true", help="run the lean side as an app (what --pairs times)")
    args = parser.parse_args()
    if args.app:
        app(args.fleet)
    else:
        compare(args.fleet, args.pairs)


if __name__ == "__main__":
    main()
