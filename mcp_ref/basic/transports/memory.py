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

A :func:`memory_channel_pair` with a buffer also has ``send_nowait`` and
``notify_send_ready``, so a session writes to it with no lock and no cancel
scope, and a writer that finds the buffer full waits in the session's own
queue (see the contract).

:func:`memory_channel_pair` passes message objects through trio memory
channels (the fast path). :func:`framed_memory_pair` runs the stdio framing
(:class:`~mcp_ref.basic.transports.stdio.StdioMessageChannel`) over in-memory
byte streams, so the framing is exercised without a process.
"""

from collections.abc import Callable

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
        #: the other end of a memory_channel_pair (None: built from channels of the caller's own)
        self._peer: MemoryMessageChannel | None = None
        #: called when a send_nowait that raised WouldBlock may now go through or fail (notify_send_ready)
        self._send_ready: Callable[[], None] | None = None
        #: a send_nowait raised WouldBlock since _send_ready was last called
        self._refused = False

    async def send(self, value: bytes) -> None:
        await self._send.send(_checked(value))

    def send_nowait(self, value: bytes) -> None:
        """Take the message at once, or raise ``trio.WouldBlock`` (the buffer is full)."""
        try:
            self._send.send_nowait(_checked(value))
        except trio.WouldBlock:
            self._refused = True
            raise

    def notify_send_ready(self, callback: Callable[[], None]) -> bool:
        """Call ``callback()`` when a ``send_nowait`` that raised ``trio.WouldBlock``
        may now succeed or fail: once the other end has taken a message from the
        buffer (its ``receive()`` calls it, before returning the message), and
        whenever either end is closed. True if this end can (the two ends of a
        :func:`memory_channel_pair` with a buffer); False otherwise, and nothing is
        called. With no buffer a message passes only to a receiver already waiting,
        which a callback cannot tell: ``send()`` is the way there.
        """
        if self._peer is None or self._send.statistics().max_buffer_size < 1:
            return False
        self._send_ready = callback
        return True

    async def receive(self) -> bytes:
        value = await self._receive.receive()
        peer = self._peer
        if peer is not None and peer._refused and peer._send_ready is not None:
            # a message left the full buffer: the writers waiting for room may go on
            peer._refused = False
            peer._send_ready()
        limit = self.max_message_size
        if limit is not None and len(value) > limit:
            raise too_large(len(value), limit, value)
        return value

    async def send_eof(self) -> None:
        """Close the sending direction only: the peer's ``receive()`` ends; ours still works."""
        await self._send.aclose()
        self._wake_writers()

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()
        self._wake_writers()

    def _wake_writers(self) -> None:
        # writers waiting for room on either side must now fail (closed here, broken there)
        for end in (self, self._peer):
            if end is not None and end._send_ready is not None:
                end._send_ready()


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
    a = MemoryMessageChannel(a_send, a_receive, max_message_size=max_message_size)
    b = MemoryMessageChannel(b_send, b_receive, max_message_size=max_message_size)
    a._peer, b._peer = b, a
    return a, b


def framed_memory_pair(
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> tuple[StdioMessageChannel, StdioMessageChannel]:
    """Two ends that frame messages exactly as stdio does, over in-memory byte streams.

    The byte streams buffer without limit (:func:`._pipes.pipe_pair`), so
    ``send()`` never waits for the receiver.
    """
    from ._pipes import pipe_pair

    left, right = pipe_pair()
    return (
        StdioMessageChannel(left.send_stream, left.receive_stream, max_message_size=max_message_size),
        StdioMessageChannel(right.send_stream, right.receive_stream, max_message_size=max_message_size),
    )
