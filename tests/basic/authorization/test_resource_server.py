"""The resource server's sans-IO rules: canonical resource URIs, audience, bearer tokens, challenges."""

from typing import Any

import pytest

from mcp_ref.basic.authorization.resource_server import (
    AccessToken,
    AuthRefused,
    ProtectedResource,
    audience_matches,
    bearer_token,
    challenge,
    check_resource_uri,
)


class Never:
    async def verify(self, token: str) -> AccessToken:
        raise AssertionError("not called")


def resource(**options: Any) -> ProtectedResource:
    return ProtectedResource(
        verifier=Never(), authorization_servers=["https://as.example"], resource="https://mcp.example/mcp", **options
    )


@pytest.mark.parametrize("bad", ["mcp.example.com", "https://mcp.example.com#fragment", "ftp://x/y", "https://"])
def test_what_cannot_name_a_resource_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        check_resource_uri(bad)


@pytest.mark.req("basic/authorization#58", "basic/authorization#104", "basic/authorization#50")
def test_audience_names_this_resource_or_its_origin_only() -> None:
    ours = "https://mcp.example.com/mcp"
    assert audience_matches(["https://mcp.example.com/mcp"], ours)
    assert audience_matches(["HTTPS://MCP.EXAMPLE.COM/mcp/"], ours)  # upper case and trailing slash accepted
    assert audience_matches(["https://other.example", "https://mcp.example.com"], ours)  # the whole origin
    assert not audience_matches(["https://mcp.example.com/mcp2"], ours)  # not a path segment boundary
    assert not audience_matches(["https://mcp.example.com/other"], ours)
    assert not audience_matches(["https://mcp.example.com:8443/mcp"], ours)
    assert not audience_matches(["http://mcp.example.com/mcp"], ours)
    assert not audience_matches(["https://mcp.example.com/mcp/tools"], ours)  # more specific: another resource
    assert not audience_matches([], ours)
    assert not audience_matches(["not a uri"], ours)


@pytest.mark.req("basic/authorization#53", "basic/authorization#54")
def test_bearer_token_comes_from_the_authorization_header() -> None:
    assert bearer_token(["Bearer abc.DEF-_~+/=="]) == "abc.DEF-_~+/=="
    assert bearer_token(["bearer abc"]) == "abc"  # the scheme is case-insensitive
    assert bearer_token([]) is None
    assert bearer_token(["Basic dXNlcjpwYXNz"]) is None
    for bad in (["Bearer"], ["Bearer a b"], ["Bearer a,b"], ["Bearer abc", "Bearer def"], ["Basic x", "Bearer y"]):
        with pytest.raises(AuthRefused) as refused:
            bearer_token(bad)
        assert (refused.value.status, refused.value.error) == (400, "invalid_request")


@pytest.mark.req("basic/authorization#14")
def test_the_metadata_url_is_the_path_aware_one() -> None:
    assert resource().metadata_url() == "https://mcp.example/.well-known/oauth-protected-resource/mcp"
    root = ProtectedResource(verifier=Never(), authorization_servers=["https://as"], resource="https://m.example/")
    assert root.metadata_url() == "https://m.example/.well-known/oauth-protected-resource"


@pytest.mark.req("basic/authorization#65")
def test_challenge_quotes_its_values_and_drops_what_cannot_be_quoted() -> None:
    value = challenge("https://m/.wk", error="insufficient_scope", description='needs "a"\\b\n', scope=["a", "b"])
    assert value == (
        'Bearer resource_metadata="https://m/.wk", scope="a b", '
        'error="insufficient_scope", error_description="needs ab"'
    )


def test_a_policy_is_checked_when_made() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ProtectedResource(verifier=Never(), authorization_servers=[])
    with pytest.raises(ValueError, match="not the string"):
        resource(required_scopes="mcp")
    with pytest.raises(ValueError, match="scope tokens"):
        resource(tool_scopes={"x": ["two words"]})
    with pytest.raises(ValueError, match="fragment"):
        ProtectedResource(verifier=Never(), authorization_servers=["https://as"], resource="https://m/mcp#x")


def test_scopes_needed_adds_method_and_tool_scopes() -> None:
    policy = resource(required_scopes=["mcp"], method_scopes={"tools/call": ["tools"]}, tool_scopes={"x": ["x:run"]})
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    assert policy.scopes_needed([call]) == {"mcp", "tools", "x:run"}
    assert policy.scopes_needed([{"jsonrpc": "2.0", "method": "notifications/initialized"}]) == {"mcp"}
    assert policy.scopes_needed([None, "junk", {"method": 3}]) == {"mcp"}
    assert policy.all_scopes() == ("mcp", "tools", "x:run")


@pytest.mark.req("2026-07-28:basic/authorization/index#64")
def test_a_broad_scope_grants_the_narrower_ones_it_implies() -> None:
    """A token with ``files:admin`` is enough where ``files:read`` is needed when the policy
    says admin implies write and write implies read (followed transitively); without that
    relation, or for a scope nothing implies, it is still 403 insufficient_scope."""
    admin = AccessToken(scopes=frozenset({"files:admin"}), audience=("https://mcp.example/mcp",))
    implies = {"files:admin": ["files:write"], "files:write": ["files:read"]}
    resource(scope_implies=implies).check_token(admin, {"files:read"})
    with pytest.raises(AuthRefused) as refused:
        resource().check_token(admin, {"files:read"})
    assert refused.value.status == 403 and refused.value.error == "insufficient_scope"
    with pytest.raises(AuthRefused):
        resource(scope_implies=implies).check_token(admin, {"mail:read"})
    assert resource(scope_implies=implies).granted_scopes({"files:write"}) == {"files:write", "files:read"}


@pytest.mark.req("2026-07-28:basic/authorization/index#52")
@pytest.mark.parametrize(
    "policy",
    [
        {"required_scopes": ["mcp", "offline_access"]},
        {"tool_scopes": {"sync": ["offline_access"]}},
        {"method_scopes": {"tools/list": ["offline_access"]}},
        {"scopes_supported": ["mcp", "offline_access"]},
    ],
)
def test_offline_access_is_no_scope_of_the_resource(policy: dict[str, Any]) -> None:
    """Refresh tokens are the client's business with its authorization server: a policy that
    would put offline_access in a challenge or in scopes_supported is refused when made."""
    with pytest.raises(ValueError, match="offline_access"):
        resource(**policy)
    resource(required_scopes=["mcp"], scope_implies={"admin": ["mcp"]})  # (the same policy without it is fine)
