"""The caching section of the revisions guide: the hints a 2026-07-28 server puts on its
results (per server, per operation, per resource), and a client that honours them."""

import trio

from mcp_ref import CachePolicy, RequestContext, Server
from mcp_ref.testing import memory_session_pair

server = Server(
    "library",
    "1.0",
    # every cacheable result (lists, reads, server/discover): fresh for a minute, any cache may share it
    cache=CachePolicy(ttl_ms=60_000, scope="public"),
    # ... but tools/list: fresh for 5 s, for this caller only
    cache_for={"tools/list": CachePolicy(ttl_ms=5_000, scope="private")},
)
reads = {"catalogue": 0, "loans": 0}


@server.tool()
async def renew(ctx: RequestContext, isbn: str) -> str:
    """Renew a loan."""
    return f"renewed {isbn}"


@server.resource("library://catalogue")  # the server's default: a minute, public
async def catalogue(ctx: RequestContext) -> str:
    reads["catalogue"] += 1
    return "Dune; Emma; Ulysses"


@server.resource("library://loans", cache=CachePolicy(ttl_ms=0, scope="private"))  # who asks matters
async def loans(ctx: RequestContext) -> str:
    reads["loans"] += 1
    return "Emma, due Friday"


async def main() -> None:
    async with memory_session_pair(server) as client:  # 2026-07-28
        tools = await client.list_tools()
        print(f"tools/list: ttlMs={tools.ttl_ms} cacheScope={tools.cache_scope}")
        for uri in ("library://catalogue", "library://loans"):
            first = await client.read_resource(uri)
            await client.read_resource(uri)  # a fresh result is taken from the client's cache
            print(f"{uri}: ttlMs={first.ttl_ms} cacheScope={first.cache_scope}")
        print(f"handler runs for two reads each: {reads}")
    async with memory_session_pair(server, era="legacy") as client:  # a 2025 session has no hints
        tools = await client.list_tools()
        print(f"2025-11-25 tools/list: ttlMs={tools.ttl_ms} cacheScope={tools.cache_scope}")


if __name__ == "__main__":
    trio.run(main)
