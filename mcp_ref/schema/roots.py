"""schema.ts "Roots"."""

from typing import Any, Literal

from attrs import field, frozen

from ._base import NEW_IN_2025_06_18, REQUIRED_ON_WIRE, fields_until, install_model_methods, until
from .jsonrpc import NotificationParams, RequestId, RequestParams, Result, check_request_meta

__all__ = ["Root", "ListRootsRequestParams", "ListRootsRequest", "ListRootsResult", "RootsListChangedNotification"]


@frozen(kw_only=True, repr=False, eq=False)
class Root:
    """``uri`` is a ``file://`` URI in this revision (client/roots#root)."""

    uri: str
    name: str | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


def _plain_meta(instance: Any, attribute: Any, value: Any) -> None:
    check_request_meta(instance, attribute, value)  # (as RequestParams: a progress token is checked)


@frozen(kw_only=True, repr=False, eq=False)
class ListRootsRequestParams(RequestParams):
    """``RequestParams`` in the session revisions; in 2026-07-28 (inline there) an object
    with an optional ``_meta``, which is not the request ``_meta`` every client request
    must carry: this class exists so that 2026-07-28 does not require it here."""

    meta: dict[str, Any] | None = field(default=None, validator=_plain_meta)


# In 2026-07-28 this request is only a question inside an InputRequiredResult
# (basic/patterns/mrtr): ``{method, params}``, no JSON-RPC envelope. ``id`` is
# required wherever it exists (the session revisions) but defaults to None so
# that the embedded form decodes.
@frozen(kw_only=True, repr=False, eq=False)
@fields_until("2026-07-28", "jsonrpc", "id")
class ListRootsRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["roots/list"] = "roots/list"
    id: RequestId | None = field(default=None, metadata=REQUIRED_ON_WIRE)
    params: ListRootsRequestParams | None = None


@frozen(kw_only=True, repr=False, eq=False)
# 2026-07-28: an InputResponse, not a Result (no resultType, no _meta)
@fields_until("2026-07-28", "result_type", "meta")
class ListRootsResult(Result):
    roots: list[Root]


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class RootsListChangedNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/roots/list_changed"] = "notifications/roots/list_changed"
    params: NotificationParams | None = None


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
