"""OpenTelemetry: a span per request on both sides, trace context through ``_meta``.

With ``opentelemetry-api`` installed (the ``otel`` extra) every request a
session sends is a CLIENT span and every request it handles a SERVER span,
named and described as the OpenTelemetry semantic conventions for MCP ask
(``tools/call get_weather``; ``mcp.method.name``, ``gen_ai.tool.name``,
``jsonrpc.request.id``, ``mcp.protocol.version``, ``error.type``,
``rpc.response.status_code``). The sender puts the span's context in the
request's ``_meta`` (``traceparent``, ``tracestate``, ``baggage``: W3C Trace
Context and Baggage, [2026-07-28:basic/index#62]) and the receiver continues
the trace from it; ``_meta`` is open in the 2025 revisions too, so this works
with every peer. A handler's own spans are children of its request's span, and
a request it sends on (sampling, elicitation) is a child too.

In 2026-07-28 there is no session: a call on the client is one CLIENT span
over all of its rounds (each retry after an ``InputRequiredResult`` carries the
span's context; the client's answer to an input request is a span under it),
and the server makes a SERVER span per request it handles, a round that stops
for input included (not a failure). The server decides when its 2026-07-28
runtime is made (its first such request; again when its registrations change)
and, on a pipe, when the channel opens.

A session that starts before a tracer provider is configured (the
OpenTelemetry SDK) takes the plain path: no span, nothing added to ``_meta``. Without ``opentelemetry-api``,
nothing is imported and a session does no more than check one attribute per
request (bench/README.md has the A/B). ``SessionConfig(telemetry=False)``
turns it off for a session; ``SessionConfig(telemetry=provider)`` uses that
``TracerProvider`` instead of the global one.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from ..errors import MCPError, ProtocolError

# (the session, its request context and a request's handle are typed Any here: this module is
# imported by theirs, session/core.py)

__all__ = ["Tracing", "tracing", "TRACE_KEYS"]

#: the ``_meta`` keys of trace context propagation (basic/index, general fields)
TRACE_KEYS = ("traceparent", "tracestate", "baggage")

#: the tracing of the global tracer provider, made at the first session (None: no
#: opentelemetry-api); empty until then
_GLOBAL: list[Tracing | None] = []


def tracing(setting: Any = None) -> Tracing | None:
    """The tracing a session with ``SessionConfig(telemetry=setting)`` starting now does,
    or None (no opentelemetry-api, turned off, or no tracer provider configured yet)."""
    if setting is False:
        return None
    if setting is not None:
        return Tracing(setting)
    if not _GLOBAL:
        _GLOBAL.append(Tracing() if _available() else None)
    found = _GLOBAL[0]
    return found if found is not None and found.on() else None


def _available() -> bool:
    # the API, unless the OpenTelemetry way of turning an instrumentation off names us
    disabled = os.environ.get("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "")
    if "mcp_ref" in [name.strip() for name in disabled.split(",")]:
        return False
    return importlib.util.find_spec("opentelemetry") is not None and _has_api()


def _has_api() -> bool:
    try:
        return importlib.util.find_spec("opentelemetry.trace") is not None
    except ModuleNotFoundError:
        return False


class Tracing:
    """Spans for one tracer provider (None: the global one, resolved when spans start)."""

    def __init__(self, provider: Any = None) -> None:
        from opentelemetry import context, propagate, trace

        self._trace = trace
        self._context = context
        self._propagate = propagate
        self._tracer = trace.get_tracer("mcp_ref", _version(), tracer_provider=provider)
        self._provider = provider
        #: providers whose spans do nothing: the API's own, before an SDK is configured
        self._idle = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
        self._on = False
        self._client = trace.SpanKind.CLIENT
        self._server = trace.SpanKind.SERVER

    def on(self) -> bool:
        """Whether spans are recorded: a tracer provider is configured (an SDK's, or one
        given). Asked once per session, when it starts: without one its requests take the
        plain path (the API's no-op spans and empty context would cost a quarter of a call,
        bench W1, and add nothing to ``_meta`` anyway)."""
        if self._on:
            return True
        provider = self._provider if self._provider is not None else self._trace.get_tracer_provider()
        if isinstance(provider, self._idle):
            return False
        self._on = True  # (the global provider is set once: it stays)
        return True

    # -- the sender ----------------------------------------------------------------------------

    async def request(self, session: Any, method: str, params: Any, start: Callable[[Any], Awaitable[Any]]) -> Any:
        """Send ``method`` in a CLIENT span whose context goes in ``params._meta``;
        ``start(params)`` sends it (the session's funnel) and gives its handle."""
        name, attributes = _describe(session, method, params)
        with self._tracer.start_as_current_span(name, kind=self._client, attributes=attributes) as span:
            carrier: dict[str, str] = {}
            self._propagate.inject(carrier)
            if carrier:
                params = _with_meta(method, params, carrier)
            pending = await start(params)
            span.set_attribute("jsonrpc.request.id", str(pending.id))
            try:
                result = await pending.result()
            except MCPError as e:
                _failed(span, self._trace, str(e.code), e.message, code=e.code)
                raise
            if getattr(result, "is_error", None) is True:
                _failed(span, self._trace, "tool_error", "the tool reported an error")
            return result

    async def call(self, revision: str, method: str, params: Any, run: Callable[[Any], Awaitable[Any]]) -> Any:
        """A 2026-07-28 call in a CLIENT span: ``run(params)`` makes it, every round of it
        (an ``InputRequiredResult`` is answered and the request sent again) carrying the
        span's context in its ``_meta``; the span ends with the final result. Its
        ``jsonrpc.request.id`` is that of the round that got it (:meth:`exchanged`)."""
        name, attributes = _describe(None, method, params, revision)
        with self._tracer.start_as_current_span(name, kind=self._client, attributes=attributes) as span:
            carrier: dict[str, str] = {}
            # [2026-07-28:basic/index#62] the W3C Trace Context and Baggage formats (the propagators')
            self._propagate.inject(carrier)
            if carrier:
                params = _with_meta(method, params, carrier)
            try:
                result = await run(params)
            except MCPError as e:
                _failed(span, self._trace, str(e.code), e.message, code=e.code)
                raise
            if getattr(result, "is_error", None) is True:
                _failed(span, self._trace, "tool_error", "the tool reported an error")
            return result

    async def answer(
        self, method: str, key: str, callback: Callable[[Any, Any], Awaitable[Any]], ctx: Any, params: Any
    ) -> Any:
        """A 2026-07-28 input request answered by the client's ``callback(ctx, params)``, in a
        span under the call's: what a 2025 server->client request's SERVER span is."""
        attributes = {"mcp.method.name": method, "mcp.input_request.key": key}
        with self._tracer.start_as_current_span(method, attributes=attributes):
            return await callback(ctx, params)

    def exchanged(self, request_id: Any) -> None:
        """The id a round of the current call went with (each round has its own)."""
        self._trace.get_current_span().set_attribute("jsonrpc.request.id", str(request_id))

    # -- the receiver --------------------------------------------------------------------------

    async def handle(self, ctx: Any, handler: Callable[[Any, Any], Awaitable[Any]], params: Any) -> Any:
        """Run ``handler(ctx, params)`` in a SERVER span continuing the sender's trace."""
        meta = getattr(params, "meta", None)
        parent = None
        if meta and any(key in meta for key in TRACE_KEYS):
            # [2026-07-28:basic/index#62] W3C Trace Context and Baggage; a value that is not is
            # ignored by the propagator (the request is served, untraced by the sender) -- index#meta
            parent = self._propagate.extract({k: v for k, v in meta.items() if k in TRACE_KEYS and type(v) is str})
        # a 2026-07-28 request has no session: its context says its revision itself
        session = ctx.session if "session" in vars(ctx) else None
        name, attributes = _describe(session, ctx.method, params, getattr(ctx, "revision", None))
        attributes["jsonrpc.request.id"] = str(ctx.request_id)
        # the sender's context is the handler's (its baggage too), in the handler's own task
        token = self._context.attach(parent) if parent is not None else None
        try:
            with self._tracer.start_as_current_span(name, kind=self._server, attributes=attributes) as span:
                try:
                    result = await handler(ctx, params)
                except (MCPError, ProtocolError) as e:
                    _failed(span, self._trace, str(int(e.code)), e.message, code=int(e.code))
                    raise
                if getattr(result, "is_error", None) is True:
                    _failed(span, self._trace, "tool_error", "the tool reported an error")
                return result
        finally:
            if token is not None:
                self._context.detach(token)


def _version() -> str | None:
    """mcp_ref's version as installed (None in a checkout that is not)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcp_ref")
    except PackageNotFoundError:
        return None


def _describe(session: Any, method: str, params: Any, revision: Any = None) -> tuple[str, dict[str, Any]]:
    """The span's name and attributes (semantic conventions for MCP)."""
    attributes: dict[str, Any] = {"mcp.method.name": method}
    name = method
    target = getattr(params, "name", None) if method in ("tools/call", "prompts/get") else None
    if type(target) is str:
        name = f"{method} {target}"
        if method == "tools/call":
            attributes["gen_ai.tool.name"] = target
            attributes["gen_ai.operation.name"] = "execute_tool"
        else:
            attributes["gen_ai.prompt.name"] = target
    uri = getattr(params, "uri", None)
    if type(uri) is str:
        attributes["mcp.resource.uri"] = uri
    if session is not None:
        revision = getattr(session.connection, "negotiated_version", None) or session.connection.revision
        session_id = getattr(session.channel, "session_id", None)
        if type(session_id) is str:
            attributes["mcp.session.id"] = session_id
    if type(revision) is str:
        attributes["mcp.protocol.version"] = revision
    return name, attributes


def _failed(span: Any, trace: Any, error_type: str, message: str, *, code: int | None = None) -> None:
    span.set_attribute("error.type", error_type)
    if code is not None:
        span.set_attribute("rpc.response.status_code", str(code))
    span.set_status(trace.Status(trace.StatusCode.ERROR, message))


def _with_meta(method: str, params: Any, carrier: dict[str, str]) -> Any:
    """``params`` with the trace context added to its ``_meta`` (keys the caller set stay)."""
    if params is None:
        from ..schema.messages import PARAMS_TYPES

        cls = PARAMS_TYPES.get(method)
        if cls is None:
            return None
        try:
            return cls(meta=carrier)
        except TypeError:
            return None  # params with required fields: none to carry the context
    if isinstance(params, dict):
        meta = dict(params.get("_meta") or {})
        for key, value in carrier.items():
            meta.setdefault(key, value)
        return {**params, "_meta": meta}
    if not attrs.has(type(params)) or not hasattr(params, "meta"):
        return params
    meta = dict(params.meta or {})
    for key, value in carrier.items():
        meta.setdefault(key, value)
    return attrs.evolve(params, meta=meta)
