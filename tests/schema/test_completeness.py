"""Every definition of every revision's schema.json has a class or alias here,
with the same wire names, types and requiredness.

The comparison reduces both sides to JSON-Schema types (see ``_spec``); what
differs on purpose is listed in :data:`DOCUMENTED` with the reason (and in
spec_notes/schema.md), and the test fails if a listed difference goes away,
so the list cannot go stale.
"""

from typing import Any, Literal

import attrs
import pytest

from mcp_ref.schema._base import exists_in, since_of, until_of
from mcp_ref.schema._converter import wire_fields
from mcp_ref.schema.jsonrpc import RequestParams

from ._spec import (
    DOCUMENTED,
    LATEST,
    MISSING,
    REVISIONS,
    Norm,
    class_shape,
    defs,
    exists_in_revision,
    is_message_class,
    is_params_class,
    norm_ours,
    our_object,
    spec_definition,
)


def _differences(ours: Norm, spec: Norm, path: str, cls: type | None, revision: str) -> list[str]:
    """Where two normalised types differ, as 'path: problem' strings."""
    if ours == spec:
        return []
    if ours[0] == "object" and spec[0] == "ref":
        # a class of ours with no name in this revision (ListRootsRequestParams is
        # 2025's RequestParams): the same shape as the definition is the same type
        spec = spec_definition(revision, spec[1])
    if ours[0] == "object" and spec[0] == "object":
        mine = {w: (t, r) for w, t, r in ours[1]}
        theirs = {w: (t, r) for w, t, r in spec[1]}
        out = []
        for wire in sorted(set(mine) | set(theirs)):
            sub = f"{path}.{wire}" if path else wire
            if wire == "_meta" and cls is not None and _meta_held_as_dict(cls, mine.get(wire), theirs.get(wire)):
                continue
            if wire not in theirs:
                if _exempt_extra_field(cls, wire, revision):
                    continue
                out.append(f"{sub}: only in mcp_ref")
            elif wire not in mine:
                out.append(f"{sub}: missing from mcp_ref")
            else:
                (t1, r1), (t2, r2) = mine[wire], theirs[wire]
                if r1 != r2:
                    out.append(f"{sub}: required={r1} in mcp_ref, {r2} in the schema")
                sub_cls = _field_class(cls, wire, revision)
                out.extend(_differences(t1, t2, sub, sub_cls, revision))
        return out
    return [f"{path}: {_show(ours)} in mcp_ref, {_show(spec)} in the schema"]


#: 2026-07-28's typed _meta objects: mcp_ref holds every _meta as a dict (any key of the
#: grammar, extensions add theirs); the typed view is the class of the same name
#: (mcp_ref.schema.meta), which test_meta_objects_are_the_typed_views checks
META_OBJECTS = frozenset(
    {"RequestMetaObject", "NotificationMetaObject", "ResultMetaObject", "SubscriptionsListenResultMetaObject"}
)


def _meta_held_as_dict(cls: type, ours: Any, spec: Any) -> bool:
    # A request's _meta is a dict in mcp_ref (extensions add keys); the one
    # key the schema types, progressToken, is checked by RequestParams'
    # validator (test_malformed shows it), so {progressToken?} == any object.
    if ours is None or spec is None or ours[0] != ("any-object",) or ours[1] != spec[1]:
        return False
    if spec[0][0] == "ref" and spec[0][1] in META_OBJECTS:
        return True
    return issubclass(cls, RequestParams) and spec[0] == (
        "object",
        (("progressToken", ("union", frozenset({("string",), ("integer",)})), False),),
    )


def _exempt_extra_field(cls: type | None, wire: str, revision: str) -> bool:
    if cls is None:
        return False
    # Before 2025-11-25 schema.json's request/notification definitions carry
    # only method and params: jsonrpc and id lived in the envelope types.
    if revision < LATEST and wire in ("jsonrpc", "id") and is_message_class(cls):
        return True
    # Every params object may carry _meta (basic/index#meta); inline params
    # types (older revisions, the tasks/* and elicitation/complete params)
    # do not list it.
    return wire == "_meta" and is_params_class(cls)


def _field_class(cls: type | None, wire: str, revision: str) -> type | None:
    """The attrs class (if one) behind field ``wire`` of ``cls``, for exemptions."""
    if cls is None or not attrs.has(cls):
        return None
    for f in wire_fields(cls):
        if f.wire == wire:
            tp = f.type_in(revision)
            members = getattr(tp, "__args__", (tp,))
            classes = [m for m in members if attrs.has(m) and exists_in_revision(m, revision)]
            return classes[0] if len(classes) == 1 else None
    return None


def _show(n: Norm) -> str:
    if n[0] == "union":
        return "(" + " | ".join(sorted(_show(m) for m in n[1])) + ")"
    if n[0] in ("array", "map"):
        return f"{n[0]}<{_show(n[1])}>"
    if n[0] == "object":
        return "{" + ", ".join(w + ("" if r else "?") for w, _, r in n[1]) + "}"
    if len(n) == 1:
        return str(n[0])
    return f"{n[0]}:{n[1]!r}" if n[0] != "enum" else "enum:" + "|".join(sorted(map(str, n[1])))


def definition_differences(revision: str) -> dict[tuple[str, str, str], str]:
    """(revision, definition, path) -> problem, over the whole schema of ``revision``."""
    found: dict[tuple[str, str, str], str] = {}
    for name in defs(revision):
        ours = our_object(revision, name)
        assert ours is not MISSING, f"{revision}: no class or alias for {name}"
        spec = spec_definition(revision, name)
        if attrs.has(ours) and spec[0] != "ref":
            mine = class_shape(ours, revision)
            cls: type | None = ours
        else:
            mine, cls = norm_ours(ours, revision), None
        for problem in _differences(mine, spec, "", cls, revision):
            path, _, text = problem.partition(": ")
            found[(revision, name, path)] = text
    return found


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_definition_has_a_counterpart(revision: str) -> None:
    missing = [name for name in defs(revision) if our_object(revision, name) is MISSING]
    assert not missing, f"{revision}: nothing in mcp_ref.schema for {missing}"


@pytest.mark.parametrize("revision", REVISIONS)
def test_classes_exist_in_the_revision_that_defines_them(revision: str) -> None:
    # A class standing for a definition of ``revision`` must not be marked
    # as newer than it (or encoding for that revision would refuse it).
    wrong = [
        f"{name} -> {ours.__name__} (since {since_of(ours)}, until {until_of(ours)})"
        for name in defs(revision)
        if attrs.has(ours := our_object(revision, name)) and not exists_in(ours, revision)
    ]
    assert not wrong, wrong


@pytest.mark.parametrize("revision", REVISIONS)
def test_removed_classes_are_marked(revision: str) -> None:
    # The other direction of the until marks: a class that stood for a definition
    # of the previous revision which this one lacks (under any name) is marked
    # @until(revision), unless the structure lives on inline or under another name.
    older = [r for r in REVISIONS if r < revision]
    if not older:
        return
    previous = older[-1]
    kept = {our_object(revision, n) for n in defs(revision)}
    unmarked = [
        name
        for name in defs(previous)
        if attrs.has(ours := our_object(previous, name))
        and ours not in kept
        and exists_in(ours, revision)
        and name not in STILL_INLINE.get(revision, set())
    ]
    assert not unmarked, f"gone from {revision} but not marked @until({revision!r}): {unmarked}"


#: revision -> definitions it dropped as names whose structure it still has inline
#: (none so far: 2024-11-05's Annotated is marked, its field lives on in each type)
STILL_INLINE: dict[str, set[str]] = {}


@pytest.mark.parametrize("revision", REVISIONS)
def test_fields_types_and_requiredness_match(revision: str) -> None:
    found = definition_differences(revision)
    undocumented = {k: v for k, v in found.items() if k not in DOCUMENTED}
    assert not undocumented, "differences from schema.json:\n" + "\n".join(
        f"  {d}.{p}: {v}" for (_, d, p), v in sorted(undocumented.items())
    )


def test_documented_differences_are_real() -> None:
    found: dict[tuple[str, str, str], str] = {}
    for revision in REVISIONS:
        found.update(definition_differences(revision))
    stale = sorted(k for k in DOCUMENTED if k not in found)
    assert not stale, f"documented differences that no longer exist: {stale}"


@pytest.mark.parametrize("revision", REVISIONS)
def test_new_classes_are_marked(revision: str) -> None:
    # The other direction of the since marks: a class that stands for a
    # definition first seen in ``revision`` under that very name, with no
    # older name, inline shape or alias, is marked since ``revision``.
    older = [r for r in REVISIONS if r < revision]
    if not older:
        return
    previous = older[-1]
    known_before = {our_object(previous, n) for n in defs(previous)}
    for name in defs(revision):
        ours: Any = our_object(revision, name)
        if attrs.has(ours) and since_of(ours) < revision and ours not in known_before:
            # allowed only for structures that existed inline before
            assert name in INLINE_BEFORE.get(revision, set()), (
                f"{name} is new in {revision} but not marked @since({revision!r})"
            )


#: definitions that got a name in a revision but existed as inline shapes
#: (or under another name) before it, so their classes are not marked new
INLINE_BEFORE: dict[str, set[str]] = {
    # 2024-11-05 spelled the annotations object out inline (in its "Annotated" base)
    "2025-03-26": {"Annotations"},
    "2025-06-18": {"ResourceTemplateReference"},
    "2025-11-25": {
        "CallToolRequestParams",
        "CancelledNotificationParams",
        "CompleteRequestParams",
        "CreateMessageRequestParams",
        "Error",
        "GetPromptRequestParams",
        "InitializeRequestParams",
        "JSONRPCErrorResponse",
        "JSONRPCResultResponse",
        "LegacyTitledEnumSchema",
        "LoggingMessageNotificationParams",
        "NotificationParams",
        "PaginatedRequestParams",
        "ProgressNotificationParams",
        "ReadResourceRequestParams",
        "RequestParams",
        "ResourceRequestParams",
        "ResourceUpdatedNotificationParams",
        "SetLevelRequestParams",
        "SubscribeRequestParams",
        "TaskAugmentedRequestParams",
        "UnsubscribeRequestParams",
        # 2025-06-18's EnumSchema without enumNames is the same JSON
        "UntitledSingleSelectEnumSchema",
        "ElicitRequestFormParams",
    },
}


def test_legacy_names_are_definitions_of_their_revision() -> None:
    from mcp_ref.schema.legacy import LEGACY_NAMES

    assert not [key for key in LEGACY_NAMES if key[1] not in defs(key[0])]


def test_the_comparison_sees_each_kind_of_difference() -> None:
    # The comparison must be able to fail: a field missing, one too many,
    # requiredness, a scalar type, a literal and a union member.
    @attrs.frozen(kw_only=True)
    class Probe:
        kind: Literal["a"] = "a"
        count: int
        name: str | None = None
        extra_field: bool | None = None

    def spec_of(**props: Any) -> Norm:
        return ("object", tuple(sorted((k, t, r) for k, (t, r) in props.items())))

    ours = class_shape(Probe, LATEST)
    same = spec_of(
        kind=(("const", "a"), True),
        count=(("integer",), True),
        name=(("string",), False),
        extraField=(("boolean",), False),
    )
    assert _differences(ours, same, "", Probe, LATEST) == []
    assert _differences(
        ours,
        spec_of(
            kind=(("const", "a"), True), count=(("number",), True), name=(("string",), True), other=(("string",), False)
        ),
        "",
        Probe,
        LATEST,
    ) == [
        "count: integer in mcp_ref, number in the schema",
        "extraField: only in mcp_ref",
        "name: required=False in mcp_ref, True in the schema",
        "other: missing from mcp_ref",
    ]
    assert _differences(
        ours,
        spec_of(
            kind=(("const", "b"), True),
            count=(("integer",), True),
            name=(("union", frozenset({("string",), ("integer",)})), False),
            extraField=(("boolean",), False),
        ),
        "",
        Probe,
        LATEST,
    ) == [
        "kind: const:'a' in mcp_ref, const:'b' in the schema",
        "name: string in mcp_ref, (integer | string) in the schema",
    ]
