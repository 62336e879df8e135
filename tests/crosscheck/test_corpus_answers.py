"""Servers that answer every request, some answers malformed (``corpus/server_answers.py``).

A malformed answer is the finding; it is not "the server left requests unanswered", so every
revision the server speaks keeps its section (trial30c D6). A batch is judged by the revision the
server speaks, before initialize too.
"""

import sys
from functools import partial
from pathlib import Path

import pytest
import trio

from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import CheckConfig, ToolSpec
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.targets import StdioTarget

from .corpus.server_answers import BREAKS, CORRECT
from .variants import by_rule, each_variant

ANSWERS = Path(__file__).parent / "corpus" / "server_answers.py"
#: the revisions the corpus server speaks, the latest first
SPOKEN = ["2025-11-25", "2025-06-18", "2025-03-26"]


async def _check(name: str) -> Report:
    config = CheckConfig(timeout=3.0)
    return await check_server(StdioTarget(sys.executable, (str(ANSWERS), "--break", name)), config)


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return trio.run(partial(each_variant, [*BREAKS, *CORRECT], _check, at_once=2))


def _sections(report: Report, requirement: str) -> set[str | None]:
    return {f.revision or report.revision for f in report.findings if f.requirement == requirement}


@pytest.mark.parametrize("name, requirement", by_rule(BREAKS))
def test_a_malformed_answer_is_a_finding_in_every_revision(
    name: str, requirement: str, reports: dict[str, Report]
) -> None:
    report = reports[name]
    assert report.revisions == SPOKEN, report.to_text()
    assert not [n for n in report.notes if "not checked" in n], report.to_text()
    # each revision's main session ran, and its malformed answers are named there ...
    assert {c.revision or report.revision for c in report.checks if c.name == "pagination/tools/list"} == set(SPOKEN)
    expected = {"2025-11-25", "2025-06-18"} if name == "tools-list-batched" else set(SPOKEN)
    # ... except where the revision allows them (a batch in 2025-03-26)
    assert _sections(report, requirement) == expected, report.to_text()


@pytest.mark.req("basic/index#13")
def test_a_response_to_an_id_never_sent_is_not_an_answer_to_a_notification(reports: dict[str, Report]) -> None:
    """(trial30c D7, ssewrongid) it answers a request that was never made (index#7), nothing else."""
    report = reports["answers-unknown-id"]
    assert {f.requirement for f in report.findings if f.party == "server"} == {"basic/index#7"}, report.to_text()


@pytest.mark.req("basic/index#1")
def test_an_invalid_log_level_is_named_by_the_schema_not_the_negotiation(reports: dict[str, Report]) -> None:
    """(trial30c D7, badlevel) a level LoggingLevel lacks is a message no revision defines (basic/index#1),
    not basic/lifecycle#14, the catch-all about the negotiated version."""
    report = reports["log-level-invalid"]
    found = [f for f in report.findings if f.party == "server"]
    assert {f.requirement for f in found} == {"basic/index#1"}, report.to_text()
    assert all("LoggingLevel" in f.message for f in found), report.to_text()


@pytest.mark.req("2025-03-26:basic/index#14")
def test_a_batch_is_judged_by_the_revision_the_server_speaks(reports: dict[str, Report]) -> None:
    report = reports["only-0326-batched"]
    assert report.revisions == ["2025-03-26"], report.to_text()
    # before initialize too: the server speaks 2025-03-26, whose JSON-RPC has batches
    assert not [f for f in report.findings if "batch" in f.message], report.to_text()
    tools = [c for c in report.checks if c.name == "pagination/tools/list"]
    assert tools and all(c.status == "pass" for c in tools), report.to_text()


SERVER = Path(__file__).parent / "corpus" / "server.py"


@pytest.mark.req("basic/utilities/cancellation#4")
@pytest.mark.req("basic/utilities/progress#4")
async def test_the_progress_call_runs_while_the_cancellation_is_watched() -> None:
    """(trial30c D10) a slow tool named for both roles ran to its end once per revision after the
    cancellation check's watch; now the progress call is sent before it, and both checks still run
    and pass in every revision."""
    slow = ToolSpec("slow")
    config = CheckConfig(tools={"slow": slow, "progress": slow}, timeout=8.0, cancel_wait=1.0)
    report = await check_server(
        StdioTarget(sys.executable, (str(SERVER),)), config, only=("lifecycle", "cancellation", "progress")
    )
    for name in ("cancellation/stops-and-stays-silent", "progress/increasing-and-before-the-result"):
        statuses = {c.revision or report.revision: c.status for c in report.checks if c.name == name}
        assert statuses == dict.fromkeys(SPOKEN, "pass"), report.to_text()
    assert report.findings == [], report.to_text()
    sessions: dict[str, list[str]] = {}
    for message in report.traffic:
        if message["dir"] == "c2s" and "main session" in message["session"]:
            sessions.setdefault(message["session"], []).append(message["text"])
    assert len(sessions) == len(SPOKEN), list(sessions)
    for sent in sessions.values():
        progress_call = next(i for i, t in enumerate(sent) if "mcp-ref-progress-1" in t)
        cancelled = next(i for i, t in enumerate(sent) if "notifications/cancelled" in t and "mcp-ref-never" not in t)
        assert progress_call < cancelled, sent
