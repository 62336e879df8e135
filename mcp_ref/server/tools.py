"""server/tools: the tool registry and the tools/list and tools/call rules.

Sans-IO apart from awaiting the application's tool functions: no trio here.

A tool function takes ``(ctx, arguments)`` and returns one of:

* a :class:`CallToolResult` (sent as is, after the checks below);
* a string (one text block);
* a list of content blocks;
* a dict: *structured content* (server/tools#structured-content), also sent as
  a JSON text block for clients that only read ``content`` (tools#15).

Errors: raising :class:`ToolError` reports a *tool execution error*
(``isError: true``) the model can see; arguments that fail the input schema
are reported the same way (2025-11-25 asks for it, so the model can correct
itself); an unknown tool is a protocol error (-32602); any other exception of
the tool is a tool execution error too, with a generic text ("Internal error in
tool 'x'") and its traceback in the server's log; a structured result that
breaks the tool's own output schema is an internal error (-32603).
"""

import json
import logging
import re
import warnings
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Final

import attrs

from ..basic.json_schema import Validate, compile_schema
from ..basic.meta import check_meta_keys
from ..basic.transports.mcp_headers import ParamHeader, param_headers
from ..basic.versioning import Era, era_of
from ..errors import CapabilityMissing, ErrorCode, MCPRefError, MissingClientCapability, ProtocolError
from ..schema._base import install_model_methods
from ..schema.content import TextContent
from ..schema.lifecycle import ListChangedCapability
from ..schema.pagination import PaginatedRequestParams
from ..schema.tools import CallToolRequestParams, CallToolResult, ListToolsResult, Tool
from .access import check_scopes, permits
from .utilities.pagination import DEFAULT_PAGE_SIZE, Positions, paginate

__all__ = [
    "ToolError",
    "ToolNameWarning",
    "SensitiveHeaderWarning",
    "ToolFunction",
    "ToolRegistry",
    "ToolSignal",
    "as_call_tool_result",
    "check_tool_name",
]

log = logging.getLogger("mcp_ref.server.tools")

ToolFunction = Callable[[Any, dict[str, Any]], Awaitable[Any]]

_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]+")


class ToolError(Exception):
    """Raise it in a tool to report an execution error to the model.

    The call then answers with a result whose ``isError`` is true and whose one
    text block is ``str(error)`` (server/tools#error-handling): the model reads
    it and may try again differently. Use it for what the tool could not do
    (a city it does not know, a quota reached). Any other exception gives a
    result with ``isError`` too, whose text says only that the tool failed
    ("Internal error in tool 'x'"), with the traceback in the server's log; an
    ``MCPRefError`` (a deliberate ``ProtocolError``, a nested request's error)
    keeps its protocol error.
    """


class ToolSignal(Exception):
    """Raised through a tool handler as control flow, not as a failure (the tasks extension's
    ``TaskCreated``): the registry lets it pass instead of making it a tool execution error."""


class ToolNameWarning(UserWarning):
    """A tool name outside the spec's guidance (server/tools#tool-names)."""


class SensitiveHeaderWarning(UserWarning):
    """An ``x-mcp-header`` annotation on a parameter whose name says it holds a secret (2026-07-28)."""


#: parameter names that hold secrets or personal data by their look (lower case, without _ and -)
_SENSITIVE: Final = re.compile(r"password|passwd|secret|token|apikey|credential|authorization|privatekey|ssn|cookie")


def _warn_if_sensitive(tool: str, headers: tuple[ParamHeader, ...]) -> None:
    """[2026-07-28:server/tools#33] header values are seen by every intermediary: a parameter named like a
    secret should not be mirrored into one (a warning at registration: the name is only a hint)."""
    for header in headers:
        leaf = header.path[-1].lower().replace("_", "").replace("-", "")
        if _SENSITIVE.search(leaf):
            warnings.warn(
                f"tool {tool!r}: parameter {'.'.join(header.path)!r} looks sensitive; x-mcp-header exposes its"
                " value to every proxy on the way (server/tools#x-mcp-header)",
                SensitiveHeaderWarning,
                stacklevel=4,
            )


def check_tool_name(name: str) -> list[str]:
    """What is wrong with a tool name by the spec's guidance (empty if nothing).

    >>> check_tool_name("get_weather")
    []
    >>> check_tool_name("get weather!")
    ["characters outside [A-Za-z0-9_.-]: [' ', '!']"]
    """
    problems = []
    # [server/tools#7] 1 to 128 characters
    if not 1 <= len(name) <= 128:
        problems.append(f"length {len(name)} is outside 1..128")
    # [server/tools#9, #10] letters, digits, underscore, hyphen and dot only
    if name and not _NAME_CHARS.fullmatch(name):
        bad = sorted({c for c in name if not _NAME_CHARS.fullmatch(c)})
        problems.append(f"characters outside [A-Za-z0-9_.-]: {bad!r}")
    return problems


def as_call_tool_result(value: Any) -> CallToolResult:
    """Normalise what a tool function returned (ValueError for a result the schema forbids)."""
    if isinstance(value, CallToolResult):
        # (structured content may be any JSON value from 2026-07-28 on; for the revisions before it,
        # which take an object only, the registry wraps it: see legacy_tool)
        return value
    if isinstance(value, str):
        return CallToolResult(content=[TextContent(text=value)])
    if isinstance(value, dict):
        return CallToolResult(content=[], structured_content=value)
    if isinstance(value, Sequence):
        return CallToolResult(content=list(value))
    raise TypeError(f"a tool returns CallToolResult, str, dict or a list of content blocks, not {type(value).__name__}")


def _boolean_free(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its boolean property schemas spelled as objects (``true`` is ``{}``,
    ``false`` is ``{"not": {}}``: the same meaning, in a form the 2025 revisions take)."""
    props = schema.get("properties")
    if type(props) is not dict or all(type(sub) is dict for sub in props.values()):
        return schema
    spelled = {k: v if type(v) is dict else ({} if v else {"not": {}}) for k, v in props.items()}
    return {**schema, "properties": spelled}


def wraps_for_legacy(tool: Tool) -> bool:
    """Whether a 2025 revision sees ``tool``'s structured content wrapped as ``{"result": value}``:
    its output schema describes something other than an object (allowed from 2026-07-28 on)."""
    schema = tool.output_schema
    return schema is not None and (type(schema) is not dict or schema.get("type") != "object")


def legacy_tool(tool: Tool) -> Tool:
    """``tool`` as a revision before 2026-07-28 lists it (spec_notes/server/tools.md, "Tools only
    2026-07-28 can express"): an output schema of another type than object becomes
    ``{"result": <schema>}`` (its structured content is wrapped the same way, see
    :func:`legacy_result`), and boolean property schemas are spelled as objects. The same tool
    when it reads the same already."""
    output = tool.output_schema
    if wraps_for_legacy(tool):
        output = {"type": "object", "properties": {"result": output}, "required": ["result"]}
    elif output is not None:
        output = _boolean_free(output)
    inputs = _boolean_free(tool.input_schema)
    if output is tool.output_schema and inputs is tool.input_schema:
        return tool
    return attrs.evolve(tool, input_schema=inputs, output_schema=output)


def legacy_result(tool: Tool, result: CallToolResult) -> CallToolResult:
    """``result`` of ``tool`` for a revision before 2026-07-28: structured content that is not an
    object, or of a tool listed with a wrapped schema, is wrapped as ``{"result": value}``."""
    structured = result.structured_content
    if structured is None or (type(structured) is dict and not wraps_for_legacy(tool)):
        return result
    return attrs.evolve(result, structured_content={"result": structured})


@attrs.define(repr=False, eq=False)
class _Entry:
    tool: Tool
    fn: ToolFunction
    validate_input: Validate | None
    validate_output: Validate | None
    #: its x-mcp-header annotations (Streamable HTTP, 2026-07-28)
    headers: tuple[ParamHeader, ...] = ()
    #: the OAuth scopes a request needs to see and call it (none: every request)
    scopes: frozenset[str] = frozenset()
    #: ``tool`` as the revisions before 2026-07-28 list it, derived once (:func:`legacy_tool`)
    legacy: Tool = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.legacy = legacy_tool(self.tool)


class ToolRegistry:
    """The tools a server offers, in registration order.

    ``on_change`` (set by the server) is called when the list changes, so
    sessions can be sent ``notifications/tools/list_changed`` (tools#4).
    """

    def __init__(self, *, page_size: int = DEFAULT_PAGE_SIZE, list_changed: bool = True) -> None:
        self.page_size = page_size
        self.list_changed = list_changed
        self.on_change: Callable[[], None] | None = None
        self._entries: dict[str, _Entry] = {}
        self._positions = Positions()  # [server/utilities/pagination#2] keyset cursors

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def names(self) -> list[str]:
        return list(self._entries)

    def __getitem__(self, name: str) -> Tool:
        """The registered tool ``name`` (as tools/list sends it); KeyError if none."""
        return self._entries[name].tool

    def get(self, name: str) -> Tool | None:
        entry = self._entries.get(name)
        return entry.tool if entry else None

    def visible(self, ctx: Any, name: str) -> Tool | None:
        """Tool ``name`` if the request of ``ctx`` may see it (its scopes), else None."""
        entry = self._entries.get(name)
        return entry.tool if entry is not None and permits(ctx, entry.scopes) else None

    def param_headers(self, name: str) -> tuple[ParamHeader, ...]:
        """The ``x-mcp-header`` annotations of tool ``name`` (none for an unknown tool)."""
        entry = self._entries.get(name)
        return entry.headers if entry is not None else ()

    def add(self, tool: Tool, fn: ToolFunction, *, scopes: Iterable[str] | None = None) -> None:
        """Register a tool; its schemas are checked now (basic/index#24). ``scopes``: only requests whose
        access token grants them see and call it (:mod:`mcp_ref.server.access`)."""
        if tool.name in self._entries:
            # [server/tools#11] names are unique within a server
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        problems = check_tool_name(tool.name)
        if problems:
            warnings.warn(f"tool name {tool.name!r}: {'; '.join(problems)}", ToolNameWarning, stacklevel=3)
        check_meta_keys(tool.meta, f"tool {tool.name!r}")
        # [server/tools#5] inputSchema is a JSON Schema object (the model checks type "object")
        try:
            validate_input = compile_schema(tool.input_schema)
        except ValueError as e:
            # (InvalidSchema / UnsupportedDialect, kept as themselves, naming the tool and the schema)
            raise type(e)(f"tool {tool.name!r}: inputSchema: {e}") from None
        try:
            validate_output = compile_schema(tool.output_schema) if tool.output_schema is not None else None
        except ValueError as e:
            raise type(e)(f"tool {tool.name!r}: outputSchema: {e}") from None
        try:
            # [2026-07-28:server/tools#13] parameters may carry x-mcp-header annotations: read (and checked) here
            headers = param_headers(tool.input_schema)
        except ValueError as e:
            # [2026-07-28:basic/transports/streamable-http#37-#44] a tool whose x-mcp-header annotations a
            # client would have to reject is refused here, when it is registered
            raise ValueError(f"tool {tool.name!r}: {e}") from None
        needs = check_scopes(scopes, f"tool {tool.name!r}")
        _warn_if_sensitive(tool.name, headers)
        self._entries[tool.name] = _Entry(tool, fn, validate_input, validate_output, headers, needs)
        self._positions.add(tool.name)
        self._changed()

    def remove(self, name: str) -> None:
        del self._entries[name]
        self._positions.remove(name)
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def capability(self) -> ListChangedCapability:
        return ListChangedCapability(list_changed=self.list_changed or None)

    async def list_tools(self, ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        # [2026-07-28:server/tools#8] registration order, the same on every request while the set is unchanged
        cursor = params.cursor if params is not None else None
        # [2026-07-28:server/tools#5] the tools registered now that this request's authorization permits
        # a tool only 2026-07-28 can express is listed in the form a 2025 revision takes (never
        # failing the whole list): spec_notes/server/tools.md
        legacy = _legacy(ctx)
        tools = {name: e.legacy if legacy else e.tool for name, e in self._entries.items() if permits(ctx, e.scopes)}
        page, next_cursor = paginate("tools", tools, self._positions, cursor, self.page_size)
        return ListToolsResult(tools=page, next_cursor=next_cursor)

    async def call(self, ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        # [server/tools#8] the name is matched exactly: case matters -- tools#tool-names
        entry = self._entries.get(params.name)
        if entry is not None and not permits(ctx, entry.scopes):
            entry = None  # a tool this request may not see is one it cannot call either
        if entry is None:
            # [server/tools#error-handling] unknown tool: a protocol error, invalid params
            raise ProtocolError(f"Unknown tool: {params.name}", ErrorCode.INVALID_PARAMS)
        arguments = dict(params.arguments or {})
        if entry.validate_input is not None:
            errors = entry.validate_input(arguments)
            if errors:
                # [server/tools#20] inputs are validated; failures are tool execution errors
                text = "Invalid arguments for tool " + repr(params.name) + ": " + "; ".join(errors)
                return CallToolResult(content=[TextContent(text=text)], is_error=True)
        try:
            value = await entry.fn(ctx, arguments)
        except ToolError as e:
            # [server/tools#18] the tool's own failure is a result (isError), which reaches the
            # caller as data, for the model to see -- tools#error-handling
            return CallToolResult(content=[TextContent(text=str(e))], is_error=True)
        except MissingClientCapability:
            # [2026-07-28:basic/index#57] the request itself fails, -32021 (the same exception
            # class as below, so the tool's own `except CapabilityMissing` works in both eras)
            raise
        except CapabilityMissing as e:
            # a nested request the client cannot take (no sampling, elicitation, roots ...): the
            # tool could not do its work, which the model can read and act on -- not an internal error
            text = f"Tool {params.name!r} needs something this client does not offer: {e}"
            return CallToolResult(content=[TextContent(text=text)], is_error=True)
        except (MCPRefError, ToolSignal):
            # the protocol's own conditions (a deliberate ProtocolError, a nested request's error,
            # an input round of 2026-07-28, a timeout) and control flow keep their own answers
            raise
        except Exception:
            # [schema#37, 2026-07-28:schema#47] an error that originates from the tool is a result
            # with isError, not a protocol error (spec_notes/server/tools.md, "A tool that raises"):
            # the model is told the tool failed, nothing of it leaks, the traceback is logged once
            log.exception("tool %r failed", params.name)
            text = f"Internal error in tool {params.name!r}"
            return CallToolResult(content=[TextContent(text=text)], is_error=True)
        result = as_call_tool_result(value)
        return self._finish(entry, result, legacy=_legacy(ctx))

    def _finish(self, entry: _Entry, result: CallToolResult, *, legacy: bool = False) -> CallToolResult:
        structured = result.structured_content
        if structured is None:
            if entry.tool.output_schema is not None and not result.is_error:
                log.error("tool %r declares an output schema but returned no structured content", entry.tool.name)
                raise ProtocolError("Internal error", ErrorCode.INTERNAL_ERROR)
            return result
        if entry.validate_output is not None and not result.is_error:
            errors = entry.validate_output(structured)
            if errors:
                # [server/tools#16] structured results conform to the output schema: ours did not
                log.error(
                    "tool %r returned structured content that breaks its output schema: %s", entry.tool.name, errors
                )
                raise ProtocolError("Internal error", ErrorCode.INTERNAL_ERROR)
        if legacy:
            # (checked against the schema as registered; the 2025 form wraps both alike)
            result = legacy_result(entry.tool, result)
            structured = result.structured_content
        if not result.content:
            # [server/tools#15] the serialized JSON also goes in a text block
            result = attrs.evolve(result, content=[TextContent(text=json.dumps(structured, ensure_ascii=False))])
        return result


def _legacy(ctx: Any) -> bool:
    """Whether ``ctx``'s request is of a revision before 2026-07-28 (a 2025 session)."""
    revision = getattr(ctx, "revision", None)
    return isinstance(revision, str) and era_of(revision) is Era.LEGACY


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals(), hashable=False)
