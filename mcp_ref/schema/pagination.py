"""schema.ts "Pagination"."""

from typing import Literal

from attrs import frozen

from ._base import install_model_methods
from .jsonrpc import Cursor, RequestId, RequestParams, Result

__all__ = ["PaginatedRequestParams", "PaginatedRequest", "PaginatedResult"]


@frozen(kw_only=True, repr=False, eq=False)
class PaginatedRequestParams(RequestParams):
    cursor: Cursor | None = None


@frozen(kw_only=True, repr=False, eq=False)
class PaginatedRequest:
    """Any paginated list request (the concrete ones fix ``method``)."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    params: PaginatedRequestParams | None = None


@frozen(kw_only=True, repr=False, eq=False)
class PaginatedResult(Result):
    next_cursor: Cursor | None = None


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
