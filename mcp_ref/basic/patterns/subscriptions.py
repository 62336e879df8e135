"""basic/patterns/subscriptions (2026-07-28): ``subscriptions/listen``, sans-IO.

A client opens a long-lived request with a *filter* of the change
notifications it wants; the server answers first with
``notifications/subscriptions/acknowledged`` carrying the part of the filter it
will honour, then sends matching notifications as they happen, every one
tagged with ``_meta["io.modelcontextprotocol/subscriptionId"]`` (the listen
request's id). The stream ends when the client cancels it (closes the HTTP
stream, or ``notifications/cancelled`` on stdio) or the server ends it with a
completion result.

What is here: the filter fields and the notification each selects,
:func:`agreed_filter` (what a server with given capabilities honours),
:func:`wants` (whether a change goes to a subscription) and :func:`tag`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "FLAG_FIELDS",
    "RESOURCE_SUBSCRIPTIONS",
    "ACKNOWLEDGED",
    "CHANGE_METHODS",
    "read_filter",
    "agreed_filter",
    "wants",
    "tag",
]

#: boolean filter field -> the notification it opts into, and the server capability that offers it
FLAG_FIELDS: Final[Mapping[str, tuple[str, tuple[str, ...]]]] = {
    "toolsListChanged": ("notifications/tools/list_changed", ("tools", "listChanged")),
    "promptsListChanged": ("notifications/prompts/list_changed", ("prompts", "listChanged")),
    "resourcesListChanged": ("notifications/resources/list_changed", ("resources", "listChanged")),
}
#: the filter field listing resource URIs, for notifications/resources/updated
RESOURCE_SUBSCRIPTIONS: Final = "resourceSubscriptions"
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
#: every notification a listen stream may carry after its acknowledgement
CHANGE_METHODS: Final = frozenset({m for m, _ in FLAG_FIELDS.values()} | {"notifications/resources/updated"})


def read_filter(params: Any) -> dict[str, Any]:
    """The ``notifications`` filter of a listen request's raw params, checked for shape
    (ValueError naming the problem; the caller answers -32602)."""
    raw = params.get("notifications") if isinstance(params, Mapping) else None
    if not isinstance(raw, Mapping):
        raise ValueError("params.notifications is the object of the notification types to receive")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in FLAG_FIELDS:
            if type(value) is not bool:
                raise ValueError(f"params.notifications.{key} is a boolean")
            out[key] = value
        elif key == RESOURCE_SUBSCRIPTIONS:
            if not isinstance(value, list) or not all(isinstance(u, str) for u in value):
                raise ValueError(f"params.notifications.{key} is an array of URIs")
            out[key] = list(dict.fromkeys(value))
        # unknown fields: a newer filter type this server does not offer, left out of the agreement
    return out


def _has(capabilities: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = capabilities
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return node is not None and node is not False


def agreed_filter(requested: Mapping[str, Any], capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """What the server honours of ``requested``: the types its ``capabilities`` (JSON form) offer.

    [2026-07-28:basic/patterns/subscriptions#2] the acknowledgement reflects this subset; types the
    server does not support are left out (a flag that is false is not a request for anything).
    """
    agreed: dict[str, Any] = {}
    for name, (_, capability) in FLAG_FIELDS.items():
        if requested.get(name) is True and _has(capabilities, capability):
            agreed[name] = True
    uris = requested.get(RESOURCE_SUBSCRIPTIONS)
    if uris and _has(capabilities, ("resources", "subscribe")):
        agreed[RESOURCE_SUBSCRIPTIONS] = list(uris)
    return agreed


def wants(agreed: Mapping[str, Any], method: str, params: Mapping[str, Any] | None) -> bool:
    """[2026-07-28:basic/patterns/subscriptions#1] whether a change notification goes to a subscription
    with this agreed filter: only the types it asked for (and, for resource updates, its URIs)."""
    if method == "notifications/resources/updated":
        uri = (params or {}).get("uri")
        return uri is not None and uri in agreed.get(RESOURCE_SUBSCRIPTIONS, ())
    for name, (notification, _) in FLAG_FIELDS.items():
        if notification == method:
            return agreed.get(name) is True
    return False


def tag(params: Mapping[str, Any] | None, subscription_id: str | int) -> dict[str, Any]:
    """[2026-07-28:basic/index#61] ``params`` with the subscription's id in ``_meta``."""
    out = dict(params or {})
    meta = dict(out.get("_meta") or {})
    meta["io.modelcontextprotocol/subscriptionId"] = subscription_id
    out["_meta"] = meta
    return out
