"""Streamable HTTP (2026-07-28): the headers that mirror the body, and x-mcp-header."""

from typing import Any

import pytest

from mcp_ref.basic.transports import mcp_headers as h
from mcp_ref.errors import ProtocolError


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#49",
    "2026-07-28:basic/transports/streamable-http#50",
    "2026-07-28:basic/transports/streamable-http#55",
)
@pytest.mark.parametrize(
    ("value", "header"),
    [  # the spec's own table (basic/transports/streamable-http#value-encoding)
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_values_are_encoded_as_the_spec_shows_and_decode_back(value: str, header: str) -> None:
    assert h.encode_value(value) == header
    assert h.decode_value(header) == value


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#53", "2026-07-28:basic/transports/streamable-http#54")
@pytest.mark.parametrize("bad", ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "=?base64?/w==?=", "a\x01b"])
def test_malformed_base64_or_characters_are_a_header_mismatch(bad: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        h.decode_value(bad)
    assert caught.value.code == -32020


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#52")
def test_values_without_the_exact_markers_are_literal() -> None:
    for literal in ("SGVsbG8=", "=?base64?SGVsbG8=", "=?BASE64?SGVsbG8=?="):
        assert h.decode_value(literal) == literal


@pytest.mark.req(
    "2026-07-28:basic/transports/index#3",
    "2026-07-28:basic/transports/streamable-http#10",
    "2026-07-28:basic/transports/streamable-http#32",
    "2026-07-28:basic/transports/streamable-http#33",
    "2026-07-28:basic/transports/streamable-http#51",
    "2026-07-28:basic/transports/streamable-http#63",
    "2026-07-28:basic/transports/streamable-http#65",
    "2026-07-28:basic/transports/streamable-http#66",
)
def test_standard_headers_must_say_what_the_body_says() -> None:
    params = {"name": "get weather"}
    sent = {k.lower(): x for k, x in h.standard_headers("2026-07-28", "tools/call", params).items()}
    assert sent == {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "get weather"}
    h.check_standard_headers(sent, "tools/call", params)
    for broken in (
        {**sent, "mcp-method": "tools/list"},
        {**sent, "mcp-method": "Tools/Call"},
        {k: x for k, x in sent.items() if k != "mcp-method"},
        {k: x for k, x in sent.items() if k != "mcp-name"},
        {**sent, "mcp-name": "other"},
    ):
        with pytest.raises(ProtocolError) as caught:
            h.check_standard_headers(broken, "tools/call", params)
        assert caught.value.code == -32020
    # a name that needs Base64 is compared decoded
    h.check_standard_headers(
        {"mcp-method": "resources/read", "mcp-name": h.encode_value("file:///é")},
        "resources/read",
        {"uri": "file:///é"},
    )
    # a name a header cannot carry as it is goes Base64
    assert h.standard_headers("2026-07-28", "prompts/get", {"name": "café"})["Mcp-Name"] == h.encode_value("café")
    # methods without a name need no Mcp-Name
    h.check_standard_headers({"mcp-method": "tools/list"}, "tools/list", {})


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        "nested": {"type": "object", "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}}},
        "query": {"type": "string"},
    },
}


def test_annotations_are_read_with_their_paths() -> None:
    got = {x.header: (x.path, x.type) for x in h.param_headers(SCHEMA)}
    assert got == {
        "Mcp-Param-Region": (("region",), "string"),
        "Mcp-Param-Count": (("count",), "integer"),
        "Mcp-Param-Dry-Run": (("dry",), "boolean"),
        "Mcp-Param-Tenant": (("nested", "tenant"), "string"),
    }


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#34",
    "2026-07-28:basic/transports/streamable-http#37",
    "2026-07-28:basic/transports/streamable-http#38",
    "2026-07-28:basic/transports/streamable-http#39",
    "2026-07-28:basic/transports/streamable-http#40",
    "2026-07-28:basic/transports/streamable-http#41",
    "2026-07-28:basic/transports/streamable-http#42",
    "2026-07-28:basic/transports/streamable-http#43",
    "2026-07-28:basic/transports/streamable-http#44",
)
@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}},
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}},
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A\r\nB"}}},
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": 5}}},
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Dup"},
                "b": {"type": "string", "x-mcp-header": "dup"},
            },
        },
        {"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "N"}}},
        {"type": "object", "properties": {"a": {"type": "object", "x-mcp-header": "O"}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}},
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "C"}]}}},
        {"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "D"}}},
        {"type": "object", "if": {"properties": {"a": {"type": "string", "x-mcp-header": "If"}}}},
        {"type": "string", "x-mcp-header": "Root"},
    ],
)
def test_invalid_annotations_are_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="x-mcp-header"):
        h.param_headers(schema)


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#36", "2026-07-28:basic/transports/streamable-http#42")
def test_a_call_mirrors_the_annotated_arguments_it_has() -> None:
    declared = h.param_headers(SCHEMA)
    args = {"region": "eu west ", "count": 42, "dry": False, "nested": {"tenant": "t1"}, "query": "x"}
    assert h.param_header_values(declared, args) == {
        "Mcp-Param-Region": h.encode_value("eu west "),
        "Mcp-Param-Count": "42",
        "Mcp-Param-Dry-Run": "false",
        "Mcp-Param-Tenant": "t1",
    }
    assert h.param_header_values(declared, {"region": None}) == {}
    # an integer past JavaScript's safe range is never mirrored, nor matched
    assert h.param_header_values(declared, {"count": 2**53}) == {}
    assert h.param_header_values(declared, {"count": 2**53 - 1}) == {"Mcp-Param-Count": str(2**53 - 1)}


@pytest.mark.req(
    "2026-07-28:basic/transports/streamable-http#59",
    "2026-07-28:basic/transports/streamable-http#60",
    "2026-07-28:basic/transports/streamable-http#61",
    "2026-07-28:basic/transports/streamable-http#64",
)
def test_the_server_checks_the_param_headers_against_the_arguments() -> None:
    declared = h.param_headers(SCHEMA)
    args = {"region": "us-west1", "count": 42}
    h.check_param_headers(declared, {"mcp-param-region": "us-west1", "mcp-param-count": "42.0"}, args)
    h.check_param_headers(declared, {"mcp-param-region": "=?base64?dXMtd2VzdDE=?=", "mcp-param-count": "42"}, args)
    h.check_param_headers(declared, {"mcp-param-unknown": "x"}, {})  # unrecognised headers are ignored
    for headers, arguments in (
        ({"mcp-param-count": "42"}, args),  # the region header is missing
        ({"mcp-param-region": "us-east1", "mcp-param-count": "42"}, args),
        ({"mcp-param-region": "us-west1", "mcp-param-count": "43"}, args),
        ({"mcp-param-region": "us-west1"}, {}),  # a header without its argument
        ({"mcp-param-dry-run": "False"}, {"dry": False}),
        ({"mcp-param-region": "=?base64?SGVsbG8?="}, {"region": "Hello"}),
    ):
        with pytest.raises(ProtocolError) as caught:
            h.check_param_headers(declared, headers, arguments)
        assert caught.value.code == -32020
