"""A newcomer's MCP server: three tools, a resource template and a prompt."""

import sys

import attrs
import trio

from mcp_ref import RequestContext, Server

server = Server("weather", "1.0")


@attrs.frozen
class Forecast:
    city: str
    celsius: float


@server.tool()
async def forecast(ctx: RequestContext, city: str) -> Forecast:
    """Today's forecast for a city."""
    return Forecast(city=city, celsius=21.5)


@server.tool()
async def survey(ctx: RequestContext, cities: list[str]) -> str:
    """Check cities one by one, reporting progress; cancel it at any time."""
    for done, city in enumerate(cities, 1):
        await trio.sleep(1)
        await ctx.progress(done, len(cities), f"checked {city}")
    return f"checked {len(cities)} cities"


@server.tool()
async def book_trip(ctx: RequestContext, city: str) -> str:
    """Book a trip to a city, asking the user who travels."""
    answer = await ctx.elicit_form(f"Who travels to {city}?", {"name": {"type": "string"}})
    if answer.action != "accept" or answer.content is None:
        return "booking cancelled"
    return f"booked {city} for {answer.content['name']}"


@server.resource_template("weather://{city}", mime_type="text/plain")
async def report(ctx: RequestContext, city: str) -> str:
    """The weather report of a city."""
    return f"sunny in {city}"


@server.prompt()
async def ask(ctx: RequestContext, city: str) -> str:
    """Ask about the weather in a city."""
    return f"What is the weather in {city}?"


if __name__ == "__main__":
    server.run_http() if "--http" in sys.argv else server.run_stdio()
