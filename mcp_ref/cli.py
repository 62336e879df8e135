"""The ``mcp-ref`` command.

Also run as ``python -m mcp_ref``. ``mcp-ref --version`` prints the version
and the protocol revision it implements.

``mcp-ref demo``: start the echo example as a subprocess over stdio, talk to it
as a client and print each step as the revision spoken has it (2026-07-28:
server/discover, tools/list, tools/call; with ``--protocol 2025-11-25`` or an
older one: initialize, ping, tools/list, tools/call).

``mcp-ref check``, ``judge``: cross-check another implementation (see
:mod:`mcp_ref.crosscheck.cli`).
"""

import argparse
import os
import signal
import sys
from collections.abc import Sequence

import trio

__all__ = ["main"]


async def _demo(out: "TextSink", protocol: str | None = None) -> None:
    """What the client did, one line per step, as the revision it spoke has it: a 2026-07-28
    client asks ``server/discover`` and sends each request on its own (no initialize, no
    ping); a 2025 client initializes a session and pings it."""
    from .schema._base import MODERN_REVISIONS
    from .session.client import open_stdio_client

    out(f"launching: {sys.executable} -m mcp_ref.examples.echo")
    async with open_stdio_client(sys.executable, ["-m", "mcp_ref.examples.echo"], protocol_version=protocol) as client:
        info = client.server_info
        modern = client.protocol_version in MODERN_REVISIONS
        if modern:
            # the revision travels with every request: there is no session to set up
            out(f"server/discover: {info.name} {info.version}, protocol {client.protocol_version}")
            out("no initialize and no ping in this revision: each request carries its version in _meta")
        else:
            out(f"initialize: {info.name} {info.version}, protocol {client.protocol_version}")
        if client.instructions:
            out(f"instructions: {client.instructions}")
        if not modern:
            with trio.fail_after(10):
                await client.ping()
            out("ping: ok")
        tools = await client.list_all_tools()
        for tool in tools:
            out(f"tool: {tool.name} -- {tool.description}")
        result = await client.call_tool("echo", {"text": "hello from mcp_ref"})
        for block in result.content:
            out(f"tools/call echo -> {getattr(block, 'text', block)!s}")
    if modern:
        out("client closed; server process shut down")
    else:
        out("session closed; server process shut down")


class TextSink:
    def __call__(self, line: str) -> None:
        print(line, flush=True)


def _run_demo(protocol: str | None, out: "TextSink | None" = None) -> int:
    """``mcp-ref demo``'s exit status. A reader of stdout that goes away (``mcp-ref demo | head``)
    stops it quietly, as a Unix tool dies of SIGPIPE: no traceback, status 128 + SIGPIPE."""
    try:
        trio.run(_demo, out or TextSink(), protocol)
    except BaseException as e:
        if not _only_broken_pipes(e):
            raise
        _detach_stdout()
        return 128 + getattr(signal, "SIGPIPE", 13)
    return 0


def _only_broken_pipes(e: BaseException) -> bool:
    """A BrokenPipeError, or a group (the client's nursery) of nothing else."""
    if isinstance(e, BaseExceptionGroup):
        return all(_only_broken_pipes(inner) for inner in e.exceptions)
    return isinstance(e, BrokenPipeError)


def _detach_stdout() -> None:
    """Point stdout at /dev/null: the interpreter's last flush at exit would fail again and print
    'Exception ignored ... BrokenPipeError' (the Python documentation's advice for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    from . import LATEST_PROTOCOL_VERSION, __version__
    from .schema._base import REVISIONS as SUPPORTED_VERSIONS

    parser = argparse.ArgumentParser(prog="mcp-ref", description="mcp_ref: a reference implementation of MCP")
    parser.add_argument("--version", action="version", version=f"mcp-ref {__version__} (MCP {LATEST_PROTOCOL_VERSION})")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a client against the echo example server over stdio")
    demo.add_argument(
        "--protocol",
        choices=SUPPORTED_VERSIONS,
        help="the revision to speak (default: the newest the server offers, found by server/discover)",
    )
    from .crosscheck import cli as crosscheck

    crosscheck.add_commands(sub)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _run_demo(args.protocol)
    if args.command in crosscheck.COMMANDS:
        return crosscheck.run(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
