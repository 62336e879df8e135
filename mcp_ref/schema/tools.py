"""schema.ts "Tools"."""

from typing import Any, Literal

from attrs import field, frozen

from ._base import (
    NEW_IN_2025_03_26,
    NEW_IN_2025_06_18,
    NEW_IN_2025_11_25,
    NEW_IN_2026_07_28,
    REMOVED_IN_2026_07_28,
    FieldValueError,
    Narrowed,
    install_model_methods,
    older_type,
    required_from,
    since,
    until,
    wire_name,
)
from .content import STRUCTURED_BEFORE_2026, ContentBlock, TextContent
from .jsonrpc import (
    InputResponsesField,
    NotificationParams,
    RequestId,
    Result,
)
from .lifecycle import Icon
from .pagination import CACHE_SCOPE, TTL_MS, CacheScope, PaginatedRequestParams, PaginatedResult, ttl_ms_validator
from .tasks import TaskAugmentedRequestParams

__all__ = [
    "ToolAnnotations",
    "ToolExecution",
    "Tool",
    "ListToolsRequest",
    "ListToolsResult",
    "CallToolRequestParams",
    "CallToolRequest",
    "CallToolResult",
    "ToolListChangedNotification",
]


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-03-26")
class ToolAnnotations:
    """Hints about a tool's behaviour; untrusted unless the server is (server/tools#tool-annotations)."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ToolExecution:
    task_support: Literal["forbidden", "optional", "required"] | None = None


def _input_schema(instance: Any, attribute: Any, value: Any) -> None:
    """``inputSchema``: a JSON Schema object whose ``type`` is "object" (tool arguments
    are always objects).

    Held as a plain dict (any JSON Schema keyword may appear and is kept); only
    the keys schema.ts names, and the shape of ``properties`` / ``required``, are
    checked. Whether it is a valid schema of its dialect is
    :mod:`mcp_ref.basic.json_schema`'s question.
    """
    _check_schema(attribute, value, root_object=True)


def _output_schema(instance: Any, attribute: Any, value: Any) -> None:
    """``outputSchema``: any JSON Schema object in 2026-07-28 (structured content may be
    any JSON value); before it, one whose ``type`` is "object" (checked when encoding
    for those revisions, see ``_OBJECT_OUTPUT``)."""
    if value is not None:
        _check_schema(attribute, value, root_object=False)


def _check_schema(attribute: Any, value: Any, *, root_object: bool) -> None:
    problem = _object_schema_problem(value, root_object)
    if problem is not None:
        where, what = problem
        wire = wire_name(attribute.name, attribute.metadata)
        raise FieldValueError(f"{wire}.{where}" if where else wire, what)


def _object_schema_problem(value: Any, root_object: bool = True) -> tuple[str, str] | None:
    """(path inside the schema, problem), or None when the shape is right."""
    if type(value) is not dict:
        return "", "expected object"
    kind = value.get("type")
    if root_object and (kind != "object" or type(kind) is not str):
        return "type", "required field missing" if "type" not in value else "expected one of 'object'"
    props = value.get("properties")
    if props is not None or "properties" in value:
        if type(props) is not dict:
            return "properties", "expected object"
        for name, sub in props.items():
            # (JSON Schema 2020-12, and draft-06 on, allow true / false as a schema)
            if type(sub) is not dict and type(sub) is not bool:
                return f"properties.{name}", "expected object or boolean"
    if "required" in value:
        req = value["required"]
        if type(req) is not list:
            return "required", "expected array"
        for i, item in enumerate(req):
            if type(item) is not str:
                return f"required[{i}]", "expected string"
    if "$schema" in value and type(value["$schema"]) is not str:
        return "$schema", "expected string"
    return None


def _object_properties(schema: Any) -> bool:
    props = schema.get("properties") if type(schema) is dict else None
    return type(props) is not dict or all(type(sub) is dict for sub in props.values())


#: before 2026-07-28 schema.json types every property schema as an object (no true / false)
_OBJECT_PROPERTIES = Narrowed(
    dict[str, Any], _object_properties, "a JSON Schema object whose property schemas are objects"
)
#: ... and an output schema is an object schema too
_OBJECT_OUTPUT = Narrowed(
    dict[str, Any] | None,
    lambda schema: schema is None or (schema.get("type") == "object" and _object_properties(schema)),
    'a JSON Schema object with "type": "object"',
)


@frozen(kw_only=True, repr=False, eq=False)
class Tool:
    """A tool the server offers.

    ``input_schema`` / ``output_schema`` are JSON Schema objects held as
    dicts: every keyword survives a round trip. The input schema's ``type``
    is "object"; from 2026-07-28 on the output schema may describe any value
    (before it, an object too: encoding for those revisions refuses others).
    """

    name: str
    title: str | None = field(default=None, metadata=NEW_IN_2025_06_18)
    description: str | None = None
    input_schema: dict[str, Any] = field(validator=_input_schema, metadata=older_type("2026-07-28", _OBJECT_PROPERTIES))
    output_schema: dict[str, Any] | None = field(
        default=None,
        validator=_output_schema,
        metadata={**NEW_IN_2025_06_18, **older_type("2026-07-28", _OBJECT_OUTPUT)},
    )
    annotations: ToolAnnotations | None = field(default=None, metadata=NEW_IN_2025_03_26)
    execution: ToolExecution | None = field(default=None, metadata={**NEW_IN_2025_11_25, **REMOVED_IN_2026_07_28})
    icons: list[Icon] | None = field(default=None, metadata=NEW_IN_2025_11_25)
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class ListToolsRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["tools/list"] = "tools/list"
    id: RequestId
    params: PaginatedRequestParams | None = field(default=None, metadata=required_from("2026-07-28"))


@frozen(kw_only=True, repr=False, eq=False)
class ListToolsResult(PaginatedResult):
    tools: list[Tool]
    # (CacheableResult's fields, 2026-07-28)
    ttl_ms: int | None = field(default=None, validator=ttl_ms_validator, metadata=TTL_MS)
    cache_scope: CacheScope | None = field(default=None, metadata=CACHE_SCOPE)


@frozen(kw_only=True, repr=False, eq=False)
class CallToolRequestParams(TaskAugmentedRequestParams):
    """``input_responses`` and ``request_state`` (2026-07-28) carry a retry's answers
    (basic/patterns/mrtr); ``task`` (2025-11-25 only) asks for a task."""

    name: str
    arguments: dict[str, Any] | None = None
    input_responses: InputResponsesField | None = field(default=None, metadata=NEW_IN_2026_07_28)
    request_state: str | None = field(default=None, metadata=NEW_IN_2026_07_28)


@frozen(kw_only=True, repr=False, eq=False)
class CallToolRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["tools/call"] = "tools/call"
    id: RequestId
    params: CallToolRequestParams


@frozen(kw_only=True, repr=False, eq=False)
class CallToolResult(Result):
    content: list[ContentBlock]
    #: any JSON value (None: absent) from 2026-07-28 on; an object before
    structured_content: Any = field(default=None, metadata={**NEW_IN_2025_06_18, **STRUCTURED_BEFORE_2026})
    is_error: bool | None = None

    @property
    def text(self) -> str:
        r"""The text of the result's text blocks, one per line (other blocks left out).

        A read-only view for readers of a result (spec_notes/supported.md):

        >>> CallToolResult(content=[TextContent(text="sunny"), TextContent(text="21.5 C")]).text
        'sunny\n21.5 C'
        """
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


@frozen(kw_only=True, repr=False, eq=False)
class ToolListChangedNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: NotificationParams | None = None


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
