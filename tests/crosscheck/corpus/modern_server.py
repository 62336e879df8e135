"""A small 2026-07-28 MCP server in raw JSON (standard library only) that can break ONE rule on demand.

    python modern_server.py [--break NAME]                  # stdio
    python modern_server.py --http [--break NAME] [--port]  # Streamable HTTP; prints its URL

It shares no code with mcp_ref. Stateless: no initialize (answered -32022,
naming the version it speaks), every request validated on its own (``_meta``,
version, capabilities; over HTTP the headers against the body). Tools: ``echo``,
``weather`` (its ``region`` mirrored into ``Mcp-Param-Region``) and ``confirm``
(elicitation through a multi round-trip request with an HMAC-sealed
``requestState``); two prompts, two resources, ``subscriptions/listen``.
``BREAKS`` maps each variant to the rule it breaks; ``CORRECT`` are controls,
some unusual but valid (CRLF line ends; every HTTP answer an SSE stream whose
JSON is split over several ``data:`` lines).
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from http_base import CorpusServer, JsonHandler, serve_until_interrupted, serving_on_a_thread

V = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
LOGLEVEL = "io.modelcontextprotocol/logLevel"
SINFO = "io.modelcontextprotocol/serverInfo"
SUBID = "io.modelcontextprotocol/subscriptionId"
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
KEY = os.urandom(16)

#: name -> the rule it breaks (2026-07-28 ids); the stdio ones apply to HTTP too
BREAKS = {
    "no-discover": "2026-07-28:basic/versioning#3",  # server/discover is -32601
    "version-invalid-params": "2026-07-28:basic/versioning#1",  # an unknown version gets -32602
    "meta-not-checked": "2026-07-28:basic/index#53",  # no clientCapabilities: served anyway
    "removed-served": "2026-07-28:basic/index#3",  # ping (removed) answered {}
    "no-result-type": "2026-07-28:basic/index#10",  # results without resultType
    "odd-result-type": "2026-07-28:basic/index#12",  # resultType "done"
    "no-server-info": "2026-07-28:basic/index#59",  # no serverInfo in result _meta (SHOULD)
    "reserved-code": "2026-07-28:basic/index#21",  # an unknown tool gets -32077
    "retired-code": "2026-07-28:basic/index#22",  # an unknown prompt gets -32042
    "capability-invalid-params": "2026-07-28:basic/index#57",  # confirm without elicitation: -32602
    "resource-legacy-code": "2026-07-28:server/resources#13",  # an unknown resource gets -32002
    "resource-empty": "2026-07-28:server/resources#16",  # an unknown resource gets contents []
    "no-ttl": "2026-07-28:server/utilities/caching#1",  # lists without ttlMs/cacheScope
    "negative-ttl": "2026-07-28:server/utilities/caching#11",  # ttlMs -1
    "mixed-scope": "2026-07-28:server/utilities/caching#24",  # the second tools page is private
    "mrtr-on-list": "2026-07-28:basic/patterns/mrtr#5",  # prompts/list answers input_required first
    "mrtr-empty": "2026-07-28:basic/patterns/mrtr#16",  # input_required with nothing in it
    "mrtr-undeclared": "2026-07-28:basic/patterns/mrtr#17",  # elicitation asked of a client without it
    "mrtr-bad-request": "2026-07-28:basic/patterns/mrtr#9",  # an input request of method "ask/user"
    "state-not-verified": "2026-07-28:basic/patterns/mrtr#12",  # any requestState is accepted
    "state-unbound": "2026-07-28:basic/patterns/mrtr#14",  # a state is accepted on other arguments (SHOULD)
    "listen-no-ack": "2026-07-28:basic/patterns/subscriptions#2",  # list_changed before any ack
    "listen-untagged": "2026-07-28:basic/index#61",  # subscription notifications without the id
    "listen-extra-type": "2026-07-28:basic/patterns/subscriptions#1",  # prompts list_changed unasked
    "log-unasked": "2026-07-28:server/utilities/logging#3",  # echo logs without a logLevel
    "level-accepted": "2026-07-28:server/utilities/logging#6",  # logLevel "loud" served (SHOULD)
    "server-cancels": "2026-07-28:basic/patterns/cancellation#3",  # cancels the client's echo call
    "list-varies": "2026-07-28:server/tools#6",  # a tool appears once echo was called
    "resources-vary": "2026-07-28:server/resources#4",  # a resource appears once echo was called
    "initialize-mute": "2026-07-28:basic/versioning#10",  # initialize refused without versions (SHOULD)
    "call-no-content": "2026-07-28:basic/index#1",  # echo's result has no content (the schema requires it)
    "notification-with-id": "2026-07-28:basic/index#26",  # echo first sends a list_changed carrying an id
    "unknown-tool-32000": "2026-07-28:basic/index#19",  # an unknown tool gets -32000 (a legacy code)
    "unknown-tool-32601": "2026-07-28:basic/index#3",  # an unknown tool gets -32601 (with HTTP 200)
    "unknown-tool-32603": "2026-07-28:basic/index#3",  # an unknown tool gets Internal error
    "tools-reordered": "2026-07-28:server/tools#8",  # every second tools/list in reverse order (SHOULD)
    "resource-uri-not-uri": "2026-07-28:server/resources#12",  # resource "mem a" (no scheme, a space)
    "bad-traceparent": "2026-07-28:basic/index#62",  # every result's _meta traceparent is "not-a-trace"
    "elicitation-nested": "2026-07-28:basic/index#1",  # confirm's form schema has an object property
    # stdio only
    "request-on-stdout": "2026-07-28:basic/transports/stdio#9",  # confirm first sends elicitation/create
    "junk-on-stdout": "2026-07-28:basic/transports/stdio#4",  # a banner line on stdout
    "pretty-printed": "2026-07-28:basic/transports/stdio#1",  # every message spread over several lines
    "answer-twice": "2026-07-28:basic/index#7",  # every tools/list answered twice (HTTP: in one SSE stream)
}
HTTP_BREAKS = {
    "version-header-ignored": "2026-07-28:basic/transports/streamable-http#27",  # header != _meta: served
    "mismatch-wrong-code": "2026-07-28:basic/transports/streamable-http#65",  # mismatch: 400 but -32602
    "mismatch-200": "2026-07-28:schema#18",  # mismatch: -32020 with HTTP 200
    "name-not-checked": "2026-07-28:basic/transports/streamable-http#63",  # Mcp-Name not compared
    "param-not-checked": "2026-07-28:basic/transports/streamable-http#60",  # Mcp-Param-* not compared
    "base64-not-decoded": "2026-07-28:basic/transports/streamable-http#54",  # =?base64?...?= compared raw
    "get-stream": "2026-07-28:basic/transports/streamable-http#72",  # GET opens an SSE stream (SHOULD)
    "unsupported-200": "2026-07-28:basic/transports/streamable-http#28",  # -32022 with HTTP 200
    "unknown-200": "2026-07-28:basic/transports/streamable-http#29",  # -32601 with HTTP 200
    "no-version-header-ok": "2026-07-28:basic/transports/streamable-http#31",  # no header: served
    "meta-200": "2026-07-28:basic/index#54",  # a malformed _meta: -32602 with HTTP 200
    "capability-200": "2026-07-28:basic/index#58",  # -32021 with HTTP 200
    "notification-200": "2026-07-28:basic/transports/streamable-http#13",  # a notification gets 200
    "origin-ignored": "2026-07-28:basic/transports/streamable-http#3",  # a foreign Origin served
    "stream-lingers": "2026-07-28:basic/transports/streamable-http#21",  # SSE open after the answer (SHOULD)
    "no-accel": "2026-07-28:basic/transports/streamable-http#22",  # SSE without X-Accel-Buffering (SHOULD)
    "request-on-stream": "2026-07-28:basic/transports/streamable-http#20",  # elicitation/create on the stream
    "text-plain-answer": "2026-07-28:basic/transports/streamable-http#16",  # unknown prompt: 200 text/plain
}
#: variants that bend nothing the spec requires: no MUST finding (and no SHOULD)
CORRECT = {
    "none": "the server as it should be",
    "crlf": "(stdio) every line ends with CRLF",
    "all-sse": "(HTTP) every answer is an SSE stream, its JSON split over several data: lines, CRLF line ends",
}
STDIO_ONLY = {"request-on-stdout", "junk-on-stdout", "crlf", "pretty-printed"}


class Refused(Exception):
    def __init__(self, code: int, message: str, data: Any = None, status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.data, self.status = code, message, data, status

    def error(self) -> dict[str, Any]:
        e: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            e["data"] = self.data
        return e


def _seal(payload: dict[str, Any]) -> str:
    body = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()
    return body + "." + hmac.new(KEY, body.encode(), hashlib.sha256).hexdigest()


def _digest(args: Any) -> str:
    return hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()


def _unseal(state: Any) -> dict[str, Any] | None:
    if not isinstance(state, str) or "." not in state:
        return None
    body, tag = state.rsplit(".", 1)
    if not hmac.compare_digest(tag, hmac.new(KEY, body.encode(), hashlib.sha256).hexdigest()):
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(body.encode()))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def _decode(raw: str | None) -> str | None:
    if raw is None:
        return None
    if raw.startswith("=?base64?") and raw.endswith("?="):
        try:
            return base64.b64decode(raw[9:-2], validate=True).decode()
        except ValueError:
            return None
    return raw


class Core:
    """The server's logic; ``emit(message)`` sends a notification or request to the client."""

    def __init__(self, brk: str) -> None:
        self.brk = brk
        self.uri_a = "mem a" if brk == "resource-uri-not-uri" else "mem://a"
        nested = {"type": "object", "properties": {"really": {"type": "boolean"}}}
        self.ok_schema: dict[str, Any] = nested if brk == "elicitation-nested" else {"type": "boolean"}
        self.listings = 0  # tools/list requests for a first page
        self.echoed = False

    def tools(self) -> list[dict[str, Any]]:
        ro = {"readOnlyHint": True}
        tools = [
            {
                "name": "echo",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                "annotations": ro,
            },
            {
                "name": "weather",
                "inputSchema": {
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                    "required": ["region"],
                },
                "annotations": ro,
            },
            {
                "name": "confirm",
                "inputSchema": {"type": "object", "properties": {"what": {"type": "string"}}, "required": ["what"]},
                "annotations": ro,
            },
        ]
        if self.brk == "list-varies" and self.echoed:
            tools.append({"name": "recent", "inputSchema": {"type": "object"}, "annotations": ro})
        return tools

    def caps(self) -> dict[str, Any]:
        caps = {"tools": {"listChanged": True}, "prompts": {"listChanged": True}, "resources": {}}
        if self.brk in ("level-accepted", "log-unasked"):
            caps["logging"] = {}
        return caps

    def finish(self, result: dict[str, Any], cacheable: bool = False) -> dict[str, Any]:
        if self.brk == "no-result-type":
            result.pop("resultType", None)
        elif self.brk == "odd-result-type":
            result["resultType"] = "done"
        else:
            result.setdefault("resultType", "complete")
        if self.brk != "no-server-info":
            result["_meta"] = {**result.get("_meta", {}), SINFO: {"name": "modern-corpus", "version": "1"}}
        if self.brk == "bad-traceparent":
            result["_meta"] = {**result.get("_meta", {}), "traceparent": "not-a-trace"}
        if cacheable and result.get("resultType") != "input_required" and self.brk != "no-ttl":
            result.setdefault("ttlMs", -1 if self.brk == "negative-ttl" else 1000)
            result.setdefault("cacheScope", "public")
        return result

    def validate(self, message: dict[str, Any], headers: dict[str, str] | None) -> dict[str, Any]:
        """The checks before the handler; the request's _meta."""
        method = message["method"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if method == "initialize":
            data = None if self.brk == "initialize-mute" else {"supported": [V], "requested": "?"}
            text = "Unsupported protocol version" if self.brk == "initialize-mute" else f"this server speaks {V} only"
            raise Refused(-32022, text, data, 400)
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        if not isinstance(meta.get(PV), str) or (
            not isinstance(meta.get(CAPS), dict) and self.brk != "meta-not-checked"
        ):
            raise Refused(
                -32602,
                "Invalid params: a required _meta field is missing",
                status=200 if self.brk == "meta-200" else 400,
            )
        if headers is not None:
            self.check_headers(message, params, meta, headers)
        if meta[PV] != V:
            if self.brk == "version-invalid-params":
                raise Refused(-32602, "Invalid params: unsupported version")
            raise Refused(
                -32022,
                "Unsupported protocol version",
                {"supported": [V], "requested": meta[PV]},
                200 if self.brk == "unsupported-200" else 400,
            )
        level = meta.get(LOGLEVEL)
        if level is not None and level not in LEVELS and self.brk != "level-accepted":
            raise Refused(-32602, "Invalid params: unknown log level", status=400)
        return meta

    def mismatch(self, what: str) -> Refused:
        if self.brk == "mismatch-wrong-code":
            return Refused(-32602, "Invalid params: " + what, status=400)
        return Refused(-32020, "Header mismatch: " + what, status=200 if self.brk == "mismatch-200" else 400)

    def check_headers(
        self, message: dict[str, Any], params: dict[str, Any], meta: dict[str, Any], headers: dict[str, str]
    ) -> None:
        version = headers.get("mcp-protocol-version")
        if version is None:
            if self.brk != "no-version-header-ok":
                raise self.mismatch("no MCP-Protocol-Version header")
        elif version != meta.get(PV) and self.brk != "version-header-ignored":
            raise self.mismatch("MCP-Protocol-Version differs from _meta")
        if headers.get("mcp-method") != message["method"]:
            raise self.mismatch("Mcp-Method differs from the method")
        method = message["method"]
        if method in ("tools/call", "prompts/get", "resources/read") and self.brk != "name-not-checked":
            want = params.get("uri" if method == "resources/read" else "name")
            raw = headers.get("mcp-name")
            got = raw if self.brk == "base64-not-decoded" else _decode(raw)
            if got != want:
                raise self.mismatch("Mcp-Name differs from the body")
        if method == "tools/call" and params.get("name") == "weather" and self.brk != "param-not-checked":
            region = (params.get("arguments") or {}).get("region")
            if region is not None and _decode(headers.get("mcp-param-region")) != str(region):
                raise self.mismatch("Mcp-Param-Region differs from the argument")

    def handle(self, message: dict[str, Any], emit: Any, headers: dict[str, str] | None = None) -> dict[str, Any]:
        """The response to one request (a result or an error)."""
        rid = message["id"]
        try:
            meta = self.validate(message, headers)
            result = self.serve(message, meta, emit)
        except Refused as e:
            return {"jsonrpc": "2.0", "id": rid, "error": e.error(), "_status": e.status}
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def page(self, key: str, items: list[Any], params: dict[str, Any]) -> dict[str, Any]:
        start = int(params.get("cursor") or 0)
        out: dict[str, Any] = {key: items[start : start + 2]}
        if start + 2 < len(items):
            out["nextCursor"] = str(start + 2)
        if self.brk == "mixed-scope" and start:
            out["cacheScope"] = "private"
        return self.finish(out, cacheable=True)

    def serve(self, message: dict[str, Any], meta: dict[str, Any], emit: Any) -> dict[str, Any]:
        method = message["method"]
        params = message.get("params") or {}
        caps = meta.get(CAPS) if isinstance(meta.get(CAPS), dict) else {}
        if method == "server/discover" and self.brk != "no-discover":
            return self.finish(
                {
                    "supportedVersions": [V],
                    "capabilities": self.caps(),
                    "serverInfo": {"name": "modern-corpus", "version": "1"},
                },
                cacheable=True,
            )
        if method == "ping" and self.brk == "removed-served":
            return self.finish({})
        if method == "tools/list":
            tools = self.tools()
            if not params.get("cursor"):
                self.listings += 1
            if self.brk == "tools-reordered" and self.listings % 2 == 0:
                tools.reverse()
            return self.page("tools", tools, params)
        if method == "prompts/list":
            if self.brk == "mrtr-on-list" and "requestState" not in params:
                return self.finish({"resultType": "input_required", "requestState": _seal({"warm": True})})
            return self.page(
                "prompts",
                [{"name": "hello"}, {"name": "greet", "arguments": [{"name": "who", "required": True}]}],
                params,
            )
        if method == "prompts/get":
            if params.get("name") not in ("hello", "greet"):
                if self.brk == "text-plain-answer":
                    raise Refused(0, "", status=-1)
                raise Refused(-32042 if self.brk == "retired-code" else -32602, "Unknown prompt")
            return self.finish({"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}]})
        if method == "resources/list":
            listed = [{"uri": self.uri_a, "name": "a"}, {"uri": "mem://b", "name": "b"}]
            if self.brk == "resources-vary" and self.echoed:
                listed.append({"uri": "mem://recent", "name": "recent"})
            return self.page("resources", listed, params)
        if method == "resources/templates/list":
            return self.page("resourceTemplates", [], params)
        if method == "resources/read":
            uri = params.get("uri")
            if uri not in (self.uri_a, "mem://b"):
                if self.brk == "resource-empty":
                    return self.finish({"contents": []}, cacheable=True)
                raise Refused(
                    -32002 if self.brk == "resource-legacy-code" else -32602, "Resource not found", {"uri": uri}
                )
            return self.finish({"contents": [{"uri": uri, "text": uri}]}, cacheable=True)
        if method == "tools/call":
            return self.call(message, params, meta, caps, emit)
        if method == "subscriptions/listen":
            return self.listen(message, params, emit)
        raise Refused(-32601, f"Method not found: {method}", status=404 if self.brk != "unknown-200" else 200)

    def call(
        self, message: dict[str, Any], params: dict[str, Any], meta: dict[str, Any], caps: dict[str, Any], emit: Any
    ) -> dict[str, Any]:
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "echo":
            if self.brk == "log-unasked" or (LOGLEVEL in meta):
                emit({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "echo"}})
            if self.brk == "notification-with-id":
                emit({"jsonrpc": "2.0", "id": 4242, "method": "notifications/tools/list_changed"})
            if self.brk == "server-cancels":
                emit({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": message["id"]}})
            self.echoed = True
            if self.brk == "call-no-content":
                return self.finish({"isError": False})
            return self.finish({"content": [{"type": "text", "text": str(args.get("text"))}]})
        if name == "weather":
            return self.finish({"content": [{"type": "text", "text": f"sunny in {args.get('region')}"}]})
        if name != "confirm":
            codes = {"reserved-code": -32077, "unknown-tool-32000": -32000, "unknown-tool-32601": -32601}
            codes["unknown-tool-32603"] = -32603
            raise Refused(codes.get(self.brk, -32602), f"Unknown tool {name!r}")
        answers = params.get("inputResponses")
        if "requestState" in params or isinstance(answers, dict):
            state = _unseal(params.get("requestState"))
            if self.brk != "state-not-verified" and state is None:
                raise Refused(-32602, "Invalid params: requestState failed verification")
            if self.brk not in ("state-not-verified", "state-unbound") and (state or {}).get("args") != _digest(args):
                # the state is bound to the arguments of the request that got it
                raise Refused(-32602, "Invalid params: requestState was issued for another request")
            if isinstance(answers, dict) and isinstance(answers.get("ok"), dict):
                return self.finish({"content": [{"type": "text", "text": "confirmed"}]})
        if "elicitation" not in caps and self.brk != "mrtr-undeclared":
            if self.brk == "capability-invalid-params":
                raise Refused(-32602, "Invalid params: elicitation needed")
            raise Refused(
                -32021,
                "Missing required client capability",
                {"requiredCapabilities": {"elicitation": {}}},
                200 if self.brk == "capability-200" else 400,
            )
        if self.brk in ("request-on-stdout", "request-on-stream"):
            emit(
                {
                    "jsonrpc": "2.0",
                    "id": "srv-1",
                    "method": "elicitation/create",
                    "params": {"message": "ok?", "requestedSchema": {"type": "object"}},
                }
            )
        if self.brk == "mrtr-empty":
            return self.finish({"resultType": "input_required"})
        ask = {
            "method": "ask/user" if self.brk == "mrtr-bad-request" else "elicitation/create",
            "params": {
                "mode": "form",
                "message": "ok?",
                "requestedSchema": {"type": "object", "properties": {"ok": self.ok_schema}, "required": ["ok"]},
            },
        }
        return self.finish(
            {
                "resultType": "input_required",
                "inputRequests": {"ok": ask},
                "requestState": _seal({"t": time.time(), "args": _digest(args)}),
            }
        )

    def listen(self, message: dict[str, Any], params: dict[str, Any], emit: Any) -> dict[str, Any]:
        rid = message["id"]

        def note(method: str, extra: dict[str, Any] | None = None) -> None:
            p = dict(extra or {})
            if self.brk != "listen-untagged" or method.endswith("acknowledged"):
                p["_meta"] = {SUBID: rid}
            emit({"jsonrpc": "2.0", "method": method, "params": p})

        wanted = params.get("notifications") or {}
        if self.brk == "listen-no-ack":
            note("notifications/tools/list_changed")
        note("notifications/subscriptions/acknowledged", {"notifications": wanted})
        note("notifications/tools/list_changed")
        if self.brk == "listen-extra-type":
            note("notifications/prompts/list_changed")
        return {"_listen": True}


# -- stdio ------------------------------------------------------------------------------------------------


def serve_stdio(brk: str) -> None:
    core = Core(brk)
    lock = threading.Lock()
    end = b"\r\n" if brk == "crlf" else b"\n"
    cancelled: set[str] = set()

    def write(message: dict[str, Any]) -> None:
        message.pop("_status", None)
        with lock:
            indent = 1 if brk == "pretty-printed" else None
            sys.stdout.buffer.write(json.dumps(message, indent=indent).encode() + end)
            sys.stdout.buffer.flush()

    if brk == "junk-on-stdout":
        sys.stdout.buffer.write(b"modern corpus server starting\n")
        sys.stdout.buffer.flush()

    def run(message: dict[str, Any]) -> None:
        answer = core.handle(message, write)
        if answer.get("result", {}).pop("_listen", None):
            for _ in range(100):
                if json.dumps(message["id"]) in cancelled:
                    return
                time.sleep(0.05)
            answer["result"] = core.finish({})
        again = json.loads(json.dumps(answer))
        write(answer)
        if brk == "answer-twice" and message["method"] == "tools/list":
            write(again)

    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if not isinstance(message, dict) or "method" not in message:
            continue
        if "id" not in message:
            if message["method"] == "notifications/cancelled":
                cancelled.add(json.dumps((message.get("params") or {}).get("requestId")))
            continue
        threading.Thread(target=run, args=(message,), daemon=True).start()


# -- Streamable HTTP --------------------------------------------------------------------------------------


class _Handler(JsonHandler):
    server: "ModernHTTPServer"

    def _plain(self, status: int, body: bytes = b"", ctype: str = "application/json") -> None:
        self.answer(status, body or None, ctype)

    def do_GET(self) -> None:
        if self.server.brk == "get-stream":
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", "0")
            self.end_headers()
            return
        self._plain(405)

    def do_DELETE(self) -> None:
        self._plain(405)

    def do_POST(self) -> None:
        brk = self.server.brk
        body = self.read_body()
        origin = self.headers.get("origin")
        if (
            origin is not None
            and not origin.startswith(("http://127.0.0.1", "http://localhost"))
            and brk != "origin-ignored"
        ):
            self._plain(403, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden origin"}}')
            return
        try:
            message = json.loads(body)
        except ValueError:
            self._plain(400, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
            return
        if not isinstance(message, dict) or "method" not in message:
            self._plain(400, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}')
            return
        if "id" not in message:
            self._plain(200 if brk == "notification-200" else 202)
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        sent: list[dict[str, Any]] = []
        answer = self.server.core.handle(message, sent.append, headers)
        status = answer.pop("_status", 200)
        if status == -1:
            self._plain(200, b"no such prompt", "text/plain")
            return
        listen = bool(answer.get("result", {}).pop("_listen", None))
        lingering = brk in ("stream-lingers", "no-accel") and message["method"] == "tools/call"
        twice = brk == "answer-twice" and message["method"] == "tools/list"
        if status != 200 or not (sent or listen or lingering or twice or brk == "all-sse"):
            self._plain(status, json.dumps(answer).encode())
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        if brk != "no-accel":
            self.send_header("x-accel-buffering", "no")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for m in sent:
                self._event(m)
            if listen:
                time.sleep(2)
                answer["result"] = self.server.core.finish({})
            self._event(answer)
            if twice:
                self._event(answer)  # the same response again, in the same stream
            if brk == "stream-lingers" and lingering:
                time.sleep(2.5)
        except OSError:
            pass

    def _event(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, indent=1) if self.server.brk == "all-sse" else json.dumps(message)
        nl = "\r\n" if self.server.brk == "all-sse" else "\n"
        data = "".join(f"data: {line}{nl}" for line in text.split("\n"))
        self.wfile.write(f"event: message{nl}{data}{nl}".encode())
        self.wfile.flush()


class ModernHTTPServer(CorpusServer):
    def __init__(self, brk: str, port: int = 0) -> None:
        super().__init__(_Handler, port)
        self.brk = brk
        self.core = Core(brk)


@contextmanager
def serving(brk: str = "none") -> Iterator[str]:
    """Serve the variant ``brk`` over HTTP on a free loopback port for the block; yields its URL."""
    with serving_on_a_thread(ModernHTTPServer(brk)) as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="brk", default="none", choices=[*BREAKS, *HTTP_BREAKS, *CORRECT])
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if not args.http:
        serve_stdio(args.brk)
        return
    serve_until_interrupted(ModernHTTPServer(args.brk, args.port))


if __name__ == "__main__":
    main()
