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

import itertools
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
    InMemoryTaskStore,
    RateLimiter,
    TaskNotFound,
    TaskRecord,
    TaskStore,
    check_cancellable,
    grant_ttl,
    new_task_id,
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
        if callable(self.manager.config.binding) or self.session.principal is not None:
            # [basic/utilities/tasks#82] the auth context, when there is one
            return f"{self.manager.owner_of(self.session)!r} via {where}"
        return where


@attrs.define
class _Live:
    """Runtime state of one task beside its record."""

    #: the runtime's own copy of the record: every change is made here, then
    #: written to the store (``TaskStore.update``), which may keep copies
    record: TaskRecord
    #: the session that created the task
    session: Session
    scope: trio.CancelScope
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
        if getattr(self.store, "durable", False) and self.config.binding == "session":
            # tasks bound to a session die with it: nothing about them could outlive a restart
            raise ValueError('a durable task store needs binding="none" or an identity binding, not "session"')
        #: seconds since the epoch, for the tasks' timestamps
        self.wall_clock = wall_clock
        self._live: dict[str, _Live] = {}
        #: monitoring counters (tasks#81, #82): created, completed, failed, cancelled,
        #: expired, get, result, list, cancel, not-found, refused:limit ...
        self.stats: Counter[str] = Counter()
        # creation order continues after what a persistent store already holds
        self._seq = itertools.count(max((r.seq for r in self.store), default=0) + 1)
        cfg = self.config
        self._limiter = RateLimiter(cfg.rate_limit, cfg.rate_burst, cfg.rate_max_wait) if cfg.rate_limit else None
        #: sessions whose closing deletes their tasks (binding="session")
        self._watched: set[Session] = set()
        self._expiry_changed = trio.Event()
        #: when the expiry loop wakes next (inf: no task expires)
        self._expiry_deadline = -math.inf
        self._expiry_started = False
        if next(iter(self.store), None) is not None:
            self._ensure_expiry_loop()  # tasks from before a restart expire too

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

    def owner_of(self, session: Session) -> Hashable:
        """Who owns the tasks ``session`` creates, by ``config.binding``: its authenticated principal or the session
        itself, None without binding.
        """
        binding = self.config.binding
        if binding == "session":
            # [basic/utilities/tasks#74] an authorization context, when there is one, owns the task:
            # any session of that user reaches it, no session of another user does
            principal = session.principal
            return session if principal is None else ("principal", principal)
        if binding == "none":
            return None
        assert callable(binding)
        # [basic/utilities/tasks#74] with an auth context, the task belongs to it
        return binding(session)

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
        # per requestor; without binding there is no requestor identity: per session
        key = self.owner_of(ctx.session) if self.binds_requestors else ctx.session
        if key is ctx.session:
            self._watch(ctx.session)  # its bucket goes when it closes (it would keep the session alive)
        delay = limiter.delay(key, trio.current_time())
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
        """Accept a task-augmented request: record it, start ``work`` and answer at once."""
        await self._throttle(ctx)
        session = ctx.session
        owner = self.owner_of(session)
        self._check_room(session, owner)
        task_meta: TaskMetadata = ctx.params.task
        ttl = grant_ttl(task_meta.ttl, self.config.default_ttl_ms, self.config.max_ttl_ms)
        now, wall = trio.current_time(), self.wall_clock()
        record = TaskRecord(
            task_id=new_task_id(),
            owner=owner,
            method=ctx.method,
            status=INITIAL_STATUS,  # [basic/utilities/tasks#26] tasks begin working
            created_at=wall,
            last_updated_at=wall,
            ttl_ms=ttl,
            poll_interval_ms=self.config.poll_interval_ms,
            expires_at=now + ttl / 1000 if ttl is not None else None,
            progress_token=ctx.progress_token,
            seq=next(self._seq),
        )
        self.store.add(record)
        live = _Live(record=record, session=session, scope=trio.CancelScope(), done=trio.Event())
        self._live[record.task_id] = live
        self.stats["created"] += 1
        # [basic/utilities/tasks#82] creation, with who asked
        log.info("task %s created for %s by %s (ttl %s ms)", record.task_id, ctx.method, _Who(self, session), ttl)
        self._ensure_expiry_loop()
        if record.expires_at is not None and record.expires_at < self._expiry_deadline:
            # the expiry loop sleeps past this task's end: it looks again (with one ttl for
            # all, a new task ends after the others, and no task creation scans the store)
            self._expiry_changed.set()
        if record.owner is session:
            self._watch(session)
        tctx = TaskContext(self, live, ctx)
        self.nursery.start_soon(self._run, record, live, work, tctx, name=f"mcp task {record.task_id}")
        # [basic/utilities/tasks#43, #44] CreateTaskResult at once -- tasks#result-retrieval
        return CreateTaskResult(task=record.to_task())

    def _check_room(self, session: Session, owner: Hashable) -> None:
        """[basic/utilities/tasks#resource-management] refuse a task past the limits (-32600)."""
        cfg = self.config
        # (binding="none": every requestor is one, None; counted by the store, not read task by task)
        kept, running = self.store.counts(owner)
        if running >= cfg.max_tasks_per_requestor:
            why = f"at most {cfg.max_tasks_per_requestor} concurrent tasks per requestor"
        elif kept >= cfg.max_stored_tasks_per_requestor:
            why = (
                f"at most {cfg.max_stored_tasks_per_requestor} tasks kept per requestor (finished ones until their ttl)"
            )
        elif len(self.store) >= cfg.max_stored_tasks:
            why = f"at most {cfg.max_stored_tasks} tasks kept in all"
        else:
            return
        self.stats["refused:limit"] += 1
        # [basic/utilities/tasks#81] an alert: a requestor (or the receiver) at its limit
        log.warning("task refused for %s: %s", _Who(self, session), why)
        raise ProtocolError(f"Invalid Request: {why}; retry later", ErrorCode.INVALID_REQUEST)

    async def _run(self, record: TaskRecord, live: _Live, work: Work, tctx: "TaskContext") -> None:
        outcome: Any = None
        status: str | None = None  # None: the work did not finish (cancelled, expired)
        message: str | None = None
        try:
            with live.scope:
                try:
                    outcome = await work(tctx)
                    # [basic/utilities/progress#13] the latest state before the task completes
                    await tctx.flush_progress()
                except (MCPError, ProtocolError) as e:
                    outcome, status, message = Error(code=e.code, message=e.message, data=e.data), "failed", e.message
                except Exception as e:
                    log.exception("task %s failed", record.task_id, exc_info=e)
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
            raise
        finally:
            # a cancelled or expired task keeps the state its canceller set ([basic/utilities/tasks#62])
            if status is not None and self.store.get(record.task_id) is not None:
                if not record.terminal:
                    record.outcome = outcome
                    self._set_status(record, status, message)
                elif record.status == "cancelled" and record.outcome is None:
                    # the work ran to its end despite the cancellation: still cancelled, but
                    # tasks/result has the underlying request's final result ([basic/utilities/tasks#45])
                    record.outcome = outcome
                    self.store.update(record)
            self._finish(record, live)

    def _finish(self, record: TaskRecord, live: _Live) -> None:
        live.done.set()
        if record.progress_token is not None:
            # [basic/utilities/progress#11] progress stops at the terminal status
            live.session.connection.finish_task_token(record.progress_token)

    def _set_status(self, record: TaskRecord, status: str, message: str | None = None) -> None:
        record.move(status, self.wall_clock(), message)
        self.store.update(record)
        if record.terminal:
            self.stats[status] += 1
        log.info("task %s is %s%s", record.task_id, status, f": {message}" if message else "")
        live = self._live.get(record.task_id)
        # [basic/utilities/tasks#18, #53] each change is announced (unless turned off) -- tasks#task-notifications
        if live is not None and self.config.status_notifications:
            params = status_notification(record)
            # to the session that created the task; once it is gone, to the sessions
            # waiting on it with tasks/result (the same requestor, another connection)
            if not live.session.notify_soon("notifications/tasks/status", params):
                for session in {s for s, _ in live.waiters}:
                    session.notify_soon("notifications/tasks/status", params)
        if live is not None and record.terminal:
            # tasks/result answers now, even if cancelled work takes its time to stop
            self._finish(record, live)

    # -- receiver: the tasks/* handlers -----------------------------------------------------------

    def _lookup(self, ctx: RequestContext, task_id: str) -> TaskRecord:
        self.stats[ctx.method.removeprefix("tasks/")] += 1
        record = self.store.get(task_id)
        if (
            record is not None
            and record.owner is not ctx.session  # (created by this session: its own)
            and self.binds_requestors
            and record.owner != self.owner_of(ctx.session)
        ):
            # [basic/utilities/tasks#78] another requestor's task does not exist for you
            # -- tasks#task-isolation-and-access-control
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
        record = self._lookup(ctx, params.task_id)
        # polling is frequent: DEBUG, and counted in stats["get"]
        log.debug("tasks/get %s by %s: %s", record.task_id, _Who(self, ctx.session), record.status)
        # [basic/utilities/tasks#52, #66] the task's state, no related-task key -- tasks#related-task-metadata
        return record.view(GetTaskResult)

    async def result(self, ctx: RequestContext, params: GetTaskPayloadRequestParams) -> GetTaskPayloadResult:
        """Answer ``tasks/result``: wait for the task to end, then its result (or its error)."""
        await self._throttle(ctx)
        record = self._lookup(ctx, params.task_id)
        # [basic/utilities/tasks#82] retrieval
        log.info("tasks/result %s by %s (%s)", record.task_id, _Who(self, ctx.session), record.status)
        live = self._live.get(record.task_id)
        # [basic/utilities/tasks#46] not terminal: block until it is -- tasks#result-retrieval
        if live is not None and not record.terminal:
            # meanwhile the task's input requests go on this request's stream ([basic/utilities/tasks#34])
            waiter = (ctx.session, ctx.request_id)
            live.add_waiter(waiter)
            try:
                await live.done.wait()
            finally:
                live.waiters.remove(waiter)
        current = self.store.get(record.task_id)
        if current is None:
            # [basic/utilities/tasks#68, #70] expired meanwhile: -32602, saying so
            raise TaskNotFound(record.task_id, "Task has expired")
        return task_payload(current, ctx.session.connection.revision)

    async def list(self, ctx: RequestContext, params: PaginatedRequestParams | None) -> ListTasksResult:
        """Answer ``tasks/list``: the caller's tasks, a page at a time."""
        await self._throttle(ctx)
        # [basic/utilities/tasks#79] only the requestor's own tasks -- tasks#task-isolation-and-access-control
        records = list(self.store.owned_by(self.owner_of(ctx.session))) if self.binds_requestors else list(self.store)
        tasks, nxt = page_of_tasks(records, params.cursor if params else None, self.config.page_size)
        self.stats["list"] += 1
        log.info("tasks/list by %s: %d tasks", _Who(self, ctx.session), len(tasks))
        return ListTasksResult(tasks=tasks, next_cursor=nxt)

    async def cancel(self, ctx: RequestContext, params: CancelTaskRequestParams) -> CancelTaskResult:
        """Answer ``tasks/cancel``: cancel a task that has not ended."""
        await self._throttle(ctx)
        record = self._lookup(ctx, params.task_id)
        live = self._live.get(record.task_id)
        if live is not None:
            record = live.record
        # [basic/utilities/tasks#60] a terminal task: -32602 -- tasks#task-cancellation
        check_cancellable(record)
        log.info("tasks/cancel %s by %s", record.task_id, _Who(self, ctx.session))
        # [basic/utilities/tasks#61] moved to cancelled *before* the answer, and it sticks whatever
        # the work does next -- tasks#task-cancellation
        self._set_status(record, "cancelled", "The task was cancelled by request.")
        if live is not None:
            # [basic/utilities/tasks#61] and the work is stopped
            live.scope.cancel(reason=f"task {record.task_id} cancelled by the requestor")
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
            deadline = self.store.next_expiry()
            self._expiry_deadline = deadline if deadline is not None else math.inf
            self._expiry_changed = trio.Event()
            with trio.move_on_at(self._expiry_deadline):
                await self._expiry_changed.wait()
            self.purge_expired()

    def purge_expired(self) -> int:
        """[basic/utilities/tasks#40, #63] delete tasks past their ttl (tasks#ttl-and-resource-management)."""
        expired = self.store.expired(trio.current_time())
        for record in expired:
            self._delete(record, "expired", "expired")
        return len(expired)

    def _delete(self, record: TaskRecord, why: str, counter: str) -> None:
        """Forget a task: stop its work if it still runs, wake its tasks/result waiters."""
        self.store.remove(record.task_id)
        live = self._live.pop(record.task_id, None)
        if live is not None:
            live.scope.cancel(reason=f"task {record.task_id} {why}")
            self._finish(record, live)
        self.stats[counter] += 1
        log.info("task %s %s and was deleted", record.task_id, why)

    def _watch(self, session: Session) -> None:
        if session not in self._watched:
            self._watched.add(session)
            self.nursery.start_soon(self._forget_session, session, name="mcp tasks of a session")

    async def _forget_session(self, session: Session) -> None:
        """A session closed: its rate-limit bucket goes (a closed session kept there would stay
        in memory with everything it holds), and with binding="session" its tasks, which
        nobody can reach again."""
        await session.closed.wait()
        self._watched.discard(session)
        if self._limiter is not None:
            self._limiter.forget(session)
        for record in self.store.owned_by(session):
            self._delete(record, "lost its session", "session-closed")


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
        self.record = live.record
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
        if self._token is None or self.record.terminal or self.session.closed.is_set():
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
        if held is None or self.record.terminal or self.session.closed.is_set():
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
        record, live = self.record, self.live
        # [basic/utilities/tasks#33, #48, #49, #65] the request names its task, with or without params
        params = relate_params(method, params, self.task_id)
        live.inputs += 1
        if record.status == "working":
            # [basic/utilities/tasks#32] waiting for the requestor
            self.manager._set_status(record, "input_required")
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
            if live.inputs == 0 and record.status == "input_required":
                # [basic/utilities/tasks#35] all its input is in: working again
                self.manager._set_status(record, "working")

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

    async def notify(self, method: str, params: Any = None) -> None:
        # [basic/utilities/tasks#48, #65] notifications of the task name it -- tasks#related-task-metadata
        params = relate_params(method, params, self.task_id)
        session, related = self._route()
        try:
            await session.notify(method, params, related_request_id=related)
        except ConnectionClosed:
            log.debug("task %s: %s dropped, no open session of its requestor", self.task_id, method)
