"""The sans-IO engine of the modern era (2026-07-28): one request, one exchange.

There is no session to keep: a modern request carries its version and the
client's capabilities in ``params._meta`` and is validated on its own
(DESIGN.md section 10). :class:`StatelessEngine` is the engine for one role;
like :class:`~mcp_ref.connection.Connection` it is synchronous and does no
I/O, and the runtime feeds it what arrived and asks it for what to send.

Server role::

    engine = StatelessEngine(Role.SERVER, info=Implementation(...), capabilities=caps,
                             served=frozenset({"tools/list", "tools/call", ...}))
    events = engine.receive_message(data, headers=http_headers_or_None)
    # ExchangeReceived(exchange): run the handler, then
    data = exchange.send_progress(50, 100)          # None unless the request asked for progress
    data = exchange.send_log("info", "working")     # None unless its _meta set a log level
    data = exchange.send_response(result)           # resultType, serverInfo, caching hints added
    data = exchange.send_input_required({...}, state)   # (tools/call, prompts/get, resources/read)
    # MessageRejected(error, reply, http_status=400 | 404): send the reply

Client role::

    engine = StatelessEngine(Role.CLIENT, info=Implementation(...), capabilities=ClientCapabilities())
    rid, data = engine.send_request("tools/call", params)     # _meta filled in
    headers = engine.http_headers(rid)                         # MCP-Protocol-Version, Mcp-Method ...
    events = engine.receive_message(answer)   # ResponseReceived | InputRequiredReceived | ErrorReceived ...

Every ``send_*`` checks the spec before producing bytes and raises
:class:`~mcp_ref.errors.LocalProtocolError` when asked to break it;
``receive_message`` never raises for the peer's faults: it reports them as
events, with the reply to send.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import attrs

from .basic import versioning as v
from .basic.jsonrpc import (
    InvalidMessage,
    RawError,
    RawMessage,
    RawNotification,
    RawRequest,
    RawResult,
    classify,
    dumps,
    loads,
)
from .basic.lifecycle import Role
from .basic.patterns import cancellation, mrtr, subscriptions
from .basic.patterns.progress import check_progress
from .basic.requirements import level_of
from .basic.transports import mcp_headers as hdr
from .errors import DecodeError, ErrorCode, LocalProtocolError, ProtocolError
from .events import (
    CancellationIgnored,
    CancellationReceived,
    ErrorReceived,
    Event,
    ExchangeReceived,
    InputRequiredReceived,
    InvalidResponse,
    MessageRejected,
    NotificationIgnored,
    NotificationReceived,
    ProgressIgnored,
    ProgressReceived,
    RequestRefused,
    ResponseReceived,
    UnknownResponse,
)
from .schema import messages as m
from .schema._base import LATEST_PROTOCOL_VERSION, REVISIONS, install_model_methods
from .schema._converter import converter_for, decode
from .schema.jsonrpc import Error, RequestId
from .schema.lifecycle import ClientCapabilities, Implementation, ServerCapabilities

__all__ = [
    "StatelessEngine",
    "Exchange",
    "OutgoingExchange",
    "MODERN_REVISION",
    "TASKS_EXTENSION",
    "TASK_REQUESTS",
    "TASK_METHODS",
]

#: the revision this engine speaks
MODERN_REVISION: Final = v.MODERN_VERSIONS[0]
#: the converter that writes modern messages (the data model's own revision once it has one)
_WRITE_AS: Final = MODERN_REVISION if MODERN_REVISION in REVISIONS else LATEST_PROTOCOL_VERSION
#: the tasks extension (mcp_ref.ext.tasks): a result of resultType "task" exists only through it
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: the requests the tasks extension may answer with a CreateTaskResult
TASK_REQUESTS: Final = frozenset({"tools/call"})
#: the methods the tasks extension adds (the 2025-11-25 core tasks/* are not those of 2026-07-28)
TASK_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def _unstructure(value: Any) -> Any:
    # (the engine adds a request's _meta and a result's caching hints to what this writes)
    return converter_for(_WRITE_AS, engine_completes=True).unstructure(value)


class Exchange:
    """(server) One modern request being handled. ``state``: running -> answered | cancelled.

    ``params`` is the typed params (``CallToolRequestParams`` ...), or the raw
    JSON object for a method the data model has no class for; ``raw_params``
    the JSON object as received; ``meta`` the checked per-request fields.
    """

    def __init__(
        self,
        engine: StatelessEngine,
        rid: RequestId,
        method: str,
        params: Any,
        raw_params: dict[str, Any],
        meta: v.RequestMeta,
    ) -> None:
        self.engine = engine
        self.id = rid
        self.method = method
        self.params = params
        self.raw_params = raw_params
        self.meta = meta
        self.revision = meta.protocol_version
        self.state: Literal["running", "answered", "cancelled"] = "running"
        self.last_progress: float | None = None
        #: (MRTR methods) the answers and state of a retry
        self.input_responses: dict[str, Any] = {}
        self.request_state: str | None = None
        #: (subscriptions/listen) what the client asked for, and what we agreed to send
        self.requested_filter: dict[str, Any] | None = None
        self.agreed_filter: dict[str, Any] | None = None
        self.acknowledged = False

    def __repr__(self) -> str:
        return f"Exchange({self.id!r}, {self.method!r}, {self.state})"

    # -- what the request says ------------------------------------------------------------------

    @property
    def progress_token(self) -> str | int | None:
        return self.meta.progress_token

    def client_has(self, *path: str) -> bool:
        """Whether this request's ``_meta`` declares the client capability ``path`` (JSON names).

        [2026-07-28:basic/index#27, #56] only this request's declaration counts: nothing is
        inferred from earlier requests."""
        node: Any = self.meta.capabilities
        for key in path:
            if type(node) is not dict or key not in node:
                return False
            node = node[key]
        return node is not None and node is not False

    # -- sending ---------------------------------------------------------------------------------

    def _check_running(self, what: str) -> None:
        if self.state == "cancelled":
            # [2026-07-28:basic/transports/stdio#11, basic/transports/streamable-http#24] nothing more
            # for a cancelled request
            raise LocalProtocolError(
                f"request {self.id!r} was cancelled: no {what} may be sent for it",
                requirement="2026-07-28:basic/transports/stdio#11",
            )
        if self.state == "answered":
            # [2026-07-28:basic/patterns/progress#12] nothing about a request after its answer
            raise LocalProtocolError(f"request {self.id!r} is answered: no {what} after its response")

    def send_progress(self, progress: float, total: float | None = None, message: str | None = None) -> bytes | None:
        """A progress notification for this request; None when it asked for none."""
        self._check_running("progress")
        # [2026-07-28:basic/patterns/progress#5] checked even without a token: a bad value is a bug
        check_progress(progress, total, self.last_progress)
        token = self.meta.progress_token
        if token is None:
            # [2026-07-28:basic/patterns/progress#8] only tokens the request provided
            return None
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.last_progress = progress
        return dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    def send_log(self, level: str, data: Any, logger: str | None = None) -> bytes | None:
        """A log message about this request; None unless its ``_meta`` asked for this level."""
        self._check_running("log message")
        if self.method == "subscriptions/listen":
            # [2026-07-28:server/utilities/logging#5] never on a listen stream
            raise LocalProtocolError("no log messages on a subscriptions/listen stream")
        if level not in v.LOG_LEVELS:
            raise LocalProtocolError(f"{level!r} is not a log level", ErrorCode.INVALID_PARAMS)
        if not v.level_passes(level, self.meta.log_level):
            # [2026-07-28:server/utilities/logging#3] never for a request that did not ask; [#4] at or
            # above the level it asked for
            return None
        if not self.engine.we_have("logging"):
            # [2026-07-28:server/utilities/logging#2] log messages only from a server that declares logging
            raise LocalProtocolError(
                "notifications/message needs our logging capability",
                requirement="2026-07-28:server/utilities/logging#2",
            )
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        return self.engine._encode({"jsonrpc": "2.0", "method": "notifications/message", "params": params})

    def send_response(self, result: Any, *, cache: Any = None) -> bytes:
        """The complete result of this request, and the request is answered.

        ``result``: the method's result class (or a JSON object for a method the
        data model has no class for). [2026-07-28:basic/index#10] ``resultType`` is
        written; [#59] our ``serverInfo`` goes in ``_meta``; a cacheable result gets
        the caching hints it lacks (``cache``: a CachePolicy overriding the server's).
        """
        self._check_running("response")
        out = self.engine._result_json(self.method, self.engine._with_hints(self.method, result, cache))
        out.setdefault("resultType", "complete")
        if out["resultType"] == "task":
            # [ext-tasks:tasks#2] a CreateTaskResult only to a client whose request declared the
            # extension; [ext-tasks:tasks#8] and only for a request a task may answer
            if self.method not in TASK_REQUESTS or not self.client_has("extensions", TASKS_EXTENSION):
                raise LocalProtocolError(
                    f"a CreateTaskResult answers only {', '.join(sorted(TASK_REQUESTS))} of a client that"
                    f" declared {TASKS_EXTENSION} on its request",
                    requirement="ext-tasks:tasks#2",
                )
            return self.engine._answer(self, out)
        if out["resultType"] != "complete":
            raise LocalProtocolError("send_response is for complete results: use send_input_required")
        out.update(self.engine._cache_hints(self.method, out, cache))
        data = self.engine._answer(self, out)
        return data

    def send_input_required(self, input_requests: Mapping[str, tuple[str, Any]], request_state: str | None) -> bytes:
        """An ``InputRequiredResult``: ``input_requests`` maps each key to ``(method, params)``.

        [2026-07-28:basic/patterns/mrtr#5] only for tools/call, prompts/get and resources/read;
        [#16] with input requests, a request state, or both; [#9] each an elicitation,
        sampling or roots request; [#17] only those the client's capabilities allow.
        """
        self._check_running("response")
        if self.method not in mrtr.SUPPORTED_REQUESTS:
            raise LocalProtocolError(
                f"{self.method} cannot be answered with an InputRequiredResult",
                requirement="2026-07-28:basic/patterns/mrtr#5",
            )
        if not input_requests and request_state is None:
            raise LocalProtocolError(
                "an InputRequiredResult carries input requests or a request state",
                requirement="2026-07-28:basic/patterns/mrtr#16",
            )
        requests: dict[str, Any] = {}
        for key, (method, params) in input_requests.items():
            capability = mrtr.INPUT_METHODS.get(method)
            if capability is None:
                raise LocalProtocolError(
                    f"input request {key!r}: {method} is not one a server may ask a client for",
                    requirement="2026-07-28:basic/patterns/mrtr#9",
                )
            if not self.client_has(*capability):
                raise LocalProtocolError(
                    f"input request {key!r}: the client did not declare {'.'.join(capability)}",
                    requirement="2026-07-28:basic/patterns/mrtr#17",
                )
            request: dict[str, Any] = {"method": method}
            encoded = _unstructure(params) if params is not None else {}
            request["params"] = encoded
            requests[key] = request
        out: dict[str, Any] = {"resultType": "input_required"}
        # [2026-07-28:basic/patterns/mrtr#7] the input requests, when there are any
        if requests:
            out["inputRequests"] = requests
        if request_state is not None:
            out["requestState"] = request_state
        return self.engine._answer(self, out)

    def send_error(self, code: int, message: str, data: Any = None) -> bytes:
        """An error response to this request, and the request is answered.

        [2026-07-28:basic/index#22] a code earlier revisions defined and this one
        forbids (-32002 resource not found) is written as the code that replaced it.
        """
        self._check_running("response")
        if type(code) is not int and not isinstance(code, int):
            raise LocalProtocolError("error codes are integers")  # [2026-07-28:basic/index#17]
        code = v.modern_error_code(int(code))
        self.state = "answered"
        self.engine._finish(self)
        return self.engine.error_reply(self.id, code, message, data)

    # -- subscriptions/listen ----------------------------------------------------------------------

    def acknowledge(self, agreed: Mapping[str, Any]) -> bytes:
        """[2026-07-28:basic/patterns/subscriptions#2] the acknowledgement, first on the stream, naming
        what will be sent (the agreed part of the filter) and tagged with the subscription's id."""
        self._check_listen("acknowledgement")
        if self.acknowledged:
            raise LocalProtocolError("a subscription is acknowledged once")
        self.agreed_filter = dict(agreed)
        self.acknowledged = True
        params = subscriptions.tag({"notifications": self.agreed_filter}, self.id)
        return self.engine._encode({"jsonrpc": "2.0", "method": subscriptions.ACKNOWLEDGED, "params": params})

    def send_change(self, method: str, params: Mapping[str, Any] | None = None) -> bytes | None:
        """A change notification on this subscription; None when its filter did not ask for it."""
        self._check_listen("notification")
        if not self.acknowledged:
            # [2026-07-28:basic/patterns/subscriptions#2] nothing before the acknowledgement
            raise LocalProtocolError(
                "a subscription sends nothing before its acknowledgement",
                requirement="2026-07-28:basic/patterns/subscriptions#2",
            )
        if method not in subscriptions.CHANGE_METHODS:
            # [2026-07-28:server/utilities/logging#5] request-scoped notifications never go on a listen stream
            raise LocalProtocolError(f"{method} is not a change notification a subscription carries")
        assert self.agreed_filter is not None
        if not subscriptions.wants(self.agreed_filter, method, params):
            return None
        tagged = subscriptions.tag(params, self.id)
        return self.engine._encode({"jsonrpc": "2.0", "method": method, "params": tagged})

    def end_subscription(self) -> bytes:
        """[2026-07-28:basic/patterns/subscriptions#7, #8] the server ends the subscription gracefully:
        a completion result tagged with the subscription's id (then the stream closes)."""
        self._check_listen("completion result")
        out = {"resultType": "complete", "_meta": {v.SUBSCRIPTION_ID_KEY: self.id}}
        return self.engine._answer(self, out, identify=False)

    def send_teardown(self, reason: str | None = None) -> bytes:
        """``notifications/cancelled`` for this subscription: the server drops it without a result.

        [2026-07-28:basic/patterns/cancellation#2, #3, #12] the one cancellation a server sends, and
        only for a ``subscriptions/listen`` request."""
        if not cancellation.server_may_cancel(self.method):
            raise LocalProtocolError(
                f"a server cancels no {self.method} request: only a subscriptions/listen it tears down",
                requirement="2026-07-28:basic/patterns/cancellation#3",
            )
        self._check_running("cancellation")
        params: dict[str, Any] = {"requestId": self.id}
        if reason is not None:
            params["reason"] = reason
        self.state = "cancelled"
        self.engine._finish(self)
        return dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    def _check_listen(self, what: str) -> None:
        if self.method != "subscriptions/listen":
            raise LocalProtocolError(f"a {what} belongs to a subscriptions/listen request, not {self.method}")
        self._check_running(what)

    def cancelled(self) -> None:
        """The client cancelled this request (closed its HTTP stream): nothing more is sent for it."""
        if self.state == "running":
            self.state = "cancelled"
            self.engine._finish(self)


@attrs.define(slots=True, repr=False, eq=False)
class OutgoingExchange:
    """(client) One of our requests awaiting its answer."""

    id: RequestId
    method: str
    params: dict[str, Any]
    version: str
    progress_token: str | int | None
    last_progress: float | None = None
    state: Literal["pending", "cancelled"] = "pending"


class StatelessEngine:
    """One role of the modern protocol, without I/O (see the module's docstring).

    ``supported_versions``: the modern revisions served (server) or spoken, the
    first preferred (client). ``legacy_versions``: (server) the revisions also
    served through ``initialize``, listed with the modern ones wherever the
    server names what it supports. ``track_ids``: keep the ids of requests in
    flight, so a cancellation can name them and an id is not used twice at once
    (one channel: stdio, in memory); a Streamable HTTP server, where every POST
    stands alone, passes False.
    """

    def __init__(
        self,
        role: Role,
        *,
        info: Implementation | None = None,
        capabilities: ClientCapabilities | ServerCapabilities | None = None,
        supported_versions: tuple[str, ...] = v.MODERN_VERSIONS,
        legacy_versions: tuple[str, ...] = (),
        served: frozenset[str] | None = None,
        extension_methods: frozenset[str] = frozenset(),
        track_ids: bool = True,
        identify: bool = True,
        param_headers: Callable[[str], tuple[hdr.ParamHeader, ...]] | None = None,
        cache: Callable[[str, dict[str, Any], Any], dict[str, Any]] | None = None,
    ) -> None:
        if not supported_versions or any(x not in v.MODERN_VERSIONS for x in supported_versions):
            raise ValueError(f"supported_versions must be a non-empty subset of {v.MODERN_VERSIONS}")
        self.role = role
        self.info = info
        if capabilities is None:
            capabilities = ClientCapabilities() if role is Role.CLIENT else ServerCapabilities()
        expected = ClientCapabilities if role is Role.CLIENT else ServerCapabilities
        if not isinstance(capabilities, expected):
            raise TypeError(f"a {role.value} declares {expected.__name__}, not {type(capabilities).__name__}")
        self.capabilities = capabilities
        self._caps_json: dict[str, Any] = _unstructure(capabilities)
        self.supported_versions = supported_versions
        self.legacy_versions = legacy_versions
        #: (server) every version we support, newest first: what errors and server/discover list
        self.all_versions = tuple(sorted({*supported_versions, *legacy_versions}, reverse=True))
        self.served = served
        self.extension_methods = extension_methods
        self.track_ids = track_ids
        #: [2026-07-28:basic/index#59] serverInfo in every result's _meta unless configured not to
        self.identify = identify
        self.param_headers = param_headers
        self._cache = cache
        self._info_json = _unstructure(info) if info is not None else None
        #: (server, track_ids) requests being handled, by id
        self._in_flight: dict[RequestId, Exchange] = {}
        #: (client) our requests awaiting an answer, by id
        self._outgoing: dict[RequestId, OutgoingExchange] = {}
        self._progress: dict[str | int, RequestId] = {}
        self._next_id = 0

    # -- shared --------------------------------------------------------------------------------

    def we_have(self, *path: str) -> bool:
        node: Any = self._caps_json
        for key in path:
            if type(node) is not dict or key not in node:
                return False
            node = node[key]
        return node is not None and node is not False

    def _encode(self, message: dict[str, Any]) -> bytes:
        try:
            return dumps(message)
        except (TypeError, ValueError, OverflowError) as e:
            raise LocalProtocolError(f"cannot encode the message: a value has no JSON form ({e})") from e

    def error_reply(self, rid: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
        """An error response (``rid`` None: the request's id could not be read, and is written
        ``null``, as JSON-RPC 2.0 and our HTTP layer write it: spec_notes/basic/index.md)."""
        # [2026-07-28:basic/index#16] an error object with its code and message
        error: dict[str, Any] = {"code": int(code), "message": _concise(message)}
        # [2026-07-28:basic/index#18] what more there is to say (a URI, nested errors) goes in data
        if data is not None:
            error["data"] = data
        # [2026-07-28:basic/index#15] the request's id, echoed as it came (null when unreadable)
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        out["error"] = error
        return self._encode(out)

    # -- server role -------------------------------------------------------------------------

    #: receive_message takes ``classified=`` (the HTTP layer asks before it passes one)
    takes_classified: Final = True

    def receive_message(
        self, data: bytes | str, *, headers: Mapping[str, str] | None = None, classified: RawMessage | None = None
    ) -> list[Event]:
        """Feed one incoming message; get what it means.

        ``headers`` (Streamable HTTP, lower-case names): the request's headers,
        checked against the body. A client engine reads answers and notifications.
        ``classified``: what :func:`~mcp_ref.basic.jsonrpc.classify` made of ``data``
        already (the HTTP layer reads every POST's envelope first), so it is not
        parsed twice.
        """
        if self.role is Role.CLIENT:
            return self._client_receive(data)
        if classified is not None:
            raw = classified
        else:
            try:
                obj = loads(data)
            except InvalidMessage as e:
                # [2026-07-28:basic/index#15] no id can be read: the error's is null
                return [self._rejected(None, e.code, e.message, 400)]
            if type(obj) is list:
                # [2026-07-28:basic/transports/streamable-http#11] one message per POST (and per line): no batches
                return [self._rejected(None, ErrorCode.INVALID_REQUEST, "Invalid Request: no JSON-RPC batches", 400)]
            try:
                raw = classify(obj)
            except InvalidMessage as e:
                if not e.replyable:
                    return [
                        RequestRefused(
                            e, None, http_status=400, requirement=e.requirement, level=level_of(e.requirement)
                        )
                    ]
                return [self._rejected(e.reply_id, e.code, e.message, 400, e.requirement)]
        if type(raw) is RawRequest:
            try:
                return self._on_request(raw, headers)
            except ProtocolError as e:
                error = e
                if raw.method == "initialize" and not v.is_modern_request(raw.params):
                    # [2026-07-28:basic/versioning#10] a legacy client's initialize (a server of modern
                    # revisions only, or a channel already modern): whatever else is wrong with it (no
                    # _meta, on HTTP no version header), the answer names the versions we speak
                    error = v.initialize_refused(raw.params, self.all_versions)
                status = 404 if error.code == ErrorCode.METHOD_NOT_FOUND else 400
                data = error.data
                if raw.method == "initialize" and data is None:
                    # [2026-07-28:basic/versioning#10] an initialize with a 2026-07-28 _meta refused for
                    # another reason names them too
                    data = {"supported": list(self.all_versions)}
                return [self._rejected(raw.id, error.code, error.message, status, error.requirement, data)]
        if type(raw) is RawNotification:
            return self._on_notification(raw)
        # [2026-07-28:basic/patterns/index#1, basic/transports/stdio#7] a client sends no responses: there is
        # nothing a server asked it
        error = ProtocolError("Invalid Request: a server sends no requests, so it takes no responses")
        return [RequestRefused(error, None, http_status=400, requirement="2026-07-28:basic/transports/stdio#7")]

    def _rejected(
        self,
        rid: RequestId | None,
        code: int,
        message: str,
        status: int,
        requirement: str | None = None,
        data: Any = None,
    ) -> RequestRefused:
        error = ProtocolError(message, code, data, requirement=requirement)
        return RequestRefused(
            error,
            self.error_reply(rid, code, message, data),
            http_status=status,
            requirement=requirement,
            level=level_of(requirement),
        )

    def _on_request(self, raw: RawRequest, headers: Mapping[str, str] | None) -> list[Event]:
        method, params = raw.method, raw.params
        if headers is not None and hdr.PROTOCOL_VERSION_HEADER not in headers:
            # [2026-07-28:basic/transports/streamable-http#25, #31] the version header is required
            raise v.header_mismatch("the MCP-Protocol-Version header is missing")
        # [2026-07-28:basic/index#27, #52, #53] everything the request needs is in its own _meta
        meta = v.read_request_meta(params)
        version = meta.protocol_version
        if headers is not None and headers[hdr.PROTOCOL_VERSION_HEADER] != version:
            # [2026-07-28:basic/transports/streamable-http#26, #27] the header says what _meta says
            raise v.header_mismatch(
                f"MCP-Protocol-Version header value {headers[hdr.PROTOCOL_VERSION_HEADER]!r} does not match"
                f" _meta value {version!r}"
            )
        if version not in self.supported_versions:
            # [2026-07-28:basic/versioning#1, basic/transports/streamable-http#28] -- versioning#negotiation
            raise v.unsupported_version(version, self.all_versions)
        if headers is not None:
            hdr.check_standard_headers(headers, method, params)
        if not self._serves(method, version):
            # [2026-07-28:basic/transports/streamable-http#29] an RPC we do not implement (removed in
            # this revision, or a feature we do not offer): -32601
            raise ProtocolError(
                f"Method not found: {method}",
                ErrorCode.METHOD_NOT_FOUND,
                {"supported": list(self.all_versions)} if method == "initialize" else None,
                requirement="2026-07-28:basic/transports/streamable-http#29",
            )
        rid = raw.id
        if self.track_ids and rid in self._in_flight:
            # [2026-07-28:basic/index#6] an id still in flight was used again
            raise ProtocolError(
                f"Invalid Request: id {rid!r} is already in use", requirement="2026-07-28:basic/index#6"
            )
        raw_params = params if params is not None else {}
        typed: Any = raw_params
        retry: tuple[dict[str, Any], str | None] = ({}, None)
        obj = raw.obj
        if method in mrtr.SUPPORTED_REQUESTS:
            retry = mrtr.read_retry_fields(raw_params)
            if "inputResponses" in raw_params:
                # the answers are read by key when the handler asks (each as the result its question
                # needs); the rest are ignored ([2026-07-28:basic/patterns/mrtr#30]), whatever their shape
                obj = {**obj, "params": {k: x for k, x in raw_params.items() if k != "inputResponses"}}
        cls = m.CLIENT_REQUESTS[method] if method in m.KNOWN_METHODS else None
        if cls is not None:
            try:
                typed = decode(obj, cls).params
            except DecodeError as e:
                raise ProtocolError(f"Invalid params: {e}", ErrorCode.INVALID_PARAMS) from None
        exchange = Exchange(self, rid, method, typed, raw_params, meta)
        exchange.input_responses, exchange.request_state = retry
        if method == "subscriptions/listen":
            try:
                exchange.requested_filter = subscriptions.read_filter(raw_params)
            except ValueError as e:
                raise ProtocolError(f"Invalid params: {e}", ErrorCode.INVALID_PARAMS) from None
        if headers is not None and method == "tools/call" and self.param_headers is not None:
            name = raw_params.get("name")
            declared = self.param_headers(name) if isinstance(name, str) else ()
            if declared:
                arguments = raw_params.get("arguments")
                hdr.check_param_headers(declared, headers, arguments if isinstance(arguments, dict) else None)
        if self.track_ids:
            self._in_flight[rid] = exchange
        return [ExchangeReceived(exchange)]

    def _serves(self, method: str, version: str) -> bool:
        served = self.served
        if served is not None and method not in served:
            return False
        if method in v.MODERN_CLIENT_REQUESTS[version] or method in self.extension_methods:
            return True
        # a method of an earlier revision only (initialize, ping, logging/setLevel ...) is not one of
        # this revision's, even if a handler is registered for it; any other is an application's own
        return method not in m.KNOWN_METHODS and method not in v.REMOVED_IN_MODERN

    def _on_notification(self, raw: RawNotification) -> list[Event]:
        if raw.method == "notifications/cancelled":
            rid = (raw.params or {}).get("requestId")
            exchange = self._in_flight.get(rid) if self.track_ids and isinstance(rid, str | int) else None
            if exchange is None:
                # [2026-07-28:basic/patterns/cancellation#14, #19] unknown or finished: ignored
                return [CancellationIgnored(rid, None, "unknown or finished request")]
            reason = (raw.params or {}).get("reason")
            exchange.state = "cancelled"
            self._finish(exchange)
            # [2026-07-28:basic/transports/stdio#10] on one channel the client cancels with this notification
            return [CancellationReceived(exchange.id, reason if isinstance(reason, str) else None)]
        return [NotificationIgnored(raw.method, "no client notification other than notifications/cancelled exists")]

    def _finish(self, exchange: Exchange) -> None:
        if self.track_ids and self._in_flight.get(exchange.id) is exchange:
            del self._in_flight[exchange.id]

    def in_flight(self, rid: RequestId) -> Exchange | None:
        return self._in_flight.get(rid)

    def _result_json(self, method: str, result: Any) -> dict[str, Any]:
        if isinstance(result, dict):
            return dict(result)
        expected = m.RESULT_TYPES[method] if method in m.KNOWN_METHODS else None
        if expected is not None and not isinstance(result, expected):
            raise LocalProtocolError(
                f"the result of {method} is {getattr(expected, '__name__', expected)}, not {type(result).__name__}",
                ErrorCode.INTERNAL_ERROR,
            )
        try:
            out = _unstructure(result)
        except (TypeError, ValueError, OverflowError) as e:
            raise LocalProtocolError(f"cannot encode the {method} result: {e}", ErrorCode.INTERNAL_ERROR) from e
        if type(out) is not dict:
            raise LocalProtocolError(f"a result is a JSON object, not {type(out).__name__}", ErrorCode.INTERNAL_ERROR)
        return out

    def _with_hints(self, method: str, result: Any, cache: Any) -> Any:
        """``result`` with the caching hints it lacks set on its own fields, when its class has
        them (the data model's cacheable results): written by the converter like any field."""
        if self._cache is None or isinstance(result, dict) or not attrs.has(type(result)):
            return result
        fields = attrs.fields_dict(type(result))
        if "ttl_ms" not in fields and "cache_scope" not in fields:
            return result
        present = {
            wire: value
            for name, wire in (("ttl_ms", "ttlMs"), ("cache_scope", "cacheScope"))
            if (value := getattr(result, name, None)) is not None
        }
        hints = self._cache(method, present, cache)
        changes = {
            name: hints[wire]
            for name, wire in (("ttl_ms", "ttlMs"), ("cache_scope", "cacheScope"))
            if wire in hints and name in fields
        }
        return attrs.evolve(result, **changes) if changes else result

    def _cache_hints(self, method: str, out: dict[str, Any], cache: Any) -> dict[str, Any]:
        if self._cache is None:
            return {}
        return self._cache(method, out, cache)

    def _answer(self, exchange: Exchange, out: dict[str, Any], *, identify: bool = True) -> bytes:
        if identify and self.identify and self._info_json is not None:
            meta = dict(out.get("_meta") or {})
            # [2026-07-28:basic/index#59, server/discover#3] we name ourselves in every result
            meta.setdefault(v.SERVER_INFO_KEY, self._info_json)
            out["_meta"] = meta
        # [2026-07-28:basic/index#7, #8] the request's own id, and a result
        data = self._encode({"jsonrpc": "2.0", "id": exchange.id, "result": out})
        exchange.state = "answered"
        self._finish(exchange)
        return data

    # -- client role ---------------------------------------------------------------------------

    def request_meta(self, version: str, *, log_level: str | None = None) -> dict[str, Any]:
        """(client) The protocol fields of a request's ``_meta``."""
        meta: dict[str, Any] = {v.PROTOCOL_VERSION_KEY: version, v.CLIENT_CAPABILITIES_KEY: self._caps_json}
        if self._info_json is not None:
            # [2026-07-28:basic/index#55] we name ourselves on every request
            meta[v.CLIENT_INFO_KEY] = self._info_json
        if log_level is not None:
            if log_level not in v.LOG_LEVELS:
                raise LocalProtocolError(f"{log_level!r} is not a log level")
            meta[v.LOG_LEVEL_KEY] = log_level
        return meta

    def send_request(
        self,
        method: str,
        params: Any = None,
        *,
        version: str | None = None,
        progress_token: str | int | bool | None = None,
        log_level: str | None = None,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
    ) -> tuple[RequestId, bytes]:
        """(client) Encode a request with its per-request ``_meta``; returns its id and the bytes.

        ``params``: the method's params class or a JSON object. ``progress_token``:
        True to have one made. ``input_responses`` / ``request_state``: a retry of
        an InputRequiredResult (only for the requests MRTR covers).
        """
        if self.role is not Role.CLIENT:
            raise LocalProtocolError("a server sends no requests (2026-07-28: multi round-trip requests instead)")
        version = version or self.supported_versions[0]
        if method in v.REMOVED_IN_MODERN and not (
            method in TASK_METHODS and self.we_have("extensions", TASKS_EXTENSION)
        ):
            raise LocalProtocolError(f"{method} does not exist in revision {version}", ErrorCode.METHOD_NOT_FOUND)
        body: dict[str, Any]
        if params is None:
            body = {}
        elif isinstance(params, dict):
            body = dict(params)
        else:
            body = _unstructure(params)
        if (input_responses is not None or request_state is not None) and method not in mrtr.SUPPORTED_REQUESTS:
            raise LocalProtocolError(f"{method} is not a request multi round-trip requests retry")
        if input_responses is not None:
            body["inputResponses"] = {
                k: (dict(r) if isinstance(r, dict) else _unstructure(r)) for k, r in input_responses.items()
            }
        if request_state is not None:
            # [2026-07-28:basic/patterns/mrtr#23] echoed exactly as received
            body["requestState"] = request_state
        rid = self._next_id
        while rid in self._outgoing:
            rid += 1
        self._next_id = rid + 1
        meta = dict(body.get("_meta") or {})
        token: str | int | None = None
        if progress_token is True:
            token = f"p{rid}"
        elif progress_token not in (None, False):
            assert not isinstance(progress_token, bool)
            token = progress_token
        if token is not None:
            if token in self._progress:
                # [2026-07-28:basic/patterns/progress#3] unique across active requests
                raise LocalProtocolError(f"progress token {token!r} is in use by another request")
            meta["progressToken"] = token
        # [2026-07-28:basic/index#52] the required fields on every request
        meta.update(self.request_meta(version, log_level=log_level))
        body["_meta"] = meta
        data = self._encode({"jsonrpc": "2.0", "id": rid, "method": method, "params": body})
        self._outgoing[rid] = OutgoingExchange(rid, method, body, version, token)
        if token is not None:
            # [2026-07-28:basic/patterns/progress#10] the active tokens, each to its request
            self._progress[token] = rid
        return rid, data

    def http_headers(self, rid: RequestId, param_headers: tuple[hdr.ParamHeader, ...] = ()) -> dict[str, str]:
        """(client) The headers the POST of request ``rid`` carries (standard, and ``Mcp-Param-*``
        for the annotations ``param_headers`` of the tool it calls)."""
        out = self._outgoing[rid]
        headers = hdr.standard_headers(out.version, out.method, out.params)
        if param_headers and out.method == "tools/call":
            arguments = out.params.get("arguments")
            headers.update(hdr.param_header_values(param_headers, arguments if isinstance(arguments, dict) else None))
        return headers

    def send_cancel(self, rid: RequestId, reason: str | None = None) -> bytes:
        """(client, one channel) ``notifications/cancelled`` for one of our requests; stops waiting for it."""
        out = self._outgoing.get(rid)
        # [2026-07-28:basic/patterns/cancellation#11, schema#22] only a request of ours still in flight
        if out is None or out.state != "pending":
            raise LocalProtocolError(f"request {rid!r} is not in flight")
        params: dict[str, Any] = {"requestId": rid}
        if reason is not None:
            params["reason"] = reason
        self.abandon(rid)
        return dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    def abandon(self, rid: RequestId) -> None:
        """(client) Stop waiting for ``rid`` (its answer, if it comes, is ignored)."""
        # [2026-07-28:basic/patterns/cancellation#15] forgotten: a late answer is an UnknownResponse
        out = self._outgoing.pop(rid, None)
        if out is not None and out.progress_token is not None:
            self._progress.pop(out.progress_token, None)

    def outgoing(self, rid: RequestId) -> OutgoingExchange | None:
        return self._outgoing.get(rid)

    def _client_receive(self, data: bytes | str) -> list[Event]:
        try:
            raw = classify(loads(data))
        except InvalidMessage as e:
            return [MessageRejected(e, None, requirement=e.requirement, level=level_of(e.requirement))]
        if type(raw) is RawResult:
            out = self._outgoing.pop(raw.id, None)
            if out is None:
                return [UnknownResponse(raw.id)]
            if out.progress_token is not None:
                self._progress.pop(out.progress_token, None)
            return [self._classify_result(out, raw.result)]
        if type(raw) is RawError:
            if raw.id is None:
                return [MessageRejected(ProtocolError(raw.message, raw.code, raw.data), None)]
            out = self._outgoing.pop(raw.id, None)
            if out is None:
                return [UnknownResponse(raw.id)]
            if out.progress_token is not None:
                self._progress.pop(out.progress_token, None)
            return [ErrorReceived(raw.id, out.method, Error(code=raw.code, message=raw.message, data=raw.data))]
        if type(raw) is RawRequest:
            # [2026-07-28:basic/patterns/index#1] a server never sends a request; refused, never
            # answered ([2026-07-28:basic/transports/streamable-http#12]: a client sends no responses)
            error = ProtocolError(f"the server sent a {raw.method} request: servers send none in {MODERN_REVISION}")
            return [MessageRejected(error, None, requirement="2026-07-28:basic/transports/stdio#9")]
        assert type(raw) is RawNotification
        if raw.method == "notifications/progress":
            params = raw.params or {}
            token = params.get("progressToken")
            rid = self._progress.get(token) if isinstance(token, str | int) else None
            out = self._outgoing.get(rid) if rid is not None else None
            value = params.get("progress")
            if out is None or token is None or not isinstance(value, int | float) or isinstance(value, bool):
                return [ProgressIgnored(token, value, "unknown token")]
            if out.last_progress is not None and not value > out.last_progress:
                return [ProgressIgnored(token, value, "not increasing")]
            out.last_progress = value
            total, message = params.get("total"), params.get("message")
            return [ProgressReceived(out.id, token, float(value) if type(value) is float else value, total, message)]
        return [NotificationReceived(raw.method, raw.params, None)]

    def _classify_result(self, out: OutgoingExchange, result: dict[str, Any]) -> Event:
        # [2026-07-28:basic/index#14] a result without resultType is a complete one (earlier servers)
        kind = result.get("resultType", "complete")
        if kind == "input_required":
            if out.method not in mrtr.SUPPORTED_REQUESTS:
                error = ProtocolError(f"an InputRequiredResult answers no {out.method} request")
                return InvalidResponse(out.id, out.method, error, requirement="2026-07-28:basic/patterns/mrtr#5")
            requests = result.get("inputRequests")
            state = result.get("requestState")
            if (requests is None and state is None) or (requests is not None and type(requests) is not dict):
                error = ProtocolError("an InputRequiredResult carries input requests or a request state")
                return InvalidResponse(out.id, out.method, error, requirement="2026-07-28:basic/patterns/mrtr#16")
            return InputRequiredReceived(out.id, out.method, result)
        if kind not in v.supported_result_types(self._caps_json.get("extensions")):
            # [2026-07-28:basic/index#13] a resultType we do not know is invalid
            error = ProtocolError(f"unknown resultType {kind!r}")
            return InvalidResponse(out.id, out.method, error, requirement="2026-07-28:basic/index#13")
        if kind == "task" and (out.method not in TASK_REQUESTS or not self.we_have("extensions", TASKS_EXTENSION)):
            # [ext-tasks:tasks#4] a CreateTaskResult for a request a task cannot answer (or one we
            # never declared the extension on) is an invalid response
            error = ProtocolError(f"a CreateTaskResult answers no {out.method} request of ours")
            return InvalidResponse(out.id, out.method, error, requirement="ext-tasks:tasks#4")
        if kind != "complete":
            # an extension's result (one we advertised): its layer reads it as it came; [ext-tasks:tasks#3]
            # a CreateTaskResult goes to the tasks extension's client
            return ResponseReceived(out.id, out.method, result)
        known = out.method in m.KNOWN_METHODS and out.method not in TASK_METHODS
        cls = m.RESULT_TYPES[out.method] if known else None
        if cls is None:
            # (the tasks extension's results are read by its client, as JSON)
            return ResponseReceived(out.id, out.method, result)
        try:
            return ResponseReceived(out.id, out.method, decode(result, cls))
        except DecodeError as e:
            return InvalidResponse(out.id, out.method, ProtocolError(f"invalid {out.method} result: result.{e}"))


def _concise(message: str) -> str:
    """[2026-07-28:schema#17] an error's message is one short line (at most 200 characters)."""
    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    return line if len(line) <= 200 else line[:197].rstrip() + "..."


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals(), hashable=False)
