"""A Streamable HTTP server that sends the same JSON-RPC response twice: ``check``, ``tap`` and
``judge`` each report it under the rule it breaks (one response per request, with its id), in
every revision, and agree on the same traffic.

The peers are the corpus's raw-JSON servers (``corpus/http_server.py`` for the 2025 revisions,
``corpus/modern_server.py`` for 2026-07-28), served on threads of this process: the response
again in the same SSE stream, and the response in a POST's answer and again on the session's
GET stream.
"""

from pathlib import Path

import pytest
import trio
import trio.testing

from mcp_ref import open_http_client
from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import CheckConfig
from mcp_ref.crosscheck.http_tap import serve_http_tap
from mcp_ref.crosscheck.judge import judge_file
from mcp_ref.crosscheck.report import Finding
from mcp_ref.crosscheck.tap import Tap
from mcp_ref.crosscheck.targets import HttpTarget

from .corpus import http_server, modern_server


def _said(findings: list[Finding]) -> list[tuple[str, str, str | None]]:
    return [(f.requirement, f.message, f.party) for f in findings]


@pytest.mark.req("basic/index#7")
@pytest.mark.parametrize("name", list(http_server.DUPLICATES))
async def test_check_reports_a_response_sent_twice_in_every_revision(name: str) -> None:
    with trio.fail_after(60):
        with http_server.serving(name) as url:
            report = await check_server(HttpTarget(url), CheckConfig(timeout=5.0))
    # the second answer is the finding, and nothing else: it is not taken for the answer to
    # whatever was asked next (a notification "answered", an id not echoed ...)
    duplicates = [f for f in report.findings if f.requirement == "basic/index#7"]
    assert duplicates and all(f.party == "server" and "again" in f.message for f in duplicates), report.to_text()
    # (answer-again-on-get) the transport check's own GET stream, watched, carries an answer too: a response
    # on a GET stream that resumes nothing is transports#42 (trial30c D7, spec_notes/crosscheck.md)
    on_get = {"basic/transports#42"} if name == "answer-again-on-get" else set()
    assert {f.requirement for f in report.findings} == {"basic/index#7", *on_get}, report.to_text()
    assert report.exit_status_for(strict=False) == 1
    # each revision's section has its own
    assert len(report.revisions) == 3
    assert {f.revision for f in duplicates} == {None, *report.revisions[1:]}, report.to_text()
    failed = [c for c in report.checks if c.status == "fail"]
    assert all({"basic/index#7", *on_get} & set(c.requirements) for c in failed), report.to_text()


async def _through_the_tap(upstream: str, tap: Tap, era: str, calls: int = 2) -> None:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_http_tap, "127.0.0.1", 0, upstream, tap)
        with trio.fail_after(30):
            async with open_http_client(url, era=era) as client:
                for _ in range(calls):
                    if era == "legacy":
                        await client.ping()
                    else:
                        await client.list_tools()
                # (on the GET stream the second answer comes after the first: wait until the tap saw it)
                while not any(tap.sessions.findings()):
                    await trio.sleep(0.02)
            await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/index#7")
@pytest.mark.parametrize("name", list(http_server.DUPLICATES))
async def test_tap_and_judge_agree_on_a_response_sent_twice(name: str, tmp_path: Path) -> None:
    log_path = tmp_path / "traffic.jsonl"
    with log_path.open("w") as log, http_server.serving(name) as upstream:
        tap = Tap(name, "http", log=log)
        await _through_the_tap(upstream, tap, "legacy")
    live = tap.end()
    assert live.findings, live.to_text()
    assert {f.requirement for f in live.findings} == {"basic/index#7"}, live.to_text()
    assert all(f.party == "server" and "again" in f.message for f in live.findings), live.to_text()
    replayed = judge_file(str(log_path))
    assert _said(replayed.findings) == _said(live.findings)


@pytest.mark.req("2026-07-28:basic/index#7")
async def test_2026_check_tap_and_judge_agree_on_a_response_sent_twice_in_one_stream(tmp_path: Path) -> None:
    with modern_server.serving("answer-twice") as url:
        report = await check_server(HttpTarget(url), CheckConfig(timeout=10.0), revision="2026-07-28")
    checked = {f.requirement for f in report.findings}
    assert checked == {"2026-07-28:basic/index#7"}, report.to_text()
    assert all("a second time" in f.message for f in report.findings)
    log_path = tmp_path / "traffic.jsonl"
    with log_path.open("w") as log, modern_server.serving("answer-twice") as upstream:
        tap = Tap("answer-twice", "http", log=log)
        await _through_the_tap(upstream, tap, "modern", calls=1)
    live = tap.end()
    assert {f.requirement for f in live.findings} == checked, live.to_text()
    assert _said(judge_file(str(log_path)).findings) == _said(live.findings)


@pytest.mark.req("basic/transports#23")
async def test_the_tap_asks_no_priming_event_of_a_2026_stream() -> None:
    """2026-07-28 has no event ids and no resumption, so its SSE streams begin with no priming
    event: the tap in front of the corpus control whose answers are all SSE finds nothing (before,
    it held 2025-11-25's basic/transports#23 against it, which check does not)."""
    with modern_server.serving("all-sse") as upstream:
        tap = Tap("all-sse", "http")
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http_tap, "127.0.0.1", 0, upstream, tap)
            with trio.fail_after(30):
                async with open_http_client(url) as client:
                    assert [t.name for t in await client.list_all_tools()]
            nursery.cancel_scope.cancel()
    report = tap.end()
    assert report.revision == "2026-07-28"
    assert report.findings == [], report.to_text()
