"""basic/patterns/progress (2026-07-28): progress notifications about a request.

The rules are the 2025 page's (a token is a string or an integer, values
increase, nothing after completion), kept in :mod:`mcp_ref.basic.utilities.progress`
where the session engine reads them; the modern engine (:mod:`mcp_ref.exchange`)
reads them from here. What 2026-07-28 changes is where progress goes: on the
request's own stream (Streamable HTTP) or the one channel, never on a
``subscriptions/listen`` stream.
"""

from ..utilities.progress import check_progress, valid_token

__all__ = ["check_progress", "valid_token"]
