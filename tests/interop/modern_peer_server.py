"""An mcp_ref server for the 2026-07-28 interop tests: the peer of the official Python SDK
client and the TypeScript SDK v2 client, over stdio (run as a script) or HTTP (``--http PORT``).

Its handlers are written once, as for any session: ``ask_name`` elicits, which is a
request to the client in a 2025-11-25 session and an input request (multi round-trip)
in a 2026-07-28 one.
"""

import sys
from typing import Any

import trio

from mcp_ref import CachePolicy, RequestContext, Server

server = Server("mcp_ref-modern-peer", "1.0", cache=CachePolicy(60_000, "public"))


@server.tool(
    description="Echo `text` back.", input_schema={"type": "object", "properties": {"text": {"type": "string"}}}
)
async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    return str(arguments.get("text"))


@server.tool(description="Report progress 1..3, then return.", input_schema={"type": "object"})
async def count(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    for i in (1, 2, 3):
        await ctx.progress(i, 3, f"step {i}")
        # (a pause between the messages: the TypeScript SDK v2 client, reading a stdio chunk that
        # holds progress and the response together, drops the progress it handles after the response)
        await trio.sleep(0.02)
    return f"counted in {ctx.revision}"


@server.tool(description="Ask the user's name (elicitation).", input_schema={"type": "object"})
async def ask_name(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    answer = await ctx.elicit_form("What is your name?", {"name": {"type": "string"}}, key="name")
    return f"Hello, {(answer.content or {}).get('name')} ({answer.action}, {ctx.revision})"


async def toggled(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    return "toggled"


@server.tool(description="Add or remove the tool `toggled` (the tool list changes).", input_schema={"type": "object"})
async def toggle(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    if "toggled" in server.tools:
        server.tools.remove("toggled")
        return "removed"
    server.tool("toggled", description="Comes and goes.", input_schema={"type": "object"})(toggled)
    return "added"


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run_http(port=int(sys.argv[2]))
    else:
        server.run_stdio()


if __name__ == "__main__":
    main()
