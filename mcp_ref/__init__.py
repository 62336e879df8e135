"""mcp_ref: a Trio-native reference implementation of the Model Context Protocol (2025-11-25).

The names an application needs are here: :class:`Server` and the client
openers (:func:`open_stdio_client`, :func:`open_session`, :func:`open_http_client`),
the request context and handles, and every exception a call can raise.
The data model (``Tool``, ``TextContent``, ``CallToolRequestParams``, ...)
is in :mod:`mcp_ref.schema`.
"""

# imported under a private name: dir(mcp_ref) lists the public API and the subpackages only
from typing import TYPE_CHECKING as _TYPE_CHECKING

from .basic.lifecycle import SUPPORTED_VERSIONS, Phase, Role
from .basic.transports.memory import memory_channel_pair
from .client.display import display_name, safe_icon_uri, safe_icons
from .client.elicitation import URLElicitationRequired, form_defaults
from .client.roots import RootsProvider
from .client.sampling import SamplingRejected
from .connection import Connection
from .errors import (
    AuthorizationError,
    CapabilityMissing,
    ConnectionClosed,
    DecodeError,
    ErrorCode,
    HTTPTransportError,
    LocalProtocolError,
    MCPError,
    MCPRefError,
    MessageTooLarge,
    ProtocolError,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    TLSError,
    UnsupportedProtocolVersion,
)
from .schema import LATEST_PROTOCOL_VERSION, decode, encode
from .server.resources import ResourceNotFound
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
from .session.client import InvalidToolResult
from .session.core import PendingRequest
from .session.tasks import TaskCancelled, TaskConfig, TaskFailed, TaskHandle, TaskManager
from .testing import memory_session_pair

if _TYPE_CHECKING:
    # loaded on first use at run time (see __getattr__); imported here so type
    # checkers see their real signatures
    from .basic.authorization.metadata import ClientInformation
    from .basic.authorization.resource_server import AccessToken, InvalidToken, ProtectedResource, TokenVerifier
    from .basic.transports.token_verifiers import IntrospectionVerifier, JWTVerifier
    from .session.http import (
        CallbackListenError,
        ClientCredentials,
        CrossAppAccess,
        FileTokenStorage,
        HttpClientChannel,
        HttpConfig,
        InMemoryTokenStorage,
        OAuthClient,
        open_http_client,
        open_loopback_callback,
        serve_http,
    )
    from .session.task_db import SqliteTaskStore, open_sqlite_task_store

__version__ = "0.1.0"

__all__ = [
    "AccessToken",
    "InvalidToken",
    "ProtectedResource",
    "TokenVerifier",
    "IntrospectionVerifier",
    "JWTVerifier",
    "LATEST_PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "AuthorizationError",
    "CallbackListenError",
    "CapabilityMissing",
    "ClientCredentials",
    "ClientInformation",
    "ClientSession",
    "Connection",
    "ConnectionClosed",
    "CrossAppAccess",
    "DecodeError",
    "ErrorCode",
    "FileTokenStorage",
    "HTTPTransportError",
    "HttpClientChannel",
    "HttpConfig",
    "InMemoryTokenStorage",
    "InvalidToolResult",
    "LocalProtocolError",
    "MCPError",
    "MCPRefError",
    "MessageTooLarge",
    "OAuthClient",
    "PendingRequest",
    "Phase",
    "ProtocolError",
    "RemoteProtocolError",
    "RequestCancelled",
    "RequestContext",
    "RequestTimeout",
    "RootsProvider",
    "ResourceNotFound",
    "Role",
    "SamplingRejected",
    "Server",
    "Session",
    "SessionConfig",
    "SqliteTaskStore",
    "TaskCancelled",
    "TaskConfig",
    "TaskFailed",
    "TaskHandle",
    "TaskManager",
    "TLSError",
    "ToolError",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
    "__version__",
    "decode",
    "display_name",
    "encode",
    "form_defaults",
    "memory_channel_pair",
    "memory_session_pair",
    "open_http_client",
    "open_loopback_callback",
    "open_session",
    "open_sqlite_task_store",
    "open_stdio_client",
    "safe_icon_uri",
    "safe_icons",
    "serve_http",
]


#: names that need the http extra (h11), imported on first use
_HTTP_NAMES = (
    "open_http_client",
    "serve_http",
    "OAuthClient",
    "ClientCredentials",
    "CrossAppAccess",
    "InMemoryTokenStorage",
    "FileTokenStorage",
    "open_loopback_callback",
    "CallbackListenError",
    # serve_http(server, config=HttpConfig(...)) and open_http_client(url, **HttpClientChannel options)
    "HttpConfig",
    "HttpClientChannel",
)


def __getattr__(name: str) -> object:
    # Streamable HTTP needs the ``http`` extra (h11): imported on first use only
    if name in _HTTP_NAMES:
        try:
            from .session import http
        except ModuleNotFoundError as e:
            if e.name != "h11":
                raise
            raise ImportError(f"mcp_ref.{name} needs the http extra (h11): pip install 'mcp_ref[http]'") from e
        return getattr(http, name)
    if name in ("AccessToken", "InvalidToken", "ProtectedResource", "TokenVerifier"):
        # authorization (the resource server's names) is loaded on first use: most
        # applications never need it, and it would cost every import
        from .basic.authorization import resource_server

        return getattr(resource_server, name)
    if name == "ClientInformation":
        # what a client registered ahead of time gives OAuthClient(client_information=...)
        from .basic.authorization import metadata

        return metadata.ClientInformation
    if name in ("SqliteTaskStore", "open_sqlite_task_store"):
        # durable tasks (TaskConfig(store=...)) need sqlite3: loaded on first use
        from .session import task_db

        return getattr(task_db, name)
    if name in ("IntrospectionVerifier", "JWTVerifier"):
        # the resource server's built-in verifiers fetch over HTTP: the http extra too
        from .basic.transports import token_verifiers

        return getattr(token_verifiers, name)
    raise AttributeError(f"module 'mcp_ref' has no attribute {name!r}")
