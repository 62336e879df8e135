"""A small 2025-11-25 client over Streamable HTTP (standard library only) that can break ONE rule.

    python http_client.py [--break NAME] --url URL

It initialises, sends ``notifications/initialized``, lists the tools and pings, with the
session id and ``MCP-Protocol-Version`` on every request after initialize and an ``Accept``
listing both JSON and SSE, unless ``--break`` says otherwise. It shares no code with mcp_ref.
"""

import argparse
import json
import time
import urllib.error
import urllib.request
from typing import Any

#: name -> the transport rule it breaks
BREAKS = {
    "accept-json-only": "basic/transports#16",  # Accept: application/json only
    "no-session-id": "basic/transports#59",  # the session id is never sent back
    "no-version-header": "basic/transports#65",  # no MCP-Protocol-Version after initialize
}
CORRECT = {"none": "the client as it should be"}
#: the client leaves the fixture waiting: it stays (its session open, its process running) after its requests
HANGS = {"never-leaves": "basic/utilities/ping#1"}
#: a correct client that keeps working: KEEPS_WORKING pings, one every KEEPS_WORKING_EVERY seconds
SLOW = {"keeps-working": "pings the server a while, then leaves"}
KEEPS_WORKING = 12
KEEPS_WORKING_EVERY = 1.0


def post(url: str, message: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(url, json.dumps(message).encode(), {"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, hdrs, body = response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as e:
        status, hdrs, body = e.code, dict(e.headers), e.read().decode()
    if str(hdrs.get("Content-Type", hdrs.get("content-type", ""))).startswith("text/event-stream"):
        datas = [line[5:].strip() for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
        return status, hdrs, json.loads(datas[-1]) if datas else None
    return status, hdrs, json.loads(body) if body.strip() else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="brk", default="none", choices=[*BREAKS, *CORRECT, *HANGS, *SLOW])
    parser.add_argument("--url", required=True)
    args = parser.parse_args()
    accept = "application/json" if args.brk == "accept-json-only" else "application/json, text/event-stream"
    headers = {"accept": accept}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "http-corpus", "version": "1"},
        },
    }
    status, hdrs, _ = post(args.url, init, headers)
    if status != 200:
        return
    session = {k.lower(): v for k, v in hdrs.items()}.get("mcp-session-id")
    if session is not None and args.brk != "no-session-id":
        headers["mcp-session-id"] = session
    if args.brk != "no-version-header":
        headers["mcp-protocol-version"] = "2025-11-25"
    post(args.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    post(args.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers)
    post(args.url, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers)
    if args.brk == "keeps-working":
        for n in range(KEEPS_WORKING):
            time.sleep(KEEPS_WORKING_EVERY)
            post(args.url, {"jsonrpc": "2.0", "id": 4 + n, "method": "ping"}, headers)
    while args.brk == "never-leaves":
        time.sleep(1)  # until stopped
    if session is not None:
        request = urllib.request.Request(args.url, method="DELETE", headers={**headers, "mcp-session-id": session})
        try:
            urllib.request.urlopen(request, timeout=5).close()
        except urllib.error.HTTPError:
            pass


if __name__ == "__main__":
    main()
