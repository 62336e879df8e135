"""The session around the handshake and the transport: initialize timeouts, version
rejection, pings before operation, oversized messages -- with the peer played by the test."""

import json
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.errors import ConnectionClosed, MessageTooLarge, RequestTimeout, UnsupportedProtocolVersion
from mcp_ref.schema.lifecycle import InitializeResult
from mcp_ref.session import RequestContext, open_session

from .test_session import make_server


def _init_result(rid: Any, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> bytes:
    caps = capabilities or {}
    result = {"protocolVersion": version, "capabilities": caps, "serverInfo": {"name": "raw", "version": "1"}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


def _initialize(rid: Any = 1) -> bytes:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}).encode()


@pytest.mark.req("basic/lifecycle#17", "basic/lifecycle#22", "basic/utilities/cancellation#2")
async def test_initialize_timeout(autojump_clock: trio.abc.Clock) -> None:
    client_end, server_end = memory_channel_pair()
    got: list[Any] = []

    async def silent_server() -> None:
        async for data in server_end:
            got.append(json.loads(data))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(silent_server)
        start = trio.current_time()
        with pytest.raises(RequestTimeout) as info:
            async with open_session(client_end, initialize_timeout=7, era="legacy"):
                raise AssertionError("initialised without an answer")
        assert trio.current_time() - start == pytest.approx(7)
        assert info.value.method == "initialize" and info.value.timeout == 7
        # the message tells the truth: initialize is never cancelled
        assert "initialize is never cancelled" in str(info.value) and "request cancelled" not in str(info.value)
        await trio.testing.wait_all_tasks_blocked()
        assert [m.get("method") for m in got] == ["initialize"]
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/lifecycle#12", "basic/lifecycle#22")
async def test_a_server_version_we_do_not_speak_closes_the_session(autojump_clock: trio.abc.Clock) -> None:
    client_end, server_end = memory_channel_pair()
    got: list[Any] = []

    async def old_server() -> None:
        req = json.loads(await server_end.receive())
        await server_end.send(_init_result(req["id"], version="1999-01-01"))
        async for data in server_end:
            got.append(json.loads(data))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(old_server)
        with pytest.raises(UnsupportedProtocolVersion) as info:
            async with open_session(client_end, era="legacy"):
                raise AssertionError("initialised with an unsupported version")
        assert info.value.offered == "1999-01-01" and info.value.server_versions == ("1999-01-01",)
        await trio.testing.wait_all_tasks_blocked()
        assert got == []  # no notifications/initialized: the client disconnected
        with pytest.raises(trio.ClosedResourceError):
            await client_end.send(b"{}")
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/ping#1")
async def test_the_server_answers_ping_while_initialize_is_in_progress() -> None:
    server = make_server()
    release = trio.Event()
    in_initialize = trio.Event()
    builtin = server.handler_table()["initialize"]

    async def slow_initialize(ctx: RequestContext, params: Any) -> InitializeResult:
        in_initialize.set()
        await release.wait()
        result: InitializeResult = await builtin(ctx, params)
        return result

    server.set_handler("initialize", slow_initialize)
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        await client_end.send(_initialize(1))
        await in_initialize.wait()
        await client_end.send(b'{"jsonrpc":"2.0","id":"p","method":"ping"}')
        assert json.loads(await client_end.receive()) == {"jsonrpc": "2.0", "id": "p", "result": {}}
        release.set()
        reply = json.loads(await client_end.receive())
        assert reply["id"] == 1 and reply["result"]["protocolVersion"] == "2025-11-25"
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/ping#1")
async def test_the_client_answers_ping_before_initialized() -> None:
    client_end, server_end = memory_channel_pair()
    pong: list[Any] = []

    async def pinging_server() -> None:
        req = json.loads(await server_end.receive())
        # a ping before the initialize result (the one request allowed so early)
        await server_end.send(b'{"jsonrpc":"2.0","id":"early","method":"ping"}')
        pong.append(json.loads(await server_end.receive()))
        await server_end.send(_init_result(req["id"]))
        assert json.loads(await server_end.receive())["method"] == "notifications/initialized"

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pinging_server)
        async with open_session(client_end, era="legacy") as client:
            assert client.protocol_version == "2025-11-25"
        assert pong == [{"jsonrpc": "2.0", "id": "early", "result": {}}]


class OneTooLarge(trio.abc.Channel[bytes]):
    """A transport that reports one oversized message (skipped whole) before the rest."""

    def __init__(self, inner: trio.abc.Channel[bytes]) -> None:
        self.inner = inner
        self.pending = True

    async def send(self, value: bytes) -> None:
        await self.inner.send(value)

    async def receive(self) -> bytes:
        if self.pending:
            self.pending = False
            raise MessageTooLarge(10_000_000, 1_000_000)
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.req("basic/index#10")
async def test_an_oversized_message_is_answered_and_the_session_goes_on() -> None:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(make_server().serve, OneTooLarge(server_end))
        reply = json.loads(await client_end.receive())
        assert reply["error"]["code"] == -32600 and reply["id"] is None
        assert "exceeds the limit" in reply["error"]["message"]
        await client_end.send(b'{"jsonrpc":"2.0","id":"p","method":"ping"}')
        assert json.loads(await client_end.receive()) == {"jsonrpc": "2.0", "id": "p", "result": {}}
        nursery.cancel_scope.cancel()


async def test_a_closed_session_refuses_new_requests() -> None:
    async with trio.open_nursery() as nursery:
        client_end, server_end = memory_channel_pair()
        await nursery.start(make_server().serve, server_end)
        async with open_session(client_end, era="legacy") as client:
            await client.session.aclose("done here")
            with pytest.raises(ConnectionClosed, match="done here"):
                await client.ping()
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/cancellation#3")
async def test_a_task_augmented_request_that_times_out_says_no_cancellation_went_out(
    autojump_clock: trio.abc.Clock,
) -> None:
    client_end, server_end = memory_channel_pair()
    got: list[Any] = []

    async def slow_task_server() -> None:
        req = json.loads(await server_end.receive())
        caps = {"tasks": {"requests": {"tools": {"call": {}}}}, "tools": {}}
        await server_end.send(_init_result(req["id"], capabilities=caps))
        async for data in server_end:  # never answers
            got.append(json.loads(data))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(slow_task_server)
        async with open_session(client_end, era="legacy") as client:
            with pytest.raises(RequestTimeout) as info:
                await client.call_tool_as_task("slow", timeout=3)
            assert "no cancellation sent" in str(info.value) and "tasks/cancel" in str(info.value)
            await trio.testing.wait_all_tasks_blocked()
            assert [m.get("method") for m in got] == ["notifications/initialized", "tools/call"]
        nursery.cancel_scope.cancel()


def _server_of(*versions: str) -> Any:
    from mcp_ref import Server

    server = Server("only-old", supported_versions=versions, modern_versions=())

    @server.tool()
    async def which(ctx: RequestContext) -> str:
        return str(ctx.session.connection.protocol_version)

    return server


@pytest.mark.req("basic/lifecycle#12")
async def test_a_pinned_revision_is_the_one_spoken_or_a_clear_error() -> None:
    # a client pinned to 2025-11-25 against a server of 2025-06-18 only: the server's answer is
    # spec-legal negotiation, but running 2025-06-18 silently is not what the pin asked for
    from mcp_ref.testing import memory_session_pair

    with pytest.raises(UnsupportedProtocolVersion) as info:
        async with memory_session_pair(_server_of("2025-06-18"), protocol_version="2025-11-25"):
            raise AssertionError("ran a revision other than the pinned one")
    assert info.value.offered == "2025-06-18" and info.value.supported == ("2025-11-25",)
    assert info.value.server_versions == ("2025-06-18",)  # what the server answered, named (trial28c)
    assert "server chose protocol version '2025-06-18'; this client supports 2025-11-25" in str(info.value)
    # the pin the server has: that one
    async with memory_session_pair(_server_of("2025-06-18"), protocol_version="2025-06-18") as client:
        assert client.protocol_version == "2025-06-18"


async def test_a_pinned_revision_with_supported_versions_is_a_preference() -> None:
    from mcp_ref import SUPPORTED_VERSIONS
    from mcp_ref.testing import memory_session_pair

    options: dict[str, Any] = {"protocol_version": "2025-11-25", "supported_versions": SUPPORTED_VERSIONS}
    async with memory_session_pair(_server_of("2025-06-18"), **options) as client:
        assert client.protocol_version == "2025-06-18"
        assert (await client.call_tool("which")).content[0].text == "2025-06-18"  # type: ignore[union-attr]
    # and without a pin the client takes what the server answers, as negotiation says
    async with memory_session_pair(_server_of("2025-06-18"), era="legacy") as client:
        assert client.protocol_version == "2025-06-18"


async def test_a_pinned_client_refused_by_the_server_is_told_which_revision_it_could_pin() -> None:
    # a server that refuses initialize naming the versions it has (error.data.supported): the pin
    # narrows what the client accepts, not what it can suggest
    client_end, server_end = memory_channel_pair()

    async def refusing_server() -> None:
        req = json.loads(await server_end.receive())
        error = {"code": -32602, "message": "Unsupported protocol version", "data": {"supported": ["2025-06-18"]}}
        await server_end.send(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": error}).encode())

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(refusing_server)
            with pytest.raises(UnsupportedProtocolVersion) as info:
                async with open_session(client_end, protocol_version="2025-11-25"):
                    raise AssertionError("no session without a version in common")
    assert "it supports 2025-06-18; open with protocol_version='2025-06-18' to speak it" in str(info.value)
