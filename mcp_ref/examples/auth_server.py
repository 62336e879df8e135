"""An OAuth 2.1 authorization server for demos and tests: in memory, loopback only.

    python -m mcp_ref.examples.auth_server --port 9000
    python -m mcp_ref.examples.everything --http --auth http://127.0.0.1:9000

What it offers (RFC 8414 metadata at ``/.well-known/oauth-authorization-server``):

* clients: Dynamic Client Registration (RFC 7591, ``POST /register``),
  Client ID Metadata Documents (an ``https`` URL as ``client_id``, fetched and
  checked), and pre-registered ones (:meth:`AuthorizationServer.register`);
* ``GET /authorize``: the authorization code grant with PKCE (S256 only),
  exact redirect URIs, ``state`` echoed, ``iss`` in the response (RFC 9207)
  and the ``resource`` the token is for (RFC 8707). Consent is a function:
  the default approves at once as user ``demo-user``; tests script it;
* ``POST /token``: ``authorization_code`` and ``refresh_token`` (a new refresh
  token each time; a refresh token used twice revokes its whole family);
  client authentication ``none``, ``client_secret_basic`` or ``client_secret_post``;
* ``client_credentials`` (RFC 6749 section 4.4) for confidential clients
  registered for it (``--client ID:SECRET``, :meth:`AuthorizationServer.register_service`):
  either secret method, the scope and the ``resource`` checked as for a code,
  the client itself as the token's subject, and no refresh token;
* ``POST /introspect`` (RFC 7662) for resource servers holding credentials
  (:meth:`AuthorizationServer.add_resource_server`);
* with ``--jwt``, JWT access tokens (RFC 9068, ES256) and their keys at ``/jwks``.

It is an example: readable rather than complete. No persistence, no login, no
user interface beyond the consent function. It is not an implementation of
an authorization server to deploy.
"""

import argparse
import base64
import hashlib
import ipaddress
import json
import logging
import secrets
import signal
import ssl
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import attrs
import h11
import trio

__all__ = [
    "AuthorizationServer",
    "ConsentRequest",
    "auto_approve",
    "fetch_metadata_document",
    "serve_auth_server",
    "main",
]

log = logging.getLogger("mcp_ref.examples.auth_server")

#: what a Client ID Metadata Document may weigh, and how long fetching it may take
CIMD_MAX_BYTES = 5 * 1024
CIMD_TIMEOUT = 5.0


@attrs.frozen(kw_only=True)
class ConsentRequest:
    """What the user is asked to approve (the consent function decides)."""

    client_id: str
    client_name: str | None
    #: shown to the user: where the code will go ([basic/authorization#99])
    redirect_host: str
    #: [basic/authorization#97] only loopback redirect URIs: anyone on this machine could be that client
    loopback_only: bool
    scope: tuple[str, ...]
    resource: str


#: returns the approving user's id (the token's ``sub``), or None to deny
Consent = Callable[[ConsentRequest], Awaitable[str | None]]


async def auto_approve(request: ConsentRequest) -> str | None:
    """The demo consent: approve at once, as ``demo-user``, saying what was approved."""
    warning = " (loopback redirect only: any local program could be this client)" if request.loopback_only else ""
    log.info(
        "consent: %s (%s) gets %r for %s, code to %s%s",
        request.client_name or "unnamed client",
        request.client_id,
        " ".join(request.scope),
        request.resource,
        request.redirect_host,
        warning,
    )
    return "demo-user"


@attrs.define(kw_only=True)
class Client:
    client_id: str
    client_secret: str | None
    redirect_uris: tuple[str, ...]
    auth_method: str
    name: str | None = None
    #: the token endpoint authentication methods it may use (empty: ``auth_method`` only)
    auth_methods: tuple[str, ...] = ()
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    #: a Client ID Metadata Document, and until when its copy may be used
    metadata_document: bool = False
    fetched_until: float = 0.0


@attrs.define(kw_only=True)
class Code:
    client_id: str
    redirect_uri: str
    challenge: str
    subject: str
    scope: tuple[str, ...]
    resource: str
    expires_at: float
    #: tokens issued for it (revoked if the code is presented again)
    family: str
    used: bool = False


@attrs.define(kw_only=True)
class Token:
    kind: str  # "access" or "refresh"
    client_id: str
    subject: str
    scope: tuple[str, ...]
    resource: str
    expires_at: float
    issued_at: float
    #: every token descending from one authorization
    family: str
    #: a refresh token already exchanged (kept until it expires, to notice a replay)
    spent: bool = False


class OAuthError(Exception):
    """An error answer of the token, registration or introspection endpoint (RFC 6749 section 5.2)."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status


class AuthorizationServer:
    """The server's state and endpoints; :func:`serve_auth_server` puts it on a socket.

    ``issuer`` is its URL (known once bound when not given). ``resources``: the
    resources (MCP servers) tokens may be issued for; None accepts any
    ``resource`` a client names. ``fetch`` gets a Client ID Metadata Document:
    ``async fetch(url) -> (status, headers, body)`` (:func:`fetch_metadata_document`
    keeps to public addresses); None turns that feature off.
    ``clock`` gives seconds since the epoch (tests move it). ``jwt_access_tokens``:
    access tokens are JWTs (RFC 9068, ES256, keys at ``/jwks``; needs the
    ``auth-jwt`` extra) instead of opaque strings; introspection works for both.
    """

    def __init__(
        self,
        issuer: str | None = None,
        *,
        consent: Consent = auto_approve,
        resources: Sequence[str] | None = None,
        scopes_supported: Sequence[str] = ("mcp",),
        access_token_ttl: int = 300,
        refresh_token_ttl: int = 86_400,
        fetch: Callable[[str], Awaitable[tuple[int, Mapping[str, str], bytes]]] | None = None,
        clock: Callable[[], float] = time.time,
        jwt_access_tokens: bool = False,
    ) -> None:
        self.issuer = issuer
        self.consent = consent
        self.resources = tuple(resources) if resources is not None else None
        self.scopes_supported = tuple(scopes_supported)
        self.access_token_ttl = access_token_ttl
        self.refresh_token_ttl = refresh_token_ttl
        self.fetch = fetch
        self.clock = clock
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, Code] = {}
        self.tokens: dict[str, Token] = {}
        #: families revoked because a code or a refresh token was replayed
        self.revoked_families: set[str] = set()
        #: resource servers allowed to introspect: id -> secret
        self.resource_servers: dict[str, str] = {}
        #: the key JWT access tokens are signed with
        self.signing_key: Any = _new_signing_key() if jwt_access_tokens else None
        self.key_id = secrets.token_hex(4)

    # -- set-up ---------------------------------------------------------------------------------

    def register(
        self,
        redirect_uris: Sequence[str],
        *,
        auth_method: str = "none",
        client_id: str | None = None,
        name: str | None = None,
    ) -> Client:
        """A pre-registered client (also what ``POST /register`` ends in)."""
        if auth_method not in ("none", "client_secret_basic", "client_secret_post"):
            raise OAuthError("invalid_client_metadata", f"token_endpoint_auth_method {auth_method!r} not supported")
        if not redirect_uris or any(not _redirect_uri_allowed(u) for u in redirect_uris):
            # [basic/authorization#81] redirect URIs are https or loopback
            raise OAuthError("invalid_redirect_uri", "redirect URIs must be https, or http on a loopback host")
        client = Client(
            client_id=client_id or "client-" + secrets.token_urlsafe(12),
            client_secret=None if auth_method == "none" else secrets.token_urlsafe(32),
            redirect_uris=tuple(redirect_uris),
            auth_method=auth_method,
            name=name,
        )
        self.clients[client.client_id] = client
        return client

    def register_service(self, client_id: str, client_secret: str, *, name: str | None = None) -> Client:
        """A pre-registered confidential client for the ``client_credentials`` grant (RFC 6749 section 4.4).

        It acts on its own behalf (no user, no redirect URI: the authorization
        code grant is not its), and authenticates with ``client_secret_basic``
        or ``client_secret_post`` (RFC 6749 section 2.3.1).
        """
        if not client_id or not client_secret:
            raise ValueError("a client_credentials client needs an id and a secret")
        client = Client(
            client_id=client_id,
            client_secret=client_secret,
            redirect_uris=(),
            auth_method="client_secret_basic",
            auth_methods=("client_secret_basic", "client_secret_post"),
            grant_types=("client_credentials",),
            name=name,
        )
        self.clients[client_id] = client
        return client

    def add_resource_server(self, client_id: str, secret: str | None = None) -> str:
        """Let a resource server introspect tokens with HTTP Basic ``client_id:secret``; returns the secret."""
        self.resource_servers[client_id] = secret = secret or secrets.token_urlsafe(32)
        return secret

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 Authorization Server Metadata ([basic/authorization#10])."""
        issuer = self._issuer()
        return {
            "issuer": issuer,
            "authorization_endpoint": issuer + "/authorize",
            "token_endpoint": issuer + "/token",
            "registration_endpoint": issuer + "/register",
            "introspection_endpoint": issuer + "/introspect",
            "scopes_supported": list(self.scopes_supported),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "introspection_endpoint_auth_methods_supported": ["client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
            # [2026-07-28:basic/authorization/index#24] iss is in every authorization response: said so
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": self.fetch is not None,
            **({"jwks_uri": issuer + "/jwks"} if self.signing_key is not None else {}),
        }

    def jwks(self) -> dict[str, Any]:
        """The public keys JWT access tokens are signed with (a JWK Set)."""
        if self.signing_key is None:
            return {"keys": []}
        from jwt.algorithms import ECAlgorithm

        jwk = ECAlgorithm.to_jwk(self.signing_key.public_key(), as_dict=True)
        return {"keys": [{**jwk, "kid": self.key_id, "use": "sig", "alg": "ES256"}]}

    def _issuer(self) -> str:
        if self.issuer is None:
            raise RuntimeError("the issuer URL is not known yet (it is set when the server binds)")
        return self.issuer

    # -- POST /register (RFC 7591) --------------------------------------------------------------

    def register_endpoint(self, body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            request = json.loads(body)
        except ValueError:
            raise OAuthError("invalid_client_metadata", "the body is not JSON") from None
        if not isinstance(request, dict):
            raise OAuthError("invalid_client_metadata", "the body is not a JSON object")
        uris = request.get("redirect_uris")
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise OAuthError("invalid_redirect_uri", "redirect_uris is a list of URIs")
        grants = request.get("grant_types", ["authorization_code"])
        if not isinstance(grants, list) or not set(grants) <= {"authorization_code", "refresh_token"}:
            raise OAuthError("invalid_client_metadata", "grant_types: authorization_code and refresh_token only")
        name = request.get("client_name")
        client = self.register(
            uris,
            auth_method=str(request.get("token_endpoint_auth_method", "client_secret_basic")),
            name=name if isinstance(name, str) else None,
        )
        answer = {
            **{k: v for k, v in request.items() if k in ("client_name", "scope", "client_uri", "logo_uri")},
            "client_id": client.client_id,
            "client_id_issued_at": int(self.clock()),
            "redirect_uris": list(client.redirect_uris),
            "token_endpoint_auth_method": client.auth_method,
            "grant_types": grants,
            "response_types": ["code"],
        }
        if client.client_secret is not None:
            answer |= {"client_secret": client.client_secret, "client_secret_expires_at": 0}
        return 201, answer

    # -- GET /authorize --------------------------------------------------------------------------

    async def authorize_endpoint(self, query: Mapping[str, str]) -> tuple[int, str]:
        """The answer to an authorization request: (302, where to) or (400, why not)."""
        client = await self._client(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        if client is None or redirect_uri not in client.redirect_uris:
            # [basic/authorization#37, #90, #92] an unknown client or a redirect URI not registered
            # exactly: an error page here, never a redirect to an unchecked URI
            return 400, "unknown client, or a redirect_uri not registered for it"

        def back(**params: str) -> tuple[int, str]:
            # [2026-07-28:basic/authorization/index#23] RFC 9207: which server answered, errors included
            params = {**params, "iss": self._issuer()}
            if "state" in query:
                params["state"] = query["state"]
            return 302, redirect_uri + ("&" if "?" in redirect_uri else "?") + urlencode(params)

        if query.get("response_type") != "code":
            return back(error="unsupported_response_type", error_description="only response_type=code")
        if "code_challenge" not in query or query.get("code_challenge_method") != "S256":
            # OAuth 2.1 section 4.1.1: PKCE is required; plain is not offered
            return back(error="invalid_request", error_description="PKCE with code_challenge_method=S256 is required")
        resource = self._resource(query.get("resource"))
        if resource is None:
            return back(error="invalid_target", error_description="resource names no MCP server this server serves")
        scope = tuple(query.get("scope", " ".join(self.scopes_supported)).split())
        if unknown := set(scope) - set(self.scopes_supported):
            return back(error="invalid_scope", error_description=f"unknown scope(s) {' '.join(sorted(unknown))}")
        host = urlsplit(redirect_uri).hostname or ""
        request = ConsentRequest(
            client_id=client.client_id,
            client_name=client.name,
            redirect_host=host,
            loopback_only=all(_is_loopback(urlsplit(u).hostname or "") for u in client.redirect_uris),
            scope=scope,
            resource=resource,
        )
        subject = await self.consent(request)
        if subject is None:
            return back(error="access_denied", error_description="the user did not approve")
        code = secrets.token_urlsafe(32)
        self.codes[code] = Code(
            client_id=client.client_id,
            redirect_uri=redirect_uri,
            challenge=query["code_challenge"],
            subject=subject,
            scope=scope,
            resource=resource,
            expires_at=self.clock() + 60,
            family=secrets.token_urlsafe(8),
        )
        return back(code=code)

    def _resource(self, requested: str | None) -> str | None:
        if requested is None:
            # a client that names no resource: the only one we serve, if there is only one
            return self.resources[0] if self.resources is not None and len(self.resources) == 1 else None
        if urlsplit(requested).scheme not in ("http", "https") or "#" in requested:
            return None
        return requested if self.resources is None or requested in self.resources else None

    # -- POST /token ----------------------------------------------------------------------------------

    async def token_endpoint(self, form: Mapping[str, str], authorization: str | None) -> dict[str, Any]:
        client = await self._authenticate_client(form, authorization)
        grant = form.get("grant_type")
        if grant not in ("authorization_code", "refresh_token", "client_credentials"):
            raise OAuthError("unsupported_grant_type", f"grant_type {grant!r} is not supported")
        if grant not in client.grant_types:
            # RFC 6749 section 5.2: a grant this client is not registered for
            raise OAuthError("unauthorized_client", f"this client may not use the {grant} grant")
        if grant == "authorization_code":
            return self._redeem_code(client, form)
        if grant == "refresh_token":
            return self._refresh(client, form)
        return self._client_credentials(client, form)

    def _client_credentials(self, client: Client, form: Mapping[str, str]) -> dict[str, Any]:
        """RFC 6749 section 4.4: a confidential client's own token, for the scope and resource it names."""
        scope = tuple(form.get("scope", " ".join(self.scopes_supported)).split())
        if unknown := set(scope) - set(self.scopes_supported):
            raise OAuthError("invalid_scope", f"unknown scope(s) {' '.join(sorted(unknown))}")
        resource = self._resource(form.get("resource"))
        if resource is None:
            raise OAuthError("invalid_target", "resource names no MCP server this server serves")
        log.info("client_credentials: %s gets %r for %s", client.client_id, " ".join(scope), resource)
        # RFC 6749 section 4.4.3: no refresh token (the client can always ask again)
        family = secrets.token_urlsafe(8)
        return self._issue(client.client_id, client.client_id, scope, resource, family, refresh=False)

    def _redeem_code(self, client: Client, form: Mapping[str, str]) -> dict[str, Any]:
        code = self.codes.get(form.get("code", ""))
        if code is None or code.expires_at <= self.clock() or code.client_id != client.client_id:
            raise OAuthError("invalid_grant", "unknown, expired or already used code")
        if code.used:
            # OAuth 2.1 section 4.1.3: a code presented twice revokes what it gave
            self.revoked_families.add(code.family)
            raise OAuthError("invalid_grant", "unknown, expired or already used code")
        code.used = True
        if form.get("redirect_uri") != code.redirect_uri:
            raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request's")
        verifier = form.get("code_verifier", "")
        if not secrets.compare_digest(_s256(verifier), code.challenge):
            raise OAuthError("invalid_grant", "code_verifier does not match the code_challenge")
        if "resource" in form and form["resource"] != code.resource:
            raise OAuthError("invalid_target", "resource differs from the authorization request's")
        return self._issue(client.client_id, code.subject, code.scope, code.resource, code.family)

    def _refresh(self, client: Client, form: Mapping[str, str]) -> dict[str, Any]:
        old = self.tokens.get(form.get("refresh_token", ""))
        if old is None or old.kind != "refresh" or old.client_id != client.client_id:
            raise OAuthError("invalid_grant", "unknown refresh token")
        if old.family in self.revoked_families or old.expires_at <= self.clock():
            raise OAuthError("invalid_grant", "refresh token revoked or expired")
        if old.spent:
            # [basic/authorization#78] rotation: presented again, a spent refresh token revokes every
            # token of its family (it was stolen, or the client is broken)
            self.revoked_families.add(old.family)
            raise OAuthError("invalid_grant", "refresh token revoked or expired")
        old.spent = True
        scope = tuple(form["scope"].split()) if "scope" in form else old.scope
        if not set(scope) <= set(old.scope):
            raise OAuthError("invalid_scope", "a refresh cannot widen the scope")
        if "resource" in form and form["resource"] != old.resource:
            raise OAuthError("invalid_target", "resource differs from the authorization's")
        return self._issue(client.client_id, old.subject, scope, old.resource, old.family)

    def _issue(
        self,
        client_id: str,
        subject: str,
        scope: tuple[str, ...],
        resource: str,
        family: str,
        *,
        refresh: bool = True,
    ) -> dict[str, Any]:
        now = self.clock()
        self._forget_expired(now)
        access, refresh_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        if self.signing_key is not None:
            access = self._jwt(client_id, subject, scope, resource, now)
        issued = [(access, "access", self.access_token_ttl)]
        if refresh:
            issued.append((refresh_token, "refresh", self.refresh_token_ttl))
        for token, kind, ttl in issued:
            # [basic/authorization#77] short-lived access tokens
            self.tokens[token] = Token(
                kind=kind,
                client_id=client_id,
                subject=subject,
                scope=scope,
                resource=resource,
                expires_at=now + ttl,
                issued_at=now,
                family=family,
            )
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.access_token_ttl,
            **({"refresh_token": refresh_token} if refresh else {}),
            "scope": " ".join(scope),
        }

    def _jwt(self, client_id: str, subject: str, scope: tuple[str, ...], resource: str, now: float) -> str:
        import jwt

        claims = {
            "iss": self._issuer(),
            "sub": subject,
            "aud": resource,
            "client_id": client_id,
            "scope": " ".join(scope),
            "iat": int(now),
            "exp": int(now + self.access_token_ttl),
            "jti": secrets.token_urlsafe(12),
        }
        token: str = jwt.encode(claims, self.signing_key, "ES256", headers={"kid": self.key_id, "typ": "at+jwt"})
        return token

    def _forget_expired(self, now: float) -> None:
        for key in [k for k, t in self.tokens.items() if t.expires_at <= now]:
            del self.tokens[key]
        for key in [k for k, c in self.codes.items() if c.expires_at <= now]:
            del self.codes[key]

    async def _authenticate_client(self, form: Mapping[str, str], authorization: str | None) -> Client:
        basic = _basic_credentials(authorization)
        if basic is not None and "client_secret" in form:
            # RFC 6749 section 2.3: one authentication method per request
            raise OAuthError("invalid_request", "client credentials in both the header and the body")
        client_id = basic[0] if basic is not None else form.get("client_id", "")
        client = await self._client(client_id)
        if client is None:
            raise OAuthError("invalid_client", "unknown client", 401)
        if basic is not None:
            used, secret = "client_secret_basic", basic[1]
        elif "client_secret" in form:
            used, secret = "client_secret_post", form["client_secret"]
        else:
            used, secret = "none", None
        allowed = client.auth_methods or (client.auth_method,)
        if used not in allowed:
            if allowed == ("none",):
                raise OAuthError("invalid_client", "this client authenticates with no secret", 401)
            raise OAuthError("invalid_client", f"client authentication failed ({' or '.join(allowed)})", 401)
        if client.client_secret is not None and not (
            secret is not None and secrets.compare_digest(secret, client.client_secret)
        ):
            raise OAuthError("invalid_client", f"client authentication failed ({used})", 401)
        return client

    # -- POST /introspect (RFC 7662) ------------------------------------------------------------------

    def introspect_endpoint(self, form: Mapping[str, str], authorization: str | None) -> dict[str, Any]:
        basic = _basic_credentials(authorization)
        expected = self.resource_servers.get(basic[0]) if basic is not None else None
        if basic is None or expected is None or not secrets.compare_digest(basic[1], expected):
            raise OAuthError("invalid_client", "introspection needs a resource server's credentials", 401)
        token = self.tokens.get(form.get("token", ""))
        now = self.clock()
        if (
            token is None
            or token.kind != "access"  # a refresh token is never good at a resource server
            or token.expires_at <= now
            or token.family in self.revoked_families
        ):
            return {"active": False}
        return {
            "active": True,
            "scope": " ".join(token.scope),
            "client_id": token.client_id,
            "sub": token.subject,
            "aud": token.resource,
            "iss": self._issuer(),
            "exp": int(token.expires_at),
            "iat": int(token.issued_at),
            "token_type": "Bearer",
        }

    # -- clients, including Client ID Metadata Documents ---------------------------------------------

    async def _client(self, client_id: str) -> Client | None:
        known = self.clients.get(client_id)
        if known is not None and (not known.metadata_document or known.fetched_until > self.clock()):
            return known
        if self.fetch is None or not _metadata_document_url(client_id):
            return known
        return await self._fetch_client(client_id)

    async def _fetch_client(self, url: str) -> Client | None:
        """[basic/authorization#34] a URL ``client_id`` is fetched; [#35, #38] and checked."""
        assert self.fetch is not None
        try:
            # [basic/authorization#39, #95, 2026-07-28:basic/authorization/client-registration#14] CIMD
            # security: the fetch is bounded in time (and size, below)
            with trio.fail_after(CIMD_TIMEOUT):
                status, headers, body = await self.fetch(url)
        except (OSError, trio.TooSlowError, ValueError, h11.ProtocolError, trio.BrokenResourceError) as e:
            log.warning("client metadata document %s could not be fetched: %r", url, e)
            return None
        try:
            doc = json.loads(body) if status == 200 and len(body) <= CIMD_MAX_BYTES else None
        except ValueError:
            doc = None
        uris = doc.get("redirect_uris") if isinstance(doc, dict) else None
        if (
            not isinstance(doc, dict)
            or doc.get("client_id") != url  # [basic/authorization#35] the document names its own URL
            or not isinstance(doc.get("client_name"), str)
            or not isinstance(uris, list)
            or not uris
            or not all(isinstance(u, str) and _redirect_uri_allowed(u) for u in uris)
            or doc.get("token_endpoint_auth_method", "none") != "none"
        ):
            log.warning("client metadata document %s refused (status %s, or missing or wrong fields)", url, status)
            return None
        client = Client(
            client_id=url,
            client_secret=None,
            redirect_uris=tuple(uris),
            auth_method="none",
            name=doc["client_name"],
            metadata_document=True,
            # [basic/authorization#36] kept as long as its Cache-Control allows (a day at most)
            fetched_until=self.clock() + _max_age(headers.get("cache-control", "")),
        )
        self.clients[url] = client
        return client


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_global and not address.is_multicast


async def fetch_metadata_document(
    url: str,
    *,
    ssl_context: ssl.SSLContext | None = None,
    allowed: Callable[[ipaddress.IPv4Address | ipaddress.IPv6Address], bool] = _public,
) -> tuple[int, Mapping[str, str], bytes]:
    """GET a Client ID Metadata Document as a server fetching a URL any client names must.

    [basic/authorization#96, 2026-07-28:basic/authorization/client-registration#14] SSRF: the
    host is resolved once and every address it has must be ``allowed`` (public ones by
    default: a name resolving to this machine, a private network or a cloud metadata address
    is refused, not only an address written in the URL); the connection goes to that very
    address (a second lookup could answer otherwise: DNS rebinding); https only; a redirect
    is answered as it is (not followed: only a 200 is a document); at most CIMD_MAX_BYTES.
    """
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError(f"{url} is not an https URL with a host")
    host, port = parts.hostname, parts.port or 443
    infos = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    refused = [a for a in addresses if not allowed(ipaddress.ip_address(a.split("%", 1)[0]))]
    if refused or not addresses:
        raise ValueError(f"{url}: {host} is at {', '.join(refused) or 'no address'}, not a public address: not fetched")
    tcp = await trio.open_tcp_stream(addresses[0], port)
    context = ssl_context if ssl_context is not None else ssl.create_default_context()
    async with trio.SSLStream(tcp, context, server_hostname=host, https_compatible=True) as stream:
        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=_HEAD_LIMIT)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = [("host", parts.netloc), ("accept", "application/json"), ("connection", "close")]
        await stream.send_all(
            (conn.send(h11.Request(method="GET", target=target, headers=headers)) or b"")
            + (conn.send(h11.EndOfMessage()) or b"")
        )
        status, answer, body = 0, {}, b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(bytes(await stream.receive_some(65536)))
            elif isinstance(event, h11.Response):
                status = event.status_code
                answer = {k.decode("latin-1"): v.decode("latin-1") for k, v in event.headers}
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > CIMD_MAX_BYTES:
                    raise ValueError(f"{url}: a document over {CIMD_MAX_BYTES} bytes")
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                return status, answer, body


def _new_signing_key() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ec
    except ImportError:
        raise RuntimeError("JWT access tokens need the auth-jwt extra: pip install 'mcp_ref[auth-jwt]'") from None
    return ec.generate_private_key(ec.SECP256R1())


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _basic_credentials(authorization: str | None) -> tuple[str, str] | None:
    if authorization is None or not authorization.lower().startswith("basic "):
        return None
    try:
        user, _, password = base64.b64decode(authorization[6:].strip(), validate=True).decode().partition(":")
    except ValueError:
        return None
    # RFC 6749 section 2.3.1: both parts are form-urlencoded
    return unquote(user.replace("+", " ")), unquote(password.replace("+", " "))


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _redirect_uri_allowed(uri: str) -> bool:
    """[basic/authorization#81] https, or http on a loopback host; never a fragment."""
    parts = urlsplit(uri)
    if parts.fragment or not parts.hostname:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and _is_loopback(parts.hostname))


def _metadata_document_url(client_id: str) -> bool:
    """Whether a client_id is a Client ID Metadata Document URL this server will fetch.

    [basic/authorization#30] https with a path; [#96] SSRF: no IP literal of a
    private, link-local or reserved network (loopback is allowed: this example
    only ever serves loopback). A host name can only be judged as resolved: that
    is the fetch's to do (:func:`fetch_metadata_document`).
    """
    parts = urlsplit(client_id)
    if parts.scheme != "https" or not parts.hostname or parts.path in ("", "/") or parts.fragment:
        return False
    try:
        address = ipaddress.ip_address(parts.hostname)
    except ValueError:
        return True
    return address.is_loopback or address.is_global


def _max_age(cache_control: str) -> float:
    for directive in cache_control.lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name in ("no-store", "no-cache"):
            return 0.0
        if name == "max-age" and value.isdigit():
            return min(float(value), 86_400.0)
    return 300.0


# -- HTTP --------------------------------------------------------------------------------------------


#: bytes a request head may take (h11 refuses a buffer of this many without a whole head)
_HEAD_LIMIT = 16 * 1024


async def _read_request(conn: h11.Connection, stream: trio.abc.Stream) -> tuple[h11.Request, bytes] | None:
    head, body = None, b""
    fed = 0
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            # never more than the head limit leaves room for while the head is read, so that a head
            # completing in a large read is not let through (one exchange per connection: h11
            # holds everything fed so far until the head is out)
            data = await stream.receive_some(65536 if head is not None else _HEAD_LIMIT - fed)
            fed += len(data)
            conn.receive_data(bytes(data))
        elif isinstance(event, h11.Request):
            names = {name for name, _ in event.headers}
            if b"transfer-encoding" in names and (b"content-length" in names or event.http_version == b"1.0"):
                # RFC 9112 section 6.1: a request framed two ways is refused, and the connection closed
                raise OAuthError("invalid_request", "ambiguous request framing", 400)
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > 64 * 1024:
                raise OAuthError("invalid_request", "request body too large", 413)
        elif isinstance(event, h11.EndOfMessage) and head is not None:
            return head, body
        elif isinstance(event, h11.ConnectionClosed):
            return None


async def _send(
    conn: h11.Connection, stream: trio.abc.Stream, status: int, body: bytes, headers: Mapping[str, str]
) -> None:
    hdrs = {"content-length": str(len(body)), "connection": "close", "cache-control": "no-store", **headers}
    out = conn.send(h11.Response(status_code=status, headers=list(hdrs.items()))) or b""
    out += (conn.send(h11.Data(data=body)) or b"") if body else b""
    await stream.send_all(out + (conn.send(h11.EndOfMessage()) or b""))


async def _handle(server: AuthorizationServer, stream: trio.abc.Stream) -> None:
    """One exchange per connection (``connection: close``): this is an example, not a fast server."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_HEAD_LIMIT - 1)
    try:
        with trio.fail_after(30):
            request = await _read_request(conn, stream)
            if request is None:
                return
            status, body, headers = await _route(server, *request)
            await _send(conn, stream, status, body, headers)
    except OAuthError as e:
        with trio.move_on_after(5):
            await _send(conn, stream, e.status, *_json({"error": e.error, "error_description": e.description}))
    except (trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError, h11.ProtocolError) as e:
        log.debug("auth server connection ended: %r", e)
    except Exception:
        # a bug must not take the server down: reported here, and a 500 for this exchange
        log.exception("error while handling an authorization server request")
        if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            with trio.move_on_after(5):
                await _send(conn, stream, 500, *_json({"error": "server_error", "error_description": "internal error"}))
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()


def _json(doc: Any) -> tuple[bytes, dict[str, str]]:
    return json.dumps(doc).encode(), {"content-type": "application/json"}


async def _route(server: AuthorizationServer, head: h11.Request, body: bytes) -> tuple[int, bytes, dict[str, str]]:
    method = head.method.decode()
    target = urlsplit(head.target.decode("ascii", "replace"))
    headers = {k.decode().lower(): v.decode("latin-1") for k, v in head.headers}
    authorization = headers.get("authorization")
    form = dict(parse_qsl(body.decode("utf-8", "replace"))) if method == "POST" else {}
    route = (method, target.path)
    if route == ("GET", "/.well-known/oauth-authorization-server"):
        return 200, *_json(server.metadata())
    if route == ("GET", "/jwks"):
        return 200, *_json(server.jwks())
    if route == ("POST", "/register"):
        status, answer = server.register_endpoint(body)
        return status, *_json(answer)
    if route == ("GET", "/authorize"):
        status, where = await server.authorize_endpoint(dict(parse_qsl(target.query)))
        if status == 302:
            return 302, b"", {"location": where}
        return status, where.encode(), {"content-type": "text/plain; charset=utf-8"}
    if route == ("POST", "/token"):
        return 200, *_json(await server.token_endpoint(form, authorization))
    if route == ("POST", "/introspect"):
        return 200, *_json(server.introspect_endpoint(form, authorization))
    return 404, b"not found", {"content-type": "text/plain"}


async def serve_auth_server(
    server: AuthorizationServer,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    ssl_context: ssl.SSLContext | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until cancelled; starts with the issuer URL (which it sets on ``server`` if unset)."""
    tcp = await trio.open_tcp_listeners(port, host=host)
    listeners: list[trio.abc.Listener[Any]] = list(tcp)
    if ssl_context is not None:
        listeners = [trio.SSLListener(lst, ssl_context, https_compatible=True) for lst in tcp]
    bound = tcp[0].socket.getsockname()
    scheme = "https" if ssl_context is not None else "http"
    if server.issuer is None:
        server.issuer = f"{scheme}://{host}:{bound[1]}"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, lambda s: _handle(server, s), listeners)
        task_status.started(server.issuer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_ref.examples.auth_server", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=9000, help="port (default 9000)")
    parser.add_argument("--resource", action="append", help="an MCP server tokens are for (repeatable; default any)")
    parser.add_argument("--scope", action="append", help="a scope it knows (repeatable; default mcp)")
    parser.add_argument(
        "--introspection-client",
        default="mcp-server:mcp-server-secret",
        help="ID:SECRET of the resource server allowed to introspect (default mcp-server:mcp-server-secret)",
    )
    parser.add_argument(
        "--client",
        action="append",
        default=[],
        metavar="ID:SECRET",
        help="a confidential client for the client_credentials grant (repeatable)",
    )
    parser.add_argument("--jwt", action="store_true", help="issue JWT access tokens (ES256, keys at /jwks)")
    parser.add_argument("--certfile", help="serve HTTPS with this certificate chain (PEM) ...")
    parser.add_argument("--keyfile", help="... and this private key")
    args = parser.parse_args(argv)
    services = [spec.partition(":")[::2] for spec in args.client]
    if any(not cid or not secret for cid, secret in services):
        parser.error("--client takes ID:SECRET")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    server = AuthorizationServer(
        resources=args.resource, scopes_supported=args.scope or ("mcp",), jwt_access_tokens=args.jwt
    )
    rs_id, _, rs_secret = args.introspection_client.partition(":")
    server.add_resource_server(rs_id, rs_secret)
    for client_id, secret in services:
        server.register_service(client_id, secret)
    context = None
    if args.certfile:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.certfile, args.keyfile)

    async def run() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                issuer = await nursery.start(
                    lambda task_status: serve_auth_server(
                        server, host=args.host, port=args.port, ssl_context=context, task_status=task_status
                    )
                )
                print(f"authorization server: {issuer}  (introspection as {rs_id})  -- Ctrl-C stops", file=sys.stderr)
                async for _ in signals:
                    break
                nursery.cancel_scope.cancel()

    failure: BaseException | None = None
    try:
        trio.run(run)
    except* OSError as group:
        failure = group  # the nursery wraps it: the port is taken, or the address is not ours
        while isinstance(failure, BaseExceptionGroup):
            failure = failure.exceptions[0]
    if isinstance(failure, OSError):
        print(f"cannot serve on {args.host} port {args.port}: {failure.strerror or failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
