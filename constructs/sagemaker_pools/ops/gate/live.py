"""The same requests to both sides, on bench's transport (:class:`~..bench.invoke.Invoker`).

First one unmeasured request to each side (the first body): opening the connection (TLS,
credentials) is not the endpoint's latency. Then one request at a time, baseline and candidate in turn, the side that goes first alternating
from one request to the next, so that neither side is always the one that meets a warm (or a
cold) cache or connection. Latency is timed as bench times it (from the send to the last byte).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from ..bench.invoke import Invoker, Record, make_client
from ..bench.options import BenchOptions, Connection
from ..bench.tokens import response_text
from .compare import Answer, Pair

__all__ = ["Target", "send_pairs"]


@dataclasses.dataclass(frozen=True)
class Target:
    """One side: the endpoint, the variant (``TargetVariant``; None: SageMaker routes) and a runtime URL (None: the command's)."""

    endpoint: str
    variant: str | None = None
    endpoint_url: str | None = None

    @property
    def label(self) -> str:
        """``ENDPOINT`` or ``ENDPOINT/VARIANT``."""
        return self.endpoint if self.variant is None else f"{self.endpoint}/{self.variant}"


def _invoker(target: Target, bodies: tuple[bytes, ...], connection: Connection, options: BenchOptions) -> Invoker:
    side = dataclasses.replace(options, endpoint=target.endpoint, target_variant=target.variant, bodies=bodies)
    side.validate()
    if target.endpoint_url is not None:
        connection = dataclasses.replace(connection, endpoint_url=target.endpoint_url)
    return Invoker(make_client(connection, side, 1), side, keep_responses=True)


def _answer(record: Record) -> Answer:
    if not record.ok:
        return Answer(ok=False, error=record.error, latency_s=record.latency)
    return Answer(ok=True, text=response_text(record.response or b""), latency_s=record.latency)


def send_pairs(
    bodies: Sequence[bytes],
    *,
    baseline: Target,
    candidate: Target,
    connection: Connection,
    options: BenchOptions,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[Pair]:
    """Send each body to both sides; one :class:`Pair` per body (keyed ``request N``, the N-th body of the input).

    ``options`` carries the request settings bench has (content type, accept, timeout, retries,
    HTTP client); its endpoint, variant and bodies are replaced per side.
    """
    sent = tuple(bodies)
    sides = (_invoker(baseline, sent, connection, options), _invoker(candidate, sent, connection, options))
    for invoker in sides:
        invoker.call(0)  # warm-up: connection set-up is not the endpoint's latency
    pairs = []
    for index in range(len(sent)):
        order = (0, 1) if index % 2 == 0 else (1, 0)
        records: dict[int, Record] = {}
        for side in order:
            records[side] = sides[side].call(index)
        pairs.append(Pair(key=f"request {index + 1}", baseline=_answer(records[0]), candidate=_answer(records[1])))
        if on_progress is not None:
            on_progress(index + 1, len(sent))
    return pairs
