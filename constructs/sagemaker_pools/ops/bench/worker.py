"""A benchmark worker process: its own interpreter, client and connection pool.

Threads in one Python process share one interpreter lock: when many responses arrive at once,
each waits for the lock before it can stop its clock, and the wait shows up as latency. The
runner therefore spreads the in-flight requests over several processes, each with a connection
pool as large as its thread count, and keeps every per-request figure (no sampling).

Protocol over the pipe: the worker sends ``("ready", http)`` once its client exists (``http``:
the way it sends InvokeEndpoint, ``"lean"`` or ``"boto3"``), waits for the
runner's ``go`` event, runs, and sends ``("done", records)`` or ``("error", message)``.

Signals: a worker ignores SIGINT, SIGTERM and SIGHUP (a Ctrl-C reaches the whole process group;
the runner decides when to stop, through the ``stop`` event), and a watchdog thread ends the
worker at once when the runner's process is gone, however it ended (even SIGKILL): no worker
ever outlives the command.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import multiprocessing
import multiprocessing.connection
import os
import random
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from .bodies import normal_tokens
from .conversation import follow_up
from .invoke import Invoker, Record, make_client
from .options import BenchOptions, Connection
from .stats import PROGRESS_BUCKETS, progress_bucket
from .tokens import response_text, stream_text

__all__ = ["WorkerPlan", "Shared", "worker_main", "Schedule", "RAMP_UP_S", "IGNORED_SIGNALS"]

#: Signals a worker ignores: the runner stops it through the ``stop`` event.
IGNORED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

#: Closed loop: the threads start one after another over this long (at most the warm-up).
RAMP_UP_S = 1.0


@dataclasses.dataclass(frozen=True)
class WorkerPlan:
    """What one worker runs: its index among ``workers`` processes, and the run's options."""

    index: int
    workers: int
    options: BenchOptions
    connection: Connection


@dataclasses.dataclass
class Shared:
    """Objects shared with the runner (multiprocessing primitives).

    Attributes:
        go: set by the runner once every worker is ready and ``times`` is filled in.
        stop: set by the runner to end the run early (Ctrl-C).
        times: ``[warm-up start, measured start, measured end]`` in ``perf_counter`` seconds
            (the end is +inf for a run bounded by ``--requests`` only).
        tickets: measured requests started so far (for ``--requests``).
        counters: per worker ``[done, errors, latency sum]`` of measured requests (progress).
        buckets: per worker, counts of measured latencies in :data:`~.stats.PROGRESS_BUCKETS`
            log-spaced buckets (the running p99 of the progress line).
    """

    go: Any
    stop: Any
    times: Any
    tickets: Any
    counters: Any
    buckets: Any


class Schedule:
    """When this worker's requests start: a closed loop, or this worker's share of an open loop."""

    def __init__(self, plan: WorkerPlan, shared: Shared) -> None:
        options = plan.options
        self.warm_start, self.start, self.end = (float(t) for t in shared.times[:3])
        self.limit = options.requests
        self.tickets = shared.tickets
        self._lock = threading.Lock()
        self._rng = random.Random(f"{options.seed}-{plan.index}")
        self._next = self.warm_start
        self._k = itertools.count()
        self._index = plan.index
        self._workers = plan.workers
        self._rate = options.rate
        self._shape = options.burstiness if options.arrival == "gamma" else (1.0 if options.arrival == "poisson" else None)

    def take_ticket(self) -> bool:
        """Claim one measured request; False once ``--requests`` have been claimed."""
        if self.limit is None:
            return True
        with self.tickets.get_lock():
            if self.tickets.value >= self.limit:
                return False
            self.tickets.value += 1
            return True

    def next_replayed(self) -> int:
        """``--replay``: the next captured request of this worker (thread-safe; ascending, so are their times)."""
        with self._lock:
            return next(self._k) * self._workers + self._index

    def next_slot(self) -> float:
        """Open loop: the next scheduled start time of this worker (thread-safe)."""
        assert self._rate is not None
        with self._lock:
            if self._shape is not None:
                # Gamma inter-arrival times with shape k and mean 1/rate (k = 1: Poisson arrivals;
                # k < 1 burstier, k > 1 more even), as vLLM's --burstiness. Each of the W workers
                # runs its own process at rate/W: their superposition keeps the total rate.
                rate = self._rate / self._workers
                self._next += self._rng.gammavariate(self._shape, 1.0 / (rate * self._shape))
                return self._next
            k = next(self._k)
            return self.warm_start + (k * self._workers + self._index) / self._rate


class _Bodies:
    """Picks request bodies: in turn across all workers, or at random."""

    def __init__(self, plan: WorkerPlan) -> None:
        self._n = len(plan.options.bodies)
        self._sample = plan.options.sample
        self._rng = random.Random(f"bodies-{plan.options.seed}-{plan.index}")
        self._count = itertools.count(plan.index, plan.workers)
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            return self._rng.randrange(self._n) if self._sample else next(self._count) % self._n


class _Sink:
    """Collects measured records and keeps the progress counters current."""

    def __init__(self, counters: Any, buckets: Any, index: int) -> None:
        self.records: list[Record] = []
        self._lock = threading.Lock()
        self._counters = counters
        self._base = index * 3
        self._buckets = buckets
        self._bucket_base = index * PROGRESS_BUCKETS

    def add(self, record: Record) -> None:
        with self._lock:
            self.records.append(record)
            self._counters[self._base] += 1
            if not record.ok:
                self._counters[self._base + 1] += 1
            else:
                self._buckets[self._bucket_base + progress_bucket(record.latency)] += 1
            self._counters[self._base + 2] += record.latency


def _sleep_until(deadline: float) -> None:
    delay = deadline - time.perf_counter()
    if delay > 0:
        time.sleep(delay)


def _closed_loop(invoker: Invoker, schedule: Schedule, bodies: _Bodies, sink: _Sink, stop: Any, offset: float) -> None:
    _sleep_until(schedule.warm_start + offset)
    while not stop.is_set():
        now = time.perf_counter()
        if now >= schedule.end:
            return
        measured = now >= schedule.start
        if measured and not schedule.take_ticket():
            return
        record = invoker.call(bodies.next())
        if measured:
            sink.add(record)


def _conversations(invoker: Invoker, schedule: Schedule, bodies: _Bodies, sink: _Sink, stop: Any, offset: float) -> None:
    """A closed loop of conversations: each turn is sent once the previous one was answered, with its history."""
    options = invoker.options
    rng = random.Random(f"turns-{options.seed}-{offset}")
    _sleep_until(schedule.warm_start + offset)
    while not stop.is_set():
        turns = normal_tokens(rng, options.turns, options.turns_stddev)
        previous: bytes | None = None
        answer = ""
        for turn in range(1, turns + 1):
            now = time.perf_counter()
            if stop.is_set() or now >= schedule.end:
                return
            measured = now >= schedule.start
            if measured and not schedule.take_ticket():
                return
            index = bodies.next()
            built = None if previous is None else follow_up(previous, answer, options.bodies[index])
            record = invoker.call(index, built)
            record.turn = turn
            response = record.response
            if not invoker.keep_responses:
                record.response = None  # read once for the next turn, not kept
            if measured:
                sink.add(record)
            if not record.ok or response is None:
                break  # a conversation whose turn failed has no answer to go on with
            answer = stream_text([response]) if options.stream else response_text(response)
            previous = built if built is not None else options.bodies[index]


def _open_loop(invoker: Invoker, schedule: Schedule, bodies: _Bodies, sink: _Sink, stop: Any, offset: float) -> None:
    """Requests leave on a schedule: ``--rate``'s arrivals, or ``--replay``'s captured times
    (captured request ``k`` at ``offsets[k]`` after the start; this worker takes every W-th ``k``)."""
    replayed = invoker.options.replay_offsets
    while not stop.is_set():
        k = None
        if replayed is None:
            slot = schedule.next_slot()
        else:
            k = schedule.next_replayed()
            if k >= len(replayed):
                return
            slot = schedule.warm_start + replayed[k]
        if slot >= schedule.end:
            return
        measured = slot >= schedule.start
        if measured and not schedule.take_ticket():
            return
        _sleep_until(slot)
        lag = time.perf_counter() - slot
        record = invoker.call(bodies.next() if k is None else k)
        record.lag = lag
        if measured:
            sink.add(record)


def run_threads(plan: WorkerPlan, shared: Shared, invoker: Invoker) -> list[Record]:
    """Run this worker's threads to the end of the run; return its measured records."""
    schedule = Schedule(plan, shared)
    bodies = _Bodies(plan)
    sink = _Sink(shared.counters, shared.buckets, plan.index)
    options = plan.options
    loop: Callable[..., None]
    if options.open_loop:
        loop = _open_loop
    else:
        loop = _conversations if options.turns > 1 or options.turns_stddev else _closed_loop
    # Closed loop: ramp up, one thread after another over the first second of the warm-up, so
    # that the threads do not move in lockstep (all sending, then all parsing, at once).
    ramp = min(options.warmup_s, RAMP_UP_S)
    threads = [
        threading.Thread(
            target=loop,
            args=(invoker, schedule, bodies, sink, shared.stop, ramp * (plan.index + k * plan.workers) / options.concurrency),
            daemon=True,
        )
        for k in range(options.threads_of(plan.index))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sink.records


def _exit_with_parent() -> None:
    """End this process at once when the runner's process has gone (however it ended)."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)  # nobody is left to report to; no cleanup, no traceback

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _send(conn: Any, message: tuple[Any, ...]) -> None:
    try:
        conn.send(message)
    except OSError:  # the runner is gone: nothing to report to
        os._exit(0)


def worker_main(plan: WorkerPlan, shared: Shared, conn: Any) -> None:
    """Process entry point (see the module docstring for the protocol)."""
    for signum in IGNORED_SIGNALS:  # the runner decides when to stop
        signal.signal(signum, signal.SIG_IGN)
    # The runner blocks these signals while it starts the workers: none can arrive before the
    # lines above. Unblock them now that they are ignored.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, IGNORED_SIGNALS)
    _exit_with_parent()
    try:
        client = make_client(plan.connection, plan.options, plan.options.threads_of(plan.index))
        invoker = Invoker(client, plan.options)
        _send(conn, ("ready", invoker.http))
        if not shared.go.wait(timeout=600):
            return
        if shared.stop.is_set():
            _send(conn, ("done", []))
            return
        # Move everything allocated so far out of the collector's sight: full collections
        # then only scan what the run allocates, which keeps their pauses out of the tail.
        gc.collect()
        gc.freeze()
        records = run_threads(plan, shared, invoker)
        _send(conn, ("done", records))
    except Exception as exc:  # reported by the runner as one line
        _send(conn, ("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()
