"""Encode AWS event-stream messages (``application/vnd.amazon.eventstream``).

The binary framing InvokeEndpointWithResponseStream answers with, as botocore decodes it
(``botocore.eventstream``): a 12-byte prelude (total length, headers length, prelude CRC32),
the headers, the payload, and a CRC32 of everything before it. Only string headers are needed.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping

__all__ = ["encode_message", "payload_part", "exception_event"]

_STRING_HEADER = 7


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!BH", _STRING_HEADER, len(raw_value)) + raw_value


def encode_message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message with string ``headers`` and ``payload``."""
    raw_headers = b"".join(_header(k, v) for k, v in headers.items())
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack("!II", total, len(raw_headers))
    prelude += struct.pack("!I", zlib.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + raw_headers + payload
    return message + struct.pack("!I", zlib.crc32(message) & 0xFFFFFFFF)


def payload_part(data: bytes) -> bytes:
    """A ``PayloadPart`` event carrying ``data`` (its ``Bytes`` member is the event payload)."""
    return encode_message(
        {":event-type": "PayloadPart", ":message-type": "event", ":content-type": "application/octet-stream"}, data
    )


def exception_event(exception_type: str, message: str, error_code: str | None = None) -> bytes:
    """An in-stream error, e.g. ``ModelStreamError`` (botocore raises it as ``EventStreamError``)."""
    body: dict[str, str] = {"Message": message}
    if error_code:
        body["ErrorCode"] = error_code
    return encode_message(
        {":exception-type": exception_type, ":message-type": "exception", ":content-type": "application/json"},
        json.dumps(body).encode(),
    )
