"""The active battery of ``mcp-ref check``: a strict client that probes a server.

Organised by spec chapter and driven by what the server declares. Each
connection is watched by an :class:`~mcp_ref.crosscheck.observer.Observer`,
so every message both ways is judged, whatever the check was after.

* Probes the normal client would refuse to send (a parse error, an invalid
  request, a request before initialize, an unknown protocol version) go out
  as raw JSON on sessions of their own (:class:`RawSession`), marked
  *deliberate* so the observer does not hold them against us.
* Everything else runs on our own :class:`~mcp_ref.session.client.ClientSession`.

Checks that need a tool with a behaviour take it from the
:class:`~mcp_ref.crosscheck.config.CheckConfig` and are skipped, saying
which option names it, when it is absent. Of the tools it was not told
about, the battery calls those the server marks read-only
(``readOnlyHint``), with arguments made from their input schemas; every
tool, and arguments the schema refuses, with ``--call-all-tools``
(:mod:`.exercise`). It reads every resource and template and gets every
prompt (up to ``MAX_EXERCISED`` of each).
"""

import contextlib
import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, TypeVar

import attrs
import trio

from ..basic.jsonrpc import BATCH_REVISIONS
from ..basic.lifecycle import SUPPORTED_VERSIONS, capability_applies, has_capability
from ..errors import (
    ConnectionClosed,
    ErrorCode,
    HTTPTransportError,
    LocalProtocolError,
    MCPError,
    ProtocolError,
    RequestTimeout,
    UnsupportedProtocolVersion,
)
from ..schema import _base
from ..schema.completion import PromptReference
from ..schema.lifecycle import Implementation
from ..schema.logging import SetLevelRequestParams
from ..schema.messages import CLIENT_REQUESTS
from ..schema.pagination import PaginatedRequestParams
from ..schema.tasks import (
    CancelTaskRequestParams,
    GetTaskPayloadRequestParams,
    GetTaskRequestParams,
    TaskMetadata,
)
from ..schema.tools import CallToolRequestParams
from ..session.client import ClientSession, open_session
from ..session.core import Session, SessionConfig
from .channel import ObservedChannel
from .config import ROLES, CheckConfig, ToolSpec
from .exercise import WORD, arguments_for, expand_template, invalid_arguments_for, safe_to_call, why_not_safe
from .modern import MODERN, ModernBattery, run_modern
from .observer import Direction, Observer
from .report import Finding, Report
from .targets import HttpTarget, StdioTarget, Target, TargetUnreachable, connect

__all__ = ["Battery", "RawSession", "CHAPTERS", "check_server", "run_check"]

_T = TypeVar("_T")

CLIENT_INFO: Final = Implementation(name="mcp-ref-check", version="0.1.0")
#: the revisions a session negotiates with initialize (the legacy era; 2026-07-28's stateless requests
#: are not negotiated, and get a battery of their own)
REVISIONS: Final[tuple[str, ...]] = tuple(getattr(_base, "LEGACY_REVISIONS", _base.REVISIONS))
LATEST: Final = REVISIONS[-1]
#: a protocol version no implementation supports
UNKNOWN_VERSION: Final = "1999-01-01"
#: the chapters ``--only`` may name (the battery runs them in this order)
CHAPTERS: Final = (
    "lifecycle",
    "authorization",
    "transport",
    "jsonrpc",
    "ping",
    "pagination",
    "tools",
    "resources",
    "prompts",
    "completion",
    "logging",
    "cancellation",
    "progress",
    "tasks",
)
#: pages followed at most per list method
MAX_PAGES: Final = 100
#: tools called, resources read, templates and prompts tried at most (bounded time)
MAX_EXERCISED: Final = 50
#: settling time after a round trip before "nothing more came" is believed
SETTLE: Final = 0.05
#: seconds any one answer is waited for once the server has let a request go unanswered
QUICK: Final = 2.0
#: seconds a request is still waited for once an answer with its id came that the observer faulted
#: (an answer mcp_ref's client could read arrives meanwhile; one it could not ends the wait)
GARBLED_GRACE: Final = 0.25
#: (HTTP) seconds the events of a GET stream (and of a resumed one) are watched
GET_WATCH: Final = 1.0
#: version negotiation's sessions open at once
NEGOTIATING: Final = 3
#: requests in a row that go unanswered before the battery sends no more
GIVE_UP: Final = 3
#: a check that runs longer than this many timeouts (at least CHECK_FLOOR seconds) is cut off, so
#: that nothing the peer does holds the battery: every wait on the peer has its own bound; this is
#: the net under them (a check cut off is inconclusive, and said so in the report's notes)
CHECK_BOUND: Final = 6
CHECK_FLOOR: Final = 30.0


#: what the SSE streams and session ids of a Streamable HTTP server must be (judged by HttpJudge)
_STREAM_RULES: Final = [
    "basic/transports#23",
    "basic/transports#32",
    "basic/transports#50",
    "basic/transports#56",
    "basic/transports#57",
]
#: the capabilities whose methods a server that did not declare them must not serve
_UNDECLARED: Final = [
    "server/tools#3",
    "server/resources#1",
    "server/prompts#1",
    "server/utilities/completion#1",
    "server/utilities/logging#1",
    "basic/utilities/tasks#1",
]
_COMPLETE: Final = {"ref": {"type": "ref/prompt", "name": "mcp-ref-check"}, "argument": {"name": "x", "value": ""}}
#: what an answer that came but could not be read breaks (it then stands for "no answer")
_ANSWER_RULES: Final = frozenset(
    {
        "basic/transports#21",
        "basic/transports#19",
        "basic/transports#6",
        "basic/transports#3",
        "basic/transports#1",
        "basic/index#3",
        "basic/index#7",
        "basic/index#8",
        "basic/index#10",
        "basic/index#11",
        "basic/index#12",
    }
)
#: how the engine words a batch it refuses (judged again once the server's revisions are known)
_BATCH_REFUSED: Final = "JSON-RPC batches are not allowed"
#: protocol errors that are not the tool's own failure: invalid params, a task-only tool, a URL
#: elicitation needed, a resource not found
_NOT_THE_TOOLS: Final = frozenset({-32602, -32601, -32042, -32002})
#: the methods a server declaring their capability serves
_CORE_METHODS: Final = frozenset(CLIENT_REQUESTS) - {"initialize", "ping"}


class Timer:
    """How long the battery waits (bounded time, spec_notes/crosscheck.md).

    The full timeout until the server lets a request go unanswered; from then on a
    short one (``QUICK``), so a server that stops answering cannot make each of
    the remaining checks wait the full time. A kind of request (a method) the
    server left unanswered once is not sent again: the checks that need it are
    skipped, naming the check that showed it.
    """

    def __init__(self, timeout: float) -> None:
        self.full = timeout
        self.strikes = 0
        #: the check running now (what an unanswered request is charged to)
        self.running: str | None = None
        #: method -> the check in which it went unanswered ("requests": the server stopped answering)
        self.unanswered: dict[str, str] = {}
        #: requests that went unanswered since the last answer
        self.in_a_row = 0
        #: JSON-RPC requests (not plain HTTP probes such as a GET) that went unanswered
        self.requests_missed = 0

    @property
    def current(self) -> float:
        return self.full if not self.strikes else min(self.full, QUICK)

    def missed(self, kind: str | None, where: str | None = None, *, garbled: bool = False) -> None:
        """A request went unanswered; ``kind`` (None: a deliberate probe) is not sent again.
        ``garbled``: an answer did come, but could not be read (a batch where none is allowed,
        result and error both ...): that is the finding, not silence, so the waits get short
        but nothing counts as unanswered (later revisions are still checked)."""
        self.strikes += 1
        if garbled:
            self.in_a_row = 0
            return
        self.in_a_row += 1
        if kind is None or not kind.startswith("HTTP "):
            self.requests_missed += 1
        if kind is not None:
            self.unanswered.setdefault(kind, where or self.running or "an earlier check")
        if self.in_a_row >= GIVE_UP:
            self.unanswered.setdefault("requests", f"{GIVE_UP} requests in a row went unanswered")

    def answered(self) -> None:
        self.in_a_row = 0

    def gate(self, kind: str) -> None:
        """Raise :class:`NotAnswered` when ``kind`` went unanswered before (or the server
        stopped answering altogether)."""
        for what in (kind, "requests"):
            if what in self.unanswered:
                raise NotAnswered(kind if what == kind else "any request", self.unanswered[what])


class NotAnswered(Exception):
    """A request of a kind the server left unanswered before: not sent again (the check is skipped)."""

    def __init__(self, kind: str, where: str) -> None:
        super().__init__(f"not tried: the server did not answer {kind} before ({where})")
        self.kind = kind
        self.where = where


class _Check:
    def __init__(self, name: str, requirements: Sequence[str]) -> None:
        self.name = name
        self.requirements = list(requirements)
        self.failed = False
        self.skipped = False
        self.details: list[str] = []
        self.findings: list[Finding] = []
        self.silences: list[Finding] = []

    def fail(self, requirement: str, detail: str, *evidence: Any) -> None:
        """The check failed: ``requirement`` is the statement the server broke (every failed
        check names one, spec_notes/crosscheck.md "A failed check is a finding")."""
        self.failed = True
        self.details.append(detail)
        self.find(requirement, detail, *evidence)

    def skip(self, reason: str) -> None:
        self.skipped = True
        self.details.append(reason)

    def note(self, detail: str) -> None:
        self.details.append(detail)

    def find(self, requirement: str, message: str, *evidence: Any, silence: bool = False) -> None:
        """A violation the check itself established (not one the observer saw). ``silence``: the
        finding is that no answer came; an answer that came but could not be read (the observer
        names what it broke) takes its place."""
        if requirement not in self.requirements:
            self.requirements.append(requirement)
        finding = Finding.of(requirement, message, *evidence, party="server")
        self.findings.append(finding)
        if silence:
            self.silences.append(finding)


def _kind_of(method: str, params: Any) -> str:
    """What a request is, for "not asked again": its method (a tool call: with the tool's name)."""
    name = getattr(params, "name", None)
    return f"{method} {name}" if method == "tools/call" and isinstance(name, str) else method


def _words(e: Exception) -> str:
    """An error as the command line's user should read it (options, not the Python API)."""
    if isinstance(e, RequestTimeout):
        return f"{e.method}: no response within {e.timeout:g}s (to wait longer: --timeout SECONDS)"
    return f"{type(e).__name__}: {e}"


def _needs(role: str) -> str:
    option = role.replace("_", "-")
    return f"needs {ROLES[role]} (--{option}-tool NAME, or [tools.{role}] in --config)"


def _dumps(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def _http(raw: "RawSession") -> Any:
    """The raw HTTP channel under a raw session, if it runs over HTTP."""
    from .http_probe import RawHttpChannel

    inner = raw.channel.inner
    return inner if isinstance(inner, RawHttpChannel) else None


def _loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    return urlsplit(url).hostname in ("127.0.0.1", "::1", "localhost")


def _same_id(message: Any, rid: Any) -> bool:
    return type(message) is dict and type(message.get("id")) is type(rid) and message.get("id") == rid


def _is_response(message: Any) -> bool:
    return type(message) is dict and "method" not in message and ("result" in message or "error" in message)


def _json_or_none(data: str | None) -> Any:
    try:
        return json.loads(data) if data else None
    except ValueError:
        return None


def _error(message: Any) -> dict[str, Any] | None:
    err = message.get("error") if type(message) is dict else None
    return err if type(err) is dict else None


class RawSession:
    """JSON messages written and read as they are, on one observed connection.

    Requests the server makes meanwhile are answered (ping with an empty
    result, anything else with -32601), as a client that offers nothing would.
    """

    def __init__(self, channel: ObservedChannel, timeout: "Timer | float") -> None:
        self.channel = channel
        self.timer = timeout if isinstance(timeout, Timer) else Timer(timeout)
        self._next_id = 100  # the probes' own ids (7, "7") stay below
        self.initialize_result: dict[str, Any] | None = None
        #: what came during the last round trip whose ping went unanswered
        self.unpinged: list[Any] = []
        #: the ids of the responses received (a second response with one of them is passed over)
        self._answered: set[tuple[str, str]] = set()

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def send(self, message: Any, *, deliberate: bool = False, within: float | None = None) -> None:
        """Send one message; over HTTP the head of its answer is waited for ``within`` seconds
        (the timer's current wait unless given), no longer: a peer that never answers does not hold us."""
        data = message if isinstance(message, bytes) else _dumps(message)
        if deliberate:
            self.channel.expect_deliberate(data)
        wait = self.timer.current if within is None else within
        http = _http(self)
        if http is not None:
            http.head_wait = wait
        try:
            # (stdio) a server that reads none of its input fills the pipe: the write is not waited for forever
            with trio.fail_after(wait + QUICK):
                await self.channel.send(data)
        except trio.TooSlowError as e:
            raise ConnectionClosed(f"the server read none of {len(data)} bytes within {wait + QUICK:g}s") from e
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            await self._drain()
            raise ConnectionClosed(str(e) or "the server closed the connection") from e

    async def _drain(self) -> None:
        """The server went away: what it wrote before it did is still read (and judged)."""
        with trio.move_on_after(1.0):
            while True:
                try:
                    await self.channel.receive()
                except (trio.EndOfChannel, trio.BrokenResourceError, trio.ClosedResourceError, HTTPTransportError):
                    return

    async def receive(self, timeout: float) -> Any:
        """The next message from the server (parsed JSON, or the text when it is not JSON);
        None when none came in ``timeout`` seconds. ConnectionClosed at EOF."""
        with trio.move_on_after(timeout):
            while True:
                try:
                    data = await self.channel.receive()
                except (trio.EndOfChannel, trio.BrokenResourceError, trio.ClosedResourceError) as e:
                    raise ConnectionClosed(str(e) or "the server closed the connection") from e
                except HTTPTransportError as e:
                    if e.request_id is None:
                        raise
                    # Streamable HTTP: the exchange of a request failed (an error status ...); the
                    # probes judge the JSON-RPC error the body held, else the failure as -32603
                    cause = e.__cause__
                    error = (
                        {
                            "code": cause.code,
                            "message": cause.message,
                            **({"data": cause.data} if cause.data is not None else {}),
                        }
                        if isinstance(cause, MCPError)
                        else {"code": ErrorCode.INTERNAL_ERROR, "message": str(e)}
                    )
                    return {"jsonrpc": "2.0", "id": e.request_id, "error": error}
                try:
                    message = json.loads(data)
                except ValueError:
                    return data.decode("utf-8", "replace")
                if _is_response(message) and message.get("id") is not None:
                    key = (type(message["id"]).__name__, json.dumps(message["id"]))
                    if key in self._answered:
                        # [basic/index#7] a second answer to a request (the observer reports it): not the
                        # answer to whatever the probes wait for now
                        continue
                    self._answered.add(key)
                await self._answer(message)
                return message
        return None

    async def _answer(self, message: Any) -> None:
        if type(message) is not dict or "method" not in message or "id" not in message:
            return
        rid = message["id"]
        if not isinstance(rid, str | int) or isinstance(rid, bool):
            return
        if message["method"] == "ping":
            await self.send({"jsonrpc": "2.0", "id": rid, "result": {}})
        else:
            error = {"code": -32601, "message": f"Method not found: {message['method']}"}
            await self.send({"jsonrpc": "2.0", "id": rid, "error": error})

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        rid: Any = None,
        deliberate: bool = False,
        raw: Any = None,
        timeout: float | None = None,
        kind: str | None = "",
    ) -> Any:
        """Send a request and return its response (None if none came in time: a strike against
        the server, and ``kind`` -- the method unless given, None for none -- is not asked again).
        :class:`NotAnswered` without sending once the server has stopped answering altogether."""
        if "requests" in self.timer.unanswered and method != "initialize":
            raise NotAnswered("any request", self.timer.unanswered["requests"])
        if rid is None:
            rid = self.new_id()
        message = raw if raw is not None else {"jsonrpc": "2.0", "id": rid, "method": method}
        if raw is None and params is not None:
            message["params"] = params
        wait = self.timer.current if timeout is None else timeout
        deadline = trio.current_time() + wait
        await self.send(message, deliberate=deliberate, within=wait)
        http = _http(self)
        while (left := deadline - trio.current_time()) > 0:
            if http is not None and http.answered():
                return None  # (HTTP) the whole answer came, and this was not in it
            answer = await self.receive(min(left, 0.05) if http is not None else left)
            if answer is None:
                continue
            if _is_response(answer) and _same_id(answer, rid):
                self.timer.answered()
                return answer
            if type(answer) is list and (inside := [m for m in answer if _is_response(m) and _same_id(m, rid)]):
                # answered inside a batch: whether a batch was allowed is the observer's finding
                self.timer.answered()
                return inside[0]
        if kind is not None:
            if kind == "" and not deliberate:
                kind = method
            self.timer.missed(kind or None)
        return None

    async def round_trip(self) -> list[Any] | None:
        """Ping, and return what arrived before its answer (None: the ping went unanswered;
        what came meanwhile is then in :attr:`unpinged`)."""
        rid = f"mcp-ref-round-trip-{self.new_id()}"
        seen: list[Any] = []
        self.unpinged = seen
        known = "ping" in self.timer.unanswered
        wait = QUICK / 4 if known else self.timer.current
        deadline = trio.current_time() + wait
        await self.send({"jsonrpc": "2.0", "id": rid, "method": "ping"}, within=wait)
        while (left := deadline - trio.current_time()) > 0:
            message = await self.receive(left)
            if message is None:
                break
            if _is_response(message) and _same_id(message, rid):
                # anything sent before the ping was answered had time to arrive; give stragglers a moment
                while (late := await self.receive(SETTLE)) is not None:
                    seen.append(late)
                return seen
            seen.append(message)
        if not known:
            self.timer.missed("ping")
        return None

    async def initialize(self, version: str = LATEST, capabilities: dict[str, Any] | None = None) -> Any:
        params = {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": CLIENT_INFO.name, "version": CLIENT_INFO.version},
        }
        # initialize always gets the full time (a server may be slow to start), unless one went unanswered
        wait = QUICK if "initialize" in self.timer.unanswered else self.timer.full
        answer = await self.request(
            "initialize", params, deliberate=version not in REVISIONS, timeout=wait, kind="initialize"
        )
        result = answer.get("result") if type(answer) is dict else None
        if type(result) is dict:
            self.initialize_result = result
            await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer


class Battery:
    """One run of the battery against one target."""

    def __init__(
        self,
        target: Target,
        config: CheckConfig | None = None,
        *,
        only: Sequence[str] | None = None,
        on_progress: Callable[[str], None] | None = None,
        auth: Any = None,
        revision: str | None = None,
    ) -> None:
        unknown = set(only or ()) - set(CHAPTERS)
        if unknown:
            raise ValueError(f"unknown chapters {sorted(unknown)}; known: {', '.join(CHAPTERS)}")
        self.target = target
        self.config = config or CheckConfig()
        self.only = set(only) if only else None
        self.timer = Timer(self.config.timeout)
        #: the check running now (a timeout is charged to it)
        self._running: str | None = None
        self._closed_in: str | None = None
        #: whether the server ever answered an initialize
        self.initialized = False
        #: the kind of the main session's latest request (a method; tools/call with the tool's name)
        self._kind = ""
        self.report = Report(target.describe())
        self.observers: list[Observer] = []
        self._sections: dict[int, str | None] = {}
        #: batches the server sent before initialize (judged by the revisions it speaks)
        self._early_batches: list[Finding] = []
        #: the id of the request the main session waits for, and the scope of the wait
        self._waiting: tuple[Any, trio.CancelScope] | None = None
        #: the progress check's call, sent before the cancellation check (its values, the findings' mark)
        self._early_progress: tuple[Any, list[float], int] | None = None
        self.on_progress = on_progress
        self.stderr_tail: deque[str] = deque(maxlen=20)
        self.capabilities: dict[str, Any] = {}
        #: what the server answered to an initialize for each version asked
        self.versions: dict[str, str | None] = {}
        #: (HTTP) an ``HttpAuth`` such as ``OAuthClient``: run its flow when the server asks for authorization
        self.auth = auth
        #: check this revision only (``--revision``); None: every revision the server speaks
        self.revision = revision
        if revision is not None and revision not in (*REVISIONS, MODERN):
            raise ValueError(f"unknown revision {revision!r}; known: {', '.join((*REVISIONS, MODERN))}")
        #: the 2026-07-28 battery, when the target speaks that revision
        self.modern: ModernBattery | None = None

    def _wants(self, chapter: str) -> bool:
        return self.only is None or chapter in self.only

    def _say(self, text: str) -> None:
        if self.on_progress is not None:
            self.on_progress(text)

    # -- sessions and checks ---------------------------------------------------------------

    def _observer(self) -> Observer:
        obs = Observer(transport="stdio" if isinstance(self.target, StdioTarget) else "http")
        self.observers.append(obs)
        # what the observer finds belongs to the revision section its session ran in
        self._sections[id(obs)] = self.report.section
        return obs

    def _recorder(self, what: str) -> Callable[[Direction, bytes], None]:
        """Keeps a session's messages for the report's message sequence (--html)."""
        label = f"{len(self.observers)}: {what}"
        return lambda direction, data: self.report.record(label, direction.value, data)

    @asynccontextmanager
    async def raw_session(self) -> AsyncIterator[RawSession]:
        obs = self._observer()
        recorder = self._recorder("raw probes")
        async with connect(self.target, obs, stderr_tail=self.stderr_tail, raw=True, recorder=recorder) as channel:
            yield RawSession(channel, self.timer)

    @asynccontextmanager
    async def client_session(self, **options: Any) -> AsyncIterator[ClientSession]:
        obs = self._observer()
        recorder = self._recorder(f"the main session ({options.get('protocol_version') or LATEST})")
        async with connect(
            self.target, obs, stderr_tail=self.stderr_tail, recorder=recorder, connect_timeout=self.timer.current
        ) as channel:
            self._channel = channel
            if channel.on_finding is None:
                channel.on_finding = self._live
            async with open_session(
                channel,
                client_info=CLIENT_INFO,
                config=SessionConfig(request_timeout=self.timer.full, cancel_grace=2.0),
                initialize_timeout=self.timer.full,
                validate_tool_results=False,
                # (the battery judges a 2025 session, in whatever revision the server answers: it notes a
                # revision other than the one asked for, so a pin is a preference here)
                **{"era": "legacy", "supported_versions": SUPPORTED_VERSIONS, **options},
            ) as client:
                self._gated(client)
                yield client

    def _gated(self, client: ClientSession) -> None:
        """Every request of the main session waits as the timer says, and a kind of request the
        server left unanswered is not sent again (:class:`NotAnswered`)."""
        session = client.session
        plain_start = session.start_request

        async def request(method: str, params: Any = None, **options: Any) -> Any:
            kind = self._kind = _kind_of(method, params)
            self.timer.gate(kind)
            options.setdefault("timeout", self.timer.current)
            mark = self._server_findings()
            try:
                pending = await plain_start(method, params, **options)
                with trio.CancelScope() as scope:
                    # an answer that came but could not be read ends the wait (_live), not the timeout
                    self._waiting = (getattr(pending, "id", None), scope)
                    try:
                        result = await pending.result()
                    finally:
                        self._waiting = None
                if scope.cancelled_caught:
                    with contextlib.suppress(LocalProtocolError):
                        await pending.cancel("its answer could not be read")
                    raise RequestTimeout(method, options["timeout"], outcome="its answer could not be read")
                self.timer.answered()
                return result
            except RequestTimeout:
                garbled = self._server_findings() > mark
                self.timer.missed(kind, self._running or "the main session", garbled=garbled)
                raise
            except MCPError as e:
                self.timer.answered()
                e.method = method  # type: ignore[attr-defined]
                raise

        async def start_request(method: str, params: Any = None, **options: Any) -> Any:
            kind = self._kind = _kind_of(method, params)
            self.timer.gate(kind)
            options.setdefault("timeout", self.timer.current)
            return await plain_start(method, params, **options)

        session.request = request  # type: ignore[method-assign]
        session.start_request = start_request  # type: ignore[method-assign]

    def _live(self, finding: Finding) -> None:
        """A finding as the observer makes it: when it is about the answer the main session waits
        for (a batch where none is allowed, result and error both ...), the wait ends now."""
        if self._waiting is None or finding.party != "server":
            return
        rid, scope = self._waiting
        for text in finding.evidence:
            try:
                message = json.loads(text) if isinstance(text, str) else text
            except ValueError:
                continue
            if any(_is_response(m) and _same_id(m, rid) for m in (message if type(message) is list else [message])):
                # (a finding about an answer that can be read, a result's content say: it is read meanwhile)
                scope.deadline = min(scope.deadline, trio.current_time() + GARBLED_GRACE)

    def _findings_mark(self) -> int:
        """How many findings (any party) the current session's observer has made."""
        return len(self.observers[-1].findings) if self.observers else 0

    def _server_findings(self) -> int:
        """How many findings against the server the current session's observer has made."""
        obs = self.observers[-1] if self.observers else None
        return sum(f.party == "server" for f in obs.findings) if obs is not None else 0

    def skip(self, name: str, requirements: Sequence[str], reason: str) -> None:
        if self.report.section is not None:
            return  # an older revision's section lists what ran in it; what does not apply there is not news
        self.report.check(name, "skip", requirements, reason)

    @asynccontextmanager
    async def check(self, name: str, requirements: Sequence[str], *, since: int | None = None) -> AsyncIterator[_Check]:
        """Run one check: its status comes from what it decided and from the findings the
        observer made about its requirements meanwhile (``since``: from that many findings on,
        for a check whose request was started earlier). Whatever the server does, the check
        ends with a status; a failed check names at least one broken statement (a finding)."""
        chk = _Check(name, requirements)
        obs = self.observers[-1] if self.observers else None
        start = len(obs.findings) if obs is not None else 0
        if since is not None:
            start = min(start, since)
        self._say(f"check {name}")
        self._running = self.timer.running = name
        bound = max(CHECK_BOUND * self.timer.full, CHECK_FLOOR)
        try:
            with trio.move_on_after(bound) as cap:
                yield chk
            if cap.cancelled_caught:
                self.timer.missed(name, name)
                chk.skip(f"inconclusive: the check was cut off after {bound:g}s")
                self._note(f"mcp-ref could not finish check {name} within {bound:g}s: the server kept it waiting")
        except NotAnswered as e:
            chk.skip(str(e))
        except RequestTimeout as e:
            refused = [f for f in (obs.findings[start:] if obs is not None else []) if f.party == "server"]
            kind = self._kind if self._kind.startswith(e.method) else e.method
            self.timer.missed(kind, name, garbled=bool(refused))
            if refused:
                # an answer came that could not be read: that is the statement broken, not silence
                chk.failed = True
                chk.details.append(f"{e.method}: its answer could not be read ({refused[0].requirement})")
                for f in refused:
                    if f.requirement not in chk.requirements:
                        chk.requirements.append(f.requirement)
            else:
                requirement = "basic/utilities/ping#1" if e.method == "ping" else "basic/index#3"
                chk.fail(requirement, self._unanswered(e.method, e.timeout))
                chk.silences.append(chk.findings[-1])
        except MCPError as e:
            self._inconclusive_error(chk, e)
        except LocalProtocolError as e:
            chk.skip(f"not sent: {e}")  # our own engine would not send it (an undeclared capability ...)
        except ProtocolError as e:
            # a malformed answer: the observer names the statement (else JSON-RPC itself)
            if obs is not None and any(f.party != "client" for f in obs.findings[start:]):
                chk.failed = True
                chk.details.append(f"{type(e).__name__}: {e}")
                for f in obs.findings[start:]:
                    # the check failed because of what the observer found: it names that statement
                    if f.party != "client" and f.requirement not in chk.requirements:
                        chk.requirements.append(f.requirement)
            else:
                requirement = e.requirement or (
                    "server/utilities/pagination#2" if "cursor" in str(e) else "basic/index#3"
                )
                chk.fail(requirement, f"a malformed answer: {e}")
        except HTTPTransportError as e:
            self._http_failure(chk, e)
        except ConnectionClosed as e:
            if self.initialized:
                chk.fail("basic/index#3", "the server closed the connection before answering a request", str(e))
            else:
                chk.skip(f"the server left before initialize was answered: {e}")
            self._closed_in = name
            raise
        finally:
            self._running = self.timer.running = None
            faults = [
                f
                for f in (obs.findings[start:] if obs is not None else [])
                if f.party == "server" and f.requirement in _ANSWER_RULES
            ]
            if faults and chk.silences:
                # the answer came but broke a rule: that rule is the finding, not the silence
                chk.findings = [f for f in chk.findings if f not in chk.silences]
                for f in faults:
                    if f.requirement not in chk.requirements:
                        chk.requirements.append(f.requirement)
            seen = [
                f
                for f in (obs.findings[start:] if obs is not None else [])
                if f.requirement in chk.requirements and f.party != "client"
            ]
            detail = "; ".join(chk.details)
            if chk.skipped and not chk.findings:
                self.skip(name, chk.requirements, detail)
            elif chk.failed or seen or chk.findings:
                self.report.check(name, "fail", chk.requirements, detail)
            else:
                self.report.check(name, "pass", chk.requirements, detail)
            self.report.extend(chk.findings)

    def _unanswered(self, method: str, timeout: float) -> str:
        text = f"{method} got no response within {timeout:g}s (a request is always answered)"
        if method == "tools/call":
            text += "; if the tool is slow on purpose, give --timeout SECONDS"
        return text + self._stderr()

    def _inconclusive_error(self, chk: _Check, e: MCPError) -> None:
        """The server answered with an error where the check needed a result."""
        method = getattr(e, "method", None)
        family = str(method).split("/")[0] if method else ""
        capability = {"completion": "completions"}.get(family, family)
        if e.code == ErrorCode.METHOD_NOT_FOUND and method in _CORE_METHODS and capability in self.capabilities:
            # the capability it declared is part of what was negotiated (basic/lifecycle#14)
            chk.fail(
                "basic/lifecycle#14",
                f"{method} got Method not found (-32601), though the server declared {capability}",
                self._last_answer(),
            )
            return
        # a server may fail a request (its tool, its store...): not a violation in itself
        chk.skip(f"inconclusive: {method or 'a request'} was answered with error {e.code} ({e.message})")

    def _http_failure(self, chk: _Check, e: HTTPTransportError) -> None:
        """(Streamable HTTP) the exchange of one of our requests failed."""
        if isinstance(e.__cause__, MCPError):
            self._inconclusive_error(chk, e.__cause__)
            return
        if e.status is not None and 200 <= e.status < 300:
            # [basic/transports#21] a request is answered with JSON or an SSE stream, nothing else
            chk.fail("basic/transports#21", f"a request was answered HTTP {e.status} with no JSON or SSE: {e}")
        elif e.status is not None:
            chk.skip(f"inconclusive: a request was answered HTTP {e.status} ({e})")
        else:
            chk.fail("basic/index#3", f"a request was never answered: {e}")

    def _last_answer(self) -> Any:
        obs = self.observers[-1] if self.observers else None
        return obs.last_answer if obs is not None else None

    # -- the run ---------------------------------------------------------------------------------

    async def run(self) -> Report:
        """The whole battery. Whatever the server does, a report comes out: only a target
        that cannot be started or reached at all (or asks for credentials we lack) raises
        :class:`TargetUnreachable`."""
        try:
            if isinstance(self.target, HttpTarget):
                # first: the token (and how the server asks for it) serves every revision's battery
                if not await self._authorization():
                    return self.report
            if self.revision in (None, MODERN):
                await self._phase("the 2026-07-28 battery", self._modern)
                if self.revision == MODERN:
                    if self.modern is None and not any(
                        "server/discover was refused with HTTP" in n for n in self.report.notes
                    ):
                        self._note("the target does not speak 2026-07-28 (server/discover does not list it)")
                    return self.report
            if await self._phase("the lifecycle probes", self._lifecycle_probes):
                if self._wants("lifecycle"):
                    await self._phase("version negotiation", self._version_negotiation)
                if isinstance(self.target, HttpTarget) and self._wants("transport"):
                    await self._phase("the transport checks", self._transport_checks)
                await self._phase("the main session", self._main_sessions)
        finally:
            self._gather()
        return self.report

    async def _modern(self) -> None:
        """[2026-07-28] the stateless battery (:mod:`.modern`), when the target speaks that revision."""
        self.modern = await run_modern(
            self.target,
            self.report,
            timeout=self.config.timeout,
            call_all_tools=self.config.call_all_tools,
            say=self.on_progress,
            stderr_tail=self.stderr_tail,
            slow=self.config.tool("slow"),
            cancel_wait=self.config.cancel_wait,
        )

    def _hold_early_batches(self) -> None:
        """A batch before initialize is judged once version negotiation has shown what the server
        speaks (spec_notes/crosscheck.md "Batches before initialize"): the observer, knowing no
        revision yet, judged it by the latest."""
        obs = self.observers[-1]
        early = [f for f in obs.findings if f.party == "server" and _BATCH_REFUSED in f.message]
        obs.findings[:] = [f for f in obs.findings if f not in early]
        self._early_batches += early

    def _judge_early_batches(self) -> None:
        spoken = [v for v in reversed(REVISIONS) if self.versions.get(v) == v]
        if not self._early_batches or (spoken and BATCH_REVISIONS & set(spoken)):
            return  # it speaks a revision that has batches: a batch before negotiation is allowed
        said = (
            f"protocol revision {spoken[0]}" if len(spoken) == 1 else f"the revisions it speaks ({', '.join(spoken)})"
        )
        for f in self._early_batches:
            if spoken:
                f = attrs.evolve(f, message=f"{f.message.split(' in protocol revision ')[0]} in {said}")
            self.report.add(attrs.evolve(f, message=f"before initialize: {f.message}"))

    def _gather(self) -> None:
        self._judge_early_batches()
        if self.modern is not None:
            if MODERN not in self.report.revisions:
                self.report.revisions.insert(0, MODERN)
            if self.revision == MODERN:
                # (the handshake battery did not run: the earlier revisions known are those server/discover
                # lists, and the one an initialize was answered with)
                listed = (self.modern.discover or {}).get("supportedVersions")
                known = {*(listed if isinstance(listed, list) else ()), self.modern.initialized_with}
                self.report.revisions += [v for v in reversed(REVISIONS) if v in known]
            if self.report.revision is None:
                self.report.revision = MODERN
        for obs in self.observers:
            for direction in Direction:
                obs.flush(direction)  # stdio lines that were never followed by a message
            for finding in obs.findings:
                if finding.party == "client":
                    # what our own client did (a race with the server, say): not the target's fault
                    self._note(f"mcp-ref's own client: {finding.requirement}: {finding.message}")
                elif finding.revision is None and self._sections.get(id(obs)) is not None:
                    self.report.add(attrs.evolve(finding, revision=self._sections[id(obs)]))
                else:
                    self.report.add(finding)
            for note in obs.notes:
                self._note(note)

    def _note(self, note: str) -> None:
        if note not in self.report.notes:
            self.report.notes.append(note)

    async def _phase(self, what: str, step: Callable[[], Awaitable[Any]]) -> bool:
        """Run one phase of the battery; False when the server could not be talked to at all."""
        try:
            return await step() is not False
        except TargetUnreachable:
            raise
        except ConnectionClosed as e:
            if self._launch_failed():
                raise TargetUnreachable(self._closed(str(e))) from e
            if not self.initialized:
                self._no_initialize(None, closed=self._closed(str(e)))
                return False
            self._note(f"{what} ended early: {self._closed(str(e))}")
            return True
        except OSError as e:
            raise TargetUnreachable(str(e)) from e
        except NotAnswered as e:
            self._note(f"{what} did not run: {e}")
            return True
        except Exception as e:  # the report is always written (spec_notes/crosscheck.md)
            self._note(f"mcp-ref could not finish {what}: {type(e).__name__}: {e}")
            return True

    def _launch_failed(self) -> bool:
        """Nothing came from the target at all (a stdio command that exited at once, say)."""
        return not any(obs.count[Direction.TO_CLIENT] for obs in self.observers)

    def _no_initialize(self, answer: Any, *, closed: str | None = None) -> bool:
        """Record that initialize got no answer (a finding); True when that is so."""
        if answer is not None:
            self.initialized = True
            return False
        self.timer.missed("initialize", "lifecycle/initialize-answered")
        if closed is not None:
            self.report.check(
                "lifecycle/initialize-answered", "fail", ["basic/lifecycle#3"], "the server left without answering"
            )
            text = "the server closed the connection without answering initialize"
            self.report.add(Finding.of("basic/lifecycle#3", text, closed, party="server"))
            return True
        self.report.check(
            "lifecycle/initialize-answered",
            "fail",
            ["basic/lifecycle#3"],
            "no answer; nothing else can be checked",
        )
        self.report.add(
            Finding.of(
                "basic/lifecycle#3",
                self._no_answer("initialize") + " (the server answers initialize with its capabilities)",
                party="server",
            )
        )
        return True

    async def _lifecycle_probes(self) -> bool:
        """One raw session: a request before initialize, an unknown version, JSON-RPC edge cases.
        False when the server does not answer initialize (nothing else can run)."""
        async with self.raw_session() as raw:
            if self._wants("lifecycle"):
                async with self.check("lifecycle/request-before-initialize", ["basic/index#3"]) as chk:
                    # not answering is allowed: a short wait, and no strike against the server
                    answer = await raw.request("tools/list", deliberate=True, timeout=QUICK, kind=None)
                    self._hold_early_batches()
                    if answer is None:
                        chk.note("the server did not answer a request sent before initialize")
                    elif _error(answer) is None:
                        # lifecycle#1 binds the client that skips initialization; the server
                        # may be lenient (spec_notes/crosscheck.md)
                        chk.note("the server answered a request sent before initialize (lenient, allowed)")
            answer = await raw.initialize(UNKNOWN_VERSION)
            if self._no_initialize(answer):
                return False
            result = answer.get("result") if type(answer) is dict else None
            self.versions[UNKNOWN_VERSION] = result.get("protocolVersion") if type(result) is dict else None
            if _error(answer) is not None or raw.initialize_result is None:
                # a refusal of an unknown version is allowed (lifecycle#error-handling): go on with ours
                self._say("the server refused the unknown version; initializing again with " + LATEST)
                return await self._jsonrpc_in_new_session()
            if self._wants("jsonrpc"):
                await self._jsonrpc_probes(raw)
        return True

    async def _jsonrpc_in_new_session(self) -> bool:
        if not self._wants("jsonrpc"):
            return True
        async with self.raw_session() as raw:
            answer = await raw.initialize(LATEST)
            if self._no_initialize(answer):
                return False
            if raw.initialize_result is None:
                self._note(f"the server refused initialize with {LATEST}: the JSON-RPC probes did not run")
                return True
            await self._jsonrpc_probes(raw)
        return True

    async def _jsonrpc_probes(self, raw: RawSession) -> None:
        async with self.check("jsonrpc/parse-error", ["basic/index#3", "basic/index#10"]) as chk:
            garbage = b'{"jsonrpc": "2.0", "method": "ping", "id": 1'
            seen = await self._probe(raw, garbage, chk)
            if seen is not None and not any(_error(m) is not None for m in seen):
                # JSON-RPC 2.0 answers input it cannot parse with -32700 (its sections 5 and 5.1)
                chk.find(
                    "basic/index#3", "input that is not JSON got no Parse error (-32700) response", garbage.decode()
                )
        # (name, message, it must be answered with an error, over HTTP with an error status)
        for name, message, required, refused in (
            ("jsonrpc/invalid-request-version", {"jsonrpc": "1.0", "id": "mcp-ref-v1", "method": "ping"}, True, True),
            # JSON-RPC itself allows a null id (MCP forbids it to the sender): an error, in any form
            ("jsonrpc/invalid-request-null-id", {"jsonrpc": "2.0", "id": None, "method": "ping"}, True, False),
            # with an id and no method it may be read as a malformed response, which is never answered
            ("jsonrpc/invalid-request-no-method", {"jsonrpc": "2.0", "id": "mcp-ref-no-method"}, False, False),
        ):
            async with self.check(name, ["basic/index#3"]) as chk:
                seen = await self._probe(raw, _dumps(message), chk, required=refused)
                if seen is not None and not any(_error(m) is not None for m in seen):
                    if required:
                        text = "an invalid request got no error response (JSON-RPC answers it, -32600)"
                        chk.find("basic/index#3", text, message)
                    else:
                        chk.note("not answered (allowed: it may be taken for a malformed response)")
        async with self.check("jsonrpc/unknown-method", ["basic/index#3"]) as chk:
            # the observer judges the answer (-32601); here only its absence
            if await raw.request("mcp-ref/no-such-method", {}) is None:
                chk.find("basic/index#3", "a request for an unknown method got no response", silence=True)
        async with self.check("jsonrpc/ids-echoed-verbatim", ["basic/index#7"]) as chk:
            for rid in ("7", 7, "mcp-ref-\u00e9t\u00e9", 2**53 - 1):
                if "ping" in self.timer.unanswered:
                    chk.skip("inconclusive: the server answers no ping")
                    break
                answer = await raw.request("ping", rid=rid)
                if answer is None:
                    last = raw.channel.observer.last_answer
                    if type(last) is dict and str(last.get("id")) == str(rid):
                        # [basic/index#7] answered, but not with the id as it was sent
                        chk.fail("basic/index#7", f"a ping with id {rid!r} was answered with id {last['id']!r}", last)
                    else:
                        chk.fail("basic/utilities/ping#1", f"a ping with id {rid!r} got no answer")
                    break
        async with self.check("jsonrpc/notifications-unanswered", ["basic/index#13"]) as chk:
            await raw.send({"jsonrpc": "2.0", "method": "notifications/mcp-ref-unknown", "params": {}})
            bad = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {}}}
            await raw.send(bad, deliberate=True)
            seen = await self._after(raw, chk)
            if seen is not None:
                # a notification has no id: its answer has none (or null); a response with an id answers
                # a request, ours or one never sent (basic/index#7, the observer's finding: trial30c D7)
                answers = [m for m in seen if _is_response(m) and m.get("id") is None]
                if answers:
                    chk.find("basic/index#13", "a notification was answered", answers[0])
        caps = raw.initialize_result.get("capabilities") if raw.initialize_result else None
        if type(caps) is not dict:
            self.skip(
                "jsonrpc/undeclared-capabilities",
                _UNDECLARED,
                "the server declared no capabilities object",
            )
            return
        async with self.check("jsonrpc/undeclared-capabilities", _UNDECLARED) as chk:
            for method, cap, requirement, params in (
                ("tools/list", "tools", "server/tools#3", None),
                ("resources/list", "resources", "server/resources#1", None),
                ("prompts/list", "prompts", "server/prompts#1", None),
                ("completion/complete", "completions", "server/utilities/completion#1", _COMPLETE),
                ("logging/setLevel", "logging", "server/utilities/logging#1", {"level": "error"}),
                ("tasks/list", "tasks", "basic/utilities/tasks#1", None),
            ):
                if cap in caps:
                    continue
                revision = raw.initialize_result.get("protocolVersion") if raw.initialize_result else None
                if type(revision) is str and not capability_applies(method, revision):
                    continue  # (2024-11-05 has no completions capability: its servers complete without one)
                answer = await raw.request(method, params, deliberate=True)
                if type(answer) is dict and "result" in answer:
                    chk.find(requirement, f"{method} answered although the server did not declare {cap}", answer)

    async def _probe(self, raw: RawSession, data: bytes, chk: _Check, *, required: bool = True) -> list[Any] | None:
        await raw.send(data, deliberate=True)
        http = _http(raw)
        if http is not None and required:
            # [basic/transports#19] over HTTP the answer is an error status; a JSON-RPC
            # error in the body is allowed, not required (basic/transports#20, a MAY)
            status = http.exchanges[-1].status
            if not status:
                chk.find("basic/transports#19", "input the server cannot accept got no answer, not even an HTTP status")
            elif not 400 <= status < 500:
                chk.find("basic/transports#19", f"input the server cannot accept was answered HTTP {status}")
            await raw.round_trip()
            return None
        return await self._after(raw, chk)

    async def _after(self, raw: RawSession, chk: _Check) -> list[Any] | None:
        """What came after a probe, up to the answer to a ping (None: nothing can be said)."""
        known = "ping" in self.timer.unanswered
        seen = await raw.round_trip()
        if seen is not None:
            return seen
        came = any(_error(m) is not None or _is_response(m) for m in raw.unpinged)
        if not known and came:
            # the probe was answered, the ping was not: that is a finding of its own
            self.report.check("ping/answered", "fail", ["basic/utilities/ping#1"], f"after {chk.name}")
            self.report.add(Finding.of("basic/utilities/ping#1", "a ping got no answer", party="server"))
        if came:
            return raw.unpinged
        if known:
            chk.skip("inconclusive: the server answers no ping, and nothing came")
        else:
            chk.fail("basic/utilities/ping#1", "a ping got no answer" + self._stderr())
        return None

    async def _authorization(self) -> bool:
        """(HTTP) Find out whether the server asks for authorization; if it does, judge how it asks
        (basic/authorization), get a token (``auth``'s flow, or the ``Authorization`` header given)
        and put it on every request of the battery. TargetUnreachable when no credentials do, or
        nothing listens; False (and a finding) when the server took the connection and never answered."""
        from .http_probe import initialize_probe

        assert isinstance(self.target, HttpTarget)
        target = self.target
        given = {k: v for k, v in target.headers.items() if k.lower() == "authorization"}
        anonymous = {k: v for k, v in target.headers.items() if k.lower() != "authorization"}
        from ..errors import HTTPTransportError

        try:
            got = await initialize_probe(target.url, anonymous, self.timer.full, target.ssl_context)
        except HTTPTransportError as e:
            if e.status is None and isinstance(e.__context__, trio.TooSlowError) and await self._listens(target):
                # reached but silent is not unreachable: the report says so, as over stdio
                return not self._no_initialize(None)
            raise TargetUnreachable(str(e)) from e
        if got.status != 401:
            if self.auth is not None:
                self.report.notes.append(f"the server asked for no authorization (HTTP {got.status} without a token)")
            return True
        www = got.headers.get("www-authenticate")
        if self._wants("authorization"):
            await self._authorization_checks(got)
        asked = f"HTTP 401{f', WWW-Authenticate: {www}' if www else ''}"
        if self.auth is not None:
            try:
                await self.auth.challenged(target.url, 401, www, None)
                value = await self.auth.authorization(target.url)
            except HTTPTransportError as e:
                raise TargetUnreachable(f"{target.url} asks for authorization ({asked}); the flow failed: {e}") from e
            if value is None:
                raise TargetUnreachable(f"{target.url} asks for authorization ({asked}); the flow gave no token")
            given = {"Authorization": value}
            self.report.notes.append("authorized by the OAuth flow; every request carries its access token")
        elif not given:
            raise TargetUnreachable(
                f"{target.url} asks for authorization ({asked}): give --header 'Authorization: Bearer TOKEN', "
                "or --oauth (--client-credentials ID:SECRET) to run the authorization flow"
            )
        self.target = attrs.evolve(target, headers={**anonymous, **given})
        try:
            again = await initialize_probe(target.url, self.target.headers, self.timer.full, target.ssl_context)
        except HTTPTransportError as e:
            raise TargetUnreachable(str(e)) from e
        if again.status in (401, 403):
            why = again.headers.get("www-authenticate") or ""
            why = f"HTTP {again.status}" + (f", WWW-Authenticate: {why}" if why else "")
            raise TargetUnreachable(f"{target.url} refused the credentials ({why})")
        return True

    async def _listens(self, target: HttpTarget) -> bool:
        """Whether something accepts TCP connections at ``target``'s address (a silent server, not a
        missing one)."""
        from urllib.parse import urlsplit

        parts = urlsplit(target.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with trio.move_on_after(min(self.timer.full, QUICK)):
            try:
                stream = await trio.open_tcp_stream(parts.hostname or "", port)
            except OSError:
                return False
            await stream.aclose()
            return True
        return False

    async def _authorization_checks(self, refused: Any) -> None:
        """How a protected server asks for a token (basic/authorization#authorization-server-discovery)."""
        from ..basic.authorization.challenge import bearer_challenge
        from ..basic.authorization.discovery import protected_resource_metadata_urls
        from ..basic.authorization.metadata import InvalidMetadata, ProtectedResourceMetadata
        from ..basic.transports.fetch_rules import policy_for_server
        from ..basic.transports.http_fetch import http_exchange
        from ..errors import HTTPTransportError
        from .http_probe import initialize_probe

        assert isinstance(self.target, HttpTarget)
        url = self.target.url
        www = refused.headers.get("www-authenticate")
        challenge = bearer_challenge(www)
        async with self.check("authorization/discovery", ["basic/authorization#14", "basic/authorization#16"]) as chk:
            if challenge is None:
                chk.note(f"the 401 has no Bearer challenge (WWW-Authenticate: {www!r})")
            elif challenge.scope is None:
                text = "the 401's Bearer challenge has no scope parameter"
                chk.find("basic/authorization#16", text, f"WWW-Authenticate: {www}")
            urls = [challenge.resource_metadata] if challenge and challenge.resource_metadata else []
            urls += protected_resource_metadata_urls(url) if not urls else []
            problems = []
            # the URL is the server's to name: fetched only where an OAuth client would fetch it
            # (never this machine or its network for a remote server: request forgery, issue 31)
            rules = await policy_for_server(url, timeout=self.timer.full)
            for where in urls:
                try:
                    trust = self.target.ssl_context
                    answer = await http_exchange("GET", where, timeout=self.timer.full, ssl_context=trust, policy=rules)
                    if answer.status != 200:
                        problems.append(f"{where}: HTTP {answer.status}")
                        continue
                    metadata = ProtectedResourceMetadata.from_json(answer.json())
                except (HTTPTransportError, InvalidMetadata) as e:
                    problems.append(f"{where}: {e}")
                    continue
                servers = ", ".join(metadata.authorization_servers or ())
                chk.note(f"protected resource metadata at {where} (authorization servers: {servers})")
                break
            else:
                how = (
                    "its WWW-Authenticate resource_metadata"
                    if challenge and challenge.resource_metadata
                    else ("neither a resource_metadata parameter in WWW-Authenticate nor the well-known URLs")
                )
                chk.find(
                    "basic/authorization#14",
                    f"no protected resource metadata is found by {how}",
                    f"WWW-Authenticate: {www}",
                    *problems,
                )
        async with self.check("authorization/invalid-token-401", ["basic/authorization#60"]) as chk:
            bogus = {**self.target.headers, "Authorization": "Bearer mcp-ref-check-not-a-token"}
            try:
                got = await initialize_probe(url, bogus, self.timer.full, self.target.ssl_context)
            except HTTPTransportError as e:
                chk.skip(f"inconclusive: {e}")
                return
            if got.status != 401:
                text = f"a request with an invalid token was answered HTTP {got.status}, not 401"
                chk.find("basic/authorization#60", text)

    async def _transport_checks(self) -> None:
        """What Streamable HTTP asks of the server (basic/transports#streamable-http), on a raw session."""
        from .http_probe import Exchange, NoAnswer, stream_events
        from .http_probe import exchange as plain_exchange
        from .http_rules import HttpJudge, posted_kind

        assert isinstance(self.target, HttpTarget)
        url = self.target.url
        trust = self.target.ssl_context

        async def bounded(chk: _Check, rule: str, method: str, call: Callable[[float], Awaitable[_T]]) -> _T | None:
            """One HTTP request of a check, bounded like any answer: ``call(timeout)``'s result, or None (and
            ``rule`` is the finding) when not even the head of an answer came in time."""
            kind = f"HTTP {method}"
            self.timer.gate(kind)
            wait = self.timer.current
            try:
                got = await call(wait)
            except NoAnswer:
                self.timer.missed(kind)
                chk.find(rule, f"{method} {url} got no answer within {wait:g}s")
                return None
            self.timer.answered()
            return got

        async def exchange(chk: _Check, rule: str, method: str, headers: Any, body: bytes = b"") -> Exchange | None:
            """A plain request (:func:`bounded`): its answer."""
            got = await bounded(
                chk,
                rule,
                method,
                lambda wait: plain_exchange(
                    url, method, headers, body, read_body=method != "GET", ssl_context=trust, timeout=wait
                ),
            )
            return None if got is None else got[0]

        async def events(
            chk: _Check, rule: str, method: str, headers: Any, body: bytes = b""
        ) -> tuple[Exchange, list[tuple[str | None, str | None]]] | None:
            """A request (:func:`bounded`): its answer, and the SSE events it carried within ``GET_WATCH`` seconds."""
            return await bounded(
                chk,
                rule,
                method,
                lambda wait: stream_events(
                    url, method, headers, body, within=GET_WATCH, ssl_context=trust, timeout=wait
                ),
            )

        async with self.raw_session() as raw:
            if await raw.initialize(LATEST) is None or raw.initialize_result is None:
                self.skip("transport/http", ["basic/transports#21"], "initialize failed")
                return
            http = _http(raw)
            assert http is not None
            await raw.round_trip()
            initialized = http.exchanges[1]
            async with self.check("transport/request-answered-with-json-or-sse", ["basic/transports#21"]) as chk:
                # every request of this session so far: initialize and the round trip's ping
                for got in http.exchanges:
                    is_request, posted, _ = posted_kind(got.posted)
                    if is_request and 200 <= got.status < 300:
                        for finding in HttpJudge().head(
                            "POST", got.status, got.content_type, {}, is_request=True, posted=posted
                        ):
                            chk.find(finding.requirement, finding.message, *finding.evidence)
            async with self.check("transport/notification-answered-202", ["basic/transports#18"]) as chk:
                if not initialized.status:
                    chk.find("basic/transports#18", "a POSTed notification got no answer (not even 202)")
                elif initialized.status != 202:
                    text = f"a POSTed notification was answered HTTP {initialized.status}, not 202"
                    chk.find("basic/transports#18", text)
            async with self.check("transport/get-sse-or-405", ["basic/transports#39", "basic/transports#42"]) as chk:
                # [basic/transports#39] an SSE stream or 405: an answer that never comes is neither
                streamed = await events(chk, "basic/transports#39", "GET", http.headers(accept="text/event-stream"))
                if streamed is not None:
                    got, seen = streamed
                    if got.status < 400 and not (got.status == 200 and got.content_type == "text/event-stream"):
                        chk.find("basic/transports#39", f"a GET was answered HTTP {got.status} {got.content_type!r}")
                    chk.note(f"HTTP {got.status}")
                    for _, data in seen:
                        if _is_response(_json_or_none(data)):
                            # [basic/transports#42] a GET without Last-Event-ID resumes nothing: no response on it
                            text = "the server sent a JSON-RPC response on the GET stream, which resumes no request's"
                            chk.find("basic/transports#42", text, data)
                            break
            await self._resumption(chk_events=events, headers=http.headers)
            ping = b'{"jsonrpc":"2.0","id":"mcp-ref-http","method":"ping"}'
            async with self.check("transport/unsupported-protocol-version", ["basic/transports#68"]) as chk:
                headers = {**http.headers(), "mcp-protocol-version": UNKNOWN_VERSION}
                got = await exchange(chk, "basic/transports#68", "POST", headers, ping)
                if got is not None and got.status != 400:
                    text = f"MCP-Protocol-Version {UNKNOWN_VERSION} was answered HTTP {got.status}, not 400"
                    chk.find("basic/transports#68", text)
            if _loopback(url):
                async with self.check("transport/foreign-origin", ["basic/transports#10"]) as chk:
                    headers = {**http.headers(), "origin": "http://mcp-ref-check.invalid"}
                    got = await exchange(chk, "basic/transports#10", "POST", headers, ping)
                    if got is not None and got.status != 403:
                        text = f"a request from Origin http://mcp-ref-check.invalid was answered HTTP {got.status}"
                        chk.find("basic/transports#10", text + ", not 403 (the server is on a loopback address)")
            async with self.check("transport/version-header-omitted", ["basic/transports#67"]) as chk:
                headers = {k: v for k, v in http.headers().items() if k != "mcp-protocol-version"}
                got = await exchange(chk, "basic/index#3", "POST", headers, ping)
                if got is not None and got.status == 400:
                    # [basic/transports#67] without the header the server takes the session's version (or 2025-03-26)
                    chk.find("basic/transports#67", "a request without MCP-Protocol-Version was refused with 400")
            await self._tool_call_streams(raw)
            self._streams_check()
            if http.session_id is None:
                self.skip(
                    "transport/session-id",
                    ["basic/transports#60", "basic/transports#61"],
                    "the server assigns no session id",
                )
                return
            async with self.check("transport/missing-session-id", ["basic/transports#60"]) as chk:
                headers = {k: v for k, v in http.headers().items() if k != "mcp-session-id"}
                got = await exchange(chk, "basic/transports#60", "POST", headers, ping)
                if got is not None and got.status != 400:
                    text = f"a request without the session id was answered HTTP {got.status}, not 400"
                    chk.find("basic/transports#60", text)
            async with self.check("transport/ended-session-404", ["basic/transports#61"]) as chk:
                try:
                    deleted, _ = await plain_exchange(url, "DELETE", http.headers(), ssl_context=trust, timeout=QUICK)
                except NoAnswer:
                    deleted = None
                    chk.skip(f"inconclusive: DELETE got no answer within {QUICK:g}s")
                if deleted is not None and deleted.status == 405:
                    chk.note("the server does not let clients end sessions (405, allowed)")
                elif deleted is not None:
                    got = await exchange(chk, "basic/transports#61", "POST", http.headers(), ping)
                    if got is not None and got.status != 404:
                        text = f"after DELETE answered {deleted.status}, the session id was answered {got.status}"
                        chk.find("basic/transports#61", text + ", not 404")
                http.session_id = None  # ended: no DELETE again

    async def _resumption(self, *, chk_events: Any, headers: Callable[..., dict[str, str]]) -> None:
        """[basic/transports#54] a GET with Last-Event-ID resumes that stream only (trial30c D5): two pings
        each answered on an SSE stream with event ids, then the first resumed after its first event."""
        name, requirements = "transport/resume-this-stream-only", ["basic/transports#54"]
        async with self.check(name, requirements) as chk:
            streams: list[list[tuple[str | None, str | None]]] = []
            for n in (1, 2):
                body = _dumps({"jsonrpc": "2.0", "id": f"mcp-ref-resume-{n}", "method": "ping"})
                got = await chk_events(chk, "basic/utilities/ping#1", "POST", headers(), body)
                if got is None:
                    return
                streams.append(got[1])
            first = next((i for i, _ in streams[0] if i), None)
            if first is None or not any(i for i, _ in streams[1]):
                chk.note("the pings were not answered on SSE streams with event ids: nothing to resume")
                return
            resume = {**headers(accept="text/event-stream"), "last-event-id": first}
            got = await chk_events(chk, "basic/transports#39", "GET", resume)
            if got is None:
                return
            answer, replayed = got
            chk.note(f"a GET with Last-Event-ID {first!r} was answered HTTP {answer.status}, {len(replayed)} event(s)")
            for _, data in replayed:
                message = _json_or_none(data)
                if _is_response(message) and message.get("id") != "mcp-ref-resume-1":
                    # the first stream carried one response, ping 1's: any other came from another stream
                    text = (
                        f"a GET resuming the stream of ping 1 (Last-Event-ID {first!r}) replayed a message of another"
                    )
                    chk.find("basic/transports#54", text, data)
                    break

    async def _tool_call_streams(self, raw: RawSession) -> None:
        """Two tool calls on the raw session, so the SSE streams a server keeps for tools (their
        priming events, event ids across streams, their ends) go through the HTTP judge too."""
        specs = [s for s in (self.config.tool("progress"), self.config.tool("slow")) if s is not None]
        if not specs:
            try:
                listed = await raw.request("tools/list", {}, timeout=QUICK)
            except NotAnswered:
                return  # (the server stopped answering: no tool is called)
            result = listed.get("result") if type(listed) is dict else None
            tools = result.get("tools") if type(result) is dict else None
            for tool in tools if isinstance(tools, list) else []:
                annotations = tool.get("annotations") if type(tool) is dict else None
                if type(annotations) is dict and annotations.get("readOnlyHint") is True:
                    args = arguments_for(tool.get("inputSchema"))
                    if args is not None and isinstance(tool.get("name"), str):
                        specs.append(ToolSpec(tool["name"], args))
                        break
        if not specs:
            return  # (no tool to call: the streams seen so far are all there is to judge)
        async with self.check("transport/tool-call-streams", ["basic/transports#23", "basic/transports#50"]):
            for i, spec in enumerate((specs * 2)[:2]):
                params = {"name": spec.name, "arguments": spec.arguments, "_meta": {"progressToken": f"mcp-ref-s{i}"}}
                await raw.request("tools/call", params, timeout=self.timer.current)

    def _streams_check(self) -> None:
        """The SSE streams and session ids the server gave so far, as the HTTP judge saw them
        (its findings are the observers'; this check gives them a status)."""
        seen = [
            f.requirement
            for obs in self.observers
            for f in obs.findings
            if f.requirement in _STREAM_RULES and f.party == "server"
        ]
        detail = ("broke " + ", ".join(sorted(set(seen)))) if seen else ""
        self.report.check("transport/sse-streams-and-session-ids", "fail" if seen else "pass", _STREAM_RULES, detail)

    async def _version_negotiation(self) -> None:
        async with self.check(
            "lifecycle/version-negotiation", ["basic/lifecycle#9", "basic/lifecycle#10", "basic/lifecycle#11"]
        ) as chk:
            # a few sessions at a time (bounded time, trial30c D10: each start of a stdio server costs a second)
            limit = trio.CapacityLimiter(NEGOTIATING)

            failed: list[Exception] = []

            async def ask(version: str, cancel_scope: trio.CancelScope) -> None:
                try:
                    async with limit, self.raw_session() as raw:
                        answer = await raw.initialize(version)
                except Exception as e:  # re-raised below as the sequential loop did: the first ends it
                    failed.append(e)
                    cancel_scope.cancel()
                    return
                result = answer.get("result") if type(answer) is dict else None
                spoken = result.get("protocolVersion") if type(result) is dict else None
                self.versions[version] = spoken if isinstance(spoken, str) else None

            for version in reversed(REVISIONS):
                self.versions[version] = None  # (the answers are listed in this order)
            async with trio.open_nursery() as nursery:
                for version in reversed(REVISIONS):
                    nursery.start_soon(ask, version, nursery.cancel_scope)
            if failed:
                raise failed[0]
            supported = {v for v in REVISIONS if self.versions.get(v) == v}
            chk.note("answers: " + ", ".join(f"{k} -> {v}" for k, v in self.versions.items()))
            for asked, spoken in self.versions.items():
                if spoken is None or spoken == asked:
                    continue
                if spoken in REVISIONS and spoken not in supported:
                    # it answered with a version it does not keep when asked for it
                    chk.find(
                        "basic/lifecycle#9",
                        f"asked for {asked} the server answered {spoken}, but asked for {spoken} it answered"
                        f" {self.versions.get(spoken)}",
                    )
            unknown = self.versions.get(UNKNOWN_VERSION)
            if unknown == UNKNOWN_VERSION:
                chk.find("basic/lifecycle#10", f"the unknown version {UNKNOWN_VERSION} was answered with itself")
            elif unknown is not None and supported:
                if unknown in REVISIONS and unknown not in supported:
                    chk.find(
                        "basic/lifecycle#10",
                        f"an unknown version was answered with {unknown}, which it does not support",
                    )
                elif unknown in REVISIONS and unknown != max(supported):
                    chk.find(
                        "basic/lifecycle#11",
                        f"an unknown version was answered with {unknown}, not the latest it supports"
                        f" ({max(supported)})",
                    )

    # -- the main session ----------------------------------------------------------------------------

    async def _main_sessions(self) -> None:
        """The main session in every revision the server speaks (``revision``: that one only), the
        latest first; each is a section of the report."""
        spoken: list[str] = [v for v in reversed(REVISIONS) if self.versions.get(v) == v]
        self.report.revisions = list(spoken)
        order: list[str]
        if self.revision is not None:
            order = [self.revision]
        else:
            order = spoken[:1] or [LATEST]
            if self.config.all_revisions:
                order += spoken[1:]
        for i, version in enumerate(order):
            # (a GET left hanging is the transport checks' finding: the POSTs of a session may still be answered)
            if i and self.timer.requests_missed:
                self._note(f"revision {version} not checked: the server left requests unanswered")
                continue
            self.report.section = None if i == 0 else version
            try:
                await self._main_session(version, first=i == 0)
            finally:
                self.report.section = None

    async def _main_session(self, version: str | None = None, *, first: bool = True) -> None:
        changed: list[str] = []
        self._early_progress = None

        async def on_list_changed(kind: str) -> None:
            changed.append(kind)

        try:
            async with self.client_session(on_list_changed=on_list_changed, protocol_version=version) as client:
                if first:
                    self.report.revision = client.protocol_version
                if version is not None and client.protocol_version != version:
                    self._note(f"asked for {version}, the server answered {client.protocol_version}")
                    if not first:
                        return
                self.capabilities = self._caps(client)
                steps: list[tuple[str, Callable[[ClientSession], Awaitable[None]]]] = [
                    ("ping", self._ping),
                    ("pagination", self._pagination),
                    ("tools", self._tools),
                    ("resources", self._resources),
                    ("prompts", self._prompts),
                    ("completion", self._completion),
                    ("logging", self._logging),
                    ("cancellation", self._cancellation),
                    ("progress", self._progress),
                    ("tasks", self._tasks),
                ]
                for chapter, step in steps:
                    if self._wants(chapter):
                        await self._step(chapter, step, client)
                if self._wants("tools"):
                    await self._step("tools", lambda c: self._list_changed(c, changed), client)
        except ConnectionClosed as e:
            self._note(f"the main session ended early: {self._closed(str(e))}")
        except UnsupportedProtocolVersion as e:
            chose = (
                f"refused initialize (it supports {', '.join(e.server_versions)})"
                if e.server_versions
                else f"chose protocol version {e.offered!r}, which mcp_ref does not speak"
            )
            self._note(f"the server {chose}: the main session (tools, resources, prompts ...) did not run")
        except (RequestTimeout, MCPError, ProtocolError, HTTPTransportError) as e:
            # what the other sessions found still stands
            what = "could not initialize" if self.report.revision is None else "failed"
            self._note(f"the main session {what}: {_words(e)}")

    async def _step(
        self, chapter: str, step: Callable[[ClientSession], Awaitable[None]], client: ClientSession
    ) -> None:
        """One chapter of the main session: what it raises outside its checks ends the chapter, not the run."""
        try:
            await step(client)
        except ConnectionClosed:
            raise
        except NotAnswered as e:
            self._note(f"{chapter}: {e}")
        except RequestTimeout as e:
            self.timer.missed(e.method, chapter)
            self.report.add(Finding.of("basic/index#3", self._unanswered(e.method, e.timeout), party="server"))
        except (MCPError, ProtocolError, HTTPTransportError) as e:
            self._note(f"{chapter}: stopped early: {_words(e)}")

    def _caps(self, client: ClientSession) -> dict[str, Any]:
        from ..schema._converter import converter_for

        caps: dict[str, Any] = converter_for(client.protocol_version).unstructure(client.server_capabilities)
        return caps

    def _has(self, *path: str) -> bool:
        return has_capability(self.capabilities, path)

    async def _ping(self, client: ClientSession) -> None:
        async with self.check("ping/answered-promptly", ["basic/utilities/ping#1"]) as chk:
            start = trio.current_time()
            pending = await client.start_request("ping", None)
            await pending.result()
            answer = self._answer(pending.id)
            result = answer.get("result") if type(answer) is dict else None
            if type(result) is dict and {k for k in result if k != "_meta"}:
                chk.find("basic/utilities/ping#1", "ping was answered with a result that is not empty", answer)
            chk.note(f"{(trio.current_time() - start) * 1000:.0f} ms")

    def _answer(self, rid: Any) -> Any:
        return self.observers[-1].answer_to(Direction.TO_CLIENT, rid)

    async def _pagination(self, client: ClientSession) -> None:
        for method, cap in (
            ("tools/list", "tools"),
            ("resources/list", "resources"),
            ("resources/templates/list", "resources"),
            ("prompts/list", "prompts"),
        ):
            if not self._has(cap):
                continue
            async with self.check(f"pagination/{method}", ["server/utilities/pagination#2"]) as chk:
                cursors: set[str] = set()
                cursor: str | None = None
                pages = 0
                while pages < MAX_PAGES:
                    params = PaginatedRequestParams(cursor=cursor) if cursor is not None else None
                    result = await client.request(method, params)
                    pages += 1
                    cursor = result.next_cursor
                    if cursor is None:
                        break
                    if cursor in cursors:
                        chk.find("server/utilities/pagination#2", f"{method} gave the cursor {cursor!r} twice")
                        break
                    cursors.add(cursor)
                chk.note(f"{pages} page(s)")
            async with self.check(f"pagination/{method}-invalid-cursor", ["server/utilities/pagination#5"]) as chk:
                pending = await client.start_request(method, PaginatedRequestParams(cursor="mcp-ref-invalid-cursor"))
                try:
                    await pending.result()
                    chk.find(
                        "server/utilities/pagination#5",
                        f"{method} with an invalid cursor was answered with a result",
                        self._answer(pending.id),
                    )
                except MCPError as e:
                    if e.code != -32602:
                        chk.find(
                            "server/utilities/pagination#5",
                            f"{method} with an invalid cursor got error {e.code}, not -32602",
                            self._answer(pending.id),
                        )

    async def _call(self, client: ClientSession, spec: ToolSpec, **options: Any) -> Any:
        params = CallToolRequestParams(name=spec.name, arguments=spec.arguments or None)
        return await client.request("tools/call", params, **options)

    async def _tools(self, client: ClientSession) -> None:
        if not self._has("tools"):
            self.skip("tools/listed", ["server/tools#3"], "the server declares no tools")
            return
        tools: list[Any] = []
        async with self.check(
            "tools/listed", ["server/tools#5", "server/tools#7", "server/tools#9", "server/tools#11"]
        ) as chk:
            tools = await client.list_all_tools()
            chk.note(f"{len(tools)} tool(s)")
        async with self.check("tools/unknown-tool", ["server/tools#20"]) as chk:
            pending = await client.start_request("tools/call", CallToolRequestParams(name="mcp-ref-no-such-tool"))
            try:
                result = await pending.result()
                if result.is_error:
                    chk.note("reported as a tool execution error (isError), where the spec lists a protocol error")
                else:
                    chk.find("server/tools#20", "an unknown tool was answered as a success", self._answer(pending.id))
            except MCPError as e:
                chk.note(f"error {e.code}")
                # [basic/index#3] an unknown tool is an invalid parameter of a method that exists:
                # JSON-RPC's -32602, as every revision's tools chapter shows (spec_notes/server/tools.md)
                if e.code != ErrorCode.INVALID_PARAMS:
                    what = "Method not found (-32601), though tools/call exists" if e.code == -32601 else e.code
                    text = f"an unknown tool got error {what}, not Invalid params (-32602)"
                    chk.find("basic/index#3", text, self._answer(pending.id))
        for spec in self.config.calls:
            async with self.check(f"tools/call {spec.name}", ["server/tools#15", "server/tools#16"]) as chk:
                params = CallToolRequestParams(name=spec.name, arguments=spec.arguments or None)
                result = await self._tool_call(client, chk, params)
                if result is not None and result.is_error:
                    chk.note("the tool reported an error (isError)")
        self._tools_seen = tools
        await self._exercise_tools(client, tools)
        for tool in tools:
            if tool.execution is not None and tool.execution.task_support == "required":
                async with self.check(
                    f"tasks/required-tool-without-task {tool.name}", ["basic/utilities/tasks#9"]
                ) as chk:
                    pending = await client.start_request("tools/call", CallToolRequestParams(name=tool.name))
                    try:
                        result = await pending.result()
                        what = "answered with a tool error (isError)" if result.is_error else "ran"
                        chk.find(
                            "basic/utilities/tasks#9",
                            f"task-only tool {tool.name!r} called without a task {what}, not refused with -32601",
                            self._answer(pending.id),
                        )
                    except MCPError as e:
                        if e.code != -32601:
                            chk.find(
                                "basic/utilities/tasks#9",
                                f"task-only tool {tool.name!r} called without a task got error {e.code}, not -32601",
                                self._answer(pending.id),
                            )
                break

    async def _tool_call(self, client: ClientSession, chk: _Check, params: CallToolRequestParams) -> Any:
        """Call a listed tool with arguments its schema takes; an error that comes from the tool
        itself should be a result with isError, not a protocol error (schema#37). None: an error came."""
        pending = await client.start_request("tools/call", params)
        try:
            return await pending.result()
        except MCPError as e:
            if e.code in _NOT_THE_TOOLS:
                chk.note(f"error {e.code} ({e.message})")
            else:
                text = f"tool {params.name!r} failed with the protocol error {e.code}, not a result with isError"
                chk.find("schema#37", text, self._answer(pending.id))
            return None

    async def _forbidden_task(self, client: ClientSession) -> None:
        """[basic/utilities/tasks#6] a tool that does not support tasks, called as one, gets -32601."""
        if not self._has("tasks", "requests", "tools", "call"):
            return
        tool = next(
            (
                t
                for t in sorted(getattr(self, "_tools_seen", []), key=lambda t: not safe_to_call(t))
                if (t.execution is None or t.execution.task_support in (None, "forbidden"))
                and (self.config.call_all_tools or safe_to_call(t))
                and arguments_for(t.input_schema) is not None
            ),
            None,
        )
        if tool is None:
            return
        async with self.check("tasks/forbidden-tool-as-task", ["basic/utilities/tasks#6"]) as chk:
            raw = {
                "name": tool.name,
                "arguments": arguments_for(tool.input_schema),
                "task": {"ttl": 60_000},
            }
            answer = await self._raw_request(client, "tools/call", raw)
            result = answer.get("result") if type(answer) is dict else None
            if type(result) is dict and "task" in result:
                chk.find(
                    "basic/utilities/tasks#6",
                    f"{tool.name}, which does not support tasks, was run as a task (not -32601)",
                    answer,
                )

    def _task_tool(self) -> ToolSpec | None:
        """A tool the tasks checks may run as a task when none was named: one that supports task
        execution and may be called (read-only, or --call-all-tools), with arguments we can make."""
        tools = getattr(self, "_tools_seen", [])
        # the read-only ones first: the server says they do nothing but look
        for tool in sorted(tools, key=lambda t: not safe_to_call(t)):
            if tool.execution is None or tool.execution.task_support not in ("optional", "required"):
                continue
            if not (self.config.call_all_tools or safe_to_call(tool)):
                continue
            arguments = arguments_for(tool.input_schema)
            if arguments is not None:
                return ToolSpec(tool.name, arguments)
        return None

    async def _exercise_tools(self, client: ClientSession, tools: list[Any]) -> None:
        """Call the tools that are safe to call (all of them with ``call_all_tools``) with arguments
        made from their input schemas, and say what was called and why the rest was not."""
        named = {s.name for s in self.config.calls} | {s.name for s in self.config.tools.values()}
        called: list[str] = []
        left: list[str] = []
        for tool in tools:
            name = tool.name
            if name in named:
                called.append(name)  # called as configured
                continue
            if tool.execution is not None and tool.execution.task_support == "required":
                left.append(f"{name} (runs as a task only)")
                continue
            if not self.config.call_all_tools and not safe_to_call(tool):
                left.append(f"{name} ({why_not_safe(tool)})")
                continue
            if len(called) >= MAX_EXERCISED:
                left.append(f"{name} (more than {MAX_EXERCISED} tools)")
                continue
            arguments = arguments_for(tool.input_schema)
            if arguments is None:
                left.append(f"{name} (its input schema asks for values mcp-ref cannot make)")
                continue
            async with self.check(f"tools/call {name}", ["server/tools#15", "server/tools#16"]) as chk:
                try:
                    params = CallToolRequestParams(name=name, arguments=arguments)
                    result = await self._tool_call(client, chk, params)
                except RequestTimeout as e:
                    # made-up arguments may ask a slow tool for a long run: not held against the server
                    chk.skip(f"inconclusive: no answer within {e.timeout:g}s (a slow tool? --timeout, --slow-tool)")
                    continue
                if result is not None:
                    chk.note("answered with a tool error (isError)" if result.is_error else "answered")
            called.append(name)
            if self.config.call_all_tools:
                await self._invalid_arguments(client, tool)
        why = "" if self.config.call_all_tools else "; --call-all-tools calls the tools not marked readOnlyHint"
        detail = f"{len(called)} of {len(tools)} tool(s) called"
        if left:
            detail += "; not called: " + ", ".join(left) + why
        self.report.check("tools/exercised", "pass", ["server/tools#20"], detail)

    async def _invalid_arguments(self, client: ClientSession, tool: Any) -> None:
        """[server/tools#20] arguments the tool's schema refuses get an error (a protocol error, or isError)."""
        bad = invalid_arguments_for(tool.input_schema)
        if bad is None:
            return
        arguments, how = bad
        async with self.check(f"tools/invalid-arguments {tool.name}", ["server/tools#20"]) as chk:
            with self._channel.deliberately():
                params = CallToolRequestParams(name=tool.name, arguments=arguments)
                pending = await client.start_request("tools/call", params)
            try:
                result = await pending.result()
            except MCPError as e:
                chk.note(f"error {e.code}")
                return
            if result.is_error:
                chk.note("a tool error (isError)")
            else:
                chk.find(
                    "server/tools#20",
                    f"tool {tool.name!r} called {how} was answered as a success (inputs are validated)",
                    self._answer(pending.id),
                )

    async def _list_changed(self, client: ClientSession, changed: list[str]) -> None:
        spec = self.config.tool("list_changed")
        name = "tools/list-changed-notification"
        if spec is None:
            self.skip(name, ["server/tools#4"], _needs("list_changed"))
            return
        if not self._has("tools", "listChanged"):
            self.skip(name, ["server/tools#4"], "the server does not declare tools.listChanged")
            return
        async with self.check(name, ["server/tools#4"]) as chk:
            before = await client.list_all_tools()
            await self._call(client, spec)
            with trio.move_on_after(self.timer.current):
                while "tools" not in changed:
                    await trio.sleep(0.05)
            after = await client.list_all_tools()
            if "tools" not in changed and {t.name for t in before} != {t.name for t in after}:
                chk.find(
                    "server/tools#4", f"tool {spec.name!r} changed the tool list without a list_changed notification"
                )
            elif "tools" not in changed:
                chk.note("no notification, and the list did not change")

    async def _resources(self, client: ClientSession) -> None:
        if not self._has("resources"):
            self.skip("resources/read", ["server/resources#1"], "the server declares no resources")
            return
        resources: list[Any] = []
        async with self.check("resources/read", ["server/resources#10"]) as chk:
            resources = await client.list_all_resources()
            read, failed = 0, []
            for resource in resources[:MAX_EXERCISED]:
                try:
                    await client.read_resource(resource.uri)
                    read += 1
                except MCPError as e:
                    failed.append(f"{resource.uri} (error {e.code})")
            chk.note(f"{read} of {len(resources)} read")
            if failed:
                chk.note("not read: " + ", ".join(failed[:5]) + (" ..." if len(failed) > 5 else ""))
            if len(resources) > MAX_EXERCISED:
                chk.note(f"the first {MAX_EXERCISED} tried")
        async with self.check("resources/unknown-uri", ["server/resources#7"]) as chk:
            from ..schema.resources import ReadResourceRequestParams

            pending = await client.start_request(
                "resources/read", ReadResourceRequestParams(uri="mcp-ref-check://no-such-resource/0")
            )
            try:
                await pending.result()
                chk.note("the server answered a read of an unknown URI with contents")
            except MCPError as e:
                if e.code != -32002:
                    chk.find(
                        "server/resources#7",
                        f"reading an unknown resource got error {e.code}, not -32002",
                        self._answer(pending.id),
                    )
        async with self.check("resources/templates", ["basic/lifecycle#14", "server/resources#10"]) as chk:
            templates = await client.list_all_resource_templates()
            answered, refused = 0, []
            for template in templates[:MAX_EXERCISED]:
                uri = expand_template(template.uri_template)
                try:
                    await client.read_resource(uri)
                    answered += 1
                except MCPError as e:
                    refused.append(f"{uri} (error {e.code})")
            chk.note(f"{len(templates)} template(s), {answered} read with made-up values")
            if refused:
                chk.note("refused (allowed: the values are made up): " + ", ".join(refused[:5]))
        if self._has("resources", "subscribe") and resources:
            async with self.check("resources/subscribe", ["basic/lifecycle#14"]) as chk:
                await client.subscribe_resource(resources[0].uri)
                await client.unsubscribe_resource(resources[0].uri)

    async def _prompts(self, client: ClientSession) -> None:
        if not self._has("prompts"):
            self.skip("prompts/get", ["server/prompts#1"], "the server declares no prompts")
            return
        prompts: list[Any] = []
        async with self.check("prompts/get", ["server/prompts#3", "server/prompts#4", "server/resources#10"]) as chk:
            prompts = await client.list_all_prompts()
            got, failed = 0, []
            for prompt in prompts[:MAX_EXERCISED]:
                arguments = {a.name: WORD for a in prompt.arguments or [] if a.required}
                try:
                    await client.get_prompt(prompt.name, arguments or None)
                    got += 1
                except MCPError as e:
                    failed.append(f"{prompt.name} (error {e.code})")
            chk.note(f"{got} of {len(prompts)} prompt(s) got (required arguments made up)")
            if failed:
                chk.note("refused: " + ", ".join(failed[:5]))
        async with self.check("prompts/unknown-prompt", ["server/prompts#6"]) as chk:
            from ..schema.prompts import GetPromptRequestParams

            pending = await client.start_request("prompts/get", GetPromptRequestParams(name="mcp-ref-no-such-prompt"))
            try:
                await pending.result()
                chk.find("server/prompts#6", "an unknown prompt was answered with a result", self._answer(pending.id))
            except MCPError as e:
                if e.code != -32602:
                    chk.find(
                        "server/prompts#6",
                        f"an unknown prompt got error {e.code}, not -32602",
                        self._answer(pending.id),
                    )
        needy = [p for p in prompts if any(a.required for a in p.arguments or [])]
        if needy:
            async with self.check("prompts/missing-argument", ["server/prompts#6"]) as chk:
                from ..schema.prompts import GetPromptRequestParams

                pending = await client.start_request("prompts/get", GetPromptRequestParams(name=needy[0].name))
                try:
                    await pending.result()
                    chk.find(
                        "server/prompts#6",
                        f"prompt {needy[0].name!r} was given without its required arguments",
                        self._answer(pending.id),
                    )
                except MCPError as e:
                    if e.code != -32602:
                        chk.find(
                            "server/prompts#6",
                            f"a missing required argument got error {e.code}, not -32602",
                            self._answer(pending.id),
                        )
        self._prompts_seen = prompts

    async def _raw_request(self, client: ClientSession, method: str, params: Any) -> Any:
        """A request our engine would refuse to send (a probe), sent raw; the answer, or None."""
        self._raw_ids = getattr(self, "_raw_ids", 0) + 1
        rid = f"mcp-ref-probe-{self._raw_ids}"
        data = _dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        self._channel.expect_deliberate(data)
        session = client.session
        assert isinstance(session, Session)  # (the battery opens 2025 sessions: era="legacy")
        await session.send_raw(data)
        with trio.move_on_after(self.timer.current):
            while (answer := self._answer(rid)) is None:
                await trio.sleep(0.02)
            self.timer.answered()
            return answer
        self.timer.missed(method)
        return None

    async def _completion(self, client: ClientSession) -> None:
        if not self._has("completions") and not capability_applies("completion/complete", client.protocol_version):
            # 2024-11-05 has no completions capability: its servers complete without declaring one
            self.report.check(
                "completion/complete",
                "skip",
                ["server/utilities/completion#1"],
                f"{client.protocol_version} has no completions capability: whether the server completes is unknown",
            )
            return
        if not self._has("completions"):
            prompts = getattr(self, "_prompts_seen", None) or []
            with_args = [p for p in prompts if p.arguments]
            if not with_args:
                self.report.check(
                    "completion/complete",
                    "skip",
                    ["server/utilities/completion#1"],
                    "the server declares no completions",
                )
                return
            async with self.check("completion/undeclared", ["server/utilities/completion#1"]) as chk:
                # a server that completes must declare completions: ask, for a prompt it has
                prompt = with_args[0]
                assert prompt.arguments is not None
                ref = {"type": "ref/prompt", "name": prompt.name}
                asked = {"ref": ref, "argument": {"name": prompt.arguments[0].name, "value": ""}}
                answer = await self._raw_request(client, "completion/complete", asked)
                if type(answer) is dict and "result" in answer:
                    text = "completion/complete was answered, though the server did not declare completions"
                    chk.find("server/utilities/completion#1", text, answer)
            return
        prompts = getattr(self, "_prompts_seen", None) or (
            await client.list_all_prompts() if self._has("prompts") else []
        )
        with_args = [p for p in prompts if p.arguments]
        if with_args:
            async with self.check("completion/complete", ["basic/lifecycle#14"]) as chk:
                prompt = with_args[0]
                assert prompt.arguments is not None
                result = await client.complete(PromptReference(name=prompt.name), prompt.arguments[0].name, "")
                chk.note(f"{len(result.completion.values)} value(s) for {prompt.name}.{prompt.arguments[0].name}")
        async with self.check("completion/unknown-prompt", ["server/utilities/completion#2"]) as chk:
            from ..schema.completion import CompleteRequestParams, CompletionArgument

            params = CompleteRequestParams(
                ref=PromptReference(name="mcp-ref-no-such-prompt"), argument=CompletionArgument(name="x", value="")
            )
            pending = await client.start_request("completion/complete", params)
            try:
                await pending.result()
                chk.find(
                    "server/utilities/completion#2",
                    "completion for an unknown prompt was answered with a result",
                    self._answer(pending.id),
                )
            except MCPError as e:
                if e.code != -32602:
                    chk.find(
                        "server/utilities/completion#2",
                        f"completion for an unknown prompt got error {e.code}, not -32602",
                        self._answer(pending.id),
                    )

    async def _logging(self, client: ClientSession) -> None:
        if not self._has("logging"):
            spec = self.config.tool("logging")
            if spec is None:
                self.skip("logging/set-level", ["server/utilities/logging#1"], "the server declares no logging")
                return
            # a server that logs must declare logging: its log messages say whether it does
            async with self.check("logging/without-the-capability", ["server/utilities/logging#1"]):
                await self._call(client, spec)
                await client.ping()  # what the tool logged is in before this answer
            return
        async with self.check("logging/invalid-level", ["server/utilities/logging#3"]) as chk:
            with self._channel.deliberately():
                pending = await client.start_request("logging/setLevel", SetLevelRequestParams(level="mcp-ref-loud"))  # type: ignore[arg-type]
            try:
                await pending.result()
                chk.find("server/utilities/logging#3", "an invalid log level was accepted", self._answer(pending.id))
            except MCPError as e:
                if e.code != -32602:
                    chk.find(
                        "server/utilities/logging#3",
                        f"an invalid log level got error {e.code}, not -32602",
                        self._answer(pending.id),
                    )
        spec = self.config.tool("logging")
        name = "logging/set-level-filters"
        if spec is None:
            self.skip(name, ["server/utilities/logging#2"], _needs("logging"))
            return
        async with self.check(name, ["server/utilities/logging#2"]) as chk:
            await client.set_logging_level("error")
            await self._call(client, spec)
            await client.ping()  # messages the tool sent are in before the answer to this
            await client.set_logging_level("debug")

    async def _cancellation(self, client: ClientSession) -> None:
        async with self.check("cancellation/unknown-request-ignored", ["basic/index#13", "basic/index#10"]):
            data = _dumps(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "mcp-ref-never-sent"}}
            )
            self._channel.expect_deliberate(data)
            session = client.session
            assert isinstance(session, Session)  # (the battery opens 2025 sessions: era="legacy")
            await session.send_raw(data)
            await client.ping()
        spec = self.config.tool("slow")
        name = "cancellation/stops-and-stays-silent"
        if spec is None:
            self.skip(name, ["basic/utilities/cancellation#4"], _needs("slow"))
            return
        # the progress check's call runs meanwhile (bounded time, trial30c D10): its wait for the tool
        # to finish overlaps this check's watch for an answer after the cancellation
        await self._start_progress(client)
        async with self.check(name, ["basic/utilities/cancellation#4", "basic/utilities/ping#1"]):
            started = trio.Event()

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                started.set()

            params = CallToolRequestParams(name=spec.name, arguments=spec.arguments or None)
            pending = await client.start_request("tools/call", params, progress=on_progress)
            with trio.move_on_after(1.0):
                await started.wait()
            await pending.cancel("mcp-ref check: cancellation")
            obs = self.observers[-1]
            before = len(obs.findings)
            # a response after the cancellation is reported by the observer (cancellation#4)
            with trio.move_on_after(self.config.cancel_wait):
                while not any(f.requirement == "basic/utilities/cancellation#4" for f in obs.findings[before:]):
                    await trio.sleep(0.05)
            await client.ping()

    async def _start_progress(self, client: ClientSession) -> None:
        """Send the progress check's tools/call now (it is awaited by :meth:`_progress`)."""
        spec = self.config.tool("progress")
        if spec is None or not self._wants("progress"):
            return
        values: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            values.append(progress)

        mark = self._findings_mark()
        params = CallToolRequestParams(name=spec.name, arguments=spec.arguments or None)
        try:
            pending = await client.start_request(
                "tools/call", params, progress=on_progress, progress_token="mcp-ref-progress-1"
            )
        except (NotAnswered, MCPError, ProtocolError, RequestTimeout):
            return  # the progress check sends it again, and says what happened
        self._early_progress = (pending, values, mark)

    async def _progress(self, client: ClientSession) -> None:
        spec = self.config.tool("progress")
        name = "progress/increasing-and-before-the-result"
        requirements = ["basic/utilities/progress#4", "basic/utilities/progress#7", "basic/utilities/progress#14"]
        if spec is None:
            self.skip(name, requirements, _needs("progress"))
            return
        early, self._early_progress = self._early_progress, None
        async with self.check(name, requirements, since=early[2] if early else None) as chk:
            if early is None:
                values: list[float] = []

                async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                    values.append(progress)

                params = CallToolRequestParams(name=spec.name, arguments=spec.arguments or None)
                await client.request("tools/call", params, progress=on_progress, progress_token="mcp-ref-progress-1")
            else:
                pending, values, _ = early
                await pending.result()
            await client.ping()
            await trio.sleep(SETTLE)
            chk.note(f"{len(values)} progress notification(s)")
            if not values:
                chk.note("the tool sent no progress (allowed: progress#8)")

    async def _tasks(self, client: ClientSession) -> None:
        if not self._has("tasks"):
            self.skip("tasks/lifecycle", ["basic/utilities/tasks#1"], "the server declares no tasks")
            return
        async with self.check("tasks/unknown-task", ["basic/utilities/tasks#68"]) as chk:
            for method, params in (
                ("tasks/get", GetTaskRequestParams(task_id="mcp-ref-no-such-task")),
                ("tasks/result", GetTaskPayloadRequestParams(task_id="mcp-ref-no-such-task")),
                ("tasks/cancel", CancelTaskRequestParams(task_id="mcp-ref-no-such-task")),
            ):
                if method == "tasks/cancel" and not self._has("tasks", "cancel"):
                    continue
                pending = await client.start_request(method, params)
                try:
                    await pending.result()
                    chk.find(
                        "basic/utilities/tasks#68",
                        f"{method} for an unknown task was answered",
                        self._answer(pending.id),
                    )
                except MCPError as e:
                    if e.code != -32602:
                        chk.find(
                            "basic/utilities/tasks#68",
                            f"{method} for an unknown task got error {e.code}, not -32602",
                            self._answer(pending.id),
                        )
        await self._forbidden_task(client)
        spec = self.config.tool("task") or self._task_tool()
        requirements = [
            "basic/utilities/tasks#43",
            "basic/utilities/tasks#46",
            "basic/utilities/tasks#47",
            "basic/utilities/tasks#60",
            "basic/utilities/tasks#67",
        ]
        if spec is None:
            self.skip("tasks/lifecycle", requirements, _needs("task"))
            return
        if not self._has("tasks", "requests", "tools", "call"):
            self.skip("tasks/lifecycle", requirements, "the server does not declare tasks.requests.tools.call")
            return
        async with self.check("tasks/lifecycle", requirements) as chk:
            call = CallToolRequestParams(
                name=spec.name, arguments=spec.arguments or None, task=TaskMetadata(ttl=60_000)
            )
            created = await client.request("tools/call", call)
            task_id = created.task.task_id
            got = await client.request("tasks/get", GetTaskRequestParams(task_id=task_id))
            if got.status not in ("working", "input_required", "completed", "failed", "cancelled"):
                chk.fail("basic/utilities/tasks#26", f"tasks/get gave the status {got.status!r}")
            pending = await client.start_request("tasks/result", GetTaskPayloadRequestParams(task_id=task_id))
            try:
                await pending.result()
            except MCPError as e:
                chk.note(f"the task failed with error {e.code}")
            after = await client.request("tasks/get", GetTaskRequestParams(task_id=task_id))
            if after.status not in ("completed", "failed", "cancelled"):
                chk.find(
                    "basic/utilities/tasks#46",
                    f"tasks/result returned while the task was {after.status}",
                    self._answer(pending.id),
                )
            if self._has("tasks", "cancel"):
                cancel = await client.start_request("tasks/cancel", CancelTaskRequestParams(task_id=task_id))
                try:
                    await cancel.result()
                    chk.find(
                        "basic/utilities/tasks#60",
                        f"tasks/cancel of a {after.status} task was accepted",
                        self._answer(cancel.id),
                    )
                except MCPError as e:
                    if e.code != -32602:
                        chk.find(
                            "basic/utilities/tasks#60",
                            f"tasks/cancel of a terminal task got error {e.code}, not -32602",
                            self._answer(cancel.id),
                        )
        if self._has("tasks", "cancel"):
            async with self.check(
                "tasks/cancel-running", ["basic/utilities/tasks#61", "basic/utilities/tasks#28"]
            ) as chk:
                call = CallToolRequestParams(
                    name=spec.name, arguments=spec.arguments or None, task=TaskMetadata(ttl=60_000)
                )
                created = await client.request("tools/call", call)
                task_id = created.task.task_id
                pending = await client.start_request("tasks/cancel", CancelTaskRequestParams(task_id=task_id))
                try:
                    cancelled = await pending.result()
                except MCPError as e:
                    got = await client.request("tasks/get", GetTaskRequestParams(task_id=task_id))
                    if e.code == -32602 and got.status in ("completed", "failed", "cancelled"):
                        chk.note(f"the task was {got.status} before it could be cancelled")
                        return
                    raise
                if cancelled.status != "cancelled":
                    chk.find(
                        "basic/utilities/tasks#61",
                        f"tasks/cancel was answered with status {cancelled.status!r}",
                        self._answer(pending.id),
                    )
                await trio.sleep(SETTLE)
                await client.request("tasks/get", GetTaskRequestParams(task_id=task_id))

    # -- messages -----------------------------------------------------------------------------

    def _no_answer(self, what: str) -> str:
        text = f"{self.target.describe()} did not answer {what} within {self.timer.full:g}s"
        return text + self._stderr()

    def _closed(self, why: str) -> str:
        return f"{self.target.describe()} closed the connection: {why}" + self._stderr()

    def _stderr(self) -> str:
        if not self.stderr_tail:
            return ""
        return "; its last stderr lines: " + " | ".join(list(self.stderr_tail)[-5:])


async def check_server(
    target: Target,
    config: CheckConfig | None = None,
    *,
    only: Sequence[str] | None = None,
    on_progress: Callable[[str], None] | None = None,
    auth: Any = None,
    revision: str | None = None,
) -> Report:
    """Run the battery against ``target``; TargetUnreachable when it cannot be started or reached.
    ``auth`` (HTTP): an ``OAuthClient`` whose flow runs when the server asks for authorization.
    ``revision``: check that revision only (default: every revision the server speaks)."""
    battery = Battery(target, config, only=only, on_progress=on_progress, auth=auth, revision=revision)
    try:
        return await battery.run()
    except ConnectionClosed as e:
        raise TargetUnreachable(battery._closed(str(e))) from e


def run_check(
    target: Target,
    config: CheckConfig | None = None,
    *,
    only: Sequence[str] | None = None,
    on_progress: Callable[[str], None] | None = None,
    revision: str | None = None,
) -> Report:
    """:func:`check_server` in a trio run of its own (for the command line)."""
    return trio.run(lambda: check_server(target, config, only=only, on_progress=on_progress, revision=revision))
