"""Request bodies from a JSONL file, and how long each body's input is.

One body a line, sent as is. The input length is reported in bytes and, for JSON bodies whose
prompt is at a well-known place (``inputs``, ``prompt``, ``text``, ``input``, or the
``content`` of ``messages``), in characters of prompt text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import EXIT_USAGE, OpsError

__all__ = ["load_bodies", "prompt_chars", "DEFAULT_BODY", "synthetic_bodies", "SYNTHETIC_BODIES"]

#: How many synthetic bodies ``--input-tokens`` / ``--output-tokens`` builds (sent in turn).
SYNTHETIC_BODIES = 100
_WORDS = (
    "the model serves requests on instance pools across several accelerator types while the "
    "endpoint scales out when traffic grows and falls back to another type when capacity is short"
).split()

DEFAULT_BODY = b'{"inputs": "Explain SageMaker inference in one sentence.", "parameters": {"max_new_tokens": 64}}'
_PROMPT_KEYS = ("inputs", "prompt", "text", "input")


def load_bodies(path: str, *, require_json: bool) -> tuple[bytes, ...]:
    """The non-empty lines of ``path``; with ``require_json`` each must be a JSON document."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise OpsError(f"cannot read --input {path}: {exc.strerror or exc}", EXIT_USAGE) from None
    bodies = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        if require_json:
            try:
                json.loads(line)
            except ValueError as exc:
                raise OpsError(f"--input {path} line {number} is not JSON ({exc}); one request body a line", EXIT_USAGE) from None
        bodies.append(line.strip())
    if not bodies:
        raise OpsError(f"--input {path} has no request bodies", EXIT_USAGE)
    return tuple(bodies)


def prompt_chars(body: bytes) -> int | None:
    """Characters of prompt text in a JSON body, None when there is no recognizable prompt."""
    try:
        document = json.loads(body)
    except ValueError:
        return None
    return _text_length(document)


def _text_length(document: Any) -> int | None:
    if isinstance(document, list):
        lengths = [n for n in (_text_length(d) for d in document) if n is not None]
        return sum(lengths) if lengths else None
    if not isinstance(document, dict):
        return None
    for key in _PROMPT_KEYS:
        value = document.get(key)
        if isinstance(value, str):
            return len(value)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return sum(len(v) for v in value)
    messages = document.get("messages")
    if isinstance(messages, list):
        total = 0
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                total += len(content)
            elif isinstance(content, list):
                total += sum(len(p.get("text", "")) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
        return total
    return None


def synthetic_bodies(
    *, input_tokens: int, output_tokens: int, range_ratio: float = 0.0, seed: int, tokenizer: str | None = None, count: int = SYNTHETIC_BODIES
) -> tuple[bytes, ...]:
    """``count`` JSON bodies ``{"inputs": PROMPT, "parameters": {"max_new_tokens": N}}`` (TGI / LMI style).

    Each length is drawn uniformly from ``n * (1 - range_ratio)`` to ``n * (1 + range_ratio)``
    (vLLM's random dataset), seeded. A prompt is common English words: about one token a word
    for the usual BPE vocabularies; with ``tokenizer`` (a local ``tokenizer.json``) exactly
    ``input_tokens`` tokens of it.
    """
    problems = []
    if input_tokens < 1 or output_tokens < 1:
        problems.append("--input-tokens and --output-tokens must be at least 1")
    if not 0 <= range_ratio < 1:
        problems.append("--token-range-ratio must be from 0 to below 1")
    if problems:
        raise OpsError("; ".join(problems), EXIT_USAGE)
    import random

    from .tokens import load_tokenizer

    encoder = load_tokenizer(tokenizer) if tokenizer else None
    rng = random.Random(f"bodies-{seed}")

    def length(n: int) -> int:
        return max(1, round(rng.uniform(n * (1 - range_ratio), n * (1 + range_ratio))))

    bodies = []
    for _ in range(count):
        n_in, n_out = length(input_tokens), length(output_tokens)
        start = rng.randrange(len(_WORDS))
        words = [_WORDS[(start + i) % len(_WORDS)] for i in range(n_in)]
        prompt = " ".join(words)
        if encoder is not None:
            ids = encoder.encode(prompt, add_special_tokens=False).ids
            while len(ids) < n_in:  # a vocabulary with multi-word tokens: add words until long enough
                words += words
                prompt = " ".join(words)
                ids = encoder.encode(prompt, add_special_tokens=False).ids
            prompt = encoder.decode(ids[:n_in])
        bodies.append(json.dumps({"inputs": prompt, "parameters": {"max_new_tokens": n_out}}).encode())
    return tuple(bodies)
