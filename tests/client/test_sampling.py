"""client/sampling: the handler, tool use rules, rejection, capability checks."""

from typing import Any

import pytest

from mcp_ref.client.sampling import SamplingRejected, check_sampling_request
from mcp_ref.errors import ErrorCode, InvalidAnswer, LocalProtocolError, MCPError, ProtocolError
from mcp_ref.schema.content import TextContent, ToolResultContent, ToolUseContent
from mcp_ref.schema.sampling import CreateMessageRequestParams, CreateMessageResult, SamplingMessage, ToolChoice
from mcp_ref.schema.tools import Tool
from mcp_ref.session import RequestContext, Server
from mcp_ref.testing import memory_session_pair

WEATHER = Tool(name="weather", input_schema={"type": "object"})


def sampling_server(results: list[Any]) -> Server:
    server = Server("sampler")

    @server.tool()
    async def ask_llm(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text=arguments["prompt"]))],
            max_tokens=100,
            tools=[WEATHER] if arguments.get("tools") else None,
        )
        try:
            result: CreateMessageResult = await ctx.sample(params)
        except (MCPError, LocalProtocolError) as e:
            results.append(e)
            return "failed"
        results.append(result)
        return "ok"

    return server


async def fake_llm(ctx: Any, params: CreateMessageRequestParams) -> CreateMessageResult:
    (message,) = params.messages
    assert isinstance(message.content, TextContent)
    if message.content.text == "no":
        raise SamplingRejected()
    if params.tools:
        return CreateMessageResult(
            role="assistant",
            model="fake",
            stop_reason="toolUse",
            content=[ToolUseContent(id="1", name="weather", input={"city": "Paris"})],
        )
    return CreateMessageResult(role="assistant", model="fake", content=TextContent(text=message.content.text.upper()))


@pytest.mark.req("client/sampling#5", "client/sampling#1", "client/sampling#14")
async def test_sampling_round_trip_and_rejection() -> None:
    results: list[Any] = []
    async with memory_session_pair(sampling_server(results), sampling=fake_llm, era="legacy") as client:
        await client.call_tool("ask_llm", {"prompt": "hello"})
        await client.call_tool("ask_llm", {"prompt": "no"})
    assert results[0].content == TextContent(text="HELLO") and results[0].model == "fake"
    assert isinstance(results[1], MCPError) and results[1].code == ErrorCode.USER_REJECTED == -1


@pytest.mark.req("client/sampling#3", "client/sampling#4")
@pytest.mark.req("schema#25")
async def test_tools_need_the_sampling_tools_capability() -> None:
    results: list[Any] = []
    async with memory_session_pair(sampling_server(results), sampling=fake_llm, era="legacy") as client:
        await client.call_tool("ask_llm", {"prompt": "x", "tools": True})
    assert isinstance(results[0], LocalProtocolError) and "sampling.tools" in str(results[0])
    results.clear()
    async with memory_session_pair(
        sampling_server(results), sampling=fake_llm, sampling_tools=True, era="legacy"
    ) as client:
        await client.call_tool("ask_llm", {"prompt": "x", "tools": True})
    assert isinstance(results[0], CreateMessageResult) and results[0].stop_reason == "toolUse"


@pytest.mark.req(
    "client/sampling#7", "client/sampling#8", "client/sampling#13", "client/sampling#15", "client/sampling#19"
)
@pytest.mark.req("schema#33")
def test_tool_use_message_rules() -> None:
    use = SamplingMessage(role="assistant", content=[ToolUseContent(id="a", name="weather", input={})])
    good = SamplingMessage(role="user", content=[ToolResultContent(tool_use_id="a", content=[TextContent(text="sun")])])
    mixed = SamplingMessage(
        role="user",
        content=[ToolResultContent(tool_use_id="a", content=[]), TextContent(text="and also")],
    )
    missing = SamplingMessage(role="user", content=[TextContent(text="forgot the result")])
    ok = CreateMessageRequestParams(
        messages=[use, good], max_tokens=5, tools=[WEATHER], tool_choice=ToolChoice(mode="auto")
    )
    check_sampling_request(ok, tools_declared=True)
    for messages in ([use, mixed], [use, missing], [use]):
        params = CreateMessageRequestParams(messages=messages, max_tokens=5, tools=[WEATHER])
        if messages == [use]:
            check_sampling_request(params, tools_declared=True)  # the answer may still come
            continue
        with pytest.raises(ProtocolError) as info:
            check_sampling_request(params, tools_declared=True)
        assert info.value.code == ErrorCode.INVALID_PARAMS
    with pytest.raises(ProtocolError):
        check_sampling_request(ok, tools_declared=False)


@pytest.mark.req("client/sampling#6")
@pytest.mark.req("schema#11", "schema#23")
def test_context_inclusion_needs_the_context_capability() -> None:
    from mcp_ref.schema.lifecycle import ClientCapabilities, SamplingCapability

    from ..test_connection import handshake

    plain = CreateMessageRequestParams(messages=[], max_tokens=5, include_context="none")
    omitted = CreateMessageRequestParams(messages=[], max_tokens=5)
    wide = [
        CreateMessageRequestParams(messages=[], max_tokens=5, include_context=scope)
        for scope in ("thisServer", "allServers")
    ]
    client, server = handshake(client_caps=ClientCapabilities(sampling=SamplingCapability()))
    server.send_request("sampling/createMessage", plain)
    server.send_request("sampling/createMessage", omitted)
    for params in wide:  # both values beyond "none", each refused on its own
        with pytest.raises(LocalProtocolError, match=r"sampling\.context"):
            server.send_request("sampling/createMessage", params)
    client, server = handshake(client_caps=ClientCapabilities(sampling=SamplingCapability(context={})))
    for params in wide:
        server.send_request("sampling/createMessage", params)


@pytest.mark.req("schema#33")
def test_a_tool_result_must_answer_a_preceding_tool_use() -> None:
    orphan = SamplingMessage(role="user", content=[ToolResultContent(tool_use_id="zz", content=[])])
    question = SamplingMessage(role="user", content=TextContent(text="weather?"))
    use = SamplingMessage(role="assistant", content=[ToolUseContent(id="a", name="weather", input={})])
    wrong = SamplingMessage(role="user", content=[ToolResultContent(tool_use_id="zz", content=[])])
    for messages, expected in (
        ([orphan], "['zz'], which answer no preceding tool use"),
        ([question, orphan], "['zz'], which answer no preceding tool use"),
        ([use, wrong], "must answer tool uses ['a']"),
    ):
        params = CreateMessageRequestParams(messages=messages, max_tokens=5, tools=[WEATHER])
        with pytest.raises(ProtocolError) as info:
            check_sampling_request(params, tools_declared=True)
        assert info.value.code == ErrorCode.INVALID_PARAMS and expected in str(info.value)


def messages_server(
    messages: list[SamplingMessage], results: list[Any], tool_choice: ToolChoice | None = None
) -> Server:
    server = Server("sampler")

    @server.tool()
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = CreateMessageRequestParams(
            messages=messages,
            max_tokens=100,
            tools=[WEATHER],
            tool_choice=tool_choice,
        )
        try:
            results.append(await ctx.sample(params))
        except (MCPError, ProtocolError) as e:
            results.append(e)
        return "done"

    return server


async def sample_once(
    messages: list[SamplingMessage], tool_choice: ToolChoice | None = None, **options: Any
) -> list[Any]:
    """What the ``ask`` tool of :func:`messages_server` got from ``ctx.sample`` (the client has sampling tools)."""
    results: list[Any] = []
    async with memory_session_pair(
        messages_server(messages, results, tool_choice), sampling_tools=True, **options, era="legacy"
    ) as client:
        await client.call_tool("ask")
    return results


@pytest.mark.req("client/sampling#19", "schema#33")
async def test_the_server_checks_tool_results_before_sending() -> None:
    use = SamplingMessage(role="assistant", content=[ToolUseContent(id="a", name="weather", input={})])
    mixed = SamplingMessage(
        role="user", content=[ToolResultContent(tool_use_id="a", content=[]), TextContent(text="and also")]
    )
    orphan = SamplingMessage(role="user", content=[ToolResultContent(tool_use_id="zz", content=[])])
    asked: list[Any] = []

    async def llm(ctx: Any, params: Any) -> CreateMessageResult:
        asked.append(params)
        return CreateMessageResult(role="assistant", model="m", content=TextContent(text="hi"))

    for messages, expected in (([use, mixed], "mixes tool results"), ([orphan], "answer no preceding tool use")):
        (error,) = await sample_once(messages, sampling=llm)
        assert isinstance(error, LocalProtocolError) and expected in str(error)
    assert asked == []  # nothing reached the client


FORECAST = Tool(
    name="forecast",
    input_schema={"type": "object"},
    output_schema={"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
)


def forecast_exchange(structured: Any) -> list[SamplingMessage]:
    return [
        SamplingMessage(role="user", content=TextContent(text="warm tomorrow?")),
        SamplingMessage(role="assistant", content=[ToolUseContent(id="f1", name="forecast", input={})]),
        SamplingMessage(
            role="user",
            content=[ToolResultContent(tool_use_id="f1", content=[], structured_content=structured)],
        ),
    ]


@pytest.mark.req("schema#34")
def test_a_tool_results_structured_content_is_checked_against_its_tools_output_schema() -> None:
    from mcp_ref.client.sampling import tool_results_problem

    pytest.importorskip("jsonschema", reason="outputSchema is checked with the validation extra")

    def params(structured: Any, tools: list[Tool]) -> CreateMessageRequestParams:
        return CreateMessageRequestParams(messages=forecast_exchange(structured), max_tokens=5, tools=tools)

    assert tool_results_problem(params({"celsius": 21.5}, [FORECAST, WEATHER])) is None
    problem = tool_results_problem(params({"celsius": "warm"}, [FORECAST]))
    assert problem is not None and problem.startswith("messages[2]: the structuredContent for forecast")
    assert tool_results_problem(params({}, [FORECAST])) is not None  # "celsius" is required
    # a tool without outputSchema, or none named: nothing to check against
    assert (
        tool_results_problem(params({"celsius": "warm"}, [Tool(name="forecast", input_schema={"type": "object"})]))
        is None
    )
    assert tool_results_problem(params({"celsius": "warm"}, [WEATHER])) is None


@pytest.mark.req("schema#34", "2026-07-28:schema#59")
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize(("structured", "fits"), [({"celsius": 21.5}, True), ({"celsius": "warm"}, False)])
async def test_the_server_does_not_send_a_tool_result_that_misfits_the_output_schema(
    structured: dict[str, Any], fits: bool, era: str
) -> None:
    # (modern: the sampling request is one of the call's input requests; a misfit is refused
    # before it goes into the InputRequiredResult)
    pytest.importorskip("jsonschema", reason="outputSchema is checked with the validation extra")
    asked: list[Any] = []
    results: list[Any] = []

    async def llm(ctx: Any, params: Any) -> CreateMessageResult:
        asked.append(params)
        return CreateMessageResult(role="assistant", model="m", content=TextContent(text="yes"))

    server = Server("forecaster")

    @server.tool()
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = CreateMessageRequestParams(messages=forecast_exchange(structured), max_tokens=100, tools=[FORECAST])
        try:
            results.append(await ctx.sample(params))
        except LocalProtocolError as e:
            results.append(e)
        return "done"

    async with memory_session_pair(server, sampling=llm, sampling_tools=True, era=era) as client:
        await client.call_tool("ask")
    (outcome,) = results
    if fits:
        assert isinstance(outcome, CreateMessageResult) and len(asked) == 1
    else:
        assert isinstance(outcome, LocalProtocolError) and "does not fit its outputSchema" in str(outcome)
        assert asked == []  # nothing reached the client


@pytest.mark.req("client/sampling#9", "client/sampling#10", "schema#31", "schema#32")
async def test_results_must_follow_tool_choice() -> None:
    text = CreateMessageResult(role="assistant", model="m", content=TextContent(text="no tools"))
    tool = CreateMessageResult(
        role="assistant", model="m", stop_reason="toolUse", content=[ToolUseContent(id="1", name="weather", input={})]
    )
    question = [SamplingMessage(role="user", content=TextContent(text="weather?"))]
    for choice, wrong, right in ((ToolChoice(mode="required"), text, tool), (ToolChoice(mode="none"), tool, text)):

        async def answer_wrong(ctx: Any, params: Any, wrong: CreateMessageResult = wrong) -> CreateMessageResult:
            return wrong

        async def answer_right(ctx: Any, params: Any, right: CreateMessageResult = right) -> CreateMessageResult:
            return right

        # our client refuses to send an answer that ignores toolChoice (an internal error for the server) ...
        results = await sample_once(question, choice, sampling=answer_wrong)
        assert isinstance(results[0], MCPError) and results[0].code == ErrorCode.INTERNAL_ERROR
        assert results[0].message == (
            f'the client application\'s sampling result does not fit the request: toolChoice "{choice.mode}"'
            + (" but the result uses no tool" if choice.mode == "required" else " but the result uses a tool")
        )
        # ... and our server refuses one that a careless client sends anyway
        results = await sample_once(
            question, choice, sampling=answer_right, handlers={"sampling/createMessage": answer_wrong}
        )
        assert isinstance(results[0], InvalidAnswer) and f'toolChoice "{choice.mode}"' in str(results[0])
        assert await sample_once(question, choice, sampling=answer_right) == [right]


@pytest.mark.req("client/sampling#4")
async def test_tool_enabled_sampling_is_refused_for_a_2025_06_18_session() -> None:
    # 2025-06-18 has no sampling.tools: tools are refused, never silently stripped from the request
    results: list[Any] = []
    question = [SamplingMessage(role="user", content=TextContent(text="weather?"))]
    async with memory_session_pair(
        messages_server(question, results, ToolChoice(mode="auto")),
        sampling=fake_llm,
        sampling_tools=True,
        protocol_version="2025-06-18",
    ) as client:
        assert client.session.connection.protocol_version == "2025-06-18"
        await client.call_tool("ask")
    (error,) = results
    assert isinstance(error, LocalProtocolError) and "sampling.tools" in str(error)


@pytest.mark.req("client/sampling#17", "client/elicitation#39")
async def test_the_client_rate_limits_what_a_server_asks_of_it() -> None:
    import trio

    from mcp_ref.schema.elicitation import ElicitationRequestedSchema, ElicitRequestFormParams, ElicitResult
    from mcp_ref.session import SessionConfig

    server = Server("asks a lot")
    outcomes: list[str] = []

    @server.tool()
    async def ask_twice(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for _ in range(2):
            try:
                if arguments["what"] == "sample":
                    message = SamplingMessage(role="user", content=TextContent(text="hi"))
                    await ctx.sample(CreateMessageRequestParams(messages=[message], max_tokens=5))
                else:
                    schema = ElicitationRequestedSchema(properties={})
                    await ctx.elicit(ElicitRequestFormParams(message="ok?", requested_schema=schema))
                outcomes.append("answered")
            except MCPError as e:
                outcomes.append(f"{e.code}: {e.message}")
        return "done"

    async def user(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={})

    limits = {"sampling/createMessage": (0.1, 1), "elicitation/create": (0.1, 1)}
    async with memory_session_pair(
        server, sampling=fake_llm, elicitation=user, config=SessionConfig(request_rate_limits=limits), era="legacy"
    ) as client:
        with trio.fail_after(5):
            await client.call_tool("ask_twice", {"what": "sample"})
            await client.call_tool("ask_twice", {"what": "elicit"})
    assert outcomes == [
        "answered",
        "-32600: Invalid Request: too many sampling/createMessage requests (limit 0.1/s); retry later",
        "answered",
        "-32600: Invalid Request: too many elicitation/create requests (limit 0.1/s); retry later",
    ]
