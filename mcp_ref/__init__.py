"""mcp_ref: a Trio-native reference implementation of the Model Context Protocol (2025-11-25).

The names an application needs are here: :class:`Server`, :func:`connect` and the
typed client openers (:func:`open_stdio_client`, :func:`open_session`, :func:`open_http_client`),
the request context and handles, and every exception a call can raise.
The data model (``Tool``, ``TextContent``, ``CallToolRequestParams``, ...)
is in :mod:`mcp_ref.schema`.
"""

# imported under a private name: dir(mcp_ref) lists the public API and the subpackages only
from typing import TYPE_CHECKING as _TYPE_CHECKING

from .basic.lifecycle import SUPPORTED_VERSIONS, Phase, Role
from .connection import Connection
from .errors import (
    AuthorizationError,
    CapabilityMissing,
    ConnectionClosed,
    DecodeError,
    ErrorCode,
    HTTPTransportError,
    InvalidAnswer,
    InvalidCallbackAnswer,
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
from .server.tools import ToolError
from .server.utilities.caching import CachePolicy
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
from .session.connect import connect
from .session.core import PendingRequest
from .session.modern_client import (
    EraCache,
    InputRequestContext,
    InputRoundsExceeded,
    Subscription,
    SubscriptionEnded,
)

if _TYPE_CHECKING:
    # loaded on first use at run time (see __getattr__); imported here so type
    # checkers see their real signatures
    from .basic.authorization.metadata import ClientInformation
    from .basic.authorization.resource_server import AccessToken, InvalidToken, ProtectedResource, TokenVerifier
    from .basic.transports.memory import memory_channel_pair
    from .basic.transports.token_verifiers import IntrospectionVerifier, JWTVerifier
    from .basic.utilities.progress import ProgressCallback
    from .client.display import display_name, safe_icon_uri, safe_icons
    from .client.elicitation import ElicitationHandler, URLElicitationRequired, form_defaults
    from .client.roots import RootsProvider
    from .client.sampling import SamplingHandler, SamplingRejected
    from .server.resources import ResourceNotFound
    from .server.tools import ToolNameWarning
    from .session.changes_pg import open_postgres_change_feed
    from .session.http import (
        AsgiApp,
        CallbackListenError,
        ClientCredentials,
        CrossAppAccess,
        FileTokenStorage,
        HttpClientChannel,
        HttpConfig,
        HttpServerInfo,
        InMemoryTokenStorage,
        LoopbackCallback,
        OAuthClient,
        SessionExpired,
        TokenStorage,
        open_http_client,
        open_in_browser,
        open_loopback_callback,
        print_url,
        serve_http,
    )
    from .session.task_db import SqliteTaskStore, TaskStoreLocked, open_sqlite_task_store
    from .session.task_pg import PostgresTaskStore, open_postgres_task_store
    from .session.task_requestor import TaskCancelled, TaskFailed, TaskHandle
    from .session.task_store import InMemoryTaskStore, TaskStore, TaskStoreUnavailable
    from .session.tasks import TaskConfig, TaskManager
    from .testing import memory_session_pair

__version__ = "0.1.0"

__all__ = [
    "AsgiApp",
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
    "CachePolicy",
    "ClientSession",
    "EraCache",
    "InputRequestContext",
    "InputRoundsExceeded",
    "Subscription",
    "SubscriptionEnded",
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
    "InvalidAnswer",
    "InvalidCallbackAnswer",
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
    "PostgresTaskStore",
    "InMemoryTaskStore",
    "TaskStore",
    "TaskStoreLocked",
    "TaskStoreUnavailable",
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
    "connect",
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
    "open_postgres_task_store",
    "open_postgres_change_feed",
    "open_stdio_client",
    "safe_icon_uri",
    "safe_icons",
    "serve_http",
    "ElicitationHandler",
    "HttpServerInfo",
    "LoopbackCallback",
    "ProgressCallback",
    "SamplingHandler",
    "SessionExpired",
    "TokenStorage",
    "ToolNameWarning",
    "open_in_browser",
    "print_url",
]


#: names that need the http extra (h11), imported on first use
_HTTP_NAMES = (
    "AsgiApp",
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
    "HttpServerInfo",
    "SessionExpired",
    # OAuth in a script: where the authorization URL goes, what receives the redirect,
    # where tokens are kept (a custom store implements TokenStorage)
    "print_url",
    "open_in_browser",
    "LoopbackCallback",
    "TokenStorage",
)

#: the other names loaded on first use, by their home module: what a tools-only
#: server or a plain client never needs is not imported by ``import mcp_ref``
#: (bench W7), and a name is the very object of its home module once read
_LAZY = {
    # authorization (the resource server's names): most applications never need it
    "AccessToken": "basic.authorization.resource_server",
    "InvalidToken": "basic.authorization.resource_server",
    "ProtectedResource": "basic.authorization.resource_server",
    "TokenVerifier": "basic.authorization.resource_server",
    # what a client registered ahead of time gives OAuthClient(client_information=...)
    "ClientInformation": "basic.authorization.metadata",
    # where tasks are kept (Server.enable_tasks(store=...)); durable ones need sqlite3
    "TaskStore": "session.task_store",
    "InMemoryTaskStore": "session.task_store",
    "TaskStoreUnavailable": "session.task_store",
    "SqliteTaskStore": "session.task_db",
    "TaskStoreLocked": "session.task_db",
    "open_sqlite_task_store": "session.task_db",
    # tasks shared by replicas need the postgres extra (psycopg)
    "PostgresTaskStore": "session.task_pg",
    "open_postgres_task_store": "session.task_pg",
    # changes (subscriptions/listen) shared by replicas, on the same database
    "open_postgres_change_feed": "session.changes_pg",
    # tasks: the receiver side (Server.enable_tasks), the requestor's handle and errors
    "TaskConfig": "session.tasks",
    "TaskManager": "session.tasks",
    "TaskHandle": "session.task_requestor",
    "TaskFailed": "session.task_requestor",
    "TaskCancelled": "session.task_requestor",
    # what the handlers of the other chapters raise or use
    "ResourceNotFound": "server.resources",
    "SamplingRejected": "client.sampling",
    "URLElicitationRequired": "client.elicitation",
    "form_defaults": "client.elicitation",
    "RootsProvider": "client.roots",
    # the callbacks' types, for annotating your own (progress=, elicitation=, sampling=)
    "ProgressCallback": "basic.utilities.progress",
    "ElicitationHandler": "client.elicitation",
    "SamplingHandler": "client.sampling",
    # the warning a tool name outside the spec's guidance gives at registration
    "ToolNameWarning": "server.tools",
    # showing a peer's name and icons to a person
    "display_name": "client.display",
    "safe_icon_uri": "client.display",
    "safe_icons": "client.display",
    # an in-process pair (tests, embedding)
    "memory_channel_pair": "basic.transports.memory",
    "memory_session_pair": "testing",
}


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
    if name in ("IntrospectionVerifier", "JWTVerifier"):
        # the resource server's built-in verifiers fetch over HTTP: the http extra too
        from .basic.transports import token_verifiers

        return getattr(token_verifiers, name)
    home = _LAZY.get(name)
    if home is not None:
        from importlib import import_module

        value = getattr(import_module(f"{__name__}.{home}"), name)
        globals()[name] = value  # the next read is a plain attribute
        return value
    raise AttributeError(f"module 'mcp_ref' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the lazily loaded names are listed before they are read (tab completion, help())
    return sorted(set(globals()) | set(__all__))
