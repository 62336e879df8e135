"""A token bucket: the rate limits the spec asks of both sides (sans-IO).

Several chapters ask for rate limiting: of log messages (server/utilities/logging#4,
#7), of tool invocations (server/tools#20), of the sampling and elicitation
requests a client answers (client/sampling#17, client/elicitation#39). They
share this bucket; tasks (basic/utilities/tasks#80), whose operations wait
for their turn rather than being refused, have their own
(:class:`mcp_ref.basic.utilities.tasks.RateLimiter`).
"""

__all__ = ["TokenBucket"]


class TokenBucket:
    """On average ``rate`` events a second, in bursts of up to ``burst``; the rest
    are refused and counted in ``dropped``. The caller passes the current time."""

    __slots__ = ("_last", "_tokens", "burst", "dropped", "rate")

    def __init__(self, rate: float, burst: int) -> None:
        if not rate > 0 or burst < 1:
            raise ValueError("a rate limit needs a positive rate and a burst of at least 1")
        self.rate = rate
        self.burst = burst
        self.dropped = 0
        self._tokens = float(burst)
        self._last: float | None = None

    def allow(self, now: float) -> bool:
        """Whether one more event may happen at ``now`` (which it then counts)."""
        if self._last is not None:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        self.dropped += 1
        return False
