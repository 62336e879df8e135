"""server/utilities/logging: setLevel, filtering, notifications, the Python logging bridge."""

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.schema.logging import LoggingMessageNotificationParams
from mcp_ref.session import RequestContext, Server
from mcp_ref.testing import memory_session_pair


def logging_server() -> Server:
    server = Server("logs")

    @server.tool()
    async def chatter(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, {"step": level}, logger="chatter")
        return "done"

    return server


async def collect(server: Server, level: str | None) -> list[LoggingMessageNotificationParams]:
    got: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        got.append(params)

    async with memory_session_pair(server, on_log=on_log, era="legacy") as client:
        assert client.server_capabilities.logging == {}
        if level is not None:
            await client.set_logging_level(level)
        await client.call_tool("chatter")
        await client.ping()
        await trio.testing.wait_all_tasks_blocked()
    return got


OnLog = Callable[[LoggingMessageNotificationParams], Awaitable[None]]


def gather(count: int) -> tuple[list[LoggingMessageNotificationParams], trio.Event, OnLog]:
    """An ``on_log`` callback keeping what arrives, and an event set once ``count`` messages have."""
    got: list[LoggingMessageNotificationParams] = []
    arrived = trio.Event()

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        got.append(params)
        if len(got) == count:
            arrived.set()

    return got, arrived, on_log


@pytest.mark.req("server/utilities/logging#1", "server/utilities/logging#2")
@pytest.mark.req("schema#19")
async def test_level_filtering() -> None:
    everything = await collect(logging_server(), None)
    assert [m.level for m in everything] == ["debug", "info", "warning", "error"]
    assert everything[0].logger == "chatter" and everything[0].data == {"step": "debug"}
    warnings_up = await collect(logging_server(), "warning")
    assert [m.level for m in warnings_up] == ["warning", "error"]


async def test_missing_level_is_refused_before_sending() -> None:
    from mcp_ref.errors import LocalProtocolError

    async with memory_session_pair(logging_server(), era="legacy") as client:
        with pytest.raises(LocalProtocolError, match="SetLevelRequestParams"):
            await client.request("logging/setLevel", None)


@pytest.mark.req("server/utilities/logging#3")
async def test_invalid_level_from_a_raw_peer() -> None:
    import json

    from mcp_ref.basic.transports.memory import memory_channel_pair

    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(logging_server().serve, server_end)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        await client_end.send(json.dumps(init).encode())
        await client_end.receive()
        await client_end.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        await client_end.send(b'{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}')
        reply = json.loads(await client_end.receive())
        assert reply["error"]["code"] == -32602 and "level" in reply["error"]["message"]
        nursery.cancel_scope.cancel()


async def test_python_logging_bridge() -> None:
    server = logging_server()
    got, arrived, on_log = gather(2)

    logger = logging.getLogger("app.component")
    logger.setLevel(logging.DEBUG)
    handler = server.logging_handler()
    logger.addHandler(handler)
    try:
        async with memory_session_pair(server, on_log=on_log, era="legacy") as client:
            await client.set_logging_level("info")
            logger.debug("too quiet")
            logger.info("connected to %s", "db")
            logger.error("disk full")
            with trio.fail_after(5):
                await arrived.wait()
    finally:
        logger.removeHandler(handler)
    assert [(m.level, m.logger, m.data) for m in got] == [
        ("info", "app.component", "connected to db"),
        ("error", "app.component", "disk full"),
    ]


async def test_unknown_levels_are_refused_before_sending() -> None:
    server = Server("logs")
    refused: list[Exception] = []

    @server.tool()
    async def bad_level(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        with pytest.raises(ValueError, match="unknown log level 'bogus'") as info:
            await ctx.log("bogus", "x")
        refused.append(info.value)
        return "refused"

    got: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        got.append(params)

    async with memory_session_pair(server, on_log=on_log, era="legacy") as client:
        with pytest.raises(ValueError, match="unknown log level 'bogus'"):
            await client.set_logging_level("bogus")
        for level in (None, "info"):  # before and after the client set a level (no KeyError then)
            if level is not None:
                await client.set_logging_level(level)
            with pytest.raises(ValueError, match="unknown log level 'bogus'"):
                server.log("bogus", "x")
            (block,) = (await client.call_tool("bad_level")).content
            assert getattr(block, "text", None) == "refused"
        await client.ping()
        await trio.testing.wait_all_tasks_blocked()
    assert len(refused) == 2 and got == []


async def test_python_logging_bridge_from_worker_threads_with_a_formatter() -> None:
    server = logging_server()
    got, arrived, on_log = gather(2)

    logger = logging.getLogger("app.worker")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = server.logging_handler()
    handler.setFormatter(logging.Formatter("[%(threadName)s] %(message)s"))
    logger.addHandler(handler)

    def work() -> None:
        logger.info("from a thread")
        try:
            raise KeyError("secret internals")
        except KeyError:
            logger.exception("it failed")

    try:
        async with memory_session_pair(server, on_log=on_log, era="legacy") as client:
            await trio.to_thread.run_sync(work)
            with trio.fail_after(5):
                await arrived.wait()
            await client.ping()
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    assert [(m.level, m.logger) for m in got] == [("info", "app.worker"), ("error", "app.worker")]
    assert got[0].data.startswith("[") and got[0].data.endswith("] from a thread")
    assert got[0].data != "[MainThread] from a thread"  # formatted in the worker's record, sent from trio
    assert got[1].data.endswith("] it failed") and "secret internals" not in got[1].data


def test_the_bridge_needs_a_served_server(monkeypatch: pytest.MonkeyPatch) -> None:
    handler = Server("idle").logging_handler()
    record = logging.makeLogRecord({"msg": "hello", "levelno": logging.INFO, "name": "x"})
    errors: list[logging.LogRecord] = []
    monkeypatch.setattr(handler, "handleError", errors.append)
    handler.emit(record)
    assert errors == [record]


@pytest.mark.req("server/utilities/logging#4", "server/utilities/logging#7")
async def test_log_messages_are_rate_limited_per_session(autojump_clock: trio.abc.Clock) -> None:
    from mcp_ref.session import SessionConfig

    server = Server("limited", config=SessionConfig(log_rate=2, log_burst=3))
    sent: list[bool] = []

    @server.tool()
    async def burst(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for i in range(5):
            sent.append(await ctx.log("info", f"burst {i}"))
        await trio.sleep(1)  # two more tokens
        for i in range(3):
            sent.append(await ctx.log("info", f"later {i}"))
        server.log("info", "broadcast")  # the same bucket: nothing left
        await trio.sleep(0.5)
        server.log("info", "broadcast after a pause")
        return "done"

    got: list[Any] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        got.append(params.data)

    async with memory_session_pair(server, on_log=on_log, era="legacy") as client:
        await client.call_tool("burst")
        await client.ping()
        await trio.testing.wait_all_tasks_blocked()
        (session,) = server.sessions
        assert session.log_limiter is not None and session.log_limiter.dropped == 4
    assert sent == [True, True, True, False, False, True, True, False]
    assert got == ["burst 0", "burst 1", "burst 2", "later 0", "later 1", "broadcast after a pause"]


def test_rate_limit_settings_are_checked() -> None:
    from mcp_ref.server.utilities.logging import LogRateLimiter
    from mcp_ref.session import SessionConfig

    for bad in ({"log_rate": 0}, {"log_rate": -1}, {"log_burst": 0}):
        with pytest.raises(ValueError):
            SessionConfig(**bad)
    with pytest.raises(ValueError):
        LogRateLimiter(0, 1)
    assert SessionConfig().log_rate is None  # off by default: every message goes out
