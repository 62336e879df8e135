"""A durable task store in a SQLite file: tasks survive a crash and a restart (basic/utilities/tasks).

::

    async with open_sqlite_task_store("tasks.db") as store:
        async with trio.open_nursery() as nursery:
            server.enable_tasks(nursery, store=store)
            ...

:class:`SqliteTaskStore` keeps the :class:`~mcp_ref.session.task_store.TaskStore`
contract on a file (standard library ``sqlite3``, WAL):

* **One server per file.** Opening takes an exclusive lock (``flock``) on the
  database file itself for as long as the store is open; a second process
  opening the same file -- by the same path, a symlink, a hard link or another
  mount -- gets :class:`TaskStoreLocked` at once, naming the holder, and
  starts nothing. The kernel drops the lock when its process dies, ``kill -9``
  included, so a restart never waits. (Several servers on one set of tasks:
  :mod:`mcp_ref.session.task_pg`.)
* **Acknowledged means written.** Every change is a committed transaction
  before the call returns, so the ``CreateTaskResult`` of a task is sent only
  once its row is in the file. ``synchronous=NORMAL`` (the default) survives
  the process being killed; ``synchronous="FULL"`` also a power cut, at an
  fsync per change.
* **Compare and set.** A change reads the stored row and writes the new one in
  one ``BEGIN IMMEDIATE`` transaction, by the rules every store shares
  (:func:`~mcp_ref.session.task_store.apply_move` ...): a terminal task is never
  overwritten.
* **No blocking on the trio thread.** Each call runs in a worker thread
  (``trio.to_thread.run_sync``): writes one at a time on one connection,
  reads on a few others.

On opening, a task that was not finished when its server stopped (or was
killed) is marked ``failed`` with a message that says so, and its
``tasks/result`` is an error saying the same: its work died with the process
that ran it. Finished tasks answer ``tasks/get`` and ``tasks/result`` as before
until their ttl, which counts by the wall clock (``wall_clock``) across the
restart. Owners are stored as text (:func:`~mcp_ref.basic.utilities.tasks.owner_key`),
so a task stays bound to the authenticated user who created it.
"""

import logging
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from os import PathLike
from typing import Any, Literal, NoReturn, TypeVar

import attrs
import trio

from ..basic.utilities.tasks import TaskLimits, TaskRecord, limit_refusal
from .task_store import (
    COLUMNS,
    MUTABLE,
    RESTART_MESSAGE,
    SqlTaskStore,
    TaskChange,
    TaskLimitReached,
    TotalCount,
    _Subscribers,
    interrupted,
    new_runner_id,
    record_row,
    row_record,
)

__all__ = ["SqliteTaskStore", "open_sqlite_task_store", "TaskStoreLocked", "RESTART_MESSAGE"]

log = logging.getLogger("mcp_ref.tasks.db")

T = TypeVar("T")

#: the file's layout; PRAGMA user_version says which one a file has
SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL UNIQUE,
    owner TEXT,
    requestor TEXT,
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
    runner TEXT,
    version INTEGER NOT NULL,
    input_requests TEXT,
    input_responses TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, seq);
CREATE INDEX IF NOT EXISTS tasks_by_requestor ON tasks (requestor, status);
CREATE INDEX IF NOT EXISTS tasks_by_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
"""
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM tasks"
_UNEXPIRED = "(expires_at IS NULL OR expires_at > ?)"
_UNFINISHED_SQL = "status IN ('working', 'input_required')"
_INSERT = f"INSERT INTO tasks ({', '.join(COLUMNS[:-1])}) VALUES ({', '.join('?' * (len(COLUMNS) - 1))})"
_UPDATE = f"UPDATE tasks SET {', '.join(f'{c} = ?' for c in MUTABLE)} WHERE task_id = ? AND version = ?"
#: reader connections (reads run side by side in WAL mode)
_READERS = 2


class TaskStoreLocked(RuntimeError):
    """Another process has this task file open: one server per file."""


#: the task files this process has open, by identity (st_dev, st_ino): the lock's descriptor, and
#: descriptors of the file to close only when it is released (see _Lock)
_HELD: dict[tuple[int, int], list[int]] = {}
_HELD_GUARD = threading.Lock()


def _holder(st: os.stat_result) -> str:
    """The process holding the ``flock`` of the file ``st`` (Linux: /proc/locks), else "unknown"."""
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            for line in locks:
                # "1: FLOCK  ADVISORY  WRITE 3303 fe:00:5309876 0 EOF" (a waiter's line has "->" second)
                fields = line.split()
                if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == inode:
                    return fields[4]
    except OSError:
        pass
    return "unknown"


class _Lock:
    """An exclusive ``flock`` on the database file itself, held while the store is open.

    The lock belongs to the file (its inode), not to the name it was opened by:
    a symlink, a hard link or another mount of the same file finds it taken.
    (SQLite's own locks are POSIX record locks, which closing *any* descriptor of
    the file drops for the whole process: a second opening in the process that
    holds the file is refused before a descriptor is opened, by identity.)
    """

    def __init__(self, path: str) -> None:
        import fcntl  # (POSIX: the durable stores need it)

        self.path = path
        try:
            st = os.stat(path)
        except FileNotFoundError:
            pass
        else:
            self._refuse_if_held_here((st.st_dev, st.st_ino), path)
        # (created empty if missing: an empty file is an empty SQLite database)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        st = os.fstat(fd)
        self.identity = (st.st_dev, st.st_ino)
        with _HELD_GUARD:
            held = _HELD.get(self.identity)
            if held is not None:
                # (made by another thread of ours since the check above) kept open until that store
                # closes, so its SQLite locks stay
                held.append(fd)
                self._refuse(os.getpid(), path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)  # (no SQLite connection of this process has the file: nothing to drop)
                self._refuse(_holder(st), path)
            self.fd = fd
            _HELD[self.identity] = [fd]

    @staticmethod
    def _refuse_if_held_here(identity: tuple[int, int], path: str) -> None:
        with _HELD_GUARD:
            if identity in _HELD:
                _Lock._refuse(os.getpid(), path)

    @staticmethod
    def _refuse(holder: object, path: str) -> NoReturn:
        raise TaskStoreLocked(
            f"the task file is in use by another server (process {holder}, file {path}): "
            "one server per SQLite task file; several servers share tasks through PostgreSQL"
        )

    def release(self) -> None:
        with _HELD_GUARD:
            for fd in _HELD.pop(self.identity, [self.fd]):
                os.close(fd)  # (closing the lock's descriptor drops the flock)


def _connect(path: str, synchronous: str) -> sqlite3.Connection:
    # (check_same_thread off: worker threads change, but each connection is used by one at a time)
    conn = sqlite3.connect(path, timeout=10, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    return conn


def _migrate(conn: sqlite3.Connection) -> None:
    """Create the table, or bring a file of an earlier layout to this one."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise RuntimeError(f"the task file has layout {version}, newer than this mcp_ref's ({SCHEMA_VERSION})")
    old = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'tasks'").fetchone()
    conn.execute("BEGIN IMMEDIATE")
    try:
        migrate = old is not None and version == 0
        if migrate:
            conn.execute("ALTER TABLE tasks RENAME TO tasks_v0")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        if migrate:
            # layout 0 (mcp_ref before the per-user binding): owners as JSON ('null' for nobody),
            # an explicit seq, no requestor, runner, version or input columns
            conn.execute(
                "INSERT INTO tasks (seq, task_id, owner, requestor, method, status, status_message, created_at,"
                " last_updated_at, ttl_ms, poll_interval_ms, expires_at, progress_token, outcome, version)"
                " SELECT seq, task_id, NULLIF(owner, 'null'), NULLIF(owner, 'null'), method, status,"
                " status_message, created_at, last_updated_at, ttl_ms, poll_interval_ms, expires_at,"
                " progress_token, outcome, 1 FROM tasks_v0"
            )
            conn.execute("DROP TABLE tasks_v0")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class _Database:
    """The SQLite side: plain blocking calls, each made from a worker thread."""

    def __init__(self, path: str, synchronous: str) -> None:
        self.writer = _connect(path, synchronous)
        try:
            _migrate(self.writer)
            self.readers = [_connect(path, synchronous) for _ in range(_READERS)]
        except BaseException:
            self.writer.close()
            raise

    # -- reads (any connection) ----------------------------------------------------------------

    @staticmethod
    def get(conn: sqlite3.Connection, task_id: str, now: float) -> TaskRecord | None:
        row = conn.execute(f"{_SELECT} WHERE task_id = ? AND {_UNEXPIRED}", (task_id, now)).fetchone()
        return row_record(row) if row is not None else None

    @staticmethod
    def owned_by(conn: sqlite3.Connection, owner: str | None, now: float) -> list[TaskRecord]:
        rows = conn.execute(f"{_SELECT} WHERE owner IS ? AND {_UNEXPIRED} ORDER BY seq", (owner, now)).fetchall()
        return [row_record(row) for row in rows]

    @staticmethod
    def next_expiry(conn: sqlite3.Connection) -> float | None:
        value: float | None = conn.execute("SELECT min(expires_at) FROM tasks").fetchone()[0]
        return value

    @staticmethod
    def count(conn: sqlite3.Connection) -> int:
        value: int = conn.execute("SELECT count(*) FROM tasks").fetchone()[0]
        return value

    # -- writes (the writer connection, one transaction each) ----------------------------------

    def _transaction(self, body: Callable[[sqlite3.Connection], T]) -> T:
        conn = self.writer
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = body(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    def create(
        self, record: TaskRecord, limits: TaskLimits, now: float, total: int | None
    ) -> tuple[TaskRecord, int, bool]:
        """Add the task if the limits allow; the new record, the tasks stored after it, and
        whether that number was counted (``total`` None) or estimated (see TotalCount)."""

        def count_all(conn: sqlite3.Connection) -> int:
            return int(conn.execute(f"SELECT count(*) FROM tasks WHERE {_UNEXPIRED}", (now,)).fetchone()[0])

        def body(conn: sqlite3.Connection) -> tuple[TaskRecord, int, bool]:
            kept, running = conn.execute(
                f"SELECT count(*), coalesce(sum({_UNFINISHED_SQL}), 0) FROM tasks"
                f" WHERE requestor IS ? AND {_UNEXPIRED}",
                (record.requestor, now),
            ).fetchone()
            total_now, counted = (count_all(conn), True) if total is None else (total, False)
            why = limit_refusal(limits, kept, running, total_now)
            if why is not None and not counted:
                total_now, counted = count_all(conn), True
                why = limit_refusal(limits, kept, running, total_now)
            if why is not None:
                raise TaskLimitReached(why)
            row = record_row(record)
            try:
                cursor = conn.execute(_INSERT, [row[c] for c in COLUMNS[:-1]])
            except sqlite3.IntegrityError:
                # [basic/utilities/tasks#25] ids are unique among our tasks -- tasks#task-id-requirements
                raise ValueError(f"task id {record.task_id!r} already exists") from None
            seq = cursor.lastrowid
            assert seq is not None
            return attrs.evolve(record, seq=seq), total_now + 1, counted

        return self._transaction(body)

    def change(self, task_id: str, now: float, apply: Callable[[TaskRecord], Any]) -> tuple[Any, bool]:
        """Read the stored task, ``apply`` the change's rule to it, write what it returns.

        ``apply`` returns the new record (the same one: no change) or (new record,
        answer). Returns what it returned and whether the task changed; LookupError
        when the task is not there (or past its ttl).
        """

        def body(conn: sqlite3.Connection) -> tuple[Any, bool]:
            record = self.get(conn, task_id, now)
            if record is None:
                raise LookupError(f"task {task_id!r} not found")
            result = apply(record)
            new = result[0] if isinstance(result, tuple) else result
            if new is record:
                return result, False
            row = record_row(new)
            conn.execute(_UPDATE, [*(row[c] for c in MUTABLE), task_id, record.version])
            return result, True

        return self._transaction(body)

    def delete(self, task_id: str) -> int | None:
        def body(conn: sqlite3.Connection) -> int | None:
            row = conn.execute("DELETE FROM tasks WHERE task_id = ? RETURNING version", (task_id,)).fetchone()
            return None if row is None else int(row[0])

        return self._transaction(body)

    def purge(self, now: float) -> list[tuple[str, int]]:
        def body(conn: sqlite3.Connection) -> list[tuple[str, int]]:
            rows = conn.execute("DELETE FROM tasks WHERE expires_at <= ? RETURNING task_id, version", (now,))
            return [(task_id, int(version)) for task_id, version in rows.fetchall()]

        return self._transaction(body)

    def recover(self, wall: float, now: float) -> list[TaskRecord]:
        """Fail the tasks whose process died before they finished (we hold the file: nobody runs them)."""

        def body(conn: sqlite3.Connection) -> list[TaskRecord]:
            rows = conn.execute(f"{_SELECT} WHERE {_UNFINISHED_SQL} AND {_UNEXPIRED}", (now,)).fetchall()
            failed = [interrupted(row_record(row), wall) for row in rows]
            for new in failed:
                row = record_row(new)
                conn.execute(_UPDATE, [*(row[c] for c in MUTABLE), new.task_id, new.version - 1])
            return failed

        return self._transaction(body)

    def close(self) -> None:
        for conn in (self.writer, *self.readers):
            conn.close()


class SqliteTaskStore(SqlTaskStore):
    """A :class:`~mcp_ref.session.task_store.TaskStore` in a SQLite file (one process at a time).

    Build it with :func:`open_sqlite_task_store`. Its clock is ``wall_clock``
    (seconds since the epoch): ttls count across restarts.
    """

    durable = True
    shared = False

    def __init__(self, db: _Database, *, wall_clock: Callable[[], float] = time.time) -> None:
        self._db = db
        #: seconds since the epoch, for the tasks' time to live (shared by every process of the file)
        self.clock = wall_clock
        #: this process's name in the store: records of tasks it runs carry it
        self.runner = new_runner_id()
        self._subscribers = _Subscribers()
        self._write_limiter = trio.CapacityLimiter(1)
        self._read_limiter = trio.CapacityLimiter(len(db.readers))
        self._idle_readers = list(db.readers)
        #: tasks found unfinished on opening, now failed (see RESTART_MESSAGE)
        self.interrupted = 0
        self._total = TotalCount()

    def subscribe(self, callback: Callable[[TaskChange], None]) -> Callable[[], None]:
        """Call ``callback`` (in the trio thread, never blocking) on every change; returns unsubscribe."""
        return self._subscribers.subscribe(callback)

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        return await trio.to_thread.run_sync(fn, *args, limiter=self._write_limiter)

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        async with self._read_limiter:
            conn = self._idle_readers.pop()
            try:
                return await trio.to_thread.run_sync(fn, conn, *args)
            finally:
                self._idle_readers.append(conn)

    def _changed(self, record: TaskRecord) -> TaskRecord:
        self._subscribers.announce(TaskChange(record.task_id, record.version, record.status, record))
        return record

    async def _write_change(self, task_id: str, apply: Callable[[TaskRecord], Any]) -> tuple[Any, bool]:
        return await self._write(self._db.change, task_id, self.clock(), apply)

    # -- TaskStore -------------------------------------------------------------------------------

    async def create(self, record: TaskRecord, limits: TaskLimits) -> TaskRecord:
        """Add a new task, durably, if ``limits`` allow it (else TaskLimitReached). The store sets ``seq`` (creation
        order), ``expires_at`` (its clock plus the ttl), ``runner`` (itself) and ``version``; the id must be new
        (ValueError).
        """
        now = self.clock()
        ttl = record.ttl_ms
        record = attrs.evolve(
            record, expires_at=None if ttl is None else now + ttl / 1000, runner=self.runner, version=1
        )
        started = trio.current_time()
        new, total, counted = await self._write(self._db.create, record, limits, now, self._total.hint(started))
        self._total.created(started, total, counted)
        return self._changed(new)

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task as stored; None if unknown, deleted or past its ttl."""
        return await self._read(_Database.get, task_id, self.clock())

    async def delete(self, task_id: str) -> None:
        """Delete the task (nothing happens if it is gone already)."""
        version = await self._write(self._db.delete, task_id)
        if version is not None:
            self._subscribers.announce(TaskChange(task_id, version + 1, None))

    async def owned_by(self, owner: str | None) -> list[TaskRecord]:
        """``owner``'s tasks (None: the tasks bound to nobody), in creation order."""
        return await self._read(_Database.owned_by, owner, self.clock())

    async def next_expiry(self) -> float | None:
        """Seconds until the next task expires (0 if one has), by the store's clock; None: none will."""
        deadline = await self._read(_Database.next_expiry)
        return None if deadline is None else max(0.0, deadline - self.clock())

    async def purge_expired(self) -> list[str]:
        """Delete the tasks past their ttl; their ids."""
        gone = await self._write(self._db.purge, self.clock())
        for task_id, version in gone:
            self._subscribers.announce(TaskChange(task_id, version + 1, None))
        return [task_id for task_id, _ in gone]

    async def count(self) -> int:
        """How many tasks are stored (monitoring)."""
        return await self._read(_Database.count)

    async def _recover(self, wall: float) -> None:
        failed = await self._write(self._db.recover, wall, self.clock())
        self.interrupted = len(failed)
        if failed:
            log.warning("%d unfinished task(s) from before the restart failed: %s", len(failed), RESTART_MESSAGE)


@asynccontextmanager
async def open_sqlite_task_store(
    path: str | PathLike[str],
    *,
    wall_clock: Callable[[], float] = time.time,
    synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
) -> AsyncIterator[SqliteTaskStore]:
    """Open (or create) the task file at ``path`` for this process alone, while the block runs.

    :class:`TaskStoreLocked` if another process has it open. Tasks left
    unfinished by the process that had it last are failed (their work is gone).
    Leave the block after the nursery the tasks run in: what they did last is
    written on the way out.
    """
    if synchronous not in ("NORMAL", "FULL"):
        raise ValueError('synchronous must be "NORMAL" (survives a crash) or "FULL" (survives a power cut)')
    name = os.fspath(path)
    # (the database file itself is locked: another name for it -- a symlink, a hard link -- finds it taken)
    lock = await trio.to_thread.run_sync(_Lock, name)
    try:
        db = await trio.to_thread.run_sync(_Database, name, synchronous)
        store = SqliteTaskStore(db, wall_clock=wall_clock)
        try:
            await store._recover(wall_clock())
            await store.purge_expired()  # (what expired while no server ran)
            yield store
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(db.close, limiter=store._write_limiter)
    finally:
        lock.release()
