"""mcp_ref: a Trio-native reference implementation of the Model Context Protocol (2025-11-25)."""

from .basic.lifecycle import SUPPORTED_VERSIONS, Phase, Role
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
    "encode",
    "open_session",
    "open_stdio_client",
]
