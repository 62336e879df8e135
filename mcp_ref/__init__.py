"""mcp_ref: a Trio-native reference implementation of the Model Context Protocol (2025-11-25)."""

from .basic.lifecycle import SUPPORTED_VERSIONS, Phase, Role
from .client.display import display_name, safe_icon_uri, safe_icons
from .connection import Connection
from .errors import (
    ConnectionClosed,
    DecodeError,
    ErrorCode,
    LocalProtocolError,
    MCPError,
    MessageTooLarge,
    RemoteProtocolError,
    RequestTimeout,
    UnsupportedProtocolVersion,
)
from .schema import LATEST_PROTOCOL_VERSION, decode, encode
from .server.tools import ToolError
from .session import (
    ClientSession,
    RequestContext,
    Server,
    Session,
    SessionConfig,
    open_session,
    open_stdio_client,
)
from .session.tasks import TaskConfig, TaskHandle, TaskManager

__version__ = "0.1.0"

__all__ = [
    "LATEST_PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "ClientSession",
    "Connection",
    "ConnectionClosed",
    "DecodeError",
    "ErrorCode",
    "LocalProtocolError",
    "MCPError",
    "MessageTooLarge",
    "Phase",
    "RemoteProtocolError",
    "RequestContext",
    "RequestTimeout",
    "Role",
    "Server",
    "Session",
    "SessionConfig",
    "ToolError",
    "UnsupportedProtocolVersion",
    "__version__",
    "decode",
    "display_name",
    "encode",
    "open_http_client",
    "open_session",
    "open_stdio_client",
    "safe_icon_uri",
    "safe_icons",
    "serve_http",
    "TaskConfig",
    "TaskHandle",
    "TaskManager",
]


def __getattr__(name: str) -> object:
    # Streamable HTTP needs the ``http`` extra (h11): imported on first use only
    if name in ("open_http_client", "serve_http"):
        from .session import http

        return getattr(http, name)
    raise AttributeError(f"module 'mcp_ref' has no attribute {name!r}")
