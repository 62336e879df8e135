"""What the hostile stdio servers here share (imported by them from this folder)."""

import json
from collections.abc import Awaitable, Callable
from typing import Any

import trio


def initialize_answer(request: dict[str, Any], name: str) -> bytes:
    """The line answering ``request`` (an initialize): its revision, tools, and ``name``."""
    result = {
        "protocolVersion": request["params"]["protocolVersion"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "1"},
    }
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode() + b"\n"


def line_reader(stream: trio.abc.ReceiveStream) -> Callable[[], Awaitable[dict[str, Any] | None]]:
    """The next JSON line from ``stream`` on each call; None at end of file."""
    buf = b""

    async def message() -> dict[str, Any] | None:
        nonlocal buf
        while b"\n" not in buf:
            data = await stream.receive_some(65536)
            if not data:
                return None
            buf += data
        line, buf = buf.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    return message
