"""The in-memory transports keep the channel contract every transport keeps."""

import re
from collections.abc import Callable
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.basic.transports.memory import MemoryMessageChannel, framed_memory_pair, memory_channel_pair
from mcp_ref.basic.transports.stdio import StdioMessageChannel
from mcp_ref.errors import MessageTooLarge

from .conftest import ROOT

Pair = tuple[MemoryMessageChannel, MemoryMessageChannel] | tuple[StdioMessageChannel, StdioMessageChannel]
PAIRS: dict[str, Callable[[int], Pair]] = {
    "memory": lambda limit: memory_channel_pair(max_message_size=limit),
    "framed": lambda limit: framed_memory_pair(max_message_size=limit),
}


@pytest.fixture(params=sorted(PAIRS))
def make_pair(request: pytest.FixtureRequest) -> Callable[[int], Pair]:
    factory: Callable[[int], Pair] = PAIRS[request.param]
    return factory


@pytest.mark.req("basic/transports#69", "basic/transports#70")
async def test_messages_arrive_whole_and_in_order_both_ways(make_pair: Callable[[int], Pair]) -> None:
    a, b = make_pair(1024)
    messages = [b'{"jsonrpc":"2.0","method":"ping","id":%d}' % i for i in range(20)]
    for msg in messages:
        await a.send(msg)
    assert [await b.receive() for _ in messages] == messages
    await b.send('{"text":"h\u00e9llo \U0001f600"}'.encode())
    assert await a.receive() == '{"text":"h\u00e9llo \U0001f600"}'.encode()


@pytest.mark.req("basic/transports#70")
async def test_newlines_are_refused_before_sending(make_pair: Callable[[int], Pair]) -> None:
    a, b = make_pair(1024)
    for bad in (b'{"a":\n1}', b'{"a":1}\r'):
        with pytest.raises(ValueError, match="newline"):
            await a.send(bad)
    await a.send(b"{}")
    assert await b.receive() == b"{}"  # nothing of the refused messages went out


async def test_closing_one_end_ends_the_other(make_pair: Callable[[int], Pair]) -> None:
    a, b = make_pair(1024)
    await a.send(b'{"last":1}')
    await a.aclose()
    assert await b.receive() == b'{"last":1}'  # what was under way still arrives
    with pytest.raises(trio.EndOfChannel):
        await b.receive()
    with pytest.raises(trio.BrokenResourceError):
        await b.send(b"{}")
    with pytest.raises(trio.ClosedResourceError):
        await a.send(b"{}")
    with pytest.raises(trio.ClosedResourceError):
        await a.receive()


async def test_send_eof_closes_one_direction(make_pair: Callable[[int], Pair]) -> None:
    a, b = make_pair(1024)
    await a.send_eof()
    with pytest.raises(trio.EndOfChannel):
        await b.receive()
    await b.send(b"{}")
    assert await a.receive() == b"{}"


async def test_an_oversized_message_is_reported_and_the_channel_recovers(make_pair: Callable[[int], Pair]) -> None:
    a, b = make_pair(16)
    await a.send(b'{"x":"' + b"y" * 100 + b'"}')
    await a.send(b'{"ok":1}')
    with pytest.raises(MessageTooLarge) as info:
        await b.receive()
    assert (info.value.size, info.value.limit) == (108, 16)
    assert await b.receive() == b'{"ok":1}'


async def test_a_receiver_waiting_is_woken_by_a_send(make_pair: Callable[[int], Pair]) -> None:
    a, b = make_pair(1024)
    got: list[bytes] = []

    async def receiver() -> None:
        got.append(await b.receive())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(receiver)
        await trio.testing.wait_all_tasks_blocked()
        assert got == []
        await a.send(b"{}")
    assert got == [b"{}"]


async def test_memory_pair_applies_backpressure() -> None:
    a, b = memory_channel_pair(max_buffer=1)
    await a.send(b"1")
    sent = trio.Event()

    async def second() -> None:
        await a.send(b"2")
        sent.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(second)
        await trio.testing.wait_all_tasks_blocked()
        assert not sent.is_set()  # the buffer of one is full
        assert await b.receive() == b"1"
        await sent.wait()
    assert await b.receive() == b"2"


async def test_send_nowait_takes_a_message_at_once_or_not_at_all() -> None:
    # what the session uses to write without holding its lock across a schedule point
    a, b = memory_channel_pair(max_buffer=1)
    a.send_nowait(b"1")
    with pytest.raises(trio.WouldBlock):
        a.send_nowait(b"2")  # the buffer of one is full: not taken
    with pytest.raises(ValueError):
        a.send_nowait(b'{"a":\n1}')  # the same refusal as send()
    assert await b.receive() == b"1"
    buf = bytearray(b"3")
    careless: Any = buf
    a.send_nowait(careless)
    buf[:] = b"x"
    assert await b.receive() == b"3"
    await b.aclose()
    with pytest.raises(trio.BrokenResourceError):
        a.send_nowait(b"4")
    await a.aclose()
    with pytest.raises(trio.ClosedResourceError):
        a.send_nowait(b"5")


async def test_notify_send_ready_calls_back_once_room_is_made_after_a_refusal() -> None:
    # how the session learns when the writes waiting in its own queue may go on
    a, b = memory_channel_pair(max_buffer=1)
    calls: list[str] = []
    assert a.notify_send_ready(lambda: calls.append("a"))
    assert b.notify_send_ready(lambda: calls.append("b"))
    a.send_nowait(b"1")
    assert await b.receive() == b"1"
    assert calls == []  # nothing was refused: nobody waits
    a.send_nowait(b"2")
    with pytest.raises(trio.WouldBlock):
        a.send_nowait(b"3")
    assert calls == []
    assert await b.receive() == b"2"
    assert calls == ["a"]  # called before receive() returned, when the buffer had room
    a.send_nowait(b"3")
    assert await b.receive() == b"3"
    assert calls == ["a"]  # once per refusal
    b.send_nowait(b"4")
    with pytest.raises(trio.WouldBlock):
        b.send_nowait(b"5")
    await b.aclose()  # either end closing: a send may now fail (b's own, a's: broken)
    assert calls == ["a", "b", "a"]
    with pytest.raises(trio.BrokenResourceError):
        a.send_nowait(b"6")


async def test_notify_send_ready_needs_a_paired_buffered_channel() -> None:
    # with no buffer a message passes only to a receiver already waiting, which a callback
    # cannot tell; ends built from the caller's own channels have no peer to call it
    unbuffered, _ = memory_channel_pair(max_buffer=0)
    assert not unbuffered.notify_send_ready(lambda: None)
    send, receive = trio.open_memory_channel[bytes](1)
    assert not MemoryMessageChannel(send, receive).notify_send_ready(lambda: None)


async def test_memory_pair_has_no_size_limit_unless_asked() -> None:
    a, b = memory_channel_pair()
    big = b"[" + b"0," * (5 * 1024 * 1024) + b"0]"
    await a.send(big)
    assert await b.receive() == big
    with pytest.raises(ValueError):
        memory_channel_pair(max_message_size=0)


async def test_memory_pair_copies_a_mutable_buffer() -> None:
    a, b = memory_channel_pair()
    buf = bytearray(b'{"a":1}')
    careless: Any = buf  # typed as bytes, but a caller may pass a buffer it reuses
    await a.send(careless)
    buf[:] = b"changed"
    assert await b.receive() == b'{"a":1}'


@pytest.mark.req("basic/transports#71")
def test_the_memory_transport_is_documented() -> None:
    note = (ROOT / "spec_notes" / "basic" / "transports.md").read_text()
    section = re.search(r"^## In-memory.*?(?=^## |\Z)", note, re.M | re.S)
    assert section is not None, "spec_notes/basic/transports.md has no In-memory section"
    for name in ("memory_channel_pair", "framed_memory_pair", "EndOfChannel", "BrokenResourceError"):
        assert name in section.group(0), name
