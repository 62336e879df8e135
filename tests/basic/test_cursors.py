"""basic/cursors: the opaque cursor codec and keyset positions every list pages with."""

import pytest

from mcp_ref.basic.cursors import Positions, keyset_page, make_cursor, read_cursor
from mcp_ref.errors import ErrorCode, ProtocolError


def test_a_key_added_again_after_removal_comes_last() -> None:
    positions = Positions()
    assert [positions.add(k) for k in "abc"] == [1, 2, 3]
    assert positions.add("b") == 2  # already there: its place is kept
    positions.remove("a")
    assert positions.add("a") == 4 and positions.issued == 4


@pytest.mark.req("server/utilities/pagination#2", "server/utilities/pagination#5")
def test_keyset_pages_follow_positions_and_refuse_foreign_cursors() -> None:
    positioned = [(1, "a"), (3, "c"), (4, "d")]
    page, cursor = keyset_page("k", positioned, None, 2, issued=4)
    assert page == ["a", "c"] and cursor is not None and read_cursor("k", cursor) == 3
    assert keyset_page("k", positioned, cursor, 2, issued=4) == (["d"], None)
    # a position removed since (2) still resumes after itself
    assert keyset_page("k", positioned, make_cursor("k", 2), 5, issued=4) == (["c", "d"], None)
    for bad in (make_cursor("k", 9), make_cursor("other", 1), "not a cursor"):
        with pytest.raises(ProtocolError) as info:
            keyset_page("k", positioned, bad, 2, issued=4)
        assert info.value.code == ErrorCode.INVALID_PARAMS
