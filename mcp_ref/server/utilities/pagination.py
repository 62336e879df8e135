"""server/utilities/pagination: opaque cursors over a listing.

The cursor codec (opaque strings, pagination#1; -32602 for one that is not
ours, pagination#error-handling) and keyset positions (pagination#2) are
:mod:`mcp_ref.basic.cursors`, shared with ``tasks/list``. A registry keeps a
:class:`Positions` beside its items (``add`` when an item is registered,
``remove`` when it goes) and pages them with :func:`paginate`.
"""

from collections.abc import Hashable, Mapping
from typing import TypeVar

from ...basic.cursors import Positions, keyset_page

__all__ = ["DEFAULT_PAGE_SIZE", "paginate", "Positions"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
DEFAULT_PAGE_SIZE = 100


def paginate(
    kind: str, items: Mapping[K, T], positions: Positions, cursor: str | None, page_size: int = DEFAULT_PAGE_SIZE
) -> tuple[list[T], str | None]:
    """One page of ``items`` (in the order their keys were added to ``positions``)
    and the cursor of the next (None on the last page); keyset cursors, so
    items added or removed between pages shift nothing (pagination#2)."""
    positioned = [(positions[key], item) for key, item in items.items()]
    return keyset_page(kind, positioned, cursor, page_size, positions.issued)
