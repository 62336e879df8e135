"""A minimal stdio MCP server with one tool.

Run it under any MCP client: ``python -m mcp_ref.examples.echo``.
"""

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from mcp_ref import RequestContext, Server, ToolError

server = Server(
    "mcp_ref-echo",
    "0.1.0",
    title="mcp_ref echo server",
    instructions="One tool, `echo`, which returns the text it is given.",
)


@server.tool(
    description="Return the given text unchanged. Useful to check that a client and server can talk.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to send back."}},
        "required": ["text"],
    },
)
async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    text = arguments.get("text")
    if not isinstance(text, str):
        raise ToolError("`text` must be a string")
    return text


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_ref.examples.echo",
        description="A minimal MCP server on stdin/stdout, for an MCP client to launch (try `mcp-ref demo`).",
    )
    parser.parse_args(argv)
    if sys.stdin.isatty():
        # stdout carries only MCP messages; a person at a terminal gets the hint on stderr
        print("echo server: speaking MCP (JSON-RPC lines) on stdin/stdout; end with Ctrl-D", file=sys.stderr)
    server.run_stdio()


if __name__ == "__main__":
    main()
