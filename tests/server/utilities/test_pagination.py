"""server/utilities/pagination: every list method pages, and the client follows cursors to the end."""

from typing import Any

import pytest

from mcp_ref.errors import RemoteProtocolError
from mcp_ref.schema.prompts import ListPromptsResult
from mcp_ref.schema.tools import ListToolsResult, Tool
from mcp_ref.session import RequestContext, Server
from mcp_ref.testing import memory_session_pair


def many_things(page_size: int) -> Server:
    server = Server("many", page_size=page_size)
    for i in range(5):

        async def fn(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return ""

        async def read(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
            return ""

        server.tool(f"tool{i}", input_schema={"type": "object"})(fn)
        server.prompt(f"prompt{i}")(fn)
        server.resource_template(f"test://t{i}/{{x}}", name=f"template{i}")(read)
    return server


@pytest.mark.req("server/utilities/pagination#1", "server/utilities/pagination#3")
async def test_tools_prompts_and_templates_page() -> None:
    async with memory_session_pair(many_things(page_size=2)) as client:
        first = await client.list_tools()
        assert [t.name for t in first.tools] == ["tool0", "tool1"] and first.next_cursor is not None
        second = await client.list_tools(first.next_cursor)
        assert [t.name for t in second.tools] == ["tool2", "tool3"]
        assert [t.name for t in await client.list_all_tools()] == [f"tool{i}" for i in range(5)]

        page = await client.list_prompts()
        assert len(page.prompts) == 2 and page.next_cursor is not None
        assert [p.name for p in await client.list_all_prompts()] == [f"prompt{i}" for i in range(5)]

        page_t = await client.list_resource_templates()
        assert len(page_t.resource_templates) == 2 and page_t.next_cursor is not None
        templates = await client.list_all_resource_templates()
        assert [t.name for t in templates] == [f"template{i}" for i in range(5)]

        # the last page is shorter and has no nextCursor
        last = await client.list_tools(second.next_cursor)
        assert [t.name for t in last.tools] == ["tool4"] and last.next_cursor is None


@pytest.mark.req("server/utilities/pagination#1")
async def test_the_client_assumes_no_page_size() -> None:
    # pages of 3, 1, none, 2: a short page -- even an empty one -- is not the last while a cursor follows
    pages = {None: (0, 3, "b"), "b": (3, 4, "c"), "c": (4, 4, "d"), "d": (4, 6, None)}
    server = Server("uneven")
    asked: list[str | None] = []

    async def uneven_tools(ctx: RequestContext, params: Any) -> ListToolsResult:
        cursor = params.cursor if params is not None else None
        asked.append(cursor)
        start, end, following = pages[cursor]
        tools = [Tool(name=f"tool{i}", input_schema={"type": "object"}) for i in range(start, end)]
        return ListToolsResult(tools=tools, next_cursor=following)

    server.set_handler("tools/list", uneven_tools)

    @server.tool()
    async def t(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return ""

    async with memory_session_pair(server) as client:
        assert [t.name for t in await client.list_all_tools()] == [f"tool{i}" for i in range(6)]
    assert asked == [None, "b", "c", "d"]


@pytest.mark.req("server/utilities/pagination#3")
async def test_a_server_repeating_a_cursor_is_refused() -> None:
    server = Server("loops")

    async def looping_tools(ctx: RequestContext, params: Any) -> ListToolsResult:
        # always "more", always the same cursor: a client that trusts it never stops
        return ListToolsResult(tools=[Tool(name="t", input_schema={"type": "object"})], next_cursor="again")

    async def looping_prompts(ctx: RequestContext, params: Any) -> ListPromptsResult:
        cursor = params.cursor if params is not None else None
        return ListPromptsResult(prompts=[], next_cursor="b" if cursor == "a" else "a")

    server.set_handler("tools/list", looping_tools)
    server.set_handler("prompts/list", looping_prompts)

    @server.tool()
    async def t(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return ""

    @server.prompt()
    async def p(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return ""

    async with memory_session_pair(server) as client:
        with pytest.raises(RemoteProtocolError, match="repeated the cursor 'again'"):
            await client.list_all_tools()
        with pytest.raises(RemoteProtocolError, match="repeated the cursor 'a'"):
            await client.list_all_prompts()
        await client.ping()


@pytest.mark.req("server/utilities/pagination#2")
@pytest.mark.parametrize("kind", ["tools", "prompts", "resources", "templates"])
async def test_cursors_stay_valid_and_skip_nothing_when_the_list_changes(kind: str) -> None:
    server = Server("changing", page_size=2)

    async def fn(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return ""

    async def read(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
        return ""

    def add(i: int) -> None:
        if kind == "tools":
            server.tool(f"n{i}", input_schema={"type": "object"})(fn)
        elif kind == "prompts":
            server.prompt(f"n{i}")(fn)
        elif kind == "resources":
            server.resource(f"test://n{i}", name=f"n{i}")(read)
        else:
            server.resource_template(f"test://n{i}/{{x}}", name=f"n{i}")(read)

    def remove(i: int) -> None:
        if kind == "tools":
            server.tools.remove(f"n{i}")
        elif kind == "prompts":
            server.prompts.remove(f"n{i}")
        elif kind == "resources":
            server.resources.remove(f"test://n{i}")
        else:
            server.resources.remove_template(f"test://n{i}/{{x}}")

    async def page(client: Any, cursor: str | None) -> tuple[list[str], str | None]:
        if kind == "tools":
            r: Any = await client.list_tools(cursor)
            return [t.name for t in r.tools], r.next_cursor
        if kind == "prompts":
            r = await client.list_prompts(cursor)
            return [p.name for p in r.prompts], r.next_cursor
        if kind == "resources":
            r = await client.list_resources(cursor)
            return [x.name for x in r.resources], r.next_cursor
        r = await client.list_resource_templates(cursor)
        return [t.name for t in r.resource_templates], r.next_cursor

    for i in range(5):
        add(i)
    async with memory_session_pair(server) as client:
        first, cursor = await page(client, None)
        assert first == ["n0", "n1"]
        remove(0)  # an item already listed goes: an offset would now skip n2
        remove(3)  # and one not listed yet
        add(5)  # added between pages: comes last, not lost
        second, cursor = await page(client, cursor)
        assert second == ["n2", "n4"]
        third, cursor = await page(client, cursor)
        assert third == ["n5"] and cursor is None
