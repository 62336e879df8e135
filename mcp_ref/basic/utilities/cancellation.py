"""basic/utilities/cancellation: which requests may be cancelled, and what is remembered (sans-IO).

The engine (:class:`~mcp_ref.connection.Connection`) asks this module before
it writes a ``notifications/cancelled`` and when one arrives; the trio
session (:mod:`mcp_ref.session.core`) carries out the outcome: it cancels the
handler's scope, drops the result of a cancelled request, stops waiting for
one of ours. Nothing here has a clock or does I/O.

* Sending (cancellation#1-#3): only a request of ours still in flight, never
  ``initialize``, never a task-augmented request (those end with
  ``tasks/cancel``): :func:`refusal`.
* Receiving (#2, #3, #5, #10): a cancellation naming no request, an unknown or
  finished one, ``initialize`` or a task-augmented request is ignored, with
  the reason: :meth:`CancellationState.ignore_reason`.
* Afterwards (#4, #6): we send no response to a request the peer cancelled;
  a response to a request we cancelled is late and ignored.
  :class:`CancellationState` remembers those ids (a bounded number, see
  :data:`MEMORY`) so that a late message is told from an unknown one.
"""

from collections import OrderedDict
from typing import Any, Protocol

from ...schema.jsonrpc import RequestId

__all__ = [
    "MEMORY",
    "remember",
    "refusal",
    "ignored_requirement",
    "CancellationState",
    "INITIALIZE_NEVER",
    "TASK_USES_TASKS_CANCEL",
]

#: how many cancelled / finished request ids (and progress tokens) a session
#: remembers to tell a late message from an unknown one
MEMORY = 1024

#: [basic/utilities/cancellation#2] why initialize is not cancelled
INITIALIZE_NEVER = "initialize is never cancelled"
#: [basic/utilities/cancellation#3] why a task-augmented request is not cancelled with a notification
TASK_USES_TASKS_CANCEL = "a task-augmented request is cancelled with tasks/cancel"


def remember(store: "OrderedDict[Any, Any]", key: Any, value: Any = None) -> None:
    """Put ``key`` in a bounded memory: the newest :data:`MEMORY` keys are kept."""
    store[key] = value
    store.move_to_end(key)
    while len(store) > MEMORY:
        store.popitem(last=False)


def refusal(method: str, task: bool) -> str | None:
    """Why our in-flight request ``method`` may not be cancelled with
    ``notifications/cancelled`` (``task``: it was task-augmented); None if it may."""
    if method == "initialize":
        # [basic/utilities/cancellation#2] the client never cancels initialize
        return INITIALIZE_NEVER
    if task:
        # [basic/utilities/cancellation#3] task-augmented requests are cancelled with tasks/cancel
        return TASK_USES_TASKS_CANCEL
    return None


def ignored_requirement(why: str) -> str | None:
    """The requirement the sender of a cancellation ignored for ``why`` broke
    (:meth:`CancellationState.ignore_reason`); None for the races the spec allows (#7)."""
    if why in ("no requestId", "unknown request id"):
        return "basic/utilities/cancellation#1"  # only requests of the same direction, in progress
    if why in ("initialize cannot be cancelled", INITIALIZE_NEVER):
        return "basic/utilities/cancellation#2"
    if why.startswith("task-augmented") or why == TASK_USES_TASKS_CANCEL:
        return "basic/utilities/cancellation#3"
    return None  # already finished, already cancelled: it crossed the response


class Cancellable(Protocol):
    """What :meth:`CancellationState.ignore_reason` reads of an incoming request."""

    @property
    def method(self) -> str: ...
    @property
    def task(self) -> bool: ...
    @property
    def state(self) -> str: ...


class CancellationState:
    """What one connection remembers for cancellation.

    ``cancelled``: our requests we cancelled or abandoned, id -> method (a
    response to one is late, #6; ids are never reused, basic/index#6);
    ``finished``: the peer's requests we answered or dropped (a cancellation
    for one came too late, #5). Both hold the newest :data:`MEMORY` ids.
    """

    __slots__ = ("cancelled", "finished", "tasks")

    def __init__(self) -> None:
        self.cancelled: OrderedDict[RequestId, str] = OrderedDict()
        self.finished: OrderedDict[RequestId, None] = OrderedDict()
        #: the task-augmented ones among ``cancelled``: no notification could stop them
        self.tasks: OrderedDict[RequestId, None] = OrderedDict()

    def cancelled_ours(self, rid: RequestId, method: str, task: bool = False) -> None:
        """We stopped waiting for our request ``rid``: a response to it is late.
        ``task``: it was task-augmented, so the peer may have started a task for it."""
        remember(self.cancelled, rid, method)
        if task:
            remember(self.tasks, rid)

    def orphan_task(self, rid: RequestId, result: Any) -> str | None:
        """The task id in a late ``result`` for our abandoned task-augmented request
        ``rid``, else None. [basic/utilities/cancellation#3] such a task can only be
        stopped with ``tasks/cancel``, and only once its id is known, which is now."""
        if rid not in self.tasks:
            return None
        del self.tasks[rid]
        if not isinstance(result, dict):
            return None
        task = result.get("task")
        task_id = task.get("taskId") if isinstance(task, dict) else None
        return task_id if isinstance(task_id, str) else None

    def finished_theirs(self, rid: RequestId) -> None:
        """The peer's request ``rid`` is answered or dropped: a cancellation of it is late."""
        remember(self.finished, rid)

    def late_response(self, rid: RequestId) -> str | None:
        """The method of our cancelled request ``rid`` (its response is ignored, #6), else None."""
        return self.cancelled.get(rid)

    def ignore_reason(self, rid: RequestId | None, req: Cancellable | None) -> str | None:
        """Why a ``notifications/cancelled`` for ``rid`` is ignored (``req``: the
        peer's request with that id still in flight, if any); None when it applies."""
        if rid is None:
            return "no requestId"
        if req is None:
            # [basic/utilities/cancellation#5, #10] unknown or already finished: ignore
            return "request already finished" if rid in self.finished else "unknown request id"
        if req.method == "initialize":
            return "initialize cannot be cancelled"  # [basic/utilities/cancellation#2]
        if req.task:
            return "task-augmented request: use tasks/cancel"  # [basic/utilities/cancellation#3]
        if req.state == "cancel-requested":
            return "already cancelled"
        return None
