"""A channel that shows every message it carries to an :class:`Observer`.

The battery runs our own :class:`~mcp_ref.session.client.ClientSession` (and
the fixture our own server) on an :class:`ObservedChannel`, so that
everything that crosses the wire, both ways, is also judged from the outside.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import trio

from .observer import Direction, Observer
from .report import Finding

__all__ = ["ObservedChannel", "Recorder"]

#: called with each message as it crosses: (direction, bytes)
Recorder = Callable[[Direction, bytes], None]


class ObservedChannel(trio.abc.Channel[bytes]):
    """Wraps the channel of one side; ``outgoing`` is the direction of what we send.

    ``stdio``: received messages are lines of a stdio stream (a run of lines
    that are not JSON is judged as a whole, see ``Observer.observe_stdio_line``).
    ``on_finding`` sees each finding as it is made (the tap prints them live).
    """

    def __init__(
        self,
        inner: trio.abc.Channel[bytes],
        observer: Observer,
        outgoing: Direction,
        *,
        stdio: bool = False,
        recorder: Recorder | None = None,
        on_finding: Callable[[Finding], None] | None = None,
    ) -> None:
        self.inner = inner
        self.observer = observer
        self.outgoing = outgoing
        self.stdio = stdio
        self.recorder = recorder
        self.on_finding = on_finding
        self._deliberate: list[bytes] = []
        self._deliberate_block = 0

    def expect_deliberate(self, data: bytes) -> None:
        """The next send of exactly ``data`` breaks a rule on purpose (a probe)."""
        self._deliberate.append(data)

    @contextmanager
    def deliberately(self) -> Iterator[None]:
        """What is sent inside the block breaks rules on purpose (a probe sent through a session)."""
        self._deliberate_block += 1
        try:
            yield
        finally:
            self._deliberate_block -= 1

    def _judge(self, direction: Direction, data: bytes, deliberate: bool = False) -> None:
        if self.recorder is not None:
            self.recorder(direction, data)
        if self.stdio and direction is not self.outgoing:
            found = self.observer.observe_stdio_line(direction, data, deliberate=deliberate)
        else:
            found = self.observer.observe(direction, data, deliberate=deliberate)
        if self.on_finding is not None:
            for finding in found:
                self.on_finding(finding)

    def _is_deliberate(self, value: bytes) -> bool:
        if value in self._deliberate:
            self._deliberate.remove(value)
            return True
        return self._deliberate_block > 0

    async def send(self, value: bytes) -> None:
        self._judge(self.outgoing, value, self._is_deliberate(value))
        await self.inner.send(value)

    async def receive(self) -> bytes:
        try:
            value = await self.inner.receive()
        except trio.EndOfChannel:
            if self.stdio:
                for finding in self.observer.flush(self.outgoing.back):
                    if self.on_finding is not None:
                        self.on_finding(finding)
            raise
        self._judge(self.outgoing.back, value)
        return value

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        # what the session asks a transport for beyond the Channel interface
        # (send_eof, close_request_stream, ...); send_related is routed through here too
        if name in ("send_nowait",):
            raise AttributeError(name)
        attr = getattr(self.inner, name)
        if name == "send_related":

            async def send_related(data: bytes, related: Any) -> None:
                self._judge(self.outgoing, data, self._is_deliberate(data))
                await attr(data, related)

            return send_related
        return attr
