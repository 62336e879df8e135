"""Writes that wait for room in an in-memory channel wait in the session's own queue.

A memory_channel_pair with a buffer says when it may have room again
(notify_send_ready), so the session writes to it with no lock and no cancel
scope: a writer that finds the buffer full joins a FIFO queue, whoever makes
room sends the next ones, and the request timeouts and the session's close
stop a waiting write with nothing sent. These are the write lock's guarantees,
checked on a one-message buffer (what bench W2b and the official SDK use).
"""

import json
import logging
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.basic.lifecycle import Role
from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.connection import Connection
from mcp_ref.errors import ConnectionClosed
from mcp_ref.schema.content import TextContent
from mcp_ref.session import SessionConfig
from mcp_ref.session.core import Session, session_scope

from .test_session import initialized_client_connection, sends_ended_by_eof, two_pings_time_out_behind_a_blocked_send


def note(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"n": n}}).encode()


def number(data: bytes) -> int:
    n: int = json.loads(data)["params"]["n"]
    return n


async def nothing_more(channel: trio.abc.ReceiveChannel[bytes]) -> bool:
    """Nothing else arrives (on the autojump clock: within an hour of nothing to do)."""
    with trio.move_on_after(3600):
        await channel.receive()
        return False
    return True


def writes_waiting(session: Session) -> int:
    return len(session._parked or ())


@pytest.mark.req("basic/lifecycle#17", "basic/utilities/cancellation#1")
async def test_a_request_waiting_for_room_is_dropped_at_its_deadline_unsent(autojump_clock: trio.abc.Clock) -> None:
    # the first ping fills the one-message buffer (handed over: the peer may read it); the
    # second waits in the session's queue, so its deadline drops it before the transport had it
    ours, theirs = memory_channel_pair(max_buffer=1)
    async with session_scope(initialized_client_connection(), ours, config=SessionConfig(cancel_grace=1)) as session:
        assert session._parked is not None  # (the path under test)
        await two_pings_time_out_behind_a_blocked_send(session.ping)
        assert writes_waiting(session) == 0
        # the peer gets the first ping and nothing else: not the dropped ping, and not the
        # first one's cancellation (it found no room within its grace and was given up)
        assert json.loads(await theirs.receive())["method"] == "ping"
        assert await nothing_more(theirs)
        await session.notify("notifications/initialized")  # the session goes on
        assert json.loads(await theirs.receive())["method"] == "notifications/initialized"


async def test_concurrent_writes_on_a_one_message_buffer_arrive_in_the_order_made() -> None:
    ours, theirs = memory_channel_pair(max_buffer=1)
    made: list[int] = []
    arrived: list[int] = []
    async with session_scope(Connection(Role.SERVER), ours) as session:

        async def write(n: int) -> None:
            made.append(n)  # handed to send_raw with no checkpoint in between
            await session.send_raw(note(n))

        async with trio.open_nursery() as nursery:
            for n in range(10):
                nursery.start_soon(write, n)
            await trio.testing.wait_all_tasks_blocked()
            assert writes_waiting(session) == 9  # one in the buffer, the others queued
            for n in range(10, 40):
                # a new writer starts as a message leaves the buffer: it goes behind
                # the ones waiting, never into the room made for them
                nursery.start_soon(write, n)
                arrived.append(number(await theirs.receive()))
            while len(arrived) < 40:
                arrived.append(number(await theirs.receive()))
        assert writes_waiting(session) == 0
    assert arrived == made


async def test_a_writer_cancelled_while_it_waits_sends_nothing() -> None:
    ours, theirs = memory_channel_pair(max_buffer=1)
    async with session_scope(Connection(Role.SERVER), ours) as session:
        scopes = {n: trio.CancelScope() for n in range(4)}

        async def write(n: int) -> None:
            with scopes[n]:
                await session.send_raw(note(n))

        async with trio.open_nursery() as nursery:
            for n in range(4):
                nursery.start_soon(write, n)
                await trio.testing.wait_all_tasks_blocked()
            scopes[2].cancel()  # waiting behind 1
            await trio.testing.wait_all_tasks_blocked()
            assert writes_waiting(session) == 2
            assert [number(await theirs.receive()) for _ in range(3)] == [0, 1, 3]
        assert scopes[2].cancelled_caught
        assert not any(scopes[n].cancelled_caught for n in (0, 1, 3))


@pytest.mark.req("basic/utilities/cancellation#1")
async def test_a_request_whose_caller_gives_up_while_it_waits_for_room_is_never_sent(
    autojump_clock: trio.abc.Clock,
) -> None:
    # not handed over, so the peer cannot know its id: no cancellation either
    ours, theirs = memory_channel_pair(max_buffer=1)
    async with session_scope(initialized_client_connection(), ours) as session:
        await session.notify("notifications/initialized")  # fills the buffer
        with trio.move_on_after(1) as scope:
            await session.ping(timeout=60)
        assert scope.cancelled_caught
        assert writes_waiting(session) == 0
        assert session.connection.pending_outgoing == []  # forgotten, not waiting for an answer
        assert json.loads(await theirs.receive())["method"] == "notifications/initialized"
        assert await nothing_more(theirs)


@pytest.mark.req("basic/lifecycle#17")
async def test_eof_ends_every_write_waiting_for_room(autojump_clock: trio.abc.Clock) -> None:
    # the peer ends its output and never reads: the notifications and the request waiting
    # for room end with the session, at the EOF (not at the request's deadline)
    ours, theirs = memory_channel_pair(max_buffer=1)
    async with session_scope(initialized_client_connection(), ours) as session:

        async def notify() -> None:
            await session.notify("notifications/initialized")

        async def ping() -> None:
            await session.ping(timeout=5)

        # the first notification fills the buffer; it is handed over, so its send returns
        await notify()
        outcome = await sends_ended_by_eof(theirs, notify, ping, notify)
        assert outcome == [(0, "end of stream")] * 3
        assert writes_waiting(session) == 0


async def test_closing_the_session_ends_every_write_waiting_for_room() -> None:
    ours, theirs = memory_channel_pair(max_buffer=1)
    ended: list[str] = []
    async with session_scope(Connection(Role.SERVER), ours) as session:

        async def write(n: int) -> None:
            try:
                await session.send_raw(note(n))
            except ConnectionClosed as e:
                ended.append(str(e))

        async with trio.open_nursery() as nursery:
            for n in range(4):
                nursery.start_soon(write, n)
                await trio.testing.wait_all_tasks_blocked()
            await session.aclose("done here")
    assert ended == ["done here"] * 3  # the first was in the buffer already
    assert number(await theirs.receive()) == 0  # delivered before the close
    with pytest.raises(trio.EndOfChannel):
        await theirs.receive()


async def test_the_peer_closing_fails_the_writes_waiting_for_room() -> None:
    ours, theirs = memory_channel_pair(max_buffer=1)
    ended = 0
    async with session_scope(Connection(Role.SERVER), ours) as session:

        async def write(n: int) -> None:
            nonlocal ended
            with pytest.raises(ConnectionClosed):
                await session.send_raw(note(n))
            ended += 1

        async with trio.open_nursery() as nursery:
            for n in range(1, 4):
                nursery.start_soon(write, n)
            await session.send_raw(note(0))  # (the buffer is not full yet: sent at once)
            await trio.testing.wait_all_tasks_blocked()
            await theirs.aclose()
    assert ended == 3
    assert session.closed.is_set()


async def test_waiting_writes_are_traced_once_each_in_the_order_sent(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_ref.wire")
    ours, theirs = memory_channel_pair(max_buffer=1)
    async with session_scope(Connection(Role.SERVER), ours) as session:
        async with trio.open_nursery() as nursery:
            for n in range(5):
                nursery.start_soon(session.send_raw, note(n))
            await trio.testing.wait_all_tasks_blocked()
            arrived = [number(await theirs.receive()) for _ in range(5)]
    traced = [number(r.getMessage().split(" ", 2)[2].encode()) for r in caplog.records if " -> " in r.getMessage()]
    assert traced == arrived


@pytest.mark.parametrize("buffer", [0, 1, 16])
async def test_many_requests_on_a_small_buffer_all_complete(buffer: int) -> None:
    # both sides' writes wait for room (requests one way, responses the other); with no
    # buffer the channel cannot say when it has room, and the write lock path is taken
    from mcp_ref.session import Server
    from mcp_ref.testing import memory_session_pair

    server = Server("parked")

    @server.tool()
    async def echo(ctx: Any, *, text: str) -> str:
        return text

    async with memory_session_pair(server, max_buffer=buffer, era="legacy") as client:
        assert (client.session._parked is not None) is (buffer > 0)
        results: dict[int, str] = {}

        async def call(n: int) -> None:
            [content] = (await client.call_tool("echo", {"text": str(n)})).content
            assert isinstance(content, TextContent)
            results[n] = content.text

        async with trio.open_nursery() as nursery:
            for n in range(50):
                nursery.start_soon(call, n)
    assert results == {n: str(n) for n in range(50)}
