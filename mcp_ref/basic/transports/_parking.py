"""Parking tasks without a memory channel or a cancel scope.

:class:`ParkingQueue`: a queue that one task takes from, a deque and at most
one parked task. Putting never blocks and never checkpoints; taking is a
checkpoint, like a channel's receive, and an item is never lost to a
cancellation there. What a memory channel would do for one consumer, with
fewer objects per queue (the session makes one per request, the HTTP server
one per stream).

:class:`ParkedSend`: one message waiting, in its writers' queue, for room in
a transport (the session's writes to an in-memory channel whose buffer is
full). Whoever makes room sends it and wakes its writer; :meth:`ParkedSend.cancel`
takes it out unsent, which a request's timeout can do where it would otherwise
need a cancel scope around the send.
"""

from collections import deque
from typing import Any, Generic, TypeVar

import trio

__all__ = ["ParkedSend", "ParkingQueue"]

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


class ParkedSend:
    """A message in a FIFO ``queue`` of messages waiting for room in a transport.

    Its writer awaits :meth:`wait`; the queue's owner, when the transport has
    room, sends the first one and calls :meth:`sent` (or :meth:`failed` with
    what the transport raised), which takes it out of the queue and wakes the
    writer. :meth:`cancel` takes it out unsent (a timeout, a close), and so
    does the writer's own cancellation. Nothing is sent twice or after it left.
    """

    __slots__ = ("_error", "_queue", "_sent", "_task", "data", "request")

    def __init__(self, queue: "deque[ParkedSend]", data: bytes, request: Any = None) -> None:
        self.data = data
        #: what the owner needs to know about the message (the session: the request being sent)
        self.request = request
        self._queue = queue
        self._task: trio.lowlevel.Task | None = None
        self._error: BaseException | None = None
        self._sent = False

    async def wait(self) -> bool:
        """Join the end of the queue and wait until the message is sent (True) or
        cancelled (False); what the transport raised instead, raised here. A
        checkpoint; cancelled there, the message leaves the queue unsent."""
        self._task = trio.lowlevel.current_task()
        self._queue.append(self)

        def abort(_: Any) -> trio.lowlevel.Abort:
            self._leave()
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._sent

    def sent(self) -> None:
        """The transport took the message (the first in the queue): wake its writer."""
        self._sent = True
        self._wake()

    def failed(self, error: BaseException) -> None:
        """The transport refused the message (closed, broken): its writer raises ``error``."""
        self._error = error
        self._wake()

    def cancel(self, reason: str | None = None) -> None:
        """Take the message out unsent, if it still waits (``reason`` is only
        for the signature it shares with ``trio.CancelScope.cancel``)."""
        self._wake()

    def _leave(self) -> None:
        self._task = None
        self._queue.remove(self)

    def _wake(self) -> None:
        task = self._task
        if task is not None:
            self._leave()
            trio.lowlevel.reschedule(task)
