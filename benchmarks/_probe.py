"""Run a CDK app script as ``python <script>`` would, then record peak memory of it and its Node children.

``python benchmarks/_probe.py <script> [args...]``: runs ``<script>`` as ``__main__`` (sys.argv and
sys.path[0] as Python sets them), then, before the interpreter exits and jsii stops its Node
process, writes ``{"python_hwm_kb", "node_hwm_kb", "node_processes"}`` to the file named by
``BENCH_PROBE_OUT``: the high-water RSS (``VmHWM``) of this process and of every descendant
(jsii's Node runtime). Reading ``/proc`` once at the end costs nothing during the run, unlike sampling.
"""

from __future__ import annotations

import json
import os
import runpy
import sys


def _hwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def main() -> None:
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    target = os.environ.get("BENCH_PROBE_OUT")
    if target:
        kids = _descendants(os.getpid())
        with open(target, "w") as f:
            json.dump(
                {
                    "python_hwm_kb": _hwm_kb(os.getpid()),
                    "node_hwm_kb": sum(_hwm_kb(p) for p in kids),
                    "node_processes": len(kids),
                },
                f,
            )


if __name__ == "__main__":
    main()
