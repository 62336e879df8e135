"""The sans-IO protocol engine: one MCP connection, as a state machine.

Synchronous, deterministic, no clock and no I/O (the h11 contract, DESIGN.md
section 2). The runtime feeds it what arrived and asks it for what to send::

    conn = Connection(Role.CLIENT, capabilities=ClientCapabilities())
    rid, data = conn.send_request("initialize", params)   # bytes to write
    events = conn.receive_message(data_from_peer)         # list of events
    data = conn.send_response(rid, result)                # LocalProtocolError if not allowed
    data = conn.send_cancel(rid, "user pressed stop")

Every ``send_*`` method checks the spec *before* producing bytes and raises
:class:`LocalProtocolError` when asked to break it (wrong phase, capability the
peer lacks, method missing from the negotiated revision, answering a cancelled
request, ...); nothing is recorded when it raises. ``receive_message`` never
raises for peer faults: it reports them as events, with an error reply to send
where the spec wants one.

Time belongs to the runtime: the engine records only what happened, e.g. that
an outgoing request was cancelled, so that a late response is reported as
:class:`~mcp_ref.events.LateResponseIgnored`.
"""

import functools
import math
from collections import Counter, OrderedDict
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from .basic import lifecycle as lc
from .basic.jsonrpc import (
    BATCH_REVISIONS,
    MAX_BATCH,
    InvalidMessage,
    RawError,
    RawNotification,
    RawRequest,
    RawResult,
    classify,
    dumps,
    loads,
)
from .basic.lifecycle import TASKS_SINCE, Phase, Role
from .basic.meta import bad_meta_keys
from .basic.requirements import level_of
from .basic.url_elicitation import announced_ids, check_elicitation_url
from .basic.utilities.cancellation import CancellationState, ignored_requirement, refusal, remember
from .basic.utilities.progress import IGNORED_REQUIREMENT, ProgressTokens, check_progress, valid_token
from .errors import CapabilityMissing, DecodeError, ErrorCode, LocalProtocolError, RemoteProtocolError
from .events import (
    CancellationIgnored,
    CancellationReceived,
    ErrorReceived,
    ErrorWithoutId,
    Event,
    Initialized,
    InvalidResponse,
    LateResponseIgnored,
    MessageRejected,
    NotificationIgnored,
    NotificationReceived,
    ProgressIgnored,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    RuleBroken,
    UnknownResponse,
    VersionRejected,
)
from .schema import messages as m
from .schema._base import LATEST_LEGACY_REVISION, install_model_methods, slot_builder
from .schema._converter import FIELD_WRITERS, converter_for, decode, field_writer
from .schema.cancellation import CancelledNotification, CancelledNotificationParams
from .schema.jsonrpc import Error, JSONRPCErrorResponse, JSONRPCResultResponse, ProgressToken, RequestId
from .schema.lifecycle import ClientCapabilities, Implementation, ServerCapabilities
from .schema.progress import ProgressNotification, ProgressNotificationParams
from .schema.tasks import CreateTaskResult

__all__ = ["Connection", "OutgoingRequest", "IncomingRequest", "Role", "Phase"]

# the events of every message, made without the frozen classes' __init__ (bench W1)
_request_received = slot_builder(RequestReceived)
_notification_received = slot_builder(NotificationReceived)
_response_received = slot_builder(ResponseReceived)
_progress_received = slot_builder(ProgressReceived)


@attrs.define(slots=True, repr=False, eq=False)
class OutgoingRequest:
    """A request we sent. ``state``: pending -> answered | cancelled."""

    id: RequestId
    method: str
    result_type: Any
    progress_token: ProgressToken | None
    task: bool
    last_progress: float | None = None
    state: Literal["pending", "cancelled"] = "pending"


@attrs.define(slots=True, repr=False, eq=False)
class IncomingRequest:
    """A request the peer sent us. ``state``: running -> answered | cancel-requested."""

    id: RequestId
    method: str
    progress_token: ProgressToken | None
    task: bool
    last_progress: float | None = None
    state: Literal["running", "cancel-requested"] = "running"


class _Route:
    """What the engine reads about one request method it sends or receives, looked up
    once per connection instead of in five method tables per message (bench W1)."""

    __slots__ = ("capability", "cls", "params_required", "params_type", "result_type", "since")

    def __init__(self, cls: type, method: str) -> None:
        self.cls = cls
        self.since = m.method_since(method)
        self.params_type: Any = m.PARAMS_TYPES[method]
        self.params_required = _params_required(cls)
        self.capability = lc.REQUEST_CAPABILITY.get(method)
        self.result_type: Any = m.RESULT_TYPES[method]


class Connection:
    """One side of one MCP session, without I/O."""

    #: messages a batch (2025-03-26) may hold; a larger one is refused whole
    max_batch = MAX_BATCH

    def __init__(
        self,
        role: Role,
        *,
        capabilities: ClientCapabilities | ServerCapabilities | None = None,
        supported_versions: tuple[str, ...] = lc.SUPPORTED_VERSIONS,
        observer: bool = False,
    ) -> None:
        if not supported_versions or any(v not in lc.SUPPORTED_VERSIONS for v in supported_versions):
            raise ValueError(f"supported_versions must be a non-empty subset of {lc.SUPPORTED_VERSIONS}")
        #: which side of the connection this engine is
        self.role = role
        #: observer mode: this engine watches a ``role`` someone else plays (see :meth:`observe_sent`);
        #: it produces no replies and raises nothing for the faults it sees
        self.observer = observer
        #: where the connection is in its lifecycle (a Phase)
        self.phase = Phase.AWAITING_INIT
        #: the protocol revisions we accept
        self.supported_versions = supported_versions  # [schema#8] older versions too, as configured
        if capabilities is None:
            capabilities = ClientCapabilities() if role is Role.CLIENT else ServerCapabilities()
        expected = ClientCapabilities if role is Role.CLIENT else ServerCapabilities
        if not isinstance(capabilities, expected):
            raise TypeError(f"a {role.value} declares {expected.__name__}, not {type(capabilities).__name__}")
        #: the capabilities we declare
        self.capabilities = capabilities
        self._own_caps: dict[str, Any] = converter_for(LATEST_LEGACY_REVISION).unstructure(capabilities)
        #: negotiated protocol version (None until negotiated)
        self.protocol_version: str | None = None
        #: the version the client asked for (both roles record it)
        self.requested_version: str | None = None
        #: the capabilities the peer declared (None before initialization)
        self.peer_capabilities: ClientCapabilities | ServerCapabilities | None = None
        self._peer_caps: dict[str, Any] | None = None
        #: the peer's Implementation (name, version), once initialized
        self.peer_info: Implementation | None = None
        #: what was ignored or refused, by reason -- for cross-checking peers
        self.stats: Counter[str] = Counter()
        self._next_id = 0
        self._outgoing: dict[RequestId, OutgoingRequest] = {}
        self._incoming: dict[RequestId, IncomingRequest] = {}
        #: cancelled and finished request ids (basic/utilities/cancellation)
        self.cancellation = CancellationState()
        #: progress tokens in use, ours and the peer's (basic/utilities/progress)
        self.progress_tokens = ProgressTokens()
        #: (observer mode) the id observe_sent makes send_request use
        self._forced_id: RequestId | None = None
        #: URL elicitation ids announced in this session and not completed yet (bounded): as a server,
        #: those we sent (request or -32042 error); as a client, those a -32042 error we received listed
        self.url_elicitations: OrderedDict[str, None] = OrderedDict()
        #: the phases in which the phase tables let this role send / accept any request: the
        #: table is read only in the others (bench W1)
        self._send_any = _SEND_ANY[role]
        self._accept_any = _ACCEPT_ANY[role]
        #: method -> _Route of the requests we send / receive (filled on first use; shared
        #: by every connection, see _CLIENT_REQUEST_ROUTES)
        self._routes_out: dict[str, _Route]
        self._routes_in: dict[str, _Route]
        if role is Role.CLIENT:
            self._req_out, self._req_in = m.CLIENT_REQUESTS, m.SERVER_REQUESTS
            self._note_out, self._note_in = m.CLIENT_NOTIFICATIONS, m.SERVER_NOTIFICATIONS
            self._routes_out, self._routes_in = _CLIENT_REQUEST_ROUTES, _SERVER_REQUEST_ROUTES
        else:
            self._req_out, self._req_in = m.SERVER_REQUESTS, m.CLIENT_REQUESTS
            self._note_out, self._note_in = m.SERVER_NOTIFICATIONS, m.CLIENT_NOTIFICATIONS
            self._routes_out, self._routes_in = _SERVER_REQUEST_ROUTES, _CLIENT_REQUEST_ROUTES

    # -- introspection ---------------------------------------------------------

    @property
    def revision(self) -> str:
        """The revision messages are encoded for now (latest until negotiated)."""
        if self.protocol_version is not None:
            return self.protocol_version
        requested = self.requested_version
        if requested is None:
            return LATEST_LEGACY_REVISION
        # while initialize is unanswered: the version the answer will carry
        # (basic/lifecycle#9-#11), never one we cannot encode
        return lc.negotiate_version(requested, self.supported_versions)

    def outgoing(self, rid: RequestId) -> OutgoingRequest | None:
        """The state of our request ``rid`` while it awaits its answer, else None."""
        return self._outgoing.get(rid)

    def incoming(self, rid: RequestId) -> IncomingRequest | None:
        """The state of the peer's request ``rid`` while we have not answered it, else None."""
        return self._incoming.get(rid)

    @property
    def pending_outgoing(self) -> list[RequestId]:
        """The ids of our requests still awaiting an answer."""
        return [rid for rid, r in self._outgoing.items() if r.state == "pending"]

    def peer_has(self, *path: str) -> bool:
        """Whether the peer declared the capability at ``path`` (JSON names)."""
        return lc.has_capability(self._peer_caps, path)

    def capability_problem(self, method: str, params: Any = None) -> tuple[str, ErrorCode] | None:
        """Why the peer cannot be sent ``method`` (with ``params``) for want of a
        capability, with the code it maps to; None when it can."""
        return self._capability_problem(lc.REQUEST_CAPABILITY.get(method), method, params)

    def _capability_problem(
        self, cap: tuple[str, ...] | None, method: str, params: Any
    ) -> tuple[str, ErrorCode] | None:
        if (
            cap is not None
            and not lc.has_capability(self._peer_caps, cap)
            and lc.capability_applies(method, self.revision)
        ):
            # [basic/lifecycle#14, 2024-11-05:basic/lifecycle#13] only negotiated capabilities (2024-11-05 has no
            # completions capability, its servers complete without one)
            return (
                f"the peer did not declare the {'.'.join(cap)} capability needed for {method}",
                ErrorCode.METHOD_NOT_FOUND,
            )
        problem = lc.params_capability_problem(method, params, self._peer_caps)
        if problem is not None:
            return problem, ErrorCode.INVALID_PARAMS
        return None

    def we_have(self, *path: str) -> bool:
        """Whether our own capabilities include ``path`` (``we_have("tasks", "requests")``)."""
        return lc.has_capability(self._own_caps, path)

    # -- encoding --------------------------------------------------------------

    def _encode(self, message: Any) -> bytes:
        # [basic/index#26, #27, #29] a malformed _meta key, at any depth, is
        # refused by the converter as the field is written (LocalProtocolError)
        try:
            return dumps(converter_for(self.revision).unstructure(message))
        except _ENCODE_ERRORS as e:
            raise _unencodable(type(message).__name__, message, e) from e

    def _encode_message(self, cls: type, out: dict[str, Any], name: str, value: Any) -> bytes:
        """Encode the message ``cls(**out, name=value)``: ``out`` holds its JSON-RPC members
        (``jsonrpc``, ``method``, ``id``, in the class's field order), written as they are; the
        typed member ``name`` (``params`` or ``result``) goes through the converter and is left
        out when None (callers have checked that a required one is given). The bytes of
        ``self._encode(cls(...))`` without an envelope object per message (bench W1); a class
        the converter must see whole (see ``field_writer``) goes through it."""
        revision = self.revision
        hook = FIELD_WRITERS.get((revision, cls, name)) or field_writer(cls, name, revision)
        if hook is None:
            return self._encode(cls(**out, **{name: value}))
        try:
            if value is not None:
                # [basic/index#26, #27, #29] a malformed _meta key is refused as it is written
                out[name] = hook(value)
            return dumps(out)
        except _ENCODE_ERRORS as e:
            message = cls(**{k: v for k, v in out.items() if k != name}, **{name: value})
            raise _unencodable(cls.__name__, message, e) from e

    def error_reply(self, rid: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
        """Encode an error response that answers no tracked request (e.g. an
        unreadable message); for tracked requests use :meth:`send_error`."""
        return self._error_bytes(rid, code, message, data)

    def _error_bytes(self, rid: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
        if message and (len(message) > ERROR_MESSAGE_LIMIT or message.splitlines() != [message]):
            # [schema#1] the message is one concise line; the full text goes in
            # data when that is free (spec_notes/schema.md)
            if data is None:
                data = message
            message = concise(message)
        err = JSONRPCErrorResponse(id=rid, error=Error(code=int(code), message=message, data=data))
        try:
            out = converter_for(LATEST_LEGACY_REVISION).unstructure(err)
            if rid is None:
                # [basic/index#10] an unreadable id is written null, as JSON-RPC 2.0 says, in every
                # revision (2025-11-25 would allow leaving it out): as the HTTP layer does, and
                # what the SDK clients need -- see spec_notes/basic/index.md
                out["id"] = None
            return dumps(out)
        except _ENCODE_ERRORS as e:
            raise _unencodable("error response", err, e) from e

    # -- sending -----------------------------------------------------------------

    def _check_open(self) -> None:
        if self.phase is Phase.CLOSED:
            raise LocalProtocolError("the connection is closed")

    def _check_method_revision(self, method: str, since: str | None = None) -> None:
        if (since or m.method_since(method)) > self.revision:
            # [basic/lifecycle#14, 2024-11-05:basic/lifecycle#13] respect the negotiated protocol version
            raise LocalProtocolError(
                f"{method} does not exist in the negotiated protocol revision {self.revision}",
                ErrorCode.METHOD_NOT_FOUND,
                requirement="basic/lifecycle#14",
            )

    @staticmethod
    def _new_route(routes: dict[str, _Route], table: dict[str, Any], method: str) -> _Route | None:
        """The route of ``method``, kept in ``routes`` (None when ``table``, our or the peer's
        requests, lacks it). Callers look in ``routes`` first."""
        cls = table[method]
        if cls is None:
            return None
        route = routes[method] = _Route(cls, method)
        return route

    def _send_phase_rule(self) -> str:
        """The requirement we would break by sending in our current phase (lifecycle#1, #4-#6)."""
        if self.phase is Phase.AWAITING_INIT or (self.role is Role.SERVER and self.phase is Phase.INITIALIZING):
            return "basic/lifecycle#1"
        if self.role is Role.CLIENT:
            return "basic/lifecycle#5" if self.phase is Phase.INITIALIZING else "basic/lifecycle#4"
        return "basic/lifecycle#6"

    def send_request(
        self,
        method: str,
        params: Any = None,
        *,
        progress_token: ProgressToken | bool | None = None,
    ) -> tuple[RequestId, bytes]:
        """Encode a request; returns its id and the bytes to write.

        ``progress_token``: ``True`` to have one generated, a str/int to use
        that one (it must be unique among active requests), None for none.
        """
        self._check_open()
        route = self._routes_out.get(method) or self._new_route(self._routes_out, self._req_out, method)
        if route is None:
            raise LocalProtocolError(
                f"a {self.role.value} does not send {method!r} requests",
                ErrorCode.METHOD_NOT_FOUND,
                requirement="basic/lifecycle#14",
            )
        cls = route.cls
        self._check_method_revision(method, route.since)
        if self.phase not in self._send_any and not lc.phase_allows(lc.SEND_REQUESTS, self.role, self.phase, method):
            # [basic/lifecycle#1, #5, #6] phase table -- lifecycle#initialization
            raise LocalProtocolError(
                f"cannot send {method} in phase {self.phase.value}", requirement=self._send_phase_rule()
            )
        if method == "initialize" and self.phase is not Phase.AWAITING_INIT:
            # [basic/lifecycle#1] initialization comes once, first: the operation phase allows any
            # request but this one (the server would answer "already initialized")
            raise LocalProtocolError(
                f"cannot send initialize in phase {self.phase.value}: the session is initialized once",
                requirement="basic/lifecycle#1",
            )
        params_type = route.params_type
        _check_params(method, route.params_required, params_type, params)
        task = getattr(params, "task", None) is not None
        if method != "initialize":
            missing = self._capability_problem(route.capability, method, params)
            if missing is not None:
                raise CapabilityMissing(*missing, requirement=_capability_rule(method, missing[0]))
            if method == "elicitation/create" and getattr(params, "mode", None) == "url":
                _check_elicitation_url(params.url)
            if task:
                tcap = lc.TASK_REQUEST_CAPABILITY.get(method)
                if tcap is None or not self.peer_has(*tcap):
                    # [basic/utilities/tasks#2, #3, #4] no task augmentation without tasks.requests.*
                    # -- tasks#capability-negotiation
                    raise LocalProtocolError(
                        f"the peer did not declare {'.'.join(tcap or ('tasks',))}: {method} cannot be task-augmented",
                        requirement="basic/utilities/tasks#4" if method == "tools/call" else "basic/utilities/tasks#2",
                    )
        token: ProgressToken | None = None
        if progress_token is not None and progress_token is not False:
            meta_holder = type(params) if params is not None else params_type
            if not attrs.has(meta_holder) or "meta" not in attrs.fields_dict(meta_holder):
                raise LocalProtocolError(f"{method} params carry no _meta: progress cannot be requested")
            if progress_token is True:
                token = self.progress_tokens.generate(self._peek_id())
            else:
                token = self.progress_tokens.check_chosen(progress_token)
            base = params if params is not None else params_type()
            params = attrs.evolve(base, meta={**(base.meta or {}), "progressToken": token})
        rid = self._peek_id()
        if method == "initialize":
            if params.protocol_version not in self.supported_versions:
                # [basic/lifecycle#7] the client proposes a version it supports
                raise LocalProtocolError(f"protocol version {params.protocol_version!r} is not one we support")
            self.requested_version = params.protocol_version
        try:
            data = self._encode_message(cls, {"jsonrpc": "2.0", "method": method, "id": rid}, "params", params)
        except LocalProtocolError:
            if method == "initialize":
                self.requested_version = None
            raise
        self._next_id += 1
        result_type = CreateTaskResult if task else route.result_type
        self._outgoing[rid] = OutgoingRequest(rid, method, result_type, token, task)
        if method == "elicitation/create" and getattr(params, "mode", None) == "url" and params.elicitation_id:
            # (encoding refused a URL elicitation without an id: the session revisions require one)
            remember(self.url_elicitations, params.elicitation_id)
        if token is not None:
            self.progress_tokens.active[token] = rid
        if method == "initialize":
            self.phase = Phase.INITIALIZING
        return rid, data

    def _peek_id(self) -> Any:
        if self._forced_id is not None:
            return self._forced_id  # (observer mode: the id the watched side chose)
        # [basic/index#6] ids are never reused within the session: a counter
        while self._next_id in self._outgoing or self._next_id in self.cancellation.cancelled:
            self._next_id += 1
        return self._next_id

    def send_notification(self, method: str, params: Any = None) -> bytes:
        """Encode a notification (not cancellation or progress: see send_cancel / send_progress)."""
        self._check_open()
        if method in ("notifications/cancelled", "notifications/progress"):
            raise LocalProtocolError(f"use send_{'cancel' if 'cancel' in method else 'progress'}() for {method}")
        cls = self._note_out[method]
        if cls is None:
            raise LocalProtocolError(
                f"a {self.role.value} does not send {method!r}",
                ErrorCode.METHOD_NOT_FOUND,
                requirement="basic/lifecycle#14",
            )
        self._check_method_revision(method)
        if not lc.phase_allows(lc.SEND_NOTIFICATIONS, self.role, self.phase, method):
            raise LocalProtocolError(
                f"cannot send {method} in phase {self.phase.value}", requirement=self._send_phase_rule()
            )
        rule = lc.NOTIFICATION_CAPABILITY.get(method)
        if rule is not None:
            whose, path = rule
            ok = self.we_have(*path) if whose == "own" else self.peer_has(*path)
            if not ok:
                # [server/utilities/logging#1] logging needs our logging capability;
                # [basic/lifecycle#14] the others, the capability they announce
                raise LocalProtocolError(
                    f"{method} needs the {'.'.join(path)} capability ({'ours' if whose == 'own' else 'the peer'})",
                    requirement="server/utilities/logging#1" if path == ("logging",) else "basic/lifecycle#14",
                )
        _check_params(method, _params_required(cls), m.PARAMS_TYPES[method], params)
        if method == "notifications/elicitation/complete" and params.elicitation_id not in self.url_elicitations:
            # [client/elicitation#15, #16] a completion names a URL elicitation this session was sent
            raise LocalProtocolError(
                f"no URL elicitation {params.elicitation_id!r} is pending in this session",
                ErrorCode.INVALID_PARAMS,
                requirement="client/elicitation#16",
            )
        data = self._encode_message(cls, {"jsonrpc": "2.0", "method": method}, "params", params)
        if method == "notifications/elicitation/complete":
            self.url_elicitations.pop(params.elicitation_id, None)
        if method == "notifications/initialized":
            # [basic/lifecycle#4] the client is ready: operation begins
            self.phase = Phase.OPERATING
        return data

    def _incoming_for_reply(self, rid: RequestId) -> IncomingRequest:
        self._check_open()
        req = self._incoming.get(rid)
        if req is None:
            raise LocalProtocolError(f"no request {rid!r} is awaiting a response (unknown or already answered)")
        if req.state == "cancel-requested":
            # [basic/utilities/cancellation#4] no response to a cancelled request
            raise LocalProtocolError(
                f"request {rid!r} was cancelled by the peer: no response may be sent",
                requirement="basic/utilities/cancellation#4",
            )
        return req

    def send_response(self, rid: RequestId, result: Any) -> bytes:
        """Encode the result of an incoming request and retire it."""
        req = self._incoming_for_reply(rid)
        route = self._routes_in.get(req.method)
        expected: type[Any] = (
            CreateTaskResult if req.task else route.result_type if route is not None else m.RESULT_TYPES[req.method]
        )
        if not isinstance(result, expected):
            raise LocalProtocolError(
                f"the result of {req.method} is {expected.__name__}, not {type(result).__name__}",
                ErrorCode.INTERNAL_ERROR,
            )
        if req.method == "initialize":
            if result.protocol_version not in self.supported_versions:
                # [basic/lifecycle#10] answer with a version we support
                raise LocalProtocolError(
                    f"cannot answer initialize with unsupported version {result.protocol_version!r}"
                )
            requested = self.requested_version
            if requested in self.supported_versions and result.protocol_version != requested:
                # [basic/lifecycle#9] a version we support is answered with that same version
                raise LocalProtocolError(
                    f"the client asked for {requested!r}, which we support: initialize must answer with it,"
                    f" not {result.protocol_version!r}"
                )
            self.protocol_version = result.protocol_version
        try:
            data = self._encode_message(JSONRPCResultResponse, {"jsonrpc": "2.0", "id": rid}, "result", result)
        except LocalProtocolError:
            if req.method == "initialize":
                self.protocol_version = None
            raise
        if req.method == "initialize":
            self.phase = Phase.AWAITING_INITIALIZED
        if req.task and req.progress_token is not None:
            # the task's progress goes on under the same token (send_task_progress)
            self.progress_tokens.task_started(req.progress_token, req.last_progress)
        self._retire_incoming(req)
        return data

    def send_error(self, rid: RequestId, code: int, message: str, data: Any = None) -> bytes:
        """Encode an error response to an incoming request and retire it."""
        req = self._incoming_for_reply(rid)
        if type(code) is not int and not isinstance(code, int):
            raise LocalProtocolError("error codes are integers")  # [basic/index#12]
        out = self._error_bytes(rid, int(code), message, data)
        if code == ErrorCode.URL_ELICITATION_REQUIRED:
            # [client/elicitation#16] the ids announced here may be completed later
            for i in announced_ids(data):
                remember(self.url_elicitations, i)
        if req.method == "initialize":
            self.phase = Phase.AWAITING_INIT
            self.requested_version = None
        self._retire_incoming(req)
        return out

    def url_elicitation_completed(self, elicitation_id: str) -> bool:
        """Client side: the peer reports ``elicitation_id`` complete. False when no
        -32042 error of this session listed it, or it was already completed
        ([client/elicitation#17]: the caller then ignores the notification)."""
        if self.role is not Role.CLIENT:
            raise LocalProtocolError("only a client receives elicitation completions")
        return self.url_elicitations.pop(elicitation_id, False) is None

    def finish_cancelled(self, rid: RequestId) -> None:
        """Retire an incoming request the peer cancelled, without any response."""
        req = self._incoming.get(rid)
        if req is None:
            raise LocalProtocolError(f"no request {rid!r} in flight")
        if req.state != "cancel-requested":
            raise LocalProtocolError(f"request {rid!r} was not cancelled: answer it")
        self._retire_incoming(req)

    def _retire_incoming(self, req: IncomingRequest) -> None:
        del self._incoming[req.id]
        self.cancellation.finished_theirs(req.id)

    def send_cancel(self, rid: RequestId, reason: str | None = None) -> bytes:
        """Cancel one of our in-flight requests (basic/utilities/cancellation)."""
        self._check_open()
        req = self._outgoing.get(rid)
        if req is None or req.state != "pending":
            # [basic/utilities/cancellation#1, schema#15] only our own requests still in progress
            raise LocalProtocolError(f"request {rid!r} is not in flight", requirement="basic/utilities/cancellation#1")
        why = refusal(req.method, req.task)
        if why is not None:
            # [basic/utilities/cancellation#2, #3, schema#14, #17] never initialize, never a task-augmented
            # request (tasks/cancel is for those)
            raise LocalProtocolError(
                f"request {rid!r} cannot be cancelled: {why}", requirement=ignored_requirement(why)
            )
        params = CancelledNotificationParams(request_id=rid, reason=reason)  # [schema#16] the id is always given
        data = self._encode_message(
            CancelledNotification, {"jsonrpc": "2.0", "method": "notifications/cancelled"}, "params", params
        )
        self.abandon(rid)
        return data

    def abandon(self, rid: RequestId) -> None:
        """Stop waiting for an outgoing request without telling the peer.

        A response arriving later is reported as LateResponseIgnored
        (cancellation#6). Used by send_cancel and when a session closes.
        """
        req = self._outgoing.pop(rid, None)
        if req is None:
            return
        if req.progress_token is not None:
            self.progress_tokens.release(req.progress_token, rid)
        self.cancellation.cancelled_ours(rid, req.method, req.task)

    def send_progress(
        self, rid: RequestId, progress: float, total: float | None = None, message: str | None = None
    ) -> bytes | None:
        """Progress for an incoming request; None when the requestor asked for none."""
        self._check_open()
        req = self._incoming.get(rid)
        if req is None:
            # [basic/utilities/progress#14] progress stops once the request completed
            raise LocalProtocolError(
                f"request {rid!r} is not in flight: no progress after completion",
                requirement="basic/utilities/progress#14",
            )
        # checked even without a token: a bad value is a bug whether or not it is sent
        check_progress(progress, total, req.last_progress)
        if req.progress_token is None:
            return None
        # [basic/utilities/progress#3, #5, #6] the request's token, the value, an optional total and
        # message (floats allowed) -- progress#progress-flow
        params = ProgressNotificationParams(
            progress_token=req.progress_token, progress=progress, total=total, message=message
        )
        data = self._encode_message(
            ProgressNotification, {"jsonrpc": "2.0", "method": "notifications/progress"}, "params", params
        )
        req.last_progress = progress
        return data

    def send_task_progress(
        self,
        token: ProgressToken,
        progress: float,
        total: float | None = None,
        message: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> bytes:
        """Progress for a task we run, under the token of the request that created it
        (``meta``: the notification's ``_meta``, e.g. the related-task key)."""
        self._check_open()
        tokens = self.progress_tokens
        # [basic/utilities/progress#11] only while the task runs
        check_progress(progress, total, tokens.task_last(token))
        params = ProgressNotificationParams(
            meta=meta, progress_token=token, progress=progress, total=total, message=message
        )
        data = self._encode_message(
            ProgressNotification, {"jsonrpc": "2.0", "method": "notifications/progress"}, "params", params
        )
        tokens.tasks_theirs[token] = progress
        return data

    def finish_task_token(self, token: ProgressToken) -> None:
        """(receiver) the task using ``token`` is terminal: no more progress under it."""
        self.progress_tokens.task_finished(token)

    def release_task_token(self, token: ProgressToken) -> None:
        """(requestor) our task using ``token`` is terminal: later progress is ignored."""
        self.progress_tokens.release_task(token)

    def close(self) -> list[RequestId]:
        """The connection ended: returns the ids of our requests left unanswered."""
        pending = self.pending_outgoing
        for rid in list(self._outgoing):
            self.abandon(rid)
        self.phase = Phase.CLOSED
        return pending

    # -- observer mode -------------------------------------------------------------

    def observe_sent(self, data: bytes | str) -> list[Event]:
        """(observer mode) The role this engine watches sent ``data``.

        The engine follows the message as if it had sent it itself, running the
        checks ``send_*`` make; each rule found broken is reported as a
        :class:`~mcp_ref.events.RuleBroken` event, and the message is recorded
        all the same, so one fault does not hide the rest of the session. What
        is not JSON-RPC, or does not decode, is left to the engine of the other
        role, which reports it as it receives it. Nothing is raised, nothing is
        produced. Pair it with a second engine in observer mode for the other
        role (``mcp_ref.crosscheck.Observer`` does).
        """
        if not self.observer:
            raise LocalProtocolError("observe_sent() is for an engine in observer mode (Connection(observer=True))")
        if self.phase is Phase.CLOSED:
            return []
        try:
            obj = loads(data)
        except InvalidMessage:
            return []
        events: list[Event] = []
        for item in obj if type(obj) is list else [obj]:
            try:
                raw = classify(item)
            except InvalidMessage:
                continue
            if type(raw) is RawRequest:
                events += self._observe_request(raw)
            elif type(raw) is RawNotification:
                events += self._observe_notification(raw)
            elif type(raw) is RawResult:
                events += self._observe_result(raw)
            else:
                assert type(raw) is RawError
                events += self._observe_error(raw)
        return events

    def forget(self, rid: RequestId) -> None:
        """(observer mode) Drop request ``rid`` in both directions, without a trace (its
        answer was judged elsewhere: a request the other side had to refuse)."""
        req = self._outgoing.pop(rid, None)
        if req is not None and req.progress_token is not None:
            self.progress_tokens.release(req.progress_token, rid)
        theirs = self._incoming.pop(rid, None)
        if theirs is not None:
            self.cancellation.finished_theirs(rid)

    @staticmethod
    def _broken(e: LocalProtocolError) -> list[Event]:
        return [RuleBroken(e.message, **_rule(e.requirement))] if e.requirement is not None else []

    def _observe_request(self, raw: RawRequest) -> list[Event]:
        rid, method = raw.id, raw.method
        cls = self._req_out[method]
        if cls is None:
            return []
        try:
            params: Any = decode(raw.obj, cls).params
        except DecodeError:
            # still a request: its answer is not one to nothing
            self._outgoing[rid] = OutgoingRequest(rid, method, m.RESULT_TYPES[method], None, False)
            return []
        meta = getattr(params, "meta", None) or {}
        token = meta.get("progressToken")
        token = token if valid_token(token) else None
        if method == "initialize":
            self._set_own_capabilities(params.capabilities)
        self._forced_id = rid
        try:
            self.send_request(method, params, progress_token=token)
            return []
        except LocalProtocolError as e:
            self._force_request(rid, method, params, token)
            return self._broken(e)
        finally:
            self._forced_id = None

    def _force_request(self, rid: RequestId, method: str, params: Any, token: ProgressToken | None) -> None:
        tcap = lc.TASK_REQUEST_CAPABILITY.get(method)
        # the receiver runs it as a task only if it declared that (tasks#21): its answer decodes so
        task = (
            getattr(params, "task", None) is not None
            and self.revision >= TASKS_SINCE
            and tcap is not None
            and self.peer_has(*tcap)
        )
        result_type = CreateTaskResult if task else m.RESULT_TYPES[method]
        self._outgoing[rid] = OutgoingRequest(rid, method, result_type, token, task)
        if token is not None:
            self.progress_tokens.active[token] = rid
        if method == "initialize":
            self.requested_version = params.protocol_version
            self.phase = Phase.INITIALIZING

    def _set_own_capabilities(self, caps: ClientCapabilities | ServerCapabilities) -> None:
        self.capabilities = caps
        self._own_caps = converter_for(LATEST_LEGACY_REVISION).unstructure(caps)

    def _observe_result(self, raw: RawResult) -> list[Event]:
        req = self._incoming.get(raw.id)
        if req is None:
            return []  # the other engine reports an answer to nothing
        try:
            result: Any = decode(raw.result, CreateTaskResult if req.task else m.RESULT_TYPES[req.method])
        except DecodeError:
            self._retire_incoming(req)
            return []
        if req.method == "initialize":
            # the versions the watched server supports are unknown here: mcp-ref check
            # judges negotiation (lifecycle#9-#11) by asking for each
            self.protocol_version = result.protocol_version
            self._set_own_capabilities(result.capabilities)
            self.phase = Phase.AWAITING_INITIALIZED
            self._retire_incoming(req)
            return []
        try:
            self.send_response(raw.id, result)
            return []
        except LocalProtocolError as e:
            if raw.id in self._incoming:
                self._retire_incoming(self._incoming[raw.id])
            return self._broken(e)

    def _observe_error(self, raw: RawError) -> list[Event]:
        if raw.id is None or raw.id not in self._incoming:
            return []
        try:
            self.send_error(raw.id, raw.code, raw.message, raw.data)
            return []
        except LocalProtocolError as e:
            if raw.id in self._incoming:
                self._retire_incoming(self._incoming[raw.id])
            return self._broken(e)

    def _observe_notification(self, raw: RawNotification) -> list[Event]:
        method = raw.method
        cls = self._note_out[method]
        if cls is None:
            return []
        try:
            params: Any = decode(raw.obj, cls).params
        except DecodeError:
            return []
        try:
            if method == "notifications/progress":
                return self._observe_progress(params)
            if method == "notifications/cancelled":
                req = self._outgoing.get(params.request_id)
                if req is not None and req.state == "pending" and refusal(req.method, req.task) is None:
                    self.send_cancel(params.request_id, params.reason)
                return []  # what a cancellation may name is judged as it is received
            self.send_notification(method, params)
            return []
        except LocalProtocolError as e:
            if method == "notifications/initialized" and self.phase is Phase.AWAITING_INITIALIZED:
                self.phase = Phase.OPERATING
            return self._broken(e)

    def _observe_progress(self, params: Any) -> list[Event]:
        token = params.progress_token
        req = next((r for r in self._incoming.values() if r.progress_token == token), None)
        if req is not None:
            try:
                self.send_progress(req.id, params.progress, params.total, params.message)
            except LocalProtocolError as e:
                req.last_progress = params.progress
                return self._broken(e)
        elif token in self.progress_tokens.tasks_theirs:
            try:
                self.send_task_progress(token, params.progress, params.total, params.message)
            except LocalProtocolError as e:
                return self._broken(e)
        return []  # an unknown token is reported as it is received (progress#7)

    # -- receiving ---------------------------------------------------------------

    def receive_message(self, data: bytes | str) -> list[Event]:
        """Feed one incoming message (one JSON text); get what it means."""
        if self.phase is Phase.CLOSED:
            self.stats["after-close"] += 1
            return []
        try:
            obj = loads(data)
        except InvalidMessage as e:
            self.stats["parse-error"] += 1
            # [basic/index#10] a parse error is answered with a null id
            return [MessageRejected(e, self._reply(None, e.code, e.message), **_rule(e.requirement))]
        if type(obj) is list:
            # [2025-03-26:basic/index#14] batches are received in the one revision that has them
            if self.protocol_version not in BATCH_REVISIONS:
                self.stats["batch-refused"] += 1
                err = InvalidMessage(
                    f"Invalid Request: JSON-RPC batches are not allowed in protocol revision {self.revision}",
                    ErrorCode.INVALID_REQUEST,
                    requirement="basic/lifecycle#14",
                )
                return [MessageRejected(err, self._reply(None, err.code, err.message), **_rule(err.requirement))]
            if not obj:
                err = InvalidMessage("Invalid Request: empty batch", ErrorCode.INVALID_REQUEST)
                return [MessageRejected(err, self._reply(None, err.code, err.message), **_rule(err.requirement))]
            if len(obj) > self.max_batch:
                # one array must not become an unbounded amount of work: refused whole, unread
                self.stats["batch-too-large"] += 1
                err = InvalidMessage(
                    f"Invalid Request: a batch of {len(obj)} messages; at most {self.max_batch} are taken",
                    ErrorCode.INVALID_REQUEST,
                )
                return [MessageRejected(err, self._reply(None, err.code, err.message), **_rule(err.requirement))]
            events: list[Event] = []
            for item in obj:
                events.extend(self._receive_one(item))
            return events
        return self._receive_one(obj)

    def _receive_one(self, obj: Any) -> list[Event]:
        try:
            raw = classify(obj)
        except InvalidMessage as e:
            self.stats["invalid-message"] += 1
            reply = self._reply(e.reply_id, e.code, e.message) if e.replyable else None
            return [MessageRejected(e, reply, **_rule(e.requirement))]
        if type(raw) is RawRequest:
            return self._on_request(raw)
        if type(raw) is RawNotification:
            return self._on_notification(raw)
        if type(raw) is RawResult:
            return self._on_result(raw)
        assert type(raw) is RawError
        return self._on_error(raw)

    def _reply(self, rid: RequestId | None, code: int, message: str) -> bytes | None:
        """The error reply a refused message gets (none in observer mode: we answer nothing)."""
        return None if self.observer else self._error_bytes(rid, code, message)

    def _reject(self, rid: RequestId | None, code: int, message: str, requirement: str | None = None) -> list[Event]:
        self.stats[f"rejected:{int(code)}"] += 1
        error = RemoteProtocolError(message, code, requirement=requirement)
        return [MessageRejected(error, self._reply(rid, code, message), **_rule(requirement))]

    def _phase_rule(self, peer_sends: str) -> str:
        """The requirement the peer broke by sending ``peer_sends`` ("request" or
        "notification") in our current phase (lifecycle#1, #4, #5, #6)."""
        if self.phase is Phase.AWAITING_INIT:
            return "basic/lifecycle#1"  # initialization comes first
        if self.role is Role.SERVER:
            # the client: before the answer to initialize (#5), or before initialized (#4)
            return "basic/lifecycle#5" if self.phase is Phase.INITIALIZING else "basic/lifecycle#4"
        return "basic/lifecycle#6"  # the server, before notifications/initialized

    def _on_request(self, raw: RawRequest) -> list[Event]:
        rid, method = raw.id, raw.method
        route = self._routes_in.get(method) or self._new_route(self._routes_in, self._req_in, method)
        if route is None or route.since > self.revision:
            # an unknown method breaks nothing; one of another revision or of our own role does
            known = method in m.KNOWN_METHODS
            return self._reject(
                rid, ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}", "basic/lifecycle#14" if known else None
            )
        if rid in self._incoming:
            # [basic/index#6] an id still in flight was used again
            return self._reject(
                rid, ErrorCode.INVALID_REQUEST, f"Invalid Request: id {rid!r} is already in use", "basic/index#6"
            )
        if method == "initialize" and self.phase is not Phase.AWAITING_INIT:
            return self._reject(rid, ErrorCode.INVALID_REQUEST, "Invalid Request: already initialized")
        if self.phase not in self._accept_any and not lc.phase_allows(
            lc.ACCEPT_REQUESTS, self.role, self.phase, method
        ):
            # [basic/lifecycle#5, #6] requests other than ping wait for initialization
            return self._reject(
                rid,
                ErrorCode.INVALID_REQUEST,
                f"Invalid Request: {method} is not allowed before initialization",
                self._phase_rule("request"),
            )
        cap = route.capability
        if cap is not None and not lc.has_capability(self._own_caps, cap):
            # [basic/lifecycle#14, client/roots#4] an undeclared capability is an unknown method for us (-32601)
            return self._reject(
                rid,
                ErrorCode.METHOD_NOT_FOUND,
                f"Method not found: {method} ({'.'.join(cap)} not declared)",
                "basic/lifecycle#14",
            )
        try:
            message: Any = decode(raw.obj, route.cls)
        except DecodeError as e:
            # the params of the negotiated revision's schema (lifecycle#2 for initialize)
            rule = "basic/lifecycle#2" if method == "initialize" else "basic/lifecycle#14"
            if "progressToken" in e.path:
                rule = "basic/utilities/progress#1"  # tokens are strings or integers
            return self._reject(rid, ErrorCode.INVALID_PARAMS, f"Invalid params: {e}", rule)
        params = message.params
        if method == "elicitation/create" and getattr(params, "mode", None) == "url" and params.elicitation_id is None:
            # required in the session revisions that have URL elicitation; the model decodes
            # without it for 2026-07-28, whose URL elicitations carry no id
            return self._reject(
                rid,
                ErrorCode.INVALID_PARAMS,
                "Invalid params: params.elicitationId: required field missing",
                "basic/lifecycle#14",
            )
        meta = getattr(params, "meta", None)
        if meta and any(True for _ in bad_meta_keys(meta)):
            # tolerated (the values are never interpreted, basic/index#25) but counted
            self.stats["meta:malformed-key"] += 1
        token = meta.get("progressToken") if meta else None
        if token is not None and not valid_token(token):
            # [basic/utilities/progress#1]
            return self._reject(
                rid,
                ErrorCode.INVALID_PARAMS,
                "Invalid params: params._meta.progressToken: expected string or integer",
                "basic/utilities/progress#1",
            )
        task = False
        if getattr(params, "task", None) is not None and self.revision >= TASKS_SINCE:
            tcap = lc.TASK_REQUEST_CAPABILITY.get(method)
            # [basic/utilities/tasks#21] without the capability the task metadata is ignored;
            # [basic/lifecycle#14] so it is in a revision without tasks (no CreateTaskResult there)
            task = tcap is not None and self.we_have(*tcap)
        if method == "initialize":
            self.requested_version = params.protocol_version
            self.peer_capabilities = params.capabilities
            self._peer_caps = converter_for(LATEST_LEGACY_REVISION).unstructure(params.capabilities)
            self.peer_info = params.client_info
            self.phase = Phase.INITIALIZING
        self._incoming[rid] = IncomingRequest(rid, method, token, task)
        return [_request_received(rid, method, params, message, token)]

    def _on_notification(self, raw: RawNotification) -> list[Event]:
        method = raw.method
        cls = self._note_in[method]
        if cls is None or m.method_since(method) > self.revision:
            self.stats["notification:unknown"] += 1
            known = method in m.KNOWN_METHODS
            rule = _rule("basic/lifecycle#14" if known else None)
            return [NotificationIgnored(method, "unknown notification method", **rule)]
        if not lc.phase_allows(lc.ACCEPT_NOTIFICATIONS, self.role, self.phase, method):
            self.stats["notification:phase"] += 1
            rule = _rule(self._phase_rule("notification"))
            return [NotificationIgnored(method, f"not allowed in phase {self.phase.value}", **rule)]
        try:
            message: Any = decode(raw.obj, cls)
        except DecodeError as e:
            if method == "notifications/cancelled":
                self.stats["cancel:malformed"] += 1
                rid = (raw.params or {}).get("requestId")
                # the event names what the sender broke: with no usable requestId it references
                # no request of ours (cancellation#1, as "no requestId" does); with one, some other
                # field breaks the notification's schema, as for any notification with invalid params
                names_one = isinstance(rid, str | int) and not isinstance(rid, bool)
                broke = "basic/lifecycle#14" if names_one else "basic/utilities/cancellation#1"
                # [basic/utilities/cancellation#10] a malformed cancellation is ignored (what we do)
                return [CancellationIgnored(rid, None, f"malformed: {e}", **_rule(broke))]
            self.stats["notification:invalid"] += 1
            # [basic/index#13] a malformed notification is ignored, never answered -- index#notifications
            return [NotificationIgnored(method, f"invalid params: {e}", **_rule("basic/lifecycle#14"))]
        if method == "notifications/cancelled":
            return self._on_cancelled(message.params)
        if method == "notifications/progress":
            return self._on_progress(message.params)
        events: list[Event] = []
        if method == "notifications/initialized":
            if self.phase is Phase.AWAITING_INITIALIZED:
                self.phase = Phase.OPERATING
                assert self.protocol_version is not None
                events.append(Initialized(self.protocol_version))
            else:
                self.stats["notification:phase"] += 1
                return [NotificationIgnored(method, f"not expected in phase {self.phase.value}")]
        events.append(_notification_received(method, message.params, message))
        return events

    def _on_cancelled(self, params: Any) -> list[Event]:
        rid, reason = params.request_id, params.reason
        req = self._incoming.get(rid) if rid is not None else None
        why = self.cancellation.ignore_reason(rid, req)
        if why is not None:
            self.stats[f"cancel:{why}"] += 1
            return [CancellationIgnored(rid, reason, why, **_rule(ignored_requirement(why)))]
        assert req is not None
        req.state = "cancel-requested"
        return [CancellationReceived(req.id, reason)]

    def _on_progress(self, params: Any) -> list[Event]:
        token, value = params.progress_token, params.progress
        rid, why = self.progress_tokens.received(token, value, self._outgoing)
        if why is not None:
            self.stats[f"progress:{why}"] += 1
            return [ProgressIgnored(token, value, why, **_rule(IGNORED_REQUIREMENT.get(why)))]
        assert rid is not None
        return [_progress_received(rid, token, value, params.total, params.message)]

    def _take_outgoing(self, rid: RequestId) -> OutgoingRequest | list[Event]:
        req = self._outgoing.pop(rid, None)
        if req is not None:
            if req.progress_token is not None:
                self.progress_tokens.answered(req.progress_token, rid, req.task, req.last_progress)
            return req
        method = self.cancellation.late_response(rid)
        if method is not None:
            self.stats["late-response"] += 1
            # [basic/utilities/cancellation#6] ignore responses after cancelling (a SHOULD, and a
            # race the spec allows: the answer may have crossed the cancellation, #7)
            return [LateResponseIgnored(rid, method, **_rule("basic/utilities/cancellation#4"))]
        self.stats["unknown-response"] += 1
        return [UnknownResponse(rid, **_rule("basic/index#7"))]

    def _on_result(self, raw: RawResult) -> list[Event]:
        req = self._take_outgoing(raw.id)
        if isinstance(req, list):
            late = req[0]
            if type(late) is LateResponseIgnored:
                task_id = self.cancellation.orphan_task(raw.id, raw.result)
                if task_id is not None:
                    return [attrs.evolve(late, task_id=task_id)]
            return req
        try:
            result = decode(raw.result, req.result_type)
        except DecodeError as e:
            self.stats["invalid-result"] += 1
            rule = _result_rule(req.method, e.path)
            text = f"invalid {req.method} result: result.{e}" if e.path else f"invalid result: {e}"
            err = RemoteProtocolError(text, requirement=rule)
            if req.method == "initialize":
                self.phase = Phase.CLOSED
            return [InvalidResponse(req.id, req.method, err, **_rule(rule))]
        if req.method == "initialize":
            return self._on_initialize_result(req, result)
        return [_response_received(req.id, req.method, result)]

    def _on_initialize_result(self, req: OutgoingRequest, result: Any) -> list[Event]:
        if result.protocol_version not in self.supported_versions:
            # [basic/lifecycle#12] we cannot speak the offered version: disconnect
            self.phase = Phase.CLOSED
            return [
                VersionRejected(result.protocol_version, self.supported_versions),
                ResponseReceived(req.id, req.method, result),
            ]
        self.protocol_version = result.protocol_version
        self.peer_capabilities = result.capabilities
        self._peer_caps = converter_for(LATEST_LEGACY_REVISION).unstructure(result.capabilities)
        self.peer_info = result.server_info
        self.phase = Phase.AWAITING_INITIALIZED
        return [ResponseReceived(req.id, req.method, result)]

    def _on_error(self, raw: RawError) -> list[Event]:
        error = Error(code=raw.code, message=raw.message, data=raw.data)
        if raw.id is None:
            self.stats["error-without-id"] += 1
            # we send only readable messages: an error without an id is the peer's fault (basic/index#10)
            return [ErrorWithoutId(error, **_rule("basic/index#10"))]
        req = self._take_outgoing(raw.id)
        if isinstance(req, list):
            return req
        if req.method == "initialize":
            self.phase = Phase.CLOSED
        if req.task and req.progress_token is not None:
            self.release_task_token(req.progress_token)  # no task was created
        if raw.code == ErrorCode.URL_ELICITATION_REQUIRED and self.role is Role.CLIENT:
            # [client/elicitation#17] ids listed here are known: their completions are not ignored
            for i in announced_ids(raw.data):
                remember(self.url_elicitations, i)
        return [ErrorReceived(req.id, req.method, error)]


def _open_phases(table: Mapping[tuple[Role, Phase], frozenset[str]], role: Role) -> frozenset[Phase]:
    """The phases in which ``table`` lets ``role`` send or accept any method."""
    return frozenset(phase for phase in Phase if lc.ANY in table.get((role, phase), ()))


# What a connection derives from the module's tables alone is made once and shared by
# every connection, not copied into each (an idle HTTP session kept about 600 bytes of
# such copies: bench W10i). Routes hold only what the method tables say of a method.
_SEND_ANY = {role: _open_phases(lc.SEND_REQUESTS, role) for role in Role}
_ACCEPT_ANY = {role: _open_phases(lc.ACCEPT_REQUESTS, role) for role in Role}
#: method -> _Route of the requests a client sends (filled on first use)
_CLIENT_REQUEST_ROUTES: dict[str, _Route] = {}
#: method -> _Route of the requests a server sends (filled on first use)
_SERVER_REQUEST_ROUTES: dict[str, _Route] = {}


def _capability_rule(method: str, problem: str) -> str:
    """The requirement a request the peer lacks a capability for would break."""
    if method == "sampling/createMessage" and "sampling." in problem:
        return "client/sampling#6" if "includeContext" in problem else "client/sampling#4"
    if method == "elicitation/create" and "elicitation." in problem:
        return "client/elicitation#6"
    return "basic/lifecycle#14"  # only negotiated capabilities


def _rule(requirement: str | None) -> dict[str, str | None]:
    """The ``requirement`` and ``level`` fields of a fault event."""
    return {"requirement": requirement, "level": level_of(requirement)}


#: what a result that does not decode breaks, by the field the decoder names
_RESULT_FIELDS = (
    ("inputSchema", "server/tools#5"),
    ("createdAt", "basic/utilities/tasks#36"),
    ("lastUpdatedAt", "basic/utilities/tasks#37"),
    ("taskId", "basic/utilities/tasks#23"),
)


def _result_rule(method: str, path: str) -> str:
    """The requirement a ``method`` result that does not decode (at ``path``) breaks.

    No statement says "results follow the schema"; they belong to the negotiated
    revision (basic/lifecycle#14), unless a statement names the field
    (spec_notes/crosscheck.md).
    """
    if method == "initialize":
        return "basic/lifecycle#3"
    for name, rule in _RESULT_FIELDS:
        if name in path:
            return rule
    if path.split(".")[-1] == "ttl" or path.endswith("task.ttl"):
        return "basic/utilities/tasks#39"
    if method == "tools/call" and path.startswith("task"):
        return "basic/utilities/tasks#43"
    return "basic/lifecycle#14"


#: what unstructuring and json can raise for a value that has no JSON form
#: (NaN, a datetime, a set, a lone surrogate in a key ...)
_ENCODE_ERRORS = (TypeError, ValueError, OverflowError)


def _unencodable(what: str, message: Any, e: Exception) -> LocalProtocolError:
    """The error for a message we cannot write, naming where the bad value sits."""
    try:
        where = _bad_json_path(converter_for(LATEST_LEGACY_REVISION).unstructure(message), "")
    except _ENCODE_ERRORS:
        where = None
    at = f" at {where}" if where else ""
    return LocalProtocolError(
        f"cannot encode the {what}: a value{at} has no JSON form ({_type_name(type(e))}: {e})",
        ErrorCode.INTERNAL_ERROR,
    )


def _bad_json_path(value: Any, path: str) -> str | None:
    """The dotted path of the first value in ``value`` JSON cannot represent, if any."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not (key is None or isinstance(key, str | int | float)):
                return f"{path}.{key!r}".lstrip(".")
            found = _bad_json_path(item, f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _bad_json_path(item, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if value is None or isinstance(value, str | int) or (isinstance(value, float) and math.isfinite(value)):
        return None
    return path.lstrip(".") or "(top)"


#: the longest error message we send (schema#1: a concise single sentence)
ERROR_MESSAGE_LIMIT = 200


def concise(message: str) -> str:
    """``message`` on one line (line breaks and the blanks around them become one
    space), cut to ERROR_MESSAGE_LIMIT characters with an ellipsis."""
    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    if len(line) > ERROR_MESSAGE_LIMIT:
        line = line[: ERROR_MESSAGE_LIMIT - 3].rstrip() + "..."
    return line


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp)


@functools.cache
def _params_required(cls: type) -> bool:
    """Whether a request or notification class ``cls`` has params that must be given
    (computed once per class, not per message)."""
    return bool(attrs.fields_dict(cls)["params"].default is attrs.NOTHING)


def _check_params(method: str, required: bool, params_type: Any, params: Any) -> None:
    if params is None:
        if required:
            raise LocalProtocolError(
                f"{method} requires params of type {_type_name(params_type)}", ErrorCode.INVALID_PARAMS
            )
    elif not isinstance(params, params_type):
        raise LocalProtocolError(
            f"{method} takes {_type_name(params_type)}, not {type(params).__name__}", ErrorCode.INVALID_PARAMS
        )


def _check_elicitation_url(url: str) -> None:
    try:
        check_elicitation_url(url)
    except ValueError as e:
        # [client/elicitation#13] a URL elicitation carries a valid URL
        raise LocalProtocolError(f"URL elicitation: {e}", ErrorCode.INVALID_PARAMS) from None


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals(), hashable=False)
