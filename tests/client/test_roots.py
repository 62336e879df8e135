"""client/roots: the provider, roots/list from a server handler, list_changed."""

import json
from typing import Any

import pytest
import trio

from mcp_ref.errors import LocalProtocolError
from mcp_ref.schema.roots import ListRootsResult, Root
from mcp_ref.session import RequestContext, Server
from mcp_ref.testing import memory_session_pair


def roots_server(seen: list[list[str]], changed: trio.Event) -> Server:
    server = Server("roots")

    @server.tool()
    async def show_roots(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        result: ListRootsResult = await ctx.list_roots()
        seen.append([r.uri for r in result.roots])
        return ",".join(r.uri for r in result.roots)

    async def on_changed(session: Any, params: Any) -> None:
        changed.set()

    server.on_notification("notifications/roots/list_changed", on_changed)
    return server


@pytest.mark.req("client/roots#1", "client/roots#2", "client/roots#8")
async def test_roots_round_trip_and_change_notification() -> None:
    seen: list[list[str]] = []
    changed = trio.Event()
    roots = [Root(uri="file:///home/me/project", name="project")]
    async with memory_session_pair(roots_server(seen, changed), roots=roots, era="legacy") as client:
        assert client.session.connection.capabilities.roots is not None  # type: ignore[union-attr]
        await client.call_tool("show_roots")
        await client.set_roots([Root(uri="file:///tmp/other")])
        with trio.fail_after(5):
            await changed.wait()
        await client.call_tool("show_roots")
    assert seen == [["file:///home/me/project"], ["file:///tmp/other"]]


@pytest.mark.req("client/roots#8")
def test_within_roots_respects_their_boundaries() -> None:
    from mcp_ref.client.roots import within_roots

    roots = [Root(uri="file:///home/me/project"), Root(uri="file:///tmp/scratch/")]
    for inside in (
        "file:///home/me/project",
        "file:///home/me/project/src/a.py",
        "file:///tmp/scratch/x",
        "file://localhost/home/me/project/b",
        "file:///home/me/project/./src/../c",
    ):
        assert within_roots(inside, roots), inside
    for outside in (
        "file:///home/me/projects/evil",  # a sibling sharing the prefix
        "file:///home/me/project/../secret",
        "file:///home/me/project/%2e%2e/secret",  # the same, percent-encoded
        "file:///etc/passwd",
        "file://otherhost/home/me/project/a",
        "https://example.com/home/me/project/a",
        "file:relative/path",
        "file:///home/me/project/a\x00b",
    ):
        assert not within_roots(outside, roots), outside
    assert not within_roots("file:///home/me/project/a", [])


@pytest.mark.req("client/roots#3", "client/roots#5")
def test_only_file_uris_without_traversal() -> None:
    from mcp_ref.client.roots import RootsProvider

    with pytest.raises(ValueError, match="file://"):
        RootsProvider([Root(uri="https://example.com/")])
    with pytest.raises(ValueError, match=r"\.\."):
        RootsProvider([Root(uri="file:///home/../etc")])


@pytest.mark.req("client/roots#4", "client/roots#8")
async def test_server_cannot_ask_a_client_without_roots() -> None:
    server = Server("s")
    errors: list[str] = []

    @server.tool()
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await ctx.list_roots()
        except LocalProtocolError as e:
            errors.append(str(e))
        return "ok"

    async with memory_session_pair(server, era="legacy") as client:
        await client.call_tool("ask")
    assert errors and "roots" in errors[0]


@pytest.mark.req("client/roots#4")
@pytest.mark.parametrize("declared", [False, True])
def test_a_client_without_roots_answers_roots_list_with_method_not_found(declared: bool) -> None:
    """A server that ignores the capabilities and asks anyway gets -32601 (not -32603,
    not an answer) from a client that did not declare roots; the session goes on."""
    from mcp_ref.events import MessageRejected, RequestReceived
    from mcp_ref.schema.lifecycle import ClientCapabilities, RootsCapability

    from ..test_connection import handshake

    caps = ClientCapabilities(roots=RootsCapability(list_changed=True)) if declared else None
    client, _ = handshake(client_caps=caps)
    (event,) = client.receive_message('{"jsonrpc": "2.0", "id": 9, "method": "roots/list"}')
    if declared:
        assert isinstance(event, RequestReceived) and event.method == "roots/list"
        return
    assert isinstance(event, MessageRejected) and event.reply is not None
    reply = json.loads(event.reply)
    assert reply["id"] == 9 and reply["error"]["code"] == -32601 and "roots" in reply["error"]["message"]
    client.send_request("ping", None)  # the session survives
