"""server/discover (2026-07-28): what a server says about itself before anything else.

``server/discover`` lists the protocol versions the server supports (a dual-era
server: its modern and its legacy ones, newest first), its capabilities and
its instructions; its identity goes in the result's ``_meta`` like every
result's ([2026-07-28:server/discover#3], written by the engine). Its answer is
cacheable ([2026-07-28:server/utilities/caching#1]: the engine adds the hints).
"""

from __future__ import annotations

from typing import Any

from ..schema._base import LATEST_PROTOCOL_VERSION, REVISIONS
from ..schema._converter import converter_for
from ..schema.lifecycle import ServerCapabilities

__all__ = ["discover_result"]

_WRITE_AS = "2026-07-28" if "2026-07-28" in REVISIONS else LATEST_PROTOCOL_VERSION


def discover_result(
    *, versions: tuple[str, ...], capabilities: ServerCapabilities, instructions: str | None = None
) -> dict[str, Any]:
    """The ``DiscoverResult`` (as JSON) of a server supporting ``versions`` with ``capabilities``.

    [2026-07-28:server/discover#1] what every server answers: ``supportedVersions``
    and ``capabilities`` always, ``instructions`` when it has some.
    """
    if not versions:
        raise ValueError("a server supports at least one version")
    result: dict[str, Any] = {
        "supportedVersions": list(versions),
        "capabilities": converter_for(_WRITE_AS).unstructure(capabilities),
    }
    if instructions is not None:
        result["instructions"] = instructions
    return result
