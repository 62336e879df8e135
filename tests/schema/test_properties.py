"""Generated instances of every class encode to JSON that the revision's own
schema.json accepts, and decode back to an equal instance.

For each revision and each definition of its schema.json, instances of our
counterpart are generated from the attrs annotations as that revision sees
them (``_strategies.values``), encoded for that revision, validated with
jsonschema against the definition (Draft 2020-12 for 2025-11-25's ``$defs``,
draft-07 for the older ``definitions``), and decoded again.
"""

import functools
import re
from typing import Any

import attrs
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_ref.errors import LocalProtocolError
from mcp_ref.schema import decode
from mcp_ref.schema.cancellation import CancelledNotificationParams
from mcp_ref.schema.elicitation import LegacyTitledEnumSchema, UntitledSingleSelectEnumSchema
from mcp_ref.schema.sampling import SamplingMessage
from mcp_ref.schema.tools import Tool

from ._spec import DOCUMENTED, REVISIONS, defs, encode, our_object, patched_document
from ._strategies import EVERY, values

#: unions decoded by context, never by trying members: a result is decoded
#: with the result type of the request it answers (any two Result subclasses
#: with only optional fields look alike)
DECODED_BY_CONTEXT = {"ClientResult", "ServerResult", "EmptyResult"}


@functools.cache
def validator(revision: str, name: str) -> Any:
    doc = patched_document(revision)  # the documented differences applied
    return _validator(doc, name)


def _validator(doc: dict[str, Any], name: str) -> Any:
    # 2025-11-25 on: Draft 2020-12 and $defs; before: draft-07 and definitions
    if "$defs" in doc:
        return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": doc["$defs"]})
    return jsonschema.Draft7Validator({"$ref": f"#/definitions/{name}", "definitions": doc["definitions"]})


def cases() -> list[Any]:
    out: list[Any] = []
    for revision in REVISIONS:
        try:
            names = list(defs(revision))
        except pytest.skip.Exception as absent:
            return [pytest.param(None, None, marks=pytest.mark.skip(reason=absent.msg))]
        out.extend(pytest.param(revision, name, id=f"{revision}-{name}") for name in names)
    return out


@pytest.mark.parametrize(("revision", "name"), cases())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_encoded_instances_validate_and_round_trip(revision: str, name: str, data: st.DataObject) -> None:
    ours = our_object(revision, name)
    value = data.draw(values(ours, revision), label=name)
    wire = encode(value, revision, as_type=ours)
    errors = sorted(validator(revision, name).iter_errors(wire), key=lambda e: list(e.absolute_path))
    assert not errors, f"{name} ({revision}) invalid at {list(errors[0].absolute_path)}: {errors[0].message}"
    if name in DECODED_BY_CONTEXT:
        assert decode(wire, type(value)) == value
    else:
        assert decode(wire, ours) == value


@pytest.mark.parametrize("revision", REVISIONS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_latest_encoding_round_trips_anything_generated(revision: str, data: st.DataObject) -> None:
    # Whatever an older revision can hold, the latest encoding keeps exactly.
    tp = data.draw(st.sampled_from([SamplingMessage, Tool, LegacyTitledEnumSchema]))
    value = data.draw(values(tp, revision))
    assert decode(encode(value), tp) == value


def test_an_untitled_legacy_enum_reads_as_untitled_single_select() -> None:
    # The one ambiguity of PrimitiveSchemaDefinition (spec_notes/schema.md):
    # without enumNames the two shapes are the same JSON.
    from mcp_ref.schema.elicitation import PrimitiveSchemaDefinition

    wire = encode(LegacyTitledEnumSchema(enum=["a", "b"]))
    assert decode(wire, PrimitiveSchemaDefinition) == UntitledSingleSelectEnumSchema(enum=["a", "b"])
    assert encode(decode(wire, PrimitiveSchemaDefinition)) == wire


def test_old_revisions_refuse_what_they_cannot_express() -> None:
    from mcp_ref.schema.content import TextContent, ToolUseContent

    listed = SamplingMessage(role="user", content=[TextContent(text="a")])
    with pytest.raises(
        LocalProtocolError, match=r"SamplingMessage.content: .* takes TextContent or ImageContent or Audio"
    ):
        encode(listed, "2025-06-18")
    assert encode(listed)["content"] == [{"type": "text", "text": "a"}]
    with pytest.raises(LocalProtocolError, match="ToolUseContent does not exist in protocol revision 2025-06-18"):
        encode(ToolUseContent(id="1", name="t", input={}), "2025-06-18")
    cancel = CancelledNotificationParams(reason="no id")  # fine from 2025-11-25 on
    assert encode(cancel) == {"reason": "no id"}
    with pytest.raises(LocalProtocolError, match=r"CancelledNotificationParams\.request_id: None"):
        encode(cancel, "2025-03-26")


def test_newer_fields_are_left_out_for_older_revisions() -> None:
    from mcp_ref.schema.lifecycle import Icon, Implementation

    impl = Implementation(name="n", version="1", title="T", icons=[Icon(src="data:,")], website_url="https://x.test")
    assert encode(impl, "2025-03-26") == {"name": "n", "version": "1"}
    assert encode(impl, "2025-06-18") == {"name": "n", "version": "1", "title": "T"}
    assert encode(impl) == {
        "name": "n",
        "version": "1",
        "title": "T",
        "icons": [{"src": "data:,"}],
        "websiteUrl": "https://x.test",
    }
    assert attrs.evolve(impl, icons=None) != impl


# -- nothing newer leaks into an older revision ---------------------------------------------

#: members every message object may carry though an older schema spells them
#: only on the envelope or base type
_ALWAYS_ALLOWED = {"_meta": {}, "jsonrpc": {}, "id": {}}
_NAMED_SCHEMAS = {"properties", "patternProperties", "definitions", "$defs"}


def _closed(node: Any, allowed: dict[str, Any] = _ALWAYS_ALLOWED) -> Any:
    """A copy of a schema in which every object lists all it may hold: no
    additionalProperties means none (open index signatures stay open; the
    ``x-`` keys our generated open types carry are allowed)."""
    if isinstance(node, list):
        return [_closed(n, allowed) for n in node]
    if not isinstance(node, dict):
        return node
    out = {
        # these keywords hold a mapping of names to schemas, not a schema (a _meta object
        # is open: any key of the _meta grammar); the parts of an allOf each list only
        # some members, so they stay open (see _merged for the allOf of definitions)
        k: (
            {name: sub if name == "_meta" else _closed(sub, allowed) for name, sub in v.items()}
            if k in _NAMED_SCHEMAS
            else v
            if k == "allOf"
            else _closed(v, allowed)
        )
        for k, v in node.items()
    }
    if "properties" in out and "additionalProperties" not in out:
        out["properties"] = {**allowed, **out["properties"]}
        out["patternProperties"] = {"^x-": {}}
        out["additionalProperties"] = False
    return out


@functools.cache
def strict_validator(revision: str, name: str) -> Any:
    original = _merged(patched_document(revision))
    # 2026-07-28's schema spells _meta, jsonrpc and id wherever they may be (its
    # InputRequests carry no envelope, its InputResponses no _meta): nothing extra
    doc = _closed(original, {} if revision >= "2026-07-28" else _ALWAYS_ALLOWED)
    for name_ in (
        "RequestMetaObject",
        "NotificationMetaObject",
        "ResultMetaObject",
        "SubscriptionsListenResultMetaObject",
    ):
        if name_ in _defs(original):  # (a _meta object is open: any key of the grammar)
            _defs(doc)[name_] = _defs(original)[name_]
    for (rev, definition, member), _why in DOCUMENTED.items():
        # where our model documentedly differs (opaque JSON Schemas, untyped params), the schema stays as it was
        if rev == revision and member in _defs(original)[definition].get("properties", {}):
            _defs(doc)[definition]["properties"][member] = _defs(original)[definition]["properties"][member]
    return _validator(doc, name)


def _merged(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with each definition that is an allOf of object schemas (``Result & Task``)
    written as one object schema holding every member, so that closing it closes the
    whole and not each part."""
    found = _defs(doc)

    def parts(node: dict[str, Any]) -> tuple[dict[str, Any], set[str]] | None:
        if "$ref" in node:
            node = found[node["$ref"].rsplit("/", 1)[-1]]
        if "allOf" in node:
            props: dict[str, Any] = {}
            req: set[str] = set()
            for part in node["allOf"]:
                got = parts(part)
                if got is None:
                    return None
                props.update(got[0])
                req |= got[1]
            return props, req
        if node.get("type") != "object":
            return None
        return dict(node.get("properties", {})), set(node.get("required", ()))

    for name, node in list(found.items()):
        if "allOf" in node:
            got = parts(node)
            if got is not None:
                merged = {"type": "object", "properties": got[0], "required": sorted(got[1])}
                if any(
                    "additionalProperties" in found.get(p.get("$ref", "#/x").rsplit("/", 1)[-1], {})
                    for p in node["allOf"]
                ):
                    merged["additionalProperties"] = {}  # (Result & ...: open like Result)
                found[name] = merged
    return doc


def _defs(doc: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = doc.get("$defs") or doc["definitions"]
    return found


@pytest.mark.req("basic/lifecycle#14", "2026-07-28:schema#15")
@pytest.mark.parametrize(("revision", "name"), cases())
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_instances_of_every_revision_encode_without_members_the_revision_lacks(
    revision: str, name: str, data: st.DataObject
) -> None:
    # instances using every field and class of every revision (2026-07-28's and the
    # ones it removed), written for one revision: either refused loudly or free of
    # any member that revision does not define, and with every member it requires
    ours = our_object(revision, name)
    value = data.draw(values(ours, EVERY), label=name)
    try:
        wire = encode(value, revision, as_type=ours)
    except LocalProtocolError:
        return
    errors = sorted(strict_validator(revision, name).iter_errors(wire), key=lambda e: list(e.absolute_path))
    assert not errors, f"{name} ({revision}) at {list(errors[0].absolute_path)}: {errors[0].message}"


def test_fields_that_change_a_requests_meaning_are_refused_not_dropped() -> None:
    from mcp_ref.schema.content import TextContent
    from mcp_ref.schema.sampling import CreateMessageRequestParams, ToolChoice
    from mcp_ref.schema.tasks import TaskMetadata
    from mcp_ref.schema.tools import CallToolRequestParams

    call = CallToolRequestParams(name="t", task=TaskMetadata(ttl=5))
    assert encode(call)["task"] == {"ttl": 5}
    message = SamplingMessage(role="user", content=TextContent(text="hi"))
    tool = Tool(name="t", input_schema={"type": "object"})
    sampling = [
        CreateMessageRequestParams(messages=[message], max_tokens=5, tools=[tool]),
        CreateMessageRequestParams(messages=[message], max_tokens=5, tool_choice=ToolChoice(mode="auto")),
    ]
    for old in ("2025-06-18", "2025-03-26"):
        with pytest.raises(
            LocalProtocolError, match=f"CallToolRequestParams.task does not exist in protocol revision {old}"
        ):
            encode(call, old)
        for params in sampling:
            with pytest.raises(LocalProtocolError, match=r"CreateMessageRequestParams.(tools|toolChoice) does not"):
                encode(params, old)
        # without them the same requests encode as before
        assert encode(attrs.evolve(call, task=None), old) == {"name": "t"}
        assert "tools" not in encode(attrs.evolve(sampling[0], tools=None), old)


# -- the engine writes an envelope's JSON-RPC members itself --------------------------------


def _envelopes() -> list[tuple[type, str]]:
    from mcp_ref.schema import messages as m
    from mcp_ref.schema.jsonrpc import JSONRPCResultResponse

    tables = (m.CLIENT_REQUESTS, m.SERVER_REQUESTS, m.CLIENT_NOTIFICATIONS, m.SERVER_NOTIFICATIONS)
    classes = {table[method] for table in tables for method in list(table)} - {None}
    return [(JSONRPCResultResponse, "result"), *sorted(((c, "params") for c in classes), key=lambda p: p[0].__name__)]


@pytest.mark.parametrize("revision", REVISIONS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_envelope_written_member_by_member_is_the_converters(revision: str, data: st.DataObject) -> None:
    # Connection._encode_message: the fixed members as they are, the typed one through
    # field_writer, must give what unstructuring the whole message gives (keys in order),
    # or refuse what it refuses
    from mcp_ref.schema._base import MODERN_REVISIONS, exists_in
    from mcp_ref.schema._converter import field_writer

    cls, member = data.draw(st.sampled_from([e for e in _envelopes() if exists_in(e[0], revision)]))
    message = data.draw(values(cls, revision), label=cls.__name__)
    hook = field_writer(cls, member, revision)
    if hook is None:
        # the session revisions' envelopes all take the fast path; in 2026-07-28 the
        # InputRequests have no envelope and required params need the class's check
        assert revision in MODERN_REVISIONS, f"{cls.__name__} goes through the class"
        return
    out = {f.name: getattr(message, f.name) for f in attrs.fields(cls) if f.name != member}
    value = getattr(message, member)
    try:
        expected = encode(message, revision)
    except LocalProtocolError as e:
        with pytest.raises(LocalProtocolError, match=re.escape(e.message)):
            hook(value)
        return
    if value is not None:
        out[member] = hook(value)
    assert list(out.items()) == list(expected.items())
