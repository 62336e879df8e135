"""HTTP/1.1 framing at every reader: the exact head limit, and the shapes of request smuggling
and response splitting (RFC 9112 sections 6.1, 6.3, 11.2), on real sockets on loopback."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import h11
import pytest
import trio
import trio.testing

from mcp_ref.basic.transports._framing import (
    DEFAULT_HEAD_LIMIT,
    FramedReader,
    framed_connection,
    request_framing_problem,
    response_framing_problem,
)
from mcp_ref.basic.transports.http_fetch import http_exchange
from mcp_ref.errors import HTTPTransportError, UnsupportedProtocolVersion
from mcp_ref.session.http import open_http_client
from mcp_ref.testing.transport_check import check_server

from .test_streamable_http import INIT, http_server, read_request, tcp_server

INIT_BODY = json.dumps(INIT).encode()


def modern_request() -> tuple[bytes, list[bytes]]:
    """A 2026-07-28 tools/list: its body and its header lines (no session: a stateless POST)."""
    from mcp_ref.basic.lifecycle import Role
    from mcp_ref.exchange import StatelessEngine
    from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation

    engine = StatelessEngine(Role.CLIENT, info=Implementation(name="t", version="0"), capabilities=ClientCapabilities())
    rid, data = engine.send_request("tools/list")
    return data, [f"{k}: {v}".encode() for k, v in engine.http_headers(rid).items()]


def chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


def post(port: int, body: bytes, *extra: bytes, framing: bytes | None = None) -> bytes:
    """A raw POST of ``body`` to the MCP endpoint; ``framing`` replaces the Content-Length line."""
    lines = [
        b"POST /mcp HTTP/1.1",
        b"Host: 127.0.0.1:%d" % port,
        b"Accept: application/json, text/event-stream",
        b"Content-Type: application/json",
        framing if framing is not None else b"Content-Length: %d" % len(body),
        *extra,
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def read_all(stream: trio.SocketStream) -> bytes:
    """Everything the server writes until it closes the connection (10 s at most)."""
    out = bytearray()
    with trio.fail_after(10):
        while data := await stream.receive_some(65536):
            out += data
    return bytes(out)


async def answers(raw: bytes) -> list[h11.Response]:
    """The response heads in what a server wrote before it closed the connection."""
    conn = h11.Connection(h11.CLIENT)
    heads = []
    conn.receive_data(raw)
    conn.receive_data(b"")
    while True:
        # (the client side of h11 must have sent a request per response it reads)
        if conn.our_state is h11.IDLE:
            conn.send(h11.Request(method="POST", target="/mcp", headers=[("host", "x"), ("content-length", "0")]))
            conn.send(h11.EndOfMessage())
        event = conn.next_event()
        if isinstance(event, h11.Response):
            heads.append(event)
        elif isinstance(event, h11.EndOfMessage):
            if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                conn.start_next_cycle()
        elif isinstance(event, h11.ConnectionClosed) or event is h11.NEED_DATA:
            return heads


# -- the server ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "framing",
    [
        b"Transfer-Encoding: chunked\r\nContent-Length: %d",
        b"Content-Length: %d\r\nTransfer-Encoding: chunked",
    ],
    ids=["te-first", "cl-first"],
)
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_request_with_both_lengths_is_refused_and_the_connection_closed(framing: bytes, era: str) -> None:
    # (modern: a 2026-07-28 stateless POST, whose path is new since the fix: refused the same way)
    body, extra = (INIT_BODY, []) if era == "legacy" else modern_request()
    async with http_server(check_server()) as info:
        stream = await trio.open_tcp_stream("127.0.0.1", info.port)
        # read by Transfer-Encoding, this is an initialize and then a second one pipelined behind it;
        # read by Content-Length, a proxy would see one request whose body ends elsewhere
        smuggled = post(info.port, chunked(body), *extra, framing=framing % len(body))
        await stream.send_all(smuggled + post(info.port, body, *extra))
        heads = await answers(await read_all(stream))
        assert [h.status_code for h in heads] == [400]  # refused, then closed: the second is never read
        assert (b"connection", b"close") in heads[0].headers
        assert info._server is not None and info._server.sessions == {}


async def test_transfer_encoding_in_an_http_1_0_request_is_refused() -> None:
    async with http_server(check_server()) as info:
        stream = await trio.open_tcp_stream("127.0.0.1", info.port)
        request = post(info.port, chunked(INIT_BODY), framing=b"Transfer-Encoding: chunked")
        await stream.send_all(request.replace(b"HTTP/1.1", b"HTTP/1.0", 1) + post(info.port, INIT_BODY))
        heads = await answers(await read_all(stream))
        assert [h.status_code for h in heads] == [400]


async def test_a_chunked_request_alone_is_served_and_the_connection_kept() -> None:
    async with http_server(check_server()) as info:
        stream = await trio.open_tcp_stream("127.0.0.1", info.port)
        await stream.send_all(post(info.port, chunked(INIT_BODY), framing=b"Transfer-Encoding: chunked"))
        with trio.fail_after(10):
            first = await stream.receive_some(65536)
        assert first.startswith(b"HTTP/1.1 200 ")
        assert info._server is not None and len(info._server.sessions) == 1


def header_of(size: int, port: int) -> bytes:
    """A GET whose head is exactly ``size`` bytes, its last empty line included."""
    start = (
        b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\nConnection: close\r\nX-Pad: " % port
    )
    pad = size - len(start) - len(b"\r\n\r\n")
    head = start + b"a" * pad + b"\r\n\r\n"
    assert len(head) == size
    return head


@pytest.mark.parametrize("size", [DEFAULT_HEAD_LIMIT - 1, DEFAULT_HEAD_LIMIT])
async def test_a_head_of_the_limit_is_read(size: int) -> None:
    async with http_server(check_server()) as info:
        stream = await trio.open_tcp_stream("127.0.0.1", info.port)
        await stream.send_all(header_of(size, info.port))
        heads = await answers(await read_all(stream))
        assert [h.status_code for h in heads] == [405]  # read: a GET without a session id (2026-07-28: none)


@pytest.mark.parametrize("size", [DEFAULT_HEAD_LIMIT + 1, DEFAULT_HEAD_LIMIT + 60_000, 2 * DEFAULT_HEAD_LIMIT - 1])
async def test_a_head_one_byte_over_the_limit_is_431(size: int) -> None:
    async with http_server(check_server()) as info:
        stream = await trio.open_tcp_stream("127.0.0.1", info.port)
        try:
            await stream.send_all(header_of(size, info.port))
        except trio.BrokenResourceError:
            pass  # (the server may close before it has all of it)
        heads = await answers(await read_all(stream))
        assert [h.status_code for h in heads] == [431]


# -- the reader itself ------------------------------------------------------------------------------


@asynccontextmanager
async def fed(chunks: list[bytes], role: type[h11.CLIENT] | type[h11.SERVER]) -> AsyncIterator[FramedReader]:
    """A reader over a memory stream the chunks are written to, then closed."""
    left, right = trio.testing.memory_stream_pair()
    for chunk in chunks:
        await left.send_all(chunk)
    await left.aclose()
    conn = framed_connection(role, 100)
    yield FramedReader(conn, right, 100)


async def test_a_pipelined_head_is_measured_against_the_limit_too() -> None:
    first = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
    second = b"GET /b HTTP/1.1\r\nHost: x\r\nX: " + b"p" * 100 + b"\r\n\r\n"  # over 100 bytes
    async with fed([], h11.SERVER) as reader:
        reader.feed(first + second)  # both buffered before the second head is awaited
        assert isinstance(await reader.next_event(), h11.Request)
        assert isinstance(await reader.next_event(), h11.EndOfMessage)
        reader.conn.send(h11.Response(status_code=204, headers=[]))
        reader.conn.send(h11.EndOfMessage())
        reader.conn.start_next_cycle()
        with pytest.raises(h11.RemoteProtocolError) as refused:
            await reader.next_event()
        assert refused.value.error_status_hint == 431


async def test_the_reader_reads_a_head_in_pieces_up_to_the_limit() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: " + b"p" * 50 + b"\r\n\r\n"
    async with fed([head[:10], head[10:70], head[70:] + b"ok"], h11.CLIENT) as reader:
        reader.conn.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
        reader.conn.send(h11.EndOfMessage())
        event = await reader.next_event()
        assert isinstance(event, h11.Response) and response_framing_problem(event) is None
        assert isinstance(data := await reader.next_event(), h11.Data) and data.data == b"ok"


def test_the_framing_problems_named() -> None:
    both = [("host", "x"), ("transfer-encoding", "chunked"), ("content-length", "3")]
    assert request_framing_problem(h11.Request(method="POST", target="/", headers=both)) is not None
    assert request_framing_problem(h11.Request(method="POST", target="/", headers=both[:2])) is None
    assert response_framing_problem(h11.Response(status_code=200, headers=both[1:])) is not None
    old = h11.Response(status_code=200, headers=both[1:2], http_version="1.0")
    assert response_framing_problem(old) is not None
    with pytest.raises(ValueError):
        framed_connection(h11.SERVER, 1)


# -- the clients ------------------------------------------------------------------------------------


def initialize_answer(request_id: object) -> bytes:
    result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "raw", "version": "1"}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


def discover_answer(request_id: object) -> bytes:
    result = {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {},
        "serverInfo": {"name": "raw", "version": "1"},
        "resultType": "complete",
    }
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


async def write_in_two(stream: trio.SocketStream, data: bytes, split_at: int) -> None:
    """Write ``data``; with ``split_at``, its start first and the rest once the reader has read that."""
    if split_at:
        await stream.send_all(data[:split_at])
        await trio.testing.wait_all_tasks_blocked(0.05)
        data = data[split_at:]
    await stream.send_all(data)


class RawMcpServer:
    """A scripted MCP server on raw h11, for answers no honest server writes.

    ``head(method)`` gives extra header lines for the answer to that method, ``after(method)``
    bytes written after the whole answer on the same connection.
    """

    def __init__(
        self,
        *,
        extra_headers: dict[str, list[bytes]] | None = None,
        after: dict[str, bytes] | None = None,
        split_at: int = 0,
    ):
        self.extra_headers = extra_headers or {}
        #: the first answer is written in two parts, the client having read the first (so that
        #: it is not read whole at once)
        self.split_at = split_at
        self.after = after or {}
        self.connections = 0
        self.methods: list[str] = []

    async def handle(self, stream: trio.SocketStream) -> None:
        self.connections += 1
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request = await read_request(stream, conn)
                if request is None:
                    return
                head, body = request
                if head.method != b"POST":  # the GET stream (none here), the DELETE at the end
                    status = 405 if head.method == b"GET" else 200
                    await stream.send_all(b"HTTP/1.1 %d X\r\nContent-Length: 0\r\n\r\n" % status)
                    conn.send(h11.Response(status_code=status, headers=[("content-length", "0")]))
                    conn.send(h11.EndOfMessage())
                    conn.start_next_cycle()
                    continue
                message = json.loads(body)
                method = message.get("method", "")
                self.methods.append(method)
                if "id" not in message:
                    status, payload = 202, b""
                elif method == "initialize":
                    status, payload = 200, initialize_answer(message["id"])
                elif method == "server/discover":
                    status, payload = 200, discover_answer(message["id"])
                else:
                    status, payload = 200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode()
                lines = [b"HTTP/1.1 %d OK" % status, b"Content-Type: application/json", b"Mcp-Session-Id: s1"]
                lines += self.extra_headers.get(method, [b"Content-Length: %d" % len(payload)])
                if b"Transfer-Encoding: chunked" in lines:
                    payload = chunked(payload)
                answer = b"\r\n".join(lines) + b"\r\n\r\n" + payload + self.after.get(method, b"")
                await write_in_two(stream, answer, self.split_at)
                self.split_at = 0
                # (h11's own state follows what was written: a 200 with the body, then the end)
                conn.send(h11.Response(status_code=status, headers=[("content-length", "0")]))
                conn.send(h11.EndOfMessage())
                conn.start_next_cycle()
        except (trio.BrokenResourceError, h11.ProtocolError):
            return


async def test_bytes_after_an_answer_are_not_read_as_the_next_answer() -> None:
    # the answer to initialize is followed by a forged answer, a 404 that would end the session
    forged = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
    raw = RawMcpServer(after={"initialize": forged})
    async with tcp_server(raw.handle) as port:
        async with open_http_client(f"http://127.0.0.1:{port}/mcp", era="legacy") as client:
            with trio.fail_after(10):
                await client.ping()
    # the connection that carried the extra bytes was not used again
    assert raw.methods[:3] == ["initialize", "notifications/initialized", "ping"] and raw.connections >= 2


async def test_bytes_after_a_2026_answer_are_not_read_as_the_next_answer() -> None:
    # the 2026-07-28 client reads an answer in the caller's task (a path of its own since the perf
    # work): the forged 404 after server/discover's answer must not answer the next request
    forged = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
    raw = RawMcpServer(after={"server/discover": forged})
    async with tcp_server(raw.handle) as port:
        async with open_http_client(f"http://127.0.0.1:{port}/mcp") as client:
            with trio.fail_after(10):
                await client.ping()  # (a server/discover round trip in 2026-07-28)
    assert raw.methods == ["server/discover", "server/discover"] and raw.connections == 2


@pytest.mark.parametrize(("era", "method"), [("legacy", "initialize"), ("modern", "server/discover")])
async def test_an_answer_with_both_lengths_fails_its_request(era: str, method: str) -> None:
    both = [b"Transfer-Encoding: chunked", b"Content-Length: 5"]
    raw = RawMcpServer(extra_headers={method: both})
    async with tcp_server(raw.handle) as port:
        # (the 2026-07-28 opening fails as a server not speaking it, naming the HTTP failure: an
        # UnsupportedProtocolVersion that also names the revision its initialize answered)
        with pytest.raises((HTTPTransportError, UnsupportedProtocolVersion)) as failed, trio.fail_after(10):
            async with open_http_client(f"http://127.0.0.1:{port}/mcp", era=era):
                pass
    assert "both Transfer-Encoding and Content-Length" in str(failed.value)


@pytest.mark.parametrize("size", [DEFAULT_HEAD_LIMIT, DEFAULT_HEAD_LIMIT + 1])
async def test_the_client_reads_an_answer_head_up_to_the_limit(size: int) -> None:
    length = b"Content-Length: %d" % len(initialize_answer(1))
    start = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n" + length
    pad = size - len(start) - len(b"\r\nX-Pad: ") - len(b"\r\n\r\n")
    # (in two parts: a head that comes whole in one read was never the problem)
    raw = RawMcpServer(extra_headers={"initialize": [length, b"X-Pad: " + b"p" * pad]}, split_at=16_000)
    async with tcp_server(raw.handle) as port:
        if size == DEFAULT_HEAD_LIMIT:
            async with open_http_client(f"http://127.0.0.1:{port}/mcp", era="legacy") as client:
                await client.ping()
        else:
            with pytest.raises(HTTPTransportError), trio.fail_after(10):
                async with open_http_client(f"http://127.0.0.1:{port}/mcp", era="legacy"):
                    pass


@pytest.mark.parametrize("size", [DEFAULT_HEAD_LIMIT, DEFAULT_HEAD_LIMIT + 1])
async def test_an_oauth_fetch_reads_an_answer_head_up_to_the_limit(size: int) -> None:
    start = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Pad: "
    head = start + b"p" * (size - len(start) - 4) + b"\r\n\r\n"
    assert len(head) == size

    async def handler(stream: trio.SocketStream) -> None:
        await read_request(stream, h11.Connection(h11.SERVER))
        await write_in_two(stream, head + b"{}", 16_000)
        await stream.aclose()

    async with tcp_server(handler) as port:
        if size == DEFAULT_HEAD_LIMIT:
            assert (await http_exchange("GET", f"http://127.0.0.1:{port}/doc")).json() == {}
        else:
            with pytest.raises(HTTPTransportError):
                await http_exchange("GET", f"http://127.0.0.1:{port}/doc")


async def test_an_oauth_fetch_refuses_an_answer_with_both_lengths() -> None:
    async def handler(stream: trio.SocketStream) -> None:
        await read_request(stream, h11.Connection(h11.SERVER))
        await stream.send_all(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n" + chunked(b"{}")
        )
        await stream.aclose()

    async with tcp_server(handler) as port:
        with pytest.raises(HTTPTransportError) as failed:
            await http_exchange("GET", f"http://127.0.0.1:{port}/doc")
    assert "both Transfer-Encoding and Content-Length" in str(failed.value)
