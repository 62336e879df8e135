"""2026-07-28 faults the battery's probes (and, where the traffic shows them, ``tap`` and ``judge``)
catch by their own ids (trial30c D1, D2, D4, D5):

* over Streamable HTTP, a response on a request's stream whose id is another's (basic/index#7);
* an answer sent as a JSON array: a finding, and the revision still checked (streamable-http#16);
* cancellation: over stdio ``notifications/cancelled``, then nothing more for the request
  (basic/transports/stdio#11; no response: basic/patterns/cancellation#13); over HTTP the request's
  stream closed (streamable-http#23); skipped, saying why, when no slow tool is named.

The peers are ``corpus/modern_server.py``'s variants (stdio: a real process; HTTP: threads of this
process).
"""

import sys
from pathlib import Path

import pytest
import trio
import trio.testing

from mcp_ref import open_http_client
from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import CheckConfig, ToolSpec
from mcp_ref.crosscheck.http_tap import serve_http_tap
from mcp_ref.crosscheck.judge import judge_file
from mcp_ref.crosscheck.report import Finding, Report
from mcp_ref.crosscheck.tap import Tap
from mcp_ref.crosscheck.targets import HttpTarget, StdioTarget

from .corpus import modern_server

CORPUS = Path(__file__).parent / "corpus"
SLOW = CheckConfig(tools={"slow": ToolSpec("slow")}, timeout=20.0)
CANCEL = "modern/cancellation/stops-and-stays-silent"


def _said(findings: list[Finding]) -> list[tuple[str, str, str | None]]:
    return [(f.requirement, f.message, f.party) for f in findings]


async def _stdio(name: str, config: CheckConfig = SLOW) -> Report:
    target = StdioTarget(sys.executable, (str(CORPUS / "modern_server.py"), "--break", name))
    return await check_server(target, config, revision="2026-07-28")


async def _tapped(name: str, tmp_path: Path) -> tuple[Report, Report]:
    """A 2026-07-28 client through the HTTP tap in front of the variant: the tap's report, and the
    judge's on its log."""
    log_path = tmp_path / "traffic.jsonl"
    with log_path.open("w") as log, modern_server.serving(name) as upstream:
        tap = Tap(name, "http", log=log)
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http_tap, "127.0.0.1", 0, upstream, tap)
            with trio.fail_after(30):
                async with open_http_client(url, era="modern") as client:
                    await client.list_tools()
                await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    return tap.end(), judge_file(str(log_path))


@pytest.mark.req("2026-07-28:basic/index#7")
async def test_a_response_with_another_id_on_a_requests_stream(tmp_path: Path) -> None:
    with modern_server.serving("foreign-id") as url:
        report = await check_server(HttpTarget(url), CheckConfig(timeout=10.0), revision="2026-07-28")
    assert {f.requirement for f in report.findings} == {"2026-07-28:basic/index#7"}, report.to_text()
    # once for the foreign id, not once per stream that carried it
    assert len(report.findings) == 1, report.to_text()
    assert "never sent" in report.findings[0].message
    # (the first one came with server/discover, before any other check: the output check lists it)
    output = next(c for c in report.checks if c.name == "modern/http/output")
    assert output.status == "fail" and "2026-07-28:basic/index#7" in output.requirements, report.to_text()
    live, replayed = await _tapped("foreign-id", tmp_path)
    assert {f.requirement for f in live.findings} == {"2026-07-28:basic/index#7"}, live.to_text()
    assert _said(replayed.findings) == _said(live.findings)


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#16")
async def test_an_answer_sent_as_a_json_array_is_a_finding_and_the_revision_is_still_checked(tmp_path: Path) -> None:
    with modern_server.serving("answer-as-array") as url:
        report = await check_server(HttpTarget(url), CheckConfig(timeout=10.0))
    assert report.revisions == ["2026-07-28"], report.to_text()
    assert {f.requirement for f in report.findings} == {"2026-07-28:basic/transports/streamable-http#16"}
    assert len(report.findings) == 1 and "JSON array" in report.findings[0].message
    passed = {c.name for c in report.checks if c.status == "pass"}
    assert {"modern/discover", "modern/tools/call", "modern/http/version-header"} <= passed, report.to_text()
    live, replayed = await _tapped("answer-as-array", tmp_path)
    assert live.findings, live.to_text()
    assert all(f.requirement.startswith("2026-07-28:") for f in live.findings), live.to_text()
    assert "2026-07-28:basic/transports/streamable-http#16" in {f.requirement for f in live.findings}
    assert _said(replayed.findings) == _said(live.findings)


@pytest.mark.req("2026-07-28:basic/transports/stdio#11", "2026-07-28:basic/patterns/cancellation#13")
@pytest.mark.parametrize(
    "name, found, level",
    [
        ("progress-after-cancel", "2026-07-28:basic/transports/stdio#11", "MUST NOT"),
        ("answer-after-cancel", "2026-07-28:basic/patterns/cancellation#13", "SHOULD"),
    ],
)
async def test_a_stdio_server_that_goes_on_after_a_cancellation(name: str, found: str, level: str) -> None:
    report = await _stdio(name)
    assert [(f.requirement, f.level) for f in report.findings] == [(found, level)], report.to_text()
    assert "after it was cancelled" in report.findings[0].message
    check = next(c for c in report.checks if c.name == CANCEL)
    assert check.status == "fail" and found in check.requirements, report.to_text()


@pytest.mark.req("2026-07-28:basic/transports/stdio#11", "2026-07-28:basic/transports/streamable-http#23")
async def test_the_controls_are_cancelled_cleanly_over_both_transports() -> None:
    stdio = await _stdio("none")
    with modern_server.serving("none") as url:
        http = await check_server(HttpTarget(url), SLOW, revision="2026-07-28")
    for report in (stdio, http):
        assert not report.findings, report.to_text()
        check = next(c for c in report.checks if c.name == CANCEL)
        assert check.status == "pass", report.to_text()
    assert "2026-07-28:basic/transports/stdio#11" in next(c for c in stdio.checks if c.name == CANCEL).requirements
    assert (
        "2026-07-28:basic/transports/streamable-http#23"
        in next(c for c in http.checks if c.name == CANCEL).requirements
    )


@pytest.mark.req("2026-07-28:basic/transports/stdio#11")
async def test_without_a_slow_tool_the_cancellation_is_skipped_saying_why() -> None:
    report = await _stdio("progress-after-cancel", CheckConfig(timeout=20.0))
    assert not report.findings, report.to_text()
    check = next(c for c in report.checks if c.name == CANCEL)
    assert check.status == "skip" and "--slow-tool" in check.detail, report.to_text()
    named = await _stdio("none", CheckConfig(tools={"slow": ToolSpec("no-such-tool")}, timeout=20.0))
    check = next(c for c in named.checks if c.name == CANCEL)
    assert check.status == "skip" and "no-such-tool" in check.detail, named.to_text()


@pytest.mark.req("2026-07-28:basic/index#53")
async def test_a_tools_call_without_a_name_is_sent_and_must_be_refused() -> None:
    served = await _stdio("nameless-call-served", CheckConfig(timeout=20.0))
    assert {f.requirement for f in served.findings} == {"2026-07-28:basic/index#53"}, served.to_text()
    assert "without a name was served" in served.findings[0].message
    check = next(c for c in served.checks if c.name == "modern/tools/call-without-name")
    assert check.status == "fail", served.to_text()
    with modern_server.serving("none") as url:
        refused = await check_server(HttpTarget(url), CheckConfig(timeout=10.0), revision="2026-07-28")
    check = next(c for c in refused.checks if c.name == "modern/tools/call-without-name")
    assert check.status == "pass" and not refused.findings, refused.to_text()
