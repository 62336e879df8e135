"""The shared repr, eq and hash of the model classes behave as the ones attrs would generate."""

import functools
import importlib
import math
import sys

import attrs
import pytest

import mcp_ref.schema as schema
from mcp_ref.schema import CallToolResult, ImageContent, ProgressNotificationParams, TextContent, Tool


def _model_classes() -> list[type]:
    for chapter in schema.CHAPTERS:  # (chapters are loaded on first use)
        importlib.import_module(f"mcp_ref.schema.{chapter}")
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


def test_every_model_class_compares_and_hashes_by_value() -> None:
    classes = _model_classes()
    assert [c.__name__ for c in classes if c.__eq__ is object.__eq__ or c.__hash__ is object.__hash__] == []


@functools.cache
def _generated(cls: type) -> type:
    """A class with the fields of ``cls`` where attrs generates eq and hash itself."""
    return attrs.make_class(cls.__name__, {a.name: attrs.field(default=None) for a in attrs.fields(cls)}, frozen=True)


def _attrs_twin(value: object) -> object:
    cls = type(value)
    return _generated(cls)(**{a.name: getattr(value, a.name) for a in attrs.fields(cls)})


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (TextContent(text="x"), TextContent(text="x")),
        (TextContent(text="x"), TextContent(text="y")),
        (TextContent(text="x", meta={"k": 1}), TextContent(text="x", meta={"k": 1})),
        (
            ProgressNotificationParams(progress_token=1, progress=0.5),
            ProgressNotificationParams(progress_token=1, progress=0.5),
        ),
        (
            ProgressNotificationParams(progress_token=1, progress=0.5),
            ProgressNotificationParams(progress_token="1", progress=0.5),
        ),
        (
            CallToolResult(content=[TextContent(text="x")]),
            CallToolResult(content=[TextContent(text="x")], is_error=True),
        ),
    ],
)
def test_eq_and_hash_agree_with_what_attrs_generates(a: object, b: object) -> None:
    twin_a, twin_b = _attrs_twin(a), _attrs_twin(b)
    assert (a == b) is (twin_a == twin_b)
    assert (a != b) is (twin_a != twin_b)
    try:
        hash(twin_a)
    except TypeError:
        # a dict or list field: unhashable with attrs too
        with pytest.raises(TypeError):
            hash(a)
    else:
        if a == b:
            assert hash(a) == hash(b)


def test_eq_needs_the_same_class_and_compares_field_by_field() -> None:
    # the same field values on two different classes are not equal
    image = ImageContent(data="AAAA", mime_type="image/png")
    assert TextContent(text="x") != image
    assert TextContent(text="x") != "x"
    assert (TextContent(text="x") == object()) is False
    nan = math.nan
    a = ProgressNotificationParams(progress_token=1, progress=nan)
    # field by field with ==, as attrs does: not even the same NaN object equals itself
    assert a != ProgressNotificationParams(progress_token=1, progress=nan)
    assert _attrs_twin(a) != _attrs_twin(ProgressNotificationParams(progress_token=1, progress=nan))
    tool = Tool(name="t", input_schema={"type": "object"})
    assert tool == Tool(name="t", input_schema={"type": "object"})
    assert tool != Tool(name="u", input_schema={"type": "object"})
    assert len({TextContent(text="x"), TextContent(text="x"), TextContent(text="y")}) == 2


def test_slot_builder_makes_what_init_makes() -> None:
    # the engine's per-message records (raw messages, events) are made by filling their slots
    from mcp_ref.basic.jsonrpc import RawRequest, RawResult
    from mcp_ref.events import ProgressReceived, RequestReceived, ResponseReceived
    from mcp_ref.schema._base import slot_builder

    cases = [
        (RawRequest, (1, "tools/call", {"name": "t"}, {"id": 1})),
        (RawResult, ("a", {})),
        (RequestReceived, (7, "ping", None, None, "tok")),
        (ResponseReceived, (2, "tools/list", {"x": 1})),
        (ProgressReceived, (3, 4, 0.5, None, "half")),
    ]
    for cls, values in cases:
        built = slot_builder(cls)(*values)
        made = cls(*values)
        assert type(built) is cls
        assert built == made and repr(built) == repr(made)
        if not any(isinstance(v, dict) for v in values):
            assert hash(built) == hash(made)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            built.__setattr__(attrs.fields(cls)[0].name, None)


def test_slot_builder_refuses_a_class_whose_init_does_more() -> None:
    from mcp_ref.schema._base import slot_builder
    from mcp_ref.schema.jsonrpc import RequestParams

    with pytest.raises(TypeError, match=r"RequestParams\.__init__ does more than set its fields"):
        slot_builder(RequestParams)  # its _meta validator
