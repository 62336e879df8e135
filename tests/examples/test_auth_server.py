"""The example authorization server: each rule it keeps, then one whole flow over HTTP."""

import base64
import hashlib
import json
import secrets
import socket
from collections.abc import Mapping
from functools import partial
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import h11
import pytest
import trio

from mcp_ref.basic.transports.http_fetch import http_exchange
from mcp_ref.errors import HTTPTransportError
from mcp_ref.examples.auth_server import (
    AuthorizationServer,
    ConsentRequest,
    OAuthError,
    fetch_metadata_document,
    serve_auth_server,
)
from mcp_ref.examples.auth_server import main as auth_server_main

from ..basic.transports.test_streamable_http import raw

ISSUER = "http://127.0.0.1:9000"
MCP = "http://127.0.0.1:8000/mcp"
REDIRECT = "http://127.0.0.1:33418/callback"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def make_server(**options: Any) -> AuthorizationServer:
    options.setdefault("clock", Clock())
    server = AuthorizationServer(ISSUER, resources=[MCP], scopes_supported=["mcp", "admin"], **options)
    server.add_resource_server("rs", "rs-secret")
    return server


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


RS = basic("rs", "rs-secret")


def query_of(location: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(location).query))


async def authorize(server: AuthorizationServer, client_id: str, challenge: str, **extra: str) -> tuple[int, str]:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-1",
        "resource": MCP,
        "scope": "mcp",
        **extra,
    }
    return await server.authorize_endpoint({k: v for k, v in query.items() if v != "<absent>"})


async def code_for(server: AuthorizationServer, client_id: str, challenge: str) -> str:
    status, location = await authorize(server, client_id, challenge)
    assert status == 302, location
    return query_of(location)["code"]


async def tokens(server: AuthorizationServer, client_id: str, **extra: str) -> dict[str, Any]:
    verifier, challenge = pkce()
    code = await code_for(server, client_id, challenge)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
        "client_id": client_id,
        "resource": MCP,
        **extra,
    }
    return await server.token_endpoint(form, None)


async def test_a_code_becomes_tokens_the_resource_server_can_introspect() -> None:
    server = make_server()
    client = server.register([REDIRECT], name="demo client")
    issued = await tokens(server, client.client_id)
    assert issued["token_type"] == "Bearer" and issued["scope"] == "mcp" and issued["expires_in"] == 300
    info = server.introspect_endpoint({"token": issued["access_token"]}, RS)
    assert info["active"] is True
    assert (info["sub"], info["client_id"], info["aud"], info["iss"]) == ("demo-user", client.client_id, MCP, ISSUER)
    # a refresh token is never good at a resource server
    assert server.introspect_endpoint({"token": issued["refresh_token"]}, RS) == {"active": False}
    with pytest.raises(OAuthError) as refused:
        server.introspect_endpoint({"token": issued["access_token"]}, basic("rs", "wrong"))
    assert refused.value.status == 401


@pytest.mark.req("2026-07-28:basic/authorization/index#23", "2026-07-28:basic/authorization/index#24")
async def test_the_authorization_response_echoes_state_and_names_the_issuer() -> None:
    server = make_server()
    client = server.register([REDIRECT])
    status, location = await authorize(server, client.client_id, pkce()[1])
    assert status == 302 and location.startswith(REDIRECT + "?")
    answer = query_of(location)
    assert answer["state"] == "st-1" and answer["iss"] == ISSUER and answer["code"]
    # an error response names the issuer too (RFC 9207 section 2), and the metadata says iss is sent
    status, location = await authorize(server, client.client_id, pkce()[1], code_challenge_method="plain")
    error = query_of(location)
    assert status == 302 and error["error"] == "invalid_request" and error["iss"] == ISSUER
    assert server.metadata()["authorization_response_iss_parameter_supported"] is True


@pytest.mark.req("basic/authorization#90", "basic/authorization#92")
async def test_only_an_exactly_registered_redirect_uri_is_redirected_to() -> None:
    server = make_server()
    client = server.register([REDIRECT])
    for other in (REDIRECT + "/", REDIRECT + "?x=1", REDIRECT.replace("33418", "33419"), "https://evil.example/cb"):
        status, page = await authorize(server, client.client_id, pkce()[1], redirect_uri=other)
        assert status == 400, other  # an error page, never a redirect to it
        assert "redirect_uri" in page
    status, _ = await authorize(server, "nobody", pkce()[1])
    assert status == 400


async def test_pkce_s256_is_required_and_checked() -> None:
    server = make_server()
    client = server.register([REDIRECT])
    for extra in ({"code_challenge": "<absent>"}, {"code_challenge_method": "plain"}):
        status, location = await authorize(server, client.client_id, pkce()[1], **extra)
        assert status == 302 and query_of(location)["error"] == "invalid_request"
    _, challenge = pkce()
    code = await code_for(server, client.client_id, challenge)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client.client_id}
    with pytest.raises(OAuthError) as refused:
        await server.token_endpoint({**form, "code_verifier": pkce()[0]}, None)
    assert refused.value.error == "invalid_grant"


async def test_a_code_is_good_once_and_its_replay_revokes_what_it_gave() -> None:
    server = make_server()
    client = server.register([REDIRECT])
    verifier, challenge = pkce()
    code = await code_for(server, client.client_id, challenge)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
        "client_id": client.client_id,
    }
    first = await server.token_endpoint(form, None)
    with pytest.raises(OAuthError):
        await server.token_endpoint(form, None)
    assert server.introspect_endpoint({"token": first["access_token"]}, RS) == {"active": False}


@pytest.mark.req("basic/authorization#78")
async def test_refresh_tokens_rotate_and_a_replayed_one_revokes_its_family() -> None:
    server = make_server()
    client = server.register([REDIRECT])
    first = await tokens(server, client.client_id)
    refresh = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client.client_id}
    second = await server.token_endpoint(refresh, None)
    assert second["refresh_token"] != first["refresh_token"]
    assert server.introspect_endpoint({"token": second["access_token"]}, RS)["active"] is True
    # the spent refresh token comes back (stolen, or a broken client): the whole family is revoked
    with pytest.raises(OAuthError) as refused:
        await server.token_endpoint(refresh, None)
    assert refused.value.error == "invalid_grant"
    assert server.introspect_endpoint({"token": second["access_token"]}, RS) == {"active": False}
    with pytest.raises(OAuthError):
        await server.token_endpoint({**refresh, "refresh_token": second["refresh_token"]}, None)


async def test_a_refresh_can_narrow_but_not_widen_the_scope() -> None:
    server = make_server()
    client = server.register([REDIRECT])
    first = await tokens(server, client.client_id)
    refresh = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client.client_id}
    with pytest.raises(OAuthError) as refused:
        await server.token_endpoint({**refresh, "scope": "mcp admin"}, None)
    assert refused.value.error == "invalid_scope"


@pytest.mark.req("basic/authorization#77")
async def test_access_tokens_are_short_lived() -> None:
    clock = Clock()
    server = make_server(clock=clock, access_token_ttl=60)
    client = server.register([REDIRECT])
    issued = await tokens(server, client.client_id)
    assert issued["expires_in"] == 60
    clock.now += 59
    assert server.introspect_endpoint({"token": issued["access_token"]}, RS)["active"] is True
    clock.now += 2
    assert server.introspect_endpoint({"token": issued["access_token"]}, RS) == {"active": False}


async def test_tokens_are_only_for_the_resources_served() -> None:
    server = make_server()
    client = server.register([REDIRECT])
    status, location = await authorize(server, client.client_id, pkce()[1], resource="http://127.0.0.1:8001/mcp")
    assert status == 302 and query_of(location)["error"] == "invalid_target"
    # a client naming no resource gets the only one there is
    status, location = await authorize(server, client.client_id, pkce()[1], resource="<absent>")
    assert "code" in query_of(location)


@pytest.mark.req("basic/authorization#97", "basic/authorization#99")
async def test_the_consent_function_decides_who_approves() -> None:
    asked: list[ConsentRequest] = []

    async def consent(request: ConsentRequest) -> str | None:
        asked.append(request)
        return "alice" if request.client_name == "trusted" else None

    server = make_server(consent=consent)
    trusted = server.register([REDIRECT], name="trusted")
    issued = await tokens(server, trusted.client_id)
    assert server.introspect_endpoint({"token": issued["access_token"]}, RS)["sub"] == "alice"
    other = server.register([REDIRECT], name="other")
    status, location = await authorize(server, other.client_id, pkce()[1])
    assert query_of(location)["error"] == "access_denied"
    # what the user is shown: the client, where the code goes, and a warning for loopback-only clients
    assert asked[0].redirect_host == "127.0.0.1" and asked[0].loopback_only and asked[0].resource == MCP


@pytest.mark.req("basic/authorization#81")
def test_registration_takes_https_or_loopback_redirect_uris_only() -> None:
    server = make_server()
    for uris in (["http://example.com/cb"], ["https://example.com/cb#frag"], []):
        with pytest.raises(OAuthError) as refused:
            server.register_endpoint(json.dumps({"redirect_uris": uris}).encode())
        assert refused.value.error == "invalid_redirect_uri"
    status, answer = server.register_endpoint(
        json.dumps({"redirect_uris": ["https://app.example/cb", "http://localhost:1/cb"], "client_name": "x"}).encode()
    )
    assert status == 201 and answer["client_secret"] and answer["token_endpoint_auth_method"] == "client_secret_basic"


async def test_client_authentication_follows_the_registered_method() -> None:
    server = make_server()
    _, answer = server.register_endpoint(
        json.dumps({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"}).encode()
    )
    cid, secret = answer["client_id"], answer["client_secret"]
    first = await tokens(server, cid, client_secret=secret)
    assert first["access_token"]
    for form_secret, header in ((None, None), ("wrong", None), (None, basic(cid, secret))):
        extra = {"client_secret": form_secret} if form_secret else {}
        verifier, challenge = pkce()
        code = await code_for(server, cid, challenge)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": verifier}
        with pytest.raises(OAuthError) as refused:
            await server.token_endpoint({**form, "client_id": cid, **extra}, header)
        assert refused.value.error == "invalid_client"


def credentials_form(**extra: str) -> dict[str, str]:
    return {k: v for k, v in {"grant_type": "client_credentials", "resource": MCP, **extra}.items() if v != "<absent>"}


async def test_client_credentials_gives_a_service_its_own_token_without_a_refresh_token() -> None:
    server = make_server()
    server.register_service("svc", "svc-secret")
    assert "client_credentials" in server.metadata()["grant_types_supported"]
    by_header = await server.token_endpoint(credentials_form(scope="mcp"), basic("svc", "svc-secret"))
    by_body = await server.token_endpoint(credentials_form(client_id="svc", client_secret="svc-secret"), None)
    # RFC 6749 section 4.4.3: no refresh token; no scope asked: every scope the server knows
    assert "refresh_token" not in by_header and by_header["scope"] == "mcp"
    assert by_body["scope"] == "mcp admin" and by_body["token_type"] == "Bearer"
    info = server.introspect_endpoint({"token": by_header["access_token"]}, RS)
    assert info["active"] is True
    assert (info["sub"], info["client_id"], info["aud"]) == ("svc", "svc", MCP)  # the client acts for itself


@pytest.mark.parametrize(
    ("form", "header", "error"),
    [
        (credentials_form(), basic("svc", "wrong"), "invalid_client"),
        (credentials_form(client_id="svc", client_secret="wrong"), None, "invalid_client"),
        (credentials_form(client_id="svc"), None, "invalid_client"),  # a confidential client shows its secret
        (credentials_form(client_secret="svc-secret"), basic("svc", "svc-secret"), "invalid_request"),  # two methods
        (credentials_form(scope="mcp root"), basic("svc", "svc-secret"), "invalid_scope"),
        (credentials_form(resource="http://127.0.0.1:8001/mcp"), basic("svc", "svc-secret"), "invalid_target"),
        (credentials_form(resource="<absent>"), basic("svc", "svc-secret"), None),  # the only resource served
        ({**credentials_form(), "grant_type": "refresh_token"}, basic("svc", "svc-secret"), "unauthorized_client"),
    ],
)
async def test_client_credentials_are_checked_as_the_other_grants_are(
    form: dict[str, str], header: str | None, error: str | None
) -> None:
    server = make_server()
    server.register_service("svc", "svc-secret")
    if error is None:
        assert (await server.token_endpoint(form, header))["access_token"]
        return
    with pytest.raises(OAuthError) as refused:
        await server.token_endpoint(form, header)
    assert refused.value.error == error


async def test_only_a_client_registered_for_it_may_use_client_credentials() -> None:
    server = make_server()
    public = server.register([REDIRECT])  # a public client of the authorization code grant
    _, confidential = server.register_endpoint(json.dumps({"redirect_uris": [REDIRECT]}).encode())
    for form, header in (
        (credentials_form(client_id=public.client_id), None),
        (credentials_form(), basic(confidential["client_id"], confidential["client_secret"])),
    ):
        with pytest.raises(OAuthError) as refused:
            await server.token_endpoint(form, header)
        assert refused.value.error == "unauthorized_client"
    service = server.register_service("svc", "svc-secret")
    assert service.redirect_uris == ()  # and so never the authorization code grant's
    status, _ = await authorize(server, "svc", pkce()[1])
    assert status == 400


class Documents:
    """Client ID Metadata Documents served by a script (the fetch the server is given)."""

    def __init__(self) -> None:
        self.docs: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.fetched: list[str] = []

    def put(self, url: str, doc: Any, *, cache: str = "max-age=600") -> None:
        self.docs[url] = (200, {"cache-control": cache}, json.dumps(doc).encode())

    async def __call__(self, url: str) -> tuple[int, Mapping[str, str], bytes]:
        self.fetched.append(url)
        return self.docs.get(url, (404, {}, b"not found"))


CIMD = "https://app.example/oauth/client.json"


def cimd(**overrides: Any) -> dict[str, Any]:
    return {"client_id": CIMD, "client_name": "App", "redirect_uris": [REDIRECT], **overrides}


@pytest.mark.req("2026-07-28:basic/authorization/client-registration#14")
async def test_a_client_id_metadata_document_that_never_comes_is_given_up(autojump_clock: trio.abc.Clock) -> None:
    """A document URL whose server never answers holds the authorization request for
    CIMD_TIMEOUT at most: then the client is unknown (an error page, no redirect)."""
    from mcp_ref.examples.auth_server import CIMD_TIMEOUT

    async def never(url: str) -> tuple[int, Mapping[str, str], bytes]:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    server = make_server(fetch=never)
    with trio.fail_after(CIMD_TIMEOUT + 5):
        status, _ = await authorize(server, CIMD, pkce()[1])
    assert status == 400
    assert trio.current_time() >= CIMD_TIMEOUT


@pytest.mark.req(
    "basic/authorization#34",
    "basic/authorization#37",
    "basic/authorization#6",
    "basic/authorization#27",
    "basic/authorization#30",
)
@pytest.mark.req("2026-07-28:basic/authorization/client-registration#2")
async def test_a_client_id_metadata_document_is_fetched_and_its_redirect_uris_are_enforced() -> None:
    documents = Documents()
    documents.put(CIMD, cimd())
    server = make_server(fetch=documents)
    assert server.metadata()["client_id_metadata_document_supported"] is True
    issued = await tokens(server, CIMD)
    assert server.introspect_endpoint({"token": issued["access_token"]}, RS)["client_id"] == CIMD
    status, _ = await authorize(server, CIMD, pkce()[1], redirect_uri="http://127.0.0.1:1/other")
    assert status == 400


@pytest.mark.req("basic/authorization#35", "basic/authorization#38", "basic/authorization#28")
@pytest.mark.parametrize(
    "doc",
    [
        cimd(client_id="https://app.example/oauth/other.json"),
        cimd(client_name=None),
        cimd(redirect_uris=[]),
        cimd(redirect_uris=["http://example.com/cb"]),
        cimd(token_endpoint_auth_method="client_secret_basic"),
        ["not", "an", "object"],
    ],
)
async def test_a_client_id_metadata_document_that_does_not_hold_is_refused(doc: Any) -> None:
    documents = Documents()
    documents.put(CIMD, doc)
    server = make_server(fetch=documents)
    status, _ = await authorize(server, CIMD, pkce()[1])
    assert status == 400


@pytest.mark.req("basic/authorization#36")
async def test_a_client_id_metadata_document_is_cached_as_its_headers_allow() -> None:
    clock = Clock()
    documents = Documents()
    documents.put(CIMD, cimd(), cache="max-age=600")
    server = make_server(fetch=documents, clock=clock)
    await code_for(server, CIMD, pkce()[1])
    await code_for(server, CIMD, pkce()[1])
    assert len(documents.fetched) == 1
    clock.now += 601
    await code_for(server, CIMD, pkce()[1])
    assert len(documents.fetched) == 2


@pytest.mark.req("basic/authorization#96", "basic/authorization#30", "basic/authorization#39", "basic/authorization#95")
@pytest.mark.req("2026-07-28:basic/authorization/client-registration#14")
async def test_client_ids_that_are_no_public_https_url_are_not_fetched() -> None:
    documents = Documents()
    server = make_server(fetch=documents)
    for client_id in ("http://app.example/c.json", "https://app.example", "https://10.0.0.1/c.json"):
        status, _ = await authorize(server, client_id, pkce()[1])
        assert status == 400
    assert documents.fetched == []
    # (while a public https URL with a path is fetched: the refusals above are the rule's, not a
    # feature that fetches nothing)
    await authorize(server, CIMD, pkce()[1])
    assert documents.fetched == [CIMD]


@pytest.mark.req("basic/authorization#10")
async def test_the_whole_flow_over_http() -> None:
    server = AuthorizationServer(resources=[MCP])
    server.add_resource_server("rs", "rs-secret")
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(serve_auth_server, server)
        status, _, body = await raw(issuer + "/.well-known/oauth-authorization-server", "GET")
        meta = json.loads(body)
        assert status == 200 and meta["issuer"] == issuer and meta["code_challenge_methods_supported"] == ["S256"]
        status, _, body = await raw(meta["registration_endpoint"], "POST", {}, {"redirect_uris": [REDIRECT]})
        registered = json.loads(body)
        assert status == 201
        verifier, challenge = pkce()
        query = urlencode(
            {
                "response_type": "code",
                "client_id": registered["client_id"],
                "redirect_uri": REDIRECT,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": MCP,
            }
        )
        location = await authorize_over_http(issuer, query)
        form = urlencode(
            {
                "grant_type": "authorization_code",
                "code": query_of(location)["code"],
                "redirect_uri": REDIRECT,
                "code_verifier": verifier,
            }
        ).encode()
        form_headers = {
            "content-type": "application/x-www-form-urlencoded",
            "authorization": basic(registered["client_id"], registered["client_secret"]),
        }
        status, headers, body = await raw(meta["token_endpoint"], "POST", form_headers, form)
        assert status == 200 and headers["cache-control"] == "no-store"
        access = json.loads(body)["access_token"]
        introspect = {"content-type": "application/x-www-form-urlencoded", "authorization": RS}
        status, _, body = await raw(meta["introspection_endpoint"], "POST", introspect, f"token={access}".encode())
        assert json.loads(body)["active"] is True
        status, _, body = await raw(meta["token_endpoint"], "POST", form_headers, b"grant_type=password")
        assert status == 400 and json.loads(body)["error"] == "unsupported_grant_type"
        nursery.cancel_scope.cancel()


async def authorize_over_http(issuer: str, query: str) -> str:
    """GET the authorization endpoint; the redirect's Location (http_exchange never follows one)."""
    with pytest.raises(HTTPTransportError) as redirected:
        await http_exchange("GET", issuer + "/authorize?" + query)
    assert redirected.value.status == 302 and redirected.value.location is not None
    return redirected.value.location


def test_a_port_in_use_is_one_line_not_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert auth_server_main(["--port", str(port)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"cannot serve on 127.0.0.1 port {port}: Address already in use"


# -- fetching Client ID Metadata Documents (fetch_metadata_document) --------------------------------


async def serve_document(ca: Any, host: str, doc: Any, hits: list[str]) -> Any:
    """An https server on ``host`` answering every request with ``doc`` (recording its target)."""
    from ..basic.transports.test_https import server_context

    context = server_context(ca, "app.cimd.test", "admin.cimd.test")

    async def handle(raw_stream: trio.SocketStream) -> None:
        stream = trio.SSLStream(raw_stream, context, server_side=True)
        try:
            conn = h11.Connection(h11.SERVER)
            while not isinstance(event := conn.next_event(), h11.Request):
                if event is h11.NEED_DATA:
                    conn.receive_data(await stream.receive_some(65536))
            hits.append(event.target.decode())
            body = json.dumps(doc).encode()
            await stream.send_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
            )
        except (trio.BrokenResourceError, h11.ProtocolError):
            pass
        finally:
            await stream.aclose()

    return partial(trio.serve_tcp, handle, 0, host=host)


@pytest.mark.req("basic/authorization#96", "2026-07-28:basic/authorization/client-registration#14")
async def test_a_metadata_document_whose_name_resolves_to_this_machine_is_not_fetched() -> None:
    # the literal check (_metadata_document_url) cannot see where a name leads: the fetch checks
    # the addresses it resolves to, and connects to none of them
    import trustme

    from ..basic.transports.test_fetch_rules import Resolver
    from ..basic.transports.test_https import client_context

    ca = trustme.CA()
    trio.socket.set_custom_hostname_resolver(Resolver({"admin.cimd.test": [["127.0.0.1"]]}))
    hits: list[str] = []
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(await serve_document(ca, "127.0.0.1", {}, hits))
        port = listeners[0].socket.getsockname()[1]
        url = f"https://admin.cimd.test:{port}/reset.json"
        fetch = partial(fetch_metadata_document, ssl_context=client_context(ca))
        with pytest.raises(ValueError, match=r"127\.0\.0\.1, not a public address"):
            await fetch(url)
        server = make_server(fetch=fetch)
        status, _ = await authorize(server, url, pkce()[1])
        assert status == 400
        nursery.cancel_scope.cancel()
    assert hits == []


@pytest.mark.req("basic/authorization#34")
async def test_a_metadata_document_at_an_allowed_address_is_fetched_and_used() -> None:
    import ipaddress

    import trustme

    from ..basic.transports.test_fetch_rules import Resolver
    from ..basic.transports.test_https import client_context

    ca = trustme.CA()
    trio.socket.set_custom_hostname_resolver(Resolver({"app.cimd.test": [["127.0.0.2"]]}))
    hits: list[str] = []
    async with trio.open_nursery() as nursery:
        holder: dict[str, Any] = {}
        listeners = await nursery.start(await serve_document(ca, "127.0.0.2", holder, hits))
        url = f"https://app.cimd.test:{listeners[0].socket.getsockname()[1]}/oauth/client.json"
        holder.update({"client_id": url, "client_name": "App", "redirect_uris": [REDIRECT]})
        only = ipaddress.ip_address("127.0.0.2")
        fetch = partial(fetch_metadata_document, ssl_context=client_context(ca), allowed=lambda a: a == only)
        server = make_server(fetch=fetch)
        await code_for(server, url, pkce()[1])
        nursery.cancel_scope.cancel()
    assert hits == ["/oauth/client.json"]
