"""ASGI applications served by a real Hypercorn (trio worker) in tests/basic/transports/test_asgi.py.

``starlette_app``: an existing web application (a home page) with the MCP endpoint of
mcp_ref's transport check server mounted at the root, its lifespan run by Starlette;
``bare_app``: the endpoint served as the whole application (Hypercorn runs its lifespan).
"""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcp_ref.testing.transport_check import check_server

mcp = check_server().asgi_app(max_body=64 * 1024)


async def home(request: Request) -> PlainTextResponse:
    return PlainTextResponse("the web application's own page")


starlette_app = Starlette(routes=[Route("/", home), Mount("/", app=mcp)], lifespan=mcp.lifespan)

bare_app = check_server().asgi_app()
