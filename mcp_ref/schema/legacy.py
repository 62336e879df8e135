"""Names that exist only in older revisions' schemas.

The wire shapes behind these names are the ones mcp_ref's classes encode;
only the names differ, or (2025-03-26 batches) the older revision allowed a
JSON array of messages where later ones allow a single message.
:data:`LEGACY_NAMES` maps each older definition name to what encodes it; the
completeness tests use it, and so can a reader holding an older schema.
"""

from attrs import frozen

from ._base import install_model_methods, until
from .completion import ResourceTemplateReference
from .content import Annotations
from .elicitation import LegacyTitledEnumSchema
from .jsonrpc import (
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResultResponse,
)

__all__ = [
    "Annotated",
    "JSONRPCError",
    "ResourceReference",
    "JSONRPCBatchRequest",
    "JSONRPCBatchResponse",
    "BatchableJSONRPCMessage",
    "LEGACY_NAMES",
]


@frozen(kw_only=True, repr=False, eq=False)
@until("2025-03-26")
class Annotated:
    """2024-11-05's base of the annotated types (content blocks, resources): an
    optional ``annotations`` object. Later revisions name the object
    (``Annotations``) and repeat the field instead; so does mcp_ref."""

    annotations: Annotations | None = None


#: 2025-06-18, 2025-03-26 and 2024-11-05 name of the error response
JSONRPCError = JSONRPCErrorResponse
#: 2025-03-26 and 2024-11-05 name of the resource-template reference used by completion/complete
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
    ("2024-11-05", "JSONRPCError"): JSONRPCErrorResponse,
    # before 2025-11-25 "JSONRPCResponse" was the success response only
    ("2025-06-18", "JSONRPCResponse"): JSONRPCResultResponse,
    ("2025-03-26", "JSONRPCResponse"): JSONRPCResultResponse,
    ("2024-11-05", "JSONRPCResponse"): JSONRPCResultResponse,
    ("2025-03-26", "ResourceReference"): ResourceTemplateReference,
    ("2024-11-05", "ResourceReference"): ResourceTemplateReference,
    ("2025-03-26", "JSONRPCBatchRequest"): JSONRPCBatchRequest,
    ("2025-03-26", "JSONRPCBatchResponse"): JSONRPCBatchResponse,
    ("2025-03-26", "JSONRPCMessage"): BatchableJSONRPCMessage,
    # the 2025-06-18 enum schema (title per option in enumNames) was renamed
    ("2025-06-18", "EnumSchema"): LegacyTitledEnumSchema,
}


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
