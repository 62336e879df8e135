"""URL-mode elicitation as the engine sees it, on both sides (client/elicitation).

The elicitation chapter's module is :mod:`mcp_ref.client.elicitation`. These
two wire-level facts sit below the engine because both roles' engines apply
them, and the engine imports no feature chapter (see spec_notes/README.md):

* a URL elicitation carries an absolute URL (#13): the server's engine refuses
  to send one without, the client's guard refuses one it receives;
* a -32042 error lists elicitation ids that a later
  ``notifications/elicitation/complete`` may name (#16, #17, #22, #23): the
  engine of the side that sends the error and of the side that receives it
  records them (:func:`announced_ids`).
"""

from typing import Any
from urllib.parse import urlsplit

__all__ = ["announced_ids", "check_url"]


def announced_ids(data: Any) -> list[str]:
    """[client/elicitation#22, #23] the elicitation ids listed in a -32042 error's ``data``.

    Entries that are not objects with a string ``elicitationId`` are skipped:
    they cannot be completed, and the error itself still reaches the caller.
    """
    if not isinstance(data, dict):
        return []
    items = data.get("elicitations")
    if not isinstance(items, list):
        return []
    return [e["elicitationId"] for e in items if isinstance(e, dict) and isinstance(e.get("elicitationId"), str)]


def check_url(url: str) -> None:
    """[client/elicitation#13] a URL elicitation carries an absolute URL."""
    parts = urlsplit(url)
    if not parts.scheme or not (parts.netloc or parts.scheme in ("mailto", "urn")):
        raise ValueError(f"{url!r} is not a valid absolute URL")
