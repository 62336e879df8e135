"""Streamable HTTP: sans-IO pieces, the server's HTTP rules, resumability, and the transport check."""

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any
from unittest.mock import ANY
from urllib.parse import urlsplit

import h11
import pytest
import trio

from mcp_ref.basic.transports.http_server import HttpConfig, HttpServerInfo, _HttpSession, serve_http
from mcp_ref.basic.transports.streamable_http import (
    EventStore,
    SSEDecoder,
    SSEEvent,
    StoreBudget,
    accepts,
    encode_sse,
    host_allowed,
    make_event_id,
    new_session_id,
    origin_allowed,
    parse_event_id,
    valid_session_id,
    version_header_ok,
)
from mcp_ref.session import RequestContext, Server
from mcp_ref.session.http import open_http_client
from mcp_ref.testing.transport_check import check_server, check_transport

from ._raw_http import read_response
from ._servers import Tally

# -- sans-IO ------------------------------------------------------------------------------------


def test_sse_round_trip_and_split_feeding() -> None:
    wire = encode_sse('{"a":1}', id="r1.3", retry=500) + encode_sse("line1\nline2") + b": comment\n\n"
    decoder = SSEDecoder()
    events = []
    for i in range(len(wire)):  # byte by byte
        events += decoder.feed(wire[i : i + 1])
    assert events == [SSEEvent(data='{"a":1}', id="r1.3", retry=500), SSEEvent(data="line1\nline2")]
    assert decoder.last_event_id == "r1.3"
    assert SSEDecoder().feed(b"id: x\r\ndata: \r\n\r\n") == [SSEEvent(data="", id="x")]


def test_sse_line_ends_split_between_chunks() -> None:
    decoder = SSEDecoder()
    # "\r" then "\n" in the next chunk is one line end, not an empty line that ends the event
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\nid: r1.5\r\n\r") == [SSEEvent(data="a", id="r1.5")]
    assert decoder.feed(b"\n\rdata: b\r\r") == [SSEEvent(data="b")]


def test_an_sse_event_over_the_limit_is_dropped_as_it_arrives() -> None:
    decoder = SSEDecoder(max_event_size=1000)
    message = b'{"jsonrpc":"2.0","id":7,"result":{"text":"'
    events = decoder.feed(b"id: r1.2\ndata: " + message)
    for _ in range(100):  # 640 KB in one line, fed as it arrives: never held whole
        events += decoder.feed(b"x" * 6400)
        assert len(decoder._buf) - decoder._start <= 1000 + 6400
    events += decoder.feed(b'"}}\n\ndata: {"small":1}\n\n')
    dropped, small = events
    assert dropped.data is None and dropped.id == "r1.2" and dropped.too_large is not None
    assert dropped.too_large > 640_000 and dropped.head.startswith(message)
    assert small == SSEEvent(data='{"small":1}')
    # many short data lines adding up past the limit: the event's data goes too
    (many,) = decoder.feed(b"data: 0123456789\n" * 200 + b"\n")
    assert many.data is None and many.too_large is not None and many.too_large >= 2000
    assert many.head.startswith(b"0123456789\n0123456789")


def test_sse_fields_we_would_not_act_on() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b"retry: " + b"9" * 5000 + b"\nretry: \xc2\xb2\nid: " + b"i" * 2000 + b"\ndata: x\n\n")
    assert events == [SSEEvent(data="x")] and decoder.last_event_id is None


@pytest.mark.req("basic/transports#16", "basic/transports#38")
def test_accept_header_rules() -> None:
    assert accepts("application/json, text/event-stream", "application/json", "text/event-stream")
    assert accepts("text/event-stream;q=0.9, application/*", "application/json", "text/event-stream")
    assert not accepts("application/json", "application/json", "text/event-stream")
    assert not accepts(None, "text/event-stream")


@pytest.mark.req("basic/transports#56", "basic/transports#57", "basic/transports#50", "basic/transports#51")
def test_session_and_event_ids() -> None:
    ids = {new_session_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(valid_session_id(i) and len(i) == 32 for i in ids)
    assert not valid_session_id("has space") and not valid_session_id("é")
    assert parse_event_id(make_event_id("r7", 42)) == ("r7", 42)
    assert parse_event_id("garbage") is None


@pytest.mark.req("basic/transports#9", "basic/transports#10")
def test_origin_and_host_checks() -> None:
    assert origin_allowed(None, None)
    assert origin_allowed("http://localhost:3000", None) and origin_allowed("http://127.0.0.1", None)
    assert not origin_allowed("http://evil.example", None)
    assert not origin_allowed("http://[::1", None) and not origin_allowed("http://[::1", ["http://[::1"])
    assert origin_allowed("https://app.example", ["https://app.example"])
    assert host_allowed("127.0.0.1:8000", None) and host_allowed("[::1]:80", None) and host_allowed("localhost", None)
    assert not host_allowed("evil.example:8000", None) and not host_allowed(None, None)


@pytest.mark.req("basic/transports#67", "basic/transports#68")
def test_protocol_version_header() -> None:
    assert version_header_ok(None) and version_header_ok("2025-06-18")
    assert not version_header_ok("1999-01-01")


@pytest.mark.req("basic/transports#53", "basic/transports#54")
def test_event_store_replays_one_stream_only() -> None:
    store = EventStore(max_events_per_stream=3)
    for seq in range(1, 6):
        store.store("r1", seq, f"r1-{seq}".encode())
        store.store("g2", seq, f"g2-{seq}".encode())
    assert [s for s, _ in store.replay_after("r1", 3) or []] == [4, 5]
    assert [d for _, d in store.replay_after("g2", 4) or []] == [b"g2-5"]
    assert store.replay_after("nope", 0) is None


def test_event_store_evicts_finished_streams_first() -> None:
    evicted: list[str] = []
    store = EventStore(max_streams=2, on_evict=evicted.append)
    store.store("g1", 1, b"get stream, never finished")
    for n in range(2, 6):
        store.store(f"r{n}", 1, b"short request")
        assert store.finished(f"r{n}")
    assert evicted == ["r2", "r3", "r4"]
    assert store.replay_after("g1", 0) == [(1, b"get stream, never finished")]
    store.store("r6", 1, b"x")  # nothing finished is left but r5: it goes
    store.store("r7", 1, b"x")  # only unfinished streams: the oldest goes
    assert evicted[-2:] == ["r5", "g1"] and not store.finished("g1")


def test_event_store_is_bounded_in_bytes_finished_streams_first() -> None:
    evicted: list[str] = []
    store = EventStore(max_bytes=100, on_evict=evicted.append)
    store.store("g1", 1, b"g" * 30)
    store.store("r2", 1, b"r" * 30)
    store.finished("r2")
    store.store("g1", 2, b"g" * 30)
    assert store.bytes == 90 and not evicted
    store.store("g1", 3, b"g" * 30)  # 120 bytes: the finished stream goes first, whole
    assert evicted == ["r2"] and store.bytes == 90
    store.store("g1", 4, b"g" * 30)  # then the oldest events of the open streams
    assert [s for s, _ in store.replay_after("g1", 0) or []] == [2, 3, 4] and store.bytes == 90
    store.store("r5", 1, b"r" * 200)  # bigger than the whole store: nothing of it is kept ...
    assert store.bytes <= 100
    assert store.replay_after("r5", 0) == []  # ... but the open stream stays known (it resumes live)


def test_a_shared_budget_takes_from_the_store_that_keeps_most() -> None:
    budget = StoreBudget(100)
    big, small = EventStore(budget=budget), EventStore(budget=budget)
    for seq in range(1, 4):
        big.store("g1", seq, b"b" * 30)
    small.store("g1", 1, b"s" * 30)  # 120 in all: the big store gives up its oldest event
    assert budget.used == 90 and big.bytes == 60 and small.bytes == 30
    assert [s for s, _ in big.replay_after("g1", 0) or []] == [2, 3]
    big.close()  # a session ends: its bytes are free again
    assert budget.used == 30


# -- a live server ---------------------------------------------------------------------------------


@asynccontextmanager
async def http_server(server: Server, **options: Any) -> AsyncIterator[HttpServerInfo]:
    async with trio.open_nursery() as nursery:
        info: HttpServerInfo = await nursery.start(
            lambda task_status: serve_http(server, task_status=task_status, **options)
        )
        yield info
        nursery.cancel_scope.cancel()


def hanging_server() -> tuple[Server, trio.Event, trio.Event]:
    """A server whose tool ``hang`` never returns; the events say it started and was cancelled."""
    server = Server("hangs")
    started, cancelled = trio.Event(), trio.Event()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    return server, started, cancelled


@asynccontextmanager
async def tcp_server(handler: Callable[[trio.SocketStream], Awaitable[None]]) -> AsyncIterator[int]:
    """``handler`` serves each connection made to 127.0.0.1 on the port given."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
        yield listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()


async def read_request(stream: trio.abc.Stream, conn: h11.Connection) -> tuple[h11.Request, bytes] | None:
    """For a raw test server: the next request on ``conn``, head and body; None when the client closed first."""
    head, body = None, b""
    while not isinstance(event := conn.next_event(), h11.EndOfMessage):
        if event is h11.NEED_DATA:
            data = await stream.receive_some(65536)
            if not data:
                return None
            conn.receive_data(data)
        elif isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += bytes(event.data)
    assert head is not None
    return head, body


async def raw(
    url: str, method: str, headers: dict[str, str] | None = None, body: Any = None
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP exchange, read to the end."""
    parts = urlsplit(url)
    stream = await trio.open_tcp_stream(parts.hostname or "127.0.0.1", parts.port or 80)
    conn = h11.Connection(h11.CLIENT)
    hdrs = {"host": parts.netloc, "connection": "close", **(headers or {})}
    data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    if body is not None:
        hdrs.setdefault("content-type", "application/json")
        hdrs["content-length"] = str(len(data))
    out = conn.send(h11.Request(method=method, target=parts.path, headers=list(hdrs.items()))) or b""
    out += (conn.send(h11.Data(data=data)) or b"") if data else b""
    out += conn.send(h11.EndOfMessage()) or b""
    await stream.send_all(out)
    answer = await read_response(conn, stream)
    await stream.aclose()
    return answer


class Exchange:
    """One HTTP exchange whose answer is read as it comes (an SSE stream, typically)."""

    def __init__(self, stream: trio.abc.Stream, conn: h11.Connection) -> None:
        self.stream = stream
        self.conn = conn
        self.status = 0
        self.headers: dict[str, str] = {}
        self.decoder = SSEDecoder()
        self.ended = False
        #: the answer ended with its last chunk (not a dropped connection)
        self.complete = False

    async def _next(self) -> h11.Event | type[h11.NEED_DATA]:
        event = self.conn.next_event()
        if event is h11.NEED_DATA:
            self.conn.receive_data(bytes(await self.stream.receive_some(65536)))
        return event

    async def head(self) -> None:
        with trio.fail_after(10):
            while not self.status:
                event = await self._next()
                if isinstance(event, h11.Response):
                    self.status = event.status_code
                    self.headers = {k.decode().lower(): v.decode() for k, v in event.headers}

    async def events(self) -> list[SSEEvent]:
        """The next SSE events (empty once the answer has ended)."""
        with trio.fail_after(10):
            while not self.ended:
                try:
                    event = await self._next()
                except h11.RemoteProtocolError:  # the connection dropped mid-answer
                    self.ended = True
                    break
                if isinstance(event, h11.Data):
                    if found := self.decoder.feed(bytes(event.data)):
                        return found
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    self.ended = True
                    self.complete = isinstance(event, h11.EndOfMessage)
        return []

    async def body(self) -> bytes:
        """The raw body, read to its end (for answers that are not event streams)."""
        chunks = []
        with trio.fail_after(10):
            while not isinstance(event := await self._next(), h11.EndOfMessage | h11.ConnectionClosed):
                if isinstance(event, h11.Data):
                    chunks.append(bytes(event.data))
        return b"".join(chunks)

    async def rest(self) -> list[SSEEvent]:
        """Every event until the answer ends."""
        found = []
        while batch := await self.events():
            found += batch
        return found


async def send_request(
    stream: trio.abc.Stream, netloc: str, path: str, method: str, headers: dict[str, str] | None, body: Any
) -> Exchange:
    """Write one request on ``stream`` and read its answer's head."""
    conn = h11.Connection(h11.CLIENT)
    hdrs = {"host": netloc, "connection": "close", **(headers or {})}
    data = b"" if body is None else json.dumps(body).encode()
    if body is not None:
        hdrs |= {"content-type": "application/json", "content-length": str(len(data))}
    out = conn.send(h11.Request(method=method, target=path, headers=list(hdrs.items()))) or b""
    out += (conn.send(h11.Data(data=data)) or b"") if data else b""
    await stream.send_all(out + (conn.send(h11.EndOfMessage()) or b""))
    ex = Exchange(stream, conn)
    await ex.head()
    return ex


@asynccontextmanager
async def exchange(
    url: str, method: str, headers: dict[str, str] | None = None, body: Any = None
) -> AsyncIterator[Exchange]:
    """Send one request, read the answer's head, and let the caller read the body as it comes."""
    parts = urlsplit(url)
    stream = await trio.open_tcp_stream(parts.hostname or "127.0.0.1", parts.port or 80)
    async with stream:
        yield await send_request(stream, parts.netloc, parts.path, method, headers, body)


ACCEPT_BOTH = {"accept": "application/json, text/event-stream"}
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}


def sse_messages(body: bytes) -> list[Any]:
    return [json.loads(e.data) for e in SSEDecoder().feed(body) if e.data]


async def start_session(url: str, version: str = "2025-11-25") -> dict[str, str]:
    init = {**INIT, "params": {**INIT_PARAMS, "protocolVersion": version}}
    status, headers, body = await raw(url, "POST", ACCEPT_BOTH, init)
    assert status == 200
    sid = headers["mcp-session-id"]
    answer = json.loads(body) if headers["content-type"] == "application/json" else sse_messages(body)[0]
    assert answer["result"]["protocolVersion"] == version
    session = {**ACCEPT_BOTH, "mcp-session-id": sid, "mcp-protocol-version": version}
    status, _, _ = await raw(url, "POST", session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202
    return session


@pytest.mark.req(
    "basic/transports#8",
    "basic/transports#14",
    "basic/transports#15",
    "basic/transports#17",
    "basic/transports#18",
    "basic/transports#21",
    "basic/transports#23",
    "basic/transports#28",
    "basic/transports#32",
    "basic/transports#55",
    "basic/transports#59",
)
@pytest.mark.req("basic/transports#49", "basic/transports#56", "basic/transports#57")
async def test_post_rules() -> None:
    async with http_server(check_server()) as info:
        url = info.url
        session = await start_session(url)
        assert valid_session_id(session["mcp-session-id"]) and len(session["mcp-session-id"]) == 32
        status, headers, body = await raw(url, "POST", session, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        events = SSEDecoder().feed(body)
        assert status == 200 and headers["content-type"] == "text/event-stream"
        assert events[0].data == "" and events[0].id and events[0].retry  # priming event
        assert json.loads(events[-1].data or "") == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert len({e.id for e in events}) == len(events)


@pytest.mark.req(
    "basic/transports#19",
    "basic/transports#20",
    "basic/transports#60",
    "basic/transports#61",
    "basic/transports#11",
    "basic/transports#12",
    "basic/transports#16",
)
async def test_http_errors() -> None:
    async with http_server(check_server(), max_body=10_000) as info:
        url = info.url
        assert (await raw(url, "POST", {"accept": "application/json"}, INIT))[0] == 406
        assert (await raw(url, "POST", {**ACCEPT_BOTH, "content-type": "text/plain"}, INIT))[0] == 415
        status, _, body = await raw(url, "POST", ACCEPT_BOTH, b"{not json")
        assert status == 400 and json.loads(body)["error"]["code"] == -32700 and json.loads(body)["id"] is None
        assert (await raw(url, "POST", ACCEPT_BOTH, {"jsonrpc": "2.0", "id": 3, "method": "ping"}))[0] == 400
        # a batch never stands alone as a 2026-07-28 request, so without a session id it is a 400
        batch = [{"jsonrpc": "2.0", "id": 4, "method": "ping"}]
        status, _, body = await raw(url, "POST", ACCEPT_BOTH, batch)
        assert status == 400 and "missing MCP-Session-Id" in json.loads(body)["error"]["message"]
        unknown = {**ACCEPT_BOTH, "mcp-session-id": "deadbeef"}
        assert (await raw(url, "POST", unknown, {"jsonrpc": "2.0", "id": 3, "method": "ping"}))[0] == 404
        status, _, body = await raw(url, "POST", ACCEPT_BOTH, {"pad": "x" * 20_000})
        assert status == 413 and json.loads(body)["error"]["code"] == -32600 and json.loads(body)["id"] is None
        # a declared length over the limit is refused before the body is sent at all
        stream = await trio.open_tcp_stream("127.0.0.1", info.port)
        async with stream:
            conn = h11.Connection(h11.CLIENT)
            headers = [("host", "127.0.0.1"), ("content-type", "application/json"), ("content-length", "10000000")]
            await stream.send_all(conn.send(h11.Request(method="POST", target="/mcp", headers=headers)) or b"")
            answer = Exchange(stream, conn)
            await answer.head()
            assert answer.status == 413
        status, headers, body = await raw(url, "PUT", ACCEPT_BOTH, INIT)
        assert status == 405 and headers["allow"] == "GET, POST, DELETE"
        # an HTTP-level error is a JSON-RPC error of no request: "id": null, as JSON-RPC 2.0 writes
        # it (and the official SDKs read it; spec_notes/basic/transports.md)
        assert json.loads(body) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": ANY}}
        assert (await raw(url.replace("/mcp", "/other"), "POST", ACCEPT_BOTH, INIT))[0] == 404
        assert info.host == "127.0.0.1"


@pytest.mark.req("basic/transports#17", "basic/transports#19", "basic/transports#20", "basic/transports#42")
@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"foo": 1}, -32600),
        (42, -32600),
        ("str", -32600),
        ([], -32600),
        ([{"jsonrpc": "2.0", "id": 2, "method": "ping"}], -32600),  # no batches in 2025-11-25
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "result": {}}, -32600),  # a response without an id
        (b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":NaN}}', -32700),
        (b"\xff\xfe not UTF-8", -32700),
    ],
)
async def test_invalid_bodies_are_refused_with_400(body: Any, code: int) -> None:
    async with http_server(check_server()) as info:
        session = await start_session(info.url)
        status, _, answer = await raw(info.url, "POST", session, body)
        error = json.loads(answer)
        assert status == 400 and error["error"]["code"] == code and error["id"] is None
        # the session survives, and nothing went out on its GET stream (no stray error response)
        async with exchange(info.url, "GET", {**session, "accept": "text/event-stream"}) as get:
            assert get.status == 200
            (priming,) = await get.events()
            assert priming.data == ""
            status, _, answer = await raw(info.url, "POST", session, {"jsonrpc": "2.0", "id": 3, "method": "ping"})
            assert status == 200 and sse_messages(answer)[-1] == {"jsonrpc": "2.0", "id": 3, "result": {}}
            assert (await raw(info.url, "DELETE", session))[0] == 200
            assert await get.rest() == []  # the stream ended with the session, having carried nothing


@pytest.mark.req("basic/transports#17", "2025-03-26:basic/index#14", "2025-03-26:basic/lifecycle#3")
async def test_batches_only_in_2025_03_26() -> None:
    async with http_server(check_server()) as info:
        session = await start_session(info.url, "2025-03-26")
        batch = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in (2, 3)]
        status, headers, body = await raw(info.url, "POST", session, batch)
        assert status == 200
        answers = [m for p in sse_messages(body) for m in (p if isinstance(p, list) else [p])]
        assert sorted(m["id"] for m in answers) == [2, 3]
        init_batch = [{**INIT, "params": {**INIT_PARAMS, "protocolVersion": "2025-03-26"}}]
        status, _, body = await raw(info.url, "POST", ACCEPT_BOTH, init_batch)
        assert status == 400 and json.loads(body)["error"]["code"] == -32600


async def test_a_batch_over_the_limit_is_refused_before_any_of_it_is_handled() -> None:
    tally = Tally()
    async with http_server(tally.server, max_batch=3) as info:
        session = await start_session(info.url, "2025-03-26")
        batch = tally.batch(4)
        status, _, body = await raw(info.url, "POST", session, batch)
        assert status == 400 and json.loads(body)["error"]["code"] == -32600 and json.loads(body)["id"] is None
        assert "a batch of 4 messages; at most 3" in json.loads(body)["error"]["message"]
        status, _, body = await raw(info.url, "POST", session, batch[:3])
        assert status == 200 and tally.calls == 3  # (none of the refused batch ran)


@pytest.mark.req("basic/transports#17", "basic/transports#21", "2025-03-26:basic/transports#22")
async def test_a_batch_answered_as_json_is_an_array() -> None:
    # even a batch of one request (with a notification here), and even in the SSE mode's
    # plain-JSON answer to tasks/get: a JSON-RPC batch is answered with an array
    for options in ({"json_response": True}, {}):
        async with http_server(check_server(), **options) as info:
            session = await start_session(info.url, "2025-03-26")
            ping = [
                {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 1}},
            ]
            if options:
                status, headers, body = await raw(info.url, "POST", session, ping)
                assert status == 200 and json.loads(body) == [{"jsonrpc": "2.0", "id": 2, "result": {}}]
            get = [{"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "none"}}]
            status, headers, body = await raw(info.url, "POST", session, get)
            assert status == 200 and headers["content-type"] == "application/json"
            (answer,) = json.loads(body)
            assert answer["id"] == 3 and "error" in answer


@pytest.mark.req("basic/transports#23")
@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18"])
async def test_no_priming_event_for_older_revisions(version: str) -> None:
    async with http_server(check_server()) as info:
        init = {**INIT, "params": {**INIT_PARAMS, "protocolVersion": version}}
        status, _, body = await raw(info.url, "POST", ACCEPT_BOTH, init)
        assert status == 200 and all(e.data for e in SSEDecoder().feed(body))
        session = await start_session(info.url, version)
        status, _, body = await raw(info.url, "POST", session, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        (event,) = SSEDecoder().feed(body)
        assert json.loads(event.data or "") == {"jsonrpc": "2.0", "id": 2, "result": {}}
        async with exchange(info.url, "GET", {**session, "accept": "text/event-stream"}) as get:
            assert (await raw(info.url, "DELETE", session))[0] == 200
            assert await get.rest() == []


async def test_a_request_id_in_flight_is_refused_and_the_first_gets_its_answer() -> None:
    server = Server("busy")
    release = trio.Event()

    @server.tool()
    async def wait(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await release.wait()
        return "first"

    async with http_server(server) as info:
        session = await start_session(info.url)
        call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "wait"}}
        async with exchange(info.url, "POST", session, call) as first:
            assert first.status == 200
            status, _, body = await raw(info.url, "POST", session, {"jsonrpc": "2.0", "id": 5, "method": "ping"})
            assert status == 409 and json.loads(body)["id"] is None
            release.set()
            (result,) = [json.loads(e.data) for e in await first.rest() if e.data]
            assert result["id"] == 5 and result["result"]["content"][0]["text"] == "first"


@pytest.mark.req("basic/utilities/cancellation#4", "basic/transports#18")
async def test_a_cancelled_json_request_gets_an_empty_answer() -> None:
    server, started, cancelled = hanging_server()
    async with http_server(server, json_response=True) as info:
        session = await start_session(info.url)
        call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hang"}}
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                answers: list[int] = []

                async def post() -> None:
                    answers.append((await raw(info.url, "POST", session, call))[0])

                nursery.start_soon(post)
                await started.wait()
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
                # the notification is accepted (202, no body) and reaches the session: the handler stops
                assert (await raw(info.url, "POST", session, cancel))[::2] == (202, b"")
                await cancelled.wait()
        assert answers == [202]  # no response will come, and the POST is not left waiting


@pytest.mark.req("basic/transports#9", "basic/transports#10")
async def test_dns_rebinding_protection() -> None:
    async with http_server(check_server()) as info:
        status, _, body = await raw(info.url, "POST", {**ACCEPT_BOTH, "origin": "http://evil.example"}, INIT)
        assert status == 403 and json.loads(body)["error"]["message"].startswith("Forbidden")
        assert (await raw(info.url, "POST", {**ACCEPT_BOTH, "host": "evil.example"}, INIT))[0] == 403
        assert (await raw(info.url, "POST", {**ACCEPT_BOTH, "origin": "http://localhost:6274"}, INIT))[0] == 200


@pytest.mark.req(
    "basic/transports#65", "basic/transports#66", "basic/transports#67", "basic/transports#68", "basic/lifecycle#13"
)
async def test_protocol_version_header_rules() -> None:
    async with http_server(check_server()) as info:
        session = await start_session(info.url)
        bad = {**session, "mcp-protocol-version": "1999-01-01"}
        assert (await raw(info.url, "POST", bad, {"jsonrpc": "2.0", "id": 5, "method": "ping"}))[0] == 400
        absent = {k: v for k, v in session.items() if k != "mcp-protocol-version"}
        assert (await raw(info.url, "POST", absent, {"jsonrpc": "2.0", "id": 6, "method": "ping"}))[0] == 200


@pytest.mark.req("basic/transports#37", "basic/transports#39", "basic/transports#40", "basic/transports#63")
@pytest.mark.req("basic/transports#31", "basic/transports#44", "basic/transports#38")
async def test_get_and_delete() -> None:
    async with http_server(check_server()) as info:
        session = await start_session(info.url)
        listen = {**session, "accept": "text/event-stream"}
        async with exchange(info.url, "GET", listen) as first:
            (priming,) = await first.events()
            assert first.status == 200 and priming.retry and priming.id and priming.data == ""
            # a second GET takes the stream over (the first may be a client that vanished):
            # the first connection ends, and only the second carries messages from now on
            async with exchange(info.url, "GET", listen) as second:
                assert second.status == 200
                assert await first.rest() == []
                (priming,) = await second.events()
                # deleting the session ends its streams
                assert (await raw(info.url, "DELETE", session))[0] == 200
                assert await second.rest() == []
        session = await start_session(info.url)
        no_sse = {**session, "accept": "application/json"}
        assert (await raw(info.url, "GET", no_sse))[0] == 406
        assert (await raw(info.url, "DELETE", session))[0] == 200
        assert (await raw(info.url, "POST", session, {"jsonrpc": "2.0", "id": 7, "method": "ping"}))[0] == 404
    async with http_server(check_server(), get_stream=False) as info:
        session = await start_session(info.url)
        assert (await raw(info.url, "GET", {**session, "accept": "text/event-stream"}))[0] == 405


@pytest.mark.req(
    "basic/transports#22",
    "basic/transports#25",
    "basic/transports#26",
    "basic/transports#27",
    "basic/transports#24",
    "basic/transports#33",
    "basic/transports#34",
    "basic/transports#36",
    "basic/transports#52",
    "basic/transports#53",
    "basic/transports#54",
)
@pytest.mark.req("basic/transports#29", "basic/transports#30", "basic/transports#48")
async def test_stream_closed_mid_call_is_resumed() -> None:
    server = Server("resumable")

    @server.tool()
    async def interrupt(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1)
        await ctx.session.channel.close_request_stream(ctx.request_id)  # type: ignore[attr-defined]
        await ctx.progress(2)  # while the client is away: kept for its resumption
        return "after the break"

    async with http_server(server, retry_ms=50) as info, open_http_client(info.url, era="legacy") as client:
        seen: list[float] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            seen.append(p)

        result = await client.call_tool("interrupt", progress=on_progress, timeout=10)
        assert result.content[0].text == "after the break"  # type: ignore[union-attr]
        assert seen == [1, 2]


@pytest.mark.req(
    "basic/transports#34", "basic/transports#36", "basic/transports#49", "basic/transports#52", "basic/transports#53"
)
async def test_disconnect_is_not_a_cancellation() -> None:
    server = Server("patient")
    finished = trio.Event()
    client_gone = trio.Event()

    @server.tool()
    async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await client_gone.wait()
        finished.set()
        return "done anyway"

    async with http_server(server) as info:
        session = await start_session(info.url)
        call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "slow"}}
        parts = urlsplit(info.url)
        stream = await trio.open_tcp_stream("127.0.0.1", parts.port or 80)
        conn = h11.Connection(h11.CLIENT)
        data = json.dumps(call).encode()
        hdrs = {"host": parts.netloc, **session, "content-type": "application/json", "content-length": str(len(data))}
        await stream.send_all(
            (conn.send(h11.Request(method="POST", target="/mcp", headers=list(hdrs.items()))) or b"")
            + (conn.send(h11.Data(data=data)) or b"")
            + (conn.send(h11.EndOfMessage()) or b"")
        )
        decoder = SSEDecoder()
        with trio.fail_after(5):
            while decoder.last_event_id is None:  # read until the priming event
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await stream.receive_some(65536))
                elif isinstance(event, h11.Data):
                    decoder.feed(bytes(event.data))
        await stream.aclose()  # gone before the answer
        client_gone.set()
        last_id = decoder.last_event_id
        with trio.fail_after(5):
            await finished.wait()
        status, _, body = await raw(
            info.url, "GET", {**session, "accept": "text/event-stream", "last-event-id": last_id}
        )
        assert status == 200
        assert sse_messages(body)[-1]["result"]["content"][0]["text"] == "done anyway"


@pytest.mark.req("basic/transports#24", "basic/transports#26", "basic/transports#43", "basic/transports#44")
async def test_a_request_stream_closed_by_the_server_says_when_to_come_back() -> None:
    server = Server("polls")
    go = trio.Event()

    @server.tool()
    async def interrupt(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.session.channel.close_request_stream(ctx.request_id)  # type: ignore[attr-defined]
        await go.wait()
        return "after the break"

    async with http_server(server, retry_ms=50) as info:
        session = await start_session(info.url)
        call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "interrupt"}}
        async with exchange(info.url, "POST", session, call) as post:
            events = await post.rest()
        # the connection ended without the answer, its last event saying when to come back
        assert post.complete and not any(e.data for e in events)
        assert events[-1].retry == 50 and events[-1].id is None
        go.set()
        resume = {**session, "accept": "text/event-stream", "last-event-id": post.decoder.last_event_id or ""}
        status, _, body = await raw(info.url, "GET", resume)
        assert status == 200
        assert sse_messages(body)[-1]["result"]["content"][0]["text"] == "after the break"


@pytest.mark.req("basic/transports#29", "basic/transports#30")
async def test_messages_about_a_request_go_on_its_stream() -> None:
    server = Server("reports")

    @server.tool()
    async def work(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, 2, "half")
        return "done"

    async with http_server(server) as info:
        session = await start_session(info.url)  # (no GET stream is open)
        call = {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "work", "_meta": {"progressToken": "t"}},
        }
        status, _, body = await raw(info.url, "POST", session, call)
        progress, result = sse_messages(body)
        assert status == 200 and progress["method"] == "notifications/progress"
        assert progress["params"] == {"progressToken": "t", "progress": 1, "total": 2, "message": "half"}
        assert result["id"] == 4 and result["result"]["content"][0]["text"] == "done"


async def next_message(ex: Exchange) -> Any:
    """The next JSON-RPC message on an SSE answer (events without data are skipped)."""
    while True:
        for event in await ex.events():
            if event.data:
                return json.loads(event.data)


@pytest.mark.req("basic/transports#46", "basic/transports#31")
async def test_a_client_may_hold_several_streams_at_once() -> None:
    server = Server("streams")

    @server.tool()
    async def wait(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, message=arguments["name"])
        await trio.sleep_forever()
        return "never"

    def call(rid: int, name: str) -> dict[str, Any]:
        params = {"name": "wait", "arguments": {"name": name}, "_meta": {"progressToken": name}}
        return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}

    async with http_server(server) as info:
        session = await start_session(info.url)
        with trio.fail_after(10):
            async with (
                exchange(info.url, "POST", session, call(1, "a")) as a,
                exchange(info.url, "POST", session, call(2, "b")) as b,
                exchange(info.url, "GET", {**session, "accept": "text/event-stream"}) as get,
            ):
                # each request's stream carries its own progress, all open at once
                for ex, name in ((a, "a"), (b, "b")):
                    note = await next_message(ex)
                    assert note["params"]["progressToken"] == name and note["params"]["message"] == name
                # ending the session ends every one of its streams, with nothing more on them
                assert (await raw(info.url, "DELETE", session))[0] == 200
                for ex in (a, b, get):
                    assert not [e for e in await ex.rest() if e.data] and ex.ended


@pytest.mark.req("basic/transports#47", "basic/transports#30", "basic/transports#41")
async def test_with_two_streams_open_each_message_goes_on_exactly_one() -> None:
    server = Server("one stream each")

    @server.tool()
    async def work(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, 2, "half")  # related to the request: its POST stream

        @server.tool()  # a registry change: notifications/tools/list_changed, related to nothing
        async def added(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return "new"

        return "done"

    params = {"name": "work", "_meta": {"progressToken": "t"}}
    call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params}
    async with http_server(server) as info:
        session = await start_session(info.url)
        with trio.fail_after(10):
            async with exchange(info.url, "GET", {**session, "accept": "text/event-stream"}) as get:
                (priming,) = await get.events()  # the GET stream is open before anything is sent
                assert priming.data == ""
                async with exchange(info.url, "POST", session, call) as post:
                    on_post = [json.loads(e.data) for e in await post.rest() if e.data]
                # the request's stream: its progress, then its response, each once, and nothing else
                assert [m.get("method", m.get("id")) for m in on_post] == ["notifications/progress", 4]
                # the GET stream: the unrelated notification, once; neither the progress nor the response
                assert (await next_message(get))["method"] == "notifications/tools/list_changed"
                assert (await raw(info.url, "DELETE", session))[0] == 200
                assert not [e.data for e in await get.rest() if e.data] and get.ended


@pytest.mark.req("basic/transports#42", "basic/transports#47")
async def test_a_response_whose_stream_is_gone_is_dropped_not_put_on_the_get_stream() -> None:
    session = _HttpSession("s", HttpConfig())
    session.get_stream = session.new_stream(None, standalone=True)
    listener = session.get_stream.attach(session.config)
    # a response to a request that has no stream (cancelled, or never posted): dropped
    assert session.route(b'{"jsonrpc":"2.0","id":7,"result":{}}', None) is None
    with pytest.raises(trio.WouldBlock):
        listener.receive_nowait()
    # while a message unrelated to any request goes on the GET stream, once
    note = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    assert session.route(note, None) is session.get_stream
    assert json.loads(SSEDecoder().feed(listener.receive_nowait() or b"")[0].data or "")["method"].endswith(
        "list_changed"
    )
    with pytest.raises(trio.WouldBlock):
        listener.receive_nowait()


@pytest.mark.req("basic/transports#63")
async def test_deleting_the_session_cancels_its_running_requests() -> None:
    server, started, cancelled = hanging_server()
    async with http_server(server) as info:
        session = await start_session(info.url)
        call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hang"}}
        with trio.fail_after(10):
            async with exchange(info.url, "POST", session, call) as post:
                await started.wait()
                assert (await raw(info.url, "DELETE", session))[0] == 200
                await cancelled.wait()
                assert not [e for e in await post.rest() if e.data]  # and no answer comes


@pytest.mark.req("basic/utilities/tasks#29")
@pytest.mark.req(
    "basic/transports#40",
    "basic/transports#41",
    "basic/transports#42",
    "basic/transports#43",
    "basic/transports#46",
    "basic/transports#47",
)
async def test_unrelated_messages_use_the_get_stream() -> None:
    server = check_server()
    got: list[str] = []
    arrived = trio.Event()

    async def on_list_changed(kind: str) -> None:
        got.append(kind)
        arrived.set()

    async with (
        http_server(server) as info,
        open_http_client(info.url, on_list_changed=on_list_changed, era="legacy") as client,
    ):

        @server.tool()
        async def added(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return "new"

        with trio.fail_after(5):
            await arrived.wait()
        assert got == ["tools"]
        assert (await client.call_tool("added")).content[0].text == "new"  # type: ignore[union-attr]


@pytest.mark.req("basic/transports#69", "basic/transports#70")
@pytest.mark.parametrize("json_response", [False, True])
@pytest.mark.req("basic/transports#35", "basic/transports#45", "basic/transports#58")
async def test_transport_check_over_http(json_response: bool) -> None:
    async with (
        http_server(check_server(), json_response=json_response) as info,
        open_http_client(info.url, era="legacy") as client,
    ):
        assert client.session.channel.session_id is not None  # type: ignore[attr-defined]
        await check_transport(client, large=200_000, progress_before_result=not json_response)


@pytest.mark.req("basic/transports#62", "basic/transports#61")
async def test_a_404_starts_a_new_session_and_the_request_goes_through() -> None:
    seen: list[tuple[str, str | None]] = []
    async with (
        http_server(check_server()) as info,
        open_http_client(info.url, on_new_session=lambda old, new: seen.append((old, new)), era="legacy") as client,
    ):
        await client.ping()
        channel = client.session.channel
        old = channel.session_id  # type: ignore[attr-defined]
        headers = {**ACCEPT_BOTH, "mcp-session-id": old}
        assert (await raw(info.url, "DELETE", headers))[0] == 200  # the server forgets us
        # the next request meets the 404, a new session is initialised, and the request is sent again
        result = await client.call_tool("echo", {"text": "after the 404"})
        assert result.content[0].text == "after the 404"  # type: ignore[union-attr]
        new = channel.session_id  # type: ignore[attr-defined]
        assert new is not None and new != old
        assert channel.session_restarts == 1  # type: ignore[attr-defined]
        assert seen == [(old, new)]
        # the old id stays unknown to the server, the new one is a live, initialised session
        assert (await raw(info.url, "POST", headers, {"jsonrpc": "2.0", "id": 9, "method": "ping"}))[0] == 404
        await client.ping()
        assert channel.session_restarts == 1  # type: ignore[attr-defined]


@pytest.mark.req("basic/transports#62")
async def test_the_get_stream_meeting_a_404_starts_one_new_session() -> None:
    restarted = trio.Event()
    async with (
        http_server(check_server(), retry_ms=10) as info,
        open_http_client(info.url, on_new_session=lambda old, new: restarted.set(), era="legacy") as client,
    ):
        await client.ping()
        channel = client.session.channel
        old = channel.session_id  # type: ignore[attr-defined]
        assert (await raw(info.url, "DELETE", {**ACCEPT_BOTH, "mcp-session-id": old}))[0] == 200
        # nobody sends anything: the GET stream ends, its reconnection meets the 404
        with trio.fail_after(10):
            await restarted.wait()
        await client.ping()
        assert channel.session_restarts == 1  # type: ignore[attr-defined]
        assert channel.session_id not in (None, old)  # type: ignore[attr-defined]


HANG_CALL = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hang"}}


@pytest.mark.req("basic/transports#62")
async def test_no_new_session_possible_ends_the_client_with_session_expired() -> None:
    from mcp_ref.errors import ConnectionClosed
    from mcp_ref.session.http import SessionExpired

    async with http_server(check_server(), max_sessions=1) as info, open_http_client(info.url, era="legacy") as client:
        await client.ping()
        channel = client.session.channel
        old = channel.session_id  # type: ignore[attr-defined]
        assert (await raw(info.url, "DELETE", {**ACCEPT_BOTH, "mcp-session-id": old}))[0] == 200
        other = await start_session(info.url)  # someone else takes the only slot, and keeps it busy
        # (with a call in flight: a GET stream alone does not keep a session from giving way)
        async with exchange(info.url, "POST", other, HANG_CALL):
            with pytest.raises(ConnectionClosed, match="expired"):
                await client.ping(timeout=5)
            assert "no new session" in (channel.close_reason or "")  # type: ignore[attr-defined]
            with pytest.raises(SessionExpired):
                await channel.send(b'{"jsonrpc":"2.0","id":99,"method":"ping"}')


@pytest.mark.req("basic/transports#62")
async def test_several_requests_meeting_a_404_with_no_new_session_possible_all_end_closed() -> None:
    # the first restart fails and ends the channel; the others must see that end, not
    # post again without a session and then deliver into the closed inbox
    from mcp_ref.errors import ConnectionClosed

    async with http_server(check_server(), max_sessions=1) as info, open_http_client(info.url, era="legacy") as client:
        await client.ping()
        old = client.session.channel.session_id  # type: ignore[attr-defined]
        assert (await raw(info.url, "DELETE", {**ACCEPT_BOTH, "mcp-session-id": old}))[0] == 200
        other = await start_session(info.url)  # someone else takes the only slot, and keeps it busy
        failures: list[BaseException] = []

        async def ping() -> None:
            with pytest.raises(ConnectionClosed) as info_:
                await client.ping(timeout=5)
            failures.append(info_.value)

        async with exchange(info.url, "POST", other, HANG_CALL), trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(ping)
        assert len(failures) == 3


@pytest.mark.req("basic/utilities/tasks#30", "basic/utilities/tasks#12", "basic/utilities/tasks#31")
async def test_tasks_get_is_answered_with_json() -> None:
    session_headers = None
    async with trio.open_nursery() as nursery:
        server = check_server()
        server.enable_tasks(nursery)
        async with http_server(server) as info:
            session_headers = await start_session(info.url)
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x"}},
            }
            status, headers, body = await raw(info.url, "POST", session_headers, call)
            assert headers["content-type"] == "text/event-stream"
            get = {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "nope"}}
            status, headers, body = await raw(info.url, "POST", session_headers, get)
            assert headers["content-type"] == "application/json"
            assert json.loads(body)["error"]["code"] == -32602
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "basic/utilities/tasks#11", "basic/utilities/tasks#16", "basic/utilities/tasks#17", "basic/utilities/tasks#29"
)
async def test_tasks_over_http() -> None:
    async with trio.open_nursery() as nursery:
        server = check_server()
        server.enable_tasks(nursery)

        @server.tool(task_support="optional")
        async def slow_echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            await trio.sleep(0.1)
            return str(arguments["text"])

        async with http_server(server) as info, open_http_client(info.url, era="legacy") as client:
            await client.list_all_tools()
            handle = await client.call_tool_as_task("slow_echo", {"text": "tasked"})
            result = await handle.wait(default_poll_interval=0.05)
            assert result.content[0].text == "tasked"  # type: ignore[union-attr]
        nursery.cancel_scope.cancel()


# -- persistent connections (HTTP/1.1 keep-alive) ------------------------------------------------


async def test_server_answers_several_exchanges_on_one_connection() -> None:
    async with http_server(check_server()) as info:
        parts = urlsplit(info.url)
        stream = await trio.open_tcp_stream("127.0.0.1", parts.port or 80)
        conn = h11.Connection(h11.CLIENT)
        body = json.dumps(INIT).encode()
        statuses = []
        with trio.fail_after(10):
            for _ in range(2):  # two sessions opened over the same TCP connection
                headers = [("host", parts.netloc), *ACCEPT_BOTH.items(), ("content-type", "application/json")]
                headers.append(("content-length", str(len(body))))
                out = conn.send(h11.Request(method="POST", target=parts.path, headers=headers)) or b""
                out += (conn.send(h11.Data(data=body)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
                await stream.send_all(out)
                status, _, answer = await read_response(conn, stream)
                statuses.append(status)
                assert sse_messages(answer)[-1]["result"]["protocolVersion"] == "2025-11-25"
                assert conn.our_state is h11.DONE and conn.their_state is h11.DONE  # kept alive
                conn.start_next_cycle()
        await stream.aclose()
        assert statuses == [200, 200]


async def test_client_reuses_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = 0
    real_open = trio.open_tcp_stream

    async def counting_open(*args: Any, **kwargs: Any) -> trio.SocketStream:
        nonlocal opened
        opened += 1
        return await real_open(*args, **kwargs)

    monkeypatch.setattr(trio, "open_tcp_stream", counting_open)
    async with http_server(check_server()) as info, open_http_client(info.url, era="legacy") as client:
        for _ in range(20):
            await client.ping()
    # initialize, the GET stream, and a spare while the first answers were read --
    # not one connection per message (22 or more)
    assert opened <= 4


async def test_client_retries_a_kept_alive_connection_the_server_closed() -> None:
    """A server that closes every connection after its answer (without saying so):
    each message still arrives exactly once."""
    from mcp_ref.basic.transports.http_client import open_http_channel

    received: list[tuple[str, Any]] = []

    async def handle(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        async with stream:
            if (request := await read_request(stream, conn)) is None:
                return
            head, body = request
            method = head.method.decode()
            message = json.loads(body) if body else None
            received.append((method, message and message.get("method")))
            status, payload = 405, b""
            if method == "POST" and message.get("method") == "initialize":
                info = {"name": "s", "version": "1"}
                result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": info}
                status, payload = 200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            elif method == "POST" and "id" in message:
                status, payload = 200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode()
            elif method == "POST":
                status = 202
            elif method == "DELETE":
                status = 200
            headers = [("content-length", str(len(payload))), ("mcp-session-id", "s1")]
            if payload:
                headers.append(("content-type", "application/json"))
            out = conn.send(h11.Response(status_code=status, headers=headers)) or b""
            out += (conn.send(h11.Data(data=payload)) or b"") if payload else b""
            out += conn.send(h11.EndOfMessage()) or b""
            await stream.send_all(out)
            # and close, though the answer promised a kept-alive connection

    async with tcp_server(handle) as port:
        with trio.fail_after(10):
            async with open_http_channel(f"http://127.0.0.1:{port}/mcp") as channel:
                await channel.send(json.dumps(INIT).encode())
                assert json.loads(await channel.receive())["id"] == 1
                for rid in (2, 3):
                    await channel.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"}).encode())
                    assert json.loads(await channel.receive()) == {"jsonrpc": "2.0", "id": rid, "result": {}}
    posts = [m for verb, m in received if verb == "POST"]
    assert posts == ["initialize", "ping", "ping"]  # each exactly once, none lost


async def test_graceful_shutdown() -> None:
    server = Server("closing")
    go = trio.Event()
    started = trio.Event()

    @server.tool()
    async def finish(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        started.set()
        await go.wait()
        return "finished"

    async with trio.open_nursery() as nursery:
        info: HttpServerInfo = await nursery.start(lambda task_status: serve_http(server, task_status=task_status))
        session = await start_session(info.url)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "finish"}}
        async with (
            exchange(info.url, "GET", {**session, "accept": "text/event-stream"}) as get,
            exchange(info.url, "POST", session, call) as post,
        ):
            await get.events()
            await post.events()
            with trio.fail_after(10):
                await started.wait()
            closed = trio.Event()

            async def shut_down() -> None:
                await info.aclose(grace=10)
                closed.set()

            nursery.start_soon(shut_down)
            # the GET stream ends at once, cleanly, telling the client when to come back
            with trio.fail_after(10):
                rest = await get.rest()
            assert [e.retry for e in rest] == [1000] and get.complete
            # no new connections
            with pytest.raises(OSError):
                await trio.open_tcp_stream("127.0.0.1", info.port)
            assert not closed.is_set()
            # the request in flight is still answered, on its stream, which ends cleanly
            go.set()
            (result,) = [json.loads(e.data) for e in await post.rest() if e.data]
            assert result["result"]["content"][0]["text"] == "finished" and post.complete
        with trio.fail_after(10):
            await closed.wait()
    # serve_http returned by itself: the nursery closed without being cancelled


@pytest.mark.req("2025-03-26:basic/transports#16", "2025-03-26:basic/transports#17", "2025-03-26:basic/transports#18")
async def test_a_batch_of_notifications_and_responses_is_accepted_in_2025_03_26() -> None:
    # 2025-03-26 lets the input be a batch: one of only notifications and responses is taken
    # with 202 and no body, like one message; one that cannot be taken is 400 with an error of no request ("id": null)
    async with http_server(check_server()) as info:
        session = await start_session(info.url, "2025-03-26")
        quiet = [
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 1}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        ]
        status, _, body = await raw(info.url, "POST", session, quiet)
        assert (status, body) == (202, b"")
        status, _, body = await raw(info.url, "POST", session, [{"jsonrpc": "2.0", "id": 5, "result": {}}])
        assert (status, body) == (202, b"")
        for bad in ([], [1]):
            status, _, body = await raw(info.url, "POST", session, bad)
            error = json.loads(body)
            assert status == 400 and error["id"] is None and error["error"]["code"] == -32600


@pytest.mark.req("2025-06-18:basic/transports#15")
async def test_a_2025_06_18_session_takes_no_batch() -> None:
    async with http_server(check_server()) as info:
        session = await start_session(info.url, "2025-06-18")
        batch = [{"jsonrpc": "2.0", "id": 2, "method": "ping"}]
        status, _, body = await raw(info.url, "POST", session, batch)
        error = json.loads(body)
        assert status == 400 and error["error"]["code"] == -32600 and "2025-06-18" in error["error"]["message"]


@pytest.mark.req("basic/transports#60")
async def test_a_server_of_legacy_revisions_only_answers_a_sessionless_request_400() -> None:
    server = Server("legacy only", modern_versions=())
    async with http_server(server) as info:
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
        headers = {**ACCEPT_BOTH, "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}
        status, _, body = await raw(info.url, "POST", headers, discover)
        assert status == 400 and b"MCP-Session-Id" in body
        assert (await raw(info.url, "GET", {"accept": "text/event-stream"}))[0] == 400
        assert (await raw(info.url, "DELETE", {}))[0] == 400
        # the 2025 shape still opens a session
        status, headers_, _ = await raw(info.url, "POST", ACCEPT_BOTH, INIT)
        assert status == 200 and "mcp-session-id" in headers_
    async with http_server(Server("both eras")) as info:
        # the same request to a server that also speaks 2026-07-28 stands alone
        status, _, body = await raw(info.url, "POST", headers, discover)
        assert status == 200 and json.loads(body)["result"]["supportedVersions"]
