"""Raw Streamable HTTP for the battery: messages POSTed as they are, answers read as they come.

:class:`RawHttpChannel` is a ``trio.abc.Channel[bytes]`` for the battery's raw
sessions over HTTP, like a stdio pipe: each message (JSON or not) is its own
POST, with the session id and protocol version once known, and whatever the
answer holds (a JSON body, the events of an SSE stream, the JSON-RPC error
of a 4xx) comes out of ``receive()``. Every exchange is kept in
:attr:`RawHttpChannel.exchanges` (method, status, content type, what was
posted) for the transport checks. :func:`exchange` is one plain request.
"""

import json
import math
import ssl
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import attrs
import h11
import trio

from ..basic.transports.http_client import open_connection
from ..basic.transports.http_fetch import HttpAnswer, http_exchange
from ..basic.transports.streamable_http import MCP_PROTOCOL_VERSION, MCP_SESSION_ID, SSEDecoder
from ..errors import HTTPTransportError
from .http_rules import HttpJudge, posted_kind
from .report import Finding

__all__ = ["Exchange", "NoAnswer", "RawHttpChannel", "exchange", "initialize_probe", "ACCEPT_BOTH"]


def _key(rid: Any) -> Any:
    return (type(rid).__name__, rid if isinstance(rid, str | int) else repr(rid))


def _id_of(data: str) -> Any:
    try:
        message = json.loads(data)
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) and "method" not in message else None


@contextmanager
def _forever() -> Iterator[None]:
    yield


ACCEPT_BOTH = "application/json, text/event-stream"
_READ = 65536


@attrs.define
class Exchange:
    """One HTTP request and the head of its answer."""

    method: str
    #: 0: no answer came (not even its head) in the time given
    status: int
    content_type: str
    headers: dict[str, str]
    posted: bytes = b""
    #: (SSE) the stream carried the response to the request posted
    answered: bool = False
    #: set once the whole answer was read (RawHttpChannel)
    done: trio.Event = attrs.field(factory=trio.Event, repr=False)


#: how long connecting (and the TLS handshake) may take
_CONNECT_TIMEOUT = 30.0


async def _request(
    url: str,
    method: str,
    headers: Mapping[str, str],
    body: bytes,
    ssl_context: ssl.SSLContext | None = None,
    timeout: float = math.inf,
) -> tuple[trio.abc.Stream, h11.Connection, h11.Response]:
    """Send one request and read the head of its answer; :class:`NoAnswer` when the head has not
    come within ``timeout`` seconds (a peer that never answers must not hold the checker)."""
    parts = urlsplit(url)
    https = parts.scheme == "https"
    context = (ssl_context or ssl.create_default_context()) if https else None
    port = parts.port or (443 if https else 80)
    conn = h11.Connection(h11.CLIENT)
    hdrs = {"host": parts.netloc, "connection": "close", **headers}
    if body:
        hdrs.setdefault("content-type", "application/json")
        hdrs["content-length"] = str(len(body))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    out = conn.send(h11.Request(method=method, target=target, headers=list(hdrs.items()))) or b""
    out += (conn.send(h11.Data(data=body)) or b"") if body else b""
    out += conn.send(h11.EndOfMessage()) or b""
    stream: trio.abc.Stream | None = None
    try:
        with trio.fail_after(timeout):
            host = parts.hostname or "127.0.0.1"
            stream = await open_connection(host, port, context, url=url, timeout=_CONNECT_TIMEOUT)
            await stream.send_all(out)
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(bytes(await stream.receive_some(_READ)))
                elif isinstance(event, h11.Response):
                    return stream, conn, event
                elif isinstance(event, h11.ConnectionClosed):
                    raise trio.BrokenResourceError(f"{url}: the server closed the connection without answering")
    except BaseException as e:
        if stream is not None:
            await trio.aclose_forcefully(stream)
        if isinstance(e, trio.TooSlowError):
            raise NoAnswer(f"{method} {url}: no answer within {timeout:g}s", url=url) from None
        raise


async def stream_events(
    url: str,
    method: str,
    headers: Mapping[str, str] | None = None,
    body: bytes = b"",
    *,
    within: float,
    ssl_context: ssl.SSLContext | None = None,
    timeout: float = math.inf,
) -> tuple[Exchange, list[tuple[str | None, str | None]]]:
    """One request whose answer may be an SSE stream: its head, and the (id, data) of the events it
    carried within ``within`` seconds of the head (or until it ended). :class:`NoAnswer` as
    :func:`exchange`."""
    stream, conn, response = await _request(url, method, headers or {}, body, ssl_context, timeout)
    content_type, hdrs = _head(response)
    events: list[tuple[str | None, str | None]] = []
    decoder = SSEDecoder()
    try:
        with trio.move_on_after(within):
            while content_type == "text/event-stream":
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(bytes(await stream.receive_some(_READ)))
                elif isinstance(event, h11.Data):
                    events += [(sse.id, sse.data) for sse in decoder.feed(bytes(event.data))]
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    break
    except (trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError):
        pass  # (what came before the stream broke is judged)
    finally:
        await trio.aclose_forcefully(stream)
    return Exchange(method, response.status_code, content_type, hdrs, body), events


class NoAnswer(HTTPTransportError):
    """The server did not answer (not even the head of an answer) within the time given."""


def _head(response: h11.Response) -> tuple[str, dict[str, str]]:
    headers = {k.decode().lower(): v.decode("latin-1") for k, v in response.headers}
    return headers.get("content-type", "").split(";")[0].strip(), headers


async def exchange(
    url: str,
    method: str,
    headers: Mapping[str, str] | None = None,
    body: bytes = b"",
    *,
    read_body: bool = True,
    ssl_context: ssl.SSLContext | None = None,
    timeout: float = math.inf,
) -> tuple[Exchange, bytes]:
    """One request; its answer's head and (``read_body``) body (an SSE stream is not read).
    :class:`NoAnswer` when the head has not come within ``timeout`` seconds; a body that stops
    coming is cut off there (what came of it is returned)."""
    deadline = trio.current_time() + timeout
    stream, conn, response = await _request(url, method, headers or {}, body, ssl_context, timeout)
    content_type, hdrs = _head(response)
    data = b""
    try:
        with trio.move_on_at(deadline):
            while read_body and content_type != "text/event-stream":
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(bytes(await stream.receive_some(_READ)))
                elif isinstance(event, h11.Data):
                    data += bytes(event.data)
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    break
    finally:
        await trio.aclose_forcefully(stream)
    return Exchange(method, response.status_code, content_type, hdrs, body), data


async def initialize_probe(
    url: str, headers: Mapping[str, str], timeout: float, ssl_context: ssl.SSLContext | None = None
) -> HttpAnswer:
    """POST one initialize with ``headers`` and read the whole answer (the session it opened, if
    any, is ended with DELETE). :class:`~mcp_ref.errors.HTTPTransportError` when the server
    cannot be reached or does not answer within ``timeout``."""
    message = {
        "jsonrpc": "2.0",
        "id": "mcp-ref-probe",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp-ref-check", "version": "0.1.0"},
        },
    }
    hdrs = {"accept": ACCEPT_BOTH, **headers}
    answer = await http_exchange("POST", url, headers=hdrs, json_body=message, timeout=timeout, ssl_context=ssl_context)
    session = answer.headers.get(MCP_SESSION_ID)
    if session is not None:
        with trio.move_on_after(timeout):
            try:
                ending = {**headers, MCP_SESSION_ID: session}
                await http_exchange("DELETE", url, headers=ending, timeout=timeout, ssl_context=ssl_context)
            except HTTPTransportError:
                pass  # ending the probe's session is a courtesy
    return answer


class RawHttpChannel(trio.abc.Channel[bytes]):
    """The battery's raw messages over Streamable HTTP (see the module doc)."""

    def __init__(
        self,
        url: str,
        nursery: trio.Nursery,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.url = url
        self.ssl_context = ssl_context
        self.nursery = nursery
        self.extra = dict(headers or {})
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.exchanges: list[Exchange] = []
        self._inbox_send, self._inbox = trio.open_memory_channel[bytes](math.inf)
        self._init_id: Any = None
        #: judges what the answers say about the transport (the tap uses the same judge)
        self.judge = HttpJudge()
        #: gets each finding the judge makes (the battery gives its observer's list)
        self.on_finding: Callable[[Finding], None] = lambda finding: None
        #: seconds an SSE stream may stay open after it carried its response
        self.linger = 2.0
        #: seconds the head of the answer to the next POST is waited for (the raw session sets it)
        self.head_wait = _CONNECT_TIMEOUT

    def headers(self, *, accept: str = ACCEPT_BOTH) -> dict[str, str]:
        hdrs = {"accept": accept, **self.extra}
        if self.session_id is not None:
            hdrs[MCP_SESSION_ID] = self.session_id
        if self.protocol_version is not None:
            hdrs[MCP_PROTOCOL_VERSION] = self.protocol_version
        return hdrs

    def _found(self, findings: list[Finding]) -> None:
        for finding in findings:
            self.on_finding(finding)

    async def send(self, value: bytes) -> None:
        is_request, message, ids = posted_kind(value)
        is_init = isinstance(message, dict) and message.get("method") == "initialize"
        if is_init:
            self._init_id = message.get("id")
        try:
            stream, conn, response = await _request(
                self.url, "POST", self.headers(), value, self.ssl_context, self.head_wait
            )
        except NoAnswer:
            # nothing came back, not even a status: the POST stays unanswered (the raw session
            # sees that at once, and counts it as a request that went unanswered)
            got = Exchange("POST", 0, "", {}, value)
            got.done.set()
            self.exchanges.append(got)
            return
        except (OSError, HTTPTransportError, trio.TooSlowError) as e:
            raise trio.BrokenResourceError(f"POST to {self.url} failed: {e}") from e
        content_type, hdrs = _head(response)
        got = Exchange("POST", response.status_code, content_type, hdrs, value)
        self.exchanges.append(got)
        if is_init and MCP_SESSION_ID in hdrs:
            self.session_id = hdrs[MCP_SESSION_ID]
        self._found(
            self.judge.head("POST", response.status_code, content_type, hdrs, is_request=is_request, posted=message)
        )
        self.nursery.start_soon(self._read, stream, conn, content_type, got, is_request, message, ids)

    async def _read(
        self,
        stream: trio.abc.Stream,
        conn: h11.Connection,
        content_type: str,
        got: Exchange,
        is_request: bool = False,
        posted: Any = None,
        ids: list[Any] | None = None,
    ) -> None:
        decoder = SSEDecoder()
        body = b""
        first: tuple[str | None, str | None] | None = None
        answered = trio.Event()
        answered_at = 0.0
        waiting = set(map(_key, ids or []))
        session = self.session_id
        try:
            with trio.CancelScope() as scope:
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        # (the time a stream may linger counts from its answer: keep-alive comments do not extend it)
                        with trio.move_on_at(answered_at + self.linger) if answered.is_set() else _forever():
                            conn.receive_data(bytes(await stream.receive_some(_READ)))
                            continue
                        # [basic/transports#32] the response came, and the stream went on
                        self._found(self.judge.still_open(posted))
                        scope.cancel()
                    elif isinstance(event, h11.Data):
                        chunk = bytes(event.data)
                        if content_type == "text/event-stream":
                            for sse in decoder.feed(chunk):
                                if first is None:
                                    first = (sse.id, sse.data)
                                self._found(self.judge.event(session, sse.id, sse.data))
                                if sse.data:
                                    if _key(_id_of(sse.data)) in waiting and not answered.is_set():
                                        answered.set()
                                        answered_at = trio.current_time()
                                        got.answered = True
                                    self._deliver(sse.data.encode())
                        else:
                            body += chunk
                    elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                        break
        except (OSError, trio.BrokenResourceError, h11.ProtocolError):
            pass  # the answer broke off: what came is what the server said
        finally:
            await stream.aclose()
            self.judge.revision = self.protocol_version
            self._found(
                self.judge.end(
                    "POST",
                    got.status,
                    content_type,
                    body,
                    is_request=is_request,
                    first_event=first,
                    posted=posted,
                    # (an event left without its blank line at the end of a stream that never carried the
                    # response: the server's last event, undelivered; a stream closed to be resumed is not that)
                    answered=False
                    if content_type == "text/event-stream" and not answered.is_set() and getattr(decoder, "_data", None)
                    else None,
                )
            )
            if body.strip() and content_type != "text/event-stream" and got.status != 202:
                # (another content type is judged above; what it holds is still read, if it is JSON)
                self._deliver(body)
            got.done.set()

    def _deliver(self, data: bytes) -> None:
        if not data.strip().startswith((b"{", b"[")):
            return  # not JSON-RPC (a text/plain body, an HTML error page ...)
        try:
            message = json.loads(data)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("id") == self._init_id and self._init_id is not None:
            version = (
                (message.get("result") or {}).get("protocolVersion")
                if isinstance(message.get("result"), dict)
                else None
            )
            if isinstance(version, str):
                self.protocol_version = version
        self._inbox_send.send_nowait(data)

    async def receive(self) -> bytes:
        return await self._inbox.receive()

    def answered(self) -> bool:
        """The answer to the last POST was read whole, and all it held was received."""
        return (
            bool(self.exchanges)
            and self.exchanges[-1].done.is_set()
            and not self._inbox.statistics().current_buffer_used
        )

    async def aclose(self) -> None:
        # streams that carried their answer get the time they may linger, so a stream left open is seen
        with trio.move_on_after(self.linger + 0.5) as scope:
            scope.shield = True
            for got in self.exchanges:
                if got.answered and not got.done.is_set():
                    await got.done.wait()
        if self.session_id is not None:
            with trio.move_on_after(2) as scope:
                scope.shield = True
                try:
                    got, _ = await exchange(self.url, "DELETE", self.headers(), ssl_context=self.ssl_context)
                    self.exchanges.append(got)
                except (OSError, HTTPTransportError):
                    pass
        self._inbox_send.close()
