"""stdio framing, the server-side stdout guard, and the client's process management."""

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
import trio
import trio.testing

from mcp_ref.basic.transports.memory import framed_memory_pair
from mcp_ref.basic.transports.stdio import LineFramer, Oversized, StdioMessageChannel, open_process_channel
from mcp_ref.errors import MessageTooLarge

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
    f.feed(b":2}\n\n\r\n{}\r\n")
    assert drain(f) == [b'{"b":2}', b"{}"]  # empty lines skipped, CRLF tolerated
    f.feed(b"tail-without-newline")
    assert drain(f) == []
    assert f.end() == b"tail-without-newline"
    assert f.end() is None


def test_framer_skips_an_oversized_line_whole_without_buffering_it() -> None:
    f = LineFramer(max_line=10)
    f.feed(b"short\n" + b"x" * 25)
    assert drain(f) == [b"short"]
    assert len(f._buf) <= 10  # the long line is not kept
    f.feed(b"y" * 1000)
    assert drain(f) == []
    f.feed(b"zz\nok\n")
    assert drain(f) == [Oversized(1027), b"ok"]
    # an oversized line that arrives in one piece
    f.feed(b"q" * 11 + b"\nnext\n")
    assert drain(f) == [Oversized(11), b"next"]


def test_framer_is_linear_for_many_small_lines() -> None:
    f = LineFramer()
    f.feed(b"{}\n" * 200_000)
    assert len(drain(f)) == 200_000


# -- the channel over byte streams ----------------------------------------------------------


@pytest.mark.req("basic/transports#3", "basic/transports#7")
async def test_channel_refuses_messages_with_newlines() -> None:
    a, b = framed_memory_pair()
    with pytest.raises(ValueError, match="newline"):
        await a.send(b'{"a":\n1}')
    await a.send(b'{"a":1}')
    assert await b.receive() == b'{"a":1}'


async def test_channel_reports_oversize_and_recovers() -> None:
    left, right = trio.testing.memory_stream_pair()
    ch = StdioMessageChannel(right, right, max_message_size=16)
    await left.send_all(b'{"too":"long................"}\n{"ok":1}\n')
    with pytest.raises(MessageTooLarge) as info:
        await ch.receive()
    assert info.value.limit == 16 and info.value.size > 16
    assert await ch.receive() == b'{"ok":1}'


async def test_channel_end_of_stream() -> None:
    left, right = trio.testing.memory_stream_pair()
    ch = StdioMessageChannel(right, right)
    await left.send_all(b'{"a":1}\n{"last":true}')
    await left.send_eof()
    assert await ch.receive() == b'{"a":1}'
    assert await ch.receive() == b'{"last":true}'
    with pytest.raises(trio.EndOfChannel):
        await ch.receive()
    with pytest.raises(trio.EndOfChannel):
        await ch.receive()


# -- real processes ---------------------------------------------------------------------------

ECHO = """
import sys
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""

IGNORE_TERM = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.read()
while True:
    time.sleep(1)
"""

EXIT_EARLY = """
import sys
sys.stderr.write("going away\\n")
sys.exit(3)
"""

STDERR_TALK = """
import sys
sys.stderr.write("hello on stderr\\nsecond line\\n"); sys.stderr.flush()
for line in sys.stdin:
    sys.stdout.write(line); sys.stdout.flush()
"""


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


async def test_process_round_trip_and_clean_shutdown(tmp_path: Path) -> None:
    async with open_process_channel(sys.executable, [script(tmp_path, "echo", ECHO)]) as ch:
        await ch.send(b'{"x":"\\u00e9"}')
        assert await ch.receive() == b'{"x":"\\u00e9"}'
        proc = ch.process
    assert proc.returncode == 0  # it exited by itself once stdin closed


@pytest.mark.req("basic/lifecycle#15")
async def test_shutdown_escalates_to_sigkill(tmp_path: Path) -> None:
    async with open_process_channel(
        sys.executable, [script(tmp_path, "stubborn", IGNORE_TERM)], shutdown_timeouts=(0.2, 0.2)
    ) as ch:
        assert await ch.receive() == b"ready"
        proc = ch.process
    assert proc.returncode == -9  # SIGTERM ignored, SIGKILL ended it


@pytest.mark.req("basic/lifecycle#15")
async def test_no_orphan_when_the_body_fails_or_is_cancelled(tmp_path: Path) -> None:
    path = script(tmp_path, "echo", ECHO)
    procs = []
    with pytest.raises(RuntimeError):
        async with open_process_channel(sys.executable, [path]) as ch:
            procs.append(ch.process)
            raise RuntimeError("client failed")
    with trio.move_on_after(0.5):
        async with open_process_channel(sys.executable, [path]) as ch:
            procs.append(ch.process)
            await trio.sleep_forever()
    assert all(p.returncode is not None for p in procs)


@pytest.mark.req("basic/lifecycle#16")
async def test_server_exiting_early_is_end_of_channel(tmp_path: Path) -> None:
    lines: list[str] = []
    async with open_process_channel(sys.executable, [script(tmp_path, "early", EXIT_EARLY)], stderr=lines.append) as ch:
        with pytest.raises(trio.EndOfChannel):
            await ch.receive()
        await ch.process.wait()
        with pytest.raises(trio.BrokenResourceError):
            for _ in range(100):  # the pipe may accept a write or two before it reports
                await ch.send(b"{}")
    assert ch.process.returncode == 3
    assert lines == ["going away"]


@pytest.mark.req("basic/transports#4", "basic/transports#5")
async def test_stderr_capture(tmp_path: Path) -> None:
    async with open_process_channel(sys.executable, [script(tmp_path, "talk", STDERR_TALK)], stderr="capture") as ch:
        await ch.send(b"{}")
        assert await ch.receive() == b"{}"
    assert list(ch.stderr_lines) == ["hello on stderr", "second line"]


async def test_missing_command_is_a_clear_error() -> None:
    with pytest.raises(OSError, match="cannot launch MCP server"):
        async with open_process_channel("/no/such/mcp-server"):
            pass


async def test_env_and_cwd_are_passed(tmp_path: Path) -> None:
    body = "import os, sys; sys.stdout.write(os.environ['MCP_T'] + ' ' + os.getcwd() + '\\n'); sys.stdout.flush()"
    async with open_process_channel(
        sys.executable, ["-c", body], env={**os.environ, "MCP_T": "yes"}, cwd=str(tmp_path)
    ) as ch:
        assert (await ch.receive()).decode() == f"yes {tmp_path}"


GUARDED_SERVER = """
import os, sys, trio
from mcp_ref.basic.transports.stdio import open_stdio_server_channel

async def main():
    async with open_stdio_server_channel() as ch:
        print("stray print from user code")
        os.write(1, b"stray fd write\\n")
        sys.stdin.read()  # cannot steal protocol bytes: it reads /dev/null
        while True:
            try:
                msg = await ch.receive()
            except trio.EndOfChannel:
                break
            await ch.send(msg)
    print("after the channel: stdout is restored")

trio.run(main)
"""


@pytest.mark.req("basic/transports#6")
async def test_server_guard_keeps_stdout_for_mcp_only(tmp_path: Path) -> None:
    stderr: list[str] = []
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    async with open_process_channel(
        sys.executable, [script(tmp_path, "guarded", GUARDED_SERVER)], env=env, stderr=stderr.append
    ) as ch:
        for i in range(3):
            await ch.send(json.dumps({"n": i}).encode())
        received = [json.loads(await ch.receive()) for _ in range(3)]
        await ch.aclose()
        await ch.process.wait()
    assert received == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert "stray print from user code" in stderr and "stray fd write" in stderr
