"""schema.ts "Cancellation": ``notifications/cancelled``."""

from typing import Literal

from attrs import field, frozen

from ._base import install_model_methods, older_type, required_from
from .jsonrpc import NotificationParams, RequestId

__all__ = ["CancelledNotificationParams", "CancelledNotification"]


@frozen(kw_only=True, repr=False, eq=False)
class CancelledNotificationParams(NotificationParams):
    """``request_id`` is required for non-task requests and unused for tasks."""

    # Required until 2025-11-25, which made it optional (tasks are cancelled
    # with tasks/cancel instead), and required again from 2026-07-28 on (tasks
    # left the core protocol).
    request_id: RequestId | None = field(
        default=None, metadata={**older_type("2025-11-25", RequestId), **required_from("2026-07-28")}
    )
    reason: str | None = None


@frozen(kw_only=True, repr=False, eq=False)
class CancelledNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
