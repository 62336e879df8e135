"""basic/utilities/ping: the answer and the keepalive policy (sans-IO).

* Answering (ping#1): a ``ping`` gets an empty result at once, in every phase
  (the lifecycle tables of :mod:`mcp_ref.basic.lifecycle` allow it before
  initialisation), and is exempt from the limit on concurrent handlers: the
  session's receive loop answers it itself with :func:`answer`.
* Sending (ping#2-#9): pings are optional; with
  ``SessionConfig.keepalive_interval`` the session pings that often once
  initialised, each ping waiting ``keepalive_timeout``. :class:`Keepalive`
  counts failures in a row: a failure is logged, a success resets the count,
  and at ``keepalive_max_failures`` the connection is stale and the session
  closes it with :meth:`Keepalive.close_reason`.

The timer and the request belong to the trio session
(:meth:`mcp_ref.session.core.Session.ping`, ``Session._keepalive``).
"""

from typing import Final

from ...schema.jsonrpc import Result

__all__ = ["METHOD", "answer", "Keepalive"]

METHOD: Final = "ping"


def answer() -> Result:
    """[basic/utilities/ping#1] the receiver answers promptly with an empty result."""
    return Result()


class Keepalive:
    """Consecutive keepalive failures of one session (ping#7-#9)."""

    __slots__ = ("failures", "max_failures", "timeout")

    def __init__(self, timeout: float, max_failures: int) -> None:
        if not timeout > 0 or max_failures < 1:
            raise ValueError("a keepalive needs a positive timeout and max_failures of at least 1")
        self.timeout = timeout
        self.max_failures = max_failures
        self.failures = 0

    def failed(self) -> bool:
        """A ping failed (no answer within the timeout, or an error): whether the
        connection is now stale and must be closed."""
        self.failures += 1
        # [basic/utilities/ping#7, #8] repeated failures: the connection is stale
        return self.failures >= self.max_failures

    def succeeded(self) -> None:
        self.failures = 0

    def close_reason(self) -> str:
        return f"keepalive: {self.failures} consecutive pings failed (timeout {self.timeout:g}s)"
