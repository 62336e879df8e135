"""The observer judges scripted traffic: each fault is caught with its requirement, clean traffic is clean."""

import json
from typing import Any

import pytest

from mcp_ref.crosscheck.observer import Direction, Observer
from mcp_ref.crosscheck.rules import RULES

C2S = Direction.TO_SERVER
S2C = Direction.TO_CLIENT

SERVER_CAPS: dict[str, Any] = {
    "tools": {},
    "resources": {},
    "prompts": {},
    "logging": {},
    "tasks": {"requests": {"tools": {"call": {}}}, "cancel": {}},
}
CLIENT_CAPS: dict[str, Any] = {"sampling": {}, "elicitation": {"form": {}}, "roots": {}}


def send(obs: Observer, direction: Direction, message: Any) -> list[Any]:
    data = message if isinstance(message, bytes) else json.dumps(message).encode()
    return obs.observe(direction, data)


def req(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        out["params"] = params
    return out


def note(method: str, params: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    return out


def ok(rid: Any, result: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {} if result is None else result}


def err(rid: Any, code: int, message: str = "no") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def init_params(version: str = "2025-11-25", caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": CLIENT_CAPS if caps is None else caps,
        "clientInfo": {"name": "c", "version": "1"},
    }


def init_result(version: str = "2025-11-25", caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": SERVER_CAPS if caps is None else caps,
        "serverInfo": {"name": "s", "version": "1"},
    }


def handshake(
    obs: Observer, *, server_caps: dict[str, Any] | None = None, client_caps: dict[str, Any] | None = None
) -> None:
    send(obs, C2S, req(0, "initialize", init_params(caps=client_caps)))
    send(obs, S2C, ok(0, init_result(caps=server_caps)))
    send(obs, C2S, note("notifications/initialized"))


TOOL = {"name": "echo", "inputSchema": {"type": "object"}}
TYPED_TOOL = {
    "name": "add",
    "inputSchema": {"type": "object"},
    "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
}


def task(status: str, stamp: str = "2025-11-25T10:00:00Z") -> dict[str, Any]:
    return {"taskId": "t1", "status": status, "createdAt": stamp, "lastUpdatedAt": stamp, "ttl": None}


#: (requirement, party, messages after the handshake or None for a raw script)
SCRIPTS: list[tuple[str, str, list[tuple[Direction, Any]]]] = [
    ("basic/index#7", "server", [(C2S, req(1, "ping")), (S2C, ok(99))]),
    ("basic/index#7", "server", [(C2S, req(1, "ping")), (S2C, ok("1"))]),
    ("basic/index#8", "server", [(C2S, req(1, "ping")), (S2C, {"jsonrpc": "2.0", "id": 1, "result": [1]})]),
    ("basic/index#12", "server", [(C2S, req(1, "ping")), (S2C, {"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}})]),
    ("basic/index#11", "server", [(C2S, req(1, "ping")), (S2C, {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}})]),
    (
        "basic/index#10",
        "server",
        [(C2S, req(1, "ping")), (S2C, {"jsonrpc": "2.0", "error": {"code": -1, "message": "x"}})],
    ),
    ("basic/index#5", "client", [(C2S, req(None, "ping"))]),
    ("basic/index#4", "client", [(C2S, req(1.5, "ping"))]),
    ("basic/index#6", "client", [(C2S, req(1, "ping")), (S2C, ok(1)), (C2S, req(1, "ping"))]),
    ("basic/index#3", "client", [(C2S, {"jsonrpc": "1.0", "id": 1, "method": "ping"})]),
    ("basic/index#3", "server", [(C2S, req(1, "mcp/nothing")), (S2C, err(1, -32600))]),
    ("basic/index#3", "server", [(C2S, {"jsonrpc": "2.0", "id": 1}), (S2C, ok(1))]),
    ("basic/index#26", "client", [(C2S, req(1, "tools/list", {"_meta": {"-bad": 1}}))]),
    ("basic/utilities/progress#1", "client", [(C2S, req(1, "tools/list", {"_meta": {"progressToken": 1.5}}))]),
    (
        "basic/utilities/progress#2",
        "client",
        [
            (C2S, req(1, "tools/call", {"name": "echo", "_meta": {"progressToken": "p"}})),
            (C2S, req(2, "tools/call", {"name": "echo", "_meta": {"progressToken": "p"}})),
        ],
    ),
    (
        "basic/utilities/progress#4",
        "server",
        [
            (C2S, req(1, "tools/call", {"name": "echo", "_meta": {"progressToken": "p"}})),
            (S2C, note("notifications/progress", {"progressToken": "p", "progress": 2})),
            (S2C, note("notifications/progress", {"progressToken": "p", "progress": 2})),
        ],
    ),
    (
        "basic/utilities/progress#7",
        "server",
        [(S2C, note("notifications/progress", {"progressToken": "q", "progress": 1}))],
    ),
    (
        "basic/utilities/progress#14",
        "server",
        [
            (C2S, req(1, "tools/call", {"name": "echo", "_meta": {"progressToken": "p"}})),
            (S2C, ok(1, {"content": []})),
            (S2C, note("notifications/progress", {"progressToken": "p", "progress": 1})),
        ],
    ),
    ("basic/utilities/cancellation#1", "client", [(C2S, note("notifications/cancelled", {"requestId": 42}))]),
    (
        "basic/utilities/cancellation#4",
        "server",
        [(C2S, req(1, "ping")), (C2S, note("notifications/cancelled", {"requestId": 1})), (S2C, ok(1))],
    ),
    (
        "basic/utilities/cancellation#3",
        "client",
        [
            (C2S, req(1, "tools/call", {"name": "echo", "task": {"ttl": 1000}})),
            (S2C, ok(1, {"task": task("working")})),
            (C2S, note("notifications/cancelled", {"requestId": 1})),
        ],
    ),
    ("basic/lifecycle#14", "server", [(S2C, note("notifications/tools/list_changed"))]),
    ("basic/lifecycle#14", "server", [(S2C, req(5, "tools/list"))]),
    ("basic/lifecycle#14", "client", [(C2S, req(1, "tools/call", {"name": 5}))]),
    ("basic/lifecycle#14", "client", [(C2S, [req(1, "ping")])]),
    (
        "client/sampling#4",
        "server",
        [
            (
                S2C,
                req(
                    5,
                    "sampling/createMessage",
                    {
                        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                        "maxTokens": 10,
                        "tools": [TOOL],
                    },
                ),
            )
        ],
    ),
    (
        "client/elicitation#6",
        "server",
        [
            (
                S2C,
                req(
                    5,
                    "elicitation/create",
                    {
                        "mode": "url",
                        "message": "go",
                        "url": "https://example.com",
                        "elicitationId": "e1",
                    },
                ),
            )
        ],
    ),
    ("server/tools#5", "server", [(C2S, req(1, "tools/list")), (S2C, ok(1, {"tools": [{"name": "a"}]}))]),
    (
        "server/tools#5",
        "server",
        [(C2S, req(1, "tools/list")), (S2C, ok(1, {"tools": [{"name": "a", "inputSchema": {"type": "string"}}]}))],
    ),
    (
        "server/tools#9",
        "server",
        [(C2S, req(1, "tools/list")), (S2C, ok(1, {"tools": [{**TOOL, "name": "say hello"}]}))],
    ),
    ("server/tools#7", "server", [(C2S, req(1, "tools/list")), (S2C, ok(1, {"tools": [{**TOOL, "name": "x" * 129}]}))]),
    ("server/tools#11", "server", [(C2S, req(1, "tools/list")), (S2C, ok(1, {"tools": [TOOL, TOOL]}))]),
    (
        "server/tools#16",
        "server",
        [
            (C2S, req(1, "tools/list")),
            (S2C, ok(1, {"tools": [TYPED_TOOL]})),
            (C2S, req(2, "tools/call", {"name": "add"})),
            (S2C, ok(2, {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"total": 3}})),
        ],
    ),
    (
        "server/tools#15",
        "server",
        [
            (C2S, req(1, "tools/list")),
            (S2C, ok(1, {"tools": [TYPED_TOOL]})),
            (C2S, req(2, "tools/call", {"name": "add"})),
            (S2C, ok(2, {"content": [], "structuredContent": {"sum": 3}})),
        ],
    ),
    (
        "server/tools#20",
        "server",
        [
            (C2S, req(1, "tools/list")),
            (S2C, ok(1, {"tools": [TOOL]})),
            (C2S, req(2, "tools/call", {"name": "nope"})),
            (S2C, ok(2, {"content": [{"type": "text", "text": "done"}]})),
        ],
    ),
    (
        "server/resources#10",
        "server",
        [
            (C2S, req(1, "resources/read", {"uri": "a://b"})),
            (S2C, ok(1, {"contents": [{"uri": "a://b", "blob": "not base64!"}]})),
        ],
    ),
    (
        "server/prompts#3",
        "server",
        [
            (C2S, req(1, "prompts/get", {"name": "p"})),
            (
                S2C,
                ok(
                    1,
                    {
                        "messages": [
                            {"role": "user", "content": {"type": "image", "data": "%%", "mimeType": "image/png"}}
                        ]
                    },
                ),
            ),
        ],
    ),
    (
        "server/prompts#4",
        "server",
        [
            (C2S, req(1, "prompts/get", {"name": "p"})),
            (
                S2C,
                ok(
                    1, {"messages": [{"role": "user", "content": {"type": "audio", "data": "AAAA", "mimeType": "wav"}}]}
                ),
            ),
        ],
    ),
    (
        "server/utilities/logging#2",
        "server",
        [
            (C2S, req(1, "logging/setLevel", {"level": "error"})),
            (S2C, ok(1)),
            (S2C, note("notifications/message", {"level": "info", "data": "chatty"})),
        ],
    ),
    (
        "basic/utilities/tasks#28",
        "server",
        [
            (C2S, req(1, "tasks/get", {"taskId": "t1"})),
            (S2C, ok(1, task("completed"))),
            (C2S, req(2, "tasks/get", {"taskId": "t1"})),
            (S2C, ok(2, task("working"))),
        ],
    ),
    (
        "basic/utilities/tasks#36",
        "server",
        [(C2S, req(1, "tasks/get", {"taskId": "t1"})), (S2C, ok(1, task("working", stamp="yesterday")))],
    ),
    (
        "basic/utilities/tasks#67",
        "server",
        [(C2S, req(1, "tasks/result", {"taskId": "t1"})), (S2C, ok(1, {"content": []}))],
    ),
    (
        "basic/utilities/tasks#39",
        "server",
        [
            (C2S, req(1, "tasks/get", {"taskId": "t1"})),
            (S2C, ok(1, {k: v for k, v in task("working").items() if k != "ttl"})),
        ],
    ),
    ("client/roots#3", "client", [(S2C, req(5, "roots/list")), (C2S, ok(5, {"roots": [{"uri": "https://x/"}]}))]),
]


@pytest.mark.parametrize(
    "requirement, party, script",
    [pytest.param(*c, id=c[0], marks=pytest.mark.req(c[0])) for c in SCRIPTS],
)
def test_each_fault_is_found_with_its_requirement(requirement: str, party: str, script: list[Any]) -> None:
    obs = Observer()
    handshake(obs)
    for direction, message in script:
        send(obs, direction, message)
    found = [(f.requirement, f.party) for f in obs.findings]
    assert (requirement, party) in found, obs.findings
    finding = next(f for f in obs.findings if f.requirement == requirement)
    assert finding.level == RULES[requirement].effective_level
    assert finding.evidence, "a finding shows the message that proves it"


@pytest.mark.req("basic/index#1")
def test_a_result_without_a_field_its_schema_requires_breaks_the_base_protocol() -> None:
    """A tools/call result without its content is the base protocol's fault (schema.ts defines its
    messages), not the catch-all about the negotiated revision, lifecycle#14 (trial30 #3)."""
    obs = Observer()
    handshake(obs)
    send(obs, C2S, req(1, "tools/call", {"name": "echo"}))
    send(obs, S2C, ok(1, {"isError": True}))
    assert [(f.requirement, f.level, f.party) for f in obs.findings] == [("basic/index#1", "MUST", "server")]
    assert "result.content: required field missing" in obs.findings[0].message


@pytest.mark.req("basic/index#7")
def test_a_second_answer_is_called_a_second_answer_not_an_unknown_id() -> None:
    """An id answered twice was sent: the finding says it was answered again (trial30b L3)."""
    obs = Observer()
    handshake(obs)
    send(obs, C2S, req(10, "ping"))
    send(obs, S2C, ok(10))
    send(obs, S2C, ok(10))
    send(obs, S2C, ok(77))
    messages = [f.message for f in obs.findings if f.requirement == "basic/index#7"]
    assert messages == [
        "the server answered request id 10 again, after it had answered it",
        "the server answered request id 77, which the client never sent",
    ], obs.findings


def test_a_clean_session_has_no_findings() -> None:
    obs = Observer()
    handshake(obs)
    script = [
        (C2S, req(1, "tools/list")),
        (S2C, ok(1, {"tools": [TOOL, TYPED_TOOL]})),
        (C2S, req(2, "tools/call", {"name": "add", "arguments": {}, "_meta": {"progressToken": "p"}})),
        (S2C, note("notifications/progress", {"progressToken": "p", "progress": 1, "total": 2})),
        (S2C, note("notifications/progress", {"progressToken": "p", "progress": 2, "total": 2})),
        (S2C, ok(2, {"content": [{"type": "text", "text": '{"sum": 3}'}], "structuredContent": {"sum": 3}})),
        (C2S, req(3, "logging/setLevel", {"level": "warning"})),
        (S2C, ok(3)),
        (S2C, note("notifications/message", {"level": "error", "data": "boom"})),
        (
            S2C,
            req(
                "s1",
                "sampling/createMessage",
                {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                    "maxTokens": 5,
                },
            ),
        ),
        (C2S, ok("s1", {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"})),
        (C2S, req(4, "ping")),
        (C2S, note("notifications/cancelled", {"requestId": 4})),  # crossed the answer: a race the spec allows
        (S2C, ok(4)),
        (C2S, req(5, "tools/call", {"name": "echo", "task": {"ttl": 1000}})),
        (S2C, ok(5, {"task": task("working")})),
        (C2S, req(6, "tasks/result", {"taskId": "t1"})),
        (S2C, ok(6, {"content": [], "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}})),
        (C2S, req(7, "tasks/get", {"taskId": "t1"})),
        (S2C, ok(7, task("completed"))),
    ]
    for direction, message in script:
        send(obs, direction, message)
    # only the cancelled ping's answer, which crossed the cancellation, is remarked on (a SHOULD)
    assert [f.requirement for f in obs.findings] == ["basic/utilities/cancellation#4"]
    assert obs.revision == "2025-11-25"


@pytest.mark.req("server/utilities/logging#1")
def test_server_logging_without_the_capability() -> None:
    obs = Observer()
    handshake(obs, server_caps={"tools": {}})
    send(obs, S2C, note("notifications/message", {"level": "info", "data": "x"}))
    assert [(f.requirement, f.party) for f in obs.findings] == [("server/utilities/logging#1", "server")]


@pytest.mark.req("basic/lifecycle#3")
def test_an_initialize_result_without_capabilities_breaks_lifecycle_3() -> None:
    obs = Observer()
    send(obs, C2S, req(0, "initialize", init_params()))
    send(obs, S2C, ok(0, {"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"}}))
    assert ("basic/lifecycle#3", "server") in [(f.requirement, f.party) for f in obs.findings]


@pytest.mark.req("basic/lifecycle#1", "basic/lifecycle#5", "basic/lifecycle#6")
def test_phase_faults_of_either_side() -> None:
    obs = Observer()
    send(obs, C2S, req(1, "tools/list"))  # before initialize
    send(obs, C2S, req(0, "initialize", init_params()))
    send(obs, C2S, req(2, "tools/list"))  # initialize not answered yet
    send(obs, S2C, ok(0, init_result()))
    send(obs, S2C, req(7, "roots/list"))  # before notifications/initialized
    assert [(f.requirement, f.party) for f in obs.findings] == [
        ("basic/lifecycle#1", "client"),
        ("basic/lifecycle#5", "client"),
        ("basic/lifecycle#6", "server"),
    ]


@pytest.mark.req("basic/utilities/cancellation#2")
def test_cancelling_initialize() -> None:
    obs = Observer()
    send(obs, C2S, req(0, "initialize", init_params()))
    send(obs, C2S, note("notifications/cancelled", {"requestId": 0}))
    assert [(f.requirement, f.party) for f in obs.findings] == [("basic/utilities/cancellation#2", "client")]


@pytest.mark.req("basic/index#3", "basic/index#10")
def test_the_answer_a_refused_message_calls_for() -> None:
    obs = Observer()
    handshake(obs)
    send(obs, C2S, b"{not json")
    send(obs, S2C, err(None, -32700, "Parse error"))  # right: no id, -32700
    send(obs, C2S, req(1, "mcp/nothing"))
    send(obs, S2C, err(1, -32601))  # right
    assert [f.requirement for f in obs.findings if f.party == "server"] == []
    send(obs, C2S, b"{not json either")
    send(obs, S2C, err(None, -32603, "oops"))  # wrong code
    assert [(f.requirement, f.party) for f in obs.findings if f.party == "server"] == [("basic/index#3", "server")]


def test_deliberate_faults_are_not_held_against_the_sender_but_their_answers_are_judged() -> None:
    obs = Observer()
    handshake(obs)
    obs.observe(C2S, json.dumps({"jsonrpc": "2.0", "id": None, "method": "ping"}).encode(), deliberate=True)
    assert obs.findings == []
    send(obs, S2C, ok(None))  # a result for a request the server had to refuse
    assert [f.party for f in obs.findings] == ["server"]


@pytest.mark.req("basic/transports#1", "basic/transports#3", "basic/transports#6", "basic/transports#7")
def test_stdio_lines() -> None:
    obs = Observer(transport="stdio")
    obs.observe_stdio_line(C2S, json.dumps(req(0, "initialize", init_params())).encode())
    pretty = json.dumps(ok(0, init_result()), indent=2).encode().split(b"\n")
    for line in pretty:
        obs.observe_stdio_line(S2C, line)
    assert [(f.requirement, f.party) for f in obs.findings] == [("basic/transports#3", "server")]
    obs.observe_stdio_line(S2C, b"server starting...")
    obs.observe_stdio_line(C2S, b"\xff\xfe")
    obs.flush(S2C)
    obs.observe_stdio_line(C2S, json.dumps(note("notifications/initialized")).encode())
    assert [(f.requirement, f.party) for f in obs.findings][1:] == [
        ("basic/transports#6", "server"),
        ("basic/transports#1", "client"),
    ]


def test_an_unknown_revision_stops_the_judging_with_a_note() -> None:
    obs = Observer()
    send(obs, C2S, req(0, "initialize", init_params()))
    # (2024-11-05 is a revision mcp_ref speaks since the model helper's 2024-11-05 work; an unknown one:)
    send(obs, S2C, ok(0, init_result(version="1999-01-01")))
    send(obs, S2C, b"garbage")
    assert obs.findings == [] and "1999-01-01" in obs.notes[0]


@pytest.mark.req("client/elicitation#16")
def test_an_elicitation_completion_for_an_id_never_sent() -> None:
    obs = Observer()
    handshake(obs, client_caps={"elicitation": {"form": {}, "url": {}}})
    send(obs, S2C, note("notifications/elicitation/complete", {"elicitationId": "never"}))
    assert [(f.requirement, f.party) for f in obs.findings] == [("client/elicitation#16", "server")]


@pytest.mark.req("basic/utilities/cancellation#4")
def test_an_answer_after_a_cancellation_over_http_says_what_the_post_needed() -> None:
    """(trial30b L5) over Streamable HTTP the POST is answered anyway: the finding says how to send no response."""
    obs = Observer(transport="http")
    handshake(obs)
    for direction, message in [(C2S, req(1, "ping")), (C2S, note("notifications/cancelled", {"requestId": 1}))]:
        send(obs, direction, message)
    send(obs, S2C, ok(1))
    [finding] = obs.findings
    assert finding.requirement == "basic/utilities/cancellation#4"
    assert "no JSON-RPC response in it" in finding.message
