"""schema.ts "Cancellation": ``notifications/cancelled``."""

from typing import Literal

from attrs import frozen

from .jsonrpc import NotificationParams, RequestId

__all__ = ["CancelledNotificationParams", "CancelledNotification"]


@frozen(kw_only=True)
class CancelledNotificationParams(NotificationParams):
    """``request_id`` is required for non-task requests and unused for tasks."""

    request_id: RequestId | None = None
    reason: str | None = None


@frozen(kw_only=True)
class CancelledNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams
