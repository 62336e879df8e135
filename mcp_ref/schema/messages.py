"""schema.ts "Client messages" / "Server messages", and the method tables.

The engine looks methods up here: which request class a method decodes to,
per direction; its params and result types; whether it may be task-augmented;
and the revision it first exists in. A method both sides send (``ping``,
``tasks/*``, ``notifications/cancelled`` / ``progress`` / ``tasks/status``) is
in both directions' tables. tests/schema/test_messages.py holds the tables
against the spec's methods.tsv and the three schema.json files.
"""

from typing import Any, get_args

from ._base import since_of
from .cancellation import CancelledNotification, CancelledNotificationParams
from .completion import CompleteRequest, CompleteRequestParams, CompleteResult
from .elicitation import (
    ElicitationCompleteNotification,
    ElicitationCompleteNotificationParams,
    ElicitRequest,
    ElicitRequestParams,
    ElicitResult,
)
from .jsonrpc import NotificationParams, RequestParams, Result
from .lifecycle import InitializedNotification, InitializeRequest, InitializeRequestParams, InitializeResult
from .logging import (
    LoggingMessageNotification,
    LoggingMessageNotificationParams,
    SetLevelRequest,
    SetLevelRequestParams,
)
from .pagination import PaginatedRequestParams
from .ping import PingRequest
from .progress import ProgressNotification, ProgressNotificationParams
from .prompts import (
    GetPromptRequest,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsRequest,
    ListPromptsResult,
    PromptListChangedNotification,
)
from .resources import (
    ListResourcesRequest,
    ListResourcesResult,
    ListResourceTemplatesRequest,
    ListResourceTemplatesResult,
    ReadResourceRequest,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    ResourceUpdatedNotificationParams,
    SubscribeRequest,
    SubscribeRequestParams,
    UnsubscribeRequest,
    UnsubscribeRequestParams,
)
from .roots import ListRootsRequest, ListRootsResult, RootsListChangedNotification
from .sampling import CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult
from .tasks import (
    CancelTaskRequest,
    CancelTaskRequestParams,
    CancelTaskResult,
    GetTaskPayloadRequest,
    GetTaskPayloadRequestParams,
    GetTaskPayloadResult,
    GetTaskRequest,
    GetTaskRequestParams,
    GetTaskResult,
    ListTasksRequest,
    ListTasksResult,
    TaskStatusNotification,
    TaskStatusNotificationParams,
)
from .tools import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    ListToolsRequest,
    ListToolsResult,
    ToolListChangedNotification,
)

__all__ = [
    "ClientRequest",
    "ClientNotification",
    "ClientResult",
    "ServerRequest",
    "ServerNotification",
    "ServerResult",
    "CLIENT_REQUESTS",
    "SERVER_REQUESTS",
    "CLIENT_NOTIFICATIONS",
    "SERVER_NOTIFICATIONS",
    "PARAMS_TYPES",
    "RESULT_TYPES",
    "TASK_AUGMENTABLE",
    "KNOWN_METHODS",
    "method_since",
]

ClientRequest = (
    InitializeRequest
    | PingRequest
    | ListResourcesRequest
    | ListResourceTemplatesRequest
    | ReadResourceRequest
    | SubscribeRequest
    | UnsubscribeRequest
    | ListPromptsRequest
    | GetPromptRequest
    | ListToolsRequest
    | CallToolRequest
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest
    | SetLevelRequest
    | CompleteRequest
)
ClientNotification = (
    CancelledNotification
    | InitializedNotification
    | ProgressNotification
    | TaskStatusNotification
    | RootsListChangedNotification
)
ClientResult = (
    Result
    | GetTaskResult
    | GetTaskPayloadResult
    | CancelTaskResult
    | ListTasksResult
    | CreateMessageResult
    | ListRootsResult
    | ElicitResult
)
ServerRequest = (
    PingRequest
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest
    | CreateMessageRequest
    | ListRootsRequest
    | ElicitRequest
)
ServerNotification = (
    CancelledNotification
    | ProgressNotification
    | ResourceListChangedNotification
    | ResourceUpdatedNotification
    | PromptListChangedNotification
    | ToolListChangedNotification
    | TaskStatusNotification
    | LoggingMessageNotification
    | ElicitationCompleteNotification
)
ServerResult = (
    Result
    | InitializeResult
    | ListResourcesResult
    | ListResourceTemplatesResult
    | ReadResourceResult
    | ListPromptsResult
    | GetPromptResult
    | ListToolsResult
    | CallToolResult
    | GetTaskResult
    | GetTaskPayloadResult
    | CancelTaskResult
    | ListTasksResult
    | CompleteResult
)


def _method(cls: type) -> str:
    return str(cls.__attrs_attrs__.method.default)  # type: ignore[attr-defined]


def _table(union: Any) -> dict[str, type]:
    return {_method(cls): cls for cls in get_args(union)}


#: method -> request class, for requests a client sends (a server receives)
CLIENT_REQUESTS: dict[str, type] = _table(ClientRequest)
#: method -> request class, for requests a server sends (a client receives)
SERVER_REQUESTS: dict[str, type] = _table(ServerRequest)
CLIENT_NOTIFICATIONS: dict[str, type] = _table(ClientNotification)
SERVER_NOTIFICATIONS: dict[str, type] = _table(ServerNotification)

#: method -> params type (a union for elicitation/create; the params class of
#: a notification too)
PARAMS_TYPES: dict[str, Any] = {
    "initialize": InitializeRequestParams,
    "ping": RequestParams,
    "resources/list": PaginatedRequestParams,
    "resources/templates/list": PaginatedRequestParams,
    "resources/read": ReadResourceRequestParams,
    "resources/subscribe": SubscribeRequestParams,
    "resources/unsubscribe": UnsubscribeRequestParams,
    "prompts/list": PaginatedRequestParams,
    "prompts/get": GetPromptRequestParams,
    "tools/list": PaginatedRequestParams,
    "tools/call": CallToolRequestParams,
    "tasks/get": GetTaskRequestParams,
    "tasks/result": GetTaskPayloadRequestParams,
    "tasks/cancel": CancelTaskRequestParams,
    "tasks/list": PaginatedRequestParams,
    "logging/setLevel": SetLevelRequestParams,
    "completion/complete": CompleteRequestParams,
    "sampling/createMessage": CreateMessageRequestParams,
    "roots/list": RequestParams,
    "elicitation/create": ElicitRequestParams,
    "notifications/cancelled": CancelledNotificationParams,
    "notifications/initialized": NotificationParams,
    "notifications/progress": ProgressNotificationParams,
    "notifications/tasks/status": TaskStatusNotificationParams,
    "notifications/roots/list_changed": NotificationParams,
    "notifications/resources/list_changed": NotificationParams,
    "notifications/resources/updated": ResourceUpdatedNotificationParams,
    "notifications/prompts/list_changed": NotificationParams,
    "notifications/tools/list_changed": NotificationParams,
    "notifications/message": LoggingMessageNotificationParams,
    "notifications/elicitation/complete": ElicitationCompleteNotificationParams,
}

#: method -> result class (EmptyResult methods answer a plain Result)
RESULT_TYPES: dict[str, type] = {
    "initialize": InitializeResult,
    "ping": Result,
    "resources/list": ListResourcesResult,
    "resources/templates/list": ListResourceTemplatesResult,
    "resources/read": ReadResourceResult,
    "resources/subscribe": Result,
    "resources/unsubscribe": Result,
    "prompts/list": ListPromptsResult,
    "prompts/get": GetPromptResult,
    "tools/list": ListToolsResult,
    "tools/call": CallToolResult,
    "tasks/get": GetTaskResult,
    "tasks/result": GetTaskPayloadResult,
    "tasks/cancel": CancelTaskResult,
    "tasks/list": ListTasksResult,
    "logging/setLevel": Result,
    "completion/complete": CompleteResult,
    "sampling/createMessage": CreateMessageResult,
    "roots/list": ListRootsResult,
    "elicitation/create": ElicitResult,
}

#: methods whose params may carry ``task`` (basic/utilities/tasks)
TASK_AUGMENTABLE: frozenset[str] = frozenset({"tools/call", "sampling/createMessage", "elicitation/create"})

_ALL = {**CLIENT_REQUESTS, **SERVER_REQUESTS, **CLIENT_NOTIFICATIONS, **SERVER_NOTIFICATIONS}
#: every method of every revision, either direction (one outside it is unknown to MCP)
KNOWN_METHODS: frozenset[str] = frozenset(_ALL)
#: read for every message the engine sends or receives: worked out once
_SINCE = {method: since_of(cls) for method, cls in _ALL.items()}


def method_since(method: str) -> str:
    """The revision ``method`` first exists in (KeyError for a method MCP does not have)."""
    return _SINCE[method]
