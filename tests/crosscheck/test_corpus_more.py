"""More broken stdio servers, each breaking ONE rule today's corpus did not, caught with ``mcp-ref check``'s
defaults: no configuration names their tools (the read-only ones are exercised), ``--call-all-tools``
only where the fault is on the error path of a tool that is not read-only.

``corpus/server_more.py`` shares no code with mcp_ref. ``CORRECT`` variants (CR LF line ends, a ping
result carrying ``_meta``) bend only what the spec leaves open and must come out without a MUST.
"""

import sys
from functools import partial
from pathlib import Path

import pytest
import trio

from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import CheckConfig
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.targets import StdioTarget

from .corpus.server_more import BREAKS, CALL_ALL, CORRECT
from .variants import by_rule, each_variant

MORE = Path(__file__).parent / "corpus" / "server_more.py"
#: what a variant may show besides its own rule, when the one fault cannot help showing twice
ALSO: dict[str, set[str]] = {
    # a task said to be completed when created is later seen working (or cancelled): that change follows
    "task-created-completed": {"basic/utilities/tasks#28"},
    # the 2025-03-26 section names the schema's "format": "uri" (that revision's prose has no resources#6)
    "resource-uri-not-uri": {"basic/index#1"},
}


async def _check(name: str) -> Report:
    config = CheckConfig(timeout=5.0, call_all_tools=name in CALL_ALL)
    return await check_server(StdioTarget(sys.executable, (str(MORE), "--break", name)), config)


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return trio.run(partial(each_variant, [*BREAKS, *CORRECT], _check, at_once=12))


@pytest.mark.parametrize("name, requirement", by_rule(BREAKS))
def test_each_broken_server_is_caught_by_its_own_rule(name: str, requirement: str, reports: dict[str, Report]) -> None:
    report = reports[name]
    found = {f.requirement for f in report.findings if f.party in ("server", None)}
    assert requirement in found, report.to_text()
    assert found <= {requirement} | ALSO.get(name, set()), report.to_text()


@pytest.mark.parametrize("name", list(CORRECT))
def test_unusual_but_valid_servers_have_no_must_finding(name: str, reports: dict[str, Report]) -> None:
    report = reports[name]
    assert report.must == 0, report.to_text()
    assert report.findings == [], report.to_text()


def test_the_read_only_tools_are_exercised_without_configuration(reports: dict[str, Report]) -> None:
    exercised = next(c for c in reports["none"].checks if c.name == "tools/exercised")
    assert exercised.detail.startswith("5 of 7 tool(s) called"), exercised.detail
    assert "slow (no annotations)" in exercised.detail and "batch (runs as a task only)" in exercised.detail
    called = {c.name for c in reports["none"].checks if c.name.startswith("tools/call ")}
    assert called == {f"tools/call {n}" for n in ("echo", "add", "quick", "log", "progress")}
