"""Deterministic decoding: the same prompt should give the same answer on both sides.

Two payload formats are recognized (anything else is sent as is, and the report says so):

* **TGI / LMI** (``{"inputs": ..., "parameters": {...}}``): ``parameters.do_sample`` is set to
  false, and ``temperature``, ``top_p``, ``top_k`` and ``typical_p`` are removed: TGI samples
  whenever one of them is set (its token chooser samples when ``do_sample`` *or* any logits
  warper is on), so ``do_sample: false`` alone is not enough there.
* **OpenAI-compatible** (``messages`` or ``prompt`` without ``inputs``: vLLM, SGLang, LMI's
  chat API): ``temperature`` is set to 0 (greedy) and ``seed`` to ``--seed``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

__all__ = ["Decoding", "deterministic", "summarize_decoding", "SAMPLING_PARAMETERS"]

#: TGI / LMI parameters that turn sampling on (removed).
SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k", "typical_p")


@dataclasses.dataclass(frozen=True)
class Decoding:
    """One body made deterministic: the body to send, its format and what was changed."""

    body: bytes
    style: str
    changes: tuple[str, ...]


def deterministic(body: bytes, *, seed: int) -> Decoding:
    """``body`` with greedy decoding asked for, where its format is one of the two known ones."""
    try:
        document: Any = json.loads(body)
    except ValueError:
        return Decoding(body, "unknown", ())
    if not isinstance(document, dict):
        return Decoding(body, "unknown", ())
    changes: list[str] = []
    if "inputs" in document:
        parameters = document.setdefault("parameters", {})
        if not isinstance(parameters, dict):
            return Decoding(body, "unknown", ())
        parameters["do_sample"] = False
        changes.append("parameters.do_sample=false")
        for name in SAMPLING_PARAMETERS:
            if name in parameters:
                del parameters[name]
                changes.append(f"removed parameters.{name}")
        style = "tgi"
    elif "messages" in document or "prompt" in document:
        document["temperature"] = 0
        document["seed"] = seed
        changes += ["temperature=0", f"seed={seed}"]
        style = "openai"
    else:
        return Decoding(body, "unknown", ())
    return Decoding(json.dumps(document).encode(), style, tuple(changes))


def summarize_decoding(decodings: Sequence[Decoding]) -> dict[str, Any]:
    """``{"deterministic": True, "bodies": {style: count}, "set": [each change, once]}`` for the report."""
    styles: dict[str, int] = {}
    changes: list[str] = []
    for decoding in decodings:
        styles[decoding.style] = styles.get(decoding.style, 0) + 1
        changes += [c for c in decoding.changes if c not in changes]
    return {"deterministic": True, "bodies": dict(sorted(styles.items())), "set": changes}
