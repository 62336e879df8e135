"""``mcp-ref check --client``: every wait on the client is bounded by the user's options.

A client that answers nothing costs the fixture ``--timeout`` once, then at most
``AFTER_SILENCE`` per request, and only until it has shown that twice in a row (then the
battery asks it nothing more); one that never opens the session costs ``--timeout``; one that
never leaves is stopped at ``--client-timeout`` (the fixture, which bounds itself at that time
too, has written its report by then). Each gets a report and a finding. Real processes
(``corpus/client.py``) and small timeouts: the bounds below are nets against a hang, with a
margin for starting Python on a loaded machine.
"""

import sys
from pathlib import Path

import pytest
import trio

from mcp_ref.crosscheck.fixture import AFTER_SILENCE, LEAVE_GRACE, SILENT_STRIKES, FixtureOptions, check_client
from mcp_ref.crosscheck.report import Report

from .corpus.client import HANGS

CLIENT = Path(__file__).parent / "corpus" / "client.py"
#: seconds to start two Python processes (the client, the fixture) on a loaded machine
START = 20.0


async def _check(name: str, timeout: float, client_timeout: float) -> Report:
    command = [sys.executable, str(CLIENT), "--break", name, "--", "{fixture}"]
    with trio.fail_after(client_timeout + LEAVE_GRACE + START):
        return await check_client(command, FixtureOptions(timeout=timeout), client_timeout=client_timeout)


@pytest.mark.req("basic/utilities/ping#1", "basic/index#3")
async def test_a_client_that_answers_nothing_is_asked_twice_then_no_more() -> None:
    # (the --client-timeout is far: what ends this run is the client's silence, twice)
    report = await _check("stops-answering", timeout=3.0, client_timeout=120.0)
    assert {(f.requirement, f.party) for f in report.findings} == {
        ("basic/utilities/ping#1", "client"),
        ("basic/index#3", "client"),
    }, report.to_text()
    statuses = {c.name: c.status for c in report.checks}
    assert statuses["ping/answered-promptly"] == statuses["jsonrpc/unknown-method"] == "fail"
    # the first silence costs --timeout; once the client has shown it, the next wait is AFTER_SILENCE
    details = {c.name: c.detail for c in report.checks}
    assert "no answer within 3s" in details["ping/answered-promptly"]
    assert f"no answer within {AFTER_SILENCE:g}s" in details["jsonrpc/unknown-method"]
    skipped = [c for c in report.checks if c.detail.startswith("not asked")]
    assert skipped and all(f"last {SILENT_STRIKES} requests unanswered" in c.detail for c in skipped)
    assert report.exit_status_for() == 1


@pytest.mark.req("basic/lifecycle#2")
async def test_a_client_that_never_opens_the_session_gets_a_report_after_the_timeout() -> None:
    report = await _check("says-nothing", timeout=1.0, client_timeout=120.0)
    assert [(f.requirement, f.party) for f in report.findings] == [("basic/lifecycle#2", "client")], report.to_text()
    assert "sent nothing within 1s" in report.findings[0].message
    assert [(c.name, c.status) for c in report.checks] == [("lifecycle/client-opens", "fail")]


@pytest.mark.req("basic/utilities/ping#1")
async def test_a_client_that_never_leaves_is_stopped_at_the_client_timeout_with_a_report() -> None:
    """The fixture stops at --client-timeout, in the middle of its battery, and writes its report; the
    client, which stays, is stopped LEAVE_GRACE later. Before, the client was killed at --client-timeout
    while its fixture still ran: "never connected" (exit status 2), no report."""
    report = await _check("never-leaves", timeout=2.0, client_timeout=3.0)
    assert [(f.requirement, f.party) for f in report.findings] == [("basic/utilities/ping#1", "client")]
    assert any(n.startswith("the fixture stopped after 3s (--client-timeout)") for n in report.notes), report.notes


def test_the_hanging_variants_are_all_tested() -> None:
    assert set(HANGS) == {"stops-answering", "says-nothing", "never-leaves"}
