"""In-process byte pipes: one-way byte streams between two tasks of one process.

What :func:`trio.testing.memory_stream_one_way_pair` and
:func:`~trio.testing.lockstep_stream_one_way_pair` do, for library code:
``trio.testing`` imports pytest when it is installed, which cost every HTTP
process ~60 ms at import (the ASGI bridge, :mod:`.asgi`, is imported with
:mod:`mcp_ref.session.http`) and loads test machinery into an application.

- :func:`pipe` buffers without limit: ``send_all`` never waits for the reader.
- ``pipe(lockstep=True)``: ``send_all`` returns once the reader has taken every
  byte, so a slow reader slows the writer as a socket would.

Closing the sending end is EOF for the reader (``receive_some`` returns
``b""`` once the buffer is drained); closing the receiving end makes the writer's
``send_all`` raise :class:`trio.BrokenResourceError`. Each end is used by one
task at a time (:class:`trio.BusyResourceError` otherwise), and every call is a
checkpoint, as trio's streams are.
"""

from __future__ import annotations

import operator

import trio

__all__ = ["PipeReceiveStream", "PipeSendStream", "pipe", "pipe_pair"]


class _Pipe:
    __slots__ = ("buffer", "consumed", "lockstep", "lot", "reading", "receive_closed", "send_closed")

    def __init__(self, lockstep: bool) -> None:
        self.buffer = bytearray()
        #: bytes the reader has taken so far (a lockstep writer waits for its own to be taken)
        self.consumed = 0
        self.lockstep = lockstep
        self.send_closed = False
        self.receive_closed = False
        #: a reader waits for data (a lockstep writer's send would not block)
        self.reading = False
        #: both ends wait here (a change of the buffer or of either end's state wakes them)
        self.lot = trio.lowlevel.ParkingLot()


class PipeSendStream(trio.abc.SendStream):
    """The writing end of a :func:`pipe`."""

    def __init__(self, shared: _Pipe) -> None:
        self._pipe = shared
        self._busy = False

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        shared = self._pipe
        if self._busy:
            raise trio.BusyResourceError("another task is writing to this pipe")
        self._busy = True
        try:
            if shared.send_closed:
                raise trio.ClosedResourceError("this end of the pipe is closed")
            if shared.receive_closed:
                raise trio.BrokenResourceError("the reading end of the pipe is closed")
            if data:
                shared.buffer += data
                shared.lot.unpark_all()
            if not shared.lockstep:
                await trio.lowlevel.checkpoint()
                return
            await self._drained(shared.consumed + len(shared.buffer))
        finally:
            self._busy = False

    async def _drained(self, until: int) -> None:
        """Wait until the reader has taken the bytes up to ``until``; a checkpoint.
        BrokenResourceError if it closed its end first."""
        shared = self._pipe
        if shared.consumed >= until:
            await trio.lowlevel.checkpoint()
            return
        while shared.consumed < until and not shared.receive_closed and not shared.send_closed:
            await shared.lot.park()
        if shared.consumed < until:
            if shared.send_closed:
                raise trio.ClosedResourceError("this end of the pipe was closed while writing")
            raise trio.BrokenResourceError("the reading end of the pipe closed before it read everything")

    async def wait_send_all_might_not_block(self) -> None:
        shared = self._pipe
        if self._busy:
            raise trio.BusyResourceError("another task is writing to this pipe")
        self._busy = True
        try:
            if shared.send_closed:
                raise trio.ClosedResourceError("this end of the pipe is closed")
            if not shared.lockstep or shared.reading or shared.receive_closed:
                await trio.lowlevel.checkpoint()
                return
            # lockstep: a send would wait for a reader; wait for one to be there
            while not shared.reading and not shared.receive_closed and not shared.send_closed:
                await shared.lot.park()
            if shared.send_closed:
                raise trio.ClosedResourceError("this end of the pipe was closed while waiting")
        finally:
            self._busy = False

    async def aclose(self) -> None:
        self._pipe.send_closed = True
        self._pipe.lot.unpark_all()
        await trio.lowlevel.checkpoint()


class PipeReceiveStream(trio.abc.ReceiveStream):
    """The reading end of a :func:`pipe`."""

    def __init__(self, shared: _Pipe) -> None:
        self._pipe = shared
        self._busy = False

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        shared = self._pipe
        if max_bytes is not None:
            max_bytes = operator.index(max_bytes)  # (TypeError for 1.5)
            if max_bytes < 1:
                raise ValueError("max_bytes must be at least 1")
        if self._busy:
            raise trio.BusyResourceError("another task is reading from this pipe")
        self._busy = True
        try:
            if shared.receive_closed:
                raise trio.ClosedResourceError("this end of the pipe is closed")
            if shared.buffer or shared.send_closed:
                await trio.lowlevel.checkpoint()
            while not shared.buffer and not shared.send_closed and not shared.receive_closed:
                shared.reading = True
                shared.lot.unpark_all()  # (a lockstep writer waiting for a reader)
                try:
                    await shared.lot.park()
                finally:
                    shared.reading = False
            if shared.receive_closed:
                raise trio.ClosedResourceError("this end of the pipe was closed while reading")
            size = len(shared.buffer) if max_bytes is None else min(max_bytes, len(shared.buffer))
            data = bytes(shared.buffer[:size])
            del shared.buffer[:size]
            shared.consumed += size
            if data:
                shared.lot.unpark_all()  # a lockstep writer waits for the buffer to drain
            return data
        finally:
            self._busy = False

    async def aclose(self) -> None:
        shared = self._pipe
        shared.receive_closed = True
        shared.buffer.clear()
        shared.lot.unpark_all()
        await trio.lowlevel.checkpoint()


def pipe(*, lockstep: bool = False) -> tuple[PipeSendStream, PipeReceiveStream]:
    """A one-way byte stream: ``(send end, receive end)``."""
    shared = _Pipe(lockstep)
    return PipeSendStream(shared), PipeReceiveStream(shared)


PipeStream = trio.StapledStream[PipeSendStream, PipeReceiveStream]


def pipe_pair() -> tuple[PipeStream, PipeStream]:
    """Two ends of a two-way byte stream, each direction a buffering :func:`pipe`."""
    a_send, b_receive = pipe()
    b_send, a_receive = pipe()
    return trio.StapledStream(a_send, a_receive), trio.StapledStream(b_send, b_receive)
