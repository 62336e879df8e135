"""The documents of basic/authorization as typed objects, each read from JSON with its rules.

* :class:`ProtectedResourceMetadata` -- RFC 9728 section 2, what an MCP
  server publishes (authorization#8, #12, #13).
* :class:`AuthorizationServerMetadata` -- RFC 8414 section 2, and OpenID
  Connect Discovery 1.0 provider metadata read the same way (#10, #11).
* :class:`ClientMetadata` -- RFC 7591 section 2: a dynamic registration
  request, and (with ``client_id``) a Client ID Metadata Document (#29-#32).
* :class:`ClientInformation` -- RFC 7591 section 3.2.1: what registration
  returns, or what a pre-registered client was given (#41).
* :class:`TokenResponse` -- RFC 6749 section 5.1 (and RFC 8693's
  ``issued_token_type``); :class:`OAuthErrorResponse` -- section 5.2.

``from_json`` checks the members this package relies on (type, presence,
absolute URLs) and keeps every other member in ``extra``, so nothing the
peer sent is lost; a document that breaks a rule raises
:class:`InvalidMetadata` naming the member. ``to_json`` writes the wire form.
No I/O here: :mod:`mcp_ref.basic.transports.oauth_client` fetches.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Self, TypeVar
from urllib.parse import urlsplit

import attrs

__all__ = [
    "InvalidMetadata",
    "ProtectedResourceMetadata",
    "AuthorizationServerMetadata",
    "ClientMetadata",
    "ClientInformation",
    "TokenResponse",
    "OAuthErrorResponse",
    "is_absolute_url",
    "is_loopback_url",
    "LOOPBACK_HOSTS",
]

#: hosts that name this machine: http:// is tolerated there (decision, see the chapter note)
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


class InvalidMetadata(ValueError):
    """A document breaks a rule; ``member`` names where (``"token_endpoint"``, ``"scopes_supported[2]"``)."""

    def __init__(self, document: str, member: str, problem: str) -> None:
        super().__init__(f"{document}: {member}: {problem}" if member else f"{document}: {problem}")
        self.document = document
        self.member = member
        self.problem = problem


def is_absolute_url(value: str, schemes: Sequence[str] = ("https", "http")) -> bool:
    """Whether ``value`` is an absolute URL of one of ``schemes`` with a host and no fragment."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (raises ValueError for a port that is not a number or out of range)
    except ValueError:
        return False
    return parts.scheme.lower() in schemes and bool(parts.hostname) and not parts.fragment and "#" not in value


def is_loopback_url(value: str) -> bool:
    """Whether ``value`` points at this machine (127.0.0.1, ::1 or localhost)."""
    try:
        host = urlsplit(value).hostname
    except ValueError:
        return False
    return host is not None and host.lower() in LOOPBACK_HOSTS


T = TypeVar("T")


class _Reader:
    """Reads members of one JSON object, raising :class:`InvalidMetadata` on the first bad one."""

    def __init__(self, document: str, data: Any) -> None:
        if not isinstance(data, Mapping):
            raise InvalidMetadata(document, "", f"expected a JSON object, got {type(data).__name__}")
        self.document = document
        self.data = data
        self.used: set[str] = set()

    def fail(self, member: str, problem: str) -> InvalidMetadata:
        return InvalidMetadata(self.document, member, problem)

    def _get(self, name: str, required: bool) -> Any:
        self.used.add(name)
        value = self.data.get(name)
        if value is None and required:
            raise self.fail(name, "required, missing")
        return value

    def text(self, name: str, *, required: bool = False) -> str | None:
        value = self._get(name, required)
        if value is not None and not isinstance(value, str):
            raise self.fail(name, f"expected a string, got {type(value).__name__}")
        return value

    def required_str(self, name: str) -> str:
        value = self.text(name, required=True)
        assert value is not None
        if not value:
            raise self.fail(name, "must not be empty")
        return value

    def url(self, name: str, *, required: bool = False) -> str | None:
        value = self.text(name, required=required)
        if value is not None and not is_absolute_url(value):
            raise self.fail(name, f"expected an absolute http(s) URL without fragment, got {value!r}")
        return value

    def texts(self, name: str, *, required: bool = False) -> tuple[str, ...] | None:
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.fail(name, f"expected an array of strings, got {type(value).__name__}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{name}[{i}]", f"expected a string, got {type(item).__name__}")
        return tuple(value)

    def urls(self, name: str, *, required: bool = False) -> tuple[str, ...] | None:
        values = self.texts(name, required=required)
        for i, item in enumerate(values or ()):
            if not is_absolute_url(item):
                raise self.fail(f"{name}[{i}]", f"expected an absolute http(s) URL, got {item!r}")
        return values

    def flag(self, name: str) -> bool | None:
        value = self._get(name, False)
        if value is not None and not isinstance(value, bool):
            raise self.fail(name, f"expected true or false, got {value!r}")
        return value

    def number(self, name: str) -> int | None:
        value = self._get(name, False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise self.fail(name, f"expected a number, got {value!r}")
        if not -(2**53) <= value <= 2**53:
            # (JSON reads 1e400 as infinity, and 10**400 as an int no clock arithmetic survives)
            raise self.fail(name, "a number out of any usable range")
        return int(value)

    def mapping(self, name: str) -> dict[str, Any] | None:
        value = self._get(name, False)
        if value is not None and not isinstance(value, dict):
            raise self.fail(name, f"expected an object, got {type(value).__name__}")
        return value

    def extra(self) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if k not in self.used}


def _json(obj: Any) -> dict[str, Any]:
    """The wire form of a document: known members that are set, then ``extra``."""
    out: dict[str, Any] = {}
    for field in attrs.fields(type(obj)):
        if field.name == "extra":
            continue
        value = getattr(obj, field.name)
        if value is not None:
            out[field.name] = list(value) if isinstance(value, tuple) else value
    return {**obj.extra, **out}


@attrs.frozen(kw_only=True)
class ProtectedResourceMetadata:
    """RFC 9728 section 2: an MCP server's description of itself as a protected resource."""

    resource: str
    authorization_servers: tuple[str, ...] | None = None
    scopes_supported: tuple[str, ...] | None = None
    bearer_methods_supported: tuple[str, ...] | None = None
    jwks_uri: str | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> Self:
        r = _Reader("protected resource metadata", data)
        resource = r.required_str("resource")
        if not is_absolute_url(resource):
            raise r.fail("resource", f"expected an absolute http(s) URL without fragment, got {resource!r}")
        return cls(
            resource=resource,
            authorization_servers=r.urls("authorization_servers"),
            scopes_supported=r.texts("scopes_supported"),
            bearer_methods_supported=r.texts("bearer_methods_supported"),
            jwks_uri=r.url("jwks_uri"),
            resource_name=r.text("resource_name"),
            resource_documentation=r.url("resource_documentation"),
            extra=r.extra(),
        )

    def to_json(self) -> dict[str, Any]:
        return _json(self)


@attrs.frozen(kw_only=True)
class AuthorizationServerMetadata:
    """RFC 8414 section 2 (OpenID Connect provider metadata has the same members for what we use).

    ``oidc`` records which of the two documents it was read from (the
    PKCE rule is the same for both: authorization#84-#87).
    """

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    registration_endpoint: str | None = None
    jwks_uri: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    response_types_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_signing_alg_values_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    revocation_endpoint: str | None = None
    introspection_endpoint: str | None = None
    #: draft-ietf-oauth-client-id-metadata-document: the server takes URL client ids (#26, #40)
    client_id_metadata_document_supported: bool | None = None
    #: RFC 9207: authorization responses carry ``iss`` (the mix-up defence)
    authorization_response_iss_parameter_supported: bool | None = None
    oidc: bool = False
    extra: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_json(cls, data: Any, *, oidc: bool = False) -> Self:
        r = _Reader("OpenID provider metadata" if oidc else "authorization server metadata", data)
        issuer = r.required_str("issuer")
        if not is_absolute_url(issuer) or urlsplit(issuer).query:
            # RFC 8414 section 2: an https URL with no query or fragment
            raise r.fail("issuer", f"expected an absolute URL without query or fragment, got {issuer!r}")
        return cls(
            issuer=issuer,
            authorization_endpoint=r.url("authorization_endpoint"),
            token_endpoint=r.url("token_endpoint"),
            registration_endpoint=r.url("registration_endpoint"),
            jwks_uri=r.url("jwks_uri"),
            scopes_supported=r.texts("scopes_supported"),
            response_types_supported=r.texts("response_types_supported"),
            grant_types_supported=r.texts("grant_types_supported"),
            token_endpoint_auth_methods_supported=r.texts("token_endpoint_auth_methods_supported"),
            token_endpoint_auth_signing_alg_values_supported=r.texts(
                "token_endpoint_auth_signing_alg_values_supported"
            ),
            code_challenge_methods_supported=r.texts("code_challenge_methods_supported"),
            revocation_endpoint=r.url("revocation_endpoint"),
            introspection_endpoint=r.url("introspection_endpoint"),
            client_id_metadata_document_supported=r.flag("client_id_metadata_document_supported"),
            authorization_response_iss_parameter_supported=r.flag("authorization_response_iss_parameter_supported"),
            oidc=oidc,
            extra=r.extra(),
        )

    def to_json(self) -> dict[str, Any]:
        out = _json(self)
        out.pop("oidc", None)
        return out

    def grant_types(self) -> tuple[str, ...]:
        """The grants the server takes; RFC 8414's default when it does not say."""
        return self.grant_types_supported or ("authorization_code", "implicit")

    def token_auth_methods(self) -> tuple[str, ...]:
        """Token endpoint client authentication methods; RFC 8414's default when absent."""
        return self.token_endpoint_auth_methods_supported or ("client_secret_basic",)


@attrs.frozen(kw_only=True)
class ClientMetadata:
    """RFC 7591 section 2: a client's metadata (a registration request, or a CIMD with ``client_id``)."""

    redirect_uris: tuple[str, ...] | None = None
    client_name: str | None = None
    client_id: str | None = None
    token_endpoint_auth_method: str | None = None
    grant_types: tuple[str, ...] | None = None
    response_types: tuple[str, ...] | None = None
    scope: str | None = None
    client_uri: str | None = None
    logo_uri: str | None = None
    contacts: tuple[str, ...] | None = None
    tos_uri: str | None = None
    policy_uri: str | None = None
    jwks_uri: str | None = None
    jwks: dict[str, Any] | None = None
    software_id: str | None = None
    software_version: str | None = None
    #: OpenID Connect Dynamic Client Registration 1.0: ``"native"`` or ``"web"`` (OIDC's default)
    application_type: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> Self:
        r = _Reader("client metadata", data)
        return cls(**_client_members(r), extra=r.extra())

    def to_json(self) -> dict[str, Any]:
        return _json(self)


def _client_members(r: _Reader) -> dict[str, Any]:
    return {
        "redirect_uris": r.texts("redirect_uris"),
        "client_name": r.text("client_name"),
        "client_id": r.text("client_id"),
        "token_endpoint_auth_method": r.text("token_endpoint_auth_method"),
        "grant_types": r.texts("grant_types"),
        "response_types": r.texts("response_types"),
        "scope": r.text("scope"),
        "client_uri": r.text("client_uri"),
        "logo_uri": r.text("logo_uri"),
        "contacts": r.texts("contacts"),
        "tos_uri": r.text("tos_uri"),
        "policy_uri": r.text("policy_uri"),
        "jwks_uri": r.text("jwks_uri"),
        "jwks": r.mapping("jwks"),
        "software_id": r.text("software_id"),
        "software_version": r.text("software_version"),
        "application_type": r.text("application_type"),
    }


@attrs.frozen(kw_only=True)
class ClientInformation:
    """RFC 7591 section 3.2.1: the credentials a client authenticates with (registered or pre-registered).

    ``issuer`` is ours, not RFC 7591's: the authorization server these
    credentials belong to, so that they are never presented to another one.
    """

    #: the client id the authorization server gave (or you registered)
    client_id: str
    #: the secret of a confidential client (None: a public client)
    client_secret: str | None = None
    #: when the id was issued (seconds since the epoch)
    client_id_issued_at: int | None = None
    #: when the secret expires (0: never)
    client_secret_expires_at: int | None = None
    #: how the client authenticates at the token endpoint
    token_endpoint_auth_method: str | None = None
    #: the redirect URIs registered
    redirect_uris: tuple[str, ...] | None = None
    #: the grant types registered
    grant_types: tuple[str, ...] | None = None
    #: the scopes registered
    scope: str | None = None
    issuer: str | None = None
    #: the other members of the registration response
    extra: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> Self:
        """Read what ``to_json`` wrote (or a registration response's JSON)."""
        r = _Reader("client information", data)
        client_id = r.required_str("client_id")
        return cls(
            client_id=client_id,
            client_secret=r.text("client_secret"),
            client_id_issued_at=r.number("client_id_issued_at"),
            client_secret_expires_at=r.number("client_secret_expires_at"),
            token_endpoint_auth_method=r.text("token_endpoint_auth_method"),
            redirect_uris=r.texts("redirect_uris"),
            grant_types=r.texts("grant_types"),
            scope=r.text("scope"),
            issuer=r.text("issuer"),
            extra=r.extra(),
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON object form of these credentials, for a TokenStorage to keep."""
        return _json(self)

    def secret_expired(self, now: float) -> bool:
        """RFC 7591: ``client_secret_expires_at`` 0 means never."""
        return bool(self.client_secret_expires_at) and now >= (self.client_secret_expires_at or 0)


@attrs.frozen(kw_only=True)
class TokenResponse:
    """RFC 6749 section 5.1: a successful token response."""

    access_token: str
    token_type: str
    expires_in: int | None = None
    refresh_token: str | None = None
    scope: str | None = None
    #: RFC 8693 section 2.2.1: the kind of token a token exchange issued
    issued_token_type: str | None = None
    id_token: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> Self:
        r = _Reader("token response", data)
        expires_in = r.number("expires_in")
        if expires_in is not None and expires_in < 0:
            raise r.fail("expires_in", f"must not be negative, got {expires_in}")
        return cls(
            access_token=r.required_str("access_token"),
            token_type=r.required_str("token_type"),
            expires_in=expires_in,
            refresh_token=r.text("refresh_token"),
            scope=r.text("scope"),
            issued_token_type=r.text("issued_token_type"),
            id_token=r.text("id_token"),
            extra=r.extra(),
        )

    def to_json(self) -> dict[str, Any]:
        return _json(self)


@attrs.frozen(kw_only=True)
class OAuthErrorResponse:
    """RFC 6749 section 5.2 (and 4.1.2.1 for the authorization endpoint): an OAuth error."""

    error: str
    error_description: str | None = None
    error_uri: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> Self:
        r = _Reader("error response", data)
        return cls(
            error=r.required_str("error"),
            error_description=r.text("error_description"),
            error_uri=r.text("error_uri"),
            extra=r.extra(),
        )

    def to_json(self) -> dict[str, Any]:
        return _json(self)

    def __str__(self) -> str:
        return f"{self.error}: {self.error_description}" if self.error_description else self.error
