"""Hostile peers on stdio: a client that never reads (against our server), a server that
never reads (against our client). Each floods pings; the replies cannot be written, and
the peer under test must stop reading rather than keep a task per reply."""

import json
import subprocess as sp
from typing import Any

import trio

from .conftest import MIB, SCRIPTS, memory_of, python_argv, subprocess, write_until_pushed_back

PINGS = 100_000


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


INIT = line(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "flood", "version": "1"},
        },
    }
)
INITIALIZED = line({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def read_until(stream: trio.abc.ReceiveStream, marker: bytes) -> bytes:
    seen = bytearray()
    with trio.fail_after(120):
        while marker not in seen[-4096:]:
            chunk = await stream.receive_some(65536)
            assert chunk, "the stream ended"
            seen += chunk
    return bytes(seen)


async def test_a_client_that_never_reads_is_not_read_either() -> None:
    argv = python_argv("-m", "mcp_ref.examples.everything")
    async with subprocess(argv, stdin=sp.PIPE, stdout=sp.PIPE, stderr=sp.DEVNULL) as server:
        assert server.stdin is not None and server.stdout is not None
        await server.stdin.send_all(INIT + INITIALIZED)
        await read_until(server.stdout, b'"id":0')
        memory = memory_of(server.pid)
        memory.mark()
        pings = [line({"jsonrpc": "2.0", "id": n, "method": "ping"}) for n in range(1, PINGS + 1)]
        # we never read its output: the pipe fills, and every reply it makes is stuck
        sent = await write_until_pushed_back(server.stdin, pings)  # type: ignore[arg-type]
        memory.assert_growth_below(24 * MIB, f"{PINGS:,} pings to a server not read ({sent:,} taken)")
        # the server is fine: once we read, it answers every ping it took, and the next
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.stdin.send_all, line({"jsonrpc": "2.0", "id": "last", "method": "ping"}))
            replies = await read_until(server.stdout, b'"id":"last"')
        assert replies.count(b'"result":{}') == sent + 1


async def test_a_server_that_never_reads_is_not_read_either() -> None:
    argv = python_argv(str(SCRIPTS / "stdio_client.py"), "ping_flooder.py", str(PINGS))
    async with subprocess(argv, stdin=sp.PIPE, stdout=sp.PIPE) as client:
        assert client.stdin is not None and client.stdout is not None
        assert (await read_until(client.stdout, b"ready\n")).endswith(b"ready\n")
        memory = memory_of(client.pid)
        memory.mark()
        await client.stdin.send_all(b"go\n")
        outcome = await read_until(client.stdout, b"\n")
        memory.assert_growth_below(24 * MIB, f"{PINGS:,} pings from a server that does not read")
        assert outcome == b"done 0 tools\n", outcome
        await client.stdin.send_all(b"exit\n")


LONG = 128  # MiB, in one line: 32 times the longest message taken (4 MiB)


async def test_a_line_over_the_limit_to_our_server_is_skipped_unkept() -> None:
    argv = python_argv("-m", "mcp_ref.examples.everything")
    async with subprocess(argv, stdin=sp.PIPE, stdout=sp.PIPE, stderr=sp.DEVNULL) as server:
        assert server.stdin is not None and server.stdout is not None
        await server.stdin.send_all(INIT + INITIALIZED)
        await read_until(server.stdout, b'"id":0')
        memory = memory_of(server.pid)
        memory.mark()
        await server.stdin.send_all(b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"')
        for _ in range(LONG):
            await server.stdin.send_all(b"x" * MIB)
        await server.stdin.send_all(b'"}}\n' + line({"jsonrpc": "2.0", "id": "after", "method": "ping"}))
        replies = await read_until(server.stdout, b'"id":"after"')
        memory.assert_growth_below(24 * MIB, f"a line of {LONG} MiB to a stdio server")
        # [basic/index#10] refused with its id (its first bytes showed it), and the session goes on
        big, after = (json.loads(r) for r in replies.strip().split(b"\n")[-2:])
        assert big["id"] == "big" and big["error"]["code"] == -32600, big
        assert after == {"jsonrpc": "2.0", "id": "after", "result": {}}


async def test_a_line_over_the_limit_to_our_client_is_skipped_unkept() -> None:
    argv = python_argv(str(SCRIPTS / "stdio_client.py"), "long_line_server.py", str(LONG))
    async with subprocess(argv, stdin=sp.PIPE, stdout=sp.PIPE) as client:
        assert client.stdin is not None and client.stdout is not None
        assert (await read_until(client.stdout, b"ready\n")).endswith(b"ready\n")
        memory = memory_of(client.pid)
        memory.mark()
        await client.stdin.send_all(b"go\n")
        outcome = await read_until(client.stdout, b"\n")
        memory.assert_growth_below(24 * MIB, f"a line of {LONG} MiB to our stdio client")
        assert outcome.startswith(b"done error") and b"MessageTooLarge" in outcome, outcome
        # the session goes on: the next request is answered
        await client.stdin.send_all(b"again\n")
        assert await read_until(client.stdout, b"\n") == b"done 0 tools\n"
        await client.stdin.send_all(b"exit\n")
