"""basic/utilities/tasks: the runtime's routing, robustness and limits, on autojump_clock."""

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.basic.utilities.tasks import TaskLimits, TaskRecord
from mcp_ref.errors import ErrorCode, MCPError
from mcp_ref.schema.content import TextContent
from mcp_ref.schema.elicitation import ElicitRequestFormParams, ElicitResult
from mcp_ref.schema.lifecycle import Implementation
from mcp_ref.schema.roots import Root
from mcp_ref.schema.tasks import RELATED_TASK_META_KEY, GetTaskPayloadRequestParams, GetTaskRequestParams
from mcp_ref.schema.tools import CallToolResult
from mcp_ref.session import Server, open_session
from mcp_ref.session.task_store import InMemoryTaskStore
from mcp_ref.session.tasks import TaskCancelled, TaskConfig, TaskFailed, TaskManager

from ...session.test_session import Recorder
from .test_tasks import SCHEMA, client_of, task_server


class Routed(Recorder):
    """A recorded server channel that also records which request each message was sent for."""

    def __init__(self, inner: trio.abc.Channel[bytes]) -> None:
        super().__init__(inner)
        self.routes: list[tuple[Any, Any]] = []

    async def send_related(self, value: bytes, related_request_id: Any) -> None:
        self.routes.append((json.loads(value), related_request_id))
        await self.send(value)


@asynccontextmanager
async def routed_pair(server: Server, **client_options: Any) -> AsyncIterator[tuple[Any, Routed]]:
    client_end, server_end = memory_channel_pair()
    rec = Routed(server_end)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, rec)
        async with open_session(client_end, **client_options, era="legacy") as client:
            yield client, rec
        nursery.cancel_scope.cancel()


async def accept(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={})


@pytest.mark.req("basic/utilities/tasks#32", "basic/utilities/tasks#34", "basic/utilities/tasks#35")
async def test_input_requests_wait_for_tasks_result_and_go_on_its_stream(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with routed_pair(server, elicitation=accept) as (client, rec):
            handle = await client.call_tool_as_task("needs_input")
            await trio.sleep(30)
            assert (await handle.get()).status == "input_required"
            # nothing was sent unrelated, to be lost where nobody listens
            assert not [m for m, _ in rec.routes if m.get("method") == "elicitation/create"]
            result = await handle.result()
            assert result.content == [TextContent(text="user said accept")]
            ((elicit, related),) = [(m, r) for m, r in rec.routes if m.get("method") == "elicitation/create"]
            (fetch,) = [m for m in rec.received if m.get("method") == "tasks/result"]
            assert related == fetch["id"]
            assert elicit["params"]["_meta"] == {RELATED_TASK_META_KEY: {"taskId": handle.task_id}}
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#14", "basic/utilities/tasks#34")
@pytest.mark.parametrize("unlimited", [False, True])
async def test_wait_outlasts_the_request_timeout_after_input_required(
    autojump_clock: trio.abc.Clock, unlimited: bool
) -> None:
    config: dict[str, Any] = {"default_ttl_ms": None, "allow_unlimited_ttl": True} if unlimited else {}
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, **config)

        @server.tool(task_support="optional")
        async def long_after_input(ctx: Any, arguments: dict[str, Any]) -> str:
            answer: ElicitResult = await ctx.elicit(ElicitRequestFormParams(message="go?", requested_schema=SCHEMA))
            await trio.sleep(150)  # far beyond the 60 s request timeout
            return f"done after {answer.action}"

        async with routed_pair(server, elicitation=accept) as (client, rec):
            handle = await client.call_tool_as_task("long_after_input", ttl=None if unlimited else 600_000)
            assert handle.task.ttl == (None if unlimited else 600_000)
            result = await handle.wait()
            assert result.content == [TextContent(text="done after accept")]
            fetches = [m for m in rec.received if m.get("method") == "tasks/result"]
            # with a ttl, one tasks/result waits it out; without, the first one times out
            # (60 s), the requestor polls the working task and fetches again once it is terminal
            assert len(fetches) == (2 if unlimited else 1)
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#48", "basic/utilities/tasks#49", "basic/utilities/tasks#65")
async def test_task_progress_and_replies_carry_the_related_task_key(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with routed_pair(server, elicitation=accept) as (client, rec):
            seen: list[float] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                seen.append(p)

            slow = await client.call_tool_as_task("slow", progress=on_progress)
            await slow.wait()
            asks = await client.call_tool_as_task("needs_input")
            await asks.wait()
            await client.ping()
        nursery.cancel_scope.cancel()
    assert seen == [1, 2, 3]
    progress = [m for m in rec.sent if m.get("method") == "notifications/progress"]
    assert len(progress) == 3
    assert all(m["params"]["_meta"] == {RELATED_TASK_META_KEY: {"taskId": slow.task_id}} for m in progress)
    ((elicit, _),) = [(m, r) for m, r in rec.routes if m.get("method") == "elicitation/create"]
    (reply,) = [m for m in rec.received if m.get("id") == elicit["id"] and "result" in m]
    assert reply["result"]["_meta"] == {RELATED_TASK_META_KEY: {"taskId": asks.task_id}}
    assert reply["result"]["action"] == "accept"


async def host_nursery(task_status: trio.TaskStatus[trio.Nursery]) -> None:
    async with trio.open_nursery() as nursery:
        task_status.started(nursery)
        await trio.sleep_forever()


@pytest.mark.req("basic/utilities/tasks#71")
async def test_shutting_down_the_task_nursery_fails_running_tasks(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        task_nursery: trio.Nursery = await nursery.start(host_nursery)
        server, state = task_server(task_nursery)
        async with client_of(server) as client:
            handle = await client.call_tool_as_task("slow")
            await trio.sleep(1.5)
            task_nursery.cancel_scope.cancel()
            await trio.testing.wait_all_tasks_blocked()
            task = await handle.get()
            assert (task.status, task.status_message) == ("failed", "receiver shut down")
            with pytest.raises(TaskFailed) as info:
                await handle.result()
            assert info.value.code == ErrorCode.INTERNAL_ERROR
            assert state["finished"] == 0
        nursery.cancel_scope.cancel()


class CopyingStore(InMemoryTaskStore):
    """Like a database: what comes out is a copy, never the object it keeps."""

    async def get(self, task_id: str) -> TaskRecord | None:
        record = await super().get(task_id)
        return attrs.evolve(record) if record is not None else None

    async def owned_by(self, owner: str | None) -> list[TaskRecord]:
        return [attrs.evolve(r) for r in await super().owned_by(owner)]


@pytest.mark.req("basic/utilities/tasks#61", "basic/utilities/tasks#62")
async def test_a_store_that_copies_records(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server = Server("copies")
        server.enable_tasks(nursery, store=CopyingStore())
        release = trio.Event()

        @server.tool(task_support="optional")
        async def slow(ctx: Any, arguments: dict[str, Any]) -> str:
            await trio.sleep(3)
            return "slow done"

        @server.tool(task_support="optional")
        async def asks(ctx: Any, arguments: dict[str, Any]) -> str:
            answer: ElicitResult = await ctx.elicit(ElicitRequestFormParams(message="go?", requested_schema=SCHEMA))
            return f"asked: {answer.action}"

        @server.tool(task_support="optional")
        async def stubborn(ctx: Any, arguments: dict[str, Any]) -> str:
            with trio.CancelScope(shield=True):
                await release.wait()
            return "finished anyway"

        async with client_of(server, elicitation=accept) as client:
            done = await client.call_tool_as_task("slow")
            assert (await done.wait()).content == [TextContent(text="slow done")]
            assert (await done.get()).status == "completed"
            asks = await client.call_tool_as_task("asks")
            assert (await asks.get()).status == "input_required"
            assert (await asks.wait()).content == [TextContent(text="asked: accept")]
            kept = await client.call_tool_as_task("stubborn")
            assert (await kept.cancel()).status == "cancelled"
            release.set()
            await trio.testing.wait_all_tasks_blocked()
            assert (await kept.get()).status == "cancelled"  # [basic/utilities/tasks#62] it sticks
            assert {t.task_id: t.status for t in await client.list_all_tasks()} == {
                done.task_id: "completed",
                asks.task_id: "completed",
                kept.task_id: "cancelled",
            }
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#56", "basic/utilities/tasks#57", "basic/utilities/tasks#59")
async def test_listing_skips_no_task_when_one_expires_between_pages(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, page_size=2)
        async with client_of(server) as client:
            handles = [await client.call_tool_as_task("only_task", ttl=5_000 if i == 0 else 60_000) for i in range(5)]
            ids = [h.task_id for h in handles]
            first = await client.list_tasks()
            assert [t.task_id for t in first.tasks] == ids[:2]
            await trio.sleep(6)  # the first task expires and is deleted
            second = await client.list_tasks(first.next_cursor)
            third = await client.list_tasks(second.next_cursor)
            assert [t.task_id for t in second.tasks] == ids[2:4]
            assert [t.task_id for t in third.tasks] == ids[4:] and third.next_cursor is None
            assert [t.task_id for t in await client.list_all_tasks()] == ids[1:]
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#42")
@pytest.mark.parametrize(
    ("suggested_ms", "bounds", "polls", "elapsed"),
    [(0, None, 31, 3.0), (10**9, (0.1, 30.0), 2, 30.0), (None, None, 4, 3.0)],
)
async def test_wait_keeps_the_peers_poll_interval_within_bounds(
    autojump_clock: trio.abc.Clock,
    suggested_ms: int | None,
    bounds: tuple[float, float] | None,
    polls: int,
    elapsed: float,
) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, poll_interval_ms=suggested_ms)
        async with routed_pair(server) as (client, rec):
            handle = await client.call_tool_as_task("slow")  # 3 s of work
            start = trio.current_time()
            await handle.wait(**({"poll_interval_bounds": bounds} if bounds else {}))
            assert trio.current_time() - start == pytest.approx(elapsed)
            # 0 ms: every 0.1 s (the floor), not a busy loop; 10**9 ms with a caller's upper
            # bound of 30 s: every 30 s; none: the 1 s default. A long interval with the
            # DEFAULT bounds: test_tasks.py::test_a_long_poll_interval_is_respected_as_given
            assert len([m for m in rec.received if m.get("method") == "tasks/get"]) == polls
            with pytest.raises(ValueError):
                await handle.wait(poll_interval_bounds=(0, 1))
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("ttl", [0, -5, 1.5])
async def test_a_bad_ttl_is_refused_before_sending(autojump_clock: trio.abc.Clock, ttl: Any) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with routed_pair(server) as (client, rec):
            with pytest.raises(ValueError, match="ttl"):
                await client.call_tool_as_task("slow", ttl=ttl)
            assert not [m for m in rec.received if m.get("method") == "tools/call"]
            assert await client.list_all_tasks() == []
        nursery.cancel_scope.cancel()


async def test_a_task_only_tool_without_tasks_is_refused_before_serving(autojump_clock: trio.abc.Clock) -> None:
    server = Server("no tasks")

    @server.tool(task_support="required")
    async def batch(ctx: Any, arguments: dict[str, Any]) -> str:
        return "never"

    client_end, server_end = memory_channel_pair()
    with pytest.raises(RuntimeError, match=r"\['batch'\].*enable_tasks"):
        await server.serve(server_end)
    # once serving, registering one is refused at once
    other = Server("serving")

    @other.tool()
    async def plain(ctx: Any, arguments: dict[str, Any]) -> str:
        return "plain"

    async with client_of(other) as client:
        with pytest.raises(RuntimeError, match="enable_tasks"):
            other.tool(task_support="required")(batch)
        assert [t.name for t in await client.list_all_tools()] == ["plain"]


def by_name(session: Any) -> str:
    """An identity hook: alice and bob are the same user, carol another."""
    return "user-2" if session.connection.peer_info.name == "carol" else "user-1"


@pytest.mark.req("basic/utilities/tasks#74", "basic/utilities/tasks#78", "basic/utilities/tasks#79")
async def test_tasks_follow_the_identity_across_sessions(autojump_clock: trio.abc.Clock) -> None:
    answered: list[str] = []

    def answer_as(name: str) -> Any:
        async def user(ctx: Any, params: Any) -> ElicitResult:
            answered.append(name)
            return ElicitResult(action="accept", content={})

        return user

    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, binding=by_name)
        statuses: list[str] = []

        async def on_status(session: Any, params: Any) -> None:
            statuses.append(params.status)

        async with client_of(server, client_info=Implementation(name="alice", version="1")) as alice:
            handle = await alice.call_tool_as_task("needs_input")
            assert (await handle.get()).status == "input_required"
        # alice is gone; bob, the same user on another connection, picks the task up
        async with (
            client_of(
                server,
                client_info=Implementation(name="bob", version="1"),
                elicitation=answer_as("bob"),
                notification_handlers={"notifications/tasks/status": on_status},
            ) as bob,
            client_of(server, client_info=Implementation(name="carol", version="1")) as carol,
        ):
            # [basic/utilities/tasks#78] another identity's task does not exist for carol
            with pytest.raises(MCPError) as info:
                await carol.request("tasks/get", GetTaskRequestParams(task_id=handle.task_id))
            assert info.value.code == ErrorCode.INVALID_PARAMS
            assert await carol.list_all_tasks() == []
            assert [t.task_id for t in await bob.list_all_tasks()] == [handle.task_id]
            payload = await bob.request("tasks/result", GetTaskPayloadRequestParams(task_id=handle.task_id))
            assert payload.extra["content"] == [{"type": "text", "text": "user said accept"}]
            assert answered == ["bob"] and state["elicited"] == "accept"
            await trio.testing.wait_all_tasks_blocked()
            assert statuses == ["working", "completed"]  # the creator is gone: bob, who waits, is told
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#15")
async def test_two_tasks_result_waiters_both_get_the_result(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server, elicitation=accept) as client:
            handle = await client.call_tool_as_task("needs_input")
            got: list[Any] = []

            async def fetch() -> None:
                got.append(await handle.result())

            async with trio.open_nursery() as fetchers:
                fetchers.start_soon(fetch)
                fetchers.start_soon(fetch)
            assert got == [CallToolResult(content=[TextContent(text="user said accept")])] * 2
        nursery.cancel_scope.cancel()


# -- the client as receiver: task-augmented elicitation, cancelled and listed by the server --------


@pytest.mark.req("basic/utilities/tasks#1", "basic/utilities/tasks#43", "basic/utilities/tasks#56")
@pytest.mark.req("basic/utilities/tasks#61", "basic/utilities/tasks#63")
async def test_server_sends_task_augmented_elicitation_lists_and_cancels(autojump_clock: trio.abc.Clock) -> None:
    server = Server("requestor")
    outcome: dict[str, Any] = {}
    never = trio.Event()

    def form(message: str) -> ElicitRequestFormParams:
        return ElicitRequestFormParams(message=message, requested_schema=SCHEMA)

    @server.tool()
    async def delegate(ctx: Any, arguments: dict[str, Any]) -> str:
        answered = await ctx.request_task("elicitation/create", form("quick"), ttl=30_000)
        stuck = await ctx.request_task("elicitation/create", form("stuck"), ttl=30_000)
        listed = await ctx.list_tasks()
        outcome["listed"] = [t.task_id for t in listed.tasks]
        outcome["ids"] = [answered.task_id, stuck.task_id]
        outcome["answer"] = await answered.wait()
        outcome["cancelled"] = (await stuck.cancel()).status
        outcome["after"] = (await stuck.get()).status
        return "delegated"

    async def user(ctx: Any, params: Any) -> ElicitResult:
        if params.message == "stuck":
            await never.wait()
        await trio.sleep(5)
        return ElicitResult(action="accept", content={})

    async with trio.open_nursery() as nursery:
        client_tasks = TaskManager(nursery)
        async with client_of(server, elicitation=user, tasks=client_tasks) as client:
            caps = client.session.connection.capabilities.tasks
            assert caps is not None and caps.requests is not None and caps.requests.elicitation is not None
            assert (await client.call_tool("delegate", timeout=100)).content == [TextContent(text="delegated")]
        nursery.cancel_scope.cancel()
    assert outcome["listed"] == outcome["ids"]
    assert outcome["answer"] == ElicitResult(action="accept", content={})
    assert outcome["cancelled"] == outcome["after"] == "cancelled"
    assert not never.is_set()


# -- cancellation races ------------------------------------------------------------------------------


@pytest.mark.req("basic/utilities/tasks#60", "basic/utilities/tasks#61", "basic/utilities/tasks#62")
@pytest.mark.req("basic/utilities/tasks#45")
@pytest.mark.parametrize("first", ["cancel", "finish"])
async def test_cancel_arriving_just_as_the_work_finishes(autojump_clock: trio.abc.Clock, first: str) -> None:
    seq = trio.testing.Sequencer()
    cancel_step, work_step = (0, 1) if first == "cancel" else (1, 0)
    async with trio.open_nursery() as nursery:
        server = Server("race")
        manager = server.enable_tasks(nursery)

        @server.tool(task_support="optional")
        async def racing(ctx: Any, arguments: dict[str, Any]) -> str:
            with trio.CancelScope(shield=True):  # the last step ignores cancellation
                async with seq(work_step):
                    pass
            return "finished"

        async def scripted_cancel(ctx: Any, params: Any) -> Any:
            async with seq(cancel_step):
                pass
            return await manager.cancel(ctx, params)

        async with client_of(server) as client:
            (session,) = server.sessions
            session.handlers["tasks/cancel"] = scripted_cancel
            handle = await client.call_tool_as_task("racing")
            if first == "cancel":
                assert (await handle.cancel()).status == "cancelled"
                await trio.testing.wait_all_tasks_blocked()
                # [basic/utilities/tasks#62] the work finished after all: still cancelled ...
                assert (await handle.get()).status == "cancelled"
                # ... [basic/utilities/tasks#45] and tasks/result returns that final result
                assert (await handle.result()).content == [TextContent(text="finished")]
                assert (await handle.get()).status == "cancelled"
            else:
                with pytest.raises(MCPError) as error:
                    await handle.cancel()
                assert error.value.code == ErrorCode.INVALID_PARAMS and "completed" in error.value.message
                assert (await handle.result()).content == [TextContent(text="finished")]
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#62")
async def test_cancelled_sticks_when_the_work_fails_later(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server = Server("stubborn")
        server.enable_tasks(nursery)

        @server.tool(task_support="optional")
        async def stubborn(ctx: Any, arguments: dict[str, Any]) -> str:
            with trio.CancelScope(shield=True):
                await trio.sleep(10)
            raise RuntimeError("failed after the cancel")

        async with client_of(server) as client:
            handle = await client.call_tool_as_task("stubborn")
            assert (await handle.cancel()).status == "cancelled"
            await trio.sleep(20)
            task = await handle.get()
            assert task.status == "cancelled" and task.status_message == "The task was cancelled by request."
        nursery.cancel_scope.cancel()


# -- audit, monitoring, limits -----------------------------------------------------------------------


@pytest.mark.req("basic/utilities/tasks#81", "basic/utilities/tasks#82")
async def test_task_operations_are_logged_with_the_requestor_and_counted(
    autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_ref.tasks")
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, binding=by_name, max_tasks_per_requestor=2)
        async with client_of(server, client_info=Implementation(name="alice", version="1")) as alice:
            done = await alice.call_tool_as_task("slow")
            await done.wait()
            stuck = await alice.call_tool_as_task("only_task")
            await stuck.cancel()
            await alice.call_tool_as_task("only_task")
            await alice.call_tool_as_task("only_task")
            with pytest.raises(MCPError):
                await alice.call_tool_as_task("only_task")  # over the concurrent limit
            for _ in range(3):
                with pytest.raises(MCPError):
                    await alice.request("tasks/get", GetTaskRequestParams(task_id="guess"))
            (session,) = server.sessions
            assert session.connection.stats["tasks:not-found"] == 3
        nursery.cancel_scope.cancel()
    stats = server.task_manager.stats
    assert (stats["created"], stats["completed"], stats["cancelled"]) == (4, 1, 1)
    assert (stats["not-found"], stats["refused:limit"], stats["result"], stats["cancel"]) == (3, 1, 1, 1)
    assert stats["get"] >= 4  # 3 failed lookups and wait()'s polling
    lines = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "mcp_ref.tasks"]
    who = "'user-1' via session"
    assert any(f"task {done.task_id} created for tools/call by {who}" in m for _, m in lines)
    assert any(f"tasks/result {done.task_id} by {who}" in m for _, m in lines)
    assert any(f"task {done.task_id} is completed" in m for _, m in lines)
    assert any(f"tasks/cancel {stuck.task_id} by {who}" in m for _, m in lines)
    failed = [m for level, m in lines if level == logging.WARNING and "unknown task 'guess'" in m]
    assert len(failed) == 3 and all(who in m for m in failed)
    assert any(level == logging.WARNING and "task refused" in m and "concurrent tasks" in m for level, m in lines)


@pytest.mark.req("basic/utilities/tasks#80")
async def test_task_operations_are_rate_limited_per_requestor(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, rate_limit=2.0, rate_burst=3, rate_max_wait=5.0)
        async with client_of(server) as alice, client_of(server) as bob:
            handle = await alice.call_tool_as_task("only_task")  # the first of a burst of 3
            start = trio.current_time()
            times = []
            for _ in range(4):
                await handle.get()
                times.append(trio.current_time() - start)
            # over the burst, each operation waits its turn: 2 a second
            assert times == [0, 0, 0.5, 1.0]
            codes: list[int | None] = []
            finished: list[float] = []

            async def poll() -> None:
                try:
                    await handle.get()
                    codes.append(None)
                except MCPError as e:
                    codes.append(e.code)
                finished.append(trio.current_time() - start)

            async with trio.open_nursery() as burst:
                for _ in range(12):
                    burst.start_soon(poll)
                await trio.sleep(0.1)
                # another requestor is not slowed down by alice
                with pytest.raises(MCPError) as info:
                    await bob.request("tasks/get", GetTaskRequestParams(task_id=handle.task_id))
                assert info.value.code == ErrorCode.INVALID_PARAMS
                assert trio.current_time() - start == pytest.approx(1.1)
            # ten could wait at most 5 s for their turn; two more would have waited longer: refused at once
            assert codes.count(None) == 10 and codes.count(ErrorCode.INVALID_REQUEST) == 2
            assert sorted(finished)[:2] == [1.0, 1.0] and max(finished) == pytest.approx(6.0)
            assert server.task_manager.stats["refused:rate"] == 2
        nursery.cancel_scope.cancel()


def test_rate_limit_settings_are_checked() -> None:
    for bad in ({"rate_limit": 0.0}, {"rate_burst": 0}, {"rate_max_wait": -1.0}):
        with pytest.raises(ValueError):
            TaskConfig(**bad)
    assert TaskConfig(rate_limit=None).rate_limit is None


@pytest.mark.req("basic/utilities/tasks#15", "basic/utilities/tasks#61")
async def test_tasks_result_answers_at_the_cancel_not_when_the_work_stops(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server = Server("stubborn")
        server.enable_tasks(nursery)
        stopped: list[float] = []

        @server.tool(task_support="optional")
        async def stubborn(ctx: Any, arguments: dict[str, Any]) -> str:
            with trio.CancelScope(shield=True):
                await trio.sleep(100)  # ignores the cancellation for a long time
                await ctx.progress(1)  # and reports progress after it: dropped, not an error
            stopped.append(trio.current_time())
            return "too late"

        async with client_of(server) as client:
            seen: list[float] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                seen.append(p)

            handle = await client.call_tool_as_task("stubborn", progress=on_progress)
            answered: list[float] = []

            async def fetch() -> None:
                with pytest.raises(TaskCancelled) as info:
                    await handle.result()
                cause = info.value.__cause__
                assert isinstance(cause, MCPError)
                assert cause.code == ErrorCode.INVALID_PARAMS and "cancelled" in cause.message
                answered.append(trio.current_time())

            start = trio.current_time()
            async with trio.open_nursery() as fetching:
                fetching.start_soon(fetch)
                await trio.sleep(5)
                await handle.cancel()
            assert answered == [start + 5]
            await trio.sleep(200)
            assert stopped == [start + 100] and (await handle.get()).status == "cancelled"
            assert seen == []
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#32", "basic/utilities/tasks#35")
async def test_input_required_lasts_until_every_input_request_is_answered(autojump_clock: trio.abc.Clock) -> None:
    async def user(ctx: Any, params: Any) -> ElicitResult:
        await trio.sleep(1 if params.message == "fast" else 10)
        return ElicitResult(action="accept", content={})

    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)

        @server.tool(task_support="optional")
        async def asks_twice(ctx: Any, arguments: dict[str, Any]) -> str:
            async def ask(message: str, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
                task_status.started()
                await ctx.elicit(ElicitRequestFormParams(message=message, requested_schema=SCHEMA))

            async with trio.open_nursery() as both:
                await both.start(ask, "fast")  # asked first: it made the task input_required
                both.start_soon(ask, "slow")
            return "both answered"

        async with client_of(server, elicitation=user) as client:
            handle = await client.call_tool_as_task("asks_twice")
            async with trio.open_nursery() as fetching:
                fetching.start_soon(handle.result)
                await trio.sleep(5)  # "fast" is answered, "slow" is not
                assert (await handle.get()).status == "input_required"
                await trio.sleep(10)
                assert (await handle.get()).status == "completed"
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#81")
async def test_a_closed_sessions_tasks_are_cancelled_and_deleted(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        manager = server.task_manager
        async with client_of(server) as alice, client_of(server) as bob:
            await alice.call_tool_as_task("slow")
            await alice.call_tool_as_task("only_task")
            await bob.call_tool_as_task("slow")
            assert await manager.store.count() == 3
        # both sessions are closed: nobody can reach their tasks again, they went with them
        await trio.testing.wait_all_tasks_blocked()
        assert await manager.store.count() == 0 and not manager._live
        assert manager.stats["session-closed"] == 3
        await trio.sleep(10)
        assert state["finished"] == 0  # the work was stopped, not left running to its ttl
        nursery.cancel_scope.cancel()
    # with an identity binding, tasks outlive the connection
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, binding=by_name)
        async with client_of(server, client_info=Implementation(name="alice", version="1")) as alice:
            handle = await alice.call_tool_as_task("slow")
        async with client_of(server, client_info=Implementation(name="bob", version="1")) as bob:
            payload = await bob.request("tasks/result", GetTaskPayloadRequestParams(task_id=handle.task_id))
            assert payload.extra["content"] == [{"type": "text", "text": "slow done"}]
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("waiting_in", ["wait", "result"])
async def test_a_failing_progress_callback_reaches_the_caller_not_the_session(
    autojump_clock: trio.abc.Clock, waiting_in: str
) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server) as client:
            seen: list[float] = []

            async def buggy(p: float, total: float | None, message: str | None) -> None:
                seen.append(p)
                if p == 2:
                    raise ValueError("bug in the callback")

            handle = await client.call_tool_as_task("slow", progress=buggy)
            with pytest.raises(ValueError, match="bug in the callback"):
                await (handle.wait() if waiting_in == "wait" else handle.result())
            assert trio.current_time() == pytest.approx(2)  # raised when it happened, not at the end
            assert isinstance(handle.callback_error, ValueError)
            # the task was cancelled; the session lives on; the error is raised once
            assert (await handle.get()).status == "cancelled"
            await client.ping()
            await trio.sleep(5)
            assert seen == [1, 2] and state["finished"] == 0
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#9")
@pytest.mark.parametrize(("version", "listed"), [("2025-11-25", True), ("2025-06-18", False), ("2025-03-26", False)])
async def test_task_only_tools_are_not_listed_for_revisions_without_tasks(
    autojump_clock: trio.abc.Clock, version: str, listed: bool
) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server, protocol_version=version) as client:
            names = {t.name for t in await client.list_all_tools()}
            assert ("only_task" in names) is listed and {"slow", "plain"} <= names
            if not listed:  # and calling it anyway is still refused
                with pytest.raises(MCPError) as info:
                    await client.call_tool("only_task")
                assert info.value.code == ErrorCode.METHOD_NOT_FOUND
        nursery.cancel_scope.cancel()


async def test_a_task_call_to_an_unknown_tool_is_refused_at_once(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with client_of(server) as client:
            with pytest.raises(MCPError) as info:
                await client.call_tool_as_task("no_such_tool")
            assert info.value.code == ErrorCode.INVALID_PARAMS and "Unknown tool" in info.value.message
            assert await client.list_all_tasks() == []
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#59")
async def test_listing_order_continues_after_a_stores_earlier_tasks(autojump_clock: trio.abc.Clock) -> None:
    store = InMemoryTaskStore()
    old = TaskRecord(
        task_id="from-before-a-restart",
        owner=None,
        method="tools/call",
        status="completed",
        created_at=0.0,
        last_updated_at=0.0,
        ttl_ms=None,
        poll_interval_ms=None,
        expires_at=None,
    )
    old = await store.create(old, TaskLimits())
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        server.enable_tasks(nursery, store=store, config=TaskConfig(binding="none", list_tasks=True))
        async with client_of(server) as client:
            new = await client.call_tool_as_task("slow")
            assert [t.task_id for t in await client.list_all_tasks()] == [old.task_id, new.task_id]
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#48", "basic/utilities/tasks#65")
async def test_a_tasks_requests_and_notifications_without_params_carry_the_related_task_key(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with trio.open_nursery() as nursery:
        server, _ = task_server(nursery)

        @server.tool(task_support="optional")
        async def asks_roots(ctx: Any, arguments: dict[str, Any]) -> str:
            roots = await ctx.list_roots()  # roots/list has no params of its own
            await ctx.notify("notifications/tools/list_changed")
            return f"{len(roots.roots)} roots"

        async with routed_pair(server, roots=[Root(uri="file:///tmp")]) as (client, rec):
            handle = await client.call_tool_as_task("asks_roots")
            result = await handle.wait()
            assert result.content[0].text == "1 roots"
        nursery.cancel_scope.cancel()
    related = {RELATED_TASK_META_KEY: {"taskId": handle.task_id}}
    (ask,) = [m for m in rec.sent if m.get("method") == "roots/list"]
    assert ask["params"] == {"_meta": related}
    (note,) = [m for m in rec.sent if m.get("method") == "notifications/tools/list_changed"]
    assert note["params"] == {"_meta": related}


class ForgetsCancelled(InMemoryTaskStore):
    """A receiver that deletes a task as soon as it is cancelled (tasks#63 allows it)."""

    async def move(
        self, task_id: str, status: str, *, wall: float, message: str | None = None, outcome: Any = None
    ) -> TaskRecord:
        record = await super().move(task_id, status, wall=wall, message=message, outcome=outcome)
        if status == "cancelled":
            await self.delete(task_id)
        return record


@pytest.mark.req("basic/utilities/tasks#63", "basic/utilities/tasks#64")
async def test_the_requestor_does_not_rely_on_a_cancelled_task_being_kept(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server = Server("forgetful")
        server.enable_tasks(nursery, store=ForgetsCancelled())

        @server.tool(task_support="optional")
        async def long(ctx: Any, arguments: dict[str, Any]) -> str:
            await trio.sleep_forever()
            return "never"

        async with routed_pair(server) as (client, rec):
            handle = await client.call_tool_as_task("long")
            task = await handle.cancel()
            # the final state comes from the tasks/cancel answer itself: nothing is fetched afterwards
            assert (task.status, task.status_message) == ("cancelled", "The task was cancelled by request.")
            assert handle.status == "cancelled" and handle.task == task
            with pytest.raises(MCPError) as info:
                await handle.get()  # the receiver kept nothing, as it may
            assert info.value.code == ErrorCode.INVALID_PARAMS
        nursery.cancel_scope.cancel()
    asked = [m["method"] for m in rec.received if "method" in m and m["method"].startswith("tasks/")]
    assert asked == ["tasks/cancel", "tasks/get"]


@pytest.mark.req("basic/utilities/tasks#7", "basic/utilities/tasks#45")
async def test_the_work_sees_the_underlying_request_without_its_task_metadata(autojump_clock: trio.abc.Clock) -> None:
    seen: list[Any] = []
    async with trio.open_nursery() as nursery:
        server = Server("params")
        server.enable_tasks(nursery)

        @server.tool(task_support="optional")
        async def look(ctx: Any, arguments: dict[str, Any]) -> str:
            seen.extend([ctx.params, ctx.params])
            return "looked"

        async with client_of(server) as client:
            handle = await client.call_tool_as_task("look", {"x": 1}, ttl=60_000)
            assert (await handle.result()).content == [TextContent(text="looked")]
        nursery.cancel_scope.cancel()
    first, again = seen
    # params passed on (to another server, say) make a plain call there, not a task
    assert first.task is None and first.name == "look" and first.arguments == {"x": 1}
    assert again is first


async def test_a_session_holds_work_only_while_tasks_bound_to_it_are_kept(autojump_clock: trio.abc.Clock) -> None:
    # (the HTTP server never reclaims a session its client will come back to for a task)
    async with trio.open_nursery() as nursery:
        server, _ = task_server(nursery)
        manager = server.task_manager
        assert manager is not None
        async with client_of(server) as client:
            (session,) = server.sessions
            assert not manager.holds_tasks_for(session)
            await (await client.call_tool_as_task("plain_task", ttl=1_000)).result()
            assert manager.holds_tasks_for(session)
            await trio.sleep(2)  # its only task expired and was deleted
            assert not manager.holds_tasks_for(session)
        nursery.cancel_scope.cancel()
