"""The MCP endpoint as an ASGI application, to mount in an existing web application.

::

    mcp = server.asgi_app(allowed_hosts=["notes.example.com"])
    app = Starlette(routes=[Route("/", home), Mount("/", app=mcp)], lifespan=mcp.lifespan)
    # hypercorn -k trio module:app

The application is our own HTTP server (:mod:`.http_server`) behind a bridge:
each ASGI request is handed to it as one HTTP/1.1 exchange on an in-process
connection, and what it answers goes back as ASGI events, an event stream
chunk by chunk as it is written. So the endpoint keeps every guarantee of the
h11 server, by construction, not by a second implementation: the Origin and
Host checks, the limits (body size, sessions, streams, inboxes, read
timeout), authorization, resumption, both protocol eras. It runs on trio:
Hypercorn's trio worker, or Quart-Trio.

Sessions outlive requests: they live in the application's *lifespan*, which
the ASGI server runs when the application is served on its own, and which a
framework mounting it must run too (Starlette does not run a mounted app's
lifespan: give ``lifespan=mcp.lifespan``). A request that arrives before it
has started is answered 503, saying so.

Paths are the request's full path (``scope["path"]``): with the default
``path="/mcp"``, mount the application at the root (``Mount("/", app=mcp)``,
after your own routes) and the endpoint is ``/mcp``, with the protected
resource metadata at its well-known URL when ``auth`` is given.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import h11
import trio

from ...errors import ErrorCode
from ._framing import DEFAULT_HEAD_LIMIT
from ._pipes import pipe
from .http_server import HttpConfig, Servable, _HttpServer, error_body

if TYPE_CHECKING:
    from ..authorization.resource_server import ProtectedResource

__all__ = ["AsgiApp"]

log = logging.getLogger("mcp_ref.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: headers of one hop: the bridge frames its own connection
_HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"te", b"trailer", b"expect"})


class AsgiApp:
    """An ASGI 3 application serving ``server``'s MCP endpoint (see the module's docs).

    ``config`` / ``options`` are :class:`HttpConfig` fields (``path``,
    ``allowed_hosts``, ``allowed_origins``, limits); ``auth`` makes the
    endpoint an OAuth resource server, and then needs its ``resource`` (the
    URL clients use: behind another server it cannot be guessed). Without
    ``allowed_hosts``, requests naming a host other than a loopback name are
    refused (403), as with :func:`serve_http` on 127.0.0.1: list the names
    the application is reached by. ``grace``: seconds requests in flight get
    when the lifespan ends.
    """

    def __init__(
        self,
        server: Servable,
        *,
        config: HttpConfig | None = None,
        auth: ProtectedResource | None = None,
        grace: float = 5.0,
        **options: Any,
    ) -> None:
        if auth is not None and auth.resource is None:
            raise ValueError(
                "an ASGI application with auth needs ProtectedResource(resource=...): the URL its "
                "clients use (https://notes.example.com/mcp), which the application cannot see"
            )
        self.server = server
        #: the HTTP server's limits and policy
        self.config = config or HttpConfig(**options)
        #: the resource server's policy (None: no authorization)
        self.auth = auth
        #: seconds requests in flight get when the lifespan ends
        self.grace = grace
        self._http: _HttpServer | None = None

    # -- lifespan ------------------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the endpoint's sessions for the duration of the block (what the lifespan does)."""
        if self._http is not None:
            raise RuntimeError("this ASGI application is running already")
        async with trio.open_nursery() as nursery:
            self._http = http = _HttpServer(self.server, self.config, nursery, "127.0.0.1", self.auth)
            nursery.start_soon(http.expire_idle)
            try:
                yield
            finally:
                self._http = None
                with trio.CancelScope(shield=True):
                    await http.shutdown(self.grace)

    def lifespan(self, app: object = None) -> Any:
        """The lifespan context for a framework that mounts this application:
        ``Starlette(..., lifespan=mcp.lifespan)`` (the ``app`` argument is the framework's)."""
        return self.running()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        try:
            async with self.running():
                await send({"type": "lifespan.startup.complete"})
                message = await receive()  # lifespan.shutdown
        except Exception as e:
            log.exception("the MCP application failed")
            await send({"type": "lifespan.shutdown.failed", "message": str(e)})
            return
        await send({"type": "lifespan.shutdown.complete"})

    # -- requests ------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1000})
            return
        http = self._http
        if http is None:
            log.error("a request came before the MCP application's lifespan started (lifespan=app.lifespan)")
            body = json.dumps(error_body(ErrorCode.INTERNAL_ERROR, "the MCP endpoint is not started")).encode()
            await _answer(send, 503, body)
            return
        # one in-process HTTP/1.1 connection per request: bytes in as they come, bytes out as
        # the server writes them (in lockstep: a slow client slows the server's writes, so
        # its own stall and buffer limits apply as on a socket)
        to_server, from_client = pipe()
        to_client, from_server = pipe(lockstep=True)
        connection = trio.StapledStream(to_client, from_client)
        head, chunked, sent = _head(scope)
        # the head limit holds on what the client sent, not on what the bridge adds to it
        head_limit = DEFAULT_HEAD_LIMIT + len(head) - sent
        async with trio.open_nursery() as nursery:
            nursery.start_soon(http.handle_connection, connection, head_limit, _client_address(scope))
            nursery.start_soon(_forward_request, head, chunked, receive, to_server, nursery.cancel_scope)
            await _forward_answer(scope, from_server, send)
            nursery.cancel_scope.cancel()


async def _answer(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _client_address(scope: Scope) -> str | None:
    """The client's address as the ASGI server saw it (the user of the per-user limits when
    there is no authorization, as a socket's peer is for the server on its own); None when the
    ASGI server gives none (a Unix socket)."""
    client = scope.get("client")
    host = client[0] if isinstance(client, list | tuple) and client else None
    return host if isinstance(host, str) and host else None


def _head(scope: Scope) -> tuple[bytes, bool, int]:
    """The request's head as HTTP/1.1 bytes, whether its body is sent chunked, and the length
    of the head the client sent (as HTTP/1.1 writes it: ``name: value`` lines)."""
    target = scope.get("raw_path") or scope["path"].encode("utf-8")
    if scope.get("query_string"):
        target += b"?" + scope["query_string"]
    headers = [(k.lower(), v) for k, v in scope.get("headers", [])]
    version = str(scope.get("http_version", "1.1")).encode()
    sent = len(scope["method"]) + len(target) + len(version) + 9 + sum(len(k) + len(v) + 4 for k, v in headers) + 2
    names = {k for k, _ in headers}
    chunked = b"content-length" not in names and (b"transfer-encoding" in names or scope["method"] in ("POST", "PUT"))
    kept = [(k, v) for k, v in headers if k not in _HOP_BY_HOP]
    if b"transfer-encoding" in names and b"content-length" in names:
        # framed two ways (RFC 9112 section 6.1): the ASGI server read the body by one of them,
        # the server is shown both, and refuses the request as it does on its own socket (400,
        # and the connection closed)
        kept += [(k, v) for k, v in headers if k == b"transfer-encoding"]
    if b"host" not in names and scope.get("server"):
        # (HTTP/2 has :authority, which an ASGI server need not turn into a Host header)
        host, port = scope["server"]
        kept.append((b"host", f"{host}:{port}".encode() if port else str(host).encode()))
    # (kept alive: the server says ``connection: close`` only when it means to close, and the
    # bridge passes that on to the ASGI server)
    if chunked:
        kept.append((b"transfer-encoding", b"chunked"))
    lines = [scope["method"].encode() + b" " + target + b" HTTP/1.1"]
    lines += [k + b": " + v for k, v in kept]
    return b"\r\n".join(lines) + b"\r\n\r\n", chunked, sent


async def _forward_request(
    head: bytes, chunked: bool, receive: Receive, out: trio.abc.SendStream, stop: trio.CancelScope
) -> None:
    """The request's head and body into the connection; the client leaving closes it."""
    try:
        await out.send_all(head)
        body_done = False
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                # the client went away: as a closed socket (a stream's listener is detached,
                # its handler goes on, the answer waits in the event store)
                stop.cancel()
                return
            if message["type"] != "http.request" or body_done:
                continue
            data = bytes(message.get("body", b""))
            if chunked and data:
                await out.send_all(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            elif data:
                await out.send_all(data)
            if not message.get("more_body", False):
                body_done = True
                if chunked:
                    await out.send_all(b"0\r\n\r\n")
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return


async def _forward_answer(scope: Scope, incoming: trio.abc.ReceiveStream, send: Send) -> None:
    """What the server wrote, as ASGI events: the head, then each piece of the body as it
    comes (an event stream is sent on as it is written)."""
    reader = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
    reader.send(h11.Request(method=scope["method"], target="/", headers=[("host", "bridge")]))
    reader.send(h11.EndOfMessage())
    started = False
    while True:
        try:
            event = reader.next_event()
        except h11.RemoteProtocolError:
            event = h11.ConnectionClosed()  # the server dropped the connection mid-answer
        if event is h11.NEED_DATA:
            data = await incoming.receive_some(65536)
            reader.receive_data(bytes(data))
            continue
        if isinstance(event, h11.InformationalResponse):
            continue
        if isinstance(event, h11.Response):
            headers = [(k.lower(), v) for k, v in event.headers if k.lower() not in _HOP_BY_HOP]
            closes = any(k.lower() == b"connection" and b"close" in v.lower() for k, v in event.headers)
            if closes and scope.get("http_version", "1.1") in ("1.0", "1.1"):
                # the server closes its connection after this answer (a refused head or body: what
                # follows on the connection cannot be trusted): so does the ASGI server (HTTP/1
                # only: HTTP/2 has no such header, its streams are framed apart)
                headers.append((b"connection", b"close"))
            await send({"type": "http.response.start", "status": event.status_code, "headers": headers})
            started = True
        elif isinstance(event, h11.Data):
            await send({"type": "http.response.body", "body": bytes(event.data), "more_body": True})
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            if started:
                # shielded: the ASGI server ends the exchange inside this call (it tells the
                # request's side the client is done, which cancels the bridge's tasks, this one
                # among them) and closes its connection when the server asked it to
                with trio.CancelScope(shield=True):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
