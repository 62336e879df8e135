"""A nursery for async context managers that yield to a caller's block.

With strict exception groups, an exception raised in the caller's block
comes out of the nursery wrapped in an ExceptionGroup. When it is the *only*
exception, :func:`block_nursery` re-raises it as it was, so
``pytest.raises(ValueError)`` and ``except ConnectionClosed`` keep working for
the people using our context managers. Anything else stays grouped.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

__all__ = ["block_nursery"]


class _Body:
    exc: BaseException | None = None


@asynccontextmanager
async def block_nursery() -> AsyncIterator[tuple[trio.Nursery, _Body]]:
    body = _Body()
    single: BaseException | None = None
    try:
        async with trio.open_nursery() as nursery:
            yield nursery, body
    except BaseExceptionGroup as group:
        if body.exc is None or len(group.exceptions) != 1 or group.exceptions[0] is not body.exc:
            raise
        single = body.exc
    if single is not None:
        # raised outside the except clause: its own __cause__ and __context__ stay as they were
        # (the group it came in is no context worth showing)
        raise single
