"""Judge one MCP connection from the outside: both directions, no replies, nothing raised.

An :class:`Observer` is fed every message that crosses the wire, with its
direction, and answers with :class:`~mcp_ref.crosscheck.report.Finding` s::

    obs = Observer(transport="stdio")
    obs.observe(Direction.TO_SERVER, b'{"jsonrpc":"2.0","id":0,"method":"initialize",...}')
    obs.observe(Direction.TO_CLIENT, b'{"jsonrpc":"2.0","id":0,"result":{...}}')
    obs.findings          # everything found so far

Inside are two engines in observer mode (``Connection(role, observer=True)``),
one per role. A message from A to B is *received* by B's engine, which judges
it as mcp_ref judges a peer's message (its fault events carry the requirement
id), and *observed as sent* by A's engine (``observe_sent``), which runs the
checks mcp_ref makes before sending and reports ``RuleBroken`` events. Above
the engines sit the checks that need more than a state machine: the answer a
refused message calls for, tools listed and then called, log levels, task
statuses, base64 payloads, ids reused after their request finished.

No trio here: the observer is as sans-IO as the engine (the battery, tap and
fixture drive it).
"""

import base64
import binascii
import enum
import re
from collections import OrderedDict, deque
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, Final, Literal

import attrs

from ..basic.json_schema import InvalidSchema, UnsupportedDialect, Validate, compile_schema
from ..basic.jsonrpc import InvalidMessage, classify, is_valid_id, loads
from ..basic.lifecycle import Role
from ..connection import Connection
from ..errors import ErrorCode
from ..events import (
    CancellationIgnored,
    CancellationReceived,
    ErrorReceived,
    Event,
    Fault,
    InvalidResponse,
    LateResponseIgnored,
    MessageRejected,
    NotificationIgnored,
    NotificationReceived,
    ProgressIgnored,
    RequestReceived,
    ResponseReceived,
    RuleBroken,
    VersionRejected,
)
from ..schema._meta_keys import bad_meta_keys
from ..schema.messages import CLIENT_NOTIFICATIONS, SERVER_NOTIFICATIONS
from ..schema.tasks import RELATED_TASK_META_KEY, TERMINAL_STATUSES, CreateTaskResult
from ..server.utilities.logging import LEVEL_RANK
from .modern_judge import MODERN, ModernTraffic
from .report import Finding
from .rules import rule
from .values import notification_problems, request_problems, result_problems

__all__ = ["Direction", "Observer", "Transport"]

Transport = Literal["stdio", "http"] | None

#: every revision of MCP there is (a client offering another one supports none: basic/lifecycle#7)
PUBLISHED_REVISIONS: Final = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"})
#: request ids remembered per requestor to catch reuse (basic/index#6)
_ID_MEMORY: Final = 100_000
#: responses remembered for evidence (Observer.answer_to)
_ANSWER_MEMORY: Final = 256
_TOOL_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]+$")


class Direction(enum.Enum):
    """Which way a message travels."""

    TO_SERVER = "c2s"
    TO_CLIENT = "s2c"

    @property
    def sender(self) -> str:
        return "client" if self is Direction.TO_SERVER else "server"

    @property
    def receiver(self) -> str:
        return "server" if self is Direction.TO_SERVER else "client"

    @property
    def back(self) -> "Direction":
        return Direction.TO_CLIENT if self is Direction.TO_SERVER else Direction.TO_SERVER


@attrs.define
class _Expect:
    """What the answer to a message the receiver had to refuse must look like."""

    method: str | None
    code: int | None  # the JSON-RPC code it must carry; None: any error
    requirement: str | None  # what an answer that is not such an error breaks (None: judged elsewhere)
    why: str
    message: Any


#: the requirements whose refusal JSON-RPC gives one exact code (the engine's). Not the id
#: rules (basic/index#4, #5): JSON-RPC itself allows a null id, MCP forbids it to the sender,
#: and neither fixes what the receiver answers -- any error will do
_EXACT_CODES: Final = frozenset({None, "basic/index#3"})

#: the send-side faults in our words (the others quote the engine)
_SEND_WORDS: Final = {
    "server/utilities/logging#1": "sent a log message without declaring the logging capability",
    "client/sampling#4": "sent a tool-enabled sampling request to a client without sampling.tools",
    "client/sampling#6": "asked for context inclusion without the client's sampling.context",
    "client/elicitation#6": "sent an elicitation in a mode the client did not declare",
    "basic/utilities/tasks#4": "sent a task-augmented tools/call to a server without tasks.requests.tools.call",
    "basic/utilities/tasks#2": "sent a task-augmented request the receiver did not declare tasks for",
    "basic/utilities/progress#2": "used a progress token already in use by an active request",
    "basic/utilities/progress#1": "sent a progress token that is neither a string nor an integer",
    "basic/utilities/progress#4": "sent progress that does not increase",
    "basic/utilities/progress#14": "sent progress after the request completed",
    "basic/utilities/progress#11": "sent progress for a task that is no longer running",
    "basic/utilities/progress#7": "sent progress for a token of no active request",
    "basic/utilities/cancellation#4": "answered a request the other side had cancelled",
    "client/elicitation#16": "announced the completion of a URL elicitation this session never had",
}


class Observer:
    """Judges both directions of one MCP connection.

    ``transport`` ("stdio", "http" or None when unknown) chooses the
    requirement a message that is not JSON breaks. Findings accumulate in
    :attr:`findings` (in order; one per requirement and message);
    :meth:`observe` also returns those of the one message.
    """

    def __init__(self, *, transport: Transport = None) -> None:
        self.transport = transport
        #: the two engines, in observer mode
        self.client = Connection(Role.CLIENT, observer=True)
        self.server = Connection(Role.SERVER, observer=True)
        self.findings: list[Finding] = []
        #: remarks that are not violations (a revision we do not judge, ...)
        self.notes: list[str] = []
        #: how many messages were observed, per direction
        self.count: dict[Direction, int] = {Direction.TO_SERVER: 0, Direction.TO_CLIENT: 0}
        self._expect: dict[tuple[Direction, Any], _Expect] = {}
        self._expect_anonymous: dict[Direction, deque[_Expect]] = {d: deque() for d in Direction}
        self._ids_used: dict[Direction, set[Any]] = {d: set() for d in Direction}
        self._stdio_run: dict[Direction, list[bytes]] = {d: [] for d in Direction}
        #: tools from the latest complete tools/list (None until one was seen)
        self.tools: dict[str, Any] | None = None
        self._tool_pages: dict[str, Any] = {}
        self._next_tools_cursor: str | None = None
        self._pending_lists: dict[Any, bool] = {}
        self._output_validators: dict[str, Validate | None] = {}
        self._pending_calls: dict[Any, str] = {}
        #: ids of task-augmented tools/call requests
        self._task_calls: set[Any] = set()
        self._pending_set_level: dict[Any, str] = {}
        self.log_level: str | None = None
        #: task id -> last status seen (as the server reported it)
        self.task_status: dict[str, str] = {}
        self._judging = True
        self._answers: OrderedDict[tuple[Direction, Any], Any] = OrderedDict()
        #: the latest response the server sent
        self.last_answer: Any = None
        #: the ids of the client's initialize requests (cancelling one breaks cancellation#2)
        self._initialize_ids: set[Any] = set()
        #: the revision each initialize was answered with, in order (a tap may see several sessions)
        self.negotiated: list[str] = []
        #: progress tokens of cancelled requests (by the direction their progress travels)
        self._cancelled_tokens: dict[Direction, set[Any]] = {d: set() for d in Direction}
        #: ids of task-augmented requests (by the direction they were sent in)
        self._task_requests: dict[Direction, set[Any]] = {d: set() for d in Direction}
        #: [2026-07-28] the exchanges of that revision: judged by its own rules, not the engines'
        self._modern_found: list[Finding] = []
        self.modern = ModernTraffic(self._modern_found.append, transport=transport)
        #: the message being judged broke a value rule (:meth:`_values`)
        self._valued = False
        self.modern.notes = self.notes

    def _engine_of(self, who: str) -> Connection:
        return self.client if who == "client" else self.server

    @property
    def revision(self) -> str | None:
        legacy = self.client.protocol_version or self.server.protocol_version
        return legacy or (MODERN if self.modern.seen else None)

    @property
    def revisions(self) -> list[str]:
        """Every revision the traffic spoke, the first seen first: 2026-07-28 when stateless requests
        of it crossed, and the one each initialize was answered with (one tap may carry several sessions)."""
        return list(dict.fromkeys([*([MODERN] if self.modern.seen else []), *self.negotiated]))

    def end(self) -> list[Finding]:
        """The traffic is over: what only its end shows (a subscription that never got its
        acknowledgement). Call after :meth:`flush`."""
        self.modern.end()
        out = list(self._modern_found)
        self._modern_found.clear()
        self.findings.extend(out)
        return out

    def in_era(self, finding: Finding) -> Finding:
        """``finding`` named by 2026-07-28's statement when the traffic turned out to be that revision's
        (a finding made before its first request was seen still has the legacy engine's id)."""
        modern = _IN_MODERN_TRAFFIC.get(finding.requirement)
        if modern is None or not self._modern_era():
            return finding
        return attrs.evolve(finding, requirement=modern, level=rule(modern).effective_level)

    def _find(self, out: list[Finding], requirement: str, message: str, evidence: Any, party: str) -> None:
        if (
            requirement == "basic/lifecycle#14"
            and type(evidence) is dict
            and evidence.get("method") == "notifications/progress"
            and "progressToken" in message
        ):
            requirement = "basic/utilities/progress#1"  # the statement about tokens, not the schema at large
        if (
            requirement == "basic/lifecycle#14"
            and type(evidence) is dict
            and evidence.get("method") in ("notifications/message", "logging/setLevel")
            and "params.level" in message
        ):
            # (trial30c D7) a level that is none of LoggingLevel's: a message no revision's schema defines
            # (basic/index#1, as a malformed result), not a matter of what was negotiated
            requirement = f"{MODERN}:basic/index#1" if self._modern_era() else "basic/index#1"
            message = f"{message} (server/utilities/logging: the levels are the schema's LoggingLevel, RFC 5424's)"
        if requirement == "basic/utilities/cancellation#1" and self._modern_era():
            requirement = _IN_MODERN_TRAFFIC[requirement]
        elif requirement == "basic/lifecycle#1" and not self._initialize_ids and _modern_meta(evidence):
            # (trial30c D7) a request whose _meta has 2026-07-28's fields but not its protocolVersion: not one
            # "before initialization", but a 2026-07-28 request that lacks a required field
            requirement = f"{MODERN}:basic/index#52"
            method = evidence.get("method") if type(evidence) is dict else None
            message = f"a {method} request has io.modelcontextprotocol/ fields in _meta, but no protocolVersion"
        if any(f.requirement == requirement and f.party == party for f in out):
            return  # one message, one finding per requirement: both engines may see the same fault
        out.append(Finding.of(requirement, message, evidence, party=party))

    # -- feeding ---------------------------------------------------------------------------------

    def observe(
        self,
        direction: Direction,
        data: bytes | str,
        *,
        deliberate: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> list[Finding]:
        """Judge one message. ``deliberate``: the sender broke rules on purpose (a probe of
        the battery): nothing is held against it, but the answer it calls for is judged.
        ``headers``: (HTTP) those of the POST that carried it, where a revision judges them."""
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
        out: list[Finding] = []
        if self._judging:
            self._observe(direction, raw, deliberate, out, headers)
        self.count[direction] += 1
        self.findings.extend(out)
        return out

    def observe_stdio_line(self, direction: Direction, line: bytes, *, deliberate: bool = False) -> list[Finding]:
        """One line of a stdio stream. Lines that are not JSON are held until the run of
        them ends: a run that is one JSON value spread over lines is a message with
        embedded newlines (transports#3), anything else is not an MCP message (#6, #7)."""
        out: list[Finding] = []
        if not line.strip():
            return out
        run = self._stdio_run[direction]
        try:
            alone = loads(line)
            # a scalar line inside a run ("text", 1, true) is a piece of a value spread over lines
            piece = bool(run) and type(alone) not in (dict, list)
        except InvalidMessage:
            piece = True
        if piece:
            run.append(line)
            joined = b"\n".join(run)
            try:
                value = loads(joined)
            except InvalidMessage:
                return out
            # a whole JSON value over several lines
            lines = len(run)
            run.clear()
            if not deliberate:
                text = f"the {direction.sender} wrote a message over {lines} lines"
                self._find(out, "basic/transports#3", text, value, direction.sender)
            self.findings.extend(out)
            # judged as the message it meant to be, so one fault does not hide the rest
            out += self.observe(direction, joined.replace(b"\n", b" "), deliberate=deliberate)
            return out
        out += self.flush(direction, deliberate=deliberate)
        out += self.observe(direction, line, deliberate=deliberate)
        return out

    def flush(self, direction: Direction, *, deliberate: bool = False) -> list[Finding]:
        """End a run of non-JSON stdio lines (at the next message or at EOF)."""
        run = self._stdio_run[direction]
        out: list[Finding] = []
        for line in run:
            out += self.observe(direction, line, deliberate=deliberate)
        run.clear()
        return out

    def _modern(
        self,
        direction: Direction,
        message: Any,
        deliberate: bool,
        out: list[Finding],
        headers: Mapping[str, str] | None,
    ) -> None:
        """[2026-07-28:basic/versioning] an exchange of that revision: no session, no initialize, each
        request standing alone with its _meta -- judged by that revision's rules."""
        if _is_response(message):
            self._remember_answer(direction, message)
        self.modern.observe(direction is Direction.TO_SERVER, message, headers)
        found, self._modern_found[:] = list(self._modern_found), []
        out.extend(f for f in found if not (deliberate and f.party == direction.sender))

    def _observe(
        self,
        direction: Direction,
        raw: bytes,
        deliberate: bool,
        out: list[Finding],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        sender, receiver = direction.sender, direction.receiver
        engine = self._engine_of(receiver)
        try:
            message: Any = loads(raw)
        except InvalidMessage as e:
            self._expect_anonymous[direction].append(
                _Expect(None, ErrorCode.PARSE_ERROR, "basic/index#3", "a message that is not JSON", _text(raw))
            )
            if not deliberate:
                self._find(out, self._parse_error_requirement(direction, e), _not_json(sender, e), _text(raw), sender)
            engine.stats["parse-error"] += 1
            return
        to_server = direction is Direction.TO_SERVER
        legacy = bool(self._initialize_ids)
        if (
            self.modern.server.http
            and type(message) is list
            and message
            and all(self.modern.takes(to_server, m, legacy=legacy) for m in message)
        ):
            # a 2026-07-28 answer sent as a JSON array: the array is the transport's fault, judged with
            # the HTTP answer (2026-07-28:basic/transports/streamable-http#16); each message in it is
            # judged as if it had come alone
            for item in message:
                self._modern(direction, item, deliberate, out, headers)
            return
        if self.modern.takes(to_server, message, legacy=legacy):
            self._modern(direction, message, deliberate, out, headers)
            return
        if type(message) is dict and _is_response(message):
            self._remember_answer(direction, message)
            rid = message.get("id")
            spoken = (
                (message.get("result") or {}).get("protocolVersion") if type(message.get("result")) is dict else None
            )
            if _id_key(rid) in self._initialize_ids and isinstance(spoken, str):
                # (one connection of a tap may carry several sessions: each one's revision is reported)
                self.negotiated.append(spoken)
            expected = self._expect.pop((direction.back, _id_key(rid)), None)
            if (
                expected is None
                and "error" in message
                and self._expect_anonymous[direction.back]
                and (rid is None or engine.outgoing(rid) is None)
            ):
                # the answer to a message with no readable id (its own id, if any, is a fault)
                expected = self._expect_anonymous[direction.back].popleft()
            if expected is None and "error" in message and rid is None and self._stdio_run[direction.back]:
                return  # the answer to a line that is not JSON, judged when its run of lines ends
            if expected is not None:
                if rid is not None and is_valid_id(rid):
                    # judged here: neither engine waits for it any more
                    engine.forget(rid)
                    self._engine_of(sender).forget(rid)
                self._judge_answer(direction, expected, message, out)
                return
        if (
            type(message) is dict
            and not deliberate
            and "method" not in message
            and "result" not in message
            and "error" not in message
            and is_valid_id(message.get("id"))
            and engine.outgoing(message["id"]) is not None
        ):
            # [basic/index#8] the answer to a request of the receiver, with no result (nor error)
            text = f"the {sender} answered request {message['id']!r} with neither a result nor an error"
            self._find(out, "basic/index#8", text, message, sender)
            deliberate = True
        if type(message) is dict and _is_response(message) and isinstance(message.get("result"), dict):
            meta = message["result"].get("_meta")
            if isinstance(meta, dict) and not deliberate:
                for problem in bad_meta_keys(meta):
                    # [basic/index#26, #27, #29] the keys of _meta follow the grammar
                    self._find(
                        out,
                        "basic/index#26",
                        f"the {sender}'s result has a malformed _meta key: {problem}",
                        message,
                        sender,
                    )
                    break
        if type(message) is dict and message.get("method") == "initialize" and is_valid_id(message.get("id")):
            self._initialize_ids.add(_id_key(message["id"]))
        if (
            type(message) is dict
            and message.get("method") == "notifications/cancelled"
            and direction is Direction.TO_SERVER
            and type(message.get("params")) is dict
            and _id_key(message["params"].get("requestId")) in self._initialize_ids
            and not deliberate
        ):
            # [basic/utilities/cancellation#2] whenever it comes, before or after the answer
            text = "the client cancelled its initialize request"
            self._find(out, "basic/utilities/cancellation#2", text, message, sender)
            deliberate = True
        if (
            type(message) is dict
            and message.get("method") == "initialize"
            and direction is Direction.TO_SERVER
            and not deliberate
        ):
            offered = (
                (message.get("params") or {}).get("protocolVersion") if type(message.get("params")) is dict else None
            )
            if isinstance(offered, str) and offered not in PUBLISHED_REVISIONS:
                # [basic/lifecycle#7] the client offers a version it supports: no revision has that name
                text = f"the client offered protocol version {offered!r}, which no revision of MCP has"
                self._find(out, "basic/lifecycle#7", text, message, sender)
        if type(message) is dict and _is_notification_method(message.get("method")) and "id" in message:
            # [basic/index#14] a notification carries no id: the statement broken is that one, not
            # "a request of an unknown method" (what the engine makes of it)
            if not deliberate:
                text = f"the {sender} sent the notification {message['method']} with an id"
                self._find(out, "basic/index#14", text, message, sender)
            deliberate = True
        if type(message) is dict and "method" in message and is_valid_id(message.get("id")):
            used = self._ids_used[direction]
            key = _id_key(message["id"])
            if key in used and not deliberate:
                self._find(
                    out, "basic/index#6", f"the {sender} used request id {message['id']!r} again", message, sender
                )
            elif len(used) < _ID_MEMORY:
                used.add(key)
        self._valued = bool(type(message) is dict and not deliberate and self._values(direction, message, out))
        before_meta = engine.stats["meta:malformed-key"]
        events = engine.receive_message(raw)
        if engine.stats["meta:malformed-key"] > before_meta and not deliberate:
            self._find(out, "basic/index#26", f"the {sender} sent a malformed _meta key", message, sender)
        for event in events:
            self._on_event(direction, event, message, deliberate, out)
        if type(message) is dict and "method" not in message and is_valid_id(message.get("id")):
            if any(isinstance(e, MessageRejected) for e in events):
                # a malformed answer still ends its request: no cascade of "unknown id" later
                engine.forget(message["id"])
        for event in self._engine_of(sender).observe_sent(raw):
            if isinstance(event, RuleBroken) and event.requirement is not None and not deliberate:
                self._find(out, event.requirement, self._words(sender, event, message), message, sender)

    def _values(self, direction: Direction, message: dict[str, Any], out: list[Finding]) -> bool:
        """The value rules of the prose and the schema that decoding does not check (:mod:`.values`), in
        the negotiated revision -- the same functions ModernJudge applies to 2026-07-28's. Whether one broke."""
        revision = self.client.protocol_version or self.server.protocol_version
        sender = direction.sender
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            if method == "initialize" and type(params) is dict:
                revision = revision or _published(params.get("protocolVersion"))  # (the one it offers)
            if revision is None:
                return False  # (before initialize, the lifecycle is what a message breaks)
            if "id" in message:
                problems = request_problems(revision, method, params)
            else:
                problems = notification_problems(revision, method, params)
            what = f"{method} {'request' if 'id' in message else 'notification'}"
        elif "result" in message and is_valid_id(message.get("id")):
            request = self._engine_of(direction.receiver).outgoing(message["id"])
            result = message["result"]
            if request is not None and request.method == "initialize" and type(result) is dict:
                revision = revision or _published(result.get("protocolVersion"))  # (the one it chose)
            if request is None or revision is None:
                return False
            problems = result_problems(revision, request.method, result)
            what = f"{request.method} result"
        else:
            return False
        for p in problems:
            self._find(out, p.requirement, f"the {sender}'s {what}: {p.text}", message, sender)
        return bool(problems)

    def _remember_answer(self, direction: Direction, message: dict[str, Any]) -> None:
        if direction is Direction.TO_CLIENT:
            self.last_answer = message
        key = (direction, _id_key(message.get("id")))
        self._answers[key] = message
        self._answers.move_to_end(key)
        while len(self._answers) > _ANSWER_MEMORY:
            self._answers.popitem(last=False)

    def answer_to(self, direction: Direction, rid: Any) -> Any:
        """The latest response sent in ``direction`` with id ``rid`` (None if none was seen)."""
        return self._answers.get((direction, _id_key(rid)))

    def _parse_error_requirement(self, direction: Direction, e: InvalidMessage) -> str:
        if "utf-8" in e.message:
            return "basic/transports#1"
        if self.transport == "stdio":
            if self._modern_era():
                # [2026-07-28:basic/transports/stdio#4, #5] nothing but MCP messages on stdout / stdin
                return f"{MODERN}:basic/transports/stdio#{4 if direction is Direction.TO_CLIENT else 5}"
            return "basic/transports#6" if direction is Direction.TO_CLIENT else "basic/transports#7"
        return "basic/index#3"

    def _modern_era(self) -> bool:
        """The traffic is 2026-07-28's (no initialize seen): its faults are named by that revision's ids."""
        return bool(self.modern.seen) and not self._initialize_ids

    @staticmethod
    def _words(sender: str, event: RuleBroken, message: Any) -> str:
        what = message.get("method") if type(message) is dict else None
        what = what or ("a response" if type(message) is dict else "a message")
        words = _SEND_WORDS.get(str(event.requirement))
        return f"the {sender} {words} ({what})" if words else f"the {sender} sent {what}: {event.message}"

    # -- the receiving engine's events -------------------------------------------------------------

    def _on_event(self, direction: Direction, event: Event, message: Any, deliberate: bool, out: list[Finding]) -> None:
        sender = direction.sender
        if isinstance(event, MessageRejected):
            self._on_rejected(direction, event, message, deliberate, out)
        elif isinstance(event, RequestReceived):
            self._on_request(direction, event)
        elif isinstance(event, ResponseReceived):
            self._on_result(direction, event, message, out)
        elif isinstance(event, ErrorReceived):
            name = self._pending_calls.pop(event.id, None)
            self._pending_set_level.pop(event.id, None)
            code = event.error.code
            if name is not None and self._task_only(name, event.id) and code != ErrorCode.METHOD_NOT_FOUND:
                text = f"task-only tool {name!r} called without a task got error {code}, not -32601"
                self._find(out, "basic/utilities/tasks#9", text, message, "server")
        elif isinstance(event, InvalidResponse):
            assert event.requirement is not None
            text = f"the {sender}'s {event.method} result is malformed: {_detail(event)}"
            requirement = event.requirement
            # [basic/index#1] a result without a field its schema requires is not a message of the
            # base protocol (schema.ts defines them, basic/index#schema), whatever was negotiated
            # (spec_notes/crosscheck.md, "Messages that do not follow the schema")
            if requirement == "basic/lifecycle#14":
                requirement = "basic/index#1"
            self._find(out, requirement, text, message, sender)
            if event.method == "initialize":
                self.notes.append("the initialize result was malformed: the rest of that session is not judged")
                self._judging = False
        elif isinstance(event, NotificationReceived):
            self._on_notification(direction, event, message, out)
        elif isinstance(event, CancellationReceived):
            req = self._engine_of(sender).outgoing(event.request_id)
            if req is not None and req.progress_token is not None:
                self._cancelled_tokens[direction.back].add(_id_key(req.progress_token))
        elif isinstance(event, VersionRejected):
            self.notes.append(
                f"the server chose protocol version {event.offered!r}, which mcp_ref does not know: "
                "the rest of the session is not judged"
            )
            self._judging = False
        elif isinstance(event, Fault) and not deliberate:
            self._on_fault(direction, event, message, out)

    def _on_fault(self, direction: Direction, event: Fault, message: Any, out: list[Finding]) -> None:
        sender, receiver = direction.sender, direction.receiver
        requirement = event.requirement
        if isinstance(event, ProgressIgnored):
            if _id_key(event.progress_token) in self._cancelled_tokens[direction]:
                return  # progress crossing a cancellation: a race the spec allows (cancellation#7)
            text = f"the {sender} sent progress {event.why}"
        elif isinstance(event, CancellationIgnored):
            if _id_key(event.request_id) in self._task_requests[direction]:
                requirement = "basic/utilities/cancellation#3"  # answered with a task: tasks/cancel now
            text = f"the {sender} cancelled: {event.why}"
        elif isinstance(event, NotificationIgnored):
            text = f"the {sender} sent {event.method}: {event.why}"
        elif isinstance(event, LateResponseIgnored):
            text = (
                f"the {sender} answered {event.method} request {event.id!r} after the {receiver} cancelled it"
                " (or the answer crossed the cancellation)"
            )
            if self.transport == "http":
                # (a POST still gets an HTTP answer: an SSE stream closed without the response sends none)
                text += "; over Streamable HTTP the POST is still answered, but with no JSON-RPC response in it"
        elif type(event).__name__ == "UnknownResponse":
            rid = getattr(event, "id", None)
            sent = self._ids_used[direction.back]
            if self._modern_era() and requirement == "basic/index#7":
                requirement = f"{MODERN}:basic/index#7"  # as check's 2026-07-28 section names it
            if is_valid_id(rid) and _id_key(rid) in sent:
                text = f"the {sender} answered request id {rid!r} again, after it had answered it"
            elif len(sent) >= _ID_MEMORY or self._modern_era():
                text = f"the {sender} answered request id {rid!r}, which the {receiver} never sent or had seen answered"
            else:
                text = f"the {sender} answered request id {rid!r}, which the {receiver} never sent"
        elif type(event).__name__ == "ErrorWithoutId":
            if self.transport == "http":
                return  # [basic/transports#11, #20] the body of an HTTP error may be an error without an id
            text = f"the {sender} sent an error without an id, though it could read every message it was sent"
        else:
            text = f"the {sender} broke a rule"
        if requirement is not None:
            self._find(out, requirement, text, message, sender)

    def _on_rejected(
        self, direction: Direction, event: MessageRejected, message: Any, deliberate: bool, out: list[Finding]
    ) -> None:
        sender = direction.sender
        err = event.error
        requirement = event.requirement
        method = message.get("method") if type(message) is dict else None
        rid = message.get("id") if type(message) is dict else None
        # the answer this calls for (the engine replies to what could have been a request)
        if getattr(err, "replyable", True):
            self._expect_answer(direction, err.code, requirement, err.message, message, method, rid)
        if deliberate or requirement is None or err.code == ErrorCode.PARSE_ERROR:
            return  # (an unknown method breaks nothing: the receiver answers -32601)
        if self._valued and requirement == "basic/lifecycle#14" and err.code == ErrorCode.INVALID_PARAMS:
            return  # params that do not decode for a value rule already named (the specific statement wins)
        self._find(out, requirement, f"the {sender}'s message was refused: {err.message}", message, sender)

    def _expect_answer(
        self,
        direction: Direction,
        code: int,
        requirement: str | None,
        why: str,
        message: Any,
        method: Any,
        rid: Any,
    ) -> None:
        """Record what the receiver's answer to a message it had to refuse must be."""
        exact = requirement in _EXACT_CODES and not (code == ErrorCode.METHOD_NOT_FOUND and requirement is not None)
        judged: str | None = "basic/index#3"
        if requirement in ("basic/lifecycle#1", "basic/lifecycle#5", "basic/lifecycle#4", "basic/lifecycle#6"):
            # the sender broke the lifecycle; the spec sets the receiver no duty to refuse
            # (a lenient server may answer): only a missing or malformed answer is judged
            judged = None
        elif requirement == "basic/lifecycle#14" and code == ErrorCode.METHOD_NOT_FOUND:
            # a method of a capability the receiver did not declare: answering it shows it has one
            rules = _CAPABILITY_RULES if direction is Direction.TO_SERVER else _CLIENT_CAPABILITY_RULES
            judged = rules.get(str(method).split("/")[0], "basic/lifecycle#14")
        elif requirement in ("basic/lifecycle#2", "basic/lifecycle#14") and code == ErrorCode.INVALID_PARAMS:
            judged = None  # the chapters that name -32602 judge these (the battery)
        expect = _Expect(str(method) if method else None, code if exact else None, judged, why, message)
        if is_valid_id(rid):
            self._expect[(direction, _id_key(rid))] = expect
        else:
            self._expect_anonymous[direction].append(expect)

    def _judge_answer(
        self, direction: Direction, expected: _Expect, message: dict[str, Any], out: list[Finding]
    ) -> None:
        sender = direction.sender
        try:
            raw = classify(message)
        except InvalidMessage as e:
            requirement = e.requirement or "basic/index#3"
            self._find(out, requirement, f"the {sender}'s error response is malformed: {e.message}", message, sender)
            return
        what = f"{expected.method or 'a message'} ({expected.why})"
        if expected.requirement is None:
            return
        if not hasattr(raw, "code"):
            self._find(
                out,
                expected.requirement if expected.method != "tools/call" else "server/tools#20",
                f"the {sender} answered {expected.method or 'a message'} with a result, though it had to refuse it"
                f" ({expected.why})",
                message,
                sender,
            )
            return
        code = raw.code
        if expected.code is not None and code != expected.code:
            self._find(
                out,
                expected.requirement,
                f"the {sender} answered {what} with error code {code}, not {int(expected.code)}",
                message,
                sender,
            )
        if message.get("id") is not None and not is_valid_id(_message_id(expected.message)):
            self._find(
                out,
                "basic/index#10",
                f"the {sender} gave id {message.get('id')!r} to the error for a message without a readable id",
                message,
                sender,
            )

    # -- meaning, beyond the state machines ---------------------------------------------------------

    def _on_request(self, direction: Direction, event: RequestReceived) -> None:
        if event.method == "tools/list" and direction is Direction.TO_SERVER:
            cursor = getattr(event.params, "cursor", None)
            if cursor is None:
                self._tool_pages = {}
            # a listing is followed only from its start, cursor by cursor (not a probe's odd cursor)
            self._pending_lists[event.id] = cursor is None or cursor == self._next_tools_cursor
        elif event.method == "tools/call" and direction is Direction.TO_SERVER:
            self._pending_calls[event.id] = event.params.name
            if getattr(event.params, "task", None) is not None and len(self._task_calls) < _ID_MEMORY:
                self._task_calls.add(_id_key(event.id))
        elif event.method == "logging/setLevel" and direction is Direction.TO_SERVER:
            self._pending_set_level[event.id] = event.params.level

    def _on_result(self, direction: Direction, event: ResponseReceived, message: Any, out: list[Finding]) -> None:
        if isinstance(event.result, CreateTaskResult):
            # [basic/utilities/cancellation#3] from now on it is cancelled with tasks/cancel only
            requests = self._task_requests[direction.back]
            if len(requests) < _ID_MEMORY:
                requests.add(_id_key(event.id))
            if event.result.task.status != "working":
                # [basic/utilities/tasks#26] a task is created working
                text = f"task {event.result.task.task_id!r} was created {event.result.task.status}, not working"
                self._find(out, "basic/utilities/tasks#26", text, message, direction.sender)
        if direction is not Direction.TO_CLIENT:
            self._on_client_result(event, message, out)
            return
        method, result = event.method, event.result
        raw_result = message.get("result") if type(message) is dict else None
        if method == "tools/list":
            self._on_tools_page(result, message, out, self._pending_lists.pop(event.id, False))
        elif method == "tools/call":
            self._on_tool_result(event.id, result, message, out)
        elif method == "logging/setLevel":
            level = self._pending_set_level.pop(event.id, None)
            if level in LEVEL_RANK:
                self.log_level = level
        elif method == "resources/read":
            for i, contents in enumerate((raw_result or {}).get("contents") or []):
                if isinstance(contents, dict) and "blob" in contents and not _is_base64(contents["blob"]):
                    self._find(out, "server/resources#10", f"contents[{i}].blob is not base64", message, "server")
        elif method == "prompts/get":
            for block in _blocks((raw_result or {}).get("messages")):
                self._check_media(block, message, out)
        elif method == "tasks/result":
            meta = (raw_result or {}).get("_meta") or {}
            if RELATED_TASK_META_KEY not in meta:
                self._find(
                    out,
                    "basic/utilities/tasks#67",
                    "the tasks/result response lacks the related-task _meta key",
                    message,
                    "server",
                )
        self._on_tasks_seen(result, message, out)

    def _on_client_result(self, event: ResponseReceived, message: Any, out: list[Finding]) -> None:
        if event.method == "roots/list":
            for root in event.result.roots:
                if not root.uri.startswith("file://"):
                    self._find(out, "client/roots#3", f"root {root.uri!r} is not a file:// URI", message, "client")
        self._on_tasks_seen(event.result, message, out)

    def _on_error(self, direction: Direction, event: ErrorReceived, message: Any, out: list[Finding]) -> None:
        self._pending_calls.pop(event.id, None)
        self._pending_set_level.pop(event.id, None)

    def _on_tools_page(self, result: Any, message: Any, out: list[Finding], in_listing: bool) -> None:
        page: set[str] = set()
        for tool in result.tools:
            name = tool.name
            if name in page or (in_listing and name in self._tool_pages):
                self._find(out, "server/tools#11", f"tool name {name!r} is listed twice", message, "server")
            page.add(name)
            if in_listing:
                self._tool_pages[name] = tool
            if not 1 <= len(name) <= 128:
                self._find(
                    out, "server/tools#7", f"tool name {name[:40]!r} is {len(name)} characters long", message, "server"
                )
            if not _TOOL_NAME.match(name):
                self._find(
                    out,
                    "server/tools#9",
                    f"tool name {name!r} has characters outside A-Z a-z 0-9 _ - .",
                    message,
                    "server",
                )
            for which, schema in (("inputSchema", tool.input_schema), ("outputSchema", tool.output_schema)):
                if schema is None:
                    continue
                problem = _schema_problem(schema)
                if problem is not None:
                    requirement = "server/tools#5" if which == "inputSchema" else "basic/index#24"
                    self._find(out, requirement, f"tool {name!r}: {which} {problem}", message, "server")
            self._output_validators[name] = _validator(tool.output_schema)
        if not in_listing:
            return
        self._next_tools_cursor = result.next_cursor
        if result.next_cursor is None:
            self.tools = dict(self._tool_pages)
            self._tool_pages = {}

    def _task_only(self, name: str, rid: Any) -> bool:
        """Whether the call ``rid`` ran the task-only tool ``name`` without a task."""
        tool = (self.tools or {}).get(name)
        execution = getattr(tool, "execution", None)
        return getattr(execution, "task_support", None) == "required" and _id_key(rid) not in self._task_calls

    def _on_tool_result(self, rid: Any, result: Any, message: Any, out: list[Finding]) -> None:
        name = self._pending_calls.pop(rid, None)
        if name is None or isinstance(result, CreateTaskResult):
            return
        if self._task_only(name, rid):
            # [basic/utilities/tasks#9] a task-only tool called without a task is refused with -32601
            what = "answered with a tool error (isError)" if result.is_error else "ran"
            text = f"task-only tool {name!r} called without a task {what}, not refused with -32601"
            self._find(out, "basic/utilities/tasks#9", text, message, "server")
            return
        if self.tools is not None and name not in self.tools and not result.is_error:
            self._find(
                out,
                "server/tools#20",
                f"tools/call of unknown tool {name!r} was answered as a success",
                message,
                "server",
            )
            return
        validate = self._output_validators.get(name)
        if result.is_error:
            return
        if validate is not None:
            if result.structured_content is None:
                self._find(
                    out,
                    "server/tools#16",
                    f"tool {name!r} declares an output schema but returned no structured content",
                    message,
                    "server",
                )
            else:
                errors = validate(result.structured_content)
                if errors:
                    self._find(
                        out,
                        "server/tools#16",
                        f"tool {name!r} returned structured content that breaks its output schema: {errors[0]}",
                        message,
                        "server",
                    )
        if result.structured_content is not None and not any(
            getattr(b, "type", None) == "text" for b in result.content
        ):
            self._find(
                out,
                "server/tools#15",
                f"tool {name!r} returned structured content without a text block",
                message,
                "server",
            )

    def _check_media(self, block: dict[str, Any], message: Any, out: list[Finding]) -> None:
        kind = block.get("type")
        requirement = {"image": "server/prompts#3", "audio": "server/prompts#4"}.get(str(kind))
        if requirement is not None:
            if not _is_base64(block.get("data")):
                self._find(out, requirement, f"{kind} data is not base64", message, "server")
            if not isinstance(block.get("mimeType"), str) or "/" not in block["mimeType"]:
                self._find(out, requirement, f"{kind} content has no valid MIME type", message, "server")
        resource = block.get("resource") if kind == "resource" else None
        if isinstance(resource, dict) and "blob" in resource and not _is_base64(resource["blob"]):
            self._find(out, "server/resources#10", "an embedded resource's blob is not base64", message, "server")

    def _on_notification(
        self, direction: Direction, event: NotificationReceived, message: Any, out: list[Finding]
    ) -> None:
        if event.method == "notifications/message" and direction is Direction.TO_CLIENT:
            level = event.params.level
            if self.log_level is not None and LEVEL_RANK[level] < LEVEL_RANK[self.log_level]:
                self._find(
                    out,
                    "server/utilities/logging#2",
                    f"a {level} log message arrived after logging/setLevel {self.log_level}",
                    message,
                    "server",
                )
        elif event.method == "notifications/tasks/status":
            self._task_seen(event.params, message, out, direction.sender)

    def _on_tasks_seen(self, result: Any, message: Any, out: list[Finding]) -> None:
        task = getattr(result, "task", None)
        if task is not None:
            self._task_seen(task, message, out, "server")
        for t in getattr(result, "tasks", None) or []:
            self._task_seen(t, message, out, "server")
        if hasattr(result, "task_id") and hasattr(result, "status"):
            self._task_seen(result, message, out, "server")

    def _task_seen(self, task: Any, message: Any, out: list[Finding], party: str) -> None:
        old = self.task_status.get(task.task_id)
        if old in TERMINAL_STATUSES and task.status != old:
            self._find(
                out,
                "basic/utilities/tasks#28",
                f"task {task.task_id!r} went from {old} to {task.status}",
                message,
                party,
            )
        else:
            self.task_status[task.task_id] = task.status
        for field, requirement in (("created_at", "#36"), ("last_updated_at", "#37")):
            stamp = getattr(task, field, None)
            if isinstance(stamp, str) and not _is_iso8601(stamp):
                self._find(
                    out,
                    f"basic/utilities/tasks{requirement}",
                    f"task {task.task_id!r}: {field} {stamp!r} is not ISO 8601",
                    message,
                    party,
                )


# -- small helpers -----------------------------------------------------------------------------


#: (trial30c D7) the legacy engine's id -> the 2026-07-28 statement, for 2026-07-28 traffic
_IN_MODERN_TRAFFIC: Final = {"basic/utilities/cancellation#1": f"{MODERN}:basic/patterns/cancellation#11"}


def _modern_meta(message: Any) -> bool:
    """``message`` is a request whose ``_meta`` carries 2026-07-28's io.modelcontextprotocol/ fields."""
    params = message.get("params") if type(message) is dict else None
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and any(str(k).startswith("io.modelcontextprotocol/") for k in meta)


def _id_key(rid: Any) -> Any:
    # "1" and 1 are different ids (basic/index#4): keep the type in the key
    return (type(rid).__name__, rid) if isinstance(rid, str | int) and not isinstance(rid, bool) else ("?", repr(rid))


def _published(version: Any) -> str | None:
    return version if isinstance(version, str) and version in PUBLISHED_REVISIONS else None


def _bad_code(message: Any) -> bool:
    """An error whose code is there but not an integer (basic/index#12)."""
    error = message.get("error") if type(message) is dict else None
    return type(error) is dict and "code" in error and type(error["code"]) is not int


def _message_id(message: Any) -> Any:
    return message.get("id") if type(message) is dict else None


#: the capability a server declares for the methods of each family
_CAPABILITY_RULES: Final = {
    "tools": "server/tools#3",
    "resources": "server/resources#1",
    "prompts": "server/prompts#1",
    "completion": "server/utilities/completion#1",
    "logging": "server/utilities/logging#1",
    "tasks": "basic/utilities/tasks#1",
}


#: the capability a client declares for the methods of each family
_CLIENT_CAPABILITY_RULES: Final = {
    "roots": "client/roots#1",
    "sampling": "client/sampling#5",
    "elicitation": "client/elicitation#4",
}


def _is_notification_method(method: Any) -> bool:
    return isinstance(method, str) and (
        method.startswith("notifications/") or method in CLIENT_NOTIFICATIONS or method in SERVER_NOTIFICATIONS
    )


def _is_response(message: dict[str, Any]) -> bool:
    return "method" not in message and ("result" in message or "error" in message)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _not_json(sender: str, e: InvalidMessage) -> str:
    return f"the {sender} wrote something that is not a JSON-RPC message ({e.message})"


def _detail(event: InvalidResponse) -> str:
    text = event.error.message
    return text.split(": ", 1)[1] if text.startswith("invalid ") and ": " in text else text


def _is_base64(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_iso8601(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _blocks(messages: Any) -> Iterator[dict[str, Any]]:
    for msg in messages if isinstance(messages, list) else []:
        content = msg.get("content") if isinstance(msg, dict) else None
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, dict):
                yield block


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return "is not an object"
    if schema.get("type") != "object":
        return f"has type {schema.get('type')!r}, not 'object'"
    try:
        compile_schema(schema)
    except UnsupportedDialect as e:
        return f"declares a dialect we cannot check ({e})"
    except InvalidSchema as e:
        return f"is not a valid JSON Schema ({e})"
    return None


def _validator(schema: Any) -> Validate | None:
    if not isinstance(schema, dict):
        return None
    try:
        return compile_schema(schema)
    except ValueError:
        return None
