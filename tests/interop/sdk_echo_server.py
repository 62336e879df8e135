"""An MCP server written with the official Python SDK (mcp 2.3.0), for interop tests."""

from mcp.server.mcpserver import MCPServer

app = MCPServer("sdk-echo", instructions="official SDK peer for mcp_ref interop tests")


@app.tool(description="Return the text unchanged.")
def echo(text: str) -> str:
    return text


@app.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        import anyio

        anyio.run(lambda: app.run_streamable_http_async(host="127.0.0.1", port=int(sys.argv[2])))
    elif len(sys.argv) > 2 and sys.argv[1] == "--sse":
        import anyio

        # the 2024-11-05 HTTP+SSE transport: GET /sse, POST /messages/?session_id=...
        anyio.run(lambda: app.run_sse_async(host="127.0.0.1", port=int(sys.argv[2])))
    else:
        app.run()
