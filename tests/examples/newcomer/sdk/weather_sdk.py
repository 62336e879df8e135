"""The same app on the official Python SDK's high-level server (mcp 2.3.0)."""

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

mcp = MCPServer("weather")


class Forecast(BaseModel):
    city: str
    celsius: float


class Traveller(BaseModel):
    name: str


@mcp.tool()
async def forecast(city: str) -> Forecast:
    """Today's forecast for a city."""
    return Forecast(city=city, celsius=21.5)


@mcp.tool()
async def survey(cities: list[str], ctx: Context) -> str:
    """Check cities one by one, reporting progress; cancel it at any time."""
    for done, city in enumerate(cities, 1):
        await anyio.sleep(1)
        await ctx.report_progress(done, len(cities), f"checked {city}")
    return f"checked {len(cities)} cities"


@mcp.tool()
async def book_trip(city: str, ctx: Context) -> str:
    """Book a trip to a city, asking the user who travels."""
    answer = await ctx.elicit(f"Who travels to {city}?", schema=Traveller)
    if answer.action != "accept":
        return "booking cancelled"
    return f"booked {city} for {answer.data.name}"


@mcp.resource("weather://{city}", mime_type="text/plain")
async def report(city: str) -> str:
    """The weather report of a city."""
    return f"sunny in {city}"


@mcp.prompt()
async def ask(city: str) -> str:
    """Ask about the weather in a city."""
    return f"What is the weather in {city}?"


if __name__ == "__main__":
    mcp.run("streamable-http") if "--http" in sys.argv else mcp.run()
