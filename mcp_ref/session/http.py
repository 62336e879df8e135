"""Streamable HTTP for applications: ``open_http_client`` and ``serve_http``.

The transport itself is :mod:`mcp_ref.basic.transports.http_server` and
:mod:`mcp_ref.basic.transports.http_client` (h11 on trio, the ``http`` extra);
the client side of authorization is
:mod:`mcp_ref.basic.transports.oauth_client`, whose user-facing names are
re-exported here.
"""

import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from ..basic.transports.http_client import HttpAuth, HttpClientChannel, SessionExpired, open_http_channel
from ..basic.transports.http_server import HttpConfig, HttpServerInfo, serve_http
from ..basic.transports.oauth_client import (
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
from ..errors import ConnectionClosed
from .client import ClientSession, open_session

__all__ = [
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
    "print_url",
    "open_in_browser",
]


@asynccontextmanager
async def open_http_client(
    url: str,
    *,
    ssl_context: ssl.SSLContext | None = None,
    auth: HttpAuth | None = None,
    http_options: Mapping[str, Any] | None = None,
    **session_options: Any,
) -> AsyncIterator[ClientSession]:
    """An initialised MCP client session over Streamable HTTP.

    ``https://`` URLs use TLS: the system's trust store, or ``ssl_context``
    (a private CA, a client certificate). ``http_options`` go to
    :class:`HttpClientChannel` (headers, timeouts, reconnection,
    ``legacy_fallback=True`` to talk to servers of the 2024-11-05 HTTP+SSE
    transport too); the rest to :func:`mcp_ref.session.open_session`.

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
    """
    if not isinstance(url, str):
        # the natural slip: passing what nursery.start(serve_http, ...) returned
        hint = " (use its .url)" if isinstance(url, HttpServerInfo) else ""
        raise TypeError(f"open_http_client() takes the endpoint URL as a str, not {type(url).__name__}{hint}")
    options = dict(http_options or {})
    if ssl_context is not None:
        options["ssl_context"] = ssl_context
    if auth is not None:
        options["auth"] = auth
        if session_options.get("initialize_timeout") is None:
            session_options["initialize_timeout"] = 60.0 + auth.flow_timeout
    async with open_http_channel(url, **options) as channel:
        try:
            async with open_session(channel, **session_options) as client:
                yield client
        except ConnectionClosed as e:
            if channel.failure is not None:
                # (its own cause kept: the user's handler's error, the HTTP failure ...)
                raise channel.failure from (channel.failure.__cause__ or e)
            raise
