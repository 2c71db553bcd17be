#!/usr/bin/env python3
"""Where synth time goes: phases, jsii round trips and the hottest Python callers, in one process.

    python benchmarks/synth_profile.py lib --fleet 10      # the library fleet of 10 endpoints
    python benchmarks/synth_profile.py l1 --fleet 10       # its L1 twin
    python benchmarks/synth_profile.py lib                 # the example app
    python benchmarks/synth_profile.py lib --fleet 10 --cprofile 25   # plus cProfile's top 25 (cumulative)
    python benchmarks/synth_profile.py lib --fleet 30 --anatomy       # plus the tree's constructs and metadata

Phases: ``import`` (aws_cdk, which starts Node, and every module the app imports), ``construct``
(building the tree) and ``synth`` (``app.synth()``: validation, token resolution, writing the
assembly; nearly all in Node). jsii round trips are counted per kind (create, invoke, get, set,
static get/invoke) and per target (class or member name), from the Python side, and callbacks
from Node into Python (overridden methods, lazies) are counted too.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("side", choices=["lib", "l1"])
    parser.add_argument("--fleet", type=int, default=None)
    parser.add_argument("--cprofile", type=int, default=0, help="print cProfile's top N by cumulative time")
    parser.add_argument("--top", type=int, default=15, help="jsii targets to list")
    parser.add_argument(
        "--anatomy", action="store_true", help="count the tree's constructs by class and the first stack's metadata by type"
    )
    args = parser.parse_args()

    t0 = time.perf_counter()
    from aws_cdk import App

    if args.side == "lib":
        sys.path.insert(0, str(ROOT))
        import app as example_app  # noqa: F401
        from app_context import apply_context
        from fleet import lib_fleet  # noqa: F401
        import sagemaker_pools.alarms, sagemaker_pools.dashboard, sagemaker_pools.endpoint  # noqa: E401, F401
    else:
        import l1_app  # noqa: F401
    t_import = time.perf_counter() - t0

    counts: collections.Counter[str] = collections.Counter()
    targets: collections.Counter[str] = collections.Counter()
    seconds: collections.Counter[str] = collections.Counter()  # wall time inside each target's round trips
    import jsii

    # Generated bindings call jsii.create / jsii.invoke / jsii.get ... (bound to the one kernel).
    def counted(kind: str, target_of):  # type: ignore[no-untyped-def]
        original = getattr(jsii, kind)

        def wrapper(*a, **k):  # type: ignore[no-untyped-def]
            counts[kind] += 1
            target = f"{kind} {target_of(a)}"
            targets[target] += 1
            started = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                seconds[target] += time.perf_counter() - started

        setattr(jsii, kind, wrapper)

    def type_name(x: object) -> str:
        return getattr(x, "__name__", None) or type(x).__name__

    counted("create", lambda a: type_name(a[0]))
    counted("invoke", lambda a: f"{type(a[0]).__name__}.{a[1]}")
    counted("get", lambda a: f"{type(a[0]).__name__}.{a[1]}")
    counted("set", lambda a: f"{type(a[0]).__name__}.{a[1]}")
    counted("sget", lambda a: f"{type_name(a[0])}.{a[1]}")
    counted("sinvoke", lambda a: f"{type_name(a[0])}.{a[1]}")
    counted("sset", lambda a: f"{type_name(a[0])}.{a[1]}")

    profiler = cProfile.Profile() if args.cprofile else None
    outdir = tempfile.mkdtemp(prefix="bench-profile-")
    app = App(outdir=outdir)
    if profiler:
        profiler.enable()
    t1 = time.perf_counter()
    if args.side == "lib":
        if args.fleet is None:
            example_app.build_app(app)
        else:
            lib_fleet(apply_context(app), args.fleet)  # cdk.json's flags, as l1_app.build_app
    else:
        l1_app.build_app(app, fleet=args.fleet)
    t_construct = time.perf_counter() - t1
    calls_construct = sum(counts.values())
    t2 = time.perf_counter()
    app.synth()
    t_synth = time.perf_counter() - t2
    if profiler:
        profiler.disable()
    anatomy = assembly_anatomy(Path(outdir)) if args.anatomy else None
    shutil.rmtree(outdir, ignore_errors=True)
    calls_synth = sum(counts.values()) - calls_construct

    label = f"{args.side} {'example app' if args.fleet is None else f'fleet N={args.fleet}'}"
    print(f"{label}: import {t_import:.2f} s, construct {t_construct:.2f} s, synth {t_synth:.2f} s")
    print(f"jsii round trips: {calls_construct} while constructing, {calls_synth} during synth (callbacks into Python)")
    print("  by kind: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    for target, n in targets.most_common(args.top):
        print(f"  {n:6d}  {target}")
    print(f"time inside jsii while constructing and synthesizing: {sum(seconds.values()):.2f} s; by target:")
    for target, spent in seconds.most_common(args.top):
        print(f"  {spent * 1000:8.1f} ms  {targets[target]:6d}  {target}")
    if anatomy:
        print(anatomy)
    if profiler:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(args.cprofile)


def assembly_anatomy(outdir: Path) -> str:
    """The synthesized tree's constructs by class, and the first stack's metadata by entry type
    (entries, bytes): what Node builds and writes beyond the templates."""
    import json

    constructs: collections.Counter[str] = collections.Counter()

    def walk(node: dict) -> None:  # type: ignore[type-arg]
        constructs[node.get("constructInfo", {}).get("fqn", "?")] += 1
        for child in (node.get("children") or {}).values():
            walk(child)

    walk(json.loads((outdir / "tree.json").read_text())["tree"])
    lines = [f"constructs in the tree: {sum(constructs.values())}"]
    lines += [f"  {n:6d}  {fqn}" for fqn, n in constructs.most_common()]
    first = sorted(outdir.glob("*.metadata.json"))[:1]
    if first:
        entries: collections.Counter[str] = collections.Counter()
        size: collections.Counter[str] = collections.Counter()
        for path_entries in json.loads(first[0].read_text()).values():
            for entry in path_entries:
                entries[entry["type"]] += 1
                size[entry["type"]] += len(json.dumps(entry))
        lines.append(f"metadata of {first[0].name}: {sum(size.values()):,} bytes")
        lines += [f"  {entries[t]:6d} entries {b:9,d} bytes  {t}" for t, b in size.most_common()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
