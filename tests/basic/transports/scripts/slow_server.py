"""A stdio Server with a slow tool, a hanging one and a big one: ``slow_server.py EOF_GRACE``.

``slow`` returns after ``arguments["seconds"]``; ``hang`` never returns (only
cancellation ends it, and it then writes "hang cancelled" to stderr); ``big``
returns ``arguments["size"]`` characters.
Serves with ``Server.run_stdio(eof_grace=EOF_GRACE)``.
"""

import sys
from typing import Any

import trio

from mcp_ref.session import RequestContext, Server

server = Server("slow", "1.0")


@server.tool(input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}})
async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    await trio.sleep(arguments["seconds"])
    return "slept"


@server.tool(input_schema={"type": "object", "properties": {"size": {"type": "integer"}}})
async def big(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    return "x" * arguments["size"]


@server.tool()
async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    try:
        await trio.sleep_forever()
    finally:
        print("hang cancelled", file=sys.stderr, flush=True)


if __name__ == "__main__":
    server.run_stdio(eof_grace=float(sys.argv[1]))
