"""schema.ts "Tasks" (new in 2025-11-25)."""

from typing import Literal

from attrs import field, frozen

from ._base import MEANINGFUL, NEW_IN_2025_11_25, REMOVED_IN_2026_07_28, install_model_methods, since, until
from .jsonrpc import NotificationParams, RequestId, RequestParams, Result
from .pagination import PaginatedRequestParams, PaginatedResult

__all__ = [
    "TaskStatus",
    "TERMINAL_STATUSES",
    "TaskMetadata",
    "RelatedTaskMetadata",
    "RELATED_TASK_META_KEY",
    "TaskAugmentedRequestParams",
    "Task",
    "CreateTaskResult",
    "GetTaskRequestParams",
    "GetTaskRequest",
    "GetTaskResult",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadRequest",
    "GetTaskPayloadResult",
    "CancelTaskRequestParams",
    "CancelTaskRequest",
    "CancelTaskResult",
    "ListTasksRequest",
    "ListTasksResult",
    "TaskStatusNotificationParams",
    "TaskStatusNotification",
]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
#: the ``_meta`` key that ties a message to a task (basic/utilities/tasks#related-task-metadata)
RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task"


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class TaskMetadata:
    """What a requestor asks for when augmenting a request with a task."""

    ttl: int | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class RelatedTaskMetadata:
    task_id: str


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class TaskAugmentedRequestParams(RequestParams):
    # a task-augmented request expects a CreateTaskResult: never silently a plain request
    # (core tasks are the io.modelcontextprotocol/tasks extension's from 2026-07-28 on)
    task: TaskMetadata | None = field(
        default=None, metadata={**NEW_IN_2025_11_25, **REMOVED_IN_2026_07_28, **MEANINGFUL}
    )


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class Task:
    """``ttl`` is required and nullable: null means unlimited retention."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class CreateTaskResult(Result):
    task: Task


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class GetTaskRequestParams(RequestParams):
    """Named here; inline in schema.ts (which lists no ``_meta``, see spec_notes/schema.md)."""

    task_id: str


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class GetTaskRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["tasks/get"] = "tasks/get"
    id: RequestId
    params: GetTaskRequestParams


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class GetTaskResult(Result):
    """Result & Task."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class GetTaskPayloadRequestParams(RequestParams):
    """Named here; inline in schema.ts (which lists no ``_meta``, see spec_notes/schema.md)."""

    task_id: str


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class GetTaskPayloadRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["tasks/result"] = "tasks/result"
    id: RequestId
    params: GetTaskPayloadRequestParams


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class GetTaskPayloadResult(Result):
    """The underlying request's result; its shape depends on that request.

    Open: every key of the original result is kept in ``extra``.
    """


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class CancelTaskRequestParams(RequestParams):
    """Named here; inline in schema.ts (which lists no ``_meta``, see spec_notes/schema.md)."""

    task_id: str


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class CancelTaskRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["tasks/cancel"] = "tasks/cancel"
    id: RequestId
    params: CancelTaskRequestParams


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class CancelTaskResult(Result):
    """Result & Task."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ListTasksRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["tasks/list"] = "tasks/list"
    id: RequestId
    params: PaginatedRequestParams | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ListTasksResult(PaginatedResult):
    tasks: list[Task]


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class TaskStatusNotificationParams(NotificationParams):
    """NotificationParams & Task."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | None = None
    poll_interval: int | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class TaskStatusNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/tasks/status"] = "notifications/tasks/status"
    params: TaskStatusNotificationParams


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
