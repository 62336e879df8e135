"""basic/utilities/ping: prompt answers, ping(timeout), keepalive with a failure threshold."""

import json
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.basic.utilities import ping
from mcp_ref.errors import ConnectionClosed, RequestTimeout
from mcp_ref.session import Server, SessionConfig, open_session
from mcp_ref.testing import memory_session_pair

from ...session.test_session import stuck_client


@pytest.mark.req("basic/utilities/ping#1")
async def test_server_pings_the_client_too() -> None:
    server = Server("s")
    async with memory_session_pair(server, era="legacy"):
        (session,) = server.sessions
        await session.ping(timeout=5)


class Mute(trio.abc.Channel[bytes]):
    """Passes messages through until muted; then swallows what its side sends.

    Counts the pings its side receives.
    """

    def __init__(self, inner: trio.abc.Channel[bytes]) -> None:
        self.inner = inner
        self.muted = False
        self.pings_received = 0

    async def send(self, value: bytes) -> None:
        if not self.muted:
            await self.inner.send(value)

    async def receive(self) -> bytes:
        data = await self.inner.receive()
        if json.loads(data).get("method") == "ping":
            self.pings_received += 1
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _mute_server_pair(nursery: trio.Nursery) -> tuple[Any, Mute]:
    """A server whose replies can be muted."""
    client_end, server_end = memory_channel_pair()
    mute = Mute(server_end)
    await nursery.start(Server("s").serve, mute)
    return client_end, mute


@pytest.mark.req("basic/utilities/ping#6")
async def test_no_ping_unless_asked_for_and_then_one_per_interval(autojump_clock: trio.abc.Clock) -> None:
    assert SessionConfig().keepalive_interval is None  # off by default, on both sides
    async with trio.open_nursery() as nursery:
        client_end, mute = await _mute_server_pair(nursery)
        async with open_session(client_end, era="legacy") as client:
            await trio.sleep(3600)  # an idle hour
            assert mute.pings_received == 0
            await client.ping()
            assert mute.pings_received == 1  # (only the one asked for)
        client_end, mute = await _mute_server_pair(nursery)
        async with open_session(client_end, config=SessionConfig(keepalive_interval=30), era="legacy"):
            await trio.sleep(3600 - 1)
            assert mute.pings_received == 3600 // 30 - 1  # one per interval, none more
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/ping#2", "basic/utilities/ping#5", "basic/utilities/ping#7")
async def test_ping_timeout(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        client_end, mute = await _mute_server_pair(nursery)
        async with open_session(client_end, era="legacy") as client:
            mute.muted = True
            start = trio.current_time()
            with pytest.raises(RequestTimeout):
                await client.ping(timeout=2.5)
            assert trio.current_time() - start == pytest.approx(2.5)
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "basic/utilities/ping#2",
    "basic/utilities/ping#3",
    "basic/utilities/ping#4",
    "basic/utilities/ping#5",
    "basic/utilities/ping#7",
    "basic/utilities/ping#8",
    "basic/utilities/ping#9",
)
async def test_keepalive_closes_the_session_after_the_failure_threshold(
    autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture
) -> None:
    config = SessionConfig(keepalive_interval=30, keepalive_timeout=5, keepalive_max_failures=3)
    async with trio.open_nursery() as nursery:
        client_end, mute = await _mute_server_pair(nursery)
        async with open_session(client_end, config=config, era="legacy") as client:
            await trio.sleep(100)  # three pings answered
            assert not client.session.closed.is_set()
            mute.muted = True
            start = trio.current_time()
            with trio.fail_after(1000):  # (virtual time: a keepalive that never closes fails fast)
                await client.session.closed.wait()
            # three rounds of (interval + timeout) after the mute
            assert trio.current_time() - start == pytest.approx(3 * 35, abs=30)
            assert "keepalive: 3 consecutive pings failed" in (client.session.close_reason or "")
            with pytest.raises(ConnectionClosed, match="keepalive"):
                await client.ping()
        nursery.cancel_scope.cancel()
    assert [r for r in caplog.records if "keepalive ping" in r.getMessage()]


@pytest.mark.req("basic/utilities/ping#3", "basic/utilities/ping#9")
async def test_keepalive_success_resets_the_count(
    autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture
) -> None:
    config = SessionConfig(keepalive_interval=10, keepalive_timeout=1, keepalive_max_failures=2)
    async with trio.open_nursery() as nursery:
        client_end, mute = await _mute_server_pair(nursery)
        async with open_session(client_end, config=config, era="legacy") as client:
            for _ in range(3):  # fail once, succeed, fail once ... never twice in a row
                mute.muted = True
                await trio.sleep(11.5)
                mute.muted = False
                await trio.sleep(10)
            assert not client.session.closed.is_set()
            assert mute.pings_received == 6  # one every interval (+ the 1 s timeout when it failed)
        nursery.cancel_scope.cancel()
    failures = [r.getMessage() for r in caplog.records if "keepalive ping" in r.getMessage()]
    assert [m.split(" failed")[0] for m in failures] == ["keepalive ping 1/2"] * 3


@pytest.mark.req("basic/utilities/ping#3", "basic/utilities/ping#7", "basic/utilities/ping#8")
async def test_server_side_keepalive_closes_a_silent_client(autojump_clock: trio.abc.Clock) -> None:
    server = Server("s", config=SessionConfig(keepalive_interval=20, keepalive_timeout=2, keepalive_max_failures=2))
    client_end, server_end = memory_channel_pair()
    mute = Mute(client_end)  # the client's replies can be swallowed
    async with trio.open_nursery() as nursery:
        session = await nursery.start(server.serve, server_end)
        async with open_session(mute, era="legacy") as client:
            await trio.sleep(50)  # two pings from the server, answered
            assert mute.pings_received == 2 and not session.closed.is_set()
            mute.muted = True
            start = trio.current_time()
            with trio.fail_after(200):
                await session.closed.wait()
            assert trio.current_time() - start == pytest.approx(2 * 22, abs=20)
            assert "keepalive: 2 consecutive pings failed" in (session.close_reason or "")
            with pytest.raises(ConnectionClosed):
                await client.ping(timeout=5)
        nursery.cancel_scope.cancel()
    assert session not in server.sessions


@pytest.mark.req("basic/utilities/ping#7", "basic/utilities/ping#8")
async def test_keepalive_closes_a_session_whose_sends_block(autojump_clock: trio.abc.Clock) -> None:
    # the stale connection keepalive exists for: the peer stopped reading, our pipe is full
    config = SessionConfig(keepalive_interval=30, keepalive_timeout=5, keepalive_max_failures=2, cancel_grace=1)
    async with stuck_client(Server("s"), config=config) as (client, stuck, rec):
        stuck.stuck = True
        start = trio.current_time()
        with trio.fail_after(1000):
            await client.session.closed.wait()
        # two rounds of (interval + timeout + grace for the cancellation), bounded although nothing is written
        assert trio.current_time() - start == pytest.approx(2 * 36)
        assert "keepalive: 2 consecutive pings failed" in (client.session.close_reason or "")
        assert stuck.blocked == 0
        assert not [m for m in rec.received if m.get("method") == "ping"]


def test_keepalive_config_is_validated() -> None:
    with pytest.raises(ValueError):
        SessionConfig(keepalive_interval=0)
    with pytest.raises(ValueError):
        SessionConfig(keepalive_max_failures=0)


# -- the chapter's rules, sans-IO (mcp_ref.basic.utilities.ping) ------------------------------


@pytest.mark.req("basic/utilities/ping#1")
def test_the_answer_to_a_ping_is_an_empty_result() -> None:
    from mcp_ref.basic.lifecycle import Phase, Role
    from mcp_ref.connection import Connection
    from mcp_ref.events import RequestReceived

    server = Connection(Role.SERVER)
    (event,) = server.receive_message(json.dumps({"jsonrpc": "2.0", "id": 9, "method": ping.METHOD}))
    # before initialisation too
    assert isinstance(event, RequestReceived) and event.method == "ping" and server.phase is Phase.AWAITING_INIT
    reply = json.loads(server.send_response(9, ping.answer()))
    assert reply == {"jsonrpc": "2.0", "id": 9, "result": {}}


@pytest.mark.req("basic/utilities/ping#2", "basic/utilities/ping#7", "basic/utilities/ping#8")
def test_the_keepalive_closes_after_the_configured_failures_in_a_row() -> None:
    keepalive = ping.Keepalive(timeout=2.5, max_failures=3)
    assert not keepalive.failed()
    assert not keepalive.failed()
    keepalive.succeeded()  # a success in between starts the count again
    assert not keepalive.failed() and not keepalive.failed()
    assert keepalive.failed()
    assert keepalive.close_reason() == "keepalive: 3 consecutive pings failed (timeout 2.5s)"


@pytest.mark.parametrize(("timeout", "failures"), [(0, 1), (-1, 3), (1, 0)])
def test_a_keepalive_needs_a_positive_timeout_and_threshold(timeout: float, failures: int) -> None:
    with pytest.raises(ValueError, match="keepalive"):
        ping.Keepalive(timeout, failures)
