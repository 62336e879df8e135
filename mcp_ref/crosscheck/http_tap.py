"""``mcp-ref tap --listen 127.0.0.1:PORT URL``: the tap for Streamable HTTP.

A reverse proxy on h11: every request the client makes to the tap goes to
the server's URL unchanged (but for ``Host``), and the answer comes back as
it arrives, SSE streams included. On the way the tap judges the messages
both ways (POST bodies from the client; JSON bodies and SSE events from the
server) and what the transport says (basic/transports#streamable-http): a
notification or response POSTed is answered 202 with no body (#18), a
request with JSON or an SSE stream (#21), a GET with an SSE stream or 405 (#39).

The server may be an ``https://`` URL: the tap speaks TLS to it (the
system's trust store, or the ``ssl_context`` given: ``--cafile``), and plain
HTTP to the client on the loopback address it listens on, so the traffic it
judges is readable.
"""

import json
import math
import signal
import ssl
import sys
from functools import partial
from typing import Any, NamedTuple, TextIO
from urllib.parse import urlsplit

import h11
import trio

from ..basic.transports.http_client import open_connection
from ..basic.transports.streamable_http import SSEDecoder
from ..errors import TLSError
from .http_rules import posted_kind
from .observer import Direction
from .tap import Tap

__all__ = ["run_http_tap", "serve_http_tap"]

_READ = 65536
#: how long connecting to the server (and the TLS handshake) may take
_CONNECT_TIMEOUT = 30.0
#: headers that belong to one hop, never forwarded as they are
_HOP = frozenset(
    {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"trailer", b"upgrade", b"proxy-connection"}
)


def run_http_tap(
    host: str, port: int, url: str, tap: Tap, *, err: TextIO, ssl_context: ssl.SSLContext | None = None
) -> int:
    """Serve the tap until SIGINT or SIGTERM; returns 0."""

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                serve = partial(serve_http_tap, err=err, ssl_context=ssl_context)
                listening = await nursery.start(serve, host, port, url, tap)
                err.write(f"mcp-ref tap: listening on {listening}, forwarding to {url} (Ctrl-C stops)\n")
                err.flush()
                async for _ in signals:
                    break
                nursery.cancel_scope.cancel()

    trio.run(main)
    return 0


async def serve_http_tap(
    host: str,
    port: int,
    url: str,
    tap: Tap,
    *,
    err: TextIO | None = None,
    ssl_context: ssl.SSLContext | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the tap on ``host:port`` (0: a free port); ``task_status`` gets its URL. When the
    server cannot be reached (or closes without answering, or its certificate is not trusted),
    the client gets 502 Bad Gateway and ``err`` (default: stderr) says why.

    ``ssl_context``: the trust for an ``https://`` URL (default: the system's trust store)."""
    upstream = urlsplit(url)
    if upstream.scheme not in ("http", "https") or not upstream.hostname:
        raise ValueError(f"{url!r}: the tap forwards to http:// and https:// URLs")
    if upstream.scheme == "http" and ssl_context is not None:
        raise ValueError(f"{url!r}: an ssl_context is for https:// URLs")
    https = upstream.scheme == "https"
    context = (ssl_context or ssl.create_default_context()) if https else None
    where = _Upstream(upstream.hostname, upstream.port or (443 if https else 80), upstream.netloc, context)
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound = listeners[0].socket.getsockname()[1]
    path = upstream.path or "/"

    async def handle(stream: trio.SocketStream) -> None:
        try:
            await _serve_connection(stream, where, tap, err if err is not None else sys.stderr)
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError, OSError):
            pass  # one side went away: that connection is over, the tap goes on
        finally:
            await stream.aclose()

    async with trio.open_nursery() as nursery:
        task_status.started(f"http://{host}:{bound}{path}")
        await trio.serve_listeners(handle, listeners, handler_nursery=nursery)


async def _read_request(stream: trio.SocketStream, conn: h11.Connection) -> tuple[h11.Request, bytes] | None:
    head: h11.Request | None = None
    body = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await stream.receive_some(_READ))
            continue
        if isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += bytes(event.data)
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            return head, body
        elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
            return None


class _Upstream(NamedTuple):
    """Where the tap forwards to: the server's host, port, ``Host`` header and TLS (None: plain HTTP)."""

    host: str
    port: int
    netloc: str
    ssl_context: ssl.SSLContext | None


async def _serve_connection(client: trio.SocketStream, where: _Upstream, tap: Tap, err: TextIO) -> None:
    conn = h11.Connection(h11.SERVER)
    while True:
        got = await _read_request(client, conn)
        if got is None:
            return
        head, body = got
        await _exchange(client, conn, head, body, where, tap, err)
        if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
            return
        try:
            conn.start_next_cycle()
        except h11.LocalProtocolError:
            return


async def _exchange(
    client: trio.SocketStream,
    conn: h11.Connection,
    head: h11.Request,
    body: bytes,
    where: _Upstream,
    tap: Tap,
    err: TextIO,
) -> None:
    method = head.method.decode()
    session = next((v.decode("latin-1") for n, v in head.headers if n.lower() == b"mcp-session-id"), None)
    # (each exchange is numbered: its messages and steps carry the number, which picks their session)
    x = tap.new_exchange()
    try:
        await _forward(client, conn, head, body, where, tap, err, method, session, x)
    finally:
        tap.sessions.forget(x)


async def _forward(
    client: trio.SocketStream,
    conn: h11.Connection,
    head: h11.Request,
    body: bytes,
    where: _Upstream,
    tap: Tap,
    err: TextIO,
    method: str,
    session: str | None,
    x: int,
) -> None:
    netloc = where.netloc
    is_request, message, ids = posted_kind(body) if method == "POST" else (False, None, [])
    if method == "POST" and body:
        # (the headers too: a 2026-07-28 request's metadata headers are judged against its body)
        headers_in = {n.decode("latin-1"): v.decode("latin-1") for n, v in head.headers}
        tap.message(Direction.TO_SERVER, body, headers_in, exchange=x)
    headers = [(n, v) for n, v in head.headers if n.lower() not in _HOP and n.lower() != b"host"]
    headers.append((b"host", netloc.encode()))
    url = f"{'https' if where.ssl_context else 'http'}://{netloc}"
    try:
        upstream = await open_connection(where.host, where.port, where.ssl_context, url=url, timeout=_CONNECT_TIMEOUT)
    except TLSError as e:
        await _bad_gateway(client, conn, err, str(e))
        return
    except (OSError, trio.TooSlowError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e) or "timed out"
        await _bad_gateway(client, conn, err, f"cannot reach the server at {netloc}: {why}")
        return
    try:
        up = h11.Connection(h11.CLIENT)
        if body:
            headers = [(n, v) for n, v in headers if n.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
        out = up.send(h11.Request(method=head.method, target=head.target, headers=headers)) or b""
        if body:
            out += up.send(h11.Data(data=body)) or b""
        out += up.send(h11.EndOfMessage()) or b""
        await upstream.send_all(out)
        answered = await _relay_response(
            client, conn, upstream, up, method, is_request, message, tap, session=session, ids=ids, x=x
        )
        if not answered:
            await _bad_gateway(client, conn, err, f"the server at {netloc} closed the connection without answering")
    finally:
        await upstream.aclose()


async def _bad_gateway(client: trio.SocketStream, conn: h11.Connection, err: TextIO, why: str) -> None:
    """Answer 502 Bad Gateway saying ``why``, and say it on ``err`` too."""
    err.write(f"mcp-ref tap: {why}\n")
    err.flush()
    body = f"mcp-ref tap: {why}\n".encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    out = conn.send(h11.Response(status_code=502, headers=headers)) or b""
    out += (conn.send(h11.Data(data=body)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
    await client.send_all(out)


async def _relay_response(
    client: trio.SocketStream,
    conn: h11.Connection,
    upstream: trio.abc.Stream,
    up: h11.Connection,
    method: str,
    is_request: bool,
    posted: Any,
    tap: Tap,
    session: str | None = None,
    ids: list[Any] | None = None,
    x: int | None = None,
) -> bool:
    """Relay the server's answer; False when it closed before any answer began. What the answer
    says about the transport is judged by the tap's :class:`~.http_rules.HttpJudge`, the one the
    battery uses."""
    response: h11.Response | None = None
    content_type = ""
    decoder = SSEDecoder()
    json_body = b""
    body = b""
    first: tuple[str | None, str | None] | None = None
    waiting = {json.dumps(i) for i in ids or []}
    answered = lingered = False
    while True:
        event = up.next_event()
        if event is h11.NEED_DATA:
            data: bytes | None = None
            try:
                with trio.move_on_after(tap.linger if answered and not lingered else math.inf) as wait:
                    data = bytes(await upstream.receive_some(_READ))
            except (trio.BrokenResourceError, OSError):
                if response is None:
                    return False
                raise
            if wait.cancelled_caught:
                # [basic/transports#32] the response came, and the stream went on
                lingered = True
                tap.http_step({"http": "still-open", "x": x, "posted": posted})
                continue
            assert data is not None
            up.receive_data(data)
            continue
        if isinstance(event, h11.Response):
            response = event
            headers = [(n, v) for n, v in event.headers if n.lower() not in _HOP]
            content_type = dict((n.lower(), v) for n, v in event.headers).get(b"content-type", b"").decode()
            if not any(n.lower() == b"content-length" for n, _ in headers):
                headers.append((b"transfer-encoding", b"chunked"))
            head = {n.decode("latin-1").lower(): v.decode("latin-1") for n, v in event.headers}
            # (an initialize carries no session id: its stream belongs to the session its answer names,
            # as the battery's raw channel has it -- its event ids count among that session's)
            session = session if session is not None else head.get("mcp-session-id")
            step = {"method": method, "status": event.status_code, "content_type": content_type, "headers": head}
            # judged before the client has it: a request it makes in the session this head names cannot
            # overtake the session's start
            tap.http_step(
                {"http": "head", "x": x, "session": session, **step, "is_request": is_request, "posted": posted}
            )
            await client.send_all(conn.send(h11.Response(status_code=event.status_code, headers=headers)) or b"")
        elif isinstance(event, h11.Data):
            chunk = bytes(event.data)
            if chunk:
                await client.send_all(conn.send(h11.Data(data=chunk)) or b"")
            if content_type.startswith("text/event-stream"):
                for sse in decoder.feed(chunk):
                    if first is None:
                        first = (sse.id, sse.data)
                    tap.http_step({"http": "event", "x": x, "session": session, "id": sse.id, "data": sse.data})
                    if sse.data:
                        tap.message(Direction.TO_CLIENT, sse.data.encode(), exchange=x)
                        if _response_id(sse.data) in waiting:
                            answered = True
            elif content_type.startswith("application/json"):
                json_body += chunk
            else:
                body += chunk
        elif isinstance(event, h11.EndOfMessage):
            # judged before the client has it all: what it does next cannot overtake the judging
            if json_body and not (response is not None and response.status_code == 202):
                tap.message(Direction.TO_CLIENT, json_body, exchange=x)
            if response is not None:
                tap.http_step(
                    {
                        "http": "end",
                        "x": x,
                        "method": method,
                        "status": response.status_code,
                        "content_type": content_type,
                        "body": (json_body or body).decode("utf-8", "surrogateescape"),
                        "is_request": is_request,
                        "first": list(first) if first is not None else None,
                        "posted": posted,
                        "revision": tap.sessions.revision_of(x),
                    }
                )
            await client.send_all(conn.send(h11.EndOfMessage()) or b"")
            return True
        elif isinstance(event, h11.ConnectionClosed):
            return response is not None


def _response_id(data: str) -> str | None:
    try:
        message = json.loads(data)
    except ValueError:
        return None
    if isinstance(message, dict) and "method" not in message and "id" in message:
        return json.dumps(message["id"])
    return None
