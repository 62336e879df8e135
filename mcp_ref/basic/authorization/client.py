"""The client's decisions in basic/authorization, without I/O.

* :func:`select_scope` -- the Scope Selection Strategy (authorization#43,
  #44, #22) and ``offline_access`` where the authorization server lists it
  (SEP-2207); :func:`step_up_scope` -- the scope asked for after a 403
  ``insufficient_scope`` (#19, #69, #70).
* :func:`choose_registration` -- pre-registered credentials, then a Client
  ID Metadata Document, then Dynamic Client Registration (#26, #40, #41).
* :func:`check_cimd_url`, :func:`client_id_metadata_document` -- the rules a
  client's metadata document follows (#29-#32).
* :func:`authorization_request_url` -- PKCE S256, ``state``, the exact
  redirect URI, RFC 8707 ``resource`` and the scope (#46, #74, #83, #91).
* :func:`check_authorization_response` -- the redirect back: an error, a
  ``state`` that is not ours (#91), an ``iss`` that names another server
  (RFC 9207, the mix-up defence) are all refusals.
* :func:`check_redirect_uri` -- loopback or https (#81).
* :func:`application_type_for` -- the OpenID Connect ``application_type`` a
  registration request carries (2026-07-28 client-registration#18-#20).
"""

from collections.abc import Mapping, Sequence
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

import attrs

from .metadata import (
    AuthorizationServerMetadata,
    ClientInformation,
    ClientMetadata,
    ProtectedResourceMetadata,
    is_absolute_url,
    is_loopback_url,
)
from .pkce import PKCE

__all__ = [
    "OFFLINE_ACCESS",
    "select_scope",
    "step_up_scope",
    "Registration",
    "choose_registration",
    "check_cimd_url",
    "client_id_metadata_document",
    "check_redirect_uri",
    "ApplicationType",
    "application_type_for",
    "authorization_request_url",
    "AuthorizationResponse",
    "parse_authorization_response",
    "check_authorization_response",
    "AuthorizationDenied",
]

OFFLINE_ACCESS = "offline_access"

Registration = Literal["pre-registered", "client-id-metadata-document", "dynamic", "none"]
ApplicationType = Literal["native", "web"]


def select_scope(
    challenge_scope: str | None,
    resource_metadata: ProtectedResourceMetadata | None,
    server_metadata: AuthorizationServerMetadata | None,
    *,
    want_refresh_token: bool = True,
) -> str | None:
    """[basic/authorization#22, #43, #44] the ``scope`` of the first authorization request, or None to omit it.
    [2026-07-28:basic/authorization/index#17, #62] the challenge's scope first, then the strategy's.

    The challenge's scope first (it is authoritative for the request that
    met it, #19); else every scope of the resource's ``scopes_supported``;
    else no scope at all. Then, when a refresh token is wanted and the
    authorization server lists ``offline_access`` in its own
    ``scopes_supported``, that is added (SEP-2207; never otherwise: an
    unsupported scope is an error at the server).
    """
    # [basic/authorization#18] the challenge's scopes as given, whatever scopes_supported says
    if challenge_scope and challenge_scope.split():
        scopes = challenge_scope.split()
    elif resource_metadata is not None and resource_metadata.scopes_supported:
        scopes = list(resource_metadata.scopes_supported)
    else:
        scopes = []
    return _with_offline_access(scopes, server_metadata, want_refresh_token)


def _with_offline_access(
    scopes: list[str], server_metadata: AuthorizationServerMetadata | None, want: bool
) -> str | None:
    # [2026-07-28:basic/authorization/index#50] offline_access only where the server lists it
    if (
        want
        and scopes
        and server_metadata is not None
        and OFFLINE_ACCESS in (server_metadata.scopes_supported or ())
        and OFFLINE_ACCESS not in scopes
    ):
        scopes = [*scopes, OFFLINE_ACCESS]
    return " ".join(dict.fromkeys(scopes)) or None


def step_up_scope(
    granted: str | None,
    challenge_scope: str | None,
    server_metadata: AuthorizationServerMetadata | None = None,
    *,
    want_refresh_token: bool = True,
) -> str | None:
    """[basic/authorization#19, #69] the scope to ask for after a 403 ``insufficient_scope``.
    [2026-07-28:basic/authorization/index#17, #18] the challenge's scopes with those granted.

    Every scope the challenge names (authoritative for the request that met
    it), with the ones the current token already has, so that stepping up
    for one operation does not lose another's permission. Decision: the
    client assumes no relation between the two sets (#18), it only joins them.
    """
    scopes = (granted or "").split() + (challenge_scope or "").split()
    return _with_offline_access(scopes, server_metadata, want_refresh_token)


def choose_registration(
    *,
    pre_registered: ClientInformation | None,
    client_id_metadata_url: str | None,
    server_metadata: AuthorizationServerMetadata,
) -> Registration:
    """[basic/authorization#26, #40, #41] how this client gets a client id at this server.
    [2026-07-28:basic/authorization/client-registration#1, #16, basic/authorization/index#13] the same order.

    Pre-registered credentials when the application has them; a Client ID
    Metadata Document when it has one and the server says it takes them;
    Dynamic Client Registration when the server has a registration endpoint;
    otherwise ``"none"`` (the application must supply credentials).
    """
    if pre_registered is not None:
        return "pre-registered"
    if client_id_metadata_url is not None and server_metadata.client_id_metadata_document_supported:
        return "client-id-metadata-document"
    if server_metadata.registration_endpoint is not None:
        return "dynamic"
    return "none"


def check_cimd_url(url: str) -> None:
    """[basic/authorization#29, #30] a client id URL: https, with a path."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.path in ("", "/") or parts.fragment:
        raise ValueError(f"a client id metadata document URL is https with a path and no fragment, not {url!r}")


def client_id_metadata_document(url: str, metadata: ClientMetadata) -> ClientMetadata:
    """[basic/authorization#28, #32] the document to publish at ``url``: its ``client_id`` is ``url`` exactly.

    ``client_name`` and ``redirect_uris`` are required; a ``client_id`` in
    ``metadata`` that is not ``url`` is refused rather than overwritten.
    """
    check_cimd_url(url)
    if metadata.client_id is not None and metadata.client_id != url:
        raise ValueError(f"client_id {metadata.client_id!r} is not the document's URL {url!r}")
    # [basic/authorization#31] client_id (set below), client_name and redirect_uris, each required
    if not metadata.client_name or not metadata.redirect_uris:
        raise ValueError("a client id metadata document needs client_name and redirect_uris")
    return attrs.evolve(metadata, client_id=url)


def check_redirect_uri(uri: str) -> None:
    """[basic/authorization#81] a redirect URI is on loopback or https (no fragment, RFC 6749 section 3.1.2)."""
    if not is_absolute_url(uri):
        raise ValueError(f"a redirect URI is an absolute http(s) URL without fragment, not {uri!r}")
    if urlsplit(uri).scheme.lower() != "https" and not is_loopback_url(uri):
        raise ValueError(f"a redirect URI uses https or a loopback host, not {uri!r}")


def application_type_for(redirect_uri: str) -> ApplicationType:
    """The ``application_type`` to register with, read from where the user's browser comes back to.

    [2026-07-28:basic/authorization/client-registration#18, #19, #20] a
    redirect to a loopback host (a CLI or desktop client, a web application
    on ``localhost``) or to a private scheme (``com.example.app:/cb``) is a
    native application's; an https redirect to any other host is a web
    application's. OpenID Connect's default is ``"web"``, which an OIDC
    server enforces by refusing loopback and http redirect URIs: the reason
    the field is always sent (a non-OIDC server ignores it).
    -- client-registration#application-type-and-redirect-uri-constraints
    """
    scheme = urlsplit(redirect_uri).scheme.lower()
    if is_loopback_url(redirect_uri) or scheme not in ("http", "https"):
        return "native"
    return "web"


def authorization_request_url(
    endpoint: str,
    *,
    client_id: str,
    redirect_uri: str,
    pkce: PKCE,
    state: str,
    resource: str,
    scope: str | None,
) -> str:
    """The URL the user's browser opens (OAuth 2.1 section 4.1.1, with RFC 8707 ``resource``).

    [basic/authorization#46, #52, #74, #106] ``resource`` always, whether or
    not the server knows RFC 8707; [#83] S256; [#91] ``state``; the scope
    only when there is one to ask for (#44).
    """
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce.challenge,
        "code_challenge_method": pkce.method,
        "state": state,
        "resource": resource,
    }
    if scope:
        params["scope"] = scope
    parts = urlsplit(endpoint)
    # (the endpoint may carry its own query, RFC 6749 section 3.1: kept, ours appended)
    query = urlencode([*parse_qsl(parts.query, keep_blank_values=True), *params.items()])
    return parts._replace(query=query).geturl()


@attrs.frozen(kw_only=True)
class AuthorizationResponse:
    """What the redirect back to the client carried (OAuth 2.1 sections 4.1.2 and 4.1.2.1, RFC 9207)."""

    code: str | None = None
    state: str | None = None
    iss: str | None = None
    error: str | None = None
    error_description: str | None = None


def parse_authorization_response(query: str | Mapping[str, str] | Sequence[tuple[str, str]]) -> AuthorizationResponse:
    """Read the redirect's query (the part after ``?``, or its pairs); a repeated parameter is refused."""
    pairs = (
        parse_qsl(query, keep_blank_values=True)
        if isinstance(query, str)
        else list(query.items() if isinstance(query, Mapping) else query)
    )
    seen: dict[str, str] = {}
    for name, value in pairs:
        if name in seen:
            # RFC 6749 section 3.1: parameters must not be included more than once
            raise AuthorizationDenied("invalid_request", f"the redirect repeats {name!r}")
        seen[name] = value
    return AuthorizationResponse(
        code=seen.get("code"),
        state=seen.get("state"),
        iss=seen.get("iss"),
        error=seen.get("error"),
        error_description=seen.get("error_description"),
    )


class AuthorizationDenied(ValueError):
    """The authorization response cannot be used: ``error`` is the OAuth error (ours or the server's)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description


def check_authorization_response(
    response: AuthorizationResponse, *, state: str, server_metadata: AuthorizationServerMetadata | None
) -> str:
    """The authorization code, once the response is known to answer *our* request at *this* server.

    [basic/authorization#91] a missing or different ``state`` discards it.
    RFC 9207: an ``iss`` must be exactly the issuer of ``server_metadata``,
    the validated metadata of the server we sent the user to; a server that
    promised ``iss`` and left it out is refused too (mix-up defence).
    An ``error`` from the server (the user declined...) is reported as such.
    """
    if response.state != state:
        raise AuthorizationDenied(
            "state_mismatch",
            "the redirect's state is not the one this client sent"
            if response.state is not None
            else "the redirect carries no state",
        )
    if server_metadata is not None:
        # [2026-07-28:basic/authorization/index#22] the recorded issuer is the validated metadata
        # document's own ``issuer`` -- authorization#authorization-response-validation
        recorded = server_metadata.issuer
        # [2026-07-28:basic/authorization/index#25, #27] RFC 9207 section 2.4: a present iss is
        # compared with the recorded issuer as plain strings (no case folding, port, slash or
        # percent-encoding normalisation), whether or not the metadata advertised it; an
        # advertised iss that is absent is refused. All before the code goes anywhere.
        if response.iss is not None and response.iss != recorded:
            # [2026-07-28:basic/authorization/index#28] the error and its description of a response
            # from the wrong server are neither acted on nor shown
            raise AuthorizationDenied("issuer_mismatch", f"the redirect comes from {response.iss!r}, not {recorded!r}")
        if response.iss is None and server_metadata.authorization_response_iss_parameter_supported:
            raise AuthorizationDenied("issuer_mismatch", "the server promised an iss parameter and sent none")
    if response.error is not None:
        raise AuthorizationDenied(response.error, response.error_description or "the authorization server refused")
    if not response.code:
        raise AuthorizationDenied("invalid_request", "the redirect carries no code")
    return response.code
