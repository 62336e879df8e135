"""The wire rules of the tasks extension, without I/O (``io.modelcontextprotocol/tasks``).

What a task looks like on the wire (a ``CreateTaskResult``, a ``DetailedTask``
as ``tasks/get`` answers it), which requests may become tasks, who declared
the extension, and the errors the extension defines. The runtimes
(:mod:`.server`, :mod:`.client`) build on it; the requirement ids are those of
the ``ext-tasks`` manifest (``spec_notes/ext-tasks/requirements.toml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypeGuard

from ...basic import versioning as v
from ...basic.utilities.tasks import TaskRecord, iso8601
from ...errors import ErrorCode, ProtocolError
from ...exchange import MODERN_REVISION, TASK_REQUESTS, TASKS_EXTENSION
from ...schema._base import LATEST_PROTOCOL_VERSION, REVISIONS
from ...schema._converter import converter_for
from ...schema.jsonrpc import Error

__all__ = [
    "EXTENSION_ID",
    "METHODS",
    "TASK_REQUESTS",
    "TERMINAL",
    "declares_extension",
    "missing_extension",
    "create_task_result",
    "detailed_task",
    "is_task_result",
    "task_not_found",
    "read_task_id",
    "read_input_responses",
    "encode_outcome",
]

#: the extension's identifier (capabilities, the -32021 error's data)
EXTENSION_ID: Final = TASKS_EXTENSION
#: [ext-tasks:tasks#6] the requests the extension adds: any request may become a task the day a
#: revision says so (TASK_REQUESTS is data, not a branch in the runtime)
METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
#: the revision results are written in (the engine's: the data model's own 2026-07-28 once it has it)
WRITE_AS: Final = MODERN_REVISION if MODERN_REVISION in REVISIONS else LATEST_PROTOCOL_VERSION


def declares_extension(capabilities: Any) -> bool:
    """Whether a request's ``_meta`` client capabilities (JSON) declare the extension.

    [ext-tasks:tasks#2] only the request's own declaration counts, never an earlier one's."""
    if type(capabilities) is not dict:
        return False
    extensions = capabilities.get("extensions")
    return type(extensions) is dict and isinstance(extensions.get(EXTENSION_ID), dict)


def missing_extension(what: str) -> ProtocolError:
    """-32021 naming the extension in ``data.requiredCapabilities`` ([ext-tasks:tasks#5, #57])."""
    return v.missing_capability(("extensions", EXTENSION_ID), what=what)


def task_not_found(task_id: str, why: str = "Task not found") -> ProtocolError:
    """[ext-tasks:tasks#53, #54, #55] an unknown (or foreign, or expired) task: -32602, saying which
    ([ext-tasks:tasks#58] an informative message)."""
    return ProtocolError(f"Failed to retrieve task: {why}", ErrorCode.INVALID_PARAMS, {"taskId": task_id})


def read_task_id(params: Any) -> str:
    """``params.taskId`` of a tasks/* request (typed params or the JSON object); -32602 if absent."""
    task_id = params.get("taskId") if isinstance(params, Mapping) else getattr(params, "task_id", None)
    if not isinstance(task_id, str) or not task_id:
        raise ProtocolError("Invalid params: taskId must be a non-empty string", ErrorCode.INVALID_PARAMS)
    return task_id


def read_input_responses(params: Any) -> dict[str, Any]:
    """``params.inputResponses`` of tasks/update: a JSON object (-32602 otherwise)."""
    responses = params.get("inputResponses") if isinstance(params, Mapping) else None
    if type(responses) is not dict:
        raise ProtocolError("Invalid params: inputResponses must be an object", ErrorCode.INVALID_PARAMS)
    return responses


def encode_outcome(outcome: Any) -> dict[str, Any]:
    """A task's outcome as JSON: a result object (2026-07-28 encoding) or a JSON-RPC error."""
    if isinstance(outcome, Error):
        error: dict[str, Any] = {"code": outcome.code, "message": outcome.message}
        if outcome.data is not None:
            error["data"] = outcome.data
        return error
    if isinstance(outcome, dict):
        return dict(outcome)
    encoded = converter_for(WRITE_AS).unstructure(outcome)
    if type(encoded) is not dict:
        raise TypeError(f"a task's result is a JSON object, not {type(encoded).__name__}")
    return encoded


def _task_fields(record: TaskRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": iso8601(record.created_at),
        "lastUpdatedAt": iso8601(record.last_updated_at),
        # integer milliseconds, null for unlimited
        "ttlMs": record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        out["pollIntervalMs"] = record.poll_interval_ms
    if record.status_message is not None:
        out["statusMessage"] = record.status_message
    return out


def create_task_result(record: TaskRecord) -> dict[str, Any]:
    """The ``CreateTaskResult`` of a stored task: the Task's fields, flat.

    [ext-tasks:tasks#7] [ext-tasks:schema#4] ``resultType`` is ``"task"``; no result, error,
    input requests or request state (they belong to ``tasks/get``)."""
    return {"resultType": "task", **_task_fields(record)}


def detailed_task(record: TaskRecord) -> dict[str, Any]:
    """The ``DetailedTask`` of ``record``: what ``tasks/get`` answers and ``notifications/tasks`` carries.

    [ext-tasks:tasks#18] by the stored status: [ext-tasks:tasks#19] working as it is;
    [ext-tasks:tasks#20, #21] input_required with every outstanding input request;
    [ext-tasks:tasks#22] completed with its result; [ext-tasks:tasks#24, #59, #62] failed with
    its JSON-RPC error; [ext-tasks:tasks#23] cancelled as it is. [ext-tasks:tasks#25]
    [ext-tasks:schema#5] resultType complete.
    """
    out = {"resultType": "complete", **_task_fields(record)}
    status = record.status
    if status == "input_required":
        out["inputRequests"] = dict(record.input_requests or {})
    elif status == "completed":
        # [ext-tasks:tasks#63] the result as the request would have returned it (isError or not)
        out["result"] = encode_outcome(record.outcome) if record.outcome is not None else {}
    elif status == "failed":
        outcome = record.outcome
        if not isinstance(outcome, Error):
            outcome = Error(code=int(ErrorCode.INTERNAL_ERROR), message=record.status_message or "Internal error")
        out["error"] = encode_outcome(outcome)
    return out


def is_task_result(result: Any) -> TypeGuard[dict[str, Any]]:
    """Whether a result (JSON) is a ``CreateTaskResult`` ([ext-tasks:tasks#3] the client checks every one)."""
    return isinstance(result, dict) and result.get("resultType") == "task"
