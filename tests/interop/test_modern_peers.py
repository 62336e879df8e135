"""2026-07-28 interop, both directions, over stdio and HTTP:

* our client against the official Python SDK's server (mcp 2.3.0, ``MCPServer``:
  ``sdk_modern_server.py``) and the TypeScript SDK v2 server (``@modelcontextprotocol/server``
  2.4.0: ``ts_modern_server.mjs``);
* the Python SDK's ``Client`` and the TypeScript SDK v2 client (``@modelcontextprotocol/client``
  2.4.0: ``ts_modern_client.mjs``) against our server (``our_modern_server.py``).

The npm packages are installed into mcp_ref's cache by the fixture (skipped, saying why, without
Node 22 or npm). Each run: the probe chooses 2026-07-28, the tools are listed and called, an
elicitation comes back as an InputRequiredResult and is answered by the application's callback
on the retry, and a tools/list_changed arrives through subscriptions/listen.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.schema import ElicitResult
from mcp_ref.session.client import ClientSession, open_stdio_client
from mcp_ref.session.http import open_http_client
from mcp_ref.session.modern_client import EraCache

from ..crosscheck.test_other_implementations import CACHE, _node, serving
from ..examples.test_everything import free_port

HERE = Path(__file__).parent
TS_SDK = CACHE / "ts-sdk-2.4.0"
TS_PACKAGES = ("@modelcontextprotocol/server@2.4.0", "@modelcontextprotocol/client@2.4.0")


async def answer_ada(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "ada"})


async def exercise(client: ClientSession) -> None:
    assert client.era == "modern" and client.protocol_version == "2026-07-28"
    names = {t.name for t in await client.list_all_tools()}
    assert {"echo", "ask_name", "add_tool"} <= names
    assert (await client.call_tool("echo", {"text": "héllo"})).content[0].text == "héllo"
    # an MRTR round trip: the server's InputRequiredResult answered by our elicitation callback
    assert (await client.call_tool("ask_name", {})).content[0].text == "hello ada"
    async with client.listen(tools=True) as sub:
        assert sub.acknowledged and sub.acknowledged.get("toolsListChanged")
        await client.call_tool("add_tool", {})
        with trio.fail_after(10):
            async for method, params in sub:
                assert method == "notifications/tools/list_changed"
                assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == sub.id
                break
    assert "added" in {t.name for t in await client.list_all_tools()}


# -- the official Python SDK --------------------------------------------------------------------------


async def test_python_sdk_server_over_stdio() -> None:
    async with open_stdio_client(
        sys.executable, [str(HERE / "sdk_modern_server.py")], elicitation=answer_ada, era_cache=EraCache()
    ) as client:
        assert client.server_info.name == "sdk-modern"
        await exercise(client)


async def test_python_sdk_server_over_http() -> None:
    port = free_port()
    async with serving([sys.executable, str(HERE / "sdk_modern_server.py"), "--http", str(port)], b"Uvicorn running"):
        async with open_http_client(
            f"http://127.0.0.1:{port}/mcp", elicitation=answer_ada, era_cache=EraCache()
        ) as client:
            await exercise(client)


# -- the official TypeScript SDK v2 -----------------------------------------------------------------------


def _ts_sdk() -> str:
    """Node >= 22 and the TypeScript SDK v2 server package (npm-installed into the cache when
    missing); the test is skipped, saying what is missing, without Node or npm."""
    node = _node()
    if node is None:
        pytest.skip(f"no Node >= 22 on PATH or in {CACHE}/node22 (make conformance caches one)")
    marker = TS_SDK / "node_modules" / "@modelcontextprotocol" / "client" / "package.json"
    if not marker.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(f"npm is needed to install {' '.join(TS_PACKAGES)} into {TS_SDK}")
        TS_SDK.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(TS_SDK), *TS_PACKAGES],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0 or not marker.exists():
            pytest.skip(f"npm install {' '.join(TS_PACKAGES)} failed: {done.stderr[-500:]}")
    script = TS_SDK / "ts_modern_server.mjs"
    source = (HERE / "ts_modern_server.mjs").read_text()
    if not script.exists() or script.read_text() != source:
        script.write_text(source)  # (beside node_modules, so its imports resolve)
    return node


async def test_typescript_sdk_server_over_stdio() -> None:
    node = _ts_sdk()
    async with open_stdio_client(
        node, [str(TS_SDK / "ts_modern_server.mjs")], elicitation=answer_ada, era_cache=EraCache()
    ) as client:
        await exercise(client)


async def test_typescript_sdk_server_over_http() -> None:
    node = _ts_sdk()
    port = free_port()
    async with serving([node, str(TS_SDK / "ts_modern_server.mjs"), "--http", str(port)], b"listening"):
        async with open_http_client(
            f"http://127.0.0.1:{port}/mcp", elicitation=answer_ada, era_cache=EraCache()
        ) as client:
            await exercise(client)


# -- the other direction: the SDKs' 2026-07-28 clients against our server ------------------------------


async def _python_sdk_client(target: Any) -> None:
    """The official Python SDK's Client (mode "auto": it probes server/discover) against our server."""
    import anyio
    from mcp.client import Client
    from mcp_types import ElicitResult as SdkElicitResult

    async def on_elicit(context: Any, params: Any) -> Any:
        return SdkElicitResult(action="accept", content={"name": "grace"})

    async def run() -> None:
        async with Client(target, elicitation_callback=on_elicit) as client:
            assert client.protocol_version == "2026-07-28"
            tools = await client.list_tools()
            assert {"echo", "ask_name", "add_tool"} <= {t.name for t in tools.tools}
            assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
            assert (await client.call_tool("ask_name", {})).content[0].text == "hello grace"
            async with client.listen(tools_list_changed=True) as sub:
                await client.call_tool("add_tool", {})
                with anyio.fail_after(10):
                    async for _event in sub:
                        break
            assert "added" in {t.name for t in (await client.list_tools()).tools}

    # (the SDK runs on asyncio: in a thread of its own, off trio's)
    await trio.to_thread.run_sync(lambda: anyio.run(run))


async def test_the_python_sdk_client_against_our_server_over_stdio() -> None:
    from mcp.client.stdio import StdioServerParameters

    # (the whole environment: the SDK passes only a few variables by default)
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "our_modern_server.py")], env=dict(os.environ)
    )
    await _python_sdk_client(params)


async def test_the_python_sdk_client_against_our_server_over_http() -> None:
    port = free_port()
    async with serving([sys.executable, str(HERE / "our_modern_server.py"), "--http", str(port)], b"127.0.0.1"):
        await _python_sdk_client(f"http://127.0.0.1:{port}/mcp")


async def _ts_client(*args: str) -> list[str]:
    node = _ts_sdk()
    script = TS_SDK / "ts_modern_client.mjs"
    source = (HERE / "ts_modern_client.mjs").read_text()
    if not script.exists() or script.read_text() != source:
        script.write_text(source)
    with trio.fail_after(60):
        done = await trio.run_process([node, str(script), *args], capture_stdout=True, capture_stderr=True, check=False)
    out = done.stdout.decode().splitlines()
    assert done.returncode == 0, (out, done.stderr.decode()[-2000:])
    return out


async def test_the_typescript_sdk_client_against_our_server_over_stdio() -> None:
    out = await _ts_client("stdio", sys.executable, str(HERE / "our_modern_server.py"))
    assert out == [
        "version 2026-07-28",
        "tools add_tool,ask_name,echo",
        "echo ok",
        "mrtr ok",
        "list_changed ok",
        "done",
    ]


async def test_the_typescript_sdk_client_against_our_server_over_http() -> None:
    port = free_port()
    async with serving([sys.executable, str(HERE / "our_modern_server.py"), "--http", str(port)], b"127.0.0.1"):
        out = await _ts_client("http", f"http://127.0.0.1:{port}/mcp")
    assert out[0] == "version 2026-07-28" and out[-2:] == ["list_changed ok", "done"]
