"""One HTTP exchange, size and time limited: what OAuth needs besides the MCP channel.

::

    answer = await http_exchange("POST", introspection_url, form={"token": t}, headers={...})
    answer.status, answer.headers, answer.json()

For documents and endpoints of authorization (metadata, token, registration,
introspection): a fresh connection per exchange (TLS for ``https://``), the
whole exchange under ``timeout``, a body larger than ``max_body`` refused,
a redirect never followed (:func:`~.http_client.redirect_error`).
"""

import json
import logging
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import attrs
import h11
import trio

from ...errors import HTTPTransportError
from ._framing import FramedReader, framed_connection, response_framing_problem
from .fetch_rules import FetchPolicy, FetchRefused, resolve
from .http_client import check_url, open_connection, redirect_error

__all__ = ["HttpAnswer", "http_exchange"]

log = logging.getLogger("mcp_ref.oauth")


@attrs.frozen
class HttpAnswer:
    status: int
    #: lower-case names; a repeated header's values joined with ", "
    headers: Mapping[str, str]
    body: bytes
    url: str

    def json(self) -> Any:
        """The body as JSON; :class:`HTTPTransportError` naming the URL if it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError:
            raise HTTPTransportError(
                f"{self.url} answered HTTP {self.status} with a body that is not JSON", status=self.status, url=self.url
            ) from None


async def http_exchange(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    form: Mapping[str, str] | None = None,
    json_body: Any = None,
    ssl_context: ssl.SSLContext | None = None,
    timeout: float = 10.0,
    max_body: int = 256 * 1024,
    policy: FetchPolicy | None = None,
) -> HttpAnswer:
    """Send one request and read its whole answer; a 3xx is an :class:`HTTPTransportError`.

    ``form`` is sent ``application/x-www-form-urlencoded``, ``json_body`` as
    JSON. Failures (connection, TLS, timeout, an answer over ``max_body``,
    garbled HTTP) are :class:`HTTPTransportError` naming the URL. With
    ``policy`` (a URL a server named: see :mod:`.fetch_rules`) the host is
    resolved once, every address checked against it (:class:`FetchRefused`,
    nothing sent), and the connection made to those addresses.
    """
    parts = check_url(url, ssl_context)
    if parts.scheme == "https" and ssl_context is None:
        ssl_context = ssl.create_default_context()
    body = b""
    hdrs = {"host": parts.netloc, "connection": "close", "accept": "application/json", **(headers or {})}
    if form is not None:
        body = urlencode(form).encode()
        hdrs["content-type"] = "application/x-www-form-urlencoded"
    elif json_body is not None:
        body = json.dumps(json_body).encode()
        hdrs["content-type"] = "application/json"
    if body or method == "POST":
        hdrs["content-length"] = str(len(body))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with trio.fail_after(timeout):
            if policy is None:
                stream = await open_connection(parts.hostname or "", port, ssl_context, url=url, timeout=timeout)
            else:
                stream = await _open_allowed(parts.hostname or "", port, ssl_context, url, timeout, policy)
            async with stream:
                conn = framed_connection(h11.CLIENT)
                out = conn.send(h11.Request(method=method, target=target, headers=list(hdrs.items()))) or b""
                out += (conn.send(h11.Data(data=body)) or b"") if body else b""
                await stream.send_all(out + (conn.send(h11.EndOfMessage()) or b""))
                answer = await _read_answer(conn, stream, url, max_body)
    except trio.TooSlowError:
        raise HTTPTransportError(f"{url} did not answer within {timeout:g} s", url=url) from None
    except (OSError, trio.BrokenResourceError, h11.ProtocolError) as e:
        raise HTTPTransportError(f"{url}: {e}", url=url) from e
    if 300 <= answer.status < 400:
        raise redirect_error(answer.status, answer.headers.get("location"), url)
    return answer


async def _open_allowed(
    host: str, port: int, ssl_context: ssl.SSLContext | None, url: str, timeout: float, policy: FetchPolicy
) -> trio.abc.Stream:
    """A connection to ``host`` at an address ``policy`` allows; FetchRefused when any is not."""
    policy.check_literal(url)
    addresses = await resolve(host, port)
    for address in addresses:
        if (problem := policy.why_not(url, address)) is not None:
            # every address must be allowed: a name answering with one public and one loopback
            # address is refused, not tried in the order the resolver chose
            raise FetchRefused(problem, url=url)
    log.info("fetching %s (%s)", url, ", ".join(addresses))
    failure: OSError | None = None
    for address in addresses:
        try:
            return await open_connection(host, port, ssl_context, url=url, timeout=timeout, address=address)
        except OSError as e:
            failure = e
    raise failure if failure is not None else OSError(f"{host} has no address")


async def _read_answer(conn: h11.Connection, stream: trio.abc.Stream, url: str, max_body: int) -> HttpAnswer:
    status, size = 0, 0
    headers: dict[str, str] = {}
    chunks: list[bytes] = []
    reader = FramedReader(conn, stream)
    while True:
        event = await reader.next_event()
        if isinstance(event, h11.Response):
            if (problem := response_framing_problem(event)) is not None:
                raise HTTPTransportError(f"{url}: {problem}", status=event.status_code, url=url)
            status = event.status_code
            for k, v in event.headers:
                name = k.decode("latin-1").lower()
                headers[name] = f"{headers[name]}, {v.decode('latin-1')}" if name in headers else v.decode("latin-1")
            declared = headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_body:
                raise HTTPTransportError(
                    f"{url}: an answer of {declared} bytes, over {max_body}", status=status, url=url
                )
        elif isinstance(event, h11.Data):
            size += len(event.data)
            if size > max_body:
                raise HTTPTransportError(f"{url}: an answer over {max_body} bytes", status=status, url=url)
            chunks.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            return HttpAnswer(status, headers, b"".join(chunks), url)
        elif isinstance(event, h11.ConnectionClosed):
            raise HTTPTransportError(f"{url}: the connection closed before the answer ended", url=url)
