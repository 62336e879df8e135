"""basic/index#meta: _meta key format, checked on send at any depth, tolerated on receipt."""

import json
from typing import Any

import pytest

from mcp_ref.basic.meta import is_reserved, meta_key_problem
from mcp_ref.errors import ErrorCode, LocalProtocolError
from mcp_ref.events import RequestReceived, ResponseReceived
from mcp_ref.schema import encode
from mcp_ref.schema.content import EmbeddedResource, TextContent, TextResourceContents
from mcp_ref.schema.lifecycle import (
    ClientCapabilities,
    ListChangedCapability,
    ResourcesCapability,
    RootsCapability,
    ServerCapabilities,
)
from mcp_ref.schema.prompts import ListPromptsResult, Prompt
from mcp_ref.schema.resources import ListResourcesResult, ListResourceTemplatesResult, Resource, ResourceTemplate
from mcp_ref.schema.roots import ListRootsResult, Root
from mcp_ref.schema.tools import CallToolRequestParams, CallToolResult, ListToolsResult, Tool

from ..test_connection import handshake, wire


@pytest.mark.req("basic/index#26", "basic/index#27", "basic/index#29", "basic/index#30")
@pytest.mark.parametrize(
    "key",
    [
        "progressToken",
        "com.example/trace-id",
        "io.modelcontextprotocol/related-task",
        "a/b",
        "x",
        "",
        "a.b-c.d9/n_a.m-e",
        "com.example/",
    ],
)
def test_well_formed_keys(key: str) -> None:
    assert meta_key_problem(key) is None


@pytest.mark.req("basic/index#26", "basic/index#27", "basic/index#29")
@pytest.mark.parametrize(
    "key",
    ["-x", "x-", "1abc.def/name", "com..example/x", "com.example-/x", "com.example/-bad", "com.example/bad_", "a b"],
)
def test_malformed_keys(key: str) -> None:
    assert meta_key_problem(key) is not None


def test_reserved_prefixes() -> None:
    for key in ("io.modelcontextprotocol/x", "dev.mcp/x", "org.modelcontextprotocol.api/x", "com.mcp.tools/x"):
        assert is_reserved(key)
    for key in ("com.example.mcp/x", "mcp/x", "progressToken"):
        assert not is_reserved(key)


@pytest.mark.req("basic/index#25")
def test_malformed_keys_are_refused_on_send_and_counted_on_receipt() -> None:
    client, server = handshake()
    with pytest.raises(LocalProtocolError, match="_meta key"):
        client.send_request("tools/call", CallToolRequestParams(name="t", meta={"com.example/-x": 1}))
    assert client.pending_outgoing == []
    raw = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "_meta": {"bad key!": {"any": "value"}}},
    }
    (event,) = server.receive_message(json.dumps(raw))
    assert isinstance(event, RequestReceived) and event.params.meta == {"bad key!": {"any": "value"}}
    assert server.stats["meta:malformed-key"] == 1


# -- _meta inside nested objects ------------------------------------------------------------------

BAD = {"bad key!": 1}


@pytest.mark.req("basic/index#26", "basic/index#27", "basic/index#29")
@pytest.mark.parametrize(
    "result",
    [
        CallToolResult(content=[TextContent(text="hi", meta=BAD)]),
        CallToolResult(content=[EmbeddedResource(resource=TextResourceContents(uri="file:///a", text="a", meta=BAD))]),
        ListToolsResult(tools=[Tool(name="t", input_schema={"type": "object"}, meta=BAD)]),
        ListResourcesResult(resources=[Resource(uri="file:///a", name="a", meta={"com.example/ok": 1, **BAD})]),
        ListResourceTemplatesResult(
            resource_templates=[ResourceTemplate(uri_template="file:///{x}", name="x", meta=BAD)]
        ),
        ListPromptsResult(prompts=[Prompt(name="p", meta=BAD)]),
    ],
    ids=lambda r: type(r).__name__,
)
def test_a_malformed_nested_key_is_never_sent(result: Any) -> None:
    everything = ServerCapabilities(
        tools=ListChangedCapability(), resources=ResourcesCapability(), prompts=ListChangedCapability()
    )
    client, server = handshake(server_caps=everything)
    method = {
        CallToolResult: "tools/call",
        ListToolsResult: "tools/list",
        ListResourcesResult: "resources/list",
        ListResourceTemplatesResult: "resources/templates/list",
        ListPromptsResult: "prompts/list",
    }[type(result)]
    params = {"name": "t"} if method == "tools/call" else {}
    server.receive_message(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
    with pytest.raises(LocalProtocolError, match="_meta key 'bad key!'") as info:
        server.send_response(1, result)
    assert info.value.code == ErrorCode.INVALID_PARAMS
    # nothing was sent and the request is still answerable
    assert server.incoming(1) is not None
    server.send_error(1, ErrorCode.INTERNAL_ERROR, "Internal error")


@pytest.mark.req("basic/index#26", "basic/index#29")
def test_a_malformed_nested_key_in_a_request_is_refused_before_sending() -> None:
    client, server = handshake(client_caps=ClientCapabilities(roots=RootsCapability()))
    rid, data = server.send_request("roots/list")
    client.receive_message(data)
    with pytest.raises(LocalProtocolError, match=r"Root\._meta key '-x'"):
        client.send_response(rid, ListRootsResult(roots=[Root(uri="file:///r", meta={"-x": 1})]))
    assert wire(client.send_response(rid, ListRootsResult(roots=[Root(uri="file:///r", meta={"x": 1})])))["result"] == {
        "roots": [{"uri": "file:///r", "_meta": {"x": 1}}]
    }


def test_a_nested_meta_the_revision_does_not_write_is_not_checked() -> None:
    # content blocks carry no _meta in 2025-03-26: nothing of it is sent, so nothing is refused
    assert encode(TextContent(text="hi", meta=BAD), "2025-03-26") == {"type": "text", "text": "hi"}
    with pytest.raises(LocalProtocolError):
        encode(TextContent(text="hi", meta=BAD), "2025-06-18")


@pytest.mark.req("basic/index#25")
def test_a_peers_malformed_nested_keys_are_kept_and_never_fail_the_message() -> None:
    client, server = handshake()
    rid, data = client.send_request("tools/list")
    server.receive_message(data)
    tool = {"name": "t", "inputSchema": {"type": "object"}, "_meta": {"bad key!": {"any": "value"}}}
    (event,) = client.receive_message(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool]}}))
    assert isinstance(event, ResponseReceived) and event.result.tools[0].meta == {"bad key!": {"any": "value"}}
    raw = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {}, "_meta": {"com.example/ok": 1}},
    }
    (event,) = server.receive_message(json.dumps(raw))
    assert isinstance(event, RequestReceived)
    assert server.stats["meta:malformed-key"] == 0  # only the top-level params' keys are counted


async def test_a_handler_returning_a_malformed_nested_key_gets_an_internal_error_and_the_session_goes_on() -> None:
    from mcp_ref.errors import MCPError
    from mcp_ref.session import RequestContext, Server
    from mcp_ref.testing import memory_session_pair

    server = Server("careless")

    @server.tool()
    async def tagged(ctx: RequestContext, arguments: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[TextContent(text="hi", meta={"com.example/-x": 1})])

    async with memory_session_pair(server) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("tagged")
        assert info.value.code == ErrorCode.INTERNAL_ERROR
        await client.ping()


@pytest.mark.req("basic/index#26", "basic/index#29")
def test_registrations_with_malformed_meta_keys_are_refused_at_once() -> None:
    from mcp_ref.session import Server

    server = Server("s")

    async def fn(ctx: Any, *args: Any) -> Any:
        return None

    with pytest.raises(ValueError, match="tool 't': _meta key 'bad key!'"):
        server.tool("t", meta=BAD)(fn)
    assert server.tools.names() == []
    with pytest.raises(ValueError, match="resource 'file:///a'"):
        server.resources.add(Resource(uri="file:///a", name="a", meta=BAD), fn)
    with pytest.raises(ValueError, match="resource template"):
        server.resources.add_template(ResourceTemplate(uri_template="file:///{x}", name="x", meta=BAD), fn)
    with pytest.raises(ValueError, match="prompt 'p'"):
        server.prompts.add(Prompt(name="p", meta=BAD), fn)
    server.tool("ok", meta={"com.example/ui": {"any": "value"}})(fn)
    assert server.tools.names() == ["ok"]


def test_long_keys_are_checked_but_not_remembered() -> None:
    from mcp_ref.schema._meta_keys import WELL_FORMED

    assert meta_key_problem("a" * 500) is None and meta_key_problem("-" + "a" * 500) is not None
    assert "a" * 500 not in WELL_FORMED
    assert meta_key_problem("com.example/short") is None and "com.example/short" in WELL_FORMED
    assert meta_key_problem("com.example/-bad") is not None and "com.example/-bad" not in WELL_FORMED
