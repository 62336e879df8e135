"""The newcomer's tests of weather_sdk.py, with the SDK's in-process Client."""

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult, TextContent
from weather_sdk import mcp

pytestmark = pytest.mark.anyio


async def traveller(context: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


async def test_forecast_is_structured() -> None:
    async with Client(mcp) as client:
        result = await client.call_tool("forecast", {"city": "Oslo"})
    assert result.structured_content == {"city": "Oslo", "celsius": 21.5}


async def test_survey_reports_progress() -> None:
    seen = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    async with Client(mcp) as client:
        result = await client.call_tool("survey", {"cities": ["Oslo", "Bergen"]}, progress_callback=on_progress)
    assert isinstance(result.content[0], TextContent)
    assert result.content[0].text == "checked 2 cities"
    assert seen == ["checked Oslo", "checked Bergen"]


async def test_survey_can_be_cancelled() -> None:
    async with Client(mcp) as client:
        with anyio.move_on_after(1.5) as scope:
            await client.call_tool("survey", {"cities": ["Oslo", "Bergen", "Tromsø"]})
    assert scope.cancelled_caught


async def test_book_trip_asks_who_travels() -> None:
    async with Client(mcp, elicitation_callback=traveller, mode="legacy") as client:
        result = await client.call_tool("book_trip", {"city": "Oslo"})
    assert isinstance(result.content[0], TextContent)
    assert result.content[0].text == "booked Oslo for Ada"


async def test_report_and_prompt() -> None:
    async with Client(mcp) as client:
        report = await client.read_resource("weather://Oslo")
        prompt = await client.get_prompt("ask", {"city": "Oslo"})
    assert report.contents[0].text == "sunny in Oslo"  # type: ignore[union-attr]
    assert prompt.messages[0].content.text == "What is the weather in Oslo?"  # type: ignore[union-attr]
