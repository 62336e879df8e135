"""A server built with the official Python SDK (mcp 2.3.0), for ``mcp-ref check``.

Tools, resources, a resource template, prompts (one with a completion) and
logging, written the way the SDK's documentation shows; the tools named in
``sdk-server.toml`` have the behaviours the battery asks for (slow, progress,
logging). See spec_notes/crosscheck.md for what the check found.
"""

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

app = MCPServer("sdk-crosscheck", instructions="a server of the official Python SDK, cross-checked by mcp_ref")


class Sum(BaseModel):
    sum: float


@app.tool(description="Return the text unchanged.")
def echo(text: str) -> str:
    return text


@app.tool(description="Add two numbers; the result is structured.")
def add(a: float, b: float) -> Sum:
    return Sum(sum=a + b)


@app.tool(description="Work for `seconds` seconds, reporting progress every half second.")
async def slow(seconds: float, ctx: Context) -> str:
    steps = max(1, int(seconds * 2))
    for i in range(1, steps + 1):
        await anyio.sleep(seconds / steps)
        await ctx.report_progress(i, steps, f"step {i}")
    return "done"


@app.tool(description="Send one log message per level.")
async def log_levels(ctx: Context) -> str:
    await ctx.debug("a debug message")
    await ctx.info("an info message")
    await ctx.warning("a warning message")
    await ctx.error("an error message")
    return "logged"


@app.resource("sdk://text", mime_type="text/plain", description="A text resource")
def text_resource() -> str:
    return "hello from the SDK"


@app.resource("sdk://item/{item_id}", mime_type="text/plain", description="A templated resource")
def item(item_id: str) -> str:
    return f"item {item_id}"


@app.prompt(description="A prompt with no arguments")
def plain() -> str:
    return "Say hello."


@app.prompt(description="A prompt with a required argument")
def greet(name: str) -> str:
    return f"Greet {name}."


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--http"]:  # --http PORT: Streamable HTTP on 127.0.0.1:PORT/mcp
        app.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
