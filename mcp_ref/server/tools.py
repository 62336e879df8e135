"""server/tools: the tool registry and the tools/list and tools/call rules.

Sans-IO apart from awaiting the application's tool functions: no trio here.
A tool function takes ``(ctx, arguments)`` and returns a
:class:`CallToolResult`, a string (one text block) or a list of content
blocks. Raising :class:`ToolError` reports a *tool execution error*
(``isError: true``, server/tools#error-handling) that the model can see; an
unknown tool is a protocol error (-32602); anything else a tool raises is an
internal error (-32603) whose details stay in the server's log.
"""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from ..errors import ErrorCode, ProtocolError
from ..schema.content import TextContent
from ..schema.lifecycle import ListChangedCapability
from ..schema.pagination import PaginatedRequestParams
from ..schema.tools import CallToolRequestParams, CallToolResult, ListToolsResult, Tool
from .utilities.pagination import DEFAULT_PAGE_SIZE, paginate

__all__ = ["ToolError", "ToolFunction", "ToolRegistry", "as_call_tool_result"]

ToolFunction = Callable[[Any, dict[str, Any]], Awaitable[Any]]


class ToolError(Exception):
    """Raised by a tool to report an execution error to the model (isError)."""


def as_call_tool_result(value: Any) -> CallToolResult:
    """Normalise what a tool function returned."""
    if isinstance(value, CallToolResult):
        return value
    if isinstance(value, str):
        return CallToolResult(content=[TextContent(text=value)])
    if isinstance(value, Sequence):
        return CallToolResult(content=list(value))
    raise TypeError(f"a tool returns CallToolResult, str or a list of content blocks, not {type(value).__name__}")


@attrs.define
class _Entry:
    tool: Tool
    fn: ToolFunction


class ToolRegistry:
    """The tools a server offers, in registration order."""

    def __init__(self, *, page_size: int = DEFAULT_PAGE_SIZE, list_changed: bool = True) -> None:
        self.page_size = page_size
        self.list_changed = list_changed
        self._entries: dict[str, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str) -> Tool | None:
        entry = self._entries.get(name)
        return entry.tool if entry else None

    def add(self, tool: Tool, fn: ToolFunction) -> None:
        if tool.name in self._entries:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._entries[tool.name] = _Entry(tool, fn)

    def remove(self, name: str) -> None:
        del self._entries[name]

    def capability(self) -> ListChangedCapability | None:
        return ListChangedCapability(list_changed=self.list_changed or None)

    async def list(self, ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        cursor = params.cursor if params is not None else None
        page, next_cursor = paginate("tools", [e.tool for e in self._entries.values()], cursor, self.page_size)
        return ListToolsResult(tools=page, next_cursor=next_cursor)

    async def call(self, ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        entry = self._entries.get(params.name)
        if entry is None:
            # [server/tools#error-handling] unknown tool: a protocol error, invalid params
            raise ProtocolError(f"Unknown tool: {params.name}", ErrorCode.INVALID_PARAMS)
        try:
            value = await entry.fn(ctx, dict(params.arguments or {}))
        except ToolError as e:
            return CallToolResult(content=[TextContent(text=str(e))], is_error=True)
        return as_call_tool_result(value)
