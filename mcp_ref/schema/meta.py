"""schema.ts "Common Types": the ``_meta`` objects of 2026-07-28, as typed views.

Every ``_meta`` field of the model stays a plain dict (any key of the
``_meta`` grammar may appear, extensions add their own, and the engine
touches it on every message). These classes are what the reserved keys mean:
decode a ``_meta`` dict into one to read it checked and typed, encode one to
build the dict. ``mcp_ref.schema._meta_keys`` has the key names and one-key
accessors for the hot path.

Decoding a request's ``_meta`` as :class:`RequestMetaObject` is the check
2026-07-28 asks of a server: the protocol version and the client capabilities
are required (a request without either is malformed: -32602), and each
reserved key has its type. Keys the class does not name (``traceparent``,
an extension's keys) are kept in ``extra``.
"""

from collections.abc import Mapping
from typing import Any

from attrs import field, frozen

from ..errors import DecodeError
from ._base import EXTRA, install_model_methods, since
from ._converter import decode, encode
from ._meta_keys import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROGRESS_TOKEN,
    PROTOCOL_VERSION,
    SERVER_INFO,
    meta_value,
)
from .jsonrpc import LoggingLevel, ProgressToken, RequestId
from .lifecycle import ClientCapabilities, Implementation

__all__ = [
    "RequestMetaObject",
    "NotificationMetaObject",
    "ResultMetaObject",
    "SubscriptionsListenResultMetaObject",
    "client_capabilities",
    "client_info",
    "server_info",
    "request_meta",
    "with_server_info",
]


def _key(name: str) -> dict[str, Any]:
    return {"wire": f"io.modelcontextprotocol/{name}"}


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class RequestMetaObject:
    """The ``_meta`` of a 2026-07-28 request (``io.modelcontextprotocol/*`` keys)."""

    protocol_version: str = field(metadata=_key("protocolVersion"))
    client_capabilities: ClientCapabilities = field(metadata=_key("clientCapabilities"))
    client_info: Implementation | None = field(default=None, metadata=_key("clientInfo"))
    log_level: LoggingLevel | None = field(default=None, metadata=_key("logLevel"))
    progress_token: ProgressToken | None = None
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class NotificationMetaObject:
    """The ``_meta`` of a 2026-07-28 notification: the subscription it was delivered on, if any."""

    subscription_id: RequestId | None = field(default=None, metadata=_key("subscriptionId"))
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class ResultMetaObject:
    """The ``_meta`` of a 2026-07-28 result: who answered."""

    server_info: Implementation | None = field(default=None, metadata=_key("serverInfo"))
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class SubscriptionsListenResultMetaObject:
    """The ``_meta`` of the result that ends a ``subscriptions/listen`` stream: which one."""

    subscription_id: RequestId = field(metadata=_key("subscriptionId"))
    server_info: Implementation | None = field(default=None, metadata=_key("serverInfo"))
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


# -- the reserved keys whose values are model objects ---------------------------------
# (the scalar ones -- protocol version, log level, subscription id, trace context --
# are _meta_keys' readers; these decode, raising DecodeError naming the key)


def _decode_key(meta: Mapping[str, Any] | None, key: str, tp: Any) -> Any:
    value = meta_value(meta, key)
    if value is None:
        return None
    try:
        return decode(value, tp)
    except DecodeError as e:
        path = f"_meta.{key}" + (f".{e.path}" if e.path and not e.path.startswith("[") else e.path)
        raise DecodeError(path, e.problem) from None


def client_capabilities(meta: Mapping[str, Any] | None) -> ClientCapabilities | None:
    """``io.modelcontextprotocol/clientCapabilities``, decoded (an empty object declares none)."""
    found: ClientCapabilities | None = _decode_key(meta, CLIENT_CAPABILITIES, ClientCapabilities)
    return found


def client_info(meta: Mapping[str, Any] | None) -> Implementation | None:
    """``io.modelcontextprotocol/clientInfo``, decoded: self-reported, for display and logs only."""
    found: Implementation | None = _decode_key(meta, CLIENT_INFO, Implementation)
    return found


def server_info(meta: Mapping[str, Any] | None) -> Implementation | None:
    """``io.modelcontextprotocol/serverInfo`` of a result, decoded: self-reported, for display only."""
    found: Implementation | None = _decode_key(meta, SERVER_INFO, Implementation)
    return found


# -- writers -------------------------------------------------------------------------


def request_meta(
    protocol_version: str,
    client_capabilities: ClientCapabilities,
    *,
    client_info: Implementation | None = None,
    log_level: str | None = None,
    progress_token: str | int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``_meta`` dict of a 2026-07-28 request: its revision and the client's capabilities
    (required), who is asking (SHOULD be given), the log level it opts in to, a progress
    token, and any other keys (``extra``: trace context, an extension's keys).

    The capabilities and client info are encoded for ``protocol_version``.
    """
    meta: dict[str, Any] = dict(extra or {})
    meta[PROTOCOL_VERSION] = protocol_version
    meta[CLIENT_CAPABILITIES] = encode(client_capabilities, protocol_version)
    if client_info is not None:
        meta[CLIENT_INFO] = encode(client_info, protocol_version)
    if log_level is not None:
        meta[LOG_LEVEL] = log_level
    if progress_token is not None:
        meta[PROGRESS_TOKEN] = progress_token
    return meta


def with_server_info(meta: Mapping[str, Any] | None, info: Implementation, revision: str) -> dict[str, Any]:
    """A copy of a result's ``_meta`` with ``io.modelcontextprotocol/serverInfo`` set."""
    return {**(meta or {}), SERVER_INFO: encode(info, revision)}


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
