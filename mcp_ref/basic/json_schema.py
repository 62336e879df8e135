"""basic/index#json-schema-usage: dialects and validation.

Schemas without ``$schema`` are JSON Schema 2020-12 (basic/index#20); a
declared dialect is honoured when ``jsonschema`` (the ``validation`` extra)
knows it, and refused with :class:`UnsupportedDialect` otherwise (#22).
Without the extra, :func:`compile_schema` returns None and callers skip
validation (documented in spec_notes/supported.md).

``$ref`` (2026-07-28 basic/index#ref-resolution): a reference is resolved
inside the schema (a JSON pointer, an anchor, an embedded ``$id``) or to a
metaschema jsonschema carries; nothing is ever fetched, and a schema with a
reference that resolves to nothing here is refused (:class:`InvalidSchema`),
never taken as permissive. Bounds (2026-07-28
basic/index#composition-keyword-resource-use): a schema deeper than
:data:`MAX_SCHEMA_DEPTH`, or with more than :data:`MAX_SUBSCHEMAS` subschemas
once its references are followed (so a few ``$defs`` that refer to each other
twice per level cannot stand for millions), is refused before any instance
is validated against it.
"""

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urldefrag, urljoin

__all__ = [
    "DEFAULT_DIALECT",
    "SUPPORTED_DIALECTS",
    "MAX_SCHEMA_DEPTH",
    "MAX_SUBSCHEMAS",
    "UnsupportedDialect",
    "InvalidSchema",
    "compile_schema",
    "schema_problem",
    "fast_check",
    "available",
]

# [basic/index#19] 2020-12 is what we write and assume -- index#schema-dialect
DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: [basic/index#18, #23] the dialects we validate, by their $schema URI
SUPPORTED_DIALECTS = (
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-04/schema",
)

Validate = Callable[[Any], list[str]]


class UnsupportedDialect(ValueError):
    """[basic/index#22] a schema declares a dialect we cannot validate."""


class InvalidSchema(ValueError):
    """[basic/index#24] a schema is not valid in its dialect."""


def available() -> bool:
    """Whether jsonschema (the ``validation`` extra) is installed; does not import it."""
    import importlib.util

    return importlib.util.find_spec("jsonschema") is not None


def _normalise(uri: str) -> str:
    return uri.rstrip("#")


def compile_schema(schema: dict[str, Any]) -> Validate | None:
    """A validator returning error messages (empty when valid), or None without jsonschema.

    Raises UnsupportedDialect / InvalidSchema for a schema we cannot use.

    A schema of the plain shape :func:`fast_check` covers is known valid
    without the metaschema, and jsonschema (with its import, about 70 ms) is
    loaded only when an instance first fails the fast check, to write the
    messages: a server whose tools have plain schemas starts without it.
    """
    dialect = _normalise(str(schema.get("$schema", DEFAULT_DIALECT)))
    if dialect not in SUPPORTED_DIALECTS:
        raise UnsupportedDialect(f"JSON Schema dialect {dialect!r} is not supported (supported: {SUPPORTED_DIALECTS})")
    problem = schema_problem(schema)
    if problem is not None:
        raise InvalidSchema(problem)
    if not available():
        return None
    fast = fast_check(schema) if dialect == DEFAULT_DIALECT else None
    validator = None if fast is not None else _validator(schema)

    def validate(instance: Any) -> list[str]:
        nonlocal validator
        if fast is not None and fast(instance):
            return []
        if validator is None:
            validator = _validator(schema)
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]

    return validate


def _validator(schema: dict[str, Any]) -> Any:
    import jsonschema
    from jsonschema import validators
    from referencing import Registry

    # [basic/index#17, #20, #21] no $schema: 2020-12; otherwise the declared dialect -- index#schema-dialect
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as e:
        raise InvalidSchema(f"invalid JSON Schema: {e.message}") from e
    # [2026-07-28:basic/index#42] jsonschema fetches a reference it cannot resolve unless told
    # not to: this registry retrieves nothing (the metaschemas it carries still resolve)
    return cls(schema, registry=Registry(retrieve=_never_fetch))  # type: ignore[call-arg]  # (an attrs alias)


def _never_fetch(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # (an attrs alias)


# -- references and bounds ------------------------------------------------------------------

#: the deepest a schema may nest (its subschemas within subschemas)
MAX_SCHEMA_DEPTH = 64
#: the most subschemas a schema may have, counting each one as often as references reach it
MAX_SUBSCHEMAS = 20_000

#: keywords whose value is a subschema, a list of them, or a map of names to them
_ONE = frozenset(
    {
        "additionalProperties",
        "additionalItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_MANY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _children(node: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(where, subschema) for each subschema directly in ``node``."""
    for key, value in node.items():
        if key in _ONE or (key == "items" and not isinstance(value, list)):
            yield key, value
        elif key in _MANY or (key == "items" and isinstance(value, list)):
            if isinstance(value, list):
                for i, sub in enumerate(value):
                    yield f"{key}[{i}]", sub
        elif key in _MAP or key == "dependencies":
            if isinstance(value, dict):
                for name, sub in value.items():
                    if key != "dependencies" or isinstance(sub, dict | bool):
                        yield f"{key}.{name}", sub


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be used (None: it can): a keyword whose value its dialect does
    not allow, a ``$ref`` that resolves to nothing in the schema itself, or a size beyond the
    bounds. Pure Python; runs without jsonschema (which, when installed, then checks the
    schema against its dialect's metaschema as well)."""
    # pass 1: every resource ($id) and anchor of the document, the depth, the keywords' values
    draft4 = isinstance(schema, dict) and _normalise(str(schema.get("$schema", ""))) == _DRAFT4
    base_of: dict[int, str] = {}
    resources: dict[str, Any] = {}
    anchors: dict[str, Any] = {}
    stack: list[tuple[Any, str, int, str]] = [(schema, "", 0, "")]
    while stack:
        node, base, depth, where = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            # [2026-07-28:basic/index#45] a bound on depth -- index#composition-keyword-resource-use
            return f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
        if type(node) is bool:
            continue
        if not isinstance(node, dict):
            return f"{where or '(root)'}: a schema is an object or a boolean, not {_json_type(node)}"
        # [basic/index#24] valid in its dialect, with or without jsonschema installed
        problem = _keyword_problem(node, draft4)
        if problem is not None:
            return f"{where}.{problem}" if where else problem
        if isinstance(node.get("$id"), str):
            base = urljoin(base, node["$id"])
            resources[urldefrag(base)[0]] = node
        elif depth == 0:
            resources[""] = node
        base_of[id(node)] = base
        for key in ("$anchor", "$dynamicAnchor"):
            if isinstance(node.get(key), str):
                anchors[urljoin(base, "#" + node[key])] = node
        stack.extend((sub, base, depth + 1, f"{where}.{key}" if where else key) for key, sub in _children(node))

    def target(node: dict[str, Any], ref: str) -> Any:
        uri = urljoin(base_of.get(id(node), ""), ref)
        if uri in anchors:
            return anchors[uri]
        document, fragment = urldefrag(uri)
        if document not in resources:
            if _normalise(document) in SUPPORTED_DIALECTS:
                return True  # a metaschema jsonschema carries: a leaf here
            return None
        found: Any = resources[document]
        if fragment:
            if not fragment.startswith("/"):
                return None
            for part in fragment[1:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                if isinstance(found, dict) and part in found:
                    found = found[part]
                elif isinstance(found, list) and part.isdigit() and int(part) < len(found):
                    found = found[int(part)]
                else:
                    return None
        return found

    # pass 2: the size with references followed (each node's size once: a DAG), cycles as one
    sizes: dict[int, int] = {}
    visiting: set[int] = set()

    def size(node: Any) -> int:
        if not isinstance(node, dict):
            return 1
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in visiting:
            return 1  # recursion: bounded by the instance, not the schema
        visiting.add(key)
        total = 1
        for ref_key in ("$ref", "$dynamicRef"):
            ref = node.get(ref_key)
            if isinstance(ref, str):
                found = target(node, ref)
                if found is None:
                    visiting.discard(key)
                    # [2026-07-28:basic/index#42, #44] never fetched; unresolved is refused, not permissive
                    raise _Unresolved(ref)
                total += size(found)
        for _, sub in _children(node):
            total += size(sub)
            if total > MAX_SUBSCHEMAS:
                break
        visiting.discard(key)
        sizes[key] = total
        return total

    try:
        total = size(schema)
    except _Unresolved as e:
        return f"$ref {e.args[0]!r} does not resolve within the schema (references are never fetched)"
    if total > MAX_SUBSCHEMAS:
        # [2026-07-28:basic/index#45] a cap on the subschemas, references followed
        return f"the schema has more than {MAX_SUBSCHEMAS} subschemas once its references are followed"
    return None


class _Unresolved(Exception):
    pass


# -- keywords and the values their dialect allows ---------------------------------------------

_DRAFT4 = "http://json-schema.org/draft-04/schema"
_TYPE_NAMES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})
#: keywords whose value is a string, a boolean, an array, a number, a count (non-negative integer)
_STRINGS = frozenset(
    {"title", "description", "$comment", "format", "$id", "$anchor", "$dynamicAnchor", "$ref", "$dynamicRef"}
    | {"$schema", "contentEncoding", "contentMediaType"}
)
_BOOLEANS = frozenset({"uniqueItems", "readOnly", "writeOnly", "deprecated"})
_NUMBERS = frozenset({"maximum", "minimum"})
_COUNTS = frozenset(
    {"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties", "maxContains", "minContains"}
)


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPE_TESTS[name](value):
            return "null" if name == "null" else ("an " if name[0] in "aio" else "a ") + name
    return type(value).__name__


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def _is_schema(value: Any) -> bool:
    return type(value) is dict or type(value) is bool


def _keyword_problem(node: dict[str, Any], draft4: bool) -> str | None:
    """``keyword: what is wrong`` for the first keyword of ``node`` whose value its dialect's
    metaschema refuses, or None. Covers the keywords every supported dialect shares (their
    values have the same types there) and those of 2019-09/2020-12; unknown keywords are
    annotations and pass."""
    for key, value in node.items():
        if key == "type":
            names = value if type(value) is list else [value]
            if type(value) is list and (not value or len(set(map(str, value))) != len(value)):
                return "type: a list of distinct type names"
            for name in names:
                if type(name) is not str or name not in _TYPE_NAMES:
                    return f"type: {name!r} is not a JSON Schema type ({', '.join(sorted(_TYPE_NAMES))})"
        elif key in _STRINGS:
            if type(value) is not str:
                return f"{key}: expected a string"
        elif key in _BOOLEANS:
            if type(value) is not bool:
                return f"{key}: expected a boolean"
        elif key in _NUMBERS:
            if not _is_number(value):
                return f"{key}: expected a number"
        elif key in ("exclusiveMaximum", "exclusiveMinimum"):
            # (a boolean beside maximum/minimum in draft-04, a number of its own after it)
            if not (type(value) is bool if draft4 else _is_number(value)):
                return f"{key}: expected {'a boolean' if draft4 else 'a number'}"
        elif key == "multipleOf":
            if not _is_number(value) or value <= 0:
                return "multipleOf: expected a number above 0"
        elif key in _COUNTS:
            if not (type(value) is int or (type(value) is float and value.is_integer())) or value < 0:
                return f"{key}: expected a non-negative integer"
        elif key == "pattern":
            if type(value) is not str or _regex_problem(value):
                return f"pattern: not a regular expression: {value!r}"
        elif key in ("required", "enum", "examples"):
            if type(value) is not list:
                return f"{key}: expected an array"
            if key == "required" and (not all(type(n) is str for n in value) or len(set(value)) != len(value)):
                return "required: expected distinct property names (strings)"
        elif key in _ONE:
            if not _is_schema(value):
                return f"{key}: expected a schema (an object or a boolean)"
        elif key == "items":
            if not (_is_schema(value) or (type(value) is list and all(_is_schema(v) for v in value))):
                return "items: expected a schema (an object or a boolean)"
        elif key in _MANY:
            if type(value) is not list or not value or not all(_is_schema(v) for v in value):
                return f"{key}: expected a non-empty array of schemas"
        elif key in _MAP:
            if type(value) is not dict or not all(_is_schema(v) for v in value.values()):
                return f"{key}: expected an object whose values are schemas"
            if key == "patternProperties":
                for pattern in value:
                    if _regex_problem(pattern):
                        return f"patternProperties: not a regular expression: {pattern!r}"
        elif key == "dependentRequired":
            if type(value) is not dict or not all(
                type(v) is list and all(type(n) is str for n in v) for v in value.values()
            ):
                return "dependentRequired: expected an object whose values are arrays of property names"
    return None


def _regex_problem(pattern: str) -> bool:
    """Whether ``pattern`` does not compile (Python's dialect stands in for ECMA 262, as
    jsonschema's format check does)."""
    import re

    try:
        re.compile(pattern)
    except re.error:
        return True
    return False


# -- a fast path for the schemas most tools declare ---------------------------------------

#: keywords that never make an instance invalid, with the JSON type the metaschema gives their values
_ANNOTATIONS: dict[str, type | None] = {
    "title": str,
    "description": str,
    "$comment": str,
    "default": None,  # any value
    "examples": list,
    "deprecated": bool,
    "readOnly": bool,
    "writeOnly": bool,
}
_KEYWORDS = _ANNOTATIONS.keys() | {"type", "properties", "required", "additionalProperties"}

#: JSON types by the Python types ``json`` decodes them to (bool is not a number here)
_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    # 2020-12 also counts 1.0 as an integer; the fast path leaves floats to jsonschema
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}

Check = Callable[[Any], bool]


def fast_check(schema: Any, *, top: bool = True) -> Check | None:
    """A predicate that is True only for instances the schema accepts, or None.

    Covers the shape most tool input schemas have: ``type`` (one name),
    ``properties``, ``required``, boolean ``additionalProperties`` and
    annotations, nested, each with a value the 2020-12 metaschema accepts (so
    a schema with a fast check is a valid schema). Anything else: None, and
    jsonschema decides alone. False from the predicate means "not shown
    valid": the caller asks jsonschema, which also writes the messages.
    Profiling bench W1 showed jsonschema's generic walk as the largest single
    cost of a tools/call.
    """
    if schema is True:
        return lambda v: True
    if type(schema) is not dict:
        return None
    allowed = _KEYWORDS | {"$schema"} if top else _KEYWORDS
    if not schema.keys() <= allowed:
        return None
    for key, value in schema.items():
        expected = _ANNOTATIONS.get(key)
        if expected is not None and type(value) is not expected:
            return None
    if "$schema" in schema and type(schema["$schema"]) is not str:
        return None
    checks: list[Check] = []
    tname = schema.get("type")
    if tname is not None:
        if type(tname) is not str or tname not in _TYPE_TESTS:
            return None
        checks.append(_TYPE_TESTS[tname])
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if type(properties) is not dict or type(required) is not list or type(extra) is not bool:
        return None
    if not all(type(r) is str for r in required) or len(set(required)) != len(required):
        return None
    subs: list[tuple[str, Check]] = []
    for name, sub in properties.items():
        check = fast_check(sub, top=False)
        if check is None:
            return None
        subs.append((name, check))
    known = frozenset(properties)
    needed = tuple(required)

    def object_ok(v: Any) -> bool:
        if type(v) is not dict:
            return True  # object keywords apply to objects only
        for name in needed:
            if name not in v:
                return False
        if not extra and not v.keys() <= known:
            return False
        for name, check in subs:
            if name in v and not check(v[name]):
                return False
        return True

    if subs or needed or not extra:
        checks.append(object_ok)
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    first, second = checks
    return lambda v: first(v) and second(v)
