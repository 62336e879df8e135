"""A client for the official conformance suite's client scenarios.

    python -m mcp_ref.examples.conformance_client URL

The suite passes the server URL as the last argument, names the scenario in
``MCP_CONFORMANCE_SCENARIO`` and, for some, gives credentials in
``MCP_CONFORMANCE_CONTEXT`` (JSON). The client does what any scenario asks
of a well-behaved client: open in the revision the server speaks
(``server/discover`` first, 2026-07-28, else initialize), list the tools, call
each one with arguments made from its input schema (or the calls the
scenario's context names), read a resource and get a prompt where there are
some, accept elicitations with the form's defaults (SEP-1034, in a 2025
session and as 2026-07-28 input requests alike), and shut down cleanly. Streamable HTTP details
-- SSE answers, ``retry`` and ``Last-Event-ID`` resumption -- are the
transport's; authorization (the ``auth/`` scenarios) is :class:`OAuthClient`'s:

* the authorization code flow, with a "browser" that follows the
  authorization endpoint's redirect itself (the suite's authorization
  server approves at once) and a Client ID Metadata Document URL the suite
  knows, used where the server takes them;
* ``auth/pre-registration``: the client id and secret from the context;
* ``auth/client-credentials-*``: the client_credentials grant, with a
  secret or a private key (private_key_jwt);
* ``auth/cross-app-access-complete-flow``: the ID token exchanged at the
  identity provider, then the JWT bearer grant.
"""

import json
import logging
import os
import sys
from typing import Any

import trio

from mcp_ref import (
    ClientCredentials,
    ClientInformation,
    CrossAppAccess,
    MCPError,
    OAuthClient,
    form_defaults,
    open_http_client,
)
from mcp_ref.schema import ElicitRequestFormParams, ElicitResult
from mcp_ref.testing.oauth import HeadlessBrowser

__all__ = ["main", "arguments_for", "auth_for"]

log = logging.getLogger("mcp_ref.conformance_client")

#: the client id metadata document URL the suite's authorization servers accept (not fetched)
CIMD_URL = "https://conformance-test.local/client-metadata.json"
#: where the suite's authorization endpoint sends the browser back (nothing listens: the
#: headless browser reads the redirect instead of following it)
REDIRECT_URI = "http://localhost:3000/callback"


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


def auth_for(scenario: str, context: dict[str, Any]) -> OAuthClient | None:
    """The authorization a scenario asks for, from its name and context (None: none)."""
    if not scenario.startswith("auth/"):
        return None
    if scenario.startswith("auth/client-credentials"):
        return OAuthClient(
            grant=ClientCredentials(
                client_id=context["client_id"],
                client_secret=context.get("client_secret"),
                private_key=context.get("private_key_pem"),
                signing_algorithm=context.get("signing_algorithm") or "ES256",
            )
        )
    if scenario == "auth/cross-app-access-complete-flow":
        return OAuthClient(
            grant=CrossAppAccess(
                idp_token_endpoint=context["idp_token_endpoint"],
                id_token=context["idp_id_token"],
                idp_client_id=context["idp_client_id"],
                client_id=context["client_id"],
                client_secret=context.get("client_secret"),
            )
        )
    browser = HeadlessBrowser()
    pre = None
    if "client_id" in context:
        pre = ClientInformation(
            client_id=context["client_id"], client_secret=context.get("client_secret"), redirect_uris=(REDIRECT_URI,)
        )
    return OAuthClient(
        client_name="mcp_ref conformance client",
        redirect_uri=REDIRECT_URI,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
        client_id_metadata_url=CIMD_URL,
        client_information=pre,
        timeout=10,
        authorization_timeout=20,
    )


async def run(url: str, scenario: str, context: dict[str, Any]) -> None:
    auth = auth_for(scenario, context)
    async with open_http_client(url, auth=auth, elicitation=accept_with_defaults, initialize_timeout=30) as client:
        log.info(
            "scenario %s: connected to %s, protocol %s", scenario, client.server_info.name, client.protocol_version
        )
        if scenario == "initialize":
            return
        tools = await client.list_all_tools() if client.server_capabilities.tools is not None else []
        # the calls the scenario names (with their arguments), else every tool with made-up ones
        planned = context.get("toolCalls")
        calls = (
            [(c["name"], c.get("arguments") or {}) for c in planned]
            if isinstance(planned, list)
            else [(tool.name, arguments_for(tool.input_schema)) for tool in tools]
        )
        if scenario == "json-schema-2020-12-preservation":
            # the scenario reads back, through its echo tool, the input schema of its focal tool as
            # this client holds it: every 2020-12 keyword is kept as the server sent it
            focal = {tool.name: tool.input_schema for tool in tools}.get("json_schema_2020_12_tool")
            calls = [("json_schema_echo", {"schema": focal})] if focal is not None else calls
        for name, arguments in calls:
            try:
                result = await client.call_tool(name, arguments, timeout=30)
                log.info("%s -> %s", name, [getattr(b, "text", b) for b in result.content])
            except MCPError as e:
                log.warning("%s failed: %s", name, e)
                if scenario.startswith("auth/"):
                    raise  # (an authorization scenario's call must succeed)
        if client.server_capabilities.resources is not None and not scenario.startswith("auth/"):
            for resource in (await client.list_resources()).resources[:1]:
                await client.read_resource(resource.uri)
        if client.server_capabilities.prompts is not None and not scenario.startswith("auth/"):
            for prompt in (await client.list_prompts()).prompts[:1]:
                await client.get_prompt(prompt.name, {a.name: "test" for a in prompt.arguments or [] if a.required})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m mcp_ref.examples.conformance_client URL", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    trio.run(run, args[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
