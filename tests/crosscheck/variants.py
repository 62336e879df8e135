"""What the corpus tests share: each program of ``corpus/`` breaks one rule per variant
(``BREAKS``: name -> requirement), and every variant gets a report."""

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import pytest
import trio

from mcp_ref.crosscheck.report import Report


def by_rule(breaks: dict[str, str], *, leave_out: Iterable[str] = ()) -> list[Any]:
    """One pytest param (name, requirement) per variant, citing the requirement it breaks."""
    return [pytest.param(n, r, id=n, marks=pytest.mark.req(r)) for n, r in breaks.items() if n not in leave_out]


async def each_variant(
    names: Iterable[str], check: Callable[[str], Awaitable[Report]], *, at_once: int
) -> dict[str, Report]:
    """name -> ``await check(name)``, for every name, ``at_once`` at a time."""
    reports: dict[str, Report] = {}
    limit = trio.CapacityLimiter(at_once)

    async def one(name: str) -> None:
        async with limit:
            reports[name] = await check(name)

    async with trio.open_nursery() as nursery:
        for name in names:
            nursery.start_soon(one, name)
    return reports
