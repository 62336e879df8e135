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

from .corpus.client import HANGS, SLOW_ANSWER
from .corpus.http_client import HANGS as HTTP_HANGS
from .corpus.http_client import KEEPS_WORKING, KEEPS_WORKING_EVERY

HTTP_CLIENT = Path(__file__).parent / "corpus" / "http_client.py"

CLIENT = Path(__file__).parent / "corpus" / "client.py"
#: seconds to start two Python processes (the client, the fixture) on a loaded machine
START = 20.0


async def _check(name: str, timeout: float, client_timeout: float, bound: float | None = None) -> Report:
    """``bound``: seconds the run may take (default: until --client-timeout and the grace after it)."""
    command = [sys.executable, str(CLIENT), "--break", name, "--", "{fixture}"]
    with trio.fail_after((client_timeout + LEAVE_GRACE if bound is None else bound) + START):
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


@pytest.mark.req("basic/utilities/ping#1", "basic/index#3")
async def test_a_client_that_never_leaves_is_stopped_soon_after_the_fixture_has_ended_the_session() -> None:
    """The battery ends (one --timeout for the ping, AFTER_SILENCE for the next request, then nothing is
    asked), the fixture closes the client's input, writes its report and exits 2 s later; the client,
    which stays, is stopped LEAVE_GRACE after that: far before --client-timeout. Before, the client
    was waited for until --client-timeout + LEAVE_GRACE (123 s with the defaults)."""
    timeout = 2.0
    battery = timeout + AFTER_SILENCE + 2.0  # (+ the 2 s the fixture stays after closing its output)
    report = await _check("never-leaves", timeout=timeout, client_timeout=120.0, bound=battery + LEAVE_GRACE)
    assert {(f.requirement, f.party) for f in report.findings} == {
        ("basic/utilities/ping#1", "client"),
        ("basic/index#3", "client"),
    }, report.to_text()
    assert not any("--client-timeout" in n for n in report.notes), report.notes
    stayed = f"the client was still running {LEAVE_GRACE:g}s after the fixture had ended the session"
    assert any(n.startswith(stayed) for n in report.notes), report.notes
    # (staying is a note, not a finding: lifecycle#16 lets the server end the session, nothing makes the client exit)
    assert report.exit_status_for() == 1


async def test_a_client_that_keeps_answering_slowly_is_not_cut_short() -> None:
    """The control: each answer comes SLOW_ANSWER (under --timeout) late, so the battery takes several
    times LEAVE_GRACE; the client is not stopped, the battery runs to its end, nothing is a finding."""
    report = await _check("answers-slowly", timeout=3 * SLOW_ANSWER, client_timeout=120.0, bound=60.0)
    assert report.findings == [], report.to_text()
    statuses = {c.name: c.status for c in report.checks}
    assert statuses["ping/answered-promptly"] == statuses["elicitation/form"] == "pass", report.to_text()
    assert statuses["sampling/plain"] == statuses["cancellation/client-stops"] == "pass", report.to_text()
    assert not any("still running" in n or "--client-timeout" in n for n in report.notes), report.notes
    assert report.exit_status_for() == 0


async def _check_http(name: str, timeout: float, bound: float) -> Report:
    command = [sys.executable, str(HTTP_CLIENT), "--break", name, "--url", "{url}"]
    with trio.fail_after(bound + START):
        return await check_client(command, FixtureOptions(timeout=timeout), client_timeout=120.0)


@pytest.mark.req("basic/utilities/ping#1")
async def test_an_http_client_that_never_leaves_is_stopped_once_the_fixture_is_done_and_it_is_quiet() -> None:
    """Over HTTP the fixture runs in ``check --client``: once its battery is done (the ping unanswered:
    the client opens no stream to receive it) and the client has sent nothing for --timeout, the client
    gets LEAVE_GRACE, then is stopped, far before --client-timeout."""
    timeout = 2.0
    report = await _check_http("never-leaves", timeout, bound=timeout + AFTER_SILENCE + timeout + LEAVE_GRACE)
    assert ("basic/utilities/ping#1", "client") in {(f.requirement, f.party) for f in report.findings}
    assert any(n.startswith("the client was still running") for n in report.notes), report.notes


async def test_an_http_client_that_keeps_sending_requests_is_not_cut_short() -> None:
    """The control: after the battery, the client pings every KEEPS_WORKING_EVERY seconds (under
    --timeout) for longer than --timeout + LEAVE_GRACE, then leaves; all its requests reach the fixture."""
    timeout = 2.0
    assert KEEPS_WORKING * KEEPS_WORKING_EVERY > timeout + AFTER_SILENCE + timeout + LEAVE_GRACE
    report = await _check_http("keeps-working", timeout, bound=60.0)
    assert not any(n.startswith("the client was still running") for n in report.notes), report.notes
    # initialize, initialized, tools/list, ping, the KEEPS_WORKING pings, DELETE
    details = {c.name: c.detail for c in report.checks}
    assert details["transport/client-http-requests"] == f"{4 + KEEPS_WORKING + 1} request(s)", report.to_text()


def test_the_hanging_variants_are_all_tested() -> None:
    assert set(HANGS) == {"stops-answering", "says-nothing", "never-leaves"}
    assert set(HTTP_HANGS) == {"never-leaves"}
