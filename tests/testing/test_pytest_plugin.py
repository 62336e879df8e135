"""The pytest plugin: a user's tests get an in-memory client of their server from fixtures."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref import ClientSession, RequestContext, Server
from mcp_ref.schema import ElicitResult

from ..conftest import ROOT

server = Server("plugin-demo")


@server.tool()
async def nap(ctx: RequestContext, *, hours: float) -> str:
    await trio.sleep(hours * 3600)
    return f"slept {hours}h"


@server.tool()
async def ask_name(ctx: RequestContext) -> str:
    answer = await ctx.elicit_form("Your name?", {"name": {"type": "string"}})
    return f"hello {answer.content['name']}" if answer.action == "accept" else "no answer"


@pytest.fixture
def mcp_server() -> Server:
    return server


@pytest.fixture
def mcp_client_options() -> dict[str, Any]:
    async def answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Ada"})

    return {"elicitation": answer}


async def test_the_client_fixture_talks_to_the_server_fixture(mcp_client: ClientSession) -> None:
    assert mcp_client.server_info.name == "plugin-demo"
    assert [t.name for t in (await mcp_client.list_tools()).tools] == ["nap", "ask_name"]


async def test_it_runs_on_the_autojump_clock(mcp_client: ClientSession, autojump_clock: trio.abc.Clock) -> None:
    start = trio.current_time()
    result = await mcp_client.call_tool("nap", {"hours": 0.5}, timeout=7200, max_timeout=7200)
    assert result.content[0].text == "slept 0.5h"  # type: ignore[union-attr]
    assert trio.current_time() - start == pytest.approx(1800)


async def test_client_options_give_the_client_its_capabilities(mcp_client: ClientSession) -> None:
    result = await mcp_client.call_tool("ask_name")
    assert result.content[0].text == "hello Ada"  # type: ignore[union-attr]


USER_TESTS = """
import pytest
from mcp_ref import ClientSession, Server

server = Server("user-app")

@server.tool()
async def add(ctx, *, a: int, b: int) -> str:
    return str(a + b)

@pytest.fixture
def mcp_server():
    return server

async def test_add(mcp_client: ClientSession) -> None:
    assert (await mcp_client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"
"""


def run_pytest(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (directory / "pytest.ini").write_text("[pytest]\ntrio_mode = true\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=directory,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_user_project_gets_the_fixtures_without_any_import_of_the_plugin(tmp_path: Path) -> None:
    # the pytest11 entry point loads the plugin wherever mcp_ref is installed
    (tmp_path / "test_app.py").write_text(USER_TESTS)
    done = run_pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_forgetting_the_server_fixture_says_what_to_define(tmp_path: Path) -> None:
    (tmp_path / "test_app.py").write_text("async def test_it(mcp_client):\n    pass\n")
    done = run_pytest(tmp_path)
    assert done.returncode != 0
    assert "define a fixture named mcp_server that returns your mcp_ref.Server" in done.stdout + done.stderr
