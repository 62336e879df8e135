"""Streamable HTTP, client side: answers read in the background, resumption after drops and polling."""

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import h11
import pytest
import trio
import trio.testing

from mcp_ref.basic.transports.streamable_http import encode_sse
from mcp_ref.errors import HTTPTransportError, MCPError, MessageTooLarge, RequestTimeout
from mcp_ref.schema.roots import Root
from mcp_ref.session import RequestContext, Server
from mcp_ref.session.http import open_http_client
from mcp_ref.testing.transport_check import check_server

from .test_streamable_http import hanging_server, http_server, read_request, tcp_server

# -- a server that answers with JSON only when the handler is done ------------------------------


@pytest.mark.req("basic/transports#21", "basic/transports#22")
async def test_json_mode_calls_run_concurrently() -> None:
    """Each call waits until all three are running on the server: with the client
    waiting for one answer before sending the next POST, none would finish."""
    server = Server("json")
    running = 0
    all_in = trio.Event()

    @server.tool()
    async def meet(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        nonlocal running
        running += 1
        if running == 3:
            all_in.set()
        await all_in.wait()
        return "met"

    async with http_server(server, json_response=True) as info, open_http_client(info.url, era="legacy") as client:
        texts: list[str] = []

        async def call() -> None:
            result = await client.call_tool("meet", timeout=10)
            texts.append(result.content[0].text)  # type: ignore[union-attr]

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(call)
        assert texts == ["met"] * 3


@pytest.mark.req("basic/transports#21")
async def test_json_mode_tool_asking_the_client_does_not_deadlock() -> None:
    """The server's request (roots/list) is answered while the POST of the call is unanswered."""
    server = Server("asks")

    @server.tool()
    async def where(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        roots = await ctx.list_roots(timeout=5)
        return roots.roots[0].uri  # type: ignore[no-any-return]

    roots = [Root(uri="file:///work", name="work")]
    async with (
        http_server(server, json_response=True) as info,
        open_http_client(info.url, roots=roots, era="legacy") as client,
    ):
        with trio.fail_after(10):
            result = await client.call_tool("where", timeout=10)
        assert result.content[0].text == "file:///work"  # type: ignore[union-attr]


@pytest.mark.req("basic/transports#21", "basic/utilities/cancellation#4")
@pytest.mark.parametrize("json_response", [True, False])
async def test_a_timed_out_call_returns_and_cancels_the_handler(json_response: bool) -> None:
    server, _, cancelled = hanging_server()
    async with (
        http_server(server, json_response=json_response) as info,
        open_http_client(info.url, era="legacy") as client,
    ):
        with trio.fail_after(10):
            with pytest.raises(RequestTimeout):
                await client.call_tool("hang", timeout=0.3)
            await cancelled.wait()  # the notifications/cancelled reached the server
            await client.ping()  # and the session goes on


# -- resuming SSE streams ------------------------------------------------------------------------


class CuttingProxy:
    """A TCP proxy in front of the server that can drop every open connection at once,
    as a network failure would: the client sees its chunked answer cut short."""

    def __init__(self) -> None:
        self.open: set[trio.SocketStream] = set()
        self.connections = 0
        #: what the client wrote, one buffer per connection
        self.from_client: list[bytearray] = []
        #: set (and replaced) each time a connection ends
        self.closed = trio.Event()

    async def handle(self, client: trio.SocketStream, upstream_port: int) -> None:
        upstream = await trio.open_tcp_stream("127.0.0.1", upstream_port)
        self.connections += 1
        self.open |= {client, upstream}
        written = bytearray()
        self.from_client.append(written)

        async def pipe(src: trio.SocketStream, dst: trio.SocketStream) -> None:
            try:
                while data := await src.receive_some(65536):
                    if src is client:
                        written.extend(data)
                    await dst.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            await dst.aclose()

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pipe, client, upstream)
                nursery.start_soon(pipe, upstream, client)
        finally:
            self.open -= {client, upstream}
            self.closed.set()
            self.closed = trio.Event()

    async def cut(self) -> None:
        for stream in list(self.open):
            await stream.aclose()


@asynccontextmanager
async def proxy_to(url: str) -> AsyncIterator[tuple[str, CuttingProxy]]:
    proxy = CuttingProxy()
    upstream = urlsplit(url)
    async with tcp_server(partial(proxy.handle, upstream_port=upstream.port)) as port:
        yield f"http://127.0.0.1:{port}{upstream.path}", proxy


_HEAD = re.compile(rb"(GET|POST|DELETE) (\S+) HTTP/1\.1\r\n(.*?)\r\n\r\n", re.DOTALL)


def request_heads(written: bytes) -> list[tuple[str, dict[str, str]]]:
    """The method and headers of each request in what a client wrote on one connection."""
    heads = []
    for m in _HEAD.finditer(written):
        fields = (line.split(b":", 1) for line in m.group(3).split(b"\r\n"))
        heads.append((m.group(1).decode(), {k.strip().lower().decode(): v.strip().decode() for k, v in fields}))
    return heads


@pytest.mark.req(
    "basic/transports#14",
    "basic/transports#15",
    "basic/transports#16",
    "basic/transports#17",
    "basic/transports#37",
    "basic/transports#38",
    "basic/transports#45",
    "basic/transports#58",
    "basic/transports#59",
    "basic/transports#63",
    "basic/transports#65",
    "basic/transports#66",
    "basic/lifecycle#13",
)
@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
async def test_every_request_after_initialize_carries_the_session_and_the_version(version: str) -> None:
    async with http_server(check_server()) as info, proxy_to(info.url) as (url, proxy):
        async with open_http_client(url, protocol_version=version) as client:
            await client.ping()
            session_id = client.session.channel.session_id  # type: ignore[attr-defined]
        # closing the client closed its connections, the GET stream's too
        with trio.fail_after(5):
            while proxy.open:
                await proxy.closed.wait()
        heads = [head for written in proxy.from_client for head in request_heads(bytes(written))]
    # initialize: a POST, before there is a session or a version to name
    (init,) = [h for h in heads if "mcp-session-id" not in h[1]]
    assert init[0] == "POST" and "mcp-protocol-version" not in init[1]
    rest = [h for h in heads if h is not init]
    # then initialized, the GET stream, the ping, and the DELETE on close
    assert sorted(m for m, _ in rest) == ["DELETE", "GET", "POST", "POST"]
    for _, headers in rest:
        assert headers["mcp-session-id"] == session_id
        assert headers["mcp-protocol-version"] == version
    for method, headers in heads:
        if method == "POST":
            assert headers["accept"] == "application/json, text/event-stream"
            assert headers["content-type"] == "application/json"
        elif method == "GET":
            assert headers["accept"] == "text/event-stream"


@pytest.mark.req("basic/transports#25", "basic/transports#34", "basic/transports#52")
async def test_a_dropped_post_stream_is_resumed() -> None:
    """The connection breaks mid-answer (no clean end of the chunked body): the client
    resumes with Last-Event-ID and gets the rest, not an error."""
    server = Server("dropped")
    cut_done = trio.Event()

    @server.tool()
    async def interrupted(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1)
        await cut_done.wait()
        await ctx.progress(2)
        return "after the drop"

    async with http_server(server, retry_ms=10) as info, proxy_to(info.url) as (url, proxy):
        async with open_http_client(url, era="legacy") as client:
            seen: list[float] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                seen.append(p)
                if p == 1:
                    await proxy.cut()
                    cut_done.set()

            with trio.fail_after(10):
                result = await client.call_tool("interrupted", progress=on_progress, timeout=10)
            assert result.content[0].text == "after the drop"  # type: ignore[union-attr]
            assert seen == [1, 2]


@pytest.mark.req("basic/transports#25", "basic/transports#27")
async def test_a_server_polling_by_closing_its_stream_is_followed() -> None:
    """[SEP-1699] The server closes the request's stream more times than the client's
    reconnection limit; each resumption succeeds, so the call still gets its answer."""
    server = Server("poller")

    @server.tool()
    async def poll(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        channel = ctx.session.channel
        for step in range(4):
            stream = channel.by_request[json.dumps(ctx.request_id)]  # type: ignore[attr-defined]
            with trio.fail_after(5):
                while stream.listener is None:  # the client has not reconnected yet
                    await trio.sleep(0.005)
            await ctx.progress(step)
            await channel.close_request_stream(ctx.request_id)  # type: ignore[attr-defined]
        return "polled"

    async with (
        http_server(server, retry_ms=5) as info,
        open_http_client(info.url, max_reconnects=1, era="legacy") as client,
    ):
        with trio.fail_after(10):
            result = await client.call_tool("poll", timeout=10)
        assert result.content[0].text == "polled"  # type: ignore[union-attr]


@pytest.mark.req("basic/transports#21")
async def test_a_request_answered_with_202_fails_at_once() -> None:
    """A server that accepts a request with 202 (no body, so no answer will ever come):
    the call fails saying so, instead of waiting out its timeout."""

    async def handle(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        async with stream:
            request = await read_request(stream, conn)
            assert request is not None
            method, body = request[0].method, request[1]
            message = json.loads(body) if method == b"POST" else {}
            headers = [("content-length", "0")]
            status, payload = (405 if method == b"GET" else 202), b""
            if message.get("method") == "initialize":
                result = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "x", "version": "1"},
                }
                payload = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                headers = [("content-length", str(len(payload))), ("content-type", "application/json")]
                status = 200
            out = conn.send(h11.Response(status_code=status, headers=[*headers, ("mcp-session-id", "s1")])) or b""
            out += conn.send(h11.Data(data=payload)) if payload else b""
            out += conn.send(h11.EndOfMessage()) or b""
            await stream.send_all(out)

    async with tcp_server(handle) as port:
        async with open_http_client(f"http://127.0.0.1:{port}/mcp", era="legacy") as client:
            with trio.fail_after(10), pytest.raises(HTTPTransportError) as failed:
                await client.call_tool("echo", {"text": "hi"}, timeout=60)
            assert failed.value.status == 202
            assert failed.value.url == f"http://127.0.0.1:{port}/mcp"
            assert "it accepted the request but will not answer it" in str(failed.value)
            with trio.fail_after(10), pytest.raises(HTTPTransportError):  # (the session goes on)
                await client.ping()


def answering(answers: dict[str, tuple[int, str, bytes]]) -> Callable[[trio.SocketStream], Awaitable[None]]:
    """A raw server: initialize succeeds, a notification gets 202, a GET 405, and a request
    of a method in ``answers`` gets that (status, content type, body); other requests an
    empty result."""

    async def handle(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        async with stream:
            request = await read_request(stream, conn)
            assert request is not None
            message = json.loads(request[1]) if request[0].method == b"POST" else {}
            status, content_type, payload = (405 if request[0].method == b"GET" else 202), "", b""
            if message.get("method") == "initialize":
                result = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "x", "version": "1"},
                }
                status, content_type = 200, "application/json"
                payload = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            elif message.get("method") in answers:
                status, content_type, payload = answers[message["method"]]
            elif "id" in message:
                status, content_type = 200, "application/json"
                payload = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode()
            headers = [("content-length", str(len(payload))), ("mcp-session-id", "s1")]
            headers += [("content-type", content_type)] if content_type else []
            out = conn.send(h11.Response(status_code=status, headers=headers)) or b""
            out += conn.send(h11.Data(data=payload)) if payload else b""
            out += conn.send(h11.EndOfMessage()) or b""
            await stream.send_all(out)

    return handle


async def test_an_error_status_is_a_transport_error_carrying_it() -> None:
    """An HTTP error status is not a JSON-RPC answer: the call raises HTTPTransportError with
    the status (a JSON-RPC error in the body is its cause), and the session goes on."""
    rpc_error = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "overloaded"}})
    answers = {
        "tools/call": (503, "application/json", rpc_error.encode()),
        "tools/list": (500, "text/html", b"<h1>Internal Server Error</h1>"),
    }
    async with (
        tcp_server(answering(answers)) as port,
        open_http_client(f"http://127.0.0.1:{port}/mcp", era="legacy") as client,
    ):
        url = f"http://127.0.0.1:{port}/mcp"
        with trio.fail_after(10), pytest.raises(HTTPTransportError) as failed:
            await client.call_tool("echo", {"text": "hi"})
        assert (failed.value.status, failed.value.url) == (503, url)
        assert isinstance(failed.value.__cause__, MCPError) and failed.value.__cause__.code == -32001
        assert str(failed.value) == f"{url} answered HTTP 503: [-32001] overloaded"
        with trio.fail_after(10), pytest.raises(HTTPTransportError) as failed:
            await client.list_tools()
        assert failed.value.status == 500 and failed.value.__cause__ is None
        assert str(failed.value) == f"{url} answered HTTP 500: <h1>Internal Server Error</h1>"
        await client.ping(timeout=10)  # the session goes on


async def test_a_server_that_cannot_be_reached_is_a_transport_error() -> None:
    with trio.socket.socket() as sock:  # a port nobody listens on
        await sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    with trio.fail_after(10), pytest.raises(HTTPTransportError) as failed:
        async with open_http_client(url, era="legacy"):
            pytest.fail("the session must not open")
    assert (failed.value.status, failed.value.url) == (None, url)
    assert str(failed.value).startswith(f"{url}: the request could not be sent (")
    assert "refused" in str(failed.value).lower()


# -- the 2024-11-05 HTTP+SSE fallback (an interop test runs it against the official SDK) -------


@pytest.mark.req("2024-11-05:basic/transports#12")
async def test_the_legacy_fallback_never_posts_to_another_origin() -> None:
    requests: list[tuple[str, str]] = []

    async def handle(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        async with stream:
            request = await read_request(stream, conn)
            assert request is not None
            requests.append((request[0].method.decode(), request[0].target.decode()))
            if requests[-1][0] == "POST":
                out = conn.send(h11.Response(status_code=405, headers=[("content-length", "0")])) or b""
                out += conn.send(h11.EndOfMessage()) or b""
            else:  # an old server would name its POST endpoint; this one names another host
                out = conn.send(h11.Response(status_code=200, headers=[("content-type", "text/event-stream")])) or b""
                out += conn.send(h11.Data(data=encode_sse("http://evil.example/messages", event="endpoint"))) or b""
            await stream.send_all(out)

    async with tcp_server(handle) as port:
        with trio.fail_after(10), pytest.raises(HTTPTransportError, match="another origin"):
            async with open_http_client(f"http://127.0.0.1:{port}/sse", legacy_fallback=True, era="legacy"):
                pass
    assert requests == [("POST", "/sse"), ("GET", "/sse")]


async def test_messages_reach_the_session_as_the_server_wrote_them() -> None:
    """No re-encoding: a lone surrogate escaped in the server's JSON (legal JSON text,
    not encodable as UTF-8 once decoded) reaches the session intact."""
    from mcp_ref.basic.transports.http_client import open_http_channel

    answer = b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","odd":"\\ud800"}}'

    async def handle(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        async with stream:
            request = await read_request(stream, conn)
            assert request is not None
            headers = [("content-type", "application/json"), ("content-length", str(len(answer)))]
            out = conn.send(h11.Response(status_code=200, headers=headers)) or b""
            await stream.send_all(
                out + (conn.send(h11.Data(data=answer)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
            )

    async with tcp_server(handle) as port:
        with trio.fail_after(10):
            async with open_http_channel(f"http://127.0.0.1:{port}/mcp") as channel:
                await channel.send(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}')
                assert await channel.receive() == answer


@pytest.mark.req("basic/transports#63")
async def test_the_client_deletes_its_session_on_close() -> None:
    from .test_streamable_http import ACCEPT_BOTH, raw

    async with http_server(check_server()) as info:
        async with open_http_client(info.url, era="legacy") as client:
            await client.ping()
            session_id = client.session.channel.session_id  # type: ignore[attr-defined]
        headers = {**ACCEPT_BOTH, "mcp-session-id": session_id}
        assert (await raw(info.url, "POST", headers, {"jsonrpc": "2.0", "id": 2, "method": "ping"}))[0] == 404


# -- limits --------------------------------------------------------------------------------------


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_an_answer_over_the_clients_limit_fails_its_call_and_the_session_goes_on(json_response: bool) -> None:
    server = Server("big")

    @server.tool()
    async def big(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "b" * int(arguments["size"])

    async with (
        http_server(server, json_response=json_response) as info,
        open_http_client(info.url, max_message_size=2000, era="legacy") as client,
    ):
        with pytest.raises(MessageTooLarge) as dropped:
            await client.call_tool("big", {"size": 5000}, timeout=10)
        assert dropped.value.kind == "response" and dropped.value.limit == 2000
        result = await client.call_tool("big", {"size": 100}, timeout=10)
        assert result.content[0].text == "b" * 100  # type: ignore[union-attr]


async def test_a_notification_over_the_limit_is_dropped_and_the_rest_arrives() -> None:
    server = check_server()
    got: list[Any] = []

    @server.tool()
    async def announce(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for size in (5000, 10):
            await ctx.log("info", "n" * size)
        return "said"

    logged = trio.Event()

    async def on_log(params: Any) -> None:
        got.append(params.data)
        logged.set()

    async with (
        http_server(server) as info,
        open_http_client(info.url, on_log=on_log, max_message_size=2000, era="legacy") as client,
    ):
        await client.set_logging_level("info")
        assert (await client.call_tool("announce", timeout=10)).content[0].text == "said"  # type: ignore[union-attr]
        with trio.fail_after(10):
            await logged.wait()  # (handled in the notification worker, which may come after the answer)
        assert got == ["n" * 10]


async def test_posts_the_server_leaves_unanswered_are_bounded_and_time_out(autojump_clock: Any) -> None:
    # a notification or an answer of ours is answered 202 at once by a server that reads it;
    # one that never answers would hold a connection per message: past max_unanswered_posts
    # the next such send waits (the session stops reading meanwhile), and each waits for its
    # answer connect_timeout at most
    from mcp_ref.basic.transports.http_client import HttpClientChannel

    servers: list[trio.abc.Stream] = []

    async def connect() -> trio.abc.Stream:
        ours, theirs = trio.testing.memory_stream_pair()
        servers.append(theirs)  # (a server that reads nothing and answers nothing)
        return ours

    note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}'
    async with trio.open_nursery() as nursery:
        channel = HttpClientChannel("http://127.0.0.1:9/mcp", nursery, max_unanswered_posts=2, connect_timeout=10)
        channel._connect = connect  # type: ignore[method-assign]
        channel.session_id, channel._get_started = "s", True
        channel._ready.set()
        await channel.send(note)
        await channel.send(note)
        with trio.move_on_after(9) as waited:
            await channel.send(note)
        assert waited.cancelled_caught and len(servers) == 2
        await trio.sleep(2)  # 11 s after the first two: their answers are given up on
        with trio.fail_after(1):
            await channel.send(note)
        assert len(servers) == 3
        nursery.cancel_scope.cancel()
