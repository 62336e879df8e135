"""Names that exist only in older revisions' schemas.

The wire shapes are unchanged; only the names differ (or, for batches, the
2025-03-26 revision allowed arrays of messages). The completeness tests map
each older definition to the class that encodes it.
"""

from .completion import ResourceTemplateReference
from .jsonrpc import JSONRPCErrorResponse, JSONRPCNotification, JSONRPCRequest, JSONRPCResultResponse

__all__ = ["JSONRPCError", "ResourceReference", "JSONRPCBatchRequest", "JSONRPCBatchResponse", "LEGACY_NAMES"]

#: 2025-06-18 and 2025-03-26 name of the error response
JSONRPCError = JSONRPCErrorResponse
#: 2025-03-26 name of the resource-template reference used by completion/complete
ResourceReference = ResourceTemplateReference
#: 2025-03-26 batches (arrays of messages); only accepted in sessions on that revision
JSONRPCBatchRequest = list[JSONRPCRequest | JSONRPCNotification]
JSONRPCBatchResponse = list[JSONRPCResultResponse | JSONRPCErrorResponse]

#: (revision, definition name) -> what encodes it, where the name differs from ours
LEGACY_NAMES: dict[tuple[str, str], object] = {
    ("2025-06-18", "JSONRPCError"): JSONRPCErrorResponse,
    ("2025-03-26", "JSONRPCError"): JSONRPCErrorResponse,
    ("2025-06-18", "JSONRPCResponse"): JSONRPCResultResponse,
    ("2025-03-26", "JSONRPCResponse"): JSONRPCResultResponse,
    ("2025-03-26", "ResourceReference"): ResourceTemplateReference,
    ("2025-03-26", "JSONRPCBatchRequest"): JSONRPCBatchRequest,
    ("2025-03-26", "JSONRPCBatchResponse"): JSONRPCBatchResponse,
}
