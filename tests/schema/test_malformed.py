"""Hostile input: whatever a peer sends, decoding either succeeds or raises
DecodeError naming the wire path of the first problem -- never another
exception, never a silent coercion."""

import json
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_ref.schema as S
from mcp_ref.basic.jsonrpc import dumps
from mcp_ref.errors import DecodeError, ErrorCode, LocalProtocolError
from mcp_ref.schema import decode, exists_in
from mcp_ref.schema._converter import wire_fields
from mcp_ref.schema.content import ContentBlock, TextContent, ToolResultContent, ToolUseContent
from mcp_ref.schema.elicitation import ElicitRequest, ElicitRequestURLParams, PrimitiveSchemaDefinition
from mcp_ref.schema.jsonrpc import (
    Error,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
)
from mcp_ref.schema.lifecycle import ClientCapabilities, InitializedNotification, ServerCapabilities
from mcp_ref.schema.messages import (
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    RESULT_TYPES,
    SERVER_NOTIFICATIONS,
    SERVER_REQUESTS,
    ClientNotification,
    ClientRequest,
    ServerNotification,
    ServerRequest,
)
from mcp_ref.schema.ping import PingRequest
from mcp_ref.schema.sampling import CreateMessageResult
from mcp_ref.schema.tasks import Task
from mcp_ref.schema.tools import CallToolRequest, CallToolResult, ListToolsResult, Tool

from ._spec import LATEST, REVISIONS, encode
from ._strategies import JSON_KEYS, values


def problem(value: Any, tp: Any) -> str:
    """str() of the DecodeError decoding ``value`` as ``tp`` raises."""
    with pytest.raises(DecodeError) as info:
        decode(value, tp)
    return str(info.value)


CALL: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}


def with_params(**params: Any) -> dict[str, Any]:
    return {**CALL, "params": {**CALL["params"], **params}}


@pytest.mark.parametrize(
    ("value", "tp", "message"),
    [
        # not an object at all
        ([], CallToolRequest, "expected object"),
        ("tools/call", CallToolRequest, "expected object"),
        (None, CallToolRequest, "expected object"),
        # missing and wrong members
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, CallToolRequest, "params: required field missing"),
        (with_params(arguments=[]), CallToolRequest, "params.arguments: expected object"),
        (with_params(name=None), CallToolRequest, "params.name: expected string"),
        (with_params(name=7), CallToolRequest, "params.name: expected string"),
        ({**CALL, "method": "tools/list"}, CallToolRequest, "method: expected one of 'tools/call'"),
        ({**CALL, "jsonrpc": "1.0"}, CallToolRequest, "jsonrpc: expected one of '2.0'"),
        ({**CALL, "jsonrpc": 2.0}, CallToolRequest, "jsonrpc: expected one of '2.0'"),
        # an optional member is absent or typed, never null
        ({"tools": [], "nextCursor": None}, ListToolsResult, "nextCursor: expected string"),
        ({"tools": None}, ListToolsResult, "tools: expected array"),
        (with_params(_meta=None), CallToolRequest, "params._meta: expected object"),
        # booleans are not numbers, strings are not numbers
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": True},
            },
            ServerRequest,
            "params.maxTokens: expected integer",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": "5"},
            },
            ServerRequest,
            "params.maxTokens: expected integer",
        ),
        (
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": True}},
            ClientNotification,
            "params.progress: expected number",
        ),
        # nested paths, list indices and tags
        (
            {"content": [{"type": "video"}]},
            CallToolResult,
            "content[0].type: expected one of 'audio', 'image', 'resource', 'resource_link', 'text'",
        ),
        ({"content": [{"text": "x"}]}, CallToolResult, "content[0].type: required field missing"),
        ({"content": [{"type": "text"}]}, CallToolResult, "content[0].text: required field missing"),
        (
            {"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "x", "mimeType": 1}]},
            CallToolResult,
            "content[1].mimeType: expected string",
        ),
        (
            {"content": [{"type": "text", "text": "a", "annotations": {"priority": 1.5}}]},
            CallToolResult,
            "content[0].annotations.priority: expected a number from 0 to 1",
        ),
        (
            {"content": [{"type": "text", "text": "a", "annotations": {"audience": ["robot"]}}]},
            CallToolResult,
            "content[0].annotations.audience[0]: expected one of 'user', 'assistant'",
        ),
        (
            {"role": "assistant", "model": "m", "content": [{"type": "text", "text": "a"}, 3]},
            CreateMessageResult,
            "content[1]: expected object",
        ),
        # an empty key keeps its place in the path
        (
            {"action": "accept", "content": {"": [None]}},
            S.ElicitResult,
            'content[""][0]: expected string',
        ),
        # validators report wire paths
        (
            {"tools": [{"name": "t", "inputSchema": {"type": "string"}}]},
            ListToolsResult,
            "tools[0].inputSchema.type: expected one of 'object'",
        ),
        (
            {"tools": [{"name": "t", "inputSchema": {"properties": {}}}]},
            ListToolsResult,
            "tools[0].inputSchema.type: required field missing",
        ),
        (
            {"tools": [{"name": "t", "inputSchema": {"type": "object", "required": ["a", 2]}}]},
            ListToolsResult,
            "tools[0].inputSchema.required[1]: expected string",
        ),
        # unions without a single tag
        (
            {"type": "object"},
            PrimitiveSchemaDefinition,
            "type: expected one of 'array', 'boolean', 'integer', 'number', 'string'",
        ),
        ({"title": "x"}, PrimitiveSchemaDefinition, "type: required field missing"),
        (
            {"type": "string", "oneOf": [{"const": "a"}]},
            PrimitiveSchemaDefinition,
            "oneOf[0].title: required field missing",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"mode": "popup", "message": "m"}},
            ElicitRequest,
            "params.mode: expected one of 'form', 'url'",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"message": "m"}},
            ElicitRequest,
            "params.requestedSchema: required field missing",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "nope/nope"},
            ClientRequest,
            "method: expected one of "
            "'completion/complete', 'initialize', 'logging/setLevel', 'ping', 'prompts/get', 'prompts/list', "
            "'resources/list', 'resources/read', 'resources/subscribe', 'resources/templates/list', "
            "'resources/unsubscribe', 'server/discover', 'subscriptions/listen', 'tasks/cancel', 'tasks/get', "
            "'tasks/list', 'tasks/result', 'tools/call', "
            "'tools/list'",
        ),
        # capabilities: known members are typed even though the object is open
        ({"roots": {"listChanged": "yes"}}, ClientCapabilities, "roots.listChanged: expected boolean"),
        ({"experimental": {"x": 1}}, ServerCapabilities, "experimental.x: expected object"),
        # tasks: ttl is required and may be null, nothing else
        (
            {"taskId": "t", "status": "working", "createdAt": "c", "lastUpdatedAt": "u"},
            Task,
            "ttl: required field missing",
        ),
        (
            {"taskId": "t", "status": "working", "createdAt": "c", "lastUpdatedAt": "u", "ttl": "1"},
            Task,
            "ttl: expected integer or null",
        ),
        (
            {"taskId": "t", "status": "done", "createdAt": "c", "lastUpdatedAt": "u", "ttl": None},
            Task,
            "status: expected one of 'working', 'input_required', 'completed', 'failed', 'cancelled'",
        ),
    ],
)
def test_decode_errors_name_the_path(value: Any, tp: Any, message: str) -> None:
    assert problem(value, tp) == message


@pytest.mark.req("basic/index#4", "basic/index#5")
@pytest.mark.parametrize(
    ("rid", "message"),
    [
        (None, "id: expected string or integer"),
        (1.5, "id: expected string or integer"),
        (1.0, "id: expected string or integer"),  # not silently the integer 1
        (True, "id: expected string or integer"),
        ([1], "id: expected string or integer"),
        ({"id": 1}, "id: expected string or integer"),
    ],
)
def test_request_ids_are_strings_or_integers(rid: Any, message: str) -> None:
    assert problem({"jsonrpc": "2.0", "id": rid, "method": "ping"}, PingRequest) == message
    assert problem({"jsonrpc": "2.0", "method": "ping"}, PingRequest) == "id: required field missing"


@pytest.mark.req("basic/index#4", "basic/index#5", "basic/index#14")
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, "id: expected string or integer"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "x"}, "id: expected string or integer"),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
            "result: a response cannot carry both result and error",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "x", "result": {}},
            "method: a message cannot be both a request and a response",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "x", "error": {"code": 1, "message": "m"}},
            "method: a message cannot be both a request and a response",
        ),
    ],
)
def test_a_message_is_told_apart_by_its_members_not_by_what_happens_to_decode(value: Any, message: str) -> None:
    # the same rules as the engine's classify: id present -> request, absent -> notification
    assert problem(value, JSONRPCMessage) == message
    assert type(decode({"jsonrpc": "2.0", "method": "x"}, JSONRPCMessage)) is JSONRPCNotification
    assert type(decode({"jsonrpc": "2.0", "id": "1", "method": "x"}, JSONRPCMessage)) is JSONRPCRequest
    assert type(decode({"jsonrpc": "2.0", "id": 1, "result": {}}, JSONRPCMessage)) is JSONRPCResultResponse
    assert (
        type(decode({"jsonrpc": "2.0", "error": {"code": 1, "message": "m"}}, JSONRPCMessage)) is JSONRPCErrorResponse
    )


@pytest.mark.req("basic/index#14")
@pytest.mark.parametrize("tp", [JSONRPCNotification, InitializedNotification, ClientNotification, ServerNotification])
def test_notification_classes_refuse_an_id(tp: Any) -> None:
    for rid in (1, "a", None):
        value = {"jsonrpc": "2.0", "id": rid, "method": "notifications/initialized"}
        if tp is ServerNotification:
            value["method"] = "notifications/tools/list_changed"
        assert problem(value, tp) == "id: a notification carries no id"
        del value["id"]
        decode(value, tp)


@pytest.mark.req("basic/index#4")
@pytest.mark.parametrize("rid", ["1", "", "abc", 0, -7, 2**63])
def test_request_ids_are_kept_verbatim(rid: Any) -> None:
    ping = decode({"jsonrpc": "2.0", "id": rid, "method": "ping"}, PingRequest)
    assert ping.id == rid and type(ping.id) is type(rid)
    assert encode(ping) == {"jsonrpc": "2.0", "id": rid, "method": "ping"}


@pytest.mark.req("basic/index#11", "basic/index#12")
@pytest.mark.parametrize(
    ("error", "message"),
    [
        ({"code": "-32600", "message": "m"}, "error.code: expected integer"),
        ({"code": 1.5, "message": "m"}, "error.code: expected integer"),
        ({"code": True, "message": "m"}, "error.code: expected integer"),
        ({"message": "m"}, "error.code: required field missing"),
        ({"code": -32600}, "error.message: required field missing"),
        ({"code": -32600, "message": None}, "error.message: expected string"),
        ("boom", "error: expected object"),
    ],
)
def test_error_objects_need_an_integer_code_and_a_message(error: Any, message: str) -> None:
    assert problem({"jsonrpc": "2.0", "id": 1, "error": error}, JSONRPCErrorResponse) == message


@pytest.mark.req("basic/index#10")
def test_an_error_response_may_carry_a_null_or_no_id() -> None:
    # JSON-RPC 2.0 writes null for an id it could not read; 2025-11-25 leaves it out
    for wire in (
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}},
    ):
        assert decode(wire, JSONRPCErrorResponse) == JSONRPCErrorResponse(
            error=Error(code=ErrorCode.PARSE_ERROR, message="Parse error")
        )


@pytest.mark.req("basic/utilities/progress#1")
@pytest.mark.parametrize("token", [1.5, True, None, [], {}])
def test_progress_tokens_in_meta_are_strings_or_integers(token: Any) -> None:
    assert problem(with_params(_meta={"progressToken": token}), CallToolRequest) == (
        "params._meta.progressToken: expected string or integer"
    )


@pytest.mark.req("basic/utilities/progress#1")
def test_other_meta_keys_are_free() -> None:
    call = decode(with_params(_meta={"progressToken": "p", "com.example/x": [1, {"y": None}]}), CallToolRequest)
    assert call.params.meta == {"progressToken": "p", "com.example/x": [1, {"y": None}]}


def test_bool_and_numbers_stay_apart_in_unions() -> None:
    # ElicitResult.content values: string | number | boolean | string[]
    result = decode({"action": "accept", "content": {"a": True, "b": 1, "c": 1.0, "d": ["x"]}}, S.ElicitResult)
    assert result.content == {"a": True, "b": 1, "c": 1.0, "d": ["x"]}
    assert [type(v) for v in (result.content or {}).values()] == [bool, int, float, list]
    assert problem({"action": "accept", "content": {"a": None}}, S.ElicitResult) == (
        "content.a: expected string or integer or number or boolean or array"
    )
    assert problem({"action": "accept", "content": {"a": [1]}}, S.ElicitResult) == "content.a[0]: expected string"


def test_integral_numbers_read_as_integers_only_where_no_union_is_involved() -> None:
    # maxTokens 100.0 (a float from a sloppy encoder) is the integer 100 ...
    params = decode({"messages": [], "maxTokens": 100.0}, S.CreateMessageRequestParams)
    assert params.max_tokens == 100 and type(params.max_tokens) is int
    # ... but never 100.5, and an id of 1.0 is refused (ids are echoed verbatim)
    assert problem({"messages": [], "maxTokens": 100.5}, S.CreateMessageRequestParams) == "maxTokens: expected integer"


def test_unknown_keys_of_closed_types_are_ignored_and_not_written_back() -> None:
    block = decode({"type": "text", "text": "a", "x-vendor": 1}, TextContent)
    assert block == TextContent(text="a")
    assert encode(block) == {"type": "text", "text": "a"}


def test_unknown_keys_of_open_types_are_kept_and_written_back() -> None:
    wire = {"content": [], "x-vendor": {"a": 1}, "isError": False}
    result = decode(wire, CallToolResult)
    assert result.extra == {"x-vendor": {"a": 1}}
    assert encode(result) == wire
    caps = decode({"tools": {}, "com.example/feature": {"on": True}}, ServerCapabilities)
    assert caps.extra == {"com.example/feature": {"on": True}}
    assert encode(caps) == {"tools": {}, "com.example/feature": {"on": True}}


def test_an_extra_key_never_overrides_a_field() -> None:
    result = CallToolResult(content=[], is_error=True, extra={"isError": False, "x": 1})
    assert encode(result) == {"content": [], "isError": True, "x": 1}


@pytest.mark.req("schema#35", "schema#36")
def test_tool_use_and_tool_result_meta_survive_a_round_trip() -> None:
    # a client keeps _meta of tool uses and results when it sends them back:
    # decoding and encoding never drop or alter it
    use = {"type": "tool_use", "id": "c1", "name": "w", "input": {}, "_meta": {"com.example/cache": "k1"}}
    res = {"type": "tool_result", "toolUseId": "c1", "content": [], "_meta": {"com.example/cache": "k2"}}
    message = {"role": "assistant", "content": [use, res]}
    decoded = decode(message, S.SamplingMessage)
    assert isinstance(decoded.content, list)
    assert [type(b) for b in decoded.content] == [ToolUseContent, ToolResultContent]
    assert decoded.content[0].meta == {"com.example/cache": "k1"}
    assert encode(decoded) == message


@pytest.mark.req("schema#7")
def test_elicitation_ids_are_opaque_strings() -> None:
    for eid in ("550e8400-e29b-41d4-a716-446655440000", "  padded  ", "1", "ü/../x"):
        params = decode(
            {"mode": "url", "message": "m", "elicitationId": eid, "url": "https://x.test"}, ElicitRequestURLParams
        )
        assert params.elicitation_id == eid
        assert encode(params)["elicitationId"] == eid
    assert problem({"mode": "url", "message": "m", "elicitationId": 5, "url": "u"}, ElicitRequestURLParams) == (
        "elicitationId: expected string"
    )


def test_huge_nesting_is_kept_or_refused_without_recursion_errors() -> None:
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = [deep]
    # held as an opaque JSON value: kept as it is
    call = decode(with_params(arguments={"deep": deep}), CallToolRequest)
    assert call.params.arguments is not None and call.params.arguments["deep"] is deep
    # where an object is expected: refused at once
    assert problem(deep, CallToolRequest) == "expected object"
    assert problem({"content": deep}, CallToolResult) == "content[0]: expected object"


def test_data_and_log_payloads_are_any_json() -> None:
    note = decode(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": None}},
        ServerNotification,
    )
    assert note.params.data is None
    assert encode(note)["params"] == {"level": "info", "data": None}  # required: written even when null
    assert (
        problem({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}, ServerNotification)
        == "params.data: required field missing"
    )


# -- random input ---------------------------------------------------------------------


def _all_classes() -> list[type]:
    return sorted({obj for name in S.__all__ if attrs.has(obj := getattr(S, name))}, key=lambda c: c.__name__)


#: object keys the model reads, so random objects hit real structure
_WIRE_KEYS = sorted({f.wire for cls in _all_classes() for f in wire_fields(cls) if not f.extra})
_TAGS = sorted(
    {
        str(v)
        for cls in _all_classes()
        for f in wire_fields(cls)
        if f.wire in ("type", "method", "mode")
        for v in getattr(f.type, "__args__", ())
        if isinstance(v, str)
    }
)
_keys = st.sampled_from(_WIRE_KEYS) | JSON_KEYS
_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False, allow_infinity=False)  # what loads can produce
    | st.text(max_size=5)
    | st.sampled_from(_TAGS)
)
hostile_json = st.recursive(
    _leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=6), max_leaves=25
)

TARGETS: list[Any] = [
    *sorted({*CLIENT_REQUESTS.values(), *SERVER_REQUESTS.values()}, key=lambda c: c.__name__),
    *sorted({*CLIENT_NOTIFICATIONS.values(), *SERVER_NOTIFICATIONS.values()}, key=lambda c: c.__name__),
    *sorted(set(RESULT_TYPES.values()), key=lambda c: c.__name__),
    ClientRequest,
    ServerRequest,
    ClientNotification,
    ServerNotification,
    JSONRPCMessage,
    ContentBlock,
    PrimitiveSchemaDefinition,
    Tool,
    ClientCapabilities,
    ServerCapabilities,
]


@settings(max_examples=400, deadline=None)
@given(value=hostile_json, tp=st.sampled_from(TARGETS + _all_classes()))
def test_random_json_decodes_or_raises_decode_error(value: Any, tp: Any) -> None:
    try:
        decoded = decode(value, tp)
    except DecodeError as e:
        assert e.code == ErrorCode.INVALID_PARAMS
        assert_path_resolves(value, e)
    else:
        # whatever decodes, encodes to JSON (for a revision the class is part of), or is
        # refused for lacking what that revision requires (decoding takes it absent)
        try:
            dumps(encode(decoded, _revision_of(tp)))
        except LocalProtocolError as e:
            assert "is required in protocol revision" in e.message, e


def _revision_of(tp: Any) -> str:
    """The session era's newest revision, or the newest one the class is part of."""
    if attrs.has(tp) and not exists_in(tp, LATEST):
        return next(r for r in reversed(REVISIONS) if exists_in(tp, r))
    return LATEST


@settings(max_examples=300, deadline=None)
@given(data=st.data(), tp=st.sampled_from(TARGETS[:40]))
def test_mutated_valid_messages_fail_at_the_mutation(data: st.DataObject, tp: Any) -> None:
    revision = _revision_of(tp)
    wire = encode(data.draw(values(tp, revision)), revision)
    path = data.draw(st.sampled_from(list(_paths(wire))))
    replacement = data.draw(hostile_json)
    mutated = _replace(wire, path, replacement)
    try:
        decode(mutated, tp)
    except DecodeError as e:
        assert_path_resolves(mutated, e)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Any:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    node = copy
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = new
    return copy


def assert_path_resolves(value: Any, err: DecodeError) -> None:
    """The error's path leads into ``value`` (its last key may be the missing one)."""
    node, rest = value, err.path
    while rest:
        if rest.startswith('[""]') and isinstance(node, dict):
            assert "" in node, f"{err}: no empty key in {sorted(node)}"
            node, rest = node[""], rest[4:].removeprefix(".")
            continue
        if rest.startswith("[") and isinstance(node, list):
            end = rest.index("]")
            index, rest = int(rest[1:end]), rest[end + 1 :].removeprefix(".")
            assert isinstance(node, list) and index < len(node), f"{err}: no index {index}"
            node = node[index]
            continue
        assert isinstance(node, dict), f"{err}: {rest!r} is inside a non-object"
        # the longest key of this object that the path continues with
        keys = [k for k in node if rest == k or rest.startswith(k + ".") or rest.startswith(k + "[")]
        if not keys:
            # (a missing key may hold dots when it is a namespaced one: io.modelcontextprotocol/...)
            assert err.problem == "required field missing" and ("." not in rest or "/" in rest) and "[" not in rest, (
                f"{err}: no key {rest!r} in {sorted(node)}"
            )
            return
        key = max(keys, key=len)
        node, rest = node[key], rest[len(key) :].removeprefix(".")


@attrs.frozen(kw_only=True)
class _Node:
    """A recursive type (the model has none; the converter must still cope)."""

    name: str
    children: "list[_Node] | None" = None


def test_recursive_types_decode_with_paths() -> None:
    tree = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
    node = decode(tree, _Node)
    assert node == _Node(name="a", children=[_Node(name="b", children=[_Node(name="c")])])
    assert encode(node) == tree
    assert problem({"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}, _Node) == (
        "children[0].children[0].name: expected string"
    )
