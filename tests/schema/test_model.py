"""The shared repr of the model classes prints what attrs would generate."""

import sys

import attrs

import mcp_ref.schema as schema
from mcp_ref.schema import CallToolResult, TextContent


def _model_classes() -> list[type]:
    found = []
    for name, module in list(sys.modules.items()):
        if name.startswith("mcp_ref.schema"):
            for value in vars(module).values():
                if isinstance(value, type) and attrs.has(value) and value.__module__.startswith("mcp_ref.schema"):
                    found.append(value)
    return found


def test_every_model_class_has_a_field_repr() -> None:
    classes = _model_classes()
    assert len(classes) > 140
    assert [c.__name__ for c in classes if c.__repr__ is object.__repr__] == []


def test_repr_matches_what_attrs_generates() -> None:
    value = CallToolResult(content=[TextContent(text="x")], structured_content={"a": 1})
    # the same fields on a class where attrs generates the repr itself
    generated = attrs.make_class(
        "CallToolResult", {a.name: attrs.field(default=None) for a in attrs.fields(CallToolResult)}
    )
    twin = generated(**{a.name: getattr(value, a.name) for a in attrs.fields(CallToolResult)})
    assert repr(value) == repr(twin)
    assert repr(schema.TextContent(text="a")) == "TextContent(type='text', text='a', annotations=None, meta=None)"
