"""schema.ts "Pagination", and the caching fields of 2026-07-28's ``CacheableResult``
(which schema.ts declares beside ``PaginatedResult``; the class itself is in
:mod:`.caching`, built only where a result extends it)."""

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


#: metadata of ``ttlMs`` and ``cacheScope``: new in 2026-07-28 and required there
CACHING: Final[Mapping[str, Any]] = {**NEW_IN_2026_07_28, **required_from("2026-07-28")}
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
