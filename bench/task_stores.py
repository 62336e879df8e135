"""Task stores: create + get throughput and latency on memory, SQLite and PostgreSQL (issue 29).

    .venv/bin/python -m bench.task_stores                  # every store, 2,000 tasks each
    .venv/bin/python -m bench.task_stores --stores postgres --tasks 5000
    .venv/bin/python -m bench.task_stores --quick          # 300 tasks (what tests/bench runs)

For each store, three measurements, each after a warm-up that is discarded:

* ``store``: the store alone -- ``create`` then ``get`` of one task, in turn,
  ``tasks`` times (one caller): latency of each call, and tasks per second.
* ``mcp``: the protocol path -- a task-augmented ``tools/call`` (the tool
  returns at once) and one ``tasks/get``, through mcp_ref's client and server
  in memory: what a client waits for each.
* ``concurrent``: ``clients`` callers doing ``create`` + ``get`` at once
  against the store for the same number of tasks: throughput.

PostgreSQL adds ``other replica``: tasks created through one server and
``tasks/get`` answered by another on the same table (what a load balancer
does). The database is started by ``mcp_ref.testing.postgres`` with its
default durability (fsync on); SQLite runs with ``synchronous=NORMAL`` (its
default: a change survives a killed process). Nothing here is a timed test:
results go to stdout and ``bench/results/task_stores.json``.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import percentile  # noqa: E402
from mcp_ref.basic.utilities.tasks import TaskLimits, TaskRecord, new_task_id  # noqa: E402
from mcp_ref.schema.tasks import GetTaskRequestParams  # noqa: E402
from mcp_ref.session import RequestContext, Server  # noqa: E402
from mcp_ref.session.task_store import InMemoryTaskStore, TaskStore  # noqa: E402
from mcp_ref.session.tasks import TaskConfig  # noqa: E402
from mcp_ref.testing import memory_session_pair  # noqa: E402

RESULTS = ROOT / "bench" / "results"
LIMITS = TaskLimits(running=1_000_000, kept=1_000_000, total=1_000_000)
now = time.perf_counter


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy so far (``/proc/stat``; 0 where there is none)."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except OSError:
        return 0.0
    return (sum(values[:8]) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


def summary(latencies: list[float], elapsed: float, count: int) -> dict[str, float]:
    return {
        "per_s": count / elapsed,
        "p50_us": percentile(latencies, 50) * 1e6,
        "p99_us": percentile(latencies, 99) * 1e6,
        "max_us": max(latencies) * 1e6,
    }


def new_record(requestor: str) -> TaskRecord:
    wall = time.time()
    return TaskRecord(
        task_id=new_task_id(),
        owner=requestor,
        method="tools/call",
        status="working",
        created_at=wall,
        last_updated_at=wall,
        ttl_ms=3_600_000,
        poll_interval_ms=1000,
        expires_at=None,
        requestor=requestor,
    )


async def store_alone(store: TaskStore, tasks: int, warmup: int) -> dict[str, Any]:
    creates: list[float] = []
    gets: list[float] = []
    for n in range(warmup + tasks):
        t0 = now()
        record = await store.create(new_record("bench"), LIMITS)
        t1 = now()
        got = await store.get(record.task_id)
        t2 = now()
        assert got is not None and got.task_id == record.task_id
        if n >= warmup:
            creates.append(t1 - t0)
            gets.append(t2 - t1)
    total = sum(creates) + sum(gets)
    return {
        "create": summary(creates, sum(creates), tasks),
        "get": summary(gets, sum(gets), tasks),
        "create_get_per_s": tasks / total,
    }


async def concurrent(store: TaskStore, tasks: int, clients: int) -> dict[str, Any]:
    latencies: list[float] = []
    per_client = tasks // clients

    async def client(n: int) -> None:
        for _ in range(per_client):
            t0 = now()
            record = await store.create(new_record(f"user-{n}"), LIMITS)
            await store.get(record.task_id)
            latencies.append(now() - t0)

    t0 = now()
    async with trio.open_nursery() as nursery:
        for n in range(clients):
            nursery.start_soon(client, n)
    elapsed = now() - t0
    return {"clients": clients, **summary(latencies, elapsed, len(latencies))}


def task_server(nursery: trio.Nursery, store: TaskStore) -> Server:
    server = Server("bench-tasks")
    config = TaskConfig(
        binding="none",
        rate_limit=None,
        max_tasks_per_requestor=1_000_000,
        max_stored_tasks_per_requestor=1_000_000,
        max_stored_tasks=1_000_000,
    )
    server.enable_tasks(nursery, store=store, config=config)

    @server.tool(task_support="optional")
    async def echo_task(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    return server


async def through_mcp(creating: TaskStore, answering: TaskStore | None, tasks: int, warmup: int) -> dict[str, Any]:
    """A task-augmented call through one server, then tasks/get through ``answering``'s (or the same)."""
    async with trio.open_nursery() as nursery:
        first = task_server(nursery, creating)
        second = task_server(nursery, answering) if answering is not None else first
        # (the core tasks of a 2025-11-25 session; 2026-07-28 has the tasks extension)
        async with (
            memory_session_pair(first, protocol_version="2025-11-25") as client,
            memory_session_pair(second, protocol_version="2025-11-25") as other,
        ):
            creates: list[float] = []
            gets: list[float] = []
            for n in range(warmup + tasks):
                t0 = now()
                handle = await client.call_tool_as_task("echo_task", {"text": "x"})
                t1 = now()
                task = await other.session.request("tasks/get", GetTaskRequestParams(task_id=handle.task_id))
                t2 = now()
                assert task.task_id == handle.task_id
                if n >= warmup:
                    creates.append(t1 - t0)
                    gets.append(t2 - t1)
        nursery.cancel_scope.cancel()
    return {"create": summary(creates, sum(creates), tasks), "tasks/get": summary(gets, sum(gets), tasks)}


@asynccontextmanager
async def open_store(kind: str, where: Path, pg: Any, table: str | None = None) -> AsyncIterator[TaskStore]:
    """A new store of ``kind`` (each on a table of its own; ``table``: that one, to share it)."""
    if kind == "memory":
        yield InMemoryTaskStore()
    elif kind == "sqlite":
        from mcp_ref.session.task_db import open_sqlite_task_store

        async with open_sqlite_task_store(where / f"tasks-{new_task_id()}.db") as store:
            yield store
    else:
        from mcp_ref.session.task_pg import open_postgres_task_store

        async with open_postgres_task_store(pg.conninfo, table=table or pg.new_table()) as store:
            yield store


async def bench_store(kind: str, where: Path, pg: Any, tasks: int, clients: int) -> dict[str, Any]:
    warmup = max(20, tasks // 10)
    result: dict[str, Any] = {}
    async with open_store(kind, where, pg) as store:
        result["store"] = await store_alone(store, tasks, warmup)
        result["concurrent"] = await concurrent(store, tasks, clients)
    async with open_store(kind, where, pg) as store:
        result["mcp"] = await through_mcp(store, None, tasks, warmup)
    if kind == "postgres":
        shared = pg.new_table()
        async with open_store(kind, where, pg, shared) as a, open_store(kind, where, pg, shared) as b:
            result["other replica"] = await through_mcp(a, b, tasks, warmup)
    return result


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| store | measurement | call | per s | p50 (us) | p99 (us) |",
        "|---|---|---|---:|---:|---:|",
    ]
    for kind, result in results.items():
        for measurement, calls in result.items():
            if measurement == "concurrent":
                name = f"create + get ({calls['clients']} callers)"
                lines.append(
                    f"| {kind} | {measurement} | {name} | {calls['per_s']:,.0f} | {calls['p50_us']:,.0f} |"
                    f" {calls['p99_us']:,.0f} |"
                )
                continue
            for call, s in calls.items():
                if isinstance(s, dict):
                    lines.append(
                        f"| {kind} | {measurement} | {call} | {s['per_s']:,.0f} | {s['p50_us']:,.0f} |"
                        f" {s['p99_us']:,.0f} |"
                    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stores", default="memory,sqlite,postgres")
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="300 tasks")
    parser.add_argument(
        "--pg-fsync",
        choices=("on", "off"),
        default="on",
        help="PostgreSQL with its default durability (on: a commit waits for the WAL on disk) or without",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "task_stores.json")
    args = parser.parse_args(argv)
    tasks = 300 if args.quick else args.tasks
    kinds = [k for k in args.stores.split(",") if k]
    unknown = set(kinds) - {"memory", "sqlite", "postgres"}
    if unknown:
        parser.error(f"unknown stores: {', '.join(sorted(unknown))}")
    pg = None
    if "postgres" in kinds:
        from mcp_ref.testing.postgres import PostgresNotInstalled, start_postgres

        try:
            pg = start_postgres(durable=args.pg_fsync == "on")
        except PostgresNotInstalled as e:
            print(f"postgres skipped: {e}", file=sys.stderr)
            kinds.remove("postgres")
    results: dict[str, dict[str, Any]] = {}
    machine: dict[str, dict[str, float]] = {}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        with tempfile.TemporaryDirectory(prefix="mcp-ref-bench-") as tmp:
            for kind in kinds:
                print(f"{kind} ...", file=sys.stderr, flush=True)
                busy0, wall0 = machine_busy(), now()
                results[kind] = trio.run(bench_store, kind, Path(tmp), pg, tasks, args.clients)
                # how busy the whole machine was meanwhile (this bench and PostgreSQL included)
                machine[kind] = {
                    "busy_cores": round((machine_busy() - busy0) / (now() - wall0), 2),
                    "load": round(os.getloadavg()[0], 2),
                }
    finally:
        if pg is not None:
            pg.close()
    print(table(results))
    for kind, seen in machine.items():
        print(f"{kind}: machine busy {seen['busy_cores']} cores on average, load {seen['load']} at the end")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "tasks": tasks,
        "clients": args.clients,
        "pg_fsync": args.pg_fsync,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "started": started,
        "machine": machine,
    }
    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
