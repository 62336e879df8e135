"""Streamable HTTP, server side: h11 on trio (basic/transports#streamable-http).

::

    async with trio.open_nursery() as nursery:
        info = await nursery.start(serve_http, server)   # binds 127.0.0.1, port chosen
        print(info.url)                                   # http://127.0.0.1:PORT/mcp

One endpoint (``path``) takes POST, GET and DELETE. Each MCP session is one
``server.serve(channel)`` running in the HTTP server's nursery; the channel
routes what the session sends: a response (and whatever the session tags as
related to a request -- its progress, requests made while handling it) to that
request's SSE stream, everything else to the standalone GET stream (or, while
none is open, to a bounded queue delivered when one opens). Every SSE event is
kept in a bounded :class:`EventStore` so a client can resume a stream with
``Last-Event-ID``; a disconnection is never a cancellation. Each POST body is
checked with the JSON-RPC checker before any stream opens (400 otherwise).
``await info.aclose(grace)`` shuts the server down gracefully. With an
``ssl_context`` (``ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)``
with the server's certificate loaded) the server speaks HTTPS itself.
"""

import functools
import json
import logging
import math
import ssl
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol
from urllib.parse import urlsplit

import attrs
import h11
import trio

from ...errors import ErrorCode
from ..jsonrpc import BATCH_REVISIONS, MAX_BATCH, InvalidMessage, RawNotification, RawRequest, classify, loads
from ..versioning import is_modern_request
from ._framing import DEFAULT_HEAD_LIMIT, FramedReader, framed_connection, request_framing_problem
from ._parking import ParkingQueue
from .streamable_http import (
    LAST_EVENT_ID,
    LOOPBACK_HOSTS,
    MAX_EVENT_ID_LENGTH,
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    EventStore,
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

if TYPE_CHECKING:
    # (authorization is imported when a server has auth: it costs every HTTP import otherwise)
    from ..authorization.resource_server import AccessToken, AuthRefused, Principal, ProtectedResource

__all__ = ["serve_http", "HttpServerInfo", "HttpConfig", "Servable", "default_allowed_hosts"]


class Servable(Protocol):
    """What the HTTP server runs per MCP session (``mcp_ref.Server`` is one)."""

    async def serve(self, channel: trio.abc.Channel[bytes]) -> None: ...

    # optional: ``has_work(channel) -> bool``, whether the session on ``channel`` holds work
    # its client will come back for (an idle session that does is never reclaimed)


log = logging.getLogger("mcp_ref.http")

#: cancellations kept per session for requests that have not come yet
_EARLY_CANCELS = 100
#: scheduler passes a request's SSE stream waits, before writing its head and priming
#: event, for an answer to go out with them: the session reads the request in one pass and
#: its handler runs in the next, so a handler that answers without blocking has answered
#: by the third (one write per answer, not two: see _HttpServer._pump)
_COALESCE_PASSES = 3
#: a refused request's unread rest is drained for this long, at most this many bytes (see _linger)
_LINGER_SECONDS = 2.0
_LINGER_BYTES = 1024 * 1024


@attrs.frozen(kw_only=True)
class HttpConfig:
    """Limits and policy of the HTTP server (spec_notes/basic/transports.md)."""

    #: the MCP endpoint's path
    path: str = "/mcp"
    #: browser origins served (full origins or host names; None: loopback ones only)
    allowed_origins: Sequence[str] | None = None  # None: loopback origins only
    #: Host names served (None: loopback names and the bound address)
    allowed_hosts: Sequence[str] | None = None  # None: loopback names only
    #: answer each POST with one JSON body rather than an event stream
    json_response: bool = False
    #: seconds without a request after which a session no connection listens to is closed
    session_idle_timeout: float = 300.0
    #: the largest request body taken, in bytes (413 past it)
    max_body: int = 4 * 1024 * 1024
    #: messages one POST may carry as a batch (2025-03-26 sessions); a larger batch is 400, unread
    max_batch: int = attrs.field(default=MAX_BATCH, validator=attrs.validators.ge(1))
    #: sessions kept at once (past it, the longest idle is reclaimed; 503 when none can be)
    max_sessions: int = 100
    #: event streams a session may have open at once
    max_streams_per_session: int = 32
    #: server messages waiting for a GET stream to carry them, per session ...
    max_pending_unrelated: int = 1000
    #: ... and bytes of them (the oldest are dropped past either; the newest is always kept)
    max_pending_unrelated_bytes: int = attrs.field(default=4 * 1024 * 1024, validator=attrs.validators.ge(1))
    #: the ``retry`` sent on event streams: milliseconds before a client reconnects
    retry_ms: int = 1000
    #: whether clients may open the GET stream (False: GET answers 405)
    get_stream: bool = True
    #: events kept per stream for resumption
    events_per_stream: int = 1000
    #: bytes of events kept for resumption per session, and by all sessions together
    #: (past them the oldest go: finished streams first, see EventStore)
    max_stored_bytes_per_session: int = attrs.field(default=16 * 1024 * 1024, validator=attrs.validators.ge(1))
    #: (see max_stored_bytes_per_session)
    max_stored_bytes: int = attrs.field(default=256 * 1024 * 1024, validator=attrs.validators.ge(1))
    #: events, and bytes of them, a connection may fall behind its stream: there the session's
    #: next send waits for it, up to stall_timeout, then the connection is dropped (the client resumes)
    max_buffered_events: int = attrs.field(default=1000, validator=attrs.validators.ge(1))
    #: (see max_buffered_events)
    max_buffered_bytes: int = attrs.field(default=4 * 1024 * 1024, validator=attrs.validators.ge(1))
    #: messages, and bytes of them, a session may have waiting for it to read; a POST past
    #: either is 429 (one message always fits in an empty inbox)
    max_inbox: int = attrs.field(default=1000, validator=attrs.validators.ge(1))
    #: (see max_inbox)
    max_inbox_bytes: int = attrs.field(default=16 * 1024 * 1024, validator=attrs.validators.ge(1))
    #: seconds a session may take from initialize to notifications/initialized
    init_timeout: float = 60.0
    #: the per-user limits (see _User: the token's subject with authorization, else the client's
    #: address): sessions one user may hold (max_sessions counts all users'); a user at the limit
    #: who opens one more gives up their own least recently active session that has nothing in
    #: flight, or gets 429
    max_sessions_per_user: int = attrs.field(default=20, validator=attrs.validators.ge(1))
    #: streams (a request's answer, a GET stream) open at once across one user's sessions
    max_streams_per_user: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    #: TCP connections open at once from one client address; past it a new one is closed unread
    #: (a process has a bounded number of sockets: one client must not hold them all)
    max_connections_per_address: int = attrs.field(default=256, validator=attrs.validators.ge(1))
    #: who a request without authorization comes from, for the per-user limits: given the
    #: client's address (None on a connection that has none) and the request's headers (lower-case
    #: names). None: the address. Behind a reverse proxy every client has the proxy's address:
    #: use authorization, or say here how the proxy names the client.
    user_key: "Callable[[str | None, Mapping[str, str]], Hashable] | None" = None
    #: streams whose events are kept for resumption (finished ones are dropped first)
    stored_streams: int = 100
    #: seconds a connection may take to deliver a whole request, counted from its
    #: opening or, on a kept-alive connection, from the end of the previous exchange
    read_timeout: float = 30.0
    #: seconds of silence on an SSE stream after which a ``:`` comment goes out, so a
    #: client that vanished is noticed (the write fails) and its stream detached
    sse_keepalive: float = 15.0
    #: seconds a sender waits while a connection is max_buffered_events behind (the client
    #: reads slowly) before that connection is dropped (the client stopped reading)
    stall_timeout: float = 5.0
    #: bytes a client may send on a connection while an event stream is open on it (a
    #: request pipelined there waits for the stream's end); past that the connection is dropped
    max_pipelined: int = 64 * 1024
    #: 2026-07-28 requests handled at once, all clients together; past it a POST is 503
    max_stateless_requests: int = attrs.field(default=1000, validator=attrs.validators.ge(1))


@attrs.frozen
class HttpServerInfo:
    """Where a running server listens; :meth:`aclose` shuts it down gracefully."""

    #: the address the server is bound to
    host: str
    #: the port it listens on
    port: int
    #: the MCP endpoint's URL (with 127.0.0.1 for a server on every interface)
    url: str
    _server: "_HttpServer | None" = attrs.field(default=None, eq=False, repr=False)

    async def aclose(self, grace: float = 5.0) -> None:
        """Shut the server down: see :meth:`_HttpServer.shutdown`. Returns when it has stopped."""
        if self._server is None:
            raise RuntimeError("this HttpServerInfo does not belong to a running server")
        await self._server.shutdown(grace)


class _Stream:
    """One SSE stream of a session: a request's POST stream or the GET stream."""

    def __init__(self, stream_id: str, pending_ids: set[str] | None) -> None:
        self.id = stream_id
        #: request ids (as JSON text) still awaiting their response on this stream
        self.pending_ids = pending_ids if pending_ids is not None else set()
        self.seq = 0
        self.done = False  # the stream ended (all responses sent)
        #: answered as one JSON body, not SSE: its connection cannot be resumed
        self.json = False
        self.listener: _Listener | None = None
        #: with auth: the token of the request(s) this stream answers
        self.auth: AccessToken | None = None

    def attach(self, config: HttpConfig, scope: trio.CancelScope | None = None) -> "_Listener":
        """A connection starts listening (replacing any earlier one); it may fall
        ``max_buffered_events`` events or ``max_buffered_bytes`` bytes behind.
        ``scope``: what to cancel when it falls further (its exchange's)."""
        self.push(None)
        self.listener = _Listener(config.max_buffered_events, config.max_buffered_bytes, scope)
        return self.listener

    def detach(self, listener: "_Listener") -> None:
        if self.listener is listener:
            self.listener = None
            listener.wake_sender()  # a sender waiting for this connection goes on

    def push(self, item: bytes | None) -> None:
        """Give the connection an event (None: end it, keeping the stream)."""
        listener = self.listener
        if listener is None:
            return
        if item is None:
            self.detach(listener)
        elif listener.full():
            self.drop(listener)
            return
        else:
            listener.events += 1
            listener.queued += len(item)
        listener.put(item)

    def drop(self, listener: "_Listener") -> None:
        """A client that stops reading must not grow our memory: its connection is
        dropped, and it resumes from the event store with Last-Event-ID."""
        log.warning("stream %s: the client fell too far behind; its connection is dropped", self.id)
        listener.scope.cancel()
        self.detach(listener)


class _User:
    """What one user holds of the server: their sessions, and their open streams.

    A user is the token's subject (or, for a client acting for itself, its client
    id) when the server has authorization; without it, the client's address, or
    what ``HttpConfig.user_key`` says.
    """

    __slots__ = ("key", "registry", "sessions", "streams")

    def __init__(self, key: Hashable, registry: "dict[Hashable, _User]") -> None:
        self.key = key
        self.registry = registry
        self.sessions: set[_HttpSession] = set()
        self.streams = 0

    def tidy(self) -> None:
        """Forget this user once they hold nothing."""
        if not self.sessions and self.streams <= 0 and self.registry.get(self.key) is self:
            del self.registry[self.key]


class _Listener(ParkingQueue[bytes | None]):
    """The connection writing a stream: the events it has yet to write, in order.

    Sessions put without blocking (:meth:`_Stream.push` keeps it within
    ``max_events`` and ``max_bytes``; the end, None, always fits); the
    connection's task takes (a :class:`ParkingQueue`: a memory channel per
    connection, so per POST, built three objects more, bench W9).
    """

    __slots__ = ("events", "max_bytes", "max_events", "queued", "room", "scope")

    def __init__(self, max_events: int, max_bytes: int, scope: trio.CancelScope | None = None) -> None:
        super().__init__()
        #: events, and bytes of them, the connection may fall behind
        self.max_events = max_events
        self.max_bytes = max_bytes
        #: events, and their bytes, waiting for the connection to write them
        self.events = 0
        self.queued = 0
        #: cancelled when the client falls too far behind (the connection ends)
        self.scope = scope if scope is not None else trio.CancelScope()
        #: set when the connection takes an event or goes away: a sender waiting for room
        #: (backpressure, _HttpSession.send_related) makes it before it waits
        self.room: trio.Event | None = None

    def full(self) -> bool:
        """Whether the connection is as far behind as it may be (the end still fits)."""
        return self.events >= self.max_events or self.queued >= self.max_bytes

    def took(self, event: bytes | None) -> None:
        """The connection took ``event`` to write it: room for the next."""
        if event is not None:
            self.events -= 1
            self.queued -= len(event)
        self.wake_sender()

    def wake_sender(self) -> None:
        if self.room is not None:
            self.room.set()


class _HttpSession(trio.abc.Channel[bytes]):
    """The channel one MCP session runs on, plus its HTTP bookkeeping."""

    #: a session of a legacy revision: its era was chosen by its initialize (Server.serve asks)
    legacy_only = True

    def __init__(self, session_id: str, config: HttpConfig, budget: StoreBudget | None = None) -> None:
        self.id = session_id
        self.config = config
        self._inbox_send, self._inbox = trio.open_memory_channel[bytes](config.max_inbox)
        #: messages waiting in the inbox, and their bytes (counted here: the channel's
        #: statistics() builds an object on every look)
        self.inbox_count = 0
        self.inbox_bytes = 0
        self.streams: dict[str, _Stream] = {}
        self.by_request: dict[str, _Stream] = {}
        self.get_stream: _Stream | None = None
        self.pending_unrelated: deque[bytes] = deque()
        self.pending_unrelated_bytes = 0
        #: cancellations of requests not come yet, by request id (JSON text): the newest few
        self.cancelled_early: OrderedDict[str, bytes] = OrderedDict()
        self.events = EventStore(
            config.events_per_stream,
            config.stored_streams,
            self._evicted,
            max_bytes=config.max_stored_bytes_per_session,
            budget=budget,
        )
        #: streams not yet ended (the limit max_streams_per_session counts these)
        self.open_streams = 0
        #: the user the session belongs to (the per-user limits count it there)
        self.user: _User | None = None
        self.scope = trio.CancelScope()
        self.last_active = self.created = trio.current_time()
        #: notifications/initialized has come (until then the session is on init_timeout)
        self.initialized = False
        self.closed = False
        self._next_stream = 0
        #: the initialize request's id (as JSON text), and the version its response settled on
        self.init_key: str | None = None
        self.protocol_version: str | None = None
        #: with auth: who initialized the session (only their tokens reach it), and the token
        #: of the latest request
        self.principal: Principal | None = None
        self.auth: AccessToken | None = None

    # -- the Channel the MCP session sees ------------------------------------------------------

    async def send(self, value: bytes) -> None:
        await self.send_related(value, None)

    async def send_related(self, value: bytes, related_request_id: Any) -> None:
        stream = self.route(value, related_request_id)
        listener = stream.listener if stream is not None else None
        if stream is None or listener is None or not listener.full():
            # the schedule point the session expects of a send, so its connections write
            # between the messages of a handler sending in a loop (shielded: the message
            # is on its stream already, a cancellation here must not say otherwise)
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        # backpressure: the connection is max_buffered_events behind, so the sender waits
        # while the client reads; a client that stops reading is dropped after
        # stall_timeout (it resumes from the event store), so no sender waits for ever
        with trio.move_on_after(self.config.stall_timeout) as waiting:
            waiting.shield = True
            while stream.listener is listener and listener.full():
                room = listener.room = trio.Event()
                await room.wait()
        if waiting.cancelled_caught and stream.listener is listener:
            stream.drop(listener)

    def route(self, value: bytes, related_request_id: Any) -> "_Stream | None":
        """Put a message the session sends on its stream; the stream, or None when the
        message was dropped or queued for the GET stream."""
        if self.closed:
            raise trio.ClosedResourceError("the HTTP session was terminated")
        msg = json.loads(value)
        stream: _Stream | None = None
        key: str | None = None
        if isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg):
            key = _id_key(msg.get("id"))
            # [basic/transports#28] a response goes on its request's stream -- transports#sending-messages-to-the-server
            stream = self.by_request.get(key)
            if key == self.init_key:
                # the answer to initialize settles the version, once: the id may be reused later
                self.init_key = None
                result = msg.get("result")
                version = result.get("protocolVersion") if isinstance(result, dict) else None
                self.protocol_version = version if isinstance(version, str) else None
            if stream is None:
                log.warning("session %s: no stream awaits the response %.200r; dropped", self.id, value)
                # [basic/transports#42, #47] a response belongs on its request's stream only; with
                # none (the request was cancelled, or never came over HTTP) it is dropped, never put
                # on the GET stream -- transports#listening-for-messages-from-the-server
                return None
        if stream is None and related_request_id is not None and not self.config.json_response:
            candidate = self.by_request.get(_id_key(related_request_id))
            if candidate is not None and not candidate.done:
                stream = candidate  # [basic/transports#29, #30] related messages go on the request's stream
        if stream is None:
            # [basic/transports#40, #41] unrelated messages: the GET stream
            if self.get_stream is not None and not self.get_stream.done:
                stream = self.get_stream
            else:
                self.pending_unrelated.append(value)
                self.pending_unrelated_bytes += len(value)
                cfg = self.config
                while len(self.pending_unrelated) > cfg.max_pending_unrelated or (
                    self.pending_unrelated_bytes > cfg.max_pending_unrelated_bytes and len(self.pending_unrelated) > 1
                ):
                    dropped = self.pending_unrelated.popleft()
                    self.pending_unrelated_bytes -= len(dropped)
                    log.warning("session %s: no GET stream; dropping an old queued message %.80r", self.id, dropped)
                return None
        # [basic/transports#47] each message goes on exactly one stream
        self.emit(stream, value.decode("utf-8"))
        if key is not None and key in stream.pending_ids:
            stream.pending_ids.discard(key)
            self.by_request.pop(key, None)
            if not stream.pending_ids and stream is not self.get_stream:
                # [basic/transports#32] the response was sent: the stream ends
                self.end(stream)
        return stream

    async def receive(self) -> bytes:
        message = await self._inbox.receive()
        self.inbox_count -= 1
        self.inbox_bytes -= len(message)
        return message

    async def aclose(self) -> None:
        self.closed = True
        self._inbox_send.close()
        # [basic/transports#31] a terminated session ends its streams -- transports#sending-messages-to-the-server
        for stream in list(self.streams.values()):
            self.end(stream)
        self.events.close()

    async def close_request_stream(self, request_id: Any) -> None:
        """Close the connection of a request's SSE stream without ending the stream.

        [basic/transports#24, #26] a retry field goes out first; the client
        reconnects with Last-Event-ID and gets the rest (conformance: SEP-1699).
        """
        stream = self.by_request.get(_id_key(request_id))
        # a JSON answer has no event ids to resume from: closing it would lose the response
        if stream is not None and not stream.json:
            self.close_connection(stream)

    def close_connection(self, stream: _Stream) -> None:
        """End the connection a stream is sent on, after a ``retry`` event; the stream goes on."""
        # [basic/transports#43, #44] we may end a connection; the retry field says when to
        # come back for the rest -- transports#listening-for-messages-from-the-server
        stream.push(encode_sse(None, retry=self.config.retry_ms))
        stream.push(None)  # close this connection, keep the stream

    def auth_for(self, request_id: Any) -> "AccessToken | None":
        """The verified token of a request of this session (with auth; None without).

        The token the request came with while it is in progress; after that (a task
        it started, say), the session's latest, which is the same principal's.
        """
        stream = self.by_request.get(_id_key(request_id))
        return stream.auth if stream is not None and stream.auth is not None else self.auth

    def request_cancelled(self, request_id: Any, notification: bytes | None = None) -> None:
        """The client cancelled a request: no response will come, so its stream is done.

        [basic/utilities/cancellation#4] the session sends nothing for it; without
        this its POST (an SSE stream or a JSON answer) would wait for ever.
        ``notification``: the cancellation itself, kept when no such request has
        come yet (see :meth:`replay_early_cancels`).
        """
        key = _id_key(request_id)
        stream = self.by_request.pop(key, None)
        if stream is not None:
            stream.pending_ids.discard(key)
            if not stream.pending_ids:
                self.end(stream)
        elif notification is not None:
            self.cancelled_early[key] = notification
            while len(self.cancelled_early) > _EARLY_CANCELS:
                self.cancelled_early.popitem(last=False)

    def replay_early_cancels(self, request_ids: set[str]) -> None:
        """Requests just delivered whose cancellation came first (the client posts them on two
        connections, so the server may read the cancellation first): the session gets the
        cancellation again, after its request now, and the request's stream ends."""
        if not self.cancelled_early:
            return  # (the usual case: no set built)
        for key in request_ids & self.cancelled_early.keys():
            notification = self.cancelled_early.pop(key)
            if self.has_room(len(notification)):
                self.deliver(notification)
                self.request_cancelled(json.loads(key))

    # -- streams ----------------------------------------------------------------------------------

    def has_room(self, size: int = 0) -> bool:
        """Whether the inbox takes a message of ``size`` bytes (one always fits in an empty inbox)."""
        waiting = self.inbox_count
        return waiting < self.config.max_inbox and not (
            waiting and self.inbox_bytes + size > self.config.max_inbox_bytes
        )

    def check_room(self, size: int = 0) -> None:
        """Refuse a message of ``size`` bytes the session has no room for (it is not keeping up with the client)."""
        if not self.has_room(size):
            raise _HttpError(429, "Too Many Requests: the session has too many messages waiting")

    def has_work(self) -> bool:
        """Whether the session has something in flight at the HTTP level: a request awaiting
        its answer, a message not yet read, or a connection listening to one of its streams."""
        return self.in_flight() or any(s.listener is not None for s in self.streams.values())

    def in_flight(self) -> bool:
        """Whether a request of the session awaits its answer or a message waits to be read
        (a connection merely listening on the GET stream is not work in flight)."""
        return bool(self.by_request or self.inbox_count)

    def listening(self) -> bool:
        """Whether a connection listens to one of the session's streams."""
        return any(s.listener is not None for s in self.streams.values())

    def stream_room(self) -> bool:
        """Whether the session, and its user, may open one more stream."""
        user = self.user
        return self.open_streams < self.config.max_streams_per_session and (
            user is None or user.streams < self.config.max_streams_per_user
        )

    def deliver(self, message: bytes) -> None:
        """Hand the session a message (room was checked, with no checkpoint since)."""
        self.last_active = trio.current_time()
        self._inbox_send.send_nowait(message)
        self.inbox_count += 1
        self.inbox_bytes += len(message)

    def new_stream(self, pending_ids: set[str] | None, *, standalone: bool = False) -> _Stream:
        if self.open_streams >= self.config.max_streams_per_session:
            raise _HttpError(429, "too many open streams in this session")
        user = self.user
        if user is not None:
            if user.streams >= self.config.max_streams_per_user:
                raise _HttpError(429, f"Too Many Requests: {user.streams} streams open for this user")
            user.streams += 1
        self._next_stream += 1
        stream = _Stream(("g" if standalone else "r") + str(self._next_stream), pending_ids)
        stream.auth = self.auth  # set for this request just before (no checkpoint since)
        # [basic/transports#46] a session has any number of streams at once -- transports#multiple-connections
        self.streams[stream.id] = stream
        self.open_streams += 1
        for key in stream.pending_ids:
            self.by_request[key] = stream
        return stream

    def emit(self, stream: _Stream, data: str | None, *, retry: int | None = None) -> bytes:
        stream.seq += 1
        event = encode_sse(data, id=make_event_id(stream.id, stream.seq), retry=retry)
        # [basic/transports#36, #48, #49] every event is kept for replay -- transports#resumability-and-redelivery
        self.events.store(stream.id, stream.seq, event)
        if not stream.json:
            stream.push(event)
        elif data:
            # a JSON answer takes the message itself: it is not parsed back out of its event
            stream.push(data.encode("utf-8"))
        return event

    def issued(self, stream_id: str) -> bool:
        """Whether ``stream_id`` names a stream of this session (kept or not)."""
        number = stream_id[1:]
        return (
            stream_id[:1] in ("g", "r") and number.isascii() and number.isdigit() and int(number) <= self._next_stream
        )

    def _evicted(self, stream_id: str) -> None:
        """The event store dropped a stream's events: an ended stream is forgotten with them."""
        stream = self.streams.get(stream_id)
        if stream is not None and stream.done:
            del self.streams[stream_id]

    def end(self, stream: _Stream) -> None:
        if not stream.done:
            self.open_streams -= 1
            if self.user is not None:
                self.user.streams -= 1
                self.user.tidy()
            if not self.events.finished(stream.id):
                self.streams.pop(stream.id, None)  # nothing left to resume
        stream.done = True
        stream.push(None)
        if stream is self.get_stream:
            self.get_stream = None


def error_body(code: int, message: str) -> dict[str, Any]:
    """The JSON-RPC error an HTTP answer carries when no request's id is known (a refused
    head, body, method or client): ``"id": null``, as JSON-RPC 2.0 writes it and the official
    SDKs send and read it (decision in ``spec_notes/basic/transports.md``)."""
    return {"jsonrpc": "2.0", "id": None, "error": {"code": int(code), "message": message}}


def _accepts_both(header: str | None) -> bool:
    """Whether an Accept header lists JSON and event streams (a client sends the same one with
    every POST: the verdict on the last few short ones is kept, bench W9)."""
    if header is None or len(header) > 256:
        return accepts(header, "application/json", "text/event-stream")
    return _accepts_both_short(header)


@functools.lru_cache(maxsize=16)
def _accepts_both_short(header: str) -> bool:
    return accepts(header, "application/json", "text/event-stream")


async def _linger(stream: trio.abc.Stream) -> None:
    """After refusing a request whose rest was never read: say we are done writing, and read
    (and drop) what the client is still sending for a moment before the connection is closed.

    Closing a socket with unread data makes the kernel reset the connection, and a
    reset can destroy the refusal before the client reads it (a "lingering close").
    At most ``_LINGER_BYTES`` over ``_LINGER_SECONDS``; over TLS the connection just closes.
    """
    if not isinstance(stream, trio.SocketStream):
        return
    with trio.move_on_after(_LINGER_SECONDS):
        try:
            await stream.send_eof()
            drained = 0
            while drained < _LINGER_BYTES and (data := await stream.receive_some(65536)):
                drained += len(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


def _peer_address(stream: trio.abc.Stream) -> str | None:
    """The client's IP address on a TCP connection (TLS or not); None on any other stream."""
    raw = stream.transport_stream if isinstance(stream, trio.SSLStream) else stream
    if not isinstance(raw, trio.SocketStream):
        return None
    try:
        address = raw.socket.getpeername()
    except OSError:
        return None
    return address[0] if isinstance(address, tuple) and isinstance(address[0], str) else None


def _chunk(conn: h11.Connection, events: list[bytes]) -> bytes:
    """``events`` framed as one chunk of a body (none when there are none)."""
    return (conn.send(h11.Data(data=b"".join(events))) or b"") if events else b""


#: the answer to a request whose session failed (details only in the log)
_INTERNAL_ERROR: Final = {"code": int(ErrorCode.INTERNAL_ERROR), "message": "Internal error"}


def _id_key(request_id: Any) -> str:
    """A request id as the key of a session's tables: its JSON text (``json.dumps``; for the
    usual integer that is ``str``, without building an encoder per call)."""
    return str(request_id) if type(request_id) is int else json.dumps(request_id)


def _primes(version: Any) -> bool:
    """Whether streams start with a priming event (an id and empty data) for this protocol version.

    Decision: only from 2025-11-25 on, which introduced it; clients of older
    revisions may choke on an event with empty data (the official TypeScript
    SDK makes the same choice).
    """
    return isinstance(version, str) and version >= "2025-11-25"


#: [2026-07-28:basic/index#54, #58, basic/transports/streamable-http#28, #61, #65] the errors a 2026-07-28
#: request is answered with 400 Bad Request for (when nothing went out before them)
MODERN_400_CODES = frozenset({-32020, -32021, -32022})
_KEEPALIVE: Any = object()


class _ModernSink:
    """Where a 2026-07-28 handler's messages wait for the connection that writes them.

    At most ``max_events`` wait; a handler sending more waits for the client to
    read, and one that waits ``stall_timeout`` finds its request cancelled (the
    client stopped reading). ``scope`` is the request's cancel scope.
    """

    def __init__(self, max_events: int, stall_timeout: float, scope: trio.CancelScope | None = None) -> None:
        self._send, self._receive = trio.open_memory_channel[tuple[bytes, bool, int | None]](max_events)
        self.stall_timeout = stall_timeout
        self.scope = trio.CancelScope() if scope is None else scope

    async def _put(self, item: tuple[bytes, bool, int | None]) -> None:
        try:
            self._send.send_nowait(item)
            return
        except trio.WouldBlock:
            pass
        with trio.move_on_after(self.stall_timeout) as waiting:
            await self._send.send(item)
        if waiting.cancelled_caught:
            self.scope.cancel(reason="the client stopped reading its stream")

    async def notify(self, data: bytes) -> None:
        await self._put((data, False, None))

    async def answer(self, data: bytes, code: int | None) -> None:
        await self._put((data, True, code))

    def end(self) -> None:
        self._send.close()

    async def receive(self) -> tuple[bytes, bool, int | None] | None:
        try:
            return await self._receive.receive()
        except trio.EndOfChannel:
            return None

    def receive_nowait(self) -> tuple[bytes, bool, int | None] | None:
        try:
            return self._receive.receive_nowait()
        except trio.EndOfChannel:
            return None


class _StreamingAnswer:
    """The sink of one 2026-07-28 POST: an answer with nothing before it is written at once,
    as one JSON body, by the handler's task; the first notification turns the exchange
    into an event stream, written by a task of its own from a :class:`_ModernSink`
    (its backpressure, keep-alive comments and coalescing)."""

    def __init__(
        self,
        server: "_HttpServer",
        conn: h11.Connection,
        stream: trio.abc.Stream,
        nursery: trio.Nursery,
        scope: trio.CancelScope,
    ) -> None:
        self.server, self.conn, self.stream, self.nursery, self.scope = server, conn, stream, nursery, scope
        self.streaming: _ModernSink | None = None
        #: set once everything for the exchange is written (or nothing more will be)
        self.written = trio.Event()
        #: the task that watches the connection for the client's close, while the exchange runs
        self.watch = _CloseWatch()

    async def notify(self, data: bytes) -> None:
        if self.streaming is None:
            config = self.server.config
            self.streaming = _ModernSink(config.max_buffered_events, config.stall_timeout, self.scope)
            self.nursery.start_soon(self._stream, self.streaming)
        await self.streaming.notify(data)

    async def _stream(self, sink: "_ModernSink") -> None:
        try:
            await self.server._stream_modern(self.conn, self.stream, sink)
        except Exception:
            # (a task of the connection's nursery: what would have ended the connection with its
            # exchange ends the exchange, and the connection, which is left mid-answer)
            log.exception("error while writing a 2026-07-28 event stream")
            self.scope.cancel(reason="its event stream failed")
        finally:
            self.written.set()

    async def answer(self, data: bytes, code: int | None) -> None:
        if self.streaming is not None:
            await self.streaming.answer(data, code)
            return
        # an answer with nothing before it: one JSON object, the status saying what kind of failure;
        # the request is answered, so the close watcher is done (stopped before the write's
        # schedule point, a watcher that has not run yet ends without reading the connection)
        self.watch.scope.cancel()
        await self.server._respond(self.conn, self.stream, 400 if code in MODERN_400_CODES else 200, encoded=data)

    def end(self) -> None:
        if self.streaming is not None:
            self.streaming.end()
        else:
            self.written.set()


class _CloseWatch:
    """The close watcher of one 2026-07-28 exchange (:meth:`_HttpServer._watch_modern`)."""

    __slots__ = ("done", "reading", "scope")

    def __init__(self) -> None:
        self.scope = trio.CancelScope()
        #: whether the watcher is reading the connection (the exchange's task waits for it to stop)
        self.reading = False
        self.done = trio.Event()


class _HttpError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        jsonrpc_code: int | None = None,
        *,
        headers: dict[str, str] | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.jsonrpc_code = jsonrpc_code
        self.headers = headers
        #: the body instead of a JSON-RPC error
        self.body = body


class _Request:
    def __init__(self, event: h11.Request) -> None:
        self.method = event.method.decode("ascii").upper()
        self.target = event.target.decode("ascii", "replace")
        self.headers: dict[str, str] = {}
        #: every Authorization header (more than one is refused, so none may hide behind another)
        self.authorization: list[str] = []
        for raw_name, raw_value in event.headers:  # (one pass: h11 gives the names lower-cased)
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            self.headers[name] = value
            if name == "authorization":
                self.authorization.append(value)
        self.body = b""
        #: the cancel scope of the exchange (see _HttpServer.handle_connection)
        self.scope: trio.CancelScope | None = None
        #: the nursery of the connection's helper tasks (see _HttpServer._serve_connection)
        self.tasks: trio.Nursery | None = None
        #: the verified token (with auth)
        self.auth: AccessToken | None = None
        #: the client's address (None on a connection without one)
        self.peer: str | None = None

    def header(self, name: str) -> str | None:
        return self.headers.get(name)


class _HttpServer:
    def __init__(
        self,
        server: Servable,
        config: HttpConfig,
        nursery: trio.Nursery,
        host: str,
        auth: "ProtectedResource | None" = None,
    ) -> None:
        self.server = server
        self.config = config
        #: with auth: the resource server's policy (its resource URI is known once bound)
        self.auth = auth
        self.nursery = nursery
        self.host = host
        #: the names a Host header may give (see default_allowed_hosts)
        self.allowed_hosts = default_allowed_hosts(host) if config.allowed_hosts is None else config.allowed_hosts
        #: Host and Origin values refused so far, each logged once (a bounded set)
        self._refused: set[str] = set()
        self.sessions: dict[str, _HttpSession] = {}
        #: who holds sessions and streams, by user (see _User)
        self.users: dict[Hashable, _User] = {}
        #: connections open, by client address
        self.connections: dict[str, int] = {}
        #: the bytes of events all sessions keep for resumption, together
        self.stored = StoreBudget(config.max_stored_bytes)
        #: cancelled when a shutdown begins: no more connections are accepted
        self.accept_scope = trio.CancelScope()
        self.closing = False
        #: exchanges being handled (a shutdown waits for them)
        self.busy = 0
        self._quiet = trio.Event()
        self._handlers = {"POST": self._post, "GET": self._get, "DELETE": self._delete}
        #: 2026-07-28 requests being handled; the engine their server's runtime checks them with
        self.modern_running = 0
        #: set when a shutdown begins: 2026-07-28 subscriptions end with their completion result
        self.ending = trio.Event()
        self._engine: Any = None
        self._engine_of: Any = None

    # -- connections -----------------------------------------------------------------------------

    async def accept(
        self, port: int, ssl_context: ssl.SSLContext | None, *, task_status: trio.TaskStatus[list[trio.SocketListener]]
    ) -> None:
        """Accept connections until a shutdown begins; TLS on each when there is an ``ssl_context``."""
        with self.accept_scope:
            # connections live in the server's nursery: they outlive the accepting
            if ssl_context is None:
                await trio.serve_tcp(
                    self.handle_connection, port, host=self.host, handler_nursery=self.nursery, task_status=task_status
                )
                return
            # (the handshake runs at the first read, so read_timeout bounds a client that never
            # finishes it; one that fails it ends its connection only)
            listeners = await trio.open_tcp_listeners(port, host=self.host)
            tls = [trio.SSLListener(lst, ssl_context, https_compatible=True) for lst in listeners]
            task_status.started(listeners)  # (bound and listening already: connections wait)
            await trio.serve_listeners(self.handle_connection, tls, handler_nursery=self.nursery)

    async def handle_connection(
        self, stream: trio.abc.Stream, head_limit: int = DEFAULT_HEAD_LIMIT, client: str | None = None
    ) -> None:
        """Serve one connection; ``head_limit``: bytes its request heads may take (the ASGI bridge
        moves it by what its rebuilt head adds, so the limit holds on what the client sent).
        ``client``: the client's address on a stream that has none (the ASGI bridge's in-process
        connection: the ASGI server's ``scope["client"]``), the user of the per-user limits when
        there is no authorization; not counted against max_connections_per_address (the ASGI
        server holds that socket)."""
        peer = _peer_address(stream)
        if peer is None:
            # (without it every client of the bridge was one user: one client's sessions evicted
            # another's, its streams took everyone's share -- issue 31, row 2 behind ASGI)
            await self._serve_connection(stream, client, head_limit)
            return
        held = self.connections.get(peer, 0)
        if held >= self.config.max_connections_per_address:
            # one address holding every socket the process may open would lock everyone
            # out (new connections wait for a free descriptor): past its share, closed unread
            log.debug("a connection from %s refused: %d open already", peer, held)
            with trio.CancelScope(shield=True):
                await stream.aclose()
            return
        self.connections[peer] = held + 1
        try:
            await self._serve_connection(stream, peer, head_limit)
        finally:
            left = self.connections[peer] - 1
            if left:
                self.connections[peer] = left
            else:
                del self.connections[peer]

    async def _serve_connection(self, stream: trio.abc.Stream, peer: str | None, head_limit: int) -> None:
        # the helper tasks of the connection's 2026-07-28 exchanges (each one's close watcher, an
        # event stream's writer) live in one nursery for the connection's life: a nursery per
        # exchange cost a scheduler pass each at its end (bench W11H)
        async with trio.open_nursery() as tasks:
            try:
                await self._serve_exchanges(stream, peer, tasks, head_limit)
            finally:
                tasks.cancel_scope.cancel()

    async def _serve_exchanges(
        self, stream: trio.abc.Stream, peer: str | None, tasks: trio.Nursery, head_limit: int
    ) -> None:
        conn = framed_connection(h11.SERVER, head_limit)
        reader = FramedReader(conn, stream, head_limit)
        try:
            # HTTP/1.1 keep-alive: one exchange after another on the connection, so a
            # client does not pay a TCP handshake per message (bench W9)
            while True:
                request = None
                # one cancel scope per exchange (one costs about as much as the rest of an
                # exchange's bookkeeping, bench W9): its deadline is read_timeout while the
                # request is read, none after; an event stream whose client falls too far
                # behind is dropped by cancelling it (the connection ends, _Stream.drop)
                with trio.CancelScope(deadline=trio.current_time() + self.config.read_timeout) as exchange:
                    request = await self._read_request(reader)
                    if request is not None:
                        request.peer = peer
                        exchange.deadline = math.inf
                        request.scope = exchange
                        request.tasks = tasks
                        await self._dispatch(conn, stream, request)
                if request is None or exchange.cancelled_caught:
                    break
                if self.closing or conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break  # shutting down, the client asked to close, or the exchange ended early
                conn.start_next_cycle()
        except h11.RemoteProtocolError as e:
            # not HTTP/1.1 as h11 reads it (no Host, a bad chunk size or Content-Length...):
            # say so with the status h11 suggests (400, 431 for an oversized head), then close
            log.debug("HTTP framing error: %s", e)
            await self._refuse_framing(conn, stream, e)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            if isinstance(stream, trio.SSLStream) and getattr(e.__cause__, "reason", None) == "HTTP_REQUEST":
                await self._plain_http_on_tls(stream)
            else:
                log.debug("HTTP connection ended: %r", e)
        except Exception:
            # one broken exchange must not take the server down: report it and answer 500
            log.exception("error while handling an HTTP request")
            if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                with trio.move_on_after(1):
                    try:
                        await self._respond(
                            conn,
                            stream,
                            500,
                            error_body(ErrorCode.INTERNAL_ERROR, "Internal error"),
                        )
                    except (trio.BrokenResourceError, trio.ClosedResourceError, h11.LocalProtocolError):
                        log.debug("could not send the 500 answer")
        finally:
            with trio.CancelScope(shield=True):
                await stream.aclose()

    async def _plain_http_on_tls(self, stream: trio.SSLStream[trio.abc.Stream]) -> None:
        """A plain HTTP request reached this HTTPS server (OpenSSL recognises one): answered
        in plain HTTP with a 400 that says which URL to use, as other HTTPS servers do,
        rather than a closed connection the client cannot explain."""
        log.info("a plain HTTP request on the HTTPS port: answered 400 (use https://)")
        message = "Bad Request: this server speaks HTTPS (TLS); use an https:// URL"
        body = json.dumps(error_body(ErrorCode.INVALID_REQUEST, message))
        head = "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n"
        data = f"{head}content-length: {len(body)}\r\n\r\n{body}".encode()
        transport = stream.transport_stream
        with trio.move_on_after(1):
            try:
                await transport.send_all(data)
                # the rest of the request, read and dropped, so that closing sends no reset
                # that could overtake the answer
                while await transport.receive_some(65536):
                    pass
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as failed:
                log.debug("could not send the 400 answer: %r", failed)

    async def _refuse_framing(self, conn: h11.Connection, stream: trio.abc.Stream, e: h11.RemoteProtocolError) -> None:
        if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return  # an answer had begun: closing the connection is all that is left
        body = error_body(ErrorCode.INVALID_REQUEST, f"Bad Request: {e}")
        with trio.move_on_after(1):
            try:
                await self._respond(conn, stream, e.error_status_hint, body, {"connection": "close"})
                await _linger(stream)
            except (trio.BrokenResourceError, trio.ClosedResourceError, h11.LocalProtocolError) as failed:
                log.debug("could not send the %d answer: %r", e.error_status_hint, failed)

    async def _read_request(self, reader: FramedReader) -> _Request | None:
        conn, stream = reader.conn, reader.stream
        head: _Request | None = None
        body = bytearray()
        while True:
            event = await reader.next_event()
            if isinstance(event, h11.Request):
                problem = request_framing_problem(event)
                if problem is not None:
                    # RFC 9112 section 6.1: whatever the server does with such a request, the
                    # connection closes after it, so nothing framed the other way can follow
                    log.warning("HTTP request refused: %s", problem)
                    await self._refuse_and_close(conn, stream, 400, f"Bad Request: {problem}")
                    return None
                head = _Request(event)
                declared = head.header("content-length")  # (h11 checked it is digits)
                if declared is not None and int(declared) > self.config.max_body:
                    await self._too_large(conn, stream)  # refused before a byte of it is read
                    return None
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > self.config.max_body:
                    await self._too_large(conn, stream)
                    return None
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                head.body = bytes(body)
                return head
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def _too_large(self, conn: h11.Connection, stream: trio.abc.Stream) -> None:
        # the rest of the body is not read: the connection ends after this answer
        await self._refuse_and_close(conn, stream, 413, f"Request body over {self.config.max_body} bytes")

    async def _refuse_and_close(self, conn: h11.Connection, stream: trio.abc.Stream, status: int, message: str) -> None:
        """Answer ``status`` with a JSON-RPC error of no request; the connection ends after it."""
        body = error_body(ErrorCode.INVALID_REQUEST, message)
        await self._respond(conn, stream, status, body, {"connection": "close"})
        await _linger(stream)

    async def _respond(
        self,
        conn: h11.Connection,
        stream: trio.abc.Stream,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        *,
        encoded: bytes | None = None,
    ) -> None:
        """Answer with ``body`` as JSON (or ``encoded``, JSON text already); no body when both are None."""
        if encoded is not None:
            payload = encoded
        else:
            payload = b"" if body is None else json.dumps(body).encode()
        hdrs = [("content-length", str(len(payload)))]
        if body is not None or encoded is not None:
            hdrs.append(("content-type", "application/json"))
        hdrs += list((headers or {}).items())
        data = conn.send(h11.Response(status_code=status, headers=hdrs))
        if payload:
            data = (data or b"") + (conn.send(h11.Data(data=payload)) or b"")
        data = (data or b"") + (conn.send(h11.EndOfMessage()) or b"")
        await stream.send_all(data)

    async def _dispatch(self, conn: h11.Connection, stream: trio.abc.Stream, req: _Request) -> None:
        try:
            path = req.target.partition("?")[0]
            if self.auth is not None and path in self._metadata_paths():
                await self._metadata(conn, stream, req)
                return
            # [basic/transports#8] one MCP endpoint: POST, GET and DELETE on its path only -- transports#streamable-http
            if path != self.config.path:
                raise _HttpError(404, f"no MCP endpoint at {req.target}")
            # [basic/transports#9, #10] DNS rebinding: Origin and Host are checked
            if not origin_allowed(req.header("origin"), self.config.allowed_origins):
                raise self._refuse("origin", req.header("origin"), self.config.allowed_origins)
            if not host_allowed(req.header("host"), self.allowed_hosts):
                raise self._refuse("host", req.header("host"), self.allowed_hosts)
            if self.closing and req.method == "GET":
                raise _HttpError(503, "Service Unavailable: the server is shutting down")
            handler = self._handlers.get(req.method)
            if handler is None:
                raise _HttpError(405, f"{req.method} is not supported on the MCP endpoint")
            # [basic/transports#13] with authorization configured, every request is authenticated
            # -- transports#security-warning
            if self.auth is not None:
                req.auth = await self._authenticate(req)
            self.busy += 1
            try:
                await handler(conn, stream, req)
            finally:
                self.busy -= 1
                if self.busy == 0:
                    self._quiet.set()
        except _HttpError as e:
            extra = e.headers or ({"allow": "GET, POST, DELETE"} if e.status == 405 else None)
            body = error_body(e.jsonrpc_code or ErrorCode.INVALID_REQUEST, e.message) if e.body is None else e.body
            # [basic/transports#11, #20] the body may be a JSON-RPC error of no request (none for
            # HEAD: its answer never has one, RFC 9110 section 9.3.2)
            await self._respond(conn, stream, e.status, None if req.method == "HEAD" else body, extra)

    def _refuse(self, what: Literal["host", "origin"], value: str | None, allowed: Sequence[str] | None) -> _HttpError:
        """The 403 of a Host or Origin this server does not accept, naming the setting that
        would: the person who sees it is most often the one who started the server (logged
        once per value too, for the operator)."""
        accepted = ", ".join(allowed if allowed is not None else LOOPBACK_HOSTS[:3])
        setting = f"allowed_{what}s"
        hint = f"this server accepts {accepted}; start it with {setting}=[...] naming the {what}s its clients use"
        if len(self._refused) < 100 and f"{what}:{value}" not in self._refused:
            self._refused.add(f"{what}:{value}")
            log.warning("refused a request with %s %r (403): %s", what.capitalize(), value, hint)
        return _HttpError(403, f"Forbidden: {what} {value!r} not allowed ({hint})")

    # -- authorization (basic/authorization, the resource server) ------------------------------------

    def _metadata_paths(self) -> tuple[str, ...]:
        assert self.auth is not None
        from ..authorization.resource_server import WELL_KNOWN

        path = urlsplit(self.auth.metadata_url()).path
        # [basic/authorization#14] the path-aware well-known URL, and the root one (the single
        # resource of this origin: clients of earlier revisions look there)
        return (path, WELL_KNOWN) if path != WELL_KNOWN else (path,)

    async def _metadata(self, conn: h11.Connection, stream: trio.abc.Stream, req: _Request) -> None:
        """[basic/authorization#8, #12] the Protected Resource Metadata document, public."""
        assert self.auth is not None
        if req.method != "GET":
            raise _HttpError(405, f"{req.method} is not supported on the metadata document", headers={"allow": "GET"})
        await self._respond(conn, stream, 200, self.auth.metadata(), {"cache-control": "max-age=3600"})

    async def _authenticate(self, req: _Request) -> "AccessToken":
        """The verified token of a request to the MCP endpoint, or a refusal with its challenge.

        [basic/authorization#55, #57, #102, 2026-07-28:basic/authorization/index#39] every request
        is checked, whatever its session (or era).
        """
        from ..authorization.resource_server import AuthRefused, InvalidToken, bearer_token

        auth = self.auth
        assert auth is not None
        try:
            token = bearer_token(req.authorization)
            if token is None:
                # [basic/authorization#14, #16] no credentials: 401 naming the metadata and the
                # scopes a token needs here; no error code (RFC 6750 section 3.1)
                raise AuthRefused(401, None, "this MCP endpoint needs an access token", scope=self._scopes_for(req))
            try:
                with trio.fail_after(auth.verify_timeout):
                    verified = await auth.verifier.verify(token)
            except InvalidToken as e:
                raise AuthRefused(401, "invalid_token", str(e) or "the token is not valid") from None
            except Exception as e:
                # [basic/authorization#59, #60] a token that cannot be checked is not accepted: 401,
                # with nothing of the failure in the answer (it is logged here: one line when the
                # authorization server cannot be asked, with the traceback when the verifier broke)
                from ...errors import HTTPTransportError

                operational = isinstance(e, HTTPTransportError | OSError | trio.TooSlowError)
                log.warning("access token verification failed: %r", e, exc_info=not operational)
                raise AuthRefused(401, "invalid_token", "the token could not be verified") from None
            # [basic/authorization#103] whatever the verifier did, audience, expiry and scopes are
            # checked here (OAuth 2.1 section 5.2) -- authorization#access-token-privilege-restriction
            auth.check_token(verified)
            return verified
        except AuthRefused as refusal:
            raise self._refusal(refusal) from None

    def _scopes_for(self, req: _Request) -> frozenset[str]:
        """The scopes a request needs, as far as its body tells (for a 401 challenge)."""
        assert self.auth is not None
        try:
            message = json.loads(req.body) if req.method == "POST" and req.body else None
        except ValueError:
            message = None
        return self.auth.scopes_needed(message if isinstance(message, list) else [message])

    def _refusal(self, refusal: "AuthRefused") -> _HttpError:
        assert self.auth is not None
        headers = {"www-authenticate": self.auth.challenge(refusal)}
        # an OAuth error body (RFC 6750 has none; this is what OAuth APIs send), not a JSON-RPC one:
        # the answer is the HTTP layer's, before any JSON-RPC
        body = {"error": refusal.error or "unauthorized", "error_description": refusal.description}
        return _HttpError(refusal.status, refusal.description, headers=headers, body=body)

    def _authorize(self, req: _Request, messages: Sequence[Any]) -> None:
        """[basic/authorization#64, #65] the scopes these messages need, or 403 insufficient_scope."""
        if self.auth is None:
            return
        from ..authorization.resource_server import AuthRefused

        assert req.auth is not None
        try:
            self.auth.check_token(req.auth, self.auth.scopes_needed(messages))
        except AuthRefused as refusal:
            raise self._refusal(refusal) from None

    def _check_principal(self, req: _Request, session: _HttpSession) -> None:
        """A session serves the user who opened it: another user's token does not reach it.

        Decision (spec_notes/basic/authorization.md): 404, as for a session that does
        not exist -- the session id is not a credential (security best practices,
        session hijacking), and a 403 would send the client into a step-up it cannot win.
        """
        if req.auth is None:
            return
        if session.principal != req.auth.principal:
            raise _HttpError(404, "Session not found")
        session.auth = req.auth

    async def shutdown(self, grace: float) -> None:
        """Stop gracefully: no new connections, no new requests (503), GET streams end
        now (after a ``retry`` event, so clients know to come back later), requests in
        flight get up to ``grace`` seconds to be answered; then their streams end the
        same way (a JSON answer still awaited is a 503), every session is closed, and
        the server stops."""
        self.closing = True
        self.ending.set()
        self.accept_scope.cancel()
        for session in list(self.sessions.values()):
            if session.get_stream is not None:
                session.close_connection(session.get_stream)
        with trio.move_on_after(grace):
            await self._until_quiet()
        for session in list(self.sessions.values()):
            session.closed = True
            for sse in list(session.streams.values()):
                session.close_connection(sse)
            session.scope.cancel(reason="the server is shutting down")
        with trio.move_on_after(1):
            await self._until_quiet()  # the last events and answers go out
        self.nursery.cancel_scope.cancel(reason="the server is shutting down")

    async def _until_quiet(self) -> None:
        while self.busy:
            self._quiet = trio.Event()
            await self._quiet.wait()

    # -- sessions ----------------------------------------------------------------------------------

    def _serves_modern(self) -> bool:
        """Whether a request without a session id is a 2026-07-28 request here: a server narrowed to
        the legacy revisions (``modern_versions=()``) serves only sessions, so such a request is
        the 400 of [basic/transports#60], not a stateless request it cannot serve."""
        return getattr(self.server, "modern_runtime", None) is not None and bool(
            getattr(self.server, "modern_versions", True)
        )

    def _serves_legacy(self) -> bool:
        """Whether this server holds 2025 sessions at all: one of modern revisions only
        (``supported_versions=()``) serves every request in the 2026-07-28 shape, an ``initialize``
        and any ``Mcp-Session-Id`` included ([2026-07-28:basic/transports/streamable-http#72])."""
        return bool(getattr(self.server, "supported_versions", True)) or not self._serves_modern()

    def _session_for(self, req: _Request) -> _HttpSession:
        sid = req.header(MCP_SESSION_ID)
        if sid is None:
            # [basic/transports#60] a session id is required after initialization
            raise _HttpError(400, "Bad Request: missing MCP-Session-Id header")
        session = self.sessions.get(sid)
        if session is None or session.closed:
            # [basic/transports#61] unknown or terminated session: 404
            raise _HttpError(404, "Session not found")
        self._check_principal(req, session)
        # [basic/transports#68] an unsupported protocol version header is a 400
        if not version_header_ok(req.header(MCP_PROTOCOL_VERSION)):
            raise _HttpError(400, f"Bad Request: unsupported MCP-Protocol-Version {req.header(MCP_PROTOCOL_VERSION)!r}")
        session.last_active = trio.current_time()
        return session

    def _user_of(self, req: _Request) -> _User:
        """The user a request counts against (see _User)."""
        auth = req.auth
        key: Hashable
        if auth is not None:
            # the person, whatever client they use; a client acting for itself is its own user
            key = ("subject", auth.issuer, auth.subject) if auth.subject else ("client", auth.issuer, auth.client_id)
        elif self.config.user_key is not None:
            key = ("custom", self.config.user_key(req.peer, req.headers))
        else:
            key = ("address", req.peer)
        user = self.users.get(key)
        if user is None:
            user = self.users[key] = _User(key, self.users)
        return user

    def _admit(self, user: _User) -> None:
        """Make room for a new session of ``user``, or refuse it.

        The per-user policy (spec_notes/basic/transports.md, "Sessions and
        streams per user"): a user at ``max_sessions_per_user`` gives up their
        own least recently active session that has nothing in flight (429 when
        every one of theirs has). With the server at ``max_sessions``, a session
        gives way from the user holding the most, if they hold at least two more
        than ``user`` (so nobody is pushed below what the newcomer gets), else
        one of ``user``'s own; 503 when no session can. A connection listening
        on a GET stream does not keep a session from giving way (it is nothing
        the client waits for an answer to); a request in flight, a message not
        yet read, or work the application keeps for the session (its tasks) does.
        """
        cfg = self.config
        if len(user.sessions) >= cfg.max_sessions_per_user:
            if not self._reclaim_from(user, "max_sessions_per_user reached: the user's own session"):
                raise _HttpError(
                    429,
                    f"Too Many Requests: {len(user.sessions)} sessions open for this user, each with work in flight",
                )
            return
        if len(self.sessions) < cfg.max_sessions:
            return
        mine = len(user.sessions)
        for other in sorted(self.users.values(), key=lambda u: len(u.sessions), reverse=True):
            if len(other.sessions) < mine + 2:
                break
            if self._reclaim_from(other, "max_sessions reached: a session of the user holding the most"):
                return
        if not self._reclaim_from(user, "max_sessions reached: the user's own session"):
            raise _HttpError(503, "Service Unavailable: too many sessions")

    def _reclaim_from(self, user: _User, why: str) -> bool:
        """Close ``user``'s least recently active session with nothing in flight (one without a
        listening connection first); whether there was one."""
        app_has_work = getattr(self.server, "has_work", None)
        idle = [
            s
            for s in user.sessions
            if not s.closed and not s.in_flight() and not (app_has_work is not None and app_has_work(s))
        ]
        if not idle:
            return False
        victim = min(idle, key=lambda s: (s.listening(), s.last_active))
        log.info(
            "HTTP session %s (idle %.0fs) gives way to a new session (%s)",
            victim.id,
            trio.current_time() - victim.last_active,
            why,
        )
        victim.closed = True  # unknown from now on: its client gets 404 and starts a new session (#62)
        self._forget(victim)
        for stream in list(victim.streams.values()):
            victim.close_connection(stream)  # a listening connection ends now (its client comes back: 404)
        victim.scope.cancel(reason="idle session reclaimed for a new session")
        return True

    def _forget(self, session: _HttpSession) -> None:
        """The session no longer counts: not found by its id, not against its user's limits."""
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]
        user = session.user
        if user is not None:
            user.sessions.discard(session)
            user.tidy()

    async def _run_session(self, session: _HttpSession) -> None:
        try:
            with session.scope:
                await self.server.serve(session)
        except Exception:
            # a bug behind one session ends that session, never the server (trial28c N2): the
            # traceback is logged once, and each request still waiting gets an answer, -32603
            log.exception("HTTP session %s failed", session.id)
            for key in list(session.by_request) if not session.closed else ():
                failed = {"jsonrpc": "2.0", "id": json.loads(key), "error": _INTERNAL_ERROR}
                session.route(json.dumps(failed).encode(), None)
        finally:
            session.closed = True
            await session.aclose()
            self._forget(session)
            log.info("HTTP session %s ended", session.id)

    async def expire_idle(self) -> None:
        cfg = self.config
        interval = max(1.0, min(60.0, cfg.session_idle_timeout / 4, cfg.init_timeout / 4))
        while True:
            await trio.sleep(interval)
            now = trio.current_time()
            for session in list(self.sessions.values()):
                if not session.initialized and now - session.created > cfg.init_timeout:
                    # a session that never finished initializing must not hold a max_sessions slot
                    log.info("HTTP session %s never sent notifications/initialized; closed", session.id)
                    session.scope.cancel(reason="initialization not completed in time")
                    continue
                idle = now - session.last_active
                busy = any(s.listener is not None for s in session.streams.values())
                if idle > self.config.session_idle_timeout and not busy:
                    log.info("HTTP session %s expired after %.0fs idle", session.id, idle)
                    session.scope.cancel(reason="idle session expired")

    # -- POST -----------------------------------------------------------------------------------------

    async def _post(self, conn: h11.Connection, stream: trio.abc.Stream, req: _Request) -> None:
        # [basic/transports#16] the client accepts both JSON and SSE
        if not _accepts_both(req.header("accept")):
            raise _HttpError(406, "Not Acceptable: Accept must list application/json and text/event-stream")
        ctype = (req.header("content-type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise _HttpError(415, "Unsupported Media Type: POST a JSON-RPC message as application/json")
        try:
            # [basic/transports#17, #19] the body is one JSON-RPC message (a batch only where
            # the session's revision allows one); anything else is a 400 with an id-less error
            message = loads(req.body)
        except InvalidMessage as e:
            raise _HttpError(400, str(e), e.code) from e
        legacy = self._serves_legacy()
        if isinstance(message, list) and not legacy:
            # [2026-07-28:basic/transports/streamable-http#11] no batches in 2026-07-28, whatever the session id
            raise _HttpError(400, "Invalid Request: no JSON-RPC batches", ErrorCode.INVALID_REQUEST)
        if isinstance(message, list):
            if len(message) > self.config.max_batch:
                # each message of a batch is work the session does and answers: one body under
                # max_body could hold tens of thousands -- refused whole, before any is looked at
                raise _HttpError(
                    400,
                    f"Invalid Request: a batch of {len(message)} messages; at most {self.config.max_batch} are taken",
                    ErrorCode.INVALID_REQUEST,
                )
            # [2025-03-26:basic/lifecycle#3] initialize is never part of a batch
            if any(isinstance(m, dict) and m.get("method") == "initialize" for m in message):
                raise _HttpError(
                    400, "Invalid Request: initialize cannot be part of a batch", ErrorCode.INVALID_REQUEST
                )
            session = self._session_for(req)
            # [2025-03-26:basic/index#14] a 2025-03-26 session receives batches; others refuse them
            if session.protocol_version not in BATCH_REVISIONS or not message:
                raise _HttpError(
                    400,
                    f"Invalid Request: no batches in protocol revision {session.protocol_version}"
                    if message
                    else "Invalid Request: an empty batch",
                    ErrorCode.INVALID_REQUEST,
                )
            items: list[Any] = message
        else:
            items = [message]
        try:
            kinds = [classify(m) for m in items]
        except InvalidMessage as e:
            raise _HttpError(400, str(e), e.code) from e
        self._authorize(req, items)
        single = first if len(kinds) == 1 and isinstance(first := kinds[0], RawRequest) else None
        init = single if single is not None and single.method == "initialize" else None
        if init is not None and is_modern_request(init.params):
            init = None  # an initialize carrying a 2026-07-28 _meta: a modern request (answered -32601)
        if not legacy or (
            req.header(MCP_SESSION_ID) is None
            and init is None
            and not isinstance(message, list)
            and self._serves_modern()
        ):
            # [2026-07-28:basic/versioning#11] both shapes on one endpoint: without a session id and
            # an initialize, a POST is a 2026-07-28 request, standing alone. A server of modern
            # revisions only takes every POST so: [2026-07-28:basic/transports/streamable-http#72]
            # its session id is ignored, and [2026-07-28:basic/versioning#10] an initialize is
            # refused (400) naming the versions it supports, as on stdio
            await self._post_modern(conn, stream, req, kinds[0])
            return
        ping = single if single is not None and single.method == "ping" and not isinstance(message, list) else None
        headers: dict[str, str] = {}
        if init is not None:
            if req.header(MCP_SESSION_ID) is not None and req.header(MCP_SESSION_ID) in self.sessions:
                raise _HttpError(400, "Bad Request: initialize on an existing session")
            user = self._user_of(req)
            self._admit(user)
            # [basic/transports#55, #56, #57] a fresh, unguessable, visible-ASCII session id
            session = _HttpSession(new_session_id(), self.config, self.stored)
            assert valid_session_id(session.id)
            session.user = user
            user.sessions.add(session)
            if req.auth is not None:
                session.principal, session.auth = req.auth.principal, req.auth
            session.init_key = _id_key(init.id)
            self.sessions[session.id] = session
            self.nursery.start_soon(self._run_session, session)
            headers[MCP_SESSION_ID] = session.id
        elif not isinstance(message, list):
            session = self._session_for(req)
        if ping is None:
            session.check_room(len(req.body))
        request_ids = {_id_key(k.id) for k in kinds if isinstance(k, RawRequest)}
        if self.closing and request_ids:
            # no new work while shutting down; notifications and responses still come in,
            # as requests in flight may be waiting for them (an elicitation's answer)
            raise _HttpError(503, "Service Unavailable: the server is shutting down")
        if len(request_ids) < sum(isinstance(k, RawRequest) for k in kinds) or request_ids & session.by_request.keys():
            # one stream per request id: a second request with an id still in flight is refused
            raise _HttpError(409, "Conflict: a request with this id is already in progress", ErrorCode.INVALID_REQUEST)
        if ping is not None and (not session.has_room(len(req.body)) or not session.stream_room()):
            # [basic/utilities/ping#1] a ping is always answered, at once: when the session has
            # no room for it (its inbox or streams are full of long work), here, as plain JSON
            await self._respond(conn, stream, 200, {"jsonrpc": "2.0", "id": ping.id, "result": {}}, headers)
            return
        if not request_ids:
            session.deliver(req.body)
            for k in kinds:
                if isinstance(k, RawNotification):
                    if k.method == "notifications/cancelled" and k.params:
                        notification = {"jsonrpc": "2.0", "method": k.method, "params": k.params}
                        session.request_cancelled(k.params.get("requestId"), json.dumps(notification).encode())
                    elif k.method == "notifications/initialized":
                        session.initialized = True
            # [basic/transports#18] notifications and responses accepted: 202, no body
            await self._respond(conn, stream, 202)
            return
        methods = {k.method for k in kinds if isinstance(k, RawRequest)}
        # [basic/transports#21] a request is answered with JSON or an SSE stream;
        # [basic/utilities/tasks#30] a client polling tasks/get gets plain JSON
        if self.config.json_response or methods == {"tasks/get"}:
            await self._answer_json(conn, stream, session, req.body, request_ids, headers)
        else:
            sse = session.new_stream(request_ids)
            listener = sse.attach(self.config, req.scope)
            version = session.protocol_version if init is None else (init.params or {}).get("protocolVersion")
            if _primes(version):
                # [basic/transports#23] a priming event first: an id and empty data, with the retry field
                session.emit(sse, "", retry=self.config.retry_ms)
            session.deliver(req.body)
            session.replay_early_cancels(request_ids)
            await self._stream_sse(conn, stream, session, sse, listener, headers, coalesce=_COALESCE_PASSES)

    async def _answer_json(
        self,
        conn: h11.Connection,
        stream: trio.abc.Stream,
        session: _HttpSession,
        body: bytes,
        request_ids: set[str],
        headers: dict[str, str],
    ) -> None:
        sse = session.new_stream(request_ids)
        sse.json = True
        listener = sse.attach(self.config)
        session.deliver(body)
        session.replay_early_cancels(request_ids)
        answers: list[bytes] = []
        while True:
            message = await listener.receive()
            listener.took(message)
            if message is None:
                break
            if "method" not in json.loads(message):
                answers.append(message)
        # JSON mode has nowhere else for related messages: they went on the stream and
        # were kept for replay; only responses are in the body.
        if not answers:
            if session.closed:
                ended = error_body(ErrorCode.INTERNAL_ERROR, "the session ended before answering")
                await self._respond(conn, stream, 503, ended, headers)
            else:
                # the client cancelled its request(s): there is no answer, and none is awaited
                await self._respond(conn, stream, 202, None, headers)
            return
        # [2025-03-26:basic/transports#22] a batch is answered with an array, even of one response
        # (JSON-RPC 2.0 batches)
        payload = b"[" + b",".join(answers) + b"]" if body.lstrip()[:1] == b"[" else answers[0]
        await self._respond(conn, stream, 200, headers=headers, encoded=payload)

    async def _stream_sse(
        self,
        conn: h11.Connection,
        stream: trio.abc.Stream,
        session: _HttpSession,
        sse: _Stream,
        listener: _Listener,
        headers: dict[str, str],
        *,
        replay: Sequence[bytes] = (),
        watch: bool = False,
        coalesce: int = 0,
    ) -> None:
        hdrs = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
        hdrs += list(headers.items())
        # the head goes out with the first events (the replay, the priming event)
        head = conn.send(h11.Response(status_code=200, headers=hdrs)) or b""
        # (dropped as too slow, the listener's scope, the exchange's, is cancelled: the
        # connection ends without the last chunk)
        try:
            if watch:
                # a long-lived stream: a client closing its end is noticed at once, not at
                # the next write, so its listener does not linger
                async with trio.open_nursery() as nursery:
                    left = trio.Event()
                    nursery.start_soon(self._watch_for_close, conn, stream, left, nursery.cancel_scope)
                    rest = await self._pump(conn, stream, listener, head, list(replay))
                    nursery.cancel_scope.cancel()
                if left.is_set():
                    log.debug("session %s: client closed stream %s", session.id, sse.id)
                    return
            else:
                rest = await self._pump(conn, stream, listener, head, list(replay), coalesce)
            await stream.send_all(rest + (conn.send(h11.EndOfMessage()) or b""))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            # a disconnection is not a cancellation (basic/transports#33, #34): the stream
            # goes on in the event store, ready to be resumed
            log.debug("session %s: client left stream %s", session.id, sse.id)
        finally:
            sse.detach(listener)

    async def _pump(
        self,
        conn: h11.Connection,
        stream: trio.abc.Stream,
        listener: _Listener,
        head: bytes,
        ready: list[bytes],
        coalesce: int = 0,
    ) -> bytes:
        """Write ``head`` (the answer's head, or nothing), the events ``ready`` and the
        listener's, until it is ended; a comment after each quiet spell.

        What is ready goes out in one write (the head with the priming event, a
        response with the events queued before it), as one chunk, written before
        waiting for more: each write wakes the client and costs a system call on
        both sides (bench W9, W10: four writes per answer were two), each chunk a
        pass through h11. ``coalesce``: scheduler passes the head may wait first
        for more events to go with it, so that a request answered at once gets
        one write in all, its head, priming event, response and end (the priming
        event still goes first, a few passes later at most:
        spec_notes/basic/transports.md). Returns what is left to write with the
        end of the message.
        """
        while True:
            try:
                event = listener.receive_nowait()  # (no timer when an event is ready)
            except trio.WouldBlock:
                if (head or ready) and coalesce:
                    coalesce -= 1
                    await trio.lowlevel.checkpoint()
                    continue
                if head or ready:
                    await stream.send_all(head + _chunk(conn, ready))
                    head, ready, coalesce = b"", [], 0
                    continue  # (events may have come during the write)
                event = b":\n\n"  # an SSE comment: ignored by the client, it tests the connection
                with trio.move_on_after(self.config.sse_keepalive):
                    event = await listener.receive()
            listener.took(event)
            if event is None:
                return head + _chunk(conn, ready)
            ready.append(event)

    async def _watch_for_close(
        self, conn: h11.Connection, stream: trio.abc.Stream, left: trio.Event, scope: trio.CancelScope
    ) -> None:
        """Read the client's side of a streaming connection until it closes, then stop the stream.

        What the client sends meanwhile could only be answered once the stream ends,
        which a GET stream never does: at most ``max_pipelined`` bytes of it are
        kept; past that the connection is dropped (the stream goes on, resumable).
        """
        received = 0
        try:
            while data := await stream.receive_some(65536):
                received += len(data)
                if received > self.config.max_pipelined:
                    log.warning(
                        "a client sent over %d bytes on the connection of an event stream; the connection is dropped",
                        self.config.max_pipelined,
                    )
                    break
                conn.receive_data(bytes(data))  # a pipelined request: h11 keeps it for the next cycle
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        left.set()
        scope.cancel()

    # -- POST, 2026-07-28 ------------------------------------------------------------------------------

    def _modern_engine(self, runtime: Any) -> Any:
        """The server engine of the runtime (made again when the server's registrations change)."""
        if self._engine_of is not runtime:
            self._engine = runtime.engine(track_ids=False)
            self._engine_of = runtime
        return self._engine

    async def _post_modern(
        self, conn: h11.Connection, stream: trio.abc.Stream, req: _Request, classified: Any = None
    ) -> None:
        """A 2026-07-28 POST: one request (or notification), checked on its own, answered on its own.

        No session, no resumption: the answer is one JSON object when the handler sends
        nothing before it, else an SSE stream of its notifications and then the answer
        ([2026-07-28:basic/transports/streamable-http#16]). Errors found before the handler
        runs are 400 (404 for a method we do not implement); so are -32020/-32021/-32022
        from the handler when nothing preceded them.
        """
        runtime = self.server.modern_runtime()  # type: ignore[attr-defined]
        engine = self._modern_engine(runtime)
        # (the engine's events, read by their fields: this layer does not import the engine's)
        # (the envelope already read is handed over to our engine; a runtime of another kind, such as
        # the cross-check fixture's, is given the body alone, as its receive_message takes it)
        if classified is not None and getattr(engine, "takes_classified", False):
            event = engine.receive_message(req.body, headers=req.headers, classified=classified)[0]
        else:
            event = engine.receive_message(req.body, headers=req.headers)[0]
        error = getattr(event, "error", None)
        if error is not None:
            status = getattr(event, "http_status", None) or 400
            log.info("2026-07-28 request refused: %s", error)
            reply = getattr(event, "reply", None)
            if reply is None:
                raise _HttpError(status, error.message, error.code)
            await self._respond(conn, stream, status, encoded=reply)
            return
        exchange = getattr(event, "exchange", None)
        if exchange is None:
            # [2026-07-28:basic/transports/streamable-http#13] a notification accepted: 202, no body (over HTTP
            # none has an effect: closing a stream is the cancellation)
            await self._respond(conn, stream, 202)
            return
        if self.closing:
            raise _HttpError(503, "Service Unavailable: the server is shutting down")
        # a request in progress is one of its user's streams, as a 2025 session's are: one user
        # cannot take every max_stateless_requests slot (spec_notes/basic/transports.md, "per user")
        user = self._user_of(req)
        if user.streams >= self.config.max_streams_per_user:
            user.tidy()
            raise _HttpError(429, f"Too Many Requests: {user.streams} requests in progress for this user")
        if self.modern_running >= self.config.max_stateless_requests:
            user.tidy()
            raise _HttpError(503, "Service Unavailable: too many requests in progress")
        self.modern_running += 1
        user.streams += 1
        try:
            await self._run_modern(conn, stream, req, runtime, exchange)
        finally:
            self.modern_running -= 1
            user.streams -= 1
            user.tidy()

    async def _run_modern(
        self, conn: h11.Connection, stream: trio.abc.Stream, req: _Request, runtime: Any, exchange: Any
    ) -> None:
        """Run the handler in this task; its answer is written from here when nothing came
        before it (one JSON body, the usual case), else a writer task streams what it sends
        (:class:`_StreamingAnswer`). (A task and a channel per request cost about a tenth of
        a 2026-07-28 call: bench W11H.)"""
        scope = trio.CancelScope()
        assert req.tasks is not None
        sink = _StreamingAnswer(self, conn, stream, req.tasks, scope)
        # [2026-07-28:basic/transports/streamable-http#23, basic/patterns/cancellation#4] a client that
        # closes its connection cancels the request
        req.tasks.start_soon(self._watch_modern, conn, stream, scope, sink.watch)
        try:
            await runtime.run(exchange, sink, scope, auth=req.auth, ending=self.ending)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("2026-07-28 request %r: the client went away", exchange.id)
            scope.cancel(reason="the client closed its stream")
        finally:
            sink.end()
        if not sink.written.is_set():  # (a set Event's wait is still a schedule point)
            await sink.written.wait()
        sink.watch.scope.cancel()
        if sink.watch.reading:
            # (the next request on the connection is read by this task: the watcher stops first)
            await sink.watch.done.wait()

    async def _watch_modern(
        self, conn: h11.Connection, stream: trio.abc.Stream, scope: trio.CancelScope, watch: _CloseWatch
    ) -> None:
        """The close watcher of a 2026-07-28 exchange: cancels ``scope`` when the client closes the
        connection, until the exchange stops it (at once when its answer is written before this
        task first ran: the usual case, which then costs no read of the connection)."""
        if watch.scope.cancel_called:
            watch.done.set()
            return
        watch.reading = True
        try:
            with watch.scope:
                await self._watch_for_close(conn, stream, trio.Event(), scope)
        except Exception:
            # (a task of the connection's nursery: logged, as the connection's own errors are)
            log.exception("error while watching a 2026-07-28 exchange's connection")
            scope.cancel(reason="its connection failed")
        finally:
            watch.reading = False
            watch.done.set()

    async def _stream_modern(self, conn: h11.Connection, stream: trio.abc.Stream, sink: "_ModernSink") -> None:
        try:
            await self._write_modern(conn, stream, sink)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("a 2026-07-28 stream: the client went away")
            sink.scope.cancel(reason="the client closed its stream")

    async def _write_modern(self, conn: h11.Connection, stream: trio.abc.Stream, sink: "_ModernSink") -> None:
        first = await sink.receive()
        if first is None:
            return  # cancelled: nothing more is sent for it (the connection is gone, or going)
        data, final, code = first
        if final:
            # an answer with nothing before it: one JSON object, the status saying what kind of failure
            status = 400 if code in MODERN_400_CODES else 200
            await self._respond(conn, stream, status, encoded=data)
            return
        if self.config.json_response:
            # JSON only: what comes before the answer has nowhere to go
            while first is not None and not first[1]:
                first = await sink.receive()
            if first is not None:
                await self._respond(conn, stream, 200, encoded=first[0])
            return
        # [2026-07-28:basic/transports/streamable-http#18] notifications before the answer: an event stream
        hdrs = [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            # [2026-07-28:basic/transports/streamable-http#22] no buffering by proxies
            ("x-accel-buffering", "no"),
        ]
        pending = [encode_sse(data.decode("utf-8"))]
        out = conn.send(h11.Response(status_code=200, headers=hdrs)) or b""
        while True:
            try:
                item = sink.receive_nowait()
            except trio.WouldBlock:
                if pending:
                    await stream.send_all(out + _chunk(conn, pending))
                    out, pending = b"", []
                    continue
                item = _KEEPALIVE
                with trio.move_on_after(self.config.sse_keepalive):
                    item = await sink.receive()
            if item is _KEEPALIVE:
                # an SSE comment keeps a quiet stream (a subscription) open through intermediaries
                await stream.send_all(_chunk(conn, [b":\n\n"]))
                continue
            if item is None:
                break
            pending.append(encode_sse(item[0].decode("utf-8")))
            if item[1]:
                break  # [2026-07-28:basic/transports/streamable-http#21] the answer ends the stream
        await stream.send_all(out + _chunk(conn, pending) + (conn.send(h11.EndOfMessage()) or b""))

    # -- GET --------------------------------------------------------------------------------------------

    async def _get(self, conn: h11.Connection, stream: trio.abc.Stream, req: _Request) -> None:
        if (req.header(MCP_SESSION_ID) is None or not self._serves_legacy()) and self._serves_modern():
            # [2026-07-28:basic/transports/streamable-http#72] no GET stream without a session (nor with
            # one, on a server of modern revisions only: it has no sessions): 405
            raise _HttpError(405, "Method Not Allowed: no GET stream in 2026-07-28 (use subscriptions/listen)")
        # [basic/transports#38] the client accepts an event stream
        if not accepts(req.header("accept"), "text/event-stream"):
            raise _HttpError(406, "Not Acceptable: Accept must list text/event-stream")
        session = self._session_for(req)
        last = req.header(LAST_EVENT_ID)
        if last is not None and len(last) > MAX_EVENT_ID_LENGTH:
            raise _HttpError(400, "Bad Request: Last-Event-ID is longer than any event id this server issues")
        if last is not None and (parsed := parse_event_id(last)) is not None:
            stream_id, seq = parsed
            resumable = session.streams.get(stream_id)
            replay = session.events.replay_after(stream_id, seq) if resumable is not None else None
            if resumable is not None and replay is not None:
                if replay and replay[0][0] > seq + 1:
                    # the bounded store dropped the events between: say so, the client misses them
                    gap = f"events {seq + 1} to {replay[0][0] - 1} are no longer kept"
                    log.warning("session %s: stream %s resumed after event %d; %s", session.id, stream_id, seq, gap)
                listener = resumable.attach(self.config, req.scope)
                if resumable.done:
                    resumable.detach(listener)
                    listener.put(None)  # replay only: the stream had ended
                # [basic/transports#52, #53, #54] replay that stream only, then go on live
                # -- transports#resumability-and-redelivery
                await self._stream_sse(
                    conn, stream, session, resumable, listener, {}, replay=[d for _, d in replay], watch=True
                )
                return
            if session.issued(stream_id):
                # Decision: 410, not 404 (which would tell the client its session is gone, #62),
                # and not the GET stream (where the awaited response would never come)
                raise _HttpError(410, f"Gone: the events of stream {stream_id} are no longer kept")
        if not self.config.get_stream:
            # [basic/transports#39] no GET stream here: 405
            raise _HttpError(405, "Method Not Allowed: this server offers no GET stream")
        # Decision: the standalone stream has one connection at a time; a new GET takes it
        # over and the older connection ends (it may be a client that vanished unnoticed).
        # [basic/transports#47] so no message is ever sent on two streams.
        sse = session.get_stream or session.new_stream(None, standalone=True)
        session.get_stream = sse
        sse.push(None)  # an earlier connection ends here: what follows is this one's
        first = []
        if _primes(session.protocol_version):
            first.append(session.emit(sse, "", retry=self.config.retry_ms))
        while session.pending_unrelated:
            first.append(session.emit(sse, session.pending_unrelated.popleft().decode("utf-8")))
        session.pending_unrelated_bytes = 0
        # (the queued messages are written directly, not through the listener's bounded buffer)
        listener = sse.attach(self.config, req.scope)
        await self._stream_sse(conn, stream, session, sse, listener, {}, replay=first, watch=True)

    # -- DELETE ---------------------------------------------------------------------------------------

    async def _delete(self, conn: h11.Connection, stream: trio.abc.Stream, req: _Request) -> None:
        if (req.header(MCP_SESSION_ID) is None or not self._serves_legacy()) and self._serves_modern():
            # [2026-07-28:basic/transports/streamable-http#72] no session to end: 405
            raise _HttpError(405, "Method Not Allowed: no sessions in 2026-07-28")
        session = self._session_for(req)
        session.scope.cancel(reason="session deleted by the client")
        # [basic/transports#63] the client ends the session (we never refuse with a 405): its
        # requests are cancelled, its streams end -- transports#session-management
        await session.aclose()
        self._forget(session)
        await self._respond(conn, stream, 200)


#: addresses that bind every interface: no client sends them as its Host
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def default_allowed_hosts(host: str) -> list[str]:
    """[basic/transports#9] the Host names a server bound to ``host`` accepts when no
    ``allowed_hosts`` is given: the loopback names, and the bound address itself when
    that is a particular one (a server on every interface, ``0.0.0.0``, is reached by
    name or address through ``allowed_hosts`` only: DNS rebinding protection cannot
    guess the names its clients use).

    >>> default_allowed_hosts("0.0.0.0")
    ['127.0.0.1', 'localhost', '::1']
    >>> default_allowed_hosts("192.0.2.7")
    ['127.0.0.1', 'localhost', '::1', '192.0.2.7']
    """
    loopback = list(LOOPBACK_HOSTS[:3])
    return loopback if host in WILDCARD_HOSTS or host in loopback else [*loopback, host]


async def serve_http(
    server: Servable,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    config: HttpConfig | None = None,
    ssl_context: ssl.SSLContext | None = None,
    auth: "ProtectedResource | None" = None,
    task_status: trio.TaskStatus[HttpServerInfo] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """Serve ``server`` over Streamable HTTP until cancelled, or until
    ``await info.aclose(grace)`` on the :class:`HttpServerInfo` it starts with
    (a graceful shutdown; see :meth:`_HttpServer.shutdown`).

    [basic/transports#12] binds 127.0.0.1 by default. ``options`` are
    :class:`HttpConfig` fields (``path``, ``allowed_origins``, ``json_response`` ...).
    With ``ssl_context`` (a server-side ``ssl.SSLContext`` holding the
    certificate) every connection speaks TLS and the URL is ``https://``.

    With ``auth`` (basic/authorization) the server is an OAuth resource
    server: every request to the endpoint needs a valid bearer token for this
    resource, and the metadata document is published at the well-known URL.
    An ``auth`` without ``resource`` takes the URL served as its resource.
    """
    if ssl_context is not None and not isinstance(ssl_context, ssl.SSLContext):
        raise TypeError(f"ssl_context must be an ssl.SSLContext, not {type(ssl_context).__name__}")
    cfg = config or HttpConfig(**options)
    async with trio.open_nursery() as nursery:
        http = _HttpServer(server, cfg, nursery, host, auth)
        listeners = await nursery.start(http.accept, port, ssl_context)
        bound = listeners[0].socket.getsockname()
        # a server on every interface is reached locally through loopback (whose names it accepts)
        shown = host if host not in WILDCARD_HOSTS else ("::1" if host == "::" else "127.0.0.1")
        url_host = f"[{shown}]" if ":" in shown else shown
        scheme = "http" if ssl_context is None else "https"
        info = HttpServerInfo(host=host, port=bound[1], url=f"{scheme}://{url_host}:{bound[1]}{cfg.path}", server=http)
        if auth is not None and auth.resource is None:
            # (before anything is served: no request can come before the server is started)
            http.auth = attrs.evolve(auth, resource=info.url)
        nursery.start_soon(http.expire_idle)
        log.info("MCP Streamable HTTP endpoint at %s", info.url)
        task_status.started(info)
        await trio.sleep_forever()
