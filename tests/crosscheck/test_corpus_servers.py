"""The corpus of broken servers: each breaks ONE rule, and ``mcp-ref check`` reports it by its id.

``corpus/server.py`` is a small MCP server in raw JSON that shares no code with
mcp_ref; ``--break NAME`` makes it break exactly one rule (``BREAKS`` names
the requirement). The correct variants (``CORRECT``) must come out without a
MUST finding. Every variant is checked once, in parallel, by the real battery
over stdio (real processes: bounded by the battery's timeouts, no sleeps here).
"""

import sys
from functools import partial
from pathlib import Path

import pytest
import trio

from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import load_config
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.targets import StdioTarget

from .corpus.server import BREAKS, CORRECT
from .variants import by_rule, each_variant

CORPUS = Path(__file__).parent / "corpus"
CONFIG = load_config(CORPUS / "corpus.toml")
#: what a variant may show besides its own rule, when the one fault cannot help showing twice
ALSO: dict[str, set[str]] = {
    # an error answering a notification has no id to give: it is also an error without a readable cause
    "answers-notifications": {"basic/index#10", "basic/index#3"},
    # a cursor that leads back to a page lists its tools again
    "cursor-loop": {"server/tools#11"},
}
#: the chapters of the battery each variant needs (the lifecycle probes always run)
CHAPTERS: dict[str, list[str] | None] = {
    "version-swap": ["lifecycle"],
    "unknown-version-echoed": ["lifecycle"],
    "old-version-for-unknown": ["lifecycle"],
    "ping-not-empty": ["ping"],
    # an error our client cannot read is never an answer: the main session would only wait
    "error-code-string": ["jsonrpc"],
    "unknown-tool-32000": ["tools"],
    "unknown-tool-32601": ["tools"],
}


async def _check(name: str) -> Report:
    target = StdioTarget(sys.executable, (str(CORPUS / "server.py"), "--break", name))
    return await check_server(target, CONFIG, only=CHAPTERS.get(name))


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return trio.run(partial(each_variant, [*BREAKS, *CORRECT], _check, at_once=12))


@pytest.mark.parametrize("name, requirement", by_rule(BREAKS))
def test_each_broken_server_is_caught_by_its_rule(name: str, requirement: str, reports: dict[str, Report]) -> None:
    report = reports[name]
    found = {f.requirement for f in report.findings if f.party in ("server", None)}
    assert requirement in found, report.to_text()
    assert found <= {requirement} | ALSO.get(name, set()), report.to_text()
    # and a check that covers the rule and ran says so
    covering = [c for c in report.checks if requirement in c.requirements and c.status != "skip"]
    assert not covering or any(c.status == "fail" for c in covering), report.to_text()


def test_the_corpus_spans_the_chapters_and_thirty_rules() -> None:
    rules = set(BREAKS.values())
    assert len(rules) >= 30
    chapters = {r.split("#")[0] for r in rules}
    assert {
        "basic/lifecycle",
        "basic/index",
        "basic/utilities/ping",
        "basic/utilities/cancellation",
        "basic/utilities/progress",
        "server/utilities/pagination",
        "server/tools",
        "server/resources",
        "server/prompts",
        "server/utilities/logging",
        "server/utilities/completion",
        "basic/utilities/tasks",
        "basic/transports",
    } <= chapters


@pytest.mark.parametrize("name", list(CORRECT))
def test_correct_variants_have_no_must_finding(name: str, reports: dict[str, Report]) -> None:
    report = reports[name]
    assert report.must == 0, report.to_text()
    assert report.exit_status() == 0


def test_the_correct_server_passes_every_check_it_can_run(reports: dict[str, Report]) -> None:
    report = reports["none"]
    assert report.findings == [], report.to_text()
    assert {c.status for c in report.checks} <= {"pass", "skip"}
    skipped = [c.name for c in report.checks if c.status == "skip" and c.revision is None]
    assert skipped == ["tools/list-changed-notification"], skipped
    # the older revisions it speaks have their own sections (tasks are 2025-11-25's: not there at all)
    assert report.revisions == ["2025-11-25", "2025-06-18", "2025-03-26"]
    older = {c.name: c.status for c in report.checks if c.revision == "2025-03-26"}
    assert older["tools/listed"] == "pass" and "tasks/lifecycle" not in older, report.to_text()
    assert {c.status for c in report.checks if c.revision is not None} == {"pass"}, report.to_text()


@pytest.mark.req("basic/index#3")
@pytest.mark.parametrize("name", ["unknown-tool-32000", "unknown-tool-32601"])
async def test_an_unknown_tool_answered_with_another_code_than_invalid_params(name: str) -> None:
    """-32000 or -32601 for an unknown tool is a finding (spec_notes/server/tools.md), where it
    used to pass with a note (trial30 #4)."""
    report = await _check(name)
    assert {f.requirement for f in report.findings} == {"basic/index#3"}, report.to_text()
    assert {c.name: c.status for c in report.checks}["tools/unknown-tool"] == "fail"
