"""Every feature of mcp_ref's server in one process.

    python -m mcp_ref.examples.everything               # stdio
    python -m mcp_ref.examples.everything --http --port 8000   # Streamable HTTP on 127.0.0.1
    python -m mcp_ref.examples.auth_server &                    # an authorization server on :9000
    python -m mcp_ref.examples.everything --http --auth         # ... protecting this one (OAuth)

Tools, resources, prompts, completion and logging, tools that make the server
ask the client for sampling, elicitation (form and URL) and roots, and the
fixtures the official conformance suite calls (``test_*``). Every tool says
in its description what it does, so a person driving it from an MCP client
can follow along.
"""

import argparse
import base64
import json
import math
import signal
import ssl
import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import trio

from mcp_ref import (
    ErrorCode,
    MCPError,
    ProtocolError,
    RequestContext,
    RequestTimeout,
    Server,
    TaskConfig,
    ToolError,
    URLElicitationRequired,
    decode,
)
from mcp_ref.ext.tasks import TaskExtension, as_task
from mcp_ref.schema import (
    AudioContent,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCompleteNotificationParams,
    ElicitationRequestedSchema,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    PromptArgument,
    PromptMessage,
    SamplingMessage,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
    ToolChoice,
    ToolResultContent,
    ToolUseContent,
)

__all__ = ["build_server", "main"]

T = TypeVar("T")

#: a 1x1 red PNG
RED_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)
#: 0.01 s of silence, 8 kHz mono 8-bit WAV
SILENT_WAV = (
    b"RIFF"
    + (36 + 80).to_bytes(4, "little")
    + b"WAVEfmt "
    + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little")
    + (1).to_bytes(2, "little")
    + (8000).to_bytes(4, "little")
    + (8000).to_bytes(4, "little")
    + (1).to_bytes(2, "little")
    + (8).to_bytes(2, "little")
    + b"data"
    + (80).to_bytes(4, "little")
    + b"\x80" * 80
)
PNG_B64 = base64.b64encode(RED_PIXEL_PNG).decode()
WAV_B64 = base64.b64encode(SILENT_WAV).decode()
NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
LANGUAGES = ["python", "javascript", "typescript", "rust", "go", "java", "kotlin", "haskell", "ocaml", "elixir"]


def _text(result: Any) -> str:
    return " ".join(getattr(b, "text", f"<{getattr(b, 'type', '?')}>") for b in result.content)


def build_server(
    task_nursery: trio.Nursery | None = None, task_store: Any = None, *, auth: bool = False, changes: Any = None
) -> Server:
    """The server; with ``task_nursery`` tasks are enabled (and the task-only tool registered).

    ``task_store``: where tasks are kept (in memory by default). With ``auth``
    tasks belong to the authenticated user who created them, in any store.
    Without auth a durable one (``--task-db``) binds tasks to no requestor --
    the task id is what gives access -- since a session does not survive the
    restart its tasks do (quotas still count per session). ``changes``: the change feed
    (replicas share one: ``open_postgres_change_feed``).
    """
    server = Server(
        "mcp_ref-everything",
        "0.1.0",
        title="mcp_ref everything server",
        description="Every feature of the mcp_ref reference implementation, for trying clients against",
        instructions=(
            "A test server. Tools named test_* are fixtures of the official conformance suite; the others "
            "demonstrate features (progress, cancellation, sampling, elicitation, roots, logging, tasks)."
        ),
        changes=changes,
    )
    if task_nursery is not None:
        if task_store is None or auth:
            server.enable_tasks(task_nursery, store=task_store)  # (binding="session": the user, with auth)
        else:
            server.enable_tasks(task_nursery, store=task_store, config=TaskConfig(binding="none"))
    _demo_tools(server)
    _client_tools(server)
    _task_tools(server)
    if task_nursery is not None:
        # the tasks extension of 2026-07-28 requests, on the same store as the 2025 core tasks
        TaskExtension(
            task_nursery, store=server.task_manager.store if server.task_manager else None, decide=_decide
        ).install(server)
        _ext_task_tools(server)
    _conformance_tools(server)
    _modern_conformance_tools(server)
    _resources(server)
    _prompts(server)
    return server


# -- demonstration tools -------------------------------------------------------------


def _demo_tools(server: Server) -> None:
    @server.tool(
        description="Echo back the `text` you send.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    )
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments["text"])

    @server.tool(
        description='Add two numbers `a` and `b`; the result is structured ({"sum": ...}) and also given as text.',
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        output_schema={"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def add(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        total = arguments["a"] + arguments["b"]
        try:
            # a JSON number a peer can read is a finite double: an integer past that range
            # (a 4,000-digit one) overflows float(), a float sum becomes infinite
            fits = math.isfinite(float(total))
        except OverflowError:
            fits = False
        if not fits:
            # say why, rather than fail to encode the result (the operands may be too long to quote)
            raise ToolError("the sum of a and b is too large for JSON numbers")
        return {"sum": total}

    @server.tool(
        description=(
            "Work for `seconds` seconds (default 10), reporting progress every second. "
            "Cancel it from your client to see cancellation reach the server."
        ),
        input_schema={"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 600}}},
    )
    async def long_running(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        seconds = float(arguments.get("seconds", 10))
        steps = max(1, int(seconds))
        for i in range(1, steps + 1):
            await trio.sleep(seconds / steps)
            await ctx.progress(i, steps, f"step {i} of {steps}")
        return f"finished after {seconds:g}s"

    @server.tool(
        description="Send `count` progress notifications (default 10) as fast as possible, then return.",
        input_schema={"type": "object", "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 100000}}},
    )
    async def progress_emitter(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        count = int(arguments.get("count", 10))
        for i in range(1, count + 1):
            await ctx.progress(i, count)
        return f"sent {count} progress notifications"

    @server.tool(
        description="Ask your client's model (sampling/createMessage) to answer `prompt`; returns its answer.",
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    )
    async def ask_model(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text=arguments["prompt"]))], max_tokens=200
        )
        result: CreateMessageResult = await _ask_client(ctx.sample(params), "ask the model")
        answer = _text(result) if isinstance(result.content, list) else getattr(result.content, "text", "")
        return f"{result.model}: {answer}"

    @server.tool(
        description=(
            "Ask your client's model a question with one tool available (`get_weather`); needs sampling.tools. "
            "Shows the stop reason and any tool use the model made."
        ),
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    )
    async def ask_model_with_tools(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        weather = Tool(
            name="get_weather",
            description="Current weather for a city",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        )
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text=arguments["prompt"]))],
            max_tokens=200,
            tools=[weather],
            tool_choice=ToolChoice(mode="auto"),
        )
        result: CreateMessageResult = await _ask_client(ctx.sample(params), "ask the model")
        blocks = result.content if isinstance(result.content, list) else [result.content]
        return f"stopReason={result.stop_reason}; blocks={[b.type for b in blocks]}"

    @server.tool(
        description="Ask you (elicitation, form mode) for your name and favourite colour, and say what you answered.",
        input_schema=NO_ARGS,
    )
    async def ask_user(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        schema = decode(
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Your name", "minLength": 1},
                    "colour": {"type": "string", "enum": ["red", "green", "blue"], "default": "blue"},
                },
                "required": ["name"],
            },
            ElicitationRequestedSchema,
        )
        result = await _elicit(ctx, ElicitRequestFormParams(message="Tell me about you", requested_schema=schema))
        return f"action={result.action}, content={json.dumps(result.content)}"

    @server.tool(
        description=(
            "Ask you (elicitation, URL mode) to visit a page out of band; the server announces completion "
            "with notifications/elicitation/complete. Needs elicitation.url."
        ),
        input_schema=NO_ARGS,
    )
    async def visit_url(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = ElicitRequestURLParams(
            message="Please review the example page", url="https://example.com/consent", elicitation_id="everything-1"
        )
        result = await _elicit(ctx, params)
        if result.action == "accept":
            await ctx.notify("notifications/elicitation/complete", _complete("everything-1"))
        return f"action={result.action}"

    @server.tool(
        description="Fail with URLElicitationRequired (-32042): shows how a server asks for out-of-band consent first.",
        input_schema=NO_ARGS,
    )
    async def needs_consent(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise URLElicitationRequired(
            [
                ElicitRequestURLParams(
                    message="Authorize first", url="https://example.com/authorize", elicitation_id="consent-1"
                )
            ]
        )

    @server.tool(description="List the roots your client exposes (roots/list).", input_schema=NO_ARGS)
    async def show_roots(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        result = await _ask_client(ctx.list_roots(), "list your roots")
        return "\n".join(f"{r.uri} ({r.name or 'unnamed'})" for r in result.roots) or "(no roots)"

    @server.tool(
        description="Send one log message per level (debug .. emergency); logging/setLevel filters them.",
        input_schema=NO_ARGS,
    )
    async def log_levels(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        sent = []
        for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
            if await ctx.log(level, f"a {level} message", logger="everything"):
                sent.append(level)
        return f"sent: {', '.join(sent) or 'nothing'}"

    @server.tool(
        description="Change test://watched-resource and notify subscribers (resources/subscribe first).",
        input_schema=NO_ARGS,
    )
    async def touch_watched(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        WATCHED["version"] += 1
        server.resource_updated("test://watched-resource")
        return f"watched resource is now version {WATCHED['version']}"


WATCHED = {"version": 1}
#: what the server saw of its clients (cancellations...), newest last: `what_i_saw` reports it
SEEN: deque[str] = deque(maxlen=50)


def _client_tools(server: Server) -> None:
    """Tools a client author tries a client with (``mcp-ref fixture`` serves them too)."""

    @server.tool(description="Ping your client (ping) and say how long its answer took.", input_schema=NO_ARGS)
    async def ping_client(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        start = trio.current_time()
        await _ask_client(ctx.request("ping", None, timeout=10), "ping you")
        return f"your client answered the ping in {(trio.current_time() - start) * 1000:.0f} ms"

    async def surprise(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "surprise!"

    @server.tool(
        description=(
            "Add the tool `surprise`, or remove it if it is there: the tool list changes and the server "
            "sends notifications/tools/list_changed (list the tools again to see it)."
        ),
        input_schema=NO_ARGS,
    )
    async def toggle_tool(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        if "surprise" in server.tools:
            server.tools.remove("surprise")
            return "removed the tool `surprise`"
        server.tool(description="Appears and disappears with toggle_tool.", input_schema=NO_ARGS)(surprise)
        return "added the tool `surprise`"

    @server.tool(
        description=(
            "The sampling tool-use loop to its final answer: ask your client's model `prompt` with a "
            "`get_weather` tool; answer each tool_use with a tool_result and ask again, until the model "
            "answers in text (at most 5 rounds). Needs sampling.tools."
        ),
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    )
    async def weather_agent(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        weather = Tool(
            name="get_weather",
            description="Current weather for a city",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        )
        messages = [SamplingMessage(role="user", content=TextContent(text=arguments["prompt"]))]
        transcript = []
        for _ in range(5):  # [client/sampling#20] an iteration limit for the tool loop
            params = CreateMessageRequestParams(
                messages=messages, max_tokens=300, tools=[weather], tool_choice=ToolChoice(mode="auto")
            )
            result: CreateMessageResult = await _ask_client(ctx.sample(params), "ask the model")
            blocks = result.content if isinstance(result.content, list) else [result.content]
            uses = [b for b in blocks if isinstance(b, ToolUseContent)]
            if result.stop_reason != "toolUse" or not uses:
                transcript.append("final: " + " ".join(getattr(b, "text", "") for b in blocks).strip())
                return "; ".join(transcript)
            # [client/sampling#19] every tool_use is answered by a tool_result with its id, in one user message
            answers: list[Any] = []
            for use in uses:
                city = str(use.input.get("city", "somewhere"))
                transcript.append(f"tool_use get_weather({city})")
                answers.append(
                    ToolResultContent(tool_use_id=use.id, content=[TextContent(text=f"sunny, 21 C in {city}")])
                )
            messages = [
                *messages,
                SamplingMessage(role="assistant", content=blocks),
                SamplingMessage(role="user", content=answers),
            ]
        raise ToolError("the model was still using tools after 5 rounds: " + "; ".join(transcript))

    @server.tool(
        description=(
            "Ask your client's model `prompt` as a task (task-augmented sampling/createMessage): your client "
            "answers CreateTaskResult and runs it in the background; the server polls tasks/get and fetches "
            "tasks/result. Needs tasks.requests.sampling.createMessage."
        ),
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    )
    async def ask_model_as_task(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text=arguments["prompt"]))], max_tokens=200
        )
        handle = await _ask_client(ctx.request_task("sampling/createMessage", params, ttl=300_000), "start a task")
        result: CreateMessageResult = await _ask_client(handle.result(), "get the task's result")
        answer = _text(result) if isinstance(result.content, list) else getattr(result.content, "text", "")
        return f"task {handle.task_id}: {result.model}: {answer}"

    @server.tool(
        description=(
            "Ask you for a confirmation as a task (task-augmented elicitation/create): your client answers "
            "CreateTaskResult; the server polls and fetches the answer. Needs tasks.requests.elicitation.create."
        ),
        input_schema=NO_ARGS,
    )
    async def ask_user_as_task(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        schema = decode(
            {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
            ElicitationRequestedSchema,
        )
        params = ElicitRequestFormParams(message="Confirm, as a task", requested_schema=schema)
        handle = await _ask_client(ctx.request_task("elicitation/create", params, ttl=300_000), "start a task")
        result: ElicitResult = await _ask_client(handle.result(), "get the task's result")
        return f"task {handle.task_id}: action={result.action}, content={json.dumps(result.content)}"

    @server.tool(
        description=(
            "Wait until cancelled (at most `seconds`, default 60), then say so. Cancel it from your client, "
            "then call what_i_saw: it reports the cancellation as the server received it."
        ),
        input_schema={"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 600}}},
    )
    async def wait_for_cancel(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await trio.sleep(float(arguments.get("seconds", 60)))
        except trio.Cancelled as e:
            if ctx.cancel_scope.cancel_called:
                SEEN.append(f"request {ctx.request_id!r} (wait_for_cancel) cancelled by the client: {e.reason}")
            raise
        SEEN.append(f"request {ctx.request_id!r} (wait_for_cancel) was not cancelled")
        return "not cancelled"

    @server.tool(
        description="What the server saw of its clients: the cancellations it received, newest last.",
        input_schema=NO_ARGS,
    )
    async def what_i_saw(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "\n".join(SEEN) or "nothing yet"


def _task_tools(server: Server) -> None:
    """Tools for basic/utilities/tasks (run as tasks when tasks are enabled, which main() does)."""

    @server.tool(
        description=(
            "Task support optional: count to `count` (default 5), one per second, reporting progress. "
            "Call it normally or as a task (then poll tasks/get and fetch tasks/result)."
        ),
        input_schema={"type": "object", "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 3600}}},
        task_support="optional",
    )
    async def count_slowly(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        count = int(arguments.get("count", 5))
        for i in range(1, count + 1):
            await trio.sleep(1)
            await ctx.progress(i, count, f"{i}/{count}")
        return f"counted to {count}"

    async def batch_job(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        seconds = float(arguments.get("seconds", 3))
        await trio.sleep(seconds)
        return {"job": "done", "seconds": seconds}

    if server.task_manager is not None:  # a task-only tool without tasks could never be called
        server.tool(
            description=(
                "Task support required: simulate a batch job of `seconds` seconds (default 3). Only callable as a task."
            ),
            input_schema={
                "type": "object",
                "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 3600}},
            },
            task_support="required",
        )(batch_job)

    @server.tool(
        description=(
            "Task that needs input mid-way: it asks you to confirm (elicitation) while the task is "
            "input_required, then finishes. Call it as a task and fetch tasks/result to answer."
        ),
        input_schema=NO_ARGS,
        task_support="optional",
    )
    async def confirm_then_finish(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        schema = decode(
            {"type": "object", "properties": {"ok": {"type": "boolean", "default": True}}, "required": ["ok"]},
            ElicitationRequestedSchema,
        )
        result = await _elicit(ctx, ElicitRequestFormParams(message="Continue the task?", requested_schema=schema))
        return f"confirmation: action={result.action}, content={json.dumps(result.content)}"


def _complete(elicitation_id: str) -> Any:
    return ElicitationCompleteNotificationParams(elicitation_id=elicitation_id)


# -- conformance suite fixtures ------------------------------------------------------------


def _conformance_tools(server: Server) -> None:
    @server.tool(description="Conformance: returns one simple text block.", input_schema=NO_ARGS)
    async def test_simple_text(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "This is a simple text response for testing."

    @server.tool(description="Conformance: returns a 1x1 PNG image.", input_schema=NO_ARGS)
    async def test_image_content(ctx: RequestContext, arguments: dict[str, Any]) -> list[Any]:
        return [ImageContent(data=PNG_B64, mime_type="image/png")]

    @server.tool(description="Conformance: returns a short WAV audio clip.", input_schema=NO_ARGS)
    async def test_audio_content(ctx: RequestContext, arguments: dict[str, Any]) -> list[Any]:
        return [AudioContent(data=WAV_B64, mime_type="audio/wav")]

    @server.tool(description="Conformance: returns an embedded text resource.", input_schema=NO_ARGS)
    async def test_embedded_resource(ctx: RequestContext, arguments: dict[str, Any]) -> list[Any]:
        return [
            EmbeddedResource(
                resource=TextResourceContents(
                    uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
                )
            )
        ]

    @server.tool(description="Conformance: returns text, an image and an embedded resource.", input_schema=NO_ARGS)
    async def test_multiple_content_types(ctx: RequestContext, arguments: dict[str, Any]) -> list[Any]:
        return [
            TextContent(text="Multiple content types test:"),
            ImageContent(data=PNG_B64, mime_type="image/png"),
            EmbeddedResource(
                resource=TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text=json.dumps({"test": "data", "value": 123}),
                )
            ),
        ]

    @server.tool(description="Conformance: sends three info log messages while it runs.", input_schema=NO_ARGS)
    async def test_tool_with_logging(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.log("info", "Tool execution started", logger="conformance")
        await trio.sleep(0.05)
        await ctx.log("info", "Tool processing data", logger="conformance")
        await trio.sleep(0.05)
        await ctx.log("info", "Tool execution completed", logger="conformance")
        return "Tool with logging executed successfully"

    @server.tool(description="Conformance: reports progress 0, 50 and 100 of 100.", input_schema=NO_ARGS)
    async def test_tool_with_progress(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for value in (0, 50, 100):
            await ctx.progress(value, 100)
            if value < 100:
                await trio.sleep(0.05)
        return "Tool with progress executed successfully"

    @server.tool(description="Conformance: always fails with a tool execution error.", input_schema=NO_ARGS)
    async def test_error_handling(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool(
        description="Conformance: asks the client's model to answer `prompt` (sampling).",
        input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    )
    async def test_sampling(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text=arguments["prompt"]))], max_tokens=100
        )
        result: CreateMessageResult = await _ask_client(ctx.sample(params), "ask the model")
        content = result.content
        text = _text(result) if isinstance(content, list) else getattr(content, "text", "")
        return f"LLM response: {text}"

    @server.tool(
        description="Conformance: asks the user for a username and email (elicitation, form mode).",
        input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    )
    async def test_elicitation(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        schema = decode(
            {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
            ElicitationRequestedSchema,
        )
        result = await _elicit(ctx, ElicitRequestFormParams(message=arguments["message"], requested_schema=schema))
        return f"User response: <action: {result.action}, content: {json.dumps(result.content)}>"

    @server.tool(description="Conformance: elicitation with a default for every primitive type.", input_schema=NO_ARGS)
    async def test_elicitation_sep1034_defaults(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        schema = decode(
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "default": True},
                },
            },
            ElicitationRequestedSchema,
        )
        result = await _elicit(
            ctx, ElicitRequestFormParams(message="Please review the defaults", requested_schema=schema)
        )
        return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"

    @server.tool(description="Conformance: elicitation with all five enum schema variants.", input_schema=NO_ARGS)
    async def test_elicitation_sep1330_enums(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        schema = decode(
            {
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {
                        "type": "string",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"},
                        ],
                    },
                    "legacyEnum": {
                        "type": "string",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"],
                    },
                    "untitledMulti": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    },
                    "titledMulti": {
                        "type": "array",
                        "items": {
                            "anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"},
                            ]
                        },
                    },
                },
            },
            ElicitationRequestedSchema,
        )
        result = await _elicit(ctx, ElicitRequestFormParams(message="Pick some options", requested_schema=schema))
        return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"

    @server.tool(
        "json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        input_schema={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"},
            },
            # composition and conditional keywords (2026-07-28 allows any 2020-12 keyword)
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": False,
        },
    )
    async def json_schema_tool(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return f"received {json.dumps(arguments, sort_keys=True)}"

    @server.tool(
        description=(
            "Conformance (Streamable HTTP): closes this request's SSE stream mid-call, then answers; "
            "the client must reconnect with Last-Event-ID to get the result."
        ),
        input_schema=NO_ARGS,
    )
    async def test_reconnection(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        close = getattr(ctx.session.channel, "close_request_stream", None)
        if close is not None:
            await close(ctx.request_id)
        await trio.sleep(0.2)
        return "Reconnection test completed"


def _decide(ctx: RequestContext, tool: Tool, params: Any) -> bool:
    """Which calls of task-capable tools become tasks at once: all but the one that first asks
    its question in the request (multi round-trip) and then hands its work to a task itself."""
    return tool.name != "test_tool_with_task"


def _ext_task_tools(server: Server) -> None:
    """Tools of the tasks extension (io.modelcontextprotocol/tasks): the fixtures the official
    conformance suite's tasks-* scenarios call, each a plain tool for a 2025 session."""
    any_args: dict[str, Any] = {"type": "object"}

    @server.tool(description="Say hello to `name` (no task support: always answered at once).")
    async def greet(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return f"Hello, {arguments.get('name', 'World')}!"

    @server.tool(
        description="Sleep `seconds` (default 1), then answer; a task for a client with the tasks extension.",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 3600}, "label": {"type": "string"}},
        },
        task_support="optional",
    )
    async def slow_compute(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        seconds = float(arguments.get("seconds", 1))
        await trio.sleep(seconds)
        label = str(arguments.get("label") or "")
        return f"computed {label} after {seconds:g} s" if label else f"computed after {seconds:g} s"

    @server.tool(
        description="A task that fails as a tool (isError) after a second.",
        input_schema=any_args,
        task_support="required",
    )
    async def failing_job(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await trio.sleep(1)
        raise ToolError("the job failed (on purpose)")

    @server.tool(
        description="A task that fails with a JSON-RPC error (a protocol-level failure).",
        input_schema=any_args,
        task_support="required",
    )
    async def protocol_error_job(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await trio.sleep(0.1)
        raise ProtocolError("Internal error: the job broke (on purpose)", ErrorCode.INTERNAL_ERROR)

    confirm_schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}

    @server.tool(
        description="Delete `filename` once you confirm (asked while the task is input_required).",
        input_schema={"type": "object", "properties": {"filename": {"type": "string"}}},
        task_support="optional",
    )
    async def confirm_delete(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        question = ElicitRequestFormParams(
            message=f"Delete {arguments.get('filename', 'the file')}?",
            requested_schema=decode(confirm_schema, ElicitationRequestedSchema),
        )
        answer = await _elicit(ctx, question)
        confirmed = answer.action == "accept" and bool((answer.content or {}).get("confirm"))
        return f"{'deleted' if confirmed else 'kept'} {arguments.get('filename', 'the file')}"

    both = {"type": "object", "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}}

    @server.tool(
        description="Ask two questions at once (two input requests outstanding together).",
        input_schema=any_args,
        task_support="optional",
    )
    async def multi_input(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        schema = decode(both, ElicitationRequestedSchema)
        answers = await ctx.ask_all(
            {
                "first": ("elicitation/create", ElicitRequestFormParams(message="First?", requested_schema=schema)),
                "second": ("elicitation/create", ElicitRequestFormParams(message="Second?", requested_schema=schema)),
            }
        )
        return ", ".join(f"{key}={json.dumps(a.content)}" for key, a in sorted(answers.items()))

    @server.tool(
        description="Ask your name in the request (multi round-trip), then greet you from a task.",
        input_schema=any_args,
        task_support="required",
    )
    async def test_tool_with_task(ctx: RequestContext, arguments: dict[str, Any]) -> Any:
        question = ElicitRequestFormParams(
            message="What is your name?",
            requested_schema=decode(
                {"type": "object", "properties": {"name": {"type": "string"}}}, ElicitationRequestedSchema
            ),
        )
        answer = await ctx.elicit(question, key="user_name")
        name = (answer.content or {}).get("name", "stranger")

        async def greet_later(tctx: RequestContext) -> str:
            await trio.sleep(0.2)
            return f"Hello, {name}! (from a task)"

        # the question answered in the request, the work handed to a task
        return await as_task(ctx, greet_later)


def _modern_conformance_tools(server: Server) -> None:
    """The fixtures of the conformance suite's 2026-07-28 scenarios (multi round-trip requests,
    capabilities in ``_meta``, subscriptions). Written as any tool is: in a 2025-11-25 session the
    same ``ctx.elicit()`` is a request to the client, in a 2026-07-28 request an input request."""

    def ask(message: str, field: str, kind: str = "string") -> ElicitRequestFormParams:
        schema = decode(
            {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}, ElicitationRequestedSchema
        )
        return ElicitRequestFormParams(message=message, requested_schema=schema)

    def question(text: str, max_tokens: int = 100) -> CreateMessageRequestParams:
        return CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text=text))], max_tokens=max_tokens
        )

    def said(result: CreateMessageResult) -> str:
        content = result.content
        return _text(result) if isinstance(content, list) else getattr(content, "text", "")

    @server.tool(description="Conformance: asks your name (one elicitation input request).", input_schema=NO_ARGS)
    async def test_input_required_result_elicitation(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit(ask("What is your name?", "name"), key="user_name")
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"

    @server.tool(description="Conformance: asks your model the capital of France (sampling).", input_schema=NO_ARGS)
    async def test_input_required_result_sampling(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        result = await ctx.sample(question("What is the capital of France?"), key="capital_question")
        return f"The model said: {said(result)}"

    @server.tool(description="Conformance: lists your roots (roots/list).", input_schema=NO_ARGS)
    async def test_input_required_result_list_roots(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        result = await ctx.list_roots(key="client_roots")
        return "Your roots: " + ", ".join(root.uri for root in result.roots)

    @server.tool(
        description="Conformance: asks for a confirmation, keeping its own state across the rounds.",
        input_schema=NO_ARGS,
    )
    async def test_input_required_result_request_state(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        ctx.state.setdefault("asked_at_round", 1)
        answer = await ctx.elicit(ask("Please confirm", "ok", "boolean"), key="confirm")
        # the state came back sealed: a client could neither read nor change it
        ok = ctx.state.get("asked_at_round") == 1 or ctx.revision < "2026-07-28"
        return f"{'state-ok' if ok else 'state-lost'}: confirmed={(answer.content or {}).get('ok')}"

    @server.tool(description="Conformance: asks for a confirmation; its requestState is sealed.", input_schema=NO_ARGS)
    async def test_input_required_result_tampered_state(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit(ask("Please confirm", "ok", "boolean"), key="confirm")
        return f"confirmed={(answer.content or {}).get('ok')}"

    @server.tool(description="Conformance: asks your name, your model and your roots at once.", input_schema=NO_ARGS)
    async def test_input_required_result_multiple_inputs(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        answers = await ctx.ask_all(
            {
                "user_name": ("elicitation/create", ask("What is your name?", "name")),
                "greeting": ("sampling/createMessage", question("Generate a greeting", 50)),
                "client_roots": ("roots/list", None),
            }
        )
        name = (answers["user_name"].content or {}).get("name")
        return f"{said(answers['greeting'])} {name}, with {len(answers['client_roots'].roots)} root(s)"

    @server.tool(description="Conformance: asks two questions, one after the other.", input_schema=NO_ARGS)
    async def test_input_required_result_multi_round(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        first = await ctx.elicit(ask("Step 1: What is your name?", "name"), key="step1")
        second = await ctx.elicit(ask("Step 2: What is your favorite color?", "color"), key="step2")
        return f"{(first.content or {}).get('name')} likes {(second.content or {}).get('color')}"

    @server.tool(
        description="Conformance: asks only for what your client declared (sampling, elicitation).",
        input_schema=NO_ARGS,
    )
    async def test_input_required_result_capabilities(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        wanted: dict[str, tuple[str, Any]] = {}
        if ctx.can_sample():
            wanted["capital_question"] = ("sampling/createMessage", question("What is the capital of France?"))
        if ctx.can_elicit():
            wanted["user_name"] = ("elicitation/create", ask("What is your name?", "name"))
        if not wanted:
            return "your client declared nothing this tool could ask it"
        answers = await ctx.ask_all(wanted)
        return f"asked for: {', '.join(sorted(answers))}"

    @server.tool(
        description="Conformance: needs your model (sampling); refused when your client did not declare it.",
        input_schema=NO_ARGS,
    )
    async def test_missing_capability(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        result = await ctx.sample(question("Say hello", 20))
        return said(result)

    @server.tool(description="Conformance: reports progress, then asks you to confirm.", input_schema=NO_ARGS)
    async def test_streaming_elicitation(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, 2, "about to ask")
        answer = await ctx.elicit(ask("Continue?", "ok", "boolean"), key="continue")
        return f"continue={(answer.content or {}).get('ok')}"

    @server.tool(
        description=(
            "Conformance (Streamable HTTP): `region` is mirrored in the Mcp-Param-Region header, "
            "which the server checks against the body"
        ),
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"},
            },
            "required": ["region"],
        },
    )
    async def test_header_routed(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return f"ran in {arguments['region']}: {arguments.get('query', '')}"

    @server.tool(description="Conformance: logs three messages (sent only if the request asked).", input_schema=NO_ARGS)
    async def test_logging_tool(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for text in ("starting", "working", "done"):
            await ctx.log("info", text, logger="conformance")
        return "logged"

    async def extra_tool(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "extra"

    @server.tool(description="Conformance: adds or removes the tool `test_extra_tool` (tools list changes).")
    async def test_trigger_tool_change(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        if "test_extra_tool" in server.tools:
            server.tools.remove("test_extra_tool")
            return "removed test_extra_tool"
        server.tool("test_extra_tool", description="Comes and goes.", input_schema=NO_ARGS)(extra_tool)
        return "added test_extra_tool"

    async def extra_prompt(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return "extra"

    @server.tool(description="Conformance: adds or removes the prompt `test_extra_prompt` (prompts list changes).")
    async def test_trigger_prompt_change(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        if "test_extra_prompt" in server.prompts:
            server.prompts.remove("test_extra_prompt")
            return "removed test_extra_prompt"
        server.prompt("test_extra_prompt", description="Comes and goes.")(extra_prompt)
        return "added test_extra_prompt"


async def _ask_client(request: Awaitable[T], what: str) -> T:
    """Await a nested request to the client; one it cannot take fails the tool, not the call."""
    try:
        return await request
    except (ProtocolError, MCPError, RequestTimeout) as e:
        # [schema#37] the client lacks what the tool needs (a capability, a mode), answered
        # badly, refused with an error, or never answered: that is the tool's failure,
        # reported in its result with isError, not a protocol error for tools/call (whose
        # caller would take the client's own error code, say -32602, as about its call)
        raise ToolError(f"cannot {what}: {e}") from e


async def _elicit(ctx: RequestContext, params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
    result: ElicitResult = await _ask_client(ctx.elicit(params), "ask you")
    return result


# -- resources ------------------------------------------------------------------------------


def _resources(server: Server) -> None:
    @server.resource(
        "test://static-text", name="static-text", mime_type="text/plain", description="A static text resource"
    )
    async def static_text(ctx: RequestContext) -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary", name="static-binary", mime_type="image/png", description="A static PNG image"
    )
    async def static_binary(ctx: RequestContext) -> bytes:
        return RED_PIXEL_PNG

    @server.resource(
        "test://watched-resource",
        name="watched-resource",
        mime_type="text/plain",
        description="Subscribe to it, then call the touch_watched tool to get notifications/resources/updated",
    )
    async def watched(ctx: RequestContext) -> str:
        return f"watched resource, version {WATCHED['version']}"

    async def complete_id(ctx: RequestContext, value: str, context: dict[str, str]) -> list[str]:
        return [str(i) for i in range(1, 200) if str(i).startswith(value)]

    @server.resource_template(
        "test://template/{id}/data",
        name="template-data",
        mime_type="application/json",
        description="Data for any id: test://template/{id}/data",
        completers={"id": complete_id},
    )
    async def template_data(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
        ident = variables["id"]
        return json.dumps({"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"})


# -- prompts -----------------------------------------------------------------------------------


def _prompts(server: Server) -> None:
    @server.prompt(description="A simple prompt with no arguments")
    async def test_simple_prompt(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return "This is a simple prompt for testing."

    async def complete_arg(ctx: RequestContext, value: str, context: dict[str, str]) -> list[str]:
        words = ["paris", "park", "party", "pasta", "hello", "help", "world", "word"]
        return [w for w in words if w.startswith(value)]

    @server.prompt(
        description="A prompt with two required arguments (arg1 has completion)",
        arguments=[
            PromptArgument(name="arg1", description="First test argument", required=True),
            PromptArgument(name="arg2", description="Second test argument", required=True),
        ],
        completers={"arg1": complete_arg},
    )
    async def test_prompt_with_arguments(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"

    @server.prompt(
        description="A prompt embedding a resource",
        arguments=[PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True)],
    )
    async def test_prompt_with_embedded_resource(ctx: RequestContext, arguments: dict[str, str]) -> list[PromptMessage]:
        return [
            PromptMessage(
                role="user",
                content=EmbeddedResource(
                    resource=TextResourceContents(
                        uri=arguments["resourceUri"],
                        mime_type="text/plain",
                        text="Embedded resource content for testing.",
                    )
                ),
            ),
            PromptMessage(role="user", content=TextContent(text="Please process the embedded resource above.")),
        ]

    @server.prompt(description="A prompt with an image")
    async def test_prompt_with_image(ctx: RequestContext, arguments: dict[str, str]) -> list[PromptMessage]:
        return [
            PromptMessage(role="user", content=ImageContent(data=PNG_B64, mime_type="image/png")),
            PromptMessage(role="user", content=TextContent(text="Please analyze the image above.")),
        ]

    async def complete_language(ctx: RequestContext, value: str, context: dict[str, str]) -> list[str]:
        return [lang for lang in LANGUAGES if lang.startswith(value.lower())]

    @server.prompt(
        description="Ask for a code review of `code` written in `language` (language has completion)",
        arguments=[
            PromptArgument(name="language", description="Programming language", required=True),
            PromptArgument(name="code", description="The code to review", required=True),
        ],
        completers={"language": complete_language},
    )
    async def code_review(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return f"Please review this {arguments['language']} code:\n\n{arguments['code']}"

    @server.prompt(description="Conformance: asks you for the context to use (an elicitation input request)")
    async def test_input_required_result_prompt(ctx: RequestContext, arguments: dict[str, str]) -> str:
        schema = decode(
            {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
            ElicitationRequestedSchema,
        )
        if not ctx.can_elicit():
            return "Use no particular context (your client cannot be asked for one)."
        params = ElicitRequestFormParams(message="What context should the prompt use?", requested_schema=schema)
        answer = await ctx.elicit(params, key="user_context")
        return f"Use this context: {(answer.content or {}).get('context')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_ref.examples.everything", description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind with --http (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port for --http (default 8000)")
    parser.add_argument(
        "--auth",
        nargs="?",
        const="http://127.0.0.1:9000",
        metavar="ISSUER",
        help="with --http: require OAuth access tokens from this authorization server (default "
        "http://127.0.0.1:9000, python -m mcp_ref.examples.auth_server), checked by introspection",
    )
    parser.add_argument(
        "--introspection-client",
        default="mcp-server:mcp-server-secret",
        metavar="ID:SECRET",
        help="with --auth: this server's credentials at the introspection endpoint (the auth_server default)",
    )
    parser.add_argument(
        "--cafile",
        help="with --auth: trust this CA (PEM) for the authorization server's https (default: the system's)",
    )
    parser.add_argument("--certfile", help="with --http: serve HTTPS with this certificate chain (PEM) ...")
    parser.add_argument("--keyfile", help="... and this private key")
    parser.add_argument(
        "--task-db",
        metavar="PATH|URL",
        help="keep tasks in this SQLite file (one server per file), or in PostgreSQL "
        "(postgresql://user@host/db[?table=NAME][&sweep=SECONDS]: the task table, default mcp_tasks, and how "
        "often the replicas look for the tasks of one that died, default 10; any number of servers share them, "
        "and need the same MCP_REF_STATE_KEY): finished tasks survive "
        "a restart, unfinished ones are failed (without --auth tasks are reachable by id alone, from any session); "
        "with PostgreSQL the servers also share their change notifications (subscriptions/listen)",
    )
    args = parser.parse_args(argv)
    if (args.auth or args.certfile) and not args.http:
        parser.error("--auth and --certfile go with --http")
    refused = _state_key_problem(args.task_db)
    if refused is not None:
        print(f"cannot start: {refused}", file=sys.stderr)
        return 1
    if not args.http:

        async def run_stdio() -> None:
            async with (
                _task_store(args.task_db) as store,
                _change_feed(args.task_db) as changes,
                trio.open_nursery() as nursery,
            ):
                server = build_server(nursery, store, changes=changes)
                await server.serve_stdio()
                nursery.cancel_scope.cancel()

        interrupted = False
        locked: list[BaseException] = []
        try:
            trio.run(run_stdio)
        except* KeyboardInterrupt:
            interrupted = True  # Ctrl-C: stopped, without a traceback
        except* _cannot_open() as group:
            locked.extend(_leaves(group))
        if locked:
            # (another server has the task file, the database cannot be reached, the URL is wrong)
            print(f"cannot start: {locked[0]}", file=sys.stderr)
            return 1
        return 130 if interrupted else 0
    try:
        from mcp_ref import serve_http
    except ImportError:
        print("Streamable HTTP is not available in this build (install mcp_ref[http])", file=sys.stderr)
        return 2

    if args.cafile and not args.auth:
        parser.error("--cafile goes with --auth")
    auth = _protected_resource(args.auth, args.introspection_client, args.cafile) if args.auth else None
    context = None
    if args.certfile:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.certfile, args.keyfile)

    async def run_http() -> None:
        # Ctrl-C (or SIGTERM) shuts the server down gracefully: requests in flight get a
        # few seconds to finish, then the process exits quietly
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with (
                _task_store(args.task_db) as store,
                _change_feed(args.task_db) as changes,
                trio.open_nursery() as nursery,
            ):
                server = build_server(nursery, store, auth=auth is not None, changes=changes)
                info = await nursery.start(
                    lambda task_status: serve_http(
                        server, host=args.host, port=args.port, ssl_context=context, auth=auth, task_status=task_status
                    )
                )
                if auth is not None:
                    print(f"protected: tokens from {args.auth} (scope 'mcp')", file=sys.stderr, flush=True)
                print(f"MCP endpoint (Streamable HTTP): {info.url}  -- Ctrl-C stops", file=sys.stderr, flush=True)
                async for _ in signals:
                    break
                print("shutting down", file=sys.stderr, flush=True)
                await info.aclose(5.0)
                nursery.cancel_scope.cancel()  # the tasks still running

    failure: OSError | None = None
    locked = []
    try:
        trio.run(run_http)
    except* _cannot_open() as group:
        locked.extend(_leaves(group))
    except* OSError as group:
        failure = next(e for e in _leaves(group) if isinstance(e, OSError))
    if locked:
        # (another server has the task file, the database cannot be reached, the URL is wrong)
        print(f"cannot start: {locked[0]}", file=sys.stderr)
        return 1
    if failure is not None:
        # the port is taken, or the address is not ours: say so, without a traceback
        print(f"cannot serve on {args.host} port {args.port}: {failure.strerror or failure}", file=sys.stderr)
        return 1
    return 0


def _protected_resource(issuer: str, credentials: str, cafile: str | None = None) -> Any:
    """The OAuth policy of ``--auth``: tokens of ``issuer`` with scope ``mcp``, checked by introspection
    (over https trusting ``cafile``, when given, instead of the system's CAs)."""
    from mcp_ref import IntrospectionVerifier, ProtectedResource

    client_id, _, secret = credentials.partition(":")
    issuer = issuer.rstrip("/")
    context = ssl.create_default_context(cafile=cafile) if cafile else None
    verifier = IntrospectionVerifier(issuer + "/introspect", client_id, secret, issuer=issuer, ssl_context=context)
    return ProtectedResource(verifier=verifier, authorization_servers=[issuer], required_scopes=["mcp"])


@asynccontextmanager
async def _task_store(path: str | None) -> AsyncIterator[Any]:
    """The durable task store at ``path``, or None (tasks in memory)."""
    if path is None:
        yield None
        return
    if _is_postgres(path):
        from mcp_ref import TaskStoreUnavailable, open_postgres_task_store

        opened = False
        try:
            # (the URL's table= and sweep= are the store's: open_postgres_task_store reads them)
            async with open_postgres_task_store(path) as pg_store:
                opened = True
                print(f"tasks kept in PostgreSQL, table {pg_store._sql.table}", file=sys.stderr, flush=True)
                yield pg_store
        except (ValueError, TaskStoreUnavailable) as e:
            if opened:
                raise
            # a URL libpq does not take, a database that cannot be reached: said, without a traceback
            raise _CannotStart(str(e)) from e
        return
    from mcp_ref import open_sqlite_task_store

    async with open_sqlite_task_store(path) as store:
        print(f"tasks kept in {path}", file=sys.stderr, flush=True)
        yield store


@asynccontextmanager
async def _change_feed(url: str | None) -> AsyncIterator[Any]:
    """With a PostgreSQL --task-db, the change feed replicas share on that database (else None:
    the server's own, in memory)."""
    if url is None or not _is_postgres(url):
        yield None
        return
    from mcp_ref import open_postgres_change_feed

    opened = False
    try:
        # (the task store's table= and sweep= are left out by the feed)
        async with open_postgres_change_feed(url) as feed:
            opened = True
            yield feed
    except ConnectionError as e:
        if opened:
            raise
        raise _CannotStart(str(e)) from e


class _CannotStart(Exception):
    """What the server needs cannot be opened (the message says why)."""


def _is_postgres(task_db: str | None) -> bool:
    return task_db is not None and task_db.startswith(("postgresql://", "postgres://"))


def _state_key_problem(task_db: str | None) -> str | None:
    """Why the server cannot start with its requestState key (MCP_REF_STATE_KEY), or None."""
    try:
        # (a server reads MCP_REF_STATE_KEY as it is made)
        sealer = Server("state-key-check").state_sealer
    except ValueError as e:
        return str(e)  # (too short: it names the variable)
    if _is_postgres(task_db) and sealer.random:
        # several replicas: a multi round-trip retry served by another one must open this one's state
        return (
            "a PostgreSQL --task-db makes this server one of several replicas: set MCP_REF_STATE_KEY in its "
            "environment, the same secret (at least 16 bytes) on every replica, so that any of them opens the "
            "requestState another sealed"
        )
    return None


def _cannot_open() -> tuple[type[Exception], ...]:
    """The errors of a task store that cannot be opened: a task file another server has open, a
    database that cannot be reached, a URL libpq does not take (imported only when something failed)."""
    from mcp_ref import TaskStoreLocked

    return (TaskStoreLocked, _CannotStart)


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


if __name__ == "__main__":
    sys.exit(main())
