"""Interop with the official Python SDK (mcp 2.3.0) over Streamable HTTP, both directions."""

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from mcp_ref.basic.transports.http_server import serve_http
from mcp_ref.errors import HTTPTransportError
from mcp_ref.schema.content import TextContent
from mcp_ref.session import Server
from mcp_ref.session.http import open_http_client
from mcp_ref.testing.transport_check import check_server

pytest.importorskip("mcp", reason="the official SDK is in the test extra")

from mcp import ClientSession as SDKClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
SDK_SERVER = str(Path(__file__).with_name("sdk_echo_server.py"))


@pytest.mark.req("basic/transports#22", "basic/transports#59", "basic/transports#65")
async def test_sdk_client_against_our_http_server() -> None:
    async with trio.open_nursery() as nursery:
        info = await nursery.start(lambda task_status: serve_http(check_server(), task_status=task_status))
        async with streamable_http_client(info.url) as (read, write), SDKClientSession(read, write) as session:
            init = await session.initialize()
            assert init.protocol_version == "2025-11-25"
            await session.send_ping()
            tools = await session.list_tools()
            assert "echo" in {t.name for t in tools.tools}
            result = await session.call_tool("echo", {"text": "over http"})
            assert result.content[0].text == "over http"  # type: ignore[union-attr]
            progress: list[float] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                progress.append(p)

            counted = await session.call_tool("count", {"steps": 5}, progress_callback=on_progress)
            assert counted.content[0].text == "done"  # type: ignore[union-attr]
            assert progress == [1, 2, 3, 4, 5]
        nursery.cancel_scope.cancel()


async def test_the_sdk_client_reads_our_http_level_errors() -> None:
    # an error of no request (here the 413 of a body over max_body) carries "id": null: the SDK
    # client reads it as the JSON-RPC error it is and raises our message (it would not parse an
    # error without the id member, and raise a bare "Server returned an error response" instead)
    from mcp.shared.exceptions import MCPError

    async with trio.open_nursery() as nursery:
        info = await nursery.start(
            lambda task_status: serve_http(check_server(), max_body=4096, task_status=task_status)
        )
        async with streamable_http_client(info.url) as (read, write), SDKClientSession(read, write) as session:
            await session.initialize()
            with pytest.raises(MCPError, match="Request body over 4096 bytes"):
                await session.call_tool("echo", {"text": "x" * 5000})
        nursery.cancel_scope.cancel()


@pytest.mark.req("2026-07-28:basic/versioning#10")
async def test_the_sdk_legacy_client_is_told_which_versions_a_modern_only_server_speaks() -> None:
    # a 2025 client has no way forward to 2026-07-28: the refusal of its initialize is all it can show
    from mcp.shared.exceptions import MCPError

    async with trio.open_nursery() as nursery:
        server = Server("modern only", supported_versions=())
        info = await nursery.start(lambda task_status: serve_http(server, task_status=task_status))
        async with streamable_http_client(info.url) as (read, write), SDKClientSession(read, write) as session:
            with pytest.raises(
                MCPError, match="Unsupported protocol version 2025-11-25: this server supports 2026-07-28"
            ):
                await session.initialize()
        nursery.cancel_scope.cancel()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def until_listening(port: int, proc: "subprocess.Popen[bytes]", timeout: float) -> None:
    """Return once a child server listens on ``port`` (it is still starting: poll, bounded)."""
    with trio.fail_after(timeout):
        while True:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
                await stream.aclose()
                return
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"the child server exited ({proc.returncode}) before listening") from None
                await trio.sleep(0.1)


@asynccontextmanager
async def sdk_server(mode: str) -> AsyncIterator[int]:
    """The SDK's echo server in a child process (``--http`` or ``--sse``); yields its port once it listens."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, SDK_SERVER, mode, str(port)], env=env, stderr=subprocess.DEVNULL)
    try:
        await until_listening(port, proc, 20)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.req("basic/transports#14", "basic/transports#16", "basic/transports#63")
async def test_our_client_against_the_sdk_http_server() -> None:
    async with sdk_server("--http") as port:
        url = f"http://127.0.0.1:{port}/mcp"
        async with open_http_client(url, era="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            assert client.server_info.name == "sdk-echo"
            await client.ping()
            assert sorted(t.name for t in await client.list_all_tools()) == ["add", "echo"]
            result = await client.call_tool("echo", {"text": "to the SDK over http"})
            assert result.content == [TextContent(text="to the SDK over http")]


@pytest.mark.req("2024-11-05:basic/transports#12")
async def test_our_client_falls_back_to_the_sdk_legacy_sse_server() -> None:
    """The 2024-11-05 HTTP+SSE transport (spec: Backwards Compatibility), opt-in."""
    async with sdk_server("--sse") as port:
        url = f"http://127.0.0.1:{port}/sse"
        with trio.fail_after(20):
            async with open_http_client(url, legacy_fallback=True, era="legacy") as client:
                channel = client.session.channel
                assert channel.legacy_endpoint.startswith(f"http://127.0.0.1:{port}/messages/?session_id=")  # type: ignore[attr-defined]
                assert client.server_info.name == "sdk-echo"
                await client.ping()
                assert sorted(t.name for t in await client.list_all_tools()) == ["add", "echo"]
                result = await client.call_tool("echo", {"text": "over the old transport"})
                assert result.content == [TextContent(text="over the old transport")]
            # without the opt-in, the refused initialize is the end
            with pytest.raises(HTTPTransportError, match="HTTP 405") as refused:
                async with open_http_client(url, era="legacy"):
                    pass
            assert refused.value.status == 405


async def test_connect_falls_back_to_the_legacy_sse_transport_by_itself() -> None:
    """mcp_ref.connect(url) tries Streamable HTTP, then HTTP+SSE, as the SDKs' clients do."""
    from mcp_ref import connect

    async with sdk_server("--sse") as port:
        with trio.fail_after(20):
            async with connect(f"http://127.0.0.1:{port}/sse") as client:
                assert client.session.channel.legacy_endpoint is not None  # type: ignore[attr-defined]
                result = await client.call_tool("echo", {"text": "through connect"})
                assert result.content == [TextContent(text="through connect")]
