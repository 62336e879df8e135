"""Typed tools: schemas derived from annotations, arguments structured, results as structured content."""

import dataclasses
import enum
import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

import attrs
import jsonschema
import pytest

from mcp_ref import RequestContext, Server
from mcp_ref.schema.content import ContentBlock, TextContent, TextResourceContents
from mcp_ref.schema.prompts import PromptMessage
from mcp_ref.schema.tools import CallToolResult
from mcp_ref.server.typed import TypedTool, is_typed_handler, json_schema
from mcp_ref.testing import memory_session_pair


def valid(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema, after checking it is a well-formed 2020-12 schema."""
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(TypedDict):
    x: float
    y: float
    label: NotRequired[str]


@attrs.frozen
class Address:
    street: str
    city: str = attrs.field(default="Oslo", metadata={"description": "where"})


@attrs.frozen
class Person:
    name: str
    address: Address
    tags: list[str] = attrs.Factory(list)


@attrs.frozen
class Node:
    value: int
    children: "list[Node]"


@pytest.mark.parametrize(
    ("annotation", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Any, {}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, "one"], {"enum": [1, "one"]}),
        (Colour, {"type": "string", "enum": ["red", "blue"]}),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045 (the other spelling)
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (Sequence[str], {"type": "array", "items": {"type": "string"}}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False, "minItems": 2},
        ),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
    ],
)
def test_each_annotation_kind_has_its_schema(annotation: Any, schema: dict[str, Any]) -> None:
    assert valid(json_schema(annotation)) == schema


def test_a_typed_dict_is_an_object_of_its_keys() -> None:
    assert valid(json_schema(Point)) == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "label": {"type": "string"}},
        "required": ["x", "y"],
        "additionalProperties": False,
    }


def test_an_attrs_class_is_an_object_of_its_fields_nested_inline() -> None:
    assert valid(json_schema(Person)) == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string", "description": "where", "default": "Oslo"},
                },
                "required": ["street"],
                "additionalProperties": False,
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["name", "address"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (Node, "Node refers to itself"),
        (bytes, "bytes has no JSON Schema"),
        (dict[int, str], "JSON object keys are strings"),
        (Literal[b"x"], "enumerated values must be JSON scalars"),
    ],
)
def test_a_type_without_a_json_form_is_refused_by_name(annotation: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        json_schema(annotation)


async def hello(ctx: RequestContext, *, name: str, times: int = 1, loud: bool | None = None) -> str:
    return " ".join([f"hello {name}"] * times)


def test_the_input_schema_lists_the_keyword_parameters() -> None:
    tool = TypedTool(hello, "hello")
    assert valid(tool.input_schema) == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "times": {"type": "integer", "default": 1},
            "loud": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None},
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    assert tool.output_schema is None  # a str result is one text block


def test_the_handler_shape_chooses_the_form() -> None:
    async def classic(ctx: Any, arguments: dict[str, Any]) -> str:
        return ""

    async def nothing(ctx: Any) -> str:
        return ""

    async def positional(ctx: Any, a: int, b: int) -> str:
        return ""

    async def keyword_arguments(ctx: Any, *, arguments: str) -> str:
        return ""

    assert not is_typed_handler(classic)
    # the classic form is the parameter name `arguments`; any other names are typed, with
    # the `*` (keyword-only) or without it (the official SDK's habit)
    assert is_typed_handler(hello) and is_typed_handler(nothing) and is_typed_handler(positional)
    assert is_typed_handler(keyword_arguments)


async def test_a_typed_tool_without_the_star_is_typed() -> None:
    # `async def search(ctx, query: str)` used to register as the classic form: the schema
    # said any object and `query` received the whole arguments dict
    server = Server("s")

    @server.tool()
    async def search(ctx: RequestContext, query: str, limit: int = 3) -> str:
        return f"{query!r} x{limit}"

    assert server.tools["search"].input_schema == {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "default": 3}},
        "required": ["query"],
        "additionalProperties": False,
    }
    async with memory_session_pair(server) as client:
        assert (await client.call_tool("search", {"query": "trio"})).text == "'trio' x3"
        refused = await client.call_tool("search", {"query": 1})
    assert refused.is_error and (refused.text or "").startswith("Invalid arguments for tool 'search': query")


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        # the official SDK's shapes: no ctx first, or ctx last
        (
            "async def f(query: str) -> str: ...",
            r"the first parameter receives the request context, but 'query' is annotated str",
        ),
        (
            "async def f(query: str, ctx: RequestContext) -> str: ...",
            r"write \(ctx: RequestContext, query: str, \.\.\.\)",
        ),
        (
            "async def f(ctx: RequestContext, arguments: str) -> str: ...",
            r"make it keyword-only: \(ctx, \*, arguments: \.\.\.\)",
        ),
        ("async def f(ctx: RequestContext, **arguments: Any) -> str: ...", r"\*\*arguments has no schema"),
        ("async def f(ctx: RequestContext, query: str, /) -> str: ...", r"'query' is positional-only"),
        ("async def f(*, ctx: RequestContext) -> str: ...", r"the first parameter receives the request context"),
        ("async def f(ctx: RequestContext, query) -> str: ...", r"parameters \['query'\] have no annotation"),
    ],
)
def test_a_handler_of_no_known_shape_is_refused_at_registration(handler: str, message: str) -> None:
    server = Server("s")
    space: dict[str, Any] = {"RequestContext": RequestContext, "Any": Any}
    exec(handler, space)
    with pytest.raises(TypeError, match=message):
        server.tool()(space["f"])
    assert server.tools.names() == []


def test_the_classic_form_is_named_arguments_and_may_take_any_dict_annotation() -> None:
    server = Server("s")

    @server.tool()
    async def plain(ctx, arguments):  # type: ignore[no-untyped-def]
        return ""

    @server.tool()
    async def mapping(ctx: RequestContext, arguments: "Mapping[str, Any]") -> str:
        return ""

    assert server.tools["plain"].input_schema == server.tools["mapping"].input_schema == {"type": "object"}


def test_an_unannotated_parameter_needs_an_explicit_schema() -> None:
    async def vague(ctx: Any, *, what):  # type: ignore[no-untyped-def]
        return what

    with pytest.raises(TypeError, match=r"parameters \['what'\] have no annotation"):
        TypedTool(vague, "vague")
    assert TypedTool(vague, "vague", schema_given=True).parameters[0].annotation is Any


def make_server() -> Server:
    server = Server("typed")

    @server.tool()
    async def move(ctx: RequestContext, *, who: Person, to: Point, colour: Colour = Colour.RED) -> Point:
        assert isinstance(who, Person) and isinstance(who.address, Address) and isinstance(colour, Colour)
        return {"x": to["x"] + 1, "y": to["y"], "label": f"{who.name} in {colour.value}"}

    @server.tool()
    async def whois(ctx: RequestContext, *, name: str) -> Person:
        return Person(name=name, address=Address(street="Main"))

    @server.tool()
    async def greet(ctx: RequestContext, *, name: str, times: int = 1) -> str:
        return " ".join([f"hello {name}"] * times)

    @server.tool(input_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}})
    async def explicit(ctx: RequestContext, *, n: int = 0) -> str:
        return str(n)

    return server


def test_the_derived_schemas_are_what_the_registry_lists() -> None:
    server = make_server()
    assert valid(server.tools["move"].input_schema) == {
        "type": "object",
        "properties": {
            "who": json_schema(Person),
            "to": json_schema(Point),
            "colour": {"type": "string", "enum": ["red", "blue"], "default": "red"},
        },
        "required": ["who", "to"],
        "additionalProperties": False,
    }
    assert server.tools["move"].output_schema == json_schema(Point)
    assert server.tools["whois"].output_schema == json_schema(Person)
    assert server.tools["greet"].output_schema is None
    # an explicit schema wins over the derived one
    assert server.tools["explicit"].input_schema == {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0}},
    }
    with pytest.raises(KeyError):
        server.tools["nothing"]


async def test_arguments_arrive_structured_and_results_go_out_structured() -> None:
    async with memory_session_pair(make_server()) as client:
        await client.list_tools()  # the client checks results against the output schemas
        who = {"name": "Ada", "address": {"street": "Main", "city": "Bergen"}}
        result = await client.call_tool("move", {"who": who, "to": {"x": 1, "y": 2}, "colour": "blue"})
        assert result.structured_content == {"x": 2.0, "y": 2, "label": "Ada in blue"}
        person = await client.call_tool("whois", {"name": "Grace"})
        assert person.structured_content == {
            "name": "Grace",
            "address": {"street": "Main", "city": "Oslo"},
            "tags": [],
        }
        assert person.content == [
            TextContent(text='{"name": "Grace", "address": {"street": "Main", "city": "Oslo"}, "tags": []}')
        ]
        assert (await client.call_tool("greet", {"name": "Lin", "times": 2})).content == [
            TextContent(text="hello Lin hello Lin")
        ]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"name": "Lin", "times": "2"}, "times"),
        ({"name": "Lin", "times": 2.5}, "times"),
        ({"name": 3}, "name"),
        ({}, "name"),
        ({"name": "Lin", "extra": 1}, "extra"),
    ],
)
async def test_arguments_that_do_not_fit_are_an_error_the_model_reads(arguments: dict[str, Any], problem: str) -> None:
    async with memory_session_pair(make_server()) as client:
        result = await client.call_tool("greet", arguments)
    assert result.is_error
    assert isinstance(result.content[0], TextContent)
    assert result.content[0].text.startswith("Invalid arguments for tool 'greet': ")
    assert problem in result.content[0].text


@pytest.mark.parametrize(
    ("value", "annotation", "problem"),
    [
        ("3", int, "times: expected integer"),
        (True, int, "times: expected integer"),
        (True, float, "times: expected number"),
        (1, str, "times: expected string"),
        (1, bool, "times: expected boolean"),
        ({"street": 1}, Address, "times.street: expected string"),
        ({"street": "a", "zip": 1}, Address, "times"),
    ],
)
async def test_the_structuring_is_strict_without_the_validation_extra_too(
    value: Any, annotation: Any, problem: str
) -> None:
    # the registry checks the schema first when jsonschema is installed; the
    # converter alone must refuse the same inputs
    async def fn(ctx: Any, *, times: Any) -> str:
        return repr(times)

    fn.__annotations__["times"] = annotation
    tool = TypedTool(fn, "fn")
    from mcp_ref import ToolError

    with pytest.raises(ToolError, match=problem):
        await tool(None, {"times": value})


async def test_a_handler_may_still_return_a_whole_result() -> None:
    async def fn(ctx: Any, *, x: int) -> Point:
        return CallToolResult(content=[TextContent(text="no")], is_error=True)  # type: ignore[return-value]

    result = await TypedTool(fn, "fn")(None, {"x": 1})
    assert isinstance(result, CallToolResult) and result.is_error


async def test_whole_numbers_sent_as_floats_are_integers() -> None:
    async def fn(ctx: Any, *, n: int) -> str:
        return repr(n)

    assert await TypedTool(fn, "fn")(None, {"n": 3.0}) == "3"


# -- prompts and resource templates -------------------------------------------------------


def prompt_server() -> Server:
    server = Server("typed-prompts")

    @server.prompt()
    async def ask(ctx: RequestContext, *, city: Annotated[str, "where"], style: str | None = None) -> str:
        return f"Weather in {city}, {style or 'briefly'}?"

    @server.resource_template("weather://{city}/{?units}", mime_type="text/plain")
    async def report(ctx: RequestContext, *, city: str, units: str = "metric") -> str:
        return f"sunny in {city} ({units})"

    return server


async def test_a_typed_prompt_declares_its_arguments_and_gets_them_by_name() -> None:
    async with memory_session_pair(prompt_server()) as client:
        (prompt,) = (await client.list_prompts()).prompts
        assert [(a.name, a.description, a.required) for a in prompt.arguments or []] == [
            ("city", "where", True),
            ("style", None, False),
        ]
        result = await client.get_prompt("ask", {"city": "Oslo"})
        assert result.messages[0].content == TextContent(text="Weather in Oslo, briefly?")


async def test_a_typed_template_gets_its_variables_by_name() -> None:
    async with memory_session_pair(prompt_server()) as client:
        assert (await client.read_resource("weather://Oslo/")).contents[0].text == "sunny in Oslo (metric)"  # type: ignore[union-attr]
        both = await client.read_resource("weather://Oslo/?units=imperial")
        assert both.contents[0].text == "sunny in Oslo (imperial)"  # type: ignore[union-attr]


def test_typed_prompts_and_templates_take_strings_named_as_declared() -> None:
    server = Server("s")

    async def counted(ctx: RequestContext, *, n: int) -> str:
        return ""

    with pytest.raises(TypeError, match="parameter 'n' is int, but these values are strings on the wire"):
        server.prompt()(counted)

    async def other(ctx: RequestContext, *, town: str) -> str:
        return ""

    with pytest.raises(TypeError, match=r"has the variables \['city'\], but 'other' takes \['town'\]"):
        server.resource_template("weather://{city}")(other)

    async def positional(ctx: RequestContext, uri: str) -> str:
        return ""

    # (ctx, uri, variables) is the classic form: (ctx, uri) takes a variable named uri
    with pytest.raises(TypeError, match=r"has the variables \['city'\], but 'positional' takes \['uri'\]"):
        server.resource_template("weather://{city}")(positional)


# -- return types, checked at registration --------------------------------------------------


@dataclasses.dataclass
class Reading:
    city: str
    celsius: float = dataclasses.field(default=0.0, metadata={"description": "temperature"})


class NotJson:
    pass


@pytest.mark.parametrize(
    ("returns", "message"),
    [
        ("complex", r"tool 'f' returns complex, which is never sent: a tool returns str, a dict"),
        ("None", r"tool 'f' returns None, which"),
        ("NotJson", r"tool 'f' returns NotJson"),
        ("set[str]", r"returns set\[str\]"),
        ("list[NotJson]", r"tool 'f': return type list\[NotJson\]: NotJson has no JSON Schema here"),
        ("list[str] | str", r"mixes structured content with other results"),
        ("int | None", r"returns None \(in int \| None\)"),
        ("TextContent", r"returns TextContent, which"),
        ("Reading | str", r"mixes structured content with other results"),
        ("Reading | Address", r"mixes structured content with other results"),
    ],
)
@pytest.mark.parametrize(
    "form", ["(ctx: RequestContext, *, x: int)", "(ctx: RequestContext, arguments: dict[str, Any])"]
)
def test_a_tool_whose_result_could_never_be_sent_is_refused_at_registration(
    form: str, returns: str, message: str
) -> None:
    # it used to register, then fail every call with an internal error (-32603)
    server = Server("s")
    space: dict[str, Any] = {"RequestContext": RequestContext, "Any": Any, "NotJson": NotJson}
    space |= {"Reading": Reading, "Address": Address, "TextContent": TextContent}
    exec(f"async def f{form} -> {returns}: ...", space)
    with pytest.raises(TypeError, match=message):
        server.tool()(space["f"])
    assert server.tools.names() == []


@pytest.mark.parametrize(
    "returns",
    [
        "str",
        "dict[str, Any]",
        "list[TextContent]",
        "list[ContentBlock]",
        "CallToolResult",
        "Reading | CallToolResult",
        "Any",
    ],
)
def test_what_a_tool_may_return_is_accepted(returns: str) -> None:
    server = Server("s")
    space: dict[str, Any] = {"RequestContext": RequestContext, "Any": Any, "Reading": Reading}
    space |= {"TextContent": TextContent, "ContentBlock": ContentBlock, "CallToolResult": CallToolResult}
    exec(f"async def f(ctx: RequestContext, *, x: int) -> {returns}: ...", space)
    server.tool()(space["f"])
    assert server.tools["f"].output_schema == (json_schema(Reading) if "Reading" in returns else None)


WRAPPED = [
    # (return annotation, what the tool returns, its structuredContent's "result", that value's schema)
    ("list[str]", ["a", "b"], ["a", "b"], {"type": "array", "items": {"type": "string"}}),
    ("list[Reading]", [Reading("Oslo", 3.5)], [{"city": "Oslo", "celsius": 3.5}], {"type": "array"}),
    ("Sequence[int]", (1, 2), [1, 2], {"type": "array", "items": {"type": "integer"}}),
    ("int", 3, 3, {"type": "integer"}),
    ("float", 2.5, 2.5, {"type": "number"}),
    ("bool", False, False, {"type": "boolean"}),
    ("Colour", Colour.RED, "red", {"type": "string", "enum": ["red", "blue"]}),
]


@pytest.mark.parametrize(("returns", "value", "result", "schema"), WRAPPED, ids=[w[0] for w in WRAPPED])
@pytest.mark.parametrize(
    "form", ["(ctx: RequestContext, *, x: int)", "(ctx: RequestContext, arguments: dict[str, Any])"]
)
@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
async def test_a_plain_json_result_is_structured_content_wrapped_as_result_in_every_revision(
    revision: str, form: str, returns: str, value: Any, result: Any, schema: dict[str, Any]
) -> None:
    # the official SDK's shape: an object in every revision, as 2025 requires (2026-07-28 would
    # take the bare value; one tool reads the same to every client: spec_notes/server/tools.md)
    server = Server("s")
    space: dict[str, Any] = {"RequestContext": RequestContext, "Any": Any, "Sequence": Sequence}
    space |= {"Reading": Reading, "Colour": Colour, "value": value}
    exec(f"async def f{form} -> {returns}: return value", space)
    server.tool()(space["f"])
    output_schema = valid(server.tools["f"].output_schema or {})
    assert output_schema["required"] == ["result"] and output_schema["additionalProperties"] is False
    assert output_schema["type"] == "object" and list(output_schema["properties"]) == ["result"]
    assert schema.items() <= output_schema["properties"]["result"].items()
    async with memory_session_pair(server, protocol_version=revision) as client:
        assert client.protocol_version == revision
        (tool,) = (await client.list_tools()).tools
        called = await client.call_tool("f", {"x": 1})
    assert not called.is_error
    text = [TextContent(text=json.dumps({"result": result}))]
    if revision in ("2025-03-26", "2024-11-05"):
        # no structured content nor output schemas yet: the JSON text alone (tools#15)
        assert tool.output_schema is None and called.structured_content is None
    else:
        assert tool.output_schema == output_schema
        assert called.structured_content == {"result": result}
    assert called.content == text


async def test_a_plain_json_result_may_also_be_an_error_result() -> None:
    server = Server("s")

    @server.tool()
    async def names(ctx: RequestContext, *, fail: bool) -> list[str] | CallToolResult:
        if fail:
            return CallToolResult(content=[TextContent(text="no names today")], is_error=True)
        return ["Ada"]

    async with memory_session_pair(server) as client:
        assert (await client.call_tool("names", {"fail": False})).structured_content == {"result": ["Ada"]}
        failed = await client.call_tool("names", {"fail": True})
    assert failed.is_error and failed.structured_content is None


async def test_a_dataclass_result_is_structured_content_in_both_forms() -> None:
    server = Server("s")

    @server.tool()
    async def typed(ctx: RequestContext, *, city: str) -> Reading:
        return Reading(city, 21.5)

    @server.tool()
    async def classic(ctx: RequestContext, arguments: dict[str, Any]) -> Reading:
        return Reading(arguments["city"])

    assert (
        server.tools["typed"].output_schema
        == server.tools["classic"].output_schema
        == {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "celsius": {"type": "number", "description": "temperature", "default": 0.0},
            },
            "required": ["city"],
            "additionalProperties": False,
        }
    )
    async with memory_session_pair(server) as client:
        assert (await client.call_tool("typed", {"city": "Oslo"})).structured_content == {
            "city": "Oslo",
            "celsius": 21.5,
        }
        assert (await client.call_tool("classic", {"city": "Rome"})).structured_content == {
            "city": "Rome",
            "celsius": 0.0,
        }


@pytest.mark.parametrize(
    ("kind", "returns", "message"),
    [
        (
            "prompt",
            "int",
            r"prompt 'f' returns int, which is never sent: a prompt returns str, a list of PromptMessage or a "
            "GetPromptResult",
        ),
        ("prompt", "list[str]", r"prompt 'f' returns list\[str\]"),
        ("resource", "int", r"resource 'file:///r' returns int, which is never sent: a resource returns str, bytes"),
        ("resource_template", "dict[str, str]", r"resource 'file:///\{x\}' returns dict\[str, str\]"),
    ],
)
def test_prompts_and_resources_whose_result_could_never_be_sent_are_refused(
    kind: str, returns: str, message: str
) -> None:
    server = Server("s")
    space: dict[str, Any] = {"RequestContext": RequestContext}
    params = {"prompt": "arguments: dict[str, str]", "resource": "", "resource_template": "uri: str, variables: dict"}
    exec(f"async def f(ctx: RequestContext, {params[kind]}) -> {returns}: ...", space)
    decorator: Any = {
        "prompt": server.prompt(),
        "resource": server.resource("file:///r"),
        "resource_template": server.resource_template("file:///{x}"),
    }[kind]
    with pytest.raises(TypeError, match=message):
        decorator(space["f"])


def test_prompts_and_resources_that_return_what_they_may_are_accepted() -> None:
    server = Server("s")

    @server.prompt()
    async def chat(ctx: RequestContext, *, city: str) -> list[PromptMessage]:
        return []

    @server.resource("file:///r")
    async def data(ctx: RequestContext) -> bytes | list[TextResourceContents]:
        return b""

    assert len(server.prompts) == len(server.resources) == 1


def test_an_annotation_only_a_type_checker_can_resolve_is_not_checked() -> None:
    # `from __future__ import annotations` with a name imported under TYPE_CHECKING: the
    # registration goes on (the check needs the type; the handler is what it is)
    server = Server("s")
    space: dict[str, Any] = {}
    exec("async def f(ctx: 'Ctx', arguments: 'Args') -> 'Out': ...", space)
    server.tool()(space["f"])
    assert server.tools["f"].output_schema is None


# -- every registration error names what is registered ------------------------------------------


class NoJson:
    pass


@dataclasses.dataclass
class Holder:
    inner: NoJson


async def a_tool(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    return ""


async def a_reader(ctx: RequestContext) -> str:
    return ""


async def a_template(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
    return ""


async def no_context(x: str) -> str:
    return ""


async def kwargs_tool(ctx: RequestContext, **kw: str) -> str:
    return ""


async def bad_parameter(ctx: RequestContext, *, x: NoJson) -> str:
    return ""


async def bad_field(ctx: RequestContext, *, x: int) -> Holder:
    return Holder(NoJson())


async def bad_items(ctx: RequestContext, *, x: int) -> list[NoJson]:
    return []


@pytest.mark.parametrize(
    ("register", "error", "message"),
    [
        # the shape the data model checks (FieldValueError), like the dialect's check (InvalidSchema)
        (
            lambda s: s.tool("t", input_schema={"type": "obj"})(a_tool),
            ValueError,
            "tool 't': inputSchema.type: expected one of 'object'",
        ),
        (
            lambda s: s.tool("t", input_schema={"type": "object", "required": "a"})(a_tool),
            ValueError,
            "tool 't': inputSchema.required: expected array",
        ),
        (
            lambda s: s.tool("t", input_schema={"type": "array"})(a_tool),
            ValueError,
            "tool 't': inputSchema.type: expected one of 'object'",
        ),
        (
            lambda s: s.tool("t", output_schema={"type": "object", "properties": []})(a_tool),
            ValueError,
            "tool 't': outputSchema.properties: expected object",
        ),
        (
            lambda s: s.tool("t", input_schema={"type": "object", "properties": {"a": {"type": "strin"}}})(a_tool),
            ValueError,
            "tool 't': inputSchema: properties.a.type: 'strin' is not a JSON Schema type",
        ),
        # annotations with no JSON form: the parameter, the result and the field
        (lambda s: s.tool("t")(bad_parameter), TypeError, "tool 't': parameter 'x': NoJson has no JSON Schema"),
        (lambda s: s.tool("t")(bad_field), TypeError, "tool 't': return type Holder: Holder.inner: NoJson has no"),
        (lambda s: s.tool("t")(bad_items), TypeError, "tool 't': return type list[NoJson]: NoJson has no"),
        # the handler's shape, named by what it is registered as (not the function's name)
        (lambda s: s.tool("t")(no_context), TypeError, "tool 't': the first parameter receives the request context"),
        (lambda s: s.tool("t")(kwargs_tool), TypeError, "tool 't': **kw has no schema"),
        (lambda s: s.prompt("p")(no_context), TypeError, "prompt 'p': the first parameter receives"),
        (
            lambda s: s.resource_template("file:///{x}")(no_context),
            TypeError,
            "resource template 'file:///{x}': the first parameter receives",
        ),
        # what the registries check
        (lambda s: s.resource("not a uri")(a_reader), ValueError, "resource 'not a uri': not an absolute URI"),
        (
            lambda s: s.resource_template("file:///{x}", completers={"y": a_reader})(a_template),  # type: ignore[dict-item]
            ValueError,
            "resource template 'file:///{x}': completers for variables it does not have: ['y']",
        ),
        (
            lambda s: s.prompt("p", completers={"y": a_reader})(a_tool),  # type: ignore[dict-item]
            ValueError,
            "prompt 'p': completers for arguments it does not declare: ['y']",
        ),
        (
            lambda s: s.prompt("p", arguments=[{"name": "a"}])(a_tool),
            TypeError,
            "prompt 'p': arguments[0] is a PromptArgument, not {'name': 'a'}",
        ),
    ],
)
def test_every_registration_error_names_what_is_registered_and_where(
    register: Any, error: type[Exception], message: str
) -> None:
    server = Server("s")
    with pytest.raises(error) as caught:
        register(server)
    assert str(caught.value).startswith(message), str(caught.value)
    assert len(server.tools) == len(server.prompts) == len(server.resources) == 0
