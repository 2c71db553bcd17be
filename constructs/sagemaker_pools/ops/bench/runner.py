"""Start the worker processes, show live progress, collect every record.

Workers come from a ``forkserver`` (``spawn`` where there is none): a clean single-threaded
process that has already imported boto3 forks each worker, so starting one is cheap and no
thread of the caller (a progress display, a test server) is copied into it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import multiprocessing
import multiprocessing.connection
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import OpsError
from .invoke import Record
from .options import BenchOptions, Connection
from .worker import Shared, WorkerPlan, worker_main

__all__ = ["RunResult", "Progress", "run_bench"]

_START_DELAY_S = 0.05
_READY_TIMEOUT_S = 120.0


@dataclasses.dataclass(frozen=True)
class Progress:
    """A live snapshot: measured requests done and failed so far, and their mean latency."""

    elapsed_s: float
    warming_up: bool
    done: int
    errors: int
    mean_latency_s: float | None


@dataclasses.dataclass(frozen=True)
class RunResult:
    """Every measured record, and when the measured phase started and ended (``perf_counter``)."""

    records: list[Record]
    start: float
    end: float
    interrupted: bool

    @property
    def elapsed_s(self) -> float:
        """From the measured start to the last completion."""
        return max(self.end - self.start, 1e-9)


def _context() -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["sagemaker_pools.ops.bench.worker"])
        return ctx
    return multiprocessing.get_context("spawn")


@contextlib.contextmanager
def _without_main_module() -> Iterator[None]:
    """Hide ``__main__`` while starting workers, so that they do not re-import it.

    multiprocessing re-runs the parent's main script in a spawned child. The workers need
    nothing from it; re-running it fails for ``python -c`` or stdin, and re-runs an unguarded
    script that called the command.
    """
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def run_bench(
    options: BenchOptions,
    connection: Connection,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    progress_interval_s: float = 0.5,
) -> RunResult:
    """Run the benchmark; Ctrl-C ends it early and returns what was measured."""
    options.validate()
    ctx = _context()
    workers = options.processes
    shared = Shared(
        go=ctx.Event(),
        stop=ctx.Event(),
        times=ctx.RawArray("d", 3),
        tickets=ctx.Value("q", 0),
        counters=ctx.RawArray("d", 3 * workers),
    )
    pipes = []
    processes = []
    for index in range(workers):
        parent_end, child_end = ctx.Pipe(duplex=False)
        plan = WorkerPlan(index=index, workers=workers, options=options, connection=connection)
        process = ctx.Process(target=worker_main, args=(plan, shared, child_end), daemon=True, name=f"bench-worker-{index}")
        with _without_main_module():
            process.start()
        child_end.close()
        pipes.append(parent_end)
        processes.append(process)
    try:
        return _drive(options, shared, pipes, processes, on_progress, progress_interval_s)
    finally:
        shared.stop.set()
        shared.go.set()
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)


def _drive(
    options: BenchOptions,
    shared: Shared,
    pipes: list[Any],
    processes: list[Any],
    on_progress: Callable[[Progress], None] | None,
    interval: float,
) -> RunResult:
    _await_ready(pipes, processes)
    warm_start = time.perf_counter() + _START_DELAY_S
    start = warm_start + options.warmup_s
    end = start + options.duration_s if options.duration_s is not None else math.inf
    shared.times[:] = [warm_start, start, end]
    shared.go.set()
    results: dict[int, list[Record]] = {}
    interrupted = False
    while len(results) < len(pipes):
        try:
            ready = multiprocessing.connection.wait([p for i, p in enumerate(pipes) if i not in results], timeout=interval)
            for pipe in ready:
                index = pipes.index(pipe)
                results[index] = _receive(pipe, processes[index])
            if on_progress is not None and len(results) < len(pipes):
                on_progress(_snapshot(shared, len(pipes), warm_start, start))
        except KeyboardInterrupt:
            if interrupted:
                raise
            interrupted = True
            shared.stop.set()
    records = [r for index in sorted(results) for r in results[index]]
    last = max((r.sent + r.latency for r in records), default=start)
    return RunResult(records=records, start=start, end=last, interrupted=interrupted)


def _await_ready(pipes: list[Any], processes: list[Any]) -> None:
    waiting = set(range(len(pipes)))
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while waiting:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise OpsError(f"{len(waiting)} benchmark worker process(es) did not start within {_READY_TIMEOUT_S:.0f} s")
        for pipe in multiprocessing.connection.wait([pipes[i] for i in waiting], timeout=min(remaining, 1.0)):
            index = pipes.index(pipe)
            message = _message(pipe, processes[index])
            if message[0] == "error":
                raise OpsError(f"a benchmark worker failed to start: {message[1]}")
            waiting.discard(index)


def _message(pipe: Any, process: Any) -> tuple[Any, ...]:
    try:
        return tuple(pipe.recv())
    except EOFError:
        process.join(timeout=5)
        raise OpsError(f"benchmark worker {process.name} exited unexpectedly (exit code {process.exitcode})") from None


def _receive(pipe: Any, process: Any) -> list[Record]:
    message = _message(pipe, process)
    if message[0] == "error":
        raise OpsError(f"a benchmark worker failed: {message[1]}")
    return list(message[1])


def _snapshot(shared: Shared, workers: int, warm_start: float, start: float) -> Progress:
    counters = list(shared.counters)
    done = int(sum(counters[0::3]))
    errors = int(sum(counters[1::3]))
    latency_sum = sum(counters[2::3])
    now = time.perf_counter()
    return Progress(
        elapsed_s=now - warm_start,
        warming_up=now < start,
        done=done,
        errors=errors,
        mean_latency_s=latency_sum / done if done else None,
    )
