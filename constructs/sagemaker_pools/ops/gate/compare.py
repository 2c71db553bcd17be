"""What the gate measures on pairs of answers to the same request.

* **exact match**: the share of compared pairs whose generated text is identical (the text as
  bench reads it: ``generated_text``, ``choices[].text`` / ``message.content``; the whole body
  when the format is not recognized).
* **token agreement**: over all compared pairs, the tokens that are equal at the same position
  divided by the tokens of the longer answer of each pair (summed). Greedy decoding that
  diverges once usually continues differently, so agreement counts what the two sides share
  position by position, not an alignment. Two empty answers agree fully.
* **length ratio**: the candidate's tokens divided by the baseline's, summed over compared pairs.
* Tokens: with ``--tokenizer`` the token ids of that Hugging Face ``tokenizer.json``; without
  it, whitespace-separated words (``str.split()``).
* A pair is **compared** when both sides answered; a failed side counts as that side's error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..bench.stats import summarize

__all__ = ["Answer", "Pair", "Tokens", "compare", "EXAMPLES"]

#: Differing pairs the report shows.
EXAMPLES = 3
_EXAMPLE_CHARS = 200


@dataclasses.dataclass(frozen=True)
class Answer:
    """One side's answer to one request: the generated text, or the kind of failure."""

    ok: bool
    text: str | None = None
    error: str | None = None
    latency_s: float | None = None


@dataclasses.dataclass(frozen=True)
class Pair:
    """The two answers to one request; ``key`` names the request (input line, or capture id)."""

    key: str
    baseline: Answer
    candidate: Answer


class Tokens:
    """Splits text into tokens: a Hugging Face tokenizer's ids, or whitespace-separated words."""

    def __init__(self, tokenizer: Any = None, name: str | None = None) -> None:
        self._tokenizer = tokenizer
        self.unit = f"tokens of {name}" if tokenizer is not None else "whitespace-separated words (no --tokenizer)"

    def __call__(self, text: str) -> list[Any]:
        """The tokens of ``text``."""
        if self._tokenizer is not None:
            return list(self._tokenizer.encode(text, add_special_tokens=False).ids)
        return text.split()


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def compare(pairs: Sequence[Pair], tokens: Tokens) -> dict[str, Any]:
    """Every figure of the gate report that comes from the pairs (see the module docstring)."""
    compared = [p for p in pairs if p.baseline.ok and p.candidate.ok]
    exact = matched = longer_total = base_total = cand_total = 0
    per_pair: list[float] = []
    examples: list[dict[str, Any]] = []
    for pair in compared:
        base_text, cand_text = pair.baseline.text or "", pair.candidate.text or ""
        base, cand = tokens(base_text), tokens(cand_text)
        same = sum(1 for a, b in zip(base, cand) if a == b)
        longer = max(len(base), len(cand))
        matched += same
        longer_total += longer
        base_total += len(base)
        cand_total += len(cand)
        per_pair.append(same / longer if longer else 1.0)
        if base_text == cand_text:
            exact += 1
        elif len(examples) < EXAMPLES:
            examples.append(
                {"key": pair.key, "agreement": per_pair[-1], "baseline": base_text[:_EXAMPLE_CHARS], "candidate": cand_text[:_EXAMPLE_CHARS]}
            )
    errors = {side: _errors([getattr(p, side) for p in pairs]) for side in ("baseline", "candidate")}
    return {
        "pairs": {
            "total": len(pairs),
            "compared": len(compared),
            "baseline_failed": sum(1 for p in pairs if not p.baseline.ok),
            "candidate_failed": sum(1 for p in pairs if not p.candidate.ok),
        },
        "exact_match": _share(exact, len(compared)),
        "agreement": (matched / longer_total if longer_total else 1.0) if compared else None,
        "agreement_per_pair": summarize(per_pair),
        "length_ratio": cand_total / base_total if base_total else None,
        "tokens": {"unit": tokens.unit, "baseline": base_total, "candidate": cand_total},
        "latency_ms": _latency(pairs),
        "errors": errors,
        "error_rate": {side: _share(sum(errors[side].values()), len(pairs)) for side in ("baseline", "candidate")},
        "examples": examples,
    }


def _errors(answers: Sequence[Answer]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for answer in answers:
        if not answer.ok:
            counts[answer.error or "unknown"] = counts.get(answer.error or "unknown", 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _latency(pairs: Sequence[Pair]) -> dict[str, Any] | None:
    """Latency of each side's successful answers (ms), None when none was timed (data capture)."""
    sides = {side: [a.latency_s for a in (getattr(p, side) for p in pairs) if a.ok and a.latency_s is not None] for side in ("baseline", "candidate")}
    if not any(sides.values()):
        return None
    return {side: summarize(values, 1000) for side, values in sides.items()}
