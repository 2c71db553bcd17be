#!/usr/bin/env python3
"""The example app: synthesizes every example stack into cdk.out/ (``make synth`` / ``npx cdk synth``).

Environment-agnostic: no account or region is set, so it synthesizes offline without
credentials. Set ``env=Environment(account=..., region=...)`` in your own app to pin one.
"""

import os

from aws_cdk import App

from sagemaker_pools_examples import AsyncScaleToZeroStack, InferenceComponentPoolsStack, RealtimePooledLlmStack


def build_app(app: App | None = None) -> App:
    """Add every example stack to ``app`` (a new App by default) and return it."""
    # The CDK CLI passes its output folder in CDK_OUTDIR; run directly, write to ./cdk.out like it.
    app = app or App(outdir=None if "CDK_OUTDIR" in os.environ else "cdk.out")
    # Grant S3 log delivery through a bucket policy, not the legacy AccessControl ACL (cfn-lint W3045).
    app.node.set_context("@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy", True)
    RealtimePooledLlmStack(app, "RealtimePooledLlm")
    InferenceComponentPoolsStack(app, "InferenceComponentPools")
    AsyncScaleToZeroStack(app, "AsyncScaleToZero")
    return app


if __name__ == "__main__":
    build_app().synth()
