"""A browser for tests of the authorization code flow: the user approves at once.

::

    browser = HeadlessBrowser()
    auth = OAuthClient(redirect_uri="http://127.0.0.1:3000/callback",
                       redirect_handler=browser.open, callback_handler=browser.callback)

:meth:`HeadlessBrowser.open` GETs the authorization URL and reads the
authorization server's redirect (a 3xx) instead of following it; its
``Location`` is the redirect back to the client, whose query
:meth:`HeadlessBrowser.callback` returns. For authorization servers that
approve without a user (the conformance suite's, the example
``auth_server``'s default consent). ``before`` holds responses delivered
first (a forged redirect arriving ahead of the real one).
"""

import ssl
from urllib.parse import urlsplit

import trio

from ..basic.authorization.client import AuthorizationResponse, parse_authorization_response
from ..basic.transports.http_fetch import http_exchange
from ..errors import HTTPTransportError

__all__ = ["HeadlessBrowser"]


class HeadlessBrowser:
    """``redirect_handler`` (:meth:`open`) and ``callback_handler`` (:meth:`callback`) for an approving server."""

    def __init__(self, *, timeout: float = 10.0, ssl_context: ssl.SSLContext | None = None) -> None:
        self.timeout = timeout
        #: for an https authorization endpoint whose certificate the system does not trust
        self.ssl_context = ssl_context
        #: every URL opened
        self.opened: list[str] = []
        #: responses handed to the callback before the real one
        self.before: list[AuthorizationResponse] = []
        self._send, self._receive = trio.open_memory_channel[AuthorizationResponse](16)

    async def open(self, url: str) -> None:
        self.opened.append(url)
        try:
            context = self.ssl_context if urlsplit(url).scheme == "https" else None
            answer = await http_exchange("GET", url, timeout=self.timeout, ssl_context=context)
        except HTTPTransportError as e:
            if e.location is None:
                raise
            location = e.location
        else:
            raise RuntimeError(f"the authorization endpoint answered HTTP {answer.status}, not a redirect")
        for forged in self.before:
            self._send.send_nowait(forged)
        self._send.send_nowait(parse_authorization_response(urlsplit(location).query))

    async def callback(self) -> AuthorizationResponse:
        return await self._receive.receive()
