"""What the engine reports when a message arrives.

:meth:`mcp_ref.connection.Connection.receive_message` turns one incoming
message into a list of these facts. They are plain records: the engine has
already updated its state, and the runtime decides what to do (start a
handler, wake a waiting caller, log). Events that carry ``reply`` hold an
encoded error response the runtime must send.

The events that report a fault of the peer (:class:`MessageRejected`,
:class:`InvalidResponse`, the ``...Ignored`` events, :class:`UnknownResponse`,
:class:`ErrorWithoutId`) carry ``requirement``, the id of the statement the
peer broke (``basic/index#5``), and its ``level`` (``MUST``, ``SHOULD NOT``
...), from :mod:`mcp_ref.basic.requirements`; both are None where nothing was
broken (an unknown notification method, a cancellation that crossed the
response). ``mcp-ref check`` reports the same ids.

In observer mode (``Connection(role, observer=True)``) the engine also reports
:class:`RuleBroken` for what the role it watches *sent* against the spec.

Like the data model's classes, events share one ``__repr__``, ``__eq__`` and
``__hash__`` that behave as attrs' own (:func:`~mcp_ref.schema._base.install_model_methods`)
instead of compiling three per class at import (bench W7).
"""

from typing import Any

from attrs import field, frozen

from .errors import ProtocolError
from .schema._base import install_model_methods
from .schema.jsonrpc import Error, ProgressToken, RequestId

__all__ = [
    "Event",
    "RequestReceived",
    "NotificationReceived",
    "ResponseReceived",
    "ErrorReceived",
    "InvalidResponse",
    "CancellationReceived",
    "CancellationIgnored",
    "ProgressReceived",
    "ProgressIgnored",
    "LateResponseIgnored",
    "UnknownResponse",
    "ErrorWithoutId",
    "MessageRejected",
    "RequestRefused",
    "NotificationIgnored",
    "ExchangeReceived",
    "InputRequiredReceived",
    "Initialized",
    "VersionRejected",
    "RuleBroken",
    "Fault",
]


@frozen(repr=False, eq=False)
class Event:
    """Base class of engine events."""


@frozen(repr=False, eq=False)
class Fault(Event):
    """Base of the events that can report a broken rule: ``requirement`` and
    ``level`` (keyword-only, None when no rule was broken)."""

    requirement: str | None = field(default=None, kw_only=True)
    level: str | None = field(default=None, kw_only=True)


@frozen(repr=False, eq=False)
class RequestReceived(Event):
    """A valid request for a method we serve; a handler should answer it.

    ``message`` is the typed request (``CallToolRequest`` ...); ``params`` its
    params (or None); ``progress_token`` the token the requestor asked
    progress under, if any.
    """

    id: RequestId
    method: str
    params: Any
    message: Any
    progress_token: ProgressToken | None = None


@frozen(repr=False, eq=False)
class NotificationReceived(Event):
    method: str
    params: Any
    message: Any


@frozen(repr=False, eq=False)
class ResponseReceived(Event):
    """The result of one of our requests, decoded into its result type."""

    id: RequestId
    method: str
    result: Any


@frozen(repr=False, eq=False)
class ErrorReceived(Event):
    """The peer answered one of our requests with an error response."""

    id: RequestId
    method: str
    error: Error


@frozen(repr=False, eq=False)
class InvalidResponse(Fault):
    """A response to one of our requests whose result does not decode."""

    id: RequestId
    method: str
    error: ProtocolError


@frozen(repr=False, eq=False)
class CancellationReceived(Event):
    """The peer cancelled a request of theirs that we are still handling."""

    request_id: RequestId
    reason: str | None


@frozen(repr=False, eq=False)
class CancellationIgnored(Fault):
    """A cancellation we ignore (unknown id, already answered, malformed)."""

    request_id: Any
    reason: str | None
    why: str


@frozen(repr=False, eq=False)
class ProgressReceived(Event):
    """Progress for one of our requests, in arrival order."""

    request_id: RequestId
    progress_token: ProgressToken
    progress: float
    total: float | None
    message: str | None


@frozen(repr=False, eq=False)
class ProgressIgnored(Fault):
    """Progress we drop: unknown token, not increasing, or after completion."""

    progress_token: Any
    progress: Any
    why: str


@frozen(repr=False, eq=False)
class LateResponseIgnored(Fault):
    """A response to a request we had cancelled (cancellation#6).

    ``task_id``: the request was task-augmented and the late response is its
    ``CreateTaskResult``: the peer runs a task nobody waits for, which the
    runtime cancels with ``tasks/cancel`` (cancellation#3).
    """

    id: RequestId
    method: str
    task_id: str | None = None


@frozen(repr=False, eq=False)
class UnknownResponse(Fault):
    """A response whose id matches no request of ours."""

    id: RequestId


@frozen(repr=False, eq=False)
class ErrorWithoutId(Fault):
    """An error response with no id: the peer could not read one of our messages."""

    error: Error


@frozen(repr=False, eq=False)
class MessageRejected(Fault):
    """An incoming message broke the protocol; ``reply`` (if any) must be sent."""

    error: ProtocolError
    reply: bytes | None


@frozen(repr=False, eq=False)
class RequestRefused(MessageRejected):
    """(2026-07-28, server) A request refused before any handler ran; ``http_status`` is
    what a Streamable HTTP server answers with (400, or 404 for a method it does not implement)."""

    http_status: int = field(default=400, kw_only=True)


@frozen(repr=False, eq=False)
class ExchangeReceived(Event):
    """(2026-07-28, server) A request that passed every check of its revision: run its
    handler and answer through ``exchange`` (:class:`mcp_ref.exchange.Exchange`)."""

    exchange: Any


@frozen(repr=False, eq=False)
class InputRequiredReceived(Event):
    """(2026-07-28, client) One of our requests was answered with an ``InputRequiredResult``:
    ``result`` holds its ``input_requests`` and ``request_state``; retry with the answers."""

    id: RequestId
    method: str
    result: Any


@frozen(repr=False, eq=False)
class NotificationIgnored(Fault):
    """A notification we do not act on (unknown method, bad params, wrong phase)."""

    method: Any
    why: str


@frozen(repr=False, eq=False)
class Initialized(Event):
    """The lifecycle reached the operation phase (basic/lifecycle#operation)."""

    protocol_version: str


@frozen(repr=False, eq=False)
class VersionRejected(Event):
    """(client) The server answered with a protocol version we do not support."""

    offered: str
    supported: tuple[str, ...]


@frozen(repr=False, eq=False)
class RuleBroken(Fault):
    """(observer mode) The role this engine watches sent something the spec forbids.

    ``message`` says what, in the engine's words; the message was recorded as
    sent anyway, so the engine stays in step with the connection it watches.
    """

    message: str


install_model_methods(globals())
