"""What a handler asks of the client through its context: elicit_form, can_elicit,
can_sample, and a nested request the client cannot take, which a tool reports to
the model as a tool error instead of an internal error."""

from typing import Any

import pytest

from mcp_ref import CapabilityMissing, MCPError, RequestContext, Server, memory_session_pair
from mcp_ref.schema import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitResult,
    SamplingMessage,
    TextContent,
    encode,
)


def server_recording(seen: list[Any]) -> Server:
    server = Server("context")

    @server.tool()
    async def book(ctx: RequestContext) -> str:
        answer = await ctx.elicit_form(
            "Who travels?",
            {"name": {"type": "string"}, "seats": {"type": "integer", "default": 1}},
        )
        return f"{answer.action}: {answer.content}"

    @server.tool()
    async def abilities(ctx: RequestContext) -> str:
        seen.append(
            {
                "form": ctx.can_elicit(),
                "url": ctx.can_elicit("url"),
                "sample": ctx.can_sample(),
                "sample_tools": ctx.can_sample(tools=True),
                "sample_context": ctx.can_sample(context=True),
            }
        )
        return "ok"

    @server.tool()
    async def summarise(ctx: RequestContext) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text="hi"))], max_tokens=10
        )
        result = await ctx.sample(params)
        return str(result.model)

    @server.tool()
    async def bad_form(ctx: RequestContext) -> str:
        try:
            await ctx.elicit_form("Address?", {"address": {"type": "object"}})
        except ValueError as e:
            seen.append(str(e))
        return "refused"

    @server.prompt()
    async def sampled_prompt(ctx: RequestContext) -> str:
        await ctx.sample(
            CreateMessageRequestParams(
                messages=[SamplingMessage(role="user", content=TextContent(text="hi"))], max_tokens=10
            )
        )
        return "never"

    return server


async def test_elicit_form_asks_with_the_fields_given_and_returns_the_answer() -> None:
    asked: list[ElicitRequestFormParams] = []

    async def user(ctx: Any, params: ElicitRequestFormParams) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept", content={"name": "Ada", "seats": 2})

    async with memory_session_pair(server_recording([]), elicitation=user, era="legacy") as client:
        result = await client.call_tool("book")
    assert result.content == [TextContent(text="accept: {'name': 'Ada', 'seats': 2}")]
    (params,) = asked
    assert params.message == "Who travels?"
    # a field with a default is optional, the others required
    assert params.requested_schema.required == ["name"]
    assert set(params.requested_schema.properties) == {"name", "seats"}


async def test_elicit_form_refuses_a_field_the_form_mode_cannot_ask_for_before_sending() -> None:
    seen: list[Any] = []
    asked: list[Any] = []

    async def user(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="decline")

    async with memory_session_pair(server_recording(seen), elicitation=user, era="legacy") as client:
        await client.call_tool("bad_form")
    assert asked == []
    assert seen and seen[0].startswith("elicit_form: not a form the client can show: ")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, {"form": False, "url": False, "sample": False, "sample_tools": False, "sample_context": False}),
        (
            {"elicitation_modes": ("form",), "sampling_tools": True},
            {"form": True, "url": False, "sample": True, "sample_tools": True, "sample_context": False},
        ),
        (
            {"elicitation_modes": ("url",), "sampling_context": True},
            {"form": False, "url": True, "sample": True, "sample_tools": False, "sample_context": True},
        ),
    ],
)
async def test_can_elicit_and_can_sample_follow_the_client_capabilities(
    options: dict[str, Any], expected: dict[str, bool]
) -> None:
    async def handler(ctx: Any, params: Any) -> Any:
        raise AssertionError("not asked")

    if options:
        options = {**options, "elicitation": handler, "sampling": handler}
    seen: list[Any] = []
    async with memory_session_pair(server_recording(seen), **options, era="legacy") as client:
        await client.call_tool("abilities")
    assert seen == [expected]


@pytest.mark.req("basic/lifecycle#14")
async def test_a_nested_request_the_client_cannot_take_is_a_tool_error_the_model_reads() -> None:
    async with memory_session_pair(server_recording([]), era="legacy") as client:
        result = await client.call_tool("summarise")
        assert result.is_error
        assert result.content == [
            TextContent(
                text="Tool 'summarise' needs something this client does not offer: "
                "the peer did not declare the sampling capability needed for sampling/createMessage"
            )
        ]
        book = await client.call_tool("book")  # elicitation alike; the session goes on
        assert book.is_error and "elicitation capability" in book.content[0].text  # type: ignore[union-attr]


async def test_the_same_from_a_prompt_stays_an_internal_error() -> None:
    # only a tool has a result the model reads; elsewhere it is the server's own fault
    async with memory_session_pair(server_recording([]), era="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("sampled_prompt")
    assert caught.value.code == -32603


async def test_with_the_capability_the_nested_request_goes_through() -> None:
    async def llm(ctx: Any, params: Any) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", model="m1", content=TextContent(text="hello"))

    async with memory_session_pair(server_recording([]), sampling=llm, era="legacy") as client:
        result = await client.call_tool("summarise")
    assert result.content == [TextContent(text="m1")] and not result.is_error


def test_capability_missing_is_a_local_protocol_error() -> None:
    from mcp_ref import LocalProtocolError

    assert issubclass(CapabilityMissing, LocalProtocolError)


FORM_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}


@pytest.mark.parametrize(
    ("args", "kwargs", "required"),
    [
        ((FORM_SCHEMA,), {}, []),  # a whole schema is taken as it is: without "required" no field is
        (({**FORM_SCHEMA, "required": ["age"]},), {}, ["age"]),
        ((FORM_SCHEMA,), {"required": ["name"]}, ["name"]),
        ((FORM_SCHEMA["properties"],), {}, ["name", "age"]),  # the fields alone: those without a default
    ],
    ids=["whole-schema", "whole-schema-required", "whole-schema-required-argument", "fields"],
)
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_elicit_form_takes_the_fields_or_a_whole_object_schema_in_both_eras(
    era: str, args: tuple[Any, ...], kwargs: dict[str, Any], required: list[str]
) -> None:
    asked: list[ElicitRequestFormParams] = []
    server = Server("forms")

    @server.tool()
    async def ask(ctx: RequestContext) -> str:
        answer = await ctx.elicit_form("Who?", *args, **kwargs)
        return f"{answer.action}: {answer.content}"

    async def user(ctx: Any, params: ElicitRequestFormParams) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept", content={"name": "Ada", "age": 36})

    async with memory_session_pair(server, elicitation=user, era=era) as client:
        result = await client.call_tool("ask")
    assert result.content == [TextContent(text="accept: {'name': 'Ada', 'age': 36}")]
    assert [encode(p.requested_schema) for p in asked] == [
        {"type": "object", "properties": FORM_SCHEMA["properties"], "required": required}
    ]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (
            ({"type": "object", "required": ["name"]},),
            {},
            "elicit_form: field 'type' is 'object', not a JSON Schema object; pass the form's fields",
        ),
        (({"name": "string"},), {}, "elicit_form: field 'name' is 'string', not a JSON Schema object"),
        (
            ({**FORM_SCHEMA, "required": ["name"]},),
            {"required": ["age"]},
            "elicit_form: `required` given twice, in the schema and as an argument",
        ),
    ],
    ids=["object-schema-without-properties", "a-type-name-for-a-schema", "required-twice"],
)
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_elicit_form_refuses_what_is_neither_fields_nor_a_schema_with_a_clear_error_before_sending(
    era: str, args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    asked: list[Any] = []
    errors: list[ValueError] = []
    server = Server("forms")

    @server.tool()
    async def ask(ctx: RequestContext) -> str:
        try:
            await ctx.elicit_form("Who?", *args, **kwargs)
        except ValueError as e:
            errors.append(e)
        return "refused"

    async def user(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="decline")

    async with memory_session_pair(server, elicitation=user, era=era) as client:
        await client.call_tool("ask")
    assert asked == []
    (error,) = errors
    assert str(error).startswith(message)
