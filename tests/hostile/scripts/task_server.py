"""A server of ours whose one tool runs as a task, under a task flood:
``task_server.py stdio|http MAX_STORED_TASKS``.

The task rate limiter is off (it is a defence of its own, measured in time), so a
flood meets the caps on stored tasks at once: ``max_stored_tasks_per_requestor``
(the default, 1000) and ``max_stored_tasks`` (from the command line). The tool
finishes at once with 1 KiB of text, so every task is kept, finished, until its
ttl. Over HTTP it prints its URL on stderr, as the everything example does.
"""

import sys
from typing import Any

import trio

from mcp_ref.session import RequestContext, Server
from mcp_ref.session.tasks import TaskConfig


async def main(transport: str, max_stored: int) -> None:
    server = Server("task-server", "1")

    @server.tool(task_support="optional")
    async def work(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "w" * 1024

    async with trio.open_nursery() as nursery:
        server.enable_tasks(nursery, config=TaskConfig(rate_limit=None, max_stored_tasks=max_stored))
        if transport == "stdio":
            await server.serve_stdio()
        else:
            from mcp_ref import serve_http

            info = await nursery.start(lambda task_status: serve_http(server, port=0, task_status=task_status))
            print(f"MCP endpoint (Streamable HTTP): {info.url}", file=sys.stderr, flush=True)
            await trio.sleep_forever()
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main, sys.argv[1], int(sys.argv[2]))
