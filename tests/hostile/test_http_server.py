"""Hostile clients against our Streamable HTTP server (the everything example, a subprocess)."""

import bisect
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import h11
import pytest
import trio

from ..basic.transports.test_streamable_http import exchange, raw, start_session
from .conftest import MIB, Memory, http_subprocess, python_argv, send_until_pushed_back


def echo_call(request_id: int, text: str) -> dict[str, object]:
    params = {"name": "echo", "arguments": {"text": text}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class HttpServer:
    def __init__(self, url: str, memory: Memory) -> None:
        self.url = url
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.memory = memory


@asynccontextmanager
async def everything_http(*args: str) -> AsyncIterator[HttpServer]:
    """The everything example over HTTP on a free port, warmed up (one session, one call)."""
    argv = python_argv("-m", "mcp_ref.examples.everything", "--http", "--port", "0", *args)
    async with http_subprocess(argv) as (url, memory):
        server = HttpServer(url, memory)
        session = await start_session(url)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        }
        assert (await raw(url, "POST", session, call))[0] == 200
        yield server


async def open_get_stream(server: HttpServer, session: dict[str, str]) -> trio.SocketStream:
    """A connection with the session's GET stream open on it (its head read)."""
    stream = await trio.open_tcp_stream(server.host, server.port)
    conn = h11.Connection(h11.CLIENT)
    headers = {**session, "host": f"{server.host}:{server.port}", "accept": "text/event-stream"}
    await stream.send_all(conn.send(h11.Request(method="GET", target="/mcp", headers=list(headers.items()))) or b"")
    await stream.send_all(conn.send(h11.EndOfMessage()) or b"")
    with trio.fail_after(10):
        while not isinstance(event := conn.next_event(), h11.Response):
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
    assert event.status_code == 200
    return stream


async def send_until_refused(stream: trio.abc.SendStream, total: int, chunk: bytes) -> int:
    """Send ``total`` bytes of ``chunk`` repeated; how many went out before the peer closed."""
    sent = 0
    try:
        while sent < total:
            await stream.send_all(chunk)
            sent += len(chunk)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    return sent


@pytest.mark.parametrize("resumed", [False, True], ids=["get-stream", "resumed-stream"])
async def test_bytes_sent_on_an_event_streams_connection_are_not_buffered(resumed: bool) -> None:
    # a client holding a GET stream (or a resumed stream) open keeps writing on its
    # connection: nothing on it can be answered before the stream ends, so the server
    # must not keep it all
    async with everything_http() as server:
        session = await start_session(server.url)
        if resumed:
            # a long call whose connection drops after its first event: its stream waits
            # to be resumed from that event, and is (a GET with Last-Event-ID)
            count = {"name": "count_slowly", "arguments": {"count": 3600}}
            call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": count}
            async with exchange(server.url, "POST", session, call) as answer:
                assert answer.status == 200
                first, *_ = await answer.events()
            assert first.id, first
            session = {**session, "last-event-id": first.id}
        server.memory.mark()
        stream = await open_get_stream(server, session)
        with trio.fail_after(60):
            await send_until_refused(stream, 256 * MIB, b"x" * MIB)
        await stream.aclose()
        what = "a resumed stream's" if resumed else "a GET stream's"
        server.memory.assert_growth_below(32 * MIB, f"256 MiB written on {what} connection")
        # the server is fine, and the session too
        assert (await raw(server.url, "POST", session, {"jsonrpc": "2.0", "id": 9, "method": "ping"}))[0] == 200


async def test_a_batch_of_80k_pings_is_refused_unread() -> None:
    # one 2025-03-26 batch under max_body (4 MB) holding 80,000 requests: each would be
    # handled and answered (13 s of CPU and +390 MiB before the batch limit); refused whole now
    async with everything_http() as server:
        session = await start_session(server.url, "2025-03-26")
        batch = [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(80_000)]
        server.memory.mark()
        status, _, body = await raw(server.url, "POST", session, batch)
        assert status == 400 and "a batch of 80000 messages" in json.loads(body)["error"]["message"]
        # (what remains is parsing the 4 MB body, as for any body of that size)
        server.memory.assert_growth_below(48 * MIB, "a batch of 80,000 pings (4 MB)")
        assert (await raw(server.url, "POST", session, {"jsonrpc": "2.0", "id": "p", "method": "ping"}))[0] == 200


async def test_the_event_store_is_bounded_in_bytes() -> None:
    # every answer is kept for resumption: 40 answers of 3 MiB must not all stay in memory
    async with everything_http() as server:
        session = await start_session(server.url)
        text = "y" * (3 * MIB)
        server.memory.mark()
        for n in range(40):
            status, _, body = await raw(server.url, "POST", session, echo_call(10 + n, text))
            assert status == 200 and len(body) > 3 * MIB
        server.memory.assert_growth_below(64 * MIB, "40 answers of 3 MiB kept for resumption")


async def test_a_client_that_never_reads_is_not_read_either() -> None:
    # the HTTP form of a client that writes and never reads: pings pipelined on one
    # connection. The server answers one request of a connection at a time: once its
    # answers find no room, it reads no further, and what waits is in the kernel's buffers
    pings = 100_000
    async with everything_http() as server:
        session = await start_session(server.url)
        head = "".join(f"{k}: {v}\r\n" for k, v in {**session, "host": f"{server.host}:{server.port}"}.items())

        def ping(n: int) -> bytes:
            body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"})
            request = (
                f"POST /mcp HTTP/1.1\r\n{head}content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
            )
            return (request + body).encode()

        requests = [ping(n) for n in range(pings)]
        data = b"".join(requests)
        server.memory.mark()
        stream = await trio.open_tcp_stream(server.host, server.port)
        sent = await send_until_pushed_back(stream, data)
        taken_bytes = f"{sent / MIB:.1f} MiB taken"
        server.memory.assert_growth_below(
            24 * MIB, f"{pings:,} pings pipelined to an HTTP server not read ({taken_bytes})"
        )
        # the server is fine: once we read, every ping it took is answered (the last one
        # we began is finished first), and the session works on another connection
        ends = list(itertools.accumulate(len(r) for r in requests))
        taken = bisect.bisect_left(ends, sent) + 1 if sent else 0
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stream.send_all, data[sent : ends[taken - 1]] if taken else b"")
            answered, tail, marker = 0, b"", b'"result":{}'  # (in each answer to a ping, once)
            with trio.fail_after(120):
                while answered < taken:
                    chunk = await stream.receive_some(65536)
                    assert chunk, "the server closed the connection"
                    answered += (tail + chunk).count(marker)
                    tail = (tail + chunk)[-len(marker) + 1 :]
        await stream.aclose()
        assert answered == taken
        assert (await raw(server.url, "POST", session, {"jsonrpc": "2.0", "id": "after", "method": "ping"}))[0] == 200
