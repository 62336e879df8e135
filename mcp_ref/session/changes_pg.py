"""A change feed shared by replicas through PostgreSQL's LISTEN/NOTIFY.

::

    async with open_postgres_change_feed("postgresql://mcp@db/mcp") as changes:
        server = Server("demo", changes=changes)

Every replica opened on the same database and ``channel`` sees every change
any of them publishes (a tool list changed, a resource updated), so a
``subscriptions/listen`` stream on one replica hears of a change made on
another. A change published here goes to the database (``pg_notify``) and
comes back through this process's listening connection like every other
replica's: each subscriber sees it once, in the database's order.

* Nothing blocks the trio thread: :meth:`PostgresChangeFeed.publish` queues the
  change; a sender task writes it from a worker thread, and the listener runs
  in a worker thread of its own, handing notifications back to trio.
* A database that goes away: changes published meanwhile are dropped (logged;
  a change notification says "look again", so a client that missed one is no
  worse off than one that listened later), the connections are made again.
* A payload is at most 7,900 bytes of JSON (PostgreSQL's limit is 8,000): a
  larger change is sent without its params, which a subscriber reads as "look
  again" too.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

try:
    import psycopg
    from psycopg import sql
except ImportError as e:  # (without the postgres extra)
    raise ImportError("the PostgreSQL change feed needs psycopg 3: pip install 'mcp_ref[postgres]'") from e

from .changes import LocalChangeFeed
from .task_pg import split_url

__all__ = ["PostgresChangeFeed", "open_postgres_change_feed"]

log = logging.getLogger("mcp_ref.session.changes_pg")

#: the largest payload sent with its params (PostgreSQL refuses more than 8000 bytes)
MAX_PAYLOAD = 7900


class PostgresChangeFeed:
    """A :class:`~mcp_ref.session.changes.ChangeFeed` on LISTEN/NOTIFY (see the module docstring)."""

    def __init__(self, channel: str, max_behind: int = 1000) -> None:
        self.channel = channel
        self._local = LocalChangeFeed(max_behind=max_behind)
        self._send, self._outbox = trio.open_memory_channel[str](math.inf)
        #: changes that could not be sent (the database was away)
        self.dropped = 0

    def publish(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queue a change for every replica (this one included); never blocks."""
        payload = json.dumps([method, params], separators=(",", ":"))
        if len(payload.encode()) > MAX_PAYLOAD:
            payload = json.dumps([method, None])
        try:
            self._send.send_nowait(payload)
        except trio.ClosedResourceError:
            log.debug("change %s not sent: the feed is closed", method)

    def subscribe(self) -> Any:
        return self._local.subscribe()

    def close(self, reason: str = "the server is shutting down") -> None:
        self._local.close(reason)
        self._send.close()

    @property
    def subscribers(self) -> int:
        return self._local.subscribers

    def _heard(self, payload: str) -> None:
        try:
            method, params = json.loads(payload)
        except (ValueError, TypeError):
            log.warning("a change notification that is not ours: %.100r", payload)
            return
        if isinstance(method, str) and (params is None or isinstance(params, dict)):
            self._local.publish(method, params)

    # -- the two connections, each in a worker thread ---------------------------------------------

    async def _sender(self, connect: Callable[[], Any]) -> None:
        conn: Any = None
        limiter = trio.CapacityLimiter(1)
        try:
            async for payload in self._outbox:
                try:
                    if conn is None:
                        conn = await trio.to_thread.run_sync(connect, limiter=limiter)
                    await trio.to_thread.run_sync(
                        conn.execute, "SELECT pg_notify(%s, %s)", (self.channel, payload), limiter=limiter
                    )
                except psycopg.Error as e:
                    self.dropped += 1
                    log.warning("a change was not sent to the other replicas: %s", e)
                    if conn is not None:
                        await trio.to_thread.run_sync(conn.close, limiter=limiter)
                    conn = None
        finally:
            if conn is not None:
                conn.close()

    def _listen(self, connect: Callable[[], Any], stop: threading.Event, connected: Callable[[], None]) -> None:
        delay = 0.2
        while not stop.is_set():
            try:
                with connect() as conn:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                    trio.from_thread.run_sync(connected)
                    delay = 0.2
                    while not stop.is_set():
                        for note in conn.notifies(timeout=0.25):
                            trio.from_thread.run_sync(self._heard, note.payload)
            except psycopg.Error as e:
                if stop.is_set():
                    return
                log.warning("change listener: %s; reconnecting in %g s", e, delay)
                stop.wait(delay)
                delay = min(delay * 2, 5.0)
            except trio.RunFinishedError:
                return


@asynccontextmanager
async def open_postgres_change_feed(
    conninfo: str, *, channel: str = "mcp_changes", connect_timeout: float = 5.0, max_behind: int = 1000
) -> AsyncIterator[PostgresChangeFeed]:
    """A change feed shared by every process opened on the database at ``conninfo`` and ``channel``.

    Raises :class:`ConnectionError` if the database cannot be reached now. ``conninfo`` may be
    the URL the task store is opened with: its ``table=`` and ``sweep=`` are the store's, left out here.
    """
    conninfo, _ = split_url(conninfo)

    def connect() -> Any:
        return psycopg.connect(
            conninfo,
            autocommit=True,
            connect_timeout=max(1, round(connect_timeout)),
            application_name="mcp_ref changes",
        )

    feed = PostgresChangeFeed(channel, max_behind)
    stop = threading.Event()
    listening = trio.Event()
    async with trio.open_nursery() as nursery:

        async def listener() -> None:
            await trio.to_thread.run_sync(feed._listen, connect, stop, listening.set, limiter=trio.CapacityLimiter(1))

        nursery.start_soon(listener, name="mcp change listener")
        with trio.move_on_after(connect_timeout + 1):
            await listening.wait()  # (subscribed before anything is published)
        if listening.is_set():
            nursery.start_soon(feed._sender, connect, name="mcp change sender")
            try:
                yield feed
            finally:
                stop.set()
                feed.close()
                nursery.cancel_scope.cancel()
        else:
            stop.set()
            nursery.cancel_scope.cancel()
    if not listening.is_set():
        raise ConnectionError("the change feed could not reach PostgreSQL")
