"""Backpressure in the session: a peer that floods us while we cannot keep up (its replies
stuck, our handlers busy, our notification handlers slow) is not read past a bound."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.events import ProgressReceived
from mcp_ref.session import RequestContext, Server, Session, SessionConfig
from mcp_ref.session.core import _Inbox

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Flood(trio.abc.Channel[bytes]):
    """A peer with ``messages`` to send, as fast as it is read; its reading (our sends)
    can be stopped (``stuck``): a full pipe to a peer that does not read."""

    def __init__(self, messages: list[Any], *, stuck_after: int | None = None) -> None:
        self.messages = [json.dumps(m).encode() for m in messages]
        self.read = 0  # how many the session has taken
        self.sent: list[Any] = []
        self.stuck = False
        #: get stuck once this many messages were sent
        self.stuck_after = stuck_after
        self._unstuck = trio.Event()

    def unstick(self) -> None:
        self.stuck = False
        self.stuck_after = None
        self._unstuck.set()

    async def receive(self) -> bytes:
        if self.read == len(self.messages):
            await trio.sleep_forever()
        self.read += 1
        await trio.lowlevel.checkpoint()
        return self.messages[self.read - 1]

    async def send(self, value: bytes) -> None:
        if self.stuck_after is not None and len(self.sent) >= self.stuck_after:
            self.stuck = True
        while self.stuck:
            await self._unstuck.wait()
        self.sent.append(json.loads(value))
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


def pings(n: int) -> list[Any]:
    return [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(1, n + 1)]


def calls(n: int) -> list[Any]:
    return [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "wait"}} for i in range(1, n + 1)]


@asynccontextmanager
async def serving(server: Server, flood: Flood, **config: Any) -> AsyncIterator[Session]:
    async with trio.open_nursery() as nursery:
        session: Session = await nursery.start(
            lambda task_status: server.serve(flood, config=SessionConfig(**config), task_status=task_status)
        )
        yield session
        nursery.cancel_scope.cancel()


async def test_a_peer_that_does_not_read_our_replies_is_not_read_either(autojump_clock: trio.abc.Clock) -> None:
    flood = Flood([INIT, INITIALIZED, *pings(1000)], stuck_after=1)  # (the answer to initialize goes out)
    async with serving(Server("s"), flood, max_pending_replies=5) as session:
        await trio.testing.wait_all_tasks_blocked()
        # five replies are stuck, and the loop stopped reading at the sixth ping
        assert flood.read == 2 + 5 and session._replies == 5
        flood.unstick()
        with trio.fail_after(10):
            while len(flood.sent) < 1001:
                await trio.sleep(0.1)
        assert [m["id"] for m in flood.sent[1:]] == list(range(1, 1001))


async def test_a_peer_that_never_reads_again_is_closed_after_the_stall_timeout(autojump_clock: trio.abc.Clock) -> None:
    flood = Flood([INIT, INITIALIZED, *pings(100)], stuck_after=1)
    async with serving(Server("s"), flood, max_pending_replies=5, reply_stall_timeout=30) as session:
        start = trio.current_time()
        await session.closed.wait()
        assert trio.current_time() - start == pytest.approx(30)
        assert session.close_reason == "the peer is not reading: 5 replies could not be written for 30s"


async def test_requests_beyond_the_handler_slots_wait_in_a_bounded_queue(autojump_clock: trio.abc.Clock) -> None:
    server = Server("s")
    release = trio.Event()

    @server.tool()
    async def wait(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await release.wait()
        return "done"

    flood = Flood([INIT, INITIALIZED, *calls(50)])
    async with serving(server, flood, max_concurrent_requests=3, max_queued_requests=4):
        await trio.testing.wait_all_tasks_blocked()
        assert flood.read == 2 + 3 + 4  # three running, four waiting: the rest is not read yet
        release.set()
        with trio.fail_after(10):
            while len(flood.sent) < 51:
                await trio.sleep(0.1)
        assert sorted(m["id"] for m in flood.sent[1:]) == list(range(1, 51))


async def test_notifications_wait_for_a_slow_handler_in_a_bounded_queue(autojump_clock: trio.abc.Clock) -> None:
    server = Server("s")
    handled = []

    async def slow(session: Session, params: Any) -> None:
        await trio.sleep(1)
        handled.append(params)

    server.on_notification("notifications/roots/list_changed", slow)
    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    flood = Flood([INIT, INITIALIZED, *[changed] * 100])
    async with serving(server, flood, max_queued_notifications=10):
        await trio.testing.wait_all_tasks_blocked()
        # one being handled, ten waiting
        assert flood.read <= 2 + 1 + 10
        with trio.fail_after(200):
            while len(handled) < 100:
                await trio.sleep(1)
        assert flood.read == 102


def test_progress_for_one_of_our_requests_is_coalesced_past_the_inbox_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_Inbox, "MAX_ITEMS", 3)
    inbox = _Inbox()
    for n in range(10):
        inbox.put(ProgressReceived(request_id=1, progress_token=1, progress=n, total=None, message=None))
    assert [item.progress for item in inbox._items] == [0, 1, 9]  # the newest stands for those it overtook
