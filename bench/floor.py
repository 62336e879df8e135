"""The raw floor: hand-written JSON-RPC on trio, the least a correct MCP peer must do.

Every message is ``json.dumps``-ed to bytes and ``json.loads``-ed back, ids
are correlated with a dict of events, each incoming request runs in its own
task (with a cancel scope a ``notifications/cancelled`` cancels), progress is
delivered to a callback, and nothing is validated. Transports: trio memory
channels of bytes, or newline-delimited lines over a pipe.

This is a yardstick, not an MCP implementation: it trusts its peer completely.
"""

import itertools
import json
import os
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import h11
import trio

PROTOCOL_VERSION = "2025-11-25"
#: the 2026-07-28 floor (W11, W11H): no initialize, every request carries its revision, capabilities
#: and client in ``_meta``, every result says ``resultType``; over HTTP no session, the method and
#: name repeated in headers (compared with the body: the one check a 2026-07-28 server must make
#: that a 2025 one did not), one JSON body per answer
MODERN_VERSION = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "0"},
}
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
#: the answer to ``server/discover`` (a client that probes, or learns the server's identity, asks it once)
DISCOVER_RESULT = {
    "resultType": "complete",
    "supportedVersions": [MODERN_VERSION],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "public",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "floor", "version": "0"}},
}
#: ``tools/list`` (a client that checks results against output schemas lists the tools once)
TOOLS_RESULT = {
    "resultType": "complete",
    "tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}],
    "ttlMs": 300_000,
    "cacheScope": "public",
}
#: what a floor server answers without a handler (2026-07-28)
STATIC_RESULTS = {"server/discover": DISCOVER_RESULT, "tools/list": TOOLS_RESULT}
dumps = json.dumps
loads = json.loads


class FloorError(Exception):
    """An error response."""


# -- transports: anything with ``async send(bytes)`` and ``async receive() -> bytes``


class LineChannel:
    """Newline-delimited messages over trio byte streams (a lock keeps lines whole)."""

    def __init__(self, send_stream: trio.abc.SendStream, receive_stream: trio.abc.ReceiveStream) -> None:
        self._out = send_stream
        self._in = receive_stream
        self._buf = bytearray()
        self._lock = trio.StrictFIFOLock()

    async def send(self, data: bytes) -> None:
        async with self._lock:
            await self._out.send_all(data + b"\n")

    async def receive(self) -> bytes:
        while True:
            i = self._buf.find(b"\n")
            if i >= 0:
                line = bytes(self._buf[:i])
                del self._buf[: i + 1]
                return line
            chunk = await self._in.receive_some(65536)
            if not chunk:
                raise trio.EndOfChannel
            self._buf += chunk

    async def aclose(self) -> None:
        await self._out.aclose()
        await self._in.aclose()


class MemoryEnd:
    """One end of two trio memory channels (send needs no lock: channels are task-safe)."""

    def __init__(self, send: trio.MemorySendChannel[bytes], receive: trio.MemoryReceiveChannel[bytes]) -> None:
        self.send = send.send
        self.receive = receive.receive
        self._send_ch, self._recv_ch = send, receive

    async def aclose(self) -> None:
        await self._send_ch.aclose()
        await self._recv_ch.aclose()


def memory_pair(buffer: int = 1024) -> tuple[MemoryEnd, MemoryEnd]:
    a_send, b_recv = trio.open_memory_channel[bytes](buffer)
    b_send, a_recv = trio.open_memory_channel[bytes](buffer)
    return MemoryEnd(a_send, a_recv), MemoryEnd(b_send, b_recv)


# -- client


ProgressFn = Callable[[float, float | None], Awaitable[None]]


class FloorClient:
    def __init__(self, channel: Any, modern: bool = False) -> None:
        self.channel = channel
        self.modern = modern
        self._ids = itertools.count(1)
        self._pending: dict[int, list[Any]] = {}  # id -> [event, response]
        self._progress: dict[int, ProgressFn] = {}
        self._closed = False

    async def receive_loop(self) -> None:
        receive = self.channel.receive
        pending = self._pending
        while True:
            try:
                data = await receive()
            except (trio.EndOfChannel, trio.ClosedResourceError, trio.BrokenResourceError):
                # the peer is gone: every waiting request fails instead of hanging
                self._closed = True
                for slot in pending.values():
                    slot[1] = {"error": {"code": -32000, "message": "connection closed"}}
                    slot[0].set()
                return
            msg = loads(data)
            if "method" in msg:
                if msg["method"] == "notifications/progress":
                    p = msg["params"]
                    cb = self._progress.get(p["progressToken"])
                    if cb is not None:
                        await cb(p["progress"], p.get("total"))
                continue
            waiter = pending.get(msg.get("id"))
            if waiter is not None:
                waiter[1] = msg
                waiter[0].set()

    async def request(
        self, method: str, params: dict[str, Any] | None = None, progress: ProgressFn | None = None
    ) -> Any:
        if self._closed:
            raise FloorError("connection closed")
        rid = next(self._ids)
        slot: list[Any] = [trio.Event(), None]
        self._pending[rid] = slot
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        if progress is not None:
            self._progress[rid] = progress
            msg["params"] = {**(params or {}), "_meta": {"progressToken": rid}}
        if self.modern:
            given = msg.get("params") or {}
            msg["params"] = {**given, "_meta": {**given.get("_meta", {}), **MODERN_META}}
        try:
            await self.channel.send(dumps(msg).encode())
            await slot[0].wait()
        except trio.Cancelled:
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
            with trio.CancelScope(shield=True):
                await self.channel.send(dumps(cancel).encode())
            raise
        finally:
            del self._pending[rid]
            if progress is not None:
                del self._progress[rid]
        response = slot[1]
        if "error" in response:
            raise FloorError(response["error"])
        return response["result"]

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await self.channel.send(dumps(msg).encode())

    async def initialize(self) -> Any:
        result = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "floor", "version": "0"},
            },
        )
        await self.notify("notifications/initialized")
        return result

    async def call_tool(self, name: str, arguments: dict[str, Any], progress: ProgressFn | None = None) -> Any:
        return await self.request("tools/call", {"name": name, "arguments": arguments}, progress)


@asynccontextmanager
async def floor_client(channel: Any, modern: bool = False) -> AsyncIterator[FloorClient]:
    """Run the client's receive loop; initialise (2025) or not (``modern``: 2026-07-28); yield."""
    client = FloorClient(channel, modern)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(client.receive_loop)
        if not modern:
            await client.initialize()
        try:
            yield client
        finally:
            nursery.cancel_scope.cancel()


# -- server


class Ctx:
    """What a floor tool gets: a way to report progress."""

    __slots__ = ("server", "token")

    def __init__(self, server: "FloorServer", token: Any) -> None:
        self.server = server
        self.token = token

    async def progress(self, value: float, total: float | None = None) -> None:
        if self.token is None:
            return
        params: dict[str, Any] = {"progressToken": self.token, "progress": value}
        if total is not None:
            params["total"] = total
        await self.server.channel.send(
            dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}).encode()
        )


Tool = Callable[[Ctx, dict[str, Any]], Awaitable[str]]


class FloorServer:
    """Serves tools; optional hand-rolled tasks (create, get, result) for W8."""

    def __init__(self, channel: Any, tools: dict[str, Tool], task_nursery: trio.Nursery | None = None) -> None:
        self.channel = channel
        self.tools = tools
        self._scopes: dict[Any, trio.CancelScope] = {}
        self._task_nursery = task_nursery
        self._tasks: dict[str, dict[str, Any]] = {}
        self._task_ids = itertools.count(1)

    async def serve(self) -> None:
        receive = self.channel.receive
        async with trio.open_nursery() as nursery:
            while True:
                try:
                    data = await receive()
                except (trio.EndOfChannel, trio.ClosedResourceError, trio.BrokenResourceError):
                    break
                msg = loads(data)
                if "id" in msg:
                    nursery.start_soon(self._handle, msg)
                elif msg.get("method") == "notifications/cancelled":
                    scope = self._scopes.get(msg["params"]["requestId"])
                    if scope is not None:
                        scope.cancel()
            nursery.cancel_scope.cancel()

    async def _handle(self, msg: dict[str, Any]) -> None:
        rid = msg["id"]
        method = msg["method"]
        params = msg.get("params") or {}
        with trio.CancelScope() as scope:
            self._scopes[rid] = scope
            try:
                if method == "tools/call":
                    if "task" in params and self._task_nursery is not None:
                        result = self._start_task(params)
                    else:
                        result = await self._call(params)
                elif method == "tasks/get":
                    result = self._task_view(self._tasks[params["taskId"]])
                elif method == "tasks/result":
                    task = self._tasks[params["taskId"]]
                    await task["done"].wait()
                    result = task["result"]
                elif method == "initialize":
                    result = {
                        "protocolVersion": PROTOCOL_VERSION,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "floor", "version": "0"},
                    }
                elif method == "ping":
                    result = {}
                elif method in STATIC_RESULTS:
                    result = STATIC_RESULTS[method]
                else:
                    reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}
                    await self.channel.send(dumps(reply).encode())
                    return
            finally:
                del self._scopes[rid]
        if scope.cancel_called:
            return  # cancelled: no response
        await self.channel.send(dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode())

    async def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        meta = params.get("_meta")
        ctx = Ctx(self, meta.get("progressToken") if meta else None)
        text = await self.tools[params["name"]](ctx, params.get("arguments") or {})
        if meta and VERSION_KEY in meta:
            return {"resultType": "complete", "content": [{"type": "text", "text": text}]}
        return {"content": [{"type": "text", "text": text}]}

    def _start_task(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self._task_nursery is not None
        task_id = str(next(self._task_ids))
        task: dict[str, Any] = {"id": task_id, "status": "working", "done": trio.Event(), "result": None}
        self._tasks[task_id] = task

        async def run() -> None:
            result = await self._call(params)
            result["_meta"] = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
            task["result"] = result
            task["status"] = "completed"
            task["done"].set()

        self._task_nursery.start_soon(run)
        return {"task": self._task_view(task)}

    @staticmethod
    def _task_view(task: dict[str, Any]) -> dict[str, Any]:
        stamp = "2025-11-25T00:00:00Z"
        return {
            "taskId": task["id"],
            "status": task["status"],
            "createdAt": stamp,
            "lastUpdatedAt": stamp,
            "ttl": 60000,
            "pollInterval": 100,
        }


@asynccontextmanager
async def stdin_stdout_channel() -> AsyncIterator[LineChannel]:
    channel = LineChannel(trio.lowlevel.FdStream(os.dup(1)), trio.lowlevel.FdStream(os.dup(0)))
    async with channel._out, channel._in:
        yield channel


async def echo_tool(ctx: Ctx, arguments: dict[str, Any]) -> str:
    return str(arguments["text"])


def run_stdio_server() -> None:
    """Serve the echo tool on stdin/stdout until stdin ends (``--http``: on HTTP)."""

    async def main() -> None:
        async with stdin_stdout_channel() as channel:
            await FloorServer(channel, {"echo": echo_tool}).serve()

    if sys.argv[1:2] == ["--http"]:
        trio.run(serve_http, "--json" in sys.argv[2:])
    else:
        trio.run(main)


# -- Streamable HTTP on h11 (the parser mcp_ref uses, on both sides, so that a ratio
# to this floor measures the MCP work and not the HTTP parser). One JSON-RPC message
# per POST; a request is answered with one SSE event on a chunked stream (the
# spec's default) or, with ``json=True``, one JSON body. Sessions: initialize gets
# an unguessable id, later requests must carry a known one (404 otherwise). No
# priming events, no resumption, no GET stream, no checks of Accept, Origin or Host.


async def _h11_read(conn: h11.Connection, stream: trio.abc.Stream) -> tuple[Any, bytes] | None:
    """One whole message (its head event and body) from ``conn``; None at EOF."""
    head: Any = None
    body = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await stream.receive_some(65536))
        elif isinstance(event, (h11.Request, h11.Response)):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            return head, body
        elif isinstance(event, h11.ConnectionClosed):
            return None


class FloorHttpServer:
    def __init__(self, json_response: bool) -> None:
        self.json_response = json_response
        self.sessions: set[bytes] = set()
        self.server = FloorServer(None, {"echo": echo_tool})

    async def connection(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        while (message := await _h11_read(conn, stream)) is not None:
            request, body = message
            sid = None
            for name, value in request.headers:
                if name == b"mcp-session-id":
                    sid = value
            msg = loads(body)
            headers = []
            if sid is None and msg.get("method") != "initialize":
                await self._modern(conn, stream, request, msg)
                conn.start_next_cycle()
                continue
            if msg.get("method") == "initialize":
                sid = secrets.token_hex(16).encode()
                self.sessions.add(sid)
                headers.append((b"mcp-session-id", sid))
                result: Any = {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "floor", "version": "0"},
                }
            elif sid not in self.sessions:
                await self._send(conn, stream, 404, [], b"")
                conn.start_next_cycle()
                continue
            elif "id" not in msg:
                await self._send(conn, stream, 202, [], b"")
                conn.start_next_cycle()
                continue
            else:
                result = await self.server._call(msg.get("params") or {})
            data = dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
            if self.json_response:
                headers.append((b"content-type", b"application/json"))
                await self._send(conn, stream, 200, headers, data)
            else:
                headers.append((b"content-type", b"text/event-stream"))
                await self._send(conn, stream, 200, headers, b"event: message\ndata: " + data + b"\n\n", chunked=True)
            conn.start_next_cycle()

    async def _modern(self, conn: h11.Connection, stream: trio.abc.Stream, request: Any, msg: dict[str, Any]) -> None:
        """A 2026-07-28 request: headers against the body, the handler, one JSON answer."""
        method = name = None
        for key, value in request.headers:
            if key == b"mcp-method":
                method = value.decode()
            elif key == b"mcp-name":
                name = value.decode()
        params = msg.get("params") or {}
        if method != msg.get("method") or name != params.get("name"):
            error = {"code": -32020, "message": "header mismatch"}
            data = dumps({"jsonrpc": "2.0", "id": msg.get("id"), "error": error}).encode()
            await self._send(conn, stream, 400, [(b"content-type", b"application/json")], data)
            return
        if "id" not in msg:
            await self._send(conn, stream, 202, [], b"")
            return
        static = STATIC_RESULTS.get(method)
        result = static if static is not None else await self.server._call(params)
        data = dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        await self._send(conn, stream, 200, [(b"content-type", b"application/json")], data)

    @staticmethod
    async def _send(
        conn: h11.Connection,
        stream: trio.abc.Stream,
        status: int,
        headers: list[Any],
        body: bytes,
        chunked: bool = False,
    ) -> None:
        if not chunked:
            headers.append((b"content-length", str(len(body)).encode()))
        out = conn.send(h11.Response(status_code=status, headers=headers)) or b""
        if body:
            out += conn.send(h11.Data(data=body)) or b""
        out += conn.send(h11.EndOfMessage()) or b""
        await stream.send_all(out)


async def serve_http(json_response: bool = False) -> None:
    server = FloorHttpServer(json_response)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, server.connection, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        print(f"http://127.0.0.1:{port}/mcp", flush=True)


class HttpFloorClient(FloorClient):
    """Sequential requests over one keep-alive h11 connection (``request`` only, no progress)."""

    def __init__(self, stream: trio.SocketStream, host: str, path: str, modern: bool = False) -> None:
        super().__init__(None, modern)
        self.stream = stream
        self.conn = h11.Connection(h11.CLIENT)
        self.path = path
        self.headers = [
            ("host", host),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ]

    async def _post(self, msg: dict[str, Any]) -> tuple[Any, bytes]:
        body = dumps(msg).encode()
        conn = self.conn
        headers = [*self.headers, ("content-length", str(len(body)))]
        if self.modern:
            headers += [("mcp-protocol-version", MODERN_VERSION), ("mcp-method", msg["method"])]
            if "name" in msg.get("params", {}):
                headers.append(("mcp-name", msg["params"]["name"]))
        request = h11.Request(method="POST", target=self.path, headers=headers)
        out = (
            (conn.send(request) or b"")
            + (conn.send(h11.Data(data=body)) or b"")
            + (conn.send(h11.EndOfMessage()) or b"")
        )
        await self.stream.send_all(out)
        message = await _h11_read(conn, self.stream)
        if message is None:
            raise trio.EndOfChannel
        conn.start_next_cycle()
        return message

    async def request(
        self, method: str, params: dict[str, Any] | None = None, progress: ProgressFn | None = None
    ) -> Any:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            msg["params"] = params
        if self.modern:
            msg["params"] = {**(params or {}), "_meta": MODERN_META}
        head, body = await self._post(msg)
        for name, value in head.headers:
            if name == b"mcp-session-id":
                self.headers += [("mcp-session-id", value.decode()), ("mcp-protocol-version", PROTOCOL_VERSION)]
            elif name == b"content-type" and value.startswith(b"text/event-stream"):
                # the event whose data is the response (a real client would also take
                # notifications and requests from the stream; this one has only the response)
                body = next(line[5:] for line in body.split(b"\n") if line.startswith(b"data:") and line[5:].strip())
        response = loads(body)
        if "error" in response:
            raise FloorError(response["error"])
        return response["result"]

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await self._post(msg)


@asynccontextmanager
async def http_floor_client(url: str, modern: bool = False) -> AsyncIterator[HttpFloorClient]:
    hostport, _, path = url.removeprefix("http://").partition("/")
    host, _, port = hostport.rpartition(":")
    stream = await trio.open_tcp_stream(host, int(port))
    async with stream:
        client = HttpFloorClient(stream, hostport, "/" + path, modern)
        if not modern:
            await client.initialize()
        yield client
