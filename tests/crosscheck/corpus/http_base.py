"""What the corpus's Streamable HTTP servers share: the request handler's plumbing, the server on
threads, serving it in a test or from the command line (standard library only; no mcp_ref).

``http_server.py`` (the 2025 revisions) and ``modern_server.py`` (2026-07-28) each break their own
rules on top of this; what is here is only how a JSON answer goes out and how the server runs.
"""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the tests read the report, not a request log

    def answer(self, status: int, body: Any = None, content_type: str = "application/json", **headers: str) -> None:
        """One whole answer: ``body`` as it is (bytes) or as JSON; ``headers`` with ``_`` for ``-``."""
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        if data:
            self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))


class CorpusServer(ThreadingHTTPServer):
    """A corpus server on a loopback port (0: a free one)."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), handler)
        #: set when the server stops: a handler that hangs on purpose lets go
        self.released = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/mcp"


@contextmanager
def serving_on_a_thread(server: CorpusServer) -> Iterator[str]:
    """Serve ``server`` on a thread of this process for the block; yields its URL."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.released.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def serve_until_interrupted(server: CorpusServer) -> None:
    """The command line: print the URL, serve until Ctrl-C."""
    print(server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
