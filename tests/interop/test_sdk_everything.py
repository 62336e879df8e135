"""The official SDK client (mcp 2.3.0) against ``python -m mcp_ref.examples.everything`` over stdio:
the features where the server calls back into the client or notifies it.

tests/examples/test_everything.py makes the basic calls (tools, resources,
prompts) with the SDK; here the SDK client also answers sampling, form
elicitation and roots, asks for completions, sets the log level, and
subscribes to a resource. Notifications are awaited on events, every wait
bounded by ``trio.fail_after``.
"""

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

sdk_session = pytest.importorskip("mcp.client.session", reason="the official SDK is in the test extra")
sdk_stdio = pytest.importorskip("mcp.client.stdio")
sdk_exceptions = pytest.importorskip("mcp.shared.exceptions")
types = pytest.importorskip("mcp_types")

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
WATCHED = "test://watched-resource"


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


@pytest.mark.req(
    "basic/transports#2",
    "client/elicitation#10",
    "client/roots#8",
    "server/resources#1",
    "server/utilities/completion#1",
    "server/utilities/logging#1",
    "server/utilities/logging#2",
)
async def test_sdk_client_answers_and_receives_what_everything_sends() -> None:
    asked: dict[str, Any] = {}
    logs: list[Any] = []
    enough_logs = trio.Event()
    updated = trio.Event()

    async def sampling(context: Any, params: Any) -> Any:
        asked["sampling"] = params.messages[0].content.text
        return types.CreateMessageResult(
            role="assistant", model="test-model", content=types.TextContent(type="text", text="forty-two")
        )

    async def elicitation(context: Any, params: Any) -> Any:
        asked["elicitation"] = (params.message, sorted(params.requested_schema["properties"]))
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async def list_roots(context: Any) -> Any:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async def on_log(params: Any) -> None:
        logs.append((params.level, params.data))
        if len(logs) == 5:
            enough_logs.set()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and str(message.params.uri) == WATCHED:
            updated.set()

    params = sdk_stdio.StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_ref.examples.everything"], env=ENV
    )
    with trio.fail_after(30):
        async with (
            sdk_stdio.stdio_client(params) as (read, write),
            sdk_session.ClientSession(
                read,
                write,
                sampling_callback=sampling,
                elicitation_callback=elicitation,
                list_roots_callback=list_roots,
                logging_callback=on_log,
                message_handler=on_message,
            ) as session,
        ):
            await session.initialize()

            # sampling: the server asks our (the SDK's) model
            result = await session.call_tool("test_sampling", {"prompt": "meaning?"})
            assert texts(result) == ["LLM response: forty-two"] and asked["sampling"] == "meaning?"

            # elicitation, form mode
            result = await session.call_tool("test_elicitation", {"message": "who?"})
            assert asked["elicitation"] == ("who?", ["email", "username"])
            assert texts(result) == [
                'User response: <action: accept, content: {"username": "ada", "email": "ada@example.com"}>'
            ]

            # roots
            assert texts(await session.call_tool("show_roots", {})) == ["file:///work (work)"]

            # completion
            done = await session.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "par"},
            )
            assert done.completion.values == ["paris", "park", "party"]

            # logging/setLevel: only warning and above are sent, and they reach the SDK's callback
            with pytest.warns(sdk_exceptions.MCPDeprecationWarning):  # ... and logging
                await session.set_logging_level("warning")
            result = await session.call_tool("log_levels", {})
            assert texts(result) == ["sent: warning, error, critical, alert, emergency"]
            await enough_logs.wait()
            assert [level for level, _ in logs] == ["warning", "error", "critical", "alert", "emergency"]

            # a subscribed resource's update
            with pytest.warns(sdk_exceptions.MCPDeprecationWarning):  # the SDK's next revision drops subscribe
                await session.subscribe_resource(WATCHED)
            await session.call_tool("touch_watched", {})
            await updated.wait()
            (contents,) = (await session.read_resource(WATCHED)).contents
            assert "version" in contents.text
