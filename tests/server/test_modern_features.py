"""Server features on the 2026-07-28 path: tools, resources and prompts as a request sees them
(what is offered now, to whom, input rounds, errors), list changes on subscriptions, caching hints."""

import json
import warnings
from typing import Any

import pytest
import trio

from mcp_ref import CachePolicy, RequestContext, Server
from mcp_ref.basic.authorization.resource_server import AccessToken
from mcp_ref.basic.lifecycle import Role
from mcp_ref.events import ExchangeReceived
from mcp_ref.exchange import StatelessEngine
from mcp_ref.schema import ResourceLink
from mcp_ref.schema.lifecycle import ClientCapabilities, Implementation
from mcp_ref.server.tools import SensitiveHeaderWarning
from tests.session.test_modern import modern

ELICIT = ClientCapabilities(elicitation={})


def features(**options: Any) -> Server:
    options.setdefault("state_key", b"f" * 32)
    server = Server("features", "1", **options)

    @server.tool(description="public")
    async def hello(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "hello"

    @server.tool(description="needs admin", scopes=["admin"])
    async def wipe(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "wiped"

    @server.tool(description="asks a name")
    async def ask(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit_form("name?", {"name": {"type": "string"}}, key="name")
        return f"{answer.action}:{(answer.content or {}).get('name')}"

    @server.resource("test://open")
    async def open_res(ctx: RequestContext) -> str:
        return "open"

    @server.resource("test://two")
    async def two(ctx: RequestContext) -> list[str]:
        return ["one", "two"]

    @server.resource("test://admin", scopes=["admin"])
    async def admin_res(ctx: RequestContext) -> str:
        return "secret"

    @server.resource("test://broken")
    async def broken(ctx: RequestContext) -> str:
        raise RuntimeError("disk on fire")

    @server.resource("test://asks")
    async def asks(ctx: RequestContext) -> str:
        answer = await ctx.elicit_form("which?", {"which": {"type": "string"}}, key="which")
        return str((answer.content or {}).get("which"))

    @server.resource_template("test://items/{id}")
    async def items(ctx: RequestContext, uri: str, variables: dict[str, str]) -> list[str]:
        return ["item"] if variables["id"] == "1" else []

    @server.resource_template("test://vault/{id}", scopes=["admin"], completers={"id": _no_ids})
    async def vault(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
        return "vaulted"

    @server.prompt(description="public")
    async def greet(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return "hi"

    @server.prompt(description="admin only", scopes=["admin"])
    async def audit(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return "audit"

    @server.prompt(description="asks first")
    async def tailored(ctx: RequestContext, arguments: dict[str, str]) -> str:
        answer = await ctx.elicit_form("tone?", {"tone": {"type": "string"}}, key="tone")
        return f"in a {(answer.content or {}).get('tone')} tone"

    return server


def names(reply: dict[str, Any], field: str, key: str = "name") -> list[str]:
    return [x[key] for x in reply["result"][field]]


async def ask(
    server: Server,
    method: str,
    params: Any = None,
    *,
    scopes: tuple[str, ...] | None = None,
    subject: str = "u",
    caps: ClientCapabilities = ELICIT,
    **retry: Any,
) -> dict[str, Any]:
    """One 2026-07-28 request handled by the server's runtime, as an HTTP POST with a verified
    token granting ``scopes`` (None: no token) would be."""
    runtime = server.modern_runtime()
    engine = runtime.engine(track_ids=False)
    client = StatelessEngine(Role.CLIENT, info=Implementation(name="t", version="0"), capabilities=caps)
    _, data = client.send_request(method, params, **retry)
    (event,) = engine.receive_message(data)
    assert isinstance(event, ExchangeReceived)
    answers: list[bytes] = []

    class Sink:
        async def notify(self, data: bytes) -> None:
            pass

        async def answer(self, data: bytes, code: int | None) -> None:
            answers.append(data)

    auth = AccessToken(subject=subject, scopes=frozenset(scopes)) if scopes is not None else None
    await runtime.run(event.exchange, Sink(), trio.CancelScope(), auth=auth)
    (answer,) = answers
    reply: dict[str, Any] = json.loads(answer)
    return reply


@pytest.mark.req(
    "2026-07-28:server/tools#5",
    "2026-07-28:server/resources#3",
    "2026-07-28:server/prompts#3",
)
async def test_the_lists_offer_what_is_registered_at_the_time_of_the_request() -> None:
    server = features()
    async with modern(server) as peer:
        before = await _lists(peer)
        assert before == [
            ["hello", "ask"],
            ["test://open", "test://two", "test://broken", "test://asks"],
            ["greet", "tailored"],
        ]

        @server.tool(description="late")
        async def late(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return "late"

        @server.resource("test://late")
        async def late_res(ctx: RequestContext) -> str:
            return "late"

        @server.prompt(description="late")
        async def late_prompt(ctx: RequestContext, arguments: dict[str, str]) -> str:
            return "late"

        after = await _lists(peer)
        assert [a[-1] for a in after] == ["late", "test://late", "late_prompt"]
        server.tools.remove("hello")
        tools, _ = await peer.call("tools/list")
        assert names(tools, "tools") == ["ask", "late"]


LISTS = [("tools/list", "tools"), ("resources/list", "resources"), ("prompts/list", "prompts")]
for_uri = {"resources/list": "uri"}


def _names(reply: dict[str, Any], method: str, field: str) -> list[str]:
    return names(reply, field, for_uri.get(method, "name"))


async def _lists(peer: Any) -> list[list[str]]:
    return [_names((await peer.call(m))[0], m, f) for m, f in LISTS]


@pytest.mark.req(
    "2026-07-28:server/tools#6",
    "2026-07-28:server/resources#4",
    "2026-07-28:server/prompts#4",
)
async def test_the_lists_are_the_same_on_every_channel_and_after_other_requests() -> None:
    server = features()
    async with modern(server) as first:
        seen_first = await _lists(first)
        await first.call("tools/call", {"name": "hello", "arguments": {}})
        await first.call("resources/read", {"uri": "test://open"})
        assert await _lists(first) == seen_first
    async with modern(server, ELICIT) as second:
        assert await _lists(second) == seen_first


@pytest.mark.req(
    "2026-07-28:server/tools#7",
    "2026-07-28:server/resources#5",
    "2026-07-28:server/resources#18",
    "2026-07-28:server/resources#20",
    "2026-07-28:server/prompts#5",
    "2026-07-28:server/utilities/caching#27",
)
async def test_what_is_offered_follows_the_scopes_of_the_requests_token() -> None:
    server = features()
    for scopes, sees in ((None, False), (("read",), False), (("admin", "read"), True)):
        tools = await ask(server, "tools/list", scopes=scopes)
        assert ("wipe" in names(tools, "tools")) is sees
        resources = await ask(server, "resources/list", scopes=scopes)
        assert ("test://admin" in names(resources, "resources", "uri")) is sees
        templates = await ask(server, "resources/templates/list", scopes=scopes)
        assert ("test://vault/{id}" in names(templates, "resourceTemplates", "uriTemplate")) is sees
        prompts = await ask(server, "prompts/list", scopes=scopes)
        assert ("audit" in names(prompts, "prompts")) is sees
        # what a request may not see it cannot use either: answered as if it did not exist
        call = await ask(server, "tools/call", {"name": "wipe", "arguments": {}}, scopes=scopes)
        read = await ask(server, "resources/read", {"uri": "test://admin"}, scopes=scopes)
        vaulted = await ask(server, "resources/read", {"uri": "test://vault/7"}, scopes=scopes)
        got = await ask(server, "prompts/get", {"name": "audit"}, scopes=scopes)
        ref = {"ref": {"type": "ref/resource", "uri": "test://vault/{id}"}, "argument": {"name": "id", "value": ""}}
        completed = await ask(server, "completion/complete", ref, scopes=scopes)
        assert ("result" in completed) is sees  # a template it may not see cannot be completed either
        if sees:
            assert call["result"]["content"][0]["text"] == "wiped"
            assert read["result"]["contents"][0]["text"] == "secret"
            assert vaulted["result"]["contents"][0]["text"] == "vaulted"
            assert got["result"]["messages"][0]["content"]["text"] == "audit"
        else:
            assert call["error"]["code"] == read["error"]["code"] == vaulted["error"]["code"] == -32602
            assert got["error"]["code"] == -32602
            assert "wipe" in call["error"]["message"] and read["error"]["data"] == {"uri": "test://admin"}
        # a public answer is still only what this token may see (cacheScope never grants access)
        assert tools["result"]["cacheScope"] == "private"


def test_scopes_are_checked_when_registered() -> None:
    server = Server("s", "1")
    with pytest.raises(ValueError, match="not an OAuth scope token"):

        @server.tool(scopes=["has space"])
        async def bad(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return ""

    with pytest.raises(TypeError, match="not the string"):

        @server.prompt(scopes="admin")
        async def worse(ctx: RequestContext, arguments: dict[str, str]) -> str:
            return ""


@pytest.mark.req(
    "2026-07-28:server/tools#9",
    "2026-07-28:server/resources#7",
    "2026-07-28:server/prompts#6",
    "2026-07-28:client/elicitation#24",
)
@pytest.mark.parametrize(
    ("method", "params", "key", "answer", "check"),
    [
        ("tools/call", {"name": "ask", "arguments": {}}, "name", "Ada", ("content", 0, "text", "accept:Ada")),
        ("resources/read", {"uri": "test://asks"}, "which", "this", ("contents", 0, "text", "this")),
        ("prompts/get", {"name": "tailored"}, "tone", "dry", ("messages", 0, "content", "in a dry tone")),
    ],
)
async def test_a_tool_a_resource_and_a_prompt_may_each_ask_for_input(
    method: str, params: dict[str, Any], key: str, answer: str, check: tuple[Any, ...]
) -> None:
    async with modern(features(), ELICIT) as peer:
        first, _ = await peer.call(method, params)
        interim = first["result"]
        assert interim["resultType"] == "input_required"
        assert interim["inputRequests"][key]["method"] == "elicitation/create"
        done, _ = await peer.call(
            method,
            params,
            input_responses={key: {"action": "accept", "content": {key: answer}}},
            request_state=interim["requestState"],
        )
        node: Any = done["result"]
        for step in check[:-1]:
            node = node[step]
        node = node["text"] if isinstance(node, dict) else node
        assert node == check[-1]
        if method == "tools/call":
            # the user may decline: the handler gets the answer as it is, and finishes
            declined, _ = await peer.call(method, params, input_responses={key: {"action": "decline"}})
            assert declined["result"]["content"][0]["text"] == "decline:None"


@pytest.mark.req(
    "2026-07-28:server/tools#11",
    "2026-07-28:server/prompts#7",
    "2026-07-28:server/resources#8",
)
async def test_list_changes_reach_the_subscriptions_that_asked_for_them(autojump_clock: trio.abc.Clock) -> None:
    server = features()
    async with modern(server) as peer:
        kinds = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
        rid, data = peer.engine.send_request("subscriptions/listen", {"notifications": kinds})
        await peer.channel.send(data)
        ack = json.loads(await peer.channel.receive())
        assert ack["params"]["notifications"] == kinds
        server.tools.remove("hello")
        server.prompts.remove("greet")
        server.resources.remove("test://open")
        with trio.fail_after(5):  # (autojump: no real wait) a missing notification fails, never hangs
            got = [json.loads(await peer.channel.receive())["method"] for _ in range(3)]
        assert got == [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
        ]
        await peer.channel.send(peer.engine.send_cancel(rid))


@pytest.mark.req("2026-07-28:server/prompts#2")
async def test_prompts_are_declared_in_the_discover_result() -> None:
    async with modern(features()) as peer:
        reply, _ = await peer.call("server/discover")
    assert "prompts" in reply["result"]["capabilities"]
    async with modern(Server("bare", "1")) as peer:
        reply, _ = await peer.call("server/discover")
    assert "prompts" not in reply["result"]["capabilities"]


@pytest.mark.req("2026-07-28:server/tools#13")
async def test_a_tool_parameter_may_be_mirrored_into_a_header() -> None:
    server = features()
    schema = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}

    @server.tool(input_schema=schema)
    async def located(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments["region"])

    assert [(h.name, h.path) for h in server.param_headers("located")] == [("Region", ("region",))]
    async with modern(server) as peer:
        listed, _ = await peer.call("tools/list")
    (tool,) = [t for t in listed["result"]["tools"] if t["name"] == "located"]
    assert tool["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"


@pytest.mark.req("2026-07-28:server/tools#33")
def test_a_header_on_a_parameter_named_like_a_secret_warns() -> None:
    server = Server("s", "1")
    secret = {"type": "object", "properties": {"api_key": {"type": "string", "x-mcp-header": "Key"}}}
    with pytest.warns(SensitiveHeaderWarning, match="'api_key' looks sensitive"):

        @server.tool(input_schema=secret)
        async def leaky(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return ""

    plain = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @server.tool(input_schema=plain)
        async def fine(ctx: RequestContext, arguments: dict[str, Any]) -> str:
            return ""


@pytest.mark.req("2026-07-28:server/resources#6")
async def test_a_read_may_answer_with_several_contents() -> None:
    async with modern(features()) as peer:
        reply, _ = await peer.call("resources/read", {"uri": "test://two"})
    assert [c["text"] for c in reply["result"]["contents"]] == ["one", "two"]


@pytest.mark.req("2026-07-28:server/resources#14")
async def test_a_reader_that_fails_is_an_internal_error() -> None:
    async with modern(features()) as peer:
        reply, _ = await peer.call("resources/read", {"uri": "test://broken"})
    assert reply["error"] == {"code": -32603, "message": "Internal error"}  # nothing of the failure leaks


@pytest.mark.req("2026-07-28:server/resources#13", "2026-07-28:server/resources#16")
async def test_a_template_that_finds_nothing_is_not_found_never_empty_contents() -> None:
    async with modern(features()) as peer:
        found, _ = await peer.call("resources/read", {"uri": "test://items/1"})
        missing, _ = await peer.call("resources/read", {"uri": "test://items/2"})
    assert found["result"]["contents"][0]["text"] == "item"
    assert missing["error"]["code"] == -32602 and missing["error"]["data"] == {"uri": "test://items/2"}


@pytest.mark.req("2026-07-28:server/prompts#10")
async def test_a_prompt_message_may_link_a_resource() -> None:
    server = features()

    @server.prompt(description="links")
    async def linked(ctx: RequestContext, arguments: dict[str, str]) -> Any:
        from mcp_ref.schema import PromptMessage

        return [PromptMessage(role="user", content=ResourceLink(uri="test://open", name="open"))]

    async with modern(server) as peer:
        reply, _ = await peer.call("prompts/get", {"name": "linked"})
    content = reply["result"]["messages"][0]["content"]
    assert content == {"type": "resource_link", "uri": "test://open", "name": "open"}


@pytest.mark.req(
    "2026-07-28:server/utilities/caching#18",
    "2026-07-28:server/utilities/caching#19",
    "2026-07-28:server/utilities/caching#12",
)
async def test_ttl_is_given_with_or_without_list_changed_and_data_may_change_within_it() -> None:
    for list_changed in (False, True):
        server = features(cache=CachePolicy(60_000, "public"))
        server.tools.list_changed = list_changed
        async with modern(server) as peer:
            discovered, _ = await peer.call("server/discover")
            assert discovered["result"]["capabilities"]["tools"].get("listChanged", False) is list_changed
            first, _ = await peer.call("tools/list")
            assert first["result"]["ttlMs"] == 60_000
            server.tools.remove("hello")  # within the 60 s the hint promised
            second, _ = await peer.call("tools/list")
            assert "hello" not in names(second, "tools")


@pytest.mark.req("2026-07-28:server/utilities/caching#20")
async def test_pages_may_carry_their_own_ttl() -> None:
    server = Server("paged", "1", cache=CachePolicy(1000, "private"))

    @server.handler("tools/list")
    async def pages(ctx: RequestContext, params: Any) -> dict[str, Any]:
        if params is None or params.cursor is None:
            return {"tools": [], "nextCursor": "2", "ttlMs": 600_000}
        return {"tools": [], "ttlMs": 5}

    async with modern(server) as peer:
        first, _ = await peer.call("tools/list")
        last, _ = await peer.call("tools/list", {"cursor": "2"})
    assert (first["result"]["ttlMs"], last["result"]["ttlMs"]) == (600_000, 5)
    assert first["result"]["cacheScope"] == last["result"]["cacheScope"] == "private"


@pytest.mark.req("2026-07-28:server/resources#21")
async def test_a_file_reader_refuses_paths_that_climb_out_of_its_directory() -> None:
    from mcp_ref.client.roots import within_roots
    from mcp_ref.errors import ErrorCode, ProtocolError
    from mcp_ref.schema import Root

    served = [Root(uri="file:///srv/docs")]
    server = Server("files", "1")

    @server.resource_template("file:///srv/docs/{+path}")
    async def doc(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
        if not within_roots(uri, served):
            raise ProtocolError(f"Invalid params: {uri} is outside /srv/docs", ErrorCode.INVALID_PARAMS)
        return f"read {variables['path']}"

    async with modern(server) as peer:
        ok, _ = await peer.call("resources/read", {"uri": "file:///srv/docs/a/./b.txt"})
        assert ok["result"]["contents"][0]["text"] == "read a/./b.txt"
        for sneaky in ("file:///srv/docs/../etc/passwd", "file:///srv/docs/a/%2e%2e/%2e%2e/etc/passwd"):
            refused, _ = await peer.call("resources/read", {"uri": sneaky})
            assert refused["error"]["code"] == -32602, sneaky


@pytest.mark.req("2026-07-28:client/elicitation#14", "2026-07-28:client/elicitation#13")
async def test_a_url_elicitation_is_asked_only_with_a_valid_url() -> None:
    from mcp_ref.schema.elicitation import ElicitRequestURLParams

    server = Server("urls", "1")

    @server.tool()
    async def visit(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        url = arguments["url"]
        await ctx.elicit(ElicitRequestURLParams(message="go", url=url, elicitation_id="e1"))
        return "visited"

    async with modern(server, ClientCapabilities(elicitation={"url": {}})) as peer:
        good, _ = await peer.call("tools/call", {"name": "visit", "arguments": {"url": "https://ok.example/x"}})
        asked = good["result"]["inputRequests"]["elicitation-1"]["params"]
        # mode, message and url; 2026-07-28 has no elicitationId (the URL carries what the server needs)
        assert asked == {"mode": "url", "message": "go", "url": "https://ok.example/x"}
        for bad in ("javascript:alert(1)", "https://exa mple.org", "not a url"):
            refused, _ = await peer.call("tools/call", {"name": "visit", "arguments": {"url": bad}})
            assert refused["error"]["code"] == -32603, bad  # the server's own bug: nothing is asked


@pytest.mark.req("2026-07-28:client/elicitation#13")
def test_a_url_elicitation_needs_mode_message_and_url() -> None:
    from mcp_ref.errors import DecodeError
    from mcp_ref.schema._converter import decode
    from mcp_ref.schema.elicitation import ElicitRequestURLParams

    ok = decode({"mode": "url", "message": "m", "url": "https://x.example"}, ElicitRequestURLParams)
    assert ok.url == "https://x.example" and ok.elicitation_id is None
    for missing in ("message", "url"):
        params = {"mode": "url", "message": "m", "url": "https://x.example"}
        del params[missing]
        with pytest.raises(DecodeError):
            decode(params, ElicitRequestURLParams)


@pytest.mark.req("2026-07-28:server/tools#42", "2026-07-28:server/utilities/completion#6")
async def test_requests_are_rate_limited_per_user_and_per_channel(autojump_clock: trio.abc.Clock) -> None:
    from mcp_ref.session.core import SessionConfig

    limits = {"tools/call": (1.0, 2), "completion/complete": (1.0, 1)}
    server = features(config=SessionConfig(request_rate_limits=limits))

    @server.prompt(description="completes", completers={"city": _cities})
    async def trip(ctx: RequestContext, city: str) -> str:
        return f"go to {city}"

    call = {"name": "hello", "arguments": {}}
    async with modern(server) as peer:
        codes = [("result" in (await peer.call("tools/call", call))[0]) for _ in range(3)]
        assert codes == [True, True, False]  # a burst of two, then refused
        refused, _ = await peer.call("tools/call", call)
        assert refused["error"]["code"] == -32600 and "too many tools/call" in refused["error"]["message"]
        await trio.sleep(1.5)
        assert "result" in (await peer.call("tools/call", call))[0]  # the bucket refilled
        complete = {"ref": {"type": "ref/prompt", "name": "trip"}, "argument": {"name": "city", "value": "Pa"}}
        first, _ = await peer.call("completion/complete", complete)
        assert first["result"]["completion"]["values"] == ["Paris"]
        second, _ = await peer.call("completion/complete", complete)
        assert second["error"]["code"] == -32600
        assert "result" in (await peer.call("tools/list"))[0]  # other methods are not limited
        async with modern(server) as other:  # another channel counts on its own
            assert "result" in (await other.call("tools/call", call))[0]
    # over HTTP, each user (a verified token's principal) has its own bucket
    for _ in range(2):
        assert "result" in await ask(server, "tools/call", call, scopes=())
    assert (await ask(server, "tools/call", call, scopes=()))["error"]["code"] == -32600


async def _cities(ctx: Any, value: str, context: Any) -> list[str]:
    return [c for c in ("Paris", "Prague") if c.startswith(value)]


@pytest.mark.req(
    "2026-07-28:client/elicitation#17",
    "2026-07-28:client/elicitation#18",
    "2026-07-28:client/elicitation#25",
    "2026-07-28:client/elicitation#42",
    "2026-07-28:client/elicitation#47",
    "2026-07-28:client/elicitation#48",
    "2026-07-28:client/elicitation#49",
)
async def test_a_url_elicitation_is_bound_to_its_user_across_the_rounds() -> None:
    from urllib.parse import parse_qs, urlsplit

    from mcp_ref.client.url_elicitations import URLElicitations
    from mcp_ref.server.tools import ToolError

    links = URLElicitations("https://mcp.example/connect")
    server = Server("oob", "1", state_key=b"o" * 32)

    @server.tool()
    async def connect(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        if "eid" not in ctx.state:
            params = links.start(ctx, "Connect your account")
            ctx.state["eid"] = params.elicitation_id
            await ctx.elicit(params)
        if not links.completed(ctx, ctx.state["eid"]):
            raise ToolError("not connected yet")
        return "connected"

    call = {"name": "connect", "arguments": {}}
    url_caps = ClientCapabilities(elicitation={"url": {}})
    first = await ask(server, "tools/call", call, scopes=(), caps=url_caps)
    (request,) = first["result"]["inputRequests"].values()
    assert "elicitationId" not in request["params"]  # (2026-07-28: the URL carries it)
    eid = parse_qs(urlsplit(request["params"]["url"]).query)["elicitation_id"][0]
    state = first["result"]["requestState"]
    accepted = {"elicitation-1": {"action": "accept"}}
    waiting = await ask(
        server, "tools/call", call, scopes=(), input_responses=accepted, request_state=state, caps=url_caps
    )
    assert waiting["result"]["isError"] and waiting["result"]["content"][0]["text"] == "not connected yet"
    with pytest.raises(PermissionError):
        await links.complete(eid, user=(None, "mallory"))  # someone else opened the URL: refused
    await links.complete(eid, user=(None, "u"))  # the user who started it, as the page authenticated them
    done = await ask(
        server, "tools/call", call, scopes=(), input_responses=accepted, request_state=state, caps=url_caps
    )
    assert done["result"]["content"][0]["text"] == "connected"
    # another user's request never learns of it, whatever it sends
    other = await ask(server, "tools/call", call, scopes=(), subject="mallory", caps=url_caps)
    (mine,) = other["result"]["inputRequests"].values()
    theirs = parse_qs(urlsplit(mine["params"]["url"]).query)["elicitation_id"][0]
    await links.complete(theirs, user=(None, "mallory"))

    class Ctx:
        auth = AccessToken(subject="u")

    with pytest.raises(PermissionError):
        links.completed(Ctx(), theirs)


async def _no_ids(ctx: Any, value: str, context: Any) -> list[str]:
    return []


@pytest.mark.req("server/resources#9", "server/resources#11")
async def test_a_2025_session_sees_the_same_scoped_registry() -> None:
    from mcp_ref.basic.transports.memory import memory_channel_pair
    from mcp_ref.session.client import open_session
    from mcp_ref.session.modern_client import EraCache

    server = features()
    client_end, server_end = memory_channel_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        async with open_session(client_end, era="legacy", era_cache=EraCache()) as client:
            listed = [r.uri for r in await client.list_all_resources()]
            assert "test://open" in listed and "test://admin" not in listed  # no token: no scopes
            with pytest.raises(Exception, match="Resource not found"):
                await client.read_resource("test://admin")
        nursery.cancel_scope.cancel()
