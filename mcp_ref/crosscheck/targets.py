"""What the cross-checker talks to: a command (stdio) or a URL (Streamable HTTP).

:func:`connect` opens one connection to a target and wraps it in an
:class:`~mcp_ref.crosscheck.channel.ObservedChannel`; every session of the
battery is a new connection (for stdio, a new process).
"""

import shlex
import ssl
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import attrs

from .channel import ObservedChannel, Recorder
from .observer import Direction, Observer

__all__ = ["StdioTarget", "HttpTarget", "Target", "TargetUnreachable", "connect"]


class TargetUnreachable(Exception):
    """The server could not be started or reached (exit status 2)."""


@attrs.frozen
class StdioTarget:
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None

    def describe(self) -> str:
        return shlex.join([self.command, *self.args])


@attrs.frozen
class HttpTarget:
    url: str
    headers: Mapping[str, str] = attrs.Factory(dict)
    #: for an https:// URL: the trust (None: the system's trust store)
    ssl_context: ssl.SSLContext | None = None

    def describe(self) -> str:
        return self.url


Target = StdioTarget | HttpTarget


@asynccontextmanager
async def connect(
    target: Target,
    observer: Observer,
    *,
    recorder: Recorder | None = None,
    stderr_tail: deque[str] | None = None,
    raw: bool = False,
    connect_timeout: float = 10.0,
) -> AsyncIterator[ObservedChannel]:
    """One connection to ``target``, observed. ``stderr_tail`` collects the last
    lines a stdio server wrote on stderr (shown when it fails to start).
    ``raw``: over HTTP, messages go out as they are (a
    :class:`~mcp_ref.crosscheck.http_probe.RawHttpChannel`), not through
    our HTTP client, which sends only what it can parse. ``connect_timeout``: (HTTP) how long
    connecting, and the head of the answer to the client's GET stream, may take."""
    if isinstance(target, StdioTarget):
        from ..basic.transports.stdio import open_process_channel

        tail: deque[str] = stderr_tail if stderr_tail is not None else deque(maxlen=20)
        try:
            async with open_process_channel(
                target.command,
                target.args,
                env=target.env,
                cwd=target.cwd,
                stderr=tail.append,
                shutdown_timeouts=(2.0, 2.0),
            ) as channel:
                yield ObservedChannel(channel, observer, Direction.TO_SERVER, stdio=True, recorder=recorder)
        except OSError as e:
            raise TargetUnreachable(str(e)) from e
        return
    from urllib.parse import urlsplit

    parts = urlsplit(target.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetUnreachable(f"{target.url!r}: only http:// and https:// URLs are supported")
    try:
        from ..basic.transports.http_client import open_http_channel
    except ImportError as e:
        raise TargetUnreachable("Streamable HTTP needs the http extra (pip install mcp_ref[http])") from e
    if raw:
        import trio

        from .http_probe import RawHttpChannel

        try:
            async with trio.open_nursery() as nursery:
                raw_channel = RawHttpChannel(target.url, nursery, target.headers, target.ssl_context)
                raw_channel.on_finding = observer.findings.append
                try:
                    yield ObservedChannel(raw_channel, observer, Direction.TO_SERVER, recorder=recorder)
                finally:
                    await raw_channel.aclose()
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # the nursery is this function's own business: what the caller's block raised comes out as itself
            if len(group.exceptions) == 1 and isinstance(group.exceptions[0], Exception):
                raise group.exceptions[0] from None
            raise
        return
    options: dict[str, Any] = {"headers": dict(target.headers), "connect_timeout": connect_timeout}
    if target.ssl_context is not None:
        options["ssl_context"] = target.ssl_context
    async with open_http_channel(target.url, **options) as http:
        yield ObservedChannel(http, observer, Direction.TO_SERVER, recorder=recorder)
