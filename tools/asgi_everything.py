"""The everything example as an ASGI application mounted in Starlette, for Hypercorn's trio worker.

    hypercorn -k trio --bind 127.0.0.1:8000 tools.asgi_everything:app

What ``make conformance`` runs the official server suites against besides
``python -m mcp_ref.examples.everything --http`` (our own h11 server): the same
server through :class:`mcp_ref.AsgiApp`. Its tasks run in the lifespan's nursery.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
from starlette.applications import Starlette
from starlette.routing import Mount

from mcp_ref import AsgiApp
from mcp_ref.examples.everything import build_server

_running: list[AsgiApp] = []


async def mcp(scope: Any, receive: Any, send: Any) -> None:
    """The endpoint of the running lifespan (made there: the server's tasks need its nursery)."""
    await _running[0](scope, receive, send)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    async with trio.open_nursery() as nursery:
        endpoint = build_server(task_nursery=nursery).asgi_app()
        async with endpoint.running():
            _running.append(endpoint)
            try:
                yield
            finally:
                _running.remove(endpoint)
        nursery.cancel_scope.cancel()


app = Starlette(routes=[Mount("/", app=mcp)], lifespan=lifespan)
