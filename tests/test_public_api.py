"""What an application imports from ``mcp_ref``: the exceptions its calls raise
and the pieces of the documented recipes, each the very object of its home module."""

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

import mcp_ref
import mcp_ref.schema
from mcp_ref.testing import memory_session_pair

from .conftest import ROOT

HOMES = {
    # raised by ClientSession calls and handles
    "MCPRefError": "mcp_ref.errors",
    "ProtocolError": "mcp_ref.errors",
    "RequestCancelled": "mcp_ref.errors",
    # raised by open_http_client: the HTTP transport's own failures
    "HTTPTransportError": "mcp_ref.errors",
    "TLSError": "mcp_ref.errors",
    "AuthorizationError": "mcp_ref.errors",
    # raised by open_loopback_callback when it cannot listen (the port is taken ...)
    "CallbackListenError": "mcp_ref.basic.transports.oauth_callback",
    "InvalidToolResult": "mcp_ref.session.client",
    "URLElicitationRequired": "mcp_ref.client.elicitation",
    "TaskFailed": "mcp_ref.session.task_requestor",
    # raised by server and client handlers to answer with an error
    "ResourceNotFound": "mcp_ref.server.resources",
    "SamplingRejected": "mcp_ref.client.sampling",
    "ToolError": "mcp_ref.server.tools",
    # Server(cache=...), @server.resource(cache=...): the caching hints of 2026-07-28 results
    "CachePolicy": "mcp_ref.server.utilities.caching",
    # open_session on an in-process pair; the handle start_request returns
    "memory_channel_pair": "mcp_ref.basic.transports.memory",
    "PendingRequest": "mcp_ref.session.core",
    # the settings the README's Limits table names (loaded with the http extra)
    "HttpConfig": "mcp_ref.basic.transports.http_server",
    "HttpClientChannel": "mcp_ref.basic.transports.http_client",
}


@pytest.mark.parametrize("name", sorted(HOMES))
def test_user_facing_names_are_exported(name: str) -> None:
    assert name in mcp_ref.__all__
    assert getattr(mcp_ref, name) is getattr(importlib.import_module(HOMES[name]), name)


def test_dir_lists_the_public_names_and_the_subpackages_only() -> None:
    # tab completion in a REPL shows what an application may use, not typing helpers
    public = {n for n in dir(mcp_ref) if not n.startswith("_")}
    assert "TYPE_CHECKING" not in public
    extra = public - set(mcp_ref.__all__)
    assert all(isinstance(getattr(mcp_ref, n), type(mcp_ref)) for n in extra), sorted(extra)


def test_every_library_error_is_an_mcp_ref_error() -> None:
    # one except clause catches whatever the library raises about the protocol
    for name in (
        "RequestCancelled",
        "RequestTimeout",
        "ConnectionClosed",
        "MCPError",
        "ProtocolError",
        "TaskFailed",
        "HTTPTransportError",
        "TLSError",
        "AuthorizationError",
    ):
        assert issubclass(getattr(mcp_ref, name), mcp_ref.MCPRefError), name


def _decorators(server: mcp_ref.Server) -> dict[str, Any]:
    return {
        "tool": server.tool,
        "prompt": server.prompt,
        "resource": server.resource,
        "resource_template": server.resource_template,
    }


@pytest.mark.parametrize("kind", ["tool", "prompt", "resource", "resource_template"])
def test_a_decorator_used_without_its_call_is_refused(kind: str) -> None:
    # `@server.tool` instead of `@server.tool()` used to register nothing, silently
    server = mcp_ref.Server("s")

    async def fn(ctx: Any, *args: Any) -> str:
        return ""

    with pytest.raises(TypeError, match=rf"use @server\.{kind}\(\.\.\.\) with parentheses"):
        _decorators(server)[kind](fn)


@pytest.mark.parametrize(
    ("kind", "first"), [("tool", "t"), ("prompt", "p"), ("resource", "file:///r"), ("resource_template", "file:///{x}")]
)
def test_a_plain_function_is_refused_at_registration(kind: str, first: str) -> None:
    # it is awaited when called: registered, it could only fail later as an internal error
    server = mcp_ref.Server("s")

    def sync(ctx: Any, *args: Any) -> str:
        return ""

    with pytest.raises(TypeError, match=f"{kind} 'sync' must be an async function"):
        _decorators(server)[kind](first)(sync)
    assert server.tools.names() == []


async def test_an_async_callable_object_is_accepted() -> None:
    server = mcp_ref.Server("s")

    class Echo:
        async def __call__(self, ctx: Any, arguments: dict[str, Any]) -> str:
            return str(arguments["text"])

    server.tool("echo")(Echo())
    async with memory_session_pair(server, era="legacy") as client:
        result = await client.call_tool("echo", {"text": "hi"})
    assert result.content == [mcp_ref.schema.TextContent(text="hi")]


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


async def test_a_plain_progress_callback_is_refused_before_sending() -> None:
    # it would be called once progress arrives, then fail, and the call would be given up
    server = mcp_ref.Server("s")
    calls: list[str] = []

    @server.tool()
    async def work(ctx: mcp_ref.RequestContext, arguments: dict[str, Any]) -> str:
        calls.append("work")
        await ctx.progress(1, 2)
        return "done"

    def plain(progress: float, total: float | None, message: str | None) -> None:
        pass

    on_progress: Any = plain  # what an untyped caller passes

    async with memory_session_pair(server, era="legacy") as client:
        with pytest.raises(TypeError, match="progress callback 'plain' must be an async function"):
            await client.call_tool("work", progress=on_progress)
        assert calls == []
        assert (await client.call_tool("work")).content == [mcp_ref.schema.TextContent(text="done")]


@pytest.mark.parametrize(
    "option", ["sampling", "elicitation", "on_log", "on_list_changed", "on_resource_updated", "on_elicitation_complete"]
)
async def test_plain_client_callbacks_are_refused_before_initialize(option: str, autojump_clock: object) -> None:
    client_end, server_end = mcp_ref.memory_channel_pair()

    def plain(*args: Any) -> None:
        pass

    with pytest.raises(TypeError, match=f"{option} 'plain' must be an async function"):
        async with mcp_ref.open_session(client_end, **{option: plain}, era="legacy"):
            pass
    with trio.move_on_after(10) as quiet:
        await server_end.receive()
    assert quiet.cancelled_caught, "something was sent"


async def test_open_http_client_names_the_slip_of_passing_the_server_info() -> None:
    from mcp_ref.session.http import HttpServerInfo

    info: Any = HttpServerInfo(host="127.0.0.1", port=8000, url="http://127.0.0.1:8000/mcp")
    with pytest.raises(TypeError, match=r"URL as a str, not HttpServerInfo \(use its \.url\)"):
        async with mcp_ref.open_http_client(info, era="legacy"):
            pass


def test_plain_method_handlers_are_refused() -> None:
    server = mcp_ref.Server("s")

    def plain(*args: Any) -> None:
        pass

    with pytest.raises(TypeError, match="handler for tools/list 'plain' must be an async function"):
        server.set_handler("tools/list", plain)
    with pytest.raises(TypeError, match="handler for notifications/roots/list_changed 'plain' must be an async"):
        server.on_notification("notifications/roots/list_changed", plain)
    with pytest.raises(TypeError, match="handler for prompts/list"):
        server.handler("prompts/list")(plain)


async def test_bad_call_arguments_raise_before_anything_is_sent() -> None:
    server = mcp_ref.Server("s")
    seen: list[str] = []

    @server.tool()
    async def tool(ctx: mcp_ref.RequestContext, arguments: dict[str, Any]) -> str:
        seen.append("tool")
        return ""

    @server.prompt(arguments=[mcp_ref.schema.PromptArgument(name="n")])
    async def prompt(ctx: mcp_ref.RequestContext, arguments: dict[str, str]) -> str:
        seen.append("prompt")
        return ""

    wrong: Any = [("a", 1), ("b", 2), ("c",)]
    async with memory_session_pair(server, era="legacy") as client:
        with pytest.raises(TypeError, match="arguments map names to values \\(a dict\\), not list"):
            await client.call_tool("tool", wrong)
        with pytest.raises(TypeError, match="arguments map names to values \\(a dict\\), not str"):
            await client.call_tool_as_task("tool", "text")
        with pytest.raises(TypeError, match=r"prompt arguments are strings: \['n'\] are not"):
            await client.get_prompt("prompt", {"n": 5})
        assert await client.get_prompt("prompt", {"n": "5"})
    assert seen == ["prompt"]


def test_the_http_names_without_the_http_extra_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp_ref.session

    # as if h11 were not installed and Streamable HTTP never loaded
    monkeypatch.setitem(sys.modules, "h11", None)
    for loaded in [m for m in sys.modules if m.startswith(("mcp_ref.session.http", "mcp_ref.basic.transports.http_"))]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.delattr(mcp_ref.session, "http", raising=False)
    with pytest.raises(ImportError, match=r"mcp_ref.serve_http needs the http extra \(h11\): pip install"):
        _ = mcp_ref.serve_http


def _modules_after(script: str) -> set[str]:
    """The modules loaded once ``script`` ran in a fresh interpreter."""
    script += "\nimport sys\nprint(' '.join(sys.modules))\n"
    return set(
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    )


def test_import_mcp_ref_loads_none_of_the_names_loaded_on_first_use() -> None:
    # what a tools-only server or a plain client never needs costs them nothing (bench W7);
    # each such name is still in __all__ and dir() and is the very object of its home module
    loaded = _modules_after("import mcp_ref")
    assert "mcp_ref.session" in loaded
    never = {
        "mcp_ref.session.tasks",
        "mcp_ref.session.task_requestor",
        "mcp_ref.basic.utilities.tasks",
        "mcp_ref.session.task_db",
        "mcp_ref.client.display",
        "mcp_ref.testing",
        "mcp_ref.basic.transports.memory",
        "mcp_ref.basic.authorization.resource_server",
        "mcp_ref.session.http",
    }
    assert sorted(loaded & never) == []
    for name, home in mcp_ref._LAZY.items():
        assert name in mcp_ref.__all__
        assert name in dir(mcp_ref)
        assert getattr(mcp_ref, name) is getattr(importlib.import_module(f"mcp_ref.{home}"), name)


def test_a_tools_only_server_and_a_plain_client_load_only_what_they_use() -> None:
    # the resource and prompt registries are made on first use, the client's roots,
    # sampling and elicitation when a session is given a handler for them (bench W7)
    script = """
import trio, mcp_ref
from mcp_ref.testing import memory_session_pair
server = mcp_ref.Server("s")

@server.tool()
async def echo(ctx, arguments):
    return "ok"

async def main():
    async with memory_session_pair(server) as client:
        assert (await client.call_tool("echo", {})).content[0].text == "ok"

trio.run(main)
"""
    loaded = _modules_after(script)
    assert "mcp_ref.server.tools" in loaded
    unused = {
        "mcp_ref.server.resources",
        "mcp_ref.server.prompts",
        "mcp_ref.server.uri_template",
        "mcp_ref.server.utilities.completion",
        "mcp_ref.client.roots",
        "mcp_ref.client.sampling",
        "mcp_ref.client.elicitation",
    }
    assert sorted(loaded & unused) == []
    server = mcp_ref.Server("s")
    assert server.capabilities().resources is None and server.capabilities().prompts is None
    server.resource("file:///r")(_read)
    assert server.capabilities().resources is not None
    assert "resources/read" in server.handler_table()


async def _read(ctx: Any) -> str:
    return "r"


def test_an_http_server_or_client_loads_no_test_machinery() -> None:
    # trio.testing imports pytest when it is installed: ~60 ms of every HTTP process's import
    # (mcp_ref.session.http loads the ASGI bridge), and test modules in an application. The
    # in-process byte pipes the library needs are its own (basic/transports/_pipes.py).
    script = """
import trio, mcp_ref
from mcp_ref.basic.transports.memory import framed_memory_pair
server = mcp_ref.Server("s")
app = server.asgi_app()
assert mcp_ref.serve_http and mcp_ref.open_http_client and framed_memory_pair()
"""
    loaded = _modules_after(script)
    assert {"mcp_ref.session.http", "mcp_ref.basic.transports.asgi", "mcp_ref.basic.transports._pipes"} <= loaded
    assert sorted(m for m in loaded if m.startswith(("trio.testing", "pytest", "_pytest"))) == []
