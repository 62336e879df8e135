"""ASGI applications served by a real Hypercorn (trio worker) in tests/basic/transports/test_asgi.py.

``starlette_app``: an existing web application (a home page) with the MCP endpoint of
mcp_ref's transport check server mounted at the root, its lifespan run by Starlette;
``bare_app``: the endpoint served as the whole application (Hypercorn runs its lifespan).
The server has one more tool, ``grow``, that registers a tool (a tools list change, for
the 2026-07-28 ``subscriptions/listen`` stream).
"""

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcp_ref import RequestContext, Server
from mcp_ref.testing.transport_check import check_server


def growing_server() -> Server:
    server = check_server()
    grown_so_far = [0]

    @server.tool(description="Register one more tool (the tools list changes).")
    async def grow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        grown_so_far[0] += 1
        name = f"grown_{grown_so_far[0]}"

        async def grown(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return name

        server.tool(name=name, description="grown")(grown)
        return name

    return server


mcp = growing_server().asgi_app(max_body=64 * 1024)


async def home(request: Request) -> PlainTextResponse:
    return PlainTextResponse("the web application's own page")


starlette_app = Starlette(routes=[Route("/", home), Mount("/", app=mcp)], lifespan=mcp.lifespan)

bare_app = check_server().asgi_app()
