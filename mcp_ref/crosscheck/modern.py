"""The 2026-07-28 battery of ``mcp-ref check``: stateless requests, judged message by message.

A 2026-07-28 server keeps no session: every request carries its protocol
version, the client's capabilities and identity in ``_meta``, and every
result says what it is (``resultType``). So the battery needs no engine: it
writes raw JSON-RPC requests (:class:`StdioWire`: one process, newline
framing; :class:`HttpWire`: one POST each, with the request metadata
headers) and judges every answer with the same rules (:class:`ModernJudge`):

* every result: ``resultType`` (basic/index#10), ``serverInfo`` in ``_meta``
  (basic/index#59), caching hints on the cacheable methods
  (server/utilities/caching#1, #11), an ``InputRequiredResult`` only where
  allowed and well formed (basic/patterns/mrtr#5, #9, #16, #17);
* every error: no code of the reserved sub-range the spec does not define
  (basic/index#21), none of the codes this revision retired (basic/index#22);
* every other message: no request to the client (stdio#9, streamable-http#20),
  no log message for a request that asked for none (logging#3), no
  cancellation but of a subscription (cancellation#3);
* over HTTP, every answer: the status the error calls for (400 for
  -32020/-32021/-32022 and a malformed ``_meta``, 404 for an unknown method),
  no session id (streamable-http#72), an SSE stream that ends with its answer
  (#21) and is not buffered (#22).

Then the probes: ``server/discover``, an unsupported version, a missing
``_meta`` field, an unknown and the removed methods, every list (all pages,
one ``cacheScope``), the tools (the read-only ones, or every one with
``--call-all-tools``) with multi round-trip requests answered and retried,
a forged ``requestState``, a tool needing a capability not declared, every
resource and prompt, an unknown resource, the lists again (they do not vary
with what was called), ``subscriptions/listen``, and over HTTP the header
checks (version, method, name, mirrored parameters, the Base64 form), GET,
DELETE, a notification, a foreign Origin and an old session id.
"""

import base64
import json
import re
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from itertools import pairwise
from typing import Any, Final

import attrs
import trio

from .config import ROLES, ToolSpec
from .exercise import arguments_for, safe_to_call, why_not_safe
from .modern_judge import (
    CAPS,
    CINFO,
    INPUT_METHODS,
    LOGLEVEL,
    MODERN,
    MRTR_METHODS,
    PV,
    RETIRED,
    SINFO,
    STRAY_RULES,
    Answer,
    ModernJudge,
    R,
    _brief,
    _is_response,
    _obj,
    mirrored,
)
from .report import Finding, Report
from .targets import HttpTarget, StdioTarget, Target

__all__ = ["MODERN", "ModernBattery", "ModernJudge", "Answer", "StdioWire", "HttpWire", "run_modern"]


#: what the battery declares when it wants to see multi round-trip requests
FULL_CAPS: Final[dict[str, Any]] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
CLIENT_INFO: Final = {"name": "mcp-ref-check", "version": "0.1.0"}
#: a protocol version nobody implements
UNKNOWN_VERSION: Final = "1999-01-01"
#: client-to-server methods of 2025-11-25 this revision no longer has (initialize aside: a dual-era
#: server answers it; the tasks methods moved to an extension a server may still serve)
REMOVED: Final = ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe")
LIST_KEYS: Final = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
LIST_CAPABILITY: Final = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
}
#: pages followed at most, tools/resources/prompts tried at most
MAX_PAGES: Final = 20
MAX_EXERCISED: Final = 30
#: seconds an answer is waited for once the server has let one go unanswered
QUICK: Final = 2.0
#: unanswered requests in a row before the battery sends no more
GIVE_UP: Final = 3
#: seconds a message may take to go into a stdio server's input (one that reads nothing fills the pipe)
WRITE_WAIT: Final = 10.0
#: seconds server/discover is waited for (a server of an earlier revision may ignore it)
DISCOVER_WAIT: Final = 0.5  # (of the timeout: 5 s with the default 10)
#: seconds a subscription is listened to
LISTEN: Final = 1.5  # (once its first message came: a loaded server may be slow to acknowledge)
#: seconds an SSE stream may stay open after carrying its answer
STREAM_GRACE: Final = 2.0
#: seconds the slow tool runs (or its first progress is waited for) before it is cancelled
CANCEL_AFTER: Final = 1.0
#: seconds after a cancellation during which a message for the request is taken for one that crossed it
CROSSING: Final = 0.2
_HEADER_SAFE = re.compile(r"^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$")


def header_value(value: str) -> str:
    """``value`` as a request metadata header: as it is when plain ASCII, else the Base64 sentinel form."""
    if _HEADER_SAFE.match(value) and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return sentinel(value)


def sentinel(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def meta(version: str = MODERN, caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {PV: version, CAPS: FULL_CAPS if caps is None else caps, CINFO: CLIENT_INFO}
    out.update(extra)
    return out


# -- wires --------------------------------------------------------------------------------------------


class Wire:
    """How the battery reaches the server. ``record(direction, data)`` keeps the traffic for --html."""

    http = False

    def __init__(self, record: Callable[[str, bytes], None], on_finding: Callable[[Finding], None]) -> None:
        self.record = record
        self.on_finding = on_finding
        self.inbox: list[Any] = []

    async def call(
        self,
        message: dict[str, Any],
        timeout: float,
        *,
        headers: dict[str, str | None] | None = None,
        tools: dict[str, Any] | None = None,
        keep_open: float = 0.0,
    ) -> Answer | None:
        """Send a request and wait ``timeout`` for its answer; None when none came (here: nothing answers)."""
        return None

    async def notify(self, message: dict[str, Any], headers: dict[str, str | None] | None = None) -> Answer:
        """Send a notification; what came back, if the transport says (here: nothing)."""
        return Answer()


class StdioWire(Wire):
    """One server process; newline-delimited JSON both ways (a CR before the newline is whitespace)."""

    def __init__(
        self,
        process: trio.Process,
        record: Callable[[str, bytes], None],
        on_finding: Callable[[Finding], None],
    ) -> None:
        super().__init__(record, on_finding)
        self.process = process
        self.waiting: dict[str, trio.Event] = {}
        self.responses: dict[str, Any] = {}
        self.closed = trio.Event()
        self._run: list[bytes] = []
        self._reported: set[str] = set()
        #: the ids of the requests written, and of those answered (a second answer, or an answer to
        #: an id never sent, breaks basic/index#7 as it does in a session)
        self.sent: set[str] = set()
        self.answered: set[str] = set()

    @staticmethod
    def _key(rid: Any) -> str:
        return json.dumps(rid)

    async def reader(self) -> None:
        assert self.process.stdout is not None
        buf = b""
        try:
            while True:
                chunk = await self.process.stdout.receive_some(65536)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self._line(line)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            if buf.strip():
                self._line(buf)
            self.flush()
            self.closed.set()
            for ev in self.waiting.values():
                ev.set()

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        self.record("s2c", line)
        try:
            message = json.loads(line)
            piece = bool(self._run) and type(message) not in (dict, list)
        except ValueError:
            piece = True
        if piece:
            # held until the run of lines that are not messages ends: one JSON value spread over
            # several lines is a message with embedded newlines, anything else is not a message
            self._run.append(line)
            try:
                message = json.loads(b"\n".join(self._run))
            except ValueError:
                return
            count, self._run = len(self._run), []
            # [2026-07-28:basic/transports/stdio#1] one message, one line
            self._bad("basic/transports/stdio#1", f"the server wrote a message over {count} lines", message)
            self._take(message)
            return
        self.flush()
        self._take(message)

    def flush(self) -> None:
        """A run of lines that were not one message: not MCP messages."""
        if self._run:
            # [2026-07-28:basic/transports/stdio#4] nothing but MCP messages on stdout
            text = "the server wrote a line on stdout that is not a JSON-RPC message"
            self._bad("basic/transports/stdio#4", text, self._run[0].decode("utf-8", "replace")[:300])
            self._run = []

    def _bad(self, requirement: str, text: str, evidence: Any) -> None:
        if requirement in self._reported:
            return
        self._reported.add(requirement)
        self.on_finding(Finding.of(R + requirement, text, _brief(evidence), party="server"))

    def _take(self, message: Any) -> None:
        if _is_response(message):
            key = self._key(message.get("id"))
            if message.get("id") is not None and (key in self.answered or key not in self.sent):
                # [2026-07-28:basic/index#7] one response, with the id of the request it answers
                again = "a second time" if key in self.answered else "though the client never sent that id"
                text = f"the server answered request id {message.get('id')!r} {again}"
                self.on_finding(Finding.of(R + "basic/index#7", text, _brief(message), party="server"))
                return
            self.answered.add(key)
            self.responses[key] = message
            ev = self.waiting.get(key)
            if ev is not None:
                ev.set()
            return
        self.inbox.append(message)

    async def write(self, message: Any) -> None:
        if type(message) is dict and "id" in message and "result" not in message and "error" not in message:
            self.sent.add(self._key(message["id"]))
        data = frame(message)
        self.record("c2s", data)
        assert self.process.stdin is not None
        # (a server that reads none of its input fills the pipe: the write is given up, and the
        # request it carried goes unanswered like any other)
        with trio.move_on_after(WRITE_WAIT):
            try:
                await self.process.stdin.send_all(data + b"\n")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    async def call(
        self,
        message: dict[str, Any],
        timeout: float,
        *,
        headers: dict[str, str | None] | None = None,
        tools: dict[str, Any] | None = None,
        keep_open: float = 0.0,
    ) -> Answer | None:
        key = self._key(message.get("id"))
        ev = self.waiting[key] = trio.Event()
        start = len(self.inbox)
        await self.write(message)
        with trio.move_on_after(timeout):
            await ev.wait()
        self.waiting.pop(key, None)
        if key not in self.responses:
            return None
        await trio.sleep(0.05)  # stragglers sent just before the answer
        return Answer(self.responses.pop(key), others=self.inbox[start:])

    async def notify(self, message: dict[str, Any], headers: dict[str, str | None] | None = None) -> Answer:
        await self.write(message)
        return Answer()

    async def listen(self, message: dict[str, Any], seconds: float, first: float) -> Answer:
        """A subscription: what came in ``seconds`` after its first message (waited for ``first`` at
        most), then a cancellation (the response, if any, included)."""
        key = self._key(message.get("id"))
        start = len(self.inbox)
        await self.write(message)
        with trio.move_on_after(first):
            while len(self.inbox) == start and key not in self.responses:
                await trio.sleep(0.02)
        await trio.sleep(seconds)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": message["id"]}}
        await self.write(cancel)
        await trio.sleep(0.2)
        return Answer(self.responses.pop(key, None), others=self.inbox[start:])


class _Unstarted(Wire):
    """A command that could not be started: nothing answers (the base wire's calls)."""


class HttpWire(Wire):
    """Streamable HTTP of 2026-07-28: each message its own POST, with the request metadata headers."""

    http = True

    def __init__(
        self,
        target: HttpTarget,
        record: Callable[[str, bytes], None],
        on_finding: Callable[[Finding], None],
    ) -> None:
        super().__init__(record, on_finding)
        self.target = target
        #: the ids of the requests posted (a response on a stream to an id never sent breaks basic/index#7)
        self.sent: set[str] = set()
        self._reported: set[str] = set()

    def headers_for(
        self, message: dict[str, Any], tools: dict[str, Any] | None, extra: dict[str, str | None] | None
    ) -> dict[str, str]:
        from .http_probe import ACCEPT_BOTH

        hdrs: dict[str, str | None] = {"accept": ACCEPT_BOTH, **{k.lower(): v for k, v in self.target.headers.items()}}
        params = _obj(message.get("params"))
        m = _obj(params.get("_meta"))
        if isinstance(m.get(PV), str):
            hdrs["mcp-protocol-version"] = m[PV]
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            hdrs["mcp-method"] = method
        name = params.get("uri") if method == "resources/read" else params.get("name")
        if method in MRTR_METHODS and isinstance(name, str):
            hdrs["mcp-name"] = header_value(name)
        if method == "tools/call" and tools and isinstance(params.get("name"), str):
            schema = (tools.get(params["name"]) or {}).get("inputSchema")
            arguments = _obj(params.get("arguments"))
            for prop, header in mirrored(schema).items():
                value = arguments.get(prop)
                if value is None:
                    continue
                text = ("true" if value else "false") if isinstance(value, bool) else str(value)
                hdrs["mcp-param-" + header.lower()] = header_value(text)
        for k, v in (extra or {}).items():
            hdrs[k.lower()] = v
        return {k: v for k, v in hdrs.items() if v is not None}

    async def exchange(
        self, method: str, body: bytes, headers: dict[str, str], timeout: float, rid: Any, keep_open: float = 0.0
    ) -> Answer | None:
        import h11

        from ..basic.transports.streamable_http import SSEDecoder
        from .http_probe import _head, _request

        answer = Answer()
        if body:
            self.record("c2s", body)
        with trio.move_on_after(timeout) as scope:
            stream, conn, response = await _request(self.target.url, method, headers, body, self.target.ssl_context)
            try:
                answer.status = response.status_code
                answer.content_type, answer.headers = _head(response)
                sse = answer.content_type == "text/event-stream"
                decoder = SSEDecoder()
                grace: float | None = None
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        if grace is None and sse and answer.message is not None:
                            grace = trio.current_time() + max(STREAM_GRACE, keep_open)
                        data = b""
                        if grace is not None:
                            with trio.move_on_at(grace) as waited:
                                data = bytes(await stream.receive_some(65536))
                            if waited.cancelled_caught:
                                answer.open_after = not keep_open
                                break
                        else:
                            data = bytes(await stream.receive_some(65536))
                        if not data:
                            break
                        conn.receive_data(data)
                    elif isinstance(event, h11.Data):
                        chunk = bytes(event.data)
                        answer.body += chunk
                        if keep_open and sse and grace is None:
                            # (a subscription: listened to for keep_open seconds once something came)
                            grace = trio.current_time() + keep_open
                        if sse:
                            for ev in decoder.feed(chunk):
                                if ev.data is None:
                                    continue
                                self.record("s2c", ev.data.encode("utf-8"))
                                self._take(answer, ev.data, rid, sse=True)
                    elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                        break
                if not sse and answer.body:
                    self.record("s2c", answer.body)
                    self._take(answer, answer.body.decode("utf-8", "replace"), rid)
            finally:
                with trio.CancelScope(shield=True):
                    await stream.aclose()
        if scope.cancelled_caught and answer.message is None and answer.status is None:
            return None
        return answer

    def _take(self, answer: Answer, text: str, rid: Any, *, sse: bool = False) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            return
        if type(message) is list:
            # [2026-07-28:basic/transports/streamable-http#16] a request is answered with a single JSON
            # object, or an SSE stream of single messages: this revision has no batches. (What the array
            # holds is judged as if it had come alone, so the rest of the battery still runs.)
            where = "an SSE event" if sse else f"the {answer.content_type or 'HTTP'} answer"
            text = f"{where} to a request carried a JSON array ({len(message)} element(s)), not a single JSON object"
            self._once("basic/transports/streamable-http#16", text, message)
            for item in message:
                self._take(answer, json.dumps(item), rid, sse=sse)
            return
        if _is_response(message) and (rid is None or message.get("id") == rid or message.get("id") is None):
            if answer.message is None:
                answer.message = message
            elif rid is not None and message.get("id") == rid:
                # [2026-07-28:basic/index#7] one response per request: the stream carried a second one
                text = f"the server answered request id {rid!r} a second time, in the same SSE stream"
                self.on_finding(Finding.of(R + "basic/index#7", text, _brief(message), party="server"))
            return
        if _is_response(message):
            # [2026-07-28:basic/index#7] a response carries the id of the request it answers: each request
            # has its own stream, so a response with another id on it answers a request it was not for
            whose = (
                "a request sent on another stream"
                if json.dumps(message.get("id")) in self.sent
                else "an id the client never sent"
            )
            text = f"the server answered request id {message.get('id')!r} on the stream of request {rid!r}: {whose}"
            self._once("basic/index#7", text, message, key="foreign")  # (once, not once per stream)
            return
        answer.others.append(message)
        self.inbox.append(message)

    def _once(self, requirement: str, text: str, evidence: Any, key: str = "") -> None:
        if requirement + key in self._reported:
            return
        self._reported.add(requirement + key)
        self.on_finding(Finding.of(R + requirement, text, _brief(evidence), party="server"))

    async def call(
        self,
        message: dict[str, Any],
        timeout: float,
        *,
        headers: dict[str, str | None] | None = None,
        tools: dict[str, Any] | None = None,
        keep_open: float = 0.0,
    ) -> Answer | None:
        hdrs = self.headers_for(message, tools, headers)
        if "id" in message:
            self.sent.add(json.dumps(message["id"]))
        return await self._safely("POST", frame(message), hdrs, timeout, message.get("id"), keep_open)

    async def notify(self, message: dict[str, Any], headers: dict[str, str | None] | None = None) -> Answer:
        got = await self._safely("POST", frame(message), self.headers_for(message, None, headers), QUICK * 2, None)
        return got or Answer()

    async def plain(self, method: str, headers: dict[str, str] | None = None) -> Answer | None:
        from .http_probe import ACCEPT_BOTH

        hdrs = {"accept": ACCEPT_BOTH, **{k.lower(): v for k, v in self.target.headers.items()}, **(headers or {})}
        return await self._safely(method, b"", hdrs, QUICK * 2, None)

    async def _safely(
        self, method: str, body: bytes, headers: dict[str, str], timeout: float, rid: Any, keep_open: float = 0.0
    ) -> Answer | None:
        """One exchange; None when the connection failed (a server that went away answers nothing)."""
        try:
            return await self.exchange(method, body, headers, timeout, rid, keep_open)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError, h11_errors()):
            return None


def frame(message: Any) -> bytes:
    """``message`` as it goes on the wire: compact JSON, UTF-8 (a stdio line adds its newline)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def h11_errors() -> type[Exception]:
    import h11

    return h11.ProtocolError


# -- the judge ------------------------------------------------------------------------------------------


# -- the battery -----------------------------------------------------------------------------------------


class _Stop(Exception):
    """The server stopped answering: no more requests."""


class ModernBattery:
    """The 2026-07-28 checks against one target (see the module doc)."""

    def __init__(
        self,
        target: Target,
        report: Report,
        *,
        timeout: float = 10.0,
        call_all_tools: bool = False,
        say: Callable[[str], None] | None = None,
        stderr_tail: deque[str] | None = None,
        slow: ToolSpec | None = None,
        cancel_wait: float = 2.0,
    ) -> None:
        self.target = target
        self.report = report
        self.full = timeout
        self.call_all_tools = call_all_tools
        #: the tool that runs for a few seconds (--slow-tool): the cancellation check cancels it
        self.slow = slow
        self.cancel_wait = cancel_wait
        self.say = say or (lambda text: None)
        self.stderr_tail = stderr_tail if stderr_tail is not None else deque(maxlen=20)
        self.wire: Wire | None = None
        self.judge = ModernJudge(self._finding, http=isinstance(target, HttpTarget))
        self._findings: list[Finding] = []
        self._next = 0
        self.strikes = 0
        self.unanswered: set[str] = set()
        self.discover: dict[str, Any] | None = None
        self.capabilities: dict[str, Any] = {}
        self.tools: dict[str, Any] = {}
        self.lists: dict[str, list[str]] = {}
        #: a tool that asked for input, its arguments and its first InputRequiredResult
        self.mrtr: tuple[str, dict[str, Any], dict[str, Any]] | None = None
        #: (HTTP) server/discover was refused for want of credentials
        self.unauthorized = False
        #: every tool call that asked for input with a requestState: (name, arguments, InputRequiredResult)
        self.stated: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.called: list[str] = []
        #: the tools called that the server does not mark read-only
        self.called_unsafe: list[str] = []
        self.legacy_too = False
        #: (HTTP) the endpoint serves an earlier revision too (initialize answered with a result)
        self.dual = False
        #: (HTTP) the revision that initialize (asking for 2025-11-25) was answered with
        self.initialized_with: str | None = None
        self.resources_listed: list[dict[str, Any]] = []
        self.prompts_listed: list[dict[str, Any]] = []

    # -- plumbing ----------------------------------------------------------------------------------------

    def _finding(self, finding: Finding) -> None:
        self._findings.append(finding)

    def _record(self, direction: str, data: bytes) -> None:
        self.report.record("2026-07-28 requests", direction, data)

    def new_id(self) -> str:
        self._next += 1
        return f"mcp-ref-{self._next}"

    @property
    def wait(self) -> float:
        return QUICK if self.unanswered else self.full

    def message(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        version: str = MODERN,
        caps: dict[str, Any] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        p = dict(params or {})
        p["_meta"] = {**meta(version, caps, **extra), **p.get("_meta", {})}
        return {"jsonrpc": "2.0", "id": self.new_id(), "method": method, "params": p}

    async def send(
        self,
        message: dict[str, Any],
        *,
        judge: bool = True,
        headers: dict[str, str | None] | None = None,
        keep_open: float = 0.0,
    ) -> Answer | None:
        """One request; its answer judged (``judge``). None when none came (a strike)."""
        assert self.wire is not None
        kind = str(message.get("method"))
        if self.strikes >= GIVE_UP:
            raise _Stop()
        got = await self.wire.call(message, self.wait, headers=headers, tools=self.tools, keep_open=keep_open)
        if got is None or (got.message is None and got.status is None):
            self.strikes += 1
            self.unanswered.add(kind)
            return None
        self.strikes = 0
        if judge:
            self.judge.answer(message, got)
        return got

    @asynccontextmanager
    async def check(self, name: str, requirements: list[str]) -> AsyncIterator[list[str]]:
        """One check: it fails when a finding about its requirements (or one it added) came meanwhile."""
        reqs = [r if r.startswith(R) else R + r for r in requirements]
        start = len(self._findings)
        skipped: list[str] = []
        self.say(f"check {name}")
        try:
            yield skipped
        except _Stop:
            skipped.append("the server stopped answering")
        except trio.TooSlowError:
            skipped.append("no answer in time")
        # (what the server wrote outside the answers is the output checks' business, not this one's)
        new = [f for f in self._findings[start:] if f.requirement in reqs or f.requirement not in STRAY_RULES]
        for f in new:
            if f.requirement not in reqs:
                reqs.append(f.requirement)
        if new:
            self.report.check(name, "fail", reqs, "; ".join(f.message for f in new[:3]))
        elif skipped:
            self.report.check(name, "skip", reqs, "; ".join(skipped))
        else:
            self.report.check(name, "pass", reqs)

    def find(self, requirement: str, message: str, *evidence: Any) -> None:
        self.judge.find(requirement, message, *evidence, key=f"probe:{message}")

    # -- the run ---------------------------------------------------------------------------------------

    async def run(self) -> bool:
        """Check the target as a 2026-07-28 server. False (and nothing reported) when it is not one."""
        async with self.open() as wire:
            self.wire = wire
            if not await self.detect():
                return False
            self.report.section = MODERN
            try:
                await self.battery()
            except _Stop:
                self.report.notes.append("2026-07-28: the server stopped answering; the rest was not checked")
            finally:
                self.report.extend(self._findings)
        return True

    @asynccontextmanager
    async def open(self) -> AsyncIterator[Wire]:
        if isinstance(self.target, HttpTarget):
            yield HttpWire(self.target, self._record, self._finding)
            return
        target = self.target
        assert isinstance(target, StdioTarget)
        import os
        import subprocess

        env = None if target.env is None else {**os.environ, **target.env}
        try:
            process = await trio.lowlevel.open_process(
                [target.command, *target.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=target.cwd,
            )
        except OSError:
            yield _Unstarted(self._record, self._finding)  # (the legacy battery says why, as it always did)
            return
        wire = StdioWire(process, self._record, self._finding)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(wire.reader)
            nursery.start_soon(self._stderr, process)
            try:
                yield wire
            finally:
                with trio.CancelScope(shield=True):
                    if process.stdin is not None:
                        await process.stdin.aclose()
                    with trio.move_on_after(2):
                        await process.wait()
                    if process.returncode is None:
                        process.kill()
                        await process.wait()
                nursery.cancel_scope.cancel()

    async def _stderr(self, process: trio.Process) -> None:
        assert process.stderr is not None
        buf = b""
        try:
            while chunk := await process.stderr.receive_some(65536):
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self.stderr_tail.append(line.decode("utf-8", "replace").rstrip())
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async def detect(self) -> bool:
        """server/discover; failing that, whether a plain 2026-07-28 request is served as one."""
        sent = self.message("server/discover")
        assert self.wire is not None
        # (a server of an earlier revision may ignore a request before initialize: no long wait, no strike)
        got = await self.wire.call(sent, self.full * DISCOVER_WAIT)
        if got is not None and got.message is None and got.status is None:
            got = None
        if got is not None and got.status in (401, 403) and got.message is None:
            # a server behind OAuth: say so, not "no 2026-07-28" (basic/authorization#14 is judged
            # where the token is got, before any battery: spec_notes/crosscheck.md)
            www = got.headers.get("www-authenticate")
            self.report.notes.append(
                f"2026-07-28: server/discover was refused with HTTP {got.status}"
                + (f" (WWW-Authenticate: {www})" if www else "")
                + ": the server asks for authorization; give --header 'Authorization: Bearer TOKEN', or --oauth"
                " (--client-credentials ID:SECRET) to run the flow, and its 2026-07-28 side is checked too"
            )
            self.unauthorized = True
            return False
        result = got.result if got is not None else None
        versions = result.get("supportedVersions") if result is not None else None
        if result is not None and isinstance(versions, list) and MODERN in versions:
            self.discover = result
            self.capabilities = _obj(result.get("capabilities"))
            self.judge.declared = self.capabilities
            self.report.section = MODERN
            self.legacy_too = any(v != MODERN for v in versions if isinstance(v, str))
            self.dual = self.legacy_too or await self._initialize_answered()
            self.judge.dual = self.dual
            async with self.check("modern/discover", ["basic/versioning#3", "server/discover#1"]):
                assert got is not None
                self.judge.answer(sent, got)
            return True
        if got is None or got.message is None or (got.error is not None and got.code == -32022):
            return False  # silence, or a server of other revisions saying so as this one asks
        # no discover: is a 2026-07-28 request served as one anyway?
        probe = self.message("tools/list")
        other = await self.send(probe, judge=False)
        r = other.result if other is not None else None
        if r is None or not (
            "resultType" in r or (type(r.get("_meta")) is dict and SINFO in r["_meta"]) or "ttlMs" in r
        ):
            return False
        self.report.section = MODERN
        self.capabilities = {"tools": {}}
        self.judge.declared = self.capabilities
        async with self.check("modern/discover", ["basic/versioning#3", "server/discover#1"]):
            # (trial30c D7, discovernov) a discover that answers but lists no 2026-07-28 is implemented
            listed = f"server/discover lists {versions!r} as supportedVersions" if result is not None else None
            self.find(
                "basic/versioning#3",
                (listed or "server/discover is not implemented")
                + ", though 2026-07-28 requests are served"
                + (f" (answered {_brief(got.message)})" if got is not None and listed is None else ""),
            )
        return True

    async def _initialize_answered(self) -> bool:
        """(HTTP) whether the endpoint also opens sessions of an earlier revision (its session is ended)."""
        if not isinstance(self.wire, HttpWire):
            return False
        init = {
            "jsonrpc": "2.0",
            "id": self.new_id(),
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO},
        }
        got = await self.wire.call(init, QUICK * 2)
        if got is None or got.result is None:
            return False
        spoken = got.result.get("protocolVersion")
        if isinstance(spoken, str):
            self.initialized_with = spoken
        session = got.headers.get("mcp-session-id")
        if session is not None:
            await self.wire.plain("DELETE", {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})
        return True

    def _has(self, *path: str) -> bool:
        node: Any = self.capabilities
        for p in path:
            if type(node) is not dict or p not in node:
                return False
            node = node[p]
        return True

    async def battery(self) -> None:
        await self.versions()
        await self.malformed()
        await self.methods()
        await self.lists_all()
        await self.exercise_tools()
        await self.mrtr_checks()
        await self.unknown_names()
        await self.resources()
        await self.prompts()
        await self.stable()
        await self.logging()
        await self.cancellation()
        await self.subscriptions()
        if isinstance(self.wire, HttpWire):
            await self.http_checks()
        if isinstance(self.wire, StdioWire):
            await self.stdio_leftovers()
        self.output_check()

    def _cheap(self) -> str:
        return "tools/list" if self._has("tools") else "prompts/list" if self._has("prompts") else "server/discover"

    # -- versions and malformed requests ---------------------------------------------------------------

    async def versions(self) -> None:
        async with self.check("modern/unsupported-version", ["basic/versioning#1"]) as skipped:
            sent = self.message(self._cheap(), version=UNKNOWN_VERSION)
            got = await self.send(sent)
            if got is None:
                skipped.append(f"{sent['method']} with version {UNKNOWN_VERSION} got no answer")
                return
            data = (got.error or {}).get("data")
            if got.result is not None:
                self.find("basic/versioning#1", f"a request of version {UNKNOWN_VERSION} was served", got.message)
            elif got.code != -32022:
                self.find(
                    "basic/versioning#1",
                    f"a request of version {UNKNOWN_VERSION} got error {got.code}, "
                    "not -32022 (UnsupportedProtocolVersion)",
                    got.message,
                )
            elif type(data) is not dict or not isinstance(data.get("supported"), list):
                self.find("basic/versioning#1", "the -32022 error lists no supported versions", got.message)

    async def malformed(self) -> None:
        async with self.check("modern/missing-meta", ["basic/index#53"]) as skipped:
            sent = self.message(self._cheap())
            del sent["params"]["_meta"][CAPS]
            got = await self.send(sent)
            if got is None:
                skipped.append("no answer")
                return
            if got.result is not None:
                self.find("basic/index#53", f"a request without {CAPS} in _meta was served", got.message)
            elif got.code != -32602:
                self.find("basic/index#53", f"a request without {CAPS} got error {got.code}, not -32602", got.message)
            elif self.judge.http and got.status != 400:
                self.find(
                    "basic/index#54",
                    f"the -32602 for a malformed _meta came with HTTP {got.status}, not 400",
                    got.message,
                )
        if self._has("tools"):
            await self.nameless_call()

    async def nameless_call(self) -> None:
        """[2026-07-28:basic/index#53] a tools/call without its required ``name`` is malformed: -32602.
        (Over HTTP it goes without an Mcp-Name header, as there is no name to mirror; a server that
        checks the headers first may refuse it -32020, which is a refusal too.)"""
        async with self.check("modern/tools/call-without-name", ["basic/index#53"]) as skipped:
            got = await self.send(self.message("tools/call", {"arguments": {}}))
            if got is None:
                skipped.append("no answer")
            elif got.result is not None:
                self.find("basic/index#53", "a tools/call without a name was served", got.message)
            elif got.code == -32601 or got.code in RETIRED or (type(got.code) is int and -32099 <= got.code <= -32021):
                pass  # (judged with every answer: basic/index#3, #21, #22)
            elif got.code != -32602 and not (self.judge.http and got.code == -32020):
                self.find(
                    "basic/index#53", f"a tools/call without a name got error {got.code}, not -32602", got.message
                )

    async def methods(self) -> None:
        async with self.check("modern/unknown-method", ["basic/index#3"]) as skipped:
            sent = self.message("mcp-ref-check/no-such-method")
            got = await self.send(sent)
            if got is None:
                skipped.append("no answer")
            elif got.result is not None:
                self.find("basic/index#3", "an unknown method was answered with a result", got.message)
            elif got.code != -32601:
                self.find("basic/index#3", f"an unknown method got error {got.code}, not -32601", got.message)
        async with self.check("modern/removed-methods", ["basic/index#3"]) as skipped:
            for method in REMOVED:
                sent = self.message(
                    method,
                    {"uri": "mem://mcp-ref-check"}
                    if "subscribe" in method
                    else ({"level": "info"} if method == "logging/setLevel" else None),
                )
                got = await self.send(sent)
                if got is None:
                    skipped.append(f"{method}: no answer")
                elif got.code != -32601:
                    what = "a result" if got.result is not None else f"error {got.code}"
                    self.find(
                        "basic/index#3",
                        f"{method}, which 2026-07-28 removed, got {what}, not -32601 (Method not found)",
                        got.message,
                    )
        if self.legacy_too:
            return
        async with self.check("modern/initialize-refused", ["basic/versioning#10"]) as skipped:
            init = {
                "jsonrpc": "2.0",
                "id": self.new_id(),
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO},
            }
            got = await self.send(init, judge=False)
            if got is None or got.error is None:
                skipped.append("initialize was not refused (the server speaks an earlier revision too)")
                return
            if MODERN not in json.dumps(got.error):
                self.find(
                    "basic/versioning#10",
                    "the refusal of initialize does not name the protocol versions the server supports",
                    got.message,
                )

    # -- lists ---------------------------------------------------------------------------------------

    async def list_all(self, method: str, *, judge: bool = True) -> list[Any] | None:
        key = LIST_KEYS[method]
        items: list[Any] = []
        scopes: list[Any] = []
        cursor: Any = None
        for _ in range(MAX_PAGES):
            sent = self.message(method, {"cursor": cursor} if cursor is not None else None)
            got = await self.send(sent, judge=judge)
            if got is None or got.result is None:
                return None if not items else items
            page = got.result.get(key)
            if isinstance(page, list):
                items += page
            scopes.append(got.result.get("cacheScope"))
            cursor = got.result.get("nextCursor")
            if not isinstance(cursor, str):
                break
        if judge and len({json.dumps(s) for s in scopes if s is not None}) > 1:
            # [2026-07-28:server/utilities/caching#24] one cacheScope for every page of a list
            self.find("server/utilities/caching#24", f"the pages of {method} have the cacheScopes {scopes}")
        return items

    async def lists_all(self) -> None:
        for method, cap in LIST_CAPABILITY.items():
            if not self._has(cap):
                continue
            reqs = ["server/utilities/caching#1", "server/utilities/caching#11", "server/utilities/caching#24"]
            async with self.check(f"modern/{method}", reqs) as skipped:
                items = await self.list_all(method)
                if items is None:
                    skipped.append(f"{method} was not answered with a result")
                    continue
                names = [
                    str(i.get("name") if method != "resources/list" else i.get("uri")) for i in items if type(i) is dict
                ]
                self.lists[method] = names
                if method == "tools/list":
                    self.tools = {t["name"]: t for t in items if type(t) is dict and isinstance(t.get("name"), str)}
                elif method == "resources/list":
                    self.resources_listed = [i for i in items if type(i) is dict and isinstance(i.get("uri"), str)]
                elif method == "prompts/list":
                    self.prompts_listed = [i for i in items if type(i) is dict and isinstance(i.get("name"), str)]

    # -- tools and multi round-trip requests ---------------------------------------------------------

    def _safe(self, tool: dict[str, Any]) -> bool:
        return safe_to_call(tool)

    async def exercise_tools(self) -> None:
        """Call the tools that are safe to call (all with ``call_all_tools``, up to MAX_EXERCISED) and
        say which were not called, and why, as the handshake battery does (``tools/exercised``)."""
        if not self.tools:
            return
        called: list[str] = []
        left: list[str] = []
        async with self.check("modern/tools/call", ["basic/index#10", "basic/patterns/mrtr#16"]):
            for tool in self.tools.values():
                name = tool["name"]
                args = arguments_for(tool.get("inputSchema"))
                if not (self.call_all_tools or self._safe(tool)):
                    left.append(f"{name} ({why_not_safe(tool)})")
                elif len(called) >= MAX_EXERCISED:
                    left.append(f"{name} (more than {MAX_EXERCISED} tools)")
                elif args is None:
                    left.append(f"{name} (its input schema asks for values mcp-ref cannot make)")
                else:
                    await self.call_tool(name, args)
                    called.append(name)
        why = "" if self.call_all_tools else "; --call-all-tools calls the tools not marked readOnlyHint"
        detail = f"{len(called)} of {len(self.tools)} tool(s) called"
        if left:
            detail += "; not called: " + ", ".join(left) + why
        self.report.check("modern/tools/exercised", "pass", [R + "server/tools#5"], detail)

    async def unknown_names(self) -> None:
        """An unknown tool and prompt: whatever the error, it is judged (its code above all)."""
        probes = [("tools/call", "tools"), ("prompts/get", "prompts")]
        for method, cap in probes:
            if not self._has(cap):
                continue
            async with self.check(f"modern/{method}/unknown", ["basic/index#21", "basic/index#22"]) as skipped:
                got = await self.send(self.message(method, {"name": "mcp-ref-check-no-such-name", "arguments": {}}))
                if got is None:
                    skipped.append("no answer")
                elif method == "tools/call":
                    self.unknown_tool_code(got)

    def unknown_tool_code(self, got: Answer) -> None:
        """An unknown tool is a protocol error, -32602 (the decision: spec_notes/server/tools.md)."""
        code = got.code
        if got.error is None or code == -32602 or code == -32601:
            return  # (a result is judged by the rules of results; -32601 by the judge: basic/index#3)
        if code in RETIRED or (type(code) is int and -32099 <= code <= -32020):
            return  # (basic/index#21, #22: the judge's)
        if type(code) is int and -32019 <= code <= -32000:
            # [2026-07-28:basic/index#19] a code of the legacy sub-range, given a meaning of its own
            self.find("basic/index#19", f"an unknown tool got error {code}, a legacy code, not -32602", got.message)
        else:
            # [2026-07-28:basic/index#3] JSON-RPC's code for a bad parameter is -32602 (Invalid params)
            self.find("basic/index#3", f"an unknown tool got error {code}, not Invalid params (-32602)", got.message)

    async def call_tool(self, name: str, args: dict[str, Any], caps: dict[str, Any] | None = None) -> Answer | None:
        self.called.append(name)
        if not self._safe(self.tools.get(name) or {}):
            self.called_unsafe.append(name)

        def asked(result: dict[str, Any]) -> None:
            if self.mrtr is None:
                self.mrtr = (name, args, result)
            if isinstance(result.get("requestState"), str) and not any(n == name for n, _, _ in self.stated):
                self.stated.append((name, args, result))

        return await self.until_complete("tools/call", {"name": name, "arguments": args}, caps=caps, on_input=asked)

    async def until_complete(
        self,
        method: str,
        params: dict[str, Any],
        *,
        caps: dict[str, Any] | None = None,
        on_input: Callable[[dict[str, Any]], None] | None = None,
        rounds: int = 3,
    ) -> Answer | None:
        """One request, retried with the answers a yes-saying client gives while it asks for input
        (``rounds`` retries at most); ``on_input`` sees each InputRequiredResult."""
        got = await self.send(self.message(method, params, caps=caps))
        for _ in range(rounds):
            if got is None or got.result is None or got.result.get("resultType") != "input_required":
                return got
            if on_input is not None:
                on_input(got.result)
            got = await self.send(self.message(method, self.retry_params(params, got.result), caps=caps))
        return got

    async def read_each(
        self, method: str, items: list[dict[str, Any]], params_of: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> list[str]:
        """Send ``method`` for each listed item (up to MAX_EXERCISED, input rounds answered); what went
        unanswered, for the check's skip reasons."""
        unanswered = []
        for item in items[:MAX_EXERCISED]:
            params = params_of(item)
            if await self.until_complete(method, params) is None:
                unanswered.append(f"{params.get('uri', params.get('name'))}: no answer")
        return unanswered

    def retry_params(self, params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        p = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState", "_meta")}
        requests = result.get("inputRequests")
        if type(requests) is dict:
            p["inputResponses"] = {k: input_response(v) for k, v in requests.items()}
        if "requestState" in result:
            p["requestState"] = result["requestState"]
        return p

    async def mrtr_checks(self) -> None:
        if self.mrtr is None:
            return
        name, args, first = self.mrtr
        state = first.get("requestState")
        if isinstance(state, str) and state:
            async with self.check("modern/mrtr/forged-state", ["basic/patterns/mrtr#12"]) as skipped:
                forged = _forge(state)
                params = self.retry_params({"name": name, "arguments": args}, first)
                params["requestState"] = forged
                got = await self.send(self.message("tools/call", params))
                if got is None:
                    skipped.append("no answer")
                elif got.result is not None and got.result.get("resultType", "complete") == "complete":
                    self.find(
                        "basic/patterns/mrtr#12",
                        "a retry whose requestState was altered was served (the state's integrity is not checked)",
                        got.message,
                    )
        await self.replayed_state()
        requests = first.get("inputRequests")
        needed = (
            {INPUT_METHODS.get(str(r.get("method"))) for r in requests.values() if type(r) is dict}
            if type(requests) is dict
            else set()
        )
        needed.discard(None)
        if not needed:
            return
        async with self.check(
            "modern/mrtr/undeclared-capability", ["basic/index#57", "basic/patterns/mrtr#17"]
        ) as skipped:
            got = await self.send(self.message("tools/call", {"name": name, "arguments": args}, caps={}))
            if got is None:
                skipped.append("no answer")
            elif got.error is not None and got.code != -32021:
                self.find(
                    "basic/index#57",
                    f"{name} needs {', '.join(sorted(str(n) for n in needed))}, which the request did not declare, "
                    f"and got error {got.code}, not -32021 (MissingRequiredClientCapability)",
                    got.message,
                )

    async def replayed_state(self) -> None:
        """A requestState presented on a request it was not issued for: other arguments for the same
        tool, or another tool that asked for input too. A server binds the state to the request that
        got it (basic/patterns/mrtr#14) and refuses it elsewhere (asking again is refusing)."""
        from .exercise import varied_arguments

        if not self.stated:
            return
        if any(f.requirement == R + "basic/patterns/mrtr#12" for f in self._findings):
            # the state is not checked at all: that is the statement broken, a replay only its consequence
            self.report.check("modern/mrtr/replayed-state", "skip", [R + "basic/patterns/mrtr#14"], "see forged-state")
            return
        name, args, first = self.stated[0]
        target: tuple[str, dict[str, Any], str] | None = None
        other = varied_arguments((self.tools.get(name) or {}).get("inputSchema"), args)
        if other is not None:
            target = (name, other, f"{name} with other arguments")
        elif len(self.stated) > 1:
            target = (self.stated[1][0], self.stated[1][1], f"the tool {self.stated[1][0]}")
        async with self.check("modern/mrtr/replayed-state", ["basic/patterns/mrtr#14"]) as skipped:
            if target is None:
                skipped.append(f"no other request to present {name}'s requestState on (its arguments cannot vary)")
                return
            params = self.retry_params({"name": target[0], "arguments": target[1]}, first)
            got = await self.send(self.message("tools/call", params))
            if got is None:
                skipped.append("no answer")
            elif (
                got.result is not None
                and got.result.get("resultType", "complete") == "complete"
                and got.result.get("isError") is not True
            ):
                # [2026-07-28:basic/patterns/mrtr#14] a state served on a request it was not issued for
                self.find(
                    "basic/patterns/mrtr#14",
                    f"the requestState {name} was given was accepted on a request for {target[2]} "
                    "(the state is not bound to the request that got it)",
                    got.message,
                )

    # -- resources and prompts --------------------------------------------------------------------------

    async def resources(self) -> None:
        if not self._has("resources"):
            return
        async with self.check("modern/resources/read", ["server/utilities/caching#1"]) as skipped:
            skipped += await self.read_each("resources/read", self.resources_listed, lambda r: {"uri": r["uri"]})
        async with self.check("modern/resources/unknown", ["server/resources#13", "server/resources#16"]) as skipped:
            uri = "mcp-ref-check://no-such-resource"
            got = await self.send(self.message("resources/read", {"uri": uri}))
            if got is None:
                skipped.append("no answer")
            elif got.result is not None:
                contents = got.result.get("contents")
                if got.result.get("resultType") == "input_required":
                    pass
                elif contents == [] or contents is None:
                    self.find(
                        "server/resources#16", "an unknown resource was answered with empty contents", got.message
                    )
                else:
                    self.find("server/resources#13", "an unknown resource was answered with contents", got.message)
            elif got.code != -32602:
                self.find(
                    "server/resources#13",
                    f"an unknown resource got error {got.code}, not -32602"
                    + (" (-32002 is the code of 2025-11-25)" if got.code == -32002 else ""),
                    got.message,
                )

    async def prompts(self) -> None:
        if not self._has("prompts"):
            return

        def params_of(prompt: dict[str, Any]) -> dict[str, Any]:
            args = {
                a["name"]: "mcp-ref-check"
                for a in prompt.get("arguments") or []
                if type(a) is dict and a.get("required") and isinstance(a.get("name"), str)
            }
            return {"name": prompt["name"], "arguments": args}

        async with self.check("modern/prompts/get", ["basic/index#10"]) as skipped:
            skipped += await self.read_each("prompts/get", self.prompts_listed, params_of)

    async def stable(self) -> None:
        """[2026-07-28:server/tools#6, server/resources#4] lists do not vary with what was called;
        [server/tools#8] the tools come in the same order each time."""
        listed: dict[str, list[list[str]]] = {}
        for method, requirement in (("tools/list", "server/tools#6"), ("resources/list", "server/resources#4")):
            before = self.lists.get(method)
            if before is None:
                continue
            if not self.called:
                listed[method] = [before]
                continue
            if self.called_unsafe:
                # a tool that may change things was called (--call-all-tools): the list may change with it
                self.report.check(
                    f"modern/{method}-stable",
                    "skip",
                    [R + requirement],
                    f"{', '.join(self.called_unsafe[:3])} (not read-only) was called: the list may change with it",
                )
                listed[method] = [before]
                continue
            async with self.check(f"modern/{method}-stable", [requirement]) as skipped:
                items = await self.list_all(method, judge=False)
                if items is None:
                    skipped.append("no answer")
                    continue
                key = "uri" if method == "resources/list" else "name"
                after = [str(i.get(key)) for i in items if type(i) is dict]
                listed[method] = [before, after]
                if sorted(after) != sorted(before):
                    added = sorted(set(after) - set(before))
                    gone = sorted(set(before) - set(after))
                    self.find(
                        requirement,
                        f"{method} changed after other requests on the connection (added {added}, gone {gone})",
                    )
        if "tools/list" in listed:
            await self.tools_order(listed["tools/list"])

    async def tools_order(self, seen: list[list[str]]) -> None:
        """[2026-07-28:server/tools#8] the same tools, listed again (twice in a row, whatever was called
        before), come in the same order."""
        async with self.check("modern/tools/list-order", ["server/tools#8"]) as skipped:
            while len(seen) < 3:
                items = await self.list_all("tools/list", judge=False)
                if items is None:
                    skipped.append("no answer")
                    return
                seen.append([str(i.get("name")) for i in items if type(i) is dict])
            pairs = [(a, b) for a, b in pairwise(seen) if sorted(a) == sorted(b)]
            if not pairs:
                skipped.append("the set of tools changed between the listings: their order cannot be compared")
            for a, b in pairs:
                if a != b:
                    text = f"tools/list gave the same tools in another order: {a[:6]}, then {b[:6]}"
                    self.find("server/tools#8", text)
                    return

    # -- cancellation ------------------------------------------------------------------------------------

    async def cancellation(self) -> None:
        """The slow tool, cancelled as this revision's transports say: over stdio with
        ``notifications/cancelled``, after which nothing more may come for the request
        (basic/transports/stdio#11; no response: basic/patterns/cancellation#13); over Streamable
        HTTP by closing the request's stream (streamable-http#23), after which the server goes on
        serving (what it would send for the request has nowhere to go: #24 is not observable)."""
        stdio = isinstance(self.wire, StdioWire)
        if not (stdio or isinstance(self.wire, HttpWire)) or not self._has("tools"):
            return
        name = "modern/cancellation/stops-and-stays-silent"
        reqs = (
            ["basic/transports/stdio#11", "basic/patterns/cancellation#13"]
            if stdio
            else ["basic/transports/streamable-http#23", "basic/transports/streamable-http#24"]
        )
        spec = self.slow
        why = ""
        if spec is None:
            why = f"needs {ROLES['slow']} (--slow-tool NAME, or [tools.slow] in --config)"
        elif self.tools and spec.name not in self.tools:
            why = f"the server lists no tool {spec.name!r} (--slow-tool)"
        if why or spec is None:
            self.report.check(name, "skip", [R + r for r in reqs], why)
            return
        async with self.check(name, reqs) as skipped:
            if isinstance(self.wire, StdioWire):
                await self._cancel_stdio(self.wire, spec, skipped)
            else:
                await self._cancel_http(spec, skipped)

    async def _cancel_stdio(self, wire: StdioWire, spec: ToolSpec, skipped: list[str]) -> None:
        token = f"mcp-ref-cancel-{self._next + 1}"
        sent = self.message("tools/call", {"name": spec.name, "arguments": dict(spec.arguments)}, progressToken=token)
        key = wire._key(sent["id"])
        start = len(wire.inbox)

        def progressed(since: int) -> list[Any]:
            return [
                m
                for m in wire.inbox[since:]
                if type(m) is dict and json.dumps(_obj(m.get("params")).get("progressToken")) == json.dumps(token)
            ]

        await wire.write(sent)
        with trio.move_on_after(CANCEL_AFTER):
            while key not in wire.responses and not progressed(start):
                await trio.sleep(0.02)
        if key in wire.responses:
            self.judge.answer(sent, Answer(wire.responses.pop(key), others=wire.inbox[start:]))
            skipped.append(f"{spec.name} answered before it could be cancelled (a slower tool is needed)")
            return
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": sent["id"], "reason": "mcp-ref check: cancellation"},
        }
        await wire.write(cancel)
        cancelled_at = trio.current_time()
        mark = len(wire.inbox)
        late: list[tuple[float, Any]] = []
        answered: tuple[float, Any] | None = None
        seen = mark
        while trio.current_time() - cancelled_at < self.cancel_wait:
            await trio.sleep(0.02)
            now = trio.current_time() - cancelled_at
            for m in progressed(seen):
                late.append((now, m))
            seen = len(wire.inbox)
            if answered is None and key in wire.responses:
                answered = (now, wire.responses.pop(key))
        for m in wire.inbox[start:mark]:
            self.judge.other(m, asked_log=False)
        after = [(t, m) for t, m in late if t > CROSSING]
        if after:
            t, m = after[0]
            # [2026-07-28:basic/transports/stdio#11] nothing more for a cancelled request
            self.find(
                "basic/transports/stdio#11",
                f"the server sent {m.get('method')} for request {sent['id']!r} {t:.2f} s after it was cancelled"
                f" ({len(after)} message(s) in {self.cancel_wait:g} s)",
                m,
            )
        if answered is not None and answered[0] > CROSSING:
            # [2026-07-28:basic/patterns/cancellation#13] no response for a cancelled request
            self.find(
                "basic/patterns/cancellation#13",
                f"the server answered request {sent['id']!r} {answered[0]:.2f} s after it was cancelled",
                answered[1],
            )

    async def _cancel_http(self, spec: ToolSpec, skipped: list[str]) -> None:
        assert isinstance(self.wire, HttpWire)
        token = f"mcp-ref-cancel-{self._next + 1}"
        sent = self.message("tools/call", {"name": spec.name, "arguments": dict(spec.arguments)}, progressToken=token)
        # (the exchange is given up after CANCEL_AFTER seconds: its connection, and so the request's
        # stream, is closed; that is this transport's cancellation)
        got = await self.wire.call(sent, CANCEL_AFTER, tools=self.tools)
        if got is not None and got.message is not None:
            self.judge.answer(sent, got)
            skipped.append(f"{spec.name} answered before it could be cancelled (a slower tool is needed)")
            return
        if got is not None:
            for m in got.others:
                self.judge.other(m, asked_log=False)
        # [2026-07-28:basic/transports/streamable-http#23] the closed stream cancels that request, and
        # only it: the server goes on serving
        after = await self.send(self.message(self._cheap()))
        if after is None:
            skipped.append(f"nothing was answered after the stream of a {spec.name} call was closed")

    # -- logging and subscriptions -----------------------------------------------------------------------

    async def logging(self) -> None:
        if not self._has("logging"):
            return
        async with self.check("modern/logging/invalid-level", ["server/utilities/logging#6"]) as skipped:
            sent = self.message(self._cheap())
            sent["params"]["_meta"][LOGLEVEL] = "mcp-ref-loud"
            got = await self.send(sent)
            if got is None:
                skipped.append("no answer")
            elif got.code != -32602:
                what = "was served" if got.result is not None else f"got error {got.code}, not -32602"
                self.find(
                    "server/utilities/logging#6", f"a request with the log level 'mcp-ref-loud' {what}", got.message
                )

    async def subscriptions(self) -> None:
        wanted: dict[str, Any] = {}
        for cap, key in (
            ("tools", "toolsListChanged"),
            ("prompts", "promptsListChanged"),
            ("resources", "resourcesListChanged"),
        ):
            if self._has(cap, "listChanged") and self.capabilities[cap]["listChanged"] is True:
                wanted = {key: True}
                break
        if not wanted:
            return
        reqs = ["basic/patterns/subscriptions#2", "basic/index#61", "basic/patterns/subscriptions#1"]
        async with self.check("modern/subscriptions/listen", reqs) as skipped:
            sent = self.message("subscriptions/listen", {"notifications": wanted})
            self.judge.listens.add(json.dumps(sent["id"]))
            assert self.wire is not None
            if isinstance(self.wire, StdioWire):
                got: Answer | None = await self.wire.listen(sent, LISTEN, self.wait)
            else:
                got = await self.wire.call(sent, self.wait + LISTEN, keep_open=LISTEN)
            if got is None:
                skipped.append("no answer")
                return
            self.judge.subscription(sent, got.others, wanted)
            if got.message is not None:
                self.judge.answer(sent, attrs.evolve(got, others=[], open_after=False))
            elif self.judge.http and got.status is not None:
                self.judge.http_answer("subscriptions/listen", attrs.evolve(got, open_after=False))

    # -- Streamable HTTP ---------------------------------------------------------------------------------

    async def mismatch(
        self,
        name: str,
        requirement: str,
        sent: dict[str, Any],
        headers: dict[str, str | None],
        what: str,
        also: tuple[int, ...] = (),
    ) -> None:
        async with self.check(name, [requirement, "basic/transports/streamable-http#61"]) as skipped:
            got = await self.send(sent, headers=headers)
            if got is None:
                skipped.append("no answer")
            elif got.result is not None:
                self.find(requirement, f"a request whose {what} was served", got.message)
            elif got.code != -32020 and got.code not in also:
                self.find(
                    "basic/transports/streamable-http#65",
                    f"a request whose {what} got error {got.code} (HTTP {got.status}), not -32020 (HeaderMismatch)",
                    got.message,
                )

    async def http_checks(self) -> None:
        wire = self.wire
        assert isinstance(wire, HttpWire)
        cheap = self._cheap()
        if not self.dual:
            await self.mismatch(
                "modern/http/version-header",
                "basic/transports/streamable-http#27",
                self.message(cheap),
                {"mcp-protocol-version": "2025-11-25"},
                f"MCP-Protocol-Version header (2025-11-25) differs from its _meta ({MODERN})",
            )
        else:
            # (a dual-era server may take a header of an earlier revision for a request of that revision:
            # here the header names this revision and the body another; -32022 for the body is a refusal too)
            await self.mismatch(
                "modern/http/version-header",
                "basic/transports/streamable-http#27",
                self.message(cheap, version=UNKNOWN_VERSION),
                {"mcp-protocol-version": MODERN},
                f"MCP-Protocol-Version header ({MODERN}) differs from its _meta ({UNKNOWN_VERSION})",
                also=(-32022,),
            )
        other = "prompts/list" if cheap != "prompts/list" else "tools/list"
        await self.mismatch(
            "modern/http/method-header",
            "basic/transports/streamable-http#63",
            self.message(cheap),
            {"mcp-method": other},
            f"Mcp-Method header ({other}) differs from its method ({cheap})",
        )
        callable_ = [n for n in self.called if n in self.tools]
        if callable_:
            from .exercise import arguments_for

            name = callable_[0]
            args = arguments_for(self.tools[name].get("inputSchema")) or {}
            await self.mismatch(
                "modern/http/name-header",
                "basic/transports/streamable-http#63",
                self.message("tools/call", {"name": name, "arguments": args}),
                {"mcp-name": "mcp-ref-check-other-tool"},
                f"Mcp-Name header differs from the tool name ({name})",
            )
            async with self.check("modern/http/base64-name", ["basic/transports/streamable-http#54"]) as skipped:
                got = await self.send(
                    self.message("tools/call", {"name": name, "arguments": args}), headers={"mcp-name": sentinel(name)}
                )
                if got is None:
                    skipped.append("no answer")
                elif got.code == -32020:
                    self.find(
                        "basic/transports/streamable-http#54",
                        "an Mcp-Name header in the Base64 form (=?base64?...?=) was not decoded before the comparison",
                        got.message,
                    )
        for name, tool in self.tools.items():
            headers = mirrored(tool.get("inputSchema"))
            if not headers or name not in self.called:
                continue
            from .exercise import arguments_for

            args = arguments_for(tool.get("inputSchema")) or {}
            prop, header = next(iter(headers.items()))
            if args.get(prop) is None:
                continue
            await self.mismatch(
                "modern/http/param-header",
                "basic/transports/streamable-http#60",
                self.message("tools/call", {"name": name, "arguments": args}),
                {f"mcp-param-{header.lower()}": "mcp-ref-check-other-value"},
                f"Mcp-Param-{header} header differs from the argument {prop}",
            )
            break
        if not self.dual:
            async with self.check("modern/http/no-version-header", ["basic/transports/streamable-http#31"]) as skipped:
                got = await self.send(self.message(cheap), headers={"mcp-protocol-version": None})
                if got is None:
                    skipped.append("no answer")
                elif got.result is not None and "resultType" in got.result:
                    self.find(
                        "basic/transports/streamable-http#31",
                        "a request without the MCP-Protocol-Version header was served",
                        got.message,
                    )
        async with self.check("modern/http/notification", ["basic/transports/streamable-http#13"]) as skipped:
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "mcp-ref-check-never-sent", "_meta": meta()},
            }
            got = await wire.notify(note, {"mcp-method": "notifications/cancelled"})
            if got.status is None:
                skipped.append("no answer")
            elif got.status != 202 or got.body.strip():
                self.find(
                    "basic/transports/streamable-http#13",
                    f"a notification was answered HTTP {got.status}"
                    + (" with a body" if got.body.strip() else "")
                    + ", not 202 with none",
                    _brief(got.body.decode("utf-8", "replace")),
                )
        async with self.check("modern/http/foreign-origin", ["basic/transports/streamable-http#3"]) as skipped:
            from urllib.parse import urlsplit

            host = urlsplit(wire.target.url).hostname or ""
            if host not in ("127.0.0.1", "::1", "localhost"):
                skipped.append("the server is not on loopback (an Origin policy is its own)")
            got = (
                await self.send(self.message(cheap), headers={"origin": "http://mcp-ref-check.invalid"}, judge=False)
                if not skipped
                else None
            )
            if got is None and not skipped:
                skipped.append("no answer")
            elif got is not None and got.status != 403:
                self.find(
                    "basic/transports/streamable-http#3",
                    f"a request from Origin http://mcp-ref-check.invalid was answered HTTP {got.status}, not 403",
                    got.message if got.message is not None else got.status,
                )
        if self.dual:
            self.report.notes.append(
                "2026-07-28: the server speaks an earlier revision too: the advice for servers of this revision "
                "only (streamable-http#72: 405 for GET and DELETE, no session ids) does not apply"
            )
            return
        async with self.check("modern/http/get-and-delete", ["basic/transports/streamable-http#72"]) as skipped:
            for verb in ("GET", "DELETE"):
                got = await wire.plain(verb)
                if got is None:
                    skipped.append(f"{verb}: no answer")
                elif got.status != 405:
                    self.find(
                        "basic/transports/streamable-http#72",
                        f"{verb} on the endpoint was answered HTTP {got.status}, not 405",
                        f"{verb} -> {got.status} {got.content_type}",
                    )
        async with self.check("modern/http/old-session-id", ["basic/transports/streamable-http#72"]) as skipped:
            got = await self.send(self.message(cheap), headers={"mcp-session-id": "mcp-ref-check-old-session"})
            if got is None:
                skipped.append("no answer")
            elif got.result is None:
                skipped.append(f"answered error {got.code}")

    async def stdio_leftovers(self) -> None:
        """What the server wrote on its own between requests is judged too."""
        wire = self.wire
        assert isinstance(wire, StdioWire)
        await trio.sleep(0.1)
        wire.flush()
        for m in wire.inbox:
            if type(m) is dict and "id" in m and "method" in m:
                self.judge.other(m, asked_log=False)

    def output_check(self) -> None:
        """What the server wrote besides its answers (judged as it came, whatever check was running)."""
        stdio = isinstance(self.wire, StdioWire)
        reqs = sorted(r for r in STRAY_RULES if ("streamable-http" if stdio else "stdio") not in r)
        if not stdio:
            # (HttpWire's: one JSON object an answer, and on a request's stream no response to another)
            reqs += [R + "basic/transports/streamable-http#16", R + "basic/index#7"]
        bad = [f for f in self._findings if f.requirement in reqs]
        where = "on stdout" if stdio else "on its response streams, one JSON object each, no other request's response"
        detail = "; ".join(f.message for f in bad[:2]) or f"only JSON-RPC messages, no request, {where}"
        self.report.check(f"modern/{'stdio' if stdio else 'http'}/output", "fail" if bad else "pass", reqs, detail)


def input_response(request: Any) -> Any:
    """What a client that says yes answers an input request with."""
    from .exercise import arguments_for

    method = request.get("method") if type(request) is dict else None
    params = _obj(_obj(request).get("params"))
    if method == "elicitation/create":
        if params.get("mode", "form") != "form":
            return {"action": "decline"}
        content = arguments_for(params.get("requestedSchema")) or {}
        return {"action": "accept", "content": content}
    if method == "sampling/createMessage":
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "mcp-ref-check"},
            "model": "mcp-ref-check",
            "stopReason": "endTurn",
        }
    if method == "roots/list":
        return {"roots": []}
    return {}


def _forge(state: str) -> str:
    """``state`` with one character in its middle changed (what an attacker edits)."""
    i = len(state) // 2
    c = state[i]
    return state[:i] + ("B" if c != "B" else "C") + state[i + 1 :]


async def run_modern(
    target: Target,
    report: Report,
    *,
    timeout: float = 10.0,
    call_all_tools: bool = False,
    say: Callable[[str], None] | None = None,
    stderr_tail: deque[str] | None = None,
    slow: ToolSpec | None = None,
    cancel_wait: float = 2.0,
) -> ModernBattery | None:
    """Check ``target`` as a 2026-07-28 server into ``report``; None when it is not one."""
    battery = ModernBattery(
        target,
        report,
        timeout=timeout,
        call_all_tools=call_all_tools,
        say=say,
        stderr_tail=stderr_tail,
        slow=slow,
        cancel_wait=cancel_wait,
    )
    try:
        found = await battery.run()
    finally:
        report.section = None
    return battery if found else None
