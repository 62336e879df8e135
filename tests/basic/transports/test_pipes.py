"""The library's own in-process byte pipes (what trio.testing's memory streams do, without
importing trio.testing, which pulls in pytest): checked with trio's own stream conformance
suite, and the lockstep writer's wait."""

import pytest
import trio
import trio.testing

from mcp_ref.basic.transports._pipes import pipe, pipe_pair


async def test_a_buffering_pipe_is_a_conforming_one_way_stream() -> None:
    async def make() -> tuple[trio.abc.SendStream, trio.abc.ReceiveStream]:
        return pipe()

    await trio.testing.check_one_way_stream(make, None)


async def test_a_lockstep_pipe_is_a_conforming_one_way_stream_whose_writer_waits() -> None:
    async def make() -> tuple[trio.abc.SendStream, trio.abc.ReceiveStream]:
        return pipe(lockstep=True)

    await trio.testing.check_one_way_stream(make, make)


async def test_a_pipe_pair_is_a_conforming_two_way_stream() -> None:
    async def make() -> tuple[trio.abc.Stream, trio.abc.Stream]:
        return pipe_pair()

    await trio.testing.check_two_way_stream(make, None)


async def test_a_lockstep_writer_returns_once_the_reader_took_every_byte() -> None:
    send, receive = pipe(lockstep=True)
    done: list[str] = []

    async def write() -> None:
        await send.send_all(b"abcdef")
        done.append("sent")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(write)
        await trio.testing.wait_all_tasks_blocked()
        assert done == []  # nothing read yet
        assert await receive.receive_some(4) == b"abcd"
        await trio.testing.wait_all_tasks_blocked()
        assert done == []  # two bytes still unread
        assert await receive.receive_some() == b"ef"
        await trio.testing.wait_all_tasks_blocked()
        assert done == ["sent"]


async def test_a_buffering_writer_never_waits_and_the_reader_sees_eof_after_the_data() -> None:
    send, receive = pipe()
    with trio.move_on_after(1) as waited:  # (never reached: nothing blocks)
        for _ in range(1000):
            await send.send_all(b"x" * 1000)
    assert not waited.cancelled_caught
    await send.aclose()
    received = bytearray()
    while chunk := await receive.receive_some(65536):
        received += chunk
    assert len(received) == 1_000_000 and await receive.receive_some() == b""


async def test_closing_the_reading_end_breaks_a_waiting_lockstep_writer() -> None:
    send, receive = pipe(lockstep=True)
    async with trio.open_nursery() as nursery:

        async def close_soon() -> None:
            await trio.testing.wait_all_tasks_blocked()
            await receive.aclose()

        nursery.start_soon(close_soon)
        with pytest.raises(trio.BrokenResourceError):
            await send.send_all(b"never read")
