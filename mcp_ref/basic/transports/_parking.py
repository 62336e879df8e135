"""A queue that one task takes from: a deque and at most one parked task.

Putting never blocks and never checkpoints; taking is a checkpoint, like a
channel's receive, and an item is never lost to a cancellation there. What a
memory channel would do for one consumer, with fewer objects per queue (the
session makes one per request, the HTTP server one per stream).
"""

from collections import deque
from typing import Any, Generic, TypeVar

import trio

__all__ = ["ParkingQueue"]

T = TypeVar("T")


class ParkingQueue(Generic[T]):
    __slots__ = ("_items", "_task")

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._task: trio.lowlevel.Task | None = None

    def put(self, item: T) -> None:
        self._items.append(item)
        self._wake()

    def _wake(self) -> None:
        task = self._task
        if task is not None:
            self._task = None
            trio.lowlevel.reschedule(task)

    def receive_nowait(self) -> T:
        """The next item; :class:`trio.WouldBlock` when there is none yet."""
        if not self._items:
            raise trio.WouldBlock
        return self._items.popleft()

    async def receive(self) -> T:
        """The next item, waiting for it (a checkpoint)."""
        if self._items:
            # if cancelled at this checkpoint, the item stays
            await trio.lowlevel.checkpoint()
            return self._items.popleft()
        self._task = trio.lowlevel.current_task()

        def abort(_: Any) -> trio.lowlevel.Abort:
            self._task = None
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)
        return self._items.popleft()  # (rescheduled only by a put: an item is there)
