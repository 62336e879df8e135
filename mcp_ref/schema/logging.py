"""schema.ts "Logging"."""

from typing import Any, Literal

from attrs import frozen

from ._base import install_model_methods, until
from .jsonrpc import LOGGING_LEVELS as LOGGING_LEVELS  # (re-exported: its old home)
from .jsonrpc import LoggingLevel as LoggingLevel  # (re-exported: its old home)
from .jsonrpc import NotificationParams, RequestId, RequestParams

__all__ = [
    "SetLevelRequestParams",
    "SetLevelRequest",
    "LoggingMessageNotificationParams",
    "LoggingMessageNotification",
]

# (LoggingLevel is a common type: a 2026-07-28 request's _meta names one, see jsonrpc)


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class SetLevelRequestParams(RequestParams):
    level: LoggingLevel


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class SetLevelRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["logging/setLevel"] = "logging/setLevel"
    id: RequestId
    params: SetLevelRequestParams


@frozen(kw_only=True, repr=False, eq=False)
class LoggingMessageNotificationParams(NotificationParams):
    """``data`` is any JSON value."""

    level: LoggingLevel
    data: Any
    logger: str | None = None


@frozen(kw_only=True, repr=False, eq=False)
class LoggingMessageNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/message"] = "notifications/message"
    params: LoggingMessageNotificationParams


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
