"""schema.ts "subscriptions/listen" and "notifications/subscriptions/acknowledged"
(2026-07-28, basic/patterns/subscriptions): one long-lived request whose response
stream carries the change notifications a client opted in to.

It replaces ``resources/subscribe`` / ``unsubscribe`` and the HTTP GET stream of
the session revisions. Every notification on the stream, the acknowledgement
first, is tagged with the listen request's id
(``io.modelcontextprotocol/subscriptionId`` in ``_meta``, see ``_meta_keys``);
the result, sent only when the server ends the stream gracefully, carries it too.
"""

from typing import Any, Literal

from attrs import field, frozen

from ._base import install_model_methods, since
from .jsonrpc import NotificationParams, RequestId, RequestParams, Result

__all__ = [
    "SubscriptionFilter",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenRequest",
    "SubscriptionsListenResult",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsAcknowledgedNotification",
]


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class SubscriptionFilter:
    """What to be told about (each opt-in): list changes of tools, prompts, resources, and
    updates of these resource URIs. The server acknowledges the subset it honours."""

    tools_list_changed: bool | None = None
    prompts_list_changed: bool | None = None
    resources_list_changed: bool | None = None
    resource_subscriptions: list[str] | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class SubscriptionsListenRequestParams(RequestParams):
    notifications: SubscriptionFilter


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class SubscriptionsListenRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["subscriptions/listen"] = "subscriptions/listen"
    id: RequestId
    params: SubscriptionsListenRequestParams


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class SubscriptionsListenResult(Result):
    """The stream ended gracefully. ``meta`` is required: it names the subscription
    (``io.modelcontextprotocol/subscriptionId``, the listen request's id)."""

    meta: dict[str, Any] = field()


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    """The notification kinds the server agreed to send (those it supports of those asked)."""

    notifications: SubscriptionFilter


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class SubscriptionsAcknowledgedNotification:
    """The first message of a subscription (its ``_meta`` names the subscription)."""

    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/subscriptions/acknowledged"] = "notifications/subscriptions/acknowledged"
    params: SubscriptionsAcknowledgedNotificationParams


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
