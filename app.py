#!/usr/bin/env python3
"""The example app: synthesizes every example stack into cdk.out/ (``make synth`` / ``npx cdk synth``).

Environment-agnostic: no account or region is set, so it synthesizes offline without
credentials. Set ``env=Environment(account=..., region=...)`` in your own app to pin one.

cdk.json's ``context`` (the feature flags ``cdk init`` writes for this aws-cdk-lib, from its
``recommended-feature-flags.json``) is the one source of context: the CDK CLI passes it to this
process, and :func:`apply_context` gives it to an app that did not get it from the CLI
(``python app.py``, ``make synth``, the tests), so every path synthesizes the same templates.
"""

import json
import os
from pathlib import Path
from typing import Any

# jsii prints a Node.js end-of-life banner on every run under Node 20: not news to a user of this
# app, and it must be silenced before aws_cdk starts its Node process.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from aws_cdk import App  # noqa: E402

from sagemaker_pools_examples import AsyncScaleToZeroStack, InferenceComponentPoolsStack, RealtimePooledLlmStack  # noqa: E402

#: cdk.json's context: the feature flags (and CLI settings) every synthesis of this app uses.
CONTEXT: dict[str, Any] = json.loads(Path(__file__).with_name("cdk.json").read_text())["context"]


def apply_context(app: App) -> App:
    """Give ``app`` cdk.json's context where it has none (the CDK CLI has passed it already; ``-c`` wins)."""
    for key, value in CONTEXT.items():
        if app.node.try_get_context(key) is None:
            app.node.set_context(key, value)
    return app


def build_app(app: App | None = None) -> App:
    """Add every example stack to ``app`` (a new App by default), with cdk.json's context, and return it."""
    # The CDK CLI passes its output folder in CDK_OUTDIR; run directly, write to ./cdk.out like it.
    app = apply_context(app or App(outdir=None if "CDK_OUTDIR" in os.environ else "cdk.out"))
    RealtimePooledLlmStack(app, "RealtimePooledLlm")
    InferenceComponentPoolsStack(app, "InferenceComponentPools")
    AsyncScaleToZeroStack(app, "AsyncScaleToZero")
    return app


if __name__ == "__main__":
    build_app().synth()
