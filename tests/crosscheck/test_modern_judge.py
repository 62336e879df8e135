"""The rules of 2026-07-28 on their own (``mcp_ref.crosscheck.modern_judge``, sans-IO): each rule
is shown one answer or request that breaks it and nothing else, and a valid one that breaks nothing.
The battery, the fixture, the tap and the judge all hold traffic to these same rules."""

from typing import Any

import pytest

from mcp_ref.crosscheck.modern_judge import (
    CAPS,
    CINFO,
    LOGLEVEL,
    PV,
    SINFO,
    SUBID,
    Answer,
    ClientRules,
    ModernJudge,
)
from mcp_ref.crosscheck.report import Finding

META = {PV: "2026-07-28", CAPS: {"elicitation": {"form": {}}}, CINFO: {"name": "c", "version": "1"}}
SERVER = {SINFO: {"name": "s", "version": "1"}}
JSON = {"status": 200, "content_type": "application/json"}


def req(method: str, rid: Any = 1, meta: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": method,
        "params": {**params, "_meta": META if meta is None else meta},
    }


def ok(rid: Any = 1, **result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "_meta": SERVER, **result}}


def err(code: int, rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": "no"}}


def note(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


LISTED = {"tools": [], "ttlMs": 0, "cacheScope": "public"}
CALLED = {"content": []}
ASK = {
    "method": "elicitation/create",
    "params": {"mode": "form", "message": "?", "requestedSchema": {"type": "object", "properties": {}}},
}


def judged(sent: dict[str, Any], got: Answer, *, http: bool = False, declared: Any = None) -> set[str]:
    found: list[Finding] = []
    judge = ModernJudge(found.append, http=http)
    judge.declared = {"logging": {}} if declared is None else declared
    judge.answer(sent, got)
    return {f.requirement.removeprefix("2026-07-28:") for f in found}


#: (the rule, the request, what came back, over HTTP) -- each breaks that rule and no other
BROKEN: list[tuple[str, dict[str, Any], Answer, bool]] = [
    ("basic/index#10", req("tools/call"), Answer({"jsonrpc": "2.0", "id": 1, "result": {"_meta": SERVER}}), False),
    ("basic/index#12", req("tools/call"), Answer(ok(resultType="done")), False),
    (
        "basic/index#59",
        req("tools/call"),
        Answer({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", **CALLED}}),
        False,
    ),
    ("server/utilities/caching#1", req("tools/list"), Answer(ok(tools=[])), False),
    ("server/utilities/caching#1", req("tools/list"), Answer(ok(**{**LISTED, "cacheScope": "everyone"})), False),
    ("server/utilities/caching#11", req("tools/list"), Answer(ok(**{**LISTED, "ttlMs": -1})), False),
    ("basic/patterns/mrtr#5", req("tools/list"), Answer(ok(resultType="input_required", requestState="s")), False),
    ("basic/patterns/mrtr#16", req("tools/call"), Answer(ok(resultType="input_required")), False),
    ("basic/patterns/mrtr#9", req("tools/call"), Answer(ok(resultType="input_required", inputRequests=[ASK])), False),
    (
        "basic/patterns/mrtr#9",
        req("tools/call"),
        Answer(ok(resultType="input_required", inputRequests={"a": {"method": "ask/user"}})),
        False,
    ),
    (
        "basic/patterns/mrtr#17",
        req("tools/call", meta={**META, CAPS: {}}),
        Answer(ok(resultType="input_required", inputRequests={"a": ASK})),
        False,
    ),
    ("basic/index#22", req("tools/call"), Answer(err(-32042)), False),
    ("basic/index#21", req("tools/call"), Answer(err(-32077)), False),
    (
        "basic/transports/streamable-http#20",
        req("tools/call"),
        Answer(ok(**CALLED), others=[{**ASK, "jsonrpc": "2.0", "id": "s1"}], **JSON),
        True,
    ),
    ("basic/transports/stdio#9", req("tools/call"), Answer(ok(**CALLED), others=[{**ASK, "id": "s1"}]), False),
    (
        "server/utilities/logging#3",
        req("tools/call"),
        Answer(ok(**CALLED), others=[note("notifications/message", level="info", data="x")]),
        False,
    ),
    (
        "basic/patterns/cancellation#3",
        req("tools/call"),
        Answer(ok(**CALLED), others=[note("notifications/cancelled", requestId=1)]),
        False,
    ),
    (
        "basic/transports/streamable-http#72",
        req("tools/call"),
        Answer(ok(**CALLED), headers={"mcp-session-id": "abc"}, **JSON),
        True,
    ),
    (
        "basic/transports/streamable-http#22",
        req("tools/call"),
        Answer(ok(**CALLED), status=200, content_type="text/event-stream"),
        True,
    ),
    (
        "basic/transports/streamable-http#21",
        req("tools/call"),
        Answer(
            ok(**CALLED),
            status=200,
            content_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
            open_after=True,
        ),
        True,
    ),
    (
        "basic/transports/streamable-http#16",
        req("tools/call"),
        Answer(None, status=200, content_type="text/plain", body=b"hello"),
        True,
    ),
    ("schema#18", req("tools/call"), Answer(err(-32020), **JSON), True),
    ("basic/index#58", req("tools/call"), Answer(err(-32021), **JSON), True),
    ("basic/transports/streamable-http#28", req("tools/call"), Answer(err(-32022), **JSON), True),
    ("basic/transports/streamable-http#29", req("tools/call"), Answer(err(-32601), **JSON), True),
]


@pytest.mark.req(
    "2026-07-28:basic/index#10",
    "2026-07-28:basic/index#12",
    "2026-07-28:basic/index#59",
    "2026-07-28:server/utilities/caching#1",
    "2026-07-28:server/utilities/caching#11",
    "2026-07-28:basic/patterns/mrtr#5",
    "2026-07-28:basic/patterns/mrtr#16",
    "2026-07-28:basic/patterns/mrtr#9",
    "2026-07-28:basic/patterns/mrtr#17",
    "2026-07-28:basic/index#22",
    "2026-07-28:basic/index#21",
    "2026-07-28:basic/transports/streamable-http#20",
    "2026-07-28:basic/transports/stdio#9",
    "2026-07-28:server/utilities/logging#3",
    "2026-07-28:basic/patterns/cancellation#3",
    "2026-07-28:basic/transports/streamable-http#72",
    "2026-07-28:basic/transports/streamable-http#22",
    "2026-07-28:basic/transports/streamable-http#21",
    "2026-07-28:basic/transports/streamable-http#16",
    "2026-07-28:schema#18",
    "2026-07-28:basic/index#58",
    "2026-07-28:basic/transports/streamable-http#28",
    "2026-07-28:basic/transports/streamable-http#29",
)
@pytest.mark.parametrize(("rule", "sent", "got", "http"), BROKEN, ids=[f"{r}-{i}" for i, (r, *_) in enumerate(BROKEN)])
def test_each_answer_rule_on_its_own(rule: str, sent: dict[str, Any], got: Answer, http: bool) -> None:
    assert judged(sent, got, http=http) == {rule}


@pytest.mark.parametrize(
    ("sent", "got", "http"),
    [
        (req("tools/call"), Answer(ok(**CALLED)), False),
        (req("tools/list"), Answer(ok(**LISTED)), False),
        (req("tools/list"), Answer(ok(**{**LISTED, "ttlMs": 5.0})), False),  # an integer written as a float
        (req("tools/call"), Answer(ok(resultType="input_required", inputRequests={"a": ASK}, requestState="s")), False),
        (req("resources/read"), Answer(err(-32002)), False),  # -32002 is still resources/read's in this revision
        (req("tools/call"), Answer(err(-32602), **JSON), True),
        (req("nope"), Answer(err(-32601), status=404, content_type="application/json"), True),
        (
            req("tools/call", meta={**META, LOGLEVEL: "info"}),
            Answer(ok(**CALLED), others=[note("notifications/message", level="info", data="x")]),
            False,
        ),
        (
            req("tools/call"),
            Answer(ok(**CALLED), status=200, content_type="text/event-stream", headers={"x-accel-buffering": "no"}),
            True,
        ),
    ],
)
def test_valid_answers_break_nothing(sent: dict[str, Any], got: Answer, http: bool) -> None:
    assert judged(sent, got, http=http) == set()


@pytest.mark.req("2026-07-28:server/utilities/logging#2")
def test_a_log_message_from_a_server_that_declared_no_logging_once_its_capabilities_are_known() -> None:
    sent = req("tools/call", meta={**META, LOGLEVEL: "info"})
    got = Answer(ok(**CALLED), others=[note("notifications/message", level="info", data="x")])
    assert judged(sent, got, declared={}) == {"server/utilities/logging#2"}
    found: list[Finding] = []
    ModernJudge(found.append, http=False).answer(sent, got)  # capabilities unknown: not judged
    assert found == []


def subscription(others: list[Any], *, passive: bool = False) -> set[str]:
    found: list[Finding] = []
    judge = ModernJudge(found.append, http=False, passive=passive)
    sent = req("subscriptions/listen", rid="L", notifications={"toolsListChanged": True})
    judge.listens.add('"L"')
    judge.subscription(sent, others, {"toolsListChanged": True})
    return {f.requirement.removeprefix("2026-07-28:") for f in found}


ACK = note("notifications/subscriptions/acknowledged", _meta={SUBID: "L"}, notifications={"toolsListChanged": True})
TOOLS_CHANGED = note("notifications/tools/list_changed", _meta={SUBID: "L"})


@pytest.mark.req(
    "2026-07-28:basic/patterns/subscriptions#2",
    "2026-07-28:basic/patterns/subscriptions#1",
    "2026-07-28:basic/index#61",
)
def test_a_subscriptions_stream() -> None:
    assert subscription([ACK, TOOLS_CHANGED]) == set()
    assert subscription([TOOLS_CHANGED]) == {"basic/patterns/subscriptions#2"}
    assert subscription([]) == {"basic/patterns/subscriptions#2"}
    assert subscription([], passive=True) == set()  # watched traffic: the client may have left at once
    assert subscription([ACK, note("notifications/prompts/list_changed", _meta={SUBID: "L"})]) == {
        "basic/patterns/subscriptions#1"
    }
    assert subscription([ACK, note("notifications/tools/list_changed")]) == {"basic/index#61"}


def client_found(run: Any) -> set[str]:
    found: list[Finding] = []
    rules = ClientRules(found.append)
    run(rules)
    assert all(f.party == "client" for f in found)
    return {f.requirement.removeprefix("2026-07-28:") for f in found}


STATED = {"resultType": "input_required", "inputRequests": {"a": ASK}, "requestState": "S"}
ANSWERED = {"inputResponses": {"a": {"action": "accept", "content": {}}}}


@pytest.mark.req(
    "2026-07-28:basic/index#52",
    "2026-07-28:basic/index#55",
    "2026-07-28:basic/patterns/mrtr#21",
    "2026-07-28:basic/patterns/mrtr#23",
    "2026-07-28:basic/patterns/mrtr#25",
    "2026-07-28:basic/patterns/mrtr#26",
)
def test_a_clients_requests_and_retries() -> None:
    assert client_found(lambda r: r.meta("tools/list", META, {})) == set()
    assert client_found(lambda r: r.meta("tools/list", {PV: "2026-07-28", CINFO: {}}, {})) == {"basic/index#52"}
    assert client_found(lambda r: r.meta("tools/list", {PV: "2026-07-28", CAPS: {}}, {})) == {"basic/index#55"}
    good = {**ANSWERED, "requestState": "S"}
    assert client_found(lambda r: r.retry("t", 1, STATED, good, 2)) == set()
    assert client_found(lambda r: r.retry("t", 1, STATED, good, 1)) == {"basic/patterns/mrtr#26"}
    assert client_found(lambda r: r.retry("t", 1, STATED, {"requestState": "S"}, 2)) == {"basic/patterns/mrtr#21"}
    assert client_found(lambda r: r.retry("t", 1, STATED, {**ANSWERED, "requestState": "T"}, 2)) == {
        "basic/patterns/mrtr#23"
    }
    unstated = {k: v for k, v in STATED.items() if k != "requestState"}
    assert client_found(lambda r: r.retry("t", 1, unstated, ANSWERED, 2)) == set()
    assert client_found(lambda r: r.retry("t", 1, unstated, good, 2)) == {"basic/patterns/mrtr#25"}


WEATHER = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "weather"}


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#25",
    "2026-07-28:basic/transports/streamable-http#26",
    "2026-07-28:basic/transports/streamable-http#32",
    "2026-07-28:basic/transports/streamable-http#36",
)
@pytest.mark.parametrize(
    ("headers", "rule"),
    [
        ({**HEADERS, "Mcp-Param-Region": "north"}, None),
        ({**HEADERS, "Mcp-Param-Region": "=?base64?bm9ydGg=?="}, None),  # the Base64 form of "north"
        ({**HEADERS, "Mcp-Name": "=?base64?d2VhdGhlcg==?=", "Mcp-Param-Region": "north"}, None),
        ({k: v for k, v in HEADERS.items() if k != "MCP-Protocol-Version"} | {"Mcp-Param-Region": "north"}, "#25"),
        ({**HEADERS, "MCP-Protocol-Version": "2025-11-25", "Mcp-Param-Region": "north"}, "#26"),
        ({**HEADERS, "Mcp-Method": "tools/list", "Mcp-Param-Region": "north"}, "#32"),
        ({**HEADERS, "Mcp-Name": "other", "Mcp-Param-Region": "north"}, "#32"),
        (HEADERS, "#36"),
        ({**HEADERS, "Mcp-Param-Region": "south"}, "#36"),
    ],
)
def test_a_clients_request_metadata_headers(headers: dict[str, str], rule: str | None) -> None:
    params = {"name": "weather", "arguments": {"region": "north"}}
    found = client_found(lambda r: r.headers("tools/call", params, META, headers, WEATHER))
    assert found == (set() if rule is None else {"basic/transports/streamable-http" + rule})
