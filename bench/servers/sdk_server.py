"""Official SDK (mcp 2.3.0) stdio server with the echo tool, on anyio's trio backend.

With ``--http PORT [--json]`` it serves Streamable HTTP instead, as its users run it:
``run_streamable_http_async``, its Starlette app under uvicorn on asyncio (uvicorn
runs on asyncio only), SSE answers unless ``--json``.
"""

import sys

import anyio
from mcp.server.mcpserver import MCPServer

app = MCPServer("bench", log_level="WARNING")  # no uvicorn access log per request


@app.tool(description="Return the text unchanged.", structured_output=False)
async def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        port = int(sys.argv[2])
        json_response = "--json" in sys.argv[3:]
        anyio.run(lambda: app.run_streamable_http_async(host="127.0.0.1", port=port, json_response=json_response))
    else:
        anyio.run(app.run_stdio_async, backend="trio")
