"""The client side: ``open_session`` / ``open_stdio_client`` and typed calls.

::

    async with open_stdio_client(sys.executable, ["-m", "mcp_ref.examples.echo"]) as client:
        tools = await client.list_all_tools()
        result = await client.call_tool("echo", {"text": "hi"})

The block owns the session's nursery: leaving it closes the session (and, for
stdio, shuts the server process down as basic/lifecycle#shutdown describes).
"""

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import trio

from ..basic.lifecycle import SUPPORTED_VERSIONS, Phase, Role
from ..connection import Connection
from ..errors import UnsupportedProtocolVersion
from ..schema.jsonrpc import ProgressToken
from ..schema.lifecycle import (
    ClientCapabilities,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    ServerCapabilities,
)
from ..schema.pagination import PaginatedRequestParams
from ..schema.tools import CallToolRequestParams, CallToolResult, ListToolsResult, Tool
from .core import (
    NotificationHandler,
    PendingRequest,
    ProgressCallback,
    RequestHandler,
    Session,
    SessionConfig,
    session_scope,
)

__all__ = ["ClientSession", "open_session", "open_stdio_client", "DEFAULT_CLIENT_INFO"]

DEFAULT_CLIENT_INFO = Implementation(name="mcp_ref", version="0.1.0")


class ClientSession:
    """An initialised client session: typed calls to the server."""

    def __init__(self, session: Session, init: InitializeResult) -> None:
        self.session = session
        self.init_result = init

    @property
    def protocol_version(self) -> str:
        return self.init_result.protocol_version

    @property
    def server_info(self) -> Implementation:
        return self.init_result.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        return self.init_result.capabilities

    @property
    def instructions(self) -> str | None:
        return self.init_result.instructions

    # -- generic ------------------------------------------------------------------

    async def request(self, method: str, params: Any = None, **options: Any) -> Any:
        """Any request, through the session's one funnel (see Session.request)."""
        return await self.session.request(method, params, **options)

    async def notify(self, method: str, params: Any = None) -> None:
        await self.session.notify(method, params)

    async def ping(self, *, timeout: float | None = None) -> None:
        """[basic/utilities/ping] an empty result, or RequestTimeout / MCPError."""
        await self.session.ping(timeout=timeout)

    async def start_request(self, method: str, params: Any = None, **options: Any) -> PendingRequest:
        """Send a request and get its handle: ``await h.result()``, ``await h.cancel(reason)``."""
        return await self.session.start_request(method, params, **options)

    # -- tools -----------------------------------------------------------------------

    async def list_tools(self, cursor: str | None = None, **options: Any) -> ListToolsResult:
        params = PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        result: ListToolsResult = await self.session.request("tools/list", params, **options)
        return result

    async def list_all_tools(self, **options: Any) -> list[Tool]:
        """Follow ``nextCursor`` to the end (server/utilities/pagination#3)."""
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await self.list_tools(cursor, **options)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools

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
        params = CallToolRequestParams(
            name=name,
            arguments=dict(arguments) if arguments is not None else None,
            meta=dict(meta) if meta is not None else None,
        )
        result: CallToolResult = await self.session.request(
            "tools/call",
            params,
            progress=progress,
            progress_token=progress_token,
            timeout=timeout,
            max_timeout=max_timeout,
        )
        return result


@asynccontextmanager
async def open_session(
    channel: trio.abc.Channel[bytes],
    *,
    client_info: Implementation = DEFAULT_CLIENT_INFO,
    capabilities: ClientCapabilities | None = None,
    protocol_version: str | None = None,
    supported_versions: tuple[str, ...] = SUPPORTED_VERSIONS,
    handlers: Mapping[str, RequestHandler] | None = None,
    notification_handlers: Mapping[str, NotificationHandler] | None = None,
    config: SessionConfig | None = None,
    initialize_timeout: float | None = None,
    initialize_meta: Mapping[str, Any] | None = None,
) -> AsyncIterator[ClientSession]:
    """Initialise an MCP session on ``channel`` and yield the client.

    ``protocol_version`` is what we propose (default: our latest,
    basic/lifecycle#8); the server may answer with another we support.
    """
    conn = Connection(
        Role.CLIENT, capabilities=capabilities or ClientCapabilities(), supported_versions=supported_versions
    )
    async with session_scope(
        conn, channel, handlers=handlers, notification_handlers=notification_handlers, config=config
    ) as session:
        params = InitializeRequestParams(
            protocol_version=protocol_version or supported_versions[0],
            capabilities=conn.capabilities,  # type: ignore[arg-type]
            client_info=client_info,
            meta=dict(initialize_meta) if initialize_meta else None,
        )
        # [basic/lifecycle#1, #2] initialize is the first thing we send
        result: InitializeResult = await session.request("initialize", params, timeout=initialize_timeout)
        if conn.phase is Phase.CLOSED:
            # [basic/lifecycle#12] we cannot speak the server's version: disconnect
            await session.aclose("unsupported protocol version")
            raise UnsupportedProtocolVersion(result.protocol_version, supported_versions)
        # [basic/lifecycle#4] tell the server we are ready
        await session.notify("notifications/initialized")
        session.initialized.set()
        yield ClientSession(session, result)


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
    """Launch ``command args`` as a stdio MCP server and open a session with it."""
    from ..basic.transports.stdio import open_process_channel

    proc_options: dict[str, Any] = {"env": env, "cwd": cwd, "stderr": stderr}
    if shutdown_timeouts is not None:
        proc_options["shutdown_timeouts"] = shutdown_timeouts
    if max_message_size is not None:
        proc_options["max_message_size"] = max_message_size
    async with open_process_channel(command, args, **proc_options) as channel:
        async with open_session(channel, **session_options) as client:
            yield client
