"""schema.ts "Roots"."""

from typing import Any, Literal

from attrs import field, frozen

from ._base import NEW_IN_2025_06_18, install_model_methods, until
from .jsonrpc import NotificationParams, RequestId, RequestParams, Result

__all__ = ["Root", "ListRootsRequest", "ListRootsResult", "RootsListChangedNotification"]


@frozen(kw_only=True, repr=False, eq=False)
class Root:
    """``uri`` is a ``file://`` URI in this revision (client/roots#root)."""

    uri: str
    name: str | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class ListRootsRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["roots/list"] = "roots/list"
    id: RequestId
    params: RequestParams | None = None


@frozen(kw_only=True, repr=False, eq=False)
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
