"""Recorded MCP traffic: the tap's JSON Lines, and the other shapes a maintainer may have.

The tap writes one JSON object per line::

    {"mcp_ref_traffic": 1, "transport": "stdio", "target": "python server.py"}     (first line)
    {"ts": 1732500000.123, "dir": "c2s", "message": {"jsonrpc": "2.0", ...}}
    {"ts": 1732500000.125, "dir": "s2c", "raw": "a line that is not JSON"}

and, for Streamable HTTP, the headers of the POST that carried a client's message
(``"headers"``), each step of an exchange the tap judged (``{"http": "head",
"status": 200, ...}``: :func:`.http_rules.judge_step`) and the number of the exchange
each message and step belongs to (``"x"``: it tells the sessions apart), so ``mcp-ref
judge`` sees what the tap saw.

:func:`read_traffic` reads that and more, telling formats apart by content:

* JSON Lines or a JSON list of records with a direction (``dir``,
  ``direction``, ``from``, ``sender``...: ``c2s`` / ``s2c``, ``client`` /
  ``server``, ``client->server``..., or ``sent`` / ``received`` seen from the
  ``perspective`` side) and the message (``message``, ``msg``, ``data``,
  ``payload``..., an object or its JSON text), or the message fields inline;
* a JSON object holding such a list under ``messages``, ``traffic``,
  ``entries`` or ``log``;
* a list of ``{"request": ..., "response": ...}`` pairs, as the MCP
  Inspector's history holds them (ids are made up: the pairs have none);
* text logs with one message per line after ``Message from client:`` /
  ``Message from server:`` (Claude Desktop's MCP logs) or ``-->`` / ``<--``.
"""

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any, Final, Literal

import attrs

from .observer import Direction

__all__ = ["Record", "read_traffic", "traffic_header", "traffic_line", "http_line", "TrafficFormatError"]

Perspective = Literal["client", "server"]

_TO_SERVER: Final = frozenset(
    {"c2s", "client->server", "client_to_server", "to_server", "toserver", "client", "from_client", "request"}
)
_TO_CLIENT: Final = frozenset(
    {"s2c", "server->client", "server_to_client", "to_client", "toclient", "server", "from_server", "response"}
)
_SENT: Final = frozenset({"sent", "send", "outgoing", "out", "tx", "write", ">", "->", "-->"})
_RECEIVED: Final = frozenset({"received", "receive", "recv", "incoming", "in", "rx", "read", "<", "<-", "<--"})
_DIRECTION_KEYS: Final = ("dir", "direction", "from", "sender", "source", "src", "type")
_MESSAGE_KEYS: Final = ("message", "msg", "data", "payload", "json", "body", "line", "raw", "content")
_LIST_KEYS: Final = ("messages", "traffic", "entries", "log", "records")
_TEXT_MARKERS: Final = (
    ("Message from client:", Direction.TO_SERVER),
    ("Message from server:", Direction.TO_CLIENT),
    ("-->", None),
    ("<--", None),
)


class TrafficFormatError(ValueError):
    """The file is not traffic in any shape we know."""


@attrs.frozen
class Record:
    direction: Direction
    data: bytes
    ts: float | None = None
    #: (HTTP) the headers of the POST that carried a client's message
    headers: dict[str, str] | None = None
    #: (HTTP, the tap's log) one step of an exchange as the tap judged it, not a message:
    #: ``{"http": "head" | "event" | "end" | "still-open", ...}`` (:func:`.http_rules.judge_step`)
    http: dict[str, Any] | None = None
    #: (HTTP, the tap's log) the number of the exchange the message crossed in (``"x"``): it tells
    #: the sessions apart (:mod:`.sessions`)
    exchange: int | None = None


def traffic_header(transport: str, target: str) -> str:
    return json.dumps({"mcp_ref_traffic": 1, "transport": transport, "target": target}) + "\n"


def traffic_line(
    direction: Direction,
    data: bytes,
    ts: float | None = None,
    headers: dict[str, str] | None = None,
    exchange: int | None = None,
) -> str:
    """One JSON Lines record for a message as it crossed (parsed when it is JSON, else raw text);
    ``headers``: (HTTP) those of the POST that carried it; ``exchange``: (HTTP) the number of its exchange."""
    record: dict[str, Any] = {"ts": round(time.time() if ts is None else ts, 6), "dir": direction.value}
    if exchange is not None:
        record["x"] = exchange
    try:
        record["message"] = json.loads(data)
    except ValueError:
        record["raw"] = data.decode("utf-8", "replace")
    if headers is not None:
        record["headers"] = headers
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def http_line(step: dict[str, Any], ts: float | None = None) -> str:
    """One JSON Lines record for a step of an HTTP exchange (``{"http": kind, ...}``), as the tap judged it."""
    record = {"ts": round(time.time() if ts is None else ts, 6), **step}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _direction(value: Any, perspective: Perspective) -> Direction | None:
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    if word in _TO_SERVER:
        return Direction.TO_SERVER
    if word in _TO_CLIENT:
        return Direction.TO_CLIENT
    ours = Direction.TO_SERVER if perspective == "client" else Direction.TO_CLIENT
    if word in _SENT:
        return ours
    if word in _RECEIVED:
        return ours.back
    return None


def _encode(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _ts(record: dict[str, Any]) -> float | None:
    for key in ("ts", "timestamp", "time"):
        value = record.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def _from_record(record: Any, perspective: Perspective) -> Record | None:
    """A record with a direction, or None when ``record`` is not one."""
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("http"), str):
        return Record(Direction.TO_CLIENT, b"", _ts(record), http=record)
    direction = next(
        (d for key in _DIRECTION_KEYS if (d := _direction(record.get(key), perspective)) is not None), None
    )
    if direction is None:
        return None
    headers = record.get("headers")
    headers = {str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else None
    exchange = record.get("x")
    exchange = exchange if type(exchange) is int else None
    for key in _MESSAGE_KEYS:
        if key in record:
            return Record(direction, _encode(record[key]), _ts(record), headers, exchange=exchange)
    if "jsonrpc" in record or "method" in record or "result" in record or "error" in record:
        inline = {k: v for k, v in record.items() if k not in _DIRECTION_KEYS and k not in ("ts", "timestamp", "time")}
        return Record(direction, _encode(inline), _ts(record))
    return None


def _pairs(items: list[Any]) -> Iterator[Record]:
    """The MCP Inspector's history: {"request": ..., "response": ...} with no ids."""
    for n, item in enumerate(items, start=1):
        request = item["request"]
        request = json.loads(request) if isinstance(request, str) else request
        if not isinstance(request, dict):
            raise TrafficFormatError(f"entry {n}: the request is not a JSON object")
        rid = request.get("id", f"history-{n}")
        yield Record(Direction.TO_SERVER, _encode({"jsonrpc": "2.0", "id": rid, **request}))
        response = item.get("response")
        if response is None:
            continue
        response = json.loads(response) if isinstance(response, str) else response
        if isinstance(response, dict) and ("result" in response or "error" in response):
            yield Record(Direction.TO_CLIENT, _encode({"jsonrpc": "2.0", "id": rid, **response}))
        else:
            yield Record(Direction.TO_CLIENT, _encode({"jsonrpc": "2.0", "id": rid, "result": response}))


def _from_list(items: list[Any], perspective: Perspective) -> list[Record]:
    if items and all(isinstance(i, dict) and "request" in i for i in items):
        return list(_pairs(items))
    out: list[Record] = []
    for n, item in enumerate(items, start=1):
        if isinstance(item, dict) and "mcp_ref_traffic" in item:
            continue
        record = _from_record(item, perspective)
        if record is None:
            raise TrafficFormatError(f"entry {n} has no direction we understand: {json.dumps(item)[:120]}")
        out.append(record)
    return out


def _from_text(lines: Iterable[str], perspective: Perspective) -> list[Record]:
    decoder = json.JSONDecoder()
    out: list[Record] = []
    for line in lines:
        for marker, direction in _TEXT_MARKERS:
            at = line.find(marker)
            if at < 0:
                continue
            rest = line[at + len(marker) :].lstrip()
            if direction is None:
                direction = _direction(marker, perspective)
            assert direction is not None
            try:
                _, end = decoder.raw_decode(rest)
                out.append(Record(direction, rest[:end].encode("utf-8", "surrogatepass")))
            except ValueError:
                out.append(Record(direction, rest.rstrip("\r\n").encode("utf-8", "surrogatepass")))
            break
    return out


def read_traffic(text: str, *, perspective: Perspective = "client") -> tuple[list[Record], dict[str, Any]]:
    """The records in ``text`` (in order) and what its header says (transport, target).

    ``perspective``: whose "sent" and "received" a log speaks of.
    TrafficFormatError when it is none of the shapes above.
    """
    stripped = text.strip()
    if not stripped:
        raise TrafficFormatError("the file is empty")
    header: dict[str, Any] = {}
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    if isinstance(whole, list):
        return _from_list(whole, perspective), header
    if isinstance(whole, dict):
        for key in _LIST_KEYS:
            if isinstance(whole.get(key), list):
                return _from_list(whole[key], perspective), {k: v for k, v in whole.items() if k != key}
        if _from_record(whole, perspective) is None:
            raise TrafficFormatError("a JSON object without a list of messages")
    lines = stripped.splitlines()
    records: list[Record] = []
    jsonl = True
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            jsonl = False
            break
        if isinstance(item, dict) and "mcp_ref_traffic" in item:
            header = item
            continue
        record = _from_record(item, perspective)
        if record is None:
            raise TrafficFormatError(f"line {n} has no direction we understand: {line[:120]}")
        records.append(record)
    if jsonl:
        return records, header
    records = _from_text(lines, perspective)
    if not records:
        raise TrafficFormatError(
            "no messages found: expected JSON Lines, a JSON list, or log lines with"
            " 'Message from client:' / 'Message from server:' or '-->' / '<--'"
        )
    return records, header
