"""The server side: feature registries, a handler table, and ``serve``.

::

    server = Server("demo", "1.0")

    @server.tool(description="Echo the text back")
    async def echo(ctx, arguments):
        return arguments["text"]

    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, channel)   # one session per call

Every connection gets its own engine and :class:`~mcp_ref.session.core.Session`;
``serve`` returns when the peer goes away. Capabilities are declared from
what is registered when the session starts (basic/lifecycle#capability-negotiation).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, Literal, ParamSpec, Protocol, TypeVar

import attrs
import trio

from .. import schema as model
from ..basic.jsonrpc import InvalidMessage, loads
from ..basic.lifecycle import REQUEST_CAPABILITY, SUPPORTED_VERSIONS, TASKS_SINCE, Role, negotiate_version
from ..basic.patterns.mrtr import StateSealer
from ..basic.transports.mcp_headers import ParamHeader
from ..basic.versioning import MODERN_VERSIONS, REMOVED_IN_MODERN, Era, era_of, era_of_first_message
from ..connection import Connection
from ..errors import ErrorCode, ProtocolError
from ..exchange import TASKS_EXTENSION
from ..schema._base import FieldValueError
from ..schema.content import Annotations
from ..schema.jsonrpc import NotificationParams
from ..schema.lifecycle import (
    Icon,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    ListChangedCapability,
    ResourcesCapability,
    ServerCapabilities,
)
from ..schema.logging import LoggingMessageNotificationParams
from ..schema.tools import ListToolsResult, Tool, ToolAnnotations, ToolExecution
from ..server.tools import ToolFunction, ToolRegistry
from ..server.utilities.caching import NO_PROMISE, CachePolicy, check_cache_for, hints_for
from ..server.utilities.logging import MCPLogHandler, check_level, set_log_level
from .changes import ChangeFeed, LocalChangeFeed
from .core import (
    NotificationHandler,
    RequestContext,
    RequestHandler,
    Session,
    SessionConfig,
    check_async,
    check_encodable,
    session_scope,
)
from .modern import ModernRuntime, serve_modern_channel


# the protocol the tasks extension implements (no import of it here: it imports this module)
class TaskExtensionHook(Protocol):
    """What :class:`Server` asks of the ``io.modelcontextprotocol/tasks`` extension
    (:class:`mcp_ref.ext.tasks.TaskExtension` installs itself as ``server.task_extension``)."""

    #: the extension's methods (tasks/get, tasks/update, tasks/cancel)
    methods: frozenset[str]

    def handlers(self) -> dict[str, RequestHandler]: ...

    async def call_tool(
        self, ctx: RequestContext, params: Any, call: Callable[[RequestContext, Any], Awaitable[Any]]
    ) -> Any: ...


if TYPE_CHECKING:
    # resources, prompts, completion and typed handlers load on first use: a
    # tools-only server never needs them (bench W7)
    from ..schema.prompts import PromptArgument
    from ..server.prompts import PromptFunction, PromptRegistry
    from ..server.resources import Completer, ResourceRegistry, TemplateReadFunction
    from ..server.utilities.completion import CompletionHandler

__all__ = ["Server"]

if TYPE_CHECKING:
    from ..basic.transports.asgi import AsgiApp
    from .tasks import TaskManager

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")
E = TypeVar("E", bound=BaseException)
#: what the decorators accept and give back: an async function taking the
#: :class:`RequestContext` first (``(ctx, name: type, ...)`` or ``(ctx, arguments)``)
Handler = Callable[Concatenate[RequestContext, P], Awaitable[R]]
log = logging.getLogger("mcp_ref.server")


def _known_versions(name: str, given: Iterable[str], known: tuple[str, ...]) -> tuple[str, ...]:
    """The legacy revisions of ``given`` (``name``'s value), every entry checked now: a revision
    mcp_ref does not speak would otherwise fail only when a peer first asks for it (trial28c N2).
    (A modern revision in ``supported_versions`` is taken and left to ``modern_versions``.)"""
    if isinstance(given, str):
        raise TypeError(f"{name} is a tuple of protocol revisions, not the string {given!r}")
    allowed = (*MODERN_VERSIONS, *SUPPORTED_VERSIONS) if name == "supported_versions" else known
    for version in given:
        if version not in allowed:
            raise ValueError(
                f"{name}: {version!r} is not a protocol revision this server can serve there"
                f" (known: {', '.join(allowed)})"
            )
    return tuple(v for v in given if era_of(v) is Era.LEGACY)


class Server:
    """An MCP server: what it offers, and how to serve it on a channel.

    Register with the decorators; each function gets the
    :class:`~mcp_ref.RequestContext` first:

    - ``@server.tool()``: ``async fn(ctx, city: str, ...)`` (a typed tool:
      schemas derived from the annotations, see :meth:`tool`) or
      ``async fn(ctx, arguments)`` (the arguments as a dict) returns a ``str``
      (one text block), a ``dict`` (structured content, also sent as JSON
      text), a list of content blocks or a ``CallToolResult``; raise
      :class:`~mcp_ref.ToolError` for a result with ``isError`` the model
      should see. Arguments are checked against ``input_schema`` first
      (with the ``validation`` extra installed).
    - ``@server.resource(uri)``: ``async fn(ctx)``;
      ``@server.resource_template(template)``: ``async fn(ctx, uri, variables)``;
      both return ``str``, ``bytes`` or resource contents.
    - ``@server.prompt(arguments=[PromptArgument(...)])``: ``async fn(ctx, arguments)``
      returns a ``str`` (one user message), a list of ``PromptMessage`` or a
      ``GetPromptResult``; only declared arguments are accepted.

    Serve with ``await nursery.start(server.serve, channel)`` (any
    ``trio.abc.Channel[bytes]``), :meth:`serve_stdio` / :meth:`run_stdio`,
    or ``serve_http``. Capabilities are derived from what is registered.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.0.0",
        *,
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        instructions: str | None = None,
        supported_versions: tuple[str, ...] = SUPPORTED_VERSIONS,
        config: SessionConfig | None = None,
        logging_capability: bool = True,
        page_size: int = 100,
        capabilities: ServerCapabilities | None = None,
        modern_versions: tuple[str, ...] = MODERN_VERSIONS,
        cache: CachePolicy = NO_PROMISE,
        cache_for: Mapping[str, CachePolicy] | None = None,
        state_key: bytes | str | Sequence[bytes | str] | None = None,
        state_ttl: float = 600.0,
        changes: ChangeFeed | None = None,
        identify: bool = True,
    ) -> None:
        #: the server's Implementation (name, version, title ...), sent at initialization
        self.info = Implementation(
            name=name, version=version, title=title, description=description, website_url=website_url, icons=icons
        )
        #: instructions for the model, sent at initialization
        self.instructions = instructions
        #: the protocol revisions served through initialize (a session), newest first
        self.supported_versions = _known_versions("supported_versions", supported_versions, SUPPORTED_VERSIONS)
        _known_versions("modern_versions", modern_versions, MODERN_VERSIONS)
        #: the revisions served request by request (2026-07-28); () serves none
        self.modern_versions = tuple(modern_versions)
        if not self.supported_versions and not self.modern_versions:
            raise ValueError("a server supports at least one protocol revision")
        # [2026-07-28:server/utilities/caching#1] the caching hints of cacheable results: the default,
        # per operation, and per resource (see mcp_ref.server.utilities.caching)
        if not isinstance(cache, CachePolicy):
            raise TypeError(f"cache is a CachePolicy, not {type(cache).__name__}")
        #: the default caching hints of 2026-07-28 cacheable results
        self.cache = cache
        #: caching hints per operation (``{"tools/list": CachePolicy(...)}``), before the default
        self.cache_for = check_cache_for(cache_for or {})
        self._resource_cache: dict[str, CachePolicy] = {}
        keys = [] if state_key is None else [state_key] if isinstance(state_key, bytes | str) else list(state_key)
        #: seals requestState (basic/patterns/mrtr): ``state_key``, else MCP_REF_STATE_KEY, else a random key
        self.state_sealer = (
            StateSealer(keys, ttl=state_ttl) if keys else StateSealer.from_environment(os.environ, ttl=state_ttl)
        )
        #: where changes go for subscriptions/listen (replicas share one: see mcp_ref.session.changes)
        self.changes: ChangeFeed = changes if changes is not None else LocalChangeFeed()
        #: name ourselves in every 2026-07-28 result's _meta (the engine writes it)
        self.identify = identify
        self._modern: ModernRuntime | None = None
        #: the SessionConfig of each session it serves (timeouts, limits)
        self.config = config or SessionConfig()
        #: whether the logging capability is declared
        self.logging_capability = logging_capability
        #: declared as given instead of derived (see :meth:`capabilities`)
        self.declared_capabilities = capabilities
        #: the tools registered (``server.tools["name"]`` is the Tool as listed)
        self.tools = ToolRegistry(page_size=page_size)
        self._page_size = page_size
        # a registry change tells every session (the engine sends it only where listChanged
        # was declared) -- tools#list-changed-notification
        # [server/tools#4]
        self.tools.on_change = lambda: self._broadcast("notifications/tools/list_changed")
        self._handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._has_completers = False
        #: set by :meth:`enable_tasks`
        self.task_manager: TaskManager | None = None
        #: the tasks extension of 2026-07-28 requests (set by ``mcp_ref.ext.tasks.TaskExtension``)
        self.task_extension: TaskExtensionHook | None = None
        #: sessions currently being served
        self.sessions: set[Session] = set()
        self._trio_token: trio.lowlevel.TrioToken | None = None

    # the resource and prompt registries are made on first use (bench W7)

    @functools.cached_property
    def resources(self) -> ResourceRegistry:
        """The resources and resource templates registered (a registry made on first use)."""
        from ..server.resources import ResourceRegistry

        registry = ResourceRegistry(page_size=self._page_size)
        # [server/resources#2]
        registry.on_change = lambda: self._broadcast("notifications/resources/list_changed")
        return registry

    @functools.cached_property
    def prompts(self) -> PromptRegistry:
        """The prompts registered (a registry made on first use)."""
        from ..server.prompts import PromptRegistry

        registry = PromptRegistry(page_size=self._page_size)
        # [server/prompts#2]
        registry.on_change = lambda: self._broadcast("notifications/prompts/list_changed")
        return registry

    @functools.cached_property
    def completions(self) -> CompletionHandler:
        """What answers ``completion/complete`` from the completers of the prompts and resource templates."""
        from ..server.utilities.completion import CompletionHandler

        return CompletionHandler(self.prompts, self.resources)

    def _offers(self, registry: Literal["resources", "prompts"]) -> bool:
        """Whether anything is registered in ``registry`` (never made: nothing is)."""
        made = vars(self).get(registry)
        return made is not None and len(made) > 0

    # -- registration --------------------------------------------------------------

    def set_handler(self, method: str, handler: RequestHandler) -> None:
        """Answer ``method`` with ``handler(ctx, params)`` (overrides built-ins)."""
        check_async(f"handler for {method}", handler)
        self._handlers[method] = handler
        self._modern = None

    def handler(self, method: str) -> Callable[[F], F]:
        """Decorator form of :meth:`set_handler`: ``@server.handler("custom/method")``."""

        def register(fn: F) -> F:
            self.set_handler(method, fn)
            return fn

        return register

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Call ``handler(session, params)`` when the client sends ``method``."""
        check_async(f"handler for {method}", handler)
        self._notification_handlers[method] = handler

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Callable[[Handler[P, R]], Handler[P, R]]:
        """Register ``fn`` as a tool (the name defaults to the function's, the description to its docstring).

        ``async def fn(ctx, name: type, ...)`` is a typed tool: the input
        schema is derived from the parameters after ``ctx`` and the output
        schema from a returned attrs class, dataclass or TypedDict, or from a
        plain JSON value (``-> list[str]``, ``-> int``: sent as ``{"result": ...}``; see
        :mod:`mcp_ref.server.typed`); an explicit ``input_schema=`` /
        ``output_schema=`` replaces the derived one. ``async def fn(ctx,
        arguments)`` (that parameter name) gets the arguments as a dict,
        checked against ``input_schema`` (any object, if not given).
        A handler of neither shape, or whose return annotation could never
        be sent (``-> None``), is a TypeError here, not an error at each call.
        ``server.tools[name]`` is the :class:`~mcp_ref.schema.Tool` as listed.
        ``scopes``: only requests whose access token grants all of them see and
        call the tool (:mod:`mcp_ref.server.access`; the same for resources and prompts).
        """
        _check_decorator_argument("tool", "name", name)
        if task_support not in (None, "forbidden", "optional", "required"):
            # [basic/utilities/tasks#tool-level-negotiation] the three values execution.taskSupport takes
            what = f"tool {name!r}" if name else "server.tool()"
            raise ValueError(f"{what}: task_support is 'forbidden', 'optional' or 'required', not {task_support!r}")

        def register(fn: Handler[P, R]) -> Handler[P, R]:
            from ..server.typed import StructuredResults, TypedTool, is_typed_handler, result_type, structured_schema

            check_async("tool", fn)
            tool_name = name or fn.__name__
            handler: ToolFunction = fn  # type: ignore[assignment]
            derived_input: dict[str, Any] = {"type": "object"}
            derived_output = None
            if is_typed_handler(fn, context=RequestContext, what=f"tool {tool_name!r}"):
                typed = TypedTool(fn, tool_name, schema_given=input_schema is not None)
                handler, derived_input, derived_output = typed, typed.input_schema, typed.output_schema
            else:
                returns = result_type(fn, "tool", tool_name)
                if returns is not None:
                    handler, derived_output = StructuredResults(fn, returns), structured_schema(returns)
            with _naming(f"tool {tool_name!r}"):
                tool = Tool(
                    name=tool_name,
                    title=title,
                    description=description if description is not None else _doc(fn),
                    input_schema=input_schema if input_schema is not None else derived_input,
                    output_schema=output_schema if output_schema is not None else derived_output,
                    annotations=annotations,
                    icons=icons,
                    execution=ToolExecution(task_support=task_support) if task_support is not None else None,
                    meta=meta,
                )
            if task_support == "required" and not self._runs_tasks() and self.sessions:
                raise RuntimeError(self._tasks_needed([tool.name]))
            self.tools.add(tool, handler, scopes=scopes)
            return fn

        return register

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        cache: CachePolicy | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Callable[[Callable[[RequestContext], Awaitable[R]]], Callable[[RequestContext], Awaitable[R]]]:
        """Register ``fn(ctx)`` as the reader of a static resource.

        ``cache``: the caching hints of its ``resources/read`` results in 2026-07-28
        (e.g. ``CachePolicy(scope="private")`` for what depends on the user), instead
        of the server's (``Server(cache=..., cache_for=...)``)."""
        _check_decorator_argument("resource", "uri", uri)
        _check_cache(cache, f"resource {uri!r}")

        def register(fn: Callable[[RequestContext], Awaitable[R]]) -> Callable[[RequestContext], Awaitable[R]]:
            from ..server.typed import result_type

            check_async("resource", fn)
            result_type(fn, "resource", uri)
            if cache is not None:
                self._resource_cache[uri] = cache
            with _naming(f"resource {uri!r}"):
                resource = model.Resource(
                    uri=uri,
                    name=name or fn.__name__,
                    title=title,
                    description=description if description is not None else _doc(fn),
                    mime_type=mime_type,
                    size=size,
                    annotations=annotations,
                    icons=icons,
                )
            self.resources.add(resource, fn, scopes=scopes)
            return fn

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        completers: dict[str, Completer] | None = None,
        cache: CachePolicy | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Callable[[Handler[P, R]], Handler[P, R]]:
        """Register ``fn`` as the reader of a URI template.

        ``cache``: the caching hints of the ``resources/read`` results of the URIs it
        matches (2026-07-28), instead of the server's.

        ``async def fn(ctx, uri, variables)`` gets the URI and the dict of the
        variables it matched; ``async def fn(ctx, name: str, ...)`` gets the
        variables as keyword arguments (one parameter per variable; give a
        default to one that may be absent, like ``{?query}``).
        """
        _check_decorator_argument("resource_template", "uri_template", uri_template)
        _check_cache(cache, f"resource template {uri_template!r}")

        def register(fn: Handler[P, R]) -> Handler[P, R]:
            from ..server.typed import TypedTemplate, is_typed_handler, result_type
            from ..server.uri_template import UriTemplate

            check_async("resource_template", fn)
            result_type(fn, "resource", uri_template)
            if cache is not None:
                self._resource_cache[uri_template] = cache
            reader: TemplateReadFunction = fn  # type: ignore[assignment]
            if is_typed_handler(fn, positional=3, context=RequestContext, what=f"resource template {uri_template!r}"):
                reader = TypedTemplate(fn, uri_template, UriTemplate(uri_template).variables)
            with _naming(f"resource template {uri_template!r}"):
                template = model.ResourceTemplate(
                    uri_template=uri_template,
                    name=name or fn.__name__,
                    title=title,
                    description=description if description is not None else _doc(fn),
                    mime_type=mime_type,
                    annotations=annotations,
                    icons=icons,
                )
            self.resources.add_template(template, reader, completers, scopes=scopes)
            self._has_completers = self._has_completers or bool(completers)
            return fn

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        arguments: list[PromptArgument] | None = None,
        icons: list[Icon] | None = None,
        completers: dict[str, Completer] | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Callable[[Handler[P, R]], Handler[P, R]]:
        """Register ``fn`` as a prompt.

        ``async def fn(ctx, arguments)`` gets a dict of the declared
        ``arguments``; ``async def fn(ctx, name: str, ...)`` declares one
        argument per parameter (required unless it has a default) and
        gets them as keyword arguments; ``arguments=`` replaces what it declares.
        """
        _check_decorator_argument("prompt", "name", name)

        def register(fn: Handler[P, R]) -> Handler[P, R]:
            from ..server.typed import TypedPrompt, is_typed_handler, result_type

            check_async("prompt", fn)
            prompt_name = name or fn.__name__
            result_type(fn, "prompt", prompt_name)
            getter: PromptFunction = fn  # type: ignore[assignment]
            declared = arguments
            if is_typed_handler(fn, context=RequestContext, what=f"prompt {prompt_name!r}"):
                typed = TypedPrompt(fn, prompt_name)
                getter, declared = typed, arguments if arguments is not None else typed.arguments or None
            with _naming(f"prompt {prompt_name!r}"):
                prompt = model.Prompt(
                    name=prompt_name,
                    title=title,
                    description=description if description is not None else _doc(fn),
                    arguments=declared,
                    icons=icons,
                )
            self.prompts.add(prompt, getter, completers, scopes=scopes)
            self._has_completers = self._has_completers or bool(completers)
            return fn

        return register

    def enable_tasks(self, nursery: trio.Nursery, **options: Any) -> TaskManager:
        """Run task-augmented tools/call in ``nursery`` (which must outlive every session).

        ``options`` go to :class:`~mcp_ref.session.tasks.TaskManager` (``store=``,
        ``config=``). Returns the manager.
        """
        from .tasks import TaskManager

        self.task_manager = TaskManager(nursery, **options)
        self._warn_unshared_state_key(self.task_manager.store)
        return self.task_manager

    def _warn_unshared_state_key(self, store: Any) -> None:
        """Warn when tasks are kept in a store replicas share (PostgreSQL) while requestState is
        sealed with a key made in this process: a multi round-trip retry that another replica
        serves is then rejected. Replicas share ``state_key`` (or ``MCP_REF_STATE_KEY``)."""
        if getattr(store, "shared", False) and self.state_sealer.random:
            log.warning(
                "tasks are kept in a store shared by several servers, but requestState is sealed with a "
                "key of this process only: set MCP_REF_STATE_KEY (the same on every replica, at least "
                "16 bytes) or Server(state_key=...), or multi round-trip retries served by another "
                "replica are rejected"
            )

    def _runs_tasks(self) -> bool:
        """Whether some era can call a task-only tool: 2025 sessions (enable_tasks) or 2026-07-28
        requests (the tasks extension)."""
        return self.task_manager is not None or self.task_extension is not None

    def _required_task_tools(self) -> list[str]:
        return [
            name
            for name in self.tools.names()
            if (t := self.tools.get(name)) is not None
            and t.execution is not None
            and t.execution.task_support == "required"
        ]

    @staticmethod
    def _tasks_needed(names: list[str]) -> str:
        return (
            f"tools {names} have task_support='required' but tasks are not enabled: "
            "call server.enable_tasks(nursery) before serving (they could never be called)"
        )

    def _tool_tasks(self) -> bool:
        return any(
            t.execution is not None and t.execution.task_support in ("optional", "required")
            for t in (self.tools.get(n) for n in self.tools.names())
            if t is not None
        )

    async def _list_tools(self, ctx: RequestContext, params: Any) -> ListToolsResult:
        result = await self.tools.list_tools(ctx, params)
        modern_tasks = self.task_extension is not None and era_of(ctx.revision) is Era.MODERN
        legacy_tasks = self.task_manager is not None and era_of(ctx.revision) is Era.LEGACY
        if ctx.revision < TASKS_SINCE or not (modern_tasks or legacy_tasks):
            # a client of a revision without tasks could never call a task-only tool: not listed
            tools = [t for t in result.tools if t.execution is None or t.execution.task_support != "required"]
            if len(tools) != len(result.tools):
                result = attrs.evolve(result, tools=tools)
        return result

    async def _call_tool(self, ctx: RequestContext, params: Any) -> Any:
        extension = self.task_extension
        if extension is not None and era_of(ctx.revision) is Era.MODERN:
            # 2026-07-28: the tasks extension decides whether the call becomes a task
            return await extension.call_tool(ctx, params, self.tools.call)
        tool = self.tools.visible(ctx, params.name)  # (one the token may not see is unknown, even as a task)
        support = tool.execution.task_support if tool is not None and tool.execution is not None else None
        # (the engine records a request as augmented only when its params carry task metadata)
        augmented = params.task is not None and ctx.task_augmented
        if tool is None and augmented:
            # [server/tools#error-handling] unknown tool: -32602 now, not a task that fails later
            raise ProtocolError(f"Unknown tool: {params.name}", ErrorCode.INVALID_PARAMS)
        if tool is not None and augmented and support not in ("optional", "required"):
            # [basic/utilities/tasks#6] forbidden (the default): -32601 -- tasks#tool-level-negotiation
            raise ProtocolError(
                f"Method not found: tool {params.name!r} does not run as a task", ErrorCode.METHOD_NOT_FOUND
            )
        if tool is not None and not augmented and support == "required":
            # [basic/utilities/tasks#9, #22] required: only as a task, -32601 otherwise -- tasks#tool-level-negotiation
            raise ProtocolError(
                f"Method not found: tool {params.name!r} must be called as a task", ErrorCode.METHOD_NOT_FOUND
            )
        # [basic/utilities/tasks#7] optional (or required) and augmented: a task; else a plain call
        if augmented:
            # augmented only if we declared tasks.requests.tools.call, which needs the manager
            assert self.task_manager is not None
            return await self.task_manager.run_task(ctx, lambda tctx: self.tools.call(tctx, tctx.params))
        return await self.tools.call(ctx, params)

    # -- what we declare ----------------------------------------------------------------

    def capabilities(self) -> ServerCapabilities:
        """Declared from what is registered (basic/lifecycle#capability-negotiation).

        RuntimeError if a tool requires task execution and tasks are not enabled.
        Handlers set with :meth:`set_handler` / :meth:`handler` for a method that
        needs a capability (``prompts/list``, ``resources/subscribe`` ...) declare
        it too, or the engine would refuse their requests. ``Server(capabilities=...)``
        replaces all of this.
        """
        if not self._runs_tasks() and (required := self._required_task_tools()):
            raise RuntimeError(self._tasks_needed(required))
        if self.declared_capabilities is not None:
            return self.declared_capabilities
        custom = {REQUEST_CAPABILITY[m][0] for m in self._handlers if m in REQUEST_CAPABILITY}
        # [server/tools#3] a server with tools declares the tools capability -- tools#capabilities
        tools = self.tools.capability() if len(self.tools) else None
        # [2026-07-28:server/prompts#2] prompts registered: declared (server/discover carries these capabilities)
        prompts = self.prompts.capability() if self._offers("prompts") else None
        resources = self.resources.capability() if self._offers("resources") else None
        tools = tools or (ListChangedCapability() if "tools" in custom else None)
        prompts = prompts or (ListChangedCapability() if "prompts" in custom else None)
        resources = resources or (ResourcesCapability() if "resources" in custom else None)
        if resources is not None and "resources/subscribe" in self._handlers:
            resources = attrs.evolve(resources, subscribe=True)
        return ServerCapabilities(
            tools=tools,
            resources=resources,
            prompts=prompts,
            # [server/utilities/completion#1] completers registered: completions declared -- completion#capabilities
            completions={} if self._has_completers or "completions" in custom else None,
            # [server/utilities/logging#1] logging declared unless turned off -- logging#capabilities
            logging={} if self.logging_capability or "logging" in custom else None,
            # [basic/utilities/tasks#1] tasks enabled: declared -- tasks#capabilities
            tasks=self.task_manager.server_capability(self._tool_tasks()) if self.task_manager is not None else None,
        )

    def handler_table(self) -> dict[str, RequestHandler]:
        """Every request method this server answers, with its handler (the built-in ones and those set with
        set_handler).
        """
        table: dict[str, RequestHandler] = {"initialize": self._initialize}
        if len(self.tools):
            table["tools/list"] = self._list_tools
            table["tools/call"] = self._call_tool
        if self._offers("resources"):
            table["resources/list"] = self.resources.list_resources
            table["resources/templates/list"] = self.resources.list_templates
            table["resources/read"] = self.resources.read
            table["resources/subscribe"] = self.resources.subscribe_handler
            table["resources/unsubscribe"] = self.resources.unsubscribe_handler
        if self._offers("prompts"):
            table["prompts/list"] = self.prompts.list_prompts
            table["prompts/get"] = self.prompts.get
        if self._has_completers:
            table["completion/complete"] = self.completions.complete
        if self.logging_capability:
            table["logging/setLevel"] = set_log_level
        if self.task_manager is not None:
            table.update(self.task_manager.handlers())
        table.update(self._handlers)
        return table

    def modern_handler_table(self) -> dict[str, RequestHandler]:
        """The handlers of a 2026-07-28 request (the same application handlers as a session's).

        Methods that revision removed (``initialize``, ``ping``, ``logging/setLevel``,
        ``resources/subscribe``, the core ``tasks/*``) are not in it: the engine answers them
        -32601. ``server/discover`` is always there, ``subscriptions/listen`` when
        something can change.
        """
        from ..server.discover import discover_result

        table = {m: h for m, h in self.handler_table().items() if m not in REMOVED_IN_MODERN}
        caps = self.modern_capabilities()
        if self.task_extension is not None:
            table.update(self.task_extension.handlers())

        async def discover(ctx: RequestContext, params: Any) -> dict[str, Any]:
            # [2026-07-28:basic/versioning#3, server/discover#1] every server answers server/discover
            return discover_result(
                versions=tuple(sorted({*self.modern_versions, *self.supported_versions}, reverse=True)),
                capabilities=caps,
                instructions=self.instructions,
            )

        table["server/discover"] = discover
        if any(caps_flag for caps_flag in _change_capabilities(caps)):
            table["subscriptions/listen"] = _listen_placeholder
        return table

    def modern_capabilities(self) -> ServerCapabilities:
        """What ``server/discover`` declares: the capabilities, with the extensions of 2026-07-28
        (the core ``tasks`` capability of 2025-11-25 is not one of that revision's)."""
        caps = self.capabilities()
        if self.task_extension is None:
            return caps
        extensions = dict(caps.extra.get("extensions") or {})
        # [ext-tasks:tasks#1] declared in server/discover: a client that declares it too may get tasks
        extensions[TASKS_EXTENSION] = {}
        return attrs.evolve(caps, tasks=None, extra={**caps.extra, "extensions": extensions})

    @property
    def extension_methods(self) -> frozenset[str]:
        """The methods extensions add to 2026-07-28 (the engine serves them)."""
        return self.task_extension.methods if self.task_extension is not None else frozenset()

    def modern_runtime(self) -> ModernRuntime:
        """The runtime serving this server's 2026-07-28 requests (made again when registrations change)."""
        runtime = self._modern
        if runtime is None:
            runtime = self._modern = ModernRuntime(self)
        return runtime

    def param_headers(self, tool: str) -> tuple[ParamHeader, ...]:
        """The x-mcp-header annotations of ``tool`` (what a 2026-07-28 POST's Mcp-Param-* headers mirror)."""
        return self.tools.param_headers(tool)

    def cache_hints(self, method: str, result: dict[str, Any], override: CachePolicy | None) -> dict[str, Any]:
        """The caching hints a 2026-07-28 result of ``method`` lacks (see server/utilities/caching)."""
        return hints_for(method, result, default=self.cache, per_method=self.cache_for, override=override)

    def cache_override(self, exchange: Any) -> CachePolicy | None:
        """A resource's own caching policy for a ``resources/read`` (None: the server's)."""
        if exchange.method != "resources/read" or not self._resource_cache:
            return None
        uri = getattr(exchange.params, "uri", None)
        policy = self._resource_cache.get(uri) if isinstance(uri, str) else None
        if policy is None and isinstance(uri, str) and "resources" in vars(self):
            template = self.resources.template_for(uri)
            policy = self._resource_cache.get(template) if template is not None else None
        return policy

    async def _initialize(self, ctx: RequestContext, params: InitializeRequestParams) -> InitializeResult:
        conn = ctx.session.connection
        # [basic/lifecycle#3, #9, #10, #11] answer with our capabilities, info and the negotiated version
        return InitializeResult(
            protocol_version=negotiate_version(params.protocol_version, conn.supported_versions),
            capabilities=conn.capabilities,  # type: ignore[arg-type]
            server_info=self.info,
            instructions=self.instructions,
        )

    # -- talking to every session -------------------------------------------------------------

    def _broadcast(self, method: str, params: Any = None) -> None:
        """Queue a notification on every initialised session that may receive it, and publish it
        to the change feed of 2026-07-28 subscriptions."""
        self._modern = None  # what is registered changed: the next 2026-07-28 request sees it
        for session in list(self.sessions):
            session.notify_soon(method, params if params is not None else NotificationParams())
        # [2026-07-28:server/tools#11, server/prompts#7, server/resources#8] list changes reach the
        # subscriptions/listen streams that asked for them (the feed filters by what each one asked)
        self.changes.publish(method, None)

    def resource_updated(self, uri: str) -> None:
        """[server/resources#subscriptions] tell the sessions subscribed to ``uri`` (and the
        2026-07-28 subscriptions listening for it)."""
        params = model.ResourceUpdatedNotificationParams(uri=uri)
        for session in self.resources.subscribers(uri):
            if isinstance(session, Session):
                session.notify_soon("notifications/resources/updated", params)
        self.changes.publish("notifications/resources/updated", {"uri": uri})

    def log(self, level: str, data: Any, logger: str | None = None, *, session: Session | None = None) -> None:
        """Send a log message to one session, or all, honouring each one's level."""
        params = LoggingMessageNotificationParams(level=check_level(level), data=data, logger=logger)
        targets = [session] if session is not None else list(self.sessions)
        check_encodable(params)  # data with no JSON form raises here, not in every session's writer
        for s in targets:
            if s.log_allowed(level):
                s.notify_soon("notifications/message", params, checked=True)

    def logging_handler(self, level: int = logging.NOTSET) -> MCPLogHandler:
        """A ``logging.Handler`` forwarding Python log records to every session.

        Records from other threads (``trio.to_thread``, libraries' own threads)
        are handed to the trio thread of the run serving this server.
        """
        return MCPLogHandler(self._log_record, level)

    def _log_record(self, level: str, name: str, data: Any) -> None:
        if trio.lowlevel.in_trio_run():
            self.log(level, data, name)
            return
        token = self._trio_token
        if token is None:
            raise RuntimeError("this server has not been served yet: no trio run to send log records to")
        token.run_sync_soon(self.log, level, data, name)

    # -- serving -----------------------------------------------------------------------

    def has_work(self, channel: trio.abc.Channel[bytes]) -> bool:
        """Whether the session served on ``channel`` holds work its client will come back
        for: tasks kept for it (with ``binding="session"`` they go when the session goes).
        The HTTP server never reclaims such a session for a new one."""
        manager = self.task_manager
        if manager is None or manager.config.binding != "session":
            return False
        return any(s.channel is channel and manager.holds_tasks_for(s) for s in self.sessions)

    async def serve(
        self,
        channel: trio.abc.Channel[bytes],
        *,
        config: SessionConfig | None = None,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one client on ``channel`` until it goes away (with ``config``, or the server's).

        Both eras are served ([2026-07-28:basic/versioning#8]); the client's opening chooses the era
        ([2026-07-28:basic/versioning#11]): ``initialize``
        opens a session of a legacy revision; a request carrying a 2026-07-28 ``_meta`` (or
        ``server/discover``) is served request by request, and so is everything after it.
        The session given to ``task_status`` then stays unused and closes when the channel ends.
        """
        config = config or self.config
        conn = Connection(
            Role.SERVER,
            capabilities=self.capabilities(),
            supported_versions=self.supported_versions or SUPPORTED_VERSIONS,
        )
        self._trio_token = trio.lowlevel.current_trio_token()
        opening = None if getattr(channel, "legacy_only", False) else _Opening(self, channel, config)
        async with session_scope(
            conn,
            channel,
            handlers=self.handler_table(),
            notification_handlers=self._notification_handlers,
            config=config,
            first_message=opening,
        ) as session:
            if opening is not None:
                opening.session = session
            self.sessions.add(session)
            try:
                task_status.started(session)
                await session.closed.wait()
            finally:
                self.sessions.discard(session)
                if "resources" in vars(self):
                    self.resources.forget(session)

    async def serve_stdio(
        self,
        *,
        eof_grace: float = 5.0,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
        **options: Any,
    ) -> None:
        """Serve on this process's stdin/stdout (basic/transports#stdio) until stdin ends.

        Requests still being handled when stdin ends get ``eof_grace``
        seconds to finish (their responses go out on stdout), then are
        cancelled. ``options`` go to ``open_stdio_server_channel``.
        """
        from ..basic.transports.stdio import open_stdio_server_channel

        # a client may close stdin right after its last request and still read the answer
        config = attrs.evolve(self.config, eof_grace=eof_grace)
        async with open_stdio_server_channel(**options) as channel:
            await self.serve(channel, config=config, task_status=task_status)

    def run_stdio(self, **options: Any) -> None:
        """Blocking convenience for ``if __name__ == "__main__"``: ``trio.run(serve_stdio)``.

        Ctrl-C (SIGINT) ends the process quietly with exit status 130.
        """
        self._run_quietly(lambda: self.serve_stdio(**options))

    def run_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        grace: float = 5.0,
        tasks: bool = False,
        **options: Any,
    ) -> None:
        """Blocking convenience: serve Streamable HTTP on ``host:port`` until Ctrl-C or SIGTERM.

        The endpoint's URL goes to stderr once it listens. Ctrl-C (SIGINT) or
        SIGTERM shuts the server down gracefully (requests in flight get
        ``grace`` seconds) and the call returns, without a traceback. An
        address it cannot listen on (the port in use, an address that is not
        this machine's) is one line on stderr and ``SystemExit(1)``.
        ``host="0.0.0.0"`` listens on every interface; as a protection against
        DNS rebinding, requests are accepted when their ``Host`` is a loopback
        name or address, or one ``allowed_hosts=["mcp.example.com", ...]``
        names (a browser's ``Origin`` likewise, ``allowed_origins=``).
        ``tasks=True`` runs task-augmented calls in the run's own nursery
        (:meth:`enable_tasks`); ``options`` go to ``serve_http`` (``path=``,
        ``ssl_context=``, ``auth=``, :class:`HttpConfig` fields). Needs the
        ``http`` extra.
        """
        try:
            from .http import serve_http
        except ModuleNotFoundError as e:
            if e.name != "h11":
                raise
            raise SystemExit("Streamable HTTP needs the http extra (h11): pip install 'mcp_ref[http]'") from None
        failure: OSError | None = None

        async def main() -> None:
            nonlocal failure
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async with trio.open_nursery() as nursery:
                    if tasks:
                        self.enable_tasks(nursery)
                    try:
                        info = await nursery.start(functools.partial(serve_http, self, host=host, port=port, **options))
                    except* OSError as group:
                        failure = _first_leaf(group, OSError)
                    if failure is not None:
                        nursery.cancel_scope.cancel()
                        return
                    print(f"MCP endpoint (Streamable HTTP): {info.url}  (Ctrl-C stops it)", file=sys.stderr, flush=True)
                    if host in ("0.0.0.0", "::") and "allowed_hosts" not in options and "config" not in options:
                        print(
                            "listening on every interface; requests naming another host than 127.0.0.1, localhost "
                            "or ::1 are refused (403) unless run_http(allowed_hosts=[...]) names it",
                            file=sys.stderr,
                            flush=True,
                        )
                    async for _ in signals:
                        break
                    print("shutting down", file=sys.stderr, flush=True)
                    await info.aclose(grace)
                    nursery.cancel_scope.cancel()  # the tasks still running

        self._run_quietly(main)
        if failure is not None:
            raise SystemExit(f"cannot serve on {host} port {port}: {failure.strerror or failure}")

    def asgi_app(self, **options: Any) -> AsgiApp:
        """This server's MCP endpoint as an ASGI application, to mount in a web application
        served by Hypercorn's trio worker or Quart-Trio (:class:`~mcp_ref.AsgiApp`; its
        ``lifespan`` runs the sessions). ``options`` are those of ``serve_http``:
        ``auth=`` (with its ``resource``), ``allowed_hosts=``, :class:`HttpConfig` fields.
        The endpoint behaves as ``serve_http``'s does. Needs the ``http`` extra."""
        from ..basic.transports.asgi import AsgiApp

        return AsgiApp(self, **options)

    @staticmethod
    def _run_quietly(main: Callable[[], Awaitable[None]]) -> None:
        """trio.run(main); a Ctrl-C trio turns into KeyboardInterrupt ends it with status 130, quietly."""
        interrupted = False
        try:
            trio.run(main)
        except* KeyboardInterrupt:
            interrupted = True  # anything else that failed with it is still raised
        if interrupted:
            raise SystemExit(130)

    def notification_handlers(self) -> Mapping[str, NotificationHandler]:
        """The notification handlers set with :meth:`on_notification`, by method."""
        return dict(self._notification_handlers)


class _Opening:
    """How a channel's first messages choose its era (``Session._opening`` asks)."""

    def __init__(self, server: Server, channel: trio.abc.Channel[bytes], config: SessionConfig) -> None:
        self.server = server
        self.channel = channel
        self.config = config
        self.session: Session | None = None

    @staticmethod
    def _era(data: bytes) -> Era | None:
        try:
            return era_of_first_message(loads(data))
        except InvalidMessage:
            return None

    async def serve_modern(self, data: bytes) -> str | None:
        server = self.server
        era = self._era(data)
        # (a server of modern revisions only serves every opening request so: its answer to
        # initialize names the versions it supports, [2026-07-28:basic/versioning#10])
        if not server.modern_versions or era is None or (era is Era.LEGACY and server.supported_versions):
            return None
        if self.session is not None:
            # a channel served request by request holds no session: broadcasts do not queue for it
            server.sessions.discard(self.session)
        log.debug("a 2026-07-28 client: serving the channel request by request")
        return await serve_modern_channel(
            server.modern_runtime(),
            self.channel,
            data,
            max_concurrent=self.config.max_concurrent_requests,
            eof_grace=self.config.eof_grace,
            telemetry=self.config.telemetry,
        )

    def decides(self, data: bytes) -> bool:
        return self._era(data) is Era.LEGACY


def _change_capabilities(caps: ServerCapabilities) -> list[bool]:
    """Whether anything the server offers can change (what subscriptions/listen would carry)."""
    return [
        bool(caps.tools and caps.tools.list_changed),
        bool(caps.prompts and caps.prompts.list_changed),
        bool(caps.resources and (caps.resources.list_changed or caps.resources.subscribe)),
    ]


async def _listen_placeholder(ctx: RequestContext, params: Any) -> Any:
    """subscriptions/listen is run by the runtime itself (ModernRuntime._listen), never called."""
    raise AssertionError("subscriptions/listen is served by the modern runtime")


def _check_cache(cache: object, what: str) -> None:
    if cache is not None and not isinstance(cache, CachePolicy):
        raise TypeError(f"{what}: cache is a CachePolicy, not {type(cache).__name__}")


@contextlib.contextmanager
def _naming(what: str) -> Iterator[None]:
    """A field of the model object being registered that its validator refuses: the error
    names what was being registered (``tool 't': inputSchema.type: ...``)."""
    try:
        yield
    except FieldValueError as e:
        if e.owner is not None:
            raise
        raise FieldValueError(e.path, e.problem, owner=what) from None


def _check_decorator_argument(kind: str, param: str, value: object) -> None:
    """``@server.tool`` without its call would register nothing: refuse it at once."""
    if value is not None and not isinstance(value, str):
        hint = f"use @server.{kind}(...) with parentheses" if callable(value) else f"{param} is a str"
        raise TypeError(f"server.{kind}(): {param} {value!r} is not a str: {hint}")


def _first_leaf(group: BaseExceptionGroup[Any], kind: type[E]) -> E:
    """The first exception of ``kind`` in a (nested) exception group."""
    for inner in group.exceptions:
        if isinstance(inner, BaseExceptionGroup):
            return _first_leaf(inner, kind)
        if isinstance(inner, kind):
            return inner
    raise AssertionError(f"no {kind.__name__} in {group!r}")


def _doc(fn: Callable[..., Any]) -> str | None:
    return (fn.__doc__ or "").strip() or None
