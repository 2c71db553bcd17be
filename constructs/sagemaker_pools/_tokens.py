"""Detect unresolved CDK tokens without importing aws_cdk.

``pools.py`` and ``instance_types.py`` must stay importable without CDK (the ops command
uses them and importing aws_cdk starts a Node process). A token can only exist once aws_cdk
has been imported by someone, so we ask CDK only when it is already loaded.
"""

from __future__ import annotations

import math
import sys

__all__ = ["is_unresolved", "number_text"]


def is_unresolved(value: object) -> bool:
    """True when ``value`` is (or contains) an unresolved CDK token.

    Static checks are skipped for such values: their real value is only known at deploy time
    (a ``CfnParameter``, an attribute of another resource, ...). In Python, number tokens are
    large negative floats, which is why a naive ``count >= 1`` check wrongly rejects them.
    """
    if "aws_cdk" not in sys.modules or value is None or isinstance(value, (bool, int)):
        return False  # an int is never a token: CDK encodes number tokens as huge negative floats
    # Fast paths without a round trip to Node (this is called for nearly every prop): CDK's
    # string tokens always carry "${Token[" (or "#{Token[" for lists); number tokens are floats
    # near -1.9e289.
    if isinstance(value, str):
        if "{Token[" not in value:
            return False
    elif isinstance(value, float):
        if not (math.isfinite(value) and value <= _NUMBER_TOKEN_CEILING):
            return False  # NaN and infinities are not tokens (and JSON, jsii's wire format, cannot carry them)
    elif type(value) is dict:
        # A plain dict is never a token itself (CDK asks whether it is an IResolvable); its
        # values are checked one by one where they matter.
        return False
    elif type(value) in (list, tuple):
        # CDK's list token is a one-element list holding an encoded "#{Token[...]}" string.
        return len(value) == 1 and isinstance(value[0], str) and "#{Token[" in value[0]  # type: ignore[arg-type,index]
    from aws_cdk import Token

    return bool(Token.is_unresolved(value))


def number_text(value: float) -> str:
    """``value`` for a description, label or markdown text: ``f"{value:g}"``, a number token as ``str()``.

    ``str()`` of a number token is the placeholder CDK finds again in a string and renders as the
    token (a ``Ref`` inside an ``Fn::Join``); ``:g`` would round it into a number CloudFormation
    receives literally (``-1.88815e+289``).
    """
    return str(value) if is_unresolved(value) else f"{value:g}"


# CDK's number tokens are doubles encoded far below any real value (DOUBLE_TOKEN_MARKER in aws-cdk's
# token encoding, about -1.888e289); anything above this cannot be one.
_NUMBER_TOKEN_CEILING = -1e280
