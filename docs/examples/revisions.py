"""The revisions guide: which revision a client speaks, and how to pin one."""

from typing import Any

import trio

from mcp_ref import RequestContext, Server
from mcp_ref.testing import memory_session_pair

server = Server("weather", "1.0")  # serves 2026-07-28 and the earlier revisions, on one endpoint


@server.tool()
async def forecast(ctx: RequestContext, city: str) -> str:
    """Today's forecast for a city."""
    return f"sunny in {city} (served in {ctx.revision})"


async def show(**options: Any) -> None:
    async with memory_session_pair(server, **options) as client:
        result = await client.call_tool("forecast", {"city": "Oslo"})
        print(f"{options or 'default'}: {client.era} {client.protocol_version} | {result.text}")


async def main() -> None:
    await show()  # era="auto": server/discover first, 2026-07-28 when the server speaks it
    await show(era="legacy")  # a 2025 session: initialize, the newest 2025 revision both speak
    await show(protocol_version="2025-06-18")  # exactly this revision (initialize proposes it)
    await show(era="modern")  # 2026-07-28 or an error, never a fallback


if __name__ == "__main__":
    trio.run(main)
