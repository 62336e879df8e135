"""``mcp-ref tap``: sit between a real client and a real server, judge both, change nothing.

Stdio: a client launches ``mcp-ref tap --log traffic.jsonl -- CMD ARGS...``
in place of the server. The tap starts ``CMD ARGS``, copies the client's
bytes to the server's stdin and the server's stdout to the client as they
come (unchanged, unbuffered beyond a read), passes the server's stderr
through, and exits with the server's exit status. Each line is also judged
by an :class:`~mcp_ref.crosscheck.observer.Observer` (two engines, one per
role): findings are printed on stderr as they happen, the traffic is written
as JSON Lines (``mcp-ref judge`` reads them back), and at the end the report
goes where ``--json`` / ``--junit`` say.

Streamable HTTP (``--listen 127.0.0.1:PORT URL``) is in :mod:`.http_tap`.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from typing import IO, Any

import trio

from ..basic.transports.stdio import DEFAULT_MAX_MESSAGE_SIZE, LineFramer, Oversized
from .http_rules import HttpJudge, judge_step
from .observer import Direction, Observer
from .report import MAX_TRAFFIC, Finding, Report
from .sessions import SESSION_MARK, Sessions, report_of
from .traffic import http_line, traffic_header, traffic_line

__all__ = ["Tap", "run_stdio_tap", "finding_line"]

_READ = 65536


def finding_line(finding: Finding) -> str:
    who = f" ({finding.party})" if finding.party else ""
    sessions = [e for e in finding.evidence if isinstance(e, str) and e.startswith(SESSION_MARK)]
    where = f" [{sessions[-1]}]" if sessions else ""
    return f"mcp-ref tap: {finding.level}{who} {finding.requirement}: {finding.message}{where}"


class Tap:
    """What a tap judges and records, whatever the transport (sans-IO apart from the log file)."""

    def __init__(
        self,
        target: str,
        transport: str,
        *,
        log: IO[str] | None = None,
        on_finding: Callable[[Finding], None] | None = None,
    ) -> None:
        self.target = target
        #: one observer per session (stdio: one for the connection)
        self.sessions = Sessions("stdio" if transport == "stdio" else "http")
        #: what the transport itself showed (HTTP statuses, SSE events...)
        self.transport_findings: list[Finding] = []
        self._exchanges = 0
        self.log = log
        self.on_finding = on_finding
        #: (HTTP) what the answers say about the transport: the judge the battery uses too
        self.judge = HttpJudge()
        #: what crossed, for the report's message sequence (--html)
        self.traffic: list[tuple[Direction, bytes]] = []
        #: (HTTP) seconds an SSE stream may stay open after it carried its response
        self.linger = 2.0
        if log is not None:
            log.write(traffic_header(transport, target))
            log.flush()

    @property
    def observer(self) -> Observer:
        """The observer of the traffic without sessions (stdio: of everything)."""
        return self.sessions.sessionless

    def new_exchange(self) -> int:
        """(HTTP) the number of the next exchange: its records carry it (``"x"``), so ``judge`` finds
        each session's messages as the tap did."""
        self._exchanges += 1
        return self._exchanges

    def record(
        self,
        direction: Direction,
        data: bytes,
        headers: Mapping[str, str] | None = None,
        exchange: int | None = None,
    ) -> None:
        if len(self.traffic) < MAX_TRAFFIC:
            self.traffic.append((direction, data))
        if self.log is not None:
            hdrs = dict(headers) if headers is not None else None
            self.log.write(traffic_line(direction, data, time.time(), hdrs, exchange))
            self.log.flush()

    def http_step(self, step: dict[str, Any]) -> None:
        """(HTTP) one step of an exchange (its head, an SSE event, its end...): judged by the
        :class:`HttpJudge` and logged as it was judged, so ``mcp-ref judge`` replays the same."""
        if self.log is not None:
            self.log.write(http_line(step, time.time()))
            self.log.flush()
        self.sessions.step(step)
        self.found_all(judge_step(self.judge, step))

    def _found(self, findings: list[Finding]) -> None:
        if self.on_finding is not None:
            for finding in findings:
                self.on_finding(finding)

    def stdio_line(self, direction: Direction, line: bytes) -> None:
        self.record(direction, line)
        self._found(self.observer.observe_stdio_line(direction, line))

    def message(
        self,
        direction: Direction,
        data: bytes,
        headers: Mapping[str, str] | None = None,
        exchange: int | None = None,
    ) -> None:
        """One message; ``headers``: (HTTP) those of the POST that carried it; ``exchange``: (HTTP)
        the number of the exchange it crossed in (:meth:`new_exchange`), which picks its session."""
        self.record(direction, data, headers, exchange)
        if direction is Direction.TO_SERVER:
            obs = self.sessions.sent(exchange, headers, data)
        else:
            obs = self.sessions.received(exchange)
        self._found(self.sessions.named(obs, obs.observe(direction, data, headers=headers)))

    def found(self, finding: Finding) -> None:
        """A finding the transport itself made (an HTTP status, say)."""
        self.transport_findings.append(finding)
        self._found([finding])

    def found_all(self, findings: list[Finding]) -> None:
        for finding in findings:
            self.found(finding)

    def end(self) -> Report:
        return report_of(self.target, self.sessions, self.transport_findings, self.traffic, self._found)


async def _pump(
    source: trio.abc.ReceiveStream,
    sink: trio.abc.SendStream,
    direction: Direction,
    tap: Tap,
) -> None:
    """Copy ``source`` to ``sink`` unchanged; judge it line by line on the way."""
    framer = LineFramer(DEFAULT_MAX_MESSAGE_SIZE)
    try:
        while True:
            data = await source.receive_some(_READ)
            if not data:
                framer.feed_eof()
            else:
                try:
                    await sink.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass  # the reader went away; keep judging what still comes
                framer.feed(data)
            while (item := framer.next_line()) is not None:
                if type(item) is Oversized:
                    tap.record(direction, item.head)
                else:
                    assert type(item) is bytes
                    tap.stdio_line(direction, item)
            if not data:
                return
    finally:
        # the end of one side is the end of the other's input
        with trio.CancelScope(shield=True):
            try:
                await sink.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass


async def run_stdio_tap(
    command: str,
    args: list[str],
    tap: Tap,
    *,
    stdin: trio.abc.ReceiveStream | None = None,
    stdout: trio.abc.SendStream | None = None,
) -> int:
    """Run the server ``command args`` behind the tap; returns its exit status.

    ``stdin`` / ``stdout``: the client's side (this process's own by default).
    A SIGTERM or SIGINT for the tap is passed on to the server.
    """
    client_in = stdin if stdin is not None else trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    client_out = stdout if stdout is not None else trio.lowlevel.FdStream(os.dup(sys.stdout.fileno()))
    process = await trio.lowlevel.open_process(
        [command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None
    )
    server_in, server_out = process.stdin, process.stdout
    assert server_in is not None and server_out is not None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_pump, client_in, server_in, Direction.TO_SERVER, tap)
        nursery.start_soon(_forward_signals, process)

        async def server_side() -> None:
            await _pump(server_out, client_out, Direction.TO_CLIENT, tap)
            await process.wait()
            nursery.cancel_scope.cancel()  # the server is done: so is the tap

        nursery.start_soon(server_side)
    with trio.CancelScope(shield=True):
        if process.returncode is None:
            process.terminate()
            with trio.move_on_after(2):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
        await client_in.aclose()
    code = process.returncode
    assert code is not None
    return code if code >= 0 else 128 - code


async def _forward_signals(process: trio.Process) -> None:
    """SIGTERM / SIGINT for the tap go to the server: its client is shutting it down."""
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for sig in signals:
            if process.returncode is None:
                process.send_signal(sig)
