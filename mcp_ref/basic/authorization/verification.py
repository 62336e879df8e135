"""Access tokens at the resource server, sans-IO: introspection answers and JWT claims.

Two ways a resource server learns what a token means (OAuth 2.1 section 5.2):

* RFC 7662 introspection: :func:`introspection_request` is what to POST,
  :func:`token_from_introspection` turns the answer into an :class:`AccessToken`;
* JWT access tokens (RFC 9068): :func:`token_from_jwt` checks the signature
  and the time claims with PyJWT (the ``auth-jwt`` extra) against the
  issuer's keys (:func:`keys_from_jwks`).

:class:`TokenCache` keeps verified tokens briefly, keyed by a digest (never
the token itself). The drivers that do the I/O are in
:mod:`mcp_ref.basic.transports.token_verifiers`.
"""

import base64
import hashlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote_plus

from .resource_server import AccessToken, InvalidToken

__all__ = [
    "introspection_request",
    "token_from_introspection",
    "token_from_jwt",
    "keys_from_jwks",
    "TokenCache",
    "JWT_ALGORITHMS",
]

#: asymmetric algorithms only: a resource server holding a shared secret could mint tokens itself
JWT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


def introspection_request(
    token: str, client_id: str, client_secret: str, *, auth_method: str = "client_secret_basic"
) -> tuple[dict[str, str], dict[str, str]]:
    """The headers and form of an RFC 7662 introspection request (section 2.1)."""
    form = {"token": token, "token_type_hint": "access_token"}
    if auth_method == "client_secret_post":
        return {}, {**form, "client_id": client_id, "client_secret": client_secret}
    if auth_method != "client_secret_basic":
        raise ValueError(f"introspection client authentication {auth_method!r}: client_secret_basic or _post")
    # RFC 6749 section 2.3.1: both parts form-urlencoded before base64
    pair = f"{quote_plus(client_id)}:{quote_plus(client_secret)}".encode()
    return {"authorization": "Basic " + base64.b64encode(pair).decode("ascii")}, form


def token_from_introspection(answer: Any, *, issuer: str | None = None) -> AccessToken:
    """An RFC 7662 answer (section 2.2) as an :class:`AccessToken`; :class:`InvalidToken` if not active.

    ``issuer``: when given, an ``iss`` in the answer must be it.
    """
    if not isinstance(answer, dict) or not isinstance(answer.get("active"), bool):
        raise ValueError("the introspection answer is not a JSON object with a boolean 'active'")
    if answer["active"] is not True:
        raise InvalidToken("the token is not active")
    token_type = answer.get("token_type")
    if isinstance(token_type, str) and token_type.lower() == "refresh_token":
        raise InvalidToken("a refresh token is not an access token")
    return _access_token(answer, issuer)


def _access_token(claims: Mapping[str, Any], issuer: str | None) -> AccessToken:
    iss = _string(claims, "iss")
    if issuer is not None and iss is not None and iss.rstrip("/") != issuer.rstrip("/"):
        raise InvalidToken("the token was issued by another authorization server")
    audience = _strings(claims.get("aud"))
    scopes = _strings(claims.get("scope", claims.get("scp", "")), split=True)
    return AccessToken(
        subject=_string(claims, "sub"),
        client_id=_string(claims, "client_id") or _string(claims, "azp"),
        scopes=frozenset(scopes),
        audience=tuple(audience),
        expires_at=_checked_times(claims),
        issuer=iss,
        claims=dict(claims),
    )


#: the largest time (seconds since the epoch) a claim may name: where floats stop counting seconds
_MAX_TIME = 2.0**53


def _checked_times(claims: Mapping[str, Any]) -> float | None:
    """``exp`` as seconds since the epoch (None when there is none, or it is not a number),
    once every time claim (``exp``, ``nbf``, ``iat``) is known to be usable.

    A number no clock can be compared with -- infinite, not a number, or past 2**53 (10**400
    made ``float()`` raise, and the server log a traceback for a plain bad token) -- is an
    :class:`InvalidToken`: a token that claims to expire never is not one to accept, and one
    issued or valid from no usable time was not made by a sane issuer (its claims would reach
    the handlers, whose arithmetic on them would fail).
    """
    for name, what in (("nbf", "start of validity (nbf)"), ("iat", "issue time (iat)")):
        _time(claims.get(name), what)
    return _time(claims.get("exp"), "expiry (exp)")


def _time(value: Any, what: str) -> float | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if value != value or not -_MAX_TIME <= value <= _MAX_TIME:
        raise InvalidToken(f"the token's {what} is not a usable time")
    return float(value)


def _strings(value: Any, *, split: bool = False) -> list[str]:
    """A claim that is one string (space-separated when ``split``) or a list of strings."""
    if isinstance(value, str):
        return value.split() if split else [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _string(claims: Mapping[str, Any], name: str) -> str | None:
    value = claims.get(name)
    return value if isinstance(value, str) else None


def keys_from_jwks(jwks: Any) -> dict[str | None, Any]:
    """The signing keys of a JWK Set (RFC 7517), by ``kid``; needs the ``auth-jwt`` extra."""
    jwt = _pyjwt()
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
        raise ValueError("a JWK Set is a JSON object with a 'keys' list")
    keys: dict[str | None, Any] = {}
    for jwk in jwks["keys"]:
        if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig":
            continue
        try:
            keys[jwk.get("kid")] = jwt.PyJWK(jwk).key
        except (jwt.PyJWKError, jwt.InvalidKeyError):
            continue  # a key of a type we cannot use: others may serve
    return keys


def token_from_jwt(
    token: str,
    keys: Mapping[str | None, Any],
    *,
    issuer: str | None,
    algorithms: Sequence[str] = JWT_ALGORITHMS,
    required_typ: str | None = None,
    leeway: float = 0.0,
) -> AccessToken:
    """A JWT access token checked (signature, ``exp``, ``nbf``, ``iss``) and read.

    The audience is not checked here but by :class:`~.resource_server.ProtectedResource`,
    for every verifier alike. :class:`InvalidToken` for anything wrong;
    LookupError when the token names a ``kid`` not in ``keys`` (the caller
    may fetch the keys again).
    """
    jwt = _pyjwt()
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise InvalidToken("the token is not a JWT") from None
    if header.get("alg") not in algorithms:
        raise InvalidToken("the token's signing algorithm is not accepted")
    if required_typ is not None and str(header.get("typ", "")).lower() not in (
        required_typ.lower(),
        "application/" + required_typ.lower(),
    ):
        raise InvalidToken(f"the token is not of type {required_typ}")
    kid = header.get("kid")
    if kid not in keys:
        if kid is None and len(keys) == 1:
            kid = next(iter(keys))
        else:
            raise LookupError(kid)
    try:
        claims = jwt.decode(
            token,
            keys[kid],
            algorithms=list(algorithms),
            issuer=issuer,
            leeway=leeway,
            options={"verify_aud": False, "require": ["exp"], "verify_iat": False},
        )
    except jwt.ExpiredSignatureError:
        raise InvalidToken("the token has expired") from None
    except jwt.PyJWTError as e:
        raise InvalidToken(f"the token is not valid ({type(e).__name__})") from None
    except (OverflowError, ValueError, TypeError):
        # (a time claim PyJWT cannot turn into a number -- Infinity, 1e400 -- in a correctly
        # signed token: refused as any bad token, not reported as a verifier that broke)
        raise InvalidToken("the token's time claims are not usable times") from None
    return _access_token(claims, issuer)


def _pyjwt() -> Any:
    try:
        import jwt  # PyJWT, the auth-jwt extra
    except ImportError:
        raise RuntimeError("JWT access tokens need PyJWT with cryptography: pip install 'mcp_ref[auth-jwt]'") from None
    return jwt


class TokenCache:
    """Verified tokens kept until ``ttl`` passes or they expire; at most ``size`` of them.

    Refused tokens are kept too, ``refused_ttl`` seconds (``ttl`` by default), at most
    ``size`` of them, apart from the verified ones (a flood of bad tokens cannot push a
    good one out): a bad token sent again and again costs one check, not one each time.
    Keyed by the SHA-256 of the token: a dump of the cache holds no usable token.
    Times are the caller's (``now`` for ages, ``wall`` for the tokens' ``exp``).
    """

    def __init__(self, ttl: float = 60.0, size: int = 1000, *, refused_ttl: float | None = None) -> None:
        if ttl < 0 or size < 1 or (refused_ttl is not None and refused_ttl < 0):
            raise ValueError("ttl >= 0, refused_ttl >= 0 and size >= 1")
        self.ttl = ttl
        self.size = size
        self.refused_ttl = ttl if refused_ttl is None else refused_ttl
        self._entries: OrderedDict[bytes, tuple[float, AccessToken]] = OrderedDict()
        self._refused: OrderedDict[bytes, tuple[float, str]] = OrderedDict()

    @staticmethod
    def key_of(token: str) -> bytes:
        """What the cache keys ``token`` by: its SHA-256."""
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()

    _key = key_of

    def get(self, token: str, now: float, wall: float) -> AccessToken | None:
        key = self._key(token)
        entry = self._entries.get(key)
        if entry is None:
            return None
        until, access = entry
        if until <= now or (access.expires_at is not None and access.expires_at <= wall):
            del self._entries[key]
            return None
        return access

    def put(self, token: str, access: AccessToken, now: float) -> None:
        if self.ttl == 0:
            return
        key = self._key(token)
        self._entries[key] = (now + self.ttl, access)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def refusal(self, token: str, now: float) -> str | None:
        """Why ``token`` was refused, if it was within ``refused_ttl``; None otherwise."""
        key = self._key(token)
        entry = self._refused.get(key)
        if entry is None:
            return None
        until, reason = entry
        if until <= now:
            del self._refused[key]
            return None
        return reason

    def put_refusal(self, token: str, reason: str, now: float) -> None:
        if self.refused_ttl == 0:
            return
        key = self._key(token)
        self._refused[key] = (now + self.refused_ttl, reason)
        self._refused.move_to_end(key)
        while len(self._refused) > self.size:
            self._refused.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
