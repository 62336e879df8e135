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
    "available",
]

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
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        return False
    return True


def _normalise(uri: str) -> str:
    return uri.rstrip("#")


def compile_schema(schema: dict[str, Any]) -> Validate | None:
    """A validator returning error messages (empty when valid), or None without jsonschema.

    Raises UnsupportedDialect / InvalidSchema for a schema we cannot use.
    """
    dialect = _normalise(str(schema.get("$schema", DEFAULT_DIALECT)))
    if dialect not in SUPPORTED_DIALECTS:
        raise UnsupportedDialect(f"JSON Schema dialect {dialect!r} is not supported (supported: {SUPPORTED_DIALECTS})")
    try:
        import jsonschema
        from jsonschema import validators
    except ImportError:
        return None
    # [basic/index#20, #21] no $schema: 2020-12; otherwise the declared dialect
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as e:
        raise InvalidSchema(f"invalid JSON Schema: {e.message}") from e
    validator = cls(schema)

    def validate(instance: Any) -> list[str]:
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors]

    return validate
