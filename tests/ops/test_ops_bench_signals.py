"""Signals against a real ``sagemaker-pools bench`` process (local server on 127.0.0.1).

Each test starts the command as its own process, signals it, and asserts the exit code
(128 + the signal), the partial report, no traceback, and that no process the command started
(worker, forkserver, resource tracker) outlives it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sagemaker_pools.ops.bench.localserver import Behaviour, LocalRuntimeServer

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start(url: str, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "sagemaker_pools.ops", "bench", "llm", "--region", "us-east-1", "--endpoint-url", url, *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_until(condition: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def finish(process: subprocess.Popen[str], started: set[int]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    # the forkserver and resource tracker see the command's end a moment later
    assert wait_until(lambda: not any(alive(p) for p in started), 10), [p for p in started if alive(p)]
    return process.returncode, out, err


@pytest.fixture
def server() -> object:
    with LocalRuntimeServer(Behaviour(latency_ms=20)) as local:
        yield local


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_run_stops_every_worker_and_keeps_the_report(server: LocalRuntimeServer, signum: int, code: int) -> None:
    process = start(server.url, "--concurrency", "8", "--processes", "2", "--duration", "60", "--warmup", "0")
    assert wait_until(lambda: server.stats()["requests"] >= 50, 60), "the run did not start"
    workers = descendants(process.pid)
    assert len(workers) >= 2
    process.send_signal(signum)
    returncode, out, err = finish(process, workers)
    assert returncode == code, err
    assert "(interrupted)" in out and "requests: " in out
    assert f"interrupted by {signal.Signals(signum).name}" in err
    assert "Traceback" not in err and "Traceback" not in out
    served = server.stats()["requests"]
    time.sleep(0.5)
    assert server.stats()["requests"] == served  # nothing sends any more


def catches_sigint(pid: int) -> bool:
    """True once the process handles SIGINT (Python installs its handler as the interpreter starts)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
    return bool(caught & (1 << (signal.SIGINT - 1)))


@pytest.mark.parametrize("delay", [0.5, 1.0, 2.0])
def test_ctrl_c_during_start_up_is_quiet(server: LocalRuntimeServer, delay: float) -> None:
    # counted from the moment the interpreter handles SIGINT: while the command loads, while it
    # starts its workers, or as they begin. (In the first ~0.1 s Python is still importing the
    # sagemaker_pools package itself, before any of the command's code runs: a Ctrl-C there
    # ends in Python's own KeyboardInterrupt traceback.)
    process = start(server.url, "--concurrency", "8", "--processes", "2", "--duration", "60", "--warmup", "0")
    assert wait_until(lambda: catches_sigint(process.pid), 30)
    time.sleep(delay)
    started = descendants(process.pid)
    process.send_signal(signal.SIGINT)
    returncode, out, err = finish(process, started | descendants(process.pid))
    assert returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_workers_end_when_the_command_is_killed(server: LocalRuntimeServer) -> None:
    process = start(server.url, "--concurrency", "4", "--processes", "2", "--duration", "60", "--warmup", "0")
    assert wait_until(lambda: server.stats()["requests"] >= 20, 60), "the run did not start"
    workers = descendants(process.pid)
    process.kill()  # SIGKILL: no handler runs; the workers' watchdog must notice
    process.communicate(timeout=30)
    assert wait_until(lambda: not any(alive(p) for p in workers), 10), [p for p in workers if alive(p)]


def test_a_second_ctrl_c_stops_waiting_for_the_requests_in_flight() -> None:
    with LocalRuntimeServer(Behaviour(latency_ms=30_000)) as slow:
        process = start(slow.url, "--concurrency", "4", "--processes", "2", "--duration", "60", "--warmup", "0", "--timeout", "60")
        assert wait_until(lambda: slow.stats()["in_flight"] == 4, 60), "the run did not start"
        workers = descendants(process.pid)
        process.send_signal(signal.SIGINT)  # waits for the 4 requests in flight (30 s each)...
        time.sleep(0.5)
        assert process.poll() is None
        signalled = time.monotonic()
        process.send_signal(signal.SIGINT)  # ...until the second one
        returncode, _, err = finish(process, workers)
        assert time.monotonic() - signalled < 15
        assert returncode == 130, err
        assert "Traceback" not in err


def test_ctrl_c_ends_a_sweep_without_writing_the_capacity_file(server: LocalRuntimeServer, tmp_path: Path) -> None:
    capacity = tmp_path / "capacity.json"
    process = start(
        server.url, "--sweep", "1,2", "--slo", "p99=5s", "--duration", "60", "--warmup", "0",
        "--instance-type", "ml.g6e.48xlarge", "--capacity-file", str(capacity),
    )  # fmt: skip
    assert wait_until(lambda: server.stats()["requests"] >= 20, 60), "the run did not start"
    workers = descendants(process.pid)
    process.send_signal(signal.SIGINT)
    returncode, out, err = finish(process, workers)
    assert returncode == 130, err
    assert "Sweep of llm (ml.g6e.48xlarge)" in out and "(interrupted)" in out
    assert "concurrency 1: " in err and "concurrency 2: " not in err  # the second level never ran
    assert "Traceback" not in err
    assert not capacity.exists()
