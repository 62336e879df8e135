"""A small Streamable HTTP MCP server in raw JSON (standard library only) that can break ONE rule on demand.

    python http_server.py [--break NAME] [--port PORT]    # prints its URL, serves until stopped

In a test, :func:`serving` runs it on threads of the test's own process (no
mcp_ref in it either way). Like ``server.py`` it shares no code with mcp_ref,
so the cross-checker meets faults in code it did not write: ``BREAKS`` maps
each name to the transport rule it breaks (basic/transports#streamable-http).

The correct server answers every request with JSON (no SSE), refuses a GET
with 405, gives a session id at initialize and forgets it on DELETE, and
answers input it cannot take with an HTTP error whose body is a JSON-RPC
error without an id (which transports#11 / #20 allow).
"""

import argparse
import json
import queue
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from http_base import CorpusServer, JsonHandler, serve_until_interrupted, serving_on_a_thread

SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26"]

#: name -> the rule it breaks (the requirement the cross-checker reports)
BREAKS = {
    "bad-input-200": "basic/transports#19",  # input that is not JSON-RPC answered 200 (an error in the body)
    "notification-200": "basic/transports#18",  # a POSTed notification answered 200, not 202
    "request-text-plain": "basic/transports#21",  # a request answered 200 text/plain
    "request-202": "basic/transports#21",  # a request answered 202 Accepted with no body
    "get-200-text": "basic/transports#39",  # a GET answered 200 text/plain: neither SSE nor 405
    "unknown-version-accepted": "basic/transports#68",  # an unsupported MCP-Protocol-Version served
    "any-origin": "basic/transports#10",  # a foreign Origin served, on a loopback address
    "no-session-id-accepted": "basic/transports#60",  # a request without the session id served
    "ended-session-400": "basic/transports#61",  # an ended session's id answered 400, not 404
    # answers every request with an SSE stream (as the "sse" control), but:
    "sse-no-priming": "basic/transports#23",  # the stream starts with the answer, no priming event
    "sse-stays-open": "basic/transports#32",  # the stream is not closed after the answer
    "sse-event-id-reused": "basic/transports#50",  # every stream numbers its events from 1
    "session-id-guessable": "basic/transports#56",  # session ids 1, 2, 3 ...
    "session-id-bad-chars": "basic/transports#57",  # a session id with a space in it
}
#: variants that send the same JSON-RPC response twice (one response per request: basic/index#7); the
#: main session sees them (the GET stream is a client's, not the transport probes')
DUPLICATES = {
    "sse-answer-twice": "basic/index#7",  # in one SSE stream (two events, two event ids)
    "answer-again-on-get": "basic/index#7",  # in the POST's answer, and again on the session's GET stream
}
#: variants that leave requests unanswered (never send the head of an answer): the checker must
#: still end in bounded time with a report (name -> the rule the silence breaks)
HANGS = {
    "get-never-answered": "basic/transports#39",  # a GET gets neither an SSE stream nor 405: nothing at all
    "stops-answering": "basic/index#3",  # no request but initialize gets an answer
}
#: variants that bend nothing the spec requires: no MUST finding
CORRECT = {
    "none": "the server as it should be",
    "sse": "every answer is an SSE stream (a priming event, the answer, the end)",
    "sse-split-data": "every answer is an SSE stream whose JSON is split over several data: lines, CRLF line ends",
    # (event ids are unique within a session, basic/transports#50: another session may use them again)
    "sse-ids-per-session": "every answer, initialize's too, an SSE stream; event ids count from 1 in each session",
}
#: the variants that answer requests with SSE streams
SSE = {
    "sse",
    "sse-split-data",
    "sse-no-priming",
    "sse-stays-open",
    "sse-event-id-reused",
    "sse-answer-twice",
    "sse-ids-per-session",
}


class Handler(JsonHandler):
    server: "CorpusHTTPServer"

    def refuse(self, status: int, code: int, message: str) -> None:
        """An HTTP error with a JSON-RPC error without an id in its body."""
        self.answer(status, {"jsonrpc": "2.0", "error": {"code": code, "message": message}})

    def refuse_input(self, code: int, message: str) -> None:
        """Input that is not a JSON-RPC message: 400 (but 200 when breaking #19), the error in the body."""
        self.refuse(200 if self.server.brk == "bad-input-200" else 400, code, message)

    # -- the transport ----------------------------------------------------------------------

    def session_ok(self, method: str | None) -> bool:
        """Whether the headers let the request through (else it has been answered)."""
        brk = self.server.brk
        origin = self.headers.get("Origin")
        if origin is not None and not origin.startswith(("http://127.0.0.1", "http://localhost")):
            if brk != "any-origin":
                self.refuse(403, -32600, f"Forbidden: origin {origin}")
                return False
        if method == "initialize":
            return True
        sid = self.headers.get("Mcp-Session-Id")
        if sid is None:
            if brk != "no-session-id-accepted":
                self.refuse(400, -32600, "Bad Request: no Mcp-Session-Id")
                return False
        elif sid not in self.server.sessions:
            self.refuse(400 if brk == "ended-session-400" else 404, -32600, "Not Found: no such session")
            return False
        version = self.headers.get("MCP-Protocol-Version")
        if version is not None and version not in SUPPORTED and brk != "unknown-version-accepted":
            self.refuse(400, -32600, f"Bad Request: unsupported MCP-Protocol-Version {version}")
            return False
        return True

    def hang(self) -> None:
        """Send nothing back until the server stops (then close the connection)."""
        self.server.released.wait()
        self.close_connection = True

    def do_GET(self) -> None:
        if self.server.brk == "answer-again-on-get" and self.session_ok(None):
            self.get_stream()
            return
        if self.server.brk == "get-never-answered":
            self.hang()
        elif self.server.brk == "get-200-text":
            self.answer(200, b"no event stream here", "text/plain")
        else:
            self.answer(405, Allow="POST, DELETE")

    def do_DELETE(self) -> None:
        if self.session_ok(None):
            self.server.sessions.discard(self.headers.get("Mcp-Session-Id", ""))
            self.answer(200)

    def do_POST(self) -> None:
        body = self.read_body()
        try:
            message = json.loads(body)
        except ValueError:
            self.refuse_input(-32700, "Parse error")
            return
        if not isinstance(message, dict):
            self.refuse_input(-32600, "Invalid Request: one message per POST")
            return
        method = message.get("method")
        if self.server.brk == "stops-answering" and "id" in message and method != "initialize":
            self.hang()
            return
        if not self.session_ok(method):
            return
        rid = message.get("id")
        if method is None:
            self.answer(202)  # a response (or what could be one) is never answered
            return
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            self.refuse_input(-32600, "Invalid Request")
            return
        if "id" not in message:
            self.answer(200 if self.server.brk == "notification-200" else 202)
            return
        if not isinstance(rid, str | int) or isinstance(rid, bool):
            self.refuse_input(-32600, "Invalid Request: the id must be a string or a number")
            return
        headers: dict[str, str] = {}
        if method == "initialize":
            asked = (message.get("params") or {}).get("protocolVersion")
            session = uuid.uuid4().hex
            if self.server.brk == "session-id-guessable":
                session = str(len(self.server.sessions) + 1)
            elif self.server.brk == "session-id-bad-chars":
                session = "session " + session
            self.server.sessions.add(session)
            headers["Mcp_Session_Id"] = session
            result: dict[str, Any] = {
                "protocolVersion": asked if asked in SUPPORTED else SUPPORTED[0],
                "capabilities": {},
                "serverInfo": {"name": "corpus-http", "version": "1"},
            }
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "result": result}
        elif method == "ping":
            reply = {"jsonrpc": "2.0", "id": rid, "result": {}}
        else:
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
        if self.server.brk == "request-202" and method != "initialize":
            self.answer(202)
            return
        if self.server.brk in SSE and (method != "initialize" or self.server.brk == "sse-ids-per-session"):
            self.stream(reply, headers)
            return
        kind = "text/plain" if self.server.brk == "request-text-plain" else "application/json"
        self.answer(200, reply, kind, **headers)
        if self.server.brk == "answer-again-on-get" and method != "initialize":
            # the answer went out in the POST's body; the session's GET stream carries it again
            self.server.outbox(self.headers.get("Mcp-Session-Id", "")).put(reply)

    def get_stream(self) -> None:
        """The session's GET stream: each message the server puts in its outbox, until the server stops
        or the client leaves."""
        outbox = self.server.outbox(self.headers.get("Mcp-Session-Id", ""))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        sent = 0
        try:
            self.wfile.write(b"id: get-0\ndata:\n\n")
            self.wfile.flush()
            while not self.server.released.is_set():
                try:
                    message = outbox.get(timeout=0.1)
                except queue.Empty:
                    continue
                sent += 1
                self.wfile.write(f"id: get-{sent}\ndata: {json.dumps(message)}\n\n".encode())
                self.wfile.flush()
        except OSError:
            pass  # the client closed the stream

    def stream(self, reply: Any, headers: dict[str, str]) -> None:
        """The answer as an SSE stream: a priming event, the answer, the end (per the variant)."""
        brk = self.server.brk
        self.server.streams += 1
        stream = self.server.streams
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Connection", "close")
        self.end_headers()
        eol = "\r\n" if brk == "sse-split-data" else "\n"
        events = []
        first, second = f"{stream}-1", f"{stream}-2"
        if brk == "sse-event-id-reused":
            first, second = "1", "2"
        elif brk == "sse-ids-per-session":
            session = headers.get("Mcp_Session_Id") or self.headers.get("Mcp-Session-Id", "")
            with self.server.lock:
                count = self.server.event_counts[session] = self.server.event_counts.get(session, 0) + 2
            first, second = str(count - 1), str(count)
        if brk != "sse-no-priming":
            events.append(f"id: {first}{eol}data:{eol}{eol}")
        text = json.dumps(reply, indent=1) if brk == "sse-split-data" else json.dumps(reply)
        data = "".join(f"data: {line}{eol}" for line in text.split("\n"))
        events.append(f"id: {second}{eol}{data}{eol}")
        if brk == "sse-answer-twice":
            events.append(f"id: {stream}-3{eol}{data}{eol}")  # the same response again
        self.wfile.write("".join(events).encode())
        self.wfile.flush()
        if brk == "sse-stays-open":
            time.sleep(3)  # the answer came; the stream goes on (the client gives up before this ends)
        self.close_connection = True


class CorpusHTTPServer(CorpusServer):
    def __init__(self, brk: str, port: int = 0) -> None:
        super().__init__(Handler, port)
        self.brk = brk
        self.sessions: set[str] = set()
        self.streams = 0
        #: session id -> what its GET stream is still to carry
        self._outboxes: dict[str, queue.Queue[Any]] = {}
        #: session id -> the last SSE event id it used (sse-ids-per-session)
        self.event_counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def outbox(self, session: str) -> queue.Queue[Any]:
        with self.lock:
            return self._outboxes.setdefault(session, queue.Queue())


@contextmanager
def serving(brk: str = "none") -> Iterator[str]:
    """Serve the variant ``brk`` on a free loopback port for the block; yields its URL."""
    with serving_on_a_thread(CorpusHTTPServer(brk)) as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="brk", default="none", choices=[*BREAKS, *DUPLICATES, *HANGS, *CORRECT])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    serve_until_interrupted(CorpusHTTPServer(args.brk, args.port))


if __name__ == "__main__":
    main()
