#!/usr/bin/env python3
"""The library side of the benchmark: app.py's example app, or N pooled endpoints.

Usage (the CLI passes the output folder in ``CDK_OUTDIR``)::

    python benchmarks/lib_app.py                # exactly what `python app.py` does
    python benchmarks/lib_app.py --fleet 10     # 10 pooled endpoints (see fleet.py)

``run.py`` times the example app by running ``app.py`` itself; this script exists for the fleet.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleet", type=int, default=None, help="N pooled endpoints instead of the example app")
    args = parser.parse_args()
    from aws_cdk import App

    outdir = None if "CDK_OUTDIR" in os.environ else "cdk.out"
    if args.fleet is None:
        sys.path.insert(0, str(ROOT))
        import app as example_app  # noqa: PLC0415

        app = example_app.build_app(App(outdir=outdir))
    else:
        # cdk.json's feature flags, applied as the L1 twin applies them (without the example stacks).
        from app_context import apply_context  # noqa: PLC0415
        from fleet import lib_fleet  # noqa: PLC0415

        app = apply_context(App(outdir=outdir))
        lib_fleet(app, args.fleet)
    app.synth()


if __name__ == "__main__":
    main()
