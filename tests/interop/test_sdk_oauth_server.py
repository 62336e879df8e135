"""Our OAuth client against the official Python SDK's server and authorization server, over HTTPS.

The SDK (mcp 2.3.0) serves, on one https origin, its authorization server
(RFC 8414 metadata, dynamic registration, authorize, token, refresh) and an
MCP endpoint it protects (RFC 9728 metadata, Bearer challenges). Our
``OAuthClient`` discovers all of it from the first 401, registers, runs the
code flow with PKCE and ``resource``, calls tools with the token, and
refreshes. The certificate is made by the test (trustme); the child process
reads it from a temporary directory.
"""

import os
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import trustme

from mcp_ref.basic.transports.oauth_client import OAuthClient
from mcp_ref.session.http import open_http_client
from mcp_ref.testing.oauth import HeadlessBrowser

from .test_sdk_http import free_port, until_listening

pytest.importorskip("mcp", reason="the official SDK is in the test extra")
pytest.importorskip("uvicorn", reason="the SDK's HTTP server runs on uvicorn (an SDK dependency)")

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(Path(__file__).with_name("sdk_oauth_server.py"))


@asynccontextmanager
async def sdk_oauth_server(tmp_path: Path) -> AsyncIterator[tuple[str, ssl.SSLContext]]:
    """The SDK server in a child process over HTTPS; yields its MCP URL and a context trusting it."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    certfile, keyfile = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.cert_chain_pems[0].write_to_path(str(certfile))
    for blob in cert.cert_chain_pems[1:]:
        blob.write_to_path(str(certfile), append=True)
    cert.private_key_pem.write_to_path(str(keyfile))
    trusting = ssl.create_default_context()
    ca.configure_trust(trusting)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, SERVER, str(port), str(certfile), str(keyfile)], env=env, stderr=subprocess.DEVNULL
    )
    try:
        await until_listening(port, proc, 30)
        yield f"https://127.0.0.1:{port}/mcp", trusting
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.req(
    "basic/authorization#9",
    "basic/authorization#15",
    "basic/authorization#42",
    "basic/authorization#46",
    "basic/authorization#79",
    "basic/authorization#82",
)
async def test_our_client_against_the_sdk_server_and_authorization_server(tmp_path: Path) -> None:
    async with sdk_oauth_server(tmp_path) as (url, trusting):
        browser = HeadlessBrowser(ssl_context=trusting)
        auth = OAuthClient(
            client_name="mcp_ref interop",
            redirect_uri="http://127.0.0.1:3000/callback",
            redirect_handler=browser.open,
            callback_handler=browser.callback,
            ssl_context=trusting,
        )
        async with open_http_client(url, ssl_context=trusting, auth=auth) as client:
            result = await client.call_tool("echo", {"text": "through the SDK's OAuth"})
            assert result.content[0].text == "through the SDK's OAuth"  # type: ignore[union-attr]
            who = await client.call_tool("whoami", {})
            assert who.content[0].text.endswith(" mcp")  # type: ignore[union-attr]
            # a refresh (with rotation) against the SDK's token endpoint, then the token works
            assert auth.tokens is not None and auth.tokens.refresh_token is not None
            first = auth.tokens
            assert auth.tokens.expires_at is not None
            auth.clock = lambda: first.expires_at  # type: ignore[assignment,return-value,misc]
            again = await client.call_tool("echo", {"text": "after a refresh"})
            assert again.content[0].text == "after a refresh"  # type: ignore[union-attr]
            assert auth.tokens.access_token != first.access_token
            assert auth.tokens.refresh_token != first.refresh_token
        (opened,) = browser.opened
        query = {k: v[0] for k, v in parse_qs(urlsplit(opened).query).items()}
        assert query["code_challenge_method"] == "S256" and query["resource"] == url
        assert query["scope"] == "mcp"
