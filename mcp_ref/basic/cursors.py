"""Opaque cursors: the codec every paginated list uses (server/utilities/pagination).

A cursor is an opaque string (pagination#1): here the URL-safe base64 of a
small JSON object naming the position and the listing it belongs to, so a
cursor from one list method is refused by another. Anything that does not
decode is an invalid cursor: -32602 (pagination#error-handling).

It sits in ``basic/`` because both layers list: the server's features
(``tools/list``, ``resources/list`` ... in :mod:`mcp_ref.server.utilities.pagination`)
and ``tasks/list`` of basic/utilities/tasks, which either side may serve.
"""

import base64
import binascii
import json

from ..errors import ErrorCode, ProtocolError

__all__ = ["make_cursor", "read_cursor"]


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
