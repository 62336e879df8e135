"""Stdio servers (standard library only) that answer every request, some answers malformed.

    python server_answers.py [--break NAME]

The correct server of ``server.py`` with one fault in how it answers (or in what it logs).
A malformed answer is a finding of its own, never "the server left requests unanswered": every
revision the server speaks is still checked (trial30c D6). ``BREAKS`` maps each variant to the
requirement the report must name; ``CORRECT`` variants bend only what their revision allows.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from server import Server

BREAKS = {
    # a one-element JSON-RPC batch answers tools/list, in every revision (2025-06-18 removed batches)
    "tools-list-batched": "basic/lifecycle#14",
    # a tools/list response with both result and error
    "result-and-error": "basic/index#3",
    # every ping answer comes after a response to an id never sent (not an answer to a notification)
    "answers-unknown-id": "basic/index#7",
    # once initialized, a log message at a level LoggingLevel does not have (trial30c D7, badlevel)
    "log-level-invalid": "basic/index#1",
}
CORRECT = {
    "only-0326-batched": "speaks 2025-03-26 only, where batches are allowed, and batches its tools/list answers",
}


class Answers(Server):
    def __init__(self, brk: str) -> None:
        super().__init__(brk)
        self.listing: set[Any] = set()

    def negotiate(self, asked: str) -> str:
        return "2025-03-26" if self.brk == "only-0326-batched" else super().negotiate(asked)

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        super().on_notification(method, params)
        if method == "notifications/initialized" and self.brk == "log-level-invalid":
            self.notify("notifications/message", {"level": "verbose", "data": "hello"})

    def on_request(self, rid: Any, method: str, params: dict[str, Any]) -> None:
        if method == "tools/list":
            self.listing.add(json.dumps(rid))
        super().on_request(rid, method, params)

    def write(self, message: dict[str, Any]) -> None:
        if self.brk == "answers-unknown-id" and message.get("result") == {} and "id" in message:
            self.count = getattr(self, "count", 0) + 1
            super().write({"jsonrpc": "2.0", "id": f"never-sent-{self.count}", "result": {}})
        if "method" in message or json.dumps(message.get("id")) not in self.listing:
            super().write(message)
            return
        if self.brk in ("tools-list-batched", "only-0326-batched"):
            data = json.dumps([message]).encode()
        elif self.brk == "result-and-error" and "result" in message:
            data = json.dumps({**message, "error": {"code": -32603, "message": "and an error"}}).encode()
        else:
            data = json.dumps(message).encode()
        with self.lock:
            sys.stdout.buffer.write(data + b"\n")
            sys.stdout.buffer.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="brk", default="none", choices=[*BREAKS, *CORRECT])
    args = parser.parse_args()
    server = Answers(args.brk)
    for line in sys.stdin.buffer:
        if line.strip():
            server.handle_line(line)


if __name__ == "__main__":
    main()
