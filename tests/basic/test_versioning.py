"""basic/versioning (2026-07-28): the per-request protocol fields, eras, the version errors."""

from typing import Any

import pytest

from mcp_ref.basic import versioning as v
from mcp_ref.errors import ProtocolError

META = {v.PROTOCOL_VERSION_KEY: "2026-07-28", v.CLIENT_CAPABILITIES_KEY: {"sampling": {}}}


def params(**meta: Any) -> dict[str, Any]:
    out = dict(META)
    out.update({k.replace("__", "/").replace("_", "."): x for k, x in meta.items()})
    return {"_meta": out}


@pytest.mark.req("2026-07-28:basic/index#52", "2026-07-28:basic/index#53")
@pytest.mark.parametrize(
    "raw",
    [
        None,
        {},
        {"_meta": "x"},
        {"_meta": {v.CLIENT_CAPABILITIES_KEY: {}}},
        {"_meta": {v.PROTOCOL_VERSION_KEY: "2026-07-28"}},
        {"_meta": {v.PROTOCOL_VERSION_KEY: 20260728, v.CLIENT_CAPABILITIES_KEY: {}}},
        {"_meta": {v.PROTOCOL_VERSION_KEY: "2026-07-28", v.CLIENT_CAPABILITIES_KEY: []}},
    ],
)
def test_a_request_without_its_required_fields_is_invalid_params(raw: Any) -> None:
    with pytest.raises(ProtocolError) as caught:
        v.read_request_meta(raw)
    assert caught.value.code == -32602


@pytest.mark.req("2026-07-28:basic/index#55")
def test_client_info_is_optional_and_read_when_given() -> None:
    assert v.read_request_meta({"_meta": dict(META)}).client_info is None
    info = {"name": "c", "version": "1"}
    meta = v.read_request_meta({"_meta": {**META, v.CLIENT_INFO_KEY: info}})
    assert meta.client_info is not None and meta.client_info.name == "c"
    with pytest.raises(ProtocolError, match="clientInfo"):
        v.read_request_meta({"_meta": {**META, v.CLIENT_INFO_KEY: {"name": 3}}})


@pytest.mark.req("2026-07-28:server/utilities/logging#6")
def test_an_unknown_log_level_is_invalid_params() -> None:
    assert v.read_request_meta({"_meta": {**META, v.LOG_LEVEL_KEY: "warning"}}).log_level == "warning"
    with pytest.raises(ProtocolError) as caught:
        v.read_request_meta({"_meta": {**META, v.LOG_LEVEL_KEY: "verbose"}})
    assert caught.value.code == -32602


@pytest.mark.req("2026-07-28:basic/patterns/progress#2")
def test_a_progress_token_is_a_string_or_an_integer() -> None:
    assert v.read_request_meta({"_meta": {**META, "progressToken": 7}}).progress_token == 7
    with pytest.raises(ProtocolError):
        v.read_request_meta({"_meta": {**META, "progressToken": 1.5}})


@pytest.mark.req("2026-07-28:basic/versioning#1")
def test_the_unsupported_version_error_lists_what_is_supported_and_echoes_the_request() -> None:
    error = v.unsupported_version("1900-01-01", ("2026-07-28", "2025-11-25"))
    assert error.code == -32022
    assert error.data == {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}


@pytest.mark.req("2026-07-28:basic/index#57")
def test_the_missing_capability_error_names_a_capabilities_object() -> None:
    error = v.missing_capability(("sampling",), ("elicitation", "url"))
    assert error.code == -32021
    assert error.data == {"requiredCapabilities": {"sampling": {}, "elicitation": {"url": {}}}}


@pytest.mark.req("2026-07-28:server/utilities/logging#3", "2026-07-28:server/utilities/logging#4")
def test_log_messages_pass_only_at_or_above_the_requested_level() -> None:
    assert not v.level_passes("emergency", None)
    assert v.level_passes("warning", "warning") and v.level_passes("error", "warning")
    assert not v.level_passes("info", "warning")


@pytest.mark.req("2026-07-28:basic/versioning#11")
@pytest.mark.parametrize(
    ("message", "era"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, v.Era.LEGACY),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, v.Era.LEGACY),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}, v.Era.MODERN),
        ({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}, v.Era.MODERN),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
        ([1, 2], None),
    ],
)
def test_the_first_request_on_a_channel_chooses_the_era(message: Any, era: v.Era | None) -> None:
    assert v.era_of_first_message(message) is era


def test_eras_of_revisions() -> None:
    assert v.era_of("2026-07-28") is v.Era.MODERN
    assert v.era_of("2025-11-25") is v.Era.LEGACY and v.era_of("2024-11-05") is v.Era.LEGACY


@pytest.mark.req("2026-07-28:basic/index#22")
def test_codes_this_revision_forbids_have_their_replacement() -> None:
    assert v.LEGACY_ONLY_ERROR_CODES[-32002] == -32602
