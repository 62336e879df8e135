"""One behavioural check for every transport (memory, stdio, HTTP ...).

Serve :func:`check_server` over the transport under test, connect a client,
and ``await check_transport(client)``: it exercises what any transport must
carry faithfully -- ping, unicode and large payloads, many concurrent requests
correlated by id, progress in order before the result, cancellation, tool
errors, a parse error for unreadable input and (optionally) end of stream --
and raises AssertionError on the first difference.

``python -m mcp_ref.testing.transport_check`` serves :func:`check_server` on stdio.
"""

import math
from functools import partial
from typing import Any

import trio

from ..errors import ConnectionClosed, MCPError
from ..schema.content import TextContent
from ..server.tools import ToolError
from ..session.client import ClientSession
from ..session.core import RequestContext, Session
from ..session.server import Server

__all__ = ["check_server", "check_transport", "LARGE_PAYLOAD_SIZE"]

LARGE_PAYLOAD_SIZE = 1024 * 1024


def check_server() -> Server:
    server = Server("mcp_ref-transport-check", "1.0")
    state = {"started": 0, "cancelled": 0}
    changed = trio.Event()  # set (and replaced) when a hang call starts or ends

    @server.tool(description="Return the text argument unchanged.")
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments["text"])

    @server.tool(description="Report `steps` progress notifications, then return 'done'.")
    async def count(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        steps = int(arguments["steps"])
        for i in range(1, steps + 1):
            await ctx.progress(i, steps, f"{i}/{steps}")
        return "done"

    def count_up(what: str) -> None:
        nonlocal changed
        state[what] += 1
        changed.set()
        changed = trio.Event()

    @server.tool(description="Report progress 1 (when asked for progress), then wait until cancelled.")
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        count_up("started")
        try:
            await ctx.progress(1)  # tells the caller it runs
            await trio.sleep_forever()
        finally:
            count_up("cancelled")
        return "unreachable"

    @server.tool(description="How many `hang` calls have been cancelled so far.")
    async def was_cancelled(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(state["cancelled"])

    @server.tool(description="Wait (at most 10 s) until `count` hang calls have `what` ('started' or 'cancelled').")
    async def wait_for(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        what = str(arguments["what"])
        with trio.move_on_after(10):
            while state[what] < int(arguments["count"]):
                await changed.wait()
        return str(state[what])

    @server.tool(description="Close this session from the server side (the client sees end of stream).")
    async def close(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.session.aclose("closed by the transport check")
        await trio.sleep_forever()  # cancelled: the session cancels its handlers as it closes
        return "unreachable"

    @server.tool(description="Fail with a tool execution error.")
    async def fail(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise ToolError("failed on purpose")

    return server


def _text(result: Any) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent), block
    return block.text


async def check_transport(
    client: ClientSession,
    *,
    large: int = LARGE_PAYLOAD_SIZE,
    progress_before_result: bool = True,
    invalid_json: bool = False,
    eof: bool = False,
) -> None:
    """Run every check against a client connected to :func:`check_server`.

    ``progress_before_result=False`` for transports that cannot keep a request's
    progress ahead of its result (Streamable HTTP answering with plain JSON sends
    progress on the separate GET stream). ``invalid_json=True`` also writes an
    unreadable message (for transports that carry any bytes: the HTTP client
    refuses to send it);
    ``eof=True`` ends with the server closing the session (the client is
    unusable afterwards), checking that a pending request fails with
    ConnectionClosed.
    """
    with trio.fail_after(60):
        await client.ping()
        text = 'héllo \u2028 wörld \U0001f600 "quoted" \\ back\nslash'
        assert _text(await client.call_tool("echo", {"text": text})) == text
        big = "x" * large
        assert _text(await client.call_tool("echo", {"text": big})) == big

        results: dict[int, str] = {}

        async def one(i: int) -> None:
            results[i] = _text(await client.call_tool("echo", {"text": f"call {i}"}))

        async with trio.open_nursery() as nursery:
            for i in range(50):
                nursery.start_soon(one, i)
        assert results == {i: f"call {i}" for i in range(50)}

        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        assert _text(await client.call_tool("count", {"steps": 20}, progress=on_progress)) == "done"
        if progress_before_result:
            assert seen == list(range(1, 21))
        else:
            assert seen == sorted(seen) and set(seen) <= set(range(1, 21))

        # cancellation: the caller gives up once the handler runs; the server must
        # see the cancellation (it waits for it, boundedly -- no polling)
        before = int(_text(await client.call_tool("was_cancelled")))
        started_before = int(_text(await client.call_tool("wait_for", {"what": "started", "count": 0})))
        started = trio.Event()

        async def on_started(progress: float, total: float | None, message: str | None) -> None:
            started.set()

        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(partial(client.call_tool, "hang", progress=on_started, timeout=math.inf))
                if progress_before_result:
                    with trio.fail_after(10):
                        await started.wait()
                else:
                    # no progress while the call runs on this transport: the server says when it started
                    ran = await client.call_tool("wait_for", {"what": "started", "count": started_before + 1})
                    assert int(_text(ran)) == started_before + 1, "the hang call never started"
                scope.cancel()
        after = await client.call_tool("wait_for", {"what": "cancelled", "count": before + 1})
        assert int(_text(after)) == before + 1, "the server never saw the cancellation"

        result = await client.call_tool("fail")
        assert result.is_error is True and _text(result) == "failed on purpose"
        try:
            await client.call_tool("no-such-tool")
        except MCPError as e:
            assert e.code == -32602
        else:
            raise AssertionError("an unknown tool must be a protocol error")
        await client.ping()

        if invalid_json:
            # unreadable input: -32700 without an id, and the session goes on
            session = client.session
            assert isinstance(session, Session), "the transport check drives a 2025 session (era='legacy')"
            faults = session.peer_faults
            faults.clear()
            await session.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": ')
            for _ in range(10):  # its reply and the pings' race; each ping is a full round trip
                await client.ping()
                if faults:
                    break
            codes = [getattr(getattr(f, "error", None), "code", None) for f in faults]
            assert codes == [-32700], f"invalid JSON must get one -32700 error, got {list(faults)!r}"
            assert _text(await client.call_tool("echo", {"text": "after"})) == "after"

        if eof:
            # the server ends the session: a request still waiting fails with ConnectionClosed
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(partial(client.call_tool, "hang", timeout=math.inf))
                    await client.call_tool("close", timeout=math.inf)
            except* ConnectionClosed:
                pass
            else:
                raise AssertionError("pending requests must fail with ConnectionClosed at end of stream")


def main() -> None:
    check_server().run_stdio()


if __name__ == "__main__":
    main()
