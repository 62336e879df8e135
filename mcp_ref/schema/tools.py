"""schema.ts "Tools"."""

from typing import Any, Literal

from attrs import field, frozen

from ._base import (
    NEW_IN_2025_03_26,
    NEW_IN_2025_06_18,
    NEW_IN_2025_11_25,
    REMOVED_IN_2026_07_28,
    FieldValueError,
    install_model_methods,
    since,
    until,
    wire_name,
)
from .content import ContentBlock, TextContent
from .jsonrpc import NotificationParams, RequestId, Result
from .lifecycle import Icon
from .pagination import PaginatedRequestParams, PaginatedResult
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


def _object_schema(instance: Any, attribute: Any, value: Any) -> None:
    """``inputSchema`` / ``outputSchema``: a JSON Schema object whose ``type`` is "object".

    Held as a plain dict (any JSON Schema keyword may appear and is kept);
    only the keys schema.ts names are checked.
    """
    if value is None:
        return
    problem = _object_schema_problem(value)
    if problem is not None:
        where, what = problem
        wire = wire_name(attribute.name, attribute.metadata)
        raise FieldValueError(f"{wire}.{where}" if where else wire, what)


def _object_schema_problem(value: Any) -> tuple[str, str] | None:
    """(path inside the schema, problem), or None when the shape is right."""
    if type(value) is not dict:
        return "", "expected object"
    kind = value.get("type")
    if kind != "object" or type(kind) is not str:
        return "type", "required field missing" if "type" not in value else "expected one of 'object'"
    props = value.get("properties")
    if props is not None or "properties" in value:
        if type(props) is not dict:
            return "properties", "expected object"
        for name, sub in props.items():
            if type(sub) is not dict:
                return f"properties.{name}", "expected object"
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


@frozen(kw_only=True, repr=False, eq=False)
class Tool:
    """A tool the server offers.

    ``input_schema`` / ``output_schema`` are JSON Schema objects held as
    dicts: every keyword survives a round trip, and ``type`` must be "object".
    """

    name: str
    title: str | None = field(default=None, metadata=NEW_IN_2025_06_18)
    description: str | None = None
    input_schema: dict[str, Any] = field(validator=_object_schema)
    output_schema: dict[str, Any] | None = field(default=None, validator=_object_schema, metadata=NEW_IN_2025_06_18)
    annotations: ToolAnnotations | None = field(default=None, metadata=NEW_IN_2025_03_26)
    execution: ToolExecution | None = field(default=None, metadata={**NEW_IN_2025_11_25, **REMOVED_IN_2026_07_28})
    icons: list[Icon] | None = field(default=None, metadata=NEW_IN_2025_11_25)
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class ListToolsRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["tools/list"] = "tools/list"
    id: RequestId
    params: PaginatedRequestParams | None = None


@frozen(kw_only=True, repr=False, eq=False)
class ListToolsResult(PaginatedResult):
    tools: list[Tool]


@frozen(kw_only=True, repr=False, eq=False)
class CallToolRequestParams(TaskAugmentedRequestParams):
    name: str
    arguments: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
class CallToolRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["tools/call"] = "tools/call"
    id: RequestId
    params: CallToolRequestParams


@frozen(kw_only=True, repr=False, eq=False)
class CallToolResult(Result):
    content: list[ContentBlock]
    structured_content: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)
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
