"""The Streamable HTTP server as an OAuth resource server (basic/authorization, resource side).

Driven over in-memory streams; tokens come from a scripted verifier, so each
test shows one rule: which token is refused, with which status and challenge.
"""

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest
import trio

from mcp_ref.basic.authorization.resource_server import AccessToken, InvalidToken, ProtectedResource
from mcp_ref.basic.transports.http_server import HttpConfig, _HttpServer
from mcp_ref.session import RequestContext, Server

from .test_streamable_http import ACCEPT_BOTH, INIT, send_request

RESOURCE = "http://127.0.0.1/mcp"
METADATA_URL = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"
AS = "http://127.0.0.1:9000"
NOW = 1_800_000_000.0


class ScriptedVerifier:
    """Knows a few tokens; can be told to fail or to hang."""

    def __init__(self) -> None:
        self.tokens: dict[str, AccessToken] = {}
        self.failure: Exception | None = None
        self.hang = False
        self.seen: list[str] = []

    def issue(self, token: str, **fields: Any) -> None:
        fields.setdefault("audience", [RESOURCE])
        fields.setdefault("scopes", ["mcp"])
        fields.setdefault("subject", "alice")
        fields.setdefault("client_id", "client-1")
        fields.setdefault("expires_at", NOW + 3600)
        self.tokens[token] = AccessToken(**fields)

    async def verify(self, token: str) -> AccessToken:
        self.seen.append(token)
        if self.hang:
            await trio.sleep_forever()
        if self.failure is not None:
            raise self.failure
        if token not in self.tokens:
            raise InvalidToken("unknown token")
        return self.tokens[token]


def demo_server() -> Server:
    server = Server("protected", "1.0")

    @server.tool()
    async def whoami(ctx: RequestContext, arguments: dict[str, Any]) -> dict[str, Any]:
        access = ctx.auth
        assert access is not None
        return {"subject": access.subject, "scopes": sorted(access.scopes)}

    @server.tool()
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    @server.tool()
    async def reset(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "reset"

    return server


class AuthHttp:
    """An HTTP server with auth whose connections are in-memory stream pairs."""

    def __init__(self, nursery: trio.Nursery, auth: ProtectedResource, server: Server | None = None) -> None:
        self.nursery = nursery
        self.http = _HttpServer(server or demo_server(), HttpConfig(), nursery, "127.0.0.1", auth)

    @asynccontextmanager
    async def exchange(
        self, method: str, target: str, headers: dict[str, str] | None = None, body: Any = None
    ) -> AsyncIterator[Any]:
        client, server_side = trio.testing.memory_stream_pair()
        self.nursery.start_soon(self.http.handle_connection, server_side)
        async with client:
            yield await send_request(client, "127.0.0.1", target, method, headers, body)

    async def call(
        self, method: str, headers: dict[str, str] | None = None, body: Any = None, *, target: str = "/mcp"
    ) -> tuple[int, dict[str, str], Any]:
        """One exchange: status, headers and the body (JSON, or the SSE messages)."""
        async with self.exchange(method, target, headers, body) as ex:
            if ex.headers.get("content-type") == "text/event-stream":
                return ex.status, ex.headers, [json.loads(e.data) for e in await ex.rest() if e.data]
            raw = await ex.body()
            return ex.status, ex.headers, json.loads(raw) if raw else None

    async def start_session(self, token: str, init: dict[str, Any] = INIT) -> dict[str, str]:
        status, headers, _ = await self.call("POST", {**ACCEPT_BOTH, **bearer(token)}, init)
        assert status == 200
        session = {**ACCEPT_BOTH, **bearer(token), "mcp-session-id": headers["mcp-session-id"]}
        status, _, _ = await self.call("POST", session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert status == 202
        return session


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def challenge_params(header: str) -> dict[str, str]:
    """The parameters of a Bearer challenge as this server writes them."""
    scheme, _, rest = header.partition(" ")
    assert scheme == "Bearer"
    params = {}
    for part in rest.split(", "):
        key, _, value = part.partition("=")
        params[key] = value.strip('"')
    return params


def call_tool(name: str, request_id: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


@pytest.fixture
def verifier() -> ScriptedVerifier:
    v = ScriptedVerifier()
    v.issue("good")
    return v


def policy(verifier: ScriptedVerifier, **options: Any) -> ProtectedResource:
    options.setdefault("required_scopes", ["mcp"])
    return ProtectedResource(
        verifier=verifier, authorization_servers=[AS], resource=RESOURCE, clock=lambda: NOW, **options
    )


@asynccontextmanager
async def protected(
    verifier: ScriptedVerifier, server: Server | None = None, **options: Any
) -> AsyncIterator[AuthHttp]:
    async with trio.open_nursery() as nursery:
        yield AuthHttp(nursery, policy(verifier, **options), server)
        nursery.cancel_scope.cancel()


@pytest.mark.req(
    "basic/authorization#8",
    "basic/authorization#12",
    "basic/authorization#13",
    "basic/authorization#20",
    "basic/authorization#56",
)
async def test_the_metadata_document_is_published_at_the_path_aware_and_the_root_url(
    verifier: ScriptedVerifier,
) -> None:
    async with protected(verifier, tool_scopes={"reset": ["admin"]}, resource_name="demo") as http:
        for target in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            status, _, doc = await http.call("GET", target=target)
            assert status == 200
            assert doc == {
                "resource": RESOURCE,
                "authorization_servers": [AS],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["mcp", "admin"],
                "resource_name": "demo",
            }
        status, headers, _ = await http.call("POST", target="/.well-known/oauth-protected-resource/mcp", body={})
        assert status == 405 and headers["allow"] == "GET"
        assert verifier.seen == []  # the metadata needs no token


@pytest.mark.req("basic/authorization#14", "basic/authorization#16", "basic/transports#13")
async def test_a_request_without_a_token_gets_401_naming_the_metadata_and_the_scopes(
    verifier: ScriptedVerifier,
) -> None:
    async with protected(verifier) as http:
        status, headers, body = await http.call("POST", ACCEPT_BOTH, INIT)
        assert status == 401
        params = challenge_params(headers["www-authenticate"])
        assert params == {"resource_metadata": METADATA_URL, "scope": "mcp"}  # no error code: no credentials
        assert body["error"] == "unauthorized"
        # the scopes a tool needs are in the challenge of a request for it
        status, headers, _ = await http.call("POST", ACCEPT_BOTH, call_tool("reset"))
        assert status == 401


@pytest.mark.req("basic/authorization#16", "basic/authorization#66")
@pytest.mark.req("2026-07-28:basic/authorization/index#55")
async def test_the_401_challenge_names_the_scopes_this_request_needs(verifier: ScriptedVerifier) -> None:
    async with protected(verifier, tool_scopes={"reset": ["admin"]}) as http:
        status, headers, _ = await http.call("POST", ACCEPT_BOTH, call_tool("reset"))
        assert status == 401
        assert challenge_params(headers["www-authenticate"])["scope"] == "admin mcp"


@pytest.mark.req(
    "basic/authorization#53", "basic/authorization#55", "basic/authorization#57", "basic/authorization#103"
)
@pytest.mark.req("2026-07-28:basic/authorization/index#39")
async def test_every_request_of_a_session_needs_the_token(verifier: ScriptedVerifier) -> None:
    async with protected(verifier) as http:
        session = await http.start_session("good")
        status, _, messages = await http.call("POST", session, call_tool("echo"))
        assert status == 200 and messages[0]["result"]["content"][0]["text"] == ""
        no_token = {k: v for k, v in session.items() if k != "authorization"}
        for method, body in (("POST", call_tool("echo", 3)), ("GET", None), ("DELETE", None)):
            headers = {**no_token, "accept": "text/event-stream"} if method == "GET" else no_token
            status, response, _ = await http.call(method, headers, body)
            assert status == 401, method
            assert "resource_metadata" in response["www-authenticate"]
        status, _, _ = await http.call("DELETE", session)
        assert status == 200


@pytest.mark.req("basic/authorization#56", "basic/authorization#54")
async def test_a_token_in_the_query_string_authorizes_nothing(verifier: ScriptedVerifier) -> None:
    async with protected(verifier) as http:
        status, headers, _ = await http.call("POST", ACCEPT_BOTH, INIT, target="/mcp?access_token=good")
        assert status == 401
        assert "error=" not in headers["www-authenticate"]  # it was not even looked at
        assert verifier.seen == []


@pytest.mark.req(
    "basic/authorization#58",
    "basic/authorization#62",
    "basic/authorization#63",
    "basic/authorization#75",
    "basic/authorization#102",
    "basic/authorization#104",
)
async def test_a_token_for_another_resource_is_refused(verifier: ScriptedVerifier) -> None:
    verifier.issue("elsewhere", audience=["http://127.0.0.1/other"])
    verifier.issue("other-host", audience=["https://api.example.com/mcp"])
    verifier.issue("no-audience", audience=[])
    async with protected(verifier) as http:
        for token in ("elsewhere", "other-host", "no-audience"):
            status, headers, body = await http.call("POST", {**ACCEPT_BOTH, **bearer(token)}, INIT)
            assert status == 401, token
            params = challenge_params(headers["www-authenticate"])
            assert params["error"] == "invalid_token"
            assert params["resource_metadata"] == METADATA_URL
            assert body["error"] == "invalid_token"
        assert not http.http.sessions  # nothing was started for them


@pytest.mark.req("basic/authorization#60", "basic/authorization#59")
async def test_an_expired_or_unknown_token_gets_401_invalid_token(verifier: ScriptedVerifier) -> None:
    verifier.issue("expired", expires_at=NOW - 1)
    verifier.issue("fresh", expires_at=NOW + 1)
    async with protected(verifier) as http:
        for token, expected in (("expired", 401), ("unknown", 401), ("fresh", 200)):
            status, headers, _ = await http.call("POST", {**ACCEPT_BOTH, **bearer(token)}, INIT)
            assert status == expected, token
            if expected == 401:
                assert challenge_params(headers["www-authenticate"])["error"] == "invalid_token"


@pytest.mark.req(
    "basic/authorization#17",
    "basic/authorization#64",
    "basic/authorization#65",
    "basic/authorization#66",
    "basic/authorization#68",
)
@pytest.mark.req("2026-07-28:basic/authorization/index#55", "2026-07-28:basic/authorization/index#56")
async def test_a_tool_needing_more_scope_gets_403_insufficient_scope(verifier: ScriptedVerifier) -> None:
    verifier.issue("reader", scopes=["mcp", "files:read", "unrelated"])
    async with protected(verifier, tool_scopes={"reset": ["admin"]}, scopes_supported=["mcp", "files:read"]) as http:
        session = await http.start_session("reader")
        status, headers, body = await http.call("POST", session, call_tool("reset"))
        assert status == 403
        params = challenge_params(headers["www-authenticate"])
        assert params["error"] == "insufficient_scope"
        # the scope needed, plus those granted that we know of (so a step-up loses none of them)
        assert params["scope"] == "admin files:read mcp"
        assert params["resource_metadata"] == METADATA_URL
        assert "admin" in params["error_description"]
        assert body["error"] == "insufficient_scope"
        # other tools still work with this token, and the session survived the refusal
        status, _, _ = await http.call("POST", session, call_tool("echo", 5))
        assert status == 200


@pytest.mark.req("basic/authorization#64", "basic/authorization#65", "basic/authorization#67")
async def test_a_method_needing_more_scope_gets_403(verifier: ScriptedVerifier) -> None:
    async with protected(verifier, method_scopes={"tools/list": ["tools:list"]}) as http:
        session = await http.start_session("good")
        status, headers, _ = await http.call("POST", session, {"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
        assert status == 403
        assert challenge_params(headers["www-authenticate"])["scope"] == "mcp tools:list"


@pytest.mark.req("basic/authorization#65")
async def test_a_token_without_the_base_scope_cannot_even_initialize(verifier: ScriptedVerifier) -> None:
    verifier.issue("bare", scopes=[])
    async with protected(verifier) as http:
        status, headers, _ = await http.call("POST", {**ACCEPT_BOTH, **bearer("bare")}, INIT)
        assert status == 403
        assert challenge_params(headers["www-authenticate"])["scope"] == "mcp"


@pytest.mark.req("basic/authorization#59", "basic/authorization#60")
async def test_a_verifier_that_fails_gives_401_not_500(
    verifier: ScriptedVerifier, caplog: pytest.LogCaptureFixture
) -> None:
    verifier.failure = OSError("introspection endpoint unreachable")
    async with protected(verifier) as http:
        with caplog.at_level(logging.WARNING, logger="mcp_ref"):
            status, headers, body = await http.call("POST", {**ACCEPT_BOTH, **bearer("good")}, INIT)
        assert status == 401
        assert challenge_params(headers["www-authenticate"])["error"] == "invalid_token"
        assert "unreachable" not in json.dumps(body)  # nothing of the failure leaks to the client ...
        # ... and it is not dropped either: the operator sees it, in one line (an authorization
        # server that cannot be asked is no bug here: no traceback on every request)
        [record] = [r for r in caplog.records if "verification failed" in r.getMessage()]
        assert record.levelno == logging.WARNING and not record.exc_info
        assert "unreachable" in record.getMessage()
        caplog.clear()
        verifier.failure = KeyError("claims")  # a verifier that breaks: its traceback is logged
        with caplog.at_level(logging.WARNING, logger="mcp_ref"):
            status, _, _ = await http.call("POST", {**ACCEPT_BOTH, **bearer("good")}, INIT)
        assert status == 401
        [record] = [r for r in caplog.records if "verification failed" in r.getMessage()]
        assert record.exc_info is not None and record.exc_info[0] is KeyError


@pytest.mark.req("basic/authorization#59")
async def test_a_verifier_that_hangs_gives_401_after_its_timeout(
    verifier: ScriptedVerifier, autojump_clock: Any
) -> None:
    verifier.hang = True
    async with protected(verifier, verify_timeout=3) as http:
        start = trio.current_time()
        status, _, _ = await http.call("POST", {**ACCEPT_BOTH, **bearer("good")}, INIT)
        assert status == 401
        assert trio.current_time() - start == pytest.approx(3)


@pytest.mark.req("basic/authorization#64")
async def test_a_malformed_authorization_header_is_400_invalid_request(verifier: ScriptedVerifier) -> None:
    async with protected(verifier) as http:
        for value in ("Bearer", "Bearer two tokens", "Bearer bad,token"):
            status, headers, _ = await http.call("POST", {**ACCEPT_BOTH, "authorization": value}, INIT)
            assert status == 400, value
            assert challenge_params(headers["www-authenticate"])["error"] == "invalid_request"
        # another scheme is no bearer credential at all: 401 without an error
        status, headers, _ = await http.call("POST", {**ACCEPT_BOTH, "authorization": "Basic dXNlcjpwYXNz"}, INIT)
        assert status == 401 and "error=" not in headers["www-authenticate"]
        assert verifier.seen == []


@pytest.mark.req("client/elicitation#25")
async def test_a_session_only_serves_the_user_who_opened_it(verifier: ScriptedVerifier) -> None:
    verifier.issue("bob", subject="bob")
    verifier.issue("alice-refreshed", subject="alice")
    async with protected(verifier) as http:
        session = await http.start_session("good")
        # the session id is no credential: bob's valid token does not reach alice's session
        status, _, _ = await http.call("POST", {**session, **bearer("bob")}, call_tool("echo"))
        assert status == 404
        # a refreshed token of the same user does
        status, _, _ = await http.call("POST", {**session, **bearer("alice-refreshed")}, call_tool("echo", 3))
        assert status == 200


@pytest.mark.req("client/elicitation#27", "client/elicitation#53")
async def test_each_request_is_handled_with_the_token_it_came_with(verifier: ScriptedVerifier) -> None:
    verifier.issue("stepped-up", scopes=["mcp", "admin"])  # alice again, with more scope
    async with protected(verifier) as http:
        session = await http.start_session("good")
        for token, scopes in (("good", ["mcp"]), ("stepped-up", ["admin", "mcp"]), ("good", ["mcp"])):
            status, _, messages = await http.call("POST", {**session, **bearer(token)}, call_tool("whoami"))
            assert status == 200
            assert messages[0]["result"]["structuredContent"] == {"subject": "alice", "scopes": scopes}


async def test_auth_without_a_resource_takes_the_url_served(verifier: ScriptedVerifier) -> None:
    from mcp_ref.basic.transports.http_server import serve_http

    async with trio.open_nursery() as nursery:
        auth = attrs.evolve(policy(verifier), resource=None)
        info = await nursery.start(lambda task_status: serve_http(demo_server(), auth=auth, task_status=task_status))
        http = info._server
        assert http is not None and http.auth is not None
        assert http.auth.resource == info.url
        assert http.auth.metadata_url() == info.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        nursery.cancel_scope.cancel()


def answer(body: Any) -> Any:
    """The response in a JSON body or at the end of an SSE stream."""
    return body if isinstance(body, dict) else body[-1]


def request(method: str, params: Any = None, request_id: int = 9) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params is not None else {})}


@pytest.mark.req("basic/utilities/tasks#74", "basic/utilities/tasks#78", "basic/utilities/tasks#79")
async def test_tasks_belong_to_the_authenticated_user_not_the_session(verifier: ScriptedVerifier) -> None:
    from ..utilities.test_tasks import task_server

    verifier.issue("alice-again", subject="alice")
    verifier.issue("bob", subject="bob")
    async with trio.open_nursery() as tasks_nursery:
        server, state = task_server(tasks_nursery)
        async with protected(verifier, server) as http:
            first = await http.start_session("good")
            call = {"name": "only_task", "arguments": {}, "task": {"ttl": 60000}}
            status, _, messages = await http.call("POST", first, request("tools/call", call))
            assert status == 200
            task_id = answer(messages)["result"]["task"]["taskId"]
            # alice's first session goes away; her task does not go with it
            status, _, _ = await http.call("DELETE", first)
            assert status == 200
            second = await http.start_session("alice-again")
            status, _, messages = await http.call("POST", second, request("tasks/get", {"taskId": task_id}))
            assert answer(messages)["result"]["status"] == "working"
            status, _, messages = await http.call("POST", second, request("tasks/list"))
            assert [t["taskId"] for t in answer(messages)["result"]["tasks"]] == [task_id]
            # bob, with a valid token of his own, neither sees nor reaches it
            bobs = await http.start_session("bob")
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                status, _, messages = await http.call("POST", bobs, request(method, {"taskId": task_id}))
                assert answer(messages)["error"]["code"] == -32602, method
            status, _, messages = await http.call("POST", bobs, request("tasks/list"))
            assert answer(messages)["result"]["tasks"] == []
            state["release"].set()
        tasks_nursery.cancel_scope.cancel()


@pytest.mark.req("basic/authorization#1", "basic/authorization#3")
async def test_without_auth_a_handler_sees_no_token() -> None:
    from mcp_ref.testing import memory_session_pair

    server = Server("open")
    seen: list[Any] = []

    @server.tool()
    async def peek(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        seen.append((ctx.auth, ctx.session.principal))
        return "ok"

    async with memory_session_pair(server, era="legacy") as client:
        await client.call_tool("peek", {})
    assert seen == [(None, None)]


@pytest.mark.req("client/elicitation#24", "client/elicitation#27", "client/elicitation#35", "client/elicitation#59")
async def test_a_url_elicitation_is_bound_to_the_user_of_the_token(verifier: ScriptedVerifier) -> None:
    from mcp_ref.client.elicitation import URLElicitationRequired
    from mcp_ref.client.url_elicitations import URLElicitations

    pending = URLElicitations("https://mcp.example/connect")
    server = demo_server()

    @server.tool()
    async def connect(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        # -32042: the client is to open the URL first (the engine then expects its completion)
        raise URLElicitationRequired([pending.start(ctx, "Connect your account")])

    verifier.issue("good", subject="alice", issuer="https://as.example")
    async with protected(verifier, server) as http:
        url_capable = {**INIT, "params": {**INIT["params"], "capabilities": {"elicitation": {"url": {}}}}}
        session = await http.start_session("good", url_capable)
        status, _, messages = await http.call("POST", session, call_tool("connect"))
        (elicitation,) = answer(messages)["error"]["data"]["elicitations"]
        eid = elicitation["elicitationId"]
        with pytest.raises(PermissionError):
            await pending.complete(eid, user=("https://as.example", "bob"))
        await pending.complete(eid, user=("https://as.example", "alice"))
        # the completion went to alice's session (queued for its GET stream)
        (queued,) = http.http.sessions[session["mcp-session-id"]].pending_unrelated
        assert json.loads(queued) == {
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": {"elicitationId": eid},
        }
