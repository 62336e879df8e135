"""A client for the official conformance suite's client scenarios.

    python -m mcp_ref.examples.conformance_client URL

The suite passes the server URL as the last argument and names the scenario
in ``MCP_CONFORMANCE_SCENARIO``. The client does what any scenario asks of a
well-behaved client: initialize, list the tools, call each one with arguments
made from its input schema, accept elicitations with the form's defaults
(SEP-1034), and shut down cleanly (DELETE). Streamable HTTP details -- SSE
answers, ``retry`` and ``Last-Event-ID`` resumption -- are the transport's.
"""

import logging
import os
import sys
from typing import Any

import trio

from mcp_ref.client.elicitation import form_defaults
from mcp_ref.errors import MCPError
from mcp_ref.schema.elicitation import ElicitRequestFormParams, ElicitResult
from mcp_ref.session.http import open_http_client

__all__ = ["main", "arguments_for"]

log = logging.getLogger("mcp_ref.conformance_client")


def arguments_for(schema: dict[str, Any]) -> dict[str, Any]:
    """Plausible arguments for a tool: every required property gets a value of its type."""
    samples = {"number": 5, "integer": 3, "string": "test", "boolean": True, "array": [], "object": {}}
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = props.get(name, {})
        if "default" in prop:
            out[name] = prop["default"]
        elif prop.get("enum"):
            out[name] = prop["enum"][0]
        else:
            out[name] = samples.get(prop.get("type", "string"), "test")
    return out


async def accept_with_defaults(ctx: Any, params: Any) -> ElicitResult:
    if isinstance(params, ElicitRequestFormParams):
        # [client/elicitation#11] pre-populate with the schema's defaults
        return ElicitResult(action="accept", content=form_defaults(params.requested_schema))
    return ElicitResult(action="decline")


async def run(url: str, scenario: str) -> None:
    async with open_http_client(url, elicitation=accept_with_defaults, initialize_timeout=30) as client:
        log.info(
            "scenario %s: connected to %s, protocol %s", scenario, client.server_info.name, client.protocol_version
        )
        if scenario == "initialize":
            return
        tools = await client.list_all_tools() if client.server_capabilities.tools is not None else []
        for tool in tools:
            try:
                result = await client.call_tool(tool.name, arguments_for(tool.input_schema), timeout=30)
                log.info("%s -> %s", tool.name, [getattr(b, "text", b) for b in result.content])
            except MCPError as e:
                log.warning("%s failed: %s", tool.name, e)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m mcp_ref.examples.conformance_client URL", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    trio.run(run, args[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
