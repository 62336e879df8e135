"""pytest fixtures to test an MCP server in-process (loaded automatically once mcp_ref is installed).

Give the plugin your server with a fixture named ``mcp_server``, and ask for
``mcp_client``: an initialised :class:`~mcp_ref.ClientSession` talking to it
over an in-memory pair, opened for the test and closed after it::

    import pytest
    from mcp_ref import ClientSession, Server
    from myapp import server

    @pytest.fixture
    def mcp_server() -> Server:
        return server

    async def test_add(mcp_client: ClientSession) -> None:
        result = await mcp_client.call_tool("add", {"a": 1, "b": 2})
        assert result.structured_content == {"sum": 3}

The fixtures are trio fixtures: the tests run under pytest-trio (``trio_mode
= true``, or ``@pytest.mark.trio``). Nothing touches the network or the real
clock, so they work with pytest-trio's ``autojump_clock``: a tool that sleeps
an hour answers at once. Override ``mcp_client_options`` (a dict of
:func:`~mcp_ref.open_session` keyword arguments: ``sampling=``,
``elicitation=``, ``roots=``, ``config=`` ...) to give the client what a
test needs; a server that runs tasks can take pytest-trio's ``nursery``
fixture for :meth:`~mcp_ref.Server.enable_tasks`.
"""

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ..session.client import ClientSession
from ..session.server import Server
from . import memory_session_pair

__all__ = ["mcp_client", "mcp_client_options", "mcp_server"]


@pytest.fixture
def mcp_server() -> Server:
    """The server under test: define your own fixture of this name."""
    raise pytest.UsageError(
        "mcp_client needs your server: define a fixture named mcp_server that returns your mcp_ref.Server"
    )


@pytest.fixture
def mcp_client_options() -> dict[str, Any]:
    """Keyword arguments of :func:`~mcp_ref.open_session` for ``mcp_client`` (none by default)."""
    return {}


@pytest.fixture
async def mcp_client(mcp_server: Server, mcp_client_options: dict[str, Any]) -> AsyncIterator[ClientSession]:
    """An initialised client of ``mcp_server``, in memory, for the length of the test."""
    async with memory_session_pair(mcp_server, **mcp_client_options) as client:
        yield client
