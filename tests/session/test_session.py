"""The trio session: handlers, errors, cancellation, timeouts, progress, EOF -- over the memory pair."""

import datetime
import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.client.sampling import SamplingRejected
from mcp_ref.errors import CapabilityMissing, ConnectionClosed, ErrorCode, LocalProtocolError, MCPError, RequestTimeout
from mcp_ref.schema.content import TextContent
from mcp_ref.schema.jsonrpc import Result
from mcp_ref.schema.lifecycle import ListChangedCapability, ServerCapabilities
from mcp_ref.schema.logging import LoggingMessageNotificationParams, SetLevelRequestParams
from mcp_ref.schema.prompts import ListPromptsResult, Prompt
from mcp_ref.schema.resources import SubscribeRequestParams
from mcp_ref.schema.sampling import CreateMessageRequestParams, CreateMessageResult
from mcp_ref.schema.tools import CallToolRequestParams, CallToolResult
from mcp_ref.server.tools import ToolError
from mcp_ref.session import RequestContext, Server, SessionConfig, open_session
from mcp_ref.testing import memory_session_pair


class Recorder(trio.abc.Channel[bytes]):
    """Wraps a channel and records every message that passes, as JSON."""

    def __init__(self, inner: trio.abc.Channel[bytes]) -> None:
        self.inner = inner
        self.sent: list[Any] = []
        self.received: list[Any] = []

    async def send(self, value: bytes) -> None:
        self.sent.append(json.loads(value))
        await self.inner.send(value)

    async def receive(self) -> bytes:
        data = await self.inner.receive()
        self.received.append(json.loads(data))
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


def make_server(**config: Any) -> Server:
    server = Server("test", "1.0", config=SessionConfig(**config) if config else None)

    @server.tool(description="echo")
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    return server


@asynccontextmanager
async def recorded_pair(server: Server, **client_options: Any) -> AsyncIterator[tuple[Any, Recorder]]:
    """A client session whose *server side* channel is recorded."""
    client_end, server_end = memory_channel_pair()
    rec = Recorder(server_end)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, rec)
        async with open_session(client_end, **client_options, era="legacy") as client:
            yield client, rec
        nursery.cancel_scope.cancel()


async def test_round_trip_over_memory() -> None:
    async with memory_session_pair(make_server(), era="legacy") as client:
        assert client.server_info.name == "test"
        assert client.protocol_version == "2025-11-25"
        await client.ping()
        tools = await client.list_all_tools()
        assert [t.name for t in tools] == ["echo"]
        result = await client.call_tool("echo", {"text": "hi"})
        assert result == CallToolResult(content=[TextContent(text="hi")])


@pytest.mark.req("basic/lifecycle#9")
async def test_client_may_propose_an_older_version() -> None:
    async with memory_session_pair(make_server(), protocol_version="2025-03-26") as client:
        assert client.protocol_version == "2025-03-26"
        result = await client.call_tool("echo", {"text": "old"})
        assert result.content == [TextContent(text="old")]


async def test_handler_errors_become_wire_errors_without_internals() -> None:
    server = make_server()

    @server.tool()
    async def boom(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise RuntimeError("secret database password in message")

    @server.tool()
    async def refuse(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise MCPError(ErrorCode.INVALID_PARAMS, "bad day", {"why": 1})

    @server.tool()
    async def soft(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise ToolError("try another date")

    async with memory_session_pair(server, era="legacy") as client:
        # an exception of the tool is a tool execution error with a generic text (schema#37;
        # spec_notes/server/tools.md, "A tool that raises"): nothing of the exception leaks
        result = await client.call_tool("boom")
        assert result.is_error is True and result.content == [TextContent(text="Internal error in tool 'boom'")]
        with pytest.raises(MCPError) as info:
            await client.call_tool("refuse")
        assert (info.value.code, info.value.message, info.value.data) == (-32602, "bad day", {"why": 1})
        result = await client.call_tool("soft")
        assert result.is_error is True and result.content == [TextContent(text="try another date")]
        with pytest.raises(MCPError) as info:
            await client.call_tool("no-such-tool")
        assert info.value.code == ErrorCode.INVALID_PARAMS
        await client.ping()  # the session survives all of it


@pytest.mark.req("basic/utilities/cancellation#4", "basic/utilities/cancellation#8")
@pytest.mark.req("schema#18")
async def test_caller_cancellation_cancels_the_handler_and_no_response_is_sent(autojump_clock: trio.abc.Clock) -> None:
    server = make_server()
    started = trio.Event()
    observed: list[str] = []

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            observed.append("cancelled")
            raise
        return "never"

    async with recorded_pair(server) as (client, rec):
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "hang")
                await started.wait()
                scope.cancel()
        await trio.testing.wait_all_tasks_blocked()
        await client.ping()
        assert observed == ["cancelled"]
        cancels = [m for m in rec.received if m.get("method") == "notifications/cancelled"]
        assert len(cancels) == 1
        rid = cancels[0]["params"]["requestId"]
        assert cancels[0]["params"]["reason"] == "request abandoned by the caller"
        assert not [m for m in rec.sent if m.get("id") == rid]  # no response for the cancelled request


@pytest.mark.req("basic/lifecycle#17", "basic/lifecycle#18", "basic/lifecycle#19", "server/tools#21")
async def test_timeout_sends_cancellation_and_raises(autojump_clock: trio.abc.Clock) -> None:
    server = make_server()
    seen = trio.Event()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await trio.sleep_forever()
        finally:
            seen.set()
        return "x"

    async with recorded_pair(server) as (client, rec):
        start = trio.current_time()
        with pytest.raises(RequestTimeout) as info:
            await client.call_tool("hang", timeout=5)
        assert trio.current_time() - start == pytest.approx(5)
        assert info.value.kind == "idle" and info.value.timeout == 5
        with trio.fail_after(1):
            await seen.wait()
        (cancel,) = [m for m in rec.received if m.get("method") == "notifications/cancelled"]
        assert cancel["params"]["reason"] == "timed out after 5s (idle timeout)"  # sent by the timer's path


@pytest.mark.req("basic/lifecycle#18")
async def test_a_timeout_set_with_a_cancel_scope_cancels_the_request_too(autojump_clock: trio.abc.Clock) -> None:
    # the Trio way of giving up after a while: the caller's own scope, not timeout=
    server = make_server()
    seen = trio.Event()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await trio.sleep_forever()
        finally:
            seen.set()
        return "x"

    async with recorded_pair(server) as (client, rec):
        with trio.move_on_after(5) as scope:
            await client.call_tool("hang", timeout=60)
        assert scope.cancelled_caught
        with trio.fail_after(1):
            await seen.wait()  # the server was told, and stopped
        (cancel,) = [m for m in rec.received if m.get("method") == "notifications/cancelled"]
        assert cancel["params"]["reason"] == "request abandoned by the caller"
        assert client.session.connection.pending_outgoing == []
        await client.ping()


@pytest.mark.req("basic/lifecycle#20", "basic/lifecycle#21")
async def test_progress_resets_the_idle_timeout_but_not_the_maximum(autojump_clock: trio.abc.Clock) -> None:
    server = make_server()

    @server.tool()
    async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for i in range(1, int(arguments["steps"]) + 1):
            await trio.sleep(4)
            await ctx.progress(i, arguments["steps"])
        return "done"

    async with memory_session_pair(server, era="legacy") as client:
        seen: list[float] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            seen.append(p)

        result = await client.call_tool("slow", {"steps": 5}, progress=on_progress, timeout=5, max_timeout=100)
        assert result.content == [TextContent(text="done")] and seen == [1, 2, 3, 4, 5]
        start = trio.current_time()
        with pytest.raises(RequestTimeout) as info:
            await client.call_tool("slow", {"steps": 10}, progress=on_progress, timeout=5, max_timeout=10)
        assert info.value.kind == "maximum"
        assert trio.current_time() - start == pytest.approx(10)


@pytest.mark.req("basic/lifecycle#21")
async def test_a_hung_progress_callback_cannot_outlast_the_maximum(autojump_clock: trio.abc.Clock) -> None:
    server = make_server()
    cancelled = trio.Event()

    @server.tool()
    async def busy(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await ctx.progress(1)
            await trio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    async def stuck_callback(p: float, total: float | None, message: str | None) -> None:
        await trio.sleep_forever()

    async with memory_session_pair(server, era="legacy") as client:
        start = trio.current_time()
        with pytest.raises(RequestTimeout) as info:
            await client.call_tool("busy", progress=stuck_callback, timeout=5, max_timeout=10)
        assert info.value.kind == "maximum" and info.value.timeout == 10
        assert trio.current_time() - start == pytest.approx(10)
        with trio.fail_after(1):
            await cancelled.wait()  # the server was told


@pytest.mark.req("basic/lifecycle#17", "basic/lifecycle#18")
async def test_each_request_times_out_on_its_own_deadline(autojump_clock: trio.abc.Clock) -> None:
    """A short timeout set while a long one is waiting still fires on time, and
    a request answered in time is not touched by its passed deadline."""
    server = make_server()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await trio.sleep(float(arguments.get("for", math.inf)))
        return "late"

    async with memory_session_pair(server, era="legacy") as client:
        outcomes: dict[str, tuple[str, float]] = {}

        async def call(name: str, timeout: float, args: dict[str, Any]) -> None:
            start = trio.current_time()
            try:
                await client.call_tool("hang", args, timeout=timeout)
                outcomes[name] = ("answered", trio.current_time() - start)
            except RequestTimeout:
                outcomes[name] = ("timed out", trio.current_time() - start)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, "long", 100, {})
            await trio.sleep(1)
            nursery.start_soon(call, "short", 3, {})
            nursery.start_soon(call, "quick", 50, {"for": 2})
        assert outcomes["short"] == ("timed out", pytest.approx(3))
        assert outcomes["quick"] == ("answered", pytest.approx(2))
        assert outcomes["long"] == ("timed out", pytest.approx(100))


async def test_finished_requests_do_not_pile_up_in_the_timeout_heap() -> None:
    async with memory_session_pair(make_server(), era="legacy") as client:
        for _ in range(500):
            await client.call_tool("echo", {"text": "x"})
        # deadlines of answered requests are dropped as they accumulate, not kept for their whole timeout
        assert len(client.session._timeouts) <= 130


@pytest.mark.req("basic/utilities/progress#3")
async def test_progress_arrives_in_order_before_the_result() -> None:
    server = make_server()

    @server.tool()
    async def burst(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for i in range(100):
            await ctx.progress(i + 1, 100, f"step {i + 1}")
        return "end"

    async with memory_session_pair(server, era="legacy") as client:
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            await trio.sleep(0)  # a slow consumer must not lose or reorder anything
            seen.append((p, total, message))

        result = await client.call_tool("burst", progress=on_progress)
        assert result.content == [TextContent(text="end")]
        assert seen == [(i + 1, 100, f"step {i + 1}") for i in range(100)]


async def test_progress_callback_error_abandons_the_request(autojump_clock: trio.abc.Clock) -> None:
    server = make_server()

    @server.tool()
    async def ticking(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for i in range(1, 1000):
            await ctx.progress(i)
            await trio.sleep(1)
        return "x"

    async with recorded_pair(server) as (client, rec):

        async def explode(p: float, total: float | None, message: str | None) -> None:
            raise ValueError("callback failed")

        with pytest.raises(ValueError, match="callback failed"):
            await client.call_tool("ticking", progress=explode)
        await client.ping()
        assert any(m.get("method") == "notifications/cancelled" for m in rec.received)


async def test_handler_progress_must_increase() -> None:
    server = make_server()
    errors: list[str] = []

    @server.tool()
    async def bad(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(5)
        try:
            await ctx.progress(5)
        except LocalProtocolError as e:
            errors.append(str(e))
        return "ok"

    async with memory_session_pair(server, era="legacy") as client:

        async def ignore(p: float, total: float | None, message: str | None) -> None:
            pass

        await client.call_tool("bad", progress=ignore)
        assert errors and "increase" in errors[0]


@pytest.mark.req("basic/utilities/ping#1")
async def test_ping_is_answered_while_every_handler_is_busy(autojump_clock: trio.abc.Clock) -> None:
    server = make_server(max_concurrent_requests=2)
    release = trio.Event()

    @server.tool()
    async def block(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await release.wait()
        return "released"

    async with memory_session_pair(server, era="legacy") as client:
        async with trio.open_nursery() as nursery:
            for _ in range(4):
                nursery.start_soon(client.call_tool, "block")
            await trio.testing.wait_all_tasks_blocked()
            with trio.fail_after(1):
                await client.ping()
            release.set()


async def test_eof_fails_pending_requests_with_connection_closed() -> None:
    client_end, server_end = memory_channel_pair()
    server = make_server()
    started = trio.Event()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        started.set()
        await trio.sleep_forever()
        return "x"

    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        async with open_session(client_end, era="legacy") as client:
            async with trio.open_nursery() as inner:

                async def kill_server() -> None:
                    await started.wait()
                    await server_end.aclose()

                inner.start_soon(kill_server)
                with pytest.raises(ConnectionClosed):
                    await client.call_tool("hang", timeout=math.inf)
            with pytest.raises(ConnectionClosed):
                await client.ping()


@pytest.mark.req("basic/utilities/cancellation#7")
@pytest.mark.req("schema#12", "schema#13")
async def test_cancel_racing_the_handlers_result_suppresses_the_response(autojump_clock: trio.abc.Clock) -> None:
    """The handler finishes at the very moment the cancellation arrives: no response either way."""
    server = make_server()
    seq = trio.testing.Sequencer()

    @server.tool()
    async def racy(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        # The work completes without ever seeing Cancelled (shielded), while the
        # cancellation is processed: only the engine's record of it keeps the
        # result off the wire.
        with trio.CancelScope(shield=True):
            async with seq(1):
                pass
        return "finished"

    client_end, server_end = memory_channel_pair()
    rec = Recorder(server_end)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, rec)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        await client_end.send(json.dumps(init).encode())
        await client_end.receive()
        await client_end.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        await client_end.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"racy"}}')
        async with seq(0):
            await client_end.send(
                b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"race"}}'
            )
            await trio.testing.wait_all_tasks_blocked()
        async with seq(2):
            pass
        await trio.testing.wait_all_tasks_blocked()
        await client_end.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
        reply = json.loads(await client_end.receive())
        assert reply == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert not [m for m in rec.sent if m.get("id") == 1]
        nursery.cancel_scope.cancel()


async def test_invalid_json_gets_parse_error_and_session_continues() -> None:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(make_server().serve, server_end)
        await client_end.send(b"{this is not json")
        reply = json.loads(await client_end.receive())
        assert reply["error"]["code"] == -32700 and reply["id"] is None
        await client_end.send(b'{"jsonrpc":"2.0","id":"p","method":"ping"}')
        assert json.loads(await client_end.receive()) == {"jsonrpc": "2.0", "id": "p", "result": {}}
        nursery.cancel_scope.cancel()


async def test_notification_handlers_run_in_arrival_order() -> None:
    server = make_server()
    got: list[str] = []
    done = trio.Event()

    async def on_roots_changed(session: Any, params: Any) -> None:
        await trio.sleep(0)
        got.append("roots")
        if len(got) == 3:
            done.set()

    server.on_notification("notifications/roots/list_changed", on_roots_changed)
    from mcp_ref.schema.lifecycle import ClientCapabilities, RootsCapability

    caps = ClientCapabilities(roots=RootsCapability(list_changed=True))
    async with memory_session_pair(server, capabilities=caps, era="legacy") as client:
        for _ in range(3):
            await client.notify("notifications/roots/list_changed")
        with trio.fail_after(5):
            await done.wait()
    assert got == ["roots"] * 3


def test_session_config_is_validated() -> None:
    with pytest.raises(ValueError):
        SessionConfig(request_timeout=0)
    with pytest.raises(ValueError):
        SessionConfig(max_concurrent_requests=0)


async def test_a_result_with_no_json_form_becomes_internal_error(caplog: pytest.LogCaptureFixture) -> None:
    server = make_server()

    @server.tool()
    async def stats(ctx: RequestContext, arguments: dict[str, Any]) -> Any:
        return {"mean": math.nan}

    async with memory_session_pair(server, era="legacy") as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("stats")
        assert (info.value.code, info.value.message) == (ErrorCode.INTERNAL_ERROR, "Internal error")
        assert info.value.data is None
        # the session survives, and the cause is in our log with its traceback
        result = await client.call_tool("echo", {"text": "still here"})
        assert result.content == [TextContent(text="still here")]
    (record,) = [r for r in caplog.records if "unusable result" in r.getMessage()]
    assert record.exc_info is not None


async def test_error_data_with_no_json_form_is_dropped_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    server = make_server()

    @server.tool()
    async def refuse(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise MCPError(ErrorCode.INVALID_PARAMS, "bad date", {"when": datetime.datetime(2026, 1, 1)})

    async with memory_session_pair(server, era="legacy") as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("refuse")
        # code and message survive; the data that cannot be written does not
        assert (info.value.code, info.value.message, info.value.data) == (ErrorCode.INVALID_PARAMS, "bad date", None)
        await client.ping()
    assert any("without data" in r.getMessage() for r in caplog.records)


async def test_unencodable_log_data_raises_at_the_call_and_sessions_survive() -> None:
    server = make_server()
    async with memory_session_pair(server, era="legacy") as client:
        await client.request("logging/setLevel", SetLevelRequestParams(level="debug"))
        with pytest.raises(LocalProtocolError) as info:
            server.log("info", {"ratio": math.nan})
        assert info.value.code == ErrorCode.INTERNAL_ERROR
        (session,) = server.sessions
        with pytest.raises(LocalProtocolError):
            session.notify_soon("notifications/message", {"data": {1, 2}})
        server.log("info", {"ratio": 0.5})
        await client.ping()
        assert not session.closed.is_set()


async def test_the_writer_survives_a_notification_it_cannot_encode(caplog: pytest.LogCaptureFixture) -> None:
    server = make_server()
    got: list[Any] = []

    async def on_message(session: Any, params: Any) -> None:
        got.append(params.data)

    async with memory_session_pair(
        server, notification_handlers={"notifications/message": on_message}, era="legacy"
    ) as client:
        await client.request("logging/setLevel", SetLevelRequestParams(level="debug"))
        (session,) = server.sessions
        # a caller that claims to have checked, but did not: logged, skipped, nothing else lost
        bad = LoggingMessageNotificationParams(level="info", data={"ratio": math.inf})
        session.notify_soon("notifications/message", bad, checked=True)
        server.log("info", "after")
        await client.ping()
        await trio.testing.wait_all_tasks_blocked()
        assert got == ["after"]
        assert not session.closed.is_set()
    assert any("cannot encode notifications/message" in r.getMessage() for r in caplog.records)


@pytest.mark.req("basic/lifecycle#22")
async def test_our_own_api_misuse_in_a_handler_is_internal_error(caplog: pytest.LogCaptureFixture) -> None:
    server = make_server()

    @server.prompt()
    async def ask_model(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        # the client declared no sampling capability: LocalProtocolError before the wire
        # (in a tool it is a tool error the model reads: tests/session/test_request_context.py)
        await ctx.sample(CreateMessageRequestParams(messages=[], max_tokens=5))
        return "never"

    @server.tool()
    async def backwards(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(2)
        await ctx.progress(1)
        return "never"

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        pass

    async with memory_session_pair(server, era="legacy") as client:
        for call in (client.get_prompt("ask_model"), client.call_tool("backwards", progress=on_progress)):
            with pytest.raises(MCPError) as info:
                await call
            # not the -32601 / -32602 our engine chose for our own mistake: the caller did nothing wrong
            assert (info.value.code, info.value.message) == (ErrorCode.INTERNAL_ERROR, "Internal error")
        await client.ping()
    failed = [r for r in caplog.records if "failed" in r.getMessage() and r.exc_info is not None]
    assert [type(r.exc_info[1]) for r in failed if r.exc_info] == [CapabilityMissing, LocalProtocolError]


async def test_an_mcp_error_from_a_nested_request_keeps_its_code() -> None:
    server = make_server()

    @server.tool()
    async def ask_model(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.sample(CreateMessageRequestParams(messages=[], max_tokens=5))
        return "never"

    async def refuse(ctx: Any, params: CreateMessageRequestParams) -> CreateMessageResult:
        raise SamplingRejected("the user said no")

    async with memory_session_pair(server, sampling=refuse, era="legacy") as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("ask_model")
        assert (info.value.code, info.value.message) == (-1, "the user said no")


async def test_a_broken_answer_to_a_nested_request_is_internal_error() -> None:
    server = make_server()

    @server.tool()
    async def roots(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.list_roots()
        return "never"

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        await client_end.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode())
        assert "result" in json.loads(await client_end.receive())
        await client_end.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "roots"}}
        await client_end.send(json.dumps(call).encode())
        nested = json.loads(await client_end.receive())
        assert nested["method"] == "roots/list"
        # a result that breaks the schema: the server's RemoteProtocolError is not the caller's fault
        await client_end.send(json.dumps({"jsonrpc": "2.0", "id": nested["id"], "result": {"roots": 7}}).encode())
        reply = json.loads(await client_end.receive())
        assert reply["id"] == 2 and reply["error"] == {"code": -32603, "message": "Internal error"}
        nursery.cancel_scope.cancel()


class StuckSend(trio.abc.Channel[bytes]):
    """Wraps a channel; while ``stuck``, every send blocks (a full pipe to a peer that stopped reading)."""

    def __init__(self, inner: trio.abc.Channel[bytes]) -> None:
        self.inner = inner
        self.stuck = False
        self.blocked = 0
        self._unstuck = trio.Event()

    def unstick(self) -> None:
        self.stuck = False
        self._unstuck.set()
        self._unstuck = trio.Event()

    async def send(self, value: bytes) -> None:
        while self.stuck:
            self.blocked += 1
            try:
                await self._unstuck.wait()
            finally:
                self.blocked -= 1
        await self.inner.send(value)

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def stuck_client(server: Server, **client_options: Any) -> AsyncIterator[tuple[Any, StuckSend, Recorder]]:
    """A client whose own sends can be made to block; the server side is recorded."""
    client_end, server_end = memory_channel_pair()
    stuck = StuckSend(client_end)
    rec = Recorder(server_end)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, rec)
        async with open_session(stuck, **client_options, era="legacy") as client:
            yield client, stuck, rec
            stuck.unstick()
        nursery.cancel_scope.cancel()


async def two_pings_time_out_behind_a_blocked_send(ping: Callable[..., Awaitable[Any]]) -> None:
    """Ping with a 10 s timeout while the transport blocks, then with 5 s queued behind it
    (a session with ``cancel_grace=1``): both raise RequestTimeout, each in its own way."""
    outcomes: dict[str, tuple[float, str]] = {}

    async def one(name: str, timeout: float) -> None:
        start = trio.current_time()
        with pytest.raises(RequestTimeout) as info:
            await ping(timeout=timeout)
        outcomes[name] = (trio.current_time() - start, str(info.value))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one, "in the transport", 10)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(one, "waiting to be written", 5)
    # never handed to the transport: dropped at its deadline, nothing to cancel
    waited, message = outcomes["waiting to be written"]
    assert waited == pytest.approx(5) and "could not be sent" in message
    # handed over (the peer might have it): its deadline, then at most the grace for the cancellation
    waited, message = outcomes["in the transport"]
    assert waited == pytest.approx(10 + 1) and "cancellation could not be written within 1s" in message


@pytest.mark.req("basic/lifecycle#17", "basic/lifecycle#18", "basic/lifecycle#22", "basic/utilities/cancellation#1")
async def test_the_timeout_covers_a_send_that_blocks(autojump_clock: trio.abc.Clock) -> None:
    async with stuck_client(make_server(), config=SessionConfig(cancel_grace=1)) as (client, stuck, rec):
        stuck.stuck = True
        await two_pings_time_out_behind_a_blocked_send(client.ping)
        assert stuck.blocked == 0  # every blocked send was stopped
        stuck.unstick()
        await client.ping()  # the session goes on
        assert [m.get("method") for m in rec.received].count("ping") == 1


async def test_a_deadline_passed_before_result_is_awaited_times_out_at_once(autojump_clock: trio.abc.Clock) -> None:
    server = make_server()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await trio.sleep_forever()
        return "never"

    async with recorded_pair(server) as (client, rec):
        handle = await client.start_request("tools/call", CallToolRequestParams(name="hang"), timeout=5)
        await trio.sleep(10)
        start = trio.current_time()
        with pytest.raises(RequestTimeout, match="request cancelled"):
            await handle.result()
        assert trio.current_time() == start
        await client.ping()
        (note,) = [m for m in rec.received if m.get("method") == "notifications/cancelled"]
        assert note["params"]["requestId"] == handle.id


@pytest.mark.req("basic/lifecycle#14")
async def test_handlers_set_by_hand_declare_their_capability() -> None:
    server = Server("hand", "1.0")

    @server.handler("prompts/list")
    async def list_prompts(ctx: RequestContext, params: Any) -> ListPromptsResult:
        return ListPromptsResult(prompts=[Prompt(name="by-hand")])

    async def subscribe(ctx: RequestContext, params: Any) -> Result:
        return Result()

    server.set_handler("resources/subscribe", subscribe)
    caps = server.capabilities()
    assert caps.prompts is not None and caps.tools is None
    assert caps.resources is not None and caps.resources.subscribe is True
    async with memory_session_pair(server, era="legacy") as client:
        assert [p.name for p in await client.list_all_prompts()] == ["by-hand"]
        await client.request("resources/subscribe", SubscribeRequestParams(uri="file:///x"))


async def test_capabilities_can_be_declared_explicitly() -> None:
    declared = ServerCapabilities(prompts=ListChangedCapability(list_changed=True), logging={})
    server = Server("explicit", "1.0", capabilities=declared)
    assert server.capabilities() == declared
    async with memory_session_pair(server, era="legacy") as client:
        assert client.server_capabilities.prompts == ListChangedCapability(list_changed=True)
        assert client.server_capabilities.tools is None


@pytest.mark.parametrize("at_once", [True, False])
async def test_concurrent_writes_reach_the_peer_in_the_order_they_were_made(at_once: bool) -> None:
    # a memory channel takes a message at once (send_nowait) and the session takes the
    # schedule point after releasing its write lock; any other channel is written inside it
    from mcp_ref.basic.lifecycle import Role
    from mcp_ref.connection import Connection
    from mcp_ref.session.core import session_scope

    ours, theirs = memory_channel_pair(max_buffer=3)  # some writes fit, the others wait
    channel: trio.abc.Channel[bytes] = ours if at_once else Recorder(ours)
    assert hasattr(channel, "send_nowait") is at_once
    made: list[int] = []
    async with session_scope(Connection(Role.SERVER), channel) as session:

        async def write(n: int) -> None:
            made.append(n)  # encoded and handed to send_raw with no checkpoint in between
            await session.send_raw(json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"n": n}}).encode())

        async with trio.open_nursery() as nursery:
            for n in range(20):
                nursery.start_soon(write, n)
            await trio.testing.wait_all_tasks_blocked()
            arrived = [json.loads(await theirs.receive())["params"]["n"] for _ in range(20)]
    assert arrived == made


def initialized_client_connection() -> Any:
    """A client Connection past the handshake (done without I/O)."""
    from ..test_connection import handshake

    client, _ = handshake(server_caps=ServerCapabilities())
    return client


@pytest.mark.req("basic/lifecycle#17", "basic/utilities/cancellation#1")
async def test_a_request_behind_a_full_memory_channel_is_not_handed_over(autojump_clock: trio.abc.Clock) -> None:
    # as test_the_timeout_covers_a_send_that_blocks, on a memory channel whose buffer is full:
    # only the write the transport is taking counts as handed over, not those queued behind it
    from mcp_ref.session.core import session_scope

    conn = initialized_client_connection()
    ours, theirs = memory_channel_pair(max_buffer=0)  # nobody reads: every send waits
    async with session_scope(conn, ours, config=SessionConfig(cancel_grace=1)) as session:
        await two_pings_time_out_behind_a_blocked_send(session.ping)


async def sends_ended_by_eof(
    theirs: trio.abc.Channel[bytes], *sends: Callable[[], Awaitable[Any]]
) -> list[tuple[float, str]]:
    """Start ``sends`` on a session whose peer never reads, and once they block, end the
    peer's output: each must raise ConnectionClosed. Returns (seconds after the EOF, message)."""
    outcome: list[tuple[float, str]] = []

    async def one(send: Callable[[], Awaitable[Any]]) -> None:
        with pytest.raises(ConnectionClosed) as info:
            await send()
        outcome.append((trio.current_time() - eof_at, str(info.value)))

    eof_at = math.inf
    with trio.fail_after(60):  # (without the fix it waits forever)
        async with trio.open_nursery() as nursery:
            for send in sends:
                nursery.start_soon(one, send)
            await trio.testing.wait_all_tasks_blocked()
            eof_at = trio.current_time()
            await theirs.send_eof()
    return outcome


@pytest.mark.req("basic/lifecycle#17")
async def test_eof_stops_a_request_stuck_in_its_first_send(autojump_clock: trio.abc.Clock) -> None:
    # the peer ends its output but never reads ours: a request blocked in its send ends with
    # the session (the timer that would have stopped it ends with the session too)
    from mcp_ref.session.core import session_scope

    ours, theirs = memory_channel_pair(max_buffer=0)
    async with session_scope(initialized_client_connection(), ours) as session:
        [(after_eof, message)] = await sends_ended_by_eof(theirs, lambda: session.ping(timeout=5))
        assert after_eof == 0  # at the EOF, not at the request's deadline
        assert "end of stream" in message
        with pytest.raises(ConnectionClosed):
            await session.ping()


@pytest.mark.req("basic/lifecycle#17")
async def test_eof_ends_every_write_still_blocked(autojump_clock: trio.abc.Clock) -> None:
    # a notification has no deadline of its own: blocked on a peer that ended its output
    # and does not read, it ends with the session rather than when the block exits
    from mcp_ref.session.core import session_scope

    ours, theirs = memory_channel_pair(max_buffer=0)
    async with session_scope(initialized_client_connection(), ours) as session:

        def notify() -> Awaitable[None]:
            return session.notify("notifications/initialized")

        # one in the transport, one waiting for the write lock
        outcome = await sends_ended_by_eof(theirs, notify, notify)
        assert [message for _, message in outcome] == ["end of stream", "end of stream"]


async def a_ping_answered_as_its_deadline_passes(**options: Any) -> None:
    """A ping (``options`` giving it a 5 s deadline) whose answer is in when the deadline
    passes: result() returns it, and no cancellation goes out before the next message."""
    from mcp_ref.session.core import session_scope

    ours, theirs = memory_channel_pair()
    async with session_scope(initialized_client_connection(), ours) as session:
        handle = await session.start_request("ping", **options)
        request = json.loads(await theirs.receive())
        await trio.sleep(5)  # the deadline passes (the timer has given up on it) ...
        await theirs.send(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}).encode())
        await trio.testing.wait_all_tasks_blocked()  # ... and the answer is in
        assert await handle.result() == Result()
        await session.notify("notifications/initialized")  # the next thing the peer gets
        assert json.loads(await theirs.receive())["method"] == "notifications/initialized"


@pytest.mark.req("basic/lifecycle#18", "basic/utilities/cancellation#1")
async def test_an_answer_right_behind_the_timeout_is_taken_not_discarded(autojump_clock: trio.abc.Clock) -> None:
    # the timer gives up on the request and its answer arrives in the same instant (here made
    # certain: both are in before result() looks): the answer is returned, and no
    # cancellation goes out for a request that is finished
    await a_ping_answered_as_its_deadline_passes(timeout=5)


@pytest.mark.req("basic/lifecycle#21")
async def test_an_answer_in_the_instant_the_maximum_passes_is_taken_with_a_progress_callback(
    autojump_clock: trio.abc.Clock,
) -> None:
    # with a progress callback the wait runs under a scope ending at the maximum timeout;
    # an answer that arrived by then is returned, not turned into RequestTimeout
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    await a_ping_answered_as_its_deadline_passes(progress=on_progress, timeout=60, max_timeout=5)
    assert seen == []


class SlowSend(trio.abc.Channel[bytes]):
    """Wraps a channel; every send takes ``delay`` seconds (a pipe the peer drains slowly)."""

    def __init__(self, inner: trio.abc.Channel[bytes], delay: float) -> None:
        self.inner = inner
        self.delay = delay

    async def send(self, value: bytes) -> None:
        await trio.sleep(self.delay)
        await self.inner.send(value)

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.req("basic/utilities/ping#1", "basic/index#10")
async def test_at_eof_the_replies_to_a_last_ping_and_a_last_bad_line_still_go_out(
    autojump_clock: trio.abc.Clock,
) -> None:
    # printf '...ping...garbage' | server: no handler runs for these, but their replies are
    # owed just the same, so the end of input waits for them as for a handler (eof_grace)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        serve = make_server().serve
        nursery.start_soon(lambda: serve(SlowSend(server_end, 1.0), config=SessionConfig(eof_grace=5.0)))
        for m in (init, {"jsonrpc": "2.0", "method": "notifications/initialized"}):
            await client_end.send(json.dumps(m).encode())
        await client_end.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
        await client_end.send(b"not json")
        await client_end.send_eof()
        got = []
        with trio.fail_after(100):
            while True:
                try:
                    got.append(json.loads(await client_end.receive()))
                except trio.EndOfChannel:
                    break
    assert [m.get("id") for m in got] == [1, 2, None]
    assert got[1]["result"] == {} and got[2]["error"]["code"] == ErrorCode.PARSE_ERROR
