"""The built-in :class:`~mcp_ref.basic.authorization.resource_server.TokenVerifier` s, on trio.

::

    verifier = IntrospectionVerifier("http://127.0.0.1:9000/introspect", "mcp-server", "secret")
    verifier = JWTVerifier(issuer="https://as.example", jwks_url="https://as.example/jwks")
    serve_http(server, auth=ProtectedResource(verifier=verifier, authorization_servers=[...]))

Both only say what a token is; the audience, the expiry and the scopes are
checked after them by ``ProtectedResource`` (basic/authorization#58, #60).
The rules (the request, the answer, the claims) are sans-IO in
:mod:`mcp_ref.basic.authorization.verification`; here is the I/O and the clock.
"""

import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import trio

from ...errors import HTTPTransportError
from ..authorization.resource_server import AccessToken, InvalidToken
from ..authorization.verification import (
    JWT_ALGORITHMS,
    TokenCache,
    introspection_request,
    keys_from_jwks,
    token_from_introspection,
    token_from_jwt,
)
from .http_fetch import http_exchange

__all__ = ["IntrospectionVerifier", "JWTVerifier"]


class IntrospectionVerifier:
    """Asks the authorization server about each token (RFC 7662), and keeps the answer briefly.

    ``client_id`` / ``client_secret`` are the resource server's credentials at
    the introspection endpoint. An active token is cached for ``cache_ttl``
    seconds (never past its ``exp``), so a burst of requests costs one
    introspection; a revoked token is then refused at the latest ``cache_ttl``
    seconds after its revocation. A refused token (inactive, or refused on
    reading the answer) is remembered ``refused_ttl`` seconds (``cache_ttl``
    by default), apart from the active ones: a bad token sent 200 times costs
    one introspection, not 200. Requests with the same token at the same time
    share one introspection. A failed introspection (unreachable, slow, not
    200, not JSON) raises, is not remembered, and the request is refused with
    401 (basic/authorization#59).
    """

    def __init__(
        self,
        endpoint: str,
        client_id: str,
        client_secret: str,
        *,
        issuer: str | None = None,
        auth_method: str = "client_secret_basic",
        cache_ttl: float = 60.0,
        cache_size: int = 1000,
        refused_ttl: float | None = None,
        timeout: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        introspection_request("", client_id, client_secret, auth_method=auth_method)  # ValueError early
        #: the introspection endpoint's URL
        self.endpoint = endpoint
        #: this resource server's client id at the introspection endpoint
        self.client_id = client_id
        self._secret = client_secret
        #: the issuer tokens must come from (None: any the endpoint vouches for)
        self.issuer = issuer
        #: how this server authenticates at the endpoint (``client_secret_basic`` or ``client_secret_post``)
        self.auth_method = auth_method
        #: active tokens seen recently, with their answer
        self.cache = TokenCache(cache_ttl, cache_size)
        #: seconds an introspection may take
        self.timeout = timeout
        #: the TLS context for an https endpoint (None: the system's trust store)
        self.ssl_context = ssl_context
        #: seconds since the epoch, for the tokens' expiry
        self.wall_clock = wall_clock

        # (refused tokens: remembered as long as the cache keeps active ones, unless told)
        self.cache.refused_ttl = cache_ttl if refused_ttl is None else refused_ttl
        #: introspections under way, by token digest: a second request with the same token waits for it
        self._asking: dict[bytes, trio.Event] = {}
        #: introspection requests sent
        self.introspections = 0

    async def verify(self, token: str) -> AccessToken:
        """Ask the introspection endpoint about ``token`` (or answer from the cache): the AccessToken of an active
        token; InvalidToken for an inactive one, HTTPTransportError when the endpoint fails.
        """
        now = trio.current_time()
        cached = self.cache.get(token, now, self.wall_clock())
        if cached is not None:
            return cached
        while True:
            refusal = self.cache.refusal(token, now)
            if refusal is not None:
                raise InvalidToken(refusal)
            key = TokenCache.key_of(token)
            asking = self._asking.get(key)
            if asking is None:
                break
            await asking.wait()  # (then the answer is in the cache, or it failed: ask ourselves)
            now = trio.current_time()
            cached = self.cache.get(token, now, self.wall_clock())
            if cached is not None:
                return cached
        self._asking[key] = done = trio.Event()
        try:
            return await self._introspect(token)
        finally:
            del self._asking[key]
            done.set()

    async def _introspect(self, token: str) -> AccessToken:
        now = trio.current_time()
        headers, form = introspection_request(token, self.client_id, self._secret, auth_method=self.auth_method)
        self.introspections += 1
        answer = await http_exchange(
            "POST",
            self.endpoint,
            headers=headers,
            form=form,
            ssl_context=self.ssl_context,
            timeout=self.timeout,
            max_body=64 * 1024,
        )
        if answer.status != 200:
            raise HTTPTransportError(
                f"introspection at {self.endpoint} answered HTTP {answer.status}",
                status=answer.status,
                url=self.endpoint,
            )
        try:
            access = token_from_introspection(answer.json(), issuer=self.issuer)
        except InvalidToken as e:
            self.cache.put_refusal(token, str(e) or "the token is not valid", now)
            raise
        self.cache.put(token, access, now)
        return access


class JWTVerifier:
    """Checks JWT access tokens (RFC 9068) with the issuer's keys; needs the ``auth-jwt`` extra.

    Keys come from ``jwks`` (a JWK Set, as a dict) or are fetched from
    ``jwks_url`` and kept ``jwks_ttl`` seconds; a token signed with a key id
    not among them has the keys fetched again (at most every
    ``refetch_interval`` seconds: a flood of made-up key ids costs one fetch).
    Only asymmetric algorithms are accepted. ``required_typ="at+jwt"``
    insists on the RFC 9068 header type (off by default: many authorization
    servers do not set it).
    """

    def __init__(
        self,
        *,
        issuer: str | None,
        jwks_url: str | None = None,
        jwks: Mapping[str, Any] | None = None,
        algorithms: Sequence[str] = JWT_ALGORITHMS,
        required_typ: str | None = None,
        leeway: float = 0.0,
        jwks_ttl: float = 300.0,
        refetch_interval: float = 30.0,
        timeout: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if (jwks_url is None) == (jwks is None):
            raise ValueError("give the keys as jwks= or where to fetch them as jwks_url=, one of the two")
        if bad := set(algorithms) - set(JWT_ALGORITHMS):
            raise ValueError(f"algorithms {sorted(bad)} are not accepted (asymmetric ones only: {JWT_ALGORITHMS})")
        #: the ``iss`` every token must have (None: not checked)
        self.issuer = issuer
        #: where the issuer's keys are fetched from (None: the ``jwks`` given)
        self.jwks_url = jwks_url
        #: the signature algorithms accepted
        self.algorithms = tuple(algorithms)
        #: the JWT header ``typ`` required (None: any)
        self.required_typ = required_typ
        #: seconds of clock skew allowed on ``exp`` and ``nbf``
        self.leeway = leeway
        #: seconds the fetched keys are kept
        self.jwks_ttl = jwks_ttl
        #: the least seconds between two fetches for an unknown key id
        self.refetch_interval = refetch_interval
        #: seconds a key fetch may take
        self.timeout = timeout
        #: the TLS context for an https ``jwks_url`` (None: the system's trust store)
        self.ssl_context = ssl_context
        self._keys: dict[str | None, Any] | None = keys_from_jwks(dict(jwks)) if jwks is not None else None
        self._fetched_at = -float("inf")
        self._lock = trio.Lock()
        #: how many times the keys were fetched
        self.fetches = 0

    async def verify(self, token: str) -> AccessToken:
        """Check ``token``'s signature with the issuer's keys (fetched again once for an unknown key id) and its
        claims: the AccessToken, or InvalidToken.
        """
        keys = await self._current_keys(refresh=False)
        try:
            return self._check(token, keys)
        except LookupError:
            pass
        # an unknown key id: the issuer may have rotated its keys
        keys = await self._current_keys(refresh=True)
        try:
            return self._check(token, keys)
        except LookupError:
            raise InvalidToken("the token is signed with a key this server does not know") from None

    def _check(self, token: str, keys: Mapping[str | None, Any]) -> AccessToken:
        return token_from_jwt(
            token,
            keys,
            issuer=self.issuer,
            algorithms=self.algorithms,
            required_typ=self.required_typ,
            leeway=self.leeway,
        )

    async def _current_keys(self, *, refresh: bool) -> Mapping[str | None, Any]:
        if self.jwks_url is None:
            assert self._keys is not None
            return self._keys
        async with self._lock:
            age = trio.current_time() - self._fetched_at
            stale = self._keys is None or age >= self.jwks_ttl or (refresh and age >= self.refetch_interval)
            if stale:
                answer = await http_exchange(
                    "GET", self.jwks_url, ssl_context=self.ssl_context, timeout=self.timeout, max_body=256 * 1024
                )
                if answer.status != 200:
                    raise HTTPTransportError(
                        f"JWKS at {self.jwks_url} answered HTTP {answer.status}",
                        status=answer.status,
                        url=self.jwks_url,
                    )
                self._keys = keys_from_jwks(answer.json())
                self._fetched_at = trio.current_time()
                self.fetches += 1
            assert self._keys is not None
            return self._keys
