"""The client side of basic/authorization on trio: discovery, registration, the flows, tokens.

::

    async with open_loopback_callback() as callback:          # http://127.0.0.1:PORT/callback
        auth = OAuthClient(
            client_name="My MCP client",
            redirect_uri=callback.redirect_uri,
            redirect_handler=print_url,                          # or open_in_browser
            callback_handler=callback,
            storage=FileTokenStorage("~/.config/myapp/tokens.json"),
        )
        async with open_http_client("https://mcp.example.com/mcp", auth=auth) as client:
            ...

The HTTP channel asks :meth:`OAuthClient.authorization` for the
``Authorization`` header of every request to the MCP server (refreshing a
token that is about to expire), and calls :meth:`OAuthClient.challenged`
when the server answers 401, or 403 ``insufficient_scope``; on ``True`` it
sends the request again. What happens in between, in the spec's order:

1. Protected resource metadata (RFC 9728): the challenge's
   ``resource_metadata``, else the path-aware then the root well-known URL
   (authorization#15); its ``resource`` must be the server we talk to
   (refused otherwise). None at all: the 2025-03-26 fallbacks (metadata at
   the MCP server's origin, then ``/authorize``, ``/token``, ``/register``).
2. Authorization server metadata: RFC 8414 and OpenID Connect URLs in the
   order of #24/#25; its ``issuer`` must be the one asked for (mix-up
   defence); every endpoint https (or loopback, see the chapter note).
3. A client id: pre-registered credentials, else a Client ID Metadata
   Document where the server takes them, else Dynamic Client Registration
   (#26, with the OpenID Connect ``application_type``), kept in the
   :class:`TokenStorage` under the authorization server's issuer and never
   shown to another one: when the protected resource metadata names a new
   authorization server, the client registers again there (2026-07-28).
4. Tokens: the authorization code grant with PKCE S256 (refused unless
   advertised), ``state``, the exact redirect URI and RFC 8707 ``resource``,
   the redirect's ``iss`` compared with the issuer recorded for the request
   (RFC 9207) before the code is redeemed (or an extension grant: :class:`ClientCredentials`,
   :class:`CrossAppAccess`); scope by the Scope Selection Strategy, with
   ``offline_access`` where listed; refresh before expiry and on 401;
   step-up on 403 ``insufficient_scope``, a bounded number of times per scope.

Every failure is one :class:`~mcp_ref.errors.AuthorizationError` whose
``step`` names what failed. The access token goes only to the MCP server's
origin, only in the ``Authorization`` header (#54-#56, #61).
"""

import logging
import ssl
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urlsplit

import attrs
import trio

from ...errors import AuthorizationError, HTTPTransportError
from ..authorization.challenge import BearerChallenge, bearer_challenge
from ..authorization.client import (
    AuthorizationDenied,
    AuthorizationResponse,
    application_type_for,
    authorization_request_url,
    check_authorization_response,
    check_cimd_url,
    check_redirect_uri,
    choose_registration,
    select_scope,
    step_up_scope,
)
from ..authorization.discovery import (
    authorization_server_metadata_urls,
    canonical_resource,
    issuer_matches,
    legacy_endpoints,
    legacy_metadata_url,
    origin,
    protected_resource_metadata_urls,
    resource_allowed,
    same_origin,
)
from ..authorization.metadata import (
    AuthorizationServerMetadata,
    ClientInformation,
    ClientMetadata,
    InvalidMetadata,
    OAuthErrorResponse,
    ProtectedResourceMetadata,
    TokenResponse,
    is_loopback_url,
)
from ..authorization.pkce import PKCE, new_state, supports_s256
from ..authorization.tokens import (
    GRANT_AUTHORIZATION_CODE,
    GRANT_CLIENT_CREDENTIALS,
    GRANT_JWT_BEARER,
    GRANT_REFRESH_TOKEN,
    GRANT_TOKEN_EXCHANGE,
    TOKEN_TYPE_ID_JAG,
    TOKEN_TYPE_ID_TOKEN,
    TokenRequest,
    Tokens,
    UnsupportedAuthMethod,
    choose_auth_method,
    client_assertion_claims,
    header_safe_problem,
    token_request,
)
from .fetch_rules import FetchPolicy, FetchRefused, policy_for_server
from .http_fetch import HttpAnswer, http_exchange
from .oauth_callback import CallbackListenError, LoopbackCallback, open_in_browser, open_loopback_callback, print_url
from .oauth_storage import FileTokenStorage, InMemoryTokenStorage, StoredAuthorization, TokenStorage

__all__ = [
    "OAuthClient",
    "ClientCredentials",
    "CrossAppAccess",
    "TokenStorage",
    "StoredAuthorization",
    "InMemoryTokenStorage",
    "FileTokenStorage",
    "LoopbackCallback",
    "CallbackListenError",
    "open_loopback_callback",
    "print_url",
    "open_in_browser",
    "sign_client_assertion",
    "FetchPolicy",
]

log = logging.getLogger("mcp_ref.oauth")

T = TypeVar("T")
RedirectHandler = Callable[[str], Awaitable[None]]
CallbackHandler = Callable[[], Awaitable[AuthorizationResponse]]


# -- extension grants ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ClientCredentials:
    """The ``client_credentials`` grant (OAuth 2.1 section 4.2): a client acting on its own behalf.

    Authenticated with ``client_secret`` (``client_secret_basic`` or
    ``_post``, as the server lists them) or with ``private_key`` (a PEM
    private key: ``private_key_jwt``, RFC 7523, signed with
    ``signing_algorithm``; needs the ``auth-jwt`` extra).
    """

    #: the client's id at the authorization server
    client_id: str
    client_secret: str | None = attrs.field(default=None, repr=False)
    private_key: str | None = attrs.field(default=None, repr=False)
    signing_algorithm: str = "ES256"

    def __attrs_post_init__(self) -> None:
        if (self.client_secret is None) == (self.private_key is None):
            raise ValueError("ClientCredentials takes a client_secret or a private_key (one of them)")


@attrs.frozen(kw_only=True)
class CrossAppAccess:
    """Cross-app access (the enterprise-managed authorization extension, SEP-990).

    The user's identity provider issued ``id_token`` to this application
    (``idp_client_id``). It is exchanged at the IdP's token endpoint (RFC
    8693) for an identity assertion grant (ID-JAG) naming the MCP server's
    authorization server and resource; that is presented to the
    authorization server as a JWT bearer grant (RFC 7523), the client
    authenticated with ``client_id`` / ``client_secret``. No browser.
    """

    #: the identity provider's token endpoint (the token exchange)
    idp_token_endpoint: str
    id_token: str = attrs.field(repr=False)
    idp_client_id: str
    client_id: str
    client_secret: str | None = attrs.field(default=None, repr=False)
    #: this application's secret at the identity provider, if it has one
    idp_client_secret: str | None = attrs.field(default=None, repr=False)


Grant = ClientCredentials | CrossAppAccess


def sign_client_assertion(claims: Mapping[str, Any], private_key: str, algorithm: str = "ES256") -> str:
    """A signed JWT of ``claims`` (RFC 7523 client authentication); needs PyJWT (the ``auth-jwt`` extra)."""
    try:
        import jwt
    except ModuleNotFoundError as e:  # pragma: no cover  (the test extra installs PyJWT)
        raise ImportError("private_key_jwt needs the auth-jwt extra: pip install 'mcp_ref[auth-jwt]'") from e
    return jwt.encode(dict(claims), private_key, algorithm=algorithm)


# -- the client ---------------------------------------------------------------------------------------------


class _Discovered:
    """What discovery found for one MCP server."""

    def __init__(self) -> None:
        self.resource_metadata: ProtectedResourceMetadata | None = None
        self.resource_metadata_url: str | None = None
        self.server: AuthorizationServerMetadata | None = None
        #: 2025-03-26: no protected resource metadata; the MCP server's origin is the authorization base
        self.legacy = False


class OAuthClient:
    """Authorization for one MCP server, as the MCP client (see the module docstring).

    The authorization code grant (the default) needs ``redirect_uri``,
    ``redirect_handler`` (given the URL to open) and ``callback_handler``
    (returns what the redirect back carried; :func:`open_loopback_callback`
    gives one). A client id comes from ``client_information``
    (pre-registered), ``client_id_metadata_url`` (a Client ID Metadata
    Document the application hosts) or dynamic registration with
    ``client_name`` / ``client_metadata``. ``grant`` selects an extension
    grant instead (:class:`ClientCredentials`, :class:`CrossAppAccess`).

    ``scope`` overrides the Scope Selection Strategy; ``ssl_context`` is for
    the authorization server (and metadata) connections; ``timeout`` and
    ``max_document_size`` bound every exchange with them;
    ``authorization_timeout`` bounds the user's time in the browser;
    ``refresh_margin`` is how long before expiry a token is refreshed;
    ``max_step_up`` how many step-up authorizations one scope may take.
    ``clock`` gives seconds since the epoch (token expiry is wall-clock
    time, as tokens may be stored between runs).

    ``fetch_policy`` says which addresses the URLs the servers name may be
    fetched from (:mod:`~.fetch_rules`): public ones, plus the kind of the MCP
    server's own address, by default; ``FetchPolicy(kinds={"public",
    "private"})`` or ``FetchPolicy(networks=["10.20.0.0/16"])`` allow more.
    """

    def __init__(
        self,
        *,
        redirect_uri: str | None = None,
        redirect_handler: RedirectHandler | None = None,
        callback_handler: CallbackHandler | None = None,
        client_name: str = "mcp_ref client",
        client_metadata: ClientMetadata | None = None,
        client_id_metadata_url: str | None = None,
        client_information: ClientInformation | None = None,
        grant: Grant | None = None,
        storage: TokenStorage | None = None,
        scope: str | None = None,
        want_refresh_token: bool = True,
        ssl_context: ssl.SSLContext | None = None,
        timeout: float = 30.0,
        max_document_size: int = 256 * 1024,
        authorization_timeout: float = 300.0,
        refresh_margin: float = 60.0,
        max_step_up: int = 2,
        clock: Callable[[], float] = time.time,
        fetch_policy: FetchPolicy | None = None,
    ) -> None:
        if grant is None:
            if redirect_uri is None or redirect_handler is None or callback_handler is None:
                raise ValueError(
                    "the authorization code flow needs redirect_uri, redirect_handler and callback_handler "
                    "(see open_loopback_callback), or pass grant=ClientCredentials(...) / CrossAppAccess(...)"
                )
            check_redirect_uri(redirect_uri)  # [basic/authorization#81]
        if client_id_metadata_url is not None:
            check_cimd_url(client_id_metadata_url)  # [basic/authorization#29, #30]
        if max_step_up < 0 or timeout <= 0 or authorization_timeout <= 0 or max_document_size <= 0:
            raise ValueError("limits must be positive")
        self.redirect_uri = redirect_uri
        self.redirect_handler = redirect_handler
        self.callback_handler = callback_handler
        self.client_name = client_name
        self.client_metadata = client_metadata
        self.client_id_metadata_url = client_id_metadata_url
        self.client_information = client_information
        self.grant = grant
        #: where the tokens and registration are kept
        self.storage: TokenStorage = storage if storage is not None else InMemoryTokenStorage()
        self.scope = scope
        #: whether a refresh token is asked for (``offline_access``)
        self.want_refresh_token = want_refresh_token
        self.ssl_context = ssl_context
        self.timeout = timeout
        self.max_document_size = max_document_size
        self.authorization_timeout = authorization_timeout
        self.refresh_margin = refresh_margin
        self.max_step_up = max_step_up
        self.clock = clock
        self.fetch_policy = fetch_policy
        #: fetch_policy with what the MCP server's own address allows (known once it is resolved)
        self._policy: FetchPolicy | None = None
        #: how long one challenge may take to meet (the session's initialize waits this long)
        self.flow_timeout = (authorization_timeout if grant is None else 0) + 6 * timeout
        #: the MCP server this client authorizes for (known at the first request)
        self.server_url: str | None = None
        #: the tokens in use, once obtained
        self.tokens: Tokens | None = None
        #: the registration in use (client id, secret), once known
        self.client: ClientInformation | None = None
        self._issuer: str | None = None
        self._found = _Discovered()
        self._lock = trio.Lock()
        self._loaded = False
        self._step_ups: Counter[frozenset[str]] = Counter()
        #: the scope the last authorization asked for (what a token without ``scope`` was granted)
        self._requested_scope: str | None = None
        #: whether the last well-known URL tried answered at all (see _candidate)
        self._answered = False

    # -- what the HTTP channel calls -------------------------------------------------------------------

    def bind(self, server_url: str) -> None:
        """Tie this client to the MCP server at ``server_url`` (the first use does it; another server is refused)."""
        if self.server_url is None:
            self.server_url = server_url
        elif canonical_resource(self.server_url) != canonical_resource(server_url):
            raise ValueError(f"this OAuthClient is for {self.server_url}, not {server_url}: use one per server")

    @property
    def key(self) -> str:
        """Where this client's tokens are kept in its storage (the server's canonical URI, once known)."""
        assert self.server_url is not None
        return canonical_resource(self.server_url)

    async def authorization(self, url: str) -> str | None:
        """[basic/authorization#54, #55, #56, 2026-07-28:basic/authorization/index#39] the ``Authorization``
        value for a request to ``url``.

        Only for the MCP server's origin (#61: never another's); a token
        about to expire is refreshed first (a refresh that fails leaves no
        token: the server's 401 then starts a new authorization).
        """
        self.bind(self.server_url or url)
        if not same_origin(url, self.server_url or url):
            return None
        async with self._lock:
            await self._load()
            tokens = self.tokens
            if tokens is not None and tokens.due(self.clock(), self.refresh_margin) and tokens.refresh_token:
                try:
                    await self._refresh()
                except AuthorizationError as e:
                    log.warning("%s; authorizing again at the next 401", e)
                    self.tokens = None
                    await self._store()
            return self.tokens.authorization() if self.tokens is not None else None

    async def challenged(
        self, url: str, status: int, www_authenticate: str | None, used: str | None, *, again: bool = False
    ) -> bool:
        """The MCP server refused a request that carried ``used`` (its Authorization, or None).

        ``again``: this request was already sent again after an earlier
        challenge. Returns True when new authorization is in place and the
        request should be sent again, False when this refusal is not one
        authorization can answer. Raises AuthorizationError when the
        authorization failed.
        """
        self.bind(self.server_url or url)
        challenge = bearer_challenge(www_authenticate) or BearerChallenge()
        async with self._lock:
            await self._load()
            current = self.tokens.authorization() if self.tokens is not None else None
            if current is not None and current != used:
                return True  # another request obtained new tokens meanwhile
            if status == 403:
                return await self._step_up(challenge)
            if status != 401:
                return False
            if again and used is not None:
                # a 401 for the token obtained for this very request: asking again would loop
                raise AuthorizationError(
                    "token",
                    "the MCP server refuses the access token just issued for it "
                    f"(HTTP 401: {_challenge_text(challenge)})",
                    status=401,
                    url=self.server_url,
                )
            if used is not None and self._found.server is not None:
                # [2026-07-28:basic/authorization/client-registration#25] our token refused: the
                # resource may have moved to another authorization server, which the protected
                # resource metadata says (read again; the tokens and client id of the old one
                # are dropped then, so neither a refresh nor the client id goes to the new one)
                await self._discover(challenge, recheck=True)
            # [2026-07-28:basic/authorization/index#51] a refresh only with a refresh token the server
            # chose to issue; without one, a new authorization
            if self.tokens is not None and self.tokens.refresh_token and used is not None:
                try:
                    await self._refresh()
                    return True
                except AuthorizationError as e:
                    log.info("%s; authorizing again", e)
            await self._discover(challenge)
            scope = self.scope or select_scope(
                challenge.scope,
                self._found.resource_metadata,
                self._found.server,
                want_refresh_token=self._wants_refresh(),
            )
            await self._obtain(scope)
            return True

    # -- discovery ------------------------------------------------------------------------------------------

    async def _discover(self, challenge: BearerChallenge, *, recheck: bool = False) -> None:
        """Protected resource metadata, then the authorization server's (or the 2025-03-26 fallbacks).

        Known metadata is used again unless the challenge points at another
        document, or ``recheck`` asks to read the resource's metadata again
        (the authorization server it names is kept when still listed).
        """
        assert self.server_url is not None
        await self._fetch_rules()
        previous = self._found
        if (
            not recheck
            and previous.server is not None
            and (challenge.resource_metadata is None or challenge.resource_metadata == previous.resource_metadata_url)
        ):
            return  # known, and the server points at nothing new
        found = _Discovered()
        prm, prm_url = await self._resource_metadata(challenge)
        if prm is None:
            found.legacy = True
            found.server = await self._legacy_server_metadata()
        else:
            found.resource_metadata, found.resource_metadata_url = prm, prm_url
            current = previous.server
            listed = prm.authorization_servers or ()
            if (
                recheck
                and current is not None
                and not previous.legacy
                and any(issuer_matches(a, current.issuer) for a in listed)
            ):
                found.server = current  # still one of the resource's authorization servers
            else:
                found.server = await self._server_metadata(prm)
        self._found = found
        await self._bind_issuer(found.server.issuer if found.server is not None else None)

    async def _bind_issuer(self, issuer: str | None) -> None:
        """Record the authorization server this MCP server's tokens come from; a change drops them.

        [2026-07-28:basic/authorization/client-registration#24, #25]
        [2026-07-28:basic/authorization/authorization-server-discovery#3]
        tokens and a client id are bound to the authorization server that
        issued them: when the resource names
        another one, neither is presented there (a registration at the new
        server is looked up or made, see _client_for). Pre-registered
        credentials given without an ``issuer`` are taken to belong to the
        first authorization server they were used with: a change is an error
        (client-registration#26) rather than a guess.
        -- client-registration#authorization-server-binding
        """
        old = self._issuer
        if old is not None and issuer != old:
            pre = self.client_information
            if pre is not None and pre.issuer is None and self.grant is None:
                # [2026-07-28:basic/authorization/client-registration#26] surfaced, not tried elsewhere
                raise AuthorizationError(
                    "registration",
                    f"the pre-registered client {pre.client_id!r} was used with authorization server {old}, "
                    f"but {self.server_url} now names {issuer}: credentials of one authorization server are "
                    "never presented to another; pass ClientInformation(..., issuer=...) for the new one",
                    url=self.server_url,
                )
            # [basic/authorization#61] tokens and a client id of another authorization server are
            # never presented here
            log.info(
                "the authorization server changed (%s -> %s): its tokens and client id are not used here",
                old,
                issuer,
            )
            self.tokens, self.client = None, None
        self._issuer = issuer
        await self._store()

    async def _resource_metadata(
        self, challenge: BearerChallenge
    ) -> tuple[ProtectedResourceMetadata | None, str | None]:
        """[basic/authorization#9, #15] the header's URL, else the well-known ones; None: there is none."""
        assert self.server_url is not None
        step = "resource-metadata"
        # the header's URL when there is one (and then only it: the server said where its metadata
        # is), otherwise the well-known URLs in order
        if challenge.resource_metadata is not None:
            candidates = [challenge.resource_metadata]
        else:
            candidates = protected_resource_metadata_urls(self.server_url)
        problems: list[str] = []
        deadline = trio.current_time() + self.timeout
        for url in candidates:
            # the document names the authorization server the user will log in at: read it over
            # TLS when the server is on TLS, never over plain HTTP someone could rewrite; and only
            # from where the fetch rules allow (the header's URL is the server's to choose)
            self._check_target(url, step, https=urlsplit(self.server_url).scheme == "https")
            response = await self._candidate(url, step, problems, deadline)
            if response is None:
                continue
            prm = self._document(response, step, ProtectedResourceMetadata.from_json)
            if not resource_allowed(prm.resource, self.server_url):
                # [basic/authorization#47] a token for that resource would not be one for this
                # server: refused outright, never a reason to look elsewhere
                raise AuthorizationError(
                    step,
                    f"{url} describes {prm.resource!r}, not this server ({self.server_url}); refusing to authorize",
                    url=url,
                    error="resource_mismatch",
                )
            if not prm.authorization_servers:
                # [basic/authorization#13]
                raise AuthorizationError(step, f"{url} names no authorization server", url=url)
            return prm, url
        if problems:
            # something answered, but badly: say so rather than guess at 2025-03-26 defaults
            raise AuthorizationError(step, "; ".join(problems), url=candidates[0])
        return None, None

    async def _server_metadata(self, prm: ProtectedResourceMetadata) -> AuthorizationServerMetadata:
        """[basic/authorization#11, #23, #24, #25] the first authorization server whose metadata can be had."""
        step = "authorization-server-metadata"
        assert prm.authorization_servers
        problems: list[str] = []
        # one deadline for every well-known URL (not ``timeout`` for each: a slow server would
        # take a multiple of it to give up on)
        deadline = trio.current_time() + self.timeout
        for issuer in prm.authorization_servers:
            self._check_target(issuer, step)
            answered = False
            for url, oidc in authorization_server_metadata_urls(issuer):
                response = await self._candidate(url, step, problems, deadline)
                answered = answered or self._answered
                if response is None:
                    continue
                meta: AuthorizationServerMetadata = self._document(
                    response, step, partial(AuthorizationServerMetadata.from_json, oidc=oidc)
                )
                # [2026-07-28:basic/authorization/authorization-server-discovery#10, #11, #12] the issuer
                # of the document is the one its URL was built from, else the document is not used
                if not issuer_matches(issuer, meta.issuer):
                    # RFC 8414 section 3.3 (and the mix-up attack it prevents): a document that
                    # speaks for another issuer is never used
                    raise AuthorizationError(
                        step,
                        f"{url} is the metadata of issuer {meta.issuer!r}, not of {issuer!r}",
                        url=url,
                        error="issuer_mismatch",
                    )
                self._check_endpoints(meta, step)
                return meta
            if answered:
                problems.append(f"{issuer}: no metadata at any well-known URL")
            else:
                problems.append(f"{issuer} is unreachable")
        raise AuthorizationError(step, "; ".join(problems), url=prm.authorization_servers[0])

    async def _legacy_server_metadata(self) -> AuthorizationServerMetadata:
        """2025-03-26: metadata at the MCP server's origin, else the default endpoints there."""
        assert self.server_url is not None
        step = "authorization-server-metadata"
        url = legacy_metadata_url(self.server_url)
        response = await self._get(url, step)
        # [2025-03-26:basic/authorization#18] the metadata document first; the default endpoints
        # only when the server has none
        if response.status == 200:
            # Decision: no issuer check here -- there was no issuer to ask about, only an origin
            meta = self._document(response, step, AuthorizationServerMetadata.from_json)
            self._check_endpoints(meta, step)
            return meta
        if response.status not in (404, 405, 410):
            problem = f"{url}: HTTP {response.status}: {_start(response)!r}"
            raise AuthorizationError(step, problem, status=response.status, url=url)
        log.info("%s has no authorization metadata: using the 2025-03-26 default endpoints", self.server_url)
        endpoints = legacy_endpoints(self.server_url)
        meta = AuthorizationServerMetadata(
            issuer=origin(self.server_url),
            authorization_endpoint=endpoints["authorization_endpoint"],
            token_endpoint=endpoints["token_endpoint"],
            registration_endpoint=endpoints["registration_endpoint"],
            # Decision: 2025-03-26 required PKCE of every server without saying how to tell;
            # its default endpoints are taken to do S256 (the spec_notes say so)
            code_challenge_methods_supported=("S256",),
            grant_types_supported=("authorization_code", "refresh_token"),
        )
        self._check_endpoints(meta, step)
        return meta

    def _check_endpoints(self, meta: AuthorizationServerMetadata, step: str) -> None:
        # (the authorization endpoint is opened in the user's browser, not fetched: only what the
        # URL itself says can be checked -- its scheme, and its host when that is an address)
        for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
            url = getattr(meta, name)
            if url is not None:
                self._check_target(url, step)

    async def _fetch_rules(self) -> FetchPolicy:
        """The fetch rules for this MCP server (its own address resolved once, on first need)."""
        assert self.server_url is not None
        if self._policy is None:
            self._policy = await policy_for_server(self.server_url, self.fetch_policy, timeout=self.timeout)
        return self._policy

    def _check_target(self, url: str, step: str, *, https: bool = True) -> None:
        """A URL a server named, before anything is fetched from it or the user sent to it.

        [basic/authorization#79, #80] https (``https``: required), plain http only to this
        machine and only where the fetch rules let the client reach it -- not merely because the
        URL says 127.0.0.1 (a remote server could send the client at the user's own machine);
        an address in the URL must be one the rules allow (host names are checked as resolved,
        at the fetch).
        """
        policy = self._policy if self._policy is not None else FetchPolicy()
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            # (before: a ValueError from the HTTP layer, not an authorization failure)
            problem = f"{url} is not an http or https URL with a host: refusing to fetch it"
            raise AuthorizationError(step, problem, url=url, error="fetch_refused")
        if https and parts.scheme.lower() != "https" and not policy.plain_http_allowed(url):
            raise AuthorizationError(step, f"{url} is not https: authorization server endpoints must be", url=url)
        try:
            policy.check_literal(url)
        except FetchRefused as e:
            raise AuthorizationError(step, e.message, url=url, error="fetch_refused") from None

    @staticmethod
    def _require_secure(url: str, step: str) -> None:
        """[basic/authorization#79, #80] a URL the application gave is https (loopback excepted)."""
        if urlsplit(url).scheme.lower() != "https" and not is_loopback_url(url):
            raise AuthorizationError(step, f"{url} is not https: authorization server endpoints must be", url=url)

    # -- exchanges ------------------------------------------------------------------------------------------

    async def _candidate(self, url: str, step: str, problems: list[str], deadline: float) -> HttpAnswer | None:
        """A well-known URL's answer when it is a document (200); None to try the next URL.

        Not found (404, 405, 410) is no problem; anything else that went
        wrong is added to ``problems``, reported if no URL gives a document.
        ``deadline`` (trio's clock) bounds all the candidates of one step;
        ``self._answered`` says whether this one answered at all.
        """
        self._answered = False
        remaining = deadline - trio.current_time()
        if remaining <= 0:
            problems.append(f"{url}: not tried (no time left of the {self.timeout:g} s for this step)")
            return None
        try:
            response = await self._exchange("GET", url, step, timeout=min(self.timeout, remaining))
        except AuthorizationError as e:
            problems.append(e.problem)
            return None
        self._answered = True
        if response.status == 200:
            return response
        if response.status not in (404, 405, 410):
            problems.append(f"{url}: HTTP {response.status}")
        return None

    async def _get(self, url: str, step: str) -> HttpAnswer:
        return await self._exchange("GET", url, step)

    async def _exchange(
        self,
        method: str,
        url: str,
        step: str,
        *,
        form: Mapping[str, str] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        trusted: bool = False,
    ) -> HttpAnswer:
        """One exchange with a metadata or authorization server, bounded in time and size, never
        redirected, and (unless the application gave the URL: ``trusted``) only where the fetch
        rules allow; failures are AuthorizationError(step)."""
        policy = None if trusted else await self._fetch_rules()
        try:
            return await http_exchange(
                method,
                url,
                headers=headers,
                form=form,
                json_body=json_body,
                ssl_context=self.ssl_context if urlsplit(url).scheme == "https" else None,
                timeout=self.timeout if timeout is None else timeout,
                max_body=self.max_document_size,
                policy=policy,
            )
        except HTTPTransportError as e:
            raise AuthorizationError(step, e.message, status=e.status, url=url) from e

    @staticmethod
    def _document(response: HttpAnswer, step: str, read: Callable[[Any], T], *, secret: bool = False) -> T:
        """``read`` the JSON document of ``response``; ``secret``: it carries tokens or a client
        secret, so what it holds is never quoted in the error (a form-encoded token answer would be)."""
        try:
            return read(response.json())
        except HTTPTransportError as e:  # not JSON at all (an HTML page ...)
            quoted = f"{len(response.body)} bytes, not shown" if secret else repr(_start(response))
            problem = f"{e.message} ({_content_type(response)}: {quoted})"
            raise AuthorizationError(step, problem, status=response.status, url=response.url) from None
        except InvalidMetadata as e:
            raise AuthorizationError(step, f"{response.url}: {e}", status=response.status, url=response.url) from e

    async def _token_endpoint(self, request: TokenRequest, step: str, *, trusted: bool = False) -> TokenResponse:
        """POST a token request; the response, or AuthorizationError with the server's OAuth error.
        ``trusted``: the application gave the endpoint (an identity provider's), no server named it."""
        response = await self._exchange(
            "POST", request.url, step, form=request.form, headers=request.headers, trusted=trusted
        )
        if response.status != 200:
            error = self._oauth_error(response, step)
            if error.error == "invalid_client" and self._registered_dynamically():
                # the authorization server forgot the client it registered (restarted, expired it):
                # dropped, so the next authorization registers again rather than sending the user
                # to authorize with a client id that no longer exists
                assert self.client is not None
                stale = self.client.client_id
                log.info("%s no longer knows client %s: it will be registered again", request.url, stale)
                if self.client.issuer is not None:
                    await self.storage.save(_registration_key(self.client.issuer), None)
                self.client = None
                await self._store()
            raise error
        return self._document(response, step, TokenResponse.from_json, secret=True)

    def _registered_dynamically(self) -> bool:
        """Whether the client id in use came from Dynamic Client Registration (never pre-registered
        credentials, an extension grant's client, or a Client ID Metadata Document)."""
        client = self.client
        return (
            self.grant is None
            and client is not None
            and (self.client_information is None or client.client_id != self.client_information.client_id)
            and client.client_id != self.client_id_metadata_url
        )

    @staticmethod
    def _oauth_error(response: HttpAnswer, step: str) -> AuthorizationError:
        try:
            error = OAuthErrorResponse.from_json(response.json())
        except (HTTPTransportError, InvalidMetadata):
            return AuthorizationError(
                step,
                f"{response.url} answered HTTP {response.status} ({_content_type(response)}): {_start(response)!r}",
                status=response.status,
                url=response.url,
            )
        return AuthorizationError(
            step,
            f"{response.url} answered HTTP {response.status}: {error}",
            status=response.status,
            url=response.url,
            error=error.error,
            error_description=error.error_description,
        )

    # -- tokens ---------------------------------------------------------------------------------------------

    def _resource(self) -> str:
        """[basic/authorization#45, #47, #48] the ``resource`` parameter: the resource metadata's own identifier
        (checked to be this server, or an ancestor of its path), else this server's canonical URI."""
        assert self.server_url is not None
        prm = self._found.resource_metadata
        return prm.resource if prm is not None else canonical_resource(self.server_url)

    def _wants_refresh(self) -> bool:
        return self.want_refresh_token and not isinstance(self.grant, ClientCredentials)

    async def _obtain(self, scope: str | None) -> None:
        self._requested_scope = scope
        if isinstance(self.grant, ClientCredentials):
            response = await self._client_credentials(self.grant, scope)
        elif isinstance(self.grant, CrossAppAccess):
            response = await self._cross_app_access(self.grant, scope)
        else:
            response = await self._authorization_code(scope)
        self._accept(response, previous=None)
        await self._store()

    def _accept(self, response: TokenResponse, previous: Tokens | None) -> None:
        if response.token_type.lower() != "bearer":
            raise AuthorizationError("token", f"token_type {response.token_type!r}: only Bearer tokens can be used")
        if (problem := header_safe_problem(response.access_token)) is not None:
            # the token goes in an Authorization header: one that cannot is refused here, and the
            # error names what is wrong with it, never the token (it may be a real one, mangled)
            raise AuthorizationError("token", f"the access token issued {problem}; refused")
        tokens = Tokens.from_response(response, self.clock(), previous)
        if tokens.scope is None and self._requested_scope is not None:
            tokens = attrs.evolve(tokens, scope=self._requested_scope)  # granted as requested (RFC 6749 5.1)
        self.tokens = tokens

    async def _refresh(self) -> None:
        """The refresh_token grant (with ``resource``); a rotated refresh token replaces the old one."""
        assert self.tokens is not None and self.tokens.refresh_token is not None
        step = "refresh"
        if self._found.server is None:
            await self._discover(BearerChallenge())
        server = self._found.server
        assert server is not None and server.token_endpoint is not None
        client = self.client or self._grant_client()
        request = self._token_request(
            server,
            GRANT_REFRESH_TOKEN,
            {"refresh_token": self.tokens.refresh_token, "resource": self._resource()},
            client,
            step,
        )
        response = await self._token_endpoint(request, step)
        self._accept(response, previous=self.tokens)
        await self._store()

    def _grant_client(self) -> ClientInformation | None:
        grant = self.grant
        if isinstance(grant, ClientCredentials):
            return ClientInformation(client_id=grant.client_id, client_secret=grant.client_secret)
        if isinstance(grant, CrossAppAccess):
            return ClientInformation(client_id=grant.client_id, client_secret=grant.client_secret)
        return self.client_information

    def _token_request(
        self,
        server: AuthorizationServerMetadata,
        grant_type: str,
        params: Mapping[str, str | None],
        client: ClientInformation | None,
        step: str,
    ) -> TokenRequest:
        if server.token_endpoint is None:
            raise AuthorizationError(step, f"{server.issuer} has no token endpoint")
        assertion = None
        method: str | None = None
        if client is not None:
            grant = self.grant
            if isinstance(grant, ClientCredentials) and grant.private_key is not None:
                method = "private_key_jwt"
                listed = server.token_endpoint_auth_methods_supported
                if listed is not None and method not in listed:
                    problem = f"{server.issuer} does not take private_key_jwt (it lists {', '.join(listed)})"
                    raise AuthorizationError(step, problem)
                claims = client_assertion_claims(client.client_id, server.issuer, self.clock())
                # [basic/authorization#33] private_key_jwt: a signed assertion, no secret
                assertion = sign_client_assertion(claims, grant.private_key, grant.signing_algorithm)
            else:
                try:
                    method = choose_auth_method(server, client)
                except UnsupportedAuthMethod as e:
                    raise AuthorizationError(step, str(e)) from e
        try:
            return token_request(
                server.token_endpoint, grant_type, params, client=client, auth_method=method, client_assertion=assertion
            )
        except UnsupportedAuthMethod as e:
            raise AuthorizationError(step, str(e)) from e

    # -- the grants -----------------------------------------------------------------------------------------

    async def _authorization_code(self, scope: str | None) -> TokenResponse:
        server = self._found.server
        assert server is not None and self.redirect_uri is not None
        assert self.redirect_handler is not None and self.callback_handler is not None
        if not supports_s256(server):
            # [basic/authorization#82, #84, #85, #86, #87] no S256 in the metadata: no PKCE we can
            # rely on, so no authorization at all (never a downgrade to plain or to none)
            raise AuthorizationError(
                "authorization-server-metadata",
                f"{server.issuer} does not advertise PKCE with S256 (code_challenge_methods_supported: "
                f"{list(server.code_challenge_methods_supported or []) or 'absent'}); refusing to proceed",
                error="pkce_not_supported",
            )
        if server.authorization_endpoint is None:
            raise AuthorizationError("authorization-server-metadata", f"{server.issuer} has no authorization endpoint")
        client = await self._client_for(server)
        # [basic/authorization#73, 2026-07-28:basic/authorization/security-considerations#2] OAuth 2.1
        # practice: PKCE (S256) and state on every authorization request
        pkce, state = PKCE.new(), new_state()
        url = authorization_request_url(
            server.authorization_endpoint,
            client_id=client.client_id,
            redirect_uri=self.redirect_uri,
            pkce=pkce,
            state=state,
            resource=self._resource(),
            scope=scope,
        )
        step = "authorization"
        try:
            with trio.fail_after(self.authorization_timeout):
                await self._users(self.redirect_handler, url)
                while True:
                    response = await self._users(self.callback_handler)
                    if response.state == state or response.state is None:
                        break
                    # [basic/authorization#91] a redirect for another request (or forged): discarded
                    log.warning("an authorization response with a state that is not ours was discarded")
        except trio.TooSlowError:
            problem = f"no authorization response within {self.authorization_timeout:g}s"
            raise AuthorizationError(step, problem) from None
        try:
            code = check_authorization_response(response, state=state, server_metadata=server)
        except AuthorizationDenied as e:
            raise AuthorizationError(step, str(e), error=e.error, error_description=e.description) from e
        request = self._token_request(
            server,
            GRANT_AUTHORIZATION_CODE,
            {
                "code": code,
                "redirect_uri": self.redirect_uri,  # exactly the one of the authorization request
                "code_verifier": pkce.verifier,
                "resource": self._resource(),  # [basic/authorization#46, #74]
            },
            client,
            "token",
        )
        return await self._token_endpoint(request, "token")

    @staticmethod
    async def _users(handler: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Call the user's redirect or callback handler: what it raises is the authorization step failing."""
        try:
            return await handler(*args)
        except AuthorizationError:
            raise
        except Exception as e:
            name = getattr(handler, "__qualname__", None) or type(handler).__name__
            raise AuthorizationError("authorization", f"the handler {name} raised {type(e).__name__}: {e}") from e

    async def _client_for(self, server: AuthorizationServerMetadata) -> ClientInformation:
        """[basic/authorization#26] a client id at ``server``: pre-registered, stored, CIMD, or registered now.

        [2026-07-28:basic/authorization/client-registration#24] a stored
        registration is looked up by ``server``'s issuer, and only one made
        there is used. Pre-registered credentials for another issuer are an
        error (client-registration#26), not a reason to register.
        """
        pre = self.client_information
        if pre is not None:
            if pre.issuer is None or issuer_matches(pre.issuer, server.issuer):
                return pre
            # [2026-07-28:basic/authorization/client-registration#26] surfaced, never tried at another server
            raise AuthorizationError(
                "registration",
                f"the pre-registered client {pre.client_id!r} belongs to authorization server {pre.issuer}, "
                f"but {self.server_url} names {server.issuer}: pass client information for that server",
                url=self.server_url,
            )
        stored = self.client
        if stored is None or stored.issuer != server.issuer:
            stored = await self._load_registration(server.issuer)
        if (
            stored is not None
            and stored.issuer == server.issuer
            and (stored.redirect_uris is None or self.redirect_uri in stored.redirect_uris)
            and not stored.secret_expired(self.clock())
        ):
            self.client = stored
            return stored
        how = choose_registration(
            pre_registered=None, client_id_metadata_url=self.client_id_metadata_url, server_metadata=server
        )
        # [basic/authorization#6, #27, 2026-07-28:basic/authorization/client-registration#2] a Client ID
        # Metadata Document when the server takes one
        # -- authorization#client-id-metadata-documents
        if how == "client-id-metadata-document":
            assert self.client_id_metadata_url is not None
            self.client = ClientInformation(
                client_id=self.client_id_metadata_url, token_endpoint_auth_method="none", issuer=server.issuer
            )
        elif how == "dynamic":
            # [basic/authorization#7, #42] else Dynamic Client Registration -- authorization#dynamic-client-registration
            self.client = await self._register(server)
        else:
            raise AuthorizationError(
                "registration",
                f"{server.issuer} offers no registration endpoint"
                + (" and takes no client id metadata documents" if self.client_id_metadata_url else "")
                + ": pre-register a client and pass client_information=ClientInformation(client_id=...)",
            )
        await self._save_registration(self.client)
        return self.client

    async def _register(self, server: AuthorizationServerMetadata) -> ClientInformation:
        """RFC 7591: register this client (a public one where the server allows it)."""
        step = "registration"
        assert server.registration_endpoint is not None and self.redirect_uri is not None
        methods = server.token_auth_methods() if server.token_endpoint_auth_methods_supported else ("none",)
        method = next((m for m in ("none", "client_secret_basic", "client_secret_post") if m in methods), "none")
        # [2026-07-28:basic/authorization/index#49] refresh_token among the grants when refresh tokens are wanted
        grants = ["authorization_code", "refresh_token"] if self._wants_refresh() else ["authorization_code"]
        base = self.client_metadata or ClientMetadata(client_name=self.client_name)
        metadata = attrs.evolve(
            base,
            # [basic/authorization#89] our redirect URI is registered -- authorization#open-redirection
            redirect_uris=(self.redirect_uri,),
            client_name=base.client_name or self.client_name,
            grant_types=base.grant_types or tuple(grants),
            response_types=base.response_types or ("code",),
            token_endpoint_auth_method=base.token_endpoint_auth_method or method,
            # [2026-07-28:basic/authorization/client-registration#18] always named (OpenID Connect
            # takes "web" when it is missing, and refuses loopback redirects for that); one set in
            # client_metadata is the application's, else the redirect URI's (application_type_for)
            # -- client-registration#application-type-and-redirect-uri-constraints
            application_type=base.application_type or application_type_for(self.redirect_uri),
        )
        response = await self._exchange("POST", server.registration_endpoint, step, json_body=metadata.to_json())
        if response.status not in (200, 201):
            error = self._oauth_error(response, step)
            if error.error in ("invalid_redirect_uri", "invalid_client_metadata"):
                # [2026-07-28:basic/authorization/client-registration#21, #22] an OpenID Connect server
                # may refuse the redirect URI for the application type: say what was asked for
                error = AuthorizationError(
                    step,
                    f"{error.problem} (registered as application_type {metadata.application_type!r} with "
                    f"redirect URI {self.redirect_uri}; set ClientMetadata(application_type=...) or use a "
                    "redirect URI this authorization server accepts for that type)",
                    status=error.status,
                    url=error.url,
                    error=error.error,
                    error_description=error.error_description,
                )
            raise error
        info: ClientInformation = self._document(response, step, ClientInformation.from_json, secret=True)
        return attrs.evolve(
            info,
            issuer=server.issuer,
            redirect_uris=info.redirect_uris or (self.redirect_uri,),
            token_endpoint_auth_method=info.token_endpoint_auth_method or metadata.token_endpoint_auth_method,
        )

    async def _client_credentials(self, grant: ClientCredentials, scope: str | None) -> TokenResponse:
        server = self._found.server
        assert server is not None
        client = ClientInformation(client_id=grant.client_id, client_secret=grant.client_secret)
        request = self._token_request(
            server, GRANT_CLIENT_CREDENTIALS, {"scope": scope, "resource": self._resource()}, client, "token"
        )
        return await self._token_endpoint(request, "token")

    async def _cross_app_access(self, grant: CrossAppAccess, scope: str | None) -> TokenResponse:
        server = self._found.server
        assert server is not None
        step = "token-exchange"
        self._require_secure(grant.idp_token_endpoint, step)
        # RFC 8693 at the identity provider: the user's ID token for an ID-JAG naming this
        # authorization server (audience) and this MCP server (resource)
        idp_client = ClientInformation(client_id=grant.idp_client_id, client_secret=grant.idp_client_secret)
        exchange = token_request(
            grant.idp_token_endpoint,
            GRANT_TOKEN_EXCHANGE,
            {
                "requested_token_type": TOKEN_TYPE_ID_JAG,
                "audience": server.issuer,
                "resource": self._resource(),
                "scope": scope,
                "subject_token": grant.id_token,
                "subject_token_type": TOKEN_TYPE_ID_TOKEN,
            },
            client=idp_client,
            auth_method="client_secret_post" if grant.idp_client_secret else "none",
        )
        issued = await self._token_endpoint(exchange, step, trusted=True)
        if issued.issued_token_type not in (None, TOKEN_TYPE_ID_JAG):
            raise AuthorizationError(step, f"the identity provider issued {issued.issued_token_type!r}, not an ID-JAG")
        # RFC 7523 at the authorization server: the ID-JAG as the grant
        client = ClientInformation(client_id=grant.client_id, client_secret=grant.client_secret)
        request = self._token_request(server, GRANT_JWT_BEARER, {"assertion": issued.access_token}, client, "token")
        return await self._token_endpoint(request, "token")

    # -- step-up ---------------------------------------------------------------------------------------

    async def _step_up(self, challenge: BearerChallenge) -> bool:
        """[basic/authorization#69, #70, #71, #72] 403 ``insufficient_scope``: authorize again, with more scope.

        At most ``max_step_up`` times for one challenged scope set; past
        that the request fails with an AuthorizationError (step ``step-up``,
        status 403): a permanent failure, not a loop. It is raised, not
        logged as well: the application decides what to show.
        """
        if challenge.error != "insufficient_scope":
            return False
        wanted = frozenset(challenge.scopes())
        if self._step_ups[wanted] >= self.max_step_up:
            shown = " ".join(sorted(wanted)) or "(none named)"
            raise AuthorizationError(
                "step-up",
                f"scope {shown} still insufficient after {self.max_step_up} step-up authorizations "
                f"(HTTP 403: {_challenge_text(challenge)})",
                status=403,
                url=self.server_url,
            )
        self._step_ups[wanted] += 1
        await self._discover(challenge)
        granted = self.tokens.scope if self.tokens is not None else self._requested_scope
        scope = step_up_scope(granted, challenge.scope, self._found.server, want_refresh_token=self._wants_refresh())
        await self._obtain(scope)
        return True

    # -- storage -------------------------------------------------------------------------------------------

    async def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        stored = await self.storage.load(self.key)
        if stored is not None:
            self.tokens, self._issuer = stored.tokens, stored.issuer
            # (an entry written before registrations were kept by issuer may hold the client id:
            # used only with the issuer it names)
            legacy = stored.client
            if legacy is not None and legacy.issuer is not None and legacy.issuer == stored.issuer:
                self.client = legacy
            if stored.issuer is not None:
                self.client = await self._load_registration(stored.issuer) or self.client

    async def _store(self) -> None:
        """This MCP server's entry: its tokens and the issuer they come from (the client id is the
        issuer's, see _save_registration)."""
        stored = StoredAuthorization(tokens=self.tokens, issuer=self._issuer)
        await self.storage.save(self.key, stored)

    async def _load_registration(self, issuer: str) -> ClientInformation | None:
        """[2026-07-28:basic/authorization/client-registration#24] the client id registered at ``issuer``."""
        stored = await self.storage.load(_registration_key(issuer))
        client = stored.client if stored is not None else None
        return client if client is not None and client.issuer == issuer else None

    async def _save_registration(self, client: ClientInformation) -> None:
        """Keep a client id under its authorization server's issuer (pre-registered ones are config)."""
        if client.issuer is not None:
            await self.storage.save(
                _registration_key(client.issuer), StoredAuthorization(client=client, issuer=client.issuer)
            )


def _registration_key(issuer: str) -> str:
    """The storage key of the client registration at ``issuer`` (an MCP server's key is its
    canonical URI, which has no space)."""
    return f"client-registration {issuer}"


def _challenge_text(challenge: BearerChallenge) -> str:
    text = challenge.error or "no error given"
    return f"{text}: {challenge.error_description}" if challenge.error_description else text


def _content_type(response: HttpAnswer) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip() or "no content type"


def _start(response: HttpAnswer, limit: int = 200) -> str:
    return response.body[:limit].decode("utf-8", "replace")
