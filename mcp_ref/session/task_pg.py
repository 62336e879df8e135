"""Tasks in PostgreSQL: one set of tasks for any number of server processes (replicas).

::

    async with open_postgres_task_store("host=127.0.0.1 dbname=mcp user=mcp") as store:
        async with trio.open_nursery() as nursery:
            server.enable_tasks(nursery, store=store)
            ...

Install the ``postgres`` extra (``psycopg`` 3). :class:`PostgresTaskStore`
keeps the :class:`~mcp_ref.session.task_store.TaskStore` contract in one
table (``table``, default ``mcp_tasks``), which every process opened on the
same database shares:

* **Results from any replica.** Every read goes to the database: a task
  created, changed or finished by one process is what any other reads.
* **Durable before acknowledged.** A change returns once its transaction is
  committed (with the database's own ``synchronous_commit``).
* **Compare and set.** A change reads the row ``FOR UPDATE`` and writes it by
  the rules every store shares, in one transaction: two replicas never
  overwrite each other, and a terminal task stays as it is.
* **Limits per requestor.** A creation takes a transaction-level advisory lock
  on its requestor before counting, so concurrent creations on any replicas
  cannot pass a requestor's limits together. (The limit on all tasks is
  counted without that lock: replicas creating for different requestors at the
  same instant may pass it by as many tasks as they create at once.)
* **Expiry by the database's clock** (``clock_timestamp()``), the same for
  every replica.
* **Changes reach every replica.** Each change is announced with
  ``pg_notify`` in its transaction; one listening connection per process
  (``LISTEN``) hands them to the runtime, which wakes a ``tasks/result``
  waiting on this replica and stops the work of a task cancelled on another.
  The runtime also re-reads now and then, as a notification can be missed
  while the listener reconnects.
* **Work that died with its replica.** The listening connection holds an
  advisory lock named after this process (its ``runner``) for as long as it is
  connected; the rows of running tasks say which runner runs them. Every
  ``sweep_interval`` seconds each replica looks for running tasks whose
  runner's lock is free -- the process is gone, ``kill -9`` included, as the
  database drops a dead connection's locks -- and, when the lock is still free
  ``sweep_grace`` seconds later (a listener reconnecting after a network blip
  holds it again by then), fails them, saying so.
* **No blocking on the trio thread.** Every database call runs in a worker
  thread (``trio.to_thread.run_sync``) on a bounded pool of ``pool_size``
  connections; waiting for a connection is bounded by ``acquire_timeout``,
  connecting by ``connect_timeout`` and each statement by
  ``statement_timeout`` (server-side), so nothing waits forever.
* **A database that goes away** is :class:`TaskStoreUnavailable` on the
  requests that need it (-32603, saying so); the process goes on, broken
  connections are dropped from the pool and made again on the next call,
  and the listener reconnects. Opening the store needs the database.
"""

import logging
import re
import secrets
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import attrs
import trio

try:
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict
except ImportError as e:  # (without the postgres extra)
    raise ImportError("the PostgreSQL task store needs psycopg 3: pip install 'mcp_ref[postgres]'") from e

from ..basic.utilities.tasks import TaskLimits, TaskRecord, limit_refusal
from .task_store import (
    COLUMNS,
    MUTABLE,
    RESYNC,
    SqlTaskStore,
    TaskChange,
    TaskLimitReached,
    TaskStoreUnavailable,
    TotalCount,
    _Subscribers,
    interrupted,
    record_row,
    row_record,
)

__all__ = ["PostgresTaskStore", "open_postgres_task_store", "split_url"]

log = logging.getLogger("mcp_ref.tasks.pg")

T = TypeVar("T")

#: the first key of the advisory locks the store takes (its second names a requestor)
_LOCK_SPACE = 0x6D6370  # "mcp"
#: the store's clock: the database's, plus an offset (zero but in tests) passed with every statement
_NOW = "(extract(epoch from clock_timestamp()) + %s)"


def _schema(table: sql.Identifier, index: Callable[[str], sql.Identifier]) -> list[sql.Composed]:
    return [
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} ("
            " seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
            " task_id text NOT NULL UNIQUE,"
            " owner text, requestor text, method text NOT NULL, status text NOT NULL, status_message text,"
            " created_at double precision NOT NULL, last_updated_at double precision NOT NULL,"
            " ttl_ms bigint, poll_interval_ms bigint, expires_at double precision,"
            " progress_token text, outcome text, runner text, version integer NOT NULL,"
            " input_requests text, input_responses text)"
        ).format(table),
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (owner, seq)").format(index("by_owner"), table),
        # (a requestor's counts from the index alone)
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (requestor, status, expires_at)").format(
            index("by_requestor"), table
        ),
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (expires_at) WHERE expires_at IS NOT NULL").format(
            index("by_expiry"), table
        ),
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (runner) WHERE status IN ('working', 'input_required')").format(
            index("by_runner"), table
        ),
    ]


class _Statements:
    """The SQL of one table, composed once."""

    def __init__(self, table: str) -> None:
        if not table.replace("_", "").isalnum() or not table[0].isalpha() or len(table) > 48:
            raise ValueError(f"table must be a plain SQL name (letters, digits, _), not {table!r}")
        t = sql.Identifier(table)
        self.table = table
        self.channel = f"{table}_changes"
        self.schema = _schema(t, lambda name: sql.Identifier(f"{table}_{name}"))
        columns = sql.SQL(", ").join(map(sql.Identifier, COLUMNS))
        unexpired = sql.SQL(f"(expires_at IS NULL OR expires_at > {_NOW})")
        self.select = sql.SQL("SELECT {} FROM {} WHERE task_id = %s AND {}").format(columns, t, unexpired)
        self.select_for_update = self.select + sql.SQL(" FOR UPDATE")
        self.owned_by = sql.SQL("SELECT {} FROM {} WHERE owner IS NOT DISTINCT FROM %s AND {} ORDER BY seq").format(
            columns, t, unexpired
        )
        self.counts = sql.SQL(
            "SELECT count(*), count(*) FILTER (WHERE status IN ('working', 'input_required')) FROM {}"
            " WHERE requestor IS NOT DISTINCT FROM %s AND {}"
        ).format(t, unexpired)
        self.total = sql.SQL("SELECT count(*) FROM {} WHERE {}").format(t, unexpired)
        insert = [c for c in COLUMNS if c not in ("seq", "expires_at")]
        self.insert = sql.SQL(
            "INSERT INTO {} ({}, expires_at) VALUES ({}, {} + %s / 1000.0) RETURNING seq, expires_at"
        ).format(
            t,
            sql.SQL(", ").join(map(sql.Identifier, insert)),
            sql.SQL(", ").join(sql.Placeholder() * len(insert)),
            sql.SQL(_NOW),
        )
        self.insert_columns = insert
        self.update = sql.SQL("UPDATE {} SET {} WHERE task_id = %s").format(
            t, sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(c)) for c in MUTABLE)
        )
        self.delete = sql.SQL("DELETE FROM {} WHERE task_id = %s RETURNING version").format(t)
        self.purge = sql.SQL(f"DELETE FROM {{}} WHERE expires_at <= {_NOW} RETURNING task_id, version").format(t)
        self.next_expiry = sql.SQL(f"SELECT min(expires_at) - {_NOW} FROM {{}}").format(t)
        self.count = sql.SQL("SELECT count(*) FROM {}").format(t)
        self.runners = sql.SQL(
            "SELECT DISTINCT runner FROM {} WHERE status IN ('working', 'input_required') AND runner IS NOT NULL"
            " AND runner <> %s"
        ).format(t)
        self.orphans = sql.SQL(
            "SELECT {} FROM {} WHERE runner = %s AND status IN ('working', 'input_required') FOR UPDATE"
        ).format(columns, t)
        self.notify = sql.SQL("SELECT pg_notify(%s, %s)")


def _payload(task_id: str, version: int, status: str | None) -> str:
    return f"{version} {status or '-'} {task_id}"


class _Pool:
    """At most ``size`` connections, each used by one worker thread at a time."""

    def __init__(self, conninfo: str, size: int, acquire_timeout: float, connect: Callable[[], Any]) -> None:
        self.conninfo = conninfo
        self.limiter = trio.CapacityLimiter(size)
        self.acquire_timeout = acquire_timeout
        self._connect = connect
        self._idle: list[Any] = []
        #: the pool's threads, counted apart from trio's default thread limiter (the pool bounds them)
        self._threads = trio.CapacityLimiter(size)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(connection, *args)`` in a worker thread; TaskStoreUnavailable if the database is not there."""
        with trio.move_on_after(self.acquire_timeout) as waited:
            await self.limiter.acquire()
        if waited.cancelled_caught:
            raise TaskStoreUnavailable(f"no database connection free within {self.acquire_timeout:g} s")
        try:
            conn = self._idle.pop() if self._idle else None
            box: list[Any] = [conn]
            try:
                result = await trio.to_thread.run_sync(self._call, box, fn, args, limiter=self._threads)
            except psycopg.OperationalError as e:
                raise TaskStoreUnavailable(_why(e)) from e
            finally:
                conn = box[0]
                if conn is not None and not conn.closed and not conn.broken:
                    self._idle.append(conn)
            return result
        finally:
            self.limiter.release()

    def _call(self, box: list[Any], fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        conn = box[0]
        if conn is None or conn.closed or conn.broken:
            box[0] = conn = self._connect()
        try:
            return fn(conn, *args)
        except psycopg.OperationalError:
            conn.close()  # (broken, or in an unknown state: never handed out again)
            raise

    def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()


def _why(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


class PostgresTaskStore(SqlTaskStore):
    """A :class:`~mcp_ref.session.task_store.TaskStore` in a PostgreSQL table, shared by replicas.

    Build it with :func:`open_postgres_task_store`.
    """

    durable = True
    shared = True

    def __init__(
        self,
        statements: _Statements,
        pool: _Pool,
        runner_key: int,
        clock_offset: Callable[[], float] | None = None,
        sweep_grace: float = 2.0,
    ) -> None:
        self._sql = statements
        self._offset = clock_offset or (lambda: 0.0)
        self._pool = pool
        self._runner_key = runner_key
        #: this process's name in the store: records of tasks it runs carry it, and its advisory lock is held
        #: while it lives
        self.runner = str(runner_key)
        self._subscribers = _Subscribers()
        #: the newest version of each task announced from this process (a notification
        #: of a change we made ourselves comes back: it is not announced twice)
        self._announced: dict[str, int] = {}
        #: tasks of dead runners failed by this process's sweeps
        self.interrupted = 0
        #: how long a runner's lock stays free before its tasks are failed (its listener reconnecting
        #: after a network blip lets go of the lock for a moment: that runner is alive)
        self.sweep_grace = sweep_grace
        #: runner -> when (monotonic) a sweep first found its lock free
        self._suspects: dict[str, float] = {}
        self._total = TotalCount()

    def subscribe(self, callback: Callable[[TaskChange], None]) -> Callable[[], None]:
        """Call ``callback`` (in the trio thread, never blocking) on every change, this process's and the
        other replicas'; returns unsubscribe."""
        return self._subscribers.subscribe(callback)

    def _announce(self, change: TaskChange) -> None:
        if change.task_id == RESYNC:
            pass
        elif change.status is None:
            self._announced.pop(change.task_id, None)
        else:
            if len(self._announced) > 10_000:
                self._announced.clear()  # (a bound: an echo announced twice costs a re-read, nothing more)
            self._announced[change.task_id] = change.version
        self._subscribers.announce(change)

    def _changed(self, record: TaskRecord) -> TaskRecord:
        self._announce(TaskChange(record.task_id, record.version, record.status, record))
        return record

    def _heard(self, payload: str) -> None:
        """A change notified by the database (by any process, this one included)."""
        try:
            version_text, status, task_id = payload.split(" ", 2)
            version = int(version_text)
        except ValueError:
            log.warning("unexpected task notification %r", payload)
            return
        if status != "-" and self._announced.get(task_id, 0) >= version:
            return  # our own change, announced when it was made
        self._announce(TaskChange(task_id, version, None if status == "-" else status))

    # -- the database side (worker threads) ----------------------------------------------------

    def _notify(self, conn: Any, task_id: str, version: int, status: str | None) -> None:
        conn.execute(self._sql.notify, (self._sql.channel, _payload(task_id, version, status)))

    def _db_get(self, conn: Any, task_id: str, skew: float) -> TaskRecord | None:
        row = conn.execute(self._sql.select, (task_id, skew)).fetchone()
        return row_record(row) if row is not None else None

    def _db_create(
        self, conn: Any, record: TaskRecord, limits: TaskLimits, skew: float, total: int | None
    ) -> tuple[TaskRecord, int, bool]:
        """Add the task if the limits allow; the new record, the tasks stored after it, and
        whether that number was counted (``total`` None) or estimated (see TotalCount)."""
        with conn.transaction():
            # (creations of one requestor, on any replica, one at a time: its counts are exact)
            conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_SPACE, record.requestor or ""))
            kept, running = conn.execute(self._sql.counts, (record.requestor, skew)).fetchone()
            counted = total is None
            if total is None:
                total = int(conn.execute(self._sql.total, (skew,)).fetchone()[0])
            why = limit_refusal(limits, kept, running, total)
            if why is not None and not counted:
                total, counted = int(conn.execute(self._sql.total, (skew,)).fetchone()[0]), True
                why = limit_refusal(limits, kept, running, total)
            if why is not None:
                raise TaskLimitReached(why)
            row = record_row(record)
            try:
                seq, expires_at = conn.execute(
                    self._sql.insert, [*(row[c] for c in self._sql.insert_columns), skew, record.ttl_ms]
                ).fetchone()
            except psycopg.errors.UniqueViolation:
                # [basic/utilities/tasks#25] ids are unique among our tasks -- tasks#task-id-requirements
                raise ValueError(f"task id {record.task_id!r} already exists") from None
            self._notify(conn, record.task_id, record.version, record.status)
        return attrs.evolve(record, seq=seq, expires_at=expires_at), total + 1, counted

    def _db_change(self, conn: Any, task_id: str, apply: Callable[[TaskRecord], Any], skew: float) -> tuple[Any, bool]:
        with conn.transaction():
            row = conn.execute(self._sql.select_for_update, (task_id, skew)).fetchone()
            if row is None:
                raise LookupError(f"task {task_id!r} not found")
            record = row_record(row)
            result = apply(record)
            new = result[0] if isinstance(result, tuple) else result
            if new is record:
                return result, False
            values = record_row(new)
            conn.execute(self._sql.update, [*(values[c] for c in MUTABLE), task_id])
            self._notify(conn, task_id, new.version, new.status)
        return result, True

    def _db_delete(self, conn: Any, task_id: str) -> int | None:
        with conn.transaction():
            row = conn.execute(self._sql.delete, (task_id,)).fetchone()
            if row is None:
                return None
            self._notify(conn, task_id, row[0] + 1, None)
        return int(row[0])

    def _db_purge(self, conn: Any, skew: float) -> list[tuple[str, int]]:
        with conn.transaction():
            rows = conn.execute(self._sql.purge, (skew,)).fetchall()
            gone = [(task_id, int(version)) for task_id, version in rows]
            for task_id, version in gone:
                self._notify(conn, task_id, version + 1, None)
        return gone

    def _db_sweep(self, conn: Any, wall: float) -> list[TaskRecord]:
        """Fail the running tasks of runners whose process is gone (their lock is free)."""
        failed: list[TaskRecord] = []
        now = time.monotonic()
        runners = [runner for (runner,) in conn.execute(self._sql.runners, (self.runner,)).fetchall()]
        for gone in set(self._suspects) - set(runners):
            del self._suspects[gone]
        for runner in runners:
            try:
                key = int(runner)
            except ValueError:
                continue
            with conn.transaction():
                # free: nobody holds the runner's lock (held only until commit) ...
                if not conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (key,)).fetchone()[0]:
                    self._suspects.pop(runner, None)
                    continue
                # ... and still free a grace period later: its process is gone, not reconnecting
                first = self._suspects.setdefault(runner, now)
                if now - first < self.sweep_grace:
                    continue
                del self._suspects[runner]
                for row in conn.execute(self._sql.orphans, (runner,)).fetchall():
                    new = interrupted(row_record(row), wall)
                    values = record_row(new)
                    conn.execute(self._sql.update, [*(values[c] for c in MUTABLE), new.task_id])
                    self._notify(conn, new.task_id, new.version, new.status)
                    failed.append(new)
        return failed

    # -- TaskStore -------------------------------------------------------------------------------

    async def _write_change(self, task_id: str, apply: Callable[[TaskRecord], Any]) -> tuple[Any, bool]:
        return await self._pool.run(self._db_change, task_id, apply, self._offset())

    async def create(self, record: TaskRecord, limits: TaskLimits) -> TaskRecord:
        """Add a new task, committed, if ``limits`` allow it (else TaskLimitReached). The store sets ``seq``
        (creation order), ``expires_at`` (the database's clock plus the ttl), ``runner`` (this process) and
        ``version``; the id must be new (ValueError).
        """
        record = attrs.evolve(record, runner=self.runner, version=1)
        now = trio.current_time()
        new, total, counted = await self._pool.run(
            self._db_create, record, limits, self._offset(), self._total.hint(now)
        )
        self._total.created(now, total, counted)
        return self._changed(new)

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task as stored; None if unknown, deleted or past its ttl."""
        return await self._pool.run(self._db_get, task_id, self._offset())

    async def delete(self, task_id: str) -> None:
        """Delete the task (its work, wherever it runs, is stopped as the change is announced)."""
        version = await self._pool.run(self._db_delete, task_id)
        if version is not None:
            self._announce(TaskChange(task_id, version + 1, None))

    async def owned_by(self, owner: str | None) -> list[TaskRecord]:
        """``owner``'s tasks (None: the tasks bound to nobody), in creation order."""
        skew = self._offset()
        rows = await self._pool.run(lambda conn: conn.execute(self._sql.owned_by, (owner, skew)).fetchall())
        return [row_record(row) for row in rows]

    async def next_expiry(self) -> float | None:
        """Seconds until the next task expires (0 if one has), by the database's clock; None: none will."""
        skew = self._offset()
        value = await self._pool.run(lambda conn: conn.execute(self._sql.next_expiry, (skew,)).fetchone()[0])
        return None if value is None else max(0.0, float(value))

    async def purge_expired(self) -> list[str]:
        """Delete the tasks past their ttl (any replica may); their ids."""
        gone = await self._pool.run(self._db_purge, self._offset())
        for task_id, version in gone:
            self._announce(TaskChange(task_id, version + 1, None))
        return [task_id for task_id, _ in gone]

    async def count(self) -> int:
        """How many tasks the table holds (monitoring)."""
        value: int = await self._pool.run(lambda conn: conn.execute(self._sql.count).fetchone()[0])
        return value

    async def sweep(self) -> int:
        """Fail the running tasks of replicas that are gone (done every ``sweep_interval`` too)."""
        failed = await self._pool.run(self._db_sweep, time.time())
        for record in failed:
            self._changed(record)
        if failed:
            self.interrupted += len(failed)
            log.warning("%d task(s) of a server that is gone failed: their work died with it", len(failed))
        return len(failed)

    # -- the listener -------------------------------------------------------------------------

    def _listen(self, connect: Callable[[], Any], stop: threading.Event, connected: Callable[[], None]) -> None:
        """In a worker thread until ``stop``: hold this runner's lock, hand notifications to trio."""
        delay = 0.2
        reconnected = False
        while not stop.is_set():
            try:
                with connect() as conn:
                    # held while this connection lives: other replicas see this runner alive
                    conn.execute("SELECT pg_advisory_lock(%s)", (self._runner_key,))
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._sql.channel)))
                    trio.from_thread.run_sync(connected)
                    if reconnected:
                        # notifications sent while no listener was connected are lost: say so
                        trio.from_thread.run_sync(self._announce, TaskChange(RESYNC, 0, None))
                    reconnected = True
                    delay = 0.2
                    while not stop.is_set():
                        for note in conn.notifies(timeout=0.25):
                            trio.from_thread.run_sync(self._heard, note.payload)
            except psycopg.Error as e:
                if stop.is_set():
                    return
                log.warning("task change listener: %s; reconnecting in %g s", _why(e), delay)
                stop.wait(delay)
                delay = min(delay * 2, 5.0)
            except trio.RunFinishedError:
                return


#: the query parameters of a URL that are mcp_ref's, not libpq's (see split_url)
URL_PARAMETERS = ("table", "sweep")


def _redacted(conninfo: str) -> str:
    """``conninfo`` without its password (for messages)."""
    if not conninfo.startswith(("postgresql://", "postgres://")):
        return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", conninfo)
    parts = urlsplit(conninfo)
    if parts.password is None:
        return conninfo
    return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@", 1)))


def split_url(conninfo: str) -> tuple[str, dict[str, str]]:
    """``conninfo`` for libpq, and the parameters of ours it carried (``table=``, ``sweep=``).

    A URL (``postgresql://user@host/db?table=mcp_tasks&sweep=10``) may carry
    ours in its query beside libpq's (``sslmode=`` ...); a key=value string
    only libpq's. Anything libpq does not know either is a ValueError naming it.
    """
    ours: dict[str, str] = {}
    if conninfo.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(conninfo)
        theirs = []
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key in URL_PARAMETERS:
                ours[key] = value
            else:
                theirs.append((key, value))
        conninfo = urlunsplit(parts._replace(query=urlencode(theirs)))
    try:
        conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError as e:
        raise ValueError(
            f"not a PostgreSQL URL or connection string libpq takes ({_redacted(conninfo)}): {_why(e)}"
            f" (a URL's query may also carry mcp_ref's {', '.join(p + '=' for p in URL_PARAMETERS)})"
        ) from None
    return conninfo, ours


@asynccontextmanager
async def open_postgres_task_store(
    conninfo: str,
    *,
    table: str | None = None,
    pool_size: int = 8,
    connect_timeout: float = 5.0,
    statement_timeout: float = 10.0,
    acquire_timeout: float = 10.0,
    sweep_interval: float | None = None,
    sweep_grace: float = 2.0,
    clock_offset: Callable[[], float] | None = None,
) -> AsyncIterator[PostgresTaskStore]:
    """Open the task table ``table`` (created if missing) in the database at ``conninfo``.

    ``conninfo`` is a libpq connection string or URL (``postgresql://user@host/db``);
    a URL may also give ``table`` and ``sweep_interval`` in its query
    (``?table=mcp_tasks&sweep=10``), as the everything example's ``--task-db`` does.
    By default the table is ``mcp_tasks`` and the sweep runs every 10 s.
    Every process opened on the same database and table shares the tasks.
    Raises ValueError for a URL or parameter libpq does not know, and
    TaskStoreUnavailable (saying why) if the database cannot be reached now.
    ``sweep_grace``: how long another runner's lock must stay free (seen by two sweeps at
    least that far apart) before its running tasks are failed: a listener that reconnects
    lets go of its lock for a moment. ``clock_offset`` (tests): seconds added to the
    database's clock.
    """
    conninfo, ours = split_url(conninfo)
    if "table" in ours:
        if table is not None:
            raise ValueError("the table is given twice: by table= and in the URL")
        table = ours["table"]
    if "sweep" in ours:
        if sweep_interval is not None:
            raise ValueError("the sweep interval is given twice: by sweep_interval= and in the URL (sweep=)")
        try:
            sweep_interval = float(ours["sweep"])
        except ValueError:
            raise ValueError(f"sweep= in the URL is seconds between sweeps, not {ours['sweep']!r}") from None
    table = "mcp_tasks" if table is None else table
    sweep_interval = 10.0 if sweep_interval is None else sweep_interval
    if (
        pool_size < 1
        or min(connect_timeout, statement_timeout, acquire_timeout, sweep_interval) <= 0
        or sweep_grace < 0
    ):
        raise ValueError("pool_size and the timeouts must be positive")
    statements = _Statements(table)
    runner_key = secrets.randbits(62) + 1

    def connect() -> Any:
        return psycopg.connect(
            conninfo,
            autocommit=True,
            connect_timeout=max(1, round(connect_timeout)),
            options=f"-c statement_timeout={round(statement_timeout * 1000)}",
            keepalives=1,
            keepalives_idle=5,
            keepalives_interval=2,
            keepalives_count=3,
            tcp_user_timeout=round((statement_timeout + 5) * 1000),
            application_name=f"mcp_ref tasks {runner_key}",
        )

    pool = _Pool(conninfo, pool_size, acquire_timeout, connect)

    def create_schema(conn: Any) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (_LOCK_SPACE,))  # (replicas starting at once)
            for statement in statements.schema:
                conn.execute(statement)

    try:
        await pool.run(create_schema)
    except TaskStoreUnavailable as e:
        # (nothing goes on the wire yet: the error says why, not only that the store is unavailable)
        raise TaskStoreUnavailable(
            e.detail, message=f"cannot open the task store at {_redacted(conninfo)}: {e.detail}"
        ) from e
    store = PostgresTaskStore(statements, pool, runner_key, clock_offset, sweep_grace)
    stop = threading.Event()
    listening = trio.Event()
    try:
        async with trio.open_nursery() as nursery:

            async def listener() -> None:
                await trio.to_thread.run_sync(
                    store._listen, connect, stop, listening.set, limiter=trio.CapacityLimiter(1)
                )

            async def sweep() -> None:
                try:
                    await store.sweep()
                except TaskStoreUnavailable as e:
                    log.warning("sweeping the tasks of gone replicas: %s", e.detail)

            async def sweeper() -> None:
                while True:
                    await trio.sleep(sweep_interval)
                    await sweep()

            nursery.start_soon(listener, name="mcp task change listener")
            with trio.move_on_after(connect_timeout + 1):
                await listening.wait()  # (this runner's lock is held before it runs any task)
            if not listening.is_set():
                why = f"the task change listener could not connect within {connect_timeout + 1:g} s"
                raise TaskStoreUnavailable(why, message=f"cannot open the task store at {_redacted(conninfo)}: {why}")
            # the first sweep is done before the store is handed out, not in the background: it
            # never runs at a moment the caller cannot see (a test's own sweeps, a cut listener)
            await sweep()
            nursery.start_soon(sweeper, name="mcp task sweeper")
            try:
                yield store
            finally:
                stop.set()
                nursery.cancel_scope.cancel()
    finally:
        stop.set()
        pool.close()
