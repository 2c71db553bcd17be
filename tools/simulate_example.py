#!/usr/bin/env python3
"""Draw the README's simulation: the launch post's three-pool fleet riding through a g6e outage.

Synthesizes the ``RealtimePooledLlm`` example stack, then runs ``sagemaker-pools simulate`` on
its template with ``docs/simulate/launch-day.csv`` and an ml.g6e.48xlarge outage from 1h30 to 8h.
Writes ``docs/simulate-g6e-outage.png`` and the text output ``docs/simulate/launch-day.txt``.

Usage: ``make simulate-example`` (or ``python tools/simulate_example.py``); needs the ``[sim]`` extra.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: On-demand prices (USD per hour, us-east-1) used for the summary's cost lines.
PRICES = {"ml.g6e.48xlarge": "37.69", "ml.g6.48xlarge": "17.53", "ml.p4d.24xlarge": "37.69"}
ARGS = ["--traffic", str(DOCS / "simulate" / "launch-day.csv"), "--outage", "ml.g6e.48xlarge@90m-8h", "--duration", "12h"]


def main() -> int:
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    import aws_cdk as cdk

    from sagemaker_pools.ops.aws import AwsOptions, Clients
    from sagemaker_pools.ops.cli import main as cli
    from sagemaker_pools.ops.context import Context
    from sagemaker_pools_examples import RealtimePooledLlmStack

    app = cdk.App(outdir=tempfile.mkdtemp(prefix="simulate-example-"))
    app.node.set_context("@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy", True)
    stack = RealtimePooledLlmStack(app, "RealtimePooledLlm")
    template = app.synth().get_stack_by_name(stack.stack_name).template
    path = Path(app.outdir) / "RealtimePooledLlm.json"
    path.write_text(json.dumps(template))
    prices = [arg for t, usd in PRICES.items() for arg in ("--price", f"{t}={usd}")]
    out, err = io.StringIO(), io.StringIO()
    code = cli(
        ["simulate", str(path), *ARGS, *prices, "--plot", str(DOCS / "simulate-g6e-outage.png")],
        context=Context(clients=Clients(AwsOptions()), out=out, err=err),
    )
    sys.stderr.write(err.getvalue())
    if code == 0:
        text = out.getvalue().replace(str(path), "RealtimePooledLlm.json")
        (DOCS / "simulate" / "launch-day.txt").write_text(text.split("\nplot: ")[0].rstrip() + "\n")
        print(text)
    return code


if __name__ == "__main__":
    sys.exit(main())
