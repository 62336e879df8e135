"""The demo as the README gives it: the example authorization server and ``everything --http
--auth`` in two processes, a token got from the first, used at the second (by a user's
authorization code flow, and by a service's client_credentials grant)."""

import base64
import hashlib
import json
import os
import secrets
import signal
import subprocess
import sys
from typing import Any
from urllib.parse import urlencode

import trio

from mcp_ref.basic.transports.oauth_client import ClientCredentials, OAuthClient
from mcp_ref.errors import HTTPTransportError, MCPError
from mcp_ref.session.http import open_http_client

from ..basic.transports.test_streamable_http import raw
from ..conftest import ROOT
from .test_auth_server import authorize_over_http, query_of
from .test_everything import free_port, read_stderr

REDIRECT = "http://127.0.0.1:33418/callback"


async def start(module: str, *args: str, banner: bytes) -> trio.Process:
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", module, *args],
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    with trio.fail_after(30):
        await read_stderr(proc, banner)
    return proc


async def token_from(issuer: str, resource: str) -> str:
    """A token as a client gets one: register, authorize (the demo consent approves), redeem."""
    status, _, body = await raw(issuer + "/register", "POST", {}, {"redirect_uris": [REDIRECT]})
    client = json.loads(body)
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": resource,
        "scope": "mcp",
    }
    location = await authorize_over_http(issuer, urlencode(query))
    form = {
        "grant_type": "authorization_code",
        "code": query_of(location)["code"],
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
    }
    auth = base64.b64encode(f"{client['client_id']}:{client['client_secret']}".encode()).decode()
    form_headers = {"content-type": "application/x-www-form-urlencoded", "authorization": f"Basic {auth}"}
    status, _, body = await raw(issuer + "/token", "POST", form_headers, urlencode(form).encode())
    assert status == 200
    token: str = json.loads(body)["access_token"]
    return token


async def stop(proc: trio.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGINT)
        with trio.move_on_after(10):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_the_demo_protects_everything_with_the_example_authorization_server() -> None:
    as_port, mcp_port = free_port(), free_port()
    issuer, url = f"http://127.0.0.1:{as_port}", f"http://127.0.0.1:{mcp_port}/mcp"
    procs: list[trio.Process] = []
    try:
        procs.append(
            await start(
                "mcp_ref.examples.auth_server",
                *("--port", str(as_port), "--client", "svc:svc-secret"),
                banner=b"Ctrl-C stops",
            )
        )
        procs.append(
            await start(
                "mcp_ref.examples.everything",
                *("--http", "--port", str(mcp_port), "--auth", issuer),
                banner=b"Ctrl-C stops",
            )
        )
        with trio.fail_after(30):
            status, _, body = await raw(f"http://127.0.0.1:{mcp_port}/.well-known/oauth-protected-resource/mcp", "GET")
            assert status == 200 and json.loads(body)["authorization_servers"] == [issuer]
            try:
                async with open_http_client(url) as client:
                    await client.list_all_tools()
                raise AssertionError("served without a token")
            except (MCPError, HTTPTransportError, ExceptionGroup) as refused:
                assert "401" in repr(refused)
            token = await token_from(issuer, url)
            async with open_http_client(url, headers={"authorization": f"Bearer {token}"}) as client:
                result: Any = await client.call_tool("echo", {"text": "with a token"})
                assert result.content[0].text == "with a token"
            # a service with the client_credentials grant: our ClientCredentials client, no browser
            service = OAuthClient(grant=ClientCredentials(client_id="svc", client_secret="svc-secret"))
            async with open_http_client(url, auth=service) as client:
                result = await client.call_tool("echo", {"text": "as a service"})
                assert result.content[0].text == "as a service"
            assert service.tokens is not None and service.tokens.refresh_token is None
    finally:
        for proc in procs:
            await stop(proc)
