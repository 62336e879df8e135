"""The same application code in both eras: a tool asking the client through ``ctx`` behaves the
same in a 2025-11-25 session (a real server->client request) and in a 2026-07-28 request (an
input request of a multi round-trip request). Each test runs once per era and compares."""

import json
from typing import Any

import pytest
import trio

from mcp_ref import RequestContext, Server
from mcp_ref.basic.lifecycle import Role
from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.errors import (
    CapabilityMissing,
    ErrorCode,
    InvalidAnswer,
    InvalidCallbackAnswer,
    LocalProtocolError,
    MCPError,
    MCPRefError,
    RemoteProtocolError,
)
from mcp_ref.exchange import StatelessEngine
from mcp_ref.schema import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent
from mcp_ref.schema.elicitation import ElicitRequestFormParams, ElicitRequestURLParams
from mcp_ref.schema.lifecycle import ClientCapabilities
from mcp_ref.schema.logging import LoggingMessageNotificationParams
from mcp_ref.schema.sampling import CreateMessageRequestParams
from mcp_ref.testing import memory_session_pair

ERAS = ("legacy", "modern")

FORM = {
    "message": "Who are you?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
}
URL = {"mode": "url", "message": "Connect", "url": "https://example.com/connect", "elicitationId": "el-1"}
SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}


def asking_server(asking: Any, results: list[Any]) -> Server:
    server = Server("asker")

    @server.tool()
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            results.append(await asking(ctx))
        except (LocalProtocolError, MCPError) as e:
            results.append(e)
        return "done"

    return server


async def run(era: str, ask: Any, seen: list[Any] | None = None) -> list[Any]:
    """Call the tool ``ask`` once in ``era``; what the handler got back (or raised)."""
    results: list[Any] = []
    seen = seen if seen is not None else []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params)
        if isinstance(params, ElicitRequestURLParams):
            return ElicitResult(action="accept")
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(ctx: Any, params: Any) -> CreateMessageResult:
        seen.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="hello"), model="m")

    async with memory_session_pair(
        asking_server(ask, results),
        era=era,
        elicitation=elicit,
        elicitation_modes=("form", "url"),
        sampling=sample,
        roots=[Root(uri="file:///work")],
    ) as client:
        with trio.fail_after(10):
            result = await client.call_tool("ask")
        assert not result.is_error, result
    return results


@pytest.mark.parametrize(
    ("ask", "expected"),
    [
        (lambda ctx: ctx.elicit(FORM), ElicitResult(action="accept", content={"name": "Ada"})),
        (lambda ctx: ctx.elicit(URL), ElicitResult(action="accept")),
        (lambda ctx: ctx.request("elicitation/create", FORM), ElicitResult(action="accept", content={"name": "Ada"})),
        (
            lambda ctx: ctx.sample(SAMPLE),
            CreateMessageResult(role="assistant", content=TextContent(text="hello"), model="m"),
        ),
        (
            lambda ctx: ctx.request("sampling/createMessage", SAMPLE),
            CreateMessageResult(role="assistant", content=TextContent(text="hello"), model="m"),
        ),
    ],
    ids=["elicit-form", "elicit-url", "request-elicit", "sample", "request-sample"],
)
@pytest.mark.parametrize("era", ERAS)
async def test_a_mapping_in_wire_form_is_taken_in_both_eras(era: str, ask: Any, expected: Any) -> None:
    seen: list[Any] = []
    assert await run(era, ask, seen) == [expected]
    # the client's callback gets the model object, whatever form the server's code used
    (params,) = seen
    assert isinstance(params, (ElicitRequestFormParams, ElicitRequestURLParams, CreateMessageRequestParams))


@pytest.mark.parametrize("era", ERAS)
async def test_roots_asked_for_with_empty_params_in_both_eras(era: str) -> None:
    (result,) = await run(era, lambda ctx: ctx.request("roots/list", {}))
    assert result == ListRootsResult(roots=[Root(uri="file:///work")])


@pytest.mark.parametrize("era", ERAS)
async def test_every_form_returns_the_same_types_in_both_eras(era: str) -> None:
    async def ask(ctx: RequestContext) -> list[str]:
        answers = [
            await ctx.elicit(FORM),
            await ctx.sample(SAMPLE),
            await ctx.list_roots(),
            *(await ctx.ask_all({"e": ("elicitation/create", FORM), "s": ("sampling/createMessage", SAMPLE)})).values(),
        ]
        return [type(a).__name__ for a in answers]

    assert await run(era, ask) == [
        ["ElicitResult", "CreateMessageResult", "ListRootsResult", "ElicitResult", "CreateMessageResult"]
    ]


@pytest.mark.req("client/elicitation#13", "2026-07-28:client/elicitation#14")
@pytest.mark.parametrize(
    "ask",
    [
        lambda ctx: ctx.elicit({"message": "no schema"}),
        lambda ctx: ctx.elicit({**URL, "url": "javascript:alert(1)"}),
        lambda ctx: ctx.sample({"messages": "not a list", "maxTokens": 1}),
    ],
    ids=["form-without-schema", "url-that-is-not-one", "sample-without-messages"],
)
@pytest.mark.parametrize("era", ERAS)
async def test_a_mapping_that_is_not_valid_params_is_refused_before_the_client_is_asked(era: str, ask: Any) -> None:
    seen: list[Any] = []
    (error,) = await run(era, ask, seen)
    assert isinstance(error, LocalProtocolError) and error.code == ErrorCode.INVALID_PARAMS
    assert seen == []  # nothing reached the client


async def extra_field(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada", "shoe_size": 43})


@pytest.mark.req("client/elicitation#56", "2026-07-28:client/elicitation#45")
@pytest.mark.parametrize("era", ERAS)
async def test_fields_the_form_did_not_ask_for_never_leave_the_client(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    results: list[Any] = []
    async with memory_session_pair(
        asking_server(lambda ctx: ctx.elicit(FORM), results), era=era, elicitation=extra_field
    ) as client:
        assert not (await client.call_tool("ask")).is_error
    assert results == [ElicitResult(action="accept", content={"name": "Ada"})]
    assert "did not ask for are not sent: ['shoe_size']" in caplog.text


@pytest.mark.req("client/elicitation#57", "2026-07-28:client/elicitation#46")
@pytest.mark.parametrize("era", ERAS)
async def test_a_server_ignores_fields_it_did_not_ask_for_from_any_client(era: str) -> None:
    results: list[Any] = []
    server = asking_server(lambda ctx: ctx.elicit(FORM), results)
    answer = {"action": "accept", "content": {"name": "Ada", "shoe_size": 43}}
    got = await answer_from_a_careless_client(era, server, answer)
    if era == "legacy":
        assert not got.is_error
    else:
        assert got["result"]["content"] == [{"type": "text", "text": "done"}]
    assert results == [ElicitResult(action="accept", content={"name": "Ada"})]


async def wrong_type(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": 42})


@pytest.mark.req("client/elicitation#56", "2026-07-28:client/elicitation#45")
@pytest.mark.parametrize("era", ERAS)
async def test_an_answer_that_does_not_fit_never_leaves_the_client_and_the_revision_says_who_hears(
    era: str,
) -> None:
    """A callback answering against the form: nothing of it is sent, in either era. In 2025 the
    waiting server is answered with an error naming the field; in 2026 nobody waits (input
    responses cannot carry an error), so the call gives up at the client with the same reason."""
    results: list[Any] = []
    reason = "the client application's elicitation answer does not fit the request: name: expected a string"
    async with memory_session_pair(
        asking_server(lambda ctx: ctx.elicit(FORM), results), era=era, elicitation=wrong_type
    ) as client:
        if era == "legacy":
            assert not (await client.call_tool("ask")).is_error
            (error,) = results
            assert isinstance(error, MCPError) and error.code == ErrorCode.INTERNAL_ERROR
            assert error.message == reason and error.data == {"problems": ["name: expected a string"]}
        else:
            with pytest.raises(InvalidCallbackAnswer) as raised:
                await client.call_tool("ask")
            assert isinstance(raised.value, MCPRefError) and str(raised.value) == reason
            assert raised.value.problems == ["name: expected a string"] and raised.value.method == "elicitation/create"
            assert results == []


@pytest.mark.parametrize("era", ERAS)
async def test_content_with_a_decline_never_leaves_the_client_either(era: str) -> None:
    async def decline_with_content(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="decline", content={"name": "Ada"})

    results: list[Any] = []
    async with memory_session_pair(
        asking_server(lambda ctx: ctx.elicit(FORM), results), era=era, elicitation=decline_with_content
    ) as client:
        if era == "legacy":
            await client.call_tool("ask")
            assert "only sent with action 'accept', not 'decline'" in results[0].message
        else:
            with pytest.raises(InvalidCallbackAnswer, match="only sent with action 'accept', not 'decline'"):
                await client.call_tool("ask")


async def answer_from_a_careless_client(era: str, server: Server, answer: dict[str, Any]) -> Any:
    """What a client without our guard gets for tools/call ``ask`` when it answers the tool's
    elicitation with ``answer`` (a 2025 response, or the 2026 retry's inputResponses entry)."""
    if era == "legacy":

        async def careless(ctx: Any, params: Any) -> ElicitResult:
            return ElicitResult(action=answer["action"], content=answer.get("content"))

        async with memory_session_pair(
            server, era="legacy", elicitation=extra_field, handlers={"elicitation/create": careless}
        ) as client:
            try:
                return await client.call_tool("ask")
            except MCPError as e:
                return e
    client_end, server_end = memory_channel_pair()
    engine = StatelessEngine(Role.CLIENT, capabilities=ClientCapabilities(elicitation={}))
    params = {"name": "ask", "arguments": {}}
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        replies = []
        for options in ({}, {"input_responses": {"elicitation-1": answer}}):
            if replies:
                options["request_state"] = replies[-1]["result"]["requestState"]
            rid, data = engine.send_request("tools/call", params, **options)
            await client_end.send(data)
            with trio.fail_after(10):
                replies.append(json.loads(await client_end.receive()))
        nursery.cancel_scope.cancel()
    return replies[-1]


def catching_server(caught: list[Any]) -> Server:
    """A tool written for 2025: it catches RemoteProtocolError (a 2025 response that does not decode
    is a DecodeError, one too)."""
    server = Server("strict")

    @server.tool()
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            await ctx.elicit(FORM)
        except RemoteProtocolError as e:
            caught.append(e)
        return "done"

    return server


@pytest.mark.req("client/elicitation#57", "2026-07-28:client/elicitation#46", "2026-07-28:basic/patterns/mrtr#29")
@pytest.mark.parametrize("era", ERAS)
async def test_an_answer_that_does_not_fit_reaches_the_handler_as_the_same_error_in_both_eras(era: str) -> None:
    """A tool written for 2025 (``except RemoteProtocolError``) runs unchanged in 2026."""
    caught: list[Any] = []
    await answer_from_a_careless_client(era, catching_server(caught), {"action": "accept", "content": {"name": 42}})
    (error,) = caught
    assert type(error) is InvalidAnswer and error.code == ErrorCode.INVALID_PARAMS
    assert error.message == (
        "the client's elicitation answer does not match the requested schema: name: expected a string"
    )
    assert error.data == {"problems": ["name: expected a string"]}
    assert error.input_key == (None if era == "legacy" else "elicitation-1")

    # not caught, the request is answered with the reason: the 2026 retry's params are wrong (-32602,
    # naming the entry); the 2025 call's own params were fine (-32603)
    server = Server("reckless")

    @server.tool(name="ask")
    async def ask_without_catching(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.elicit(FORM)
        return "never"

    got = await answer_from_a_careless_client(era, server, {"action": "accept", "content": {"name": 42}})
    if era == "legacy":
        assert isinstance(got, MCPError) and got.code == ErrorCode.INTERNAL_ERROR
        assert got.message == error.message
    else:
        assert got["error"]["code"] == ErrorCode.INVALID_PARAMS
        assert got["error"]["message"] == f"Invalid params: inputResponses['elicitation-1']: {error.message}"


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#28", "2026-07-28:basic/patterns/mrtr#29")
async def test_an_answer_that_does_not_parse_is_a_remote_protocol_error_as_in_2025() -> None:
    caught: list[Any] = []
    await answer_from_a_careless_client("modern", catching_server(caught), {"action": "maybe"})
    (error,) = caught
    assert isinstance(error, InvalidAnswer) and error.input_key == "elicitation-1"
    assert error.message.startswith("the client's answer does not parse: ")


@pytest.mark.req("2026-07-28:basic/index#57")
@pytest.mark.parametrize("era", ERAS)
async def test_a_handler_doing_without_a_capability_runs_the_same_in_both_eras(era: str) -> None:
    server = Server("frugal")

    @server.tool()
    async def polite(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        try:
            answer = await ctx.elicit(FORM)
        except CapabilityMissing as e:
            return f"did without ({e.code})"
        return str(answer.content)

    @server.tool()
    async def insistent(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.elicit(FORM)
        return "never"

    async with memory_session_pair(server, era=era) as client:  # a client that cannot elicit
        text = (await client.call_tool("polite")).content[0].text
        if era == "legacy":
            assert text == f"did without ({ErrorCode.METHOD_NOT_FOUND})"
            # uncaught: a tool execution error the model can read
            result = await client.call_tool("insistent")
            assert result.is_error and "does not offer" in result.content[0].text
        else:
            assert text == "did without (-32021)"
            # uncaught: the request fails with -32021, naming the capability (2026-07-28 basic/index#57)
            with pytest.raises(MCPError) as caught:
                await client.call_tool("insistent")
            assert caught.value.code == -32021
            assert caught.value.data == {"requiredCapabilities": {"elicitation": {}}}


@pytest.mark.req("2026-07-28:server/utilities/logging#4")
@pytest.mark.parametrize("era", ERAS)
async def test_notify_sends_log_messages_and_progress_as_log_and_progress_do_in_both_eras(era: str) -> None:
    server = Server("notifier")
    refused: list[str] = []

    @server.tool()
    async def chatty(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.notify("notifications/message", LoggingMessageNotificationParams(level="debug", data="quiet"))
        await ctx.notify("notifications/message", {"level": "error", "data": "loud"})
        await ctx.notify("notifications/progress", {"progress": 1, "total": 2})
        for bad in (None, {"level": "shouting", "data": 1}):
            try:
                await ctx.notify("notifications/message", bad)
            except LocalProtocolError as e:
                refused.append(f"{e.code}")
        return "done"

    logs: list[Any] = []
    reports: list[tuple[float, float | None]] = []

    async def on_log(params: Any) -> None:
        logs.append((params.level, params.data))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total))

    options: dict[str, Any] = {"log_level": "warning"} if era == "modern" else {}
    async with memory_session_pair(server, era=era, on_log=on_log, **options) as client:
        if era == "legacy":
            await client.set_logging_level("warning")
        assert (await client.call_tool("chatty", progress=on_progress)).content[0].text == "done"
        with trio.fail_after(5):
            while not logs:
                await trio.sleep(0.01)
    # below the client's level: not sent, in either era (it used to go out in a 2025 session)
    assert logs == [("error", "loud")]
    assert reports == [(1, 2)]
    assert refused == [str(ErrorCode.INVALID_PARAMS)] * 2


@pytest.mark.req("client/elicitation#12")
@pytest.mark.parametrize("era", ERAS)
async def test_a_url_elicitation_without_an_id_runs_in_both_eras(era: str) -> None:
    """2026-07-28 URL elicitations have no id; the same call in a 2025 session, where the id is
    required, gets a unique one of its own."""
    no_id = {k: v for k, v in URL.items() if k != "elicitationId"}
    seen: list[Any] = []
    for _ in range(2):
        assert await run(era, lambda ctx: ctx.elicit(no_id), seen) == [ElicitResult(action="accept")]
    ids = [params.elicitation_id for params in seen]
    if era == "legacy":
        assert all(isinstance(i, str) and len(i) >= 16 for i in ids) and ids[0] != ids[1]
    else:
        assert ids == [None, None]
