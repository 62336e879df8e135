"""The fixture's 2026-07-28 side: a stateless server of its own that judges a modern client.

A client that opens with ``server/discover`` or any request carrying the
2026-07-28 ``_meta`` is served here, not by the 2025 session battery. The
fixture answers like a small modern server: ``server/discover``, a tool list
with a parameter mirrored into a header (``x-mcp-header``) and tools that ask
for input through multi round-trip requests (one with a ``requestState``,
one without), a prompt and a resource. Every request is judged:

* ``_meta`` carries the protocol version and the client's capabilities
  (basic/index#52) and its identity (#55);
* over HTTP, the headers mirror the body: ``MCP-Protocol-Version``
  (streamable-http#25, #26), ``Mcp-Method`` and ``Mcp-Name`` (#32),
  ``Mcp-Param-*`` for the marked parameters (#36);
* a retry of a request answered with an ``InputRequiredResult`` has a new id
  (mrtr#26), answers the input requests (#21), echoes the ``requestState``
  exactly (#23) and invents none (#25);
* on stdio, the client writes no JSON-RPC response (stdio#7).
"""

import base64
import hashlib
import hmac
import json
import os
import time
from types import SimpleNamespace
from typing import Any, Final

import trio

from .modern_judge import CAPS, MODERN, PV, SINFO, ClientRules, is_modern_request
from .report import Report, Status

__all__ = ["ModernFixture", "is_modern_opening", "serve_modern_stdio", "FixtureRuntime"]

R: Final = MODERN + ":"
SERVER_INFO: Final = {"name": "mcp-ref-fixture", "version": "0.1.0"}
_OBJ: Final[dict[str, Any]] = {"type": "object", "properties": {}}
TOOLS: Final[list[dict[str, Any]]] = [
    {
        "name": "echo",
        "description": "Say the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "weather",
        "description": "The weather of a region (the region is mirrored into the Mcp-Param-Region header).",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "confirm",
        "description": "Ask the user to confirm (elicitation through a multi round-trip request, with a requestState).",
        "inputSchema": _OBJ,
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "ask",
        "description": "Ask the user a question (elicitation through a multi round-trip request, no requestState).",
        "inputSchema": _OBJ,
        "annotations": {"readOnlyHint": True},
    },
]
_FORM: Final = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "mcp-ref fixture: go on?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    },
}
_ROOTS: Final = {"method": "roots/list", "params": {}}


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def is_modern_opening(message: Any) -> bool:
    """Whether a client's first message opens a 2026-07-28 exchange (not an initialize): a
    request :func:`~.modern_judge.is_modern_request` says is one, or a message carrying the
    protocol version in ``_meta``."""
    if is_modern_request(message):
        return True
    params = message.get("params") if type(message) is dict else None
    m = params.get("_meta") if type(params) is dict else None
    return (
        type(message) is dict
        and isinstance(message.get("method"), str)
        and message["method"] != "initialize"
        and type(m) is dict
        and isinstance(m.get(PV), str)
    )


class ModernFixture:
    """Answers and judges one 2026-07-28 client (see the module doc)."""

    def __init__(self, report: Report, *, http: bool) -> None:
        self.report = report
        self.http = http
        self.key = os.urandom(16)
        #: (method, name) -> (id, InputRequiredResult) of the requests answered with one
        self.asked: dict[tuple[str, str], tuple[Any, dict[str, Any]]] = {}
        #: the rules a client's requests are held to (the tap's and the judge's too)
        self.rules = ClientRules(report.add)
        self.find = self.rules.find

    # -- findings ---------------------------------------------------------------------------------------

    def finish(self) -> None:
        """The report's checks, once the client is done."""
        self.report.revision = MODERN
        info = self.rules.info
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self.report.target = f"the client {info['name']} {info.get('version', '')}".strip()
        groups = {
            "modern-client/request-meta": ["basic/index#52", "basic/index#55"],
            "modern-client/mrtr-retries": [
                "basic/patterns/mrtr#21",
                "basic/patterns/mrtr#23",
                "basic/patterns/mrtr#25",
                "basic/patterns/mrtr#26",
            ],
            "modern-client/no-responses": ["basic/transports/stdio#7"],
        }
        if self.http:
            groups["modern-client/http-headers"] = [
                "basic/transports/streamable-http#25",
                "basic/transports/streamable-http#26",
                "basic/transports/streamable-http#32",
                "basic/transports/streamable-http#36",
            ]
            del groups["modern-client/no-responses"]
        broken = {f.requirement for f in self.report.findings}
        for name, reqs in groups.items():
            ids = [R + r for r in reqs]
            status: Status
            if any(i in broken for i in ids):
                status = "fail"
            elif name == "modern-client/mrtr-retries" and not self.rules.retries:
                self.report.check(name, "skip", ids, "the client retried no request that asked for input")
                continue
            else:
                status = "pass"
            self.report.check(name, status, ids, f"{self.rules.requests} request(s), {self.rules.retries} retr(ies)")

    # -- one message -------------------------------------------------------------------------------------

    def handle(self, message: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any] | None]:
        """The HTTP status and the answer (None: nothing to answer) for one message of the client."""
        if type(message) is not dict:
            return 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
        if "method" not in message:
            if not self.http:
                # [2026-07-28:basic/transports/stdio#7] clients send no responses in this revision
                self.find("basic/transports/stdio#7", "the client wrote a JSON-RPC response on stdin", message)
            return 400, None
        if "id" not in message:
            return 202, None
        rid = message["id"]
        method = message["method"]
        params = _obj(message.get("params"))
        m = _obj(params.get("_meta"))
        self.rules.meta(method, m, message)
        if headers is not None:
            tool = next((t for t in TOOLS if t["name"] == params.get("name")), None)
            self.rules.headers(method, params, m, headers, tool.get("inputSchema") if tool else None)
        version = m.get(PV)
        if isinstance(version, str) and version != MODERN:
            data = {"supported": [MODERN], "requested": version}
            return self._error(rid, -32022, "Unsupported protocol version", data)
        try:
            result = self._serve(method, params, m, rid)
        except _Refused as e:
            return self._error(rid, e.code, e.text, e.data)
        result.setdefault("resultType", "complete")
        result["_meta"] = {SINFO: SERVER_INFO}
        return 200, {"jsonrpc": "2.0", "id": rid, "result": result}

    def _error(self, rid: Any, code: int, text: str, data: Any = None) -> tuple[int, dict[str, Any]]:
        error: dict[str, Any] = {"code": code, "message": text}
        if data is not None:
            error["data"] = data
        status = {-32020: 400, -32021: 400, -32022: 400, -32601: 404, -32602: 400 if code == -32602 else 200}
        return status.get(code, 200), {"jsonrpc": "2.0", "id": rid, "error": error}

    # -- serving ------------------------------------------------------------------------------------------

    def _serve(self, method: str, params: dict[str, Any], m: dict[str, Any], rid: Any) -> dict[str, Any]:
        if method == "server/discover":
            return {
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                "instructions": "mcp-ref fixture: a strict 2026-07-28 server checking its client.",
                "ttlMs": 0,
                "cacheScope": "public",
            }
        if method == "tools/list":
            return {"tools": TOOLS, "ttlMs": 0, "cacheScope": "public"}
        if method == "prompts/list":
            return {"prompts": [{"name": "hello", "description": "Say hello."}], "ttlMs": 0, "cacheScope": "public"}
        if method == "prompts/get":
            if params.get("name") != "hello":
                raise _Refused(-32602, f"Unknown prompt {params.get('name')!r}")
            return {"messages": [{"role": "user", "content": {"type": "text", "text": "Hello."}}]}
        if method == "resources/list":
            listed = [{"uri": "mem://fixture/note", "name": "note", "mimeType": "text/plain"}]
            return {"resources": listed, "ttlMs": 0, "cacheScope": "public"}
        if method == "resources/templates/list":
            return {"resourceTemplates": [], "ttlMs": 0, "cacheScope": "public"}
        if method == "resources/read":
            if params.get("uri") != "mem://fixture/note":
                raise _Refused(-32602, "Resource not found", {"uri": params.get("uri")})
            text = {"uri": "mem://fixture/note", "mimeType": "text/plain", "text": "a note"}
            return {"contents": [text], "ttlMs": 0, "cacheScope": "public"}
        if method == "tools/call":
            return self._call(params, m, rid)
        raise _Refused(-32601, f"Method not found: {method}")

    def _call(self, params: dict[str, Any], m: dict[str, Any], rid: Any) -> dict[str, Any]:
        name = params.get("name")
        arguments = _obj(params.get("arguments"))
        caps = _obj(m.get(CAPS))
        key = ("tools/call", str(name))
        retry = self._retry(key, params, rid)
        if name == "echo":
            return {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]}
        if name == "weather":
            return {"content": [{"type": "text", "text": f"sunny in {arguments.get('region')}"}]}
        if name not in ("confirm", "ask"):
            raise _Refused(-32602, f"Unknown tool {name!r}")
        answers = _obj(params.get("inputResponses"))
        if retry is not None and name in answers:
            if name == "confirm":
                state = params.get("requestState")
                if not isinstance(state, str) or not self._valid(state):
                    raise _Refused(-32602, "requestState failed verification")
            return {"content": [{"type": "text", "text": f"the user answered {json.dumps(answers[name])}"}]}
        if "elicitation" in caps:
            request = _FORM
        elif "roots" in caps:
            request = _ROOTS
        else:
            raise _Refused(-32021, "Missing required client capability", {"requiredCapabilities": {"elicitation": {}}})
        result: dict[str, Any] = {"resultType": "input_required", "inputRequests": {name: request}}
        if name == "confirm":
            result["requestState"] = self._seal()
        self.asked[key] = (rid, result)
        return dict(result)

    def _retry(self, key: tuple[str, str], params: dict[str, Any], rid: Any) -> dict[str, Any] | None:
        """Judge a retry of a request answered with an InputRequiredResult; None when this is none."""
        asked = self.asked.pop(key, None)
        if asked is None:
            return None
        self.rules.retry(key[1], asked[0], asked[1], params, rid)
        return asked[1]

    def _seal(self) -> str:
        body = base64.urlsafe_b64encode(json.dumps({"exp": time.time() + 600}).encode()).decode()
        return body + "." + hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()

    def _valid(self, state: str) -> bool:
        body, _, tag = state.rpartition(".")
        good = hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()
        return hmac.compare_digest(tag, good)


class _Refused(Exception):
    def __init__(self, code: int, text: str, data: Any = None) -> None:
        super().__init__(text)
        self.code, self.text, self.data = code, text, data


async def serve_modern_stdio(channel: trio.abc.Channel[bytes], first: bytes, fixture: ModernFixture) -> None:
    """Serve a modern client on a stdio channel (its first message already read) until it leaves."""
    data: bytes | None = first
    while True:
        if data is None:
            try:
                data = await channel.receive()
            except (trio.EndOfChannel, trio.BrokenResourceError, trio.ClosedResourceError):
                break
        try:
            message = json.loads(data)
        except ValueError:
            message = None
        data = None
        if message is None:
            answer: dict[str, Any] | None = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "Parse error"},
            }
        else:
            answer = fixture.handle(message)[1]
        if answer is not None:
            try:
                await channel.send(json.dumps(answer, separators=(",", ":")).encode())
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                break


class FixtureRuntime:
    """The fixture as the HTTP server's 2026-07-28 runtime: each POST judged and answered."""

    def __init__(self, fixture: ModernFixture) -> None:
        self.fixture = fixture

    def engine(self, track_ids: bool = False) -> "FixtureRuntime":
        return self

    def receive_message(self, body: bytes, headers: Any = None) -> list[Any]:
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if type(message) is dict and "id" in message and not is_modern_opening(message):
            # a request of an earlier revision without its session id (the relay in front judges it,
            # basic/transports#59): refused as a 2025 server refuses it, not judged as a modern one
            refusal = SimpleNamespace(code=-32600, message="Bad Request: Missing session ID")
            return [SimpleNamespace(error=refusal, http_status=400, reply=None)]
        status, answer = self.fixture.handle(message, dict(headers or {}))
        reply = json.dumps(answer, separators=(",", ":")).encode() if answer is not None else None
        if status == 202:
            return [SimpleNamespace(error=None, exchange=None)]
        if status != 200 or answer is None:
            error = (answer or {}).get("error") or {"code": -32600, "message": "Invalid Request"}
            return [
                SimpleNamespace(
                    error=SimpleNamespace(code=error.get("code"), message=error.get("message")),
                    http_status=status,
                    reply=reply,
                )
            ]
        return [SimpleNamespace(error=None, exchange=SimpleNamespace(id=answer.get("id"), reply=reply))]

    async def run(self, exchange: Any, sink: Any, scope: Any, **options: Any) -> None:
        await sink.answer(exchange.reply, None)
