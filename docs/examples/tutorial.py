"""The tutorial's server: typed tools, a resource template and a prompt, and a client of it."""

from typing import Annotated, TypedDict

import attrs
import trio

from mcp_ref import RequestContext, Server, ToolError
from mcp_ref.testing import memory_session_pair

server = Server("weather", "1.0")


@attrs.frozen
class Forecast:
    city: str
    celsius: float


@server.tool()
async def forecast(ctx: RequestContext, city: str, days: int = 1) -> Forecast:
    """Today's forecast for a city."""
    if days > 7:
        raise ToolError("at most 7 days ahead")  # an error result the model reads
    return Forecast(city=city, celsius=21.5)


class Extremes(TypedDict):
    coldest: str
    warmest: str


@server.tool()
async def extremes(ctx: RequestContext, cities: list[str]) -> Extremes:
    """The coldest and the warmest of some cities."""
    return {"coldest": min(cities), "warmest": max(cities)}


@server.resource_template("weather://{city}", mime_type="text/plain")
async def report(ctx: RequestContext, city: str) -> str:
    """The weather report of a city."""
    return f"sunny in {city}"


@server.prompt()
async def ask(ctx: RequestContext, city: Annotated[str, "the city to ask about"], style: str = "short") -> str:
    """Ask about the weather in a city."""
    return f"What is the weather in {city}? Answer in a {style} sentence."


async def main() -> None:
    print(server.tools["forecast"].input_schema)
    print(server.tools["forecast"].output_schema)
    async with memory_session_pair(server) as client:  # or open_stdio_client, open_http_client
        # each structured result is checked against its tool's output schema (the client
        # fetches the schemas with tools/list at its first call of a tool it has not listed)
        result = await client.call_tool("forecast", {"city": "Oslo"})
        print(result.structured_content, result.text)
        print((await client.call_tool("extremes", {"cities": ["Oslo", "Rome"]})).structured_content)
        refused = await client.call_tool("forecast", {"city": "Oslo", "days": 30})
        print(refused.is_error, refused.text)
        wrong = await client.call_tool("forecast", {"city": "Oslo", "days": "3"})
        print(wrong.is_error, wrong.text)
        print((await client.read_resource("weather://Oslo")).text)
        print([(a.name, a.required) for a in (await client.list_prompts()).prompts[0].arguments or []])
        print((await client.get_prompt("ask", {"city": "Oslo"})).text)


if __name__ == "__main__":
    trio.run(main)
