"""The corpus of broken Streamable HTTP servers: each breaks ONE transport rule, and both
``mcp-ref check`` and ``mcp-ref tap --listen`` report it by its id.

``corpus/http_server.py`` is a small Streamable HTTP server in raw JSON on the
standard library's ``http.server`` (no mcp_ref, no h11), served on threads of
this process for each test. The checks that judge a peer's HTTP answers only
matter against a peer that gets them wrong: our own server never does.
"""

import json
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import CheckConfig
from mcp_ref.crosscheck.http_tap import serve_http_tap
from mcp_ref.crosscheck.judge import judge_file
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.tap import Tap
from mcp_ref.crosscheck.targets import HttpTarget

from ..basic.transports.test_streamable_http import raw
from .corpus.http_server import BREAKS, CORRECT, HANGS, serving
from .variants import by_rule

#: (the battery now judges every variant; the tap is checked on some below)
TAP_ONLY: set[str] = set()
ACCEPT = {"accept": "application/json, text/event-stream"}
INIT: Any = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


async def _check(name: str) -> Report:
    with serving(name) as url:
        return await check_server(HttpTarget(url), only=["transport", "jsonrpc"])


@pytest.mark.parametrize(
    "name, requirement",
    by_rule(BREAKS, leave_out=TAP_ONLY),
)
async def test_each_broken_http_server_is_caught_by_its_rule(name: str, requirement: str) -> None:
    report = await _check(name)
    assert {f.requirement for f in report.findings} == {requirement}, report.to_text()
    assert all(f.party == "server" for f in report.findings)
    covering = [c for c in report.checks if requirement in c.requirements]
    assert covering and all(c.status == "fail" for c in covering), report.to_text()


@pytest.mark.req("basic/transports#11", "basic/transports#19", "basic/transports#20")
async def test_the_correct_http_server_comes_out_clean_with_its_id_less_errors() -> None:
    with serving("none") as url:
        # what makes this server worth checking: input it cannot take gets a 400 whose body is
        # a JSON-RPC error without an id, which the HTTP transport allows (#11, #20)
        status, _, body = await raw(url, "POST", ACCEPT, b'{"jsonrpc": "2.0", "method": "ping", "id": 1')
        assert status == 400 and "id" not in json.loads(body) and json.loads(body)["error"]["code"] == -32700
        report = await check_server(HttpTarget(url), only=["transport", "jsonrpc"])
    assert report.findings == [], report.to_text()
    statuses = {c.name: c.status for c in report.checks}
    assert set(statuses.values()) == {"pass"}, report.to_text()
    assert statuses["jsonrpc/parse-error"] == statuses["transport/get-sse-or-405"] == "pass"


async def _through_the_tap(name: str, method: str, body: Any = None) -> tuple[int, str, Tap]:
    tap = Tap(name, "http")
    with serving(name) as upstream:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http_tap, "127.0.0.1", 0, upstream, tap)
            status, headers, _ = await raw(url, method, ACCEPT, body)
            # the tap may still be judging what it forwarded: let it finish before stopping it
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    return status, headers.get("content-type", ""), tap


@pytest.mark.req("basic/transports#21")
async def test_the_tap_catches_a_request_answered_with_plain_text() -> None:
    status, kind, tap = await _through_the_tap("request-text-plain", "POST", INIT)
    assert (status, kind) == (200, "text/plain")  # passed on as it came
    findings = tap.end().findings
    assert [(f.requirement, f.party) for f in findings] == [("basic/transports#21", "server")]
    assert findings[0].message == "a POSTed request was answered with content type 'text/plain'"


@pytest.mark.req("basic/transports#39")
async def test_the_tap_catches_a_get_answered_with_plain_text() -> None:
    status, kind, tap = await _through_the_tap("get-200-text", "GET")
    assert (status, kind) == (200, "text/plain")
    findings = tap.end().findings
    assert [(f.requirement, f.party) for f in findings] == [("basic/transports#39", "server")]
    assert findings[0].message == "a GET was answered HTTP 200 text/plain"
    # the correct server's 405 is what the rule allows
    status, _, tap = await _through_the_tap("none", "GET")
    assert status == 405 and tap.end().findings == []


@pytest.mark.req("basic/transports#23")
async def test_judge_sees_in_the_http_taps_log_what_the_tap_saw(tmp_path: Path) -> None:
    """The log keeps each exchange's HTTP steps (status, headers, SSE events: the session id shows
    where a session starts) besides its messages, and ``judge`` replays them through the same
    rules: the missing priming event is found by both (trial30 #7)."""
    path = tmp_path / "traffic.jsonl"
    with path.open("w") as log:
        tap = Tap("sse-no-priming", "http", log=log)
        with serving("sse-no-priming") as upstream:
            async with trio.open_nursery() as nursery:
                url = await nursery.start(serve_http_tap, "127.0.0.1", 0, upstream, tap)
                _, headers, _ = await raw(url, "POST", ACCEPT, INIT)
                session = {**ACCEPT, "mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
                await raw(url, "POST", session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
                await raw(url, "POST", session, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
                await trio.testing.wait_all_tasks_blocked()
                nursery.cancel_scope.cancel()
    live = [(f.requirement, f.message) for f in tap.end().findings]
    assert [r for r, _ in live] == ["basic/transports#23"]
    assert [(f.requirement, f.message) for f in judge_file(str(path)).findings] == live
    steps = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    heads = [s for s in steps if s.get("http") == "head"]
    assert heads[0]["headers"]["mcp-session-id"] == headers["mcp-session-id"]  # where the session begins
    sent = [s for s in steps if s.get("dir") == "c2s"]
    assert [s["message"]["method"] for s in sent] == ["initialize", "notifications/initialized", "ping"]
    assert "mcp-session-id" not in sent[0]["headers"]
    assert {s["headers"]["mcp-session-id"] for s in sent[1:]} == {headers["mcp-session-id"]}


@pytest.mark.req("basic/transports#21")
async def test_check_and_tap_agree_on_a_request_answered_202() -> None:
    # the battery: judged, not crashed
    report = await _check("request-202")
    assert "basic/transports#21" in report.requirements_found(), report.to_text()
    # the tap, on the same kind of exchange, says the same
    init = {**INIT, "params": {**INIT["params"]}}
    tap = Tap("request-202", "http")
    with serving("request-202") as upstream:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http_tap, "127.0.0.1", 0, upstream, tap)
            status, headers, _ = await raw(url, "POST", ACCEPT, init)
            sid = headers.get("mcp-session-id", "")
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            status, _, body = await raw(url, "POST", {**ACCEPT, "mcp-session-id": sid}, ping)
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    assert status == 202 and not body
    findings = tap.end().findings
    assert [(f.requirement, f.message) for f in findings] == [
        ("basic/transports#21", "a POSTed request was answered HTTP 202 Accepted, with no answer")
    ]


@pytest.mark.parametrize("name", [n for n in CORRECT if n != "none"])
async def test_unusual_but_valid_http_servers_come_out_clean(name: str) -> None:
    """Every answer an SSE stream (a priming event first, ended after the answer), and the JSON of an event
    split over several data: lines with CR LF line ends: valid, so no finding."""
    with serving(name) as url:
        report = await check_server(HttpTarget(url))
    assert report.findings == [], report.to_text()
    statuses = {c.name: c.status for c in report.checks}
    assert "fail" not in statuses.values() and statuses["transport/sse-streams-and-session-ids"] == "pass"


@pytest.mark.req("basic/transports#39")
@pytest.mark.parametrize("name, requirement", by_rule(HANGS))
async def test_a_server_that_leaves_requests_unanswered_still_gets_its_report(name: str, requirement: str) -> None:
    """Every wait on the peer is bounded: a GET whose answer never comes, POSTs whose answers never
    come, are findings (the statement the silence breaks), and the report is written. Before,
    the GET was waited for forever (trial30 #1)."""
    with trio.fail_after(60):  # (the principle's bound on a whole run; a hang is what this test is about)
        with serving(name) as url:
            report = await check_server(HttpTarget(url), CheckConfig(timeout=2.0))
    # the finding is the silence itself
    assert [f for f in report.findings if f.requirement == requirement and " no " in f.message], report.to_text()
    assert all(f.party == "server" for f in report.findings), report.to_text()
    assert not [n for n in report.notes if n.startswith("mcp-ref could not")], report.to_text()


async def test_an_unanswered_get_does_not_cost_the_older_revisions() -> None:
    """Only the GET hangs; every POST is answered: the older revisions are still checked (trial30b L6)."""
    with trio.fail_after(60):
        with serving("get-never-answered") as url:
            report = await check_server(HttpTarget(url), CheckConfig(timeout=2.0))
    assert len(report.revisions) > 2, report.to_text()
    assert not [n for n in report.notes if "not checked" in n], report.notes
    checked = {c.revision for c in report.checks}
    assert set(report.revisions[1:]) <= checked, (report.revisions, checked)
