"""Request bodies from a JSONL file, and how long each body's input is.

One body a line, sent as is. The input length is reported in bytes and, for JSON bodies whose
prompt is at a well-known place (``inputs``, ``prompt``, ``text``, ``input``, or the
``content`` of ``messages``), in characters of prompt text.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import EXIT_USAGE, OpsError

__all__ = ["PROMPT_KEYS", "load_bodies", "prompt_chars", "DEFAULT_BODY", "synthetic_bodies", "SYNTHETIC_BODIES", "Shape", "parse_shape", "normal_tokens"]

#: How many synthetic bodies ``--input-tokens`` / ``--output-tokens`` builds (sent in turn).
SYNTHETIC_BODIES = 100
_WORDS = (
    "the model serves requests on instance pools across several accelerator types while the "
    "endpoint scales out when traffic grows and falls back to another type when capacity is short"
).split()

DEFAULT_BODY = b'{"inputs": "Explain SageMaker inference in one sentence.", "parameters": {"max_new_tokens": 64}}'
#: Where a JSON body holds its prompt as a string (besides ``messages``).
PROMPT_KEYS = ("inputs", "prompt", "text", "input")


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
    for key in PROMPT_KEYS:
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


@dataclasses.dataclass(frozen=True)
class Shape:
    """One (input, output) token-length pair of a mix, and its share of the requests (``--shape IN:OUT@WEIGHT``)."""

    input_tokens: int
    output_tokens: int
    weight: float = 1.0


def parse_shape(text: str) -> Shape:
    """``550:150@0.7`` -> Shape(550, 150, 0.7); the ``@WEIGHT`` is optional (1)."""
    match = _SHAPE.match(text.strip())
    if match is None:
        raise OpsError(f"--shape {text!r}: give INPUT:OUTPUT tokens and an optional weight, e.g. 550:150@0.7", EXIT_USAGE)
    weight = float(match["weight"]) if match["weight"] else 1.0
    shape = Shape(int(match["input"]), int(match["output"]), weight)
    if shape.input_tokens < 1 or shape.output_tokens < 1 or not weight > 0:
        raise OpsError(f"--shape {text!r}: token counts must be at least 1 and the weight above 0", EXIT_USAGE)
    return shape


_SHAPE = re.compile(r"^(?P<input>\d+):(?P<output>\d+)(?:@(?P<weight>\d+(?:\.\d*)?|\.\d+))?$")


def normal_tokens(rng: random.Random, mean: float, stddev: float) -> int:
    """A token count drawn as AIPerf draws ``--isl``/``--osl`` with a standard deviation.

    AIPerf's ``sample_positive_normal_integer``: the normal distribution truncated at 0 (a
    draw below 0 is drawn again, so the shape above 0 is not distorted), rounded up, at least
    1; with no spread, the mean rounded (at least 1).
    """
    if stddev <= 0:
        return max(1, round(mean))
    for _ in range(1000):
        value = rng.gauss(mean, stddev)
        if value >= 0:
            return max(1, math.ceil(value))
    return max(1, round(mean))  # unreachable for a mean >= 1; AIPerf falls back to the mean too


def synthetic_bodies(
    *,
    input_tokens: int,
    output_tokens: int,
    range_ratio: float = 0.0,
    seed: int,
    tokenizer: str | None = None,
    count: int = SYNTHETIC_BODIES,
    input_stddev: float = 0.0,
    output_stddev: float = 0.0,
    shapes: Sequence[Shape] = (),
    prefix_tokens: int = 0,
    prefix_count: int = 0,
) -> tuple[bytes, ...]:
    """``count`` JSON bodies ``{"inputs": PROMPT, "parameters": {"max_new_tokens": N}}`` (TGI / LMI style).

    Lengths: ``input_tokens`` / ``output_tokens``, or for each body one of ``shapes`` picked by
    weight. With ``range_ratio`` a length is drawn uniformly from ``n * (1 - range_ratio)`` to
    ``n * (1 + range_ratio)`` (vLLM's random dataset); with ``input_stddev`` / ``output_stddev``
    from a normal distribution around it (AIPerf's ``--isl-stddev``, :func:`normal_tokens`).
    Seeded. A prompt is common English words: about one token a word for the usual BPE
    vocabularies; with ``tokenizer`` (a local ``tokenizer.json``) exactly that many tokens of it.

    ``prefix_count`` distinct prefixes of ``prefix_tokens`` tokens (AIPerf's prefix prompt pool):
    body ``i`` starts with prefix ``i % prefix_count`` followed by its own prompt of the drawn
    input length, so every prefix is shared by the bodies sent in turn (at least
    ``prefix_count`` bodies are made).
    """
    problems = []
    if input_tokens < 1 or output_tokens < 1:
        problems.append("--input-tokens and --output-tokens must be at least 1")
    if not 0 <= range_ratio < 1:
        problems.append("--token-range-ratio must be from 0 to below 1")
    if input_stddev < 0 or output_stddev < 0:
        problems.append(f"--input-tokens-stddev {input_stddev:g} / --output-tokens-stddev {output_stddev:g}: each must be >= 0 (tokens)")
    if range_ratio and (input_stddev or output_stddev):
        problems.append("give --token-range-ratio (uniform lengths) or --input-tokens-stddev/--output-tokens-stddev (normal), not both")
    if (prefix_tokens > 0) != (prefix_count > 0) or prefix_tokens < 0 or prefix_count < 0:
        problems.append(f"--prefix-tokens {prefix_tokens} / --prefix-count {prefix_count}: give both, each at least 1 (0 and 0: no prefixes)")
    if problems:
        raise OpsError("; ".join(problems), EXIT_USAGE)
    from .tokens import load_tokenizer

    encoder = load_tokenizer(tokenizer) if tokenizer else None
    rng = random.Random(f"bodies-{seed}")
    mix = tuple(shapes) or (Shape(input_tokens, output_tokens),)
    weights = [s.weight for s in mix]

    def length(n: int, stddev: float) -> int:
        if stddev:
            return normal_tokens(rng, n, stddev)
        return max(1, round(rng.uniform(n * (1 - range_ratio), n * (1 + range_ratio))))

    def text(n: int, words: list[str]) -> str:
        prompt = " ".join(words)
        if encoder is None:
            return prompt
        ids = encoder.encode(prompt, add_special_tokens=False).ids
        while len(ids) < n:  # a vocabulary with multi-word tokens: add words until long enough
            words += words
            prompt = " ".join(words)
            ids = encoder.encode(prompt, add_special_tokens=False).ids
        return str(encoder.decode(ids[:n]))

    prefixes = _prefixes(random.Random(f"prefixes-{seed}"), prefix_tokens, prefix_count, text)
    bodies = []
    for i in range(max(count, prefix_count)):
        shape = mix[0] if len(mix) == 1 else rng.choices(mix, weights)[0]
        n_in, n_out = length(shape.input_tokens, input_stddev), length(shape.output_tokens, output_stddev)
        start = rng.randrange(len(_WORDS))
        prompt = text(n_in, [_WORDS[(start + j) % len(_WORDS)] for j in range(n_in)])
        if prefixes:
            prompt = prefixes[i % len(prefixes)] + " " + prompt
        bodies.append(json.dumps({"inputs": prompt, "parameters": {"max_new_tokens": n_out}}).encode())
    return tuple(bodies)


def _prefixes(rng: random.Random, tokens: int, count: int, text: Any) -> list[str]:
    """``count`` distinct prompts of ``tokens`` tokens: words drawn at random (not the bodies' word cycle)."""
    found: dict[str, None] = {}
    for _ in range(100 * count):
        if len(found) == count:
            break
        found[text(tokens, [rng.choice(_WORDS) for _ in range(tokens)])] = None
    if len(found) < count:
        raise OpsError(f"--prefix-count {count}: cannot make so many distinct prefixes of {tokens} tokens (give longer --prefix-tokens)", EXIT_USAGE)
    return list(found)
