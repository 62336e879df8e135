"""The durable task store: tasks in a SQLite file outlive the server that ran them.

The store's contract (creation, limits, compare-and-set, expiry, announcements)
is tested on every store in test_task_store.py; here what is particular to a
file: one server per file, what a restart finds, the layout, and real server
processes killed with ``kill -9``.
"""

import os
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.basic.utilities.tasks import TaskLimits, TaskRecord
from mcp_ref.errors import MCPError
from mcp_ref.schema.tasks import CancelTaskRequestParams, GetTaskPayloadRequestParams, GetTaskRequestParams
from mcp_ref.session import ClientSession, RequestContext, Server, SessionConfig, open_stdio_client
from mcp_ref.session.task_db import RESTART_MESSAGE, SqliteTaskStore, TaskStoreLocked, open_sqlite_task_store
from mcp_ref.session.tasks import TaskConfig
from mcp_ref.testing import memory_session_pair

from .test_task_store import START, Clock, record

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


async def test_a_second_store_on_the_same_file_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    async with open_sqlite_task_store(path) as first:
        await first.create(record("t"), TaskLimits())
        with pytest.raises(TaskStoreLocked, match=f"in use by another server \\(process {os.getpid()}"):
            async with open_sqlite_task_store(path):
                pass  # (never reached: the file is taken)
        assert (await first.get("t")) is not None  # the refused one touched nothing
    async with open_sqlite_task_store(path) as again:
        assert (await again.get("t")) is not None


def other_name(path: Path, how: str) -> Path:
    """Another name for the file at ``path``: a symlink or a hard link beside it (``same``: ``path``)."""
    if how == "same":
        return path
    alias = path.with_name(f"{how}-{path.name}")
    if how == "symlink":
        alias.symlink_to(path)
    else:
        os.link(path, alias)
    return alias


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
async def test_another_name_for_the_same_file_is_refused_too(tmp_path: Path, how: str) -> None:
    path = tmp_path / "tasks.db"
    async with open_sqlite_task_store(path) as first:
        await first.create(record("t"), TaskLimits())
        alias = other_name(path, how)
        with pytest.raises(TaskStoreLocked, match=f"in use by another server \\(process {os.getpid()}"):
            async with open_sqlite_task_store(alias):
                pass  # (never reached: the file is taken, whatever its name)
        # another process is refused by the file's lock, naming this one
        refused = await trio.run_process(
            [sys.executable, "-c", OPEN_IN_ANOTHER_PROCESS, str(alias)],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        assert refused.stdout.decode().strip() == f"refused: process {os.getpid()}", refused.stderr
        await first.create(record("u"), TaskLimits())
        assert (await first.get("t")) is not None  # the refused ones touched nothing
    async with open_sqlite_task_store(alias) as again:  # (free once the first closed)
        assert (await again.get("u")) is not None


#: opens the task file named by argv[1] and says whether it was refused, and whom it names
OPEN_IN_ANOTHER_PROCESS = """
import re, sys, trio
from mcp_ref.session.task_db import TaskStoreLocked, open_sqlite_task_store

async def main():
    try:
        async with open_sqlite_task_store(sys.argv[1]):
            print("opened")
    except TaskStoreLocked as e:
        print("refused: " + re.search(r"process \\w+", str(e)).group(0))

trio.run(main)
"""


@pytest.mark.req("basic/utilities/tasks#45", "basic/utilities/tasks#47")
async def test_a_restarted_server_answers_for_finished_tasks_and_fails_unfinished_ones(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    async with durable_server(path) as (first, store), memory_session_pair(first, era="legacy") as client:
        done = await client.call_tool_as_task("quick", {"n": 1})
        assert (await done.result()).content[0].text == "quick 1"
        # a task whose server dies before it finishes: its row says working, and nothing runs it
        await store.create(record("orphan", requestor=None, owner=None), TaskLimits())
        # and one cancelled before it produced anything
        await store.create(record("called-off", requestor=None, owner=None), TaskLimits())
        await store.move("called-off", "cancelled", wall=START + 1)
    async with durable_server(path) as (second, store), memory_session_pair(second, era="legacy") as other:
        assert store.interrupted == 1
        # a cancelled task has no result to give, after a restart too: -32602, saying so
        with pytest.raises(MCPError) as none:
            await task_result(other, "called-off")
        assert none.value.code == -32602 and "was cancelled: no result" in none.value.message
        task = await task_get(other, done.task_id)
        assert task.status == "completed"
        payload = await task_result(other, done.task_id)
        assert payload.extra["content"] == [{"type": "text", "text": "quick 1"}]
        # the unfinished task's work died with its process: failed, saying so
        task = await task_get(other, "orphan")
        assert task.status == "failed" and task.status_message == RESTART_MESSAGE
        with pytest.raises(MCPError) as failed:
            await task_result(other, "orphan")
        assert failed.value.code == -32603 and RESTART_MESSAGE in failed.value.message
        # new tasks go on after the old ones
        new = await other.call_tool_as_task("quick", {"n": 2})
        assert (await new.result()).content[0].text == "quick 2"
        assert query(path, "SELECT task_id FROM tasks ORDER BY seq") == [
            (done.task_id,),
            ("orphan",),
            ("called-off",),
            (new.task_id,),
        ]


async def test_tasks_past_their_ttl_are_gone_when_the_file_is_opened_again(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    clock = Clock()
    async with (
        durable_server(path, wall_clock=clock) as (server, _),
        memory_session_pair(server, era="legacy") as client,
    ):
        short = await client.call_tool_as_task("quick", ttl=60_000)
        long = await client.call_tool_as_task("quick", ttl=3_600_000)
        await short.result()
        await long.result()
    clock.now += 600  # ten minutes later: the first task's minute is over, the hour of the second is not
    async with (
        durable_server(path, wall_clock=clock) as (server, store),
        memory_session_pair(server, era="legacy") as client,
    ):
        assert await store.count() == 1
        with pytest.raises(MCPError) as gone:
            await task_get(client, short.task_id)
        assert gone.value.code == -32602
        assert (await task_get(client, long.task_id)).status == "completed"
    assert query(path, "SELECT task_id FROM tasks") == [(long.task_id,)]  # and the file forgot it too


@pytest.fixture
def patient_clock() -> trio.testing.MockClock:
    """Virtual time that jumps once the run has been idle for 50 ms of real time: the store works
    in threads, and a plain autojump clock jumps to the next deadline while one runs."""
    return trio.testing.MockClock(autojump_threshold=0.05)


async def test_tasks_from_before_a_restart_still_expire(tmp_path: Path, patient_clock: trio.abc.Clock) -> None:
    path = tmp_path / "tasks.db"
    # (a thread slower than the threshold lets the clock jump: no request timeout near, and the
    # test looks for the purge rather than expecting it at an instant)
    patient = SessionConfig(request_timeout=1e9, max_request_timeout=1e9)

    def wall() -> float:
        return START + trio.current_time()

    async with (
        durable_server(path, wall_clock=wall) as (server, _),
        memory_session_pair(server, config=patient, era="legacy") as c,
    ):
        task = await c.call_tool_as_task("quick", ttl=60_000)
        await task.result()
    await trio.sleep(10)  # restarted ten seconds later: fifty to go, and no new task starts the expiry on its own
    async with (
        durable_server(path, wall_clock=wall) as (server, store),
        memory_session_pair(server, config=patient, era="legacy") as c,
    ):
        restarted = trio.current_time()
        assert (await task_get(c, task.task_id)).status == "completed"
        await trio.sleep(49)
        assert await store.count() == 1
        while await store.count():
            await trio.sleep(0.5)
        assert 50 <= trio.current_time() - restarted <= 52
        with pytest.raises(MCPError):
            await task_get(c, task.task_id)


async def test_a_file_of_the_earlier_layout_is_brought_to_this_one(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    with closing(sqlite3.connect(path)) as db, db:
        # the layout of mcp_ref before the per-user binding (owners as JSON, 'null' for nobody)
        db.execute(
            "CREATE TABLE tasks (task_id TEXT PRIMARY KEY, owner TEXT NOT NULL, method TEXT NOT NULL,"
            " status TEXT NOT NULL, status_message TEXT, created_at REAL NOT NULL, last_updated_at REAL NOT NULL,"
            " ttl_ms INTEGER, poll_interval_ms INTEGER, expires_at REAL, progress_token TEXT, outcome TEXT,"
            " seq INTEGER NOT NULL)"
        )
        outcome = '{"result": {"content": [{"type": "text", "text": "old"}]}}'
        db.execute(
            "INSERT INTO tasks VALUES ('old', 'null', 'tools/call', 'completed', NULL, 1.0, 2.0, NULL, 1000,"
            " NULL, NULL, ?, 7)",
            (outcome,),
        )
        db.execute(
            "INSERT INTO tasks VALUES ('mine', '\"alice\"', 'tools/call', 'completed', NULL, 1.0, 2.0, NULL, 1000,"
            " NULL, NULL, NULL, 8)"
        )
    async with open_sqlite_task_store(path) as store:
        old = await store.get("old")
        assert old is not None and (old.owner, old.seq, old.status, old.version) == (None, 7, "completed", 1)
        assert old.outcome.content[0].text == "old"
        assert [r.task_id for r in await store.owned_by('"alice"')] == ["mine"]
        new = await store.create(record("new"), TaskLimits())
        assert new.seq == 9
    assert query(path, "PRAGMA user_version") == [(1,)]


def test_the_sqlite_file_is_in_wal_mode(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_sqlite_task_store(tmp_path / "tasks.db"):
            pass

    trio.run(main)
    assert query(tmp_path / "tasks.db", "PRAGMA journal_mode") == [("wal",)]


async def test_synchronous_is_normal_or_full(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        async with open_sqlite_task_store(tmp_path / "tasks.db", synchronous="OFF"):  # type: ignore[arg-type]
            pass


# -- users: tasks stay theirs across a restart, each has a quota -------------------------------------


@asynccontextmanager
async def user_session(server: Server, subject: str) -> AsyncIterator[ClientSession]:
    """A client session whose transport authenticated ``subject`` (as serve_http(auth=...) does)."""
    from mcp_ref.basic.transports.memory import memory_channel_pair
    from mcp_ref.session import open_session

    client_end, server_end = memory_channel_pair()
    server_end.principal = ("https://as.example", subject, "app")  # type: ignore[attr-defined]
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        async with open_session(client_end, era="legacy") as client:
            yield client
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def user_server(path: Path, **config: Any) -> AsyncIterator[Server]:
    async with open_sqlite_task_store(path) as store, trio.open_nursery() as nursery:
        server = Server("users")
        server.enable_tasks(nursery, store=store, config=TaskConfig(**config))

        @server.tool(task_support="optional")
        async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            await trio.sleep(arguments.get("seconds", 3600))
            return f"slept for {ctx.session.principal[1]}"

        yield server
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#74", "basic/utilities/tasks#78", "basic/utilities/tasks#79")
async def test_a_task_stays_its_users_across_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    async with user_server(path) as server, user_session(server, "alice") as alice:
        done = await alice.call_tool_as_task("slow", {"seconds": 0})
        await done.result()
    async with user_server(path) as server, user_session(server, "alice") as alice, user_session(server, "bob") as bob:
        # another process, another session: alice still reaches her task, bob does not
        assert (await task_get(alice, done.task_id)).status == "completed"
        assert [t.task_id for t in await alice.list_all_tasks()] == [done.task_id]
        assert await bob.list_all_tasks() == []
        params = {
            "tasks/get": GetTaskRequestParams(task_id=done.task_id),
            "tasks/result": GetTaskPayloadRequestParams(task_id=done.task_id),
            "tasks/cancel": CancelTaskRequestParams(task_id=done.task_id),
        }
        for method, param in params.items():
            with pytest.raises(MCPError) as refused:
                await bob.session.request(method, param)
            assert refused.value.code == -32602, method
        # and bob cannot wait on (nor cancel) one of hers that still runs
        running = await alice.call_tool_as_task("slow")
        with trio.move_on_after(0.5) as waited:
            with pytest.raises(MCPError):
                await task_result(bob, running.task_id)
        assert not waited.cancelled_caught  # refused at once, not left waiting
        with pytest.raises(MCPError):
            await bob.session.request("tasks/cancel", CancelTaskRequestParams(task_id=running.task_id))
        assert (await task_get(alice, running.task_id)).status == "working"
    stored = {owner for (owner,) in query(path, "SELECT DISTINCT owner FROM tasks")}
    assert stored == {'["principal",["https://as.example","alice","app"]]'}


@pytest.mark.req("basic/utilities/tasks#81")
@pytest.mark.parametrize("binding", ["session", "none"])
async def test_each_user_has_a_quota_of_their_own(tmp_path: Path, binding: str) -> None:
    async with (
        user_server(tmp_path / "tasks.db", binding=binding, max_tasks_per_requestor=3) as server,
        user_session(server, "alice") as alice,
        user_session(server, "bob") as bob,
    ):
        for _ in range(3):
            await alice.call_tool_as_task("slow")
        with pytest.raises(MCPError, match="at most 3 concurrent tasks per requestor") as refused:
            await alice.call_tool_as_task("slow")
        assert refused.value.code == -32600
        # alice's running tasks do not refuse bob's, whether or not tasks are bound to users
        for _ in range(3):
            await bob.call_tool_as_task("slow")


# -- real server processes ---------------------------------------------------------------------------


def everything_args(path: Path) -> list[str]:
    return ["-m", "mcp_ref.examples.everything", "--task-db", str(path)]


@asynccontextmanager
async def everything(path: Path) -> AsyncIterator[ClientSession]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with open_stdio_client(
        sys.executable, everything_args(path), env=env, stderr="discard", era="legacy"
    ) as client:
        yield client


async def kill(client: ClientSession) -> None:
    """``kill -9`` the server process: what is in the file is all there is."""
    process = client.session.channel.process  # type: ignore[attr-defined]
    process.kill()
    await process.wait()


@pytest.mark.subprocess
@pytest.mark.req("basic/utilities/tasks#43")
async def test_no_acknowledged_task_is_lost_to_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    acknowledged: list[str] = []
    async with everything(path) as client:

        async def create(n: int) -> None:
            # finished at once or still running when the process dies: either way it was acknowledged
            handle = await client.call_tool_as_task("batch_job", {"seconds": n % 3})
            acknowledged.append(handle.task_id)

        async with trio.open_nursery() as nursery:
            for n in range(100):
                nursery.start_soon(create, n)
                if n % 10 == 9:
                    await trio.sleep(0)
        assert len(acknowledged) == 100
        await kill(client)  # at once, after the last acknowledgement
    async with everything(path) as client:
        statuses = [(await task_get(client, task_id)).status for task_id in acknowledged]
    lost = len(acknowledged) - len(statuses)
    assert lost == 0 and set(statuses) <= {"completed", "failed"}
    assert "failed" in statuses  # the ones still running when it died (their work is gone)


@pytest.mark.subprocess
@pytest.mark.req("basic/utilities/tasks#45", "basic/utilities/tasks#62")
@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
async def test_a_second_server_process_on_the_file_never_loses_the_firsts_results(tmp_path: Path, how: str) -> None:
    path = tmp_path / "tasks.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with everything(path) as first:
        done = await first.call_tool_as_task("batch_job", {"seconds": 0})
        result = await done.result()
        running = await first.call_tool_as_task("count_slowly", {"count": 3600})
        # a second server on the same file (by any name) refuses to start, saying why, and touches nothing
        second = await trio.run_process(
            [sys.executable, *everything_args(other_name(path, how))],
            env=env,
            stdin=b"",
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        assert second.returncode == 1
        assert b"cannot start: the task file is in use by another server" in second.stderr
        # the first server's tasks are as it left them: its running task is not failed behind its back
        assert (await task_get(first, running.task_id)).status == "working"
        assert (await task_get(first, done.task_id)).status == "completed"
        await kill(first)
    async with everything(path) as third:
        payload = await task_result(third, done.task_id)
        assert payload.extra["structuredContent"] == result.structured_content
        task = await task_get(third, running.task_id)
        assert task.status == "failed" and task.status_message == RESTART_MESSAGE
        with pytest.raises(MCPError, match="Task interrupted: the server running it stopped before the task finished"):
            await task_result(third, running.task_id)


async def test_a_task_record_is_a_snapshot() -> None:
    task = record("t")
    moved = task.moved("completed", START + 1)
    assert (task.status, task.version) == ("working", 0) and (moved.status, moved.version) == ("completed", 1)
    with pytest.raises(AttributeError):
        task.status = "failed"  # type: ignore[misc]
    assert isinstance(moved, TaskRecord)
