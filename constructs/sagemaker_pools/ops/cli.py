"""The ``sagemaker-pools`` console script: argument parsing, dispatch and error reporting.

Every failure ends as one line on stderr (``sagemaker-pools: error: ...``) and a non-zero exit
code: 1 for a failure (AWS refused, not found, update failed), 2 for invalid arguments, 130 for
Ctrl-C. ``--debug`` adds the traceback.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from . import bench_cmd as bench_cmd
from . import gate_cmd as gate_cmd
from . import migrate_cmd as migrate_cmd
from . import recommend_cmd as recommend_cmd
from . import status as status
from .simulate import command as simulate_cmd
from .aws import DEFAULT_MAX_ATTEMPTS, AwsOptions, Clients
from .context import Context
from .errors import EXIT_INTERRUPTED, EXIT_USAGE, OpsError, explain

__all__ = ["main", "build_parser", "PROG"]

PROG = "sagemaker-pools"


class _Parser(argparse.ArgumentParser):
    """argparse, but an argument error is one line (argparse prints the usage, then the error)."""

    def error(self, message: str) -> NoReturn:
        raise OpsError(f"{message} (see: {self.prog} --help)", EXIT_USAGE)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cdk-sagemaker-pools")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    common = _Parser(add_help=False)
    aws = common.add_argument_group("AWS options")
    aws.add_argument("--region", help="AWS region (default: AWS_REGION or the profile's)")
    aws.add_argument("--profile", help="named profile from ~/.aws/config (default: AWS_PROFILE)")
    aws.add_argument("--endpoint-url", metavar="URL", help="call this API endpoint instead (VPC endpoint, local server)")
    aws.add_argument(
        "--max-attempts",
        type=_positive_int,
        default=DEFAULT_MAX_ATTEMPTS,
        metavar="N",
        help=f"attempts per API call, botocore standard retry mode (default: {DEFAULT_MAX_ATTEMPTS})",
    )
    aws.add_argument("--debug", action="store_true", help="print the traceback of a failure")

    parser = _Parser(
        prog=PROG,
        description="Operate SageMaker AI endpoints on capacity-aware instance pools (boto3 only).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    status.add_parser(subparsers, [common])
    migrate_cmd.add_parser(subparsers, [common])
    recommend_cmd.add_parser(subparsers, [common])
    bench_cmd.add_parser(subparsers, [common])
    simulate_cmd.add_parser(subparsers, [common])
    gate_cmd.add_parser(subparsers, [common])
    return parser


def main(argv: Sequence[str] | None = None, *, context: Context | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    ``context`` replaces the AWS clients, streams and clock (tests); by default they are built
    from the AWS options on the command line.
    """
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # after a subcommand: point to that subcommand's --help
            raise OpsError(f"unrecognized arguments: {' '.join(unknown)} (see: {PROG} {args.command} --help)", EXIT_USAGE)
    except SystemExit as exit_:  # --help, --version
        return int(exit_.code or 0)
    except KeyboardInterrupt:
        (context.err if context is not None else sys.stderr).write(f"\n{PROG}: interrupted\n")
        return EXIT_INTERRUPTED
    except OpsError as usage:  # an argument error
        stream = context.err if context is not None else sys.stderr
        stream.write(f"{PROG}: error: {usage.message}\n")
        return usage.exit_code
    options = AwsOptions(
        region=args.region, profile=args.profile, endpoint_url=args.endpoint_url, max_attempts=args.max_attempts
    )
    ctx = context or Context(clients=Clients(options), interactive=sys.stderr.isatty())
    try:
        return int(args.handler(args, ctx))
    except KeyboardInterrupt:
        ctx.err.write(f"\n{PROG}: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:  # every failure: one line, never a traceback (unless --debug)
        error = explain(exc, max_attempts=options.max_attempts)
        if args.debug:
            traceback.print_exc(file=ctx.err)
        ctx.err.write(f"{PROG}: error: {error.message}\n")
        ctx.err.flush()
        return error.exit_code

