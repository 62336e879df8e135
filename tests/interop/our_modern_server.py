"""An mcp_ref server, for the official SDKs' 2026-07-28 clients (tests/interop/test_modern_peers.py).
``python our_modern_server.py`` serves stdio; ``--http PORT`` Streamable HTTP on 127.0.0.1.

``echo(text)``; ``ask_name()`` elicits a name (a 2026-07-28 request gets an InputRequiredResult and
is re-run on the retry); ``add_tool()`` registers ``added`` (tools/list_changed to subscriptions).
"""

import sys
from typing import Any

from mcp_ref.session import RequestContext, Server

server = Server("mcp_ref-modern", "1.0")


@server.tool(
    description="Echo the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    return str(arguments["text"])


@server.tool(description="Ask the user's name, then greet.")
async def ask_name(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    answer = await ctx.elicit_form("Your name?", {"name": {"type": "string"}})
    return f"hello {answer.content['name']}" if answer.action == "accept" and answer.content else answer.action


@server.tool(description="Add the tool 'added' (tools/list_changed).")
async def add_tool(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    if "added" not in server.tools.names():

        @server.tool(description="Added at run time.")
        async def added(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return "added"

    return "ok"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run_http(host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run_stdio()
