"""server/utilities/pagination: opaque cursors over a listing.

A cursor is an opaque string (pagination#1): here the URL-safe base64 of a
small JSON object naming the position and the listing it belongs to, so a
cursor from one list method is refused by another. Anything that does not
decode is an invalid cursor: -32602 (pagination#error-handling).
"""

import base64
import binascii
import json
from collections.abc import Sequence
from typing import TypeVar

from ...errors import ErrorCode, ProtocolError

__all__ = ["DEFAULT_PAGE_SIZE", "paginate", "make_cursor", "read_cursor"]

T = TypeVar("T")
DEFAULT_PAGE_SIZE = 100


def make_cursor(kind: str, offset: int) -> str:
    raw = json.dumps({"k": kind, "o": offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_cursor(kind: str, cursor: str) -> int:
    """The offset a cursor names; ProtocolError(-32602) when it is not ours."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        obj = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        offset = obj["o"]
        if obj["k"] != kind or type(offset) is not int or offset < 0:
            raise ValueError(cursor)
        return offset
    except (ValueError, KeyError, TypeError, UnicodeError, binascii.Error) as e:
        # [server/utilities/pagination#5] an invalid cursor is an invalid-params error
        raise ProtocolError(f"Invalid params: invalid cursor {cursor!r}", ErrorCode.INVALID_PARAMS) from e


def paginate(
    kind: str, items: Sequence[T], cursor: str | None, page_size: int = DEFAULT_PAGE_SIZE
) -> tuple[list[T], str | None]:
    """One page of ``items`` and the cursor of the next (None on the last page)."""
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    start = 0 if cursor is None else read_cursor(kind, cursor)
    if start > len(items):
        raise ProtocolError(f"Invalid params: cursor {cursor!r} is past the end", ErrorCode.INVALID_PARAMS)
    end = start + page_size
    return list(items[start:end]), (make_cursor(kind, end) if end < len(items) else None)
