"""SageMaker's managed AI benchmark job: start it, follow it, stop it, fetch AIPerf's exports.

``CreateAIBenchmarkJob`` runs AIPerf (in AWS, not on this machine) against an endpoint with a
workload configuration and writes the exports under the job's ``S3OutputLocation``. The
guide does not say under which keys, so :func:`fetch_exports` lists the output location and
takes the ``profile_export.jsonl`` / ``profile_export_aiperf.json`` whose key names the job
(else the newest): docs/aws-readings.md.

The wait polls ``DescribeAIBenchmarkJob`` (one progress line per poll, as ``migrate --apply``
waits on DescribeEndpoint). A Ctrl-C sends ``StopAIBenchmarkJob``: the job runs in AWS and
would otherwise go on (and keep loading the endpoint) after the command ended.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from ...aiperf import parse_inline
from ..context import Context
from ..errors import EXIT_USAGE, OpsError
from .aiperf_export import AGGREGATES_FILE, RECORDS_FILE

__all__ = [
    "POLL_INTERVAL_S",
    "JobStopped",
    "job_name",
    "check_endpoint",
    "start_job",
    "wait_for_job",
    "fetch_exports",
    "level_workload",
    "parse_s3_uri",
]

#: Seconds between DescribeAIBenchmarkJob calls (jobs last minutes; the API is throttled per account).
POLL_INTERVAL_S = 15.0
_DONE = frozenset({"Completed", "Failed", "Stopped"})
_MAX_NAME = 63


class JobStopped(OpsError):
    """A Ctrl-C (or SIGTERM) stopped the job: StopAIBenchmarkJob was sent."""


def job_name(base: str, now: dt.datetime, suffix: str = "") -> str:
    """``<base>-<yyyymmddhhmmss>[-suffix]`` cut to SageMaker's 63 characters (alphanumerics and hyphens)."""
    stamp = now.strftime("%Y%m%d%H%M%S")
    tail = f"-{stamp}" + (f"-{suffix}" if suffix else "")
    return base[: _MAX_NAME - len(tail)].rstrip("-") + tail


def parse_s3_uri(uri: str, flag: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` -> (bucket, prefix); :class:`OpsError` (exit 2) otherwise."""
    parsed = urlparse(uri)
    if parsed.scheme != "s3" or not parsed.netloc:
        raise OpsError(f"{flag} {uri!r} is not an s3://bucket/prefix URI", EXIT_USAGE)
    return parsed.netloc, parsed.path.lstrip("/")


def check_endpoint(sm: Any, endpoint: str) -> None:
    """Refuse an endpoint the benchmark cannot run against: it must be InService (the guide's
    prerequisite). That it serves the OpenAI-compatible chat completions API cannot be known
    from its description: a job against any other endpoint fails (its FailureReason is shown)."""
    description = sm.describe_endpoint(EndpointName=endpoint)
    status = description["EndpointStatus"]
    if status != "InService":
        raise OpsError(f"endpoint {endpoint} is {status}: an AI benchmark job needs it InService", EXIT_USAGE)


def start_job(
    sm: Any, *, name: str, endpoint: str, workload: str, role: str, output: str, inference_components: tuple[str, ...] = ()
) -> None:
    """CreateAIBenchmarkJob."""
    target: dict[str, Any] = {"Identifier": endpoint}
    if inference_components:
        target["InferenceComponents"] = [{"Identifier": c} for c in inference_components]
    sm.create_ai_benchmark_job(
        AIBenchmarkJobName=name,
        BenchmarkTarget={"Endpoint": target},
        OutputConfig={"S3OutputLocation": output},
        AIWorkloadConfigIdentifier=workload,
        RoleArn=role,
    )


def wait_for_job(sm: Any, name: str, ctx: Context, *, prefix: str = "") -> Mapping[str, Any]:
    """Poll DescribeAIBenchmarkJob until the job ends; return its description when it Completed.

    Raises :class:`OpsError` with the job's FailureReason when it Failed or was Stopped by someone
    else, and :class:`JobStopped` after sending StopAIBenchmarkJob on KeyboardInterrupt.
    """
    start = ctx.monotonic()
    try:
        while True:
            job = sm.describe_ai_benchmark_job(AIBenchmarkJobName=name)
            status = job["AIBenchmarkJobStatus"]
            minutes, seconds = divmod(int(ctx.monotonic() - start), 60)
            ctx.progress(f"{prefix}[{minutes:02d}:{seconds:02d}] AI benchmark job {name}: {status}")
            if status in _DONE:
                break
            ctx.sleep(POLL_INTERVAL_S)
    except KeyboardInterrupt:
        ctx.end_progress()
        _stop(sm, name, ctx)
        raise JobStopped(f"interrupted: stopped AI benchmark job {name} (StopAIBenchmarkJob); no report", 130) from None
    ctx.end_progress()
    if status == "Completed":
        return job  # type: ignore[no-any-return]
    reason = job.get("FailureReason")
    logs = ", ".join(f"{log.get('LogGroupArn')} {log.get('LogStreamName')}" for log in (job.get("OutputConfig") or {}).get("CloudWatchLogs") or [])
    raise OpsError(
        f"AI benchmark job {name} {status.lower()}" + (f": {reason}" if reason else " (no FailureReason given)") + (f"; logs: {logs}" if logs else "")
    )


def _stop(sm: Any, name: str, ctx: Context) -> None:
    try:
        sm.stop_ai_benchmark_job(AIBenchmarkJobName=name)
        ctx.err.write(f"stopping AI benchmark job {name}\n")
    except Exception as exc:  # noqa: BLE001 - say so, and still end the command as interrupted
        ctx.err.write(f"could not stop AI benchmark job {name}: {exc}; stop it with: aws sagemaker stop-ai-benchmark-job --ai-benchmark-job-name {name}\n")
    ctx.err.flush()


def fetch_exports(s3: Any, output: str, job: str) -> tuple[str, dict[str, Any] | None, list[str]]:
    """AIPerf's exports of ``job`` under ``output``: (records text, aggregates or None, the S3 URIs read)."""
    bucket, prefix = parse_s3_uri(output, "--output")
    found: dict[str, list[Mapping[str, Any]]] = {RECORDS_FILE: [], AGGREGATES_FILE: []}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            leaf = item["Key"].rsplit("/", 1)[-1]
            if leaf in found:
                found[leaf].append(item)
    chosen = {leaf: _pick(items, job) for leaf, items in found.items()}
    records = chosen[RECORDS_FILE]
    if records is None:
        raise OpsError(f"AI benchmark job {job} completed, but s3://{bucket}/{prefix} holds no {RECORDS_FILE} (AIPerf's per-request export)")
    text = s3.get_object(Bucket=bucket, Key=records)["Body"].read().decode()
    read = [f"s3://{bucket}/{records}"]
    aggregates = None
    if chosen[AGGREGATES_FILE] is not None:
        aggregates = json.loads(s3.get_object(Bucket=bucket, Key=chosen[AGGREGATES_FILE])["Body"].read())
        read.append(f"s3://{bucket}/{chosen[AGGREGATES_FILE]}")
    return text, aggregates, read


def _pick(items: list[Mapping[str, Any]], job: str) -> str | None:
    """The key that names the job, else the newest one."""
    if not items:
        return None
    named = [i for i in items if job in i["Key"]]
    return str(max(named or items, key=lambda i: i["LastModified"])["Key"])


def level_workload(sm: Any, base: str, level: int, name: str) -> str:
    """Create workload configuration ``name``: ``base``'s with ``concurrency`` set to ``level``; return ``name``.

    For ``--sweep`` with ``--managed``: one configuration per level, deleted after its job.
    """
    described = sm.describe_ai_workload_config(AIWorkloadConfigName=base)
    inline = ((described.get("AIWorkloadConfigs") or {}).get("WorkloadSpec") or {}).get("Inline")
    if not inline:
        raise OpsError(f"--sweep --managed: workload {base} has no inline spec to set the concurrency of", EXIT_USAGE)
    try:
        document = parse_inline(inline)
    except ValueError as exc:
        raise OpsError(f"--sweep --managed: workload {base}: {exc}", EXIT_USAGE) from None
    parameters = dict(document.get("parameters") or {})
    if parameters.get("request_rate") is not None:
        raise OpsError(f"--sweep runs closed loops: workload {base} sets request_rate {parameters['request_rate']}", EXIT_USAGE)
    parameters["concurrency"] = level
    request: dict[str, Any] = {
        "AIWorkloadConfigName": name,
        "AIWorkloadConfigs": {"WorkloadSpec": {"Inline": json.dumps({**document, "parameters": parameters}, separators=(",", ":"))}},
    }
    if described.get("DatasetConfig"):
        request["DatasetConfig"] = described["DatasetConfig"]
    sm.create_ai_workload_config(**request)
    return name
