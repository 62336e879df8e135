"""One adapter per implementation, each through its normal public API.

An adapter opens a client connected to a server with the same tools:

* ``echo {text}`` -> the text;
* ``progress {n}`` -> reports progress 1..n, then "done";
* ``hang {}`` -> waits until cancelled (records when the cancellation arrived);
* ``block {}`` -> counts itself in and waits for the workload to release it;
* ``echo_task {text}`` -> echo that may run as a task (W8).

``memory(probe, buffer=...)`` serves in-process over the implementation's
in-memory transport (``buffer``: messages each direction holds before a send
waits; None is the implementation's default); ``stdio()`` spawns the server
script of bench/servers; ``http(json=...)`` spawns its Streamable HTTP server
(SSE answers, or JSON ones) and connects its client; ``modern=True`` (W11,
W11H) has the client speak 2026-07-28 to the same server script (no
initialize, no session: every request stands alone); ``http_server(...)``
spawns the server alone and yields ``(url, pid)`` (W10 drives it with
bench/load.py). The yielded :class:`BenchClient` hides only the spelling of
each API, never a step of its pipeline.
"""

import os
import socket
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol

import trio

from .common import ECHO_SCHEMA, EMPTY_SCHEMA, PROGRESS_SCHEMA, PYTHON, Probe, Skip, server_script

OnProgress = Callable[[float], Awaitable[None]]
#: the revision of W11 and W11H, pinned in every client (none probes with server/discover)
MODERN_VERSION = "2026-07-28"
#: a server spawned by ``http_server()``: its URL and process id
Served = tuple[str, int]


class BenchClient(Protocol):
    async def echo(self, text: str) -> str: ...
    async def progress(self, n: int, on_progress: OnProgress) -> None: ...
    async def hang(self) -> None: ...
    async def block(self) -> None: ...
    async def task_echo(self, text: str) -> str: ...
    async def plain_task_tool(self, text: str) -> str: ...


class Adapter(Protocol):
    name: str
    #: what `python -c` imports to measure this implementation's import time (W7)
    import_statement: str

    def memory(
        self, probe: Probe, *, concurrency: int | None = None, tasks: bool = False, buffer: int | None = None
    ) -> Any: ...
    def stdio(self, *, modern: bool = False) -> Any: ...
    def http(self, *, json: bool = False, modern: bool = False) -> Any: ...
    def http_server(self, *, json: bool = False, max_sessions: int | None = None) -> Any: ...


# -- mcp_ref ---------------------------------------------------------------------------


class RefClient:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def echo(self, text: str) -> str:
        result = await self.client.call_tool("echo", {"text": text})
        return str(result.content[0].text)

    async def progress(self, n: int, on_progress: OnProgress) -> None:
        async def callback(progress: float, total: float | None, message: str | None) -> None:
            await on_progress(progress)

        await self.client.call_tool("progress", {"n": n}, progress=callback)

    async def hang(self) -> None:
        await self.client.call_tool("hang", {})

    async def block(self) -> None:
        await self.client.call_tool("block", {})

    async def task_echo(self, text: str) -> str:
        handle = await self.client.call_tool_as_task("echo_task", {"text": text})
        await handle.get()  # one poll
        result = await handle.result()
        return str(result.content[0].text)

    async def plain_task_tool(self, text: str) -> str:
        result = await self.client.call_tool("echo_task", {"text": text})
        return str(result.content[0].text)


class RefAdapter:
    name = "mcp_ref"
    import_statement = "import mcp_ref"

    def server(self, probe: Probe, *, concurrency: int | None = None, task_nursery: Any = None) -> Any:
        import mcp_ref

        config = mcp_ref.SessionConfig(max_concurrent_requests=concurrency) if concurrency else None
        server = mcp_ref.Server("bench", "1.0", config=config)

        @server.tool(description="Return the text unchanged.", input_schema=ECHO_SCHEMA)
        async def echo(ctx: Any, arguments: dict[str, Any]) -> str:
            return str(arguments["text"])

        @server.tool(description="Report progress n times.", input_schema=PROGRESS_SCHEMA)
        async def progress(ctx: Any, arguments: dict[str, Any]) -> str:
            n = arguments["n"]
            for i in range(1, n + 1):
                await ctx.progress(i, n)
            return "done"

        @server.tool(description="Wait until cancelled.", input_schema=EMPTY_SCHEMA)
        async def hang(ctx: Any, arguments: dict[str, Any]) -> str:
            await probe.hang()
            return "not reached"

        @server.tool(description="Wait until released.", input_schema=EMPTY_SCHEMA)
        async def block(ctx: Any, arguments: dict[str, Any]) -> str:
            await probe.block()
            return "ok"

        if task_nursery is not None:
            from mcp_ref.session.tasks import TaskConfig

            # rate_limit=None: W8 measures per-call latency, not the task rate limiter
            config = TaskConfig(poll_interval_ms=100, status_notifications=False, rate_limit=None)
            server.enable_tasks(task_nursery, config=config)

            @server.tool(description="Echo, as a task if asked.", input_schema=ECHO_SCHEMA, task_support="optional")
            async def echo_task(ctx: Any, arguments: dict[str, Any]) -> str:
                return str(arguments["text"])

        return server

    @asynccontextmanager
    async def memory(
        self, probe: Probe, *, concurrency: int | None = None, tasks: bool = False, buffer: int | None = None
    ) -> AsyncIterator[RefClient]:
        from mcp_ref.testing import memory_session_pair

        async with trio.open_nursery() as task_nursery:
            server = self.server(probe, concurrency=concurrency, task_nursery=task_nursery if tasks else None)
            if buffer is None:
                async with memory_session_pair(server, era="legacy") as client:
                    yield RefClient(client)
            else:
                # what memory_session_pair does, on a channel pair of the given buffer
                from mcp_ref import memory_channel_pair, open_session

                client_end, server_end = memory_channel_pair(buffer)
                async with trio.open_nursery() as nursery:
                    await nursery.start(server.serve, server_end)
                    async with open_session(client_end, era="legacy") as client:
                        yield RefClient(client)
                    nursery.cancel_scope.cancel()
            task_nursery.cancel_scope.cancel()

    @asynccontextmanager
    async def stdio(self, *, modern: bool = False) -> AsyncIterator[RefClient]:
        import mcp_ref

        async with mcp_ref.open_stdio_client(PYTHON, [server_script("ref_server")], **_ref_revision(modern)) as client:
            yield RefClient(client)

    @asynccontextmanager
    async def http(self, *, json: bool = False, modern: bool = False) -> AsyncIterator[RefClient]:
        from mcp_ref.session.http import open_http_client

        async with self.http_server(json=json) as (url, pid):
            async with open_http_client(url, **_ref_revision(modern)) as client:
                yield _at(RefClient(client), url, pid)

    @asynccontextmanager
    async def http_server(self, *, json: bool = False, max_sessions: int | None = None) -> AsyncIterator[Served]:
        argv = [PYTHON, server_script("ref_server"), "--http"] + (["--json"] if json else [])
        if max_sessions is not None:
            # (the default, 100, reclaims idle sessions past it: W10 keeps more)
            argv += ["--max-sessions", str(max_sessions)]
        async with _spawned(argv) as served:
            yield served


def _ref_revision(modern: bool) -> dict[str, str]:
    """2026-07-28 pinned (no ``server/discover`` probe: the SDK's and the floor's clients
    do not probe either), or the 2025 era's initialize."""
    if not modern:
        return {"era": "legacy"}
    # (the server must answer its server/discover before the client goes on; under callgrind
    # that takes as long as a spawn: bench.icount's BENCH_SPAWN_TIMEOUT)
    return {"protocol_version": MODERN_VERSION, "discover_timeout": _spawn_timeout()}


def _spawn_timeout() -> float:
    return float(os.environ.get("BENCH_SPAWN_TIMEOUT", "30"))


# -- the official SDK ----------------------------------------------------------------------


class SdkClient:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def echo(self, text: str) -> str:
        result = await self.client.call_tool("echo", {"text": text})
        return str(result.content[0].text)

    async def progress(self, n: int, on_progress: OnProgress) -> None:
        async def callback(progress: float, total: float | None, message: str | None) -> None:
            await on_progress(progress)

        await self.client.call_tool("progress", {"n": n}, progress_callback=callback)

    async def hang(self) -> None:
        await self.client.call_tool("hang", {})

    async def block(self) -> None:
        await self.client.call_tool("block", {})

    async def task_echo(self, text: str) -> str:
        raise Skip("mcp 2.3.0 has no client API for 2025-11-25 tasks")

    async def plain_task_tool(self, text: str) -> str:
        raise Skip("mcp 2.3.0 has no client API for 2025-11-25 tasks")


class SdkAdapter:
    """mcp 2.3.0: ``mcp.Client`` in ``mode="legacy"`` (the 2025-11-25 initialize handshake,
    JSON-RPC dispatcher), or pinned to ``mode="2026-07-28"`` (W11, W11H), and ``MCPServer``,
    all on anyio's trio backend."""

    name = "sdk"
    import_statement = "import mcp"

    def server(self, probe: Probe) -> Any:
        from mcp.server.mcpserver import Context, MCPServer

        app = MCPServer("bench", log_level="WARNING")

        @app.tool(description="Return the text unchanged.", structured_output=False)
        async def echo(text: str) -> str:
            return text

        @app.tool(description="Report progress n times.", structured_output=False)
        async def progress(n: int, ctx: Context) -> str:
            for i in range(1, n + 1):
                await ctx.report_progress(i, n)
            return "done"

        @app.tool(description="Wait until cancelled.", structured_output=False)
        async def hang() -> str:
            await probe.hang()
            return "not reached"

        @app.tool(description="Wait until released.", structured_output=False)
        async def block() -> str:
            await probe.block()
            return "ok"

        return app

    @asynccontextmanager
    async def memory(
        self, probe: Probe, *, concurrency: int | None = None, tasks: bool = False, buffer: int | None = None
    ) -> AsyncIterator[SdkClient]:
        # (buffer: mcp.Client's in-memory streams always hold one message, whatever is asked)
        if tasks:
            raise Skip("mcp 2.3.0 does not implement 2025-11-25 tasks")
        from mcp import Client

        async with Client(self.server(probe), mode="legacy") as client:
            yield SdkClient(client)

    @asynccontextmanager
    async def stdio(self, *, modern: bool = False) -> AsyncIterator[SdkClient]:
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=PYTHON, args=[server_script("sdk_server")])
        async with Client(params, mode=MODERN_VERSION if modern else "legacy") as client:
            yield SdkClient(client)

    @asynccontextmanager
    async def http(self, *, json: bool = False, modern: bool = False) -> AsyncIterator[SdkClient]:
        from mcp import Client

        async with self.http_server(json=json) as (url, pid):
            async with Client(url, mode=MODERN_VERSION if modern else "legacy") as client:
                yield _at(SdkClient(client), url, pid)

    @asynccontextmanager
    async def http_server(self, *, json: bool = False, max_sessions: int | None = None) -> AsyncIterator[Served]:
        # (max_sessions: the SDK's default, 10,000, is above what W10 opens)
        try:
            import uvicorn  # noqa: F401
        except ImportError as e:
            raise Skip(f"the SDK's HTTP server needs uvicorn ({e})") from e
        port = _free_port()
        argv = [PYTHON, server_script("sdk_server"), "--http", str(port)] + (["--json"] if json else [])
        async with _spawned(argv, port=port) as served:
            yield served


# -- the raw floor ----------------------------------------------------------------------------


class FloorBench:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def echo(self, text: str) -> str:
        result = await self.client.call_tool("echo", {"text": text})
        return str(result["content"][0]["text"])

    async def progress(self, n: int, on_progress: OnProgress) -> None:
        async def callback(progress: float, total: float | None) -> None:
            await on_progress(progress)

        await self.client.call_tool("progress", {"n": n}, callback)

    async def hang(self) -> None:
        await self.client.call_tool("hang", {})

    async def block(self) -> None:
        await self.client.call_tool("block", {})

    async def task_echo(self, text: str) -> str:
        created = await self.client.request(
            "tools/call", {"name": "echo_task", "arguments": {"text": text}, "task": {"ttl": 60000}}
        )
        task_id = created["task"]["taskId"]
        await self.client.request("tasks/get", {"taskId": task_id})  # one poll
        result = await self.client.request("tasks/result", {"taskId": task_id})
        return str(result["content"][0]["text"])

    async def plain_task_tool(self, text: str) -> str:
        result = await self.client.call_tool("echo_task", {"text": text})
        return str(result["content"][0]["text"])


class FloorAdapter:
    name = "floor"
    import_statement = "import trio"

    def tools(self, probe: Probe) -> dict[str, Any]:
        from .floor import Ctx, echo_tool

        async def progress(ctx: Ctx, arguments: dict[str, Any]) -> str:
            n = arguments["n"]
            for i in range(1, n + 1):
                await ctx.progress(i, n)
            return "done"

        async def hang(ctx: Ctx, arguments: dict[str, Any]) -> str:
            await probe.hang()
            return "not reached"

        async def block(ctx: Ctx, arguments: dict[str, Any]) -> str:
            await probe.block()
            return "ok"

        return {"echo": echo_tool, "echo_task": echo_tool, "progress": progress, "hang": hang, "block": block}

    @asynccontextmanager
    async def memory(
        self, probe: Probe, *, concurrency: int | None = None, tasks: bool = False, buffer: int | None = None
    ) -> AsyncIterator[FloorBench]:
        from .floor import FloorServer, floor_client, memory_pair

        client_end, server_end = memory_pair() if buffer is None else memory_pair(buffer)
        async with trio.open_nursery() as nursery:
            server = FloorServer(server_end, self.tools(probe), task_nursery=nursery if tasks else None)
            nursery.start_soon(server.serve)
            async with floor_client(client_end) as client:
                yield FloorBench(client)
            nursery.cancel_scope.cancel()

    @asynccontextmanager
    async def stdio(self, *, modern: bool = False) -> AsyncIterator[FloorBench]:
        from .floor import LineChannel, floor_client

        process = await trio.lowlevel.open_process(
            [PYTHON, server_script("floor_server")], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert process.stdin is not None and process.stdout is not None
        channel = LineChannel(process.stdin, process.stdout)
        try:
            async with floor_client(channel, modern) as client:
                yield FloorBench(client)
        finally:
            with trio.CancelScope(shield=True):
                await process.stdin.aclose()
                with trio.move_on_after(5):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()

    @asynccontextmanager
    async def http(self, *, json: bool = False, modern: bool = False) -> AsyncIterator[FloorBench]:
        from .floor import http_floor_client

        async with self.http_server(json=json) as (url, pid):
            async with http_floor_client(url, modern) as client:
                yield _at(FloorBench(client), url, pid)

    @asynccontextmanager
    async def http_server(self, *, json: bool = False, max_sessions: int | None = None) -> AsyncIterator[Served]:
        argv = [PYTHON, server_script("floor_server"), "--http"] + (["--json"] if json else [])
        async with _spawned(argv) as served:
            yield served


ADAPTERS: dict[str, Adapter] = {a.name: a for a in (RefAdapter(), SdkAdapter(), FloorAdapter())}


# -- helpers for HTTP servers in subprocesses -------------------------------------------------


def _at(client: Any, url: str, pid: int) -> Any:
    """The client, knowing its server's URL and process (W9 reads its CPU time; the
    harness test talks to the server directly too)."""
    client.url, client.pid = url, pid
    return client


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def _spawned(argv: list[str], *, port: int | None = None) -> AsyncIterator[Served]:
    """Run an HTTP server script; yield its URL (printed on its stdout, or on ``port``) and pid
    (within ``$BENCH_SPAWN_TIMEOUT`` seconds, 30 by default: bench.icount allows more)."""
    process = await trio.lowlevel.open_process(
        argv, stdout=subprocess.PIPE if port is None else subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        with trio.fail_after(_spawn_timeout()):
            if port is None:
                assert process.stdout is not None
                data = b""
                while not data.endswith(b"\n"):
                    chunk = await process.stdout.receive_some(4096)
                    if not chunk:
                        raise RuntimeError(f"{argv} exited before printing its URL")
                    data += chunk
                url = data.decode().strip()
            else:
                url = f"http://127.0.0.1:{port}/mcp"
                while True:
                    try:
                        stream = await trio.open_tcp_stream("127.0.0.1", port)
                    except OSError:
                        await trio.sleep(0.05)
                        continue
                    await stream.aclose()
                    break
        yield url, process.pid
    finally:
        with trio.CancelScope(shield=True):
            process.terminate()
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
