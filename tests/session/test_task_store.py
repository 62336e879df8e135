"""The task store contract, run on every store: memory, SQLite and PostgreSQL.

What the task runtimes (2025-11-25 core tasks, the 2026-07-28 extension) rely
on: durable creation with the limits checked in the same step, compare-and-set
changes (terminal is final, whoever writes), expiry by the store's clock,
announcements of every change, owners kept as text.
"""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.basic.utilities.tasks import TaskLimits, TaskRecord, owner_key
from mcp_ref.schema.content import TextContent
from mcp_ref.schema.jsonrpc import Error
from mcp_ref.schema.tools import CallToolResult
from mcp_ref.session.task_db import open_sqlite_task_store
from mcp_ref.session.task_store import (
    InMemoryTaskStore,
    TaskChange,
    TaskConflict,
    TaskLimitReached,
    TaskStore,
)

START = 1_000_000.0


class Clock:
    """The store's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


StoreFactory = Callable[[Clock], Any]


@asynccontextmanager
async def memory_store(clock: Clock) -> AsyncIterator[TaskStore]:
    yield InMemoryTaskStore(clock=clock)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[Clock], Any]:
    if request.param == "memory":
        return memory_store
    if request.param == "sqlite":
        return lambda clock: open_sqlite_task_store(tmp_path / "tasks.db", wall_clock=clock)
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg 3) is not installed")
    from mcp_ref.session.task_pg import open_postgres_task_store

    server = request.getfixturevalue("postgres")
    table = server.new_table()
    # (the database's clock, moved by the test's: what the test adds to its clock is added to the database's)
    return lambda clock: open_postgres_task_store(server.conninfo, table=table, clock_offset=lambda: clock.now - START)


def record(task_id: str, requestor: str | None = "alice", ttl_ms: int | None = 60_000, **fields: Any) -> TaskRecord:
    fields.setdefault("owner", requestor)
    return TaskRecord(
        task_id=task_id,
        method="tools/call",
        status=fields.pop("status", "working"),
        created_at=START,
        last_updated_at=START,
        ttl_ms=ttl_ms,
        poll_interval_ms=1000,
        expires_at=None,
        requestor=requestor,
        **fields,
    )


LIMITS = TaskLimits(running=3, kept=5, total=8)


@pytest.mark.req("basic/utilities/tasks#25", "basic/utilities/tasks#43")
async def test_a_created_task_is_there_at_once_with_what_the_store_sets(open_store: StoreFactory) -> None:
    clock = Clock()
    async with open_store(clock) as store:
        first = await store.create(record("t1", progress_token="tok"), LIMITS)
        second = await store.create(record("t2", ttl_ms=None), LIMITS)
        assert first.seq < second.seq and first.version == second.version == 1
        assert first.runner == second.runner == store.runner
        # (expires_at is in the store's clock: a database's is not the test's)
        assert first.expires_at is not None and second.expires_at is None
        assert await store.next_expiry() == pytest.approx(60, abs=1)
        got = await store.get("t1")
        assert got is not None
        assert (got.task_id, got.status, got.owner, got.progress_token, got.seq) == ("t1", "working", "alice", "tok", 1)
        assert await store.get("nope") is None
        with pytest.raises(ValueError, match="already exists"):
            await store.create(record("t1", requestor="bob"), LIMITS)
        assert await store.count() == 2


@pytest.mark.req("basic/utilities/tasks#81")
async def test_limits_are_per_requestor_and_checked_with_the_creation(open_store: StoreFactory) -> None:
    async with open_store(Clock()) as store:
        for n in range(3):
            await store.create(record(f"a{n}"), LIMITS)
        with pytest.raises(TaskLimitReached, match="at most 3 concurrent tasks per requestor") as refused:
            await store.create(record("a3"), LIMITS)
        assert refused.value.code == -32600
        # alice's running tasks do not refuse bob's
        await store.create(record("b0", requestor="bob"), LIMITS)
        # finished tasks leave room to run, but count as kept
        for n in range(3):
            await store.move(f"a{n}", "completed", wall=START + 1, outcome=None)
        await store.create(record("a3"), LIMITS)
        await store.create(record("a4"), LIMITS)
        with pytest.raises(TaskLimitReached, match="at most 5 tasks kept per requestor"):
            await store.create(record("a5"), LIMITS)
        await store.create(record("b1", requestor="bob"), LIMITS)
        await store.create(record("c0", requestor="carol"), LIMITS)
        with pytest.raises(TaskLimitReached, match="at most 8 tasks kept in all"):
            await store.create(record("d0", requestor="dave"), LIMITS)
        await store.delete("a0")
        await store.create(record("d0", requestor="dave"), LIMITS)
        assert await store.count() == 8


async def test_concurrent_creations_cannot_pass_a_limit_together(open_store: StoreFactory) -> None:
    async with open_store(Clock()) as store:
        outcomes: list[str] = []

        async def create(n: int) -> None:
            try:
                await store.create(record(f"t{n}"), LIMITS)
                outcomes.append("created")
            except TaskLimitReached:
                outcomes.append("refused")

        async with trio.open_nursery() as nursery:
            for n in range(10):
                nursery.start_soon(create, n)
        assert sorted(outcomes) == ["created"] * 3 + ["refused"] * 7


@pytest.mark.req("basic/utilities/tasks#28", "basic/utilities/tasks#62")
async def test_changes_are_checked_against_the_stored_task_and_terminal_is_final(open_store: StoreFactory) -> None:
    async with open_store(Clock()) as store:
        await store.create(record("t"), LIMITS)
        stale = await store.get("t")  # a copy read before another writer's change
        assert stale is not None and stale.status == "working"
        cancelled = await store.move("t", "cancelled", wall=START + 1, message="stop")
        assert (cancelled.status, cancelled.status_message, cancelled.version) == ("cancelled", "stop", 2)
        for status in ("completed", "failed", "working", "input_required", "cancelled"):
            with pytest.raises(TaskConflict) as conflict:
                await store.move("t", status, wall=START + 2)
            assert conflict.value.record.status == "cancelled"
        # the work ran to its end anyway: still cancelled, but its outcome is kept once
        result = CallToolResult(content=[TextContent(text="done anyway")])
        kept = await store.finish("t", "completed", wall=START + 3, message=None, outcome=result)
        assert kept is not None and kept.status == "cancelled" and kept.outcome == result
        again = await store.finish("t", "failed", wall=START + 4, message="x", outcome=Error(code=-1, message="no"))
        assert again is not None and again.outcome == result and again.version == kept.version
        stored = await store.get("t")
        assert stored is not None and (stored.status, stored.outcome) == ("cancelled", result)
        with pytest.raises(LookupError):
            await store.move("gone", "cancelled", wall=START)
        assert await store.finish("gone", "completed", wall=START, message=None, outcome=result) is None


async def test_a_finished_task_keeps_its_outcome(open_store: StoreFactory) -> None:
    async with open_store(Clock()) as store:
        await store.create(record("ok"), LIMITS)
        await store.create(record("bad"), LIMITS)
        result = CallToolResult(content=[TextContent(text="hello")], structured_content={"n": 1})
        error = Error(code=-32603, message="Internal error", data={"why": "x"})
        done = await store.finish("ok", "completed", wall=START + 1, message=None, outcome=result)
        assert done is not None and done.last_updated_at == START + 1
        await store.finish("bad", "failed", wall=START + 1, message="Internal error", outcome=error)
        ok, bad = await store.get("ok"), await store.get("bad")
        assert ok is not None and bad is not None
        assert (ok.status, ok.outcome) == ("completed", result)
        assert (bad.status, bad.status_message, bad.outcome) == ("failed", "Internal error", error)


@pytest.mark.req("basic/utilities/tasks#40")
async def test_expiry_is_the_stores_clock(open_store: StoreFactory) -> None:
    clock = Clock()
    async with open_store(clock) as store:
        await store.create(record("short", ttl_ms=10_000), LIMITS)
        await store.create(record("long", ttl_ms=60_000), LIMITS)
        await store.create(record("forever", ttl_ms=None), LIMITS)
        assert await store.next_expiry() == pytest.approx(10, abs=1)  # (a database clock runs meanwhile)
        clock.now += 10  # the short one's ttl is over: gone for every reader, before any purge
        assert await store.get("short") is None
        assert [r.task_id for r in await store.owned_by("alice")] == ["long", "forever"]
        with pytest.raises(LookupError):
            await store.move("short", "cancelled", wall=clock.now)
        assert await store.next_expiry() == 0
        assert await store.purge_expired() == ["short"]
        assert await store.count() == 2
        assert await store.next_expiry() == pytest.approx(50, abs=1)
        clock.now += 100
        assert sorted(await store.purge_expired()) == ["long"]
        assert await store.next_expiry() is None
        # an expired task's room is free again, even before the purge
        limits = TaskLimits(running=1, kept=1, total=10)
        await store.create(record("brief", requestor="bob", ttl_ms=1_000), limits)
        clock.now += 1
        await store.create(record("next", requestor="bob"), limits)


@pytest.mark.req("basic/utilities/tasks#74", "basic/utilities/tasks#79")
async def test_tasks_are_kept_by_owner_in_creation_order(open_store: StoreFactory) -> None:
    alice = owner_key(("principal", ("https://as.example", "alice", "app")))
    bob = owner_key(("principal", ("https://as.example", "bob", "app")))
    async with open_store(Clock()) as store:
        for n, who in enumerate([alice, bob, alice, None, alice]):
            await store.create(record(f"t{n}", requestor=who), LIMITS)
        assert [r.task_id for r in await store.owned_by(alice)] == ["t0", "t2", "t4"]
        assert [r.task_id for r in await store.owned_by(bob)] == ["t1"]
        assert [r.task_id for r in await store.owned_by(None)] == ["t3"]
        got = await store.get("t1")
        assert got is not None and got.owner == bob and got.requestor == bob


async def test_input_requests_and_their_answers(open_store: StoreFactory) -> None:
    """What the tasks extension keeps: outstanding requests by key, answers until the work takes them."""
    elicit = {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {"type": "object"}}}
    sample = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
    async with open_store(Clock()) as store:
        await store.create(record("t"), LIMITS)
        asked = await store.ask("t", {"k1": elicit}, wall=START + 1)
        assert (asked.status, asked.input_requests) == ("input_required", {"k1": elicit})
        with pytest.raises(ValueError, match="already used"):
            await store.ask("t", {"k1": sample}, wall=START + 2)  # a key names one request
        asked = await store.ask("t", {"k2": sample}, wall=START + 2)
        assert asked.status == "input_required" and set(asked.input_requests or {}) == {"k1", "k2"}
        # unknown keys are ignored; a partial answer leaves the task waiting for the rest
        assert await store.answer("t", {"k1": {"action": "accept"}, "zz": {}}, wall=START + 3) == ["k1"]
        task = await store.get("t")
        assert task is not None and task.status == "input_required" and set(task.input_requests or {}) == {"k2"}
        assert await store.answer("t", {"k1": {"action": "decline"}}, wall=START + 4) == []  # answered already
        assert await store.answer("t", {"k2": {"role": "assistant"}}, wall=START + 5) == ["k2"]
        task = await store.get("t")
        assert task is not None and task.status == "working" and not task.input_requests
        assert await store.take_responses("t", ["k1", "k9"]) == {"k1": {"action": "accept"}}
        assert await store.take_responses("t", ["k1"]) == {}
        assert await store.take_responses("t", ["k2"]) == {"k2": {"role": "assistant"}}
        await store.move("t", "completed", wall=START + 6)
        with pytest.raises(TaskConflict):
            await store.ask("t", {"k3": elicit}, wall=START + 7)
        assert await store.answer("t", {"k3": {}}, wall=START + 7) == []


async def test_every_change_is_announced_in_order(open_store: StoreFactory) -> None:
    clock = Clock()
    heard: list[TaskChange] = []
    async with open_store(clock) as store:
        unsubscribe = store.subscribe(heard.append)
        await store.create(record("t", ttl_ms=5_000), LIMITS)
        await store.move("t", "input_required", wall=START)
        await store.move("t", "working", wall=START)
        with pytest.raises(TaskConflict):
            await store.move("t", "working", wall=START)  # no change, nothing announced
        await store.finish("t", "completed", wall=START, message=None, outcome=CallToolResult(content=[]))
        await store.create(record("u"), LIMITS)
        await store.delete("u")
        clock.now += 5
        await store.purge_expired()
        own = [(c.task_id, c.version, c.status) for c in heard]
        # (a shared store may also hear its own changes again from the database: versions tell)
        own = [c for n, c in enumerate(own) if c not in own[:n]]
        assert own == [
            ("t", 1, "working"),
            ("t", 2, "input_required"),
            ("t", 3, "working"),
            ("t", 4, "completed"),
            ("u", 1, "working"),
            ("u", 2, None),
            ("t", 5, None),
        ]
        assert all(c.record is not None for c in heard if c.status is not None and c.record is not None)
        unsubscribe()
        await store.create(record("v"), LIMITS)
        count = len(heard)
        await trio.sleep(0.05)
        assert len(heard) == count
