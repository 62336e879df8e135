"""basic/transports#stdio: newline-delimited JSON-RPC over a process's stdin/stdout.

Every transport hands the session a ``trio.abc.Channel[bytes]`` of whole
messages (see :mod:`mcp_ref.basic.transports`). Here:

* ``send(msg)`` writes one encoded message followed by "\\n"; a message that
  contains "\\n" or "\\r" is refused with ValueError before anything is written;
* ``receive()`` returns one message without its line ending (a trailing "\\r"
  is dropped, empty lines are skipped), and raises ``trio.EndOfChannel`` at
  clean EOF (a last line without a newline is delivered first). A line longer
  than ``max_message_size`` is skipped whole, without being buffered, and
  ``receive()`` raises :class:`~mcp_ref.errors.MessageTooLarge`, with the kind
  and id its first bytes showed; the channel stays usable;
* invalid JSON or UTF-8 is not the transport's business: the engine answers it.

Three layers, from the bottom:

* :class:`LineFramer` and :func:`frame_message` -- the framing, sans-IO (no
  trio; plain bytes in, lines out);
* :class:`StdioMessageChannel` -- drives the framer over any trio byte streams;
* :func:`open_stdio_server_channel` (this process is the server, on its own
  stdin/stdout, guarded against stray output) and :func:`open_process_channel`
  (this process is the client: launch a server, shut it down properly).
"""

import errno
import json
import logging
import math
import os
import select
import signal
import stat
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal, Protocol, TypeAlias

import attrs
import trio

from ...errors import MessageTooLarge
from ._nursery import block_nursery

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_SHUTDOWN_TIMEOUTS",
    "LineFramer",
    "Oversized",
    "frame_message",
    "peek_envelope",
    "too_large",
    "StdioMessageChannel",
    "ProcessChannel",
    "StderrOption",
    "default_environment",
    "open_stdio_server_channel",
    "open_process_channel",
    "shutdown_process",
]

#: Longest message accepted by default (bytes, without the line ending).
DEFAULT_MAX_MESSAGE_SIZE = 4 * 1024 * 1024
#: (seconds to wait after closing the server's stdin, seconds to wait after SIGTERM).
DEFAULT_SHUTDOWN_TIMEOUTS = (2.0, 2.0)
_READ_SIZE = 65536
#: how long closing a stdio channel waits to write the rest of a line a cancelled send tore
FINISH_TORN_LINE_TIMEOUT = 1.0
_HEAD = 1024  # first bytes of an oversized message kept to read its id from
_STDERR_MAX_LINE = 64 * 1024
_POSIX = os.name == "posix"  # process groups and signals
#: the signal that cannot be ignored: Windows has no SIGKILL, and there
#: send_signal(SIGTERM) is TerminateProcess, already the hard stop
_HARD_KILL = signal.SIGKILL if _POSIX else signal.SIGTERM
_STDERR_DRAIN = 1.0  # how long to wait for the last stderr lines once the server has exited
_STDERR_TAIL = 5  # stderr lines quoted when the server went away by itself
_STDERR_QUOTE = 500  # characters of each of them
_GROUP_POLL = 0.02  # how often to look whether a server's process group is empty

stderr_log = logging.getLogger("mcp_ref.stdio.stderr")
log = logging.getLogger("mcp_ref.stdio")


# -- framing, sans-IO -------------------------------------------------------------------


def frame_message(message: bytes) -> bytes:
    """``message`` as one line on the wire: the message and "\\n".

    Raises ValueError if the message contains "\\n" or "\\r" (our encoder never
    produces them; raw control characters are escaped inside JSON strings).
    """
    if b"\n" in message or b"\r" in message:
        # [basic/transports#3] newlines delimit messages, so a message may not hold one -- transports#stdio
        raise ValueError("an MCP message on stdio must not contain a newline or carriage return")
    return message + b"\n"


@attrs.frozen
class Oversized:
    """A line longer than the limit was skipped whole; ``size`` is its length in bytes.

    ``head`` is its first bytes (at most 1 KiB), enough to read the id of most messages.
    """

    size: int
    head: bytes = attrs.field(default=b"", eq=False, repr=False)


_decoder = json.JSONDecoder()


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def peek_envelope(head: bytes) -> tuple[Literal["request", "response"] | None, str | int | None]:
    """What the first bytes of a JSON-RPC message say it is: (kind, id).

    Reads the top-level members in order while their values are complete in
    ``head``; a nested "id" is never mistaken for the message's. ``kind`` is
    "response" once a "result" or "error" member was seen, "request" once
    "method" and "id" were, else None; the id is None unless it was read whole.
    """
    text = head.decode("utf-8", "replace")
    keys: set[str] = set()
    rid: str | int | None = None
    i = _skip_ws(text, 0)
    if text[i : i + 1] == "{":
        i += 1
        while True:
            try:
                key, i = _decoder.raw_decode(text, _skip_ws(text, i))
            except ValueError:
                break
            i = _skip_ws(text, i)
            if type(key) is not str or text[i : i + 1] != ":":
                break
            keys.add(key)
            try:
                value, i = _decoder.raw_decode(text, _skip_ws(text, i + 1))
            except ValueError:
                break  # cut off by the end of head (or not JSON)
            if i >= len(text):
                break  # a number at the very end may have been cut short
            if key == "id" and type(value) in (str, int):
                rid = value
            i = _skip_ws(text, i)
            if text[i : i + 1] != ",":
                break
            i += 1
    if keys & {"result", "error"}:
        return "response", rid
    return ("request" if "method" in keys and rid is not None else None), rid


def too_large(size: int, limit: int, head: bytes) -> MessageTooLarge:
    """The error for a dropped message, with what its first bytes (up to 1 KiB of ``head``) say it was."""
    kind, rid = peek_envelope(head[:_HEAD])
    return MessageTooLarge(size, limit, kind=kind, request_id=rid)


class LineFramer:
    """Splits a byte stream into lines with bounded memory (sans-IO).

    ``feed(data)`` as bytes arrive, ``feed_eof()`` at the end, and call
    ``next_line()`` until it returns None. It yields each line without its
    "\\n" or "\\r\\n", skips empty lines, and yields :class:`Oversized` for a
    line longer than ``max_line`` -- such a line is dropped as it arrives,
    never held whole, so the buffer stays below ``max_line`` plus one chunk.
    After ``feed_eof()`` a last line without a newline is yielded too.

    Each byte is scanned for a newline once: the search resumes where the
    last one stopped, and consumed bytes are compacted away only when they
    make up half the buffer (amortised linear time).
    """

    def __init__(self, max_line: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if max_line < 1:
            raise ValueError(f"max_line must be at least 1, not {max_line}")
        self.max_line = max_line
        self._buf = bytearray()
        self._start = 0  # first byte not yet handed out
        self._scan = 0  # no newline in _buf[_start:_scan]
        self._skipped: int | None = None  # bytes of an oversized line dropped so far
        self._skipped_cr = False  # the last byte dropped was "\r"
        self._skipped_head = b""  # the first bytes of the oversized line being dropped
        self._eof = False

    @property
    def buffered(self) -> int:
        """Bytes held and not yet handed out (bounded by ``max_line`` + 1 + the last chunk fed)."""
        return len(self._buf) - self._start

    @property
    def at_eof(self) -> bool:
        """True once ``feed_eof()`` was called."""
        return self._eof

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        if self._eof:
            raise RuntimeError("LineFramer.feed() after feed_eof()")
        if self._start and self._start * 2 >= len(self._buf):
            del self._buf[: self._start]
            self._scan -= self._start
            self._start = 0
        self._buf += data

    def feed_eof(self) -> None:
        self._eof = True

    def next_line(self) -> bytes | Oversized | None:
        """The next line, an :class:`Oversized` marker, or None when more input is needed."""
        buf = self._buf
        while True:
            if self._skipped is not None:
                idx = buf.find(b"\n", self._start)
                if idx < 0:
                    if len(buf) > self._start:
                        self._skipped += len(buf) - self._start
                        self._skipped_cr = buf[-1] == 0x0D
                    self._clear()
                    if self._eof:
                        return self._end_skip()
                    return None
                self._skipped += idx - self._start
                if idx > self._start:
                    self._skipped_cr = buf[idx - 1] == 0x0D
                self._start = self._scan = idx + 1
                return self._end_skip()
            idx = buf.find(b"\n", self._scan)
            if idx < 0:
                pending = len(buf) - self._start
                if pending > self.max_line + 1:  # + 1: room for the "\r" of a "\r\n"
                    # longer than any message we accept: drop it as it arrives (our limit, see the note),
                    # all but its first bytes, where its id usually is
                    self._skipped = 0
                    self._skipped_head = bytes(buf[self._start : self._start + _HEAD])
                    continue
                if self._eof:
                    return self._last_line()
                self._scan = len(buf)
                return None
            start = self._start
            end = idx - 1 if idx > start and buf[idx - 1] == 0x0D else idx
            self._start = self._scan = idx + 1
            size = end - start
            if size > self.max_line:
                return Oversized(size, bytes(buf[start : start + _HEAD]))
            if size:
                return bytes(buf[start:end])
            # an empty line carries no message

    def _end_skip(self) -> Oversized:
        assert self._skipped is not None
        size = self._skipped - self._skipped_cr  # the size of the line without its "\r\n"
        self._skipped = None
        self._skipped_cr = False
        return Oversized(size, self._skipped_head)

    def _last_line(self) -> bytes | Oversized | None:
        rest = bytes(self._buf[self._start :])
        self._clear()
        if rest.endswith(b"\r"):
            rest = rest[:-1]
        if not rest:
            return None
        return Oversized(len(rest), rest[:_HEAD]) if len(rest) > self.max_line else rest

    def _clear(self) -> None:
        self._buf.clear()
        self._start = self._scan = 0


# -- the channel over trio byte streams ---------------------------------------------------

#: a write of at most this many bytes to a pipe is atomic (POSIX: PIPE_BUF >= 512; 4096 on Linux)
PIPE_BUF: int = getattr(select, "PIPE_BUF", 512)


def _atomic_pieces(stream: trio.abc.SendStream) -> bool:
    """Whether ``stream`` writes a piece of up to PIPE_BUF bytes whole or not at all: a
    pipe does (a file never blocks); a cancelled ``send_all`` of one then wrote none of it."""
    fd_stream = getattr(trio.lowlevel, "FdStream", None)  # not on Windows
    if fd_stream is None or not isinstance(stream, fd_stream):
        return False
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


class StdioMessageChannel(trio.abc.Channel[bytes]):
    """Newline-delimited messages over a trio send stream and receive stream.

    Safe for concurrent use: sends are serialised by a FIFO lock (each
    message goes out whole), and so are receives.

    A ``send()`` cancelled while its bytes were being written leaves part of
    a line on the wire. Over a pipe (or a file), the usual stdio case, the
    peer never sees that fragment: a line is written in pieces of at most
    ``PIPE_BUF`` bytes, which a pipe takes whole or not at all, so the channel
    knows exactly what was written, and the next ``send()`` first writes the
    rest of the torn line (the cancelled message then arrives whole, as if the
    send had finished); closing the channel first writes it too. Over other streams, which may take part of a piece,
    the next ``send()`` starts with "\\n" instead, so that its own message
    arrives intact (the peer sees the fragment as one invalid line).
    """

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
        self._receive_lock = trio.StrictFIFOLock()
        self._torn = False  # a cancelled send may have written part of a line (not over a pipe)
        #: over a pipe or a file: the rest of a line a cancelled send left half-written
        self._rest = b""
        self._atomic = _atomic_pieces(send_stream)
        self._send_closed = False
        self._closed = False
        self.max_message_size = max_message_size

    async def send(self, value: bytes) -> None:
        line = frame_message(value)
        if self._closed or self._send_closed:
            raise trio.ClosedResourceError("this stdio channel is closed for sending")
        async with self._send_lock:
            if self._atomic:
                await self._send_in_pieces(line)
                return
            if self._torn:
                # [basic/transports#7] a cancelled send left part of a line behind: end it, so
                # this message arrives whole on its own line -- transports#stdio
                line = b"\n" + line
            self._torn = True
            await self._send_stream.send_all(line)
            self._torn = False

    def send_nowait(self, value: bytes) -> None:
        """Write the message at once if the pipe takes it whole now, else raise
        ``trio.WouldBlock`` with nothing written (then use :meth:`send`).

        Only over a pipe or a file (where a write of at most ``PIPE_BUF`` bytes is
        all or nothing), for a line that fits in one such write, when no send is in
        progress and no torn line is owed. The session writes this way when it can:
        no lock, no cancel scope, one schedule point per message (bench W3).
        """
        line = frame_message(value)
        if self._closed or self._send_closed:
            raise trio.ClosedResourceError("this stdio channel is closed for sending")
        if not self._atomic or self._rest or len(line) > PIPE_BUF or self._send_lock.locked():
            raise trio.WouldBlock
        try:
            written = os.write(self._send_stream.fileno(), line)  # type: ignore[attr-defined]
        except BlockingIOError:
            raise trio.WouldBlock from None  # the pipe is full: nothing was written
        except OSError as e:
            if e.errno == errno.EBADF:
                raise trio.ClosedResourceError("file was already closed") from None
            raise trio.BrokenResourceError from e
        if written < len(line):
            # (a file may take part of a line: the next send writes the rest first, as after a torn line)
            self._rest = line[written:]

    async def _send_in_pieces(self, line: bytes) -> None:
        """Write ``line`` in pieces a pipe takes whole or not at all, after the rest
        of a line a cancelled send tore (so the peer never sees a fragment)."""
        rest = self._rest
        data = rest + line if rest else line
        written = 0
        try:
            if len(data) <= PIPE_BUF:
                await self._send_stream.send_all(data)
            else:
                while written < len(data):
                    piece = data[written : written + PIPE_BUF]
                    await self._send_stream.send_all(piece)
                    written += len(piece)
            written = len(data)
        finally:
            if written == len(data):
                self._rest = b""
            elif written > len(rest):
                # [basic/transports#7] our line is started: the next send finishes it first,
                # so the peer gets it whole rather than a fragment -- transports#stdio
                self._rest = data[written:]
            else:
                self._rest = rest[written:]  # ours never started: only the old rest is owed

    async def receive(self) -> bytes:
        if self._closed:
            raise trio.ClosedResourceError("this stdio channel is closed")
        # One schedule point per message, as a lock plus a read would take two (bench W3:
        # a task switch more per message on each side): a free lock is taken at once, and
        # the read is the schedule point; a line already buffered gets one of its own.
        await trio.lowlevel.checkpoint_if_cancelled()
        lock = self._receive_lock
        try:
            lock.acquire_nowait()
        except trio.WouldBlock:
            await lock.acquire()
        try:
            framer = self._framer
            read = False
            while True:
                item = framer.next_line()
                if item is None and not framer.at_eof:
                    data = await self._receive_stream.receive_some(_READ_SIZE)
                    read = True
                    if data:
                        framer.feed(data)
                    else:
                        framer.feed_eof()
                    continue
                if not read:
                    await trio.lowlevel.cancel_shielded_checkpoint()
                if item is None:
                    # [basic/lifecycle#16] the peer closed its output: no more messages -- lifecycle#stdio
                    raise trio.EndOfChannel
                if type(item) is Oversized:
                    # the line is gone; its first bytes tell the session which request it concerned
                    raise too_large(item.size, framer.max_line, item.head)
                assert type(item) is bytes
                return item
        finally:
            lock.release()

    async def _finish_torn_line(self) -> None:
        """Closing after a cancelled send tore a line (over a pipe): write the rest of
        that line first, shielded, for at most :data:`FINISH_TORN_LINE_TIMEOUT` seconds.

        [basic/transports#7] otherwise the peer's EOF follows a fragment, which is not
        a message. A send in progress owns the line (it finishes it or tears it); a
        peer that reads nothing in time, or is gone, is left the fragment.
        """
        if not self._rest or self._send_lock.locked():
            return
        with trio.CancelScope(shield=True, deadline=trio.current_time() + FINISH_TORN_LINE_TIMEOUT):
            try:
                await self._send_in_pieces(b"")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                log.debug("the peer closed its input before the rest of a torn line reached it")

    async def send_eof(self) -> None:
        """Close the sending direction only: the peer's ``receive()`` ends; ours still works.

        Does not wait for a send in progress (that send fails with
        ``trio.ClosedResourceError``).
        """
        if self._send_closed:
            await trio.lowlevel.checkpoint()
            return
        self._send_closed = True
        try:
            await self._finish_torn_line()
        finally:
            await self._send_stream.aclose()

    async def aclose(self) -> None:
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        send_was_open = not self._send_closed
        self._closed = self._send_closed = True
        try:
            try:
                if send_was_open:
                    await self._finish_torn_line()
            finally:
                await self._send_stream.aclose()
        finally:
            await self._receive_stream.aclose()


# -- server side ---------------------------------------------------------------------------

_guard_active = False


@contextmanager
def _std_streams_guard(enabled: bool) -> Iterator[tuple[int, int]]:
    """Private copies of fds 0 and 1 for the protocol; with ``enabled``, fence 0 and 1 off.

    Yields (protocol input fd, protocol output fd); the caller owns them.
    """
    global _guard_active
    if not enabled:
        yield os.dup(0), os.dup(1)
        return
    if _guard_active:
        raise RuntimeError("open_stdio_server_channel(guard=True) is already active in this process")
    saved_in, saved_out = os.dup(0), os.dup(1)
    proto_in, proto_out = os.dup(0), os.dup(1)
    saved_stdout = sys.stdout
    devnull = os.open(os.devnull, os.O_RDONLY)
    _guard_active = True
    try:
        # [basic/transports#6] only MCP messages reach stdout: fd 1 now means stderr, so
        # print(), os.write(1, ...) and child processes write to the log -- transports#stdio
        os.dup2(2, 1)
        # anything print()ed earlier and still buffered goes to stderr too
        _flush(saved_stdout)
        sys.stdout = sys.stderr
        # nothing else can read protocol bytes: fd 0 now reads /dev/null
        os.dup2(devnull, 0)
        yield proto_in, proto_out
    finally:
        _flush(sys.stdout)
        _flush(saved_stdout)  # while fd 1 still points at stderr
        sys.stdout = saved_stdout
        os.dup2(saved_out, 1)
        os.dup2(saved_in, 0)
        for fd in (saved_in, saved_out, devnull):
            os.close(fd)
        _guard_active = False


def _flush(stream: Any) -> None:
    if stream is not None:
        try:
            stream.flush()
        except (OSError, ValueError):  # closed or broken: nothing of ours to rescue
            pass


@asynccontextmanager
async def open_stdio_server_channel(
    *, guard: bool = True, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> AsyncIterator[StdioMessageChannel]:
    """This process's stdin/stdout as an MCP channel (the server side of stdio).

    The protocol reads and writes private duplicates of fds 0 and 1. With
    ``guard`` (the default), while the block runs, fd 1 and ``sys.stdout``
    point at stderr -- stray ``print()``, ``os.write(1, ...)`` and child
    processes end up in the server's log instead of corrupting the stream --
    and fd 0 reads /dev/null, so nothing else can consume protocol input.
    Everything is restored on exit. ``guard=False`` leaves fds 0 and 1 and
    ``sys.stdout`` alone (the caller then guarantees nothing else writes to
    stdout). One guarded channel per process at a time (RuntimeError
    otherwise). POSIX only. The limits are in spec_notes/basic/transports.md.

    ``receive()`` raises ``trio.EndOfChannel`` when the client closes our stdin.
    """
    with _std_streams_guard(guard) as (proto_in, proto_out):
        try:
            send_stream = trio.lowlevel.FdStream(proto_out)
        except BaseException:
            os.close(proto_in)
            os.close(proto_out)
            raise
        try:
            receive_stream = trio.lowlevel.FdStream(proto_in)
        except BaseException:
            os.close(proto_in)
            send_stream.close()
            raise
        channel = StdioMessageChannel(send_stream, receive_stream, max_message_size=max_message_size)
        try:
            yield channel
        finally:
            with trio.CancelScope(shield=True):
                await channel.aclose()


# -- client side -----------------------------------------------------------------------------

StderrOption: TypeAlias = Literal["inherit", "capture", "discard"] | Callable[[str], None]

_POSIX_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")
_WINDOWS_ENV = (
    "APPDATA",
    "COMSPEC",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
)


def default_environment() -> dict[str, str]:
    """The few variables of ours a server gets when ``env`` is given.

    Enough to find programs and a home directory (PATH, HOME, USER, locale,
    temp dir...); exported shell functions (values starting with "()") are
    left out.
    """
    names = _WINDOWS_ENV if sys.platform == "win32" else _POSIX_ENV
    return {n: v for n in names if (v := os.environ.get(n)) is not None and not v.startswith("()")}


class ProcessChannel(StdioMessageChannel):
    """The channel to a server subprocess that :func:`open_process_channel` yields.

    When the server goes away by itself, the ``trio.EndOfChannel`` of
    ``receive()`` and the ``trio.BrokenResourceError`` of ``send()`` say how:
    its exit status and, with ``stderr="capture"``, its last stderr lines
    (the session makes that its close reason).
    """

    def __init__(self, process: trio.Process, *, max_message_size: int, stderr_keep: int) -> None:
        assert process.stdin is not None and process.stdout is not None
        super().__init__(process.stdin, process.stdout, max_message_size=max_message_size)
        #: the server process (``returncode`` is set once the context has exited)
        self.process = process
        #: with ``stderr="capture"``: the server's last ``stderr_keep`` stderr lines
        self.stderr_lines: deque[str] = deque(maxlen=stderr_keep)
        #: set once the stderr reader has seen the end of the server's stderr (if it is piped)
        self.stderr_done: trio.Event | None = None

    async def receive(self) -> bytes:
        try:
            return await super().receive()
        except trio.EndOfChannel as e:
            raise trio.EndOfChannel(await self.describe_exit()) from e

    async def send(self, value: bytes) -> None:
        try:
            await super().send(value)
        except trio.BrokenResourceError as e:
            raise trio.BrokenResourceError(await self.describe_exit()) from e

    def send_nowait(self, value: bytes) -> None:
        try:
            super().send_nowait(value)
        except trio.BrokenResourceError:
            raise trio.WouldBlock from None  # send() fails too, and says how the server went away

    async def describe_exit(self) -> str:
        """How the server went away: exit status and the last captured stderr lines.

        Waits up to a second for the process to exit and its stderr to be
        read to the end: the end of its stdout usually comes a moment first.
        """
        process = self.process
        with trio.move_on_after(_STDERR_DRAIN):
            await process.wait()
            if self.stderr_done is not None:
                await self.stderr_done.wait()
        code = process.returncode
        if code is None:
            text = f"the server (pid {process.pid}) is still running"
        elif code < 0:
            text = f"the server (pid {process.pid}) was killed by {_signal_name(-code)}"
        else:
            text = f"the server (pid {process.pid}) exited with code {code}"
        if self.stderr_lines:
            tail = [line[:_STDERR_QUOTE] for line in list(self.stderr_lines)[-_STDERR_TAIL:]]
            text += "; its last stderr lines: " + " | ".join(tail)
        return text


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class _Process(Protocol):
    """What :func:`shutdown_process` needs of a process (trio.Process has it)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def send_signal(self, sig: int) -> None: ...


async def shutdown_process(
    process: _Process,
    close_input: Callable[[], Any],
    *,
    close_wait: float = DEFAULT_SHUTDOWN_TIMEOUTS[0],
    term_wait: float = DEFAULT_SHUTDOWN_TIMEOUTS[1],
    process_group: bool = False,
) -> None:
    """Stop a stdio server: close its input, wait, SIGTERM, wait, SIGKILL, wait.

    Runs shielded from cancellation, so it completes on every exit path of
    the caller; it takes at most ``close_wait + term_wait`` plus the moment
    the kernel needs to reap a killed process (and, with ``process_group``,
    up to ``2 * term_wait`` more for the processes it left behind). The wait after SIGKILL has no
    timeout: SIGKILL cannot be caught or ignored, and waiting is what
    guarantees the process is reaped rather than left behind.
    ``close_input`` is an async callable (closing the server's stdin).
    With ``process_group`` (the process leads its own process group, as
    :func:`open_process_channel` starts it), SIGTERM and SIGKILL go to the
    whole group, so the children of a wrapper (npx, uv run, a shell) go too;
    and once the server has exited -- by itself, before we closed its input,
    or on a signal -- whatever still runs in its group gets SIGTERM, then
    SIGKILL after ``term_wait``.
    """

    def signal_server(sig: int) -> None:
        if process_group:
            try:
                # the leader is not reaped yet (returncode is None), so its pid is still the group's id
                os.killpg(process.pid, sig)
                return
            except ProcessLookupError:
                pass  # it moved itself to another group: signal it alone
        process.send_signal(sig)

    with trio.CancelScope(shield=True):
        await _stop_leader(process, close_input, close_wait, term_wait, signal_server)
        if process_group:
            await _stop_group(process.pid, term_wait)


async def _stop_leader(
    process: _Process,
    close_input: Callable[[], Any],
    close_wait: float,
    term_wait: float,
    signal_server: Callable[[int], None],
) -> None:
    # [basic/lifecycle#15] 1. close the server's input stream -- lifecycle#stdio
    try:
        await close_input()
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass  # already closed, or the server is gone: either way its input is closed
    if process.returncode is not None:
        return
    # [basic/lifecycle#15] 2. give it time to exit by itself, then SIGTERM -- lifecycle#stdio
    with trio.move_on_after(close_wait):
        await process.wait()
        return
    log.info("server %s still running %gs after its stdin was closed: sending SIGTERM", process.pid, close_wait)
    signal_server(signal.SIGTERM)
    # [basic/lifecycle#15] 3. SIGKILL when SIGTERM was not enough -- lifecycle#stdio
    with trio.move_on_after(term_wait):
        await process.wait()
        return
    log.warning("server %s still running %gs after SIGTERM: sending SIGKILL", process.pid, term_wait)
    signal_server(_HARD_KILL)
    await process.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # not ours (the id was reused): nothing of our server's is left in it
    return True


async def _stop_group(pgid: int, term_wait: float) -> None:
    """The server (the group's leader) has exited; processes it started may still run in its
    group (a wrapper's real server, a worker): SIGTERM them, and SIGKILL what is left after
    ``term_wait``. Decision (spec_notes/basic/transports.md): the group is signalled by the
    leader's pid although the leader is reaped; the kernel does not hand that pid out again
    while the group has members, and an empty group answers ESRCH.
    """
    if not _group_alive(pgid):
        return
    log.info("processes of server %s are still running after it exited: sending SIGTERM to its group", pgid)
    for sig, wait in ((signal.SIGTERM, term_wait), (_HARD_KILL, term_wait)):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        with trio.move_on_after(wait):
            while _group_alive(pgid):
                await trio.sleep(_GROUP_POLL)
            return
        if sig == signal.SIGTERM:
            log.warning("processes of server %s still running %gs after SIGTERM: sending SIGKILL", pgid, wait)
    # (what is left are zombies nobody reaps, or processes in uninterruptible sleep: nothing more to do)


def _check_options(args: Sequence[str], stderr: Any, shutdown_timeouts: tuple[float, float], keep: int) -> None:
    if isinstance(args, (str, bytes)):
        raise TypeError("args must be a sequence of arguments, not a single string")
    if not (stderr in ("inherit", "capture", "discard") or callable(stderr)):
        raise ValueError(f'stderr must be "inherit", "capture", "discard" or a callable, not {stderr!r}')
    if len(shutdown_timeouts) != 2 or not all(
        isinstance(t, (int, float)) and 0 <= t < math.inf for t in shutdown_timeouts
    ):
        raise ValueError(f"shutdown_timeouts must be two finite numbers >= 0, not {shutdown_timeouts!r}")
    if keep < 1:
        raise ValueError(f"stderr_keep must be at least 1, not {keep}")


@asynccontextmanager
async def open_process_channel(
    command: str | os.PathLike[str],
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: StderrOption = "inherit",
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    shutdown_timeouts: tuple[float, float] = DEFAULT_SHUTDOWN_TIMEOUTS,
    stderr_keep: int = 1000,
) -> AsyncIterator[ProcessChannel]:
    """Launch ``command *args`` as an MCP server and yield the channel to it.

    ``env=None``: the server inherits our whole environment. A mapping is
    laid over :func:`default_environment` (PATH, HOME, ... but none of our
    other variables, so secrets are not passed on by accident); pass
    ``{**os.environ, ...}`` to inherit everything and add to it.

    ``stderr`` (the server may log there; it is never taken as an error):
    "inherit" (the server's stderr is ours), "capture" (each line is logged
    at INFO on ``mcp_ref.stdio.stderr`` and kept in ``channel.stderr_lines``,
    the last ``stderr_keep`` of them), "discard", or a callable that receives
    each line (decoded as UTF-8; an exception it raises ends the block).

    A command that cannot be started raises OSError (FileNotFoundError,
    PermissionError...) naming it, before the block runs. If the server
    exits on its own, ``receive()`` raises ``trio.EndOfChannel`` and
    ``send()`` ``trio.BrokenResourceError``.

    Leaving the block -- normally, by an exception, or by cancellation --
    runs :func:`shutdown_process` with ``shutdown_timeouts`` = (wait after
    closing stdin, wait after SIGTERM). No process is left behind.
    """
    _check_options(args, stderr, shutdown_timeouts, stderr_keep)
    close_wait, term_wait = shutdown_timeouts
    piped = stderr == "capture" or callable(stderr)
    stderr_target: int | None = subprocess.PIPE if piped else (subprocess.DEVNULL if stderr == "discard" else None)
    argv = [os.fspath(command), *args]
    try:
        process = await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_target,
            env=None if env is None else {**default_environment(), **env},
            cwd=cwd,
            # its own session and process group: the shutdown signals reach the
            # processes it starts too (see shutdown_process)
            start_new_session=_POSIX,
        )
    except OSError as e:
        # OSError(errno, ...) builds the matching subclass (FileNotFoundError, ...)
        raise OSError(e.errno, f"cannot launch MCP server {argv[0]!r}: {e.strerror}", e.filename) from e
    channel = ProcessChannel(process, max_message_size=max_message_size, stderr_keep=stderr_keep)
    try:
        async with block_nursery() as (nursery, body):
            pumped = trio.Event()
            if piped:
                channel.stderr_done = pumped
                sink = stderr if callable(stderr) else _capture_into(channel)
                nursery.start_soon(_pump_stderr, process, sink, pumped)
            try:
                yield channel
            except BaseException as exc:
                body.exc = exc
                raise
            finally:
                await shutdown_process(
                    process, channel.send_eof, close_wait=close_wait, term_wait=term_wait, process_group=_POSIX
                )
                if piped:
                    # the server is gone; collect what it wrote last (bounded: a child of
                    # the server may hold stderr open)
                    with trio.CancelScope(shield=True), trio.move_on_after(_STDERR_DRAIN):
                        await pumped.wait()
                nursery.cancel_scope.cancel(reason="the server process has exited")
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:  # only if the shutdown itself failed
                process.kill()
                await process.wait()
            await channel.aclose()
            if process.stderr is not None:
                await process.stderr.aclose()


def _capture_into(channel: ProcessChannel) -> Callable[[str], None]:
    pid = channel.process.pid

    def capture(line: str) -> None:
        # [basic/transports#5] stderr is the server's log, not an error signal -- transports#stdio
        channel.stderr_lines.append(line)
        stderr_log.info("[server %s] %s", pid, line)

    return capture


async def _pump_stderr(process: trio.Process, sink: Callable[[str], None], done: trio.Event) -> None:
    assert process.stderr is not None
    framer = LineFramer(_STDERR_MAX_LINE)
    try:
        while not framer.at_eof:
            data = await process.stderr.receive_some(_READ_SIZE)
            if data:
                framer.feed(data)
            else:
                framer.feed_eof()
            while (item := framer.next_line()) is not None:
                if type(item) is Oversized:
                    sink(f"[{item.size} bytes of stderr skipped: line longer than {_STDERR_MAX_LINE}]")
                else:
                    assert type(item) is bytes
                    # [basic/transports#4] the server logs UTF-8 text on stderr; be lenient anyway
                    sink(item.decode("utf-8", "replace"))
    finally:
        done.set()
