"""In-memory transports: two connected message channels in one process.

For tests, in-process embedding and benchmarks. Same contract as every
transport (``trio.abc.Channel[bytes]`` of whole messages, see
:mod:`mcp_ref.basic.transports.stdio`): closing one end makes the other's
``receive`` raise ``trio.EndOfChannel`` and its ``send`` raise
``trio.BrokenResourceError``.
"""

import trio
import trio.testing

from .stdio import DEFAULT_MAX_MESSAGE_SIZE, StdioMessageChannel

__all__ = ["MemoryMessageChannel", "memory_channel_pair", "framed_memory_pair"]


class MemoryMessageChannel(trio.abc.Channel[bytes]):
    """One end of a :func:`memory_channel_pair`."""

    def __init__(self, send: trio.MemorySendChannel[bytes], receive: trio.MemoryReceiveChannel[bytes]) -> None:
        self._send = send
        self._receive = receive

    async def send(self, value: bytes) -> None:
        await self._send.send(value)

    async def receive(self) -> bytes:
        return await self._receive.receive()

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()


def memory_channel_pair(max_buffer: int | float = 1024) -> tuple[MemoryMessageChannel, MemoryMessageChannel]:
    """Two connected ends; ``max_buffer`` messages may wait in each direction."""
    a_send, b_receive = trio.open_memory_channel[bytes](max_buffer)
    b_send, a_receive = trio.open_memory_channel[bytes](max_buffer)
    return MemoryMessageChannel(a_send, a_receive), MemoryMessageChannel(b_send, b_receive)


def framed_memory_pair(
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> tuple[StdioMessageChannel, StdioMessageChannel]:
    """Two ends that frame messages as stdio does, over in-memory byte streams."""
    left, right = trio.testing.memory_stream_pair()
    return (
        StdioMessageChannel(left, left, max_message_size=max_message_size),
        StdioMessageChannel(right, right, max_message_size=max_message_size),
    )
