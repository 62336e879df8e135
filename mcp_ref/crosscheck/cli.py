"""The cross-check commands of ``mcp-ref`` (judge; check, tap and fixture follow).

``mcp_ref.cli`` adds them with :func:`add_commands` and runs them with
:func:`run`. Exit status: 1 when a MUST is violated, 0 otherwise, 2 for a
usage error or a target that cannot be started or reached.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from .report import Report

__all__ = ["add_commands", "run", "COMMANDS"]

COMMANDS = ("judge",)
EXIT_USAGE = 2


class UsageError(Exception):
    """Exit status 2, with this message."""


def add_commands(sub: Any) -> None:
    judge = sub.add_parser(
        "judge",
        help="judge a recorded traffic log (JSON Lines of the tap, a JSON list, Claude Desktop or Inspector logs)",
        description="Judge recorded MCP traffic offline, both directions, and report.",
    )
    judge.add_argument("file", help="the traffic log ('-' for standard input)")
    judge.add_argument("--transport", choices=("stdio", "http"), help="how the traffic travelled (if known)")
    judge.add_argument(
        "--as",
        dest="perspective",
        choices=("client", "server"),
        default="client",
        help="whose 'sent' and 'received' the log speaks of (default: client)",
    )
    _output_options(judge)


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
    parser.add_argument("--junit", metavar="FILE", help="also write the report as JUnit XML to FILE")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")


def _emit(report: Report, args: argparse.Namespace, out: TextIO) -> int:
    if args.json:
        out.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(report.to_text())
    if args.junit:
        Path(args.junit).write_bytes(report.to_junit())
    return report.exit_status()


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one cross-check command; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        if args.command == "judge":
            return _judge(args, out)
    except UsageError as e:
        err.write(f"mcp-ref {args.command}: {e}\n")
        return EXIT_USAGE
    raise AssertionError(args.command)


def _judge(args: argparse.Namespace, out: TextIO) -> int:
    from .judge import judge_file

    try:
        report = judge_file(args.file, transport=args.transport, perspective=args.perspective)
    except OSError as e:
        raise UsageError(f"cannot read {args.file}: {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(str(e)) from None
    return _emit(report, args, out)
