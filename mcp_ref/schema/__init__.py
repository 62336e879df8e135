"""The MCP data model: one attrs class per schema definition (see spec_notes/schema.md).

Every public name of every module is re-exported here; ``__all__`` is the
concatenation of the modules' ``__all__`` (tests/schema/test_exports.py).

A module (a chapter of the schema) is imported the first time one of its
names is read -- ``mcp_ref.schema.Tool``, ``from mcp_ref.schema import Tool``
or ``import mcp_ref.schema.tools`` -- not with the package: its attrs classes
cost about 2 ms each to build, and a tools-only server never needs those of
sampling, elicitation, resources or prompts (bench W7). What a chapter holds
is listed in ``CHAPTERS`` below, which tests/schema/test_exports.py holds to
the modules themselves.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._base import (
    JSONRPC_VERSION,
    LATEST_LEGACY_REVISION,
    LATEST_PROTOCOL_VERSION,
    LEGACY_REVISIONS,
    MODERN_REVISIONS,
    REVISIONS,
    exists_in,
    is_modern,
)
from ._converter import converter_for, decode, encode

if TYPE_CHECKING:
    from .caching import *
    from .cancellation import *
    from .completion import *
    from .content import *
    from .discover import *
    from .elicitation import *
    from .errors import *
    from .jsonrpc import *
    from .legacy import *
    from .lifecycle import *
    from .logging import *
    from .messages import *
    from .meta import *
    from .mrtr import *
    from .pagination import *
    from .ping import *
    from .progress import *
    from .prompts import *
    from .resources import *
    from .responses import *
    from .roots import *
    from .sampling import *
    from .subscriptions import *
    from .tasks import *
    from .tools import *

#: chapter module -> the public names it defines (its ``__all__``), in the order of schema.ts
CHAPTERS: dict[str, tuple[str, ...]] = {
    "jsonrpc": (
        "JSONValue",
        "JSONObject",
        "JSONArray",
        "MetaObject",
        "RequestId",
        "ProgressToken",
        "Cursor",
        "ResultType",
        "LoggingLevel",
        "LOGGING_LEVELS",
        "RESULT_COMPLETE",
        "RESULT_INPUT_REQUIRED",
        "InputResponsesField",
        "RequestParams",
        "NotificationParams",
        "Request",
        "Notification",
        "Result",
        "EmptyResult",
        "Error",
        "JSONRPCRequest",
        "JSONRPCNotification",
        "JSONRPCResultResponse",
        "JSONRPCErrorResponse",
        "JSONRPCResponse",
        "JSONRPCMessage",
    ),
    "meta": (
        "RequestMetaObject",
        "NotificationMetaObject",
        "ResultMetaObject",
        "SubscriptionsListenResultMetaObject",
        "client_capabilities",
        "client_info",
        "server_info",
        "request_meta",
        "with_server_info",
    ),
    "errors": (
        "ParseError",
        "InvalidRequestError",
        "MethodNotFoundError",
        "InvalidParamsError",
        "InternalError",
        "HeaderMismatchErrorDetail",
        "HeaderMismatchError",
        "UnsupportedProtocolVersionErrorData",
        "UnsupportedProtocolVersionErrorDetail",
        "UnsupportedProtocolVersionError",
        "MissingRequiredClientCapabilityErrorData",
        "MissingRequiredClientCapabilityErrorDetail",
        "MissingRequiredClientCapabilityError",
        "RESOURCE_NOT_FOUND_CODE",
        "RETIRED_CODES",
        "resource_not_found_code",
    ),
    "cancellation": (
        "CancelledNotificationParams",
        "CancelledNotification",
    ),
    "lifecycle": (
        "Icon",
        "Icons",
        "BaseMetadata",
        "Implementation",
        "RootsCapability",
        "SamplingCapability",
        "ElicitationCapability",
        "ClientTaskSamplingRequests",
        "ClientTaskElicitationRequests",
        "ClientTaskRequestsCapability",
        "ClientTasksCapability",
        "ClientCapabilities",
        "ListChangedCapability",
        "ResourcesCapability",
        "ServerTaskToolsRequests",
        "ServerTaskRequestsCapability",
        "ServerTasksCapability",
        "ServerCapabilities",
        "InitializeRequestParams",
        "InitializeRequest",
        "InitializeResult",
        "InitializedNotification",
    ),
    "ping": ("PingRequest",),
    "progress": (
        "ProgressNotificationParams",
        "ProgressNotification",
    ),
    "pagination": (
        "PaginatedRequestParams",
        "PaginatedRequest",
        "PaginatedResult",
        "CacheScope",
    ),
    "caching": ("CacheableResult",),
    "content": (
        "Role",
        "Annotations",
        "TextContent",
        "ImageContent",
        "AudioContent",
        "ResourceContents",
        "TextResourceContents",
        "BlobResourceContents",
        "ResourceLink",
        "EmbeddedResource",
        "ContentBlock",
        "ToolUseContent",
        "ToolResultContent",
    ),
    "resources": (
        "Resource",
        "ResourceTemplate",
        "ListResourcesRequest",
        "ListResourcesResult",
        "ListResourceTemplatesRequest",
        "ListResourceTemplatesResult",
        "ResourceRequestParams",
        "ReadResourceRequestParams",
        "ReadResourceRequest",
        "ReadResourceResult",
        "ResourceListChangedNotification",
        "SubscribeRequestParams",
        "SubscribeRequest",
        "UnsubscribeRequestParams",
        "UnsubscribeRequest",
        "ResourceUpdatedNotificationParams",
        "ResourceUpdatedNotification",
    ),
    "prompts": (
        "PromptArgument",
        "Prompt",
        "PromptMessage",
        "ListPromptsRequest",
        "ListPromptsResult",
        "GetPromptRequestParams",
        "GetPromptRequest",
        "GetPromptResult",
        "PromptListChangedNotification",
    ),
    "tools": (
        "ToolAnnotations",
        "ToolExecution",
        "Tool",
        "ListToolsRequest",
        "ListToolsResult",
        "CallToolRequestParams",
        "CallToolRequest",
        "CallToolResult",
        "ToolListChangedNotification",
    ),
    "tasks": (
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
    ),
    "logging": (
        "SetLevelRequestParams",
        "SetLevelRequest",
        "LoggingMessageNotificationParams",
        "LoggingMessageNotification",
    ),
    "sampling": (
        "SamplingMessageContentBlock",
        "SamplingContent",
        "SamplingMessage",
        "ModelHint",
        "ModelPreferences",
        "ToolChoice",
        "CreateMessageRequestParams",
        "CreateMessageRequest",
        "CreateMessageResult",
    ),
    "completion": (
        "PromptReference",
        "ResourceTemplateReference",
        "CompletionArgument",
        "CompletionContext",
        "CompleteRequestParams",
        "CompleteRequest",
        "Completion",
        "CompleteResult",
        "MAX_COMPLETION_VALUES",
    ),
    "roots": (
        "Root",
        "ListRootsRequestParams",
        "ListRootsRequest",
        "ListRootsResult",
        "RootsListChangedNotification",
    ),
    "elicitation": (
        "StringSchema",
        "NumberSchema",
        "BooleanSchema",
        "EnumOption",
        "UntitledSingleSelectEnumSchema",
        "TitledSingleSelectEnumSchema",
        "StringEnumItems",
        "TitledEnumItems",
        "UntitledMultiSelectEnumSchema",
        "TitledMultiSelectEnumSchema",
        "LegacyTitledEnumSchema",
        "SingleSelectEnumSchema",
        "MultiSelectEnumSchema",
        "EnumSchema",
        "PrimitiveSchemaDefinition",
        "ElicitationRequestedSchema",
        "ElicitRequestFormParams",
        "ElicitRequestURLParams",
        "ElicitRequestParams",
        "ElicitRequest",
        "ElicitContentValue",
        "ElicitResult",
        "ElicitationCompleteNotificationParams",
        "ElicitationCompleteNotification",
        "URLElicitationRequiredErrorData",
        "URLElicitationRequiredErrorDetail",
        "URLElicitationRequiredError",
    ),
    "discover": (
        "DiscoverRequest",
        "DiscoverResult",
    ),
    "mrtr": (
        "InputRequest",
        "InputResponse",
        "InputRequests",
        "InputResponses",
        "INPUT_RESPONSE_TYPES",
        "InputRequiredResult",
        "InputResponseRequestParams",
        "input_response_type",
    ),
    "subscriptions": (
        "SubscriptionFilter",
        "SubscriptionsListenRequestParams",
        "SubscriptionsListenRequest",
        "SubscriptionsListenResult",
        "SubscriptionsAcknowledgedNotificationParams",
        "SubscriptionsAcknowledgedNotification",
    ),
    "responses": (
        "CallToolResultResponse",
        "CompleteResultResponse",
        "DiscoverResultResponse",
        "GetPromptResultResponse",
        "ListPromptsResultResponse",
        "ListResourceTemplatesResultResponse",
        "ListResourcesResultResponse",
        "ListToolsResultResponse",
        "ReadResourceResultResponse",
        "SubscriptionsListenResultResponse",
    ),
    "messages": (
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
    ),
    "legacy": (
        "Annotated",
        "JSONRPCError",
        "ResourceReference",
        "JSONRPCBatchRequest",
        "JSONRPCBatchResponse",
        "BatchableJSONRPCMessage",
        "LEGACY_NAMES",
    ),
}

#: public name -> the chapter module that defines it
_CHAPTER_OF = {name: chapter for chapter, names in CHAPTERS.items() for name in names}

__all__ = [
    "LATEST_PROTOCOL_VERSION",
    "LATEST_LEGACY_REVISION",
    "REVISIONS",
    "LEGACY_REVISIONS",
    "MODERN_REVISIONS",
    "is_modern",
    "exists_in",
    "JSONRPC_VERSION",
    "decode",
    "encode",
    "converter_for",
]
__all__ += [name for names in CHAPTERS.values() for name in names]


def __getattr__(name: str) -> Any:
    """Import the chapter that defines ``name`` (once: its names are then plain attributes)."""
    chapter = _CHAPTER_OF.get(name)
    if chapter is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{chapter}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
