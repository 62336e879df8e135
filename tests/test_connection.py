"""The sans-IO engine: lifecycle, correlation, capabilities, cancellation and progress bookkeeping."""

import datetime
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_ref.basic.lifecycle import Phase, Role
from mcp_ref.connection import Connection
from mcp_ref.errors import ErrorCode, LocalProtocolError
from mcp_ref.events import (
    CancellationIgnored,
    CancellationReceived,
    ErrorReceived,
    ErrorWithoutId,
    Initialized,
    InvalidResponse,
    LateResponseIgnored,
    MessageRejected,
    NotificationReceived,
    ProgressIgnored,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    RuleBroken,
    UnknownResponse,
    VersionRejected,
)
from mcp_ref.schema.content import ResourceLink, TextContent
from mcp_ref.schema.elicitation import (
    ElicitationRequestedSchema,
    ElicitRequestFormParams,
    UntitledSingleSelectEnumSchema,
)
from mcp_ref.schema.jsonrpc import Result
from mcp_ref.schema.lifecycle import (
    ClientCapabilities,
    ElicitationCapability,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    ListChangedCapability,
    ServerCapabilities,
    ServerTaskRequestsCapability,
    ServerTasksCapability,
    ServerTaskToolsRequests,
)
from mcp_ref.schema.pagination import PaginatedRequestParams
from mcp_ref.schema.tasks import CreateTaskResult, Task, TaskMetadata
from mcp_ref.schema.tools import CallToolRequestParams, CallToolResult, ListToolsResult

CLIENT_INFO = Implementation(name="c", version="1")
SERVER_INFO = Implementation(name="s", version="1")
TOOLS = ServerCapabilities(tools=ListChangedCapability())


def wire(data: bytes) -> Any:
    return json.loads(data)


def init_params(version: str = "2025-11-25", caps: ClientCapabilities | None = None) -> InitializeRequestParams:
    return InitializeRequestParams(
        protocol_version=version, capabilities=caps or ClientCapabilities(), client_info=CLIENT_INFO
    )


def handshake(
    client_version: str = "2025-11-25",
    server_caps: ServerCapabilities = TOOLS,
    client_caps: ClientCapabilities | None = None,
) -> tuple[Connection, Connection]:
    client = Connection(Role.CLIENT, capabilities=client_caps or ClientCapabilities())
    server = Connection(Role.SERVER, capabilities=server_caps)
    rid, data = client.send_request("initialize", init_params(client_version, client_caps))
    (ev,) = server.receive_message(data)
    assert isinstance(ev, RequestReceived) and ev.method == "initialize"
    result = InitializeResult(protocol_version=client_version, capabilities=server_caps, server_info=SERVER_INFO)
    events = client.receive_message(server.send_response(rid, result))
    assert [type(e) for e in events] == [ResponseReceived]
    events = server.receive_message(client.send_notification("notifications/initialized"))
    assert [type(e) for e in events] == [Initialized, NotificationReceived]
    return client, server


# -- lifecycle -------------------------------------------------------------------------


@pytest.mark.req("basic/index#1", "basic/lifecycle#1", "basic/lifecycle#2", "basic/lifecycle#3", "basic/lifecycle#4")
def test_handshake_walks_the_phases() -> None:
    client = Connection(Role.CLIENT)
    server = Connection(Role.SERVER, capabilities=TOOLS)
    assert client.phase is server.phase is Phase.AWAITING_INIT
    rid, data = client.send_request("initialize", init_params())
    assert client.phase is Phase.INITIALIZING
    msg = wire(data)
    assert msg["method"] == "initialize" and msg["params"]["clientInfo"] == {"name": "c", "version": "1"}
    server.receive_message(data)
    assert server.phase is Phase.INITIALIZING
    result = InitializeResult(protocol_version="2025-11-25", capabilities=TOOLS, server_info=SERVER_INFO)
    reply = server.send_response(rid, result)
    assert server.phase is Phase.AWAITING_INITIALIZED
    assert wire(reply)["result"]["capabilities"] == {"tools": {}}
    client.receive_message(reply)
    assert client.phase is Phase.AWAITING_INITIALIZED
    assert client.peer_info == SERVER_INFO and client.peer_has("tools")
    events = server.receive_message(client.send_notification("notifications/initialized"))
    assert isinstance(events[0], Initialized)
    assert client.phase is server.phase is Phase.OPERATING
    assert client.protocol_version == server.protocol_version == "2025-11-25"


@pytest.mark.req("basic/lifecycle#1", "basic/lifecycle#5")
def test_client_sends_only_initialize_then_only_ping_before_the_answer() -> None:
    client = Connection(Role.CLIENT)
    with pytest.raises(LocalProtocolError):
        client.send_request("ping")  # initialize comes first
    client.send_request("initialize", init_params())
    with pytest.raises(LocalProtocolError):
        client.send_request("tools/list")
    rid, data = client.send_request("ping")
    assert wire(data) == {"jsonrpc": "2.0", "id": rid, "method": "ping"}


@pytest.mark.req("basic/lifecycle#6")
def test_server_sends_only_ping_and_logging_before_initialized() -> None:
    client = Connection(Role.CLIENT, capabilities=ClientCapabilities(roots=None))
    server = Connection(Role.SERVER, capabilities=ServerCapabilities(logging={}))
    rid, data = client.send_request("initialize", init_params())
    server.receive_message(data)
    server.send_response(
        rid, InitializeResult(protocol_version="2025-11-25", capabilities=server.capabilities, server_info=SERVER_INFO)
    )  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        server.send_request("roots/list")
    server.send_request("ping")
    from mcp_ref.schema.logging import LoggingMessageNotificationParams

    server.send_notification("notifications/message", LoggingMessageNotificationParams(level="info", data="hi"))


@pytest.mark.req("basic/lifecycle#5")
def test_server_refuses_requests_before_initialize() -> None:
    server = Connection(Role.SERVER, capabilities=TOOLS)
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    reply = wire(ev.reply)
    assert reply["id"] == 1 and reply["error"]["code"] == ErrorCode.INVALID_REQUEST
    # ping is answered in every phase
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
    assert isinstance(ev, RequestReceived)


def test_second_initialize_is_refused() -> None:
    client, server = handshake()
    (ev,) = server.receive_message(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 99,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "x", "version": "1"},
                },
            }
        )
    )
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    assert wire(ev.reply)["error"]["code"] == ErrorCode.INVALID_REQUEST


@pytest.mark.req("basic/lifecycle#1")
def test_our_client_does_not_send_a_second_initialize() -> None:
    # (found by tests/test_connection_states.py: the operation phase allowed any request)
    client, _ = handshake()
    with pytest.raises(LocalProtocolError, match="initialized once") as refused:
        client.send_request("initialize", init_params())
    assert refused.value.requirement == "basic/lifecycle#1"


@pytest.mark.req("basic/lifecycle#9")
@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
def test_negotiated_version_is_the_clients_when_supported(version: str) -> None:
    client, server = handshake(version)
    assert client.protocol_version == server.protocol_version == version


@pytest.mark.req("basic/lifecycle#9")
def test_a_supported_requested_version_cannot_be_answered_with_another() -> None:
    client = Connection(Role.CLIENT)
    server = Connection(Role.SERVER, capabilities=TOOLS)
    rid, data = client.send_request("initialize", init_params("2025-11-25"))
    server.receive_message(data)
    other = InitializeResult(protocol_version="2025-03-26", capabilities=TOOLS, server_info=SERVER_INFO)
    with pytest.raises(LocalProtocolError, match="must answer with it"):
        server.send_response(rid, other)
    assert server.protocol_version is None and server.phase is Phase.INITIALIZING
    same = InitializeResult(protocol_version="2025-11-25", capabilities=TOOLS, server_info=SERVER_INFO)
    assert wire(server.send_response(rid, same))["result"]["protocolVersion"] == "2025-11-25"


def initialize_json(version: str) -> str:
    """An initialize request (id 0) as a peer writes it, asking for any version string."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    return json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})


@pytest.mark.req("basic/lifecycle#10")
def test_an_unsupported_requested_version_may_be_answered_with_any_supported_one() -> None:
    server = Connection(Role.SERVER, capabilities=TOOLS)
    server.receive_message(initialize_json("1999-01-01"))
    older = InitializeResult(protocol_version="2025-03-26", capabilities=TOOLS, server_info=SERVER_INFO)
    assert wire(server.send_response(0, older))["result"]["protocolVersion"] == "2025-03-26"
    assert server.protocol_version == "2025-03-26"


@pytest.mark.req("basic/lifecycle#10", "basic/lifecycle#11")
def test_server_answers_an_unknown_version_with_its_latest() -> None:
    from mcp_ref.basic.lifecycle import negotiate_version

    assert negotiate_version("1999-01-01") == "2025-11-25"
    assert negotiate_version("2025-06-18") == "2025-06-18"
    assert negotiate_version("2024-11-05", ("2025-06-18", "2025-03-26")) == "2025-06-18"


@pytest.mark.req("basic/lifecycle#5", "basic/lifecycle#10", "basic/lifecycle#11")
@pytest.mark.parametrize("requested", ["2099-01-01", "2024-11-05"])
def test_pings_before_answering_an_unsupported_version_use_the_version_the_answer_will_carry(requested: str) -> None:
    server = Connection(Role.SERVER, capabilities=TOOLS, supported_versions=("2025-06-18", "2025-03-26"))
    (ev,) = server.receive_message(initialize_json(requested))
    assert isinstance(ev, RequestReceived) and server.requested_version == requested
    # a ping pipelined before the answer: it exists in every revision, so it is served
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert isinstance(ev, RequestReceived) and ev.method == "ping"
    assert wire(server.send_response(1, Result())) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert server.revision == "2025-06-18"
    # the server may ping too, encoded for the revision it is about to answer with
    prid, data = server.send_request("ping")
    assert wire(data)["method"] == "ping"
    # tools/list is still refused by phase, not as unknown
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
    assert isinstance(ev, MessageRejected) and ev.error.code == ErrorCode.INVALID_REQUEST
    result = InitializeResult(protocol_version="2025-06-18", capabilities=TOOLS, server_info=SERVER_INFO)
    assert wire(server.send_response(0, result))["result"]["protocolVersion"] == "2025-06-18"


@pytest.mark.req("basic/lifecycle#12", "basic/lifecycle#22")
@pytest.mark.req("schema#9")
def test_client_rejects_a_version_it_does_not_support() -> None:
    client = Connection(Role.CLIENT, supported_versions=("2025-11-25",))
    rid, _ = client.send_request("initialize", init_params())
    reply = {
        "jsonrpc": "2.0",
        "id": rid,
        "result": {"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": {"name": "old", "version": "0"}},
    }
    events = client.receive_message(json.dumps(reply))
    assert isinstance(events[0], VersionRejected) and events[0].offered == "2024-11-05"
    assert client.phase is Phase.CLOSED
    with pytest.raises(LocalProtocolError):
        client.send_request("ping")


@pytest.mark.req("basic/lifecycle#7")
@pytest.mark.req("schema#8")
def test_client_proposes_only_versions_it_supports() -> None:
    client = Connection(Role.CLIENT, supported_versions=("2025-11-25",))
    with pytest.raises(LocalProtocolError):
        client.send_request("initialize", init_params("2025-06-18"))
    assert client.phase is Phase.AWAITING_INIT


# -- capabilities -----------------------------------------------------------------------


@pytest.mark.req("basic/lifecycle#14")
def test_no_request_for_a_capability_the_peer_lacks() -> None:
    client, server = handshake(server_caps=ServerCapabilities())
    with pytest.raises(LocalProtocolError, match="tools"):
        client.send_request("tools/list")
    with pytest.raises(LocalProtocolError, match="sampling"):
        from mcp_ref.schema.sampling import CreateMessageRequestParams

        server.send_request("sampling/createMessage", CreateMessageRequestParams(messages=[], max_tokens=5))
    assert client.pending_outgoing == [] and server.pending_outgoing == []


@pytest.mark.req("basic/lifecycle#14")
def test_incoming_request_for_an_undeclared_capability_is_method_not_found() -> None:
    client, server = handshake(server_caps=ServerCapabilities())
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}')
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    assert wire(ev.reply) == {
        "jsonrpc": "2.0",
        "id": "x",
        "error": {"code": -32601, "message": "Method not found: tools/list (tools not declared)"},
    }


def test_unknown_method_and_wrong_direction_are_method_not_found() -> None:
    client, server = handshake()
    for method in ("no/such", "sampling/createMessage"):
        (ev,) = server.receive_message(json.dumps({"jsonrpc": "2.0", "id": 5, "method": method, "params": {}}))
        assert isinstance(ev, MessageRejected) and ev.reply is not None
        assert wire(ev.reply)["error"]["code"] == ErrorCode.METHOD_NOT_FOUND


def test_invalid_params_name_the_path() -> None:
    client, server = handshake()
    (ev,) = server.receive_message(
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","arguments":[1]}}'
    )
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    err = wire(ev.reply)["error"]
    assert err["code"] == ErrorCode.INVALID_PARAMS
    assert "params.arguments: expected object" in err["message"]
    # the session goes on
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":6,"method":"tools/list"}')
    assert isinstance(ev, RequestReceived)


# -- correlation ----------------------------------------------------------------------------


@pytest.mark.req("basic/index#6", "basic/index#7")
def test_ids_are_unique_and_results_are_correlated_and_typed() -> None:
    client, server = handshake()
    ids = [client.send_request("tools/list")[0] for _ in range(3)]
    assert len(set(ids)) == 3
    reply = server_reply(server, client, ids[1], ListToolsResult(tools=[]))
    assert reply == [ResponseReceived(ids[1], "tools/list", ListToolsResult(tools=[]))]
    assert set(client.pending_outgoing) == {ids[0], ids[2]}


def server_reply(server: Connection, client: Connection, rid: Any, result: Any) -> list[Any]:
    return client.receive_message(
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": json.loads(encode_result(result))})
    )


def encode_result(result: Any) -> str:
    from mcp_ref.schema._base import LATEST_LEGACY_REVISION
    from mcp_ref.schema._converter import encode

    return json.dumps(encode(result, LATEST_LEGACY_REVISION))


def test_string_and_integer_ids_are_distinct_requests() -> None:
    client, server = handshake()
    (a,) = server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    (b,) = server.receive_message(b'{"jsonrpc":"2.0","id":"1","method":"tools/list"}')
    assert isinstance(a, RequestReceived) and isinstance(b, RequestReceived)
    assert wire(server.send_response("1", ListToolsResult(tools=[])))["id"] == "1"
    assert wire(server.send_response(1, ListToolsResult(tools=[])))["id"] == 1


@pytest.mark.req("basic/index#6")
def test_an_id_reused_while_in_flight_is_refused() -> None:
    client, server = handshake()
    server.receive_message(b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}')
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}')
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    assert wire(ev.reply)["error"]["code"] == ErrorCode.INVALID_REQUEST
    server.send_response(7, ListToolsResult(tools=[]))  # the first one is still answerable


def test_unknown_response_and_error_without_id_are_events() -> None:
    client, server = handshake()
    (ev,) = client.receive_message(b'{"jsonrpc":"2.0","id":12345,"result":{}}')
    # both name the requirement the peer broke, and its level
    assert ev == UnknownResponse(12345, requirement="basic/index#7", level="MUST")
    (ev,) = client.receive_message(b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}')
    assert isinstance(ev, ErrorWithoutId) and ev.error.code == -32700
    assert (ev.requirement, ev.level) == ("basic/index#10", "MUST")
    assert client.stats["unknown-response"] == 1 and client.stats["error-without-id"] == 1


def test_error_response_and_invalid_result() -> None:
    client, server = handshake()
    rid, _ = client.send_request("tools/list")
    (ev,) = client.receive_message(
        json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "boom"}})
    )
    assert isinstance(ev, ErrorReceived) and ev.error.message == "boom"
    rid, _ = client.send_request("tools/list")
    (ev,) = client.receive_message(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"tools": "nope"}}))
    assert isinstance(ev, InvalidResponse) and "result.tools: expected array" in str(ev.error)


@pytest.mark.req("basic/index#13")
def test_notifications_are_never_answered() -> None:
    client, server = handshake()
    for data in (
        b'{"jsonrpc":"2.0","method":"no/such"}',
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":"x"}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}',
    ):
        events = server.receive_message(data)
        assert all(not isinstance(e, MessageRejected) or e.reply is None for e in events)


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-06-18"])
def test_parse_error_gets_an_error_with_a_null_id(revision: str) -> None:
    # JSON-RPC 2.0's null, in every revision (2025-11-25 would allow none; HTTP writes null too)
    client, server = handshake(revision)
    (ev,) = server.receive_message(b"{nope")
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    assert wire(ev.reply) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": ev.error.message}}


# -- batches -------------------------------------------------------------------------------


@pytest.mark.req("2025-03-26:basic/index#14")
def test_batches_only_in_2025_03_26() -> None:
    batch = b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]'
    client, server = handshake("2025-11-25")
    (ev,) = server.receive_message(batch)
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    assert wire(ev.reply)["error"]["code"] == ErrorCode.INVALID_REQUEST
    client, server = handshake("2025-03-26")
    events = server.receive_message(batch)
    assert isinstance(events[0], RequestReceived)
    assert isinstance(server.receive_message(b"[]")[0], MessageRejected)


def test_a_batch_over_the_limit_is_refused_whole() -> None:
    client, server = handshake("2025-03-26")
    pings = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(Connection.max_batch + 1)]
    (ev,) = server.receive_message(json.dumps(pings))
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    assert wire(ev.reply)["error"]["code"] == ErrorCode.INVALID_REQUEST and "at most 100" in ev.error.message
    assert server.stats["batch-too-large"] == 1
    events = server.receive_message(json.dumps(pings[:-1]))  # at the limit: every one handled
    assert len(events) == 100 and all(isinstance(e, RequestReceived) for e in events)


# -- revisions -----------------------------------------------------------------------------


@pytest.mark.req("basic/lifecycle#14")
def test_encoding_follows_the_negotiated_revision() -> None:
    client, server = handshake("2025-03-26")
    server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}')
    result = CallToolResult(content=[TextContent(text="x")], structured_content={"a": 1})
    assert "structuredContent" not in wire(server.send_response(1, result))["result"]
    server.receive_message(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}')
    with pytest.raises(LocalProtocolError, match="ResourceLink"):
        server.send_response(2, CallToolResult(content=[ResourceLink(uri="file:///a", name="a")]))
    # nothing was recorded: the request can still be answered
    server.send_response(2, CallToolResult(content=[TextContent(text="ok")]))


TASK_TOOLS = ServerCapabilities(
    tools=ListChangedCapability(),
    tasks=ServerTasksCapability(requests=ServerTaskRequestsCapability(tools=ServerTaskToolsRequests(call={}))),
)


@pytest.mark.req("basic/lifecycle#14")
@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
def test_task_augmentation_is_refused_in_revisions_without_tasks(version: str) -> None:
    client = Connection(Role.CLIENT)
    rid, _ = client.send_request("initialize", init_params(version))
    # a peer declaring tasks in an older revision (decoding is tolerant of newer fields)
    caps = {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}
    answer = {"protocolVersion": version, "capabilities": caps, "serverInfo": {"name": "s", "version": "1"}}
    client.receive_message(json.dumps({"jsonrpc": "2.0", "id": rid, "result": answer}))
    client.send_notification("notifications/initialized")
    assert client.peer_has("tasks", "requests", "tools", "call")
    params = CallToolRequestParams(name="t", task=TaskMetadata(ttl=10))
    with pytest.raises(LocalProtocolError, match=f"task does not exist in protocol revision {version}"):
        client.send_request("tools/call", params)
    # nothing was recorded, and a plain call goes out as the next request
    assert client.pending_outgoing == []
    rid2, data = client.send_request("tools/call", CallToolRequestParams(name="t"))
    assert rid2 == rid + 1 and "task" not in wire(data)["params"]


@pytest.mark.req("basic/lifecycle#14")
@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
def test_a_peers_task_metadata_is_ignored_in_revisions_without_tasks(version: str) -> None:
    client, server = handshake(version, server_caps=TASK_TOOLS)
    (ev,) = server.receive_message(
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","task":{"ttl":5}}}'
    )
    assert isinstance(ev, RequestReceived)
    req = server.incoming(7)
    assert req is not None and not req.task  # processed as a plain call
    with pytest.raises(LocalProtocolError):
        task = Task(task_id="x", status="working", created_at="c", last_updated_at="u", ttl=None)
        server.send_response(7, CreateTaskResult(task=task))
    assert wire(server.send_response(7, CallToolResult(content=[])))["result"] == {"content": []}
    # in 2025-11-25 the same request is task-augmented
    client, server = handshake("2025-11-25", server_caps=TASK_TOOLS)
    server.receive_message(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","task":{"ttl":5}}}')
    req = server.incoming(7)
    assert req is not None and req.task


@pytest.mark.req("basic/lifecycle#14")
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_an_untitled_enum_reaches_a_2025_06_18_client_as_its_enum_schema(version: str) -> None:
    client, server = handshake(version, client_caps=ClientCapabilities(elicitation=ElicitationCapability()))
    choice = UntitledSingleSelectEnumSchema(enum=["a", "b"], title="Pick", default="a")
    params = ElicitRequestFormParams(message="m", requested_schema=ElicitationRequestedSchema(properties={"c": choice}))
    rid, data = server.send_request("elicitation/create", params)
    sent = wire(data)["params"]["requestedSchema"]["properties"]["c"]
    legacy = {"type": "string", "enum": ["a", "b"], "title": "Pick"}  # 2025-06-18 EnumSchema, no enumNames
    assert sent == (legacy if version == "2025-06-18" else {**legacy, "default": "a"})
    (ev,) = client.receive_message(data)
    assert isinstance(ev, RequestReceived) and ev.params.requested_schema.properties["c"].enum == ["a", "b"]


def test_methods_missing_from_the_revision_are_refused_both_ways() -> None:
    client, server = handshake("2025-03-26", client_caps=ClientCapabilities())
    with pytest.raises(LocalProtocolError):
        server.send_request(
            "elicitation/create",
            ElicitRequestFormParams(message="m", requested_schema={"type": "object", "properties": {}}),
        )  # type: ignore[arg-type]
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":3,"method":"tasks/list"}')
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    assert wire(ev.reply)["error"]["code"] == ErrorCode.METHOD_NOT_FOUND


# -- cancellation bookkeeping --------------------------------------------------------------------


@pytest.mark.req("basic/utilities/cancellation#2")
@pytest.mark.req("schema#14")
def test_initialize_cannot_be_cancelled() -> None:
    client = Connection(Role.CLIENT)
    rid, _ = client.send_request("initialize", init_params())
    with pytest.raises(LocalProtocolError, match="initialize"):
        client.send_cancel(rid)


@pytest.mark.req("basic/utilities/cancellation#1", "basic/utilities/cancellation#6")
@pytest.mark.req("schema#15")
def test_cancel_then_late_response_is_ignored() -> None:
    client, server = handshake()
    rid, data = client.send_request("tools/list")
    server.receive_message(data)
    note = client.send_cancel(rid, "changed my mind")
    assert wire(note) == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": rid, "reason": "changed my mind"},
    }
    with pytest.raises(LocalProtocolError):
        client.send_cancel(rid)  # no longer in flight
    (ev,) = server.receive_message(note)
    assert ev == CancellationReceived(rid, "changed my mind")
    with pytest.raises(LocalProtocolError, match="cancelled"):
        server.send_response(rid, ListToolsResult(tools=[]))
    server.finish_cancelled(rid)
    (ev,) = client.receive_message(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"tools": []}}))
    assert ev == LateResponseIgnored(rid, "tools/list", requirement="basic/utilities/cancellation#4", level="SHOULD")


@pytest.mark.req("basic/utilities/cancellation#5", "basic/utilities/cancellation#10")
@pytest.mark.req("schema#16")
def test_invalid_cancellations_are_ignored() -> None:
    client, server = handshake()
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42}}')
    assert isinstance(ev, CancellationIgnored) and ev.why == "unknown request id"
    server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    server.send_response(1, ListToolsResult(tools=[]))
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
    assert isinstance(ev, CancellationIgnored) and ev.why == "request already finished"
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}')
    assert isinstance(ev, CancellationIgnored) and ev.why.startswith("malformed")
    assert ev.requirement == "basic/utilities/cancellation#1"  # it names no request of ours
    server.receive_message(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
    bad_reason = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":5}}'
    (ev,) = server.receive_message(bad_reason)
    assert isinstance(ev, CancellationIgnored) and ev.why.startswith("malformed") and ev.request_id == 2
    assert ev.requirement == "basic/lifecycle#14"  # it names one, but breaks the notification's schema
    req = server.incoming(2)
    assert req is not None and req.state == "running"  # not cancelled by it
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}')
    assert isinstance(ev, CancellationIgnored) and ev.why == "no requestId"


# -- progress bookkeeping --------------------------------------------------------------------------


@pytest.mark.req("basic/utilities/progress#1", "basic/utilities/progress#2")
def test_progress_tokens_are_unique_and_preserved() -> None:
    client, server = handshake()
    rid, data = client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token=True)
    assert wire(data)["params"]["_meta"] == {"progressToken": rid}
    rid2, data = client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token="tok")
    assert wire(data)["params"]["_meta"]["progressToken"] == "tok"
    with pytest.raises(LocalProtocolError, match="in use"):
        client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token="tok")
    with pytest.raises(LocalProtocolError):
        client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token=1.5)  # type: ignore[arg-type]


@pytest.mark.req("basic/utilities/progress#2")
def test_a_generated_token_avoids_one_the_user_chose() -> None:
    client, server = handshake()
    rid, data = client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token=2)
    assert rid == 1
    user_token = wire(data)["params"]["_meta"]["progressToken"]
    rid2, data = client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token=True)
    assert rid2 == user_token == 2  # the request id would clash: another token is made up
    generated = wire(data)["params"]["_meta"]["progressToken"]
    assert generated != user_token and type(generated) in (str, int)
    # each token reaches its own request
    (ev1,) = client.receive_message(progress_json(user_token, 1))
    (ev2,) = client.receive_message(progress_json(generated, 1))
    assert isinstance(ev1, ProgressReceived) and ev1.request_id == rid
    assert isinstance(ev2, ProgressReceived) and ev2.request_id == rid2


@pytest.mark.req("basic/utilities/progress#2", "basic/utilities/progress#9")
def test_a_running_tasks_token_is_not_reused() -> None:
    client, server = handshake(server_caps=TASK_TOOLS)
    params = CallToolRequestParams(name="t", task=TaskMetadata(ttl=1000))
    rid, data = client.send_request("tools/call", params, progress_token="T")
    server.receive_message(data)
    task = Task(task_id="task-1", status="working", created_at="c", last_updated_at="u", ttl=1000)
    (ev,) = client.receive_message(server.send_response(rid, CreateTaskResult(task=task)))
    assert isinstance(ev, ResponseReceived)
    # the request is answered but its task runs on under "T"
    with pytest.raises(LocalProtocolError, match="'T' is already in use"):
        client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token="T")
    rid2, data = client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token=True)
    assert wire(data)["params"]["_meta"]["progressToken"] != "T"
    (ev,) = client.receive_message(server.send_task_progress("T", 1))
    assert isinstance(ev, ProgressReceived) and ev.request_id == rid  # delivered to the task's request
    client.release_task_token("T")
    rid3, data = client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token="T")
    assert wire(data)["params"]["_meta"]["progressToken"] == "T"  # free once the task is terminal


def progress_json(token: Any, value: float) -> str:
    params = {"progressToken": token, "progress": value}
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})


@pytest.mark.req("basic/utilities/progress#4", "basic/utilities/progress#7", "basic/utilities/progress#14")
def test_progress_in_order_and_nonsense_ignored() -> None:
    client, server = handshake()
    rid, data = client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token="p")
    (req,) = server.receive_message(data)
    assert isinstance(req, RequestReceived) and req.progress_token == "p"
    events = []
    for value in (1, 2.5):
        note = server.send_progress(rid, value, total=10, message=f"at {value}")
        assert note is not None
        events += client.receive_message(note)
    assert events == [ProgressReceived(rid, "p", 1, 10, "at 1"), ProgressReceived(rid, "p", 2.5, 10, "at 2.5")]
    with pytest.raises(LocalProtocolError, match="increase"):
        server.send_progress(rid, 2.5)
    # a non-increasing value from a misbehaving peer is ignored and counted
    (ev,) = client.receive_message(
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2}}'
    )
    assert ev == ProgressIgnored("p", 2, "not increasing", requirement="basic/utilities/progress#4", level="MUST")
    (ev,) = client.receive_message(
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"zz","progress":2}}'
    )
    assert ev == ProgressIgnored("zz", 2, "unknown token", requirement="basic/utilities/progress#7", level="MUST")
    client.receive_message(server.send_response(rid, CallToolResult(content=[])))
    with pytest.raises(LocalProtocolError, match="after completion"):
        server.send_progress(rid, 3)
    (ev,) = client.receive_message(
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":9}}'
    )
    assert ev == ProgressIgnored("p", 9, "after completion", requirement="basic/utilities/progress#14", level="MUST")
    assert client.stats["progress:not increasing"] == 1
    assert client.stats["progress:unknown token"] == 1
    assert client.stats["progress:after completion"] == 1


def test_progress_is_a_no_op_without_a_token() -> None:
    client, server = handshake()
    server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}')
    assert server.send_progress(1, 1) is None


# -- API misuse --------------------------------------------------------------------------------------


def test_wrong_params_type_and_missing_params_are_refused_before_sending() -> None:
    client, server = handshake()
    with pytest.raises(LocalProtocolError, match="CallToolRequestParams"):
        client.send_request("tools/call", PaginatedRequestParams())
    with pytest.raises(LocalProtocolError, match="requires params"):
        client.send_request("tools/call")
    with pytest.raises(LocalProtocolError):
        server.send_response(12345, Result())
    server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    with pytest.raises(LocalProtocolError, match="ListToolsResult"):
        server.send_response(1, Result())
    assert client.pending_outgoing == []


def test_notifications_need_their_capability() -> None:
    client, server = handshake(server_caps=ServerCapabilities(tools=ListChangedCapability(list_changed=False)))
    with pytest.raises(LocalProtocolError, match="listChanged"):
        server.send_notification("notifications/tools/list_changed")
    with pytest.raises(LocalProtocolError, match="send_cancel"):
        client.send_notification("notifications/cancelled")


# -- hostile input ------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
methods = st.sampled_from(
    [
        "ping",
        "tools/call",
        "tools/list",
        "notifications/cancelled",
        "notifications/progress",
        "initialize",
        "resources/read",
        "x",
    ]
)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    msg: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "1.0"]))}
    if draw(st.booleans()):
        msg["id"] = draw(st.one_of(st.integers(), st.text(max_size=3), st.none(), st.booleans()))
    kind = draw(st.sampled_from(["method", "result", "error", "none"]))
    if kind == "method":
        msg["method"] = draw(methods)
        if draw(st.booleans()):
            msg["params"] = draw(
                st.dictionaries(
                    st.sampled_from(["name", "arguments", "requestId", "progressToken", "progress", "_meta", "uri"]),
                    json_values,
                    max_size=4,
                )
            )
    elif kind == "result":
        msg["result"] = draw(json_values)
    elif kind == "error":
        msg["error"] = draw(json_values)
    return msg


@settings(max_examples=300)
@given(st.one_of(messages(), json_values))
def test_hostile_input_never_crashes_and_replies_are_valid(value: Any) -> None:
    client, server = handshake()
    for conn in (client, server):
        events = conn.receive_message(json.dumps(value))
        for ev in events:
            if isinstance(ev, MessageRejected) and ev.reply is not None:
                reply = wire(ev.reply)
                assert reply["jsonrpc"] == "2.0"
                assert type(reply["error"]["code"]) is int and reply["error"]["code"] in {e.value for e in ErrorCode}
                assert type(reply["id"]) in (str, int, type(None))
    # the sessions still work
    rid, data = client.send_request("tools/list")
    events = server.receive_message(data)
    assert any(isinstance(e, RequestReceived) and e.id == rid for e in events) or any(
        isinstance(e, MessageRejected) for e in events
    )


@pytest.mark.req("basic/index#9")
def test_results_keep_unknown_fields() -> None:
    client, server = handshake()
    rid, _ = client.send_request("tools/list")
    (ev,) = client.receive_message(
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"tools": [], "vendor": {"x": 1}}})
    )
    assert isinstance(ev, ResponseReceived)
    assert ev.result.extra == {"vendor": {"x": 1}}
    server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    assert wire(server.send_response(1, ev.result))["result"] == {"tools": [], "vendor": {"x": 1}}


# Strings as a peer can write them: JSON escapes may name lone surrogates ("\ud800"),
# which have no UTF-8 form (st.text() leaves category Cs out unless asked).
peer_text = st.text(st.characters(categories=["Cs", "Lu", "Ll", "Nd", "Po", "Cc"]), max_size=6)
meta_keys = st.sampled_from(["progressToken", "x/y", "\ud800"])


@st.composite
def surrogate_messages(draw: st.DrawFn) -> Any:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": draw(st.one_of(methods, peer_text))}
    if draw(st.booleans()):
        msg["id"] = draw(st.one_of(st.integers(0, 5), peer_text))
    if draw(st.booleans()):
        msg["params"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "name": peer_text,
                    "arguments": st.dictionaries(peer_text, peer_text, max_size=2),
                    "requestId": st.one_of(st.integers(0, 5), peer_text),
                    "reason": peer_text,
                    "cursor": peer_text,
                    "_meta": st.dictionaries(meta_keys, peer_text, max_size=2),
                },
            )
        )
    return msg


def assert_valid_utf8_json(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


@pytest.mark.req("basic/index#3", "basic/index#7", "basic/index#10")
@settings(max_examples=300)
@given(surrogate_messages())
def test_lone_surrogates_from_the_peer_never_break_a_reply(value: Any) -> None:
    client, server = handshake()
    text = json.dumps(value)  # ASCII JSON text: surrogates travel as \u escapes
    for conn in (client, server):
        for ev in conn.receive_message(text):
            if isinstance(ev, MessageRejected) and ev.reply is not None:
                assert assert_valid_utf8_json(ev.reply)["error"]["message"]
            elif isinstance(ev, RequestReceived):
                # echo whatever the peer sent back to it, in a result or in an error
                if ev.method == "tools/call":
                    result = CallToolResult(
                        content=[TextContent(text=ev.params.name)], structured_content=dict(ev.params.arguments or {})
                    )
                    reply = assert_valid_utf8_json(conn.send_response(ev.id, result))
                    assert reply["id"] == ev.id and reply["result"]["content"][0]["text"] == ev.params.name
                else:
                    reply = assert_valid_utf8_json(conn.send_error(ev.id, -32602, f"no {ev.method}", value))
                    # what the peer sent, as JSON decodes it (an escaped surrogate pair is one character)
                    assert reply["id"] == ev.id and reply["error"]["data"] == json.loads(text)
    # both sessions still work
    rid, data = client.send_request("tools/list")
    assert any(isinstance(e, RequestReceived) and e.id == rid for e in server.receive_message(data))


# -- values with no JSON form ------------------------------------------------------------------------


@pytest.mark.req("basic/index#3")
def test_a_number_beyond_double_range_from_the_peer_is_a_parse_error() -> None:
    client, server = handshake()
    (ev,) = server.receive_message(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"v":1e400}}}'
    )
    assert isinstance(ev, MessageRejected) and ev.error.code == ErrorCode.PARSE_ERROR
    assert ev.reply is not None and wire(ev.reply)["error"]["code"] == -32700
    # nothing was recorded: the same id is a fresh request, and it can be answered
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}')
    assert isinstance(ev, RequestReceived)
    assert wire(server.send_response(1, CallToolResult(content=[])))["id"] == 1


@pytest.mark.req("basic/index#3", "basic/index#11")
def test_a_result_or_error_with_no_json_form_is_refused_and_the_request_stays_answerable() -> None:
    client, server = handshake()
    rid, data = client.send_request("tools/call", CallToolRequestParams(name="t"))
    server.receive_message(data)
    bad = CallToolResult(content=[], structured_content={"v": [1.0, float("nan")]})
    with pytest.raises(LocalProtocolError, match=r"structuredContent\.v\[1\]") as info:
        server.send_response(rid, bad)
    assert info.value.code == ErrorCode.INTERNAL_ERROR
    with pytest.raises(LocalProtocolError, match=r"error\.data\.when.*datetime") as info:
        server.send_error(rid, -32000, "failed", {"when": datetime.datetime(2026, 1, 1)})
    assert info.value.code == ErrorCode.INTERNAL_ERROR
    # still in flight: the runtime can send a plain internal error instead
    reply = wire(server.send_error(rid, ErrorCode.INTERNAL_ERROR, "internal error"))
    assert reply["id"] == rid and reply["error"]["code"] == -32603
    (ev,) = client.receive_message(json.dumps(reply))
    assert isinstance(ev, ErrorReceived)


@pytest.mark.req("basic/lifecycle#3")
def test_an_initialize_result_with_no_json_form_leaves_the_server_uninitialized() -> None:
    client = Connection(Role.CLIENT)
    server = Connection(Role.SERVER, capabilities=TOOLS)
    rid, data = client.send_request("initialize", init_params("2025-06-18"))
    server.receive_message(data)
    bad = InitializeResult(
        protocol_version="2025-06-18", capabilities=TOOLS, server_info=SERVER_INFO, meta={"x": float("inf")}
    )
    with pytest.raises(LocalProtocolError, match=r"_meta\.x") as info:
        server.send_response(rid, bad)
    assert info.value.code == ErrorCode.INTERNAL_ERROR
    assert server.protocol_version is None and server.phase is Phase.INITIALIZING
    good = InitializeResult(protocol_version="2025-06-18", capabilities=TOOLS, server_info=SERVER_INFO)
    assert [type(e) for e in client.receive_message(server.send_response(rid, good))] == [ResponseReceived]
    assert server.protocol_version == "2025-06-18" and server.phase is Phase.AWAITING_INITIALIZED


@pytest.mark.req("basic/utilities/progress#4")
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_progress_values_must_be_finite(bad: float) -> None:
    client, server = handshake()
    rid, data = client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token=True)
    server.receive_message(data)
    with pytest.raises(LocalProtocolError, match="finite") as info:
        server.send_progress(rid, bad)
    assert info.value.code == ErrorCode.INVALID_PARAMS
    with pytest.raises(LocalProtocolError, match="finite"):
        server.send_progress(rid, 1, total=bad)
    # nothing was recorded: progress starts afresh
    (ev,) = client.receive_message(server.send_progress(rid, 0.5) or b"")
    assert isinstance(ev, ProgressReceived) and ev.progress == 0.5
    # the same mistake is reported when the requestor asked for no progress
    rid2, data = client.send_request("tools/call", CallToolRequestParams(name="t"))
    server.receive_message(data)
    assert server.send_progress(rid2, 1) is None
    with pytest.raises(LocalProtocolError, match="finite"):
        server.send_progress(rid2, bad)


# -- error messages ----------------------------------------------------------------------------------


@pytest.mark.req("schema#1")
def test_error_messages_we_send_are_one_concise_line() -> None:
    client, server = handshake()
    for rid in (1, 2, 3, 4):
        server.receive_message(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}))
    # a handler's multi-line message: one line on the wire, the full text in data
    text = "Tool failed:\n  Traceback (most recent call last):\r\n    boom\n"
    error = wire(server.send_error(1, -32000, text))["error"]
    assert error == {"code": -32000, "message": "Tool failed: Traceback (most recent call last): boom", "data": text}
    # a long one is cut at ERROR_MESSAGE_LIMIT (200) characters
    error = wire(server.send_error(2, -32000, "x" * 500))["error"]
    assert len(error["message"]) == 200 and error["message"].endswith("...") and error["data"] == "x" * 500
    # data the caller gave is kept as it is
    error = wire(server.send_error(3, -32000, "a\nb", {"k": 1}))["error"]
    assert error == {"code": -32000, "message": "a b", "data": {"k": 1}}
    # short single lines are untouched
    assert wire(server.send_error(4, -32000, "Nope."))["error"] == {"code": -32000, "message": "Nope."}


@pytest.mark.req("schema#1")
def test_library_generated_error_messages_are_one_concise_line() -> None:
    client, server = handshake()
    method = "bad\nmethod " + "m" * 300
    (ev,) = server.receive_message(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method}))
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    error = wire(ev.reply)["error"]
    assert error["code"] == ErrorCode.METHOD_NOT_FOUND
    assert "\n" not in error["message"] and len(error["message"]) <= 200
    assert error["message"].startswith("Method not found: bad method mmm")
    assert error["data"] == f"Method not found: {method}"
    (ev,) = server.receive_message(b"{" + b'"a":' * 300)
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    assert len(wire(ev.reply)["error"]["message"]) <= 200


# -- requirement ids on faults, and observer mode --------------------------------------------


@pytest.mark.req("basic/index#5", "basic/lifecycle#1", "basic/lifecycle#14")
def test_refusals_name_the_requirement_the_peer_broke_and_its_level() -> None:
    server = Connection(Role.SERVER, capabilities=TOOLS)
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    assert isinstance(ev, MessageRejected) and (ev.requirement, ev.level) == ("basic/lifecycle#1", "MUST")
    assert ev.error.requirement == "basic/lifecycle#1"
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":null,"method":"ping"}')
    assert isinstance(ev, MessageRejected) and (ev.requirement, ev.level) == ("basic/index#5", "MUST NOT")
    client, server = handshake()
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":9,"method":"prompts/list"}')  # not declared
    assert isinstance(ev, MessageRejected) and ev.requirement == "basic/lifecycle#14"
    # an unknown method breaks nothing: refused, with no requirement
    (ev,) = server.receive_message(b'{"jsonrpc":"2.0","id":10,"method":"vendor/thing"}')
    assert isinstance(ev, MessageRejected) and ev.requirement is None and ev.level is None


@pytest.mark.req("basic/lifecycle#1", "server/utilities/logging#1")
def test_local_errors_name_the_requirement_they_protect() -> None:
    client = Connection(Role.CLIENT)
    with pytest.raises(LocalProtocolError) as caught:
        client.send_request("tools/list")
    assert caught.value.requirement == "basic/lifecycle#1"
    _, server = handshake(server_caps=TOOLS)
    from mcp_ref.schema.logging import LoggingMessageNotificationParams

    params = LoggingMessageNotificationParams(level="info", data="x")
    with pytest.raises(LocalProtocolError) as caught:
        server.send_notification("notifications/message", params)
    assert caught.value.requirement == "server/utilities/logging#1"


def _json(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


@pytest.mark.req("basic/utilities/progress#4", "server/utilities/logging#1", "basic/lifecycle#14")
def test_observer_mode_follows_what_the_watched_side_sent_and_reports_what_it_broke() -> None:
    watched = Connection(Role.SERVER, observer=True)
    # what the client sends, the observer receives; what the server sends, it observes as sent
    init = {
        "jsonrpc": "2.0",
        "id": "init-1",
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    }
    (ev,) = watched.receive_message(_json(init))
    assert isinstance(ev, RequestReceived)
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"},
    }
    assert watched.observe_sent(_json({"jsonrpc": "2.0", "id": "init-1", "result": result})) == []
    assert watched.phase is Phase.AWAITING_INITIALIZED and watched.we_have("tools")
    watched.receive_message(_json({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    # a request with the id the client chose, progress asked for
    call = {
        "jsonrpc": "2.0",
        "id": "c7",
        "method": "tools/call",
        "params": {"name": "t", "_meta": {"progressToken": 5}},
    }
    (ev,) = watched.receive_message(_json(call))
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 5, "progress": 2}}
    assert watched.observe_sent(_json(progress)) == []
    (broken,) = watched.observe_sent(_json(progress))  # not increasing
    assert isinstance(broken, RuleBroken) and (broken.requirement, broken.level) == (
        "basic/utilities/progress#4",
        "MUST",
    )
    # a log message without the logging capability, a list_changed without listChanged
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    (broken,) = watched.observe_sent(_json(log))
    assert broken.requirement == "server/utilities/logging#1"
    (broken,) = watched.observe_sent(_json({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
    assert broken.requirement == "basic/lifecycle#14"
    # the answer retires the request; nothing is produced and nothing raised on the way
    assert watched.observe_sent(_json({"jsonrpc": "2.0", "id": "c7", "result": {"content": []}})) == []
    assert watched.incoming("c7") is None
    assert watched.observe_sent(b"not json") == [] and watched.observe_sent(b'{"jsonrpc":"2.0"}') == []


def test_an_observer_answers_nothing() -> None:
    watched = Connection(Role.SERVER, observer=True)
    (ev,) = watched.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    assert isinstance(ev, MessageRejected) and ev.reply is None
    (ev,) = watched.receive_message(b"{oops")
    assert isinstance(ev, MessageRejected) and ev.reply is None


def test_observe_sent_is_for_observer_mode_only() -> None:
    with pytest.raises(LocalProtocolError, match="observer mode"):
        Connection(Role.CLIENT).observe_sent(b"{}")


@pytest.mark.req("basic/lifecycle#14")
def test_observing_the_client_side_registers_its_own_ids() -> None:
    watched = Connection(Role.CLIENT, observer=True)
    init = {
        "jsonrpc": "2.0",
        "id": 41,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    }
    assert watched.observe_sent(_json(init)) == []
    assert watched.outgoing(41) is not None and watched.phase is Phase.INITIALIZING
    result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
    (ev,) = watched.receive_message(_json({"jsonrpc": "2.0", "id": 41, "result": result}))
    assert isinstance(ev, ResponseReceived)
    assert watched.observe_sent(_json({"jsonrpc": "2.0", "method": "notifications/initialized"})) == []
    # tools/list to a server that declared no tools: recorded anyway, and its answer is not "unknown"
    (broken,) = watched.observe_sent(_json({"jsonrpc": "2.0", "id": 42, "method": "tools/list"}))
    assert broken.requirement == "basic/lifecycle#14"
    (ev,) = watched.receive_message(_json({"jsonrpc": "2.0", "id": 42, "error": {"code": -32601, "message": "no"}}))
    assert isinstance(ev, ErrorReceived)
