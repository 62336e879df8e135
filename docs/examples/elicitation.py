"""The elicitation guide: a tool that asks the user, and the client callback that answers."""

from typing import Any

import trio

from mcp_ref import RequestContext, Server
from mcp_ref.schema import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
from mcp_ref.testing import memory_session_pair

server = Server("travel", "1.0")


@server.tool()
async def book_trip(ctx: RequestContext, *, city: str) -> str:
    """Book a trip to a city, asking the user who travels."""
    if not ctx.can_elicit():  # the client did not declare elicitation: do without
        return f"booked {city} for the account holder"
    answer = await ctx.elicit_form(
        f"Who travels to {city}?",
        {"name": {"type": "string"}, "nights": {"type": "integer", "minimum": 1, "default": 2}},
    )  # required: the fields without a default
    if answer.action != "accept" or answer.content is None:
        return f"not booked: the user chose {answer.action}"  # "decline" or "cancel"
    return f"booked {city} for {answer.content['name']}, {answer.content.get('nights', 2)} nights"


# the client side: one callback for every elicitation/create, in the order (ctx, params)
async def ask_the_user(ctx: Any, params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
    assert isinstance(params, ElicitRequestFormParams)  # only the form mode was declared (the default)
    print("asked:", params.message, sorted(params.requested_schema.properties))
    if "Rome" in params.message:
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content={"name": "Ada", "nights": 3})


async def main() -> None:
    async with memory_session_pair(server, elicitation=ask_the_user) as client:
        print((await client.call_tool("book_trip", {"city": "Oslo"})).text)
        print((await client.call_tool("book_trip", {"city": "Rome"})).text)
    async with memory_session_pair(server) as client:  # no callback: elicitation not declared
        print((await client.call_tool("book_trip", {"city": "Oslo"})).text)


if __name__ == "__main__":
    trio.run(main)
