"""The soak: the everything example over Streamable HTTP, driven for a fixed number of
messages from many sessions, its resident memory read as it goes.

::

    make soak                                   # 1,000,000 messages
    make soak SOAK="--messages 100000"          # fewer
    .venv/bin/python bench/soak.py --messages 200000 --workers 8 --samples 20

Each worker runs a session of our client and, round after round, a mix of what
a long-lived server sees: plain calls (``echo``, ``add``), a call with progress
(``progress_emitter``, ten notifications), a call cancelled at once
(``long_running``: ``notifications/cancelled`` reaches a running handler), a
task (``batch_job`` as a task, then ``tasks/result``; ttl 5 s) and a ping; every
``--rounds-per-session`` rounds it closes its session and opens a new one.
Messages are counted on the client's channels, both ways. The server's RSS
(``/proc/PID/status``, Linux) is read at ``--samples`` points; after the
warm-up (``--warmup``, a fraction of the messages) it must stay within
``--tolerance`` (10 %) of its first reading after the warm-up, or the run
fails (exit status 1). Results: bench/README.md, "Soak".
"""

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp_ref.basic.transports.http_client import HttpClientChannel  # noqa: E402
from mcp_ref.schema.tools import CallToolRequestParams  # noqa: E402
from mcp_ref.session.http import open_http_client  # noqa: E402

MIB = 1024 * 1024


@dataclass
class Count:
    """Messages through the client channels (sent and received), and what failed."""

    messages: int = 0
    rounds: int = 0
    errors: dict[str, int] = field(default_factory=dict)


COUNT = Count()


def _counting() -> None:
    """Count every message our HTTP channels send and receive (this process only)."""
    send, receive = HttpClientChannel.send, HttpClientChannel.receive

    async def counted_send(self: HttpClientChannel, value: bytes) -> None:
        await send(self, value)
        COUNT.messages += 1

    async def counted_receive(self: HttpClientChannel) -> bytes:
        data = await receive(self)
        COUNT.messages += 1
        return data

    HttpClientChannel.send = counted_send  # type: ignore[method-assign]
    HttpClientChannel.receive = counted_receive  # type: ignore[method-assign]


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise LookupError("VmRSS")


async def one_round(client: Any) -> None:
    await client.call_tool("echo", {"text": "soak"}, timeout=60)
    await client.call_tool("add", {"a": 2, "b": 3}, timeout=60)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        pass

    await client.call_tool("progress_emitter", {"count": 10}, progress=on_progress, timeout=60)
    pending = await client.session.start_request(
        "tools/call", CallToolRequestParams(name="long_running", arguments={"seconds": 60}), timeout=60
    )
    await pending.cancel("soak: cancelled at once")
    task = await client.call_tool_as_task("batch_job", {"seconds": 0}, ttl=5_000, timeout=60)
    await task.result(timeout=60)
    await client.ping(timeout=60)


async def worker(url: str, total: int, rounds_per_session: int) -> None:
    while COUNT.messages < total:
        async with open_http_client(url) as client:
            for _ in range(rounds_per_session):
                if COUNT.messages >= total:
                    break
                try:
                    await one_round(client)
                    COUNT.rounds += 1
                except Exception as e:  # counted and reported: a soak keeps going
                    name = type(e).__name__
                    COUNT.errors[name] = COUNT.errors.get(name, 0) + 1
                    if sum(COUNT.errors.values()) > 100:
                        raise


async def sampler(pid: int, total: int, samples: int, readings: list[tuple[int, float, int]]) -> None:
    start = time.monotonic()
    step = total // samples
    next_at = step
    while COUNT.messages < total:
        await trio.sleep(0.05)
        if COUNT.messages >= next_at:
            readings.append((COUNT.messages, time.monotonic() - start, rss(pid)))
            print(
                f"  {COUNT.messages:>10,} messages  {time.monotonic() - start:7.1f} s"
                f"  server RSS {readings[-1][2] / MIB:7.1f} MiB",
                flush=True,
            )
            next_at += step
    readings.append((COUNT.messages, time.monotonic() - start, rss(pid)))


async def soak(args: argparse.Namespace) -> int:
    _counting()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "mcp_ref.examples.everything", "--http", "--port", "0"]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, env=env, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        match = re.search(r"(http://\S+)", line)
        if match is None:
            raise SystemExit(f"the server did not start: {line!r}")
        url = match.group(1)
        readings: list[tuple[int, float, int]] = []
        print(f"soak: {args.messages:,} messages, {args.workers} sessions at a time, server pid {process.pid} at {url}")
        print(f"  {0:>10,} messages  {0:7.1f} s  server RSS {rss(process.pid) / MIB:7.1f} MiB")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_drain, process)  # (its log lines would fill the pipe)
            nursery.start_soon(sampler, process.pid, args.messages, args.samples, readings)
            async with trio.open_nursery() as workers:
                for _ in range(args.workers):
                    workers.start_soon(worker, url, args.messages, args.rounds_per_session)
            nursery.cancel_scope.cancel()
    finally:
        process.terminate()
        process.wait(10)
    return report(args, readings)


async def _drain(process: "subprocess.Popen[str]") -> None:
    assert process.stderr is not None
    stream = process.stderr
    while await trio.to_thread.run_sync(stream.readline, abandon_on_cancel=True):
        pass


def report(args: argparse.Namespace, readings: list[tuple[int, float, int]]) -> int:
    warm = [r for r in readings if r[0] >= args.messages * args.warmup]
    if not warm:
        print("not enough readings after the warm-up")
        return 1
    base = warm[0][2]
    worst = max(abs(r[2] - base) / base for r in warm)
    elapsed = readings[-1][1]
    print(
        f"{COUNT.messages:,} messages in {elapsed:.0f} s ({COUNT.messages / elapsed:,.0f}/s), {COUNT.rounds:,} rounds;"
        f" errors: {COUNT.errors or 'none'}"
    )
    print(
        f"after the warm-up ({args.warmup:.0%}): RSS {base / MIB:.1f} MiB at first, "
        f"{min(r[2] for r in warm) / MIB:.1f}-{max(r[2] for r in warm) / MIB:.1f} MiB, "
        f"largest deviation {worst:.1%} (limit {args.tolerance:.0%})"
    )
    ok = worst <= args.tolerance
    print("FLAT" if ok else "NOT FLAT")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--rounds-per-session", type=int, default=200)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--warmup", type=float, default=0.2)
    parser.add_argument("--tolerance", type=float, default=0.10)
    args = parser.parse_args()
    if not Path("/proc/self/status").exists():
        print("the soak reads RSS from /proc (Linux)")
        return 2
    return trio.run(soak, args)


if __name__ == "__main__":
    sys.exit(main())
