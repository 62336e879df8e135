"""``mcp-ref judge`` and ``mcp-ref tap`` on 2026-07-28 traffic: each exchange judged by the rules
of its own revision.

``traffic/`` holds real traffic recorded with ``mcp-ref tap`` (stdio, and ``--listen`` in front
of Streamable HTTP) between three clients -- mcp_ref's, the official Python SDK 2.3.0's and the
TypeScript SDK v2's (2.4.0) -- and three servers written with the same three
(``tests/interop/modern_peer_server.py`` / ``our_modern_server.py``, ``sdk_modern_server.py``,
``ts_modern_server.mjs``), each client in both of its modes: ``auto`` (``server/discover``, then
requests that stand alone with their ``_meta``) and ``legacy`` (``initialize`` and a 2025-11-25
session). Files are named CLIENT-SERVER-MODE; a ``.2`` file is a second process the same client
spawned (the TypeScript client probes ``server/discover`` in a process of its own). Valid traffic
of either era must give no finding at all; the same traffic with one rule broken must give that
rule's finding, and only it.
"""

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.crosscheck.judge import judge_file, judge_records
from mcp_ref.crosscheck.observer import Direction
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.traffic import Record

TRAFFIC = Path(__file__).with_name("traffic")
RECORDED = sorted(TRAFFIC.glob("*/*.jsonl"))
ROOT = Path(__file__).resolve().parents[2]
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"


def ids(report: Report) -> list[str]:
    return sorted({f.requirement for f in report.findings})


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_valid_traffic_of_real_peers_breaks_nothing_in_either_era(path: Path) -> None:
    report = judge_file(str(path))
    assert report.findings == [], report.to_text()
    era = "2025-11-25" if "-legacy" in path.name else "2026-07-28"
    assert report.revision == era


def test_the_recordings_cover_every_pair_in_both_eras_on_both_transports() -> None:
    names = {(p.parent.name, p.stem.split(".")[0]) for p in RECORDED}
    for transport in ("stdio", "http"):
        for client in ("our", "sdk", "ts"):
            for server in ("our", "sdk", "ts"):
                assert (transport, f"{client}-{server}-auto") in names
            assert (transport, f"{client}-our-legacy") in names
            assert (transport, f"{client}-ts-legacy") in names


# -- one rule broken at a time ------------------------------------------------------------------------


def recorded(name: str, transport: str = "stdio") -> list[tuple[str, Any]]:
    lines = (TRAFFIC / transport / f"{name}.jsonl").read_text().splitlines()[1:]
    return [(r["dir"], r["message"]) for r in map(json.loads, lines)]


def judged(messages: list[tuple[str, Any]], transport: str = "stdio") -> Report:
    records = [Record(Direction(d), json.dumps(m).encode()) for d, m in messages]
    return judge_records(records, transport="stdio" if transport == "stdio" else "http")


def edited(name: str, edit: Callable[[str, Any], Any], transport: str = "stdio") -> Report:
    """The recording ``name`` with ``edit(direction, message)`` applied to each message (None drops it)."""
    out = []
    for d, m in recorded(name, transport):
        m = edit(d, m)
        if m is not None:
            out.append((d, m))
    return judged(out, transport)


def request_of(messages: list[tuple[str, Any]], method: str, **params: Any) -> dict[str, Any]:
    return next(
        m
        for d, m in messages
        if d == "c2s" and m.get("method") == method and all(m["params"].get(k) == v for k, v in params.items())
    )


@pytest.mark.req("2026-07-28:basic/index#10")
def test_a_result_without_result_type_from_a_2026_server() -> None:
    def edit(d: str, m: Any) -> Any:
        if d == "s2c" and "tools" in m.get("result", {}):
            del m["result"]["resultType"]
        return m

    assert ids(edited("our-our-auto", edit)) == ["2026-07-28:basic/index#10"]


@pytest.mark.req("2026-07-28:basic/index#1")
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_tool_result_without_content_from_a_2026_server(transport: str) -> None:
    """A complete result is read with the 2026-07-28 model, as a handshake revision's is: a
    tools/call result without its required content is the statement it breaks (trial30 #2)."""

    def edit(d: str, m: Any) -> Any:
        if d == "s2c" and "content" in m.get("result", {}) and m["result"].get("resultType") == "complete":
            del m["result"]["content"]
        return m

    report = edited("our-our-auto", edit, transport)
    assert ids(report) == ["2026-07-28:basic/index#1"], report.to_text()
    assert "result.content: required field missing" in report.findings[0].message


def test_a_2025_server_serving_a_request_of_2026_gets_a_note_not_a_finding() -> None:
    # a server of an earlier revision that serves a modern-looking request: its results are not 2026-07-28's
    meta = {PV: "2026-07-28", CAPS: {}, "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}
    report = judged(
        [
            ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}),
            ("s2c", {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}),
        ]
    )
    assert report.findings == []
    assert any("as an earlier revision would" in n for n in report.notes)


@pytest.mark.req("2026-07-28:basic/index#10")
def test_a_result_with_2026_fields_but_no_result_type_is_judged_without_a_discover() -> None:
    """(trial30b N1) a client that sends no server/discover first: caching hints and serverInfo in
    _meta are 2026-07-28's alone, so the server spoke that revision and owed a resultType."""
    meta = {PV: "2026-07-28", CAPS: {}, "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}
    result = {
        "tools": [],
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
    }
    report = judged(
        [
            ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}),
            ("s2c", {"jsonrpc": "2.0", "id": 1, "result": result}),
        ]
    )
    assert ids(report) == ["2026-07-28:basic/index#10"], report.to_text()


@pytest.mark.req("2026-07-28:basic/index#52")
def test_a_request_without_the_client_capabilities() -> None:
    def edit(d: str, m: Any) -> Any:
        if d == "c2s" and m.get("method") == "tools/list":
            del m["params"]["_meta"][CAPS]
        return m

    assert ids(edited("sdk-our-auto", edit)) == ["2026-07-28:basic/index#52"]


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#23")
def test_a_retry_that_does_not_echo_the_request_state() -> None:
    def edit(d: str, m: Any) -> Any:
        if d == "c2s" and "requestState" in m.get("params", {}):
            m["params"]["requestState"] = m["params"]["requestState"][::-1]
        return m

    assert ids(edited("ts-our-auto.2", edit)) == ["2026-07-28:basic/patterns/mrtr#23"]


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#25")
def test_a_retry_with_a_request_state_none_was_given() -> None:
    # the TypeScript server's ask_name gives no requestState
    def edit(d: str, m: Any) -> Any:
        if d == "c2s" and "inputResponses" in m.get("params", {}):
            m["params"]["requestState"] = "made-up"
        return m

    assert ids(edited("sdk-ts-auto", edit)) == ["2026-07-28:basic/patterns/mrtr#25"]


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#21")
def test_a_retry_that_answers_none_of_the_input_requests() -> None:
    def edit(d: str, m: Any) -> Any:
        if d == "c2s" and "inputResponses" in m.get("params", {}):
            m["params"]["inputResponses"] = {}
        return m

    assert ids(edited("our-sdk-auto", edit)) == ["2026-07-28:basic/patterns/mrtr#21"]


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#26")
def test_a_retry_that_reuses_the_first_requests_id() -> None:
    messages = recorded("our-our-auto")
    first = request_of(messages, "tools/call", name="ask_name")
    retry = next(m for d, m in messages if d == "c2s" and "inputResponses" in m.get("params", {}))
    old, new = retry["id"], first["id"]
    for _d, m in messages:
        if m.get("id") == old:
            m["id"] = new  # the retry and its answer
    assert ids(judged(messages)) == ["2026-07-28:basic/patterns/mrtr#26"]


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#2")
def test_a_subscription_whose_acknowledgement_does_not_come_first() -> None:
    def edit(d: str, m: Any) -> Any:
        return None if m.get("method") == "notifications/subscriptions/acknowledged" else m

    assert ids(edited("ts-ts-auto.2", edit)) == ["2026-07-28:basic/patterns/subscriptions#2"]


@pytest.mark.req("2026-07-28:basic/transports/stdio#7")
def test_a_client_that_writes_a_response_on_stdio() -> None:
    messages = recorded("our-our-auto")
    messages.insert(3, ("c2s", {"jsonrpc": "2.0", "id": "x", "result": {}}))
    assert ids(judged(messages)) == ["2026-07-28:basic/transports/stdio#7"]


@pytest.mark.req("2026-07-28:basic/transports/stdio#9")
def test_a_server_that_writes_a_request_on_stdio() -> None:
    messages = recorded("sdk-sdk-auto")
    ask = {"jsonrpc": "2.0", "id": "s1", "method": "elicitation/create", "params": {"message": "?"}}
    messages.insert(4, ("s2c", ask))
    assert ids(judged(messages)) == ["2026-07-28:basic/transports/stdio#9"]


@pytest.mark.req("2026-07-28:basic/index#26")
def test_a_notification_with_an_id_is_the_servers_fault_and_the_clients_answer_is_not() -> None:
    """A 2026 notification that carries an id breaks basic/index#26 (not stdio#9, "a request"); the
    client that answers it (-32601) does so because of the server's fault: no finding against it."""
    messages = recorded("sdk-sdk-auto")
    stray = {"jsonrpc": "2.0", "id": 4242, "method": "notifications/tools/list_changed"}
    answer = {"jsonrpc": "2.0", "id": 4242, "error": {"code": -32601, "message": "Method not found"}}
    messages[4:4] = [("s2c", stray), ("c2s", answer)]
    report = judged(messages)
    assert ids(report) == ["2026-07-28:basic/index#26"], report.to_text()
    assert report.findings[0].party == "server"
    # a client answering something the server did not send is still its own fault
    messages = recorded("sdk-sdk-auto")
    messages.insert(4, ("c2s", answer))
    assert ids(judged(messages)) == ["2026-07-28:basic/transports/stdio#7"]


@pytest.mark.req("2026-07-28:basic/index#3")
def test_method_not_found_for_a_tool_of_a_server_that_declared_tools() -> None:
    """-32601 says the method does not exist; tools/call does, on a server that declared tools: the
    code is the fault (an unknown tool is -32602), in tap and judge as in check."""

    def edit(d: str, m: Any) -> Any:
        if d == "s2c" and "content" in m.get("result", {}):
            return {"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "no such tool"}}
        return m

    report = edited("our-our-auto", edit)
    assert ids(report) == ["2026-07-28:basic/index#3"], report.to_text()
    assert "tools/call got Method not found (-32601)" in report.findings[0].message


def test_one_tap_carrying_sessions_of_both_eras_names_each_revision() -> None:
    """(trial30 #7) an HTTP tap that served a 2026-07-28 client and a 2025-11-25 session reports
    both revisions, not only the session's."""
    messages = recorded("our-our-auto", "http") + recorded("our-our-legacy", "http")
    report = judged(messages, "http")
    assert report.findings == [] and report.revisions == ["2026-07-28", "2025-11-25"]
    assert "revisions the target speaks: 2026-07-28, 2025-11-25" in report.to_text()


@pytest.mark.req("2026-07-28:server/utilities/logging#3")
def test_a_log_message_for_a_request_that_asked_for_none() -> None:
    messages = recorded("our-our-auto")
    call = request_of(messages, "tools/call", name="echo")
    at = next(i for i, (d, m) in enumerate(messages) if m is call) + 1
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}
    messages.insert(at, ("s2c", log))
    # (the server declared logging: only the missing logLevel is at fault)
    assert ids(judged(messages)) == ["2026-07-28:server/utilities/logging#3"]


def test_a_session_of_2025_on_the_same_connection_is_still_judged_by_its_own_rules() -> None:
    # after initialize, a request before notifications/initialized is the 2025 engines' business
    messages = recorded("our-our-legacy")
    at = next(i for i, (d, m) in enumerate(messages) if m.get("method") == "notifications/initialized")
    messages.insert(at, ("c2s", {"jsonrpc": "2.0", "id": 99, "method": "tools/list"}))
    assert ids(judged(messages)) == ["basic/lifecycle#4"]


# -- live: the tap between our client and our server, in both eras ---------------------------------------


@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_the_tap_between_our_client_and_our_server_finds_nothing_in_either_era(
    tmp_path: Path, version: str | None
) -> None:
    from mcp_ref.schema import ElicitResult
    from mcp_ref.session.client import open_stdio_client

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "ada"})

    report = tmp_path / "report.json"
    server = str(ROOT / "tests" / "interop" / "our_modern_server.py")
    options: dict[str, Any] = {"elicitation": answer, "env": {"PYTHONPATH": str(ROOT)}}
    if version is not None:
        options["protocol_version"] = version
    tap = ["-m", "mcp_ref", "tap", "-q", "--json", str(report), "--", sys.executable, server]
    with trio.fail_after(60):
        async with open_stdio_client(sys.executable, tap, cwd=str(ROOT), **options) as client:
            assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"  # type: ignore[union-attr]
            assert (await client.call_tool("ask_name", {})).content[0].text == "hello ada"  # type: ignore[union-attr]
            if version is None:
                async with client.listen(tools=True) as sub:
                    await client.call_tool("add_tool", {})
                    async for method, _ in sub:
                        assert method == "notifications/tools/list_changed"
                        break
        while not report.exists():
            await trio.sleep(0.05)
    data = json.loads(report.read_text())
    assert data["findings"] == []
    assert data["revision"] == (version or "2026-07-28")


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#26")
def test_the_http_tap_judges_a_2026_requests_headers_against_its_body() -> None:
    from mcp_ref.crosscheck.tap import Tap

    tap = Tap("http://127.0.0.1:1/mcp", "http")
    messages = recorded("our-our-auto", "http")
    for d, m in messages:
        headers = None
        if d == "c2s" and "id" in m and m.get("method") == "tools/call":
            # a client whose version header says another revision than its _meta
            headers = {
                "MCP-Protocol-Version": "2025-11-25",
                "Mcp-Method": "tools/call",
                "Mcp-Name": m["params"]["name"],
            }
        elif d == "c2s" and "id" in m:
            headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": m["method"]}
        tap.message(Direction(d), json.dumps(m).encode(), headers)
    assert ids(tap.end()) == ["2026-07-28:basic/transports/streamable-http#26"]


@pytest.mark.req("2026-07-28:basic/index#7", "2026-07-28:basic/transports/stdio#4")
def test_2026_traffic_is_judged_by_2026_ids_for_duplicates_and_stray_lines() -> None:
    """(trial30b L4) a response sent twice, and a plain log line on stdout, in 2026-07-28 traffic:
    the 2026-07-28 statements, as ``check`` names them, not the handshake revisions' ones."""
    records: list[Record] = []
    for d, m in recorded("our-our-auto"):
        records.append(Record(Direction(d), json.dumps(m).encode()))
        if d == "s2c" and "tools" in m.get("result", {}):
            records.append(Record(Direction(d), json.dumps(m).encode()))
            records.append(Record(Direction(d), b"INFO handled tools/list"))
    report = judge_records(records, transport="stdio")
    assert sorted(set(ids(report))) == ["2026-07-28:basic/index#7", "2026-07-28:basic/transports/stdio#4"], (
        report.to_text()
    )
