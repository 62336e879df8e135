"""The JSON-RPC codec: parse errors, envelope checks, ids never coerced."""

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_ref.basic.jsonrpc import (
    InvalidMessage,
    RawError,
    RawNotification,
    RawRequest,
    RawResult,
    classify,
    dumps,
    loads,
)
from mcp_ref.errors import ErrorCode
from mcp_ref.schema._base import REVISIONS

from ..conftest import spec_path


@pytest.mark.parametrize("text", [b"{", b"not json", b"\xff\xfe", "[1,", b"", b'{"a":1}}'])
def test_not_json_is_a_parse_error(text: bytes | str) -> None:
    with pytest.raises(InvalidMessage) as info:
        loads(text)
    assert info.value.code == ErrorCode.PARSE_ERROR == -32700


@pytest.mark.req("basic/index#3")
def test_jsonrpc_version_must_be_2_0() -> None:
    for bad in ({"id": 1, "method": "ping"}, {"jsonrpc": "1.0", "id": 1, "method": "ping"}, {"jsonrpc": 2.0}):
        with pytest.raises(InvalidMessage) as info:
            classify(bad)
        assert info.value.code == ErrorCode.INVALID_REQUEST


@pytest.mark.req("basic/index#4", "basic/index#5")
@pytest.mark.parametrize(
    ("bad_id", "kind"),
    [(None, "null"), (True, "a boolean"), (1.5, "a non-integer number"), ([1], "an array"), ({"a": 1}, "an object")],
)
def test_request_ids_are_strings_or_integers_never_null(bad_id: object, kind: str) -> None:
    with pytest.raises(InvalidMessage) as info:
        classify({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    assert info.value.code == ErrorCode.INVALID_REQUEST
    # the message says what the id was, in JSON's words
    assert str(info.value).endswith(f"must be a string or an integer, not {kind}")
    assert info.value.reply_id is None  # an unreadable id is not echoed


@pytest.mark.req("basic/index#4")
def test_ids_are_never_coerced() -> None:
    a = classify({"jsonrpc": "2.0", "id": "1", "method": "ping"})
    b = classify({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert isinstance(a, RawRequest) and isinstance(b, RawRequest)
    assert a.id == "1" and type(a.id) is str
    assert b.id == 1 and type(b.id) is int
    assert a.id != b.id


@pytest.mark.req("basic/index#14")
def test_a_message_without_id_is_a_notification() -> None:
    raw = classify({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert isinstance(raw, RawNotification)
    assert raw.params is None


def test_params_must_be_an_object() -> None:
    with pytest.raises(InvalidMessage) as info:
        classify({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1, 2]})
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert info.value.reply_id == 3 and info.value.replyable
    with pytest.raises(InvalidMessage) as info:
        classify({"jsonrpc": "2.0", "method": "notifications/progress", "params": "x"})
    assert not info.value.replyable  # notifications are never answered


@pytest.mark.req("basic/index#4", "basic/index#5")
@pytest.mark.parametrize("bad_id", [None, 1.5, True])
def test_an_unusable_id_is_reported_before_bad_params(bad_id: object) -> None:
    with pytest.raises(InvalidMessage) as info:
        classify({"jsonrpc": "2.0", "id": bad_id, "method": "tools/call", "params": [1]})
    assert info.value.code == ErrorCode.INVALID_REQUEST and info.value.reply_id is None


@pytest.mark.req("basic/index#7", "basic/index#8", "basic/index#9")
def test_result_responses_need_an_id_and_an_object_result() -> None:
    raw = classify({"jsonrpc": "2.0", "id": "a", "result": {}})
    assert raw == RawResult("a", {})
    for bad in ({"jsonrpc": "2.0", "result": {}}, {"jsonrpc": "2.0", "id": 1, "result": 5}):
        with pytest.raises(InvalidMessage) as info:
            classify(bad)
        assert not info.value.replyable  # a bad response is never answered


@pytest.mark.req("basic/index#10", "basic/index#11", "basic/index#12")
def test_error_responses() -> None:
    raw = classify({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "nope", "data": [1]}})
    assert raw == RawError(7, -32601, "nope", [1], True)
    # an unreadable id: absent (2025-11-25) or null (JSON-RPC 2.0)
    assert classify({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}}) == RawError(
        None, -32700, "x", None, False
    )
    assert isinstance(classify({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "x"}}), RawError)
    for err in ({"code": "1", "message": "x"}, {"code": 1.5, "message": "x"}, {"code": 1}, {"message": "x"}, "boom"):
        with pytest.raises(InvalidMessage):
            classify({"jsonrpc": "2.0", "id": 1, "error": err})


@pytest.mark.req("2025-06-18:basic/index#8", "2025-06-18:basic/index#9")
def test_neither_request_nor_response() -> None:
    with pytest.raises(InvalidMessage) as info:
        classify({"jsonrpc": "2.0", "id": 4})
    assert info.value.code == ErrorCode.INVALID_REQUEST and info.value.reply_id == 4
    with pytest.raises(InvalidMessage):
        classify({"jsonrpc": "2.0", "id": 4, "method": "ping", "result": {}})
    with pytest.raises(InvalidMessage):
        classify({"jsonrpc": "2.0", "id": 4, "result": {}, "error": {"code": 1, "message": "m"}})


@pytest.mark.req("basic/transports#1")
def test_dumps_is_compact_utf8_without_newlines() -> None:
    data = dumps({"text": "line1\nline2\r\u2028é\U0001f40d", "n": [1, 2]})
    assert b"\n" not in data and b"\r" not in data
    assert b" " not in data
    assert "é\U0001f40d".encode("utf-8") in data  # UTF-8, not \u escapes nor another encoding
    assert json.loads(data) == {"text": "line1\nline2\r\u2028é\U0001f40d", "n": [1, 2]}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_classify_never_crashes(value: object) -> None:
    try:
        raw = classify(value)
    except InvalidMessage as e:
        assert e.code in (ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_PARAMS)
    else:
        assert isinstance(raw, RawRequest | RawNotification | RawResult | RawError)


@given(st.binary(max_size=64))
def test_loads_never_crashes(data: bytes) -> None:
    try:
        loads(data)
    except InvalidMessage as e:
        assert e.code == ErrorCode.PARSE_ERROR


# dumps and loads take shortcuts through json's C functions (bench W1, W4); the
# generic JSONEncoder / JSONDecoder calls they replace are the reference


def _reference_dumps(value: object) -> bytes:
    text = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode(value).encode("ascii")


def _reference_loads(data: bytes | str) -> object:
    from mcp_ref.basic.jsonrpc import _decoder

    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return _decoder.decode(text)


def _outcome(fn: object, value: object) -> object:
    try:
        return fn(value)  # type: ignore[operator]
    except Exception as e:
        return type(e), str(e)


@given(json_values)
def test_dumps_writes_what_the_generic_encoder_writes(value: object) -> None:
    assert _outcome(dumps, value) == _outcome(_reference_dumps, value)


def test_dumps_refuses_what_the_generic_encoder_refuses() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps({"a": cycle})
    with pytest.raises(ValueError):
        dumps({"a": [float("nan")]})
    with pytest.raises(TypeError):
        dumps({"a": {1, 2}})
    deep: object = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        dumps(deep)


padding = st.sampled_from(["", " ", "\n", "\t\r ", "x", "]", '"', "{}", " 1"])


@given(json_values, padding, padding)
def test_loads_reads_what_the_generic_decoder_reads(value: object, before: str, after: str) -> None:
    for text in (before + json.dumps(value) + after, before + json.dumps(value, ensure_ascii=False) + after):
        for data in (text, text.encode("utf-8", "surrogatepass")):
            try:
                expected = _reference_loads(data)
            except (UnicodeDecodeError, ValueError) as e:
                with pytest.raises(InvalidMessage) as info:
                    loads(data)
                assert str(e) in info.value.message or info.value.message.endswith("...")
            else:
                assert loads(data) == expected


@pytest.mark.parametrize("text", ["NaN", '{"a": Infinity}', "-Infinity", '{"v": 1e400}', "-1e999", "[1.5e308, 2e308]"])
def test_non_json_constants_are_parse_errors(text: str) -> None:
    # a number too large for a double would become infinity, which no reply could carry
    with pytest.raises(InvalidMessage) as info:
        loads(text)
    assert info.value.code == ErrorCode.PARSE_ERROR


def test_large_but_finite_numbers_are_kept() -> None:
    assert loads("[1.5e308, -2.5e-320, 100000000000000000000000000000]") == [1.5e308, -2.5e-320, 10**29]


@pytest.mark.req("basic/index#3")
def test_dumps_escapes_lone_surrogates_instead_of_failing() -> None:
    # JSON text may carry "\ud800"; loads accepts it, so replies must be able to echo it
    value = loads(r'{"s":"a\ud800b","t":"é"}')
    assert value["s"] == "a\ud800b"
    data = dumps(value)
    text = data.decode("utf-8")  # valid UTF-8 ...
    assert json.loads(text) == value  # ... and valid JSON saying exactly what was received
    assert b"\n" not in data and b" " not in data


def spec_error_codes() -> tuple[dict[str, int], dict[int, str]]:
    """The error codes the spec names, in every revision we speak: schema.ts
    constants (name -> code) and the codes of the prose's error examples
    (code -> the example's message)."""
    constants: dict[str, int] = {}
    examples: dict[int, str] = {}
    for revision in REVISIONS:
        root = spec_path(revision)
        ts = (root / "schema.ts").read_text()
        constants.update({name: int(code) for name, code in re.findall(r"export const (\w+) = (-\d+);", ts)})
        for page in root.rglob("*.mdx"):
            for code, message in re.findall(r'"code":\s*(-\d+),[^"]*"message":\s*"([^"]*)"', page.read_text()):
                examples.setdefault(int(code), message)
    return constants, examples


@pytest.mark.req("basic/index#12")
def test_error_codes_are_exactly_the_ones_the_spec_names() -> None:
    constants, examples = spec_error_codes()
    # the schema's named constants, under the same names
    for name, code in constants.items():
        assert ErrorCode[name] == code
    # and nothing the spec does not use: every other member is a code of its examples
    assert {e.value for e in ErrorCode} == set(constants.values()) | set(examples)
    # the two that only the prose names, with what they mean there
    assert "not found" in examples[ErrorCode.RESOURCE_NOT_FOUND].lower()
    assert "rejected" in examples[ErrorCode.USER_REJECTED].lower()
