"""basic/utilities/tasks: the runtime's routing, robustness and limits, on autojump_clock."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.schema.content import TextContent
from mcp_ref.schema.elicitation import ElicitResult
from mcp_ref.schema.tasks import RELATED_TASK_META_KEY
from mcp_ref.session import Server, open_session

from ...session.test_session import Recorder
from .test_tasks import task_server


class Routed(Recorder):
    """A recorded server channel that also records which request each message was sent for."""

    def __init__(self, inner: trio.abc.Channel[bytes]) -> None:
        super().__init__(inner)
        self.routes: list[tuple[Any, Any]] = []

    async def send_related(self, value: bytes, related_request_id: Any) -> None:
        self.routes.append((json.loads(value), related_request_id))
        await self.send(value)


@asynccontextmanager
async def routed_pair(server: Server, **client_options: Any) -> AsyncIterator[tuple[Any, Routed]]:
    client_end, server_end = memory_channel_pair()
    rec = Routed(server_end)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, rec)
        async with open_session(client_end, **client_options) as client:
            yield client, rec
        nursery.cancel_scope.cancel()


async def accept(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={})


@pytest.mark.req("basic/utilities/tasks#32", "basic/utilities/tasks#34", "basic/utilities/tasks#35")
async def test_input_requests_wait_for_tasks_result_and_go_on_its_stream(autojump_clock: trio.abc.Clock) -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with routed_pair(server, elicitation=accept) as (client, rec):
            handle = await client.call_tool_as_task("needs_input")
            await trio.sleep(30)
            assert (await handle.get()).status == "input_required"
            # nothing was sent unrelated, to be lost where nobody listens
            assert not [m for m, _ in rec.routes if m.get("method") == "elicitation/create"]
            result = await handle.result()
            assert result.content == [TextContent(text="user said accept")]
            ((elicit, related),) = [(m, r) for m, r in rec.routes if m.get("method") == "elicitation/create"]
            (fetch,) = [m for m in rec.received if m.get("method") == "tasks/result"]
            assert related == fetch["id"]
            assert elicit["params"]["_meta"] == {RELATED_TASK_META_KEY: {"taskId": handle.task_id}}
        nursery.cancel_scope.cancel()
