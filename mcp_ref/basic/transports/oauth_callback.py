"""The user's part of the authorization code flow: showing the URL, receiving the redirect.

``redirect_handler``: :func:`print_url` or :func:`open_in_browser`.
``callback_handler``: the :class:`LoopbackCallback` that
:func:`open_loopback_callback` listens with on 127.0.0.1 (RFC 8252
section 7.3), returning what each redirect back carried.
"""

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import h11
import trio

from ..authorization.client import AuthorizationDenied, AuthorizationResponse, parse_authorization_response
from ._framing import FramedReader, framed_connection, request_framing_problem
from ._nursery import block_nursery

__all__ = ["print_url", "open_in_browser", "LoopbackCallback", "CallbackListenError", "open_loopback_callback"]

log = logging.getLogger("mcp_ref.oauth")


async def print_url(url: str) -> None:
    """A ``redirect_handler`` that prints the URL for the user to open (stderr)."""
    print(f"Open this URL in your browser to authorize:\n  {url}", file=sys.stderr, flush=True)


async def open_in_browser(url: str) -> None:
    """A ``redirect_handler`` that opens the user's browser (and prints the URL, in case it cannot)."""
    import webbrowser

    await print_url(url)
    await trio.to_thread.run_sync(webbrowser.open, url)


class CallbackListenError(OSError):
    """:func:`open_loopback_callback` could not listen (the port is in use ...); ``errno`` as the OS said."""


_PAGE = (
    "<!doctype html><meta charset=utf-8><title>{title}</title>"
    "<p>{title}. You can close this window and return to the application.</p>"
)


class LoopbackCallback:
    """The redirect target of the authorization code flow: a listener on 127.0.0.1 (RFC 8252 section 7.3).

    ``redirect_uri`` is where the authorization server sends the browser
    back; ``await callback()`` (it is a ``callback_handler``) returns the
    next redirect's parameters. Requests to other paths get 404; the
    listener lives as long as :func:`open_loopback_callback`'s block.
    """

    def __init__(self, redirect_uri: str, path: str) -> None:
        self.redirect_uri = redirect_uri
        #: the path the redirect comes back to
        self.path = path
        self._send, self._receive = trio.open_memory_channel[AuthorizationResponse](8)

    async def __call__(self) -> AuthorizationResponse:
        return await self._receive.receive()

    async def _serve(self, stream: trio.SocketStream) -> None:
        conn = framed_connection(h11.SERVER, 16 * 1024)
        reader = FramedReader(conn, stream, 16 * 1024)
        try:
            with trio.move_on_after(10):
                request = None
                while True:
                    event = await reader.next_event()
                    if isinstance(event, h11.Request):
                        if request_framing_problem(event) is not None:
                            return  # (a browser never sends one: the connection just closes)
                        request = event
                    elif isinstance(event, h11.EndOfMessage) and request is not None:
                        break
                    elif isinstance(event, h11.ConnectionClosed):
                        return
                target = request.target.decode("ascii", "replace")
                path, _, query = target.partition("?")
                status, title = 404, "Not found"
                if request.method == b"GET" and path == self.path:
                    try:
                        response = parse_authorization_response(query)
                    except AuthorizationDenied as e:
                        status, title = 400, f"Authorization failed: {e}"
                    else:
                        self._send.send_nowait(response)
                        status = 200
                        title = "Authorization received" if response.error is None else "Authorization refused"
                body = _PAGE.format(title=title.replace("<", "&lt;")).encode()
                headers = [("content-type", "text/html; charset=utf-8"), ("content-length", str(len(body)))]
                out = conn.send(h11.Response(status_code=status, headers=[*headers, ("connection", "close")])) or b""
                out += (conn.send(h11.Data(data=body)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
                await stream.send_all(out)
        except (trio.BrokenResourceError, h11.ProtocolError, trio.WouldBlock) as e:
            log.debug("loopback callback connection: %r", e)
        finally:
            await stream.aclose()


@asynccontextmanager
async def open_loopback_callback(
    *, port: int = 0, path: str = "/callback", host: str = "127.0.0.1"
) -> AsyncIterator[LoopbackCallback]:
    """Listen on ``host:port`` (a free port by default) for the redirect back from the authorization server.

    The redirect URI is registered as it is, port included, so a client
    that stores its registration (:class:`FileTokenStorage`) should pass
    the same ``port`` each run; with another, it registers again.
    """
    if host not in ("127.0.0.1", "::1", "localhost"):
        raise ValueError(f"the callback listener is for loopback addresses only, not {host!r}")
    try:
        listeners = await trio.open_tcp_listeners(port, host=host)
    except OSError as e:
        # one clear error naming the port, before any nursery can wrap it in a group
        raise CallbackListenError(e.errno, f"cannot listen on {host} port {port}: {e.strerror or e}") from e
    bound = listeners[0].socket.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    callback = LoopbackCallback(f"http://{shown}:{bound}{path}", path)
    async with block_nursery() as (nursery, body):
        nursery.start_soon(trio.serve_listeners, callback._serve, listeners)
        try:
            yield callback
        except BaseException as e:
            # the caller's own exception (an AuthorizationError ...) comes out as itself, not
            # wrapped in an ExceptionGroup by this listener's nursery
            body.exc = e
            raise
        finally:
            nursery.cancel_scope.cancel()
