"""PKCE (RFC 7636) with S256 only, and the ``state`` value (authorization#82-#87, #91).

:class:`PKCE` is a fresh verifier and its S256 challenge; the client
refuses to go on unless the authorization server's metadata lists S256
(:func:`supports_s256`): absent ``code_challenge_methods_supported`` means
no PKCE, in RFC 8414 and OpenID Connect documents alike (#85-#87). The
``plain`` method is never used: a client that can hash can do S256 (#83).
"""

import base64
import hashlib
import secrets
import string

import attrs

from .metadata import AuthorizationServerMetadata

__all__ = ["PKCE", "s256_challenge", "supports_s256", "new_state", "VERIFIER_CHARS"]

#: RFC 7636 section 4.1: the unreserved characters a verifier is made of
VERIFIER_CHARS = frozenset(string.ascii_letters + string.digits + "-._~")


def s256_challenge(verifier: str) -> str:
    """BASE64URL(SHA256(verifier)) without padding (RFC 7636 section 4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@attrs.frozen
class PKCE:
    """A code verifier (sent to the token endpoint) and its S256 challenge (sent to the authorization endpoint)."""

    verifier: str
    challenge: str
    method: str = "S256"

    @classmethod
    def new(cls) -> "PKCE":
        # 64 random bytes -> 86 characters of base64url: within 43..128, 512 bits of entropy
        verifier = secrets.token_urlsafe(64)
        return cls(verifier, s256_challenge(verifier))

    def __attrs_post_init__(self) -> None:
        if not 43 <= len(self.verifier) <= 128 or not set(self.verifier) <= VERIFIER_CHARS:
            raise ValueError("a PKCE verifier is 43 to 128 unreserved characters (RFC 7636 section 4.1)")
        if self.method != "S256" or self.challenge != s256_challenge(self.verifier):
            raise ValueError("only the S256 method, with the verifier's own challenge")


def supports_s256(metadata: AuthorizationServerMetadata) -> bool:
    """[basic/authorization#82, #84, #85, #86, #87] whether the server advertises PKCE with S256."""
    return "S256" in (metadata.code_challenge_methods_supported or ())


def new_state() -> str:
    """[basic/authorization#91] an unguessable ``state`` for one authorization request."""
    return secrets.token_urlsafe(32)
