"""What a client's HTTP requests show, whatever they carry: a pass-through in front of the fixture.

``mcp-ref check --client -- CLIENT --url {url}`` gives the client the URL of
:func:`sniffing`, a loopback relay that forwards every byte both ways unchanged
to the fixture's HTTP server and reads the head of each request on the way
(:class:`ClientHttpJudge`). So what the fixture's server refuses before any
JSON-RPC is read (a request without the session id, an ``Accept`` without
``text/event-stream``) is still judged, against the client, by the rule it breaks:

* every POST lists both ``application/json`` and ``text/event-stream`` in
  ``Accept`` (basic/transports#16);
* once initialize was answered with a session id, every request carries it
  (#59) and, from 2025-06-18 on, ``MCP-Protocol-Version`` (#65).

A 2026-07-28 request (no session, its own ``_meta``) is the modern fixture's
to judge (:mod:`.modern_fixture`).
"""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import trio

from .modern_fixture import is_modern_opening
from .report import Finding

__all__ = ["ClientHttpJudge", "sniffing"]


class ClientHttpJudge:
    """The rules a 2025 client's HTTP requests are held to (see the module doc)."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.requests = 0
        #: the version offered in initialize (None: no initialize seen yet)
        self.version: str | None = None
        self._seen: set[str] = set()

    def _find(self, requirement: str, message: str, evidence: str) -> None:
        if requirement in self._seen:
            return
        self._seen.add(requirement)
        self.findings.append(Finding.of(requirement, message, evidence, party="client"))

    def request(self, method: str, headers: dict[str, str], body: bytes) -> None:
        try:
            message: Any = json.loads(body) if body else None
        except ValueError:
            message = None
        if is_modern_opening(message) and "mcp-session-id" not in headers:
            return  # a 2026-07-28 request
        self.requests += 1
        shown = f"{method} with headers {sorted(headers)}"
        if method == "POST":
            accept = headers.get("accept", "").lower()
            if "application/json" not in accept or "text/event-stream" not in accept:
                self._find(
                    "basic/transports#16",
                    f"a POST's Accept header is {headers.get('accept')!r}: it lists not both "
                    "application/json and text/event-stream",
                    shown,
                )
        if type(message) is dict and message.get("method") == "initialize":
            params = message.get("params")
            offered = params.get("protocolVersion") if type(params) is dict else None
            self.version = offered if isinstance(offered, str) else "2025-03-26"
            return
        if self.version is None:
            return
        if "mcp-session-id" not in headers:
            self._find(
                "basic/transports#59",
                f"a {method} after initialize carries no MCP-Session-Id (the fixture gave one)",
                shown,
            )
        if self.version >= "2025-06-18" and "mcp-protocol-version" not in headers:
            self._find(
                "basic/transports#65",
                f"a {method} after initialize carries no MCP-Protocol-Version header",
                shown,
            )


class _Heads:
    """Request heads (and Content-Length bodies) read off a byte stream as it passes."""

    def __init__(self, judge: ClientHttpJudge) -> None:
        self.judge = judge
        self.buf = b""
        self.gave_up = False

    def feed(self, data: bytes) -> None:
        if self.gave_up:
            return
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.buf[:end].decode("latin-1").split("\r\n")
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            if "chunked" in headers.get("transfer-encoding", "").lower():
                self.gave_up = True  # (a chunked request body: the heads after it are not followed)
                return
            try:
                length = int(headers.get("content-length") or 0)
            except ValueError:
                self.gave_up = True
                return
            if len(self.buf) < end + 4 + length:
                return
            body = self.buf[end + 4 : end + 4 + length]
            self.buf = self.buf[end + 4 + length :]
            self.judge.request(lines[0].split(" ")[0], headers, body)


@asynccontextmanager
async def sniffing(url: str, judge: ClientHttpJudge) -> AsyncIterator[str]:
    """A relay on a free loopback port to ``url`` (http:// on loopback); yields the URL to give the client."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    bound = listeners[0].socket.getsockname()[1]

    async def pump(src: trio.abc.Stream, dst: trio.abc.Stream, heads: _Heads | None) -> None:
        try:
            while data := await src.receive_some(65536):
                if heads is not None:
                    heads.feed(bytes(data))
                await dst.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        finally:
            try:
                await dst.send_eof()  # type: ignore[attr-defined]
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError, AttributeError):
                pass

    async def handle(client: trio.SocketStream) -> None:
        try:
            upstream = await trio.open_tcp_stream(host, port)
        except OSError:
            await client.aclose()
            return
        async with client, upstream:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pump, client, upstream, _Heads(judge))
                nursery.start_soon(pump, upstream, client, None)

    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, handle, listeners)
        try:
            yield f"http://127.0.0.1:{bound}{parts.path or '/'}"
        finally:
            nursery.cancel_scope.cancel()
