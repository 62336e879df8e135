"""server/tools: registration, listing, calling, validation, structured content, list_changed."""

import json
import warnings
from typing import Any

import pytest
import trio

from mcp_ref.errors import ErrorCode, LocalProtocolError, MCPError
from mcp_ref.schema.content import EmbeddedResource, ResourceLink, TextContent, TextResourceContents
from mcp_ref.schema.tools import CallToolResult, ToolAnnotations
from mcp_ref.server.tools import ToolError, ToolNameWarning, check_tool_name
from mcp_ref.session import RequestContext, Server
from mcp_ref.session.client import InvalidToolResult
from mcp_ref.testing import memory_session_pair

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
SUM_SCHEMA = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}


def tool_server() -> Server:
    server = Server("tools")

    @server.tool(
        description="Add two integers",
        input_schema=ADD_SCHEMA,
        output_schema=SUM_SCHEMA,
        annotations=ToolAnnotations(read_only_hint=True),
        title="Adder",
    )
    async def add(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"sum": arguments["a"] + arguments["b"]}

    @server.tool(output_schema=SUM_SCHEMA)
    async def liar(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"sum": "not a number"}

    @server.tool()
    async def links(ctx: RequestContext, arguments: dict[str, Any]) -> list[Any]:
        return [
            ResourceLink(uri="file:///a.txt", name="a.txt", mime_type="text/plain"),
            EmbeddedResource(resource=TextResourceContents(uri="file:///b.txt", text="b")),
        ]

    return server


@pytest.mark.req("server/tools#3", "server/tools#5")
async def test_capability_and_listing() -> None:
    async with memory_session_pair(tool_server(), era="legacy") as client:
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        tools = {t.name: t for t in await client.list_all_tools()}
        assert tools["add"].input_schema == ADD_SCHEMA and tools["add"].title == "Adder"
        assert tools["add"].annotations == ToolAnnotations(read_only_hint=True)
        assert tools["links"].input_schema == {"type": "object"}


@pytest.mark.req("server/tools#15", "server/tools#16", "server/tools#17")
async def test_structured_content_with_text_for_older_clients() -> None:
    async with memory_session_pair(tool_server(), era="legacy") as client:
        await client.list_all_tools()
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"sum": 5}
        assert result.content == [TextContent(text=json.dumps({"sum": 5}))]


@pytest.mark.req("server/tools#16")
async def test_server_refuses_its_own_bad_structured_result() -> None:
    async with memory_session_pair(tool_server(), era="legacy") as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("liar")
        assert info.value.code == ErrorCode.INTERNAL_ERROR and info.value.message == "Internal error"


@pytest.mark.req("server/tools#17", "server/tools#21")
async def test_client_validates_structured_results() -> None:
    server = Server("bad")

    @server.tool(output_schema=SUM_SCHEMA)
    async def liar(ctx: RequestContext, arguments: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[TextContent(text="x")], structured_content={"sum": "x"})

    server.tools._entries["liar"].validate_output = None  # a server that does not check itself
    async with memory_session_pair(server, era="legacy") as client:
        await client.list_all_tools()
        with pytest.raises(InvalidToolResult, match="sum"):
            await client.call_tool("liar")


def lying_server() -> Server:
    server = Server("bad")

    @server.tool(output_schema=SUM_SCHEMA)
    async def liar(ctx: RequestContext, arguments: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[TextContent(text="x")], structured_content={"sum": "x"})

    server.tools._entries["liar"].validate_output = None  # a server that does not check itself
    return server


@pytest.mark.req("server/tools#17")
async def test_results_are_validated_without_list_tools_first() -> None:
    # results used to be checked only after the application had called list_tools, silently
    server = lying_server()
    listed = 0
    original = server.tools.list_tools

    async def counting(ctx: Any, params: Any) -> Any:
        nonlocal listed
        listed += 1
        return await original(ctx, params)

    server.set_handler("tools/list", counting)
    async with memory_session_pair(server, era="legacy") as client:
        with pytest.raises(InvalidToolResult, match="sum"):
            await client.call_tool("liar")
        assert listed == 1  # its schema was learnt with one tools/list ...
        with pytest.raises(InvalidToolResult, match="sum"):
            await client.call_tool("liar")
        assert listed == 1  # ... and kept

        @server.tool()
        async def newcomer(ctx: RequestContext) -> str:
            return "new"

        # the server says its tools changed: what was learnt is learnt again at the next call
        with trio.fail_after(5):
            while client._output_validators:
                await trio.sleep(0)
        assert (await client.call_tool("newcomer")).text == "new"
        assert listed == 2
    async with memory_session_pair(server, validate_tool_results=False, era="legacy") as client:
        assert (await client.call_tool("liar")).structured_content == {"sum": "x"}
        assert listed == 2  # not validating: nothing to learn


@pytest.mark.req("server/tools#18", "server/tools#20")
async def test_invalid_arguments_are_tool_execution_errors() -> None:
    async with memory_session_pair(tool_server(), era="legacy") as client:
        result = await client.call_tool("add", {"a": 1, "b": "two"})
        assert result.is_error is True
        assert "b" in result.content[0].text  # type: ignore[union-attr]
        result = await client.call_tool("add", {"a": 1})
        assert result.is_error is True and "required" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.req("schema#37")
async def test_tool_errors_and_unknown_tools() -> None:
    server = Server("s")

    @server.tool()
    async def fail(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise ToolError("the date must be in the future")

    async with memory_session_pair(server, era="legacy") as client:
        result = await client.call_tool("fail")
        assert result.is_error is True and result.content == [TextContent(text="the date must be in the future")]
        with pytest.raises(MCPError) as info:
            await client.call_tool("nope")
        assert info.value.code == ErrorCode.INVALID_PARAMS and "Unknown tool" in info.value.message


@pytest.mark.req("server/tools#12", "server/tools#13")
async def test_links_and_embedded_resources() -> None:
    async with memory_session_pair(tool_server(), era="legacy") as client:
        result = await client.call_tool("links")
        assert isinstance(result.content[0], ResourceLink) and isinstance(result.content[1], EmbeddedResource)


async def test_resource_links_are_refused_for_2025_03_26_clients() -> None:
    # no ResourceLink in 2025-03-26: the call fails (-32603) instead of sending an unreadable block
    # (spec_notes/server/tools.md)
    async with memory_session_pair(tool_server(), protocol_version="2025-03-26") as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("links")
        assert info.value.code == ErrorCode.INTERNAL_ERROR


@pytest.mark.req("server/tools#7", "server/tools#8", "server/tools#9", "server/tools#10")
def test_tool_name_guidance() -> None:
    assert check_tool_name("getUser") == [] and check_tool_name("admin.tools.list") == []
    assert check_tool_name("DATA_EXPORT_v2") == []
    assert check_tool_name("") and check_tool_name("x" * 129)
    assert check_tool_name("has space") and check_tool_name("a,b")
    server = Server("s")
    with pytest.warns(ToolNameWarning, match="has space"):

        @server.tool("has space")
        async def spaced(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return ""

    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @server.tool("Case")
        async def upper(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return "upper"

        @server.tool("case")
        async def lower(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return "lower"  # names are case-sensitive: both exist


@pytest.mark.req("server/tools#11")
def test_names_are_unique() -> None:
    server = Server("s")

    @server.tool("t")
    async def one(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return ""

    with pytest.raises(ValueError, match="already registered"):

        @server.tool("t")
        async def two(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return ""


@pytest.mark.req("basic/index#22", "basic/index#24")
def test_bad_schemas_are_refused_at_registration() -> None:
    from mcp_ref.basic.json_schema import InvalidSchema, UnsupportedDialect

    server = Server("s")

    async def fn(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return ""

    with pytest.raises(UnsupportedDialect):
        server.tool("a", input_schema={"$schema": "http://example.com/my-dialect", "type": "object"})(fn)
    with pytest.raises(InvalidSchema):
        server.tool("b", input_schema={"type": "object", "properties": {"x": {"type": 5}}})(fn)


UNUSABLE_SCHEMAS = {
    "nested-type-misspelled": ({"type": "object", "properties": {"a": {"type": "strin"}}}, "properties.a.type"),
    "minimum-a-string": ({"type": "object", "properties": {"a": {"minimum": "3"}}}, "properties.a.minimum"),
    "negative-length": ({"type": "object", "properties": {"a": {"maxLength": -1}}}, "properties.a.maxLength"),
    "allOf-not-a-list": ({"type": "object", "allOf": {"type": "object"}}, "allOf"),
    "additionalProperties-a-string": ({"type": "object", "additionalProperties": "no"}, "additionalProperties"),
    "pattern-that-is-no-regex": ({"type": "object", "properties": {"a": {"pattern": "("}}}, "properties.a.pattern"),
    "a-subschema-that-is-a-number": ({"type": "object", "properties": {"a": {"not": 5}}}, "properties.a.not"),
    "required-twice": ({"type": "object", "required": ["a", "a"]}, "required"),
    "multipleOf-zero": ({"type": "object", "properties": {"a": {"multipleOf": 0}}}, "properties.a.multipleOf"),
}


@pytest.mark.req("basic/index#24", "2026-07-28:basic/index#41")
@pytest.mark.parametrize("extra", [True, False], ids=["with-jsonschema", "without-jsonschema"])
@pytest.mark.parametrize("kind", ["input_schema", "output_schema"])
@pytest.mark.parametrize("case", list(UNUSABLE_SCHEMAS))
def test_a_schema_invalid_in_its_dialect_is_refused_at_registration_with_or_without_the_extra(
    case: str, kind: str, extra: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The validation extra is optional: without it, instances are not validated, but a schema
    no validator could use is still refused when the tool is registered, naming the tool and
    the keyword, and the server does not list it."""
    from mcp_ref.basic import json_schema
    from mcp_ref.basic.json_schema import InvalidSchema

    if extra and not json_schema.available():
        pytest.skip("jsonschema (the validation extra) is not installed")
    if not extra:
        monkeypatch.setattr(json_schema, "available", lambda: False)
    schema, where = UNUSABLE_SCHEMAS[case]
    server = Server("s")

    async def fn(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return ""

    with pytest.raises(InvalidSchema) as caught:
        server.tool("t", **{kind: schema})(fn)
    wire = "inputSchema" if kind == "input_schema" else "outputSchema"
    assert str(caught.value).startswith(f"tool 't': {wire}: ")
    if not extra:
        assert where in str(caught.value)
    assert "t" not in server.tools


@pytest.mark.req("basic/index#24", "2026-07-28:basic/index#41")
@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": ["string", "null"], "maxLength": 3.0, "format": "email"}}},
        {"type": "object", "properties": {"a": True, "b": {"enum": []}}, "additionalProperties": False},
        {
            "type": "object",
            "$defs": {"n": {"type": "integer", "exclusiveMinimum": 0}},
            "properties": {"n": {"$ref": "#/$defs/n"}},
        },
        {"type": "object", "properties": {"a": {"prefixItems": [{"type": "string"}], "items": False}}},
        {"type": "object", "x-vendor": {"anything": ["goes"]}, "dependentRequired": {"a": ["b"]}},
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
        },
    ],
    ids=["type-list", "boolean-subschema", "refs", "tuples", "unknown-keywords", "draft-04"],
)
def test_valid_schemas_of_every_kind_are_still_taken(schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_ref.basic import json_schema

    for extra in (True, False):
        if not extra:
            monkeypatch.setattr(json_schema, "available", lambda: False)
        server = Server("s")

        async def fn(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return ""

        server.tool("t", input_schema=schema)(fn)
        assert "t" in server.tools


@pytest.mark.req(
    "basic/index#17", "basic/index#18", "basic/index#19", "basic/index#20", "basic/index#21", "basic/index#23"
)
async def test_declared_dialects_are_honoured() -> None:
    server = Server("s")

    @server.tool(
        input_schema={
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}},
        }
    )
    async def draft7(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "ok"

    @server.tool(
        input_schema={"type": "object", "properties": {"v": {"type": "array", "prefixItems": [{"type": "string"}]}}}
    )
    async def default2020(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "ok"

    async with memory_session_pair(server, era="legacy") as client:
        assert (await client.call_tool("draft7", {"n": 0})).is_error is True
        assert (await client.call_tool("draft7", {"n": 1})).is_error is not True
        assert (await client.call_tool("default2020", {"v": [1]})).is_error is True  # 2020-12 prefixItems applies
        assert (await client.call_tool("default2020", {"v": ["a"]})).is_error is not True


@pytest.mark.req("server/tools#4")
async def test_list_changed_is_sent_when_tools_change() -> None:
    server = tool_server()
    changed: list[str] = []
    got = trio.Event()

    async def on_list_changed(kind: str) -> None:
        changed.append(kind)
        got.set()

    async with memory_session_pair(server, on_list_changed=on_list_changed, era="legacy") as client:

        @server.tool()
        async def late(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return "late"

        with trio.fail_after(5):
            await got.wait()
        assert changed == ["tools"]
        assert "late" in [t.name for t in await client.list_all_tools()]


def test_list_changed_needs_the_capability() -> None:
    from mcp_ref.schema.lifecycle import ListChangedCapability, ServerCapabilities

    from ..test_connection import handshake

    client, server = handshake(server_caps=ServerCapabilities(tools=ListChangedCapability()))
    with pytest.raises(LocalProtocolError):
        server.send_notification("notifications/tools/list_changed")


def test_supported_dialects_are_documented() -> None:
    from mcp_ref.basic.json_schema import DEFAULT_DIALECT, SUPPORTED_DIALECTS

    from ..conftest import ROOT

    notes = (ROOT / "spec_notes" / "supported.md").read_text()
    assert DEFAULT_DIALECT == "https://json-schema.org/draft/2020-12/schema"
    for name in ("2020-12", "2019-09", "draft-07", "draft-06", "draft-04"):
        assert name in notes and any(name in d for d in SUPPORTED_DIALECTS)


# values the annotations forbid, as untyped callers pass them
BOGUS: Any = "bogus"
A_LIST: Any = [1, 2]


def test_bad_registration_and_results_are_refused_before_the_wire() -> None:
    server = Server("s")
    with pytest.raises(ValueError, match="task_support is 'forbidden', 'optional' or 'required', not 'bogus'"):
        server.tool(task_support=BOGUS)
    assert len(server.tools) == 0


def two_era_server() -> Server:
    """Tools only 2026-07-28 can express as they are: a string output schema, a bare list as
    structured content, a boolean property schema."""
    server = Server("s")

    @server.tool(output_schema={"type": "string"})
    async def word(ctx: RequestContext, arguments: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[], structured_content="plain")

    @server.tool()
    async def listy(ctx: RequestContext, arguments: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[], structured_content=A_LIST)

    @server.tool(
        input_schema={"type": "object", "properties": {"any": True, "never": False}},
        output_schema={"type": "object", "properties": {"n": True}},
    )
    async def loose(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"n": 1}

    @server.tool()
    async def plain(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "ok"

    return server


async def test_a_tool_only_2026_can_express_is_wrapped_for_a_2025_session_not_fatal_to_the_list() -> None:
    # trial28c N3: one such tool used to fail tools/list as a whole (-32603) for every 2025 client
    server = two_era_server()
    async with memory_session_pair(server, era="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert list(tools) == ["word", "listy", "loose", "plain"]
        assert tools["word"].output_schema == {
            "type": "object",
            "properties": {"result": {"type": "string"}},
            "required": ["result"],
        }
        assert tools["loose"].input_schema["properties"] == {"any": {}, "never": {"not": {}}}
        assert tools["loose"].output_schema == {"type": "object", "properties": {"n": {}}}
        word = await client.call_tool("word")
        assert word.structured_content == {"result": "plain"}
        assert [b.text for b in word.content if isinstance(b, TextContent)] == ['{"result": "plain"}']
        assert (await client.call_tool("listy")).structured_content == {"result": A_LIST}
        assert (await client.call_tool("loose")).structured_content == {"n": 1}
    async with memory_session_pair(server) as client:
        assert client.protocol_version == "2026-07-28"
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["word"].output_schema == {"type": "string"}
        assert tools["loose"].input_schema["properties"] == {"any": True, "never": False}
        word = await client.call_tool("word")
        assert word.structured_content == "plain"
        assert [b.text for b in word.content if isinstance(b, TextContent)] == ['"plain"']
        assert (await client.call_tool("listy")).structured_content == A_LIST


async def test_structured_results_for_a_2025_03_26_client_are_text_only() -> None:
    import json

    from mcp_ref.basic.transports.memory import memory_channel_pair

    server = Server("s")

    @server.tool(
        input_schema={"type": "object"},
        output_schema={"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
    )
    async def add(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"sum": 3}

    client, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        init = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
        await client.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode())
        assert json.loads(await client.receive())["result"]["protocolVersion"] == "2025-03-26"
        await client.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        await client.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
        (tool,) = json.loads(await client.receive())["result"]["tools"]
        assert tool == {"name": "add", "inputSchema": {"type": "object"}}  # no outputSchema in 2025-03-26
        await client.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{}}}')
        result = json.loads(await client.receive())["result"]
        # the structured value reaches the old client as its JSON text, and only so
        assert result == {"content": [{"type": "text", "text": '{"sum": 3}'}]}
        nursery.cancel_scope.cancel()


@pytest.mark.req("server/tools#20")
async def test_tool_invocations_can_be_rate_limited_per_session(autojump_clock: trio.abc.Clock) -> None:
    from mcp_ref.session import SessionConfig

    server = Server("limited", config=SessionConfig(request_rate_limits={"tools/call": (1.0, 2)}))
    ran: list[int] = []

    @server.tool()
    async def count(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        ran.append(1)
        return "ok"

    async with memory_session_pair(server, era="legacy") as client:
        assert [(await client.call_tool("count")).content for _ in range(2)] == [[TextContent(text="ok")]] * 2
        with pytest.raises(MCPError) as info:
            await client.call_tool("count")  # the burst is spent
        assert info.value.code == ErrorCode.INVALID_REQUEST and "too many tools/call" in info.value.message
        assert len(ran) == 2  # the refused call never reached the tool
        await client.list_tools()  # other methods are not limited
        await trio.sleep(1)  # a token a second
        assert (await client.call_tool("count")).content == [TextContent(text="ok")]
    assert len(ran) == 3


@pytest.mark.parametrize("limits", [{"ping": (1.0, 1)}, {"tools/call": (0, 1)}, {"tools/call": (1.0, 0)}, {"x": 5}])
def test_request_rate_limits_are_checked(limits: dict[str, Any]) -> None:
    from mcp_ref.session import SessionConfig

    with pytest.raises(ValueError, match="rate"):
        SessionConfig(request_rate_limits=limits)


@pytest.mark.req("schema#37", "2026-07-28:schema#47")
async def test_a_tool_that_raises_is_a_tool_execution_error_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    # trial28c N1: it was -32603 in every revision, which mcp-ref check reports (schema#37)
    server = Server("s")

    @server.tool()
    async def boom(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise RuntimeError("secret database password")

    @server.tool()
    async def refuse(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        raise MCPError(ErrorCode.INVALID_PARAMS, "bad day")  # the protocol's own: kept

    for era in ("legacy", "modern"):
        caplog.clear()
        async with memory_session_pair(server, era=era) as client:
            result = await client.call_tool("boom")
            assert result.is_error is True and result.content == [TextContent(text="Internal error in tool 'boom'")]
            with pytest.raises(MCPError) as info:
                await client.call_tool("refuse")
            assert (info.value.code, info.value.message) == (ErrorCode.INVALID_PARAMS, "bad day")
        failures = [r for r in caplog.records if r.levelname == "ERROR"]
        assert len(failures) == 1, era  # once, with its traceback, and nothing of it on the wire
        assert failures[0].exc_info is not None and "secret" in str(failures[0].exc_info[1])
