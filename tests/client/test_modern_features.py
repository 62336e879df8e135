"""Client features on the 2026-07-28 path: the capabilities every request declares, the result
cache (ttlMs, snapshots of paged lists, refused cursors), cursors kept opaque, resource-not-found
in both codes."""

import json
from collections.abc import Callable
from typing import Any

import pytest
import trio

from mcp_ref import RequestContext, ResourceNotFound, Server
from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.schema import CreateMessageResult, ElicitResult, Root, TextContent
from mcp_ref.session.client import open_session
from mcp_ref.session.modern_client import EraCache, ResultCache

Answer = Callable[[dict[str, Any]], Any]


class Err(Exception):
    """What a scripted answer raises to answer with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


async def script(channel: Any, answer: Answer, seen: list[dict[str, Any]]) -> None:
    """A scripted 2026-07-28 server: every request is recorded; ``answer(message)`` gives the
    result or raises Err."""
    async for data in channel:
        message = json.loads(data)
        if "id" not in message:
            continue
        seen.append(message)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if message["method"] == "server/discover":
            reply["result"] = {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "resources": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "script", "version": "0"}},
            }
        else:
            try:
                reply["result"] = {"resultType": "complete", **answer(message)}
            except Err as e:
                reply["error"] = {"code": e.code, "message": e.message, **({"data": e.data} if e.data else {})}
        await channel.send(json.dumps(reply).encode())


def cursor_of(message: dict[str, Any]) -> Any:
    return message.get("params", {}).get("cursor")


@pytest.mark.req(
    "2026-07-28:client/elicitation#4",
    "2026-07-28:client/sampling#6",
    "2026-07-28:client/roots#2",
)
async def test_every_request_declares_the_clients_capabilities() -> None:
    seen: list[dict[str, Any]] = []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    async def sample(ctx: Any, params: Any) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=TextContent(text="x"), model="m")

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, lambda m: {"tools": []}, seen)
        async with open_session(
            client_end,
            era_cache=EraCache(),
            elicitation=elicit,
            sampling=sample,
            roots=[Root(uri="file:///w")],
        ) as client:
            await client.list_tools()
            await client.list_tools(cache=False)
        nursery.cancel_scope.cancel()
    assert [m["method"] for m in seen] == ["server/discover", "tools/list", "tools/list"]
    for message in seen:
        caps = message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        assert {"elicitation", "sampling", "roots"} <= set(caps), message["method"]
    bare: list[dict[str, Any]] = []
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, lambda m: {"tools": []}, bare)
        async with open_session(client_end, era_cache=EraCache()) as client:
            await client.list_tools()
        nursery.cancel_scope.cancel()
    assert not {"elicitation", "sampling", "roots"} & set(bare[-1]["params"]["_meta"][CAPS])


CAPS = "io.modelcontextprotocol/clientCapabilities"


@pytest.mark.req(
    "2026-07-28:server/utilities/caching#4",
    "2026-07-28:server/utilities/caching#5",
    "2026-07-28:server/utilities/caching#6",
    "2026-07-28:server/utilities/caching#7",
    "2026-07-28:server/utilities/caching#21",
)
async def test_pages_are_reused_while_fresh_refetched_by_their_cursor_and_on_demand(
    autojump_clock: trio.abc.Clock,
) -> None:
    seen: list[dict[str, Any]] = []

    def pages(message: dict[str, Any]) -> Any:
        if message["method"] == "prompts/list":
            return {"prompts": [], "ttlMs": 0}  # stale at once: never served from the cache
        if cursor_of(message) is None:
            return {"tools": [], "nextCursor": "p2", "ttlMs": 60_000}
        return {"tools": [], "ttlMs": 1_000}

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, pages, seen)
        async with open_session(client_end, era_cache=EraCache()) as client:

            def asked() -> list[Any]:
                return [cursor_of(m) for m in seen if m["method"] == "tools/list"]

            await client.list_tools()
            await client.list_tools("p2")
            await client.list_tools()
            await client.list_tools("p2")
            assert asked() == [None, "p2"]  # both fresh: reused
            await trio.sleep(2)
            await client.list_tools()
            await client.list_tools("p2")
            assert asked() == [None, "p2", "p2"]  # the expired page alone, by its own cursor
            await client.list_tools(cache=False)
            assert asked()[-1] is None  # fetched on demand, though fresh
            await client.list_prompts()
            await client.list_prompts()
            assert [m["method"] for m in seen].count("prompts/list") == 2
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:server/utilities/caching#22")
async def test_a_whole_list_is_one_snapshot_never_fresh_pages_mixed_with_old_ones(
    autojump_clock: trio.abc.Clock,
) -> None:
    seen: list[dict[str, Any]] = []
    version = [1]

    def pages(message: dict[str, Any]) -> Any:
        v = version[0]
        if cursor_of(message) is None:
            return {"tools": [tool(f"a{v}")], "nextCursor": "p2", "ttlMs": 60_000}
        return {"tools": [tool(f"b{v}")], "ttlMs": 1_000}

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, pages, seen)
        async with open_session(client_end, era_cache=EraCache(), validate_tool_results=False) as client:
            assert [t.name for t in await client.list_all_tools()] == ["a1", "b1"]
            assert [t.name for t in await client.list_all_tools()] == ["a1", "b1"]  # all fresh: no request
            assert len(seen) == 3
            version[0] = 2
            await trio.sleep(2)  # the second page expires, the first is still fresh
            assert [t.name for t in await client.list_all_tools()] == ["a2", "b2"]
            assert [cursor_of(m) for m in seen[3:]] == [None, "p2"]
        nursery.cancel_scope.cancel()


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}}


@pytest.mark.req("2026-07-28:server/utilities/caching#23")
async def test_a_refused_cursor_drops_the_cached_pages_and_the_list_is_read_again() -> None:
    seen: list[dict[str, Any]] = []
    generation = [1]

    def pages(message: dict[str, Any]) -> Any:
        cursor = cursor_of(message)
        g = generation[0]
        if cursor is None:
            if sum(1 for m in seen if cursor_of(m) is None and m["method"] == "tools/list") == 1:
                generation[0] = 2  # the list changes between this page and the next
            return {"tools": [tool("a")], "nextCursor": f"g{g}", "ttlMs": 60_000}
        if cursor != f"g{generation[0]}":
            raise Err(-32602, "Invalid params: stale cursor")
        return {"tools": [tool(f"b{generation[0]}")], "ttlMs": 60_000}

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, pages, seen)
        async with open_session(client_end, era_cache=EraCache(), validate_tool_results=False) as client:
            await client.list_tools("g1")  # a page of generation 1, kept
            assert client.cache is not None and client.cache.get("tools/list", "g1") is not None
            assert [t.name for t in await client.list_all_tools()] == ["a", "b2"]
            assert [cursor_of(m) for m in seen if m["method"] == "tools/list"] == ["g1", None, "g1", None, "g2"]
            assert client.cache.get("tools/list", "g1") is None  # dropped with the rest of the list
            generation[0] = 3
            with pytest.raises(Exception, match="stale cursor"):
                await client.list_tools("g2", cache=False)  # one page asked for: the error is the caller's
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:server/utilities/pagination#5", "2026-07-28:server/utilities/pagination#6")
async def test_an_empty_cursor_is_a_cursor_not_the_end() -> None:
    seen: list[dict[str, Any]] = []

    def pages(message: dict[str, Any]) -> Any:
        if cursor_of(message) is None:
            return {"tools": [tool("first")], "nextCursor": ""}
        return {"tools": [tool("second")]}

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, pages, seen)
        async with open_session(client_end, era_cache=EraCache(), validate_tool_results=False) as client:
            assert [t.name for t in await client.list_all_tools()] == ["first", "second"]
        nursery.cancel_scope.cancel()
    assert [cursor_of(m) for m in seen[1:]] == [None, ""]


@pytest.mark.req("2026-07-28:server/resources#15")
@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_resource_not_found_is_one_exception_whatever_the_code(era: str) -> None:
    server = Server("r", "1")

    @server.resource("test://here")
    async def here(ctx: RequestContext) -> str:
        return "here"

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        async with open_session(client_end, era=era, era_cache=EraCache()) as client:
            assert (await client.read_resource("test://here")).contents[0].text == "here"  # type: ignore[union-attr]
            with pytest.raises(ResourceNotFound) as caught:
                await client.read_resource("test://gone")
        nursery.cancel_scope.cancel()
    assert caught.value.uri == "test://gone"
    assert caught.value.code == (-32602 if era == "modern" else -32002)  # the code the server sent


def test_a_cache_forgets_one_method_and_reads_whole_lists_only_when_every_page_is_fresh() -> None:
    now = [0.0]
    cache = ResultCache(clock=lambda: now[0])
    cache.put("tools/list", None, {"tools": [1], "nextCursor": "2", "ttlMs": 1000})
    assert cache.pages("tools/list", "tools") is None  # the second page is not here
    cache.put("tools/list", "2", {"tools": [2], "ttlMs": 10})
    cache.put("prompts/list", None, {"prompts": [], "ttlMs": 1000})
    assert cache.pages("tools/list", "tools") == [1, 2]
    now[0] = 0.5
    assert cache.pages("tools/list", "tools") is None  # one page expired: no snapshot
    cache.forget("tools/list")
    assert cache.get("tools/list", None) is None and cache.get("prompts/list", None) is not None


@pytest.mark.req("2026-07-28:server/utilities/caching#14")
async def test_nothing_is_fetched_in_the_background_when_a_result_expires(autojump_clock: trio.abc.Clock) -> None:
    seen: list[dict[str, Any]] = []
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, lambda m: {"tools": [], "ttlMs": 100}, seen)
        async with open_session(client_end, era_cache=EraCache()) as client:
            await client.list_tools()
            await trio.sleep(3600)  # many TTLs pass without anyone asking
            assert [m["method"] for m in seen] == ["server/discover", "tools/list"]
            await client.list_tools()  # asked again: fetched again
            assert len(seen) == 3
        nursery.cancel_scope.cancel()


def sampling_round(n: int) -> dict[str, Any]:
    return {
        "resultType": "input_required",
        "inputRequests": {
            f"s{n}": {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": f"q{n}"}}],
                    "maxTokens": 5,
                },
            }
        },
    }


@pytest.mark.req("2026-07-28:client/sampling#14", "2026-07-28:client/sampling#20", "2026-07-28:client/sampling#13")
async def test_sampling_input_requests_stand_alone_and_any_stop_reason_passes() -> None:
    received: list[list[str]] = []

    async def sample(ctx: Any, params: Any) -> CreateMessageResult:
        received.append([m.content.text for m in params.messages])
        return CreateMessageResult(role="assistant", content=TextContent(text="a"), model="m", stop_reason="refusal")

    def answer(message: dict[str, Any]) -> Any:
        params = message["params"]
        if "inputResponses" not in params:
            n = 1 if params["arguments"]["n"] == 1 else 2
            return sampling_round(n)
        (reply,) = params["inputResponses"].values()
        assert reply["stopReason"] == "refusal"  # a value of the client's own, sent as it is
        return {"content": [{"type": "text", "text": "done"}]}

    seen: list[dict[str, Any]] = []
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, answer, seen)
        async with open_session(
            client_end, era_cache=EraCache(), sampling=sample, validate_tool_results=False
        ) as client:
            await client.call_tool("t", {"n": 1})
            await client.call_tool("t", {"n": 2})
        nursery.cancel_scope.cancel()
    assert received == [["q1"], ["q2"]]  # each request's own messages, nothing kept from the one before

    from mcp_ref.errors import DecodeError
    from mcp_ref.schema._converter import decode
    from mcp_ref.schema.sampling import SamplingMessage

    with pytest.raises(DecodeError):
        decode({"role": "system", "content": {"type": "text", "text": "x"}}, SamplingMessage)
    with pytest.raises(DecodeError):
        decode({"role": "user"}, SamplingMessage)


@pytest.mark.req("2026-07-28:client/sampling#24")
async def test_a_server_cannot_make_the_client_sample_without_end() -> None:
    from mcp_ref.session.modern_client import InputRoundsExceeded

    calls: list[int] = []

    async def sample(ctx: Any, params: Any) -> CreateMessageResult:
        calls.append(ctx.round)
        return CreateMessageResult(role="assistant", content=TextContent(text="a"), model="m")

    seen: list[dict[str, Any]] = []
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, lambda m: sampling_round(len(seen)), seen)
        async with open_session(client_end, era_cache=EraCache(), sampling=sample, max_input_rounds=3) as client:
            with pytest.raises(InputRoundsExceeded):
                await client.call_tool("t", {})
        nursery.cancel_scope.cancel()
    assert calls == [0, 1, 2, 3]  # the first answer and three retries' worth, then the client gives up


@pytest.mark.req("2026-07-28:server/utilities/caching#9", "2026-07-28:server/utilities/caching#10")
@pytest.mark.parametrize("hints", [{"ttlMs": -5}, {"ttlMs": "soon"}, {"ttlMs": None}, {"cacheScope": "galactic"}, {}])
async def test_odd_hints_never_fail_a_result_and_are_read_as_stale(hints: dict[str, Any]) -> None:
    seen: list[dict[str, Any]] = []
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(script, server_end, lambda m: {"tools": [tool("t")], **hints}, seen)
        async with open_session(client_end, era_cache=EraCache(), validate_tool_results=False) as client:
            for _ in range(2):
                assert [t.name for t in (await client.list_tools()).tools] == ["t"]
        nursery.cancel_scope.cancel()
    assert [m["method"] for m in seen].count("tools/list") == 2  # nothing kept: fetched each time
