"""``--replay SOURCE``: the requests an endpoint's data capture recorded, sent again at their recorded pace.

The capture files are read by ``gate``'s reader (:func:`~..gate.capture.read_capture_files`):
SageMaker's data-capture JSON Lines, from an ``s3://`` prefix, a folder or one file. Each record
with a captured input becomes a request body; its ``eventMetadata.inferenceTime`` places it on
the schedule, measured from the first record's time.

Timestamps: AWS's examples of captured records carry whole seconds (``"2022-02-14T17:25:49Z"``),
so the order within a second is known (the files' order) but not the pace. When no timestamp of
the capture has a fraction of a second, the records of one second are spread evenly over it (n
records at ``s``, ``s + 1/n``, ...): the second's rate is kept and no burst is invented. When
timestamps carry fractions, they are used as written.

Records without a captured input (a capture of outputs only) or without a time are skipped and
counted. A capture with sampling below 100 % holds that share of the traffic, and replays it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..errors import EXIT_USAGE, OpsError
from ..gate.capture import read_capture_files

__all__ = ["Replay", "load_replay"]


@dataclasses.dataclass(frozen=True)
class Replay:
    """A capture as a schedule: body ``i`` is sent ``offsets[i]`` seconds after the first (ascending).

    ``content_type``: the captured inputs' one ``observedContentType`` (None when not captured);
    ``skipped``: records left out (no input, or no time).
    """

    source: str
    bodies: tuple[bytes, ...]
    offsets: tuple[float, ...]
    content_type: str | None
    skipped: int

    @property
    def span_s(self) -> float:
        """From the first request to the last, seconds."""
        return self.offsets[-1] if self.offsets else 0.0


def _time(text: str, where: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise OpsError(f"--replay: {where}: inferenceTime {text!r} is not an ISO 8601 time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def load_replay(source: str, *, s3: Callable[[], Any]) -> Replay:
    """The schedule of the capture at ``source``; :class:`OpsError` when nothing in it can be replayed."""
    records = read_capture_files(source, s3=s3, flag="--replay", expected="SageMaker data capture *.jsonl files")
    usable = [(r, _time(r.inference_time, r.where)) for r in records if r.input is not None and r.inference_time]
    if not usable:
        raise OpsError(f"--replay {source}: no captured request with an input and an inferenceTime ({len(records)} records read)", EXIT_USAGE)
    usable.sort(key=lambda pair: pair[1])  # stable: the files' order within one time
    types = {r.content_type for r, _ in usable if r.content_type}
    if len(types) > 1:
        raise OpsError(f"--replay {source}: the captured inputs have several content types ({', '.join(sorted(types))}); replay one at a time", EXIT_USAGE)
    first = usable[0][1]
    offsets = [(moment - first).total_seconds() for _, moment in usable]
    if all(moment.microsecond == 0 for _, moment in usable):
        offsets = _spread_within_seconds(offsets)
    return Replay(
        source=source,
        bodies=tuple(r.input for r, _ in usable if r.input is not None),
        offsets=tuple(offsets),
        content_type=next(iter(types)) if types else None,
        skipped=len(records) - len(usable),
    )


def _spread_within_seconds(offsets: list[float]) -> list[float]:
    """Whole-second offsets, the records of each second spread evenly over it (in their order)."""
    per_second = Counter(offsets)
    seen: Counter[float] = Counter()
    spread = []
    for offset in offsets:
        spread.append(offset + seen[offset] / per_second[offset])
        seen[offset] += 1
    return spread
