"""Value rules: what the prose or the schema says of a field's *value*, which decoding does not check.

The data model reads a message's shape (required fields, types, enums, the
0..1 priorities, ``ttlMs`` >= 0); what it lets through is a string or a list
that has the right type and the wrong value. These functions look at the raw
JSON of one message and name what is wrong with it, for whichever judge holds
the message: the :class:`~mcp_ref.crosscheck.observer.Observer` for the
handshake revisions (``check``'s 2025 sections, ``tap``, ``judge``, the
fixture) and :class:`~mcp_ref.crosscheck.modern_judge.ModernJudge` /
:class:`~mcp_ref.crosscheck.modern_judge.ClientRules` for 2026-07-28 (the
battery and the passive judges alike), so ``check``, ``tap`` and ``judge``
report the same finding for the same bytes.

Ids: a :class:`Problem` carries the id without a revision prefix, in the
catalogue of the revision it was asked for (2025-11-25's for every handshake
revision, as everywhere in the cross-checker; 2026-07-28's own otherwise), and
the modern judges add their prefix. A value the schema alone constrains is
``basic/index#1`` (the base protocol's messages are the schema's, see
spec_notes/crosscheck.md, "Value rules"); a statement of the prose wins where
one names the field.

Sans-IO, no trio.
"""

import re
from collections.abc import Iterator
from typing import Any, Final

import attrs

__all__ = [
    "Problem",
    "is_uri",
    "is_traceparent",
    "form_schema_problem",
    "request_problems",
    "result_problems",
    "notification_problems",
    "meta_problems",
    "COMPLETION_LIMIT",
]

MODERN: Final = "2026-07-28"
#: the revisions whose prose says a resource URI follows RFC 3986 (server/resources#6; #12 in 2026-07-28)
_URI_STATEMENT: Final = frozenset({"2025-06-18", "2025-11-25"})
#: the revisions with form elicitation (elicitation/create, or an input request of 2026-07-28)
_ELICITATION: Final = frozenset({"2025-06-18", "2025-11-25", MODERN})
#: every revision's schema: "values ... Must not exceed 100 items" (completion.mdx: "Maximum 100 items")
COMPLETION_LIMIT: Final = 100

# RFC 3986 section 3: scheme ":" then only unreserved, sub-delims, ":@/?#[]" and %HH
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*")
# W3C Trace Context, section 3.2: version "-" trace-id "-" parent-id "-" trace-flags, lower-case hex
_TRACEPARENT: Final = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_PRIMITIVE: Final = frozenset({"string", "number", "integer", "boolean"})


@attrs.frozen
class Problem:
    """One broken value rule: ``requirement`` without a revision prefix, and what is wrong."""

    requirement: str
    text: str


def is_uri(value: Any) -> bool:
    """An absolute URI by RFC 3986's grammar (a scheme, then only the characters a URI may hold)."""
    return isinstance(value, str) and _URI.fullmatch(value) is not None


def is_traceparent(value: Any) -> bool:
    """A ``traceparent`` value by W3C Trace Context (version ff is invalid; all-zero ids are invalid;
    a version 00 value has exactly four fields)."""
    if not isinstance(value, str):
        return False
    m = _TRACEPARENT.fullmatch(value)
    if m is None:
        return False
    version, trace_id, parent_id, _flags, rest = m.groups()
    if version == "ff" or trace_id == "0" * 32 or parent_id == "0" * 16:
        return False
    return not (version == "00" and rest is not None)


def form_schema_problem(schema: Any, revision: str) -> str | None:
    """What keeps ``schema`` (an elicitation form's requestedSchema) from being the flat object of
    primitive properties the schema allows (``PrimitiveSchemaDefinition``), or None."""
    if not isinstance(schema, dict):
        return "requestedSchema is not an object"
    if schema.get("type") != "object":
        return f"requestedSchema has type {schema.get('type')!r}, not 'object'"
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return "requestedSchema has no properties object"
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            return f"property {name!r} is not a schema object"
        kind = prop.get("type")
        if kind == "array" and revision != "2025-06-18":
            # (a multi-select enum: its items are strings, an enum or titled options)
            items = prop.get("items")
            if not isinstance(items, dict) or items.get("type", "string") != "string" or "properties" in items:
                return f"property {name!r} is an array whose items are not strings"
            continue
        if kind not in _PRIMITIVE:
            return f"property {name!r} has type {kind!r}: only string, number, integer and boolean are allowed"
    return None


def _schema_id(revision: str) -> str:
    return "basic/index#1"


def _uri_id(revision: str) -> str:
    if revision == MODERN:
        return "server/resources#12"
    return "server/resources#6" if revision in _URI_STATEMENT else "basic/index#1"


def _uris(where: str, value: Any, revision: str) -> Iterator[Problem]:
    if not is_uri(value):
        # [server/resources#6] [2026-07-28:server/resources#12] resource URIs follow RFC 3986
        # (the schema's "format": "uri" in every revision)
        yield Problem(_uri_id(revision), f"{where} {_brief(value)} is not a URI (RFC 3986)")


def _content_uris(where: str, block: Any, revision: str) -> Iterator[Problem]:
    if not isinstance(block, dict):
        return
    if block.get("type") == "resource_link" and "uri" in block:
        yield from _uris(f"{where}.uri", block["uri"], revision)
    resource = block.get("resource") if block.get("type") == "resource" else None
    if isinstance(resource, dict) and "uri" in resource:
        yield from _uris(f"{where}.resource.uri", resource["uri"], revision)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _brief(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def result_problems(revision: str, method: str, result: Any) -> list[Problem]:
    """The value rules a server's result to ``method`` breaks (``result``: the raw JSON)."""
    if not isinstance(result, dict):
        return []
    found: list[Problem] = []
    if method == "completion/complete":
        completion = result.get("completion")
        values = completion.get("values") if isinstance(completion, dict) else None
        if isinstance(values, list) and len(values) > COMPLETION_LIMIT:
            # [basic/index#1] [2026-07-28:basic/index#1] the schema caps completion.values at 100 items
            # (maxItems in 2026-07-28; "Must not exceed 100 items" before; completion.mdx: "Maximum 100")
            text = f"completion.values has {len(values)} items; at most {COMPLETION_LIMIT} are allowed"
            found.append(Problem(_schema_id(revision), text))
    elif method == "resources/list":
        for i, resource in enumerate(_list(result.get("resources"))):
            if isinstance(resource, dict) and "uri" in resource:
                found.extend(_uris(f"resources[{i}].uri", resource["uri"], revision))
    elif method == "resources/read":
        for i, contents in enumerate(_list(result.get("contents"))):
            if isinstance(contents, dict) and "uri" in contents:
                found.extend(_uris(f"contents[{i}].uri", contents["uri"], revision))
    elif method == "tools/call":
        for i, block in enumerate(_list(result.get("content"))):
            found.extend(_content_uris(f"content[{i}]", block, revision))
    elif method == "prompts/get":
        for i, message in enumerate(_list(result.get("messages"))):
            if isinstance(message, dict):
                found.extend(_content_uris(f"messages[{i}].content", message.get("content"), revision))
    if revision == MODERN and result.get("resultType") == "input_required":
        requests = result.get("inputRequests")
        for key, request in requests.items() if isinstance(requests, dict) else ():
            if isinstance(request, dict) and isinstance(request.get("method"), str):
                for p in request_problems(revision, request["method"], request.get("params")):
                    found.append(Problem(p.requirement, f"input request {key!r}: {p.text}"))
    return _first_per_rule(found)


def request_problems(revision: str, method: str, params: Any) -> list[Problem]:
    """The value rules a request's ``params`` break (a server's; in 2026-07-28 also an input request)."""
    if not isinstance(params, dict):
        return []
    found: list[Problem] = []
    if method == "elicitation/create" and revision in _ELICITATION and params.get("mode", "form") == "form":
        problem = form_schema_problem(params.get("requestedSchema"), revision)
        if problem is not None:
            # [basic/index#1] [2026-07-28:basic/index#1] a form's requestedSchema is a flat object of
            # PrimitiveSchemaDefinition properties (the schema; client/elicitation.mdx, "Requested Schema")
            found.append(Problem(_schema_id(revision), f"the elicitation form's {problem}"))
    # (a client's resources/read of a URI is not judged: it reads what the server listed, and the
    # server's listing is where the fault is)
    return found


def notification_problems(revision: str, method: str, params: Any) -> list[Problem]:
    """The value rules a notification's ``params`` break."""
    if not isinstance(params, dict):
        return []
    if method == "notifications/resources/updated" and "uri" in params:
        return list(_uris("notifications/resources/updated params.uri", params["uri"], revision))
    return []


def meta_problems(revision: str, meta: Any, where: str) -> list[Problem]:
    """The value rules the ``_meta`` of a message breaks (``where``: whose _meta, for the text)."""
    if revision != MODERN or not isinstance(meta, dict) or "traceparent" not in meta:
        return []
    value = meta["traceparent"]
    if is_traceparent(value):
        return []
    # [2026-07-28:basic/index#62] traceparent follows W3C Trace Context
    return [Problem("basic/index#62", f"{where} _meta traceparent {_brief(value)} is not a W3C traceparent")]


def _first_per_rule(found: list[Problem]) -> list[Problem]:
    """One problem per requirement (the first): one finding per requirement and message."""
    seen: set[str] = set()
    out = []
    for p in found:
        if p.requirement not in seen:
            seen.add(p.requirement)
            out.append(p)
    return out
