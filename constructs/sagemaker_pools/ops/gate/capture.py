"""Data capture files, read (for ``gate --from-capture`` and ``bench --replay``), and two variants' paired request by request.

An endpoint with ``DataCaptureConfig`` writes JSON Lines under
``DESTINATION/ENDPOINT/VARIANT/yyyy/mm/dd/hh/*.jsonl``, one object per captured request::

    {"captureData": {"endpointInput": {"observedContentType": "application/json", "mode": "INPUT",
                                       "data": "...", "encoding": "JSON"},
                     "endpointOutput": {"observedContentType": "application/json", "mode": "OUTPUT",
                                        "data": "...", "encoding": "BASE64"}},
     "eventMetadata": {"eventId": "...", "inferenceId": "...", "inferenceTime": "2026-12-02T10:00:00Z"},
     "eventVersion": "0"}

``encoding`` is ``JSON`` or ``CSV`` (``data`` is the text) or ``BASE64`` (any other content type).
``inferenceId`` is there only when the caller passed ``InferenceId`` to InvokeEndpoint.

Pairing (docs/ops.md, "gate --from-capture", quotes the sources): a baseline record and a
candidate record are the same request when both carry the same ``inferenceId``, else when they
carry the same ``eventId``. A pair whose captured inputs differ is not compared (counted as an
input mismatch): the ids matched, the requests did not. Records without a partner (a shadow
variant samples a share of the traffic) are counted, not compared.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..bench.tokens import response_text
from ..errors import EXIT_USAGE, OpsError
from .compare import Answer, Pair

__all__ = ["Captured", "read_capture", "read_capture_files", "pair_captures", "capture_location"]


@dataclasses.dataclass(frozen=True)
class Captured:
    """One captured request: its ids, input and output bytes (None when not captured), and where it was read.

    ``inference_time`` is ``eventMetadata.inferenceTime`` as written (ISO 8601 UTC), and
    ``content_type`` the input's ``observedContentType`` (each None when absent).
    """

    inference_id: str | None
    event_id: str | None
    input: bytes | None
    output: bytes | None
    where: str
    inference_time: str | None = None
    content_type: str | None = None


def capture_location(source: str, endpoint: str, variant: str) -> str:
    """Where ``endpoint``/``variant``'s capture files are under ``source`` (an ``s3://`` URI or a folder)."""
    return f"{source.rstrip('/')}/{endpoint}/{variant}/"


def _data(capture: Any, where: str) -> bytes | None:
    if not isinstance(capture, dict) or "data" not in capture:
        return None
    data = capture["data"]
    if not isinstance(data, str):  # not what SageMaker writes, but a JSON value is unambiguous
        return json.dumps(data).encode()
    if str(capture.get("encoding", "")).upper() == "BASE64":
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise OpsError(f"{where}: captured data is not valid BASE64") from None
    return data.encode()


def _records(text: str, where: str) -> Iterator[Captured]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        here = f"{where} line {number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise OpsError(f"{here} is not JSON ({exc}): not a SageMaker data capture file") from None
        if not isinstance(record, dict) or not isinstance(record.get("captureData"), dict):
            raise OpsError(f"{here} has no captureData object: not a SageMaker data capture record")
        metadata = record.get("eventMetadata")
        if not isinstance(metadata, dict):
            metadata = {}
        data = record["captureData"]
        endpoint_input = data.get("endpointInput")
        content_type = endpoint_input.get("observedContentType") if isinstance(endpoint_input, dict) else None
        yield Captured(
            inference_id=metadata.get("inferenceId") or None,
            event_id=metadata.get("eventId") or None,
            input=_data(endpoint_input, here),
            output=_data(data.get("endpointOutput"), here),
            where=here,
            inference_time=metadata.get("inferenceTime") if isinstance(metadata.get("inferenceTime"), str) else None,
            content_type=content_type if isinstance(content_type, str) else None,
        )


def _local_files(location: str, flag: str, expected: str) -> Iterator[tuple[str, str]]:
    folder = Path(location)
    if folder.is_file():
        paths = [folder]
    elif folder.is_dir():
        paths = sorted(folder.rglob("*.jsonl"))
    else:
        raise OpsError(f"{flag}: no folder or file {location} (expected {expected})", EXIT_USAGE)
    for path in paths:
        try:
            yield str(path), path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise OpsError(f"cannot read {path}: {exc}") from None


def _s3_files(location: str, s3: Any) -> Iterator[tuple[str, str]]:
    bucket, _, prefix = location.removeprefix("s3://").partition("/")
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys += [o["Key"] for o in page.get("Contents", []) if o["Key"].endswith(".jsonl")]
    for key in sorted(keys):
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        try:
            yield f"s3://{bucket}/{key}", body.decode()
        except UnicodeDecodeError:
            raise OpsError(f"s3://{bucket}/{key} is not UTF-8 text: not a SageMaker data capture file") from None


def read_capture_files(location: str, *, s3: Callable[[], Any], flag: str, expected: str = "*.jsonl capture files") -> list[Captured]:
    """Every record of the capture files at ``location``: an ``s3://bucket/prefix``, a folder
    (its ``*.jsonl`` at any depth, in name order) or one file; ``flag`` names the option in errors.

    ``s3`` makes the S3 client (only called for an ``s3://`` location).
    """
    files = _s3_files(location, s3()) if location.startswith("s3://") else _local_files(location, flag, expected)
    return [record for where, text in files for record in _records(text, where)]


def read_capture(source: str, endpoint: str, variant: str, *, s3: Callable[[], Any]) -> list[Captured]:
    """Every record captured for ``endpoint``/``variant`` under ``source`` (``s3://bucket/prefix`` or a folder).

    ``s3`` makes the S3 client (only called for an ``s3://`` source).
    """
    location = capture_location(source, endpoint, variant)
    if not source.startswith("s3://") and not Path(location).is_dir():
        raise OpsError(f"--from-capture: no folder {location} (expected SOURCE/ENDPOINT/VARIANT/yyyy/mm/dd/hh/*.jsonl)", EXIT_USAGE)
    records = read_capture_files(location, s3=s3, flag="--from-capture")
    if not records:
        raise OpsError(f"--from-capture: no captured records under {location} (is data capture on for {endpoint}/{variant}?)")
    return records


def _answer(record: Captured) -> Answer:
    if record.output is None:
        return Answer(ok=False, error="not-captured")
    return Answer(ok=True, text=response_text(record.output))


def pair_captures(baseline: Sequence[Captured], candidate: Sequence[Captured]) -> tuple[list[Pair], dict[str, Any]]:
    """The pairs (same ``inferenceId``, else same ``eventId``) and how the records were paired."""
    by_inference = {r.inference_id: r for r in candidate if r.inference_id}
    by_event = {r.event_id: r for r in candidate if r.event_id}
    used: set[int] = set()
    pairs: list[Pair] = []
    paired_by = {"inferenceId": 0, "eventId": 0}
    mismatches = 0
    for record in baseline:
        partner, key = None, ""
        if record.inference_id and record.inference_id in by_inference:
            partner, key = by_inference[record.inference_id], "inferenceId"
        elif record.event_id and record.event_id in by_event:
            partner, key = by_event[record.event_id], "eventId"
        if partner is None or id(partner) in used:
            continue
        used.add(id(partner))
        if record.input is not None and partner.input is not None and record.input != partner.input:
            mismatches += 1
            continue
        paired_by[key] += 1
        name = record.inference_id if key == "inferenceId" else record.event_id
        pairs.append(Pair(key=f"{key} {name}", baseline=_answer(record), candidate=_answer(partner)))
    stats = {
        "baseline_records": len(baseline),
        "candidate_records": len(candidate),
        "paired_by": paired_by,
        "input_mismatches": mismatches,
        "unpaired": {"baseline": len(baseline) - len(pairs) - mismatches, "candidate": len(candidate) - len(pairs) - mismatches},
    }
    return pairs, stats
