"""The principles of the cross-checker (spec_notes/crosscheck.md), against servers that misbehave wholesale.

``corpus/wild.py`` is a server that goes wrong in one sweeping way per mode: it
never answers, answers garbage, leaves at once, stops answering, answers errors
our client cannot read, crashes on a call, speaks only an old revision. On each:

* nothing crashes the checker: a report comes out (the battery returns);
* every failed check names at least one statement broken (a finding with an id
  and a level), and the exit status follows the findings;
* the whole battery, with the default timeout (10 s), ends within 60 s;
* the finding names the statement the server broke, not a consequence of it.

Real processes with the battery's real timeouts (no sleeps here): these take
the time the principle bounds, run all at once.
"""

import sys
from functools import partial
from pathlib import Path

import pytest
import trio

from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.rules import is_must
from mcp_ref.crosscheck.targets import StdioTarget

from .corpus.wild import MODES
from .variants import each_variant

WILD = Path(__file__).parent / "corpus" / "wild.py"
#: the bound the principle sets on a whole run against a peer that never answers or answers garbage
BOUND = 60.0


async def _check(mode: str) -> tuple[Report, float]:
    start = trio.current_time()
    report = await check_server(StdioTarget(sys.executable, (str(WILD), mode)))
    return report, trio.current_time() - start


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[Report, float]]:
    return trio.run(partial(each_variant, list(MODES), _check, at_once=len(MODES)))


def failed_checks_without_a_finding(report: Report) -> list[str]:
    """The failed checks none of whose requirements has a finding."""
    found = report.requirements_found()
    return [c.name for c in report.checks if c.status == "fail" and not found & set(c.requirements)]


@pytest.mark.parametrize("mode", list(MODES))
def test_a_report_comes_out_and_every_failed_check_names_a_statement(
    mode: str, runs: dict[str, tuple[Report, float]]
) -> None:
    report, _ = runs[mode]
    assert report.checks, report.to_text()
    assert not failed_checks_without_a_finding(report), report.to_text()
    assert all(f.requirement and f.level for f in report.findings)
    # the exit status follows the findings
    assert report.exit_status() == (1 if any(is_must(f.level) for f in report.findings) else 0)
    # no phase of the battery was cut short by the checker itself
    assert not [n for n in report.notes if n.startswith("mcp-ref could not")], report.to_text()


@pytest.mark.parametrize("mode", list(MODES))
def test_the_statement_broken_is_named(mode: str, runs: dict[str, tuple[Report, float]]) -> None:
    report, _ = runs[mode]
    requirement = MODES[mode][1]
    if requirement is None:
        assert report.must == 0, report.to_text()
    else:
        assert requirement in report.requirements_found(), report.to_text()


@pytest.mark.parametrize("mode", list(MODES))
def test_the_whole_battery_ends_within_the_bound(mode: str, runs: dict[str, tuple[Report, float]]) -> None:
    report, took = runs[mode]
    assert took < BOUND, f"{mode}: {took:.1f}s\n{report.to_text()}"


def test_malformed_errors_are_reported_as_malformed_not_as_silence(runs: dict[str, tuple[Report, float]]) -> None:
    report, _ = runs["errors-malformed"]
    assert "basic/index#11" in report.requirements_found()
    silence = [f for f in report.findings if "got no response" in f.message]
    assert not silence, report.to_text()


def test_a_server_that_stops_answering_is_not_asked_again_and_again(runs: dict[str, tuple[Report, float]]) -> None:
    report, _ = runs["only-initialize"]
    skipped = [c for c in report.checks if c.status == "skip" and "not tried" in c.status + c.detail]
    assert skipped, report.to_text()
    unanswered = [f for f in report.findings if "got no response" in f.message]
    assert len(unanswered) <= 4, report.to_text()


def test_the_checkers_own_client_is_not_held_against_the_server(runs: dict[str, tuple[Report, float]]) -> None:
    for report, _ in runs.values():
        assert all(f.party != "client" for f in report.findings), report.to_text()


async def test_a_check_kept_waiting_past_its_bound_is_cut_off_and_said_so(autojump_clock: trio.abc.Clock) -> None:
    """The net under the bounded waits: a check that is still waiting after CHECK_BOUND timeouts
    (at least CHECK_FLOOR seconds) ends, inconclusive, and the report's notes say so."""
    from mcp_ref.crosscheck.battery import CHECK_FLOOR, Battery
    from mcp_ref.crosscheck.config import CheckConfig

    battery = Battery(StdioTarget(sys.executable), CheckConfig(timeout=1.0))
    start = trio.current_time()
    async with battery.check("jsonrpc/kept-waiting", ["basic/index#3"]):
        await trio.sleep_forever()  # (an await on the peer that had no bound of its own)
    assert trio.current_time() - start == CHECK_FLOOR
    [check] = battery.report.checks
    assert (check.status, check.detail) == ("skip", f"inconclusive: the check was cut off after {CHECK_FLOOR:g}s")
    assert any(n.startswith("mcp-ref could not finish check jsonrpc/kept-waiting") for n in battery.report.notes)


@pytest.mark.req("basic/index#1")
async def test_a_fault_of_every_section_is_found_in_every_section() -> None:
    """tools/call results without content, in every revision: each section's failed checks name the
    statement, and each section has its finding (trial30b L1: once, in no section)."""
    from mcp_ref.crosscheck.config import load_config

    corpus = Path(__file__).parent / "corpus"
    target = StdioTarget(sys.executable, (str(corpus / "server.py"), "--break", "call-no-content"))
    report = await check_server(target, load_config(corpus / "corpus.toml"))
    assert not failed_checks_without_a_finding(report), report.to_text()
    sections = {c.revision for c in report.checks if c.status == "fail"}
    assert len(sections) > 1, report.to_text()
    found = {f.revision for f in report.findings if f.requirement == "basic/index#1"}
    assert sections <= found, report.to_text()
