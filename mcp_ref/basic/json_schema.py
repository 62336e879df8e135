"""basic/index#json-schema-usage: dialects and validation.

Schemas without ``$schema`` are JSON Schema 2020-12 (basic/index#20); a
declared dialect is honoured when ``jsonschema`` (the ``validation`` extra)
knows it, and refused with :class:`UnsupportedDialect` otherwise (#22).
Without the extra, :func:`compile_schema` returns None and callers skip
validation (documented in spec_notes/supported.md).
"""

from collections.abc import Callable
from typing import Any

__all__ = [
    "DEFAULT_DIALECT",
    "SUPPORTED_DIALECTS",
    "UnsupportedDialect",
    "InvalidSchema",
    "compile_schema",
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

    # [basic/index#17, #20, #21] no $schema: 2020-12; otherwise the declared dialect -- index#schema-dialect
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as e:
        raise InvalidSchema(f"invalid JSON Schema: {e.message}") from e
    return cls(schema)


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
