"""The method tables of mcp_ref.schema.messages against the spec's
methods.tsv (2025-11-25) and the method constants of all three schema.json."""

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
    PARAMS_TYPES,
    RESULT_TYPES,
    SERVER_NOTIFICATIONS,
    SERVER_REQUESTS,
    TASK_AUGMENTABLE,
    ClientNotification,
    ClientRequest,
    ServerNotification,
    ServerRequest,
    method_since,
)

from ..conftest import spec_path
from ._spec import REVISIONS, defs


def rows() -> list[dict[str, str]]:
    with spec_path("2025-11-25", "methods.tsv").open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _fields(tp: Any) -> set[str]:
    """Wire fields of a params type, "?" marking optional ones; for a union, a
    field is required only when every member requires it."""
    members = get_args(tp) or (tp,)
    layouts = [{f.wire: f.required for f in wire_fields(m) if not f.extra} for m in members]
    names = set().union(*layouts)
    return {w if all(layout.get(w) for layout in layouts) else w + "?" for w in names}


def test_every_method_of_the_spec_is_in_the_tables() -> None:
    spec = {r["method"] for r in rows()}
    ours = set(CLIENT_REQUESTS) | set(SERVER_REQUESTS) | set(CLIENT_NOTIFICATIONS) | set(SERVER_NOTIFICATIONS)
    assert ours == spec
    assert set(PARAMS_TYPES) == spec
    assert set(RESULT_TYPES) == {r["method"] for r in rows() if r["kind"] == "request"}


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


def test_params_types_requiredness_and_fields() -> None:
    for r in rows():
        method = r["method"]
        tp = PARAMS_TYPES[method]
        if r["params_type"] != "(inline)":
            assert tp is getattr(S, r["params_type"]), method
        cls = (CLIENT_REQUESTS | SERVER_REQUESTS | CLIENT_NOTIFICATIONS | SERVER_NOTIFICATIONS)[method]
        params = attrs.fields_dict(cls)["params"]
        assert (params.default is attrs.NOTHING) == (r["params_required"] == "yes"), method
        # the message class's params annotation is the table's type
        assert _without_none(params.type) == tp, method
        spec_fields = set(r["params_fields"].split(", "))
        ours = _fields(tp)
        if r["params_type"] == "(inline)":
            # inline params types list no _meta; ours accept it (basic/index#meta)
            ours.discard("_meta?")
        assert ours == spec_fields, method


def _without_none(tp: Any) -> Any:
    args = tuple(a for a in get_args(tp) if a is not type(None))
    if not args or len(args) == len(get_args(tp)):
        return tp
    return args[0] if len(args) == 1 else tp


def test_result_types() -> None:
    for r in rows():
        if r["kind"] != "request":
            continue
        expected = Result if r["result_type"] == "EmptyResult" else getattr(S, r["result_type"])
        assert RESULT_TYPES[r["method"]] is expected, r["method"]


def test_task_augmentable_methods() -> None:
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
def test_method_since_matches_the_schemas(revision: str) -> None:
    present = _methods_in(revision)
    for method in set(CLIENT_REQUESTS) | set(SERVER_REQUESTS) | set(CLIENT_NOTIFICATIONS) | set(SERVER_NOTIFICATIONS):
        assert (method_since(method) <= revision) == (method in present), (method, revision)


def test_method_since_refuses_unknown_methods() -> None:
    with pytest.raises(KeyError):
        method_since("tools/destroy")
