"""The engine under random interleavings (a Hypothesis state machine).

Two engines -- a client and a server -- talk over two in-order wires. Each
step is something one of them does: send a request (with or without a
progress token), answer one it received (result or error), report progress on
one, cancel one of its own, close, deliver the next message on a wire, or
deliver garbage. What is checked, at every step:

* the engine never raises, except ``LocalProtocolError`` when a step asks it to
  break the spec (then nothing was sent, and the machine counts nothing);
* every message an engine produces -- sent, or a reply it makes to what it
  received -- validates against the schema.json of the revision it speaks
  then (the patched documents of tests/schema, as the schema tests use);
* two engines that only send what they may never fault each other: delivering
  what one sent never gives the other a rejection, an answer to nothing, or
  an error without id -- only garbage does.
"""

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mcp_ref.basic.lifecycle import SUPPORTED_VERSIONS, Phase, Role, negotiate_version
from mcp_ref.connection import Connection
from mcp_ref.errors import LocalProtocolError
from mcp_ref.events import ErrorWithoutId, MessageRejected, RequestReceived, UnknownResponse
from mcp_ref.schema import messages as m
from mcp_ref.schema.jsonrpc import Result
from mcp_ref.schema.lifecycle import (
    ClientCapabilities,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    ListChangedCapability,
    RootsCapability,
    ServerCapabilities,
)
from mcp_ref.schema.roots import ListRootsResult
from mcp_ref.schema.tools import CallToolRequestParams, CallToolResult, ListToolsResult

from .conftest import find_spec, spec_missing
from .schema._spec import spec_names
from .schema.test_properties import validator

pytestmark = pytest.mark.skipif(
    find_spec("2025-11-25", "schema.json") is None,
    reason=spec_missing("2025-11-25", "schema.json") + " (nothing to validate against)",
)

REQUESTS = {Role.CLIENT: ("ping", "tools/list", "tools/call"), Role.SERVER: ("ping", "roots/list")}
RESULTS: dict[str, Any] = {
    "ping": Result(),
    "tools/list": ListToolsResult(tools=[]),
    "tools/call": CallToolResult(content=[]),
    "roots/list": ListRootsResult(roots=[]),
}
PARAMS: dict[str, Any] = {"tools/call": CallToolRequestParams(name="t")}
GARBAGE = st.one_of(
    st.binary(max_size=40),
    st.sampled_from(
        [
            b"{}",
            b"[]",
            b'{"jsonrpc":"2.0","id":999,"result":{}}',
            b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}',
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
            b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":1}}',
            b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
        ]
    ),
)


def validate(revision: str, message: Any, sender: Role, answers: str | None) -> None:
    """``message`` is what the schema of ``revision`` allows ``sender`` to send."""
    names: list[str]
    ours = "Client" if sender is Role.CLIENT else "Server"
    if "method" in message and "id" in message:
        names = ["JSONRPCRequest", f"{ours}Request"]
    elif "method" in message:
        names = ["JSONRPCNotification", f"{ours}Notification"]
    elif "error" in message:
        names = ["JSONRPCError" if revision < "2025-11-25" else "JSONRPCErrorResponse"]
        if message.get("id", 0) is None:
            # the error for an unreadable id: the schemas have no null id (older ones require an
            # id, 2025-11-25 makes it optional), JSON-RPC 2.0 says null, and we write null in
            # every revision (decision in spec_notes/basic/index.md): the rest of it is checked
            message = {**message, "id": 0}
    else:
        names = ["JSONRPCResponse" if revision < "2025-11-25" else "JSONRPCResultResponse"]
        result_name = spec_names(revision).get(m.RESULT_TYPES[answers]) if answers is not None else None
        if result_name is not None:
            validator(revision, result_name).validate(message["result"])
    for name in names:
        validator(revision, name).validate(message)


class Peer:
    def __init__(self, role: Role) -> None:
        self.role = role
        caps = (
            ClientCapabilities(roots=RootsCapability())
            if role is Role.CLIENT
            else ServerCapabilities(tools=ListChangedCapability())
        )
        self.conn = Connection(role, capabilities=caps)
        self.incoming: dict[Any, str] = {}  # requests received and not answered: id -> method
        self.outgoing: dict[Any, str] = {}  # our requests: id -> method (kept after the answer)
        self.progress: dict[Any, float] = {}


class EngineMachine(RuleBasedStateMachine):
    @initialize(handshake=st.one_of(st.none(), st.sampled_from(SUPPORTED_VERSIONS)))
    def start(self, handshake: str | None) -> None:
        """Two fresh engines; most runs start from a finished handshake of a revision drawn
        (the others go through it step by step, among everything else)."""
        self.peers = {Role.CLIENT: Peer(Role.CLIENT), Role.SERVER: Peer(Role.SERVER)}
        #: messages in flight on each wire, to the role named: (bytes, honest)
        self.wires: dict[Role, list[tuple[bytes, bool]]] = {Role.CLIENT: [], Role.SERVER: []}
        self.sent = 0
        #: garbage was delivered: from then on an honest message may meet state the
        #: garbage made (an id still in flight...), and be refused rightly
        self.garbled = False
        if handshake is not None:
            client, server = self.peers[Role.CLIENT], self.peers[Role.SERVER]
            self.client_initializes(handshake)
            self.receive(server, self.wires[Role.SERVER].pop(0)[0], honest=True)
            (rid,) = server.incoming
            result = InitializeResult(
                protocol_version=handshake,
                capabilities=server.conn.capabilities,
                server_info=Implementation(name="s", version="1"),
            )
            self.emit(server, server.conn.send_response(rid, result), "initialize")
            del server.incoming[rid]
            self.receive(client, self.wires[Role.CLIENT].pop(0)[0], honest=True)
            self.client_is_initialized()
            self.receive(server, self.wires[Role.SERVER].pop(0)[0], honest=True)
            assert client.conn.protocol_version == server.conn.protocol_version == handshake

    # -- producing ---------------------------------------------------------------------------

    def emit(self, sender: Peer, data: bytes, answers: str | None = None, *, honest: bool = True) -> None:
        validate(sender.conn.revision, json.loads(data), sender.role, answers)
        other = Role.SERVER if sender.role is Role.CLIENT else Role.CLIENT
        self.wires[other].append((data, honest))
        self.sent += 1

    def attempt(self, sender: Peer, action: Any, answers: str | None = None) -> Any:
        """Run a send; LocalProtocolError means the step was illegal, and nothing is sent."""
        try:
            out = action()
        except LocalProtocolError:
            return None
        data = out[1] if isinstance(out, tuple) else out
        if data is not None:
            self.emit(sender, data, answers)
        return out

    # -- the client's handshake --------------------------------------------------------------------

    @rule(version=st.sampled_from(SUPPORTED_VERSIONS))
    def client_initializes(self, version: str) -> None:
        client = self.peers[Role.CLIENT]
        params = InitializeRequestParams(
            protocol_version=version,
            capabilities=client.conn.capabilities,
            client_info=Implementation(name="c", version="1"),
        )
        out = self.attempt(client, lambda: client.conn.send_request("initialize", params))
        if out is not None:
            client.outgoing[out[0]] = "initialize"

    @precondition(lambda self: self.peers[Role.CLIENT].conn.phase is not Phase.OPERATING)
    @rule()
    def client_is_initialized(self) -> None:
        client = self.peers[Role.CLIENT]
        self.attempt(client, lambda: client.conn.send_notification("notifications/initialized"))

    # -- requests, answers, progress, cancellation -----------------------------------------------------

    @rule(role=st.sampled_from(Role), data=st.data(), progress=st.booleans())
    def request(self, role: Role, data: st.DataObject, progress: bool) -> None:
        peer = self.peers[role]
        method = data.draw(st.sampled_from(REQUESTS[role]))
        send = peer.conn.send_request
        out = self.attempt(peer, lambda: send(method, PARAMS.get(method), progress_token=progress or None))
        if out is not None:
            peer.outgoing[out[0]] = method

    @precondition(lambda self: any(p.incoming for p in self.peers.values()))
    @rule(data=st.data(), as_error=st.booleans())
    def answer(self, data: st.DataObject, as_error: bool) -> None:
        peer = data.draw(st.sampled_from([p for p in self.peers.values() if p.incoming]))
        rid = data.draw(st.sampled_from(sorted(peer.incoming, key=repr)))
        method = peer.incoming[rid]
        if as_error:
            sent = self.attempt(peer, lambda: peer.conn.send_error(rid, -32000, "refused"))
        elif method == "initialize":
            requested = peer.conn.requested_version or SUPPORTED_VERSIONS[0]
            result = InitializeResult(
                protocol_version=negotiate_version(requested),
                capabilities=peer.conn.capabilities,
                server_info=Implementation(name="s", version="1"),
            )
            sent = self.attempt(peer, lambda: peer.conn.send_response(rid, result), method)
        else:
            sent = self.attempt(peer, lambda: peer.conn.send_response(rid, RESULTS[method]), method)
        if sent is not None or peer.conn.incoming(rid) is None:
            peer.incoming.pop(rid, None)

    @precondition(lambda self: any(p.incoming for p in self.peers.values()))
    @rule(data=st.data(), step=st.floats(min_value=-1, max_value=10, allow_nan=False))
    def report_progress(self, data: st.DataObject, step: float) -> None:
        peer = data.draw(st.sampled_from([p for p in self.peers.values() if p.incoming]))
        rid = data.draw(st.sampled_from(sorted(peer.incoming, key=repr)))
        value = peer.progress.get(rid, 0.0) + step
        if self.attempt(peer, lambda: peer.conn.send_progress(rid, value, None, "working")) is not None:
            peer.progress[rid] = value

    @precondition(lambda self: any(p.outgoing for p in self.peers.values()))
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        peer = data.draw(st.sampled_from([p for p in self.peers.values() if p.outgoing]))
        rid = data.draw(st.sampled_from(sorted(peer.outgoing, key=repr)))
        self.attempt(peer, lambda: peer.conn.send_cancel(rid, "changed my mind"))

    @precondition(lambda self: self.sent >= 8)  # (a close ends everything after it: not too early)
    @rule(role=st.sampled_from(Role))
    def close(self, role: Role) -> None:
        self.peers[role].conn.close()

    # -- delivering -------------------------------------------------------------------------------------

    def receive(self, receiver: Peer, data: bytes, honest: bool) -> None:
        events = receiver.conn.receive_message(data)  # (never raises: a raise fails the machine)
        for event in events:
            if isinstance(event, RequestReceived):
                receiver.incoming[event.id] = event.method
            if honest and not self.garbled:
                # two engines that only send what they may never fault each other
                assert not isinstance(event, MessageRejected | UnknownResponse | ErrorWithoutId), event
            reply = getattr(event, "reply", None)
            if reply is not None:
                self.emit(receiver, reply, honest=False)

    @precondition(lambda self: any(self.wires.values()))
    @rule(data=st.data())
    def deliver(self, data: st.DataObject) -> None:
        to = data.draw(st.sampled_from([role for role, wire in self.wires.items() if wire]))
        message, honest = self.wires[to].pop(0)
        self.receive(self.peers[to], message, honest)

    @precondition(lambda self: self.sent >= 4)
    @rule(to=st.sampled_from(Role), garbage=GARBAGE)
    def deliver_garbage(self, to: Role, garbage: bytes) -> None:
        self.garbled = True
        self.receive(self.peers[to], garbage, honest=False)

    @invariant()
    def phases_are_consistent(self) -> None:
        for peer in self.peers.values():
            version = peer.conn.protocol_version
            assert version is None or version in SUPPORTED_VERSIONS


TestEngineMachine = EngineMachine.TestCase
TestEngineMachine.settings = settings(
    max_examples=200,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
