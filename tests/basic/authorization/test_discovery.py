"""Well-known URLs in the spec's order, the 2025-03-26 fallbacks, resource and issuer checks."""

import pytest

from mcp_ref.basic.authorization.discovery import (
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


@pytest.mark.req("basic/authorization#15", "basic/authorization#14")
def test_protected_resource_metadata_path_aware_then_root() -> None:
    assert protected_resource_metadata_urls("https://example.com/public/mcp") == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    # an endpoint at the root has only the root document
    assert protected_resource_metadata_urls("https://example.com") == [
        "https://example.com/.well-known/oauth-protected-resource"
    ]
    assert protected_resource_metadata_urls("https://example.com/") == [
        "https://example.com/.well-known/oauth-protected-resource"
    ]
    # port kept, default port dropped, host lower-cased
    assert protected_resource_metadata_urls("HTTPS://Example.COM:443/mcp")[0] == (
        "https://example.com/.well-known/oauth-protected-resource/mcp"
    )
    assert protected_resource_metadata_urls("http://127.0.0.1:8080/mcp/")[0] == (
        "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
    )


@pytest.mark.req("basic/authorization#23", "basic/authorization#24")
def test_issuer_with_a_path_tries_three_urls_in_order() -> None:
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1") == [
        ("https://auth.example.com/.well-known/oauth-authorization-server/tenant1", False),
        ("https://auth.example.com/.well-known/openid-configuration/tenant1", True),
        ("https://auth.example.com/tenant1/.well-known/openid-configuration", True),
    ]
    # a terminating slash is removed before insertion (RFC 8414 section 3.1)
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1/")[0][0] == (
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1"
    )


@pytest.mark.req("basic/authorization#25", "basic/authorization#11")
def test_issuer_without_a_path_tries_oauth_then_oidc() -> None:
    expected = [
        ("https://auth.example.com/.well-known/oauth-authorization-server", False),
        ("https://auth.example.com/.well-known/openid-configuration", True),
    ]
    assert authorization_server_metadata_urls("https://auth.example.com") == expected
    assert authorization_server_metadata_urls("https://auth.example.com/") == expected


@pytest.mark.req(
    "2025-03-26:basic/authorization#15", "2025-03-26:basic/authorization#16", "2025-03-26:basic/authorization#17"
)
def test_legacy_fallbacks_drop_the_path() -> None:
    """2025-03-26: the authorization base URL is the MCP server's origin."""
    assert legacy_metadata_url("https://api.example.com/v1/mcp") == (
        "https://api.example.com/.well-known/oauth-authorization-server"
    )
    assert legacy_endpoints("https://api.example.com/v1/mcp") == {
        "authorization_endpoint": "https://api.example.com/authorize",
        "token_endpoint": "https://api.example.com/token",
        "registration_endpoint": "https://api.example.com/register",
    }


@pytest.mark.req("basic/authorization#48", "basic/authorization#49", "basic/authorization#50", "basic/authorization#51")
def test_canonical_resource() -> None:
    assert canonical_resource("https://mcp.example.com/mcp") == "https://mcp.example.com/mcp"
    assert canonical_resource("HTTPS://MCP.Example.com/") == "https://mcp.example.com"
    assert canonical_resource("https://mcp.example.com:8443") == "https://mcp.example.com:8443"
    assert canonical_resource("https://mcp.example.com:443/server/mcp#frag") == "https://mcp.example.com/server/mcp"
    assert canonical_resource("http://[::1]:9000/mcp/") == "http://[::1]:9000/mcp"


@pytest.mark.req("basic/authorization#47", "basic/authorization#50")
def test_resource_allowed_same_origin_and_ancestor_path() -> None:
    server = "https://mcp.example.com/tenant/mcp"
    assert resource_allowed("https://mcp.example.com/tenant/mcp", server)
    assert resource_allowed("https://MCP.example.com/tenant/mcp/", server)  # case and slash
    assert resource_allowed("https://mcp.example.com", server)  # root metadata names the origin
    assert resource_allowed("https://mcp.example.com/tenant", server)
    assert not resource_allowed("https://evil.example.com/tenant/mcp", server)
    assert not resource_allowed("http://mcp.example.com/tenant/mcp", server)  # scheme
    assert not resource_allowed("https://mcp.example.com:8443/tenant/mcp", server)  # port
    assert not resource_allowed("https://mcp.example.com/ten", server)  # not on a segment boundary
    assert not resource_allowed("https://mcp.example.com/tenant/mcp/deeper", server)
    assert not resource_allowed("https://mcp.example.com/other", server)


def test_issuer_matching_is_exact_but_for_a_root_slash() -> None:
    assert issuer_matches("https://as.example.com", "https://as.example.com/")
    assert issuer_matches("https://as.example.com/t1", "https://as.example.com/t1")
    assert not issuer_matches("https://as.example.com/t1", "https://as.example.com/t1/")
    assert not issuer_matches("https://as.example.com", "https://evil.example.com")
    assert not issuer_matches("https://as.example.com/t1", "https://as.example.com/t2")


def test_origins() -> None:
    assert origin("https://A.example.com:443/x?y") == "https://a.example.com"
    assert origin("http://[::1]:80/") == "http://[::1]"
    assert same_origin("https://a.example.com/x", "https://a.example.com:443/y")
    assert not same_origin("https://a.example.com", "https://a.example.com:444")
