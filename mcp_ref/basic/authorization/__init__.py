"""basic/authorization: OAuth 2.1 for MCP over HTTP, sans-IO (no trio, no sockets).

* :mod:`.resource_server` -- the MCP server as a resource server: metadata,
  bearer tokens, audience, scopes and challenges.
* :mod:`.tokens` -- what a token means: RFC 7662 introspection answers, JWT
  access tokens (the ``auth-jwt`` extra), a short cache. Their I/O drivers
  are :mod:`mcp_ref.basic.transports.token_verifiers`.
"""
