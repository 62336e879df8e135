"""Where a receiver keeps its tasks: the store interface, and the in-memory store (the default).

Both task flavours use it: the 2025-11-25 core tasks (``tasks/get``,
``tasks/result``, ``tasks/list``, ``tasks/cancel`` on a session) and the
2026-07-28 ``io.modelcontextprotocol/tasks`` extension (``tasks/get``,
``tasks/update``, ``tasks/cancel`` on stateless requests). Implementations:

* :class:`InMemoryTaskStore` (here): one process; tasks die with it.
* :class:`~mcp_ref.session.task_db.SqliteTaskStore`: one process on one file,
  tasks survive a crash and a restart.
* :class:`~mcp_ref.session.task_pg.PostgresTaskStore`: any number of processes
  (replicas) on one database.

The contract every store keeps (``tests/session/test_task_store.py`` runs the
same tests on the three):

* **Durable on return.** :meth:`TaskStore.create` returns once the task is
  stored as durably as the store can (a durable store: committed), so a
  ``CreateTaskResult`` sent after it names a task that a ``tasks/get`` finds,
  whatever happens to the process next.
* **Compare and set.** Every change is checked against the stored state, not
  the caller's copy: a move the lifecycle forbids from the *stored* status
  (a task another process cancelled or failed meanwhile) raises
  :class:`TaskConflict` with the stored record, and a terminal task never
  changes again (but for :meth:`TaskStore.finish` giving a cancelled task the
  outcome its work reached anyway). Nobody overwrites another's result.
* **Limits in the same step.** :meth:`TaskStore.create` counts the requestor's
  tasks and adds the new one atomically (:class:`TaskLimitReached`).
* **Expiry by the store's clock.** A task past its ttl is gone for every read
  (:meth:`TaskStore.get` returns None) from the moment the store's clock says
  so -- the runtime's timers only decide when :meth:`TaskStore.purge_expired`
  deletes the rows.
* **Changes are announced.** Subscribers (:meth:`TaskStore.subscribe`) hear of
  every change in the order it was made, with the new version: the runtime
  wakes ``tasks/result`` waiters with it, and stops the work of a task that
  another process cancelled. A shared store also announces the changes other
  processes make, possibly late or twice (versions tell), and says
  :attr:`TaskStore.shared` so that waiters also re-read now and then.
* **Owners are text.** Owners and requestors are :func:`owner_key` strings, so
  a durable store holds the binding of a task to its user.

Errors of the storage itself (a database that went away) are
:class:`TaskStoreUnavailable`: -32603 on the requests that needed it, the
process goes on.
"""

import abc
import itertools
import json
import secrets
from collections.abc import Callable, Iterator
from typing import Any, Final, Protocol

import attrs
import trio

from ..basic.utilities.tasks import (
    TRANSITIONS,
    TaskLimits,
    TaskRecord,
    is_terminal,
    limit_refusal,
)
from ..errors import ErrorCode, ProtocolError
from ..schema._base import LATEST_LEGACY_REVISION
from ..schema._converter import converter_for, decode
from ..schema.jsonrpc import Error
from ..schema.messages import RESULT_TYPES
from ..schema.tasks import TERMINAL_STATUSES

__all__ = [
    "TaskStore",
    "InMemoryTaskStore",
    "TaskChange",
    "TaskConflict",
    "TaskLimitReached",
    "TaskStoreUnavailable",
    "UNFINISHED",
    "RESYNC",
    "RESTART_MESSAGE",
    "TotalCount",
]

#: the statuses of a task whose work may still run
UNFINISHED: Final = ("working", "input_required")

#: the status message of a task whose work was lost with the process that ran it (true of a
#: SQLite server that restarted and of a replica that died while the others go on)
RESTART_MESSAGE: Final = "the server running it stopped before the task finished"


@attrs.frozen
class TaskChange:
    """A task changed: its new version and status (``status`` None: deleted).

    ``record`` is the new state when the store has it at hand (a change made
    in this process); a change another process made carries only the id,
    version and status, and whoever needs more reads the task.
    """

    task_id: str
    version: int
    status: str | None
    record: TaskRecord | None = None


#: TaskChange.task_id of "changes may have been missed": a shared store's listener reconnected
#: (notifications sent meanwhile are lost); whoever keeps state about tasks reads them again
RESYNC: Final = ""


class TaskConflict(Exception):
    """A change the stored task does not allow (it moved on meanwhile); ``record`` is how it is now."""

    def __init__(self, record: TaskRecord, wanted: str) -> None:
        super().__init__(f"task {record.task_id} is {record.status}: cannot make it {wanted}")
        self.record = record


class TaskLimitReached(ProtocolError):
    """[basic/utilities/tasks#resource-management] a new task past a limit: -32600, naming it."""

    def __init__(self, why: str) -> None:
        super().__init__(f"Invalid Request: {why}; retry later", ErrorCode.INVALID_REQUEST)
        self.why = why


class TaskStoreUnavailable(ProtocolError):
    """The store cannot be reached (a database that went away): -32603 for the request
    that needed it, saying so; the server goes on, and the request may be retried."""

    def __init__(self, detail: str, *, message: str | None = None) -> None:
        # (``message``: where nothing goes on the wire, opening a store, the error says what failed)
        super().__init__(
            message or "Internal error: the task store is unavailable; retry later", ErrorCode.INTERNAL_ERROR
        )
        #: what failed (the store's own words)
        self.detail = detail


class TaskStore(Protocol):
    """Where a receiver keeps its tasks (the contract: this module's docstring)."""

    #: tasks outlive the process (they must then be bound to something that does too)
    durable: bool
    #: other processes change tasks too (their changes may be announced late)
    shared: bool
    #: this process's name in the store: records its running tasks carry it
    runner: str

    def subscribe(self, callback: Callable[[TaskChange], None]) -> Callable[[], None]:
        """Call ``callback`` (in the trio thread, never blocking) on every change; returns unsubscribe."""
        ...

    async def create(self, record: TaskRecord, limits: TaskLimits) -> TaskRecord:
        """Add a new task, durably, if ``limits`` allow it (else TaskLimitReached).

        The store sets ``seq`` (creation order), ``expires_at`` (its clock plus
        the ttl), ``runner`` (itself) and ``version``; the id must be new (ValueError).
        """
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task as stored; None if unknown, deleted or past its ttl."""
        ...

    async def move(
        self, task_id: str, status: str, *, wall: float, message: str | None = None, outcome: Any = None
    ) -> TaskRecord:
        """Move the task to ``status`` from the stored status (TaskConflict if the lifecycle
        forbids it; LookupError if the task is gone), with ``outcome`` when terminal."""
        ...

    async def finish(
        self, task_id: str, status: str, *, wall: float, message: str | None, outcome: Any
    ) -> TaskRecord | None:
        """The work ended with ``outcome``: the task becomes ``status`` unless it is terminal
        already; a task cancelled meanwhile keeps ``cancelled`` but gets the outcome if it has
        none (basic/utilities/tasks#45: the stores enforce it, in ``apply_finish``). None if the
        task is gone."""
        ...

    async def ask(self, task_id: str, requests: dict[str, Any], *, wall: float) -> TaskRecord:
        """Add outstanding input requests (keys new to the task); the task is ``input_required``."""
        ...

    async def answer(self, task_id: str, responses: dict[str, Any], *, wall: float) -> list[str]:
        """Take answers to outstanding requests (other keys are ignored) and return the keys
        taken; once none is outstanding the task is ``working`` again."""
        ...

    async def take_responses(self, task_id: str, keys: list[str]) -> dict[str, Any]:
        """The answers for ``keys`` that arrived, removed from the store (the work has them)."""
        ...

    async def delete(self, task_id: str) -> None:
        """Delete the task (nothing happens if it is gone already)."""

    async def owned_by(self, owner: str | None) -> list[TaskRecord]:
        """``owner``'s tasks (None: the tasks bound to nobody), in creation order."""
        ...

    async def next_expiry(self) -> float | None:
        """Seconds until the next task expires (0 if one has), by the store's clock; None: none will."""
        ...

    async def purge_expired(self) -> list[str]:
        """Delete the tasks past their ttl; their ids."""
        ...

    async def count(self) -> int:
        """How many tasks are stored (monitoring)."""
        ...


class _Subscribers:
    """The callbacks of a store, called in the order changes were made."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[TaskChange], None]] = []

    def subscribe(self, callback: Callable[[TaskChange], None]) -> Callable[[], None]:
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def announce(self, change: TaskChange) -> None:
        for callback in list(self._callbacks):
            callback(change)


class TotalCount:
    """How many tasks a SQL store holds, counted at most once a second.

    Counting reads every row, and every creation checks the limit on all tasks:
    between counts a creation takes the last count plus the creations since
    (deletions are seen at the next count), and a creation that this estimate
    would refuse is counted exactly first. The limit on all tasks is a bound
    on resources, not a quota: an estimate a second old serves it.
    """

    def __init__(self) -> None:
        self.value = 0
        self.stamp = float("-inf")

    def hint(self, now: float) -> int | None:
        """The estimate, or None: count now."""
        return self.value if now - self.stamp < 1.0 else None

    def created(self, now: float, total_after: int, counted: bool) -> None:
        self.value = total_after
        if counted:
            self.stamp = now


def new_runner_id() -> str:
    """A name for this process in a store, unique among its runners."""
    return secrets.token_hex(8)


# -- what each change does to a task: the same rules for every store ---------------------------


def apply_move(record: TaskRecord, status: str, wall: float, message: str | None, outcome: Any) -> TaskRecord:
    """:meth:`TaskStore.move` on the stored ``record``."""
    if status not in TRANSITIONS.get(record.status, ()):
        # [basic/utilities/tasks#28] terminal is final, whoever tries -- tasks#task-status-lifecycle
        raise TaskConflict(record, status)
    if is_terminal(status):
        return record.moved(status, wall, message, outcome=outcome, input_requests=None, input_responses=None)
    return record.moved(status, wall, message)


def apply_finish(record: TaskRecord, status: str, wall: float, message: str | None, outcome: Any) -> TaskRecord:
    """:meth:`TaskStore.finish` on the stored ``record`` (``record`` itself: nothing changes)."""
    if not record.terminal:
        return record.moved(status, wall, message, outcome=outcome, input_requests=None, input_responses=None)
    if record.status == "cancelled" and record.outcome is None and outcome is not None:
        return record.changed(outcome=outcome)
    return record


def apply_ask(record: TaskRecord, requests: dict[str, Any], wall: float) -> TaskRecord:
    """:meth:`TaskStore.ask` on the stored ``record``."""
    if record.terminal:
        raise TaskConflict(record, "input_required")
    # [ext-tasks:tasks#33, #34] a key names one request for the task's whole life: a key still
    # outstanding, or answered and not yet taken by the work, is not given to another request
    # (the runtime makes keys that are never reused) -- tasks#task-update-requests
    taken = set(record.input_requests or ()) | set(record.input_responses or ())
    reused = sorted(taken.intersection(requests))
    if reused:
        raise ValueError(f"input request keys already used by task {record.task_id}: {', '.join(reused)}")
    outstanding = {**(record.input_requests or {}), **requests}
    if record.status == "working":
        return record.moved("input_required", wall, None, input_requests=outstanding)
    return record.changed(input_requests=outstanding, last_updated_at=wall)


def apply_answer(record: TaskRecord, responses: dict[str, Any], wall: float) -> tuple[TaskRecord, list[str]]:
    """:meth:`TaskStore.answer` on the stored ``record``: the new record and the keys taken."""
    outstanding = dict(record.input_requests or {})
    taken = [key for key in responses if key in outstanding]
    if not taken or record.terminal:
        return record, []
    answered = dict(record.input_responses or {})
    for key in taken:
        del outstanding[key]
        answered[key] = responses[key]
    if outstanding or record.status != "input_required":
        return record.changed(input_requests=outstanding, input_responses=answered, last_updated_at=wall), taken
    return record.moved("working", wall, None, input_requests=None, input_responses=answered), taken


def apply_take(record: TaskRecord, keys: list[str]) -> tuple[TaskRecord, dict[str, Any]]:
    """:meth:`TaskStore.take_responses` on the stored ``record``."""
    answered = dict(record.input_responses or {})
    taken = {key: answered.pop(key) for key in keys if key in answered}
    if not taken:
        return record, {}
    return record.changed(input_responses=answered or None), taken


# -- records as rows (the SQL stores) ------------------------------------------------------------

#: the columns of a task row, in the order :func:`record_row` gives them
COLUMNS: Final = (
    "task_id",
    "owner",
    "requestor",
    "method",
    "status",
    "status_message",
    "created_at",
    "last_updated_at",
    "ttl_ms",
    "poll_interval_ms",
    "expires_at",
    "progress_token",
    "outcome",
    "runner",
    "version",
    "input_requests",
    "input_responses",
    "seq",
)
#: the columns a change may write (all but the id, the binding, the method, the creation and the order)
MUTABLE: Final = (
    "status",
    "status_message",
    "last_updated_at",
    "ttl_ms",
    "poll_interval_ms",
    "expires_at",
    "outcome",
    "runner",
    "version",
    "input_requests",
    "input_responses",
)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def outcome_text(outcome: Any) -> str | None:
    """A task's outcome as JSON text: ``{"error": ...}`` or ``{"result": ...}`` (None: none yet)."""
    if outcome is None:
        return None
    if isinstance(outcome, Error):
        return _json({"error": {"code": outcome.code, "message": outcome.message, "data": outcome.data}})
    # (encoded for the newest revision, which has every field; decoding is tolerant)
    return _json({"result": converter_for(LATEST_LEGACY_REVISION).unstructure(outcome)})


def outcome_of(text: str | None, method: str) -> Any:
    if text is None:
        return None
    value = json.loads(text)
    if "error" in value:
        error = value["error"]
        return Error(code=error["code"], message=error["message"], data=error.get("data"))
    result_type = RESULT_TYPES.get(method)
    return decode(value["result"], result_type) if result_type is not None else value["result"]


def record_row(record: TaskRecord) -> dict[str, Any]:
    """``record`` as a row: JSON text for the token, the outcome and the input maps."""
    return {
        "task_id": record.task_id,
        "owner": record.owner,
        "requestor": record.requestor,
        "method": record.method,
        "status": record.status,
        "status_message": record.status_message,
        "created_at": record.created_at,
        "last_updated_at": record.last_updated_at,
        "ttl_ms": record.ttl_ms,
        "poll_interval_ms": record.poll_interval_ms,
        "expires_at": record.expires_at,
        "progress_token": _json(record.progress_token),
        "outcome": outcome_text(record.outcome),
        "runner": record.runner,
        "version": record.version,
        "input_requests": _json(record.input_requests),
        "input_responses": _json(record.input_responses),
        "seq": record.seq,
    }


def row_record(row: tuple[Any, ...] | list[Any]) -> TaskRecord:
    """A row of :data:`COLUMNS` as a record."""
    (
        task_id,
        owner,
        requestor,
        method,
        status,
        message,
        created,
        updated,
        ttl,
        poll,
        expires,
        token,
        outcome,
        runner,
        version,
        requests,
        responses,
        seq,
    ) = row
    return TaskRecord(
        task_id=task_id,
        owner=owner,
        method=method,
        status=status,
        created_at=float(created),
        last_updated_at=float(updated),
        ttl_ms=ttl,
        poll_interval_ms=poll,
        expires_at=None if expires is None else float(expires),
        status_message=message,
        progress_token=None if token is None else json.loads(token),
        outcome=outcome_of(outcome, method),
        seq=seq,
        requestor=requestor,
        runner=runner,
        version=version,
        input_requests=None if requests is None else json.loads(requests),
        input_responses=None if responses is None else json.loads(responses),
    )


class SqlTaskStore(abc.ABC):
    """The changes a store keeping rows makes the same way, over one compare-and-set step.

    :class:`~mcp_ref.session.task_db.SqliteTaskStore` and
    :class:`~mcp_ref.session.task_pg.PostgresTaskStore` each say how to read a
    stored task, apply a rule to it and write the result in one transaction
    (:meth:`_write_change`) and how to announce a new record (:meth:`_changed`);
    the rules are the ones every store shares (:func:`apply_move` ...).
    """

    @abc.abstractmethod
    async def _write_change(self, task_id: str, apply: Callable[[TaskRecord], Any]) -> tuple[Any, bool]:
        """In one transaction: read the stored task, ``apply`` the rule to it, write what it returns.

        ``apply`` returns the new record (the same one: no change) or (new record,
        answer). Returns what it returned and whether the task changed; LookupError
        when the task is not there (or past its ttl).
        """

    @abc.abstractmethod
    def _changed(self, record: TaskRecord) -> TaskRecord:
        """Announce ``record``, the task as this process just changed it; returns it."""

    async def _change(self, task_id: str, apply: Callable[[TaskRecord], Any]) -> Any:
        """Apply a change in the store; announce the new record if the task changed."""
        result, changed = await self._write_change(task_id, apply)
        if changed:
            self._changed(result[0] if isinstance(result, tuple) else result)
        return result

    async def move(
        self, task_id: str, status: str, *, wall: float, message: str | None = None, outcome: Any = None
    ) -> TaskRecord:
        """Move the task to ``status`` from the stored status (TaskConflict if the lifecycle forbids it; LookupError if
        the task is gone), with ``outcome`` when terminal.
        """
        new: TaskRecord = await self._change(task_id, lambda r: apply_move(r, status, wall, message, outcome))
        return new

    async def finish(
        self, task_id: str, status: str, *, wall: float, message: str | None, outcome: Any
    ) -> TaskRecord | None:
        """The work ended with ``outcome``: the task becomes ``status`` unless it is terminal already; a task cancelled
        meanwhile keeps ``cancelled`` but gets the outcome if it has none ([basic/utilities/tasks#45]). None if the
        task is gone.
        """
        try:
            new: TaskRecord = await self._change(task_id, lambda r: apply_finish(r, status, wall, message, outcome))
        except LookupError:
            return None
        return new

    async def ask(self, task_id: str, requests: dict[str, Any], *, wall: float) -> TaskRecord:
        """Add outstanding input requests (keys new to the task); the task is ``input_required``."""
        new: TaskRecord = await self._change(task_id, lambda r: apply_ask(r, requests, wall))
        return new

    async def answer(self, task_id: str, responses: dict[str, Any], *, wall: float) -> list[str]:
        """Take answers to outstanding requests (other keys are ignored) and return the keys taken; once none is
        outstanding the task is ``working`` again.
        """
        _, taken = await self._change(task_id, lambda r: apply_answer(r, responses, wall))
        return list(taken)

    async def take_responses(self, task_id: str, keys: list[str]) -> dict[str, Any]:
        """The answers for ``keys`` that arrived, removed from the store (the work has them)."""
        try:
            _, taken = await self._change(task_id, lambda r: apply_take(r, keys))
        except LookupError:
            return {}
        return dict(taken)


def interrupted(record: TaskRecord, wall: float) -> TaskRecord:
    """A task whose work died with the process that ran it: failed, saying so, and its
    ``tasks/result`` an error saying the same (nothing could resume the work)."""
    error = Error(code=ErrorCode.INTERNAL_ERROR, message=f"Task interrupted: {RESTART_MESSAGE}")
    return apply_finish(record, "failed", wall, RESTART_MESSAGE, error)


class InMemoryTaskStore:
    """The default store: a dict, in creation order, indexed by owner and requestor.

    Its clock is trio's (``clock``), so ttls are tested on ``autojump_clock``.
    Every change makes a new record (records are snapshots); the indexes keep a
    creation's limit check (every task-augmented request) from reading every task.
    """

    durable = False
    shared = False

    def __init__(self, *, clock: Callable[[], float] = trio.current_time) -> None:
        #: the store's clock (seconds), for the tasks' time to live
        self.clock = clock
        #: this process's name in the store: records of tasks it runs carry it
        self.runner = new_runner_id()
        self._tasks: dict[str, TaskRecord] = {}
        #: owner -> its tasks (task id -> None), in creation order
        self._owned: dict[str | None, dict[str, None]] = {}
        #: requestor -> its task ids, and those not terminal
        self._kept: dict[str | None, set[str]] = {}
        self._unfinished: dict[str | None, set[str]] = {}
        self._seq = itertools.count(1)
        self._subscribers = _Subscribers()

    def subscribe(self, callback: Callable[[TaskChange], None]) -> Callable[[], None]:
        """Call ``callback`` (in the trio thread, never blocking) on every change; returns unsubscribe."""
        return self._subscribers.subscribe(callback)

    # -- the indexes ------------------------------------------------------------------------

    def _index(self, record: TaskRecord) -> None:
        task_id = record.task_id
        self._tasks[task_id] = record
        self._owned.setdefault(record.owner, {})[task_id] = None
        self._kept.setdefault(record.requestor, set()).add(task_id)
        unfinished = self._unfinished.setdefault(record.requestor, set())
        if record.status in TERMINAL_STATUSES:
            unfinished.discard(task_id)
        else:
            unfinished.add(task_id)

    def _unindex(self, record: TaskRecord) -> None:
        task_id = record.task_id
        del self._tasks[task_id]
        owned = self._owned[record.owner]
        del owned[task_id]
        if not owned:
            del self._owned[record.owner]
        kept = self._kept[record.requestor]
        kept.discard(task_id)
        self._unfinished[record.requestor].discard(task_id)
        if not kept:
            del self._kept[record.requestor], self._unfinished[record.requestor]

    def _live(self, task_id: str) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is not None and record.expires_at is not None and record.expires_at <= self.clock():
            return None  # past its ttl: gone for every reader, before the purge deletes it
        return record

    def _existing(self, task_id: str) -> TaskRecord:
        record = self._live(task_id)
        if record is None:
            raise LookupError(f"task {task_id!r} not found")
        return record

    def _store(self, record: TaskRecord) -> TaskRecord:
        self._index(record)
        self._subscribers.announce(TaskChange(record.task_id, record.version, record.status, record))
        return record

    # -- TaskStore ----------------------------------------------------------------------------

    def counts(self, requestor: str | None) -> tuple[int, int]:
        """How many tasks ``requestor`` has kept, and how many of them are not terminal."""
        kept = self._kept.get(requestor)
        return (len(kept), len(self._unfinished[requestor])) if kept is not None else (0, 0)

    async def create(self, record: TaskRecord, limits: TaskLimits) -> TaskRecord:
        """Add a new task, durably, if ``limits`` allow it (else TaskLimitReached). The store sets ``seq`` (creation
        order), ``expires_at`` (its clock plus the ttl), ``runner`` (itself) and ``version``; the id must be new
        (ValueError).
        """
        if record.task_id in self._tasks:
            # [basic/utilities/tasks#25] ids are unique among our tasks -- tasks#task-id-requirements
            raise ValueError(f"task id {record.task_id!r} already exists")
        kept, running = self.counts(record.requestor)
        why = limit_refusal(limits, kept, running, len(self._tasks))
        if why is not None and self._purge(self.clock()):
            # expired tasks count for nothing, purged or not
            kept, running = self.counts(record.requestor)
            why = limit_refusal(limits, kept, running, len(self._tasks))
        if why is not None:
            raise TaskLimitReached(why)
        ttl = record.ttl_ms
        record = attrs.evolve(
            record,
            seq=next(self._seq),
            expires_at=None if ttl is None else self.clock() + ttl / 1000,
            runner=self.runner,
            version=1,
        )
        return self._store(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task as stored; None if unknown, deleted or past its ttl."""
        return self._live(task_id)

    async def move(
        self, task_id: str, status: str, *, wall: float, message: str | None = None, outcome: Any = None
    ) -> TaskRecord:
        """Move the task to ``status`` from the stored status (TaskConflict if the lifecycle forbids it; LookupError if
        the task is gone), with ``outcome`` when terminal.
        """
        return self._store(apply_move(self._existing(task_id), status, wall, message, outcome))

    async def finish(
        self, task_id: str, status: str, *, wall: float, message: str | None, outcome: Any
    ) -> TaskRecord | None:
        """The work ended with ``outcome``: the task becomes ``status`` unless it is terminal already; a task cancelled
        meanwhile keeps ``cancelled`` but gets the outcome if it has none ([basic/utilities/tasks#45]). None if the
        task is gone.
        """
        record = self._live(task_id)
        if record is None:
            return None
        new = apply_finish(record, status, wall, message, outcome)
        return self._store(new) if new is not record else record

    async def ask(self, task_id: str, requests: dict[str, Any], *, wall: float) -> TaskRecord:
        """Add outstanding input requests (keys new to the task); the task is ``input_required``."""
        return self._store(apply_ask(self._existing(task_id), requests, wall))

    async def answer(self, task_id: str, responses: dict[str, Any], *, wall: float) -> list[str]:
        """Take answers to outstanding requests (other keys are ignored) and return the keys taken; once none is
        outstanding the task is ``working`` again.
        """
        record = self._existing(task_id)
        new, taken = apply_answer(record, responses, wall)
        if new is not record:
            self._store(new)
        return taken

    async def take_responses(self, task_id: str, keys: list[str]) -> dict[str, Any]:
        """The answers for ``keys`` that arrived, removed from the store (the work has them)."""
        record = self._live(task_id)
        if record is None:
            return {}
        new, taken = apply_take(record, keys)
        if new is not record:
            self._store(new)
        return taken

    def _delete(self, task_id: str) -> None:
        record = self._tasks.get(task_id)
        if record is not None:
            self._unindex(record)
            self._subscribers.announce(TaskChange(task_id, record.version + 1, None))

    def _purge(self, now: float) -> list[str]:
        expired = [r.task_id for r in self._tasks.values() if r.expires_at is not None and r.expires_at <= now]
        for task_id in expired:
            self._delete(task_id)
        return expired

    async def delete(self, task_id: str) -> None:
        """Delete the task (nothing happens if it is gone already)."""
        self._delete(task_id)

    async def owned_by(self, owner: str | None) -> list[TaskRecord]:
        """``owner``'s tasks (None: the tasks bound to nobody), in creation order."""
        owned = self._owned.get(owner)
        if owned is None:
            return []
        return [r for r in (self._live(task_id) for task_id in owned) if r is not None]

    async def next_expiry(self) -> float | None:
        """Seconds until the next task expires (0 if one has), by the store's clock; None: none will."""
        deadlines = [r.expires_at for r in self._tasks.values() if r.expires_at is not None]
        return max(0.0, min(deadlines) - self.clock()) if deadlines else None

    async def purge_expired(self) -> list[str]:
        """Delete the tasks past their ttl; their ids."""
        return self._purge(self.clock())

    async def count(self) -> int:
        """How many tasks are stored (monitoring)."""
        return len(self._tasks)

    def __iter__(self) -> Iterator[TaskRecord]:
        """Every task kept, expired or not (tests and monitoring)."""
        return iter(list(self._tasks.values()))

    def __len__(self) -> int:
        return len(self._tasks)
