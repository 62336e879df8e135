"""server/resources: list, read, templates, subscriptions, errors."""

import base64

import pytest
import trio

from mcp_ref.errors import ErrorCode, MCPError
from mcp_ref.schema.content import BlobResourceContents, TextResourceContents
from mcp_ref.session import RequestContext, Server
from mcp_ref.testing import memory_session_pair


def resource_server() -> Server:
    server = Server("res", page_size=2)

    @server.resource("test://static-text", name="static-text", mime_type="text/plain", title="Static text")
    async def static(ctx: RequestContext) -> str:
        return "hello"

    @server.resource("test://static-binary", mime_type="image/png")
    async def binary(ctx: RequestContext) -> bytes:
        return b"\x89PNG\x00\xff"

    @server.resource("test://third")
    async def third(ctx: RequestContext) -> str:
        return "3"

    @server.resource_template("test://template/{id}/data", mime_type="application/json")
    async def templated(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
        return f'{{"id": "{variables["id"]}"}}'

    return server


@pytest.mark.req("server/resources#1", "server/utilities/pagination#1", "server/utilities/pagination#3")
async def test_capability_and_paginated_listing() -> None:
    async with memory_session_pair(resource_server(), era="legacy") as client:
        caps = client.server_capabilities.resources
        assert caps is not None and caps.subscribe is True and caps.list_changed is True
        first = await client.list_resources()
        assert len(first.resources) == 2 and first.next_cursor is not None
        everything = await client.list_all_resources()
        assert [r.uri for r in everything] == ["test://static-text", "test://static-binary", "test://third"]
        assert everything[0].title == "Static text"
        templates = await client.list_all_resource_templates()
        assert [t.uri_template for t in templates] == ["test://template/{id}/data"]


@pytest.mark.req("server/resources#10", "server/prompts#5")
async def test_read_text_blob_and_template() -> None:
    async with memory_session_pair(resource_server(), era="legacy") as client:
        (text,) = (await client.read_resource("test://static-text")).contents
        assert text == TextResourceContents(uri="test://static-text", mime_type="text/plain", text="hello")
        (blob,) = (await client.read_resource("test://static-binary")).contents
        assert isinstance(blob, BlobResourceContents) and base64.b64decode(blob.blob) == b"\x89PNG\x00\xff"
        (data,) = (await client.read_resource("test://template/42/data")).contents
        assert isinstance(data, TextResourceContents) and data.text == '{"id": "42"}'
        assert data.mime_type == "application/json"


async def test_template_reads_ordinary_file_names() -> None:
    server = Server("files")

    @server.resource_template("file:///docs/{name}", mime_type="text/plain")
    async def doc(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
        return f"contents of {variables['name']}"

    async with memory_session_pair(server, era="legacy") as client:
        (got,) = (await client.read_resource("file:///docs/readme.md")).contents
        assert isinstance(got, TextResourceContents) and got.text == "contents of readme.md"
        (got,) = (await client.read_resource("file:///docs/my%20notes.v2.txt")).contents
        assert isinstance(got, TextResourceContents) and got.text == "contents of my notes.v2.txt"


@pytest.mark.req("server/resources#7", "server/resources#8", "server/resources#6", "2026-07-28:basic/index#23")
async def test_not_found_and_invalid_uris() -> None:
    async with memory_session_pair(resource_server(), era="legacy") as client:
        with pytest.raises(MCPError) as info:
            await client.read_resource("test://missing")
        assert info.value.code == ErrorCode.RESOURCE_NOT_FOUND == -32002
        assert info.value.data == {"uri": "test://missing"}
        with pytest.raises(MCPError) as info:
            await client.read_resource("no scheme here")
        assert info.value.code == ErrorCode.INVALID_PARAMS


@pytest.mark.req("server/utilities/pagination#2", "server/utilities/pagination#5")
async def test_invalid_cursor_is_invalid_params() -> None:
    async with memory_session_pair(resource_server(), era="legacy") as client:
        for cursor in ("garbage", "eyJrIjoidG9vbHMiLCJvIjoxfQ"):  # the second is a tools cursor
            with pytest.raises(MCPError) as info:
                await client.list_resources(cursor)
            assert info.value.code == ErrorCode.INVALID_PARAMS


@pytest.mark.req("server/utilities/pagination#4")
async def test_cursors_are_opaque_to_the_client() -> None:
    async with memory_session_pair(resource_server(), era="legacy") as client:
        page = await client.list_resources()
        assert page.next_cursor is not None
        again = await client.list_resources(page.next_cursor)  # passed back untouched
        assert [r.uri for r in again.resources] == ["test://third"]


async def test_subscriptions_and_updates() -> None:
    server = resource_server()
    updates: list[str] = []
    got = trio.Event()

    async def on_updated(uri: str) -> None:
        updates.append(uri)
        got.set()

    async with memory_session_pair(server, on_resource_updated=on_updated, era="legacy") as client:
        await client.subscribe_resource("test://template/7/data")
        server.resource_updated("test://template/7/data")
        server.resource_updated("test://static-text")  # nobody subscribed
        with trio.fail_after(5):
            await got.wait()
        await client.unsubscribe_resource("test://template/7/data")
        server.resource_updated("test://template/7/data")
        await client.ping()
        assert updates == ["test://template/7/data"]
        with pytest.raises(MCPError) as info:
            await client.subscribe_resource("test://missing")
        assert info.value.code == ErrorCode.RESOURCE_NOT_FOUND


@pytest.mark.req("server/resources#2")
async def test_list_changed() -> None:
    server = resource_server()
    kinds: list[str] = []
    got = trio.Event()

    async def on_list_changed(kind: str) -> None:
        kinds.append(kind)
        got.set()

    async with memory_session_pair(server, on_list_changed=on_list_changed, era="legacy") as client:

        @server.resource("test://new")
        async def new(ctx: RequestContext) -> str:
            return "new"

        with trio.fail_after(5):
            await got.wait()
        assert kinds == ["resources"]
        assert (await client.read_resource("test://new")).contents[0].text == "new"  # type: ignore[union-attr]


async def test_no_resources_no_capability() -> None:
    async with memory_session_pair(Server("bare"), era="legacy") as client:
        assert client.server_capabilities.resources is None
        from mcp_ref.errors import LocalProtocolError

        with pytest.raises(LocalProtocolError):
            await client.list_resources()
