"""schema.ts "Pagination", and the caching fields of 2026-07-28's ``CacheableResult``
(which schema.ts declares beside ``PaginatedResult``; the class itself is in
:mod:`.caching`, built only where a result extends it)."""

import math
from collections.abc import Mapping
from typing import Any, Final, Literal

from attrs import field, frozen

from ._base import NEW_IN_2026_07_28, FieldValueError, install_model_methods, required_from
from .jsonrpc import Cursor, RequestId, RequestParams, Result

__all__ = [
    "PaginatedRequestParams",
    "PaginatedRequest",
    "PaginatedResult",
    "CacheScope",
]

#: who may keep a cached result: anyone ("public"), or only within the same
#: authorization context ("private")
CacheScope = Literal["public", "private"]


def _non_negative(instance: Any, attribute: Any, value: Any) -> None:
    if value is not None and value < 0:
        raise FieldValueError("ttlMs", "expected a number of milliseconds, 0 or more")


def read_ttl_ms(value: Any, _: Any = None) -> int:
    """How a peer's ``ttlMs`` decodes: a hint, so an odd value never fails the result
    that carries it (a tools/list is worth having without its freshness).

    A negative ttlMs reads as 0, stale at once (2026-07-28 server/utilities/caching#10:
    ignore it, treat it as 0); so does anything that is no finite number (``null``, a
    string, ``true``, NaN, an infinity), as an absent one would (caching#9); a fraction
    is rounded down to whole milliseconds. What an application builds is still
    checked by the validator: ``ttl_ms=-1`` in our own result is a ValueError.
    """
    if type(value) is int:
        return value if value > 0 else 0
    if type(value) is float and math.isfinite(value):
        return int(value) if value > 0 else 0
    return 0


def read_cache_scope(value: Any, _: Any = None) -> CacheScope:
    """How a peer's ``cacheScope`` decodes: "public" as sent; any other value (an unknown
    word, a wrong type) as "private", the reading that never shares a result across
    authorization contexts on a doubtful hint (2026-07-28 schema#41)."""
    return "public" if value == "public" and type(value) is str else "private"


#: metadata of ``ttlMs`` and ``cacheScope``: new in 2026-07-28 and required there;
#: decoded by their tolerant readers
CACHING: Final[Mapping[str, Any]] = {**NEW_IN_2026_07_28, **required_from("2026-07-28")}
TTL_MS: Final[Mapping[str, Any]] = {**CACHING, "read": read_ttl_ms}
CACHE_SCOPE: Final[Mapping[str, Any]] = {**CACHING, "read": read_cache_scope}
#: (a list result is a PaginatedResult and a CacheableResult: slotted classes take
#: one base with fields, so the list results repeat the two, with this validator)
ttl_ms_validator = _non_negative


@frozen(kw_only=True, repr=False, eq=False)
class PaginatedRequestParams(RequestParams):
    cursor: Cursor | None = None


@frozen(kw_only=True, repr=False, eq=False)
class PaginatedRequest:
    """Any paginated list request (the concrete ones fix ``method``)."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    # (every 2026-07-28 request has params: its _meta is required)
    params: PaginatedRequestParams | None = field(default=None, metadata=required_from("2026-07-28"))


@frozen(kw_only=True, repr=False, eq=False)
class PaginatedResult(Result):
    next_cursor: Cursor | None = None


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
