"""URL-mode elicitation as the engine sees it, on both sides (client/elicitation).

The elicitation chapter's module is :mod:`mcp_ref.client.elicitation`. These
two wire-level facts sit below the engine because both roles' engines apply
them, and the engine imports no feature chapter (see spec_notes/README.md):

* a URL elicitation carries a valid absolute URL (#13): the server's engine refuses
  to send one without, the client's guard refuses one it receives;
* a -32042 error lists elicitation ids that a later
  ``notifications/elicitation/complete`` may name (#16, #17, #22, #23): the
  engine of the side that sends the error and of the side that receives it
  records them (:func:`announced_ids`).
"""

import re
from typing import Any
from urllib.parse import urlsplit

__all__ = ["announced_ids", "check_url", "check_elicitation_url"]


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


#: RFC 3986 section 3.1
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
#: schemes a URL elicitation never carries, valid URL or not: they run code in the page that
#: opens them or read this machine, where the user is sent to a site (decision, see the note)
_NEVER = frozenset({"javascript", "vbscript", "data", "file", "blob", "about"})


def check_url(url: str) -> None:
    """[client/elicitation#13] a URL elicitation carries a valid absolute URL.

    A scheme (RFC 3986 syntax), then a host for everything but ``mailto:`` and
    ``urn:`` (so ``https:foo`` is not one), a port that is a number, and no
    blank or control character anywhere (a URL shown to the user must be the
    URL opened).
    """
    # [client/elicitation#13] nothing blank or control in it: what is shown is what is opened
    if not url or any(c.isspace() or c < " " or c == "\x7f" for c in url):
        raise ValueError(f"{url!r} is not a valid absolute URL")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    # [client/elicitation#13] a scheme, and a host unless the scheme has none (mailto:, urn:)
    if not _SCHEME.fullmatch(parts.scheme) or not (parts.hostname or (scheme in ("mailto", "urn") and parts.path)):
        raise ValueError(f"{url!r} is not a valid absolute URL")
    try:
        parts.port  # noqa: B018  (a port that is not a number in 0-65535 raises)
    except ValueError:
        raise ValueError(f"{url!r} is not a valid absolute URL (its port)") from None


def check_elicitation_url(url: str) -> None:
    """The URL of a URL elicitation: :func:`check_url`, and never a scheme that runs code in the
    page opening it or reads this machine (``javascript:``, ``data:``, ``file:`` ...), since the
    user is sent there (decision, spec_notes/client/elicitation.md)."""
    check_url(url)
    scheme = urlsplit(url).scheme.lower()
    if scheme in _NEVER:
        raise ValueError(f"{url!r}: a {scheme}: URL is never one to send a user to")
