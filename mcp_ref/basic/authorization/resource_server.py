"""The MCP server as an OAuth 2.1 resource server (basic/authorization), sans-IO.

::

    auth = ProtectedResource(
        authorization_servers=["http://127.0.0.1:9000"],
        verifier=my_verifier,                  # a TokenVerifier: token -> AccessToken
        required_scopes=["mcp"],               # for every request
        tool_scopes={"reset": ["mcp:admin"]},  # and more for some tools
    )
    await nursery.start(partial(serve_http, server, auth=auth))

What is decided here, with no I/O (the HTTP server asks, then answers):

* the Protected Resource Metadata document (RFC 9728) and where it is
  published (:func:`metadata_path`: path-aware, and at the root);
* the bearer token of a request -- from the ``Authorization`` header only,
  never the query string (:func:`bearer_token`);
* whether a verified token is for us (:func:`audience_matches`, always
  checked, whatever the verifier), unexpired, and has the scopes a request
  needs (:meth:`ProtectedResource.scopes_needed`);
* the challenge of a refusal: ``WWW-Authenticate: Bearer`` with
  ``resource_metadata``, ``scope`` and an RFC 6750 error (:func:`challenge`).

Verifying a token is the application's :class:`TokenVerifier`; the built-in
ones (RFC 7662 introspection, JWT access tokens) are in :mod:`.introspection`
and :mod:`.jwt`.
"""

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

import attrs

from .challenge import format_bearer_challenge
from .discovery import PRM_WELL_KNOWN, canonical_resource, protected_resource_metadata_urls, resource_allowed
from .metadata import ProtectedResourceMetadata

#: the scope a client asks for to get a refresh token (never the resource's requirement)
OFFLINE_ACCESS = "offline_access"

__all__ = [
    "WELL_KNOWN",
    "AccessToken",
    "TokenVerifier",
    "InvalidToken",
    "AuthRefused",
    "ProtectedResource",
    "Principal",
    "bearer_token",
    "check_resource_uri",
    "audience_matches",
    "challenge",
]

WELL_KNOWN = PRM_WELL_KNOWN

#: who a token speaks for: (issuer, subject, client id); what sessions, tasks and
#: elicitations are bound to
Principal = tuple[str | None, str | None, str | None]


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ValueError(f"a sequence of strings was expected, not the string {value!r}")
    return tuple(value)


def _string_set(value: Iterable[str]) -> frozenset[str]:
    return frozenset(_strings(value))


@attrs.frozen(kw_only=True)
class AccessToken:
    """A verified access token: what handlers see as ``ctx.auth``.

    The token itself is deliberately not kept: a handler cannot forward what it
    never sees ([basic/authorization#105] no token passthrough).
    """

    #: the resource owner (``sub``); None for a client acting on its own behalf
    subject: str | None = None
    #: the client the token was issued to (``client_id``)
    client_id: str | None = None
    #: the scopes the token grants
    scopes: frozenset[str] = attrs.field(default=frozenset(), converter=_string_set)
    #: the resources the token was issued for (``aud``, RFC 8707)
    audience: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    #: expiry, seconds since the epoch (``exp``)
    expires_at: float | None = None
    #: the authorization server that issued it (``iss``)
    issuer: str | None = None
    #: every claim the verifier saw (JWT claims, or the introspection response)
    claims: Mapping[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def principal(self) -> Principal:
        """Who this token speaks for; a refreshed token of the same user has the same principal."""
        return (self.issuer, self.subject, self.client_id)


class InvalidToken(Exception):
    """What a :class:`TokenVerifier` raises for a token it does not accept (answered 401).

    The message goes to the client as ``error_description``: say what is wrong
    (expired, revoked, unknown), never why in detail.
    """


class TokenVerifier(Protocol):
    """Turns a bearer token into an :class:`AccessToken`, or raises :class:`InvalidToken`.

    Any other exception means the token could not be checked (the
    introspection endpoint is down): the request is refused with 401 all the
    same, and the failure logged. The audience, the expiry and the scopes are
    checked again by :class:`ProtectedResource` after the verifier, so a
    verifier that forgets them lets nothing through.
    """

    async def verify(self, token: str) -> AccessToken:
        """The verified token, or InvalidToken when ``token`` is not one this server accepts (any other exception is a
        401 too, logged).
        """


class AuthRefused(Exception):
    """A request refused by the resource server: its HTTP status and challenge."""

    def __init__(self, status: int, error: str | None, description: str, *, scope: Iterable[str] | None = None) -> None:
        super().__init__(description)
        self.status = status
        #: the RFC 6750 error code (None: no credentials were given, so no error)
        self.error = error
        self.description = description
        self.scope = tuple(sorted(set(scope))) if scope is not None else None


@attrs.frozen(kw_only=True)
class ProtectedResource:
    """What ``serve_http(..., auth=...)`` takes: the resource's metadata and policy.

    ``resource`` is the canonical URI of the MCP server (RFC 8707), the
    audience every token must name; None means the URL the server serves
    (``http://127.0.0.1:PORT/mcp``), filled in when it binds.
    ``required_scopes`` are needed by every request; ``method_scopes`` and
    ``tool_scopes`` add scopes for some methods and some tools (a request
    without them is answered 403 ``insufficient_scope``). ``scopes_supported``
    defaults to every scope named here. ``scope_implies`` maps a broad scope to
    the narrower ones it grants (``{"files:admin": ["files:read", "files:write"]}``,
    followed transitively): a token with the broad scope is enough wherever a
    narrower one is needed. ``clock`` gives seconds since the
    epoch, for the expiry check (``leeway`` seconds of clock skew allowed).

    ``offline_access`` is refused among the scopes named here: refresh tokens
    are the client's business with its authorization server, never a
    requirement of the resource.
    """

    #: how a token is checked (IntrospectionVerifier, JWTVerifier or your own TokenVerifier)
    verifier: TokenVerifier
    #: the issuer URLs of the authorization servers clients get tokens from
    authorization_servers: Sequence[str] = attrs.field(converter=_strings)
    resource: str | None = None
    required_scopes: Sequence[str] = attrs.field(default=(), converter=_strings)
    method_scopes: Mapping[str, Sequence[str]] = attrs.field(factory=dict)
    tool_scopes: Mapping[str, Sequence[str]] = attrs.field(factory=dict)
    scopes_supported: Sequence[str] | None = None
    scope_implies: Mapping[str, Sequence[str]] = attrs.field(factory=dict)
    #: a name for people, published in the metadata
    resource_name: str | None = None
    #: a URL of documentation for developers, published in the metadata
    resource_documentation: str | None = None
    clock: Callable[[], float] = time.time
    leeway: float = 0.0
    #: seconds the verifier may take before the request is refused (401)
    verify_timeout: float = 10.0

    def __attrs_post_init__(self) -> None:
        # [basic/authorization#13] at least one authorization server in the metadata
        if not self.authorization_servers:
            raise ValueError("a protected resource names at least one authorization server")
        for url in self.authorization_servers:
            if urlsplit(url).scheme not in ("https", "http") or not urlsplit(url).hostname:
                raise ValueError(f"authorization server {url!r} is not an absolute http(s) URL")
        if self.resource is not None:
            check_resource_uri(self.resource)
        named = [("required_scopes", self.required_scopes)] + [
            (f"scopes of {k}", v) for k, v in {**self.method_scopes, **self.tool_scopes}.items()
        ]
        named += [(f"scope_implies[{k!r}]", [k, *v]) for k, v in self.scope_implies.items()]
        if self.scopes_supported is not None:
            named.append(("scopes_supported", self.scopes_supported))
        for name, scopes in named:
            if isinstance(scopes, str) or any(not _scope_token(s) for s in scopes):
                raise ValueError(f"{name}: a sequence of scope tokens (no spaces or quotes), not {scopes!r}")
            # [2026-07-28:basic/authorization/index#52] neither in a challenge's scope nor in scopes_supported
            if OFFLINE_ACCESS in scopes and not name.startswith("scope_implies"):
                raise ValueError(
                    f"{name}: {OFFLINE_ACCESS!r} is not a scope a resource requires or publishes (refresh tokens are"
                    " between the client and its authorization server)"
                )
        if not math.isfinite(self.leeway) or self.leeway < 0:
            raise ValueError("leeway is a number of seconds >= 0")

    # -- the metadata document ------------------------------------------------------------

    def all_scopes(self) -> tuple[str, ...]:
        """[basic/authorization#20] ``scopes_supported`` as published: as given, or every scope this policy names."""
        if self.scopes_supported is not None:
            return tuple(self.scopes_supported)
        named = [*self.required_scopes, *(s for v in self.method_scopes.values() for s in v)]
        named += [s for v in self.tool_scopes.values() for s in v]
        return tuple(dict.fromkeys(named))

    def metadata(self) -> dict[str, Any]:
        """The Protected Resource Metadata document (RFC 9728 section 2).

        [basic/authorization#8, #12, #13] ``authorization_servers`` names where
        clients get tokens for this resource.
        """
        return ProtectedResourceMetadata(
            resource=self._resource(),
            authorization_servers=tuple(self.authorization_servers),
            scopes_supported=self.all_scopes() or None,
            bearer_methods_supported=("header",),  # [basic/authorization#56] never the query string
            resource_name=self.resource_name,
            resource_documentation=self.resource_documentation,
        ).to_json()

    def metadata_url(self) -> str:
        """Where the metadata document is: the path-aware well-known URL (RFC 9728 section 3.1)."""
        return protected_resource_metadata_urls(self._resource())[0]

    def _resource(self) -> str:
        if self.resource is None:
            raise RuntimeError("the resource URI is not known yet (it is filled in when the server binds)")
        return self.resource

    # -- checking a request --------------------------------------------------------------------

    def check_token(self, token: AccessToken, needed: Iterable[str] = ()) -> None:
        """Refuse a verified token that is not for us, has expired, or lacks scopes.

        Raises :class:`AuthRefused` (401 ``invalid_token``, 403 ``insufficient_scope``).
        """
        # [basic/authorization#58, #62, #63, #75, #102, #104] the token must name us in its audience,
        # whatever the verifier said: a token for another resource is refused (no passthrough)
        if not audience_matches(token.audience, self._resource()):
            raise AuthRefused(401, "invalid_token", "the token was not issued for this resource")
        # [basic/authorization#60] an expired token gets 401
        if token.expires_at is not None and token.expires_at + self.leeway <= self.clock():
            raise AuthRefused(401, "invalid_token", "the token has expired")
        needed = set(needed)
        # [2026-07-28:basic/authorization/index#64] a broad scope grants the narrower ones it implies
        if missing := needed - self.granted_scopes(token.scopes):
            # [basic/authorization#17, #65-#68, 2026-07-28:basic/authorization/index#55, #56]
            # 403 insufficient_scope naming what is needed: the scopes
            # this request needs plus those already granted that we know (the spec's recommended approach,
            # so that a client re-authorizing with them loses nothing it had)
            keep = token.scopes & (set(self.all_scopes()) | needed)
            raise AuthRefused(
                403,
                "insufficient_scope",
                f"this request needs the scope(s) {' '.join(sorted(missing))}",
                scope=needed | keep,
            )

    def granted_scopes(self, scopes: Iterable[str]) -> frozenset[str]:
        """``scopes`` with every scope they imply (``scope_implies``, followed transitively)."""
        granted = set(scopes)
        todo = list(granted)
        while todo:
            for narrower in self.scope_implies.get(todo.pop(), ()):
                if narrower not in granted:
                    granted.add(narrower)
                    todo.append(narrower)
        return frozenset(granted)

    def scopes_needed(self, messages: Iterable[Any]) -> frozenset[str]:
        """The scopes the JSON-RPC messages of one HTTP request need (their union, for a batch)."""
        needed = set(self.required_scopes)
        for message in messages:
            if not isinstance(message, dict) or not isinstance(method := message.get("method"), str):
                continue
            needed.update(self.method_scopes.get(method, ()))
            params = message.get("params")
            if method == "tools/call" and isinstance(params, dict) and isinstance(name := params.get("name"), str):
                needed.update(self.tool_scopes.get(name, ()))
        return frozenset(needed)

    def challenge(self, refusal: AuthRefused | None = None, *, scope: Iterable[str] | None = None) -> str:
        """The ``WWW-Authenticate`` value for a refusal (or for a request with no credentials)."""
        if refusal is not None and refusal.scope is not None:
            scope = refusal.scope
        return challenge(
            self.metadata_url(),
            error=refusal.error if refusal is not None else None,
            description=refusal.description if refusal is not None and refusal.error is not None else None,
            scope=scope,
        )


def challenge(
    metadata_url: str,
    *,
    error: str | None = None,
    description: str | None = None,
    scope: Iterable[str] | None = None,
) -> str:
    """A ``Bearer`` challenge (RFC 6750 section 3, RFC 9728 section 5.1).

    [basic/authorization#14] ``resource_metadata`` always; [#16] ``scope`` when known.
    """
    scopes = " ".join(scope) if scope is not None else ""
    return format_bearer_challenge(
        resource_metadata=metadata_url,
        scope=scopes or None,
        error=error,
        error_description=_printable(description) if description is not None else None,
    )


def _printable(value: str) -> str:
    # RFC 6750 section 3: error_description is printable ASCII without '"' and '\'; the text may
    # come from a verifier, so what does not fit is dropped rather than refused
    return "".join(c for c in value if c not in '"\\' and 0x20 <= ord(c) < 0x7F)


def _scope_token(scope: object) -> bool:
    # RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
    return isinstance(scope, str) and bool(scope) and all(c not in '"\\' and 0x21 <= ord(c) <= 0x7E for c in scope)


def bearer_token(authorization: Sequence[str]) -> str | None:
    """The bearer token of a request, from its ``Authorization`` header values.

    [basic/authorization#53, #54] only the header counts: a token in the query
    string ([#56]) or the body is never looked at, so it authorizes nothing.
    None when there is no bearer credential (no header, or another scheme);
    :class:`AuthRefused` 400 ``invalid_request`` for a malformed one or for
    more than one (RFC 6750 section 3.1).
    """
    bearer = [v for v in authorization if v.strip().split(" ", 1)[0].lower() == "bearer"]
    if not bearer:
        return None
    if len(authorization) > 1:
        raise AuthRefused(400, "invalid_request", "more than one Authorization header")
    scheme_and_token = bearer[0].strip().split(" ")
    token = scheme_and_token[-1]
    # RFC 6750 section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    body = token.rstrip("=")
    if len(scheme_and_token) != 2 or not body or not all(c.isascii() and (c.isalnum() or c in "-._~+/") for c in body):
        raise AuthRefused(400, "invalid_request", "the Authorization header is not 'Bearer <token>'")
    return token


def check_resource_uri(uri: str) -> str:
    """``uri`` if it can name a resource (RFC 8707 section 2): an absolute http(s) URI
    without fragment ([basic/authorization#canonical-server-uri]); ValueError otherwise."""
    parts = urlsplit(uri.strip())
    if parts.scheme.lower() not in ("https", "http") or not parts.hostname:
        raise ValueError(f"{uri!r} is not an absolute http(s) URI")
    if parts.fragment or "#" in uri:
        raise ValueError(f"{uri!r}: a resource URI has no fragment")
    return uri


def audience_matches(audience: Iterable[str], resource: str) -> bool:
    """Whether a token's audience names this resource.

    An audience entry matches when, in canonical form ([basic/authorization#50,
    #51]: lower-case scheme and host, no default port, no trailing slash), it is
    the resource, or its origin or an ancestor path at a ``/`` boundary (a token
    for ``https://host`` is for every resource of the host, RFC 8707 section 2;
    one for ``https://host/other`` or ``https://host/mcp2`` is not for
    ``https://host/mcp``) -- the rule the client applies to metadata
    (:func:`~.discovery.resource_allowed`).
    Decision (spec_notes/basic/authorization.md): an empty audience matches
    nothing, so a verifier that cannot tell the audience lets nothing through.
    """
    ours = canonical_resource(check_resource_uri(resource))
    for entry in audience:
        try:
            theirs = canonical_resource(check_resource_uri(entry))
        except ValueError:
            continue
        if "?" not in theirs and resource_allowed(theirs, ours):
            return True
    return False
