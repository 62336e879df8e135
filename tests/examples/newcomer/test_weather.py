"""The newcomer's tests of weather.py, with mcp_ref's pytest plugin."""

from typing import Any

import pytest
import trio

from mcp_ref import ClientSession, Server
from mcp_ref.schema import ElicitResult

from .weather import server


@pytest.fixture
def mcp_server() -> Server:
    return server


@pytest.fixture
def mcp_client_options() -> dict[str, Any]:
    async def traveller(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Ada"})

    return {"elicitation": traveller}


async def test_forecast_is_structured(mcp_client: ClientSession) -> None:
    result = await mcp_client.call_tool("forecast", {"city": "Oslo"})
    assert result.structured_content == {"city": "Oslo", "celsius": 21.5}


async def test_survey_reports_progress(mcp_client: ClientSession, autojump_clock: Any) -> None:
    seen = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    result = await mcp_client.call_tool("survey", {"cities": ["Oslo", "Bergen"]}, progress=on_progress)
    assert result.text == "checked 2 cities"
    assert seen == ["checked Oslo", "checked Bergen"]


async def test_survey_can_be_cancelled(mcp_client: ClientSession, autojump_clock: Any) -> None:
    with trio.move_on_after(1.5) as scope:
        await mcp_client.call_tool("survey", {"cities": ["Oslo", "Bergen", "Tromsø"]})
    assert scope.cancelled_caught


async def test_book_trip_asks_who_travels(mcp_client: ClientSession) -> None:
    result = await mcp_client.call_tool("book_trip", {"city": "Oslo"})
    assert result.text == "booked Oslo for Ada"


async def test_report_and_prompt(mcp_client: ClientSession) -> None:
    assert (await mcp_client.read_resource("weather://Oslo")).text == "sunny in Oslo"
    prompt = await mcp_client.get_prompt("ask", {"city": "Oslo"})
    assert prompt.text == "What is the weather in Oslo?"
