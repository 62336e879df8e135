"""Servers that the tests of more than one transport (our HTTP server, the ASGI bridge) drive."""

from typing import Any

from mcp_ref.session import RequestContext, Server
from mcp_ref.testing.transport_check import check_server


class Tally:
    """The transport check server with one more tool, ``tally``, that counts its calls: how many
    of a batch's calls were handled."""

    def __init__(self) -> None:
        self.calls = 0
        self.server: Server = check_server()

        @self.server.tool()
        async def tally(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            self.calls += 1
            return "counted"

    @staticmethod
    def batch(size: int) -> list[dict[str, Any]]:
        """A JSON-RPC batch of ``size`` calls of ``tally``, with the ids 0, 1, ..."""
        call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "tally"}}
        return [{**call, "id": i} for i in range(size)]
