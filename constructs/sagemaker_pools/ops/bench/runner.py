"""Start the worker processes, show live progress, collect every record.

Workers come from a ``forkserver`` (``spawn`` where there is none): a clean single-threaded
process that has already imported boto3 forks each worker, so starting one is cheap and no
thread of the caller (a progress display, a test server) is copied into it.

Signals: while it runs, the runner (in the main thread) turns SIGINT, SIGTERM and SIGHUP into
an orderly stop: it sets the workers' ``stop`` event, collects what they measured and returns
it marked interrupted, with the signal's number. A second signal gives up waiting for the
requests in flight. While it starts the workers these signals are blocked (and delivered right
after), so that no worker can receive one before it has set itself to ignore them: a Ctrl-C in
the first half second ends the run like any other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import multiprocessing
import multiprocessing.connection
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import OpsError
from .invoke import Record
from .options import BenchOptions, Connection
from .stats import PROGRESS_BUCKETS, bucket_percentile
from .worker import IGNORED_SIGNALS, Shared, WorkerPlan, worker_main

__all__ = ["RunResult", "Progress", "run_bench"]

_START_DELAY_S = 0.05
_READY_TIMEOUT_S = 120.0


@dataclasses.dataclass(frozen=True)
class Progress:
    """A live snapshot of the measured phase.

    Attributes:
        elapsed_s: since the warm-up started.
        warming_up: still in the warm-up.
        done / errors: measured requests completed / failed so far.
        mean_latency_s: their mean latency (None before the first).
        fraction: how much of the measured phase is done (0-1: time, or ``--requests``).
        eta_s: seconds left, estimated (None when unknown).
        rate_per_s: completions per second since the previous snapshot.
        p99_s: running p99 latency of the successful requests (bucketed: at most 5 % high).
        stopping: a signal asked the run to stop; waiting for the requests in flight.
    """

    elapsed_s: float
    warming_up: bool
    done: int
    errors: int
    mean_latency_s: float | None
    fraction: float = 0.0
    eta_s: float | None = None
    rate_per_s: float | None = None
    p99_s: float | None = None
    stopping: bool = False


@dataclasses.dataclass(frozen=True)
class RunResult:
    """Every measured record, and when the measured phase started and ended (``perf_counter``).

    ``http`` is how the workers sent InvokeEndpoint (``"lean"`` or ``"boto3"``; None when no
    worker got ready).
    """

    records: list[Record]
    start: float
    end: float
    interrupted: bool
    signal: int | None = None
    http: str | None = None

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


class _Signals:
    """SIGINT, SIGTERM and SIGHUP as a stop request while the run lasts (main thread only)."""

    def __init__(self, stop: Any) -> None:
        self.received: int | None = None
        self.count = 0
        self.cleaning_up = False
        self._stop = stop
        self._previous: dict[int, Any] = {}
        self.active = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> _Signals:
        if self.active:
            for signum in IGNORED_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame: object) -> None:
        self.count += 1
        if self.received is None:
            self.received = signum
        self._stop.set()
        if self.count > 1 and not self.cleaning_up:
            raise KeyboardInterrupt  # a second signal: stop waiting for the requests in flight

    @contextlib.contextmanager
    def blocked(self) -> Iterator[None]:
        """Hold these signals back (delivered when the block ends)."""
        if not self.active:
            yield
            return
        signal.pthread_sigmask(signal.SIG_BLOCK, IGNORED_SIGNALS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, IGNORED_SIGNALS)


def run_bench(
    options: BenchOptions,
    connection: Connection,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    progress_interval_s: float = 0.5,
) -> RunResult:
    """Run the benchmark; a signal (Ctrl-C, SIGTERM, SIGHUP) ends it early and returns what was measured.

    Every worker process has ended when this returns or raises.
    """
    options.validate()
    ctx = _context()
    workers = options.processes
    shared = Shared(
        go=ctx.Event(),
        stop=ctx.Event(),
        times=ctx.RawArray("d", 3),
        tickets=ctx.Value("q", 0),
        counters=ctx.RawArray("d", 3 * workers),
        buckets=ctx.RawArray("q", PROGRESS_BUCKETS * workers),
    )
    pipes: list[Any] = []
    processes: list[Any] = []
    with _Signals(shared.stop) as signals:
        try:
            with signals.blocked():
                for index in range(workers):
                    parent_end, child_end = ctx.Pipe(duplex=False)
                    plan = WorkerPlan(index=index, workers=workers, options=options, connection=connection)
                    process = ctx.Process(target=worker_main, args=(plan, shared, child_end), daemon=True, name=f"bench-worker-{index}")
                    with _without_main_module():
                        process.start()
                    child_end.close()
                    pipes.append(parent_end)
                    processes.append(process)
            return _drive(options, shared, pipes, processes, on_progress, progress_interval_s, signals)
        finally:
            signals.cleaning_up = True  # a further signal must not cut the clean-up short
            _stop_all(shared, processes)


def _stop_all(shared: Shared, processes: list[Any]) -> None:
    """Stop every worker: ask, wait a little, then terminate and kill what is left."""
    shared.stop.set()
    shared.go.set()
    deadline = time.monotonic() + 5
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=2)
        if process.is_alive():
            process.kill()
            process.join(timeout=2)


def _drive(
    options: BenchOptions,
    shared: Shared,
    pipes: list[Any],
    processes: list[Any],
    on_progress: Callable[[Progress], None] | None,
    interval: float,
    signals: _Signals,
) -> RunResult:
    http: set[str] = set()
    if not _await_ready(pipes, processes, shared, http):
        now = time.perf_counter()
        return RunResult(records=[], start=now, end=now, interrupted=True, signal=signals.received)
    warm_start = time.perf_counter() + _START_DELAY_S
    start = warm_start + options.warmup_s
    end = start + options.duration_s if options.duration_s is not None else math.inf
    shared.times[:] = [warm_start, start, end]
    shared.go.set()
    results: dict[int, list[Record]] = {}
    tracker = _ProgressTracker(options, shared, warm_start, start)
    while len(results) < len(pipes):
        ready = multiprocessing.connection.wait([p for i, p in enumerate(pipes) if i not in results], timeout=interval)
        for pipe in ready:
            index = pipes.index(pipe)
            results[index] = _receive(pipe, processes[index])
        if on_progress is not None and len(results) < len(pipes):
            on_progress(tracker.snapshot(stopping=shared.stop.is_set()))
    records = [r for index in sorted(results) for r in results[index]]
    last = max((r.sent + r.latency for r in records), default=start)
    return RunResult(
        records=records, start=start, end=last, interrupted=signals.received is not None, signal=signals.received, http="/".join(sorted(http))
    )


def _await_ready(pipes: list[Any], processes: list[Any], shared: Shared, http: set[str]) -> bool:
    """Wait until every worker is ready (adding how each sends to ``http``); False when a signal asked to stop first."""
    waiting = set(range(len(pipes)))
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while waiting:
        if shared.stop.is_set():
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise OpsError(f"{len(waiting)} benchmark worker process(es) did not start within {_READY_TIMEOUT_S:.0f} s")
        for pipe in multiprocessing.connection.wait([pipes[i] for i in waiting], timeout=min(remaining, 1.0)):
            index = pipes.index(pipe)
            message = _message(pipe, processes[index])
            if message[0] == "error":
                raise OpsError(f"a benchmark worker failed to start: {message[1]}")
            http.add(str(message[1]))
            waiting.discard(index)
    return not shared.stop.is_set()


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


class _ProgressTracker:
    """Progress snapshots from the shared counters (rate over the last interval, running p99)."""

    def __init__(self, options: BenchOptions, shared: Shared, warm_start: float, start: float) -> None:
        self._options = options
        self._shared = shared
        self._warm_start = warm_start
        self._start = start
        self._last: tuple[float, int] | None = None

    def snapshot(self, *, stopping: bool = False) -> Progress:
        shared, options = self._shared, self._options
        counters = list(shared.counters)
        done = int(sum(counters[0::3]))
        errors = int(sum(counters[1::3]))
        latency_sum = sum(counters[2::3])
        buckets = list(shared.buckets)
        summed = [sum(buckets[i::PROGRESS_BUCKETS]) for i in range(PROGRESS_BUCKETS)] if len(buckets) > PROGRESS_BUCKETS else buckets
        now = time.perf_counter()
        measured_s = max(0.0, now - self._start)
        fractions = []
        if options.duration_s is not None:
            fractions.append(measured_s / options.duration_s)
        if options.requests is not None:
            fractions.append(done / options.requests)
        if options.replay_offsets and options.duration_s is None:  # a replay lasts as long as its capture
            fractions.append(measured_s / max(options.replay_offsets[-1] - options.warmup_s, 1e-9))
        fraction = min(1.0, max(fractions)) if fractions else 0.0
        eta = (self._start - now) + (options.duration_s or 0.0) if now < self._start else None
        if eta is None and fraction > 0:
            eta = measured_s * (1 - fraction) / fraction
        rate = None
        if self._last is not None and now > self._last[0]:
            rate = (done - self._last[1]) / (now - self._last[0])
        self._last = (now, done)
        return Progress(
            elapsed_s=now - self._warm_start,
            warming_up=now < self._start,
            done=done,
            errors=errors,
            mean_latency_s=latency_sum / done if done else None,
            fraction=fraction,
            eta_s=eta,
            rate_per_s=rate,
            p99_s=bucket_percentile(summed, 99),
            stopping=stopping,
        )
