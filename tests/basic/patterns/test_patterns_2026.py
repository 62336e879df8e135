"""2026-07-28 statements of the message patterns, the base protocol and the transports that the
other test modules do not show on their own: MRTR beyond tools, several requests and
subscriptions on one channel, progress and cancellation as a client and a server see them,
result types and error codes of this revision."""

import json
from typing import Any

import pytest
import trio

from mcp_ref import RequestContext, Server
from mcp_ref.basic import versioning as v
from mcp_ref.basic.lifecycle import Role
from mcp_ref.basic.transports.memory import framed_memory_pair, memory_channel_pair
from mcp_ref.errors import LocalProtocolError, MCPError, RequestTimeout
from mcp_ref.events import InvalidResponse, MessageRejected, ProgressIgnored, ProgressReceived, UnknownResponse
from mcp_ref.exchange import StatelessEngine
from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation
from mcp_ref.session.client import open_session
from mcp_ref.session.modern_client import EraCache, SubscriptionEnded
from tests.session.test_modern import ELICIT, Peer, accept, modern

INFO = Implementation(name="t", version="0")


def asking_server() -> Server:
    server = Server("patterns", "1.0", state_key=b"p" * 32)
    server.stopped = trio.Event()  # type: ignore[attr-defined]

    @server.prompt(description="asks which topic")
    async def topic(ctx: RequestContext, arguments: dict[str, str]) -> str:
        answer = await ctx.elicit_form("Topic?", {"topic": {"type": "string"}}, key="topic")
        return f"write about {answer.content['topic']}"

    @server.resource("test://asks")
    async def asks(ctx: RequestContext) -> str:
        answer = await ctx.elicit_form("Which?", {"which": {"type": "string"}}, key="which")
        return f"the {answer.content['which']} one"

    @server.tool(description="reports progress without a total")
    async def steps(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1)
        await ctx.progress(2)
        return "done"

    @server.tool(description="waits for a while")
    async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await trio.sleep(float(arguments.get("seconds", 1000)))
        finally:
            server.stopped.set()  # type: ignore[attr-defined]
        return "slept"

    @server.tool(description="fails with the code it is given")
    async def fail(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise MCPError(int(arguments["code"]), "as asked")

    return server


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#4")
async def test_prompts_and_resources_may_ask_for_input_too() -> None:
    async with modern(asking_server(), ELICIT) as peer:
        for method, params, key, answer, text in [
            ("prompts/get", {"name": "topic", "arguments": {}}, "topic", "trio", "write about trio"),
            ("resources/read", {"uri": "test://asks"}, "which", "blue", "the blue one"),
        ]:
            first, _ = await peer.call(method, params)
            assert first["result"]["resultType"] == "input_required", method
            assert list(first["result"]["inputRequests"]) == [key]
            done, _ = await peer.call(
                method,
                params,
                input_responses={key: accept(**{key: answer})},
                request_state=first["result"]["requestState"],
            )
            assert text in json.dumps(done["result"]), method


@pytest.mark.req("2026-07-28:basic/index#28")
async def test_requests_on_one_channel_run_side_by_side() -> None:
    async with modern(asking_server()) as peer:
        rid_slow, data = peer.engine.send_request("tools/call", {"name": "slow", "arguments": {"seconds": 1000}})
        await peer.channel.send(data)
        # the slow one does not hold up the next request on the same channel
        reply, _ = await peer.call("tools/call", {"name": "steps", "arguments": {}})
        assert reply["result"]["content"][0]["text"] == "done"
        assert all(m.get("id") != rid_slow for m in peer.seen)


@pytest.mark.req(
    "2026-07-28:basic/patterns/progress#1",
    "2026-07-28:basic/patterns/progress#4",
    "2026-07-28:basic/patterns/progress#9",
)
async def test_progress_without_a_total_and_none_without_a_token() -> None:
    async with modern(asking_server()) as peer:
        reply, notes = await peer.call("tools/call", {"name": "steps", "arguments": {}}, progress_token="tok")
        assert [n["params"] for n in notes] == [
            {"progressToken": "tok", "progress": 1},
            {"progressToken": "tok", "progress": 2},
        ]
        reply, notes = await peer.call("tools/call", {"name": "steps", "arguments": {}})
        assert notes == [] and reply["result"]["content"][0]["text"] == "done"


@pytest.mark.req("2026-07-28:basic/patterns/progress#10")
def test_a_client_tracks_its_active_progress_tokens() -> None:
    engine = StatelessEngine(Role.CLIENT, info=INFO, capabilities=ClientCapabilities())
    rid, _ = engine.send_request("tools/call", {"name": "x", "arguments": {}}, progress_token="tok")

    def progress(token: str, value: int) -> bytes:
        params = {"progressToken": token, "progress": value}
        return json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}).encode()

    (got,) = engine.receive_message(progress("tok", 1))
    assert isinstance(got, ProgressReceived) and got.request_id == rid
    (other,) = engine.receive_message(progress("someone-elses", 1))
    assert isinstance(other, ProgressIgnored)
    answer = {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "content": []}}
    engine.receive_message(json.dumps(answer).encode())
    (late,) = engine.receive_message(progress("tok", 2))
    assert isinstance(late, ProgressIgnored)


@pytest.mark.req("2026-07-28:basic/patterns/cancellation#11", "2026-07-28:basic/patterns/cancellation#15")
def test_a_client_cancels_only_its_requests_in_flight_and_ignores_a_late_answer() -> None:
    engine = StatelessEngine(Role.CLIENT, info=INFO, capabilities=ClientCapabilities())
    with pytest.raises(LocalProtocolError):
        engine.send_cancel(12345, "never sent")
    rid, _ = engine.send_request("tools/list", {})
    cancel = json.loads(engine.send_cancel(rid, "changed my mind"))
    assert cancel["params"] == {"requestId": rid, "reason": "changed my mind"}
    with pytest.raises(LocalProtocolError):
        engine.send_cancel(rid, "again")
    late = {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "tools": []}}
    (event,) = engine.receive_message(json.dumps(late).encode())
    assert isinstance(event, UnknownResponse)


@pytest.mark.req("2026-07-28:basic/patterns/cancellation#7")
async def test_a_request_that_times_out_is_cancelled(autojump_clock: trio.abc.Clock) -> None:
    server = asking_server()
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        async with open_session(client_end, era_cache=EraCache()) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("slow", {"seconds": 1000}, timeout=5)
            # the server heard of it: its handler stopped long before its 1000 s, and the channel serves on
            with trio.fail_after(10):
                await server.stopped.wait()  # type: ignore[attr-defined]
            assert (await client.call_tool("steps", {})).content[0].text == "done"
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#12")
def test_a_client_never_answers_what_a_server_sends_as_a_request() -> None:
    engine = StatelessEngine(Role.CLIENT, info=INFO, capabilities=ClientCapabilities(elicitation={}))
    request = {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {"message": "hi"}}
    (event,) = engine.receive_message(json.dumps(request).encode())
    assert isinstance(event, MessageRejected) and event.reply is None


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#3", "2026-07-28:basic/patterns/subscriptions#6")
async def test_two_subscriptions_share_one_channel() -> None:
    server = asking_server()
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        async with open_session(client_end, era_cache=EraCache()) as client:
            async with client.listen(tools=True) as one, client.listen(tools=True) as two:
                assert one.id != two.id

                @server.tool()
                async def added(ctx: RequestContext, arguments: dict[str, Any]) -> str:
                    return "new"

                with trio.fail_after(5):
                    for sub in (one, two):
                        async for method, params in sub:
                            assert method == "notifications/tools/list_changed"
                            assert params["_meta"][v.SUBSCRIPTION_ID_KEY] == sub.id
                            break
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#9")
async def test_a_subscription_whose_connection_drops_is_not_a_graceful_end() -> None:
    server = asking_server()
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        serving = trio.CancelScope()

        async def serve() -> None:
            with serving:
                await server.serve(server_end)

        nursery.start_soon(serve)
        async with open_session(client_end, era_cache=EraCache()) as client:
            async with client.listen(tools=True) as sub:
                serving.cancel()
                await server_end.aclose()
                with pytest.raises(SubscriptionEnded), trio.fail_after(5):
                    async for _ in sub:
                        pass
                assert not sub.graceful
        nursery.cancel_scope.cancel()
    # the same end with the server's completion result is a graceful one
    server = asking_server()
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve, server_end)
        async with open_session(client_end, era_cache=EraCache()) as client:
            async with client.listen(tools=True) as sub:
                server.changes.close()
                with trio.fail_after(5):
                    async for _ in sub:
                        pass
                assert sub.graceful
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/transports/stdio#13")
async def test_the_end_of_input_ends_the_channel_even_with_a_request_running(autojump_clock: trio.abc.Clock) -> None:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        session = await nursery.start(asking_server().serve, server_end)
        peer = Peer(client_end)
        _, data = peer.engine.send_request("tools/call", {"name": "slow", "arguments": {"seconds": 1000}})
        await client_end.send(data)
        await trio.sleep(1)
        await client_end.aclose()
        with trio.fail_after(10):
            await session.closed.wait()


@pytest.mark.req("2026-07-28:basic/index#11", "2026-07-28:basic/index#12")
def test_result_types_are_the_cores_and_those_of_advertised_extensions() -> None:
    assert v.supported_result_types(None) == {"complete", "input_required"}
    assert v.supported_result_types(["io.modelcontextprotocol/tasks"]) == {"complete", "input_required", "task"}
    task = {"resultType": "task", "task": {"taskId": "t1", "status": "working"}}
    for extensions, accepted in [(None, False), ({"io.modelcontextprotocol/tasks": {}}, True)]:
        engine = StatelessEngine(Role.CLIENT, info=INFO, capabilities=ClientCapabilities(extensions=extensions))
        rid, _ = engine.send_request("tools/call", {"name": "x", "arguments": {}})
        (event,) = engine.receive_message(json.dumps({"jsonrpc": "2.0", "id": rid, "result": task}).encode())
        assert isinstance(event, InvalidResponse) is not accepted, extensions


@pytest.mark.req("2026-07-28:basic/index#21", "2026-07-28:basic/index#19")
async def test_error_codes_of_the_specs_sub_range_are_the_specs_own() -> None:
    assert v.modern_error_code(-32002) == -32602
    async with modern(asking_server()) as peer:
        for code, sent in [(-32050, -32603), (-32021, -32021), (-32002, -32602), (-32010, -32010), (42, 42)]:
            reply, _ = await peer.call("tools/call", {"name": "fail", "arguments": {"code": code}})
            assert reply["error"]["code"] == sent, code


@pytest.mark.req("2026-07-28:basic/transports/stdio#6", "2026-07-28:basic/transports/index#7")
async def test_the_stdio_framing_carries_2026_requests_over_any_byte_stream() -> None:
    client_end, server_end = framed_memory_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(asking_server().serve, server_end)
        async with open_session(client_end, era_cache=EraCache()) as client:
            assert client.protocol_version == "2026-07-28"
            assert (await client.call_tool("steps", {})).content[0].text == "done"
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#19", "2026-07-28:basic/index#29")
async def test_a_retry_needs_nothing_the_first_connection_kept() -> None:
    server = asking_server()
    params = {"name": "topic", "arguments": {}}
    async with modern(server, ELICIT) as first:
        asked, _ = await first.call("prompts/get", params)
    # the first connection is gone, its client never came back: a new one retries
    async with modern(server, ELICIT) as second:
        assert isinstance(second, Peer)
        done, _ = await second.call(
            "prompts/get",
            params,
            input_responses={"topic": accept(topic="eras")},
            request_state=asked["result"]["requestState"],
        )
    assert "write about eras" in json.dumps(done["result"])


def ticking_server(**options: Any) -> Server:
    server = Server("ticks", "1.0", **options)

    @server.tool(description="reports progress every 3 s, 7 times")
    async def ticks(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for i in range(1, 8):
            await trio.sleep(3)
            await ctx.progress(i, 7)
        return "ticked"

    @server.tool(description="reports progress 5 times at once")
    async def burst(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for i in range(1, 6):
            await ctx.progress(i, 5)
        return "burst"

    return server


@pytest.mark.req(
    "2026-07-28:basic/patterns/cancellation#6",
    "2026-07-28:basic/patterns/cancellation#8",
    "2026-07-28:basic/patterns/cancellation#9",
    "2026-07-28:basic/patterns/cancellation#10",
)
async def test_progress_pushes_a_requests_timeout_but_never_past_its_maximum(autojump_clock: trio.abc.Clock) -> None:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ticking_server().serve, server_end)
        async with open_session(client_end, era_cache=EraCache()) as client:
            seen: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append(progress)

            # 21 s of work, 3 s between signs of life: a 5 s timeout is pushed along by each
            result = await client.call_tool("ticks", {}, timeout=5, max_timeout=100, progress=on_progress)
            assert result.content[0].text == "ticked" and seen == [1, 2, 3, 4, 5, 6, 7]
            # ... but never past the maximum
            start = trio.current_time()
            with pytest.raises(RequestTimeout) as caught:
                await client.call_tool("ticks", {}, timeout=5, max_timeout=10, progress=on_progress)
            assert "maximum" in str(caught.value) and trio.current_time() - start == pytest.approx(10)
            # without progress the request's own timeout ends it
            start = trio.current_time()
            with pytest.raises(RequestTimeout):
                await client.call_tool("ticks", {}, timeout=2)
            assert trio.current_time() - start == pytest.approx(2)
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/patterns/progress#11")
async def test_a_requests_progress_is_rate_limited_when_configured(autojump_clock: trio.abc.Clock) -> None:
    from mcp_ref.session.core import SessionConfig

    async with modern(ticking_server(config=SessionConfig(progress_min_interval=1.0))) as peer:
        reply, notes = await peer.call("tools/call", {"name": "burst", "arguments": {}}, progress_token="b")
    # the first value, then (within the interval) only the one that reaches its total
    assert [n["params"]["progress"] for n in notes] == [1, 5]
    async with modern(ticking_server()) as peer:
        reply, notes = await peer.call("tools/call", {"name": "burst", "arguments": {}}, progress_token="b")
    assert [n["params"]["progress"] for n in notes] == [1, 2, 3, 4, 5]


@pytest.mark.req("2026-07-28:basic/index#25")
async def test_a_notification_is_never_answered() -> None:
    async with modern(asking_server()) as peer:
        for method in ("notifications/initialized", "notifications/whatever", "notifications/cancelled"):
            await peer.channel.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": {}}).encode())
        reply, notes = await peer.call("tools/list")
        assert "tools" in reply["result"] and notes == []
        assert all("id" in m for m in peer.seen)


@pytest.mark.req("2026-07-28:basic/patterns/progress#12")
def test_no_progress_after_the_answer() -> None:
    from mcp_ref.exchange import Exchange
    from mcp_ref.schema import CallToolResult
    from tests.test_exchange import exchange, server

    ex = exchange(server(), progressToken="t")
    assert isinstance(ex, Exchange)
    assert ex.send_progress(1) is not None
    ex.send_response(CallToolResult(content=[]))
    with pytest.raises(LocalProtocolError, match="answered"):
        ex.send_progress(2)
