"""Streamable HTTP, client side: answers read in the background, resumption after drops and polling."""

from typing import Any

import pytest
import trio

from mcp_ref.errors import RequestTimeout
from mcp_ref.schema.roots import Root
from mcp_ref.session import RequestContext, Server
from mcp_ref.session.http import open_http_client

from .test_streamable_http import http_server

# -- a server that answers with JSON only when the handler is done ------------------------------


@pytest.mark.req("basic/transports#21", "basic/transports#22")
async def test_json_mode_calls_run_concurrently() -> None:
    """Each call waits until all three are running on the server: with the client
    waiting for one answer before sending the next POST, none would finish."""
    server = Server("json")
    running = 0
    all_in = trio.Event()

    @server.tool()
    async def meet(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        nonlocal running
        running += 1
        if running == 3:
            all_in.set()
        await all_in.wait()
        return "met"

    async with http_server(server, json_response=True) as info, open_http_client(info.url) as client:
        texts: list[str] = []

        async def call() -> None:
            result = await client.call_tool("meet", timeout=10)
            texts.append(result.content[0].text)  # type: ignore[union-attr]

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(call)
        assert texts == ["met"] * 3


@pytest.mark.req("basic/transports#21")
async def test_json_mode_tool_asking_the_client_does_not_deadlock() -> None:
    """The server's request (roots/list) is answered while the POST of the call is unanswered."""
    server = Server("asks")

    @server.tool()
    async def where(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        roots = await ctx.list_roots(timeout=5)
        return roots.roots[0].uri  # type: ignore[no-any-return]

    roots = [Root(uri="file:///work", name="work")]
    async with (
        http_server(server, json_response=True) as info,
        open_http_client(info.url, roots=roots) as client,
    ):
        with trio.fail_after(10):
            result = await client.call_tool("where", timeout=10)
        assert result.content[0].text == "file:///work"  # type: ignore[union-attr]


@pytest.mark.req("basic/transports#21", "basic/utilities/cancellation#4")
@pytest.mark.parametrize("json_response", [True, False])
async def test_a_timed_out_call_returns_and_cancels_the_handler(json_response: bool) -> None:
    server = Server("hangs")
    cancelled = trio.Event()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    async with http_server(server, json_response=json_response) as info, open_http_client(info.url) as client:
        with trio.fail_after(10):
            with pytest.raises(RequestTimeout):
                await client.call_tool("hang", timeout=0.3)
            await cancelled.wait()  # the notifications/cancelled reached the server
            await client.ping()  # and the session goes on
