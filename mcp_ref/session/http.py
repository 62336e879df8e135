"""Streamable HTTP for applications: ``open_http_client`` and ``serve_http``.

The transport itself is :mod:`mcp_ref.basic.transports.http_server` and
:mod:`mcp_ref.basic.transports.http_client` (h11 on trio, the ``http`` extra);
the client side of authorization is
:mod:`mcp_ref.basic.transports.oauth_client`, whose user-facing names are
re-exported here.
"""

import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from ..basic.transports.asgi import AsgiApp
from ..basic.transports.http_client import HttpAuth, HttpClientChannel, SessionExpired, open_http_channel
from ..basic.transports.http_server import HttpConfig, HttpServerInfo, serve_http
from ..basic.transports.oauth_callback import LoopbackCallback
from ..basic.transports.oauth_client import (
    CallbackListenError,
    ClientCredentials,
    CrossAppAccess,
    FileTokenStorage,
    InMemoryTokenStorage,
    OAuthClient,
    TokenStorage,
    open_in_browser,
    open_loopback_callback,
    print_url,
)
from ..basic.transports.stdio import DEFAULT_MAX_MESSAGE_SIZE
from ..errors import ConnectionClosed
from .client import ClientSession, open_session

__all__ = [
    "AsgiApp",
    "open_http_client",
    "serve_http",
    "HttpConfig",
    "HttpServerInfo",
    "HttpClientChannel",
    "SessionExpired",
    "HttpAuth",
    "OAuthClient",
    "ClientCredentials",
    "CrossAppAccess",
    "TokenStorage",
    "InMemoryTokenStorage",
    "FileTokenStorage",
    "open_loopback_callback",
    "LoopbackCallback",
    "CallbackListenError",
    "print_url",
    "open_in_browser",
]


@asynccontextmanager
async def open_http_client(
    url: str,
    *,
    ssl_context: ssl.SSLContext | None = None,
    auth: HttpAuth | None = None,
    headers: Mapping[str, str] | None = None,
    connect_timeout: float = 30.0,
    max_reconnects: int = 5,
    default_retry_ms: int = 1000,
    max_idle_connections: int = 4,
    legacy_fallback: bool = False,
    on_new_session: Callable[[str, str | None], None] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    max_inbox: int = 100,
    max_inbox_bytes: int = 16 * 1024 * 1024,
    **session_options: Any,
) -> AsyncIterator[ClientSession]:
    """An initialised MCP client session over Streamable HTTP.

    ``https://`` URLs use TLS: the system's trust store, or ``ssl_context``
    (a private CA, a client certificate). The HTTP keywords are those of
    :class:`HttpClientChannel`: ``headers`` sent with every request,
    ``connect_timeout`` (seconds), ``max_reconnects`` of a broken SSE
    stream (waiting the server's retry delay, else ``default_retry_ms``),
    ``max_idle_connections`` kept for reuse, ``legacy_fallback=True`` to
    talk to servers of the 2024-11-05 HTTP+SSE transport too,
    ``on_new_session(old_id, new_id)`` after the server expired the session
    and a new one was initialised, and the limits on what is taken from the
    server (``max_message_size`` bytes a message, ``max_inbox`` messages or
    ``max_inbox_bytes`` not yet read by the session). The other keywords go
    to :func:`mcp_ref.session.open_session`.

    ``auth`` (an :class:`OAuthClient`) authorizes the session
    (basic/authorization): a 401 from the server starts discovery and the
    flow, and the request goes again with the token. The initialize
    request then waits ``auth.flow_timeout`` more (the user may be in the
    browser) unless ``initialize_timeout`` is given.

    When the channel ends for a reason of its own (a TLS handshake that
    fails, authorization that cannot be had), that exception
    (:class:`~mcp_ref.errors.TLSError`,
    :class:`~mcp_ref.errors.AuthorizationError` naming the step that
    failed, both :class:`~mcp_ref.errors.HTTPTransportError`) is what this
    raises, not the session's :class:`ConnectionClosed` it caused.

    A request whose HTTP exchange fails raises
    :class:`~mcp_ref.errors.HTTPTransportError` from its call, with the
    HTTP ``status`` (None when the server could not be reached) and the
    ``url``, and the session goes on: these are not JSON-RPC answers, so
    they are never an :class:`~mcp_ref.errors.MCPError` (a JSON-RPC error
    in the body of an error status is the exception's ``__cause__``). The
    initialize request failing this way is raised from the ``async with``.
    """
    if not isinstance(url, str):
        # the natural slip: passing what nursery.start(serve_http, ...) returned
        hint = " (use its .url)" if isinstance(url, HttpServerInfo) else ""
        raise TypeError(f"open_http_client() takes the endpoint URL as a str, not {type(url).__name__}{hint}")
    if auth is not None and session_options.get("initialize_timeout") is None:
        session_options["initialize_timeout"] = 60.0 + auth.flow_timeout
    channel_context = open_http_channel(
        url,
        ssl_context=ssl_context,
        auth=auth,
        headers=headers,
        connect_timeout=connect_timeout,
        max_reconnects=max_reconnects,
        default_retry_ms=default_retry_ms,
        max_idle_connections=max_idle_connections,
        legacy_fallback=legacy_fallback,
        on_new_session=on_new_session,
        max_message_size=max_message_size,
        max_inbox=max_inbox,
        max_inbox_bytes=max_inbox_bytes,
    )
    # [2026-07-28:basic/versioning#9] the era is a property of the origin: cached under it
    session_options.setdefault("era_key", ("http", url))
    # (the probe is the first request: it waits as long as an initialize would, authorization included)
    session_options.setdefault("discover_timeout", session_options.get("initialize_timeout") or 60.0)
    async with channel_context as channel:
        try:
            async with open_session(channel, **session_options) as client:
                yield client
        except ConnectionClosed as e:
            if channel.failure is not None:
                # (its own cause kept: the user's handler's error, the HTTP failure ...)
                raise channel.failure from (channel.failure.__cause__ or e)
            raise
