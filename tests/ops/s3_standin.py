"""A local S3 stand-in on 127.0.0.1: ListObjectsV2 and GetObject over a dict of objects, nothing more.

Enough for ``bench --managed`` to find and read a benchmark job's exports with a real boto3 S3
client (path-style addressing); every request is recorded. No signature is checked.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse
from xml.sax.saxutils import escape

import boto3
from botocore.config import Config

__all__ = ["S3StandIn"]


class S3StandIn:
    """``with S3StandIn({"bucket": {"key": b"..."}}) as s3:`` -> ``s3.client()``, ``s3.requests``."""

    def __init__(self, buckets: Mapping[str, Mapping[str, bytes]]) -> None:
        self.buckets = {name: dict(objects) for name, objects in buckets.items()}
        self.requests: list[str] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                url = urlparse(self.path)
                bucket, _, key = url.path.lstrip("/").partition("/")
                query = parse_qs(url.query)
                stand_in.requests.append(f"GET {url.path}" + (f"?prefix={query.get('prefix', [''])[0]}" if not key else ""))
                objects = stand_in.buckets.get(bucket)
                if objects is None:
                    return self._send(404, _error("NoSuchBucket", bucket))
                if not key:
                    return self._send(200, _listing(bucket, query.get("prefix", [""])[0], objects))
                body = objects.get(unquote(key))
                if body is None:
                    return self._send(404, _error("NoSuchKey", key))
                self._send(200, body, "application/octet-stream")

            def _send(self, status: int, body: bytes, content_type: str = "application/xml") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> S3StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def client(self) -> Any:
        """A real boto3 S3 client that talks to this stand-in."""
        return boto3.client("s3", region_name="us-east-1", endpoint_url=self.url, config=Config(s3={"addressing_style": "path"}))


def _listing(bucket: str, prefix: str, objects: Mapping[str, bytes]) -> bytes:
    keys = sorted(k for k in objects if k.startswith(prefix))
    contents = "".join(
        f"<Contents><Key>{escape(k)}</Key><LastModified>2026-11-29T10:{20 + i:02d}:00.000Z</LastModified>"
        f'<ETag>"{i}"</ETag><Size>{len(objects[k])}</Size><StorageClass>STANDARD</StorageClass></Contents>'
        for i, k in enumerate(keys)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<Name>{escape(bucket)}</Name><Prefix>{escape(prefix)}</Prefix><KeyCount>{len(keys)}</KeyCount>"
        f"<MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>{contents}</ListBucketResult>"
    ).encode()


def _error(code: str, resource: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>{escape(resource)}</Message></Error>'.encode()
