"""Protect a server with OAuth, and connect to it: the authorization guide's example.

Three parts in one process, each as it would be in its own: an authorization
server (the example one; in production yours: Keycloak, Auth0, Entra ID ...),
the MCP server checking each token with it by introspection, and a client
that gets a token by the client credentials grant (no browser).
"""

from functools import partial

import trio

from mcp_ref import (
    AuthorizationError,
    ClientCredentials,
    IntrospectionVerifier,
    OAuthClient,
    ProtectedResource,
    RequestContext,
    Server,
    open_http_client,
    serve_http,
)
from mcp_ref.examples.auth_server import AuthorizationServer, serve_auth_server

server = Server("notes", "1.0")


@server.tool()
async def whoami(ctx: RequestContext) -> str:
    """Who is calling, as the token says."""
    assert ctx.auth is not None  # every request on a protected endpoint has its verified token
    return f"{ctx.auth.subject} with scopes {sorted(ctx.auth.scopes)}"


async def main() -> None:
    async with trio.open_nursery() as nursery:
        # 1. the authorization server: it knows the MCP server (which may introspect tokens)
        #    and one service client
        authorization = AuthorizationServer(scopes_supported=["mcp"])
        authorization.add_resource_server("notes-server", "notes-server-secret")
        authorization.register_service("report-bot", "report-bot-secret")
        issuer = await nursery.start(partial(serve_auth_server, authorization))

        # 2. the MCP server: a token is valid when the authorization server says it is
        #    active, for this server (its audience), with the scope "mcp"
        verifier = IntrospectionVerifier(f"{issuer}/introspect", "notes-server", "notes-server-secret", issuer=issuer)
        auth = ProtectedResource(verifier=verifier, authorization_servers=[issuer], required_scopes=["mcp"])
        info = await nursery.start(partial(serve_http, server, auth=auth))

        # 3. a client: the first 401 starts discovery, then the grant, then the request again
        oauth = OAuthClient(grant=ClientCredentials(client_id="report-bot", client_secret="report-bot-secret"))
        async with open_http_client(info.url, auth=oauth) as client:
            print((await client.call_tool("whoami")).text)

        # a client the authorization server does not know gets no session
        stranger = OAuthClient(grant=ClientCredentials(client_id="report-bot", client_secret="wrong"))
        try:
            async with open_http_client(info.url, auth=stranger):
                pass
        except AuthorizationError as e:
            print(e.step, e.error)
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)
