"""Hypothesis strategies derived from the model's own annotations.

``values(tp, revision)`` generates instances of any annotation of the data
model as that revision sees it: fields newer than the revision stay unset,
fields whose type changed use the older type, union members the revision
lacks are never chosen. Everything is generic (read from ``wire_fields``);
the few places where a type alone does not say what is valid are listed in
:data:`CONSTRAINED` and :data:`UNION_AMBIGUOUS` with the reason.
"""

import functools
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

import attrs
from hypothesis import strategies as st

from mcp_ref.schema._base import LAZY_TYPES, Narrowed
from mcp_ref.schema._converter import lazy_target, wire_fields
from mcp_ref.schema.elicitation import LegacyTitledEnumSchema
from mcp_ref.schema.jsonrpc import RequestParams
from mcp_ref.schema.lifecycle import ClientCapabilities, ServerCapabilities
from mcp_ref.schema.mrtr import InputRequiredResult
from mcp_ref.schema.subscriptions import SubscriptionsListenResult
from mcp_ref.schema.tools import Tool

from ._spec import exists_in_revision as exists_in

__all__ = ["values", "json_values", "JSON_KEYS", "EVERY"]

#: a pseudo-revision for :func:`values`: instances that use every field and class of
#: every revision (what encoding for one revision must leave out or refuse)
EVERY = "every"

_NoneType = type(None)

#: object keys for generated JSON (never a key the model or a discriminator reads)
JSON_KEYS = st.text(alphabet="abcdefgh", min_size=1, max_size=4).map(lambda s: "x-" + s)

_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=6)
_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)

#: any JSON value (small)
json_values: st.SearchStrategy[Any] = st.recursive(
    _scalars | _floats,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JSON_KEYS, inner, max_size=3),
    max_leaves=6,
)
json_objects = st.dictionaries(JSON_KEYS, json_values, max_size=3)
_EXTENSION_IDS = st.sampled_from(["io.modelcontextprotocol/tasks", "com.example/ui", "dev.x.y/z"])


def _object_schema() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={
            "properties": st.dictionaries(st.text(max_size=5), json_objects, max_size=3),
            "required": st.lists(st.text(max_size=5), max_size=3),
            "$schema": st.sampled_from(
                ["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#"]
            ),
            "additionalProperties": st.booleans(),
        },
    )


def _request_meta(revision: str) -> st.SearchStrategy[dict[str, Any]]:
    optional: dict[str, st.SearchStrategy[Any]] = {
        "progressToken": st.text(max_size=6) | st.integers(-(2**53), 2**53),
        "x-ext": json_values,
    }
    if revision < "2026-07-28":
        return st.fixed_dictionaries({}, optional=optional)
    # 2026-07-28 (and EVERY): the request _meta names its revision and the client's capabilities
    from mcp_ref.schema import encode
    from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation

    rev = "2026-07-28"
    return st.fixed_dictionaries(
        {
            "io.modelcontextprotocol/protocolVersion": st.sampled_from(["2026-07-28", "2025-11-25"]),
            "io.modelcontextprotocol/clientCapabilities": values(ClientCapabilities, rev).map(lambda c: encode(c, rev)),
        },
        optional={
            **optional,
            "io.modelcontextprotocol/clientInfo": values(Implementation, rev).map(lambda i: encode(i, rev)),
            "io.modelcontextprotocol/logLevel": st.sampled_from(["debug", "error"]),
            "traceparent": st.just("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"),
        },
    )


def _listen_result_meta() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"io.modelcontextprotocol/subscriptionId": st.text(max_size=4) | st.integers(0, 9)},
        optional={"x-ext": json_values},
    )


#: (class, attribute) -> strategy, where a validator narrows what the type says
CONSTRAINED: dict[tuple[type, str], Callable[[], st.SearchStrategy[Any]]] = {
    # JSON Schema objects held as dicts: "type" must be "object"
    (Tool, "input_schema"): _object_schema,
    (Tool, "output_schema"): _object_schema,
    # [2026-07-28:schema#21] inputRequests or requestState: here always the state
    (InputRequiredResult, "request_state"): lambda: st.text(max_size=8),
    (SubscriptionsListenResult, "meta"): _listen_result_meta,
    # the keys of extensions follow the _meta grammar with a prefix
    (ClientCapabilities, "extensions"): lambda: st.dictionaries(_EXTENSION_IDS, json_objects, max_size=2),
    (ServerCapabilities, "extensions"): lambda: st.dictionaries(_EXTENSION_IDS, json_objects, max_size=2),
}

#: optional fields a validator of the class needs set (here: one of two)
ALWAYS_SET = frozenset({(InputRequiredResult, "request_state")})

#: union member -> condition its values meet to be told apart from another member
#: (an untitled enum with no enumNames reads as UntitledSingleSelectEnumSchema)
UNION_AMBIGUOUS: dict[type, Callable[[Any], bool]] = {
    LegacyTitledEnumSchema: lambda v: v.enum_names is not None,
}


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


@functools.cache
def values(tp: Any, revision: str) -> st.SearchStrategy[Any]:
    """Instances of annotation ``tp`` valid in ``revision``."""
    if tp is Any or tp is object:
        return json_values
    if isinstance(tp, Narrowed):
        return values(tp.base, revision).filter(tp.check)
    if tp in LAZY_TYPES:
        return values(lazy_target(tp), revision)
    if tp is _NoneType:
        return st.none()
    if tp is str:
        return st.text(max_size=8)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(-(2**53), 2**53)
    if tp is float:
        return _floats | st.integers(-(2**53), 2**53)
    origin = get_origin(tp)
    if origin is Literal:
        return st.sampled_from(get_args(tp))
    if _is_union(tp):
        members = [m for m in get_args(tp) if exists_in(m, revision)]
        options = []
        for m in members:
            strat = values(m, revision)
            if m in UNION_AMBIGUOUS:
                strat = strat.filter(UNION_AMBIGUOUS[m])
            options.append(strat)
        return st.one_of(options)
    if origin is list:
        return st.lists(st.deferred(lambda: values(get_args(tp)[0], revision)), max_size=3)
    if origin is dict or origin is typing.Mapping or tp is dict:
        args = get_args(tp)
        if len(args) < 2 or args[1] is Any or args[1] is object:
            return json_objects
        return st.dictionaries(st.text(max_size=5), st.deferred(lambda: values(args[1], revision)), max_size=3)
    if attrs.has(tp):
        return _instances(tp, revision)
    raise AssertionError(f"no strategy for {tp!r}")


def _instances(cls: type, revision: str) -> st.SearchStrategy[Any]:
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    known = {f.wire for f in wire_fields(cls)}
    for f in wire_fields(cls):
        a = attrs.fields_dict(cls)[f.name]
        if f.extra:
            kwargs[f.name] = st.dictionaries(JSON_KEYS.filter(lambda k: k not in known), json_values, max_size=2)
            continue
        every = revision == EVERY
        if not every and not f.exists_in(revision):
            continue  # the revision lacks the field: leave the default (None)
        required = (f.wire_required or f.required_from is not None) if every else f.required_in(revision)
        special = CONSTRAINED.get((cls, f.name))
        if special is not None:
            strat = special()
        elif f.name == "meta" and issubclass(cls, RequestParams):
            strat = _request_meta(revision)
        elif a.metadata.get("minimum") is not None:
            strat = st.floats(a.metadata["minimum"], a.metadata["maximum"]) | st.sampled_from([0, 1])
        elif f.wire == "ttlMs":
            strat = st.integers(0, 2**31)
        else:
            tp = f.type if every else f.type_in(revision)
            if not (required and f.nullable):
                tp = _without_none(tp)  # (None means "absent" there)
            strat = _deferred(tp, revision)
        if not required and (cls, f.name) not in ALWAYS_SET:
            strat = st.none() | strat
        kwargs[f.name] = strat
    return st.builds(cls, **kwargs)


def _deferred(tp: Any, revision: str) -> st.SearchStrategy[Any]:
    def build() -> st.SearchStrategy[Any]:
        return values(tp, revision)

    return st.deferred(build)


def _without_none(tp: Any) -> Any:
    if not _is_union(tp):
        return tp
    args = tuple(a for a in get_args(tp) if a is not _NoneType)
    return args[0] if len(args) == 1 else Union[args]  # noqa: UP007
