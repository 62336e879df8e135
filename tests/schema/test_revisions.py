"""The revision constants and the two marks that bound a part of the model in time:
``since`` (first in a revision) and ``until`` (removed in a revision), honoured in
both directions when encoding for a revision, never when decoding.

Probe classes defined here exercise the converter's rules on their own; the real
classes check that the marks sit where the schemas say (2026-07-28 removed
``ping``, core tasks, ``Tool.execution``; 2025-03-26 added audio and tool
annotations).
"""

from typing import Any, Literal

import attrs
import pytest

from mcp_ref.basic import lifecycle as lc
from mcp_ref.basic.lifecycle import Role
from mcp_ref.connection import Connection
from mcp_ref.errors import LocalProtocolError
from mcp_ref.schema import decode, encode, exists_in
from mcp_ref.schema._base import (
    LATEST_LEGACY_REVISION,
    LATEST_PROTOCOL_VERSION,
    LEGACY_REVISIONS,
    MEANINGFUL,
    MODERN_REVISIONS,
    NEW_IN_2026_07_28,
    REMOVED_IN_2026_07_28,
    REVISIONS,
    fields_until,
    install_model_methods,
    is_modern,
    removed_in,
    required_from,
    since,
    since_of,
    until,
    until_of,
)
from mcp_ref.schema._converter import field_writer, wire_fields
from mcp_ref.schema.content import AudioContent, TextContent
from mcp_ref.schema.lifecycle import ServerCapabilities, ServerTasksCapability
from mcp_ref.schema.ping import PingRequest
from mcp_ref.schema.progress import ProgressNotificationParams
from mcp_ref.schema.tasks import TaskMetadata
from mcp_ref.schema.tools import CallToolRequestParams, Tool, ToolAnnotations, ToolExecution

OBJECT = {"type": "object"}
REQUEST_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


# -- probes: one class per rule ---------------------------------------------------


@attrs.frozen(kw_only=True)
class Probe:
    """A class of every revision, with one field of each kind of mark."""

    kind: Literal["probe"] = "probe"
    kept: str
    added: str | None = attrs.field(default=None, metadata=NEW_IN_2026_07_28)
    dropped: str | None = attrs.field(default=None, metadata=REMOVED_IN_2026_07_28)
    dropped_early: str | None = attrs.field(default=None, metadata=removed_in("2025-06-18"))
    changes_meaning: str | None = attrs.field(default=None, metadata={**REMOVED_IN_2026_07_28, **MEANINGFUL})
    needed_later: str | None = attrs.field(default=None, metadata=required_from("2026-07-28"))


@attrs.frozen(kw_only=True)
@until("2025-11-25")
class Removed:
    value: int


@attrs.frozen(kw_only=True)
@since("2025-06-18")
@until("2026-07-28")
class Window:
    value: int


@attrs.frozen(kw_only=True)
class Base:
    a: int
    b: int | None = None


@attrs.frozen(kw_only=True)
@fields_until("2026-07-28", "b")
class Child(Base):
    c: int | None = None


@attrs.frozen(kw_only=True)
class Grandchild(Child):
    pass


install_model_methods(globals())


# -- the constants ------------------------------------------------------------------


def test_revisions_are_oldest_first_and_split_into_two_eras() -> None:
    assert REVISIONS == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
    assert list(REVISIONS) == sorted(REVISIONS)
    assert LEGACY_REVISIONS + MODERN_REVISIONS == REVISIONS
    assert MODERN_REVISIONS == ("2026-07-28",)
    assert [is_modern(r) for r in REVISIONS] == [False, False, False, False, True]


def test_latest_is_the_newest_revision_and_initialize_offers_the_newest_legacy_one() -> None:
    assert LATEST_PROTOCOL_VERSION == REVISIONS[-1] == "2026-07-28"
    assert LATEST_LEGACY_REVISION == LEGACY_REVISIONS[-1] == "2025-11-25"
    # the session engine offers and accepts legacy revisions only
    assert lc.SUPPORTED_VERSIONS[0] == LATEST_LEGACY_REVISION
    assert not set(lc.SUPPORTED_VERSIONS) & set(MODERN_REVISIONS)
    assert lc.negotiate_version("2026-07-28") == LATEST_LEGACY_REVISION


def test_a_session_engine_cannot_be_configured_for_a_modern_revision() -> None:
    with pytest.raises(ValueError, match="supported_versions"):
        Connection(Role.SERVER, supported_versions=("2026-07-28",))
    # before negotiation a session encodes for the newest legacy revision, not the newest one
    assert Connection(Role.CLIENT).revision == LATEST_LEGACY_REVISION


def test_encode_defaults_to_the_newest_revision() -> None:
    with pytest.raises(LocalProtocolError, match=r"PingRequest was removed in protocol revision 2026-07-28"):
        encode(PingRequest(id=1))
    assert encode(PingRequest(id=1), LATEST_LEGACY_REVISION) == {"jsonrpc": "2.0", "method": "ping", "id": 1}


# -- fields --------------------------------------------------------------------------


def test_a_field_is_written_only_in_the_revisions_that_have_it() -> None:
    probe = Probe(kept="k", added="a", dropped="d", dropped_early="e", needed_later="n")
    wire = {r: encode(probe, r) for r in REVISIONS}
    assert wire["2024-11-05"] == {"kind": "probe", "kept": "k", "dropped": "d", "droppedEarly": "e", "neededLater": "n"}
    assert wire["2025-03-26"] == wire["2024-11-05"]
    # removed in 2025-06-18: not written from then on, in either era
    assert wire["2025-06-18"] == {"kind": "probe", "kept": "k", "dropped": "d", "neededLater": "n"}
    assert wire["2025-11-25"] == wire["2025-06-18"]
    # 2026-07-28 adds one field and removes another
    assert wire["2026-07-28"] == {"kind": "probe", "kept": "k", "added": "a", "neededLater": "n"}


def test_a_removed_field_that_changes_the_meaning_is_refused_not_dropped() -> None:
    probe = Probe(kept="k", changes_meaning="x", needed_later="n")
    assert encode(probe, "2025-11-25")["changesMeaning"] == "x"
    with pytest.raises(
        LocalProtocolError, match=r"Probe\.changesMeaning does not exist in protocol revision 2026-07-28"
    ):
        encode(probe, "2026-07-28")
    assert "changesMeaning" not in encode(attrs.evolve(probe, changes_meaning=None), "2026-07-28")


def test_a_field_required_from_a_revision_on_is_refused_empty_there_only() -> None:
    probe = Probe(kept="k")
    assert encode(probe, "2025-11-25") == {"kind": "probe", "kept": "k"}
    with pytest.raises(LocalProtocolError, match=r"Probe\.neededLater is required in protocol revision 2026-07-28"):
        encode(probe, "2026-07-28")


def test_decoding_takes_the_fields_of_every_revision() -> None:
    old = {"kind": "probe", "kept": "k", "dropped": "d", "droppedEarly": "e"}
    new = {"kind": "probe", "kept": "k", "added": "a", "neededLater": "n"}
    assert decode(old, Probe) == Probe(kept="k", dropped="d", dropped_early="e")
    assert decode(new, Probe) == Probe(kept="k", added="a", needed_later="n")


def test_the_wire_layout_records_each_window() -> None:
    fields = {f.name: f for f in wire_fields(Probe)}
    assert (fields["kept"].since, fields["kept"].until) == ("2024-11-05", None)
    assert (fields["added"].since, fields["added"].until) == ("2026-07-28", None)
    assert (fields["dropped"].since, fields["dropped"].until) == ("2024-11-05", "2026-07-28")
    assert [r for r in REVISIONS if fields["dropped_early"].exists_in(r)] == ["2024-11-05", "2025-03-26"]
    needed = fields["needed_later"]
    assert [needed.required_in(r) for r in REVISIONS] == [False, False, False, False, True]
    assert not needed.required  # decoding takes it absent


def test_an_inherited_field_can_end_in_a_subclass_and_its_subclasses() -> None:
    assert encode(Base(a=1, b=2), "2026-07-28") == {"a": 1, "b": 2}
    assert encode(Child(a=1, b=2, c=3), "2025-11-25") == {"a": 1, "b": 2, "c": 3}
    assert encode(Child(a=1, b=2, c=3), "2026-07-28") == {"a": 1, "c": 3}
    assert encode(Grandchild(a=1, b=2), "2026-07-28") == {"a": 1}
    assert decode({"a": 1, "b": 2}, Child) == Child(a=1, b=2)


# -- classes -------------------------------------------------------------------------


def test_a_class_is_encoded_only_in_its_window() -> None:
    assert since_of(Window) == "2025-06-18" and until_of(Window) == "2026-07-28"
    assert [r for r in REVISIONS if exists_in(Window, r)] == ["2025-06-18", "2025-11-25"]
    assert encode(Window(value=1), "2025-06-18") == {"value": 1}
    with pytest.raises(LocalProtocolError, match=r"Window does not exist in protocol revision 2025-03-26$"):
        encode(Window(value=1), "2025-03-26")
    with pytest.raises(LocalProtocolError, match=r"Window was removed in protocol revision 2026-07-28"):
        encode(Window(value=1), "2026-07-28")
    with pytest.raises(LocalProtocolError, match=r"Removed does not exist in protocol revision 2026-07-28 \(removed"):
        encode(Removed(value=1), "2026-07-28")
    assert decode({"value": 1}, Window) == Window(value=1)  # decoding is the same in every revision


def test_marks_are_read_from_the_class_itself() -> None:
    # a subclass of a removed class is not removed with it (CallToolRequestParams
    # extends 2025-11-25's TaskAugmentedRequestParams, gone in 2026-07-28)
    @attrs.frozen(kw_only=True)
    class After(Removed):
        pass

    assert until_of(After) is None and exists_in(After, "2026-07-28")


def test_the_engine_fast_path_is_never_used_for_a_class_with_a_removed_field() -> None:
    @attrs.frozen(kw_only=True)
    class Envelope:
        jsonrpc: Literal["2.0"] = "2.0"
        id: int
        body: dict[str, Any] | None = None
        gone: int | None = attrs.field(default=None, metadata=REMOVED_IN_2026_07_28)

    assert field_writer(Envelope, "body", "2025-11-25") is not None
    assert field_writer(Envelope, "body", "2026-07-28") is None
    assert field_writer(Window, "value", "2026-07-28") is None


def test_marks_name_known_revisions_only() -> None:
    for mark in (since, until, removed_in, required_from, lambda r: fields_until(r, "x")):
        with pytest.raises(ValueError, match="unknown revision"):
            mark("2099-01-01")


# -- the marks on the model ------------------------------------------------------------


def test_what_2026_07_28_removed_is_not_sent_in_it() -> None:
    call = CallToolRequestParams(name="t", task=TaskMetadata(ttl=5), meta=REQUEST_META)
    assert encode(call, "2025-11-25")["task"] == {"ttl": 5}
    with pytest.raises(LocalProtocolError, match=r"CallToolRequestParams\.task does not exist"):
        encode(call, "2026-07-28")
    tool = Tool(name="t", input_schema=OBJECT, execution=ToolExecution(task_support="optional"))
    assert encode(tool, "2025-11-25")["execution"] == {"taskSupport": "optional"}
    assert "execution" not in encode(tool, "2026-07-28")
    caps = ServerCapabilities(tools=None, tasks=ServerTasksCapability())
    assert encode(caps, "2025-11-25") == {"tasks": {}}
    assert encode(caps, "2026-07-28") == {}


def test_what_2025_03_26_added_is_not_sent_to_a_2024_11_05_peer() -> None:
    assert not exists_in(AudioContent, "2024-11-05") and exists_in(AudioContent, "2025-03-26")
    assert not exists_in(ToolAnnotations, "2024-11-05")
    tool = Tool(name="t", input_schema=OBJECT, annotations=ToolAnnotations(read_only_hint=True))
    assert "annotations" not in encode(tool, "2024-11-05")
    progress = ProgressNotificationParams(progress_token=1, progress=1, message="half")
    assert encode(progress, "2024-11-05") == {"progressToken": 1, "progress": 1}
    assert encode(ServerCapabilities(completions={}), "2024-11-05") == {}
    assert encode(TextContent(text="a"), "2024-11-05") == {"type": "text", "text": "a"}
