"""client/elicitation: form and URL modes, validation, defaults, completion, -32042."""

import json
from typing import Any

import pytest
import trio

from mcp_ref.client.elicitation import URLElicitationRequired, form_defaults, validate_form_content
from mcp_ref.errors import ErrorCode, LocalProtocolError, MCPError, ProtocolError, RemoteProtocolError
from mcp_ref.schema._converter import decode
from mcp_ref.schema.elicitation import (
    ElicitationCompleteNotificationParams,
    ElicitationRequestedSchema,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
)
from mcp_ref.session import RequestContext, Server
from mcp_ref.testing import memory_session_pair

SCHEMA = decode(
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "default": "Ada"},
            "age": {"type": "integer", "minimum": 0, "default": 36},
            "email": {"type": "string", "format": "email"},
            "color": {"type": "string", "enum": ["red", "green"]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
            "subscribe": {"type": "boolean", "default": False},
        },
        "required": ["name"],
    },
    ElicitationRequestedSchema,
)


def elicit_server(results: list[Any]) -> Server:
    server = Server("elicitor")

    @server.tool()
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        if arguments.get("mode") == "url":
            params: Any = ElicitRequestURLParams(
                message="Connect your account", url="https://example.com/connect", elicitation_id="el-1"
            )
        else:
            params = ElicitRequestFormParams(message="Who are you?", requested_schema=SCHEMA)
        try:
            results.append(await ctx.elicit(params))
        except (MCPError, ProtocolError) as e:
            results.append(e)
        return "done"

    @server.tool()
    async def needs_auth(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise URLElicitationRequired(
            [ElicitRequestURLParams(message="Authorize", url="https://example.com/auth", elicitation_id="el-2")]
        )

    @server.tool()
    async def finish(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        if arguments.get("raw"):
            # a careless server: the notification written past our engine's checks
            note = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {}}
            note["params"] = {"elicitationId": arguments["id"]}
            await ctx.session.send_raw(json.dumps(note).encode())
            return "sent raw"
        try:
            await ctx.session.notify(
                "notifications/elicitation/complete",
                ElicitationCompleteNotificationParams(elicitation_id=arguments["id"]),
            )
        except LocalProtocolError as e:
            return f"refused: {e}"
        return "sent"

    return server


def texts(result: Any) -> str:
    return " ".join(getattr(b, "text", "") for b in result.content)


async def accept_defaults(ctx: Any, params: Any) -> ElicitResult:
    if isinstance(params, ElicitRequestURLParams):
        return ElicitResult(action="accept")
    return ElicitResult(action="accept", content=form_defaults(params.requested_schema))


@pytest.mark.req("client/elicitation#4", "client/elicitation#9", "client/elicitation#10", "client/elicitation#11")
async def test_form_mode_with_defaults() -> None:
    results: list[Any] = []
    async with memory_session_pair(elicit_server(results), elicitation=accept_defaults, era="legacy") as client:
        caps = client.session.connection.capabilities
        assert caps.elicitation is not None and caps.elicitation.form == {}  # type: ignore[union-attr]
        await client.call_tool("ask")
    assert results == [ElicitResult(action="accept", content={"name": "Ada", "age": 36, "subscribe": False})]


@pytest.mark.req("client/elicitation#56", "client/elicitation#57")
def test_form_validation() -> None:
    assert validate_form_content(SCHEMA, {"name": "Bo", "email": "bo@example.com", "tags": ["a"]}) == []
    problems = validate_form_content(
        SCHEMA, {"age": -1, "email": "nope", "color": "blue", "tags": ["a", "b", "c"], "x": 1}
    )
    text = "; ".join(problems)
    for expected in (
        "name: required",
        "age: below",
        "email: not a valid email",
        "color: not one of",
        "tags:",
    ):
        assert expected in text
    # a field the form did not ask for is not a fault of the answer: it is left out (asked_only)
    assert "x:" not in text


async def test_invalid_answers_never_leave_the_client() -> None:
    results: list[Any] = []

    async def bad_answer(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"age": "old"})

    async with memory_session_pair(elicit_server(results), elicitation=bad_answer, era="legacy") as client:
        await client.call_tool("ask")
    assert isinstance(results[0], MCPError) and results[0].code == ErrorCode.INTERNAL_ERROR


@pytest.mark.req("client/elicitation#57")
async def test_the_server_validates_what_the_client_accepted() -> None:
    results: list[Any] = []

    async def careless(ctx: Any, params: Any) -> ElicitResult:
        # answers past the client's own guard, as a careless client would
        return ElicitResult(action="accept", content={"age": -5, "junk": "zzz"})

    async with memory_session_pair(
        elicit_server(results), elicitation=accept_defaults, handlers={"elicitation/create": careless}, era="legacy"
    ) as client:
        assert texts(await client.call_tool("ask")) == "done"
    (error,) = results
    assert isinstance(error, RemoteProtocolError) and error.code == ErrorCode.INVALID_PARAMS
    assert "name: required" in str(error) and "age: below 0" in str(error) and "junk" not in str(error)
    assert error.data == {"problems": ["name: required", "age: below 0"]}


@pytest.mark.req("client/elicitation#5", "client/elicitation#6", "client/elicitation#34")
async def test_modes_must_be_declared() -> None:
    results: list[Any] = []
    async with memory_session_pair(elicit_server(results), elicitation=accept_defaults, era="legacy") as client:
        await client.call_tool("ask", {"mode": "url"})
    # the server's engine refuses to send URL mode to a form-only client (elicitation#6)
    assert isinstance(results[0], (LocalProtocolError, MCPError))
    with pytest.raises(ValueError):
        async with memory_session_pair(
            elicit_server(results), elicitation=accept_defaults, elicitation_modes=(), era="legacy"
        ):
            pass


@pytest.mark.req(
    "client/elicitation#12",
    "client/elicitation#13",
    "client/elicitation#14",
    "client/elicitation#16",
    "client/elicitation#17",
)
async def test_url_mode_and_completion() -> None:
    results: list[Any] = []
    completed: list[str] = []
    got = trio.Event()

    async def on_complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)
        got.set()

    async with memory_session_pair(
        elicit_server(results),
        elicitation=accept_defaults,
        elicitation_modes=("form", "url"),
        on_elicitation_complete=on_complete,
        era="legacy",
    ) as client:
        # our server refuses to complete an elicitation it never started in this session (#16)
        refused = await client.call_tool("finish", {"id": "unknown-id"})
        assert texts(refused).startswith("refused: no URL elicitation 'unknown-id'")
        await client.call_tool("ask", {"mode": "url"})
        assert texts(await client.call_tool("finish", {"id": "el-1"})) == "sent"
        with trio.fail_after(5):
            await got.wait()
        # completed once: a second completion is refused by the server ...
        assert texts(await client.call_tool("finish", {"id": "el-1"})).startswith("refused")
        # ... and ignored by the client when a careless server sends it anyway (#17), as is an unknown id
        assert texts(await client.call_tool("finish", {"id": "el-1", "raw": True})) == "sent raw"
        assert texts(await client.call_tool("finish", {"id": "unknown-id", "raw": True})) == "sent raw"
        await client.ping()
    assert results == [ElicitResult(action="accept")]
    assert completed == ["el-1"]


@pytest.mark.req("client/elicitation#16")
async def test_ids_announced_in_a_url_elicitation_required_error_may_be_completed() -> None:
    async with memory_session_pair(
        elicit_server([]), elicitation_modes=("form", "url"), elicitation=accept_defaults, era="legacy"
    ) as client:
        with pytest.raises(MCPError):
            await client.call_tool("needs_auth")
        assert texts(await client.call_tool("finish", {"id": "el-2"})) == "sent"


@pytest.mark.req("client/elicitation#15", "client/elicitation#16")
async def test_only_the_session_that_was_asked_gets_the_completion() -> None:
    server = elicit_server([])
    options: dict[str, Any] = {"elicitation": accept_defaults, "elicitation_modes": ("form", "url")}
    async with (
        memory_session_pair(server, **options, era="legacy") as first,
        memory_session_pair(server, **options, era="legacy") as second,
    ):
        await first.call_tool("ask", {"mode": "url"})
        assert texts(await second.call_tool("finish", {"id": "el-1"})).startswith("refused")
        assert texts(await first.call_tool("finish", {"id": "el-1"})) == "sent"


@pytest.mark.req("client/elicitation#13")
@pytest.mark.parametrize("url", ["not a url", "https:foo", "javascript:alert(1)", "javascript://example.com/%0a"])
async def test_a_url_elicitation_with_an_invalid_url_is_never_sent(url: str) -> None:
    server = Server("bad-url")
    refused: list[LocalProtocolError] = []

    @server.tool()
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = ElicitRequestURLParams(message="Go", url=url, elicitation_id="bad")
        with pytest.raises(LocalProtocolError) as info:
            await ctx.elicit(params)
        refused.append(info.value)
        return "refused"

    asked: list[Any] = []

    async def handler(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept")

    async with memory_session_pair(
        server, elicitation=handler, elicitation_modes=("form", "url"), era="legacy"
    ) as client:
        assert texts(await client.call_tool("ask")) == "refused"
    assert not asked
    assert refused[0].code == ErrorCode.INVALID_PARAMS and repr(url) in str(refused[0])


@pytest.mark.req(
    "client/elicitation#20",
    "client/elicitation#21",
    "client/elicitation#22",
    "client/elicitation#23",
    "client/elicitation#33",
)
async def test_url_elicitation_required_error() -> None:
    async with memory_session_pair(elicit_server([]), era="legacy") as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("needs_auth")
    assert info.value.code == ErrorCode.URL_ELICITATION_REQUIRED == -32042
    assert info.value.data == {
        "elicitations": [
            {"mode": "url", "message": "Authorize", "elicitationId": "el-2", "url": "https://example.com/auth"}
        ]
    }
    # the caller gets the typed error with the elicitations decoded, ready to open
    assert isinstance(info.value, URLElicitationRequired)
    assert [(e.elicitation_id, e.url) for e in info.value.elicitations] == [("el-2", "https://example.com/auth")]
    with pytest.raises(ValueError):
        URLElicitationRequired([])


@pytest.mark.req("client/elicitation#22", "client/elicitation#23")
@pytest.mark.parametrize(
    "data",
    [None, {}, {"elicitations": []}, {"elicitations": [{"mode": "url", "message": "m"}]}, "text"],
)
def test_a_malformed_url_elicitation_required_error_stays_a_plain_mcp_error(data: Any) -> None:
    from mcp_ref.client.elicitation import received_error

    error = received_error(-32042, "URL elicitation required", data)
    assert type(error) is MCPError and error.code == -32042 and error.data == data
    good = {"elicitations": [{"mode": "url", "message": "m", "elicitationId": "e1", "url": "https://a.example/x"}]}
    typed = received_error(-32042, "needs consent", {**good, "vendor": 1})
    assert isinstance(typed, URLElicitationRequired) and typed.message == "needs consent"
    assert typed.data == {**good, "vendor": 1}  # the peer's data as sent
    assert type(received_error(-32602, "bad", good)) is MCPError


@pytest.mark.req("client/elicitation#7", "client/elicitation#8", "client/elicitation#9")
def test_mode_is_optional_for_form_mode() -> None:
    from mcp_ref.schema.elicitation import ElicitRequest

    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
    }
    decoded = decode(request, ElicitRequest)
    assert isinstance(decoded.params, ElicitRequestFormParams) and decoded.params.mode is None
    request["params"] = {"mode": "url", "message": "m", "url": "https://example.com", "elicitationId": "e"}
    assert isinstance(decode(request, ElicitRequest).params, ElicitRequestURLParams)
    request["params"] = {"mode": "url", "message": "m"}  # url and elicitationId are required in URL mode
    from mcp_ref.errors import DecodeError

    with pytest.raises(DecodeError):
        decode(request, ElicitRequest)


async def test_decline_and_cancel_reach_the_server_without_content() -> None:
    for action in ("decline", "cancel"):
        results: list[Any] = []

        async def answer(ctx: Any, params: Any, action: Any = action) -> ElicitResult:
            return ElicitResult(action=action)

        async with memory_session_pair(elicit_server(results), elicitation=answer, era="legacy") as client:
            assert texts(await client.call_tool("ask")) == "done"
        assert results == [ElicitResult(action=action)]


async def test_content_with_decline_never_leaves_the_client() -> None:
    results: list[Any] = []

    async def confused(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="decline", content={"name": "Ada"})

    async with memory_session_pair(elicit_server(results), elicitation=confused, era="legacy") as client:
        await client.call_tool("ask")
    # the application's answer breaks the rule: an internal error for the server, nothing leaked
    (error,) = results
    assert isinstance(error, MCPError) and error.code == ErrorCode.INTERNAL_ERROR
    assert "Ada" not in error.message


async def raw_handshake(server_end: Any, capabilities: dict[str, Any], version: str = "2025-11-25") -> None:
    """A raw server's part of the handshake: answer initialize, then take notifications/initialized."""
    init = json.loads(await server_end.receive())
    result = {
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": {"name": "raw", "version": "1"},
    }
    await server_end.send(json.dumps({"jsonrpc": "2.0", "id": init["id"], "result": result}).encode())
    assert json.loads(await server_end.receive())["method"] == "notifications/initialized"


async def raw_server_asks(
    request_params: dict[str, Any], modes: tuple[str, ...], version: str = "2025-11-25"
) -> tuple[dict[str, Any], list[Any]]:
    """A raw server sends elicitation/create to our client; returns the client's reply and what the handler saw."""
    from mcp_ref.basic.transports.memory import memory_channel_pair
    from mcp_ref.session import open_session

    asked: list[Any] = []

    async def handler(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept")

    client_end, server_end = memory_channel_pair()
    reply: dict[str, Any] = {}
    replied = trio.Event()

    async def raw_server() -> None:
        await raw_handshake(server_end, {}, version)
        request = {"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": request_params}
        await server_end.send(json.dumps(request).encode())
        reply.update(json.loads(await server_end.receive()))
        replied.set()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(raw_server)
            async with open_session(client_end, elicitation=handler, elicitation_modes=modes, era="legacy"):
                await replied.wait()
            nursery.cancel_scope.cancel()
    return reply, asked


@pytest.mark.req("client/elicitation#34")
async def test_the_client_refuses_a_mode_it_did_not_declare(autojump_clock: trio.abc.Clock) -> None:
    url_request = {"mode": "url", "message": "Go", "url": "https://example.com/x", "elicitationId": "u1"}
    reply, asked = await raw_server_asks(url_request, ("form",))
    assert reply["id"] == "e1" and reply["error"]["code"] == ErrorCode.INVALID_PARAMS == -32602
    assert "URL mode" in reply["error"]["message"] and asked == []
    form_request = {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}
    reply, asked = await raw_server_asks(form_request, ("url",))
    assert reply["error"]["code"] == -32602 and "form mode" in reply["error"]["message"] and asked == []


#: not valid URLs: no scheme, a scheme and no host (https:foo), blanks or controls inside, a bad port
INVALID_URLS = [
    "not a url",
    "",
    "/relative/path",
    "//example.com/no-scheme",
    "https:foo",
    "javascript:alert(1)",
    "https://exa mple.com/",
    "https://example.com/\nX",
    "https://example.com/\x00",
    "https://example.com:99999/",
    "1https://example.com/",
]
#: valid URLs that a user is never sent to: they run code or read this machine
NEVER_URLS = ["javascript://example.com/%0aalert(1)", "data://example.com/x", "file://host/etc/passwd"]
VALID_URLS = ["https://example.com/verify?x=1#top", "http://127.0.0.1:8080/cb", "mailto:a@example.com", "urn:isbn:1"]


@pytest.mark.req("client/elicitation#13")
def test_what_a_valid_url_is() -> None:
    from mcp_ref.basic.url_elicitation import check_elicitation_url, check_url

    for url in INVALID_URLS:
        with pytest.raises(ValueError, match="not a valid absolute URL"):
            check_url(url)
    for url in NEVER_URLS:
        check_url(url)  # (valid URLs: a form's "uri" field may hold one)
        with pytest.raises(ValueError, match="never one to send a user to"):
            check_elicitation_url(url)
    for url in VALID_URLS:
        check_elicitation_url(url)


@pytest.mark.req("client/elicitation#13")
@pytest.mark.parametrize("url", INVALID_URLS + NEVER_URLS)
async def test_the_client_refuses_a_url_elicitation_with_an_invalid_url(
    url: str, autojump_clock: trio.abc.Clock
) -> None:
    bad = {"mode": "url", "message": "Go", "url": url, "elicitationId": "u1"}
    reply, asked = await raw_server_asks(bad, ("form", "url"))
    assert reply["error"]["code"] == -32602
    assert "not a valid absolute URL" in reply["error"]["message"] or "never one" in reply["error"]["message"]
    assert asked == []


@pytest.mark.req("client/elicitation#17")
async def test_declined_url_elicitations_are_forgotten() -> None:
    from mcp_ref.client.elicitation import ElicitationGuard

    async def decline(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    async def fail(ctx: Any, params: Any) -> ElicitResult:
        raise RuntimeError("the UI went away")

    async def accept(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept")

    def url(i: str) -> ElicitRequestURLParams:
        return ElicitRequestURLParams(message="m", url="https://example.com", elicitation_id=i)

    guard = ElicitationGuard(decline, url=True)
    await guard(None, url("d"))
    guard.handler = fail
    with pytest.raises(RuntimeError):
        await guard(None, url("f"))
    guard.handler = accept
    await guard(None, url("a"))
    assert list(guard.pending_urls) == ["a"]
    assert guard.complete("d") is None and guard.complete("a") == url("a") and guard.complete("a") is None


async def test_a_person_gets_more_than_the_idle_timeout_to_answer(autojump_clock: trio.abc.Clock) -> None:
    from mcp_ref.errors import RequestTimeout

    server = Server("patient")
    outcomes: list[Any] = []

    @server.tool()
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        params = ElicitRequestFormParams(message="Take your time", requested_schema=SCHEMA)
        try:
            outcomes.append(await ctx.elicit(params, **arguments))
        except RequestTimeout as e:
            outcomes.append(e)
        return "done"

    async def slow_person(ctx: Any, params: Any) -> ElicitResult:
        await trio.sleep(120)  # twice the default idle timeout of 60 s
        return ElicitResult(action="cancel")

    async with memory_session_pair(server, elicitation=slow_person, era="legacy") as client:
        await client.call_tool("ask", timeout=1000)
        await client.call_tool("ask", {"timeout": 30}, timeout=1000)  # an explicit timeout still applies
    assert outcomes[0] == ElicitResult(action="cancel")
    assert isinstance(outcomes[1], RequestTimeout)


# -- ids listed in a -32042 error (client side) ---------------------------------------------------


def client_engine_after_handshake() -> Any:
    """A client engine that has been through the handshake with a URL-mode elicitation capability."""
    from mcp_ref.schema.lifecycle import ClientCapabilities, ElicitationCapability

    from ..test_connection import handshake

    client, _ = handshake(client_caps=ClientCapabilities(elicitation=ElicitationCapability(form={}, url={})))
    return client


def url_required_error(rid: Any, data: Any) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "error": {"code": -32042, "message": "URL elicitation required", "data": data}}
    ).encode()


@pytest.mark.req("client/elicitation#17", "client/elicitation#22", "client/elicitation#23")
def test_the_client_engine_records_the_ids_a_url_elicitation_required_error_lists() -> None:
    from mcp_ref.events import ErrorReceived

    client = client_engine_after_handshake()
    rid, _ = client.send_request("tools/list")
    listed = [
        {"mode": "url", "message": "Authorize", "url": "https://example.com/a", "elicitationId": "e-a"},
        {"mode": "url", "message": "Pay", "url": "https://example.com/b", "elicitationId": "e-b"},
    ]
    (ev,) = client.receive_message(url_required_error(rid, {"elicitations": listed}))
    # the caller still gets the error as it came
    assert isinstance(ev, ErrorReceived) and ev.error.code == -32042 and ev.error.data == {"elicitations": listed}
    assert client.url_elicitation_completed("e-b")
    assert not client.url_elicitation_completed("e-b")  # already completed
    assert not client.url_elicitation_completed("never-listed")
    assert client.url_elicitation_completed("e-a")


@pytest.mark.parametrize(
    "data",
    [
        None,
        "elicitations",
        {"elicitations": "e-1"},
        {"elicitations": [None, 3, {"mode": "url"}, {"elicitationId": 7}]},
    ],
)
def test_a_malformed_url_elicitation_required_error_still_reaches_the_caller(data: Any) -> None:
    from mcp_ref.events import ErrorReceived

    client = client_engine_after_handshake()
    rid, _ = client.send_request("tools/list")
    (ev,) = client.receive_message(url_required_error(rid, data))
    assert isinstance(ev, ErrorReceived) and ev.error.data == data
    assert list(client.url_elicitations) == []  # nothing that could be completed


def test_ids_listed_in_errors_are_bounded() -> None:
    client = client_engine_after_handshake()
    for n in range(3):
        rid, _ = client.send_request("tools/list")
        items = [
            {"mode": "url", "message": "m", "url": "https://example.com", "elicitationId": f"{n}-{i}"}
            for i in range(600)
        ]
        client.receive_message(url_required_error(rid, {"elicitations": items}))
    assert len(client.url_elicitations) == 1024
    assert not client.url_elicitation_completed("0-0")  # the oldest were forgotten
    assert client.url_elicitation_completed("2-599")


def test_only_a_client_receives_completions() -> None:
    from mcp_ref.basic.lifecycle import Role
    from mcp_ref.connection import Connection

    with pytest.raises(LocalProtocolError):
        Connection(Role.SERVER).url_elicitation_completed("e")


@pytest.mark.req("client/elicitation#17", "client/elicitation#20")
@pytest.mark.parametrize("with_handler", [True, False])
async def test_a_completion_of_an_id_listed_in_a_url_elicitation_required_error_reaches_the_application(
    with_handler: bool,
) -> None:
    from mcp_ref.schema.lifecycle import ClientCapabilities, ElicitationCapability

    completed: list[str] = []
    got = trio.Event()

    async def on_complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)
        got.set()

    options: dict[str, Any] = {"on_elicitation_complete": on_complete}
    if with_handler:
        options.update(elicitation=accept_defaults, elicitation_modes=("form", "url"))
    else:
        # no elicitation requests handled here, but URL completions announced (#17 still applies)
        options["capabilities"] = ClientCapabilities(elicitation=ElicitationCapability(url={}))
    async with memory_session_pair(elicit_server([]), **options, era="legacy") as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("needs_auth")
        assert info.value.code == -32042
        # an unknown id is ignored; the id the error listed is not
        assert texts(await client.call_tool("finish", {"id": "unknown-id", "raw": True})) == "sent raw"
        assert texts(await client.call_tool("finish", {"id": "el-2"})) == "sent"
        with trio.fail_after(5):
            await got.wait()
        # completed once: a repeat from a careless server is ignored
        assert texts(await client.call_tool("finish", {"id": "el-2", "raw": True})) == "sent raw"
        await client.ping()
    assert completed == ["el-2"]


@pytest.mark.req("client/elicitation#17")
async def test_a_completion_right_behind_the_error_is_not_lost(autojump_clock: trio.abc.Clock) -> None:
    """The error and its completion arrive back to back, before the caller has even seen the error."""
    from mcp_ref.basic.transports.memory import memory_channel_pair
    from mcp_ref.session import open_session

    completed: list[str] = []
    got = trio.Event()

    async def on_complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)
        got.set()

    client_end, server_end = memory_channel_pair()

    async def raw_server() -> None:
        await raw_handshake(server_end, {"tools": {}})
        call = json.loads(await server_end.receive())
        listed = {"mode": "url", "message": "Authorize", "url": "https://example.com/a", "elicitationId": "fast"}
        await server_end.send(url_required_error(call["id"], {"elicitations": [listed]}))
        for eid in ("other", "fast", "fast"):
            note = {"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": eid}}
            await server_end.send(json.dumps(note).encode())

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(raw_server)
            async with open_session(
                client_end,
                elicitation=accept_defaults,
                elicitation_modes=("url",),
                on_elicitation_complete=on_complete,
                era="legacy",
            ) as client:
                with pytest.raises(MCPError):
                    await client.call_tool("pay")
                await got.wait()
                await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    assert completed == ["fast"]


@pytest.mark.req("client/elicitation#17")
async def test_accepted_url_elicitations_kept_are_bounded() -> None:
    from mcp_ref.client.elicitation import MAX_PENDING_URLS, ElicitationGuard

    async def accept(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept")

    guard = ElicitationGuard(accept, url=True)
    for i in range(MAX_PENDING_URLS + 2):
        await guard(None, ElicitRequestURLParams(message="m", url="https://example.com", elicitation_id=str(i)))
    assert len(guard.pending_urls) == MAX_PENDING_URLS
    assert guard.complete("0") is None and guard.complete("1") is None  # the oldest were forgotten
    assert guard.complete(str(MAX_PENDING_URLS + 1)) is not None


@pytest.mark.req("basic/lifecycle#14")
@pytest.mark.parametrize(
    ("prop", "construct"),
    [
        ({"type": "array", "items": {"type": "string", "enum": ["red", "blue"]}}, "multi-select enum"),
        (
            {"type": "array", "items": {"anyOf": [{"const": "r", "title": "Red"}, {"const": "b", "title": "Blue"}]}},
            "titled multi-select enum",
        ),
        ({"type": "string", "oneOf": [{"const": "r", "title": "Red"}]}, "titled single-select enum"),
    ],
)
async def test_a_2025_06_18_session_refuses_form_constructs_of_a_later_revision(
    autojump_clock: trio.abc.Clock, prop: dict[str, Any], construct: str
) -> None:
    request = {"message": "Pick", "requestedSchema": {"type": "object", "properties": {"colors": prop}}}
    reply, asked = await raw_server_asks(request, ("form",), version="2025-06-18")
    assert reply["id"] == "e1" and reply["error"]["code"] == ErrorCode.INVALID_PARAMS
    message = reply["error"]["message"]
    assert f"'colors' is a {construct}" in message and "2025-06-18" in message
    assert asked == []  # the application was never asked
    # the same request is fine where the revision has it
    reply, asked = await raw_server_asks(request, ("form",))
    assert reply["result"]["action"] == "accept" and len(asked) == 1
    # and a plain enum, which 2025-06-18 has, is fine there
    plain = {
        "message": "Pick",
        "requestedSchema": {"type": "object", "properties": {"c": {"type": "string", "enum": ["r"]}}},
    }
    reply, asked = await raw_server_asks(plain, ("form",), version="2025-06-18")
    assert reply["result"]["action"] == "accept" and len(asked) == 1
