"""``$ref`` and resource bounds of the schemas we validate against (2026-07-28
basic/index#ref-resolution and #composition-keyword-resource-use; applied in every
revision): references resolve inside the schema or not at all, nothing is fetched,
and a schema too deep or too large once its references are followed is refused
before any instance meets it."""

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest

from mcp_ref.basic.json_schema import MAX_SCHEMA_DEPTH, MAX_SUBSCHEMAS, InvalidSchema, compile_schema, schema_problem

pytest.importorskip("jsonschema", reason="validation needs the validation extra")

LOCAL = {
    "type": "object",
    "properties": {"when": {"$ref": "#/$defs/date"}, "who": {"$ref": "#person"}},
    "$defs": {
        "date": {"type": "string", "pattern": "^[0-9]{4}-"},
        "person": {"$anchor": "person", "type": "object", "required": ["name"]},
    },
}


def test_local_references_resolve_and_validate() -> None:
    validate = compile_schema(LOCAL)
    assert validate is not None
    assert validate({"when": "2026-07-28", "who": {"name": "a"}}) == []
    assert validate({"when": "tomorrow"})  # the referenced pattern applies
    assert validate({"who": {}})  # so does the anchored schema


def test_references_through_embedded_ids_and_to_a_metaschema_resolve() -> None:
    schema = {
        "$id": "https://tools.example/root",
        "type": "object",
        "properties": {"tree": {"$ref": "node"}, "schema": {"$ref": "https://json-schema.org/draft/2020-12/schema"}},
        "$defs": {"node": {"$id": "node", "type": "object", "properties": {"kids": {"items": {"$ref": "node"}}}}},
    }
    assert schema_problem(schema) is None
    validate = compile_schema(schema)
    assert validate is not None and validate({"tree": {"kids": [{"kids": []}]}}) == []
    assert validate({"tree": {"kids": [1]}})


class _Counter(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/schema+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.req("2026-07-28:basic/index#42", "2026-07-28:basic/index#44")
def test_a_network_reference_is_never_fetched_and_the_schema_is_refused() -> None:
    server = HTTPServer(("127.0.0.1", 0), _Counter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/remote.json"
        assert urllib.request.urlopen(url).status == 200 and _Counter.hits == ["/remote.json"]  # it is reachable
        _Counter.hits.clear()
        schema = {"type": "object", "properties": {"a": {"$ref": url}}}
        with pytest.raises(InvalidSchema, match="never fetched"):
            compile_schema(schema)
        # and the validator itself, given such a schema, retrieves nothing either
        from mcp_ref.basic.json_schema import _validator

        with pytest.raises(Exception, match="Unresolvable"):
            _validator(schema).validate({"a": 1})
        assert _Counter.hits == []
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.req("2026-07-28:basic/index#44")
@pytest.mark.parametrize("ref", ["#/$defs/missing", "#nowhere", "other.json", "#/properties/a/0"])
def test_a_reference_that_resolves_to_nothing_is_refused(ref: str) -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": ref}}}
    assert schema_problem(schema) is not None
    with pytest.raises(InvalidSchema, match="does not resolve"):
        compile_schema(schema)


@pytest.mark.req("2026-07-28:basic/index#45")
def test_references_that_double_at_each_level_are_counted_as_they_expand() -> None:
    # 30 definitions, each referring to the next twice: tiny on the wire, 2**30 subschemas to walk
    defs: dict[str, Any] = {
        f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]} for i in range(30)
    }
    defs["a30"] = {"type": "string"}
    schema = {"$ref": "#/$defs/a0", "$defs": defs}
    with pytest.raises(InvalidSchema, match=f"more than {MAX_SUBSCHEMAS} subschemas"):
        compile_schema(schema)
    # a few levels of the same are fine
    small = {"$ref": "#/$defs/a25", "$defs": {k: v for k, v in defs.items() if int(k[1:]) >= 25}}
    assert schema_problem(small) is None


@pytest.mark.req("2026-07-28:basic/index#45")
def test_a_schema_nested_too_deep_is_refused() -> None:
    def nested(depth: int) -> dict[str, Any]:
        node: dict[str, Any] = {"type": "string"}
        for _ in range(depth):
            node = {"not": node}
        return node

    assert schema_problem(nested(MAX_SCHEMA_DEPTH - 1)) is None
    with pytest.raises(InvalidSchema, match="deeper than"):
        compile_schema(nested(MAX_SCHEMA_DEPTH + 1))


def test_a_recursive_schema_is_not_an_expansion() -> None:
    # recursion is bounded by the instance, not the schema: allowed
    schema = {"type": "object", "properties": {"next": {"$ref": "#"}}}
    validate = compile_schema(schema)
    assert validate is not None and validate({"next": {"next": {}}}) == []
    assert validate({"next": 1})


def unusable_schema_server(schema: dict[str, Any]) -> Any:
    """A server whose tool ``report`` is listed with ``schema`` as its output schema (one our own
    registration refuses: a server of another implementation), and answers with structured content."""
    from mcp_ref import RequestContext, Server
    from mcp_ref.schema.tools import CallToolResult, ListToolsResult, Tool

    server = Server("hostile")

    @server.tool()
    async def report(ctx: RequestContext, arguments: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[], structured_content={"a": "x"})

    async def listing(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=[Tool(name="report", input_schema={"type": "object"}, output_schema=schema)])

    server.set_handler("tools/list", listing)
    return server


@pytest.mark.req("2026-07-28:basic/index#44")
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/admin.json"}}},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"$schema": "https://example.com/my-dialect", "type": "object"},
    ],
    ids=["network-ref", "unresolved-ref", "unknown-dialect"],
)
async def test_a_client_refuses_results_of_a_tool_whose_output_schema_cannot_be_used(
    schema: dict[str, Any], era: str
) -> None:
    # (before: the tool's results were taken unchecked, as if its schema allowed anything)
    from mcp_ref.session.client import InvalidToolResult
    from mcp_ref.testing import memory_session_pair

    async with memory_session_pair(unusable_schema_server(schema), era=era) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["report"]  # listed all the same
        with pytest.raises(InvalidToolResult, match="declares an output schema that cannot be used"):
            await client.call_tool("report")
    # unlisted first: the schema learnt at the call is refused the same way
    async with memory_session_pair(unusable_schema_server(schema), era=era) as client:
        with pytest.raises(InvalidToolResult, match="cannot be used"):
            await client.call_tool("report")
    # without validation asked for, the result is the application's to judge
    async with memory_session_pair(unusable_schema_server(schema), era=era, validate_tool_results=False) as client:
        assert (await client.call_tool("report")).structured_content == {"a": "x"}
