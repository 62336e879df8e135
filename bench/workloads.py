"""W1..W10: each runs once in the current (fresh) process and returns its metrics.

Every workload takes an adapter (bench/adapters.py) and a size dict, and
returns a flat dict of numbers. Times are ``time.perf_counter`` seconds turned
into microseconds (``_us``) or milliseconds (``_ms``); ``cpu_`` metrics are
this process's CPU time (``time.process_time``) over the same loop, which a
busy machine disturbs less than wall time (for stdio and HTTP the server's
CPU is in another process and not counted). Warm-up iterations are
run first and discarded (imports, first-call caches, pyc files).

The in-memory workloads take ``buffer`` (messages a direction holds before a
send waits; the default is each implementation's own) and W9 takes ``json``
(JSON answers instead of SSE streams): the variants W1b..W8b and W9J of
``WORKLOADS`` are the same functions with those sizes.
"""

import gc
import os
import subprocess
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import trio

from .adapters import Adapter
from .common import PYTHON, Probe, Skip, cpu_now, median, now, percentile, rss_bytes
from .load import RawHttpSession, open_raw_session, process_cpu_s, process_rss

Sizes = dict[str, int]
Workload = Callable[[Adapter, Sizes], Awaitable[dict[str, float]]]

TEXT = "hello, benchmark"


def _latency_summary(latencies: list[float], total: float, cpu: float) -> dict[str, float]:
    return {
        "us_per_call": total / len(latencies) * 1e6,
        "cpu_us_per_call": cpu / len(latencies) * 1e6,
        "calls_per_s": len(latencies) / total,
        "p50_us": percentile(latencies, 50) * 1e6,
        "p99_us": percentile(latencies, 99) * 1e6,
    }


async def _sequential(client: Any, calls: int, warmup: int) -> dict[str, float]:
    for _ in range(warmup):
        if await client.echo(TEXT) != TEXT:
            raise AssertionError("echo returned something else")
    latencies = []
    start, cpu_start = now(), cpu_now()
    for _ in range(calls):
        t = now()
        result = await client.echo(TEXT)
        latencies.append(now() - t)
        if result != TEXT:
            raise AssertionError("echo returned something else")
    return _latency_summary(latencies, now() - start, cpu_now() - cpu_start)


async def w1_sequential_memory(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """Sequential tools/call of echo over the in-memory transport."""
    async with adapter.memory(Probe(), buffer=sizes.get("buffer")) as client:
        return await _sequential(client, sizes["calls"], sizes["warmup"])


async def w2_bursts(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """Bursts of ``burst`` concurrent calls; time per burst."""
    burst = sizes["burst"]
    async with adapter.memory(Probe(), buffer=sizes.get("buffer")) as client:
        failures = 0

        async def one() -> None:
            nonlocal failures
            if await client.echo(TEXT) != TEXT:
                failures += 1

        times = []
        for i in range(sizes["warmup_bursts"] + sizes["bursts"]):
            if i == sizes["warmup_bursts"]:
                cpu_start = cpu_now()
            t = now()
            async with trio.open_nursery() as nursery:
                for _ in range(burst):
                    nursery.start_soon(one)
            if i >= sizes["warmup_bursts"]:
                times.append(now() - t)
        cpu = cpu_now() - cpu_start
        if failures:
            raise AssertionError(f"{failures} echo calls returned something else")
    total = sum(times)
    return {
        "us_per_call": total / (burst * len(times)) * 1e6,
        "cpu_us_per_call": cpu / (burst * len(times)) * 1e6,
        "calls_per_s": burst * len(times) / total,
        "burst_p50_us_per_call": percentile(times, 50) / burst * 1e6,
        "burst_p50_ms": percentile(times, 50) * 1e3,
        "burst_p99_ms": percentile(times, 99) * 1e3,
    }


async def w3_sequential_stdio(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """W1 over stdio, with the implementation's own server in a subprocess."""
    async with adapter.stdio() as client:
        return await _sequential(client, sizes["calls"], sizes["warmup"])


async def w4_progress(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """One call emitting ``notifications`` progress notifications; rate seen by the callback."""
    n = sizes["notifications"]
    async with adapter.memory(Probe(), buffer=sizes.get("buffer")) as client:
        received = 0

        async def on_progress(value: float) -> None:
            nonlocal received
            received += 1

        await client.progress(100, on_progress)  # warm-up
        times, cpus, counts = [], [], []
        for _ in range(sizes["repeats"]):
            received = 0
            t, c = now(), cpu_now()
            await client.progress(n, on_progress)
            times.append(now() - t)
            cpus.append(cpu_now() - c)
            counts.append(received)
    dt = median(times)
    return {
        "us_per_notification": dt / n * 1e6,
        "cpu_us_per_notification": median(cpus) / n * 1e6,
        "notifications_per_s": median(counts) / dt,
        "delivered_fraction": min(counts) / n,
    }


async def w5_cancellation(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """The caller's scope abandons a hanging call; time until the handler sees Cancelled."""
    probe = Probe()
    async with adapter.memory(probe, buffer=sizes.get("buffer")) as client:
        latencies = []
        for i in range(sizes["warmup"] + sizes["repeats"]):
            probe.reset_hang()
            scope = trio.CancelScope()

            async def caller(scope: trio.CancelScope = scope) -> None:
                with scope:
                    await client.hang()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(caller)
                with trio.fail_after(10):
                    await probe.hang_entered.wait()
                t = now()
                scope.cancel()
                with trio.fail_after(10):
                    await probe.cancel_seen.wait()
            if i >= sizes["warmup"]:
                latencies.append(probe.cancel_seen_at - t)
    return {
        "p50_us": percentile(latencies, 50) * 1e6,
        "p99_us": percentile(latencies, 99) * 1e6,
        "mean_us": sum(latencies) / len(latencies) * 1e6,
    }


async def w6_pending_memory(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """``pending`` concurrent calls all waiting in their handlers: RSS growth per call.

    Client and server share the process, so the figure covers both ends of a
    pending request (what a client keeps plus what a server keeps).
    """
    n = sizes["pending"]
    probe = Probe()
    probe.block_target = n
    async with adapter.memory(probe, concurrency=n + 16, buffer=sizes.get("buffer")) as client:
        for _ in range(100):
            await client.echo(TEXT)
        gc.collect()
        before = rss_bytes()
        start = now()
        async with trio.open_nursery() as nursery:
            for _ in range(n):
                nursery.start_soon(client.block)
            with trio.fail_after(300):
                await probe.all_blocked.wait()
            all_pending = now() - start
            gc.collect()
            during = rss_bytes()
            probe.release.set()
        drained = now() - start
    return {
        "bytes_per_pending": (during - before) / n,
        "kib_per_pending": (during - before) / n / 1024,
        "setup_us_per_call": all_pending / n * 1e6,
        "total_us_per_call": drained / n * 1e6,
    }


def _wall(argv: list[str]) -> float:
    t = now()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return now() - t


async def w7_spawn(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """Spawn the stdio server and get the initialize result; plus ``python -c "<import>"``."""
    spawn = []
    for i in range(sizes["warmup"] + sizes["spawns"]):
        t = now()
        async with adapter.stdio():
            elapsed = now() - t
        if i >= sizes["warmup"]:
            spawn.append(elapsed)
    imports, bare = [], []
    _wall([PYTHON, "-c", adapter.import_statement])  # pyc files, disk cache
    for _ in range(sizes["imports"]):
        # alternate, so drift in machine load hits both equally
        imports.append(_wall([PYTHON, "-c", adapter.import_statement]))
        bare.append(_wall([PYTHON, "-c", "pass"]))
    return {
        "spawn_to_init_ms": median(spawn) * 1e3,
        "import_ms": median(imports) * 1e3,
        "import_net_ms": (median(imports) - median(bare)) * 1e3,
        "python_startup_ms": median(bare) * 1e3,
    }


async def w8_tasks(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """A task-augmented call (create, one tasks/get, tasks/result) against a plain call."""
    async with adapter.memory(Probe(), tasks=True, buffer=sizes.get("buffer")) as client:
        for _ in range(sizes["warmup"]):
            await client.plain_task_tool(TEXT)
            await client.task_echo(TEXT)
        plain, task = [], []
        cpu_start = cpu_now()
        for _ in range(sizes["repeats"]):
            t = now()
            if await client.plain_task_tool(TEXT) != TEXT:
                raise AssertionError("plain call returned something else")
            plain.append(now() - t)
            t = now()
            if await client.task_echo(TEXT) != TEXT:
                raise AssertionError("task returned something else")
            task.append(now() - t)
        cpu = cpu_now() - cpu_start
    return {
        "cpu_us_per_pair": cpu / sizes["repeats"] * 1e6,
        "task_p50_us": percentile(task, 50) * 1e6,
        "plain_p50_us": percentile(plain, 50) * 1e6,
        "task_over_plain": percentile(task, 50) / percentile(plain, 50),
    }


async def w9_http(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """Sequential echo round trips over Streamable HTTP (server in a subprocess)."""
    async with adapter.http(json=bool(sizes.get("json"))) as client:
        before = process_cpu_s(client.pid)
        metrics = await _sequential(client, sizes["calls"], sizes["warmup"])
        # (the warm-up calls are in it too: the server's CPU per call, warm-up included)
        metrics["server_cpu_us_per_call"] = (
            (process_cpu_s(client.pid) - before) / (sizes["calls"] + sizes["warmup"]) * 1e6
        )
        return metrics


def _descendants(pid: int) -> list[int]:
    """The processes started by ``pid`` and by them (Linux /proc), the servers of W11 and W11H."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{parent}/task/{tid}/children") as f:
                    children = [int(c) for c in f.read().split()]
            except FileNotFoundError:
                continue
            found += children
            todo += children
    return found


def _cpu_of(pids: list[int]) -> float:
    """CPU seconds of the processes' threads, in nanoseconds from ``/proc/PID/task/TID/schedstat``
    (``/proc/PID/stat`` counts clock ticks, 10 ms: too coarse for a few thousand calls). A thread
    that ended during the measurement is not counted: none of the servers ends one per call."""
    total = 0
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except FileNotFoundError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass
    return total / 1e9


async def w11_modern(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """Sequential 2026-07-28 ``tools/call`` of echo, over stdio or (``http``) Streamable HTTP.

    Every request stands alone (its revision, capabilities and client in
    ``_meta``; over HTTP no session and ``Mcp-Method``/``Mcp-Name`` headers).
    The primary figure is CPU per call of both ends together: this process (the
    client) and the server process, so ``calls_per_cpu_s`` is what one core
    serves and calls, independent of how busy the machine is with other work.
    """
    transport = adapter.http(modern=True) if sizes.get("http") else adapter.stdio(modern=True)
    async with transport as client:
        for _ in range(sizes["warmup"]):
            if await client.echo(TEXT) != TEXT:
                raise AssertionError("echo returned something else")
        servers = _descendants(os.getpid())
        if not servers:
            raise AssertionError("no server process found")
        server_before = _cpu_of(servers)
        metrics = await _sequential(client, sizes["calls"], 0)
        server_cpu_us = (_cpu_of(servers) - server_before) / sizes["calls"] * 1e6
    cpu = metrics["cpu_us_per_call"] + server_cpu_us
    return {
        "total_cpu_us_per_call": cpu,
        "calls_per_cpu_s": 1e6 / cpu,
        "client_cpu_us_per_call": metrics["cpu_us_per_call"],
        "server_cpu_us_per_call": server_cpu_us,
        "p50_us": metrics["p50_us"],
        "p99_us": metrics["p99_us"],
    }


async def _load(sessions: list[RawHttpSession], *, seconds: float = 0.0, calls: int = 0) -> list[float]:
    """Every session calls echo in a loop, for ``seconds`` or ``calls`` calls each; the latencies."""
    latencies: list[float] = []
    deadline = now() + seconds

    async def client(session: RawHttpSession) -> None:
        n = 0
        while (n < calls) if calls else (now() < deadline):
            t = now()
            await session.echo()
            latencies.append(now() - t)
            n += 1

    async with trio.open_nursery() as nursery:
        for session in sessions:
            nursery.start_soon(client, session)
    return latencies


async def w10_http_load(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """``clients`` sessions, each on its own connection, call echo in a loop against
    the implementation's HTTP server (default answers: SSE) for ``seconds`` (or
    ``calls`` each); bench/load.py is the client for every server."""
    n = sizes["clients"]
    async with adapter.http_server(max_sessions=n + 16) as (url, pid):
        warm = await open_raw_session(url)  # code loaded on first use, caches
        for _ in range(20):
            await warm.echo()
        await warm.aclose()
        base = process_rss(pid)
        sessions = []
        try:
            for _ in range(n):
                sessions.append(await open_raw_session(url))
            opened = process_rss(pid)
            await _load(sessions, seconds=sizes.get("warmup_s", 0.0), calls=sizes.get("warmup_calls", 0))
            start, cpu, server_cpu = now(), cpu_now(), process_cpu_s(pid)
            latencies = await _load(sessions, seconds=sizes.get("seconds", 0.0), calls=sizes.get("calls", 0))
            elapsed, cpu, server_cpu = now() - start, cpu_now() - cpu, process_cpu_s(pid) - server_cpu
            loaded = process_rss(pid)
        finally:
            for session in sessions:
                await session.aclose()
    calls_per_s = len(latencies) / elapsed
    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    return {
        # (1e6 / calls_per_s: lower is better, like every primary metric)
        "us_per_call": 1e6 / calls_per_s,
        "calls_per_s": calls_per_s,
        "p50_us": p50 * 1e6,
        "p99_us": p99 * 1e6,
        "p99_over_p50": p99 / p50,
        "server_cpu_us_per_call": server_cpu / len(latencies) * 1e6,
        # how busy the load generator was (near 1: it, not the server, may be the limit)
        "load_cpu_share": cpu / elapsed,
        "server_kib_per_session": (opened - base) / n / 1024,
        "server_kib_per_session_loaded": (loaded - base) / n / 1024,
    }


async def w10_idle_sessions(adapter: Adapter, sizes: Sizes) -> dict[str, float]:
    """``sessions`` initialized sessions left idle (their connections closed): server RSS per session."""
    n = sizes["sessions"]
    async with adapter.http_server(max_sessions=n + 64) as (url, pid):

        async def open_some(count: int) -> None:
            for _ in range(count):
                session = await open_raw_session(url)
                await session.aclose()

        await open_some(10)  # code loaded on first use, caches
        await trio.sleep(0.2)
        base = process_rss(pid)
        start = now()
        async with trio.open_nursery() as nursery:
            workers = 4
            for i in range(workers):
                nursery.start_soon(open_some, n // workers + (i < n % workers))
        elapsed = now() - start
        await trio.sleep(0.5)  # the server finishes with the last connections
        after = process_rss(pid)
    return {
        "bytes_per_session": (after - base) / n,
        "kib_per_session": (after - base) / n / 1024,
        "ms_per_session_opened": elapsed / n * 1e3,
    }


class Spec(NamedTuple):
    run: Workload
    full: Sizes
    quick: Sizes
    #: the metric ratios and goals use (lower is better); medians resist a busy machine
    primary: str
    label: str
    #: more metrics the report shows in its table, with their ratios
    shown: tuple[str, ...] = ()


WORKLOADS: dict[str, Spec] = {
    "W1": Spec(
        w1_sequential_memory,
        {"calls": 3000, "warmup": 300},
        {"calls": 1000, "warmup": 100},
        "p50_us",
        "sequential tools/call, in memory",
    ),
    "W2": Spec(
        w2_bursts,
        {"burst": 100, "bursts": 40, "warmup_bursts": 4},
        {"burst": 100, "bursts": 15, "warmup_bursts": 2},
        "burst_p50_us_per_call",
        "bursts of 100 concurrent calls, in memory",
    ),
    "W3": Spec(
        w3_sequential_stdio,
        {"calls": 2000, "warmup": 200},
        {"calls": 500, "warmup": 50},
        "p50_us",
        "sequential tools/call, stdio subprocess",
    ),
    "W4": Spec(
        w4_progress,
        {"notifications": 10_000, "repeats": 3},
        {"notifications": 10_000, "repeats": 1},
        "us_per_notification",
        "10,000 progress notifications in one call",
    ),
    "W5": Spec(
        w5_cancellation,
        {"warmup": 20, "repeats": 300},
        {"warmup": 10, "repeats": 100},
        "p50_us",
        "cancellation latency (caller scope to handler)",
    ),
    "W6": Spec(
        w6_pending_memory,
        {"pending": 10_000},
        {"pending": 10_000},
        "bytes_per_pending",
        "memory per pending call (10,000 pending)",
    ),
    "W7": Spec(
        w7_spawn,
        {"warmup": 1, "spawns": 5, "imports": 7},
        {"warmup": 1, "spawns": 2, "imports": 3},
        "spawn_to_init_ms",
        "spawn to initialize result, stdio",
        ("import_ms", "import_net_ms"),
    ),
    "W8": Spec(
        w8_tasks,
        {"warmup": 50, "repeats": 500},
        {"warmup": 20, "repeats": 150},
        "task_p50_us",
        "task-augmented call: create, tasks/get, tasks/result",
    ),
    "W9": Spec(
        w9_http,
        {"calls": 500, "warmup": 50},
        {"calls": 150, "warmup": 20},
        "p50_us",
        "sequential tools/call, Streamable HTTP subprocess",
    ),
}

WORKLOADS["W9J"] = Spec(
    w9_http,
    {"calls": 500, "warmup": 50, "json": 1},
    {"calls": 150, "warmup": 20, "json": 1},
    "p50_us",
    "sequential tools/call, Streamable HTTP subprocess, JSON answers",
)
WORKLOADS["W10"] = Spec(
    w10_http_load,
    {"clients": 64, "seconds": 10, "warmup_s": 2},
    {"clients": 64, "seconds": 3, "warmup_s": 1},
    "us_per_call",
    "64 HTTP clients calling in a loop (server: 1e6 / calls per s)",
    ("calls_per_s", "p50_us", "p99_us", "p99_over_p50", "server_cpu_us_per_call", "server_kib_per_session"),
)
WORKLOADS["W10i"] = Spec(
    w10_idle_sessions,
    {"sessions": 1000},
    {"sessions": 300},
    "bytes_per_session",
    "idle HTTP sessions: server RSS per session",
)
WORKLOADS["W11"] = Spec(
    w11_modern,
    {"calls": 2000, "warmup": 200},
    {"calls": 500, "warmup": 50},
    "total_cpu_us_per_call",
    "2026-07-28 sequential tools/call, stdio subprocess (CPU of both ends per call)",
    ("calls_per_cpu_s", "client_cpu_us_per_call", "server_cpu_us_per_call", "p50_us"),
)
WORKLOADS["W11H"] = Spec(
    w11_modern,
    {"calls": 1000, "warmup": 100, "http": 1},
    {"calls": 300, "warmup": 30, "http": 1},
    "total_cpu_us_per_call",
    "2026-07-28 sequential tools/call, Streamable HTTP subprocess (CPU of both ends per call)",
    ("calls_per_cpu_s", "client_cpu_us_per_call", "server_cpu_us_per_call", "p50_us"),
)
#: the in-memory workloads again, on a one-message buffer each way (mcp.Client's own size)
for _name in ("W1", "W2", "W4", "W5", "W6", "W8"):
    _spec = WORKLOADS[_name]
    WORKLOADS[_name + "b"] = _spec._replace(
        full={**_spec.full, "buffer": 1},
        quick={**_spec.quick, "buffer": 1},
        label=_spec.label + ", one-message buffer",
    )

# in order: W1, W1b, W2, W2b, ... W9, W9J, W10, W10i, W11, W11H
WORKLOADS = dict(sorted(WORKLOADS.items(), key=lambda kv: (int(kv[0][1:].rstrip("bJiH")), kv[0])))

__all__ = ["WORKLOADS", "Skip", "Spec"]
