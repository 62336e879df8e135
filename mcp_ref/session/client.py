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
from ..basic.json_schema import Validate, available, compile_schema
from ..basic.lifecycle import SUPPORTED_VERSIONS, Phase, Role
from ..basic.transports._nursery import block_nursery
from ..connection import Connection
from ..errors import LocalProtocolError, RemoteProtocolError, UnsupportedProtocolVersion
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

__all__ = ["ClientSession", "InvalidToolResult", "open_session", "open_stdio_client", "DEFAULT_CLIENT_INFO"]

DEFAULT_CLIENT_INFO = Implementation(name="mcp_ref", version="0.1.0")
if TYPE_CHECKING:
    from ..schema.tasks import ListTasksResult, Task, TaskStatusNotificationParams
    from .task_requestor import TaskHandle
    from .tasks import TaskManager

log = logging.getLogger("mcp_ref.client")


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
        session: Session,
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
        self._output_validators: dict[str, Validate | None] = {}
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

    async def start_request(self, method: str, params: Any = None, **options: Any) -> PendingRequest:
        """Send a request and get its handle: ``await h.result()``, ``await h.cancel(reason)``."""
        return await self.session.start_request(method, params, **options)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send the notification ``method`` with ``params`` (a model object or None)."""
        await self.session.notify(method, params)

    async def ping(self, *, timeout: float | None = None) -> None:
        """[basic/utilities/ping] an empty result, or RequestTimeout / MCPError."""
        await self.session.ping(timeout=timeout)

    async def _all_pages(self, fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
        """Follow ``nextCursor`` to the end; cursors stay opaque (pagination#3, #4)."""
        items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            # [server/prompts#8, server/utilities/pagination#1, #4] pages of any size; the cursor goes
            # back untouched -- pagination#implementation-guidelines
            page = await fetch(cursor)
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            # [server/utilities/pagination#3] no nextCursor: the end
            if cursor is None:
                return items
            if cursor in seen:
                raise RemoteProtocolError(f"the server repeated the cursor {cursor!r}: pagination would never end")
            seen.add(cursor)

    @staticmethod
    def _page(cursor: str | None) -> PaginatedRequestParams | None:
        return PaginatedRequestParams(cursor=cursor) if cursor is not None else None

    # -- tools -----------------------------------------------------------------------

    async def list_tools(self, cursor: str | None = None, **options: Any) -> ListToolsResult:
        """One page of the server's tools (``cursor``: the page after that one); also remembers their output schemas,
        so later results are validated.
        """
        result: ListToolsResult = await self.session.request("tools/list", self._page(cursor), **options)
        for tool in result.tools:
            self._remember_output_schema(tool)
        return result

    async def list_all_tools(self, **options: Any) -> list[Tool]:
        """Every tool, following the pages to the end."""
        return await self._all_pages(lambda c: self.list_tools(c, **options), "tools")

    def _forget_tools(self) -> None:
        """The server's tools changed: what was learnt of their schemas is learnt again."""
        self._output_validators.clear()
        self._task_support.clear()

    def _remember_output_schema(self, tool: Tool) -> None:
        self._task_support[tool.name] = tool.execution.task_support if tool.execution is not None else None
        if tool.output_schema is None:
            self._output_validators[tool.name] = None
            return
        try:
            self._output_validators[tool.name] = compile_schema(tool.output_schema)
        except ValueError as e:
            log.warning("tool %r has an output schema we cannot use: %s", tool.name, e)
            self._output_validators[tool.name] = None

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
        result: CallToolResult = await self.session.request(
            "tools/call",
            params,
            progress=progress,
            progress_token=progress_token,
            timeout=timeout,
            max_timeout=max_timeout,
        )
        if not self.validate_tool_results or result.is_error:
            return result
        if name not in self._output_validators and available():
            # [server/tools#17] a tool this session has not listed yet: its output schema is
            # learnt now (one tools/list, then kept until the server says the list changed), so
            # results are checked whether or not the application called list_tools first
            for tool in await self.list_all_tools():
                self._remember_output_schema(tool)
            self._output_validators.setdefault(name, None)  # not listed: nothing to check against
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
        result: ListResourcesResult = await self.session.request("resources/list", self._page(cursor), **options)
        return result

    async def list_all_resources(self, **options: Any) -> list[Resource]:
        """Every resource, following the pages to the end."""
        return await self._all_pages(lambda c: self.list_resources(c, **options), "resources")

    async def list_resource_templates(self, cursor: str | None = None, **options: Any) -> ListResourceTemplatesResult:
        """One page of the server's resource templates (``cursor``: the page after that one)."""
        result: ListResourceTemplatesResult = await self.session.request(
            "resources/templates/list", self._page(cursor), **options
        )
        return result

    async def list_all_resource_templates(self, **options: Any) -> list[ResourceTemplate]:
        """Every resource template, following the pages to the end."""
        return await self._all_pages(lambda c: self.list_resource_templates(c, **options), "resource_templates")

    async def read_resource(self, uri: str, **options: Any) -> ReadResourceResult:
        """Read the resource at ``uri``: its contents (``result.text`` is the text of a single text content). MCPError
        -32002 when the server has none there.
        """
        result: ReadResourceResult = await self.session.request(
            "resources/read", model.ReadResourceRequestParams(uri=uri), **options
        )
        return result

    async def subscribe_resource(self, uri: str, **options: Any) -> None:
        """Ask to be told when the resource at ``uri`` changes (``on_resource_updated`` of open_session receives its
        URI).
        """
        await self.session.request("resources/subscribe", model.SubscribeRequestParams(uri=uri), **options)

    async def unsubscribe_resource(self, uri: str, **options: Any) -> None:
        """Stop the notifications ``subscribe_resource`` asked for."""
        await self.session.request("resources/unsubscribe", model.UnsubscribeRequestParams(uri=uri), **options)

    # -- prompts ----------------------------------------------------------------------------

    async def list_prompts(self, cursor: str | None = None, **options: Any) -> ListPromptsResult:
        """One page of the server's prompts (``cursor``: the page after that one)."""
        result: ListPromptsResult = await self.session.request("prompts/list", self._page(cursor), **options)
        return result

    async def list_all_prompts(self, **options: Any) -> list[Prompt]:
        """Every prompt, following the pages to the end."""
        return await self._all_pages(lambda c: self.list_prompts(c, **options), "prompts")

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
            self.session, "tools/call", params, progress=progress, **options
        )
        return handle

    async def list_tasks(self, cursor: str | None = None, **options: Any) -> ListTasksResult:
        """One page of the tasks the server keeps for us (``cursor``: the page after that one)."""
        from .task_requestor import list_tasks

        return await list_tasks(self.session, cursor, **options)

    async def list_all_tasks(self, **options: Any) -> list[Task]:
        """Every task the server keeps for us, following the pages to the end."""
        return await self._all_pages(lambda c: self.list_tasks(c, **options), "tasks")

    # -- roots ------------------------------------------------------------------------------

    async def set_roots(self, roots: Iterable[Root]) -> None:
        """Replace our roots; [client/roots#2] tell the server when listChanged was declared."""
        if self.roots is None:
            raise RuntimeError("this session was opened without roots")
        self.roots.set(roots)
        if self.roots.list_changed:
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
    supported_versions: tuple[str, ...] = SUPPORTED_VERSIONS,
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
) -> AsyncIterator[ClientSession]:
    """Initialise an MCP session on ``channel`` and yield the client.

    ``protocol_version`` is what we propose (default: our latest,
    basic/lifecycle#8); the server may answer with another we support.
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
        conn = Connection(Role.CLIENT, capabilities=caps, supported_versions=supported_versions)
        async with session_scope(conn, channel, handlers=table, notification_handlers=notes, config=config) as session:
            params = InitializeRequestParams(
                # [basic/lifecycle#8] we propose our latest unless told otherwise -- lifecycle#version-negotiation
                protocol_version=protocol_version or supported_versions[0],
                capabilities=caps,
                client_info=client_info,
                meta=dict(initialize_meta) if initialize_meta else None,
            )
            # [basic/lifecycle#1, #2] initialize is the first thing we send
            result: InitializeResult = await session.request("initialize", params, timeout=initialize_timeout)
            if conn.phase is Phase.CLOSED:
                await session.aclose("unsupported protocol version")
                # [basic/lifecycle#12, #22, schema#9] we cannot speak the server's version: a clear
                # error, and leaving the session scope disconnects -- lifecycle#version-negotiation
                raise UnsupportedProtocolVersion(result.protocol_version, supported_versions)
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
    # [basic/transports#2] the client side of stdio: the server is our child, spoken to
    # over its stdin and stdout -- transports#stdio
    async with open_process_channel(command, args, **proc_options) as channel:
        async with open_session(channel, **session_options) as client:
            yield client
