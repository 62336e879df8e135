"""The everything example's tools for trying a client (and ``mcp-ref fixture``): ping, list_changed,
the sampling tool loop, task-augmented sampling and elicitation, and what the server saw."""

from typing import Any

import pytest
import trio

from mcp_ref.examples.everything import SEEN, build_server
from mcp_ref.schema.content import TextContent, ToolResultContent, ToolUseContent
from mcp_ref.schema.elicitation import ElicitResult
from mcp_ref.schema.sampling import CreateMessageResult
from mcp_ref.session.tasks import TaskManager
from mcp_ref.testing import memory_session_pair


def text(result: Any) -> str:
    return " ".join(getattr(b, "text", "") for b in result.content)


@pytest.mark.req("basic/utilities/ping#1")
async def test_ping_client(autojump_clock: trio.abc.Clock) -> None:
    async with memory_session_pair(build_server(), era="legacy") as client:
        result = await client.call_tool("ping_client", {})
        assert text(result).startswith("your client answered the ping in ")


@pytest.mark.req("server/tools#4")
async def test_toggle_tool_changes_the_list_and_says_so() -> None:
    changed: list[str] = []

    async def on_list_changed(kind: str) -> None:
        changed.append(kind)

    async with memory_session_pair(build_server(), on_list_changed=on_list_changed, era="legacy") as client:
        assert "surprise" not in {t.name for t in await client.list_all_tools()}
        assert text(await client.call_tool("toggle_tool", {})) == "added the tool `surprise`"
        await client.ping()  # the notification was queued before the answer; it is in by now
        assert "surprise" in {t.name for t in await client.list_all_tools()}
        assert text(await client.call_tool("surprise", {})) == "surprise!"
        assert text(await client.call_tool("toggle_tool", {})) == "removed the tool `surprise`"
        await client.ping()
        assert "surprise" not in {t.name for t in await client.list_all_tools()}
    assert changed.count("tools") == 2


@pytest.mark.req("client/sampling#19", "client/sampling#20")
async def test_weather_agent_carries_the_tool_loop_to_the_final_answer() -> None:
    asked: list[Any] = []

    async def model(ctx: Any, params: Any) -> CreateMessageResult:
        asked.append(params)
        last = params.messages[-1].content
        if isinstance(last, list) and isinstance(last[0], ToolResultContent):
            weather = last[0].content[0].text
            return CreateMessageResult(role="assistant", model="m", content=TextContent(text=f"It is {weather}."))
        use = ToolUseContent(id="use-1", name="get_weather", input={"city": "Oslo"})
        return CreateMessageResult(role="assistant", model="m", content=[use], stop_reason="toolUse")

    async with memory_session_pair(build_server(), sampling=model, sampling_tools=True, era="legacy") as client:
        result = await client.call_tool("weather_agent", {"prompt": "Weather in Oslo?"})
    assert text(result) == "tool_use get_weather(Oslo); final: It is sunny, 21 C in Oslo."
    # the second request carries the tool use and its result, matched by id
    second = asked[1].messages
    assert [m.role for m in second] == ["user", "assistant", "user"]
    assert second[2].content[0].tool_use_id == "use-1"


async def test_weather_agent_gives_up_after_five_rounds() -> None:
    async def stubborn(ctx: Any, params: Any) -> CreateMessageResult:
        use = ToolUseContent(id=f"use-{len(params.messages)}", name="get_weather", input={"city": "Oslo"})
        return CreateMessageResult(role="assistant", model="m", content=[use], stop_reason="toolUse")

    async with memory_session_pair(build_server(), sampling=stubborn, sampling_tools=True, era="legacy") as client:
        result = await client.call_tool("weather_agent", {"prompt": "?"})
    assert result.is_error and "after 5 rounds" in text(result)


@pytest.mark.req("basic/utilities/tasks#43", "basic/utilities/tasks#46")
async def test_sampling_and_elicitation_as_tasks_of_the_client(autojump_clock: trio.abc.Clock) -> None:
    async def model(ctx: Any, params: Any) -> CreateMessageResult:
        await trio.sleep(1)  # the task runs a while: the server polls
        return CreateMessageResult(role="assistant", model="m", content=TextContent(text="done"))

    async def person(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"ok": True})

    async with trio.open_nursery() as nursery:
        tasks = TaskManager(nursery)
        async with memory_session_pair(
            build_server(), sampling=model, elicitation=person, tasks=tasks, era="legacy"
        ) as client:
            sampled = text(await client.call_tool("ask_model_as_task", {"prompt": "hi"}))
            elicited = text(await client.call_tool("ask_user_as_task", {}))
        nursery.cancel_scope.cancel()
    assert sampled.startswith("task ") and sampled.endswith(": m: done")
    assert elicited.startswith("task ") and elicited.endswith('action=accept, content={"ok": true}')


async def test_the_task_tools_say_what_the_client_lacks() -> None:
    async with memory_session_pair(build_server(), era="legacy") as client:
        result = await client.call_tool("ask_model_as_task", {"prompt": "hi"})
    assert result.is_error and "cannot start a task" in text(result)


@pytest.mark.req("basic/utilities/cancellation#4")
async def test_what_i_saw_reports_the_cancellation_the_server_received(autojump_clock: trio.abc.Clock) -> None:
    SEEN.clear()
    async with memory_session_pair(build_server(), era="legacy") as client:
        pending = await client.start_request("tools/call", _call("wait_for_cancel", {"seconds": 30}))
        await trio.sleep(1)
        await pending.cancel("changed my mind")
        await trio.sleep(1)
        seen = text(await client.call_tool("what_i_saw", {}))
        assert "(wait_for_cancel) cancelled by the client: " in seen and "changed my mind" in seen
        assert text(await client.call_tool("wait_for_cancel", {"seconds": 1})) == "not cancelled"
        assert text(await client.call_tool("what_i_saw", {})).endswith("(wait_for_cancel) was not cancelled")


def _call(name: str, arguments: dict[str, Any]) -> Any:
    from mcp_ref.schema.tools import CallToolRequestParams

    return CallToolRequestParams(name=name, arguments=arguments)
