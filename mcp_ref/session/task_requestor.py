"""The tasks runtime of a requestor (basic/utilities/tasks): what we ask a peer to run.

:func:`start_task` (``ClientSession.call_tool_as_task``,
``RequestContext.request_task``) sends a task-augmented request and returns a
:class:`TaskHandle` to poll, wait for, fetch or cancel; :func:`list_tasks`
pages through the tasks a peer runs for us. The receiver's runtime is
:mod:`mcp_ref.session.tasks`, the chapter's rules :mod:`mcp_ref.basic.utilities.tasks`.

This module sits below :mod:`mcp_ref.session.core` (whose ``RequestContext``
offers ``request_task``) and so never imports it: what it needs of a session
is the :class:`RequestorSession` protocol, which ``Session`` satisfies.
"""

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import attrs
import trio

from ..basic.utilities.progress import ProgressCallback
from ..basic.utilities.tasks import is_terminal, poll_delay
from ..connection import Connection
from ..errors import LocalProtocolError, MCPError, MCPRefError, RequestTimeout
from ..schema._converter import decode
from ..schema.jsonrpc import RequestId
from ..schema.messages import RESULT_TYPES
from ..schema.pagination import PaginatedRequestParams
from ..schema.tasks import (
    CancelTaskRequestParams,
    CreateTaskResult,
    GetTaskPayloadRequestParams,
    GetTaskPayloadResult,
    GetTaskRequestParams,
    ListTasksResult,
    Task,
    TaskMetadata,
)

__all__ = ["RequestorSession", "TaskHandle", "TaskFailed", "TaskCancelled", "start_task", "list_tasks"]

log = logging.getLogger("mcp_ref.tasks")


class _Timeouts(Protocol):
    @property
    def request_timeout(self) -> float: ...
    @property
    def cancel_grace(self) -> float: ...


class _Pending(Protocol):
    @property
    def id(self) -> RequestId: ...
    async def result(self) -> Any: ...


class RequestorSession(Protocol):
    """What the requestor side needs of a session (:class:`mcp_ref.session.core.Session` is one)."""

    @property
    def connection(self) -> Connection: ...
    @property
    def config(self) -> _Timeouts: ...
    @property
    def task_progress(self) -> dict[RequestId, ProgressCallback]: ...
    @property
    def request(self) -> Callable[..., Awaitable[Any]]: ...
    @property
    def start_request(self) -> Callable[..., Awaitable[_Pending]]: ...


class TaskFailed(MCPError):
    """(requestor) the task ended in a JSON-RPC error; ``tasks/result`` returned it."""


class TaskCancelled(MCPRefError):
    """(requestor) the task was cancelled (its status is ``cancelled``): it has no result.

    Raised by :meth:`TaskHandle.result` and :meth:`TaskHandle.wait` instead of
    :class:`TaskFailed`, whatever error the receiver's ``tasks/result`` gave for it.
    ``status_message`` is the receiver's ``statusMessage``, if any.
    """

    def __init__(self, task_id: str, status_message: str | None = None) -> None:
        super().__init__(f"task {task_id} was cancelled" + (f": {status_message}" if status_message else ""))
        #: the id of the task that was cancelled
        self.task_id = task_id
        #: the receiver's message with the cancellation, if any
        self.status_message = status_message


class _TaskProgress:
    """A task's progress callback. After the CreateTaskResult the session's
    notification worker runs it: an exception there must not end the session,
    so it is handed to the task's handle, which raises it to its caller."""

    def __init__(self, callback: ProgressCallback) -> None:
        self.callback = callback
        self.error: Exception | None = None
        self.handle: TaskHandle | None = None

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if self.error is not None:
            return
        try:
            await self.callback(progress, total, message)
        except Exception as exc:
            self.error = exc
            if self.handle is not None:
                self.handle._callback_failed()


class TaskHandle:
    """A task we asked a peer to run.

    If its progress callback raises, the task is cancelled (``tasks/cancel``)
    and the exception is raised from the handle's ``wait()``, ``get()`` or
    ``result()`` in progress or next called (once; it stays in
    ``callback_error``).
    """

    def __init__(
        self,
        session: RequestorSession,
        method: str,
        task: Task,
        progress_token: Any,
        request_id: Any = None,
        progress: _TaskProgress | None = None,
    ) -> None:
        #: the session the task was created on
        self.session = session
        #: the id of the request that created the task
        self.request_id = request_id
        #: the method of the request the task runs
        self.method = method
        #: the task as last seen (its status, poll interval, time to live ...)
        self.task = task
        #: the task's id
        self.task_id = task.task_id
        #: the progress token of the request, when it asked for progress
        self.progress_token = progress_token
        #: the class the task's result is decoded as
        self.result_type = RESULT_TYPES[method]
        self._progress = progress
        self._interrupts: set[trio.CancelScope] = set()
        self._error_raised = False
        if progress is not None:
            progress.handle = self
            if progress.error is not None:
                self._callback_failed()

    @property
    def callback_error(self) -> Exception | None:
        """What the progress callback raised, if it did."""
        return self._progress.error if self._progress is not None else None

    def _callback_failed(self) -> None:
        """The progress callback raised: no more progress; interrupt whatever waits."""
        self._release()
        for scope in self._interrupts:
            scope.cancel(reason="the task's progress callback raised")

    async def _raise_callback_error(self) -> None:
        error = self.callback_error
        if error is None or self._error_raised:
            return
        self._error_raised = True
        # shielded (the caller's wait is being interrupted), bounded by the cancellation grace
        with trio.CancelScope(shield=True):
            try:
                await self.cancel(timeout=self.session.config.cancel_grace)
            except MCPRefError as e:
                log.info("could not cancel task %s after its progress callback failed: %s", self.task_id, e)
        raise error

    async def _interruptible(self, awaitable: Awaitable[Any]) -> Any:
        """Await ``awaitable``; if the progress callback raises meanwhile, interrupt it and raise that."""
        scope = trio.CancelScope()
        self._interrupts.add(scope)
        try:
            with scope:
                return await awaitable
        finally:
            self._interrupts.discard(scope)
        await self._raise_callback_error()  # only reached when interrupted
        raise AssertionError("interrupted without a callback error")

    async def _call(self, method: str, params: Any, **options: Any) -> Any:
        """A request about this task, interrupted if the progress callback raises meanwhile."""
        if self._progress is None:
            # no progress callback: nothing can interrupt the request (no scope to enter)
            return await self.session.request(method, params, **options)
        await self._raise_callback_error()
        return await self._interruptible(self.session.request(method, params, **options))

    @property
    def status(self) -> str:
        """The task's status as last seen: ``working``, ``input_required``, ``completed``, ``failed``
        or ``cancelled``."""
        return self.task.status

    def _update(self, task: Any) -> Task:
        previous = self.task.status
        # (a GetTaskResult or CancelTaskResult: the Task fields, by name)
        self.task = Task(
            task_id=task.task_id,
            status=task.status,
            created_at=task.created_at,
            last_updated_at=task.last_updated_at,
            ttl=task.ttl,
            status_message=task.status_message,
            poll_interval=task.poll_interval,
        )
        if self.task.status != previous:
            log.info("task %s is now %s", self.task_id, self.task.status)
        if is_terminal(self.task.status):
            self._release()
        return self.task

    def _release(self) -> None:
        if self.progress_token is not None:
            self.session.connection.release_task_token(self.progress_token)
        self.session.task_progress.pop(self.request_id, None)

    async def get(self, **options: Any) -> Task:
        """``tasks/get``: the task's current state."""
        result = await self._call("tasks/get", GetTaskRequestParams(task_id=self.task_id), **options)
        return self._update(result)

    async def result(self, **options: Any) -> Any:
        """``tasks/result``: blocks until terminal; the underlying result, typed, or TaskFailed."""
        try:
            payload: GetTaskPayloadResult = await self._call(
                "tasks/result", GetTaskPayloadRequestParams(task_id=self.task_id), **options
            )
        except MCPError as e:
            if await self._was_cancelled(**options):
                # [basic/utilities/tasks#task-cancellation] cancelled is not failed: no result to give
                raise TaskCancelled(self.task_id, self.task.status_message) from e
            raise TaskFailed(e.code, e.message, e.data) from e
        data = dict(payload.extra)
        meta = {k: v for k, v in (payload.meta or {}).items() if k != "io.modelcontextprotocol/related-task"}
        if meta:
            data["_meta"] = meta
        self._release()
        return decode(data, self.result_type)

    async def _was_cancelled(self, **options: Any) -> bool:
        """After tasks/result gave an error: is the task cancelled (as known, or as tasks/get says)?"""
        if self.task.status == "cancelled":
            return True
        if is_terminal(self.task.status):
            return False
        try:
            return (await self.get(**options)).status == "cancelled"
        except MCPRefError:
            return False  # the task is gone (expired, unknown): the error stands as it came

    async def cancel(self, **options: Any) -> Task:
        """``tasks/cancel`` (basic/utilities/cancellation#3: not notifications/cancelled)."""
        result = await self.session.request("tasks/cancel", CancelTaskRequestParams(task_id=self.task_id), **options)
        # [basic/utilities/tasks#64] the final state comes from this answer: never fetched again
        return self._update(result)

    def _result_options(self, task: Task, options: dict[str, Any]) -> dict[str, Any]:
        """tasks/result blocks until the task is terminal: the request timeout
        alone would give up on any task that runs longer, so the wait is bounded
        by the task's ttl (the receiver answers by then, tasks#ttl-and-resource-management)."""
        if "timeout" in options or task.ttl is None:
            return options
        bound = task.ttl / 1000 + self.session.config.request_timeout
        return {"max_timeout": bound, **options, "timeout": bound}

    async def wait(
        self,
        *,
        default_poll_interval: float = 1.0,
        poll_interval_bounds: tuple[float, float] = (0.1, math.inf),
        max_wait: float | None = None,
        **options: Any,
    ) -> Any:
        """Poll ``tasks/get`` respecting ``pollInterval`` until terminal (or
        ``input_required``, then ``tasks/result`` delivers the input requests),
        and return the result.

        The peer's ``pollInterval`` (``default_poll_interval`` seconds when it
        gives none) is kept within ``poll_interval_bounds`` (seconds). By default
        only a floor applies: a 0 would be a busy loop, and polling less often than
        suggested never burdens the receiver; a longer interval is respected as
        given (tasks#42), however long -- bound the whole wait with ``max_wait``
        (trio.TooSlowError after that many seconds) or pass an upper bound.
        """
        low, high = poll_interval_bounds
        if not 0 < low <= high:
            raise ValueError("poll_interval_bounds must be (low, high) with 0 < low <= high")
        with trio.fail_after(max_wait) if max_wait is not None else trio.CancelScope():
            return await self._interruptible(self._poll(default_poll_interval, low, high, options))

    async def _poll(self, default_poll_interval: float, low: float, high: float, options: dict[str, Any]) -> Any:
        while True:
            # [basic/utilities/tasks#20] we poll; status notifications are not waited for -- tasks#getting-tasks
            task = await self.get(**options)
            # [basic/utilities/tasks#14] until terminal, or input_required
            if is_terminal(task.status) or task.status == "input_required":
                # [basic/utilities/tasks#34] call tasks/result then
                try:
                    return await self.result(**self._result_options(task, options))
                except RequestTimeout:
                    # still not terminal after all that time (no ttl): back to polling
                    log.debug("tasks/result for task %s timed out; polling again", self.task_id)
            # [basic/utilities/tasks#13, #42] respect pollInterval, within sane bounds
            await trio.sleep(poll_delay(task.poll_interval, default_poll_interval, low, high))


async def list_tasks(session: RequestorSession, cursor: str | None = None, **options: Any) -> ListTasksResult:
    """``tasks/list`` to the peer: one page of the tasks it runs for us (cursor stays opaque)."""
    params = PaginatedRequestParams(cursor=cursor) if cursor is not None else None
    result: ListTasksResult = await session.request("tasks/list", params, **options)
    return result


async def start_task(
    session: RequestorSession,
    method: str,
    params: Any,
    *,
    ttl: int | None = None,
    progress: ProgressCallback | None = None,
    **options: Any,
) -> TaskHandle:
    """Send ``method`` task-augmented and return its handle once the task exists.

    ``progress`` keeps receiving the task's progress after the CreateTaskResult
    (the token stays valid until the task is terminal, progress#9).
    """
    if not hasattr(params, "task"):
        raise LocalProtocolError(f"{method} cannot be task-augmented")
    # [basic/utilities/tasks#10] the request, task-augmented, with the ttl asked for (if any)
    params = attrs.evolve(params, task=task_metadata(ttl))
    return await start_augmented(session, method, params, progress=progress, **options)


def task_metadata(ttl: int | None) -> TaskMetadata:
    """The ``task`` param of a task-augmented request: the ttl asked for (None lets the receiver choose)."""
    if ttl is not None and (type(ttl) is not int or ttl < 1):
        # a ttl is a positive number of milliseconds (TaskMetadata)
        raise ValueError(f"ttl must be a positive integer of milliseconds or None, not {ttl!r}")
    return TaskMetadata(ttl=ttl)


async def start_augmented(
    session: RequestorSession, method: str, params: Any, *, progress: ProgressCallback | None = None, **options: Any
) -> TaskHandle:
    """:func:`start_task` for ``params`` that already carry their ``task`` (:func:`task_metadata`)."""
    pending = await session.start_request(method, params, progress=progress, **options)
    out = session.connection.outgoing(pending.id)
    token = out.progress_token if out is not None else None
    guard = _TaskProgress(progress) if progress is not None else None
    if guard is not None:
        session.task_progress[pending.id] = guard
    try:
        result: CreateTaskResult = await pending.result()
    except BaseException:
        session.task_progress.pop(pending.id, None)
        raise
    # [basic/utilities/tasks#83] requestors log the lifecycle too
    log.info("task %s started by the peer for our %s (ttl %s ms)", result.task.task_id, method, result.task.ttl)
    return TaskHandle(session, method, result.task, token, pending.id, guard)
