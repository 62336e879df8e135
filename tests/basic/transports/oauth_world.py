"""A scriptable world for the OAuth client's tests: an authorization server and a protected MCP server.

The authorization server (:class:`FakeAuthServer`) is a small HTTP server on
127.0.0.1 written for these tests: it checks what a real one checks (PKCE
S256, the exact redirect URI, rotating refresh tokens) and records every
request, and each test can make it misbehave (wrong issuer, no PKCE, huge or
broken documents, slow answers). The MCP server is mcp_ref's own
``serve_http(auth=ProtectedResource(...))``, whose verifier asks the fake
authorization server which tokens it issued.
"""

import base64
import hashlib
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode

import attrs
import h11
import trio

from mcp_ref.basic.authorization.resource_server import AccessToken, InvalidToken, ProtectedResource
from mcp_ref.basic.transports.http_server import HttpServerInfo, serve_http
from mcp_ref.session import RequestContext, Server
from mcp_ref.testing.oauth import HeadlessBrowser

from .test_streamable_http import read_request

REDIRECT_URI = "http://127.0.0.1:3000/callback"


class Clock:
    """Seconds since the epoch, moved by the test (token expiry on both sides)."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@attrs.define
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    form: dict[str, str]


@attrs.define
class Issued:
    resource: str | None
    scopes: frozenset[str]
    expires_at: float
    client_id: str


#: an answer (status, headers, body), or None for "answer as usual"
Answer = tuple[int, dict[str, str], bytes] | None
Handler = Callable[["FakeAuthServer", Recorded], Awaitable[Answer]]


class FakeAuthServer:
    """An authorization server with a switch for each way a real one can go wrong."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.url = ""
        self.requests: list[Recorded] = []
        #: changes to the metadata document (None values remove a member)
        self.metadata_changes: dict[str, Any] = {}
        #: path of the metadata document (default: RFC 8414 at the root)
        self.metadata_path = "/.well-known/oauth-authorization-server"
        #: the issuer's path (an issuer with a path: a tenant)
        self.issuer_path = ""
        #: scopes it grants: the requested ones minus these
        self.withheld_scopes: set[str] = set()
        self.token_ttl = 3600
        self.issue_refresh_tokens = True
        #: extra parameters in the redirect back (iss=..., or a forged state)
        self.redirect_extra: dict[str, str] = {}
        #: a handler that answers instead of the normal one (returning None: answer normally)
        self.override: Handler | None = None
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.access: dict[str, Issued] = {}
        self.refresh: dict[str, dict[str, Any]] = {}
        self.used_refresh_tokens: list[str] = []

    # -- documents -------------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "issuer": self.url + self.issuer_path,
            "authorization_endpoint": self.url + "/authorize",
            "token_endpoint": self.url + "/token",
            "registration_endpoint": self.url + "/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["mcp", "mcp:admin", "offline_access"],
        }
        for key, value in self.metadata_changes.items():
            if value is None:
                doc.pop(key, None)
            else:
                doc[key] = value
        return doc

    # -- the verifier the MCP server uses -------------------------------------------------------------

    async def verify(self, token: str) -> AccessToken:
        issued = self.access.get(token)
        if issued is None:
            raise InvalidToken("unknown token")
        return AccessToken(
            subject="alice",
            client_id=issued.client_id,
            scopes=issued.scopes,
            audience=[issued.resource] if issued.resource else [],
            expires_at=issued.expires_at,
            issuer=self.url,
        )

    # -- HTTP ---------------------------------------------------------------------------------------

    async def handle(self, request: Recorded) -> tuple[int, dict[str, str], bytes]:
        if self.override is not None:
            answer = await self.override(self, request)
            if answer is not None:
                return answer
        route = (request.method, request.path)
        if request.method == "GET" and request.path == self.metadata_path:
            return _json(200, self.metadata())
        if route == ("POST", "/register"):
            return self._register(request)
        if route == ("GET", "/authorize"):
            return self._authorize(request)
        if route == ("POST", "/token"):
            return self._token(request)
        return 404, {"content-type": "text/plain"}, b"not found"

    def _register(self, request: Recorded) -> tuple[int, dict[str, str], bytes]:
        body = json.loads(request.form["_body"])
        method = body.get("token_endpoint_auth_method", "client_secret_basic")
        client = {
            "client_id": "client-" + secrets.token_hex(4),
            "redirect_uris": body["redirect_uris"],
            "token_endpoint_auth_method": method,
        }
        if method != "none":
            client["client_secret"] = secrets.token_hex(8)
        self.clients[client["client_id"]] = client
        return _json(201, {**body, **client})

    def _authorize(self, request: Recorded) -> tuple[int, dict[str, str], bytes]:
        q = request.query
        client = self.clients.get(q.get("client_id", ""))
        if client is None or q.get("redirect_uri") not in client["redirect_uris"]:
            # exact redirect URIs: never redirect to one that was not registered
            return 400, {"content-type": "text/plain"}, b"unknown client or redirect_uri"
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return 400, {"content-type": "text/plain"}, b"PKCE S256 required"
        code = secrets.token_hex(8)
        self.codes[code] = dict(q)
        params = {"code": code, "state": q.get("state", ""), **self.redirect_extra}
        return 302, {"location": q["redirect_uri"] + "?" + urlencode(params)}, b""

    def _client_auth(self, request: Recorded) -> str | None:
        form, auth = request.form, request.headers.get("authorization", "")
        if auth.startswith("Basic "):
            raw = base64.b64decode(auth[6:]).decode()
            client_id, _, secret = raw.partition(":")
            client_id, secret = unquote(client_id), unquote(secret)
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        client = self.clients.get(client_id)
        if client is None or client.get("client_secret", "") != secret:
            return None
        return client_id

    def _token(self, request: Recorded) -> tuple[int, dict[str, str], bytes]:
        form = request.form
        client_id = self._client_auth(request)
        if client_id is None:
            return _json(401, {"error": "invalid_client"})
        grant = form.get("grant_type")
        if grant == "authorization_code":
            code = self.codes.pop(form.get("code", ""), None)
            if code is None or code["client_id"] != client_id:
                return _json(400, {"error": "invalid_grant", "error_description": "unknown code"})
            if form.get("redirect_uri") != code["redirect_uri"]:
                return _json(400, {"error": "invalid_grant", "error_description": "redirect_uri differs"})
            verifier = form.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge != code["code_challenge"]:
                return _json(400, {"error": "invalid_grant", "error_description": "PKCE verifier mismatch"})
            return self._issue(client_id, code.get("scope"), form.get("resource"))
        if grant == "refresh_token":
            self.used_refresh_tokens.append(form.get("refresh_token", ""))
            old = self.refresh.pop(form.get("refresh_token", ""), None)
            if old is None or old["client_id"] != client_id:
                return _json(400, {"error": "invalid_grant", "error_description": "unknown refresh token"})
            return self._issue(client_id, old["scope"], form.get("resource") or old["resource"])
        if grant == "client_credentials":
            return self._issue(client_id, form.get("scope"), form.get("resource"), refresh=False)
        return _json(400, {"error": "unsupported_grant_type"})

    def _issue(
        self, client_id: str, scope: str | None, resource: str | None, *, refresh: bool = True
    ) -> tuple[int, dict[str, str], bytes]:
        granted = frozenset((scope or "").split()) - self.withheld_scopes
        token = "at-" + secrets.token_hex(8)
        self.access[token] = Issued(resource, granted, self.clock() + self.token_ttl, client_id)
        answer: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": self.token_ttl,
            "scope": " ".join(sorted(granted)),
        }
        if refresh and self.issue_refresh_tokens:
            answer["refresh_token"] = rt = "rt-" + secrets.token_hex(8)
            self.refresh[rt] = {"client_id": client_id, "scope": scope, "resource": resource}
        return _json(200, answer)

    async def serve_connection(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request = await read_request(stream, conn)
                if request is None:
                    return
                head, body = request
                target = head.target.decode()
                path, _, query = target.partition("?")
                headers = {k.decode().lower(): v.decode() for k, v in head.headers}
                ctype = headers.get("content-type", "")
                form = dict(parse_qsl(body.decode())) if "urlencoded" in ctype else {"_body": body.decode()}
                record = Recorded(head.method.decode(), path, dict(parse_qsl(query)), headers, form)
                self.requests.append(record)
                status, hdrs, payload = await self.handle(record)
                out = [*hdrs.items(), ("content-length", str(len(payload)))]
                await stream.send_all(conn.send(h11.Response(status_code=status, headers=out)) or b"")
                await stream.send_all(
                    (conn.send(h11.Data(data=payload)) or b"") + (conn.send(h11.EndOfMessage()) or b"")
                )
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except (trio.BrokenResourceError, h11.ProtocolError):
            return
        finally:
            await stream.aclose()


def _json(status: int, doc: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json"}, json.dumps(doc).encode()


def protected_server() -> Server:
    server = Server("protected", "1.0")

    @server.tool()
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text"))

    @server.tool()
    async def reset(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "reset"

    return server


@attrs.define
class World:
    auth_server: FakeAuthServer
    mcp: HttpServerInfo
    clock: Clock
    browser: HeadlessBrowser
    #: the MCP server's policy (its metadata is read from it at every request)
    protected: ProtectedResource | None = None

    @property
    def mcp_origin(self) -> str:
        return f"http://127.0.0.1:{self.mcp.port}"


@asynccontextmanager
async def world(
    *, issuer_path: str = "", metadata_path: str | None = None, **resource_options: Any
) -> AsyncIterator[World]:
    """A fake authorization server (its issuer ``url + issuer_path``, its metadata at
    ``metadata_path``) and a protected MCP server (``tool_scopes``, ``required_scopes`` ...)."""
    clock = Clock()
    auth_server = FakeAuthServer(clock)
    auth_server.issuer_path = issuer_path
    if metadata_path is not None:
        auth_server.metadata_path = metadata_path
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, auth_server.serve_connection, 0, host="127.0.0.1"))
        auth_server.url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}"
        resource_options.setdefault("required_scopes", ["mcp"])
        protected = ProtectedResource(
            verifier=auth_server, authorization_servers=[auth_server.url + issuer_path], clock=clock, **resource_options
        )
        info = await nursery.start(partial(serve_http, protected_server(), auth=protected))
        # (the server's own copy: serve_http fills in ``resource`` once it knows its URL)
        serving = info._server.auth if info._server is not None else None
        yield World(auth_server, info, clock, HeadlessBrowser(), serving)
        nursery.cancel_scope.cancel()
