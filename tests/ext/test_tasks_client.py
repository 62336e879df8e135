"""The tasks extension, client side: results polled for, handles kept, input answered once."""

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mcp_ref import MCPError, RequestContext, Server, TaskCancelled
from mcp_ref.basic.lifecycle import Role
from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.events import InvalidResponse, ResponseReceived
from mcp_ref.exchange import StatelessEngine
from mcp_ref.ext.tasks import EXTENSION_ID, ExtTaskConfig, TaskCancelledError, TaskExtension, TaskHandle, call_tool
from mcp_ref.schema import ElicitResult
from mcp_ref.schema.lifecycle import ClientCapabilities
from mcp_ref.schema.tools import CallToolResult
from mcp_ref.session.client import ClientSession, open_session
from mcp_ref.session.modern_client import EraCache
from mcp_ref.session.task_store import InMemoryTaskStore


def make_server(nursery: trio.Nursery, store: Any, polls: list[float]) -> Server:
    server = Server("ext-client-test", "1.0", state_key=b"k" * 32)

    @server.tool(description="five seconds of work", task_support="optional")
    async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await trio.sleep(5)
        return "slow done"

    @server.tool(description="asks once", task_support="optional")
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit_form("name?", {"name": {"type": "string"}})
        await trio.sleep(3)  # polled several times while it works: the question is not asked again
        return f"hello {answer.content['name']}"

    @server.tool(description="fails", task_support="required")
    async def broken(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise MCPError(-32602, "Invalid params: nope")

    @server.tool(description="waits forever", task_support="optional")
    async def forever(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    ext = TaskExtension(nursery, store=store, config=ExtTaskConfig(poll_interval_ms=1500)).install(server)
    get = ext.get

    async def counted_get(ctx: RequestContext, params: Any) -> dict[str, Any]:
        polls.append(trio.current_time())
        if len(polls) > 60:
            raise MCPError(-32603, "polled far too often")  # (a client that stopped pausing)
        return await get(ctx, params)

    ext.get = counted_get  # type: ignore[method-assign]
    server._modern = None
    return server


@asynccontextmanager
async def connected(
    server: Server, nursery: trio.Nursery, asked: list[str] | None = None
) -> AsyncIterator[ClientSession]:
    client_end, server_end = memory_channel_pair()
    await nursery.start(server.serve, server_end)

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        if asked is not None:
            asked.append(params.message)
        return ElicitResult(action="accept", content={"name": "Ada"})

    async with open_session(
        client_end, tasks_extension=True, elicitation=answer, era_cache=EraCache(), validate_tool_results=False
    ) as client:
        yield client


@pytest.mark.req("ext-tasks:tasks#3", "ext-tasks:tasks#13", "ext-tasks:tasks#16", "ext-tasks:schema#2")
async def test_call_tool_polls_a_task_to_its_result_at_the_servers_interval(autojump_clock: Any) -> None:
    polls: list[float] = []
    async with trio.open_nursery() as nursery:
        server = make_server(nursery, InMemoryTaskStore(), polls)
        async with connected(server, nursery) as client:
            start = trio.current_time()
            result = await client.call_tool("slow", {})
            took = trio.current_time() - start
        nursery.cancel_scope.cancel()
    assert result.content[0].text == "slow done"  # type: ignore[union-attr]
    assert 5 <= took <= 6.6
    gaps = [b - a for a, b in itertools.pairwise(polls)]
    assert gaps and all(gap >= 1.5 for gap in gaps)  # never faster than the suggested 1500 ms
    assert len(polls) <= 5


@pytest.mark.req(
    "ext-tasks:tasks#29",
    "ext-tasks:tasks#30",
    "ext-tasks:tasks#31",
    "ext-tasks:tasks#32",
    "ext-tasks:tasks#38",
    "ext-tasks:tasks#67",
    "ext-tasks:tasks#3",
)
async def test_input_requests_are_answered_by_the_callbacks_once(autojump_clock: Any) -> None:
    polls: list[float] = []
    asked: list[str] = []
    async with trio.open_nursery() as nursery:
        server = make_server(nursery, InMemoryTaskStore(), polls)
        async with connected(server, nursery, asked) as client:
            outcome = await call_tool(client, "ask", {})
            assert isinstance(outcome, TaskHandle)
            # the question is seen on several polls before and while it is answered
            task = await outcome.get()
            while task["status"] != "input_required":
                await trio.sleep(0.5)
                task = await outcome.get()
            assert await outcome.answer(task) is True
            assert await outcome.answer(task) is False  # the same key: not presented again
            result = await outcome.result()
            # call_tool answers the input requests of the task it waits for by itself
            again = await client.call_tool("ask", {})
        nursery.cancel_scope.cancel()
    assert result.content[0].text == "hello Ada"  # type: ignore[union-attr]
    assert again.content[0].text == "hello Ada"  # type: ignore[union-attr]
    assert asked == ["name?", "name?"]


@pytest.mark.req("ext-tasks:tasks#17", "ext-tasks:tasks#14", "ext-tasks:schema#3")
async def test_a_handle_is_resumed_from_its_id_by_another_client(autojump_clock: Any) -> None:
    polls: list[float] = []
    store = InMemoryTaskStore()
    async with trio.open_nursery() as nursery:
        server = make_server(nursery, store, polls)
        async with connected(server, nursery) as first:
            outcome = await call_tool(first, "slow", {})
            assert isinstance(outcome, TaskHandle) and outcome.poll_interval_ms == 1500
            saved = outcome.task_id
        # a new client (as another process would open) knows only the id
        async with connected(server, nursery) as second:
            handle = TaskHandle(second, saved)
            assert handle.poll_interval_ms is None
            task = await handle.get()
            assert task["status"] == "working" and handle.poll_interval_ms == 1500
            result = await handle.result()
        nursery.cancel_scope.cancel()
    assert isinstance(result, CallToolResult) and result.content[0].text == "slow done"  # type: ignore[union-attr]


@pytest.mark.req("ext-tasks:tasks#46", "ext-tasks:tasks#42")
async def test_failed_and_cancelled_tasks_end_the_wait(autojump_clock: Any) -> None:
    polls: list[float] = []
    async with trio.open_nursery() as nursery:
        server = make_server(nursery, InMemoryTaskStore(), polls)
        async with connected(server, nursery) as client:
            with trio.fail_after(120):
                with pytest.raises(MCPError) as failed:
                    await client.call_tool("broken", {})
                assert failed.value.code == -32602 and "nope" in failed.value.message
                outcome = await call_tool(client, "forever", {})
                assert isinstance(outcome, TaskHandle)
                await outcome.cancel()
                # (caught as the 2025 core's TaskCancelled too: one except for the cancellations of both eras)
                with pytest.raises(TaskCancelled) as cancelled:
                    await outcome.result()
                assert isinstance(cancelled.value, TaskCancelledError)
                assert cancelled.value.task_id == outcome.task_id
                assert cancelled.value.status_message == "The task was cancelled by request."
        nursery.cancel_scope.cancel()


@pytest.mark.req("ext-tasks:tasks#4")
def test_a_task_result_for_a_request_a_task_cannot_answer_is_invalid() -> None:
    caps = ClientCapabilities(extra={"extensions": {EXTENSION_ID: {}}})
    for declared, method, params, ok in (
        (caps, "tools/call", {"name": "x"}, True),
        (caps, "prompts/get", {"name": "x"}, False),
        (ClientCapabilities(), "tools/call", {"name": "x"}, False),
    ):
        engine = StatelessEngine(Role.CLIENT, capabilities=declared)
        rid, _ = engine.send_request(method, params)
        answer = {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "task", "taskId": "t", "status": "working"}}
        (event,) = engine.receive_message(json.dumps(answer))
        assert isinstance(event, ResponseReceived if ok else InvalidResponse), (method, event)


@pytest.mark.req("ext-tasks:tasks#52")
def test_the_tasks_requests_name_their_task_in_mcp_name() -> None:
    engine = StatelessEngine(Role.CLIENT, capabilities=ClientCapabilities(extra={"extensions": {EXTENSION_ID: {}}}))
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        rid, _ = engine.send_request(method, {"taskId": "abc", "inputResponses": {}})
        headers = engine.http_headers(rid)
        assert headers["Mcp-Method"] == method and headers["Mcp-Name"] == "abc"
