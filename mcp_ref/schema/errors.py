"""schema.ts "Errors" (2026-07-28 names them): the JSON-RPC errors by code, and the
three MCP errors of that revision with the ``data`` each carries.

The error codes themselves are :class:`mcp_ref.errors.ErrorCode`. Which code
means "resource not found" depends on the revision: :data:`RESOURCE_NOT_FOUND_CODE`.
A 2026-07-28 server never emits the codes earlier revisions retired
(:data:`RETIRED_CODES`).
"""

from collections.abc import Mapping
from typing import Any, Final, Literal

from attrs import field, frozen

from ..errors import ErrorCode
from ._base import NULLABLE, REVISIONS, install_model_methods, since
from .jsonrpc import Error, RequestId
from .lifecycle import ClientCapabilities

__all__ = [
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
]


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class ParseError(Error):
    """-32700: the message was not JSON."""

    code: Literal[-32700] = -32700


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class InvalidRequestError(Error):
    """-32600: JSON, but not a JSON-RPC request."""

    code: Literal[-32600] = -32600


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class MethodNotFoundError(Error):
    """-32601: no such method, or one behind a server capability not advertised."""

    code: Literal[-32601] = -32601


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class InvalidParamsError(Error):
    """-32602: the params do not validate (and, in 2026-07-28, an unknown resource)."""

    code: Literal[-32602] = -32602


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class InternalError(Error):
    """-32603: the receiver failed."""

    code: Literal[-32603] = -32603


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class HeaderMismatchErrorDetail:
    """The ``error`` member of :class:`HeaderMismatchError`."""

    code: Literal[-32020] = -32020
    message: str
    data: Any = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class HeaderMismatchError:
    """-32020: an HTTP request's headers disagree with its body, or a required one is
    missing or malformed (HTTP status 400)."""

    jsonrpc: Literal["2.0"] = "2.0"
    error: HeaderMismatchErrorDetail
    id: RequestId | None = field(default=None, metadata=NULLABLE)  # as JSONRPCErrorResponse.id


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class UnsupportedProtocolVersionErrorData:
    supported: list[str]
    requested: str


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class UnsupportedProtocolVersionErrorDetail:
    code: Literal[-32022] = -32022
    message: str
    data: UnsupportedProtocolVersionErrorData


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class UnsupportedProtocolVersionError:
    """-32022: the request's protocol version is not one the server speaks; ``data`` lists
    those it does (the client picks one and retries) and repeats the one asked for."""

    jsonrpc: Literal["2.0"] = "2.0"
    error: UnsupportedProtocolVersionErrorDetail
    id: RequestId | None = field(default=None, metadata=NULLABLE)


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class MissingRequiredClientCapabilityErrorData:
    required_capabilities: ClientCapabilities


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class MissingRequiredClientCapabilityErrorDetail:
    code: Literal[-32021] = -32021
    message: str
    data: MissingRequiredClientCapabilityErrorData


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class MissingRequiredClientCapabilityError:
    """-32021: serving the request needs client capabilities it did not declare; ``data``
    names them."""

    jsonrpc: Literal["2.0"] = "2.0"
    error: MissingRequiredClientCapabilityErrorDetail
    id: RequestId | None = field(default=None, metadata=NULLABLE)


#: revision -> the code that answers a request for a resource the server does not have:
#: -32002 up to 2025-11-25 (server/resources#error-handling), -32602 from 2026-07-28 on
RESOURCE_NOT_FOUND_CODE: Final[Mapping[str, int]] = {
    revision: ErrorCode.INVALID_PARAMS if revision >= "2026-07-28" else ErrorCode.RESOURCE_NOT_FOUND
    for revision in REVISIONS
}

#: revision -> codes earlier revisions defined that it must never emit (it keeps them reserved)
RETIRED_CODES: Final[Mapping[str, frozenset[int]]] = {
    revision: (
        frozenset({ErrorCode.RESOURCE_NOT_FOUND, ErrorCode.URL_ELICITATION_REQUIRED})
        if revision >= "2026-07-28"
        else frozenset()
    )
    for revision in REVISIONS
}


def resource_not_found_code(revision: str) -> int:
    """The code for "no such resource" in ``revision`` (KeyError for a revision mcp_ref does not speak)."""
    return RESOURCE_NOT_FOUND_CODE[revision]


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
