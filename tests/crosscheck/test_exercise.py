"""What the battery calls on a server it knows nothing about (``mcp_ref.crosscheck.exercise``).

The arguments made from a schema must be accepted by that schema (checked
with mcp_ref's own JSON Schema validator), the invalid ones refused by it.
"""

from typing import Any

import pytest

from mcp_ref.basic.json_schema import compile_schema
from mcp_ref.crosscheck.exercise import (
    WORD,
    arguments_for,
    expand_template,
    invalid_arguments_for,
    safe_to_call,
    why_not_safe,
)
from mcp_ref.schema.tools import Tool, ToolAnnotations

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object"},
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 3, "maximum": 9},
            "x": {"type": "number", "exclusiveMinimum": 0.5},
            "flag": {"type": "boolean"},
            "when": {"type": "string", "format": "date-time"},
            "color": {"enum": ["red", "green"]},
            "tags": {"type": "array", "items": {"type": "string", "minLength": 20}, "minItems": 2},
            "inner": {"type": "object", "properties": {"k": {"const": 4}}, "required": ["k"]},
            "either": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
        },
        "required": ["n", "x", "flag", "when", "color", "tags", "inner", "either"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
        "properties": {"at": {"$ref": "#/$defs/point"}},
        "required": ["at"],
    },
    {"type": "object", "allOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]}]},
    {"type": "object", "properties": {"city": {"type": "string", "default": "Oslo"}}, "required": ["city"]},
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_the_arguments_made_fit_the_schema(schema: dict[str, Any]) -> None:
    arguments = arguments_for(schema)
    assert arguments is not None
    validate = compile_schema(schema)
    assert validate is not None and validate(arguments) == [], arguments


def test_defaults_consts_and_enums_come_first() -> None:
    assert arguments_for(SCHEMAS[5]) == {"city": "Oslo"}
    made = arguments_for(SCHEMAS[2])
    assert made is not None and made["color"] == "red" and made["inner"] == {"k": 4} and made["n"] == 3
    assert arguments_for(SCHEMAS[1]) == {"text": WORD}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[0-9]{4}$"}}, "required": ["id"]},
        {"type": "object", "properties": {"v": {"not": {"type": "string"}}}, "required": ["v"]},
        {"type": "object", "properties": {"r": {"$ref": "https://example.com/s.json"}}, "required": ["r"]},
        {"type": "object", "properties": {"i": {"type": "integer", "minimum": 1.5, "maximum": 1.7}}, "required": ["i"]},
        "not a schema",
    ],
)
def test_no_arguments_where_the_schema_asks_for_what_cannot_be_made(schema: Any) -> None:
    assert arguments_for(schema) is None


@pytest.mark.parametrize("schema", SCHEMAS[1:4])
def test_the_invalid_arguments_are_refused_by_the_schema(schema: dict[str, Any]) -> None:
    bad = invalid_arguments_for(schema)
    assert bad is not None
    arguments, how = bad
    validate = compile_schema(schema)
    assert validate is not None and validate(arguments), (arguments, how)


def test_a_schema_that_accepts_anything_has_no_invalid_arguments() -> None:
    assert invalid_arguments_for({"type": "object"}) is None


def test_only_tools_the_server_marks_read_only_are_safe_to_call() -> None:
    schema = {"type": "object"}
    read_only = Tool(name="look", input_schema=schema, annotations=ToolAnnotations(read_only_hint=True))
    plain = Tool(name="do", input_schema=schema)
    writes = Tool(name="write", input_schema=schema, annotations=ToolAnnotations(read_only_hint=False))
    deletes = Tool(name="rm", input_schema=schema, annotations=ToolAnnotations(destructive_hint=True))
    assert safe_to_call(read_only)
    assert [safe_to_call(t) for t in (plain, writes, deletes)] == [False, False, False]
    assert [why_not_safe(t) for t in (plain, writes, deletes)] == [
        "no annotations",
        "marked not read-only",
        "marked destructive",
    ]


@pytest.mark.parametrize(
    "template, uri",
    [
        ("file:///{path}", f"file:///{WORD}"),
        ("db://{table}/{id}", f"db://{WORD}/{WORD}"),
        ("api://x{?q,page}", f"api://x?q={WORD}&page={WORD}"),
        ("api://x{/a,b}", f"api://x/{WORD}/{WORD}"),
        ("api://x{#frag}", f"api://x#{WORD}"),
        ("plain://nothing", "plain://nothing"),
    ],
)
def test_templates_are_expanded_with_one_value_per_variable(template: str, uri: str) -> None:
    assert expand_template(template) == uri
