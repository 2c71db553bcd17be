"""``sagemaker-pools bench``: a closed- or open-loop benchmark of a SageMaker endpoint.

Modules: :mod:`.options` (what to run), :mod:`.bodies` (request bodies from JSONL),
:mod:`.invoke` (one timed call), :mod:`.worker` (a worker process), :mod:`.runner` (the
processes and the live progress), :mod:`.stats` (percentiles), :mod:`.report` (the report,
``--json`` and ``--compare``), and :mod:`.localserver` with :mod:`.eventstream` (a local
SageMaker-runtime-compatible server for trying the command and for tests).

This package imports nothing at import time, so that the local server starts fast.
"""

from __future__ import annotations

__all__: list[str] = []
