"""The engine's events share the model's repr, eq and hash; they behave as the ones attrs would generate."""

import functools

import attrs
import pytest

from mcp_ref import events
from mcp_ref.errors import ProtocolError
from mcp_ref.events import (
    CancellationReceived,
    Event,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
)


def _event_classes() -> list[type]:
    return [v for v in vars(events).values() if isinstance(v, type) and issubclass(v, Event)]


@functools.cache
def _generated(cls: type) -> type:
    """A class with the fields of ``cls`` where attrs generates repr, eq and hash itself."""
    return attrs.make_class(cls.__name__, {a.name: attrs.field() for a in attrs.fields(cls)}, frozen=True)


def _attrs_twin(value: object) -> object:
    cls = type(value)
    return _generated(cls)(**{a.name: getattr(value, a.name) for a in attrs.fields(cls)})


def test_every_event_has_a_field_repr_and_compares_and_hashes_by_value() -> None:
    classes = _event_classes()
    assert len(classes) == len(events.__all__)
    assert [c.__name__ for c in classes if c.__repr__ is object.__repr__] == []
    assert [c.__name__ for c in classes if c.__eq__ is object.__eq__ or c.__hash__ is object.__hash__] == []


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (CancellationReceived(request_id=1, reason="r"), CancellationReceived(request_id=1, reason="r")),
        (CancellationReceived(request_id=1, reason="r"), CancellationReceived(request_id="1", reason="r")),
        (
            ProgressReceived(request_id=1, progress_token="t", progress=0.5, total=None, message=None),
            ProgressReceived(request_id=1, progress_token="t", progress=0.5, total=None, message=None),
        ),
        (
            NotificationReceived(method="notifications/initialized", params=None, message=None),
            NotificationReceived(method="notifications/initialized", params={"a": 1}, message=None),
        ),
    ],
)
def test_repr_eq_and_hash_agree_with_what_attrs_generates(a: object, b: object) -> None:
    twin_a, twin_b = _attrs_twin(a), _attrs_twin(b)
    assert repr(a) == repr(twin_a)
    assert (a == b) is (twin_a == twin_b)
    assert (a != b) is (twin_a != twin_b)
    for value, twin in ((a, twin_a), (b, twin_b)):
        # a dict field: unhashable with attrs too
        assert _hashable(value) is _hashable(twin)
    if a == b and _hashable(a):
        assert hash(a) == hash(b)


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def test_events_of_different_classes_are_never_equal() -> None:
    request = RequestReceived(id=1, method="ping", params=None, message=None)
    assert request != NotificationReceived(method="ping", params=None, message=None)
    assert request == RequestReceived(id=1, method="ping", params=None, message=None)
    assert request != RequestReceived(id=1, method="ping", params=None, message=None, progress_token=1)
    assert (request == object()) is False
    assert len({request, RequestReceived(id=1, method="ping", params=None, message=None)}) == 1
    rejected = MessageRejected(error=ProtocolError("bad"), reply=None, requirement="basic/index#5")
    assert repr(rejected) == repr(_attrs_twin(rejected))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        rejected.reply = b"other"  # type: ignore[misc]
