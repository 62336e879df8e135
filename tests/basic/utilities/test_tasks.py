"""basic/utilities/tasks: receiver and requestor, both sides, on autojump_clock."""

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcp_ref.basic.utilities import tasks
from mcp_ref.basic.utilities.tasks import TRANSITIONS, InvalidTransition, check_transition, iso8601, new_task_id
from mcp_ref.errors import ErrorCode, LocalProtocolError, MCPError, ProtocolError
from mcp_ref.schema.content import TextContent
from mcp_ref.schema.elicitation import ElicitationRequestedSchema, ElicitRequestFormParams, ElicitResult
from mcp_ref.schema.jsonrpc import Error
from mcp_ref.schema.sampling import CreateMessageRequestParams, CreateMessageResult, SamplingMessage
from mcp_ref.schema.tasks import RELATED_TASK_META_KEY
from mcp_ref.schema.tools import CallToolResult
from mcp_ref.server.tools import ToolError
from mcp_ref.session import RequestContext, Server
from mcp_ref.session.tasks import TaskCancelled, TaskConfig, TaskFailed, TaskManager
from mcp_ref.testing import memory_session_pair

from ...conftest import spec_path
from ...session.test_session import recorded_pair

SCHEMA = ElicitationRequestedSchema(properties={})


def task_server(nursery: trio.Nursery, **config: Any) -> tuple[Server, dict[str, Any]]:
    server = Server("tasks")
    state: dict[str, Any] = {"release": trio.Event(), "elicited": None, "finished": 0}
    server.enable_tasks(nursery, config=TaskConfig(**config) if config else None)

    @server.tool(description="slow, optional task support", task_support="optional")
    async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for i in range(1, 4):
            await trio.sleep(1)
            await ctx.progress(i, 3)
        state["finished"] += 1
        return f"slow done {arguments.get('n', '')}".strip()

    @server.tool(description="required task support", task_support="required")
    async def only_task(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await state["release"].wait()
        return "released"

    @server.tool(description="no task support")
    async def plain(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "plain"

    @server.tool(description="a task that is done at once", task_support="optional")
    async def plain_task(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "plain"

    @server.tool(task_support="optional")
    async def fails(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise ToolError("API rate limit exceeded")

    @server.tool(task_support="optional")
    async def crashes(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise MCPError(ErrorCode.INVALID_PARAMS, "bad input", {"field": "x"})

    @server.tool(task_support="optional")
    async def needs_input(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        result: ElicitResult = await ctx.elicit(ElicitRequestFormParams(message="ok?", requested_schema=SCHEMA))
        state["elicited"] = result.action
        return f"user said {result.action}"

    return server, state


def time_polls(server: Server) -> list[float]:
    """The times the server's one session answers tasks/get, as they come."""
    polled: list[float] = []
    get = server.task_manager.get

    async def timed_get(ctx: RequestContext, params: Any) -> Any:
        polled.append(trio.current_time())
        return await get(ctx, params)

    (session,) = server.sessions
    session.handlers["tasks/get"] = timed_get
    return polled


@asynccontextmanager
async def client_of(server: Server, **options: Any) -> AsyncIterator[Any]:
    async with memory_session_pair(server, **options, era="legacy") as client:
        yield client


# -- the state machine ------------------------------------------------------------------------


@pytest.mark.req("basic/utilities/tasks#26", "basic/utilities/tasks#27", "basic/utilities/tasks#28")
def test_transition_table_matches_the_spec_diagram() -> None:
    text = spec_path("2025-11-25", "basic", "utilities", "tasks.mdx").read_text()
    diagram = text[text.index("stateDiagram-v2") : text.index("```", text.index("stateDiagram-v2"))]
    edges = set(re.findall(r"^\s*(\w+) --> (\w+)\s*$", diagram, re.M))
    terminal = {"completed", "failed", "cancelled"}
    expanded = set()
    for a, b in edges:
        if a == "[*]" or b == "[*]":
            continue
        for x in terminal if a == "terminal" else {a}:
            for y in terminal if b == "terminal" else {b}:
                expanded.add((x, y))
    ours = {(a, b) for a, targets in TRANSITIONS.items() for b in targets}
    assert ours == expanded
    assert ("[*]", "working") in {(a, b) for a, b in re.findall(r"(\S+) --> (\S+)", diagram)}
    for status in terminal:
        for target in TRANSITIONS:
            with pytest.raises(InvalidTransition):
                check_transition(status, target)


@pytest.mark.req(
    "basic/utilities/tasks#23",
    "basic/utilities/tasks#24",
    "basic/utilities/tasks#25",
    "basic/utilities/tasks#36",
    "basic/utilities/tasks#37",
    "basic/utilities/tasks#76",
)
def test_task_ids_and_timestamps() -> None:
    ids = {new_task_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(isinstance(i, str) and len(i) >= 32 for i in ids)
    assert iso8601(0) == "1970-01-01T00:00:00.000Z"


@settings(max_examples=500)
@given(st.floats(min_value=-6e10, max_value=2.5e11, allow_nan=False))
@example(0.9999995)  # rounds up to the next second
@example(1764000000.0005)  # stored as a hair under .0005: .000
@example(-0.0000004)  # before 1970: the microseconds borrow from the second
def test_iso8601_is_what_datetime_formats(seconds: float) -> None:
    """The fast formatter (a whole second formatted once) against the datetime one it replaced."""
    expected = datetime.fromtimestamp(seconds, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert iso8601(seconds) == expected


# -- receiver: tools/call as a task -------------------------------------------------------------------


@pytest.mark.req(
    "basic/utilities/tasks#1",
    "basic/utilities/tasks#26",
    "basic/utilities/tasks#36",
    "basic/utilities/tasks#37",
    "basic/utilities/tasks#10",
    "basic/utilities/tasks#13",
    "basic/utilities/tasks#14",
    "basic/utilities/tasks#39",
    "basic/utilities/tasks#41",
    "basic/utilities/tasks#42",
    "basic/utilities/tasks#43",
    "basic/utilities/tasks#44",
    "basic/utilities/tasks#45",
)
async def test_task_lifecycle_poll_and_result(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, poll_interval_ms=7_000)
        async with client_of(server) as client:
            polled = time_polls(server)
            caps = client.server_capabilities.tasks
            assert caps is not None and caps.cancel == {} and caps.list == {}
            assert caps.requests is not None and caps.requests.tools is not None
            start = trio.current_time()
            handle = await client.call_tool_as_task("slow", {"n": 1}, ttl=60_000)
            assert trio.current_time() == start  # CreateTaskResult comes back at once
            assert handle.status == "working" and handle.task.ttl == 60_000 and handle.task.poll_interval == 7_000
            first = await handle.get()
            assert first.status == "working"
            stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"  # ISO 8601, UTC
            assert re.fullmatch(stamp, first.created_at) and re.fullmatch(stamp, first.last_updated_at)
            result = await handle.wait()
            # [basic/utilities/tasks#13, #42] the second poll came pollInterval (7 s) after the first,
            # not the requestor's own default (1 s)
            assert [t - start for t in polled] == [0, 0, 7]
            assert result == CallToolResult(content=[TextContent(text="slow done 1")])
            assert handle.status == "completed"
            assert (await handle.get()).status == "completed"
            # tasks/result again: exactly the same outcome
            assert await handle.result() == result
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "basic/utilities/tasks#15",
    "basic/utilities/tasks#46",
    "basic/utilities/tasks#47",
    "basic/utilities/tasks#48",
    "basic/utilities/tasks#52",
    "basic/utilities/tasks#66",
    "basic/utilities/tasks#67",
    "basic/utilities/tasks#73",
)
async def test_tasks_result_blocks_and_carries_related_task_meta(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with recorded_pair(server) as (client, rec):
            handle = await client.call_tool_as_task("only_task")
            async with trio.open_nursery() as inner:
                got: list[Any] = []

                async def fetch() -> None:
                    got.append(await handle.result())

                inner.start_soon(fetch)
                await trio.sleep(30)
                assert got == []  # still blocked: the task is working
                state["release"].set()
            assert got == [CallToolResult(content=[TextContent(text="released")])]
            (answer,) = [m for m in rec.sent if "result" in m and "content" in m.get("result", {})]
            assert answer["result"]["_meta"] == {RELATED_TASK_META_KEY: {"taskId": handle.task_id}}
            assert (await handle.get()).status == "completed"
            await client.list_tasks()
            # tasks/get and tasks/list answers carry no related-task key
            answers = [m["result"] for m in rec.sent if "result" in m and {"taskId", "tasks"} & set(m["result"])]
            assert len(answers) == 2
            assert all(RELATED_TASK_META_KEY not in (a.get("_meta") or {}) for a in answers)
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "basic/utilities/tasks#5",
    "basic/utilities/tasks#6",
    "basic/utilities/tasks#7",
    "basic/utilities/tasks#8",
    "basic/utilities/tasks#9",
    "basic/utilities/tasks#22",
)
async def test_tool_level_task_support(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server) as client:
            tools = {t.name: t for t in await client.list_all_tools()}
            assert tools["only_task"].execution.task_support == "required"  # type: ignore[union-attr]
            # our client knows the tools and refuses before sending
            with pytest.raises(LocalProtocolError, match="requires task"):
                await client.call_tool("only_task")
            with pytest.raises(LocalProtocolError, match="does not support task"):
                await client.call_tool_as_task("plain")
            # the server enforces it too, for clients that do not check
            from mcp_ref.schema.tools import CallToolRequestParams
            from mcp_ref.session.tasks import start_task

            with pytest.raises(MCPError) as info:
                await client.request("tools/call", CallToolRequestParams(name="only_task"))
            assert info.value.code == ErrorCode.METHOD_NOT_FOUND
            with pytest.raises(MCPError) as info:
                await start_task(client.session, "tools/call", CallToolRequestParams(name="plain"))
            assert info.value.code == ErrorCode.METHOD_NOT_FOUND
            assert (await client.call_tool("slow")).content == [TextContent(text="slow done")]  # optional: both ways
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "basic/utilities/tasks#2", "basic/utilities/tasks#3", "basic/utilities/tasks#4", "basic/utilities/tasks#21"
)
@pytest.mark.req("schema#6")
async def test_without_the_capability_task_metadata_is_ignored(autojump_clock: trio.abc.Clock) -> None:
    import json

    from mcp_ref.basic.transports.memory import memory_channel_pair

    server = Server("no tasks")

    @server.tool()
    async def work(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "done normally"

    async with client_of(server) as client:
        with pytest.raises(LocalProtocolError, match="tasks"):
            await client.call_tool_as_task("work")  # our client refuses to send it
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        await client_end.send(json.dumps(init).encode())
        await client_end.receive()
        await client_end.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "work", "task": {"ttl": 5}}}
        await client_end.send(json.dumps(call).encode())
        reply = json.loads(await client_end.receive())
        assert reply["result"]["content"] == [{"type": "text", "text": "done normally"}]  # processed normally
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#71", "basic/utilities/tasks#72")
async def test_failures_and_exact_errors(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server) as client:
            handle = await client.call_tool_as_task("fails")
            result = await handle.wait()
            assert result.is_error is True and handle.status == "failed"
            assert handle.task.status_message == "Tool execution failed: API rate limit exceeded"
            handle = await client.call_tool_as_task("crashes")
            with pytest.raises(TaskFailed) as info:
                await handle.wait()
            assert (info.value.code, info.value.message, info.value.data) == (-32602, "bad input", {"field": "x"})
            assert (await handle.get()).status == "failed"
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "basic/utilities/tasks#60",
    "basic/utilities/tasks#61",
    "basic/utilities/tasks#62",
    "basic/utilities/tasks#63",
    "basic/utilities/cancellation#3",
)
async def test_cancel_moves_to_cancelled_and_sticks(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server) as client:
            handle = await client.call_tool_as_task("slow")
            await trio.sleep(1.5)
            cancelled = await handle.cancel()
            assert cancelled.status == "cancelled" and cancelled.status_message
            await trio.sleep(10)
            assert (await handle.get()).status == "cancelled"
            assert state["finished"] == 0  # the work was stopped
            with pytest.raises(MCPError) as info:
                await handle.cancel()
            assert info.value.code == ErrorCode.INVALID_PARAMS and "terminal" in info.value.message
            with pytest.raises(TaskCancelled):
                await handle.result()  # a cancelled task has no result
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#68", "basic/utilities/tasks#70")
async def test_unknown_task_ids_and_cursors(autojump_clock: trio.abc.Clock) -> None:
    from mcp_ref.schema.tasks import GetTaskRequestParams

    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server) as client:
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                from mcp_ref.schema import messages

                params = messages.PARAMS_TYPES[method](task_id="nope")
                with pytest.raises(MCPError) as info:
                    await client.request(method, params)
                assert info.value.code == ErrorCode.INVALID_PARAMS
            with pytest.raises(MCPError) as info:
                await client.list_tasks("not-a-cursor")
            assert info.value.code == ErrorCode.INVALID_PARAMS
            assert GetTaskRequestParams(task_id="x").task_id == "x"
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "basic/utilities/tasks#56", "basic/utilities/tasks#57", "basic/utilities/tasks#58", "basic/utilities/tasks#59"
)
async def test_listing_paginates(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, page_size=2)
        async with client_of(server) as client:
            handles = [await client.call_tool_as_task("slow") for _ in range(5)]
            first = await client.list_tasks()
            assert len(first.tasks) == 2 and first.next_cursor is not None
            listed = await client.list_all_tasks()
            assert [t.task_id for t in listed] == [h.task_id for h in handles]
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#38", "basic/utilities/tasks#39", "basic/utilities/tasks#40")
@pytest.mark.req("basic/utilities/tasks#63")
async def test_ttl_is_capped_and_expired_tasks_are_purged(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, max_ttl_ms=10_000, default_ttl_ms=5_000)
        async with client_of(server) as client:
            capped = await client.call_tool_as_task("only_task", ttl=99_000_000)
            assert capped.task.ttl == 10_000
            default = await client.call_tool_as_task("only_task")
            assert default.task.ttl == 5_000
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", default.task.created_at)
            await trio.sleep(6)
            with pytest.raises(MCPError) as info:
                await default.get()
            assert info.value.code == ErrorCode.INVALID_PARAMS  # purged after its ttl
            now = await capped.get()
            assert now.status == "working" and now.ttl == 10_000  # tasks/get: the ttl granted, exactly
            await trio.sleep(5)
            with pytest.raises(MCPError):
                await capped.get()
        nursery.cancel_scope.cancel()


def test_unlimited_ttl_must_be_allowed_explicitly() -> None:
    with pytest.raises(ValueError):
        TaskConfig(default_ttl_ms=None)
    assert TaskConfig(default_ttl_ms=None, allow_unlimited_ttl=True).default_ttl_ms is None


@pytest.mark.req(
    "basic/utilities/tasks#32",
    "basic/utilities/tasks#33",
    "basic/utilities/tasks#34",
    "basic/utilities/tasks#35",
    "basic/utilities/tasks#49",
    "basic/utilities/tasks#65",
)
async def test_input_required_with_related_task_elicitation(autojump_clock: trio.abc.Clock) -> None:
    seen: list[Any] = []

    async def user(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params.meta)
        return ElicitResult(action="accept", content={})

    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        statuses: list[str] = []
        async with client_of(server, elicitation=user) as client:

            async def on_status(session: Any, params: Any) -> None:
                statuses.append(params.status)

            client.session.notification_handlers["notifications/tasks/status"] = on_status
            handle = await client.call_tool_as_task("needs_input")
            result = await handle.wait()
            assert result.content == [TextContent(text="user said accept")]
            await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert seen == [{RELATED_TASK_META_KEY: {"taskId": handle.task_id}}]
    assert statuses == ["input_required", "working", "completed"]


@pytest.mark.req(
    "basic/utilities/tasks#18",
    "basic/utilities/tasks#19",
    "basic/utilities/tasks#20",
    "basic/utilities/tasks#53",
    "basic/utilities/tasks#54",
    "basic/utilities/tasks#55",
)
async def test_status_notifications_have_no_related_task_meta(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with recorded_pair(server) as (client, rec):
            handle = await client.call_tool_as_task("slow")
            await handle.wait()
            await client.ping()
            notes = [m for m in rec.sent if m.get("method") == "notifications/tasks/status"]
            assert notes and all("_meta" not in n["params"] for n in notes)
            assert notes[-1]["params"]["status"] == "completed" and notes[-1]["params"]["taskId"] == handle.task_id
        nursery.cancel_scope.cancel()
    # and with notifications off, polling alone still works
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, status_notifications=False)
        async with recorded_pair(server) as (client, rec):
            handle = await client.call_tool_as_task("slow")
            assert (await handle.wait()).content == [TextContent(text="slow done")]
            assert not [m for m in rec.sent if m.get("method") == "notifications/tasks/status"]
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/progress#9", "basic/utilities/progress#10", "basic/utilities/progress#11")
async def test_progress_continues_under_the_original_token(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with recorded_pair(server) as (client, rec):
            seen: list[float] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                seen.append(p)

            handle = await client.call_tool_as_task("slow", progress=on_progress)
            await handle.wait()
            await client.ping()
            assert seen == [1, 2, 3]
            tokens = {m["params"]["progressToken"] for m in rec.sent if m.get("method") == "notifications/progress"}
            assert len(tokens) == 1
            # after the terminal status the engine refuses more progress for that token
            (token,) = tokens
            (session,) = server.sessions
            with pytest.raises(LocalProtocolError):
                session.connection.send_task_progress(token, 99)
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/progress#11")
async def test_task_progress_after_the_terminal_status_is_dropped(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server = Server("late")
        server.enable_tasks(nursery)
        reported: list[str] = []

        @server.tool(task_support="optional")
        async def stubborn(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            try:
                await trio.sleep_forever()
            finally:
                with trio.CancelScope(shield=True):
                    await ctx.progress(5)  # cancelled, so terminal: quietly nothing
                    reported.append("no error")
            return "never"

        async with recorded_pair(server) as (client, rec):
            seen: list[float] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                seen.append(p)

            handle = await client.call_tool_as_task("stubborn", progress=on_progress)
            await trio.sleep(1)
            assert (await handle.cancel()).status == "cancelled"
            await trio.sleep(1)
            await client.ping()
            assert reported == ["no error"] and seen == []
            assert not [m for m in rec.sent if m.get("method") == "notifications/progress"]
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#65")
async def test_notifications_from_task_work_name_the_task(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server = Server("notes")
        server.enable_tasks(nursery)

        @server.tool(task_support="optional")
        async def chatty(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            await ctx.log("info", "working on it")
            return "done"

        async with recorded_pair(server) as (client, rec):
            handle = await client.call_tool_as_task("chatty")
            await handle.wait()
            await client.ping()
            (log,) = [m for m in rec.sent if m.get("method") == "notifications/message"]
            assert log["params"]["_meta"] == {RELATED_TASK_META_KEY: {"taskId": handle.task_id}}
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#68", "basic/utilities/tasks#70")
async def test_a_task_that_expires_while_its_result_is_awaited(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, default_ttl_ms=5_000)
        async with client_of(server) as client:
            handle = await client.call_tool_as_task("only_task")  # runs until released: never
            with pytest.raises(TaskFailed) as info:
                await handle.result()  # blocks; the ttl passes meanwhile
            assert info.value.code == ErrorCode.INVALID_PARAMS and "expired" in info.value.message
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#74", "basic/utilities/tasks#77", "basic/utilities/tasks#78")
@pytest.mark.req("basic/utilities/tasks#79")
async def test_tasks_are_bound_to_their_session(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server) as alice, client_of(server) as bob:
            handle = await alice.call_tool_as_task("slow")
            from mcp_ref.schema.tasks import GetTaskRequestParams

            with pytest.raises(MCPError) as info:
                await bob.request("tasks/get", GetTaskRequestParams(task_id=handle.task_id))
            assert info.value.code == ErrorCode.INVALID_PARAMS
            assert await bob.list_all_tasks() == []
            assert [t.task_id for t in await alice.list_all_tasks()] == [handle.task_id]
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#77")
async def test_unbound_tasks_do_not_declare_list(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, binding="none")
        async with client_of(server) as client:
            caps = client.server_capabilities.tasks
            assert caps is not None and caps.list is None
            with pytest.raises(LocalProtocolError):
                await client.list_tasks()
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#81")
async def test_concurrent_task_limit(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, max_tasks_per_requestor=2)
        async with client_of(server) as client:
            await client.call_tool_as_task("only_task")
            await client.call_tool_as_task("only_task")
            with pytest.raises(MCPError) as info:
                await client.call_tool_as_task("only_task")
            assert info.value.code == ErrorCode.INVALID_REQUEST and "concurrent" in info.value.message
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#81")
async def test_finished_tasks_kept_per_requestor_are_capped(autojump_clock: trio.abc.Clock) -> None:
    # finished tasks are kept until their ttl: a requestor creating them in a loop must not
    # grow the receiver without bound (21,000 in 40 s were kept before)
    assert TaskConfig().max_stored_tasks_per_requestor == 1000
    async with trio.open_nursery() as nursery:
        server, _ = task_server(nursery, max_stored_tasks_per_requestor=3, rate_limit=None)
        async with client_of(server) as client, client_of(server) as other:
            for _ in range(3):
                await (await client.call_tool_as_task("plain_task")).result()
            with pytest.raises(MCPError) as info:
                await client.call_tool_as_task("plain_task")
            assert info.value.code == ErrorCode.INVALID_REQUEST and "tasks kept per requestor" in info.value.message
            # another requestor has its own room
            await (await other.call_tool_as_task("plain_task")).result()
            # room again once the first ones have expired (ttl 1 h by default)
            await trio.sleep(3601)
            await (await client.call_tool_as_task("plain_task")).result()
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#81")
async def test_tasks_kept_in_all_are_capped(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, _ = task_server(nursery, max_stored_tasks=4, rate_limit=None)
        async with client_of(server) as first, client_of(server) as second:
            for client in (first, first, second, second):
                await (await client.call_tool_as_task("plain_task")).result()
            with pytest.raises(MCPError) as info:
                await second.call_tool_as_task("plain_task")
            assert info.value.code == ErrorCode.INVALID_REQUEST and "tasks kept in all" in info.value.message
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("binding", ["session", "none"])
async def test_a_closed_session_leaves_nothing_behind_in_the_rate_limiter(binding: str) -> None:
    # the buckets were keyed by the session and kept for up to 1024 requestors: every
    # closed session stayed in memory with all it held (the soak's RSS kept growing)
    async with trio.open_nursery() as nursery:
        server, _ = task_server(nursery, binding=binding)
        manager = server.task_manager
        assert manager is not None and manager._limiter is not None
        async with client_of(server) as client:
            await (await client.call_tool_as_task("plain_task")).result()
            assert len(manager._limiter._buckets) == 1
        await trio.testing.wait_all_tasks_blocked()
        assert manager._limiter._buckets == {} and manager._watched == set()
        nursery.cancel_scope.cancel()


async def test_a_durable_store_keeps_session_bound_tasks_only_while_their_session_lives(tmp_path: Path) -> None:
    from mcp_ref.session.task_db import open_sqlite_task_store

    async with open_sqlite_task_store(tmp_path / "t.db") as store, trio.open_nursery() as nursery:
        server = Server("durable")
        server.enable_tasks(nursery, store=store)  # (binding="session" by default; no auth here)

        @server.tool(task_support="optional")
        async def quick(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return "quick"

        async with memory_session_pair(server, era="legacy") as client:
            handle = await client.call_tool_as_task("quick")
            await handle.result()
            assert await store.count() == 1
        # nobody can reach a task bound to a closed unauthenticated session: it goes with it
        with trio.fail_after(10):
            while await store.count():
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()


# -- the client as receiver: task-augmented sampling ------------------------------------------------


@pytest.mark.req("basic/utilities/tasks#1", "basic/utilities/tasks#2", "basic/utilities/tasks#43")
async def test_server_sends_task_augmented_sampling_to_the_client(autojump_clock: trio.abc.Clock) -> None:
    server = Server("requestor")
    outcome: list[Any] = []

    @server.tool()
    async def delegate(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text="hi"))], max_tokens=5
        )
        handle = await ctx.request_task("sampling/createMessage", params, ttl=30_000)
        outcome.append(handle.status)
        result: CreateMessageResult = await handle.wait()
        outcome.append(result)
        return "delegated"

    async def slow_llm(ctx: Any, params: Any) -> CreateMessageResult:
        await trio.sleep(5)
        return CreateMessageResult(role="assistant", model="m", content=TextContent(text="hello"))

    async with trio.open_nursery() as nursery:
        client_tasks = TaskManager(nursery)
        async with client_of(server, sampling=slow_llm, tasks=client_tasks) as client:
            caps = client.session.connection.capabilities.tasks  # type: ignore[union-attr]
            assert caps.requests.sampling.create_message == {}  # type: ignore[union-attr]
            assert (await client.call_tool("delegate", timeout=100)).content == [TextContent(text="delegated")]
        nursery.cancel_scope.cancel()
    assert outcome[0] == "working"
    assert outcome[1] == CreateMessageResult(role="assistant", model="m", content=TextContent(text="hello"))


@pytest.mark.req("basic/utilities/tasks#1", "basic/utilities/tasks#2")
async def test_one_switch_enables_client_side_tasks_in_the_sessions_nursery(autojump_clock: trio.abc.Clock) -> None:
    """tasks=True: no nursery or TaskManager of the user's; a task still running when the
    block ends is cancelled with the session, and nothing is left running."""
    server = Server("requestor")
    statuses: list[str] = []
    llm_cancelled = trio.Event()

    @server.tool()
    async def delegate(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text="hi"))], max_tokens=5
        )
        handle = await ctx.request_task("sampling/createMessage", params, ttl=30_000)
        statuses.append(handle.status)
        if arguments.get("wait"):
            result: CreateMessageResult = await handle.wait()
            return result.content.text  # type: ignore[union-attr]
        return "started"

    calls = 0

    async def llm(ctx: Any, params: Any) -> CreateMessageResult:
        nonlocal calls
        calls += 1
        try:
            await trio.sleep(5 if calls == 1 else 20)  # (the second outlives the session)
        except trio.Cancelled:
            llm_cancelled.set()
            raise
        return CreateMessageResult(role="assistant", model="m", content=TextContent(text="hello"))

    async with client_of(server, sampling=llm, tasks=True) as client:
        caps = client.session.connection.capabilities.tasks
        assert caps.requests.sampling.create_message == {}
        assert (await client.call_tool("delegate", {"wait": True}, timeout=100)).text == "hello"
        assert (await client.call_tool("delegate", {}, timeout=100)).text == "started"
        await trio.testing.wait_all_tasks_blocked()
        assert not llm_cancelled.is_set()  # (the second task is running in the session's nursery)
    assert statuses == ["working", "working"]
    assert llm_cancelled.is_set()  # cancelled as the session ended


@pytest.mark.req("basic/utilities/tasks#50", "basic/utilities/tasks#51")
async def test_task_id_param_decides_not_related_task_meta(autojump_clock: trio.abc.Clock) -> None:
    from mcp_ref.schema.tasks import GetTaskRequestParams

    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server) as client:
            a = await client.call_tool_as_task("slow")
            b = await client.call_tool_as_task("only_task")
            params = GetTaskRequestParams(task_id=b.task_id, meta={RELATED_TASK_META_KEY: {"taskId": a.task_id}})
            got = await client.request("tasks/get", params)
            assert got.task_id == b.task_id and got.status == "working"
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#82", "basic/utilities/tasks#83")
async def test_task_lifecycle_is_logged(autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.INFO, logger="mcp_ref.tasks")
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server) as client:
            handle = await client.call_tool_as_task("slow")
            await handle.wait()
        nursery.cancel_scope.cancel()
    messages = [r.getMessage() for r in caplog.records if r.name == "mcp_ref.tasks"]
    assert any("created" in m and handle.task_id in m for m in messages)
    assert any("started by the peer" in m and handle.task_id in m for m in messages)  # the requestor's side
    assert any("completed" in m and handle.task_id in m for m in messages)


@pytest.mark.req("basic/utilities/tasks#75")
def test_binding_limits_are_documented() -> None:
    from ...conftest import ROOT

    note = (ROOT / "spec_notes" / "basic" / "utilities" / "tasks.md").read_text()
    for phrase in ("binding", "guess", "max_ttl_ms", "max_tasks_per_requestor"):
        assert phrase in note


# -- the chapter's policies, sans-IO (mcp_ref.basic.utilities.tasks) --------------------------


def _record(status: str = "working", outcome: Any = None) -> tasks.TaskRecord:
    return tasks.TaskRecord(
        task_id="t1",
        owner=None,
        method="tools/call",
        status=status,
        created_at=0.0,
        last_updated_at=1.5,
        ttl_ms=60_000,
        poll_interval_ms=1_000,
        expires_at=None,
        outcome=outcome,
    )


@pytest.mark.req("basic/utilities/tasks#10", "basic/utilities/tasks#38")
@pytest.mark.parametrize(
    ("requested", "granted"), [(None, 5_000), (1_000, 1_000), (10**9, 86_400_000), (0, 1), (-5, 1)]
)
def test_the_receiver_grants_the_requested_ttl_within_its_maximum(requested: int | None, granted: int) -> None:
    assert tasks.grant_ttl(requested, default=5_000, maximum=86_400_000) == granted


def test_a_tool_result_with_is_error_fails_the_task_with_its_text() -> None:
    failed = CallToolResult(content=[TextContent(text="no"), TextContent(text="way")], is_error=True)
    assert tasks.work_outcome(failed) == ("failed", "Tool execution failed: no way")
    assert tasks.work_outcome(CallToolResult(content=[])) == ("completed", None)


@pytest.mark.req("basic/utilities/tasks#53", "basic/utilities/tasks#55")
def test_a_status_notification_carries_the_full_task_and_no_related_task_key() -> None:
    params = tasks.status_notification(_record("input_required"))
    assert params.task_id == "t1" and params.status == "input_required" and params.ttl == 60_000
    assert params.last_updated_at == "1970-01-01T00:00:01.500Z" and params.poll_interval == 1_000
    assert params.meta is None


@pytest.mark.req("basic/utilities/tasks#60")
@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_a_terminal_task_cannot_be_cancelled(status: str) -> None:
    tasks.check_cancellable(_record("working"))
    with pytest.raises(ProtocolError, match=f"terminal status '{status}'") as info:
        tasks.check_cancellable(_record(status))
    assert info.value.code == ErrorCode.INVALID_PARAMS


@pytest.mark.req("basic/utilities/tasks#47", "basic/utilities/tasks#67", "basic/utilities/tasks#72")
def test_tasks_result_returns_the_underlying_outcome_with_the_related_task_key() -> None:
    done = _record("completed", CallToolResult(content=[TextContent(text="hi")], meta={"x.y/z": 1}))
    payload = tasks.task_payload(done, "2025-11-25")
    assert payload.meta == {"x.y/z": 1, RELATED_TASK_META_KEY: {"taskId": "t1"}}
    assert payload.extra["content"] == [{"type": "text", "text": "hi"}]
    failed = _record("failed", Error(code=-32000, message="boom", data={"a": 1}))
    with pytest.raises(MCPError) as info:
        tasks.task_payload(failed, "2025-11-25")
    assert (info.value.code, info.value.message, info.value.data) == (-32000, "boom", {"a": 1})


@pytest.mark.req("basic/utilities/tasks#80")
def test_the_rate_limiter_allows_bursts_then_queues_then_refuses() -> None:
    limiter = tasks.RateLimiter(rate=2.0, burst=3, max_wait=1.0)
    assert [limiter.delay("a", now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.delay("a", now=0.0) == 0.5  # the 4th waits for the next token
    assert limiter.delay("a", now=0.0) == 1.0
    assert limiter.delay("a", now=0.0) is None  # more than max_wait: refused, token not used
    assert limiter.delay("b", now=0.0) == 0.0  # per requestor
    assert limiter.delay("a", now=10.0) == 0.0  # refilled (up to the burst)


@pytest.mark.req("basic/utilities/tasks#42")
@pytest.mark.parametrize(("interval_ms", "delay"), [(7_000, 7.0), (None, 2.0), (0, 0.1), (10**9, 30.0)])
def test_the_requestor_polls_after_the_receivers_poll_interval_within_bounds(
    interval_ms: int | None, delay: float
) -> None:
    assert tasks.poll_delay(interval_ms, default=2.0, low=0.1, high=30.0) == delay


@pytest.mark.req("basic/utilities/tasks#48", "basic/utilities/tasks#65")
def test_related_task_params_are_made_for_methods_sent_without_params() -> None:
    from mcp_ref.schema.jsonrpc import NotificationParams, RequestParams
    from mcp_ref.schema.roots import ListRootsRequestParams

    related = {RELATED_TASK_META_KEY: {"taskId": "t1"}}
    assert tasks.relate_params("roots/list", None, "t1") == ListRootsRequestParams(meta=related)
    assert tasks.relate_params("notifications/tools/list_changed", None, "t1") == NotificationParams(meta=related)
    kept = tasks.relate_params("ping", RequestParams(meta={"x.y/z": 1}), "t1")
    assert kept == RequestParams(meta={"x.y/z": 1, **related})
    # params that are required cannot be made up: left to the engine to refuse
    assert tasks.relate_params("sampling/createMessage", None, "t1") is None


@pytest.mark.req("basic/utilities/tasks#42")
async def test_a_long_poll_interval_is_respected_as_given(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, poll_interval_ms=90_000)
        async with client_of(server) as client:
            polled = time_polls(server)
            start = trio.current_time()
            handle = await client.call_tool_as_task("slow", ttl=600_000)
            await handle.wait()  # the default bounds: this guards against a default clamp
            # the task took 3 s, but the receiver asked for a poll every 90 s: not sooner
            # (with the old 30 s upper bound the second poll came at 30 s)
            assert [t - start for t in polled] == [0, 90]
        nursery.cancel_scope.cancel()
