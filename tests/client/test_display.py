"""Display names and icons: the schema's precedence, the wire, and which icon URIs are safe."""

import json
from typing import Any

import pytest
import trio

from mcp_ref import display_name, safe_icon_uri, safe_icons
from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.schema.lifecycle import Icon, Implementation
from mcp_ref.schema.prompts import Prompt
from mcp_ref.schema.resources import Resource, ResourceTemplate
from mcp_ref.schema.tools import Tool, ToolAnnotations
from mcp_ref.session import RequestContext, Server

ICON = Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"], theme="light")
OBJ = {"type": "object"}
ICON_JSON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "light"}


def test_display_name_precedence() -> None:
    # tools: title, then annotations.title, then name
    assert display_name(Tool(name="t", input_schema=OBJ, title="T", annotations=ToolAnnotations(title="A"))) == "T"
    assert display_name(Tool(name="t", input_schema=OBJ, annotations=ToolAnnotations(title="A"))) == "A"
    assert display_name(Tool(name="t", input_schema=OBJ, annotations=ToolAnnotations())) == "t"
    assert display_name(Tool(name="t", input_schema=OBJ)) == "t"
    # everything else: title, then name
    assert display_name(Prompt(name="p", title="P")) == "P"
    assert display_name(Prompt(name="p")) == "p"
    assert display_name(Resource(uri="test://r", name="r", title="R")) == "R"
    assert display_name(ResourceTemplate(uri_template="test://{x}", name="rt")) == "rt"
    assert display_name(Implementation(name="srv", version="1", title="Server")) == "Server"
    assert display_name(Implementation(name="srv", version="1")) == "srv"
    with pytest.raises(TypeError):
        display_name(object())


@pytest.mark.req("basic/index#33", "basic/index#34")
@pytest.mark.parametrize(
    ("uri", "safe"),
    [
        ("https://example.com/icon.png", True),
        ("data:image/png;base64,iVBORw0KGgo=", True),
        ("DATA:image/svg+xml,<svg/>", True),
        ("javascript:alert(1)", False),
        ("file:///etc/passwd", False),
        ("ftp://example.com/icon.png", False),
        ("ws://example.com/icon", False),
        ("http://example.com/icon.png", False),
        ("vscode://extension/icon", False),
        ("data:text/html,<script>alert(1)</script>", False),
        ("https:///no-host.png", False),
        ("https://user:secret@example.com/icon.png", False),
        ("https://example.com:99999/icon.png", False),
        ("https://127.0.0.1:8080/admin/reset", False),
        ("https://localhost/icon.png", False),
        ("https://[::1]/icon.png", False),
        ("https://[::ffff:10.0.0.1]/icon.png", False),
        ("https://169.254.169.254/latest/meta-data", False),
        ("https://192.168.1.1/icon.png", False),
        ("https://8.8.8.8/icon.png", True),
        ("icon.png", False),
        ("", False),
    ],
)
def test_safe_icon_schemes(uri: str, safe: bool) -> None:
    assert safe_icon_uri(uri) is safe


@pytest.mark.req("basic/index#33")
def test_icons_from_the_servers_origin_only() -> None:
    origin = "https://mcp.example.com"
    assert safe_icon_uri("https://mcp.example.com/a.png", origin=origin)
    assert safe_icon_uri("https://mcp.example.com:443/a.png", origin=origin)
    assert not safe_icon_uri("https://tracker.example.net/a.png", origin=origin)
    assert not safe_icon_uri("https://mcp.example.com:8443/a.png", origin=origin)
    assert safe_icon_uri("data:image/png;base64,AA==", origin=origin)
    icons = [ICON, Icon(src="javascript:alert(1)"), Icon(src="https://mcp.example.com/i.svg")]
    assert safe_icons(icons) == [ICON, icons[2]]
    assert safe_icons(icons, origin=origin) == [icons[2]]
    assert safe_icons(None) == []


def icon_server() -> Server:
    server = Server("icons", "1", title="Icon server", icons=[ICON])

    @server.tool(icons=[ICON], input_schema={"type": "object"})
    async def tool(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return ""

    @server.resource("test://r", icons=[ICON])
    async def res(ctx: RequestContext) -> str:
        return ""

    @server.resource_template("test://t/{x}", icons=[ICON])
    async def tmpl(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
        return ""

    @server.prompt(icons=[ICON])
    async def prompt(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return ""

    return server


async def raw_listing(version: str) -> dict[str, Any]:
    """What the server writes for initialize and every list, to a client that proposed ``version``."""
    client, server_end = memory_channel_pair()
    got: dict[str, Any] = {}
    async with trio.open_nursery() as nursery:
        await nursery.start(icon_server().serve, server_end)
        init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        await client.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode())
        got["initialize"] = json.loads(await client.receive())["result"]
        await client.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for i, method in enumerate(["tools/list", "resources/list", "resources/templates/list", "prompts/list"], 1):
            await client.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": method}).encode())
            got[method] = json.loads(await client.receive())["result"]
        nursery.cancel_scope.cancel()
    return got


async def test_icons_on_the_wire() -> None:
    got = await raw_listing("2025-11-25")
    assert got["initialize"]["protocolVersion"] == "2025-11-25"
    assert got["initialize"]["serverInfo"]["icons"] == [ICON_JSON]
    assert got["tools/list"]["tools"][0]["icons"] == [ICON_JSON]
    assert got["resources/list"]["resources"][0]["icons"] == [ICON_JSON]
    assert got["resources/templates/list"]["resourceTemplates"][0]["icons"] == [ICON_JSON]
    assert got["prompts/list"]["prompts"][0]["icons"] == [ICON_JSON]


async def test_icons_are_dropped_for_revisions_without_them() -> None:
    # 2025-06-18 has titles but no icons anywhere in its schema
    got = await raw_listing("2025-06-18")
    assert got["initialize"]["protocolVersion"] == "2025-06-18"
    assert got["initialize"]["serverInfo"] == {"name": "icons", "version": "1", "title": "Icon server"}
    for method, key in (
        ("tools/list", "tools"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ):
        (item,) = got[method][key]
        assert "icons" not in item, method
