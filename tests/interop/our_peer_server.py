"""An mcp_ref stdio server: the peer of the official SDK client in the
progress, cancellation and ping interop tests.

``hang`` records "started TAG" and, once cancelled, "cancelled TAG";
``wait_for`` answers once an event is recorded (or fails after 10 s), so a
test learns what our side saw by asking it.
"""

from typing import Any

import trio

from mcp_ref.session import RequestContext, Server

server = Server("mcp_ref-peer", "1.0")
events: list[str] = []
recorded = trio.Event()  # replaced after each set, so waiters see every new event


def record(event: str) -> None:
    global recorded
    events.append(event)
    recorded.set()
    recorded = trio.Event()


def schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


@server.tool(description="Report progress 1..n of n, then return.", input_schema=schema(n="integer"))
async def count(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    n = arguments["n"]
    for i in range(1, n + 1):
        await ctx.progress(i, n, f"step {i}")
    return f"counted {n}"


@server.tool(description="Run until cancelled.", input_schema=schema(tag="string"))
async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    record(f"started {arguments['tag']}")
    try:
        await trio.sleep_forever()
    finally:
        record(f"cancelled {arguments['tag']}")


@server.tool(
    description="Wait (up to 10 s) until `event` was recorded; return every event.", input_schema=schema(event="string")
)
async def wait_for(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    with trio.fail_after(10):
        while arguments["event"] not in events:
            await recorded.wait()
    return "\n".join(events)


if __name__ == "__main__":
    server.run_stdio()
