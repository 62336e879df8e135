"""Error classes and the JSON-RPC error codes the spec uses.

Three kinds of fault, after h11's ``_util.py``:

* :class:`LocalProtocolError` -- *we* were asked to do something the spec
  forbids (send a request for a capability the peer lacks, answer a request
  twice, encode a type the negotiated revision does not have). Raised before
  anything reaches the wire.
* :class:`RemoteProtocolError` -- the *peer* broke the spec. Carries the code
  of the error response it maps to.
* :class:`MCPError` -- the peer answered one of our requests with a JSON-RPC
  error response.

Every one of them carries an :class:`ErrorCode` (or, for ``MCPError``, the
integer the peer sent, which may lie outside the enum).
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = [
    "ErrorCode",
    "MCPRefError",
    "ProtocolError",
    "LocalProtocolError",
    "CapabilityMissing",
    "MissingClientCapability",
    "RemoteProtocolError",
    "DecodeError",
    "MCPError",
    "MessageTooLarge",
    "ConnectionClosed",
    "RequestTimeout",
    "RequestCancelled",
    "UnsupportedProtocolVersion",
    "HTTPTransportError",
    "TLSError",
    "StreamBroken",
    "AuthorizationError",
]


class ErrorCode(enum.IntEnum):
    """JSON-RPC error codes named by the MCP spec (and JSON-RPC 2.0 itself).

    Spec codes only: never 0, never an HTTP status. Implementation-specific
    codes live in -32000..-32099 (schema.ts, "JSON-RPC types"); mcp_ref does
    not invent any.
    """

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    # server/resources#error-handling (2025-11-25 and earlier; 2026-07-28 answers
    # an unknown resource with INVALID_PARAMS and never reuses the code)
    RESOURCE_NOT_FOUND = -32002
    # 2026-07-28 (the MCP range -32020..-32099): HTTP headers that disagree with the body
    HEADER_MISMATCH = -32020
    # 2026-07-28: the request needs a client capability it did not declare
    MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
    # 2026-07-28: the request's protocol version is not one the server speaks
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    # client/elicitation#url-elicitation-required-error
    URL_ELICITATION_REQUIRED = -32042
    # client/sampling#error-handling: the user rejected a sampling request
    USER_REJECTED = -1


class MCPRefError(Exception):
    """Base of every exception mcp_ref raises on purpose."""


class ProtocolError(MCPRefError):
    """A breach of the protocol. ``code`` is the JSON-RPC code it maps to;
    ``requirement`` the id of the statement broken (``basic/index#5``), when one
    applies (see :mod:`mcp_ref.basic.requirements` for its level)."""

    def __init__(
        self, message: str, code: int = ErrorCode.INVALID_REQUEST, data: Any = None, *, requirement: str | None = None
    ) -> None:
        super().__init__(message)
        #: the error message (without the code)
        self.message = message
        #: the JSON-RPC error code this maps to (an ErrorCode)
        self.code = int(code)
        #: the error's ``data``, sent with it when it goes on the wire
        self.data = data
        #: the requirement id of the rule broken, when one is known
        self.requirement = requirement


class LocalProtocolError(ProtocolError):
    """We were asked to break the spec; nothing was sent."""


class CapabilityMissing(LocalProtocolError):
    """The peer did not declare the capability a request (or one of its params) needs.

    Raised before anything is sent (basic/lifecycle#14). A tool that asks the
    client for something it does not offer (sampling, elicitation, roots) gets
    this; the tool registry turns it into a tool execution error the model can
    read. Check first with ``ctx.can_sample()`` / ``ctx.can_elicit()``.
    """


class MissingClientCapability(CapabilityMissing):
    """(2026-07-28) A request needs a client capability its ``_meta`` did not declare.

    The request is answered -32021 with ``data.requiredCapabilities``
    (2026-07-28 basic/index#57), never turned into a tool execution error. It is
    a :class:`CapabilityMissing`, so a handler that catches that to do without
    (``except CapabilityMissing``) runs the same in a 2025 session and a
    2026-07-28 request.
    """


class RemoteProtocolError(ProtocolError):
    """The peer broke the spec."""


class InvalidAnswer(RemoteProtocolError):
    """(server) The client's answer to what a handler asked it (``ctx.elicit``, ``ctx.sample``,
    ``ctx.list_roots``) does not fit the question: form content against the requested schema, a
    sampling result against its ``toolChoice``, an answer that does not parse.

    The same exception, with the same message, in a 2025 session (the client's response) and a
    2026-07-28 request (its retry's ``inputResponses`` entry, named by ``input_key``), so a handler
    catching :class:`RemoteProtocolError` runs unchanged in both. ``data["problems"]`` lists what
    is wrong, when known. Not caught, the request is answered with the reason: -32602 in
    2026-07-28 (the retry's params are wrong, basic/patterns/mrtr#29), -32603 in a 2025 session
    (the request's own params were fine).
    """

    def __init__(
        self, message: str, code: int = ErrorCode.INVALID_PARAMS, data: Any = None, *, input_key: str | None = None
    ) -> None:
        super().__init__(message, code, data)
        #: (2026-07-28) the key of the ``inputResponses`` entry that held the answer
        self.input_key = input_key


class InvalidCallbackAnswer(LocalProtocolError):
    """(client) The application's callback (elicitation, sampling) answered with something the
    server's request does not allow: form content that does not fit the requested schema, content
    with a decline, a sampling result that breaks ``toolChoice``. Nothing was sent.

    ``method`` is the request answered; ``problems`` lists what is wrong, each naming its field.
    In a 2026-07-28 call it comes out of the call (``call_tool`` ...): input responses cannot carry
    an error. In a 2025 session the server's request is answered -32603 with this message (the
    server's handler hears why) and the call goes on as the server decides.
    """

    def __init__(self, method: str, problems: list[str]) -> None:
        what = "elicitation answer" if method == "elicitation/create" else "sampling result"
        super().__init__(
            f"the client application's {what} does not fit the request: {'; '.join(problems)}",
            ErrorCode.INTERNAL_ERROR,
            {"problems": problems},
        )
        #: the request the callback answered (``elicitation/create``, ``sampling/createMessage``)
        self.method = method
        #: what is wrong, each naming its field
        self.problems = problems


class DecodeError(RemoteProtocolError):
    """A JSON value does not match the type it should decode to.

    ``path`` is the dotted location of the first problem ("params.arguments"),
    and ``str(err)`` reads "params.arguments: expected object".
    """

    def __init__(self, path: str, problem: str, code: int = ErrorCode.INVALID_PARAMS) -> None:
        #: where in the message the problem is (``params.arguments``)
        self.path = path
        #: what is wrong there
        self.problem = problem
        super().__init__(f"{path}: {problem}" if path else problem, code)


class MessageTooLarge(RemoteProtocolError):
    """A transport discarded an incoming message longer than its limit.

    The transport stays usable: the oversized message was skipped whole.
    ``kind`` ("request", "response" or None) and ``request_id`` are what the
    transport could read from the message's first bytes. The session fails
    our request at once when its response was the one dropped, and otherwise
    answers with an Invalid Request error (with the id when it is known).
    """

    def __init__(self, size: int, limit: int, *, kind: str | None = None, request_id: str | int | None = None) -> None:
        what = f"{kind} {request_id!r}" if kind and request_id is not None else "message"
        super().__init__(
            f"{what} of at least {size} bytes exceeds the limit of {limit} bytes", ErrorCode.INVALID_REQUEST
        )
        #: the message's size in bytes (at least; reading stopped at the limit)
        self.size = size
        #: the largest message taken, in bytes
        self.limit = limit
        #: what the message was (``"request"``, ``"response"``), as far as its first bytes say
        self.kind = kind
        #: its JSON-RPC id, as far as its first bytes say
        self.request_id = request_id


class MCPError(MCPRefError):
    """The peer answered our request with a JSON-RPC error response."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"[{code}] {message}")
        #: the JSON-RPC error code the peer sent
        self.code = code
        #: the error message the peer sent
        self.message = message
        #: the error's ``data`` as the peer sent it (None without)
        self.data = data


class ConnectionClosed(MCPRefError):
    """The session ended (EOF, transport failure or shutdown) before an answer came."""


class RequestTimeout(MCPRefError):
    """A request received no response within its timeout.

    ``outcome`` says what was done about it: usually "request cancelled" (a
    cancellation was sent); initialize and task-augmented requests are only
    given up on, and a request that could not even be sent is dropped. The
    message says how to wait longer:

    >>> print(RequestTimeout("tools/call", 60))
    tools/call: no response within 60s (idle timeout) (to wait longer: timeout= on the call, ...); request cancelled
    """

    def __init__(self, method: str, timeout: float, kind: str = "idle", *, outcome: str = "request cancelled") -> None:
        hints = {
            "idle": "timeout= on the call, or SessionConfig(request_timeout=)",
            "maximum": "SessionConfig(max_request_timeout=)",
        }
        hint = f" (to wait longer: {hints[kind]})" if kind in hints else ""
        super().__init__(f"{method}: no response within {timeout:g}s ({kind} timeout){hint}; {outcome}")
        #: the method of the request that timed out
        self.method = method
        #: the seconds that passed
        self.timeout = timeout
        #: ``"idle"`` (no answer nor progress for ``timeout`` seconds) or ``"total"`` (the ``max_timeout`` cap)
        self.kind = kind
        #: what became of the request (``request cancelled``: the peer was told)
        self.outcome = outcome


class UnsupportedProtocolVersion(MCPRefError):
    """(client) The server answered initialize with a version we do not speak.

    The session is closed (basic/lifecycle#12: the client disconnects).
    """

    def __init__(
        self,
        offered: str,
        supported: tuple[str, ...],
        *,
        server_versions: tuple[str, ...] = (),
        message: str | None = None,
    ) -> None:
        super().__init__(
            message or f"server chose protocol version {offered!r}; this client supports {', '.join(supported)}"
        )
        #: the revision the peer offered
        self.offered = offered
        #: the revisions we support
        self.supported = supported
        #: the revisions the server says it supports, when it said (a refused initialize's
        #: ``error.data.supported``, 2026-07-28:basic/versioning#10)
        self.server_versions = server_versions


class RequestCancelled(MCPRefError):
    """We cancelled our own request explicitly (``PendingRequest.cancel``)."""

    def __init__(self, method: str, reason: str | None) -> None:
        super().__init__(f"{method}: cancelled ({reason or 'no reason given'})")
        #: the method of the request that was cancelled
        self.method = method
        #: the reason given with the cancellation, if any
        self.reason = reason


class HTTPTransportError(MCPRefError):
    """The HTTP transport could not do its work (basic/transports#streamable-http).

    The family of HTTP failures that are not a JSON-RPC answer: ``status`` is
    the HTTP status of the answer that caused it (None when there was none:
    the connection was refused, broke or timed out), ``url`` the address
    concerned. A redirect (3xx) is one of these: it is never followed
    silently, and ``location`` names where the server pointed.

    A request whose HTTP exchange failed raises this from its call
    (``call_tool`` ...) and the session goes on: an error status (its
    ``__cause__`` is the :class:`MCPError` when the body held a JSON-RPC
    error), a 202 where an answer was due, an answer of another content
    type, a server that cannot be reached, a stream that ended before the
    answer. ``request_id`` is then the id of that request. Where no request
    can succeed (TLS, authorization), :func:`~mcp_ref.open_http_client`
    raises the :class:`TLSError` or :class:`AuthorizationError` itself.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        url: str | None = None,
        location: str | None = None,
        request_id: str | int | None = None,
    ) -> None:
        super().__init__(message)
        #: the error message
        self.message = message
        #: the HTTP status of the answer that caused it (None when there was no answer)
        self.status = status
        #: the URL concerned
        self.url = url
        #: where a redirect pointed (its ``Location``), for a 3xx
        self.location = location
        #: the JSON-RPC id of the request the failure is the outcome of, when it is one
        self.request_id = request_id


class StreamBroken(HTTPTransportError):
    """(2026-07-28) A request's response stream ended before its answer. The request is lost (the
    revision has no resumption); the client sends it again with a new id where that is safe."""


class TLSError(HTTPTransportError):
    """The TLS handshake with an ``https://`` server failed: an untrusted or
    expired certificate, a name mismatch, no common protocol version."""


class AuthorizationError(HTTPTransportError):
    """Authorization (basic/authorization) could not be obtained or used.

    ``step`` names the step that failed (``"resource-metadata"``,
    ``"authorization-server-metadata"``, ``"registration"``,
    ``"authorization"``, ``"token"``, ``"refresh"``, ``"step-up"`` ...; the
    list is in spec_notes/basic/authorization.md); ``error`` and
    ``error_description`` are the OAuth error the authorization server sent,
    when it sent one.
    """

    def __init__(
        self,
        step: str,
        message: str,
        *,
        status: int | None = None,
        url: str | None = None,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        super().__init__(f"authorization failed at {step}: {message}", status=status, url=url)
        self.step = step
        #: what went wrong, without the step
        self.problem = message
        self.error = error
        self.error_description = error_description
