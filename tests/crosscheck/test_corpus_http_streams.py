"""Streamable HTTP servers whose GET streams break one rule (``corpus/http_streams.py``): a response on
a GET stream that resumes nothing (transports#42), a resumed stream that replays another's message
(transports#54). ``check`` opens the GET stream and watches it, and resumes a stream of its own pings
with Last-Event-ID (trial30c D5, D7)."""

import pytest

from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.targets import HttpTarget

from .corpus.http_streams import BREAKS, serving
from .variants import by_rule

#: what a variant may show besides its own rule: the main session's client opens a GET stream of its
#: own, and the answer sent again there is basic/index#7 (spec_notes/crosscheck.md, one act, one finding)
ALSO = {"response-on-get": {"basic/index#7"}}


async def _check(name: str) -> Report:
    with serving(name) as url:
        return await check_server(HttpTarget(url), only=["transport", "jsonrpc"])


@pytest.mark.parametrize("name, requirement", by_rule(BREAKS))
async def test_each_broken_get_stream_is_caught_by_its_rule(name: str, requirement: str) -> None:
    report = await _check(name)
    found = {f.requirement for f in report.findings}
    assert requirement in found and found <= {requirement} | ALSO.get(name, set()), report.to_text()
    assert all(f.party == "server" for f in report.findings)
    covering = [c for c in report.checks if requirement in c.requirements]
    assert covering and all(c.status == "fail" for c in covering), report.to_text()


@pytest.mark.req("basic/transports#53")
async def test_a_server_that_resumes_its_own_stream_comes_out_clean() -> None:
    report = await _check("resumes-own-stream")
    assert report.findings == [], report.to_text()
    resumed = next(c for c in report.checks if c.name == "transport/resume-this-stream-only")
    assert resumed.status == "pass" and "HTTP 200, 1 event(s)" in resumed.detail, report.to_text()
