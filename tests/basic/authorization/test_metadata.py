"""The documents as typed objects: what they must hold, what is kept, what is refused."""

from typing import Any

import pytest

from mcp_ref.basic.authorization.metadata import (
    AuthorizationServerMetadata,
    ClientInformation,
    ClientMetadata,
    InvalidMetadata,
    OAuthErrorResponse,
    ProtectedResourceMetadata,
    TokenResponse,
    is_absolute_url,
    is_loopback_url,
)


@pytest.mark.req("basic/authorization#13", "basic/authorization#9")
def test_protected_resource_metadata() -> None:
    doc = {
        "resource": "https://mcp.example.com/mcp",
        "authorization_servers": ["https://auth.example.com"],
        "scopes_supported": ["files:read"],
        "resource_name": "Files",
        "x-vendor": {"kept": True},
    }
    prm = ProtectedResourceMetadata.from_json(doc)
    assert prm.authorization_servers == ("https://auth.example.com",)
    assert prm.scopes_supported == ("files:read",)
    assert prm.extra == {"x-vendor": {"kept": True}}
    assert prm.to_json() == doc


@pytest.mark.parametrize(
    ("doc", "member"),
    [
        ({}, "resource"),
        ({"resource": "mcp.example.com"}, "resource"),
        ({"resource": "https://x/mcp#frag"}, "resource"),
        ({"resource": "https://x/mcp", "authorization_servers": "https://as"}, "authorization_servers"),
        ({"resource": "https://x/mcp", "authorization_servers": ["not a url"]}, "authorization_servers[0]"),
        ({"resource": "https://x/mcp", "scopes_supported": ["a", 3]}, "scopes_supported[1]"),
    ],
)
def test_protected_resource_metadata_refusals_name_the_member(doc: dict[str, Any], member: str) -> None:
    with pytest.raises(InvalidMetadata) as raised:
        ProtectedResourceMetadata.from_json(doc)
    assert raised.value.member == member
    assert member in str(raised.value)


@pytest.mark.parametrize("doc", [None, [], "html", 3])
def test_a_document_that_is_not_an_object(doc: Any) -> None:
    with pytest.raises(InvalidMetadata, match="expected a JSON object"):
        AuthorizationServerMetadata.from_json(doc)


@pytest.mark.req("basic/authorization#11", "basic/authorization#84")
def test_authorization_server_metadata_and_defaults() -> None:
    meta = AuthorizationServerMetadata.from_json(
        {
            "issuer": "https://auth.example.com",
            "authorization_endpoint": "https://auth.example.com/authorize",
            "token_endpoint": "https://auth.example.com/token",
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": True,
            "userinfo_endpoint": "https://auth.example.com/userinfo",
        },
        oidc=True,
    )
    assert meta.oidc and meta.client_id_metadata_document_supported
    assert meta.extra == {"userinfo_endpoint": "https://auth.example.com/userinfo"}
    # RFC 8414 section 2 defaults
    assert meta.grant_types() == ("authorization_code", "implicit")
    assert meta.token_auth_methods() == ("client_secret_basic",)
    assert "oidc" not in meta.to_json()


@pytest.mark.parametrize(
    ("doc", "member"),
    [
        ({"issuer": "https://as?x=1"}, "issuer"),
        ({"issuer": "https://as", "token_endpoint": "/token"}, "token_endpoint"),
        (
            {"issuer": "https://as", "client_id_metadata_document_supported": "yes"},
            "client_id_metadata_document_supported",
        ),
        ({"issuer": ""}, "issuer"),
        ({"issuer": 7}, "issuer"),
    ],
)
def test_authorization_server_metadata_refusals(doc: dict[str, Any], member: str) -> None:
    with pytest.raises(InvalidMetadata) as raised:
        AuthorizationServerMetadata.from_json(doc)
    assert raised.value.member == member


def test_client_documents_round_trip() -> None:
    doc = {
        "client_id": "https://app.example.com/oauth/client-metadata.json",
        "client_name": "Example MCP Client",
        "redirect_uris": ["http://127.0.0.1:3000/callback"],
        "grant_types": ["authorization_code"],
        "token_endpoint_auth_method": "none",
    }
    assert ClientMetadata.from_json(doc).to_json() == doc
    info = ClientInformation.from_json({"client_id": "abc", "client_secret": "s", "client_secret_expires_at": 0})
    assert not info.secret_expired(10**10)
    assert ClientInformation.from_json({"client_id": "a", "client_secret_expires_at": 100}).secret_expired(100)
    with pytest.raises(InvalidMetadata, match="client_id"):
        ClientInformation.from_json({"client_secret": "s"})


def test_token_and_error_responses() -> None:
    token = TokenResponse.from_json({"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "x": 1})
    assert token.expires_in == 3600 and token.extra == {"x": 1}
    with pytest.raises(InvalidMetadata, match="access_token"):
        TokenResponse.from_json({"token_type": "Bearer"})
    with pytest.raises(InvalidMetadata, match="expires_in"):
        TokenResponse.from_json({"access_token": "a", "token_type": "Bearer", "expires_in": -1})
    with pytest.raises(InvalidMetadata, match="expires_in"):
        TokenResponse.from_json({"access_token": "a", "token_type": "Bearer", "expires_in": "soon"})
    err = OAuthErrorResponse.from_json({"error": "invalid_grant", "error_description": "expired"})
    assert str(err) == "invalid_grant: expired"


def test_url_helpers() -> None:
    assert is_absolute_url("https://a.example/x")
    assert not is_absolute_url("https://a.example/x#y")
    assert not is_absolute_url("ftp://a.example/")
    assert not is_absolute_url("https://a.example:99999/")
    assert not is_absolute_url("https:///nohost")
    assert (
        is_loopback_url("http://127.0.0.1:3000/cb")
        and is_loopback_url("http://[::1]/")
        and is_loopback_url("http://LOCALHOST/")
    )
    assert not is_loopback_url("http://127.0.0.2.example/")
