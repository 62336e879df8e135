"""basic/utilities/tasks over Streamable HTTP with a raw client that never opens the GET stream."""

import json
from typing import Any
from urllib.parse import urlsplit

import h11
import pytest
import trio

from mcp_ref.basic.transports.streamable_http import SSEDecoder
from mcp_ref.schema.content import TextContent
from mcp_ref.schema.elicitation import ElicitResult
from mcp_ref.schema.tasks import RELATED_TASK_META_KEY
from mcp_ref.session.http import open_http_client

from ..transports.test_streamable_http import ACCEPT_BOTH, http_server, raw, sse_messages
from .test_tasks import task_server


class SSEReader:
    """A POST whose SSE answer is read message by message, as it arrives."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.conn = h11.Connection(h11.CLIENT)
        self.decoder = SSEDecoder()
        self.ready: list[Any] = []
        self.status = 0

    @classmethod
    async def post(cls, url: str, headers: dict[str, str], body: Any) -> "SSEReader":
        parts = urlsplit(url)
        stream = await trio.open_tcp_stream(parts.hostname or "127.0.0.1", parts.port or 80)
        reader = cls(stream)
        data = json.dumps(body).encode()
        hdrs = {
            "host": parts.netloc,
            "connection": "close",
            **headers,
            "content-type": "application/json",
            "content-length": str(len(data)),
        }
        out = reader.conn.send(h11.Request(method="POST", target=parts.path, headers=list(hdrs.items()))) or b""
        out += (reader.conn.send(h11.Data(data=data)) or b"") + (reader.conn.send(h11.EndOfMessage()) or b"")
        await stream.send_all(out)
        return reader

    async def next_message(self) -> Any:
        while not self.ready:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                self.conn.receive_data(await self.stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                self.status = event.status_code
            elif isinstance(event, h11.Data):
                self.ready += [json.loads(e.data) for e in self.decoder.feed(bytes(event.data)) if e.data]
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                raise EOFError("the stream ended")
        return self.ready.pop(0)


def one_message(headers: dict[str, str], body: bytes) -> Any:
    if headers["content-type"] == "application/json":
        return json.loads(body)
    (message,) = sse_messages(body)
    return message


async def start_needs_input(url: str) -> tuple[dict[str, str], str]:
    """A raw client initialises (form elicitation) and calls needs_input as a task:
    the headers of its session and the task's id."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    status, headers, body = await raw(url, "POST", ACCEPT_BOTH, init)
    assert status == 200
    session = {**ACCEPT_BOTH, "mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    status, _, _ = await raw(url, "POST", session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202
    call = {"name": "needs_input", "task": {"ttl": 60_000}}
    status, headers, body = await raw(
        url, "POST", session, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
    )
    return session, one_message(headers, body)["result"]["task"]["taskId"]


@pytest.mark.req("basic/utilities/tasks#32", "basic/utilities/tasks#33", "basic/utilities/tasks#34")
@pytest.mark.req("basic/utilities/tasks#35")
async def test_input_request_reaches_a_polling_requestor_without_get_stream() -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with http_server(server) as info:
            url = info.url
            session, task_id = await start_needs_input(url)
            # the requestor polls (tasks/get) and sees input_required: the receiver waits for it
            with trio.fail_after(10):
                while True:
                    get = {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": task_id}}
                    status, headers, body = await raw(url, "POST", session, get)
                    if one_message(headers, body)["result"]["status"] == "input_required":
                        break
                    await trio.sleep(0.01)
                # [basic/utilities/tasks#34] it calls tasks/result: the elicitation comes on that stream
                fetch = {"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": task_id}}
                reader = await SSEReader.post(url, session, fetch)
                elicit = await reader.next_message()
                assert elicit["method"] == "elicitation/create"
                assert elicit["params"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": task_id}
                answer = {"jsonrpc": "2.0", "id": elicit["id"], "result": {"action": "accept", "content": {}}}
                status, _, _ = await raw(url, "POST", session, answer)
                assert status == 202
                final = await reader.next_message()
                await reader.stream.aclose()
            assert final["id"] == 4
            assert final["result"]["content"] == [{"type": "text", "text": "user said accept"}]
            assert final["result"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": task_id}
            assert state["elicited"] == "accept"
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#29", "basic/utilities/tasks#34")
async def test_our_client_answers_a_task_elicitation_over_http() -> None:
    async def user(ctx: Any, params: Any) -> ElicitResult:
        assert params.meta[RELATED_TASK_META_KEY]["taskId"] == handle.task_id
        return ElicitResult(action="accept", content={})

    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery, poll_interval_ms=10)
        async with http_server(server) as info, open_http_client(info.url, elicitation=user, era="legacy") as client:
            handle = await client.call_tool_as_task("needs_input")
            with trio.fail_after(10):
                result = await handle.wait(poll_interval_bounds=(0.01, 0.1))
            assert result.content == [TextContent(text="user said accept")]
            assert (await handle.get()).status == "completed"
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/tasks#16", "basic/utilities/tasks#34")
async def test_a_requestor_that_drops_its_tasks_result_stream_gets_the_input_request_again() -> None:
    async with trio.open_nursery() as nursery:
        server, state = task_server(nursery)
        async with http_server(server) as info:
            url = info.url
            session, task_id = await start_needs_input(url)
            with trio.fail_after(10):
                fetch = {"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": task_id}}
                first = await SSEReader.post(url, session, fetch)
                lost = await first.next_message()
                assert lost["method"] == "elicitation/create"
                # [basic/utilities/tasks#16] the requestor drops that stream before answering ...
                await first.stream.aclose()
                # ... and calls tasks/result again: the input request comes again on the new stream
                again = {"jsonrpc": "2.0", "id": 5, "method": "tasks/result", "params": {"taskId": task_id}}
                second = await SSEReader.post(url, session, again)
                elicit = await second.next_message()
                assert elicit["method"] == "elicitation/create" and elicit["id"] != lost["id"]
                assert elicit["params"]["message"] == lost["params"]["message"]
                assert elicit["params"]["_meta"][RELATED_TASK_META_KEY] == {"taskId": task_id}
                answer = {"jsonrpc": "2.0", "id": elicit["id"], "result": {"action": "accept", "content": {}}}
                status, _, _ = await raw(url, "POST", session, answer)
                assert status == 202
                final = await second.next_message()
                await second.stream.aclose()
            assert final["id"] == 5
            assert final["result"]["content"] == [{"type": "text", "text": "user said accept"}]
            assert state["elicited"] == "accept"
        nursery.cancel_scope.cancel()
