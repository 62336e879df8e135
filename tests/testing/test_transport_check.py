"""The transport check, run against every transport we have."""

import os
import sys
from pathlib import Path

import pytest

from mcp_ref.basic.transports.memory import framed_memory_pair
from mcp_ref.session import open_session, open_stdio_client
from mcp_ref.testing import memory_session_pair
from mcp_ref.testing.transport_check import check_server, check_transport

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.req("basic/transports#69", "basic/transports#70")
async def test_memory() -> None:
    async with memory_session_pair(check_server(), era="legacy") as client:
        await check_transport(client, invalid_json=True, eof=True)
        assert client.session.closed.is_set()


async def test_framed_memory() -> None:
    import trio

    client_end, server_end = framed_memory_pair(max_message_size=4 * 1024 * 1024)
    async with trio.open_nursery() as nursery:
        await nursery.start(check_server().serve, server_end)
        async with open_session(client_end, era="legacy") as client:
            await check_transport(client, invalid_json=True, eof=True)
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/transports#1", "basic/transports#2", "basic/transports#3")
async def test_stdio_subprocess() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with open_stdio_client(
        sys.executable, ["-m", "mcp_ref.testing.transport_check"], env=env, era="legacy"
    ) as client:
        await check_transport(client, invalid_json=True, eof=True)
