"""Our stdio client, a task receiver for sampling, against a server that floods it with
task-augmented requests: ``task_client.py COUNT``.

Says ``ready`` once initialised, waits for a line on stdin, asks for the tool list (the
server first sends COUNT task-augmented sampling requests, and names what came back in
the tools it lists), says ``done`` and the tool names, waits for another line, and exits.
The task rate limiter is off: the caps on stored tasks must hold without it.
"""

import sys
from pathlib import Path
from typing import Any

import trio

from mcp_ref.schema.content import TextContent
from mcp_ref.schema.sampling import CreateMessageResult
from mcp_ref.session import open_stdio_client
from mcp_ref.session.tasks import TaskConfig, TaskManager

FLOODER = Path(__file__).with_name("task_flooder.py")


async def sample(ctx: Any, params: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", model="m", content=TextContent(text="s" * 1024))


async def main(count: str) -> None:
    async with trio.open_nursery() as nursery:
        tasks = TaskManager(nursery, config=TaskConfig(rate_limit=None))
        argv = [str(FLOODER), count]
        async with open_stdio_client(
            sys.executable, argv, stderr="inherit", sampling=sample, tasks=tasks, era="legacy"
        ) as client:
            print("ready", flush=True)
            await trio.to_thread.run_sync(sys.stdin.readline)
            try:
                result = await client.list_tools(timeout=120)
                outcome = "done " + " ".join(sorted(t.name for t in result.tools))
            except Exception as e:  # the test reads how the request ended
                outcome = f"done error {type(e).__name__}: {e}"
            print(outcome[:300].replace("\n", " "), flush=True)
            await trio.to_thread.run_sync(sys.stdin.readline)
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main, sys.argv[1])
