"""The ``sagemaker-pools`` console script's entry point: a Ctrl-C while the command loads is quiet.

Loading the command (boto3, botocore's service models) takes a noticeable fraction of a second;
a Ctrl-C then would otherwise end in a ``KeyboardInterrupt`` traceback. Here it ends like any
other interruption: one line on stderr and exit code 130.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> int:
    """Load the command and run it on ``sys.argv[1:]``."""
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("\nsagemaker-pools: interrupted\n")
        return 130
    return run()
