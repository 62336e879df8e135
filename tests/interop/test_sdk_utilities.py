"""Progress, cancellation and ping with the official Python SDK (mcp 2.3.0) as the peer, over stdio.

Both directions: our client against an SDK server (sdk_peer_server.py) and
the SDK client against our server (our_peer_server.py). Each peer records
what it saw ("started TAG", "cancelled TAG") and a ``wait_for`` tool reports
it, so every step waits for an answer, never for time to pass; every wait is
bounded by ``trio.fail_after``.
"""

import logging
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.errors import RequestTimeout
from mcp_ref.schema.content import TextContent
from mcp_ref.session import ClientSession, open_stdio_client

sdk_session = pytest.importorskip("mcp.client.session", reason="the official SDK is in the test extra")
sdk_stdio = pytest.importorskip("mcp.client.stdio")
sdk_exceptions = pytest.importorskip("mcp.shared.exceptions")

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
SDK_PEER = str(Path(__file__).with_name("sdk_peer_server.py"))
OUR_PEER = str(Path(__file__).with_name("our_peer_server.py"))
LIMIT = 30  # seconds for a whole test: real processes, but every step waits for an answer


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


# -- our client, the SDK's server -----------------------------------------------------------


async def call_and_cancel(client: ClientSession, tag: str) -> None:
    """Call ``hang``, wait until the SDK server runs it, then cancel the call as its caller."""
    async with trio.open_nursery() as nursery:
        scope = trio.CancelScope()

        async def call() -> None:
            with scope:
                await client.call_tool("hang", {"tag": tag})
            assert scope.cancelled_caught

        nursery.start_soon(call)
        await client.call_tool("wait_for", {"event": f"started {tag}"})
        scope.cancel()


@pytest.mark.req("basic/utilities/progress#3", "basic/utilities/progress#4", "basic/transports#2")
async def test_progress_from_the_sdk_server_arrives_in_order_before_the_result() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with trio.fail_after(LIMIT):
        async with open_stdio_client(sys.executable, [SDK_PEER], env=ENV, era="legacy") as client:
            result = await client.call_tool("count", {"n": 3}, progress=on_progress)
            # every notification was delivered before call_tool returned the result
            assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            assert texts(result) == ["counted 3"]


@pytest.mark.req("basic/lifecycle#18", "basic/utilities/cancellation#1", "basic/utilities/cancellation#4")
async def test_our_cancel_and_our_timeout_cancel_the_sdk_servers_handler() -> None:
    with trio.fail_after(LIMIT):
        async with open_stdio_client(sys.executable, [SDK_PEER], env=ENV, era="legacy") as client:
            await call_and_cancel(client, "a")
            # the SDK applied our notifications/cancelled: its handler was cancelled
            seen = await client.call_tool("wait_for", {"event": "cancelled a"})
            assert texts(seen) == ["started a", "cancelled a"]

            with pytest.raises(RequestTimeout):
                await client.call_tool("hang", {"tag": "b"}, timeout=0.5)
            seen = await client.call_tool("wait_for", {"event": "cancelled b"})
            assert texts(seen) == ["started a", "cancelled a", "started b", "cancelled b"]
            # the session goes on
            assert (await client.call_tool("count", {"n": 1})).content == [TextContent(text="counted 1")]


@pytest.mark.req("basic/utilities/ping#1")
async def test_the_sdk_server_pings_our_client() -> None:
    with trio.fail_after(LIMIT):
        async with open_stdio_client(sys.executable, [SDK_PEER], env=ENV, era="legacy") as client:
            # the tool returns only once the SDK's ping to us was answered
            assert texts(await client.call_tool("ping_client")) == ["pong"]


# -- the SDK's client, our server -----------------------------------------------------------


def sdk_client_of_our_peer() -> Any:
    params = sdk_stdio.StdioServerParameters(command=sys.executable, args=[OUR_PEER], env=ENV)
    return sdk_stdio.stdio_client(params)


@pytest.mark.req("basic/utilities/progress#3", "basic/utilities/progress#4")
async def test_progress_from_our_server_reaches_the_sdk_client_in_order() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with trio.fail_after(LIMIT):
        async with sdk_client_of_our_peer() as (read, write), sdk_session.ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("count", {"n": 3}, progress_callback=on_progress)
            assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            assert texts(result) == ["counted 3"]


@pytest.mark.req("basic/utilities/cancellation#4", "basic/utilities/cancellation#8")
async def test_the_sdk_clients_cancel_and_timeout_cancel_our_handler_without_a_response(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, "mcp.shared.jsonrpc_dispatcher")
    with trio.fail_after(LIMIT):
        async with sdk_client_of_our_peer() as (read, write), sdk_session.ClientSession(read, write) as session:
            await session.initialize()
            async with trio.open_nursery() as nursery:
                scope = trio.CancelScope()

                async def call() -> None:
                    with scope:
                        await session.call_tool("hang", {"tag": "a"})

                nursery.start_soon(call)
                await session.call_tool("wait_for", {"event": "started a"})
                scope.cancel()  # the SDK sends notifications/cancelled for it
            seen = await session.call_tool("wait_for", {"event": "cancelled a"})
            assert texts(seen) == ["started a\ncancelled a"]

            with pytest.raises(sdk_exceptions.MCPError, match="timed out"):
                await session.call_tool("hang", {"tag": "b"}, read_timeout_seconds=0.5)
            seen = await session.call_tool("wait_for", {"event": "cancelled b"})
            assert texts(seen) == ["started a\ncancelled a\nstarted b\ncancelled b"]
            await session.send_ping()  # [basic/utilities/ping#1] and the session goes on
    # a response to a cancelled request would have come before the answer to wait_for,
    # and the SDK reports such a response as one for an unknown or late request
    assert not [r for r in caplog.records if "unknown/late request" in r.getMessage()]
