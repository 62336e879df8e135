"""mcp_ref stdio (or Streamable HTTP) server with the echo tool, as an application would write it."""

import sys
from typing import Any

import mcp_ref

server = mcp_ref.Server("bench", "1.0")


@server.tool(
    description="Return the text unchanged.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
async def echo(ctx: mcp_ref.RequestContext, arguments: dict[str, Any]) -> str:
    return str(arguments["text"])


def serve_http(argv: list[str]) -> None:
    """``--http [--json] [--max-sessions N]``: JSON answers instead of SSE streams; more sessions (W10)."""
    import trio

    from mcp_ref.session.http import HttpConfig
    from mcp_ref.session.http import serve_http as serve

    max_sessions = int(argv[argv.index("--max-sessions") + 1]) if "--max-sessions" in argv else 100
    # (every load client connects from 127.0.0.1, so they are all one user: the per-user limits
    # are raised to the server's, W10 opening 64 sessions with calls in flight)
    config = HttpConfig(
        json_response="--json" in argv,
        max_sessions=max_sessions,
        max_sessions_per_user=max_sessions,
        max_streams_per_user=max(64, 2 * max_sessions),
    )

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            info = await nursery.start(
                lambda task_status: serve(server, port=0, config=config, task_status=task_status)
            )
            print(info.url, flush=True)

    trio.run(main)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        serve_http(sys.argv[2:])
    else:
        server.run_stdio()
