"""Value rules (``mcp_ref/crosscheck/values.py``): what the prose or the schema says of a value that
decoding lets through -- more than 100 completion values, a resource URI that is not a URI, a
malformed ``traceparent``, a nested property in an elicitation form.

Each is judged in the shared passive layer (the Observer for the handshake revisions, ModernJudge
and ClientRules for 2026-07-28), so ``mcp-ref check`` and ``mcp-ref judge`` report the same id for
the same bytes: each test runs ``check`` against a corpus variant, then judges the traffic ``check``
recorded, session by session, and expects the same finding from both.
"""

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import CheckConfig
from mcp_ref.crosscheck.judge import judge_records
from mcp_ref.crosscheck.observer import Direction
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.targets import StdioTarget
from mcp_ref.crosscheck.traffic import Record
from mcp_ref.crosscheck.values import form_schema_problem, is_traceparent, is_uri

CORPUS = Path(__file__).parent / "corpus"
CONFIG = CheckConfig(timeout=20.0)


def check(program: str, brk: str, revision: str) -> Report:
    target = StdioTarget(sys.executable, (str(CORPUS / program), "--break", brk))
    return trio.run(lambda: check_server(target, CONFIG, revision=revision))


def judged_sessions(report: Report) -> list[Report]:
    """The traffic ``check`` recorded, judged as ``mcp-ref judge`` judges a log: one report per session."""
    sessions: dict[Any, list[Record]] = {}
    for m in report.traffic:
        sessions.setdefault(m["session"], []).append(Record(Direction(m["dir"]), m["text"].encode()))
    return [judge_records(records, transport="stdio") for records in sessions.values()]


def server_ids(report: Report) -> set[str]:
    return {f.requirement for f in report.findings if f.party == "server"}


def caught_by_both(report: Report, requirement: str, words: str) -> None:
    checked = [f for f in report.findings if f.requirement == requirement and f.party == "server"]
    assert checked and words in checked[0].message, report.to_text()
    judged = [f for r in judged_sessions(report) for f in r.findings if f.requirement == requirement]
    assert judged and words in judged[0].message, [f.message for r in judged_sessions(report) for f in r.findings]
    assert judged[0].party == "server"


# -- the 2025 revisions (the Observer) ---------------------------------------------------------


@pytest.mark.req("basic/index#1")
def test_more_than_100_completion_values_2025() -> None:
    report = check("server_more.py", "completion-too-many", "2025-11-25")
    caught_by_both(report, "basic/index#1", "completion.values has 150 items")
    assert server_ids(report) == {"basic/index#1"}, report.to_text()


@pytest.mark.req("server/resources#6")
def test_a_resource_uri_that_is_not_a_uri_2025() -> None:
    report = check("server_more.py", "resource-uri-not-uri", "2025-11-25")
    caught_by_both(report, "server/resources#6", "'corpus text' is not a URI")
    assert server_ids(report) == {"server/resources#6"}, report.to_text()


# -- 2026-07-28 (ModernJudge: the battery and the passive judges alike) ------------------------


@pytest.mark.req("2026-07-28:server/resources#12")
def test_a_resource_uri_that_is_not_a_uri_2026() -> None:
    report = check("modern_server.py", "resource-uri-not-uri", "2026-07-28")
    caught_by_both(report, "2026-07-28:server/resources#12", "'mem a' is not a URI")
    assert server_ids(report) == {"2026-07-28:server/resources#12"}, report.to_text()


@pytest.mark.req("2026-07-28:basic/index#62")
def test_a_malformed_traceparent_2026() -> None:
    report = check("modern_server.py", "bad-traceparent", "2026-07-28")
    caught_by_both(report, "2026-07-28:basic/index#62", "'not-a-trace' is not a W3C traceparent")
    assert server_ids(report) == {"2026-07-28:basic/index#62"}, report.to_text()


@pytest.mark.req("2026-07-28:basic/index#1")
def test_a_nested_property_in_an_input_requests_elicitation_form_2026() -> None:
    report = check("modern_server.py", "elicitation-nested", "2026-07-28")
    caught_by_both(report, "2026-07-28:basic/index#1", "property 'ok' has type 'object'")
    assert server_ids(report) == {"2026-07-28:basic/index#1"}, report.to_text()


# -- the same rules in each revision, with its ids (recorded traffic) ---------------------------


def session(revision: str, *exchange: tuple[str, Any], caps: dict[str, Any] | None = None) -> Report:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": revision,
            "capabilities": caps or {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    server_caps = {"resources": {}, "completions": {}, "prompts": {}, "tools": {}}
    ok = {"protocolVersion": revision, "capabilities": server_caps, "serverInfo": {"name": "s", "version": "1"}}
    messages: list[tuple[str, Any]] = [
        ("c2s", init),
        ("s2c", {"jsonrpc": "2.0", "id": 0, "result": ok}),
        ("c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        *exchange,
    ]
    records = [Record(Direction(d), json.dumps(m).encode()) for d, m in messages]
    return judge_records(records, transport="stdio")


def ask(rid: int, method: str, params: dict[str, Any]) -> tuple[str, Any]:
    return ("c2s", {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def answer(rid: int, result: dict[str, Any]) -> tuple[str, Any]:
    return ("s2c", {"jsonrpc": "2.0", "id": rid, "result": result})


LISTED = [ask(1, "resources/list", {}), answer(1, {"resources": [{"uri": "notes readme", "name": "readme"}]})]


@pytest.mark.req("server/resources#6")
@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
def test_the_uri_rule_is_resources_6_where_the_prose_states_it(revision: str) -> None:
    assert [f.requirement for f in session(revision, *LISTED).findings] == ["server/resources#6"]


@pytest.mark.req("basic/index#1")
@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_the_uri_rule_is_the_schemas_format_uri_before_2025_06_18(revision: str) -> None:
    assert [f.requirement for f in session(revision, *LISTED).findings] == ["basic/index#1"]


@pytest.mark.req("basic/index#1")
@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_the_completion_cap_holds_in_every_revision(revision: str) -> None:
    ref = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}
    many = {"completion": {"values": [str(i) for i in range(101)]}}
    report = session(revision, ask(1, "completion/complete", ref), answer(1, many))
    assert [(f.requirement, f.party) for f in report.findings] == [("basic/index#1", "server")]
    exactly = {"completion": {"values": [str(i) for i in range(100)], "total": 500, "hasMore": True}}
    assert session(revision, ask(1, "completion/complete", ref), answer(1, exactly)).findings == []


NESTED = {
    "message": "Your address?",
    "requestedSchema": {
        "type": "object",
        "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    },
}


@pytest.mark.req("basic/index#1")
@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
def test_a_nested_elicitation_form_from_a_2025_server(revision: str) -> None:
    elicit = ("s2c", {"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": NESTED})
    declined = ("c2s", {"jsonrpc": "2.0", "id": "e1", "result": {"action": "decline"}})
    report = session(revision, elicit, declined, caps={"elicitation": {}})
    found = [(f.requirement, f.party) for f in report.findings]
    # the specific statement, not also "the params do not decode" (basic/lifecycle#14)
    assert found == [("basic/index#1", "server")], report.to_text()
    assert "property 'address' has type 'object'" in report.findings[0].message


def test_valid_values_break_nothing() -> None:
    good = [
        ask(1, "resources/list", {}),
        answer(1, {"resources": [{"uri": "file:///a%20b.txt", "name": "a"}, {"uri": "urn:isbn:0451", "name": "b"}]}),
        ask(2, "resources/read", {"uri": "data:text/plain,hi"}),
        answer(2, {"contents": [{"uri": "data:text/plain,hi", "text": "hi"}]}),
    ]
    assert session("2025-11-25", *good).findings == []


# -- the predicates ------------------------------------------------------------------------------


def test_uris_by_rfc_3986() -> None:
    for good in ("notes://readme", "file:///a/b", "https://x.example/p?q=1#f", "urn:x", "mem://a", "data:,A%20b"):
        assert is_uri(good), good
    for bad in ("notes readme", "readme", "://x", "1x://a", "a://b c", "a://%zz", "a://é", "", None, 3):
        assert not is_uri(bad), bad


def test_traceparents_by_w3c_trace_context() -> None:
    assert is_traceparent("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01")
    assert is_traceparent("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-future")
    for bad in (
        "not-a-trace",
        "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",  # upper case
        "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",  # version ff
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # all-zero trace id
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",  # all-zero parent id
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-x",  # version 00 has four fields
        7,
    ):
        assert not is_traceparent(bad), bad


def test_form_schemas_flat_and_primitive() -> None:
    flat = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 0},
            "ok": {"type": "boolean"},
            "colour": {"type": "string", "enum": ["red", "green"]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            "picks": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
        },
    }
    assert form_schema_problem(flat, "2025-11-25") is None
    assert form_schema_problem(flat, "2025-06-18") == (
        "property 'tags' has type 'array': only string, number, integer and boolean are allowed"
    )
    objects = {"type": "object", "properties": {"o": {"type": "array", "items": {"type": "object"}}}}
    assert form_schema_problem(objects, "2026-07-28") == "property 'o' is an array whose items are not strings"
    assert form_schema_problem({"type": "object", "properties": {"x": {}}}, "2026-07-28") is not None
