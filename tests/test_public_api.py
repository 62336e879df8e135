"""What an application imports from ``mcp_ref``: the exceptions its calls raise
and the pieces of the documented recipes, each the very object of its home module."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_ref

from .conftest import ROOT

HOMES = {
    # raised by ClientSession calls and handles
    "MCPRefError": "mcp_ref.errors",
    "ProtocolError": "mcp_ref.errors",
    "RequestCancelled": "mcp_ref.errors",
    "InvalidToolResult": "mcp_ref.session.client",
    "URLElicitationRequired": "mcp_ref.client.elicitation",
    "TaskFailed": "mcp_ref.session.tasks",
    # raised by server and client handlers to answer with an error
    "ResourceNotFound": "mcp_ref.server.resources",
    "SamplingRejected": "mcp_ref.client.sampling",
    "ToolError": "mcp_ref.server.tools",
    # open_session on an in-process pair; the handle start_request returns
    "memory_channel_pair": "mcp_ref.basic.transports.memory",
    "PendingRequest": "mcp_ref.session.core",
}


@pytest.mark.parametrize("name", sorted(HOMES))
def test_user_facing_names_are_exported(name: str) -> None:
    assert name in mcp_ref.__all__
    assert getattr(mcp_ref, name) is getattr(importlib.import_module(HOMES[name]), name)


def test_every_library_error_is_an_mcp_ref_error() -> None:
    # one except clause catches whatever the library raises about the protocol
    for name in ("RequestCancelled", "RequestTimeout", "ConnectionClosed", "MCPError", "ProtocolError", "TaskFailed"):
        assert issubclass(getattr(mcp_ref, name), mcp_ref.MCPRefError), name


_TYPED_USER = """
from contextlib import AbstractAsyncContextManager
from typing import Any, Callable, Coroutine

from mcp_ref import ClientSession, Server, open_http_client, serve_http

opener: Callable[[str], AbstractAsyncContextManager[ClientSession]] = open_http_client
server: Callable[[Server], Coroutine[Any, Any, None]] = serve_http
"""


def test_a_strictly_typed_user_sees_the_lazily_loaded_names(tmp_path: Path) -> None:
    # open_http_client and serve_http load on first use (h11 is an extra); a type
    # checker must still see their signatures, not the `object` of __getattr__
    (tmp_path / "user.py").write_text(_TYPED_USER)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "user.py"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
