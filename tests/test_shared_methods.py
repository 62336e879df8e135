"""Records outside the data model (the raw JSON-RPC messages, rules, registry entries)
share the model's repr, eq and hash instead of compiling their own at import (bench W7);
they behave as the ones attrs would generate, mutable ones unhashable as with attrs."""

import functools
from typing import Any

import attrs
import pytest

from mcp_ref.basic.jsonrpc import RawError, RawNotification, RawRequest, RawResult
from mcp_ref.basic.requirements import Rule
from mcp_ref.basic.utilities.tasks import TaskRecord
from mcp_ref.connection import IncomingRequest, OutgoingRequest
from mcp_ref.schema import Prompt, Resource, Tool
from mcp_ref.schema._converter import wire_fields
from mcp_ref.server import prompts, resources, tools, typed, uri_template
from mcp_ref.session import core

from .test_events import _hashable


async def _fn(*args: Any) -> Any:
    return None


_TOOL = Tool(name="t", input_schema={"type": "object"})
_PROMPT = Prompt(name="p")

#: pairs of records of one class (equal ones are two objects)
FROZEN = [
    (RawRequest(id=1, method="ping", params=None, obj={}), RawRequest(id="1", method="ping", params=None, obj={})),
    (RawNotification(method="m", params={"a": 1}, obj={}), RawNotification(method="m", params={"a": 1}, obj={})),
    (RawResult(id=1, result={}), RawResult(id=2, result={})),
    tuple(RawError(id=None, code=-1, message="m", data=None, has_data=False) for _ in "ab"),
    (Rule(id="a#1", level="MUST", what="w"), Rule(id="a#1", level="MUST", what="w", judged_as="SHOULD")),
    (uri_template._OPS["+"], uri_template._OPS["#"]),
    tuple(typed._Parameter(name="a", annotation=int, required=True) for _ in "ab"),
    (wire_fields(Tool)[0], wire_fields(Tool)[1]),
    (core.SessionConfig(), core.SessionConfig(request_timeout=1)),
    tuple(core._Closed("eof") for _ in "ab"),
    (core._Cancelled(None), core._Cancelled("why")),
    tuple(core._Probe(mode="url") for _ in "ab"),
]
MUTABLE = [
    tuple(tools._Entry(tool=_TOOL, fn=_fn, validate_input=None, validate_output=None) for _ in "ab"),
    (
        prompts._Entry(prompt=_PROMPT, fn=_fn, completers={}),
        prompts._Entry(prompt=_PROMPT, fn=_fn, completers={"a": _fn}),
    ),
    tuple(resources._Static(resource=Resource(uri="file:///r", name="r"), read=_fn) for _ in "ab"),
    tuple(OutgoingRequest(1, "ping", None, None, False) for _ in "ab"),
    (IncomingRequest(1, "ping", None, False), IncomingRequest(1, "ping", None, True)),
    tuple(TaskRecord("t", None, "tools/call", "working", 0.0, 0.0, None, None, None) for _ in "ab"),
]


@functools.cache
def _generated(cls: Any, frozen: bool) -> Any:
    """A class with the fields of ``cls`` where attrs generates repr, eq and hash itself."""
    return attrs.make_class(cls.__name__, {a.name: attrs.field() for a in attrs.fields(cls)}, frozen=frozen)


def _twin(value: object, *, frozen: bool) -> object:
    cls: Any = type(value)
    return _generated(cls, frozen)(**{a.name: getattr(value, a.name) for a in attrs.fields(cls)})


@pytest.mark.parametrize(("a", "b", "frozen"), [(a, b, True) for a, b in FROZEN] + [(a, b, False) for a, b in MUTABLE])
def test_repr_eq_and_hash_agree_with_what_attrs_generates(a: object, b: object, frozen: bool) -> None:
    twin_a, twin_b = _twin(a, frozen=frozen), _twin(b, frozen=frozen)
    assert repr(a) == repr(twin_a)
    assert (a == b) is (twin_a == twin_b)
    assert (a != b) is (twin_a != twin_b)
    assert (a == object()) is False
    for value, twin in ((a, twin_a), (b, twin_b)):
        # a dict field: unhashable with attrs too; a mutable record: always
        assert _hashable(value) is _hashable(twin)
    if a == b and _hashable(a):
        assert hash(a) == hash(b)
