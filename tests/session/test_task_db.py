"""The durable task store: tasks in a SQLite file outlive the server that ran them."""

import os
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.basic.utilities.tasks import TaskRecord
from mcp_ref.errors import MCPError
from mcp_ref.schema.tasks import GetTaskPayloadRequestParams, GetTaskRequestParams
from mcp_ref.session import ClientSession, RequestContext, Server, open_stdio_client
from mcp_ref.session.task_db import RESTART_MESSAGE, SqliteTaskStore, open_sqlite_task_store
from mcp_ref.session.tasks import TaskConfig
from mcp_ref.testing import memory_session_pair

ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def durable_server(path: Path, **store_options: Any) -> AsyncIterator[tuple[Server, SqliteTaskStore]]:
    """A server whose tasks are kept in ``path``: ``quick`` answers at once, ``slow`` never."""
    async with open_sqlite_task_store(path, **store_options) as store, trio.open_nursery() as nursery:
        server = Server("durable")
        server.enable_tasks(nursery, store=store, config=TaskConfig(binding="none"))

        @server.tool(task_support="optional")
        async def quick(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return f"quick {arguments.get('n')}"

        @server.tool(task_support="optional")
        async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            await trio.sleep_forever()
            return "never"

        yield server, store
        nursery.cancel_scope.cancel()


def query(path: Path, sql: str, *params: Any) -> list[Any]:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(sql, params).fetchall()


async def task_get(client: ClientSession, task_id: str) -> Any:
    return await client.session.request("tasks/get", GetTaskRequestParams(task_id=task_id))


async def task_result(client: ClientSession, task_id: str) -> Any:
    return await client.session.request("tasks/result", GetTaskPayloadRequestParams(task_id=task_id))


@pytest.mark.req("basic/utilities/tasks#45", "basic/utilities/tasks#47")
async def test_a_second_server_on_the_same_file_answers_for_finished_tasks(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    async with durable_server(path) as (first, store), memory_session_pair(first) as client:
        done = await client.call_tool_as_task("quick", {"n": 1})
        assert (await done.result()).content[0].text == "quick 1"
        running = await client.call_tool_as_task("slow")
        await store.flushed()
        # another server over the same file, as after a restart (this one is still running)
        async with durable_server(path) as (second, second_store), memory_session_pair(second) as other:
            assert second_store.interrupted == 1
            # both loaded tasks count against the room of their owner (None: binding="none"), neither runs
            assert second_store.counts(None) == (2, 0)
            task = await task_get(other, done.task_id)
            assert task.status == "completed"
            payload = await task_result(other, done.task_id)
            assert payload.extra["content"] == [{"type": "text", "text": "quick 1"}]
            # the unfinished task's work died with its process: failed, saying so
            task = await task_get(other, running.task_id)
            assert task.status == "failed" and task.status_message == RESTART_MESSAGE
            with pytest.raises(MCPError) as failed:
                await task_result(other, running.task_id)
            assert failed.value.code == -32603 and RESTART_MESSAGE in failed.value.message
            # new tasks go on after the old ones
            assert (await (await other.call_tool_as_task("quick", {"n": 2})).result()).content[0].text == "quick 2"


async def test_tasks_past_their_ttl_are_dropped_when_the_file_is_opened(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    now = 1_000_000.0
    async with durable_server(path, wall_clock=lambda: now) as (server, _), memory_session_pair(server) as client:
        short = await client.call_tool_as_task("quick", ttl=60_000)
        long = await client.call_tool_as_task("quick", ttl=3_600_000)
        await short.result()
        await long.result()
    now += 600  # ten minutes later: the first task's minute is over, the hour of the second is not
    async with durable_server(path, wall_clock=lambda: now) as (server, store), memory_session_pair(server) as client:
        assert [r.task_id for r in store] == [long.task_id]
        with pytest.raises(MCPError) as gone:
            await task_get(client, short.task_id)
        assert gone.value.code == -32602
        assert (await task_get(client, long.task_id)).status == "completed"
    assert query(path, "SELECT task_id FROM tasks") == [(long.task_id,)]  # and the file forgot it too


async def test_tasks_from_before_a_restart_still_expire(tmp_path: Path, autojump_clock: trio.abc.Clock) -> None:
    path = tmp_path / "tasks.db"
    now = 1_000_000.0
    async with durable_server(path, wall_clock=lambda: now) as (server, _), memory_session_pair(server) as client:
        task = await client.call_tool_as_task("quick", ttl=60_000)
        await task.result()
    now += 10  # restarted ten seconds later: fifty to go, and no new task starts the expiry on its own
    async with durable_server(path, wall_clock=lambda: now) as (server, store), memory_session_pair(server) as client:
        assert (await task_get(client, task.task_id)).status == "completed"
        await trio.sleep(51)
        assert len(store) == 0
        with pytest.raises(MCPError):
            await task_get(client, task.task_id)


async def test_a_store_refuses_owners_it_cannot_write_down(tmp_path: Path) -> None:
    async with open_sqlite_task_store(tmp_path / "tasks.db") as store:
        record = TaskRecord(
            task_id="t",
            owner=object(),  # a session, as binding="session" gives
            method="tools/call",
            status="working",
            created_at=0,
            last_updated_at=0,
            ttl_ms=None,
            poll_interval_ms=None,
            expires_at=None,
        )
        with pytest.raises(TypeError, match="owners"):
            store.add(record)
        assert len(store) == 0


def test_the_sqlite_file_is_in_wal_mode(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_sqlite_task_store(tmp_path / "tasks.db"):
            pass

    trio.run(main)
    assert query(tmp_path / "tasks.db", "PRAGMA journal_mode") == [("wal",)]


# -- the everything example, restarted for real ---------------------------------------------------


async def wait_for_status(path: Path, task_id: str, status: str) -> None:
    """Until the server process has written ``status`` for the task (it writes behind)."""
    with trio.fail_after(10):
        while True:
            try:
                if query(path, "SELECT status FROM tasks WHERE task_id = ?", task_id) == [(status,)]:
                    return
            except sqlite3.OperationalError:
                pass  # (the table is not there yet)
            await trio.sleep(0.02)


@asynccontextmanager
async def everything(path: Path) -> AsyncIterator[ClientSession]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["-m", "mcp_ref.examples.everything", "--task-db", str(path)]
    async with open_stdio_client(sys.executable, args, env=env, stderr="discard") as client:
        yield client


async def test_the_everything_server_killed_and_restarted_keeps_its_tasks(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    async with everything(path) as client:
        done = await client.call_tool_as_task("batch_job", {"seconds": 0})
        result = await done.result()
        running = await client.call_tool_as_task("count_slowly", {"count": 3600})
        await wait_for_status(path, done.task_id, "completed")
        await wait_for_status(path, running.task_id, "working")
        process = client.session.channel.process  # type: ignore[attr-defined]
        process.kill()  # no shutdown: what is in the file is all there is
        await process.wait()
    async with everything(path) as client:
        task = await task_get(client, done.task_id)
        assert task.status == "completed"
        payload = await task_result(client, done.task_id)
        assert payload.extra["structuredContent"] == result.structured_content
        task = await task_get(client, running.task_id)
        assert task.status == "failed" and task.status_message == RESTART_MESSAGE
        with pytest.raises(MCPError, match="restarted"):
            await task_result(client, running.task_id)
