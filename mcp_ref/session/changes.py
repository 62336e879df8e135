"""The change feed: what crosses requests in 2026-07-28, behind one interface.

A ``subscriptions/listen`` request (basic/patterns/subscriptions) waits for
changes that happen anywhere: a tool added, a resource updated. The server
publishes each change once; every open subscription sees it and keeps the
ones its filter asked for. With one process an in-memory feed is enough
(:class:`LocalChangeFeed`, the default); replicas need a feed every process
publishes to and reads from (PostgreSQL's LISTEN/NOTIFY, say), which
implements :class:`ChangeFeed` and is given as ``Server(changes=...)``.

A change is ``(method, params)``: the notification's method and its params as
JSON (``("notifications/resources/updated", {"uri": ...})``), or None for a
notification without params.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import trio

__all__ = ["Change", "ChangeFeed", "LocalChangeFeed", "FeedClosed"]

log = logging.getLogger("mcp_ref.session.changes")

#: a change notification: its method and its JSON params
Change = tuple[str, dict[str, Any] | None]


class FeedClosed(Exception):
    """A subscriber's feed ended: the server is shutting down, or the subscriber fell too far behind."""

    def __init__(self, reason: str, *, graceful: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        #: True: the server ends every subscription (shutdown); False: this one was dropped
        self.graceful = graceful


class ChangeFeed(Protocol):
    """Where a server publishes changes and its subscriptions read them."""

    def publish(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Publish one change (from the trio thread; never blocks)."""

    def subscribe(self) -> Any:
        """An async context manager giving an async iterator of the changes published from
        now on; the iterator raises :class:`FeedClosed` when the feed ends it."""

    def close(self, reason: str = "the server is shutting down") -> None:
        """End every subscription gracefully (a server shutting down)."""


class _Subscriber:
    __slots__ = ("closed", "receive", "send")

    def __init__(self, buffer: int) -> None:
        self.send, self.receive = trio.open_memory_channel[Change | FeedClosed](math.inf)
        self.closed: FeedClosed | None = None


class LocalChangeFeed:
    """The in-process feed: each subscriber gets every change published while it listens.

    ``max_behind``: changes a subscriber may have waiting; one that falls further
    behind (its client stopped reading) is dropped with a non-graceful
    :class:`FeedClosed`, so one slow client never grows the server's memory.
    """

    def __init__(self, *, max_behind: int = 1000) -> None:
        if max_behind < 1:
            raise ValueError("max_behind must be at least 1")
        self.max_behind = max_behind
        self._subscribers: set[_Subscriber] = set()
        self._closed: str | None = None

    def publish(self, method: str, params: dict[str, Any] | None = None) -> None:
        for sub in list(self._subscribers):
            if sub.send.statistics().current_buffer_used >= self.max_behind:
                self._drop(sub, FeedClosed("the subscriber fell too far behind", graceful=False))
                continue
            sub.send.send_nowait((method, params))

    def close(self, reason: str = "the server is shutting down") -> None:
        self._closed = reason
        for sub in list(self._subscribers):
            self._drop(sub, FeedClosed(reason, graceful=True))

    def _drop(self, sub: _Subscriber, why: FeedClosed) -> None:
        self._subscribers.discard(sub)
        if sub.closed is None:
            sub.closed = why
            sub.send.send_nowait(why)
            sub.send.close()

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[Change]]:
        sub = _Subscriber(self.max_behind)
        if self._closed is not None:
            sub.closed = FeedClosed(self._closed, graceful=True)
            sub.send.send_nowait(sub.closed)
            sub.send.close()
        else:
            self._subscribers.add(sub)
        try:
            yield self._changes(sub)
        finally:
            self._subscribers.discard(sub)
            sub.receive.close()

    @staticmethod
    async def _changes(sub: _Subscriber) -> AsyncIterator[Change]:
        async for item in sub.receive:
            if isinstance(item, FeedClosed):
                raise item
            yield item
