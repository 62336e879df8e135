"""What the hostile stdio servers here share (imported by them from this folder)."""

import json
from typing import Any


def initialize_answer(request: dict[str, Any], name: str) -> bytes:
    """The line answering ``request`` (an initialize): its revision, tools, and ``name``."""
    result = {
        "protocolVersion": request["params"]["protocolVersion"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "1"},
    }
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode() + b"\n"
