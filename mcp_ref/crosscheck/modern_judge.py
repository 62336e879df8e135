"""The rules of revision 2026-07-28, sans-IO: what every 2026-07-28 message is held to.

One place for the rules, whoever drives them: the battery of ``mcp-ref check``
(:mod:`.modern`, which writes requests and reads answers), the client fixture
(:mod:`.modern_fixture`, which answers a client), and the passive judges --
``mcp-ref tap`` and ``mcp-ref judge`` -- through :class:`ModernTraffic`, which
the :class:`~mcp_ref.crosscheck.observer.Observer` hands every message of a
2026-07-28 exchange. Nothing here does I/O or knows about trio.

* :class:`ModernJudge`: a server's answers (``resultType``, ``serverInfo``,
  caching hints, ``InputRequiredResult``, error codes, what else it sent while
  a request was open, the HTTP status of an error, a subscription's stream);
* :class:`ClientRules`: a client's requests (the required ``_meta`` fields and
  the retries of multi round-trip requests);
* :class:`ModernTraffic`: both, over recorded or live traffic of either side.

Which era an exchange belongs to is told by the messages themselves
(:func:`is_modern_request`): ``server/discover``, or a request carrying the
protocol version in ``_meta``, is 2026-07-28; ``initialize`` opens a session of
an earlier revision, judged by the 2025 engines.
"""

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from ..errors import DecodeError
from ..schema._base import MODERN_REVISIONS
from ..schema._converter import decode
from ..schema._meta_keys import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    SERVER_INFO,
    SUBSCRIPTION_ID,
)
from ..schema.messages import KNOWN_METHODS, RESULT_TYPES
from .report import Finding
from .values import meta_problems, notification_problems, request_problems, result_problems

__all__ = [
    "MODERN",
    "Answer",
    "ModernJudge",
    "ClientRules",
    "ModernTraffic",
    "is_modern_request",
]

MODERN: Final = MODERN_REVISIONS[-1]
#: the reserved _meta keys, by the short names the rules use (the schema's constants)
PV: Final = PROTOCOL_VERSION
CAPS: Final = CLIENT_CAPABILITIES
CINFO: Final = CLIENT_INFO
LOGLEVEL: Final = LOG_LEVEL
SINFO: Final = SERVER_INFO
SUBID: Final = SUBSCRIPTION_ID
R: Final = MODERN + ":"

#: the results that carry caching hints [2026-07-28:server/utilities/caching#1]
CACHEABLE: Final = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)
#: where an InputRequiredResult may answer [2026-07-28:basic/patterns/mrtr#4]
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: what an input request may be, and the client capability each needs
INPUT_METHODS: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

#: what the server wrote outside any answer: judged by the output checks, not held against the check
#: that happened to be running when it came
STRAY_RULES: Final = frozenset(
    R + r
    for r in (
        "basic/index#26",
        "basic/transports/stdio#1",
        "basic/transports/stdio#4",
        "basic/transports/stdio#9",
        "basic/transports/streamable-http#20",
    )
)
#: the codes of the sub-range reserved for the MCP specification that it defines
DEFINED_RESERVED: Final = frozenset({-32020, -32021, -32022})
#: codes this revision retired [2026-07-28:basic/index#22]
RETIRED: Final = frozenset({-32002, -32042})
#: the methods a declared capability brings (answered -32601 only by a server that lacks them)
SERVES: Final = {
    "tools/call": "tools",
    "tools/list": "tools",
    "prompts/get": "prompts",
    "prompts/list": "prompts",
    "resources/read": "resources",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "completion/complete": "completions",
}
#: the HTTP status an error calls for (anything else: 200 or another 4xx/5xx is the server's choice)
STATUS_OF: Final = {-32020: 400, -32021: 400, -32022: 400, -32601: 404}

#: a requested subscription filter key per list_changed notification
LIST_CHANGED: Final = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
    "notifications/resources/updated": "resourceSubscriptions",
}


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _claims_modern(result: dict[str, Any]) -> bool:
    """A result with what only 2026-07-28 has (caching hints, serverInfo in ``_meta``): its server
    speaks that revision, though it left out resultType (trial30b N1)."""
    meta = result.get("_meta")
    return "cacheScope" in result or "ttlMs" in result or (type(meta) is dict and SINFO in meta)


def _is_response(m: Any) -> bool:
    return type(m) is dict and "method" not in m and ("result" in m or "error" in m)


def _error(m: Any) -> dict[str, Any] | None:
    e = m.get("error") if type(m) is dict else None
    return e if type(e) is dict else None


def _result(m: Any) -> dict[str, Any] | None:
    r = m.get("result") if type(m) is dict else None
    return r if type(r) is dict else None


def _code(m: Any) -> Any:
    e = _error(m)
    return e.get("code") if e is not None else None


def _brief(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


@attrs.define
class Answer:
    """What came back for one request: the response (None: none in time) and what came with it."""

    message: Any = None
    #: notifications and requests that arrived while the request was open (stdio: on the shared
    #: channel; HTTP: on the request's own SSE stream)
    others: list[Any] = attrs.Factory(list)
    #: (HTTP) the answer's status, headers (lower-case names) and content type
    status: int | None = None
    headers: dict[str, str] = attrs.Factory(dict)
    content_type: str = ""
    body: bytes = b""
    #: (HTTP, SSE) the stream was still open STREAM_GRACE seconds after it carried the response
    open_after: bool = False

    @property
    def result(self) -> dict[str, Any] | None:
        return _result(self.message)

    @property
    def error(self) -> dict[str, Any] | None:
        return _error(self.message)

    @property
    def code(self) -> Any:
        return _code(self.message)


def mirrored(schema: Any) -> dict[str, str]:
    """The parameters of an inputSchema mirrored into headers: property name -> header name."""
    out: dict[str, str] = {}
    props = schema.get("properties") if type(schema) is dict else None
    if type(props) is not dict:
        return out
    for prop, sub in props.items():
        header = sub.get("x-mcp-header") if type(sub) is dict else None
        if isinstance(header, str) and header:
            out[prop] = header
    return out


class ModernJudge:
    """The rules every answer of a 2026-07-28 server is held to (see the module doc)."""

    def __init__(self, add: Callable[[Finding], None], *, http: bool, passive: bool = False) -> None:
        self._add = add
        self.http = http
        #: (tap, judge) the traffic is watched, not made: a subscription may end before anything came
        self.passive = passive
        #: the server's capabilities (None: not known, no server/discover seen)
        self.declared: dict[str, Any] | None = None
        #: ids of the subscriptions/listen requests sent (a server may cancel those)
        self.listens: set[str] = set()
        #: the server speaks an earlier revision too (what only a modern-only server is asked is not judged)
        self.dual = False
        self._once: set[tuple[str, str]] = set()
        self.count = 0

    def find(self, requirement: str, message: str, *evidence: Any, key: str = "") -> None:
        if (requirement, key) in self._once:
            return
        self._once.add((requirement, key))
        self.count += 1
        self._add(Finding.of(R + requirement, message, *[_brief(e) for e in evidence], party="server"))

    def answer(self, sent: dict[str, Any], got: Answer) -> None:
        method = str(sent.get("method"))
        params = _obj(sent.get("params"))
        m = _obj(params.get("_meta"))
        result, error = got.result, got.error
        if result is not None:
            self.result(method, params, result, got.message)
        elif error is not None:
            self.error(method, error, got)
        for other in got.others:
            self.other(other, asked_log=LOGLEVEL in m)
        if self.http and got.status is not None:
            self.http_answer(method, got)

    def result(self, method: str, params: dict[str, Any], result: dict[str, Any], message: Any) -> None:
        rtype = result.get("resultType")
        if rtype is None:
            # [2026-07-28:basic/index#10] every result says what kind it is
            self.find("basic/index#10", f"a {method} result carries no resultType", message, key=method)
            rtype = "complete"
        elif rtype not in ("complete", "input_required"):
            # [2026-07-28:basic/index#12] a resultType the core protocol defines
            self.find("basic/index#12", f"a {method} result has the resultType {rtype!r}", message, key=method)
            return
        self.values(method, result, message)
        rmeta = result.get("_meta")
        if type(rmeta) is not dict or SINFO not in rmeta:
            # [2026-07-28:basic/index#59] serverInfo in every result's _meta
            self.find("basic/index#59", f"a {method} result carries no {SINFO} in _meta", message)
        if rtype == "complete" and method in CACHEABLE:
            ttl, scope = result.get("ttlMs"), result.get("cacheScope")
            if ttl is None or scope is None:
                missing = " and ".join(n for n, v in (("ttlMs", ttl), ("cacheScope", scope)) if v is None)
                # [2026-07-28:server/utilities/caching#1] a cacheable result says how long and for whom
                self.find("server/utilities/caching#1", f"a {method} result carries no {missing}", message, key=method)
            if ttl is not None and (type(ttl) is not int or ttl < 0):
                if not (type(ttl) is float and ttl.is_integer() and ttl >= 0):
                    # [2026-07-28:server/utilities/caching#11] ttlMs is an integer >= 0
                    self.find("server/utilities/caching#11", f"a {method} result has ttlMs {ttl!r}", message)
            if scope is not None and scope not in ("public", "private"):
                # [2026-07-28:server/utilities/caching#1] cacheScope is public or private
                self.find("server/utilities/caching#1", f"a {method} result has cacheScope {scope!r}", message)
        if rtype == "input_required":
            self.input_required(method, params, result, message)
        elif result.get("resultType") == "complete":
            # (without a resultType it is not known what the result was meant to be: index#10 is the fault)
            self.shape(method, result, message)

    def values(self, method: str, result: dict[str, Any], message: Any) -> None:
        """The value rules of the prose and the schema that decoding does not check (:mod:`.values`):
        the same functions the Observer applies to the handshake revisions' results."""
        found = [*result_problems(MODERN, method, result), *meta_problems(MODERN, result.get("_meta"), "the result's")]
        for p in found:
            self.find(p.requirement, f"a {method} result: {p.text}", message, key=f"value:{method}")

    def shape(self, method: str, result: dict[str, Any], message: Any) -> None:
        """A complete result has the fields the 2026-07-28 schema requires of its method's result
        (a tools/call result its ``content`` ...): read with the data model, as the handshake
        revisions' results are (spec_notes/crosscheck.md, "Messages that do not follow the schema")."""
        # (the tasks extension's methods are read as JSON by its own client, and judged by it)
        cls = RESULT_TYPES.get(method) if method in KNOWN_METHODS and not method.startswith("tasks/") else None
        if cls is None:
            return  # (a method the model does not know, or an extension's: not judged here)
        try:
            decode(result, cls)
        except DecodeError as e:
            text = f"the {method} result does not follow the {MODERN} schema: result.{e}"
            # [2026-07-28:basic/index#1] the base protocol's messages are the schema's (basic/index#schema)
            self.find("basic/index#1", text, message, key=method)

    def input_required(self, method: str, params: dict[str, Any], result: dict[str, Any], message: Any) -> None:
        if method not in MRTR_METHODS:
            # [2026-07-28:basic/patterns/mrtr#5]
            self.find("basic/patterns/mrtr#5", f"{method} was answered with an InputRequiredResult", message)
            return
        requests = result.get("inputRequests")
        if requests is None and result.get("requestState") is None:
            # [2026-07-28:basic/patterns/mrtr#16] input requests or a state, at least
            self.find(
                "basic/patterns/mrtr#16", "an InputRequiredResult with neither inputRequests nor requestState", message
            )
            return
        if requests is None:
            return
        if type(requests) is not dict:
            # [2026-07-28:basic/patterns/mrtr#9] inputRequests is a map of requests
            self.find("basic/patterns/mrtr#9", "inputRequests is not an object of requests", message)
            return
        m = _obj(params.get("_meta"))
        caps = _obj(m.get(CAPS))
        for key, req in requests.items():
            rm = req.get("method") if type(req) is dict else None
            if rm not in INPUT_METHODS:
                # [2026-07-28:basic/patterns/mrtr#9] elicitation, sampling or roots only
                self.find(
                    "basic/patterns/mrtr#9",
                    f"input request {key!r} is {rm!r}: not elicitation, sampling or roots",
                    message,
                )
                continue
            cap = INPUT_METHODS[rm]
            if cap not in caps:
                # [2026-07-28:basic/patterns/mrtr#17] nothing the client did not declare
                self.find(
                    "basic/patterns/mrtr#17",
                    f"input request {key!r} is {rm} though the request declared no {cap} capability",
                    message,
                )

    def error(self, method: str, error: dict[str, Any], got: Answer) -> None:
        code = error.get("code")
        capability = SERVES.get(method)
        if code == -32601 and capability is not None and self.declared is not None and capability in self.declared:
            # [2026-07-28:basic/index#3] -32601 is JSON-RPC's "no such method": a method of a capability the
            # server declared exists (an unknown tool, prompt or resource is -32602: spec_notes/server/tools.md)
            self.find(
                "basic/index#3",
                f"{method} got Method not found (-32601), though the server declared {capability}",
                got.message,
                key=f"-32601:{method}",
            )
        elif code in RETIRED and not (code == -32002 and method == "resources/read"):
            # [2026-07-28:basic/index#22] -32002 and -32042 are retired
            self.find("basic/index#22", f"{method} got the retired code {code}", got.message, key=str(code))
        elif type(code) is int and -32099 <= code <= -32020 and code not in DEFINED_RESERVED:
            # [2026-07-28:basic/index#21] the sub-range is the specification's
            self.find(
                "basic/index#21", f"{method} got error {code}, a reserved code the spec does not define", got.message
            )

    def other(self, message: Any, *, asked_log: bool) -> None:
        if type(message) is not dict:
            return
        method = message.get("method")
        if "id" in message and isinstance(method, str) and method.startswith("notifications/"):
            # [2026-07-28:basic/index#26] a notification carries no id (it is not a request the server made)
            self.find("basic/index#26", f"the server sent the notification {method} with an id", message)
            return
        if "id" in message and isinstance(method, str):
            if self.http:
                # [2026-07-28:basic/transports/streamable-http#20] no request on a response stream
                self.find(
                    "basic/transports/streamable-http#20",
                    f"the server sent a {method} request on a response stream",
                    message,
                )
            else:
                # [2026-07-28:basic/transports/stdio#9] no request from the server on stdout
                self.find("basic/transports/stdio#9", f"the server wrote a {method} request on stdout", message)
            return
        params = _obj(message.get("params"))
        if isinstance(method, str):
            meta = meta_problems(MODERN, params.get("_meta"), f"the {method} notification's")
            for p in [*notification_problems(MODERN, method, params), *meta]:
                self.find(p.requirement, f"{method}: {p.text}", message, key=f"value:{method}")
        if method == "notifications/message":
            if self.declared is not None and "logging" not in self.declared:
                # [2026-07-28:server/utilities/logging#2] log messages only from a server that declared logging
                self.find("server/utilities/logging#2", "a log message from a server that declared no logging", message)
            if not asked_log:
                # [2026-07-28:server/utilities/logging#3] no log message for a request without a logLevel
                self.find(
                    "server/utilities/logging#3",
                    f"a log message for a request that carried no {LOGLEVEL}",
                    message,
                )
        elif method == "notifications/cancelled":
            if json.dumps(params.get("requestId")) not in self.listens:
                # [2026-07-28:basic/patterns/cancellation#3] a server cancels only subscriptions
                self.find(
                    "basic/patterns/cancellation#3",
                    "the server cancelled a request that is not a subscription",
                    message,
                )

    def subscription(self, sent: dict[str, Any], others: list[Any], wanted: dict[str, Any]) -> None:
        """A ``subscriptions/listen`` stream: ``others``, what came while it was open."""
        sid = sent["id"]
        on_stream = self.http
        mine: list[Any] = []
        for m in others:
            if type(m) is not dict or "id" in m:
                continue
            params = _obj(m.get("params"))
            tag = _obj(params.get("_meta")).get(SUBID)
            method = m.get("method")
            if tag == sid or (tag is None and (on_stream or method in LIST_CHANGED or "subscriptions" in str(method))):
                mine.append(m)
                if tag is None and method != "notifications/cancelled":
                    # [2026-07-28:basic/index#61] a subscription's notifications name it
                    self.find(
                        "basic/index#61",
                        f"a {method} notification on a subscription carries no {SUBID}",
                        m,
                        key=f"listen:{method}",
                    )
        listed = [m for m in mine if m.get("method") != "notifications/cancelled"]
        if (listed or not self.passive) and (
            not listed or listed[0].get("method") != "notifications/subscriptions/acknowledged"
        ):
            first = listed[0].get("method") if listed else "nothing"
            # [2026-07-28:basic/patterns/subscriptions#2] the acknowledgement comes first
            self.find(
                "basic/patterns/subscriptions#2",
                f"the first message of the subscription was {first}, not notifications/subscriptions/acknowledged",
                *(listed[:1]),
                key=f"listen:{first}",
            )
        for m in listed[1:]:
            key = LIST_CHANGED.get(str(m.get("method")))
            if key is not None and not wanted.get(key):
                # [2026-07-28:basic/patterns/subscriptions#1] only what was asked for
                self.find(
                    "basic/patterns/subscriptions#1",
                    f"the subscription asked for {sorted(wanted)} and got {m.get('method')}",
                    m,
                    key=f"listen:{m.get('method')}",
                )
        for m in others:
            self.other(m, asked_log=False)

    def http_answer(self, method: str, got: Answer) -> None:
        if "mcp-session-id" in got.headers and not self.dual:
            # [2026-07-28:basic/transports/streamable-http#72] this revision has no sessions
            self.find(
                "basic/transports/streamable-http#72",
                f"an answer to {method} carries an Mcp-Session-Id (this revision has no sessions)",
                f"Mcp-Session-Id: {got.headers['mcp-session-id']}",
            )
        if got.content_type == "text/event-stream":
            if got.headers.get("x-accel-buffering", "").lower() != "no":
                # [2026-07-28:basic/transports/streamable-http#22] SSE answers are not buffered
                self.find("basic/transports/streamable-http#22", "an SSE answer without X-Accel-Buffering: no", method)
            if got.open_after:
                # [2026-07-28:basic/transports/streamable-http#21] the stream ends with its response
                self.find(
                    "basic/transports/streamable-http#21",
                    f"the SSE stream answering {method} stayed open after its response",
                    method,
                )
        if (
            got.status is not None
            and 200 <= got.status < 300
            and got.content_type not in ("application/json", "text/event-stream")
        ):
            # [2026-07-28:basic/transports/streamable-http#16] a request is answered with JSON or SSE
            self.find(
                "basic/transports/streamable-http#16",
                f"a {method} request was answered HTTP {got.status} {got.content_type or '(no content type)'} "
                "with no JSON-RPC response",
                _brief(got.body.decode("utf-8", "replace")),
            )
        code = got.code
        want = STATUS_OF.get(code) if type(code) is int else None
        if ("basic/index#3", f"-32601:{method}") in self._once:
            want = None  # (the code itself is the fault: its status would be right for the code that was due)
        if want is not None and got.status != want:
            rid = {
                -32020: "schema#18",
                -32021: "basic/index#58",
                -32022: "basic/transports/streamable-http#28",
                -32601: "basic/transports/streamable-http#29",
            }[code]
            # [2026-07-28:schema#18, basic/index#58, basic/transports/streamable-http#28, #29] each error's status
            self.find(
                rid, f"error {code} for {method} came with HTTP {got.status}, not {want}", got.message, key=str(code)
            )


def decode_header(raw: str) -> str | None:
    """A request metadata header's value: the Base64 sentinel form decoded (None: not valid Base64)."""
    if raw.startswith("=?base64?") and raw.endswith("?="):
        try:
            return base64.b64decode(raw[9:-2], validate=True).decode("utf-8")
        except ValueError:
            return None
    return raw


def is_modern_request(message: Any) -> bool:
    """Whether ``message`` is a request of a 2026-07-28 exchange: ``server/discover``, or any
    request but ``initialize`` carrying the protocol version in ``_meta``
    [2026-07-28:basic/index#52] (an earlier revision's request never does: its version was
    negotiated once, by ``initialize``)."""
    if type(message) is not dict or not isinstance(message.get("method"), str) or "id" not in message:
        return False
    if message["method"] == "server/discover":
        return True
    m = _obj(_obj(message.get("params")).get("_meta"))
    return message["method"] != "initialize" and isinstance(m.get(PV), str)


def _key(rid: Any) -> str:
    return json.dumps(rid, sort_keys=True)


class ClientRules:
    """What a 2026-07-28 client's requests are held to: the fixture's, the tap's and the judge's."""

    def __init__(self, add: Callable[[Finding], None]) -> None:
        self._add = add
        self._once: set[tuple[str, str]] = set()
        #: the client's clientInfo, from its first request that carried one
        self.info: Any = None
        self.requests = 0
        self.retries = 0

    def find(self, requirement: str, message: str, *evidence: Any, key: str = "") -> None:
        if (requirement, key) in self._once:
            return
        self._once.add((requirement, key))
        text = [e if isinstance(e, str) else json.dumps(e)[:300] for e in evidence]
        self._add(Finding.of(R + requirement, message, *text, party="client"))

    def meta(self, method: str, m: dict[str, Any], message: Any) -> None:
        """The ``_meta`` every request carries."""
        self.requests += 1
        missing = [k for k, t in ((PV, str), (CAPS, dict)) if not isinstance(m.get(k), t)]
        if missing:
            # [2026-07-28:basic/index#52] the required _meta fields on every request
            self.find("basic/index#52", f"a {method} request lacks {', '.join(missing)} in _meta", message)
        if CINFO not in m:
            # [2026-07-28:basic/index#55] clientInfo on every request
            self.find("basic/index#55", f"a {method} request carries no {CINFO}", message)
        elif self.info is None:
            self.info = m[CINFO]
        params = _obj(message.get("params")) if type(message) is dict else {}
        for p in [*request_problems(MODERN, method, params), *meta_problems(MODERN, m, f"the {method} request's")]:
            self.find(p.requirement, f"{method}: {p.text}", message, key=f"value:{method}")

    def headers(
        self, method: str, params: dict[str, Any], m: dict[str, Any], headers: Mapping[str, str], schema: Any
    ) -> None:
        """(HTTP) The request metadata headers of a POST against its body; ``schema``: the called
        tool's input schema, for the parameters it mirrors into headers (None: not known)."""
        h = {k.lower(): v for k, v in headers.items()}
        version = h.get("mcp-protocol-version")
        if version is None:
            # [2026-07-28:basic/transports/streamable-http#25] the version header on every POST
            self.find("basic/transports/streamable-http#25", f"a {method} POST has no MCP-Protocol-Version header")
        elif isinstance(m.get(PV), str) and version != m[PV]:
            # [2026-07-28:basic/transports/streamable-http#26] and the same version as _meta
            self.find(
                "basic/transports/streamable-http#26",
                f"a {method} POST has MCP-Protocol-Version {version!r} but _meta says {m[PV]!r}",
            )
        got = h.get("mcp-method")
        if got != method:
            what = "no Mcp-Method header" if got is None else f"Mcp-Method {got!r}"
            # [2026-07-28:basic/transports/streamable-http#32] Mcp-Method mirrors the method
            self.find("basic/transports/streamable-http#32", f"a {method} POST has {what}", key="method")
        if method in MRTR_METHODS:
            name = params.get("uri") if method == "resources/read" else params.get("name")
            raw = h.get("mcp-name")
            if raw is None or (isinstance(name, str) and decode_header(raw) != name):
                what = "no Mcp-Name header" if raw is None else f"Mcp-Name {raw!r} for {name!r}"
                # [2026-07-28:basic/transports/streamable-http#32] Mcp-Name mirrors the name or URI
                self.find("basic/transports/streamable-http#32", f"a {method} POST has {what}", key="name")
        if method == "tools/call":
            arguments = _obj(params.get("arguments"))
            for prop, header in mirrored(schema).items():
                value = arguments.get(prop)
                if value is None:
                    continue
                raw = h.get("mcp-param-" + header.lower())
                text = ("true" if value else "false") if isinstance(value, bool) else str(value)
                if raw is None or decode_header(raw) != text:
                    what = f"no Mcp-Param-{header} header" if raw is None else f"Mcp-Param-{header} {raw!r}"
                    # [2026-07-28:basic/transports/streamable-http#36] marked parameters mirrored
                    self.find(
                        "basic/transports/streamable-http#36",
                        f"a tools/call of {params.get('name')} has {what} for the argument {prop}={value!r}",
                    )

    def retry(self, name: str, first_id: Any, result: dict[str, Any], params: dict[str, Any], rid: Any) -> None:
        """A retry (id ``rid``, ``params``) of the request ``first_id`` that got the InputRequiredResult ``result``."""
        self.retries += 1
        if _key(first_id) == _key(rid):
            # [2026-07-28:basic/patterns/mrtr#26] a retry is a new request
            self.find("basic/patterns/mrtr#26", f"a retry of {name} reused the id {rid!r} of the first request")
        requests = result.get("inputRequests") or {}
        answers = params.get("inputResponses")
        missing = [k for k in requests if type(answers) is not dict or k not in answers]
        if missing:
            # [2026-07-28:basic/patterns/mrtr#21] the retry answers every input request
            self.find(
                "basic/patterns/mrtr#21",
                f"a retry of {name} carries no answer to the input request(s) {missing}",
                params,
            )
        if "requestState" in result:
            if params.get("requestState") != result["requestState"]:
                # [2026-07-28:basic/patterns/mrtr#23] the state goes back as it came
                self.find(
                    "basic/patterns/mrtr#23",
                    f"a retry of {name} did not echo the requestState exactly",
                    f"given {result['requestState']!r}, echoed {params.get('requestState')!r}",
                )
        elif "requestState" in params:
            # [2026-07-28:basic/patterns/mrtr#25] no state where none was given
            self.find(
                "basic/patterns/mrtr#25",
                f"a retry of {name} carries a requestState though none was given",
                f"requestState: {params['requestState']!r}",
            )


class ModernTraffic:
    """Both directions of 2026-07-28 exchanges, judged passively (the tap's and the judge's view).

    The :class:`~mcp_ref.crosscheck.observer.Observer` asks :meth:`takes` of
    every message, and hands those of a 2026-07-28 exchange to :meth:`observe`:
    a modern request and its answer, what the server sends while such a request
    is open (progress, log messages, a subscription's notifications), and --
    while no ``initialize`` opened a session of an earlier revision -- anything
    else on the connection. Requests are judged by :class:`ClientRules`, answers
    by :class:`ModernJudge`; a result is held to this revision's shape only once
    the server showed it speaks it (``server/discover`` listing it, or a
    ``resultType`` in a result): a server of an earlier revision that serves a
    modern-looking request gets a note, not a finding.
    """

    def __init__(self, add: Callable[[Finding], None], *, transport: str | None) -> None:
        self.stdio = transport == "stdio"
        self.server = ModernJudge(add, http=transport == "http", passive=True)
        self.client = ClientRules(add)
        #: the modern requests waiting for their answer, by id
        self.open: dict[str, dict[str, Any]] = {}
        #: (method, name) -> (id, InputRequiredResult) of the requests that asked for input
        self.asked: dict[tuple[str, str], tuple[Any, dict[str, Any]]] = {}
        #: open subscriptions/listen requests -> the notifications tagged with their id so far
        self.listening: dict[str, list[Any]] = {}
        #: whether the server showed it speaks 2026-07-28 (None: not yet known)
        self.modern_server: bool | None = None
        #: the input schemas of the tools listed (for the parameters mirrored into headers)
        self.schemas: dict[str, Any] = {}
        #: how many modern requests were seen
        self.seen = 0
        self.notes: list[str] = []
        #: ids of the requests (and notifications with an id) the server wrote: an answer to one is
        #: a consequence of the server's fault, not the client's
        self.server_asked: set[str] = set()

    # -- routing -------------------------------------------------------------------------------------

    def takes(self, to_server: bool, message: Any, *, legacy: bool) -> bool:
        """Whether ``message`` belongs to a 2026-07-28 exchange. ``legacy``: an ``initialize``
        opened a session of an earlier revision on this connection."""
        if type(message) is not dict:
            return False
        method = message.get("method")
        params = _obj(message.get("params"))
        if "id" in message and isinstance(method, str):
            # a request: the client's by its _meta; the server's by the era of the connection
            return is_modern_request(message) if to_server else bool(self.seen) and not legacy
        if not isinstance(method, str):
            # a response: to a modern request, or (a client's) on a connection that is modern only
            if not to_server and _key(message.get("id")) in self.open:
                return True
            return bool(self.seen) and not legacy and to_server
        if to_server and method == "notifications/cancelled" and _key(params.get("requestId")) in self.open:
            return True
        if not to_server:
            tag = _obj(params.get("_meta")).get(SUBID)
            if tag is not None and _key(tag) in self.listening:
                return True
            if method == "notifications/progress" and any(
                _key(_obj(_obj(r.get("params")).get("_meta")).get("progressToken")) == _key(params.get("progressToken"))
                for r in self.open.values()
            ):
                return True
        return bool(self.seen) and not legacy

    # -- judging -------------------------------------------------------------------------------------

    def observe(self, to_server: bool, message: dict[str, Any], headers: Mapping[str, str] | None = None) -> None:
        """Judge one message :meth:`takes` accepted; ``headers``: (HTTP) those of the POST that carried it."""
        method = message.get("method")
        if "id" in message and isinstance(method, str):
            if to_server:
                self._request(message, headers)
            else:
                # a request from the server (stdio#9, streamable-http#20) or a notification with an id (index#26)
                if len(self.server_asked) < _OPEN_MEMORY:
                    self.server_asked.add(_key(message.get("id")))
                self.server.other(message, asked_log=False)
            return
        if not isinstance(method, str):
            if to_server:
                if _key(message.get("id")) in self.server_asked:
                    # the server wrote a request (or a notification with an id) first: its finding is the
                    # fault; the client answering it is a consequence, not the client's own
                    self.notes.append(
                        f"the client answered the server's stray message {message.get('id')!r}: not held against it"
                    )
                elif self.stdio:
                    # [2026-07-28:basic/transports/stdio#7] a client answers nothing in this revision
                    self.client.find("basic/transports/stdio#7", "the client wrote a JSON-RPC response", message)
                return
            self._response(message)
            return
        if to_server:
            return  # a cancellation of an open request, or a notification the server may ignore
        tag = _obj(_obj(message.get("params")).get("_meta")).get(SUBID)
        if tag is not None and _key(tag) in self.listening:
            self.listening[_key(tag)].append(message)
            return
        asked_log = any(LOGLEVEL in _obj(_obj(r.get("params")).get("_meta")) for r in self.open.values())
        self.server.other(message, asked_log=asked_log)

    def _request(self, message: dict[str, Any], headers: Mapping[str, str] | None) -> None:
        self.seen += 1
        rid = message["id"]
        method = str(message["method"])
        params = _obj(message.get("params"))
        self.client.meta(method, _obj(params.get("_meta")), message)
        if headers is not None:
            schema = self.schemas.get(str(params.get("name"))) if method == "tools/call" else None
            self.client.headers(method, params, _obj(params.get("_meta")), headers, schema)
        if len(self.open) < _OPEN_MEMORY:
            self.open[_key(rid)] = message
        if method == "subscriptions/listen":
            self.listening[_key(rid)] = []
            self.server.listens.add(json.dumps(rid))
        if method in MRTR_METHODS:
            name = str(params.get("uri") if method == "resources/read" else params.get("name"))
            asked = self.asked.pop((method, name), None)
            # a request that carries neither answers nor a state is a new one, not a retry
            # (a client may give up on a request that asked for input)
            if asked is not None and ("inputResponses" in params or "requestState" in params):
                self.client.retry(name, asked[0], asked[1], params, rid)

    def _response(self, message: dict[str, Any]) -> None:
        sent = self.open.pop(_key(message.get("id")))
        method = str(sent.get("method"))
        params = _obj(sent.get("params"))
        result = _result(message)
        if result is not None:
            versions = result.get("supportedVersions")
            if "resultType" in result or _claims_modern(result):
                self.modern_server = True
            elif method == "server/discover" and isinstance(versions, list):
                self.modern_server = MODERN in versions
            if method == "server/discover" and self.modern_server:
                self.server.declared = _obj(result.get("capabilities"))
            if self.modern_server is not True:
                if self.modern_server is None and "resultType" not in result:
                    self.modern_server = False
                    self.notes.append(
                        f"the server answered a 2026-07-28 {method} request as an earlier revision would "
                        "(no resultType): its results were not judged by 2026-07-28's rules"
                    )
                return
            if method == "tools/list" and isinstance(result.get("tools"), list):
                for tool in result["tools"][:_OPEN_MEMORY]:
                    if type(tool) is dict and isinstance(tool.get("name"), str):
                        self.schemas[tool["name"]] = tool.get("inputSchema")
            if result.get("resultType") == "input_required" and method in MRTR_METHODS:
                name = str(params.get("uri") if method == "resources/read" else params.get("name"))
                self.asked[(method, name)] = (sent.get("id"), result)
        others = self.listening.pop(_key(message.get("id")), None)
        if others is not None:
            self.server.subscription(sent, others, _obj(params.get("notifications")))
        self.server.answer(sent, Answer(message))

    def end(self) -> None:
        """The traffic ended: judge the subscriptions still open."""
        for key, others in list(self.listening.items()):
            sent = self.open.get(key)
            if sent is not None:
                self.server.subscription(sent, others, _obj(_obj(sent.get("params")).get("notifications")))
        self.listening.clear()


#: modern requests remembered while they wait for an answer
_OPEN_MEMORY: Final = 10_000
