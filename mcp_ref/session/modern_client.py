"""The client side of the modern era (2026-07-28) on trio: one request at a time, no session.

:class:`ModernSession` is what a :class:`~mcp_ref.session.client.ClientSession`
talks to when the server speaks 2026-07-28; it offers the same ``request``
as the 2025 :class:`~mcp_ref.session.core.Session`, so ``list_tools``,
``call_tool``, ``read_resource`` ... are the same calls in both eras. Under it:

* the sans-IO engine (:class:`~mcp_ref.exchange.StatelessEngine`, client role)
  writes each request with its ``_meta`` (version, capabilities, client info,
  log level) and classifies what comes back;
* one receive loop routes every message to the request it belongs to (by id),
  a notification of a ``subscriptions/listen`` stream to its
  :class:`Subscription` (by ``io.modelcontextprotocol/subscriptionId``);
* a request answered with an ``InputRequiredResult`` is fulfilled by the
  application's roots, sampling and elicitation callbacks and retried with
  the answers and the exact ``requestState``, under a new id, a bounded number
  of times (:class:`InputRoundsExceeded` past that) -- basic/patterns/mrtr;
* cancelling the caller cancels the request: ``notifications/cancelled`` on a
  pipe, the response stream closed on HTTP (the channel does that);
* a request whose HTTP response stream broke before its answer is sent again
  with a new id when it is safe to (:data:`REISSUE_SAFE`), else it fails with
  :class:`StreamBroken` (spec_notes/basic/patterns/mrtr.md has the decision).

:func:`probe` is the era probe (``server/discover``) that ``open_session``
runs before choosing between this and ``initialize``.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import attrs
import trio

from ..basic import versioning as v
from ..errors import (
    ConnectionClosed,
    HTTPTransportError,
    LocalProtocolError,
    MCPError,
    MCPRefError,
    MessageTooLarge,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    StreamBroken,
)
from ..events import (
    ErrorReceived,
    InputRequiredReceived,
    InvalidResponse,
    MessageRejected,
    NotificationReceived,
    ProgressIgnored,
    ProgressReceived,
    ResponseReceived,
    UnknownResponse,
)
from ..exchange import StatelessEngine
from ..schema import messages as m
from ..schema._converter import decode
from .telemetry import tracing

if TYPE_CHECKING:
    pass

__all__ = [
    "ModernSession",
    "Subscription",
    "SubscriptionEnded",
    "InputRoundsExceeded",
    "StreamBroken",
    "ProbeResult",
    "probe",
    "REISSUE_SAFE",
    "EraCache",
    "ERA_CACHE",
    "ResultCache",
]

log = logging.getLogger("mcp_ref.client")

#: requests sent again with a new id when their response stream broke before the answer: those
#: that change nothing at the server (2026-07-28 streamable-http: a broken stream loses its request,
#: no resumption); a tools/call may have had its effect, so it is never repeated blindly
REISSUE_SAFE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
    }
)
#: input requests a client answers, and the callback that does
_INPUT_METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")


class InputRoundsExceeded(RemoteProtocolError):
    """The server kept answering ``InputRequiredResult`` past ``max_input_rounds`` retries."""


class SubscriptionEnded(MCPRefError):
    """A subscription ended without the server's completion result (the stream or connection dropped)."""


InputHandler = Callable[[Any, Any], Awaitable[Any]]
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


@attrs.define
class InputRequestContext:
    """What an application's sampling / elicitation / roots callback gets as ``ctx`` in 2026-07-28:
    the input request's ``key`` and the original request it serves (``method``, ``params``)."""

    #: the input request's key in the server's ``inputRequests``
    key: str
    #: the method of the request it serves (``tools/call`` ...)
    method: str
    #: that request's params
    params: Any
    #: how many retries came before (0: the first answer)
    round: int
    #: the :class:`~mcp_ref.ClientSession` asking
    client: Any = None


class Subscription:
    """One ``subscriptions/listen`` stream: an async iterator of the notifications it carries.

    ``acknowledged``: the filter the server agreed to honour (what it will
    send), once its acknowledgement came; ``refused``: what was asked for and
    the acknowledgement left out. Iteration ends when the server ends the
    subscription gracefully (its completion result; ``graceful`` is True) and
    raises :class:`SubscriptionEnded` when the stream dropped without it.
    Leaving the ``async with`` of ``client.listen(...)`` cancels it.
    """

    def __init__(self, request_id: Any, requested: dict[str, Any]) -> None:
        #: the id of its subscriptions/listen request (what tags the notifications it carries)
        self.id = request_id
        #: the filter asked for (``toolsListChanged``, ``resourceSubscriptions`` ...)
        self.requested = requested
        #: the filter the server agreed to, once acknowledged (None until then)
        self.acknowledged: dict[str, Any] | None = None
        #: whether the server ended it with its completion result
        self.graceful = False
        self._ack = trio.Event()
        self._send, self._receive = trio.open_memory_channel[Any](math.inf)
        self._end: BaseException | None = None

    @property
    def refused(self) -> dict[str, Any]:
        """What was asked for and is not in the acknowledgement (types the server does not support)."""
        # [2026-07-28:basic/patterns/subscriptions#4] the acknowledged filter against the request
        agreed = self.acknowledged or {}
        out: dict[str, Any] = {}
        for key, value in self.requested.items():
            if key == "resourceSubscriptions":
                missing = [u for u in value if u not in (agreed.get(key) or [])]
                if missing:
                    out[key] = missing
            elif value and not agreed.get(key):
                out[key] = value
        return out

    def _deliver(self, method: str, params: Any) -> None:
        self._send.send_nowait((method, params))

    def _finish(self, error: BaseException | None) -> None:
        if self._end is None:
            self._end = error
        self._ack.set()
        self._send.close()

    def __aiter__(self) -> AsyncIterator[tuple[str, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[tuple[str, Any]]:
        async for item in self._receive:
            yield item
        if self._end is not None:
            raise self._end


class PendingModernRequest:
    """A 2026-07-28 request in flight (see :meth:`ModernSession.start_request`)."""

    def __init__(self, method: str) -> None:
        self.method = method
        self._scope = trio.CancelScope()
        self._done = trio.Event()
        self._outcome: tuple[bool, Any] | None = None
        self._cancel_reason: str | None = None
        self._waited = False

    async def _run(
        self,
        session: ModernSession,
        params: Any,
        options: Mapping[str, Any],
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        task_status.started()
        try:
            with self._scope:
                try:
                    self._outcome = (True, await session.request(self.method, params, **options))
                except Exception as e:
                    self._outcome = (False, e)
        finally:
            self._done.set()

    async def result(self) -> Any:
        """The answer (once); :class:`~mcp_ref.RequestCancelled` after :meth:`cancel`."""
        if self._waited:
            raise RuntimeError(f"the result of this {self.method} request was already awaited")
        self._waited = True
        await self._done.wait()
        if self._cancel_reason is not None and self._outcome is None:
            raise RequestCancelled(self.method, self._cancel_reason)
        assert self._outcome is not None
        ok, value = self._outcome
        if ok:
            return value
        raise value

    async def cancel(self, reason: str | None = None) -> None:
        """Give up on it: the server is told (as any cancelled request), ``result()`` raises."""
        if self._done.is_set():
            return
        self._cancel_reason = reason or "cancelled by the client"
        self._scope.cancel(reason=self._cancel_reason)
        await self._done.wait()


@attrs.frozen
class ProbeResult:
    """What ``server/discover`` said: ``modern`` (and the version chosen, the result) or not."""

    modern: bool
    version: str | None = None
    result: Any = None
    #: why the server is taken to be legacy (for the log)
    reason: str = ""


class EraCache:
    """The era each server was found to speak, by a key of its configuration (the stdio command, the
    HTTP origin): [2026-07-28:basic/versioning] cached for the process, probed again when wrong."""

    def __init__(self) -> None:
        self._eras: dict[Any, str] = {}

    def get(self, key: Any) -> str | None:
        """The era ("modern" or "legacy") found for ``key``, or None (not known: probe)."""
        return self._eras.get(key) if key is not None else None

    def set(self, key: Any, era: str) -> None:
        """Remember the era found for ``key``."""
        if key is not None:
            self._eras[key] = era

    def forget(self, key: Any) -> None:
        """Forget ``key`` (its server may have changed): the next client probes it again."""
        self._eras.pop(key, None)


#: the process-wide cache open_stdio_client and open_http_client use unless given another
ERA_CACHE = EraCache()


#: what a change notification makes stale
_INVALIDATES: Mapping[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


class ResultCache:
    """[2026-07-28:server/utilities/caching] the results a client may reuse, by method and the
    params that select them (a list page's cursor, a resource's URI).

    A result is fresh for its ``ttlMs`` from when it arrived (absent, 0 or
    negative: not kept); a change notification makes the results it concerns
    stale at once. One cache per client session, and a ``cacheScope`` "private"
    result is served only while ``context()`` (the authorization requests are
    made with) is the one it arrived in; nothing produced by a
    retry with input responses is put here (``ClientSession`` only stores
    first-round results).
    """

    def __init__(
        self, clock: Callable[[], float] = trio.current_time, context: Callable[[], Any] = lambda: None
    ) -> None:
        self.clock = clock
        #: the authorization context requests are made in now (over HTTP: a digest of the
        #: Authorization value the channel last sent; one context per cache otherwise)
        self.context = context
        self._entries: dict[tuple[str, Any], tuple[float, Any, Any]] = {}

    def get(self, method: str, key: Any) -> Any:
        entry = self._entries.get((method, key))
        if entry is None:
            return None
        expires, result, context = entry
        # [2026-07-28:schema#41] a private result only in the authorization context it was
        # given in: another access token (a refreshed one too) asks the server again
        if context is not _PUBLIC and context != self.context():
            del self._entries[(method, key)]
            return None
        # [2026-07-28:server/utilities/caching#2, #4, #5, #8, #13, #21] this method and params only (a
        # list page by its own cursor, so an expired page is fetched again with that cursor); fresh while
        # now < received + ttlMs, then fetched again
        if self.clock() < expires:
            return result
        del self._entries[(method, key)]
        return None

    def put(self, method: str, key: Any, result: Any) -> None:
        if isinstance(result, Mapping):
            ttl = result.get("ttlMs")
        else:
            ttl = getattr(result, "ttl_ms", None)
            extra = getattr(result, "extra", None)
            if ttl is None and isinstance(extra, Mapping):
                ttl = extra.get("ttlMs")  # (a data model without the 2026 caching fields keeps it here)
        # [2026-07-28:server/utilities/caching#6, #9, #10, schema#37] absent or negative counts as 0;
        # 0: stale at once, so not kept (nor is a ttlMs that is not a number)
        if not isinstance(ttl, int | float) or isinstance(ttl, bool) or ttl <= 0:
            return
        # [2026-07-28:schema#39, #40] a private result kept with the context it came in; a public one for any
        context = _PUBLIC if _field(result, "cacheScope", "cache_scope") == "public" else self.context()
        # [2026-07-28:schema#36] kept for ttlMs from now
        self._entries[(method, key)] = (self.clock() + ttl / 1000, result, context)

    def invalidate(self, notification: str, params: Any = None) -> None:
        """[2026-07-28:server/utilities/caching#16] a change notification: what it names is stale."""
        methods = _INVALIDATES.get(notification, ())
        for method, key in list(self._entries):
            if method in methods:
                del self._entries[(method, key)]
        if notification == "notifications/resources/updated" and isinstance(params, Mapping):
            self._entries.pop(("resources/read", params.get("uri")), None)

    def clear(self) -> None:
        self._entries.clear()

    def forget(self, method: str) -> None:
        """Drop every kept result of ``method`` (every page of a list)."""
        for key in [k for k in self._entries if k[0] == method]:
            del self._entries[key]

    def pages(self, method: str, field: str) -> list[Any] | None:
        """The items of a whole list from fresh kept pages, following their cursors from the first; None
        unless every page is here and fresh."""
        items: list[Any] = []
        cursor: Any = None
        seen: set[Any] = set()
        while True:
            page = self.get(method, cursor)
            if page is None:
                return None
            wire = "resourceTemplates" if field == "resource_templates" else field
            items.extend(_field(page, wire, field) or ())
            cursor = _field(page, "nextCursor", "next_cursor")
            if cursor is None:
                return items
            if cursor in seen:
                return None
            seen.add(cursor)


#: the context of a public result: any (2026-07-28 schema#39)
_PUBLIC: Final = object()


def _field(result: Any, wire: str, attr: str) -> Any:
    if isinstance(result, Mapping):
        return result.get(wire)
    return getattr(result, attr, None)


class ModernSession:
    """The runtime of a 2026-07-28 client on one channel (see the module's docstring).

    Made by ``open_session``; ``request`` is the funnel every call goes
    through. ``input_handlers`` maps ``elicitation/create``,
    ``sampling/createMessage`` and ``roots/list`` to the application's
    callbacks (the guards of :mod:`mcp_ref.client`).
    """

    def __init__(
        self,
        engine: StatelessEngine,
        channel: trio.abc.Channel[bytes],
        nursery: trio.Nursery,
        *,
        version: str,
        input_handlers: Mapping[str, InputHandler] | None = None,
        on_log: Callable[[Any], Awaitable[None]] | None = None,
        request_timeout: float = 60.0,
        max_request_timeout: float = 600.0,
        cancel_grace: float = 2.0,
        max_input_rounds: int = 8,
        max_reissues: int = 2,
        log_level: str | None = None,
        telemetry: Any = None,
    ) -> None:
        if max_input_rounds < 1 or max_reissues < 0:
            raise ValueError("max_input_rounds is at least 1, max_reissues at least 0")
        self.engine = engine
        self.channel = channel
        self.nursery = nursery
        self.version = version
        self.input_handlers = dict(input_handlers or {})
        self.on_log = on_log
        self.request_timeout = request_timeout
        self.max_request_timeout = max_request_timeout
        self.cancel_grace = cancel_grace
        self.max_input_rounds = max_input_rounds
        self.max_reissues = max_reissues
        #: [2026-07-28:basic/index] the minimum level of notifications/message asked for, per request
        self.log_level = log_level
        #: what ClientSession adds to the input callbacks' context
        self.client: Any = None
        #: told of every change notification a subscription brings (the client's result cache)
        self.on_change: Callable[[str, Any], None] | None = None
        self._waiters: dict[Any, trio.MemorySendChannel[Any]] = {}
        self._subscriptions: dict[Any, Subscription] = {}
        self._write_lock = trio.StrictFIFOLock()
        self.closed: str | None = None
        #: the exception an application callback (on_log, on_list_changed) raised: it ends the
        #: client, and is raised from the ``async with`` as itself
        self.callback_error: BaseException | None = None
        #: OpenTelemetry (:mod:`.telemetry`, the otel extra): a CLIENT span per call, or None;
        #: ``telemetry`` is ``SessionConfig.telemetry``, decided now, as a 2025 session does
        self._tracing = tracing(telemetry)
        if self._tracing is not None:
            # the traced funnel, in place of request() for this client alone: a client without
            # tracing runs request() as it is, with not even a check (bench W1)
            self.request = self._traced_request  # type: ignore[method-assign]

    # -- the wire ----------------------------------------------------------------------------------

    async def _write(self, data: bytes) -> None:
        if self.closed is not None:
            raise ConnectionClosed(self.closed)
        lock = self._write_lock
        try:
            # (a free lock taken at once: `async with` yields to the scheduler even then, a
            # pass per request; the send below is the schedule point, bench W11H)
            lock.acquire_nowait()
        except trio.WouldBlock:
            await lock.acquire()
        try:
            await self.channel.send(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            raise ConnectionClosed(f"the channel is closed: {e}") from e
        finally:
            lock.release()

    async def _post(self, data: bytes, rid: Any) -> Any:
        """Write request ``rid`` (``data``) on a channel that lets its caller read the answer
        (HTTP, 2026-07-28: ``answers_in_caller``); what the channel's ``read_answer`` takes."""
        if self.closed is not None:
            raise ConnectionClosed(self.closed)
        out = self.engine.outgoing(rid)
        assert out is not None
        lock = self._write_lock
        try:
            lock.acquire_nowait()
        except trio.WouldBlock:
            await lock.acquire()
        try:
            return await self.channel.post_request(data, out.method, out.params)  # type: ignore[attr-defined]
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            raise ConnectionClosed(f"the channel is closed: {e}") from e
        finally:
            lock.release()

    async def receive_loop(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Route everything that arrives; at the end of input every waiting request fails."""
        task_status.started()
        reason = "end of stream"
        try:
            while True:
                try:
                    data = await self.channel.receive()
                except trio.EndOfChannel:
                    return
                except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
                    reason = f"transport closed: {e}"
                    return
                except HTTPTransportError as e:
                    self._route(e.request_id, e)
                    continue
                except MessageTooLarge as e:
                    self._route(e.request_id, e)
                    continue
                for event in self.engine.receive_message(data):
                    self._dispatch(event)
        finally:
            self._close(reason)

    def _close(self, reason: str) -> None:
        self.closed = reason
        for waiter in list(self._waiters.values()):
            waiter.send_nowait(ConnectionClosed(f"the connection ended before the answer: {reason}"))
        for sub in list(self._subscriptions.values()):
            # [2026-07-28:basic/patterns/subscriptions#9] a transport that closes without the
            # completion result is an unexpected disconnect
            sub._finish(SubscriptionEnded(f"subscription {sub.id!r} dropped: {reason}"))
        self._subscriptions.clear()

    def _route(self, rid: Any, item: Any) -> None:
        waiter = self._waiters.get(rid)
        if waiter is not None:
            waiter.send_nowait(item)
        elif isinstance(item, BaseException):
            log.warning("%s", item)

    def _dispatch(self, event: Any) -> None:
        t = type(event)
        if t in (ResponseReceived, ErrorReceived, InputRequiredReceived, InvalidResponse):
            sub = self._subscriptions.get(event.id)
            if sub is not None:
                self._end_subscription(sub, event)
                return
            self._route(event.id, event)
        elif t is ProgressReceived:
            self._route(event.request_id, event)
        elif t is NotificationReceived:
            self._notification(event.method, event.params)
        elif t is UnknownResponse:
            log.info("a response to no request of ours (id %r): ignored", event.id)
        elif t is ProgressIgnored:
            log.debug("progress ignored: %r", event)
        elif isinstance(event, MessageRejected):
            log.warning("the server sent something we cannot use: %s", event.error)
        else:
            log.debug("ignored: %r", event)

    def _notification(self, method: str, params: Any) -> None:
        meta = params.get("_meta") if isinstance(params, dict) else None
        sid = meta.get(v.SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None
        if sid is not None:
            # [2026-07-28:basic/patterns/subscriptions#3, #5, basic/transports/stdio#8] the subscription
            # it belongs to, by the id of the subscriptions/listen request that opened it (on one
            # channel other subscriptions' messages may come in between)
            sub = self._subscriptions.get(sid)
            if sub is None:
                log.info("%s for no subscription of ours (%r): ignored", method, sid)
                return
            if method == "notifications/subscriptions/acknowledged":
                agreed = params.get("notifications") if isinstance(params.get("notifications"), dict) else {}
                sub.acknowledged = dict(agreed)
                sub._ack.set()
                if sub.refused:
                    # (handled gracefully: said, and the types that are honoured still flow)
                    log.info("subscription %r: the server does not honour %s", sub.id, sub.refused)
                return
            # [2026-07-28:basic/patterns/subscriptions#2] nothing before the acknowledgement
            if sub.acknowledged is None:
                log.warning("subscription %r: %s before the acknowledgement: ignored", sub.id, method)
                return
            if method == "notifications/cancelled":
                sub._finish(SubscriptionEnded(f"subscription {sub.id!r} torn down by the server: {params}"))
                self._subscriptions.pop(sub.id, None)
                return
            if self.on_change is not None:
                self.on_change(method, params)
            sub._deliver(method, params)
            return
        if method == "notifications/message":
            if self.on_log is not None:
                self.nursery.start_soon(self._call_log, params)
            return
        if method == "notifications/cancelled":
            return
        log.info("notification %s outside any subscription: ignored", method)

    async def _call_log(self, params: Any) -> None:
        assert self.on_log is not None
        decoded = params
        cls = m.PARAMS_TYPES.get("notifications/message") if "notifications/message" in m.KNOWN_METHODS else None
        if cls is not None:
            try:
                decoded = decode(params, cls)
            except Exception:
                log.warning("a notifications/message that does not decode: %.200r", params)
                return
        try:
            await self.on_log(decoded)
        except Exception as e:
            self.callback_failed(e)

    def callback_failed(self, error: Exception) -> None:
        """An application callback raised: the client ends, and the block raises ``error``."""
        if self.callback_error is None:
            self.callback_error = error
        self._close(f"a callback raised {type(error).__name__}: {error}")
        self.nursery.cancel_scope.cancel(reason="a callback raised")

    # -- requests ----------------------------------------------------------------------------------

    async def notify(self, method: str, params: Any = None) -> None:
        raise LocalProtocolError(f"2026-07-28 defines no client notification {method} (only cancellation)")

    async def _traced_request(self, method: str, params: Any = None, **options: Any) -> Any:
        """:meth:`request` in a CLIENT span (the otel extra), over all of the call's rounds."""
        assert self._tracing is not None
        return await self._tracing.call(
            self.version, method, params, lambda traced: ModernSession.request(self, method, traced, **options)
        )

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        progress: ProgressCallback | None = None,
        progress_token: Any = None,
        timeout: float | None = None,
        max_timeout: float | None = None,
        log_level: str | None = None,
        retried: list[bool] | None = None,
    ) -> Any:
        """Send a request and return its result (decoded), after any rounds of input it needs.

        ``retried``: a list told (appended True) when the result came from a retry
        with input responses or a request state (such a result is never cached).

        Raises :class:`~mcp_ref.MCPError` for an error answer,
        :class:`InputRoundsExceeded` for a server that keeps asking,
        :class:`~mcp_ref.RequestTimeout`, :class:`~mcp_ref.ConnectionClosed`.
        """
        # [2026-07-28:basic/patterns/mrtr#27] the answers and the state belong to this call alone:
        # they live in its frame, never where another request could pick them up
        input_responses: dict[str, Any] | None = None
        request_state: str | None = None
        for round_ in range(self.max_input_rounds + 1):
            event = await self._one(
                method,
                params,
                progress=progress,
                progress_token=progress_token,
                timeout=timeout,
                max_timeout=max_timeout,
                log_level=log_level,
                input_responses=input_responses,
                request_state=request_state,
            )
            if type(event) is ResponseReceived:
                if retried is not None and round_:
                    retried.append(True)
                return event.result
            if type(event) is ErrorReceived:
                error = event.error
                raise MCPError(error.code, error.message, error.data)
            if type(event) is InvalidResponse:
                raise RemoteProtocolError(str(event.error))
            assert type(event) is InputRequiredReceived
            result = event.result
            requests = result.get("inputRequests")
            # [2026-07-28:basic/patterns/mrtr#3, #23, #24, #25] the exact state, untouched, or none when none came
            request_state = result.get("requestState")
            if requests:
                # [2026-07-28:basic/patterns/mrtr#21] the inputs are built before the retry
                input_responses = await self._fulfil(method, params, requests, round_)
            else:
                # [2026-07-28:basic/patterns/mrtr#22] none asked for: retried at once, with no answers
                input_responses = None
        # retries bounded (issue 28): a server that loops is an error, not a hang; [2026-07-28:client/sampling#24]
        # so the callbacks run only for our own requests, at most max_input_rounds times each: a server
        # cannot make us sample (or elicit) at a pace of its own
        raise InputRoundsExceeded(
            f"{method}: the server still asked for input after {self.max_input_rounds} retries; giving up"
        )

    async def start_request(self, method: str, params: Any = None, **options: Any) -> PendingModernRequest:
        """Send a request and get its handle (``await h.result()``, ``await h.cancel(reason)``),
        as ``Session.start_request`` does in a 2025 session; it runs in the client's nursery."""
        pending = PendingModernRequest(method)
        await self.nursery.start(pending._run, self, params, options)
        return pending

    async def _fulfil(self, method: str, params: Any, requests: Any, round_: int) -> dict[str, Any]:
        """Answer every input request with the application's callback, in order."""
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            if not isinstance(request, dict) or request.get("method") not in _INPUT_METHODS:
                raise RemoteProtocolError(f"input request {key!r} is not one a client answers: {request!r:.200}")
            kind = request["method"]
            handler = self.input_handlers.get(kind)
            if handler is None:
                # [2026-07-28:basic/patterns/mrtr#18] the server may only ask for what we declared
                raise RemoteProtocolError(
                    f"the server asked for {kind} (input request {key!r}), which this client did not declare"
                )
            raw = request.get("params")
            cls = m.PARAMS_TYPES.get(kind)
            try:
                typed = decode(raw if raw is not None else {}, cls) if cls is not None else raw
            except Exception as e:
                raise RemoteProtocolError(f"input request {key!r} ({kind}) has invalid params: {e}") from e
            ctx = InputRequestContext(key=key, method=method, params=params, round=round_, client=self.client)
            if self._tracing is None:
                answers[key] = await handler(ctx, typed)
            else:
                answers[key] = await self._tracing.answer(kind, key, handler, ctx, typed)
        return answers

    async def _one(
        self,
        method: str,
        params: Any,
        *,
        progress: ProgressCallback | None,
        progress_token: Any,
        timeout: float | None,
        max_timeout: float | None,
        log_level: str | None,
        input_responses: dict[str, Any] | None,
        request_state: str | None,
    ) -> Any:
        """One exchange (a new id each time); a stream that broke is sent again when safe."""
        for attempt in range(self.max_reissues + 1):
            try:
                return await self._exchange(
                    method,
                    params,
                    progress=progress,
                    progress_token=progress_token,
                    timeout=timeout,
                    max_timeout=max_timeout,
                    log_level=log_level,
                    input_responses=input_responses,
                    request_state=request_state,
                )
            except StreamBroken:
                # [2026-07-28:basic/transports/streamable-http] the request is lost with its stream;
                # re-issued with a new id where repeating it changes nothing
                if method not in REISSUE_SAFE or attempt == self.max_reissues:
                    raise
                log.info("%s: the response stream broke; sending it again with a new id", method)
        raise AssertionError("unreachable")

    async def _exchange(
        self,
        method: str,
        params: Any,
        *,
        progress: ProgressCallback | None,
        progress_token: Any,
        timeout: float | None,
        max_timeout: float | None,
        log_level: str | None,
        input_responses: dict[str, Any] | None,
        request_state: str | None,
    ) -> Any:
        token = progress_token if progress_token is not None else (True if progress is not None else None)
        # [2026-07-28:basic/patterns/mrtr#26] each exchange (a retry, a re-issue) gets a new id
        rid, data = self.engine.send_request(
            method,
            params,
            version=self.version,
            progress_token=token,
            log_level=log_level or self.log_level,
            input_responses=input_responses,
            request_state=request_state,
        )
        if self._tracing is not None:
            self._tracing.exchanged(rid)
        send, receive = trio.open_memory_channel[Any](math.inf)
        self._waiters[rid] = send
        # over HTTP in 2026-07-28 each request is a POST of its own: its answer is read here, in the
        # caller's task, and not handed over by the channel's task and receive_loop (two task switches
        # fewer a call, bench W11H); a progress callback keeps the channel's reader, so that the
        # application's code never runs inside the channel's reading
        direct = progress is None and getattr(self.channel, "answers_in_caller", False)
        # [2026-07-28:basic/patterns/cancellation#6, #8] every request has a timeout, this one's if given
        idle = self.request_timeout if timeout is None else timeout
        cap = self.max_request_timeout if max_timeout is None else max_timeout
        start = trio.current_time()
        answered = False
        try:
            sent: Any = None
            if direct:
                sent = await self._post(data, rid)
            else:
                await self._write(data)
            deadline = min(start + idle, start + cap)
            while True:
                with trio.move_on_at(deadline) as waiting:
                    if sent is not None:
                        reader = _AnswerReader(self, receive, waiting, idle, start + cap)
                        written, sent = sent, None
                        await self.channel.read_answer(written, data, rid, reader.put)  # type: ignore[attr-defined]
                        item = reader.item if reader.item is not None else await receive.receive()
                    else:
                        item = await receive.receive()
                    if isinstance(item, BaseException):
                        answered = True
                        raise item
                    if type(item) is ProgressReceived:
                        if progress is not None:
                            await progress(item.progress, item.total, item.message)
                        # [2026-07-28:basic/patterns/cancellation#9, #10] progress pushes the idle deadline,
                        # never past the maximum
                        deadline = min(trio.current_time() + idle, start + cap)
                        continue
                    answered = True
                    return item
                answered = True  # (timed out: we stop waiting and say so to the server)
                capped = trio.current_time() >= start + cap
                # [2026-07-28:basic/patterns/cancellation#7] timed out: cancelled, no longer awaited
                await self._cancel(rid, f"timed out after {cap if capped else idle:g} s")
                raise RequestTimeout(method, cap if capped else idle, "maximum" if capped else "idle")
        except trio.Cancelled:
            if not answered:
                await self._cancel(rid, "the caller cancelled")
            raise
        finally:
            self._waiters.pop(rid, None)
            if self.engine.outgoing(rid) is not None:
                self.engine.abandon(rid)

    async def _cancel(self, rid: Any, reason: str) -> None:
        """[2026-07-28:basic/patterns/cancellation#1, #5, basic/transports/stdio#10] tell the server
        (the HTTP channel closes the request's stream instead of sending this), shielded, within a
        short grace."""
        if self.engine.outgoing(rid) is None:
            return
        data = self.engine.send_cancel(rid, reason)
        with trio.move_on_after(self.cancel_grace) as scope:
            scope.shield = True
            try:
                await self._write(data)
            except ConnectionClosed:
                pass

    # -- subscriptions --------------------------------------------------------------------------

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: tuple[str, ...] | list[str] = (),
        ack_timeout: float | None = None,
    ) -> AsyncIterator[Subscription]:
        """[2026-07-28:basic/patterns/subscriptions] open a ``subscriptions/listen`` stream.

        Yields the :class:`Subscription` once the server acknowledged it;
        iterate it for ``(method, params)`` of each notification. Leaving
        the block cancels it (``notifications/cancelled`` on a pipe, the
        stream closed on HTTP).
        """
        requested: dict[str, Any] = {}
        if tools:
            requested["toolsListChanged"] = True
        if prompts:
            requested["promptsListChanged"] = True
        if resources:
            requested["resourcesListChanged"] = True
        if resource_uris:
            requested["resourceSubscriptions"] = list(resource_uris)
        if not requested:
            raise ValueError("listen to something: tools=, prompts=, resources= or resource_uris=")
        rid, data = self.engine.send_request(
            "subscriptions/listen", {"notifications": requested}, version=self.version, log_level=None
        )
        sub = Subscription(rid, requested)
        # [2026-07-28:basic/patterns/subscriptions#6] one entry per listen: several may be open at once
        self._subscriptions[rid] = sub
        try:
            await self._write(data)
            with trio.fail_after(self.request_timeout if ack_timeout is None else ack_timeout):
                await sub._ack.wait()
            if sub.acknowledged is None and sub._end is not None:
                raise sub._end
            yield sub
        finally:
            if self._subscriptions.pop(rid, None) is not None:
                sub._finish(None)
                await self._cancel(rid, "the client closed the subscription")
            elif self.engine.outgoing(rid) is not None:
                self.engine.abandon(rid)

    def _end_subscription(self, sub: Subscription, event: Any) -> None:
        self._subscriptions.pop(sub.id, None)
        if type(event) is ResponseReceived:
            # [2026-07-28:basic/patterns/subscriptions#7, #9] the completion result: a graceful end
            sub.graceful = True
            sub._finish(None)
        elif type(event) is ErrorReceived:
            sub._finish(MCPError(event.error.code, event.error.message, event.error.data))
        else:
            sub._finish(RemoteProtocolError(f"subscription {sub.id!r} ended with {event!r}"))


class _AnswerReader:
    """Takes what an HTTP channel reads of one request's answer in the caller's task
    (``read_answer``), and routes it as :meth:`ModernSession.receive_loop` routes what the
    channel's inbox gives; progress pushes the idle deadline (``scope``), the first other item
    for the request is kept in ``item``."""

    __slots__ = ("cap_at", "idle", "item", "receive", "scope", "session")

    def __init__(
        self,
        session: ModernSession,
        receive: trio.MemoryReceiveChannel[Any],
        scope: trio.CancelScope,
        idle: float,
        cap_at: float,
    ) -> None:
        self.session = session
        self.receive = receive
        self.scope = scope
        self.idle = idle
        self.cap_at = cap_at
        self.item: Any = None

    async def put(self, item: bytes | HTTPTransportError | MessageTooLarge) -> None:
        session = self.session
        if isinstance(item, bytes):
            for event in session.engine.receive_message(item):
                session._dispatch(event)
        else:
            session._route(item.request_id, item)
        while self.item is None:
            try:
                got = self.receive.receive_nowait()
            except trio.WouldBlock:
                return
            if type(got) is ProgressReceived:
                # progress pushes the idle deadline, never past the maximum, as in _exchange (no
                # callback: this path is taken without one)
                self.scope.deadline = min(trio.current_time() + self.idle, self.cap_at)
            else:
                self.item = got


# -- the era probe --------------------------------------------------------------------------------------

#: the first id of the probe (and of the modern requests after it): far from the ids a 2025
#: session starts at, so an answer to the probe arriving after a fallback is never taken for one
PROBE_FIRST_ID = 1 << 30


async def probe(
    channel: trio.abc.Channel[bytes],
    engine: StatelessEngine,
    *,
    timeout: float,
    versions: tuple[str, ...],
) -> ProbeResult:
    """[2026-07-28:basic/transports/stdio#16, #18, server/discover#2] ask ``server/discover`` first.

    A ``DiscoverResult`` makes the server modern (a version both speak is
    chosen); a recognised modern error (``UnsupportedProtocolVersion`` naming
    one of ours) too; any other error, or silence for ``timeout`` seconds,
    makes it legacy -- never keyed to one error code. Reads the channel
    directly: nothing else runs on it yet.
    """
    tried: list[str] = []
    version = versions[0]
    engine._next_id = max(engine._next_id, PROBE_FIRST_ID)
    for _ in range(len(versions) + 1):
        tried.append(version)
        rid, data = engine.send_request("server/discover", None, version=version)
        try:
            await channel.send(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            raise ConnectionClosed(f"the server's channel closed before it answered server/discover: {e}") from e
        event: ResponseReceived | ErrorReceived | InvalidResponse | None = None
        with trio.move_on_after(timeout):
            while event is None:
                try:
                    raw = await channel.receive()
                except trio.EndOfChannel:
                    raise ConnectionClosed("the server closed its output before answering server/discover") from None
                except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
                    raise ConnectionClosed(f"the server's channel closed: {e}") from e
                except HTTPTransportError as e:
                    engine.abandon(rid)
                    return ProbeResult(False, reason=f"server/discover failed at the HTTP level ({e})")
                for ev in engine.receive_message(raw):
                    if isinstance(ev, ResponseReceived | ErrorReceived | InvalidResponse) and ev.id == rid:
                        event = ev
                    else:
                        log.debug("before the probe's answer: %r", ev)
        if event is None:
            engine.abandon(rid)
            return ProbeResult(False, reason=f"no answer to server/discover within {timeout:g} s")
        if type(event) is ResponseReceived:
            result = event.result
            supported = _field(result, "supportedVersions", "supported_versions")
            if not isinstance(supported, list | tuple) or not supported:
                # not a DiscoverResult (some legacy servers answer any method with {}): legacy
                return ProbeResult(False, reason=f"server/discover answered without supportedVersions: {result!r:.100}")
            common = [x for x in versions if x in supported]
            if not common:
                # Decision: a server naming only revisions we do not speak in this era gets
                # initialize (it negotiates the earlier ones; its error is the clearer report)
                return ProbeResult(False, reason=f"server/discover names {list(supported)}, none of {list(versions)}")
            return ProbeResult(True, common[0], result)
        if type(event) is InvalidResponse:
            return ProbeResult(False, reason=f"server/discover answered with an invalid result: {event.error}")
        assert isinstance(event, ErrorReceived)
        error = event.error
        if error.code == v.UNSUPPORTED_PROTOCOL_VERSION:
            # [2026-07-28:basic/versioning#2] not this version: one it names, when it names one of ours
            named: dict[str, Any] = error.data if isinstance(error.data, dict) else {}
            listed = named.get("supported")
            supported = listed if isinstance(listed, list) else []
            choice = next((x for x in versions if x in supported and x not in tried), None)
            if choice is None and version in supported and tried.count(version) < 2:
                choice = version  # (it named the version we asked for: asked once more)
            if choice is None:
                # Decision: a server naming only earlier revisions (or none) is spoken to in one of
                # them, which initialize negotiates -- the version list is the server's own answer
                return ProbeResult(False, reason=f"server/discover: the server names {supported or 'no version'}")
            version = choice
            continue
        if error.code in v.MODERN_ERROR_CODES:
            # a modern server that refused this request for another reason: modern all the same
            return ProbeResult(True, version, None, reason=f"server/discover: {error.code} {error.message}")
        # [2026-07-28:basic/transports/stdio#17] any other error: a legacy server
        return ProbeResult(False, reason=f"server/discover answered {error.code} {error.message}")
    return ProbeResult(True, None, None, reason="the server kept refusing the versions it named")


def now() -> float:
    return time.monotonic()
