"""In-memory transports: two connected message channels in one process.

A custom transport in the sense of basic/transports#custom-transports: for
tests, embedding a server in the same process as its client, and
benchmarks. Both pairs keep the contract every mcp_ref transport keeps (see
:mod:`mcp_ref.basic.transports`):

* a message with "\\n" or "\\r" is refused (ValueError) before it is sent;
* closing one end makes the other end's ``receive()`` raise
  ``trio.EndOfChannel`` (after the messages already under way) and its
  ``send()`` raise ``trio.BrokenResourceError``; the closed end itself raises
  ``trio.ClosedResourceError``;
* a message over the receiver's ``max_message_size`` makes ``receive()``
  raise :class:`~mcp_ref.errors.MessageTooLarge`; the channel stays usable.

:func:`memory_channel_pair` passes message objects through trio memory
channels (the fast path). :func:`framed_memory_pair` runs the stdio framing
(:class:`~mcp_ref.basic.transports.stdio.StdioMessageChannel`) over in-memory
byte streams, so the framing is exercised without a process.
"""

import trio

from .stdio import DEFAULT_MAX_MESSAGE_SIZE, StdioMessageChannel, frame_message, too_large

__all__ = ["DEFAULT_MAX_BUFFER", "MemoryMessageChannel", "memory_channel_pair", "framed_memory_pair"]

#: Messages that may wait, per direction, before ``send()`` blocks.
DEFAULT_MAX_BUFFER = 1024


class MemoryMessageChannel(trio.abc.Channel[bytes]):
    """One end of a :func:`memory_channel_pair`."""

    def __init__(
        self,
        send_channel: trio.MemorySendChannel[bytes],
        receive_channel: trio.MemoryReceiveChannel[bytes],
        *,
        max_message_size: int | None = None,
    ) -> None:
        self._send = send_channel
        self._receive = receive_channel
        self.max_message_size = max_message_size

    async def send(self, value: bytes) -> None:
        await self._send.send(_checked(value))

    def send_nowait(self, value: bytes) -> None:
        """Take the message at once, or raise ``trio.WouldBlock`` (the buffer is full)."""
        self._send.send_nowait(_checked(value))

    async def receive(self) -> bytes:
        value = await self._receive.receive()
        limit = self.max_message_size
        if limit is not None and len(value) > limit:
            raise too_large(len(value), limit, value)
        return value

    async def send_eof(self) -> None:
        """Close the sending direction only: the peer's ``receive()`` ends; ours still works."""
        await self._send.aclose()

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()


def _checked(value: bytes) -> bytes:
    # the same refusal as on stdio, so a test on memory catches what would break stdio
    if b"\n" in value or b"\r" in value:
        frame_message(value)  # raises the same ValueError stdio would
    if type(value) is not bytes:
        value = bytes(value)  # the receiver must not see later changes to a buffer
    return value


def memory_channel_pair(
    max_buffer: int | float = DEFAULT_MAX_BUFFER, *, max_message_size: int | None = None
) -> tuple[MemoryMessageChannel, MemoryMessageChannel]:
    """Two connected ends.

    ``max_buffer`` messages may wait in each direction before ``send()``
    blocks (``math.inf`` for no limit; 0 makes every send wait for the
    receiver). ``max_message_size`` (None: no limit) applies to what each end
    receives.
    """
    if max_message_size is not None and max_message_size < 1:
        raise ValueError(f"max_message_size must be at least 1, not {max_message_size}")
    a_send, b_receive = trio.open_memory_channel[bytes](max_buffer)
    b_send, a_receive = trio.open_memory_channel[bytes](max_buffer)
    return (
        MemoryMessageChannel(a_send, a_receive, max_message_size=max_message_size),
        MemoryMessageChannel(b_send, b_receive, max_message_size=max_message_size),
    )


def framed_memory_pair(
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> tuple[StdioMessageChannel, StdioMessageChannel]:
    """Two ends that frame messages exactly as stdio does, over in-memory byte streams.

    The byte streams buffer without limit (``trio.testing.memory_stream_pair``),
    so ``send()`` never waits for the receiver.
    """
    import trio.testing  # here, not at import: trio.testing pulls in pytest when it is installed

    left, right = trio.testing.memory_stream_pair()
    return (
        StdioMessageChannel(left.send_stream, left.receive_stream, max_message_size=max_message_size),
        StdioMessageChannel(right.send_stream, right.receive_stream, max_message_size=max_message_size),
    )
