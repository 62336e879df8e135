"""schema.ts "JSON-RPC types" and "Empty result": the message envelopes.

The engine reads envelopes straight off the decoded JSON (``mcp_ref.basic.jsonrpc``)
and uses these classes for the typed messages it builds and emits; they are
also what the completeness tests hold against schema.json.
"""

from typing import Any, Literal

from attrs import field, frozen

from ..errors import DecodeError
from ._base import (
    EXTRA,
    NEW_IN_2026_07_28,
    NULLABLE,
    REQUIRED_ON_WIRE,
    FieldValueError,
    discriminate,
    install_model_methods,
    lazy_type,
    older_type,
    required_from,
)

__all__ = [
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
]

#: Any JSON value (2026-07-28 names it): held as the Python value ``json.loads`` gives
JSONValue = Any
#: A JSON object of JSON values
JSONObject = dict[str, Any]
#: A JSON array of JSON values
JSONArray = list[Any]
#: The contents of a ``_meta`` field: an object with keys of the ``_meta`` grammar
#: (checked when written, see ``_meta_keys``); typed views of the keys MCP
#: reserves: :mod:`mcp_ref.schema.meta`
MetaObject = dict[str, Any]

#: A request id: a string or an integer, never null, never coerced.
RequestId = str | int
ProgressToken = str | int
Cursor = str
#: What a 2026-07-28 result is: "complete", "input_required" (basic/patterns/mrtr), or a
#: value an extension adds (the tasks extension's "task"); an open string
ResultType = str
RESULT_COMPLETE = "complete"
RESULT_INPUT_REQUIRED = "input_required"
#: syslog severities (RFC 5424), least to most severe
LoggingLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOGGING_LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def check_request_meta(instance: Any, attribute: Any, value: Any) -> None:
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


#: ``inputResponses`` of a retried 2026-07-28 request (basic/patterns/mrtr): decoded as
#: ``mcp_ref.schema.mrtr.InputResponses`` (a dict of sampling / roots / elicitation
#: results), a chapter loaded only when a request carries answers
InputResponsesField = lazy_type("InputResponsesField", f"{__package__}.mrtr", "InputResponses")


@frozen(kw_only=True, repr=False, eq=False)
class RequestParams:
    """Params every request may carry.

    ``meta`` is held as a dict (extensions put their own keys there); the
    schema types one key, ``progressToken``, and that type is checked.
    2026-07-28 requires it on every request (its protocol version and the
    client's capabilities travel there: :class:`mcp_ref.schema.meta.RequestMetaObject`
    is the typed view, ``_meta_keys`` the accessors); encoding for that revision
    refuses a request without it.
    """

    meta: dict[str, Any] | None = field(
        default=None, validator=check_request_meta, metadata=required_from("2026-07-28")
    )


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
    """Base of every result. Open: unknown keys are kept in ``extra`` and re-emitted.

    ``result_type`` (2026-07-28, ``resultType``) says what kind of result it is; it
    is always written for that revision and never before it. A result without it
    (from a peer of an earlier revision) reads as "complete".
    """

    meta: dict[str, Any] | None = None
    # [2026-07-28:schema#15] written on every result of the revision (required, never None);
    # [2026-07-28:schema#16] an earlier peer's result without it reads as "complete" -- schema#result
    result_type: ResultType = field(default=RESULT_COMPLETE, metadata={**NEW_IN_2026_07_28, **REQUIRED_ON_WIRE})
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
