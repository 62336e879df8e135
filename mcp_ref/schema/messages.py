"""schema.ts "Client messages" / "Server messages", and the method tables.

The engine looks methods up here: which request class a method decodes to,
per direction; its params and result types; whether it may be task-augmented;
and the revisions it exists in. A method both sides send (``ping``,
``tasks/*``, ``notifications/cancelled`` / ``progress`` / ``tasks/status``) is
in both directions' tables. tests/schema/test_messages.py holds the tables
against the spec's methods.tsv and every revision's schema.json.

The module-level tables (``CLIENT_REQUESTS`` ...) hold every method of every
revision; what one revision has, per direction, is :func:`client_requests`
(revision) and its siblings, and :func:`method_in`. 2026-07-28 has no
server-to-client requests at all: sampling, roots and elicitation are
questions inside an ``InputRequiredResult`` (:data:`INPUT_REQUEST_METHODS`),
and a request that may need them answers either its result or that
(:func:`result_type_for`).

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

from ._base import MODERN_REVISIONS, REVISIONS, since_of, until_of

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
    "INPUT_REQUEST_METHODS",
    "MRTR_METHODS",
    "CACHEABLE_METHODS",
    "method_since",
    "method_until",
    "method_in",
    "client_requests",
    "server_requests",
    "client_notifications",
    "server_notifications",
    "task_augmentable",
    "result_type_for",
    "union_in",
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
    "roots/list": ("roots", "ListRootsRequest", "ListRootsRequestParams", "ListRootsResult"),
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
    # 2026-07-28
    "server/discover": ("discover", "DiscoverRequest", "jsonrpc.RequestParams", "DiscoverResult"),
    "subscriptions/listen": (
        "subscriptions",
        "SubscriptionsListenRequest",
        "SubscriptionsListenRequestParams",
        "SubscriptionsListenResult",
    ),
    "notifications/subscriptions/acknowledged": (
        "subscriptions",
        "SubscriptionsAcknowledgedNotification",
        "SubscriptionsAcknowledgedNotificationParams",
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
    "server/discover",
    "subscriptions/listen",
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
    "notifications/subscriptions/acknowledged",
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
    "discover.DiscoverResult",
    "subscriptions.SubscriptionsListenResult",
    "mrtr.InputRequiredResult",
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

#: 2026-07-28: what a server may ask inside an InputRequiredResult (basic/patterns/mrtr);
#: no longer JSON-RPC requests of that revision
INPUT_REQUEST_METHODS: frozenset[str] = frozenset({"sampling/createMessage", "roots/list", "elicitation/create"})
#: 2026-07-28: the requests whose answer may be an InputRequiredResult (their params take
#: ``inputResponses`` and ``requestState``)
MRTR_METHODS: frozenset[str] = frozenset({"tools/call", "prompts/get", "resources/read"})
#: 2026-07-28: the requests whose result is a CacheableResult (``ttlMs``, ``cacheScope``)
CACHEABLE_METHODS: frozenset[str] = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)


def method_since(method: str) -> str:
    """The revision ``method`` first exists in (KeyError for a method MCP does not have)."""
    try:
        return _SINCE[method]
    except KeyError:
        chapter, message_class = METHODS[method][:2]
        since = _SINCE[method] = since_of(_resolve(message_class, chapter))
        return since


def method_until(method: str) -> str | None:
    """The revision that removed ``method`` (None: every revision from its first has it).

    The InputRequest methods are not removed: 2026-07-28 has them, inside a result.
    """
    chapter, message_class = METHODS[method][:2]
    return until_of(_resolve(message_class, chapter))


def method_in(method: str, revision: str) -> bool:
    """Whether ``method`` is a JSON-RPC request or notification of ``revision``, either direction."""
    return method in _by_revision(revision)[4]


def _by_revision(revision: str) -> tuple[frozenset[str], ...]:
    """The direction tables of ``revision`` (built on first use; KeyError for a revision
    mcp_ref does not speak)."""
    if not _BY_REVISION:
        _BY_REVISION.update(_build_by_revision())
    return _BY_REVISION[revision]


def _build_by_revision() -> dict[str, tuple[frozenset[str], ...]]:
    """revision -> (client requests, server requests, client notifications, server
    notifications, all of them): the direction tables filtered by the marks of each
    method's class, and, in the modern era, without server-to-client requests."""
    out: dict[str, tuple[frozenset[str], ...]] = {}
    for revision in REVISIONS:

        def live(methods: tuple[str, ...], revision: str = revision) -> frozenset[str]:
            return frozenset(m for m in methods if _SINCE_OF[m] <= revision < (_UNTIL_OF[m] or "9999"))

        client_notes = live(_CLIENT_NOTIFICATION_METHODS)
        server_requests = live(_SERVER_REQUEST_METHODS)
        if revision in MODERN_REVISIONS:
            # no server-to-client requests: nothing for a client to report progress on either
            server_requests = frozenset()
            client_notes -= {"notifications/progress"}
        tables = (live(_CLIENT_REQUEST_METHODS), server_requests, client_notes, live(_SERVER_NOTIFICATION_METHODS))
        out[revision] = (*tables, frozenset().union(*tables))
    return out


#: the revision marks of each method's message class, as data: the per-revision tables
#: are built from them without importing every chapter (tests/schema/test_messages.py
#: holds these to the classes' own marks)
_SINCE_OF: dict[str, str] = {
    **dict.fromkeys(METHODS, "2024-11-05"),
    "elicitation/create": "2025-06-18",
    **dict.fromkeys(
        ("tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "notifications/tasks/status"), "2025-11-25"
    ),
    "notifications/elicitation/complete": "2025-11-25",
    **dict.fromkeys(
        ("server/discover", "subscriptions/listen", "notifications/subscriptions/acknowledged"), "2026-07-28"
    ),
}
_UNTIL_OF: dict[str, str | None] = {
    **dict.fromkeys(METHODS),
    **dict.fromkeys(
        (
            "initialize",
            "ping",
            "resources/subscribe",
            "resources/unsubscribe",
            "logging/setLevel",
            "notifications/initialized",
            "notifications/roots/list_changed",
            "notifications/elicitation/complete",
            "tasks/get",
            "tasks/result",
            "tasks/cancel",
            "tasks/list",
            "notifications/tasks/status",
        ),
        "2026-07-28",
    ),
}
_BY_REVISION: dict[str, tuple[frozenset[str], ...]] = {}


def client_requests(revision: str) -> frozenset[str]:
    """The requests a client sends in ``revision`` (KeyError for a revision mcp_ref does not speak)."""
    return _by_revision(revision)[0]


def server_requests(revision: str) -> frozenset[str]:
    """The requests a server sends in ``revision`` (none in 2026-07-28)."""
    return _by_revision(revision)[1]


def client_notifications(revision: str) -> frozenset[str]:
    return _by_revision(revision)[2]


def server_notifications(revision: str) -> frozenset[str]:
    return _by_revision(revision)[3]


def task_augmentable(method: str, revision: str) -> bool:
    """Whether ``method``'s params may carry ``task`` in ``revision`` (core tasks: 2025-11-25 only;
    2026-07-28's tasks are the io.modelcontextprotocol/tasks extension's)."""
    return method in TASK_AUGMENTABLE and "2025-11-25" <= revision < "2026-07-28"


#: (method, modern?) -> the type a result is decoded with
_RESULT_TYPES_FOR: dict[tuple[str, bool], Any] = {}


def result_type_for(method: str, revision: str) -> Any:
    """The type a successful answer to ``method`` decodes with in ``revision``: its result
    class, or, for a 2026-07-28 request that may need more input (:data:`MRTR_METHODS`),
    the union of it and ``InputRequiredResult``, told apart by ``resultType``.
    None for a method without a result (a notification) or unknown to MCP."""
    modern = revision in MODERN_REVISIONS
    key = (method, modern and method in MRTR_METHODS)
    found = _RESULT_TYPES_FOR.get(key)
    if found is None:
        found = RESULT_TYPES.get(method)
        if found is not None and key[1]:
            from ._base import discriminate
            from .mrtr import InputRequiredResult

            complete = found
            found = complete | InputRequiredResult

            def choose(value: Any, complete: Any = complete) -> Any:
                # [2026-07-28:schema#16] no resultType (or any but input_required) is the result itself
                return InputRequiredResult if value.get("resultType") == "input_required" else complete

            discriminate(found, choose)
        _RESULT_TYPES_FOR[key] = found
    return found


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


#: (union name, revision) -> the union as that revision has it
_REVISION_UNIONS: dict[tuple[str, str], Any] = {}


def union_in(name: str, revision: str) -> Any:
    """One of schema.ts's message unions (``ClientRequest``, ``ClientNotification``,
    ``ClientResult``, ``ServerRequest``, ``ServerNotification``, ``ServerResult``) as
    ``revision`` has it (None where it has no member: 2026-07-28's ``ServerRequest``).

    Results: the empty result, the results of the other side's requests, and, in
    2026-07-28, ``InputRequiredResult`` for the server.
    """
    key = (name, revision)
    if key in _REVISION_UNIONS:
        return _REVISION_UNIONS[key]
    if name.endswith("Result"):
        # a client answers the server's requests and vice versa
        answered = server_requests(revision) if name == "ClientResult" else client_requests(revision)
        members: list[Any] = [_resolve("jsonrpc.Result", "")]
        members += [RESULT_TYPES[m] for m in METHODS if m in answered]
        if name == "ServerResult" and revision in MODERN_REVISIONS:
            members.append(_resolve("mrtr.InputRequiredResult", ""))
    else:
        table, methods = {
            "ClientRequest": (CLIENT_REQUESTS, client_requests(revision)),
            "ClientNotification": (CLIENT_NOTIFICATIONS, client_notifications(revision)),
            "ServerRequest": (SERVER_REQUESTS, server_requests(revision)),
            "ServerNotification": (SERVER_NOTIFICATIONS, server_notifications(revision)),
        }[name]
        members = [table[m] for m in table if m in methods]
    found = _union(dict.fromkeys(members)) if members else None
    _REVISION_UNIONS[key] = found
    return found


def __getattr__(name: str) -> Any:
    make = _UNIONS.get(name)
    if make is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = make()
    return value
