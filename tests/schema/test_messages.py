"""The method tables of mcp_ref.schema.messages against the spec: the catalogue
methods.tsv (2025-11-25 and 2026-07-28) and, for every revision, the message
unions and method constants of its schema.json."""

import csv
from typing import Any, get_args

import attrs
import pytest

import mcp_ref.schema as S
from mcp_ref.schema._converter import wire_fields
from mcp_ref.schema.jsonrpc import Result
from mcp_ref.schema.messages import (
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    KNOWN_METHODS,
    PARAMS_TYPES,
    RESULT_TYPES,
    SERVER_NOTIFICATIONS,
    SERVER_REQUESTS,
    TASK_AUGMENTABLE,
    ClientNotification,
    ClientRequest,
    ServerNotification,
    ServerRequest,
    client_notifications,
    client_requests,
    method_in,
    method_since,
    method_until,
    result_type_for,
    server_notifications,
    server_requests,
    task_augmentable,
)

from ..conftest import spec_path
from ._spec import REVISIONS, defs

#: the revisions with a methods.tsv (mcp_ref's own catalogue of the spec)
CATALOGUED = ("2025-11-25", "2026-07-28")


def rows(revision: str = "2025-11-25") -> list[dict[str, str]]:
    with spec_path(revision, "methods.tsv").open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _fields(tp: Any, revision: str) -> set[str]:
    """Wire fields of a params type in ``revision``, "?" marking optional ones; for a
    union, a field is required only when every member requires it."""
    members = get_args(tp) or (tp,)
    layouts = [
        {f.wire: f.required_in(revision) for f in wire_fields(m) if not f.extra and f.exists_in(revision)}
        for m in members
    ]
    names = set().union(*layouts)
    return {w if all(layout.get(w) for layout in layouts) else w + "?" for w in names}


def _union_methods(revision: str, union: str) -> set[str]:
    """The method constants of the members of one of schema.json's message unions."""
    node = defs(revision).get(union)
    if node is None:
        return set()
    out = set()
    for member in node.get("anyOf", [node]):
        if "$ref" in member:
            member = defs(revision)[member["$ref"].rsplit("/", 1)[-1]]
        # (a one-member union is written out in place: 2026-07-28's ClientNotification)
        out.add(member["properties"]["method"]["const"])
    return out


def test_every_method_of_every_revision_is_in_the_tables() -> None:
    spec: set[str] = set()
    for revision in REVISIONS:
        spec |= _methods_in(revision)
    ours = set(CLIENT_REQUESTS) | set(SERVER_REQUESTS) | set(CLIENT_NOTIFICATIONS) | set(SERVER_NOTIFICATIONS)
    assert ours == spec
    assert set(PARAMS_TYPES) == spec
    requests = {r["method"] for revision in CATALOGUED for r in rows(revision) if r["kind"] == "request"}
    assert set(RESULT_TYPES) == requests | {"sampling/createMessage", "roots/list", "elicitation/create"}


@pytest.mark.parametrize("revision", REVISIONS)
def test_each_revisions_directions_are_its_unions(revision: str) -> None:
    # what one revision sends which way: its schema.json's ClientRequest, ServerRequest,
    # ClientNotification and ServerNotification (2026-07-28 has no ServerRequest)
    assert client_requests(revision) == _union_methods(revision, "ClientRequest")
    assert server_requests(revision) == _union_methods(revision, "ServerRequest")
    assert client_notifications(revision) == _union_methods(revision, "ClientNotification")
    assert server_notifications(revision) == _union_methods(revision, "ServerNotification")
    for method in KNOWN_METHODS:
        expected = any(
            method in _union_methods(revision, u)
            for u in ("ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification")
        )
        assert method_in(method, revision) == expected, (method, revision)


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_revision_unions_are_the_tables(revision: str) -> None:
    from mcp_ref.schema.messages import union_in

    for name, methods in (
        ("ClientRequest", client_requests(revision)),
        ("ClientNotification", client_notifications(revision)),
        ("ServerRequest", server_requests(revision)),
        ("ServerNotification", server_notifications(revision)),
    ):
        union = union_in(name, revision)
        members = set(get_args(union) or ((union,) if union is not None else ()))
        assert {attrs.fields_dict(m)["method"].default for m in members} == set(methods), (name, revision)


def test_directions_and_message_classes() -> None:
    for r in rows():
        method, direction = r["method"], r["direction"]
        client, server = (
            (CLIENT_REQUESTS, SERVER_REQUESTS)
            if r["kind"] == "request"
            else (CLIENT_NOTIFICATIONS, SERVER_NOTIFICATIONS)
        )
        assert (method in client) == (direction in ("client->server", "both")), method
        assert (method in server) == (direction in ("server->client", "both")), method
        cls = client.get(method) or server[method]
        assert cls.__name__ == r["message_type"]
        assert cls is getattr(S, r["message_type"])


@pytest.mark.parametrize("revision", CATALOGUED)
def test_params_types_requiredness_and_fields(revision: str) -> None:
    for r in rows(revision):
        method = r["method"]
        tp = PARAMS_TYPES[method]
        if r["params_type"] != "(inline)":
            named = getattr(S, r["params_type"])
            # (roots/list: ListRootsRequestParams is 2025's RequestParams, but without the
            # request _meta 2026-07-28 requires: a subclass with the same fields)
            assert tp is named or (method == "roots/list" and issubclass(tp, named)), method
        cls = (CLIENT_REQUESTS | SERVER_REQUESTS | CLIENT_NOTIFICATIONS | SERVER_NOTIFICATIONS)[method]
        params = next(f for f in wire_fields(cls) if f.name == "params")
        assert params.required_in(revision) == (r["params_required"] == "yes"), (method, revision)
        # the message class's params annotation is the table's type
        assert _without_none(params.type) == tp, method
        spec_fields = set(r["params_fields"].split(", "))
        ours = _fields(tp, revision)
        if r["params_type"] == "(inline)":
            # inline params types list no _meta; ours accept it (basic/index#meta)
            ours.discard("_meta?")
        assert ours == spec_fields, (method, revision)


def _without_none(tp: Any) -> Any:
    args = tuple(a for a in get_args(tp) if a is not type(None))
    if not args or len(args) == len(get_args(tp)):
        return tp
    return args[0] if len(args) == 1 else tp


@pytest.mark.parametrize("revision", CATALOGUED)
def test_result_types(revision: str) -> None:
    from mcp_ref.schema.mrtr import InputRequiredResult

    for r in rows(revision):
        if r["kind"] != "request":
            continue
        expected = Result if r["result_type"] == "EmptyResult" else getattr(S, r["result_type"])
        assert RESULT_TYPES[r["method"]] is expected, r["method"]
        found = result_type_for(r["method"], revision)
        if revision >= "2026-07-28" and "inputResponses?" in r["params_fields"]:
            # a request that may need more input answers its result or an InputRequiredResult
            assert set(get_args(found)) == {expected, InputRequiredResult}, r["method"]
        else:
            assert found is expected, r["method"]


@pytest.mark.req("2026-07-28:schema#16")
def test_a_result_without_result_type_is_the_complete_result() -> None:
    from mcp_ref.schema import decode
    from mcp_ref.schema.mrtr import InputRequiredResult
    from mcp_ref.schema.tools import CallToolResult

    tp = result_type_for("tools/call", "2026-07-28")
    older = decode({"content": []}, tp)  # an earlier-protocol server's result
    assert type(older) is CallToolResult and older.result_type == "complete"
    asked = decode({"resultType": "input_required", "requestState": "s"}, tp)
    assert type(asked) is InputRequiredResult and asked.request_state == "s"


@pytest.mark.parametrize("revision", CATALOGUED)
def test_task_augmentable_methods(revision: str) -> None:
    found = {method for method in KNOWN_METHODS if task_augmentable(method, revision)}
    assert found == {r["method"] for r in rows(revision) if r["task_augmentable"] == "yes"}
    assert TASK_AUGMENTABLE == {r["method"] for r in rows() if r["task_augmentable"] == "yes"}
    for method, tp in PARAMS_TYPES.items():
        members = get_args(tp) or (tp,)
        has_task = all("task" in attrs.fields_dict(m) for m in members)
        assert has_task == (method in TASK_AUGMENTABLE), method


def test_unions_are_the_tables() -> None:
    assert set(get_args(ClientRequest)) == set(CLIENT_REQUESTS.values())
    assert set(get_args(ServerRequest)) == set(SERVER_REQUESTS.values())
    assert set(get_args(ClientNotification)) == set(CLIENT_NOTIFICATIONS.values())
    assert set(get_args(ServerNotification)) == set(SERVER_NOTIFICATIONS.values())


def _methods_in(revision: str) -> set[str]:
    found = set()
    for node in defs(revision).values():
        const = node.get("properties", {}).get("method", {}).get("const")
        if const is not None:
            found.add(const)
    return found


@pytest.mark.parametrize("revision", REVISIONS)
def test_method_since_and_until_match_the_schemas(revision: str) -> None:
    present = _methods_in(revision)
    for method in KNOWN_METHODS:
        until = method_until(method)
        exists = method_since(method) <= revision and (until is None or revision < until)
        assert exists == (method in present), (method, revision)


def test_the_tables_marks_are_the_classes_marks() -> None:
    # messages keeps each method's since / until as data (no chapter imported for them)
    from mcp_ref.schema.messages import _SINCE_OF, _UNTIL_OF

    for method in KNOWN_METHODS:
        assert _SINCE_OF[method] == method_since(method), method
        assert _UNTIL_OF[method] == method_until(method), method


def test_method_since_refuses_unknown_methods() -> None:
    with pytest.raises(KeyError):
        method_since("tools/destroy")
