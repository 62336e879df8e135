"""Opaque cursors: the codec every paginated list uses (server/utilities/pagination).

A cursor is an opaque string (pagination#1): here the URL-safe base64 of a
small JSON object naming the position and the listing it belongs to, so a
cursor from one list method is refused by another. Anything that does not
decode is an invalid cursor: -32602 (pagination#error-handling).

Positions are keyset positions (:class:`Positions`, :func:`keyset_page`): the
number of the last item a page listed, never an offset, so a listing that
changes between pages skips nothing that is still in it (pagination#2).

It sits in ``basic/`` because both layers list: the server's features
(``tools/list``, ``resources/list`` ... in :mod:`mcp_ref.server.utilities.pagination`)
and ``tasks/list`` of basic/utilities/tasks, which either side may serve.
"""

import base64
import binascii
import bisect
import json
from collections.abc import Hashable, Sequence
from typing import TypeVar

from ..errors import ErrorCode, ProtocolError

__all__ = ["make_cursor", "read_cursor", "Positions", "keyset_page"]

T = TypeVar("T")


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


class Positions:
    """Keyset positions of a listing: each key gets a number when it is added, in
    increasing order; a key removed and added again gets a new, later number.

    A cursor names the position of the last item it listed (not an offset), so
    items removed between two pages shift nothing and items added come after
    every cursor already handed out: no item that stays listed is skipped
    (server/utilities/pagination#2).
    """

    __slots__ = ("_of", "issued")

    def __init__(self) -> None:
        self._of: dict[Hashable, int] = {}
        #: the highest position handed out so far (a cursor beyond it was never ours)
        self.issued = 0

    def add(self, key: Hashable) -> int:
        """The position of ``key``: its own if it is listed already, else a new last one."""
        position = self._of.get(key)
        if position is None:
            self.issued += 1
            position = self._of[key] = self.issued
        return position

    def remove(self, key: Hashable) -> None:
        self._of.pop(key, None)

    def __getitem__(self, key: Hashable) -> int:
        return self._of[key]


def keyset_page(
    kind: str, positioned: Sequence[tuple[int, T]], cursor: str | None, page_size: int, issued: int | None = None
) -> tuple[list[T], str | None]:
    """One page of ``positioned`` ((position, item) pairs in increasing position
    order) after the cursor, and the cursor of the next page (None on the last).

    -32602 for a cursor that is not ours, or names a position never issued.
    """
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    after = 0 if cursor is None else read_cursor(kind, cursor)
    if issued is not None and after > issued:
        # [server/utilities/pagination#5] never handed out: not a cursor of ours
        raise ProtocolError(f"Invalid params: invalid cursor {cursor!r}", ErrorCode.INVALID_PARAMS)
    # [server/utilities/pagination#2] after the last position listed, not an offset: stable cursors
    start = bisect.bisect_right(positioned, after, key=lambda p: p[0])
    page = positioned[start : start + page_size]
    more = start + page_size < len(positioned)
    return [item for _, item in page], (make_cursor(kind, page[-1][0]) if more else None)
