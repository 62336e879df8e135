"""Servers that misbehave wholesale (standard library only): the cross-checker must survive them all.

    python wild.py MODE

Each mode is a way a peer can go wrong that once crashed the checker, hung it,
or failed checks without saying why (``MODES``). The tests check the principles
of spec_notes/crosscheck.md on each: a report comes out, every failed check
names the statement broken, the exit status follows the findings, and the
whole battery ends within 60 s with the default timeout. It shares no code
with mcp_ref.
"""

import json
import sys
from typing import Any

SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26"]

#: mode -> what the server does, and the requirement the report must name (None: no MUST)
MODES: dict[str, tuple[str, str | None]] = {
    "silent": ("reads everything and answers nothing", "basic/lifecycle#3"),
    "garbage": ("answers every line with text that is not JSON", "basic/transports#6"),
    "exits-at-once": ("writes one message-looking line and exits", "basic/lifecycle#3"),
    "no-ping": ("answers everything but ping", "basic/utilities/ping#1"),
    "only-initialize": ("answers initialize and nothing else", "basic/utilities/ping#1"),
    "errors-malformed": ("its error answers have no code: our client cannot read them", "basic/index#11"),
    "crashes-on-call": ("exits when a tool is called", "basic/index#3"),
    "old-revision": ("speaks 2024-11-05 only (valid)", None),
}


def write(message: Any) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(mode: str, message: dict[str, Any]) -> None:
    rid, method = message["id"], message["method"]
    params = message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        if mode == "old-revision":
            version = "2024-11-05"
        else:
            version = asked if asked in SUPPORTED else SUPPORTED[0]
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": "wild", "version": "1"},
        }
        write({"jsonrpc": "2.0", "id": rid, "result": result})
        return
    if mode == "only-initialize" or (mode == "no-ping" and method == "ping"):
        return
    if method == "ping":
        write({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/list" and "cursor" not in params:
        tool = {"name": "look", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
        write({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool]}})
    elif method == "tools/call":
        if mode == "crashes-on-call":
            sys.exit(3)
        if params.get("name") == "look":
            write({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "seen"}]}})
        else:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "unknown tool"}})
    elif method in ("prompts/list", "resources/list", "resources/templates/list") and "cursor" not in params:
        field = {"prompts/list": "prompts", "resources/list": "resources"}.get(method, "resourceTemplates")
        write({"jsonrpc": "2.0", "id": rid, "result": {field: []}})
    else:
        error: dict[str, Any] = {"message": "no"} if mode == "errors-malformed" else {"code": -32602, "message": "no"}
        if method not in ("prompts/get", "resources/read", "tools/list", "prompts/list", "resources/list"):
            error = {"message": "no"} if mode == "errors-malformed" else {"code": -32601, "message": "no"}
        write({"jsonrpc": "2.0", "id": rid, "error": error})


def main() -> None:
    mode = sys.argv[1]
    if mode == "exits-at-once":
        sys.stdout.write('{"jsonrpc": "2.0", "method": "notifications/message"}\n')
        return
    for line in sys.stdin:
        if not line.strip() or mode == "silent":
            continue
        if mode == "garbage":
            sys.stdout.write("? what\n")
            sys.stdout.flush()
            continue
        try:
            message = json.loads(line)
        except ValueError:
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            rid = message.get("id") if isinstance(message, dict) else None
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": "Invalid Request"}})
            continue
        if "method" not in message:
            continue
        if "id" not in message:
            continue
        if message["id"] is None:
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}})
            continue
        answer(mode, message)


if __name__ == "__main__":
    main()
