"""basic/transports#stdio: newline-delimited JSON-RPC over a process's stdin/stdout.

Every transport hands the session a ``trio.abc.Channel[bytes]`` of whole
messages:

* ``send(msg)`` writes one encoded message (compact JSON, no newline; one is
  refused with ValueError before anything is written) -- the framer adds "\\n";
* ``receive()`` returns one message without its line ending (a trailing "\\r"
  is dropped, empty lines are skipped); ``trio.EndOfChannel`` at clean EOF (a
  last line without a newline is delivered first). A line longer than
  ``max_message_size`` is skipped whole, without being buffered, and
  ``receive()`` raises :class:`~mcp_ref.errors.MessageTooLarge`; the channel
  stays usable;
* invalid JSON or UTF-8 is not the transport's business: the engine answers it.

The sans-IO :class:`LineFramer` does the framing; :class:`StdioMessageChannel`
drives it over any trio byte streams. :func:`open_stdio_server_channel` is the
server side (this process's stdin/stdout, guarded against stray prints);
:func:`open_process_channel` the client side (launch and shut down a server).
"""

import logging
import os
import signal
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

import attrs
import trio

from ...errors import MessageTooLarge
from ._nursery import block_nursery

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "LineFramer",
    "Oversized",
    "StdioMessageChannel",
    "ProcessChannel",
    "open_stdio_server_channel",
    "open_process_channel",
]

DEFAULT_MAX_MESSAGE_SIZE = 4 * 1024 * 1024
_READ_SIZE = 65536

stderr_log = logging.getLogger("mcp_ref.stdio.stderr")
log = logging.getLogger("mcp_ref.stdio")


@attrs.frozen
class Oversized:
    """A line longer than the limit was skipped; ``size`` is its length."""

    size: int


class LineFramer:
    """Splits a byte stream into lines, bounded in memory (sans-IO)."""

    def __init__(self, max_line: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if max_line < 1:
            raise ValueError("max_line must be positive")
        self.max_line = max_line
        self._buf = bytearray()
        self._start = 0  # first unconsumed byte
        self._scan = 0  # no newline before this index
        self._skipping: int | None = None  # bytes of an oversized line skipped so far

    def feed(self, data: bytes | bytearray) -> None:
        if self._start and self._start >= len(self._buf) // 2:
            del self._buf[: self._start]
            self._scan -= self._start
            self._start = 0
        self._buf += data

    def next_line(self) -> bytes | Oversized | None:
        """The next complete line, an :class:`Oversized` marker, or None (feed more)."""
        while True:
            buf = self._buf
            if self._skipping is not None:
                idx = buf.find(b"\n", self._start)
                if idx < 0:
                    self._skipping += len(buf) - self._start
                    self._reset()
                    return None
                size = self._skipping + idx - self._start
                self._start = self._scan = idx + 1
                self._skipping = None
                return Oversized(size)
            idx = buf.find(b"\n", self._scan)
            if idx < 0:
                if len(buf) - self._start > self.max_line:
                    # [basic/transports#stdio] a message must fit: skip this line whole
                    self._skipping = len(buf) - self._start
                    self._reset()
                    continue
                self._scan = len(buf)
                return None
            line_end = idx - 1 if idx > self._start and buf[idx - 1] == 0x0D else idx
            size = line_end - self._start
            line = bytes(buf[self._start : line_end])
            self._start = self._scan = idx + 1
            if size > self.max_line:
                return Oversized(size)
            if size == 0:
                continue  # empty lines carry nothing
            return line

    def end(self) -> bytes | Oversized | None:
        """At EOF: the last line if it had no newline."""
        if self._skipping is not None:
            size = self._skipping + len(self._buf) - self._start
            self._skipping = None
            self._reset()
            return Oversized(size)
        rest = bytes(self._buf[self._start :]).rstrip(b"\r")
        self._reset()
        if not rest:
            return None
        return rest if len(rest) <= self.max_line else Oversized(len(rest))

    def _reset(self) -> None:
        self._buf.clear()
        self._start = self._scan = 0


class StdioMessageChannel(trio.abc.Channel[bytes]):
    """Newline-delimited messages over a pair of trio byte streams."""

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        self._framer = LineFramer(max_message_size)
        self._send_lock = trio.StrictFIFOLock()
        self._eof = False
        self.max_message_size = max_message_size

    async def send(self, value: bytes) -> None:
        if b"\n" in value or b"\r" in value:
            # [basic/transports#stdio] messages are delimited by newlines and must not contain them
            raise ValueError("an MCP message on stdio must not contain a newline")
        async with self._send_lock:
            await self._send_stream.send_all(value + b"\n")

    async def receive(self) -> bytes:
        while True:
            item = self._framer.next_line()
            if item is None and self._eof:
                raise trio.EndOfChannel
            if item is None:
                data = await self._receive_stream.receive_some(_READ_SIZE)
                if data:
                    self._framer.feed(data)
                    continue
                self._eof = True
                item = self._framer.end()
                if item is None:
                    raise trio.EndOfChannel
            if type(item) is Oversized:
                raise MessageTooLarge(item.size, self._framer.max_line)
            assert isinstance(item, bytes)
            return item

    async def aclose(self) -> None:
        try:
            await self._send_stream.aclose()
        finally:
            await self._receive_stream.aclose()


# -- server side ------------------------------------------------------------------------


@asynccontextmanager
async def open_stdio_server_channel(
    *, guard: bool = True, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> AsyncIterator[StdioMessageChannel]:
    """This process's stdin/stdout as an MCP channel.

    [basic/transports#stdio] the server writes nothing but MCP messages to
    stdout. With ``guard`` (the default) the protocol gets private copies of
    fds 0 and 1; fd 1 and ``sys.stdout`` then point at stderr (so ``print`` or
    a child process writing to stdout lands in the log, not in the stream) and
    fd 0 and ``sys.stdin`` at /dev/null (so nothing can steal protocol bytes).
    Everything is restored on exit. ``guard=False`` leaves them alone.
    """
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    saved: tuple[int, int, Any, Any] | None = None
    if guard:
        sys.stdout.flush()
        saved = (os.dup(0), os.dup(1), sys.stdin, sys.stdout)
        os.dup2(2, 1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        sys.stdout = sys.stderr
        sys.stdin = open(os.devnull)
    channel = StdioMessageChannel(
        trio.lowlevel.FdStream(proto_out), trio.lowlevel.FdStream(proto_in), max_message_size=max_message_size
    )
    try:
        yield channel
    finally:
        with trio.CancelScope(shield=True):
            await channel.aclose()
        if saved is not None:
            fd0, fd1, stdin, stdout = saved
            sys.stdin.close()
            sys.stdin, sys.stdout = stdin, stdout
            os.dup2(fd0, 0)
            os.dup2(fd1, 1)
            os.close(fd0)
            os.close(fd1)


# -- client side ---------------------------------------------------------------------------

StderrOption = Literal["inherit", "capture", "discard"] | Callable[[str], None]


class ProcessChannel(StdioMessageChannel):
    """A channel to a server subprocess; ``process`` is the trio Process."""

    def __init__(self, process: trio.Process, *, max_message_size: int, stderr_keep: int = 1000) -> None:
        assert process.stdin is not None and process.stdout is not None
        super().__init__(process.stdin, process.stdout, max_message_size=max_message_size)
        self.process = process
        #: the last lines the server wrote to stderr (with ``stderr="capture"``)
        self.stderr_lines: deque[str] = deque(maxlen=stderr_keep)


@asynccontextmanager
async def open_process_channel(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: StderrOption = "inherit",
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    shutdown_timeouts: tuple[float, float] = (2.0, 2.0),
) -> AsyncIterator[ProcessChannel]:
    """Launch ``command args`` as an MCP server on stdio.

    ``env`` replaces the environment when given (None inherits ours).
    ``stderr``: "inherit" (the server's stderr is ours), "capture" (each line
    logged on ``mcp_ref.stdio.stderr`` and kept in ``channel.stderr_lines``),
    "discard", or a callable receiving each line.

    Leaving the block -- normally, by an exception, or by cancellation --
    shuts the server down as basic/lifecycle#shutdown says: close its stdin,
    wait ``shutdown_timeouts[0]``, SIGTERM, wait ``shutdown_timeouts[1]``,
    SIGKILL. No process is left behind.
    """
    close_wait, term_wait = shutdown_timeouts
    if not (close_wait >= 0 and term_wait >= 0):
        raise ValueError("shutdown timeouts must not be negative")
    piped = stderr == "capture" or callable(stderr)
    stderr_fd: Any = subprocess.PIPE if piped else (subprocess.DEVNULL if stderr == "discard" else None)
    try:
        process = await trio.lowlevel.open_process(
            [command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_fd,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
    except OSError as e:
        raise OSError(e.errno, f"cannot launch MCP server {command!r}: {e.strerror}") from e
    channel = ProcessChannel(process, max_message_size=max_message_size)
    try:
        async with block_nursery() as (nursery, body):
            if piped:
                nursery.start_soon(_pump_stderr, process, channel, stderr)
            try:
                yield channel
            except BaseException as exc:
                body.exc = exc
                raise
            finally:
                await _shutdown(process, channel, close_wait, term_wait)
                nursery.cancel_scope.cancel(reason="server process shut down")
    finally:
        if process.returncode is None:  # only reachable if shutdown itself failed
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()


async def _shutdown(process: trio.Process, channel: ProcessChannel, close_wait: float, term_wait: float) -> None:
    """[basic/lifecycle#15] close stdin, wait, SIGTERM, wait, SIGKILL -- on every exit path."""
    with trio.CancelScope(shield=True):
        try:
            await channel.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass  # the server is already gone
        with trio.move_on_after(close_wait):
            await process.wait()
            return
        log.info("server %s did not exit %gs after stdin closed: SIGTERM", process.pid, close_wait)
        process.send_signal(signal.SIGTERM)
        with trio.move_on_after(term_wait):
            await process.wait()
            return
        log.warning("server %s ignored SIGTERM for %gs: SIGKILL", process.pid, term_wait)
        process.kill()
        await process.wait()


async def _pump_stderr(process: trio.Process, channel: ProcessChannel, sink: StderrOption) -> None:
    assert process.stderr is not None
    framer = LineFramer(max_line=64 * 1024)
    while True:
        data = await process.stderr.receive_some(_READ_SIZE)
        if data:
            framer.feed(data)
        while True:
            item = framer.next_line() if data else framer.end()
            if item is None:
                break
            text = f"<{item.size} bytes skipped>" if isinstance(item, Oversized) else item.decode("utf-8", "replace")
            if callable(sink):
                sink(text)
            else:
                channel.stderr_lines.append(text)
                stderr_log.info("[server %s] %s", process.pid, text)
            if not data:
                break
        if not data:
            return
