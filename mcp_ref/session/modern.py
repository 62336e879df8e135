"""The trio runtime of the modern era (2026-07-28): one handler per request, no session.

The application registers its tools, resources and prompts once on a
:class:`~mcp_ref.Server`; a 2025-11-25 session and a 2026-07-28 request are
served by the same handlers (DESIGN.md section 10). What differs is the path
a request takes:

* the sans-IO engine (:mod:`mcp_ref.exchange`) checks it on its own and gives
  an :class:`~mcp_ref.exchange.Exchange`;
* :class:`ModernRuntime` runs its handler in a cancel scope with a
  :class:`ModernContext` (``ctx.progress``, ``ctx.log``, ``ctx.elicit`` ... as in a
  session), and writes what the handler produces to a :class:`Sink` (a pipe, or
  the request's HTTP response);
* a handler that needs the client (``ctx.elicit()``, ``ctx.sample()``,
  ``ctx.list_roots()``) is answered with an ``InputRequiredResult`` and re-run
  from the top on the retry, with the answers (basic/patterns/mrtr, re-run not
  park: spec_notes/basic/patterns/mrtr.md);
* ``subscriptions/listen`` reads the server's change feed (:mod:`.changes`).

:func:`serve_modern_channel` serves one channel (stdio, a memory pair) in this
era; the Streamable HTTP server drives :meth:`ModernRuntime.run` per POST.
"""

from __future__ import annotations

import copy
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

import trio

from ..basic import lifecycle as lc
from ..basic import versioning as v
from ..basic.lifecycle import Role
from ..basic.patterns import mrtr, subscriptions
from ..basic.rate_limit import TokenBucket
from ..errors import (
    DecodeError,
    ErrorCode,
    InvalidAnswer,
    LocalProtocolError,
    MCPError,
    MissingClientCapability,
    ProtocolError,
    RemoteProtocolError,
)
from ..events import CancellationIgnored, CancellationReceived, ExchangeReceived, MessageRejected, NotificationIgnored
from ..exchange import TASKS_EXTENSION, Exchange, StatelessEngine
from ..schema._converter import decode
from .changes import ChangeFeed, FeedClosed
from .core import RequestContext, RequestHandler, SessionConfig, typed_input, typed_notification
from .telemetry import Tracing, tracing

if TYPE_CHECKING:
    from ..basic.authorization.resource_server import AccessToken
    from ..basic.transports.mcp_headers import ParamHeader
    from ..schema.lifecycle import Implementation, ServerCapabilities


class ModernServable(Protocol):
    """What the runtime reads of the server it runs (``mcp_ref.Server`` is one)."""

    info: Implementation
    modern_versions: tuple[str, ...]
    supported_versions: tuple[str, ...]
    changes: ChangeFeed
    identify: bool
    config: SessionConfig
    state_sealer: mrtr.StateSealer

    def capabilities(self) -> ServerCapabilities: ...

    def modern_capabilities(self) -> ServerCapabilities: ...

    @property
    def extension_methods(self) -> frozenset[str]: ...

    def modern_handler_table(self) -> dict[str, RequestHandler]: ...

    def param_headers(self, tool: str) -> tuple[ParamHeader, ...]: ...

    def cache_hints(self, method: str, result: dict[str, Any], override: Any) -> dict[str, Any]: ...

    def cache_override(self, exchange: Exchange) -> Any: ...


__all__ = ["ModernContext", "ModernRuntime", "ModernServable", "Sink", "serve_modern_channel"]

log = logging.getLogger("mcp_ref.session.modern")

#: the rate-limit buckets a runtime keeps at most (the least recently used go first)
_MAX_BUCKETS = 10_000


class Sink(Protocol):
    """Where one exchange's messages go: its notifications, then its answer."""

    async def notify(self, data: bytes) -> None: ...

    async def answer(self, data: bytes, code: int | None) -> None:
        """The final message (``code``: the JSON-RPC error code when it is an error)."""


class ModernContext(RequestContext):
    """What a handler gets for a 2026-07-28 request: the :class:`~mcp_ref.RequestContext`
    API, served without a session.

    ``ctx.elicit()``, ``ctx.sample()``, ``ctx.list_roots()`` return the client's
    answer when the retry carries it, and otherwise stop the handler: the request
    is answered with an ``InputRequiredResult`` and the handler runs again, from
    the top, on the retry (so work before the first of them runs again: put
    what must not repeat after it, or in ``ctx.state``). ``ctx.state`` is a small
    JSON object that survives the rounds (sealed in ``requestState``).
    """

    def __init__(
        self,
        runtime: ModernRuntime,
        exchange: Exchange,
        cancel_scope: trio.CancelScope,
        sink: Sink,
        *,
        auth: AccessToken | None,
        answers: Mapping[str, Any],
        state: dict[str, Any],
    ) -> None:
        self.runtime = runtime
        self.exchange = exchange
        self.request_id = exchange.id
        self.method = exchange.method
        self.message = None
        self.params = exchange.params
        self.cancel_scope = cancel_scope
        self._pace = None
        self._sink = sink
        self._auth = auth
        self._answers = dict(answers)
        #: the answers this run used, by key (what the next requestState carries)
        self.used: dict[str, Any] = {}
        #: the input requests this run made and found no answer for, by key
        self.pending: dict[str, tuple[str, Any]] = {}
        self._counts: Counter[str] = Counter()
        self.state = state
        self._log_limiter: Any = None
        self._pace: Any = None

    # -- what a session context offers, without a session ---------------------------------------

    @property
    def session(self) -> Any:
        raise LocalProtocolError(
            f"a {self.exchange.revision} request has no session: use the context's own methods"
            " (progress, log, elicit, sample, list_roots)"
        )

    @session.setter
    def session(self, value: Any) -> None:
        raise AttributeError("a 2026-07-28 request has no session")

    @property
    def revision(self) -> str:
        return self.exchange.revision

    @property
    def client_capabilities(self) -> Any:
        # [2026-07-28:basic/index#27] this request's declaration, never an earlier one's
        return self.exchange.meta.client_capabilities

    @property
    def client_info(self) -> Any:
        return self.exchange.meta.client_info

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.exchange.raw_params.get("_meta") or {})

    @property
    def progress_token(self) -> str | int | None:
        return self.exchange.progress_token

    @property
    def auth(self) -> AccessToken | None:
        return self._auth

    @property
    def task_augmented(self) -> bool:
        return False

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        # [2026-07-28:basic/patterns/index#2] notifications about this request, while it is in flight
        if await _stopped(self.exchange):
            return
        now = trio.current_time()
        if self.runtime.progress_interval and self.exchange.progress_token is not None:
            from ..basic.utilities.progress import DROP, ProgressPace

            if self._pace is None:
                self._pace = ProgressPace(self.runtime.progress_interval, coalesce=False)
            # [2026-07-28:basic/patterns/progress#11] rate limited per request: inside the interval a value
            # is dropped (one that reaches its total always goes); there is no session to flush it later
            if self._pace.offer(progress, total, message, now) == DROP:
                return
        # [2026-07-28:basic/patterns/progress#1, #4, #8, #9] the handler's progress, with the request's own
        # token (none: nothing sent; no total: none written)
        data = self.exchange.send_progress(progress, total, message)
        if data is not None:
            if self._pace is not None:
                self._pace.sent(progress, now, True)
            await self._sink.notify(data)

    async def flush_progress(self) -> None:
        return None

    async def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        from ..server.utilities.logging import check_level

        check_level(level)
        if await _stopped(self.exchange):
            return False
        # [2026-07-28:server/utilities/logging#3, #4] only when this request's _meta asked, at or above its level
        encoded = self.exchange.send_log(level, data, logger)
        if encoded is None:
            return False
        rate = self.runtime.log_rate
        if rate is not None:
            # [2026-07-28:server/utilities/logging#7] rate limited, per request (there is no session)
            if self._log_limiter is None:
                from ..server.utilities.logging import LogRateLimiter

                self._log_limiter = LogRateLimiter(*rate)
            if not self._log_limiter.allow(trio.current_time()):
                return False
        await self._sink.notify(encoded)
        return True

    async def notify(self, method: str, params: Any = None) -> None:
        if method == "notifications/message":
            message = typed_notification(method, params)
            await self.log(message.level, message.data, message.logger)
            return
        if method == "notifications/progress":
            report = typed_notification(method, params)
            await self.progress(report.progress, report.total, report.message)
            return
        # [2026-07-28:basic/transports/streamable-http#19] only notifications about this request go on its stream
        raise LocalProtocolError(f"{method} is not a notification about this request (2026-07-28)")

    async def request(self, method: str, params: Any = None, **options: Any) -> Any:
        if method == "elicitation/create":
            return await self.elicit(params, **options)
        if method == "sampling/createMessage":
            return await self.sample(params, **options)
        if method == "roots/list":
            return await self.list_roots(**options)
        # [2026-07-28:basic/patterns/index#1, basic/transports/stdio#9, basic/transports/streamable-http#20]
        # a server initiates no requests, on no transport
        raise LocalProtocolError(
            f"a 2026-07-28 server sends no requests ({method}): only elicitation, sampling and roots, as input requests"
        )

    async def request_task(self, method: str, params: Any, *, ttl: int | None = None, **options: Any) -> Any:
        raise LocalProtocolError("a 2026-07-28 server sends no task-augmented requests")

    async def list_tasks(self, cursor: str | None = None, **options: Any) -> Any:
        raise LocalProtocolError("a 2026-07-28 server asks the client for no tasks")

    # -- multi round-trip requests ------------------------------------------------------------

    def can_elicit(self, mode: Literal["form", "url"] = "form") -> bool:
        return self._missing("elicitation/create", _Probe(mode=mode)) is None

    def can_sample(self, *, tools: bool = False, context: bool = False) -> bool:
        probe = _Probe(tools=[] if tools else None, include_context="thisServer" if context else None)
        return self._missing("sampling/createMessage", probe) is None

    def _missing(self, method: str, params: Any) -> tuple[str, ...] | None:
        """The client capability ``method`` with ``params`` needs and this request did not declare."""
        caps = self.exchange.meta.capabilities
        need = mrtr.INPUT_METHODS[method]
        if not lc.has_capability(caps, need):
            return need
        problem = lc.params_capability_problem(method, params, caps)
        if problem is None:
            return None
        for path in (("sampling", "tools"), ("sampling", "context"), ("elicitation", "url"), ("elicitation", "form")):
            if ".".join(path) in problem:
                return path
        return need

    def _input(self, method: str, params: Any, key: str | None) -> Any:
        if key is None:
            self._counts[method] += 1
            key = mrtr.default_key(method, self._counts[method])
        if key in self.pending or key in self.used:
            # [2026-07-28:basic/patterns/mrtr#8] keys are unique within the request
            raise LocalProtocolError(f"input request key {key!r} is used twice in one request")
        missing = self._missing(method, params)
        if missing is not None:
            # [2026-07-28:basic/index#57, basic/patterns/mrtr#17, #18] never an input request the client
            # cannot take: the request fails with -32021, naming the capability
            raise v.missing_capability(missing, what=f"{self.method} asks the client for {method}")
        if key not in self._answers:
            # [2026-07-28:basic/patterns/mrtr#31] an answer missing: asked again, not an error
            self.pending[key] = (method, params)
            raise mrtr.InputRequired(self.pending)
        answer = self._answers[key]
        self.used[key] = answer
        return key, answer

    def _decode_answer(self, key: str, answer: Any, cls: Any) -> Any:
        try:
            return decode(answer, cls)
        except DecodeError as e:
            # [2026-07-28:basic/patterns/mrtr#28, #29] an answer that does not parse: -32602 (InvalidAnswer,
            # a RemoteProtocolError as a 2025 session's undecodable response is)
            raise InvalidAnswer(f"the client's answer does not parse: {e}", input_key=key) from None

    @staticmethod
    def _elicit_params(params: Any) -> Any:
        """``params`` of an elicitation as the model, checked: LocalProtocolError before it is asked."""
        from ..basic.url_elicitation import check_elicitation_url
        from ..schema.elicitation import ElicitRequestURLParams

        params = typed_input("elicitation/create", params)
        if isinstance(params, ElicitRequestURLParams):
            try:
                check_elicitation_url(params.url)
            except ValueError as e:
                # [2026-07-28:client/elicitation#14] a URL elicitation carries a valid URL, checked before it is asked
                raise LocalProtocolError(f"URL elicitation: {e}", ErrorCode.INVALID_PARAMS) from None
        return params

    @staticmethod
    def _sample_params(params: Any) -> Any:
        """``params`` of a sampling request as the model, checked: LocalProtocolError before it is asked."""
        from ..client.sampling import sampling_messages_problem, tool_results_problem
        from ..schema.sampling import CreateMessageRequestParams

        params = typed_input("sampling/createMessage", params)
        if isinstance(params, CreateMessageRequestParams):
            problem = sampling_messages_problem(params)
            if problem is None:
                # [2026-07-28:schema#59] a tool result's structuredContent fits its tool's outputSchema
                problem = tool_results_problem(params)
            if problem is not None:
                raise LocalProtocolError(f"sampling request: {problem}", ErrorCode.INVALID_PARAMS)
        return params

    async def elicit(self, params: Any, *, key: str | None = None, **options: Any) -> Any:
        from ..client.elicitation import check_elicit_answer
        from ..schema.elicitation import ElicitResult

        params = self._elicit_params(params)
        key, answer = self._input("elicitation/create", params, key)
        result = self._decode_answer(key, answer, ElicitResult)
        try:
            result = check_elicit_answer(params, result)
        except InvalidAnswer as e:
            # the handler gets what a 2025 session's ctx.elicit raises, with the same message
            e.input_key = key
            raise
        return result

    async def sample(self, params: Any, *, key: str | None = None, **options: Any) -> Any:
        from ..client.sampling import sampling_result_problem
        from ..schema.sampling import CreateMessageRequestParams, CreateMessageResult

        params = self._sample_params(params)
        key, answer = self._input("sampling/createMessage", params, key)
        result = self._decode_answer(key, answer, CreateMessageResult)
        if isinstance(params, CreateMessageRequestParams):
            problem = sampling_result_problem(params, result)
            if problem is not None:
                raise InvalidAnswer(f"the client's sampling result: {problem}", input_key=key)
        return result

    async def list_roots(self, *, key: str | None = None, **options: Any) -> Any:
        from ..schema.roots import ListRootsResult

        key, answer = self._input("roots/list", None, key)
        return self._decode_answer(key, answer, ListRootsResult)

    async def ask_all(self, requests: Mapping[str, tuple[str, Any]]) -> dict[str, Any]:
        """Several input requests at once: every missing one goes in the same InputRequiredResult."""
        results: dict[str, Any] = {}
        required: mrtr.InputRequired | None = None
        for key, (method, params) in requests.items():
            try:
                results[key] = await self._ask_one(method, params, key)
            except mrtr.InputRequired as e:
                required = e
        if required is not None:
            raise mrtr.InputRequired(self.pending)
        return results


class _Probe:
    """Stands in for request params when asking which capability they would need."""

    def __init__(self, mode: str | None = None, tools: list[Any] | None = None, include_context: str | None = None):
        self.mode = mode
        self.tools = tools
        self.tool_choice = None
        self.include_context = include_context


def _principal(auth: AccessToken | None) -> list[str | None] | None:
    return list(auth.principal) if auth is not None else None


class ModernRuntime:
    """Runs the handlers of a :class:`~mcp_ref.Server` for 2026-07-28 exchanges."""

    def __init__(self, server: ModernServable, *, clock: Callable[[], float] = time.time) -> None:
        self.server = server
        #: the wall clock requestState expiries are read with (shared by replicas)
        self.clock = clock
        self.handlers: dict[str, RequestHandler] = server.modern_handler_table()
        self.changes: ChangeFeed = server.changes
        config = server.config
        #: (rate, burst) of each request's log messages, from the server's SessionConfig (None: no limit)
        self.log_rate = (config.log_rate, config.log_burst) if config.log_rate is not None else None
        #: the least interval between one request's progress notifications (SessionConfig.progress_min_interval)
        self.progress_interval = config.progress_min_interval
        #: (rate, burst) per method, from SessionConfig.request_rate_limits: counted per user (a verified
        #: token's principal), else per channel (stdio, in memory), else one bucket for every tokenless
        #: HTTP request (there is no identity to count them by)
        self.request_limits = dict(config.request_rate_limits)
        self._buckets: OrderedDict[tuple[str, Any], TokenBucket] = OrderedDict()
        #: OpenTelemetry (:mod:`.telemetry`, the otel extra): a SERVER span per request, or None.
        #: Decided when the runtime is made (the server's first 2026-07-28 request, and again
        #: when its registrations change), from ``SessionConfig.telemetry``, as a 2025 session
        #: decides when it starts
        self.tracing: Tracing | None = tracing(config.telemetry)

    def traced_by(self, traced: Tracing | None) -> ModernRuntime:
        """This runtime with another tracing (a channel whose SessionConfig says otherwise); it
        shares everything else, the rate limits' buckets included."""
        other = copy.copy(self)
        other.tracing = traced
        return other

    def engine(self, *, track_ids: bool) -> StatelessEngine:
        """A server engine for this server as it is now (its capabilities, what it serves)."""
        server = self.server
        return StatelessEngine(
            Role.SERVER,
            info=server.info,
            capabilities=server.modern_capabilities(),
            supported_versions=server.modern_versions,
            legacy_versions=server.supported_versions,
            served=frozenset(self.handlers),
            # [ext-tasks:tasks#57] an extension's methods are served (by the extension's handlers)
            extension_methods=server.extension_methods,
            track_ids=track_ids,
            identify=server.identify,
            param_headers=server.param_headers,
            cache=server.cache_hints,
        )

    async def run(
        self,
        exchange: Exchange,
        sink: Sink,
        scope: trio.CancelScope,
        *,
        auth: AccessToken | None = None,
        ending: trio.Event | None = None,
    ) -> None:
        """Handle ``exchange`` in ``scope`` and write what it produces to ``sink``.

        ``ending``: set when the transport shuts down; a subscription then ends
        gracefully, with its completion result ([2026-07-28:basic/patterns/subscriptions#7]).

        A cancelled exchange (the scope cancelled: the client closed its stream, or
        cancelled on stdio) writes nothing more ([2026-07-28:basic/transports/stdio#11,
        basic/transports/streamable-http#24]).
        """
        answer: tuple[bytes, int | None] | None = None
        with scope:
            if exchange.method == "subscriptions/listen":
                answer = await self._listen(exchange, sink, ending)
            else:
                answer = await self._handle(exchange, sink, scope, auth)
        if scope.cancel_called or exchange.state == "cancelled":
            exchange.cancelled()
            # [2026-07-28:basic/patterns/cancellation#4, #13, #16] cancelled: no response, even one ready (the
            # race of a cancellation and an answer ends quietly)
            return
        if answer is not None:
            await sink.answer(*answer)

    async def _handle(
        self, exchange: Exchange, sink: Sink, scope: trio.CancelScope, auth: AccessToken | None
    ) -> tuple[bytes, int | None]:
        handler = self.handlers[exchange.method]
        if exchange.method in self.request_limits and not self._within_limit(exchange, sink, auth):
            message = f"Invalid Request: too many {exchange.method} requests; retry later"
            return exchange.send_error(ErrorCode.INVALID_REQUEST, message), int(ErrorCode.INVALID_REQUEST)
        try:
            answers, state = self._open_retry(exchange, auth)
            ctx = ModernContext(self, exchange, scope, sink, auth=auth, answers=answers, state=state)
            try:
                traced = self.tracing
                if traced is None:
                    result = await handler(ctx, exchange.params)
                else:
                    # a SERVER span continuing the client's trace ([2026-07-28:basic/index#62])
                    result = await traced.handle(ctx, _input_required_is_an_answer(handler), exchange.params)
            except mrtr.InputRequired:
                result = None
            # [2026-07-28:basic/patterns/mrtr#20] a retry may be asked for more, round after round
            if ctx.pending:
                # [2026-07-28:basic/patterns/mrtr#1, #6] what the handler needs from the client comes back as
                # input requests; the retry re-runs it with the answers
                # [2026-07-28:basic/patterns/mrtr#10] with the state sealed (the answers so far, ctx.state)
                return exchange.send_input_required(ctx.pending, self._seal(exchange, ctx, auth)), None
            return exchange.send_response(result, cache=self.server.cache_override(exchange)), None
        except trio.Cancelled:
            raise
        except Exception as exc:
            return self._error(exchange, exc)

    def _within_limit(self, exchange: Exchange, sink: Sink, auth: AccessToken | None) -> bool:
        """Whether ``exchange`` is within its method's rate limit (each retry of a multi round-trip
        request counts: it is a request like any other)."""
        who: Any
        if auth is not None:
            who = ("user", tuple(_principal(auth) or ()))
        elif isinstance(sink, _PipeSink):
            who = ("channel", id(sink))
        else:
            who = ("anonymous",)
        key = (exchange.method, who)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(*self.request_limits[exchange.method])
            while len(self._buckets) > _MAX_BUCKETS:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        # [2026-07-28:server/tools#42, server/utilities/completion#6] within its rate limit, or refused at
        # once (-32600) before the handler runs
        if bucket.allow(trio.current_time()):
            return True
        log.warning("refused %s request %r: over its rate limit (%g/s)", exchange.method, exchange.id, bucket.rate)
        return False

    def _open_retry(self, exchange: Exchange, auth: AccessToken | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The answers a retry brings (its own, and those its requestState carries) and the handler's state."""
        # [2026-07-28:basic/patterns/mrtr#30] every answer is kept by key; only those asked for are read
        answers = dict(exchange.input_responses)
        token = exchange.request_state
        if token is None:
            return answers, {}
        # [2026-07-28:basic/patterns/mrtr#11, #12, #32] attacker-controlled: verified before anything in it is used
        payload = self.server.state_sealer.open(token, now=self.clock())
        if payload.get("m") != exchange.method or payload.get("d") != mrtr.salient_digest(
            exchange.method, exchange.raw_params
        ):
            # [2026-07-28:basic/patterns/mrtr#14] a state is good only for the request it was issued for
            raise mrtr.StateRejected("issued for another request")
        if payload.get("p") != _principal(auth):
            # [2026-07-28:basic/patterns/mrtr#14] ... and only for the user it was issued to
            raise mrtr.StateRejected("issued to another principal")
        carried = payload.get("a")
        if isinstance(carried, dict):
            # the sealed answers of earlier rounds stand: a retry cannot rewrite them
            answers.update(carried)
        state = payload.get("s")
        return answers, dict(state) if isinstance(state, dict) else {}

    def _seal(self, exchange: Exchange, ctx: ModernContext, auth: AccessToken | None) -> str:
        """[2026-07-28:basic/index#29, basic/patterns/mrtr#19] what the retry needs travels in the
        state: nothing in this process waits for the client, which may retry on another connection or
        replica, or never."""
        payload = {
            "m": exchange.method,
            "d": mrtr.salient_digest(exchange.method, exchange.raw_params),
            "p": _principal(auth),
            "a": ctx.used,
            "s": ctx.state,
        }
        return self.server.state_sealer.seal(payload, now=self.clock())

    def _error(self, exchange: Exchange, exc: Exception) -> tuple[bytes, int | None]:
        """One place where handler exceptions become wire errors (as Session._error_reply)."""
        if isinstance(exc, MCPError):
            code, message, data = exc.code, exc.message, exc.data
        elif isinstance(exc, InvalidAnswer):
            # [2026-07-28:basic/patterns/mrtr#29] an answer in the retry's inputResponses that does not
            # fit, not caught by the handler: the retry's params are wrong, -32602 naming the entry
            where = f"inputResponses[{exc.input_key!r}]: " if exc.input_key is not None else ""
            code, message, data = ErrorCode.INVALID_PARAMS, f"Invalid params: {where}{exc.message}", exc.data
        elif isinstance(exc, MissingClientCapability) or (
            isinstance(exc, ProtocolError) and not isinstance(exc, LocalProtocolError | RemoteProtocolError)
        ):
            code, message, data = exc.code, exc.message, exc.data
        else:
            log.error("handler for %s (request %r) failed", exchange.method, exchange.id, exc_info=exc)
            # [2026-07-28:server/resources#14] any other failure is an internal error, -32603
            code, message, data = ErrorCode.INTERNAL_ERROR, "Internal error", None
        try:
            return exchange.send_error(code, message, data), code
        except LocalProtocolError:
            return exchange.send_error(ErrorCode.INTERNAL_ERROR, "Internal error"), int(ErrorCode.INTERNAL_ERROR)

    async def _listen(
        self, exchange: Exchange, sink: Sink, ending: trio.Event | None = None
    ) -> tuple[bytes, int | None] | None:
        """``subscriptions/listen``: acknowledge, then every matching change until the client or the server ends it."""
        assert exchange.requested_filter is not None
        asked = exchange.raw_params.get("notifications")
        if isinstance(asked, dict) and "taskIds" in asked and not exchange.client_has("extensions", TASKS_EXTENSION):
            # [ext-tasks:tasks#49, #56] task status notifications are the tasks extension's: a request
            # that did not declare it is refused with -32021 (with it, none are agreed: tasks are polled)
            return self._error(exchange, v.missing_capability(("extensions", TASKS_EXTENSION)))
        agreed = subscriptions.agreed_filter(exchange.requested_filter, exchange.engine._caps_json)
        dropped: FeedClosed | None = None
        async with self.changes.subscribe() as changes, trio.open_nursery() as watch:
            if ending is not None:
                watch.start_soon(_end_when, ending, watch.cancel_scope)
            # (subscribed before the acknowledgement: nothing published after it is missed)
            await sink.notify(exchange.acknowledge(agreed))
            try:
                async for method, params in changes:
                    if await _stopped(exchange):
                        break
                    data = exchange.send_change(method, params)
                    if data is not None:
                        await sink.notify(data)
            except FeedClosed as closed:
                if not closed.graceful:
                    dropped = closed
            watch.cancel_scope.cancel()
        if exchange.state == "cancelled":
            return None
        if dropped is not None:
            # dropped without a result (its client fell behind): the one cancellation a server sends
            log.warning("subscription %r dropped: %s", exchange.id, dropped.reason)
            await sink.notify(exchange.send_teardown(dropped.reason))
            return None
        # [2026-07-28:basic/patterns/subscriptions#7, #8] the server ends it (its feed closed, the
        # transport shuts down): a completion result
        return exchange.end_subscription(), None


def _input_required_is_an_answer(handler: RequestHandler) -> RequestHandler:
    """``handler``, ending normally when it stops for input (its span is not a failure: the
    request is answered with an ``InputRequiredResult`` from what ``ctx.pending`` holds)."""

    async def run(ctx: Any, params: Any) -> Any:
        try:
            return await handler(ctx, params)
        except mrtr.InputRequired:
            return None

    return run


async def _stopped(exchange: Exchange) -> bool:
    """Whether the client cancelled ``exchange`` (its cancellation may have been read a moment
    before the handler's scope sees it): the scope's Cancelled is raised here when it is due."""
    if exchange.state != "cancelled":
        return False
    await trio.lowlevel.checkpoint_if_cancelled()
    return True


async def _end_when(ending: trio.Event, scope: trio.CancelScope) -> None:
    await ending.wait()
    scope.cancel(reason="the server is shutting down")


class _PipeSink:
    __slots__ = ("write",)

    def __init__(self, write: Callable[[bytes, bool], Awaitable[None]]) -> None:
        self.write = write

    async def notify(self, data: bytes) -> None:
        await self.write(data, True)

    async def answer(self, data: bytes, code: int | None) -> None:
        # (the answer ends its task: no schedule point after it is handed over)
        await self.write(data, False)


async def serve_modern_channel(
    runtime: ModernRuntime,
    channel: trio.abc.Channel[bytes],
    first: bytes,
    *,
    max_concurrent: int = 1000,
    eof_grace: float = 0.0,
    telemetry: Any = None,
) -> str:
    """Serve 2026-07-28 requests arriving on ``channel`` (``first`` already read) until it ends.

    One engine tracks the ids in flight, so ``notifications/cancelled`` stops the
    handler it names ([2026-07-28:basic/transports/stdio#10]); writes are serialised.
    ``telemetry``: the channel's ``SessionConfig.telemetry`` (decided as it starts).
    Returns why it ended.
    """
    traced = tracing(telemetry)
    if traced is not runtime.tracing:
        runtime = runtime.traced_by(traced)
    engine = runtime.engine(track_ids=True)
    lock = trio.StrictFIFOLock()
    scopes: dict[Any, trio.CancelScope] = {}
    listens: set[Any] = set()
    limiter = trio.CapacityLimiter(max_concurrent)
    #: a pipe's all-or-nothing write (the stdio channel's), used when nobody else is writing
    send_nowait: Callable[[bytes], None] | None = getattr(channel, "send_nowait", None)

    async def write(data: bytes, checkpoint: bool = True) -> None:
        # a message the channel takes whole at once, when no write is under way (the lock is
        # free, so none waits either), goes out without the lock: taking it and the channel's
        # own is two schedule points a message (bench W11), and the order is the same
        if send_nowait is not None and not lock.locked():
            await trio.lowlevel.checkpoint_if_cancelled()
            try:
                send_nowait(data)
            except trio.WouldBlock:
                pass  # (no room, or the channel is writing: nothing was written)
            else:
                if checkpoint:
                    await trio.lowlevel.cancel_shielded_checkpoint()
                return
        async with lock:
            await channel.send(data)

    sink = _PipeSink(write)

    async def run(exchange: Exchange, scope: trio.CancelScope) -> None:
        try:
            # (a free slot is taken at once: `async with limiter` is a schedule point even then)
            try:
                limiter.acquire_nowait()
            except trio.WouldBlock:
                await limiter.acquire()
            try:
                await runtime.run(exchange, sink, scope)
            finally:
                limiter.release()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("could not answer request %r: the channel is closed", exchange.id)
        finally:
            scopes.pop(exchange.id, None)
            listens.discard(exchange.id)
            if not scopes and idle is not None:
                idle.set()

    async def reply(data: bytes) -> None:
        try:
            await write(data, False)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("could not send a reply: the channel is closed")

    idle: trio.Event | None = None
    reason = "end of stream"
    async with trio.open_nursery() as nursery:
        data: bytes | None = first
        while data is not None:
            for event in engine.receive_message(data):
                t = type(event)
                if t is ExchangeReceived:
                    assert isinstance(event, ExchangeReceived)
                    exchange = event.exchange
                    scope = scopes[exchange.id] = trio.CancelScope()
                    if exchange.method == "subscriptions/listen":
                        listens.add(exchange.id)
                    # [2026-07-28:basic/index#28] every request runs on its own: several at once, of any
                    # number of conversations
                    nursery.start_soon(run, exchange, scope, name=f"mcp {exchange.method} {exchange.id!r}")
                elif t is CancellationReceived:
                    assert isinstance(event, CancellationReceived)
                    # [2026-07-28:basic/patterns/cancellation#17, schema#23] say why in our log
                    log.info("client cancelled request %r: %s", event.request_id, event.reason or "(no reason given)")
                    cancelled = scopes.get(event.request_id)
                    # [2026-07-28:basic/patterns/cancellation#13] stop it
                    if cancelled is not None:
                        cancelled.cancel(reason=f"cancelled by the client: {event.reason or 'no reason given'}")
                elif isinstance(event, MessageRejected):
                    log.warning("rejected a message: %s", event.error)
                    if event.reply is not None:
                        nursery.start_soon(reply, event.reply)
                elif t in (CancellationIgnored, NotificationIgnored):
                    log.info("ignored: %r", event)
            try:
                data = await channel.receive()
            except trio.EndOfChannel as e:
                if e.args:
                    reason = f"end of stream: {e}"
                data = None
            except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
                reason = f"transport closed: {e!r}"
                data = None
        # the client's input ended: subscriptions end with it; other requests get eof_grace
        for rid in list(listens):
            scopes[rid].cancel(reason="the client closed its input")
        if scopes and eof_grace > 0:
            idle = trio.Event()
            with trio.move_on_after(eof_grace):
                await idle.wait()
        # [2026-07-28:basic/transports/stdio#13] input closed: we are done (the process then exits)
        nursery.cancel_scope.cancel(reason=reason)
    return reason
