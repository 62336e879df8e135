"""The tasks runtime (basic/utilities/tasks): receivers here, requestors re-exported.

Receiver side: a :class:`TaskManager` runs task work in a nursery the
application owns -- tasks outlive the request that created them, never the
application -- one CancelScope per task, its TTL as a deadline, ``tasks/result``
waiting on an event::

    async with trio.open_nursery() as nursery:
        server = Server("demo")
        server.enable_tasks(nursery)            # or TaskManager(nursery, ...)
        ...

Requestor side (:mod:`mcp_ref.session.task_requestor`, re-exported here):
:func:`start_task` (``ClientSession.call_tool_as_task``,
``RequestContext.request_task``) sends a task-augmented request and returns a
:class:`TaskHandle` to poll, wait for, fetch or cancel.

The chapter's rules (status table, records, store, ttl, rate limit, polling)
are sans-IO in :mod:`mcp_ref.basic.utilities.tasks`; this module is the part
that needs trio. It imports :mod:`mcp_ref.session.core` (a task's context is a
request context); core never imports it.
"""

import logging
import math
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Literal

import attrs
import trio

from ..basic.utilities.progress import HOLD_FIRST, SEND, ProgressPace
from ..basic.utilities.tasks import (
    INITIAL_STATUS,
    RateLimiter,
    TaskLimits,
    TaskNotFound,
    TaskRecord,
    check_cancellable,
    grant_ttl,
    new_task_id,
    owner_key,
    page_of_tasks,
    relate_params,
    related_task_meta,
    status_notification,
    task_payload,
    work_outcome,
)
from ..errors import (
    ConnectionClosed,
    ErrorCode,
    MCPError,
    ProtocolError,
    RequestCancelled,
)
from ..schema.jsonrpc import Error, RequestId
from ..schema.lifecycle import (
    ClientTaskElicitationRequests,
    ClientTaskRequestsCapability,
    ClientTaskSamplingRequests,
    ClientTasksCapability,
    ServerTaskRequestsCapability,
    ServerTasksCapability,
    ServerTaskToolsRequests,
)
from ..schema.pagination import PaginatedRequestParams
from ..schema.tasks import (
    CancelTaskRequestParams,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskPayloadRequestParams,
    GetTaskPayloadResult,
    GetTaskRequestParams,
    GetTaskResult,
    ListTasksResult,
    TaskMetadata,
)
from .core import RequestContext, Session
from .task_requestor import TaskCancelled, TaskFailed, TaskHandle, list_tasks, start_task
from .task_store import (
    RESYNC,
    InMemoryTaskStore,
    TaskChange,
    TaskConflict,
    TaskLimitReached,
    TaskStore,
    TaskStoreUnavailable,
)

__all__ = [
    "TaskConfig",
    "TaskManager",
    "TaskContext",
    "TaskHandle",
    "TaskFailed",
    "TaskCancelled",
    "start_task",
    "list_tasks",
]

log = logging.getLogger("mcp_ref.tasks")

Binding = Literal["session", "none"] | Callable[[Session], Hashable]
Work = Callable[[RequestContext], Awaitable[Any]]


async def store_outcome(
    store: TaskStore,
    task_id: str,
    status: str,
    message: str | None,
    outcome: Any,
    *,
    ttl_ms: int | None,
    wall_clock: Callable[[], float],
    retry: bool,
) -> None:
    """Store how a task's work ended; if the store is unavailable (a database that went away),
    try again (with ``retry``) until the task's ttl is over: a result is not given up while it
    could still be kept, and it lands once the store is back. Shared by the 2025 core tasks and
    the tasks extension (mcp_ref.ext.tasks)."""
    delay = 0.5
    deadline = trio.current_time() + (ttl_ms / 1000 if ttl_ms is not None else 3600.0)
    while True:
        try:
            # a task cancelled meanwhile stays cancelled (the store never overwrites a terminal status)
            await store.finish(task_id, status, wall=wall_clock(), message=message, outcome=outcome)
            return
        except TaskStoreUnavailable as e:
            if not retry or trio.current_time() + delay > deadline:
                log.error("task %s: its outcome (%s) could not be stored: %s", task_id, status, e.detail)
                return
            log.warning("task %s: storing its outcome failed (%s); again in %g s", task_id, e.detail, delay)
            await trio.sleep(delay)
            delay = min(delay * 2, 30.0)


@attrs.frozen(kw_only=True)
class TaskConfig:
    """Receiver limits and policy (documented in spec_notes/basic/utilities/tasks.md).

    ``default_ttl_ms`` applies when the requestor asks for none; a requested
    ttl is capped at ``max_ttl_ms`` (tasks#ttl-and-resource-management);
    ``None`` means unlimited and is only granted with ``allow_unlimited_ttl``.
    ``rate_limit``: task operations (create, get, result, list, cancel) per
    second per requestor, with bursts of ``rate_burst`` (tasks#80); over it an
    operation waits for its turn, and is refused (-32600) if that would take
    more than ``rate_max_wait`` seconds. ``None`` disables the limiter.
    ``binding``: whose tasks are whose -- "session" (the default: a task
    belongs to the session that created it, right for stdio; on a server with
    auth, to the authenticated user, whichever session they use), a function
    mapping a session to its auth identity (Streamable HTTP with auth), or
    "none" (anyone holding the id; then ``tasks/list`` is not declared unless
    ``list_tasks=True``, tasks#security-considerations).
    ``max_tasks_per_requestor``: tasks running at once per requestor;
    ``max_stored_tasks_per_requestor``: tasks kept per requestor, finished or
    not (finished ones are kept until their ttl for tasks/result), and
    ``max_stored_tasks`` in all (with ``binding="none"`` requestors cannot
    be told apart: all of them count as one). Past any of them a new task is
    refused with -32600 (tasks#resource-management).
    """

    default_ttl_ms: int | None = 3_600_000
    max_ttl_ms: int = 86_400_000
    allow_unlimited_ttl: bool = False
    #: the ``pollInterval`` suggested to requestors (None: none suggested)
    poll_interval_ms: int | None = 1_000
    max_tasks_per_requestor: int = 100
    max_stored_tasks_per_requestor: int = 1000
    max_stored_tasks: int = 10_000
    #: whether requestors are sent ``notifications/tasks/status``
    status_notifications: bool = True
    binding: Binding = "session"
    #: whether ``tasks/list`` is offered (None: when tasks are bound to their requestor)
    list_tasks: bool | None = None
    #: tasks per page of ``tasks/list``
    page_size: int = 50
    rate_limit: float | None = 50.0
    rate_burst: int = 100
    rate_max_wait: float = 10.0

    def __attrs_post_init__(self) -> None:
        limits = ("max_ttl_ms", "max_tasks_per_requestor", "max_stored_tasks_per_requestor", "max_stored_tasks")
        if any(getattr(self, name) < 1 for name in limits) or self.page_size < 1:
            raise ValueError(f"{', '.join(limits)} and page_size must be positive")
        if (self.rate_limit is not None and not self.rate_limit > 0) or self.rate_burst < 1 or self.rate_max_wait < 0:
            raise ValueError("rate_limit must be positive (or None), rate_burst at least 1, rate_max_wait >= 0")
        if self.default_ttl_ms is None and not self.allow_unlimited_ttl:
            raise ValueError("default_ttl_ms=None (unlimited) needs allow_unlimited_ttl=True")


class _Who:
    """The requestor of a task operation, for the audit log; formatted only if logged."""

    __slots__ = ("manager", "session")

    def __init__(self, manager: "TaskManager", session: Session) -> None:
        self.manager = manager
        self.session = session

    def __str__(self) -> str:
        info = self.session.connection.peer_info
        where = f"session {id(self.session):x} ({info.name if info is not None else 'not initialised'})"
        binding = self.manager.config.binding
        if callable(binding) or self.session.principal is not None:
            # [basic/utilities/tasks#82] the auth context, when there is one
            identity = binding(self.session) if callable(binding) else self.session.principal
            return f"{identity!r} via {where}"
        return where


@attrs.define(eq=False)
class _Live:
    """Runtime state of a task whose work runs in this process."""

    #: the task as last stored (kept current by the store's change announcements)
    record: TaskRecord
    #: the session that created the task
    session: Session
    scope: trio.CancelScope
    #: set once the task is terminal (or gone): its work is over for its requestor
    done: trio.Event
    #: the tasks/result requests waiting for this task, oldest first: (session, request id)
    waiters: list[tuple[Session, RequestId]] = attrs.Factory(list)
    #: set (and replaced) whenever a tasks/result request starts waiting
    waiter_arrived: trio.Event = attrs.Factory(trio.Event)
    #: requests of the task waiting for the requestor (input_required while > 0)
    inputs: int = 0

    def add_waiter(self, waiter: tuple[Session, RequestId]) -> None:
        self.waiters.append(waiter)
        self.waiter_arrived.set()
        self.waiter_arrived = trio.Event()

    def waiting_requestor(self) -> tuple[Session, RequestId] | None:
        """The newest tasks/result request still waiting on an open session."""
        for waiter in reversed(self.waiters):
            if not waiter[0].closed.is_set():
                return waiter
        return None

    async def requestor(self) -> tuple[Session, RequestId]:
        """Wait for a tasks/result request to deliver the task's input requests on."""
        while True:
            waiter = self.waiting_requestor()
            if waiter is not None:
                return waiter
            await self.waiter_arrived.wait()


#: how long a write of a task's final state may hold up a shutdown (seconds)
_SHUTDOWN_WRITE = 5.0
#: a shared store's changes may be announced late or lost (a reconnect): waiters re-read this often (s)
_RECHECK = 2.0
#: the longest sleep of the expiry loop on a shared store (other replicas add tasks too)
_SHARED_EXPIRY_CHECK = 60.0


class TaskManager:
    """Runs tasks for one side of any number of sessions."""

    def __init__(
        self,
        nursery: trio.Nursery,
        *,
        store: TaskStore | None = None,
        config: TaskConfig | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        #: where the tasks run (it outlives every session)
        self.nursery = nursery
        #: where the tasks are kept
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        #: the TaskConfig (binding, limits, time to live)
        self.config = config or TaskConfig()
        cfg = self.config
        #: how many tasks a requestor may have running and stored, and all together
        self.limits = TaskLimits(cfg.max_tasks_per_requestor, cfg.max_stored_tasks_per_requestor, cfg.max_stored_tasks)
        #: seconds since the epoch, for the tasks' timestamps
        self.wall_clock = wall_clock
        self._live: dict[str, _Live] = {}
        #: monitoring counters (tasks#81, #82): created, completed, failed, cancelled,
        #: expired, get, result, list, cancel, not-found, refused:limit ...
        self.stats: Counter[str] = Counter()
        self._limiter = RateLimiter(cfg.rate_limit, cfg.rate_burst, cfg.rate_max_wait) if cfg.rate_limit else None
        #: sessions whose closing is watched: their owner keys, rate-limit buckets and session-bound tasks go
        self._watched: set[Session] = set()
        #: a session's owner and requestor keys (computed once; a random key for an unauthenticated session)
        self._keys: dict[Session, tuple[str | None, str | None]] = {}
        #: the tasks bound to a session (binding="session" without auth): deleted when it closes
        self._session_tasks: dict[Session, set[str]] = {}
        #: task id -> an event set at its next change (tasks/result waiters)
        self._changed: dict[str, trio.Event] = {}
        self._expiry_changed = trio.Event()
        #: when the expiry loop wakes next (inf: no task expires)
        self._expiry_deadline = -math.inf
        self._expiry_started = False
        self.store.subscribe(self._on_change)
        if self.store.durable or self.store.shared:
            self._ensure_expiry_loop()  # tasks from before a restart, or of other replicas, expire too

    # -- policy --------------------------------------------------------------------------

    @property
    def binds_requestors(self) -> bool:
        """Whether each task belongs to who created it (every ``binding`` but ``"none"``): others can neither see nor
        reach it.
        """
        return self.config.binding != "none"

    @property
    def lists_tasks(self) -> bool:
        # [basic/utilities/tasks#77] no tasks/list without requestor binding -- tasks#task-isolation-and-access-control
        """Whether ``tasks/list`` is offered (never without requestor binding)."""
        return self.config.list_tasks if self.config.list_tasks is not None else self.binds_requestors

    def _keys_of(self, session: Session) -> tuple[str | None, str | None]:
        keys = self._keys.get(session)
        if keys is None:
            binding = self.config.binding
            principal = session.principal
            # a session without an identity gets a random key, never reused (an id() would be)
            own = owner_key(("principal", principal) if principal is not None else ("session", new_task_id()))
            if binding == "session":
                # [basic/utilities/tasks#74] an authorization context, when there is one, owns the task:
                # any session of that user reaches it (in any process), no session of another user does
                owner = requestor = own
            elif binding == "none":
                # anyone holding the id; quotas still count per user (or per session without auth)
                owner, requestor = None, own
            else:
                # [basic/utilities/tasks#74] the application's identity of the requestor
                owner = requestor = owner_key(binding(session))
            keys = self._keys[session] = (owner, requestor)
            self._watch(session)  # the keys go when the session does
        return keys

    def owner_of(self, session: Session) -> str | None:
        """Who ``session``'s tasks belong to, as stored (an :func:`owner_key`; None: nobody)."""
        return self._keys_of(session)[0]

    def requestor_of(self, session: Session) -> str | None:
        """Whose quota and rate limit ``session``'s task operations count against."""
        return self._keys_of(session)[1]

    def holds_tasks_for(self, session: Session) -> bool:
        """Whether tasks bound to ``session`` alone are kept (they go when it closes)."""
        return bool(self._session_tasks.get(session))

    def server_capability(self, tool_tasks: bool) -> ServerTasksCapability:
        """The ``tasks`` capability a server with this manager declares."""
        return ServerTasksCapability(
            list={} if self.lists_tasks else None,
            cancel={},
            requests=ServerTaskRequestsCapability(tools=ServerTaskToolsRequests(call={})) if tool_tasks else None,
        )

    def client_capability(self, sampling: bool, elicitation: bool) -> ClientTasksCapability:
        """The ``tasks`` capability a client with this manager declares, for the requests it answers."""
        requests = ClientTaskRequestsCapability(
            sampling=ClientTaskSamplingRequests(create_message={}) if sampling else None,
            elicitation=ClientTaskElicitationRequests(create={}) if elicitation else None,
        )
        return ClientTasksCapability(list={} if self.lists_tasks else None, cancel={}, requests=requests)

    # -- rate limiting ---------------------------------------------------------------------------

    async def _throttle(self, ctx: RequestContext) -> None:
        """[basic/utilities/tasks#80] at most ``rate_limit`` task operations a second per requestor.

        Over the limit an operation waits for its token (throttling loses
        nothing); if that would take more than ``rate_max_wait`` it is refused
        with -32600 at once.
        """
        limiter = self._limiter
        if limiter is None:
            return
        # per requestor: its identity, or without one its session (whose bucket goes when it closes)
        delay = limiter.delay(self.requestor_of(ctx.session), trio.current_time())
        if delay is None:
            self.stats["refused:rate"] += 1
            log.warning("%s by %s refused: over the task rate limit", ctx.method, _Who(self, ctx.session))
            raise ProtocolError(
                f"Invalid Request: too many task operations (limit {limiter.rate:g}/s); retry later",
                ErrorCode.INVALID_REQUEST,
            )
        if delay > 0:
            self.stats["throttled"] += 1
            await trio.sleep(delay)

    # -- receiver: creating and running ---------------------------------------------------------

    async def run_task(self, ctx: RequestContext, work: Work) -> CreateTaskResult:
        """Accept a task-augmented request: store it (durably), start ``work`` and answer."""
        await self._throttle(ctx)
        session = ctx.session
        owner, requestor = self._keys_of(session)
        task_meta: TaskMetadata = ctx.params.task
        ttl = grant_ttl(task_meta.ttl, self.config.default_ttl_ms, self.config.max_ttl_ms)
        wall = self.wall_clock()
        record = TaskRecord(
            task_id=new_task_id(),
            owner=owner,
            method=ctx.method,
            status=INITIAL_STATUS,  # [basic/utilities/tasks#26] tasks begin working
            created_at=wall,
            last_updated_at=wall,
            ttl_ms=ttl,
            poll_interval_ms=self.config.poll_interval_ms,
            expires_at=None,
            progress_token=ctx.progress_token,
            requestor=requestor,
        )
        try:
            # [basic/utilities/tasks#resource-management] the limits are checked by the store, in the
            # same step as the task is added; what it returns is stored as durably as it stores anything
            record = await self.store.create(record, self.limits)
        except TaskLimitReached as refused:
            self.stats["refused:limit"] += 1
            # [basic/utilities/tasks#81] an alert: a requestor (or the receiver) at its limit
            log.warning("task refused for %s: %s", _Who(self, session), refused.why)
            raise
        live = _Live(record=record, session=session, scope=trio.CancelScope(), done=trio.Event())
        self._live[record.task_id] = live
        self.stats["created"] += 1
        # [basic/utilities/tasks#82] creation, with who asked
        log.info("task %s created for %s by %s (ttl %s ms)", record.task_id, ctx.method, _Who(self, session), ttl)
        self._ensure_expiry_loop()
        if ttl is not None and trio.current_time() + ttl / 1000 < self._expiry_deadline:
            # the expiry loop sleeps past this task's end: it looks again (with one ttl for
            # all, a new task ends after the others, and no task creation reads the store)
            self._expiry_changed.set()
        if self._bound_to_session(session):
            self._session_tasks.setdefault(session, set()).add(record.task_id)
        tctx = TaskContext(self, live, ctx)
        self.nursery.start_soon(self._run, live, work, tctx, name=f"mcp task {record.task_id}")
        # [basic/utilities/tasks#43, #44] CreateTaskResult once stored -- tasks#result-retrieval
        return CreateTaskResult(task=record.to_task())

    def _bound_to_session(self, session: Session) -> bool:
        """Tasks of ``session`` die with it: bound to the session itself, there being no identity."""
        return self.config.binding == "session" and session.principal is None

    async def _run(self, live: _Live, work: Work, tctx: "TaskContext") -> None:
        outcome: Any = None
        status: str | None = None  # None: the work did not finish (cancelled, expired)
        message: str | None = None
        task_id = live.record.task_id
        try:
            with live.scope:
                try:
                    outcome = await work(tctx)
                    # [basic/utilities/progress#13] the latest state before the task completes
                    await tctx.flush_progress()
                except (MCPError, ProtocolError) as e:
                    outcome, status, message = Error(code=e.code, message=e.message, data=e.data), "failed", e.message
                except Exception as e:
                    log.exception("task %s failed", task_id, exc_info=e)
                    outcome = Error(code=ErrorCode.INTERNAL_ERROR, message="Internal error")
                    status, message = "failed", "Internal error"
                else:
                    status, message = work_outcome(outcome)
        except BaseException:
            # cancelled from outside (the task nursery is shutting down) or interrupted:
            # the task can never finish, so it fails rather than look completed with no result
            if status is None:
                outcome = Error(code=ErrorCode.INTERNAL_ERROR, message="Internal error")
                status, message = "failed", "receiver shut down"
            with trio.CancelScope(shield=True), trio.move_on_after(_SHUTDOWN_WRITE):
                await self._write_outcome(live, status, message, outcome, retry=False)
            self._finish(live)
            raise
        if status is not None:
            # a cancelled or expired task keeps the state its canceller set ([basic/utilities/tasks#62])
            await self._write_outcome(live, status, message, outcome, retry=True)
        self._finish(live)

    async def _write_outcome(self, live: _Live, status: str, message: str | None, outcome: Any, retry: bool) -> None:
        """Store how the work ended (see :func:`store_outcome`)."""
        record = live.record
        await store_outcome(
            self.store,
            record.task_id,
            status,
            message,
            outcome,
            ttl_ms=record.ttl_ms,
            wall_clock=self.wall_clock,
            retry=retry,
        )

    def _finish(self, live: _Live) -> None:
        """The task is over for its requestor: waiters answer, progress stops."""
        if live.done.is_set():
            return
        live.done.set()
        token = live.record.progress_token
        if token is not None:
            # [basic/utilities/progress#11] progress stops at the terminal status
            live.session.connection.finish_task_token(token)

    def _on_change(self, change: TaskChange) -> None:
        """The store announces a change (made here or, on a shared store, by another process)."""
        if change.task_id == RESYNC:
            # changes may have been missed: every waiter reads again, every task running here is read
            # again (one cancelled through another replica meanwhile stops its work)
            waiting, self._changed = self._changed, {}
            for waiters in waiting.values():
                waiters.set()
            for task_id, running in list(self._live.items()):
                if not running.record.terminal:
                    self.nursery.start_soon(self._refresh, task_id, name=f"mcp task {task_id} read again")
            return
        event = self._changed.pop(change.task_id, None)
        if event is not None:
            event.set()  # tasks/result waiters read the task again
        live = self._live.get(change.task_id)
        if live is None or change.version <= live.record.version:
            return  # not running here, or already known (a shared store echoes our own changes)
        if change.status is None:
            # deleted (expired, its session closed): stop the work, answer the waiters
            del self._live[change.task_id]
            bound = self._session_tasks.get(live.session)
            if bound is not None:
                bound.discard(change.task_id)
            live.scope.cancel(reason=f"task {change.task_id} was deleted")
            self._finish(live)
            return
        if change.record is None:
            # another process changed it: read what it is now
            self.nursery.start_soon(self._refresh, change.task_id, name=f"mcp task {change.task_id} changed")
            return
        self._changed_live(live, change.record)

    async def _refresh(self, task_id: str) -> None:
        try:
            record = await self.store.get(task_id)
        except TaskStoreUnavailable as e:
            log.warning("task %s changed elsewhere and could not be read: %s", task_id, e.detail)
            return
        live = self._live.get(task_id)
        if live is None:
            return
        if record is None:
            self._on_change(TaskChange(task_id, live.record.version + 1, None))
        elif record.version > live.record.version:
            self._changed_live(live, record)

    def _changed_live(self, live: _Live, record: TaskRecord) -> None:
        before = live.record
        live.record = record
        if record.status == before.status:
            return
        if record.terminal and record.status_message:
            log.info("task %s is %s: %s", record.task_id, record.status, record.status_message)
        else:
            log.info("task %s is %s", record.task_id, record.status)
        # [basic/utilities/tasks#18, #53] each change is announced (unless turned off) -- tasks#task-notifications
        if self.config.status_notifications:
            params = status_notification(record)
            # to the session that created the task; once it is gone, to the sessions
            # waiting on it with tasks/result (the same requestor, another connection)
            if not live.session.notify_soon("notifications/tasks/status", params):
                for session in {s for s, _ in live.waiters}:
                    session.notify_soon("notifications/tasks/status", params)
        if record.terminal:
            self.stats[record.status] += 1
            # [basic/utilities/tasks#61] a task made terminal by a cancel (here or in another
            # process) stops its work; tasks/result answers now, even if the work takes its time to stop
            live.scope.cancel(reason=f"task {record.task_id} is {record.status}")
            self._finish(live)

    async def _move(self, live: _Live, status: str) -> None:
        """The work moves its task to ``status``; unless the task is terminal or gone meanwhile
        (cancelled, expired: its work is being stopped)."""
        try:
            await self.store.move(live.record.task_id, status, wall=self.wall_clock())
        except (TaskConflict, LookupError):
            pass

    # -- receiver: the tasks/* handlers -----------------------------------------------------------

    async def _lookup(self, ctx: RequestContext, task_id: str) -> TaskRecord:
        self.stats[ctx.method.removeprefix("tasks/")] += 1
        record = await self.store.get(task_id)
        if record is not None and self.binds_requestors and record.owner != self.owner_of(ctx.session):
            # [basic/utilities/tasks#78] another requestor's task does not exist for you (in any process
            # on the same store: the binding is stored with the task) -- tasks#task-isolation-and-access-control
            record = None
        if record is None:
            # [basic/utilities/tasks#82] failed lookups are logged and counted (here and on the session)
            self.stats["not-found"] += 1
            ctx.session.connection.stats["tasks:not-found"] += 1
            log.warning("%s for unknown task %r by %s", ctx.method, task_id, _Who(self, ctx.session))
            # [basic/utilities/tasks#68, #70] -32602, saying what is wrong -- tasks#protocol-errors
            raise TaskNotFound(task_id)
        return record

    async def get(self, ctx: RequestContext, params: GetTaskRequestParams) -> GetTaskResult:
        """Answer ``tasks/get``: the task's state, for its owner only."""
        await self._throttle(ctx)
        # [basic/utilities/tasks#50, #51] the taskId param decides, not _meta
        # -- tasks#associating-task-related-messages
        record = await self._lookup(ctx, params.task_id)
        # polling is frequent: DEBUG, and counted in stats["get"]
        log.debug("tasks/get %s by %s: %s", record.task_id, _Who(self, ctx.session), record.status)
        # [basic/utilities/tasks#52, #66] the task's state, no related-task key -- tasks#related-task-metadata
        return record.view(GetTaskResult)

    async def result(self, ctx: RequestContext, params: GetTaskPayloadRequestParams) -> GetTaskPayloadResult:
        """Answer ``tasks/result``: wait for the task to end, then its result (or its error)."""
        await self._throttle(ctx)
        record = await self._lookup(ctx, params.task_id)
        task_id = record.task_id
        # [basic/utilities/tasks#82] retrieval
        log.info("tasks/result %s by %s (%s)", task_id, _Who(self, ctx.session), record.status)
        live = self._live.get(task_id)
        waiter = (ctx.session, ctx.request_id)
        if live is not None and not record.terminal:
            # meanwhile the task's input requests go on this request's stream ([basic/utilities/tasks#34])
            live.add_waiter(waiter)
        try:
            # [basic/utilities/tasks#46] not terminal: block until it is -- tasks#result-retrieval
            while not record.terminal:
                changed = self._changed.get(task_id)
                if changed is None:
                    changed = self._changed[task_id] = trio.Event()
                current = await self.store.get(task_id)
                if current is None:
                    # [basic/utilities/tasks#68, #70] expired meanwhile: -32602, saying so
                    raise TaskNotFound(task_id, "Task has expired")
                record = current
                if record.terminal:
                    break
                # woken by the store's announcement of its next change; a shared store's may be
                # late or lost (another process made it): read again now and then
                with trio.move_on_after(_RECHECK if self.store.shared else math.inf):
                    await changed.wait()
        finally:
            if live is not None and waiter in live.waiters:
                live.waiters.remove(waiter)
        return task_payload(record, ctx.session.connection.revision)

    async def list(self, ctx: RequestContext, params: PaginatedRequestParams | None) -> ListTasksResult:
        """Answer ``tasks/list``: the caller's tasks, a page at a time."""
        await self._throttle(ctx)
        # [basic/utilities/tasks#79] only the requestor's own tasks -- tasks#task-isolation-and-access-control
        # (binding="none": every task is bound to nobody, so all of them)
        records = await self.store.owned_by(self.owner_of(ctx.session))
        tasks, nxt = page_of_tasks(records, params.cursor if params else None, self.config.page_size)
        self.stats["list"] += 1
        log.info("tasks/list by %s: %d tasks", _Who(self, ctx.session), len(tasks))
        return ListTasksResult(tasks=tasks, next_cursor=nxt)

    async def cancel(self, ctx: RequestContext, params: CancelTaskRequestParams) -> CancelTaskResult:
        """Answer ``tasks/cancel``: cancel a task that has not ended."""
        await self._throttle(ctx)
        record = await self._lookup(ctx, params.task_id)
        # [basic/utilities/tasks#60] a terminal task: -32602 -- tasks#task-cancellation
        check_cancellable(record)
        log.info("tasks/cancel %s by %s", record.task_id, _Who(self, ctx.session))
        try:
            # [basic/utilities/tasks#61] moved to cancelled *before* the answer, and it sticks whatever
            # the work does next (the store refuses later moves); its work stops as the store announces
            # the change, in whichever process runs it -- tasks#task-cancellation
            record = await self.store.move(
                record.task_id, "cancelled", wall=self.wall_clock(), message="The task was cancelled by request."
            )
        except TaskConflict as conflict:
            check_cancellable(conflict.record)  # it became terminal meanwhile: -32602
            raise
        except LookupError:
            raise TaskNotFound(record.task_id, "Task has expired") from None
        return record.view(CancelTaskResult)

    def handlers(self) -> dict[str, Any]:
        """The request handlers of the tasks methods, for a server's or client's handler table."""
        table: dict[str, Any] = {"tasks/get": self.get, "tasks/result": self.result, "tasks/cancel": self.cancel}
        if self.lists_tasks:
            table["tasks/list"] = self.list
        return table

    # -- expiry ----------------------------------------------------------------------------------

    def _ensure_expiry_loop(self) -> None:
        if not self._expiry_started:
            self._expiry_started = True
            self.nursery.start_soon(self._expiry_loop, name="mcp task expiry")

    async def _expiry_loop(self) -> None:
        while True:
            try:
                delay = await self.store.next_expiry()
            except TaskStoreUnavailable as e:
                log.warning("task expiry: the store is unavailable (%s); again in %g s", e.detail, _RECHECK)
                delay = _RECHECK
            if delay is None:
                delay = math.inf
            if self.store.shared:
                delay = min(delay, _SHARED_EXPIRY_CHECK)  # other replicas' tasks expire too
            self._expiry_deadline = trio.current_time() + delay
            self._expiry_changed = trio.Event()
            with trio.move_on_at(self._expiry_deadline):
                await self._expiry_changed.wait()
            try:
                await self.purge_expired()
            except TaskStoreUnavailable as e:
                log.warning("task expiry: the store is unavailable (%s)", e.detail)

    async def purge_expired(self) -> int:
        """[basic/utilities/tasks#40, #63] delete tasks past their ttl (tasks#ttl-and-resource-management).

        The store decides what is past its ttl, by its clock; its announcements
        stop the work of expired tasks that still run here.
        """
        expired = await self.store.purge_expired()
        for task_id in expired:
            self.stats["expired"] += 1
            log.info("task %s expired and was deleted", task_id)
        return len(expired)

    def _watch(self, session: Session) -> None:
        if session not in self._watched:
            self._watched.add(session)
            self.nursery.start_soon(self._forget_session, session, name="mcp tasks of a session")

    async def _forget_session(self, session: Session) -> None:
        """A session closed: its keys and rate-limit bucket go (a closed session kept there would
        stay in memory with everything it holds), and the tasks bound to it alone, which
        nobody can reach again."""
        await session.closed.wait()
        self._watched.discard(session)
        keys = self._keys.pop(session, None)
        if self._limiter is not None and keys is not None and session.principal is None:
            if not callable(self.config.binding):
                self._limiter.forget(keys[1])  # the session's own key: nobody will use it again
        for task_id in sorted(self._session_tasks.pop(session, ())):
            try:
                await self.store.delete(task_id)
            except TaskStoreUnavailable as e:
                log.warning("task %s of a closed session stays until its ttl: %s", task_id, e.detail)
                continue
            self.stats["session-closed"] += 1
            log.info("task %s lost its session and was deleted", task_id)


#: TaskContext._ask: the request was asked again on a newer tasks/result stream
_SUPERSEDED: Any = object()


class TaskContext(RequestContext):
    """The request context of task work: progress under the original token,
    related-task metadata on everything it sends, ``input_required`` while it
    waits for the requestor."""

    def __init__(self, manager: TaskManager, live: _Live, origin: RequestContext) -> None:
        params = origin.params
        super().__init__(origin.session, origin.request_id, origin.method, origin.message, trio.CancelScope())
        self.params = attrs.evolve(params, task=None) if hasattr(params, "task") else params
        self.manager = manager
        self.live = live
        self.task_id = live.record.task_id
        self._token = live.record.progress_token  # (the creating request's, kept for the task's life)

    @property
    def progress_token(self) -> Any:
        return self._token

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Progress under the creating request's token: it means something on the
        creating session only, so once that session is gone progress is dropped.
        Rate limited like a plain request's (``SessionConfig.progress_min_interval``)."""
        if self._token is None or self.live.record.terminal or self.session.closed.is_set():
            return  # [basic/utilities/progress#11] nothing after the terminal status
        config = self.session.config
        if not config.progress_min_interval:
            await self._send_task_progress(progress, total, message)
            return
        pace = self._pace
        if pace is None:
            pace = self._pace = ProgressPace(config.progress_min_interval, config.progress_coalesce)
        now = trio.current_time()
        # [basic/utilities/progress#13] the same pace as a plain request's progress
        decision = pace.offer(progress, total, message, now)
        if decision == SEND:
            await self._send_task_progress(progress, total, message)
            pace.sent(progress, now, True)
        elif decision == HOLD_FIRST:
            self.manager.nursery.start_soon(self._flush_progress_at, pace.flush_at)

    async def flush_progress(self) -> None:
        """Send the value the rate limit holds back, unless the task is terminal (before it completes)."""
        pace = self._pace
        held = pace.take_held() if pace is not None else None
        if held is None or self.live.record.terminal or self.session.closed.is_set():
            return
        assert pace is not None
        pace.dropped -= 1
        await self._send_task_progress(*held)
        pace.sent(held[0], trio.current_time(), True)

    async def _send_task_progress(self, progress: float, total: float | None, message: str | None) -> None:
        # [basic/utilities/progress#9, #10] the original token, for the task's whole life
        # [basic/utilities/tasks#48] the task's progress names the task
        token = self._token
        assert token is not None  # progress() and flush_progress() return early without one
        meta = related_task_meta(self.task_id)
        data = self.session.connection.send_task_progress(token, progress, total, message, meta)
        waiter = self.live.waiting_requestor()
        related = waiter[1] if waiter is not None and waiter[0] is self.session else None
        try:
            await self.session.send_raw(data, related)
        except ConnectionClosed:
            log.debug("task %s: progress dropped, its session closed", self.task_id)

    def _route(self) -> tuple[Session, RequestId | None]:
        """Where a message of the task goes: a waiting tasks/result request's stream, else its session."""
        waiter = self.live.waiting_requestor()
        return waiter if waiter is not None else (self.session, None)

    async def request(self, method: str, params: Any = None, **options: Any) -> Any:
        """A request to the requestor on behalf of the task: the task is input_required meanwhile.

        It is sent once a ``tasks/result`` request waits for the task, on that
        request's stream and session: a requestor that polls sees
        ``input_required`` and calls ``tasks/result`` (tasks#34), and a
        transport that routes by request (Streamable HTTP) has a stream to
        deliver it on even without a GET stream.
        """
        live = self.live
        # [basic/utilities/tasks#33, #48, #49, #65] the request names its task, with or without params
        params = relate_params(method, params, self.task_id)
        live.inputs += 1
        if live.record.status == "working":
            # [basic/utilities/tasks#32] waiting for the requestor
            await self.manager._move(live, "input_required")
        try:
            while True:
                session, related = await live.requestor()
                try:
                    answer = await self._ask(session, related, method, params, options)
                except ConnectionClosed:
                    if not session.closed.is_set():
                        raise
                    # that requestor's connection is gone before it answered: ask again
                    # on the next tasks/result that waits (same requestor, another session)
                    log.info("task %s: the session asked for %s closed; waiting for another", self.task_id, method)
                    continue
                if answer is not _SUPERSEDED:
                    return answer
                log.info("task %s: %s asked again on the requestor's newer tasks/result", self.task_id, method)
        finally:
            live.inputs -= 1
            if live.inputs == 0 and live.record.status == "input_required":
                # [basic/utilities/tasks#35] all its input is in: working again
                with trio.CancelScope(shield=True), trio.move_on_after(_SHUTDOWN_WRITE):
                    await self.manager._move(live, "working")

    async def _ask(
        self, session: Session, related: RequestId, method: str, params: Any, options: dict[str, Any]
    ) -> Any:
        """One request to the requestor, on the stream of its tasks/result request ``related``.

        [basic/utilities/tasks#16] Over a transport that routes by request
        (Streamable HTTP) the requestor may drop that stream at any time and call
        ``tasks/result`` again: once a newer ``tasks/result`` waits, the request is
        cancelled here and :data:`_SUPERSEDED` returned, so that it is asked again
        on the newer one's stream rather than waiting for an answer that cannot come.
        """
        if not session.routes_by_request:
            return await session.request(method, params, related_request_id=related, **options)
        live = self.live
        pending = await session.start_request(method, params, related_request_id=related, **options)
        watcher = trio.CancelScope()
        superseded = False

        async def watch(arrived: trio.Event) -> None:
            nonlocal superseded
            with watcher:
                while live.waiting_requestor() == (session, related):
                    await arrived.wait()
                    arrived = live.waiter_arrived
                superseded = True
            if superseded:
                await pending.cancel("asked again on the requestor's newer tasks/result request")

        self.manager.nursery.start_soon(watch, live.waiter_arrived)
        try:
            return await pending.result()
        except RequestCancelled:
            if not superseded:
                raise
        finally:
            watcher.cancel()
        return _SUPERSEDED

    async def _notify(self, method: str, params: Any) -> None:
        # [basic/utilities/tasks#48, #65] notifications of the task name it -- tasks#related-task-metadata
        params = relate_params(method, params, self.task_id)
        session, related = self._route()
        try:
            await session.notify(method, params, related_request_id=related)
        except ConnectionClosed:
            log.debug("task %s: %s dropped, no open session of its requestor", self.task_id, method)
