"""2026-07-28 interop with the official Python SDK (mcp 2.3.0) client, over Streamable HTTP and
stdio: it discovers our server as modern, calls tools with progress, answers an elicitation
through a multi round-trip request, and hears a tools list change on subscriptions/listen.
A client pinned to the 2025 revisions still gets a 2025-11-25 session from the same server."""

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.basic.transports.http_server import serve_http

from . import modern_peer_server

pytest.importorskip("mcp", reason="the official SDK is in the test extra")

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.subscriptions import ToolsListChanged

ROOT = Path(__file__).resolve().parents[2]
PEER = str(Path(__file__).with_name("modern_peer_server.py"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


async def elicit(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


@asynccontextmanager
async def our_http_server() -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        info = await nursery.start(lambda task_status: serve_http(modern_peer_server.server, task_status=task_status))
        yield info.url
        nursery.cancel_scope.cancel()


async def exercise(client: Client, era: str) -> None:
    tools = await client.list_tools()
    assert [t.name for t in tools.tools][:3] == ["echo", "count", "ask_name"]
    echoed = await client.call_tool("echo", {"text": "hi"})
    assert echoed.content[0].text == "hi"  # type: ignore[union-attr]
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    counted = await client.call_tool("count", {}, progress_callback=on_progress)
    assert counted.content[0].text == f"counted in {era}" and seen == [1, 2, 3]  # type: ignore[union-attr]
    # an elicitation: a multi round-trip request in 2026-07-28, a request to the client in 2025
    asked = await client.call_tool("ask_name", {})
    assert asked.content[0].text == f"Hello, Ada (accept, {era})"  # type: ignore[union-attr]


@pytest.mark.req(
    "2026-07-28:basic/versioning#3",
    "2026-07-28:basic/patterns/mrtr#1",
    "2026-07-28:basic/transports/streamable-http#16",
)
async def test_sdk_client_discovers_and_uses_our_http_server_in_2026() -> None:
    async with our_http_server() as url, Client(url, elicitation_callback=elicit) as client:
        assert client.session.protocol_version == "2026-07-28"
        assert client.session.server_info is not None and client.session.server_info.name == "mcp_ref-modern-peer"
        await exercise(client, "2026-07-28")


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#2", "2026-07-28:basic/index#61")
async def test_sdk_client_hears_a_list_change_on_subscriptions_listen() -> None:
    async with our_http_server() as url, Client(url) as client:
        async with client.listen(tools_list_changed=True) as subscription:
            assert subscription.honored.tools_list_changed is True
            await client.call_tool("toggle", {})
            with trio.fail_after(10):
                event = await subscription.__anext__()
            assert isinstance(event, ToolsListChanged)
        tools = await client.list_tools()
        assert "toggled" in [t.name for t in tools.tools]
        await client.call_tool("toggle", {})


@pytest.mark.req("2026-07-28:basic/versioning#8", "2026-07-28:basic/versioning#11")
async def test_a_2025_sdk_client_gets_a_2025_session_from_the_same_http_server() -> None:
    async with our_http_server() as url, Client(url, mode="legacy", elicitation_callback=elicit) as client:
        assert client.session.protocol_version == "2025-11-25"
        await exercise(client, "2025-11-25")


@pytest.mark.req("2026-07-28:server/discover#1", "2026-07-28:basic/versioning#11")
@pytest.mark.parametrize(("mode", "era"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_sdk_client_over_stdio_in_either_era(mode: str, era: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=[PEER], env=ENV)
    async with Client(params, mode=mode, elicitation_callback=elicit) as client:
        assert client.session.protocol_version == era
        await exercise(client, era)


@pytest.mark.req("2026-07-28:basic/versioning#8", "2026-07-28:basic/versioning#11")
@pytest.mark.parametrize(("mode", "era"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_the_readmes_first_server_runs_unchanged_for_a_2025_and_a_2026_client(
    tmp_path: Path, mode: str, era: str
) -> None:
    from ..test_readme import snippets

    code = next(code for name, code, _ in snippets() if name == "echo_server.py")
    (tmp_path / "echo_server.py").write_text(code)
    params = StdioServerParameters(command=sys.executable, args=["echo_server.py"], env=ENV, cwd=str(tmp_path))
    async with Client(params, mode=mode) as client:
        assert client.session.protocol_version == era
        result = await client.call_tool("echo", {"text": "hi"})
        assert result.content[0].text == "hi"  # type: ignore[union-attr]


@pytest.mark.req("client/elicitation#57", "2026-07-28:client/elicitation#46")
@pytest.mark.parametrize(("mode", "era"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_an_sdk_answer_that_does_not_fit_reaches_a_2025_handler_the_same_way_in_both_eras(
    mode: str, era: str
) -> None:
    from mcp_ref import RemoteProtocolError, RequestContext, Server

    server = Server("strict")

    @server.tool(description="a tool written for 2025")
    async def ask_number(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await ctx.elicit_form("How many?", {"n": {"type": "integer"}})
        except RemoteProtocolError as e:
            return f"{type(e).__name__} in {ctx.revision}: {e.message}"
        return "it fit"

    async def wrong(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"n": "many"})

    async with trio.open_nursery() as nursery:
        info = await nursery.start(lambda task_status: serve_http(server, task_status=task_status))
        async with Client(info.url, mode=mode, elicitation_callback=wrong) as client:
            got = await client.call_tool("ask_number", {})
        nursery.cancel_scope.cancel()
    expected = "the client's elicitation answer does not match the requested schema: n: expected an integer"
    assert got.content[0].text == f"InvalidAnswer in {era}: {expected}"  # type: ignore[union-attr]
