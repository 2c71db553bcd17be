"""``make mutate``: mutation testing of the library's decision-making modules with mutmut 3.

mutmut derives a mutant's module name from its file path and only knows the ``./``, ``src/`` and
``source/`` layouts; this repository keeps its packages under the source roots ``constructs/`` and
``stacks/`` (see DESIGN.md, "Name clash"), so a file path ``constructs/sagemaker_pools/pools.py``
would name the module ``constructs.sagemaker_pools.pools``, which is never imported. The script
therefore runs mutmut in a staging copy per module, where the library sits under ``src/`` (the
package name, and every import, stays ``sagemaker_pools``), and only the tests of ``MODULES`` run.

Usage::

    python tools/mutate.py                 # every module of MODULES, in two lanes (--lanes)
    python tools/mutate.py pools.py        # some of them
    python tools/mutate.py --lanes 1       # one module after the other
    python tools/mutate.py --report        # the score of the last run, without running

Modules run in ``--lanes`` parallel mutmut processes (default 2, the machine's cores), the
longest first (``_COST``), each lane taking the next module when its last one is done. Within a
module the mutants run one at a time (``--max-children 1``): mutmut forks every mutant's pytest
from one process that has loaded aws_cdk, so all of them talk to that process's single jsii
(Node) kernel over one pipe pair, and two at once would read each other's answers. Separate
lanes are separate mutmut processes, each with its own kernel.

Results stay in ``build/mutate/<module>/mutants`` (``mutmut show <name>`` works there). The
score counts killed, timed-out and segfaulting mutants as killed; "no tests" mutants (code no
selected test reaches) count as survivors. The survivors known to be equivalent or harmless are
``EXPECTED_SURVIVORS`` below, each with its reason in docs/testing.md; the run fails if any other
mutant survives or if a module scores under ``GOAL``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "constructs" / "sagemaker_pools"
STAGING = ROOT / "build" / "mutate"
GOAL = 0.90

#: module (relative to sagemaker_pools/) -> the tests that decide its mutants (pytest arguments). The one place the
#: selection lives: a test that exercises a module belongs here, or the module's mutants it
#: would kill survive. mutmut then runs, per mutant, only those of these tests that reach the
#: mutated function.
MODULES: dict[str, list[str]] = {
    "pools.py": ["tests/test_pools.py", "tests/test_properties.py", "tests/test_bad_input.py"],
    "instance_types.py": ["tests/test_pools.py", "tests/test_bad_input.py", "tests/test_layout.py"],
    "routing.py": ["tests/test_endpoint.py", "tests/test_bad_input.py"],
    "deployment.py": ["tests/test_deployment.py", "tests/test_endpoint.py", "tests/test_bad_input.py"],
    "metrics.py": [
        "tests/test_metrics.py",
        "tests/test_alarms.py",
        "tests/test_queries.py",
        "tests/test_weighted_utilization.py",
    ],
    # (not tests/test_weighted_utilization.py: it checks metrics.py's arithmetic through policies
    # whose fixture costs every mutant's run about 4 s; test_scaling.py pins what scaling.py renders)
    "scaling.py": ["tests/test_scaling.py", "tests/test_tree.py"],
    # (without the timing tests of the local bench server: they measure the machine, not the statistics)
    "ops/bench/stats.py": [
        "tests/ops/test_ops_units.py",
        "tests/ops/test_ops_bench_units.py",
        "tests/ops/test_ops_bench.py",
        "--deselect",
        "tests/ops/test_ops_bench.py::test_p50_at_concurrency_1_is_within_3_ms_of_the_servers",
        "--deselect",
        "tests/ops/test_ops_bench.py::test_ttft_and_mean_itl_are_within_3_ms",
        "--deselect",
        "tests/ops/test_ops_bench.py::test_open_loop_keeps_the_rate",
    ],
    # (the ids CDK derives from construct paths, and the path bookkeeping the roles and scaling use)
    "_tree.py": ["tests/test_tree.py", "tests/test_roles.py"],
    "ops/migrate.py": [
        "tests/ops/test_ops_migrate.py",
        "tests/ops/test_ops_migrate_plan.py",
        "tests/ops/test_ops_units.py",
        "tests/ops/test_ops_errors.py",
    ],
    # (migrate's CloudFormation question, and status --check-metrics: Stubber tests only, no CDK)
    "ops/stack_owner.py": ["tests/ops/test_ops_migrate_cloudformation.py", "tests/ops/test_ops_migrate_plan.py"],
    "ops/metric_reads.py": ["tests/ops/test_ops_status_metrics.py"],
    "ops/metric_check.py": ["tests/ops/test_ops_status_metrics.py"],
}

#: About how long each module's mutmut run takes (docs/testing.md, "Scores"): the lanes start the
#: longest first, so that no lane is left with a long module at the end.
_COST: dict[str, float] = {  # (seconds of a run at load average ~3, 2026-12-01)
    "metrics.py": 716,
    "scaling.py": 561,
    "deployment.py": 231,
    "ops/migrate.py": 160,
    "routing.py": 127,
    "pools.py": 115,
    "instance_types.py": 100,
    "ops/bench/stats.py": 69,
    "_tree.py": 45,
    "ops/metric_reads.py": 270,
    "ops/metric_check.py": 174,
    "ops/stack_owner.py": 126,
}

#: Tests that do not run while mutating: the rule-reach tests parse the library's source, which
#: mutmut rewrites, and the layout test reads it under constructs/, which the staging copy moves.
_NOT_MUTATION_TESTS = [
    arg
    for test in (
        "tests/test_layout.py::test_scaling_and_components_sit_below_the_endpoint",
        "tests/test_bad_input.py::test_the_corpora_reach_every_rule",
        "tests/test_async.py::test_corpus_reaches_every_rule",
        "tests/test_inference_component.py::test_corpus_reaches_every_rule",
    )
    for arg in ("--deselect", test)
]

#: Mutants that survive on purpose, by mutmut name; docs/testing.md gives each one's reason.
EXPECTED_SURVIVORS: set[str] = {
    "sagemaker_pools.metrics.x__number__mutmut_2",
    "sagemaker_pools.metrics.x_sagemaker_metric__mutmut_56",
    "sagemaker_pools.metrics.x_sagemaker_metric__mutmut_59",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_19",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_24",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_30",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_32",
    "sagemaker_pools.scaling.xǁScalableCapacityǁscale_to_track_metric__mutmut_30",
    "sagemaker_pools.scaling.xǁScalableCapacityǁscale_to_track_metric__mutmut_32",
    "sagemaker_pools.pools.x_resolve_pools__mutmut_74",
    "sagemaker_pools.instance_types.x_closest_instance_types__mutmut_20",
    "sagemaker_pools.instance_types.x_has_instance_storage__mutmut_10",
    "sagemaker_pools.deployment.xǁDeploymentPolicyǁrolling__mutmut_27",
    "sagemaker_pools.deployment.xǁDeploymentPolicyǁrolling__mutmut_63",
    "sagemaker_pools.deployment.xǁDeploymentPolicyǁrolling__mutmut_86",
    "sagemaker_pools.deployment.xǁDeploymentPolicyǁrolling__mutmut_87",
    "sagemaker_pools.deployment.xǁDeploymentPolicyǁ_check_timeout__mutmut_8",
    "sagemaker_pools.scaling.xǁScalableCapacityǁwake_from_zero__mutmut_15",
    "sagemaker_pools.scaling.xǁScalableCapacityǁwake_from_zero__mutmut_25",
    "sagemaker_pools.scaling.xǁVariantScalingǁ__init____mutmut_50",
    "sagemaker_pools.scaling.xǁVariantScalingǁ__init____mutmut_61",
    "sagemaker_pools.ops.migrate.x__with_fallbacks__mutmut_38",
    "sagemaker_pools.ops.migrate.x__with_fallbacks__mutmut_85",
    "sagemaker_pools.metrics.x__number__mutmut_10",
    "sagemaker_pools.metrics.x__number__mutmut_11",
    "sagemaker_pools.metrics.x_instance_samples_metric__mutmut_5",
    "sagemaker_pools.metrics.x_instance_samples_metric__mutmut_6",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_2",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_3",
    "sagemaker_pools.metrics.x_sagemaker_metric__mutmut_12",
    "sagemaker_pools.metrics.x_sagemaker_metric__mutmut_23",
    "sagemaker_pools.metrics.x_sagemaker_metric__mutmut_49",
    "sagemaker_pools.metrics.x_sagemaker_metric__mutmut_52",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_11",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_18",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_23",
    "sagemaker_pools.metrics.x_weighted_utilization__mutmut_25",
    "sagemaker_pools.metrics.x_sagemaker_stat__mutmut_77",
    "sagemaker_pools.metrics.x_sagemaker_stat__mutmut_78",
    "sagemaker_pools.ops.bench.stats.x_progress_bucket__mutmut_1",
    "sagemaker_pools.ops.bench.stats.x_bucket_percentile__mutmut_25",
    "sagemaker_pools.ops.bench.stats.x_bucket_percentile__mutmut_26",
    "sagemaker_pools.ops.stack_owner.x_stack_ownership__mutmut_71",
}

_KILLED = {"killed", "timeout", "segfault", "caught by type check"}


def _stage(module: str) -> Path:
    """A copy of the repository with the library under src/, configured for ``module``."""
    where = STAGING / module.replace("/", "_").removesuffix(".py")
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")
    shutil.copytree(LIBRARY, where / "src" / "sagemaker_pools", ignore=ignore)
    for folder in ("stacks", "tests", "docs"):  # (tests compare docs/ with what the code does)
        shutil.copytree(ROOT / folder, where / folder, ignore=ignore)
    for name in ("app.py", "cdk.json", "README.md"):
        shutil.copy2(ROOT / name, where / name)
    # A shared fixture's reach counts for every test that uses it (see the module's docstring).
    shutil.copy2(ROOT / "tools" / "mutmut_fixture_reach.py", where / "tests" / "support" / "mutmut_fixture_reach.py")
    # A forked mutant's bench starts its own forkserver, not the stats pass's (see that module).
    shutil.copy2(ROOT / "tools" / "mutmut_forkserver.py", where / "tests" / "support" / "mutmut_forkserver.py")
    with (where / "tests" / "conftest.py").open("a") as conftest:
        conftest.write("\n\nfrom support.mutmut_fixture_reach import pytest_fixture_setup, pytest_runtest_teardown  # noqa: E402, F401\n")
        conftest.write("import support.mutmut_forkserver  # noqa: E402, F401\n")
    if (ROOT / "benchmarks").exists():
        shutil.copytree(ROOT / "benchmarks", where / "benchmarks", ignore=ignore)
    if (ROOT / "node_modules").exists():
        (where / "node_modules").symlink_to(ROOT / "node_modules")
    tests = MODULES[module]
    pyproject = (ROOT / "pyproject.toml").read_text()
    # The library is imported from src/ (mutmut puts mutants/src first on sys.path); stacks/ stays a source root.
    pyproject = re.sub(r'(?m)^pythonpath = \[.*\]$', 'pythonpath = ["stacks"]', pyproject)
    # No random order while mutating: mutmut runs a few tests per mutant and compares runs.
    pyproject = re.sub(r'(?m)^addopts = "(.*)"$', r'addopts = "\1 -p no:randomly -p no:cacheprovider"', pyproject)
    pyproject += (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        'also_copy = ["app.py", "cdk.json", "README.md", "stacks", "benchmarks", "docs"]\n'
        f'only_mutate = ["src/sagemaker_pools/{module}"]\n'
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
        f'pytest_add_cli_args = ["-p", "no:xdist", "--snapshot-warn-unused", {", ".join(json.dumps(a) for a in _NOT_MUTATION_TESTS)}]\n'
        "use_git_change_detection = false\n"
        "track_dependencies = false\n"
    )
    (where / "pyproject.toml").write_text(pyproject)
    return where


def _results(where: Path, module: str) -> dict[str, str]:
    """``{mutant name: status}`` from mutmut's own result files."""
    from mutmut.stats import status_by_exit_code

    meta = where / "mutants" / "src" / "sagemaker_pools" / (module + ".meta")
    data = json.loads(meta.read_text())
    return {name: status_by_exit_code[code] for name, code in data["exit_code_by_key"].items()}


def _run(module: str, children: int) -> None:
    """Stage ``module`` and run mutmut over it; raise ``SystemExit`` if mutmut fails."""
    where = _stage(module)
    mutmut = Path(sys.executable).with_name("mutmut")
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    start = time.monotonic()
    # One child at a time: every mutant's tests share the parent's jsii (node) kernel process.
    done = subprocess.run(
        [str(mutmut), "run", "--max-children", str(children)],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    (where / "mutmut.log").write_text(done.stdout)
    if done.returncode != 0:
        print(done.stdout[-3000:])
        raise SystemExit(f"mutmut failed on {module} (exit {done.returncode}); log: {where / 'mutmut.log'}")
    print(f"  {module}: mutmut ran in {time.monotonic() - start:.0f} s", flush=True)


def run_all(modules: list[str], children: int, lanes: int) -> None:
    """Run mutmut over ``modules`` in ``lanes`` parallel lanes, the longest modules first."""
    start = time.monotonic()
    ordered = sorted(modules, key=lambda m: -_COST.get(m, 1))
    with ThreadPoolExecutor(max_workers=max(1, lanes)) as pool:
        # list(): wait for every module, and re-raise the first failure.
        list(pool.map(lambda module: _run(module, children), ordered))
    print(f"  all {len(modules)} module(s): {time.monotonic() - start:.0f} s in {max(1, lanes)} lane(s)", flush=True)


def _diff(module: str, name: str) -> str:
    """The changed lines of one mutant (``mutmut show``), in the module's staging copy."""
    where = STAGING / module.replace("/", "_").removesuffix(".py")
    shown = subprocess.run(
        [str(Path(sys.executable).with_name("mutmut")), "show", name], cwd=where, capture_output=True, text=True
    ).stdout
    return "\n".join(
        line for line in shown.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def report(modules: list[str], diffs: bool = False) -> bool:
    """Print the score per module and every survivor; True when every module meets the goal."""
    ok = True
    total_killed = total = 0
    print(f"{'module':24} {'mutants':>8} {'killed':>7} {'score':>7}")
    survivors: list[tuple[str, str, str]] = []
    for module in modules:
        where = STAGING / module.replace("/", "_").removesuffix(".py")
        try:
            results = _results(where, module)
        except FileNotFoundError:
            print(f"{module:24} {'not run':>8}")
            ok = False
            continue
        killed = sum(status in _KILLED for status in results.values())
        score = killed / len(results) if results else 1.0
        total_killed += killed
        total += len(results)
        print(f"{module:24} {len(results):8} {killed:7} {score:7.1%}")
        ok &= score >= GOAL
        survivors += [(module, name, status) for name, status in sorted(results.items()) if status not in _KILLED]
    if total:
        print(f"{'all':24} {total:8} {total_killed:7} {total_killed / total:7.1%}")
    unexpected = [n for _, n, _ in survivors if n not in EXPECTED_SURVIVORS]
    if survivors:
        print("\nsurvivors (equivalent or harmless ones are listed in docs/testing.md):")
        for module, name, status in survivors:
            print(f"  {'  ' if name in EXPECTED_SURVIVORS else '! '}{name}: {status}")
            if diffs:
                print("      " + _diff(module, name).replace("\n", "\n      "))
    if unexpected:
        print(f"\n{len(unexpected)} survivor(s) not in EXPECTED_SURVIVORS (marked !): kill them or document them.")
        ok = False
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"default: all of {', '.join(MODULES)}")
    parser.add_argument("--report", action="store_true", help="only print the last run's score")
    parser.add_argument("--diffs", action="store_true", help="show each survivor's change")
    parser.add_argument("--max-children", type=int, default=1, help="mutants at once within a module: keep 1 (one jsii kernel)")
    parser.add_argument("--lanes", type=int, default=2, help="modules at once, each its own mutmut process (default 2)")
    args = parser.parse_args(argv)
    modules = args.modules or list(MODULES)
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        parser.error(f"not in MODULES: {', '.join(unknown)}")
    if not args.report:
        run_all(modules, args.max_children, args.lanes)
    return 0 if report(modules, args.diffs) else 1


if __name__ == "__main__":
    sys.exit(main())
