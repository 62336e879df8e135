"""Per-primitive access by OAuth scope: which tools, resources and prompts a request may see.

A tool, resource, resource template or prompt registered with ``scopes=`` is
offered only to requests whose verified access token (``ctx.auth``) grants
every one of those scopes: the lists leave it out and a call, read or get of it
is answered as if it did not exist, so a caller learns nothing of what it may
not use. Without ``scopes`` a primitive is offered to everyone. A request
without a token (stdio, in memory, HTTP without ``auth=``) has no scopes.

This is the one place that decides: the registries ask :func:`permits` (rules,
sans-IO; the token comes from the request's context, in both eras).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["check_scopes", "permits"]


def check_scopes(scopes: Iterable[str] | None, what: str) -> frozenset[str]:
    """The scopes a primitive needs, checked at registration (ValueError for a bad one)."""
    if scopes is None:
        return frozenset()
    if isinstance(scopes, str):
        raise TypeError(f"{what}: scopes is a collection of scope names, not the string {scopes!r}")
    out = frozenset(scopes)
    for scope in out:
        # RFC 6749 section 3.3: a scope token is non-empty, printable ASCII without space, '"' or '\'
        if not isinstance(scope, str) or not scope or any(c in ' "\\' or not "\x21" <= c <= "\x7e" for c in scope):
            raise ValueError(f"{what}: {scope!r} is not an OAuth scope token (RFC 6749 section 3.3)")
    return out


def permits(ctx: Any, scopes: frozenset[str]) -> bool:
    """Whether the request of ``ctx`` may see a primitive that needs ``scopes``.

    [2026-07-28:server/tools#7, server/resources#5, server/prompts#5] the set offered
    varies with the authorization presented on the request, and only with it;
    [server/resources#9, #11] access to a sensitive resource is checked before any read;
    [2026-07-28:server/utilities/caching#27] access is decided here, per primitive and
    per request, never by a result's ``cacheScope``.
    """
    if not scopes:
        return True
    auth = getattr(ctx, "auth", None)
    granted = auth.scopes if auth is not None else frozenset()
    return scopes <= granted
