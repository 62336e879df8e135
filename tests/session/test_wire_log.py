"""The mcp_ref.wire logger: every message each side writes and reads, at DEBUG."""

import json
import logging

import pytest

from mcp_ref import RequestContext, Server, memory_session_pair


def make_server() -> Server:
    server = Server("wire")

    @server.tool()
    async def echo(ctx: RequestContext, *, text: str) -> str:
        return text

    return server


async def test_every_message_is_traced_both_ways_on_both_sides(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_ref.wire")
    async with memory_session_pair(make_server(), era="legacy") as client:
        await client.call_tool("echo", {"text": "hi"})
    traced: dict[str, list[tuple[str, str]]] = {"client": [], "server": []}
    texts: dict[str, list[str]] = {"->": [], "<-": []}
    for record in caplog.records:
        assert record.name == "mcp_ref.wire" and record.levelno == logging.DEBUG
        side, arrow, text = record.getMessage().split(" ", 2)
        message = json.loads(text)
        traced[side].append((arrow, message.get("method") or f"result {message['id']}"))
        texts[arrow].append(text)
    # each side in its own order (the two sides' tasks interleave as trio schedules them)
    assert traced["client"] == [
        ("->", "initialize"),
        ("<-", "result 0"),
        ("->", "notifications/initialized"),
        ("->", "tools/call"),
        ("<-", "result 1"),
        ("->", "tools/list"),  # the output schema of a tool not listed yet, to check the result
        ("<-", "result 2"),
    ]
    assert traced["server"] == [
        ("<-", "initialize"),
        ("->", "result 0"),
        ("<-", "notifications/initialized"),
        ("<-", "tools/call"),
        ("->", "result 1"),
        ("<-", "tools/list"),
        ("->", "result 2"),
    ]
    # what one side wrote is, byte for byte, what the other read
    assert sorted(texts["->"]) == sorted(texts["<-"])


async def test_nothing_is_formatted_unless_debug_is_on(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_ref.wire")
    async with memory_session_pair(make_server(), era="legacy") as client:
        await client.call_tool("echo", {"text": "hi"})
    assert [r for r in caplog.records if r.name == "mcp_ref.wire"] == []
