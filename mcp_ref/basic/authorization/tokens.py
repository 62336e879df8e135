"""Tokens a client holds, and the requests it makes to a token endpoint.

* :class:`Tokens` -- what a token response gave, with the absolute time its
  access token expires; :meth:`Tokens.due` says when to refresh.
* :func:`token_request` -- the form body and headers of a token request,
  with the client authenticated as the server allows
  (:func:`choose_auth_method`): ``client_secret_basic`` (RFC 6749 section
  2.3.1: each part form-encoded, then Base64; ``client_id`` in the body
  too), ``client_secret_post``,
  ``none`` (a public client sends only its ``client_id``) or
  ``private_key_jwt`` (RFC 7523 section 2.2; the assertion's claims are
  :func:`client_assertion_claims`, signing is the driver's).
* The grants: authorization code (with the PKCE verifier and RFC 8707
  ``resource``, authorization#46, #74), refresh token, client credentials,
  token exchange (RFC 8693) and JWT bearer (RFC 7523 section 2.1).
"""

import base64
import secrets
from collections.abc import Mapping
from typing import Any, Self
from urllib.parse import quote, urlencode

import attrs

from .metadata import AuthorizationServerMetadata, ClientInformation, TokenResponse

__all__ = [
    "Tokens",
    "TokenRequest",
    "token_request",
    "choose_auth_method",
    "header_safe_problem",
    "basic_authorization",
    "client_assertion_claims",
    "GRANT_AUTHORIZATION_CODE",
    "GRANT_REFRESH_TOKEN",
    "GRANT_CLIENT_CREDENTIALS",
    "GRANT_TOKEN_EXCHANGE",
    "GRANT_JWT_BEARER",
    "CLIENT_ASSERTION_TYPE_JWT",
    "TOKEN_TYPE_ID_TOKEN",
    "TOKEN_TYPE_ID_JAG",
    "UnsupportedAuthMethod",
]

GRANT_AUTHORIZATION_CODE = "authorization_code"
GRANT_REFRESH_TOKEN = "refresh_token"
GRANT_CLIENT_CREDENTIALS = "client_credentials"
GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLIENT_ASSERTION_TYPE_JWT = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
#: the Identity Assertion JWT Authorization Grant of the cross-app access extension (SEP-990)
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


class UnsupportedAuthMethod(ValueError):
    """The server accepts no token endpoint authentication this client can do."""


@attrs.frozen(kw_only=True)
class Tokens:
    """An access token and what came with it; ``expires_at`` is seconds since the epoch (or None)."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    scope: str | None = None
    expires_at: float | None = None

    @classmethod
    def from_response(cls, response: TokenResponse, now: float, previous: "Tokens | None" = None) -> Self:
        """The tokens a response gives at ``now``.

        A refresh response without a new refresh token leaves the old one in
        force (RFC 6749 section 6); one with a new token replaces it: the old
        one is dropped (rotation, authorization#78). Without ``scope`` the
        granted scope is the one requested (section 5.1), kept from before.
        """
        refresh = response.refresh_token
        if refresh is None and previous is not None:
            refresh = previous.refresh_token
        return cls(
            access_token=response.access_token,
            token_type=response.token_type,
            refresh_token=refresh,
            scope=response.scope if response.scope is not None else (previous.scope if previous else None),
            expires_at=None if response.expires_in is None else now + response.expires_in,
        )

    def due(self, now: float, margin: float = 60.0) -> bool:
        """Whether the access token has expired, or will within ``margin`` seconds (refresh it first)."""
        return self.expires_at is not None and now >= self.expires_at - margin

    def scopes(self) -> tuple[str, ...]:
        return tuple(self.scope.split()) if self.scope else ()

    def authorization(self) -> str:
        """[basic/authorization#54] the ``Authorization`` header value."""
        return f"Bearer {self.access_token}"

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in attrs.asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        if not isinstance(data.get("access_token"), str):
            raise ValueError("stored tokens: access_token missing")
        names = {f.name for f in attrs.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def header_safe_problem(token: str) -> str | None:
    """Why ``token`` cannot be sent as ``Authorization: Bearer <token>``, without quoting it; None: it can.

    RFC 6750 section 2.1 writes a bearer token in the header as b64token; tokens outside it
    exist, so only what no header may carry is refused: anything but visible ASCII (a space,
    CR or LF -- which would end the header and start another --, controls, non-ASCII).
    """
    if not token:
        return "is empty"
    for position, char in enumerate(token):
        if not "!" <= char <= "~":
            name = {"\r": "CR", "\n": "LF", " ": "a space", "\t": "a tab"}.get(char, f"U+{ord(char):04X}")
            return f"holds {name} at position {position}, which no HTTP header may carry"
    return None


def choose_auth_method(metadata: AuthorizationServerMetadata | None, client: ClientInformation) -> str:
    """How this client authenticates at the token endpoint.

    The method registration settled on wins when the server still lists it;
    otherwise a client with a secret prefers ``client_secret_basic`` over
    ``client_secret_post``, and a client without one uses ``none``. Where the
    server does not list its methods (or has no metadata, 2025-03-26), RFC
    8414's default ``client_secret_basic`` stands for a client with a
    secret; a public client has nothing to present but its id. Raises
    :class:`UnsupportedAuthMethod` when no method fits.
    """
    listed = metadata.token_endpoint_auth_methods_supported if metadata is not None else None
    supported = listed if listed is not None else ("client_secret_basic", "none")
    candidates = ("client_secret_basic", "client_secret_post") if client.client_secret else ("none",)
    registered = client.token_endpoint_auth_method
    if registered is not None and (registered in supported or listed is None):
        if registered.startswith("client_secret_") and client.client_secret is None:
            raise UnsupportedAuthMethod(f"registered for {registered} but no client_secret was given")
        return registered
    for method in candidates:
        if method in supported:
            return method
    raise UnsupportedAuthMethod(
        f"the token endpoint takes {', '.join(supported)}; this client can do {', '.join(candidates)}"
    )


def basic_authorization(client_id: str, client_secret: str) -> str:
    """RFC 6749 section 2.3.1: ``Basic`` over the form-encoded id and secret."""
    raw = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


def client_assertion_claims(client_id: str, audience: str, now: float, lifetime: float = 300.0) -> dict[str, Any]:
    """RFC 7523 section 3: the claims of a ``private_key_jwt`` assertion.

    Issuer and subject are the client; the audience is the authorization
    server's issuer identifier; a fresh ``jti`` so it cannot be replayed.
    """
    return {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": int(now),
        "exp": int(now + lifetime),
        "jti": secrets.token_urlsafe(16),
    }


@attrs.frozen
class TokenRequest:
    """A token endpoint request, ready to POST as ``application/x-www-form-urlencoded``."""

    url: str
    form: dict[str, str]
    headers: dict[str, str] = attrs.field(factory=dict)

    def body(self) -> bytes:
        return urlencode(self.form).encode("ascii")


def token_request(
    url: str,
    grant_type: str,
    params: Mapping[str, str | None],
    *,
    client: ClientInformation | None,
    auth_method: str | None,
    client_assertion: str | None = None,
) -> TokenRequest:
    """The request for ``grant_type`` with ``params`` (None values left out), the client authenticated.

    ``auth_method`` None sends no client authentication at all (a grant
    whose assertion is the client's proof, or no client).
    """
    form = {"grant_type": grant_type, **{k: v for k, v in params.items() if v is not None}}
    headers: dict[str, str] = {}
    if client is not None and auth_method is not None:
        if auth_method == "client_secret_basic":
            if client.client_secret is None:
                raise UnsupportedAuthMethod("client_secret_basic needs a client_secret")
            headers["authorization"] = basic_authorization(client.client_id, client.client_secret)
            # (the id in the body as well: RFC 6749 section 3.2.1 lets a client name itself there,
            # it is no second authentication method, and some servers look for it -- the SDK's)
            form["client_id"] = client.client_id
        elif auth_method == "client_secret_post":
            if client.client_secret is None:
                raise UnsupportedAuthMethod("client_secret_post needs a client_secret")
            form["client_id"] = client.client_id
            form["client_secret"] = client.client_secret
        elif auth_method == "none":
            form["client_id"] = client.client_id
        elif auth_method == "private_key_jwt":
            if client_assertion is None:
                raise UnsupportedAuthMethod("private_key_jwt needs a signed client assertion")
            form["client_id"] = client.client_id
            form["client_assertion_type"] = CLIENT_ASSERTION_TYPE_JWT
            form["client_assertion"] = client_assertion
        else:
            raise UnsupportedAuthMethod(f"unknown token endpoint authentication method {auth_method!r}")
    return TokenRequest(url, form, headers)
