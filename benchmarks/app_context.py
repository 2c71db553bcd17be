"""cdk.json's context for the benchmark apps, as the example app (``app.py``) applies it.

Both sides of the fleet benchmark (``lib_app.py`` and ``l1_app.py``) apply it the same way, and
neither imports the example stacks to do so: what they time is the fleet, not module imports the
fleet does not use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aws_cdk import App

#: cdk.json's context: the feature flags (and CLI settings) every synthesis of the apps uses.
CONTEXT: dict[str, Any] = json.loads((Path(__file__).resolve().parents[1] / "cdk.json").read_text())["context"]


def apply_context(app: App) -> App:
    """Give ``app`` cdk.json's context where it has none (the CDK CLI, or ``-c``, may have passed it already)."""
    for key, value in CONTEXT.items():
        if app.node.try_get_context(key) is None:
            app.node.set_context(key, value)
    return app
