"""The client side of the tasks extension: a task's handle, and waiting for its result.

A client opened with ``open_session(..., tasks_extension=True)`` declares the
extension on every request; a server may then answer a ``tools/call`` with a
task. ``client.call_tool()`` waits for the final result (polling underneath), as
a 2025-11-25 caller expects; :func:`call_tool` returns the :class:`TaskHandle`
instead, to poll, answer, cancel or wait for later::

    outcome = await call_tool(client, "batch", {"n": 3})
    if isinstance(outcome, TaskHandle):
        save(outcome.task_id)                       # [ext-tasks:tasks#17] the caller keeps the id
        ...
    handle = TaskHandle(client, saved_id)           # later, even in another process
    result = await handle.result()

This module talks to the client through ``client.session`` (its ``request``
and the input callbacks) only, so the session module can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import trio

from ...errors import MCPError, RemoteProtocolError
from ...schema._converter import converter_for, decode
from ...schema.tools import CallToolRequestParams, CallToolResult
from ...session.task_requestor import TaskCancelled
from .protocol import TERMINAL, WRITE_AS, is_task_result

__all__ = ["TaskHandle", "TaskCancelledError", "call_tool", "wait_for_result"]

_WRITER = converter_for(WRITE_AS)
#: the least time between two polls, whatever the server suggests (s)
MIN_POLL = 0.05
#: the polling interval when the server suggests none (s)
DEFAULT_POLL = 1.0


class TaskCancelledError(TaskCancelled):
    """The task was cancelled before it produced a result (``task_id``, ``status_message``).

    A :class:`mcp_ref.TaskCancelled`, as the 2025-11-25 core tasks raise: ``except
    TaskCancelled`` catches the cancellations of both eras.
    """


class TaskHandle:
    """A task of the extension: from a ``CreateTaskResult``, or from its id alone (a new process).

    ``await handle.get()`` is the task as ``tasks/get`` gives it (JSON);
    ``update``/``cancel`` send ``tasks/update``/``tasks/cancel``;
    ``await handle.result()`` polls until the task ends, answering its input
    requests with the client's callbacks, and returns the final result.
    """

    def __init__(self, client: Any, task_id: str, *, poll_interval_ms: int | None = None) -> None:
        """[ext-tasks:tasks#17] a task id is all it needs: one kept in durable storage resumes the
        polling after a crash or a restart, from any client of the same user."""
        #: the ClientSession the task's requests go through
        self.client = client
        self.task_id = task_id
        #: the polling interval the server suggested last (None: none yet)
        self.poll_interval_ms = poll_interval_ms
        #: the task as last seen
        self.last: dict[str, Any] | None = None
        #: the input request keys answered already (never answered twice)
        self.answered: set[str] = set()

    @classmethod
    def from_result(cls, client: Any, result: Mapping[str, Any]) -> TaskHandle:
        """The handle of the task a ``CreateTaskResult`` announced."""
        task_id = result.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise RemoteProtocolError("a CreateTaskResult without a taskId")
        handle = cls(client, task_id, poll_interval_ms=_interval(result))
        handle.last = dict(result)
        return handle

    def __repr__(self) -> str:
        status = self.last.get("status") if self.last else None
        return f"TaskHandle({self.task_id!r}, {status})"

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        # (over HTTP the request's Mcp-Name is the task id: the engine writes it)
        return await self.client.session.request(method, params)

    async def get(self) -> dict[str, Any]:
        """``tasks/get``: the task now (a DetailedTask as JSON)."""
        task = await self._request("tasks/get", {"taskId": self.task_id})
        if not isinstance(task, dict) or task.get("taskId") != self.task_id or "status" not in task:
            raise RemoteProtocolError(f"tasks/get answered with no task {self.task_id}: {task!r:.200}")
        self.last = task
        # [ext-tasks:tasks#14] [ext-tasks:schema#3] the interval may change: the newest one is used
        interval = _interval(task)
        if interval is not None:
            self.poll_interval_ms = interval
        return task

    async def update(self, responses: Mapping[str, Any]) -> None:
        """``tasks/update``: answers to the task's input requests, by key."""
        encoded = {key: r if isinstance(r, dict) else _WRITER.unstructure(r) for key, r in responses.items()}
        await self._request("tasks/update", {"taskId": self.task_id, "inputResponses": encoded})
        # [ext-tasks:tasks#38] keys answered are remembered: never answered twice
        self.answered.update(responses)

    async def cancel(self) -> None:
        """``tasks/cancel`` (an acknowledgement: the task may still end otherwise)."""
        # [ext-tasks:tasks#42] a task is cancelled with tasks/cancel, never notifications/cancelled
        await self._request("tasks/cancel", {"taskId": self.task_id})

    async def answer(self, task: Mapping[str, Any]) -> bool:
        """Answer the input requests of ``task`` (an input_required DetailedTask) not answered yet.

        [ext-tasks:tasks#31, #67] each goes to the callback that would answer it as a
        standalone request (the same guards, the same user-facing behaviour);
        [ext-tasks:tasks#32, #38] a key seen in an earlier poll and answered is not presented again.
        Returns whether anything was sent.
        """
        requests = task.get("inputRequests")
        if not isinstance(requests, dict):
            raise RemoteProtocolError(f"task {self.task_id} is input_required without inputRequests")
        fresh = {key: request for key, request in requests.items() if key not in self.answered}
        if not fresh:
            return False
        answers = await self.client.session._fulfil("tools/call", None, fresh, 0)
        # [ext-tasks:tasks#29] the answers go back with tasks/update
        await self.update(answers)
        return True

    def _delay(self) -> float:
        # [ext-tasks:tasks#13] [ext-tasks:schema#2] the server's interval is honoured (never below a floor)
        interval = self.poll_interval_ms
        return max(MIN_POLL, interval / 1000) if interval is not None else DEFAULT_POLL

    async def wait(self, *, answer_inputs: bool = True) -> dict[str, Any]:
        """Poll until the task is terminal (answering its input requests); the terminal task."""
        task = self.last if self.last is not None and self.last.get("resultType") != "task" else None
        while True:
            if task is None:
                task = await self.get()
            status = task.get("status")
            if status in TERMINAL:
                return task
            # [ext-tasks:tasks#29, #30] input requests answered, then the task observed again until it ends
            if status == "input_required" and answer_inputs and await self.answer(task):
                task = None
                continue
            # [ext-tasks:tasks#16] polled until it ends
            await trio.sleep(self._delay())
            task = None

    async def result(self) -> CallToolResult:
        """The task's final result: a completed task's result; MCPError for a failed one
        (its JSON-RPC error), TaskCancelledError for a cancelled one."""
        task = await self.wait()
        status = task["status"]
        if status == "completed":
            result = task.get("result")
            if not isinstance(result, dict):
                raise RemoteProtocolError(f"completed task {self.task_id} without a result")
            decoded: CallToolResult = decode(result, CallToolResult)
            return decoded
        if status == "failed":
            error = task.get("error")
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                raise RemoteProtocolError(f"failed task {self.task_id} without a JSON-RPC error")
            raise MCPError(error["code"], str(error.get("message", "")), error.get("data"))
        raise TaskCancelledError(self.task_id, task.get("statusMessage"))


def _interval(task: Mapping[str, Any]) -> int | None:
    value = task.get("pollIntervalMs")
    return value if type(value) is int and value > 0 else None


async def call_tool(
    client: Any, name: str, arguments: Mapping[str, Any] | None = None, *, meta: Mapping[str, Any] | None = None
) -> CallToolResult | TaskHandle:
    """Call a tool; the result, or the handle of the task the server made of the call."""
    params = CallToolRequestParams(
        name=name,
        arguments=dict(arguments) if arguments is not None else None,
        meta=dict(meta) if meta is not None else None,
    )
    result = await client.session.request("tools/call", params)
    if is_task_result(result):
        # [ext-tasks:tasks#3] either shape may come back: a task is handed over as its handle
        return TaskHandle.from_result(client, result)
    if not isinstance(result, CallToolResult):
        raise RemoteProtocolError(f"tools/call answered with {type(result).__name__}")
    return result


async def wait_for_result(client: Any, result: Mapping[str, Any]) -> CallToolResult:
    """The final result of the task a ``CreateTaskResult`` announced (polling underneath).

    [ext-tasks:tasks#3] what ``ClientSession.call_tool`` does with a task: the caller
    gets the result it asked for, as from a server that answered at once."""
    return await TaskHandle.from_result(client, result).result()
