"""Names that exist only in older revisions' schemas.

The wire shapes behind these names are the ones mcp_ref's classes encode;
only the names differ, or (2025-03-26 batches) the older revision allowed a
JSON array of messages where later ones allow a single message.
:data:`LEGACY_NAMES` maps each older definition name to what encodes it; the
completeness tests use it, and so can a reader holding an older schema.
"""

from .completion import ResourceTemplateReference
from .elicitation import LegacyTitledEnumSchema
from .jsonrpc import (
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
)

__all__ = [
    "JSONRPCError",
    "ResourceReference",
    "JSONRPCBatchRequest",
    "JSONRPCBatchResponse",
    "BatchableJSONRPCMessage",
    "LEGACY_NAMES",
]

#: 2025-06-18 and 2025-03-26 name of the error response
JSONRPCError = JSONRPCErrorResponse
#: 2025-03-26 name of the resource-template reference used by completion/complete
ResourceReference = ResourceTemplateReference
#: 2025-03-26 batches: arrays of requests and notifications ...
JSONRPCBatchRequest = list[JSONRPCRequest | JSONRPCNotification]
#: ... and arrays of responses (removed in 2025-06-18)
JSONRPCBatchResponse = list[JSONRPCResultResponse | JSONRPCErrorResponse]
#: 2025-03-26 ``JSONRPCMessage``: one message or a batch
BatchableJSONRPCMessage = JSONRPCMessage | JSONRPCBatchRequest | JSONRPCBatchResponse

#: (revision, definition name) -> what encodes it, for every name of an older
#: schema that mcp_ref does not define under that name
LEGACY_NAMES: dict[tuple[str, str], object] = {
    ("2025-06-18", "JSONRPCError"): JSONRPCErrorResponse,
    ("2025-03-26", "JSONRPCError"): JSONRPCErrorResponse,
    # before 2025-11-25 "JSONRPCResponse" was the success response only
    ("2025-06-18", "JSONRPCResponse"): JSONRPCResultResponse,
    ("2025-03-26", "JSONRPCResponse"): JSONRPCResultResponse,
    ("2025-03-26", "ResourceReference"): ResourceTemplateReference,
    ("2025-03-26", "JSONRPCBatchRequest"): JSONRPCBatchRequest,
    ("2025-03-26", "JSONRPCBatchResponse"): JSONRPCBatchResponse,
    ("2025-03-26", "JSONRPCMessage"): BatchableJSONRPCMessage,
    # the 2025-06-18 enum schema (title per option in enumNames) was renamed
    ("2025-06-18", "EnumSchema"): LegacyTitledEnumSchema,
}
