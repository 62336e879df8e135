"""Interop with the official Python SDK (mcp 2.3.0), over stdio, both directions.

The SDK runs on its anyio trio backend inside our trio test.
"""

import os
import sys
from pathlib import Path

import pytest

from mcp_ref.schema.content import TextContent
from mcp_ref.session import open_stdio_client

mcp = pytest.importorskip("mcp", reason="the official SDK is in the test extra")

from mcp import ClientSession as SDKClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
SDK_SERVER = str(Path(__file__).with_name("sdk_echo_server.py"))


@pytest.mark.req("basic/lifecycle#3", "basic/lifecycle#9", "basic/index#3")
async def test_sdk_client_against_our_stdio_server() -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_ref.examples.echo"], env=ENV)
    async with stdio_client(params) as (read, write), SDKClientSession(read, write) as session:
        init = await session.initialize()
        assert init.protocol_version == "2025-11-25"
        assert init.server_info.name == "mcp_ref-echo" and init.server_info.title == "mcp_ref echo server"
        await session.send_ping()
        tools = await session.list_tools()
        assert [t.name for t in tools.tools] == ["echo"]
        result = await session.call_tool("echo", {"text": "from the SDK"})
        assert result.is_error is not True
        assert [c.text for c in result.content] == ["from the SDK"]  # type: ignore[union-attr]
        bad = await session.call_tool("echo", {"text": 5})
        assert bad.is_error is True


@pytest.mark.req("basic/lifecycle#2", "basic/lifecycle#4", "basic/lifecycle#7", "basic/lifecycle#8")
async def test_our_client_against_the_sdk_stdio_server() -> None:
    async with open_stdio_client(sys.executable, [SDK_SERVER], env=ENV, era="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info.name == "sdk-echo"
        await client.ping()
        names = sorted(t.name for t in await client.list_all_tools())
        assert names == ["add", "echo"]
        result = await client.call_tool("echo", {"text": "from mcp_ref"})
        assert result.content == [TextContent(text="from mcp_ref")]
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.content[0] == TextContent(text="5")


@pytest.mark.req("basic/lifecycle#9")
@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26", "2024-11-05"])
async def test_version_negotiation_with_the_sdk_server(version: str) -> None:
    async with open_stdio_client(sys.executable, [SDK_SERVER], env=ENV, protocol_version=version) as client:
        assert client.protocol_version == version
        result = await client.call_tool("echo", {"text": version})
        assert result.content == [TextContent(text=version)]


@pytest.mark.req("basic/lifecycle#9")
async def test_an_sdk_client_offering_2024_11_05_gets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # the SDK's client always offers its newest handshake revision; told to offer the
    # oldest it speaks, it is a 2024-11-05 client (its server tables know that revision)
    monkeypatch.setattr("mcp.client.session.LATEST_HANDSHAKE_VERSION", "2024-11-05")
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_ref.examples.echo"], env=ENV)
    async with stdio_client(params) as (read, write), SDKClientSession(read, write) as session:
        init = await session.initialize()
        assert init.protocol_version == "2024-11-05"
        # the server has a title, which 2024-11-05's Implementation lacks: it is not sent
        assert init.server_info.name == "mcp_ref-echo" and init.server_info.title is None
        await session.send_ping()
        tools = await session.list_tools()
        assert [t.name for t in tools.tools] == ["echo"]
        result = await session.call_tool("echo", {"text": "from 2024"})
        assert [c.text for c in result.content] == ["from 2024"]  # type: ignore[union-attr]
