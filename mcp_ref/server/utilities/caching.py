"""server/utilities/caching (2026-07-28): the caching hints of cacheable results, server side.

Results of the cacheable operations carry ``ttlMs`` (how long the client may
consider them fresh) and ``cacheScope`` (``"public"``: any cache may keep and
share them; ``"private"``: only for the same authorization context).

A server has one default :class:`CachePolicy` (``Server(cache=...)``) and may
override it per operation (``Server(cache_for={"tools/list": ...})``) and per
resource (``@server.resource(..., cache=...)``); a handler that sets the
fields on its result itself wins. :func:`hints_for` says which hints a result
gets. The default is ``ttlMs: 0``, ``cacheScope: "private"``: immediately stale
and never shared, which promises nothing a server did not decide to promise
(spec_notes/server/utilities/caching.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from ...schema._base import install_model_methods

__all__ = ["CachePolicy", "CACHEABLE", "NO_PROMISE", "hints_for", "check_cache_for"]

#: [2026-07-28:server/utilities/caching#1] the operations whose complete results carry caching hints
CACHEABLE: Final = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)


def _ttl(instance: Any, attribute: Any, value: Any) -> None:
    if type(value) is not int or value < 0:
        # [2026-07-28:server/utilities/caching#11] a ttlMs is an integer >= 0
        raise ValueError(f"ttl_ms is an integer >= 0 (milliseconds), not {value!r}")


def _scope(instance: Any, attribute: Any, value: Any) -> None:
    if value not in ("public", "private"):
        raise ValueError(f"scope is 'public' or 'private', not {value!r}")


@attrs.frozen(repr=False, eq=False)
class CachePolicy:
    """How long a result stays fresh (``ttl_ms``, milliseconds) and who may keep it (``scope``).

    Use ``"private"`` for what depends on who asks (a user's resources, lists
    filtered by their scopes); ``"public"`` only for what is the same for every
    caller ([2026-07-28:server/utilities/caching#26]: a public answer may be shared
    across tokens).
    """

    ttl_ms: int = attrs.field(default=0, validator=_ttl)
    scope: Literal["public", "private"] = attrs.field(default="private", validator=_scope)


#: the default: immediately stale, never shared
NO_PROMISE: Final = CachePolicy()


def check_cache_for(cache_for: Mapping[str, CachePolicy]) -> dict[str, CachePolicy]:
    """Check a per-operation table of policies (ValueError for an operation that is not cacheable)."""
    out = {}
    for method, policy in cache_for.items():
        if method not in CACHEABLE:
            raise ValueError(f"{method!r} results carry no caching hints (cacheable: {', '.join(sorted(CACHEABLE))})")
        if not isinstance(policy, CachePolicy):
            raise TypeError(f"cache_for[{method!r}] is a CachePolicy, not {type(policy).__name__}")
        out[method] = policy
    return out


def hints_for(
    method: str,
    result: Mapping[str, Any],
    *,
    default: CachePolicy,
    per_method: Mapping[str, CachePolicy],
    override: CachePolicy | None = None,
) -> dict[str, Any]:
    """The hints (``{"ttlMs": ..., "cacheScope": ...}``) the JSON ``result`` of ``method`` lacks.

    Empty for an operation that is not cacheable and for an interim result
    ([2026-07-28:server/utilities/caching#1]: input_required results carry none). A
    field the result already has is kept. ``override`` (a resource's own policy)
    comes before ``per_method``, which comes before ``default``; one policy per
    operation means every page of a list gets the same scope
    ([2026-07-28:server/utilities/caching#24]).
    """
    if method not in CACHEABLE or result.get("resultType", "complete") != "complete":
        return {}
    # [2026-07-28:server/utilities/caching#18, #19] the hints follow the policy alone, whether or not
    # listChanged is declared
    policy = override or per_method.get(method) or default
    hints: dict[str, Any] = {}
    # [2026-07-28:server/utilities/caching#20] a handler may give each page its own ttlMs: kept
    if "ttlMs" not in result:
        hints["ttlMs"] = policy.ttl_ms
    if "cacheScope" not in result:
        hints["cacheScope"] = policy.scope
    return hints


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals())
