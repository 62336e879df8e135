"""What the battery may do with a server it knows nothing about: which tools to call, with what.

Sans-IO and pure: the battery (``battery.py``) asks here.

* :func:`safe_to_call` -- the tools called by default. A tool is *safe* when the
  server itself marks it read-only (``annotations.readOnlyHint: true``): the
  server promises it does not change its environment, so calling it cannot
  hurt what the server manages. Anything else (no annotations, a destructive
  or merely non-read-only tool) is called only with ``--call-all-tools``.
  Annotations are hints (server/tools#6): a user checks a server they trust
  to describe itself, and the report names each tool called.
* :func:`arguments_for` -- arguments a JSON Schema accepts, made from the
  schema alone (``const``, ``enum``, ``default``, ``examples`` first; then the
  smallest value of its type within its bounds); None when it cannot make one
  (a ``pattern``, say, or a ``not``).
* :func:`invalid_arguments_for` -- arguments the schema refuses (a required
  property left out, a property of the wrong type, a property it forbids),
  to check the error path; None when the schema accepts anything.
* :func:`varied_arguments` -- the same arguments with one property given
  another value the schema accepts (a requestState presented on "another
  request"); None when no property can vary.
* :func:`expand_template` -- a URI from a resource template (RFC 6570 level 1-4
  operators, each variable given one value).
"""

import re
from typing import Any, Final

__all__ = [
    "safe_to_call",
    "why_not_safe",
    "arguments_for",
    "invalid_arguments_for",
    "varied_arguments",
    "expand_template",
]

#: what a made-up string is, where the schema says nothing more
WORD: Final = "mcp-ref-check"
_MAX_DEPTH: Final = 8


def _annotations(tool: Any) -> dict[str, Any] | None:
    """The annotations of ``tool`` (a model ``Tool`` or its JSON) by their wire names; None: none."""
    if isinstance(tool, dict):
        found = tool.get("annotations")
        return found if isinstance(found, dict) else None
    found = getattr(tool, "annotations", None)
    if found is None:
        return None
    return {
        "readOnlyHint": getattr(found, "read_only_hint", None),
        "destructiveHint": getattr(found, "destructive_hint", None),
    }


def safe_to_call(tool: Any) -> bool:
    """Whether ``tool`` is called by default: the server marks it read-only."""
    annotations = _annotations(tool)
    return annotations is not None and annotations.get("readOnlyHint") is True


def why_not_safe(tool: Any) -> str:
    annotations = _annotations(tool)
    if annotations is None:
        return "no annotations"
    if annotations.get("destructiveHint") is True:
        return "marked destructive"
    if annotations.get("readOnlyHint") is False:
        return "marked not read-only"
    return "not marked readOnlyHint"


class _Unmakeable(Exception):
    """The schema asks for what cannot be made from it alone."""


def arguments_for(schema: Any) -> dict[str, Any] | None:
    """Arguments ``schema`` (a tool's inputSchema) accepts, or None when none can be made."""
    if not isinstance(schema, dict):
        return None
    try:
        value = _make(schema, schema, 0)
    except _Unmakeable:
        return None
    return value if isinstance(value, dict) else None


def _resolve(schema: Any, root: dict[str, Any]) -> Any:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if not isinstance(ref, str):
        return schema
    if not ref.startswith("#/"):
        raise _Unmakeable(f"$ref {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise _Unmakeable(f"$ref {ref!r}")
        node = node[part]
    rest = {k: v for k, v in schema.items() if k != "$ref"}
    return {**node, **rest} if isinstance(node, dict) else node


def _make(schema: Any, root: dict[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise _Unmakeable("too deep")
    if schema is True or schema == {}:
        return WORD
    if not isinstance(schema, dict):
        raise _Unmakeable("not a schema")
    schema = _resolve(schema, root)
    if "not" in schema or "pattern" in schema or "patternProperties" in schema:
        raise _Unmakeable("not / pattern")
    for key in ("const",):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            for option in schema[key]:
                try:
                    return _make(option, root, depth + 1)
                except _Unmakeable:
                    continue
            raise _Unmakeable(key)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = _resolve(part, root)
            if isinstance(part, dict):
                for k, v in part.items():
                    if k == "properties" and isinstance(v, dict):
                        merged["properties"] = {**merged.get("properties", {}), **v}
                    elif k == "required" and isinstance(v, list):
                        merged["required"] = [*merged.get("required", []), *v]
                    else:
                        merged.setdefault(k, v)
        return _make(merged, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        properties: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        required = [r for r in schema.get("required", []) if isinstance(r, str)]
        out: dict[str, Any] = {}
        for name in required:
            out[name] = _make(properties.get(name, True), root, depth + 1)
        minimum = schema.get("minProperties", 0)
        for name, sub in properties.items():
            if len(out) >= minimum:
                break
            out.setdefault(name, _make(sub, root, depth + 1))
        if len(out) < (minimum if isinstance(minimum, int) else 0):
            raise _Unmakeable("minProperties")
        return out
    if kind == "array":
        items = schema.get("items", True)
        count = schema.get("minItems", 0)
        if not isinstance(count, int):
            raise _Unmakeable("minItems")
        if isinstance(schema.get("prefixItems"), list):
            values = [_make(s, root, depth + 1) for s in schema["prefixItems"]]
            return values + [_make(items, root, depth + 1) for _ in range(max(0, count - len(values)))]
        return [_make(items, root, depth + 1) for _ in range(count)]
    if kind == "string":
        return _string(schema)
    if kind in ("integer", "number"):
        return _number(schema, kind)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    raise _Unmakeable(f"type {kind!r}")


_FORMATS: Final = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00Z",
    "email": "mcp-ref-check@example.com",
    "uri": "https://example.com/mcp-ref-check",
    "url": "https://example.com/mcp-ref-check",
    "uri-reference": "https://example.com/mcp-ref-check",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
}


def _string(schema: dict[str, Any]) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        text = _FORMATS[fmt]
    else:
        text = WORD
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if isinstance(low, int) and len(text) < low:
        text = text + "x" * (low - len(text))
    if isinstance(high, int) and len(text) > high:
        if fmt in _FORMATS:
            raise _Unmakeable("maxLength")
        text = text[:high]
    return text


def _number(schema: dict[str, Any], kind: str) -> int | float:
    low = schema.get("minimum")
    exclusive = schema.get("exclusiveMinimum")
    high = schema.get("maximum")
    value: float = 1
    if isinstance(low, int | float) and not isinstance(low, bool):
        value = low
    if isinstance(exclusive, int | float) and not isinstance(exclusive, bool):
        value = exclusive + 1
    if isinstance(high, int | float) and not isinstance(high, bool) and value > high:
        value = high
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and step > 0 and not isinstance(step, bool):
        value = step * max(1, round(value / step))
    if kind == "integer":
        if value != int(value):
            raise _Unmakeable("integer bounds")
        return int(value)
    return value


def invalid_arguments_for(schema: Any) -> tuple[dict[str, Any], str] | None:
    """Arguments ``schema`` refuses, and how; None when it accepts anything (or none can be made)."""
    valid = arguments_for(schema)
    if valid is None or not isinstance(schema, dict):
        return None
    required = [r for r in schema.get("required", []) if isinstance(r, str) and r in valid]
    if required:
        return {k: v for k, v in valid.items() if k != required[0]}, f"without the required {required[0]!r}"
    properties: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    for name, sub in properties.items():
        kind = sub.get("type") if isinstance(sub, dict) else None
        wrong: Any = {"mcp-ref": "wrong type"} if kind in ("string", "number", "integer", "boolean", "array") else None
        if wrong is not None:
            return {**valid, name: wrong}, f"{name!r} of the wrong type (an object)"
    if schema.get("additionalProperties") is False:
        return {**valid, "mcp-ref-unknown": 1}, "with a property the schema forbids"
    return None


def varied_arguments(schema: Any, args: dict[str, Any]) -> dict[str, Any] | None:
    """``args`` with one property changed to another value ``schema`` accepts; None when none can be."""
    from ..basic.json_schema import compile_schema

    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    try:
        validate = compile_schema(schema)
    except ValueError:
        return None
    for name, value in args.items():
        sub = schema["properties"].get(name)
        if not isinstance(sub, dict):
            continue
        options: list[Any] = [v for v in sub.get("enum", []) if v != value] if isinstance(sub.get("enum"), list) else []
        if isinstance(value, bool):
            options.append(not value)
        elif isinstance(value, int | float):
            options += [value + 1, value - 1]
        elif isinstance(value, str):
            options += [value + "-other", "other"]
        for option in options:
            candidate = {**args, name: option}
            if _plainly_accepts(sub, option) and (validate is None or not validate(candidate)):
                return candidate
    return None


def _plainly_accepts(sub: dict[str, Any], value: Any) -> bool:
    """Whether the property schema ``sub`` surely accepts ``value`` (without a validator at hand)."""
    if "const" in sub or "not" in sub or "pattern" in sub or "format" in sub or "$ref" in sub:
        return False
    if isinstance(sub.get("enum"), list):
        return value in sub["enum"]
    kind = sub.get("type")
    if isinstance(value, bool):
        return kind == "boolean"
    if isinstance(value, str):
        low, high = sub.get("minLength", 0), sub.get("maxLength")
        return kind == "string" and len(value) >= low and (not isinstance(high, int) or len(value) <= high)
    if isinstance(value, int | float):
        if kind not in ("integer", "number") or (kind == "integer" and not isinstance(value, int)):
            return False
        low, high, step = sub.get("minimum"), sub.get("maximum"), sub.get("multipleOf")
        return (
            (not isinstance(low, int | float) or value >= low)
            and (not isinstance(high, int | float) or value <= high)
            and "exclusiveMinimum" not in sub
            and "exclusiveMaximum" not in sub
            and (not isinstance(step, int | float) or step <= 0 or value % step == 0)
        )
    return False


_EXPRESSION: Final = re.compile(r"\{([+#./;?&]?)([^}]*)\}")


def expand_template(template: str, value: str = WORD) -> str:
    """``template`` with every variable given ``value`` (RFC 6570 operators, no modifiers)."""

    def one(match: re.Match[str]) -> str:
        op, names = match.group(1), [n.split(":")[0].rstrip("*") for n in match.group(2).split(",") if n]
        if op in ("", "+", "#"):
            joined = ",".join(value for _ in names)
            return ("#" if op == "#" else "") + joined
        if op in (".", "/"):
            return "".join(op + value for _ in names)
        if op == ";":
            return "".join(f";{n}={value}" for n in names)
        first = "?" if op == "?" else "&"
        return first + "&".join(f"{n}={value}" for n in names)

    return _EXPRESSION.sub(one, template)
