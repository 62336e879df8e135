"""The grammar of ``_meta`` keys (basic/index#meta), where the data model can use it.

It lives in the schema layer because the converter checks every ``_meta`` it
writes (``_converter.attrs_unstructure``); :mod:`mcp_ref.basic.meta` is its
public home and re-exports it.

A key is an optional *prefix* (dot-separated labels, then ``/``) and a
*name*. Labels start with a letter and end with a letter or digit, with
letters, digits and hyphens between (#26, #27); a non-empty name begins and
ends with an alphanumeric, with hyphens, underscores, dots and alphanumerics
between (#29, #30). A prefix whose second label is ``modelcontextprotocol``
or ``mcp`` is reserved for MCP (:func:`is_reserved`).
"""

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..errors import DecodeError

__all__ = [
    "meta_key_problem",
    "is_reserved",
    "bad_meta_keys",
    "extension_key_problem",
    "WELL_FORMED",
    "PROGRESS_TOKEN",
    "PROTOCOL_VERSION",
    "CLIENT_INFO",
    "CLIENT_CAPABILITIES",
    "LOG_LEVEL",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "TRACEPARENT",
    "TRACESTATE",
    "BAGGAGE",
    "RESERVED_KEYS",
    "protocol_version",
    "log_level",
    "subscription_id",
    "traceparent",
    "tracestate",
    "baggage",
    "with_subscription_id",
    "meta_value",
    "with_trace_context",
]

#: the keys of ``_meta`` that MCP reserves (2026-07-28 basic/index#meta); the
#: ``io.modelcontextprotocol/*`` ones and the OpenTelemetry trace context
PROGRESS_TOKEN: Final = "progressToken"
PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"
BAGGAGE: Final = "baggage"
#: the values of ``logLevel`` (as jsonrpc.LOGGING_LEVELS: this module sits below the model's)
_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
RESERVED_KEYS: Final = frozenset(
    {
        PROGRESS_TOKEN,
        PROTOCOL_VERSION,
        CLIENT_INFO,
        CLIENT_CAPABILITIES,
        LOG_LEVEL,
        SERVER_INFO,
        SUBSCRIPTION_ID,
        TRACEPARENT,
        TRACESTATE,
        BAGGAGE,
    }
)

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PREFIX = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_NAME = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")


#: well-formed keys already seen (short ones, a bounded number): the keys we
#: write are few and repeat on every message, so writing checks them with one
#: set lookup. Only short keys, and never more than WELL_FORMED_LIMIT: a peer's
#: keys pass here too and must not pin memory.
WELL_FORMED: set[str] = set()
WELL_FORMED_LIMIT = 4096


def meta_key_problem(key: str) -> str | None:
    """What is wrong with a ``_meta`` key (None when it is well formed)."""
    if key in WELL_FORMED:
        return None
    problem = _problem(key)
    if problem is None and len(key) <= 128 and len(WELL_FORMED) < WELL_FORMED_LIMIT:
        WELL_FORMED.add(key)
    return problem


def _problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash:
        # [basic/index#26, #27, 2026-07-28:schema#2, #3] dot-separated labels, then a slash
        if not _PREFIX.fullmatch(prefix):
            return f"_meta key {key!r}: the prefix must be dot-separated labels (letter first, letter or digit last)"
    else:
        name = key
    # [basic/index#29, #30, 2026-07-28:schema#5] the name starts and ends with an alphanumeric
    if not _NAME.fullmatch(name):
        return f"_meta key {key!r}: the name must begin and end with a letter or digit"
    return None


def is_reserved(key: str) -> bool:
    """Whether the key's prefix is reserved for MCP (second label ``modelcontextprotocol`` or ``mcp``)."""
    prefix, slash, _ = key.rpartition("/")
    labels = prefix.split(".") if slash else []
    return len(labels) >= 2 and labels[1] in ("modelcontextprotocol", "mcp")


def bad_meta_keys(meta: Mapping[str, Any] | None) -> Iterable[str]:
    """The problems of every malformed key of a ``_meta`` object."""
    for key in meta or ():
        problem = meta_key_problem(key) if isinstance(key, str) else f"_meta key {key!r} is not a string"
        if problem is not None:
            yield problem


def extension_key_problem(key: str) -> str | None:
    """What is wrong with a key of a capabilities ``extensions`` object (None: fine).

    [2026-07-28:schema#30, #31] such a key follows the ``_meta`` key grammar and
    must have a prefix (``io.modelcontextprotocol/tasks``, ``com.example/thing``).
    """
    problem = meta_key_problem(key)
    if problem is not None:
        return problem.replace("_meta key", "extension id", 1)
    if "/" not in key:
        return f"extension id {key!r}: a prefix (reverse DNS, then '/') is required"
    return None


# -- the reserved keys with scalar values, one at a time ------------------------------
#
# Readers take a ``_meta`` dict (or None) and return the key's value, or None when it
# is absent; a value of the wrong shape raises DecodeError (-32602) naming the key
# (``_meta.io.modelcontextprotocol/protocolVersion: expected string``), except the
# trace context keys, whose malformed values are ignored (W3C Trace Context: a
# receiver discards a traceparent it cannot parse and starts a new trace). The keys
# whose values are model objects (capabilities, client and server info) are read and
# written by :mod:`mcp_ref.schema.meta`, which may use the converter.


def meta_value(meta: Mapping[str, Any] | None, key: str) -> Any:
    """The value at ``key`` of a ``_meta`` (None: no ``_meta``, or no such key);
    DecodeError when ``_meta`` is not an object."""
    if meta is None:
        return None
    if type(meta) is not dict and not isinstance(meta, Mapping):
        raise DecodeError("_meta", "expected object")
    return meta.get(key)


def _string(meta: Mapping[str, Any] | None, key: str) -> str | None:
    value = meta_value(meta, key)
    if value is None or type(value) is str:
        return value
    raise DecodeError(f"_meta.{key}", "expected string")


def protocol_version(meta: Mapping[str, Any] | None) -> str | None:
    """``io.modelcontextprotocol/protocolVersion``: the revision a 2026-07-28 request speaks."""
    return _string(meta, PROTOCOL_VERSION)


def log_level(meta: Mapping[str, Any] | None) -> str | None:
    """``io.modelcontextprotocol/logLevel``: the least severe level the client wants for
    this request; None means no ``notifications/message`` at all for it."""
    value = _string(meta, LOG_LEVEL)
    if value is not None and value not in _LEVELS:
        raise DecodeError(f"_meta.{LOG_LEVEL}", "expected one of " + ", ".join(repr(v) for v in _LEVELS))
    return value


def subscription_id(meta: Mapping[str, Any] | None) -> str | int | None:
    """``io.modelcontextprotocol/subscriptionId``: the id of the ``subscriptions/listen``
    request whose stream a notification (or its closing result) belongs to."""
    value = meta_value(meta, SUBSCRIPTION_ID)
    if value is None or type(value) is str or type(value) is int:
        return value
    raise DecodeError(f"_meta.{SUBSCRIPTION_ID}", "expected string or integer")


_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")


def traceparent(meta: Mapping[str, Any] | None) -> str | None:
    """``traceparent`` when it is a valid W3C Trace Context value, else None.

    Version ``ff`` is invalid, as are an all-zero trace id or parent id; a future
    version (not ``00``) may carry more fields after the flags.
    """
    value = meta_value(meta, TRACEPARENT)
    if type(value) is not str:
        return None
    m = _TRACEPARENT.fullmatch(value)
    if m is None:
        return None
    version, trace_id, parent_id, _, rest = m.groups()
    if version == "ff" or (version == "00" and rest) or set(trace_id) == {"0"} or set(parent_id) == {"0"}:
        return None
    return value


#: W3C Trace Context: at most 32 list members, 512 characters in all
_TRACESTATE_LIMIT = 512


def tracestate(meta: Mapping[str, Any] | None) -> str | None:
    """``tracestate`` (vendor trace data, a comma-separated list), when it is a string within
    the W3C limits; only meaningful beside a valid :func:`traceparent`."""
    value = meta_value(meta, TRACESTATE)
    if type(value) is not str or len(value) > _TRACESTATE_LIMIT or value.count(",") >= 32:
        return None
    return value


_BAGGAGE_LIMIT = 8192


def baggage(meta: Mapping[str, Any] | None) -> str | None:
    """``baggage`` (W3C Baggage: ``key=value`` members, comma-separated), when it is a string
    within the W3C limit of 8192 bytes."""
    value = meta_value(meta, BAGGAGE)
    if type(value) is not str or len(value.encode()) > _BAGGAGE_LIMIT:
        return None
    return value


# -- writers -------------------------------------------------------------------------


def with_subscription_id(meta: Mapping[str, Any] | None, sid: str | int) -> dict[str, Any]:
    """A copy of a notification's (or the closing result's) ``_meta`` tagged with its subscription."""
    return {**(meta or {}), SUBSCRIPTION_ID: sid}


def with_trace_context(
    meta: Mapping[str, Any] | None,
    traceparent: str,
    tracestate: str | None = None,
    baggage: str | None = None,
) -> dict[str, Any]:
    """A copy of ``meta`` carrying OpenTelemetry trace context (W3C formats)."""
    out = {**(meta or {}), TRACEPARENT: traceparent}
    if tracestate is not None:
        out[TRACESTATE] = tracestate
    if baggage is not None:
        out[BAGGAGE] = baggage
    return out
