"""``sagemaker-pools bench`` against the seed article's quick thread-pool loop, side by side.

One run of this script starts the local SageMaker-runtime-compatible server (its own process,
50 ms injected latency) and measures it, in alternating rounds, with

* **loop**: the seed article's quick method (``benchmark_endpoint.py`` in ``000_*.txt``): one
  boto3 client with its default configuration, a ``ThreadPoolExecutor`` of 32 threads, a fixed
  number of ``invoke_endpoint`` calls, latency = wall time of each call, its percentile
  method ``sorted[round((n - 1) * p)]``. It gets a discarded warm-up pass first, so that it
  is not charged for opening connections.
* **tool**: ``sagemaker-pools bench --concurrency 32`` (worker processes, a connection pool
  sized to each worker's threads, the clock started at ``before-send``).

The truth is the injected 50 ms (the server also reports what it actually waited). Per round it
records requests/s and p50/p99 and how far each method's p99 overstates the truth; the summary
takes the median over rounds. Not part of the test suite: ``python benchmarks/bench_ops.py``.
Results go to ``benchmarks/results/ops-<UTC timestamp>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "constructs"))

import boto3  # noqa: E402

from sagemaker_pools.ops.aws import AwsOptions, Clients  # noqa: E402
from sagemaker_pools.ops.bench.stats import percentile  # noqa: E402
from sagemaker_pools.ops.cli import main  # noqa: E402
from sagemaker_pools.ops.context import Context  # noqa: E402

INJECTED_MS = 50.0
CONCURRENCY = 32
PAYLOAD = b'{"inputs":"Explain SageMaker inference in one sentence."}'


def start_server() -> tuple[subprocess.Popen[str], str]:
    """The local server in its own process (so it shares no interpreter with either client)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "constructs"))
    process = subprocess.Popen(
        [sys.executable, "-m", "sagemaker_pools.ops.bench.localserver", "--port", "0", "--latency-ms", str(INJECTED_MS)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("listening on "):
        raise SystemExit(f"server did not start: {line!r}")
    return process, line.removeprefix("listening on ")


def server_stats(url: str, reset: bool = False) -> dict[str, Any]:
    """The server's own view: requests served and how long it really held each one."""
    if reset:
        urllib.request.urlopen(urllib.request.Request(url + "/_reset", data=b"", method="POST")).read()
        return {}
    return json.loads(urllib.request.urlopen(url + "/_stats").read())  # type: ignore[no-any-return]


# -- the seed article's quick method, as published (only the client's endpoint_url added) -------


def seed_loop(url: str, request_count: int) -> dict[str, Any]:
    client = boto3.client("sagemaker-runtime", region_name="us-east-1", endpoint_url=url)

    def invoke_once() -> float:
        started = time.perf_counter()
        response = client.invoke_endpoint(
            EndpointName="llm", ContentType="application/json", Accept="application/json", Body=PAYLOAD
        )
        response["Body"].read()
        return time.perf_counter() - started

    def seed_percentile(values: list[float], p: float) -> float:
        ordered = sorted(values)
        index = round((len(ordered) - 1) * p)
        return ordered[index]

    def one_pass(count: int) -> tuple[list[float], list[str], float]:
        latencies: list[float] = []
        errors: list[str] = []
        wall_started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            futures = [pool.submit(invoke_once) for _ in range(count)]
            for future in as_completed(futures):
                try:
                    latencies.append(future.result())
                except Exception as exc:
                    errors.append(str(exc))
        return latencies, errors, time.perf_counter() - wall_started

    one_pass(CONCURRENCY * 8)  # warm-up, discarded
    latencies, errors, wall = one_pass(request_count)
    ordered = sorted(latencies)
    return {
        "requests": request_count,
        "ok": len(latencies),
        "failed": len(errors),
        "requests_per_s": len(latencies) / wall,
        "p50_ms": seed_percentile(latencies, 0.50) * 1000,
        "p99_ms": seed_percentile(latencies, 0.99) * 1000,
        "nearest_rank_p50_ms": percentile(ordered, 50) * 1000,
        "nearest_rank_p99_ms": percentile(ordered, 99) * 1000,
        "max_ms": ordered[-1] * 1000,
    }


# -- the tool ---------------------------------------------------------------------------------


def tool(url: str, duration: float, warmup: float) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    ctx = Context(clients=Clients(AwsOptions(region="us-east-1", endpoint_url=url)), out=out, err=err)
    code = main(
        ["bench", "llm", "--concurrency", str(CONCURRENCY), "--duration", str(duration), "--warmup", str(warmup), "--body", PAYLOAD.decode(), "--json"],
        context=ctx,
    )
    if code != 0:
        raise SystemExit(err.getvalue())
    report = json.loads(out.getvalue())
    return {
        "requests": report["requests"]["total"],
        "ok": report["requests"]["ok"],
        "failed": report["requests"]["failed"],
        "requests_per_s": report["requests_per_s"],
        "p50_ms": report["latency_ms"]["p50"],
        "p99_ms": report["latency_ms"]["p99"],
        "max_ms": report["latency_ms"]["max"],
        "processes": report["run"]["processes"],
    }


def run(rounds: int, duration: float, warmup: float) -> dict[str, Any]:
    server, url = start_server()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "AKIDBENCHBENCHBENCH0")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    loop_requests = int(CONCURRENCY / (INJECTED_MS / 1000) * duration)  # about `duration` seconds at the ideal rate
    results: list[dict[str, Any]] = []
    try:
        for index in range(rounds):
            for name in ("loop", "tool") if index % 2 == 0 else ("tool", "loop"):
                server_stats(url, reset=True)
                started = time.time()
                figures = seed_loop(url, loop_requests) if name == "loop" else tool(url, duration, warmup)
                truth = server_stats(url)
                figures.update(
                    method=name,
                    round=index + 1,
                    seconds=time.time() - started,
                    server_p50_ms=truth["p50_ms"],
                    server_p99_ms=truth["p99_ms"],
                    p99_over_injected_ms=figures["p99_ms"] - INJECTED_MS,
                    p99_over_server_ms=figures["p99_ms"] - truth["p99_ms"],
                )
                results.append(figures)
                print(
                    f"round {index + 1} {name}: {figures['requests_per_s']:.1f} req/s, p50 {figures['p50_ms']:.1f} ms, "
                    f"p99 {figures['p99_ms']:.1f} ms (server p99 {truth['p99_ms']:.1f} ms), {figures['failed']} failed",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait(timeout=10)

    def median(method: str, key: str) -> float:
        return float(statistics.median(r[key] for r in results if r["method"] == method))

    summary: dict[str, Any] = {}
    for method in ("loop", "tool"):
        summary[method] = {
            key: median(method, key)
            for key in ("requests_per_s", "p50_ms", "p99_ms", "max_ms", "p99_over_injected_ms", "p99_over_server_ms", "server_p99_ms")
        }
    summary["rate_ratio_tool_over_loop"] = summary["tool"]["requests_per_s"] / summary["loop"]["requests_per_s"]
    summary["overstatement_ratio_tool_over_loop"] = summary["tool"]["p99_over_injected_ms"] / summary["loop"]["p99_over_injected_ms"]
    summary["ideal_requests_per_s"] = CONCURRENCY / (INJECTED_MS / 1000)
    summary["pass_rate"] = summary["rate_ratio_tool_over_loop"] >= 1.0
    summary["pass_overstatement"] = summary["overstatement_ratio_tool_over_loop"] <= 0.5
    with open("/proc/loadavg") if Path("/proc/loadavg").exists() else io.StringIO("n/a") as handle:
        load = handle.read().split()[:3]
    return {
        "benchmark": "sagemaker-pools bench vs the seed article's thread-pool loop",
        "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(), "loadavg_after": load},
        "settings": {"injected_ms": INJECTED_MS, "concurrency": CONCURRENCY, "rounds": rounds, "tool_duration_s": duration, "tool_warmup_s": warmup, "loop_requests": loop_requests},
        "rounds": results,
        "summary": summary,
    }


def markdown(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = [
        f"# sagemaker-pools bench vs the seed's thread-pool loop ({result['when']})",
        "",
        f"Local server, {result['settings']['injected_ms']:g} ms injected, concurrency {result['settings']['concurrency']}, "
        f"{result['settings']['rounds']} alternating rounds; {result['machine']['cpus']} CPUs, Python {result['machine']['python']}, "
        f"load average after the run {' '.join(result['machine']['loadavg_after'])}. Medians over rounds.",
        "",
        "| method | requests/s | p50 ms | p99 ms | p99 over the injected 50 ms | server-side p99 ms |",
        "|---|---|---|---|---|---|",
    ]
    for method in ("loop", "tool"):
        m = s[method]
        lines.append(
            f"| {method} | {m['requests_per_s']:.1f} | {m['p50_ms']:.1f} | {m['p99_ms']:.1f} | {m['p99_over_injected_ms']:+.1f} | {m['server_p99_ms']:.1f} |"
        )
    lines += [
        "",
        f"- ideal rate: {s['ideal_requests_per_s']:.0f} requests/s; tool / loop rate: {s['rate_ratio_tool_over_loop']:.3f} "
        f"({'meets' if s['pass_rate'] else 'misses'} \"at least the loop's rate\")",
        f"- tool / loop p99 overstatement: {s['overstatement_ratio_tool_over_loop']:.3f} "
        f"({'meets' if s['pass_overstatement'] else 'misses'} \"at most half\")",
        "",
        "| round | method | requests/s | p50 ms | p99 ms | server p99 ms | failed | tool/loop rate | tool/loop p99 overstatement |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    by_round: dict[int, dict[str, Any]] = {}
    for r in result["rounds"]:
        by_round.setdefault(r["round"], {})[r["method"]] = r
    for number, pair in sorted(by_round.items()):
        tool_, loop_ = pair["tool"], pair["loop"]
        rate = tool_["requests_per_s"] / loop_["requests_per_s"]
        over = tool_["p99_over_injected_ms"] / loop_["p99_over_injected_ms"]
        for r in (pair[m] for m in ("loop", "tool") if m in pair):
            ratios = f"{rate:.2f} | {over:.2f}" if r is tool_ else " | "
            lines.append(
                f"| {number} | {r['method']} | {r['requests_per_s']:.1f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
                f"{r['server_p99_ms']:.1f} | {r['failed']} | {ratios} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per round (both methods)")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--render", metavar="RESULT.json", help="only rewrite the .md of an earlier result")
    args = parser.parse_args()
    if args.render:
        source = Path(args.render)
        source.with_suffix(".md").write_text(markdown(json.loads(source.read_text())))
        raise SystemExit(0)
    result = run(args.rounds, args.duration, args.warmup)
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    (out / f"ops-{stamp}.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / f"ops-{stamp}.md").write_text(markdown(result))
    print(markdown(result))
