"""``mcp-ref judge``: recorded traffic, judged offline (sans-IO).

::

    report = judge_file("traffic.jsonl")
    print(report.to_text())

The records go through :class:`~mcp_ref.crosscheck.observer.Observer` s in
order, as the tap would have judged them live: one per session of a tap's
Streamable HTTP log (:mod:`.sessions`), one for anything else. Stdio traffic is judged
line by line (a message spread over lines, or a line that is not JSON, is
the sender's fault); where the transport is unknown, a message that is not
JSON breaks JSON-RPC itself.

A log whose directions are the wrong way round (a log kept on the server's
side judged ``--as client``, or the other way) breaks a dozen rules that
say nothing about either side; :func:`reversed_directions` spots it from
the methods that only one side sends, and the report says so first.
"""

import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..schema.messages import CLIENT_NOTIFICATIONS, CLIENT_REQUESTS, SERVER_NOTIFICATIONS, SERVER_REQUESTS
from .http_rules import HttpJudge, judge_step
from .observer import Direction, Transport
from .report import Finding, Report
from .sessions import Sessions, report_of
from .traffic import Perspective, Record, read_traffic

__all__ = ["judge_records", "judge_file", "reversed_directions"]


def _one_way(message: Any) -> tuple[Direction, str] | None:
    """The only direction ``message`` can travel in, and what it is; None when either can."""
    if not isinstance(message, dict):
        return None
    method = message.get("method")
    if isinstance(method, str):
        to_server, to_client = (
            (CLIENT_REQUESTS, SERVER_REQUESTS) if "id" in message else (CLIENT_NOTIFICATIONS, SERVER_NOTIFICATIONS)
        )
        if (method in to_server) == (method in to_client):  # ping, progress, tasks/*... or unknown
            return None
        return (Direction.TO_SERVER if method in to_server else Direction.TO_CLIENT), method
    result = message.get("result")
    if isinstance(result, dict) and "serverInfo" in result and "protocolVersion" in result:
        return Direction.TO_CLIENT, "an initialize result"
    return None


def reversed_directions(records: Sequence[Record]) -> str | None:
    """What shows that the records' directions are the wrong way round, or None.

    Counts the messages only one side may send (initialize and tools/call come
    from the client, sampling/createMessage and notifications/message from the
    server, an initialize result from the server...): reversed when most of
    them, and the first, travel the other way.
    """
    right = wrong = 0
    first: str | None = None
    for record in records:
        try:
            message = json.loads(record.data)
        except ValueError:
            continue
        for item in message if isinstance(message, list) else [message]:
            if (way := _one_way(item)) is None:
                continue
            if way[0] is record.direction:
                right += 1
            else:
                wrong += 1
                if first is None and right == 0:
                    first = f"{way[1]} went from {way[0].receiver} to {way[0].sender}"
    if first is None or wrong <= right:
        return None
    return f"{first}, and {wrong} of {wrong + right} messages only one side sends went the wrong way"


_LABELS_SWAPPED = "the log may name them the other way round"


def judge_records(
    records: Iterable[Record],
    *,
    target: str = "recorded traffic",
    transport: Transport = None,
    reversed_hint: str = _LABELS_SWAPPED,
) -> Report:
    """Judge ``records`` in order; ``reversed_hint`` ends the note when the directions look reversed."""
    records = list(records)
    # (one observer per session, found as the tap found them: the same routing, the same report)
    sessions = Sessions(transport)
    http = HttpJudge()
    transport_findings: list[Finding] = []
    traffic: list[tuple[Direction, bytes]] = []
    for record in records:
        if record.http is not None:
            # (the tap's log of Streamable HTTP: a step of an exchange, judged as the tap judged it)
            sessions.step(record.http)
            transport_findings += judge_step(http, record.http)
            continue
        traffic.append((record.direction, record.data))
        if transport == "stdio":
            sessions.sessionless.observe_stdio_line(record.direction, record.data)
            continue
        if record.direction is Direction.TO_SERVER:
            obs = sessions.sent(record.exchange, record.headers, record.data)
        else:
            obs = sessions.received(record.exchange)
        obs.observe(record.direction, record.data, headers=record.headers)
    report = report_of(target, sessions, transport_findings, traffic)
    if (why := reversed_directions(records)) is not None:
        report.notes.insert(0, f"the directions look reversed ({why}): {reversed_hint}")
    return report


def judge_file(path: str, *, transport: Transport = None, perspective: Perspective = "client") -> Report:
    """Judge the traffic in ``path`` ("-" for standard input). OSError when it cannot
    be read, ValueError (TrafficFormatError) when it holds no traffic we understand."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    records, header = read_traffic(text, perspective=perspective)
    if transport is None and header.get("transport") in ("stdio", "http"):
        transport = header["transport"]
    target = str(header.get("target") or ("standard input" if path == "-" else path))
    hint = _LABELS_SWAPPED
    other: Perspective = "server" if perspective == "client" else "client"
    if reversed_directions(records) is not None:
        as_other = [r.direction for r in read_traffic(text, perspective=other)[0]]
        if as_other != [r.direction for r in records]:  # "sent" and "received" were read from the wrong side
            hint = f"was it recorded on the {other}'s side? judge it with --as {other}"
    return judge_records(records, target=target, transport=transport, reversed_hint=hint)
