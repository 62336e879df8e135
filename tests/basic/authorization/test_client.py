"""The client's decisions: scope, registration, the authorization request and its response."""

from urllib.parse import parse_qs, urlsplit

import pytest

from mcp_ref.basic.authorization.client import (
    AuthorizationDenied,
    AuthorizationResponse,
    application_type_for,
    authorization_request_url,
    check_authorization_response,
    check_cimd_url,
    check_redirect_uri,
    choose_registration,
    client_id_metadata_document,
    parse_authorization_response,
    select_scope,
    step_up_scope,
)
from mcp_ref.basic.authorization.metadata import (
    AuthorizationServerMetadata,
    ClientInformation,
    ClientMetadata,
    ProtectedResourceMetadata,
)
from mcp_ref.basic.authorization.pkce import PKCE


def prm(scopes: list[str] | None) -> ProtectedResourceMetadata:
    return ProtectedResourceMetadata(
        resource="https://mcp.example/mcp", scopes_supported=None if scopes is None else tuple(scopes)
    )


def asm(**fields: object) -> AuthorizationServerMetadata:
    return AuthorizationServerMetadata.from_json({"issuer": "https://as.example", **fields})


@pytest.mark.req("basic/authorization#44", "basic/authorization#19", "basic/authorization#18", "basic/authorization#17")
@pytest.mark.req("2026-07-28:basic/authorization/index#17", "2026-07-28:basic/authorization/index#62")
def test_scope_from_the_challenge_first() -> None:
    # the challenge wins even when it is neither subset nor superset of scopes_supported
    assert select_scope("files:read", prm(["a", "b"]), asm()) == "files:read"


@pytest.mark.req("basic/authorization#44", "basic/authorization#22", "basic/authorization#43")
def test_scope_falls_back_to_scopes_supported_then_omitted() -> None:
    assert select_scope(None, prm(["mcp:basic", "mcp:read"]), asm()) == "mcp:basic mcp:read"
    assert select_scope("  ", prm(["x"]), asm()) == "x"
    assert select_scope(None, prm(None), asm()) is None
    assert select_scope(None, None, None) is None


@pytest.mark.req("2026-07-28:basic/authorization/index#50")
def test_offline_access_only_where_the_server_lists_it() -> None:
    with_offline = asm(scopes_supported=["mcp:basic", "offline_access"])
    assert select_scope(None, prm(["mcp:basic"]), with_offline) == "mcp:basic offline_access"
    assert select_scope(None, prm(["mcp:basic"]), with_offline, want_refresh_token=False) == "mcp:basic"
    assert select_scope(None, prm(["mcp:basic"]), asm(scopes_supported=["mcp:basic"])) == "mcp:basic"
    # never alone: no scope to ask for stays no scope
    assert select_scope(None, prm(None), with_offline) is None


@pytest.mark.req("basic/authorization#69", "basic/authorization#19")
@pytest.mark.req("2026-07-28:basic/authorization/index#17", "2026-07-28:basic/authorization/index#18")
def test_step_up_joins_granted_and_challenged_scopes() -> None:
    assert step_up_scope("mcp:basic", "mcp:basic mcp:write") == "mcp:basic mcp:write"
    assert step_up_scope("a b", "c") == "a b c"
    assert step_up_scope(None, "c") == "c"


@pytest.mark.req(
    "basic/authorization#6",
    "basic/authorization#26",
    "basic/authorization#27",
    "basic/authorization#40",
    "basic/authorization#41",
)
@pytest.mark.req(
    "2026-07-28:basic/authorization/client-registration#1",
    "2026-07-28:basic/authorization/client-registration#2",
    "2026-07-28:basic/authorization/client-registration#16",
    "2026-07-28:basic/authorization/index#13",
)
def test_registration_priority() -> None:
    cimd_dcr = asm(client_id_metadata_document_supported=True, registration_endpoint="https://as.example/register")
    pre = ClientInformation(client_id="pre")
    url = "https://app.example/client.json"
    assert (
        choose_registration(pre_registered=pre, client_id_metadata_url=url, server_metadata=cimd_dcr)
        == "pre-registered"
    )
    assert choose_registration(pre_registered=None, client_id_metadata_url=url, server_metadata=cimd_dcr) == (
        "client-id-metadata-document"
    )
    assert choose_registration(pre_registered=None, client_id_metadata_url=None, server_metadata=cimd_dcr) == "dynamic"
    dcr_only = asm(registration_endpoint="https://as.example/register")
    assert choose_registration(pre_registered=None, client_id_metadata_url=url, server_metadata=dcr_only) == "dynamic"
    assert choose_registration(pre_registered=None, client_id_metadata_url=url, server_metadata=asm()) == "none"


@pytest.mark.req(
    "basic/authorization#28",
    "basic/authorization#29",
    "basic/authorization#30",
    "basic/authorization#31",
    "basic/authorization#32",
)
def test_client_id_metadata_document_rules() -> None:
    check_cimd_url("https://example.com/client.json")
    for bad in ["http://example.com/client.json", "https://example.com", "https://example.com/", "https://e.com/c#f"]:
        with pytest.raises(ValueError):
            check_cimd_url(bad)
    meta = ClientMetadata(client_name="App", redirect_uris=("http://127.0.0.1:3000/callback",))
    doc = client_id_metadata_document("https://example.com/client.json", meta)
    assert doc.client_id == "https://example.com/client.json"
    with pytest.raises(ValueError, match="not the document's URL"):
        client_id_metadata_document(
            "https://example.com/client.json",
            ClientMetadata(client_id="https://other/c.json", client_name="A", redirect_uris=("http://127.0.0.1/cb",)),
        )
    # each required member on its own: without a name, without redirect URIs (absent or empty)
    for incomplete in (
        ClientMetadata(redirect_uris=("http://127.0.0.1/cb",)),
        ClientMetadata(client_name="App"),
        ClientMetadata(client_name="App", redirect_uris=()),
    ):
        with pytest.raises(ValueError, match="needs client_name and redirect_uris"):
            client_id_metadata_document("https://example.com/client.json", incomplete)


@pytest.mark.req("basic/authorization#81")
def test_redirect_uris_are_loopback_or_https() -> None:
    for good in [
        "http://127.0.0.1:3000/callback",
        "http://localhost/cb",
        "http://[::1]:9/cb",
        "https://app.example/cb",
    ]:
        check_redirect_uri(good)
    for bad in ["http://app.example/cb", "https://app.example/cb#x", "myapp:/cb", "/relative"]:
        with pytest.raises(ValueError):
            check_redirect_uri(bad)


@pytest.mark.req(
    "basic/authorization#46",
    "basic/authorization#52",
    "basic/authorization#74",
    "basic/authorization#83",
    "basic/authorization#106",
)
def test_authorization_request_url() -> None:
    pkce = PKCE.new()
    url = authorization_request_url(
        "https://as.example/authorize?tenant=t1",
        client_id="https://app.example/client.json",
        redirect_uri="http://127.0.0.1:3000/callback",
        pkce=pkce,
        state="st",
        resource="https://mcp.example/mcp",
        scope="files:read",
    )
    parts = urlsplit(url)
    q = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert parts.path == "/authorize" and q["tenant"] == "t1"
    assert (
        q["response_type"] == "code" and q["code_challenge_method"] == "S256" and q["code_challenge"] == pkce.challenge
    )
    assert q["resource"] == "https://mcp.example/mcp" and q["state"] == "st" and q["scope"] == "files:read"
    assert q["redirect_uri"] == "http://127.0.0.1:3000/callback"
    assert pkce.verifier not in url
    no_scope = authorization_request_url(
        "https://as.example/authorize",
        client_id="c",
        redirect_uri="http://127.0.0.1/cb",
        pkce=pkce,
        state="s",
        resource="https://r",
        scope=None,
    )
    assert "scope" not in parse_qs(urlsplit(no_scope).query)


@pytest.mark.req("basic/authorization#91")
def test_state_must_be_ours() -> None:
    server = asm()
    assert (
        check_authorization_response(AuthorizationResponse(code="c", state="s1"), state="s1", server_metadata=server)
        == "c"
    )
    with pytest.raises(AuthorizationDenied, match="not the one") as raised:
        check_authorization_response(AuthorizationResponse(code="c", state="other"), state="s1", server_metadata=server)
    assert raised.value.error == "state_mismatch"
    with pytest.raises(AuthorizationDenied, match="no state"):
        check_authorization_response(AuthorizationResponse(code="c"), state="s1", server_metadata=server)


def _iss(iss: str | None, *, advertised: bool | None, **fields: str) -> str:
    metadata = asm() if advertised is None else asm(authorization_response_iss_parameter_supported=advertised)
    response = AuthorizationResponse(code="c", state="s", iss=iss, **fields)
    return check_authorization_response(response, state="s", server_metadata=metadata)


@pytest.mark.parametrize("advertised", [True, False, None])
@pytest.mark.req("2026-07-28:basic/authorization/index#22", "2026-07-28:basic/authorization/index#25")
def test_rfc9207_a_present_iss_is_compared_whether_or_not_advertised(advertised: bool | None) -> None:
    """RFC 9207 section 2.4 as the 2026-07-28 table has it: a present ``iss`` equal to the recorded
    issuer passes; one naming another server is refused, advertised or not (the third row)."""
    assert _iss("https://as.example", advertised=advertised) == "c"
    with pytest.raises(AuthorizationDenied) as raised:
        _iss("https://evil.example", advertised=advertised)
    assert raised.value.error == "issuer_mismatch"


@pytest.mark.req("2026-07-28:basic/authorization/index#25")
def test_rfc9207_an_absent_iss_is_refused_only_when_advertised() -> None:
    with pytest.raises(AuthorizationDenied, match="promised") as raised:
        _iss(None, advertised=True)
    assert raised.value.error == "issuer_mismatch"
    assert _iss(None, advertised=False) == "c"
    assert _iss(None, advertised=None) == "c"


@pytest.mark.parametrize(
    "variant",
    [
        "https://as.example/",  # trailing slash
        "HTTPS://as.example",  # scheme case
        "https://AS.example",  # host case
        "https://as.example:443",  # default port
        "https://as%2Eexample",  # percent-encoding
    ],
)
@pytest.mark.req("2026-07-28:basic/authorization/index#27")
def test_rfc9207_iss_is_compared_without_normalisation(variant: str) -> None:
    """Simple string comparison (RFC 3986 section 6.2.1): a variant that only normalisation would
    make equal is another issuer."""
    with pytest.raises(AuthorizationDenied) as raised:
        _iss(variant, advertised=True)
    assert raised.value.error == "issuer_mismatch"


@pytest.mark.req("2026-07-28:basic/authorization/index#28")
def test_an_error_from_the_wrong_issuer_is_neither_acted_on_nor_shown() -> None:
    """A mismatching ``iss`` wins over the response's ``error``: the message is about the issuer,
    and the (attacker's) error text appears nowhere."""
    with pytest.raises(AuthorizationDenied) as raised:
        _iss(
            "https://evil.example",
            advertised=None,
            error="access_denied",
            error_description="call +1 555 0100 to unlock your account",
        )
    assert raised.value.error == "issuer_mismatch"
    assert "555" not in str(raised.value) and "access_denied" not in str(raised.value)
    # the same error from the right server is the server's refusal
    with pytest.raises(AuthorizationDenied) as refused:
        _iss("https://as.example", advertised=True, error="access_denied")
    assert refused.value.error == "access_denied"


@pytest.mark.parametrize(
    ("redirect_uri", "expected"),
    [
        ("http://127.0.0.1:3000/callback", "native"),
        ("http://localhost:8080/cb", "native"),
        ("http://[::1]/cb", "native"),
        ("com.example.app:/oauth2redirect", "native"),
        ("https://app.example.com/callback", "web"),
    ],
)
@pytest.mark.req(
    "2026-07-28:basic/authorization/client-registration#19", "2026-07-28:basic/authorization/client-registration#20"
)
def test_application_type_follows_the_redirect_uri(redirect_uri: str, expected: str) -> None:
    assert application_type_for(redirect_uri) == expected


def test_errors_and_missing_codes() -> None:
    with pytest.raises(AuthorizationDenied) as raised:
        check_authorization_response(
            AuthorizationResponse(state="s", error="access_denied", error_description="the user said no"),
            state="s",
            server_metadata=None,
        )
    assert raised.value.error == "access_denied" and "the user said no" in str(raised.value)
    with pytest.raises(AuthorizationDenied, match="no code"):
        check_authorization_response(AuthorizationResponse(state="s"), state="s", server_metadata=None)


def test_parse_authorization_response() -> None:
    assert parse_authorization_response("code=abc&state=s%20t&iss=https%3A%2F%2Fas") == AuthorizationResponse(
        code="abc", state="s t", iss="https://as"
    )
    assert parse_authorization_response({"code": "x", "state": "y"}) == AuthorizationResponse(code="x", state="y")
    with pytest.raises(AuthorizationDenied, match="repeats"):
        parse_authorization_response("code=a&code=b&state=s")
