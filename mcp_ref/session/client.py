"""The client side: ``open_session`` / ``open_stdio_client`` and typed calls.

::

    async with open_stdio_client(sys.executable, ["-m", "mcp_ref.examples.echo"]) as client:
        tools = await client.list_all_tools()
        result = await client.call_tool("echo", {"text": "hi"})

The block owns the session's nursery: leaving it closes the session (and, for
stdio, shuts the server process down as basic/lifecycle#shutdown describes).

Client features are switched on by giving them: ``roots=`` (a list of roots or
a :class:`RootsProvider`), ``sampling=`` (an async handler), ``elicitation=``
(an async handler, with ``elicitation_modes``). Capabilities are declared from
what is given, unless ``capabilities=`` says otherwise.

The revision is chosen when the block opens (basic/versioning, 2026-07-28):
``server/discover`` first, and a 2026-07-28 server is spoken to request by
request (:mod:`mcp_ref.session.modern_client`); a server that answers it with
anything but a modern error, or not at all, gets ``initialize`` and a 2025
session (down to 2024-11-05 where that is all it offers).
``client.protocol_version`` says which; ``protocol_version=`` pins one. The
calls are the same in both eras; the same roots, sampling and elicitation
callbacks answer a 2025 server's requests and a 2026 server's input requests.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs
import trio

from .. import schema as model
from ..basic import versioning as versioning
from ..basic.json_schema import Validate, available, compile_schema
from ..basic.lifecycle import SUPPORTED_VERSIONS, Phase, Role
from ..basic.transports._nursery import block_nursery
from ..connection import Connection
from ..errors import (
    ConnectionClosed,
    ErrorCode,
    HTTPTransportError,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    UnsupportedProtocolVersion,
)
from ..exchange import TASKS_EXTENSION, StatelessEngine
from ..schema.jsonrpc import ProgressToken
from ..schema.lifecycle import (
    ClientCapabilities,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    SamplingCapability,
    ServerCapabilities,
)
from ..schema.logging import LoggingMessageNotificationParams, SetLevelRequestParams
from ..schema.pagination import PaginatedRequestParams
from ..schema.tools import CallToolRequestParams, CallToolResult, ListToolsResult, Tool
from ..server.utilities.logging import check_level
from .core import (
    NotificationHandler,
    PendingRequest,
    ProgressCallback,
    RequestHandler,
    Session,
    SessionConfig,
    check_async,
    session_scope,
)
from .modern_client import ERA_CACHE, EraCache, ModernSession, ProbeResult, ResultCache, probe

if TYPE_CHECKING:
    # roots, sampling and elicitation load when a session is given a handler for them (bench W7)
    from ..client.elicitation import ElicitationGuard, ElicitationHandler
    from ..client.roots import RootsProvider
    from ..client.sampling import SamplingGuard, SamplingHandler
    from ..schema.completion import (
        CompleteResult,
        PromptReference,
        ResourceTemplateReference,
    )
    from ..schema.prompts import GetPromptResult, ListPromptsResult, Prompt
    from ..schema.resources import (
        ListResourcesResult,
        ListResourceTemplatesResult,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
    )
    from ..schema.roots import Root

__all__ = ["ClientSession", "InvalidToolResult", "open_session", "open_stdio_client", "DEFAULT_CLIENT_INFO", "Era"]

#: how open_session picks the revision: "auto" probes with server/discover and falls back to
#: initialize; "modern" speaks 2026-07-28 only; "legacy" goes straight to initialize
Era = str

DEFAULT_CLIENT_INFO = Implementation(name="mcp_ref", version="0.1.0")
if TYPE_CHECKING:
    from ..schema.tasks import ListTasksResult, Task, TaskStatusNotificationParams
    from .task_requestor import TaskHandle
    from .tasks import TaskManager

log = logging.getLogger("mcp_ref.client")

#: the list method of each list_all_* field whose pages the result cache keeps
_LIST_METHODS: dict[str, str] = {
    "tools": "tools/list",
    "resources": "resources/list",
    "resource_templates": "resources/templates/list",
    "prompts": "prompts/list",
}


#: the codes a resources/read error says "nothing there" with: -32602 (2026-07-28), -32002 (before)
_NOT_FOUND_CODES = frozenset({ErrorCode.INVALID_PARAMS, ErrorCode.RESOURCE_NOT_FOUND})


class _CursorRefused(Exception):
    """A page after the first failed: the server may have refused its cursor."""

    def __init__(self, error: MCPError) -> None:
        super().__init__(str(error))
        self.error = error


class InvalidToolResult(RemoteProtocolError):
    """[server/tools#17] a tool's structured result breaks its declared output schema."""


class ClientSession:
    """An initialised client session: typed calls to the server.

    Get one from :func:`open_session`, :func:`open_stdio_client` or
    ``open_http_client``; it lives as long as their ``async with`` block.
    The ``**options`` of every call are those of :meth:`Session.request`:
    ``timeout=`` (idle seconds; default ``SessionConfig.request_timeout``,
    60 s), ``max_timeout=`` (the cap progress cannot extend; default 600 s),
    ``progress=`` (an async ``(progress, total, message)`` callback) and
    ``progress_token=``.
    A call raises :class:`~mcp_ref.MCPError` for an error answer,
    :class:`~mcp_ref.RequestTimeout`, :class:`~mcp_ref.ConnectionClosed`, and
    :class:`~mcp_ref.LocalProtocolError` / ``ValueError`` for a request that
    cannot be sent (nothing goes on the wire then). Cancelling the calling
    task (a trio cancel scope) cancels the request at the server too.
    """

    def __init__(
        self,
        session: Session | ModernSession,
        init: InitializeResult,
        *,
        roots: RootsProvider | None = None,
        elicitation: ElicitationGuard | None = None,
        validate_tool_results: bool = True,
    ) -> None:
        #: the underlying Session (requests, notifications, the engine)
        self.session = session
        #: the server's answer to ``initialize``
        self.init_result = init
        #: the roots this client offers (None: no roots capability)
        self.roots = roots
        #: what answers the server's elicitation requests (None: not offered)
        self.elicitation = elicitation
        #: whether structured tool results are checked against their output schemas
        self.validate_tool_results = validate_tool_results
        #: "modern" (2026-07-28, request by request) or "legacy" (an initialized session)
        self.era = "modern" if _is_modern(session) else "legacy"
        #: (modern) the server/discover result the revision was chosen from
        self.discover_result: Any = None
        #: (modern, Streamable HTTP) each listed tool's x-mcp-header parameters
        self._param_headers: dict[str, Any] = {}
        #: (modern) results reused while their ttlMs lasts (server/utilities/caching); None: off
        self.cache: ResultCache | None = None
        self._output_validators: dict[str, Validate | None] = {}
        #: tools whose output schema cannot be used: why (their results are refused)
        self._unusable_schemas: dict[str, str] = {}
        #: task support of the tools seen in tools/list (tasks#tool-level-negotiation)
        self._task_support: dict[str, str | None] = {}

    @property
    def protocol_version(self) -> str:
        """The protocol revision the session negotiated (``initialize``'s answer)."""
        return self.init_result.protocol_version

    @property
    def server_info(self) -> Implementation:
        """The server's name, version and other details, as it said in ``initialize``."""
        return self.init_result.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server declared it offers (tools, resources, prompts, logging, tasks ...)."""
        return self.init_result.capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if it gave any."""
        return self.init_result.instructions

    # -- generic ------------------------------------------------------------------

    async def request(self, method: str, params: Any = None, **options: Any) -> Any:
        """Any request, through the session's one funnel (see Session.request)."""
        return await self.session.request(method, params, **options)

    async def start_request(self, method: str, params: Any = None, **options: Any) -> PendingRequest | Any:
        """Send a request and get its handle: ``await h.result()``, ``await h.cancel(reason)``."""
        return await self.session.start_request(method, params, **options)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send the notification ``method`` with ``params`` (a model object or None)."""
        await self.session.notify(method, params)

    async def ping(self, *, timeout: float | None = None) -> None:
        """[basic/utilities/ping] an empty result, or RequestTimeout / MCPError (in 2026-07-28, which has
        no ping, a ``server/discover`` round trip)."""
        if isinstance(self.session, ModernSession):
            # 2026-07-28 has no ping: a server/discover round trip shows the server is there (it
            # changes nothing at the server)
            await self.session.request("server/discover", None, timeout=timeout)
            return
        await self._legacy("ping").ping(timeout=timeout)

    def _legacy(self, what: str) -> Session:
        """The 2025 session, for what only it has (2026-07-28 dropped it or made it an extension)."""
        session = self.session
        if isinstance(session, ModernSession):
            raise LocalProtocolError(
                f"{what} is not part of revision {self.protocol_version}: open the client with era='legacy'"
                " (or protocol_version='2025-11-25') for a 2025 session, which has it"
            )
        return session

    async def _all_pages(self, fetch: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
        """Follow ``nextCursor`` to the end; cursors stay opaque (pagination#3, #4).

        (2026-07-28, with the result cache) The list is one snapshot: its cached pages
        serve only when every one of them is fresh; otherwise every page is read again
        from the start (and kept). A cursor the server refuses midway drops the cached
        pages of the list and reads it again from the start, once.
        """
        method = _LIST_METHODS.get(field)
        cache = self.cache if method is not None and isinstance(self.session, ModernSession) else None
        # every page fresh in the cache: walked through list_*'s own checks, each page a cache hit (no
        # checkpoint between them, so none expires midway)
        whole = cache is not None and method is not None and cache.pages(method, field) is not None
        for attempt in range(2):
            try:
                # [2026-07-28:server/utilities/caching#22] a consistent snapshot: from the first page, every
                # page fetched again rather than mixed with older cached ones
                return await self._walk(
                    lambda c: fetch(c, cache=False) if cache is not None and not whole else fetch(c), field
                )
            except _CursorRefused as refused:
                error = refused.error
                if cache is None or whole or attempt or error.code != ErrorCode.INVALID_PARAMS:
                    raise error from None
                assert method is not None
                # [2026-07-28:server/utilities/caching#23] a cursor the server no longer takes: every cached
                # page of the list goes, and the list is read again from its start
                cache.forget(method)
                log.info("%s: the server refused a cursor (%s); reading the list again from the start", method, error)
        raise AssertionError("unreachable")

    async def _walk(self, fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            # [server/prompts#8, server/utilities/pagination#1, #4] pages of any size; the cursor goes
            # back untouched -- pagination#implementation-guidelines
            try:
                page = await fetch(cursor)
            except MCPError as e:
                if cursor is None:
                    raise
                raise _CursorRefused(e) from e  # (refused on a later page: its cursor, not the request)
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            # [server/utilities/pagination#3] no nextCursor: the end; [2026-07-28:server/utilities/pagination#5]
            # only None ends it: any string, "" too, is a cursor to send back
            if cursor is None:
                return items
            if cursor in seen:
                raise RemoteProtocolError(f"the server repeated the cursor {cursor!r}: pagination would never end")
            seen.add(cursor)

    @staticmethod
    def _page(cursor: str | None) -> PaginatedRequestParams | None:
        return PaginatedRequestParams(cursor=cursor) if cursor is not None else None

    # -- tools -----------------------------------------------------------------------

    async def _cached(self, method: str, key: Any, params: Any, options: Mapping[str, Any]) -> Any:
        """A cacheable request: a fresh cached result, or the server's (kept for its ttlMs)."""
        cache = self.cache
        session = self.session
        options = dict(options)
        # [2026-07-28:server/utilities/caching#7] cache=False: fetched now, whatever is kept (and kept anew)
        use_cached = options.pop("cache", True)
        if cache is None or not isinstance(session, ModernSession):
            return await session.request(method, params, **options)
        hit = cache.get(method, key) if use_cached else None
        if hit is not None:
            return hit
        retried: list[bool] = []
        result = await session.request(method, params, retried=retried, **options)
        if not retried:
            # [2026-07-28:server/utilities/caching#3] a result a retry with input produced is never kept
            cache.put(method, key, result)
        return result

    async def list_tools(self, cursor: str | None = None, **options: Any) -> ListToolsResult:
        """One page of the server's tools (``cursor``: the page after that one); also remembers their output schemas,
        so later results are validated.
        """
        result: ListToolsResult = await self._cached("tools/list", cursor, self._page(cursor), options)
        # [2026-07-28:basic/transports/streamable-http#48] over a pipe the annotations are ignored
        if self._over_http_modern():
            result = self._usable_over_http(result)
        for tool in result.tools:
            self._remember_output_schema(tool)
        return result

    def _over_http_modern(self) -> bool:
        return self.era == "modern" and getattr(self.session.channel, "modern", None) is not None

    def _usable_over_http(self, result: ListToolsResult) -> ListToolsResult:
        """[2026-07-28:basic/transports/streamable-http#45, #46, #47] a tool whose x-mcp-header annotations
        break the rules is left out, with a warning naming it and why; the others are kept, with
        the parameters their calls mirror into headers -- streamable-http#schema-extension"""
        from ..basic.transports.mcp_headers import param_headers

        kept = []
        for tool in result.tools:
            try:
                self._param_headers[tool.name] = param_headers(tool.input_schema or {})
            except ValueError as e:
                self._param_headers.pop(tool.name, None)
                log.warning("tool %r left out: its x-mcp-header annotations are invalid (%s)", tool.name, e)
                continue
            kept.append(tool)
        if len(kept) == len(result.tools):
            return result
        return attrs.evolve(result, tools=kept)

    async def list_all_tools(self, **options: Any) -> list[Tool]:
        """Every tool, following the pages to the end."""
        return await self._all_pages(lambda c, **kw: self.list_tools(c, **{**options, **kw}), "tools")

    def _forget_tools(self) -> None:
        """The server's tools changed: what was learnt of their schemas is learnt again."""
        self._output_validators.clear()
        self._unusable_schemas.clear()
        self._task_support.clear()

    def _remember_output_schema(self, tool: Tool) -> None:
        self._task_support[tool.name] = tool.execution.task_support if tool.execution is not None else None
        self._unusable_schemas.pop(tool.name, None)
        if tool.output_schema is None:
            self._output_validators[tool.name] = None
            return
        try:
            self._output_validators[tool.name] = compile_schema(tool.output_schema)
        except ValueError as e:
            log.warning("tool %r has an output schema we cannot use (its results are refused): %s", tool.name, e)
            self._output_validators[tool.name] = None
            self._unusable_schemas[tool.name] = str(e)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
        progress_token: ProgressToken | None = None,
        timeout: float | None = None,
        max_timeout: float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> CallToolResult:
        """Call a tool. With ``validate_tool_results`` (the default) and the
        validation extra installed, a result is checked against the tool's output
        schema before it is returned (InvalidToolResult when it breaks it, or has no
        structured content where the schema asks for it): the schema is the one
        ``list_tools`` gave, or, for a tool this session has not listed yet, learnt
        with one ``tools/list`` after the call (kept until the server says its tools
        changed). An error result (``is_error``) is not checked."""
        if self._task_support.get(name) == "required":
            # [basic/utilities/tasks#8] such a tool is only ever called as a task
            raise LocalProtocolError(f"tool {name!r} requires task execution: use call_tool_as_task")
        params = CallToolRequestParams(
            name=name,
            arguments=_arguments(arguments) if arguments is not None else None,
            meta=dict(meta) if meta is not None else None,
        )
        try:
            result: CallToolResult = await self.session.request(
                "tools/call",
                params,
                progress=progress,
                progress_token=progress_token,
                timeout=timeout,
                max_timeout=max_timeout,
            )
        except MCPError as e:
            if not (self._over_http_modern() and e.code == versioning.HEADER_MISMATCH):
                raise
            log.info("tools/call %r: header mismatch (%s); listing the tools again", name, e.message)
            # [2026-07-28:basic/transports/streamable-http#57] the headers a call mirrors may have
            # changed: the tools are listed again and the call sent once more with them
            await self.list_all_tools()
            result = await self.session.request(
                "tools/call",
                params,
                progress=progress,
                progress_token=progress_token,
                timeout=timeout,
                max_timeout=max_timeout,
            )
        if isinstance(result, dict) and result.get("resultType") == "task":
            # [ext-tasks:tasks#3] the server made a task of the call (tasks extension): the caller
            # gets the final result all the same, polled for underneath
            from ..ext.tasks.client import wait_for_result  # (loaded when a task comes: bench W7)

            result = await wait_for_result(self, result)
        if not self.validate_tool_results or result.is_error:
            return result
        if name not in self._output_validators and available():
            # [server/tools#17] a tool this session has not listed yet: its output schema is
            # learnt now (one tools/list, then kept until the server says the list changed), so
            # results are checked whether or not the application called list_tools first
            for tool in await self.list_all_tools():
                self._remember_output_schema(tool)
            self._output_validators.setdefault(name, None)  # not listed: nothing to check against
        if (unusable := self._unusable_schemas.get(name)) is not None:
            # [2026-07-28:basic/index#44] a schema that cannot be used (a reference to nothing or to the
            # network, an unknown dialect) refuses the tool's results, never lets them through unchecked
            raise InvalidToolResult(f"tool {name!r} declares an output schema that cannot be used: {unusable}")
        validate = self._output_validators.get(name)
        if validate is not None:
            if result.structured_content is None:
                raise InvalidToolResult(f"tool {name!r} declares an output schema but returned no structured content")
            errors = validate(result.structured_content)
            if errors:
                # [server/tools#17, #21] clients validate structured results before the application sees them
                raise InvalidToolResult(f"tool {name!r} returned structured content breaking its schema: {errors}")
        return result

    # -- resources ----------------------------------------------------------------------

    async def list_resources(self, cursor: str | None = None, **options: Any) -> ListResourcesResult:
        """One page of the server's resources (``cursor``: the page after that one)."""
        result: ListResourcesResult = await self._cached("resources/list", cursor, self._page(cursor), options)
        return result

    async def list_all_resources(self, **options: Any) -> list[Resource]:
        """Every resource, following the pages to the end."""
        return await self._all_pages(lambda c, **kw: self.list_resources(c, **{**options, **kw}), "resources")

    async def list_resource_templates(self, cursor: str | None = None, **options: Any) -> ListResourceTemplatesResult:
        """One page of the server's resource templates (``cursor``: the page after that one)."""
        result: ListResourceTemplatesResult = await self._cached(
            "resources/templates/list", cursor, self._page(cursor), options
        )
        return result

    async def list_all_resource_templates(self, **options: Any) -> list[ResourceTemplate]:
        """Every resource template, following the pages to the end."""
        return await self._all_pages(
            lambda c, **kw: self.list_resource_templates(c, **{**options, **kw}), "resource_templates"
        )

    async def read_resource(self, uri: str, **options: Any) -> ReadResourceResult:
        """Read the resource at ``uri``: its contents (``result.text`` is the text of a single text content).
        :class:`~mcp_ref.ResourceNotFound` (an MCPError) when the server has none there or refused the
        URI: code -32002 from a server of an earlier revision, -32602 from a 2026-07-28 one.
        """
        # (a read that needed input rounds is not kept: ModernSession reports whether it did)
        try:
            result: ReadResourceResult = await self._cached(
                "resources/read", uri, model.ReadResourceRequestParams(uri=uri), options
            )
        except MCPError as e:
            from ..server.resources import ResourceNotFound  # (loaded when first needed, bench W7)

            if isinstance(e, ResourceNotFound) or e.code not in _NOT_FOUND_CODES:
                raise
            # [2026-07-28:server/resources#15] -32602 (2026-07-28) and -32002 (earlier revisions) both say
            # the server has nothing there: one exception, with the code it sent
            raise ResourceNotFound(uri, code=e.code, message=e.message, data=e.data) from e
        return result

    async def subscribe_resource(self, uri: str, **options: Any) -> None:
        """Ask to be told when the resource at ``uri`` changes (``on_resource_updated`` of open_session receives its
        URI).
        """
        if self.era == "modern":
            raise LocalProtocolError(
                "2026-07-28 has no resources/subscribe: use `async with client.listen(resource_uris=[uri])`"
            )
        await self.session.request("resources/subscribe", model.SubscribeRequestParams(uri=uri), **options)

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        ack_timeout: float | None = None,
    ) -> Any:
        """(2026-07-28) ``async with client.listen(tools=True) as sub: async for method, params in sub``.

        A ``subscriptions/listen`` stream (basic/patterns/subscriptions):
        see :class:`~mcp_ref.Subscription`. A 2025
        session has its notifications on the session instead (``on_list_changed``,
        ``on_resource_updated`` and :meth:`subscribe_resource`).
        """
        if not isinstance(self.session, ModernSession):
            raise LocalProtocolError(
                "subscriptions/listen is 2026-07-28; in this 2025 session use open_session(on_list_changed=...) "
                "and subscribe_resource()"
            )
        return self.session.listen(
            tools=tools,
            prompts=prompts,
            resources=resources,
            resource_uris=tuple(resource_uris),
            ack_timeout=ack_timeout,
        )

    async def unsubscribe_resource(self, uri: str, **options: Any) -> None:
        """Stop the notifications ``subscribe_resource`` asked for."""
        await self.session.request("resources/unsubscribe", model.UnsubscribeRequestParams(uri=uri), **options)

    # -- prompts ----------------------------------------------------------------------------

    async def list_prompts(self, cursor: str | None = None, **options: Any) -> ListPromptsResult:
        """One page of the server's prompts (``cursor``: the page after that one)."""
        result: ListPromptsResult = await self._cached("prompts/list", cursor, self._page(cursor), options)
        return result

    async def list_all_prompts(self, **options: Any) -> list[Prompt]:
        """Every prompt, following the pages to the end."""
        return await self._all_pages(lambda c, **kw: self.list_prompts(c, **{**options, **kw}), "prompts")

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, **options: Any
    ) -> GetPromptResult:
        """The prompt ``name`` filled in with ``arguments`` (strings; TypeError before sending for anything else): its
        messages (``result.text`` is the text of a single text message).
        """
        if arguments is not None:
            arguments = _arguments(arguments)
            not_str = sorted(k for k, v in arguments.items() if not isinstance(v, str))
            if not_str:
                # the schema types prompt arguments as strings: a server would refuse anything else
                raise TypeError(f"prompt arguments are strings: {not_str} are not")
        params = model.GetPromptRequestParams(name=name, arguments=arguments)
        result: GetPromptResult = await self.session.request("prompts/get", params, **options)
        return result

    # -- completion and logging -------------------------------------------------------------

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference,
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
        **options: Any,
    ) -> CompleteResult:
        """Completion suggestions for ``argument`` of a prompt or resource template (``ref``) whose value so far is
        ``value``; ``context`` holds the values of arguments already chosen.
        """
        params = model.CompleteRequestParams(
            ref=ref,
            argument=model.CompletionArgument(name=argument, value=value),
            context=model.CompletionContext(arguments=dict(context)) if context is not None else None,
        )
        result: CompleteResult = await self.session.request("completion/complete", params, **options)
        return result

    async def set_logging_level(self, level: str, **options: Any) -> None:
        """Ask the server to send log messages at ``level`` and above (``on_log`` of open_session receives them);
        ValueError before sending for a level that does not exist.
        """
        params = SetLevelRequestParams(level=check_level(level))  # ValueError before anything is sent
        if self.era == "modern":
            # [2026-07-28:basic/index] no logging/setLevel: the level goes in each request's _meta
            self.session.log_level = params.level
            return
        await self.session.request("logging/setLevel", params, **options)

    # -- tasks ------------------------------------------------------------------------------

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: int | None = None,
        progress: ProgressCallback | None = None,
        **options: Any,
    ) -> TaskHandle:
        """Call a tool as a task (basic/utilities/tasks); returns its handle.

        Refused before sending when the server lacks tasks.requests.tools.call;
        the tool's ``execution.taskSupport`` is the server's to enforce.
        """
        if name in self._task_support and self._task_support[name] not in ("optional", "required"):
            # [basic/utilities/tasks#5] absent or "forbidden": never as a task
            raise LocalProtocolError(f"tool {name!r} does not support task execution")
        requestor = _task_requestor()
        # [basic/utilities/tasks#10] task-augmented, with the ttl asked for (if any)
        params = CallToolRequestParams(
            name=name,
            arguments=_arguments(arguments) if arguments is not None else None,
            task=requestor.task_metadata(ttl),
        )
        handle: TaskHandle = await requestor.start_augmented(
            self._legacy("tasks (call_tool_as_task)"), "tools/call", params, progress=progress, **options
        )
        return handle

    async def list_tasks(self, cursor: str | None = None, **options: Any) -> ListTasksResult:
        """One page of the tasks the server keeps for us (``cursor``: the page after that one)."""
        from .task_requestor import list_tasks

        return await list_tasks(self._legacy("tasks/list"), cursor, **options)

    async def list_all_tasks(self, **options: Any) -> list[Task]:
        """Every task the server keeps for us, following the pages to the end."""
        return await self._all_pages(lambda c: self.list_tasks(c, **options), "tasks")

    # -- roots ------------------------------------------------------------------------------

    async def set_roots(self, roots: Iterable[Root]) -> None:
        """Replace our roots; [client/roots#2] tell the server when listChanged was declared."""
        if self.roots is None:
            raise RuntimeError("this session was opened without roots")
        self.roots.set(roots)
        # (2026-07-28 has no roots list_changed: the next roots/list input request sees them)
        if self.roots.list_changed and self.era == "legacy":
            await self.session.notify("notifications/roots/list_changed")


@functools.cache
def _task_requestor() -> ModuleType:
    """:mod:`mcp_ref.session.task_requestor`, loaded by the first task-augmented call (a
    client that never makes one never loads it) and kept: an import statement in a
    function looks the module up again at every call (about 11k instructions, bench W8)."""
    from . import task_requestor

    return task_requestor


def _arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a call's arguments; a TypeError that says so for anything but a mapping."""
    try:
        return dict(arguments)
    except (TypeError, ValueError):
        raise TypeError(f"arguments map names to values (a dict), not {type(arguments).__name__}") from None


def _roots_provider(roots: Iterable[Root] | RootsProvider | None) -> RootsProvider | None:
    if roots is None:
        return None
    from ..client.roots import RootsProvider

    return roots if isinstance(roots, RootsProvider) else RootsProvider(roots)


def _capabilities(
    roots: RootsProvider | None,
    sampling: SamplingGuard | None,
    elicitation: ElicitationGuard | None,
) -> ClientCapabilities:
    # [2026-07-28:client/elicitation#4, client/sampling#6, client/roots#2] what the callbacks given make us
    # support, declared in the _meta of every 2026-07-28 request (the engine writes it on each one)
    return ClientCapabilities(
        roots=roots.capability() if roots is not None else None,
        # [client/sampling#5] a sampling handler given: sampling declared -- sampling#capabilities
        sampling=(
            SamplingCapability(tools={} if sampling.tools else None, context={} if sampling.context else None)
            if sampling is not None
            else None
        ),
        elicitation=elicitation.capability() if elicitation is not None else None,
    )


@asynccontextmanager
async def _owned_task_manager() -> AsyncIterator[TaskManager]:
    """A :class:`TaskManager` in a nursery of its own, cancelled when the block ends."""
    from .tasks import TaskManager

    async with block_nursery() as (nursery, body):
        try:
            yield TaskManager(nursery)
        except BaseException as exc:
            body.exc = exc
            raise
        finally:
            nursery.cancel_scope.cancel(reason="the session ended")


@asynccontextmanager
async def open_session(
    channel: trio.abc.Channel[bytes],
    *,
    client_info: Implementation = DEFAULT_CLIENT_INFO,
    capabilities: ClientCapabilities | None = None,
    protocol_version: str | None = None,
    supported_versions: tuple[str, ...] | None = None,
    roots: Iterable[Root] | RootsProvider | None = None,
    sampling: SamplingHandler | None = None,
    sampling_tools: bool = False,
    sampling_context: bool = False,
    elicitation: ElicitationHandler | None = None,
    elicitation_modes: Sequence[str] = ("form",),
    on_log: Callable[[LoggingMessageNotificationParams], Awaitable[None]] | None = None,
    on_list_changed: Callable[[str], Awaitable[None]] | None = None,
    on_resource_updated: Callable[[str], Awaitable[None]] | None = None,
    on_elicitation_complete: Callable[[str], Awaitable[None]] | None = None,
    on_task_status: Callable[[TaskStatusNotificationParams], Awaitable[None]] | None = None,
    tasks: TaskManager | bool | None = None,
    handlers: Mapping[str, RequestHandler] | None = None,
    notification_handlers: Mapping[str, NotificationHandler] | None = None,
    config: SessionConfig | None = None,
    initialize_timeout: float | None = None,
    initialize_meta: Mapping[str, Any] | None = None,
    validate_tool_results: bool = True,
    era: str = "auto",
    discover_timeout: float = 10.0,
    era_cache: EraCache | None = None,
    era_key: Any = None,
    modern_versions: tuple[str, ...] = versioning.MODERN_VERSIONS,
    max_input_rounds: int = 8,
    log_level: str | None = None,
    cache: bool = True,
    tasks_extension: bool = False,
) -> AsyncIterator[ClientSession]:
    """Open an MCP client on ``channel`` in the revision the server speaks, and yield it.

    [2026-07-28:basic/transports/stdio#16-#18, basic/transports/streamable-http#70, #71] ``era``:
    "auto" (the default) asks ``server/discover`` first and speaks 2026-07-28
    to a server that answers it (or refuses it with a modern error), else
    falls back to ``initialize`` (a server that answers with another error, or
    not within ``discover_timeout`` seconds); "modern" speaks 2026-07-28 only
    (UnsupportedProtocolVersion when the server does not); "legacy" goes
    straight to ``initialize``. ``protocol_version`` pins a revision (a
    2026-07-28 one: modern; an earlier one: legacy, proposed in initialize).
    The era found is kept in ``era_cache`` under ``era_key`` (what
    ``open_stdio_client`` / ``open_http_client`` pass: the command, the
    origin): a server known to be legacy is not probed again.

    In 2026-07-28 the ``roots``, ``sampling`` and ``elicitation`` callbacks
    answer the input requests of multi round-trip requests, at most
    ``max_input_rounds`` retries per call; ``log_level`` asks for
    ``notifications/message`` (to ``on_log``) on every request;
    ``on_list_changed`` is served by a ``subscriptions/listen`` stream the
    client keeps open while the block runs (resource updates:
    ``client.listen(resource_uris=...)``); ``cache`` keeps list and read
    results for the ``ttlMs`` the server gives them (a change notification
    on any subscription drops the ones it concerns).

    ``protocol_version`` pins a revision: a 2025 one is proposed in
    ``initialize`` (default: our latest, basic/lifecycle#8) and a server that
    answers with another raises :class:`~mcp_ref.UnsupportedProtocolVersion`
    (the session is closed, basic/lifecycle#12), never runs it silently.
    ``supported_versions`` are the 2025 revisions the client accepts in the
    server's answer (default: the pinned one, else all we speak): give them
    with ``protocol_version`` to make it a preference (``supported_versions=
    mcp_ref.SUPPORTED_VERSIONS``).
    Callbacks: ``on_log(params)``, ``on_list_changed(kind)`` with kind
    "tools" / "resources" / "prompts", ``on_resource_updated(uri)``,
    ``on_elicitation_complete(elicitation_id)``, ``on_task_status(params)``
    (a ``TaskStatusNotificationParams``: a task of ours changed status; the
    receiver may never send them, so polling stays the way to be sure). They run one at a time, in
    the order the notifications arrived. A callback that raises ends the
    session: the block is cancelled and the callback's exception is raised
    from the ``async with``, once and as itself (nothing is logged and
    dropped; catch inside the callback what should not end the session).

    ``tasks=True`` lets the server make our sampling and elicitation
    answers tasks (basic/utilities/tasks; declared in ``capabilities.tasks``
    for the handlers given): they run in a nursery the session owns, and
    those still running are cancelled when the block ends. A
    :class:`~mcp_ref.session.tasks.TaskManager` of your own (its nursery,
    ``store=``, ``config=``) can be given instead, to share it or keep its
    tasks beyond the session.
    """
    async with AsyncExitStack() as stack:
        manager: TaskManager | None = None
        if tasks is True:  # a task manager in a nursery of the session's own
            manager = await stack.enter_async_context(_owned_task_manager())
        elif tasks is not None and tasks is not False:
            manager = tasks
        callbacks = {
            "sampling": sampling,
            "elicitation": elicitation,
            "on_log": on_log,
            "on_list_changed": on_list_changed,
            "on_resource_updated": on_resource_updated,
            "on_elicitation_complete": on_elicitation_complete,
            "on_task_status": on_task_status,
        }
        for what, callback in callbacks.items():
            if callback is not None:
                check_async(what, callback)
        roots_provider = _roots_provider(roots)
        sampling_guard = None
        if sampling:
            from ..client.sampling import SamplingGuard

            sampling_guard = SamplingGuard(sampling, tools=sampling_tools, context=sampling_context)
        unknown_modes = set(elicitation_modes) - {"form", "url"}
        if unknown_modes:
            raise ValueError(f"unknown elicitation modes {sorted(unknown_modes)}")
        elicitation_guard = None
        if elicitation:
            from ..client.elicitation import ElicitationGuard

            elicitation_guard = ElicitationGuard(
                elicitation, form="form" in elicitation_modes, url="url" in elicitation_modes
            )
        table: dict[str, RequestHandler] = {}
        if roots_provider is not None:
            table["roots/list"] = roots_provider.handle
        if sampling_guard is not None:
            table["sampling/createMessage"] = _task_aware(sampling_guard, manager)
        if elicitation_guard is not None:
            table["elicitation/create"] = _task_aware(elicitation_guard, manager)
        if manager is not None:
            table.update(manager.handlers())
        table.update(handlers or {})
        notes = _notification_table(
            on_log, on_list_changed, on_resource_updated, on_elicitation_complete, elicitation_guard
        )
        if on_task_status is not None:
            status_cb = on_task_status

            async def on_status(session: Session, params: Any) -> None:
                await status_cb(params)

            # [basic/utilities/tasks#task-status-notification] optional: polling stays the way to be sure
            notes["notifications/tasks/status"] = on_status
        notes.update(notification_handlers or {})
        # the tools changed: the output schemas learnt are forgotten (see ClientSession.call_tool)
        tools_changed: list[Callable[[], None]] = []
        notes["notifications/tools/list_changed"] = _also(tools_changed, notes.get("notifications/tools/list_changed"))
        caps = capabilities or _capabilities(roots_provider, sampling_guard, elicitation_guard)
        if manager is not None and capabilities is None:
            caps = attrs.evolve(
                caps,
                # [basic/utilities/tasks#1] tasks enabled: declared -- tasks#capabilities
                tasks=manager.client_capability(
                    sampling=sampling_guard is not None, elicitation=elicitation_guard is not None
                ),
            )
        if tasks_extension:
            # the tasks extension declared on every 2026-07-28 request: a tools/call may become a task
            extensions = {**dict(caps.extra.get("extensions") or {}), TASKS_EXTENSION: {}}
            caps = attrs.evolve(caps, extra={**caps.extra, "extensions": extensions})
        #: what the client could speak (a pin narrows what it accepts, not what it can suggest)
        speakable = supported_versions or SUPPORTED_VERSIONS
        if supported_versions is None:
            # [basic/lifecycle#12] a pinned revision is the only one we accept (docs/revisions.rst)
            pinned = protocol_version in SUPPORTED_VERSIONS
            supported_versions = (protocol_version,) if pinned and protocol_version else SUPPORTED_VERSIONS
        chosen = _choose_era(era, protocol_version, supported_versions, modern_versions)
        not_modern: Callable[[str | None], UnsupportedProtocolVersion] | None = None
        eras = era_cache if era_cache is not None else ERA_CACHE
        if chosen == "auto" and eras.get(era_key) == "legacy":
            chosen = "legacy"  # [2026-07-28:basic/versioning#9] known: not probed again
        if chosen != "legacy":
            versions = (protocol_version,) if protocol_version in modern_versions else modern_versions
            engine = StatelessEngine(Role.CLIENT, info=client_info, capabilities=caps, supported_versions=versions)
            set_modern = getattr(channel, "use_modern", None)
            if set_modern is not None:
                set_modern(versions[0])
            # [2026-07-28:basic/versioning#4] server/discover first: the versions it speaks, up front
            outcome = await probe(channel, engine, timeout=discover_timeout, versions=versions)
            if outcome.modern and outcome.version is not None:
                eras.set(era_key, "modern")
                if set_modern is not None:
                    set_modern(outcome.version)
                inputs: dict[str, Any] = {}
                if roots_provider is not None:
                    inputs["roots/list"] = roots_provider.handle
                if sampling_guard is not None:
                    inputs["sampling/createMessage"] = sampling_guard
                if elicitation_guard is not None:
                    inputs["elicitation/create"] = elicitation_guard
                async with _open_modern(
                    channel,
                    engine,
                    outcome,
                    inputs=inputs,
                    on_log=on_log,
                    on_list_changed=on_list_changed,
                    config=config,
                    max_input_rounds=max_input_rounds,
                    log_level=log_level,
                    roots=roots_provider,
                    elicitation=elicitation_guard,
                    validate_tool_results=validate_tool_results,
                    cache=cache,
                ) as client:
                    yield client
                return
            if outcome.modern:
                offered = list(_discovered_versions(outcome.result)) or ["(none it would name)"]
                # (no version in common: said, not guessed)
                raise UnsupportedProtocolVersion(", ".join(offered), versions)
            if chosen == "modern":
                # a 2026 pin (or era='modern') and a server of earlier revisions only: initialize
                # once to learn which one it speaks, so the error can name it (trial28c N4)
                asked = f"protocol_version={protocol_version!r}" if protocol_version else "era='modern'"
                not_modern = functools.partial(_not_modern, asked, outcome.reason, versions)
            else:
                log.info("a server of an earlier revision (%s): initialize", outcome.reason)
                eras.set(era_key, "legacy")
            if set_modern is not None:
                set_modern(None)
        conn = Connection(Role.CLIENT, capabilities=caps, supported_versions=supported_versions)
        async with session_scope(conn, channel, handlers=table, notification_handlers=notes, config=config) as session:
            params = InitializeRequestParams(
                # [basic/lifecycle#8] we propose our latest unless told otherwise -- lifecycle#version-negotiation
                protocol_version=(protocol_version if not_modern is None else None) or supported_versions[0],
                capabilities=caps,
                client_info=client_info,
                meta=dict(initialize_meta) if initialize_meta else None,
            )
            try:
                # [basic/lifecycle#1, #2] initialize is the first thing we send
                result: InitializeResult = await session.request("initialize", params, timeout=initialize_timeout)
            except (MCPError, HTTPTransportError) as e:
                if not_modern is not None:
                    # [2026-07-28:basic/versioning#2] no version in common: an error, said to the user
                    raise not_modern(None) from e
                refused = _initialize_refused(e, params.protocol_version, speakable, modern_versions)
                if refused is None:
                    raise
                # [2026-07-28:basic/versioning#10] the versions a server of 2026 revisions names, said
                raise refused from e
            if conn.phase is Phase.CLOSED or not_modern is not None:
                await session.aclose("unsupported protocol version")
                if not_modern is not None:
                    # [2026-07-28:basic/versioning#2] no version in common: an error naming the server's
                    raise not_modern(result.protocol_version)
                # [basic/lifecycle#12, #22, schema#9] we cannot speak the server's version: a clear
                # error, and leaving the session scope disconnects -- lifecycle#version-negotiation
                raise UnsupportedProtocolVersion(
                    result.protocol_version, supported_versions, server_versions=(result.protocol_version,)
                )
            # [basic/lifecycle#4] tell the server we are ready
            await session.notify("notifications/initialized")
            session.initialized.set()
            client = ClientSession(
                session,
                result,
                roots=roots_provider,
                elicitation=elicitation_guard,
                validate_tool_results=validate_tool_results,
            )
            tools_changed.append(client._forget_tools)
            yield client


def _also(before: list[Callable[[], None]], then: NotificationHandler | None) -> NotificationHandler:
    """A notification handler that calls each of ``before``, then ``then`` (if any)."""

    async def handle(session: Session, params: Any) -> None:
        for call in before:
            call()
        if then is not None:
            await then(session, params)

    return handle


def _not_modern(asked: str, reason: str, versions: tuple[str, ...], spoken: str | None) -> UnsupportedProtocolVersion:
    """The error of a client asked for a 2026 revision (``asked``: what the user gave) whose server
    speaks earlier revisions only: ``spoken`` is the one its initialize answered (None: unknown)."""
    which = f"it speaks {spoken}" if spoken else "it named none it speaks"
    return UnsupportedProtocolVersion(
        spoken or "(none it would name)",
        versions,
        server_versions=(spoken,) if spoken else (),
        message=(
            f"{asked} was asked for, but the server does not speak {', '.join(versions)} ({reason});"
            f" {which}: leave the version to negotiation, or pin one the server speaks"
        ),
    )


def _choose_era(era: str, protocol_version: str | None, legacy: tuple[str, ...], modern: tuple[str, ...]) -> str:
    if era not in ("auto", "modern", "legacy"):
        raise ValueError(f"era is 'auto', 'modern' or 'legacy', not {era!r}")
    if protocol_version is None:
        return "modern" if era == "modern" and modern else (era if modern else "legacy")
    if protocol_version in modern:
        if era == "legacy":
            raise ValueError(f"protocol_version {protocol_version!r} is a 2026 revision: era='legacy' contradicts it")
        return "modern"
    if protocol_version in legacy:
        if era == "modern":
            raise ValueError(f"protocol_version {protocol_version!r} is negotiated by initialize: not era='modern'")
        return "legacy"
    raise ValueError(f"protocol_version {protocol_version!r} is none we speak ({', '.join((*modern, *legacy))})")


def _initialize_refused(
    error: MCPError | HTTPTransportError, proposed: str, ours: tuple[str, ...], modern: tuple[str, ...]
) -> UnsupportedProtocolVersion | None:
    """A refused initialize that names the versions the server supports (a server of 2026
    revisions only does, 2026-07-28 basic/versioning#10): the error says which, and how to reach
    one this client speaks. None: the refusal names none."""
    cause = error if isinstance(error, MCPError) else error.__cause__
    data = cause.data if isinstance(cause, MCPError) else None
    named = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(named, list) or not named or not all(isinstance(x, str) for x in named):
        return None
    theirs = tuple(named)
    if any(x in modern for x in theirs):
        hint = "; open with era='auto' (the default) to speak it"
    elif common := [x for x in theirs if x in ours and x != proposed]:
        hint = f"; open with protocol_version={common[0]!r} to speak it"
    else:
        hint = "" if proposed in theirs else "; this client speaks none of them"
    assert isinstance(cause, MCPError)
    return UnsupportedProtocolVersion(
        ", ".join(theirs),
        ours,
        server_versions=theirs,
        message=f"the server refused initialize for protocol version {proposed}: it supports {', '.join(theirs)}"
        f"{hint} (its error: [{cause.code}] {cause.message})",
    )


def _discovered_versions(result: Any) -> list[str]:
    if isinstance(result, Mapping):
        found = result.get("supportedVersions")
    else:
        found = getattr(result, "supported_versions", None)
    return [x for x in found if isinstance(x, str)] if isinstance(found, list | tuple) else []


def _is_modern(session: Any) -> bool:
    from .modern_client import ModernSession

    return isinstance(session, ModernSession)


def _synthetic_init(version: str, result: Any) -> InitializeResult:
    """The facts a 2025 client reads from initialize, from a server/discover result: version,
    capabilities, instructions, and the serverInfo of its _meta."""
    from ..schema._converter import decode

    def get(wire: str, attr: str) -> Any:
        return result.get(wire) if isinstance(result, Mapping) else getattr(result, attr, None)

    caps = get("capabilities", "capabilities")
    if not isinstance(caps, ServerCapabilities):
        caps = decode(caps if isinstance(caps, dict) else {}, ServerCapabilities)
    meta = get("_meta", "meta")
    info: Any = meta.get(versioning.SERVER_INFO_KEY) if isinstance(meta, Mapping) else None
    if not isinstance(info, Implementation):
        try:
            info = decode(info, Implementation) if isinstance(info, dict) else None
        except Exception:
            info = None
    instructions = get("instructions", "instructions")
    return InitializeResult(
        protocol_version=version,
        capabilities=caps,
        # [2026-07-28:basic/index] serverInfo is optional and unverified: a placeholder when absent
        server_info=info or Implementation(name="(unnamed server)", version=""),
        instructions=instructions if isinstance(instructions, str) else None,
    )


@asynccontextmanager
async def _open_modern(
    channel: trio.abc.Channel[bytes],
    engine: StatelessEngine,
    outcome: ProbeResult,
    *,
    inputs: Mapping[str, Any],
    on_log: Callable[[LoggingMessageNotificationParams], Awaitable[None]] | None,
    on_list_changed: Callable[[str], Awaitable[None]] | None,
    config: SessionConfig | None,
    max_input_rounds: int,
    log_level: str | None,
    roots: RootsProvider | None,
    elicitation: ElicitationGuard | None,
    validate_tool_results: bool,
    cache: bool,
) -> AsyncIterator[ClientSession]:
    """A :class:`ClientSession` on a :class:`ModernSession`, its receive loop in a nursery of its own."""
    assert outcome.version is not None
    cfg = config or SessionConfig()
    if log_level is not None:
        check_level(log_level)
    modern: ModernSession | None = None
    try:
        async with block_nursery() as (nursery, body):
            modern = ModernSession(
                engine,
                channel,
                nursery,
                version=outcome.version,
                input_handlers=inputs,
                on_log=on_log,
                request_timeout=cfg.request_timeout,
                max_request_timeout=cfg.max_request_timeout,
                max_input_rounds=max_input_rounds,
                log_level=log_level,
                telemetry=cfg.telemetry,
            )
            await nursery.start(modern.receive_loop)
            init = _synthetic_init(outcome.version, outcome.result)
            client = ClientSession(
                modern, init, roots=roots, elicitation=elicitation, validate_tool_results=validate_tool_results
            )
            client.discover_result = outcome.result
            modern.client = client
            if cache:
                # [2026-07-28:schema#40, #41] one cache per client, its private results keyed by the
                # authorization they were given to (over HTTP, the Authorization the channel sends)
                client.cache = ResultCache(context=lambda: getattr(channel, "authorization_context", None))
                modern.on_change = client.cache.invalidate
            if getattr(channel, "modern", None) is not None:
                channel.param_headers_for = client._param_headers.get  # type: ignore[attr-defined]
            if on_list_changed is not None:
                await _keep_listening(nursery, client, on_list_changed)
            try:
                yield client
            except BaseException as exc:
                body.exc = exc
                raise
            finally:
                nursery.cancel_scope.cancel(reason="client block exited")
    except ConnectionClosed:
        # the block saw the client close under it; when a callback closed it, that is the news
        if modern is None or modern.callback_error is None:
            raise
    if modern is not None and modern.callback_error is not None:
        # raised as itself, once (as a 2025 session does)
        raise modern.callback_error


async def _keep_listening(
    nursery: trio.Nursery, client: ClientSession, on_list_changed: Callable[[str], Awaitable[None]]
) -> None:
    """``on_list_changed`` in 2026-07-28: a subscriptions/listen stream for the lists the server
    says can change, open while the block runs."""
    caps = client.server_capabilities
    wanted = {
        "tools": bool(caps.tools and caps.tools.list_changed),
        "prompts": bool(caps.prompts and caps.prompts.list_changed),
        "resources": bool(caps.resources and caps.resources.list_changed),
    }
    if not any(wanted.values()):
        return

    async def run(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with client.listen(
            tools=wanted["tools"], prompts=wanted["prompts"], resources=wanted["resources"]
        ) as sub:
            task_status.started()
            async for method, _params in sub:
                kind = method.removeprefix("notifications/").split("/")[0]
                try:
                    await on_list_changed(kind)
                except Exception as e:
                    assert isinstance(client.session, ModernSession)
                    client.session.callback_failed(e)
                    return

    await nursery.start(run)


def _task_aware(handler: Any, tasks: TaskManager | None) -> RequestHandler:
    """Run a task-augmented request as a task (when we have a task manager);
    answer a request made on behalf of one of the server's tasks naming that task."""
    from ..basic.utilities.tasks import related_task_id, related_task_meta

    async def run(ctx: Any, params: Any) -> Any:
        if tasks is not None and ctx.task_augmented:
            return await tasks.run_task(ctx, lambda tctx: handler(tctx, tctx.params))
        result = await handler(ctx, params)
        task_id = related_task_id(getattr(params, "meta", None))
        if task_id is not None and attrs.has(type(result)) and hasattr(result, "meta"):
            # [basic/utilities/tasks#48] the response to a task's request carries the related-task key
            result = attrs.evolve(result, meta=related_task_meta(task_id, result.meta))
        return result

    return run


def _notification_table(
    on_log: Callable[[LoggingMessageNotificationParams], Awaitable[None]] | None,
    on_list_changed: Callable[[str], Awaitable[None]] | None,
    on_resource_updated: Callable[[str], Awaitable[None]] | None,
    on_elicitation_complete: Callable[[str], Awaitable[None]] | None,
    elicitation: ElicitationGuard | None,
) -> dict[str, NotificationHandler]:
    table: dict[str, NotificationHandler] = {}
    if on_log is not None:
        log_cb = on_log

        async def on_message(session: Session, params: Any) -> None:
            await log_cb(params)

        table["notifications/message"] = on_message
    if on_list_changed is not None:
        changed = on_list_changed
        for kind in ("tools", "resources", "prompts"):

            async def on_changed(session: Session, params: Any, kind: str = kind) -> None:
                await changed(kind)

            table[f"notifications/{kind}/list_changed"] = on_changed
    if on_resource_updated is not None:
        updated = on_resource_updated

        async def on_updated(session: Session, params: Any) -> None:
            await updated(params.uri)

        table["notifications/resources/updated"] = on_updated
    if elicitation is not None or on_elicitation_complete is not None:
        complete_cb = on_elicitation_complete

        async def on_complete(session: Session, params: Any) -> None:
            eid = params.elicitation_id
            # known ids: URL elicitations we accepted (the guard) and those a -32042 error
            # listed (the engine, recorded as the error arrived); both are forgotten now
            asked = elicitation is not None and elicitation.complete(eid) is not None
            listed = session.connection.url_elicitation_completed(eid)
            if not (asked or listed):
                # [client/elicitation#17] unknown or already completed: ignore
                log.info("ignoring completion of unknown elicitation %r", eid)
                return
            if complete_cb is not None:
                await complete_cb(params.elicitation_id)

        table["notifications/elicitation/complete"] = on_complete
    return table


@asynccontextmanager
async def open_stdio_client(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stderr: Any = "inherit",
    shutdown_timeouts: tuple[float, float] | None = None,
    max_message_size: int | None = None,
    **session_options: Any,
) -> AsyncIterator[ClientSession]:
    """Launch ``command args`` as a stdio MCP server and open a session with it.

    ``stderr``: "inherit" (default), "capture" (logged, and the last lines are
    quoted when the server exits early), "discard" or a callable taking each
    line. Leaving the block closes stdin and waits for the process, then
    terminates it (``shutdown_timeouts``, see ``open_process_channel``). The
    other options go to :func:`open_session`.
    """
    from ..basic.transports.stdio import open_process_channel

    proc_options: dict[str, Any] = {"env": env, "cwd": cwd, "stderr": stderr}
    if shutdown_timeouts is not None:
        proc_options["shutdown_timeouts"] = shutdown_timeouts
    if max_message_size is not None:
        proc_options["max_message_size"] = max_message_size
    # [2026-07-28:basic/versioning#9] the era is a property of the server's configuration
    session_options.setdefault("era_key", ("stdio", command, tuple(args), cwd))
    # [basic/transports#2] the client side of stdio: the server is our child, spoken to
    # over its stdin and stdout -- transports#stdio
    async with open_process_channel(command, args, **proc_options) as channel:
        async with open_session(channel, **session_options) as client:
            yield client
