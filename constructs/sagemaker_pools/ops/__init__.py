"""The ``sagemaker-pools`` command: operate SageMaker AI endpoints that use instance pools.

Six subcommands (this package never imports ``aws_cdk``):

* ``status ENDPOINT``: which hardware the endpoint runs on, pool by pool;
* ``migrate ENDPOINT --fallback TYPE ...``: move a single-type endpoint to pools;
* ``recommend JOB``: pools and models from an AI recommendation job;
* ``bench ENDPOINT``: a closed- or open-loop benchmark of an endpoint;
* ``gate --baseline E[/V] --candidate E[/V]``: does a fallback build answer like the primary;
* ``simulate TEMPLATE``: replay traffic and outages through a synthesized template's scaling (no AWS).

Run it as ``sagemaker-pools`` or ``python -m sagemaker_pools.ops``; the entry point is
:func:`sagemaker_pools.ops.cli.main`. User documentation: ``docs/ops.md``.
"""

from __future__ import annotations

__all__: list[str] = []
