"""The server side: a handler table, feature registries, and ``serve``.

::

    server = Server("demo", "1.0")

    @server.tool(description="Echo the text back")
    async def echo(ctx, arguments):
        return arguments["text"]

    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, channel)   # one session per call

Every connection gets its own engine and :class:`~mcp_ref.session.core.Session`;
``serve`` returns when the peer goes away.
"""

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import trio

from ..basic.lifecycle import SUPPORTED_VERSIONS, Role, negotiate_version
from ..connection import Connection
from ..schema.lifecycle import Icon, Implementation, InitializeRequestParams, InitializeResult, ServerCapabilities
from ..schema.tools import Tool, ToolAnnotations
from ..server.tools import ToolFunction, ToolRegistry
from .core import NotificationHandler, RequestContext, RequestHandler, Session, SessionConfig, session_scope

__all__ = ["Server"]

F = TypeVar("F", bound=Callable[..., Any])


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
    ) -> None:
        self.info = Implementation(
            name=name, version=version, title=title, description=description, website_url=website_url, icons=icons
        )
        self.instructions = instructions
        self.supported_versions = supported_versions
        self.config = config or SessionConfig()
        self.tools = ToolRegistry()
        self._handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
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
        meta: dict[str, Any] | None = None,
    ) -> Callable[[ToolFunction], ToolFunction]:
        """Register ``fn(ctx, arguments)`` as a tool (name defaults to the function's)."""

        def register(fn: ToolFunction) -> ToolFunction:
            tool = Tool(
                name=name or fn.__name__,
                title=title,
                description=description if description is not None else (fn.__doc__ or "").strip() or None,
                input_schema=input_schema if input_schema is not None else {"type": "object"},
                output_schema=output_schema,
                annotations=annotations,
                icons=icons,
                meta=meta,
            )
            self.tools.add(tool, fn)
            return fn

        return register

    # -- what we declare ----------------------------------------------------------------

    def capabilities(self) -> ServerCapabilities:
        """Declared from what is registered (basic/lifecycle#capability-negotiation)."""
        return ServerCapabilities(tools=self.tools.capability() if len(self.tools) else None)

    def handler_table(self) -> dict[str, RequestHandler]:
        table: dict[str, RequestHandler] = {"initialize": self._initialize}
        if len(self.tools):
            table["tools/list"] = self.tools.list
            table["tools/call"] = self.tools.call
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
