"""A durable task store: tasks kept in a SQLite file survive a restart (basic/utilities/tasks).

::

    async with open_sqlite_task_store("tasks.db") as store:
        async with trio.open_nursery() as nursery:
            server.enable_tasks(nursery, store=store, config=TaskConfig(binding="none"))
            ...

:class:`SqliteTaskStore` is a :class:`~mcp_ref.basic.utilities.tasks.TaskStore`:
the task runtime calls it synchronously, so it answers from memory and never
blocks the trio thread. Every change is written behind, by one writer task
that hands each batch to a worker thread (``trio.to_thread.run_sync`` with a
limiter of one: one connection, one writer); a task changed several times
between two writes is written once. The file is in WAL mode with
``synchronous=NORMAL``: a write that returned survives the process being
killed (not a power cut, which may lose the last writes). :meth:`flushed`
waits until every change made so far is on disk.

On opening, a task that was not finished when the file was last written (the
server stopped or was killed meanwhile) is marked ``failed`` with a message
that says so, and its ``tasks/result`` is an error saying the same: its work
is gone with the process that ran it. Finished tasks answer ``tasks/get`` and
``tasks/result`` as before, until their ttl, which counts in wall-clock time
across the restart (expired ones are dropped on opening).

Owners are written down, so they must be JSON scalars (a string, a number or
None): ``binding="none"`` or a binding returning an identity such as an
authorization subject. Tasks bound to a session (``binding="session"``, the
default) die with their session, so storing them durably means nothing; the
store refuses them with TypeError.
"""

import json
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager
from os import PathLike
from typing import Any

import trio

from ..basic.transports._nursery import block_nursery
from ..basic.utilities.tasks import InMemoryTaskStore, TaskRecord, is_terminal
from ..errors import ErrorCode
from ..schema._base import LATEST_LEGACY_REVISION
from ..schema._converter import converter_for, decode
from ..schema.jsonrpc import Error
from ..schema.messages import RESULT_TYPES

__all__ = ["SqliteTaskStore", "open_sqlite_task_store", "RESTART_MESSAGE"]

log = logging.getLogger("mcp_ref.tasks.db")

#: the status message of a task whose work was lost with the process that ran it
RESTART_MESSAGE = "the server restarted before the task finished"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    method TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    created_at REAL NOT NULL,
    last_updated_at REAL NOT NULL,
    ttl_ms INTEGER,
    poll_interval_ms INTEGER,
    expires_at REAL,
    progress_token TEXT,
    outcome TEXT,
    seq INTEGER NOT NULL
)
"""
_COLUMNS = (
    "task_id, owner, method, status, status_message, created_at, last_updated_at,"
    " ttl_ms, poll_interval_ms, expires_at, progress_token, outcome, seq"
)
_Row = tuple[Any, ...]


class _Database:
    """The SQLite side: plain blocking calls, made from a worker thread one at a time."""

    def __init__(self, path: str | PathLike[str]) -> None:
        # (check_same_thread off: the worker thread changes, but the limiter lets one in at a time)
        self.conn = sqlite3.connect(path, timeout=10, check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(_SCHEMA)

    def load(self) -> list[_Row]:
        return self.conn.execute(f"SELECT {_COLUMNS} FROM tasks ORDER BY seq").fetchall()

    def write(self, rows: list[_Row], deleted: list[str]) -> None:
        """One transaction: these rows as they are now, and these tasks gone."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                self.conn.executemany(f"INSERT OR REPLACE INTO tasks ({_COLUMNS}) VALUES ({marks})", rows)
            if deleted:
                self.conn.executemany("DELETE FROM tasks WHERE task_id = ?", [(t,) for t in deleted])

    def close(self) -> None:
        self.conn.close()


def _owner_text(owner: Hashable) -> str:
    if owner is not None and type(owner) not in (str, int):
        raise TypeError(
            f"a durable task store writes owners down: {type(owner).__name__} is not a string, an int or None "
            '(tasks bound to a session die with it; use binding="none" or an identity)'
        )
    return json.dumps(owner)


def _outcome_text(record: TaskRecord) -> str | None:
    outcome = record.outcome
    if outcome is None:
        return None
    if isinstance(outcome, Error):
        return json.dumps({"error": {"code": outcome.code, "message": outcome.message, "data": outcome.data}})
    return json.dumps({"result": converter_for(LATEST_LEGACY_REVISION).unstructure(outcome)})


def _outcome_of(text: str | None, method: str) -> Any:
    if text is None:
        return None
    value = json.loads(text)
    if "error" in value:
        error = value["error"]
        return Error(code=error["code"], message=error["message"], data=error.get("data"))
    return decode(value["result"], RESULT_TYPES[method])


class SqliteTaskStore(InMemoryTaskStore):
    """A :class:`~mcp_ref.basic.utilities.tasks.TaskStore` written behind to a SQLite file.

    Build it with :func:`open_sqlite_task_store`, which loads the file and runs
    the writer. Reads come from memory; ``expires_at`` is runtime (trio) time
    in memory and wall-clock time in the file.
    """

    #: tasks outlive the process: the task runtime refuses to bind them to sessions
    durable = True

    def __init__(self, db: _Database, *, wall_clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self._db = db
        self._wall_clock = wall_clock
        #: tasks changed (or removed: None) since the last write
        self._dirty: dict[str, TaskRecord | None] = {}
        self._changed = trio.Event()
        self._limiter = trio.CapacityLimiter(1)
        self._write_lock = trio.Lock()
        #: tasks found unfinished on opening, now failed (see RESTART_MESSAGE)
        self.interrupted = 0

    # -- loading -------------------------------------------------------------------------------------

    def _load(self, rows: list[_Row]) -> None:
        now, wall = trio.current_time(), self._wall_clock()
        for row in rows:
            (task_id, owner, method, status, message, created, updated, ttl, poll, expires, token, outcome, seq) = row
            if expires is not None and expires <= wall:
                self._dirty[task_id] = None  # expired while we were away: gone
                continue
            record = TaskRecord(
                task_id=task_id,
                owner=json.loads(owner),
                method=method,
                status=status,
                created_at=created,
                last_updated_at=updated,
                ttl_ms=ttl,
                poll_interval_ms=poll,
                expires_at=None if expires is None else now + (expires - wall),
                status_message=message,
                progress_token=json.loads(token) if token is not None else None,
                outcome=_outcome_of(outcome, method) if method in RESULT_TYPES else None,
                seq=seq,
            )
            if not is_terminal(record.status):
                # its work died with the process that ran it: say so, for tasks/get and tasks/result
                record.outcome = Error(code=ErrorCode.INTERNAL_ERROR, message=f"Task interrupted: {RESTART_MESSAGE}")
                record.move("failed", wall, RESTART_MESSAGE)
                self._dirty[task_id] = record
                self.interrupted += 1
            self._put(record)
        if self.interrupted:
            log.warning("%d unfinished task(s) from before the restart failed: %s", self.interrupted, RESTART_MESSAGE)

    # -- TaskStore (the in-memory store's, each change marked to be written) ------------------

    def _touch(self, task_id: str, record: TaskRecord | None) -> None:
        self._dirty[task_id] = record
        self._changed.set()

    def add(self, record: TaskRecord) -> None:
        _owner_text(record.owner)  # refused now, at the call, not in the writer
        super().add(record)
        self._touch(record.task_id, record)

    def update(self, record: TaskRecord) -> None:
        """Store the new state of a task; a task already deleted (expired) stays deleted."""
        if record.task_id in self._tasks:
            super().update(record)
            self._touch(record.task_id, record)

    def get(self, task_id: str) -> TaskRecord | None:
        record = super().get(task_id)
        if record is not None and record.expires_at is not None and record.expires_at <= trio.current_time():
            return None  # past its ttl: gone for the requestor, even before the expiry loop purges it
        return record

    def remove(self, task_id: str) -> None:
        if task_id in self._tasks:
            super().remove(task_id)
            self._touch(task_id, None)

    # -- writing -------------------------------------------------------------------------------------

    def _row(self, record: TaskRecord, now: float, wall: float) -> _Row:
        expires = None if record.expires_at is None else wall + (record.expires_at - now)
        token = None if record.progress_token is None else json.dumps(record.progress_token)
        return (
            record.task_id,
            _owner_text(record.owner),
            record.method,
            record.status,
            record.status_message,
            record.created_at,
            record.last_updated_at,
            record.ttl_ms,
            record.poll_interval_ms,
            expires,
            token,
            _outcome_text(record),
            record.seq,
        )

    async def flushed(self) -> None:
        """Return once every change made before the call is written to the file."""
        async with self._write_lock:
            if not self._dirty:
                await trio.lowlevel.checkpoint()
                return
            dirty, self._dirty = self._dirty, {}
            now, wall = trio.current_time(), self._wall_clock()
            rows = [self._row(r, now, wall) for r in dirty.values() if r is not None]
            deleted = [task_id for task_id, r in dirty.items() if r is None]
            try:
                await trio.to_thread.run_sync(self._db.write, rows, deleted, limiter=self._limiter)
            except BaseException:
                for task_id, record in dirty.items():
                    self._dirty.setdefault(task_id, record)  # not written: kept for the next try
                raise

    async def _writer(self) -> None:
        while True:
            await self._changed.wait()
            self._changed = trio.Event()
            await self.flushed()

    async def _close(self) -> None:
        with trio.CancelScope(shield=True):
            await self.flushed()
            await trio.to_thread.run_sync(self._db.close, limiter=self._limiter)


@asynccontextmanager
async def open_sqlite_task_store(
    path: str | PathLike[str], *, wall_clock: Callable[[], float] = time.time
) -> AsyncIterator[SqliteTaskStore]:
    """Open (or create) the task file at ``path`` and keep it written while the block runs.

    Leave the block after the nursery the tasks run in: what the tasks did last
    (a task cancelled at shutdown is failed) is written on the way out.
    """
    db = await trio.to_thread.run_sync(_Database, path)
    store = SqliteTaskStore(db, wall_clock=wall_clock)
    try:
        store._load(await trio.to_thread.run_sync(db.load, limiter=store._limiter))
        async with block_nursery() as (nursery, body):
            nursery.start_soon(store._writer, name="mcp task store writer")
            try:
                yield store
            except BaseException as exc:
                body.exc = exc
                raise
            finally:
                nursery.cancel_scope.cancel(reason="task store closing")
    finally:
        await store._close()
