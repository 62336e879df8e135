"""schema.ts "Logging"."""

from typing import Any, Literal

from attrs import frozen

from ._base import install_model_methods, until
from .jsonrpc import NotificationParams, RequestId, RequestParams

__all__ = [
    "LoggingLevel",
    "LOGGING_LEVELS",
    "SetLevelRequestParams",
    "SetLevelRequest",
    "LoggingMessageNotificationParams",
    "LoggingMessageNotification",
]

#: syslog severities (RFC 5424), least to most severe
LoggingLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOGGING_LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


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
