"""Output token counts, where the response carries one.

Recognized counts: ``usage.completion_tokens`` (OpenAI-compatible servers, vLLM, SGLang, LMI's
chat API), ``usage.output_tokens``, ``details.generated_tokens`` (Hugging Face TGI, LMI) and a
top-level ``generated_tokens``; a list response sums its items. Streaming responses are read as
server-sent events (``data: {...}`` lines): the last count seen wins. Responses without a count
are measured in chunks and bytes instead, and the report says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["count_tokens", "count_stream_tokens"]


def _count(document: Any) -> int | None:
    if isinstance(document, list):
        counts = [c for c in (_count(d) for d in document) if c is not None]
        return sum(counts) if counts else None
    if not isinstance(document, dict):
        return None
    usage = document.get("usage")
    if isinstance(usage, dict):
        for key in ("completion_tokens", "output_tokens", "outputTokens"):
            if isinstance(usage.get(key), int):
                return int(usage[key])
    details = document.get("details")
    if isinstance(details, dict) and isinstance(details.get("generated_tokens"), int):
        return int(details["generated_tokens"])
    if isinstance(document.get("generated_tokens"), int):
        return int(document["generated_tokens"])
    return None


def count_tokens(body: bytes) -> int | None:
    """The output token count a (non-streaming) JSON response reports, if any."""
    if b"tokens" not in body:
        return None
    try:
        return _count(json.loads(body))
    except ValueError:
        return None


def count_stream_tokens(parts: Iterable[bytes]) -> int | None:
    """The last output token count reported in a stream's server-sent events, if any."""
    text = b"".join(parts)
    if b"tokens" not in text:
        return None
    found = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(b"data:"):
            line = line[5:].strip()
        if b"tokens" not in line or not line.startswith((b"{", b"[")):
            continue
        try:
            count = _count(json.loads(line))
        except ValueError:
            continue
        if count is not None:
            found = count
    return found
