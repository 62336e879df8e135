"""The ``mcp-ref`` command.

Also run as ``python -m mcp_ref``. ``mcp-ref --version`` prints the version
and the protocol revision it implements.

``mcp-ref demo``: start the echo example as a subprocess over stdio, talk to it
as a client (initialize, ping, tools/list, tools/call) and print the exchange.

``mcp-ref check``, ``judge``: cross-check another implementation (see
:mod:`mcp_ref.crosscheck.cli`).
"""

import argparse
import sys
from collections.abc import Sequence

import trio

__all__ = ["main"]


async def _demo(out: "TextSink") -> None:
    from .session.client import open_stdio_client

    out(f"launching: {sys.executable} -m mcp_ref.examples.echo")
    async with open_stdio_client(sys.executable, ["-m", "mcp_ref.examples.echo"]) as client:
        info = client.server_info
        out(f"initialized: {info.name} {info.version}, protocol {client.protocol_version}")
        if client.instructions:
            out(f"instructions: {client.instructions}")
        with trio.fail_after(10):
            await client.ping()
        out("ping: ok")
        tools = await client.list_all_tools()
        for tool in tools:
            out(f"tool: {tool.name} -- {tool.description}")
        result = await client.call_tool("echo", {"text": "hello from mcp_ref"})
        for block in result.content:
            out(f"tools/call echo -> {getattr(block, 'text', block)!s}")
    out("session closed; server process shut down")


class TextSink:
    def __call__(self, line: str) -> None:
        print(line, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    from . import LATEST_PROTOCOL_VERSION, __version__

    parser = argparse.ArgumentParser(prog="mcp-ref", description="mcp_ref: a reference implementation of MCP")
    parser.add_argument("--version", action="version", version=f"mcp-ref {__version__} (MCP {LATEST_PROTOCOL_VERSION})")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run a client against the echo example server over stdio")
    from .crosscheck import cli as crosscheck

    crosscheck.add_commands(sub)
    args = parser.parse_args(argv)
    if args.command == "demo":
        trio.run(_demo, TextSink())
        return 0
    if args.command in crosscheck.COMMANDS:
        return crosscheck.run(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
