"""Server.run_http as a user runs it: a real process, real signals, a real port."""

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from mcp_ref import open_http_client
from mcp_ref.schema import TextContent

from ..conftest import ROOT

APP = """
import sys
from mcp_ref import RequestContext, Server

server = Server("http-app")

@server.tool()
async def hello(ctx: RequestContext, *, name: str) -> str:
    return f"hello {name}"

server.run_http(port=int(sys.argv[1]))
print("returned", file=sys.stderr)
"""


async def start(tmp_path: Path, port: int) -> trio.Process:
    (tmp_path / "app.py").write_text(APP)
    return await trio.lowlevel.open_process(
        [sys.executable, str(tmp_path / "app.py"), str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
    )


async def read_stderr(proc: trio.Process, until: bytes) -> bytes:
    """stderr up to ``until`` (or its end)."""
    assert proc.stderr is not None
    seen = b""
    while until not in seen and (chunk := await proc.stderr.receive_some()):
        seen += chunk
    return seen


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
async def test_it_serves_and_a_signal_stops_it_gracefully(tmp_path: Path, stop: signal.Signals) -> None:
    # real process and time: bounded by fail_after, no sleeps
    proc = await start(tmp_path, 0)
    try:
        with trio.fail_after(60):
            banner = await read_stderr(proc, b"(Ctrl-C stops it)\n")
            url = banner.decode().split("MCP endpoint (Streamable HTTP): ")[1].split()[0]
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
            async with open_http_client(url) as client:
                result = await client.call_tool("hello", {"name": "trio"})
                assert result.content == [TextContent(text="hello trio")]
            proc.send_signal(stop)
            rest = await read_stderr(proc, b"returned\n")
            assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert rest == b"shutting down\nreturned\n"


async def test_a_port_in_use_is_one_line_and_a_failure_status(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = await start(tmp_path, port)
        try:
            with trio.fail_after(60):
                err = await read_stderr(proc, b"\x00")
                assert await proc.wait() == 1
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert err.decode() == f"cannot serve on 127.0.0.1 port {port}: Address already in use\n"
