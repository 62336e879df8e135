"""schema.ts "server/discover" (2026-07-28): what a server speaks, offers and says about itself.

A server answers ``server/discover`` with the revisions it supports, its
capabilities and optional instructions; who it is travels in the result's
``_meta`` (``io.modelcontextprotocol/serverInfo``, see ``_meta_keys``). The
capability and implementation classes are :mod:`.lifecycle`'s (2025-11-25
filed them under "Initialization").
"""

from typing import Literal

from attrs import frozen

from ._base import install_model_methods, since
from .caching import CacheableResult
from .jsonrpc import RequestId, RequestParams
from .lifecycle import ServerCapabilities

__all__ = ["DiscoverRequest", "DiscoverResult"]


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class DiscoverRequest:
    """Ask the server what it supports; its params are only the request ``_meta``."""

    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["server/discover"] = "server/discover"
    id: RequestId
    params: RequestParams


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class DiscoverResult(CacheableResult):
    """``supported_versions``: the revisions to choose from for later requests."""

    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
