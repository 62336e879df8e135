"""A notification callback that raises ends the session, and its exception comes out
of the ``async with`` once, as itself (not inside exception groups)."""

from typing import Any

import pytest
import trio

from mcp_ref import RequestContext, Server, memory_channel_pair, memory_session_pair, open_session


class Boom(Exception):
    pass


def make_server() -> Server:
    server = Server("noisy")

    @server.tool()
    async def noisy(ctx: RequestContext) -> str:
        await ctx.log("error", "something happened")
        return "ok"

    @server.tool()
    async def grow(ctx: RequestContext) -> str:
        @server.tool()
        async def extra(ctx: RequestContext) -> str:
            return "new"

        return "grown"

    return server


async def failing_log(params: Any) -> None:
    raise Boom("the application's callback failed")


async def test_the_exception_surfaces_as_itself_while_the_block_waits() -> None:
    with pytest.raises(Boom) as caught:
        async with memory_session_pair(make_server(), on_log=failing_log) as client:
            await client.set_logging_level("debug")
            await client.call_tool("noisy")
            await trio.sleep_forever()  # cancelled: the session ended
    assert type(caught.value) is Boom and str(caught.value) == "the application's callback failed"


async def test_the_exception_surfaces_as_itself_while_the_block_keeps_calling() -> None:
    # a call made after the session closed under the block is not what the user sees
    with pytest.raises(Boom):
        async with memory_session_pair(make_server(), on_log=failing_log) as client:
            await client.set_logging_level("debug")
            for _ in range(100):
                await client.call_tool("noisy")


async def test_from_open_session_itself() -> None:
    async def failing_change(kind: str) -> None:
        raise Boom(kind)

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(make_server().serve, server_end)
        with pytest.raises(Boom, match=r"^tools$"):
            async with open_session(client_end, on_list_changed=failing_change) as client:
                await client.call_tool("grow")
                await trio.sleep_forever()
        nursery.cancel_scope.cancel()


async def test_a_callback_that_does_not_raise_leaves_the_session_alone() -> None:
    seen: list[Any] = []

    async def on_log(params: Any) -> None:
        seen.append(params.data)

    async with memory_session_pair(make_server(), on_log=on_log) as client:
        await client.set_logging_level("debug")
        await client.call_tool("noisy")
        await client.ping()
        await client.call_tool("noisy")
        await client.ping()
    assert seen == ["something happened", "something happened"]
