"""basic/patterns/mrtr (2026-07-28), sans-IO: the sealed requestState and the retry's fields."""

import base64

import pytest

from mcp_ref.basic.patterns import mrtr
from mcp_ref.errors import ProtocolError

KEY = b"k" * 32


def sealer(*keys: bytes, ttl: float = 60) -> mrtr.StateSealer:
    return mrtr.StateSealer(keys or (KEY,), ttl=ttl)


def test_a_sealed_state_opens_with_the_same_key_before_it_expires() -> None:
    token = sealer().seal({"a": {"x": 1}, "m": "tools/call"}, now=1000)
    payload = sealer().open(token, now=1059)
    assert payload["a"] == {"x": 1} and payload["m"] == "tools/call" and payload["exp"] == 1060


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#3")
def test_a_state_hides_its_content() -> None:
    token = sealer().seal({"s": {"secret": "hunter2"}}, now=0)
    blob = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    assert b"hunter2" not in blob and b"secret" not in blob


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#11", "2026-07-28:basic/patterns/mrtr#12")
@pytest.mark.parametrize(
    "tamper",
    [
        lambda t: t + "-TAMPERED",
        # (the second-to-last character: the last one may hold only padding bits)
        lambda t: t[:-2] + ("A" if t[-2] != "A" else "B") + t[-1],
        lambda t: t[:10] + ("A" if t[10] != "A" else "B") + t[11:],
        lambda t: t[:20],
        lambda t: "",
        lambda t: "!!!not base64!!!",
    ],
)
def test_a_tampered_state_is_rejected(tamper: object) -> None:
    token = sealer().seal({"a": {}}, now=0)
    with pytest.raises(mrtr.StateRejected) as caught:
        sealer().open(tamper(token), now=1)  # type: ignore[operator]
    assert caught.value.code == -32602


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#12")
def test_a_state_sealed_with_another_key_is_rejected() -> None:
    token = sealer(b"o" * 32).seal({}, now=0)
    with pytest.raises(mrtr.StateRejected, match="integrity"):
        sealer().open(token, now=0)


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#14")
def test_an_expired_state_is_rejected() -> None:
    token = sealer(ttl=30).seal({}, now=100)
    sealer(ttl=30).open(token, now=129)
    with pytest.raises(mrtr.StateRejected, match="expired"):
        sealer(ttl=30).open(token, now=130)


def test_rotation_old_keys_still_open_new_states_use_the_first() -> None:
    old, new = b"o" * 32, b"n" * 32
    before = sealer(old).seal({"x": 1}, now=0)
    rotated = sealer(new, old)
    assert rotated.open(before, now=1)["x"] == 1
    after = rotated.seal({"x": 2}, now=1)
    assert sealer(new).open(after, now=2)["x"] == 2
    with pytest.raises(mrtr.StateRejected):
        sealer(old).open(after, now=2)


def test_any_replica_with_the_key_opens_it_and_the_environment_names_the_keys() -> None:
    token = mrtr.StateSealer.from_environment({mrtr.STATE_KEY_ENV: "a" * 20 + ", " + "b" * 20}).seal({}, now=0)
    assert mrtr.StateSealer(["a" * 20]).open(token, now=0)["exp"] == 600
    with pytest.raises(ValueError, match="16 bytes"):
        mrtr.StateSealer([b"short"])
    # no key configured: a random one, good in this process only
    lone = mrtr.StateSealer.from_environment({})
    with pytest.raises(mrtr.StateRejected):
        mrtr.StateSealer.from_environment({}).open(lone.seal({}, now=0), now=0)


def test_two_seals_of_the_same_payload_differ() -> None:
    s = sealer()
    assert s.seal({"a": 1}, now=0) != s.seal({"a": 1}, now=0)


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#14")
def test_the_digest_names_the_request_not_its_rounds() -> None:
    base = {"name": "t", "arguments": {"x": 1}}
    d = mrtr.salient_digest("tools/call", base)
    assert d == mrtr.salient_digest(
        "tools/call", {**base, "_meta": {"a": 1}, "requestState": "s", "inputResponses": {}}
    )
    assert d != mrtr.salient_digest("tools/call", {"name": "t", "arguments": {"x": 2}})
    assert d != mrtr.salient_digest("prompts/get", base)
    assert mrtr.salient_digest("resources/read", {"uri": "a"}) != mrtr.salient_digest("resources/read", {"uri": "b"})


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#8")
def test_default_keys_count_per_kind() -> None:
    assert [mrtr.default_key("elicitation/create", n) for n in (1, 2)] == ["elicitation-1", "elicitation-2"]
    assert mrtr.default_key("sampling/createMessage", 1) == "sampling-1"
    assert mrtr.default_key("roots/list", 1) == "roots-1"


@pytest.mark.req("2026-07-28:basic/patterns/mrtr#28", "2026-07-28:basic/patterns/mrtr#29")
@pytest.mark.parametrize(
    "raw",
    [{"inputResponses": None}, {"inputResponses": []}, {"inputResponses": {"k": 3}}, {"requestState": 5}],
)
def test_malformed_retry_fields_are_invalid_params(raw: dict[str, object]) -> None:
    with pytest.raises(ProtocolError) as caught:
        mrtr.read_retry_fields(raw)
    assert caught.value.code == -32602


def test_retry_fields_are_read() -> None:
    assert mrtr.read_retry_fields({}) == ({}, None)
    assert mrtr.read_retry_fields({"inputResponses": {"k": {"action": "cancel"}}, "requestState": "s"}) == (
        {"k": {"action": "cancel"}},
        "s",
    )
