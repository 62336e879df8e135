"""A hostile Streamable HTTP server (run by the test) against our client (a subprocess)."""

import json
import subprocess as sp
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import h11
import trio

from ..basic.transports.test_streamable_http import read_request, tcp_server
from .conftest import MIB, SCRIPTS, Memory, memory_of, python_argv, send_until_pushed_back, subprocess

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "hostile", "version": "1"},
}

Answer = Callable[[trio.SocketStream, h11.Connection, Any], Awaitable[None]]


async def respond(
    stream: trio.SocketStream,
    conn: h11.Connection,
    status: int,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> None:
    payload = b"" if body is None else json.dumps(body).encode()
    hdrs = {"content-length": str(len(payload)), "connection": "close", **(headers or {})}
    if body is not None:
        hdrs["content-type"] = "application/json"
    out = conn.send(h11.Response(status_code=status, headers=list(hdrs.items()))) or b""
    out += (conn.send(h11.Data(data=payload)) or b"") if payload else b""
    await stream.send_all(out + (conn.send(h11.EndOfMessage()) or b""))


async def start_sse(stream: trio.SocketStream, conn: h11.Connection) -> None:
    headers = [("content-type", "text/event-stream"), ("connection", "close")]
    await stream.send_all(conn.send(h11.Response(status_code=200, headers=headers)) or b"")


async def send_raw_body(stream: trio.SocketStream, conn: h11.Connection, data: bytes) -> None:
    await stream.send_all(conn.send(h11.Data(data=data)) or b"")


class HostileServer:
    """Answers initialize like a server; ``call`` answers tools/call, ``listen`` the GET stream."""

    def __init__(self, call: Answer, listen: Answer | None = None) -> None:
        self.call = call
        self.listen = listen

    async def handle(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        try:
            got = await read_request(stream, conn)
            if got is None:
                return
            head, body = got
            if head.method == b"GET":
                if self.listen is None:
                    await respond(stream, conn, 405)
                else:
                    await self.listen(stream, conn, None)
                return
            if head.method == b"DELETE":
                await respond(stream, conn, 200)
                return
            message = json.loads(body)
            if "method" not in message or "id" not in message:
                await respond(stream, conn, 202)
            elif message["method"] == "initialize":
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": INIT_RESULT}
                await respond(stream, conn, 200, answer, {"mcp-session-id": "hostile"})
            elif message["method"] == "tools/call":
                await self.call(stream, conn, message)
            else:
                await respond(stream, conn, 200, {"jsonrpc": "2.0", "id": message["id"], "result": {}})
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client hung up on us: what the flood is for
        finally:
            await stream.aclose()


class Client:
    def __init__(self, process: trio.Process, memory: Memory) -> None:
        self.process = process
        self.memory = memory
        self._out = b""

    async def line(self) -> str:
        assert self.process.stdout is not None
        with trio.fail_after(120):
            while b"\n" not in self._out:
                chunk = await self.process.stdout.receive_some(65536)
                assert chunk, f"the client exited: {self._out!r}"
                self._out += chunk
        line, self._out = self._out.split(b"\n", 1)
        return line.decode()

    async def say(self, text: str = "go") -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send_all(text.encode() + b"\n")


@asynccontextmanager
async def our_client(server: HostileServer, tool: str = "flood") -> AsyncIterator[Client]:
    """Our client in a subprocess, initialised against ``server``, its baseline taken."""
    async with tcp_server(server.handle) as port:
        argv = python_argv(str(SCRIPTS / "http_client.py"), f"http://127.0.0.1:{port}/mcp", tool)
        async with subprocess(argv, stdin=sp.PIPE, stdout=sp.PIPE) as process:
            client = Client(process, memory_of(process.pid))
            assert await client.line() == "ready"
            client.memory.mark()
            yield client


def notification(size: int) -> bytes:
    params = {"level": "info", "data": "n" * size}
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": params}).encode()


def response(request_id: Any, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}]}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


async def test_a_json_answer_over_the_limit_is_refused_unread() -> None:
    async def huge_json(stream: trio.SocketStream, conn: h11.Connection, message: Any) -> None:
        size = 256 * MIB
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode() + b',"result":{"content":[],"x":"'
        headers = [("content-type", "application/json"), ("content-length", str(size)), ("connection", "close")]
        await stream.send_all(conn.send(h11.Response(status_code=200, headers=headers)) or b"")
        await send_raw_body(stream, conn, head)
        sent = len(head)
        while sent < size:
            await send_raw_body(stream, conn, b"x" * min(MIB, size - sent))
            sent += MIB

    async with our_client(HostileServer(huge_json)) as client:
        await client.say()
        outcome = await client.line()
        client.memory.assert_growth_below(32 * MIB, "a JSON answer of 256 MiB")
        assert outcome.startswith("done error MessageTooLarge: response 1 of at least 268435456 bytes"), outcome
        await client.say("exit")


async def test_an_sse_line_over_the_limit_is_skipped_in_linear_time() -> None:
    async def endless_line(stream: trio.SocketStream, conn: h11.Connection, message: Any) -> None:
        await start_sse(stream, conn)
        # one event of 32 MiB (cut into 64 KiB writes, no newline in it), then the answer
        await send_raw_body(stream, conn, b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"')
        for _ in range(512):
            await send_raw_body(stream, conn, b"x" * 65536)
        await send_raw_body(stream, conn, b'"}}\n\n')
        await send_raw_body(stream, conn, b"data: " + response(message["id"], "after the long line") + b"\n\n")
        await stream.send_all(conn.send(h11.EndOfMessage()) or b"")

    async with our_client(HostileServer(endless_line)) as client:
        await client.say()
        outcome = await client.line()
        client.memory.assert_growth_below(32 * MIB, "an SSE line of 32 MiB")
        assert outcome == "done result after the long line", outcome
        await client.say("exit")


async def test_a_flood_on_the_get_stream_is_read_at_the_sessions_pace() -> None:
    flooded = trio.Event()
    block = b"".join(b"data: " + notification(2000) + b"\n\n" for _ in range(500))

    async def flood(stream: trio.SocketStream, conn: h11.Connection, message: Any) -> None:
        await start_sse(stream, conn)
        for _ in range(100):  # 50,000 notifications, 100 MiB
            await send_raw_body(stream, conn, block)
        flooded.set()
        await trio.sleep_forever()

    async def after_the_flood(stream: trio.SocketStream, conn: h11.Connection, message: Any) -> None:
        await flooded.wait()
        await respond(stream, conn, 200, json.loads(response(message["id"], "flood over")))

    async with our_client(HostileServer(after_the_flood, listen=flood)) as client:
        await client.say()
        outcome = await client.line()
        client.memory.assert_growth_below(32 * MIB, "50,000 notifications of 2 KB on the GET stream")
        assert outcome == "done result flood over", outcome
        await client.say("exit")


SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"


async def test_pings_from_a_server_that_does_not_read_the_answers_are_not_read_either() -> None:
    # the HTTP form of a server that floods pings and never reads: the pings come on the
    # call's SSE stream, and the POSTs that carry our answers are never read, never answered.
    # Our client must stop reading the stream while its answers are stuck.
    pings = 100_000
    ping = b'data: {"jsonrpc":"2.0","id":"p","method":"ping"}\n\n'
    flooding, release = False, trio.Event()
    held = 0

    class Holding(HostileServer):
        async def handle(self, stream: trio.SocketStream) -> None:
            nonlocal held
            if flooding and not release.is_set():
                held += 1  # an answer to a ping: left unread until the flood is over
                await release.wait()
            await super().handle(stream)

    async def flood(stream: trio.SocketStream, conn: h11.Connection, message: Any) -> None:
        nonlocal flooding
        flooding = True
        await stream.send_all(SSE_HEAD)
        data = ping * pings
        sent = await send_until_pushed_back(stream, data)
        release.set()  # now an honest server: it reads the answers and ends the call
        rest = len(ping) - sent % len(ping) if sent % len(ping) else 0
        await stream.send_all(data[sent : sent + rest] + b"data: " + response(message["id"], "flood over") + b"\n\n")

    async with our_client(Holding(flood)) as client:
        await client.say()
        outcome = await client.line()
        client.memory.assert_growth_below(
            8 * MIB, f"{pings:,} pings from a server that reads no answer ({held:,} POSTs held)"
        )
        # each POST it does not answer holds a connection of ours: at most max_unanswered_posts
        assert held <= 64, held
        assert outcome == "done result flood over", outcome
        await client.say("exit")
