#!/usr/bin/env python3
"""The library as it is against the library at an earlier commit, both against the L1 twin, in
one run: interleaved triples (now, then, twin) of fresh processes, as ``run.py`` measures them.

    python benchmarks/against_commit.py 2f548b5 --fleet 50 --pairs 7

On a shared machine two ``make bench`` runs of the same code can differ by more than a change
is worth; within one run the three sides see the same load, so the per-triple ratios (now ÷ twin,
then ÷ twin, now ÷ then; median [min, max]) show what the change did. The earlier commit is
checked out in a temporary git worktree (removed afterwards) and its ``benchmarks/lib_app.py``
runs against its own package; the CLI environment (cdk.json's context) is this checkout's.
"""

from __future__ import annotations

import argparse
import runpy
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def run_then(worktree: Path, argv: list[str]) -> None:
    """Run ``worktree``'s ``benchmarks/lib_app.py argv`` against ``worktree``'s package."""
    sys.path.insert(0, str(worktree / "constructs"))
    import sagemaker_pools

    if not Path(sagemaker_pools.__file__).resolve().is_relative_to(worktree.resolve()):
        raise SystemExit(f"the earlier side imported {sagemaker_pools.__file__}, not {worktree}'s package")
    script = worktree / "benchmarks" / "lib_app.py"
    sys.argv = [str(script), *argv]
    runpy.run_path(str(script), run_name="__main__")


def compare(commit: str, fleet: int, pairs: int) -> None:
    """Warm-up, then ``pairs`` interleaved triples; print the ratios."""
    import run

    resolved = subprocess.run(["git", "rev-parse", "--short", commit], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    worktree = Path(tempfile.mkdtemp(prefix="against-")) / resolved
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(worktree), resolved], cwd=ROOT, check=True)
    try:
        apps = {
            "now": run.command("lib", fleet),
            "then": [str(Path(__file__).resolve()), "--run-then", str(worktree), "--fleet", str(fleet)],
            "l1": run.command("l1", fleet),
        }
        runs = run.interleaved(apps, pairs, f"fleet of {fleet}")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
        shutil.rmtree(worktree.parent, ignore_errors=True)

    print(f"fleet of {fleet}, {pairs} triples; now = {head} (working tree), then = {resolved}; median [min, max]")
    print("                 wall                    CPU (user + system, Python and Node)")
    for side in runs:
        wall, cpu = (statistics.median(r[metric] for r in runs[side]) for metric in ("wall_s", "cpu_s"))
        print(f"  {side:4s}           {wall:6.2f} s                {cpu:6.2f} s")
    for a, b, label in (("now", "l1", "now ÷ L1 twin "), ("then", "l1", "then ÷ L1 twin"), ("now", "then", "now ÷ then    ")):
        print(f"  {label} {run.fmt_ratio(run.ratio_of(runs, a, b, 'wall_s'))}   {run.fmt_ratio(run.ratio_of(runs, a, b, 'cpu_s'))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", nargs="?", help="the earlier commit (anything git rev-parse takes)")
    parser.add_argument("--fleet", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--run-then", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_then is not None:
        run_then(args.run_then, ["--fleet", str(args.fleet)])
    elif args.commit is None:
        parser.error("the earlier commit is required")
    else:
        compare(args.commit, args.fleet, args.pairs)


if __name__ == "__main__":
    main()
