"""OpenTelemetry (the otel extra): a span per request on both sides, one trace across them
through ``_meta``; checked with the real OpenTelemetry SDK and its in-memory exporter."""

import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from mcp_ref import MCPError, RequestContext, Server, SessionConfig, ToolError
from mcp_ref.schema import ElicitResult
from mcp_ref.session.telemetry import TRACE_KEYS
from mcp_ref.testing import memory_session_pair

from ..conftest import ROOT

otel = pytest.importorskip("opentelemetry.sdk.trace", reason="the OpenTelemetry SDK is in the test extra")

from opentelemetry import baggage, context, trace  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402


class Traced:
    """A tracer provider of the test's own (never the global one: other tests' traffic stays
    untouched) and the spans it finished."""

    def __init__(self) -> None:
        self.provider = TracerProvider()
        self.exporter = InMemorySpanExporter()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.config = SessionConfig(telemetry=self.provider)

    def spans(self) -> dict[str, list[ReadableSpan]]:
        found: dict[str, list[ReadableSpan]] = {}
        for span in self.exporter.get_finished_spans():
            found.setdefault(span.name, []).append(span)
        return found

    def one(self, name: str, kind: trace.SpanKind) -> ReadableSpan:
        (span,) = [s for s in self.spans()[name] if s.kind is kind]
        return span


def server(traced: Traced) -> Server:
    server = Server("traced", "1.0")
    seen: dict[str, Any] = {}

    @server.tool()
    async def echo(ctx: RequestContext, text: str) -> str:
        seen["meta"] = ctx.meta
        seen["user"] = baggage.get_baggage("user")
        with traced.provider.get_tracer("app").start_as_current_span("inside the tool"):
            return text

    @server.tool()
    async def refuse(ctx: RequestContext) -> str:
        raise ToolError("no")

    @server.tool()
    async def ask(ctx: RequestContext) -> str:
        answer = await ctx.elicit_form("Your name?", {"name": {"type": "string"}})
        return str((answer.content or {}).get("name"))

    server.seen = seen  # type: ignore[attr-defined]
    return server


ERAS = pytest.mark.parametrize("era", ["legacy", "modern"])
VERSION = {"legacy": "2025-11-25", "modern": "2026-07-28"}


@pytest.mark.req("2026-07-28:basic/index#62")
@ERAS
async def test_a_span_per_request_on_both_sides_in_one_trace(era: str) -> None:
    # a 2025-11-25 session and 2026-07-28 requests alike
    traced = Traced()
    srv = server(traced)
    app = traced.provider.get_tracer("app")
    async with memory_session_pair(srv, server_config=traced.config, config=traced.config, era=era) as client:
        token = context.attach(baggage.set_baggage("user", "ada"))
        try:
            with app.start_as_current_span("the application's work") as work:
                assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
        finally:
            context.detach(token)
    sent = traced.one("tools/call echo", trace.SpanKind.CLIENT)
    served = traced.one("tools/call echo", trace.SpanKind.SERVER)
    inside = traced.one("inside the tool", trace.SpanKind.INTERNAL)
    trace_id = work.get_span_context().trace_id
    # one trace: the application's span > the client's request > the server's handling > the tool's own
    assert sent.parent is not None and sent.parent.span_id == work.get_span_context().span_id
    assert served.parent is not None and served.parent.span_id == sent.context.span_id and served.parent.is_remote
    assert inside.parent is not None and inside.parent.span_id == served.context.span_id
    assert {s.context.trace_id for s in (sent, served, inside)} == {trace_id}
    # the context travelled in _meta, in the W3C formats
    meta = srv.seen["meta"]  # type: ignore[attr-defined]
    flags = int(sent.context.trace_flags)
    assert flags & 1 and meta["traceparent"] == f"00-{trace_id:032x}-{sent.context.span_id:016x}-{flags:02x}"
    assert meta["baggage"] == "user=ada" and srv.seen["user"] == "ada"  # type: ignore[attr-defined]
    for span in (sent, served):
        assert span.attributes is not None
        assert span.attributes["mcp.method.name"] == "tools/call"
        assert span.attributes["gen_ai.tool.name"] == "echo"
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["mcp.protocol.version"] == VERSION[era]
        assert span.status.status_code is trace.StatusCode.UNSET
    assert sent.attributes is not None and served.attributes is not None
    assert sent.attributes["jsonrpc.request.id"] == served.attributes["jsonrpc.request.id"]
    if era == "legacy":
        assert sent.attributes["jsonrpc.request.id"] == "1"
    # how the client opened (initialize; server/discover) and tools/list (the output schema
    # learnt for the call) are requests too
    assert {"initialize" if era == "legacy" else "server/discover", "tools/list"} <= set(traced.spans())


@ERAS
async def test_failures_are_recorded_on_both_sides(era: str) -> None:
    traced = Traced()
    async with memory_session_pair(
        server(traced), server_config=traced.config, config=traced.config, era=era
    ) as client:
        assert (await client.call_tool("refuse")).is_error
        with pytest.raises(MCPError):
            await client.call_tool("nothing-here")
    for kind in (trace.SpanKind.CLIENT, trace.SpanKind.SERVER):
        refused = traced.one("tools/call refuse", kind)
        assert refused.attributes is not None and refused.attributes["error.type"] == "tool_error"
        assert refused.status.status_code is trace.StatusCode.ERROR
        unknown = traced.one("tools/call nothing-here", kind)
        assert unknown.attributes is not None
        assert unknown.attributes["error.type"] == unknown.attributes["rpc.response.status_code"] == "-32602"
        assert unknown.status.status_code is trace.StatusCode.ERROR


async def test_a_request_the_server_sends_while_handling_one_is_in_its_trace() -> None:
    traced = Traced()

    async def traveller(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Ada"})

    async with memory_session_pair(
        server(traced), server_config=traced.config, config=traced.config, elicitation=traveller, era="legacy"
    ) as client:
        assert (await client.call_tool("ask")).text == "Ada"
    call = traced.one("tools/call ask", trace.SpanKind.SERVER)
    asked = traced.one("elicitation/create", trace.SpanKind.CLIENT)  # sent by the server
    answered = traced.one("elicitation/create", trace.SpanKind.SERVER)  # handled by the client
    assert asked.parent is not None and asked.parent.span_id == call.context.span_id
    assert answered.parent is not None and answered.parent.span_id == asked.context.span_id
    assert call.context.trace_id == asked.context.trace_id == answered.context.trace_id


async def test_a_multi_round_trip_call_is_one_client_span_over_a_server_span_per_round() -> None:
    # 2026-07-28: the server answers with an InputRequiredResult (not a failure), the client
    # answers the input request under its call's span and sends the request again, in the
    # same trace; the call's span ends with the final result
    traced = Traced()

    async def traveller(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Ada"})

    async with memory_session_pair(
        server(traced), server_config=traced.config, config=traced.config, elicitation=traveller, era="modern"
    ) as client:
        assert (await client.call_tool("ask")).text == "Ada"
    call = traced.one("tools/call ask", trace.SpanKind.CLIENT)
    rounds = [s for s in traced.spans()["tools/call ask"] if s.kind is trace.SpanKind.SERVER]
    answered = traced.one("elicitation/create", trace.SpanKind.INTERNAL)
    assert len(rounds) == 2
    for served in rounds:
        assert served.parent is not None and served.parent.span_id == call.context.span_id
        assert served.status.status_code is trace.StatusCode.UNSET
    assert answered.parent is not None and answered.parent.span_id == call.context.span_id
    assert answered.attributes is not None and answered.attributes["mcp.input_request.key"]
    # the call's id is that of the round that got the result
    assert call.attributes is not None and rounds[-1].attributes is not None
    assert call.attributes["jsonrpc.request.id"] == rounds[-1].attributes["jsonrpc.request.id"]
    assert call.attributes["jsonrpc.request.id"] != rounds[0].attributes["jsonrpc.request.id"]  # type: ignore[index]
    assert {s.context.trace_id for s in (call, answered, *rounds)} == {call.context.trace_id}


@ERAS
async def test_nothing_is_added_without_a_tracer_provider_or_when_turned_off(era: str) -> None:
    # the API alone (no SDK configured: the global provider is the no-op one) and
    # telemetry=False both leave _meta as the caller made it (a 2026-07-28 request's has
    # only what the revision puts there)
    traced = Traced()
    for config in (SessionConfig(), SessionConfig(telemetry=False)):
        srv = server(traced)
        async with memory_session_pair(srv, server_config=config, config=config, era=era) as client:
            await client.call_tool("echo", {"text": "hi"})
        assert not set(srv.seen["meta"]) & set(TRACE_KEYS)  # type: ignore[attr-defined]
        assert era == "modern" or srv.seen["meta"] == {}  # type: ignore[attr-defined]
    assert set(traced.spans()) == {"inside the tool"}  # the tool's own, with no request span around


def test_without_the_api_nothing_is_imported() -> None:
    # opentelemetry-api absent (as a lookup that finds nothing): a session serves and calls
    # as before, nothing of OpenTelemetry is imported, and no session has tracing
    code = textwrap.dedent(
        """
        import importlib.util, sys
        real = importlib.util.find_spec
        importlib.util.find_spec = lambda name, *a: None if name.split(".")[0] == "opentelemetry" else real(name, *a)
        import trio
        import mcp_ref
        from mcp_ref.testing import memory_session_pair

        server = mcp_ref.Server("plain")

        @server.tool()
        async def echo(ctx: mcp_ref.RequestContext, text: str) -> str:
            if ctx.revision == "2025-11-25":
                assert ctx.session._tracing is None
            else:
                assert ctx.runtime.tracing is None
            return text

        async def main():
            for era in ("legacy", "modern"):
                async with memory_session_pair(server, era=era) as client:
                    assert client.era == era and client.session._tracing is None
                    assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"

        trio.run(main)
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


def test_the_instrumentation_can_be_turned_off_the_opentelemetry_way(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_ref.session import telemetry

    monkeypatch.setenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "requests, mcp_ref")
    assert not telemetry._available()
    monkeypatch.setenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "requests")
    assert telemetry._available()


def test_a_session_traces_when_a_tracer_provider_is_configured_as_it_starts() -> None:
    from mcp_ref.session import telemetry

    # this process never configures the global provider (the API's proxy stands in): untraced
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert telemetry.tracing() is None and telemetry.tracing(False) is None
    given = telemetry.tracing(TracerProvider())
    assert given is not None and given.on()
