"""Streamable HTTP in its 2026-07-28 shape: no sessions, a POST per request, headers that
mirror the body -- beside the 2025 shape, on the same endpoint."""

import json
from typing import Any

import h11
import pytest
import trio

from mcp_ref import RequestContext, Server
from mcp_ref.basic.lifecycle import Role
from mcp_ref.basic.transports.http_server import serve_http
from mcp_ref.errors import UnsupportedProtocolVersion
from mcp_ref.exchange import StatelessEngine
from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation
from mcp_ref.session.http import open_http_client

from .test_streamable_http import (
    ACCEPT_BOTH,
    INIT,
    INIT_PARAMS,
    exchange,
    hanging_server,
    http_server,
    raw,
    sse_messages,
    start_session,
)

V = "2026-07-28"


def make_server() -> Server:
    server = Server("http-modern", "3", state_key=b"s" * 32)

    @server.tool(description="echo")
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text"))

    @server.tool(description="progress, then the answer")
    async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, 2)
        await ctx.log("info", "half way")
        return "done"

    @server.tool(description="needs the model")
    async def needs_sampling(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        from mcp_ref.schema import CreateMessageRequestParams, SamplingMessage, TextContent

        await ctx.sample(
            CreateMessageRequestParams(
                messages=[SamplingMessage(role="user", content=TextContent(text="?"))], max_tokens=5
            )
        )
        return "never"

    @server.tool(
        description="routes by region",
        input_schema={"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
    )
    async def routed(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return f"ran in {arguments.get('region')}"

    return server


def post(
    method: str,
    params: Any = None,
    *,
    caps: ClientCapabilities | None = None,
    extra: dict[str, str] | None = None,
    **options: Any,
) -> tuple[dict[str, str], dict[str, Any]]:
    client = StatelessEngine(
        Role.CLIENT, info=Implementation(name="t", version="0"), capabilities=caps or ClientCapabilities()
    )
    rid, data = client.send_request(method, params, **options)
    headers = {**ACCEPT_BOTH, **{k.lower(): x for k, x in client.http_headers(rid).items()}, **(extra or {})}
    return headers, json.loads(data)


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#16", "2026-07-28:basic/versioning#11")
async def test_a_modern_post_is_answered_with_json_and_no_session() -> None:
    async with http_server(make_server()) as info:
        headers, body = post("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        status, rheaders, data = await raw(info.url, "POST", headers, body)
    assert status == 200 and rheaders["content-type"] == "application/json" and "mcp-session-id" not in rheaders
    answer = json.loads(data)
    assert answer["id"] == body["id"] and answer["result"]["content"][0]["text"] == "hi"
    assert answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "http-modern"


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#18",
    "2026-07-28:basic/transports/streamable-http#19",
    "2026-07-28:basic/transports/streamable-http#21",
    "2026-07-28:basic/transports/streamable-http#22",
)
async def test_notifications_before_the_answer_make_an_sse_stream_the_answer_ends() -> None:
    async with http_server(make_server()) as info:
        headers, body = post("tools/call", {"name": "slow", "arguments": {}}, progress_token="p", log_level="info")
        status, rheaders, data = await raw(info.url, "POST", headers, body)
    assert status == 200 and rheaders["content-type"] == "text/event-stream"
    assert rheaders["x-accel-buffering"] == "no"
    messages = sse_messages(data)
    assert [m.get("method") for m in messages] == ["notifications/progress", "notifications/message", None]
    assert messages[-1]["result"]["content"][0]["text"] == "done"
    assert b"id:" not in data  # no event ids: nothing to resume


@pytest.mark.req(
    "2026-07-28:basic/index#53",
    "2026-07-28:basic/index#54",
    "2026-07-28:basic/index#58",
    "2026-07-28:basic/transports/streamable-http#27",
    "2026-07-28:basic/transports/streamable-http#28",
    "2026-07-28:basic/transports/streamable-http#29",
    "2026-07-28:basic/transports/streamable-http#61",
    "2026-07-28:basic/transports/streamable-http#65",
)
async def test_refusals_have_their_status_and_code() -> None:
    async with http_server(make_server()) as info:
        cases: list[tuple[dict[str, str], dict[str, Any], int, int]] = []
        headers, body = post("tools/list")
        no_meta = {**body, "params": {}}
        cases.append((headers, no_meta, 400, -32602))
        cases.append(({**headers, "mcp-protocol-version": "2025-11-25"}, body, 400, -32020))
        cases.append(({k: x for k, x in headers.items() if k != "mcp-protocol-version"}, body, 400, -32020))
        odd = {
            **body,
            "params": {"_meta": {**body["params"]["_meta"], "io.modelcontextprotocol/protocolVersion": "v9"}},
        }
        cases.append(({**headers, "mcp-protocol-version": "v9"}, odd, 400, -32022))
        h, b = post("tools/call", {"name": "echo"})
        cases.append(({**h, "mcp-name": "other"}, b, 400, -32020))
        h, b = post("tools/call", {"name": "needs_sampling", "arguments": {}})
        cases.append((h, b, 400, -32021))
        h, b = post("tools/call", {"name": "routed", "arguments": {"region": "eu"}})
        cases.append((h, b, 400, -32020))  # the value is in the body, its header is not
        for method in ("ping", "logging/setLevel", "no/such"):
            h, b = post("tools/list")
            cases.append(({**h, "mcp-method": method}, {**b, "method": method}, 404, -32601))
        for headers, body, status, code in cases:
            got, _, data = await raw(info.url, "POST", headers, body)
            answer = json.loads(data)
            assert (got, answer["error"]["code"], answer["id"]) == (status, code, body["id"]), (body, answer)


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#60", "2026-07-28:basic/transports/streamable-http#54")
async def test_param_headers_that_match_are_accepted_even_base64() -> None:
    async with http_server(make_server()) as info:
        headers, body = post("tools/call", {"name": "routed", "arguments": {"region": "zürich"}})
        headers["mcp-param-region"] = "=?base64?" + __import__("base64").b64encode("zürich".encode()).decode() + "?="
        status, _, data = await raw(info.url, "POST", headers, body)
    assert status == 200 and json.loads(data)["result"]["content"][0]["text"] == "ran in zürich"


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#37",
    "2026-07-28:basic/transports/streamable-http#38",
    "2026-07-28:basic/transports/streamable-http#39",
    "2026-07-28:basic/transports/streamable-http#40",
    "2026-07-28:basic/transports/streamable-http#41",
    "2026-07-28:basic/transports/streamable-http#42",
    "2026-07-28:basic/transports/streamable-http#43",
    "2026-07-28:basic/transports/streamable-http#44",
)
def test_a_tool_with_an_invalid_header_annotation_is_refused_at_registration() -> None:
    server = Server("s")
    with pytest.raises(ValueError, match="x-mcp-header"):

        @server.tool(input_schema={"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}})
        async def bad(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return ""


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#72")
async def test_get_and_delete_without_a_session_are_405_and_the_2025_shape_stays() -> None:
    async with http_server(make_server()) as info:
        assert (await raw(info.url, "GET", {"accept": "text/event-stream"}))[0] == 405
        assert (await raw(info.url, "DELETE"))[0] == 405
        session = await start_session(info.url)  # a 2025-11-25 client on the same endpoint
        status, _, data = await raw(info.url, "DELETE", session)
        assert status == 200


@pytest.mark.req(
    "2026-07-28:basic/versioning#10",
    "2026-07-28:basic/transports/streamable-http#72",
    "2026-07-28:basic/transports/streamable-http#11",
)
async def test_a_server_of_modern_revisions_only_refuses_a_2025_initialize_naming_its_versions() -> None:
    async with http_server(Server("modern only", supported_versions=())) as info:
        for version in ("2025-11-25", "2025-06-18"):
            init = {**INIT, "params": {**INIT_PARAMS, "protocolVersion": version}}
            status, rheaders, data = await raw(info.url, "POST", ACCEPT_BOTH, init)
            error = json.loads(data)["error"]
            # as over stdio: the version is refused, and the answer names the ones served (not a
            # missing MCP-Protocol-Version header, which a 2025 client could do nothing about)
            assert (status, error["code"]) == (400, -32022) and "mcp-session-id" not in rheaders
            assert error["data"] == {"supported": [V], "requested": version}
            assert V in error["message"] and version in error["message"]
        # a stray session id is ignored: a 2026-07-28 request with one is served, and none is minted
        headers, body = post("server/discover")
        status, rheaders, data = await raw(info.url, "POST", {**headers, "mcp-session-id": "s1"}, body)
        assert status == 200 and "result" in json.loads(data) and "mcp-session-id" not in rheaders
        # a 2025 request of a session that cannot exist here is refused in the 2026 shape
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        session = {**ACCEPT_BOTH, "mcp-session-id": "s1", "mcp-protocol-version": "2025-11-25"}
        status, rheaders, data = await raw(info.url, "POST", session, call)
        assert status == 400 and json.loads(data)["error"]["code"] == -32602
        status, _, data = await raw(info.url, "POST", session, [call])
        assert status == 400 and json.loads(data)["error"]["code"] == -32600
        # GET and DELETE are 405 with a session id too: there are no sessions to stream or end
        assert (await raw(info.url, "GET", {"accept": "text/event-stream", "mcp-session-id": "s1"}))[0] == 405
        assert (await raw(info.url, "DELETE", {"mcp-session-id": "s1"}))[0] == 405
    # a server of both eras keeps its sessions (and GET/DELETE on them)
    async with http_server(make_server()) as info:
        session = await start_session(info.url)
        assert (await raw(info.url, "DELETE", session))[0] == 200


@pytest.mark.req("2026-07-28:basic/versioning#10", "2026-07-28:basic/transports/streamable-http#71")
async def test_our_client_pinned_to_2025_says_which_versions_a_modern_only_server_offers() -> None:
    async with http_server(Server("modern only", supported_versions=())) as info:
        # (with the 2024-11-05 fallback on, as connect() has it: a 400 carrying a 2026-07-28 error is
        # the server's answer, not a sign of the old transport, whose GET would only meet a 405)
        for pin in ({"era": "legacy"}, {"protocol_version": "2025-06-18"}, {"era": "legacy", "legacy_fallback": True}):
            with pytest.raises(UnsupportedProtocolVersion, match="it supports 2026-07-28; open with era='auto'") as e:
                async with open_http_client(info.url, **pin):
                    pass
            assert e.value.server_versions == (V,)
        async with open_http_client(info.url) as client:  # the default finds 2026-07-28
            assert client.protocol_version == V


async def test_our_client_pinned_to_2026_says_which_version_a_2025_only_server_speaks() -> None:
    # the reverse of the test above, the same typed error (it was ConnectionClosed, trial28c N4)
    async with http_server(Server("old only", modern_versions=())) as info:
        with pytest.raises(UnsupportedProtocolVersion, match=r"^protocol_version='2026-07-28' was asked") as e:
            async with open_http_client(info.url, protocol_version=V):
                pass
        assert e.value.server_versions == ("2025-11-25",) and "it speaks 2025-11-25" in str(e.value)


def test_an_unknown_revision_is_refused_when_the_server_is_made() -> None:
    # trial28c N2: a typo in supported_versions used to pass, then fail the first 2025 initialize
    with pytest.raises(ValueError, match=r"supported_versions: '2025-13-01' is not .*known: 2026-07-28, 2025-11-25"):
        Server("s", supported_versions=("2025-13-01", "2025-11-25"))
    with pytest.raises(ValueError, match=r"modern_versions: '2027-01-01' is not .*known: 2026-07-28\)"):
        Server("s", modern_versions=("2027-01-01",))
    with pytest.raises(TypeError, match="a tuple of protocol revisions, not the string '2025-11-25'"):
        Server("s", supported_versions="2025-11-25")  # type: ignore[arg-type]
    # a 2026 revision among supported_versions is taken (modern_versions serves it), as before
    assert Server("s", supported_versions=(V, "2025-06-18")).supported_versions == ("2025-06-18",)


async def test_a_session_that_fails_ends_alone_its_request_answered_and_the_server_serves_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a bug behind one HTTP session (here: versions made unservable after the checks) used to end
    # serve_http, so one peer's initialize took the server from every client (trial28c N2)
    server = make_server()
    server.supported_versions = ("2025-13-01",)
    async with http_server(server) as info:
        status, _, data = await raw(info.url, "POST", ACCEPT_BOTH, INIT)
        answers = [json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: {")]
        assert status == 200 and answers == [
            {"jsonrpc": "2.0", "id": INIT["id"], "error": {"code": -32603, "message": "Internal error"}}
        ]
        failures = [r for r in caplog.records if r.getMessage().startswith("HTTP session ")]
        assert [r.exc_info is not None for r in failures if "failed" in r.getMessage()] == [True]
        headers, body = post("server/discover")
        status, _, data = await raw(info.url, "POST", headers, body)
        assert status == 200 and "result" in json.loads(data)


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#13")
async def test_a_notification_is_accepted_with_202() -> None:
    async with http_server(make_server()) as info:
        status, _, data = await raw(
            info.url,
            "POST",
            ACCEPT_BOTH,
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        )
    assert status == 202 and data == b""


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#23",
    "2026-07-28:basic/transports/streamable-http#24",
    "2026-07-28:basic/patterns/cancellation#4",
)
async def test_closing_the_connection_cancels_the_request() -> None:
    server, started, cancelled = hanging_server()
    async with http_server(server) as info:
        headers, body = post("tools/call", {"name": "hang", "arguments": {}})
        data = json.dumps(body).encode()
        conn = h11.Connection(h11.CLIENT)
        hdrs = {"host": f"127.0.0.1:{info.port}", **headers, "content-type": "application/json"}
        hdrs["content-length"] = str(len(data))
        stream = await trio.open_tcp_stream("127.0.0.1", info.port)
        request = conn.send(h11.Request(method="POST", target="/mcp", headers=list(hdrs.items()))) or b""
        await stream.send_all(
            request + (conn.send(h11.Data(data=data)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
        )
        with trio.fail_after(5):
            await started.wait()
        await stream.aclose()  # the client gives up: nothing was answered yet
        with trio.fail_after(5):
            await cancelled.wait()


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#2", "2026-07-28:basic/index#61")
async def test_subscriptions_listen_is_a_long_stream_of_tagged_changes() -> None:
    server = make_server()
    async with http_server(server, sse_keepalive=0.2) as info:
        headers, body = post("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        async with exchange(info.url, "POST", headers, body) as ex:
            assert ex.headers["content-type"] == "text/event-stream"
            (ack,) = [json.loads(e.data) for e in await ex.events()]
            assert ack["method"] == "notifications/subscriptions/acknowledged"

            @server.tool(description="new")
            async def added(ctx: RequestContext, arguments: dict[str, Any]) -> str:
                return ""

            (change,) = [json.loads(e.data) for e in await ex.events() if e.data]
            assert change["method"] == "notifications/tools/list_changed"
            assert change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == body["id"]
            server.changes.close()
            rest = [json.loads(e.data) for e in await ex.rest() if e.data]
            assert rest[-1]["result"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": body["id"]}


async def test_mrtr_over_http_round_trip() -> None:
    async with http_server(make_server()) as info:
        caps = ClientCapabilities(sampling={})
        headers, body = post("tools/call", {"name": "needs_sampling", "arguments": {}}, caps=caps)
        status, _, data = await raw(info.url, "POST", headers, body)
        first = json.loads(data)["result"]
        assert status == 200 and first["resultType"] == "input_required"
        answer = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
        headers, body = post(
            "tools/call",
            {"name": "needs_sampling", "arguments": {}},
            caps=caps,
            input_responses={"sampling-1": answer},
            request_state=first["requestState"],
        )
        status, _, data = await raw(info.url, "POST", headers, body)
    assert json.loads(data)["result"]["content"][0]["text"] == "never"


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#7", "2026-07-28:basic/patterns/subscriptions#8")
async def test_a_server_shutting_down_ends_its_subscriptions_gracefully() -> None:
    server = make_server()
    async with trio.open_nursery() as nursery:
        info = await nursery.start(lambda task_status: serve_http(server, task_status=task_status))
        headers, body = post("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        async with exchange(info.url, "POST", headers, body) as ex:
            await ex.events()  # the acknowledgement
            nursery.start_soon(info.aclose, 5.0)
            rest = [json.loads(e.data) for e in await ex.rest() if e.data]
            assert rest == [
                {
                    "jsonrpc": "2.0",
                    "id": body["id"],
                    "result": {
                        "resultType": "complete",
                        "_meta": {"io.modelcontextprotocol/subscriptionId": body["id"]},
                    },
                }
            ]
            assert ex.complete


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#62")
async def test_header_names_are_compared_without_case() -> None:
    async with http_server(make_server()) as info:
        headers, body = post("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        shouting = {k.upper(): x for k, x in headers.items()}
        status, _, data = await raw(info.url, "POST", shouting, body)
    assert status == 200 and json.loads(data)["result"]["content"][0]["text"] == "x"


async def test_json_response_mode_answers_with_json_only() -> None:
    async with http_server(make_server(), json_response=True) as info:
        headers, body = post("tools/call", {"name": "slow", "arguments": {}}, progress_token="p", log_level="info")
        status, rheaders, data = await raw(info.url, "POST", headers, body)
    assert status == 200 and rheaders["content-type"] == "application/json"
    assert json.loads(data)["result"]["content"][0]["text"] == "done"


async def test_requests_past_the_limit_are_503() -> None:
    server, started, _ = hanging_server()
    async with http_server(server, max_stateless_requests=1) as info:
        headers, body = post("tools/call", {"name": "hang", "arguments": {}})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(raw, info.url, "POST", headers, body)
            await started.wait()
            status, _, data = await raw(info.url, "POST", *post("tools/list"))
            assert status == 503
            nursery.cancel_scope.cancel()
