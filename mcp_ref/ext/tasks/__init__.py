"""The tasks extension (``io.modelcontextprotocol/tasks``): tasks for 2026-07-28 ``tools/call``.

Server::

    async with trio.open_nursery() as nursery:
        TaskExtension(nursery, store=store).install(server)     # store: memory, SQLite, PostgreSQL

Client::

    async with open_session(channel, tasks_extension=True, elicitation=...) as client:
        result = await client.call_tool("slow", {})       # a task is polled to its end
        outcome = await call_tool(client, "slow", {})     # or kept: a TaskHandle

The wire rules are in :mod:`.protocol`, the server runtime in :mod:`.server`,
the client in :mod:`.client`; the decisions in ``spec_notes/ext-tasks/tasks.md``.
The 2025-11-25 core tasks (``mcp_ref.session.tasks``) serve 2025 sessions.
"""

from .client import TaskCancelledError, TaskHandle, call_tool, wait_for_result
from .protocol import EXTENSION_ID, METHODS, create_task_result, declares_extension, detailed_task
from .server import ExtTaskConfig, TaskExtension, TaskWorkContext, as_task

__all__ = [
    "EXTENSION_ID",
    "METHODS",
    "ExtTaskConfig",
    "TaskCancelledError",
    "TaskExtension",
    "TaskHandle",
    "TaskWorkContext",
    "as_task",
    "call_tool",
    "create_task_result",
    "declares_extension",
    "detailed_task",
    "wait_for_result",
]
