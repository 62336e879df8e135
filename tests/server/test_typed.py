"""Typed tools: schemas derived from annotations, arguments structured, results as structured content."""

import enum
from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

import attrs
import jsonschema
import pytest

from mcp_ref import RequestContext, Server
from mcp_ref.schema.content import TextContent
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

    assert not is_typed_handler(classic)
    assert is_typed_handler(hello) and is_typed_handler(nothing)
    with pytest.raises(TypeError, match=r"\(ctx, arguments\), or \(ctx, \*, name: type, ...\)"):
        is_typed_handler(positional)


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

    with pytest.raises(TypeError, match=r"a handler is \(ctx, uri, variables\), or \(ctx, \*, name: type, ...\)"):
        server.resource_template("weather://{city}")(positional)
