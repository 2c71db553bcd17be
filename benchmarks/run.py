#!/usr/bin/env python3
"""Synth cost of the library against its hand-written L1 twin (``make bench``).

For each scenario (the example app; N = 1, 10, 50 pooled endpoints with scaling, alarms and a
dashboard) the library app (A) and the L1 app (B) run as fresh ``python`` processes, the way
``cdk synth`` runs ``app.py`` (same environment: ``CDK_OUTDIR``, ``CDK_CONTEXT_JSON`` with the
CLI's defaults and cdk.json's context), interleaved A B A B ... after one warm-up pair. Per run:
wall time to exit, CPU time (user + sys of Python and its Node children) and peak memory
(high-water RSS of Python plus Node, read from /proc at the end of synthesis by ``_probe.py``).
Reported: medians, and the per-pair ratio A / B as median [min, max].

Then the template economy (resources and bytes per pooled endpoint, and how many fit in one
stack under CloudFormation's limits) from the synthesized fleets, and a check that every
library template equals its twin up to logical ids and names (``twin.py``).

Writes ``benchmarks/results/synth-<date>.json`` and ``.md``; prints the tables.

    python benchmarks/run.py [--pairs 5] [--sizes 1,10,50] [--no-example] [--no-builtin-validation]
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))

import twin  # noqa: E402

#: What the CDK CLI (2.1148) adds to cdk.json's context for the app process.
CLI_CONTEXT = {
    "aws:cdk:enable-path-metadata": True,
    "aws:cdk:enable-asset-metadata": True,
    "aws:cdk:version-reporting": True,
    "aws:cdk:bundling-stacks": ["**"],
    "@aws-cdk/core:failSynthOnValidationErrors": False,
}
#: CloudFormation quotas: resources a stack; template size uploaded through S3 (CDK's way) and inline.
MAX_RESOURCES = 500
MAX_TEMPLATE_BYTES = 1_000_000
MAX_INLINE_TEMPLATE_BYTES = 51_200
MAX_DASHBOARD_WIDGETS = 500


#: Set by --no-builtin-validation: CDK_VALIDATION=false turns off aws-cdk-lib's built-in CloudFormation validation.
BUILTIN_VALIDATION = True


def cli_env(outdir: Path) -> dict[str, str]:
    context = json.loads((ROOT / "cdk.json").read_text()).get("context", {})
    env = dict(os.environ)
    env.update(
        {
            "CDK_OUTDIR": str(outdir),
            "CDK_CONTEXT_JSON": json.dumps({**context, **CLI_CONTEXT}),
            "CDK_CLI_ASM_VERSION": "55.0.0",
            "CDK_CLI_VERSION": "2.1148.1",
            "CDK_DEFAULT_REGION": env.get("CDK_DEFAULT_REGION", "us-east-1"),
            "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": env.get("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20"),
        }
    )
    if not BUILTIN_VALIDATION:
        env["CDK_VALIDATION"] = "false"
    return env


def command(side: str, n: int | None) -> list[str]:
    """The app script and arguments of one side (``lib`` or ``l1``) of a scenario."""
    if side == "lib":
        return [str(ROOT / "app.py")] if n is None else [str(HERE / "lib_app.py"), "--fleet", str(n)]
    return [str(HERE / "l1_app.py")] + ([] if n is None else ["--fleet", str(n)])


def _subreaper() -> None:
    """Adopt orphaned grandchildren (jsii's Node) so that their CPU time is ours to collect."""
    try:
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def run_once(app: Sequence[str], keep: Path | None = None) -> dict[str, float]:
    """One fresh process of ``app`` (a script and its arguments): wall s, cpu s, peak python + node RSS (MB)."""
    work = Path(tempfile.mkdtemp(prefix=f"bench-{Path(app[0]).stem}-"))
    outdir = keep or work / "cdk.out"
    probe = work / "probe.json"
    env = cli_env(outdir)
    env["BENCH_PROBE_OUT"] = str(probe)
    argv = [sys.executable, str(HERE / "_probe.py"), *app]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    cpu = usage.ru_utime + usage.ru_stime
    # Orphans (a Node process its parent did not wait for): reap them, count their CPU time.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            pid, _, orphan = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.02)
            continue
        cpu += orphan.ru_utime + orphan.ru_stime
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{stderr[-3000:]}")
    peak = json.loads(probe.read_text())
    shutil.rmtree(work, ignore_errors=True)
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "python_mb": peak["python_hwm_kb"] / 1024,
        "node_mb": peak["node_hwm_kb"] / 1024,
        "rss_mb": (peak["python_hwm_kb"] + peak["node_hwm_kb"]) / 1024,
    }


def summarize(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def ratio_of(runs: Mapping[str, list[dict[str, float]]], a: str, b: str, metric: str) -> dict[str, float]:
    """``metric`` of side ``a`` over side ``b``, round by round: median, min, max."""
    return summarize([x[metric] / y[metric] for x, y in zip(runs[a], runs[b])])


def interleaved(
    apps: Mapping[str, Sequence[str]], rounds: int, label: str, keep: Mapping[str, Path] | None = None
) -> dict[str, list[dict[str, float]]]:
    """A warm-up run of each side (its assembly kept in ``keep[side]``), then ``rounds`` rounds
    that run every side in turn, so that all sides see the same load: ``{side: [run, ...]}``.
    ``apps``: side name -> the app script and its arguments."""
    print(f"[{label}] warm-up", file=sys.stderr, flush=True)
    for side, app in apps.items():
        run_once(app, (keep or {}).get(side))
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in apps}
    for i in range(rounds):
        for side, app in apps.items():
            runs[side].append(run_once(app))
        times = ", ".join(f"{side} {runs[side][-1]['wall_s']:.2f} s" for side in apps)
        print(f"[{label}] round {i + 1}/{rounds}: {times}", file=sys.stderr, flush=True)
    return runs


def measure(label: str, n: int | None, pairs: int, keep: dict[str, Path]) -> dict[str, Any]:
    """Warm-up pair (its assemblies kept in ``keep``), then ``pairs`` interleaved A B pairs."""
    runs = interleaved({side: command(side, n) for side in ("lib", "l1")}, pairs, label, keep)
    out: dict[str, Any] = {"label": label, "n": n, "pairs": pairs, "runs": runs}
    for metric in ("wall_s", "cpu_s", "rss_mb", "python_mb", "node_mb"):
        out[metric] = {
            "lib": summarize([r[metric] for r in runs["lib"]]),
            "l1": summarize([r[metric] for r in runs["l1"]]),
            "ratio": ratio_of(runs, "lib", "l1", metric),
        }
    return out


def templates(outdir: Path) -> dict[str, dict[str, Any]]:
    manifest = json.loads((outdir / "manifest.json").read_text())
    return {
        name: json.loads((outdir / art["properties"]["templateFile"]).read_text())
        for name, art in manifest["artifacts"].items()
        if art["type"] == "aws:cloudformation:stack"
    }


def template_stats(outdir: Path) -> dict[str, dict[str, int]]:
    out = {}
    for name, template in templates(outdir).items():
        path = outdir / f"{name}.template.json"
        out[name] = {
            "resources": len(template.get("Resources", {})),
            "bytes": path.stat().st_size,
            "minified_bytes": len(json.dumps(template, separators=(",", ":"), ensure_ascii=False).encode()),
        }
    return out


def twin_check(lib_out: Path, l1_out: Path) -> dict[str, list[str]]:
    a, b = templates(lib_out), templates(l1_out)
    problems = {name: twin.differences(a[name], b[name]) for name in a if name in b}
    problems.update({name: ["no L1 twin"] for name in set(a) - set(b)})
    problems.update({name: ["not in the library app"] for name in set(b) - set(a)})
    return {k: v for k, v in problems.items() if v}


def economy(fleet_stats: dict[int, dict[str, dict[str, dict[str, int]]]]) -> dict[str, Any]:
    """Per-endpoint slope and fixed part of one fleet stack (from N = 1 and N = 10, one stack each)."""
    out: dict[str, Any] = {}
    if 1 not in fleet_stats or 10 not in fleet_stats:
        return out
    for side in ("lib", "l1"):
        one = fleet_stats[1][side]["PooledFleet01"]
        ten = fleet_stats[10][side]["PooledFleet01"]
        side_out: dict[str, Any] = {}
        for key in ("resources", "bytes", "minified_bytes"):
            per = (ten[key] - one[key]) / 9
            fixed = one[key] - per
            side_out[key] = {"per_endpoint": per, "fixed": fixed}
        r, b = side_out["resources"], side_out["bytes"]
        side_out["max_endpoints_by_resources"] = int((MAX_RESOURCES - r["fixed"]) // r["per_endpoint"])
        side_out["max_endpoints_by_bytes"] = int((MAX_TEMPLATE_BYTES - b["fixed"]) // b["per_endpoint"])
        side_out["max_endpoints_inline"] = max(0, int((MAX_INLINE_TEMPLATE_BYTES - b["fixed"]) // b["per_endpoint"]))
        out[side] = side_out
    out["max_endpoints_by_dashboard_widgets"] = MAX_DASHBOARD_WIDGETS // 8
    return out


def machine() -> dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), platform.processor())
    mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout.strip())
    versions = {"python": platform.python_version(), "node": node}
    for dist in ("aws-cdk-lib", "constructs", "jsii", "cdk-sagemaker-pools"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "absent"
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "load_average_start": os.getloadavg(),
        "versions": versions,
        "commit": commit + ("+dirty" if dirty else ""),
    }


def fmt_ratio(r: dict[str, float]) -> str:
    return f"{r['median']:.3f} [{r['min']:.3f}, {r['max']:.3f}]"


def report(result: dict[str, Any]) -> str:
    lines = [f"# Synth benchmark, {result['date']}", ""]
    m = result["machine"]
    lines += [
        f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory_gb']} GB; load average {m['load_average_start'][0]:.1f} at start, "
        f"{m['load_average_end'][0]:.1f} at end. Versions: "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        + f"; commit {m['commit']}.",
        "",
        "Library app (A) against its hand-written L1 twin (B), fresh `python` process per run with the CDK CLI's "
        "environment, interleaved A B after a warm-up pair. Ratio = A / B per pair: median [min, max]. "
        + ("aws-cdk-lib's built-in template validation on (the default)." if result.get("builtin_validation", True)
           else "aws-cdk-lib's built-in template validation off (CDK_VALIDATION=false)."),
        "",
        "| scenario | pairs | library wall s | L1 wall s | wall ratio | CPU ratio | library peak MB | L1 peak MB | memory ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in result["scenarios"]:
        lines.append(
            f"| {s['label']} | {s['pairs']} | {s['wall_s']['lib']['median']:.2f} | {s['wall_s']['l1']['median']:.2f} | "
            f"{fmt_ratio(s['wall_s']['ratio'])} | {fmt_ratio(s['cpu_s']['ratio'])} | {s['rss_mb']['lib']['median']:.0f} | "
            f"{s['rss_mb']['l1']['median']:.0f} | {s['rss_mb']['ratio']['median']:.3f} |"
        )
    fleets = [s for s in result["scenarios"] if s["n"] is not None]
    if len(fleets) >= 2:
        lines += ["", "Growth (fleet of N pooled endpoints; marginal cost = extra seconds per extra endpoint):", "",
                  "| N | library s | L1 s | ratio | library s/endpoint (marginal) | L1 s/endpoint (marginal) | library CPU s | L1 CPU s |",
                  "|---|---|---|---|---|---|---|---|"]
        prev = None
        for s in fleets:
            a, b = s["wall_s"]["lib"]["median"], s["wall_s"]["l1"]["median"]
            marg = "" if prev is None else f"{(a - prev[1]) / (s['n'] - prev[0]):.3f}"
            margb = "" if prev is None else f"{(b - prev[2]) / (s['n'] - prev[0]):.3f}"
            lines.append(
                f"| {s['n']} | {a:.2f} | {b:.2f} | {s['wall_s']['ratio']['median']:.3f} | {marg} | {margb} | "
                f"{s['cpu_s']['lib']['median']:.2f} | {s['cpu_s']['l1']['median']:.2f} |"
            )
            prev = (s["n"], a, b)
    e = result.get("economy", {})
    if e:
        lines += ["", "Template economy (one fleet stack; per pooled endpoint = slope between N = 1 and N = 10):", "",
                  "| | resources / endpoint | fixed resources | template bytes / endpoint | minified bytes / endpoint | "
                  "endpoints a stack (500 resources) | endpoints a stack (1 MB) | endpoints inline (51,200 B) |",
                  "|---|---|---|---|---|---|---|---|"]
        for side, name in (("lib", "library"), ("l1", "L1 twin")):
            x = e[side]
            lines.append(
                f"| {name} | {x['resources']['per_endpoint']:.0f} | {x['resources']['fixed']:.0f} | {x['bytes']['per_endpoint']:,.0f} | "
                f"{x['minified_bytes']['per_endpoint']:,.0f} | {x['max_endpoints_by_resources']} | {x['max_endpoints_by_bytes']} | "
                f"{x['max_endpoints_inline']} |"
            )
        lines.append(f"\nOne dashboard holds {e['max_endpoints_by_dashboard_widgets']} endpoints (8 widgets each, 500 at most).")
    lines += ["", "Twin check (library template == L1 template up to logical ids and names): "
              + ("all equal." if not result["twin_problems"] else json.dumps(result["twin_problems"], indent=1))]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7, help="interleaved pairs after the warm-up (default 7)")
    parser.add_argument("--sizes", default="1,10,50", help="fleet sizes (default 1,10,50)")
    parser.add_argument("--no-example", action="store_true", help="skip the example app")
    parser.add_argument("--no-builtin-validation", action="store_true",
                        help="CDK_VALIDATION=false: time without aws-cdk-lib's built-in template validation (half of synth)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    global BUILTIN_VALIDATION
    BUILTIN_VALIDATION = not args.no_builtin_validation
    _subreaper()
    sizes = [int(x) for x in args.sizes.split(",") if x]
    date = dt.datetime.now().strftime("%Y-%m-%d")
    keep_root = Path(tempfile.mkdtemp(prefix="bench-assemblies-"))
    result: dict[str, Any] = {
        "date": date,
        "machine": machine(),
        "builtin_validation": BUILTIN_VALIDATION,
        "scenarios": [],
        "twin_problems": {},
    }
    fleet_stats: dict[int, dict[str, Any]] = {}
    scenarios: list[tuple[str, int | None]] = ([] if args.no_example else [("example app", None)]) + [(f"N = {n}", n) for n in sizes]
    for label, n in scenarios:
        keep = {side: keep_root / f"{side}-{n or 'example'}" for side in ("lib", "l1")}
        result["scenarios"].append(measure(label, n, args.pairs, keep))
        problems = twin_check(keep["lib"], keep["l1"])
        result["twin_problems"].update({f"{label}: {k}": v for k, v in problems.items()})
        stats = {side: template_stats(keep[side]) for side in ("lib", "l1")}
        result["scenarios"][-1]["templates"] = stats
        if n is not None:
            fleet_stats[n] = stats
    result["economy"] = economy(fleet_stats)
    result["machine"]["load_average_end"] = os.getloadavg()
    shutil.rmtree(keep_root, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"synth-{date}" + ("" if BUILTIN_VALIDATION else "-no-validation")
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=1) + "\n")
    text = report(result)
    (args.out / f"{stem}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
