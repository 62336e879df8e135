"""``mcp-ref check URL`` against a protected server: how it asks for a token is judged
(basic/authorization), the OAuth flow or a given bearer token authorizes the battery, and
without credentials the target is refused saying what to pass (exit status 2)."""

import json
from functools import partial
from typing import Any

import h11
import pytest
import trio

from mcp_ref.basic.authorization.resource_server import ProtectedResource
from mcp_ref.basic.transports.oauth_client import OAuthClient
from mcp_ref.basic.transports.token_verifiers import IntrospectionVerifier
from mcp_ref.crosscheck.battery import Battery, check_server
from mcp_ref.crosscheck.targets import HttpTarget, TargetUnreachable
from mcp_ref.examples.auth_server import AuthorizationServer, serve_auth_server
from mcp_ref.examples.everything import build_server
from mcp_ref.session.http import serve_http
from mcp_ref.testing.oauth import HeadlessBrowser

REDIRECT = "http://127.0.0.1:33419/callback"


async def _protected(nursery: trio.Nursery) -> tuple[str, str]:
    """The everything example behind OAuth (the example authorization server, by introspection)."""
    authority = AuthorizationServer()
    secret = authority.add_resource_server("mcp-server")
    issuer = await nursery.start(serve_auth_server, authority)
    verifier = IntrospectionVerifier(issuer + "/introspect", "mcp-server", secret, issuer=issuer)
    auth = ProtectedResource(verifier=verifier, authorization_servers=[issuer], required_scopes=["mcp"])
    server = build_server(nursery)
    info = await nursery.start(lambda task_status: serve_http(server, auth=auth, task_status=task_status))
    return issuer, info.url


@pytest.mark.req("basic/authorization#14", "basic/authorization#16", "basic/authorization#60")
async def test_the_oauth_flow_authorizes_the_battery_and_the_protected_example_comes_out_clean() -> None:
    browser = HeadlessBrowser()
    async with trio.open_nursery() as nursery:
        _, url = await _protected(nursery)
        auth = OAuthClient(redirect_uri=REDIRECT, redirect_handler=browser.open, callback_handler=browser.callback)
        report = await check_server(HttpTarget(url), only=["authorization", "ping", "tools"], auth=auth)
        assert auth.tokens is not None
        token = auth.tokens.authorization()
        # a maintainer's bearer token does the same
        with_header = await check_server(HttpTarget(url, {"Authorization": token}), only=["ping"])
        # without credentials, or with wrong ones, the target is refused saying what to pass
        with pytest.raises(TargetUnreachable) as anonymous:
            await check_server(HttpTarget(url), only=["ping"])
        with pytest.raises(TargetUnreachable) as wrong:
            await check_server(HttpTarget(url, {"authorization": "Bearer nope"}), only=["ping"])
        nursery.cancel_scope.cancel()
    assert report.findings == [], report.to_text()
    statuses = {c.name: c.status for c in report.checks}
    assert statuses["authorization/discovery"] == "pass" and statuses["authorization/invalid-token-401"] == "pass"
    assert "fail" not in statuses.values() and statuses["ping/answered-promptly"] == "pass", report.to_text()
    assert any("authorized by the OAuth flow" in n for n in report.notes)
    # (every check passes but those that need a tool the run did not name: the 2026-07-28 cancellation's slow tool)
    unnamed = [c for c in with_header.checks if c.status == "skip" and "--slow-tool" in c.detail]
    assert with_header.findings == [] and {c.status for c in with_header.checks if c not in unnamed} == {"pass"}
    assert "asks for authorization (HTTP 401, WWW-Authenticate: Bearer" in str(anonymous.value)
    assert "--header 'Authorization: Bearer TOKEN'" in str(anonymous.value) and "--oauth" in str(anonymous.value)
    assert "refused the credentials (HTTP 401" in str(wrong.value)


@pytest.mark.req("basic/authorization#14", "basic/authorization#60")
async def test_a_2026_server_behind_oauth_is_recognised_and_checked_with_the_token() -> None:
    browser = HeadlessBrowser()
    async with trio.open_nursery() as nursery:
        _, url = await _protected(nursery)
        # without credentials: the 401 and its resource metadata are named, not "no 2026-07-28"
        with pytest.raises(TargetUnreachable) as anonymous:
            await check_server(HttpTarget(url), revision="2026-07-28")
        auth = OAuthClient(redirect_uri=REDIRECT, redirect_handler=browser.open, callback_handler=browser.callback)
        report = await check_server(HttpTarget(url), revision="2026-07-28", auth=auth)
        nursery.cancel_scope.cancel()
    assert "asks for authorization (HTTP 401, WWW-Authenticate: Bearer resource_metadata=" in str(anonymous.value)
    # the token got first serves the 2026-07-28 battery: the example speaks that revision and is clean
    assert report.revision == "2026-07-28" and report.findings == [], report.to_text()
    statuses = {c.name: c.status for c in report.checks}
    assert statuses["authorization/discovery"] == "pass" and statuses["modern/discover"] == "pass"
    assert statuses["modern/tools/call"] == "pass", report.to_text()


async def _read_request(stream: trio.SocketStream) -> tuple[h11.Connection, h11.Request | None]:
    conn = h11.Connection(h11.SERVER)
    request: h11.Request | None = None
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await stream.receive_some(65536))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            return conn, request


async def _answer(stream: trio.SocketStream, conn: h11.Connection, status: int, extra: list[Any], body: bytes) -> None:
    head = [*extra, ("content-length", str(len(body))), ("connection", "close")]
    out = conn.send(h11.Response(status_code=status, headers=head)) or b""
    out += (conn.send(h11.Data(data=body)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
    await stream.send_all(out)
    await stream.aclose()


async def _always_401(stream: trio.SocketStream) -> None:
    conn, _ = await _read_request(stream)
    www = 'Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource"'
    await _answer(stream, conn, 401, [("www-authenticate", www)], b"")


async def test_the_2026_battery_says_a_refused_discover_asks_for_authorization() -> None:
    from mcp_ref.crosscheck.modern import ModernBattery
    from mcp_ref.crosscheck.report import Report

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, _always_401, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        report = Report("x")
        battery = ModernBattery(HttpTarget(f"http://127.0.0.1:{port}/mcp", {"Authorization": "Bearer old"}), report)
        assert await battery.run() is False
        nursery.cancel_scope.cancel()
    assert battery.unauthorized and not report.findings
    assert any("server/discover was refused with HTTP 401" in n and "resource_metadata" in n for n in report.notes)


async def _lax_server(stream: trio.SocketStream) -> None:
    """Protected the wrong way: a bare ``Bearer`` challenge (no resource_metadata, no scope),
    no metadata at the well-known URLs, and any token let through."""
    conn, request = await _read_request(stream)
    assert request is not None
    headers = {k.decode().lower(): v.decode() for k, v in request.headers}
    body = b""
    if request.target.startswith(b"/.well-known/"):
        status, extra = 404, []
    elif "authorization" not in headers:
        status, extra = 401, [("www-authenticate", "Bearer")]
    else:
        status, extra = 200, [("content-type", "application/json")]
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "lax", "version": "1"}}
        body = json.dumps({"jsonrpc": "2.0", "id": "mcp-ref-probe", "result": result}).encode()
    await _answer(stream, conn, status, extra, body)


@pytest.mark.req("basic/authorization#14", "basic/authorization#16", "basic/authorization#60")
async def test_a_server_protected_the_wrong_way_is_reported_with_the_rules_it_breaks() -> None:
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, _lax_server, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        battery = Battery(HttpTarget(f"http://127.0.0.1:{port}/mcp"), only=["authorization"])
        with pytest.raises(TargetUnreachable):
            await battery._authorization()  # no credentials: the battery itself cannot go on
        nursery.cancel_scope.cancel()
    found = {f.requirement: f for f in battery.report.findings}
    assert set(found) == {"basic/authorization#14", "basic/authorization#16", "basic/authorization#60"}
    assert found["basic/authorization#14"].level == "MUST" and found["basic/authorization#16"].level == "SHOULD"
    assert "HTTP 200, not 401" in found["basic/authorization#60"].message
    assert {c.name: c.status for c in battery.report.checks} == {
        "authorization/discovery": "fail",
        "authorization/invalid-token-401": "fail",
    }


async def _pointing_at_cloud_metadata(stream: trio.SocketStream) -> None:
    """A 401 whose resource_metadata names the cloud metadata service (request forgery)."""
    conn = h11.Connection(h11.SERVER)
    while not isinstance(event := conn.next_event(), h11.EndOfMessage | h11.ConnectionClosed):
        if event is h11.NEED_DATA:
            conn.receive_data(await stream.receive_some(65536))
    challenge = 'Bearer resource_metadata="http://169.254.169.254/latest/meta-data/iam/", scope="mcp"'
    head = [("www-authenticate", challenge), ("content-length", "0"), ("connection", "close")]
    await stream.send_all(
        (conn.send(h11.Response(status_code=401, headers=head)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
    )
    await stream.aclose()


async def test_the_battery_does_not_fetch_what_a_server_names_on_a_network_it_may_not_reach() -> None:
    # the cross-checker is pointed at servers nobody vouches for: their resource_metadata is
    # fetched under the OAuth client's fetch rules (issue 31), not from wherever they name
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, _pointing_at_cloud_metadata, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        battery = Battery(HttpTarget(f"http://127.0.0.1:{port}/mcp"), only=["authorization"])
        with trio.fail_after(10), pytest.raises(TargetUnreachable):
            await battery._authorization()
        nursery.cancel_scope.cancel()
    (finding,) = [f for f in battery.report.findings if f.requirement == "basic/authorization#14"]
    assert "169.254.169.254 is a link-local address" in " ".join([finding.message, *map(str, finding.evidence)])


async def test_an_unreachable_url_is_refused_not_a_traceback() -> None:
    with pytest.raises(TargetUnreachable) as caught:
        await check_server(HttpTarget("http://127.0.0.1:1/mcp"), only=["ping"])
    assert "127.0.0.1:1" in str(caught.value)
