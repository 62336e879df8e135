"""Held tokens (expiry, rotation) and token requests with each client authentication."""

import base64
from urllib.parse import parse_qs, unquote

import pytest

from mcp_ref.basic.authorization.metadata import AuthorizationServerMetadata, ClientInformation, TokenResponse
from mcp_ref.basic.authorization.tokens import (
    CLIENT_ASSERTION_TYPE_JWT,
    GRANT_AUTHORIZATION_CODE,
    Tokens,
    UnsupportedAuthMethod,
    basic_authorization,
    choose_auth_method,
    client_assertion_claims,
    token_request,
)


def response(**fields: object) -> TokenResponse:
    return TokenResponse.from_json({"access_token": "at", "token_type": "Bearer", **fields})


def test_expiry_and_refresh_margin() -> None:
    tokens = Tokens.from_response(response(expires_in=100), now=1000.0)
    assert tokens.expires_at == 1100.0
    assert not tokens.due(1000.0, margin=60)
    assert tokens.due(1040.0, margin=60)  # within the margin: refresh before it expires
    assert tokens.due(1100.0, margin=0)
    assert not Tokens.from_response(response(), now=0).due(10**12)  # no expiry given
    assert tokens.authorization() == "Bearer at"


@pytest.mark.req("basic/authorization#78")
def test_refresh_token_rotation() -> None:
    first = Tokens.from_response(response(refresh_token="r1", scope="a b"), now=0)
    rotated = Tokens.from_response(response(access_token="at2", refresh_token="r2"), now=10, previous=first)
    assert rotated.refresh_token == "r2" and rotated.scope == "a b"  # new one replaces; scope kept
    kept = Tokens.from_response(response(access_token="at3"), now=20, previous=rotated)
    assert kept.refresh_token == "r2"  # no new one: the old one stays in force
    assert Tokens.from_json(kept.to_json()) == kept
    with pytest.raises(ValueError):
        Tokens.from_json({"refresh_token": "r"})


def meta(methods: list[str] | None) -> AuthorizationServerMetadata:
    doc: dict[str, object] = {"issuer": "https://as.example"}
    if methods is not None:
        doc["token_endpoint_auth_methods_supported"] = methods
    return AuthorizationServerMetadata.from_json(doc)


CONFIDENTIAL = ClientInformation(client_id="c", client_secret="s")
PUBLIC = ClientInformation(client_id="c")


@pytest.mark.parametrize(
    ("methods", "client", "expected"),
    [
        (["client_secret_basic"], CONFIDENTIAL, "client_secret_basic"),
        (["client_secret_post"], CONFIDENTIAL, "client_secret_post"),
        (["client_secret_post", "client_secret_basic"], CONFIDENTIAL, "client_secret_basic"),
        (["none"], PUBLIC, "none"),
        (None, CONFIDENTIAL, "client_secret_basic"),
        (None, PUBLIC, "none"),
        (
            ["none", "client_secret_post"],
            ClientInformation(client_id="c", client_secret="s", token_endpoint_auth_method="client_secret_post"),
            "client_secret_post",
        ),
    ],
)
def test_choose_auth_method(methods: list[str] | None, client: ClientInformation, expected: str) -> None:
    assert choose_auth_method(meta(methods), client) == expected


def test_choose_auth_method_refusals() -> None:
    with pytest.raises(UnsupportedAuthMethod, match="private_key_jwt"):
        choose_auth_method(meta(["private_key_jwt"]), CONFIDENTIAL)
    with pytest.raises(UnsupportedAuthMethod):
        choose_auth_method(meta(["client_secret_basic"]), PUBLIC)
    with pytest.raises(UnsupportedAuthMethod, match="no client_secret"):
        choose_auth_method(
            meta(["client_secret_basic"]),
            ClientInformation(client_id="c", token_endpoint_auth_method="client_secret_basic"),
        )


def test_basic_authorization_form_encodes_each_part() -> None:
    header = basic_authorization("id:with colon", "s€cret")
    raw = base64.b64decode(header.removeprefix("Basic ")).decode()
    client_id, secret = raw.split(":")
    assert unquote(client_id) == "id:with colon" and unquote(secret) == "s€cret"


@pytest.mark.req("basic/authorization#46", "basic/authorization#74")
@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"])
def test_token_request_client_authentication(method: str) -> None:
    params = {
        "code": "abc",
        "redirect_uri": "http://127.0.0.1/cb",
        "code_verifier": "v",
        "resource": "https://r/mcp",
        "scope": None,
    }
    req = token_request(
        "https://as.example/token",
        GRANT_AUTHORIZATION_CODE,
        params,
        client=CONFIDENTIAL,
        auth_method=method,
        client_assertion="signed.jwt.here" if method == "private_key_jwt" else None,
    )
    form = {k: v[0] for k, v in parse_qs(req.body().decode()).items()}
    assert form["grant_type"] == "authorization_code" and form["resource"] == "https://r/mcp"
    assert "scope" not in form
    if method == "client_secret_basic":
        assert req.headers["authorization"].startswith("Basic ") and "client_secret" not in form
        assert form["client_id"] == "c"  # named, not authenticated, in the body too (RFC 6749 3.2.1)
    elif method == "client_secret_post":
        assert form["client_id"] == "c" and form["client_secret"] == "s" and not req.headers
    elif method == "none":
        assert form["client_id"] == "c" and "client_secret" not in form and not req.headers
    else:
        assert (
            form["client_assertion_type"] == CLIENT_ASSERTION_TYPE_JWT and form["client_assertion"] == "signed.jwt.here"
        )
        assert "client_secret" not in form


def test_token_request_refusals() -> None:
    with pytest.raises(UnsupportedAuthMethod):
        token_request("https://as/token", "x", {}, client=PUBLIC, auth_method="client_secret_post")
    with pytest.raises(UnsupportedAuthMethod):
        token_request("https://as/token", "x", {}, client=CONFIDENTIAL, auth_method="private_key_jwt")
    with pytest.raises(UnsupportedAuthMethod, match="unknown"):
        token_request("https://as/token", "x", {}, client=CONFIDENTIAL, auth_method="tls_client_auth")


@pytest.mark.req("basic/authorization#33")
def test_client_assertion_claims() -> None:
    claims = client_assertion_claims("client-1", "https://as.example", now=1000.5)
    assert claims["iss"] == claims["sub"] == "client-1" and claims["aud"] == "https://as.example"
    assert claims["iat"] == 1000 and claims["exp"] == 1300
    assert claims["jti"] != client_assertion_claims("client-1", "https://as.example", now=1000)["jti"]
