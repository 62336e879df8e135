"""schema.ts "Progress notifications"."""

from typing import Literal

from attrs import field, frozen

from ._base import NEW_IN_2025_03_26, install_model_methods
from .jsonrpc import NotificationParams, ProgressToken

__all__ = ["ProgressNotificationParams", "ProgressNotification"]


@frozen(kw_only=True, repr=False, eq=False)
class ProgressNotificationParams(NotificationParams):
    progress_token: ProgressToken
    progress: float
    total: float | None = None
    message: str | None = field(default=None, metadata=NEW_IN_2025_03_26)


@frozen(kw_only=True, repr=False, eq=False)
class ProgressNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
