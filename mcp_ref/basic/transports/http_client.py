"""Streamable HTTP, client side: h11 on trio (basic/transports#streamable-http).

::

    async with open_http_channel("http://127.0.0.1:8000/mcp") as channel:
        async with open_session(channel) as client:   # or mcp_ref.open_http_client(url)
            await client.call_tool("echo", {"text": "hi"})

Every message is its own POST (transports#14) with the Accept header listing
JSON and SSE (#16); the answer is read in the background, JSON or SSE (#22),
so the session never waits on HTTP. After initialization the client sends
``MCP-Session-Id`` and ``MCP-Protocol-Version`` (#59, #65), opens the GET
stream (a 405 just means there is none, #39), resumes SSE streams that end
early -- closed by the server or dropped by the network -- with
``Last-Event-ID`` after the server's ``retry`` (#25, #27, #52), and sends
DELETE on close (#63). A 404 for our session id starts a new session (#62):
the initialize request goes out again without a session id, then
``notifications/initialized``, and the request that met the 404 is sent again;
``on_new_session`` tells the application, whose server-side state
(subscriptions, tasks, log level) stayed with the old session. Where that
fails (another protocol version, an error) the channel ends with
:class:`SessionExpired`. With ``legacy_fallback=True`` a server of the
2024-11-05 HTTP+SSE transport is used too (initialize refused with
400/404/405: GET the URL for its ``endpoint`` event, POST there from then on).

``https://`` URLs speak TLS (``trio.SSLStream`` over the standard library's
``ssl``): the system's trust store by default, or the ``ssl_context`` given
(a private CA, a client certificate). A handshake that fails ends the channel
with :class:`~mcp_ref.errors.TLSError`. A redirect (3xx) is never followed:
the request fails with an error naming the ``Location``.

With ``auth`` (an :class:`HttpAuth`, such as
:class:`~mcp_ref.basic.transports.oauth_client.OAuthClient`) every request
carries the ``Authorization`` header it gives (basic/authorization#54, #55);
a 401, or a 403 ``insufficient_scope``, is handed to it, and the request is
sent again once it has new authorization. Authorization that cannot be had
at all ends the channel with the :class:`~mcp_ref.errors.AuthorizationError`;
a step-up that fails fails that request only.
"""

import hashlib
import json
import logging
import math
import os
import select
import ssl
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Protocol
from urllib.parse import SplitResult, urljoin, urlsplit

import h11
import trio

from ...errors import (
    AuthorizationError,
    ConnectionClosed,
    HTTPTransportError,
    MCPError,
    MessageTooLarge,
    StreamBroken,
    TLSError,
)
from ..versioning import MODERN_ERROR_CODES
from ._framing import FramedReader, framed_connection, response_framing_problem
from ._nursery import block_nursery
from .stdio import DEFAULT_MAX_MESSAGE_SIZE, too_large
from .streamable_http import LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, SSEDecoder, SSEEvent

__all__ = ["HttpAuth", "HttpClientChannel", "SessionExpired", "StreamBroken", "open_http_channel", "open_connection"]

log = logging.getLogger("mcp_ref.http.client")


class SessionExpired(ConnectionClosed, trio.BrokenResourceError):
    """[basic/transports#62] the server no longer knows our session (HTTP 404) and no new one could be started.

    Raised by the channel's ``receive`` and ``send`` from then on; a session
    on the channel ends with its message as the reason.
    """


class HttpAuth(Protocol):
    """What the channel asks about authorization (basic/authorization; ``OAuthClient`` is one).

    ``authorization(url)`` gives the ``Authorization`` value for a request
    (None: send none); ``challenged(...)`` is told that the server refused a
    request carrying ``used`` with ``status`` and ``www_authenticate``, and
    returns whether the request should be sent again (``again``: it was
    already re-sent after an earlier challenge). ``flow_timeout`` is how long
    meeting one challenge may take (an interactive authorization waits for
    the user), so the session's initialize waits at least that long.
    """

    flow_timeout: float

    async def authorization(self, url: str) -> str | None: ...

    async def challenged(
        self, url: str, status: int, www_authenticate: str | None, used: str | None, *, again: bool = False
    ) -> bool: ...


#: how many times one request is sent again after authorization challenges
_MAX_CHALLENGES = 4
#: how much of a challenge's body is kept (for the error when it cannot be met)
_CHALLENGE_BODY = 64 * 1024


class _RestartFailed(Exception):
    """A new session after a 404 could not be set up."""


class _BodyTooLarge(Exception):
    """An answer's body is longer than we read: ``size`` bytes at least, ``head`` its first bytes."""

    def __init__(self, size: int, head: bytes) -> None:
        super().__init__(f"an answer of at least {size} bytes")
        self.size = size
        self.head = head


#: where an answer's messages go: the session's inbox, or the reader of HttpClientChannel.read_answer
_Put = Callable[["bytes | MessageTooLarge | HTTPTransportError"], Awaitable[None]]

#: the longest error body read from a failed exchange (only its start is quoted)
_MAX_ERROR_BODY = 64 * 1024


class _Inbox:
    """What the session will receive, bounded: a task delivering past ``max_messages``
    messages or ``max_bytes`` bytes waits until the session has read (so the answers
    and streams it reads from wait too, and TCP tells the server to slow down).
    A message always fits in an empty inbox. Holds a :class:`MessageTooLarge` where a
    message was dropped, and an :class:`HTTPTransportError` where a request's exchange
    failed, raised in its turn by :meth:`get`."""

    def __init__(self, max_messages: int, max_bytes: int) -> None:
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self._items: deque[bytes | MessageTooLarge | HTTPTransportError] = deque()
        self._bytes = 0
        self.closed = False
        self._room = trio.lowlevel.ParkingLot()  # deliverers waiting for room
        self._ready = trio.lowlevel.ParkingLot()  # the session waiting for a message

    def _full(self, size: int) -> bool:
        return bool(self._items) and (len(self._items) >= self.max_messages or self._bytes + size > self.max_bytes)

    async def put(self, item: bytes | MessageTooLarge | HTTPTransportError) -> None:
        """Add ``item`` once there is room (dropped if the inbox is closed meanwhile).

        With room, the item is added before the schedule point (as a trio memory
        channel's send does), so the session reads it in the same scheduler pass
        that resumes this task, not in the pass after (bench W9: one pass less
        per message).
        """
        size = len(item) if isinstance(item, bytes) else 0
        await trio.lowlevel.checkpoint_if_cancelled()
        waited = False
        while not self.closed and self._full(size):
            await self._room.park()
            waited = True
        if not self.closed:
            self._items.append(item)
            self._bytes += size
            self._ready.unpark()
        if not waited:
            await trio.lowlevel.cancel_shielded_checkpoint()

    async def get(self) -> bytes:
        await trio.lowlevel.checkpoint_if_cancelled()
        while not self._items:
            if self.closed:
                raise trio.EndOfChannel
            await self._ready.park()
        item = self._items.popleft()
        if isinstance(item, bytes):
            self._bytes -= len(item)
        self._room.unpark_all()
        if isinstance(item, bytes):
            return item
        raise item

    def close(self) -> None:
        self.closed = True
        self._room.unpark_all()
        self._ready.unpark_all()


_ACCEPT_BOTH = "application/json, text/event-stream"


def _is_error_response(body: bytes, request_ids: list[Any]) -> bool:
    """Whether ``body`` is a JSON-RPC error response to one of ``request_ids`` (or without an id)."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    return (
        isinstance(parsed, dict)
        and isinstance(parsed.get("error"), dict)
        and isinstance(parsed["error"].get("code"), int)
        and parsed.get("id", None) in [*request_ids, None]
    )


async def _read_modern_refusal(response: Any) -> bytes | None:
    """The body of a 400 when it is a JSON-RPC error with a 2026-07-28 code (-32020, -32021,
    -32022), else None."""
    try:
        body = await response.read(_MAX_ERROR_BODY)
    except (_BodyTooLarge, *_FAILURES):
        return None
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return None
    return body if isinstance(error, dict) and error.get("code") in MODERN_ERROR_CODES else None


#: what a broken exchange or a garbled answer raises
_FAILURES = (trio.BrokenResourceError, OSError, h11.ProtocolError, ValueError, HTTPTransportError)

#: what the channel sends itself once a replacement session is initialised
_INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


class _Response:
    def __init__(self, conn: h11.Connection, stream: trio.abc.Stream, head: h11.Response, pool: "_Pool") -> None:
        self.conn = conn
        self.stream = stream
        self.pool = pool
        self.closed = False
        self.status = head.status_code
        self.headers: dict[str, str] = {}
        for name, value in head.headers:
            # a repeated field is one comma-separated list (RFC 9110 section 5.3): several
            # WWW-Authenticate lines are several challenges
            key, text = name.decode("latin-1").lower(), value.decode("latin-1")
            self.headers[key] = f"{self.headers[key]}, {text}" if key in self.headers else text
        #: the Authorization value the request carried (None: none)
        self.authorization: str | None = None
        #: the body, once read whole (see :meth:`read`)
        self.body: bytes | None = None

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    async def chunks(self) -> AsyncIterator[bytes]:
        reader = FramedReader(self.conn, self.stream)
        while True:
            event = await reader.next_event()
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                return

    async def read(self, limit: int) -> bytes:
        """The whole body, if it is at most ``limit`` bytes; else :class:`_BodyTooLarge`
        (with what was read, and without reading the rest: the connection is not reused).
        Once read, it is kept: a second read gives it again."""
        if self.body is not None:
            return self.body
        declared = self.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and len(declared) < 20 and int(declared) > limit:
            raise _BodyTooLarge(int(declared), b"")
        body = bytearray()
        async for chunk in self.chunks():
            body += chunk
            if len(body) > limit:
                raise _BodyTooLarge(len(body), bytes(body[:1024]))
        self.body = bytes(body)
        return self.body

    async def aclose(self) -> None:
        """Done with the answer: the connection goes back to the pool if the exchange completed."""
        if self.closed:
            return
        self.closed = True
        if self.pool.put(self.stream, self.conn):
            return
        with trio.CancelScope(shield=True):
            await self.stream.aclose()


def _field_value_ok(value: str) -> bool:
    """Whether a header value has only what RFC 9110 section 5.5 allows (no CR, LF or NUL, no
    other controls, no space or tab at either end)."""
    return value == value.strip(" \t") and all(c == "\t" or " " <= c != "\x7f" for c in value)


class _StaleConnection(Exception):
    """A kept-alive connection turned out closed before any answer began: use a fresh one."""


def _peer_closed(stream: trio.abc.Stream) -> bool:
    """Whether an idle connection has something to read: the server closed it (or misbehaves).

    (On TLS the raw socket is watched: after a whole exchange nothing is due
    from the server, so bytes waiting there are its close_notify or its FIN.)
    """
    raw = stream.transport_stream if isinstance(stream, trio.SSLStream) else stream
    assert isinstance(raw, trio.SocketStream)
    poller = select.poll()
    poller.register(raw.socket.fileno(), select.POLLIN)
    return bool(poller.poll(0))


def check_url(url: str, ssl_context: ssl.SSLContext | None) -> SplitResult:
    """``url`` split, once it is known to be an http:// or https:// URL (ValueError otherwise)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r}: only http:// and https:// URLs are supported")
    if parts.scheme == "http" and ssl_context is not None:
        raise ValueError(f"{url!r}: an ssl_context is for https:// URLs")
    return parts


async def open_connection(
    host: str,
    port: int,
    ssl_context: ssl.SSLContext | None,
    *,
    url: str,
    timeout: float,
    address: str | None = None,
) -> trio.abc.Stream:
    """A TCP connection to ``host:port``, with TLS over it when ``ssl_context`` is given.

    ``address``: connect to this address (one ``host`` resolved to, already
    checked) rather than resolve ``host`` again; TLS still names ``host``.

    The handshake is done here, under ``timeout`` (with the connect), so a
    certificate the context does not trust is a :class:`TLSError` at once,
    naming the URL, and not a broken stream at the first read.
    """
    with trio.fail_after(timeout):
        tcp = await trio.open_tcp_stream(address if address is not None else host, port)
        if ssl_context is None:
            return tcp
        stream = trio.SSLStream(tcp, ssl_context, server_hostname=host, https_compatible=True)
        try:
            await stream.do_handshake()
        except trio.BrokenResourceError as e:
            with trio.CancelScope(shield=True):
                await tcp.aclose()
            cause = e.__cause__ if isinstance(e.__cause__, ssl.SSLError) else e
            hint = ""
            if getattr(cause, "reason", None) == "WRONG_VERSION_NUMBER":
                # what OpenSSL says when the answer is not TLS at all (an HTTP server's 400)
                hint = " (the server does not speak TLS there: if it serves plain HTTP, use an http:// URL)"
            raise TLSError(f"TLS handshake with {url} failed: {cause}{hint}", url=url) from e
        except BaseException:
            with trio.CancelScope(shield=True):
                await tcp.aclose()
            raise
        return stream


def redirect_error(status: int, location: str | None, url: str) -> HTTPTransportError:
    """A 3xx answer: never followed silently, named with where it points."""
    where = f" to {location}" if location else " (no Location given)"
    return HTTPTransportError(
        f"{url} answered HTTP {status}, a redirect{where}; redirects are not followed: use the final URL",
        status=status,
        url=url,
        location=location,
    )


class _Sent:
    """A request written on a connection, its answer not read yet."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        conn: h11.Connection,
        args: tuple[str, str, bytes | None, Mapping[str, str] | None],
        *,
        reused: bool,
    ) -> None:
        self.stream = stream
        self.conn = conn
        #: what :meth:`HttpClientChannel._write` was given, to write it again
        self.args = args
        self.reused = reused
        #: the Authorization value written (None: none)
        self.authorization: str | None = None

    async def write(self, request: h11.Request, body: bytes | None) -> None:
        try:
            out = self.conn.send(request) or b""
            if body is not None:
                out += self.conn.send(h11.Data(data=body)) or b""
            out += self.conn.send(h11.EndOfMessage()) or b""
            await self.stream.send_all(out)
        except BaseException as exc:
            await self._failed(exc, answered=False)
            raise

    async def read_head(self) -> h11.Response:
        """The head of the answer.

        On a reused connection, a close before any byte of the answer raises
        :class:`_StaleConnection` (the server dropped the idle connection; it
        read nothing of ours), and the caller retries on another.
        """
        reader = FramedReader(self.conn, self.stream)
        try:
            while True:
                event = await reader.next_event()
                if isinstance(event, h11.Response):
                    if (problem := response_framing_problem(event)) is not None:
                        # RFC 9112 section 6.3: an answer framed two ways is an error, and the
                        # connection is not used again (what follows it could be read as the
                        # answer to our next request)
                        raise h11.RemoteProtocolError(problem)
                    return event
                if isinstance(event, h11.ConnectionClosed):
                    if self.reused and not reader.received:
                        raise _StaleConnection()
                    raise trio.BrokenResourceError("the server closed the connection without answering")
        except BaseException as exc:
            await self._failed(exc, answered=reader.received > 0)
            raise

    async def _failed(self, exc: BaseException, *, answered: bool) -> None:
        with trio.CancelScope(shield=True):
            await self.stream.aclose()
        stale = isinstance(exc, trio.BrokenResourceError | ConnectionError | h11.RemoteProtocolError)
        if self.reused and not answered and stale:
            raise _StaleConnection() from exc


class _Pool:
    """Idle kept-alive connections to the server (HTTP/1.1 persistent connections).

    Only connections whose last exchange ended cleanly on both sides come
    back; at most ``size`` wait; a closed pool takes none.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.idle: list[tuple[trio.abc.Stream, h11.Connection]] = []
        self.closed = False

    def put(self, stream: trio.abc.Stream, conn: h11.Connection) -> bool:
        if self.closed or len(self.idle) >= self.size:
            return False
        if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
            return False
        if conn.trailing_data[0]:
            # the server sent more than its answer: on this connection, that would be read as
            # the answer to the next request (response splitting, RFC 9112 section 11.1)
            log.warning("a server sent bytes after its answer; its connection is not reused")
            return False
        conn.start_next_cycle()
        self.idle.append((stream, conn))
        return True

    def take(self) -> tuple[trio.abc.Stream, h11.Connection] | None:
        return self.idle.pop() if self.idle else None

    async def aclose(self) -> None:
        self.closed = True
        idle, self.idle = self.idle, []
        with trio.CancelScope(shield=True):
            for stream, _ in idle:
                await stream.aclose()


class HttpClientChannel(trio.abc.Channel[bytes]):
    """The channel an MCP client session runs on over Streamable HTTP."""

    def __init__(
        self,
        url: str,
        nursery: trio.Nursery,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 30.0,
        max_reconnects: int = 5,
        default_retry_ms: int = 1000,
        max_idle_connections: int = 4,
        on_new_session: Callable[[str, str | None], None] | None = None,
        legacy_fallback: bool = False,
        ssl_context: ssl.SSLContext | None = None,
        auth: HttpAuth | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_inbox: int = 100,
        max_inbox_bytes: int = 16 * 1024 * 1024,
        max_unanswered_posts: int = 64,
    ) -> None:
        if min(max_message_size, max_inbox, max_inbox_bytes, max_unanswered_posts) < 1:
            raise ValueError("max_message_size, max_inbox, max_inbox_bytes and max_unanswered_posts must be at least 1")
        parts = check_url(url, ssl_context)
        if auth is not None and any(k.lower() == "authorization" for k in headers or {}):
            raise ValueError("pass auth= or an Authorization header, not both")
        #: the MCP endpoint's URL
        self.url = url
        #: ``http`` or ``https``
        self.scheme = parts.scheme
        assert parts.hostname is not None  # (check_url made sure)
        #: the server's host name or address
        self.host = parts.hostname
        #: the server's port
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        #: TLS for https:// (the system's trust store unless a context is given)
        self.ssl_context = (ssl_context or ssl.create_default_context()) if parts.scheme == "https" else None
        #: what ended the channel, when it was not the server's doing (TLS, authorization)
        self.failure: HTTPTransportError | None = None
        #: [basic/authorization] where the Authorization header comes from, and 401s go
        self.auth = auth
        #: the request target (the endpoint's path and query)
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        #: the ``Host`` header sent
        self.host_header = parts.netloc
        #: where the channel's background work runs
        self.nursery = nursery
        #: headers sent with every request
        self.extra_headers = dict(headers or {})
        #: seconds a connection (and its TLS handshake) may take
        self.connect_timeout = connect_timeout
        #: times a broken event stream is resumed before giving up
        self.max_reconnects = max_reconnects
        #: milliseconds to wait before resuming when the server set no ``retry``
        self.default_retry_ms = default_retry_ms
        #: the ``Mcp-Session-Id`` the server gave (None before, or without sessions)
        self.session_id: str | None = None
        #: the ``MCP-Protocol-Version`` sent, once negotiated
        self.protocol_version: str | None = None
        self._init_id: Any = None
        self._init_body: bytes | None = None
        self._ready = trio.Event()
        self._restart_lock = trio.Lock()
        #: called with (old session id, new session id) after a 404 led to a new session
        self.on_new_session = on_new_session
        #: how many times a 404 led to a new session
        self.session_restarts = 0
        self._expired: str | None = None
        #: the longest message taken from the server (a JSON body, an SSE event's data);
        #: a longer one is dropped unread and the session told (MessageTooLarge)
        self.max_message_size = max_message_size
        self._inbox = _Inbox(max_inbox, max_inbox_bytes)
        #: POSTs carrying no request (notifications, our answers) whose 202 has not come: past
        #: ``max_unanswered_posts`` the next such send waits, and so the session stops reading
        #: us a server that reads nothing of ours (each would hold a connection, for ever)
        self._unanswered = trio.Semaphore(max_unanswered_posts)
        self._get_started = False
        self._closed = False
        #: request ids (as JSON text) awaited on an SSE stream -> that stream's set of them
        self._awaited: dict[str, set[str]] = {}
        self._pool = _Pool(max_idle_connections)
        #: why the channel ended, once it has
        self.close_reason: str | None = None
        #: try the 2024-11-05 HTTP+SSE transport when initialize is refused with 400/404/405
        self.legacy_fallback = legacy_fallback
        #: the POST endpoint of a 2024-11-05 HTTP+SSE server, once we fell back to one
        self.legacy_endpoint: str | None = None
        #: (2026-07-28) the modern revision spoken: no session, no GET stream, no resumption; each
        #: POST carries the request metadata headers (see use_modern)
        self.modern: str | None = None
        #: (2026-07-28) a tool's x-mcp-header parameters, by tool name (the client session sets it)
        self.param_headers_for: Callable[[str], Any] | None = None
        #: (2026-07-28) the authorization context of the last request written: a digest of its
        #: Authorization value (None: none), which the client's cache keys private results by
        self.authorization_context: bytes | None = None
        #: (2026-07-28) the cancel scope reading each request's answer, by its id as JSON text
        self._answer_scopes: dict[str, trio.CancelScope] = {}

    def use_modern(self, version: str | None) -> None:
        """Speak revision ``version`` (2026-07-28) on this endpoint, or the 2025 shape again (None).

        [2026-07-28:basic/transports/streamable-http] every POST then carries
        ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and the
        ``Mcp-Param-*`` of the tool it calls; an error status whose body is a
        JSON-RPC error is that request's answer (the probe reads modern errors
        from a 400); a response stream that breaks loses its request
        (:class:`StreamBroken`); ``notifications/cancelled`` closes the
        request's stream instead of being sent.
        """
        self.modern = version

    def _modern_headers(self, message: dict[str, Any]) -> dict[str, str]:
        from .mcp_headers import param_header_values, standard_headers

        method = message.get("method")
        if not isinstance(method, str) or self.modern is None:
            return {}
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        # [2026-07-28:basic/transports/streamable-http#10, #25, #26, #32] the standard headers, from
        # the body: MCP-Protocol-Version, Mcp-Method, Mcp-Name (Base64 when it is not header-safe)
        headers = {name.lower(): value for name, value in standard_headers(self.modern, method, params).items()}
        if method == "tools/call" and self.param_headers_for is not None and isinstance(params.get("name"), str):
            annotations = self.param_headers_for(params["name"])
            arguments = params.get("arguments")
            if annotations:
                # [2026-07-28:basic/transports/streamable-http#35, #36, #56] the tool's x-mcp-header values
                headers.update(param_header_values(annotations, arguments if isinstance(arguments, dict) else None))
        return headers

    # -- HTTP -------------------------------------------------------------------------------------

    def _headers(self, accept: str, extra: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
        hdrs = {"host": self.host_header, "accept": accept, **self.extra_headers}
        if self.session_id is not None:
            hdrs[MCP_SESSION_ID] = self.session_id  # [basic/transports#59]
        if self.protocol_version is not None:
            hdrs[MCP_PROTOCOL_VERSION] = self.protocol_version  # [basic/transports#65, #66, basic/lifecycle#13]
        hdrs.update(extra or {})
        return list(hdrs.items())

    async def _request(
        self,
        method: str,
        accept: str,
        body: bytes | None = None,
        extra: Mapping[str, str] | None = None,
        *,
        challenges: bool = True,
    ) -> _Response:
        """One exchange: the request goes out and its answer's head comes back (after any
        authorization challenges were met, unless ``challenges`` is False)."""
        response = await self._head(await self._write(method, accept, body, extra))
        if challenges:
            response = await self._meet_challenges(response, (method, accept, body, extra))
        return response

    async def _meet_challenges(
        self, response: _Response, args: tuple[str, str, bytes | None, Mapping[str, str] | None]
    ) -> _Response:
        """[basic/authorization#21] a 401 (or 403) goes to the authorization, and the request out again.

        Returns the first answer that is not a challenge, or the challenge
        the authorization could not meet (closed, its body kept for the
        error). An AuthorizationError for a 401 ends the channel (no token
        works), one for a 403 (a step-up) only this request.
        """
        again = False
        for _ in range(_MAX_CHALLENGES):
            if self.auth is None or response.status not in (401, 403):
                return response
            try:
                await response.read(_CHALLENGE_BODY)
            except _BodyTooLarge as e:
                response.body = e.head  # (kept for the error, should the challenge not be met)
            await response.aclose()
            try:
                challenge = response.headers.get("www-authenticate")
                retry = await self.auth.challenged(
                    self.url, response.status, challenge, response.authorization, again=again
                )
            except AuthorizationError as e:
                if response.status == 401 and self.failure is None:
                    self.failure = e
                    self._fail(str(e))
                raise
            if not retry:
                return response
            again = True
            response = await self._head(await self._write(*args))
        return response

    async def _write(
        self, method: str, accept: str, body: bytes | None = None, extra: Mapping[str, str] | None = None
    ) -> "_Sent":
        """Write one request on a kept-alive connection or a new one; its answer is read by :meth:`_head`."""
        args = (method, accept, body, extra)  # (as given: a request written again asks anew)
        authorization = await self.auth.authorization(self.url) if self.auth is not None else None
        self.authorization_context = None if authorization is None else hashlib.sha256(authorization.encode()).digest()
        if authorization is not None:
            # [basic/authorization#54, #55, #56] in the header of every request, never in the URL
            extra = {**(extra or {}), "authorization": authorization}
        headers = self._headers(accept, extra)
        if body is not None:
            headers += [("content-type", "application/json"), ("content-length", str(len(body)))]
        try:
            request = h11.Request(method=method, target=self.target, headers=headers)
        except h11.LocalProtocolError:
            # h11 quotes the bad value, which may be a credential (a token from storage, an
            # application's header): the error names the header only
            bad = next((name for name, value in headers if not _field_value_ok(value)), "a header")
            raise HTTPTransportError(
                f"{self.url}: the {bad} header holds a character no HTTP header may carry; nothing was sent",
                url=self.url,
            ) from None
        while (idle := self._pool.take()) is not None:
            stream, conn = idle
            if _peer_closed(stream):
                # the server dropped the idle connection (its FIN is already here): do not
                # write on it, so the message is not sent again later, out of order
                with trio.CancelScope(shield=True):
                    await stream.aclose()
                continue
            sent = _Sent(stream, conn, args, reused=True)
            sent.authorization = authorization
            try:
                await sent.write(request, body)
                return sent
            except _StaleConnection:
                log.debug("a kept-alive connection was closed by the server; trying another")
        stream = await self._connect()
        sent = _Sent(stream, framed_connection(h11.CLIENT), args, reused=False)
        sent.authorization = authorization
        await sent.write(request, body)
        return sent

    async def _connect(self) -> trio.abc.Stream:
        try:
            return await open_connection(
                self.host, self.port, self.ssl_context, url=self.url, timeout=self.connect_timeout
            )
        except TLSError as e:
            # no use trying again: every request would meet the same certificate
            if self.failure is None:
                self.failure = e
                self._fail(str(e))
            raise

    async def _head(self, sent: "_Sent") -> _Response:
        """Read the head of the answer to ``sent``.

        A kept-alive connection the server closed before answering (it read
        nothing of ours) gets the request again on another connection.
        """
        while True:
            try:
                response = _Response(sent.conn, sent.stream, await sent.read_head(), self._pool)
                response.authorization = sent.authorization
                return response
            except _StaleConnection:
                log.debug("a kept-alive connection was closed by the server; sending the request again")
                sent = await self._write(*sent.args)

    # -- the Channel the session sees ---------------------------------------------------------------

    async def send(self, value: bytes) -> None:
        """Send one JSON-RPC message (bytes) to the server: a POST, whose answer is read in the background."""
        if self._expired is not None:
            raise SessionExpired(self._expired)
        if self.failure is not None:
            raise trio.BrokenResourceError(str(self.failure)) from self.failure
        if self._closed:
            raise trio.ClosedResourceError(self.close_reason or "the HTTP channel is closed")
        message = json.loads(value)
        items = message if isinstance(message, list) else [message]
        request_ids = [m["id"] for m in items if isinstance(m, dict) and "method" in m and "id" in m]
        for m in items:
            if (
                isinstance(m, dict)
                and m.get("method") == "notifications/cancelled"
                and isinstance(m.get("params"), dict)
            ):
                # [basic/utilities/cancellation#4] no answer will come for it: its stream, once
                # ended, is not resumed for it (or it would be polled for as long as we live)
                key = json.dumps(m["params"].get("requestId"))
                awaiting = self._awaited.pop(key, None)
                if awaiting is not None:
                    awaiting.discard(key)
        if self.modern is not None:
            await self._send_modern(value, items, request_ids)
            return
        is_init = any(isinstance(m, dict) and m.get("method") == "initialize" for m in items)
        if is_init:
            self._init_id = next(m["id"] for m in items if m.get("method") == "initialize")
            self._init_body = value
        else:
            with trio.fail_after(self.connect_timeout):
                await self._ready.wait()
        session_id = self.session_id
        if not request_ids:
            await self._unanswered.acquire()
        try:
            # [basic/transports#14, #15, #16, #17] one message per POST, accepting JSON and SSE
            # -- transports#sending-messages-to-the-server. Only the request is written here
            # (the session serialises its sends, so messages reach the server in order); the
            # answer is read in the background, so a server that answers a request late (JSON
            # mode, a tool that elicits) holds up nothing.
            sent = await self._write("POST", _ACCEPT_BOTH, value)
        except BaseException as e:
            if not request_ids:
                self._unanswered.release()
            if isinstance(e, TLSError):
                raise trio.BrokenResourceError(str(e)) from e  # (the channel has ended with it)
            if isinstance(e, OSError | h11.ProtocolError | trio.TooSlowError):
                # the server could not be reached (refused, reset, no connection in time): the
                # request fails, with the channel still usable once the server is back
                failure = self._unreachable(e, "the request could not be sent")
                if is_init:
                    self._ready.set()
                self.nursery.start_soon(self._fail_requests, request_ids, failure)
                return
            raise
        if request_ids:
            self.nursery.start_soon(self._consume, sent, value, request_ids, is_init, session_id)
        else:
            self.nursery.start_soon(self._consume_unanswered, sent, value, session_id)
        # [basic/transports#37] once initialized, a GET stream takes the server's own messages
        # -- transports#listening-for-messages-from-the-server
        if not is_init and not self._get_started and self.session_id is not None:
            self._get_started = True
            # opened now, before the next message goes out, so the server knows the
            # stream from the start of operation (not at a moment that depends on timing)
            await self.nursery.start(self._listen)

    async def _send_modern(self, value: bytes, items: list[Any], request_ids: list[Any]) -> None:
        """(2026-07-28) One request per POST with its metadata headers; a cancellation closes a stream."""
        message = items[0] if len(items) == 1 else None
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            # [2026-07-28:basic/transports/streamable-http#23] on HTTP closing the request's
            # stream is the cancellation: nothing is posted
            raw = message.get("params")
            params: dict[str, Any] = raw if isinstance(raw, dict) else {}
            scope = self._answer_scopes.pop(json.dumps(params.get("requestId")), None)
            if scope is not None:
                scope.cancel(reason="the client cancelled the request")
            return
        extra = self._modern_headers(message) if isinstance(message, dict) else {}
        if not request_ids:
            await self._unanswered.acquire()
        try:
            sent = await self._write("POST", _ACCEPT_BOTH, value, extra)
        except BaseException as e:
            if not request_ids:
                self._unanswered.release()
            if isinstance(e, TLSError):
                raise trio.BrokenResourceError(str(e)) from e
            if isinstance(e, OSError | h11.ProtocolError | trio.TooSlowError):
                failure = self._unreachable(e, "the request could not be sent")
                self.nursery.start_soon(self._fail_requests, request_ids, failure)
                return
            raise
        if not request_ids:
            self.nursery.start_soon(self._consume_unanswered, sent, value, None)
            return
        scope = trio.CancelScope()
        keys = [json.dumps(rid) for rid in request_ids]
        for key in keys:
            self._answer_scopes[key] = scope

        async def consume() -> None:
            try:
                with scope:
                    await self._consume(sent, value, request_ids, False, None)
                if scope.cancelled_caught:
                    # (its stream closed under it: the connection is not reused)
                    log.debug("the answer to %r was abandoned: the request was cancelled", request_ids)
            finally:
                for key in keys:
                    if self._answer_scopes.get(key) is scope:
                        del self._answer_scopes[key]

        self.nursery.start_soon(consume)

    # -- 2026-07-28: a request's answer read by its caller -------------------------------------------

    @property
    def answers_in_caller(self) -> bool:
        """Whether the session may read a request's answer in its own task (:meth:`post_request`,
        then :meth:`read_answer`): 2026-07-28 only, where each POST is an exchange of its own."""
        return self.modern is not None

    async def post_request(self, value: bytes, method: str, params: dict[str, Any]) -> "_Sent | HTTPTransportError":
        """(2026-07-28) Write the POST of one request (``value``, the ``method`` and ``params`` it
        encodes) as :meth:`send` does; its answer is read by :meth:`read_answer` in the caller's
        task, and not by a task of the channel that hands it to the session through the inbox
        (two task switches per call fewer, bench W11H). Returns what was written, or the
        failure to hand to :meth:`read_answer` (the server could not be reached)."""
        if self.failure is not None:
            raise trio.BrokenResourceError(str(self.failure)) from self.failure
        if self._closed:
            raise trio.ClosedResourceError(self.close_reason or "the HTTP channel is closed")
        extra = self._modern_headers({"method": method, "params": params})
        try:
            return await self._write("POST", _ACCEPT_BOTH, value, extra)
        except TLSError as e:
            raise trio.BrokenResourceError(str(e)) from e
        except (OSError, h11.ProtocolError, trio.TooSlowError) as e:
            return self._unreachable(e, "the request could not be sent")

    async def read_answer(self, sent: "_Sent | HTTPTransportError", value: bytes, request_id: Any, put: _Put) -> None:
        """(2026-07-28) Read the answer to a request :meth:`post_request` wrote, in this task: each
        message it holds (or the failure that stands for it) goes to ``put``, as :meth:`receive`
        would have given it. Cancelled, the response stream is closed: on HTTP that is how a
        request is cancelled (2026-07-28 streamable-http#23)."""
        if isinstance(sent, HTTPTransportError):
            await self._fail_requests([request_id], sent, put)
            return
        await self._consume(sent, value, [request_id], False, None, put=put)

    # -- the 2024-11-05 HTTP+SSE transport ------------------------------------------------------------

    async def _fall_back(self, init: bytes, request_ids: list[Any]) -> None:
        """[basic/transports, backwards compatibility] initialize was refused: try the old transport.

        GET the URL, expecting an SSE stream whose first event is ``endpoint``
        (where to POST); from then on every message is POSTed there and every
        server message arrives on that stream as a ``message`` event.
        """
        try:
            with trio.fail_after(self.connect_timeout):
                response = await self._request("GET", "text/event-stream")
                if response.status != 200 or response.content_type != "text/event-stream":
                    await response.aclose()
                    raise _RestartFailed(f"the GET answered HTTP {response.status} {response.content_type}")
                decoder = SSEDecoder(self.max_message_size)
                events = self._events(response, decoder)
                first = await anext(events, None)
                if first is None or first.event != "endpoint" or not first.data:
                    await response.aclose()
                    raise _RestartFailed(f"the first event is not an endpoint: {first!r}")
            endpoint = urljoin(self.url, first.data.strip())
            parts = urlsplit(endpoint)
            default_port = 443 if parts.scheme == "https" else 80
            if (parts.scheme, parts.hostname, parts.port or default_port) != (self.scheme, self.host, self.port):
                # the endpoint must be on the server we were given: never POST elsewhere
                await response.aclose()
                raise _RestartFailed(f"the endpoint {endpoint!r} is on another origin")
        except (_RestartFailed, trio.TooSlowError, *_FAILURES) as e:
            log.warning("%s: neither Streamable HTTP nor the 2024-11-05 HTTP+SSE transport: %s", self.url, e)
            failure = HTTPTransportError(f"no MCP server at {self.url}: {e}", url=self.url)
            failure.__cause__ = e
            await self._fail_requests(request_ids, failure)
            self._ready.set()
            return
        self.legacy_endpoint = endpoint
        # [2024-11-05:basic/transports#12] every later message is POSTed to the endpoint the server named
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        log.info("%s speaks the 2024-11-05 HTTP+SSE transport; posting to %s", self.url, endpoint)
        self.nursery.start_soon(self._legacy_stream, response, events)
        try:
            sent = await self._write("POST", _ACCEPT_BOTH, init)
        except (*_FAILURES, trio.TooSlowError) as e:
            await self._fail_requests(request_ids, self._unreachable(e))
            self._ready.set()
            return
        await self._consume(sent, init, request_ids, False, None)

    async def _legacy_stream(self, response: _Response, events: AsyncIterator[SSEEvent]) -> None:
        """Server messages of the old transport: ``message`` events on the one SSE stream."""
        try:
            async for event in events:
                if event.event in (None, "message"):
                    await self._deliver_event(event)
        except ValueError as e:
            log.warning("the SSE stream carried something that is not JSON: %r", e)
        finally:
            await response.aclose()
        if not self._closed:
            self._fail("the server closed its SSE stream (2024-11-05 HTTP+SSE transport)")

    async def _post(self, body: bytes) -> _Response:
        try:
            return await self._request("POST", _ACCEPT_BOTH, body)
        except (OSError, h11.ProtocolError) as e:
            raise trio.BrokenResourceError(f"POST to {self.url} failed: {e!r}") from e

    async def _new_session(self, expired: str) -> bool:
        """[basic/transports#62] the server answered 404 for session ``expired``: start a new one.

        The initialize request goes out again, without a session id; the new
        session must speak the protocol version the application negotiated
        (anything else is a different session, and the channel ends with
        :class:`SessionExpired`). Returns whether the channel can go on.
        Several tasks meeting the same 404 start one new session.
        """
        async with self._restart_lock:
            if self.session_id != expired:
                return not self._ended  # another task replaced it, or failed to and ended the channel
            if self._ended or self._init_body is None:
                return False
            version = self.protocol_version
            self.session_id = None
            self.protocol_version = None
            try:
                with trio.fail_after(self.connect_timeout):
                    response = await self._post(self._init_body)
                    try:
                        if response.status != 200:
                            raise _RestartFailed(f"initialize answered with HTTP {response.status}")
                        new_id = response.headers.get(MCP_SESSION_ID)
                        answer = await self._answer_to(response, self._init_id)
                    finally:
                        await response.aclose()
                    result = answer.get("result")
                    if not isinstance(result, dict):
                        raise _RestartFailed(f"initialize failed: {answer.get('error')!r}")
                    if (spoken := result.get("protocolVersion")) != version:
                        raise _RestartFailed(f"the new session speaks {spoken!r}, not {version!r}")
                    self.session_id, self.protocol_version = new_id, version
                    response = await self._post(_INITIALIZED)
                    await response.aclose()
                    if response.status >= 300:
                        raise _RestartFailed(f"notifications/initialized answered with HTTP {response.status}")
            except (_RestartFailed, trio.TooSlowError, *_FAILURES) as e:
                self.session_id = None
                self._expired = f"session {expired} expired (HTTP 404) and no new session could be started: {e}"
                self._fail(self._expired)
                return False
            self.session_restarts += 1
            log.warning("session %s expired (HTTP 404); continuing in new session %s", expired, new_id)
        if self.on_new_session is not None:
            self.on_new_session(expired, new_id)
        return True

    async def _answer_to(self, response: _Response, request_id: Any) -> dict[str, Any]:
        """Read a JSON or SSE answer until the response to ``request_id``; other messages are dropped."""
        if response.content_type == "application/json":
            try:
                payloads = [json.loads(await response.read(self.max_message_size))]
            except _BodyTooLarge as e:
                raise _RestartFailed(str(e)) from None
        elif response.content_type == "text/event-stream":
            decoder = SSEDecoder(self.max_message_size)
            payloads = []
            async for chunk in response.chunks():
                payloads += [json.loads(e.data) for e in decoder.feed(chunk) if e.data]
                if any(isinstance(m, dict) and m.get("id") == request_id and "method" not in m for m in payloads):
                    break
        else:
            raise _RestartFailed(f"unexpected content type {response.content_type!r}")
        for payload in payloads:
            for msg in payload if isinstance(payload, list) else [payload]:
                if isinstance(msg, dict) and msg.get("id") == request_id and "method" not in msg:
                    return msg
                log.debug("dropped while starting a new session: %.200r", msg)
        raise _RestartFailed("no answer to initialize")

    async def receive(self) -> bytes:
        """The next message from the server (answers and what the server sent on its own); ConnectionClosed once the
        channel has ended.
        """
        try:
            return await self._inbox.get()
        except trio.EndOfChannel:
            if self._expired is not None:
                raise SessionExpired(self._expired) from None
            if self.failure is not None:
                raise trio.EndOfChannel(str(self.failure)) from None  # (the session's reason for ending)
            raise

    async def aclose(self) -> None:
        """End the channel: the server is told the session ends (DELETE), streams and connections are closed."""
        if self._closed:
            return
        self._closed = True
        if self.session_id is not None:
            # [basic/transports#63] tell the server we are done with the session
            with trio.move_on_after(2) as scope:
                scope.shield = True
                try:
                    response = await self._request("DELETE", "application/json", challenges=False)
                    await response.aclose()
                except (OSError, trio.BrokenResourceError, h11.ProtocolError, HTTPTransportError) as e:
                    log.debug("DELETE of session %s failed: %r", self.session_id, e)
        # [basic/transports#45] closing the channel closes its SSE streams too
        await self._pool.aclose()
        self._inbox.close()

    @property
    def _ended(self) -> bool:
        """Closed by us (aclose) or ended by a failure (_fail): nothing more is delivered."""
        return self._closed or self.close_reason is not None

    def _fail(self, reason: str) -> None:
        self.close_reason = reason
        # (info, not warning: the reason is raised to the caller, from open_http_client or as
        # ConnectionClosed; logging it too printed it twice through logging's last resort)
        log.info("HTTP session ended: %s", reason)
        self._inbox.close()

    # -- answers ---------------------------------------------------------------------------------

    async def _deliver(self, payload: Any, raw: bytes | None = None, put: _Put | None = None) -> None:
        """Hand the session each message of ``payload``: one message as the server wrote
        it (``raw``), not re-encoded; the members of a batch each encoded anew. ``put``: where
        (the inbox, or the reader of :meth:`read_answer`)."""
        put = put or self._inbox.put
        batch = isinstance(payload, list)
        for msg in payload if batch else [payload]:
            if (
                isinstance(msg, dict)
                and self._init_id is not None
                and msg.get("id") == self._init_id
                and isinstance(msg.get("result"), dict)
            ):
                version = msg["result"].get("protocolVersion")
                self.protocol_version = version if isinstance(version, str) else None
                self._ready.set()
            if not self._ended:
                # (ASCII escapes: a lone surrogate from the peer stays encodable)
                data = raw if raw is not None and not batch else json.dumps(msg, separators=(",", ":")).encode()
                await put(data)

    async def _deliver_event(self, event: SSEEvent, put: _Put | None = None) -> bool:
        """Hand the session the message of an SSE event; False when it has none."""
        if event.too_large is not None:
            # [basic/transports] past our limit: dropped unread, the session is told what it was
            await self._too_large(event.too_large, event.head, put=put)
            return False
        if not event.data:
            return False
        # [basic/utilities/tasks#29] a message counts whatever stream it came on (the GET one too)
        # -- tasks#input-required-status
        await self._deliver(json.loads(event.data), event.data.encode(), put)
        return True

    async def _too_large(
        self, size: int, head: bytes, request_ids: list[Any] | None = None, put: _Put | None = None
    ) -> None:
        """A message over ``max_message_size`` was dropped: the session fails the request it
        answered (or answers the request it was) -- the stdio channel's MessageTooLarge."""
        if self._ended:
            return
        put = put or self._inbox.put
        error = too_large(size, self.max_message_size, head)
        log.warning("dropped from the server: %s", error)
        if request_ids and error.request_id is None:
            # a JSON body cut short: it answered these requests (one each, or a batch)
            for rid in request_ids:
                await put(MessageTooLarge(size, self.max_message_size, kind="response", request_id=rid))
            return
        await put(error)

    async def _consume_unanswered(self, sent: _Sent, value: bytes, session_id: str | None) -> None:
        """Read the answer to a POST that carries no request (202, at once): it may take
        ``connect_timeout``, and holds one of the ``max_unanswered_posts`` slots meanwhile."""
        try:
            await self._consume(sent, value, [], False, session_id, head_timeout=self.connect_timeout)
        finally:
            self._unanswered.release()

    async def _consume(
        self,
        sent: _Sent,
        value: bytes,
        request_ids: list[Any],
        is_init: bool,
        session_id: str | None,
        *,
        head_timeout: float = math.inf,
        put: _Put | None = None,
    ) -> None:
        """Read the answer to a POST and deliver what it holds (to ``put``: the inbox by default)."""
        try:
            with trio.fail_after(head_timeout):
                head = await self._head(sent)
            response = await self._meet_challenges(head, sent.args)
            if response.status == 404 and session_id is not None and not is_init:
                await response.aclose()
                if not await self._new_session(session_id):
                    return  # the channel has ended; the session sees it as the end of input
                if not request_ids:
                    # a notification or response of the old session means nothing in the new one
                    log.debug("not re-sent in the new session: %.200r", value)
                    return
                response = await self._post(value)
        except AuthorizationError as e:
            if is_init:
                self._ready.set()
            if self.failure is e:
                return  # the channel ended with it: the session sees its end, open_http_client raises it
            # a step-up that failed: this request fails, the session goes on
            await self._fail_requests(request_ids, e, put)
            return
        except (*_FAILURES, trio.TooSlowError) as e:
            await self._fail_requests(request_ids, self._unreachable(e), put)
            if is_init:
                self._ready.set()
            return
        if is_init and self.legacy_fallback and response.status in (400, 404, 405):
            refusal = await _read_modern_refusal(response) if response.status == 400 else None
            # [2026-07-28:basic/transports/streamable-http#71] a 400 whose body is a modern error (a
            # server of 2026-07-28 only refusing initialize, naming its versions) is no sign of the
            # 2024-11-05 transport: the refusal is initialize's answer, not a reason to fall back
            if refusal is None:
                await response.aclose()
                await self._fall_back(value, request_ids)
                return
            await self._fail_requests(request_ids, self._status_error(400, refusal), put)
            self._ready.set()
            return
        if is_init:
            # [basic/transports#58, #59] the id the server gave, held by this channel and sent to
            # this endpoint only -- transports#session-management
            self.session_id = response.headers.get(MCP_SESSION_ID)
        try:
            if self.legacy_endpoint is not None and response.status < 300:
                return  # (the old transport answers on its SSE stream)
            if response.status == 202:
                if request_ids:
                    # [basic/transports#21] a request is answered with JSON or SSE: nothing will
                    # come for it, so it fails now rather than at its timeout (one we cancelled
                    # meanwhile takes no notice)
                    failure = HTTPTransportError(
                        f"{self.url} answered HTTP 202: it accepted the request but will not answer it",
                        status=202,
                        url=self.url,
                    )
                    await self._fail_requests(request_ids, failure, put)
                return
            if 300 <= response.status < 400:
                redirect = redirect_error(response.status, response.headers.get("location"), self.url)
                await self._fail_requests(request_ids, redirect, put)
                if is_init:
                    self._ready.set()
                return
            if response.status >= 400:
                try:
                    body = await response.read(_MAX_ERROR_BODY)
                except _BodyTooLarge as e:
                    body = e.head  # (not a JSON-RPC error body: quoted as text)
                if self.modern is not None and _is_error_response(body, request_ids):
                    # [2026-07-28:basic/transports/streamable-http#71] a modern server's error comes
                    # with a 4xx status (400 for a version or header problem, 404 for an unknown
                    # method): the JSON-RPC error is the request's answer
                    answer = json.loads(body)
                    if answer.get("id") is None and len(request_ids) == 1:
                        # (an error written without the id it answers: it can only be this one's)
                        answer["id"] = request_ids[0]
                        body = json.dumps(answer).encode()
                    await self._deliver(answer, body, put)
                    return
                await self._fail_requests(request_ids, self._status_error(response.status, body), put)
                if is_init:
                    self._ready.set()
                return
            # [basic/transports#22] the answer is JSON or an SSE stream: we read both
            # -- transports#sending-messages-to-the-server
            if response.content_type == "application/json":
                try:
                    body = await response.read(self.max_message_size)
                except _BodyTooLarge as e:
                    await self._too_large(e.size, e.head, request_ids, put)
                    return
                if self.modern is not None and body[:1] == b"{":
                    # one 2026-07-28 answer: handed over as it came, parsed once, by the session's engine
                    if not self._ended:
                        await (put or self._inbox.put)(body)
                    return
                await self._deliver(json.loads(body) if body else [], body, put)
                return
            if response.content_type == "text/event-stream":
                await self._read_sse(response, {json.dumps(i) for i in request_ids}, put)
                return
            failure = HTTPTransportError(
                f"{self.url} answered HTTP {response.status} with content type {response.content_type!r}, "
                "neither JSON nor an SSE stream",
                status=response.status,
                url=self.url,
            )
            await self._fail_requests(request_ids, failure, put)
        except _FAILURES as e:
            await self._fail_requests(request_ids, self._unreachable(e, "the answer could not be read"), put)
        finally:
            await response.aclose()

    def _unreachable(self, e: BaseException, what: str = "no answer") -> HTTPTransportError:
        """An exchange that met ``e`` (refused, reset, timed out, garbled) instead of an answer."""
        if isinstance(e, HTTPTransportError):
            return e
        if isinstance(e, trio.TooSlowError):
            problem = f"no connection within {self.connect_timeout:g} s"
        elif isinstance(e, h11.RemoteProtocolError) and "ConnectionClosed" in str(e):
            # (h11 says it from its own state machine: "can't handle event type ConnectionClosed ...")
            problem = "the server closed the connection without answering"
            if self.scheme == "http":
                problem += "; if it serves HTTPS, use an https:// URL"
        elif isinstance(e, h11.RemoteProtocolError) and "\\x15\\x03" in str(e):
            # a TLS alert record where an HTTP status line should be
            problem = "the server answered in TLS: use an https:// URL"
        else:
            problem = str(e) or type(e).__name__
            # trio's "all attempts to connect ... failed" holds the reasons in its cause
            reasons = e.__cause__.exceptions if isinstance(e.__cause__, BaseExceptionGroup) else ()
            strerrors = sorted({os.strerror(r.errno) for r in reasons if isinstance(r, OSError) and r.errno})
            if strerrors:
                problem += f": {', '.join(strerrors)}"
        error = HTTPTransportError(f"{self.url}: {what} ({problem})", url=self.url)
        error.__cause__ = e
        return error

    def _status_error(self, status: int, body: bytes) -> HTTPTransportError:
        """The error for an answer of HTTP ``status`` (4xx, 5xx) with ``body``: the server's
        JSON-RPC error, when the body holds one, is its ``__cause__`` and its text."""
        text = body[:200].decode("utf-8", "replace")
        cause = None
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        problem = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(problem, dict) and isinstance(problem.get("code"), int):
            cause = MCPError(problem["code"], str(problem.get("message", "")), problem.get("data"))
            text = str(cause)
        if status == 401 and self.auth is None:
            text += " (the server requires authorization: pass auth=OAuthClient(...), or a token in headers=)"
        error = HTTPTransportError(f"{self.url} answered HTTP {status}: {text}", status=status, url=self.url)
        error.__cause__ = cause
        return error

    async def _fail_requests(self, request_ids: list[Any], error: HTTPTransportError, put: _Put | None = None) -> None:
        """The HTTP exchange of these requests failed: each fails with ``error`` (with its
        ``request_id``), and the session goes on. The members of a batch get one each."""
        if not request_ids:
            # a notification or a response: nobody waits for it, so it is said here
            log.warning("a message to the server was lost: %s", error)
            return
        log.debug("request(s) %r failed: %s", request_ids, error)
        if self._ended:
            return
        put = put or self._inbox.put
        for rid in request_ids:
            if len(request_ids) > 1:
                one = HTTPTransportError(
                    error.message, status=error.status, url=error.url, location=error.location, request_id=rid
                )
                one.__cause__ = error
                await put(one)
            else:
                error.request_id = rid
                await put(error)

    async def _events(self, response: _Response, decoder: SSEDecoder) -> AsyncIterator[SSEEvent]:
        """The events of an SSE answer until its stream ends, cleanly or not.

        [basic/transports#34] a dropped connection (a reset, a chunked body cut
        short) is the end of this connection, not of the stream: the caller
        resumes it. An event cut in half is dropped (the server replays it whole).
        """
        try:
            async for chunk in response.chunks():
                for event in decoder.feed(chunk):
                    yield event
        except (trio.BrokenResourceError, OSError, h11.RemoteProtocolError) as e:
            log.debug("SSE stream broke: %r", e)
        decoder.drop_partial()

    async def _read_sse(self, first: _Response, pending: set[str], put: _Put | None = None) -> None:
        keys = list(pending)  # (answered ones leave pending as they come)
        for key in keys:
            self._awaited[key] = pending
        try:
            await self._follow_sse(first, pending, put)
        finally:
            for key in keys:
                if self._awaited.get(key) is pending:
                    del self._awaited[key]

    async def _follow_sse(self, first: _Response, pending: set[str], put: _Put | None = None) -> None:
        decoder = SSEDecoder(self.max_message_size)
        retry_ms = self.default_retry_ms
        failures = 0  # consecutive reconnections that failed
        failure = ""  # what the last one met
        response: _Response | None = first
        while True:
            if response is not None:
                async for event in self._events(response, decoder):
                    if event.retry is not None:
                        retry_ms = event.retry
                    if event.too_large is not None:
                        rid = too_large(event.too_large, self.max_message_size, event.head).request_id
                        if rid is not None:
                            pending.discard(json.dumps(rid))  # it came (and the session is told it was lost)
                        await self._deliver_event(event, put)
                    elif event.data:
                        payload = json.loads(event.data)
                        for msg in payload if isinstance(payload, list) else [payload]:
                            if isinstance(msg, dict) and "method" not in msg:
                                pending.discard(json.dumps(msg.get("id")))
                        await self._deliver(payload, event.data.encode(), put)
                await response.aclose()
            if not pending or self._closed:
                return
            # [basic/transports#25, #27, #52] the stream ended before our answer: after the
            # server's retry delay, resume it where it broke off
            if self.modern is not None:
                # (2026-07-28 has no resumption: the request is lost with its stream)
                why = f"{self.url}: the SSE stream ended before the response (not resumable in {self.modern})"
                await self._fail_requests([json.loads(k) for k in pending], StreamBroken(why, url=self.url), put)
                return
            if decoder.last_event_id is None or failures >= self.max_reconnects:
                why = f"{self.url}: the SSE stream ended before the response"
                if failures:
                    why += f" and could not be resumed ({failures} attempts; {failure})"
                await self._fail_requests([json.loads(k) for k in pending], HTTPTransportError(why, url=self.url), put)
                return
            await trio.sleep(retry_ms / 1000)
            if not pending or self._closed:
                return  # cancelled meanwhile
            try:
                response = await self._request("GET", "text/event-stream", extra={LAST_EVENT_ID: decoder.last_event_id})
            except (*_FAILURES, trio.TooSlowError) as e:
                log.debug("resuming an SSE stream failed: %r", e)
                failures += 1
                failure = str(e) or repr(e)
                response = None
                continue
            if response.status != 200 or response.content_type != "text/event-stream":
                await response.aclose()
                refused = HTTPTransportError(
                    f"{self.url} answered HTTP {response.status} {response.content_type} to resuming "
                    "the SSE stream of the response",
                    status=response.status,
                    url=self.url,
                )
                await self._fail_requests([json.loads(k) for k in pending], refused, put)
                return
            # resumed: a server that polls by closing its stream (SEP-1699) is not failing
            failures = 0

    async def _listen(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The standalone GET stream for server-initiated messages (#37-#45).

        Reports started once the first GET has its answer's head (or failed).
        """
        decoder = SSEDecoder(self.max_message_size)
        retry_ms = self.default_retry_ms
        failures = 0
        first = True
        while not self._closed and failures <= self.max_reconnects:
            extra = {LAST_EVENT_ID: decoder.last_event_id} if decoder.last_event_id else None
            session_id = self.session_id
            try:
                with trio.fail_after(self.connect_timeout):
                    # [basic/transports#38] the GET lists text/event-stream in its Accept header
                    response = await self._request("GET", "text/event-stream", extra=extra)
            except (OSError, trio.BrokenResourceError, trio.TooSlowError, h11.ProtocolError, HTTPTransportError) as e:
                failures += 1
                log.debug("GET stream failed: %r", e)
                if first:
                    first = False
                    task_status.started()
                if self._ended:
                    break
                await trio.sleep(retry_ms / 1000)
                continue
            if first:
                first = False
                task_status.started()
            try:
                if response.status == 405:
                    log.debug("the server offers no GET stream")  # (a server's 405, basic/transports#39)
                    return
                if 300 <= response.status < 400:
                    redirect = redirect_error(response.status, response.headers.get("location"), self.url)
                    log.warning("no GET stream: %s", redirect)
                    return
                if response.status == 404 and session_id is not None:
                    if not await self._new_session(session_id):
                        return
                    decoder = SSEDecoder(self.max_message_size)  # event ids of the old session mean nothing now
                    continue
                if response.status == 410 and extra is not None:
                    # the server no longer has the events after our last one: start afresh
                    log.warning("the GET stream could not be resumed (HTTP 410); some messages may be lost")
                    decoder = SSEDecoder(self.max_message_size)
                    continue
                if response.status != 200 or response.content_type != "text/event-stream":
                    failures += 1
                else:
                    failures = 0
                    # a dropped connection ends this GET, not the stream: it is resumed
                    # from the last event id after the retry delay
                    async for event in self._events(response, decoder):
                        if event.retry is not None:
                            retry_ms = event.retry
                        # (delivered at the session's pace: while its inbox is full, this
                        # stream is not read, and TCP holds the server back)
                        await self._deliver_event(event)
            except (OSError, trio.BrokenResourceError, h11.ProtocolError, ValueError) as e:
                failures += 1
                log.debug("GET stream broke: %r", e)
            finally:
                await response.aclose()
            await trio.sleep(retry_ms / 1000)
        if first:
            task_status.started()  # closed before the first attempt


@asynccontextmanager
async def open_http_channel(url: str, **options: Any) -> AsyncIterator[HttpClientChannel]:
    """A Streamable HTTP channel to ``url`` (see :class:`HttpClientChannel` for options)."""
    check_url(url, options.get("ssl_context"))  # (bad use: raised before the nursery opens)
    async with block_nursery() as (nursery, body):
        channel = HttpClientChannel(url, nursery, **options)
        try:
            yield channel
        except BaseException as exc:
            body.exc = exc
            raise
        finally:
            await channel.aclose()
            nursery.cancel_scope.cancel(reason="HTTP channel closed")
