"""``mcp-ref fixture`` and ``mcp-ref check --client``: a strict server that checks the client.

The fixture serves mcp_ref's everything example (so a client author can try
every feature by hand) on a channel watched by an
:class:`~mcp_ref.crosscheck.observer.Observer`, and, once the client has sent
``notifications/initialized``, runs a battery against it, driven by the
capabilities it declared: ping, roots, sampling (plain, the tool-use loop,
``toolChoice: none``, tools it did not declare), elicitation (the modes it
declared, and one it did not), a cancellation, an unknown method, and
task-augmented sampling and elicitation when it declares tasks for them.
Every answer is judged; the report is written when the session ends.

* ``mcp-ref fixture [--once] [--json FILE] ...``: the fixture on stdio, as the
  server command of the client under test (``--once``: leave when the
  battery is done, which ends the session);
* ``mcp-ref fixture --http --port N``: the same over Streamable HTTP;
* ``mcp-ref check --client -- CLIENT ARGS...``: starts the fixture, runs the
  client with ``{fixture}`` in its arguments replaced by the fixture's stdio
  command (or ``{url}`` by its HTTP URL), and reports on the client.
"""

import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final

import attrs
import trio

from ..basic.json_schema import compile_schema
from ..basic.lifecycle import has_capability
from ..errors import ConnectionClosed, MCPError, ProtocolError, RequestTimeout
from ..schema.content import TextContent, ToolResultContent, ToolUseContent
from ..schema.elicitation import ElicitRequestFormParams, ElicitRequestURLParams
from ..schema.sampling import CreateMessageRequestParams, SamplingMessage, ToolChoice
from ..schema.tools import Tool
from ..session.core import Session, SessionConfig
from .channel import ObservedChannel
from .modern_fixture import FixtureRuntime, ModernFixture, is_modern_opening, serve_modern_stdio
from .observer import Direction, Observer
from .report import Finding, Report, Status
from .targets import TargetUnreachable

__all__ = ["FixtureOptions", "ClientBattery", "serve_fixture_stdio", "check_client", "run_check_client"]

#: the form the fixture asks the client's user to fill in
FORM_SCHEMA: Final = {
    "type": "object",
    "properties": {"name": {"type": "string", "title": "Your name"}},
    "required": ["name"],
}
#: the codes a client may refuse a plain sampling request with (client/sampling#13: -1 the user
#: rejected it; -32602 / -32603 what the request or the client could not do)
_SAMPLING_REFUSALS: Final = frozenset({-1, -32602, -32603})
#: an error message that says the user said no (then the code is -1: client/sampling#13)
_USER_REFUSAL: Final = re.compile(
    r"\b(user|human)\b.*\b(reject|declin|denie|refus)|\b(rejected|declined) by the user", re.IGNORECASE
)
#: a request of a capability the client did not declare: (method, capability, the statement an answer
#: breaks, the statement that names the codes of its refusal (None: none does), those codes). Only roots
#: and elicitation name a code; sampling's refusal may have any (spec_notes/crosscheck.md "The code of a
#: refused undeclared capability", trial30c D8)
_UNDECLARED: Final[tuple[tuple[str, str, str, str | None, frozenset[int]], ...]] = (
    ("roots/list", "roots", "client/roots#1", "client/roots#4", frozenset({-32601})),
    ("sampling/createMessage", "sampling", "client/sampling#5", None, frozenset()),
    # a client without elicitation declares no mode: elicitation#34 names -32602; -32601 (the method
    # is not served) says as much
    (
        "elicitation/create",
        "elicitation",
        "client/elicitation#4",
        "client/elicitation#34",
        frozenset({-32601, -32602}),
    ),
)
#: the revisions whose elicitation chapter names the code for an undeclared mode (client/elicitation#34)
_ELICITATION_CODES: Final = frozenset({"2025-11-25"})
_UNDECLARED_PARAMS: Final[dict[str, Any]] = {
    "roots/list": {},
    "sampling/createMessage": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "mcp-ref fixture"}}],
        "maxTokens": 10,
    },
    "elicitation/create": {
        "mode": "form",
        "message": "mcp-ref fixture",
        "requestedSchema": {"type": "object", "properties": {}},
    },
}
WEATHER: Final = Tool(
    name="get_weather",
    description="Current weather for a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@attrs.frozen
class FixtureOptions:
    #: seconds to wait for any one answer of the client (a person may be answering)
    timeout: float = 30.0
    #: run the battery (False: only serve and judge the traffic)
    battery: bool = True
    #: seconds to watch for an answer after cancelling a request
    cancel_wait: float = 1.0
    #: seconds the whole session may take (``check --client``'s ``--client-timeout``): then the
    #: battery stops where it is and the report is written (None: no bound)
    stop_after: float | None = None


#: seconds a client is given to leave once the fixture has ended its session (and written its report)
LEAVE_GRACE: Final = 3.0
#: seconds an answer is waited for once the client has left a request unanswered (--timeout if shorter)
AFTER_SILENCE: Final = 2.0
#: requests in a row a client may leave unanswered before the battery asks it nothing more
#: (each waited for ``--timeout``: a client that answers nothing must not cost them all)
SILENT_STRIKES: Final = 2


def _caps(session: Session) -> dict[str, Any]:
    from ..schema import _base
    from ..schema._converter import converter_for

    latest = getattr(_base, "LATEST_LEGACY_REVISION", _base.LATEST_PROTOCOL_VERSION)
    declared = session.connection.peer_capabilities
    caps: dict[str, Any] = converter_for(latest).unstructure(declared) if declared else {}
    return caps


def _has(caps: dict[str, Any], *path: str) -> bool:
    return has_capability(caps, path)


class ClientBattery:
    """The checks one client session gets, once it is initialised."""

    def __init__(self, session: Session, channel: ObservedChannel, report: Report, options: FixtureOptions) -> None:
        self.session = session
        self.channel = channel
        self.observer = channel.observer
        self.report = report
        self.options = options
        self._raw_ids = 0
        #: findings the steps recorded themselves (a check that records one fails)
        self._added = 0
        #: requests the client left unanswered in a row (SILENT_STRIKES: nothing more is asked)
        self.unanswered = 0

    @property
    def wait(self) -> float:
        """Seconds the next answer is waited for: ``--timeout``, or, once the client has left a request
        unanswered, no more than AFTER_SILENCE (a client that answers again gets the full time back)."""
        return self.options.timeout if not self.unanswered else min(self.options.timeout, AFTER_SILENCE)

    def _check(self, name: str, status: Status, requirements: Sequence[str], detail: str = "") -> None:
        self.report.check(name, status, requirements, detail)

    def _add(self, finding: Finding) -> None:
        """Record a violation a step saw itself: the check it belongs to fails."""
        self._added += 1
        self.report.add(finding)

    def _answer(self, rid: Any) -> Any:
        return self.observer.answer_to(Direction.TO_SERVER, rid)

    async def _raw_request(self, method: str, params: dict[str, Any]) -> Any:
        """A request our engine would refuse to send (a probe); the client's answer, or None."""
        self._raw_ids += 1
        rid = f"mcp-ref-fixture-{self._raw_ids}"
        data = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
        self.channel.expect_deliberate(data)
        await self.session.send_raw(data)
        with trio.move_on_after(self.wait):
            while (answer := self._answer(rid)) is None:
                await trio.sleep(0.02)
            return answer
        return None

    async def _run(self, name: str, requirements: Sequence[str], step: Any) -> None:
        """Run one step. Whatever the client does, the step ends with a status, and a failed step
        names the statement broken (spec_notes/crosscheck.md, "A failed check is a finding")."""
        start, added = len(self.observer.findings), self._added
        requirements = list(requirements)
        status: Status = "pass"
        if self.unanswered >= SILENT_STRIKES:
            # (bounded time: the client has shown it answers nothing; each request would cost --timeout)
            why = f"not asked: the client left its last {self.unanswered} requests unanswered"
            self._check(name, "skip", requirements, why)
            return
        try:
            detail = await step() or ""
            self.unanswered = 0
        except RequestTimeout as e:
            self.unanswered += 1
            requirement = "basic/utilities/ping#1" if e.method == "ping" else "basic/index#3"
            detail = f"{e.method}: no answer within {e.timeout:g}s (to wait longer: --timeout SECONDS)"
            refused = [f for f in self.observer.findings[start:] if f.party == "client"]
            if not refused:  # an answer that came but could not be read is the finding, not silence
                self._add(Finding.of(requirement, f"the client did not answer {e.method}", party="client"))
                requirements.append(requirement)
            requirements += [f.requirement for f in refused if f.requirement not in requirements]
        except MCPError as e:
            # a client may fail a request (its user, its model ...): not a violation in itself
            detail, status = f"inconclusive: answered with error {e.code} ({e.message})", "skip"
            self.unanswered = 0
        except ProtocolError as e:
            self.unanswered = 0
            refused = [f for f in self.observer.findings[start:] if f.party == "client"]
            if not refused:
                requirement = e.requirement or "basic/index#3"
                self._add(Finding.of(requirement, f"a malformed answer: {e}", party="client"))
                requirements.append(requirement)
            requirements += [f.requirement for f in refused if f.requirement not in requirements]
            detail = f"{type(e).__name__}: {e}"
        seen = [f for f in self.observer.findings[start:] if f.requirement in requirements and f.party != "server"]
        # a check fails when it records a violation itself, as well as when the observer
        # sees one of its requirements broken meanwhile
        if seen or self._added > added:
            status = "fail"
        self._check(name, status, requirements, detail)

    async def run(self) -> None:
        caps = _caps(self.session)
        await self._run("ping/answered-promptly", ["basic/utilities/ping#1"], self._ping)
        await self._run("jsonrpc/unknown-method", ["basic/index#3"], self._unknown_method)
        if _has(caps, "roots"):
            await self._run("roots/list", ["client/roots#3"], self._roots)
        else:
            self._check("roots/list", "skip", ["client/roots#3"], "the client declares no roots")
        for method, cap, requirement, wrong_code, codes in _UNDECLARED:
            if cap == "elicitation" and self.observer.revision not in _ELICITATION_CODES:
                wrong_code = None
            if not _has(caps, cap):
                await self._run(
                    f"{cap}/undeclared",
                    [requirement, *([wrong_code] if wrong_code else [])],
                    lambda m=method, c=cap, r=requirement, w=wrong_code, k=codes: self._undeclared(m, c, r, w, k),
                )
        if _has(caps, "sampling"):
            await self._run("sampling/plain", ["basic/lifecycle#14", "client/sampling#13"], self._sample)
            if _has(caps, "sampling", "tools"):
                await self._run("sampling/tool-loop", ["client/sampling#10"], self._tool_loop)
                await self._run("sampling/tool-choice-none", ["client/sampling#10"], self._tool_choice_none)
            else:
                await self._run("sampling/tools-not-declared", ["schema#25"], self._tools_not_declared)
            await self._run("cancellation/client-stops", ["basic/utilities/cancellation#4"], self._cancel)
        else:
            self._check("sampling/plain", "skip", ["client/sampling#10"], "the client declares no sampling")
        declared = caps.get("elicitation") if _has(caps, "elicitation") else None
        if declared is not None:
            modes = {m for m in ("form", "url") if m in declared} or {"form"}  # {} means form (before 2025-11-25)
            if "form" in modes:
                await self._run("elicitation/form", ["client/elicitation#56"], self._elicit_form)
            if "url" in modes:
                await self._run("elicitation/url", ["basic/lifecycle#14"], self._elicit_url)
            missing = {"form", "url"} - modes
            if missing:
                mode = missing.pop()
                await self._run(
                    f"elicitation/undeclared-{mode}-mode",
                    ["client/elicitation#34"],
                    lambda: self._undeclared_mode(mode),
                )
        else:
            self._check("elicitation/form", "skip", ["client/elicitation#56"], "the client declares no elicitation")
        if _has(caps, "tasks", "requests", "sampling", "createMessage") and _has(caps, "sampling"):
            await self._run(
                "tasks/sampling-as-task",
                ["basic/utilities/tasks#43", "basic/utilities/tasks#67"],
                self._sample_as_task,
            )
        else:
            self._check(
                "tasks/sampling-as-task",
                "skip",
                ["basic/utilities/tasks#43"],
                "the client declares no tasks.requests.sampling.createMessage",
            )

    # -- the steps -----------------------------------------------------------------------

    async def _ping(self) -> str:
        start = trio.current_time()
        pending = await self.session.start_request("ping", None, timeout=self.wait)
        await pending.result()
        answer = self._answer(pending.id)
        result = answer.get("result") if type(answer) is dict else None
        if type(result) is dict and {k for k in result if k != "_meta"}:
            self._add(Finding.of("basic/utilities/ping#1", "ping was answered with a result that is not empty", answer))
        return f"{(trio.current_time() - start) * 1000:.0f} ms"

    async def _unknown_method(self) -> str:
        # the observer judges the answer (-32601, basic/index#3)
        if await self._raw_request("mcp-ref/no-such-method", {}) is None:
            raise RequestTimeout("mcp-ref/no-such-method", self.wait)
        return ""

    async def _roots(self) -> str:
        result = await self.session.request("roots/list", None, timeout=self.wait)
        return f"{len(result.roots)} root(s)"

    async def _sample(self) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text="Say hello."))], max_tokens=50
        )
        pending = await self.session.start_request("sampling/createMessage", params, timeout=self.wait)
        try:
            result = await pending.result()
        except MCPError as e:
            if e.code not in _SAMPLING_REFUSALS:
                # [client/sampling#13] a refused sampling request says why with the listed codes
                text = f"a sampling request was refused with error code {e.code}, not one sampling lists (-1 ...)"
                self._add(Finding.of("client/sampling#13", text, self._answer(pending.id), party="client"))
            elif e.code != -1 and _USER_REFUSAL.search(e.message or ""):
                # [client/sampling#13] the user's own rejection is -1, whatever else may be -32602/-32603
                text = f"a sampling request the user rejected ({e.message!r}) got error code {e.code}, not -1"
                self._add(Finding.of("client/sampling#13", text, self._answer(pending.id), party="client"))
            return f"refused with error {e.code}"
        return f"model {result.model}"

    async def _undeclared(
        self, method: str, cap: str, requirement: str, wrong_code: str | None, codes: frozenset[int]
    ) -> str:
        """A request of a capability the client did not declare: it must get an error, with one of
        ``codes`` where ``wrong_code`` (a statement) names them."""
        params = _UNDECLARED_PARAMS[method]
        answer = await self._raw_request(method, params)
        error = answer.get("error") if type(answer) is dict else None
        if type(answer) is dict and "result" in answer:
            if any(f.requirement == requirement and answer in f.evidence for f in self.observer.findings):
                self._added += 1  # the observer found it on this very answer: one message, one finding
                return ""
            text = f"{method} was answered, though the client did not declare {cap}"
            self._add(Finding.of(requirement, text, answer, party="client"))
        elif type(error) is dict and type(error.get("code")) is int and error["code"] not in codes:
            named = " or ".join(str(c) for c in sorted(codes, reverse=True))
            if wrong_code is None:
                return f"refused with error {error['code']} (no statement names the code; -32601 says 'not served')"
            text = f"{method}, of the undeclared {cap}, got error {error['code']}, not {named}"
            self._add(Finding.of(wrong_code, text, answer, party="client"))
        elif answer is None:
            raise RequestTimeout(method, self.wait)
        return ""

    async def _tool_loop(self) -> str:
        messages = [SamplingMessage(role="user", content=TextContent(text="What is the weather in Oslo?"))]
        rounds = 0
        for rounds in range(1, 4):
            params = CreateMessageRequestParams(
                messages=messages, max_tokens=200, tools=[WEATHER], tool_choice=ToolChoice(mode="auto")
            )
            result = await self.session.request("sampling/createMessage", params, timeout=self.wait)
            blocks = result.content if isinstance(result.content, list) else [result.content]
            uses = [b for b in blocks if isinstance(b, ToolUseContent)]
            if result.stop_reason != "toolUse" or not uses:
                return f"final answer after {rounds} round(s)"
            answers: list[Any] = [
                ToolResultContent(tool_use_id=u.id, content=[TextContent(text="sunny, 21 C")]) for u in uses
            ]
            messages = [
                *messages,
                SamplingMessage(role="assistant", content=blocks),
                SamplingMessage(role="user", content=answers),
            ]
        return f"still using tools after {rounds} rounds"

    async def _tool_choice_none(self) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text="What is the weather in Oslo?"))],
            max_tokens=200,
            tools=[WEATHER],
            tool_choice=ToolChoice(mode="none"),
        )
        pending = await self.session.start_request("sampling/createMessage", params, timeout=self.wait)
        result = await pending.result()
        blocks = result.content if isinstance(result.content, list) else [result.content]
        if any(isinstance(b, ToolUseContent) for b in blocks):
            text = "with toolChoice none, the sampling result uses a tool"
            self._add(Finding.of("client/sampling#10", text, self._answer(pending.id), party="client"))
        return ""

    async def _tools_not_declared(self) -> str:
        params = {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Weather in Oslo?"}}],
            "maxTokens": 50,
            "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
        }
        answer = await self._raw_request("sampling/createMessage", params)
        if type(answer) is dict and "result" in answer:
            text = "a tool-enabled sampling request was answered, though sampling.tools was not declared"
            self._add(Finding.of("schema#25", text, answer, party="client"))
        return "" if answer is not None else "no answer"

    async def _cancel(self) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text="Take your time."))], max_tokens=50
        )
        pending = await self.session.start_request("sampling/createMessage", params, timeout=self.wait)
        await trio.sleep(0.1)
        if self._answer(pending.id) is not None:
            return "answered before the cancellation could be sent"
        await pending.cancel("mcp-ref fixture: cancellation")
        # an answer after this is reported by the observer (cancellation#4)
        await trio.sleep(self.options.cancel_wait)
        return ""

    async def _elicit_form(self) -> str:
        from ..schema._converter import decode
        from ..schema.elicitation import ElicitationRequestedSchema

        schema = decode(FORM_SCHEMA, ElicitationRequestedSchema)
        params = ElicitRequestFormParams(message="mcp-ref fixture: your name?", requested_schema=schema)
        pending = await self.session.start_request("elicitation/create", params, timeout=self.wait)
        result = await pending.result()
        if result.action == "accept":
            validate = compile_schema(FORM_SCHEMA)
            errors = validate(result.content or {}) if validate is not None else []
            if errors:
                text = f"the accepted form answer does not fit the requested schema: {errors[0]}"
                self._add(Finding.of("client/elicitation#56", text, self._answer(pending.id), party="client"))
        return f"action {result.action}"

    async def _elicit_url(self) -> str:
        params = ElicitRequestURLParams(
            message="mcp-ref fixture: please look at this page",
            url="https://example.com/mcp-ref-fixture",
            elicitation_id="mcp-ref-fixture-url",
        )
        result = await self.session.request("elicitation/create", params, timeout=self.wait)
        return f"action {result.action}"

    async def _undeclared_mode(self, mode: str) -> str:
        if mode == "url":
            params: dict[str, Any] = {
                "mode": "url",
                "message": "mcp-ref fixture",
                "url": "https://example.com/mcp-ref-fixture",
                "elicitationId": "mcp-ref-fixture-undeclared",
            }
        else:
            params = {"mode": "form", "message": "mcp-ref fixture", "requestedSchema": FORM_SCHEMA}
        answer = await self._raw_request("elicitation/create", params)
        error = answer.get("error") if type(answer) is dict else None
        if type(answer) is dict and "result" in answer:
            text = f"an elicitation in {mode} mode, which it did not declare, was answered"
            self._add(Finding.of("client/elicitation#34", text, answer, party="client"))
        elif type(error) is dict and type(error.get("code")) is int and error.get("code") != -32602:
            text = f"an elicitation in undeclared {mode} mode got error {error.get('code')}, not -32602"
            self._add(Finding.of("client/elicitation#34", text, answer, party="client"))
        return "" if answer is not None else "no answer"

    async def _sample_as_task(self) -> str:
        from ..session.task_requestor import start_task

        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text="Say hello, as a task."))], max_tokens=50
        )
        handle = await start_task(self.session, "sampling/createMessage", params, ttl=60_000)
        try:
            with trio.fail_after(self.wait):
                result = await handle.result()
        except trio.TooSlowError:
            raise RequestTimeout("tasks/result", self.wait) from None
        return f"task {handle.task_id}: model {result.model}"


# -- serving ----------------------------------------------------------------------------------


class _Replay(trio.abc.Channel[bytes]):
    """A channel whose first message was already read (to choose the era): it comes out first."""

    def __init__(self, channel: trio.abc.Channel[bytes], first: bytes) -> None:
        self.channel = channel
        self.first: bytes | None = first

    async def send(self, value: bytes) -> None:
        await self.channel.send(value)

    async def receive(self) -> bytes:
        if self.first is not None:
            first, self.first = self.first, None
            return first
        return await self.channel.receive()

    async def aclose(self) -> None:
        await self.channel.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.channel, name)


class _FixtureServer:
    """What the HTTP server (and stdio) serves per session: the everything example, watched."""

    def __init__(self, nursery: trio.Nursery, options: FixtureOptions, reports: list[Report]) -> None:
        from ..examples.everything import build_server

        self.server = build_server(nursery)
        self.options = options
        self.reports = reports
        self.once_done = trio.Event()
        #: (HTTP) the 2026-07-28 side, made at the first modern request
        self.modern: ModernFixture | None = None
        #: (stdio) seconds the client's first message is waited for (None: as long as it takes)
        self.first_wait: float | None = None

    def modern_runtime(self) -> FixtureRuntime:
        """[2026-07-28] a POST without a session is a modern request: the fixture's own server judges it."""
        if self.modern is None:
            report = Report("the client")
            self.reports.append(report)
            self.modern = ModernFixture(report, http=True)
        return FixtureRuntime(self.modern)

    async def serve_stdio(self, channel: trio.abc.Channel[bytes]) -> None:
        """stdio: a client opening with a 2026-07-28 request is served by the modern fixture."""
        first: bytes | None = None
        with trio.move_on_after(math.inf if self.first_wait is None else self.first_wait):
            try:
                first = await channel.receive()
            except (trio.EndOfChannel, trio.BrokenResourceError, trio.ClosedResourceError):
                return
        if first is None:
            # [basic/lifecycle#2] the client, which started this server, opens the session: it sent nothing
            report = Report("the client")
            text = f"the client started the server and sent nothing within {self.first_wait:g}s: no initialize"
            report.check("lifecycle/client-opens", "fail", ["basic/lifecycle#2"], text + " (--timeout)")
            report.add(Finding.of("basic/lifecycle#2", text, party="client"))
            self.reports.append(report)
            self.once_done.set()
            return
        try:
            opening = json.loads(first)
        except ValueError:
            opening = None
        if is_modern_opening(opening):
            report = Report("the client")
            self.reports.append(report)
            fixture = ModernFixture(report, http=False)
            try:
                await serve_modern_stdio(channel, first, fixture)
            finally:
                fixture.finish()
            return
        await self.serve(_Replay(channel, first), stdio=True)

    async def serve(self, channel: trio.abc.Channel[bytes], *, stdio: bool = False) -> None:
        observer = Observer(transport="stdio" if stdio else "http")
        watched = ObservedChannel(channel, observer, Direction.TO_CLIENT, stdio=stdio)
        report = Report("the client")
        self.reports.append(report)
        config = SessionConfig(request_timeout=self.options.timeout, eof_grace=1.0)
        session: Session | None = None
        try:
            async with trio.open_nursery() as nursery:
                session = await nursery.start(
                    lambda task_status: self.server.serve(watched, config=config, task_status=task_status)
                )
                assert session is not None
                if self.options.battery:
                    nursery.start_soon(self._battery, session, watched, report)
                await session.closed.wait()
                nursery.cancel_scope.cancel()
        finally:
            # (synchronous: done even when the fixture is being cancelled, --once)
            for direction in Direction:
                observer.flush(direction)
            report.revision = observer.revision
            info = session.connection.peer_info if session is not None else None
            if info is not None:
                report.target = f"the client {info.name} {info.version}"
            for finding in observer.findings:
                if finding.party == "server":
                    # what the fixture itself did (a race with the client, say): not the client's fault
                    report.notes.append(f"mcp-ref's own fixture: {finding.requirement}: {finding.message}")
                else:
                    report.add(observer.in_era(finding))
            report.notes.extend(observer.notes)

    async def _battery(self, session: Session, channel: ObservedChannel, report: Report) -> None:
        try:
            with trio.move_on_after(self.options.timeout):
                await session.initialized.wait()
            if not session.initialized.is_set():
                report.notes.append("the client never sent notifications/initialized: no battery ran")
                return
            await ClientBattery(session, channel, report, self.options).run()
        except ConnectionClosed as e:
            report.notes.append(f"the client left before the battery was done: {e}")
        finally:
            self.once_done.set()


async def serve_fixture_stdio(options: FixtureOptions, *, once: bool) -> Report:
    """The fixture on this process's stdin/stdout, until the client leaves (or, ``once``, the battery
    ends; or ``options.stop_after`` seconds have passed)."""
    from ..basic.transports.stdio import open_stdio_server_channel

    reports: list[Report] = []
    stopped = False
    async with trio.open_nursery() as nursery:
        fixture = _FixtureServer(nursery, options, reports)
        if once:
            # (check --client: a client that never opens the session does not hold the check)
            fixture.first_wait = options.timeout
        async with open_stdio_server_channel() as channel:
            with trio.move_on_after(math.inf if options.stop_after is None else options.stop_after) as bound:
                await _serve_stdio(fixture, channel, once)
            stopped = bound.cancelled_caught
        nursery.cancel_scope.cancel()
    report = reports[0] if reports else Report("the client", notes=["no client connected"])
    if stopped:
        report.notes.append(
            f"the fixture stopped after {options.stop_after:g}s (--client-timeout) before its battery was done:"
            " the checks it had not reached are not in the report"
        )
    return report


async def _serve_stdio(fixture: "_FixtureServer", channel: Any, once: bool) -> None:
    async with trio.open_nursery() as inner:

        async def serve_then_stop() -> None:
            await fixture.serve_stdio(channel)
            inner.cancel_scope.cancel()  # the client left

        inner.start_soon(serve_then_stop)
        if once:
            await fixture.once_done.wait()
            await channel.send_eof()  # [basic/lifecycle#16] the server may end by closing its output
            with trio.move_on_after(2):
                await trio.sleep_forever()
            inner.cancel_scope.cancel()


@asynccontextmanager
async def serve_fixture_http(
    options: FixtureOptions, reports: list[Report], fixtures: list["_FixtureServer"] | None = None
) -> AsyncIterator[str]:
    """The fixture over Streamable HTTP on a free loopback port; yields its URL."""
    async with serve_fixture_http_on(options, reports, 0, fixtures) as url:
        yield url


@asynccontextmanager
async def serve_fixture_http_on(
    options: FixtureOptions, reports: list[Report], port: int, fixtures: list["_FixtureServer"] | None = None
) -> AsyncIterator[str]:
    from ..session.http import serve_http

    async with trio.open_nursery() as nursery:
        fixture = _FixtureServer(nursery, options, reports)
        if fixtures is not None:
            fixtures.append(fixture)
        info = await nursery.start(lambda task_status: serve_http(fixture, port=port, task_status=task_status))
        try:
            yield info.url
        finally:
            await info.aclose(2.0)
            nursery.cancel_scope.cancel()


# -- mcp-ref check --client ----------------------------------------------------------------------


async def check_client(
    command: Sequence[str], options: FixtureOptions | None = None, *, client_timeout: float = 120.0
) -> Report:
    """Run the client ``command`` against the fixture: ``{fixture}`` in its arguments becomes the
    fixture's stdio command line, ``{url}`` its HTTP URL. TargetUnreachable when no client came."""
    options = options or FixtureOptions()
    words = list(command)
    if not any("{fixture}" in w or "{url}" in w for w in words):
        raise ValueError("the client command needs {fixture} (a stdio server command) or {url} (an HTTP URL)")
    reports: list[Report] = []
    fixtures: list[_FixtureServer] = []
    with tempfile.TemporaryDirectory(prefix="mcp-ref-fixture-") as tmp:
        out = os.path.join(tmp, "report.json")
        fixture = [sys.executable, "-m", "mcp_ref.cli", "fixture", "--once", "--json", out]
        # (the fixture bounds itself too: at --client-timeout it writes its report, whatever the client does)
        fixture += ["--timeout", f"{options.timeout:g}", "--stop-after", f"{client_timeout:g}"]
        if any("{url}" in w for w in words):
            from .client_http import ClientHttpJudge, sniffing

            judge = ClientHttpJudge()
            quiet = [trio.current_time(), 0.0]  # (when the client's request count last changed, the count)

            def ended() -> bool:
                """The fixture has asked everything and the client has sent nothing for --timeout."""
                now = trio.current_time()
                if judge.requests != quiet[1]:
                    quiet[:] = [now, judge.requests]
                done = bool(fixtures) and fixtures[0].once_done.is_set()
                return done and now - quiet[0] >= options.timeout

            async with serve_fixture_http(options, reports, fixtures) as inner, sniffing(inner, judge) as url:
                stayed = await _run_client([w.replace("{url}", url) for w in words], client_timeout, ended=ended)
                if fixtures and fixtures[0].modern is not None:
                    fixtures[0].modern.finish()
                with trio.move_on_after(2):
                    while reports and not reports[-1].checks:
                        await trio.sleep(0.05)
            if judge.requests:
                # what the client's HTTP requests showed (the fixture's server may have refused them
                # before any JSON-RPC was read: the report then holds only this)
                if not reports:
                    reports.append(Report("the client", notes=["the client never completed initialize"]))
                reqs = ["basic/transports#16", "basic/transports#59", "basic/transports#65"]
                status: Status = "fail" if judge.findings else "pass"
                reports[-1].check("transport/client-http-requests", status, reqs, f"{judge.requests} request(s)")
                reports[-1].extend(judge.findings)
            if stayed and reports:
                reports[-1].notes.append(
                    f"the client was still running {LEAVE_GRACE:g}s after the fixture had asked everything and"
                    f" heard nothing from it for {options.timeout:g}s (--timeout): stopped"
                )
        else:
            argv: list[str] = []
            for w in words:
                argv += fixture if w == "{fixture}" else [w.replace("{fixture}", shlex.join(fixture))]
            # (the fixture stops at client_timeout and closes its output: a client gets that long again
            # to leave before it is stopped; once the fixture has ended the session and written its
            # report, sooner or later, the client gets LEAVE_GRACE to leave)
            stayed = await _run_client(argv, client_timeout + LEAVE_GRACE, ended=lambda: os.path.exists(out))
            with trio.move_on_after(LEAVE_GRACE):
                # (a client stopped before its server: the fixture, which bounds itself, may still be writing)
                while not os.path.exists(out):
                    await trio.sleep(0.05)
            if os.path.exists(out):
                with open(out, encoding="utf-8") as f:
                    reports.append(Report.from_json(json.load(f)))
                if stayed:
                    # (not a finding: the server may end the session by closing its output, lifecycle#16,
                    # and no statement has the client exit then; lifecycle#15 is the client's own shutdown)
                    reports[-1].notes.append(
                        f"the client was still running {LEAVE_GRACE:g}s after the fixture had ended the session"
                        " (closed the client's input): stopped"
                    )
    if not reports:
        raise TargetUnreachable(f"the client {shlex.join(words)} never connected to the fixture")
    report = reports[-1]
    report.target = f"{report.target} ({shlex.join(words)})"
    return report


async def _run_client(argv: list[str], timeout: float, *, ended: Callable[[], bool] | None = None) -> bool:
    """Run the client to its end (its output goes to our stderr: stdout is the report's), for ``timeout``
    seconds at most, and no more than LEAVE_GRACE once ``ended()`` (the fixture has ended the session).
    True when the client was stopped after the fixture had ended: it stayed."""
    try:
        # (fd 2 itself: sys.stderr may be a stand-in without a file descriptor)
        process = await trio.lowlevel.open_process(argv, stdin=subprocess.DEVNULL, stdout=2)
    except OSError as e:
        raise TargetUnreachable(f"cannot start the client {argv[0]!r}: {e.strerror or e}") from None
    stayed = False
    with trio.move_on_after(timeout):
        async with trio.open_nursery() as nursery:

            async def leave_once_ended(check: Callable[[], bool]) -> None:
                nonlocal stayed
                while not check():
                    await trio.sleep(0.05)
                await trio.sleep(LEAVE_GRACE)
                stayed = True
                nursery.cancel_scope.cancel()

            if ended is not None:
                nursery.start_soon(leave_once_ended, ended)
            await process.wait()
            nursery.cancel_scope.cancel()
    if process.returncode is None:
        process.kill()
        await process.wait()
    return stayed


def run_check_client(
    command: Sequence[str], options: FixtureOptions | None = None, *, client_timeout: float = 120.0
) -> Report:
    """:func:`check_client` in a trio run of its own (for the command line)."""
    return trio.run(lambda: check_client(command, options, client_timeout=client_timeout))


def run_fixture(args: Any, err: Any) -> Report:
    """``mcp-ref fixture``: serve until the client leaves (stdio), Ctrl-C (HTTP), or the battery ends (--once)."""
    options = FixtureOptions(timeout=args.timeout, battery=not args.no_battery, stop_after=args.stop_after)
    if not args.http:
        return trio.run(lambda: serve_fixture_stdio(options, once=args.once))

    async def http() -> Report:
        import signal

        reports: list[Report] = []
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with serve_fixture_http_on(options, reports, args.port) as url:
                err.write(f"mcp-ref fixture: serving {url} (Ctrl-C stops)\n")
                err.flush()
                async for _ in signals:
                    break
        report = Report("the clients")
        for r in reports:
            report.extend(r.findings)
            report.checks.extend(r.checks)
            report.notes.extend(r.notes)
            report.revision = report.revision or r.revision
        return report

    return trio.run(http)
