"""Sessions and streams per user on the Streamable HTTP server: no client locks the others out.

The users here are clients on distinct loopback addresses (127.0.0.2, 127.0.0.3, ...:
without authorization a user is the client's address), on real sockets; the stream
limits are driven in memory with ``HttpConfig.user_key`` naming the user.
"""

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref import RequestContext, Server
from mcp_ref.basic.lifecycle import Role
from mcp_ref.basic.transports.http_server import HttpConfig, _HttpServer
from mcp_ref.exchange import StatelessEngine
from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation
from mcp_ref.testing.transport_check import check_server

from .test_http_server import memory_http
from .test_http_server_auth import ScriptedVerifier, demo_server, policy, protected
from .test_streamable_http import ACCEPT_BOTH, INIT, Exchange, http_server, send_request

PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
HANG = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hang"}}


class User:
    """A client on its own loopback address."""

    def __init__(self, address: str, port: int) -> None:
        self.address = address
        self.port = port

    @asynccontextmanager
    async def exchange(self, method: str, headers: dict[str, str], body: Any = None) -> AsyncIterator[Exchange]:
        stream = await trio.open_tcp_stream("127.0.0.1", self.port, local_address=self.address)
        async with stream:
            yield await send_request(stream, f"127.0.0.1:{self.port}", "/mcp", method, headers, body)

    async def call(self, headers: dict[str, str], body: Any) -> int:
        async with self.exchange("POST", headers, body) as ex:
            await ex.rest()
            return ex.status

    async def start_session(self) -> dict[str, str] | int:
        """A new session's headers (notifications/initialized sent), or the status refusing it."""
        async with self.exchange("POST", ACCEPT_BOTH, INIT) as ex:
            await ex.rest()
            if ex.status != 200:
                return ex.status
            session = {**ACCEPT_BOTH, "mcp-session-id": ex.headers["mcp-session-id"]}
        assert await self.call(session, {"jsonrpc": "2.0", "method": "notifications/initialized"}) == 202
        return session

    async def listen(self, stack: AsyncExitStack, session: dict[str, str]) -> Exchange:
        """The session's GET stream, held open until ``stack`` closes."""
        get = await stack.enter_async_context(self.exchange("GET", {**session, "accept": "text/event-stream"}))
        assert get.status == 200
        await get.events()  # the priming event
        return get


async def sessions_with_get_streams(user: User, stack: AsyncExitStack, count: int) -> list[dict[str, str]]:
    sessions = []
    for _ in range(count):
        session = await user.start_session()
        assert isinstance(session, dict)
        await user.listen(stack, session)
        sessions.append(session)
    return sessions


async def test_sessions_holding_get_streams_do_not_lock_a_new_user_out() -> None:
    # the shape of the report: every slot taken by a session holding a GET stream open. Two
    # users hold them all (5 + 3 of 8): a third still gets a session, from the one holding most
    config = {"max_sessions": 8, "max_sessions_per_user": 5}
    async with http_server(check_server(), **config) as info, AsyncExitStack() as stack:
        heavy, light, newcomer = (User(f"127.0.0.{n}", info.port) for n in (2, 3, 4))
        held = await sessions_with_get_streams(heavy, stack, 5)
        kept = await sessions_with_get_streams(light, stack, 3)
        assert info._server is not None and len(info._server.sessions) == 8
        with trio.fail_after(10):
            fresh = await newcomer.start_session()
        assert isinstance(fresh, dict)
        # the heavy user's least recently active session gave way; nobody else's did
        assert await heavy.call(held[0], PING) == 404
        assert [await heavy.call(s, PING) for s in held[1:]] == [200] * 4
        assert [await light.call(s, PING) for s in kept] == [200] * 3
        assert await newcomer.call(fresh, PING) == 200


async def test_a_user_opening_many_sessions_does_not_evict_anothers_idle_session() -> None:
    async with http_server(check_server(), max_sessions=10, max_sessions_per_user=4) as info:
        quiet, greedy = User("127.0.0.2", info.port), User("127.0.0.3", info.port)
        idle = await quiet.start_session()
        assert isinstance(idle, dict)
        opened = [await greedy.start_session() for _ in range(30)]
        assert all(isinstance(s, dict) for s in opened)  # each one made room among the greedy user's own
        assert info._server is not None and len(info._server.sessions) == 5
        assert await quiet.call(idle, PING) == 200
        assert [await greedy.call(s, PING) for s in opened[-4:]] == [200] * 4  # type: ignore[arg-type]
        assert await greedy.call(opened[0], PING) == 404  # type: ignore[arg-type]


async def test_a_user_whose_sessions_all_have_work_in_flight_gets_429() -> None:
    async with http_server(check_server(), max_sessions_per_user=2) as info, AsyncExitStack() as stack:
        busy, other = User("127.0.0.2", info.port), User("127.0.0.3", info.port)
        for _ in range(2):
            session = await busy.start_session()
            assert isinstance(session, dict)
            call = await stack.enter_async_context(busy.exchange("POST", session, HANG))
            await call.events()  # the call is running
        assert await busy.start_session() == 429
        assert isinstance(await other.start_session(), dict)


async def test_the_server_full_of_sessions_with_work_in_flight_is_503() -> None:
    async with http_server(check_server(), max_sessions=2) as info, AsyncExitStack() as stack:
        a, b, c = (User(f"127.0.0.{n}", info.port) for n in (2, 3, 4))
        for user in (a, b):
            session = await user.start_session()
            assert isinstance(session, dict)
            await (await stack.enter_async_context(user.exchange("POST", session, HANG))).events()
        assert await c.start_session() == 503


async def test_one_session_each_is_a_fair_share_nobody_gives_way_for() -> None:
    # a user with two sessions is not pushed below the newcomer's one by the newcomer: 503 is
    # right when the server is full of users each holding their share
    async with http_server(check_server(), max_sessions=3) as info:
        a, b, c = (User(f"127.0.0.{n}", info.port) for n in (2, 3, 4))
        first, second = await a.start_session(), await a.start_session()
        assert isinstance(await b.start_session(), dict)
        assert isinstance(await c.start_session(), dict)  # a held 2 >= 0 + 2: one of a's gave way
        assert await a.call(first, PING) == 404  # type: ignore[arg-type]
        assert await a.call(second, PING) == 200  # type: ignore[arg-type]
        assert isinstance(await c.start_session(), dict)  # now c's own session gives way (c: 1, others: 1)


# -- streams per user (in memory: the user is named by a header) ------------------------------------


def by_header(peer: str | None, headers: Any) -> str:
    return str(headers.get("x-user"))


async def test_streams_are_counted_per_user_across_sessions(autojump_clock: Any) -> None:
    async with memory_http(check_server(), max_streams_per_user=3, user_key=by_header) as mem:
        alice1 = {**await start(mem, "alice"), "x-user": "alice"}
        alice2 = {**await start(mem, "alice"), "x-user": "alice"}
        bob = {**await start(mem, "bob"), "x-user": "bob"}
        async with AsyncExitStack() as stack:
            for n, session in enumerate((alice1, alice2, alice1)):
                call = await stack.enter_async_context(mem.exchange("POST", session, {**HANG, "id": 10 + n}))
                assert call.status == 200
            # alice's fourth stream, in either session: refused; a ping is still answered
            async with mem.exchange("POST", alice2, {**HANG, "id": 20}) as refused:
                assert refused.status == 429 and "streams open for this user" in (await refused.body()).decode()
            async with mem.exchange("POST", alice2, PING) as ping:
                assert ping.status == 200 and json.loads(await ping.body())["id"] == 7
            # bob is not held back by alice's streams
            async with mem.exchange("POST", bob, {**HANG, "id": 30}) as call:
                assert call.status == 200
        # the connections are gone, but a disconnection is not a cancellation: the calls run on,
        # and their streams still count
        (alice_user,) = [u for u in mem.http.users.values() if u.key == ("custom", "alice")]
        assert alice_user.streams == 3


async def start(mem: Any, user: str) -> dict[str, str]:
    async with mem.exchange("POST", {**ACCEPT_BOTH, "x-user": user}, INIT) as ex:
        await ex.rest()
        session = {**ACCEPT_BOTH, "mcp-session-id": ex.headers["mcp-session-id"]}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    status, _ = await mem.call("POST", {**session, "x-user": user}, initialized)
    assert status == 202
    return session


def test_the_defaults_of_the_per_user_limits() -> None:
    config = HttpConfig()
    assert (config.max_sessions, config.max_sessions_per_user) == (100, 20)
    assert (config.max_streams_per_session, config.max_streams_per_user) == (32, 64)
    with pytest.raises(ValueError):
        HttpConfig(max_sessions_per_user=0)


async def test_users_are_forgotten_when_they_hold_nothing() -> None:
    async with http_server(check_server()) as info:
        user = User("127.0.0.2", info.port)
        session = await user.start_session()
        assert isinstance(session, dict)
        assert info._server is not None and ("address", "127.0.0.2") in info._server.users
        async with user.exchange("DELETE", session) as ex:
            assert ex.status == 200
        assert info._server.users == {}


# -- with authorization: the user is the token's subject ------------------------------------------


async def test_with_authorization_the_user_is_the_tokens_subject(autojump_clock: Any) -> None:
    verifier = ScriptedVerifier()
    verifier.issue("alice-cli", subject="alice", client_id="cli")
    verifier.issue("alice-ide", subject="alice", client_id="ide")  # the same person, another client
    verifier.issue("bob", subject="bob")
    async with protected(verifier, demo_server()) as http:
        http.http = _HttpServer(
            demo_server(), HttpConfig(max_sessions_per_user=2), http.nursery, "127.0.0.1", policy(verifier)
        )
        first = await http.start_session("alice-cli")
        await trio.sleep(1)
        await http.start_session("alice-ide")
        # alice's third session: one of her own gives way (the least recently active), never bob's
        bob = await http.start_session("bob")
        await http.start_session("alice-cli")
        assert (await http.call("POST", first, PING))[0] == 404
        assert (await http.call("POST", bob, PING))[0] == 200
        alice = [u for u in http.http.users.values() if u.key == ("subject", None, "alice")]
        assert len(alice) == 1 and len(alice[0].sessions) == 2


# -- connections per address --------------------------------------------------------------------------


async def test_one_address_cannot_hold_every_connection() -> None:
    async with http_server(check_server(), max_connections_per_address=3) as info:
        greedy = [await trio.open_tcp_stream("127.0.0.1", info.port, local_address="127.0.0.2") for _ in range(3)]
        await trio.testing.wait_all_tasks_blocked(0.05)
        extra = await trio.open_tcp_stream("127.0.0.1", info.port, local_address="127.0.0.2")
        with trio.fail_after(5):
            assert await extra.receive_some() == b""  # closed unread
        # another address is served meanwhile
        assert isinstance(await User("127.0.0.3", info.port).start_session(), dict)
        await greedy.pop().aclose()
        await trio.testing.wait_all_tasks_blocked(0.05)
        assert isinstance(await User("127.0.0.2", info.port).start_session(), dict)
        await trio.testing.wait_all_tasks_blocked(0.05)
        assert info._server is not None and info._server.connections.get("127.0.0.2", 0) == 2
        for stream in greedy:
            await stream.aclose()


# -- 2026-07-28 requests: each one in progress is one of its user's streams ---------------------------


def holding_server() -> Server:
    """A server whose tool ``hold`` reports progress (so its answer's head goes out) and never returns."""
    server = Server("holds")

    @server.tool()
    async def hold(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1)
        await trio.sleep_forever()
        return "never"

    return server


async def test_modern_requests_in_progress_count_against_their_users_streams() -> None:
    # without the per-user count one user's long requests (a subscriptions/listen, a slow tool)
    # took every max_stateless_requests slot and everyone else got 503
    config = {"max_streams_per_user": 3, "max_stateless_requests": 5}
    async with http_server(holding_server(), **config) as info, AsyncExitStack() as stack:
        alice, bob = User("127.0.0.2", info.port), User("127.0.0.3", info.port)
        server = info._server
        assert server is not None
        # one of alice's streams is a 2025 session's call: the count spans both eras
        session = await alice.start_session()
        assert isinstance(session, dict)
        legacy = await stack.enter_async_context(
            alice.exchange("POST", session, {**HANG, "params": {"name": "hold", "arguments": {}}})
        )
        assert legacy.status == 200
        held = []
        for _ in range(2):
            call = await stack.enter_async_context(alice.exchange("POST", *modern("tools/call", "hold")))
            assert call.status == 200 and call.headers["content-type"] == "text/event-stream"
            held.append(call)
        async with alice.exchange("POST", *modern("tools/list")) as refused:
            assert refused.status == 429 and "requests in progress for this user" in (await refused.body()).decode()
        # bob is not held back by alice's requests: two slots of five are still free for him
        async with bob.exchange("POST", *modern("tools/list")) as listed:
            assert listed.status == 200 and json.loads(await listed.body())["result"]["tools"][0]["name"] == "hold"
        (alice_user,) = [u for u in server.users.values() if u.key == ("address", "127.0.0.2")]
        await settled(lambda: server.modern_running == 2)  # (bob's answer went out before his count)
        assert alice_user.streams == 3 and ("address", "127.0.0.3") not in server.users
        # alice's modern request that ends (its client leaves: the request is cancelled) gives its slot back
        await held.pop().stream.aclose()
        await settled(lambda: alice_user.streams == 2)
        assert server.modern_running == 1
        async with alice.exchange("POST", *modern("tools/list")) as listed:
            assert listed.status == 200


async def settled(condition: Callable[[], bool]) -> None:
    """Until ``condition`` holds (the server's own tasks finish what a client saw answered)."""
    with trio.fail_after(5):
        while not condition():
            await trio.sleep(0.01)


def modern(method: str, tool: str | None = None) -> tuple[dict[str, str], dict[str, Any]]:
    """A 2026-07-28 request's headers and body (a tools/call of ``tool`` with a progress token)."""
    client = StatelessEngine(Role.CLIENT, info=Implementation(name="t", version="0"), capabilities=ClientCapabilities())
    if tool is None:
        rid, data = client.send_request(method)
    else:
        rid, data = client.send_request(method, {"name": tool, "arguments": {}}, progress_token=True)
    headers = {**ACCEPT_BOTH, **{k.lower(): x for k, x in client.http_headers(rid).items()}}
    return headers, json.loads(data)
