"""Detect unresolved CDK tokens without importing aws_cdk.

``pools.py`` and ``instance_types.py`` must stay importable without CDK (the ops command
uses them and importing aws_cdk starts a Node process). A token can only exist once aws_cdk
has been imported by someone, so we ask CDK only when it is already loaded.
"""

from __future__ import annotations

import sys

__all__ = ["is_unresolved"]


def is_unresolved(value: object) -> bool:
    """True when ``value`` is (or contains) an unresolved CDK token.

    Static checks are skipped for such values: their real value is only known at deploy time
    (a ``CfnParameter``, an attribute of another resource, ...). In Python, number tokens are
    large negative floats, which is why a naive ``count >= 1`` check wrongly rejects them.
    """
    if "aws_cdk" not in sys.modules or value is None or isinstance(value, bool):
        return False
    from aws_cdk import Token

    return bool(Token.is_unresolved(value))
