"""The OAuth client's fetch rules: a server-named URL never reaches this machine or a private network
unless the MCP server is there itself or the application allows it (request forgery, issue 31).

Real sockets on loopback. A "remote" MCP server is one whose name does not resolve to this
machine (``https://mcp.example.com``); what it serves is put on 127.0.0.2, which the tests'
applications allow explicitly (``FetchPolicy(networks=["127.0.0.2/32"])``), while the target
a hostile server would aim at -- a local admin page -- listens on 127.0.0.1 and counts its hits.
"""

import ipaddress
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import h11
import pytest
import trio
import trustme

from mcp_ref.basic.transports.fetch_rules import (
    FetchPolicy,
    FetchRefused,
    address_kind,
    policy_for_server,
)
from mcp_ref.basic.transports.http_fetch import http_exchange
from mcp_ref.basic.transports.oauth_client import ClientCredentials, OAuthClient
from mcp_ref.errors import AuthorizationError

from .test_https import client_context, server_context
from .test_streamable_http import read_request

REMOTE = "https://mcp.example.com/mcp"
REMOTE_ONLY = FetchPolicy(networks=["127.0.0.2/32"])


@asynccontextmanager
async def listening(
    handler: Callable[[trio.SocketStream], Awaitable[None]], host: str = "127.0.0.1"
) -> AsyncIterator[int]:
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host=host))
        yield listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()


class Target:
    """What a hostile server points the client at: it counts the requests that reach it."""

    def __init__(self) -> None:
        self.hits: list[str] = []

    async def handle(self, stream: trio.SocketStream) -> None:
        request = await read_request(stream, h11.Connection(h11.SERVER))
        if request is not None:
            self.hits.append(request[0].target.decode())
            await stream.send_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
        await stream.aclose()


class Documents:
    """An https server on 127.0.0.2 serving JSON documents by path."""

    def __init__(self, ca: trustme.CA) -> None:
        self.context = server_context(ca, "127.0.0.2")
        self.docs: dict[str, Any] = {}
        #: paths answered with a 302 to the URL given
        self.redirects: dict[str, str] = {}
        self.port = 0

    @property
    def origin(self) -> str:
        return f"https://127.0.0.2:{self.port}"

    async def handle(self, raw: trio.SocketStream) -> None:
        stream = trio.SSLStream(raw, self.context, server_side=True)
        try:
            request = await read_request(stream, h11.Connection(h11.SERVER))
        except trio.BrokenResourceError:
            return
        if request is not None and (location := self.redirects.get(request[0].target.decode())) is not None:
            await stream.send_all(
                b"HTTP/1.1 302 Found\r\nlocation: %s\r\ncontent-length: 0\r\n\r\n" % location.encode()
            )
        elif request is not None:
            doc = self.docs.get(request[0].target.decode())
            body = json.dumps(doc).encode() if doc is not None else b"{}"
            status = b"200 OK" if doc is not None else b"404 Not Found"
            head = b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % (status, len(body))
            await stream.send_all(head + body)
        await stream.aclose()


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


@asynccontextmanager
async def remote_world(ca: trustme.CA) -> AsyncIterator[tuple[Documents, Target, int]]:
    """The remote server's documents (on 127.0.0.2, with TLS) and a local target (127.0.0.1)."""
    docs, target = Documents(ca), Target()
    async with listening(docs.handle, "127.0.0.2") as docs_port, listening(target.handle) as target_port:
        docs.port = docs_port
        docs.docs["/.well-known/oauth-protected-resource/mcp"] = {
            "resource": REMOTE,
            "authorization_servers": [docs.origin],
        }
        docs.docs["/.well-known/oauth-authorization-server"] = {
            "issuer": docs.origin,
            "authorization_endpoint": f"{docs.origin}/authorize",
            "token_endpoint": f"{docs.origin}/token",
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["client_credentials"],
        }
        yield docs, target, target_port


def client(ca: trustme.CA, policy: FetchPolicy = REMOTE_ONLY) -> OAuthClient:
    grant = ClientCredentials(client_id="c", client_secret="s")
    return OAuthClient(grant=grant, ssl_context=client_context(ca), fetch_policy=policy, timeout=5)


def challenge(url: str) -> str:
    return f'Bearer resource_metadata="{url}"'


# -- the report's shape ----------------------------------------------------------------------------------


@pytest.mark.req("basic/authorization#79")
@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_a_remote_servers_challenge_cannot_send_the_client_to_this_machine(ca: trustme.CA, scheme: str) -> None:
    target = Target()
    async with listening(target.handle) as port:
        auth = client(ca, FetchPolicy())
        for host in ("127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "0.0.0.0"):
            reset = f"{scheme}://{host}:{port}/local-admin/reset?confirm=1"
            with pytest.raises(AuthorizationError, match=r"is not https|loopback address") as refused:
                await auth.challenged(REMOTE, 401, challenge(reset), None)
            assert refused.value.step == "resource-metadata"
    assert target.hits == []


async def test_a_remote_servers_metadata_cannot_name_an_authorization_server_on_this_machine(ca: trustme.CA) -> None:
    async with remote_world(ca) as (docs, target, port):
        prm = "/.well-known/oauth-protected-resource/mcp"
        docs.docs[prm] = {**docs.docs[prm], "authorization_servers": [f"https://127.0.0.1:{port}/local-admin"]}
        with pytest.raises(AuthorizationError, match=r"127\.0\.0\.1 is a loopback address") as refused:
            await client(ca).challenged(REMOTE, 401, challenge(docs.origin + prm), None)
        assert refused.value.step == "authorization-server-metadata" and refused.value.error == "fetch_refused"
    assert target.hits == []


@pytest.mark.parametrize("endpoint", ["token_endpoint", "authorization_endpoint", "registration_endpoint"])
async def test_an_authorization_servers_endpoints_cannot_be_on_this_machine(ca: trustme.CA, endpoint: str) -> None:
    async with remote_world(ca) as (docs, target, port):
        meta = docs.docs["/.well-known/oauth-authorization-server"]
        meta[endpoint] = f"https://127.0.0.1:{port}/local-admin/reset"
        with pytest.raises(AuthorizationError, match="loopback address"):
            await client(ca).challenged(
                REMOTE, 401, challenge(docs.origin + "/.well-known/oauth-protected-resource/mcp"), None
            )
    assert target.hits == []


class Resolver(trio.abc.HostnameResolver):
    """Names the tests make up, each with the addresses it resolves to, one answer per lookup."""

    def __init__(self, names: dict[str, list[list[str]]]) -> None:
        self.names = names
        self.lookups: list[str] = []

    async def getaddrinfo(
        self, host: bytes | str | None, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
    ) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        try:
            ipaddress.ip_address(name)
        except ValueError:
            pass
        else:
            return await trio.to_thread.run_sync(socket.getaddrinfo, name, port, family, type, proto, flags)
        if name not in self.names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        self.lookups.append(name)
        answers = self.names[name]
        addresses = answers[min(len(self.lookups) - 1, len(answers) - 1)]
        port_number = int(port) if port is not None else 0
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port_number)) for a in addresses]

    async def getnameinfo(self, sockaddr: Any, flags: int) -> Any:
        raise NotImplementedError


async def test_a_name_resolving_to_this_machine_is_refused_as_resolved(ca: trustme.CA) -> None:
    resolver = Resolver({"admin.rebind.test": [["127.0.0.1"]]})
    trio.socket.set_custom_hostname_resolver(resolver)
    async with remote_world(ca) as (docs, target, port):
        docs.docs["/.well-known/oauth-authorization-server"]["token_endpoint"] = (
            f"https://admin.rebind.test:{port}/reset"
        )
        with pytest.raises(AuthorizationError, match=r"refusing to fetch https://admin\.rebind\.test") as refused:
            await client(ca).challenged(
                REMOTE, 401, challenge(docs.origin + "/.well-known/oauth-protected-resource/mcp"), None
            )
        assert refused.value.step == "token"
    assert target.hits == [] and resolver.lookups == ["admin.rebind.test"]


async def test_every_address_of_a_name_must_be_allowed() -> None:
    trio.socket.set_custom_hostname_resolver(Resolver({"mixed.test": [["127.0.0.2", "127.0.0.1"]]}))
    with pytest.raises(FetchRefused, match=r"127\.0\.0\.1 is a loopback address"):
        await http_exchange("GET", "http://mixed.test:9/doc", policy=REMOTE_ONLY)


async def test_the_connection_goes_to_the_address_checked_not_a_second_answer() -> None:
    # DNS rebinding: the first answer passes the check, a second lookup would point elsewhere
    resolver = Resolver({"flip.test": [["127.0.0.2"], ["127.0.0.1"]]})
    trio.socket.set_custom_hostname_resolver(resolver)
    target = Target()
    async with listening(target.handle, "127.0.0.2") as port:
        answer = await http_exchange("GET", f"http://flip.test:{port}/doc", policy=REMOTE_ONLY)
    assert answer.status == 200 and target.hits == ["/doc"] and resolver.lookups == ["flip.test"]


@pytest.mark.req("2026-07-28:basic/authorization/client-registration#25")
@pytest.mark.parametrize("host", ["127.0.0.1", "as.rebind.test"])
async def test_a_resource_moving_to_an_authorization_server_on_this_machine_is_not_followed(
    ca: trustme.CA, host: str
) -> None:
    # the 2026-07-28 migration path: our token refused, the protected resource metadata is read
    # again and names another authorization server -- here one on this machine (an address, or a
    # name resolving to one), which the fetch rules refuse as they do at first discovery
    resolver = Resolver({"as.rebind.test": [["127.0.0.1"]]})
    trio.socket.set_custom_hostname_resolver(resolver)
    async with remote_world(ca) as (docs, target, port):
        docs.docs["/token"] = {"access_token": "first", "token_type": "Bearer", "expires_in": 3600}
        prm = "/.well-known/oauth-protected-resource/mcp"
        auth = client(ca)
        assert await auth.challenged(REMOTE, 401, challenge(docs.origin + prm), None)
        used = await auth.authorization(REMOTE)
        assert used == "Bearer first"
        docs.docs[prm] = {**docs.docs[prm], "authorization_servers": [f"https://{host}:{port}/local-admin"]}
        with pytest.raises(AuthorizationError, match="loopback address") as refused:
            await auth.challenged(REMOTE, 401, challenge(docs.origin + prm), used)
        assert refused.value.step == "authorization-server-metadata"
    # (each well-known URL of the named server resolved, refused, and none connected to)
    assert target.hits == [] and set(resolver.lookups) == (set() if host == "127.0.0.1" else {host})


@pytest.mark.parametrize("server", [REMOTE, "http://mcp.example.com/mcp"])
@pytest.mark.parametrize(
    "named",
    ["file:///etc/passwd", "gopher://127.0.0.1:{port}/x", "javascript:alert(1)", "https:///no-host", "ftp://{host}/x"],
)
async def test_a_url_of_another_scheme_or_without_a_host_is_refused(ca: trustme.CA, server: str, named: str) -> None:
    # refused as an authorization failure, nothing fetched (a URL without a host, or a plain-http
    # MCP server's challenge naming file://, was a ValueError out of the HTTP layer)
    target = Target()
    async with listening(target.handle) as port:
        url = named.format(port=port, host=f"127.0.0.1:{port}")
        with pytest.raises(AuthorizationError, match=r"not an http or https URL with a host|is not https") as refused:
            await client(ca, FetchPolicy()).challenged(server, 401, challenge(url), None)
        assert refused.value.step == "resource-metadata"
    assert target.hits == []


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://169.254.169.254/latest/meta-data/iam/security-credentials/", "link-local"),
        ("https://[fe80::1]/x", "link-local"),
        ("https://10.1.2.3/admin", "private"),
        ("https://192.168.1.1/cgi-bin/reset", "private"),
        ("https://[fd00::1]/x", "private"),
        ("https://[::ffff:10.0.0.1]/x", "private"),
    ],
)
async def test_a_remote_server_cannot_send_the_client_into_a_private_network_or_the_cloud_metadata(
    ca: trustme.CA, url: str, kind: str
) -> None:
    with pytest.raises(AuthorizationError, match=f"is a {kind} address, and a server named this URL") as refused:
        await client(ca, FetchPolicy()).challenged(REMOTE, 401, challenge(url), None)
    assert refused.value.error == "fetch_refused"


async def test_a_local_server_does_not_open_the_cloud_metadata_service_either() -> None:
    policy = await policy_for_server("http://127.0.0.1:8000/mcp")
    assert not policy.allows("169.254.169.254") and not policy.allows("10.0.0.1")
    assert not policy.plain_http_allowed("http://169.254.169.254/latest")


async def test_a_redirect_to_this_machine_is_not_followed(ca: trustme.CA) -> None:
    async with remote_world(ca) as (docs, target, port):
        prm = "/.well-known/oauth-protected-resource/mcp"
        docs.redirects[prm] = f"https://127.0.0.1:{port}/local-admin/reset?confirm=1"
        with pytest.raises(AuthorizationError, match=r"a redirect to https://127\.0\.0\.1.*redirects are not followed"):
            await client(ca).challenged(REMOTE, 401, challenge(docs.origin + prm), None)
        # the authorization server's metadata, redirected: the same
        del docs.redirects[prm]
        docs.redirects["/.well-known/oauth-authorization-server"] = f"http://127.0.0.1:{port}/local-admin"
        with pytest.raises(AuthorizationError, match="redirects are not followed") as refused:
            await client(ca).challenged(REMOTE, 401, challenge(docs.origin + prm), None)
        assert refused.value.step == "authorization-server-metadata"
    assert target.hits == []


async def test_a_document_over_the_size_limit_is_refused(ca: trustme.CA) -> None:
    async with remote_world(ca) as (docs, _, _port):
        prm = "/.well-known/oauth-protected-resource/mcp"
        docs.docs[prm] = {**docs.docs[prm], "padding": "x" * 4096}
        grant = ClientCredentials(client_id="c", client_secret="s")
        auth = OAuthClient(
            grant=grant, ssl_context=client_context(ca), fetch_policy=REMOTE_ONLY, timeout=5, max_document_size=4096
        )
        with pytest.raises(AuthorizationError, match=r"an answer of \d+ bytes, over 4096") as refused:
            await auth.challenged(REMOTE, 401, challenge(docs.origin + prm), None)
        assert refused.value.step == "resource-metadata"


# -- where the client may go ---------------------------------------------------------------------------


async def test_a_local_mcp_server_may_send_the_client_to_this_machine() -> None:
    policy = await policy_for_server("http://127.0.0.1:8000/mcp")
    assert policy.allows("127.0.0.1") and policy.allows("::1") and not policy.allows("10.1.2.3")
    assert policy.plain_http_allowed("http://localhost:9000/token")
    private = await policy_for_server("https://10.20.0.5/mcp")
    assert private.allows("10.99.0.1") and not private.allows("127.0.0.1") and not private.allows("169.254.169.254")
    remote = await policy_for_server(REMOTE)  # (resolved or not: nothing local comes with it)
    assert not remote.allows("127.0.0.1") and not remote.plain_http_allowed("http://127.0.0.1/token")


async def test_the_application_may_allow_more(ca: trustme.CA) -> None:
    target = Target()
    async with listening(target.handle) as port:
        url = f"http://127.0.0.1:{port}/doc"
        with pytest.raises(FetchRefused):
            await http_exchange("GET", url, policy=FetchPolicy())
        assert (await http_exchange("GET", url, policy=FetchPolicy(kinds={"public", "loopback"}))).status == 200
        assert (await http_exchange("GET", url, policy=FetchPolicy(networks=["127.0.0.0/8"]))).status == 200
    assert target.hits == ["/doc", "/doc"]


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("8.8.8.8", "public"),
        ("2606:4700::1111", "public"),
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "loopback"),
        ("::", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("2002:7f00:1::", "loopback"),  # 6to4 carrying 127.0.0.1
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 carrying 127.0.0.1
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "private"),
        ("fd00::1", "private"),
        ("::ffff:192.168.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("224.0.0.1", "reserved"),
        ("192.0.2.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("2001:db8::1", "reserved"),
    ],
)
def test_address_kinds(address: str, kind: str) -> None:
    assert address_kind(address) == kind


def test_a_policy_names_known_kinds_only() -> None:
    with pytest.raises(ValueError, match="unknown address kinds"):
        FetchPolicy(kinds={"public", "intranet"})
    with pytest.raises(TypeError):
        FetchPolicy(networks="10.0.0.0/8")
