"""Interop over HTTPS: the official SDK's OAuth client against our protected server and our
example authorization server (discovery, registration, PKCE, tokens, refresh)."""

import os
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import trio
import trustme

from mcp_ref.basic.authorization.resource_server import ProtectedResource
from mcp_ref.basic.transports.http_server import serve_http
from mcp_ref.basic.transports.token_verifiers import IntrospectionVerifier
from mcp_ref.examples.auth_server import AuthorizationServer, serve_auth_server
from mcp_ref.examples.everything import build_server

from ..basic.transports.test_https import client_context, server_context
from ..conftest import ROOT
from ..examples.test_everything import free_port, read_stderr
from ..examples.test_everything_auth import stop

pytest.importorskip("mcp", reason="the official SDK is in the test extra")

import httpx2
from mcp import ClientSession as SDKClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:33418/callback"


class MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """Plays the user's browser: opens the authorization URL, hands the redirect back."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self.context = context
        self.opened: list[str] = []
        self.result: AuthorizationCodeResult | None = None

    async def open(self, url: str) -> None:
        self.opened.append(url)
        async with httpx2.AsyncClient(verify=self.context) as http:
            answer = await http.get(url)
        assert answer.status_code == 302, answer.text
        location = answer.headers["location"]
        assert location.startswith(REDIRECT + "?")
        params = dict(parse_qsl(urlsplit(location).query))
        self.result = AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


async def sdk_echo(url: str, provider: OAuthClientProvider, ca: trustme.CA, text: str) -> Any:
    """One SDK session at ``url`` authorized by ``provider``: initialize, call echo, its text."""
    async with (
        httpx2.AsyncClient(auth=provider, verify=client_context(ca), timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        SDKClientSession(read, write) as session,
    ):
        await session.initialize()
        return (await session.call_tool("echo", {"text": text})).content[0].text  # type: ignore[union-attr]


@asynccontextmanager
async def protected_everything(ca: trustme.CA, cache_ttl: float = 60) -> AsyncIterator[tuple[str, AuthorizationServer]]:
    """Our authorization server and our everything server, both over HTTPS on loopback."""
    server_tls, client_tls = server_context(ca), client_context(ca)
    authority = AuthorizationServer(scopes_supported=["mcp"])
    authority.add_resource_server("mcp-server", "s3cret")
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(partial(serve_auth_server, authority, ssl_context=server_tls))
        verifier = IntrospectionVerifier(
            issuer + "/introspect", "mcp-server", "s3cret", ssl_context=client_tls, cache_ttl=cache_ttl
        )
        auth = ProtectedResource(verifier=verifier, authorization_servers=[issuer], required_scopes=["mcp"])
        mcp = build_server(nursery)
        info = await nursery.start(partial(serve_http, mcp, ssl_context=server_tls, auth=auth))
        yield info.url, authority
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "basic/index#15",
    "basic/authorization#2",
    "basic/authorization#8",
    "basic/authorization#14",
    "basic/authorization#57",
)
async def test_the_sdk_oauth_client_gets_in_over_https() -> None:
    ca = trustme.CA()
    async with protected_everything(ca) as (url, authority):
        assert url.startswith("https://")
        browser = Browser(client_context(ca))
        storage = MemoryStorage()
        provider = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                client_name="sdk interop", redirect_uris=[REDIRECT], grant_types=["authorization_code", "refresh_token"]
            ),
            storage=storage,
            redirect_handler=browser.open,
            callback_handler=browser.callback,
        )
        assert await sdk_echo(url, provider, ca, "authorized") == "authorized"
        # the SDK discovered us, registered (DCR), and asked for a token for this resource
        assert len(browser.opened) == 1
        query = dict(parse_qsl(urlsplit(browser.opened[0]).query))
        assert query["resource"] == url and query["code_challenge_method"] == "S256" and query["scope"] == "mcp"
        assert storage.client is not None and storage.client.client_id in authority.clients
        assert storage.tokens is not None and storage.tokens.refresh_token


@pytest.mark.req("basic/authorization#60", "basic/authorization#59")
async def test_a_token_revoked_at_the_authorization_server_sends_the_sdk_back_to_it() -> None:
    ca = trustme.CA()
    async with protected_everything(ca, cache_ttl=0) as (url, authority):
        browser = Browser(client_context(ca))
        storage = MemoryStorage()

        def provider() -> OAuthClientProvider:
            return OAuthClientProvider(
                server_url=url,
                client_metadata=OAuthClientMetadata(client_name="sdk", redirect_uris=[REDIRECT]),
                storage=storage,
                redirect_handler=browser.open,
                callback_handler=browser.callback,
            )

        assert await sdk_echo(url, provider(), ca, "first") == "first"
        assert storage.tokens is not None
        first_access = storage.tokens.access_token
        # the access token dies at the authorization server: introspection says inactive, our
        # server answers 401 invalid_token with its challenge, and the SDK authorizes again
        authority.revoked_families.add(next(t.family for k, t in authority.tokens.items() if k == first_access))
        assert await sdk_echo(url, provider(), ca, "second") == "second"
        assert len(browser.opened) == 2
        assert storage.tokens.access_token != first_access


async def _start_example(module: str, *args: str, env: dict[str, str]) -> trio.Process:
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", module, *args],
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )
    with trio.fail_after(30):
        banner = await read_stderr(proc, b"Ctrl-C stops")
    assert b"Ctrl-C stops" in banner, banner.decode(errors="replace")
    return proc


@pytest.mark.req("basic/index#15", "basic/authorization#2", "basic/authorization#14")
async def test_the_sdk_oauth_client_gets_into_the_everything_example_over_https(tmp_path: Path) -> None:
    """As a user runs the demo: ``auth_server`` and ``everything --http --auth`` as two processes,
    both on HTTPS with a private CA, and the SDK's OAuth client against them."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    chain, key, trust = tmp_path / "chain.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    for blob in cert.cert_chain_pems:
        blob.write_to_path(str(chain), append=True)
    cert.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(trust))
    tls = ("--certfile", str(chain), "--keyfile", str(key))
    env: dict[str, str] = {}
    as_port, mcp_port = free_port(), free_port()
    issuer, url = f"https://127.0.0.1:{as_port}", f"https://127.0.0.1:{mcp_port}/mcp"
    procs: list[trio.Process] = []
    try:
        procs.append(await _start_example("mcp_ref.examples.auth_server", "--port", str(as_port), *tls, env=env))
        procs.append(
            await _start_example(
                "mcp_ref.examples.everything",
                # it introspects at the authorization server over https, trusting this CA
                *("--http", "--port", str(mcp_port), "--auth", issuer, "--cafile", str(trust), *tls),
                env=env,
            )
        )
        browser = Browser(client_context(ca))
        storage = MemoryStorage()
        provider = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(client_name="sdk interop", redirect_uris=[REDIRECT]),
            storage=storage,
            redirect_handler=browser.open,
            callback_handler=browser.callback,
        )
        with trio.fail_after(60):
            assert await sdk_echo(url, provider, ca, "through the demo") == "through the demo"
        [opened] = browser.opened
        assert opened.startswith(issuer + "/authorize?")
        query = dict(parse_qsl(urlsplit(opened).query))
        assert query["resource"] == url and query["code_challenge_method"] == "S256" and query["scope"] == "mcp"
        assert storage.tokens is not None and storage.tokens.access_token
    finally:
        for proc in procs:
            await stop(proc)
