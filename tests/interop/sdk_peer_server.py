"""An MCP server written with the official Python SDK (mcp 2.3.0): the peer for
the progress, cancellation and ping interop tests.

``hang`` records "started TAG" and, once cancelled, "cancelled TAG";
``wait_for`` answers once an event is recorded (or fails after 10 s), so a
test learns what the SDK saw by asking it.
"""

import anyio
from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("sdk-peer")
events: list[str] = []
recorded = anyio.Event()  # replaced after each set, so waiters see every new event


def record(event: str) -> None:
    global recorded
    events.append(event)
    recorded.set()
    recorded = anyio.Event()


@app.tool(description="Report progress 1..n of n, then return.")
async def count(n: int, ctx: Context) -> str:
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
    return f"counted {n}"


@app.tool(description="Run until cancelled.")
async def hang(tag: str) -> str:
    record(f"started {tag}")
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        record(f"cancelled {tag}")
        raise
    raise AssertionError("unreachable")


@app.tool(description="Wait (up to 10 s) until `event` was recorded; return every event so far.")
async def wait_for(event: str) -> list[str]:
    with anyio.fail_after(10):
        while event not in events:
            await recorded.wait()
    return list(events)


@app.tool(description="Ping the client, then return.")
async def ping_client(ctx: Context) -> str:
    await ctx.session.send_ping()
    return "pong"


if __name__ == "__main__":
    app.run()
