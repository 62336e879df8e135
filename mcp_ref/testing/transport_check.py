"""One behavioural check for every transport (memory, stdio, HTTP ...).

Serve :func:`check_server` over the transport under test, connect a client,
and ``await check_transport(client)``: it exercises what any transport must
carry faithfully -- ping, unicode and large payloads, many concurrent requests
correlated by id, progress in order before the result, cancellation, and
tool errors -- and raises AssertionError on the first difference.

``python -m mcp_ref.testing.transport_check`` serves :func:`check_server` on stdio.
"""

import math
from typing import Any

import trio

from ..errors import MCPError
from ..schema.content import TextContent
from ..server.tools import ToolError
from ..session.client import ClientSession
from ..session.core import RequestContext
from ..session.server import Server

__all__ = ["check_server", "check_transport", "LARGE_PAYLOAD_SIZE"]

LARGE_PAYLOAD_SIZE = 1024 * 1024


def check_server() -> Server:
    server = Server("mcp_ref-transport-check", "1.0")

    @server.tool(description="Return the text argument unchanged.")
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments["text"])

    @server.tool(description="Report `steps` progress notifications, then return 'done'.")
    async def count(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        steps = int(arguments["steps"])
        for i in range(1, steps + 1):
            await ctx.progress(i, steps, f"{i}/{steps}")
        return "done"

    @server.tool(description="Wait until cancelled; then the next call to `was_cancelled` says so.")
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await trio.sleep_forever()
        finally:
            state["cancelled"] += 1
        return "unreachable"

    @server.tool(description="How many `hang` calls have been cancelled so far.")
    async def was_cancelled(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(state["cancelled"])

    @server.tool(description="Fail with a tool execution error.")
    async def fail(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise ToolError("failed on purpose")

    state = {"cancelled": 0}
    return server


def _text(result: Any) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent), block
    return block.text


async def check_transport(
    client: ClientSession, *, large: int = LARGE_PAYLOAD_SIZE, progress_before_result: bool = True
) -> None:
    """Run every check against a client connected to :func:`check_server`.

    ``progress_before_result=False`` for transports that cannot keep a request's
    progress ahead of its result (Streamable HTTP answering with plain JSON sends
    progress on the separate GET stream).
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

        before = int(_text(await client.call_tool("was_cancelled")))
        with trio.move_on_after(0.2):
            await client.call_tool("hang", timeout=math.inf)
        # the cancellation was delivered and acted on
        for _ in range(100):
            if int(_text(await client.call_tool("was_cancelled"))) == before + 1:
                break
            await trio.sleep(0.01)
        else:
            raise AssertionError("the server never saw the cancellation")

        result = await client.call_tool("fail")
        assert result.is_error is True and _text(result) == "failed on purpose"
        try:
            await client.call_tool("no-such-tool")
        except MCPError as e:
            assert e.code == -32602
        else:
            raise AssertionError("an unknown tool must be a protocol error")
        await client.ping()


def main() -> None:
    check_server().run_stdio()


if __name__ == "__main__":
    main()
