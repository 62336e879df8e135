"""One HTTP exchange with limits: what authorization needs to talk to servers other than the MCP endpoint.

::

    response = await fetch("GET", "https://auth.example.com/.well-known/oauth-authorization-server")
    if response.status == 200:
        document = response.json()

A fresh connection per exchange (``connection: close``), TLS for
``https://`` (the system's trust store, or ``ssl_context``), and three
bounds, so that a hostile or broken server costs little: ``timeout`` for
the whole exchange, connect included; ``max_body`` bytes of answer (more is
an error, not a truncation); and redirects are not followed (a 3xx comes
back as it is, for the caller to refuse). Failures are
:class:`~mcp_ref.errors.HTTPTransportError` naming the URL.
"""

import json
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs
import h11
import trio

from ...errors import HTTPTransportError, TLSError
from .http_client import open_connection

__all__ = ["FetchResponse", "fetch", "DEFAULT_MAX_BODY", "DEFAULT_TIMEOUT"]

DEFAULT_MAX_BODY = 256 * 1024
DEFAULT_TIMEOUT = 30.0


@attrs.frozen
class FetchResponse:
    """An answer read whole: status, headers (names lower-cased, repeated ones joined with ``, ``), body."""

    url: str
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def json(self) -> Any:
        """The body as JSON; ValueError (saying what came instead) when it is not."""
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError) as e:
            shown = self.body[:80].decode("utf-8", "replace")
            raise ValueError(f"not JSON ({self.content_type or 'no content type'}): {shown!r}") from e

    def text(self, limit: int = 200) -> str:
        return self.body[:limit].decode("utf-8", "replace")


async def fetch(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    ssl_context: ssl.SSLContext | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_body: int = DEFAULT_MAX_BODY,
) -> FetchResponse:
    """Send one request to ``url`` and read its whole answer, within ``timeout`` and ``max_body``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r}: only http:// and https:// URLs can be fetched")
    if parts.scheme == "http" and ssl_context is not None:
        raise ValueError(f"{url!r}: an ssl_context is for https:// URLs")
    context = (ssl_context or ssl.create_default_context()) if parts.scheme == "https" else None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    hdrs = {"host": parts.netloc, "accept": "application/json", "connection": "close", **(headers or {})}
    if body is not None:
        hdrs["content-length"] = str(len(body))
    try:
        with trio.fail_after(timeout):
            stream = await open_connection(parts.hostname, port, context, url=url, timeout=timeout)
            try:
                return await _exchange(stream, method, target, hdrs, body, url, max_body)
            finally:
                with trio.CancelScope(shield=True):
                    await stream.aclose()
    except trio.TooSlowError:
        raise HTTPTransportError(f"{method} {url}: no complete answer within {timeout:g}s", url=url) from None
    except TLSError:
        raise
    except (OSError, trio.BrokenResourceError, h11.ProtocolError) as e:
        raise HTTPTransportError(f"{method} {url} failed: {e}", url=url) from e


async def _exchange(
    stream: trio.abc.Stream,
    method: str,
    target: str,
    headers: Mapping[str, str],
    body: bytes | None,
    url: str,
    max_body: int,
) -> FetchResponse:
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
    out = conn.send(h11.Request(method=method, target=target, headers=list(headers.items()))) or b""
    if body is not None:
        out += conn.send(h11.Data(data=body)) or b""
    out += conn.send(h11.EndOfMessage()) or b""
    await stream.send_all(out)
    head: h11.Response | None = None
    received = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(bytes(await stream.receive_some(65536)))
        elif isinstance(event, h11.Response):
            head = event
            declared = dict(event.headers).get(b"content-length")
            if declared is not None and declared.isdigit() and int(declared) > max_body:
                raise HTTPTransportError(
                    f"{method} {url}: the answer is {int(declared)} bytes, over the limit of {max_body}",
                    status=event.status_code,
                    url=url,
                )
        elif isinstance(event, h11.Data):
            received += event.data
            if len(received) > max_body:
                raise HTTPTransportError(
                    f"{method} {url}: the answer is over the limit of {max_body} bytes",
                    status=head.status_code if head else None,
                    url=url,
                )
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            break
    if head is None:
        raise HTTPTransportError(f"{method} {url}: the server closed the connection without answering", url=url)
    joined: dict[str, str] = {}
    for name, value in head.headers:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        joined[key] = f"{joined[key]}, {text}" if key in joined else text
    return FetchResponse(url, head.status_code, joined, bytes(received))
