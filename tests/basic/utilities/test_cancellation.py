"""basic/utilities/cancellation, both directions, on the memory pair."""

import logging
import math
from collections import OrderedDict
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from mcp_ref.basic.utilities import cancellation
from mcp_ref.errors import LocalProtocolError, RequestCancelled, RequestTimeout
from mcp_ref.session import RequestContext, Server, SessionConfig
from mcp_ref.testing import memory_session_pair

from ...session.test_session import make_server, recorded_pair, stuck_client


def hanging_server() -> tuple[Server, list[str], trio.Event]:
    server = make_server()
    seen: list[str] = []
    started = trio.Event()

    @server.tool()
    async def hang(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            seen.append("handler cancelled")
            raise
        return "never"

    return server, seen, started


@pytest.mark.req("basic/utilities/cancellation#4", "basic/utilities/cancellation#6", "basic/utilities/cancellation#8")
@pytest.mark.req("basic/transports#35")
@pytest.mark.req("basic/utilities/cancellation#7", "schema#18")
async def test_explicit_cancel_by_handle(autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture) -> None:
    server, seen, started = hanging_server()
    caplog.set_level(logging.DEBUG, logger="mcp_ref.session")
    async with recorded_pair(server) as (client, rec):
        handle = await client.start_request("tools/call", _call("hang"), timeout=math.inf)
        await started.wait()
        await handle.cancel("user pressed stop")
        with pytest.raises(RequestCancelled, match="user pressed stop"):
            await handle.result()
        await trio.testing.wait_all_tasks_blocked()
        assert seen == ["handler cancelled"]
        # both sides logged the reason: the sender at DEBUG (its caller has it), the receiver at INFO
        logged = {(r.levelname, r.getMessage()) for r in caplog.records if "user pressed stop" in r.getMessage()}
        assert logged == {
            ("DEBUG", f"cancelling request {handle.id!r} (tools/call): user pressed stop"),
            ("INFO", f"peer cancelled request {handle.id!r}: user pressed stop"),
        }
        # and the receiver forgot the request once its handler stopped
        (session,) = server.sessions
        assert session.connection.incoming(handle.id) is None
        (note,) = [m for m in rec.received if m.get("method") == "notifications/cancelled"]
        assert note["params"] == {"requestId": handle.id, "reason": "user pressed stop"}
        assert not [m for m in rec.sent if m.get("id") == handle.id]
        await handle.cancel("again")  # a second cancel is a no-op
        await client.ping()


@pytest.mark.req("basic/utilities/cancellation#2")
async def test_initialize_is_never_cancelled_even_when_the_caller_gives_up(autojump_clock: trio.abc.Clock) -> None:
    from mcp_ref.basic.transports.memory import memory_channel_pair
    from mcp_ref.session import open_session

    client_end, server_end = memory_channel_pair()
    with trio.move_on_after(5):
        async with open_session(client_end, era="legacy"):
            pass  # the "server" never answers
    sent = []
    while True:
        try:
            sent.append(server_end._receive.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            break
    assert len(sent) == 1 and b'"initialize"' in sent[0]  # no notifications/cancelled followed


@pytest.mark.req("basic/utilities/cancellation#1")
async def test_cancelling_a_finished_request_sends_nothing() -> None:
    async with recorded_pair(make_server()) as (client, rec):
        handle = await client.start_request("tools/call", _call("echo", {"text": "x"}))
        await handle.result()
        await handle.cancel("too late")
        await client.ping()
        assert not [m for m in rec.received if m.get("method") == "notifications/cancelled"]


async def test_result_can_be_awaited_once() -> None:
    async with memory_session_pair(make_server(), era="legacy") as client:
        handle = await client.start_request("ping")
        await handle.result()
        with pytest.raises(RuntimeError, match="once"):
            await handle.result()


@pytest.mark.req("basic/utilities/cancellation#3")
@pytest.mark.req("schema#17")
def test_task_augmented_requests_refuse_notification_cancel() -> None:
    from mcp_ref.basic.lifecycle import Role
    from mcp_ref.connection import Connection
    from mcp_ref.schema.lifecycle import (
        ListChangedCapability,
        ServerCapabilities,
        ServerTaskRequestsCapability,
        ServerTasksCapability,
        ServerTaskToolsRequests,
    )
    from mcp_ref.schema.tasks import TaskMetadata
    from mcp_ref.schema.tools import CallToolRequestParams

    from ...test_connection import handshake

    caps = ServerCapabilities(
        tools=ListChangedCapability(),
        tasks=ServerTasksCapability(requests=ServerTaskRequestsCapability(tools=ServerTaskToolsRequests(call={}))),
    )
    client, server = handshake(server_caps=caps)
    rid, _ = client.send_request("tools/call", CallToolRequestParams(name="t", task=TaskMetadata(ttl=1000)))
    with pytest.raises(LocalProtocolError, match="tasks/cancel"):
        client.send_cancel(rid)
    assert isinstance(client, Connection) and client.role is Role.CLIENT


def _call(name: str, arguments: dict[str, Any] | None = None) -> Any:
    from mcp_ref.schema.tools import CallToolRequestParams

    return CallToolRequestParams(name=name, arguments=arguments)


@pytest.mark.req("basic/utilities/cancellation#1")
async def test_no_cancellation_for_a_request_that_never_went_out(autojump_clock: trio.abc.Clock) -> None:
    async with stuck_client(make_server()) as (client, stuck, rec):
        # cancelled before it could be written
        with trio.CancelScope() as scope:
            scope.cancel()
            await client.call_tool("echo", {"text": "never sent"})
        # cancelled while another write held the line
        stuck.stuck = True
        call_scope = trio.CancelScope()

        async def call() -> None:
            with call_scope:
                await client.call_tool("echo", {"text": "never sent either"})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.ping)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(call)
            await trio.testing.wait_all_tasks_blocked()
            assert stuck.blocked == 1  # the ping is in the channel; the call waits for its turn
            call_scope.cancel()
            await trio.testing.wait_all_tasks_blocked()
            stuck.unstick()
        assert call_scope.cancelled_caught
        await client.ping()
        assert client.session.connection.pending_outgoing == []  # nothing left waiting for an answer
        methods = [m.get("method") for m in rec.received]
        assert "tools/call" not in methods
        assert "notifications/cancelled" not in methods
        assert methods.count("ping") == 2


@pytest.mark.req("basic/lifecycle#18")
async def test_a_cancellation_that_cannot_be_sent_gives_up_after_the_grace(
    autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture
) -> None:
    server, seen, started = hanging_server()
    config = SessionConfig(cancel_grace=2)
    async with stuck_client(server, config=config) as (client, stuck, rec):
        handle = await client.start_request("tools/call", _call("hang"), timeout=5)
        await started.wait()
        stuck.stuck = True  # the request went out; now nothing more can be written
        start = trio.current_time()
        with pytest.raises(RequestTimeout):
            await handle.result()
        # the timeout, then at most the grace for the cancellation
        assert trio.current_time() - start == pytest.approx(5 + 2)
        assert stuck.blocked == 0
        stuck.unstick()
        await client.ping()
        assert not [m for m in rec.received if m.get("method") == "notifications/cancelled"]
    assert any("could not send the cancellation" in r.getMessage() for r in caplog.records)


# -- the chapter's rules, sans-IO (mcp_ref.basic.utilities.cancellation) ----------------------


@pytest.mark.req("basic/utilities/cancellation#2", "basic/utilities/cancellation#3")
def test_which_of_our_requests_may_be_cancelled_with_a_notification() -> None:
    assert cancellation.refusal("tools/call", task=False) is None
    assert cancellation.refusal("initialize", task=False) == cancellation.INITIALIZE_NEVER
    assert cancellation.refusal("tools/call", task=True) == cancellation.TASK_USES_TASKS_CANCEL


@attrs.define
class _Req:
    method: str = "tools/call"
    task: bool = False
    state: str = "running"


@pytest.mark.req(
    "basic/utilities/cancellation#2",
    "basic/utilities/cancellation#3",
    "basic/utilities/cancellation#5",
    "basic/utilities/cancellation#10",
)
@pytest.mark.parametrize(
    ("rid", "req", "why"),
    [
        (7, _Req(), None),
        (None, None, "no requestId"),
        (7, None, "unknown request id"),
        (3, None, "request already finished"),
        (7, _Req(method="initialize"), "initialize cannot be cancelled"),
        (7, _Req(task=True), "task-augmented request: use tasks/cancel"),
        (7, _Req(state="cancel-requested"), "already cancelled"),
    ],
)
def test_which_cancellations_from_the_peer_are_ignored(rid: Any, req: _Req | None, why: str | None) -> None:
    state = cancellation.CancellationState()
    state.finished_theirs(3)
    assert state.ignore_reason(rid, req) == why


@pytest.mark.req("basic/utilities/cancellation#4")
def test_no_response_may_be_sent_once_the_peer_cancelled() -> None:
    from mcp_ref.schema.tools import ListToolsResult

    from ...test_connection import handshake

    client, server = handshake()
    rid, data = client.send_request("tools/list")
    server.receive_message(data)
    server.receive_message(client.send_cancel(rid, "stop"))
    with pytest.raises(LocalProtocolError, match="cancelled by the peer"):
        server.send_response(rid, ListToolsResult(tools=[]))
    server.finish_cancelled(rid)
    assert server.incoming(rid) is None


@pytest.mark.req("basic/utilities/cancellation#10", "basic/utilities/progress#7")
async def test_ignored_cancellations_and_progress_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_ref")
    server = make_server()
    async with memory_session_pair(server, era="legacy") as client:
        (session,) = server.sessions
        await client.session.send_raw(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}'
        )
        note = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody","progress":1}}'
        await session.send_raw(note)
        await client.ping()  # the client's cancellation reached the server before this ping
        await session.ping()  # and the server's progress the client before that one
    ignored = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ignored")]
    assert any("CancellationIgnored" in m for m in ignored), ignored
    assert any("ProgressIgnored" in m and "nobody" in m for m in ignored), ignored


@pytest.mark.req("basic/utilities/cancellation#6")
def test_a_response_to_a_cancelled_request_is_late_while_remembered() -> None:
    state = cancellation.CancellationState()
    state.cancelled_ours(1, "tools/call")
    assert state.late_response(1) == "tools/call"
    assert state.late_response(2) is None
    for rid in range(2, 2 + cancellation.MEMORY):
        state.cancelled_ours(rid, "ping")
    # bounded: the oldest id is forgotten (its response would count as unknown), the newest kept
    assert state.late_response(1) is None
    assert state.late_response(1 + cancellation.MEMORY) == "ping"
    assert len(state.cancelled) == cancellation.MEMORY


def test_remembering_a_key_again_makes_it_the_newest() -> None:
    store: OrderedDict[int, None] = OrderedDict()
    for key in range(cancellation.MEMORY):
        cancellation.remember(store, key)
    cancellation.remember(store, 0)
    cancellation.remember(store, cancellation.MEMORY)
    assert 0 in store and 1 not in store and len(store) == cancellation.MEMORY


@pytest.mark.req("basic/utilities/cancellation#3", "basic/utilities/cancellation#6")
async def test_a_task_created_for_a_request_given_up_on_is_cancelled_with_tasks_cancel(
    autojump_clock: trio.abc.Clock,
) -> None:
    from mcp_ref.schema.tasks import GetTaskRequestParams
    from mcp_ref.session.tasks import TaskConfig

    server = make_server()
    started: list[str] = []
    async with trio.open_nursery() as nursery:
        # one task operation a second: the second tools/call is answered a second late
        server.enable_tasks(nursery, config=TaskConfig(rate_limit=1.0, rate_burst=1))

        @server.tool(task_support="optional")
        async def long(ctx: Any, arguments: dict[str, Any]) -> str:
            started.append(ctx.task_id)
            await trio.sleep_forever()
            return "never"

        async with recorded_pair(server) as (client, rec):
            kept = await client.call_tool_as_task("long")
            with pytest.raises(RequestTimeout):
                await client.call_tool_as_task("long", timeout=0.5)
            # no notifications/cancelled for a task-augmented request ...
            assert not [m for m in rec.received if m.get("method") == "notifications/cancelled"]
            await trio.sleep(5)
            assert len(started) == 2
            orphan = started[1]
            # ... but once its CreateTaskResult arrives, the task it names is cancelled
            (cancel,) = [m for m in rec.received if m.get("method") == "tasks/cancel"]
            assert cancel["params"] == {"taskId": orphan}
            states = {
                task_id: (await client.session.request("tasks/get", GetTaskRequestParams(task_id=task_id))).status
                for task_id in (kept.task_id, orphan)
            }
            assert states == {kept.task_id: "working", orphan: "cancelled"}
            assert client.session.connection.stats["late-response"] == 1
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/utilities/cancellation#3")
def test_a_late_create_task_result_names_the_task_to_cancel_once() -> None:
    state = cancellation.CancellationState()
    state.cancelled_ours(1, "tools/call", task=True)
    state.cancelled_ours(2, "tools/call")
    created = {"task": {"taskId": "t-1", "status": "working"}}
    assert state.orphan_task(2, created) is None  # not task-augmented: just a late response
    assert state.orphan_task(1, {"content": []}) is None  # not a CreateTaskResult
    state.cancelled_ours(1, "tools/call", task=True)
    assert state.orphan_task(1, created) == "t-1"
    assert state.orphan_task(1, created) is None  # once
