"""Streamable HTTP servers (standard library only) whose GET streams break ONE rule (trial30c D5, D7).

    python http_streams.py [--break NAME] [--port PORT]    # prints its URL, serves until stopped

The correct server of ``http_server.py``, but every answer after initialize is an SSE stream whose
events have ids (``N-1`` the priming event of stream N, ``N-2`` its answer), and a GET with
``Last-Event-ID: N-1`` resumes stream N: it replays that stream's answer. A GET without one is 405.
"""

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from http_base import serve_until_interrupted, serving_on_a_thread
from http_server import CorpusHTTPServer, Handler

BREAKS = {
    # a GET (no Last-Event-ID) opens a stream and sends on it the answer of the last request
    "response-on-get": "basic/transports#42",
    # a GET resuming stream N replays the answer of stream N+1
    "replays-other-stream": "basic/transports#54",
}
CORRECT = {"resumes-own-stream": "a GET with Last-Event-ID replays the answer of that stream only"}


class StreamsHandler(Handler):
    server: "StreamsServer"

    def answer(self, status: int, body: Any = None, content_type: str = "application/json", **headers: str) -> None:
        answered = isinstance(body, dict) and "id" in body and ("result" in body or "error" in body)
        if status == 200 and answered and "Mcp_Session_Id" not in headers:
            self.server.replies[self.server.streams + 1] = body
            self.server.last = body
            self.stream(body, headers)
            return
        super().answer(status, body, content_type, **headers)

    def do_GET(self) -> None:
        last = self.headers.get("Last-Event-ID")
        brk = self.server.brk
        if last is None and brk == "response-on-get" and self.server.last is not None:
            self.events([("g-1", ""), ("g-2", json.dumps(self.server.last))])
            return
        number = last.split("-")[0] if last is not None else ""
        if not number.isdigit() or brk == "response-on-get":
            self.answer(405, Allow="POST, DELETE")
            return
        stream = int(number) + (1 if brk == "replays-other-stream" else 0)
        reply = self.server.replies.get(stream)
        self.events([] if reply is None else [(f"{stream}-2", json.dumps(reply))])

    def events(self, events: list[tuple[str, str]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write("".join(f"id: {i}\ndata: {d}\n\n" for i, d in events).encode())
        self.wfile.flush()
        time.sleep(0.2)
        self.close_connection = True


class StreamsServer(CorpusHTTPServer):
    def __init__(self, brk: str, port: int = 0) -> None:
        super().__init__(brk, port)
        self.RequestHandlerClass = StreamsHandler
        self.replies: dict[int, Any] = {}
        self.last: Any = None


@contextmanager
def serving(brk: str) -> Iterator[str]:
    with serving_on_a_thread(StreamsServer(brk)) as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="brk", default="resumes-own-stream", choices=[*BREAKS, *CORRECT])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    serve_until_interrupted(StreamsServer(args.brk, args.port))


if __name__ == "__main__":
    main()
