"""Output token counts, where the response carries one.

Recognized counts: ``usage.completion_tokens`` (OpenAI-compatible servers, vLLM, SGLang, LMI's
chat API), ``usage.output_tokens``, ``details.generated_tokens`` (Hugging Face TGI, LMI) and a
top-level ``generated_tokens``; a list response sums its items. Streaming responses are read as
events: server-sent event lines (``data: {...}``) or one JSON document a ``PayloadPart`` (TGI
over SageMaker); an event split across two parts is put together first and read once. The
last count seen wins. Responses without a count
are measured in chunks and bytes instead, and the report says so, unless ``--tokenizer`` names
a local Hugging Face ``tokenizer.json``: then the response's text (``generated_text``,
``choices[].text``, ``choices[].message.content``; in a stream ``token.text`` or
``choices[].delta.content`` of each event) is counted with it.

The ``tokenizers`` package is an optional extra (``cdk-sagemaker-pools[bench-tokenizer]``); it
is imported only when ``--tokenizer`` is given. No tokenizer is downloaded: give a file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import EXIT_USAGE, OpsError

__all__ = ["count_tokens", "count_stream_tokens", "load_tokenizer", "response_text", "stream_text"]


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


def _payload(line: bytes) -> bytes | None:
    """The JSON document of one event line (``data:`` stripped), or None for anything else."""
    line = line.strip()
    if line.startswith(b"data:"):
        line = line[5:].strip()
    return line if line.startswith((b"{", b"[")) else None


def _complete(document: bytes) -> bool:
    try:
        json.loads(document)
    except ValueError:
        return False
    return True


def stream_events(parts: Iterable[bytes]) -> Iterator[bytes]:
    """The JSON documents of a stream's events, each once, whatever the parts' boundaries.

    A line is an event once its newline has arrived; a part that ends without one ends an event
    only when what it holds since the last newline is a whole JSON document (one document a
    part, as TGI sends them); otherwise the rest of the event is in the next part.
    """
    pending = b""
    for part in parts:
        *lines, pending = (pending + part).split(b"\n")
        for line in lines:
            document = _payload(line)
            if document is not None:
                yield document
        document = _payload(pending)
        if document is not None and _complete(document):
            yield document
            pending = b""
    document = _payload(pending)
    if document is not None:
        yield document


def count_stream_tokens(parts: Iterable[bytes]) -> int | None:
    """The last output token count reported in a stream's events, if any."""
    parts = list(parts)
    if b"tokens" not in b"".join(parts):
        return None
    found = None
    for document in stream_events(parts):
        if b"tokens" not in document:
            continue
        try:
            count = _count(json.loads(document))
        except ValueError:
            continue
        if count is not None:
            found = count
    return found


def load_tokenizer(path: str) -> Any:
    """A ``tokenizers.Tokenizer`` from a local ``tokenizer.json``; :class:`OpsError` (exit 2) when it cannot be."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise OpsError("--tokenizer needs the tokenizers package: pip install 'cdk-sagemaker-pools[bench-tokenizer]'", EXIT_USAGE) from None
    try:
        return Tokenizer.from_file(path)
    except Exception as exc:  # tokenizers raises its own Exception type for missing or bad files
        raise OpsError(f"--tokenizer {path}: not a readable tokenizer.json ({exc})", EXIT_USAGE) from None


def _text_of(document: Any, *, stream: bool) -> str | None:
    if isinstance(document, list):
        texts = [t for t in (_text_of(d, stream=stream) for d in document) if t is not None]
        return "".join(texts) if texts else None
    if not isinstance(document, dict):
        return None
    token = document.get("token")
    if stream and isinstance(token, dict) and isinstance(token.get("text"), str):
        return str(token["text"])
    choices = document.get("choices")
    if isinstance(choices, list):
        texts = []
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            for holder in (choice.get("delta"), choice.get("message"), choice):
                if isinstance(holder, dict) and isinstance(holder.get("content" if holder is not choice else "text"), str):
                    texts.append(holder["content" if holder is not choice else "text"])
                    break
        if texts:
            return "".join(texts)
    if not stream:
        for key in ("generated_text", "text", "output", "completion"):
            if isinstance(document.get(key), str):
                return str(document[key])
    return None


def response_text(body: bytes) -> str:
    """The generated text of a (non-streaming) response; the whole body when none is recognized."""
    try:
        text = _text_of(json.loads(body), stream=False)
    except ValueError:
        text = None
    return text if text is not None else body.decode("utf-8", "replace")


def stream_text(parts: Iterable[bytes]) -> str:
    """The generated text of a stream: each event's token text; the raw payload when none is recognized."""
    parts = list(parts)
    raw = b"".join(parts)
    texts = []
    for document in stream_events(parts):
        try:
            text = _text_of(json.loads(document), stream=True)
        except ValueError:
            continue
        if text is not None:
            texts.append(text)
    return "".join(texts) if texts else raw.decode("utf-8", "replace")
