"""JSON-RPC 2.0 as MCP uses it (basic/index#messages): framing-free codec.

:func:`loads` parses one message (or, where the revision allows, a batch);
:func:`classify` tells requests, notifications, results and errors apart and
checks the envelope; :func:`dumps` writes compact UTF-8 JSON with no newline.

Ids are strings or integers, never null and never coerced: ``"1"`` and ``1``
name different requests.
"""

import json
import math
from collections.abc import Callable
from typing import Any

from attrs import frozen

from ..errors import ErrorCode, RemoteProtocolError
from ..schema._base import install_model_methods, slot_builder

__all__ = [
    "RawRequest",
    "RawNotification",
    "RawResult",
    "RawError",
    "RawMessage",
    "InvalidMessage",
    "loads",
    "dumps",
    "classify",
    "is_valid_id",
    "BATCH_REVISIONS",
    "MAX_BATCH",
]

#: Revisions in which a JSON array of messages (a batch) is allowed (2025-03-26 only).
BATCH_REVISIONS = frozenset({"2025-03-26"})

#: Messages one batch may hold. Decision (spec_notes/basic/index.md): JSON-RPC sets no bound,
#: but each message is a request handled and answered, so one array under the size limit could
#: hold 80,000 of them; a larger batch is refused whole, before any of it is handled.
MAX_BATCH = 100


@frozen(repr=False, eq=False)
class RawRequest:
    id: str | int
    method: str
    params: dict[str, Any] | None
    obj: dict[str, Any]


@frozen(repr=False, eq=False)
class RawNotification:
    method: str
    params: dict[str, Any] | None
    obj: dict[str, Any]


@frozen(repr=False, eq=False)
class RawResult:
    id: str | int
    result: dict[str, Any]


@frozen(repr=False, eq=False)
class RawError:
    id: str | int | None
    code: int
    message: str
    data: Any
    has_data: bool


RawMessage = RawRequest | RawNotification | RawResult | RawError

# what classify() makes per message, without the frozen classes' __init__ (bench W1)
_raw_request = slot_builder(RawRequest)
_raw_notification = slot_builder(RawNotification)
_raw_result = slot_builder(RawResult)


class InvalidMessage(RemoteProtocolError):
    """The peer sent something that is not a valid MCP JSON-RPC message.

    ``reply_id`` is the id to answer with (None when it could not be read);
    ``replyable`` is False when the faulty message was a response, which is
    never answered.
    """

    def __init__(
        self,
        message: str,
        code: int,
        reply_id: str | int | None = None,
        replyable: bool = True,
        *,
        requirement: str | None = "basic/index#3",
    ) -> None:
        super().__init__(message, code, requirement=requirement)
        self.reply_id = reply_id
        self.replyable = replyable


def is_valid_id(value: Any) -> bool:
    """[basic/index#4, #5] a request id is a string or an integer, never null (nor bool, nor float)."""
    t = type(value)
    return t is str or t is int


def _no_constants(name: str) -> Any:
    # NaN and Infinity are Python extensions, not JSON
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    # JSON has no infinity, but 1e400 overflows a double to one: refuse it here
    # rather than fail later when the value is written back (spec_notes/basic/index.md)
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


#: one decoder for every message (``json.loads`` with options builds a new one per call)
_decoder = json.JSONDecoder(parse_constant=_no_constants, parse_float=_finite_float)
#: its scanner, which ``_decoder.decode`` calls between two whitespace matches
#: (set by JSONDecoder.__init__, not in typeshed)
_scan_once: Callable[[str, int], tuple[Any, int]] = _decoder.scan_once  # type: ignore[attr-defined]
_BYTES_LIKE = (bytes, bytearray, memoryview)


def loads(data: bytes | str) -> Any:
    """Parse JSON text; anything that is not JSON is a Parse error (-32700)."""
    try:
        if isinstance(data, _BYTES_LIKE):
            text = bytes(data).decode("utf-8")
        else:
            text = data
        # A message is one value with no blank around it (what peers write): scanned
        # straight away, it parses as decode() would parse it, a fifth faster (bench
        # W1, W4). Blanks, trailing data or no value at all: decode() takes the text
        # again and says what is wrong; a broken value raises here what it would there.
        try:
            value, end = _scan_once(text, 0)
        except StopIteration:
            end = -1
        if end == len(text):
            return value
        return _decoder.decode(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise InvalidMessage(f"Parse error: {_short(e)}", ErrorCode.PARSE_ERROR) from e


def _short(e: BaseException) -> str:
    s = str(e) or type(e).__name__
    return s if len(s) <= 200 else s[:197] + "..."


_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ascii_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)
#: ``_encoder``'s C encoding function, made once rather than by every ``encode()`` call,
#: and without its circular-reference bookkeeping (markers=None): together a third of
#: the cost of encoding a small message (bench W1, W4). A value with a cycle recurses
#: until RecursionError instead, and ``_encoder.encode`` then reports it as it always
#: did.
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)  # None without the C accelerator
_c_encode: Callable[[Any, int], list[str]] | None = (
    _c_make_encoder(
        None,
        _encoder.default,
        json.encoder.encode_basestring,
        None,
        _encoder.key_separator,
        _encoder.item_separator,
        _encoder.sort_keys,
        _encoder.skipkeys,
        _encoder.allow_nan,
    )
    if _c_make_encoder is not None
    else None
)


def _encode_text(obj: Any) -> str:
    if _c_encode is not None:
        try:
            return "".join(_c_encode(obj, 0))
        except RecursionError:
            pass  # a cycle, or nesting too deep for any encoder: the checking one says which
    return _encoder.encode(obj)


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON. ``ensure_ascii=False`` keeps it compact; JSON strings
    escape control characters, so the result never holds a raw newline.

    A string holding a lone surrogate (JSON text may carry ``"\\ud800"``, and
    peers' strings are echoed back in errors and results) has no UTF-8 form:
    such a message is written with ``\\u`` escapes instead, which is still
    valid JSON and says exactly what the peer sent.
    """
    text = _encode_text(obj)
    try:
        # [basic/transports#1] every message we write is UTF-8 -- transports
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _ascii_encoder.encode(obj).encode("ascii")


#: what a JSON value is, in JSON's words (for error messages)
_JSON_KIND: dict[type, str] = {
    type(None): "null",
    bool: "a boolean",
    float: "a non-integer number",
    list: "an array",
    dict: "an object",
}


def classify(obj: Any) -> RawMessage:
    """Check the JSON-RPC envelope of one message and say what it is.

    Raises :class:`InvalidMessage` (-32600, or -32602 for params that are not an
    object) for anything else.
    """
    if type(obj) is not dict:
        raise InvalidMessage("Invalid Request: a message must be a JSON object", ErrorCode.INVALID_REQUEST)
    has_id = "id" in obj
    raw_id = obj.get("id")
    id_ok = type(raw_id) is str or type(raw_id) is int  # is_valid_id(raw_id), inline
    reply_id = raw_id if id_ok else None
    # [basic/index#3] every message follows JSON-RPC 2.0: the version member is exactly "2.0"
    if obj.get("jsonrpc") != "2.0":
        raise InvalidMessage('Invalid Request: "jsonrpc" must be "2.0"', ErrorCode.INVALID_REQUEST, reply_id)
    if "method" in obj:
        method = obj["method"]
        if type(method) is not str:
            raise InvalidMessage('Invalid Request: "method" must be a string', ErrorCode.INVALID_REQUEST, reply_id)
        if "result" in obj or "error" in obj:
            raise InvalidMessage(
                "Invalid Request: a message cannot be both a request and a response",
                ErrorCode.INVALID_REQUEST,
                reply_id,
            )
        if has_id and not id_ok:
            # [basic/index#4, #5] string or integer id, never null -- checked before
            # params: a request without a usable id is an invalid request first of all
            got = _JSON_KIND.get(type(raw_id), "an unusable value")
            raise InvalidMessage(
                f"Invalid Request: request id must be a string or an integer, not {got}",
                ErrorCode.INVALID_REQUEST,
                requirement="basic/index#5" if raw_id is None else "basic/index#4",
            )
        params = obj.get("params")
        if "params" in obj and type(params) is not dict:
            raise InvalidMessage(
                'Invalid params: "params" must be an object', ErrorCode.INVALID_PARAMS, reply_id, replyable=has_id
            )
        if has_id:
            assert type(raw_id) is str or type(raw_id) is int
            return _raw_request(raw_id, method, params, obj)
        # [basic/index#14] a notification carries no id (its absence is what makes it one)
        return _raw_notification(method, params, obj)
    # [2025-06-18:basic/index#9] a response never sets both result and error
    if "result" in obj and "error" in obj:
        raise InvalidMessage(
            "Invalid response: both result and error", ErrorCode.INVALID_REQUEST, reply_id, replyable=False
        )
    if "result" in obj:
        # [basic/index#7] a result response carries the request's id
        if not id_ok:
            raise InvalidMessage(
                "Invalid response: result without a valid id",
                ErrorCode.INVALID_REQUEST,
                replyable=False,
                requirement="basic/index#7",
            )
        result = obj["result"]
        # [basic/index#8] ... and a result, an object -- index#result-responses
        if type(result) is not dict:
            raise InvalidMessage(
                "Invalid response: result must be an object",
                ErrorCode.INVALID_REQUEST,
                reply_id,
                replyable=False,
                requirement="basic/index#8",
            )
        assert type(raw_id) is str or type(raw_id) is int
        return _raw_result(raw_id, result)
    if "error" in obj:
        err = obj["error"]
        # [basic/index#10] the id may be missing (or null, in JSON-RPC 2.0 terms) only when unreadable
        if has_id and raw_id is not None and not id_ok:
            raise InvalidMessage(
                "Invalid response: bad id", ErrorCode.INVALID_REQUEST, replyable=False, requirement="basic/index#10"
            )
        # [basic/index#11, #12] error has an integer code and a string message
        if type(err) is not dict or type(err.get("code")) is not int or type(err.get("message")) is not str:
            code_broken = type(err) is dict and "code" in err and type(err["code"]) is not int
            raise InvalidMessage(
                "Invalid response: error must have an integer code and a string message",
                ErrorCode.INVALID_REQUEST,
                reply_id,
                replyable=False,
                requirement="basic/index#12" if code_broken else "basic/index#11",
            )
        return RawError(reply_id, err["code"], err["message"], err.get("data"), "data" in err)
    # [2025-06-18:basic/index#8] a response sets result or error: with neither, this is no message at all
    raise InvalidMessage(
        "Invalid Request: neither a request, a notification nor a response", ErrorCode.INVALID_REQUEST, reply_id
    )


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals())
