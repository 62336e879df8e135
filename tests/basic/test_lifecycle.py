"""The lifecycle phase tables (mcp_ref/basic/lifecycle.py) against the spec's own text.

DESIGN.md section 3: each state-machine table is compared with the spec's
diagram or prose. The expected sets are read from basic/lifecycle.mdx (the
initialization sequence diagram and the two "SHOULD NOT send requests other
than ..." sentences), whose links name the utility pages; the methods of a
page are the ``"method"`` values of its JSON examples, and methods.tsv says
who sends each. Our own decisions beyond the text (spec_notes/basic/lifecycle.md)
are spelled out below and checked as exact differences, so the tables cannot
grow or shrink unnoticed.
"""

import csv
import functools
import json
import re
from typing import Any

import pytest
import trio
import trio.testing

from mcp_ref.basic import lifecycle as lc
from mcp_ref.basic.lifecycle import Phase, Role
from mcp_ref.basic.transports.memory import memory_channel_pair
from mcp_ref.connection import Connection
from mcp_ref.errors import ErrorCode, LocalProtocolError, UnsupportedProtocolVersion
from mcp_ref.events import MessageRejected, NotificationIgnored, RequestReceived
from mcp_ref.schema.lifecycle import (
    ClientCapabilities,
    Implementation,
    InitializeResult,
    ListChangedCapability,
    RootsCapability,
    ServerCapabilities,
)
from mcp_ref.schema.tasks import GetTaskRequestParams
from mcp_ref.session import RequestContext, Server, open_session

from ..conftest import spec_path
from ..test_connection import handshake, init_params

REV = "2025-11-25"
C, S = Role.CLIENT, Role.SERVER
BEFORE_INITIALIZED = (Phase.INITIALIZING, Phase.AWAITING_INITIALIZED)


@functools.cache
def lifecycle_text() -> str:
    return spec_path(REV, "basic", "lifecycle.mdx").read_text()


@functools.cache
def senders() -> dict[str, tuple[str, set[Role]]]:
    """method -> (request | notification, the roles that send it), from methods.tsv."""
    out: dict[str, tuple[str, set[Role]]] = {}
    with spec_path(REV, "methods.tsv").open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            direction = row["direction"]
            roles = {C, S} if direction == "both" else {C} if direction == "client->server" else {S}
            out[row["method"]] = (row["kind"], roles)
    return out


def methods_of_page(link: str) -> set[str]:
    """The methods a spec page shows in its JSON examples."""
    page = link.removeprefix(f"/specification/{REV}/") + ".mdx"
    text = spec_path(REV, *page.split("/")).read_text()
    return set(re.findall(r'"method":\s*"([^"]+)"', text))


def allowed_before(who: str) -> tuple[set[str], set[str]]:
    """(requests, notifications) the "<who> SHOULD NOT send requests other than ..."
    sentence of basic/lifecycle.mdx leaves allowed to that side."""
    text = " ".join(lifecycle_text().split())
    match = re.search(rf"The {who} \*\*SHOULD NOT\*\* send requests other than (.+?) (before [^.]+)\.", text)
    assert match is not None, f"the {who} sentence of basic/lifecycle.mdx changed"
    role = C if who == "client" else S
    named = {m for link in re.findall(r"\]\(([^)]+)\)", match.group(1)) for m in methods_of_page(link)}
    mine = {m for m in named if role in senders()[m][1]}
    return (
        {m for m in mine if senders()[m][0] == "request"},
        {m for m in mine if senders()[m][0] == "notification"},
    )


def diagram_arrows() -> list[tuple[str, str, str]]:
    """(from, to, label) of the initialization phase of the sequence diagram."""
    diagram = lifecycle_text().split("```mermaid", 1)[1].split("```", 1)[0]
    init = diagram.split("Initialization Phase", 1)[1].split("Operation Phase", 1)[0]
    return re.findall(r"(Client|Server)\s*-+[>)]+[+-]?\s*(Client|Server):\s*(.+)", init)


def table(t: Any, role: Role, phase: Phase) -> frozenset[str]:
    return frozenset(t[(role, phase)])


def test_the_diagram_fixes_the_order_of_initialization() -> None:
    arrows = [(a, b, label.strip()) for a, b, label in diagram_arrows()]
    assert arrows == [
        ("Client", "Server", "initialize request"),
        ("Server", "Client", "initialize response"),
        ("Client", "Server", "initialized notification"),
    ]


@pytest.mark.req("basic/lifecycle#1", "basic/lifecycle#2", "basic/lifecycle#4")
def test_send_tables_follow_the_sequence_diagram() -> None:
    # the first arrow is the client's initialize: the only thing either side sends first
    assert table(lc.SEND_REQUESTS, C, Phase.AWAITING_INIT) == {"initialize"}
    assert table(lc.SEND_NOTIFICATIONS, C, Phase.AWAITING_INIT) == set()
    assert table(lc.SEND_REQUESTS, S, Phase.AWAITING_INIT) == set()
    assert table(lc.SEND_NOTIFICATIONS, S, Phase.AWAITING_INIT) == set()
    # the third arrow: once answered, the client announces it is ready ...
    assert "notifications/initialized" in table(lc.SEND_NOTIFICATIONS, C, Phase.AWAITING_INITIALIZED)
    # ... and never before the answer, nor again in operation (it ends the phase)
    assert "notifications/initialized" not in table(lc.SEND_NOTIFICATIONS, C, Phase.INITIALIZING)
    # the operation phase: "normal protocol operations", both ways
    for t in (lc.SEND_REQUESTS, lc.SEND_NOTIFICATIONS, lc.ACCEPT_REQUESTS, lc.ACCEPT_NOTIFICATIONS):
        assert table(t, C, Phase.OPERATING) == table(t, S, Phase.OPERATING) == {lc.ANY}


@pytest.mark.req("basic/lifecycle#5")
def test_the_client_sends_only_what_the_prose_allows_before_the_answer() -> None:
    requests, _ = allowed_before("client")
    assert requests == {"ping"}
    # [lifecycle#5] before the answer: exactly the prose's requests
    assert table(lc.SEND_REQUESTS, C, Phase.INITIALIZING) == requests
    # our decision: the same until initialized is sent (the client MUST send it
    # first, lifecycle#4), so operation really starts with it
    assert table(lc.SEND_REQUESTS, C, Phase.AWAITING_INITIALIZED) == requests
    # cancelling a ping in flight is bookkeeping, not a new interaction
    assert table(lc.SEND_NOTIFICATIONS, C, Phase.INITIALIZING) == {"notifications/cancelled"}
    assert table(lc.SEND_NOTIFICATIONS, C, Phase.AWAITING_INITIALIZED) == {
        "notifications/initialized",
        "notifications/cancelled",
    }


@pytest.mark.req("basic/lifecycle#6")
def test_the_server_sends_only_what_the_prose_allows_before_initialized() -> None:
    requests, notifications = allowed_before("server")
    assert requests == {"ping"} and notifications == {"notifications/message"}
    for phase in BEFORE_INITIALIZED:
        assert table(lc.SEND_REQUESTS, S, phase) == requests
        # the prose's logging plus progress and cancellation of the pings it allows
        # (and of the initialize request being answered): our documented extras
        assert table(lc.SEND_NOTIFICATIONS, S, phase) - notifications == {
            "notifications/progress",
            "notifications/cancelled",
        }
        assert notifications <= table(lc.SEND_NOTIFICATIONS, S, phase)


@pytest.mark.req("basic/lifecycle#5", "basic/lifecycle#6")
def test_accept_tables_take_everything_the_peer_may_send_and_refuse_the_rest() -> None:
    client_requests, _ = allowed_before("client")
    server_requests, server_notifications = allowed_before("server")
    # server: before initialize only the diagram's first arrow and pings;
    # while answering it, only pings (the client waits for the answer)
    assert table(lc.ACCEPT_REQUESTS, S, Phase.AWAITING_INIT) == {"initialize"} | client_requests
    assert table(lc.ACCEPT_REQUESTS, S, Phase.INITIALIZING) == client_requests
    # client: until it has announced initialized, the server may only ping ...
    for phase in (Phase.AWAITING_INIT, *BEFORE_INITIALIZED):
        assert table(lc.ACCEPT_REQUESTS, C, phase) == server_requests
    # ... and log (the logging notification is accepted from the start)
    for phase in (Phase.AWAITING_INIT, Phase.INITIALIZING):
        assert server_notifications <= table(lc.ACCEPT_NOTIFICATIONS, C, phase)
    # our documented decision: once the server has answered, requests may
    # overtake notifications/initialized (separate HTTP POSTs) and are served
    assert table(lc.ACCEPT_REQUESTS, S, Phase.AWAITING_INITIALIZED) == {lc.ANY}


# -- the receive-side cells, through the engine -----------------------------------------------------


def initialize_json(rid: int = 0) -> str:
    params = {"protocolVersion": REV, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params})


def request_json(rid: int, method: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method})


def notification_json(method: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": method})


def client_in(phase: Phase) -> Connection:
    client = Connection(Role.CLIENT, capabilities=ClientCapabilities(roots=RootsCapability(list_changed=True)))
    if phase is Phase.AWAITING_INIT:
        return client
    rid, _ = client.send_request("initialize", init_params(REV, client.capabilities))
    if phase is Phase.AWAITING_INITIALIZED:
        result = {"protocolVersion": REV, "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
        client.receive_message(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))
    assert client.phase is phase
    return client


@pytest.mark.req("basic/lifecycle#6")
@pytest.mark.parametrize("phase", [Phase.AWAITING_INIT, *BEFORE_INITIALIZED])
def test_a_client_answers_server_requests_before_initialized_with_invalid_request(phase: Phase) -> None:
    client = client_in(phase)
    (ev,) = client.receive_message(request_json(5, "roots/list"))
    assert isinstance(ev, MessageRejected) and ev.reply is not None
    reply = json.loads(ev.reply)
    assert reply["id"] == 5 and reply["error"]["code"] == ErrorCode.INVALID_REQUEST
    # a ping is always answered
    (ev,) = client.receive_message(request_json(6, "ping"))
    assert isinstance(ev, RequestReceived) and ev.method == "ping"


@pytest.mark.req("basic/lifecycle#1", "basic/lifecycle#6")
def test_notifications_out_of_phase_are_ignored_not_answered() -> None:
    server = Connection(Role.SERVER, capabilities=ServerCapabilities(tools=ListChangedCapability()))
    (ev,) = server.receive_message(notification_json("notifications/roots/list_changed"))
    assert isinstance(ev, NotificationIgnored) and "phase" in ev.why
    (ev,) = server.receive_message(notification_json("notifications/initialized"))
    assert isinstance(ev, NotificationIgnored)  # nothing to confirm yet
    assert server.phase is Phase.AWAITING_INIT
    client = client_in(Phase.INITIALIZING)
    (ev,) = client.receive_message(notification_json("notifications/tools/list_changed"))
    assert isinstance(ev, NotificationIgnored) and "phase" in ev.why
    assert server.stats["notification:phase"] == 2 and client.stats["notification:phase"] == 1


@pytest.mark.req("basic/lifecycle#5")
def test_a_server_answering_initialize_takes_nothing_but_ping() -> None:
    server = Connection(Role.SERVER, capabilities=ServerCapabilities(tools=ListChangedCapability()))
    server.receive_message(initialize_json())
    assert server.phase is Phase.INITIALIZING
    for rid, method in enumerate(["tools/list", "tools/call", "logging/setLevel", "initialize"], start=1):
        (ev,) = server.receive_message(request_json(rid, method))
        assert isinstance(ev, MessageRejected) and ev.reply is not None
        assert json.loads(ev.reply)["error"]["code"] == ErrorCode.INVALID_REQUEST, method
    (ev,) = server.receive_message(request_json(9, "ping"))
    assert isinstance(ev, RequestReceived)


@pytest.mark.req("basic/lifecycle#4")
def test_requests_that_overtake_initialized_are_served() -> None:
    # documented decision (spec_notes/basic/lifecycle.md): after answering
    # initialize the server serves requests before notifications/initialized
    from mcp_ref.schema.lifecycle import Implementation, InitializeResult

    caps = ServerCapabilities(tools=ListChangedCapability())
    server = Connection(Role.SERVER, capabilities=caps)
    server.receive_message(initialize_json())
    server.send_response(
        0, InitializeResult(protocol_version=REV, capabilities=caps, server_info=Implementation(name="s", version="1"))
    )
    assert server.phase is Phase.AWAITING_INITIALIZED
    (ev,) = server.receive_message(request_json(1, "tools/list"))
    assert isinstance(ev, RequestReceived) and ev.method == "tools/list"
    # while the server itself still sends only pings until initialized arrives
    assert not lc.phase_allows(lc.SEND_REQUESTS, Role.SERVER, server.phase, "roots/list")


@pytest.mark.req("basic/lifecycle#6")
@pytest.mark.parametrize("answered", [False, True])
def test_a_server_sends_no_request_but_ping_before_initialized(answered: bool) -> None:
    # the client declares roots, so only the phase can refuse roots/list
    caps = ServerCapabilities(logging={})
    server = Connection(Role.SERVER, capabilities=caps)
    params = {"protocolVersion": REV, "capabilities": {"roots": {}}, "clientInfo": {"name": "c", "version": "1"}}
    server.receive_message(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}))
    if answered:
        info = Implementation(name="s", version="1")
        server.send_response(0, InitializeResult(protocol_version=REV, capabilities=caps, server_info=info))
    with pytest.raises(LocalProtocolError, match="phase"):
        server.send_request("roots/list")
    server.send_request("ping")
    if answered:
        server.receive_message(notification_json("notifications/initialized"))
        server.send_request("roots/list")  # operation: now it may


@pytest.mark.req("basic/lifecycle#10")
def test_a_server_cannot_answer_initialize_with_a_version_it_does_not_support() -> None:
    caps = ServerCapabilities()
    server = Connection(Role.SERVER, capabilities=caps, supported_versions=("2025-11-25", "2025-06-18"))
    params = {"protocolVersion": "2099-01-01", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    server.receive_message(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}))
    info = Implementation(name="s", version="1")
    with pytest.raises(LocalProtocolError, match="unsupported version '2025-03-26'"):
        server.send_response(0, InitializeResult(protocol_version="2025-03-26", capabilities=caps, server_info=info))
    assert server.phase is Phase.INITIALIZING and server.protocol_version is None


@pytest.mark.req("basic/lifecycle#14")
def test_a_method_the_negotiated_revision_lacks_is_not_sent() -> None:
    client, _ = handshake("2025-06-18")
    with pytest.raises(LocalProtocolError, match="does not exist in the negotiated protocol revision") as e:
        client.send_request("tasks/get", GetTaskRequestParams(task_id="t"))
    assert e.value.code == ErrorCode.METHOD_NOT_FOUND


# -- the sessions' part: what goes on the wire ---------------------------------------------------


async def answer_to_initialize(server: Server, version: str) -> dict[str, Any]:
    """What a Server answers to a raw initialize asking for ``version``."""
    client_end, server_end = memory_channel_pair()
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    async with trio.open_nursery() as nursery:
        await nursery.start(server.serve, server_end)
        await client_end.send(
            json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).encode()
        )
        with trio.fail_after(5):
            answer: dict[str, Any] = json.loads(await client_end.receive())
        nursery.cancel_scope.cancel()
    return answer


@pytest.mark.req("basic/lifecycle#3", "basic/lifecycle#9", "basic/lifecycle#10", "basic/lifecycle#11")
@pytest.mark.parametrize(
    ("requested", "answered"),
    [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2099-01-01", REV),
        # 2026-07-28 has no initialize: a session never negotiates it
        ("2026-07-28", REV),
    ],
)
async def test_a_server_answers_initialize_with_its_capabilities_info_and_a_version(
    requested: str, answered: str
) -> None:
    server = Server("answers", version="7", instructions="be kind")

    @server.tool()
    async def noop(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return ""

    result = (await answer_to_initialize(server, requested))["result"]
    assert result["protocolVersion"] == answered  # the same when supported, else our latest
    assert result["serverInfo"] == {"name": "answers", "version": "7"}
    assert "tools" in result["capabilities"] and result["instructions"] == "be kind"


async def peer_answering(peer: Any, version: str, seen: list[dict[str, Any]]) -> None:
    """A server peer: answers initialize with ``version``, then records what comes."""
    first = json.loads(await peer.receive())
    seen.append(first)
    result = {"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "p", "version": "1"}}
    await peer.send(json.dumps({"jsonrpc": "2.0", "id": first["id"], "result": result}).encode())
    async for data in peer:
        seen.append(json.loads(data))


@pytest.mark.req("basic/lifecycle#1", "basic/lifecycle#2", "basic/lifecycle#4", "basic/lifecycle#8")
async def test_a_client_session_starts_with_initialize_and_says_when_it_is_ready() -> None:
    client_end, peer = memory_channel_pair()
    seen: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(peer_answering, peer, REV, seen)
        with trio.fail_after(5):
            async with open_session(client_end, era="legacy") as client:
                assert client.protocol_version == REV
                await trio.testing.wait_all_tasks_blocked()
                first, ready = seen
                assert first["method"] == "initialize" and first["params"]["protocolVersion"] == REV  # our latest
                assert ready == {"jsonrpc": "2.0", "method": "notifications/initialized"}
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/lifecycle#12", "basic/lifecycle#22", "schema#9")
@pytest.mark.parametrize("answered", ["1999-01-01", "2026-07-28"])
async def test_a_client_that_cannot_speak_the_answered_version_disconnects(answered: str) -> None:
    # (2026-07-28 is spoken, but never in a session: initialize cannot select it)
    client_end, peer = memory_channel_pair()
    seen: list[dict[str, Any]] = []
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(peer_answering, peer, answered, seen)
            with pytest.raises(UnsupportedProtocolVersion):
                async with open_session(client_end, era="legacy"):
                    raise AssertionError("no session for a version we cannot speak")
        # the peer's loop ended: the client closed its end, having sent nothing after initialize
    assert [m.get("method") for m in seen] == ["initialize"]


# -- 2024-11-05, the oldest session revision ---------------------------------------------


def test_sessions_negotiate_every_legacy_revision_and_no_other() -> None:
    assert lc.SUPPORTED_VERSIONS == ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert lc.negotiate_version("2024-11-05") == "2024-11-05"


@pytest.mark.req("basic/lifecycle#9", "basic/lifecycle#14", "2024-11-05:basic/lifecycle#13")
def test_a_2024_11_05_session_writes_only_what_that_revision_has() -> None:
    from mcp_ref.schema.content import AudioContent, TextContent
    from mcp_ref.schema.tools import CallToolRequestParams, CallToolResult

    caps = ServerCapabilities(tools=ListChangedCapability(), completions={})
    client, server = handshake("2024-11-05", server_caps=caps)
    assert client.protocol_version == server.protocol_version == "2024-11-05"
    rid, data = client.send_request("tools/call", CallToolRequestParams(name="t"), progress_token=True)
    server.receive_message(data)
    token = json.loads(data)["params"]["_meta"]["progressToken"]
    sent = server.send_progress(rid, 1, message="half")
    assert sent is not None
    note = json.loads(sent)
    assert note["params"] == {"progressToken": token, "progress": 1}  # no message before 2025-03-26
    # no audio before 2025-03-26: refused before anything is sent
    with pytest.raises(LocalProtocolError, match="AudioContent does not exist in protocol revision 2024-11-05"):
        server.send_response(rid, CallToolResult(content=[AudioContent(data="", mime_type="audio/wav")]))
    reply = json.loads(server.send_response(rid, CallToolResult(content=[TextContent(text="ok")])))
    assert reply["result"] == {"content": [{"type": "text", "text": "ok"}]}


@pytest.mark.req("basic/lifecycle#14", "2024-11-05:basic/lifecycle#13")
def test_completion_needs_the_capability_from_2025_03_26_only() -> None:
    from mcp_ref.errors import CapabilityMissing
    from mcp_ref.schema.completion import CompleteRequestParams, CompletionArgument, PromptReference

    params = CompleteRequestParams(ref=PromptReference(name="p"), argument=CompletionArgument(name="a", value="x"))
    # a 2024-11-05 server completes without declaring it (that revision has no completions capability)
    old, _ = handshake("2024-11-05", server_caps=ServerCapabilities(prompts=ListChangedCapability()))
    old.send_request("completion/complete", params)
    newer, _ = handshake("2025-03-26", server_caps=ServerCapabilities(prompts=ListChangedCapability()))
    with pytest.raises(CapabilityMissing, match="completions"):
        newer.send_request("completion/complete", params)
