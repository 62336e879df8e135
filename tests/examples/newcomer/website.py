"""The newcomer's weather server mounted in an existing Starlette site (hypercorn -k trio website:app)."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from weather import server

mcp = server.asgi_app()


async def home(request: Request) -> PlainTextResponse:
    return PlainTextResponse("Weather, for people and for models (MCP at /mcp)")


app = Starlette(routes=[Route("/", home), Mount("/", app=mcp)], lifespan=mcp.lifespan)
