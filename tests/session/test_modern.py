"""The 2026-07-28 runtime on one channel (a memory pair, as stdio): eras, handlers, MRTR,
cancellation, subscriptions -- with the same application handlers a 2025-11-25 session uses."""

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mcp_ref import CachePolicy, RequestContext, Server, open_session
from mcp_ref.basic.lifecycle import SUPPORTED_VERSIONS, Role
from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.errors import MCPError, UnsupportedProtocolVersion
from mcp_ref.exchange import StatelessEngine
from mcp_ref.schema import ElicitResult
from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation

ROOTS = {"roots": [{"uri": "file:///r", "name": "r"}]}


def make_server(**options: Any) -> Server:
    options.setdefault("state_key", b"k" * 32)
    server = Server("modern-test", "1.2", **options)

    @server.tool(description="echo with progress and a log line")
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, 2)
        await ctx.log("info", "echoing")
        return str(arguments.get("text"))

    @server.tool(description="asks twice")
    async def two_questions(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        ctx.state["runs"] = ctx.state.get("runs", 0) + 1
        first = await ctx.elicit_form("name?", {"name": {"type": "string"}}, key="name")
        second = await ctx.elicit_form("color?", {"color": {"type": "string"}}, key="color")
        return f"{first.content['name']} {second.content['color']} after {ctx.state['runs']} runs"

    @server.tool(description="lists roots")
    async def roots(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        got = await ctx.list_roots()
        return ",".join(r.uri for r in got.roots)

    @server.tool(description="waits until released")
    async def wait(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        ctx_started.set()
        await release.wait()
        return "released"

    @server.tool(description="swallows what it should not")
    async def swallow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await ctx.elicit_form("x?", {"x": {"type": "string"}})
        except Exception:
            return "swallowed"
        return "answered"

    @server.resource("test://private", cache=CachePolicy(5, "private"))
    async def private(ctx: RequestContext) -> str:
        return "secret"

    @server.prompt(description="p")
    async def greet(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return "hi"

    return server


ctx_started = trio.Event()
release = trio.Event()


class Peer:
    """A 2026-07-28 client speaking raw JSON-RPC on one end of a memory pair."""

    def __init__(self, channel: Any, caps: ClientCapabilities | None = None) -> None:
        self.channel = channel
        self.engine = StatelessEngine(
            Role.CLIENT, info=Implementation(name="peer", version="0"), capabilities=caps or ClientCapabilities()
        )
        self.seen: list[dict[str, Any]] = []

    async def call(
        self, method: str, params: Any = None, **options: Any
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Send a request; return its answer and the notifications before it."""
        rid, data = self.engine.send_request(method, params, **options)
        await self.channel.send(data)
        return await self.answer(rid)

    async def answer(self, rid: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        notes = []
        with trio.fail_after(10):
            while True:
                msg = json.loads(await self.channel.receive())
                self.seen.append(msg)
                if msg.get("id") == rid and "method" not in msg:
                    return msg, notes
                notes.append(msg)


@asynccontextmanager
async def modern(server: Server, caps: ClientCapabilities | None = None) -> AsyncIterator[Peer]:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        yield Peer(client_end, caps)
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/versioning#3", "2026-07-28:server/discover#1", "2026-07-28:server/discover#3")
async def test_discover_names_versions_capabilities_and_the_server() -> None:
    async with modern(make_server(instructions="be nice")) as peer:
        reply, _ = await peer.call("server/discover")
    result = reply["result"]
    assert result["supportedVersions"] == ["2026-07-28", *SUPPORTED_VERSIONS]
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts", "logging"}
    assert result["instructions"] == "be nice" and result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "modern-test", "version": "1.2"}
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"


@pytest.mark.req("2026-07-28:basic/versioning#8", "2026-07-28:basic/versioning#11")
async def test_one_server_serves_a_2025_session_and_2026_requests_with_the_same_handlers() -> None:
    server = make_server()
    async with modern(server) as peer:
        reply, notes = await peer.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert reply["result"]["content"] == [{"type": "text", "text": "hi"}]
        assert notes == []  # no progress token, no log level: nothing before the answer
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        async with open_session(client_end, era="legacy") as session:
            assert session.protocol_version == "2025-11-25"
            result = await session.call_tool("echo", {"text": "hi"})
            assert result.content[0].text == "hi"  # type: ignore[union-attr]
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "2026-07-28:basic/index#7",
    "2026-07-28:basic/index#8",
    "2026-07-28:basic/patterns/index#2",
    "2026-07-28:basic/patterns/progress#8",
    "2026-07-28:server/utilities/logging#3",
    "2026-07-28:server/utilities/logging#4",
)
async def test_progress_and_log_go_before_the_answer_when_asked() -> None:
    async with modern(make_server()) as peer:
        reply, notes = await peer.call(
            "tools/call", {"name": "echo", "arguments": {"text": "x"}}, progress_token="t", log_level="debug"
        )
    assert [n["method"] for n in notes] == ["notifications/progress", "notifications/message"]
    assert notes[0]["params"]["progressToken"] == "t" and notes[1]["params"]["data"] == "echoing"
    assert reply["result"]["resultType"] == "complete"


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#29")
async def test_removed_methods_and_initialize_after_a_modern_opening_are_method_not_found() -> None:
    async with modern(make_server()) as peer:
        await peer.call("tools/list")
        for method in ("initialize", "ping", "logging/setLevel", "resources/subscribe"):
            rid = 100
            await peer.channel.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": rid,
                        "method": method,
                        "params": {"_meta": peer.engine.request_meta("2026-07-28")},
                    }
                ).encode()
            )
            reply, _ = await peer.answer(rid)
            assert reply["error"]["code"] == -32601, method


@pytest.mark.req("2026-07-28:server/utilities/caching#1", "2026-07-28:server/tools#8")
async def test_lists_are_cacheable_deterministic_and_resources_keep_their_own_policy() -> None:
    server = make_server(cache=CachePolicy(1000, "public"))
    async with modern(server) as peer:
        first, _ = await peer.call("tools/list")
        second, _ = await peer.call("tools/list")
        read, _ = await peer.call("resources/read", {"uri": "test://private"})
    names = [t["name"] for t in first["result"]["tools"]]
    assert names == [t["name"] for t in second["result"]["tools"]] == list(server.tools.names())
    assert (first["result"]["ttlMs"], first["result"]["cacheScope"]) == (1000, "public")
    assert (read["result"]["ttlMs"], read["result"]["cacheScope"]) == (5, "private")


@pytest.mark.req("2026-07-28:basic/index#16", "2026-07-28:basic/index#18", "2026-07-28:basic/index#22")
async def test_an_unknown_resource_is_invalid_params_with_its_uri() -> None:
    async with modern(make_server()) as peer:
        reply, _ = await peer.call("resources/read", {"uri": "test://none"})
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["uri"] == "test://none"


ELICIT = ClientCapabilities(elicitation={})


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


@pytest.mark.req(
    "2026-07-28:basic/patterns/mrtr#7",
    "2026-07-28:basic/patterns/mrtr#20",
    "2026-07-28:basic/patterns/mrtr#1",
    "2026-07-28:basic/patterns/mrtr#6",
    "2026-07-28:basic/patterns/mrtr#10",
    "2026-07-28:basic/patterns/mrtr#31",
)
async def test_a_handler_asks_round_after_round_and_earlier_answers_travel_sealed() -> None:
    async with modern(make_server(), ELICIT) as peer:
        params = {"name": "two_questions", "arguments": {}}
        r1, _ = await peer.call("tools/call", params)
        first = r1["result"]
        assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["name"]
        assert first["inputRequests"]["name"]["method"] == "elicitation/create"
        assert "ttlMs" not in first  # interim results are not cacheable
        r2, _ = await peer.call(
            "tools/call", params, input_responses={"name": accept(name="Ada")}, request_state=first["requestState"]
        )
        second = r2["result"]
        assert list(second["inputRequests"]) == ["color"] and second["requestState"] != first["requestState"]
        # the retry brings only the newest answer: the first travels in the state
        r3, _ = await peer.call(
            "tools/call", params, input_responses={"color": accept(color="blue")}, request_state=second["requestState"]
        )
        assert r3["result"]["content"][0]["text"] == "Ada blue after 3 runs"
        # an answer missing: asked again, not an error
        again, _ = await peer.call("tools/call", params, input_responses={"wrong": accept(x=1)})
        assert again["result"]["resultType"] == "input_required"


@pytest.mark.req(
    "2026-07-28:basic/patterns/mrtr#11",
    "2026-07-28:basic/patterns/mrtr#12",
    "2026-07-28:basic/patterns/mrtr#14",
    "2026-07-28:basic/patterns/mrtr#32",
)
async def test_a_state_is_good_only_untouched_and_for_its_own_request() -> None:
    async with modern(make_server(), ELICIT) as peer:
        params = {"name": "two_questions", "arguments": {}}
        r1, _ = await peer.call("tools/call", params)
        state = r1["result"]["requestState"]
        tampered, _ = await peer.call(
            "tools/call", params, input_responses={"name": accept(name="x")}, request_state=state + "x"
        )
        assert tampered["error"]["code"] == -32602
        other, _ = await peer.call(
            "tools/call", {"name": "two_questions", "arguments": {"a": 1}}, input_responses={}, request_state=state
        )
        assert other["error"]["code"] == -32602 and "another request" in other["error"]["message"]
        foreign = make_server(state_key=b"z" * 32)
    async with modern(foreign, ELICIT) as elsewhere:
        reply, _ = await elsewhere.call("tools/call", params, input_responses={}, request_state=state)
        assert reply["error"]["code"] == -32602


async def test_any_replica_with_the_same_key_serves_the_retry() -> None:
    params = {"name": "two_questions", "arguments": {}}
    async with modern(make_server(), ELICIT) as one:
        r1, _ = await one.call("tools/call", params)
    async with modern(make_server(), ELICIT) as two:
        r2, _ = await two.call(
            "tools/call",
            params,
            input_responses={"name": accept(name="Bo")},
            request_state=r1["result"]["requestState"],
        )
    assert list(r2["result"]["inputRequests"]) == ["color"]


@pytest.mark.req("2026-07-28:basic/index#57", "2026-07-28:basic/patterns/mrtr#17", "2026-07-28:basic/patterns/mrtr#18")
async def test_asking_for_what_the_request_did_not_declare_is_missing_capability() -> None:
    async with modern(make_server()) as peer:  # no elicitation, no roots
        reply, _ = await peer.call("tools/call", {"name": "two_questions", "arguments": {}})
        assert reply["error"]["code"] == -32021
        assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}
        roots, _ = await peer.call("tools/call", {"name": "roots", "arguments": {}})
        assert roots["error"]["data"] == {"requiredCapabilities": {"roots": {}}}


@pytest.mark.req("2026-07-28:basic/index#27", "2026-07-28:basic/index#56")
async def test_capabilities_are_never_inferred_from_an_earlier_request() -> None:
    async with modern(make_server(), ClientCapabilities(roots={})) as peer:
        ok, _ = await peer.call("tools/call", {"name": "roots", "arguments": {}})
        assert ok["result"]["resultType"] == "input_required"
        peer.engine = StatelessEngine(
            Role.CLIENT, capabilities=ClientCapabilities()
        )  # the next request declares nothing
        refused, _ = await peer.call("tools/call", {"name": "roots", "arguments": {}})
        assert refused["error"]["code"] == -32021


@pytest.mark.req(
    "2026-07-28:basic/patterns/mrtr#28", "2026-07-28:basic/patterns/mrtr#29", "2026-07-28:basic/patterns/mrtr#30"
)
async def test_answers_are_validated_and_extra_ones_ignored() -> None:
    async with modern(make_server(), ClientCapabilities(roots={})) as peer:
        params = {"name": "roots", "arguments": {}}
        done, _ = await peer.call("tools/call", params, input_responses={"roots-1": ROOTS, "extra": {"whatever": 1}})
        assert done["result"]["content"][0]["text"] == "file:///r"
        bad, _ = await peer.call("tools/call", params, input_responses={"roots-1": {"roots": "no"}})
        assert bad["error"]["code"] == -32602


async def test_a_handler_that_swallows_the_interruption_still_gets_its_question_asked() -> None:
    async with modern(make_server(), ELICIT) as peer:
        reply, _ = await peer.call("tools/call", {"name": "swallow", "arguments": {}})
    assert reply["result"]["resultType"] == "input_required"


@pytest.mark.req(
    "2026-07-28:basic/transports/stdio#10",
    "2026-07-28:basic/transports/stdio#11",
    "2026-07-28:basic/patterns/cancellation#13",
    "2026-07-28:basic/patterns/cancellation#17",
)
async def test_a_cancelled_request_stops_and_is_never_answered(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_ref.session.modern")
    global ctx_started, release
    ctx_started, release = trio.Event(), trio.Event()
    async with modern(make_server()) as peer:
        rid, data = peer.engine.send_request("tools/call", {"name": "wait", "arguments": {}})
        await peer.channel.send(data)
        await ctx_started.wait()
        await peer.channel.send(peer.engine.send_cancel(rid, "changed my mind"))
        await peer.call("tools/list")  # (the cancellation has been read)
        release.set()  # a handler still running would answer now
        reply, notes = await peer.call("tools/list")  # answered; nothing came for the cancelled one
        assert notes == [] and all(m.get("id") != rid for m in peer.seen)
    assert any("changed my mind" in r.getMessage() for r in caplog.records)  # the reason, in our log


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#1", "2026-07-28:basic/patterns/subscriptions#2")
async def test_a_subscription_on_one_channel_acknowledges_filters_and_tags(autojump_clock: trio.abc.Clock) -> None:
    server = make_server()
    async with modern(server) as peer:
        rid, data = peer.engine.send_request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        await peer.channel.send(data)
        ack = json.loads(await peer.channel.receive())
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == rid

        @server.prompt(description="new")
        async def newer(ctx: RequestContext, arguments: dict[str, str]) -> str:
            return "x"  # a prompts change: not asked for

        @server.tool(description="new")
        async def added(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return "x"

        change = json.loads(await peer.channel.receive())
        assert change["method"] == "notifications/tools/list_changed"
        assert change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == rid
        listed, _ = await peer.call("tools/list")  # the list reflects the change at once
        assert "added" in [t["name"] for t in listed["result"]["tools"]]
        await peer.channel.send(peer.engine.send_cancel(rid))
        with trio.move_on_after(0.5):
            server.tools.remove("added")
            extra = await peer.channel.receive()
            pytest.fail(f"sent after the cancellation: {extra!r}")


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#7", "2026-07-28:basic/patterns/subscriptions#8")
async def test_a_server_ending_its_subscriptions_answers_them() -> None:
    server = make_server()
    async with modern(server) as peer:
        rid, data = peer.engine.send_request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        await peer.channel.send(data)
        await peer.channel.receive()  # the acknowledgement
        server.changes.close()
        end = json.loads(await peer.channel.receive())
    assert end == {
        "jsonrpc": "2.0",
        "id": rid,
        "result": {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": rid}},
    }


async def test_a_legacy_client_may_ping_before_it_initializes() -> None:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(make_server().serve, server_end)
        await client_end.send(b'{"jsonrpc":"2.0","id":"p","method":"ping"}')
        assert json.loads(await client_end.receive()) == {"jsonrpc": "2.0", "id": "p", "result": {}}
        async with open_session(client_end, era="legacy") as session:
            assert session.protocol_version == "2025-11-25"
        nursery.cancel_scope.cancel()


async def test_a_server_of_legacy_revisions_only_never_serves_a_modern_request() -> None:
    async with modern(make_server(modern_versions=())) as peer:
        reply, _ = await peer.call("tools/list")
    assert reply["error"]["code"] == -32600  # a session not initialized


@pytest.mark.req("2026-07-28:basic/transports/stdio#13")
async def test_eof_ends_the_modern_channel_and_its_session() -> None:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        session = await nursery.start(make_server().serve, server_end)
        peer = Peer(client_end)
        await peer.call("tools/list")
        await client_end.aclose()
        with trio.fail_after(5):
            await session.closed.wait()
    assert "end of stream" in (session.close_reason or "")


async def test_elicit_result_type_is_decoded() -> None:
    server = make_server()
    seen: list[Any] = []

    @server.tool(description="t")
    async def kind(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        seen.append(await ctx.elicit_form("?", {"a": {"type": "string"}}, key="k"))
        return "ok"

    async with modern(server, ELICIT) as peer:
        await peer.call("tools/call", {"name": "kind", "arguments": {}}, input_responses={"k": accept(a="v")})
    assert isinstance(seen[0], ElicitResult) and seen[0].content == {"a": "v"}


@pytest.mark.req("2026-07-28:server/utilities/logging#7")
async def test_log_messages_are_rate_limited_per_request(autojump_clock: trio.abc.Clock) -> None:
    from mcp_ref import SessionConfig

    server = make_server(config=SessionConfig(log_rate=1.0, log_burst=2))

    @server.tool(description="chatty")
    async def chatty(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        sent = [await ctx.log("info", i) for i in range(5)]
        return str(sent.count(True))

    async with modern(server) as peer:
        reply, notes = await peer.call("tools/call", {"name": "chatty", "arguments": {}}, log_level="info")
        again, more = await peer.call("tools/call", {"name": "chatty", "arguments": {}}, log_level="info")
    # a burst of two per request: each request has its own budget
    assert reply["result"]["content"][0]["text"] == "2" and len(notes) == 2 and len(more) == 2


@pytest.mark.req("2026-07-28:basic/index#27")
async def test_the_context_sees_this_requests_capabilities_and_identity() -> None:
    server = make_server()

    @server.tool(description="what the client said")
    async def whoami(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        caps = ctx.client_capabilities
        return f"{ctx.client_info.name} roots={caps.roots is not None} sampling={ctx.can_sample()} {ctx.revision}"

    async with modern(server, ClientCapabilities(roots={})) as peer:
        reply, _ = await peer.call("tools/call", {"name": "whoami", "arguments": {}})
    assert reply["result"]["content"][0]["text"] == "peer roots=True sampling=False 2026-07-28"


@pytest.mark.req(
    "2026-07-28:basic/transports/stdio#9",
    "2026-07-28:basic/transports/streamable-http#20",
    "2026-07-28:basic/patterns/index#1",
    "2026-07-28:basic/transports/streamable-http#19",
)
async def test_a_handler_cannot_send_requests_or_unrelated_notifications() -> None:
    server = make_server()

    @server.tool(description="pings")
    async def pinger(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.request("ping")
        return "pinged"

    @server.tool(description="broadcasts")
    async def shouter(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.notify("notifications/tools/list_changed")
        return "shouted"

    async with modern(server) as peer:
        for name in ("pinger", "shouter"):
            reply, notes = await peer.call("tools/call", {"name": name, "arguments": {}})
            assert reply["error"]["code"] == -32603 and notes == [], name


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#8")
async def test_one_key_asks_one_question() -> None:
    server = make_server()

    @server.tool(description="asks twice under one name")
    async def twice(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.elicit_form("a?", {"a": {"type": "string"}}, key="same")
        await ctx.elicit_form("b?", {"b": {"type": "string"}}, key="same")
        return "never"

    async with modern(server, ELICIT) as peer:
        reply, _ = await peer.call(
            "tools/call", {"name": "twice", "arguments": {}}, input_responses={"same": accept(a="x")}
        )
    assert reply["error"]["code"] == -32603


@pytest.mark.req("2026-07-28:basic/versioning#10")
async def test_a_server_of_modern_revisions_only_names_them_to_an_initialize() -> None:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(make_server(supported_versions=()).serve, server_end)
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
        await client_end.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode())
        reply = json.loads(await client_end.receive())
        nursery.cancel_scope.cancel()
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    assert reply["error"]["message"] == "Unsupported protocol version 2025-11-25: this server supports 2026-07-28"


@pytest.mark.req("2026-07-28:basic/versioning#10")
async def test_a_client_pinned_to_2025_is_told_which_versions_a_modern_only_server_offers() -> None:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(make_server(supported_versions=()).serve, server_end)
        with pytest.raises(UnsupportedProtocolVersion) as e:
            async with open_session(client_end, era="legacy"):
                pass
        nursery.cancel_scope.cancel()
    assert e.value.server_versions == ("2026-07-28",)
    assert str(e.value).startswith(
        "the server refused initialize for protocol version 2025-11-25: it supports 2026-07-28;"
        " open with era='auto' (the default) to speak it"
    )


def test_the_refusal_of_initialize_says_what_the_client_could_do() -> None:
    from mcp_ref.session.client import _initialize_refused

    def told(supported: Any, proposed: str = "2025-11-25") -> str | None:
        error = MCPError(-32022, "refused", {"supported": supported})
        refused = _initialize_refused(error, proposed, SUPPORTED_VERSIONS, ("2026-07-28",))
        return None if refused is None else str(refused)

    assert "open with protocol_version='2025-06-18'" in (told(["2025-06-18"]) or "")
    assert (told(["2025-11-25"]) or "").endswith("2025-11-25 (its error: [-32022] refused)")
    assert "this client speaks none of them" in (told(["2099-01-01"]) or "")
    assert told([]) is None and told("2026-07-28") is None and told([1]) is None


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#14")
async def test_a_state_issued_to_one_user_is_refused_to_another() -> None:
    from mcp_ref.basic.authorization.resource_server import AccessToken
    from mcp_ref.basic.patterns.mrtr import StateRejected
    from mcp_ref.session.modern import ModernContext, ModernRuntime

    runtime = ModernRuntime(make_server())
    engine = runtime.engine(track_ids=False)
    alice, bob = AccessToken(subject="alice", issuer="https://as"), AccessToken(subject="bob", issuer="https://as")
    peer = Peer(None, ELICIT)
    params = {"name": "two_questions", "arguments": {}}
    _, data = peer.engine.send_request("tools/call", params)
    (event,) = engine.receive_message(data)
    ctx = ModernContext(runtime, event.exchange, trio.CancelScope(), None, auth=alice, answers={}, state={})  # type: ignore[arg-type]
    state = runtime._seal(event.exchange, ctx, alice)
    _, retry = peer.engine.send_request("tools/call", params, input_responses={}, request_state=state)
    (again,) = engine.receive_message(retry)
    assert runtime._open_retry(again.exchange, alice) == ({}, {})
    for other in (bob, None):
        with pytest.raises(StateRejected, match="another principal"):
            runtime._open_retry(again.exchange, other)


@pytest.mark.req(
    "2026-07-28:basic/patterns/cancellation#4",
    "2026-07-28:basic/patterns/cancellation#13",
    "2026-07-28:basic/patterns/cancellation#16",
)
async def test_a_cancellation_that_lands_after_the_handlers_last_checkpoint_still_suppresses_the_answer() -> None:
    from mcp_ref.session.modern import ModernRuntime

    server = make_server()
    runtime = ModernRuntime(server)
    engine = runtime.engine(track_ids=True)
    _, data = Peer(None).engine.send_request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    (event,) = engine.receive_message(data)
    sent: list[bytes] = []

    class Sink:
        async def notify(self, data: bytes) -> None:
            sent.append(data)

        async def answer(self, data: bytes, code: int | None) -> None:
            sent.append(data)

    scope = trio.CancelScope()
    scope.cancel()  # echo answers without a checkpoint: its result is ready, and must not go out
    await runtime.run(event.exchange, Sink(), scope)
    assert sent == [] and event.exchange.state == "answered"
