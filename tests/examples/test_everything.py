"""The everything example, exercised in-process by our client and over stdio by the official SDK."""

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_ref.client.elicitation import form_defaults
from mcp_ref.errors import ErrorCode, MCPError
from mcp_ref.examples.everything import build_server
from mcp_ref.schema.completion import PromptReference, ResourceTemplateReference
from mcp_ref.schema.content import AudioContent, EmbeddedResource, ImageContent, TextContent
from mcp_ref.schema.elicitation import ElicitRequestURLParams, ElicitResult
from mcp_ref.schema.roots import Root
from mcp_ref.schema.sampling import CreateMessageResult
from mcp_ref.session.http import open_http_client
from mcp_ref.testing import memory_session_pair

from ..basic.transports.test_http_server import memory_http
from ..basic.transports.test_stdio import INIT
from ..conftest import default_sigint

ROOT = Path(__file__).resolve().parents[2]


async def llm(ctx: Any, params: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", model="test-model", content=TextContent(text="forty-two"))


async def user(ctx: Any, params: Any) -> ElicitResult:
    if isinstance(params, ElicitRequestURLParams):
        return ElicitResult(action="accept")
    content = form_defaults(params.requested_schema)
    if "username" in params.requested_schema.properties:
        content = {"username": "ada", "email": "ada@example.com"}
    return ElicitResult(action="accept", content=content)


def text(result: Any) -> str:
    return " ".join(getattr(b, "text", "") for b in result.content)


async def test_everything_in_process(autojump_clock: trio.abc.Clock) -> None:
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async with memory_session_pair(
        build_server(),
        sampling=llm,
        elicitation=user,
        elicitation_modes=("form", "url"),
        roots=[Root(uri="file:///work", name="work")],
        on_log=on_log,
        era="legacy",
    ) as client:
        caps = client.server_capabilities
        assert caps.tools and caps.resources and caps.prompts and caps.completions == {} and caps.logging == {}
        names = {t.name for t in await client.list_all_tools()}
        for fixture in (
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_error_handling",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "json_schema_2020_12_tool",
            "test_reconnection",
        ):
            assert fixture in names
        assert all(t.description for t in await client.list_all_tools())

        assert text(await client.call_tool("test_simple_text")) == "This is a simple text response for testing."
        assert isinstance((await client.call_tool("test_image_content")).content[0], ImageContent)
        assert isinstance((await client.call_tool("test_audio_content")).content[0], AudioContent)
        assert isinstance((await client.call_tool("test_embedded_resource")).content[0], EmbeddedResource)
        kinds = [type(b) for b in (await client.call_tool("test_multiple_content_types")).content]
        assert kinds == [TextContent, ImageContent, EmbeddedResource]
        assert (await client.call_tool("test_error_handling")).is_error is True
        assert text(await client.call_tool("test_sampling", {"prompt": "meaning?"})) == "LLM response: forty-two"
        assert "ada@example.com" in text(await client.call_tool("test_elicitation", {"message": "who?"}))
        defaults = text(await client.call_tool("test_elicitation_sep1034_defaults"))
        assert '"name": "John Doe"' in defaults and '"score": 95.5' in defaults
        assert "action=accept" in text(await client.call_tool("test_elicitation_sep1330_enums"))
        assert text(await client.call_tool("show_roots")) == "file:///work (work)"
        assert "action=accept" in text(await client.call_tool("visit_url"))
        with pytest.raises(MCPError) as info:
            await client.call_tool("needs_consent")
        assert info.value.code == ErrorCode.URL_ELICITATION_REQUIRED
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"sum": 3}

        seen: list[float] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            seen.append(p)

        await client.call_tool("test_tool_with_progress", progress=on_progress)
        assert seen == [0, 50, 100]
        await client.set_logging_level("info")
        await client.call_tool("test_tool_with_logging")
        await client.ping()
        expected = ["Tool execution started", "Tool processing data", "Tool execution completed"]
        assert [m.data for m in logs[-3:]] == expected

        (contents,) = (await client.read_resource("test://template/123/data")).contents
        assert json.loads(contents.text) == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}  # type: ignore[union-attr]
        got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        assert got.messages[0].content == TextContent(text="Prompt with arguments: arg1='hello', arg2='world'")
        done = await client.complete(PromptReference(name="test_prompt_with_arguments"), "arg1", "par")
        assert done.completion.values == ["paris", "park", "party"]
        ids = await client.complete(ResourceTemplateReference(uri="test://template/{id}/data"), "id", "19")
        assert ids.completion.values[:2] == ["19", "190"]


async def test_task_tools(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server = build_server(nursery)
        async with memory_session_pair(server, elicitation=user, era="legacy") as client:
            await client.list_all_tools()
            handle = await client.call_tool_as_task("batch_job", {"seconds": 2})
            assert (await handle.wait()).structured_content == {"job": "done", "seconds": 2}
            handle = await client.call_tool_as_task("count_slowly", {"count": 3})
            assert text(await handle.wait()) == "counted to 3"
            handle = await client.call_tool_as_task("confirm_then_finish")
            assert text(await handle.wait()) == 'confirmation: action=accept, content={"ok": true}'
            # with a label and without (one space, not two)
            handle = await client.call_tool_as_task("slow_compute", {"seconds": 4, "label": "x"})
            assert text(await handle.wait()) == "computed x after 4 s"
            handle = await client.call_tool_as_task("slow_compute", {"seconds": 4})
            assert text(await handle.wait()) == "computed after 4 s"
        nursery.cancel_scope.cancel()


@pytest.mark.req("schema#37")
async def test_tools_needing_client_features_fail_as_tool_errors() -> None:
    # a client with no sampling, elicitation or roots: each tool fails in its result, the session goes on
    async with memory_session_pair(build_server(), era="legacy") as client:
        for name, arguments in (
            ("ask_model", {"prompt": "hi"}),
            ("ask_model_with_tools", {"prompt": "hi"}),
            ("test_sampling", {"prompt": "hi"}),
            ("ask_user", {}),
            ("test_elicitation", {"message": "who?"}),
            ("visit_url", {}),
            ("show_roots", {}),
        ):
            result = await client.call_tool(name, arguments)
            assert result.is_error is True, name
            assert text(result).startswith("cannot "), text(result)
            assert "capability" in text(result), text(result)
        assert text(await client.call_tool("echo", {"text": "still here"})) == "still here"


async def test_add_with_a_sum_json_cannot_hold_says_so() -> None:
    # (it was a -32603 "Internal error" from failing to encode an infinite sum)
    async with memory_session_pair(build_server(), era="legacy") as client:
        result = await client.call_tool("add", {"a": 1e308, "b": 1e308})
        assert result.is_error is True
        assert text(result) == "the sum of a and b is too large for JSON numbers"
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"sum": 3}


async def test_add_with_huge_integers_is_a_tool_error() -> None:
    # (math.isfinite() of a 4,000-digit integer raised OverflowError: a -32603 "Internal error")
    huge = int("9" * 4000)
    async with memory_session_pair(build_server(), era="legacy") as client:
        result = await client.call_tool("add", {"a": huge, "b": 1})
        assert result.is_error is True
        assert text(result) == "the sum of a and b is too large for JSON numbers"
        # integers a double holds are added exactly
        assert (await client.call_tool("add", {"a": 2**60, "b": 1})).structured_content == {"sum": 2**60 + 1}


@pytest.mark.req("schema#37")
async def test_a_client_failing_a_nested_request_fails_the_tool_not_the_call(autojump_clock: trio.abc.Clock) -> None:
    # the client's error answer (or none at all) is the tool's failure: a tools/call error
    # carrying the client's own code (-32602 here) would tell the caller its call was wrong
    async def refuse(ctx: Any, params: Any) -> ElicitResult:
        raise MCPError(ErrorCode.INVALID_PARAMS, "not now")

    async def crash(ctx: Any, params: Any) -> CreateMessageResult:
        raise ValueError("the model is down")

    async def never(ctx: Any, params: Any) -> Any:
        await trio.sleep_forever()

    async with memory_session_pair(build_server(), elicitation=refuse, sampling=crash, era="legacy") as client:
        result = await client.call_tool("ask_user")
        assert result.is_error is True
        assert text(result) == "cannot ask you: [-32602] not now"
        result = await client.call_tool("ask_model", {"prompt": "?"})
        assert result.is_error is True and text(result).startswith("cannot ask the model: [-32603]")
    async with memory_session_pair(build_server(), elicitation=never, era="legacy") as client:
        result = await client.call_tool("test_elicitation", {"message": "who?"}, timeout=10_000, max_timeout=10_000)
        assert result.is_error is True
        assert text(result).startswith("cannot ask you: elicitation/create: no response within")


@pytest.mark.req("schema#37")
async def test_url_mode_tool_against_a_form_only_client_fails_as_a_tool_error() -> None:
    async with memory_session_pair(build_server(), elicitation=user, era="legacy") as client:
        result = await client.call_tool("visit_url")
        assert result.is_error is True
        assert "elicitation.url" in text(result)


async def test_long_running_tool_can_be_cancelled(autojump_clock: trio.abc.Clock) -> None:
    server = build_server()
    builtin = server.handler_table()["tools/call"]
    cancelled = trio.Event()

    async def observed(ctx: Any, params: Any) -> Any:
        try:
            return await builtin(ctx, params)
        except trio.Cancelled:
            if params.name == "long_running":
                cancelled.set()
            raise

    server.set_handler("tools/call", observed)
    async with memory_session_pair(server, era="legacy") as client:
        start = trio.current_time()
        with trio.move_on_after(3.5):
            await client.call_tool("long_running", {"seconds": 100}, timeout=1000)
        # the client's cancellation reached the server and stopped the tool there, long before its 100 s
        with trio.fail_after(1):
            await cancelled.wait()
        assert trio.current_time() - start < 5
        result = await client.call_tool("long_running", {"seconds": 2})
        assert text(result) == "finished after 2s"


@pytest.mark.req("basic/transports#2")
async def test_official_sdk_client_against_everything_over_stdio() -> None:
    pytest.importorskip("mcp", reason="the official SDK is in the test extra")
    from mcp import ClientSession as SDKClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_ref.examples.everything"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    async with stdio_client(params) as (read, write), SDKClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        assert "test_simple_text" in {t.name for t in tools.tools}
        result = await session.call_tool("test_simple_text", {})
        assert result.content[0].text == "This is a simple text response for testing."  # type: ignore[union-attr]
        resources = await session.list_resources()
        assert "test://static-text" in {str(r.uri) for r in resources.resources}
        prompt = await session.get_prompt("test_simple_prompt")
        assert prompt.messages[0].content.text == "This is a simple prompt for testing."  # type: ignore[union-attr]
        read_result = await session.read_resource("test://static-binary")
        assert read_result.contents[0].mime_type == "image/png"


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_everything_over_streamable_http(
    json_response: bool, autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the example's tools end to end over HTTP (in-memory connections, so the clock can jump):
    # the round trips to the client, progress, the stream-closing fixture, and the task tools
    async with trio.open_nursery() as nursery, memory_http(build_server(nursery), json_response=json_response) as mem:

        async def connect(host: str, port: int, **options: Any) -> trio.abc.Stream:
            client, server_side = trio.testing.memory_stream_pair()
            mem.nursery.start_soon(mem.http.handle_connection, server_side)
            return client

        monkeypatch.setattr(trio, "open_tcp_stream", connect)
        async with open_http_client(
            "http://127.0.0.1:1/mcp",
            max_idle_connections=0,  # (a kept connection is checked as a socket)
            sampling=llm,
            elicitation=user,
            roots=[Root(uri="file:///work", name="work")],
            era="legacy",
        ) as client:
            await client.list_all_tools()
            # it closes its SSE stream mid-call (in JSON mode there is none): the answer still comes
            assert text(await client.call_tool("test_reconnection", timeout=60)) == "Reconnection test completed"
            assert text(await client.call_tool("ask_model", {"prompt": "?"})) == "test-model: forty-two"
            assert text(await client.call_tool("test_elicitation", {"message": "who?"})) == (
                'User response: <action: accept, content: {"username": "ada", "email": "ada@example.com"}>'
            )
            assert text(await client.call_tool("show_roots")) == "file:///work (work)"
            seen: list[float] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                seen.append(p)

            assert text(await client.call_tool("progress_emitter", {"count": 3000}, progress=on_progress)) == (
                "sent 3000 progress notifications"
            )
            if not json_response:  # (in JSON mode progress is on the GET stream, racing the answer)
                assert seen == list(range(1, 3001))
            with trio.move_on_after(2.5):
                await client.call_tool("long_running", {"seconds": 100})
            assert text(await client.call_tool("echo", {"text": "still here"})) == "still here"

            handle = await client.call_tool_as_task("batch_job", {"seconds": 2})
            assert (await handle.wait()).structured_content == {"job": "done", "seconds": 2}
            handle = await client.call_tool_as_task("count_slowly", {"count": 2})
            assert text(await handle.wait()) == "counted to 2"
            handle = await client.call_tool_as_task("confirm_then_finish")
            assert text(await handle.wait()) == 'confirmation: action=accept, content={"ok": true}'
            long = await client.call_tool_as_task("batch_job", {"seconds": 1000})
            assert (await long.cancel()).status == "cancelled"
            statuses = sorted(t.status for t in await client.list_all_tasks())
            assert statuses == ["cancelled", "completed", "completed", "completed"]
        nursery.cancel_scope.cancel()


# -- the example as a user runs it: python -m mcp_ref.examples.everything --http ------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def run_example(*args: str, **options: Any) -> trio.Process:
    return await trio.lowlevel.open_process(
        [sys.executable, "-m", "mcp_ref.examples.everything", *args],
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        **options,
    )


async def read_stderr(proc: trio.Process, until: bytes) -> bytes:
    """What the process wrote on stderr, up to ``until`` (or its end)."""
    assert proc.stderr is not None
    seen = b""
    while until not in seen and (chunk := await proc.stderr.receive_some()):
        seen += chunk
    return seen


async def test_http_example_serves_tasks_and_stops_quietly_on_ctrl_c() -> None:
    port = free_port()
    proc = await run_example("--http", "--port", str(port))
    try:
        with trio.fail_after(30):
            banner = await read_stderr(proc, b"Ctrl-C stops")
            # the user is told where the endpoint is
            url = f"http://127.0.0.1:{port}/mcp"
            assert url.encode() in banner
            async with open_http_client(url, elicitation=user, era="legacy") as client:
                await client.list_all_tools()
                handle = await client.call_tool_as_task("batch_job", {"seconds": 0})
                assert (await handle.wait()).structured_content == {"job": "done", "seconds": 0}
                handle = await client.call_tool_as_task("confirm_then_finish")
                assert text(await handle.wait()) == 'confirmation: action=accept, content={"ok": true}'
                assert text(await client.call_tool("echo", {"text": "hi"})) == "hi"
            proc.send_signal(signal.SIGINT)
            rest = await read_stderr(proc, b"\x00")
            assert await proc.wait() == 0
        # a graceful stop, not a KeyboardInterrupt traceback
        assert b"Traceback" not in rest and b"shutting down" in rest
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_http_example_on_a_taken_port_says_so() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = await run_example("--http", "--port", str(port))
        with trio.fail_after(30):
            err = await read_stderr(proc, b"\x00")
            assert await proc.wait() == 1
    # one clear line, not a traceback
    (line,) = err.decode().strip().splitlines()
    assert line.startswith(f"cannot serve on 127.0.0.1 port {port}: ")


async def test_stdio_example_stops_quietly_on_ctrl_c() -> None:
    proc = await run_example(stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=default_sigint)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        with trio.fail_after(30):
            await proc.stdin.send_all(json.dumps(INIT).encode() + b"\n")
            answer = b""
            while b"\n" not in answer:  # it serves: its signal handling is in place
                answer += await proc.stdout.receive_some()
            assert json.loads(answer)["id"] == 1
            proc.send_signal(signal.SIGINT)
            err = await read_stderr(proc, b"\x00")
            assert await proc.wait() == 130
        assert b"Traceback" not in err
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
