"""Multi-turn conversations (``--turns``): each turn's body carries the conversation so far.

A conversation starts with one of the run's bodies. Each further turn takes the next body (its
new user prompt and its parameters) and puts the history in front of it: for a chat body
(``messages``) the earlier messages and the assistant's answer as a message of its own; for a
prompt body (``inputs``, ``prompt``, ``text`` or ``input`` as a string) the earlier prompt, the
answer and a blank line before the new prompt, as a text-completion model continues a
transcript. So every turn re-sends the whole history, as a chat client does, and the prompt grows
turn by turn: the load a prefix cache (``Routing.prefix_aware``) serves well. The answer is the
generated text of the response (:func:`~.tokens.response_text`, :func:`~.tokens.stream_text`).

The number of turns of a conversation is drawn as AIPerf draws ``--conversation-turn-mean`` /
``--conversation-turn-stddev``: a normal truncated at 0, rounded up, at least 1
(:func:`~.bodies.normal_tokens`).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import EXIT_USAGE, OpsError
from .bodies import PROMPT_KEYS

__all__ = ["follow_up", "check_conversable"]


def _history_key(document: Any) -> str | None:
    """Where a body's conversation lives: ``messages``, a prompt key, or None (it cannot carry one)."""
    if not isinstance(document, dict):
        return None
    if isinstance(document.get("messages"), list):
        return "messages"
    for key in PROMPT_KEYS:
        if isinstance(document.get(key), str):
            return key
    return None


def check_conversable(bodies: tuple[bytes, ...]) -> None:
    """Raise :class:`OpsError` (exit 2) unless every body can carry a history (checked before the run)."""
    for index, body in enumerate(bodies):
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        if _history_key(document) is None:
            raise OpsError(
                f"--turns: request body {index + 1} is not a JSON object with messages or a string inputs/prompt/text/input: "
                "a conversation's history cannot be carried in it",
                EXIT_USAGE,
            )


def follow_up(previous: bytes, answer: str, body: bytes) -> bytes:
    """The next turn: ``body`` with the history of ``previous`` (the last turn sent) and its ``answer`` in front."""
    before, after = json.loads(previous), json.loads(body)
    key = _history_key(after)
    if key is None or _history_key(before) != key:
        raise OpsError("--turns: the bodies of one conversation must all hold messages, or all the same prompt key", EXIT_USAGE)
    if key == "messages":
        after["messages"] = [*before["messages"], {"role": "assistant", "content": answer}, *after["messages"]]
    else:
        after[key] = f"{before[key]}{answer}\n\n{after[key]}"
    return json.dumps(after).encode()
