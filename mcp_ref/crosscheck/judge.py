"""``mcp-ref judge``: recorded traffic, judged offline (sans-IO).

::

    report = judge_file("traffic.jsonl")
    print(report.to_text())

The records go through one :class:`~mcp_ref.crosscheck.observer.Observer`
in order, as the tap would have judged them live. Stdio traffic is judged
line by line (a message spread over lines, or a line that is not JSON, is
the sender's fault); where the transport is unknown, a message that is not
JSON breaks JSON-RPC itself.
"""

import sys
from collections.abc import Iterable
from pathlib import Path

from .observer import Direction, Observer, Transport
from .report import Report
from .traffic import Perspective, Record, read_traffic

__all__ = ["judge_records", "judge_file"]


def judge_records(
    records: Iterable[Record], *, target: str = "recorded traffic", transport: Transport = None
) -> Report:
    obs = Observer(transport=transport)
    for record in records:
        if transport == "stdio":
            obs.observe_stdio_line(record.direction, record.data)
        else:
            obs.observe(record.direction, record.data)
    for direction in obs.count:
        obs.flush(direction)
    report = Report(target, obs.revision)
    report.extend(obs.findings)
    report.notes.extend(obs.notes)
    report.notes.append(
        f"{obs.count[Direction.TO_SERVER]} message(s) from the client, {obs.count[Direction.TO_CLIENT]} from the server"
    )
    return report


def judge_file(path: str, *, transport: Transport = None, perspective: Perspective = "client") -> Report:
    """Judge the traffic in ``path`` ("-" for standard input). OSError when it cannot
    be read, ValueError (TrafficFormatError) when it holds no traffic we understand."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    records, header = read_traffic(text, perspective=perspective)
    if transport is None and header.get("transport") in ("stdio", "http"):
        transport = header["transport"]
    target = str(header.get("target") or ("standard input" if path == "-" else path))
    return judge_records(records, target=target, transport=transport)
