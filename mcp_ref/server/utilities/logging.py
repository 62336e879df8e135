"""server/utilities/logging: levels, filtering, and a bridge from Python logging.

Each session has a minimum level (``logging/setLevel``; until the client sets
one, every message goes out). Levels are the syslog severities of RFC 5424.
:class:`MCPLogHandler` forwards Python ``logging`` records to sessions as
``notifications/message``.
"""

import logging
from collections.abc import Callable
from typing import Any, get_args

from ...basic.rate_limit import TokenBucket
from ...errors import ErrorCode, ProtocolError
from ...schema.jsonrpc import Result
from ...schema.logging import LOGGING_LEVELS, LoggingLevel, SetLevelRequestParams

__all__ = [
    "LEVEL_RANK",
    "check_level",
    "python_level_to_mcp",
    "passes",
    "set_log_level",
    "LogRateLimiter",
    "MCPLogHandler",
]

LEVEL_RANK = {name: rank for rank, name in enumerate(LOGGING_LEVELS)}
_LEVELS: dict[str, LoggingLevel] = {name: name for name in get_args(LoggingLevel)}


def check_level(level: str) -> LoggingLevel:
    """``level`` if it is one of the eight syslog levels, else ValueError (before anything is sent)."""
    checked = _LEVELS.get(level)
    if checked is None:
        raise ValueError(f"unknown log level {level!r}: one of {', '.join(LOGGING_LEVELS)}")
    return checked


def python_level_to_mcp(levelno: int) -> str:
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


def passes(level: str, minimum: str | None) -> bool:
    # [schema#19] before any logging/setLevel, every level goes out -- schema#loggingmessagenotification
    return minimum is None or LEVEL_RANK[level] >= LEVEL_RANK[minimum]


class LogRateLimiter(TokenBucket):
    """[server/utilities/logging#4, #7] a token bucket for one session's log messages.

    On average ``rate`` messages per second go out, with bursts of up to
    ``burst``; the rest are dropped and counted in ``dropped``. Sans-IO: the
    caller passes the current time.
    """

    __slots__ = ()


async def set_log_level(ctx: Any, params: SetLevelRequestParams) -> Result:
    """``logging/setLevel``: remember the session's minimum level (logging#2)."""
    if params.level not in LEVEL_RANK:
        # unreachable through the decoder (the level is a Literal); kept for direct callers
        raise ProtocolError(f"Invalid params: unknown level {params.level!r}", ErrorCode.INVALID_PARAMS)
    # [server/utilities/logging#2] the session's minimum level from now on -- logging#setting-log-level
    ctx.session.log_level = params.level
    return Result()


class MCPLogHandler(logging.Handler):
    """A ``logging.Handler`` that sends records to MCP clients.

    ``emit`` calls ``send(level, logger_name, data)`` synchronously; the
    server passes a function that queues the notification on each session
    (handing it to the trio thread when called from another thread). The
    text is the record's message, or what the handler's formatter makes of it
    if one is set; exception tracebacks and stack traces are never sent
    (logging#6: no internals).
    """

    def __init__(self, send: Callable[[str, str, Any], None], level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self._send = send

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._send(python_level_to_mcp(record.levelno), record.name, self._text(record))
        except Exception:
            self.handleError(record)

    def _text(self, record: logging.LogRecord) -> str:
        if self.formatter is None:
            return record.getMessage()
        # format a copy without the exception and stack, which a formatter would append
        clean = logging.makeLogRecord(record.__dict__)
        clean.exc_info, clean.exc_text, clean.stack_info = None, None, None
        return self.formatter.format(clean)
