"""schema.ts "JSON-RPC types" and "Empty result": the message envelopes.

The engine reads envelopes straight off the decoded JSON (``mcp_ref.basic.jsonrpc``)
and uses these classes for the typed messages it builds and emits; they are
also what the completeness tests hold against schema.json.
"""

from typing import Any, Literal

from attrs import field, frozen

from ..errors import DecodeError
from ._base import EXTRA, NULLABLE, FieldValueError, discriminate, install_model_methods, older_type

__all__ = [
    "RequestId",
    "ProgressToken",
    "Cursor",
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
]

#: A request id: a string or an integer, never null, never coerced.
RequestId = str | int
ProgressToken = str | int
Cursor = str


def _request_meta(instance: Any, attribute: Any, value: Any) -> None:
    """``_meta`` is any object; the one key the schema types is ``progressToken``."""
    if value is None:
        return
    if type(value) is not dict:
        raise FieldValueError("_meta", "expected object")
    if "progressToken" in value:
        token = value["progressToken"]
        if type(token) is not str and type(token) is not int:
            # [basic/utilities/progress#1] a progress token is a string or an integer
            raise FieldValueError("_meta.progressToken", "expected string or integer")


@frozen(kw_only=True, repr=False, eq=False)
class RequestParams:
    """Params every request may carry.

    ``meta`` is held as a dict (extensions put their own keys there); the
    schema types one key, ``progressToken``, and that type is checked.
    """

    meta: dict[str, Any] | None = field(default=None, validator=_request_meta)


@frozen(kw_only=True, repr=False, eq=False)
class NotificationParams:
    meta: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
class Request:
    """A request with untyped params (``schema.ts`` ``Request``)."""

    method: str
    params: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
class Notification:
    method: str
    params: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
class Result:
    """Base of every result. Open: unknown keys are kept in ``extra`` and re-emitted."""

    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


#: A response that indicates success but carries no data.
EmptyResult = Result


@frozen(kw_only=True, repr=False, eq=False)
class Error:
    """The ``error`` member of an error response.

    ``data`` is any JSON value; ``None`` leaves it out (a peer's explicit
    ``"data": null`` therefore re-encodes without the key).
    """

    code: int
    message: str
    data: Any = None


@frozen(kw_only=True, repr=False, eq=False)
class JSONRPCRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
class JSONRPCNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: str
    params: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
class JSONRPCResultResponse:
    """A successful response (named ``JSONRPCResponse`` in 2025-06-18 and earlier)."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: Result


@frozen(kw_only=True, repr=False, eq=False)
class JSONRPCErrorResponse:
    """An error response (``JSONRPCError`` before 2025-11-25).

    ``id`` is absent only when the request's id could not be read
    (basic/index#error-responses).
    """

    jsonrpc: Literal["2.0"] = "2.0"
    error: Error
    # 2025-06-18 and 2025-03-26 (``JSONRPCError``) required the id. JSON-RPC
    # 2.0 writes null for an id that could not be read, so null is accepted
    # (as None) though schema.json only allows leaving it out.
    id: RequestId | None = field(default=None, metadata={**NULLABLE, **older_type("2025-11-25", RequestId)})


JSONRPCResponse = JSONRPCResultResponse | JSONRPCErrorResponse
JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | JSONRPCResultResponse | JSONRPCErrorResponse


def _message_kind(value: dict[str, Any]) -> type | None:
    """Which envelope a JSON object is, by the rules of ``mcp_ref.basic.jsonrpc.classify``:
    the members present decide, never which class happens to decode."""
    if "method" in value:
        if "result" in value or "error" in value:
            raise DecodeError("method", "a message cannot be both a request and a response")
        # [basic/index#14] the id, present or not, tells a request from a notification
        return JSONRPCRequest if "id" in value else JSONRPCNotification
    if "result" in value:
        if "error" in value:
            raise DecodeError("result", "a response cannot carry both result and error")
        return JSONRPCResultResponse
    if "error" in value:
        return JSONRPCErrorResponse
    return None


discriminate(JSONRPCMessage, _message_kind)
discriminate(JSONRPCResponse, _message_kind)
discriminate(JSONRPCRequest | JSONRPCNotification, _message_kind)


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
