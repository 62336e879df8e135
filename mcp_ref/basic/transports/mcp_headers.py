"""Streamable HTTP (2026-07-28), request metadata: the headers that mirror the body.

Sans-IO rules of basic/transports/streamable-http#request-metadata, for both
sides:

* the standard headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``)
  a client writes (:func:`standard_headers`) and a server checks against the
  body (:func:`check_standard_headers`);
* the Base64 sentinel ``=?base64?...?=`` (:func:`encode_value`, :func:`decode_value`);
* ``x-mcp-header`` annotations in a tool's ``inputSchema``: which are valid
  (:func:`param_headers`, ValueError naming the problem), the ``Mcp-Param-*``
  headers a call carries (:func:`param_header_values`) and the server's check
  of those it received (:func:`check_param_headers`).

A failed check raises :class:`~mcp_ref.errors.ProtocolError` with -32020
(HeaderMismatch), which the server answers with HTTP 400.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

from ...schema._base import install_model_methods
from ..versioning import header_mismatch

__all__ = [
    "PROTOCOL_VERSION_HEADER",
    "METHOD_HEADER",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "NAMED_METHODS",
    "encode_value",
    "decode_value",
    "name_of",
    "standard_headers",
    "check_standard_headers",
    "ParamHeader",
    "param_headers",
    "param_header_values",
    "check_param_headers",
]

#: header names as h11 gives them (lower case); comparisons of names are case-insensitive
#: ([2026-07-28:basic/transports/streamable-http#62])
PROTOCOL_VERSION_HEADER: Final = "mcp-protocol-version"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
PARAM_HEADER_PREFIX: Final = "mcp-param-"
#: the methods whose Mcp-Name mirrors a field of the params, and which field
NAMED_METHODS: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # [ext-tasks:tasks#52] the tasks extension's methods name their task (the routing key of a
    # load balancer) -- tasks#streamable-http-routing-headers
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

_SENTINEL_START: Final = "=?base64?"
_SENTINEL_END: Final = "?="
#: what a plain header value may hold: visible ASCII and space, with no blank at either end
_PLAIN: Final = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")
#: what any received value may hold (RFC 9110 field values: visible ASCII, space, tab)
_FIELD_VALUE: Final = re.compile(r"[\x20-\x7e\t]*")
#: RFC 9110 section 5.1: a field name is 1*tchar
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: [2026-07-28:basic/transports/streamable-http#42] integers travel only within JavaScript's safe range
_SAFE_INTEGER: Final = 2**53 - 1


def encode_value(value: str) -> str:
    """A header value for ``value``: as it is when it is plain ASCII, else the Base64 sentinel.

    [2026-07-28:basic/transports/streamable-http#49, #50, #55] non-ASCII, control characters, blanks at
    either end, or a value that looks like the sentinel itself, go Base64 (of its UTF-8 form).
    """
    if _PLAIN.fullmatch(value) and not (value.startswith(_SENTINEL_START) and value.endswith(_SENTINEL_END)):
        return value
    return _SENTINEL_START + base64.b64encode(value.encode("utf-8")).decode("ascii") + _SENTINEL_END


def decode_value(header: str) -> str:
    """The value a header carries, the Base64 sentinel decoded.

    [2026-07-28:basic/transports/streamable-http#52, #53, #54] only the exact lower-case markers wrap a
    Base64 value; anything else is literal. A sentinel whose Base64 is malformed (bad padding or
    characters) or not UTF-8 is refused with -32020, as is a value with characters no header
    may hold ([2026-07-28:basic/transports/streamable-http#59]).
    """
    if not _FIELD_VALUE.fullmatch(header):
        raise header_mismatch("a header value holds characters no HTTP field value may")
    if (
        len(header) >= len(_SENTINEL_START) + len(_SENTINEL_END)
        and header.startswith(_SENTINEL_START)
        and header.endswith(_SENTINEL_END)
    ):
        encoded = header[len(_SENTINEL_START) : -len(_SENTINEL_END)]
        try:
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            raise header_mismatch("a Base64-encoded header value is malformed") from None
    return header


def name_of(method: str, params: Mapping[str, Any] | None) -> str | None:
    """The value ``Mcp-Name`` mirrors for a request (None for methods without one)."""
    field = NAMED_METHODS.get(method)
    if field is None or params is None:
        return None
    value = params.get(field)
    return value if isinstance(value, str) else None


def standard_headers(version: str, method: str, params: Mapping[str, Any] | None) -> dict[str, str]:
    """(client) [2026-07-28:basic/transports/streamable-http#10, #25, #32] the standard headers of a POST
    (body fields mirrored into the envelope: [2026-07-28:basic/transports/index#3])."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    name = name_of(method, params)
    if name is not None:
        # [2026-07-28:basic/transports/streamable-http#33, #51] a name not safe as a header goes Base64
        headers["Mcp-Name"] = encode_value(name)
    return headers


def check_standard_headers(headers: Mapping[str, str], method: str, params: Mapping[str, Any] | None) -> None:
    """(server) [2026-07-28:basic/transports/streamable-http#63, #65] the standard headers are present
    and say what the body says; -32020 otherwise. ``headers`` has lower-case names.

    The protocol version header is checked against ``_meta`` by the caller, who
    reads ``_meta`` first (a request without its required fields is -32602).
    """
    got = headers.get(METHOD_HEADER)
    if got is None:
        raise header_mismatch("the Mcp-Method header is missing")
    if got != method:
        # (header values, unlike names, are case-sensitive)
        raise header_mismatch(f"Mcp-Method header value {got!r} does not match body value {method!r}")
    if method in NAMED_METHODS:
        expected = name_of(method, params)
        raw = headers.get(NAME_HEADER)
        if raw is None:
            raise header_mismatch("the Mcp-Name header is missing")
        # [2026-07-28:basic/transports/streamable-http#54, #66] decoded before it is compared
        value = decode_value(raw)
        if expected is not None and value != expected:
            raise header_mismatch(f"Mcp-Name header value {value!r} does not match body value {expected!r}")


# -- x-mcp-header ----------------------------------------------------------------------------------


@attrs.frozen(repr=False, eq=False)
class ParamHeader:
    """One ``x-mcp-header`` annotation: the header ``Mcp-Param-{name}`` mirrors the
    argument at ``path`` (a chain of property names), of JSON type ``type``."""

    name: str
    path: tuple[str, ...]
    type: str

    @property
    def header(self) -> str:
        return f"Mcp-Param-{self.name}"


_PRIMITIVE: Final = frozenset({"string", "integer", "boolean"})


def param_headers(input_schema: Mapping[str, Any]) -> tuple[ParamHeader, ...]:
    """The ``x-mcp-header`` annotations of a tool's ``inputSchema``; ValueError for an invalid one.

    [2026-07-28:basic/transports/streamable-http#34] a tool may mirror parameters into headers;
    [2026-07-28:basic/transports/streamable-http#37-#44] a name that is a non-empty RFC 9110 token,
    unique regardless of case, on a property of type string, integer or boolean reached from the
    root through ``properties`` only; an annotation anywhere else (under ``items``, a composition
    or conditional keyword, ``$defs``, ...) makes the definition invalid.
    """
    found: list[ParamHeader] = []
    _walk(input_schema, (), True, found)
    seen: dict[str, str] = {}
    for h in found:
        folded = h.name.lower()
        if folded in seen:
            # [2026-07-28:basic/transports/streamable-http#40] unique, case-insensitively
            raise ValueError(f"x-mcp-header {h.name!r} is used twice (also as {seen[folded]!r})")
        seen[folded] = h.name
    return tuple(found)


def _walk(schema: Any, path: tuple[str, ...], reachable: bool, found: list[ParamHeader]) -> None:
    if isinstance(schema, list):
        for item in schema:
            _walk(item, path, False, found)
        return
    if not isinstance(schema, Mapping):
        return
    if "x-mcp-header" in schema:
        name = schema["x-mcp-header"]
        where = ".".join(path) or "(root)"
        if not reachable or not path:
            # [2026-07-28:basic/transports/streamable-http#43, #44] only on properties reached through `properties`
            raise ValueError(f"x-mcp-header at {where}: only properties reached from the root through properties")
        if not isinstance(name, str) or not name:
            # [2026-07-28:basic/transports/streamable-http#37]
            raise ValueError(f"x-mcp-header at {where}: the name is a non-empty string")
        if not _TOKEN.fullmatch(name):
            # [2026-07-28:basic/transports/streamable-http#38, #39] an RFC 9110 token: no control characters
            raise ValueError(f"x-mcp-header at {where}: {name!r} is not an HTTP field-name token")
        kind = schema.get("type")
        if kind not in _PRIMITIVE:
            # [2026-07-28:basic/transports/streamable-http#41] string, integer or boolean (never number)
            raise ValueError(
                f"x-mcp-header at {where}: the property's type is string, integer or boolean, not {kind!r}"
            )
        found.append(ParamHeader(name, path, kind))
    for key, value in schema.items():
        if key == "properties" and isinstance(value, Mapping):
            for prop, sub in value.items():
                _walk(sub, (*path, prop), reachable, found)
        elif key != "x-mcp-header" and isinstance(value, Mapping | list):
            # items, anyOf, $defs, if/then/else, $ref targets...: not statically reachable
            _walk(value, path, False, found)


def _at(arguments: Mapping[str, Any] | None, path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _as_text(value: Any, kind: str) -> str | None:
    """The string form of an argument value (transports' value encoding); None when the value
    is not of the declared type."""
    if kind == "boolean":
        return ("true" if value else "false") if type(value) is bool else None
    if kind == "integer":
        if type(value) is float and value.is_integer():
            value = int(value)
        if type(value) is not int or abs(value) > _SAFE_INTEGER:
            return None
        return str(value)
    return value if type(value) is str else None


def param_header_values(headers: tuple[ParamHeader, ...], arguments: Mapping[str, Any] | None) -> dict[str, str]:
    """(client) The ``Mcp-Param-*`` headers of a call with ``arguments``, values encoded.

    [2026-07-28:basic/transports/streamable-http#36] every annotated argument present is mirrored;
    an absent or null one is left out."""
    out: dict[str, str] = {}
    for h in headers:
        value = _at(arguments, h.path)
        if value is None:
            continue
        text = _as_text(value, h.type)
        if text is not None:
            out[h.header] = encode_value(text)
    return out


def check_param_headers(
    declared: tuple[ParamHeader, ...], received: Mapping[str, str], arguments: Mapping[str, Any] | None
) -> None:
    """(server) [2026-07-28:basic/transports/streamable-http#59, #60, #61] the ``Mcp-Param-*`` headers of a
    call say what its arguments say; -32020 otherwise. ``received`` has lower-case names.

    An argument present needs its header, with the same value once decoded
    (integers compared as numbers); an absent or null one needs none, and a
    header sent for it does not match. Headers no annotation declares are ignored.
    """
    for h in declared:
        raw = received.get(PARAM_HEADER_PREFIX + h.name.lower())
        value = _at(arguments, h.path)
        if raw is None:
            if value is not None:
                raise header_mismatch(f"the {h.header} header is missing, but the arguments have {'.'.join(h.path)}")
            continue
        decoded = decode_value(raw)
        if value is None:
            raise header_mismatch(f"{h.header} is sent, but the arguments have no {'.'.join(h.path)}")
        if not _same(decoded, value, h.type):
            raise header_mismatch(f"{h.header} header value {decoded!r} does not match body value {value!r}")


def _same(text: str, value: Any, kind: str) -> bool:
    if kind == "integer":
        # [2026-07-28:basic/transports/streamable-http#64] integers compare as numbers (42.0 is 42)
        try:
            number = float(text)
        except ValueError:
            return False
        return type(value) in (int, float) and type(value) is not bool and math.isfinite(number) and number == value
    expected = _as_text(value, kind)
    return expected is not None and expected == text


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals(), hashable=False)
