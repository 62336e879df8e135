"""Helpers shared by the workloads: statistics, memory readings, the probe, skips."""

import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
SERVERS = Path(__file__).resolve().parent / "servers"

#: the tool every implementation registers, with the same input schema
ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
PROGRESS_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
EMPTY_SCHEMA: dict[str, object] = {"type": "object"}

now = time.perf_counter
cpu_now = time.process_time


class Skip(Exception):
    """A workload cannot run for this implementation (the reason is printed)."""


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), nearest-rank on the sorted values."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def rss_bytes() -> int:
    """Resident set size of this process (Linux /proc; falls back to ru_maxrss)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child_env() -> dict[str, str]:
    """Environment for server subprocesses: the repository importable, nothing else changed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def server_script(name: str) -> str:
    return str(SERVERS / f"{name}.py")


PYTHON = sys.executable


class Probe:
    """What in-process handlers report back to the workload (trio primitives only).

    ``hang``: entered, then sleeps until cancelled and records when the
    cancellation reached it. ``block``: counts itself in and waits for release.
    """

    def __init__(self) -> None:
        self.hang_entered = trio.Event()
        self.cancel_seen = trio.Event()
        self.cancel_seen_at = 0.0
        self.block_target = 0
        self.blocked = 0
        self.all_blocked = trio.Event()
        self.release = trio.Event()

    def reset_hang(self) -> None:
        self.hang_entered = trio.Event()
        self.cancel_seen = trio.Event()
        self.cancel_seen_at = 0.0

    async def hang(self) -> None:
        self.hang_entered.set()
        try:
            await trio.sleep_forever()
        finally:
            # reached by the Cancelled that the peer's notifications/cancelled caused
            self.cancel_seen_at = now()
            self.cancel_seen.set()

    async def block(self) -> None:
        self.blocked += 1
        if self.blocked >= self.block_target:
            self.all_blocked.set()
        await self.release.wait()
