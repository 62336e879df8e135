"""The 2026-07-28 client: the era probe, the same calls, MRTR through the application's callbacks,
subscriptions/listen, cancellation, and the fallback to a 2025 session."""

import itertools
from typing import Any

import pytest
import trio

from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.errors import MCPError, UnsupportedProtocolVersion
from mcp_ref.schema import ElicitResult
from mcp_ref.session import RequestContext, Server
from mcp_ref.session.client import open_session
from mcp_ref.session.modern_client import EraCache, InputRoundsExceeded


def make_server(**options: Any) -> Server:
    server = Server("modern-peer", "1.0", **options)

    @server.tool()
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text"))

    @server.tool()
    async def ask_name(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit_form("Your name?", {"name": {"type": "string"}})
        return f"hello {answer.content['name']}" if answer.action == "accept" else answer.action

    return server


async def answer_bob(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "bob"})


@pytest.mark.req(
    "2026-07-28:basic/versioning#4",
    "2026-07-28:basic/index#1",
    "2026-07-28:basic/transports/index#2",
    "2026-07-28:basic/transports/stdio#16",
    "2026-07-28:server/discover#2",
    "2026-07-28:basic/index#52",
    "2026-07-28:basic/index#55",
)
async def test_a_modern_server_is_spoken_to_in_2026() -> None:
    server = make_server()
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        async with open_session(
            client_end, validate_tool_results=False, elicitation=answer_bob, era_cache=EraCache()
        ) as client:
            assert client.protocol_version == "2026-07-28" and client.era == "modern"
            assert client.server_info.name == "modern-peer"
            tools = await client.list_all_tools()
            assert {t.name for t in tools} == {"echo", "ask_name"}
            result = await client.call_tool("echo", {"text": "hi"})
            assert result.content[0].text == "hi"
            result = await client.call_tool("ask_name", {})
            assert result.content[0].text == "hello bob"
            await client.ping()  # (a server/discover round trip: 2026-07-28 has no ping)
        nursery.cancel_scope.cancel()


async def serve_script(channel: Any, answer: Any) -> None:
    """A scripted 2026-07-28 server: ``answer(message)`` gives the result (or None: no answer)."""
    import json

    async for data in channel:
        message = json.loads(data)
        if "id" not in message:
            continue
        if message["method"] == "server/discover":
            result: Any = {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "script", "version": "0"}},
            }
        else:
            result = answer(message)
        if result is not None:
            await channel.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())


@pytest.mark.req(
    "2026-07-28:basic/patterns/mrtr#3",
    "2026-07-28:basic/index#31",
    "2026-07-28:basic/patterns/mrtr#21",
    "2026-07-28:basic/patterns/mrtr#23",
    "2026-07-28:basic/patterns/mrtr#24",
    "2026-07-28:basic/patterns/mrtr#26",
)
async def test_mrtr_retries_carry_the_exact_state_under_new_ids_and_are_bounded() -> None:
    seen: list[dict[str, Any]] = []

    def always_input(message: dict[str, Any]) -> Any:
        seen.append(message)
        n = len(seen)
        return {
            "resultType": "input_required",
            "inputRequests": {
                f"q{n}": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "again?",
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                    },
                }
            },
            "requestState": f"opaque-{n}==",
        }

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_script, server_end, always_input)
        async with open_session(
            client_end, validate_tool_results=False, elicitation=answer_bob, era_cache=EraCache(), max_input_rounds=3
        ) as client:
            with pytest.raises(InputRoundsExceeded, match="3 retries"):
                await client.call_tool("loop", {})
        nursery.cancel_scope.cancel()
    assert len(seen) == 4  # the call and three retries
    ids = [m["id"] for m in seen]
    assert len(set(ids)) == 4  # [2026-07-28:basic/patterns/mrtr#24] a new id each time
    assert "requestState" not in seen[0]["params"] and "inputResponses" not in seen[0]["params"]
    for before, retry in itertools.pairwise(seen):
        n = seen.index(before) + 1
        assert retry["params"]["requestState"] == f"opaque-{n}=="  # exactly as received
        assert retry["params"]["inputResponses"] == {f"q{n}": {"action": "accept", "content": {"name": "bob"}}}
        assert retry["params"]["name"] == "loop" and retry["params"]["arguments"] == {}


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#25", "2026-07-28:basic/index#14")
async def test_no_request_state_means_none_in_the_retry_and_an_absent_result_type_is_complete() -> None:
    seen: list[dict[str, Any]] = []

    def once(message: dict[str, Any]) -> Any:
        seen.append(message)
        if len(seen) == 1:
            return {
                "resultType": "input_required",
                "inputRequests": {
                    "c": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "ok?",
                            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                        },
                    }
                },
            }
        return {"content": [{"type": "text", "text": "done"}]}  # (no resultType: complete)

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_script, server_end, once)
        async with open_session(
            client_end, validate_tool_results=False, elicitation=answer_bob, era_cache=EraCache()
        ) as client:
            result = await client.call_tool("t", {})
            assert result.content[0].text == "done"
        nursery.cancel_scope.cancel()
    assert "requestState" not in seen[1]["params"] and "c" in seen[1]["params"]["inputResponses"]


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#18")
async def test_an_input_request_for_an_undeclared_capability_is_refused() -> None:
    def sampling(message: dict[str, Any]) -> Any:
        return {
            "resultType": "input_required",
            "inputRequests": {"s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}},
        }

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_script, server_end, sampling)
        async with open_session(client_end, validate_tool_results=False, era_cache=EraCache()) as client:
            with pytest.raises(Exception, match="did not declare"):
                await client.call_tool("t", {})
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/transports/stdio#17", "2026-07-28:basic/versioning#9")
async def test_a_legacy_server_gets_initialize_and_the_era_is_cached() -> None:
    server = make_server(modern_versions=())
    cache = EraCache()
    for _ in range(2):
        client_end, server_end = memory_channel_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve, server_end)
            async with open_session(client_end, era_cache=cache, era_key="peer") as client:
                assert client.era == "legacy" and client.protocol_version == "2025-11-25"
                assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"
            nursery.cancel_scope.cancel()
    assert cache.get("peer") == "legacy"


async def test_a_pinned_legacy_version_skips_the_probe() -> None:
    server = make_server()
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        async with open_session(client_end, protocol_version="2025-06-18", era_cache=EraCache()) as client:
            assert client.era == "legacy" and client.protocol_version == "2025-06-18"
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/transports/stdio#16", "2026-07-28:basic/transports/stdio#17")
async def test_a_silent_server_falls_back_after_the_probe_timeout(autojump_clock: Any) -> None:
    """A legacy server that never answers an unknown request before initialize."""
    import json

    async def silent_until_initialize(channel: Any) -> None:
        async for data in channel:
            message = json.loads(data)
            if message.get("method") == "initialize":
                result = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "old", "version": "1"},
                }
                await channel.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(silent_until_initialize, server_end)
        start = trio.current_time()
        async with open_session(client_end, discover_timeout=5, era_cache=EraCache()) as client:
            assert client.era == "legacy" and client.server_info.name == "old"
            assert trio.current_time() - start == pytest.approx(5)
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "2026-07-28:basic/patterns/subscriptions#4",
    "2026-07-28:basic/patterns/subscriptions#5",
    "2026-07-28:basic/transports/stdio#8",
)
async def test_list_changed_through_subscriptions_listen() -> None:
    server = make_server()
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        async with open_session(client_end, era_cache=EraCache()) as client:
            async with client.listen(tools=True, prompts=True) as sub:
                assert sub.acknowledged is not None and sub.acknowledged.get("toolsListChanged") is True
                # (the server has no prompts that can change: that part is refused, the rest flows)
                assert sub.refused == {"promptsListChanged": True}

                @server.tool()
                async def added(ctx: RequestContext, arguments: dict[str, Any]) -> str:
                    return "new"

                with trio.fail_after(5):
                    async for method, params in sub:
                        assert method == "notifications/tools/list_changed"
                        assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == sub.id
                        break
            assert "added" in {t.name for t in await client.list_all_tools()}
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "2026-07-28:basic/patterns/cancellation#1",
    "2026-07-28:basic/patterns/cancellation#5",
    "2026-07-28:basic/transports/stdio#10",
)
async def test_cancelling_a_call_tells_the_server() -> None:
    server = make_server()
    started, stopped = trio.Event(), trio.Event()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            stopped.set()
        return ""

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        async with open_session(client_end, era_cache=EraCache()) as client:
            with trio.move_on_after(5) as scope:
                async with trio.open_nursery() as inner:
                    inner.start_soon(client.call_tool, "hang", {})
                    await started.wait()
                    inner.cancel_scope.cancel()
                with trio.fail_after(5):
                    await stopped.wait()
            assert not scope.cancelled_caught
            assert (await client.call_tool("echo", {"text": "still"})).content[0].text == "still"
        nursery.cancel_scope.cancel()


async def test_errors_are_mcp_errors_and_the_log_level_travels_per_request() -> None:
    server = make_server()
    logs: list[Any] = []

    @server.tool()
    async def noisy(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.log("info", "working")
        return "ok"

    async def on_log(params: Any) -> None:
        logs.append(params)

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        async with open_session(client_end, era_cache=EraCache(), on_log=on_log) as client:
            with pytest.raises(MCPError):
                await client.get_prompt("nope")
            await client.call_tool("noisy", {})
            assert logs == []  # no level asked for: no notifications/message
            await client.set_logging_level("debug")
            await client.call_tool("noisy", {})
            with trio.fail_after(2):
                while not logs:
                    await trio.sleep(0.01)
            assert logs[0].data == "working"
        nursery.cancel_scope.cancel()


async def test_over_streamable_http_in_2026() -> None:
    from functools import partial

    from mcp_ref.session.http import open_http_client, serve_http

    server = make_server()

    @server.tool()
    async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, 2)
        return "slow done"

    async with trio.open_nursery() as nursery:
        info = await nursery.start(partial(serve_http, server, port=0))
        async with open_http_client(info.url, elicitation=answer_bob, era_cache=EraCache()) as client:
            assert client.era == "modern" and client.protocol_version == "2026-07-28"
            assert {t.name for t in await client.list_all_tools()} >= {"echo", "ask_name"}
            assert (await client.call_tool("echo", {"text": "über"})).content[0].text == "über"
            assert (await client.call_tool("ask_name", {})).content[0].text == "hello bob"
            seen: list[float] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                seen.append(p)

            assert (await client.call_tool("slow", {}, progress=on_progress)).content[0].text == "slow done"
            assert seen == [1]
            async with client.listen(tools=True) as sub:

                @server.tool()
                async def later(ctx: RequestContext, arguments: dict[str, Any]) -> str:
                    return "later"

                with trio.fail_after(5):
                    async for method, _ in sub:
                        assert method == "notifications/tools/list_changed"
                        break
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "2026-07-28:server/utilities/caching#2",
    "2026-07-28:server/utilities/caching#8",
    "2026-07-28:server/utilities/caching#9",
    "2026-07-28:server/utilities/caching#10",
    "2026-07-28:server/utilities/caching#13",
    "2026-07-28:server/utilities/caching#16",
)
async def test_results_are_reused_for_their_ttl_and_dropped_on_list_changed(autojump_clock: Any) -> None:
    calls: list[str] = []

    def lists(message: dict[str, Any]) -> Any:
        calls.append(message["method"])
        if message["method"] == "tools/list":
            return {"resultType": "complete", "tools": [], "ttlMs": 60_000, "cacheScope": "public"}
        if message["method"] == "prompts/list":
            return {"resultType": "complete", "prompts": [], "ttlMs": 0, "cacheScope": "public"}
        return {"resultType": "complete"}

    from mcp_ref.session.modern_client import ResultCache

    cache = ResultCache()
    cache.put("tools/list", None, {"ttlMs": 1000})
    assert cache.get("tools/list", None) == {"ttlMs": 1000}
    await trio.sleep(1.0)
    assert cache.get("tools/list", None) is None  # stale once received + ttlMs is reached
    cache.put("tools/list", None, {"ttlMs": -5})
    cache.put("tools/list", "c2", {})
    assert cache.get("tools/list", None) is None and cache.get("tools/list", "c2") is None
    cache.put("resources/read", "file:///a", {"ttlMs": 1000})
    cache.put("resources/read", "file:///b", {"ttlMs": 1000})
    cache.invalidate("notifications/resources/updated", {"uri": "file:///a"})
    assert cache.get("resources/read", "file:///a") is None and cache.get("resources/read", "file:///b")

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_script, server_end, lists)
        async with open_session(client_end, validate_tool_results=False, era_cache=EraCache()) as client:
            await client.list_tools()
            await client.list_tools()
            await client.list_prompts()
            await client.list_prompts()
            assert calls == ["tools/list", "prompts/list", "prompts/list"]
            assert client.cache is not None
            client.cache.invalidate("notifications/tools/list_changed")
            await client.list_tools()
            assert calls[-1] == "tools/list"
            await trio.sleep(61)
            await client.list_tools()
            assert calls.count("tools/list") == 3
        nursery.cancel_scope.cancel()


def header_server() -> Server:
    server = make_server()

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "q": {"type": "string"}},
        }
    )
    async def regional(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return f"{arguments.get('region')}:{arguments.get('q')}"

    return server


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#35",
    "2026-07-28:basic/transports/streamable-http#36",
    "2026-07-28:basic/transports/streamable-http#49",
    "2026-07-28:basic/transports/streamable-http#50",
    "2026-07-28:basic/transports/streamable-http#56",
)
async def test_over_http_x_mcp_header_values_are_mirrored() -> None:
    from functools import partial

    from mcp_ref.session.http import open_http_client, serve_http

    server = header_server()
    async with trio.open_nursery() as nursery:
        info = await nursery.start(partial(serve_http, server, port=0))
        async with open_http_client(info.url, era_cache=EraCache()) as client:
            assert "regional" in {t.name for t in await client.list_all_tools()}
            # (the server refuses a call whose Mcp-Param-Region is missing or differs: -32020)
            result = await client.call_tool("regional", {"region": "Zürich", "q": "x"})
            assert result.content[0].text == "Zürich:x"
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#45",
    "2026-07-28:basic/transports/streamable-http#46",
    "2026-07-28:basic/transports/streamable-http#47",
    "2026-07-28:basic/transports/streamable-http#48",
)
def test_tools_with_invalid_header_annotations_are_left_out_over_http_only(caplog: pytest.LogCaptureFixture) -> None:
    from mcp_ref.schema import ListToolsResult, Tool
    from mcp_ref.session.client import ClientSession
    from mcp_ref.session.modern_client import ModernSession

    good = Tool(
        name="good", input_schema={"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}
    )
    bad = Tool(
        name="bad", input_schema={"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
    )
    listed = ListToolsResult(tools=[good, bad])

    class Channel:
        modern = "2026-07-28"

    session = ModernSession.__new__(ModernSession)
    session.channel = Channel()  # type: ignore[assignment]
    client = ClientSession(session, None)  # type: ignore[arg-type]
    kept = client._usable_over_http(listed)
    assert [t.name for t in kept.tools] == ["good"] and "good" in client._param_headers
    (warning,) = [r for r in caplog.records if r.levelname == "WARNING"]
    assert "'bad'" in warning.getMessage() and "x-mcp-header" in warning.getMessage()
    session.channel.modern = None  # type: ignore[attr-defined]
    assert not client._over_http_modern()  # (stdio, memory: list_tools keeps every tool)


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#57")
async def test_over_http_a_call_not_listed_first_learns_its_headers_on_header_mismatch() -> None:
    from functools import partial

    from mcp_ref.session.http import open_http_client, serve_http

    server = header_server()
    async with trio.open_nursery() as nursery:
        info = await nursery.start(partial(serve_http, server, port=0))
        async with open_http_client(info.url, era_cache=EraCache()) as client:
            result = await client.call_tool("regional", {"region": "eu", "q": "y"})
            assert result.content[0].text == "eu:y"
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#23")
async def test_over_http_cancelling_closes_the_stream_and_the_server_stops() -> None:
    from functools import partial

    from mcp_ref.session.http import open_http_client, serve_http

    server = make_server()
    started, stopped = trio.Event(), trio.Event()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            stopped.set()
        return ""

    async with trio.open_nursery() as nursery:
        info = await nursery.start(partial(serve_http, server, port=0))
        async with open_http_client(info.url, era_cache=EraCache()) as client:
            async with trio.open_nursery() as inner:
                inner.start_soon(client.call_tool, "hang", {})
                with trio.fail_after(5):
                    await started.wait()
                inner.cancel_scope.cancel()
            with trio.fail_after(5):
                await stopped.wait()
            assert (await client.call_tool("echo", {"text": "on"})).content[0].text == "on"
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#70", "2026-07-28:basic/transports/streamable-http#71")
async def test_over_http_a_legacy_server_gets_initialize() -> None:
    from functools import partial

    from mcp_ref.session.http import open_http_client, serve_http

    server = make_server(modern_versions=())
    async with trio.open_nursery() as nursery:
        info = await nursery.start(partial(serve_http, server, port=0))
        async with open_http_client(info.url, era_cache=EraCache()) as client:
            assert client.era == "legacy" and client.protocol_version == "2025-11-25"
            assert (await client.call_tool("echo", {"text": "old"})).content[0].text == "old"
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#10",
    "2026-07-28:basic/transports/streamable-http#25",
    "2026-07-28:basic/transports/streamable-http#26",
    "2026-07-28:basic/transports/streamable-http#32",
)
async def test_over_http_a_broken_stream_is_reissued_with_a_new_id_only_when_safe() -> None:
    """A scripted server whose SSE answers break before the response: tools/list is sent again
    with a new id and succeeds; a tools/call is not repeated (StreamBroken)."""
    import json
    from functools import partial

    import h11

    from mcp_ref.errors import StreamBroken
    from mcp_ref.session.http import open_http_client

    from ..basic.transports.test_streamable_http import read_request

    posted: list[dict[str, Any]] = []

    async def handle(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        request = await read_request(stream, conn)
        assert request is not None
        message = json.loads(request[1])
        posted.append({"headers": dict((k.decode(), v.decode()) for k, v in request[0].headers), **message})
        if message["method"] == "server/discover":
            result = {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
            }
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            head = [("content-type", "application/json"), ("content-length", str(len(body))), ("connection", "close")]
            await stream.send_all(conn.send(h11.Response(status_code=200, headers=head)) or b"")
            await stream.send_all((conn.send(h11.Data(data=body)) or b"") + (conn.send(h11.EndOfMessage()) or b""))
        elif message["method"] == "tools/list" and sum(p["method"] == "tools/list" for p in posted) > 1:
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public"},
                }
            ).encode()
            head = [("content-type", "application/json"), ("content-length", str(len(body))), ("connection", "close")]
            await stream.send_all(conn.send(h11.Response(status_code=200, headers=head)) or b"")
            await stream.send_all((conn.send(h11.Data(data=body)) or b"") + (conn.send(h11.EndOfMessage()) or b""))
        else:
            # an SSE answer that ends (cleanly, chunked) before the response
            head = [("content-type", "text/event-stream")]
            await stream.send_all(conn.send(h11.Response(status_code=200, headers=head)) or b"")
            await stream.send_all(
                (conn.send(h11.Data(data=b": working\n\n")) or b"") + (conn.send(h11.EndOfMessage()) or b"")
            )
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, handle, 0, host="127.0.0.1"))
        url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/mcp"
        async with open_http_client(url, era_cache=EraCache(), cache=False) as client:
            assert (await client.list_tools()).tools == []
            lists = [p for p in posted if p["method"] == "tools/list"]
            assert len(lists) == 2 and lists[0]["id"] != lists[1]["id"]
            with pytest.raises(StreamBroken):
                await client.call_tool("t", {})
            assert sum(p["method"] == "tools/call" for p in posted) == 1
        nursery.cancel_scope.cancel()
    # the request metadata headers of every POST
    for p in posted:
        assert p["headers"]["mcp-protocol-version"] == "2026-07-28" and p["headers"]["mcp-method"] == p["method"]
        assert "mcp-session-id" not in p["headers"]
    (call,) = [p for p in posted if p["method"] == "tools/call"]
    assert call["headers"]["mcp-name"] == "t"


async def serve_versions(channel: Any, supported: list[str], seen: list[dict[str, Any]]) -> None:
    """A server whose first server/discover is refused with UnsupportedProtocolVersion naming
    ``supported``; a legacy initialize is answered too."""
    import json

    async for data in channel:
        message = json.loads(data)
        seen.append(message)
        if "id" not in message:
            continue
        if message["method"] == "server/discover" and len(seen) == 1:
            error = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": supported, "requested": "x"},
            }
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        elif message["method"] == "server/discover":
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {
                    "resultType": "complete",
                    "supportedVersions": supported,
                    "capabilities": {},
                    "ttlMs": 0,
                    "cacheScope": "public",
                },
            }
        elif message["method"] == "initialize":
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "old", "version": "1"},
                },
            }
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": "complete", "tools": []}}
        await channel.send(json.dumps(reply).encode())


@pytest.mark.req("2026-07-28:basic/versioning#2")
async def test_an_unsupported_version_naming_ours_is_asked_again_and_stays_modern() -> None:
    seen: list[dict[str, Any]] = []
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_versions, server_end, ["2026-07-28"], seen)
        async with open_session(client_end, era_cache=EraCache()) as client:
            assert client.era == "modern"
        nursery.cancel_scope.cancel()
    assert [m["method"] for m in seen[:2]] == ["server/discover", "server/discover"]
    assert seen[0]["id"] != seen[1]["id"]


async def test_an_unsupported_version_naming_only_2025_ones_means_initialize() -> None:
    seen: list[dict[str, Any]] = []
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_versions, server_end, ["2025-11-25"], seen)
        async with open_session(client_end, era_cache=EraCache()) as client:
            assert client.era == "legacy" and client.server_info.name == "old"
        nursery.cancel_scope.cancel()
    assert [m["method"] for m in seen[:2]] == ["server/discover", "initialize"]


@pytest.mark.req("2026-07-28:basic/transports/stdio#18", "2026-07-28:basic/versioning#2")
async def test_a_pinned_modern_version_refuses_a_legacy_server() -> None:
    server = make_server(modern_versions=())
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        # the same typed error as a 2025 pin against a 2026-only server, naming what the user gave
        # and what the server speaks (it used to be ConnectionClosed, trial28c N4)
        with pytest.raises(UnsupportedProtocolVersion) as info:
            async with open_session(client_end, era="modern", era_cache=EraCache()):
                pytest.fail("no client for a legacy server in era='modern'")
        assert str(info.value).startswith("era='modern' was asked for, but the server does not speak 2026-07-28")
        assert "it speaks 2025-11-25" in str(info.value)
        assert info.value.server_versions == ("2025-11-25",) and info.value.supported == ("2026-07-28",)
        nursery.cancel_scope.cancel()
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        with pytest.raises(UnsupportedProtocolVersion, match=r"^protocol_version='2026-07-28' was asked") as info:
            async with open_session(client_end, protocol_version="2026-07-28", era_cache=EraCache()):
                pytest.fail("no client for a legacy server pinned to 2026-07-28")
        assert info.value.server_versions == ("2025-11-25",) and info.value.offered == "2025-11-25"
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/versioning#2")
async def test_a_server_refusing_every_opening_is_an_unsupported_version() -> None:
    import json

    async def refusing(channel: Any) -> None:
        async for data in channel:
            message = json.loads(data)
            error = {"code": -32022, "message": "no", "data": {"supported": ["2026-07-28"], "requested": "x"}}
            await channel.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode())

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(refusing, server_end)
        # (it refuses the initialize that would learn its revision too: the error says it named none)
        with pytest.raises(UnsupportedProtocolVersion, match="it named none it speaks") as info:
            async with open_session(client_end, era="modern", era_cache=EraCache()):
                pytest.fail("no version in common")
        assert info.value.server_versions == () and isinstance(info.value.__cause__, MCPError)
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#27", "2026-07-28:basic/patterns/mrtr#22")
async def test_the_input_of_one_call_never_travels_with_another() -> None:
    seen: list[dict[str, Any]] = []
    gate = trio.Event()

    def answer(message: dict[str, Any]) -> Any:
        seen.append(message)
        params = message["params"]
        if params["name"] == "mrtr" and "requestState" not in params:
            return {"resultType": "input_required", "requestState": "only-for-mrtr"}
        return {"resultType": "complete", "content": [{"type": "text", "text": params["name"]}]}

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_script, server_end, answer)
        async with open_session(client_end, validate_tool_results=False, era_cache=EraCache()) as client:
            async with trio.open_nursery() as calls:
                calls.start_soon(client.call_tool, "mrtr", {})
                calls.start_soon(client.call_tool, "other", {})
            gate.set()
        nursery.cancel_scope.cancel()
    (other,) = [m for m in seen if m["params"]["name"] == "other"]
    assert "requestState" not in other["params"] and "inputResponses" not in other["params"]
    retry = [m for m in seen if m["params"]["name"] == "mrtr"][-1]
    assert retry["params"]["requestState"] == "only-for-mrtr" and "inputResponses" not in retry["params"]


@pytest.mark.req("2026-07-28:server/utilities/caching#3")
async def test_a_result_a_retry_produced_is_never_cached() -> None:
    reads: list[dict[str, Any]] = []

    def read(message: dict[str, Any]) -> Any:
        reads.append(message)
        if message["params"]["uri"] == "file:///plain":
            return {"resultType": "complete", "contents": [], "ttlMs": 60_000, "cacheScope": "private"}
        if "requestState" not in message["params"]:
            return {"resultType": "input_required", "requestState": "again"}
        return {"resultType": "complete", "contents": [], "ttlMs": 60_000, "cacheScope": "private"}

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_script, server_end, read)
        async with open_session(client_end, validate_tool_results=False, era_cache=EraCache()) as client:
            await client.read_resource("file:///a")
            await client.read_resource("file:///a")
            await client.read_resource("file:///plain")
            await client.read_resource("file:///plain")
        nursery.cancel_scope.cancel()
    # each MRTR read took its two rounds (nothing kept from a retry); the plain one was kept
    assert [m["params"]["uri"] for m in reads] == ["file:///a"] * 4 + ["file:///plain"]


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#22", "2026-07-28:basic/patterns/mrtr#25")
async def test_each_retry_carries_only_what_the_last_answer_asked_for() -> None:
    """Each retry carries the answers and the state of the last InputRequiredResult only: no
    state when it named none (after one that did), no answers when it asked for nothing."""
    seen: list[dict[str, Any]] = []
    form = {
        "mode": "form",
        "message": "?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    }

    def rounds(message: dict[str, Any]) -> Any:
        seen.append(message["params"])
        n = len(seen)
        if n == 1:
            return {
                "resultType": "input_required",
                "requestState": "s1",
                "inputRequests": {"q1": {"method": "elicitation/create", "params": form}},
            }
        if n == 2:
            return {
                "resultType": "input_required",
                "inputRequests": {"q2": {"method": "elicitation/create", "params": form}},
            }
        if n == 3:
            return {"resultType": "input_required", "requestState": "s3"}
        return {"resultType": "complete", "content": []}

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_script, server_end, rounds)
        async with open_session(
            client_end, validate_tool_results=False, elicitation=answer_bob, era_cache=EraCache()
        ) as client:
            await client.call_tool("t", {})
        nursery.cancel_scope.cancel()
    assert seen[1]["requestState"] == "s1" and list(seen[1]["inputResponses"]) == ["q1"]
    assert "requestState" not in seen[2] and list(seen[2]["inputResponses"]) == ["q2"]
    assert seen[3]["requestState"] == "s3" and "inputResponses" not in seen[3]


async def serve_legacy(channel: Any, seen: list[str]) -> None:
    """A 2025 server: server/discover before initialize is an error; initialize is answered."""
    import json

    async for data in channel:
        message = json.loads(data)
        seen.append(message.get("method", "?"))
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "old", "version": "1"},
                },
            }
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32600, "message": "not initialized"}}
        await channel.send(json.dumps(reply).encode())


@pytest.mark.req("2026-07-28:basic/versioning#9")
async def test_a_server_known_to_be_legacy_is_not_probed_again() -> None:
    cache = EraCache()
    firsts: list[str] = []
    for _ in range(2):
        seen: list[str] = []
        client_end, server_end = memory_channel_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_legacy, server_end, seen)
            async with open_session(client_end, era_cache=cache, era_key="old") as client:
                assert client.era == "legacy"
            nursery.cancel_scope.cancel()
        firsts.append(seen[0])
    assert firsts == ["server/discover", "initialize"]


@pytest.mark.req("2026-07-28:basic/versioning#9")
async def test_stdio_and_http_clients_cache_the_era_under_their_server() -> None:
    import sys
    from functools import partial

    from mcp_ref.session.client import open_stdio_client
    from mcp_ref.session.http import open_http_client, serve_http

    cache = EraCache()
    args = ["-m", "mcp_ref.examples.echo"]
    async with open_stdio_client(sys.executable, args, era_cache=cache) as client:
        assert client.era == "modern"
    assert cache.get(("stdio", sys.executable, tuple(args), None)) == "modern"
    async with trio.open_nursery() as nursery:
        info = await nursery.start(partial(serve_http, make_server(), port=0))
        async with open_http_client(info.url, era_cache=cache) as client:
            assert client.era == "modern"
        nursery.cancel_scope.cancel()
    assert cache.get(("http", info.url)) == "modern"


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#48")
async def test_over_a_pipe_a_tool_with_invalid_header_annotations_is_kept() -> None:
    bad = {
        "name": "bad",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}},
    }

    def tools(message: dict[str, Any]) -> Any:
        return {"resultType": "complete", "tools": [bad], "ttlMs": 0, "cacheScope": "public"}

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve_script, server_end, tools)
        async with open_session(client_end, validate_tool_results=False, era_cache=EraCache()) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["bad"]
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#2")
async def test_a_change_before_the_acknowledgement_is_not_taken_for_one(caplog: pytest.LogCaptureFixture) -> None:
    """A server breaking the order: the client does not deliver what came before the
    acknowledgement (it says so in its log), and delivers what follows it."""
    import json

    client_end, server_end = memory_channel_pair()

    async def careless_server() -> None:
        async for data in server_end:
            message = json.loads(data)
            if "id" not in message:
                continue  # (the client's cancellation when it leaves the subscription)
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
            if message["method"] == "server/discover":
                reply["result"] = {
                    "resultType": "complete",
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {"listChanged": True}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "careless", "version": "0"}},
                }
                await server_end.send(json.dumps(reply).encode())
                continue
            assert message["method"] == "subscriptions/listen"
            tag = {"io.modelcontextprotocol/subscriptionId": message["id"]}
            ack = {"notifications": {"toolsListChanged": True}, "_meta": tag}
            for method, params in (
                ("notifications/tools/list_changed", {"_meta": {**tag, "n": "early"}}),
                ("notifications/subscriptions/acknowledged", ack),
                ("notifications/tools/list_changed", {"_meta": {**tag, "n": "after"}}),
            ):
                await server_end.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(careless_server)
        async with open_session(client_end, era_cache=EraCache()) as client:
            async with client.listen(tools=True) as sub:
                with trio.fail_after(5):
                    async for method, params in sub:
                        assert (method, params["_meta"]["n"]) == ("notifications/tools/list_changed", "after")
                        break
        nursery.cancel_scope.cancel()
    assert "notifications/tools/list_changed before the acknowledgement: ignored" in caplog.text
