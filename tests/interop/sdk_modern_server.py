"""A 2026-07-28 server written with the official Python SDK (mcp 2.3.0): the peer of the modern
client's interop tests. ``python sdk_modern_server.py`` serves stdio; ``--http PORT`` Streamable HTTP.

* ``echo(text)``;
* ``ask_name()`` -- a multi round-trip request: an ``InputRequiredResult`` asking for a name
  (elicitation, form mode) with a ``requestState``; the retry's answer completes it;
* ``add_tool()`` -- registers ``added`` and publishes ``tools/list_changed`` to every
  ``subscriptions/listen`` stream.
"""

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    TextContent,
)

app = MCPServer("sdk-modern")


@app.tool(description="Echo the text back.")
async def echo(text: str) -> str:
    return text


@app.tool(description="Ask the user's name (MRTR), then greet.")
async def ask_name(ctx: Context) -> CallToolResult | InputRequiredResult:
    answers = ctx.input_responses or {}
    answer = answers.get("name")
    if answer is None or ctx.request_state != "asked-for-name":
        return InputRequiredResult(
            input_requests={
                "name": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message="Your name?",
                        requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
                    )
                )
            },
            request_state="asked-for-name",
        )
    data = answer if isinstance(answer, dict) else answer.model_dump(by_alias=True)
    name = (data.get("content") or {}).get("name") if data.get("action") == "accept" else data.get("action")
    return CallToolResult(content=[TextContent(type="text", text=f"hello {name}")])


@app.tool(description="Add the tool 'added' and tell the subscribers.")
async def add_tool(ctx: Context) -> str:
    if "added" not in {t.name for t in await app.list_tools()}:

        @app.tool(name="added", description="Added at run time.")
        async def added() -> str:
            return "added"

    await ctx.notify_tools_changed()
    return "ok"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
