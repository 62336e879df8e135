"""basic/index#meta: _meta key format, checked on send, counted on receipt."""

import json

import pytest

from mcp_ref.basic.meta import is_reserved, meta_key_problem
from mcp_ref.errors import LocalProtocolError
from mcp_ref.events import RequestReceived
from mcp_ref.schema.tools import CallToolRequestParams

from ..test_connection import handshake


@pytest.mark.req("basic/index#26", "basic/index#27", "basic/index#29", "basic/index#30")
@pytest.mark.parametrize(
    "key",
    [
        "progressToken",
        "com.example/trace-id",
        "io.modelcontextprotocol/related-task",
        "a/b",
        "x",
        "",
        "a.b-c.d9/n_a.m-e",
        "com.example/",
    ],
)
def test_well_formed_keys(key: str) -> None:
    assert meta_key_problem(key) is None


@pytest.mark.req("basic/index#26", "basic/index#27", "basic/index#29")
@pytest.mark.parametrize(
    "key",
    ["-x", "x-", "1abc.def/name", "com..example/x", "com.example-/x", "com.example/-bad", "com.example/bad_", "a b"],
)
def test_malformed_keys(key: str) -> None:
    assert meta_key_problem(key) is not None


def test_reserved_prefixes() -> None:
    for key in ("io.modelcontextprotocol/x", "dev.mcp/x", "org.modelcontextprotocol.api/x", "com.mcp.tools/x"):
        assert is_reserved(key)
    for key in ("com.example.mcp/x", "mcp/x", "progressToken"):
        assert not is_reserved(key)


@pytest.mark.req("basic/index#25")
def test_malformed_keys_are_refused_on_send_and_counted_on_receipt() -> None:
    client, server = handshake()
    with pytest.raises(LocalProtocolError, match="_meta key"):
        client.send_request("tools/call", CallToolRequestParams(name="t", meta={"com.example/-x": 1}))
    assert client.pending_outgoing == []
    raw = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "_meta": {"bad key!": {"any": "value"}}},
    }
    (event,) = server.receive_message(json.dumps(raw))
    assert isinstance(event, RequestReceived) and event.params.meta == {"bad key!": {"any": "value"}}
    assert server.stats["meta:malformed-key"] == 1
