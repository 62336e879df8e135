"""PKCE S256 (RFC 7636) and the S256 requirement read from metadata."""

import pytest

from mcp_ref.basic.authorization.metadata import AuthorizationServerMetadata
from mcp_ref.basic.authorization.pkce import PKCE, VERIFIER_CHARS, new_state, s256_challenge, supports_s256


def test_rfc7636_appendix_b_vector() -> None:
    assert (
        s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


@pytest.mark.req("basic/authorization#82", "basic/authorization#83")
def test_new_pairs_are_fresh_and_valid() -> None:
    pairs = [PKCE.new() for _ in range(50)]
    assert len({p.verifier for p in pairs}) == 50
    for p in pairs:
        assert 43 <= len(p.verifier) <= 128 and set(p.verifier) <= VERIFIER_CHARS
        assert p.method == "S256" and p.challenge == s256_challenge(p.verifier)
    with pytest.raises(ValueError):
        PKCE("short", s256_challenge("short"))
    with pytest.raises(ValueError):
        PKCE("a" * 43, "a" * 43, "plain")


@pytest.mark.req("basic/authorization#84", "basic/authorization#85", "basic/authorization#86", "basic/authorization#87")
@pytest.mark.parametrize("oidc", [False, True])
def test_s256_must_be_advertised(oidc: bool) -> None:
    def meta(methods: list[str] | None) -> AuthorizationServerMetadata:
        doc = {"issuer": "https://as.example"} | (
            {} if methods is None else {"code_challenge_methods_supported": methods}
        )
        return AuthorizationServerMetadata.from_json(doc, oidc=oidc)

    assert supports_s256(meta(["plain", "S256"]))
    assert not supports_s256(meta(None))  # absent: no PKCE at all
    assert not supports_s256(meta(["plain"]))  # a downgrade to plain is refused
    assert not supports_s256(meta([]))


@pytest.mark.req("basic/authorization#91")
def test_states_are_unguessable() -> None:
    states = {new_state() for _ in range(100)}
    assert len(states) == 100 and all(len(s) >= 40 for s in states)
