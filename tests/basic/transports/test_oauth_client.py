"""The OAuth client end to end: a protected mcp_ref server, a scripted authorization server.

Each security test shows one rule by making the authorization server (or
the MCP server's metadata) break it, and checks both the one clear
AuthorizationError and what never went on the wire.
"""

import json
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from subprocess import PIPE
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs
import pytest
import trio

from mcp_ref.basic.authorization.client import AuthorizationResponse
from mcp_ref.basic.authorization.discovery import canonical_resource
from mcp_ref.basic.authorization.metadata import ClientInformation, ClientMetadata
from mcp_ref.basic.authorization.resource_server import ProtectedResource
from mcp_ref.basic.authorization.tokens import GRANT_JWT_BEARER, TOKEN_TYPE_ID_JAG, Tokens
from mcp_ref.basic.transports.http_fetch import http_exchange
from mcp_ref.basic.transports.oauth_callback import CallbackListenError
from mcp_ref.basic.transports.oauth_client import (
    ClientCredentials,
    FileTokenStorage,
    InMemoryTokenStorage,
    OAuthClient,
    StoredAuthorization,
    open_loopback_callback,
)
from mcp_ref.errors import AuthorizationError, HTTPTransportError
from mcp_ref.session.http import open_http_client

from .conftest import ROOT, script
from .oauth_world import REDIRECT_URI, Answer, FakeAuthServer, Recorded, World, world

#: (a client assertion's iat and exp follow the test's clock, years ahead)
UNCHECKED = {"verify_iat": False, "verify_exp": False}


def oauth(w: World, **options: Any) -> OAuthClient:
    options.setdefault("clock", w.clock)
    return OAuthClient(
        client_name="test client",
        redirect_uri=REDIRECT_URI,
        redirect_handler=w.browser.open,
        callback_handler=w.browser.callback,
        timeout=5,
        authorization_timeout=10,
        **options,
    )


def requests_to(w: World, method: str, path: str) -> list[Recorded]:
    return [r for r in w.auth_server.requests if (r.method, r.path) == (method, path)]


async def echo(client: Any, text: str = "hi") -> str:
    result = await client.call_tool("echo", {"text": text})
    return result.content[0].text  # type: ignore[no-any-return]


# -- the flow ----------------------------------------------------------------------------------------


@pytest.mark.req(
    "basic/authorization#2",
    "basic/index#15",
    "basic/authorization#7",
    "basic/authorization#9",
    "basic/authorization#15",
    "basic/authorization#21",
    "basic/authorization#42",
    "basic/authorization#45",
    "basic/authorization#46",
    "basic/authorization#52",
    "basic/authorization#74",
    "basic/authorization#82",
    "basic/authorization#83",
    "basic/authorization#89",
    "basic/authorization#106",
)
async def test_the_whole_flow_on_a_401() -> None:
    async with world() as w:
        auth = oauth(w)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            assert await echo(client) == "hi"
        resource = w.mcp.url
        (register,) = requests_to(w, "POST", "/register")
        assert json.loads(register.form["_body"])["redirect_uris"] == [REDIRECT_URI]
        (authorize,) = requests_to(w, "GET", "/authorize")
        assert authorize.query["resource"] == resource and authorize.query["code_challenge_method"] == "S256"
        assert authorize.query["scope"] == "mcp offline_access"  # scopes_supported, and a refresh token
        (token,) = requests_to(w, "POST", "/token")
        assert token.form["resource"] == resource and token.form["grant_type"] == "authorization_code"
        assert token.form["redirect_uri"] == REDIRECT_URI == authorize.query["redirect_uri"]
        assert auth.tokens is not None and auth.tokens.refresh_token is not None


@pytest.mark.req("basic/authorization#54", "basic/authorization#55", "basic/authorization#56", "basic/authorization#61")
@pytest.mark.req("2026-07-28:basic/authorization/index#39")
async def test_the_token_goes_in_every_request_and_only_to_the_mcp_server() -> None:
    """Every request to the MCP server carries the header (the GET stream too); nothing sent to the
    authorization server (another origin) carries the access token, and no URL does."""
    seen: list[tuple[str, str | None, str]] = []

    async with world() as w:
        auth = oauth(w)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
            await client.ping()
            assert auth.tokens is not None
            token = auth.tokens.access_token
            seen = [(r.path, r.headers.get("authorization"), json.dumps(r.query)) for r in w.auth_server.requests]
            assert await auth.authorization(w.auth_server.url + "/anything") is None  # another origin
            assert await auth.authorization(w.mcp.url) == f"Bearer {token}"
    assert seen and all(token not in (header or "") and token not in query for _, header, query in seen)


@pytest.mark.req("basic/authorization#11", "basic/authorization#23", "basic/authorization#24")
async def test_openid_connect_discovery_with_an_issuer_path() -> None:
    """An issuer with a path whose only document is OpenID Connect's, by path appending (the
    third URL of #24): found, after the two before it answered 404."""
    async with world(issuer_path="/tenant1", metadata_path="/tenant1/.well-known/openid-configuration") as w:
        async with open_http_client(w.mcp.url, auth=oauth(w)) as client:
            await echo(client)
        looked = [r.path for r in w.auth_server.requests if r.method == "GET" and ".well-known" in r.path]
        assert looked == [
            "/.well-known/oauth-authorization-server/tenant1",
            "/.well-known/openid-configuration/tenant1",
            "/tenant1/.well-known/openid-configuration",
        ]


async def test_stored_tokens_are_used_without_a_new_authorization() -> None:
    async with world() as w:
        storage = InMemoryTokenStorage()
        async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage)) as client:
            await echo(client)
        async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage)) as client:
            await echo(client)
        assert len(requests_to(w, "GET", "/authorize")) == 1
        assert len(requests_to(w, "POST", "/register")) == 1


@pytest.mark.req("basic/authorization#41", "basic/authorization#26")
@pytest.mark.req(
    "2026-07-28:basic/authorization/client-registration#1",
    "2026-07-28:basic/authorization/client-registration#16",
    "2026-07-28:basic/authorization/index#13",
)
async def test_pre_registered_credentials_come_first() -> None:
    async with world() as w:
        w.auth_server.clients["pre-1"] = {
            "client_id": "pre-1",
            "client_secret": "s3",
            "redirect_uris": [REDIRECT_URI],
        }
        auth = oauth(w, client_information=ClientInformation(client_id="pre-1", client_secret="s3"))
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
        assert not requests_to(w, "POST", "/register")
        (token,) = requests_to(w, "POST", "/token")
        assert token.headers["authorization"].startswith("Basic ")  # the server lists client_secret_basic


@pytest.mark.req("basic/authorization#22", "basic/authorization#44")
async def test_the_challenge_scope_is_asked_for() -> None:
    async with world(required_scopes=["mcp"], scopes_supported=["mcp", "mcp:admin", "extra"]) as w:
        async with open_http_client(w.mcp.url, auth=oauth(w, want_refresh_token=False)) as client:
            await echo(client)
        (authorize,) = requests_to(w, "GET", "/authorize")
        assert authorize.query["scope"] == "mcp"  # the 401's scope, not every scope supported


@pytest.mark.req("basic/authorization#69", "basic/authorization#70", "basic/authorization#19")
@pytest.mark.req("2026-07-28:basic/authorization/index#18")
async def test_step_up_on_insufficient_scope() -> None:
    async with world(tool_scopes={"reset": ["mcp:admin"]}) as w:
        auth = oauth(w)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
            result = await client.call_tool("reset", {})
            assert result.content[0].text == "reset"  # type: ignore[union-attr]
            assert await echo(client, "still") == "still"  # nothing lost by stepping up
        first, second = requests_to(w, "GET", "/authorize")
        assert set(second.query["scope"].split()) >= {"mcp", "mcp:admin"}


@pytest.mark.req("basic/authorization#72", "basic/authorization#71")
async def test_step_up_is_bounded(caplog: pytest.LogCaptureFixture) -> None:
    """A server that never grants the scope: the call fails after max_step_up authorizations
    with one AuthorizationError naming the step (raised, not also logged as a warning),
    and the session goes on."""
    caplog.set_level(logging.DEBUG, logger="mcp_ref")
    async with world(tool_scopes={"reset": ["mcp:admin"]}) as w:
        w.auth_server.withheld_scopes = {"mcp:admin"}
        async with open_http_client(w.mcp.url, auth=oauth(w, max_step_up=2)) as client:
            await echo(client)
            with pytest.raises(AuthorizationError) as failed:
                await client.call_tool("reset", {})
            assert failed.value.status == 403 and failed.value.step == "step-up"
            assert "mcp:admin still insufficient after 2 step-up authorizations" in str(failed.value)
            assert "insufficient_scope" in str(failed.value)  # the server's challenge, as it said it
            with pytest.raises(HTTPTransportError) as failed:
                await client.call_tool("reset", {})  # no further attempts for the same scope
            assert failed.value.status == 403
            # the application shows the failure once: it is not logged as well
            assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
            assert await echo(client, "alive") == "alive"
        assert len(requests_to(w, "GET", "/authorize")) == 1 + 2


@pytest.mark.req("basic/authorization#60", "basic/authorization#78")
async def test_refresh_before_expiry_with_rotation() -> None:
    async with world() as w:
        auth = oauth(w, refresh_margin=60)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
            assert auth.tokens is not None
            first_refresh = auth.tokens.refresh_token
            w.clock.now += 3600 - 30  # within the margin: refreshed before it is sent
            await echo(client)
            assert auth.tokens.refresh_token != first_refresh
            w.clock.now += 3600 - 30
            await echo(client)
        assert len(requests_to(w, "GET", "/authorize")) == 1
        # [#78] rotation: each refresh used the newest refresh token, never an old one again
        used = w.auth_server.used_refresh_tokens
        assert len(used) == 2 and used[0] == first_refresh and used[1] != first_refresh


@pytest.mark.req("basic/authorization#60")
async def test_refresh_on_a_401_for_an_expired_token() -> None:
    """The client thinks its token good (no expires_in); the server says expired: refresh, then retry."""
    async with world() as w:
        auth = oauth(w)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
            assert auth.tokens is not None
            auth.tokens = Tokens(access_token=auth.tokens.access_token, refresh_token=auth.tokens.refresh_token)
            w.clock.now += 4000  # the server's view: expired
            assert await echo(client, "again") == "again"
        assert [r.form["grant_type"] for r in requests_to(w, "POST", "/token")] == [
            "authorization_code",
            "refresh_token",
        ]


@pytest.mark.req("2026-07-28:basic/authorization/index#51")
async def test_without_a_refresh_token_an_expired_token_means_a_new_authorization() -> None:
    """The authorization server may issue no refresh token (the client asked for one): the
    client does not try a refresh grant it has nothing for, it authorizes again."""
    async with world() as w:
        auth = oauth(w)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
            assert auth.tokens is not None
            auth.tokens = Tokens(access_token=auth.tokens.access_token)  # as if none had been issued
            w.clock.now += 4000  # the server's view: expired
            assert await echo(client, "again") == "again"
        assert [r.form["grant_type"] for r in requests_to(w, "POST", "/token")] == ["authorization_code"] * 2
        assert len(requests_to(w, "GET", "/authorize")) == 2


async def test_a_failed_refresh_leads_to_a_new_authorization() -> None:
    async with world() as w:
        auth = oauth(w)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
            w.auth_server.refresh.clear()  # the server forgot every refresh token
            w.clock.now += 4000
            assert await echo(client, "back") == "back"
        assert len(requests_to(w, "GET", "/authorize")) == 2


async def test_client_credentials_grant() -> None:
    async with world() as w:
        w.auth_server.clients["svc"] = {"client_id": "svc", "client_secret": "pw", "redirect_uris": []}
        auth = OAuthClient(grant=ClientCredentials(client_id="svc", client_secret="pw"), clock=w.clock)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
        (token,) = requests_to(w, "POST", "/token")
        assert token.form["grant_type"] == "client_credentials" and token.form["resource"] == w.mcp.url
        assert not requests_to(w, "GET", "/authorize")


# -- security: each test fails if its rule is not kept ------------------------------------------------------


@pytest.mark.req("basic/authorization#91", "basic/authorization#73")
@pytest.mark.req("2026-07-28:basic/authorization/index#65", "2026-07-28:basic/authorization/security-considerations#1")
@pytest.mark.req("2026-07-28:basic/authorization/security-considerations#2")
async def test_a_redirect_with_another_state_is_discarded() -> None:
    """A forged redirect (another state, the attacker's code) arrives first: it is discarded
    and its code never redeemed; the real one completes the flow."""
    async with world() as w:
        w.browser.before = [AuthorizationResponse(code="attacker-code", state="not-ours")]
        async with open_http_client(w.mcp.url, auth=oauth(w)) as client:
            await echo(client)
        assert [r.form["code"] for r in requests_to(w, "POST", "/token")] != ["attacker-code"]
        assert all(r.form.get("code") != "attacker-code" for r in w.auth_server.requests)


@pytest.mark.req("basic/authorization#91")
async def test_a_redirect_without_state_is_refused() -> None:
    async with world() as w:

        async def no_state() -> AuthorizationResponse:
            return AuthorizationResponse(code="some-code")

        auth = oauth(w)
        auth.callback_handler = no_state
        with pytest.raises(AuthorizationError) as raised:
            async with open_http_client(w.mcp.url, auth=auth):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization" and raised.value.error == "state_mismatch"
        assert not requests_to(w, "POST", "/token")


@pytest.mark.req("basic/authorization#84", "basic/authorization#85", "basic/authorization#87", "basic/authorization#82")
@pytest.mark.parametrize("methods", [None, ["plain"], []])
async def test_no_s256_no_authorization(methods: list[str] | None) -> None:
    """PKCE downgrade: metadata without S256 (absent, or plain only) stops the client before
    the browser opens."""
    async with world() as w:
        w.auth_server.metadata_changes["code_challenge_methods_supported"] = methods
        auth = oauth(w)
        with pytest.raises(AuthorizationError, match="S256") as raised:
            async with open_http_client(w.mcp.url, auth=auth):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization-server-metadata"
        assert not w.browser.opened and not requests_to(w, "GET", "/authorize")


@pytest.mark.req("2026-07-28:basic/authorization/index#12")
@pytest.mark.req(
    "2026-07-28:basic/authorization/authorization-server-discovery#10",
    "2026-07-28:basic/authorization/authorization-server-discovery#11",
    "2026-07-28:basic/authorization/authorization-server-discovery#12",
)
async def test_mix_up_issuer_mismatch_in_metadata() -> None:
    """RFC 8414 section 3.3: metadata naming another issuer is never used (the spec's example:
    a document at the attacker's well-known URL naming an honest issuer is refused)."""
    async with world() as w:
        w.auth_server.metadata_changes["issuer"] = "https://attacker.example"
        with pytest.raises(AuthorizationError, match=r"attacker\.example") as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization-server-metadata" and raised.value.error == "issuer_mismatch"
        assert not requests_to(w, "POST", "/register") and not w.browser.opened


async def test_mix_up_iss_in_the_authorization_response() -> None:
    """RFC 9207: a redirect whose iss names another server is not redeemed."""
    async with world() as w:
        w.auth_server.redirect_extra = {"iss": "https://attacker.example"}
        with pytest.raises(AuthorizationError) as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization" and raised.value.error == "issuer_mismatch"
        assert not requests_to(w, "POST", "/token")


def _resource_metadata_at_prm(w: World, doc: dict[str, Any]) -> OAuthClient:
    """A client whose 401 challenge points at ``/prm`` on the fake authorization server, which
    serves ``doc`` there (naming that server unless ``doc`` says otherwise)."""

    async def prm(server: FakeAuthServer, request: Recorded) -> Answer:
        if request.path != "/prm":
            return None
        body = {"authorization_servers": [server.url], **doc}
        return 200, {"content-type": "application/json"}, json.dumps(body).encode()

    w.auth_server.override = prm
    auth = oauth(w)
    _point_challenge_at(auth, w.auth_server.url + "/prm")
    return auth


@pytest.mark.req("basic/authorization#47", "basic/authorization#48")
async def test_resource_mismatch_is_refused() -> None:
    """Metadata that describes another resource: no authorization server is contacted."""
    async with world() as w:
        auth = _resource_metadata_at_prm(w, {"resource": "https://evil.example/mcp"})
        with pytest.raises(AuthorizationError, match=r"evil\.example") as raised:
            async with open_http_client(w.mcp.url, auth=auth):
                pytest.fail("the session must not open")
        assert raised.value.step == "resource-metadata" and raised.value.error == "resource_mismatch"
        assert [r.path for r in w.auth_server.requests] == ["/prm"]  # nothing else, no browser
        assert not w.browser.opened


@pytest.mark.req("basic/authorization#13")
async def test_resource_metadata_naming_no_authorization_server_is_refused() -> None:
    """Metadata for this server that names no authorization server: one clear error, no guessing."""
    async with world() as w:
        auth = _resource_metadata_at_prm(w, {"resource": w.mcp.url, "authorization_servers": []})
        with pytest.raises(AuthorizationError, match="names no authorization server") as raised:
            async with open_http_client(w.mcp.url, auth=auth):
                pytest.fail("the session must not open")
        assert raised.value.step == "resource-metadata"
        assert [r.path for r in w.auth_server.requests] == ["/prm"]
        assert not w.browser.opened


@pytest.mark.req("basic/authorization#81", "basic/authorization#89")
async def test_the_redirect_uri_is_exact_and_safe() -> None:
    """The authorization server matches redirect URIs exactly: the flow only works because the
    one registered, the one in the authorization request and the one at the token endpoint
    are the same string. An http URI off loopback is refused before anything is sent."""
    async with world() as w:
        async with open_http_client(w.mcp.url, auth=oauth(w)) as client:
            await echo(client)
        (register,) = requests_to(w, "POST", "/register")
        (authorize,) = requests_to(w, "GET", "/authorize")
        (token,) = requests_to(w, "POST", "/token")
        registered = json.loads(register.form["_body"])["redirect_uris"]
        assert registered == [authorize.query["redirect_uri"]] == [token.form["redirect_uri"]] == [REDIRECT_URI]
    for bad in ["http://app.example/callback", "https://app.example/cb#fragment"]:
        with pytest.raises(ValueError):
            OAuthClient(redirect_uri=bad, redirect_handler=w.browser.open, callback_handler=w.browser.callback)


@pytest.mark.parametrize("document", ["resource", "server"])
async def test_a_metadata_document_over_the_limit_is_refused(document: str) -> None:
    async with world() as w:
        padding = "x" * 300_000

        async def huge(server: FakeAuthServer, request: Recorded) -> Answer:
            if request.path == "/.well-known/oauth-authorization-server":
                doc = {**server.metadata(), "padding": padding}
                return 200, {"content-type": "application/json"}, json.dumps(doc).encode()
            return None

        if document == "server":
            w.auth_server.override = huge
            step = "authorization-server-metadata"
        else:
            # the MCP server's own metadata is served by mcp_ref: point the client at a huge one
            w.auth_server.override = _serve_huge_resource_metadata(padding)
            step = "resource-metadata"
        auth = oauth(w, max_document_size=64 * 1024)
        if document == "resource":
            _point_challenge_at(auth, w.auth_server.url + "/prm")
        with pytest.raises(AuthorizationError, match="over 65536") as raised:
            async with open_http_client(w.mcp.url, auth=auth):
                pytest.fail("the session must not open")
        assert raised.value.step == step


def _serve_huge_resource_metadata(padding: str) -> Any:
    async def handler(server: FakeAuthServer, request: Recorded) -> Answer:
        if request.path == "/prm":
            return 200, {"content-type": "application/json"}, json.dumps({"resource": "x", "p": padding}).encode()
        return None

    return handler


def _point_challenge_at(auth: OAuthClient, url: str) -> None:
    """Make the client see a 401 whose resource_metadata is ``url`` (as a hostile server would send)."""
    challenged = auth.challenged

    async def with_header(*args: Any, **kwargs: Any) -> bool:
        target, status, _, used = args
        return await challenged(target, status, f'Bearer resource_metadata="{url}"', used, **kwargs)

    auth.challenged = with_header  # type: ignore[method-assign]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ((500, {"content-type": "text/html"}, b"<html><h1>Internal Server Error</h1></html>"), "HTTP 500"),
        ((200, {"content-type": "text/html"}, b"<html>login</html>"), "not JSON"),
        ((200, {"content-type": "application/json"}, b'{"token_type": "Bearer"}'), "access_token"),
        ((400, {"content-type": "application/json"}, b'{"error": "invalid_grant"}'), "invalid_grant"),
    ],
)
async def test_a_broken_token_endpoint_is_one_clear_error(
    answer: tuple[int, dict[str, str], bytes], expected: str
) -> None:
    async with world() as w:

        async def broken(server: FakeAuthServer, request: Recorded) -> Answer:
            return answer if request.path == "/token" else None

        w.auth_server.override = broken
        with trio.fail_after(20), pytest.raises(AuthorizationError, match=expected) as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
        assert raised.value.step == "token"


SECRET = "at-SECRET-7f3a"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # a token no header can carry: refused, naming why, never quoting it
        ({"access_token": SECRET + "\r\nX-Injected: 1", "token_type": "Bearer"}, "holds CR at position 14"),
        ({"access_token": SECRET + " tail", "token_type": "Bearer"}, "holds a space"),
        ({"access_token": SECRET + "\u00e9", "token_type": "Bearer"}, "holds U\\+00E9"),
        # a token answer that is not JSON (form-encoded, as some servers write it): not quoted either
        (f"access_token={SECRET}&token_type=bearer", "not JSON"),
    ],
)
async def test_a_token_is_never_quoted_in_an_error(answer: Any, expected: str) -> None:
    async with world() as w:

        async def issuing(server: FakeAuthServer, request: Recorded) -> Answer:
            if request.path != "/token":
                return None
            body = json.dumps(answer).encode() if isinstance(answer, dict) else answer.encode()
            return 200, {"content-type": "application/json"}, body

        w.auth_server.clients["svc"] = {"client_id": "svc", "client_secret": "pw", "redirect_uris": []}
        w.auth_server.override = issuing
        auth = OAuthClient(grant=ClientCredentials(client_id="svc", client_secret="pw"), clock=w.clock)
        with trio.fail_after(20), pytest.raises(AuthorizationError, match=expected) as raised:
            async with open_http_client(w.mcp.url, auth=auth):
                pytest.fail("the session must not open")
        assert raised.value.step == "token" and "SECRET" not in str(raised.value)
        assert "SECRET" not in repr(raised.value.__cause__) and raised.value.__suppress_context__ in (True, None)


async def test_no_token_or_secret_reaches_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    # every logger at DEBUG, both sides in this process: an authorization with a registered
    # client, a refresh after the server's 401, a token the server refuses, and a token the
    # client refuses to send -- no access token, refresh token, code or client secret is logged
    caplog.set_level(logging.DEBUG)
    async with world() as w:
        auth = oauth(w)
        seen: set[str] = set()
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
            assert auth.tokens is not None and auth.tokens.refresh_token is not None
            seen |= {auth.tokens.access_token, auth.tokens.refresh_token}
            auth.tokens = Tokens(access_token=auth.tokens.access_token, refresh_token=auth.tokens.refresh_token)
            w.clock.now += 4000  # the server's view: expired (401), the client refreshes
            await echo(client, "again")
            seen |= {auth.tokens.access_token, auth.tokens.refresh_token or ""}
        # (a public client: its secret is the svc client's below, "pw-SECRET")
        seen |= {r.form["code"] for r in requests_to(w, "POST", "/token") if "code" in r.form}
        # a token the server never issued
        forged = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {SECRET}"}
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert (await http_exchange("POST", w.mcp.url, headers=forged, json_body=ping)).status == 401

        async def crlf(server: FakeAuthServer, request: Recorded) -> Answer:
            if request.path != "/token":
                return None
            answer = {"access_token": SECRET + "\r\nX-Injected: 1", "token_type": "Bearer"}
            return 200, {"content-type": "application/json"}, json.dumps(answer).encode()

        w.auth_server.override = crlf
        w.auth_server.clients["svc"] = {"client_id": "svc", "client_secret": "pw-SECRET", "redirect_uris": []}
        grant = ClientCredentials(client_id="svc", client_secret="pw-SECRET")
        with trio.fail_after(20), pytest.raises(AuthorizationError):
            async with open_http_client(w.mcp.url, auth=OAuthClient(grant=grant, clock=w.clock)):
                pytest.fail("the session must not open")
    assert len(seen) == 5 and all(seen)  # two access tokens, two refresh tokens, the code
    logged = caplog.text + "".join(repr(r.args) + str(r.exc_info) for r in caplog.records)
    assert "SECRET" not in logged
    assert [token for token in seen if token in logged] == []


@pytest.mark.parametrize("expires_in", ["1e400", "1" + "0" * 400])
async def test_an_absurd_expiry_is_one_clear_error(expires_in: str) -> None:
    async with world() as w:

        async def issuing(server: FakeAuthServer, request: Recorded) -> Answer:
            if request.path != "/token":
                return None
            body = '{"access_token": "at-1", "token_type": "Bearer", "expires_in": ' + expires_in + "}"
            return 200, {"content-type": "application/json"}, body.encode()

        w.auth_server.clients["svc"] = {"client_id": "svc", "client_secret": "pw", "redirect_uris": []}
        w.auth_server.override = issuing
        auth = OAuthClient(grant=ClientCredentials(client_id="svc", client_secret="pw"), clock=w.clock)
        with trio.fail_after(20), pytest.raises(AuthorizationError, match="expires_in: a number out of") as raised:
            async with open_http_client(w.mcp.url, auth=auth):
                pytest.fail("the session must not open")
        assert raised.value.step == "token"


async def test_a_stored_token_no_header_can_carry_is_not_quoted_either() -> None:
    async with world() as w:
        storage = InMemoryTokenStorage()
        async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage)) as client:
            await echo(client)
        # the stored file was tampered with (or written by a careless tool)
        key, stored = next(iter(storage.items.items()))
        assert stored.tokens is not None
        bad = attrs.evolve(stored.tokens, access_token=SECRET + "\r\nX-Injected: 1")
        storage.items[key] = attrs.evolve(stored, tokens=bad)
        with trio.fail_after(20), pytest.raises(HTTPTransportError) as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage)):
                pytest.fail("the session must not open")
        assert "authorization header" in str(raised.value) and "SECRET" not in str(raised.value)


async def test_malformed_server_metadata_names_the_member() -> None:
    async with world() as w:
        w.auth_server.metadata_changes["token_endpoint"] = "/relative"
        with pytest.raises(AuthorizationError, match="token_endpoint") as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization-server-metadata"


async def test_a_slow_authorization_server_times_out(autojump_clock: Any) -> None:
    async with world() as w:

        async def slow(server: FakeAuthServer, request: Recorded) -> Answer:
            if request.path == "/register":
                await trio.sleep_forever()
            return None

        w.auth_server.override = slow
        with pytest.raises(AuthorizationError, match="within 5 s") as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
        assert raised.value.step == "registration"


@pytest.mark.req("basic/authorization#80", "basic/authorization#79")
async def test_authorization_server_endpoints_must_be_https() -> None:
    async with world() as w:
        w.auth_server.metadata_changes["token_endpoint"] = "http://auth.example/token"
        with pytest.raises(AuthorizationError, match="not https"):
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")


async def test_no_half_open_session_after_a_failure_mid_session() -> None:
    """Authorization lost mid-session (every token revoked, the token endpoint broken): the
    session ends, and the block raises the AuthorizationError naming the step."""
    async with world() as w:
        with pytest.raises(AuthorizationError) as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)) as client:
                await echo(client)
                w.auth_server.access.clear()

                async def broken(server: FakeAuthServer, request: Recorded) -> Answer:
                    return (500, {"content-type": "text/plain"}, b"down") if request.path == "/token" else None

                w.auth_server.override = broken
                await echo(client)
        assert raised.value.step == "token" and raised.value.status == 500


# -- storage and the loopback callback ------------------------------------------------------------------


@pytest.mark.req("2026-07-28:basic/authorization/index#48")
async def test_a_stored_refresh_token_is_readable_by_its_user_only(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "tokens.json"
    stored = StoredAuthorization(tokens=Tokens(access_token="a", refresh_token="secret-refresh"), issuer="https://as")
    await FileTokenStorage(path).save("https://mcp/mcp", stored)
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir() if "secret-refresh" in p.read_text()] == ["tokens.json"]


@pytest.mark.req("basic/authorization#76")
async def test_file_storage_is_private_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "tokens.json"
    storage = FileTokenStorage(path)
    value = StoredAuthorization(
        tokens=Tokens(access_token="a", refresh_token="r", expires_at=5.0),
        client=ClientInformation(client_id="c", client_secret="s", issuer="https://as"),
        issuer="https://as",
    )
    await storage.save("https://mcp/mcp", value)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert await FileTokenStorage(path).load("https://mcp/mcp") == value
    await storage.save("https://other/mcp", None)
    assert await storage.load("https://other/mcp") is None
    await storage.save("https://mcp/mcp", None)
    assert await storage.load("https://mcp/mcp") is None
    path.write_text("not json")
    assert await storage.load("https://mcp/mcp") is None  # unreadable: authorize again


@pytest.mark.req("basic/authorization#76")
async def test_file_storage_modes_are_the_owners_only(tmp_path: Path) -> None:
    # the directory it makes, the lock file beside it, and a file an older version (or the
    # user) left readable by others: after a save, none is open to anyone but the owner
    path = tmp_path / "made" / "tokens.json"
    await FileTokenStorage(path).save("https://mcp/mcp", StoredAuthorization(tokens=Tokens(access_token="a")))
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path.with_name("tokens.json.lock")).st_mode) == 0o600
    loose = tmp_path / "loose.json"
    loose.write_text("{}")
    os.chmod(loose, 0o644)
    await FileTokenStorage(loose).save("https://mcp/mcp", StoredAuthorization(tokens=Tokens(access_token="a")))
    assert stat.S_IMODE(os.stat(loose).st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tokens-")] == []  # no temporary left


@pytest.mark.req("basic/authorization#76")
@pytest.mark.subprocess
async def test_two_processes_saving_into_one_file_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, script("token_saver")]
    async with trio.open_nursery() as nursery:
        savers = [
            await trio.lowlevel.open_process([*argv, str(path), p, "200"], stdin=PIPE, stdout=PIPE, env=env)
            for p in ("a", "b")
        ]
        for saver in savers:
            assert saver.stdout is not None
            seen = b""
            with trio.fail_after(30):
                while not seen.endswith(b"\n"):
                    chunk = await saver.stdout.receive_some()
                    assert chunk, seen
                    seen += chunk
            assert seen == b"ready\n"
        for saver in savers:  # (both read "go" at once: their saves interleave)
            assert saver.stdin is not None
            await saver.stdin.send_all(b"go\n")
        with trio.fail_after(120):
            for saver in savers:
                assert await saver.wait() == 0
        nursery.cancel_scope.cancel()
    keys = set(json.loads(path.read_text()))
    assert keys == {f"{p}-{n}" for p in ("a", "b") for n in range(200)}  # before: 250 of 400 were kept
    assert not list(tmp_path.glob(".tokens-*"))  # no temporary file left behind


async def test_loopback_callback_listener() -> None:
    async with open_loopback_callback() as callback:
        parts = urlsplit(callback.redirect_uri)
        assert parts.hostname == "127.0.0.1" and parts.path == "/callback"
        missing = await http_exchange("GET", callback.redirect_uri.replace("/callback", "/other"), timeout=5)
        assert missing.status == 404
        ok = await http_exchange("GET", callback.redirect_uri + "?code=abc&state=xyz", timeout=5)
        assert ok.status == 200 and b"close this window" in ok.body
        assert await callback() == AuthorizationResponse(code="abc", state="xyz")
    with pytest.raises(ValueError, match="loopback"):
        async with open_loopback_callback(host="0.0.0.0"):
            pass


async def test_the_whole_flow_with_the_loopback_listener() -> None:
    """The browser follows the authorization server's redirect to the loopback listener."""

    async def browser(url: str) -> None:
        with pytest.raises(HTTPTransportError) as redirected:
            await http_exchange("GET", url, timeout=5)
        assert redirected.value.location is not None
        await http_exchange("GET", redirected.value.location, timeout=5)  # followed to the listener

    async with world() as w, open_loopback_callback() as callback:
        auth = OAuthClient(
            redirect_uri=callback.redirect_uri, redirect_handler=browser, callback_handler=callback, clock=w.clock
        )
        async with open_http_client(w.mcp.url, auth=auth) as client:
            assert await echo(client) == "hi"
        (authorize,) = requests_to(w, "GET", "/authorize")
        assert parse_qs(urlsplit(authorize.query["redirect_uri"]).query) == {}


@pytest.mark.req("basic/authorization#29", "basic/authorization#30")
def test_bad_use_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(ValueError, match="redirect_uri"):
        OAuthClient()
    with pytest.raises(ValueError, match="client id metadata document"):
        OAuthClient(grant=ClientCredentials(client_id="c", client_secret="s"), client_id_metadata_url="http://x/c")
    with pytest.raises(ValueError, match="one of them"):
        ClientCredentials(client_id="c")
    auth = OAuthClient(grant=ClientCredentials(client_id="c", client_secret="s"))
    auth.bind("https://a.example/mcp")
    with pytest.raises(ValueError, match="one per server"):
        auth.bind("https://b.example/mcp")


@pytest.mark.req("basic/authorization#33")
async def test_client_credentials_with_private_key_jwt() -> None:
    """RFC 7523 client authentication: an ES256 assertion for the authorization server's issuer."""
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    async with world() as w:
        w.auth_server.metadata_changes["token_endpoint_auth_methods_supported"] = ["private_key_jwt"]
        claims: dict[str, Any] = {}

        async def check_assertion(server: FakeAuthServer, request: Recorded) -> Answer:
            if request.path != "/token":
                return None
            assert request.form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            claims.update(
                jwt.decode(
                    request.form["client_assertion"],
                    key.public_key(),
                    ["ES256"],
                    audience=server.url,
                    options=UNCHECKED,
                )
            )
            server.clients["svc"] = {"client_id": "svc", "client_secret": "", "redirect_uris": []}
            request.form.pop("client_assertion")
            request.form["client_id"] = "svc"
            return None

        w.auth_server.override = check_assertion
        auth = OAuthClient(grant=ClientCredentials(client_id="svc", private_key=pem), clock=w.clock)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
        assert claims["iss"] == claims["sub"] == "svc" and claims["aud"] == w.auth_server.url


async def test_cross_app_access() -> None:
    """The ID token is exchanged at the identity provider (RFC 8693), the ID-JAG presented as a JWT
    bearer grant (RFC 7523) with the client's credentials."""
    async with world() as w:
        w.auth_server.clients["xaa"] = {"client_id": "xaa", "client_secret": "pw", "redirect_uris": []}
        seen: dict[str, dict[str, str]] = {}

        async def idp_and_grant(server: FakeAuthServer, request: Recorded) -> Answer:
            if request.path == "/idp/token":
                seen["exchange"] = request.form
                doc = {
                    "access_token": "id-jag",
                    "issued_token_type": TOKEN_TYPE_ID_JAG,
                    "token_type": "N_A",
                }
                return 200, {"content-type": "application/json"}, json.dumps(doc).encode()
            if request.path == "/token" and request.form.get("grant_type") == GRANT_JWT_BEARER:
                seen["grant"] = request.form
                assert request.headers["authorization"].startswith("Basic ")
                return server._issue("xaa", "mcp", w.mcp.url)
            return None

        w.auth_server.override = idp_and_grant
        from mcp_ref.basic.transports.oauth_client import CrossAppAccess

        grant = CrossAppAccess(
            idp_token_endpoint=w.auth_server.url + "/idp/token",
            id_token="the-users-id-token",
            idp_client_id="idp-client",
            client_id="xaa",
            client_secret="pw",
        )
        async with open_http_client(w.mcp.url, auth=OAuthClient(grant=grant, clock=w.clock)) as client:
            await echo(client)
        exchange = seen["exchange"]
        assert exchange["subject_token"] == "the-users-id-token" and exchange["audience"] == w.auth_server.url
        assert exchange["resource"] == w.mcp.url and exchange["client_id"] == "idp-client"
        assert exchange["requested_token_type"] == TOKEN_TYPE_ID_JAG
        assert seen["grant"]["assertion"] == "id-jag"


@pytest.mark.req("basic/authorization#79", "basic/authorization#80")
async def test_an_identity_provider_token_endpoint_over_plain_http_is_refused() -> None:
    # the application gave this URL, so the fetch rules do not apply to it; https still does
    # (the user's ID token would cross the network in the clear), loopback excepted
    from mcp_ref.basic.transports.oauth_client import CrossAppAccess

    async with world() as w:
        w.auth_server.clients["xaa"] = {"client_id": "xaa", "client_secret": "pw", "redirect_uris": []}
        grant = CrossAppAccess(
            idp_token_endpoint="http://idp.example/token",
            id_token="the-users-id-token",
            idp_client_id="idp-client",
            client_id="xaa",
            client_secret="pw",
        )
        with trio.fail_after(20), pytest.raises(AuthorizationError, match="is not https") as raised:
            async with open_http_client(w.mcp.url, auth=OAuthClient(grant=grant, clock=w.clock)):
                pytest.fail("the session must not open")
        assert raised.value.step == "token-exchange" and "the-users-id-token" not in str(raised.value)


async def test_resource_metadata_of_an_https_server_is_read_over_https() -> None:
    """A 401 from an https server pointing at plain-HTTP metadata (which anyone on the path could
    rewrite to name their own authorization server) is refused before it is fetched."""
    auth = OAuthClient(grant=ClientCredentials(client_id="c", client_secret="s"))
    with pytest.raises(AuthorizationError, match="not https") as raised:
        await auth.challenged(
            "https://mcp.example/mcp", 401, 'Bearer resource_metadata="http://mcp.example/.well-known/x"', None
        )
    assert raised.value.step == "resource-metadata"


# -- failures the user meets (issue 19's trial) -----------------------------------------------------


async def _html_token_endpoint(server: FakeAuthServer, request: Recorded) -> Answer:
    return (502, {"content-type": "text/html"}, b"<html>bad gateway</html>") if request.path == "/token" else None


async def test_a_failure_inside_the_loopback_callback_block_is_one_authorization_error() -> None:
    """The README's shape (open_http_client inside open_loopback_callback): the caller's
    ``except AuthorizationError`` sees the error itself, not an ExceptionGroup from the listener."""
    async with world() as w:
        w.auth_server.override = _html_token_endpoint
        with pytest.raises(AuthorizationError, match="502") as raised:
            async with open_loopback_callback():
                async with open_http_client(w.mcp.url, auth=oauth(w)):
                    pytest.fail("the session must not open")
        assert raised.value.step == "token"


async def test_the_loopback_callback_on_a_port_in_use_is_one_clear_error() -> None:
    async with open_loopback_callback() as taken:
        port = urlsplit(taken.redirect_uri).port
        assert port is not None
        with pytest.raises(CallbackListenError, match=f"cannot listen on 127.0.0.1 port {port}") as raised:
            async with open_loopback_callback(port=port):
                pytest.fail("a second listener on the same port")
        assert isinstance(raised.value, OSError) and raised.value.errno is not None


async def test_a_redirect_handler_that_raises_fails_the_authorization_step() -> None:
    async def broken_browser(url: str) -> None:
        raise OSError("no browser here")

    async with world() as w:
        auth = oauth(w)
        auth.redirect_handler = broken_browser
        with pytest.raises(AuthorizationError, match="broken_browser raised OSError: no browser here") as raised:
            async with open_http_client(w.mcp.url, auth=auth):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization"
        assert isinstance(raised.value.__cause__, OSError)
        assert requests_to(w, "POST", "/token") == []


async def test_a_forgotten_dynamic_registration_is_registered_again(autojump_clock: Any) -> None:
    """The authorization server restarted and forgot the client it registered (and its tokens):
    the refresh fails with invalid_client, the stored client is dropped and a new one registered,
    instead of sending the user to authorize with a client id that no longer exists."""
    async with world() as w:
        storage = InMemoryTokenStorage()
        async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage)) as client:
            await echo(client)
        w.auth_server.clients.clear()
        w.auth_server.access.clear()
        w.auth_server.refresh.clear()
        async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage)) as client:
            assert await echo(client, "again") == "again"
        first, second = requests_to(w, "POST", "/register")
        assert len(requests_to(w, "GET", "/authorize")) == 2
        assert [r.form["grant_type"] for r in requests_to(w, "POST", "/token")] == [
            "authorization_code",
            "refresh_token",
            "authorization_code",
        ]


async def test_pre_registered_credentials_are_never_dropped_on_invalid_client() -> None:
    async with world() as w:
        w.auth_server.clients["pre"] = {"client_id": "pre", "client_secret": "s", "redirect_uris": [REDIRECT_URI]}
        pre = ClientInformation(client_id="pre", client_secret="s")
        storage = InMemoryTokenStorage()
        async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage, client_information=pre)) as client:
            await echo(client)
        w.auth_server.clients.clear()
        w.auth_server.access.clear()
        w.auth_server.refresh.clear()
        with pytest.raises(AuthorizationError) as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage, client_information=pre)):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization"  # the authorization server refuses the unknown client
        assert requests_to(w, "POST", "/register") == []


async def test_discovery_has_one_deadline_for_all_well_known_urls(autojump_clock: Any) -> None:
    """A slow authorization server: giving up takes ``timeout`` in all, not ``timeout`` for each
    of the well-known URLs it has (RFC 8414 and OpenID Connect)."""
    async with world() as w:

        async def slow(server: FakeAuthServer, request: Recorded) -> Answer:
            if request.path.startswith("/.well-known/"):
                await trio.sleep_forever()
            return None

        w.auth_server.override = slow
        start = trio.current_time()
        with pytest.raises(AuthorizationError, match="within 5 s") as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization-server-metadata"
        assert trio.current_time() - start < 5 + 1  # (two URLs at 5 s each took 10 s)


async def test_an_authorization_server_that_is_down_is_called_unreachable() -> None:
    with trio.socket.socket() as probe:
        await probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"  # (closed below: nothing listens there)
    async with world() as w:

        async def resource_metadata(server: FakeAuthServer, request: Recorded) -> Answer:
            if request.path == "/prm":
                document = {"resource": w.mcp.url, "authorization_servers": [dead]}
                return 200, {"content-type": "application/json"}, json.dumps(document).encode()
            return None

        w.auth_server.override = resource_metadata
        auth = oauth(w)
        _point_challenge_at(auth, w.auth_server.url + "/prm")
        with pytest.raises(AuthorizationError, match=f"{dead} is unreachable") as raised:
            async with open_http_client(w.mcp.url, auth=auth):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization-server-metadata"
        assert "no metadata at any well-known URL" not in str(raised.value)


@pytest.mark.req("basic/authorization#69")
async def test_a_failed_step_up_is_an_authorization_error_and_the_session_goes_on() -> None:
    """The authorization server refuses the step-up (invalid_scope): that call raises the
    AuthorizationError naming the step, not an MCPError, and the session survives."""
    async with world(tool_scopes={"reset": ["mcp:admin"]}) as w:
        async with open_http_client(w.mcp.url, auth=oauth(w)) as client:
            await echo(client)
            w.auth_server.redirect_extra = {"error": "invalid_scope", "error_description": "not for you"}
            with pytest.raises(AuthorizationError, match="invalid_scope") as raised:
                await client.call_tool("reset", {})
            assert raised.value.step == "authorization" and raised.value.error == "invalid_scope"
            w.auth_server.redirect_extra = {}
            assert await echo(client, "alive") == "alive"


async def test_a_protected_server_without_auth_says_how_to_authorize() -> None:
    async with world() as w:
        with pytest.raises(HTTPTransportError, match=r"auth=OAuthClient\(\.\.\.\)") as raised:
            async with open_http_client(w.mcp.url):
                pytest.fail("the session must not open")
        assert raised.value.status == 401


async def test_a_failure_that_is_raised_is_not_also_logged_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """Raised to the caller and printed by logging's last-resort handler (no logging set up)
    would say the same thing twice."""
    async with world() as w:
        w.auth_server.override = _html_token_endpoint
        with pytest.raises(AuthorizationError):
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


# -- 2026-07-28: application_type, iss, credentials bound to their authorization server ----------------


@pytest.mark.req(
    "2026-07-28:basic/authorization/client-registration#18", "2026-07-28:basic/authorization/client-registration#19"
)
async def test_dynamic_registration_names_the_application_type() -> None:
    """A loopback redirect URI is a native application's: said so, as OpenID Connect servers
    otherwise take "web" and refuse the loopback redirect; the application may say otherwise."""
    async with world() as w:
        async with open_http_client(w.mcp.url, auth=oauth(w)) as client:
            await echo(client)
        (register,) = requests_to(w, "POST", "/register")
        assert json.loads(register.form["_body"])["application_type"] == "native"
    async with world() as w:
        auth = oauth(w, client_metadata=ClientMetadata(client_name="web app", application_type="web"))
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
        (register,) = requests_to(w, "POST", "/register")
        assert json.loads(register.form["_body"])["application_type"] == "web"


@pytest.mark.req("2026-07-28:basic/authorization/client-registration#2")
async def test_a_client_id_metadata_document_url_is_the_client_id_where_the_server_takes_them() -> None:
    """With client_id_metadata_url and a server that says it takes such documents, the URL is
    the client id: nothing is registered (the server fetches the document; here it knows it)."""
    url = "https://app.example/oauth/client.json"
    async with world() as w:
        w.auth_server.metadata_changes["client_id_metadata_document_supported"] = True
        w.auth_server.clients[url] = {"client_id": url, "redirect_uris": [REDIRECT_URI]}
        async with open_http_client(w.mcp.url, auth=oauth(w, client_id_metadata_url=url)) as client:
            await echo(client)
        assert not requests_to(w, "POST", "/register")
        (authorize,) = requests_to(w, "GET", "/authorize")
        assert authorize.query["client_id"] == url


@pytest.mark.req("2026-07-28:basic/authorization/index#49")
async def test_a_client_that_wants_refresh_tokens_registers_the_refresh_token_grant() -> None:
    """The refresh_token grant is in the registered grant_types when refresh tokens are
    wanted (the default), and left out when they are not."""
    for want in (True, False):
        async with world() as w:
            async with open_http_client(w.mcp.url, auth=oauth(w, want_refresh_token=want)) as client:
                await echo(client)
            (register,) = requests_to(w, "POST", "/register")
            grants = json.loads(register.form["_body"])["grant_types"]
            assert "authorization_code" in grants and ("refresh_token" in grants) is want


@pytest.mark.req(
    "2026-07-28:basic/authorization/client-registration#21", "2026-07-28:basic/authorization/client-registration#22"
)
async def test_a_registration_refused_for_its_redirect_uri_says_what_was_asked() -> None:
    async def oidc_rules(server: FakeAuthServer, request: Recorded) -> Answer:
        if request.path != "/register":
            return None
        doc = {"error": "invalid_redirect_uri", "error_description": "web clients use https redirect URIs"}
        return 400, {"content-type": "application/json"}, json.dumps(doc).encode()

    async with world() as w:
        w.auth_server.override = oidc_rules
        with pytest.raises(AuthorizationError) as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
        assert raised.value.step == "registration" and raised.value.error == "invalid_redirect_uri"
        message = str(raised.value)
        assert "web clients use https" in message and "'native'" in message and REDIRECT_URI in message
        assert not w.browser.opened


@pytest.mark.req("2026-07-28:basic/authorization/index#25", "2026-07-28:basic/authorization/index#27")
async def test_an_iss_that_only_normalisation_would_match_is_refused_before_the_token_request() -> None:
    """RFC 9207 simple string comparison, end to end: the issuer with a trailing slash is another
    issuer, and the code never reaches the token endpoint."""
    async with world() as w:
        w.auth_server.metadata_changes["authorization_response_iss_parameter_supported"] = True
        w.auth_server.redirect_extra = {"iss": w.auth_server.url + "/"}
        with pytest.raises(AuthorizationError) as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
        assert raised.value.step == "authorization" and raised.value.error == "issuer_mismatch"
        assert requests_to(w, "GET", "/authorize") and not requests_to(w, "POST", "/token")
    async with world() as w:
        w.auth_server.redirect_extra = {"iss": w.auth_server.url}  # exactly the issuer: redeemed
        async with open_http_client(w.mcp.url, auth=oauth(w)) as client:
            await echo(client)


@pytest.mark.req("2026-07-28:basic/authorization/index#25")
async def test_a_missing_iss_that_was_advertised_is_refused() -> None:
    async with world() as w:
        w.auth_server.metadata_changes["authorization_response_iss_parameter_supported"] = True
        with pytest.raises(AuthorizationError) as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w)):
                pytest.fail("the session must not open")
        assert raised.value.error == "issuer_mismatch" and not requests_to(w, "POST", "/token")


class _MovableVerifier:
    """The MCP server's verifier: only tokens of the authorization server it currently names."""

    def __init__(self, server: FakeAuthServer) -> None:
        self.current = server

    async def verify(self, token: str) -> Any:
        return await self.current.verify(token)


@asynccontextmanager
async def _two_authorization_servers() -> AsyncIterator[tuple[World, FakeAuthServer, ProtectedResource]]:
    """``world()`` with a second authorization server the protected resource can move to."""
    async with world() as w, trio.open_nursery() as nursery:
        second = FakeAuthServer(w.clock)
        listeners = await nursery.start(partial(trio.serve_tcp, second.serve_connection, 0, host="127.0.0.1"))
        second.url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}"
        protected = w.protected
        assert protected is not None
        yield w, second, protected
        nursery.cancel_scope.cancel()


def _move(protected: ProtectedResource, to: FakeAuthServer) -> None:
    """The resource now names ``to`` in its metadata and accepts only its tokens."""
    object.__setattr__(protected, "authorization_servers", (to.url,))
    verifier = protected.verifier
    assert isinstance(verifier, _MovableVerifier)
    verifier.current = to


@pytest.mark.req(
    "2026-07-28:basic/authorization/client-registration#24",
    "2026-07-28:basic/authorization/client-registration#25",
    "2026-07-28:basic/authorization/authorization-server-discovery#3",
)
async def test_a_new_authorization_server_means_a_new_registration_and_no_old_credentials() -> None:
    """The protected resource metadata names another authorization server mid-session: the old
    token is refused, the client reads the metadata again, registers at the new server and
    authorizes there; the old server's client id, secret and refresh token never reach it."""
    async with _two_authorization_servers() as (w, second, protected):
        first = w.auth_server
        object.__setattr__(protected, "verifier", _MovableVerifier(first))
        storage = InMemoryTokenStorage()
        auth = oauth(w, storage=storage)
        async with open_http_client(w.mcp.url, auth=auth) as client:
            await echo(client)
            (old_client,) = first.clients.values()
            _move(protected, second)
            assert await echo(client, "moved") == "moved"
        assert len(requests_to(w, "POST", "/register")) == 1
        (registered,) = [r for r in second.requests if (r.method, r.path) == ("POST", "/register")]
        (new_client,) = second.clients.values()
        assert new_client["client_id"] != old_client["client_id"]
        sent_to_second = json.dumps([attrs.asdict(r) for r in second.requests])
        assert old_client["client_id"] not in sent_to_second
        assert "client_secret" not in old_client or old_client["client_secret"] not in sent_to_second
        assert not any(rt in sent_to_second for rt in first.refresh)
        assert not [r for r in first.requests if r.form.get("grant_type") == "refresh_token"]
        # both registrations kept, each under its own issuer; the server's entry names the new one
        entry = storage.items[canonical_resource(w.mcp.url)]
        assert entry.issuer == second.url and entry.client is None
        assert storage.items[f"client-registration {first.url}"].client.client_id == old_client["client_id"]  # type: ignore[union-attr]
        assert storage.items[f"client-registration {second.url}"].client.client_id == new_client["client_id"]  # type: ignore[union-attr]


@pytest.mark.req("2026-07-28:basic/authorization/client-registration#24")
async def test_moving_back_reuses_the_registration_made_there() -> None:
    async with _two_authorization_servers() as (w, second, protected):
        first = w.auth_server
        object.__setattr__(protected, "verifier", _MovableVerifier(first))
        storage = InMemoryTokenStorage()
        async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage)) as client:
            await echo(client)
            _move(protected, second)
            await echo(client)
            _move(protected, first)
            await echo(client)
        assert len(requests_to(w, "POST", "/register")) == 1
        assert len([r for r in second.requests if r.path == "/register"]) == 1
        assert len(requests_to(w, "GET", "/authorize")) == 2


@pytest.mark.req("2026-07-28:basic/authorization/client-registration#26")
async def test_pre_registered_credentials_of_another_authorization_server_are_an_error() -> None:
    async with world() as w:
        pre = ClientInformation(client_id="pre", client_secret="s", issuer="https://other-as.example")
        with pytest.raises(AuthorizationError, match=r"other-as\.example") as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w, client_information=pre)):
                pytest.fail("the session must not open")
        assert raised.value.step == "registration"
        assert not requests_to(w, "POST", "/register") and not requests_to(w, "GET", "/authorize")


@pytest.mark.req("2026-07-28:basic/authorization/client-registration#26")
async def test_pre_registered_credentials_are_not_carried_to_a_new_authorization_server() -> None:
    """Given without an issuer, they belong to the server they were first used with: when the
    resource moves, an error says so instead of presenting them to the new server."""
    async with _two_authorization_servers() as (w, second, protected):
        first = w.auth_server
        object.__setattr__(protected, "verifier", _MovableVerifier(first))
        first.clients["pre"] = {"client_id": "pre", "client_secret": "s", "redirect_uris": [REDIRECT_URI]}
        pre = ClientInformation(client_id="pre", client_secret="s")
        # (a 401 no authorization can meet ends the session: open_http_client raises it)
        with pytest.raises(AuthorizationError, match="pre-registered client 'pre'") as raised:
            async with open_http_client(w.mcp.url, auth=oauth(w, client_information=pre)) as client:
                await echo(client)
                _move(protected, second)
                await echo(client)
        assert raised.value.step == "registration"
        assert not [r for r in second.requests if r.path in ("/authorize", "/token", "/register")]


async def test_a_stored_entry_of_the_old_format_still_gives_its_client_id() -> None:
    """Entries written before registrations were kept by issuer hold the client id next to the
    tokens: read, for that issuer only."""
    async with world() as w:
        storage = InMemoryTokenStorage()
        async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage)) as client:
            await echo(client)
        key = canonical_resource(w.mcp.url)
        registration = storage.items.pop(f"client-registration {w.auth_server.url}").client
        storage.items[key] = attrs.evolve(storage.items[key], client=registration, tokens=None)
        async with open_http_client(w.mcp.url, auth=oauth(w, storage=storage)) as client:
            await echo(client)
        assert len(requests_to(w, "POST", "/register")) == 1
        assert len(requests_to(w, "GET", "/authorize")) == 2


@pytest.mark.req("2025-03-26:basic/authorization#18")
@pytest.mark.parametrize("has_metadata", [True, False], ids=["with-metadata", "without-metadata"])
async def test_a_2025_03_26_server_without_resource_metadata_is_asked_for_its_metadata_first(
    has_metadata: bool,
) -> None:
    """A server of 2025-03-26 authorization (no protected resource metadata, its own
    authorization server at its origin): its metadata is asked for before any default endpoint
    is used, and what it says wins over the defaults."""
    async with world() as w:
        a = w.auth_server
        mcp_url = a.url + "/mcp"  # (the fake authorization server plays the 2025-03-26 MCP server)
        if has_metadata:
            a.metadata_changes = {"token_endpoint": a.url + "/oauth/token"}

            async def moved_token_endpoint(server: FakeAuthServer, request: Recorded) -> Answer:
                return server._token(request) if request.path == "/oauth/token" else None

            a.override = moved_token_endpoint
        else:
            a.metadata_path = "/nowhere"
        auth = oauth(w)
        assert await auth.challenged(mcp_url, 401, "Bearer", None) is True
        assert auth.tokens is not None
        paths = [(r.method, r.path) for r in a.requests]
        metadata = paths.index(("GET", "/.well-known/oauth-authorization-server"))
        first_endpoint = min(i for i, p in enumerate(paths) if p in {("POST", "/register"), ("POST", "/token")})
        assert metadata < first_endpoint
        token_paths = {path for method, path in paths if method == "POST" and "token" in path}
        assert token_paths == ({"/oauth/token"} if has_metadata else {"/token"})
