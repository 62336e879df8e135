"""The statements of 2026-07-28's schema.ts that bind the runtime rather than the shape of
a type (the shapes are test_modern.py's): who may read ``clientInfo`` and ``serverInfo``,
which request a cancellation may name, and what a client's cache does with ``ttlMs`` and
``cacheScope``."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mcp_ref import CachePolicy, RequestContext, Server, open_session
from mcp_ref.basic.lifecycle import Role
from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.errors import LocalProtocolError
from mcp_ref.exchange import StatelessEngine
from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation
from mcp_ref.session.modern_client import EraCache, ResultCache


def _server(name: str = "srv", calls: list[str] | None = None) -> Server:
    server = Server(name, "1.0", state_key=b"k" * 32)
    seen = calls if calls is not None else []

    @server.tool(description="echo")
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text"))

    @server.resource("test://mine", cache=CachePolicy(60_000, "private"))
    async def mine(ctx: RequestContext) -> str:
        seen.append("read")
        return "only yours"

    return server


@asynccontextmanager
async def _served(server: Server) -> AsyncIterator[Any]:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        yield client_end
        nursery.cancel_scope.cancel()


async def _exchange(channel: Any, engine: StatelessEngine, method: str, params: Any) -> dict[str, Any]:
    rid, data = engine.send_request(method, params)
    await channel.send(data)
    with trio.fail_after(10):
        while True:
            message = json.loads(await channel.receive())
            if message.get("id") == rid and "method" not in message:
                message.pop("id")
                return dict(message)


# -- clientInfo / serverInfo are information, never a switch ------------------------------


@pytest.mark.req("2026-07-28:schema#9")
async def test_the_server_answers_the_same_whoever_the_client_says_it_is() -> None:
    answers = []
    async with _served(_server()) as channel:
        for info in (None, Implementation(name="admin", version="9"), Implementation(name="claude", version="1")):
            engine = StatelessEngine(Role.CLIENT, info=info, capabilities=ClientCapabilities())
            answers.append(
                [
                    await _exchange(channel, engine, "tools/list", None),
                    await _exchange(channel, engine, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
                    await _exchange(channel, engine, "server/discover", None),
                ]
            )
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][1]["result"]["content"] == [{"type": "text", "text": "x"}]


class _Recording(trio.abc.Channel[bytes]):
    """The client's end of a pair, keeping what the client sent (ids left out)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[Any] = []

    async def send(self, value: bytes) -> None:
        message = json.loads(value)
        message.pop("id", None)
        self.sent.append(message)
        await self.inner.send(value)

    async def receive(self) -> bytes:
        data: bytes = await self.inner.receive()
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.req("2026-07-28:schema#14")
async def test_the_client_asks_the_same_whatever_the_server_says_it_is() -> None:
    sent = []
    for name in ("srv", "official-reference-server"):
        async with _served(_server(name)) as channel:
            recording = _Recording(channel)
            async with open_session(recording, era_cache=EraCache()) as client:
                assert client.server_info.name == name  # read, and reported to the application
                await client.list_tools()
                await client.call_tool("echo", {"text": "x"})
            sent.append(recording.sent)
    assert sent[0] == sent[1]
    assert [m.get("method") for m in sent[0]] == ["server/discover", "tools/list", "tools/call"]


# -- cancellation names a request of our own ----------------------------------------------


@pytest.mark.req("2026-07-28:schema#22")
def test_a_cancellation_names_only_a_request_the_client_has_in_flight() -> None:
    client = StatelessEngine(Role.CLIENT, info=Implementation(name="c", version="1"))
    rid, _ = client.send_request("tools/list")
    with pytest.raises(LocalProtocolError, match="not in flight"):
        client.send_cancel(rid + 1)
    assert json.loads(client.send_cancel(rid))["params"] == {"requestId": rid}
    with pytest.raises(LocalProtocolError, match="not in flight"):
        client.send_cancel(rid)  # answered or cancelled: no longer ours to cancel


# -- the client's cache ---------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.req("2026-07-28:schema#36")
def test_a_positive_ttl_lets_the_client_keep_the_result_that_long() -> None:
    clock = _Clock()
    cache = ResultCache(clock)
    cache.put("tools/list", None, {"tools": [], "ttlMs": 1500})
    clock.now += 1.499
    assert cache.get("tools/list", None) == {"tools": [], "ttlMs": 1500}
    clock.now += 0.001
    assert cache.get("tools/list", None) is None


@pytest.mark.req("2026-07-28:schema#37")
def test_a_zero_ttl_is_stale_at_once() -> None:
    clock = _Clock()
    cache = ResultCache(clock)
    cache.put("tools/list", None, {"tools": [], "ttlMs": 0})
    cache.put("tools/list", "page2", {"tools": [], "ttlMs": 1})
    assert cache.get("tools/list", None) is None  # fetched again every time it is needed
    assert cache.get("tools/list", "page2") is not None  # (beside one that may be kept a moment)


@pytest.mark.req("2026-07-28:schema#40", "2026-07-28:schema#41")
async def test_a_private_result_is_reused_by_its_own_client_only() -> None:
    reads: list[str] = []
    server = _server(calls=reads)
    async with _served(server) as first, _served(server) as second:
        async with (
            open_session(first, era_cache=EraCache()) as alice,
            open_session(second, era_cache=EraCache()) as bob,
        ):
            for _ in range(2):
                got = await alice.read_resource("test://mine")
                assert got.cache_scope == "private" and got.ttl_ms == 60_000
            assert reads == ["read"]  # kept within the client that asked for it
            await bob.read_resource("test://mine")
            assert reads == ["read", "read"]  # another client (another authorization) asks anew


# -- errors and cancellations ---------------------------------------------------------------


@pytest.mark.req("2026-07-28:schema#17")
def test_an_error_message_is_one_short_line() -> None:
    engine = StatelessEngine(Role.SERVER, info=Implementation(name="s", version="1"))
    long = "the tool failed\n  because the disk is full\n" + "and more " * 60
    reply = json.loads(engine.error_reply(7, -32603, long, {"detail": 1}))
    message = reply["error"]["message"]
    assert "\n" not in message and len(message) <= 200
    assert message.startswith("the tool failed because the disk is full and more")
    assert reply["error"]["data"] == {"detail": 1}
    assert json.loads(engine.error_reply(8, -32603, "short"))["error"]["message"] == "short"


@pytest.mark.req("2026-07-28:schema#23")
async def test_a_cancellation_reason_is_logged(caplog: pytest.LogCaptureFixture, autojump_clock: Any) -> None:
    server = Server("s", "1", state_key=b"k" * 32)
    started = trio.Event()

    @server.tool(description="never ends")
    async def forever(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        started.set()
        await trio.sleep_forever()
        return ""

    engine = StatelessEngine(Role.CLIENT, info=Implementation(name="c", version="1"))
    with caplog.at_level("INFO", logger="mcp_ref"):
        async with _served(server) as channel:
            rid, data = engine.send_request("tools/call", {"name": "forever"})
            await channel.send(data)
            with trio.fail_after(10):
                await started.wait()
            await channel.send(engine.send_cancel(rid, "the user went home"))
            with trio.fail_after(10):
                while not any("the user went home" in r.getMessage() for r in caplog.records):
                    await trio.sleep(0.01)


@pytest.mark.req("2026-07-28:schema#39", "2026-07-28:schema#40", "2026-07-28:schema#41")
def test_a_private_result_is_served_only_in_the_authorization_it_came_in() -> None:
    clock, token = _Clock(), ["alice-token-1"]
    cache = ResultCache(clock, context=lambda: token[0])
    cache.put("resources/read", "a", {"contents": [], "ttlMs": 60_000, "cacheScope": "private"})
    cache.put("resources/read", "b", {"contents": [], "ttlMs": 60_000, "cacheScope": "public"})
    assert cache.get("resources/read", "a") is not None  # the same authorization: reused
    token[0] = "alice-token-2"  # refreshed: another access token, another cache
    assert cache.get("resources/read", "a") is None
    assert cache.get("resources/read", "b") is not None  # a public result is anyone's
    token[0] = "alice-token-1"
    assert cache.get("resources/read", "a") is None  # dropped, not kept aside


class _Token:
    """An HttpAuth whose bearer token the test changes (a refresh)."""

    flow_timeout = 5.0

    def __init__(self) -> None:
        self.value = "Bearer one"

    async def authorization(self, url: str) -> str | None:
        return self.value

    async def challenged(
        self, url: str, status: int, www_authenticate: str | None, used: str | None, *, again: bool = False
    ) -> bool:
        return False


@pytest.mark.req("2026-07-28:schema#41")
async def test_over_http_a_new_access_token_asks_the_server_again() -> None:
    from functools import partial

    from mcp_ref.session.http import open_http_client, serve_http

    reads: list[str] = []
    token = _Token()
    async with trio.open_nursery() as nursery:
        info = await nursery.start(partial(serve_http, _server(calls=reads), port=0))
        async with open_http_client(info.url, auth=token, era_cache=EraCache()) as client:
            await client.read_resource("test://mine")
            await client.read_resource("test://mine")
            assert reads == ["read"]
            token.value = "Bearer two"  # refreshed: in use once a request has carried it
            await client.call_tool("echo", {"text": "x"})
            await client.read_resource("test://mine")
            await client.read_resource("test://mine")
            assert reads == ["read", "read"]
        nursery.cancel_scope.cancel()
