"""A minimal stdio MCP server with one tool.

Run it under any MCP client: ``python -m mcp_ref.examples.echo``.
"""

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


def main() -> None:
    server.run_stdio()


if __name__ == "__main__":
    main()
