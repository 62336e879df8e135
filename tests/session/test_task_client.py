"""The requestor's view of a task: status notifications reach on_task_status, and a
cancelled task's result raises TaskCancelled, not TaskFailed."""

from typing import Any

import pytest
import trio

from mcp_ref import RequestContext, Server, TaskCancelled, TaskFailed, memory_session_pair
from mcp_ref.errors import ErrorCode, MCPError
from mcp_ref.schema import CancelTaskRequestParams


def make_server(nursery: trio.Nursery) -> Server:
    server = Server("tasks")
    server.enable_tasks(nursery)

    @server.tool(task_support="optional")
    async def slow(ctx: RequestContext) -> str:
        await trio.sleep(3600)
        return "done"

    @server.tool(task_support="optional")
    async def broken(ctx: RequestContext) -> str:
        # (a JSON-RPC error fails a task; an exception of the tool is an isError result instead)
        raise MCPError(ErrorCode.INTERNAL_ERROR, "Internal error")

    @server.tool(task_support="optional")
    async def crash(ctx: RequestContext) -> str:
        raise RuntimeError("bug")

    return server


async def test_a_cancelled_task_raises_task_cancelled(autojump_clock: Any) -> None:
    statuses: list[tuple[str, str]] = []

    async def on_task_status(params: Any) -> None:
        statuses.append((params.task_id, params.status))

    async with trio.open_nursery() as nursery:
        async with memory_session_pair(make_server(nursery), on_task_status=on_task_status, era="legacy") as client:
            await client.list_tools()
            handle = await client.call_tool_as_task("slow")
            await trio.sleep(1)
            await handle.cancel()
            with pytest.raises(TaskCancelled) as caught:
                await handle.result()
            assert caught.value.task_id == handle.task_id
            assert not isinstance(caught.value, TaskFailed)
            # a handle that never heard of the cancellation asks tasks/get
            other = await client.call_tool_as_task("slow")
            await client.request("tasks/cancel", CancelTaskRequestParams(task_id=other.task_id))
            with pytest.raises(TaskCancelled):
                await other.result()
            await trio.sleep(1)  # the notifications are handled in arrival order, by then
        nursery.cancel_scope.cancel()
    assert (handle.task_id, "cancelled") in statuses and (other.task_id, "cancelled") in statuses


async def test_a_failed_task_still_raises_task_failed(autojump_clock: Any) -> None:
    async with trio.open_nursery() as nursery:
        async with memory_session_pair(make_server(nursery), era="legacy") as client:
            await client.list_tools()
            handle = await client.call_tool_as_task("broken")
            with pytest.raises(TaskFailed) as caught:
                await handle.wait()
            assert caught.value.code == -32603
            # a tool that raises: the task ends with its isError result (status failed, 2025-11-25)
            result = await (await client.call_tool_as_task("crash")).wait()
            assert result.is_error is True and result.text == "Internal error in tool 'crash'"
        nursery.cancel_scope.cancel()
