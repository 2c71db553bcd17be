"""The ``sagemaker-pools`` console script's entry point: a signal ends the command with its exit code.

Loading the command (boto3, botocore's service models) takes a noticeable fraction of a second;
a Ctrl-C then would otherwise end in a ``KeyboardInterrupt`` traceback. Here it ends like any
other interruption: one line on stderr and exit code 130.

A command that a signal stopped (exit code 128 + the signal) ends with :func:`os._exit` once
its output is flushed. Python marks an interpreter whose ``KeyboardInterrupt`` went through code
run by ``exec`` of a string (``dataclasses`` builds methods that way while modules load) to end
itself by SIGINT at exit, even when the exception was caught later: the command would report
"killed by SIGINT" instead of its exit code. Everything the command started has been stopped by
then (the benchmark's workers end before ``run_bench`` returns).
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]

#: Exit codes from here up mean "stopped by a signal" (128 + its number).
_SIGNALLED = 128


def main() -> int:
    """Load the command and run it on ``sys.argv[1:]``."""
    try:
        from .cli import main as run

        code = run()
    except KeyboardInterrupt:
        sys.stderr.write("\nsagemaker-pools: interrupted\n")
        code = 130
    if code > _SIGNALLED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
