"""The fixture's 2026-07-28 side: a modern client (one that opens with ``server/discover``) is
served by the fixture's own stateless server and judged request by request, over stdio and
over Streamable HTTP. ``corpus/modern_client.py`` breaks one rule per variant; the controls
(one that declines every input request among them) come out clean."""

import sys
from functools import partial
from pathlib import Path

import pytest
import trio

from mcp_ref.crosscheck.fixture import FixtureOptions, check_client
from mcp_ref.crosscheck.report import Report

from .corpus.http_client import BREAKS as HTTP_CLIENT_BREAKS
from .corpus.modern_client import BREAKS, CORRECT, HTTP_BREAKS, OPENING_BREAKS, STDIO_ONLY
from .variants import by_rule, each_variant

CLIENT = Path(__file__).parent / "corpus" / "modern_client.py"
OPTIONS = FixtureOptions(timeout=5.0, cancel_wait=0.5)
STDIO = [*BREAKS, *CORRECT]
HTTP = [n for n in [*BREAKS, *HTTP_BREAKS, *CORRECT] if n not in STDIO_ONLY]


async def _stdio(name: str) -> Report:
    command = [sys.executable, str(CLIENT), "--break", name, "--", "{fixture}"]
    return await check_client(command, OPTIONS, client_timeout=60)


async def _http(name: str) -> Report:
    command = [sys.executable, str(CLIENT), "--break", name, "--url", "{url}"]
    return await check_client(command, OPTIONS, client_timeout=60)


@pytest.fixture(scope="module")
def stdio_reports() -> dict[str, Report]:
    return trio.run(partial(each_variant, STDIO, _stdio, at_once=8))


@pytest.fixture(scope="module")
def http_reports() -> dict[str, Report]:
    return trio.run(partial(each_variant, HTTP, _http, at_once=8))


def _only(report: Report, requirement: str) -> None:
    assert {f.requirement for f in report.findings} == {requirement}, report.to_text()
    assert all(f.party == "client" for f in report.findings)
    assert report.revision == "2026-07-28"
    assert [c for c in report.checks if requirement in c.requirements and c.status == "fail"], report.to_text()


@pytest.mark.parametrize("name, requirement", by_rule(BREAKS))
def test_each_broken_modern_client_is_caught_over_stdio(
    name: str, requirement: str, stdio_reports: dict[str, Report]
) -> None:
    _only(stdio_reports[name], requirement)


@pytest.mark.parametrize("name, requirement", by_rule({**BREAKS, **HTTP_BREAKS}, leave_out=STDIO_ONLY))
def test_each_broken_modern_client_is_caught_over_http(
    name: str, requirement: str, http_reports: dict[str, Report]
) -> None:
    _only(http_reports[name], requirement)


@pytest.mark.parametrize("name", list(CORRECT))
def test_modern_client_controls_come_out_clean(
    name: str, stdio_reports: dict[str, Report], http_reports: dict[str, Report]
) -> None:
    for report in (stdio_reports[name], http_reports[name]):
        assert not report.findings, report.to_text()
        assert report.revision == "2026-07-28"
        assert {c.name for c in report.checks if c.status == "pass"} >= {
            "modern-client/request-meta",
            "modern-client/mrtr-retries",
        }, report.to_text()
        assert "modern-client-corpus" not in report.target and "modern-corpus-client" in report.target


HTTP_CLIENT = Path(__file__).parent / "corpus" / "http_client.py"


async def _http_legacy(name: str) -> Report:
    command = [sys.executable, str(HTTP_CLIENT), "--break", name, "--url", "{url}"]
    return await check_client(command, OPTIONS, client_timeout=60)


@pytest.mark.parametrize("name, requirement", by_rule(HTTP_CLIENT_BREAKS))
async def test_a_2025_client_s_http_requests_are_judged_as_they_pass(name: str, requirement: str) -> None:
    """What the fixture's server refuses before reading any JSON-RPC (no session id, an Accept without
    SSE) is judged against the client by the relay in front of it."""
    report = await _http_legacy(name)
    assert requirement in {f.requirement for f in report.findings}, report.to_text()
    assert all(f.party == "client" for f in report.findings if f.requirement == requirement)
    assert [c for c in report.checks if c.name == "transport/client-http-requests" and c.status == "fail"]


async def test_a_correct_2025_client_over_http_passes_the_relay() -> None:
    report = await _http_legacy("none")
    assert [c.status for c in report.checks if c.name == "transport/client-http-requests"] == ["pass"]
    assert not [f for f in report.findings if f.requirement.startswith("basic/transports#")], report.to_text()


@pytest.mark.parametrize("name, requirement", by_rule(OPENING_BREAKS))
async def test_a_2026_fault_is_named_by_2026s_statement_whatever_the_opening(name: str, requirement: str) -> None:
    """(trial30c D7) a client whose first message does not look like 2026-07-28's is served as a 2025 one;
    what it broke is still named by the 2026-07-28 statement, not the legacy engine's id."""
    report = await _stdio(name)
    assert {f.requirement for f in report.findings} == {requirement}, report.to_text()
    assert all(f.party == "client" and f.level == "MUST" for f in report.findings), report.to_text()
