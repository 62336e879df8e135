"""The hostile-peer suite: a peer floods one of our processes and we measure the
process's peak resident memory (``VmHWM`` in ``/proc/PID/status``).

Every flood is bounded by a count of bytes or messages, never by time, so the
suite costs the same on a fast and a slow machine. The process under test is a
real subprocess (a server of ours, or a client of ours against a hostile
server run by the test), so the measure covers everything it allocates.
"""

import os
import subprocess as sp
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
MIB = 1024 * 1024


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "hostile: floods a subprocess and bounds its peak memory (a few seconds each; -m 'not hostile' skips them)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/hostile/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.hostile)


def _status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(f"{field} not in /proc/{pid}/status")


class Memory:
    """Resident memory of one process, from /proc (Linux)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.baseline = 0

    def rss(self) -> int:
        """Resident now, bytes."""
        return _status_kib(self.pid, "VmRSS") * 1024

    def peak(self) -> int:
        """Most ever resident (since the last :meth:`mark`), bytes."""
        return _status_kib(self.pid, "VmHWM") * 1024

    def mark(self) -> None:
        """Take the baseline now, and restart the peak from here (clear_refs 5)."""
        with open(f"/proc/{self.pid}/clear_refs", "w") as refs:
            refs.write("5")
        self.baseline = self.rss()

    def growth(self) -> int:
        """Peak since :meth:`mark` above the baseline then, bytes."""
        return self.peak() - self.baseline

    def assert_growth_below(self, limit: int, flood: str) -> None:
        grown = self.growth()
        # (printed: `pytest -s tests/hostile` gives the numbers of a run)
        print(f"\n[hostile] {flood}: peak RSS {self.peak() / MIB:.1f} MiB, {grown / MIB:+.1f} MiB over the baseline")
        assert grown < limit, f"{flood}: the peak RSS grew {grown / MIB:.1f} MiB (bound {limit / MIB:.0f} MiB)"


def memory_of(pid: int) -> Memory:
    """The memory of ``pid``; skips the test where /proc does not say (not Linux)."""
    if not Path(f"/proc/{pid}/status").exists() or not Path(f"/proc/{pid}/clear_refs").exists():
        pytest.skip("peak RSS is read from /proc/PID/status (VmHWM), which this system does not have")
    return Memory(pid)


async def write_until_pushed_back(stream: trio.lowlevel.FdStream, messages: list[bytes], stall: float = 2.0) -> int:
    """Write ``messages`` (each a whole line) to a pipe until all are written or the reader
    stops taking them (no room for ``stall`` seconds: it pushes back). Writes are at most
    PIPE_BUF bytes, so each goes in whole or not at all (no message is torn). Returns how
    many messages went out."""
    fd = stream.fileno()
    sent = 0
    while sent < len(messages):
        chunk, count = b"", 0
        while sent + count < len(messages) and len(chunk) + len(messages[sent + count]) <= 4096:
            chunk += messages[sent + count]
            count += 1
        with trio.move_on_after(stall) as stalled:
            await trio.lowlevel.wait_writable(fd)
        if stalled.cancelled_caught:
            break
        try:
            written = os.write(fd, chunk)
        except BlockingIOError:
            continue
        assert written == len(chunk)  # (atomic: at most PIPE_BUF bytes to a pipe)
        sent += count
    return sent


async def send_until_pushed_back(stream: trio.SocketStream, data: bytes, stall: float = 2.0) -> int:
    """Write ``data`` on a socket until all of it is written or the peer stops reading (no
    room for ``stall`` seconds). Returns how many bytes went out (it may end inside a line)."""
    fd, view, sent = stream.socket.fileno(), memoryview(data), 0
    while sent < len(data):
        with trio.move_on_after(stall) as stalled:
            await trio.lowlevel.wait_writable(stream.socket)
        if stalled.cancelled_caught:
            break
        try:
            sent += os.write(fd, view[sent : sent + 65536])
        except BlockingIOError:
            continue
    return sent


def python_argv(*args: str) -> list[str]:
    return [sys.executable, *args]


@asynccontextmanager
async def subprocess(argv: Sequence[str], **options: object) -> AsyncIterator[trio.Process]:
    """A child process, killed on the way out whatever happens."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = await trio.lowlevel.open_process(list(argv), env=env, **options)  # type: ignore[arg-type]
    try:
        yield process
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.wait()
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    await pipe.aclose()


@asynccontextmanager
async def http_subprocess(argv: Sequence[str]) -> AsyncIterator[tuple[str, Memory]]:
    """A server of ours serving HTTP in a subprocess: its URL (which it prints on stderr,
    as the everything example does) and its memory. What it logs after is dropped."""
    async with subprocess(argv, stderr=sp.PIPE) as process:
        assert process.stderr is not None
        seen = b""
        with trio.fail_after(30):
            while b"MCP endpoint" not in seen or not seen.endswith(b"\n"):
                chunk = await process.stderr.receive_some(65536)
                assert chunk, f"the server exited: {seen!r}"
                seen += chunk
        async with trio.open_nursery() as nursery:
            # what it logs meanwhile is read (and dropped): a full pipe would stop it
            nursery.start_soon(drain, process.stderr)
            yield seen.split(b"(Streamable HTTP): ", 1)[1].split()[0].decode(), memory_of(process.pid)
            nursery.cancel_scope.cancel()


async def drain(stream: trio.abc.ReceiveStream) -> None:
    while await stream.receive_some(65536):
        pass
