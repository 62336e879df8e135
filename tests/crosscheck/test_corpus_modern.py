"""The corpus of broken 2026-07-28 servers: each breaks ONE rule, and ``mcp-ref check --revision
2026-07-28`` reports it by its id, over stdio and over Streamable HTTP.

``corpus/modern_server.py`` is a stateless 2026-07-28 server in raw JSON that shares no
code with mcp_ref (stdio: a real process; HTTP: the standard library's ``http.server`` on
threads of this process). The controls, unusual ones included (CRLF line ends; every
HTTP answer an SSE stream with its JSON split over several ``data:`` lines), come out
without any finding.
"""

import sys
from functools import partial
from pathlib import Path

import pytest
import trio

from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import CheckConfig, ToolSpec
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.targets import HttpTarget, StdioTarget

from .corpus.modern_server import BREAKS, CORRECT, HTTP_BREAKS, STDIO_ONLY, serving
from .variants import by_rule, each_variant

CORPUS = Path(__file__).parent / "corpus"
STDIO = {**{n: r for n, r in BREAKS.items()}, **{n: "" for n in CORRECT if n != "all-sse"}}
HTTP = {**{n: r for n, r in {**BREAKS, **HTTP_BREAKS}.items() if n not in STDIO_ONLY}}
HTTP_CONTROLS = [n for n in CORRECT if n not in STDIO_ONLY]
#: a generous timeout: the variants run in parallel on a machine that may be loaded (no sleeps, only bounds);
#: the slow tool named, so every variant (the controls too) is cancelled once (watched briefly: the
#: variants that go on after a cancellation are test_modern_faults.py's)
CONFIG = CheckConfig(tools={"slow": ToolSpec("slow")}, timeout=20.0, cancel_wait=0.5)


async def _stdio(name: str) -> Report:
    target = StdioTarget(sys.executable, (str(CORPUS / "modern_server.py"), "--break", name))
    return await check_server(target, CONFIG, revision="2026-07-28")


async def _http(name: str) -> Report:
    with serving(name) as url:
        return await check_server(HttpTarget(url), CONFIG, revision="2026-07-28")


@pytest.fixture(scope="module")
def stdio_reports() -> dict[str, Report]:
    return trio.run(partial(each_variant, list(STDIO), _stdio, at_once=6))


@pytest.fixture(scope="module")
def http_reports() -> dict[str, Report]:
    return trio.run(partial(each_variant, [*HTTP, *HTTP_CONTROLS], _http, at_once=6))


def _only(report: Report, requirement: str) -> None:
    found = {f.requirement for f in report.findings}
    assert found == {requirement}, report.to_text()
    assert all(f.party == "server" and f.revision == "2026-07-28" for f in report.findings)
    covering = [c for c in report.checks if requirement in c.requirements and c.status == "fail"]
    assert covering, report.to_text()


@pytest.mark.parametrize("name, requirement", by_rule(BREAKS))
def test_each_broken_modern_stdio_server_is_caught_by_its_rule(
    name: str, requirement: str, stdio_reports: dict[str, Report]
) -> None:
    _only(stdio_reports[name], requirement)


@pytest.mark.parametrize("name, requirement", by_rule(HTTP))
def test_each_broken_modern_http_server_is_caught_by_its_rule(
    name: str, requirement: str, http_reports: dict[str, Report]
) -> None:
    _only(http_reports[name], requirement)


@pytest.mark.parametrize("name", [n for n in CORRECT if n != "all-sse"])
def test_modern_stdio_controls_come_out_clean(name: str, stdio_reports: dict[str, Report]) -> None:
    report = stdio_reports[name]
    assert not report.findings, report.to_text()
    assert report.revision == "2026-07-28" and report.revisions == ["2026-07-28"]
    assert not [c for c in report.checks if c.status != "pass"], report.to_text()


@pytest.mark.parametrize("name", HTTP_CONTROLS)
def test_modern_http_controls_come_out_clean(name: str, http_reports: dict[str, Report]) -> None:
    report = http_reports[name]
    assert not report.findings, report.to_text()
    assert report.revision == "2026-07-28"
    names = {c.name for c in report.checks if c.status == "pass"}
    # the header checks ran (and passed) against the control
    assert {"modern/http/version-header", "modern/http/name-header", "modern/http/param-header"} <= names


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#14", "2026-07-28:basic/patterns/mrtr#12")
@pytest.mark.parametrize(
    "name, found, status",
    [
        ("none", set(), "pass"),
        ("state-unbound", {"2026-07-28:basic/patterns/mrtr#14"}, "fail"),
        # a state not checked at all is that, not also a replay
        ("state-not-verified", {"2026-07-28:basic/patterns/mrtr#12"}, "skip"),
    ],
)
async def test_a_request_state_replayed_on_another_request(name: str, found: set[str], status: str) -> None:
    report = await _stdio(name)
    assert {f.requirement for f in report.findings} == found, report.to_text()
    replay = next(c for c in report.checks if c.name == "modern/mrtr/replayed-state")
    assert replay.status == status, report.to_text()


@pytest.mark.req(
    "2026-07-28:server/tools#6",
    "2026-07-28:server/resources#4",
    "2026-07-28:basic/transports/stdio#1",
    "2026-07-28:basic/transports/stdio#4",
)
@pytest.mark.parametrize("name", ["list-varies", "resources-vary", "pretty-printed", "junk-on-stdout"])
async def test_lists_that_vary_and_stdout_that_is_not_one_message_a_line(name: str) -> None:
    _only(await _stdio(name), BREAKS[name])


@pytest.mark.req("2026-07-28:basic/index#3", "2026-07-28:basic/index#19")
@pytest.mark.parametrize("name", ["unknown-tool-32000", "unknown-tool-32601", "unknown-tool-32603"])
async def test_an_unknown_tool_answered_with_another_code_than_invalid_params(name: str) -> None:
    """Over HTTP, where -32601 would also call for a 404: the finding is the code (trial30 #4)."""
    _only(await _http(name), BREAKS[name])


@pytest.mark.req("2026-07-28:basic/index#1", "2026-07-28:basic/index#26")
@pytest.mark.parametrize("name", ["call-no-content", "notification-with-id"])
async def test_a_result_without_content_and_a_notification_with_an_id(name: str) -> None:
    """The rule each breaks, and only it: no other check fails because of the stray message (trial30 #2, #3)."""
    _only(await _stdio(name), BREAKS[name])


def test_the_modern_corpus_spans_thirty_rules() -> None:
    rules = set(BREAKS.values()) | set(HTTP_BREAKS.values())
    assert len(rules) >= 45
    assert all(r.startswith("2026-07-28:") for r in rules)


async def test_a_legacy_server_is_not_judged_as_a_modern_one() -> None:
    """A 2025-11-25 server refusing server/discover gets no 2026-07-28 section (and no finding for it)."""
    target = StdioTarget(sys.executable, (str(CORPUS / "server.py"),))
    report = await check_server(target, revision="2026-07-28")
    assert not report.findings and not report.checks, report.to_text()
    assert any("does not speak 2026-07-28" in n for n in report.notes)


def test_check_revision_2026_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_ref.cli import main

    command = [sys.executable, str(CORPUS / "modern_server.py"), "--break", "no-ttl"]
    assert main(["check", "--json", "-q", "--timeout", "20", "--revision", "2026-07-28", "--", *command]) == 1
    out = capsys.readouterr().out
    assert '"2026-07-28:server/utilities/caching#1"' in out
