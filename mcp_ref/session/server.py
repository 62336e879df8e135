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

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs
import trio

from ..basic.lifecycle import REQUEST_CAPABILITY, SUPPORTED_VERSIONS, Role, negotiate_version
from ..connection import Connection
from ..errors import ErrorCode, ProtocolError
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
from ..schema.prompts import Prompt, PromptArgument
from ..schema.resources import Resource, ResourceTemplate, ResourceUpdatedNotificationParams
from ..schema.tools import Tool, ToolAnnotations, ToolExecution
from ..server.prompts import PromptFunction, PromptRegistry
from ..server.resources import Completer, ReadFunction, ResourceRegistry, TemplateReadFunction
from ..server.tools import ToolFunction, ToolRegistry
from ..server.utilities.completion import CompletionHandler
from ..server.utilities.logging import MCPLogHandler, passes, set_log_level
from .core import (
    NotificationHandler,
    RequestContext,
    RequestHandler,
    Session,
    SessionConfig,
    check_encodable,
    session_scope,
)

__all__ = ["Server"]

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("mcp_ref.server")


class Server:
    """An MCP server: what it offers, and how to serve it on a channel."""

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
    ) -> None:
        self.info = Implementation(
            name=name, version=version, title=title, description=description, website_url=website_url, icons=icons
        )
        self.instructions = instructions
        self.supported_versions = supported_versions
        self.config = config or SessionConfig()
        self.logging_capability = logging_capability
        #: declared as given instead of derived (see :meth:`capabilities`)
        self.declared_capabilities = capabilities
        self.tools = ToolRegistry(page_size=page_size)
        self.resources = ResourceRegistry(page_size=page_size)
        self.prompts = PromptRegistry(page_size=page_size)
        self.completions = CompletionHandler(self.prompts, self.resources)
        self.tools.on_change = lambda: self._broadcast("notifications/tools/list_changed")
        self.resources.on_change = lambda: self._broadcast("notifications/resources/list_changed")
        self.prompts.on_change = lambda: self._broadcast("notifications/prompts/list_changed")
        self._handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._has_completers = False
        #: set by :meth:`enable_tasks`
        self.task_manager: Any = None
        #: sessions currently being served
        self.sessions: set[Session] = set()

    # -- registration --------------------------------------------------------------

    def set_handler(self, method: str, handler: RequestHandler) -> None:
        """Answer ``method`` with ``handler(ctx, params)`` (overrides built-ins)."""
        self._handlers[method] = handler

    def handler(self, method: str) -> Callable[[F], F]:
        def register(fn: F) -> F:
            self.set_handler(method, fn)
            return fn

        return register

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
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
        task_support: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[ToolFunction], ToolFunction]:
        """Register ``fn(ctx, arguments)`` as a tool (name defaults to the function's)."""

        def register(fn: ToolFunction) -> ToolFunction:
            tool = Tool(
                name=name or fn.__name__,
                title=title,
                description=description if description is not None else _doc(fn),
                input_schema=input_schema if input_schema is not None else {"type": "object"},
                output_schema=output_schema,
                annotations=annotations,
                icons=icons,
                execution=ToolExecution(task_support=task_support) if task_support is not None else None,  # type: ignore[arg-type]
                meta=meta,
            )
            self.tools.add(tool, fn)
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
    ) -> Callable[[ReadFunction], ReadFunction]:
        """Register ``fn(ctx)`` as the reader of a static resource."""

        def register(fn: ReadFunction) -> ReadFunction:
            self.resources.add(
                Resource(
                    uri=uri,
                    name=name or fn.__name__,
                    title=title,
                    description=description if description is not None else _doc(fn),
                    mime_type=mime_type,
                    size=size,
                    annotations=annotations,
                    icons=icons,
                ),
                fn,
            )
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
    ) -> Callable[[TemplateReadFunction], TemplateReadFunction]:
        """Register ``fn(ctx, uri, variables)`` as the reader of a URI template."""

        def register(fn: TemplateReadFunction) -> TemplateReadFunction:
            self.resources.add_template(
                ResourceTemplate(
                    uri_template=uri_template,
                    name=name or fn.__name__,
                    title=title,
                    description=description if description is not None else _doc(fn),
                    mime_type=mime_type,
                    annotations=annotations,
                    icons=icons,
                ),
                fn,
                completers,
            )
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
    ) -> Callable[[PromptFunction], PromptFunction]:
        """Register ``fn(ctx, arguments)`` as a prompt."""

        def register(fn: PromptFunction) -> PromptFunction:
            self.prompts.add(
                Prompt(
                    name=name or fn.__name__,
                    title=title,
                    description=description if description is not None else _doc(fn),
                    arguments=arguments,
                    icons=icons,
                ),
                fn,
                completers,
            )
            self._has_completers = self._has_completers or bool(completers)
            return fn

        return register

    def enable_tasks(self, nursery: trio.Nursery, **options: Any) -> Any:
        """Run task-augmented tools/call in ``nursery`` (which must outlive every session).

        ``options`` go to :class:`~mcp_ref.session.tasks.TaskManager` (``store=``,
        ``config=``). Returns the manager.
        """
        from .tasks import TaskManager

        self.task_manager = TaskManager(nursery, **options)
        return self.task_manager

    def _tool_tasks(self) -> bool:
        return any(
            t.execution is not None and t.execution.task_support in ("optional", "required")
            for t in (self.tools.get(n) for n in self.tools.names())
            if t is not None
        )

    async def _call_tool(self, ctx: RequestContext, params: Any) -> Any:
        tool = self.tools.get(params.name)
        support = tool.execution.task_support if tool is not None and tool.execution is not None else None
        augmented = ctx.task_augmented
        if tool is not None and augmented and support not in ("optional", "required"):
            # [basic/utilities/tasks#tool-level-negotiation] forbidden (the default): -32601
            raise ProtocolError(
                f"Method not found: tool {params.name!r} does not run as a task", ErrorCode.METHOD_NOT_FOUND
            )
        if tool is not None and not augmented and support == "required":
            # [basic/utilities/tasks#tool-level-negotiation] required: only as a task, -32601 otherwise
            raise ProtocolError(
                f"Method not found: tool {params.name!r} must be called as a task", ErrorCode.METHOD_NOT_FOUND
            )
        if augmented:
            return await self.task_manager.run_task(ctx, lambda tctx: self.tools.call(tctx, tctx.params))
        return await self.tools.call(ctx, params)

    # -- what we declare ----------------------------------------------------------------

    def capabilities(self) -> ServerCapabilities:
        """Declared from what is registered (basic/lifecycle#capability-negotiation).

        Handlers set with :meth:`set_handler` / :meth:`handler` for a method that
        needs a capability (``prompts/list``, ``resources/subscribe`` ...) declare
        it too, or the engine would refuse their requests. ``Server(capabilities=...)``
        replaces all of this.
        """
        if self.declared_capabilities is not None:
            return self.declared_capabilities
        custom = {REQUEST_CAPABILITY[m][0] for m in self._handlers if m in REQUEST_CAPABILITY}
        tools = self.tools.capability() if len(self.tools) else None
        prompts = self.prompts.capability() if len(self.prompts) else None
        resources = self.resources.capability() if len(self.resources) else None
        tools = tools or (ListChangedCapability() if "tools" in custom else None)
        prompts = prompts or (ListChangedCapability() if "prompts" in custom else None)
        resources = resources or (ResourcesCapability() if "resources" in custom else None)
        if resources is not None and "resources/subscribe" in self._handlers:
            resources = attrs.evolve(resources, subscribe=True)
        return ServerCapabilities(
            tools=tools,
            resources=resources,
            prompts=prompts,
            completions={} if self._has_completers or "completions" in custom else None,
            logging={} if self.logging_capability or "logging" in custom else None,
            tasks=self.task_manager.server_capability(self._tool_tasks()) if self.task_manager is not None else None,
        )

    def handler_table(self) -> dict[str, RequestHandler]:
        table: dict[str, RequestHandler] = {"initialize": self._initialize}
        if len(self.tools):
            table["tools/list"] = self.tools.list_tools
            table["tools/call"] = self._call_tool
        if len(self.resources):
            table["resources/list"] = self.resources.list_resources
            table["resources/templates/list"] = self.resources.list_templates
            table["resources/read"] = self.resources.read
            table["resources/subscribe"] = self.resources.subscribe_handler
            table["resources/unsubscribe"] = self.resources.unsubscribe_handler
        if len(self.prompts):
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
        """Queue a notification on every initialised session that may receive it."""
        for session in list(self.sessions):
            session.notify_soon(method, params if params is not None else NotificationParams())

    def resource_updated(self, uri: str) -> None:
        """[server/resources#subscriptions] tell the sessions subscribed to ``uri``."""
        params = ResourceUpdatedNotificationParams(uri=uri)
        for session in self.resources.subscribers(uri):
            if isinstance(session, Session):
                session.notify_soon("notifications/resources/updated", params)

    def log(self, level: str, data: Any, logger: str | None = None, *, session: Session | None = None) -> None:
        """Send a log message to one session, or all, honouring each one's level."""
        targets = [session] if session is not None else list(self.sessions)
        params = LoggingMessageNotificationParams(level=level, data=data, logger=logger)  # type: ignore[arg-type]
        check_encodable(params)  # data with no JSON form raises here, not in every session's writer
        for s in targets:
            if passes(level, s.log_level):
                s.notify_soon("notifications/message", params, checked=True)

    def logging_handler(self, level: int = logging.NOTSET) -> MCPLogHandler:
        """A ``logging.Handler`` forwarding Python log records to every session (trio thread only)."""
        return MCPLogHandler(lambda lvl, name, data: self.log(lvl, data, name), level)

    # -- serving -----------------------------------------------------------------------

    async def serve(
        self,
        channel: trio.abc.Channel[bytes],
        *,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one client on ``channel`` until it goes away."""
        conn = Connection(Role.SERVER, capabilities=self.capabilities(), supported_versions=self.supported_versions)
        async with session_scope(
            conn,
            channel,
            handlers=self.handler_table(),
            notification_handlers=self._notification_handlers,
            config=self.config,
        ) as session:
            self.sessions.add(session)
            try:
                task_status.started(session)
                await session.closed.wait()
            finally:
                self.sessions.discard(session)
                self.resources.forget(session)

    async def serve_stdio(
        self, *, task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED, **options: Any
    ) -> None:
        """Serve on this process's stdin/stdout (basic/transports#stdio) until stdin ends."""
        from ..basic.transports.stdio import open_stdio_server_channel

        async with open_stdio_server_channel(**options) as channel:
            await self.serve(channel, task_status=task_status)

    def run_stdio(self, **options: Any) -> None:
        """Blocking convenience for ``if __name__ == "__main__"``: ``trio.run(serve_stdio)``."""
        trio.run(lambda: self.serve_stdio(**options))

    def notification_handlers(self) -> Mapping[str, NotificationHandler]:
        return dict(self._notification_handlers)


def _doc(fn: Callable[..., Any]) -> str | None:
    return (fn.__doc__ or "").strip() or None
