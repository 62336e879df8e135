"""Public helpers for testing and in-process embedding."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ..basic.transports._nursery import block_nursery
from ..basic.transports.memory import memory_channel_pair
from ..session.client import ClientSession, open_session
from ..session.server import Server

__all__ = ["memory_session_pair"]


@asynccontextmanager
async def memory_session_pair(server: Server, **client_options: Any) -> AsyncIterator[ClientSession]:
    """Serve ``server`` in-process and yield an initialised client connected to it."""
    client_end, server_end = memory_channel_pair()
    async with block_nursery() as (nursery, body):
        await nursery.start(server.serve, server_end)
        try:
            async with open_session(client_end, **client_options) as client:
                yield client
        except BaseException as exc:
            body.exc = exc
            raise
        finally:
            nursery.cancel_scope.cancel(reason="memory_session_pair exited")
