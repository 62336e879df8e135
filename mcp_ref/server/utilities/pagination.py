"""server/utilities/pagination: opaque cursors over a listing.

The cursor codec (opaque strings, pagination#1; -32602 for one that is not
ours, pagination#error-handling) is :mod:`mcp_ref.basic.cursors`, shared with
``tasks/list``.
"""

from collections.abc import Sequence
from typing import TypeVar

from ...basic.cursors import make_cursor, read_cursor
from ...errors import ErrorCode, ProtocolError

__all__ = ["DEFAULT_PAGE_SIZE", "paginate"]

T = TypeVar("T")
DEFAULT_PAGE_SIZE = 100


def paginate(
    kind: str, items: Sequence[T], cursor: str | None, page_size: int = DEFAULT_PAGE_SIZE
) -> tuple[list[T], str | None]:
    """One page of ``items`` and the cursor of the next (None on the last page)."""
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    start = 0 if cursor is None else read_cursor(kind, cursor)
    # [server/utilities/pagination#2] a cursor not from this list: -32602 -- pagination#implementation-guidelines
    if start > len(items):
        raise ProtocolError(f"Invalid params: cursor {cursor!r} is past the end", ErrorCode.INVALID_PARAMS)
    end = start + page_size
    return list(items[start:end]), (make_cursor(kind, end) if end < len(items) else None)
