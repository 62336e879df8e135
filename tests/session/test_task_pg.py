"""Tasks in a real PostgreSQL: several servers (replicas) share them.

The store's contract is tested on every store in test_task_store.py (this
database included); here what sharing means: a task created by one server is
read, waited on and cancelled through another, a server killed with
``kill -9`` loses no acknowledged task and its running tasks are failed by the
others, and a database that goes away is an error on the requests that need it.
"""

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.basic.utilities.tasks import TaskLimits
from mcp_ref.errors import MCPError
from mcp_ref.schema.tasks import CancelTaskRequestParams
from mcp_ref.session import ClientSession, RequestContext, Server, open_stdio_client
from mcp_ref.session.task_store import RESTART_MESSAGE, TaskLimitReached, TaskStoreUnavailable
from mcp_ref.session.tasks import TaskConfig
from mcp_ref.testing import memory_session_pair
from mcp_ref.testing.postgres import PostgresServer

from .test_task_db import task_get, task_result
from .test_task_store import record

pytest.importorskip("psycopg", reason="the postgres extra (psycopg 3) is not installed")

from mcp_ref.session.task_pg import PostgresTaskStore, open_postgres_task_store

ROOT = Path(__file__).resolve().parents[2]
#: the core tasks tested here are the 2025-11-25 revision's (2026-07-28 has the tasks extension)
LEGACY = "2025-11-25"


@asynccontextmanager
async def replica(conninfo: str, table: str, state: dict[str, Any]) -> AsyncIterator[tuple[Server, PostgresTaskStore]]:
    """One server on the shared task table: ``slow`` runs until released (or cancelled)."""
    async with open_postgres_task_store(conninfo, table=table, sweep_interval=0.2) as store:
        async with trio.open_nursery() as nursery:
            server = Server("replica")
            server.enable_tasks(nursery, store=store, config=TaskConfig(binding="none"))

            @server.tool(task_support="optional")
            async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
                state["started"] += 1
                try:
                    await state["release"].wait()
                except trio.Cancelled:
                    state["cancelled"] += 1
                    raise
                return f"done {arguments.get('n')}"

            yield server, store
            nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#46", "basic/utilities/tasks#61")
async def test_a_task_is_read_waited_on_and_cancelled_through_another_replica(postgres: PostgresServer) -> None:
    table = postgres.new_table()
    state: dict[str, Any] = {"release": trio.Event(), "started": 0, "cancelled": 0}
    async with (
        replica(postgres.conninfo, table, state) as (a, _),
        replica(postgres.conninfo, table, state) as (b, _),
        memory_session_pair(a, protocol_version=LEGACY) as on_a,
        memory_session_pair(b, protocol_version=LEGACY) as on_b,
    ):
        first = await on_a.call_tool_as_task("slow", {"n": 1})
        second = await on_a.call_tool_as_task("slow", {"n": 2})
        # replica b knows both tasks at once: a answered only once they were committed
        assert (await task_get(on_b, first.task_id)).status == "working"
        async with trio.open_nursery() as nursery:
            results: list[Any] = []

            async def wait_on_b() -> None:
                results.append(await task_result(on_b, first.task_id))

            nursery.start_soon(wait_on_b)
            await trio.sleep(0.2)
            assert results == []  # b's tasks/result blocks on a task a runs
            # cancelled through b: a stops the work, and b's waiter answers
            cancelled = await on_b.session.request("tasks/cancel", CancelTaskRequestParams(task_id=second.task_id))
            assert cancelled.status == "cancelled"
            with trio.fail_after(10):
                while state["cancelled"] < 1:
                    await trio.sleep(0.02)
            assert (await task_get(on_a, second.task_id)).status == "cancelled"
            state["release"].set()  # a finishes the first one: b's waiter has its result
        (payload,) = results
        assert payload.extra["content"] == [{"type": "text", "text": "done 1"}]
    assert state == {"release": state["release"], "started": 2, "cancelled": 1}


@pytest.mark.req("basic/utilities/tasks#61")
async def test_a_cancel_made_while_the_runners_listener_was_cut_off_still_stops_the_work(
    postgres: PostgresServer,
) -> None:
    import psycopg

    table = postgres.new_table()
    state: dict[str, Any] = {"release": trio.Event(), "started": 0, "cancelled": 0}
    async with (
        replica(postgres.conninfo, table, state) as (a, a_store),
        open_postgres_task_store(postgres.conninfo, table=table, sweep_interval=3600) as b_store,
        memory_session_pair(a, protocol_version=LEGACY) as on_a,
    ):
        task = await on_a.call_tool_as_task("slow")
        with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
            # a's listening connection goes (a network cut, a database restart) ...
            cut = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s"
                " AND query LIKE 'LISTEN%%'",
                (f"mcp_ref tasks {a_store.runner}",),
            ).fetchall()
            assert cut == [(True,)]
            # ... and the task is cancelled through b before a listens again: that notification is lost
            await b_store.move(task.task_id, "cancelled", wall=0.0, message="cancelled through b")
        # a listens again, reads its running tasks again, and stops the cancelled one's work
        with trio.fail_after(20):
            while state["cancelled"] < 1:
                await trio.sleep(0.05)
        assert (await task_get(on_a, task.task_id)).status == "cancelled"


async def test_a_runner_is_taken_for_gone_only_when_its_lock_stays_free_for_the_grace(postgres: PostgresServer) -> None:
    # a listener that reconnects lets go of its runner's lock for a moment: another replica
    # sweeping then must not fail the tasks of a live replica (the gate saw that race under load)
    table = postgres.new_table()
    limits = TaskLimits(running=5, kept=50, total=500)
    async with open_postgres_task_store(postgres.conninfo, table=table, sweep_interval=3600) as gone:
        await gone.create(record("orphan"), limits)
    # its process is gone now (its lock with it), its task still "working"
    async with open_postgres_task_store(
        postgres.conninfo, table=table, sweep_interval=3600, sweep_grace=3600
    ) as sweeper:
        assert await sweeper.sweep() == 0  # free once: a suspect, not yet gone
        assert await sweeper.sweep() == 0  # free within the grace: still only a suspect
        assert (await sweeper.get("orphan")).status == "working"  # type: ignore[union-attr]
        sweeper.sweep_grace = 0.0
        # free for the whole grace: gone, its task failed by this sweep (the store's own first
        # sweep was done before open_postgres_task_store returned: it cannot run now, late)
        assert await sweeper.sweep() == 1
        assert sweeper.interrupted == 1
        failed = await sweeper.get("orphan")
        assert failed is not None and failed.status == "failed" and failed.status_message == RESTART_MESSAGE


async def test_a_database_that_goes_away_is_an_error_on_the_requests_that_need_it(postgres: PostgresServer) -> None:
    table = postgres.new_table()
    state: dict[str, Any] = {"release": trio.Event(), "started": 0, "cancelled": 0}
    async with (
        replica(postgres.conninfo, table, state) as (server, store),
        memory_session_pair(server, protocol_version=LEGACY) as client,
    ):
        done = await client.call_tool_as_task("slow", {"n": 1})
        postgres.stop()
        try:
            with trio.fail_after(30):
                with pytest.raises(TaskStoreUnavailable):
                    await store.get(done.task_id)
                with pytest.raises(MCPError) as failed:
                    await task_get(client, done.task_id)
                assert failed.value.code == -32603 and "task store is unavailable" in failed.value.message
                with pytest.raises(MCPError) as refused:
                    await client.call_tool_as_task("slow", {"n": 2})
                assert refused.value.code == -32603
                await client.ping()  # the session, and the server, go on
        finally:
            postgres.start()
        # the database is back: the pool connects again, the listener too, the work's result is stored
        state["release"].set()
        with trio.fail_after(30):
            while (await task_get(client, done.task_id)).status != "completed":
                await trio.sleep(0.1)
        assert (await done.result()).content[0].text == "done 1"


async def test_opening_without_the_database_fails_at_once_saying_why(postgres: PostgresServer) -> None:
    dead = postgres.conninfo.replace(f"port={postgres.port}", "port=1") + " password=secret"
    with trio.fail_after(30), pytest.raises(TaskStoreUnavailable) as refused:
        async with open_postgres_task_store(dead, connect_timeout=2):
            pass
    # not the words a client would get ("the task store is unavailable; retry later"): the cause,
    # where, and no password
    message = str(refused.value)
    assert message.startswith("cannot open the task store at host=127.0.0.1 port=1 ") and "refused" in message
    assert "secret" not in message and "password=***" in message


async def test_the_url_may_carry_the_table_and_the_sweep_as_the_everything_example_takes_it(
    postgres: PostgresServer,
) -> None:
    from mcp_ref.session.changes_pg import open_postgres_change_feed

    table = postgres.new_table()
    url = f"postgresql://postgres:pw@127.0.0.1:{postgres.port}/postgres?table={table}&sweep=0.5&sslmode=disable"
    async with (
        open_postgres_task_store(url) as store,
        open_postgres_task_store(postgres.conninfo, table=table) as same,
        open_postgres_change_feed(url),  # (the feed takes the same URL: the store's parameters are left out)
    ):
        await store.create(record("t"), TaskLimits())
        assert (await same.get("t")) is not None  # the table the URL named
    for bad, says in (
        (url.replace("sweep=", "swep="), 'invalid URI query parameter: "swep"'),
        (url.replace("sweep=0.5", "sweep=often"), "sweep= in the URL is seconds"),
        (postgres.conninfo + " tabel=x", 'invalid connection option "tabel"'),
    ):
        with pytest.raises(ValueError, match=says) as refused:
            async with open_postgres_task_store(bad):
                pass
        assert ":pw@" not in str(refused.value)  # (the password is not repeated)
    with pytest.raises(ValueError, match="given twice"):
        async with open_postgres_task_store(url, table=table):
            pass


async def test_a_shared_store_with_a_key_of_this_process_only_is_warned_about(
    postgres: PostgresServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_ref.ext.tasks import TaskExtension

    monkeypatch.delenv("MCP_REF_STATE_KEY", raising=False)
    async with open_postgres_task_store(postgres.conninfo, table=postgres.new_table()) as store:
        async with trio.open_nursery() as nursery:
            Server("core").enable_tasks(nursery, store=store)
            TaskExtension(nursery, store=store).install(Server("ext"))
            # with a key given (every replica the same): nothing to say
            Server("keyed", state_key=b"k" * 32).enable_tasks(nursery, store=store)
            TaskExtension(nursery, store=store).install(Server("keyed-ext", state_key=b"k" * 32))
            nursery.cancel_scope.cancel()
    warned = [r for r in caplog.records if r.levelname == "WARNING" and "MCP_REF_STATE_KEY" in r.getMessage()]
    assert len(warned) == 2


async def test_the_table_name_is_a_plain_sql_name(postgres: PostgresServer) -> None:
    for bad in ("drop table x", "a;b", "", "1abc", 'x"y'):
        with pytest.raises(ValueError, match="plain SQL name"):
            async with open_postgres_task_store(postgres.conninfo, table=bad):
                pass


# -- real server processes ---------------------------------------------------------------------------


def everything_args(conninfo: str, table: str) -> list[str]:
    url = "postgresql://postgres@127.0.0.1:{port}/postgres".format(port=conninfo.split("port=")[1].split()[0])
    return ["-m", "mcp_ref.examples.everything", "--task-db", f"{url}?table={table}&sweep=0.2"]


@asynccontextmanager
async def everything(conninfo: str, table: str) -> AsyncIterator[ClientSession]:
    # (replicas share their requestState key: without one the example refuses to start)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MCP_REF_STATE_KEY": "test-task-pg-" + "k" * 16}
    args = everything_args(conninfo, table)
    async with open_stdio_client(sys.executable, args, env=env, stderr="discard", protocol_version=LEGACY) as client:
        yield client


async def kill(client: ClientSession) -> None:
    process = client.session.channel.process  # type: ignore[attr-defined]
    process.kill()
    await process.wait()


@pytest.mark.subprocess
@pytest.mark.req("basic/utilities/tasks#43")
async def test_no_acknowledged_task_is_lost_to_kill_9_and_others_fail_its_running_work(
    postgres: PostgresServer,
) -> None:
    table = postgres.new_table()
    acknowledged: dict[str, int] = {}
    async with everything(postgres.conninfo, table) as other, everything(postgres.conninfo, table) as client:

        async def create(n: int) -> None:
            handle = await client.call_tool_as_task("batch_job", {"seconds": n % 3})
            acknowledged[handle.task_id] = n % 3

        async with trio.open_nursery() as nursery:
            for n in range(100):
                nursery.start_soon(create, n)
                if n % 10 == 9:
                    await trio.sleep(0)
        assert len(acknowledged) == 100
        await kill(client)  # at once, after the last acknowledgement
        # the other replica fails the tasks whose work died: the last two-second one among them
        last_long = [task_id for task_id, seconds in acknowledged.items() if seconds == 2][-1]
        with trio.fail_after(30):
            while (await task_get(other, last_long)).status == "working":
                await trio.sleep(0.2)
        # and it has every acknowledged task
        statuses = [await task_get(other, task_id) for task_id in acknowledged]
        assert len(statuses) == 100 and {t.status for t in statuses} <= {"completed", "failed"}
        failed = [t for t in statuses if t.status == "failed"]
        # (nothing restarted: the replica that ran them stopped, and the message says just that)
        stopped = "the server running it stopped before the task finished"
        assert failed and all(t.status_message == stopped for t in failed)
        completed = next(t for t in statuses if t.status == "completed")
        payload = await task_result(other, completed.task_id)  # a result the dead replica wrote
        assert payload.extra["structuredContent"]["job"] == "done"


async def test_limits_hold_across_replicas(postgres: PostgresServer) -> None:
    table = postgres.new_table()
    async with (
        open_postgres_task_store(postgres.conninfo, table=table) as a,
        open_postgres_task_store(postgres.conninfo, table=table) as b,
    ):
        limits = TaskLimits(running=5, kept=50, total=500)
        outcomes: list[bool] = []

        async def create(store: PostgresTaskStore, n: int) -> None:
            try:
                await store.create(record(f"t{n}"), limits)
                outcomes.append(True)
            except TaskLimitReached:
                outcomes.append(False)

        async with trio.open_nursery() as nursery:
            for n in range(20):
                nursery.start_soon(create, a if n % 2 else b, n)
        assert outcomes.count(True) == 5


async def test_an_extension_task_that_ends_while_the_database_is_away_completes_when_it_is_back(
    postgres: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The outcome of an extension task whose work ends during an outage is stored once the
    database is back (tried again until the task's ttl), not left ``working`` until it expires."""
    from mcp_ref.ext.tasks import TaskExtension, TaskHandle, call_tool

    release = trio.Event()
    async with open_postgres_task_store(postgres.conninfo, table=postgres.new_table(), sweep_interval=0.2) as store:
        async with trio.open_nursery() as nursery:
            server = Server("ext-replica", state_key=b"k" * 32)

            @server.tool(task_support="optional")
            async def held(ctx: RequestContext, arguments: dict[str, Any]) -> str:
                await release.wait()
                return "held done"

            TaskExtension(nursery, store=store).install(server)
            async with memory_session_pair(server, tasks_extension=True) as client:
                handle = await call_tool(client, "held", {})
                assert isinstance(handle, TaskHandle)
                postgres.stop()
                try:
                    release.set()  # the work ends while the database is away: its outcome cannot be stored
                    with trio.fail_after(30):
                        while not any("storing its outcome failed" in r.getMessage() for r in caplog.records):
                            await trio.sleep(0.05)
                finally:
                    postgres.start()
                with trio.fail_after(20):
                    while (await handle.get())["status"] == "working":
                        await trio.sleep(0.1)
                assert (await handle.get())["status"] == "completed"
                assert (await handle.result()).content[0].text == "held done"  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()
