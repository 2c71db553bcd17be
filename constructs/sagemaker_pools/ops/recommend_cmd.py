"""``sagemaker-pools recommend JOB``: pools and models from a completed AI recommendation job."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from .context import Context
from .errors import OpsError
from .names import sagemaker_name
from .recommend import ORDER_KEYS, PoolProposal, Recommendation, parse_job, propose_pools
from .recommend_code import recommendation_code
from .table import render_table

__all__ = ["add_parser", "run", "render_recommendations"]


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register the ``recommend`` subcommand."""
    p = subparsers.add_parser(
        "recommend",
        parents=parents,
        help="turn a completed AI recommendation job into pools and models",
        description="Read a completed AI recommendation job (DescribeAIRecommendationJob), show its "
        "recommendations, propose a pool order and print the PoolModel / InstancePool code.",
    )
    p.add_argument("job", metavar="JOB", type=sagemaker_name, help="AI recommendation job name")
    p.add_argument(
        "--order-by", choices=sorted(ORDER_KEYS), default="cost", help="pool order: lowest cost, highest throughput or lowest TTFT first (default: cost)"
    )
    p.add_argument("--json", action="store_true", help="print the recommendations, the proposal and the code as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Describe the job and print the table, the proposed order and the code."""
    job = ctx.clients.sagemaker().describe_ai_recommendation_job(AIRecommendationJobName=args.job)
    recommendations = parse_job(job)
    proposal = propose_pools(recommendations, args.order_by)
    code = recommendation_code(args.job, proposal) if proposal.pools else None
    if args.json:
        ctx.print(json.dumps(_to_json(args.job, recommendations, proposal, code), indent=2))
    else:
        ctx.print(render_recommendations(args.job, recommendations, proposal, code))
    if not proposal.pools:
        raise OpsError(
            f"none of the {len(recommendations)} recommendations names an instance type, a model package ARN and an "
            "inference specification: no pool to propose"
        )
    return 0


def _rec_json(rec: Recommendation) -> dict[str, Any]:
    data = dataclasses.asdict(rec)
    data["environment"] = dict(rec.environment)
    data["optimizations"] = list(rec.optimizations)
    return data


def _to_json(job: str, recs: list[Recommendation], proposal: PoolProposal, code: str | None) -> dict[str, Any]:
    return {
        "job": job,
        "order_by": proposal.order_by,
        "recommendations": [_rec_json(r) for r in recs],
        "pools": [
            {"priority": i, "instance_type": r.instance_type, "recommendation": r.index} for i, r in enumerate(proposal.pools, start=1)
        ],
        "left_out": list(proposal.left_out),
        "notes": list(proposal.notes),
        "code": code,
    }


def _metric_cell(rec: Recommendation, kind: str) -> str:
    metric = rec.metric(kind)
    if metric is None:
        return "-"
    return " ".join(x for x in (metric.value, metric.unit) if x)


def render_recommendations(job: str, recs: list[Recommendation], proposal: PoolProposal, code: str | None) -> str:
    """The table, each recommendation's details, the proposed pool order and the code."""
    rows = [
        [
            r.index,
            r.instance_type,
            r.instance_count,
            r.copies_per_instance,
            _metric_cell(r, "cost"),
            _metric_cell(r, "throughput"),
            _metric_cell(r, "ttft"),
            ", ".join(r.optimizations) or "-",
        ]
        for r in recs
    ]
    lines = [
        f"AI recommendation job {job}: {len(recs)} recommendations",
        render_table(
            ["#", "INSTANCE TYPE", "INSTANCES", "COPIES/INSTANCE", "COST", "THROUGHPUT", "TTFT", "OPTIMIZATIONS"], rows, indent="  "
        ),
        "",
    ]
    for r in recs:
        lines.append(f"  {r.index}. {r.instance_type or '-'}" + (f": {r.description}" if r.description else ""))
        lines.append(f"     model package     {r.model_package_arn or '-'}")
        lines.append(f"     inference spec    {r.inference_specification_name or '-'}")
        lines.append(f"     image             {r.image_uri or '-'}")
        env = ", ".join(f"{k}={v}" for k, v in r.environment.items())
        lines.append(f"     environment       {env or '-'}")
        perf = "; ".join(m.text() for m in r.expected_performance)
        lines.append(f"     expected          {perf or '-'}")
    lines.append("")
    order = " > ".join(f"{r.instance_type}" for r in proposal.pools)
    lines.append(f"Proposed pools by {proposal.order_by}: {order or 'none'}")
    lines += [f"  left out: {reason}" for reason in proposal.left_out]
    lines += [f"  note: {note}" for note in proposal.notes]
    if code is not None:
        lines += ["", code]
    return "\n".join(lines)
