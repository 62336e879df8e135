"""basic/transports#streamable-http: the sans-IO pieces (no trio, no sockets).

* Server-Sent Events: :func:`encode_sse` and the incremental :class:`SSEDecoder`.
* Header rules: the Accept check, the Origin / Host allow-lists (DNS rebinding,
  transports#9, #10), protocol-version checks (#67, #68).
* Session ids (visible ASCII, cryptographically random, #56, #57) and event
  ids that name their stream (#50, #51), with :func:`parse_event_id`.
* :class:`EventStore`: the bounded per-session record of sent events used to
  replay a stream after a disconnection (#52-#54).

The trio/h11 drivers are :mod:`.http_server` and :mod:`.http_client`.
"""

import re
import secrets
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import attrs

from ..lifecycle import SUPPORTED_VERSIONS

__all__ = [
    "MCP_SESSION_ID",
    "MCP_PROTOCOL_VERSION",
    "LAST_EVENT_ID",
    "DEFAULT_ASSUMED_VERSION",
    "SSEEvent",
    "SSEDecoder",
    "encode_sse",
    "accepts",
    "new_session_id",
    "valid_session_id",
    "make_event_id",
    "parse_event_id",
    "origin_allowed",
    "host_allowed",
    "version_header_ok",
    "EventStore",
    "StoreBudget",
    "LOOPBACK_HOSTS",
    "MAX_EVENT_ID_LENGTH",
]

MCP_SESSION_ID = "mcp-session-id"
MCP_PROTOCOL_VERSION = "mcp-protocol-version"
LAST_EVENT_ID = "last-event-id"
#: what the spec assumes when the version header is absent (basic/transports#67, see version_header_ok)
DEFAULT_ASSUMED_VERSION = "2025-03-26"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")

_SESSION_ID = re.compile(r"[\x21-\x7e]+")


@attrs.frozen
class SSEEvent:
    data: str | None = None
    id: str | None = None
    event: str | None = None
    retry: int | None = None
    #: the event's data was longer than the decoder's limit and was dropped: its size in
    #: bytes (at least), and its first bytes in ``head`` (enough to read a message's id)
    too_large: int | None = None
    head: bytes = attrs.field(default=b"", eq=False, repr=False)


def encode_sse(
    data: str | None = None, *, id: str | None = None, retry: int | None = None, event: str | None = None
) -> bytes:
    """One SSE event. ``data`` with newlines becomes several data lines."""
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    if retry is not None:
        lines.append(f"retry: {int(retry)}")
    if data is not None:
        lines.extend(f"data: {line}" for line in data.split("\n"))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


_LINE_END = re.compile(rb"[\r\n]")
_HEAD = 1024  # first bytes of dropped data kept, to read a message's id from
#: the longest retry value taken (about 11 days, in ms); a longer one is ignored
_MAX_RETRY_DIGITS = 9


class SSEDecoder:
    """Incremental SSE parser (WHATWG event-stream rules, UTF-8), in linear time and bounded memory.

    ``max_event_size`` (None: no limit) bounds the data of one event, and so
    the length of a line: a longer line is dropped as it arrives (never held
    whole), and so is the data of an event that grows past the limit; the
    event is then yielded with ``data=None`` and ``too_large`` set (``head``
    holds its data's first bytes), so the reader can say which message it
    lost. An ``id`` or ``event`` line over 1 KiB is ignored (an id is sent back
    as Last-Event-ID). Each byte is scanned once: the search for a line end resumes where
    it stopped, and consumed bytes are compacted away only when they make up
    half the buffer.
    """

    def __init__(self, max_event_size: int | None = None) -> None:
        if max_event_size is not None and max_event_size < 1:
            raise ValueError(f"max_event_size must be at least 1 (or None), not {max_event_size}")
        self.max_event_size = max_event_size
        self._buf = bytearray()
        self._start = 0  # first byte of the current line
        self._scan = 0  # no line end in _buf[_start:_scan]
        self._skip_lf = False  # the last line ended with "\r": a "\n" right after it belongs to it
        self._skipping: int | None = None  # bytes of an over-long line dropped so far
        self._skipped_head = b""
        self._data: list[str] = []
        self._data_size = 0
        self._id: str | None = None
        self._event: str | None = None
        self._retry: int | None = None
        self._has_field = False
        self._too_large: int | None = None  # the current event's data was dropped
        self._head = b""
        #: the last event id seen (persists across events, as EventSource does)
        self.last_event_id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        buf = self._buf
        if self._start and self._start * 2 >= len(buf):
            del buf[: self._start]
            self._scan -= self._start
            self._start = 0
        buf += chunk
        events: list[SSEEvent] = []
        limit = self.max_event_size
        while True:
            if self._skip_lf and len(buf) > self._start:
                self._skip_lf = False
                if buf[self._start] == 0x0A:
                    self._start += 1
                    self._scan = max(self._scan, self._start)
            match = _LINE_END.search(buf, self._scan)
            if match is None:
                pending = len(buf) - self._start
                if self._skipping is not None:
                    self._skipping += pending
                    self._start = self._scan = len(buf)
                elif limit is not None and pending > limit + 6:  # (+ 6: room for "data: ")
                    # longer than any event we take: drop it as it arrives, all but its first bytes
                    self._skipping = pending
                    self._skipped_head = bytes(buf[self._start : self._start + _HEAD])
                    self._start = self._scan = len(buf)
                else:
                    self._scan = len(buf)
                return events
            idx = match.start()
            self._skip_lf = buf[idx] == 0x0D
            if self._skipping is not None:
                size = self._skipping + idx - self._start
                head, self._skipping, self._skipped_head = self._skipped_head, None, b""
                self._start = self._scan = idx + 1
                self._long_line(head, size)
                continue
            size = idx - self._start
            line = buf[self._start : idx].decode("utf-8", "replace")
            self._start = self._scan = idx + 1
            event = self._line(line, size)
            if event is not None:
                events.append(event)

    def drop_partial(self) -> None:
        """The connection ended: forget a half-received event, keep ``last_event_id`` (for resuming)."""
        self._buf = bytearray()
        self._start = self._scan = 0
        self._skip_lf, self._skipping, self._skipped_head = False, None, b""
        self._reset()

    def _reset(self) -> None:
        self._data, self._data_size, self._id, self._event, self._retry = [], 0, None, None, None
        self._has_field, self._too_large, self._head = False, None, b""

    def _long_line(self, head: bytes, size: int) -> None:
        """A line over the limit was dropped: when it was data, so is its event's."""
        if head.startswith(b"data"):
            name, _, value = head.partition(b":")
            if name == b"data":
                self._has_field = True
                self._drop_data(value[1:] if value.startswith(b" ") else value, size)

    def _drop_data(self, head: bytes, size: int) -> None:
        if self._too_large is None:
            self._head = ("\n".join(self._data).encode() + b"\n" + head if self._data else head)[:_HEAD]
            self._too_large = self._data_size
            self._data = []
        self._too_large += size

    def _line(self, line: str, size: int) -> SSEEvent | None:
        if line == "":
            if not self._has_field:
                return None
            event = SSEEvent(
                data="\n".join(self._data) if self._data and self._too_large is None else None,
                id=self._id,
                event=self._event,
                retry=self._retry,
                too_large=self._too_large,
                head=self._head,
            )
            self._reset()
            return event
        if line.startswith(":"):
            return None  # a comment
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        self._has_field = True
        if name == "data":
            if self._too_large is not None:
                self._too_large += size
            elif self.max_event_size is not None and self._data_size + size > self.max_event_size:
                self._drop_data(value.encode()[:_HEAD], size)
            else:
                self._data_size += size
                self._data.append(value)
            return None
        if size > _HEAD:
            return None  # an id or event name that long is not one we would send back or act on
        if name == "id" and "\0" not in value:
            self._id = value
            self.last_event_id = value
        elif name == "event":
            self._event = value
        elif name == "retry" and value.isascii() and value.isdigit() and len(value) <= _MAX_RETRY_DIGITS:
            self._retry = int(value)
        return None


def accepts(header: str | None, *types: str) -> bool:
    """Whether an Accept header lists every one of ``types`` (or a matching wildcard)."""
    offered = [part.split(";")[0].strip().lower() for part in (header or "").split(",") if part.strip()]

    def ok(t: str) -> bool:
        major = t.split("/")[0]
        return t in offered or "*/*" in offered or f"{major}/*" in offered

    return all(ok(t) for t in types)


def new_session_id() -> str:
    """[basic/transports#56, #57] 128 random bits, hex: visible ASCII."""
    return secrets.token_hex(16)


def valid_session_id(value: str) -> bool:
    return bool(_SESSION_ID.fullmatch(value)) and len(value) <= 256


def make_event_id(stream_id: str, seq: int) -> str:
    """[basic/transports#50, #51] unique in the session and naming its stream."""
    return f"{stream_id}.{seq}"


#: longest event id we issue is well under this (``g<n>.<seq>``); a longer one is not ours
MAX_EVENT_ID_LENGTH = 128


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """(stream id, sequence number) of an event id of ours; None for anything else."""
    if len(event_id) > MAX_EVENT_ID_LENGTH:
        return None  # (and int() of thousands of digits would raise, or take quadratic time)
    stream, _, seq = event_id.rpartition(".")
    if not stream or not seq.isdigit() or not seq.isascii():
        return None
    return stream, int(seq)


def _host_of(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.index("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def origin_allowed(origin: str | None, allowed: Iterable[str] | None) -> bool:
    """[basic/transports#9, #10] no Origin is fine (not a browser); a present one must be allowed.

    ``allowed`` holds full origins ("http://localhost:3000") or bare hosts;
    None allows loopback origins only.
    """
    if origin is None:
        return True
    try:
        parts = urlsplit(origin)
        host = (parts.hostname or "").lower()
    except ValueError:
        return False  # not a URL (``http://[::1``): no origin we could allow

    if allowed is None:
        return host in ("127.0.0.1", "localhost", "::1")
    allowed = list(allowed)
    return origin.rstrip("/") in [a.rstrip("/") for a in allowed] or host in [a.lower() for a in allowed]


def host_allowed(host: str | None, allowed: Iterable[str] | None) -> bool:
    """The Host header names one of ``allowed`` hosts (None: loopback names only)."""
    if host is None:
        return False
    name = _host_of(host)
    names = [h.lower() for h in allowed] if allowed is not None else list(LOOPBACK_HOSTS)
    return name in names or name.strip("[]") in names


def version_header_ok(value: str | None) -> bool:
    """[basic/transports#67, #68] absent is fine; present must be supported.

    Absent, the spec has servers assume :data:`DEFAULT_ASSUMED_VERSION`; our
    server never needs the header's value: every rule that depends on the
    revision (batches, priming events) follows the version the session
    negotiated, which is what that assumption stands in for.
    """
    return value is None or value in SUPPORTED_VERSIONS


class StoreBudget:
    """Bytes of events kept by all the :class:`EventStore` of a server together.

    Past ``max_bytes``, the store keeping the most gives up its oldest events
    (see :meth:`EventStore.give_up`) until the total fits again.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, not {max_bytes}")
        self.max_bytes = max_bytes
        self.used = 0
        self._stores: set[EventStore] = set()

    def join(self, store: "EventStore") -> None:
        self._stores.add(store)

    def leave(self, store: "EventStore") -> None:
        self._stores.discard(store)

    def fit(self) -> None:
        while self.used > self.max_bytes:
            largest = max(self._stores, key=lambda store: store.bytes, default=None)
            if largest is None or not largest.give_up():
                return  # (nothing kept is left to give up)


class EventStore:
    """Bounded record of the events sent on each stream of one session.

    ``max_events_per_stream``, ``max_streams`` and ``max_bytes`` bound it
    (and ``budget``, shared by the stores of a server, bounds them together).
    Past ``max_streams``, the stream that *finished* longest ago goes first, so
    a long-running request or the GET stream keeps its history while short
    requests come and go; only when none has finished does the oldest go.
    Past ``max_bytes``, finished streams go first the same way, then the
    oldest events of the oldest open streams (an open stream stays known with
    no events kept: it resumes with what comes next). ``on_evict(stream_id)``
    is told when a stream is dropped. Replay returns the events of *one*
    stream after a given id (#53, #54: never another stream's).
    """

    def __init__(
        self,
        max_events_per_stream: int = 1000,
        max_streams: int = 100,
        on_evict: Callable[[str], None] | None = None,
        *,
        max_bytes: int | None = None,
        budget: StoreBudget | None = None,
    ) -> None:
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        self.max_bytes = max_bytes
        self.on_evict = on_evict
        self.budget = budget
        #: bytes of the events kept
        self.bytes = 0
        self._streams: OrderedDict[str, deque[tuple[int, bytes]]] = OrderedDict()
        self._finished: OrderedDict[str, None] = OrderedDict()
        if budget is not None:
            budget.join(self)

    def _count(self, delta: int) -> None:
        self.bytes += delta
        if self.budget is not None:
            self.budget.used += delta

    def store(self, stream_id: str, seq: int, data: bytes) -> None:
        events = self._streams.get(stream_id)
        if events is None:
            events = self._streams[stream_id] = deque()
            while len(self._streams) > self.max_streams:
                if self._finished:
                    evicted = next(iter(self._finished))
                else:
                    evicted = next(iter(self._streams))
                self._drop(evicted)
        if len(events) >= self.max_events_per_stream:
            self._count(-len(events.popleft()[1]))
        events.append((seq, data))
        self._count(len(data))
        if self.max_bytes is not None:
            while self.bytes > self.max_bytes and self.give_up():
                pass
        if self.budget is not None:
            self.budget.fit()

    def give_up(self) -> bool:
        """Drop the events least likely to be asked for again: the stream that finished
        longest ago, else the oldest event of the oldest open stream that has one.
        Returns whether anything was dropped."""
        if self._finished:
            self._drop(next(iter(self._finished)))
            return True
        for events in self._streams.values():
            if events:
                self._count(-len(events.popleft()[1]))
                return True
        return False

    def _drop(self, stream_id: str) -> None:
        events = self._streams.pop(stream_id)
        self._finished.pop(stream_id, None)
        self._count(-sum(len(data) for _, data in events))
        if self.on_evict is not None:
            self.on_evict(stream_id)

    def finished(self, stream_id: str) -> bool:
        """The stream has ended (it gets no more events); returns whether its events are still kept."""
        if stream_id not in self._streams:
            return False
        self._finished[stream_id] = None
        return True

    def replay_after(self, stream_id: str, seq: int) -> list[tuple[int, bytes]] | None:
        """Events of ``stream_id`` after ``seq``; None when the stream is unknown (or evicted)."""
        events = self._streams.get(stream_id)
        if events is None:
            return None
        return [(s, d) for s, d in events if s > seq]

    def forget(self, stream_id: str) -> None:
        events = self._streams.pop(stream_id, None)
        self._finished.pop(stream_id, None)
        if events is not None:
            self._count(-sum(len(data) for _, data in events))

    def close(self) -> None:
        """Drop everything (the session ended) and leave the budget."""
        for stream_id in list(self._streams):
            self.forget(stream_id)
        if self.budget is not None:
            self.budget.leave(self)
