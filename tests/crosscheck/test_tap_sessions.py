"""``mcp-ref tap --listen`` in front of a Streamable HTTP server used by several clients at once:
each session (its MCP-Session-Id) is judged on its own, and ``judge`` on the tap's log agrees.

Two sessions both initialize and both number their requests from 0: that breaks nothing (ids are
unique within a session, basic/index#6). A fault in a session is found in that session, and the
finding names it.
"""

import json
from pathlib import Path

import pytest
import trio
import trio.testing

from mcp_ref import open_http_client
from mcp_ref.crosscheck.http_tap import serve_http_tap
from mcp_ref.crosscheck.judge import judge_file
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.tap import Tap, finding_line

from .corpus import http_server


async def _two_sessions(name: str, log_path: Path) -> tuple[Report, list[str]]:
    """Two clients through the tap, their requests interleaved; the tap's report and the session ids."""
    with log_path.open("w") as log, http_server.serving(name) as upstream:
        tap = Tap(name, "http", log=log)
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http_tap, "127.0.0.1", 0, upstream, tap)
            with trio.fail_after(30):
                async with open_http_client(url, era="legacy") as a, open_http_client(url, era="legacy") as b:
                    for _ in range(2):
                        await a.ping()
                        await b.ping()
                await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    steps = [json.loads(line) for line in log_path.read_text().splitlines()[1:]]
    sessions = [
        s["headers"]["mcp-session-id"] for s in steps if s.get("http") == "head" and "mcp-session-id" in s["headers"]
    ]
    return tap.end(), sessions


@pytest.mark.req("basic/index#6", "basic/transports#50")
@pytest.mark.parametrize("name", ["sse", "sse-ids-per-session"])
async def test_two_sessions_reusing_request_ids_are_no_finding(name: str, tmp_path: Path) -> None:
    """Nor are two sessions whose SSE event ids both count from 1 (initialize's stream included: it
    belongs to the session its answer names, though its request carried no session id)."""
    log_path = tmp_path / "traffic.jsonl"
    live, sessions = await _two_sessions(name, log_path)
    assert len(set(sessions)) == 2
    # (before: the second initialize was "initialize twice", and ids 0, 1, 2 "used again")
    assert live.findings == [], live.to_text()
    assert any(n.startswith("2 sessions") for n in live.notes), live.notes
    replayed = judge_file(str(log_path))
    assert replayed.findings == [], replayed.to_text()
    assert replayed.notes == live.notes


@pytest.mark.req("basic/index#7")
async def test_a_finding_in_each_session_names_that_session(tmp_path: Path) -> None:
    log_path = tmp_path / "traffic.jsonl"
    live, sessions = await _two_sessions("sse-answer-twice", log_path)
    assert {f.requirement for f in live.findings} == {"basic/index#7"}, live.to_text()
    named = {e for f in live.findings for e in f.evidence if isinstance(e, str) and e.startswith("MCP-Session-Id: ")}
    # each session answered its pings twice: each is named as the session that showed it
    assert named == {f"MCP-Session-Id: {s}" for s in sessions}, live.to_text()
    # the line the tap prints as it finds it says where, too
    assert all(finding_line(f).endswith("]") and "[MCP-Session-Id: " in finding_line(f) for f in live.findings)
    replayed = judge_file(str(log_path))
    said = [(f.requirement, f.message, f.evidence) for f in live.findings]
    assert [(f.requirement, f.message, f.evidence) for f in replayed.findings] == said
