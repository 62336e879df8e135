"""schema.ts ``CacheableResult`` (2026-07-28, server/utilities/caching): a result a
client may cache. Its two fields (``ttlMs``, ``cacheScope``) are declared with
:data:`.pagination.TTL_MS` and :data:`.pagination.CACHE_SCOPE` (their tolerant
readers); the list results, which are also paginated, repeat
them, and ``ReadResourceResult`` and ``DiscoverResult`` extend this class.
"""

from attrs import field, frozen

from ._base import install_model_methods, since
from .jsonrpc import Result
from .pagination import CACHE_SCOPE, TTL_MS, CacheScope, ttl_ms_validator

__all__ = ["CacheableResult"]


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class CacheableResult(Result):
    """A result a client may cache (2026-07-28, server/utilities/caching): ``ttl_ms``
    milliseconds of freshness (0: stale at once) and who may share it (``cache_scope``).
    Both are required in that revision and never written before it."""

    # the freshness hint, 0 or more milliseconds (what a cache does with it: the client's)
    ttl_ms: int | None = field(default=None, validator=ttl_ms_validator, metadata=TTL_MS)
    # who may keep it: "public" or "private"
    cache_scope: CacheScope | None = field(default=None, metadata=CACHE_SCOPE)


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
