"""The tasks extension, server side, on the wire: a raw 2026-07-28 peer on a memory pair."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mcp_ref import RequestContext, Server, ToolError
from mcp_ref.basic.lifecycle import Role
from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.basic.utilities.tasks import TaskRecord
from mcp_ref.errors import ErrorCode, LocalProtocolError, ProtocolError
from mcp_ref.exchange import StatelessEngine
from mcp_ref.ext.tasks import EXTENSION_ID, ExtTaskConfig, TaskExtension, as_task
from mcp_ref.ext.tasks.server import TaskCreated
from mcp_ref.schema.lifecycle import (
    ClientCapabilities,
    ElicitationCapability,
    Implementation,
    ListChangedCapability,
    ServerCapabilities,
)
from mcp_ref.session.task_store import InMemoryTaskStore, TaskStoreUnavailable

WITH_EXT = ClientCapabilities(elicitation=ElicitationCapability(), extra={"extensions": {EXTENSION_ID: {}}})
WITHOUT_EXT = ClientCapabilities(elicitation=ElicitationCapability())
PROPS = {"name": {"type": "string"}}
FORM = {"type": "object", "properties": PROPS}


class Peer:
    """A 2026-07-28 client speaking raw JSON-RPC on one end of a memory pair."""

    def __init__(self, channel: Any, caps: ClientCapabilities) -> None:
        self.channel = channel
        self.engine = StatelessEngine(Role.CLIENT, info=Implementation(name="peer", version="0"), capabilities=caps)

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        rid, data = self.engine.send_request(method, params)
        await self.channel.send(data)
        with trio.fail_after(30):
            while True:
                msg = json.loads(await self.channel.receive())
                if msg.get("id") == rid and "method" not in msg:
                    self.engine.abandon(rid)
                    return msg  # type: ignore[no-any-return]

    async def raw(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request our own engine would refuse to send (a method the client cannot use)."""
        rid, data = self.engine.send_request("tools/list", params)
        message = json.loads(data)
        message["method"] = method
        await self.channel.send(json.dumps(message).encode())
        self.engine.abandon(rid)
        with trio.fail_after(30):
            return json.loads(await self.channel.receive())  # type: ignore[no-any-return]

    async def result(self, method: str, params: Any = None) -> dict[str, Any]:
        reply = await self.call(method, params)
        assert "result" in reply, reply
        return reply["result"]  # type: ignore[no-any-return]

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        while True:
            task = await self.result("tasks/get", {"taskId": task_id})
            if task["status"] in statuses:
                return task
            await trio.sleep(task.get("pollIntervalMs", 1000) / 1000)


def make_server(
    nursery: trio.Nursery, store: Any = None, decide: Any = None, **options: Any
) -> tuple[Server, TaskExtension]:
    server = Server("ext-tasks-test", "1.0", state_key=b"k" * 32)
    release = trio.Event()

    @server.tool(description="sync only")
    async def greet(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return f"Hello, {arguments.get('name')}!"

    @server.tool(description="a task when it can be", task_support="optional")
    async def slow(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await trio.sleep(float(arguments.get("seconds", 1)))
        return "slow done"

    @server.tool(description="waits for release", task_support="optional")
    async def held(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await release.wait()
        return "released"

    @server.tool(description="only a task", task_support="required")
    async def job(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await trio.sleep(1)
        if arguments.get("fail") == "tool":
            raise ToolError("tool said no")
        if arguments.get("fail") == "protocol":
            raise ProtocolError("Invalid params: bad job", ErrorCode.INVALID_PARAMS, {"why": "bad"})
        if arguments.get("fail") == "crash":
            raise RuntimeError("boom")
        return "job done"

    @server.tool(description="asks, then answers", task_support="optional")
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        first = await ctx.elicit_form("name?", PROPS)
        second = await ctx.elicit_form("again?", PROPS)
        return f"{first.content['name']}/{second.content['name']}"

    @server.tool(description="asks two at once", task_support="optional")
    async def two(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        from mcp_ref.schema import ElicitRequestFormParams
        from mcp_ref.schema._converter import decode
        from mcp_ref.schema.elicitation import ElicitationRequestedSchema

        schema = decode(FORM, ElicitationRequestedSchema)
        got = await ctx.ask_all(
            {
                "a": ("elicitation/create", ElicitRequestFormParams(message="a?", requested_schema=schema)),
                "b": ("elicitation/create", ElicitRequestFormParams(message="b?", requested_schema=schema)),
            }
        )
        return f"{got['a'].content['name']}+{got['b'].content['name']}"

    @server.tool(description="asks with params that do not decode", task_support="optional")
    async def badask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        nested = {"type": "object", "properties": {"a": {"type": "object"}}}  # not a flat form
        bad = {"message": "a?", "requestedSchema": nested}
        if arguments.get("how") == "all":
            await ctx.ask_all({"a": ("elicitation/create", bad)})
        elif arguments.get("how") == "sample":
            await ctx.sample({"messages": [], "maxTokens": "many"})
        else:
            await ctx.elicit(bad)
        return "never"

    @server.tool(description="asks in the request, then a task", task_support="required")
    async def composed(ctx: RequestContext, arguments: dict[str, Any]) -> Any:
        answer = await ctx.elicit_form("who?", PROPS, key="who")

        async def later(tctx: RequestContext) -> str:
            return f"hi {answer.content['name']}"

        return await as_task(ctx, later)

    server.release = release  # type: ignore[attr-defined]
    if decide is None:
        decide = lambda ctx, tool, params: tool.name != "composed"  # noqa: E731
    ext = TaskExtension(nursery, store=store, decide=decide, **options).install(server)
    return server, ext


@asynccontextmanager
async def served(caps: ClientCapabilities = WITH_EXT, **options: Any) -> AsyncIterator[tuple[Peer, Server, Any]]:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        server, ext = make_server(nursery, **options)
        await nursery.start(server.serve, server_end)
        yield Peer(client_end, caps), server, ext
        nursery.cancel_scope.cancel()


@pytest.mark.req("ext-tasks:tasks#1", "ext-tasks:tasks#6")
async def test_discover_declares_the_extension_and_not_the_core_tasks_capability() -> None:
    async with served() as (peer, _, _):
        caps = (await peer.result("server/discover"))["capabilities"]
    assert caps["extensions"] == {EXTENSION_ID: {}}
    assert "tasks" not in caps


@pytest.mark.req(
    "ext-tasks:tasks#1",
    "ext-tasks:tasks#2",
    "ext-tasks:tasks#7",
    "ext-tasks:schema#4",
    "ext-tasks:tasks#10",
    "ext-tasks:tasks#11",
)
async def test_a_task_capable_call_becomes_a_task_stored_before_its_answer(autojump_clock: Any) -> None:
    store = InMemoryTaskStore()
    async with served(store=store) as (peer, _, _):
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": 5}})
        assert created["resultType"] == "task"
        assert created["status"] == "working" and created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] == 1000
        assert not {"result", "error", "inputRequests", "requestState", "task"} & set(created)
        # stored when answered: the store has it, as tasks/get says at once
        assert (await store.get(created["taskId"])) is not None
        got = await peer.result("tasks/get", {"taskId": created["taskId"]})
        assert got["status"] == "working" and got["resultType"] == "complete"


@pytest.mark.req("ext-tasks:tasks#2", "ext-tasks:tasks#8")
async def test_no_task_for_a_request_that_did_not_declare_the_extension() -> None:
    async with served(WITHOUT_EXT) as (peer, _, _):
        result = await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": 0}})
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "slow done"
    assert "taskId" not in result


@pytest.mark.req("ext-tasks:tasks#8")
async def test_a_tool_without_task_support_answers_at_once() -> None:
    async with served() as (peer, _, _):
        result = await peer.result("tools/call", {"name": "greet", "arguments": {"name": "x"}, "task": {"ttl": 5}})
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "Hello, x!"


@pytest.mark.req("ext-tasks:tasks#2", "ext-tasks:tasks#8")
async def test_the_engine_refuses_a_task_result_where_the_extension_allows_none() -> None:
    engine = StatelessEngine(
        Role.SERVER,
        capabilities=ServerCapabilities(tools=ListChangedCapability(), prompts=ListChangedCapability()),
        served=frozenset({"tools/call", "prompts/get"}),
        track_ids=False,
    )
    peer = StatelessEngine(Role.CLIENT, capabilities=WITHOUT_EXT)
    _, data = peer.send_request("tools/call", {"name": "x"})
    (event,) = engine.receive_message(data)
    with pytest.raises(LocalProtocolError):
        event.exchange.send_response({"resultType": "task", "taskId": "t"})  # type: ignore[attr-defined]
    peer = StatelessEngine(Role.CLIENT, capabilities=WITH_EXT)
    _, data = peer.send_request("prompts/get", {"name": "x"})
    (event,) = engine.receive_message(data)
    with pytest.raises(LocalProtocolError):
        event.exchange.send_response({"resultType": "task", "taskId": "t"})  # type: ignore[attr-defined]


@pytest.mark.req("ext-tasks:tasks#5")
async def test_a_task_only_tool_for_a_client_without_the_extension_is_minus_32021() -> None:
    async with served(WITHOUT_EXT) as (peer, _, _):
        reply = await peer.call("tools/call", {"name": "job", "arguments": {}})
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}}


@pytest.mark.req("ext-tasks:tasks#57")
async def test_the_tasks_methods_need_the_extension_on_their_request() -> None:
    async with served(WITHOUT_EXT) as (peer, _, _):
        for method, params in (
            ("tasks/get", {"taskId": "x"}),
            ("tasks/update", {"taskId": "x", "inputResponses": {}}),
            ("tasks/cancel", {"taskId": "x"}),
        ):
            reply = await peer.raw(method, params)
            assert reply["error"]["code"] == -32021, method


@pytest.mark.req(
    "ext-tasks:tasks#53",
    "ext-tasks:tasks#54",
    "ext-tasks:tasks#55",
    "ext-tasks:tasks#37",
    "ext-tasks:tasks#44",
    "ext-tasks:tasks#58",
)
async def test_an_unknown_task_is_minus_32602_saying_so() -> None:
    async with served() as (peer, _, _):
        for method, params in (
            ("tasks/get", {"taskId": "nope"}),
            ("tasks/update", {"taskId": "nope", "inputResponses": {}}),
            ("tasks/cancel", {"taskId": "nope"}),
        ):
            reply = await peer.call(method, params)
            assert reply["error"]["code"] == -32602, method
            assert "Task not found" in reply["error"]["message"]
        # the removed core methods stay unknown
        for method in ("tasks/result", "tasks/list"):
            assert (await peer.raw(method, {"taskId": "nope"}))["error"]["code"] == -32601


@pytest.mark.req(
    "ext-tasks:tasks#22",
    "ext-tasks:tasks#63",
    "ext-tasks:tasks#19",
    "ext-tasks:tasks#25",
    "ext-tasks:schema#5",
    "ext-tasks:tasks#18",
)
async def test_a_completed_task_carries_its_result(autojump_clock: Any) -> None:
    async with served() as (peer, _, _):
        created = await peer.result("tools/call", {"name": "job", "arguments": {}})
        working = await peer.result("tasks/get", {"taskId": created["taskId"]})
        assert working["status"] == "working" and "result" not in working and "error" not in working
        done = await peer.until(created["taskId"], "completed", "failed", "cancelled")
    assert done["status"] == "completed" and done["resultType"] == "complete"
    assert done["result"]["content"] == [{"type": "text", "text": "job done"}]
    assert "_meta" not in done["result"] or "io.modelcontextprotocol/related-task" not in done["result"]["_meta"]


@pytest.mark.req("ext-tasks:tasks#9", "ext-tasks:tasks#60", "ext-tasks:tasks#61", "ext-tasks:tasks#63")
async def test_a_tool_error_completes_the_task_with_is_error(autojump_clock: Any) -> None:
    async with served() as (peer, _, _):
        created = await peer.result("tools/call", {"name": "job", "arguments": {"fail": "tool"}})
        done = await peer.until(created["taskId"], "completed", "failed", "cancelled")
    assert done["status"] == "completed" and done["result"]["isError"] is True and "error" not in done


@pytest.mark.req("ext-tasks:tasks#24", "ext-tasks:tasks#59", "ext-tasks:tasks#62")
async def test_a_json_rpc_error_fails_the_task_with_that_error(autojump_clock: Any) -> None:
    async with served() as (peer, _, _):
        created = await peer.result("tools/call", {"name": "job", "arguments": {"fail": "protocol"}})
        failed = await peer.until(created["taskId"], "completed", "failed", "cancelled")
        crashed = await peer.result("tools/call", {"name": "job", "arguments": {"fail": "crash"}})
        crash = await peer.until(crashed["taskId"], "completed", "failed", "cancelled")
    assert failed["status"] == "failed" and "result" not in failed
    assert failed["error"] == {"code": -32602, "message": "Invalid params: bad job", "data": {"why": "bad"}}
    assert failed["statusMessage"] == "Invalid params: bad job"
    # an exception of the tool is a tool execution error (spec_notes/server/tools.md, "A tool that
    # raises"), so the task completes with that result (ext-tasks: isError is not a failed task)
    assert crash["status"] == "completed" and "error" not in crash
    assert crash["result"]["isError"] is True
    assert crash["result"]["content"] == [{"type": "text", "text": "Internal error in tool 'job'"}]


@pytest.mark.req("ext-tasks:tasks#43", "ext-tasks:tasks#47", "ext-tasks:schema#8", "ext-tasks:tasks#23")
async def test_cancel_acknowledges_empty_and_the_work_stops(autojump_clock: Any) -> None:
    async with served() as (peer, server, _):
        created = await peer.result("tools/call", {"name": "held", "arguments": {}})
        ack = await peer.result("tasks/cancel", {"taskId": created["taskId"]})
        assert {k: v for k, v in ack.items() if k != "_meta"} == {"resultType": "complete"}
        server.release.set()  # (the work was stopped: it never returns "released")
        await trio.sleep(1)
        task = await peer.result("tasks/get", {"taskId": created["taskId"]})
        assert task["status"] == "cancelled" and "result" not in task and "error" not in task
        # a terminal task: the same empty acknowledgement, nothing changes
        again = await peer.result("tasks/cancel", {"taskId": created["taskId"]})
        assert again["resultType"] == "complete" and "status" not in again


@pytest.mark.req(
    "ext-tasks:tasks#20",
    "ext-tasks:tasks#21",
    "ext-tasks:tasks#35",
    "ext-tasks:tasks#41",
    "ext-tasks:schema#7",
    "ext-tasks:tasks#33",
    "ext-tasks:tasks#34",
    "ext-tasks:tasks#39",
)
async def test_input_required_and_update_resume_the_task(autojump_clock: Any) -> None:
    async with served() as (peer, _, _):
        created = await peer.result("tools/call", {"name": "ask", "arguments": {}})
        task_id = created["taskId"]
        waiting = await peer.until(task_id, "input_required")
        (key,) = waiting["inputRequests"]
        assert waiting["inputRequests"][key]["method"] == "elicitation/create"
        assert waiting["inputRequests"][key]["params"]["message"] == "name?"
        # unknown keys are ignored; the ack is empty
        ack = await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"nope": {"x": 1}}})
        assert {k: v for k, v in ack.items() if k != "_meta"} == {"resultType": "complete"}
        assert (await peer.result("tasks/get", {"taskId": task_id}))["status"] == "input_required"
        answer = {"action": "accept", "content": {"name": "Ann"}}
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
        second = await peer.until(task_id, "input_required", "completed")
        (key2,) = second["inputRequests"]
        assert key2 != key  # a key is never used for another request
        # answering the first key again changes nothing
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
        assert (await peer.result("tasks/get", {"taskId": task_id}))["inputRequests"].keys() == {key2}
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {key2: answer}})
        done = await peer.until(task_id, "completed", "failed")
    assert done["result"]["content"][0]["text"] == "Ann/Ann"


@pytest.mark.parametrize("how", ["one", "all", "sample"])
async def test_params_that_do_not_decode_fail_the_task_before_anything_is_asked(how: str, autojump_clock: Any) -> None:
    # as in a request (where LocalProtocolError comes before anything goes on the wire): the task
    # never becomes input_required with a request the client could not read
    async with served() as (peer, _, _):
        created = await peer.result("tools/call", {"name": "badask", "arguments": {"how": how}})
        seen = [(await peer.result("tasks/get", {"taskId": created["taskId"]}))["status"]]
        done = await peer.until(created["taskId"], "completed", "failed", "input_required")
    assert "input_required" not in seen and done["status"] == "failed" and "inputRequests" not in done
    assert "params that do not decode" in done["statusMessage"] and done["error"]["code"] == -32602


@pytest.mark.req("ext-tasks:tasks#40", "ext-tasks:tasks#21", "ext-tasks:schema#6")
async def test_a_partial_update_leaves_the_rest_outstanding(autojump_clock: Any) -> None:
    async with served() as (peer, _, _):
        task_id = (await peer.result("tools/call", {"name": "two", "arguments": {}}))["taskId"]
        waiting = await peer.until(task_id, "input_required")
        assert set(waiting["inputRequests"]) == {"a", "b"}
        answer = {"action": "accept", "content": {"name": "A"}}
        await peer.result("tasks/update", {"taskId": task_id, "inputResponses": {"a": answer}})
        partial = await peer.result("tasks/get", {"taskId": task_id})
        assert partial["status"] == "input_required" and set(partial["inputRequests"]) == {"b"}
        await peer.result(
            "tasks/update", {"taskId": task_id, "inputResponses": {"b": {"action": "accept", "content": {"name": "B"}}}}
        )
        done = await peer.until(task_id, "completed", "failed")
    assert done["result"]["content"][0]["text"] == "A+B"


@pytest.mark.req("ext-tasks:tasks#12")
async def test_a_handler_asks_in_the_request_then_hands_its_work_to_a_task(autojump_clock: Any) -> None:
    async with served() as (peer, _, _):
        first = await peer.result("tools/call", {"name": "composed", "arguments": {}})
        assert first["resultType"] == "input_required" and "taskId" not in first
        retry = {
            "name": "composed",
            "arguments": {},
            "inputResponses": {"who": {"action": "accept", "content": {"name": "Zoe"}}},
            "requestState": first["requestState"],
        }
        rid, data = peer.engine.send_request("tools/call", retry)
        await peer.channel.send(data)
        msg = json.loads(await peer.channel.receive())
        peer.engine.abandon(rid)
        created = msg["result"]
        assert created["resultType"] == "task" and "requestState" not in created
        done = await peer.until(created["taskId"], "completed", "failed")
    assert done["result"]["content"][0]["text"] == "hi Zoe"


async def test_as_task_in_the_work_of_a_task_runs_the_rest_there(autojump_clock: Any) -> None:
    # every call a task at once (the default policy): the handler that would hand its work to a
    # task is a task's work already -- it asks through the task, then finishes in it
    async with served(decide=lambda ctx, tool, params: True) as (peer, _, _):
        created = await peer.result("tools/call", {"name": "composed", "arguments": {}})
        assert created["resultType"] == "task"
        asking = await peer.until(created["taskId"], "input_required")
        assert list(asking["inputRequests"]) == ["who"]
        answer = {"who": {"action": "accept", "content": {"name": "Zoe"}}}
        await peer.result("tasks/update", {"taskId": created["taskId"], "inputResponses": answer})
        done = await peer.until(created["taskId"], "completed", "failed")
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "hi Zoe"


@pytest.mark.req("ext-tasks:tasks#51")
async def test_a_task_sends_no_progress_and_no_log_messages(autojump_clock: Any) -> None:
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        server, _ = make_server(nursery)

        @server.tool(description="reports", task_support="optional")
        async def reports(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            await ctx.progress(1, 2)
            await ctx.log("error", "working")
            await ctx.progress(2, 2)
            return "reported"

        await nursery.start(server.serve, server_end)
        peer = Peer(client_end, WITH_EXT)
        rid, data = peer.engine.send_request("tools/call", {"name": "reports"}, progress_token="p", log_level="debug")
        await client_end.send(data)
        created = json.loads(await client_end.receive())
        peer.engine.abandon(rid)
        assert created["result"]["resultType"] == "task"
        done = await peer.until(created["result"]["taskId"], "completed", "failed")
        assert done["result"]["content"][0]["text"] == "reported"
        # nothing but answers came: every message read was the answer to a request
        with trio.move_on_after(1):
            extra = await client_end.receive()
            raise AssertionError(f"unexpected message {extra!r}")
        nursery.cancel_scope.cancel()


@pytest.mark.req("ext-tasks:tasks#66", "ext-tasks:tasks#64")
async def test_another_users_task_is_not_found() -> None:
    class Auth:
        def __init__(self, subject: str) -> None:
            self.principal = ("issuer", subject, "client")

    store = InMemoryTaskStore()
    async with trio.open_nursery() as nursery:
        _, ext = make_server(nursery, store=store)
        alice, bob, nobody = _Ctx(Auth("alice")), _Ctx(Auth("bob")), _Ctx(None)
        for ctx, task_id in ((alice, "alices"), (nobody, "anyones")):
            record = TaskRecord(
                task_id=task_id,
                owner=ext.owner_of(ctx),  # type: ignore[arg-type]
                method="tools/call",
                status="working",
                created_at=0.0,
                last_updated_at=0.0,
                ttl_ms=None,
                poll_interval_ms=None,
                expires_at=None,
            )
            await store.create(record, ext.limits)
        assert (await ext.get(alice, {"taskId": "alices"}))["taskId"] == "alices"  # type: ignore[arg-type]
        for other in (bob, nobody):
            for call in (ext.get, ext.cancel):
                with pytest.raises(ProtocolError) as refused:
                    await call(other, {"taskId": "alices"})  # type: ignore[arg-type]
                assert refused.value.code == -32602
        assert (await store.get("alices")).status == "working"  # type: ignore[union-attr]
        # without authentication the unguessable id alone reaches the task
        assert (await ext.get(nobody, {"taskId": "anyones"}))["status"] == "working"  # type: ignore[arg-type]
        nursery.cancel_scope.cancel()


class _Ctx:
    """Stands in for a request's context in tests of the extension's own methods."""

    method = "tasks/get"

    def __init__(self, auth: Any) -> None:
        self.auth = auth
        self.exchange = type("E", (), {"meta": type("M", (), {"capabilities": {"extensions": {EXTENSION_ID: {}}}})})()


@pytest.mark.req("ext-tasks:tasks#65")
async def test_task_ids_are_unguessable() -> None:
    async with served() as (peer, _, _):
        ids = [
            (await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": 0}}))["taskId"] for _ in range(3)
        ]
    assert len(set(ids)) == 3 and all(len(i) >= 32 for i in ids)


async def test_the_config_is_checked() -> None:
    with pytest.raises(ValueError):
        ExtTaskConfig(ttl_ms=0)
    with pytest.raises(ValueError):
        ExtTaskConfig(poll_interval_ms=0)
    with pytest.raises(ValueError):
        ExtTaskConfig(max_stored_tasks=0)


async def test_as_task_outside_a_modern_request_runs_the_work_in_place() -> None:
    async def work(ctx: Any) -> str:
        return "here"

    assert await as_task(object(), work) == "here"  # type: ignore[arg-type]
    assert TaskCreated({"taskId": "t"}).result == {"taskId": "t"}


@pytest.mark.req("ext-tasks:tasks#49", "ext-tasks:tasks#56")
async def test_task_notifications_on_a_listen_stream_need_the_extension() -> None:
    listen = {"notifications": {"toolsListChanged": True, "taskIds": ["t1"]}}
    async with served(WITHOUT_EXT) as (peer, _, _):
        reply = await peer.call("subscriptions/listen", listen)
        assert reply["error"]["code"] == -32021
        assert reply["error"]["data"] == {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}}
    async with served(WITH_EXT) as (peer, _, _):
        rid, data = peer.engine.send_request("subscriptions/listen", listen)
        await peer.channel.send(data)
        with trio.fail_after(10):
            ack = json.loads(await peer.channel.receive())
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        # tasks are polled: no task ids are agreed to
        assert ack["params"]["notifications"] == {"toolsListChanged": True}


class _GoneStore(InMemoryTaskStore):
    """A store whose database went away (after a first task was made)."""

    gone = False

    async def create(self, record: Any, limits: Any) -> Any:
        if self.gone:
            raise TaskStoreUnavailable("connection refused")
        return await super().create(record, limits)

    async def get(self, task_id: str) -> Any:
        if self.gone:
            raise TaskStoreUnavailable("connection refused")
        return await super().get(task_id)


async def test_a_store_that_goes_away_is_a_clear_error_and_the_server_goes_on(autojump_clock: Any) -> None:
    store = _GoneStore()
    async with served(store=store) as (peer, _, _):
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": 1}})
        store.gone = True
        for method, params in (
            ("tools/call", {"name": "slow", "arguments": {"seconds": 1}}),
            ("tasks/get", {"taskId": created["taskId"]}),
        ):
            reply = await peer.call(method, params)
            assert reply["error"]["code"] == -32603 and "task store is unavailable" in reply["error"]["message"]
        # what needs no store still works, and the store's return is seen at once
        assert (await peer.result("tools/call", {"name": "greet", "arguments": {"name": "z"}}))["content"]
        store.gone = False
        assert (await peer.result("tasks/get", {"taskId": created["taskId"]}))["taskId"] == created["taskId"]
