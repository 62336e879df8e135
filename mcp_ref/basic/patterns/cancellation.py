"""basic/patterns/cancellation (2026-07-28): who cancels what, and how, per transport.

The rules both eras share (a cancellation names a request in flight; a late
one is ignored; nothing is answered once cancelled) live where the session
engine has always read them, :mod:`mcp_ref.basic.utilities.cancellation` (the
2025 page's module). What 2026-07-28 adds is data, here:

* the client cancels by transport: closing the request's stream on
  Streamable HTTP, ``notifications/cancelled`` on one channel (stdio);
* the server sends ``notifications/cancelled`` for one thing only: tearing
  down a ``subscriptions/listen`` stream.
"""

from typing import Final, Literal

from ..utilities.cancellation import CancellationState, ignored_requirement

__all__ = ["CLIENT_SIGNAL", "SERVER_CANCELS", "server_may_cancel", "CancellationState", "ignored_requirement"]

#: how a client cancels on each transport (2026-07-28 cancellation#4, #5; enforced by the HTTP server
#: and the runtimes, which cite them)
CLIENT_SIGNAL: Final[dict[str, Literal["close-stream", "notification"]]] = {
    "streamable-http": "close-stream",
    "stdio": "notification",
}
#: [2026-07-28:basic/patterns/cancellation#2, #3, #12] the requests a server may cancel: its own
#: teardown of a subscription, nothing else
SERVER_CANCELS: Final = frozenset({"subscriptions/listen"})


def server_may_cancel(method: str) -> bool:
    """Whether a server may send ``notifications/cancelled`` for a request of ``method``."""
    return method in SERVER_CANCELS
