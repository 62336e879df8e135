"""The 2026-07-28 parts of the data model, one behaviour per test: what is written for
that revision and never before it (and the reverse), what decodes from either era,
and the typed views of the ``_meta`` keys the revision reserves."""

import json
from typing import Any

import pytest

from mcp_ref.basic.lifecycle import Role
from mcp_ref.connection import Connection
from mcp_ref.errors import DecodeError, ErrorCode, LocalProtocolError
from mcp_ref.events import MessageRejected
from mcp_ref.schema import _meta_keys as keys
from mcp_ref.schema import decode, encode
from mcp_ref.schema import meta as typed_meta
from mcp_ref.schema.cancellation import CancelledNotificationParams
from mcp_ref.schema.content import TextContent, ToolResultContent
from mcp_ref.schema.elicitation import (
    ElicitationRequestedSchema,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    StringSchema,
)
from mcp_ref.schema.errors import (
    RESOURCE_NOT_FOUND_CODE,
    RETIRED_CODES,
    UnsupportedProtocolVersionError,
    UnsupportedProtocolVersionErrorData,
    UnsupportedProtocolVersionErrorDetail,
    resource_not_found_code,
)
from mcp_ref.schema.jsonrpc import RequestParams, Result
from mcp_ref.schema.lifecycle import (
    ClientCapabilities,
    ElicitationCapability,
    Implementation,
    ServerCapabilities,
)
from mcp_ref.schema.messages import client_notifications, result_type_for, server_requests
from mcp_ref.schema.meta import RequestMetaObject
from mcp_ref.schema.mrtr import InputRequiredResult
from mcp_ref.schema.resources import ReadResourceResult, TextResourceContents
from mcp_ref.schema.roots import ListRootsRequest, ListRootsRequestParams, ListRootsResult, Root
from mcp_ref.schema.sampling import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    SamplingMessage,
)
from mcp_ref.schema.tools import CallToolRequestParams, CallToolResult, ListToolsResult, Tool

NEW = "2026-07-28"
OLD = "2025-11-25"
META = keys.PROTOCOL_VERSION
REQUEST_META = {keys.PROTOCOL_VERSION: NEW, keys.CLIENT_CAPABILITIES: {}}
OBJECT = {"type": "object"}


# -- results -------------------------------------------------------------------------------


@pytest.mark.req("2026-07-28:schema#15")
def test_every_result_of_the_revision_says_its_type_and_none_before_it() -> None:
    result = CallToolResult(content=[TextContent(text="a")])
    assert encode(result, NEW) == {"resultType": "complete", "content": [{"type": "text", "text": "a"}]}
    assert encode(result, OLD) == {"content": [{"type": "text", "text": "a"}]}
    assert encode(Result(), NEW) == {"resultType": "complete"}
    assert encode(InputRequiredResult(request_state="s"), NEW)["resultType"] == "input_required"


@pytest.mark.req("2026-07-28:schema#16")
def test_a_result_without_its_type_reads_as_complete() -> None:
    assert decode({"content": []}, CallToolResult).result_type == "complete"
    assert decode({}, Result).result_type == "complete"
    # the value a peer wrote is kept (an extension's type included): the client judges it
    assert decode({"content": [], "resultType": "task"}, CallToolResult).result_type == "task"


@pytest.mark.req("2026-07-28:schema#21")
def test_an_input_required_result_carries_requests_or_state() -> None:
    with pytest.raises(ValueError, match="inputRequests or requestState"):
        InputRequiredResult()
    with pytest.raises(DecodeError, match="inputRequests"):
        decode({"resultType": "input_required"}, InputRequiredResult)
    asked = InputRequiredResult(input_requests={"r": ListRootsRequest()})
    assert encode(asked, NEW) == {"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}}


def test_results_of_a_request_that_may_need_input_are_told_apart_by_their_type() -> None:
    tp = result_type_for("resources/read", NEW)
    assert type(decode({"resultType": "input_required", "requestState": "x"}, tp)) is InputRequiredResult
    complete = decode({"resultType": "complete", "contents": [], "ttlMs": 0, "cacheScope": "public"}, tp)
    assert type(complete) is ReadResourceResult
    # a session revision has no InputRequiredResult: the result class alone
    assert result_type_for("resources/read", OLD) is ReadResourceResult


def test_cacheable_results_carry_their_caching_fields_in_the_revision_only() -> None:
    listed = ListToolsResult(tools=[], ttl_ms=60_000, cache_scope="private")
    assert encode(listed, NEW) == {"resultType": "complete", "tools": [], "ttlMs": 60_000, "cacheScope": "private"}
    assert encode(listed, OLD) == {"tools": []}
    with pytest.raises(LocalProtocolError, match=r"ListToolsResult\.ttlMs is required in protocol revision 2026-07-28"):
        encode(ListToolsResult(tools=[], cache_scope="public"), NEW)
    with pytest.raises(LocalProtocolError, match=r"cacheScope is required"):
        encode(ReadResourceResult(contents=[], ttl_ms=0), NEW)
    with pytest.raises(ValueError, match="ttlMs"):
        ListToolsResult(tools=[], ttl_ms=-1)
    # an earlier server's list has neither; decoding takes it
    assert decode({"tools": []}, ListToolsResult).ttl_ms is None


@pytest.mark.parametrize(
    ("sent", "read"),
    [(-1, 0), (-60_000, 0), (-0.5, 0), (1500.9, 1500), (None, 0), ("60000", 0), (True, 0), (float("nan"), 0), (7, 7)],
)
def test_an_odd_ttl_from_a_peer_is_read_as_stale_and_the_result_kept(sent: Any, read: int) -> None:
    # decided in spec_notes/schema.md: the caching fields are hints, so a negative or
    # malformed ttlMs reads as 0 (stale at once, as caching#10 tells a client to treat a
    # negative one) and never fails the list or read that carries it
    for tp, body in ((ListToolsResult, {"tools": []}), (ReadResourceResult, {"contents": []})):
        result = decode({"resultType": "complete", **body, "ttlMs": sent, "cacheScope": "public"}, tp)
        assert (result.ttl_ms, result.cache_scope) == (read, "public")
        assert encode(result, NEW)["ttlMs"] == read


@pytest.mark.parametrize("sent", ["shared", "PUBLIC", None, 1, ["public"]])
def test_an_unknown_cache_scope_from_a_peer_is_read_as_private(sent: Any) -> None:
    # the reading that never shares a result across authorization contexts on a doubtful hint
    result = decode({"tools": [], "ttlMs": 5, "cacheScope": sent}, ListToolsResult)
    assert (result.ttl_ms, result.cache_scope) == (5, "private")
    assert decode({"tools": [], "ttlMs": 5, "cacheScope": "public"}, ListToolsResult).cache_scope == "public"


def test_what_the_application_builds_is_still_checked() -> None:
    # the tolerance is the decoder's: a negative ttl in our own result is a mistake, said at once
    with pytest.raises(ValueError, match="ttlMs"):
        ReadResourceResult(contents=[], ttl_ms=-1, cache_scope="public")


def test_answers_to_input_requests_are_no_results_of_the_revision() -> None:
    # 2026-07-28's ElicitResult and ListRootsResult extend no Result: no resultType, no _meta
    # (CreateMessageResult keeps the _meta of SamplingMessage)
    elicited = ElicitResult(action="accept", content={"name": "a"}, meta={"x.y/z": 1})
    assert encode(elicited, NEW) == {"action": "accept", "content": {"name": "a"}}
    assert encode(elicited, OLD) == {"_meta": {"x.y/z": 1}, "action": "accept", "content": {"name": "a"}}
    assert encode(ListRootsResult(roots=[Root(uri="file:///r")], meta={}), NEW) == {"roots": [{"uri": "file:///r"}]}
    sampled = CreateMessageResult(role="assistant", content=TextContent(text="4"), model="m", meta={"x.y/z": 1})
    assert encode(sampled, NEW) == {
        "_meta": {"x.y/z": 1},
        "role": "assistant",
        "content": {"type": "text", "text": "4"},
        "model": "m",
    }


# -- requests ------------------------------------------------------------------------------


def test_a_request_of_the_revision_carries_its_meta() -> None:
    call = CallToolRequestParams(name="t")
    assert encode(call, OLD) == {"name": "t"}
    with pytest.raises(LocalProtocolError, match=r"CallToolRequestParams\._meta is required"):
        encode(call, NEW)
    assert encode(CallToolRequestParams(name="t", meta=REQUEST_META), NEW) == {"_meta": REQUEST_META, "name": "t"}
    # roots/list's params (an InputRequest's) have an optional _meta of their own
    assert encode(ListRootsRequestParams(), NEW) == {}


def test_an_engine_that_completes_a_body_gets_it_without_the_members_it_adds() -> None:
    # the modern engine encodes what the application gave and adds the request's _meta and
    # a result's caching hints itself: its converter leaves those out instead of refusing them
    from mcp_ref.schema._converter import converter_for
    from mcp_ref.schema.ping import PingRequest

    engine = converter_for(NEW, engine_completes=True)
    assert engine.unstructure(CallToolRequestParams(name="t")) == {"name": "t"}
    assert engine.unstructure(ListToolsResult(tools=[])) == {"resultType": "complete", "tools": []}
    # what the revision lacks is as exact as ever
    assert engine.unstructure(ElicitResult(action="decline", meta={"x.y/z": 1})) == {"action": "decline"}
    with pytest.raises(LocalProtocolError, match="removed in protocol revision 2026-07-28"):
        engine.unstructure(PingRequest(id=1))
    # and the public encoder still refuses an incomplete message
    with pytest.raises(LocalProtocolError, match="is required"):
        encode(CallToolRequestParams(name="t"), NEW)


def test_input_requests_have_no_envelope_in_the_revision() -> None:
    ask = ElicitRequest(
        params=ElicitRequestFormParams(
            message="name?", requested_schema=ElicitationRequestedSchema(properties={"n": StringSchema()})
        )
    )
    new = {
        "method": "elicitation/create",
        "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}},
    }
    assert encode(ask, NEW) == new
    assert decode(new, ElicitRequest) == ask
    # in a session it is a whole JSON-RPC request, and its id is required there
    with pytest.raises(LocalProtocolError, match=r"ElicitRequest\.id is required in protocol revision 2025-11-25"):
        encode(ask, OLD)
    sample = CreateMessageRequest(
        id=7, params=CreateMessageRequestParams(messages=[], max_tokens=5, meta={"progressToken": 1})
    )
    assert encode(sample, OLD) == {
        "jsonrpc": "2.0",
        "method": "sampling/createMessage",
        "id": 7,
        "params": {"_meta": {"progressToken": 1}, "messages": [], "maxTokens": 5},
    }
    # 2026-07-28's sampling params are a plain object: no _meta
    assert encode(sample, NEW) == {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}


def test_a_retry_carries_typed_answers() -> None:
    wire = {
        "_meta": REQUEST_META,
        "name": "t",
        "inputResponses": {
            "who": {"action": "accept", "content": {"name": "octocat"}},
            "where": {"roots": [{"uri": "file:///w"}]},
            "llm": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
        },
        "requestState": "opaque",
    }
    params = decode(wire, CallToolRequestParams)
    assert params.input_responses is not None
    assert {k: type(v) for k, v in params.input_responses.items()} == {
        "who": ElicitResult,
        "where": ListRootsResult,
        "llm": CreateMessageResult,
    }
    assert encode(params, NEW) == wire
    # a session revision has neither member
    assert encode(params, OLD) == {"_meta": REQUEST_META, "name": "t"}


def test_url_elicitation_has_an_id_in_2025_11_25_only() -> None:
    url = ElicitRequestURLParams(message="m", url="https://x.test/e", elicitation_id="e1")
    assert encode(url, OLD)["elicitationId"] == "e1"
    assert "elicitationId" not in encode(url, NEW)
    bare = ElicitRequestURLParams(message="m", url="https://x.test/e")
    assert encode(bare, NEW) == {"mode": "url", "message": "m", "url": "https://x.test/e"}
    with pytest.raises(LocalProtocolError, match=r"elicitationId is required in protocol revision 2025-11-25"):
        encode(bare, OLD)


def test_a_session_client_refuses_a_url_elicitation_without_an_id() -> None:
    # decoding takes the 2026-07-28 shape; a 2025-11-25 session still requires the id
    client = Connection(Role.CLIENT, capabilities=ClientCapabilities(elicitation=ElicitationCapability(url={})))
    rid, _ = client.send_request(
        "initialize",
        decode(
            {
                "protocolVersion": OLD,
                "capabilities": {"elicitation": {"url": {}}},
                "clientInfo": {"name": "c", "version": "1"},
            },
            __import__("mcp_ref.schema.lifecycle", fromlist=["x"]).InitializeRequestParams,
        ),
    )
    result = {"protocolVersion": OLD, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
    client.receive_message(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))
    client.send_notification("notifications/initialized")
    params = {"mode": "url", "message": "m", "url": "https://x.test/e"}
    events = client.receive_message(
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "elicitation/create", "params": params})
    )
    assert len(events) == 1 and isinstance(events[0], MessageRejected)
    assert json.loads(events[0].reply)["error"]["code"] == ErrorCode.INVALID_PARAMS
    assert "elicitationId" in json.loads(events[0].reply)["error"]["message"]


def test_cancellation_names_its_request_again() -> None:
    assert encode(CancelledNotificationParams(reason="r"), OLD) == {"reason": "r"}
    with pytest.raises(LocalProtocolError, match=r"requestId is required in protocol revision 2026-07-28"):
        encode(CancelledNotificationParams(reason="r"), NEW)
    assert encode(CancelledNotificationParams(request_id=3), NEW) == {"requestId": 3}


# -- tools ---------------------------------------------------------------------------------


def test_structured_content_is_any_json_value_in_the_revision_and_an_object_before() -> None:
    listed = CallToolResult(content=[], structured_content=[1, 2])
    assert encode(listed, NEW)["structuredContent"] == [1, 2]
    with pytest.raises(
        LocalProtocolError, match=r"structured_content: \[1, 2\] cannot be expressed in protocol revision"
    ):
        encode(listed, OLD)
    assert encode(CallToolResult(content=[], structured_content={"a": 1}), OLD)["structuredContent"] == {"a": 1}
    block = ToolResultContent(tool_use_id="u", content=[], structured_content="text")
    assert encode(block, NEW)["structuredContent"] == "text"
    with pytest.raises(LocalProtocolError, match="cannot be expressed"):
        encode(block, OLD)


def test_an_output_schema_may_describe_any_value_in_the_revision_only() -> None:
    tool = Tool(name="t", input_schema=OBJECT, output_schema={"type": "array", "items": {"type": "number"}})
    assert encode(tool, NEW)["outputSchema"] == {"type": "array", "items": {"type": "number"}}
    with pytest.raises(
        LocalProtocolError, match=r'output_schema: .* \(it takes a JSON Schema object with "type": "object"\)'
    ):
        encode(tool, OLD)
    # JSON Schema 2020-12 allows true / false as a property's schema; the session revisions' schema.json does not
    booleans = Tool(name="t", input_schema={"type": "object", "properties": {"any": True}})
    assert encode(booleans, NEW)["inputSchema"]["properties"] == {"any": True}
    with pytest.raises(LocalProtocolError, match="property schemas are objects"):
        encode(booleans, OLD)
    with pytest.raises(ValueError, match=r"inputSchema\.type"):
        Tool(name="t", input_schema={"type": "array"})
    with pytest.raises(ValueError, match=r"properties\.x: expected object or boolean"):
        Tool(name="t", input_schema={"type": "object", "properties": {"x": 1}})


# -- capabilities and errors ---------------------------------------------------------------


@pytest.mark.req("2026-07-28:schema#30", "2026-07-28:schema#31")
def test_extension_ids_follow_the_meta_grammar_with_a_prefix() -> None:
    caps = ServerCapabilities(extensions={"io.modelcontextprotocol/tasks": {}})
    assert encode(caps, NEW) == {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    assert encode(caps, OLD) == {}
    for bad in ("tasks", "io.modelcontextprotocol/-x", "1abc/x"):
        with pytest.raises(LocalProtocolError, match="extension id"):
            encode(ClientCapabilities(extensions={bad: {}}), NEW)
    # a peer's capabilities decode as sent
    assert decode({"extensions": {"tasks": {}}}, ClientCapabilities).extensions == {"tasks": {}}


def test_the_error_for_an_unknown_resource_depends_on_the_revision() -> None:
    assert resource_not_found_code(OLD) == ErrorCode.RESOURCE_NOT_FOUND == -32002
    assert resource_not_found_code(NEW) == ErrorCode.INVALID_PARAMS == -32602
    assert RESOURCE_NOT_FOUND_CODE["2024-11-05"] == -32002
    assert RETIRED_CODES[NEW] == {-32002, -32042} and not RETIRED_CODES[OLD]


def test_the_revision_errors_carry_their_data() -> None:
    error = UnsupportedProtocolVersionError(
        id=1,
        error=UnsupportedProtocolVersionErrorDetail(
            message="Unsupported protocol version",
            data=UnsupportedProtocolVersionErrorData(supported=[NEW, OLD], requested="1999-01-01"),
        ),
    )
    wire = encode(error, NEW)
    assert wire["error"] == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": [NEW, OLD], "requested": "1999-01-01"},
    }
    assert decode(wire, UnsupportedProtocolVersionError) == error
    with pytest.raises(LocalProtocolError, match="does not exist in protocol revision 2025-11-25"):
        encode(error, OLD)


def test_the_revision_has_no_server_requests() -> None:
    assert server_requests(NEW) == frozenset()
    assert client_notifications(NEW) == {"notifications/cancelled"}
    assert "sampling/createMessage" in server_requests(OLD)


# -- the _meta keys --------------------------------------------------------------------------


def test_request_meta_is_read_key_by_key_or_whole() -> None:
    caps = ClientCapabilities(elicitation=ElicitationCapability(form={}))
    info = Implementation(name="c", version="1")
    meta = typed_meta.request_meta(NEW, caps, client_info=info, log_level="info", progress_token=3)
    assert meta == {
        keys.PROTOCOL_VERSION: NEW,
        keys.CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
        keys.CLIENT_INFO: {"name": "c", "version": "1"},
        keys.LOG_LEVEL: "info",
        "progressToken": 3,
    }
    assert keys.protocol_version(meta) == NEW
    assert keys.log_level(meta) == "info"
    assert typed_meta.client_capabilities(meta) == caps
    assert typed_meta.client_info(meta) == info
    whole = decode(meta, RequestMetaObject)
    assert (whole.protocol_version, whole.client_capabilities, whole.client_info) == (NEW, caps, info)
    assert encode(whole, NEW) == meta
    assert keys.protocol_version(None) is None and typed_meta.client_capabilities({}) is None


def test_a_request_meta_without_what_the_revision_requires_is_malformed() -> None:
    with pytest.raises(DecodeError, match=r"io\.modelcontextprotocol/clientCapabilities: required field missing") as e:
        decode({keys.PROTOCOL_VERSION: NEW}, RequestMetaObject)
    assert e.value.code == ErrorCode.INVALID_PARAMS
    with pytest.raises(DecodeError, match=r"_meta\.io\.modelcontextprotocol/protocolVersion: expected string"):
        keys.protocol_version({keys.PROTOCOL_VERSION: 2026})
    with pytest.raises(DecodeError, match=r"_meta\.io\.modelcontextprotocol/clientCapabilities\.roots: expected"):
        typed_meta.client_capabilities({keys.CLIENT_CAPABILITIES: {"roots": 1}})
    with pytest.raises(DecodeError, match="logLevel: expected one of"):
        keys.log_level({keys.LOG_LEVEL: "loud"})


def test_notifications_and_results_name_their_subscription_and_server() -> None:
    tagged = keys.with_subscription_id({"x.y/z": 1}, "listen-1")
    assert keys.subscription_id(tagged) == "listen-1" and tagged["x.y/z"] == 1
    with pytest.raises(DecodeError, match="subscriptionId: expected string or integer"):
        keys.subscription_id({keys.SUBSCRIPTION_ID: 1.5})
    served = typed_meta.with_server_info(None, Implementation(name="s", version="2", title="S"), NEW)
    assert typed_meta.server_info(served) == Implementation(name="s", version="2", title="S")


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", True),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", False),  # all-zero trace id
        ("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", False),  # all-zero parent id
        ("ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", False),  # version ff
        ("00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01", False),  # upper case
        ("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra", False),  # v00 has 4 fields
        ("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra", True),  # a later version may add
        (7, False),
    ],
)
def test_trace_context_is_taken_only_when_well_formed(value: Any, valid: bool) -> None:
    meta = keys.with_trace_context({}, "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", "k=v", "a=1")
    assert (keys.tracestate(meta), keys.baggage(meta)) == ("k=v", "a=1")
    assert keys.traceparent({keys.TRACEPARENT: value}) == (value if valid else None)
    assert keys.tracestate({keys.TRACESTATE: "x" * 600}) is None


def test_the_reserved_keys_are_the_revisions() -> None:
    assert {keys.TRACEPARENT, keys.TRACESTATE, keys.BAGGAGE, "progressToken"} <= keys.RESERVED_KEYS
    assert all(keys.is_reserved(k) for k in keys.RESERVED_KEYS if k.startswith("io."))


@pytest.mark.req("2026-07-28:schema#1")
def test_a_typed_view_keeps_the_other_keys() -> None:
    # a reserved key this revision does not define (an extension's) is kept as it came, whatever its value
    meta = {**REQUEST_META, keys.TRACEPARENT: "t", "com.example/k": [1], "io.modelcontextprotocol/later": {"a": None}}
    whole = decode(meta, RequestMetaObject)
    assert whole.extra == {keys.TRACEPARENT: "t", "com.example/k": [1], "io.modelcontextprotocol/later": {"a": None}}
    assert encode(whole, NEW) == meta
    params = decode({"_meta": meta, "name": "t"}, CallToolRequestParams)
    assert encode(params, NEW)["_meta"] == meta


def test_params_meta_stays_a_dict() -> None:
    params = decode({"_meta": REQUEST_META, "name": "t"}, CallToolRequestParams)
    assert params.meta == REQUEST_META and isinstance(params, RequestParams)
    read = ReadResourceResult(contents=[TextResourceContents(uri="u", text="t")], ttl_ms=0, cache_scope="public")
    assert encode(read, NEW)["cacheScope"] == "public"
    assert SamplingMessage(role="user", content=TextContent(text="x")) is not None


@pytest.mark.req("2026-07-28:schema#2", "2026-07-28:schema#3", "2026-07-28:schema#5")
@pytest.mark.parametrize("key", ["example.com./x", "1com.example/x", "com.example-/x", "com.example/-x", "x_"])
def test_a_malformed_meta_key_is_never_written_for_the_revision(key: str) -> None:
    params = CallToolRequestParams(name="t", meta={**REQUEST_META, key: 1})
    with pytest.raises(LocalProtocolError, match="_meta key"):
        encode(params, NEW)
    assert encode(CallToolRequestParams(name="t", meta={**REQUEST_META, "com.example/x": 1}), NEW)["name"] == "t"
