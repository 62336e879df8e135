"""schema.ts "Client messages" / "Server messages", and the method tables.

The engine looks methods up here: which request class a method decodes to,
per direction; its params and result types; whether it may be task-augmented;
and the revision it first exists in. A method both sides send (``ping``,
``tasks/*``, ``notifications/cancelled`` / ``progress`` / ``tasks/status``) is
in both directions' tables. tests/schema/test_messages.py holds the tables
against the spec's methods.tsv and the three schema.json files.

:data:`METHODS` names each method's classes by the chapter (module) that
defines them; a table imports that chapter the first time the method is
looked up in it (``CLIENT_REQUESTS["tools/call"]``), so a session builds the
classes of the methods it uses only (bench W7: a tools-only server never
builds those of sampling, elicitation, resources or prompts). The unions of
schema.ts (``ClientRequest`` ...) are built, with every chapter, on first use.
"""

import importlib
from collections.abc import Iterable, Iterator
from typing import Any

from ._base import since_of

__all__ = [  # (the unions are built on first use: see __getattr__)
    "ClientRequest",  # noqa: F822
    "ClientNotification",  # noqa: F822
    "ClientResult",  # noqa: F822
    "ServerRequest",  # noqa: F822
    "ServerNotification",  # noqa: F822
    "ServerResult",  # noqa: F822
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

#: method -> (chapter, its request or notification class, its params type, its result
#: class; None for a notification). A bare name is in the method's chapter, "module.Name"
#: in another one (EmptyResult methods answer a plain ``Result``; a notification's params
#: are its params class, or the base ``NotificationParams``).
METHODS: dict[str, tuple[str, str, str, str | None]] = {
    "initialize": ("lifecycle", "InitializeRequest", "InitializeRequestParams", "InitializeResult"),
    "ping": ("ping", "PingRequest", "jsonrpc.RequestParams", "jsonrpc.Result"),
    "resources/list": ("resources", "ListResourcesRequest", "pagination.PaginatedRequestParams", "ListResourcesResult"),
    "resources/templates/list": (
        "resources",
        "ListResourceTemplatesRequest",
        "pagination.PaginatedRequestParams",
        "ListResourceTemplatesResult",
    ),
    "resources/read": ("resources", "ReadResourceRequest", "ReadResourceRequestParams", "ReadResourceResult"),
    "resources/subscribe": ("resources", "SubscribeRequest", "SubscribeRequestParams", "jsonrpc.Result"),
    "resources/unsubscribe": ("resources", "UnsubscribeRequest", "UnsubscribeRequestParams", "jsonrpc.Result"),
    "prompts/list": ("prompts", "ListPromptsRequest", "pagination.PaginatedRequestParams", "ListPromptsResult"),
    "prompts/get": ("prompts", "GetPromptRequest", "GetPromptRequestParams", "GetPromptResult"),
    "tools/list": ("tools", "ListToolsRequest", "pagination.PaginatedRequestParams", "ListToolsResult"),
    "tools/call": ("tools", "CallToolRequest", "CallToolRequestParams", "CallToolResult"),
    "tasks/get": ("tasks", "GetTaskRequest", "GetTaskRequestParams", "GetTaskResult"),
    "tasks/result": ("tasks", "GetTaskPayloadRequest", "GetTaskPayloadRequestParams", "GetTaskPayloadResult"),
    "tasks/cancel": ("tasks", "CancelTaskRequest", "CancelTaskRequestParams", "CancelTaskResult"),
    "tasks/list": ("tasks", "ListTasksRequest", "pagination.PaginatedRequestParams", "ListTasksResult"),
    "logging/setLevel": ("logging", "SetLevelRequest", "SetLevelRequestParams", "jsonrpc.Result"),
    "completion/complete": ("completion", "CompleteRequest", "CompleteRequestParams", "CompleteResult"),
    "sampling/createMessage": (
        "sampling",
        "CreateMessageRequest",
        "CreateMessageRequestParams",
        "CreateMessageResult",
    ),
    "roots/list": ("roots", "ListRootsRequest", "jsonrpc.RequestParams", "ListRootsResult"),
    # (a union: form or URL mode)
    "elicitation/create": ("elicitation", "ElicitRequest", "ElicitRequestParams", "ElicitResult"),
    "notifications/cancelled": ("cancellation", "CancelledNotification", "CancelledNotificationParams", None),
    "notifications/initialized": ("lifecycle", "InitializedNotification", "jsonrpc.NotificationParams", None),
    "notifications/progress": ("progress", "ProgressNotification", "ProgressNotificationParams", None),
    "notifications/tasks/status": ("tasks", "TaskStatusNotification", "TaskStatusNotificationParams", None),
    "notifications/roots/list_changed": ("roots", "RootsListChangedNotification", "jsonrpc.NotificationParams", None),
    "notifications/resources/list_changed": (
        "resources",
        "ResourceListChangedNotification",
        "jsonrpc.NotificationParams",
        None,
    ),
    "notifications/resources/updated": (
        "resources",
        "ResourceUpdatedNotification",
        "ResourceUpdatedNotificationParams",
        None,
    ),
    "notifications/prompts/list_changed": (
        "prompts",
        "PromptListChangedNotification",
        "jsonrpc.NotificationParams",
        None,
    ),
    "notifications/tools/list_changed": ("tools", "ToolListChangedNotification", "jsonrpc.NotificationParams", None),
    "notifications/message": ("logging", "LoggingMessageNotification", "LoggingMessageNotificationParams", None),
    "notifications/elicitation/complete": (
        "elicitation",
        "ElicitationCompleteNotification",
        "ElicitationCompleteNotificationParams",
        None,
    ),
}

#: the methods of each direction, in the order of schema.ts
_CLIENT_REQUEST_METHODS = (
    "initialize",
    "ping",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "tools/list",
    "tools/call",
    "tasks/get",
    "tasks/result",
    "tasks/cancel",
    "tasks/list",
    "logging/setLevel",
    "completion/complete",
)
_SERVER_REQUEST_METHODS = (
    "ping",
    "tasks/get",
    "tasks/result",
    "tasks/cancel",
    "tasks/list",
    "sampling/createMessage",
    "roots/list",
    "elicitation/create",
)
_CLIENT_NOTIFICATION_METHODS = (
    "notifications/cancelled",
    "notifications/initialized",
    "notifications/progress",
    "notifications/tasks/status",
    "notifications/roots/list_changed",
)
_SERVER_NOTIFICATION_METHODS = (
    "notifications/cancelled",
    "notifications/progress",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/prompts/list_changed",
    "notifications/tools/list_changed",
    "notifications/tasks/status",
    "notifications/message",
    "notifications/elicitation/complete",
)
#: the members of the result unions (results are not looked up by method)
_CLIENT_RESULTS = (
    "jsonrpc.Result",
    "tasks.GetTaskResult",
    "tasks.GetTaskPayloadResult",
    "tasks.CancelTaskResult",
    "tasks.ListTasksResult",
    "sampling.CreateMessageResult",
    "roots.ListRootsResult",
    "elicitation.ElicitResult",
)
_SERVER_RESULTS = (
    "jsonrpc.Result",
    "lifecycle.InitializeResult",
    "resources.ListResourcesResult",
    "resources.ListResourceTemplatesResult",
    "resources.ReadResourceResult",
    "prompts.ListPromptsResult",
    "prompts.GetPromptResult",
    "tools.ListToolsResult",
    "tools.CallToolResult",
    "tasks.GetTaskResult",
    "tasks.GetTaskPayloadResult",
    "tasks.CancelTaskResult",
    "tasks.ListTasksResult",
    "completion.CompleteResult",
)


def _resolve(name: str, chapter: str) -> Any:
    """The class (or union) ``name`` of ``chapter`` -- or of the module it names -- imported now."""
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(f"{__package__}.{module or chapter}"), attr)


class MethodTable(dict[str, Any]):
    """method -> one of its types (``column`` of :data:`METHODS`), for ``methods``.

    A dict that fills itself: ``table[method]`` imports the method's chapter the
    first time and keeps the class; a method the table does not have gives None
    (not KeyError), so the engine looks up with ``[]`` -- a plain dict lookup
    from then on. ``in``, ``len``, iteration and ``get`` see every method of
    the table, loaded or not (iterating over values loads them).
    """

    def __init__(self, methods: tuple[str, ...], column: int) -> None:
        super().__init__()
        self.methods = {method: None for method in methods}  # (an ordered set)
        self.column = column

    def __missing__(self, method: str) -> Any:
        if method not in self.methods:
            return None
        chapter = METHODS[method][0]
        value = _resolve(METHODS[method][self.column] or "", chapter)
        self[method] = value
        return value

    def get(self, method: str, default: Any = None) -> Any:
        return self[method] if method in self.methods else default

    def __contains__(self, method: object) -> bool:
        return method in self.methods

    def __iter__(self) -> Iterator[str]:
        return iter(self.methods)

    def __len__(self) -> int:
        return len(self.methods)

    def keys(self) -> Any:
        return self.methods.keys()

    def values(self) -> Any:
        return [self[method] for method in self.methods]

    def items(self) -> Any:
        return [(method, self[method]) for method in self.methods]

    def __eq__(self, other: object) -> bool:
        return dict(self.items()) == (dict(other.items()) if isinstance(other, dict) else other)

    __hash__ = None

    def __repr__(self) -> str:
        return f"MethodTable({list(self.methods)!r})"


#: method -> request class, for requests a client sends (a server receives)
CLIENT_REQUESTS: dict[str, Any] = MethodTable(_CLIENT_REQUEST_METHODS, 1)
#: method -> request class, for requests a server sends (a client receives)
SERVER_REQUESTS: dict[str, Any] = MethodTable(_SERVER_REQUEST_METHODS, 1)
CLIENT_NOTIFICATIONS: dict[str, Any] = MethodTable(_CLIENT_NOTIFICATION_METHODS, 1)
SERVER_NOTIFICATIONS: dict[str, Any] = MethodTable(_SERVER_NOTIFICATION_METHODS, 1)

#: method -> params type (a union for elicitation/create; the params class of
#: a notification too)
PARAMS_TYPES: dict[str, Any] = MethodTable(tuple(METHODS), 2)

#: method -> result class (EmptyResult methods answer a plain Result)
RESULT_TYPES: dict[str, Any] = MethodTable(tuple(m for m, spec in METHODS.items() if spec[3] is not None), 3)

#: methods whose params may carry ``task`` (basic/utilities/tasks)
TASK_AUGMENTABLE: frozenset[str] = frozenset({"tools/call", "sampling/createMessage", "elicitation/create"})

#: every method of every revision, either direction (one outside it is unknown to MCP)
KNOWN_METHODS: frozenset[str] = frozenset(METHODS)
#: read for every message the engine sends or receives: worked out once per method
_SINCE: dict[str, str] = {}


def method_since(method: str) -> str:
    """The revision ``method`` first exists in (KeyError for a method MCP does not have)."""
    try:
        return _SINCE[method]
    except KeyError:
        chapter, message_class = METHODS[method][:2]
        since = _SINCE[method] = since_of(_resolve(message_class, chapter))
        return since


def _union(members: Iterable[Any]) -> Any:
    first, *rest = members
    union = first
    for member in rest:
        union = union | member
    return union


#: the unions of schema.ts, built on first use (they need every chapter)
_UNIONS = {
    "ClientRequest": lambda: _union(CLIENT_REQUESTS.values()),
    "ClientNotification": lambda: _union(CLIENT_NOTIFICATIONS.values()),
    "ClientResult": lambda: _union([_resolve(name, "") for name in _CLIENT_RESULTS]),
    "ServerRequest": lambda: _union(SERVER_REQUESTS.values()),
    "ServerNotification": lambda: _union(SERVER_NOTIFICATIONS.values()),
    "ServerResult": lambda: _union([_resolve(name, "") for name in _SERVER_RESULTS]),
}


def __getattr__(name: str) -> Any:
    make = _UNIONS.get(name)
    if make is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = make()
    return value
