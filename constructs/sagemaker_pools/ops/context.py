"""What a subcommand needs from its surroundings: AWS clients, output streams and time.

Everything a test wants to replace (Stubber-wrapped clients, captured output, an instant
``sleep``, a fixed clock) comes in through :class:`Context`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
import time
from collections.abc import Callable
from typing import TextIO

from .aws import Clients

__all__ = ["Context"]


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@dataclasses.dataclass
class Context:
    """The environment of one command run.

    Attributes:
        clients: makes the boto3 clients.
        out: where results go (stdout).
        err: where progress and errors go (stderr).
        sleep: waits between polls (``time.sleep``).
        monotonic: a monotonic clock in seconds, for elapsed times.
        now: the current UTC time, for generated names.
        interactive: True when ``err`` is a terminal: show live progress lines.
    """

    clients: Clients
    out: TextIO = dataclasses.field(default_factory=lambda: sys.stdout)
    err: TextIO = dataclasses.field(default_factory=lambda: sys.stderr)
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic
    now: Callable[[], dt.datetime] = _utcnow
    interactive: bool = False

    def print(self, text: str = "") -> None:
        """Write one line of results to ``out``."""
        self.out.write(text + "\n")
        self.out.flush()

    def progress(self, text: str) -> None:
        """Show a progress line on ``err``: rewritten in place on a terminal, else one line each."""
        if self.interactive:
            self.err.write("\r\x1b[2K" + text)
        else:
            self.err.write(text + "\n")
        self.err.flush()

    def end_progress(self) -> None:
        """Finish an in-place progress line."""
        if self.interactive:
            self.err.write("\n")
            self.err.flush()
