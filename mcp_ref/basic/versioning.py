"""basic/versioning (2026-07-28): eras, the per-request protocol fields, version errors.

Two eras share one code base (spec_notes/basic/versioning.md):

* **legacy** revisions (2024-11-05 .. 2025-11-25) open a session with
  ``initialize``; :mod:`mcp_ref.basic.lifecycle` and the session engine
  (:mod:`mcp_ref.connection`) negotiate them;
* **modern** revisions (2026-07-28) have no session: every request carries its
  version, the client's capabilities and (optionally) its identity and log
  level in ``params._meta`` (basic/index#meta), and is accepted or refused on
  its own (:mod:`mcp_ref.exchange` applies the rules below).

Everything here is data and small pure functions, sans-IO: which methods each
modern revision has, the reserved ``_meta`` keys, :func:`read_request_meta`
(the checks every modern request passes first) and the three error codes
the revision adds, with the ``data`` each carries.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from ..errors import DecodeError, ErrorCode, MissingClientCapability, ProtocolError
from ..schema._base import install_model_methods
from ..schema._converter import decode
from ..schema.lifecycle import ClientCapabilities, Implementation
from ..schema.logging import LoggingLevel

__all__ = [
    "Era",
    "MODERN_VERSIONS",
    "era_of",
    "PROTOCOL_VERSION_KEY",
    "CLIENT_INFO_KEY",
    "CLIENT_CAPABILITIES_KEY",
    "LOG_LEVEL_KEY",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
    "REQUIRED_META_KEYS",
    "HEADER_MISMATCH",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "MODERN_ERROR_CODES",
    "LEGACY_ONLY_ERROR_CODES",
    "modern_error_code",
    "CORE_RESULT_TYPES",
    "EXTENSION_RESULT_TYPES",
    "supported_result_types",
    "MODERN_CLIENT_REQUESTS",
    "REMOVED_IN_MODERN",
    "MRTR_METHODS",
    "RequestMeta",
    "read_request_meta",
    "is_modern_request",
    "era_of_first_message",
    "unsupported_version",
    "initialize_refused",
    "missing_capability",
    "header_mismatch",
    "capability_object",
    "level_passes",
    "LOG_LEVELS",
]


class Era(enum.Enum):
    """How a revision is spoken (basic/versioning#terminology)."""

    LEGACY = "legacy"  # an initialize handshake opens a session
    MODERN = "modern"  # every request stands alone

    __hash__ = object.__hash__


#: the modern revisions mcp_ref speaks, newest first
MODERN_VERSIONS: Final = ("2026-07-28",)


def era_of(version: str) -> Era:
    """The era of a revision mcp_ref knows (modern from 2026-07-28 on, by the date order of revisions)."""
    return Era.MODERN if version >= MODERN_VERSIONS[-1] else Era.LEGACY


# -- the reserved _meta keys of a modern request and result (basic/index#meta) --------------------

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"
#: [2026-07-28:basic/index#52] the fields every request carries
REQUIRED_META_KEYS: Final = (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY)

# -- result types (basic/index#resulttype) ---------------------------------------------------------

#: [2026-07-28:basic/index#12] the result types of the core protocol
CORE_RESULT_TYPES: Final = frozenset({"complete", "input_required"})
#: [2026-07-28:basic/index#11] the result types extensions add, by extension id
EXTENSION_RESULT_TYPES: Final[Mapping[str, frozenset[str]]] = {
    "io.modelcontextprotocol/tasks": frozenset({"task"}),
}


def supported_result_types(extensions: Iterable[str] | None) -> frozenset[str]:
    """[2026-07-28:basic/index#12] the result types a party accepts: the core protocol's and
    those of the extensions it advertised in its capabilities (``extensions``: their ids)."""
    extra = [EXTENSION_RESULT_TYPES.get(ext, frozenset()) for ext in extensions or ()]
    return CORE_RESULT_TYPES.union(*extra)


# -- error codes (basic/index#error-codes): the sub-range -32020..-32099 is the spec's ---------------

HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
#: the codes a modern peer recognises as "this server is modern" (transports' backward compatibility)
MODERN_ERROR_CODES: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)
#: [2026-07-28:basic/index#22] codes earlier revisions defined that a modern message never carries,
#: and the code that takes their place (resource not found is Invalid params now)
LEGACY_ONLY_ERROR_CODES: Final[Mapping[int, int]] = {
    int(ErrorCode.RESOURCE_NOT_FOUND): int(ErrorCode.INVALID_PARAMS),
    int(ErrorCode.URL_ELICITATION_REQUIRED): int(ErrorCode.INTERNAL_ERROR),
}


def modern_error_code(code: int) -> int:
    """The code a 2026-07-28 error carries for ``code`` (an application's, or ours).

    [2026-07-28:basic/index#19, #22] a code earlier revisions defined is written as the one that
    replaced it (-32002, the one code of the legacy sub-range -32000..-32019 mcp_ref knows, never
    goes out); [2026-07-28:basic/index#21] a code of the spec's sub-range -32020..-32099 the spec
    does not define is written as -32603 (Internal error). Other codes are the application's.
    """
    code = LEGACY_ONLY_ERROR_CODES.get(code, code)
    # [2026-07-28:basic/index#21] only the spec's own codes from its sub-range
    if -32099 <= code <= -32020 and code not in MODERN_ERROR_CODES:
        return int(ErrorCode.INTERNAL_ERROR)
    return code


# -- methods per modern revision (2026-07-28 methods.tsv) --------------------------------------------

#: the requests a client sends a 2026-07-28 server (the tasks extension adds its own)
MODERN_CLIENT_REQUESTS: Final[Mapping[str, frozenset[str]]] = {
    "2026-07-28": frozenset(
        {
            "server/discover",
            "subscriptions/listen",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "prompts/list",
            "prompts/get",
            "completion/complete",
        }
    ),
}
#: [2026-07-28:changelog] methods of earlier revisions a modern server answers -32601 for
REMOVED_IN_MODERN: Final = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
    }
)
#: [2026-07-28:basic/patterns/mrtr#supported-requests] the requests that may be answered
#: with an InputRequiredResult (and may carry inputResponses / requestState)
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})


# -- the per-request protocol fields ---------------------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RequestMeta:
    """What a modern request says about itself in ``params._meta``.

    ``capabilities`` is the JSON object as sent (what capability checks read:
    an empty object declares a capability, basic/lifecycle's rule);
    ``client_capabilities`` its decoded form.
    """

    protocol_version: str
    capabilities: Mapping[str, Any]
    client_capabilities: ClientCapabilities
    client_info: Implementation | None = None
    log_level: LoggingLevel | None = None
    progress_token: str | int | None = None


def is_modern_request(params: Any) -> bool:
    """Whether a request's raw params carry a modern protocol version in ``_meta`` (the
    era marker of stdio: basic/versioning#backward-compatibility)."""
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and PROTOCOL_VERSION_KEY in meta


#: requests that exist only in modern revisions: whichever way they are sent, the client is modern
_MODERN_ONLY: Final = frozenset({"server/discover", "subscriptions/listen"})


def era_of_first_message(message: Any) -> Era | None:
    """On one channel (stdio, in memory) the era is chosen by how the client opens
    ([2026-07-28:basic/versioning#11]; spec_notes/basic/versioning.md): the first request
    that carries a modern protocol version in ``_meta``, or is ``server/discover`` /
    ``subscriptions/listen``, selects the modern era; any other request but ``ping``
    (``initialize`` above all) the legacy one. None: ``message`` (parsed JSON) decides
    nothing yet (a notification, a response, a ping, something unreadable).
    """
    if type(message) is not dict or "method" not in message or "id" not in message:
        return None
    method = message["method"]
    if method in _MODERN_ONLY or is_modern_request(message.get("params")):
        return Era.MODERN
    if method == "ping":
        return None
    return Era.LEGACY


def read_request_meta(params: Any) -> RequestMeta:
    """Read and check the protocol fields of a modern request's raw ``params``.

    Raises :class:`~mcp_ref.errors.ProtocolError` -32602 (Invalid params) when a
    required field is missing or a field has the wrong type, or the log level is
    not one the spec names. It does not judge the version itself (see
    :func:`unsupported_version`): a well-formed request for another version is
    still well formed.
    """
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is not dict:
        # [2026-07-28:basic/index#53] no _meta: the required fields are missing -- index#meta
        raise ProtocolError(
            f"Invalid params: a request carries params._meta with {PROTOCOL_VERSION_KEY} and {CLIENT_CAPABILITIES_KEY}",
            ErrorCode.INVALID_PARAMS,
            requirement="2026-07-28:basic/index#53",
        )
    missing = [key for key in REQUIRED_META_KEYS if key not in meta]
    if missing:
        # [2026-07-28:basic/index#53] a request missing a required field is malformed: -32602
        raise ProtocolError(
            f"Invalid params: params._meta lacks {', '.join(missing)}",
            ErrorCode.INVALID_PARAMS,
            requirement="2026-07-28:basic/index#53",
        )
    version = meta[PROTOCOL_VERSION_KEY]
    if type(version) is not str:
        raise ProtocolError(
            f"Invalid params: params._meta.{PROTOCOL_VERSION_KEY} is a string", ErrorCode.INVALID_PARAMS
        )
    caps = meta[CLIENT_CAPABILITIES_KEY]
    info = meta.get(CLIENT_INFO_KEY)
    which = CLIENT_CAPABILITIES_KEY
    try:
        capabilities = decode(caps, ClientCapabilities)
        which = CLIENT_INFO_KEY
        client_info = decode(info, Implementation) if info is not None else None
    except DecodeError as e:
        raise ProtocolError(f"Invalid params: params._meta.{which}: {e}", ErrorCode.INVALID_PARAMS) from None
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and level not in LOG_LEVELS:
        # [2026-07-28:server/utilities/logging#6] an unknown log level: -32602 -- logging#error-handling
        raise ProtocolError(
            f"Invalid params: {level!r} is not a log level ({', '.join(LOG_LEVELS)})",
            ErrorCode.INVALID_PARAMS,
            requirement="2026-07-28:server/utilities/logging#6",
        )
    token = meta.get("progressToken")
    if token is not None and type(token) is not str and type(token) is not int:
        # [2026-07-28:basic/patterns/progress#2] a token is a string or an integer
        raise ProtocolError(
            "Invalid params: params._meta.progressToken: expected string or integer",
            ErrorCode.INVALID_PARAMS,
            requirement="2026-07-28:basic/patterns/progress#2",
        )
    return RequestMeta(
        protocol_version=version,
        capabilities=caps,
        client_capabilities=capabilities,
        client_info=client_info,
        log_level=level,
        progress_token=token,
    )


LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_RANK: Final = {level: i for i, level in enumerate(LOG_LEVELS)}


def level_passes(level: str, minimum: str | None) -> bool:
    """Whether a log message at ``level`` may go out for a request whose ``_meta`` asked for
    ``minimum``: [2026-07-28:server/utilities/logging#3] never without one, [#4] at or above it."""
    return minimum is not None and _RANK[level] >= _RANK[minimum]


def unsupported_version(requested: str, supported: tuple[str, ...]) -> ProtocolError:
    """[2026-07-28:basic/versioning#1] the error for a version we do not implement: its data
    lists what we do support and echoes what was asked for -- versioning#protocol-version-negotiation."""
    return ProtocolError(
        "Unsupported protocol version",
        UNSUPPORTED_PROTOCOL_VERSION,
        {"supported": list(supported), "requested": requested},
        requirement="2026-07-28:basic/versioning#1",
    )


def initialize_refused(params: Any, supported: tuple[str, ...]) -> ProtocolError:
    """The error for a legacy client's ``initialize`` (one without a modern ``_meta``) on the
    modern path, naming the versions we support in its message and ``data``
    (2026-07-28 basic/versioning#10; spec_notes/basic/versioning.md, "initialize to a server of
    modern revisions only"): -32022 when the version it proposes is one we do not serve (a server of
    modern revisions only), -32601 when it is one we serve through initialize but the channel
    already speaks 2026-07-28, -32602 when it proposes none."""
    requested = params.get("protocolVersion") if type(params) is dict else None
    offered = ", ".join(supported)
    if type(requested) is not str:
        return ProtocolError(
            f"Invalid params: initialize proposes no protocolVersion; this server supports {offered}",
            ErrorCode.INVALID_PARAMS,
            {"supported": list(supported)},
            requirement="2026-07-28:basic/index#53",
        )
    if requested in supported:
        return ProtocolError(
            f"Method not found: initialize, on a channel that speaks 2026-07-28 (this server supports {offered})",
            ErrorCode.METHOD_NOT_FOUND,
            {"supported": list(supported)},
            requirement="2026-07-28:basic/transports/streamable-http#29",
        )
    # [2026-07-28:basic/versioning#10] a version we do not serve: the answer names those we do
    return ProtocolError(
        f"Unsupported protocol version {requested}: this server supports {offered}",
        UNSUPPORTED_PROTOCOL_VERSION,
        {"supported": list(supported), "requested": requested},
        requirement="2026-07-28:basic/versioning#1",
    )


def capability_object(paths: list[tuple[str, ...]] | tuple[tuple[str, ...], ...]) -> dict[str, Any]:
    """The ``ClientCapabilities`` JSON object naming ``paths`` (``[("sampling", "tools")]``
    is ``{"sampling": {"tools": {}}}``): what MissingRequiredClientCapability lists."""
    out: dict[str, Any] = {}
    for path in paths:
        node = out
        for key in path:
            node = node.setdefault(key, {})
    return out


def missing_capability(*paths: tuple[str, ...], what: str | None = None) -> MissingClientCapability:
    """[2026-07-28:basic/index#57] the error for a request that needs a client capability its
    ``_meta`` did not declare: ``data.requiredCapabilities`` is a ClientCapabilities object.
    (A CapabilityMissing, as the 2025 session raises for the same handler code.)"""
    names = ", ".join(".".join(p) for p in paths)
    return MissingClientCapability(
        f"Missing required client capability: {names}" + (f" ({what})" if what else ""),
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        {"requiredCapabilities": capability_object(list(paths))},
        requirement="2026-07-28:basic/index#57",
    )


def header_mismatch(message: str) -> ProtocolError:
    """[2026-07-28:basic/transports/streamable-http#27] headers that do not match the body (or a
    required one missing or malformed): -32020."""
    return ProtocolError(
        f"Header mismatch: {message}", HEADER_MISMATCH, requirement="2026-07-28:basic/transports/streamable-http#27"
    )


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals(), hashable=False)
