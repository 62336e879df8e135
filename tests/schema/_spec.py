"""What the schema tests share: the spec's schema.json per revision, which of
our classes and aliases stands for each definition, and a JSON-Schema-type
view of both sides so they can be compared.

Both sides are reduced to the same small vocabulary of hashable tuples:

    ("string",) ("integer",) ("number",) ("boolean",) ("null",) ("any",)
    ("const", v)  ("enum", frozenset)  ("array", item)  ("map", value)
    ("any-object",)  ("ref", name)  ("union", frozenset)
    ("object", ((wire, type, required), ...))

Formats and numeric bounds are not types and are left out.
"""

import copy
import functools
import json
import types
import typing
from collections.abc import Iterator
from typing import Any, Literal, Union, get_args, get_origin

import attrs

import mcp_ref.schema as S
from mcp_ref.schema import encode as _encode
from mcp_ref.schema._base import LATEST_LEGACY_REVISION, LAZY_TYPES, Narrowed, exists_in
from mcp_ref.schema._converter import lazy_target, wire_fields
from mcp_ref.schema.jsonrpc import NotificationParams, RequestParams
from mcp_ref.schema.legacy import LEGACY_NAMES

from ..conftest import spec_path

__all__ = [
    "REVISIONS",
    "encode",
    "LATEST",
    "defs",
    "schema_document",
    "patched_document",
    "DOCUMENTED",
    "PATCHES",
    "our_object",
    "spec_names",
    "norm_spec",
    "norm_ours",
    "class_shape",
    "is_message_class",
    "is_params_class",
    "exists_in_revision",
    "json_blocks",
]

#: the revisions whose schema.json the model is held against, oldest first
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
#: the newest session-era revision: the one whose prose examples and
#: request envelopes the tests below treat as the reference of that era
LATEST = LATEST_LEGACY_REVISION


def encode(obj: Any, revision: str = LATEST, as_type: Any = None) -> Any:
    """``mcp_ref.schema.encode`` for the session era's newest revision unless told
    (the library's default is the newest revision, 2026-07-28): what these
    tests, written against 2025-11-25's schema and prose, compare with."""
    return _encode(obj, revision, as_type)


Norm = tuple[Any, ...]
_NoneType = type(None)
MISSING = object()


@functools.cache
def schema_document(revision: str) -> dict[str, Any]:
    with spec_path(revision, "schema.json").open() as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def defs(revision: str) -> dict[str, Any]:
    """The definitions of a revision's schema.json ($defs or definitions)."""
    doc = schema_document(revision)
    found: dict[str, Any] = doc.get("$defs") or doc["definitions"]
    return found


#: schema.ts's message unions: their members differ per revision by direction, not
#: only by which classes exist (``messages.union_in``)
MESSAGE_UNIONS = frozenset(
    {"ClientRequest", "ClientNotification", "ClientResult", "ServerRequest", "ServerNotification", "ServerResult"}
)


def our_object(revision: str, name: str) -> Any:
    """What mcp_ref has for definition ``name`` of ``revision`` (MISSING if nothing)."""
    if (revision, name) in LEGACY_NAMES:
        return LEGACY_NAMES[(revision, name)]
    if name in MESSAGE_UNIONS:
        return S.union_in(name, revision)
    return getattr(S, name, MISSING)


@functools.cache
def spec_names(revision: str) -> dict[type, str]:
    """Our attrs class -> the definition name that stands for it in ``revision``."""
    out: dict[type, str] = {}
    for name in defs(revision):
        obj = our_object(revision, name)
        if attrs.has(obj) and (obj.__name__ == name or (revision, name) in LEGACY_NAMES):
            out[obj] = name
    return out


def exists_in_revision(tp: Any, revision: str) -> bool:
    """Whether a type is part of ``revision`` (anything but a model class is; every
    class is part of the pseudo-revision "every", see _strategies.EVERY)."""
    return not attrs.has(tp) or revision == "every" or exists_in(tp, revision)


def is_message_class(cls: type) -> bool:
    """A request/notification class (constant ``method`` and ``jsonrpc``)."""
    names = {f.name for f in attrs.fields(cls)}
    return {"jsonrpc", "method"} <= names and "result" not in names and "error" not in names


def is_params_class(cls: type) -> bool:
    return issubclass(cls, (RequestParams, NotificationParams))


OPAQUE_JSON_SCHEMA = (
    "a JSON Schema held as a dict: every keyword survives; the Tool validator checks the keys schema.ts names"
)
UNTYPED_PARAMS = "held as an untyped object (any JSON object); the older schema spells out _meta inside an open object"
ELICIT_NUMBER = (
    "schema.ts types form values as number; schema.json narrows to integer and would refuse 2.5 (follow schema.ts)"
)
UNTITLED_ENUM = (
    "2025-11-25's untitled single-select enum is written in 2025-06-18 as its EnumSchema without enumNames"
    " (the same JSON); the union lists it as a member of its own"
)

INPUT_REQUIRED = (
    "schema.ts types InputRequiredResult.resultType as any ResultType; the class is the result whose"
    ' resultType is "input_required" (what tells it from a complete result), so it fixes the value'
)

#: (revision, definition, path) -> why our model differs from schema.json there
#: (each also in spec_notes/schema.md; test_completeness proves each is real)
DOCUMENTED: dict[tuple[str, str, str], str] = {
    **{(rev, "Tool", f): OPAQUE_JSON_SCHEMA for rev in REVISIONS for f in ("inputSchema",)},
    **{(rev, "Tool", "outputSchema"): OPAQUE_JSON_SCHEMA for rev in ("2025-06-18", "2025-11-25")},
    **{
        (rev, d, "params"): UNTYPED_PARAMS
        for rev in ("2024-11-05", "2025-03-26", "2025-06-18")
        for d in ("Request", "Notification", "JSONRPCRequest", "JSONRPCNotification")
    },
    ("2026-07-28", "ElicitResult", "content"): ELICIT_NUMBER,
    ("2026-07-28", "Tool", "outputSchema"): OPAQUE_JSON_SCHEMA,
    ("2026-07-28", "InputRequiredResult", "resultType"): INPUT_REQUIRED,
    ("2025-11-25", "ElicitResult", "content"): ELICIT_NUMBER,
    ("2025-06-18", "PrimitiveSchemaDefinition", ""): UNTITLED_ENUM,
    ("2025-06-18", "ElicitRequest", "params.requestedSchema.properties"): UNTITLED_ENUM,
    ("2025-06-18", "ElicitResult", "content"): ELICIT_NUMBER,
}


def _widen_elicit_numbers(node: dict[str, Any]) -> None:
    scalar = node["properties"]["content"]["additionalProperties"]
    scalar = next(s for s in scalar["anyOf"] if isinstance(s.get("type"), list)) if "anyOf" in scalar else scalar
    scalar["type"] = ["number" if t == "integer" else t for t in scalar["type"]]


#: the schema.json edits that make a documented difference hold on the
#: schema side too (used where generated values are validated)
def _json_value_as_schema_ts(node: dict[str, Any]) -> None:
    # schema.ts: string | number | boolean | null | JSONObject | JSONArray; schema.json
    # (the generator's integer default, and no null) narrows it to string | integer | boolean
    scalar = next(n for n in node["anyOf"] if isinstance(n.get("type"), list))
    scalar["type"] = ["string", "number", "boolean", "null"]


PATCHES: dict[tuple[str, str], Any] = {
    ("2026-07-28", "JSONValue"): _json_value_as_schema_ts,
    ("2026-07-28", "ElicitResult"): _widen_elicit_numbers,
    ("2025-11-25", "ElicitResult"): _widen_elicit_numbers,
    ("2025-06-18", "ElicitResult"): _widen_elicit_numbers,
}


def patched_document(revision: str) -> dict[str, Any]:
    """schema.json of ``revision`` with :data:`PATCHES` applied (a copy)."""
    doc = copy.deepcopy(schema_document(revision))
    found = doc.get("$defs") or doc["definitions"]
    for (rev, name), patch in PATCHES.items():
        if rev == revision:
            patch(found[name])
    return doc


# -- the spec side ---------------------------------------------------------------


def _union(members: Iterator[Norm] | list[Norm]) -> Norm:
    flat: set[Norm] = set()
    for m in members:
        if m[0] == "union":
            flat |= m[1]
        else:
            flat.add(m)
    return next(iter(flat)) if len(flat) == 1 else ("union", frozenset(flat))


#: keywords that describe or constrain a value without changing its type
_ANNOTATIONS = frozenset({"description", "format", "minimum", "maximum", "default", "examples", "title", "$comment"})


#: 2026-07-28's names for JSON itself, which mcp_ref holds as Python's JSON values
#: (JSONValue refers to itself: followed, it would never end)
JSON_ALIASES: dict[str, Norm] = {
    "JSONValue": ("any",),
    "JSONObject": ("any-object",),
    "JSONArray": ("array", ("any",)),
    "MetaObject": ("any-object",),
}


def _is_object_def(node: dict[str, Any]) -> bool:
    return "allOf" in node or (node.get("type") == "object" and bool(node.get("properties")))


def norm_spec(node: Any, revision: str) -> Norm:
    """Normalise a schema.json node. References to object definitions stay
    references; aliases (unions, enums, scalars) are followed."""
    if isinstance(node, dict):
        node = {k: v for k, v in node.items() if k not in _ANNOTATIONS}
    if node is True or node == {}:
        return ("any",)
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in JSON_ALIASES:
            return JSON_ALIASES[name]
        target = defs(revision)[name]
        if _is_object_def(target):
            return ("ref", name)
        if "$ref" in target and len(target) == 1:  # EmptyResult -> Result
            return norm_spec(target, revision)
        return norm_spec(target, revision)
    if "allOf" in node:
        return _merge_all_of(node["allOf"], revision)
    if "anyOf" in node:
        return _union([norm_spec(n, revision) for n in node["anyOf"]])
    if "const" in node:
        return ("const", node["const"])
    if "enum" in node:
        vals = node["enum"]
        return ("const", vals[0]) if len(vals) == 1 else ("enum", frozenset(vals))
    kind = node.get("type")
    if isinstance(kind, list):
        return _union([norm_spec({"type": k}, revision) for k in kind])
    if kind == "array":
        return ("array", norm_spec(node.get("items", {}), revision))
    if kind == "object":
        props = node.get("properties") or {}
        if props:
            required = set(node.get("required", ()))
            return (
                "object",
                tuple(sorted((k, norm_spec(v, revision), k in required) for k, v in props.items())),
            )
        addl = node.get("additionalProperties")
        if isinstance(addl, dict) and addl:
            return ("map", norm_spec(addl, revision))
        return ("any-object",)
    if kind in ("string", "integer", "number", "boolean", "null"):
        return (kind,)
    raise AssertionError(f"unhandled schema node {node!r}")


def _object_parts(node: dict[str, Any], revision: str) -> tuple[dict[str, Any], set[str]]:
    if "$ref" in node:
        return _object_parts(defs(revision)[node["$ref"].rsplit("/", 1)[-1]], revision)
    if "allOf" in node:
        props: dict[str, Any] = {}
        req: set[str] = set()
        for part in node["allOf"]:
            p, r = _object_parts(part, revision)
            props.update(p)
            req |= r
        return props, req
    return dict(node.get("properties") or {}), set(node.get("required", ()))


def _merge_all_of(parts: list[Any], revision: str) -> Norm:
    props, req = _object_parts({"allOf": parts}, revision)
    return ("object", tuple(sorted((k, norm_spec(v, revision), k in req) for k, v in props.items())))


def spec_definition(revision: str, name: str) -> Norm:
    """A definition itself (an object definition is expanded, not referenced)."""
    if name in JSON_ALIASES:
        return JSON_ALIASES[name]
    node = defs(revision)[name]
    if "allOf" in node:
        return _merge_all_of(node["allOf"], revision)
    if "$ref" in node:
        return norm_spec(node, revision)
    return norm_spec(node, revision)


# -- our side ---------------------------------------------------------------------


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def norm_ours(tp: Any, revision: str) -> Norm:
    """Normalise one of our annotations as ``revision`` sees it."""
    if tp is Any or tp is object:
        return ("any",)
    if isinstance(tp, Narrowed):  # (a check beyond the type: not a type of its own)
        return norm_ours(tp.base, revision)
    if tp in LAZY_TYPES:
        return norm_ours(lazy_target(tp), revision)
    if tp is _NoneType:
        return ("null",)
    if tp is str:
        return ("string",)
    if tp is bool:
        return ("boolean",)
    if tp is int:
        return ("integer",)
    if tp is float:
        return ("number",)
    origin = get_origin(tp)
    if origin is Literal:
        vals = get_args(tp)
        return ("const", vals[0]) if len(vals) == 1 else ("enum", frozenset(vals))
    if _is_union(tp):
        return _union([norm_ours(a, revision) for a in get_args(tp) if exists_in_revision(a, revision)])
    if origin is list:
        return ("array", norm_ours(get_args(tp)[0], revision))
    if origin is dict or origin is typing.Mapping:
        args = get_args(tp)
        if len(args) < 2 or args[1] is Any or args[1] is object:
            return ("any-object",)
        return ("map", norm_ours(args[1], revision))
    if tp is dict:
        return ("any-object",)
    if attrs.has(tp):
        name = spec_names(revision).get(tp)
        if name is not None:
            return ("ref", name)
        return class_shape(tp, revision)
    raise AssertionError(f"unhandled annotation {tp!r}")


def class_shape(cls: type, revision: str) -> Norm:
    """An attrs class as an object type: the fields ``revision`` has."""
    members = []
    for f in wire_fields(cls):
        if f.extra or not f.exists_in(revision):
            continue
        required = f.required_in(revision)
        tp = f.type_in(revision)
        norm = norm_ours(tp, revision)
        # None means "absent" unless the field is required and takes JSON null (a field
        # required only from some revision on defaults to None, which is never written)
        if not (required and f.nullable) and norm[0] == "union":
            rest = norm[1] - {("null",)}
            norm = next(iter(rest)) if len(rest) == 1 else ("union", frozenset(rest))
        members.append((f.wire, norm, required))
    if not members:
        return ("any-object",)
    return ("object", tuple(sorted(members)))


# -- the prose examples -------------------------------------------------------------


def json_blocks(revision: str = LATEST) -> list[tuple[str, int, int, str]]:
    """Every ```json / ```jsonc fenced block of a revision's .mdx pages:
    (page, ordinal within the page, first line, text)."""
    root = spec_path(revision)
    out = []
    for page in sorted(root.rglob("*.mdx")):
        lines = page.read_text().splitlines()
        i, n = 0, 0
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped in ("```json", "```jsonc"):
                indent = len(lines[i]) - len(lines[i].lstrip())
                start = i + 1
                j = start
                while lines[j].strip() != "```":
                    j += 1
                body = "\n".join(line[indent:] if not line[:indent].strip() else line for line in lines[start:j])
                n += 1
                out.append((str(page.relative_to(root)), n, start, body))
                i = j
            i += 1
    return out
