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
    try:
        async with trio.open_nursery() as nursery:
            yield nursery, body
    except BaseExceptionGroup as group:
        if body.exc is not None and len(group.exceptions) == 1 and group.exceptions[0] is body.exc:
            raise body.exc from None
        raise
