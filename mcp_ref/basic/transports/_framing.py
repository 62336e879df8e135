"""HTTP/1.1 message framing on top of h11: an exact head limit and the refusals h11 leaves to us.

Every HTTP reader of the package (the MCP server and client, the OAuth
fetches, the loopback callback, the example authorization server) reads
through :class:`FramedReader`:

* **The head limit is exact.** h11 measures its buffer only when it needs
  more data, so a reader that feeds it 64 KiB at a time lets a head of up to
  twice the limit through when it completes in the last read. Here, while a
  head is awaited, no more is read than the limit leaves room for: a head
  (start line, fields and the empty line ending them) of ``head_limit`` bytes
  is read, one byte more is :class:`h11.RemoteProtocolError` with status hint
  431.
* :func:`request_framing_problem` and :func:`response_framing_problem` name
  the shapes RFC 9112 section 6.1 and 6.3 tell a recipient not to trust: a
  message with both ``Transfer-Encoding`` and ``Content-Length`` (the request
  smuggling and response splitting shape, section 11.2), and an HTTP/1.0
  message with ``Transfer-Encoding``. h11 reads both by Transfer-Encoding and
  carries on; a server refuses them and closes, a client fails the exchange
  and never reuses the connection.
"""

from typing import cast

import h11
import trio

__all__ = [
    "DEFAULT_HEAD_LIMIT",
    "FramedReader",
    "framed_connection",
    "request_framing_problem",
    "response_framing_problem",
]

#: bytes a message head may take, its ending empty line included
DEFAULT_HEAD_LIMIT = 64 * 1024
#: bytes asked of the stream per read outside a head
_READ_SIZE = 65536


def framed_connection(
    role: type[h11.CLIENT] | type[h11.SERVER], head_limit: int = DEFAULT_HEAD_LIMIT
) -> h11.Connection:
    """An h11 connection for :class:`FramedReader`: h11 refuses a buffer of ``head_limit``
    bytes that holds no complete head (the reader never lets it hold more)."""
    if head_limit < 2:
        raise ValueError("head_limit must be at least 2 bytes")
    return h11.Connection(role, max_incomplete_event_size=head_limit - 1)


class FramedReader:
    """Reads h11 events from ``stream``, a head never longer than ``head_limit`` bytes.

    ``conn`` must come from :func:`framed_connection` with the same limit.
    One reader per connection (it outlives h11's cycles on a kept-alive one).
    """

    __slots__ = ("_held", "conn", "head_limit", "received", "stream")

    def __init__(self, conn: h11.Connection, stream: trio.abc.Stream, head_limit: int = DEFAULT_HEAD_LIMIT) -> None:
        self.conn = conn
        self.stream = stream
        self.head_limit = head_limit
        #: bytes this reader has read from the stream
        self.received = 0
        #: bytes h11 holds of the head being awaited (None: no head awaited yet, or one just read)
        self._held: int | None = None

    def feed(self, data: bytes) -> None:
        """Give h11 bytes read elsewhere (a stream's connection watched for its close)."""
        self.conn.receive_data(data)
        if self._held is not None:
            self._held += len(data)

    async def next_event(self) -> h11.Event | type[h11.PAUSED]:
        """The next event (never NEED_DATA); h11.RemoteProtocolError for a head over the limit."""
        conn = self.conn
        while True:
            awaiting_head = conn.their_state is h11.IDLE or conn.their_state is h11.SEND_RESPONSE
            if awaiting_head and self._held is None:
                # what is already buffered (a pipelined request, usually nothing) is the head's start
                self._held = len(conn.trailing_data[0])
            held = self._held
            event = conn.next_event()
            if event is h11.NEED_DATA:
                if awaiting_head and held is not None:
                    # h11 raised 431 had it ``head_limit`` bytes without a head: there is room for one more
                    data = await self.stream.receive_some(min(self.head_limit - held, _READ_SIZE))
                    self._held = held + len(data)
                else:
                    data = await self.stream.receive_some(_READ_SIZE)
                self.received += len(data)
                conn.receive_data(bytes(data))
                continue
            if awaiting_head:
                self._held = None
                if held is not None and held > self.head_limit and _head_event(event):
                    # (only when more than the limit was buffered before the head was awaited: a
                    # pipelined head read with an earlier message) the head's own length decides
                    if held - len(conn.trailing_data[0]) > self.head_limit:
                        raise h11.RemoteProtocolError("message head too long", error_status_hint=431)
            return cast(h11.Event | type[h11.PAUSED], event)


def _head_event(event: object) -> bool:
    return isinstance(event, h11.Request | h11.Response | h11.InformationalResponse)


def _framing(event: h11.Request | h11.Response) -> tuple[bool, bool]:
    te = cl = False
    for name, _ in event.headers:
        if name == b"transfer-encoding":
            te = True
        elif name == b"content-length":
            cl = True
    return te, cl


def request_framing_problem(event: h11.Request) -> str | None:
    """Why a request's framing cannot be trusted (RFC 9112 section 6.1), or None.

    Decision: refused with 400 and the connection closed -- the section lets a
    server read such a request by its Transfer-Encoding, but requires the
    close either way, and a request framed two ways is an attack more often
    than a client bug.
    """
    te, cl = _framing(event)
    if te and cl:
        return "both Transfer-Encoding and Content-Length: the request's length is ambiguous"
    if te and event.http_version == b"1.0":
        return "Transfer-Encoding in an HTTP/1.0 request: its framing is faulty"
    return None


def response_framing_problem(event: h11.Response) -> str | None:
    """Why a response's framing cannot be trusted (RFC 9112 sections 6.1 and 6.3), or None."""
    te, cl = _framing(event)
    if te and cl:
        return "the answer has both Transfer-Encoding and Content-Length: its length is ambiguous"
    if te and event.http_version == b"1.0":
        return "an HTTP/1.0 answer with Transfer-Encoding: its framing is faulty"
    return None
