"""The fast validation path agrees with jsonschema (basic/index#json-schema-usage)."""

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

jsonschema = pytest.importorskip("jsonschema", reason="the validation extra (jsonschema) is not installed")

from mcp_ref.basic.json_schema import InvalidSchema, compile_schema, fast_check  # noqa: E402

META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
TYPES = ["object", "array", "string", "integer", "number", "boolean", "null"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abcd"), inner, max_size=4),
    max_leaves=10,
)


def schemas(depth: int = 2) -> st.SearchStrategy[Any]:
    """Schemas in the fast path's subset, plus now and then a keyword outside it."""
    leaf = st.fixed_dictionaries({}, optional={"type": st.sampled_from(TYPES), "description": st.text(max_size=3)})
    if depth == 0:
        return leaf | st.just(True)
    return st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(TYPES),
            "properties": st.dictionaries(st.sampled_from("abcd"), schemas(depth - 1), max_size=3),
            "required": st.lists(st.sampled_from("abcd"), max_size=3, unique=True),
            "additionalProperties": st.booleans(),
            "title": st.text(max_size=3) | st.integers(),  # an int title is an invalid schema
            "readOnly": st.booleans() | st.just("yes"),
            "minimum": st.integers(),  # outside the subset: jsonschema alone decides
        },
    )


@pytest.mark.req("basic/index#24")
@settings(max_examples=300)
@given(
    schema=schemas(),
    required=st.lists(st.sampled_from("ab"), max_size=3),
)
def test_a_schema_with_a_fast_check_is_a_valid_schema(schema: dict[str, Any], required: list[str]) -> None:
    schema = {**schema, "required": required}  # duplicates make an invalid schema
    check = fast_check(schema)
    valid = META.is_valid(schema)
    if check is not None:
        assert valid
    if not valid:
        with pytest.raises(InvalidSchema):
            compile_schema(schema)


@pytest.mark.req("server/tools#20")
@settings(max_examples=400)
@given(schema=schemas(), instance=json_values)
def test_fast_path_never_accepts_what_jsonschema_refuses(schema: dict[str, Any], instance: Any) -> None:
    reference = jsonschema.Draft202012Validator(schema)
    check = fast_check(schema)
    if "minimum" in schema:
        assert check is None
    if check is not None and check(instance):
        assert reference.is_valid(instance)
    if not META.is_valid(schema):
        return  # covered by the next test: refused at compile time
    # and what compile_schema answers is exactly jsonschema's verdict, fast path or not
    validate = compile_schema(schema)
    assert validate is not None
    assert (validate(instance) == []) == reference.is_valid(instance)


@pytest.mark.req("server/tools#20")
def test_fast_path_covers_the_usual_tool_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "what to echo"}, "n": {"type": "integer"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    check = fast_check(schema)
    assert check is not None
    assert check({"text": "x", "n": 3})
    assert not check({"text": "x", "extra": 1})
    assert not check({"n": 3})
    assert not check({"text": 1})
    assert not check({"text": "x", "n": True})  # a boolean is not an integer
    validate = compile_schema(schema)
    assert validate is not None
    assert validate({"text": "x", "n": 2.0}) == []  # 2020-12: 2.0 is an integer; jsonschema says so
    assert validate({"n": 3}) == ["(root): 'text' is a required property"]


def test_other_dialects_and_keywords_take_the_general_path() -> None:
    assert fast_check({"type": "object", "$defs": {}}) is None
    assert fast_check({"type": ["string", "null"]}) is None
    assert fast_check({"anyOf": [{"type": "string"}]}) is None
    assert fast_check({"properties": {"a": False}}) is None


def test_jsonschema_is_imported_only_when_an_instance_fails_the_fast_check() -> None:
    """A server whose tools have plain schemas starts without loading jsonschema."""
    code = """
import sys
from mcp_ref.basic.json_schema import compile_schema
validate = compile_schema({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
assert validate({"text": "x"}) == []
assert "jsonschema" not in sys.modules
assert validate({}) == ["(root): 'text' is a required property"]
assert "jsonschema" in sys.modules
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
