"""``mcp-ref check --client`` / ``mcp-ref fixture``: broken clients caught by their rule.

``corpus/client.py`` is a small MCP client in raw JSON that shares no code
with mcp_ref; ``--break NAME`` makes it break one rule (``BREAKS`` names the
requirement). It launches the fixture as its stdio server (``{fixture}``), and
the fixture's battery judges it. Real processes, in parallel: bounded by the
fixture's timeouts, no sleeps here.
"""

import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.cli import main
from mcp_ref.crosscheck.fixture import FixtureOptions, check_client
from mcp_ref.crosscheck.report import Report
from mcp_ref.schema.content import TextContent
from mcp_ref.schema.sampling import CreateMessageResult
from mcp_ref.session.http import open_http_client

from .corpus.client import BREAKS, CORRECT
from .variants import by_rule, each_variant

CLIENT = Path(__file__).parent / "corpus" / "client.py"
OPTIONS = FixtureOptions(timeout=5.0, cancel_wait=0.5)
#: what a variant may show besides its own rule, when the one fault cannot help showing twice
ALSO: dict[str, set[str]] = {
    # an answer under another id answers nothing: the request it was for is never answered either
    "answers-with-another-id": {"basic/index#3"},
}


async def _check(name: str) -> Report:
    command = [sys.executable, str(CLIENT), "--break", name, "--", "{fixture}"]
    return await check_client(command, OPTIONS, client_timeout=60)


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return trio.run(partial(each_variant, [*BREAKS, *CORRECT], _check, at_once=8))


@pytest.mark.parametrize("name, requirement", by_rule(BREAKS))
def test_each_broken_client_is_caught_by_its_rule(name: str, requirement: str, reports: dict[str, Report]) -> None:
    report = reports[name]
    found = {f.requirement for f in report.findings}
    assert requirement in found, report.to_text()
    assert found <= {requirement} | ALSO.get(name, set()), report.to_text()


@pytest.mark.parametrize("name", list(CORRECT))
def test_correct_clients_have_no_must_finding(name: str, reports: dict[str, Report]) -> None:
    report = reports[name]
    assert report.must == 0, report.to_text()
    assert report.checks, "the battery ran"


def test_the_battery_follows_the_clients_capabilities(reports: dict[str, Report]) -> None:
    plain = {c.name: c.status for c in reports["none"].checks}
    tools = {c.name: c.status for c in reports["with-tools"].checks}
    assert plain["sampling/tools-not-declared"] == "pass" and "sampling/tool-loop" not in plain
    assert tools["sampling/tool-loop"] == "pass" and tools["sampling/tool-choice-none"] == "pass"
    assert plain["elicitation/undeclared-url-mode"] == "pass" and plain["roots/list"] == "pass"
    assert plain["tasks/sampling-as-task"] == "skip"
    # what a client did not declare is asked for too, and must get -32601
    declines = {c.name: c.status for c in reports["declines-everything"].checks}
    assert declines["roots/undeclared"] == "pass" and declines["roots/list"] == "skip"
    assert "roots/undeclared" not in plain


@pytest.mark.req("client/elicitation#34")
def test_only_a_code_a_statement_names_is_held_against_an_undeclared_refusal(reports: dict[str, Report]) -> None:
    """(trial30c D8) elicitation names -32602 for a mode the client did not declare (MUST); no statement
    names the code of a refused undeclared sampling: any error will do, and the check says which came."""
    odd = reports["undeclared-odd-codes"]
    assert odd.findings == [], odd.to_text()
    checks = {c.name: c for c in odd.checks}
    assert checks["elicitation/undeclared"].status == "pass", odd.to_text()
    assert checks["sampling/undeclared"].status == "pass" and "-32600" in checks["sampling/undeclared"].detail
    wrong = reports["elicitation-undeclared-invalid-request"]
    assert [f.level for f in wrong.findings if f.requirement == "client/elicitation#34"] == ["MUST"]
    assert {c.name: c.status for c in wrong.checks}["elicitation/undeclared"] == "fail", wrong.to_text()


#: the broken clients a fixture check sees itself, and that check
CAUGHT_BY_A_CHECK = {
    "ping-not-empty": "ping/answered-promptly",
    "root-not-file": "roots/list",
    "answers-tools-without-capability": "sampling/tools-not-declared",
    "answers-undeclared-url-mode": "elicitation/undeclared-url-mode",
    "form-answer-breaks-schema": "elicitation/form",
    "tool-use-with-choice-none": "sampling/tool-choice-none",
}


@pytest.mark.req("client/roots#1")
def test_an_undeclared_request_answered_is_one_finding_that_reads_well(reports: dict[str, Report]) -> None:
    """(trial30b L2) not the fixture's finding and the observer's, the second garbled."""
    report = reports["answers-roots-undeclared"]
    found = [f for f in report.findings if f.requirement == "client/roots#1"]
    assert len(found) == 1, report.to_text()
    assert found[0].message.startswith("the client answered roots/list with a result, though it had to refuse it")
    assert {c.name: c.status for c in report.checks}["roots/undeclared"] == "fail", report.to_text()


@pytest.mark.parametrize("name, check", list(CAUGHT_BY_A_CHECK.items()))
def test_a_check_that_records_a_violation_fails(name: str, check: str, reports: dict[str, Report]) -> None:
    report = reports[name]
    status = {c.name: c.status for c in report.checks}
    assert status[check] == "fail", report.to_text()


async def _model(ctx: Any, params: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", model="ours", content=TextContent(text="hello"))


async def test_our_own_client_over_http_comes_out_clean() -> None:
    from mcp_ref.crosscheck.fixture import serve_fixture_http

    reports: list[Report] = []
    async with serve_fixture_http(OPTIONS, reports) as url:
        with trio.fail_after(60):
            async with open_http_client(url, sampling=_model, roots=[], era="legacy"):
                # the battery runs meanwhile; its last check is the one on tasks
                while not reports or not any(c.name.startswith("tasks/") for c in reports[0].checks):
                    await trio.sleep(0.05)
    report = reports[0]
    assert report.findings == [], report.to_text()
    assert {c.name for c in report.checks if c.status == "pass"} >= {
        "ping/answered-promptly",
        "jsonrpc/unknown-method",
        "roots/list",
        "sampling/plain",
        "sampling/tools-not-declared",
    }


def test_check_client_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = [sys.executable, str(CLIENT), "--break", "root-not-file", "--", "{fixture}"]
    assert main(["check", "--client", "--json", "--timeout", "5", "--", *command]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [f["requirement"] for f in data["findings"]] == ["client/roots#3"]
    assert main(["check", "--client", "--", sys.executable, str(CLIENT)]) == 2
    assert "{fixture}" in capsys.readouterr().err


def test_check_client_waits_for_answers_as_long_as_its_help_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--timeout's help names two defaults: 10 s for a server's answers (CheckConfig) and 30 s with
    --client (a person or a model may answer sampling and elicitation); each mode uses its own,
    and the fixture command and FixtureOptions agree on the client's."""
    import mcp_ref.crosscheck.fixture as fixture
    from mcp_ref.crosscheck.config import CheckConfig

    given: list[FixtureOptions] = []

    def fake_run(command: Any, options: FixtureOptions, *, client_timeout: float) -> Report:
        given.append(options)
        return Report(target="a client")

    monkeypatch.setattr(fixture, "run_check_client", fake_run)
    assert main(["check", "--client", "--", "my-client", "{fixture}"]) == 0
    assert main(["check", "--client", "--timeout", "2.5", "--", "my-client", "{fixture}"]) == 0
    assert [o.timeout for o in given] == [30.0, 2.5] and FixtureOptions().timeout == 30.0
    assert main(["check", "--client", "--timeout", "0", "--", "my-client", "{fixture}"]) == 2
    assert "--timeout must be positive" in capsys.readouterr().err and len(given) == 2
    assert CheckConfig().timeout == 10.0
    for command, expected in (
        (["check", "--help"], "(default 10; with --client 30:"),
        (["fixture", "--help"], "(default 30)"),
    ):
        with pytest.raises(SystemExit):
            main(command)
        assert expected in " ".join(capsys.readouterr().out.split())


def test_fixture_inside_a_word_is_one_shell_quoted_argument(capsys: pytest.CaptureFixture[str]) -> None:
    # a client that takes its server as one option value, --server-command=COMMAND LINE
    launcher = (
        "import os, shlex, sys; cmd = sys.argv[1].split('=', 1)[1]; "
        "os.execv(sys.executable, [sys.executable, sys.argv[2], '--break', 'root-not-file', '--', *shlex.split(cmd)])"
    )
    command = [sys.executable, "-c", launcher, "--server-command={fixture}", str(CLIENT)]
    assert main(["check", "--client", "--json", "--timeout", "5", "--", *command]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [f["requirement"] for f in data["findings"]] == ["client/roots#3"]


def test_a_client_that_never_connects_is_stopped_after_client_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    command = [sys.executable, "-c", "import time; time.sleep(60)", "{fixture}"]
    assert main(["check", "--client", "--client-timeout", "1", "--", *command]) == 2
    assert "never connected to the fixture" in capsys.readouterr().err


def test_fixture_port_without_http_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fixture", "--port", "8123"]) == 2
    assert "--port goes with --http" in capsys.readouterr().err
