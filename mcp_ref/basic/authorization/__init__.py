"""basic/authorization: OAuth 2.1 for MCP over HTTP, sans-IO (no trio, no sockets).

* :mod:`.resource_server` -- the MCP server as a resource server: metadata,
  bearer tokens, audience, scopes and challenges.
"""
