"""``sagemaker-pools bench`` against the seed article's quick thread-pool loop, side by side.

One run of this script starts the local SageMaker-runtime-compatible server (its own process,
50 ms injected latency) and measures it, in alternating rounds, with

* **loop**: the seed article's quick method (``benchmark_endpoint.py`` in ``000_*.txt``): one
  boto3 client with its default configuration, a ``ThreadPoolExecutor`` of N threads, a fixed
  number of ``invoke_endpoint`` calls, latency = wall time of each call, its percentile
  method ``sorted[round((n - 1) * p)]``. It gets a discarded warm-up pass first, so that it
  is not charged for opening connections.
* **tool**: ``sagemaker-pools bench --concurrency N`` (worker processes; InvokeEndpoint on the
  lean path: requests signed by botocore ahead of time, sent on keep-alive connections).
* **tool-boto3**: the same with ``--http boto3`` (a whole boto3 call per request, the clock
  started at ``before-send``): what the lean path changes, in the same run.

at each concurrency N of ``--concurrency`` (default 32, 64, 128). The truth is the injected 50 ms
and what the server says it held each request (its own p99). Per round it records requests/s,
p50/p99, how far each method's p99 lies above the truth, and the concurrency the tool achieved;
the summary gives the median and the range (min-max) over rounds. The targets, checked at
concurrency 64: the tool's rate at least 95 % of the ideal N / 50 ms, and its p99 at most 10 ms
above the server's own p99. Not part of the test suite: ``python benchmarks/bench_ops.py``
(``nice`` it on a shared machine). Results go to ``benchmarks/results/ops-<UTC timestamp>.json``
and ``.md``.

The machine: other sessions' jobs share the 2 CPUs, and under the kernel's autogroup scheduling
their ``nice 19`` does not make them yield to this script (each session's group gets an equal
share). A thread of this script sleeps 5 ms over and over during every round and records how
late it wakes (``stall_p99_ms``, ``stall_max_ms``): a stall of the machine delays the server's
timers and the clients alike. ``--realtime`` runs the script, the server and every client in
the round-robin real-time class at the lowest priority (``SCHED_RR`` 1; needs root or
CAP_SYS_NICE), which takes the other sessions' load out of the figures; the result says which
class it ran in.

``--workload "ARGS"`` measures with ``bench``'s workload options on (e.g. ``"--shape 64:16@0.7
--shape 256:32@0.3 --input-tokens-stddev 8 --prefix-tokens 32 --prefix-count 4"``): the tool
gets ARGS (and a fixed seed) instead of ``--body``, and the loop sends the same bodies, built by
``bench``'s own option parsing, in turn, so both sides carry the same requests.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import itertools
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import threading
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
LEVELS = (32, 64, 128)
TARGET_LEVEL = 64
TARGET_RATE_SHARE = 0.95
TARGET_P99_OVER_TRUTH_MS = 10.0
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


WORKLOAD_SEED = "1"


def workload_bodies(workload: list[str]) -> tuple[bytes, ...]:
    """The bodies ``bench`` builds for ``workload`` (its options, parsed by ``bench``'s own parser)."""
    if not workload:
        return (PAYLOAD,)
    from sagemaker_pools.ops.bench_cmd import add_parser, options_from_args

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(), [])
    return options_from_args(parser.parse_args(["bench", "llm", *workload, "--seed", WORKLOAD_SEED])).bodies


def seed_loop(url: str, request_count: int, concurrency: int, bodies: tuple[bytes, ...] = (PAYLOAD,)) -> dict[str, Any]:
    client = boto3.client("sagemaker-runtime", region_name="us-east-1", endpoint_url=url)
    turn = itertools.count()

    def invoke_once() -> float:
        body = bodies[next(turn) % len(bodies)]  # itertools.count is atomic under the GIL
        started = time.perf_counter()
        response = client.invoke_endpoint(
            EndpointName="llm", ContentType="application/json", Accept="application/json", Body=body
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
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            futures = [pool.submit(invoke_once) for _ in range(count)]
            for future in as_completed(futures):
                try:
                    latencies.append(future.result())
                except Exception as exc:
                    errors.append(str(exc))
        return latencies, errors, time.perf_counter() - wall_started

    one_pass(concurrency * 8)  # warm-up, discarded
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


def tool(url: str, duration: float, warmup: float, concurrency: int, http: str = "lean", workload: list[str] | None = None) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    ctx = Context(clients=Clients(AwsOptions(region="us-east-1", endpoint_url=url)), out=out, err=err)
    load = [*workload, "--seed", WORKLOAD_SEED] if workload else ["--body", PAYLOAD.decode()]
    code = main(
        ["bench", "llm", "--concurrency", str(concurrency), "--duration", str(duration), "--warmup", str(warmup), *load, "--json",
         "--http", http],
        context=ctx,
    )  # fmt: skip
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
        "concurrency_achieved": report["run"]["concurrency_achieved"]["mean"],
        "http": report["run"]["http"],
    }


class StallProbe:
    """How late a thread of this process wakes from 5 ms sleeps (the machine's stalls), per round."""

    SLEEP_S = 0.005

    def __init__(self) -> None:
        self._late: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            time.sleep(self.SLEEP_S)
            self._late.append(time.perf_counter() - started - self.SLEEP_S)

    def __enter__(self) -> StallProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict[str, float]:
        ordered = sorted(self._late) or [0.0]
        return {"stall_p99_ms": percentile(ordered, 99) * 1000, "stall_max_ms": ordered[-1] * 1000}


def scheduling() -> str:
    """This process's scheduling class (and its session group's nice value, where the kernel has autogroups)."""
    policy = os.sched_getscheduler(0)
    name = {os.SCHED_OTHER: "SCHED_OTHER", os.SCHED_RR: "SCHED_RR", os.SCHED_FIFO: "SCHED_FIFO"}.get(policy, str(policy))
    if policy in (os.SCHED_RR, os.SCHED_FIFO):
        name += f" priority {os.sched_getparam(0).sched_priority}"
    else:
        name += f", nice {os.nice(0)}"
    autogroup = Path("/proc/self/autogroup")
    if autogroup.exists():
        name += f", autogroup nice {autogroup.read_text().split()[-1]}"
    return name


METHODS = ("loop", "tool", "tool-boto3")


def measure(name: str, url: str, duration: float, warmup: float, concurrency: int, workload: list[str] | None = None) -> dict[str, Any]:
    """One method at one concurrency (the loop gets about ``duration`` seconds' worth of requests at the ideal rate)."""
    if name == "loop":
        return seed_loop(url, int(concurrency / (INJECTED_MS / 1000) * duration), concurrency, workload_bodies(workload or []))
    return tool(url, duration, warmup, concurrency, "boto3" if name == "tool-boto3" else "lean", workload)


def run(
    rounds: int, duration: float, warmup: float, levels: tuple[int, ...], methods: tuple[str, ...] = METHODS, workload: list[str] | None = None
) -> dict[str, Any]:
    server, url = start_server()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "AKIDBENCHBENCHBENCH0")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    results: list[dict[str, Any]] = []
    load_before = _loadavg()
    try:
        for index in range(rounds):
            for concurrency in levels:
                order = methods if index % 2 == 0 else tuple(reversed(methods))
                for name in order:
                    server_stats(url, reset=True)
                    started = time.time()
                    with StallProbe() as probe:
                        figures = measure(name, url, duration, warmup, concurrency, workload)
                    truth = server_stats(url)
                    figures.update(
                        method=name,
                        concurrency=concurrency,
                        round=index + 1,
                        seconds=time.time() - started,
                        server_p50_ms=truth["p50_ms"],
                        server_p99_ms=truth["p99_ms"],
                        p99_over_injected_ms=figures["p99_ms"] - INJECTED_MS,
                        p99_over_server_ms=figures["p99_ms"] - truth["p99_ms"],
                        rate_share_of_ideal=figures["requests_per_s"] / (concurrency / (INJECTED_MS / 1000)),
                        loadavg=_loadavg()[0],
                        **probe.figures(),
                    )
                    results.append(figures)
                    print(
                        f"round {index + 1} concurrency {concurrency} {name}: {figures['requests_per_s']:.1f} req/s, p50 {figures['p50_ms']:.1f} ms, "
                        f"p99 {figures['p99_ms']:.1f} ms (server p99 {truth['p99_ms']:.1f} ms), {figures['failed']} failed, "
                        f"stalls p99 {figures['stall_p99_ms']:.1f} ms, load {figures['loadavg']}",
                        flush=True,
                    )
    finally:
        server.terminate()
        server.wait(timeout=10)

    summary = summarize(results, levels, methods)
    return {
        "benchmark": "sagemaker-pools bench vs the seed article's thread-pool loop",
        "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_before": load_before,
            "loadavg_after": _loadavg(),
            "scheduling": scheduling(),
        },
        "settings": {"injected_ms": INJECTED_MS, "levels": list(levels), "rounds": rounds, "tool_duration_s": duration, "tool_warmup_s": warmup, "methods": list(methods),
                     "workload": workload or []},
        "rounds": results,
        "summary": summary,
    }


def summarize(results: list[dict[str, Any]], levels: tuple[int, ...] | list[int], methods: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """Per concurrency and method: the median and range of every figure over rounds; the targets."""
    keys = ("requests_per_s", "rate_share_of_ideal", "p50_ms", "p99_ms", "max_ms", "p99_over_injected_ms", "p99_over_server_ms", "server_p99_ms", "stall_p99_ms", "stall_max_ms")
    summary: dict[str, Any] = {}
    for concurrency in levels:
        level: dict[str, Any] = {"ideal_requests_per_s": concurrency / (INJECTED_MS / 1000)}
        for method in methods:
            rows = [r for r in results if r["method"] == method and r["concurrency"] == concurrency]
            if not rows:
                continue
            level[method] = {key: _stats([float(r[key]) for r in rows]) for key in keys if all(key in r for r in rows)}
            if all("concurrency_achieved" in r for r in rows) and method != "loop":
                level[method]["concurrency_achieved"] = _stats([float(r["concurrency_achieved"]) for r in rows])
        if "loop" in level and "tool" in level:
            level["rate_ratio_tool_over_loop"] = level["tool"]["requests_per_s"]["median"] / level["loop"]["requests_per_s"]["median"]
        summary[str(concurrency)] = level
    if str(TARGET_LEVEL) in summary and "tool" in summary[str(TARGET_LEVEL)]:
        target = summary[str(TARGET_LEVEL)]["tool"]
        summary["targets"] = {
            "level": TARGET_LEVEL,
            "rate_share_of_ideal": target["rate_share_of_ideal"]["median"],
            "meets_rate": target["rate_share_of_ideal"]["median"] >= TARGET_RATE_SHARE,
            "p99_over_server_ms": target["p99_over_server_ms"]["median"],
            "meets_p99": target["p99_over_server_ms"]["median"] <= TARGET_P99_OVER_TRUTH_MS,
        }
    return summary


def upgraded(result: dict[str, Any]) -> dict[str, Any]:
    """A result of the first version of this script (one concurrency, medians only) in today's shape.

    Its rounds hold every figure, so the summary is computed again from them.
    """
    settings = result["settings"]
    if "levels" in settings:
        return result
    concurrency = int(settings["concurrency"])
    rounds = [
        dict(r, concurrency=concurrency, rate_share_of_ideal=float(r["requests_per_s"]) / (concurrency / (settings["injected_ms"] / 1000)))
        for r in result["rounds"]
    ]
    methods = [m for m in METHODS if any(r["method"] == m for r in rounds)]
    return dict(result, rounds=rounds, settings=dict(settings, levels=[concurrency], methods=methods), summary=summarize(rounds, [concurrency], methods))


def _loadavg() -> list[str]:
    path = Path("/proc/loadavg")
    return path.read_text().split()[:3] if path.exists() else ["n/a"]


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _fmt(stats: dict[str, float], digits: int = 1) -> str:
    return f"{stats['median']:.{digits}f} ({stats['min']:.{digits}f}-{stats['max']:.{digits}f})"


def markdown(result: dict[str, Any]) -> str:
    """The result as a page; results of earlier versions of this script (no ``tool-boto3``, no
    stall probe, no scheduling class) render with what they have."""
    settings, s, machine = result["settings"], result["summary"], result["machine"]
    methods = settings.get("methods") or [m for m in METHODS if any(m in s[str(level)] for level in settings["levels"])]
    lines = [
        f"# sagemaker-pools bench vs the seed's thread-pool loop ({result['when']})",
        "",
        f"Local server, {settings['injected_ms']:g} ms injected, {settings['rounds']} alternating rounds of {settings['tool_duration_s']:g} s; "
        f"{machine['cpus']} CPUs, Python {machine['python']}, load average before "
        f"{' '.join(machine.get('loadavg_before', ['not recorded']))}, after {' '.join(machine.get('loadavg_after', ['not recorded']))}; "
        f"scheduling: {machine.get('scheduling', 'not recorded')}. Median over rounds (min-max)."
        + (f" Workload: `{' '.join(settings['workload'])}` (both sides send the same bodies)." if settings.get("workload") else ""),
        "",
        "| concurrency | method | requests/s | share of ideal | p50 ms | p99 ms | p99 over the server's p99 | server p99 ms | in flight (tool) | stalls p99 ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for level in settings["levels"]:
        row = s[str(level)]
        for method in methods:
            m = row.get(method)
            if m is None:
                continue
            achieved = _fmt(m["concurrency_achieved"]) if "concurrency_achieved" in m else ""
            stalls = _fmt(m["stall_p99_ms"]) if "stall_p99_ms" in m else "n/a"
            lines.append(
                f"| {level} | {method} | {_fmt(m['requests_per_s'])} | {_fmt(m['rate_share_of_ideal'], 3)} | {_fmt(m['p50_ms'])} | "
                f"{_fmt(m['p99_ms'])} | {_fmt(m['p99_over_server_ms'])} | {_fmt(m['server_p99_ms'])} | {achieved} | {stalls} |"
            )
    targets = s.get("targets")
    if targets:
        lines += [
            "",
            f"Targets at concurrency {targets['level']} (tool, medians): rate {targets['rate_share_of_ideal'] * 100:.1f} % of the ideal "
            f"({'meets' if targets['meets_rate'] else 'misses'} >= {TARGET_RATE_SHARE * 100:.0f} %); p99 {targets['p99_over_server_ms']:+.1f} ms "
            f"over the server's own p99 ({'meets' if targets['meets_p99'] else 'misses'} <= {TARGET_P99_OVER_TRUTH_MS:g} ms).",
        ]
    return "\n".join(lines) + "\n"


def render(path: Path) -> Path:
    """Rewrite the ``.md`` of an earlier result; a file that is not one fails with a clear message."""
    try:
        result = json.loads(path.read_text())
        text = markdown(upgraded(result))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--render {path}: cannot read it: {exc}") from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise SystemExit(f"--render {path}: not a result of this script (missing or malformed {exc})") from None
    target = path.with_suffix(".md")
    target.write_text(text)
    return target


def realtime() -> None:
    """Move this process (and so everything it starts) to SCHED_RR priority 1."""
    try:
        os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1))
    except PermissionError:
        raise SystemExit("--realtime needs root or CAP_SYS_NICE") from None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per round (both methods)")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--concurrency", default=",".join(str(n) for n in LEVELS), help="levels, e.g. 32,64,128")
    parser.add_argument("--methods", default=",".join(METHODS), help=f"which to run, of {','.join(METHODS)}")
    parser.add_argument("--realtime", action="store_true", help="run everything in SCHED_RR priority 1 (root): other sessions' load out of the figures")
    parser.add_argument("--render", metavar="RESULT.json", help="only rewrite the .md of an earlier result")
    parser.add_argument("--workload", default="", metavar="ARGS", help="bench's workload options for both sides, e.g. '--shape 64:16@0.7 --shape 256:32@0.3'")
    args = parser.parse_args()
    if args.render:
        print(render(Path(args.render)))
        raise SystemExit(0)
    chosen = tuple(m for m in args.methods.split(",") if m)
    if not chosen or set(chosen) - set(METHODS):
        parser.error(f"--methods: choose from {', '.join(METHODS)}")
    if args.realtime:
        realtime()
    workload = shlex.split(args.workload)
    workload_bodies(workload)  # bad workload options fail now, before the server starts
    result = run(args.rounds, args.duration, args.warmup, tuple(int(n) for n in args.concurrency.split(",")), chosen, workload)
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    (out / f"ops-{stamp}.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / f"ops-{stamp}.md").write_text(markdown(result))
    print(markdown(result))
