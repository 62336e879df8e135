"""The trio runtime: the only owner of nurseries (DESIGN.md section 4)."""

from .client import ClientSession, open_session, open_stdio_client
from .core import RequestContext, Session, SessionConfig, session_scope
from .server import Server

__all__ = [
    "ClientSession",
    "RequestContext",
    "Server",
    "Session",
    "SessionConfig",
    "open_session",
    "open_stdio_client",
    "session_scope",
]
