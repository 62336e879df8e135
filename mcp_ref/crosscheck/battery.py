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
which option names it, when it is absent. The battery never calls a tool
it was not told about (tools can have side effects), except to ask for one
that does not exist.
"""

import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final

import attrs
import trio

from ..basic.lifecycle import has_capability
from ..errors import ConnectionClosed, ErrorCode, HTTPTransportError, MCPError, ProtocolError, RequestTimeout
from ..schema._base import REVISIONS
from ..schema.completion import PromptReference
from ..schema.lifecycle import Implementation
from ..schema.logging import SetLevelRequestParams
from ..schema.pagination import PaginatedRequestParams
from ..schema.tasks import (
    CancelTaskRequestParams,
    GetTaskPayloadRequestParams,
    GetTaskRequestParams,
    TaskMetadata,
)
from ..schema.tools import CallToolRequestParams
from ..session.client import ClientSession, open_session
from ..session.core import SessionConfig
from .channel import ObservedChannel
from .config import ROLES, CheckConfig, ToolSpec
from .observer import Direction, Observer
from .report import Finding, Report
from .targets import HttpTarget, StdioTarget, Target, TargetUnreachable, connect

__all__ = ["Battery", "RawSession", "CHAPTERS", "check_server", "run_check"]

CLIENT_INFO: Final = Implementation(name="mcp-ref-check", version="0.1.0")
# initialize negotiates the session revisions only (2026-07-28 has no initialize)
LATEST: Final = max(r for r in REVISIONS if r < "2026-07-28")
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
#: settling time after a round trip before "nothing more came" is believed
SETTLE: Final = 0.05


class _Check:
    def __init__(self, name: str, requirements: Sequence[str]) -> None:
        self.name = name
        self.requirements = list(requirements)
        self.failed = False
        self.skipped = False
        self.details: list[str] = []
        self.findings: list[Finding] = []

    def fail(self, detail: str) -> None:
        self.failed = True
        self.details.append(detail)

    def skip(self, reason: str) -> None:
        self.skipped = True
        self.details.append(reason)

    def note(self, detail: str) -> None:
        self.details.append(detail)

    def find(self, requirement: str, message: str, *evidence: Any) -> None:
        """A violation the check itself established (not one the observer saw)."""
        if requirement not in self.requirements:
            self.requirements.append(requirement)
        self.findings.append(Finding.of(requirement, message, *evidence, party="server"))


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


def _error(message: Any) -> dict[str, Any] | None:
    err = message.get("error") if type(message) is dict else None
    return err if type(err) is dict else None


class RawSession:
    """JSON messages written and read as they are, on one observed connection.

    Requests the server makes meanwhile are answered (ping with an empty
    result, anything else with -32601), as a client that offers nothing would.
    """

    def __init__(self, channel: ObservedChannel, timeout: float) -> None:
        self.channel = channel
        self.timeout = timeout
        self._next_id = 100  # the probes' own ids (7, "7") stay below
        self.initialize_result: dict[str, Any] | None = None

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def send(self, message: Any, *, deliberate: bool = False) -> None:
        data = message if isinstance(message, bytes) else _dumps(message)
        if deliberate:
            self.channel.expect_deliberate(data)
        try:
            await self.channel.send(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
            raise ConnectionClosed(str(e) or "the server closed the connection") from e

    async def receive(self, timeout: float) -> Any:
        """The next message from the server (parsed JSON, or the text when it is not JSON);
        None when none came in ``timeout`` seconds. ConnectionClosed at EOF."""
        with trio.move_on_after(timeout):
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
    ) -> Any:
        """Send a request and return its response (None if none came in time)."""
        if rid is None:
            rid = self.new_id()
        message = raw if raw is not None else {"jsonrpc": "2.0", "id": rid, "method": method}
        if raw is None and params is not None:
            message["params"] = params
        await self.send(message, deliberate=deliberate)
        deadline = trio.current_time() + (self.timeout if timeout is None else timeout)
        http = _http(self)
        while (left := deadline - trio.current_time()) > 0:
            if http is not None and http.answered():
                return None  # (HTTP) the whole answer came, and this was not in it
            answer = await self.receive(min(left, 0.05) if http is not None else left)
            if answer is None:
                continue
            if _is_response(answer) and _same_id(answer, rid):
                return answer
        return None

    async def round_trip(self) -> list[Any] | None:
        """Ping, and return what arrived before its answer (None: the ping went unanswered)."""
        rid = f"mcp-ref-round-trip-{self.new_id()}"
        await self.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        seen: list[Any] = []
        deadline = trio.current_time() + self.timeout
        while (left := deadline - trio.current_time()) > 0:
            message = await self.receive(left)
            if message is None:
                return None
            if _is_response(message) and _same_id(message, rid):
                # anything sent before the ping was answered had time to arrive; give stragglers a moment
                while (late := await self.receive(SETTLE)) is not None:
                    seen.append(late)
                return seen
            seen.append(message)
        return None

    async def initialize(self, version: str = LATEST, capabilities: dict[str, Any] | None = None) -> Any:
        params = {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": CLIENT_INFO.name, "version": CLIENT_INFO.version},
        }
        answer = await self.request("initialize", params, deliberate=version not in REVISIONS)
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
    ) -> None:
        unknown = set(only or ()) - set(CHAPTERS)
        if unknown:
            raise ValueError(f"unknown chapters {sorted(unknown)}; known: {', '.join(CHAPTERS)}")
        self.target = target
        self.config = config or CheckConfig()
        self.only = set(only) if only else None
        self.timeout = self.config.timeout
        self.report = Report(target.describe())
        self.observers: list[Observer] = []
        self.on_progress = on_progress
        self.stderr_tail: deque[str] = deque(maxlen=20)
        self.capabilities: dict[str, Any] = {}
        #: what the server answered to an initialize for each version asked
        self.versions: dict[str, str | None] = {}
        #: (HTTP) an ``HttpAuth`` such as ``OAuthClient``: run its flow when the server asks for authorization
        self.auth = auth

    def _wants(self, chapter: str) -> bool:
        return self.only is None or chapter in self.only

    def _say(self, text: str) -> None:
        if self.on_progress is not None:
            self.on_progress(text)

    # -- sessions and checks ---------------------------------------------------------------

    def _observer(self) -> Observer:
        obs = Observer(transport="stdio" if isinstance(self.target, StdioTarget) else "http")
        self.observers.append(obs)
        return obs

    @asynccontextmanager
    async def raw_session(self) -> AsyncIterator[RawSession]:
        obs = self._observer()
        async with connect(self.target, obs, stderr_tail=self.stderr_tail, raw=True) as channel:
            yield RawSession(channel, self.timeout)

    @asynccontextmanager
    async def client_session(self, **options: Any) -> AsyncIterator[ClientSession]:
        obs = self._observer()
        async with connect(self.target, obs, stderr_tail=self.stderr_tail) as channel:
            self._channel = channel
            async with open_session(
                channel,
                client_info=CLIENT_INFO,
                config=SessionConfig(request_timeout=self.timeout, cancel_grace=2.0),
                initialize_timeout=self.timeout,
                validate_tool_results=False,
                **options,
            ) as client:
                yield client

    def skip(self, name: str, requirements: Sequence[str], reason: str) -> None:
        self.report.check(name, "skip", requirements, reason)

    @asynccontextmanager
    async def check(self, name: str, requirements: Sequence[str]) -> AsyncIterator[_Check]:
        """Run one check: its status comes from what it decided and from the findings the
        observer made about its requirements meanwhile."""
        chk = _Check(name, requirements)
        obs = self.observers[-1] if self.observers else None
        start = len(obs.findings) if obs is not None else 0
        self._say(f"check {name}")
        try:
            yield chk
        except (MCPError, RequestTimeout, ProtocolError) as e:
            chk.fail(f"{type(e).__name__}: {e}")
        finally:
            seen = [f for f in (obs.findings[start:] if obs is not None else []) if f.requirement in chk.requirements]
            detail = "; ".join(chk.details)
            if chk.skipped:
                self.skip(name, chk.requirements, detail)
            elif chk.failed or seen or chk.findings:
                self.report.check(name, "fail", chk.requirements, detail)
            else:
                self.report.check(name, "pass", chk.requirements, detail)
            self.report.extend(chk.findings)

    # -- the run ---------------------------------------------------------------------------------

    async def run(self) -> Report:
        if isinstance(self.target, HttpTarget):
            await self._authorization()
        await self._lifecycle_probes()
        if self._wants("lifecycle"):
            await self._version_negotiation()
        if isinstance(self.target, HttpTarget) and self._wants("transport"):
            await self._transport_checks()
        await self._main_session()
        for obs in self.observers:
            self.report.extend(obs.findings)
            for note in obs.notes:
                if note not in self.report.notes:
                    self.report.notes.append(note)
        return self.report

    async def _lifecycle_probes(self) -> None:
        """One raw session: a request before initialize, an unknown version, JSON-RPC edge cases."""
        try:
            async with self.raw_session() as raw:
                if self._wants("lifecycle"):
                    async with self.check("lifecycle/request-before-initialize", ["basic/index#3"]) as chk:
                        answer = await raw.request("tools/list", deliberate=True)
                        if answer is None:
                            chk.note("the server did not answer a request sent before initialize")
                        elif _error(answer) is None:
                            # lifecycle#1 binds the client that skips initialization; the server
                            # may be lenient (spec_notes/crosscheck.md)
                            chk.note("the server answered a request sent before initialize (lenient, allowed)")
                answer = await raw.initialize(UNKNOWN_VERSION)
                if answer is None:
                    raise TargetUnreachable(self._no_answer("initialize"))
                result = answer.get("result") if type(answer) is dict else None
                self.versions[UNKNOWN_VERSION] = result.get("protocolVersion") if type(result) is dict else None
                if _error(answer) is not None:
                    # a refusal of an unknown version is allowed (lifecycle#error-handling): go on with ours
                    self._say("the server refused the unknown version; initializing again with " + LATEST)
                    return await self._jsonrpc_in_new_session()
                if self._wants("jsonrpc"):
                    await self._jsonrpc_probes(raw)
        except ConnectionClosed as e:
            raise TargetUnreachable(self._closed(str(e))) from e

    async def _jsonrpc_in_new_session(self) -> None:
        if not self._wants("jsonrpc"):
            return
        async with self.raw_session() as raw:
            answer = await raw.initialize(LATEST)
            if answer is None or raw.initialize_result is None:
                raise TargetUnreachable(self._no_answer("initialize"))
            await self._jsonrpc_probes(raw)

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
                chk.find("basic/index#3", "a request for an unknown method got no response")
        async with self.check("jsonrpc/ids-echoed-verbatim", ["basic/index#7"]) as chk:
            for rid in ("7", 7, "mcp-ref-\u00e9t\u00e9", 2**53 - 1):
                answer = await raw.request("ping", rid=rid)
                if answer is None:
                    chk.fail(f"no answer to a ping with id {rid!r}")
        async with self.check("jsonrpc/notifications-unanswered", ["basic/index#13"]) as chk:
            await raw.send({"jsonrpc": "2.0", "method": "notifications/mcp-ref-unknown", "params": {}})
            bad = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {}}}
            await raw.send(bad, deliberate=True)
            seen = await raw.round_trip()
            if seen is None:
                chk.fail("no answer to a ping after two notifications")
            else:
                answers = [m for m in seen if _is_response(m)]
                if answers:
                    chk.find("basic/index#13", "a notification was answered", answers[0])
        caps = raw.initialize_result.get("capabilities") if raw.initialize_result else None
        if type(caps) is not dict:
            self.skip(
                "jsonrpc/undeclared-capabilities",
                ["server/tools#3", "server/resources#1", "server/prompts#1"],
                "the server declared no capabilities object",
            )
            return
        async with self.check(
            "jsonrpc/undeclared-capabilities", ["server/tools#3", "server/resources#1", "server/prompts#1"]
        ) as chk:
            for method, cap, requirement in (
                ("tools/list", "tools", "server/tools#3"),
                ("resources/list", "resources", "server/resources#1"),
                ("prompts/list", "prompts", "server/prompts#1"),
            ):
                if cap in caps:
                    continue
                answer = await raw.request(method, deliberate=True)
                if type(answer) is dict and "result" in answer:
                    chk.find(requirement, f"{method} answered although the server did not declare {cap}", answer)

    async def _probe(self, raw: RawSession, data: bytes, chk: _Check, *, required: bool = True) -> list[Any] | None:
        await raw.send(data, deliberate=True)
        http = _http(raw)
        if http is not None and required:
            # [basic/transports#19, #20] over HTTP the answer is an error status; a JSON-RPC
            # error in the body is allowed, not required
            status = http.exchanges[-1].status
            if not 400 <= status < 500:
                chk.find("basic/transports#19", f"input the server cannot accept was answered HTTP {status}")
            await raw.round_trip()
            return None
        seen = await raw.round_trip()
        if seen is None:
            chk.fail("the server did not answer a ping after the probe")
        return seen

    async def _authorization(self) -> None:
        """(HTTP) Find out whether the server asks for authorization; if it does, judge how it asks
        (basic/authorization), get a token (``auth``'s flow, or the ``Authorization`` header given)
        and put it on every request of the battery. TargetUnreachable when no credentials do."""
        from .http_probe import initialize_probe

        assert isinstance(self.target, HttpTarget)
        target = self.target
        given = {k: v for k, v in target.headers.items() if k.lower() == "authorization"}
        anonymous = {k: v for k, v in target.headers.items() if k.lower() != "authorization"}
        from ..errors import HTTPTransportError

        try:
            got = await initialize_probe(target.url, anonymous, self.timeout, target.ssl_context)
        except HTTPTransportError as e:
            raise TargetUnreachable(str(e)) from e
        if got.status != 401:
            if self.auth is not None:
                self.report.notes.append(f"the server asked for no authorization (HTTP {got.status} without a token)")
            return
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
            again = await initialize_probe(target.url, self.target.headers, self.timeout, target.ssl_context)
        except HTTPTransportError as e:
            raise TargetUnreachable(str(e)) from e
        if again.status in (401, 403):
            why = again.headers.get("www-authenticate") or ""
            why = f"HTTP {again.status}" + (f", WWW-Authenticate: {why}" if why else "")
            raise TargetUnreachable(f"{target.url} refused the credentials ({why})")

    async def _authorization_checks(self, refused: Any) -> None:
        """How a protected server asks for a token (basic/authorization#authorization-server-discovery)."""
        from ..basic.authorization.challenge import bearer_challenge
        from ..basic.authorization.discovery import protected_resource_metadata_urls
        from ..basic.authorization.metadata import InvalidMetadata, ProtectedResourceMetadata
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
            for where in urls:
                try:
                    trust = self.target.ssl_context
                    answer = await http_exchange("GET", where, timeout=self.timeout, ssl_context=trust)
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
                got = await initialize_probe(url, bogus, self.timeout, self.target.ssl_context)
            except HTTPTransportError as e:
                chk.fail(str(e))
                return
            if got.status != 401:
                text = f"a request with an invalid token was answered HTTP {got.status}, not 401"
                chk.find("basic/authorization#60", text)

    async def _transport_checks(self) -> None:
        """What Streamable HTTP asks of the server (basic/transports#streamable-http), on a raw session."""
        from functools import partial

        from .http_probe import exchange as plain_exchange

        assert isinstance(self.target, HttpTarget)
        exchange = partial(plain_exchange, ssl_context=self.target.ssl_context)

        assert isinstance(self.target, HttpTarget)
        url = self.target.url
        async with self.raw_session() as raw:
            if await raw.initialize(LATEST) is None or raw.initialize_result is None:
                self.skip("transport/http", ["basic/transports#21"], "initialize failed")
                return
            http = _http(raw)
            assert http is not None
            await raw.round_trip()
            init, initialized = http.exchanges[0], http.exchanges[1]
            async with self.check("transport/request-answered-with-json-or-sse", ["basic/transports#21"]) as chk:
                if init.status != 200 or init.content_type not in ("application/json", "text/event-stream"):
                    text = f"initialize was answered HTTP {init.status} {init.content_type!r}"
                    chk.find("basic/transports#21", text)
            async with self.check("transport/notification-answered-202", ["basic/transports#18"]) as chk:
                if initialized.status != 202:
                    text = f"a POSTed notification was answered HTTP {initialized.status}, not 202"
                    chk.find("basic/transports#18", text)
            async with self.check("transport/get-sse-or-405", ["basic/transports#39"]) as chk:
                got, _ = await exchange(url, "GET", http.headers(accept="text/event-stream"), read_body=False)
                if got.status < 400 and not (got.status == 200 and got.content_type == "text/event-stream"):
                    chk.find("basic/transports#39", f"a GET was answered HTTP {got.status} {got.content_type!r}")
                chk.note(f"HTTP {got.status}")
            ping = b'{"jsonrpc":"2.0","id":"mcp-ref-http","method":"ping"}'
            async with self.check("transport/unsupported-protocol-version", ["basic/transports#68"]) as chk:
                headers = {**http.headers(), "mcp-protocol-version": UNKNOWN_VERSION}
                got, _ = await exchange(url, "POST", headers, ping)
                if got.status != 400:
                    text = f"MCP-Protocol-Version {UNKNOWN_VERSION} was answered HTTP {got.status}, not 400"
                    chk.find("basic/transports#68", text)
            if _loopback(url):
                async with self.check("transport/foreign-origin", ["basic/transports#10"]) as chk:
                    headers = {**http.headers(), "origin": "http://mcp-ref-check.invalid"}
                    got, _ = await exchange(url, "POST", headers, ping)
                    if got.status != 403:
                        text = f"a request from Origin http://mcp-ref-check.invalid was answered HTTP {got.status}"
                        chk.find("basic/transports#10", text + ", not 403 (the server is on a loopback address)")
            if http.session_id is None:
                self.skip(
                    "transport/session-id",
                    ["basic/transports#60", "basic/transports#61"],
                    "the server assigns no session id",
                )
                return
            async with self.check("transport/missing-session-id", ["basic/transports#60"]) as chk:
                headers = {k: v for k, v in http.headers().items() if k != "mcp-session-id"}
                got, _ = await exchange(url, "POST", headers, ping)
                if got.status != 400:
                    text = f"a request without the session id was answered HTTP {got.status}, not 400"
                    chk.find("basic/transports#60", text)
            async with self.check("transport/ended-session-404", ["basic/transports#61"]) as chk:
                deleted, _ = await exchange(url, "DELETE", http.headers())
                if deleted.status == 405:
                    chk.note("the server does not let clients end sessions (405, allowed)")
                else:
                    got, _ = await exchange(url, "POST", http.headers(), ping)
                    if got.status != 404:
                        text = f"after DELETE answered {deleted.status}, the session id was answered {got.status}"
                        chk.find("basic/transports#61", text + ", not 404")
                http.session_id = None  # ended: no DELETE again

    async def _version_negotiation(self) -> None:
        async with self.check(
            "lifecycle/version-negotiation", ["basic/lifecycle#9", "basic/lifecycle#10", "basic/lifecycle#11"]
        ) as chk:
            for version in reversed(REVISIONS):
                async with self.raw_session() as raw:
                    answer = await raw.initialize(version)
                result = answer.get("result") if type(answer) is dict else None
                spoken = result.get("protocolVersion") if type(result) is dict else None
                self.versions[version] = spoken if isinstance(spoken, str) else None
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

    async def _main_session(self) -> None:
        changed: list[str] = []

        async def on_list_changed(kind: str) -> None:
            changed.append(kind)

        try:
            async with self.client_session(on_list_changed=on_list_changed) as client:
                self.report.revision = client.protocol_version
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
                        await step(client)
                if self._wants("tools"):
                    await self._list_changed(client, changed)
        except ConnectionClosed as e:
            self.report.notes.append(f"the main session ended early: {e}")
        except (RequestTimeout, MCPError, ProtocolError) as e:
            # what the other sessions found still stands
            what = "could not initialize" if self.report.revision is None else "failed"
            self.report.notes.append(f"the main session {what}: {e}")

    def _caps(self, client: ClientSession) -> dict[str, Any]:
        from ..schema._converter import converter_for

        caps: dict[str, Any] = converter_for(client.protocol_version).unstructure(client.server_capabilities)
        return caps

    def _has(self, *path: str) -> bool:
        return has_capability(self.capabilities, path)

    async def _ping(self, client: ClientSession) -> None:
        async with self.check("ping/answered-promptly", ["basic/utilities/ping#1"]) as chk:
            start = trio.current_time()
            pending = await client.start_request("ping", None, timeout=self.timeout)
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
        for spec in self.config.calls:
            async with self.check(f"tools/call {spec.name}", ["server/tools#15", "server/tools#16"]) as chk:
                result = await self._call(client, spec)
                if result.is_error:
                    chk.note("the tool reported an error (isError)")
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
                            f"task-only tool {tool.name!r} called without a task {what}, not with error -32601",
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
            with trio.move_on_after(self.timeout):
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
            for resource in resources[:5]:
                await client.read_resource(resource.uri)
            chk.note(f"{min(len(resources), 5)} of {len(resources)} read")
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
        async with self.check("resources/templates", ["basic/lifecycle#14"]) as chk:
            templates = await client.list_all_resource_templates()
            chk.note(f"{len(templates)} template(s)")
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
            plain = [p for p in prompts if not any(a.required for a in p.arguments or [])]
            for prompt in plain[:5]:
                await client.get_prompt(prompt.name)
            chk.note(f"{min(len(plain), 5)} prompt(s) without required arguments fetched")
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

    async def _completion(self, client: ClientSession) -> None:
        if not self._has("completions"):
            self.report.check(
                "completion/complete", "skip", ["server/utilities/completion#1"], "the server declares no completions"
            )
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
            await client.session.send_raw(data)
            await client.ping()
        spec = self.config.tool("slow")
        name = "cancellation/stops-and-stays-silent"
        if spec is None:
            self.skip(name, ["basic/utilities/cancellation#4"], _needs("slow"))
            return
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

    async def _progress(self, client: ClientSession) -> None:
        spec = self.config.tool("progress")
        name = "progress/increasing-and-before-the-result"
        requirements = ["basic/utilities/progress#4", "basic/utilities/progress#7", "basic/utilities/progress#14"]
        if spec is None:
            self.skip(name, requirements, _needs("progress"))
            return
        async with self.check(name, requirements) as chk:
            values: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                values.append(progress)

            params = CallToolRequestParams(name=spec.name, arguments=spec.arguments or None)
            await client.request("tools/call", params, progress=on_progress, progress_token="mcp-ref-progress-1")
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
        spec = self.config.tool("task")
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
            self.report.check(
                "tasks/lifecycle", "skip", requirements, "the server does not declare tasks.requests.tools.call"
            )
            return
        async with self.check("tasks/lifecycle", requirements) as chk:
            call = CallToolRequestParams(
                name=spec.name, arguments=spec.arguments or None, task=TaskMetadata(ttl=60_000)
            )
            created = await client.request("tools/call", call)
            task_id = created.task.task_id
            got = await client.request("tasks/get", GetTaskRequestParams(task_id=task_id))
            if got.status not in ("working", "input_required", "completed", "failed", "cancelled"):
                chk.fail(f"unexpected status {got.status!r}")
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
        text = f"{self.target.describe()} did not answer {what} within {self.timeout:g}s"
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
) -> Report:
    """Run the battery against ``target``; TargetUnreachable when it cannot be started or reached.
    ``auth`` (HTTP): an ``OAuthClient`` whose flow runs when the server asks for authorization."""
    battery = Battery(target, config, only=only, on_progress=on_progress, auth=auth)
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
) -> Report:
    """:func:`check_server` in a trio run of its own (for the command line)."""
    return trio.run(lambda: check_server(target, config, only=only, on_progress=on_progress))
