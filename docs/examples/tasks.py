"""The tasks guide: a tool run as a task on the server, polled, awaited and cancelled by the client."""

import trio

from mcp_ref import RequestContext, Server, TaskCancelled, memory_channel_pair, open_session
from mcp_ref.schema import TaskStatusNotificationParams

server = Server("surveys", "1.0")


@server.tool(task_support="required")  # "optional": called either way; "forbidden" (the default): never a task
async def survey(ctx: RequestContext, *, cities: list[str]) -> str:
    """Check cities one by one (slow: the caller gets a task at once)."""
    for done, city in enumerate(cities, 1):
        await trio.sleep(0.05)
        await ctx.progress(done, len(cities), f"checked {city}")
    return f"checked {len(cities)} cities"


notified: dict[str, str] = {}


async def on_task_status(params: TaskStatusNotificationParams) -> None:
    notified[params.task_id] = params.status  # optional for a receiver to send: polling is the way to be sure


async def main() -> None:
    async with trio.open_nursery() as nursery:
        server.enable_tasks(nursery)  # tasks run here, beyond the request that created them
        client_end, server_end = memory_channel_pair()
        await nursery.start(server.serve, server_end)
        async with open_session(client_end, on_task_status=on_task_status, era="legacy") as client:
            await client.list_tools()  # learns that survey must be called as a task

            task = await client.call_tool_as_task("survey", {"cities": ["Oslo", "Rome"]})
            print("created:", task.status)
            print((await task.result()).text)  # waits for the end, then tasks/result

            slow = await client.call_tool_as_task("survey", {"cities": ["Oslo"] * 100})
            await slow.cancel()
            try:
                await slow.result()
            except TaskCancelled as e:
                print("cancelled:", e.task_id == slow.task_id)
            print("notified:", notified[task.task_id])
        nursery.cancel_scope.cancel()  # stop serving


if __name__ == "__main__":
    trio.run(main)
