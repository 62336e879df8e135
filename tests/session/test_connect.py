"""mcp_ref.connect: one opener for a URL, a command or a Server object, in front of the typed openers."""

import ssl
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import trio

import mcp_ref
from mcp_ref import RequestContext, Server, connect, serve_http
from mcp_ref.testing.transport_check import check_server

SCRIPT = textwrap.dedent(
    """
    from mcp_ref import RequestContext, Server

    server = Server("script", "1.0")

    @server.tool()
    async def where(ctx: RequestContext) -> str:
        return "stdio"

    server.run_stdio()
    """
)


def server_here() -> Server:
    server = Server("here", "1.0")

    @server.tool()
    async def where(ctx: RequestContext) -> str:
        return "memory"

    return server


async def test_a_server_object_is_served_in_memory() -> None:
    async with connect(server_here()) as client:
        assert client.server_info.name == "here"
        assert (await client.call_tool("where")).text == "memory"


async def test_a_url_is_streamable_http() -> None:
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            info = await nursery.start(serve_http, check_server())
            async with connect(info.url, headers={"x-trace": "1"}) as client:
                assert type(client.session.channel).__name__ == "HttpClientChannel"
                assert (await client.call_tool("echo", {"text": "over http"})).text == "over http"
            await info.aclose()


@pytest.mark.parametrize("form", ["list", "command line", "script alone"])
async def test_a_command_is_a_stdio_server(form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "my server.py"
    script.write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    target: Any = {
        "list": [sys.executable, str(script)],
        "command line": f"'{sys.executable}' 'my server.py'",
        "script alone": "'my server.py'",  # run with this interpreter
    }[form]
    env = {"PYTHONPATH": str(Path(mcp_ref.__file__).parents[1])}
    with trio.fail_after(60):
        async with connect(target, env=env) as client:
            assert client.server_info.name == "script"
            assert (await client.call_tool("where")).text == "stdio"


@pytest.mark.parametrize(
    ("target", "options", "message"),
    [
        ("python server.py", {"ssl_context": ssl.create_default_context()}, "ssl_context is not an option for a comm"),
        ("http://127.0.0.1:1/mcp", {"env": {}}, "env is not an option for a URL"),
        ("http://127.0.0.1:1/mcp", {"cwd": "/", "stderr": "capture"}, "cwd, stderr are not an option for a URL"),
        (server_here(), {"auth": None}, r"auth is not an option for a Server object"),
        ("python server.py", {"elicitaton": None}, "elicitaton is not an option for a command"),
    ],
)
async def test_an_option_the_transport_has_no_use_for_is_refused_before_anything_starts(
    target: Any, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        async with connect(target, **options):
            pytest.fail("nothing is started")


@pytest.mark.parametrize(
    ("target", "error", "message"),
    [
        ("ftp://example.com/mcp", ValueError, "an MCP server's URL is http:// or https://"),
        ("", ValueError, "the command is empty"),
        ([], ValueError, "the command is empty"),
        (42, TypeError, "connect\\(\\) takes a URL, a command or a Server, not int"),
        ([sys.executable, 3], TypeError, "not list"),
    ],
)
async def test_a_target_that_is_none_of_the_three_is_refused(target: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        async with connect(target):
            pytest.fail("nothing is started")


async def test_session_options_reach_the_session() -> None:
    seen = []

    async def on_log(params: Any) -> None:
        seen.append(params)

    async with connect(server_here(), on_log=on_log, validate_tool_results=False) as client:
        assert client.validate_tool_results is False
