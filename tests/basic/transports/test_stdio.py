"""stdio: the framing, the channel, the server-side stdout guard, and the client's process management.

Tests marked ``subprocess`` run real child processes (the helper scripts in
scripts/); their waits are real I/O, short and bounded. The shutdown
sequence's timing is tested on a fake process with trio's autojump clock.
"""

import contextlib
import fcntl
import json
import logging
import math
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from mcp_ref.basic.lifecycle import Role
from mcp_ref.basic.transports.memory import MemoryMessageChannel, framed_memory_pair, memory_channel_pair
from mcp_ref.basic.transports.stdio import (
    FINISH_TORN_LINE_TIMEOUT,
    PIPE_BUF,
    LineFramer,
    Oversized,
    StdioMessageChannel,
    default_environment,
    frame_message,
    open_process_channel,
    peek_envelope,
    shutdown_process,
)
from mcp_ref.connection import Connection
from mcp_ref.errors import ConnectionClosed, ErrorCode, MessageTooLarge
from mcp_ref.exchange import StatelessEngine
from mcp_ref.schema.content import TextContent
from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation, InitializeRequestParams
from mcp_ref.session import Server, SessionConfig, open_session, open_stdio_client
from mcp_ref.session.core import Session, session_scope

from .conftest import ROOT, script

# -- the sans-IO framer ---------------------------------------------------------------------


def drain(framer: LineFramer) -> list[bytes | Oversized]:
    out: list[bytes | Oversized] = []
    while (item := framer.next_line()) is not None:
        out.append(item)
    return out


@pytest.mark.req("basic/transports#3")
def test_framer_splits_lines_across_and_within_chunks() -> None:
    f = LineFramer()
    f.feed(b'{"a":1}\n{"b"')
    assert drain(f) == [b'{"a":1}']
    f.feed(b":2}\n{}\n[1]\n")
    assert drain(f) == [b'{"b":2}', b"{}", b"[1]"]
    for byte in b'{"c":3}\n':
        f.feed(bytes([byte]))
    assert drain(f) == [b'{"c":3}']


def test_framer_strips_one_cr_and_skips_empty_lines() -> None:
    f = LineFramer()
    f.feed(b"\n\r\n\n{}\r\n")
    assert drain(f) == [b"{}"]
    f.feed(b"a\r\r\nb\rc\n")  # only the "\r" of the line ending goes
    assert drain(f) == [b"a\r", b"b\rc"]
    f.feed(b"split\r")
    assert drain(f) == []
    f.feed(b"\n")
    assert drain(f) == [b"split"]


def test_framer_delivers_a_last_line_without_newline_at_eof() -> None:
    f = LineFramer()
    f.feed(b'{"a":1}\n{"last":true}')
    assert drain(f) == [b'{"a":1}']
    assert not f.at_eof
    f.feed_eof()
    assert f.at_eof
    assert drain(f) == [b'{"last":true}']
    assert f.next_line() is None
    with pytest.raises(RuntimeError):
        f.feed(b"more")


def test_framer_at_eof_with_nothing_pending() -> None:
    f = LineFramer()
    f.feed(b"{}\n\r")
    f.feed_eof()
    assert drain(f) == [b"{}"]


def test_framer_limit_counts_the_message_not_its_line_ending() -> None:
    f = LineFramer(max_line=4)
    f.feed(b"abcd\n")
    assert drain(f) == [b"abcd"]
    f.feed(b"abcd\r")  # still a possible "\r\n": kept
    assert drain(f) == []
    f.feed(b"\nabcde\n")
    assert drain(f) == [b"abcd", Oversized(5)]
    f.feed(b"abcde\r\nok\n")
    assert drain(f) == [Oversized(5), b"ok"]


def test_framer_drops_an_oversized_line_as_it_arrives() -> None:
    f = LineFramer(max_line=10)
    f.feed(b"short\n" + b"x" * 25)
    assert drain(f) == [b"short"]
    assert f.buffered == 0  # the long line is not kept
    chunk = b"y" * 1000
    for _ in range(1000):  # a megabyte of one line, in 1000-byte reads
        f.feed(chunk)
        assert drain(f) == []
        assert f.buffered <= len(chunk)
    f.feed(b"zz\r\nok\n")
    assert drain(f) == [Oversized(25 + 1000 * 1000 + 2), b"ok"]
    f.feed(b"q" * 11 + b"\nnext\n")  # one that arrives in one piece
    assert drain(f) == [Oversized(11), b"next"]


def test_framer_reports_an_oversized_line_cut_by_eof() -> None:
    f = LineFramer(max_line=3)
    f.feed(b"ok\n" + b"z" * 50 + b"\r")
    f.feed_eof()
    assert drain(f) == [b"ok", Oversized(50)]
    assert f.next_line() is None


def test_framer_is_linear_for_many_small_lines() -> None:
    f = LineFramer()
    f.feed(b"{}\n" * 200_000)
    assert len(drain(f)) == 200_000
    assert f.buffered == 0


def test_framer_refuses_a_zero_limit() -> None:
    with pytest.raises(ValueError):
        LineFramer(0)


@given(
    messages=st.lists(
        st.tuples(
            st.binary(min_size=1, max_size=40).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"")),
            st.sampled_from([b"\n", b"\r\n", b"\n\n", b"\r\n\r\n"]),
        ),
        max_size=30,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=20),
    limit=st.integers(min_value=1, max_value=30),
    unterminated=st.booleans(),
)
def test_framer_reassembles_any_chunking(
    messages: list[tuple[bytes, bytes]], cuts: list[int], limit: int, unterminated: bool
) -> None:
    messages = [(m, end) for m, end in messages if m]
    wire = b"".join(m + end for m, end in messages)
    if unterminated and messages:
        wire = wire[: -len(messages[-1][1])]
    expected = [m if len(m) <= limit else Oversized(len(m)) for m, _ in messages]
    f = LineFramer(max_line=limit)
    got: list[bytes | Oversized] = []
    last = 0
    for cut in [*sorted(c for c in cuts if c < len(wire)), len(wire)]:
        f.feed(wire[last:cut])
        last = cut
        got += drain(f)
        assert f.buffered <= limit + 1 + len(wire)
    f.feed_eof()
    got += drain(f)
    assert got == expected


@pytest.mark.req("basic/transports#3", "basic/transports#7")
def test_frame_message_appends_a_newline_and_refuses_embedded_ones() -> None:
    assert frame_message(b'{"a":"\\n"}') == b'{"a":"\\n"}\n'  # an escaped newline is fine
    for bad in (b'{"a":\n1}', b'{"a":1}\n', b'{"a":\r1}'):
        with pytest.raises(ValueError, match="newline"):
            frame_message(bad)


# -- the channel over byte streams ----------------------------------------------------------


@pytest.mark.req("basic/transports#3", "basic/transports#7")
async def test_send_refuses_newlines_before_writing_anything() -> None:
    a, b = framed_memory_pair()
    with pytest.raises(ValueError, match="newline"):
        await a.send(b'{"a":\n1}')
    with pytest.raises(ValueError, match="newline"):
        await a.send(b'{"a":1}\r')
    await a.send(b'{"a":1}')
    assert await b.receive() == b'{"a":1}'  # nothing of the refused ones came first


async def test_oversized_message_is_reported_and_the_channel_recovers() -> None:
    left, right = trio.testing.memory_stream_pair()
    ch = StdioMessageChannel(right.send_stream, right.receive_stream, max_message_size=1024)
    await left.send_all(b'{"ok":0}\n' + b"x" * (5 * 1024 * 1024) + b'\n{"ok":1}\n')
    assert await ch.receive() == b'{"ok":0}'
    with pytest.raises(MessageTooLarge) as info:
        await ch.receive()
    assert (info.value.size, info.value.limit) == (5 * 1024 * 1024, 1024)
    assert info.value.code == ErrorCode.INVALID_REQUEST  # what the session answers
    assert await ch.receive() == b'{"ok":1}'


@pytest.mark.req("basic/lifecycle#16")
async def test_end_of_stream_delivers_the_last_line_then_ends() -> None:
    left, right = trio.testing.memory_stream_pair()
    ch = StdioMessageChannel(right.send_stream, right.receive_stream)
    await left.send_all(b'{"a":1}\n{"last":true}')
    await left.send_stream.aclose()
    assert await ch.receive() == b'{"a":1}'
    assert await ch.receive() == b'{"last":true}'
    for _ in range(2):
        with pytest.raises(trio.EndOfChannel):
            await ch.receive()


async def test_an_oversized_last_line_is_reported_before_the_end() -> None:
    left, right = trio.testing.memory_stream_pair()
    ch = StdioMessageChannel(right.send_stream, right.receive_stream, max_message_size=4)
    await left.send_all(b"toolong")
    await left.send_stream.aclose()
    with pytest.raises(MessageTooLarge):
        await ch.receive()
    with pytest.raises(trio.EndOfChannel):
        await ch.receive()


async def test_invalid_json_and_utf8_are_delivered_as_they_are() -> None:
    a, b = framed_memory_pair()
    for raw in (b"not json", b'{"a": "\xff\xfe"}', b"\xc3"):
        await a.send(raw)
        assert await b.receive() == raw


async def test_concurrent_sends_never_interleave() -> None:
    # lockstep streams make every send_all wait for the reader; trio's conflict
    # detector would raise BusyResourceError if two writes overlapped
    left, right = trio.testing.lockstep_stream_pair()
    a = StdioMessageChannel(left, left)
    b = StdioMessageChannel(right, right)
    sent = {json.dumps({"n": i, "pad": str(i) * 20_000}).encode() for i in range(12)}
    received: set[bytes] = set()

    async def reader() -> None:
        for _ in range(len(sent)):
            received.add(await b.receive())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        for msg in sent:
            nursery.start_soon(a.send, msg)
    assert received == sent


@attrs.define
class StallingStream(trio.abc.SendStream):
    """Writes half of the first chunk it is given, then blocks; later chunks go through."""

    data: bytearray = attrs.field(factory=bytearray)
    stall: bool = True

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self.stall:
            self.stall = False
            self.data += data[: len(data) // 2]
            await trio.sleep_forever()
        self.data += data

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


@pytest.mark.req("basic/transports#7")
async def test_a_send_cancelled_mid_line_does_not_corrupt_the_next_message(autojump_clock: trio.abc.Clock) -> None:
    out = StallingStream()
    ch = StdioMessageChannel(out, trio.testing.MemoryReceiveStream())
    with trio.move_on_after(1) as scope:
        await ch.send(b'{"first":"message"}')
    assert scope.cancelled_caught
    await ch.send(b'{"second":1}')
    framer = LineFramer()
    framer.feed(bytes(out.data))
    fragment = b'{"first":"message"}\n'[:10]
    assert drain(framer) == [fragment, b'{"second":1}']  # the fragment stands alone


async def test_a_send_cancelled_before_writing_leaves_no_trace() -> None:
    out = StallingStream(stall=False)
    ch = StdioMessageChannel(out, trio.testing.MemoryReceiveStream())
    with trio.CancelScope() as scope:
        scope.cancel()
        await ch.send(b"{}")
    await ch.send(b'{"n":1}')
    assert bytes(out.data) == b'{"n":1}\n'


async def test_concurrent_receivers_each_get_whole_messages() -> None:
    a, b = framed_memory_pair()
    got: list[bytes] = []

    async def receive_one() -> None:
        got.append(await b.receive())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(receive_one)
        nursery.start_soon(receive_one)
        await trio.testing.wait_all_tasks_blocked()
        await a.send(b'{"n":1}')
        await a.send(b'{"n":2}')
    assert sorted(got) == [b'{"n":1}', b'{"n":2}']


@pytest.mark.req("basic/lifecycle#16")
async def test_send_eof_closes_one_direction() -> None:
    a, b = framed_memory_pair()
    await a.send(b'{"bye":1}')
    await a.send_eof()
    await a.send_eof()  # idempotent
    with pytest.raises(trio.ClosedResourceError):
        await a.send(b"{}")
    assert await b.receive() == b'{"bye":1}'
    with pytest.raises(trio.EndOfChannel):
        await b.receive()
    await b.send(b'{"still":"open"}')
    assert await a.receive() == b'{"still":"open"}'


async def test_aclose_closes_both_directions_and_tells_the_peer() -> None:
    a, b = framed_memory_pair()
    await a.aclose()
    await a.aclose()  # idempotent
    with pytest.raises(trio.ClosedResourceError):
        await a.send(b"{}")
    with pytest.raises(trio.ClosedResourceError):
        await a.receive()
    with pytest.raises(trio.EndOfChannel):
        await b.receive()
    with pytest.raises(trio.BrokenResourceError):
        await b.send(b"{}")


# -- what the first bytes of an oversized message say ---------------------------------------


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xxxx', ("response", 7)),
        (b' { "id" : "a-1" , "error": {"code": -1, "message": "xxx', ("response", "a-1")),
        # the id after the result is out of reach; a nested "id" is not the message's
        (b'{"jsonrpc":"2.0","result":{"id":3,"content":"xxxx', ("response", None)),
        (b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"arguments":"xxx', ("request", 12)),
        (b'{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":"xxx', (None, None)),  # id may follow
        (b'{"jsonrpc":"2.0","id":12', (None, None)),  # the number may go on: 123...
        (b'{"jsonrpc":"2.0","id":true,"method":"x","params":"', (None, None)),
        (b'[{"jsonrpc":"2.0","id":1,"method":"x"', (None, None)),
        (b"\xff\xfe not json", (None, None)),
    ],
)
def test_peek_envelope_reads_only_top_level_members_read_whole(head: bytes, expected: tuple[Any, Any]) -> None:
    assert peek_envelope(head) == expected


def test_an_oversized_line_keeps_its_first_bytes() -> None:
    line = b'{"jsonrpc":"2.0","id":5,"result":{"pad":"' + b"x" * 5000 + b'"}}'
    for chunks in ([line + b"\n"], [line[:100], line[100:3000], line[3000:] + b"\n"]):
        f = LineFramer(max_line=2000)
        for chunk in chunks:
            f.feed(chunk)
        (item,) = drain(f)
        assert type(item) is Oversized and item.size == len(line)
        assert item.head == line[:1024]
    f = LineFramer(max_line=2000)
    f.feed(line)
    f.feed_eof()
    (item,) = drain(f)
    assert type(item) is Oversized and item.head == line[:1024]


async def test_messagetoolarge_says_which_response_was_dropped() -> None:
    a, b = framed_memory_pair(max_message_size=100)
    await a.send(b'{"jsonrpc":"2.0","id":5,"result":{"pad":"' + b"x" * 200 + b'"}}')
    with pytest.raises(MessageTooLarge, match="response 5 of at least") as info:
        await b.receive()
    assert (info.value.kind, info.value.request_id) == ("response", 5)


# -- the session when a message was too large ---------------------------------------------


@contextlib.asynccontextmanager
async def client_with_a_fake_server(limit: int) -> AsyncIterator[tuple[Session, MemoryMessageChannel]]:
    """Our initialised client session (messages over ``limit`` bytes dropped) and the raw end of its peer."""
    ours, theirs = memory_channel_pair()
    ours.max_message_size = limit
    async with session_scope(Connection(Role.CLIENT), ours) as session:
        init = InitializeRequestParams(
            protocol_version="2025-11-25",
            capabilities=ClientCapabilities(),
            client_info=Implementation(name="t", version="1"),
        )
        pending = await session.start_request("initialize", init)
        request = json.loads(await theirs.receive())
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "fake", "version": "1"}}
        await theirs.send(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode())
        await pending.result()
        await session.notify("notifications/initialized")
        assert json.loads(await theirs.receive())["method"] == "notifications/initialized"
        yield session, theirs


async def test_an_oversized_response_fails_its_request_at_once(autojump_clock: trio.abc.Clock) -> None:
    async with client_with_a_fake_server(1000) as (session, server):
        pending = await session.start_request("ping")
        request = json.loads(await server.receive())
        start = trio.current_time()
        big = {"jsonrpc": "2.0", "id": request["id"], "result": {"pad": "x" * 2000}}
        await server.send(json.dumps(big).encode())
        with pytest.raises(MessageTooLarge) as info:
            await pending.result()
        assert trio.current_time() == start  # at once, not at the request timeout
        assert info.value.request_id == request["id"]
        with trio.move_on_after(10) as nothing:
            await server.receive()  # a response gets no answer, not even an error
        assert nothing.cancelled_caught
        # the session goes on: the next request is answered
        pending = await session.start_request("ping")
        request = json.loads(await server.receive())
        await server.send(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}).encode())
        assert await pending.result() is not None


@pytest.mark.req("basic/index#10")
async def test_an_oversized_request_is_refused_with_its_id(autojump_clock: trio.abc.Clock) -> None:
    async with client_with_a_fake_server(1000) as (session, server):
        big = {"jsonrpc": "2.0", "id": "r-9", "method": "ping", "params": {"pad": "x" * 2000}}
        await server.send(json.dumps(big).encode())
        reply = json.loads(await server.receive())
        assert reply["id"] == "r-9" and reply["error"]["code"] == ErrorCode.INVALID_REQUEST
        unreadable = {"jsonrpc": "2.0", "method": "ping", "params": {"pad": "x" * 2000}, "id": 4}
        await server.send(json.dumps(unreadable).encode())
        reply = json.loads(await server.receive())
        assert reply["id"] is None and reply["error"]["code"] == ErrorCode.INVALID_REQUEST


# -- the shutdown sequence, on a fake process and virtual time ------------------------------


@attrs.define
class FakeProcess:
    """Exits ``exit_after_close`` seconds after its input is closed (never if None),
    on SIGTERM if ``obeys_term``, and always on SIGKILL. Records what happened when."""

    nursery: trio.Nursery
    exit_after_close: float | None
    obeys_term: bool
    pid: int = 4242
    returncode: int | None = None
    events: list[tuple[str, float]] = attrs.field(factory=list)
    _exited: trio.Event = attrs.field(factory=trio.Event)

    async def close_input(self) -> None:
        self.events.append(("close", trio.current_time()))
        await trio.lowlevel.checkpoint()
        if self.exit_after_close is not None:
            self.nursery.start_soon(self._exit_later, self.exit_after_close)

    async def _exit_later(self, delay: float) -> None:
        await trio.sleep(delay)
        self._exit(0)

    def _exit(self, code: int) -> None:
        if self.returncode is None:
            self.returncode = code
            self._exited.set()

    async def wait(self) -> int:
        await self._exited.wait()
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        self.events.append((signal.Signals(sig).name, trio.current_time()))
        if sig == signal.SIGKILL or (sig == signal.SIGTERM and self.obeys_term):
            self._exit(-sig)


async def run_shutdown(
    exit_after_close: float | None, obeys_term: bool, *, cancelled: bool = False
) -> tuple[FakeProcess, float]:
    async with trio.open_nursery() as nursery:
        proc = FakeProcess(nursery, exit_after_close, obeys_term)
        start = trio.current_time()
        with trio.CancelScope() as scope:
            if cancelled:
                scope.cancel()  # the caller's scope is already cancelled
            await shutdown_process(proc, proc.close_input, close_wait=3.0, term_wait=5.0)
        elapsed = trio.current_time() - start
        nursery.cancel_scope.cancel()
    return proc, elapsed


@pytest.mark.req("basic/lifecycle#15")
async def test_shutdown_ends_at_closing_stdin_when_the_server_exits(autojump_clock: trio.abc.Clock) -> None:
    proc, elapsed = await run_shutdown(exit_after_close=1.0, obeys_term=True)
    assert [e for e, _ in proc.events] == ["close"]
    assert (proc.returncode, elapsed) == (0, 1.0)


@pytest.mark.req("basic/lifecycle#15")
async def test_shutdown_sends_sigterm_after_the_first_wait(autojump_clock: trio.abc.Clock) -> None:
    proc, elapsed = await run_shutdown(exit_after_close=None, obeys_term=True)
    assert proc.events == [("close", 0.0), ("SIGTERM", 3.0)]
    assert (proc.returncode, elapsed) == (-signal.SIGTERM, 3.0)


@pytest.mark.req("basic/lifecycle#15")
async def test_shutdown_sends_sigkill_after_the_second_wait(autojump_clock: trio.abc.Clock) -> None:
    proc, elapsed = await run_shutdown(exit_after_close=10.0, obeys_term=False)
    assert proc.events == [("close", 0.0), ("SIGTERM", 3.0), ("SIGKILL", 8.0)]
    assert (proc.returncode, elapsed) == (-signal.SIGKILL, 8.0)


@pytest.mark.req("basic/lifecycle#15")
async def test_shutdown_runs_to_the_end_in_a_cancelled_scope(autojump_clock: trio.abc.Clock) -> None:
    proc, elapsed = await run_shutdown(exit_after_close=None, obeys_term=False, cancelled=True)
    assert [e for e, _ in proc.events] == ["close", "SIGTERM", "SIGKILL"]
    assert elapsed == 8.0


async def test_shutdown_of_a_process_that_already_exited_sends_nothing() -> None:
    async with trio.open_nursery() as nursery:
        proc = FakeProcess(nursery, None, True)
        proc._exit(3)

        async def broken_pipe() -> None:
            await trio.lowlevel.checkpoint()
            raise trio.BrokenResourceError

        await shutdown_process(proc, broken_pipe)
    assert proc.events == [] and proc.returncode == 3


# -- the server side (real processes) -------------------------------------------------------


def script_env(**extra: str) -> dict[str, str]:
    """Over default_environment(): mcp_ref importable in the child."""
    return {"PYTHONPATH": str(ROOT), **extra}


@pytest.mark.subprocess
@pytest.mark.req("basic/transports#6", "basic/transports#4")
async def test_server_guard_keeps_stdout_for_protocol_messages_only() -> None:
    messages = [json.dumps({"jsonrpc": "2.0", "method": "ping", "id": i}).encode() for i in range(3)]
    with trio.fail_after(30):
        result = await trio.run_process(
            [sys.executable, script("guarded_server")],
            stdin=b"".join(m + b"\n" for m in messages),
            capture_stdout=True,
            capture_stderr=True,
            env={**default_environment(), **script_env()},
        )
    stdout = result.stdout.decode().splitlines()
    stderr = result.stderr.decode().splitlines()
    # the protocol lines, then (after the channel) the print that proves stdout was restored
    assert stdout == [m.decode() for m in messages] + ["after the channel: stdout is restored"]
    for n in range(3):
        for kind in ("print", "fd write", "buffer write", "log", "child"):
            assert f"stray {kind} {n}" in stderr, (kind, n, stderr)
    assert "stdin read by user code: ''" in stderr  # stray reads see /dev/null, not our input
    assert any(line.startswith("nested: ") and "already active" in line for line in stderr)
    assert result.returncode == 0  # EOF on stdin ended the server cleanly


@pytest.mark.subprocess
async def test_without_the_guard_stray_output_reaches_stdout() -> None:
    with trio.fail_after(30):
        result = await trio.run_process(
            [sys.executable, script("guarded_server"), "--no-guard"],
            stdin=b'{"n":0}\n',
            capture_stdout=True,
            capture_stderr=True,
            env={**default_environment(), **script_env()},
        )
    stdout = result.stdout.decode().splitlines()
    assert '{"n":0}' in stdout and "stray fd write 0" in stdout


# -- the client side (real processes) --------------------------------------------------------


def recorded(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


@pytest.mark.subprocess
@pytest.mark.req("basic/transports#1", "basic/transports#2", "basic/lifecycle#15")
async def test_round_trip_and_a_clean_shutdown(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "mcp_ref.stdio")
    unicode = json.dumps({"text": "h\u00e9llo \u2028 \U0001f600"}, ensure_ascii=False).encode()
    big = json.dumps({"pad": "x" * (2 * 1024 * 1024)}).encode()
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, [script("echo_server")]) as ch:
            for msg in (unicode, big, b"{}"):
                await ch.send(msg)
                assert await ch.receive() == msg  # byte for byte
    assert ch.process.returncode == 0  # closing its stdin was enough
    assert not [m for m in recorded(caplog, "mcp_ref.stdio") if "SIG" in m]


@pytest.mark.subprocess
@pytest.mark.req("basic/transports#1")
async def test_what_our_server_writes_is_utf8_on_the_wire() -> None:
    # the server's own encoder, in a real process: the text comes back as UTF-8 bytes (not \u
    # escapes, not another encoding), whatever plane its characters are in
    text = "h\u00e9llo \u2713 \U0001f40d \u4e2d"
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    call = {"name": "echo", "arguments": {"text": text}}
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, ["-m", "mcp_ref.examples.echo"]) as ch:
            await ch.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode())
            await ch.receive()
            await ch.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            await ch.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}).encode())
            raw = await ch.receive()
    assert text.encode("utf-8") in raw and b"\\u" not in raw
    assert json.loads(raw.decode("utf-8", "strict"))["result"]["content"][0]["text"] == text


@pytest.mark.subprocess
async def test_an_oversized_message_from_the_server_is_skipped() -> None:
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, [script("echo_server")], max_message_size=1024 * 1024) as ch:
            await ch.send(b"[" + b"1," * (1024 * 1024) + b"1]")
            await ch.send(b'{"after":1}')
            with pytest.raises(MessageTooLarge):
                await ch.receive()
            assert await ch.receive() == b'{"after":1}'


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#15")
async def test_a_server_that_ignores_eof_gets_sigterm(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "mcp_ref.stdio")
    with trio.fail_after(30):
        async with open_process_channel(
            sys.executable, [script("stubborn_server"), "needs-term"], shutdown_timeouts=(0.1, 20.0)
        ) as ch:
            assert await ch.receive() == b"ready"
    assert ch.process.returncode == -signal.SIGTERM
    assert [m.split(":")[-1].strip() for m in recorded(caplog, "mcp_ref.stdio")] == ["sending SIGTERM"]


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#15")
async def test_a_server_that_ignores_sigterm_gets_sigkill(autojump_clock: trio.abc.Clock) -> None:
    # virtual time: the two default waits pass at once, the process and its signals are real
    async with open_process_channel(sys.executable, [script("stubborn_server"), "ignore-term"]) as ch:
        assert await ch.receive() == b"ready"
        start = trio.current_time()
    assert trio.current_time() - start >= 2.0 + 2.0  # both default waits passed
    assert ch.process.returncode == -signal.SIGKILL


async def wait_gone(pid: int) -> None:
    """Return once process ``pid`` (not our child) has terminated: its pidfd turns readable."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        await trio.lowlevel.wait_readable(fd)
    finally:
        os.close(fd)


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#15")
@pytest.mark.parametrize("grandchild", ["obeys-term", "ignores-term"])
@pytest.mark.parametrize("server", ["waits", "exits-first"])
async def test_shutdown_signals_reach_the_servers_children(grandchild: str, server: str) -> None:
    # a wrapper launcher (npx, uv run) is a process whose child is the real server;
    # "sh" stands in for it here and says the pid of its child on stdout. "exits-first":
    # it exits before the client closes, and its child stays in its process group: the
    # shutdown must reach that child although its leader is gone (it did not)
    ignore = "trap '' TERM; " if grandchild == "ignores-term" else ""
    wait = "; wait" if server == "waits" else ""
    with trio.fail_after(30):
        async with open_process_channel(
            "sh", ["-c", ignore + "sleep 987 & echo $!" + wait], shutdown_timeouts=(0.2, 0.2)
        ) as ch:
            sleeper = int(await ch.receive())
            # the server leads its own process group, apart from ours
            assert os.getpgid(sleeper) == ch.process.pid != os.getpgrp()
            if server == "exits-first":
                await ch.process.wait()
        if server == "exits-first":
            assert ch.process.returncode == 0
        else:
            assert ch.process.returncode == (-signal.SIGTERM if grandchild == "obeys-term" else -signal.SIGKILL)
        await wait_gone(sleeper)  # were it left behind, fail_after would fire


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#15")
async def test_cancelling_the_caller_still_runs_the_whole_shutdown(autojump_clock: trio.abc.Clock) -> None:
    with trio.CancelScope() as scope:
        async with open_process_channel(sys.executable, [script("stubborn_server"), "ignore-term"]) as ch:
            assert await ch.receive() == b"ready"
            scope.cancel()
            await trio.sleep_forever()
    assert scope.cancelled_caught
    assert ch.process.returncode == -signal.SIGKILL


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#15")
async def test_an_exception_in_the_block_leaves_no_process() -> None:
    with trio.fail_after(30), pytest.raises(RuntimeError, match="client failed"):
        async with open_process_channel(sys.executable, [script("echo_server")]) as ch:
            await ch.send(b"{}")
            raise RuntimeError("client failed")
    assert ch.process.returncode == 0


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#15")
async def test_cancelling_the_caller_mid_way_leaves_no_process() -> None:
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            procs = []

            async def client(task_status: trio.TaskStatus[None]) -> None:
                async with open_process_channel(sys.executable, [script("echo_server")]) as ch:
                    procs.append(ch.process)
                    await ch.send(b"{}")
                    assert await ch.receive() == b"{}"
                    task_status.started()
                    await ch.receive()  # blocked here when cancelled

            await nursery.start(client)
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    assert procs[0].returncode == 0


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#16")
async def test_a_server_exiting_on_its_own_ends_the_channel() -> None:
    lines: list[str] = []
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, [script("exit_early")], stderr=lines.append) as ch:
            with pytest.raises(trio.EndOfChannel):
                await ch.receive()
            await ch.process.wait()
            with pytest.raises(trio.BrokenResourceError):
                await ch.send(b"{}")
    assert ch.process.returncode == 3
    assert lines == ["going away"]


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#16")
async def test_the_end_of_a_server_that_died_says_its_exit_status_and_last_stderr_lines() -> None:
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, [script("exit_early")], stderr="capture") as ch:
            with pytest.raises(trio.EndOfChannel, match=r"exited with code 3; its last stderr lines: going away$"):
                await ch.receive()
            with pytest.raises(trio.BrokenResourceError, match=r"exited with code 3; .*going away"):
                await ch.send(b"{}")
        async with open_process_channel("sh", ["-c", "echo one >&2; echo two >&2; kill -9 $$"], stderr="capture") as ch:
            with pytest.raises(trio.EndOfChannel, match=r"was killed by SIGKILL; its last stderr lines: one \| two$"):
                await ch.receive()


@pytest.mark.subprocess
async def test_a_tool_result_over_the_clients_limit_fails_the_call_at_once() -> None:
    # the request timeout (60 s) is far beyond fail_after: the call fails because the answer was dropped
    with trio.fail_after(20):
        async with open_stdio_client(
            sys.executable, [script("slow_server"), "0"], env=script_env(), max_message_size=64 * 1024, era="legacy"
        ) as client:
            with pytest.raises(MessageTooLarge, match=r"response \d+ of at least 100\d{3} bytes exceeds"):
                await client.call_tool("big", {"size": 100_000})
            small = await client.call_tool("big", {"size": 3})
            assert small.content == [TextContent(text="xxx")]


@pytest.mark.subprocess
async def test_a_server_that_dies_at_startup_fails_open_stdio_client_with_the_reason() -> None:
    with trio.fail_after(30), pytest.raises(ConnectionClosed) as info:
        async with open_stdio_client(sys.executable, [script("exit_early")], stderr="capture", era="legacy"):
            raise AssertionError("the session must not open")
    # whichever noticed first, the closed stdout or the broken stdin, the reason is the same
    assert "exited with code 3; its last stderr lines: going away" in str(info.value)


# -- the server's end of input: requests under way get a grace period --------------------

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(rid: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def piped(*messages: dict[str, Any]) -> bytes:
    """What ``printf '%s\\n' ... |`` would feed a server."""
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def answers(stdout: bytes) -> dict[Any, dict[str, Any]]:
    return {m["id"]: m for m in map(json.loads, stdout.splitlines())}


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#15")
async def test_piped_requests_are_all_answered_and_the_server_exits_0_at_eof() -> None:
    # the whole conversation arrives at once, stdin ends right after it: printf ... | python -m mcp_ref.examples.echo
    stdin = piped(INIT, INITIALIZED, call(2, "echo", {"text": "one"}), call(3, "echo", {"text": "two"}))
    for _ in range(3):  # it used to depend on which task ran first
        with trio.fail_after(30):
            done = await trio.run_process(
                [sys.executable, "-m", "mcp_ref.examples.echo"],
                stdin=stdin,
                capture_stdout=True,
                capture_stderr=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                check=False,
            )
        assert done.returncode == 0, done.stderr  # EOF alone ends Server.run_stdio, no signal needed
        got = answers(done.stdout)
        assert sorted(got) == [1, 2, 3]
        assert [got[i]["result"]["content"][0]["text"] for i in (2, 3)] == ["one", "two"]


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#15", "basic/transports#2")
async def test_run_stdio_exits_0_when_its_client_closes_stdin(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "mcp_ref.stdio")
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, ["-m", "mcp_ref.examples.echo"], env=script_env()) as ch:
            async with open_session(ch, era="legacy") as client:
                result = await client.call_tool("echo", {"text": "bye"})
                assert result.content == [TextContent(text="bye")]
    assert ch.process.returncode == 0
    assert not [m for m in recorded(caplog, "mcp_ref.stdio") if "SIG" in m]  # closing stdin was enough


@pytest.mark.subprocess
@pytest.mark.req("basic/lifecycle#15")
async def test_at_eof_a_slow_handler_finishes_and_a_hanging_one_is_cancelled_after_the_grace() -> None:
    stdin = piped(INIT, INITIALIZED, call(2, "slow", {"seconds": 0.1}), call(3, "hang", {}))
    with trio.fail_after(30):
        start = trio.current_time()
        done = await trio.run_process(
            [sys.executable, script("slow_server"), "1.5"],
            stdin=stdin,
            capture_stdout=True,
            capture_stderr=True,
            env=script_env(),
            check=False,
        )
    assert done.returncode == 0, done.stderr
    got = answers(done.stdout)
    assert sorted(got) == [1, 2]  # the cancelled request gets no response
    assert got[2]["result"]["content"][0]["text"] == "slept"
    assert b"hang cancelled" in done.stderr
    assert trio.current_time() - start >= 1.5  # hang kept the session open for the whole grace


async def test_eof_grace_on_virtual_time(autojump_clock: trio.abc.Clock) -> None:
    server = Server("t")
    finished: list[tuple[str, float]] = []

    @server.tool(input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}})
    async def wait(ctx: Any, arguments: dict[str, Any]) -> str:
        try:
            await trio.sleep(arguments["seconds"])
        except trio.Cancelled:
            finished.append(("cancelled", trio.current_time()))
            raise
        finished.append(("done", trio.current_time()))
        return "ok"

    async def run(config: SessionConfig, *calls: float) -> dict[Any, dict[str, Any]]:
        client, server_end = memory_channel_pair()
        finished.clear()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: server.serve(server_end, config=config))
            for m in (INIT, INITIALIZED, *(call(2 + i, "wait", {"seconds": t}) for i, t in enumerate(calls))):
                await client.send(json.dumps(m).encode())
            await client.send_eof()
            got = {}
            with trio.fail_after(100):
                while True:
                    try:
                        m = json.loads(await client.receive())
                    except trio.EndOfChannel:
                        break
                    got[m["id"]] = m
        return got

    start = trio.current_time()
    got = await run(SessionConfig(eof_grace=5.0), 3.0, 4.0)
    assert sorted(got) == [1, 2, 3] and finished == [("done", start + 3.0), ("done", start + 4.0)]
    # the session ends as soon as the last one is done, not at the end of the grace
    assert trio.current_time() == start + 4.0

    start = trio.current_time()
    got = await run(SessionConfig(eof_grace=5.0), 1.0, 60.0)
    assert sorted(got) == [1, 2] and finished == [("done", start + 1.0), ("cancelled", start + 5.0)]

    start = trio.current_time()
    got = await run(SessionConfig(), 1.0)  # no grace: cancelled at once
    assert sorted(got) == [1] and finished == [("cancelled", start)]


def test_eof_grace_must_be_finite_and_not_negative() -> None:
    for bad in (-1.0, math.inf):
        with pytest.raises(ValueError, match="eof_grace"):
            SessionConfig(eof_grace=bad)


@pytest.mark.subprocess
@pytest.mark.req("basic/transports#4", "basic/transports#5")
async def test_stderr_capture_keeps_and_logs_each_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "mcp_ref.stdio.stderr")
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, [script("stderr_talker")], stderr="capture") as ch:
            await ch.send(b"{}")
            assert await ch.receive() == b"{}"
    expected = ["hello on stderr", "second line", "bad byte \ufffd here", "last"]
    assert list(ch.stderr_lines) == expected
    pid = ch.process.pid
    assert recorded(caplog, "mcp_ref.stdio.stderr") == [f"[server {pid}] {line}" for line in expected]
    assert {r.levelno for r in caplog.records if r.name == "mcp_ref.stdio.stderr"} == {logging.INFO}
    assert ch.process.returncode == 0  # stderr output is not an error


@pytest.mark.subprocess
async def test_stderr_capture_is_bounded() -> None:
    with trio.fail_after(30):
        async with open_process_channel(
            sys.executable, [script("stderr_talker")], stderr="capture", stderr_keep=2
        ) as ch:
            await ch.send(b"{}")
            await ch.receive()
    assert list(ch.stderr_lines) == ["bad byte \ufffd here", "last"]


@pytest.mark.subprocess
@pytest.mark.req("basic/transports#5")
@pytest.mark.parametrize("mode", ["inherit", "discard"])
async def test_stderr_inherited_or_discarded(
    mode: Literal["inherit", "discard"], capfd: pytest.CaptureFixture[str]
) -> None:
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, [script("stderr_talker")], stderr=mode) as ch:
            await ch.send(b"{}")
            assert await ch.receive() == b"{}"
    assert ("hello on stderr" in capfd.readouterr().err) is (mode == "inherit")
    assert not ch.stderr_lines


@pytest.mark.subprocess
async def test_an_exception_from_the_stderr_callback_is_not_swallowed() -> None:
    def refuse(line: str) -> None:
        raise ValueError(f"did not expect {line!r}")

    with trio.fail_after(30), pytest.raises(BaseExceptionGroup) as info:
        async with open_process_channel(sys.executable, [script("stderr_talker")], stderr=refuse) as ch:
            await trio.sleep_forever()
    assert info.value.subgroup(ValueError) is not None
    assert ch.process.returncode is not None


@pytest.mark.subprocess
async def test_a_command_that_does_not_exist_fails_before_the_block() -> None:
    ran = False
    with pytest.raises(FileNotFoundError, match="cannot launch MCP server '/no/such/mcp-server'"):
        async with open_process_channel("/no/such/mcp-server"):
            ran = True
    assert not ran


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"args": "script.py"}, TypeError),
        ({"shutdown_timeouts": (-1.0, 2.0)}, ValueError),
        ({"shutdown_timeouts": (2.0, math.inf)}, ValueError),
        ({"stderr": "stdout"}, ValueError),
        ({"stderr_keep": 0}, ValueError),
    ],
)
async def test_bad_options_are_refused_before_launching(options: dict[str, Any], error: type[Exception]) -> None:
    # were the options not checked first, launching would fail with FileNotFoundError instead
    with pytest.raises(error):
        async with open_process_channel("/no/such/mcp-server", **options):
            raise AssertionError("the block must not run")


async def report(cwd: str | None = None, **options: Any) -> dict[str, Any]:
    argv = [script("env_report"), "MCP_REF_SECRET", "MCP_T", "PATH"]
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, argv, cwd=cwd, **options) as ch:
            result: dict[str, Any] = json.loads(await ch.receive())
    return result


@pytest.mark.subprocess
async def test_env_none_inherits_our_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_REF_SECRET", "s3cret")
    env = (await report())["env"]
    assert env == {"MCP_REF_SECRET": "s3cret", "MCP_T": None, "PATH": os.environ["PATH"]}


@pytest.mark.subprocess
async def test_env_given_is_laid_over_the_default_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MCP_REF_SECRET", "s3cret")
    result = await report(str(tmp_path), env={"MCP_T": "yes"})
    # PATH comes from the defaults; our other variables are not passed on
    assert result["env"] == {"MCP_REF_SECRET": None, "MCP_T": "yes", "PATH": os.environ["PATH"]}
    assert result["cwd"] == str(tmp_path)


def test_default_environment_is_minimal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_REF_SECRET", "s3cret")
    monkeypatch.setenv("TERM", "() { :; }; echo exported function")
    monkeypatch.setenv("HOME", "/home/someone")
    env = default_environment()
    assert env["HOME"] == "/home/someone"
    assert "MCP_REF_SECRET" not in env and "TERM" not in env
    assert set(env) <= {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR"}


async def torn_over_a_pipe(big: bytes) -> tuple[StdioMessageChannel, trio.lowlevel.FdStream, int]:
    """A channel over a real pipe whose send of ``big`` was cancelled partway:
    (the channel, the pipe's read end, its write fd). A pipe takes a piece of PIPE_BUF
    bytes whole or not at all; nobody reads yet, so a message much bigger than the
    pipe's capacity (64 KiB) blocks partway through."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    os.set_blocking(read_fd, False)
    out, inp = trio.lowlevel.FdStream(write_fd), trio.lowlevel.FdStream(read_fd)
    ch = StdioMessageChannel(out, trio.testing.MemoryReceiveStream())
    with trio.move_on_after(1) as scope:
        await ch.send(big)
    assert scope.cancelled_caught  # torn: part of the line is in the pipe
    return ch, inp, write_fd


def lines_of(received: bytes) -> list[bytes | Oversized]:
    framer = LineFramer(max_line=1 << 20)
    framer.feed(received)
    framer.feed_eof()
    return drain(framer)


@pytest.mark.req("basic/transports#7")
async def test_over_a_pipe_a_send_cancelled_mid_line_is_finished_by_the_next_one(
    autojump_clock: trio.abc.Clock,
) -> None:
    big = b'{"first":"' + b"x" * 300_000 + b'"}'
    ch, inp, _ = await torn_over_a_pipe(big)
    received = bytearray()

    async def read_all() -> None:
        while chunk := await inp.receive_some(65536):
            received.extend(chunk)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read_all)
        await ch.send(b'{"second":1}')
        await ch.aclose()
    # the peer never sees a fragment: the cancelled message arrived whole, then the next one
    assert lines_of(bytes(received)) == [big, b'{"second":1}']
    await inp.aclose()


@pytest.mark.req("basic/transports#7")
@pytest.mark.parametrize("close", ["aclose", "send_eof"])
async def test_over_a_pipe_closing_after_a_cancelled_send_finishes_its_line_first(
    autojump_clock: trio.abc.Clock, close: str
) -> None:
    # the torn line is the last thing written: closing must not leave the peer a fragment before EOF
    big = b'{"only":"' + b"x" * 300_000 + b'"}'
    ch, inp, write_fd = await torn_over_a_pipe(big)
    # room for the rest now, so that closing can write it without anyone reading yet
    fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, 1 << 20)
    with trio.CancelScope() as closing:
        closing.cancel()  # closing is often done from a cancelled scope: the rest still goes out
        await getattr(ch, close)()
    await ch.aclose()
    received = bytearray()
    while chunk := await inp.receive_some(1 << 20):
        received.extend(chunk)
    assert lines_of(bytes(received)) == [big]
    await inp.aclose()


async def test_closing_gives_up_on_a_torn_line_the_peer_does_not_read(autojump_clock: trio.abc.Clock) -> None:
    ch, inp, _ = await torn_over_a_pipe(b'{"only":"' + b"x" * 300_000 + b'"}')
    start = trio.current_time()
    await ch.aclose()  # nobody reads: bounded, not forever
    assert trio.current_time() - start == pytest.approx(FINISH_TORN_LINE_TIMEOUT)
    await inp.aclose()


async def test_over_a_pipe_send_nowait_writes_a_whole_line_or_nothing() -> None:
    # the session's fast path: one write, with nothing left half-written when it cannot
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    out, inp = trio.lowlevel.FdStream(write_fd), trio.lowlevel.FdStream(read_fd)
    ch = StdioMessageChannel(out, trio.testing.MemoryReceiveStream())
    ch.send_nowait(b'{"a":1}')
    assert await inp.receive_some(65536) == b'{"a":1}\n'
    with pytest.raises(ValueError, match="newline"):
        ch.send_nowait(b'{"a":\n1}')
    with pytest.raises(trio.WouldBlock):
        ch.send_nowait(b'{"big":"' + b"x" * PIPE_BUF + b'"}')  # more than one all-or-nothing write: send()
    fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, 4096)
    filler = b"x" * 4000
    ch.send_nowait(filler)
    with pytest.raises(trio.WouldBlock):
        ch.send_nowait(b'{"b":' + b"2" * 200 + b"}")  # the pipe is full: nothing of it is written
    async with ch._send_lock:
        with pytest.raises(trio.WouldBlock):
            ch.send_nowait(b'{"c":3}')  # a send in progress goes first
    assert await inp.receive_some(65536) == filler + b"\n"
    ch.send_nowait(b'{"d":4}')
    assert await inp.receive_some(65536) == b'{"d":4}\n'
    await ch.aclose()
    with pytest.raises(trio.ClosedResourceError):
        ch.send_nowait(b'{"e":5}')
    await inp.aclose()


async def test_send_nowait_over_a_stream_that_is_no_pipe_always_defers_to_send() -> None:
    # a stream that may take part of a line: only send() knows how to write it safely
    left, right = trio.testing.memory_stream_pair()
    ch = StdioMessageChannel(left.send_stream, right.receive_stream)
    with pytest.raises(trio.WouldBlock):
        ch.send_nowait(b'{"a":1}')
    await ch.aclose()


#: lines no id can be read from: not JSON (-32700), and a request whose id is not one (-32600)
UNREADABLE = [(b"{nope", -32700), (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600)]


@pytest.mark.subprocess
@pytest.mark.req("basic/index#10", "2026-07-28:basic/index#15")
@pytest.mark.parametrize("opening", ["none", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
async def test_an_unreadable_line_is_answered_with_a_null_id_in_every_revision(opening: str) -> None:
    # the same as the HTTP layer writes (http_server.error_body, spec_notes/basic/transports.md):
    # JSON-RPC 2.0's null, which the SDK clients need, before any revision is chosen, in every
    # session revision and in a 2026-07-28 channel; the server goes on serving
    with trio.fail_after(30):
        async with open_process_channel(sys.executable, ["-m", "mcp_ref.examples.echo"]) as ch:
            if opening == "2026-07-28":
                modern = StatelessEngine(Role.CLIENT, capabilities=ClientCapabilities())
                _, data = modern.send_request("tools/list")
                await ch.send(data)
                assert "result" in json.loads(await ch.receive())
            elif opening != "none":
                init = {"protocolVersion": opening, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
                await ch.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode())
                assert json.loads(await ch.receive())["result"]["protocolVersion"] == opening
                await ch.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            for line, code in UNREADABLE:
                await ch.send(line)
                reply = json.loads(await ch.receive())
                assert reply["jsonrpc"] == "2.0" and "id" in reply and reply["id"] is None, reply
                assert reply["error"]["code"] == code
            if opening not in ("none", "2026-07-28"):
                await ch.send(b'{"jsonrpc":"2.0","id":"p","method":"ping"}')
                assert json.loads(await ch.receive()) == {"jsonrpc": "2.0", "id": "p", "result": {}}
