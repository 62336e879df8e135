"""client/roots: the roots a client exposes, and roots/list.

Root URIs are ``file://`` URIs in this revision (roots#3); anything else is
refused when set. Changing the roots of a session whose client declared
``roots.listChanged`` sends ``notifications/roots/list_changed`` (roots#2;
``ClientSession.set_roots``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from .. import schema as model
from ..schema.jsonrpc import RequestParams
from ..schema.lifecycle import RootsCapability

if TYPE_CHECKING:
    from ..schema.roots import ListRootsResult, Root

__all__ = ["RootsProvider", "check_root", "within_roots"]


def check_root(root: Root) -> None:
    """[client/roots#3, #5] a root is a file:// URI without traversal segments."""
    parts = urlsplit(root.uri)
    if parts.scheme != "file":
        raise ValueError(f"root {root.uri!r}: roots must be file:// URIs")
    if any(seg == ".." for seg in parts.path.split("/")):
        raise ValueError(f"root {root.uri!r}: '..' segments are not allowed")


def within_roots(uri: str, roots: Iterable[Root]) -> bool:
    """Whether the ``file://`` URI ``uri`` lies inside one of ``roots`` (a server's tool asks
    before it touches a path the model named; client/roots#8).

    Paths are compared after percent-decoding and resolving ``.`` and ``..``, segment by
    segment (``/work`` does not contain ``/workshop``). Symbolic links are not followed:
    that needs the file system, and is the application's to do before opening the path.
    """
    target = _file_path(uri)
    if target is None:
        return False
    for root in roots:
        base = _file_path(root.uri)
        # [client/roots#8] respect root boundaries: inside a root, segment by segment
        if base is not None and (target == base or target.startswith(base.rstrip("/") + "/")):
            return True
    return False


def _file_path(uri: str) -> str | None:
    """The absolute path a local ``file://`` URI names, normalised; None for anything else."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc.lower() not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    if not path.startswith("/") or "\x00" in path:
        return None
    # [2026-07-28:server/resources#21] dot segments resolved after percent-decoding: a reader of file://
    # resources asks within_roots before it opens the path, and no traversal gets out of its directory
    return "/" + posixpath.normpath(path).lstrip("/")


class RootsProvider:
    """The current roots; answers roots/list."""

    def __init__(self, roots: Iterable[Root] = (), *, list_changed: bool = True) -> None:
        #: whether the client declares ``roots.listChanged`` (and notifies changes)
        self.list_changed = list_changed
        self._roots: list[Root] = []
        self.set(roots)

    @property
    def roots(self) -> list[Root]:
        """The roots as they are now."""
        return list(self._roots)

    def set(self, roots: Iterable[Root]) -> None:
        """Replace the roots (ValueError for one that is not a file:// URI); ``ClientSession.set_roots`` also tells the
        server.
        """
        new = list(roots)
        for root in new:
            check_root(root)
        self._roots = new

    def capability(self) -> RootsCapability:
        # [client/roots#1] clients with roots declare the capability
        """The ``roots`` capability this provider makes the client declare."""
        return RootsCapability(list_changed=self.list_changed or None)

    async def handle(self, ctx: Any, params: RequestParams | None) -> ListRootsResult:
        """Answer the server's ``roots/list`` request."""
        return model.ListRootsResult(roots=list(self._roots))
