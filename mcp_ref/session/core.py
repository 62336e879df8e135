"""The trio runtime around one :class:`~mcp_ref.connection.Connection`.

DESIGN.md section 4. One :class:`Session` per connection, owned by exactly one
nursery (:func:`session_scope`); nothing it starts outlives it.

* The receive loop is the only caller of ``Connection.receive_message``. It
  dispatches events synchronously, so facts are applied in arrival order: a
  response never overtakes progress that arrived before it, and a cancellation
  processed before a handler's result suppresses that result.
* One task and one CancelScope per incoming request; a peer's
  ``notifications/cancelled`` cancels that scope with the given reason.
* Outgoing requests all go through :meth:`Session.request`, which runs in the
  caller's task: it sends, waits with an idle deadline that progress may push
  forward (never past the maximum), and on timeout, caller cancellation or a
  progress-callback error sends ``notifications/cancelled`` under a shielded
  scope with a short grace deadline.
* Writes go through one ``trio.StrictFIFOLock``.
* The ``mcp_ref.wire`` logger traces every message written and read, at DEBUG.
* On EOF every pending request fails with :class:`ConnectionClosed`.
"""

import functools
import heapq
import inspect
import itertools
import logging
import math
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, Protocol

import attrs
import trio

from ..basic.jsonrpc import dumps
from ..basic.lifecycle import Phase
from ..basic.rate_limit import TokenBucket
from ..basic.transports._nursery import block_nursery
from ..basic.transports._parking import ParkedSend, ParkingQueue
from ..basic.utilities import ping as ping_rules
from ..basic.utilities.cancellation import refusal
from ..basic.utilities.progress import HOLD_FIRST, SEND, ProgressCallback, ProgressPace
from ..connection import Connection
from ..errors import (
    ConnectionClosed,
    DecodeError,
    ErrorCode,
    HTTPTransportError,
    InvalidAnswer,
    InvalidCallbackAnswer,
    LocalProtocolError,
    MCPError,
    MCPRefError,
    MessageTooLarge,
    ProtocolError,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
)
from ..events import (
    CancellationIgnored,
    CancellationReceived,
    ErrorReceived,
    ErrorWithoutId,
    Event,
    Initialized,
    InvalidResponse,
    LateResponseIgnored,
    MessageRejected,
    NotificationIgnored,
    NotificationReceived,
    ProgressIgnored,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    UnknownResponse,
    VersionRejected,
)
from ..schema._base import LATEST_LEGACY_REVISION, install_model_methods
from ..schema._converter import converter_for
from ..schema.jsonrpc import ProgressToken, RequestId
from ..schema.tasks import CancelTaskRequestParams
from ..server.utilities.logging import LogRateLimiter, passes
from .telemetry import tracing

__all__ = [
    "PendingRequest",
    "Session",
    "SessionConfig",
    "RequestContext",
    "RequestHandler",
    "NotificationHandler",
    "ProgressCallback",
    "session_scope",
    "check_async",
    "check_encodable",
]

if TYPE_CHECKING:
    from ..basic.authorization.resource_server import AccessToken, Principal
    from ..schema.elicitation import ElicitResult
    from ..schema.tasks import ListTasksResult
    from .task_requestor import TaskHandle

log = logging.getLogger("mcp_ref.session")
#: every message a session writes ("client -> {...}") or reads ("server <- {...}"), at DEBUG
wire = logging.getLogger("mcp_ref.wire")

#: what encoding a message we were given can raise: the engine refuses it
#: (LocalProtocolError) or a value in it has no JSON form
_ENCODE_FAILURES = (LocalProtocolError, TypeError, ValueError, OverflowError)


class RequestHandler(Protocol):
    def __call__(self, ctx: "RequestContext", params: Any, /) -> Awaitable[Any]: ...


NotificationHandler = Callable[["Session", Any], Awaitable[None]]


class FirstMessageHook(Protocol):
    """(server, one channel) How the first messages choose the era (see ``Session._opening``)."""

    async def serve_modern(self, data: bytes) -> str | None:
        """Serve the channel in the modern era if ``data`` opens it so (returns why it ended); else None."""

    def decides(self, data: bytes) -> bool:
        """Whether ``data``, handled in the legacy era, settles that era (a request does)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SessionConfig:
    """Timeouts and limits of a session (seconds; ``math.inf`` disables).

    ``request_timeout``: idle timeout of an outgoing request (basic/lifecycle#17);
    ``max_request_timeout``: the cap that progress can never extend (#21);
    ``progress_resets_timeout``: progress for a request pushes its idle deadline (#20);
    ``cancel_grace``: how long the shielded send of a cancellation may take;
    ``max_concurrent_requests``: incoming requests handled at once (ping is exempt);
    ``keepalive_interval``: send a ping this often once initialised (None: never,
    basic/utilities/ping#3, #4), each waiting ``keepalive_timeout``; after
    ``keepalive_max_failures`` failures in a row the session closes (ping#7, #8);
    ``progress_min_interval``: our handlers' progress notifications are sent at
    most this often per request (progress#13); a value that reaches ``total``
    always goes out. With ``progress_coalesce`` (the default) the newest value
    reported inside the interval is held and sent when the interval ends or just
    before the response, so the requestor always sees the latest state; without
    it, values inside the interval are dropped.
    ``log_rate`` / ``log_burst``: (server side) at most ``log_rate`` log messages
    per second on average, in bursts of up to ``log_burst``, per session
    (server/utilities/logging#4); None (the default) sends every message.
    ``request_rate_limits``: incoming requests of a method, per session, at most
    ``rate`` a second on average in bursts of ``burst`` (``{"tools/call": (5.0,
    10)}``); over it a request is refused at once with -32600 and never
    reaches its handler (server/tools#20 for tool calls; client/sampling#17 and
    client/elicitation#39 for what a server asks a client). Empty by default.
    ``eof_grace``: when the peer ends its output stream, requests still being
    handled may finish for this long (their responses still go out, as do
    replies to pings and to bad messages) before they are cancelled; 0
    cancels them at once (``Server.serve_stdio`` sets it).

    Backpressure (the receive loop stops reading the peer while it is this far
    behind, so a peer cannot grow our memory without bound):
    ``max_pending_replies``: replies not yet written (to pings, to bad messages,
    handlers' responses) -- a peer that does not read our output is not read
    either; if none of them can be written for ``reply_stall_timeout`` seconds
    the session closes (the peer stopped reading, or both sides wait on each
    other); ``max_queued_requests``: requests waiting for one of the
    ``max_concurrent_requests`` slots; ``max_queued_notifications``:
    notifications (and task progress) waiting for their handler.
    """

    request_timeout: float = 60.0
    max_request_timeout: float = 600.0
    progress_resets_timeout: bool = True
    cancel_grace: float = 5.0
    max_concurrent_requests: int = 1000
    keepalive_interval: float | None = None  # [basic/utilities/ping#6] off unless asked for: no excess pinging
    keepalive_timeout: float = 10.0
    keepalive_max_failures: int = 3
    progress_min_interval: float = 0.0
    progress_coalesce: bool = True
    log_rate: float | None = None
    log_burst: int = 10
    request_rate_limits: Mapping[str, tuple[float, int]] = attrs.field(factory=dict)
    eof_grace: float = 0.0
    max_pending_replies: int = 100
    reply_stall_timeout: float = 60.0
    max_queued_requests: int = 1000
    max_queued_notifications: int = 1000
    #: OpenTelemetry (the ``otel`` extra, :mod:`mcp_ref.session.telemetry`): None, the global
    #: tracer provider when ``opentelemetry-api`` is installed; False, no spans; or a
    #: ``TracerProvider`` of your own
    telemetry: Any = None

    def __attrs_post_init__(self) -> None:
        for name in ("request_timeout", "max_request_timeout", "cancel_grace", "keepalive_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        if self.max_concurrent_requests < 1:
            raise ValueError("max_concurrent_requests must be at least 1")
        if self.keepalive_interval is not None and not self.keepalive_interval > 0:
            raise ValueError("keepalive_interval must be positive (or None)")
        if self.keepalive_max_failures < 1:
            raise ValueError("keepalive_max_failures must be at least 1")
        if self.progress_min_interval < 0:
            raise ValueError("progress_min_interval must not be negative")
        if self.log_rate is not None and not self.log_rate > 0:
            raise ValueError("log_rate must be positive (or None)")
        if self.log_burst < 1:
            raise ValueError("log_burst must be at least 1")
        for method, limit in self.request_rate_limits.items():
            if method == "ping" or not (isinstance(limit, tuple) and len(limit) == 2):
                raise ValueError(f"request_rate_limits[{method!r}] must be (rate, burst), and ping is never limited")
            TokenBucket(*limit)  # a positive rate and a burst of at least 1
        if not 0 <= self.eof_grace < math.inf:
            raise ValueError("eof_grace must be a finite number >= 0")
        for name in ("max_pending_replies", "max_queued_requests", "max_queued_notifications"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not self.reply_stall_timeout > 0:
            raise ValueError("reply_stall_timeout must be positive")


@attrs.frozen(repr=False, eq=False)
class _Closed:
    reason: str


class _TimedOut:
    """Put in a request's inbox by the session's timer when its deadline passed."""


_TIMED_OUT = _TimedOut()


@attrs.frozen(repr=False, eq=False)
class _Cancelled:
    reason: str | None


@attrs.frozen(repr=False, eq=False)
class _Failed:
    """Put in a request's inbox when the transport failed it (:meth:`Session._exchange_failed`)."""

    error: HTTPTransportError


@attrs.frozen(kw_only=True, repr=False, eq=False)
class _Probe:
    """Stands in for request params when asking which capability they would need."""

    mode: str | None = None
    tools: list[Any] | None = None
    tool_choice: None = None
    include_context: str | None = None


def typed_input(method: str, params: Any) -> Any:
    """The params of a request a handler makes of the client (``ctx.elicit``, ``ctx.sample``,
    ``ctx.request``) as the model's class.

    Application code may pass either the model object or a mapping in the wire's form (as
    the spec's examples write it); the mapping is decoded here, so both eras take the same
    forms and every check that follows sees typed params. A mapping that does not decode is
    bad use of the API: LocalProtocolError (-32602), before anything is sent or asked.
    """
    if not isinstance(params, Mapping) or method not in _INPUT_METHODS:
        return params
    from ..schema import decode
    from ..schema import messages as m

    try:
        return decode(dict(params), m.PARAMS_TYPES[method])
    except DecodeError as e:
        raise LocalProtocolError(f"{method}: params that do not decode: {e}", ErrorCode.INVALID_PARAMS) from None


#: the requests a server makes of the client while handling one (input requests in 2026-07-28)
_INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})


def typed_notification(method: str, params: Any) -> Any:
    """The params of ``ctx.notify("notifications/message" | "notifications/progress", ...)`` as
    the model's class: a mapping in the wire's form is decoded (a progress mapping needs no
    ``progressToken``: the request's own is used). Anything else is bad use of the API:
    LocalProtocolError (-32602), before anything is sent."""
    from ..schema import decode
    from ..schema import messages as m

    cls = m.PARAMS_TYPES[method]
    if isinstance(params, cls):
        return params
    if not isinstance(params, Mapping):
        raise LocalProtocolError(
            f"{method} takes {cls.__name__} or a mapping, not {type(params).__name__}", ErrorCode.INVALID_PARAMS
        )
    wire = {"progressToken": 0, **params} if method == "notifications/progress" else dict(params)
    try:
        return decode(wire, cls)
    except DecodeError as e:
        raise LocalProtocolError(f"{method}: params that do not decode: {e}", ErrorCode.INVALID_PARAMS) from None


class RequestContext:
    """What a request handler gets: the request, progress, and the session.

    Explicit, never a contextvar: ``ctx.session`` sends nested requests to the
    peer, ``await ctx.progress(...)`` reports progress (a no-op when the
    requestor asked for none), ``ctx.cancel_scope`` is the scope the peer's
    cancellation cancels.
    """

    def __init__(
        self, session: "Session", request_id: RequestId, method: str, message: Any, cancel_scope: trio.CancelScope
    ) -> None:
        #: the session the request came on: nested requests and notifications go through it
        self.session = session
        #: the request's JSON-RPC id, as the peer sent it
        self.request_id = request_id
        #: the request's method
        self.method = method
        #: the request as received
        self.message = message
        #: the request's params, decoded (a model object, or None)
        self.params = message.params
        #: the cancel scope the handler runs in: a cancellation from the peer cancels it
        self.cancel_scope = cancel_scope
        #: the rate limit of this request's progress (made at the first report)
        self._pace: ProgressPace | None = None

    @property
    def revision(self) -> str:
        """The protocol revision this request is served in (the session's negotiated one)."""
        return self.session.connection.revision

    @property
    def client_capabilities(self) -> Any:
        """What the client declared (at initialize; a 2026-07-28 request: in its own ``_meta``)."""
        return self.session.connection.peer_capabilities

    @property
    def client_info(self) -> Any:
        """The client's name and version, as it gave them (None if it did not)."""
        return self.session.connection.peer_info

    @functools.cached_property
    def state(self) -> dict[str, Any]:
        """A small JSON object of the handler's own. In a 2026-07-28 request it survives the
        rounds of a multi round-trip request (it travels sealed in ``requestState``);
        in a session it lives as long as the request."""
        return {}

    @property
    def progress_dropped(self) -> int:
        """Progress values never sent because of ``progress_min_interval``."""
        return self._pace.dropped if self._pace is not None else 0

    @property
    def meta(self) -> dict[str, Any]:
        """A copy of the request's ``_meta`` (empty when it has none)."""
        return dict(getattr(self.params, "meta", None) or {})

    @property
    def progress_token(self) -> ProgressToken | None:
        """The progress token the caller gave, or None: ``ctx.progress(...)`` sends nothing without one."""
        tok = self.meta.get("progressToken")
        return tok if type(tok) in (str, int) else None

    @property
    def auth(self) -> "AccessToken | None":
        """The verified access token this request came with (basic/authorization).

        Set when the server is protected (``serve_http(server, auth=...)``):
        who the user is (``subject``), the client, the scopes. None otherwise
        (stdio, in memory, HTTP without auth). It never holds the token itself
        (basic/authorization#105): there is nothing to pass on.
        """
        auth_for = getattr(self.session.channel, "auth_for", None)
        return auth_for(self.request_id) if auth_for is not None else None

    @property
    def task_augmented(self) -> bool:
        """Whether this request asked for a task *and* we declared support for it.

        Without the capability the task metadata is ignored (tasks#task-support-and-handling).
        """
        req = self.session.connection.incoming(self.request_id)
        return bool(req is not None and req.task)

    async def request_task(self, method: str, params: Any, *, ttl: int | None = None, **options: Any) -> "TaskHandle":
        """Send a task-augmented request to the peer (e.g. sampling); returns its handle."""
        from .task_requestor import start_task  # (the requestor side of tasks loads on first use)

        return await start_task(self.session, method, params, ttl=ttl, related_request_id=self.request_id, **options)

    async def list_tasks(self, cursor: str | None = None, **options: Any) -> "ListTasksResult":
        """``tasks/list`` to the peer: one page of the tasks it runs for us."""
        from .task_requestor import list_tasks

        return await list_tasks(self.session, cursor, related_request_id=self.request_id, **options)

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress; raises LocalProtocolError if it does not increase.

        A no-op when the requestor asked for no progress; LocalProtocolError
        once the request is answered. Rate limited by
        ``SessionConfig.progress_min_interval`` (coalesced or dropped, see
        ``progress_coalesce``).
        """
        session = self.session
        conn = session.connection
        req = conn.incoming(self.request_id)
        if req is None or req.state != "running":
            # [basic/utilities/progress#14] nothing after the response (or the peer's cancellation)
            raise LocalProtocolError(f"request {self.request_id!r} is not in flight: no progress after completion")
        # [basic/utilities/progress#8] no token: no notification -- progress#behavior-requirements
        if req.progress_token is None:
            return
        pace = self._pace
        if pace is None:
            config = session.config
            if not config.progress_min_interval:
                # no rate limit: every value goes through the engine, which checks it (progress#4)
                data = conn.send_progress(self.request_id, progress, total, message)
                if data is not None:
                    await session.send_raw(data, self.request_id)
                return
            pace = self._pace = ProgressPace(config.progress_min_interval, config.progress_coalesce)
        now = trio.current_time()
        # [basic/utilities/progress#8] at the frequency we choose (the session's rate limit)
        decision = pace.offer(progress, total, message, now)
        if decision == SEND:
            await self._send_progress(pace, progress, total, message, now)
        elif decision == HOLD_FIRST:
            # [basic/utilities/progress#13] the newest value goes out when the interval ends
            session._nursery.start_soon(self._flush_progress_at, pace.flush_at)

    async def _send_progress(
        self, pace: ProgressPace, progress: float, total: float | None, message: str | None, now: float
    ) -> None:
        # the engine builds the notification (Connection.send_progress: progress#progress-flow)
        data = self.session.connection.send_progress(self.request_id, progress, total, message)
        pace.sent(progress, now, data is not None)
        if data is not None:
            await self.session.send_raw(data, self.request_id)

    async def flush_progress(self) -> None:
        """Send the progress value held back by the rate limit, if any (before the response)."""
        pace = self._pace
        held = pace.take_held() if pace is not None else None
        if held is None:
            return
        assert pace is not None
        req = self.session.connection.incoming(self.request_id)
        if req is None or req.state != "running":
            return
        pace.dropped -= 1
        await self._send_progress(pace, *held, trio.current_time())

    async def _flush_progress_at(self, when: float) -> None:
        await trio.sleep_until(when)
        try:
            await self.flush_progress()
        except ConnectionClosed:
            pass  # the session is ending: nothing left to report to

    async def request(self, method: str, params: Any = None, **options: Any) -> Any:
        """A request to the peer made while handling this one (e.g. sampling from a tool).

        Transports that route by request keep it with this request's stream.
        """
        params = typed_input(method, params)
        return await self.session.request(method, params, related_request_id=self.request_id, **options)

    async def notify(self, method: str, params: Any = None) -> None:
        """A notification tied to this request.

        ``notifications/message`` goes as :meth:`log` does (the client's level and the rate
        limit apply) and ``notifications/progress`` as :meth:`progress` (this request's
        token), in a 2025 session as in a 2026-07-28 request; their params may be the model
        object or a mapping in the wire's form.
        """
        if method == "notifications/message":
            message = typed_notification(method, params)
            await self.log(message.level, message.data, message.logger)
        elif method == "notifications/progress":
            report = typed_notification(method, params)
            await self.progress(report.progress, report.total, report.message)
        else:
            await self._notify(method, params)

    async def _notify(self, method: str, params: Any) -> None:
        """Send a notification tied to this request as it is (the hook a task's context routes)."""
        await self.session.notify(method, params, related_request_id=self.request_id)

    async def sample(self, params: Any, *, key: str | None = None, **options: Any) -> Any:
        """sampling/createMessage to the client (needs its ``sampling`` capability).

        ``key``: the name of this input request in a 2026-07-28 request (see
        :meth:`elicit`); a session sends a real request and ignores it.

        Messages that break the tool use rules raise LocalProtocolError before
        anything is sent; a result that ignores ``toolChoice`` raises
        :class:`~mcp_ref.errors.InvalidAnswer` (a RemoteProtocolError), in both eras.
        """
        from ..client.sampling import sampling_messages_problem, sampling_result_problem, tool_results_problem
        from ..schema.sampling import CreateMessageRequestParams, CreateMessageResult

        params = typed_input("sampling/createMessage", params)
        if isinstance(params, CreateMessageRequestParams):
            problem = sampling_messages_problem(params) or tool_results_problem(params)
            if problem is not None:
                # [client/sampling#19] the server answers tool uses properly before sending
                raise LocalProtocolError(f"sampling request: {problem}", ErrorCode.INVALID_PARAMS)
        result = await self.request("sampling/createMessage", params, **options)
        if isinstance(result, CreateMessageResult):
            problem = sampling_result_problem(params, result)
            if problem is not None:
                raise InvalidAnswer(f"the client's sampling result: {problem}")
        return result

    async def elicit(self, params: Any, *, key: str | None = None, **options: Any) -> Any:
        """elicitation/create to the client (form or URL mode, as the params say).

        In a session this is a request to the client. In a 2026-07-28 request it is
        an input request of a multi round-trip request: the handler stops, the
        client is asked, and the handler runs again with the answer; ``key`` names
        the input request (by default ``elicitation-1``, ``elicitation-2`` ... in the
        order the handler asks).

        An accepted form answer that does not fit the requested schema raises
        :class:`~mcp_ref.errors.InvalidAnswer` (a RemoteProtocolError, -32602) with the problems,
        in both eras. A person answers, so
        unless ``timeout`` is given the wait is the session's cap
        (``max_request_timeout``), not the idle ``request_timeout``.
        """
        from ..client.elicitation import check_elicit_answer
        from ..schema.elicitation import ElicitRequestURLParams

        options.setdefault("timeout", self.session.config.max_request_timeout)
        params = typed_input("elicitation/create", params)
        if isinstance(params, ElicitRequestURLParams) and params.elicitation_id is None:
            # [client/elicitation#12] a URL elicitation written for 2026-07-28 (which has no id) runs
            # in a 2025 session too, with a unique id of its own (give one to complete it later)
            params = attrs.evolve(params, elicitation_id=secrets.token_urlsafe(16))
        result = await self.request("elicitation/create", params, **options)
        return check_elicit_answer(params, result)

    async def elicit_form(
        self,
        message: str,
        properties: Mapping[str, Any],
        *,
        required: Sequence[str] | None = None,
        **options: Any,
    ) -> "ElicitResult":
        """Ask the user to fill in a form (elicitation/create, form mode).

        ``properties`` are the form's fields as JSON Schemas of the flat kinds
        client/elicitation allows (string, number, integer, boolean, enums),
        e.g. ``{"name": {"type": "string"}, "age": {"type": "integer"}}``, or the
        whole requested schema (``{"type": "object", "properties": {...}}``,
        taken as it is, ``required`` included); ``required`` names the fields
        the user must fill in (default: those without a ``"default"``).
        Returns the :class:`~mcp_ref.schema.ElicitResult`:
        ``action`` is "accept" (with ``content``), "decline" or "cancel".
        ValueError, before anything is sent, for a field the form mode cannot
        ask for; :class:`~mcp_ref.CapabilityMissing` if the client cannot
        elicit (``can_elicit()`` says so first). Options as for :meth:`elicit`.
        """
        from ..schema import decode
        from ..schema.elicitation import ElicitationRequestedSchema, ElicitRequestFormParams

        whole: dict[str, Any] = {"type": "object"}
        if properties.get("type") == "object" and isinstance(properties.get("properties"), Mapping):
            # a whole object schema (the wire's requestedSchema) rather than its properties: as unambiguous
            # (a field's schema is a mapping, never the string "object"), so taken as that
            whole = dict(properties)
            if required is not None and "required" in whole:
                raise ValueError("elicit_form: `required` given twice, in the schema and as an argument")
            # taken as it is: without "required" no field is (JSON Schema's reading)
            required = whole.pop("required", [] if required is None else required)
            properties = whole.pop("properties")
        fields: dict[str, dict[str, Any]] = {}
        for name, field_schema in properties.items():
            if not isinstance(field_schema, Mapping):
                raise ValueError(
                    f"elicit_form: field {name!r} is {field_schema!r}, not a JSON Schema object; pass the form's "
                    'fields ({"name": {"type": "string"}, ...}) or a whole {"type": "object", "properties": {...}} '
                    "schema"
                )
            fields[name] = dict(field_schema)
        if required is None:
            required = [name for name, schema in fields.items() if "default" not in schema]
        try:
            schema = decode({**whole, "properties": fields, "required": list(required)}, ElicitationRequestedSchema)
        except DecodeError as e:
            # the form mode asks for flat primitive fields only (client/elicitation#requested-schema)
            raise ValueError(f"elicit_form: not a form the client can show: {e}") from None
        result: ElicitResult = await self.elicit(
            ElicitRequestFormParams(message=message, requested_schema=schema), **options
        )
        return result

    def can_elicit(self, mode: Literal["form", "url"] = "form") -> bool:
        """Whether the client declared elicitation in ``mode`` (client/elicitation#capabilities)."""
        return self.session.connection.capability_problem("elicitation/create", _Probe(mode=mode)) is None

    def can_sample(self, *, tools: bool = False, context: bool = False) -> bool:
        """Whether the client declared sampling (with ``tools`` / ``context`` inclusion if asked)."""
        probe = _Probe(tools=[] if tools else None, include_context="thisServer" if context else None)
        return self.session.connection.capability_problem("sampling/createMessage", probe) is None

    async def list_roots(self, *, key: str | None = None, **options: Any) -> Any:
        """roots/list to the client (needs its ``roots`` capability; ``key``: see :meth:`elicit`)."""
        return await self.request("roots/list", None, **options)

    async def ask_all(self, requests: Mapping[str, tuple[str, Any]]) -> dict[str, Any]:
        """Several requests to the client: ``{key: (method, params)}`` with method
        ``elicitation/create``, ``sampling/createMessage`` or ``roots/list``; returns
        ``{key: result}``. In a 2026-07-28 request every one the client has not
        answered yet goes in one InputRequiredResult; in a session they are sent
        one after the other."""
        return {key: await self._ask_one(method, params, key) for key, (method, params) in requests.items()}

    async def _ask_one(self, method: str, params: Any, key: str) -> Any:
        if method == "elicitation/create":
            return await self.elicit(params, key=key)
        if method == "sampling/createMessage":
            return await self.sample(params, key=key)
        if method == "roots/list":
            return await self.list_roots(key=key)
        raise LocalProtocolError(f"{method} is not a request a server makes of a client while handling one")

    async def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send a log message about this request if the client's level lets it through.

        Returns whether it was sent: the level passes the client's minimum and
        the session's ``log_rate`` limit allows it (server/utilities/logging).
        """
        from ..schema.logging import LoggingMessageNotificationParams
        from ..server.utilities.logging import check_level

        params = LoggingMessageNotificationParams(level=check_level(level), data=data, logger=logger)
        if not self.session.log_allowed(level):
            return False
        await self._notify("notifications/message", params)
        return True


class _Inbox(ParkingQueue[Any]):
    """What arrives for one of our requests (progress, then the answer), in order.

    The receive loop puts without ever blocking; the requesting task takes. A
    deque and at most one parked task: a memory channel per request would do
    the same with two objects and a state more (measured in bench W1/W4).
    """

    __slots__ = ()

    #: items kept; past it, progress is coalesced into the newest (a peer flooding progress
    #: for one of our requests, whose caller's callback is slow, costs bounded memory)
    MAX_ITEMS = 1000

    def put(self, item: Any) -> None:
        items = self._items
        if len(items) >= self.MAX_ITEMS and type(item) is ProgressReceived and type(items[-1]) is ProgressReceived:
            # [basic/utilities/progress] the latest value stands for the ones it overtook
            items[-1] = item
            return
        items.append(item)
        self._wake()

    def answer_nowait(self) -> Any:
        """The answer if it is already here (progress before it is skipped), else None."""
        for item in self._items:
            if type(item) is not ProgressReceived and item is not _TIMED_OUT:
                return item
        return None


class PendingRequest:
    """One of our requests in flight.

    ``await result()`` waits for the answer (at most once); ``await
    cancel(reason)`` gives up on it explicitly: the peer is told
    (``notifications/cancelled``) and a waiting ``result()`` raises
    :class:`RequestCancelled`.
    """

    def __init__(
        self,
        session: "Session",
        rid: RequestId,
        method: str,
        inbox: _Inbox,
        progress: ProgressCallback | None,
        idle: float,
        cap: float,
        related: RequestId | None = None,
    ) -> None:
        #: the session the request went out on
        self.session = session
        #: the id of the peer's request this one was sent for (nested requests), if any
        self.related = related
        #: the request's JSON-RPC id
        self.id = rid
        #: the request's method
        self.method = method
        self._inbox = inbox
        self._progress = progress
        self._idle = idle
        self._cap = cap
        now = trio.current_time()
        self._hard_deadline = now + cap
        #: when the session's timer gives up on us (idle deadline, never past the cap)
        self.deadline = now + idle if idle < cap else self._hard_deadline
        #: not yet timed out, answered or given up: the timer skips the others
        self.waiting = True

    # (class attributes: what every request starts with, set on the instance when it changes)
    #: ``result()`` was awaited
    _waited = False
    #: counted in the session's live timeouts (until result() ends or the request is dropped)
    armed = False
    #: the scope of the initial send, while it runs (or the write waiting for room in
    #: the transport, see Session._write): the timer cancels it at the deadline
    send_scope: trio.CancelScope | ParkedSend | None = None
    #: the transport was given the request: the peer may have it even if the send
    #: did not finish (a torn stdio line, an HTTP POST waiting for its answer)
    handed_over = False

    def _timeout(self, outcome: str = "request cancelled") -> RequestTimeout:
        kind = "maximum" if trio.current_time() >= self._hard_deadline else "idle"
        return RequestTimeout(self.method, self._idle if kind == "idle" else self._cap, kind, outcome=outcome)

    async def result(self) -> Any:
        """Wait for the answer: the result, or the error the request ended with (MCPError, RequestTimeout,
        ConnectionClosed ...).
        """
        if self._waited:
            raise RuntimeError("result() can be awaited only once")
        self._waited = True
        session = self.session
        item = None
        try:
            if self._progress is None:
                # without a progress callback the session's timer alone ends the wait
                item = await self._answer(None)
            else:
                # Progress callbacks run here, in the caller's task: their exceptions reach
                # the caller. A slow one cannot hold the caller past the maximum timeout:
                # the wait runs under a scope with that deadline, one per request rather
                # than one per callback (a CancelScope with a deadline cost more than the
                # rest of the delivery of a notification, bench W4).
                with trio.CancelScope(deadline=self._hard_deadline):
                    item = await self._answer(self._progress)
            if type(item) is ResponseReceived:
                return item.result
            if item is not None:
                return session._outcome(item, self.method)
            # the timer gave up on us, or the maximum passed (in a callback or while waiting)
            if session.connection.outgoing(self.id) is None:
                # the answer came in the instant the maximum passed: the receive loop
                # has already put it in the inbox (dispatch is synchronous); take it
                answer = self._inbox.answer_nowait()
                if answer is not None:
                    return session._outcome(answer, self.method)
            self.waiting = False
            raise await self._time_out()
        except BaseException as exc:
            self.waiting = False
            await self._give_up(exc)
            raise
        finally:
            self._drop_timeout()
            session._waiters.pop(self.id, None)

    async def _answer(self, callback: ProgressCallback | None) -> Any:
        """The answer from the inbox, progress before it given to ``callback``; None
        when the session's timer gave up on us."""
        session = self.session
        idle, hard = self._idle, self._hard_deadline
        while True:
            item = await self._inbox.receive()
            if type(item) is ProgressReceived:
                if session.config.progress_resets_timeout:
                    # [basic/lifecycle#20, #21] progress pushes the idle deadline, never past the cap
                    self.deadline = min(trio.current_time() + idle, hard)
                if callback is not None:
                    await callback(item.progress, item.total, item.message)
                continue
            if item is _TIMED_OUT:
                if session.connection.outgoing(self.id) is None:
                    # the answer came in the same instant, right behind the timer:
                    # it is (or is about to be) next in the inbox, take it
                    continue
                return None
            return item

    async def _time_out(self) -> RequestTimeout:
        timeout = self._timeout()
        why = f"timed out after {timeout.timeout:g}s ({timeout.kind} timeout)"
        # [basic/lifecycle#18] on our timeout: cancel (saying why), stop waiting, tell the caller -- lifecycle#timeouts
        not_told = await self.session._abandon(self.id, why, self.related)
        if not_told:
            timeout = self._timeout(f"stopped waiting, no cancellation sent ({not_told})")
        return timeout

    async def cancel(self, reason: str | None = None) -> None:
        """Cancel this request (LocalProtocolError for initialize and task-augmented requests)."""
        session = self.session
        out = session.connection.outgoing(self.id)
        if out is None:
            return  # already answered, timed out or cancelled
        if refusal(out.method, out.task) is not None:
            session.connection.send_cancel(self.id, reason)  # raises the precise LocalProtocolError
        # [basic/transports#35] cancelling sends notifications/cancelled, on every transport
        await session._abandon(self.id, reason or "cancelled by the requestor", self.related)
        waiter = session._waiters.get(self.id)
        if waiter is not None:
            waiter.put(_Cancelled(reason))
        if not self._waited:
            self._drop_timeout()

    async def _give_up(self, exc: BaseException) -> None:
        """The wait ended other than by an answer or our own timer: the caller's cancel
        scope (a Trio timeout such as ``fail_after``), an error, or KeyboardInterrupt."""
        if self.session.connection.outgoing(self.id) is not None:
            # [basic/lifecycle#18] a timeout the caller set with a cancel scope cancels the request
            # too (our own timer's has been sent by _time_out, and the request is no longer
            # outgoing here) -- lifecycle#timeouts
            await self.session._abandon(self.id, _reason_for(exc), self.related)
        self.session._waiters.pop(self.id, None)

    def _drop_timeout(self) -> None:
        self.waiting = False
        self.session._disarm_timeout(self)

    def _unsent(self) -> None:
        """The transport never got the request: forget it here, tell the peer nothing."""
        self._drop_timeout()
        session = self.session
        # [basic/utilities/cancellation#1] the peer never saw this id: no cancellation for it
        session.connection.abandon(self.id)
        session._waiters.pop(self.id, None)


class Session:
    """The runtime of one connection. Build it with :func:`session_scope`."""

    def __init__(
        self,
        connection: Connection,
        channel: trio.abc.Channel[bytes],
        nursery: trio.Nursery,
        *,
        handlers: Mapping[str, RequestHandler] | None = None,
        notification_handlers: Mapping[str, NotificationHandler] | None = None,
        config: SessionConfig | None = None,
        first_message: "FirstMessageHook | None" = None,
    ) -> None:
        #: (server, one channel) asked about each message until a request decides the era; see
        #: :meth:`_opening`
        self._first_message = first_message
        #: the sans-IO engine of this session
        self.connection = connection
        #: the channel messages go over
        self.channel = channel
        #: this session's SessionConfig
        self.config = config or SessionConfig()
        #: the request handlers, by method
        self.handlers: dict[str, RequestHandler] = dict(handlers or {})
        # OpenTelemetry spans (None without the otel extra or a tracer provider configured
        # when the session starts: one attribute check per request)
        self._tracing = tracing(self.config.telemetry)
        #: the notification handlers, by method
        self.notification_handlers: dict[str, NotificationHandler] = dict(notification_handlers or {})
        self._nursery = nursery
        self._write_lock = trio.StrictFIFOLock()
        self._waiters: dict[RequestId, _Inbox] = {}
        self._handler_scopes: dict[RequestId, trio.CancelScope] = {}
        # each handler task takes one of max_concurrent_requests slots and gives it back:
        # a count, and a parking lot where handlers wait for a slot in arrival order, each
        # handed over by the handler that ends (what trio.Semaphore does, without its checks
        # and calls per request: bench W1)
        self._free_slots = self.config.max_concurrent_requests
        self._slot_waiters = trio.lowlevel.ParkingLot()
        self._notes_send, self._notes_recv = trio.open_memory_channel[NotificationReceived | ProgressReceived](math.inf)
        #: set once the session has ended
        self.closed = trio.Event()
        #: set once the session is initialized
        self.initialized = trio.Event()
        #: why the session ended, once it has
        self.close_reason: str | None = None
        self._send_related: Callable[[bytes, RequestId | None], Awaitable[None]] | None = getattr(
            channel, "send_related", None
        )
        #: (optional) takes a message at once or raises trio.WouldBlock, see send_raw
        self._send_nowait: Callable[[bytes], None] | None = (
            getattr(channel, "send_nowait", None) if self._send_related is None else None
        )
        #: the writes waiting for room, in order, when the transport says when it may have
        #: some (``notify_send_ready``, the in-memory channels; see _write); None: a write
        #: that must wait waits in the transport's send(), under the write lock
        self._parked: deque[ParkedSend] | None = None
        notify = getattr(channel, "notify_send_ready", None) if self._send_nowait is not None else None
        if notify is not None and notify(self._send_ready):
            self._parked = deque()
        self._soon_send, self._soon_recv = trio.open_memory_channel[tuple[str, Any, RequestId | None]](math.inf)
        #: (server side) the minimum level the client asked for with logging/setLevel
        self.log_level: str | None = None
        #: the latest responses we could not match (an error without id: the peer could
        #: not read one of our messages; a response to no request of ours)
        self.peer_faults: deque[Event] = deque(maxlen=16)
        #: incoming requests per method when ``config.request_rate_limits`` is set
        self._request_limits = {m: TokenBucket(*limit) for m, limit in self.config.request_rate_limits.items()}
        #: (server side) limits our log messages when ``config.log_rate`` is set
        self.log_limiter = LogRateLimiter(self.config.log_rate, self.config.log_burst) if self.config.log_rate else None
        #: progress callbacks of our task-augmented requests, by the creating request's id
        self.task_progress: dict[RequestId, ProgressCallback] = {}
        # request timeouts: a heap of (deadline, n, request) and one timer task,
        # not a CancelScope with a deadline per request (cheaper: bench W1, W2, W6)
        self._timeouts: list[tuple[float, int, PendingRequest]] = []
        self._timeouts_live = 0
        self._timeout_seq = itertools.count()
        self._timer_target = math.inf
        self._timer_wakeup = trio.Event()
        #: the exception a notification callback raised, which ended the session
        self.callback_error: Exception | None = None
        self._handlers_done: trio.Event | None = None  # set when the last handler ends (during eof_grace)
        self._replies = 0  # replies of the receive loop (ping, errors) not yet written
        # backpressure (see SessionConfig): what the receive loop waits on before reading more
        self._responding = 0  # handlers' responses being written
        self._queued = 0  # handlers waiting for a slot
        self._notes_queued = 0  # notifications waiting for the notification worker
        self._replies_written = 0  # replies and responses written (progress, for the stall timeout)
        self._room: trio.Event | None = None  # set when the receive loop may read again

    @property
    def routes_by_request(self) -> bool:
        """Whether the transport routes each message by the request it belongs to
        (Streamable HTTP: a stream per request); over one pipe nothing is routed."""
        return self._send_related is not None

    def log_allowed(self, level: str) -> bool:
        """(server side) A log message at ``level`` may go out now: the client's
        level lets it through and the ``log_rate`` limit allows it (which counts it)."""
        if not passes(level, self.log_level):
            return False
        limiter = self.log_limiter
        return limiter is None or limiter.allow(trio.current_time())

    # -- writing -------------------------------------------------------------------

    async def send_raw(
        self,
        data: bytes,
        related: RequestId | None = None,
        *,
        request: "PendingRequest | None" = None,
        checkpoint: bool = True,
    ) -> None:
        """Write one encoded message, serialised with every other writer.

        ``related`` names the incoming request this message belongs to (its
        response, its progress, a request made while handling it). Transports
        that route by request (Streamable HTTP) implement
        ``send_related(data, related_request_id)``; others just get ``send``.
        ``request``: the outgoing request being written, marked ``handed_over``
        once the transport has it (from then on the peer may have received it).
        ``checkpoint``: see :meth:`_send_at_once`.
        """
        if self.closed.is_set():
            raise ConnectionClosed(self.close_reason or "session closed")
        if self._parked is not None:
            if not await self._write(data, request, checkpoint=checkpoint):  # (stopped: by the session's close)
                raise ConnectionClosed(self.close_reason or "session closed")
            return
        if await self._send_at_once(data, request, checkpoint=checkpoint):
            return
        lock = self._write_lock
        try:
            # uncontended (the common case): take the lock without an extra trip
            # through the scheduler; the send itself is the checkpoint
            try:
                lock.acquire_nowait()
            except trio.WouldBlock:
                await lock.acquire()
            try:
                if request is not None:
                    # a caller cancelled already never hands the request over (no schedule point otherwise)
                    await trio.lowlevel.checkpoint_if_cancelled()
                    request.handed_over = True
                if wire.isEnabledFor(logging.DEBUG):
                    self._trace_out(data)
                if self._send_related is not None:
                    await self._send_related(data, related)
                else:
                    await self.channel.send(data)
            finally:
                lock.release()
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            self._close(f"transport closed while sending: {e!r}")
            raise ConnectionClosed(self.close_reason or "transport closed") from e

    async def _send_at_once(
        self, data: bytes, request: "PendingRequest | None" = None, *, checkpoint: bool = True
    ) -> bool:
        """Give ``data`` to a transport that can take it at once (``send_nowait``: the
        memory channels) when nobody is writing; False, with nothing sent, otherwise.

        The message goes out as the transport's send() would send it, and taking and
        releasing the write lock around it, with no schedule point between, would
        change nothing. What it avoids: send() ends with a schedule point inside the
        lock, where every concurrent writer parks on it and is woken again (bench W2:
        a task switch more per message in bursts); and a request sent this way needs
        no scope for its timeout to stop a blocked send (bench W1).

        ``checkpoint=False``: no schedule point after the message is taken, for a
        caller whose next step is one anyway (a request's wait for its answer) or
        whose task ends (a handler's response): a task step less per message (W1).
        """
        if self._send_nowait is None or self._write_lock.locked():
            return False
        if self.closed.is_set():
            raise ConnectionClosed(self.close_reason or "session closed")
        await trio.lowlevel.checkpoint_if_cancelled()
        if request is not None:
            request.handed_over = True
        try:
            self._send_nowait(data)
        except trio.WouldBlock:
            return False  # no room: the write waits for it inside the lock (send_raw)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            self._close(f"transport closed while sending: {e!r}")
            raise ConnectionClosed(self.close_reason or "transport closed") from e
        if wire.isEnabledFor(logging.DEBUG):
            self._trace_out(data)
        if checkpoint:
            await trio.lowlevel.cancel_shielded_checkpoint()
        return True

    async def _write(self, data: bytes, request: "PendingRequest | None" = None, *, checkpoint: bool = True) -> bool:
        """Write to a transport that says when it may have room (``self._parked``): at
        once when it has room and no write waits, else at the end of the queue of
        waiting writes. True once the transport has the message; False if the write was
        stopped first (``request.send_scope``: its timeout, the session's close), with
        nothing sent.

        What the write lock and a cancel scope per blocked send did, without them: the
        transport's send_nowait is all or nothing, the queue keeps the writers' order,
        a writer cancelled while it waits leaves the queue unsent, and a closed channel
        fails every waiting write (see run_receive_loop). A blocked writer parks once and
        is woken once, as in a memory channel's send (bench W2b: a burst of concurrent
        requests on a one-message buffer). ``checkpoint``: see :meth:`_send_at_once`.
        """
        parked = self._parked
        send_nowait = self._send_nowait
        assert parked is not None and send_nowait is not None
        try:
            if not parked:
                await trio.lowlevel.checkpoint_if_cancelled()
                try:
                    send_nowait(data)
                except trio.WouldBlock:
                    pass
                else:
                    if request is not None:
                        request.handed_over = True
                    if wire.isEnabledFor(logging.DEBUG):
                        self._trace_out(data)
                    if checkpoint:
                        await trio.lowlevel.cancel_shielded_checkpoint()
                    return True
            write = ParkedSend(parked, data, request)
            if request is not None:
                request.send_scope = write
            return await write.wait()
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            self._close(f"transport closed while sending: {e!r}")
            raise ConnectionClosed(self.close_reason or "transport closed") from e

    def _send_ready(self) -> None:
        """The transport may have room again (it calls this, in whichever task made the
        room, or closed it): send the waiting writes, in order, while it takes them."""
        parked = self._parked
        send_nowait = self._send_nowait
        assert parked is not None and send_nowait is not None
        while parked:
            write = parked[0]
            try:
                send_nowait(write.data)
            except trio.WouldBlock:
                return
            except Exception as e:  # (closed, broken): raised in the writer, who closes the session
                write.failed(e)
                continue
            if write.request is not None:
                write.request.handed_over = True
            if wire.isEnabledFor(logging.DEBUG):
                self._trace_out(write.data)
            write.sent()

    def _trace_out(self, data: bytes) -> None:
        wire.debug("%s -> %s", self.connection.role.value, bytes(data).decode("utf-8", "replace"))

    @property
    def principal(self) -> "Principal | None":
        """Who this session serves when the transport authenticates its requests
        (``serve_http(server, auth=...)``): the (issuer, subject, client id) of the
        token that opened it; None otherwise. Tasks are bound to it
        (basic/utilities/tasks#74)."""
        principal: Principal | None = getattr(self.channel, "principal", None)
        return principal

    def notify_soon(
        self,
        method: str,
        params: Any = None,
        *,
        related_request_id: RequestId | None = None,
        checked: bool = False,
    ) -> bool:
        """Queue a notification from synchronous code (in the trio thread).

        Written in order by the session's writer task once the session is
        initialised (so a broadcast racing the handshake is not lost). It is
        encoded then; if this session may not receive it (a capability it did
        not negotiate, e.g. a list_changed broadcast) it is skipped and logged
        at DEBUG. Params with no JSON form (NaN, a datetime) raise
        LocalProtocolError here, at the call (``checked=True``: the caller
        already ran :func:`check_encodable`). Returns False when the session
        is already closed.
        """
        if self.closed.is_set():
            return False
        if not checked:
            check_encodable(params)
        self._soon_send.send_nowait((method, params, related_request_id))
        return True

    async def _soon_writer(self) -> None:
        async for method, params, related in self._soon_recv:
            await self.initialized.wait()
            try:
                data = self.connection.send_notification(method, params)
            except LocalProtocolError as e:
                if e.code == ErrorCode.INTERNAL_ERROR:
                    log.error("cannot encode %s for this session", method, exc_info=e)
                else:
                    log.debug("not sending %s on this session: %s", method, e)
                continue
            except Exception as e:
                # checked at the call, so not expected: logged, and the session goes on
                log.error("cannot encode %s for this session", method, exc_info=e)
                continue
            await self._send_quietly(data, related)

    async def notify(self, method: str, params: Any = None, *, related_request_id: RequestId | None = None) -> None:
        """Send a notification (the engine checks phase, capability and revision)."""
        await self.send_raw(self.connection.send_notification(method, params), related_request_id)

    # -- outgoing requests: the one funnel -----------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        progress: ProgressCallback | None = None,
        progress_token: ProgressToken | None = None,
        timeout: float | None = None,
        max_timeout: float | None = None,
        related_request_id: RequestId | None = None,
    ) -> Any:
        """Send a request and wait for its result (typed per the method).

        Raises :class:`MCPError` for an error response, :class:`RequestTimeout`
        when ``timeout`` (idle; progress resets it when so configured) or
        ``max_timeout`` passes, :class:`ConnectionClosed` if the session ends.
        Abandoning it (timeout, caller cancelled, progress callback raised)
        sends ``notifications/cancelled`` (basic/lifecycle#18).
        """
        if self._tracing is not None:
            return await self._traced_request(
                method, params, progress, progress_token, timeout, max_timeout, related_request_id
            )
        pending = await self._start_request(
            method, params, progress, progress_token, timeout, max_timeout, related_request_id, wait_next=True
        )
        return await pending.result()

    async def _traced_request(
        self,
        method: str,
        params: Any,
        progress: ProgressCallback | None,
        progress_token: ProgressToken | None,
        timeout: float | None,
        max_timeout: float | None,
        related_request_id: RequestId | None,
    ) -> Any:
        """:meth:`request` in a span (the otel extra). Apart from request() so that its
        closure's cells cost nothing to a session without tracing (bench W1)."""
        assert self._tracing is not None
        return await self._tracing.request(
            self,
            method,
            params,
            lambda traced: self._start_request(
                method, traced, progress, progress_token, timeout, max_timeout, related_request_id, wait_next=True
            ),
        )

    async def start_request(
        self,
        method: str,
        params: Any = None,
        *,
        progress: ProgressCallback | None = None,
        progress_token: ProgressToken | None = None,
        timeout: float | None = None,
        max_timeout: float | None = None,
        related_request_id: RequestId | None = None,
    ) -> "PendingRequest":
        """Send a request and return its handle at once (see :class:`PendingRequest`).

        The timeouts count from now and cover the send itself (a send that
        cannot finish in time raises :class:`RequestTimeout`, and nothing is
        sent). Call ``await handle.result()`` to wait for the answer and
        ``await handle.cancel(reason)`` to give up; a request whose deadline
        passes before ``result()`` is awaited is given up (and the peer told)
        when it is: ``result()`` then raises RequestTimeout at once -- unless
        its answer has arrived by then, which ``result()`` returns.
        """
        return await self._start_request(
            method, params, progress, progress_token, timeout, max_timeout, related_request_id, wait_next=False
        )

    async def _start_request(
        self,
        method: str,
        params: Any,
        progress: ProgressCallback | None,
        progress_token: ProgressToken | None,
        timeout: float | None,
        max_timeout: float | None,
        related_request_id: RequestId | None,
        *,
        wait_next: bool,
    ) -> "PendingRequest":
        """:meth:`start_request`; ``wait_next``: the caller awaits ``result()`` next, whose
        wait is a schedule point, so the send needs none of its own (:meth:`request`)."""
        if self.closed.is_set():
            raise ConnectionClosed(self.close_reason or "session closed")
        # [basic/lifecycle#19] per request, or the session's default -- lifecycle#timeouts
        idle = self.config.request_timeout if timeout is None else timeout
        cap = self.config.max_request_timeout if max_timeout is None else max_timeout
        if not idle > 0 or not cap > 0:
            raise ValueError("timeouts must be positive")
        if progress is not None:
            check_async("progress callback", progress)
        token: ProgressToken | bool | None = progress_token if progress_token is not None else (progress is not None)
        rid, data = self.connection.send_request(method, params, progress_token=token or None)
        inbox = self._waiters[rid] = _Inbox()
        pending = PendingRequest(self, rid, method, inbox, progress, idle, cap, related_request_id)
        # the deadlines cover the send too: a transport that cannot take the request
        # (a full pipe to a stuck peer) must not hold the caller past them
        # [basic/lifecycle#17] every request we send has its deadlines -- lifecycle#timeouts
        self._arm_timeout(pending)
        stopped = False
        try:
            if self._parked is not None:
                # a write that waits for room waits in the session's queue, where the
                # timer can stop it (pending.send_scope): no scope needed
                stopped = not await self._write(data, pending, checkpoint=not wait_next)
            elif not await self._send_at_once(data, pending, checkpoint=not wait_next):
                # a send that may wait: in a scope the session's timer can cancel
                scope = pending.send_scope = trio.CancelScope()
                with scope:
                    await self.send_raw(data, related_request_id, request=pending)
                stopped = scope.cancelled_caught
        except BaseException as exc:
            if pending.handed_over:
                await pending._give_up(exc)  # the peer may have it: cancel it
                pending._drop_timeout()
            else:
                # [basic/utilities/cancellation#1] never handed to the transport: the
                # peer cannot know this id, so no cancellation for it
                pending._unsent()
            raise
        finally:
            pending.send_scope = None
        if stopped:
            if self.closed.is_set():
                # the session ended while the request was still being written (see _close)
                pending._unsent()
                raise ConnectionClosed(self.close_reason or "session closed")
            if not pending.handed_over:
                pending._unsent()
                raise pending._timeout("the request could not be sent in that time and was dropped")
            # handed over, but the send did not finish in time: cancelled like any timeout
            pending._drop_timeout()
            self._waiters.pop(rid, None)
            raise await pending._time_out()
        return pending

    def _outcome(self, item: Any, method: str) -> Any:
        if type(item) is ResponseReceived:
            return item.result
        if type(item) is ErrorReceived:
            from ..client.elicitation import received_error  # (loaded by the first error answer)

            raise received_error(item.error.code, item.error.message, item.error.data)
        if type(item) is InvalidResponse:
            raise item.error
        if type(item) is _Closed:
            raise ConnectionClosed(item.reason)
        if type(item) is _Cancelled:
            raise RequestCancelled(method, item.reason)
        if type(item) is _Failed:
            raise item.error.with_traceback(None)  # (raised here, not where the transport met it)
        raise AssertionError(f"unexpected inbox item {item!r}")

    async def _abandon(self, rid: RequestId, reason: str, related: RequestId | None = None) -> str | None:
        """Stop waiting for ``rid``; tell the peer unless the spec forbids it.

        Returns why the peer was not told, or None when a cancellation was sent
        (or the request was already finished). The cancellation's write may
        take ``cancel_grace`` at most.
        """
        out = self.connection.outgoing(rid)
        if out is None:
            return None
        why = refusal(out.method, out.task)
        if why is not None or self.closed.is_set():
            self.connection.abandon(rid)
            # [basic/utilities/cancellation#2, #3] never a notification for these
            return why or "the session is closed"
        data = self.connection.send_cancel(rid, reason)
        # [basic/utilities/cancellation#8] the sender logs the reason too; at DEBUG, as the spec's
        # "for debugging" says: our caller holds it already (RequestTimeout, RequestCancelled)
        log.debug("cancelling request %r (%s): %s", rid, out.method, reason)
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + self.config.cancel_grace
            try:
                await self.send_raw(data, related)
            except ConnectionClosed:
                pass  # the peer is gone: nothing left to cancel
        if scope.cancelled_caught:
            log.warning("could not send the cancellation of request %r within %gs", rid, self.config.cancel_grace)
            return f"the cancellation could not be written within {self.config.cancel_grace:g}s"
        return None

    # -- the receive loop ------------------------------------------------------------

    async def ping(self, *, timeout: float | None = None) -> None:
        """[basic/utilities/ping] an empty result back, or RequestTimeout / MCPError / ConnectionClosed."""
        await self.request("ping", None, timeout=timeout)

    # -- request timeouts ----------------------------------------------------------------

    def _arm_timeout(self, pending: "PendingRequest") -> None:
        heapq.heappush(self._timeouts, (pending.deadline, next(self._timeout_seq), pending))
        pending.armed = True
        self._timeouts_live += 1
        if pending.deadline < self._timer_target:
            self._timer_wakeup.set()

    def _disarm_timeout(self, pending: "PendingRequest") -> None:
        """A request stopped waiting; its heap entry goes when popped or compacted."""
        if not pending.armed:
            return
        pending.armed = False
        self._timeouts_live -= 1
        heap = self._timeouts
        if len(heap) > 64 and len(heap) > 2 * self._timeouts_live:
            # mostly finished requests: drop them so the heap stays as big as what waits
            heap[:] = [entry for entry in heap if entry[2].waiting]
            heapq.heapify(heap)

    async def _timer(self) -> None:
        """Wakes at the earliest deadline and tells the requests whose time is up."""
        heap = self._timeouts
        while not self.closed.is_set():
            self._timer_wakeup = trio.Event()
            now = trio.current_time()
            while heap and heap[0][0] <= now:
                _, _, pending = heapq.heappop(heap)
                if not pending.waiting:
                    continue
                if pending.deadline <= now:
                    pending.waiting = False
                    pending._inbox.put(_TIMED_OUT)
                    if pending.send_scope is not None:
                        # still stuck in its first send: stop it (start_request raises RequestTimeout)
                        pending.send_scope.cancel(reason="request timeout")
                else:  # progress moved it on
                    heapq.heappush(heap, (pending.deadline, next(self._timeout_seq), pending))
            self._timer_target = heap[0][0] if heap else math.inf
            with trio.move_on_at(self._timer_target):
                await self._timer_wakeup.wait()

    async def _keepalive(self, interval: float) -> None:
        await self.initialized.wait()
        keepalive = ping_rules.Keepalive(self.config.keepalive_timeout, self.config.keepalive_max_failures)
        while not self.closed.is_set():
            # [basic/utilities/ping#4] as often as configured -- ping#implementation-considerations
            await trio.sleep(interval)
            try:
                # [basic/utilities/ping#5] each ping with its configured timeout
                await self.ping(timeout=keepalive.timeout)
            except (RequestTimeout, MCPError, ProtocolError) as exc:
                stale = keepalive.failed()
                # [basic/utilities/ping#9] failures are logged
                log.warning("keepalive ping %d/%d failed: %s", keepalive.failures, keepalive.max_failures, exc)
                if stale:
                    reason = keepalive.close_reason()
                    log.error("closing session: %s", reason)
                    # [basic/utilities/ping#2, #7, #8] the connection is stale: close it -- ping#error-handling
                    await self.aclose(reason)
                    return
            except ConnectionClosed:
                return
            else:
                keepalive.succeeded()

    async def run_receive_loop(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read messages from the channel and act on them until it ends (started by session_scope; call it yourself
        only with a Session of your own).
        """
        self._nursery.start_soon(self._notification_worker)
        self._nursery.start_soon(self._soon_writer)
        self._nursery.start_soon(self._timer)
        # [basic/utilities/ping#3] pings to watch the connection, when configured -- ping#implementation-considerations
        if self.config.keepalive_interval is not None:
            self._nursery.start_soon(self._keepalive, self.config.keepalive_interval)
        task_status.started()
        reason = "end of stream"
        try:
            if self._first_message is not None:
                opened = await self._opening(self._first_message)
                self._first_message = None
                if opened is not None:
                    reason = opened
                    return
            while True:
                if self._behind() is not None:
                    stalled = await self._wait_for_room()
                    if stalled is not None:
                        reason = stalled
                        log.error("closing session: %s", reason)
                        break
                try:
                    data = await self.channel.receive()
                except trio.EndOfChannel as e:
                    if e.args:  # the transport knows why (a stdio server's exit status...)
                        reason = f"end of stream: {e}"
                    if (self._handler_scopes or self._replies) and self.config.eof_grace > 0:
                        await self._let_handlers_finish(self.config.eof_grace)
                    break
                except MessageTooLarge as e:
                    self._too_large(e)
                    continue
                except HTTPTransportError as e:
                    if e.request_id is None:
                        raise  # (a transport fails a request this way; anything else is its bug)
                    self._exchange_failed(e)
                    continue
                except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
                    reason = f"transport closed: {e!r}"
                    break
                if wire.isEnabledFor(logging.DEBUG):
                    wire.debug("%s <- %s", self.connection.role.value, bytes(data).decode("utf-8", "replace"))
                for event in self.connection.receive_message(data):
                    self._dispatch(event)
                if self.connection.phase is Phase.CLOSED:
                    reason = "the connection was closed by the protocol engine"
                    break
        finally:
            self._close(reason)
            if self._write_lock.locked() or self._parked:
                # writes still under way (a peer that ended its output and does not read ours
                # blocks them): nothing can use them now, and they would wait until the
                # session's block exits -- close the channel so that they end (the waiting
                # writes of _write fail with it)
                with trio.CancelScope(shield=True):
                    await self.channel.aclose()

    async def _opening(self, hook: "FirstMessageHook") -> str | None:
        """(server, one channel) Read messages until one decides the era (before the receive loop,
        so the 2025 path pays nothing per message for it).

        ``hook(data)`` returns None when ``data`` is not the opening of a 2026-07-28 client: the
        message is then handled here as the loop would, and a request decides the legacy era
        (``decides``). Otherwise ``hook`` serves the channel in the modern era to its end and
        returns why it ended, which this returns too (the session then closes unused).
        """
        while True:
            try:
                data = await self.channel.receive()
            except trio.EndOfChannel as e:
                return f"end of stream: {e}" if e.args else "end of stream"
            except MessageTooLarge as e:
                self._too_large(e)
                continue
            except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
                return f"transport closed: {e!r}"
            modern = await hook.serve_modern(data)
            if modern is not None:
                return modern
            if wire.isEnabledFor(logging.DEBUG):
                wire.debug("%s <- %s", self.connection.role.value, bytes(data).decode("utf-8", "replace"))
            for event in self.connection.receive_message(data):
                self._dispatch(event)
            if hook.decides(data):
                return None

    def _behind(self) -> str | None:
        """What the session is too far behind on to read more from the peer, if anything."""
        cfg = self.config
        if self._replies + self._responding >= cfg.max_pending_replies:
            return "replies"
        if self._queued >= cfg.max_queued_requests:
            return "requests"
        if self._notes_queued >= cfg.max_queued_notifications:
            return "notifications"
        return None

    async def _wait_for_room(self) -> str | None:
        """Stop reading until the session has caught up (backpressure: the peer's writes
        wait, and so does the peer). Returns why the session must close instead: no reply
        could be written for ``reply_stall_timeout``."""
        log.debug("the receive loop waits: too many %s pending", self._behind())
        while (behind := self._behind()) is not None:
            room = self._room = trio.Event()
            written = self._replies_written
            with trio.move_on_after(self.config.reply_stall_timeout):
                await room.wait()
            if behind == "replies" and not room.is_set() and self._replies_written == written:
                pending = self._replies + self._responding
                return (
                    f"the peer is not reading: {pending} replies could not be written "
                    f"for {self.config.reply_stall_timeout:g}s"
                )
        self._room = None
        return None

    def _caught_up(self) -> None:
        """Something the receive loop may be waiting on got done: let it look again."""
        room = self._room
        if room is not None:
            room.set()

    def _too_large(self, e: MessageTooLarge) -> None:
        """The transport dropped a message over its limit; ``e`` says what its first bytes showed."""
        log.warning("%s", e)
        rid = e.request_id
        if e.kind == "response":
            out = self.connection.outgoing(rid) if rid is not None else None
            waiter = self._waiters.get(rid) if rid is not None else None
            if out is not None and waiter is not None:
                assert rid is not None
                # the answer to our request is lost: fail it now rather than at its timeout
                self.connection.abandon(rid)
                waiter.put(InvalidResponse(rid, out.method, e))
            return  # JSON-RPC never answers a response, even an unreadable one
        # [basic/index#10] the error carries the request's id when its first bytes showed it, else null
        reply = self.connection.error_reply(rid, ErrorCode.INVALID_REQUEST, f"Invalid Request: {e}")
        self._reply_soon(reply)

    def _exchange_failed(self, e: HTTPTransportError) -> None:
        """The transport could not carry our request ``e.request_id`` or bring its answer
        (Streamable HTTP: an error status, no connection): the request fails with ``e``."""
        rid = e.request_id
        assert rid is not None
        waiter = self._waiters.get(rid)
        if self.connection.outgoing(rid) is None or waiter is None:
            log.debug("request %r failed after it was given up: %s", rid, e)
            return
        # no answer will come: the engine forgets the id (a late answer is ignored), and
        # no cancellation is sent for it (the caller gets the error, not a timeout)
        self.connection.abandon(rid)
        waiter.put(_Failed(e))

    async def _let_handlers_finish(self, grace: float) -> None:
        """The peer's input ended, our output may still be open: give running handlers ``grace`` seconds."""
        done = self._handlers_done = trio.Event()
        log.info(
            "end of input with %d request(s) being handled and %d reply(ies) to write: waiting up to %gs",
            len(self._handler_scopes),
            self._replies,
            grace,
        )
        with trio.move_on_after(grace):
            await done.wait()
        if self._handler_scopes:
            log.warning(
                "cancelling %d request(s) still running %gs after the end of input", len(self._handler_scopes), grace
            )

    def _reply_soon(self, data: bytes, related: RequestId | None = None) -> None:
        """Write a reply of the receive loop from its own task (the loop never blocks on a write).

        Counted until written, so that the end of input waits for it like for a
        handler (``eof_grace``): a ping or a parse error last in the input is answered.
        """
        self._replies += 1
        self._nursery.start_soon(self._send_reply, data, related)

    async def _send_reply(self, data: bytes, related: RequestId | None) -> None:
        try:
            await self._send_quietly(data, related)
            self._replies_written += 1
        finally:
            self._replies -= 1
            self._note_work_done()
            self._caught_up()

    def _note_work_done(self) -> None:
        """A handler or a reply ended: wake the end-of-input wait (eof_grace) when it was the last."""
        if self._handlers_done is not None and not self._handler_scopes and not self._replies:
            self._handlers_done.set()

    async def _send_quietly(self, data: bytes, related: RequestId | None = None) -> None:
        """Send a protocol reply; a transport that is gone is the loop's next EOF."""
        try:
            await self.send_raw(data, related)
        except ConnectionClosed:
            log.debug("could not send a reply: the connection is closed")

    def _dispatch(self, event: Event) -> None:
        t = type(event)
        if t is RequestReceived:
            assert isinstance(event, RequestReceived)
            if event.method == ping_rules.METHOD:
                # [basic/utilities/ping#1] answered at once, in every phase, even when handlers are busy
                # (sent from its own task: the receive loop never blocks on a write,
                # so two peers with full pipes cannot deadlock each other)
                reply = self.connection.send_response(event.id, ping_rules.answer())
                self._reply_soon(reply, event.id)
                return
            if self._request_limits and self._over_rate_limit(event):
                return
            scope = trio.CancelScope()
            self._handler_scopes[event.id] = scope
            self._queued += 1  # until it has a slot
            self._nursery.start_soon(self._run_handler, event, scope, name=f"mcp handler {event.method} {event.id!r}")
        elif t in (ResponseReceived, ErrorReceived, InvalidResponse, ProgressReceived):
            rid = event.request_id if t is ProgressReceived else event.id  # type: ignore[attr-defined]
            waiter = self._waiters.get(rid)
            if waiter is not None:
                waiter.put(event)
            elif t is ProgressReceived and rid in self.task_progress:
                # a task's progress after its CreateTaskResult: to the task's callback, in order
                assert isinstance(event, ProgressReceived)
                self._notes_queued += 1
                self._notes_send.send_nowait(event)
            elif t is not ProgressReceived:
                log.warning("response to request %r arrived with nobody waiting", rid)
        elif t is CancellationReceived:
            assert isinstance(event, CancellationReceived)
            # [basic/utilities/cancellation#8, schema#18] log the reason; at INFO: work stops on the
            # peer's word, and nothing else here records why -- cancellation#implementation-notes
            log.info("peer cancelled request %r: %s", event.request_id, event.reason or "(no reason given)")
            handler_scope = self._handler_scopes.get(event.request_id)
            # [schema#12] a late cancellation finds no handler: nothing to stop
            if handler_scope is not None:
                # [basic/utilities/cancellation#4, schema#13] stop processing: cancel the handler's scope
                handler_scope.cancel(reason=f"cancelled by peer: {event.reason or 'no reason given'}")
        elif t is NotificationReceived:
            assert isinstance(event, NotificationReceived)
            self._notes_queued += 1
            self._notes_send.send_nowait(event)
        elif t is Initialized:
            self.initialized.set()
        elif t is MessageRejected:
            assert isinstance(event, MessageRejected)
            log.warning("rejected a message from the peer: %s", event.error)
            if event.reply is not None:
                related = getattr(event.error, "reply_id", None)
                self._reply_soon(event.reply, related)
        elif t is VersionRejected:
            assert isinstance(event, VersionRejected)
            log.error("server offered protocol version %s; we support %s", event.offered, event.supported)
        elif t in (CancellationIgnored, ProgressIgnored, NotificationIgnored, LateResponseIgnored):
            # [basic/utilities/cancellation#10], [basic/utilities/progress#7]: ignored, logged, counted
            log.info("ignored: %r", event)
            if t is LateResponseIgnored:
                assert isinstance(event, LateResponseIgnored)
                if event.task_id is not None:
                    self._cancel_orphan_task(event.task_id)
        elif t in (UnknownResponse, ErrorWithoutId):
            log.warning("peer fault: %r", event)
            self.peer_faults.append(event)
        else:
            raise AssertionError(f"unhandled event {event!r}")

    def _over_rate_limit(self, event: RequestReceived) -> bool:
        """Refuse ``event`` (-32600, at once, no handler) if its method is over its rate limit."""
        limit = self._request_limits.get(event.method)
        # [server/tools#20], [client/sampling#17], [client/elicitation#39] within its rate limit, or refused
        if limit is None or limit.allow(trio.current_time()):
            return False
        self.connection.stats["rejected:rate-limit"] += 1
        log.warning("refused %s request %r: over its rate limit (%g/s)", event.method, event.id, limit.rate)
        message = f"Invalid Request: too many {event.method} requests (limit {limit.rate:g}/s); retry later"
        self._reply_soon(self.connection.send_error(event.id, ErrorCode.INVALID_REQUEST, message), event.id)
        return True

    def _cancel_orphan_task(self, task_id: str) -> None:
        """[basic/utilities/cancellation#3] the peer created a task for a task-augmented
        request we had given up on (its CreateTaskResult came late): nobody waits for
        it, and only ``tasks/cancel`` can stop it."""
        if not self.connection.peer_has("tasks", "cancel"):
            log.warning("the peer runs task %s for a request we gave up on, and cannot cancel tasks", task_id)
            return
        self._nursery.start_soon(self._send_tasks_cancel, task_id, name=f"mcp tasks/cancel {task_id}")

    async def _send_tasks_cancel(self, task_id: str) -> None:
        try:
            await self.request("tasks/cancel", CancelTaskRequestParams(task_id=task_id))
        except MCPRefError as e:
            log.info("could not cancel task %s, started for a request we gave up on: %s", task_id, e)
        else:
            log.info("cancelled task %s, started for a request we gave up on", task_id)

    async def _notification_worker(self) -> None:
        # Notifications are handled one at a time, in arrival order.
        async for event in self._notes_recv:
            self._notes_queued -= 1
            self._caught_up()
            try:
                if isinstance(event, ProgressReceived):
                    callback = self.task_progress.get(event.request_id)
                    if callback is not None:
                        await callback(event.progress, event.total, event.message)
                    continue
                handler = self.notification_handlers.get(event.method)
                if handler is not None:
                    await handler(self, event.params)
            except Exception as exc:
                # A callback of the application failed: the session ends (nothing is logged
                # and dropped) and session_scope raises this exception, as itself, once the
                # block has been cancelled -- not wrapped in the groups of two nurseries.
                self.callback_error = exc
                self._nursery.cancel_scope.cancel(reason="a notification callback failed")
                self._close(f"a notification callback raised {type(exc).__name__}: {exc}")
                return

    async def _run_handler(self, event: RequestReceived, scope: trio.CancelScope) -> None:
        rid = event.id
        conn = self.connection
        data: bytes | None = None
        queued = True
        try:
            if self._free_slots:
                self._free_slots -= 1
            else:
                await self._slot_waiters.park()  # woken holding the slot of a handler that ended
            queued = False
            self._queued -= 1
            self._caught_up()
            try:
                with scope:
                    ctx = RequestContext(self, rid, event.method, event.message, scope)
                    handler = self.handlers.get(event.method)
                    try:
                        if handler is None:
                            raise ProtocolError(f"Method not found: {event.method}", ErrorCode.METHOD_NOT_FOUND)
                        if self._tracing is None:
                            result = await handler(ctx, event.params)
                        else:
                            result = await self._tracing.handle(ctx, handler, event.params)
                        if ctx._pace is not None and ctx._pace.held is not None:
                            # [basic/utilities/progress#13] the latest state before the result
                            await ctx.flush_progress()
                    except trio.Cancelled:
                        raise
                    except Exception as exc:
                        data = self._error_reply(rid, exc)
                    else:
                        req = conn.incoming(rid)
                        if req is not None and req.state == "running" and not self.closed.is_set():
                            try:
                                data = conn.send_response(rid, result)
                            except _ENCODE_FAILURES as exc:
                                # a result of the wrong type or with no JSON form (NaN, a datetime):
                                # -32603 without internals, the traceback to our log
                                log.error(
                                    "handler for %s (request %r) returned an unusable result",
                                    event.method,
                                    rid,
                                    exc_info=exc,
                                )
                                data = self._send_error(rid, ErrorCode.INTERNAL_ERROR, "Internal error")
            finally:
                if self._slot_waiters:
                    self._slot_waiters.unpark()  # the slot goes to the longest waiting
                else:
                    self._free_slots += 1
            if data is None:
                # (a response or an error encoded has retired the request: nothing to look up)
                req = conn.incoming(rid)
                if req is not None and req.state == "cancel-requested":
                    # [basic/utilities/cancellation#4, #7] cancelled, even if the result was ready
                    # just before: send nothing -- cancellation#timing-considerations
                    conn.finish_cancelled(rid)
            else:
                self._responding += 1
                try:
                    # (the task ends here, which is its schedule point: the send needs none)
                    await self.send_raw(data, rid, checkpoint=False)
                    self._replies_written += 1
                except ConnectionClosed:
                    log.debug("could not send a reply: the connection is closed")
                finally:
                    self._responding -= 1
                    self._caught_up()
        finally:
            if queued:  # cancelled while waiting for a slot
                self._queued -= 1
                self._caught_up()
            self._handler_scopes.pop(rid, None)
            self._note_work_done()

    def _error_reply(self, rid: RequestId, exc: Exception) -> bytes | None:
        """One place where handler exceptions become wire errors (DESIGN.md section 4)."""
        conn = self.connection
        req = conn.incoming(rid)
        if req is None or req.state != "running" or self.closed.is_set():
            return None  # answered, cancelled, or nobody left to answer
        if isinstance(exc, MCPError):
            # raised to answer with this error, or received from a nested request and
            # not caught: either way it keeps its code (spec_notes/basic/lifecycle.md)
            return self._send_error(rid, exc.code, exc.message, exc.data)
        if isinstance(exc, ProtocolError) and not isinstance(exc, (LocalProtocolError, RemoteProtocolError)):
            # library code answering with a protocol error on purpose (e.g. -32602 for params)
            return self._send_error(rid, exc.code, exc.message, exc.data)
        if isinstance(exc, InvalidCallbackAnswer | InvalidAnswer):
            # (client) our application's callback answered against the server's request: nothing of it
            # is sent, the server hears why. (server) the client's answer to what the handler asked did
            # not fit, and the handler let it go: the client hears why. -32603 both (the request was
            # fine); the reasons name the fields asked for, nothing internal (client/elicitation.md)
            log.warning("%s (request %r): %s", req.method, rid, exc.message)
            return self._send_error(rid, ErrorCode.INTERNAL_ERROR, exc.message, exc.data)
        # anything else -- including our own API misuse (LocalProtocolError: a nested request
        # the peer has no capability for, progress going backwards) and a peer's broken
        # answer to a nested request (RemoteProtocolError): -32603 without internals;
        # the traceback goes to our log
        log.exception("handler for %s (request %r) failed", req.method, rid, exc_info=exc)
        return self._send_error(rid, ErrorCode.INTERNAL_ERROR, "Internal error")

    def _send_error(self, rid: RequestId, code: int, message: str, data: Any = None) -> bytes:
        """Encode an error response that always goes out.

        Error ``data`` with no JSON form is dropped (the code and message still
        go out); a code or message that cannot be encoded becomes a plain -32603.
        """
        conn = self.connection
        try:
            return conn.send_error(rid, code, message, data)
        except _ENCODE_FAILURES as exc:
            log.error("cannot encode the error response to request %r; sending it without data", rid, exc_info=exc)
        if data is not None:
            try:
                return conn.send_error(rid, code, message)
            except _ENCODE_FAILURES as exc:
                log.error("cannot encode the error response to request %r", rid, exc_info=exc)
        return conn.send_error(rid, ErrorCode.INTERNAL_ERROR, "Internal error")

    # -- closing -------------------------------------------------------------------------

    def _close(self, reason: str) -> None:
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        self._timer_wakeup.set()
        self.connection.close()
        for waiter in self._waiters.values():
            waiter.put(_Closed(reason))
        for _, _, pending in self._timeouts:
            if pending.send_scope is not None:
                # a request still in its first send (a peer that ended its output but does
                # not read): the timer stops with the session, so stop the send here
                pending.send_scope.cancel(reason=f"session closed: {reason}")
        self._notes_send.close()
        self._soon_send.close()
        for scope in self._handler_scopes.values():
            scope.cancel(reason=f"session closed: {reason}")

    async def aclose(self, reason: str = "closed locally") -> None:
        """Close the session: requests in flight fail with ConnectionClosed(``reason``), the channel is closed."""
        self._close(reason)
        with trio.CancelScope(shield=True):
            await self.channel.aclose()


def check_async(what: str, fn: Callable[..., Any]) -> None:
    """Raise TypeError now unless ``fn`` is an async function (or callable object).

    Callbacks and handlers are awaited when called: a plain function would
    only fail then, far from the mistake (an internal error on the wire, a
    request given up).
    """
    if not (inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)):
        raise TypeError(f"{what} {getattr(fn, '__name__', fn)!r} must be an async function (async def)")


def check_encodable(value: Any) -> None:
    """Raise LocalProtocolError (-32603) now if ``value`` has no JSON form.

    For messages encoded later, away from the caller (``notify_soon``): NaN,
    infinities, a datetime or a set anywhere in it.
    """
    try:
        dumps(converter_for(LATEST_LEGACY_REVISION).unstructure(value))
    except (TypeError, ValueError, OverflowError) as e:
        raise LocalProtocolError(f"cannot encode {type(value).__name__}: {e}", ErrorCode.INTERNAL_ERROR) from e


def _reason_for(exc: BaseException) -> str:
    if isinstance(exc, trio.Cancelled):
        return "request abandoned by the caller"
    return f"request abandoned: {type(exc).__name__}: {exc}"


@asynccontextmanager
async def session_scope(
    connection: Connection,
    channel: trio.abc.Channel[bytes],
    *,
    handlers: Mapping[str, RequestHandler] | None = None,
    notification_handlers: Mapping[str, NotificationHandler] | None = None,
    config: SessionConfig | None = None,
    first_message: FirstMessageHook | None = None,
) -> AsyncIterator[Session]:
    """Run a session on ``channel``: one nursery, nothing outlives the block.

    A notification callback that raises ends the session: the block is
    cancelled and that exception is raised from the ``async with``, as itself.
    """
    sessions: list[Session] = []
    try:
        async with block_nursery() as (nursery, body):
            session = Session(
                connection,
                channel,
                nursery,
                handlers=handlers,
                notification_handlers=notification_handlers,
                config=config,
                first_message=first_message,
            )
            sessions.append(session)
            await nursery.start(session.run_receive_loop)
            try:
                yield session
            except BaseException as exc:
                body.exc = exc
                raise
            finally:
                await session.aclose()
                nursery.cancel_scope.cancel(reason="session scope exited")
    except ConnectionClosed:
        # the block saw the session close under it; when a callback closed it, that is the news
        if not sessions or sessions[0].callback_error is None:
            raise
    if sessions and (error := sessions[0].callback_error) is not None:
        raise error from None


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals())
