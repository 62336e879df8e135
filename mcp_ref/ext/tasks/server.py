"""The server side of the tasks extension on trio: tasks for 2026-07-28 ``tools/call``.

::

    async with trio.open_nursery() as nursery:
        server = Server("demo")
        TaskExtension(nursery, store=SqliteTaskStore(path)).install(server)

* **The server decides** ([ext-tasks:tasks#1]). A ``tools/call`` whose request
  declares the extension and names a tool registered with
  ``task_support="optional"`` or ``"required"`` becomes a task when the policy
  (``decide=``, by default: always) says so; any handler may also hand the rest of
  its work to a task itself with :func:`as_task` (after a multi round-trip
  exchange, say: [ext-tasks:tasks#12]). A client that did not declare the
  extension gets the plain result, or -32021 for a tool that only runs as a task.
* **Stored before it is announced** ([ext-tasks:tasks#10, #11]): the
  ``CreateTaskResult`` is written after the store (any
  :class:`~mcp_ref.session.task_store.TaskStore`: memory, SQLite, PostgreSQL)
  returned from ``create``, so a ``tasks/get`` on any replica finds it.
* **The work runs in the nursery**, in a context whose ``ctx.elicit()``,
  ``ctx.sample()``, ``ctx.list_roots()`` and ``ctx.ask_all()`` park the task in
  ``input_required`` with the request in ``inputRequests`` and wait for
  ``tasks/update`` to bring the answer (through the store: any replica may take
  it). Progress and log messages are not sent for tasks ([ext-tasks:tasks#51]).
* **tasks/get, tasks/update, tasks/cancel** read and change the stored task, on
  whichever replica they arrive; a cancellation reaches the work through the
  store's change announcements (PostgreSQL: LISTEN/NOTIFY).
* Tasks belong to the authenticated user who created them
  ([ext-tasks:tasks#66]); without authentication the unguessable id is the key
  ([ext-tasks:tasks#64, #65]).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ...basic import versioning as v
from ...basic.patterns import mrtr
from ...basic.utilities.tasks import TaskLimits, TaskRecord, new_task_id, owner_key
from ...errors import ErrorCode, LocalProtocolError, MCPError, ProtocolError
from ...schema._converter import converter_for
from ...schema.content import TextContent
from ...schema.jsonrpc import Error
from ...schema.tools import CallToolResult
from ...server.tools import ToolError, ToolSignal, as_call_tool_result
from ...session.core import RequestContext
from ...session.modern import ModernContext
from ...session.task_store import (
    RESYNC,
    InMemoryTaskStore,
    TaskChange,
    TaskConflict,
    TaskStore,
    TaskStoreUnavailable,
)
from ...session.tasks import store_outcome
from .protocol import (
    METHODS,
    WRITE_AS,
    create_task_result,
    declares_extension,
    detailed_task,
    missing_extension,
    read_input_responses,
    read_task_id,
    task_not_found,
)

if TYPE_CHECKING:
    from ...schema.tools import Tool
    from ...session.server import Server

__all__ = ["TaskExtension", "ExtTaskConfig", "TaskWorkContext", "TaskCreated", "as_task"]

log = logging.getLogger("mcp_ref.ext.tasks")

Work = Callable[[RequestContext], Awaitable[Any]]
#: decide(ctx, tool, params): whether a call of a task-capable tool becomes a task at once
Decide = Callable[[RequestContext, "Tool", Any], bool]

#: a shared store's announcements may come late or be lost (a reconnect): waiters read again this often
_RECHECK = 2.0
#: how long writing the final state may hold up a shutdown (s)
_SHUTDOWN_WRITE = 5.0
#: the status message of a task whose server stopped under it
STOPPED_MESSAGE = "the server stopped before the task finished"


class TaskCreated(ToolSignal):
    """Raised by :func:`as_task` through the tool handler: the call is answered with ``result``
    (the ``CreateTaskResult``), not with what the handler would have returned."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__(f"task {result.get('taskId')} created")
        self.result = result


@attrs.frozen(kw_only=True)
class ExtTaskConfig:
    """The policy of the extension's tasks (spec_notes/ext-tasks/tasks.md says why these values).

    ``ttl_ms``: how long a task is kept from its creation (None: unlimited);
    ``poll_interval_ms``: the polling interval suggested to clients;
    ``max_tasks_per_requestor`` (running), ``max_stored_tasks_per_requestor``
    (kept) and ``max_stored_tasks`` (all): past them a new task is refused with
    -32600, per user ([basic/utilities/tasks#resource-management] carried over).
    """

    ttl_ms: int | None = 3_600_000
    poll_interval_ms: int = 1_000
    max_tasks_per_requestor: int = 100
    max_stored_tasks_per_requestor: int = 1000
    max_stored_tasks: int = 10_000

    def __attrs_post_init__(self) -> None:
        if self.ttl_ms is not None and self.ttl_ms < 1:
            raise ValueError("ttl_ms is a positive number of milliseconds, or None (unlimited)")
        if self.poll_interval_ms < 1:
            raise ValueError("poll_interval_ms is a positive number of milliseconds")
        if min(self.max_tasks_per_requestor, self.max_stored_tasks_per_requestor, self.max_stored_tasks) < 1:
            raise ValueError("the task limits are positive")


@attrs.define(eq=False)
class _Live:
    """A task whose work runs in this process."""

    scope: trio.CancelScope
    #: set (and replaced) at every change of the task
    changed: trio.Event = attrs.Factory(trio.Event)

    def poke(self) -> None:
        self.changed.set()
        self.changed = trio.Event()


def _auth_of(ctx: RequestContext) -> Any:
    try:
        return ctx.auth
    except Exception:  # a context without a session's channel (a test's own context)
        return None


class TaskExtension:
    """The ``io.modelcontextprotocol/tasks`` extension of a :class:`~mcp_ref.Server` (see the module docstring)."""

    #: the methods the extension adds
    methods = METHODS

    def __init__(
        self,
        nursery: trio.Nursery,
        *,
        store: TaskStore | None = None,
        config: ExtTaskConfig | None = None,
        decide: Decide | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        #: where the tasks' work runs (it outlives every request)
        self.nursery = nursery
        #: where the tasks are kept (memory by default; SQLite or PostgreSQL to outlive the process)
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.config = config or ExtTaskConfig()
        cfg = self.config
        self.limits = TaskLimits(cfg.max_tasks_per_requestor, cfg.max_stored_tasks_per_requestor, cfg.max_stored_tasks)
        #: whether a call of a task-capable tool becomes a task at once (default: always)
        self.decide: Decide = decide if decide is not None else (lambda ctx, tool, params: True)
        self.wall_clock = wall_clock
        self.server: Server | None = None
        self._live: dict[str, _Live] = {}
        self._expiry_started = False
        self._expiry_changed = trio.Event()
        self.store.subscribe(self._on_change)
        if self.store.durable or self.store.shared:
            self._ensure_expiry_loop()

    def install(self, server: Server) -> TaskExtension:
        """Serve the extension on ``server``'s 2026-07-28 requests; returns self."""
        if server.task_extension is not None and server.task_extension is not self:
            raise RuntimeError("the server has a tasks extension already")
        self.server = server
        server.task_extension = self
        server._warn_unshared_state_key(self.store)
        server._modern = None  # the next 2026-07-28 request sees the extension's methods
        return self

    def handlers(self) -> dict[str, Any]:
        return {"tasks/get": self.get, "tasks/update": self.update, "tasks/cancel": self.cancel}

    # -- who: owners and quotas -----------------------------------------------------------------

    @staticmethod
    def owner_of(ctx: RequestContext) -> str | None:
        """Whose task a request creates or reaches: the authenticated user, else nobody in
        particular (the unguessable task id is then the key, [ext-tasks:tasks#64])."""
        auth = _auth_of(ctx)
        return owner_key(("principal", tuple(auth.principal))) if auth is not None else None

    # -- creating tasks ---------------------------------------------------------------------------

    async def call_tool(
        self, ctx: RequestContext, params: Any, call: Callable[[RequestContext, Any], Awaitable[Any]]
    ) -> Any:
        """A 2026-07-28 ``tools/call``: a task, or the plain result (the server decides)."""
        assert self.server is not None, "install() the extension on its server first"
        # (a tool the request's token may not see is unknown: the call answers as for any unknown tool)
        tool = self.server.tools.visible(ctx, params.name)
        support = tool.execution.task_support if tool is not None and tool.execution is not None else None
        if tool is None or support not in ("optional", "required"):
            # a tool without task support runs as ever; [ext-tasks:tasks#8] its result is complete
            return await call(ctx, params)
        declared = declares_extension(_capabilities_of(ctx))
        if not declared:
            if support == "required":
                # [ext-tasks:tasks#5] only as a task, and the client cannot take one: -32021
                raise missing_extension(f"tool {params.name!r} runs only as a task")
            # [ext-tasks:tasks#2] no CreateTaskResult for this request: the call runs to its end
            return await call(ctx, params)
        # [ext-tasks:tasks#1] the server alone decides, call by call (nothing in the request asks)
        if not self.decide(ctx, tool, params):
            try:
                return await call(ctx, params)
            except TaskCreated as created:
                # the handler handed its work to a task (as_task): the call is answered with it
                return created.result
        return await self.start(ctx, lambda tctx: call(tctx, tctx.params))

    async def start(self, ctx: RequestContext, work: Work) -> dict[str, Any]:
        """Store a new task for the request of ``ctx`` and run ``work`` as it; the ``CreateTaskResult``."""
        if not isinstance(ctx, ModernContext):
            raise LocalProtocolError("tasks of the extension are made for 2026-07-28 requests")
        if not declares_extension(_capabilities_of(ctx)):
            # never to a client whose request did not declare the extension (call_tool and
            # as_task ask first: this guards a direct call)
            raise missing_extension(f"{ctx.method} answers with a task")
        owner = self.owner_of(ctx)
        wall = self.wall_clock()
        record = TaskRecord(
            # [ext-tasks:tasks#65] 192 random bits: nobody guesses another's task
            task_id=new_task_id(),
            owner=owner,
            method=ctx.method,
            status="working",
            created_at=wall,
            last_updated_at=wall,
            ttl_ms=self.config.ttl_ms,
            poll_interval_ms=self.config.poll_interval_ms,
            expires_at=None,
            # quotas count per user (without authentication, all anonymous callers together)
            requestor=owner,
        )
        # [ext-tasks:tasks#10, #11] stored (committed, on a durable store) before the answer says it
        # exists: a tasks/get that follows finds it, on any replica
        record = await self.store.create(record, self.limits)
        live = _Live(scope=trio.CancelScope())
        self._live[record.task_id] = live
        tctx = TaskWorkContext(self, record.task_id, live, ctx)
        self.nursery.start_soon(self._run, record.task_id, live, work, tctx, name=f"mcp ext task {record.task_id}")
        self._ensure_expiry_loop()
        log.info("task %s created for %s (ttl %s ms)", record.task_id, ctx.method, record.ttl_ms)
        # [ext-tasks:tasks#7] resultType "task", the task's fields flat
        return create_task_result(record)

    async def _run(self, task_id: str, live: _Live, work: Work, tctx: TaskWorkContext) -> None:
        status: str | None = None
        message: str | None = None
        outcome: Any = None
        try:
            with live.scope:
                try:
                    outcome = await work(tctx)
                except (MCPError, ProtocolError) as e:
                    # [ext-tasks:tasks#62, #24] a JSON-RPC error during the work: failed, with that error
                    status, message = "failed", e.message
                    outcome = Error(code=int(e.code), message=e.message, data=e.data)
                except Exception as e:
                    log.error("task %s failed", task_id, exc_info=e)
                    status, message = "failed", "Internal error"
                    outcome = Error(code=int(ErrorCode.INTERNAL_ERROR), message="Internal error")
                else:
                    # [ext-tasks:tasks#9, #60, #61, #63] a result, isError or not, completes the task:
                    # failed is for JSON-RPC errors only
                    status = "completed"
        except BaseException:
            # the nursery is going away (the server stops): the task cannot finish, and says so
            with trio.CancelScope(shield=True), trio.move_on_after(_SHUTDOWN_WRITE):
                await self._finish(task_id, "failed", STOPPED_MESSAGE, _stopped_error())
            raise
        finally:
            self._live.pop(task_id, None)
        if status is None:
            return  # cancelled through the store (tasks/cancel, expiry): the store has its status
        try:
            # a store that is unavailable (a database that went away) is tried again until the
            # task's ttl: the outcome lands when it is back (the task stays working meanwhile)
            await self._finish(task_id, status, message, outcome, retry=True)
        except BaseException:
            # the server stops while the outcome waits for the store: one last try on the way out
            with trio.CancelScope(shield=True), trio.move_on_after(_SHUTDOWN_WRITE):
                await self._finish(task_id, status, message, outcome)
            raise

    async def _finish(
        self, task_id: str, status: str, message: str | None, outcome: Any, *, retry: bool = False
    ) -> None:
        # (the same code as the 2025 core tasks': store_outcome)
        await store_outcome(
            self.store,
            task_id,
            status,
            message,
            outcome,
            ttl_ms=self.config.ttl_ms,
            wall_clock=self.wall_clock,
            retry=retry,
        )

    # -- tasks/get, tasks/update, tasks/cancel ----------------------------------------------------

    async def _lookup(self, ctx: RequestContext, params: Any) -> TaskRecord:
        if not declares_extension(_capabilities_of(ctx)):
            # [ext-tasks:tasks#57] only for a request that declares the extension: -32021
            raise missing_extension(f"{ctx.method} is a method of the tasks extension")
        task_id = read_task_id(params)
        record = await self.store.get(task_id)
        # [ext-tasks:tasks#66] checked on every request: another user's task is not found, as an
        # unknown one (nobody learns that it exists); [ext-tasks:tasks#53, #54, #55, #37, #44] -32602
        if record is None or record.owner != self.owner_of(ctx):
            raise task_not_found(task_id)
        return record

    async def get(self, ctx: RequestContext, params: Any) -> dict[str, Any]:
        """``tasks/get``: the task as stored, with what its status carries."""
        record = await self._lookup(ctx, params)
        # [ext-tasks:tasks#18] by the status read from the store, not this process's view
        return detailed_task(record)

    async def update(self, ctx: RequestContext, params: Any) -> dict[str, Any]:
        """``tasks/update``: answers to the task's outstanding input requests."""
        record = await self._lookup(ctx, params)
        responses = read_input_responses(params)
        if not record.terminal:
            try:
                # [ext-tasks:tasks#39] [ext-tasks:schema#6] only keys outstanding now are taken (others
                # ignored); [ext-tasks:tasks#40] a part of them leaves the task input_required for the rest
                taken = await self.store.answer(record.task_id, responses, wall=self.wall_clock())
            except LookupError:
                raise task_not_found(record.task_id, "Task has expired") from None
            ignored = sorted(set(responses) - set(taken))
            if ignored:
                log.info("task %s: ignored responses for keys not outstanding: %s", record.task_id, ignored)
        # [ext-tasks:tasks#35, #41] [ext-tasks:schema#7] an empty acknowledgement; the work takes the answers
        return {"resultType": "complete"}

    async def cancel(self, ctx: RequestContext, params: Any) -> dict[str, Any]:
        """``tasks/cancel``: the task becomes cancelled (unless it ended already), and its work stops."""
        record = await self._lookup(ctx, params)
        if not record.terminal:
            try:
                # the stored status changes first; the work stops as the store announces it, on
                # whichever replica runs it
                await self.store.move(
                    record.task_id, "cancelled", wall=self.wall_clock(), message="The task was cancelled by request."
                )
            except TaskConflict:
                pass  # [ext-tasks:tasks#45] it ended meanwhile: it keeps the status it reached
            except LookupError:
                raise task_not_found(record.task_id, "Task has expired") from None
            log.info("task %s cancelled by request", record.task_id)
        # [ext-tasks:tasks#43, #47] [ext-tasks:schema#8] an empty acknowledgement (a terminal task's too)
        return {"resultType": "complete"}

    # -- changes, from this process or another ---------------------------------------------------

    def _on_change(self, change: TaskChange) -> None:
        if change.task_id == RESYNC:
            # changes may have been missed (a shared store reconnected): every live task looks again
            for task_id in list(self._live):
                self.nursery.start_soon(self._refresh, task_id)
            return
        live = self._live.get(change.task_id)
        if live is None:
            return
        live.poke()
        if change.status is None or change.status in ("cancelled", "failed", "completed"):
            # cancelled (here or on another replica), expired, or ended: the work stops
            live.scope.cancel()

    async def _refresh(self, task_id: str) -> None:
        try:
            record = await self.store.get(task_id)
        except TaskStoreUnavailable:
            return
        live = self._live.get(task_id)
        if live is None:
            return
        live.poke()
        if record is None or record.terminal:
            live.scope.cancel()

    # -- expiry ----------------------------------------------------------------------------------

    def _ensure_expiry_loop(self) -> None:
        if not self._expiry_started:
            self._expiry_started = True
            self.nursery.start_soon(self._expiry_loop, name="mcp ext task expiry")

    async def _expiry_loop(self) -> None:
        while True:
            try:
                delay = await self.store.next_expiry()
            except TaskStoreUnavailable as e:
                log.warning("task expiry: the store is unavailable (%s)", e.detail)
                delay = _RECHECK
            if delay is None:
                delay = math.inf
            # new tasks (here or on other replicas) may expire sooner: looked at once a minute at most
            await trio.sleep(min(delay, 60.0))
            try:
                # the store decides what is past its ttl, by its own clock
                for task_id in await self.store.purge_expired():
                    log.info("task %s expired and was deleted", task_id)
            except TaskStoreUnavailable as e:
                log.warning("task expiry: the store is unavailable (%s)", e.detail)


def _capabilities_of(ctx: RequestContext) -> Any:
    exchange = getattr(ctx, "exchange", None)
    return exchange.meta.capabilities if exchange is not None else None


def _stopped_error() -> Error:
    return Error(code=int(ErrorCode.INTERNAL_ERROR), message=f"Task interrupted: {STOPPED_MESSAGE}")


class _NoSink:
    """A task's work writes nothing to the request that created it (it is answered)."""

    async def notify(self, data: bytes) -> None:
        return None

    async def answer(self, data: bytes, code: int | None) -> None:
        return None


class TaskWorkContext(ModernContext):
    """The context of a task's work: the creating request's context, with input through the task.

    ``ctx.elicit()``, ``ctx.sample()``, ``ctx.list_roots()`` and ``ctx.ask_all()``
    store their requests as the task's ``inputRequests`` (the task is
    ``input_required``) and return once ``tasks/update`` brought the answers.
    """

    def __init__(self, extension: TaskExtension, task_id: str, live: _Live, origin: ModernContext) -> None:
        super().__init__(
            origin.runtime,
            origin.exchange,
            live.scope,
            _NoSink(),
            auth=origin.auth,
            answers={},
            state=dict(origin.state),
        )
        self.params = origin.params
        self.extension = extension
        self.task_id = task_id
        self.live = live
        self._asked = 0

    @property
    def task_augmented(self) -> bool:
        return True

    # [ext-tasks:tasks#51] no progress and no log messages for a task (not on a listen stream, not at all)

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None

    async def flush_progress(self) -> None:
        return None

    async def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        return False

    async def notify(self, method: str, params: Any = None) -> None:
        log.debug("task %s: %s not sent (a task sends no notifications)", self.task_id, method)

    # -- input through the task ------------------------------------------------------------------

    def _key(self, method: str) -> str:
        # [ext-tasks:tasks#33, #34] a key names one request for the task's whole life: numbered
        # across the task, never reused (the store refuses a key used before, too)
        self._asked += 1
        return mrtr.default_key(method, self._asked)

    def _check(self, method: str, params: Any) -> None:
        missing = self._missing(method, params)
        if missing is not None:
            # never an input request the client cannot take: the task fails with -32021
            raise v.missing_capability(missing, what=f"a task of {self.method} asks the client for {method}")

    async def _gather(self, requests: Mapping[str, tuple[str, Any]]) -> None:
        """Store ``requests`` as the task's input requests and wait for every answer."""
        missing = {key: r for key, r in requests.items() if key not in self._answers}
        if not missing:
            return
        for method, params in missing.values():
            self._check(method, params)
        store = self.extension.store
        encoded = {key: _input_request(method, params) for key, (method, params) in missing.items()}
        # [ext-tasks:tasks#20] the task is input_required with these until they are answered
        await store.ask(self.task_id, encoded, wall=self.extension.wall_clock())
        waiting = set(missing)
        while waiting:
            changed = self.live.changed
            got = await store.take_responses(self.task_id, sorted(waiting))
            self._answers.update(got)
            waiting.difference_update(got)
            if not waiting:
                break
            with trio.move_on_after(_RECHECK if store.shared else math.inf):
                await changed.wait()

    async def elicit(self, params: Any, *, key: str | None = None, **options: Any) -> Any:
        # params that do not decode (or a URL never to send) are refused before the task asks,
        # as in a request: nothing goes to the store, and so to the client
        params = self._elicit_params(params)
        key = key if key is not None else self._key("elicitation/create")
        await self._gather({key: ("elicitation/create", params)})
        return await super().elicit(params, key=key)

    async def sample(self, params: Any, *, key: str | None = None, **options: Any) -> Any:
        params = self._sample_params(params)
        key = key if key is not None else self._key("sampling/createMessage")
        await self._gather({key: ("sampling/createMessage", params)})
        return await super().sample(params, key=key)

    async def list_roots(self, *, key: str | None = None, **options: Any) -> Any:
        key = key if key is not None else self._key("roots/list")
        await self._gather({key: ("roots/list", None)})
        return await super().list_roots(key=key)

    async def ask_all(self, requests: Mapping[str, tuple[str, Any]]) -> dict[str, Any]:
        """Several input requests at once: all outstanding together; the answers as they all came."""
        checked = {key: (method, self._checked(method, params)) for key, (method, params) in requests.items()}
        await self._gather(checked)
        return await super().ask_all(checked)

    def _checked(self, method: str, params: Any) -> Any:
        if method == "elicitation/create":
            return self._elicit_params(params)
        if method == "sampling/createMessage":
            return self._sample_params(params)
        if method == "roots/list":
            return None
        raise LocalProtocolError(f"{method} is not a request a server makes of a client while handling one")


def _input_request(method: str, params: Any) -> dict[str, Any]:
    encoded = converter_for(WRITE_AS).unstructure(params) if params is not None else {}
    return {"method": method, "params": encoded}


async def as_task(ctx: RequestContext, work: Work) -> Any:
    """Hand the rest of a ``tools/call`` handler's work to a task, when the request can take one.

    In a 2026-07-28 request that declared the extension, on a server with the
    extension, the task is created with ``work`` running as it and the call is
    answered with its ``CreateTaskResult``: this raises :class:`TaskCreated`, which
    the extension catches (write ``return await as_task(ctx, work)``). Otherwise
    (a 2025 session, whose own task machinery decided already; a client without
    the extension) ``work`` runs here and its
    result is returned: [ext-tasks:tasks#12] a handler may finish a multi
    round-trip exchange in the request and only then become a task. In the work
    of a task (the policy made the call a task at once) ``work`` runs there too.
    """
    if isinstance(ctx, TaskWorkContext):
        # the call is a task already (the policy made it one at once): the rest of the work runs here
        return await work(ctx)
    runtime = getattr(ctx, "runtime", None)
    extension = getattr(getattr(runtime, "server", None), "task_extension", None)
    if isinstance(ctx, ModernContext) and isinstance(extension, TaskExtension):
        if declares_extension(_capabilities_of(ctx)):
            raise TaskCreated(await extension.start(ctx, _tool_work(work)))
        tool = extension.server.tools.get(getattr(ctx.params, "name", "")) if extension.server else None
        execution = tool.execution if tool is not None else None
        if execution is not None and execution.task_support == "required":
            raise missing_extension(f"tool {tool.name!r} runs only as a task")  # type: ignore[union-attr]
    return await work(ctx)


def _tool_work(work: Work) -> Work:
    """``work`` of a tool handler: its value made a CallToolResult as the handler's would be
    (a ToolError: a result with isError, which completes the task)."""

    async def run(tctx: RequestContext) -> CallToolResult:
        try:
            value = await work(tctx)
        except ToolError as e:
            return CallToolResult(content=[TextContent(text=str(e))], is_error=True)
        return as_call_tool_result(value)

    return run
