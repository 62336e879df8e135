"""Public helpers for testing and in-process embedding.

:func:`memory_session_pair` gives a test an initialised client of a server in
one line; :mod:`mcp_ref.testing.pytest_plugin` wraps it in pytest fixtures
(``mcp_server``, ``mcp_client``, ``mcp_client_options``), loaded automatically
where mcp_ref is installed.
"""

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ..basic.transports._nursery import block_nursery
from ..basic.transports.memory import DEFAULT_MAX_BUFFER, memory_channel_pair
from ..session.client import ClientSession, open_session
from ..session.core import SessionConfig
from ..session.server import Server

__all__ = ["memory_session_pair"]


@asynccontextmanager
async def memory_session_pair(
    server: Server,
    *,
    max_buffer: int | float = DEFAULT_MAX_BUFFER,
    max_message_size: int | None = None,
    server_config: SessionConfig | None = None,
    **client_options: Any,
) -> AsyncIterator[ClientSession]:
    """Serve ``server`` in-process and yield an initialised client connected to it.

    ``max_buffer`` and ``max_message_size`` are those of
    :func:`~mcp_ref.memory_channel_pair` (messages waiting in each direction,
    the largest message taken); ``server_config`` is the server side's
    :class:`~mcp_ref.SessionConfig` (default: the server's own); the other
    options go to :func:`~mcp_ref.open_session` (``sampling=``,
    ``elicitation=``, ``roots=``, the client's ``config=`` ...). Leaving the
    block closes the session and stops serving.
    """
    client_end, server_end = memory_channel_pair(max_buffer, max_message_size=max_message_size)
    async with block_nursery() as (nursery, body):
        await nursery.start(functools.partial(server.serve, server_end, config=server_config))
        try:
            async with open_session(client_end, **client_options) as client:
                yield client
        except BaseException as exc:
            body.exc = exc
            raise
        finally:
            nursery.cancel_scope.cancel(reason="memory_session_pair exited")
