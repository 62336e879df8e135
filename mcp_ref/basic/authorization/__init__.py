"""basic/authorization: the rules of the chapter, without I/O (no trio here).

Split by concern:

* :mod:`.metadata` -- the documents (RFC 9728, RFC 8414 / OpenID Connect
  discovery, RFC 7591, token and error responses) as typed objects.
* :mod:`.challenge` -- ``WWW-Authenticate``: read challenges, write Bearer ones.
* :mod:`.discovery` -- well-known URLs in the spec's order, the 2025-03-26
  fallbacks, canonical resource URIs, resource and issuer checks.
* :mod:`.pkce` -- PKCE S256 and ``state``.
* :mod:`.tokens` -- held tokens, token requests and client authentication.
* :mod:`.client` -- the client's choices: scope, registration, the
  authorization request and the checks on its response.
* :mod:`.resource_server` -- the MCP server as a resource server: metadata,
  bearer tokens, audience, scopes and challenges.
* :mod:`.verification` -- what a token means to the resource server: RFC 7662
  introspection answers, JWT access tokens (the ``auth-jwt`` extra), a short
  cache; their drivers are :mod:`mcp_ref.basic.transports.token_verifiers`.

The trio drivers: :mod:`mcp_ref.basic.transports.http_fetch` (one HTTP
exchange with size and time limits) and
:mod:`mcp_ref.basic.transports.oauth_client` (the client flows, storage, the
loopback callback listener).
"""

from .challenge import BearerChallenge, Challenge, bearer_challenge, format_bearer_challenge, parse_challenges
from .client import (
    OFFLINE_ACCESS,
    AuthorizationDenied,
    AuthorizationResponse,
    authorization_request_url,
    check_authorization_response,
    check_cimd_url,
    check_redirect_uri,
    choose_registration,
    client_id_metadata_document,
    parse_authorization_response,
    select_scope,
    step_up_scope,
)
from .discovery import (
    authorization_server_metadata_urls,
    canonical_resource,
    issuer_matches,
    legacy_endpoints,
    legacy_metadata_url,
    protected_resource_metadata_urls,
    resource_allowed,
    same_origin,
)
from .metadata import (
    AuthorizationServerMetadata,
    ClientInformation,
    ClientMetadata,
    InvalidMetadata,
    OAuthErrorResponse,
    ProtectedResourceMetadata,
    TokenResponse,
    is_loopback_url,
)
from .pkce import PKCE, new_state, s256_challenge, supports_s256
from .resource_server import AccessToken, AuthRefused, InvalidToken, ProtectedResource, TokenVerifier
from .tokens import TokenRequest, Tokens, choose_auth_method, client_assertion_claims, token_request

__all__ = [
    "AccessToken",
    "AuthRefused",
    "InvalidToken",
    "ProtectedResource",
    "TokenVerifier",
    "OFFLINE_ACCESS",
    "PKCE",
    "AuthorizationDenied",
    "AuthorizationResponse",
    "AuthorizationServerMetadata",
    "BearerChallenge",
    "Challenge",
    "ClientInformation",
    "ClientMetadata",
    "InvalidMetadata",
    "OAuthErrorResponse",
    "ProtectedResourceMetadata",
    "TokenRequest",
    "TokenResponse",
    "Tokens",
    "authorization_request_url",
    "authorization_server_metadata_urls",
    "bearer_challenge",
    "canonical_resource",
    "check_authorization_response",
    "check_cimd_url",
    "check_redirect_uri",
    "choose_auth_method",
    "choose_registration",
    "client_assertion_claims",
    "client_id_metadata_document",
    "format_bearer_challenge",
    "is_loopback_url",
    "issuer_matches",
    "legacy_endpoints",
    "legacy_metadata_url",
    "new_state",
    "parse_authorization_response",
    "parse_challenges",
    "protected_resource_metadata_urls",
    "resource_allowed",
    "s256_challenge",
    "same_origin",
    "select_scope",
    "step_up_scope",
    "supports_s256",
    "token_request",
]
