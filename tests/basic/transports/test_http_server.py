"""Streamable HTTP server, driven over in-memory streams on trio's autojump clock:
idle expiry, vanished clients, keepalives (no sockets, no real waiting)."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import h11
import pytest
import trio
import trio.testing

from mcp_ref.basic.transports.http_server import (
    HttpConfig,
    _HttpError,
    _HttpServer,
    _HttpSession,
    default_allowed_hosts,
)
from mcp_ref.errors import HTTPTransportError
from mcp_ref.schema.logging import LoggingMessageNotificationParams
from mcp_ref.session import RequestContext, Server
from mcp_ref.session.http import open_http_client
from mcp_ref.testing.transport_check import check_server

from ._raw_http import read_response
from .test_streamable_http import ACCEPT_BOTH, INIT, Exchange, hanging_server, send_request


class MemoryHttp:
    """An HTTP server whose connections are in-memory stream pairs."""

    def __init__(self, nursery: trio.Nursery, server: Server, **options: Any) -> None:
        self.nursery = nursery
        # bind: the address the server would listen on (nothing listens: connections are in memory)
        bind = options.pop("bind", "127.0.0.1")
        self.http = _HttpServer(server, HttpConfig(**options), nursery, bind)
        nursery.start_soon(self.http.expire_idle)

    @asynccontextmanager
    async def exchange(
        self, method: str, headers: dict[str, str] | None = None, body: Any = None, *, lockstep: bool = False
    ) -> AsyncIterator[Exchange]:
        """One exchange; ``lockstep``: the server's writes wait until the client reads (no buffer)."""
        async with self.connection(lockstep=lockstep) as client:
            yield await send_request(client, "127.0.0.1", "/mcp", method, headers, body)

    def connection(self, *, lockstep: bool = False) -> trio.abc.Stream:
        """The client's end of a new connection to the server."""
        pair = trio.testing.lockstep_stream_pair if lockstep else trio.testing.memory_stream_pair
        client, server_side = pair()
        self.nursery.start_soon(self.http.handle_connection, server_side)
        return client

    async def open_tcp_stream(self, host: str, port: int, **options: Any) -> trio.abc.Stream:
        """Stands in for :func:`trio.open_tcp_stream`: every connection reaches this server."""
        return self.connection()

    async def call(self, method: str, headers: dict[str, str] | None = None, body: Any = None) -> tuple[int, list[Any]]:
        """One exchange read to its end: the status and the messages of its body."""
        async with self.exchange(method, headers, body) as ex:
            return ex.status, [json.loads(e.data) for e in await ex.rest() if e.data]

    async def start_session(self) -> dict[str, str]:
        async with self.exchange("POST", ACCEPT_BOTH, INIT) as ex:
            await ex.rest()
            session = {**ACCEPT_BOTH, "mcp-session-id": ex.headers["mcp-session-id"]}
        status, _ = await self.call("POST", session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert status == 202
        return session


@asynccontextmanager
async def memory_http(server: Server, **options: Any) -> AsyncIterator[MemoryHttp]:
    async with trio.open_nursery() as nursery:
        yield MemoryHttp(nursery, server, **options)
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/transports#31", "basic/transports#34")
async def test_a_get_stream_whose_client_vanished_does_not_keep_the_session(autojump_clock: Any) -> None:
    async with memory_http(check_server(), session_idle_timeout=60) as mem:
        session = await mem.start_session()
        async with mem.exchange("GET", {**session, "accept": "text/event-stream"}) as get:
            assert get.status == 200
            await get.events()  # the priming event
        # the client closed its end without a word: the server notices, so the idle
        # session expires instead of waiting on a listener nobody reads
        await trio.sleep(120)
        assert mem.http.sessions == {}


@pytest.mark.req("basic/transports#34")
async def test_a_vanished_post_client_is_found_by_the_keepalive(autojump_clock: Any) -> None:
    server, _, cancelled = hanging_server()
    async with memory_http(server, session_idle_timeout=60, sse_keepalive=5) as mem:
        session = await mem.start_session()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang"}}
        async with mem.exchange("POST", session, call) as post:
            await post.events()  # the priming event
            # a quiet stream carries a comment (which the client ignores) every 5 s
            with trio.fail_after(6):
                assert b":\n\n" in await post.stream.receive_some()
        # gone: the next comment fails, the stream is detached, the session expires idle
        with trio.fail_after(300):
            await cancelled.wait()
        await trio.testing.wait_all_tasks_blocked()
        assert mem.http.sessions == {}


async def test_finished_streams_are_forgotten_and_the_open_ones_counted() -> None:
    async with memory_http(check_server(), stored_streams=10) as mem:
        session = await mem.start_session()
        for i in range(50):
            status, answer = await mem.call("POST", session, {"jsonrpc": "2.0", "id": 10 + i, "method": "ping"})
            assert status == 200 and answer == [{"jsonrpc": "2.0", "id": 10 + i, "result": {}}]
        (http_session,) = mem.http.sessions.values()
        assert len(http_session.streams) <= 10 and http_session.open_streams == 0
        assert http_session.by_request == {}


@pytest.mark.req("basic/transports#52", "basic/transports#53")
async def test_a_long_call_keeps_its_history_and_an_evicted_stream_is_gone() -> None:
    server = Server("long")
    release = trio.Event()

    @server.tool()
    async def long(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1)
        await release.wait()
        return "long done"

    async with memory_http(server, stored_streams=3) as mem:
        session = await mem.start_session()
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        async with mem.exchange("POST", session, ping) as first:
            first_id = (await first.rest())[0].id
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "long"}}
        async with mem.exchange("POST", session, call) as post:
            (priming,) = await post.events()
        # the call's connection is gone; ten short requests come and go meanwhile
        for i in range(10):
            assert (await mem.call("POST", session, {"jsonrpc": "2.0", "id": 100 + i, "method": "ping"}))[0] == 200
        release.set()
        listen = {**session, "accept": "text/event-stream"}
        # the unfinished call kept its events: resuming it gives the answer
        async with mem.exchange("GET", {**listen, "last-event-id": priming.id or ""}) as resumed:
            assert resumed.status == 200
            messages = [json.loads(e.data) for e in await resumed.rest() if e.data]
            assert messages[-1]["result"]["content"][0]["text"] == "long done"
        # the first ping's stream was dropped long ago: 410, not the GET stream
        status, _ = await mem.call("GET", {**listen, "last-event-id": first_id or ""})
        assert status == 410


async def test_shutdown_grace_runs_out(autojump_clock: Any) -> None:
    server, _, cancelled = hanging_server()
    async with memory_http(server) as mem:
        session = await mem.start_session()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang"}}
        async with mem.exchange("POST", session, call) as post:
            await post.events()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(mem.http.shutdown, 5)
                await trio.testing.wait_all_tasks_blocked()
                # requests that come during the grace period are refused
                status, _ = await mem.call("POST", session, {"jsonrpc": "2.0", "id": 3, "method": "ping"})
                assert status == 503
                status, _ = await mem.call("GET", {**session, "accept": "text/event-stream"})
                assert status == 503
                # notifications and responses still come in: work in flight may wait for them
                progress = {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": 1, "progress": 1},
                }
                assert (await mem.call("POST", session, progress))[0] == 202
                start = trio.current_time()
                rest = await post.rest()
                # after the grace period the stream ends cleanly, with a retry, and the handler is cancelled
                assert trio.current_time() - start == pytest.approx(5, abs=0.5)
                assert [e.retry for e in rest] == [1000] and post.complete
                await cancelled.wait()
        assert mem.http.sessions == {}


async def test_a_session_that_never_completes_initialization_is_closed(autojump_clock: Any) -> None:
    async with memory_http(check_server(), init_timeout=30) as mem:
        kept = await mem.start_session()
        async with mem.exchange("POST", ACCEPT_BOTH, INIT) as ex:
            await ex.rest()
            abandoned = ex.headers["mcp-session-id"]
        assert set(mem.http.sessions) == {kept["mcp-session-id"], abandoned}
        await trio.sleep(60)
        # its max_sessions slot is free again; the initialized session stays (idle for 1 h)
        assert set(mem.http.sessions) == {kept["mcp-session-id"]}


#: a call of chatty_server's tool, with a progress token
CHATTY_CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "chatty", "_meta": {"progressToken": "t"}},
}


def chatty_server(steps: int, go: trio.Event | None = None) -> Server:
    """A server whose tool ``chatty`` sends ``steps`` progress notifications (once ``go`` is set), then answers."""
    server = Server("chatty")

    @server.tool()
    async def chatty(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        if go is not None:
            await go.wait()
        for step in range(steps):
            await ctx.progress(step)
        return "said it all"

    return server


@pytest.mark.req("basic/transports#34", "basic/transports#52")
@pytest.mark.parametrize("limit", [{"max_buffered_events": 5}, {"max_buffered_bytes": 500}], ids=["events", "bytes"])
async def test_a_client_that_stops_reading_is_dropped_and_resumes(autojump_clock: Any, limit: dict[str, int]) -> None:
    go = trio.Event()
    server = chatty_server(50, go)
    async with memory_http(server, **limit) as mem:
        session = await mem.start_session()
        async with mem.exchange("POST", session, CHATTY_CALL, lockstep=True) as post:
            (priming,) = await post.events()
            go.set()
            await trio.sleep(5.5)
            # the client read nothing more: after stall_timeout (5 s) of waiting for room the
            # server drops the connection (no last chunk) rather than buffering 50 events for it
            await post.rest()
            assert not post.complete
        # nothing was lost: the stream resumes from the event store
        listen = {**session, "accept": "text/event-stream", "last-event-id": priming.id or ""}
        status, messages = await mem.call("GET", listen)
        assert status == 200 and len(messages) == 51
        assert messages[-1]["result"]["content"][0]["text"] == "said it all"


async def test_resuming_past_what_the_store_kept_is_logged(
    autojump_clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    go = trio.Event()
    server = chatty_server(50, go)
    async with memory_http(server, max_buffered_events=5, events_per_stream=10) as mem:
        session = await mem.start_session()
        async with mem.exchange("POST", session, CHATTY_CALL, lockstep=True) as post:
            (priming,) = await post.events()
            go.set()
            await trio.sleep(60)  # the client reads nothing: dropped, and the tool finishes
        listen = {**session, "accept": "text/event-stream", "last-event-id": priming.id or ""}
        status, messages = await mem.call("GET", listen)
        # the last 10 events were kept (the answer among them); the rest is gone, and the log says so
        assert status == 200 and len(messages) == 10
        assert messages[-1]["result"]["content"][0]["text"] == "said it all"
        assert "resumed after event 1; events 2 to 42 are no longer kept" in caplog.text


@pytest.mark.req("basic/transports#29")
async def test_a_client_that_reads_keeps_up_with_a_tool_sending_in_a_loop(autojump_clock: Any) -> None:
    # a handler sending progress in a tight loop must let the connection write between
    # its messages: a client reading at full speed is not dropped as too slow (the
    # everything example's progress_emitter lost all but the last 1000 of its events)
    server = chatty_server(500)
    async with memory_http(server, max_buffered_events=20) as mem:
        session = await mem.start_session()
        async with mem.exchange("POST", session, CHATTY_CALL) as post:
            messages = [json.loads(e.data) for e in await post.rest() if e.data]
            assert post.complete  # the stream ended normally, not cut off
        assert [m["params"]["progress"] for m in messages[:-1]] == list(range(500))
        assert messages[-1]["result"]["content"][0]["text"] == "said it all"


def test_a_session_refuses_messages_it_has_no_room_for() -> None:
    async def main() -> None:
        session = _HttpSession("s", HttpConfig(max_inbox=2))
        for _ in range(2):
            session.check_room()
            session.deliver(b"{}")
        with pytest.raises(_HttpError) as refused:
            session.check_room()
        assert refused.value.status == 429

    trio.run(main)


def test_a_session_refuses_messages_past_its_inbox_bytes() -> None:
    async def main() -> None:
        session = _HttpSession("s", HttpConfig(max_inbox_bytes=10))
        session.check_room(20)  # one message always fits in an empty inbox, whatever its size
        session.deliver(b"x" * 20)
        with pytest.raises(_HttpError) as refused:
            session.check_room(1)
        assert refused.value.status == 429
        assert await session.receive() == b"x" * 20  # read: room again
        session.check_room(8)
        session.deliver(b"y" * 8)
        with pytest.raises(_HttpError):
            session.check_room(3)
        session.check_room(2)

    trio.run(main)


# -- limits and policy ---------------------------------------------------------------------------


async def test_a_connection_that_sends_no_request_is_closed_after_read_timeout(autojump_clock: Any) -> None:
    async with memory_http(check_server(), read_timeout=7) as mem:
        client = mem.connection()
        start = trio.current_time()
        assert await client.receive_some() == b""  # closed, having said nothing
        assert trio.current_time() - start == pytest.approx(7)


def waiting_server() -> tuple[Server, trio.Event]:
    """A server whose tool ``wait`` answers once the event is set."""
    server = Server("slow")
    release = trio.Event()

    @server.tool()
    async def wait(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await release.wait()
        return "ok"

    return server, release


async def counted_connection(mem: MemoryHttp) -> tuple[trio.abc.Stream, list[int]]:
    """A connection to ``mem`` whose server side counts its writes (in the returned list's one item)."""
    client, server_side = trio.testing.memory_stream_pair()
    writes = [0]
    pump = server_side.send_stream.send_all_hook
    assert pump is not None

    async def counted() -> None:
        writes[0] += 1
        await pump()

    server_side.send_stream.send_all_hook = counted
    mem.nursery.start_soon(mem.http.handle_connection, server_side)
    return client, writes


@pytest.mark.req("basic/transports#23")
async def test_a_call_answered_at_once_is_one_write_with_its_priming_event_first() -> None:
    server = Server("quick")

    @server.tool()
    async def hello(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "hi"

    async with memory_http(server) as mem:
        session = await mem.start_session()
        client, writes = await counted_connection(mem)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello"}}
        async with client:
            ex = await send_request(client, "127.0.0.1", "/mcp", "POST", session, call)
            priming, answer = await ex.rest()
        # head, priming event, response and the end of the stream: one write, so one wake-up
        # of the client and one system call on each side (bench W9, W10)
        assert writes == [1] and ex.complete
        assert priming.id and priming.data == "" and priming.retry == 1000
        assert json.loads(answer.data or "")["result"]["content"][0]["text"] == "hi"


@pytest.mark.req("basic/transports#23")
async def test_the_priming_event_does_not_wait_for_a_slow_answer() -> None:
    server, release = waiting_server()
    async with memory_http(server) as mem:
        session = await mem.start_session()
        client, writes = await counted_connection(mem)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait"}}
        async with client:
            ex = await send_request(client, "127.0.0.1", "/mcp", "POST", session, call)
            (priming,) = await ex.events()  # while the handler waits: no answer to go with it
            assert priming.id and priming.data == "" and writes == [1] and not release.is_set()
            release.set()
            (answer,) = await ex.rest()
        assert json.loads(answer.data or "")["result"]["content"][0]["text"] == "ok" and writes == [2]


@pytest.mark.req("basic/utilities/ping#1")
async def test_too_many_open_streams_is_429_but_a_ping_is_answered(autojump_clock: Any) -> None:
    server, release = waiting_server()
    async with memory_http(server, max_streams_per_session=1) as mem:
        session = await mem.start_session()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait"}}
        async with mem.exchange("POST", session, call) as first:
            status, _ = await mem.call("POST", session, {**call, "id": 3})
            assert status == 429
            # a ping is always answered: the session's long calls must not make it look dead
            async with mem.exchange("POST", session, {"jsonrpc": "2.0", "id": 4, "method": "ping"}) as ping:
                assert ping.status == 200 and json.loads(await ping.body()) == {"jsonrpc": "2.0", "id": 4, "result": {}}
            release.set()
            assert first.status == 200 and len([e for e in await first.rest() if e.data]) == 1
        # the stream ended: there is room again
        assert await mem.call("POST", session, {"jsonrpc": "2.0", "id": 5, "method": "ping"}) == (
            200,
            [{"jsonrpc": "2.0", "id": 5, "result": {}}],
        )


@pytest.mark.req("basic/utilities/ping#1")
async def test_a_ping_is_answered_when_the_inbox_is_full(autojump_clock: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    async with memory_http(check_server()) as mem:
        session = await mem.start_session()
        (http_session,) = mem.http.sessions.values()
        monkeypatch.setattr(http_session, "has_room", lambda size=0: False)  # a session not keeping up
        status, _ = await mem.call("POST", session, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert status == 429
        async with mem.exchange("POST", session, {"jsonrpc": "2.0", "id": "p", "method": "ping"}) as ping:
            assert ping.status == 200 and json.loads(await ping.body())["id"] == "p"


# -- sessions under pressure ---------------------------------------------------------------------------


async def test_the_least_recently_active_idle_session_gives_way(autojump_clock: Any) -> None:
    server, release = waiting_server()
    async with memory_http(server, max_sessions=3) as mem:
        busy = await mem.start_session()
        await trio.sleep(1)
        oldest_idle = await mem.start_session()
        await trio.sleep(1)
        recent = await mem.start_session()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait"}}
        async with mem.exchange("POST", busy, call) as in_flight:
            await in_flight.events()  # the priming event: the call is running
            await trio.sleep(1)
            # full: a new session takes the slot of the idle one least recently active -- not
            # the one least recently active of all (it has a call in flight)
            fresh = await mem.start_session()
            ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
            assert (await mem.call("POST", oldest_idle, ping))[0] == 404
            for kept in (busy, recent, fresh):
                assert (await mem.call("POST", kept, ping))[0] == 200
            release.set()
            messages = [json.loads(e.data) for e in await in_flight.rest() if e.data]
            assert messages[-1]["result"]["content"][0]["text"] == "ok"


async def test_no_session_gives_way_while_each_has_work_in_flight(autojump_clock: Any) -> None:
    server, release = waiting_server()
    async with memory_http(server, max_sessions=1) as mem:
        session = await mem.start_session()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait"}}
        async with mem.exchange("POST", session, call) as in_flight:
            await in_flight.events()
            async with mem.exchange("POST", ACCEPT_BOTH, INIT) as refused:
                assert refused.status == 503
            release.set()
            await in_flight.rest()


async def test_a_session_with_tasks_does_not_give_way(autojump_clock: Any) -> None:
    async with trio.open_nursery() as tasks_nursery:
        server = Server("tasks")
        server.enable_tasks(tasks_nursery)

        @server.tool(task_support="optional")
        async def job(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            await trio.sleep(3600)
            return "done"

        async with memory_http(server, max_sessions=2) as mem:
            owner = await mem.start_session()
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "job", "task": {}}}
            status, answer = await mem.call("POST", owner, call)
            assert status == 200 and answer[0]["result"]["task"]["status"] == "working"
            await trio.sleep(10)
            idle = await mem.start_session()
            await trio.sleep(10)
            # the task's session is the least recently active, but its client will come back
            # for the task: the other one gives way
            await mem.start_session()
            ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
            assert (await mem.call("POST", owner, ping))[0] == 200
            assert (await mem.call("POST", idle, ping))[0] == 404
        tasks_nursery.cancel_scope.cancel()


async def test_idle_sessions_expire_after_five_minutes_by_default(autojump_clock: Any) -> None:
    assert HttpConfig().session_idle_timeout == 300
    async with memory_http(check_server()) as mem:
        await mem.start_session()
        await trio.sleep(299)
        assert len(mem.http.sessions) == 1
        await trio.sleep(120)
        assert mem.http.sessions == {}


@pytest.mark.parametrize(
    "limit", [{"max_pending_unrelated": 2}, {"max_pending_unrelated_bytes": 250}], ids=["count", "bytes"]
)
async def test_unrelated_messages_wait_for_a_get_stream_in_a_bounded_queue(
    autojump_clock: Any, limit: dict[str, int]
) -> None:
    server = check_server()

    @server.tool()
    async def announce(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for n in range(5):
            await ctx.session.notify("notifications/message", LoggingMessageNotificationParams(level="info", data=n))
        return "announced"

    async with memory_http(server, **limit) as mem:
        session = await mem.start_session()
        level = {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "info"}}
        assert (await mem.call("POST", session, level))[0] == 200
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "announce"}}
        status, answer = await mem.call("POST", session, call)
        assert status == 200 and answer[-1]["result"]["content"][0]["text"] == "announced", answer
        async with mem.exchange("GET", {**session, "accept": "text/event-stream"}) as get:
            events = await get.events()
            while len([e for e in events if e.data]) < 2:
                events += await get.events()
            # the two newest were kept; the older ones were dropped (with a warning)
            assert [json.loads(e.data)["params"]["data"] for e in events if e.data] == [3, 4]


@pytest.mark.req("basic/transports#9", "basic/transports#10")
async def test_allowed_hosts_and_origins_on_a_live_server(autojump_clock: Any) -> None:
    async with memory_http(
        check_server(), allowed_hosts=["mcp.example"], allowed_origins=["https://app.example"]
    ) as mem:

        async def status(headers: dict[str, str]) -> int:
            async with mem.connection() as client:
                return (await send_request(client, headers.pop("host"), "/mcp", "POST", headers, INIT)).status

        assert await status({"host": "mcp.example", **ACCEPT_BOTH}) == 200
        assert await status({"host": "mcp.example:8080", "origin": "https://app.example", **ACCEPT_BOTH}) == 200
        assert await status({"host": "127.0.0.1", **ACCEPT_BOTH}) == 403  # the list replaces the default
        assert await status({"host": "mcp.example", "origin": "http://localhost:3000", **ACCEPT_BOTH}) == 403


@pytest.mark.req("basic/transports#9")
async def test_a_server_on_every_interface_accepts_loopback_hosts_and_its_403_names_the_setting(
    autojump_clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # run_http(host="0.0.0.0") used to accept only a Host of "0.0.0.0", which no client sends:
    # every request was 403 "host not allowed", even from 127.0.0.1, naming no setting
    async with memory_http(check_server(), bind="0.0.0.0") as mem:

        async def answer(host: str, origin: str | None = None) -> tuple[int, Any]:
            headers = {**ACCEPT_BOTH, **({"origin": origin} if origin else {})}
            async with mem.connection() as client:
                response = await send_request(client, host, "/mcp", "POST", headers, INIT)
                return response.status, json.loads(await response.body()) if response.status == 403 else None

        assert (await answer("127.0.0.1:8000"))[0] == 200
        assert (await answer("localhost:8000"))[0] == 200
        status, body = await answer("mcp.example:8000")
        assert status == 403
        assert body["error"]["message"] == (
            "Forbidden: host 'mcp.example:8000' not allowed (this server accepts 127.0.0.1, localhost, ::1; "
            "start it with allowed_hosts=[...] naming the hosts its clients use)"
        )
        status, body = await answer("localhost:8000", origin="https://app.example")
        assert status == 403 and "allowed_origins=[...]" in body["error"]["message"]
        await answer("mcp.example:8000")  # logged once per value, for the operator
    refused = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused a request")]
    assert len(refused) == 2 and "Host 'mcp.example:8000'" in refused[0] and "allowed_hosts=" in refused[0]


@pytest.mark.req("basic/transports#9")
def test_the_hosts_a_server_accepts_by_default_follow_where_it_listens() -> None:
    assert default_allowed_hosts("127.0.0.1") == default_allowed_hosts("::") == ["127.0.0.1", "localhost", "::1"]
    assert default_allowed_hosts("10.1.2.3") == ["127.0.0.1", "localhost", "::1", "10.1.2.3"]


# -- our client, over memory streams too ---------------------------------------------------------


@pytest.mark.req("basic/transports#27")
async def test_the_client_waits_the_servers_retry_before_resuming(
    autojump_clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Server("polling")

    @server.tool()
    async def come_back(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.session.channel.close_request_stream(ctx.request_id)  # type: ignore[attr-defined]
        return "later"

    async with memory_http(server, retry_ms=5000) as mem:
        monkeypatch.setattr(trio, "open_tcp_stream", mem.open_tcp_stream)
        async with open_http_client(
            "http://127.0.0.1:1/mcp", max_idle_connections=0, default_retry_ms=1, era="legacy"
        ) as client:
            start = trio.current_time()
            result = await client.call_tool("come_back", timeout=60)
            assert result.content[0].text == "later"  # type: ignore[union-attr]
            # the answer was waiting in the event store; the client came for it after 5 s, as told
            assert trio.current_time() - start == pytest.approx(5, abs=0.1)


@pytest.mark.req("basic/utilities/cancellation#4")
async def test_the_stream_of_a_cancelled_call_is_not_polled_for_ever(
    autojump_clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the server ends a cancelled request's stream without an answer: the client must not
    # take that for a dropped connection and resume it again and again (it did, every second)
    server = Server("slow")

    @server.tool()
    async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await trio.sleep_forever()
        return "never"

    @server.tool()
    async def quick(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "ok"

    resumptions = 0
    async with memory_http(server) as mem:
        serve_get = mem.http._get

        async def counting_get(conn: Any, stream: Any, req: Any) -> None:
            nonlocal resumptions
            resumptions += req.header("last-event-id") is not None
            await serve_get(conn, stream, req)

        monkeypatch.setitem(mem.http._handlers, "GET", counting_get)
        monkeypatch.setattr(trio, "open_tcp_stream", mem.open_tcp_stream)
        async with open_http_client("http://127.0.0.1:1/mcp", max_idle_connections=0, era="legacy") as client:
            with trio.move_on_after(1):
                await client.call_tool("slow", timeout=60)
            await trio.sleep(60)
            assert resumptions == 0
            result = await client.call_tool("quick", timeout=5)
            assert result.content[0].text == "ok"  # type: ignore[union-attr]


@pytest.mark.req("basic/transports#27")
async def test_a_stream_that_cannot_be_resumed_fails_its_request_saying_so(
    autojump_clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the server closes the stream (as at a graceful shutdown) and is then gone: the
    # call fails with an error that says so, not "HTTP 0: SSE stream ended ..."
    server = Server("going")
    gone = False

    @server.tool()
    async def go_away(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        nonlocal gone
        await ctx.session.channel.close_request_stream(ctx.request_id)  # type: ignore[attr-defined]
        gone = True
        await trio.sleep_forever()
        return "never"

    async with memory_http(server) as mem:

        async def connect(host: str, port: int, **options: Any) -> trio.abc.Stream:
            if gone:
                raise OSError("connection refused")
            return mem.connection()

        monkeypatch.setattr(trio, "open_tcp_stream", connect)
        async with open_http_client(
            "http://127.0.0.1:1/mcp", max_idle_connections=0, max_reconnects=2, era="legacy"
        ) as client:
            with pytest.raises(HTTPTransportError) as failed:
                await client.call_tool("go_away", timeout=60)
            assert failed.value.status is None  # (there was no answer)
            assert str(failed.value) == (
                "http://127.0.0.1:1/mcp: the SSE stream ended before the response and could not be resumed "
                "(2 attempts; connection refused)"
            )
            gone = False
            await client.ping(timeout=60)  # (the session went on)


@pytest.mark.req("basic/transports#21")
async def test_closing_a_request_stream_in_json_mode_does_not_lose_the_answer(autojump_clock: Any) -> None:
    # the everything example's test_reconnection tool: in JSON mode there is no SSE
    # connection to close, and the response must still be the POST's body (it was a 202)
    server = Server("polling")

    @server.tool()
    async def come_back(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.session.channel.close_request_stream(ctx.request_id)  # type: ignore[attr-defined]
        return "later"

    async with memory_http(server, json_response=True) as mem:
        session = await mem.start_session()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "come_back"}}
        async with mem.exchange("POST", session, call) as ex:
            status, answer = ex.status, json.loads(await ex.body())
        assert status == 200
        assert answer["id"] == 2 and answer["result"]["content"][0]["text"] == "later"


async def test_a_json_answer_cut_short_by_the_session_ending_is_503(autojump_clock: Any) -> None:
    server, started, _ = hanging_server()
    async with memory_http(server, json_response=True) as mem:
        session = await mem.start_session()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang"}}
        async with trio.open_nursery() as nursery:
            answers: list[tuple[int, bytes]] = []

            async def post() -> None:
                async with mem.exchange("POST", session, call) as ex:
                    answers.append((ex.status, await ex.body()))

            nursery.start_soon(post)
            await started.wait()
            assert (await mem.call("DELETE", session))[0] == 200
        ((status, body),) = answers
        assert status == 503 and json.loads(body)["error"]["code"] == -32603  # not a 200 with an empty body


# -- wrong answers to odd requests: the right status, never a 500 or a silent close ---------------


async def raw_exchange(mem: MemoryHttp, data: bytes, *, then_closed: bool = True) -> tuple[int, dict[str, str], bytes]:
    """Write ``data`` as it is on a new connection; the answer's status, headers and body.
    ``then_closed``: check that the server closes the connection after it."""
    client = mem.connection()
    await client.send_all(data)
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))  # (only to read an answer)
    conn.send(h11.EndOfMessage())
    answer = await read_response(conn, client)
    if then_closed:
        with trio.fail_after(10):
            assert await client.receive_some(65536) == b""
    return answer


@pytest.mark.req("basic/transports#9")
async def test_an_origin_that_is_not_a_url_is_forbidden(caplog: pytest.LogCaptureFixture) -> None:
    async with memory_http(check_server()) as mem:
        async with mem.connection() as client:
            headers = {"origin": "http://[::1", **ACCEPT_BOTH}
            assert (await send_request(client, "127.0.0.1", "/mcp", "POST", headers, INIT)).status == 403
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.exc_info]


async def test_an_absurd_last_event_id_is_a_bad_request() -> None:
    async with memory_http(check_server()) as mem:
        session = await mem.start_session()
        listen = {**session, "accept": "text/event-stream"}
        # more digits than int() converts (4300) -- and anything longer than an id we issue
        for last in ("r1." + "9" * 5000, "g" * 1000 + ".1"):
            async with mem.exchange("GET", {**listen, "last-event-id": last}) as ex:
                assert ex.status == 400 and json.loads(await ex.body())["error"]["code"] == -32600


async def test_head_is_method_not_allowed_without_a_body(caplog: pytest.LogCaptureFixture) -> None:
    async with memory_http(check_server()) as mem:
        head = b"HEAD /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"
        status, headers, body = await raw_exchange(mem, head, then_closed=False)
    assert status == 405 and headers["allow"] == "GET, POST, DELETE" and body == b""
    assert not [r for r in caplog.records if r.exc_info]


@pytest.mark.parametrize(
    "request_bytes",
    [
        pytest.param(b"GET /mcp HTTP/1.1\r\naccept: text/event-stream\r\n\r\n", id="no-host"),
        pytest.param(
            b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", id="bad-chunk-size"
        ),
        pytest.param(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: abc\r\n\r\n", id="bad-content-length"),
        pytest.param(
            b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: " + b"9" * 5000 + b"\r\n\r\n",
            id="huge-content-length",
        ),
        pytest.param(b"NOT HTTP AT ALL\r\n\r\n", id="garbage"),
    ],
)
async def test_http_framing_errors_are_400_and_the_connection_closes(
    request_bytes: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    async with memory_http(check_server()) as mem:
        status, headers, body = await raw_exchange(mem, request_bytes)
    assert status == 400
    assert headers["connection"] == "close" and json.loads(body)["error"]["code"] == -32600
    assert not [r for r in caplog.records if r.exc_info]


@pytest.mark.req("basic/transports#19")
async def test_reusing_the_initialize_id_later_keeps_the_negotiated_version() -> None:
    async with memory_http(check_server()) as mem:
        session = await mem.start_session()
        # id 1 was initialize's; a later ping with id 1 is a new request (the first was answered)
        assert await mem.call("POST", session, {"jsonrpc": "2.0", "id": 1, "method": "ping"}) == (
            200,
            [{"jsonrpc": "2.0", "id": 1, "result": {}}],
        )
        (http_session,) = mem.http.sessions.values()
        assert http_session.protocol_version == "2025-11-25"
        # and what depends on it still holds: streams are primed
        async with mem.exchange("POST", session, {"jsonrpc": "2.0", "id": 2, "method": "ping"}) as ex:
            events = await ex.rest()
        assert events[0].data == "" and events[0].retry == 1000


@pytest.mark.req("basic/utilities/cancellation#4")
async def test_a_cancellation_that_overtakes_its_request_still_cancels_it(autojump_clock: Any) -> None:
    # over HTTP the cancellation and its request travel on two connections: the server may
    # read the cancellation first. The request must not then run (and hold a stream) for ever.
    server, started, cancelled = hanging_server()
    async with memory_http(server) as mem:
        session = await mem.start_session()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        assert (await mem.call("POST", session, cancel))[0] == 202
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "hang"}}
        with trio.fail_after(60):
            status, answer = await mem.call("POST", session, call)
            await cancelled.wait()
        assert status == 200 and answer == []  # the stream ended with no response (cancellation#4)
        (http_session,) = mem.http.sessions.values()
        assert http_session.open_streams == 0 and http_session.by_request == {}
