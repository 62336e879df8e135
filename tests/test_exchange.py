"""The modern engine (mcp_ref.exchange): one 2026-07-28 request, checked and answered on its own."""

import json
from typing import Any

import pytest

from mcp_ref.basic.lifecycle import Role
from mcp_ref.errors import LocalProtocolError
from mcp_ref.events import (
    CancellationIgnored,
    CancellationReceived,
    ErrorReceived,
    ExchangeReceived,
    InputRequiredReceived,
    InvalidResponse,
    MessageRejected,
    NotificationIgnored,
    ProgressReceived,
    RequestRefused,
    ResponseReceived,
)
from mcp_ref.exchange import Exchange, StatelessEngine
from mcp_ref.schema.content import TextContent
from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation, ServerCapabilities
from mcp_ref.schema.tools import CallToolResult, ListToolsResult
from mcp_ref.server.utilities.caching import NO_PROMISE, CachePolicy, hints_for

V = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {}}
INFO = Implementation(name="srv", version="1")


def server(**options: Any) -> StatelessEngine:
    options.setdefault("served", frozenset({"tools/list", "tools/call", "server/discover", "subscriptions/listen"}))
    options.setdefault("capabilities", ServerCapabilities(tools={"listChanged": True}, logging={}))
    options.setdefault("legacy_versions", ("2025-11-25",))
    return StatelessEngine(
        Role.SERVER,
        info=INFO,
        cache=lambda m, out, o: hints_for(m, out, default=NO_PROMISE, per_method={}, override=o),
        **options,
    )


def request(method: str, params: Any = None, rid: Any = 1, meta: Any = None) -> bytes:
    body = {"_meta": dict(META if meta is None else meta)} if params is None else params
    if params is not None and meta is not False:
        body = {**params, "_meta": {**META, **(meta or {})}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": body}).encode()


def exchange(engine: StatelessEngine, method: str = "tools/call", params: Any = None, **meta: Any) -> Exchange:
    events = engine.receive_message(request(method, params or {"name": "t"}, meta=meta))
    assert len(events) == 1 and isinstance(events[0], ExchangeReceived), events
    ex = events[0].exchange
    assert isinstance(ex, Exchange)
    return ex


def refused(events: list[Any]) -> tuple[int, dict[str, Any]]:
    assert len(events) == 1 and isinstance(events[0], RequestRefused), events
    assert events[0].reply is not None
    return events[0].http_status, json.loads(events[0].reply)


# -- checking a request ---------------------------------------------------------------------------


@pytest.mark.req("2026-07-28:basic/index#53", "2026-07-28:basic/index#54", "2026-07-28:basic/index#15")
def test_missing_meta_is_invalid_params_with_400() -> None:
    raw = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}).encode()
    status, reply = refused(server().receive_message(raw))
    assert status == 400 and reply["id"] == 7 and reply["error"]["code"] == -32602


@pytest.mark.req("2026-07-28:basic/versioning#1", "2026-07-28:basic/transports/streamable-http#28")
def test_an_unsupported_version_lists_every_supported_one() -> None:
    status, reply = refused(server().receive_message(request("tools/list", meta={**META, META_V: "1999-01-01"})))
    assert status == 400 and reply["error"]["code"] == -32022
    assert reply["error"]["data"] == {"supported": [V, "2025-11-25"], "requested": "1999-01-01"}


META_V = "io.modelcontextprotocol/protocolVersion"


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#29", "2026-07-28:basic/patterns/index#1")
@pytest.mark.parametrize(
    "method",
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "tasks/get", "unknown/method", "prompts/list"],
)
def test_methods_this_revision_or_this_server_lacks_are_404_method_not_found(method: str) -> None:
    status, reply = refused(server().receive_message(request(method)))
    assert status == 404 and reply["error"]["code"] == -32601 and reply["id"] == 1


@pytest.mark.req("2026-07-28:basic/versioning#10")
def test_initialize_is_answered_with_the_supported_versions() -> None:
    _, reply = refused(server().receive_message(request("initialize")))
    assert reply["error"]["data"] == {"supported": [V, "2025-11-25"]}


@pytest.mark.req("2026-07-28:basic/versioning#10")
def test_a_legacy_initialize_is_refused_naming_the_versions_whatever_else_it_lacks() -> None:
    def legacy_init(**params: Any) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": params}).encode()

    modern_only = server(legacy_versions=())
    # no _meta, and (on HTTP) no MCP-Protocol-Version header: neither is what a 2025 client should hear
    for headers in (None, {"mcp-method": "initialize"}):
        status, reply = refused(modern_only.receive_message(legacy_init(protocolVersion="2025-06-18"), headers=headers))
        error = reply["error"]
        assert (status, error["code"], reply["id"]) == (400, -32022, 3)
        assert error["data"] == {"supported": [V], "requested": "2025-06-18"}
        assert error["message"] == "Unsupported protocol version 2025-06-18: this server supports 2026-07-28"
    # a version it proposes that a dual-era server serves, on a channel already modern: not served here
    status, reply = refused(server().receive_message(legacy_init(protocolVersion="2025-11-25")))
    assert reply["error"]["code"] == -32601 and "2026-07-28, 2025-11-25" in reply["error"]["message"]
    assert reply["error"]["data"] == {"supported": [V, "2025-11-25"]}
    # no version proposed at all
    status, reply = refused(modern_only.receive_message(legacy_init()))
    assert reply["error"]["code"] == -32602 and "supports 2026-07-28" in reply["error"]["message"]
    # an initialize with a 2026-07-28 _meta, broken otherwise (a field missing): its error names them too
    status, reply = refused(modern_only.receive_message(legacy_init(_meta={META_V: V})))
    assert reply["error"]["code"] == -32602 and reply["error"]["data"] == {"supported": [V]}


def test_an_applications_own_method_is_served_when_it_has_a_handler() -> None:
    engine = server(served=frozenset({"x/echo"}))
    assert isinstance(engine.receive_message(request("x/echo"))[0], ExchangeReceived)


@pytest.mark.req("2026-07-28:basic/index#6")
def test_an_id_in_flight_cannot_be_reused_on_one_channel() -> None:
    engine = server()
    ex = exchange(engine)
    status, reply = refused(engine.receive_message(request("tools/call", {"name": "t"})))
    assert reply["error"]["code"] == -32600
    ex.send_response(CallToolResult(content=[]))
    assert isinstance(engine.receive_message(request("tools/call", {"name": "t"}))[0], ExchangeReceived)
    # over HTTP every POST stands alone: ids may repeat
    http = server(track_ids=False)
    for _ in range(2):
        assert isinstance(http.receive_message(request("tools/call", {"name": "t"}))[0], ExchangeReceived)


def test_params_are_decoded_with_the_methods_types() -> None:
    status, reply = refused(server().receive_message(request("tools/call", {"arguments": {}})))
    assert status == 400 and reply["error"]["code"] == -32602
    ex = exchange(server(), params={"name": "t", "arguments": {"a": 1}})
    assert ex.params.name == "t" and ex.params.arguments == {"a": 1}


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#11", "2026-07-28:basic/index#15")
@pytest.mark.parametrize(
    "raw", [b"{", b"[]", b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', b'{"jsonrpc":"1.0"}']
)
def test_unreadable_input_is_refused_with_400(raw: bytes) -> None:
    status, reply = refused(server().receive_message(raw))
    assert status == 400 and reply["id"] is None  # (unreadable: null, as over HTTP and stdio alike)
    if raw.startswith(b"[") and len(raw) > 2:
        assert reply["error"] == {"code": -32600, "message": "Invalid Request: no JSON-RPC batches"}


@pytest.mark.req("2026-07-28:basic/transports/stdio#7", "2026-07-28:basic/patterns/index#1")
def test_a_response_from_a_client_answers_nothing() -> None:
    (event,) = server().receive_message(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert isinstance(event, RequestRefused) and event.reply is None


HEADERS = {"mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "t"}


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#31",
    "2026-07-28:basic/transports/streamable-http#25",
    "2026-07-28:basic/transports/streamable-http#26",
    "2026-07-28:basic/transports/streamable-http#27",
)
def test_headers_are_checked_against_the_body() -> None:
    engine = server(track_ids=False)
    assert isinstance(
        engine.receive_message(request("tools/call", {"name": "t"}), headers=HEADERS)[0], ExchangeReceived
    )
    for headers in (
        {k: x for k, x in HEADERS.items() if k != "mcp-protocol-version"},
        {**HEADERS, "mcp-protocol-version": "2025-11-25"},
        {**HEADERS, "mcp-name": "u"},
        {**HEADERS, "mcp-method": "tools/list"},
    ):
        status, reply = refused(engine.receive_message(request("tools/call", {"name": "t"}), headers=headers))
        assert status == 400 and reply["error"]["code"] == -32020 and reply["id"] == 1


def test_missing_meta_is_found_before_a_version_mismatch_and_that_before_an_unsupported_version() -> None:
    engine = server(track_ids=False)
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    assert (
        refused(engine.receive_message(raw, headers={**HEADERS, "mcp-method": "tools/list"}))[1]["error"]["code"]
        == -32602
    )
    wrong = request("tools/list", meta={**META, META_V: "v9"})
    headers = {"mcp-protocol-version": V, "mcp-method": "tools/list"}
    assert refused(engine.receive_message(wrong, headers=headers))[1]["error"]["code"] == -32020
    headers["mcp-protocol-version"] = "v9"
    assert refused(engine.receive_message(wrong, headers=headers))[1]["error"]["code"] == -32022


def test_param_headers_are_checked_for_the_tool_called() -> None:
    from mcp_ref.basic.transports.mcp_headers import param_headers

    declared = param_headers({"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}})
    engine = server(track_ids=False, param_headers=lambda name: declared if name == "t" else ())
    body = request("tools/call", {"name": "t", "arguments": {"r": "x"}})
    assert isinstance(engine.receive_message(body, headers={**HEADERS, "mcp-param-r": "x"})[0], ExchangeReceived)
    assert refused(engine.receive_message(body, headers=HEADERS))[1]["error"]["code"] == -32020


# -- answering ------------------------------------------------------------------------------


@pytest.mark.req("2026-07-28:basic/index#10", "2026-07-28:basic/index#59", "2026-07-28:server/utilities/caching#1")
def test_a_result_carries_its_type_our_name_and_its_caching_hints() -> None:
    engine = server()
    ex = exchange(engine, "tools/list", {})
    out = json.loads(ex.send_response(ListToolsResult(tools=[]), cache=CachePolicy(60_000, "public")))
    assert out["id"] == 1
    assert out["result"]["resultType"] == "complete" and out["result"]["ttlMs"] == 60_000
    assert out["result"]["cacheScope"] == "public"
    assert out["result"]["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "srv", "version": "1"}
    call = exchange(engine)
    out = json.loads(call.send_response(CallToolResult(content=[TextContent(text="x")])))
    assert "ttlMs" not in out["result"] and out["result"]["resultType"] == "complete"
    quiet = exchange(server(identify=False))
    assert "_meta" not in json.loads(quiet.send_response(CallToolResult(content=[])))["result"]


def test_a_result_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(LocalProtocolError):
        exchange(server()).send_response(ListToolsResult(tools=[]))


@pytest.mark.req("2026-07-28:basic/patterns/progress#8", "2026-07-28:basic/patterns/progress#5")
def test_progress_goes_out_only_under_the_requests_token_and_must_increase() -> None:
    assert exchange(server()).send_progress(1) is None
    ex = exchange(server(), progressToken="tok")
    data = ex.send_progress(1, 10, "one")
    assert json.loads(data or b"") == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "tok", "progress": 1, "total": 10, "message": "one"},
    }
    with pytest.raises(LocalProtocolError):
        ex.send_progress(1)


@pytest.mark.req("2026-07-28:server/utilities/logging#3", "2026-07-28:server/utilities/logging#4")
def test_log_messages_only_for_requests_that_asked_at_or_above_their_level() -> None:
    assert exchange(server()).send_log("emergency", "x") is None
    ex = exchange(server(), **{"io.modelcontextprotocol/logLevel": "warning"})
    assert ex.send_log("info", "quiet") is None
    out = json.loads(ex.send_log("error", {"e": 1}, "db") or b"")
    assert out["method"] == "notifications/message" and out["params"] == {
        "level": "error",
        "data": {"e": 1},
        "logger": "db",
    }


@pytest.mark.req("2026-07-28:server/utilities/logging#2")
def test_log_messages_need_our_logging_capability() -> None:
    ex = exchange(server(capabilities=ServerCapabilities(tools={})), **{"io.modelcontextprotocol/logLevel": "debug"})
    with pytest.raises(LocalProtocolError, match="logging"):
        ex.send_log("info", "x")


@pytest.mark.req(
    "2026-07-28:basic/transports/stdio#11",
    "2026-07-28:basic/transports/streamable-http#24",
    "2026-07-28:basic/patterns/cancellation#13",
    "2026-07-28:basic/patterns/cancellation#14",
    "2026-07-28:basic/patterns/cancellation#19",
)
def test_nothing_goes_out_for_a_cancelled_request() -> None:
    engine = server()
    ex = exchange(engine, progressToken=1)
    (event,) = engine.receive_message(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
    assert isinstance(event, CancellationReceived) and event.request_id == 1
    for send in (lambda: ex.send_progress(1), lambda: ex.send_response(CallToolResult(content=[]))):
        with pytest.raises(LocalProtocolError, match="cancelled"):
            send()
    (again,) = engine.receive_message(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
    assert isinstance(again, CancellationIgnored)
    (other,) = engine.receive_message(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert isinstance(other, NotificationIgnored)


@pytest.mark.req("2026-07-28:basic/index#22", "2026-07-28:basic/index#17")
def test_resource_not_found_goes_out_as_invalid_params() -> None:
    with pytest.raises(LocalProtocolError, match="integers"):
        exchange(server()).send_error("-32602", "x")  # type: ignore[arg-type]
    ex = exchange(server())
    out = json.loads(ex.send_error(-32002, "Resource not found", {"uri": "x"}))
    assert out["error"] == {"code": -32602, "message": "Resource not found", "data": {"uri": "x"}}
    with pytest.raises(LocalProtocolError):
        ex.send_error(-32603, "again")


ELICIT = ("elicitation/create", {"message": "m", "requestedSchema": {"type": "object", "properties": {}}})


@pytest.mark.req(
    "2026-07-28:basic/patterns/mrtr#5",
    "2026-07-28:basic/patterns/mrtr#9",
    "2026-07-28:basic/patterns/mrtr#16",
    "2026-07-28:basic/patterns/mrtr#17",
)
def test_input_required_results_follow_the_rules() -> None:
    caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    ex = exchange(server(), **caps)
    with pytest.raises(LocalProtocolError, match="input requests or a request state"):
        ex.send_input_required({}, None)
    with pytest.raises(LocalProtocolError, match="sampling"):
        ex.send_input_required({"s": ("sampling/createMessage", {"messages": [], "maxTokens": 1})}, None)
    with pytest.raises(LocalProtocolError, match="tools/list"):
        ex.send_input_required({"x": ("tools/list", None)}, None)
    out = json.loads(ex.send_input_required({"k": ELICIT}, "state"))
    assert out["result"] == {
        "resultType": "input_required",
        "inputRequests": {"k": {"method": "elicitation/create", "params": ELICIT[1]}},
        "requestState": "state",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "srv", "version": "1"}},
    }
    listing = exchange(server(), "tools/list", {}, **caps)
    with pytest.raises(LocalProtocolError, match="InputRequiredResult"):
        listing.send_input_required({"k": ELICIT}, None)


def test_a_retry_brings_its_answers_and_state() -> None:
    ex = exchange(server(), params={"name": "t", "inputResponses": {"k": {"action": "decline"}}, "requestState": "s"})
    assert ex.input_responses == {"k": {"action": "decline"}} and ex.request_state == "s"
    status, reply = refused(server().receive_message(request("tools/call", {"name": "t", "inputResponses": 1})))
    assert reply["error"]["code"] == -32602


@pytest.mark.req(
    "2026-07-28:basic/patterns/subscriptions#2", "2026-07-28:basic/index#61", "2026-07-28:server/utilities/logging#5"
)
def test_a_subscription_is_acknowledged_first_and_tags_what_it_sends() -> None:
    ex = exchange(server(), "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    with pytest.raises(LocalProtocolError, match="acknowledgement"):
        ex.send_change("notifications/tools/list_changed")
    ack = json.loads(ex.acknowledge({"toolsListChanged": True}))
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"] == {
        "notifications": {"toolsListChanged": True},
        "_meta": {"io.modelcontextprotocol/subscriptionId": 1},
    }
    change = json.loads(ex.send_change("notifications/tools/list_changed") or b"")
    assert change["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 1}
    assert ex.send_change("notifications/prompts/list_changed") is None
    with pytest.raises(LocalProtocolError):
        ex.send_change("notifications/message", {"level": "info", "data": 1})
    with pytest.raises(LocalProtocolError, match="listen"):
        ex.send_log("emergency", "never on a listen stream")
    end = json.loads(ex.end_subscription())
    assert end == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 1}},
    }


@pytest.mark.req(
    "2026-07-28:basic/patterns/cancellation#2",
    "2026-07-28:basic/patterns/cancellation#3",
    "2026-07-28:basic/patterns/cancellation#12",
)
def test_the_server_cancels_only_subscriptions() -> None:
    listen = exchange(server(), "subscriptions/listen", {"notifications": {}})
    out = json.loads(listen.send_teardown("shutting down"))
    assert out == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "shutting down"},
    }
    with pytest.raises(LocalProtocolError):
        exchange(server()).send_teardown()
    with pytest.raises(LocalProtocolError):
        exchange(server()).acknowledge({})


def test_a_listen_without_a_filter_is_invalid_params() -> None:
    assert refused(server().receive_message(request("subscriptions/listen", {})))[1]["error"]["code"] == -32602


# -- the client role -------------------------------------------------------------------------


def client() -> StatelessEngine:
    return StatelessEngine(
        Role.CLIENT, info=Implementation(name="cli", version="2"), capabilities=ClientCapabilities(sampling={})
    )


@pytest.mark.req(
    "2026-07-28:basic/index#52", "2026-07-28:basic/index#55", "2026-07-28:basic/transports/streamable-http#25"
)
def test_a_client_request_carries_its_meta_and_headers() -> None:
    c = client()
    rid, data = c.send_request(
        "tools/call", {"name": "t", "arguments": {"r": "é"}}, progress_token=True, log_level="info"
    )
    body = json.loads(data)
    assert body["params"]["_meta"] == {
        "progressToken": f"p{rid}",
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "cli", "version": "2"},
        "io.modelcontextprotocol/logLevel": "info",
    }
    assert c.http_headers(rid) == {"MCP-Protocol-Version": V, "Mcp-Method": "tools/call", "Mcp-Name": "t"}
    # what the client sends, a server takes
    assert isinstance(server().receive_message(data)[0], ExchangeReceived)
    with pytest.raises(LocalProtocolError):
        c.send_request("ping")
    with pytest.raises(LocalProtocolError):
        c.send_request("tools/list", input_responses={})


@pytest.mark.req("2026-07-28:basic/index#13", "2026-07-28:basic/index#14")
def test_a_client_classifies_answers() -> None:
    c = client()
    rid, _ = c.send_request("tools/call", {"name": "t"}, progress_token="tk")
    (p,) = c.receive_message(
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tk","progress":1}}'
    )
    assert isinstance(p, ProgressReceived) and p.request_id == rid
    (ir,) = c.receive_message(
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "input_required", "requestState": "s"}})
    )
    assert isinstance(ir, InputRequiredReceived) and ir.result["requestState"] == "s"
    rid, _ = c.send_request("tools/call", {"name": "t"})
    (done,) = c.receive_message(
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
    )  # no resultType: complete
    assert isinstance(done, ResponseReceived) and done.result.content == []
    rid, _ = c.send_request("tools/call", {"name": "t"})
    (odd,) = c.receive_message(
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "partial", "content": []}})
    )
    assert isinstance(odd, InvalidResponse)
    rid, _ = c.send_request("tools/list")
    (bad,) = c.receive_message(
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "input_required", "requestState": "s"}})
    )
    assert isinstance(bad, InvalidResponse)
    rid, _ = c.send_request("tools/list")
    (err,) = c.receive_message(
        json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32022, "message": "no", "data": {}}})
    )
    assert isinstance(err, ErrorReceived) and err.error.code == -32022


def test_a_client_cancels_on_one_channel() -> None:
    c = client()
    rid, _ = c.send_request("tools/list")
    assert json.loads(c.send_cancel(rid, "bored")) == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": rid, "reason": "bored"},
    }
    with pytest.raises(LocalProtocolError):
        c.send_cancel(rid)


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#23", "2026-07-28:basic/patterns/progress#3")
def test_a_client_retry_echoes_the_state_and_tokens_stay_unique() -> None:
    c = client()
    rid, data = c.send_request(
        "tools/call", {"name": "t"}, input_responses={"k": {"action": "cancel"}}, request_state="s=1"
    )
    params = json.loads(data)["params"]
    assert params["requestState"] == "s=1" and params["inputResponses"] == {"k": {"action": "cancel"}}
    c.send_request("tools/list", progress_token="same")
    with pytest.raises(LocalProtocolError, match="in use"):
        c.send_request("tools/list", progress_token="same")


@pytest.mark.req("2026-07-28:basic/patterns/index#1")
def test_a_client_refuses_a_request_from_a_server() -> None:
    (event,) = client().receive_message(b'{"jsonrpc":"2.0","id":9,"method":"roots/list"}')
    assert (
        isinstance(event, MessageRejected) and event.reply is None and "sent a roots/list request" in str(event.error)
    )
