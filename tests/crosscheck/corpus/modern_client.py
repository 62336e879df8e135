"""A small 2026-07-28 MCP client in raw JSON (standard library only) that can break ONE rule on demand.

    python modern_client.py [--break NAME] -- SERVER COMMAND...     # stdio
    python modern_client.py [--break NAME] --url URL                 # Streamable HTTP

It asks ``server/discover``, lists the tools, calls each read-only one with
arguments made from its schema (answering the input requests of a multi
round-trip request and retrying), gets a prompt, reads a resource, and leaves.
Over HTTP every POST carries the request metadata headers (``Mcp-Method``,
``Mcp-Name``, ``Mcp-Param-*`` for the parameters marked ``x-mcp-header``). It
shares no code with mcp_ref.
"""

import argparse
import base64
import json
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

V = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
CINFO = "io.modelcontextprotocol/clientInfo"

#: name -> the rule it breaks (the 2026-07-28 id the fixture reports)
BREAKS = {
    "no-capabilities": "2026-07-28:basic/index#52",  # _meta without clientCapabilities
    "no-client-info": "2026-07-28:basic/index#55",  # _meta without clientInfo (SHOULD)
    "state-modified": "2026-07-28:basic/patterns/mrtr#23",  # the requestState echoed cut short
    "state-invented": "2026-07-28:basic/patterns/mrtr#25",  # a requestState '' though none was given
    "same-id": "2026-07-28:basic/patterns/mrtr#26",  # a retry under the first request's id
    "no-answers": "2026-07-28:basic/patterns/mrtr#21",  # a retry without inputResponses
    "writes-response": "2026-07-28:basic/transports/stdio#7",  # answers input requests on stdin too
}
#: (stdio) variants whose opening does not look like 2026-07-28's: the fixture serves them as a 2025 client
#: and must still name the 2026-07-28 statement they break (trial30c D7)
OPENING_BREAKS = {
    # _meta with clientInfo and clientCapabilities but no protocolVersion (mnoversion)
    "no-protocol-version": "2026-07-28:basic/index#52",
    # opens with a cancellation of a request it never sent (mcancelunknown)
    "cancels-unknown": "2026-07-28:basic/patterns/cancellation#11",
}
HTTP_BREAKS = {
    "no-method-header": "2026-07-28:basic/transports/streamable-http#32",  # no Mcp-Method header
    "version-header-mismatch": "2026-07-28:basic/transports/streamable-http#26",  # header 2025-11-25
    "no-version-header": "2026-07-28:basic/transports/streamable-http#25",  # no MCP-Protocol-Version
    "no-param-header": "2026-07-28:basic/transports/streamable-http#36",  # x-mcp-header not mirrored
}
#: variants that bend nothing the spec requires
CORRECT = {
    "none": "the client as it should be",
    "declines": "declares elicitation but its user declines every input request",
}
STDIO_ONLY = {"writes-response"}


def sample(schema: Any) -> Any:
    props = schema.get("properties") if isinstance(schema, dict) else None
    out: dict[str, Any] = {}
    for name in (schema or {}).get("required", []) if isinstance(schema, dict) else []:
        kind = (props or {}).get(name, {}).get("type")
        out[name] = {"boolean": True, "integer": 1, "number": 1}.get(kind, "answer")
    return out


def header_value(value: str) -> str:
    if value.isascii() and value.isprintable() and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


class Client:
    def __init__(self, brk: str, url: str | None, command: list[str]) -> None:
        self.brk = brk
        self.url = url
        self.next_id = 0
        self.tools: dict[str, Any] = {}
        if url is None:
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def meta(self) -> dict[str, Any]:
        m: dict[str, Any] = {
            PV: V,
            CAPS: {"elicitation": {"form": {}}},
            CINFO: {"name": "modern-corpus-client", "version": "1"},
        }
        if self.brk == "no-capabilities":
            del m[CAPS]
        if self.brk == "no-client-info":
            del m[CINFO]
        if self.brk == "no-protocol-version":
            del m[PV]
        return m

    def headers(self, method: str, params: dict[str, Any]) -> dict[str, str]:
        h = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if self.brk != "no-version-header":
            h["mcp-protocol-version"] = "2025-11-25" if self.brk == "version-header-mismatch" else V
        if self.brk != "no-method-header":
            h["mcp-method"] = method
        name = params.get("uri") if method == "resources/read" else params.get("name")
        if method in ("tools/call", "prompts/get", "resources/read") and isinstance(name, str):
            h["mcp-name"] = header_value(name)
        if method == "tools/call" and self.brk != "no-param-header":
            schema = (self.tools.get(params.get("name")) or {}).get("inputSchema") or {}
            for prop, sub in (schema.get("properties") or {}).items():
                header = sub.get("x-mcp-header") if isinstance(sub, dict) else None
                value = (params.get("arguments") or {}).get(prop)
                if header and value is not None:
                    h["mcp-param-" + header.lower()] = header_value(str(value))
        return h

    def request(self, method: str, params: dict[str, Any] | None = None, rid: int | None = None) -> dict[str, Any]:
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        p = dict(params or {})
        p["_meta"] = self.meta()
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": p}
        if self.url is None:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    return {}
                answer = json.loads(line)
                if answer.get("id") == rid and "method" not in answer:
                    return answer
        request = urllib.request.Request(self.url, json.dumps(message).encode(), self.headers(method, p), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                body = response.read().decode()
                ctype = response.headers.get("content-type", "")
        except urllib.error.HTTPError as e:
            body, ctype = e.read().decode(), e.headers.get("content-type", "")
        if ctype.startswith("text/event-stream"):
            for event in body.replace("\r\n", "\n").split("\n\n"):
                data = "\n".join(line[5:].lstrip() for line in event.split("\n") if line.startswith("data:"))
                if data and json.loads(data).get("id") == rid:
                    return dict(json.loads(data))
            return {}
        return dict(json.loads(body)) if body else {}

    def write_response(self, rid: str, result: Any) -> None:
        if self.url is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode() + b"\n")
            self.proc.stdin.flush()

    def answer(self, request: dict[str, Any]) -> Any:
        if request.get("method") == "elicitation/create":
            if self.brk == "declines":
                return {"action": "decline"}
            return {"action": "accept", "content": sample((request.get("params") or {}).get("requestedSchema"))}
        if request.get("method") == "roots/list":
            return {"roots": []}
        return {"action": "decline"}

    def call(self, method: str, params: dict[str, Any]) -> None:
        rid = None
        answer = self.request(method, params)
        first = self.next_id
        for _ in range(3):
            result = answer.get("result") or {}
            if result.get("resultType") != "input_required":
                return
            retry = {k: v for k, v in params.items()}
            requests = result.get("inputRequests") or {}
            if requests and self.brk != "no-answers":
                retry["inputResponses"] = {k: self.answer(r) for k, r in requests.items()}
                if self.brk == "writes-response":
                    for k, r in requests.items():
                        self.write_response(k, self.answer(r))
            if "requestState" in result:
                state = result["requestState"]
                retry["requestState"] = state[: len(state) // 2] if self.brk == "state-modified" else state
            elif self.brk == "state-invented":
                retry["requestState"] = ""
            rid = first if self.brk == "same-id" else None
            answer = self.request(method, retry, rid=rid)

    def run(self) -> None:
        if self.brk == "cancels-unknown" and self.url is None:
            assert self.proc.stdin is not None
            # (without _meta, as the Python SDK's client sends it)
            cancel = {"method": "notifications/cancelled", "params": {"requestId": "never-sent"}}
            self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **cancel}).encode() + b"\n")
            self.proc.stdin.flush()
        discover = self.request("server/discover").get("result") or {}
        if V not in (discover.get("supportedVersions") or []):
            return
        tools = (self.request("tools/list").get("result") or {}).get("tools") or []
        self.tools = {t["name"]: t for t in tools}
        for tool in tools:
            if (tool.get("annotations") or {}).get("readOnlyHint"):
                self.call("tools/call", {"name": tool["name"], "arguments": sample(tool.get("inputSchema"))})
        for prompt in (self.request("prompts/list").get("result") or {}).get("prompts") or []:
            self.call("prompts/get", {"name": prompt["name"]})
        for resource in (self.request("resources/list").get("result") or {}).get("resources") or []:
            self.call("resources/read", {"uri": resource["uri"]})

    def close(self) -> None:
        if self.url is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--break", dest="brk", default="none", choices=[*OPENING_BREAKS, *BREAKS, *HTTP_BREAKS, *CORRECT]
    )
    parser.add_argument("--url")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    client = Client(args.brk, args.url, args.command)
    try:
        client.run()
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
