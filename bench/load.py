"""The load generator of W10: many MCP clients over Streamable HTTP, cheaply.

Every implementation's server is driven by the same client, so that W10
measures servers: a hand-written HTTP/1.1 client (no h11) that initializes a
session per connection and then sends sequential ``tools/call`` of echo. It
reads an answer as JSON (``content-length``) or as an SSE stream (chunked),
takes the JSON-RPC response out of it, and checks the echoed text. It costs
less per call than any of the servers it drives (bench/README.md), so the
server is what limits the rate.

The server's CPU time and memory are read from ``/proc/<pid>`` (Linux).
"""

import itertools
import json
import os
from typing import Any

import trio

PROTOCOL_VERSION = "2025-11-25"
TEXT = "hello, benchmark"


class LoadError(Exception):
    """The server answered something the load generator did not expect."""


class RawHttpSession:
    """One MCP session on one keep-alive HTTP/1.1 connection."""

    def __init__(self, stream: trio.SocketStream, host: str, path: str) -> None:
        self.stream = stream
        self._head = (
            f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
            "accept: application/json, text/event-stream\r\n"
        )
        self._buf = bytearray()
        self._ids = itertools.count(1)
        self.session_id: str | None = None
        #: the content type of the last answer (the harness test checks the response mode with it)
        self.last_content_type = ""
        #: SSE events of the last answer that carried data (a priming event carries none)
        self.last_events = 0

    async def _read_until(self, marker: bytes) -> int:
        while (i := self._buf.find(marker)) < 0:
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                raise LoadError("the server closed the connection")
            self._buf += chunk
        return i

    async def _read_exactly(self, n: int) -> bytes:
        while len(self._buf) < n:
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                raise LoadError("the server closed the connection")
            self._buf += chunk
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data

    async def post(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """Send one POST; return (status, headers, body) once the whole answer is read."""
        head = self._head
        if self.session_id is not None:
            head += f"mcp-session-id: {self.session_id}\r\nmcp-protocol-version: {PROTOCOL_VERSION}\r\n"
        await self.stream.send_all(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)
        end = await self._read_until(b"\r\n\r\n")
        lines = bytes(self._buf[:end]).decode("latin-1").split("\r\n")
        del self._buf[: end + 4]
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            data = await self._read_exactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                end = await self._read_until(b"\r\n")
                size = int(bytes(self._buf[:end]).split(b";")[0], 16)
                del self._buf[: end + 2]
                parts.append(await self._read_exactly(size))
                await self._read_exactly(2)  # the CRLF after the chunk
                if size == 0:
                    break
            data = b"".join(parts)
        else:
            data = b""
        return status, headers, data

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params})
        status, headers, data = await self.post(body.encode())
        if status != 200:
            raise LoadError(f"{method}: HTTP {status} {data[:200]!r}")
        if self.session_id is None and "mcp-session-id" in headers:
            self.session_id = headers["mcp-session-id"]
        self.last_content_type = headers.get("content-type", "")
        if self.last_content_type.startswith("text/event-stream"):
            events = []
            for block in data.replace(b"\r\n", b"\n").split(b"\n\n"):
                payload = b"\n".join(line[5:].lstrip(b" ") for line in block.split(b"\n") if line.startswith(b"data:"))
                if payload:
                    events.append(payload)
            self.last_events = len(events)
            messages = [json.loads(e) for e in events]
            responses = [m for m in messages if "method" not in m]
            if len(responses) != 1:
                raise LoadError(f"{method}: expected one response on the stream, got {messages!r}")
            message = responses[0]
        else:
            self.last_events = 0
            message = json.loads(data)
        if "error" in message:
            raise LoadError(f"{method}: {message['error']!r}")
        return message["result"]

    async def notify(self, method: str) -> None:
        status, _, data = await self.post(json.dumps({"jsonrpc": "2.0", "method": method}).encode())
        if status != 202:
            raise LoadError(f"{method}: HTTP {status} {data[:200]!r}")

    async def initialize(self) -> None:
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "bench-load", "version": "0"},
        }
        await self.request("initialize", params)
        if self.session_id is None:
            raise LoadError("initialize: no mcp-session-id header")
        await self.notify("notifications/initialized")

    async def echo(self, text: str = TEXT) -> None:
        result = await self.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        if result["content"][0]["text"] != text:
            raise LoadError(f"echo returned {result!r}")

    async def aclose(self) -> None:
        await self.stream.aclose()


async def open_raw_session(url: str) -> RawHttpSession:
    """Connect to ``url`` (http://127.0.0.1:PORT/PATH) and initialize a session there."""
    hostport, _, path = url.removeprefix("http://").partition("/")
    host, _, port = hostport.rpartition(":")
    stream = await trio.open_tcp_stream(host, int(port))
    session = RawHttpSession(stream, hostport, "/" + path)
    try:
        await session.initialize()
    except BaseException:
        await stream.aclose()
        raise
    return session


# -- the server process, from /proc


def process_cpu_s(pid: int) -> float:
    """User plus system CPU seconds the process has used."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields after the command: state is [0], utime [11], stime [12] (proc(5) numbers 14 and 15)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_rss(pid: int) -> int:
    """Resident set size of the process, in bytes."""
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
